# The kernel store, R side: the list that src/store.c reads (mk_store_read) by name.
# (kind: .mk_codes$store, R/codes.R)
#   dense: list(kind = 0L, K = nr x n x M double array)
#   fly:   list(kind = 1L, x = n x p training data, z = NULL (training) or nr x p new rows,
#               gstart, gfeat, kgroup, ktype, kpar1, kpar2 (the resolved kernel table),
#               norm, jitter, scale, colmeans, grandmean (training normalisation))
#   lowrank: list(kind = 2L, G = n x R factors of all kernels side by side (normalised),
#               goff = integer M + 1 (kernel m's columns goff[m] + 1 .. goff[m + 1]), jitter,
#               Gz = NULL (training) or nr x R test factors, diag_mean; from mkl() also
#               scale and factors, the factorisation: lowrank_train())
# Solvers receive a training store; predict() builds test stores (rows = new data).

# A dense store from an array (or a store, returned as it is).
as_store <- function(K) {
  if (inherits(K, "mk_store")) return(K)
  d <- dim(K)
  if (length(d) == 2L) K <- array(K, c(d, 1L))
  if (!is.double(K)) storage.mode(K) <- "double"
  structure(list(kind = .mk_codes$store[["dense"]], K = K, nthreads = 0L), class = "mk_store")
}

# Whether a store is dense (the kind codes are .mk_codes$store, R/codes.R).
is_dense <- function(store) store$kind == .mk_codes$store[["dense"]]

store_dims <- function(store) {
  if (is_dense(store)) return(dim(store$K))
  if (store$kind == .mk_codes$store[["lowrank"]])
    return(c(if (is.null(store$Gz)) nrow(store$G) else nrow(store$Gz), nrow(store$G),
             length(store$goff) - 1L))
    c(if (is.null(store$z)) nrow(store$x) else nrow(store$z), nrow(store$x),
      length(store$ktype))
}

# The kernel table of a resolved kernel set as the integer / double vectors C reads.
kernel_table <- function(rk, which = NULL) {
  tab <- if (is.null(which)) rk$table else rk$table[which, , drop = FALSE]
  list(gstart = rk$gstart, gfeat = rk$gfeat, kgroup = as.integer(tab$group - 1L),
       ktype = unname(.mk_codes$kernel[tab$type]), kpar1 = as.double(tab$par1),
       kpar2 = as.double(tab$par2), norm = .mk_codes$norm[[rk$normalize]],
       jitter = as.double(rk$jitter))
}

# A fly training store for the kernels of rk on x; computes the training normalisation
# (one pass over each kernel, nothing stored but O(n M)).
fly_store <- function(rk, x, nthreads = 0L) {
  refuse_custom(rk, "mkl_control(store = \"fly\")")   # computed in R: dense only
  st <- structure(c(list(kind = .mk_codes$store[["fly"]], x = x, z = NULL,
                        nthreads = as.integer(nthreads)),
                    kernel_table(rk)), class = "mk_store")
  stats <- .Call(C_store_stats, st)
  stop_nonfinite(rk, which(!is.finite(stats$diag_mean)), "the training data")
  st$scale <- stats$scale
  st$colmeans <- stats$colmeans
  st$grandmean <- stats$grandmean
  st$diag_mean <- stats$diag_mean
  st
}

# A fly store of the raw (unnormalised) kernels `which` of rk (NULL: all) on x, rows z (NULL:
# the training rows): what the factorisation, its test rows and kernel comparisons read.
raw_fly_store <- function(rk, x, z = NULL, which = NULL, nthreads = 0L) {
  st <- structure(c(list(kind = .mk_codes$store[["fly"]], x = x, z = z,
                         nthreads = as.integer(nthreads)), kernel_table(rk, which)),
                  class = "mk_store")
  st$norm <- .mk_codes$norm[["none"]]
  st
}

# A test store: rows z against the training data x of a fitted model, kernels `which` only,
# with the training normalisation of those kernels.
test_store <- function(rk, x, z, stats, which, nthreads = 0L) {
  if (any(rk$table$type[which] == "custom"))    # computed in R: a dense store (R/custom.R)
    return(custom_test_store(rk, x, z, stats, which, nthreads))
  structure(c(list(kind = .mk_codes$store[["fly"]], x = x, z = z,
                   nthreads = as.integer(nthreads)),
              kernel_table(rk, which),
              list(scale = as.double(stats$scale[which]),
                   colmeans = if (is.null(stats$colmeans)) NULL else
                     stats$colmeans[, which, drop = FALSE],
                   grandmean = if (is.null(stats$grandmean)) NULL else
                     as.double(stats$grandmean[which]))), class = "mk_store")
}

