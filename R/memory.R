# The memory a fit allocates: the kernel store plus each solver's own buffers, by the same
# arithmetic as the allocations in src/ (the C lines are named beside each part), so that mkl()
# can check a fit against mkl_control(memory = ) before it allocates anything.
# Measured peaks beside these numbers: inst/notes/NOTES-store.md.

#' Memory a fit needs
#'
#' States the peak memory of each method for `n` observations and `M` kernels, for a kernel
#' store and a thread count: the kernel store (the n x n x M array, or O(nM) statistics on the
#' fly), each solver's n x n buffers, its buffers per thread (on the fly, O(n) each: kernel
#' columns computed a few at a time) and its O(nM) parts. [mkl()],
#' [cv.mkl()] and multiclass fits compare this number with `mkl_control(memory = )` before they
#' allocate anything: with `store = "auto"` they pick the dense array when the fit fits the
#' budget, else the low-rank store (for the methods registered as scaling on it), else the
#' on-the-fly store, and stop with a message naming the need, the budget and the remedies when
#' none fits.
#'
#' The numbers are what the solvers allocate (an upper bound: buffers that a fit uses only in
#' some iterations are counted whole), plus the fit's coefficients and what the R front end
#' allocates around the solver (column `front`); the R process and the data come on top. A
#' classification fit whose probabilities are calibrated by cross-validation
#' (`mkl_control(platt = "cv")`, the default) then fits each of five folds on a copy of the
#' store's training rows: that copy and the fold fit's buffers are counted on top of the fit's
#' own (R frees the fit's scratch only at its next garbage collection).
#'
#' @param n number of observations.
#' @param M number of kernels.
#' @param method methods (see [mkl_methods()]); default all.
#' @param store among `"dense"`, `"fly"` and `"lowrank"` (the low-rank store at its rank cap,
#'   `mkl_control(rank = )`; methods that do not run on it are left out).
#' @param nthreads threads of the fit (default: `control`'s, else all processors).
#' @param control settings as given to [mkl()] (`mkl_control()`); they matter where a setting
#'   changes the buffers (SpicyMKL's tuning, SimpleMKL's gradient screening, MWUMKL's refit).
#' @param task `"classification"` or `"regression"`.
#' @param loss the loss (default: each method's default for the task).
#' @param p the columns of `x` (the R front end's copies of the data; default `M`).
#' @return A data frame of class `"mkl_memory"`, one row per method and store: `method`,
#'   `store`, `threads`, `kernels` (the store), `buffers` (the solver's n x n buffers), `cache`
#'   (on the fly, the bounded kernel-column cache of the SVMs, MKL-L0/1 and kernel ridge, and
#'   the summed columns of K(d) of MKL-L0/1 and kernel ridge: what the budget leaves after the
#'   rest of the fit, at most the n x n x M kernels, at least 4 points' columns),
#'   `per_thread` (all threads' buffers), `linear` (O(nM) and O(n) parts, and the neighbour
#'   checks' scratch, on the low-rank store R's garbage until its next collection), `platt` (the
#'   cross-validation of the probabilities: the fold's store and its fit), `front` (the R
#'   front end: its copies of `x`, its n x M matrices and vectors of n, per fit and per fold of
#'   the probabilities, R's garbage until its next collection, counted whole), `total`, all in
#'   bytes, and `fits` (whether `total` is
#'   within the budget, attribute `budget`). Attribute `parts`: the named buffers of each row.
#' @examples
#' mkl_memory(20000, 10, method = c("spicy", "simple", "mwu"), nthreads = 1)
#' @export
mkl_memory <- function(n, M, method = NULL, store = c("dense", "fly"), nthreads = NULL,
                       control = NULL, task = c("classification", "regression"), loss = NULL,
                       p = M) {
  task <- match.arg(task)
  for (a in c("n", "M", "p")) {
    v <- get(a)
    if (!is.numeric(v) || length(v) != 1L || is.na(v) || v < 1 || v != round(v))
      stop(sprintf("'%s' must be one positive whole number", a), call. = FALSE)
  }
  if (is.null(method)) method <- names(.mkl_registry)
  bad <- setdiff(method, names(.mkl_registry))
  if (length(bad)) stop(sprintf("'method' must be among %s (not %s)",
                                paste(names(.mkl_registry), collapse = ", "),
                                paste(bad, collapse = ", ")), call. = FALSE)
  if (!is.character(store) || !length(store) || !all(store %in% c("dense", "fly", "lowrank")))
    stop("'store' must be among \"dense\", \"fly\" and \"lowrank\"", call. = FALSE)
  if (is.null(nthreads)) nthreads <- control[["nthreads"]]
  nt <- memory_threads(check_threads(nthreads))
  rows <- list(); parts <- list()
  for (m in method) for (s in store) {
    if (s == "lowrank" && !"lowrank" %in% method_info(m)$stores) next
    ctl <- method_control(m, control)
    ctl$xcols <- p
    pt <- memory_parts(m, n, M, s, nt, ctl, task, loss)
    sums <- vapply(c("kernels", "buffers", "cache", "per_thread", "linear", "platt", "front"),
                   function(k) sum(pt$bytes[pt$kind == k]), 0)
    rows[[length(rows) + 1L]] <- data.frame(method = m, store = s, threads = nt,
                                            t(sums), total = sum(pt$bytes))
    parts[[length(parts) + 1L]] <- pt
  }
  out <- do.call(rbind, rows)
  budget <- if (is.null(control[["memory"]])) default_memory() else control[["memory"]]
  out$fits <- out$total <= budget
  names(parts) <- paste(out$method, out$store)
  structure(out, budget = budget, parts = parts, n = n, M = M,
            class = c("mkl_memory", "data.frame"))
}

