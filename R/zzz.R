# Methods for generics of suggested packages (generics, ggplot2) and the parsnip model are
# registered when those packages are loaded, so none of them is needed to install or load
# mklearn.

.onLoad <- function(libname, pkgname) {
  for (cl in c("mkl", "mkl_multi", "mkl_path", "cv.mkl")) {
    s3_register("generics::tidy", cl)
    s3_register("generics::glance", cl)
    s3_register("generics::augment", cl)
    s3_register("ggplot2::autoplot", cl)
  }
  on_package_load("parsnip", register_mkl_svm)
  invisible()
}

# Runs fun() now if package pkg is loaded, and whenever it is loaded later.
on_package_load <- function(pkg, fun) {
  setHook(packageEvent(pkg, "onLoad"), function(...) fun())
  if (isNamespaceLoaded(pkg)) fun()
  invisible()
}

# Registers mklearn's method <generic>.<class> for the generic "pkg::generic" when pkg is
# loaded (the pattern of vctrs::s3_register()).
s3_register <- function(generic, class) {
  parts <- strsplit(generic, "::", fixed = TRUE)[[1L]]
  method <- get(paste0(parts[[2L]], ".", class), envir = asNamespace("mklearn"))
  on_package_load(parts[[1L]], function() {
    ns <- asNamespace(parts[[1L]])
    if (exists(parts[[2L]], envir = ns, inherits = FALSE))
      registerS3method(parts[[2L]], class, method, envir = ns)
  })
}

# the pronoun of ggplot2's aesthetics (R/autoplot.R)
if (getRversion() >= "2.15.1") utils::globalVariables(".data")
