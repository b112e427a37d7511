# Argument checks shared by the front ends. Each stops with a specific message.

# rows_ok: zero rows are allowed (new data); unique_names: refuse duplicated column names
# (training data: predictions match new data to these columns by name).
check_x <- function(x, name = "x", rows_ok = FALSE, unique_names = TRUE) {
  if (is.data.frame(x)) {
    bad <- names(x)[!vapply(x, function(v) is.numeric(v) || is.logical(v), logical(1))]
    if (length(bad))
      stop(sprintf(paste0("'%s' has non-numeric column(s): %s. Convert them to numbers, or use ",
                          "the formula interface mkl(y ~ ., data), which expands factors."),
                   name, paste(bad, collapse = ", ")), call. = FALSE)
    x <- as.matrix(x)
  }
  if (!is.matrix(x) && is.numeric(x) && is.null(dim(x))) x <- matrix(x, ncol = 1L)
  if (!is.matrix(x) || !(is.numeric(x) || is.logical(x)))
    stop(sprintf("'%s' must be a numeric matrix or a data frame of numeric columns", name),
         call. = FALSE)
  if ((nrow(x) == 0L && !rows_ok) || ncol(x) == 0L)
    stop(sprintf("'%s' has no rows or no columns", name), call. = FALSE)
  if (unique_names) check_unique_colnames(colnames(x), name)
  storage.mode(x) <- "double"
  if (anyNA(x)) stop(sprintf("'%s' contains missing values (NA/NaN); remove or impute them",
                             name), call. = FALSE)
  if (any(!is.finite(x))) stop(sprintf("'%s' contains infinite values", name), call. = FALSE)
  x
}

# New data for a model fitted on columns x_train_cols (the training matrix, its column names,
# or their indices): matched by name when the training columns have complete names and the new
# data have names, otherwise by position.
check_newx <- function(newx, x_train_cols) {
  p <- if (is.matrix(x_train_cols)) ncol(x_train_cols) else length(x_train_cols)
  cn <- if (is.matrix(x_train_cols)) colnames(x_train_cols) else x_train_cols
  if (p > 1L && is.null(dim(newx)) && (is.numeric(newx) || is.logical(newx)))
    stop(sprintf(paste0("'newx' is a vector (length %d), which is read as one column, but the ",
                        "model was fitted on %d columns. For one observation keep the row a ",
                        "matrix: x[i, , drop = FALSE] (or rbind(v))"), length(newx), p),
         call. = FALSE)
  newx <- check_x(newx, "newx", rows_ok = TRUE, unique_names = FALSE)
  named <- !is.null(cn) && !is.numeric(cn) && !is.null(colnames(newx))
  if (named && all(nzchar(cn) & !is.na(cn))) {
    miss <- setdiff(cn, colnames(newx))
    if (length(miss))
      stop(sprintf("'newx' lacks column(s) the model was fitted on: %s",
                   paste(miss, collapse = ", ")), call. = FALSE)
    dup <- intersect(cn, colnames(newx)[duplicated(colnames(newx))])
    if (length(dup))
      stop(sprintf(paste0("'newx' has several columns named %s: new data are matched to the ",
                          "model's columns by name, so each name must be unique"),
                   paste(dup, collapse = ", ")), call. = FALSE)
    newx <- newx[, cn, drop = FALSE]
  } else if (named && ncol(newx) == p) {
    # some training columns have no name: matched by position, the named ones must agree
    bad <- which(nzchar(cn) & !is.na(cn) & cn != colnames(newx))
    if (length(bad))
      stop(sprintf(paste0("some of the model's columns have no name, so new data are matched ",
                          "by position, but 'newx' has other names at column(s) %s (%s)"),
                   paste(bad, collapse = ", "), paste(colnames(newx)[bad], collapse = ", ")),
           call. = FALSE)
  }
  if (ncol(newx) != p)
    stop(sprintf("'newx' has %d column(s) but the model was fitted on %d", ncol(newx), p),
         call. = FALSE)
  newx
}

