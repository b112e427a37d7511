# The memory a fit needs (R/memory.R) and mkl()'s check of it against the budget before it
# allocates (choose_store, R/store.R). Only the arithmetic is asserted here; measured peaks are
# in inst/notes/NOTES-store.md (inst/benchmarks/bench-memory.R).

# The bytes R allocates while evaluating expr (Rprofmem; every vector, R_alloc included).
profmem_bytes <- function(expr) {
  f <- tempfile()
  on.exit(unlink(f))
  invisible(gc())
  utils::Rprofmem(f, threshold = 0)
  force(expr)
  utils::Rprofmem(NULL)
  l <- readLines(f)
  sum(as.double(sub(" ?:.*", "", grep("^[0-9]+ ?:", l, value = TRUE))))
}

# The neighbour checks of every kernel of the store `st` and of their combination (as a fit's
# checks run them): the values of the first and the bytes R allocates for both.
neighbour_bytes <- function(st) {
  M <- store_dims(st)[3L]
  nb <- NULL
  bytes <- profmem_bytes({
    nb <- kernel_neighbours(st)
    combined_neighbours(st, seq_len(M), rep(1 / M, M))
  })
  list(nb = nb, bytes = bytes)
}

test_that("mkl_memory states the store, the n x n buffers and the per-thread buffers", {
  n <- 1000; M <- 7; nn <- 8 * n^2
  mm <- mkl_memory(n, M, c("simple", "hessian", "lp", "spicy", "mwu"), c("dense", "fly"),
                   nthreads = 1)
  expect_s3_class(mm, "mkl_memory")
  expect_identical(nrow(mm), 10L)
  row <- function(m, s) mm[mm$method == m & mm$store == s, ]
  # the store: the whole array, or O(nM) statistics on the fly
  expect_identical(row("simple", "dense")$kernels, nn * M)
  expect_identical(row("simple", "fly")$kernels, 8 * n * M)
  # the SVM family: Kd, and the line kernels B, KD (HessianMKL) and KD2 (SimpleMKL's probes)
  expect_identical(row("simple", "dense")$buffers, 4 * nn)
  # (HessianMKL: and the Gram matrix of its free SVs, at most n of them)
  expect_identical(row("hessian", "dense")$buffers, 4 * nn)
  expect_identical(row("lp", "dense")$buffers, nn)
  # MKL-L0/1: its combined kernel, and the uniform combination of its start (R); none on the fly
  expect_identical(mkl_memory(n, M, "l01", "dense")$buffers, 2 * nn)
  expect_identical(mkl_memory(n, M, "l01", "fly")$buffers, 0)
  # on the fly SimpleMKL's first screening pass and SpicyMKL's sweeps compute a kernel per
  # thread: whole while small (64 MB), else four columns at a time (below); SimpleMKL keeps a
  # vector per thread on any store
  expect_identical(row("simple", "fly")$per_thread, nn + 8 * (n + n))
  expect_identical(row("simple", "dense")$per_thread, 8 * n)
  pt <- attr(mm, "parts")[["spicy fly"]]
  expect_identical(pt$bytes[grepl("^kernel \\(n x n, small\\) per thread", pt$part)], nn)
  # its Newton matrix reads one column of four kernels (hbuf), not four whole kernels
  expect_identical(pt$bytes[grepl("^Newton matrix columns", pt$part)], 8 * 4 * n)
  big <- mkl_memory(4000, M, c("simple", "spicy"), "fly", nthreads = 1)
  expect_identical(big$per_thread[1], 8 * (4 * 4000 + 4000 + 4000))
  pt <- attr(big, "parts")[["spicy fly"]]
  expect_identical(pt$bytes[grepl("^kernel columns \\(4 n\\) per thread", pt$part)], 8 * 4 * 4000)
  expect_false(any(grepl("n x n", pt$part[pt$kind == "per_thread"])))
  expect_lt(big$per_thread[2], 8 * 100 * 4000)
  # MWUMKL keeps O(nM) whatever the store
  expect_identical(row("mwu", "fly")$buffers, 0)
  expect_lt(row("mwu", "fly")$total - row("mwu", "fly")$platt,
            8 * n * (4 * M + 20) + 8 * 1024 * (M + 2) + 8 * 2^23)
  # totals add the parts (the Platt folds' below); threads multiply the per-thread part only
  expect_equal(mm$total, mm$kernels + mm$buffers + mm$cache + mm$per_thread + mm$linear +
                 mm$platt + mm$front)
  skip_if(mklearn:::max_threads() < 2L)
  m2 <- mkl_memory(n, M, "simple", "fly", nthreads = 2)
  expect_identical(m2$threads, 2L)
  expect_identical(m2$per_thread, 2 * row("simple", "fly")$per_thread)
  expect_identical(m2$buffers, row("simple", "fly")$buffers)
})

