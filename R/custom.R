# Kernels from outside the package: kernlab's kernel objects, mapped to the C kernels they
# equal, and custom kernels (other kernlab kernels, R functions k(x, z)) computed in R into
# the dense store. A custom kernel is a family of type "custom" whose `fun` is the function;
# resolve_kernels() keeps the functions in rk$custom and a table row's par1 indexes them.

# Whether k is a kernel object of the kernlab package (an S4 "kernel", itself a function).
is_kernlab_kernel <- function(k)
  isS4(k) && inherits(k, "kernel") && identical(attr(class(k), "package"), "kernlab")

# What kernel_set() takes as a family: an mkl_kernel, a kernlab kernel or an R function.
is_kernel_family <- function(k) inherits(k, "mkl_kernel") || is.function(k)

# The labels of kernel_set()'s arguments: the argument's name, or the name of a function given
# by name, or NA (from the unevaluated call `expr`, list(...), and the names `nms`).
dots_labels <- function(expr, nms) {
  args <- as.list(expr)[-1L]
  sym <- vapply(args, function(a) if (is.name(a)) as.character(a) else NA_character_, "")
  if (is.null(nms)) nms <- rep("", length(args))
  list(given = unname(ifelse(nzchar(nms), nms, NA_character_)), symbol = unname(sym))
}

# A family as kernel_set() stores it: an mkl_kernel as it is, a kernlab kernel mapped to the
# C kernel it equals under the set's normalisation `normalize` (or custom), a function custom.
as_kernel_family <- function(k, given, symbol, normalize) {
  if (inherits(k, "mkl_kernel")) return(k)
  if (is_kernlab_kernel(k))
    return(kernlab_family(k, if (is.na(given)) kernlab_label(k) else given, normalize))
  custom_family(k, if (!is.na(given)) given else if (!is.na(symbol)) symbol else "custom")
}

# kernlab's label of a kernel object: "rbfdot(sigma=0.5)", "vanilladot()".
kernlab_label <- function(k) {
  kp <- k@kpar
  vals <- vapply(kp, function(v) if (is.numeric(v)) fmt_par(v) else as.character(v)[1L], "")
  sprintf("%s(%s)", sub("kernel$", "dot", class(k)[1L]),
          paste0(names(kp), if (length(kp)) "=", vals, collapse = ","))
}

# A kernlab kernel as the C kernel it equals (see ?kernel_set), else a custom kernel.
kernlab_family <- function(k, label, normalize) {
  kp <- k@kpar
  cls <- class(k)[1L]
  pos <- function(v) is.numeric(v) && length(v) == 1L && is.finite(v) && v > 0
  if (cls == "stringkernel")
    stop(paste0("kernel_set(): kernlab's stringdot() works on character strings, and mklearn's ",
                "data are numeric: compute its kernel matrices with kernlab::kernelMatrix() and ",
                "give them to mkl(kernels = ) as precomputed kernels"), call. = FALSE)
  if (cls == "rbfkernel" && pos(kp$sigma))
    return(new_kernel("rbf", gamma_width(kp$sigma, "rbfdot", "sigma"), 0, label,
                      paste0("exp(-sigma ||x - z||^2) (kernlab's rbfdot), in C as ",
                             "rbf_kernel(gamma = sigma)")))
  if (cls == "laplacekernel" && pos(kp$sigma) && is.finite(1 / kp$sigma))
    return(new_kernel("laplace", 1 / kp$sigma, 0, label,
                      paste0("exp(-sigma ||x - z||) (kernlab's laplacedot), in C as ",
                             "laplace_kernel(1 / sigma)")))
  if (cls == "vanillakernel")
    return(new_kernel("linear", 0, 0, label, "<x, z> (kernlab's vanilladot), in C"))
  # (scale <x, z> + offset)^degree = scale^degree (<x, z> + offset / scale)^degree: the C kernel
  # once normalised, as every kernel is but with normalize = "none"
  if (cls == "polykernel" && pos(kp$degree) && kp$degree == round(kp$degree) &&
      pos(kp$scale) && is.numeric(kp$offset) && length(kp$offset) == 1L &&
      is.finite(kp$offset) && kp$offset >= 0 && (kp$scale == 1 || normalize != "none"))
    return(new_kernel("poly", kp$degree, kp$offset / kp$scale, label,
                      paste0("(scale <x, z> + offset)^degree (kernlab's polydot), in C as ",
                             "poly_kernel(degree, offset / scale)",
                             if (kp$scale != 1) " up to the factor scale^degree (normalised)")))
  custom_family(k, label)
}