# Duplicated column names are refused: predict() matches columns by name and would read the
# first of them twice.
check_unique_colnames <- function(cn, name) {
  dup <- unique(cn[duplicated(cn) & !is.na(cn) & nzchar(cn)])
  if (!length(dup)) return(invisible())
  cols <- vapply(dup, function(d) paste(which(cn == d), collapse = ", "), "")
  stop(sprintf(paste0("'%s' has duplicated column names: %s. New data are matched to the ",
                      "columns by name, so each name must be unique: rename them (e.g. ",
                      "make.unique(colnames(%s))) or remove the names to match by position"),
               name, paste0(dup, " (columns ", cols, ")", collapse = ", "), name),
       call. = FALSE)
}

# Columns named for messages: the name, or "column j" when it has none.
column_labels <- function(cn, idx) {
  nm <- if (is.null(cn)) rep("", length(idx)) else cn[idx]
  ifelse(is.na(nm) | !nzchar(nm), paste0("column ", idx), nm)
}

check_threads <- function(nthreads) {
  if (is.null(nthreads)) nthreads <- getOption("mklearn.threads", 0L)
  if (!is.numeric(nthreads) || length(nthreads) != 1L || is.na(nthreads) || nthreads < 0 ||
      nthreads != round(nthreads))
    stop("'nthreads' must be one non-negative integer (0: the OpenMP default)", call. = FALSE)
  cores <- max_threads()
  if (nthreads > cores) {
    message(sprintf("nthreads = %s is more than the %d processor(s) available; using %d",
                    format(nthreads), cores, cores))
    nthreads <- cores
  }
  as.integer(nthreads)
}

# The processors this process may use (C: the OpenMP processor count, OMP_THREAD_LIMIT).
max_threads <- function() max(1L, as.integer(.Call(C_threads, .Machine$integer.max)))

check_scalar <- function(v, name, lower = -Inf, upper = Inf, lower_open = FALSE) {
  ok <- is.numeric(v) && length(v) == 1L && !is.na(v) && is.finite(v) && v <= upper &&
    (if (lower_open) v > lower else v >= lower)
  if (!ok)
    stop(sprintf("'%s' must be one finite number %s %s%s", name, if (lower_open) ">" else ">=",
                 format(lower), if (is.finite(upper)) paste(" and <=", format(upper)) else ""),
         call. = FALSE)
  as.double(v)
}

# One whole number >= lower (and <= upper), as an integer (capped at the largest integer).
check_count <- function(v, name, lower = 1, upper = Inf) {
  v <- check_scalar(v, name, lower, upper)
  if (v != round(v))
    stop(sprintf("'%s' must be a whole number; got %s", name, format(v)), call. = FALSE)
  as.integer(min(v, .Machine$integer.max))
}

# match.arg() whose error names the argument and the value given. As match.arg(), without
# 'choices' it reads them from the default of the calling function's argument 'name'.
match_arg <- function(arg, choices, several.ok = FALSE, name = deparse(substitute(arg))) {
  if (missing(choices)) {
    sysp <- sys.parent()
    choices <- eval(formals(sys.function(sysp))[[name]], envir = sys.frame(sysp))
  }
  if (is.null(arg)) return(choices[1L])
  if (!several.ok && identical(arg, choices)) return(arg[1L])
  ok <- is.character(arg) && length(arg) >= 1L && !anyNA(arg) &&
    (several.ok || length(arg) == 1L)
  i <- if (ok) pmatch(arg, choices, nomatch = 0L, duplicates.ok = TRUE) else 0L
  if (!ok || any(i == 0L))
    stop(sprintf("'%s' should be one of %s%s; got %s", name,
                 paste0("\"", choices, "\"", collapse = ", "),
                 if (!several.ok && length(arg) > 1L) " (one value: length 1)" else "",
                 paste(deparse(arg, width.cutoff = 60L, nlines = 1L), collapse = "")),
         call. = FALSE)
  choices[i]
}