#' @export
print.mkl_memory <- function(x, ...) {
  # a subset (x[, cols]) keeps the class but not the attributes: printed as the data frame it is
  if (is.null(attr(x, "budget"))) return(invisible(print(as.data.frame(unclass(x)), ...)))
  cat(sprintf("Memory of a fit: n = %s, M = %s, budget %s (mkl_control(memory = ))\n",
              format(attr(x, "n"), big.mark = ","), format(attr(x, "M")),
              format_bytes(attr(x, "budget"))))
  d <- as.data.frame(unclass(x))[c("method", "store", "threads", "kernels", "buffers", "cache",
                                   "per_thread", "linear", "platt", "front", "total", "fits")]
  for (k in c("kernels", "buffers", "cache", "per_thread", "linear", "platt", "front", "total"))
    d[[k]] <- vapply(d[[k]], format_bytes, "")
  print(d, row.names = FALSE, right = TRUE)
  invisible(x)
}

# The threads the solvers run on for a requested count (mk_threads in src/utils.c).
memory_threads <- function(nthreads) max(1L, as.integer(.Call(C_threads, as.integer(nthreads))))

# The buffers of one fit: a data frame of part, bytes and kind ("kernels": the store,
# "buffers": n x n, "cache": the column cache on the fly (attribute kcache: its entries),
# "per_thread", "linear": O(nM) and O(n), "platt": the cross-validation of
# the probabilities, "front": the R front end, memory_front()). `ctl$xcols`: the columns of x
# (default M). `ctl`: method_control() settings. `R`: the total rank (columns of the
# factors) of a low-rank store (default: M times the rank cap, as memory_lowrank() counts the
# factors). `fold`: the solver's parts only (a fold fit of memory_platt(), on a given store).
memory_parts <- function(method, n, M, store, nt, ctl, task = "classification", loss = NULL,
                         R = NULL, fold = FALSE) {
  n <- as.double(n); M <- as.double(M); nn <- n * n
  ranks <- lowrank_ranks(n, M, ctl)
  if (store == "lowrank" && is.null(R)) R <- sum(ranks)
  fly <- store != "dense"   # the low-rank store serves the generic paths column by column
  if (is.null(loss)) loss <- ctl[["loss"]]
  if (is.null(loss)) loss <- method_info(method)$losses[[task]][1L]
  parts <- list()
  add <- function(part, doubles, kind) parts[[length(parts) + 1L]] <<-
    data.frame(part = part, bytes = 8 * doubles, kind = kind)
  if (fold) NULL else if (store == "lowrank") memory_lowrank(add, n, ranks, nt) else if (fly)
    add("training statistics (n x M column means)", n * M, "kernels") else
    add("kernel array (n x n x M)", nn * M, "kernels")
  add("coefficients (n x M) and result", 2 * n * M, "linear")
  fam <- method_info(method)$control
  if (!fold) memory_r_heap(add, n, M, store, R, max(ranks), if (fam != "l01") 0 else
    M + 2 * min(M, l01_select_count(ctl[["select"]], M)))
  # R: the columns of all low-rank factors, at the rank cap unless given (NA: not low rank)
  if (store != "lowrank") R <- NA_real_
  switch(fam,
    uniform = memory_uniform(add, n, task, M, R, store == "fly", nt),
    spicy = if (store == "lowrank") memory_spicy_lowrank(add, n, M, R, nt, ctl) else
      memory_spicy(add, n, M, fly, nt, ctl, loss),
    svmfam = memory_svmfam(add, method, n, M, fly, nt, ctl, R),
    bayes = if (store == "lowrank") memory_bayes_lowrank(add, n, M, R) else {
      # src/bayes.c: A, and a column per thread on the fly
      add("posterior matrix A (n x n)", nn, "buffers")
      if (fly) add("kernel column per thread", nt * n, "per_thread")
      add("vectors, and the inverse's blocked sweep (src/bayes_inv.c)",
          4 * n + 4 * M + 64 * n + 64^2, "linear")
    },
    l01 = {     # src/l01.c: the combined kernel Kd, G (n x M), H (M x M); R/l01.R: the start's
      # uniform combination, which R frees only at its next garbage collection. Low rank
      # (src/l01_lowrank.c): no n x n; Woodbury's G'G and factor (R x R each). On the fly
      # (l01_work_init; src/kcache.c, kc_pass_alloc): the column cache and K(d)'s combined
      # columns (added below, with CG's K_m p when some columns are not combined), the cache's
      # diagonals, index and distances, the passes' range sums and each thread's scratch (a
      # point's columns and distances); Kd for the Cholesky w-step only
      # "auto" as fit_l01() resolves it, from the bound R on the total rank (the kernels let
      # in may have less: then Woodbury may run where this counted CG, by at most 2 x 50 n
      # doubles, small beside the factors)
      chol <- identical(l01_wstep(ctl[["wstep"]], store == "lowrank", R, n), "chol")
      if (store == "lowrank") {
        if (chol) add("G'G and its factor (R x R)", 2 * R * R, "linear")
      } else if (fly) {
        if (chol) add("combined kernel and its Cholesky factor (n x n)", nn, "buffers")
        memory_kcache_scratch(add, n, M, nt)
        memory_kcache_ranges(add, n, M)   # G's passes, every iteration
        # a fold fit's split is not known here: its K_m p counted whenever CG runs
        if (fold && !chol) add(.kdop_products_part, 2 * n * M, "linear")
      } else {
        add("uniform combination for the start (n x n, R)", nn, "buffers")
        add("combined kernel (n x n)", nn, "buffers")
      }
      add("kernel products G (n x M), H (M x M)", n * M + M * M, "linear")
      add("vectors", 20 * n + 8 * M, "linear")
    },
    mwu = memory_mwu(add, n, M, nt, ctl),
    stop(sprintf("internal: no memory arithmetic for method '%s'", method), call. = FALSE))
  platt <- !fold && task == "classification" && !identical(ctl[["platt"]], "train") &&
    loss != "logistic" &&
    !platt_rank_rows(store == "lowrank", n, R)
  if (platt) memory_platt(add, method, n, M, store, nt, ctl, task, loss, R)
  if (!fold) memory_front(add, n, M, if (is.null(ctl[["xcols"]])) M else ctl[["xcols"]],
                          if (platt) platt_folds_run(n) else 0)
  k <- 0; nc <- 0
  if (!fold && store == "fly" && uses_kcache(method)) {
    rest <- function() sum(vapply(parts, function(p) p$bytes, 0))   # the fit beside the caches
    if (uses_kcols(fam, task, ctl)) {
      passed <- fam == "uniform"
      kk <- kcols_split(n, M, ctl, rest(), platt, passed)
      if (kk[2L] < n) {   # the passes over the points without a summed column of K(d)
        add(.kdop_products_part, 2 * n * M, "linear")
        # kernel ridge: its only passes (MKL-L0/1 counts its own above)
        if (passed) memory_kcache_ranges(add, n, M)
        kk <- kcols_split(n, M, ctl, rest(), platt, passed)
      }
      k <- kk[1L]; nc <- kk[2L]
      add(sprintf("summed columns of K(d) (%s points, src/kcache.c)", format(nc)), nc * n,
          "cache")
      if (platt) add("Platt fold fit: its summed columns (as many)", nc * n, "platt")
    } else k <- kcache_entries(n, M, ctl, rest(), platt)
    add(sprintf("column cache (%s entries of n x M, src/kcache.c)", format(k)), k * n * M,
        "cache")
    if (platt) add("Platt fold fit: its column cache (as many entries)", k * n * M, "platt")
  }
  structure(do.call(rbind, parts), kcache = k, kcols = nc)
}