#' A custom kernel computed in R
#'
#' Makes a kernel family of an R function `k(x, z)` of two numeric vectors (two rows of the
#' data, restricted to the kernel's feature subset and standardised as [mkl()] standardises
#' them) that returns one number, or of a kernlab kernel object, computed in R (with
#' `kernlab::kernelMatrix()` for a kernlab kernel). [kernel_set()] makes such a family of any
#' function or of a kernlab kernel it does not compute in C; `custom_kernel()` names it, or
#' computes in R a kernlab kernel that has a C equivalent (to compare the two). The function
#' should be symmetric and positive semidefinite; the training kernel is built from its upper
#' triangle. An R function is called once per pair of points (n (n + 1) / 2 calls for a
#' training kernel, n_new n for predictions): much slower than the C kernels, so meant for
#' small data. Custom kernels need the dense kernel store (see [kernel_set()]).
#'
#' @param fun an R function `k(x, z)` returning one number, or a kernlab kernel object.
#' @param name the kernel's label (default: the name `fun` was given by, or kernlab's label).
#' @return An object of class `mkl_kernel`, for [kernel_set()].
#' @seealso [kernel_set()]
#' @examples
#' cosine <- function(x, z) sum(x * z) / sqrt(sum(x^2) * sum(z^2))
#' ks <- kernel_set(rbf_kernel(1), custom_kernel(cosine))
#' K <- gram(ks, as.matrix(iris[1:5, 1:4]))
#' dimnames(K)[[3]]
#' @export
custom_kernel <- function(fun, name = NULL) {
  if (!is.function(fun))
    stop("'fun' must be a function k(x, z) or a kernlab kernel object", call. = FALSE)
  if (is.null(name))
    name <- if (is_kernlab_kernel(fun)) kernlab_label(fun) else
      if (is.name(substitute(fun))) deparse(substitute(fun)) else "custom"
  if (!is.character(name) || length(name) != 1L || is.na(name) || !nzchar(name))
    stop("'name' must be one non-empty string", call. = FALSE)
  if (inherits(fun, "stringkernel")) kernlab_family(fun, name, "none")    # an error
  custom_family(fun, name)
}

custom_family <- function(fun, label) {
  if (!is_kernlab_kernel(fun) && length(formals(fun)) < 2L && !("..." %in% names(formals(fun))))
    stop(sprintf("the custom kernel '%s' must be a function of two rows, k(x, z)", label),
         call. = FALSE)
  structure(list(type = "custom", code = NA_integer_, par1 = NA_real_, par2 = NA_real_,
                 label = label, formula = paste0(if (is_kernlab_kernel(fun))
                   "a kernlab kernel" else "an R function", ", computed in R (slower)"),
                 fun = fun), class = "mkl_kernel")
}

# The families with each custom kernel's par1 set to its index in attr(, "custom"), the list
# of their functions (NULL when there is none).
number_custom <- function(fams) {
  funs <- list()
  for (i in seq_along(fams)) if (identical(fams[[i]]$type, "custom")) {
    funs[[length(funs) + 1L]] <- fams[[i]]$fun
    fams[[i]]$par1 <- length(funs)
  }
  structure(fams, custom = if (length(funs)) funs)
}

has_custom <- function(rk) !is.null(rk) && any(rk$table$type == "custom")

# The error for a store that cannot hold the custom kernels of rk (`what` names the store).
refuse_custom <- function(rk, what) {
  cust <- which(rk$table$type == "custom")
  if (!length(cust)) return(invisible())
  stop(sprintf(paste0("%s cannot compute the custom kernel(s) %s: kernels computed in R (R ",
                      "functions, and kernlab kernels other than rbfdot, laplacedot, vanilladot ",
                      "and polydot) need the dense store, mkl_control(store = \"dense\") or ",
                      "\"auto\""), what, format_kernel_list(rk$labels[cust])), call. = FALSE)
}

# The settings of the store choice for the kernels rk: with custom kernels, the dense store
# ("auto" picks it; any other store is refused by name).
custom_store_control <- function(ctl, rk) {
  if (!has_custom(rk)) return(ctl)
  if (!(ctl$store %in% c("auto", "dense")))
    refuse_custom(rk, sprintf("mkl_control(store = \"%s\")", ctl$store))
  ctl$store <- "dense"
  ctl$custom_kernels <- TRUE   # the store's memory message names the remedies that apply
  ctl
}

# The raw custom kernel m of rk (a row of its table) on the features of its group: n x n on x,
# or nr x n of the rows z against x. Non-finite values are an error naming the kernel.
custom_raw <- function(rk, m, x, z = NULL) {
  g <- rk$table$group[m]
  cols <- group_features(rk, g)
  fun <- rk$custom[[rk$table$par1[m]]]
  xs <- x[, cols, drop = FALSE]
  zs <- if (!is.null(z)) z[, cols, drop = FALSE]
  K <- if (is_kernlab_kernel(fun)) kernlab_gram(fun, xs, zs) else
    pairwise_gram(fun, xs, zs, rk$labels[m])
  if (!all(is.finite(K)))
    stop_nonfinite(rk, m, if (is.null(z)) "the training data" else "the new data")
  K
}