# Code the response. Returns list(y (double), task, classes); with multiclass = TRUE, a factor
# of more than two classes is returned as it is, with multi = TRUE.
check_y <- function(y, n, task = NULL, multiclass = FALSE) {
  if (is.data.frame(y) || (is.matrix(y) && ncol(y) > 1L))
    stop("'y' must be a vector (one response)", call. = FALSE)
  if (is.matrix(y)) y <- drop(y)
  if (length(y) != n)
    stop(sprintf("'y' has length %d but 'x' has %d rows", length(y), n), call. = FALSE)
  if (anyNA(y)) stop("'y' contains missing values", call. = FALSE)
  if (is.character(y) || is.logical(y)) y <- factor(y)
  if (is.factor(y)) {
    y <- droplevels(y)
    if (!is.null(task) && task == "regression")
      stop("a factor 'y' cannot be used for regression", call. = FALSE)
    lv <- levels(y)
    if (length(lv) < 2L)
      stop(sprintf("'y' has a single class ('%s'); classification needs two", lv), call. = FALSE)
    if (length(lv) > 2L) {
      if (!multiclass)
        stop(sprintf(paste0("'y' has %d classes; this function takes two (mkl() and cv.mkl() ",
                            "fit more)"), length(lv)), call. = FALSE)
      return(list(y = y, task = "classification", classes = factor(lv, levels = lv),
                  multi = TRUE))
    }
    return(list(y = ifelse(y == lv[2L], 1, -1), task = "classification",
                classes = factor(lv, levels = lv)))
  }
  if (!is.numeric(y)) stop("'y' must be a factor or a numeric vector", call. = FALSE)
  if (any(!is.finite(y))) stop("'y' contains infinite values", call. = FALSE)
  u <- sort(unique(y))
  if (is.null(task))
    task <- if (length(u) <= 2L && (all(u %in% c(-1, 1)) || all(u %in% c(0, 1))))
      "classification" else "regression"
  if (task == "classification") {
    if (length(u) < 2L)
      stop(sprintf("'y' has a single class (%s); classification needs two", format(u)),
           call. = FALSE)
    if (length(u) > 2L || !(all(u %in% c(-1, 1)) || all(u %in% c(0, 1))))
      stop(paste0("a numeric 'y' for classification must take the values {-1, 1} or {0, 1}",
                  if (multiclass && length(u) > 2L) "; give more than two classes as a factor"),
           call. = FALSE)
    return(list(y = ifelse(y == u[2L], 1, -1), task = task, classes = u))
  }
  if (length(u) < 2L) stop("'y' is constant; there is nothing to learn", call. = FALSE)
  list(y = as.double(y), task = "regression", classes = NULL)
}

# The column scaling of mkl(standardize = ): TRUE / "zscore", "range", FALSE / "none".
check_standardize <- function(standardize) {
  if (is.logical(standardize) && length(standardize) == 1L && !is.na(standardize))
    return(if (standardize) "zscore" else "none")
  if (is.character(standardize) && length(standardize) == 1L &&
      standardize %in% c("zscore", "range", "none"))
    return(standardize)
  stop("'standardize' must be TRUE, FALSE, \"zscore\", \"range\" or \"none\"", call. = FALSE)
}

