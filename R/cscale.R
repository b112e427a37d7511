# One meaning for C. The user's C is the SVM box constant on the scale of kernels with unit
# mean diagonal (the scale of e1071's and kernlab's kernels, on which C = 1 is a useful
# default for every n): larger C, less regularisation, for every method. The solvers work on
# the kernels as stored (unit trace by default, entries of order 1/n); this file is the one
# place where the user's C becomes a solver's constant.
#
# kscale: the mean diagonal of the stored training kernels (kernel_scale(), R/store.R), about
# 1/n for unit-trace kernels.
#
# * Box constants (uniform, simple, hessian, lp; and the ridge constant of uniform
#   regression): the problem on the stored kernels c K is the problem on K with the constant
#   divided by c, so C_solver = C / kscale. For unit-trace kernels C_solver is about C n.
# * SpicyMKL minimises loss + C_spicy sum_m ||f_m||. It solves the SVM-family problem with box
#   constant C_svm = sum_m ||f_m|| / C_spicy (spicy_C_svm()), which
#   depends on the solution, so no fixed map can be exact. With unit-diagonal kernels the
#   block norms of a useful hinge solution sum to the order of sqrt(n), so C_spicy =
#   sqrt(n kscale) / (2 C) makes C act like the SVM box constant (the factor 2 was chosen by
#   bench-defaults.R: inst/notes/NOTES-spicy.md). For unit-trace kernels C_spicy = 1 / (2 C).
#   fit$info$C_svm gives the box constant (on the user's scale) that makes SimpleMKL solve the
#   same problem.
# * l01 converts its own C and penalties with the same kscale (R/l01.R) and receives C / 2: the
#   (0,1) loss charges C for each margin violation where the hinge charges C times the slack
#   (the factor chosen by bench-defaults.R: inst/notes/NOTES-l01.md).
# * MWUMKL's C is the 2-norm soft-margin constant (squared hinge), on the same unit-diagonal
#   scale; it renormalises every kernel to unit trace itself (G_m = Y K_m Y / r_m + I / C_s),
#   so for unit-diagonal kernels (r_m = n) C_s = C n whatever the store's normalisation.
#   C = Inf is the hard margin.
#
# Each conversion (a method's entry names it, R/registry.R): `to` the solver's constant from the
# user's C, `from` its inverse; "none" for a method without C.
.C_scales <- list(
  box = list(to = function(C, kscale, n) C / kscale,
             from = function(C_solver, kscale, n) C_solver * kscale),
  spicy = list(to = function(C, kscale, n) sqrt(n * kscale) / (2 * C),
               from = function(C_solver, kscale, n) sqrt(n * kscale) / (2 * C_solver)),
  l01 = list(to = function(C, kscale, n) C / 2, from = function(C_solver, kscale, n) 2 * C_solver),
  mwu = list(to = function(C, kscale, n) C * n, from = function(C_solver, kscale, n) C_solver / n),
  none = list(to = function(C, kscale, n) C, from = function(C_solver, kscale, n) C_solver)
)

solver_C <- function(method, C, kscale, n) .C_scales[[method_info(method)$C]]$to(C, kscale, n)

# The user's C that gives a solver constant (the inverse of solver_C()).
user_C <- function(method, C_solver, kscale, n)
  .C_scales[[method_info(method)$C]]$from(C_solver, kscale, n)

# The SVM box constant, on the user's scale, of the SVM-family problem that a SpicyMKL
# solution with penalty weight C_spicy also solves (block 1-norm, hinge): C_svm = sum_m
# ||f_m|| / C_spicy on the stored kernels.
spicy_C_svm <- function(sum_norms, C_spicy, kscale) .C_scales$box$from(sum_norms / C_spicy, kscale)
