# Kernel descriptions: data-independent objects that become matrices when a model is fit.
# Kernel type and normalisation codes: .mk_codes (R/codes.R).

new_kernel <- function(type, par1, par2, label, formula) {
  structure(list(type = type, code = .mk_codes$kernel[[type]], par1 = as.double(par1),
                 par2 = rep_len(as.double(par2), length(par1)), label = label,
                 formula = formula),
            class = "mkl_kernel")
}

check_positive <- function(v, name) {
  if (!is.numeric(v) || length(v) == 0L || anyNA(v) || any(!is.finite(v)) || any(v <= 0))
    stop(sprintf("'%s' must be a non-empty vector of positive finite numbers", name), call. = FALSE)
  as.double(v)
}

# Widths so small that the kernel's scale (1/(2 sigma^2) for the Gaussian, 1/sigma for the
# Laplace kernel, as computed in C) overflows give NaN (0 * Inf) on the diagonal: refused.
# A width that small is the identity kernel, which memorises the training points.
check_width <- function(sigma, scale, fun) {
  bad <- !is.finite(scale)
  if (any(bad))
    stop(sprintf(paste0("%s(): 'sigma' = %s is too small: the kernel's scale %s overflows ",
                        "(sigma must be at least %s). A width this small gives the identity ",
                        "kernel, which memorises the training points and predicts new ones ",
                        "by the bias alone; use a larger width"),
                 fun, paste(format(sigma[bad], digits = 3), collapse = ", "),
                 if (fun == "rbf_kernel") "1/(2 sigma^2)" else "1/sigma",
                 format(if (fun == "rbf_kernel") sqrt(0.5 / .Machine$double.xmax) else
                   1 / .Machine$double.xmax, digits = 3)), call. = FALSE)
  invisible(sigma)
}

fmt_par <- function(v) format(v, digits = 6, trim = TRUE, drop0trailing = TRUE)

#' Kernel families
#'
#' Data-independent descriptions of kernel functions. A vector of hyperparameters gives one
#' kernel per value. They are combined with feature subsets by [kernel_set()] and turned into
#' matrices (in parallel C code) when a model is fit or [gram()] is called.
#'
#' * `rbf_kernel(sigma)`: \eqn{k(x, x') = \exp(-\|x - x'\|^2 / (2\sigma^2))}, the width
#'   convention of the MKL papers. `rbf_kernel(gamma = g)` is
#'   \eqn{\exp(-g\|x - x'\|^2)}, the convention of kernlab's `rbfdot(sigma = g)` and of
#'   e1071's `gamma` (the width \eqn{\sigma = 1 / \sqrt{2g}}); give `sigma` or `gamma`, not
#'   both. Printing a family states its convention.
#' * `poly_kernel(degree, offset = 1)`: \eqn{(\langle x, x'\rangle + offset)^{degree}}.
#' * `linear_kernel()`: \eqn{\langle x, x'\rangle}.
#' * `laplace_kernel(sigma)`: \eqn{\exp(-\|x - x'\| / \sigma)} (Euclidean norm).
#' * `chisq_kernel(gamma)`: the histogram kernel
#'   \eqn{\exp(-\gamma \sum_j (x_j - x'_j)^2 / (x_j + x'_j))} for non-negative features
#'   (terms with \eqn{x_j + x'_j = 0} are zero).
#'
#' @param sigma positive widths.
#' @param gamma for `rbf_kernel()`: positive scales \eqn{g} of \eqn{\exp(-g\|x - x'\|^2)},
#'   instead of `sigma`; for `chisq_kernel()`: positive scales of the chi-square distance.
#' @param degree positive integer degrees.
#' @param offset non-negative offset added to the inner product.
#' @return An object of class `mkl_kernel`.
#' @seealso [kernel_set()] (which also takes kernlab's kernels and R functions), [gram()]
#' @examples
#' rbf_kernel(sigma = c(0.5, 1, 2))
#' rbf_kernel(gamma = 0.1)
#' poly_kernel(degree = 1:3)
#' @name kernels
NULL

#' @rdname kernels
#' @export
rbf_kernel <- function(sigma = 1, gamma) {
  if (!missing(gamma)) {
    if (!missing(sigma))
      stop(paste0("rbf_kernel(): give 'sigma' (the width: exp(-||x - z||^2 / (2 sigma^2))) or ",
                  "'gamma' (exp(-gamma ||x - z||^2)), not both"), call. = FALSE)
    gamma <- check_positive(gamma, "gamma")
    return(new_kernel("rbf", gamma_width(gamma, "rbf_kernel"), 0,
                      sprintf("rbf(gamma=%s)", fmt_par(gamma)),
                      "exp(-gamma ||x - z||^2), the convention of kernlab's rbfdot(sigma = gamma)"))
  }
  sigma <- check_positive(sigma, "sigma")
  check_width(sigma, 1 / (2 * sigma * sigma), "rbf_kernel")
  new_kernel("rbf", sigma, 0, sprintf("rbf(sigma=%s)", fmt_par(sigma)),
             paste0("exp(-||x - z||^2 / (2 sigma^2)), sigma a width (kernlab's rbfdot(sigma = s) ",
                    "is rbf_kernel(gamma = s))"))
}

