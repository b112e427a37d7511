# The integer codes that cross the R <-> C boundary, in one table: options on their way to C
# (loss, kernel type, normalisation, SVM-family strategy, store kind) and the codes of results
# (stop reasons, status), and the C sizes the memory arithmetic needs (limits: R/memory.R).
# C defines the same codes once (the enums and limits of src/mklearn.h);
# .Call(C_codes) returns C's table and a test checks that the two agree. Files collated before
# this one read it inside functions only.
.mk_codes <- list(
  loss = c(hinge = 0L, logistic = 1L, squared = 2L, epsilon = 3L),
  kernel = c(linear = 0L, poly = 1L, rbf = 2L, laplace = 3L, chisq = 4L),
  norm = c(none = 0L, trace = 1L, center_trace = 2L),
  svmfam = c(simple = 0L, hessian = 1L, lp = 2L),
  store = c(dense = 0L, fly = 1L, lowrank = 2L),
  svmfam_stop = c(gap = 0L, limit = 1L, stalled = 2L, newton_decrement = 3L),
  bayes_stop = c(fixed_point = 0L, limit = 1L, stalled = 2L, not_pd = 3L),
  bayes_update = c(mackay = 0L, mm = 1L, scoring = 2L),
  mwu_status = c(done = 0L, infeasible = 1L),
  limits = c(kernel_whole_max = 8388608L, kcache_min = 4L, kcache_ranges = 8L,
             hess_free_max = 4096L, neighbour_chunk = 4194304L, offdiag_rows = 128L,
             lsvm_cache = 2048L, eb_scoring_maxvar = 200L)
)

# The name of a result code (e.g. code_name("bayes_stop", 2L) is "stalled").
code_name <- function(table, code) names(.mk_codes[[table]])[match(code, .mk_codes[[table]])]