.kdop_products_part <- "CG: products K_m p (2 n x M) for the points whose K(d) column is not summed"

# The R front end around the solver (mkl(), check_x(), standardize_x(), new_mkl() and its
# checks, platt_cv_values(), the fit_*() functions): R's garbage until its next collection,
# counted whole since R's trigger grows with the live heap. Per fit: check_x()'s finite
# check (n p), the standardisation's column means and its copy (2 n p), the checks' n x M
# (diagonals, the outer alpha as a matrix) and at most .front_vectors vectors of n; per fold
# of the probabilities (`folds`): the fold's rows of x (0.8 n p), its coefficients padded to
# n rows and read as a matrix (2 n x M) and at most .front_fold_vectors vectors of n. The
# vector counts bound what Rprofmem counts (test-memory.R); R's allocations that do not grow
# with n (code loaded on first use, about 5 MB) are the R process's, not counted
# (NOTES-store.md, "R front end").
.front_vectors <- 128
.front_fold_vectors <- 64
memory_front <- function(add, n, M, p, folds) {
  add("R front end: copies of x (3 n p), n x M, vectors of n",
      3 * n * p + n * M + .front_vectors * n, "front")
  if (folds > 0)
    add(sprintf("R front end: %d Platt fold(s): rows of x (0.8 n p), 2 n x M, vectors of n",
                as.integer(folds)),
        folds * (0.8 * n * p + 2 * n * M + .front_fold_vectors * n), "front")
}