# The Gaussian width sigma = 1 / sqrt(2 gamma) of exp(-gamma d^2), which C computes as
# exp(-d^2 / (2 sigma^2)); a gamma whose width underflows is refused.
gamma_width <- function(gamma, fun, arg = "gamma") {
  sigma <- 1 / sqrt(2 * gamma)
  if (any(sigma == 0 | !is.finite(1 / (2 * sigma * sigma))))
    stop(sprintf("%s(): '%s' = %s is too large: the Gaussian's width underflows", fun, arg,
                 paste(format(gamma[sigma == 0 | !is.finite(1 / (2 * sigma * sigma))],
                              digits = 3), collapse = ", ")), call. = FALSE)
  sigma
}

#' @rdname kernels
#' @export
poly_kernel <- function(degree = 2, offset = 1) {
  degree <- check_positive(degree, "degree")
  if (any(degree != round(degree)))
    stop("'degree' must be a vector of positive integers", call. = FALSE)
  if (!is.numeric(offset) || length(offset) != 1L || !is.finite(offset) || offset < 0)
    stop("'offset' must be one non-negative number", call. = FALSE)
  new_kernel("poly", degree, rep(offset, length(degree)),
             sprintf("poly(degree=%s%s)", fmt_par(degree),
                     if (offset != 1) paste0(",offset=", fmt_par(offset)) else ""),
             "(<x, z> + offset)^degree")
}

#' @rdname kernels
#' @export
linear_kernel <- function() new_kernel("linear", 0, 0, "linear", "<x, z>")

#' @rdname kernels
#' @export
laplace_kernel <- function(sigma = 1) {
  sigma <- check_positive(sigma, "sigma")
  check_width(sigma, 1 / sigma, "laplace_kernel")
  new_kernel("laplace", sigma, 0, sprintf("laplace(sigma=%s)", fmt_par(sigma)),
             paste0("exp(-||x - z|| / sigma), sigma a width (kernlab's laplacedot(sigma = s) is ",
                    "laplace_kernel(sigma = 1 / s))"))
}

#' @rdname kernels
#' @export
chisq_kernel <- function(gamma = 1) {
  gamma <- check_positive(gamma, "gamma")
  new_kernel("chisq", gamma, 0, sprintf("chisq(gamma=%s)", fmt_par(gamma)),
             "exp(-gamma sum_j (x_j - z_j)^2 / (x_j + z_j))")
}

#' @export
print.mkl_kernel <- function(x, ...) {
  cat("<mkl_kernel>", length(x$label), "kernel(s):", paste(x$label, collapse = ", "), "\n")
  if (!is.null(x$formula)) cat(" k(x, z) =", x$formula, "\n")
  invisible(x)
}

