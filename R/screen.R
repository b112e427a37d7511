# Screening of kernels that memorise: before a fit, the kernels of a kernel set that are nearly
# the identity on the training data (a Gaussian much narrower than the distances between the
# points: each point's only neighbour is itself) are dropped. MKL solvers favour such kernels
# (they separate any training labels) and then predict poorly; see NOTES-kernels.md.

# The effective number of neighbours below which a kernel counts as the identity: the
# option mklearn.screen (default 0, no screening; 3 drops only near-identity kernels).
screen_threshold <- function() {
  th <- getOption("mklearn.screen", 0)
  if (!is.numeric(th) || length(th) != 1L || is.na(th) || th < 0)
    stop("option 'mklearn.screen' must be one non-negative number (0: no screening)",
         call. = FALSE)
  th
}

# The effective number of neighbours per point (kernel_neighbours, on up to 100 columns) of
# every kernel of the resolved set rk on the data xs. Built-in kernels are computed on the fly;
# custom kernels need their dense store, whose size is checked against `memory` (bytes) first.
set_neighbours <- function(rk, xs, nthreads = 0L, memory = Inf) {
  if (has_custom(rk)) {
    need <- 8 * as.double(nrow(xs))^2 * nrow(rk$table)
    if (need > memory)
      stop(sprintf(paste0("screening the kernels (options(mklearn.screen)) needs the dense store ",
                          "of the custom kernels: %s for %d kernels on %d rows, above the ",
                          "memory budget of %s (mkl_control(memory = )); raise it, or keep ",
                          "every kernel with options(mklearn.screen = 0) or cv.mkl(screen = ",
                          "NULL)"), format_bytes(need), nrow(rk$table), nrow(xs),
                   format_bytes(memory)), call. = FALSE)
    st <- dense_store(rk, xs, nthreads)
  } else st <- fly_store(rk, xs, nthreads)
  kernel_neighbours(st, cols = 100L)
}

# The resolved kernel set rk without the kernels whose effective number of neighbours on the
# training data xs is below screen_threshold(); the dropped labels in rk$screened. The widest
# kernel stays when every one is below. `memory`: the budget of a dense store (custom kernels).
screen_kernels <- function(rk, xs, nthreads = 0L, memory = Inf) {
  th <- screen_threshold()
  M <- nrow(rk$table)
  if (th <= 1 || M < 2L) return(merge_duplicates(rk, xs, nthreads))
  nb <- screen_memo("neighbours", rk, xs, function() set_neighbours(rk, xs, nthreads, memory))
  drop <- which(!is.na(nb) & nb < th)
  if (length(drop) == M) drop <- drop[-which.max(nb)]
  if (!length(drop)) return(merge_duplicates(rk, xs, nthreads))
  inform <- function(msg) message(structure(class = c("mklearn_screen_message", "message",
                                                      "condition"),
                                            list(message = paste0(msg, "\n"), call = NULL)))
  inform(sprintf(paste0("%d kernel(s) nearly the identity on the training data (fewer than %s ",
                         "effective neighbours per point) left out: %s%s ",
                         "(options(mklearn.screen = 0) keeps them)"),
                  length(drop), format(th),
                  paste(utils::head(rk$labels[drop], 4L), collapse = ", "),
                  if (length(drop) > 4L) sprintf(" and %d more", length(drop) - 4L) else ""))
  merge_duplicates(drop_kernels(rk, drop), xs, nthreads)
}

# rk without the kernels `drop` (indices), their labels added to rk$screened.
drop_kernels <- function(rk, drop) {
  if (!length(drop)) return(rk)
  rk$table <- rk$table[-drop, , drop = FALSE]
  rk$screened <- c(rk$screened, rk$labels[drop])
  rk$labels <- rk$labels[-drop]
  rk
}