# The folds platt_cv_values() fits (R/platt.R): until .platt_heldout rows are held out, each
# fold holding out about n / .platt_nfolds (at least floor(n / .platt_nfolds)).
platt_folds_run <- function(n) {
  min(.platt_nfolds, ceiling(.platt_heldout / max(1, floor(n / .platt_nfolds))))
}

# The column cache's scratch beside its entries (src/kcache.c): the kernels' diagonals, index
# and distances, and each thread's columns for the summed columns and the passes
# (kc_pass_alloc); the sums of a pass's ranges of points (memory_kcache_ranges()) where passes
# run (mk_kcache_mv).
memory_kcache_scratch <- function(add, n, M, nt) {
  add("column cache: kernel diagonals (n x M), index and distances (2 n)", n * M + 2 * n,
      "linear")
  add("passes: a point's columns and distances per thread (n x M + n)", nt * (n * M + n),
      "per_thread")
}
# (MK_KCACHE_RANGES fixed ranges, one n x M sum for each of two vectors per range)
memory_kcache_ranges <- function(add, n, M) {
  r <- .mk_codes$limits[["kcache_ranges"]]
  add(sprintf("passes: sums of %d ranges of points (2 n x M each)", r), r * 2 * n * M, "linear")
}

# The fits that read kernels on the fly through the column cache (src/kcache.c): the SVM family,
# the uniform method (its SVM, and kernel ridge by CG) and MKL-L0/1.
uses_kcache <- function(method) {
  method_info(method)$control %in% c("svmfam", "l01", "uniform")
}

# The fits on the fly whose CG products K(d) p read K(d)'s summed columns beside the cache
# (mk_kdop, src/kcache.c): MKL-L0/1's w-step by CG and kernel ridge (uniform, regression).
uses_kcols <- function(fam, task, ctl) {
  (fam == "l01" && !identical(ctl[["wstep"]], "chol")) ||
    (fam == "uniform" && task == "regression")
}

# Entries of the column cache (n x M doubles each; mk_kcache_cap in src/kcache.c): the setting
# kcache when given, else what the budget leaves after the `rest` of the fit (bytes), shared
# with a Platt fold fit's cache when the probabilities are cross-validated (R frees the fit's
# cache only at its next collection); at least 4 entries (all n when fewer), at most n (whole).
kcache_entries <- function(n, M, ctl, rest, platt = FALSE) {
  k <- ctl[["kcache"]]
  if (is.null(k) || is.na(k)) k <- floor(cache_bytes(ctl, rest, platt) / (8 * n * M))
  kcache_cap(n, k)
}

# mk_kcache_cap (src/kcache.c): at least MK_KCACHE_MIN entries (all n when fewer), at most n
kcache_cap <- function(n, k) min(n, max(min(n, .mk_codes$limits[["kcache_min"]]), k))

# Bytes the budget (mkl_control(memory = ), default half the machine) leaves to the caches after
# the `rest` of the fit, halved when a Platt fold fit allocates its own beside them.
cache_bytes <- function(ctl, rest, platt = FALSE) {
  budget <- ctl[["memory"]]
  if (is.null(budget) || is.na(budget)) budget <- default_memory()
  max(0, budget - rest) / (if (platt) 2 else 1)
}