#' A set of kernels on feature subsets
#'
#' Pairs every kernel family with every feature subset. `features = c("all", "each")` gives
#' the 27 (d + 1) design of the SpicyMKL and SimpleMKL experiments when used with 24 Gaussian
#' widths and polynomial degrees 1 to 3.
#'
#' Kernels of the kernlab package and R functions are taken as well. kernlab's `rbfdot()`,
#' `laplacedot()`, `vanilladot()` and `polydot()` become the C kernels they equal:
#' `rbfdot(sigma = s)`, \eqn{\exp(-s\|x - z\|^2)}, is `rbf_kernel(gamma = s)`;
#' `laplacedot(sigma = s)`, \eqn{\exp(-s\|x - z\|)}, is `laplace_kernel(sigma = 1 / s)`;
#' `vanilladot()` is `linear_kernel()`; `polydot(degree, scale, offset)`,
#' \eqn{(scale \langle x, z\rangle + offset)^{degree}}, is `poly_kernel(degree, offset)` when
#' `scale = 1`; otherwise it is `scale^degree` times `poly_kernel(degree, offset / scale)`, so
#' the two are equal once normalised, and with `normalize = "none"` (or a degree that is not a
#' positive integer, a scale that is not positive, a negative offset) it is computed in R.
#' Their labels keep kernlab's parameters (`"rbfdot(sigma=0.5)[all]"`). Every other kernlab kernel
#' (`tanhdot()`, `besseldot()`, `anovadot()`, `splinedot()`) and any R function `k(x, z)` of
#' two numeric vectors returning one number (see [custom_kernel()]) is a custom kernel,
#' computed in R on the (standardised) features of its subset: much slower than the C
#' kernels (an R function is called once per pair of points), so meant for small data. Custom
#' kernels are normalised like the others, work with [predict()] and [gram()], and need the
#' dense store: `mkl()` uses it for a set that has one (`mkl_control(store = "auto")`) and
#' refuses a store computed on the fly or from low-rank factors. `stringdot()` works on
#' strings, which a numeric data matrix does not hold: give its kernel matrices, computed
#' with `kernlab::kernelMatrix()`, to [mkl()] as precomputed kernels.
#'
#' @param ... kernel families ([rbf_kernel()], [poly_kernel()], ...), kernlab kernels
#'   (`kernlab::rbfdot()`, ...) or R functions `k(x, z)`; a function given by name (or as a
#'   named argument) is labelled by that name.
#' @param features `"all"` (one kernel on all columns), `"each"` (one kernel per single
#'   column), `c("all", "each")`, or a list of column subsets given by index or by name.
#' @param normalize `"trace"` (each kernel scaled to unit trace, the default), `"center_trace"`
#'   (centred in feature space, then unit trace, as in HessianMKL), or `"none"`.
#' @param jitter a small number added to the diagonal of each training kernel after
#'   normalisation (default 1e-8, as in SpicyMKL's experiments).
#' @return An object of class `kernel_set`.
#' @seealso [random_kernels()], [custom_kernel()], [gram()], [mkl()]
#' @examples
#' ks <- kernel_set(rbf_kernel(sigma = c(0.1, 0.25, 0.5, 0.75, 1:20)),
#'                  poly_kernel(degree = 1:3),
#'                  features = c("all", "each"))
#' ks
#' if (requireNamespace("kernlab", quietly = TRUE))
#'   kernel_set(kernlab::rbfdot(sigma = 0.1), kernlab::polydot(degree = 2))
#' cosine <- function(x, z) sum(x * z) / sqrt(sum(x^2) * sum(z^2))
#' kernel_set(rbf_kernel(1), cosine)
#' @export
kernel_set <- function(..., features = "all", normalize = c("trace", "center_trace", "none"),
                       jitter = 1e-8) {
  fams <- list(...)
  labs <- dots_labels(substitute(list(...)), names(fams))   # labels of custom kernels
  keep <- !vapply(fams, is.null, logical(1))
  fams <- fams[keep]
  if (length(fams) == 0L)
    stop("a kernel set needs at least one kernel family, e.g. rbf_kernel(sigma = 1)",
         call. = FALSE)
  if (!all(vapply(fams, is_kernel_family, logical(1))))
    stop(paste0("every argument in '...' must be a kernel family such as rbf_kernel() or ",
                "poly_kernel(), a kernlab kernel such as kernlab::rbfdot(), or a function ",
                "k(x, z)"), call. = FALSE)
  normalize <- match_arg(normalize)
  fams <- unname(Map(as_kernel_family, fams, labs$given[keep], labs$symbol[keep],
                     MoreArgs = list(normalize = normalize)))
  check_features(features)
  if (!is.numeric(jitter) || length(jitter) != 1L || !is.finite(jitter) || jitter < 0)
    stop("'jitter' must be one non-negative number", call. = FALSE)
  structure(list(families = fams, features = features, normalize = normalize,
                 jitter = as.double(jitter), explicit = NULL), class = "kernel_set")
}

check_features <- function(features) {
  ok <- if (is.character(features)) all(features %in% c("all", "each")) && length(features) > 0L
        else if (is.list(features)) length(features) > 0L &&
          all(vapply(features, function(f) (is.numeric(f) || is.character(f)) && length(f) > 0L,
                     logical(1)))
        else FALSE
  if (!ok)
    stop("'features' must be \"all\", \"each\", c(\"all\", \"each\") or a non-empty list of ",
         "column subsets (indices or names)", call. = FALSE)
  invisible(TRUE)
}