test_that("mkl_memory follows the settings that change the buffers", {
  n <- 600; nn <- 8 * n^2
  b <- function(...) mkl_memory(n, 4, "spicy", "dense", nthreads = 1, ...)$buffers
  # SpicyMKL: packed single-precision Newton matrix with CG (default), a double one without;
  # the Cholesky solve needs a second n x n matrix; the hinge's box and SVM dual point n x n
  # each; the Newton cache one more
  base <- b()
  expect_equal(base, 8 * n * (n + 1) / 4 + 2 * nn)
  expect_equal(b(control = mkl_control(tuning = spicy_tuning(newton_float = FALSE))),
               nn + 2 * nn)
  expect_equal(b(control = mkl_control(tuning = spicy_tuning(cg = FALSE))), 4 * nn)
  expect_equal(b(control = mkl_control(tuning = spicy_tuning(newton_cache = TRUE))),
               base + nn)
  expect_equal(b(loss = "logistic"), 8 * n * (n + 1) / 4)
  # kernel ridge copies the combined kernel (dense; on the fly CG through the cache instead);
  # MWUMKL's refit needs it
  expect_identical(mkl_memory(n, 4, "uniform", "dense", task = "regression")$buffers, 2 * nn)
  expect_identical(mkl_memory(n, 4, "uniform", "fly", task = "regression")$buffers, 0)
  expect_gt(mkl_memory(n, 4, "uniform", "fly", task = "regression")$cache, 0)
  # classification on the fly: the column cache instead of the combined kernel
  expect_identical(mkl_memory(n, 4, "uniform", "fly")$buffers, 0)
  expect_identical(mkl_memory(n, 4, "uniform", "dense")$buffers, nn)
  expect_identical(mkl_memory(n, 4, "mwu", "fly", control = mkl_control(refit = TRUE))$buffers,
                   nn)
  expect_output(print(mkl_memory(n, 4, "mwu")), "budget.*\n.*method.*total")
  expect_output(print(mkl_memory(n, 4, c("mwu", "uniform"))[, c("method", "total")]),
                "method +total")   # a subset, without the attributes
})

test_that("mkl_memory refuses arguments it cannot count", {
  expect_error(mkl_memory(-1, 3), "'n' must be one positive whole number")
  expect_error(mkl_memory(10, 2.5), "'M' must be one positive whole number")
  expect_error(mkl_memory(10, 2, p = 0), "'p' must be one positive whole number")
  expect_error(mkl_memory(10, 3, method = "svm"), "'method' must be among .*not svm")
  expect_error(mkl_memory(10, 3, store = "disk"),
               "'store' must be among \"dense\", \"fly\" and \"lowrank\"")
})

test_that("mkl() picks the store whose whole fit fits the budget, before allocating", {
  d <- two_class(n = 200, p = 3)
  ks <- kernel_set(rbf_kernel(c(0.5, 1, 2)))
  mm <- mkl_memory(200, 3, "simple", c("dense", "fly"), nthreads = 1)
  # the array alone fits, the array with SimpleMKL's four n x n buffers does not: on the fly
  budget <- mean(mm$total)
  expect_lt(mm$kernels[1], budget)
  f <- mkl(d$x, d$y, kernels = ks, method = "simple",
           control = mkl_control(memory = budget, nthreads = 1))
  expect_identical(f$store, "fly")
  f <- mkl(d$x, d$y, kernels = ks, method = "simple",
           control = mkl_control(memory = max(mm$total), nthreads = 1))
  expect_identical(f$store, "dense")
})

