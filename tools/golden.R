# Golden file of the C solvers: the raw .Call output of every solver, recorded once and compared
# bit for bit after a change that must not move an iterate (a file split, a shared helper).
#
#   Rscript tools/golden.R record FILE         record: installs a copy of this tree whose R code
#                                              logs every solver .Call (inputs and output), runs
#                                              the scenarios below through mkl(), saves FILE
#   Rscript tools/golden.R compare FILE [LIB]  replays every recorded call on the mklearn
#                                              installed in LIB (default: the usual library) and
#                                              compares with identical(), clock times excepted
#
# Replaying the recorded inputs makes the comparison independent of the R code: it checks the C
# side only. Exit status 1 when a call differs; entries named in MKL_GOLDEN_TOL (e.g.
# "svmfam:simple") are compared at a relative tolerance instead and reported with their
# largest relative difference. The file is large (dense stores): keep it out of the tree.
args <- commandArgs(trailingOnly = TRUE)
if (length(args) < 2L || !args[1L] %in% c("record", "compare"))
  stop("usage: Rscript tools/golden.R record|compare FILE [LIB]", call. = FALSE)
mode <- args[1L]
file <- args[2L]
solver_entries <- c("spicy", "svmfam", "l01", "bayes", "mwu", "smo", "kridge", "kridge_fly",
                    "store_combine", "store_stats", "store_dense")

# ---- the scenarios: each one a labelled mkl() (or mkl_compare()) call -------------------------
scenarios <- function(mk) {
  sim <- function(n, p = 5, seed = 1) {
    set.seed(seed)
    x <- matrix(rnorm(n * p), n, p)
    f <- x[, 1] - 0.8 * x[, 2]^2 + 0.5 * sin(3 * x[, 3])
    list(x = x, y = ifelse(f + 0.3 * rnorm(n) > stats::median(f), 1, -1),
         r = f + 0.2 * rnorm(n))
  }
  ks <- mk$kernel_set(mk$rbf_kernel(sigma = c(0.5, 1, 2)), mk$poly_kernel(degree = 1:2),
                      features = c("all", "each"))
  ks6 <- mk$kernel_set(mk$rbf_kernel(sigma = c(0.5, 2)), mk$poly_kernel(degree = 2))
  s1 <- sim(120)
  s6 <- sim(640, seed = 6)
  s3 <- sim(300, seed = 3)
  dense <- mk$mkl_control(store = "dense")
  fly <- mk$mkl_control(store = "fly")
  lr <- mk$mkl_control(store = "lowrank", rank = 10L, platt = "train")
  fit <- function(tag, ...) {
    golden_tag(tag)
    suppressWarnings(mk$mkl(...))
  }
  sp <- function(..., tol = NULL)   # SpicyMKL's knobs go through spicy_tuning() when it exists
    if (is.null(mk$spicy_tuning)) mk$mkl_control(store = "dense", tol = tol, ...) else
      mk$mkl_control(store = "dense", tol = tol, tuning = mk$spicy_tuning(...))
  list(
    fit("spicy hinge dense", s1$x, s1$y, kernels = ks, method = "spicy", control = dense),
    fit("spicy hinge fly", s1$x, s1$y, kernels = ks, method = "spicy", control = fly),
    fit("spicy logistic", s1$x, s1$y, kernels = ks, method = "spicy", loss = "logistic",
        control = dense),
    fit("spicy squared", s1$x, s1$r, kernels = ks, method = "spicy", control = dense),
    fit("spicy epsilon", s1$x, s1$r, kernels = ks, method = "spicy", loss = "epsilon",
        control = dense),
    fit("spicy epsilon fly", s1$x, s1$r, kernels = ks, method = "spicy", loss = "epsilon",
        control = fly),
    fit("spicy elasticnet", s1$x, s1$y, kernels = ks, method = "spicy", penalty = "elasticnet",
        lambda = 0.3, control = dense),
    fit("spicy warm path", s1$x, s1$y, kernels = ks, method = "spicy", C = c(4, 1, 0.25),
        control = dense),
    fit("spicy logistic cg n300", s3$x, s3$y, kernels = ks, method = "spicy",
        loss = "logistic", control = dense),
    fit("spicy hinge cg box n640 dense", s6$x, s6$y, kernels = ks6, method = "spicy",
        C = 0.5, control = dense),
    fit("spicy hinge cg box n640 fly", s6$x, s6$y, kernels = ks6, method = "spicy", C = 0.5,
        control = fly),
    fit("spicy hinge cg slack float n640", s6$x, s6$y, kernels = ks6, method = "spicy", C = 2,
        control = sp(box_fraction = 0, newton_float = TRUE, newton_cache = TRUE,
                     cg_deflate = 4)),
    fit("spicy hinge chol svm_dual", s1$x, s1$y, kernels = ks, method = "spicy", C = 2,
        control = sp(svm_dual = TRUE, lazy_screening = TRUE, tol = 1e-4)),
    fit("spicy multiclass", s1$x, factor(ifelse(s1$r > 0.5, "a", ifelse(s1$r > -0.5, "b", "c"))),
        kernels = ks, method = "spicy", control = dense),
    fit("uniform svm", s1$x, s1$y, kernels = ks, method = "uniform", control = dense),
    fit("uniform ridge", s1$x, s1$r, kernels = ks, method = "uniform", control = dense),
    fit("uniform ridge fly", s1$x, s1$r, kernels = ks, method = "uniform",
        control = mk$mkl_control(store = "fly", kcache = 4, kcols = 50)),
    fit("simple dense", s1$x, s1$y, kernels = ks, method = "simple", control = dense),
    fit("simple fly", s1$x, s1$y, kernels = ks, method = "simple", control = fly),
    fit("simple n300", s3$x, s3$y, kernels = ks, method = "simple", C = 10, control = dense),
    fit("hessian dense", s1$x, s1$y, kernels = ks, method = "hessian", control = dense),
    fit("hessian fly n300", s3$x, s3$y, kernels = ks, method = "hessian", control = fly),
    fit("lp dense", s1$x, s1$y, kernels = ks, method = "lp", control = dense),
    fit("lp p=1.5 fly", s1$x, s1$y, kernels = ks, method = "lp", p = 1.5, control = fly),
    fit("l01 dense", s1$x, s1$y, kernels = ks, method = "l01", control = dense),
    fit("l01 fly n300", s3$x, s3$y, kernels = ks, method = "l01", control = fly),
    fit("bayes regression", s1$x, s1$r, kernels = ks, method = "bayes", control = dense),
    # the low-rank store (rank cap 10): every method on it, MKL-L0/1 with either w-step
    fit("uniform lowrank n300", s3$x, s3$y, kernels = ks, method = "uniform", control = lr),
    fit("simple lowrank n300", s3$x, s3$y, kernels = ks, method = "simple", control = lr),
    fit("hessian lowrank n300", s3$x, s3$y, kernels = ks, method = "hessian", control = lr),
    fit("lp lowrank n300", s3$x, s3$y, kernels = ks, method = "lp", control = lr),
    fit("spicy hinge lowrank n300", s3$x, s3$y, kernels = ks, method = "spicy",
        loss = "hinge", control = lr),
    fit("bayes regression lowrank n300", s3$x, s3$r, kernels = ks, method = "bayes",
        control = lr),
    fit("l01 lowrank n300", s3$x, s3$y, kernels = ks, method = "l01", control = lr),
    fit("l01 lowrank cg n300", s3$x, s3$y, kernels = ks, method = "l01",
        control = mk$mkl_control(store = "lowrank", rank = 10L, platt = "train", wstep = "cg")),
    fit("bayes classification fly", s1$x, s1$y, kernels = ks, method = "bayes", control = fly),
    fit("mwu", s1$x, s1$y, kernels = ks, method = "mwu"),
    fit("mwu refit n300", s3$x, s3$y, kernels = ks, method = "mwu",
        control = mk$mkl_control(refit = TRUE)),
    { golden_tag("mkl_compare"); suppressWarnings(mk$mkl_compare(s1$x, s1$y, kernels = ks,
                                                     C = list(l1 = 1, elastic = 1, l2 = 1), seed = 1)) }
  )
}