#' Random kernels on random feature subsets
#'
#' Large random kernel sets, described by a few vectors (one entry per kernel) rather than one R
#' object per kernel, so a million kernels take a few tens of megabytes until they are used.
#'
#' * `design = "spicy"`: the many-kernel design of SpicyMKL (Suzuki and Tomioka 2009, Sec.
#'   5.2): each kernel is a Gaussian with width \eqn{5\chi^2_1 + 0.1}.
#' * `design = "mwu"`: the families of the MWUMKL paper (Moeller et al. 2014), drawn at
#'   random: with probability 3/12 a polynomial kernel \eqn{(x'z + 1)^d} with degree `d`
#'   uniform on 1-3, otherwise a Gaussian \eqn{\exp(-\gamma \|x - z\|^2)} with
#'   \eqn{\gamma = 2^u}, `u` uniform on \[0, 4\] (the paper's "bandwidths" \eqn{2^0, 2^{0.5},
#'   \dots, 2^4}, read as \eqn{\gamma} on features scaled to \[0, 1\], drawn continuously). The
#'   paper's fixed set of 12 kernels per feature is
#'   `kernel_set(poly_kernel(1:3), rbf_kernel(sigma = 1 / sqrt(2 * 2^seq(0, 4, 0.5))),
#'   features = "each")`.
#'
#' Each kernel's feature subset has a size drawn uniformly from `size` and columns drawn
#' uniformly without replacement; with `size = 1` the kernels on the same column share their
#' distances when computed on the fly.
#'
#' @param M number of kernels.
#' @param p number of columns of the data the set will be used with: [mkl()] and [gram()]
#'   refuse data with another number of columns (the kernels would use only some of them).
#' @param size possible subset sizes (default `1:p`).
#' @param design `"spicy"` or `"mwu"`, see Details.
#' @inheritParams kernel_set
#' @return A `kernel_set` with `M` kernels.
#' @examples
#' set.seed(1)
#' ks <- random_kernels(50, p = 20)
#' ks
#' random_kernels(1e5, p = 60, size = 1, design = "mwu")
#' @export
random_kernels <- function(M, p, size = seq_len(p), design = c("spicy", "mwu"),
                           normalize = c("trace", "center_trace", "none"), jitter = 1e-8) {
  if (!is.numeric(M) || length(M) != 1L || !is.finite(M) || M < 1 || M != round(M) ||
      M > .Machine$integer.max)
    stop("'M' must be one positive integer", call. = FALSE)
  if (!is.numeric(p) || length(p) != 1L || !is.finite(p) || p < 1 || p != round(p))
    stop("'p' must be one positive integer", call. = FALSE)
  if (!is.numeric(size) || length(size) == 0L || any(size < 1 | size > p | size != round(size)))
    stop("'size' must contain integers between 1 and p", call. = FALSE)
  design <- match_arg(design)
  normalize <- match_arg(normalize)
  M <- as.integer(M)
  sz <- if (length(size) == 1L) rep(as.integer(size), M) else
    as.integer(sample(size, M, replace = TRUE))
  if (all(sz == 1L)) {
    # single columns: the groups are the columns, shared by the kernels on them
    kgroup <- sample.int(p, M, replace = TRUE)
    gstart <- 0:p
    gfeat <- 0:(p - 1L)
  } else {
    kgroup <- seq_len(M)
    gstart <- c(0L, cumsum(sz))
    gfeat <- integer(gstart[M + 1L])
    for (k in seq_len(M))    # one small draw per kernel, written into one vector
      gfeat[(gstart[k] + 1L):gstart[k + 1L]] <- sort(sample.int(p, sz[k])) - 1L
  }
  if (design == "spicy") {
    type <- rep("rbf", M)
    par1 <- 5 * stats::rchisq(M, df = 1) + 0.1
    par2 <- rep(0, M)
  } else {
    poly <- stats::runif(M) < 3 / 12
    type <- ifelse(poly, "poly", "rbf")
    gamma <- 2^stats::runif(M, 0, 4)
    par1 <- ifelse(poly, sample.int(3L, M, replace = TRUE), 1 / sqrt(2 * gamma))
    par2 <- ifelse(poly, 1, 0)
  }
  structure(list(families = list(), features = NULL, normalize = normalize,
                 jitter = as.double(jitter), design = design, p = as.integer(p),
                 explicit = list(type = type, par1 = as.double(par1), par2 = as.double(par2),
                                 kgroup = as.integer(kgroup), gstart = as.integer(gstart),
                                 gfeat = as.integer(gfeat))),
            class = "kernel_set")
}

#' @export
print.kernel_set <- function(x, ...) {
  nk <- if (is.null(x$explicit)) sum(vapply(x$families, function(f) length(f$label), 1L)) else
    length(x$explicit$type)
  cat("<kernel_set> normalisation:", x$normalize, " jitter:", format(x$jitter), "\n")
  if (is.null(x$explicit)) {
    cat(" families:", paste(unlist(lapply(x$families, `[[`, "label")), collapse = ", "), "\n")
    if (!is.null(x$data_sigma)) {
      cat(" and", length(x$data_sigma$probs) + 1L,
          "Gaussian kernels with widths from the data's scale, set when the kernels are built\n")
      cat(" and, for a SpicyMKL regression, Gaussian kernels of widths",
          paste(fmt_par(regression_each_widths("spicy")), collapse = ", "), "on each feature\n")
    }
    fs <- if (is.character(x$features)) paste(x$features, collapse = " + ") else
      sprintf("%d column subsets", length(x$features))
    cat(" features:", fs, "\n")
    cat(" kernels per feature group:", nk, "\n")
  } else if (!is.null(x$layout)) {
    # a default set with kernels on each feature, filled in (data_kernels())
    cat(" families on all the features:", paste(x$layout$all, collapse = ", "), "\n")
    cat(" and on each feature:", paste(x$layout$each, collapse = ", "), "\n")
    cat(" kernels:", nk, "\n")
  } else {
    cat(" ", nk, " random kernels (design \"", x$design, "\") on random feature subsets\n",
        sep = "")
  }
  invisible(x)
}