test_that("a fit above the budget stops at once naming the need, the budget and the remedies", {
  d <- two_class(n = 3000, p = 3)
  ks <- kernel_set(rbf_kernel(c(0.5, 1, 2)))
  # "at once": before any kernel or buffer of the fit is allocated (R's heap, testthat's capture
  # of the error included, grows by less than half of one n x n matrix, 72 MB here)
  used0 <- sum(gc(reset = TRUE)[, 2])
  expect_error(mkl(d$x, d$y, kernels = ks, method = "simple",
                   control = mkl_control(memory = 1e6, nthreads = 1)),
               paste0("method 'simple' needs 61.3 MB at n = 3000 and M = 3 \\(on-the-fly store, ",
                      "1 thread: Platt fold fit.*above the memory budget of 1 MB.*",
                      "Remedies:.*method = \"mwu\".*mkl_control\\(memory = 6.13e\\+07\\)"))
  expect_lt(sum(gc()[, 6]) - used0, 36)
  need <- mkl_memory(3000, 3, "simple", "fly", nthreads = 1)$total
  expect_equal(need, 4.93e8, tolerance = 0.01)
  # a store that was asked for: the other stores that need less are remedies, smallest first
  expect_error(mkl(d$x, d$y, kernels = ks, method = "spicy",
                   control = mkl_control(memory = 1e6, nthreads = 1, store = "dense")),
               paste0("needs .* \\(dense store.*Remedies: mkl_control\\(store = \"lowrank\"\\) ",
                      "\\(needs 92.6 MB\\); mkl_control\\(store = \"fly\"\\) \\(needs 336 MB"))
  # and a store that needs more is none
  expect_error(mkl(d$x, d$y, kernels = ks, method = "simple",
                   control = mkl_control(memory = 1e6, nthreads = 1, store = "fly")),
               paste0("on-the-fly store.*Remedies: mkl_control\\(platt = \"train\"\\) ",
                      "\\(needs [^;]*; method"))
  # without the folds of the probabilities' cross-validation
  ctl <- method_control("simple", mkl_control(nthreads = 1, platt = "train"))
  expect_error(mkl(d$x, d$y, kernels = ks, method = "simple",
                   control = mkl_control(memory = 1e6, nthreads = 1, store = "dense")),
               sprintf("mkl_control\\(platt = \"train\"\\) \\(needs %s\\)",
                       format_bytes(store_need(ctl, "simple", 3000, 3, "dense", 1L,
                                               "classification", NULL))))
  # cross-validation stops the same way
  expect_error(cv.mkl(d$x, d$y, kernels = ks, method = "hessian", C = c(10, 1), nfolds = 2,
                      control = mkl_control(memory = 1e6, nthreads = 1)),
               "method 'hessian' needs .* above the memory budget")
  skip_if(mklearn:::max_threads() < 2L)
  # threads: SimpleMKL's kernel per thread in its first screening pass on the fly (the least
  # need: the column cache at its 4 entries, as under a budget of 1 MB)
  least <- function(nt, memory = 1e6)
    mkl_memory(3000, 3, "simple", "fly", nthreads = nt, control = mkl_control(memory = memory))
  budget <- (least(1)$total + least(2)$total) / 2
  expect_identical(attr(least(2), "parts")[[1]]$bytes[
    grepl("^column cache \\(4 entries", attr(least(2), "parts")[[1]]$part)], 8 * 4 * 3000 * 3)
  expect_error(mkl(d$x, d$y, kernels = ks, method = "simple",
                   control = mkl_control(memory = budget, nthreads = 2, store = "fly")),
               sprintf("2 threads.*Remedies:.*mkl_control\\(nthreads = 1\\) \\(needs %s\\)",
                       mklearn:::format_bytes(least(1, budget)$total)))
})

test_that("custom kernels above the budget are offered the remedies they can use", {
  d <- two_class(n = 300, p = 3)
  cosine <- function(x, z) sum(x * z) / sqrt(sum(x^2) * sum(z^2))
  ks <- kernel_set(cosine, rbf_kernel(1))
  # custom kernels have the dense store only: no other store, no MWUMKL on the fly
  msg <- tryCatch(mkl(d$x, d$y, kernels = ks, method = "simple",
                      control = mkl_control(memory = 1e5, nthreads = 1)),
                  error = conditionMessage)
  expect_match(msg, paste0("needs .* \\(dense store.*Remedies: kernels mklearn computes ",
                           "itself \\(rbf_kernel\\(\\).*mkl_control\\(memory = "))
  expect_no_match(msg, "store = \"fly\"|O\\(nM\\) memory")
  # MWUMKL on the dense store is a remedy when it needs less
  msg <- tryCatch(mkl(d$x, d$y, kernels = ks, method = "simple",
                      control = mkl_control(memory = 3.2e6, nthreads = 1)),
                  error = conditionMessage)
  expect_match(msg, "method = \"mwu\" \\(MWUMKL, on the dense store\\) \\(needs")
})

test_that("a one-vs-one fit on a dense store counts the copy of its largest pair", {
  ctl <- method_control("simple", mkl_control(nthreads = 1))
  a <- store_need(ctl, "simple", 300, 4, "dense", 1L, "classification", NULL)
  b <- store_need(ctl, "simple", 300, 4, "dense", 1L, "classification", NULL, pair = 180)
  expect_identical(b - a, 8 * 180^2 * 4)
  expect_identical(store_need(ctl, "simple", 300, 4, "fly", 1L, "classification", NULL,
                              pair = 180),
                   store_need(ctl, "simple", 300, 4, "fly", 1L, "classification", NULL))
})