# A kernlab kernel's matrix (x against itself, or z against x). kernlab's method for tanhdot
# fails on two matrices: its definition, tanh(scale <x, z> + offset), is computed here.
kernlab_gram <- function(k, x, z = NULL) {
  if (inherits(k, "tanhkernel"))
    return(tanh(k@kpar$scale * tcrossprod(if (is.null(z)) x else z, x) + k@kpar$offset))
  K <- if (is.null(z)) kernlab::kernelMatrix(k, x) else kernlab::kernelMatrix(k, z, x)
  matrix(as.double(K), nrow(K), ncol(K))
}

# An R function's kernel matrix, one call per pair of rows: the upper triangle of x against
# itself (mirrored), or every row of z against every row of x.
pairwise_gram <- function(fun, x, z, label) {
  one <- function(a, b) {
    v <- fun(a, b)
    if (!is.numeric(v) || length(v) != 1L)
      stop(sprintf("the custom kernel '%s' must return one number for two rows; it returned %s",
                   label, if (is.numeric(v)) sprintf("%d numbers", length(v)) else
                     sprintf("an object of class %s", class(v)[1L])), call. = FALSE)
    as.double(v)
  }
  rows <- function(a) lapply(seq_len(nrow(a)), function(i) a[i, ])
  xr <- rows(x)
  n <- length(xr)
  if (is.null(z)) {
    K <- matrix(0, n, n)
    for (j in seq_len(n)) K[seq_len(j), j] <- vapply(xr[seq_len(j)], one, 0, b = xr[[j]])
    K[lower.tri(K)] <- t(K)[lower.tri(K)]
    return(K)
  }
  zr <- rows(z)
  K <- matrix(0, length(zr), n)
  for (j in seq_len(n)) K[, j] <- vapply(zr, one, 0, b = xr[[j]])
  K
}

# The normalisation of a raw training kernel as C's mk_normalize does it (kernels.c): centred
# (center_trace), divided by its trace (unless "none"), plus the jitter on the diagonal.
normalize_custom <- function(K, norm, jitter) {
  n <- nrow(K)
  cm <- gm <- NULL
  if (norm == "center_trace") {
    cm <- colSums(K) / n
    gm <- sum(cm) / n
    K <- K + (gm - outer(cm, cm, "+"))
  }
  s <- 1
  if (norm != "none") {
    tr <- sum(diag(K))
    s <- if (tr > 0) tr else 1
    K <- K * (1 / s)
  }
  if (jitter != 0) diag(K) <- diag(K) + jitter
  list(K = K, scale = s, colmeans = cm, grandmean = gm)
}

# build_train() for a set with custom kernels: the C kernels of `which` built in C, the custom
# ones in R, normalised alike; the same list (K, scale, colmeans, grandmean).
custom_train <- function(rk, x, which, nthreads = 0L) {
  n <- nrow(x)
  cust <- rk$table$type[which] == "custom"
  centre <- rk$normalize == "center_trace"
  out <- list(K = array(0, c(n, n, length(which))), scale = double(length(which)),
              colmeans = if (centre) matrix(0, n, length(which)),
              grandmean = if (centre) double(length(which)))
  if (any(!cust)) {
    tr <- build_train(rk, x, which[!cust], nthreads, limit = Inf)
    out$K[, , !cust] <- tr$K
    out$scale[!cust] <- tr$scale
    if (centre) {
      out$colmeans[, !cust] <- tr$colmeans
      out$grandmean[!cust] <- tr$grandmean
    }
    rm(tr)
  }
  for (k in seq_along(which)[cust]) {
    nz <- normalize_custom(custom_raw(rk, which[k], x), rk$normalize, rk$jitter)
    out$K[, , k] <- nz$K
    out$scale[k] <- nz$scale
    if (centre) {
      out$colmeans[, k] <- nz$colmeans
      out$grandmean[k] <- nz$grandmean
    }
  }
  out
}

# test_store() for kernels `which` of which some are custom: a dense store of the normalised
# test-by-train kernels (the C kernels computed in C), rows z against the training data x.
custom_test_store <- function(rk, x, z, stats, which, nthreads = 0L) {
  cust <- rk$table$type[which] == "custom"
  K <- array(0, c(nrow(z), nrow(x), length(which)))
  if (any(!cust)) K[, , !cust] <- build_test(rk, x, z, stats, which[!cust], nthreads)
  for (k in seq_along(which)[cust]) {
    m <- which[k]
    Kt <- custom_raw(rk, m, x, z)
    if (rk$normalize == "center_trace")
      Kt <- Kt - rowMeans(Kt) - rep(stats$colmeans[, m], each = nrow(Kt)) + stats$grandmean[m]
    if (rk$normalize != "none") Kt <- Kt * (1 / stats$scale[m])
    K[, , k] <- Kt
  }
  st <- as_store(K)
  st$nthreads <- as.integer(nthreads)
  st
}