# The share of what the budget leaves after the `rest` of the fit (halved with a Platt fold
# fit's own, as kcache_entries()) for a fit of uses_kcols(): K(d)'s columns summed for CG
# (n doubles each, mk_kdop in src/kcache.c) for as many points as fit beside 4 cache entries,
# then the column cache's entries (n x M doubles each) with the rest, at least 4; `passed`: the
# entries serve only the points the passes read (those beyond the summed columns: kernel ridge,
# whose d is fixed), at most n - columns; the settings kcols and kcache when given.
# c(entries, columns).
kcols_split <- function(n, M, ctl, rest, platt = FALSE, passed = FALSE) {
  avail <- cache_bytes(ctl, rest, platt)
  e <- 8 * n * M
  nc <- ctl[["kcols"]]
  if (is.null(nc) || is.na(nc))
    nc <- floor(max(0, avail - .mk_codes$limits[["kcache_min"]] * e) / (8 * n))
  nc <- min(n, nc)
  k <- ctl[["kcache"]]
  if (is.null(k) || is.na(k)) {
    k <- floor(max(0, avail - 8 * n * nc) / e)
    if (passed) k <- min(k, n - nc)
  }
  c(kcache_cap(n, k), nc)
}

# The cache entries a fit on a fly store allocates (0 when it does not use the cache): the same
# arithmetic as mkl_memory(), for the fit's n and settings (its loss: ctl$loss, set by mkl(),
# else the method's default for the task); attribute kcols: K(d)'s summed columns (uses_kcols()).
fit_kcache <- function(method, store, n, M, ctl, task = "classification") {
  if (store$kind != .mk_codes$store[["fly"]] || !uses_kcache(method))
    return(structure(0L, kcols = 0L))
  p <- memory_parts(method, n, M, "fly", memory_threads(ctl$nthreads), ctl, task)
  structure(as.integer(attr(p, "kcache")), kcols = as.integer(attr(p, "kcols")))
}

# The cross-validation of the probabilities (platt_cv_values(), R/platt.R): per fold, the store
# of its n - floor(n / 5) training rows (subset_store(), R/multiclass.R: the dense array's
# principal submatrix, the factors' rows, or the fly store's column means) and the fold fit's
# own parts, with the held-out decision values and the fold's coefficients on all n rows.
memory_platt <- function(add, method, n, M, store, nt, ctl, task, loss, R) {
  nf <- n - floor(n / .platt_nfolds)
  switch(store,
    dense = add("Platt folds: the fold's kernel array (copy, n_f x n_f x M)", nf * nf * M,
                "platt"),
    lowrank = add("Platt folds: the fold's factor rows (copy, n_f x R)", nf * R, "platt"),
    fly = add("Platt folds: the fold's column means (n_f x M)", nf * M, "platt"))
  fp <- memory_parts(method, nf, M, store, nt, ctl, task, loss, R, fold = TRUE)
  for (i in seq_len(nrow(fp)))
    add(paste("Platt fold fit:", fp$part[i]), fp$bytes[i] / 8, "platt")
  add("Platt folds: coefficients on all rows (n x M), decision values", n * M + 2 * n, "platt")
}

# The neighbour checks (kernel_neighbours(), combined_neighbours(), R/store.R). Dense and on the
# fly, in C (src/kstats.c): the columns of a chunk of kernels (at most MK_NB_CHUNK doubles, at
# least one column) and the combination. On the low-rank store, garbage until R's next
# collection (its trigger grows with the live heap, the factors: no cap): per kernel checked,
# its factor rows of up to 200 columns and their squares (R), and two calls of the squares off
# the diagonal (lowrank_offdiag(), src/kstats.c: MK_OFFDIAG_ROWS rows of the factor and of the
# combination, the columns' factor rows); every kernel once, a combination of all, and `extra`
# kernels checked again (MKL-L0/1: its near-identity check of every kernel and two collapse
# checks of its free ones). Measured: NOTES-store.md, "R's heap" and "The table at 10,000 and
# 20,000 again".
memory_r_heap <- function(add, n, M, store, R, rmax = R, extra = 0) {
  if (store != "lowrank") {
    chunk <- .mk_codes$limits[["neighbour_chunk"]]
    return(add("neighbour checks: a chunk of kernel columns (at most 2^22 doubles) and one more",
               min(n * M, max(n, chunk)) + n + M, "linear"))
  }
  cols <- min(n, .neighbour_cols)
  sb <- min(n, .mk_codes$limits[["offdiag_rows"]])
  call <- (sb + cols) * rmax + 2 * sb * cols + 4 * cols + .neighbour_rows
  made <- 2 * (2 * cols * R + (M + 1) * call) + extra * (2 * cols * rmax + 2 * call)
  add("R's heap: the neighbour checks' garbage until R's next collection", made, "linear")
}