test_that("the cross-validation of the probabilities counts its fold's store and fold fit", {
  d <- two_class(n = 203, p = 3)
  ks <- kernel_set(rbf_kernel(c(0.5, 2)))
  ctl <- mkl_control(nthreads = 1, store = "lowrank", rank = 20)
  f <- mkl(d$x, d$y, kernels = ks, method = "uniform", control = ctl)
  expect_identical(f$platt_method, "cv")
  # the largest training part of the folds platt_cv_values() makes
  foldid <- make_folds(d$y, .platt_nfolds, TRUE)
  nf <- 203 - min(table(foldid))
  expect_identical(nf, 203 - floor(203 / 5))
  rk <- resolve_kernels(ks, 3, colnames(d$x))
  st <- lowrank_train(rk, d$x, 1e-3, 20L)
  R <- ncol(st$G)
  fold <- subset_store(st, which(foldid != 1L))
  p <- memory_parts("uniform", 203, 2, "lowrank", 1L, method_control("uniform", ctl), R = R)
  part <- function(p, pat) p$bytes[grepl(pat, p$part)]
  # the fold's factor rows: a copy of nf rows of G
  expect_identical(part(p, "^Platt folds: the fold's factor rows"), 8 * length(fold$G))
  expect_identical(part(p, "^Platt folds: the fold's factor rows"), 8 * nf * R)
  # the fold fit's scaled factors (src/lsvm.c, nf x R) beside the fit's own (n x R), each with
  # the block of at most min(n, R) coordinates
  expect_identical(part(p, "^Platt fold fit: scaled factors"),
                   8 * (nf * R + R + lsvm_block(nf, R)))
  expect_identical(part(p, "^scaled factors"), 8 * (203 * R + R + lsvm_block(203, R)))
  expect_identical(lsvm_block(203, R), min(203, R)^2 + 3 * min(203, R) + 203 / 2)
  expect_identical(part(p, "^low-rank factors"), 8 * 203 * 20 * 3)   # at the cap, + one kernel
  # the fold fit's parts are the solver's parts at nf rows, without a store of its own
  fp <- memory_parts("uniform", nf, 2, "lowrank", 1L, method_control("uniform", ctl), R = R,
                     fold = TRUE)
  expect_false(any(fp$kind == "kernels"))
  expect_identical(sum(p$bytes[p$kind == "platt"]),
                   sum(fp$bytes) + 8 * nf * R + 8 * (203 * 2 + 2 * 203))
  # the dense store's fold is a copy of its principal submatrix
  ds <- dense_store(rk, d$x)
  pd <- memory_parts("simple", 203, 2, "dense", 1L, method_control("simple", NULL))
  expect_identical(part(pd, "^Platt folds: the fold's kernel array"),
                   8 * length(subset_store(ds, which(foldid != 1L))$K))
  expect_identical(part(pd, "^Platt fold fit: combined kernel"), 8 * nf^2)
  # and mkl_memory() reports the phase in its own column, inside the total
  mm <- mkl_memory(203, 2, c("simple", "uniform"), c("dense", "lowrank"), nthreads = 1,
                   control = ctl)
  expect_equal(mm$total, mm$kernels + mm$buffers + mm$cache + mm$per_thread + mm$linear +
                 mm$platt + mm$front)
  expect_true(all(mm$platt > 0))
})

test_that("fits without a cross-validation of the probabilities count none", {
  none <- function(...) mkl_memory(500, 3, c("uniform", "spicy", "simple"), "fly",
                                   nthreads = 1, ...)$platt
  expect_identical(none(task = "regression"), c(0, 0, 0))
  expect_identical(none(control = mkl_control(platt = "train")), c(0, 0, 0))
  expect_identical(mkl_memory(500, 3, "spicy", "fly", nthreads = 1, loss = "logistic")$platt, 0)
  expect_true(all(none() > 0))
})

test_that("every fit counts its neighbour checks (R's garbage on the low-rank store), its folds not again", {
  # dense and on the fly the checks run in C (src/kstats.c): a chunk of kernel columns (at most
  # 2^22 doubles) and the combination. On the low-rank store, R's garbage until its next
  # collection, uncapped (R's trigger grows with the factors): per kernel checked its factor
  # rows of 200 columns and their squares, and two calls of lowrank_offdiag() (128 rows of the
  # factor and of the combination, the columns' factor rows); every kernel once and their
  # combination, MKL-L0/1 every kernel and twice its free ones again (NOTES-store.md)
  part <- function(s) if (s == "lowrank") "^R's heap" else "^neighbour checks"
  for (s in c("dense", "fly", "lowrank")) for (m in c("uniform", "spicy", "l01", "mwu")) {
    if (s == "lowrank" && m == "mwu") next
    p <- memory_parts(m, 500, 3, s, 1L, method_control(m, NULL))
    heap <- p$bytes[grepl(part(s), p$part)]
    call <- (128 + 200) * 200 + 2 * 128 * 200 + 4 * 200 + 1000
    made <- if (s != "lowrank") 500 * 3 + 500 + 3 else
      2 * (2 * 200 * 600 + 4 * call) + (if (m == "l01") 9 else 0) * (2 * 200 * 200 + 2 * call)
    expect_identical(heap, 8 * made, label = paste(m, s))
    big <- memory_parts(m, 20000, 300, s, 1L, method_control(m, NULL))
    call <- (128 + 200) * 200 + 2 * 128 * 200 + 4 * 200 + 1000
    # l01 on 300 kernels: 300 near-identity checks and twice its 10 free kernels again
    made <- if (s != "lowrank") 2^22 + 20000 + 300 else
      2 * (2 * 200 * 60000 + 301 * call) + (if (m == "l01") 320 else 0) * (2 * 200 * 200 + 2 * call)
    expect_identical(big$bytes[grepl(part(s), big$part)], 8 * made, label = paste(m, s))
    expect_identical(p$kind[grepl(part(s), p$part)], "linear")
    fp <- memory_parts(m, 400, 3, s, 1L, method_control(m, NULL), R = 30, fold = TRUE)
    expect_false(any(grepl(part(s), fp$part)), label = paste(m, s, "fold"))
  }
})

