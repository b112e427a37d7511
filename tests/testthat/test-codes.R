test_that("R's option codes and limits agree with C's (the enums and sizes of src/mklearn.h)", {
  expect_identical(.Call(mklearn:::C_codes), mklearn:::.mk_codes)
})

test_that("no R file but R/codes.R defines a table of option codes", {
  ns <- asNamespace("mklearn")
  tabs <- unlist(mklearn:::.mk_codes)
  for (nm in setdiff(ls(ns, all.names = TRUE), ".mk_codes")) {
    v <- get(nm, envir = ns)
    if (is.integer(v) && !is.null(names(v)) && length(v) > 1L)
      expect_false(any(names(v) %in% c(names(mklearn:::.mk_codes$loss),
                                       names(mklearn:::.mk_codes$kernel))),
                   label = nm)
  }
  expect_true(length(tabs) > 0L)
})

test_that("result codes are named from the one table", {
  expect_identical(mklearn:::code_name("bayes_stop", 2L), "stalled")
  expect_identical(mklearn:::code_name("svmfam_stop", 3L), "newton_decrement")
  expect_identical(mklearn:::code_name("store", 1L), "fly")
  expect_identical(mklearn:::code_name("mwu_status", 7L), NA_character_)
  expect_true(mklearn:::is_dense(mklearn:::as_store(array(diag(2), c(2, 2, 1)))))
})