# A low-rank store from factors: G a list of n x r_m matrices, one per kernel, with K_m = G_m G_m'
# (normalised); Gz the matching test factors (nr x r_m), or NULL for a training store.
lowrank_store <- function(G, jitter = 0, Gz = NULL, nthreads = 0L) {
  goff <- c(0L, cumsum(vapply(G, ncol, 1L)))
  Gm <- matrix(unlist(G, use.names = FALSE), nrow(G[[1L]]))
  storage.mode(Gm) <- "double"
  Zm <- if (is.null(Gz)) NULL else matrix(as.double(unlist(Gz, use.names = FALSE)), nrow(Gz[[1L]]))
  diag_mean <- vapply(G, function(g) mean(rowSums(g^2)), 1) + jitter
  structure(list(kind = .mk_codes$store[["lowrank"]], G = Gm, goff = as.integer(goff),
                 jitter = as.double(jitter), Gz = Zm, nthreads = as.integer(nthreads),
                 diag_mean = diag_mean), class = "mk_store")
}

# A low-rank training store for the kernels of rk on x: each kernel factored by pivoted
# incomplete Cholesky (src/store_lowrank_chol.c) to the relative residual-trace tolerance `tol`
# or `rank` columns, the training normalisation applied to the factors. `factors` keeps what
# predict() needs (pivots, pivot rows, column means, scales) and the approximation per kernel:
# rank and error, the residual trace of the raw kernel relative to its trace.
lowrank_train <- function(rk, x, tol, rank, nthreads = 0L) {
  check_chisq_data(rk, x, seq_len(nrow(rk$table)))
  fst <- structure(c(list(kind = .mk_codes$store[["fly"]], x = x, z = NULL,
                          nthreads = as.integer(nthreads)), kernel_table(rk)),
                   class = "mk_store")
  f <- .Call(C_store_lowrank, fst, as.double(tol), as.integer(rank))
  st <- structure(list(kind = .mk_codes$store[["lowrank"]], G = f$G, goff = f$goff,
                       jitter = as.double(rk$jitter), Gz = NULL, nthreads = as.integer(nthreads)),
                  class = "mk_store")
  st$diag_mean <- .Call(C_store_stats, st)$diag_mean
  bad <- which(!is.finite(f$scale) | !is.finite(f$trace) | !is.finite(st$diag_mean))
  stop_nonfinite(rk, bad, "the training data")
  st$scale <- f$scale
  f$G <- NULL
  st$factors <- c(f, list(rank = as.integer(diff(f$goff)),
                          error = ifelse(f$trace > 0, pmax(f$resid, 0) / f$trace, 0),
                          tol = as.double(tol), cap = as.integer(min(rank, nrow(x)))))
  names(st$factors$rank) <- names(st$factors$error) <- rk$labels
  st
}

# The pieces of a factorisation for kernels `which` (pivots, pivot rows, column means, scales).
lowrank_subset <- function(f, which) {
  cols <- unlist(lapply(which, function(m) seq_len(f$rank[[m]]) + f$goff[m]), use.names = FALSE)
  lp <- c(0, cumsum(as.double(f$rank)^2))
  lpi <- unlist(lapply(which, function(m) seq_len(f$rank[[m]]^2) + lp[m]), use.names = FALSE)
  list(piv = f$piv[cols], goff = c(0L, cumsum(as.integer(f$rank[which]))), Lp = f$Lp[lpi],
       lbar = f$lbar[cols], scale = f$scale[which])
}

# The low-rank approximation a fit carries (fit$lowrank): per kernel its rank and error (the
# residual trace of the raw kernel relative to its trace), the tolerance and cap, what predict()
# needs, and beta = G_m' alpha_m of the selected kernels (zero elsewhere), by which new rows
# cost r_m kernel evaluations per kernel (lowrank_decision()).
lowrank_fit <- function(store, alpha, act) {
  f <- store$factors
  beta <- double(length(f$piv))
  if (length(act))
    beta[unlist(lapply(act, function(m) seq_len(f$rank[[m]]) + f$goff[m]))] <-
      .Call(C_store_factor_tmul, store, as.integer(act), alpha_columns(alpha, act))
  c(f[c("rank", "error", "tol", "cap", "piv", "goff", "Lp", "lbar", "scale")],
    list(beta = beta))
}