# Scale the columns of x: z-scores (how = "zscore") or to [0, 1] (how = "range"); the centre
# and scale are kept for predict().
standardize_x <- function(x, how = "zscore") {
  if (how == "range") {
    center <- apply(x, 2L, min)
    scale <- apply(x, 2L, max) - center
  } else {
    center <- colMeans(x)
    # sum((x - center)^2) per column, and below max(abs(x)), in C (src/front.c): R's sums,
    # no copy of x
    cs <- .Call(C_front_colstats, x, center)
    scale <- stats::setNames(sqrt(cs[1L, ] / max(nrow(x) - 1L, 1L)), names(center))
  }
  over <- !is.finite(center) | !is.finite(scale)
  if (any(over)) {
    nm <- column_labels(colnames(x), which(over))
    stop(sprintf(paste0("standardising overflows (the mean or standard deviation is not a ",
                        "finite double) in column(s): %s. Rescale them (e.g. divide by a ",
                        "power of 10) before fitting"), paste(nm, collapse = ", ")),
         call. = FALSE)
  }
  # constant: a spread below 1e-12 of the column's largest magnitude (relative, so that tiny
  # values are not constant); the squares of tiny values underflow, so such a column's standard
  # deviation is recomputed on the column scaled to magnitude 1
  mag <- if (how == "range") vapply(seq_len(ncol(x)), function(j) max(abs(x[, j])), 1) else
    cs[2L, ]
  small <- scale <= 1e-12 * mag & mag > 0
  if (how == "zscore" && nrow(x) > 1L && any(small))
    scale[small] <- mag[small] * apply(sweep(x[, small, drop = FALSE], 2L, mag[small], "/"), 2L,
                                       stats::sd)
  const <- scale <= 1e-12 * mag
  if (any(const)) {
    nm <- column_labels(colnames(x), which(const))
    stop(sprintf(paste0("cannot standardise constant column(s): %s. Remove them, or set ",
                        "standardize = FALSE"), paste(nm, collapse = ", ")), call. = FALSE)
  }
  list(x = apply_standardize(x, center, scale), center = center, scale = scale)
}

# (x - center) / scale by column: one copy of x (src/front.c), where two sweep()s made four
apply_standardize <- function(x, center, scale) {
  if (is.null(center)) return(x)
  .Call(C_front_sweep, x, as.double(center), as.double(scale))
}

# Validate a precomputed kernel array or list of matrices; returns an n x n x M double array.
# check: "fast" (one pass: finite, symmetric, non-negative diagonal, every 2 x 2 principal
# minor and a few Rayleigh quotients non-negative), "full" (also the smallest eigenvalue),
# "none" (finite values only). Test-by-train kernels (test = TRUE): finite values only.
as_kernel_array <- function(K, n = NULL, name = "kernels", test = FALSE, check = "fast",
                            nthreads = 0L) {
  if (is.list(K) && !is.array(K)) {
    if (length(K) == 0L) stop(sprintf("'%s' is an empty list", name), call. = FALSE)
    d <- lapply(K, dim)
    if (!all(vapply(K, is.matrix, logical(1))) || length(unique(d)) != 1L)
      stop(sprintf("'%s' must be a list of matrices of the same size", name), call. = FALSE)
    labs <- names(K)
    K <- array(unlist(lapply(K, as.double)), c(d[[1]], length(K)))
    if (!is.null(labs)) dimnames(K) <- list(NULL, NULL, labs)
  }
  if (is.matrix(K)) K <- array(K, c(dim(K), 1L), dimnames = c(dimnames(K), list(NULL)))
  if (!is.array(K) || length(dim(K)) != 3L || !is.numeric(K))
    stop(sprintf("'%s' must be a kernel_set, an n x n x M numeric array or a list of matrices",
                 name), call. = FALSE)
  if (dim(K)[3] == 0L) stop(sprintf("'%s' holds no kernels", name), call. = FALSE)
  if (!is.double(K)) storage.mode(K) <- "double"
  square <- dim(K)[1] == dim(K)[2]
  if (!test && !square)
    stop(sprintf("precomputed training kernels must be square; got %d x %d",
                 dim(K)[1], dim(K)[2]), call. = FALSE)
  if (!test && !is.null(n) && dim(K)[1] != n)
    stop(sprintf("precomputed kernels are %d x %d but there are %d observations",
                 dim(K)[1], dim(K)[1], n), call. = FALSE)
  level <- if (test || check == "none") 0L else if (check == "fast") 1L else 2L
  # the eigenvalues are only computed for finite kernels: "full" first runs the fast pass
  chk <- .Call(C_check_kernels, K, min(level, 1L), as.integer(nthreads))
  if (any(chk$nonfinite))
    stop(sprintf("'%s' contains NA or infinite values (kernel(s) %s)", name,
                 kernel_list(which(chk$nonfinite))), call. = FALSE)
  if (level == 0L) return(K)
  bad <- which(chk$asymmetry > 1e-10)
  if (length(bad))
    stop(sprintf("precomputed kernel(s) %s not symmetric (largest |K[i, j] - K[j, i]| %.3g ",
                 kernel_list(bad), max(chk$asymmetry[bad])),
         "relative to the largest entry)", call. = FALSE)
  # every test below bounds the smallest eigenvalue from above (relative to the largest entry)
  tol <- -1e-8
  bad <- which(chk$min_diag < tol)
  if (length(bad))
    stop(sprintf(paste0("precomputed kernel(s) %s not positive semidefinite: a negative ",
                        "diagonal entry (%.3g relative to the largest entry)"),
                 kernel_list(bad), min(chk$min_diag[bad])), call. = FALSE)
  bad <- which(chk$min_minor < tol)
  if (length(bad)) {
    m <- bad[which.min(chk$min_minor[bad])]
    stop(sprintf(paste0("precomputed kernel(s) %s not positive semidefinite: |K[i, j]| > ",
                        "sqrt(K[i, i] K[j, j]) (kernel %d: i = %d, j = %d). A distance or ",
                        "dissimilarity matrix is not a kernel: transform it, e.g. ",
                        "exp(-D^2 / (2 sigma^2)) for Euclidean distances D"),
                 kernel_list(bad), m, chk$minor_pair[m, 1L], chk$minor_pair[m, 2L]),
         call. = FALSE)
  }
  bad <- which(chk$min_rayleigh < tol)
  if (length(bad))
    stop(sprintf(paste0("precomputed kernel(s) %s not positive semidefinite: v'Kv < 0 for a ",
                        "test vector v (%.3g relative to v'v and the largest entry)"),
                 kernel_list(bad), min(chk$min_rayleigh[bad])), call. = FALSE)
  if (level == 2L) {
    eig <- .Call(C_check_kernels, K, 2L, as.integer(nthreads))$min_eigen
    bad <- which(eig < tol)
    if (length(bad))
      stop(sprintf(paste0("precomputed kernel(s) %s not positive semidefinite (smallest ",
                          "eigenvalue %.3g relative to the largest entry)"),
                   kernel_list(bad), min(eig[bad])), call. = FALSE)
  }
  K
}