strip_time <- function(v) {
  if (is.list(v)) {
    keep <- is.null(names(v)) | !names(v) %in% c("time", "times")
    at <- attributes(v)
    v <- lapply(v[keep], strip_time)
    if (!is.null(at$class) && "data.frame" %in% at$class) v <- as.data.frame(v) else
      if (!is.null(at$dim)) attributes(v) <- at
  }
  v
}

max_rel <- function(a, b) {
  a <- unlist(a); b <- unlist(b)
  if (length(a) != length(b) || !is.numeric(a) || !is.numeric(b)) return(Inf)
  d <- abs(a - b) / pmax(1, abs(a), abs(b))
  if (any(is.na(a) != is.na(b))) return(Inf)
  max(c(0, d[!is.na(d)]))
}

if (mode == "record") {
  tree <- normalizePath(file.path(dirname(sub("^--file=", "",
    grep("^--file=", commandArgs(FALSE), value = TRUE)[1L])), ".."))
  tmp <- tempfile("golden")
  dir.create(src <- file.path(tmp, "mklearn"), recursive = TRUE)
  dir.create(lib <- file.path(tmp, "lib"))
  files <- system2("git", c("-C", shQuote(tree), "ls-files", "-co", "--exclude-standard"),
                   stdout = TRUE)
  for (f in files) {
    dir.create(dirname(file.path(src, f)), showWarnings = FALSE, recursive = TRUE)
    file.copy(file.path(tree, f), file.path(src, f))
  }
  # every .Call of the R code goes through a logger
  for (f in list.files(file.path(src, "R"), full.names = TRUE)) {
    code <- readLines(f)
    writeLines(gsub(".Call(", "golden_call(", code, fixed = TRUE), f)
  }
  writeLines(c(
    "golden_log <- new.env()",
    "golden_log$calls <- list(); golden_log$tag <- ''",
    "golden_tag <- function(tag) golden_log$tag <- tag",
    "golden_call <- function(.NAME, ...) {",
    "  val <- .Call(.NAME, ...)",
    sprintf("  if (.NAME$name %%in%% c(%s))",
            paste(sprintf('"%s"', solver_entries), collapse = ", ")),
    "    golden_log$calls[[length(golden_log$calls) + 1L]] <-",
    "      list(tag = golden_log$tag, name = .NAME$name, args = list(...), value = val)",
    "  val",
    "}"), file.path(src, "R", "zzz-golden.R"))
  desc <- readLines(file.path(src, "DESCRIPTION"))
  desc <- sub("^Collate:.*", "", desc)
  writeLines(desc, file.path(src, "DESCRIPTION"))
  st <- system2(file.path(R.home("bin"), "R"),
                c("CMD", "INSTALL", "--no-test-load", "--no-docs", "--no-multiarch",
                  "-l", shQuote(lib), shQuote(src)), stdout = FALSE, stderr = FALSE)
  if (st != 0) stop("installing the recording copy failed", call. = FALSE)
  library(mklearn, lib.loc = lib)
  ns <- asNamespace("mklearn")
  golden_tag <- get("golden_tag", ns)
  fns <- c("kernel_set", "rbf_kernel", "poly_kernel", "mkl", "mkl_control", "mkl_compare",
           "spicy_tuning")
  mk <- lapply(intersect(fns, getNamespaceExports("mklearn")), getExportedValue, ns = "mklearn")
  names(mk) <- intersect(fns, getNamespaceExports("mklearn"))
  invisible(scenarios(mk))
  calls <- get("golden_log", ns)$calls
  # large arguments (kernel stores) are kept once and referred to by index
  pool <- list()
  for (i in seq_along(calls)) for (j in seq_along(calls[[i]]$args)) {
    a <- calls[[i]]$args[[j]]
    if (as.numeric(utils::object.size(a)) < 1e5) next
    k <- Position(function(p) identical(p, a), pool)
    if (is.na(k)) { pool[[length(pool) + 1L]] <- a; k <- length(pool) }
    calls[[i]]$args[[j]] <- structure(k, class = "golden_ref")
  }
  saveRDS(list(commit = system2("git", c("-C", shQuote(tree), "rev-parse", "HEAD"),
                                stdout = TRUE),
               calls = calls, pool = pool), file)
  tab <- table(vapply(calls, `[[`, "", "name"))
  cat(sprintf("recorded %d calls (%s) in %s\n", length(calls),
              paste(names(tab), tab, sep = ": ", collapse = ", "), file))
} else {
  lib <- if (length(args) >= 3L) args[3L] else NULL
  library(mklearn, lib.loc = lib)
  ns <- asNamespace("mklearn")
  g <- readRDS(file)
  tol_entries <- strsplit(Sys.getenv("MKL_GOLDEN_TOL"), ",")[[1L]]
  svm_codes <- c("simple", "hessian", "lp")
  bad <- 0L
  for (i in seq_along(g$calls)) {
    cl <- g$calls[[i]]
    label <- cl$name
    if (cl$name == "svmfam") label <- paste0("svmfam:", svm_codes[cl$args[[1L]] + 1L])
    a <- lapply(cl$args, function(v) if (inherits(v, "golden_ref")) g$pool[[unclass(v)]] else v)
    val <- do.call(.Call, c(list(get(paste0("C_", cl$name), ns)), a))
    same <- identical(strip_time(val), strip_time(cl$value))
    if (same) next
    if (label %in% tol_entries) {
      cat(sprintf("%-34s %-14s within tolerance? max relative difference %.3g\n", cl$tag,
                  label, max_rel(strip_time(val), strip_time(cl$value))))
      next
    }
    bad <- bad + 1L
    a <- strip_time(val); b <- strip_time(cl$value)
    what <- if (is.list(a) && is.list(b) && identical(names(a), names(b)))
      names(a)[!mapply(identical, a, b)] else "structure"
    cat(sprintf("%-34s %-14s DIFFERS in %s (max relative difference %.3g)\n", cl$tag, label,
                paste(what, collapse = ", "), max_rel(a, b)))
  }
  cat(sprintf("%d calls replayed, %d identical or within tolerance, %d differ\n",
              length(g$calls), length(g$calls) - bad, bad))
  if (bad) quit(status = 1L)
}