# Decision values (without b) of new rows z of a fit on the low-rank store, its selected kernels
# `act`: r_m kernel evaluations per row and kernel (src/store_lowrank_chol.c).
lowrank_decision <- function(object, z, act, nthreads = 0L) {
  # raw kernels: the factors carry the normalisation
  st <- raw_fly_store(object$kernel_info, object$x, z, act, nthreads)
  lr <- object$lowrank
  cols <- unlist(lapply(act, function(m) seq_len(lr$rank[[m]]) + lr$goff[m]), use.names = FALSE)
  .Call(C_store_lowrank_test, st, lowrank_subset(lr, act), as.double(lr$beta[cols]))
}

# The test factors Gz (nr x R, kernels `which`) of new rows z from a low-rank training store of
# the kernels rk on x: a low-rank test store (lowrank_store(Gz = )) with the training factors.
lowrank_test_factors <- function(store, rk, x, z, which = seq_len(nrow(rk$table)),
                                 nthreads = 0L) {
  st <- raw_fly_store(rk, x, z, which, nthreads)
  .Call(C_store_lowrank_test, st, lowrank_subset(store$factors, which), NULL)
}

# One line on a low-rank approximation (print, summary, the message of store = "auto").
lowrank_line <- function(lr) {
  r <- range(lr$rank)
  sprintf(paste0("low-rank kernels (pivoted Cholesky): rank %s%s, total %d; relative residual ",
                 "trace at most %s"),
          r[1L], if (r[2L] > r[1L]) paste0("-", r[2L]) else "", sum(lr$rank),
          format(signif(max(lr$error), 2)))
}

# While `expr` runs, the training arrays of at least `min_bytes` built in C share one block:
# the garbage collector runs before each that the block does not hold, and the array it frees
# is kept for the next one that fits (the pool of src/store_call.c; the fresh pages of the 18
# arrays of a cv.mkl() search on Vehicle, 0.3-0.7 GB each, took about a tenth of its time:
# inst/notes/NOTES-model.md). Smaller arrays are zeroed faster than a garbage collection
# (about 40 ms) and keep R's allocator. Nested calls use the outer pool. Afterwards
# `.store_pool$counts` holds the arrays built in the pool and those that reused its block.
.store_pool <- new.env(parent = emptyenv())
.store_pool$on <- FALSE
.store_pool$counts <- c(built = 0L, reused = 0L)
.store_pool_min <- 2^26

with_store_pool <- function(expr, min_bytes = .store_pool_min) {
  if (.store_pool$on) return(expr)
  .Call(C_store_pool, TRUE, as.double(min_bytes))
  .store_pool$on <- TRUE
  on.exit({
    .store_pool$counts <- stats::setNames(.Call(C_store_pool, FALSE, 0), c("built", "reused"))
    .store_pool$on <- FALSE
  })
  expr
}

# A dense training store for the kernels of rk on x (gram + normalisation in C).
dense_store <- function(rk, x, nthreads = 0L) {
  tr <- build_train(rk, x, NULL, nthreads, limit = Inf)   # the budget was checked by mkl()
  structure(list(kind = .mk_codes$store[["dense"]], K = tr$K, nthreads = as.integer(nthreads),
                 scale = tr$scale, colmeans = tr$colmeans, grandmean = tr$grandmean),
            class = "mk_store")
}

# Decision values sum_j K_{idx[j]} alpha[, j] (no bias) through the store. Non-finite values
# are an error naming the kernel(s) responsible when the kernel table `rk` is given (found
# kernel by kernel, which costs nothing on the normal path). `idx` indexes the store's kernels;
# `labels_idx` the same kernels in rk's table.
store_decision <- function(store, alpha, idx, rk = NULL, labels_idx = idx, where = "the data") {
  if (is_outer_alpha(alpha)) {
    # factored coefficients (MWUMKL): materialised by blocks of kernels, 2^22 values at most
    per <- max(1L, as.integer(2^22 %/% max(1L, length(alpha$u))))
    f <- 0
    for (k0 in seq(1L, length(idx), by = per)) {
      ks <- k0:min(length(idx), k0 + per - 1L)
      f <- f + store_decision(store, alpha[, ks, drop = FALSE], idx[ks], rk, labels_idx[ks], where)
    }
    return(f)
  }
  f <- .Call(C_store_decision, store, as.integer(idx), alpha)
  if (all(is.finite(f))) return(f)
  bad <- which(vapply(seq_along(idx), function(k)
    !all(is.finite(.Call(C_store_decision, store, as.integer(idx[k]), alpha[, k, drop = FALSE]))),
    logical(1)))
  if (!is.null(rk) && length(bad)) stop_nonfinite(rk, labels_idx[bad], where)
  stop(sprintf("the decision values are not finite (NaN or Inf) on %s: kernel(s) %s", where,
               paste(if (length(bad)) idx[bad] else "?", collapse = ", ")), call. = FALSE)
}