# Resolve a kernel set against the columns of x: the feature groups and a kernel table.
resolve_kernels <- function(ks, p, cn) {
  if (!is.null(ks$data_sigma))
    stop("'kernels' = default_kernels() takes its widths from data: use default_kernels(x)",
         call. = FALSE)
  if (!is.null(ks$explicit$gfeat)) return(resolve_random(ks, p, cn))
  feats <- ks$features
  glist <- list(); glab <- character()
  add_group <- function(idx, lab) {
    glist[[length(glist) + 1L]] <<- as.integer(idx)
    glab[length(glab) + 1L] <<- lab
  }
  to_index <- function(f) {
    if (is.character(f)) {
      if (is.null(cn)) stop("feature subsets given by name need a matrix with column names",
                            call. = FALSE)
      bad <- setdiff(f, cn)
      if (length(bad)) stop(sprintf("unknown column(s) in 'features': %s",
                                    paste(bad, collapse = ", ")), call. = FALSE)
      match(f, cn)
    } else {
      if (any(f != round(f)) || any(f < 1) || any(f > p))
        stop(sprintf("feature indices must be integers between 1 and %d", p), call. = FALSE)
      as.integer(f)
    }
  }
  colname <- function(j) if (is.null(cn)) paste0("x", j) else cn[j]
  sub_label <- function(idx) {
    nm <- colname(idx)
    if (length(nm) <= 3L) paste(nm, collapse = ",") else
      sprintf("%s,...(%d)", paste(nm[1:2], collapse = ","), length(nm))
  }
  if (is.character(feats)) {
    if ("all" %in% feats) add_group(seq_len(p), "all")
    if ("each" %in% feats) for (j in seq_len(p)) add_group(j, colname(j))
  } else {
    for (f in feats) {
      if (is.character(f) && length(f) == 1L && f %in% c("all", "each")) {
        if (f == "all") add_group(seq_len(p), "all") else
          for (j in seq_len(p)) add_group(j, colname(j))
      } else {
        idx <- unique(to_index(f))
        add_group(idx, sub_label(idx))
      }
    }
  }
  G <- length(glist)
  custom <- NULL
  if (is.null(ks$explicit)) {
    fams <- number_custom(ks$families)     # a custom kernel's par1: its index in `custom`
    custom <- attr(fams, "custom")
    fam_type <- unlist(lapply(fams, function(f) rep(f$type, length(f$par1))))
    fam_p1 <- unlist(lapply(fams, `[[`, "par1"))
    fam_p2 <- unlist(lapply(fams, `[[`, "par2"))
    fam_lab <- unlist(lapply(fams, `[[`, "label"))
    nf <- length(fam_type)
    kg <- rep(seq_len(G), each = nf)
    tab <- data.frame(group = kg, type = rep(fam_type, G), par1 = rep(fam_p1, G),
                      par2 = rep(fam_p2, G), stringsAsFactors = FALSE)
    labels <- paste0(rep(fam_lab, G), "[", glab[kg], "]")
  } else {
    e <- ks$explicit
    kg <- if (is.null(e$kgroup)) seq_len(G) else e$kgroup    # the group of each kernel
    if (length(e$type) != length(kg) || any(kg > G))
      stop("internal: explicit kernels and groups differ", call. = FALSE)
    tab <- data.frame(group = kg, type = e$type, par1 = e$par1, par2 = e$par2,
                      stringsAsFactors = FALSE)
    labels <- paste0(e$flabel, "[", glab[kg], "]")
  }
  labels <- make.unique(labels, sep = "#")
  gfeat <- unlist(glist) - 1L
  gstart <- c(0L, cumsum(lengths(glist)))
  list(groups = glist, group_labels = glab, gstart = as.integer(gstart),
       gfeat = as.integer(gfeat), table = tab, labels = labels,
       normalize = ks$normalize, jitter = ks$jitter, custom = custom)
}