test_that("the low-rank neighbour checks allocate no more than the garbage counted for them", {
  # R collects its garbage at a trigger that grows with the live heap (the factors), so what
  # the checks allocate stays resident until then: at n = 6000 the narrow kernels' sums over
  # every row allocated 1.4e7 doubles in R (above the 2^23 counted); now their scratch in C
  skip_if_not(capabilities("profmem"))
  set.seed(7)
  n <- 6000L
  x <- matrix(rnorm(n * 3), n)
  rk <- mklearn:::resolve_kernels(kernel_set(rbf_kernel(c(0.01, 0.015, 0.02))), 3, NULL)
  st <- mklearn:::lowrank_train(rk, x, 1e-3, 200L, 1L)
  ranks <- diff(st$goff)
  nbb <- neighbour_bytes(st)
  nb <- nbb$nb
  bytes <- nbb$bytes
  expect_true(all(nb < mklearn:::.neighbour_exact))   # each summed over every row
  expect_gt(bytes, 0)
  ctl <- method_control("uniform", list(rank = 200L))
  p <- memory_parts("uniform", n, 3, "lowrank", 1L, ctl, R = sum(ranks))
  expect_lte(bytes, p$bytes[grepl("^R's heap", p$part)])
})

test_that("the kernels' diagonals off the dense array read the diagonal, not a column per point", {
  # kernel_diagonals() (the degenerate-fit check) took row j of column j for every j: n^2
  # kernel values per kernel and their garbage until R's collection (MWUMKL 0.04-0.06 GB above
  # its prediction at n = 10,000 and 20,000); now n values each, the same bits
  skip_if_not(capabilities("profmem"))
  set.seed(9)
  n <- 1500L
  x <- matrix(rnorm(n * 3), n)
  rk <- mklearn:::resolve_kernels(kernel_set(rbf_kernel(c(0.1, 1)), poly_kernel(2)), 3, NULL)
  stores <- list(fly = mklearn:::fly_store(rk, x, nthreads = 1L),
                 lowrank = mklearn:::lowrank_train(rk, x, 1e-4, 80L, 1L))
  for (s in names(stores)) {
    st <- stores[[s]]
    bytes <- profmem_bytes(D <- kernel_diagonals(st, c(1L, 3L), 1e-8))
    expect_lte(bytes, 8 * 4 * n * 2, label = s)
    cols <- vapply(c(1L, 3L), function(m) vapply(seq_len(n), function(j)
      .Call(mklearn:::C_store_cols, st, m, j)[j, 1L], 0), numeric(n))
    expect_identical(D, cols - 1e-8, label = s)
  }
})

test_that("HessianMKL on the low-rank store counts the larger of its two Gram paths", {
  # src/svmfam_lr.c, lr_hess_gram(): ns free SVs; ns <= R forms two ns x ns matrices beside
  # F_S (ns x R), more free SVs go through Woodbury's R x R matrix with F_S in blocks of rows
  hess <- function(n, R, M) {
    p <- memory_parts("hessian", n, M, "lowrank", 1L, method_control("hessian", NULL), R = R,
                      fold = TRUE)
    p$bytes[grepl("^Hessian: factor rows", p$part)] / 8
  }
  M1 <- 11
  direct <- function(ns, R) ns * R + 2 * ns^2 + ns * M1
  woodbury <- function(ns, R) min(ns, 4096) * R + ns * M1 + R^2 + 2 * R * M1 + 2 * M1^2 +
    66 * M1
  for (R in c(50, 400)) {
    n <- 1000
    expect_gte(hess(n, R, 10), max(direct(min(n, R), R), woodbury(n, R)))
    expect_identical(hess(n, R, 10), max(3 * R^2, woodbury(n, R) - n * M1) + n * M1)
  }
  # below the bound of n R + 3 R^2 counted before; at n = 10^6 the blocks, not n R
  expect_lt(hess(20000, 2000, 10), 20000 * 2000 + 3 * 2000^2)
  expect_identical(hess(1e6, 500, 10), 4096 * 500 + 500^2 + 2 * 500 * M1 + 2 * M1^2 + 66 * M1 +
                     1e6 * M1)
})