# The mean diagonal of the training kernels (the average over kernels): the scale on which
# 'C' is converted (R/cscale.R). Dense: the diagonals read in C; fly: the training statistics.
kernel_scale <- function(store) {
  # a fold's store (subset_store()) has no diag_mean of its own rows: computed here
  if (is_dense(store) || is.null(store$diag_mean))
    return(mean(.Call(C_store_stats, store)$diag_mean))
  mean(store$diag_mean)
}

# An upper bound on each kernel's rank, cheap to compute before any kernel is: at most the
# distinct values of its feature for a kernel on one feature (one-hot columns: 2), p for a
# linear kernel on p features, choose(p + d, d) for a polynomial of degree d; n otherwise. With
# it the memory check counts a low-rank factor at the smaller of the bound and the rank cap,
# instead of the cap (lowrank_ranks(), R/memory.R). Without a tolerance (lowrank_tol = 0) the
# factorisation may go on past the rank on rounding: no bound then.
lowrank_rank_bound <- function(rk, x, tol) {
  n <- nrow(x)
  if (is.null(tol) || !(tol > 0)) return(rep(as.double(n), nrow(rk$table)))
  feats <- lapply(seq_len(length(rk$gstart) - 1L), group_features, rk = rk)
  nfeat <- lengths(feats)
  distinct <- vapply(feats, function(f) if (length(f) == 1L)
    as.double(length(unique(x[, f]))) else as.double(n), 0)
  g <- rk$table$group
  p <- nfeat[g]
  type <- rk$table$type
  b <- ifelse(type == "linear", p, n)
  poly <- type == "poly"
  b[poly] <- choose(p[poly] + rk$table$par1[poly], rk$table$par1[poly])
  b <- pmin(b, distinct[g], n)
  b[is.na(b)] <- n
  b
}

# The store backend, chosen before anything is allocated: the requested store, or with "auto"
# the dense array when the whole fit (array and solver buffers, memory_parts() in R/memory.R)
# fits the budget mkl_control(memory = ), otherwise the low-rank store for the methods that
# scale on it (registry field lowrank), otherwise on the fly where the method supports it;
# when none fits, an error naming the need, the budget and the remedies. `pair`: the rows of
# the largest one-vs-one problem (its dense store is a copy of the pair's rows), or NULL.
# `rank_bound`: a function giving lowrank_rank_bound(), called only once a low-rank need is asked
# (it reads every single-feature column of x: not when the dense store fits).
choose_store <- function(ctl, method, n, M, task = "classification", loss = NULL, pair = NULL,
                         weighted = FALSE, rank_bound = NULL) {
  e <- method_info(method)
  fly_ok <- "fly" %in% e$stores
  lr_ok <- "lowrank" %in% e$stores && !weighted
  # (the low-rank solvers have one box C for every point: case weights need another store)
  if (weighted && ctl$store == "lowrank")
    stop(paste0("case weights ('weights', 'class.weights') are not supported on the low-rank ",
                "store: use store = \"dense\" or \"fly\""), call. = FALSE)
  if (ctl$store == "fly" && !fly_ok)
    stop(sprintf("method '%s' cannot compute kernels on the fly", method), call. = FALSE)
  if (ctl$store == "lowrank" && !lr_ok)
    stop(sprintf("method '%s' does not run on the low-rank store (store = \"lowrank\"): %s",
                 method, e$no_lowrank), call. = FALSE)
  cand <- if (ctl$store != "auto") ctl$store else if (e$store_default == "fly") "fly" else
    c("dense", if (lr_ok && isTRUE(e$lowrank)) "lowrank", if (fly_ok) "fly")
  nt <- memory_threads(ctl$nthreads)
  bound <- function(ctl) {
    if (is.function(rank_bound) && is.null(ctl$rank_bound)) ctl$rank_bound <- rank_bound()
    ctl
  }
  need <- numeric()
  for (s in cand) {   # in order of preference: the first that fits, the later ones not costed
    if (s == "lowrank") ctl <- bound(ctl)
    need[s] <- store_need(ctl, method, n, M, s, nt, task, loss, pair)
    if (need[s] <= ctl$memory) return(s)
  }
  # the stores the method may use that were not tried (a store asked for; low rank when "auto"
  # does not pick it for this method) are remedies
  others <- setdiff(c("dense", if (lr_ok) "lowrank", if (fly_ok) "fly"), cand)
  if ("lowrank" %in% others) ctl <- bound(ctl)
  stop(memory_message(ctl, method, n, M, cand[which.min(need)], nt, task, loss, pair, others),
       call. = FALSE)
}

