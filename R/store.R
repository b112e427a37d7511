# The kernel store, R side: the list that src/store.c reads (mk_store_read) by name.
#   dense: list(kind = 0L, K = nr x n x M double array)
#   fly:   list(kind = 1L, x = n x p training data, z = NULL (training) or nr x p new rows,
#               gstart, gfeat, kgroup, ktype, kpar1, kpar2 (the resolved kernel table),
#               norm, jitter, scale, colmeans, grandmean (training normalisation))
# Solvers receive a training store; predict() builds test stores (rows = new data).

# A dense store from an array (or a store, returned as it is).
as_store <- function(K) {
  if (inherits(K, "mk_store")) return(K)
  d <- dim(K)
  if (length(d) == 2L) K <- array(K, c(d, 1L))
  if (!is.double(K)) storage.mode(K) <- "double"
  structure(list(kind = 0L, K = K, nthreads = 0L), class = "mk_store")
}

store_dims <- function(store) {
  if (store$kind == 0L) dim(store$K) else
    c(if (is.null(store$z)) nrow(store$x) else nrow(store$z), nrow(store$x),
      length(store$ktype))
}

# The kernel table of a resolved kernel set as the integer / double vectors C reads.
kernel_table <- function(rk, which = NULL) {
  tab <- if (is.null(which)) rk$table else rk$table[which, , drop = FALSE]
  list(gstart = rk$gstart, gfeat = rk$gfeat, kgroup = as.integer(tab$group - 1L),
       ktype = unname(.kernel_codes[tab$type]), kpar1 = as.double(tab$par1),
       kpar2 = as.double(tab$par2), norm = .norm_codes[[rk$normalize]],
       jitter = as.double(rk$jitter))
}

# A fly training store for the kernels of rk on x; computes the training normalisation
# (one pass over each kernel, nothing stored but O(n M)).
fly_store <- function(rk, x, nthreads = 0L) {
  st <- structure(c(list(kind = 1L, x = x, z = NULL, nthreads = as.integer(nthreads)),
                    kernel_table(rk)), class = "mk_store")
  stats <- .Call(C_store_stats, st)
  st$scale <- stats$scale
  st$colmeans <- stats$colmeans
  st$grandmean <- stats$grandmean
  st
}

# A test store: rows z against the training data x of a fitted model, kernels `which` only,
# with the training normalisation of those kernels.
test_store <- function(rk, x, z, stats, which, nthreads = 0L) {
  structure(c(list(kind = 1L, x = x, z = z, nthreads = as.integer(nthreads)),
              kernel_table(rk, which),
              list(scale = as.double(stats$scale[which]),
                   colmeans = if (is.null(stats$colmeans)) NULL else
                     stats$colmeans[, which, drop = FALSE],
                   grandmean = if (is.null(stats$grandmean)) NULL else
                     as.double(stats$grandmean[which]))), class = "mk_store")
}

# A dense training store for the kernels of rk on x (gram + normalisation in C).
dense_store <- function(rk, x, nthreads = 0L) {
  tr <- build_train(rk, x, NULL, nthreads, limit = Inf)   # the budget was checked by mkl()
  structure(list(kind = 0L, K = tr$K, nthreads = as.integer(nthreads),
                 scale = tr$scale, colmeans = tr$colmeans, grandmean = tr$grandmean),
            class = "mk_store")
}

# Decision values sum_j K_{idx[j]} alpha[, j] (no bias) through the store.
store_decision <- function(store, alpha, idx) {
  .Call(C_store_decision, store, as.integer(idx), alpha)
}