test_that("on the fly the SVMs keep no n x n buffer: a column cache sized by the budget", {
  n <- 20000; M <- 10; e <- 8 * n * M   # bytes of one cache entry (a point's M columns)
  mm <- mkl_memory(n, M, c("uniform", "simple", "hessian", "lp"), "fly", nthreads = 1,
                   control = mkl_control(memory = 4e9))
  # (HessianMKL's Gram matrix of its free SVs, 4096 of them at most, apart)
  expect_identical(mm$buffers, c(0, 0, 8 * 4096^2, 0))
  # the cache takes what the budget leaves, halved with a Platt fold fit's own cache
  for (i in 1:4) {
    p <- attr(mm, "parts")[[i]]
    k <- attr(p, "kcache")
    rest <- sum(p$bytes[!grepl("column cache \\(|its column cache", p$part)])
    expect_identical(k, floor((4e9 - rest) / 2 / e), label = mm$method[i])
    expect_identical(mm$cache[i], k * e)
    expect_lte(mm$total[i], 4e9)
    expect_gt(mm$total[i], 4e9 - 2 * e)
  }
  # without the folds all of it; whole (n entries) at most; at least 4 entries
  one <- mkl_memory(n, M, "simple", "fly", nthreads = 1,
                    control = mkl_control(memory = 4e9, platt = "train"))
  expect_gt(one$cache, 4e9 - one$total + one$cache - e)
  expect_identical(mkl_memory(500, 3, "simple", "fly", nthreads = 1)$cache, 8 * 500^2 * 3)
  expect_identical(mkl_memory(n, M, "simple", "fly", nthreads = 1,
                              control = mkl_control(memory = 1e6))$cache, 4 * e)
  # the setting kcache fixes it, and the fit allocates what mkl_memory() counts
  ctl <- method_control("simple", mkl_control(kcache = 7, nthreads = 1))
  expect_identical(attr(memory_parts("simple", n, M, "fly", 1L, ctl), "kcache"), 7)
  st <- list(kind = .mk_codes$store[["fly"]])
  expect_identical(as.integer(fit_kcache("simple", st, n, M, ctl)), 7L)
  expect_identical(as.integer(fit_kcache("simple", list(kind = .mk_codes$store[["dense"]]), n, M,
                                         ctl)), 0L)
})

test_that("MKL-L0/1 on the fly keeps no n x n buffer: its products go through the column cache", {
  n <- 20000; M <- 10; e <- 8 * n * M
  mm <- mkl_memory(n, M, "l01", "fly", nthreads = 1, control = mkl_control(memory = 4e9))
  expect_identical(mm$buffers, 0)
  p <- attr(mm, "parts")[[1L]]
  expect_false(any(grepl("n x n", p$part)))
  # what the budget leaves (halved with the Platt fold fit's own): K(d)'s columns combined for
  # as many points as fit beside 4 cache entries (n doubles each), the cache's entries with the rest
  k <- attr(p, "kcache"); nc <- attr(p, "kcols")
  rest <- sum(p$bytes[!grepl("column cache \\(|its column cache|summed columns", p$part)])
  avail <- (4e9 - rest) / 2
  expect_identical(nc, floor((avail - 4 * e) / (8 * n)))
  expect_lt(nc, n)
  expect_identical(k, 4)
  expect_lte(mm$total, 4e9)
  expect_identical(mm$cache, 8 * n * nc + k * e)
  # at n = 10,000 every column fits (0.8 GB) and the entries take the rest
  p10 <- attr(mkl_memory(10000, M, "l01", "fly", nthreads = 1,
                         control = mkl_control(memory = 4e9)), "parts")[[1L]]
  expect_identical(attr(p10, "kcols"), 10000)
  expect_gt(attr(p10, "kcache"), 1000)
  # what the fit allocates (l01_work_init, src/kcache.c): CG's products K_m p only when some
  # points have no combined column, the passes' 8 ranges of sums and each thread's scratch
  pp <- function(p, what) p$bytes[startsWith(p$part, what)]   # the fit's own, not the fold's
  expect_identical(pp(p, "CG: products K_m p"), 8 * 2 * n * M)
  expect_length(pp(p10, "CG: products K_m p"), 0L)
  expect_identical(pp(p10, "passes: sums of 8 ranges"), 8 * 8 * 2 * 10000 * M)
  for (nt in 1:2) {
    m2 <- mkl_memory(n, M, "l01", "fly", nthreads = nt, control = mkl_control(memory = 4e9))
    expect_identical(m2$per_thread, m2$threads * 8 * (n * M + n))
  }
  # the Cholesky w-step factors K(d): one n x n buffer
  chol <- mkl_memory(n, M, "l01", "fly", nthreads = 1,
                     control = mkl_control(memory = 4e9, wstep = "chol"))
  expect_identical(chol$buffers, 8 * n^2)
  # the fit allocates what mkl_memory() counts; the dense store has no cache
  ctl <- method_control("l01", mkl_control(kcache = 5, kcols = 9, nthreads = 1))
  expect_identical(fit_kcache("l01", list(kind = .mk_codes$store[["fly"]]), n, M, ctl),
                   structure(5L, kcols = 9L))
  expect_identical(as.integer(fit_kcache("l01", list(kind = .mk_codes$store[["dense"]]), n, M,
                                         ctl)), 0L)
})

