# The full-scale scripts installed under inst/spicy (their shared common.R)

test_that("MKLEARN_SETTLE=0 skips the untimed kernel build before a timed call", {
  f <- system.file("spicy", "common.R", package = "mklearn")
  skip_if_not(nzchar(f))
  e <- new.env()
  sys.source(f, envir = e)
  old <- Sys.getenv("MKLEARN_SETTLE", NA)
  on.exit(if (is.na(old)) Sys.unsetenv("MKLEARN_SETTLE") else Sys.setenv(MKLEARN_SETTLE = old))
  # not kernels: the build, if attempted, fails
  Sys.setenv(MKLEARN_SETTLE = "0")
  expect_null(e$settle("not kernels", NULL))
  Sys.unsetenv("MKLEARN_SETTLE")
  expect_error(e$settle("not kernels", NULL))
})