# The compact description of random_kernels(): the groups and the table from its vectors,
# labels built in vectorised form (no per-kernel R objects).
resolve_random <- function(ks, p, cn) {
  e <- ks$explicit
  if (max(e$gfeat) >= p)
    stop(sprintf("the random kernel set was drawn for more columns than the data have (%d)", p),
         call. = FALSE)
  # a set drawn for fewer columns would leave the data's other columns unused
  if (!is.null(ks$p) && ks$p != p)
    stop(sprintf(paste0("the random kernel set was drawn for p = %d columns but the data have ",
                        "%d: its kernels would use only the first %d. Draw it with ",
                        "random_kernels(M, p = %d), or give only the columns it was drawn for"),
                 ks$p, p, min(ks$p, p), p), call. = FALSE)
  G <- length(e$gstart) - 1L
  nm <- if (is.null(cn)) paste0("x", seq_len(p)) else cn
  len <- diff(e$gstart)
  first <- nm[e$gfeat[e$gstart[-(G + 1L)] + 1L] + 1L]
  glab <- ifelse(len == 1L, first, sprintf("%s,...(%d)", first, len))
  fam <- ifelse(e$type == "poly", sprintf("poly(degree=%d)", as.integer(e$par1)),
                sprintf("rbf(sigma=%.4g)", e$par1))
  labels <- paste0(fam, "[", glab[e$kgroup], "]")
  if (anyDuplicated(labels)) labels <- make.unique(labels, sep = "#")
  tab <- data.frame(group = e$kgroup, type = e$type, par1 = e$par1, par2 = e$par2,
                    stringsAsFactors = FALSE)
  list(groups = NULL, group_labels = glab, gstart = e$gstart, gfeat = e$gfeat, table = tab,
       labels = labels, normalize = ks$normalize, jitter = ks$jitter)
}

#' Number of kernels a set gives on data with p columns
#' @param kernels a [kernel_set()].
#' @param x a matrix or data frame (only its columns are used).
#' @return An integer.
#' @examples
#' n_kernels(kernel_set(rbf_kernel(1:3), features = c("all", "each")), matrix(0, 2, 4))
#' @export
n_kernels <- function(kernels, x) {
  if (is_kernel_family(kernels)) stop(family_not_set("kernels"), call. = FALSE)
  if (!inherits(kernels, "kernel_set")) stop("'kernels' must be a kernel_set", call. = FALSE)
  nrow(resolve_kernels(kernels, ncol(x), colnames(x))$table)
}

kernel_bytes <- function(n1, n2, M) 8 * as.double(n1) * as.double(n2) * as.double(M)

check_kernel_memory <- function(n1, n2, M, limit = default_memory()) {
  bytes <- kernel_bytes(n1, n2, M)
  if (bytes > limit)
    stop(sprintf(paste0("the kernel array would need %s (%d x %d x %d doubles), above the limit ",
                        "of %s (half the machine's memory, or options(mklearn.max_bytes = )). ",
                        "Use fewer kernels or samples, raise the limit, or fit with mkl(), ",
                        "which computes kernel columns on the fly when the array does not fit."),
                 format_bytes(bytes), n1, n2, M, format_bytes(limit)), call. = FALSE)
  invisible(bytes)
}

format_bytes <- function(b) {
  u <- c("B", "KB", "MB", "GB", "TB"); k <- 1
  while (b >= 1000 && k < length(u)) { b <- b / 1000; k <- k + 1 }
  sprintf("%.3g %s", b, u[k])
}

# The features (1-based columns of x) of group g of a resolved set, from the kernel table's
# offsets (kernel_table(), the C layout): every set has them, random_kernels() sets included.
group_features <- function(rk, g) {
  rk$gfeat[seq.int(rk$gstart[g] + 1L, length.out = rk$gstart[g + 1L] - rk$gstart[g])] + 1L
}

check_chisq_data <- function(rk, x, which) {
  tab <- rk$table[which, , drop = FALSE]
  g <- unique(tab$group[tab$type == "chisq"])
  for (gi in g) {
    if (any(x[, group_features(rk, gi)] < 0))
      stop("chisq_kernel() needs non-negative features (histograms); the data have negative ",
           "values (with standardize = TRUE they always do: set standardize = FALSE)",
           call. = FALSE)
  }
}

# Build training kernels (normalised) for the resolved set rk, optionally only `which`:
# list(K, scale, colmeans, grandmean), the dense array of a fly store.
build_train <- function(rk, x, which = NULL, nthreads = 0L, limit = default_memory()) {
  if (is.null(which)) which <- seq_len(nrow(rk$table))
  check_kernel_memory(nrow(x), nrow(x), length(which), limit)
  check_chisq_data(rk, x, which)
  if (any(rk$table$type[which] == "custom")) return(custom_train(rk, x, which, nthreads))
  st <- c(list(kind = .mk_codes$store[["fly"]], x = x, z = NULL,
              nthreads = as.integer(nthreads)),
          kernel_table(rk, which))
  checked_train(.Call(C_store_dense, st), rk, which)
}