test_that("HessianMKL counts the Gram matrix of its free SVs, at most 4096 of them", {
  gram <- function(n, s) {
    p <- memory_parts("hessian", n, 10, s, 1L, method_control("hessian", NULL), fold = TRUE)
    p$bytes[grepl("^Hessian: (Gram|Z)", p$part)] / 8
  }
  for (s in c("dense", "fly")) {
    # src/hessian.c, hess_gram_dense(): ns x ns, Z (ns x (M + 1)), the diagonal, a column
    expect_identical(gram(1000, s), c(1000^2, 1000 * 12 + 1000), label = s)
    expect_identical(gram(20000, s), c(4096^2, 4096 * 12 + 20000), label = s)
  }
  expect_length(gram(1000, "lowrank"), 0L)   # lr_hess_gram(): counted at the rank (above)
  # a smaller limit (the internal setting that forces the step without curvature) is counted
  p <- memory_parts("hessian", 1000, 10, "dense", 1L,
                    method_control("hessian", mkl_control(hess_free_max = 50)))
  expect_identical(p$bytes[grepl("^Hessian: Gram", p$part)] / 8, 50^2)
  # the budget check sees it: a dense HessianMKL fit needs one n x n more than lp-norm's Kd
  mm <- mkl_memory(1000, 10, c("hessian", "lp"), "dense", nthreads = 1)
  expect_identical(mm$buffers[1L] - mm$buffers[2L], 8 * 3 * 1000^2)
})

test_that("kernel ridge on the fly keeps no n x n buffer: summed columns and the cache", {
  n <- 20000; M <- 10; e <- 8 * n * M
  for (mem in c(4e9, 2e9)) {
    mm <- mkl_memory(n, M, "uniform", "fly", nthreads = 1, task = "regression",
                     control = mkl_control(memory = mem))
    expect_identical(mm$buffers, 0)
    p <- attr(mm, "parts")[[1L]]
    expect_false(any(grepl("n x n", p$part)))
    # what the budget leaves (no Platt folds in a regression): K(d)'s columns summed for as
    # many points as fit beside 4 cache entries, the entries with the rest, at most one for
    # each point beyond the summed columns
    k <- attr(p, "kcache"); nc <- attr(p, "kcols")
    rest <- sum(p$bytes[!grepl("column cache \\(|summed columns", p$part)])
    avail <- mem - rest
    expect_identical(nc, min(n, floor((avail - 4 * e) / (8 * n))))
    expect_identical(k, max(4, min(n - nc, floor((avail - 8 * n * nc) / e))))
    expect_identical(mm$cache, 8 * n * nc + k * e)
    expect_lte(mm$total, mem)
  }
  # 4 GB hold every summed column (3.2 GB); 2 GB part of them
  expect_identical(attr(attr(mkl_memory(n, M, "uniform", "fly", nthreads = 1, task = "regression",
                                        control = mkl_control(memory = 4e9)), "parts")[[1L]],
                        "kcols"), n)
  # the fit allocates what mkl_memory() counts: the settings fix the sizes
  ctl <- method_control("uniform", mkl_control(kcache = 5, kcols = 9, nthreads = 1))
  st <- list(kind = .mk_codes$store[["fly"]])
  expect_identical(fit_kcache("uniform", st, n, M, ctl, "regression"),
                   structure(5L, kcols = 9L))
  expect_identical(fit_kcache("uniform", st, n, M, ctl, "classification"),
                   structure(5L, kcols = 0L))
  # dense: the combined kernel and the ridge's factor
  expect_identical(mkl_memory(n, M, "uniform", "dense", nthreads = 1, task = "regression")$buffers,
                   2 * 8 * n^2)
})

