/* Kernel ridge regression with a bias, the regression branch of the uniform method:
 * min_b,beta  C/2 sum_i w_i (y_i - (K beta)_i - b)^2 + 1/2 beta'K beta
 * <=> (K + lambda W^-1) beta = y - b 1, 1'beta = 0, lambda = 1/C (w_i = 1 without case
 * weights; with them the caller passes lambda_i = lambda / w_i, and only rows with w_i > 0). */
#include "mklearn.h"
#include <string.h>

int mk_kridge(const double *K, int n, const double *y, double lambda, double *beta, double *b)
{
    return mk_kridge_w(K, n, y, lambda, NULL, beta, b);
}

int mk_kridge_w(const double *K, int n, const double *y, double lambda, const double *lam,
                double *beta, double *b)
{
    double *A = (double *) R_alloc((size_t) n * n, sizeof(double));
    double *B = (double *) R_alloc((size_t) 2 * n, sizeof(double));
    memcpy(A, K, (size_t) n * n * sizeof(double));
    for (int i = 0; i < n; i++) {
        A[(size_t) i * n + i] += lam ? lam[i] : lambda;
        B[i] = y[i];
        B[n + i] = 1.0;
    }
    int info = mk_chol_solve(A, n, B, 2);
    if (info != 0) return info;
    double s1 = 0.0, s2 = 0.0;
    for (int i = 0; i < n; i++) { s1 += B[i]; s2 += B[n + i]; }
    *b = s1 / s2;
    for (int i = 0; i < n; i++) beta[i] = B[i] - *b * B[n + i];
    return 0;
}

SEXP mkc_kridge(SEXP K, SEXP y, SEXP lambda)
{
    if (!isReal(K) || !isReal(y)) error("'K' and 'y' must be double");
    int n = LENGTH(y);
    if (XLENGTH(K) != (R_xlen_t) n * n) error("dimension mismatch");
    /* lambda: one ridge, or one per point (case weights: lambda / w_i) */
    const double *lv = isReal(lambda) && XLENGTH(lambda) == n && n != 1 ? REAL(lambda) : NULL;
    if (!lv && XLENGTH(lambda) != 1) error("'lambda' must be one number or one per point");
    double lam = lv ? 1.0 : asReal(lambda);
    if (lv) for (int i = 0; i < n; i++) if (!(lv[i] > 0.0) || !R_FINITE(lv[i])) lam = 0.0;
    if (!(lam > 0.0)) error("'lambda' must be positive");
    SEXP beta = PROTECT(allocVector(REALSXP, n));
    double b = 0.0;
    int info = mk_kridge_w(REAL(K), n, REAL(y), lam, lv, REAL(beta), &b);
    if (info != 0) error("kernel ridge system is not positive definite (LAPACK info %d)", info);
    const char *nms[] = {"beta", "b", NULL};
    SEXP out = mk_list_new(nms);
    mk_list_set(out, "beta", beta);
    mk_list_set(out, "b", ScalarReal(b));
    UNPROTECT(2);
    return out;
}