# "1, 2, 3, 4, 5 and 7 more"
kernel_list <- function(idx) {
  paste0(paste(utils::head(idx, 5L), collapse = ", "),
         if (length(idx) > 5L) sprintf(" and %d more", length(idx) - 5L) else "")
}

# The message for a kernel family (rbf_kernel(), ...) given where a kernel set is expected.
family_not_set <- function(name) {
  sprintf(paste0("'%s' is a kernel family, not a kernel set: wrap it in kernel_set(), e.g. ",
                 "kernel_set(rbf_kernel(c(1, 2)), features = \"all\")"), name)
}

# Refuse arguments that a function would otherwise ignore.
check_dots_empty <- function(dots, fun) {
  if (!length(dots)) return(invisible())
  nm <- names(dots)
  if (is.null(nm)) nm <- rep("", length(dots))
  nm[!nzchar(nm)] <- "(unnamed)"
  stop(sprintf("%s: unused argument(s) %s", fun, paste(nm, collapse = ", ")), call. = FALSE)
}

# predict()'s new data, given as `newx` or as `newdata` (the name other R models use), not both;
# NULL when neither (the fitted values).
newx_or_newdata <- function(newx, newdata) {
  if (is.null(newdata)) return(newx)
  if (!is.null(newx))
    stop("give the new data as 'newx' or as 'newdata', not both", call. = FALSE)
  newdata
}

# The design of a formula on a data frame: x (the model matrix without the intercept column,
# with its "contrasts" attribute), y (the response), the terms, the model frame and the rows
# na.action dropped (a message says how many).
formula_design <- function(formula, data, na.action = stats::na.omit) {
  frame_design(stats::model.frame(formula, data = data, na.action = stats::na.pass), na.action)
}