# The per-thread scratch of a kernel computed for a sweep (mk_store_scratch, src/store.c): whole
# up to MK_KERNEL_WHOLE_MAX doubles (64 MB), else four columns (the sweep computes them by blocks).
kernel_scratch <- function(n) {
  if (n * n <= .mk_codes$limits[["kernel_whole_max"]])
    list(size = n * n, what = "(n x n, small)") else list(size = 4 * n, what = "columns (4 n)")
}

# The columns of each kernel's factor a low-rank store may hold: the rank cap min(n, rank), or
# the kernel's rank bound when smaller (ctl$rank_bound, lowrank_rank_bound() in R/store.R).
lowrank_ranks <- function(n, M, ctl) {
  cap <- min(n, if (is.null(ctl[["rank"]])) .control_common$rank else ctl[["rank"]])
  b <- ctl[["rank_bound"]]
  if (is.null(b) || length(b) != M) rep(cap, M) else pmin(cap, b)
}

# The low-rank store (src/store_lowrank_chol.c) with r_m columns per kernel (`ranks`): the
# factors (resident as far as written), normalised in place and gathered into R's matrix one
# kernel at a time, the pivot rows (r_m x r_m per kernel), the residual diagonals and each
# thread's column.
memory_lowrank <- function(add, n, ranks, nt) {
  add("low-rank factors G (n x r x M), one kernel's twice while gathered",
      n * (sum(ranks) + max(ranks)), "kernels")
  add("pivot rows (r x r x M) and residual diagonals (n x M)",
      sum(ranks^2) + 3 * sum(ranks) + n * length(ranks), "linear")
  add("factorisation column per thread", nt * (n + max(ranks)), "per_thread")
}

# src/uniform.R, uniform.c: the combined kernel; kernel ridge factors a copy of it. On the fly
# neither: the SVM reads K(d) through the column cache, kernel ridge runs CG through it and
# K(d)'s summed columns (memory_parts() adds both, and the passes' parts where they run;
# mkc_kridge_fly: the cache's scratch, CG's stacked vectors of 2n and the results). On the
# low-rank store (R factor columns): the scaled factors of src/lsvm.c and the products K_m v
# (R/uniform.R), or Woodbury's scaled copy and R x R matrix (kridge_lowrank()).
memory_uniform <- function(add, n, task, M = 1, R = NA_real_, fly = FALSE, nt = 1) {
  if (!is.na(R)) {
    if (task == "regression") add("scaled factors (n x R) and R x R Woodbury matrix",
                                  n * R + 2 * R * R + 4 * n, "linear") else
      add("scaled factors F' (R x n, lsvm.c) and the block of the last coordinates",
          n * R + R + lsvm_block(n, R), "linear")
    add("products K_m v (n x M)", n * M, "linear")
    add("vectors", 6 * n, "linear")
    return(invisible())
  }
  if (!fly) add("combined kernel (n x n)", n * n, "buffers")
  if (!fly && task == "regression") add("kernel ridge matrix (n x n)", n * n, "buffers")
  if (fly && task == "classification")
    add("column cache: kernel diagonals (n x M), combined columns", n * M + 3 * n, "linear")
  if (fly && task == "regression") {   # src/uniform.c, kridge_fly(); the passes: memory_parts()
    memory_kcache_scratch(add, n, M, nt)
    add("kernel ridge: CG's vectors and the results (12 n)", 12 * n, "linear")
  }
  add("vectors", 4 * n, "linear")
}

