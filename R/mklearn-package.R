#' mklearn: multiple kernel learning with certified solvers in C
#'
#' Kernel matrices are built in parallel C code from data-independent descriptions
#' ([kernel_set()]); [mkl()] fits a model with one of several solvers and returns an object
#' with print, summary, predict, coef and plot methods. The inner SVM is [svm_smo()].
#'
#' Options: `mklearn.threads` (default thread count, 0 = OpenMP default, capped by
#' `OMP_THREAD_LIMIT`), `mklearn.max_bytes` (largest kernel array allowed, default 4e9).
#' @keywords internal
#' @importFrom stats coef predict deviance fitted formula logLik nobs residuals update weights
#' @importFrom utils head
#' @useDynLib mklearn, .registration = TRUE, .fixes = "C_"
"_PACKAGE"
