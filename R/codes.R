# The integer codes that options take on their way to C, in one table. C defines the same codes
# once (the enums of src/mklearn.h); .Call(C_codes) returns C's table and a test checks that the
# two agree.
.mk_codes <- list(
  loss = c(hinge = 0L, logistic = 1L, squared = 2L, epsilon = 3L),
  kernel = c(linear = 0L, poly = 1L, rbf = 2L, laplace = 3L, chisq = 4L),
  norm = c(none = 0L, trace = 1L, center_trace = 2L),
  svmfam = c(simple = 0L, hessian = 1L, lp = 2L)
)