# The training list after its non-finite check, passed through unmodified and unbound in the
# caller: gram() then takes K out of it in place (a second reference to the array would make
# its dimnames(K) <- duplicate the whole array).
checked_train <- function(tr, rk, which) {
  bad <- tr[["nonfinite"]]
  if (length(bad)) stop_nonfinite(rk, which[bad], "the training data")
  tr
}

# The error for kernels whose values are not all finite (`bad`: indices into rk's table),
# naming each kernel with its parameters and its feature subset.
stop_nonfinite <- function(rk, bad, where) {
  if (!length(bad)) return(invisible())
  labs <- rk$labels[bad]
  stop(sprintf(paste0("kernel(s) %s%s give non-finite values (NaN or Inf) on %s: the ",
                      "features are too large for these kernel parameters. Standardise the ",
                      "features (standardize = TRUE), rescale them, or use other parameters ",
                      "(e.g. a lower polynomial degree)."),
               paste(utils::head(labs, 5L), collapse = ", "),
               if (length(labs) > 5L) sprintf(" and %d more", length(labs) - 5L) else "",
               where), call. = FALSE)
}

# Test-by-train kernels for kernels `which`, with the training normalisation `stats`.
build_test <- function(rk, x, z, stats, which, nthreads = 0L) {
  check_kernel_memory(nrow(z), nrow(x), length(which))
  check_chisq_data(rk, z, which)
  st <- test_store(rk, x, z, stats, which, nthreads)
  if (is_dense(st)) return(st$K)      # with custom kernels: built and checked in R
  K <- .Call(C_store_dense, st)
  stop_nonfinite(rk, which[attr(K, "nonfinite")], "the new data")
  attr(K, "nonfinite") <- NULL
  K
}

#' Kernel matrices
#'
#' Builds the kernels of a set as one contiguous n x n x M array, in parallel C code, with
#' each feature subset's distances computed once. With `y`, returns the test-by-train
#' kernels (rows: `y`, columns: `x`) normalised with the statistics of the training kernels,
#' so they can be combined with a model fitted on `x`.
#'
#' @param kernels a [kernel_set()].
#' @param x training data: a numeric matrix or data frame.
#' @param y optional new data with the same columns as `x`.
#' @param which optional indices of the kernels to compute (default all).
#' @param nthreads number of threads (0: the OpenMP default, capped by `OMP_THREAD_LIMIT`).
#' @return A numeric array with dimnames giving the kernel labels; the training version has
#'   attribute `"normalization"` (trace scale, and the column and grand means for centring).
#' @examples
#' x <- as.matrix(iris[1:20, 1:4])
#' K <- gram(kernel_set(rbf_kernel(c(0.5, 1)), features = c("all", "each")), x)
#' dim(K)
#' dimnames(K)[[3]]
#' @export
gram <- function(kernels, x, y = NULL, which = NULL, nthreads = 0L) {
  if (is_kernel_family(kernels)) stop(family_not_set("kernels"), call. = FALSE)
  if (!inherits(kernels, "kernel_set"))
    stop("'kernels' must be a kernel_set (see ?kernel_set)", call. = FALSE)
  x <- check_x(x)
  rk <- resolve_kernels(kernels, ncol(x), colnames(x))
  M <- nrow(rk$table)
  if (is.null(which)) which <- seq_len(M)
  if (!is.numeric(which) || any(which < 1 | which > M | which != round(which)))
    stop(sprintf("'which' must contain kernel indices between 1 and %d", M), call. = FALSE)
  which <- as.integer(which)
  nthreads <- check_threads(nthreads)
  tr <- build_train(rk, x, which, nthreads)
  if (is.null(y)) {
    K <- tr$K
    tr$K <- NULL   # drop the second reference so that setting dimnames does not copy
    dimnames(K) <- list(rownames(x), rownames(x), rk$labels[which])
    attr(K, "normalization") <- tr[c("scale", "colmeans", "grandmean")]
    return(K)
  }
  y <- check_newx(y, x)
  if (nrow(y) == 0L)
    return(array(0, c(0L, nrow(x), length(which)),
                 dimnames = list(NULL, rownames(x), rk$labels[which])))
  st <- tr[c("scale", "colmeans", "grandmean")]
  rm(tr)
  idx <- seq_along(which)
  rk2 <- rk; rk2$table <- rk$table[which, , drop = FALSE]
  K <- build_test(rk2, x, y, st, idx, nthreads)
  dimnames(K) <- list(rownames(y), rownames(x), rk$labels[which])
  K
}