test_that("the R front end's allocations are within the predicted fit (MWUMKL, whole mkl() call)", {
  # MWUMKL's solver holds O(nM); its measured peak was the R front end's garbage (copies of x,
  # the Platt sigmoid's vectors per Newton step, the neighbour checks' scratch per column), 3-6
  # times its prediction. Everything R allocates in the call is at most the prediction.
  skip_if_not(capabilities("profmem"))
  set.seed(21)
  n <- 3000L
  p <- 20L
  y <- rep(c(-1, 1), length.out = n)
  x <- matrix(rnorm(n * p), n) + y * 2 / sqrt(p)
  ks <- kernel_set(rbf_kernel(2^(-5:4)))
  ctl <- mkl_control(nthreads = 1, store = "fly")
  bytes <- profmem_bytes(fit <- suppressWarnings(mkl(x, y, kernels = ks, method = "mwu",
                                                     control = ctl)))
  expect_identical(fit$platt_method, "cv")
  pred <- mkl_memory(n, 10, "mwu", "fly", nthreads = 1, control = ctl, p = p)
  expect_gt(pred$front, 0)
  expect_lte(bytes, pred$total)
})

test_that("the neighbour checks on the fly allocate one column's scratch, not one per column", {
  skip_if_not(capabilities("profmem"))
  set.seed(22)
  n <- 2000L
  st <- mklearn:::fly_store(mklearn:::resolve_kernels(kernel_set(rbf_kernel(c(0.1, 1, 10))), 3,
                                                      NULL), matrix(rnorm(n * 3), n), 1L)
  neighbour_bytes(st)   # the functions loaded before the count
  nbb <- neighbour_bytes(st)
  nb <- nbb$nb
  bytes <- nbb$bytes
  # per call: a chunk of the kernels' columns, the distance scratch, the combination (2 calls;
  # 200 columns' scratch before, 6.4 MB here)
  expect_lte(bytes, 2 * 8 * (3 * n + 2 * n) + 65536)
  js <- mklearn:::spread_rows(n, mklearn:::.neighbour_cols)
  K1 <- vapply(js, function(j) .Call(mklearn:::C_store_cols, st, 1L, j)[, 1L], numeric(n))
  ref <- mean(vapply(seq_along(js), function(t) sum(K1[, t]^2) / K1[js[t], t]^2, 0))
  expect_equal(nb[1L], ref, tolerance = 1e-14)
})

test_that("Platt's sigmoid and the standardisation in C give the R code's bits", {
  # platt_fit()'s likelihood and derivatives, and standardize_x(), were R vector code
  # (src/front.c): the same formulas, to the bit
  set.seed(23)
  for (k in 1:12) {
    n <- c(7, 300, 4000)[(k %% 3) + 1]
    f <- rnorm(n, sd = c(0.2, 3, 300)[((k %/% 3) %% 3) + 1])
    t <- ifelse(runif(n) < stats::plogis(2 * f), 0.9, 0.1)
    w <- if (k %% 2 == 0) runif(n) else rep(1, n)
    par <- c(runif(1, 0.1, 3), rnorm(1))
    z <- par[1] * f + par[2]
    nll <- sum(w * (-t * stats::plogis(z, log.p = TRUE) - (1 - t) * stats::plogis(-z,
                                                                             log.p = TRUE)))
    p <- stats::plogis(par[1] * f + par[2])
    r <- w * (p - t)
    h <- w * p * (1 - p)
    d <- c(sum(r * f), sum(r), sum(h * f * f), sum(h * f), sum(h))
    wc <- if (k %% 2 == 0) w
    expect_identical(.Call(mklearn:::C_platt_pass, f, t, wc, par, FALSE), nll)
    expect_identical(.Call(mklearn:::C_platt_pass, f, t, wc, par, TRUE), d)
    x <- matrix(rnorm(n * 4, sd = 10^(k - 6)), n, dimnames = list(NULL, letters[1:4])) + k
    s <- mklearn:::standardize_x(x)
    ctr <- colMeans(x)
    sc <- sqrt(colSums(sweep(x, 2L, ctr)^2) / (n - 1))
    expect_identical(s$center, ctr)
    expect_identical(s$scale, sc)
    expect_identical(s$x, sweep(sweep(x, 2L, ctr), 2L, sc, "/"))
  }
})

test_that("Empirical Bayes on a low-rank store is counted without an n-row vector per kernel", {
  # its scoring system comes from the factors' Gram matrix (src/bayes_lowrank.c): past the
  # factors, the solver's need grows by a few vectors of n, not by K_m beta (n x M) or one
  # n-row product per free variance
  ctl <- method_control("bayes", mkl_control(store = "lowrank", platt = "train"))
  solver <- function(n) {
    p <- memory_parts("bayes", n, 30, "lowrank", 1L, ctl, R = 1500)
    sum(p$bytes[grepl("^Gram matrix|^scoring system|^vectors$", p$part)])
  }
  per_row <- (solver(2e5) - solver(1e5)) / 1e5 / 8
  expect_lte(per_row, 10)
  p <- memory_parts("bayes", 1e5, 30, "lowrank", 1L, ctl, R = 1500)
  expect_equal(p$bytes[grepl("^scoring system", p$part)], 8 * (2 * 1501 * 33 + 3 * 33^2))
})