# The same from a model frame built with na.pass (mkl.formula: with subset and weights), and
# its case weights (NULL when none).
frame_design <- function(mf, na.action = stats::na.omit) {
  tt <- attr(mf, "terms")
  incomplete <- !stats::complete.cases(mf)
  if (any(incomplete)) {
    vars <- names(mf)[vapply(mf, anyNA, logical(1))]
    mf <- tryCatch(match.fun(na.action)(mf), error = function(e)
      stop(sprintf(paste0("%d of %d rows have missing values (in %s) and na.action refuses ",
                          "them; na.action = na.omit drops them"), sum(incomplete),
                   length(incomplete), paste(vars, collapse = ", ")), call. = FALSE))
    dropped <- length(incomplete) - nrow(mf)
    if (dropped > 0L)
      message(sprintf(paste0("%d of %d rows have missing values (in %s) and were dropped ",
                             "(na.action = %s; na.action = na.fail makes them an error)"),
                      dropped, length(incomplete), paste(vars, collapse = ", "),
                      if (inherits(attr(mf, "na.action"), "exclude")) "na.exclude" else
                        "na.omit"))
    attr(mf, "terms") <- tt
  }
  y <- stats::model.response(mf)
  if (is.null(y)) stop("the formula has no response", call. = FALSE)
  attr(tt, "intercept") <- 1L
  X <- stats::model.matrix(tt, mf)
  x <- X[, colnames(X) != "(Intercept)", drop = FALSE]
  attr(x, "contrasts") <- attr(X, "contrasts")
  list(x = x, y = y, terms = tt, frame = mf, na.action = attr(mf, "na.action"),
       weights = stats::model.weights(mf))
}

# A numeric response of a few whole values (not {0, 1} or {-1, 1}) is fitted as a regression;
# say so, once per fit (cv.mkl's fold fits muffle it by its class).
note_numeric_labels <- function(y, yc) {
  if (yc$task != "regression" || !is.numeric(y)) return(invisible())
  u <- sort(unique(as.vector(y)))
  if (length(u) > 10L || length(u) > length(y) / 2 || any(u != round(u))) return(invisible())
  msg <- sprintf(paste0("'y' is numeric with %d distinct whole values (%s): fitting a ",
                        "regression. For classification give 'y' as a factor (factor(y)); ",
                        "task = \"regression\" fits the regression without this message\n"),
                 length(u), paste(format(u), collapse = ", "))
  message(structure(class = c("mklearn_task_message", "message", "condition"),
                    list(message = msg, call = NULL)))
}

# The names of precomputed training kernels: TRUE when every kernel has one (test kernels are
# then matched by name); duplicated names are refused.
check_kernel_names <- function(labels) {
  if (is.null(labels)) return(FALSE)
  dup <- unique(labels[duplicated(labels) & !is.na(labels) & nzchar(labels)])
  if (length(dup))
    stop(sprintf(paste0("the precomputed kernels have duplicated names: %s. Test kernels are ",
                        "matched to them by name, so each name must be unique"),
                 paste(dup, collapse = ", ")), call. = FALSE)
  all(!is.na(labels) & nzchar(labels))
}

# Test-by-train kernels in the order of the training kernels: matched by name when both have
# names (named: the training kernels had names); a missing, extra or duplicated name is refused.
match_newkernels <- function(Kt, labels, named) {
  tn <- dimnames(Kt)[[3]]
  if (!isTRUE(named) || is.null(tn)) return(Kt)
  dup <- unique(tn[duplicated(tn)])
  miss <- setdiff(labels, tn)
  extra <- setdiff(tn, labels)
  if (length(dup) || length(miss) || length(extra)) {
    what <- c(if (length(miss)) paste("missing:", paste(miss, collapse = ", ")),
              if (length(extra)) paste("not in the fit:", paste(extra, collapse = ", ")),
              if (length(dup)) paste("duplicated:", paste(dup, collapse = ", ")))
    stop(sprintf(paste0("the kernels of 'newkernels' are matched to the training kernels by ",
                        "name, and their names differ (%s)"), paste(what, collapse = "; ")),
         call. = FALSE)
  }
  if (identical(tn, labels)) Kt else Kt[, , labels, drop = FALSE]
}