#' Gaussian widths from the data's scale, and the default kernel set
#'
#' `rbf_widths()` gives Gaussian widths from the quantiles of the squared distances between
#' rows of `x`, as kernlab's `sigest()` does: a quantile \eqn{q} gives the width
#' \eqn{\sigma = \sqrt{q / 2}}, for which \eqn{\exp(-\|x - x'\|^2 / (2\sigma^2)) = e^{-1}} at
#' that distance. The distances are those between up to 300 rows evenly spaced in `x`, so the
#' result is deterministic and draws no random numbers.
#'
#' `default_kernels()` is the kernel set [mkl()] uses when none is given: Gaussian kernels on
#' all the features whose widths are set from the training data (after standardisation) when
#' the model is fitted, `rbf_widths(x, c(0.1, 0.5, 0.9))` and twice the widest of these, and
#' polynomial kernels of degree 1 and 2. The widths follow the number and the scale of the
#' features, so no kernel of the set is close to the identity matrix (a fixed width such as
#' \eqn{\sigma = 1} is, on 60 standardised features). With `x`, it returns the set with the
#' widths of `x` filled in; the fitted model's `kernels` holds the set it used.
#'
#' @param x a numeric matrix (or data frame of numeric columns).
#' @param probs probabilities of the quantiles of the squared distances.
#' @return `rbf_widths()`: a vector of widths (1 for every quantile when all the rows are
#'   equal). `default_kernels()`: a [kernel_set()].
#' @seealso [rbf_kernel()], [kernel_set()], [mkl()]
#' @examples
#' x <- scale(as.matrix(iris[, 1:4]))
#' rbf_widths(x)
#' default_kernels()
#' default_kernels(x)
#' @export
rbf_widths <- function(x, probs = c(0.1, 0.5, 0.9)) {
  x <- check_x(x)
  if (!is.numeric(probs) || !length(probs) || anyNA(probs) || any(probs < 0 | probs > 1))
    stop("'probs' must be probabilities in [0, 1]", call. = FALSE)
  rows <- unique(round(seq(1, nrow(x), length.out = min(nrow(x), 300L))))
  d2 <- as.vector(stats::dist(x[rows, , drop = FALSE]))^2
  d2 <- d2[d2 > 0]
  if (!length(d2)) return(rep(1, length(probs)))
  sqrt(unname(stats::quantile(d2, probs, names = FALSE)) / 2)
}

#' @rdname rbf_widths
#' @param each widths of Gaussian kernels on every single (standardised) feature, added to the
#'   set that `x` fills in (`NULL`: none). [mkl()] adds `c(0.5, 1, 2)` for a SpicyMKL
#'   regression, whose sparse weights keep the kernels of the features that matter.
#' @export
default_kernels <- function(x = NULL, each = NULL) {
  ks <- kernel_set(poly_kernel(1:2))
  ks$data_sigma <- list(probs = c(0.1, 0.5, 0.9), wide = 2)
  if (!is.null(each)) each <- check_positive(each, "each")
  if (is.null(x)) ks else data_kernels(ks, x, each)
}

# A kernel set with its data-scale widths (default_kernels()) filled in from x, the data the
# kernels are built on, plus Gaussians of widths `each` on every single feature (mkl() asks
# for them for a SpicyMKL regression, regression_each_widths()); any other set as it is.
data_kernels <- function(ks, x, each = NULL) {
  ds <- ks$data_sigma
  if (is.null(ds)) return(ks)
  s <- rbf_widths(x, ds$probs)
  s <- signif(c(s, ds$wide * max(s)), 4)
  fams <- c(list(rbf_kernel(unique(s))), ks$families)
  if (!is.null(each) && ncol(x) > 1L)
    return(each_kernels(fams, rbf_kernel(each), ncol(x), ks$normalize, ks$jitter))
  do.call(kernel_set, c(fams, list(features = ks$features, normalize = ks$normalize,
                                   jitter = ks$jitter)))
}

# The families `fams` on all the p features and the Gaussians `each` on every single feature,
# as one explicit set: a kernel per row, kgroup its group (1 all the features, 1 + j feature j).
each_kernels <- function(fams, each, p, normalize, jitter) {
  field <- function(fs, nm) unlist(lapply(fs, function(f) {
    v <- f[[nm]]
    if (nm == "type") rep(v, length(f$par1)) else v
  }))
  na <- sum(lengths(lapply(fams, `[[`, "par1")))
  ne <- length(each$par1)
  rep_each <- function(v) rep(v, p)
  e <- list(type = c(field(fams, "type"), rep_each(field(list(each), "type"))),
            par1 = c(field(fams, "par1"), rep_each(each$par1)),
            par2 = c(field(fams, "par2"), rep_each(each$par2)),
            flabel = c(field(fams, "label"), rep_each(each$label)),
            kgroup = c(rep(1L, na), rep(seq_len(p) + 1L, each = ne)))
  structure(list(families = list(), features = c(list("all"), as.list(seq_len(p))),
                 normalize = normalize, jitter = jitter, explicit = e,
                 layout = list(all = field(fams, "label"), each = each$label)),
            class = "kernel_set")
}
