/* Shared linear algebra and utilities. */
#define USE_FC_LEN_T
#include "mklearn.h"
#include <R_ext/BLAS.h>
#include <R_ext/Lapack.h>
#include <time.h>
#ifndef FCONE
#define FCONE
#endif

int mk_threads(int requested)
{
#ifdef _OPENMP
    int n = requested > 0 ? requested : omp_get_max_threads();
    int lim = omp_get_thread_limit();
    if (lim > 0 && n > lim) n = lim;
    return n < 1 ? 1 : n;
#else
    (void) requested;
    return 1;
#endif
}

void mk_combine(const double *K, int n, int M, const double *d, double *out, int nthreads)
{
    const size_t nn = (size_t) n * n;
    int nt = mk_threads(nthreads);
    (void) nt;
    /* columns in parallel; kernels summed in a fixed order so the result is deterministic */
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static)
#endif
    for (int j = 0; j < n; j++) {
        double *oj = out + (size_t) j * n;
        for (int i = 0; i < n; i++) oj[i] = 0.0;
        for (int m = 0; m < M; m++) {
            double w = d[m];
            if (w == 0.0) continue;
            const double *kj = K + (size_t) m * nn + (size_t) j * n;
            for (int i = 0; i < n; i++) oj[i] += w * kj[i];
        }
    }
}

void mk_symv(const double *A, int n, const double *x, double *y)
{
    const double one = 1.0, zero = 0.0;
    const int inc = 1;
    F77_CALL(dsymv)("L", &n, &one, A, &n, x, &inc, &zero, y, &inc FCONE);
}

double mk_quad(const double *A, int n, const double *v, double *work)
{
    mk_symv(A, n, v, work);
    double s = 0.0;
    for (int i = 0; i < n; i++) s += v[i] * work[i];
    return s;
}

/* v' K_m v using the lower triangle only; no BLAS so that it can run in threads. */
static double quad_lower(const double *A, int n, const double *v)
{
    double s = 0.0;
    for (int j = 0; j < n; j++) {
        const double *aj = A + (size_t) j * n;
        double vj = v[j], t = 0.0;
        if (vj == 0.0) continue;
        for (int i = j + 1; i < n; i++) t += aj[i] * v[i];
        s += vj * (2.0 * t + aj[j] * vj);
    }
    return s;
}

void mk_quad_kernels(const double *K, int n, const int *idx, int nidx, const double *v,
                     double *out, int nthreads)
{
    const size_t nn = (size_t) n * n;
    int nt = mk_threads(nthreads);
    (void) nt;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, 4)
#endif
    for (int j = 0; j < nidx; j++) {
        int m = idx ? idx[j] : j;
        out[j] = quad_lower(K + (size_t) m * nn, n, v);
    }
}

int mk_chol_solve(double *A, int n, double *B, int nrhs)
{
    int info = 0;
    F77_CALL(dpotrf)("L", &n, A, &n, &info FCONE);
    if (info != 0) return info;
    F77_CALL(dpotrs)("L", &n, &nrhs, A, &n, B, &n, &info FCONE);
    return info;
}

double mk_time(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

/* ------------------------------------------------------------------ .Call */

SEXP mkc_threads(SEXP requested)
{
    if (!isInteger(requested) || LENGTH(requested) != 1) error("'requested' must be one integer");
    return ScalarInteger(mk_threads(INTEGER(requested)[0]));
}

SEXP mkc_combine(SEXP K, SEXP d, SEXP nthreads)
{
    if (!isReal(K) || !isReal(d)) error("'K' and 'd' must be double");
    SEXP dim = getAttrib(K, R_DimSymbol);
    if (LENGTH(dim) != 3) error("'K' must be an n x n x M array");
    int n = INTEGER(dim)[0], M = INTEGER(dim)[2];
    if (INTEGER(dim)[1] != n || LENGTH(d) != M) error("dimension mismatch");
    SEXP out = PROTECT(allocMatrix(REALSXP, n, n));
    mk_combine(REAL(K), n, M, REAL(d), REAL(out), asInteger(nthreads));
    UNPROTECT(1);
    return out;
}

/* out[i] = sum_j sum_l K_{idx[j]}[i, l] * alpha[l, j]: the decision values of the kernels idx
   (0-based; NULL: the first Ma) of K (nz x n x M) with coefficient columns alpha (n x Ma). */
void mk_kernel_mv(const double *K, int nz, int n, const int *idx, int Ma, const double *alpha,
                  double *out, int nthreads)
{
    const size_t nn = (size_t) nz * n;
    int nt = mk_threads(nthreads);
    (void) nt;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static)
#endif
    for (int i = 0; i < nz; i++) {
        double s = 0.0;
        for (int j = 0; j < Ma; j++) {
            const double *Kj = K + (size_t) (idx ? idx[j] : j) * nn;
            const double *aj = alpha + (size_t) j * n;
            for (int l = 0; l < n; l++) s += Kj[(size_t) l * nz + i] * aj[l];
        }
        out[i] = s;
    }
}

SEXP mkc_kernel_mv(SEXP K, SEXP alpha, SEXP idx, SEXP nthreads)
{
    if (!isReal(K) || !isReal(alpha)) error("'K' and 'alpha' must be double");
    SEXP dim = getAttrib(K, R_DimSymbol);
    if (LENGTH(dim) != 3) error("'K' must be a 3-d array");
    int nz = INTEGER(dim)[0], n = INTEGER(dim)[1], M = INTEGER(dim)[2], Ma = M;
    int *ix = NULL;
    if (!isNull(idx)) {
        if (!isInteger(idx)) error("'idx' must be integer");
        Ma = LENGTH(idx);
        ix = (int *) R_alloc(Ma > 0 ? Ma : 1, sizeof(int));
        for (int j = 0; j < Ma; j++) {
            ix[j] = INTEGER(idx)[j] - 1;
            if (ix[j] < 0 || ix[j] >= M) error("kernel index out of range");
        }
    }
    if (XLENGTH(alpha) != (R_xlen_t) n * Ma) error("'alpha' must be n x length(idx)");
    SEXP out = PROTECT(allocVector(REALSXP, nz));
    mk_kernel_mv(REAL(K), nz, n, ix, Ma, REAL(alpha), REAL(out), asInteger(nthreads));
    UNPROTECT(1);
    return out;
}