# The tolerance below which two kernels count as duplicates (1 - the mean cosine of their
# centred columns): the internal option mklearn.duplicates, set by cv.mkl(screen = "auto")
# (default 0, none merged).
duplicate_tolerance <- function() {
  tol <- getOption("mklearn.duplicates", 0)
  if (!is.numeric(tol) || length(tol) != 1L || is.na(tol) || tol < 0 || tol >= 1)
    stop("option 'mklearn.duplicates' must be one number in [0, 1) (0: none merged)",
         call. = FALSE)
  tol
}

# The built-in kernels of rk that nearly duplicate a narrower kernel of the same type on the
# same features (consecutive Gaussian widths, wide ones alike up to a constant) merged into it:
# along each (feature group, type) in table order, a kernel is kept when the mean cosine of its
# centred columns with the last kept one's (on up to `cols` columns of the training data xs)
# is below 1 - duplicate_tolerance(). Cheap: O(n cols M); see NOTES-model.md.
merge_duplicates <- function(rk, xs, nthreads = 0L, cols = 20L) {
  tol <- duplicate_tolerance()
  M <- nrow(rk$table)
  if (tol <= 0 || M < 2L || has_custom(rk)) return(rk)
  U <- screen_memo("columns", rk, xs, function() duplicate_columns(rk, xs, nthreads, cols))
  U <- U[, match(rk$labels, colnames(U)), drop = FALSE]
  ncol_used <- nrow(U) / nrow(xs)
  key <- paste(rk$table$group, rk$table$type)
  drop <- unlist(lapply(split(seq_len(M), factor(key, unique(key))), function(idx) {
    # the mean cosine between the kernels of one (feature group, type), then a walk in order
    S <- crossprod(U[, idx, drop = FALSE]) / ncol_used
    last <- 1L
    out <- integer(0)
    for (a in seq_along(idx)[-1L]) {
      if (S[last, a] >= 1 - tol) out <- c(out, idx[a]) else last <- a
    }
    out
  }), use.names = FALSE)
  drop_kernels(rk, sort(drop))
}

# The centred columns (to unit length) of every kernel of rk on up to `cols` spread rows of xs,
# the columns of one kernel stacked: an (n cols) x M matrix, a column per kernel label. The
# kernels unnormalised (a cosine does not see the scale), without fly_store()'s pass over every
# kernel for the training normalisation.
duplicate_columns <- function(rk, xs, nthreads = 0L, cols = 20L) {
  M <- nrow(rk$table)
  st <- raw_fly_store(rk, xs, nthreads = nthreads)
  st$scale <- rep(1, M)
  n <- nrow(xs)
  U <- do.call(rbind, lapply(spread_rows(n, cols), function(j) {
    K <- .Call(C_store_cols, st, seq_len(M), as.integer(j))
    K <- K - rep(colMeans(K), each = n)
    K / rep(pmax(sqrt(colSums(K^2)), .Machine$double.xmin), each = n)
  }))
  colnames(U) <- rk$labels
  U
}

# Inside with_screen_memo() (cv.mkl's kernel choice, whose thresholds screen the same training
# rows of each fold), the per-kernel screening statistics `kind` of a kernel set on the data
# xs are computed once: compute() on the first call; later calls on the same data with this
# set or a subset of it read them (per kernel label: a vector or the columns of a matrix).
.screen_memo <- new.env(parent = emptyenv())
.screen_memo$on <- FALSE

with_screen_memo <- function(expr) {
  old <- list(on = .screen_memo$on, items = .screen_memo$items)
  .screen_memo$on <- TRUE
  .screen_memo$items <- list()
  on.exit({
    .screen_memo$on <- old$on
    .screen_memo$items <- old$items
  })
  expr
}

screen_memo <- function(kind, rk, xs, compute) {
  if (!isTRUE(.screen_memo$on)) return(compute())
  for (it in .screen_memo$items) {
    if (it$kind == kind && all(rk$labels %in% it$labels) && identical(it$x, xs)) {
      i <- match(rk$labels, it$labels)
      return(if (is.matrix(it$value)) it$value[, i, drop = FALSE] else it$value[i])
    }
  }
  v <- compute()
  .screen_memo$items <- c(.screen_memo$items,
                          list(list(kind = kind, labels = rk$labels, x = xs, value = v)))
  v
}