# SpicyMKL (src/spicy_sweep.c, spicy_newton.c, spicy_hinge.c, spicy_gap.c, spicy_screen.c,
# cg.c). Defaults of the knobs: R/tuning.R.
memory_spicy <- function(add, n, M, fly, nt, ctl, loss) {
  nn <- n * n
  tun <- function(k) if (is.null(ctl[[k]])) .spicy_tuning[[k]] else ctl[[k]]
  cg <- tun("cg")
  use_cg <- if (is.na(cg)) n >= tun("cg_threshold") else isTRUE(cg)
  if (fly) {   # src/spicy_sweep.c: mk_store_scratch() per thread each
    ks <- kernel_scratch(n)
    add(sprintf("kernel %s per thread (kbuf)", ks$what), nt * ks$size, "per_thread")
    add("Newton matrix columns per thread (hbuf: 4 n)", nt * 4 * n, "per_thread")
  }
  if (isTRUE(tun("newton_float")) && use_cg && n >= 512) {
    add("Newton matrix (packed single precision)", n * (n + 1) / 4, "buffers")
    add("Newton matrix panels per thread", nt * (48 * n + n / 2), "per_thread")
  } else {
    add("Newton matrix H (n x n)", nn, "buffers")
    if (!use_cg) add("Cholesky factor (n x n)", nn, "buffers")
  }
  cache <- tun("newton_cache")
  if (isTRUE(cache) || (is.na(cache) && use_cg)) add("Newton cache G (n x n)", nn, "buffers")
  if (use_cg) {
    cap <- min(n, max(200, (6 * nn)^(1 / 3)))
    add("CG preconditioner block and deflation", cap * cap + (3 * tun("cg_deflate") + 20) * n,
        "linear")
  }
  if (loss == "hinge") {
    if (tun("box_fraction") > 0) add("box: free block of the Newton matrix (at most n x n)", nn,
                                     "buffers")
    if (isTRUE(tun("svm_dual"))) add("SVM dual point: combined kernel (n x n)", nn, "buffers")
  }
  add("kernel products and screening (5 n x M)", 5 * n * M, "linear")
  add("vectors", 40 * n + 30 * M, "linear")
}

# SpicyMKL on a low-rank store (src/spicy_lowrank.c, sp_newton_alloc): no n x n buffer; the
# factors' squared row norms (n x M), a factor-sized scratch per thread, the CG
# preconditioner's free block with its gathered factor rows (cap x (R + M)), and the Woodbury
# preconditioner's buffers.
memory_spicy_lowrank <- function(add, n, M, R, nt, ctl) {
  tun <- function(k) if (is.null(ctl[[k]])) .spicy_tuning[[k]] else ctl[[k]]
  cap <- min(n, max(200, (6 * n * (R + M))^(1 / 3)))
  add("factor scratch per thread (2 r_max)", nt * 2 * R, "per_thread")
  add("CG preconditioner block, gathered factor rows, deflation",
      cap * cap + cap * (R + M) + (3 * tun("cg_deflate") + 20) * n, "linear")
  add("factor row norms, kernel products and screening (6 n x M)", 6 * n * M, "linear")
  add("vectors", 44 * n + 30 * M, "linear")
  # the Woodbury preconditioner (src/spicy_lowrank.c): capacitance and factor (k x k each,
  # k = R + M + 1), gathered rows (n x (r_max + 1)), the Gram blocks' cache (R x R while at most
  # 2^24 doubles), the row blocks' partial sums, its vectors and the rows' indices
  k <- R + M + 1
  rmax <- min(n, max(lowrank_ranks(n, M, ctl)))
  add("Woodbury preconditioner: capacitance, factor, gathered rows, Gram blocks",
      2 * k * k + n * (rmax + 1) + (if (R * R <= 2^24) R * R + R else 0), "linear")
  add("Woodbury vectors and row blocks' sums", 5.5 * n + (nt + 6) * k, "linear")
}

# Empirical Bayes on a low-rank store (src/bayes_lowrank.c): the Gram matrix of the factors and
# the Woodbury matrices ((R + 1)^2 each) and the scoring system's products, formed from the Gram
# matrix (no n-row vector per kernel or free variance).
memory_bayes_lowrank <- function(add, n, M, R) {
  nv <- min(M, .mk_codes$limits[["eb_scoring_maxvar"]]) + 3   # the scoring system's variables
  add("Gram matrix, Cholesky factor and its inverse (3 (R + 1)^2)", 3 * (R + 1)^2, "linear")
  add("scoring system: products (2 (R + 1) x nv) and matrices (3 nv^2)",
      2 * (R + 1) * nv + 3 * nv^2, "linear")
  add("vectors", 6 * n + 8 * M, "linear")
}

# The most free SVs whose Gram matrix HessianMKL forms (src/hessian.c, hess_gram_dense()): C's
# limit, or the setting hess_free_max when smaller (src/svmfam.c, read_opts())
hess_free_limit <- function(ctl)
  min(.mk_codes$limits[["hess_free_max"]], ctl[["hess_free_max"]], na.rm = TRUE)

# The linear SVM's block of the coordinates left by shrinking (src/lsvm.c, ls_cache): at most
# min(n, R, limit) of them, a square of doubles, three vectors and n positions (as doubles).
lsvm_block <- function(n, R) {
  k <- min(n, R, .mk_codes$limits[["lsvm_cache"]])
  k * k + 3 * k + n / 2
}

