# The memory a fit needs (R/memory.R) and mkl()'s check of it against the budget before it
# allocates (choose_store, R/store.R). Only the arithmetic is asserted here; measured peaks are
# in inst/notes/NOTES-store.md (inst/benchmarks/bench-memory.R).

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
  expect_identical(row("hessian", "dense")$buffers, 3 * nn)
  expect_identical(row("lp", "dense")$buffers, nn)
  # MKL-L0/1: its combined kernel, and the uniform combination of its start (R)
  expect_identical(mkl_memory(n, M, "l01", "fly")$buffers, 2 * nn)
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
  expect_lt(row("mwu", "fly")$total, 8 * n * (4 * M + 20) + 8 * 1024 * (M + 2))
  # totals add the parts; threads multiply the per-thread part only
  expect_equal(mm$total, mm$kernels + mm$buffers + mm$per_thread + mm$linear)
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
  # kernel ridge copies the combined kernel; MWUMKL's refit needs it
  expect_identical(mkl_memory(n, 4, "uniform", "fly", task = "regression")$buffers, 2 * nn)
  expect_identical(mkl_memory(n, 4, "uniform", "fly")$buffers, nn)
  expect_identical(mkl_memory(n, 4, "mwu", "fly", control = mkl_control(refit = TRUE))$buffers,
                   nn)
  expect_output(print(mkl_memory(n, 4, "mwu")), "budget.*\n.*method.*total")
})

test_that("mkl_memory refuses arguments it cannot count", {
  expect_error(mkl_memory(-1, 3), "'n' must be one positive whole number")
  expect_error(mkl_memory(10, 2.5), "'M' must be one positive whole number")
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
  t0 <- proc.time()[["elapsed"]]
  expect_error(mkl(d$x, d$y, kernels = ks, method = "simple",
                   control = mkl_control(memory = 1e6, nthreads = 1)),
               paste0("method 'simple' needs 35.1 MB at n = 3000 and M = 3 \\(low-rank store, ",
                      "1 thread: low-rank factors.*above the memory budget of 1 MB.*",
                      "Remedies:.*method = \"mwu\".*mkl_control\\(memory = 3.51e\\+07\\)"))
  expect_lt(proc.time()[["elapsed"]] - t0, 1)
  need <- mkl_memory(3000, 3, "simple", "fly", nthreads = 1)$total
  expect_equal(need, 2.89e8, tolerance = 0.01)
  # a store that was asked for: the other stores that need less are remedies, smallest first
  expect_error(mkl(d$x, d$y, kernels = ks, method = "spicy",
                   control = mkl_control(memory = 1e6, nthreads = 1, store = "dense")),
               paste0("needs .* \\(dense store.*Remedies: mkl_control\\(store = \"lowrank\"\\) ",
                      "\\(needs 26.2 MB\\); mkl_control\\(store = \"fly\"\\) \\(needs 169 MB"))
  # and a store that needs more is none
  expect_error(mkl(d$x, d$y, kernels = ks, method = "simple",
                   control = mkl_control(memory = 1e6, nthreads = 1, store = "fly")),
               paste0("on-the-fly store.*Remedies: mkl_control\\(store = \"lowrank\"\\) ",
                      "\\(needs [^;]*; method"))
  # cross-validation stops the same way
  expect_error(cv.mkl(d$x, d$y, kernels = ks, method = "hessian", C = c(10, 1), nfolds = 2,
                      control = mkl_control(memory = 1e6, nthreads = 1)),
               "method 'hessian' needs .* above the memory budget")
  skip_if(mklearn:::max_threads() < 2L)
  # threads: MWUMKL's blocks of kernel columns per thread
  one <- mkl_memory(3000, 3, "mwu", "fly", nthreads = 1)$total
  two <- mkl_memory(3000, 3, "mwu", "fly", nthreads = 2)$total
  expect_error(mkl(d$x, d$y, kernels = ks, method = "mwu",
                   control = mkl_control(memory = (one + two) / 2, nthreads = 2)),
               sprintf("2 threads.*Remedies:.*mkl_control\\(nthreads = 1\\) \\(needs %s\\)",
                       mklearn:::format_bytes(one)))
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