# Bytes of a fit on store s with nt threads (and the one-vs-one copy of a dense store).
store_need <- function(ctl, method, n, M, s, nt, task, loss, pair = NULL,
                       parts = memory_parts(method, n, M, s, nt, ctl, task, loss)) {
  sum(parts$bytes) + if (s == "dense" && !is.null(pair)) 8 * as.double(pair)^2 * M else 0
}

# The error when no store fits: the need with its largest parts, the budget, and the remedies
# with what each needs (`others`: the stores not tried that the method may use).
memory_message <- function(ctl, method, n, M, s, nt, task, loss, pair, others) {
  parts <- memory_parts(method, n, M, s, nt, ctl, task, loss)
  need <- store_need(ctl, method, n, M, s, nt, task, loss, pair, parts)
  top <- utils::head(parts[order(-parts$bytes), ], 3L)
  needs <- function(what, b) sprintf("%s (needs %s)", what, format_bytes(b))
  rem <- character()
  # custom kernels (computed in R) have the dense store only: the built-in kernels are the remedy
  custom <- isTRUE(ctl$custom_kernels)
  if (custom) rem <- c(rem, paste0("kernels mklearn computes itself (rbf_kernel(), ",
                                   "linear_kernel(), ...: the on-the-fly and low-rank stores)"))
  if (!custom && length(others)) {
    # those that need less, the smallest first
    b <- vapply(others, function(o) store_need(ctl, method, n, M, o, nt, task, loss, pair), 0)
    for (o in others[order(b)][sort(b) < need])
      rem <- c(rem, needs(sprintf("mkl_control(store = \"%s\")", o), b[[o]]))
  }
  if (nt > 1L) {
    b1 <- store_need(ctl, method, n, M, s, 1L, task, loss, pair)
    if (b1 < 0.99 * need) rem <- c(rem, needs("mkl_control(nthreads = 1)", b1))
  }
  if (any(parts$kind == "platt")) {   # probabilities without the folds' copy of the store
    ctl$platt <- "train"
    rem <- c(rem, needs("mkl_control(platt = \"train\")", store_need(ctl, method, n, M, s, nt,
                                                                      task, loss, pair)))
  }
  if (method != "mwu") {
    mc <- method_control("mwu", NULL)
    mc$xcols <- ctl$xcols   # the columns of x, as the fit's own need counts them
    mw <- store_need(mc, "mwu", n, M, if (custom) "dense" else "fly", nt, task, NULL)
    if (!custom) rem <- c(rem, needs("method = \"mwu\" (MWUMKL, O(nM) memory)", mw))
    else if (mw < need)
      rem <- c(rem, needs("method = \"mwu\" (MWUMKL, on the dense store)", mw))
  }
  rem <- c(rem, sprintf("a larger budget, mkl_control(memory = %.3g) or more", need))
  sprintf(paste0("method '%s' needs %s at n = %d and M = %d (%s store, %d thread%s: %s), above ",
                 "the memory budget of %s (mkl_control(memory = ), default half the machine's ",
                 "memory). Remedies: %s."),
          method, format_bytes(need), as.integer(n), as.integer(M),
          c(dense = "dense", fly = "on-the-fly", lowrank = "low-rank")[[s]], nt,
          if (nt > 1L) "s" else "",
          paste(sprintf("%s %s", top$part, vapply(top$bytes, format_bytes, "")), collapse = ", "),
          format_bytes(ctl$memory), paste(rem, collapse = "; "))
}

# The neighbour checks read up to .neighbour_cols columns of a kernel; on the low-rank store the
# squares off the diagonal are summed over .neighbour_rows rows, or over every row below
# .neighbour_exact neighbours (lowrank_combined_neighbours(); memory_r_heap() counts them).
.neighbour_cols <- 200L
.neighbour_rows <- 1000L
.neighbour_exact <- 50