# The SVM family (src/svmfam.c, simple.c, hessian.c, lpnorm.c): the combined kernel Kd, the
# line kernels B, KD (strategies with a line search) and KD2 (SimpleMKL's probes) when dense;
# on the fly none of them, the column cache instead (memory_parts() adds it); gradient
# screening (3 n x M, a vector per thread, and on the fly a kernel's scratch per thread in its
# first pass: src/svmfam.c, sf_screen_first).
# On the low-rank store (R factor columns) none of these: O(n R).
memory_svmfam <- function(add, method, n, M, fly, nt, ctl, R = NA_real_) {
  nn <- n * n
  if (!is.na(R)) {   # low rank (src/svmfam_lr.c, lsvm.c): the line is kept as weights
    add("scaled factors F' (R x n, lsvm.c) and the block of the last coordinates",
        n * R + lsvm_block(n, R), "linear")
    if (method == "hessian") {
      # src/svmfam_lr.c, lr_hess_gram(): the free SVs' factor rows F_S (ns x R) and two
      # ns x ns matrices while ns <= R, else F_S by blocks of 4096 rows, Woodbury's R x R and
      # the (M + 1)-sized eigenproblem
      M1 <- M + 1
      add("Hessian: factor rows of the free SVs (blocks of 4096) and their systems",
          max(3 * R * R, min(n, 4096) * R + R * R + 2 * R * M1 + 2 * M1 * M1 + 66 * M1) +
            n * M1, "linear")
      add("Hessian cache (M x min(M, 1000))", M * min(M, 1000), "linear")
    }
    add("vectors", 12 * n + 20 * M + R, "linear")
    return(invisible())
  }
  if (fly) {   # the line as weights (src/svmfam_lr.c), the SMO through the column cache
    add("column cache: kernel diagonals (n x M), combined columns", n * M + 3 * n, "linear")
  } else {
    add("combined kernel Kd (n x n)", nn, "buffers")
    if (method == "simple") add("line search kernels B, KD, KD2 (3 n x n)", 3 * nn, "buffers")
    if (method == "hessian") add("line search kernels B, KD (2 n x n)", 2 * nn, "buffers")
  }
  p <- if (is.null(ctl[["p"]])) 1 else ctl[["p"]]
  if (method == "simple" && !isFALSE(ctl[["gradient_screening"]]) && p <= 1 && M >= 2) {
    add("gradient screening (3 n x M)", 3 * n * M + 16 * n, "linear")
    add("screening vector per thread (first pass)", nt * n, "per_thread")
    if (fly) add(sprintf("kernel %s per thread (first screening pass)", kernel_scratch(n)$what),
                 nt * kernel_scratch(n)$size, "per_thread")
  }
  if (fly) add("kernel column per thread", nt * n, "per_thread")
  if (method == "hessian") {
    # src/hessian.c, hess_gram_dense(): the free SVs' Gram matrix (ns x ns, ns at most C's
    # limit or the smaller setting hess_free_max: above, the step falls back without it), its
    # diagonal, Z (ns x (M + 1))
    hmax <- hess_free_limit(ctl)
    ns <- min(n, hmax)
    add(sprintf("Hessian: Gram matrix of the free SVs (at most %d^2)", hmax), ns * ns, "buffers")
    add("Hessian: Z (free SVs x (M + 1)), a diagonal and a column", ns * (M + 2) + n, "linear")
    add("Hessian cache (M x min(M, 1000))", M * min(M, 1000), "linear")
    # src/hessian.c: dense, Q's columns K_m (y.a) from the certificate's pass (n x M)
    if (!fly) add("Hessian: K_m (y.a) of every kernel (n x M)", n * M, "linear")
  }
  add("vectors", 10 * n + 20 * M, "linear")
}

# MWUMKL (src/mwu.c, store_pair.c): O(nM) state, blocks of rows per thread; the refit's
# combined kernel.
memory_mwu <- function(add, n, M, nt, ctl) {
  B <- if (M <= 32) min(n, 1024) else if (n <= 8192) n else 4096
  add("kernel products G_m alpha (n x M) and feature maps", n * M + 8 * n, "linear")
  add("column blocks per thread", nt * ((M + 2) * B + n), "per_thread")
  if (isTRUE(ctl[["refit"]])) add("refit: combined kernel (n x n)", n * n, "buffers")
  add("vectors", 6 * n + 8 * M, "linear")
}
