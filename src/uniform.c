/* Kernel ridge regression with a bias, the regression branch of the uniform method:
 * min_b,beta  C/2 sum_i w_i (y_i - (K beta)_i - b)^2 + 1/2 beta'K beta
 * <=> (K + lambda W^-1) beta = y - b 1, 1'beta = 0, lambda = 1/C (w_i = 1 without case
 * weights; with them the caller passes lambda_i = lambda / w_i, and only rows with w_i > 0). */
#include "mklearn.h"
#include <math.h>
#include <string.h>

/* The solutions x = [beta1 beta2] of (K + Lambda) x = [y 1] give b = sum(beta1) / sum(beta2)
   and beta = beta1 - b beta2 (the constraint 1'beta = 0) */
static double kr_bias(int n, const double *x, double *beta)
{
    double s1 = 0.0, s2 = 0.0;
    for (int i = 0; i < n; i++) { s1 += x[i]; s2 += x[n + i]; }
    double b = s1 / s2;
    for (int i = 0; i < n; i++) beta[i] = x[i] - b * x[n + i];
    return b;
}

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
    *b = kr_bias(n, B, beta);
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

/* ------------------------------------------------------------------ on the fly */

/* The same system on the fly, without an n x n buffer: conjugate gradients (cg.c) on the two
 * systems (K(d) + Lambda) [beta1 beta2] = [y 1] stacked as one of order 2n (block diagonal),
 * so that every product reads K(d) once for both vectors (mk_kdop, kcache.c: summed columns,
 * then a pass over the column cache); b and beta as the dense solve's (kr_bias).
 * A row with an infinite ridge (case weight 0) is left out: its row of the operator is the
 * identity and its right-hand sides are 0, so its beta stays exactly 0 and its p is 0 in every
 * product. Design and measurements: NOTES-store.md, "Kernel ridge on the fly". */
typedef struct {
    mk_kdop *op;
    int n;
    const double *lam;   /* n: the ridge of each row (infinite: the row is left out) */
    double tlast;
} kr_ctx;

static void kr_mv(void *ctx, const double *p, double *q)
{
    kr_ctx *c = (kr_ctx *) ctx;
    const int n = c->n;
    mk_interrupt_every(&c->tlast, 0.02);   /* a product is a pass over the kernels */
    mk_kdop_mv(c->op, 2, p, p + n, q, q + n);
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < n; i++) {
            size_t t = (size_t) k * n + i;
            q[t] = R_FINITE(c->lam[i]) ? q[t] + c->lam[i] * p[t] : p[t];
        }
}

/* beta, b and kbeta = K(d) beta; it: CG iterations; returns 1 when CG stopped at its cap
   (*rel: the relative residual reached) */
static int kridge_fly(mk_kdop *op, const double *y, const double *lam, double cg_tol,
                      int cg_maxiter, double *beta, double *b, double *kbeta, int *it,
                      double *rel)
{
    const int n = op->kc->n;
    double *x = (double *) R_alloc(2 * (size_t) n, sizeof(double));
    double *r = (double *) R_alloc(2 * (size_t) n, sizeof(double));
    double *work = (double *) R_alloc(6 * (size_t) n, sizeof(double));
    double bn = 0.0;
    for (int i = 0; i < n; i++) {
        int keep = R_FINITE(lam[i]);
        x[i] = x[n + i] = 0.0;
        r[i] = keep ? y[i] : 0.0;
        r[n + i] = keep ? 1.0 : 0.0;
        bn += r[i] * r[i] + r[n + i] * r[n + i];
    }
    bn = sqrt(bn);
    kr_ctx ctx = { op, n, lam, mk_time() };
    mk_cg cg;
    memset(&cg, 0, sizeof(cg));
    cg.n = 2 * n; cg.maxit = cg_maxiter; cg.tol = cg_tol * bn;
    cg.mv = kr_mv; cg.mv_ctx = &ctx; cg.check_start = 1; cg.work = work;
    *it = 0;
    mk_cg_solve(&cg, x, r, it);
    *rel = sqrt(mk_dot(2 * n, r, r)) / bn;
    *b = kr_bias(n, x, beta);
    mk_kdop_mv(op, 1, beta, NULL, kbeta, NULL);
    return !(*rel <= cg_tol);
}

SEXP mkc_kridge_fly(SEXP store, SEXP y, SEXP lambda, SEXP d, SEXP control)
{
    mk_store st;
    mk_store_read(store, &st);
    if (st.kind != MK_STORE_FLY || !st.square) error("kridge_fly needs a square fly store");
    const int n = st.n, M = st.M;
    if (!isReal(y) || LENGTH(y) != n) error("'y' must be %d doubles", n);
    if (!isReal(lambda) || LENGTH(lambda) != n) error("'lambda' must be %d doubles", n);
    if (!isReal(d) || LENGTH(d) != M) error("'d' must be %d doubles", M);
    const double *lam = REAL(lambda);
    int nkeep = 0;
    for (int i = 0; i < n; i++) {
        if (ISNAN(lam[i]) || !(lam[i] > 0.0))
            error("'lambda' must be positive (Inf: row left out)");
        nkeep += R_FINITE(lam[i]);
    }
    if (nkeep == 0) error("'lambda' must keep at least one row");
    int kcache = mk_ctl_int(control, "kcache"), kcols = mk_ctl_int(control, "kcols");
    int cg_maxiter = mk_ctl_int(control, "cg_maxiter");
    double cg_tol = mk_ctl_real(control, "cg_tol");
    if (kcache < 0 || kcols < 0 || cg_maxiter < 1 || !(cg_tol > 0.0))
        error("control entries 'kcache', 'kcols' >= 0, 'cg_maxiter' >= 1, 'cg_tol' > 0");
    mk_kcache kc;
    mk_kcache_init(&kc, &st, kcache);
    mk_kdop op;
    mk_kdop_init(&op, &kc, kcols);
    double tick = mk_time();
    op.tick = &tick;
    mk_kdop_set(&op, REAL(d));
    SEXP beta = PROTECT(allocVector(REALSXP, n));
    SEXP kbeta = PROTECT(allocVector(REALSXP, n));
    double b = 0.0, rel = 0.0;
    int it = 0;
    int capped = kridge_fly(&op, REAL(y), lam, cg_tol, cg_maxiter, REAL(beta), &b, REAL(kbeta),
                            &it, &rel);
    const char *nms[] = {"beta", "b", "kbeta", "cg_iterations", "cg_capped", "cg_residual",
                         "kcache_hits", "kcache_misses", NULL};
    SEXP out = mk_list_new(nms);
    mk_list_set(out, "beta", beta);
    mk_list_set(out, "b", ScalarReal(b));
    mk_list_set(out, "kbeta", kbeta);
    mk_list_set(out, "cg_iterations", ScalarInteger(it));
    mk_list_set(out, "cg_capped", ScalarLogical(capped));
    mk_list_set(out, "cg_residual", ScalarReal(rel));
    mk_list_set(out, "kcache_hits", ScalarReal(kc.hits));
    mk_list_set(out, "kcache_misses", ScalarReal(kc.misses));
    UNPROTECT(3);
    return out;
}
