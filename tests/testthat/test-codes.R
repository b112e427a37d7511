test_that("R's option codes agree with C's (the enums of src/mklearn.h)", {
  expect_identical(.Call(mklearn:::C_codes), mklearn:::.mk_codes)
})

test_that("the front ends take their codes from the one R table", {
  expect_identical(mklearn:::spicy_loss_codes, mklearn:::.mk_codes$loss)
  expect_identical(mklearn:::.kernel_codes, mklearn:::.mk_codes$kernel)
  expect_identical(mklearn:::.norm_codes, mklearn:::.mk_codes$norm)
})