# The effective number of neighbours of a training point under each kernel `which`:
# the mean over (up to `cols`, evenly spaced) columns j of sum_i K_ij^2 / K_jj^2. It is 1 for
# the identity and n for a constant kernel; a kernel near 1 memorises its training points
# (a Gaussian much narrower than the distances between them). Reads `cols` columns of each
# kernel through the store: O(n cols length(which)).
kernel_neighbours <- function(store, which = seq_len(store_dims(store)[3L]),
                              cols = .neighbour_cols) {
  n <- store_dims(store)[2L]
  if (!length(which)) return(double(0))
  js <- spread_rows(n, cols)
  if (store$kind == .mk_codes$store[["lowrank"]]) return(lowrank_neighbours(store, which, js))
  # per column j: sum_i K[i, j]^2 / K[j, j]^2, NA where K[j, j] <= 0, averaged over the columns
  # (src/kstats.c, in C: no n x M matrix per column left to R's collector)
  .Call(C_store_neighbours, store, as.integer(which), as.integer(js), NULL)
}

# kernel_neighbours() on a low-rank store without its kernel columns: each kernel as a
# combination of one (lowrank_combined_neighbours()), O(rows r_m) per column instead of the
# exact O(n r_m^2) per kernel (most of a fit's time at n = 10^5: NOTES-store.md).
lowrank_neighbours <- function(store, which, js) {
  vapply(which, function(m) lowrank_combined_neighbours(store, m, 1, js), 0)
}

# Up to k of the rows 1..n, evenly spread (the columns the neighbour checks and norms read).
spread_rows <- function(n, k) unique(round(seq(1, n, length.out = min(n, k))))

# The columns of kernel m in a low-rank store's factors G (goff[m] + 1 .. goff[m + 1]).
factor_cols <- function(store, m) {
  seq.int(store$goff[m] + 1L, length.out = store$goff[m + 1L] - store$goff[m])
}

# The effective neighbours per training point of the combination sum_m w_m K_m of kernels
# `which`: kernel_neighbours() of that one kernel, on the same columns.
combined_neighbours <- function(store, which, w, cols = .neighbour_cols) {
  n <- store_dims(store)[2L]
  js <- spread_rows(n, cols)
  if (store$kind == .mk_codes$store[["lowrank"]])
    return(lowrank_combined_neighbours(store, which, w, js))
  .Call(C_store_neighbours, store, as.integer(which), as.integer(js), as.double(w))
}

# combined_neighbours() on a low-rank store from its factors: column j of the combination is
# sum_m w_m (G_m g_mj + jitter e_j); the squares off the diagonal are summed over `rows` evenly
# spread rows and scaled to the n - 1, O(rows R) per column instead of O(n R). Below
# .neighbour_exact neighbours, where a few close rows carry the sum and the sample misses them
# (NOTES-store.md), they are summed over every row, a block of `rows` rows at a time.
lowrank_combined_neighbours <- function(store, which, w, js, rows = .neighbour_rows) {
  n <- nrow(store$G)
  dj <- double(length(js))
  for (k in seq_along(which))
    dj <- dj + w[k] * (rowSums(store$G[js, factor_cols(store, which[k]), drop = FALSE]^2) +
                         store$jitter)
  nb <- function(off) mean(ifelse(dj > 0, (dj^2 + off) / dj^2, NA_real_))
  is <- spread_rows(n, rows)
  est <- nb(lowrank_offdiag(store, which, w, js, is) * (n - 1) / (length(is) - (js %in% is)))
  if (length(is) == n || is.na(est) || est >= .neighbour_exact) return(est)
  nb(lowrank_offdiag(store, which, w, js, NULL, rows))
}

# The squares of the combination's entries (rows `is`, NULL: every row; columns `js`) summed per
# column, the diagonal entry left out, over blocks of `bs` rows of `is` added in order. In C
# (src/kstats.c, the same bits as the former R code): a few hundred rows of scratch instead of
# R's garbage of n (r + 3 cols) doubles per kernel, which stayed resident as R's collection
# trigger grows with the factors (NOTES-store.md, "The table at 10,000 and 20,000 again").
lowrank_offdiag <- function(store, which, w, js, is, bs = length(is)) {
  .Call(C_store_offdiag, store, as.integer(which), as.double(w), as.integer(js),
        if (is.null(is)) NULL else as.integer(is), as.integer(bs))
}
