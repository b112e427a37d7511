# The runtime thread rule (src/utils.c, mk_threads) and the argument checks of R/utils.R.

threads_in <- function(env, requested) {
  # a fresh R process, so that the OpenMP runtime reads the environment at start-up
  rs <- file.path(R.home("bin"), "Rscript")
  code <- sprintf("cat(.Call(mklearn:::C_threads, %dL))", as.integer(requested))
  out <- system2(rs, c("-e", shQuote(code)), stdout = TRUE, stderr = FALSE,
                 env = c(env, sprintf("R_LIBS=%s", paste(.libPaths(), collapse = ":"))))
  as.integer(utils::tail(out, 1L))
}

test_that("the thread count respects OMP_NUM_THREADS, OMP_THREAD_LIMIT and the processors", {
  skip_on_cran()
  skip_if(.Call(mklearn:::C_threads, 2L) < 2L, "built without OpenMP or on one processor")
  expect_identical(threads_in("OMP_NUM_THREADS=1", 0L), 1L)
  expect_identical(threads_in("OMP_THREAD_LIMIT=1", 0L), 1L)
  expect_identical(threads_in("OMP_THREAD_LIMIT=1", 2L), 1L)
  expect_identical(threads_in("OMP_NUM_THREADS=2", 0L), 2L)
  np <- parallel::detectCores(logical = TRUE)
  expect_lte(.Call(mklearn:::C_threads, 1000L), np)
})

test_that("a forked child runs on one thread", {
  skip_on_os("windows")
  skip_if(.Call(mklearn:::C_threads, 2L) < 2L, "built without OpenMP or on one processor")
  child <- parallel::mclapply(1:2, function(i) .Call(mklearn:::C_threads, 2L), mc.cores = 2L)
  expect_identical(unlist(child), c(1L, 1L))
  expect_identical(.Call(mklearn:::C_threads, 2L), 2L)
})

test_that("thread arguments are checked", {
  expect_error(mklearn:::check_threads(-1), "'nthreads' must be one non-negative integer")
  expect_error(mklearn:::check_threads(1.5), "'nthreads'")
  # a valid count is kept, up to the processors available (more: capped, with a message)
  expect_identical(suppressMessages(mklearn:::check_threads(3)),
                   min(3L, mklearn:::max_threads()))
})

test_that("standardisation that overflows is an error naming the column", {
  d <- two_class(30, 3, seed = 10)
  x <- d$x
  x[, "v3"] <- x[, "v3"] * 1e300
  expect_error(mkl(x, d$y, kernels = kernel_set(rbf_kernel(1))), "overflows.*v3")
})

test_that("nthreads is capped at the processors available, with a message", {
  expect_message(ctl <- mkl_control(nthreads = 1000), "processor")
  expect_lte(ctl$nthreads, mklearn:::max_threads())
  expect_message(gram(kernel_set(rbf_kernel(1)), matrix(1:6, 3), nthreads = 1000), "processor")
})
