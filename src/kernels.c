/* Kernel functions, Gram arrays and their normalisation.
 * Each feature group's distances / inner products are computed once and reused for every
 * kernel on that group; kernels are filled in parallel. Training kernels are symmetric:
 * only the lower triangle is computed, each value written to both triangles. The kernel
 * functions themselves (mk_kernel_base, mk_kernel_apply) are shared with the on-the-fly
 * kernel store, so both give the same values. */
#define USE_FC_LEN_T
#include "mklearn.h"
#include <R_ext/Lapack.h>
#include <math.h>
#include <string.h>
#ifndef FCONE
#define FCONE
#endif

/* out and base of mk_kernel_apply are the same array or disjoint: elementwise loops are safe
   to vectorise */
#ifdef _OPENMP
#define MK_SIMD_LOOP _Pragma("omp simd")
#else
#define MK_SIMD_LOOP
#endif

static double ipow(double x, int k)
{
    double r = 1.0;
    while (k > 0) {
        if (k & 1) r *= x;
        x *= x;
        k >>= 1;
    }
    return r;
}

/* ------------------------------------------------------------------ kernel functions */

int mk_kernel_base_kind(int type)
{
    switch (type) {
    case MK_LINEAR: case MK_POLY: return MK_BASE_IP;
    case MK_CHISQ: return MK_BASE_CH;
    default: return MK_BASE_D2;
    }
}

void mk_kernel_base(const double *x, int n, const double *z, int ldz, int nz, int j,
                    const int *feat, int nf, int kind, double *base)
{
    for (int i = 0; i < nz; i++) base[i] = 0.0;
    for (int f = 0; f < nf; f++) {
        size_t c = (size_t) feat[f];
        const double *zc = z + c * ldz;
        double b = x[c * n + j];
        if (kind == MK_BASE_D2) {
            for (int i = 0; i < nz; i++) { double d = zc[i] - b; base[i] += d * d; }
        } else if (kind == MK_BASE_IP) {
            for (int i = 0; i < nz; i++) base[i] += zc[i] * b;
        } else {
            for (int i = 0; i < nz; i++) {
                double a = zc[i], d = a - b, s = a + b;
                if (s != 0.0) base[i] += d * d / s;
            }
        }
    }
}

void mk_kernel_apply(int type, double p1, double p2, const double *base, int len, double *out)
{
    switch (type) {
    case MK_LINEAR:
        if (out != base) for (int i = 0; i < len; i++) out[i] = base[i];
        break;
    case MK_POLY: {
        int deg = (int) p1;
        if (deg == 1) {
            MK_SIMD_LOOP
            for (int i = 0; i < len; i++) out[i] = base[i] + p2;
        } else if (deg == 2) {
            MK_SIMD_LOOP
            for (int i = 0; i < len; i++) { double t = base[i] + p2; out[i] = t * t; }
        } else if (deg == 3) {
            MK_SIMD_LOOP
            for (int i = 0; i < len; i++) { double t = base[i] + p2; out[i] = t * t * t; }
        } else for (int i = 0; i < len; i++) out[i] = ipow(base[i] + p2, deg);
        break;
    }
    case MK_RBF: {
        double c = -1.0 / (2.0 * p1 * p1);
        MK_SIMD_LOOP
        for (int i = 0; i < len; i++) out[i] = c * base[i];
        mk_vexp(out, len);
        break;
    }
    case MK_LAPLACE: {
        double c = -1.0 / p1;
        for (int i = 0; i < len; i++) out[i] = c * sqrt(base[i]);
        mk_vexp(out, len);
        break;
    }
    case MK_CHISQ:
        MK_SIMD_LOOP
        for (int i = 0; i < len; i++) out[i] = -p1 * base[i];
        mk_vexp(out, len);
        break;
    default:
        for (int i = 0; i < len; i++) out[i] = NAN;
    }
}

/* ------------------------------------------------------------------ Gram arrays */

/* Base matrices (nz x n) of one feature group for columns j0 <= j < j1: squared distance, inner
   product, chi-square distance, as the kinds in 'need' ask; sym: rows i >= j only. */
static void group_base(const double *x, int n, const double *z, int nz, const int *feat,
                       int nf, int need, int sym, double *D2, double *IP, double *CH, int j0,
                       int j1, int nt)
{
    (void) nt;
#ifdef _OPENMP
#pragma omp parallel for if (nt > 1) num_threads(nt) schedule(dynamic, 8)
#endif
    for (int j = j0; j < j1; j++) {
        int i0 = sym ? j : 0;
        size_t o = (size_t) j * nz + i0;
        if (need & MK_BASE_D2) mk_kernel_base(x, n, z + i0, nz, nz - i0, j, feat, nf, MK_BASE_D2, D2 + o);
        if (need & MK_BASE_IP) mk_kernel_base(x, n, z + i0, nz, nz - i0, j, feat, nf, MK_BASE_IP, IP + o);
        if (need & MK_BASE_CH) mk_kernel_base(x, n, z + i0, nz, nz - i0, j, feat, nf, MK_BASE_CH, CH + o);
    }
}

/* Tiles t0 <= t < t1 of the kernels of one group (tasks numbered kernel-major). A symmetric
   kernel computes the tiles on and below the diagonal and writes each value twice while the
   tile is in cache (no second mirror pass). */
static void group_tiles(int n, int nz, int sym, const int *members, const int *ktype,
                        const double *kpar1, const double *kpar2, double *out, const double *D2,
                        const double *IP, const double *CH, int B, int ntile, int tr, int t0,
                        int t1, int nt, int *bad)
{
    const size_t nn = (size_t) nz * n;
    (void) nt;
#ifdef _OPENMP
#pragma omp parallel for if (nt > 1) num_threads(nt) schedule(dynamic, 4)
#endif
    for (int task = t0; task < t1; task++) {
        int m = members[task / ntile], t = task % ntile, ib, jb;
        if (sym) {            /* t -> (ib >= jb) in the lower triangle of tiles */
            ib = 0;
            while ((ib + 1) * (ib + 2) / 2 <= t) ib++;
            jb = t - ib * (ib + 1) / 2;
        } else {
            ib = t % tr;
            jb = t / tr;
        }
        int type = ktype[m], kind = mk_kernel_base_kind(type);
        const double *base = kind == MK_BASE_D2 ? D2 : (kind == MK_BASE_IP ? IP : CH);
        double *Km = out + (size_t) m * nn;
        int i0 = ib * B, i1 = i0 + B < nz ? i0 + B : nz;
        int j0 = jb * B, j1 = j0 + B < n ? j0 + B : n;
        for (int j = j0; j < j1; j++) {
            size_t o = (size_t) j * nz;
            int is = (sym && ib == jb) ? j : i0;
            double *Kj = Km + o;
            mk_kernel_apply(type, kpar1[m], kpar2[m], base + o + is, i1 - is, Kj + is);
            /* non-finite values, found while the column is in cache: x - x == 0 fails exactly
               for NaN and +-Inf (an integer AND, which vectorises). Gaussian and Laplace values
               are exp() of a number <= 0 or of -Inf, always in [0, 1]: nothing to check */
            if (type != MK_RBF && type != MK_LAPLACE) {
                int fin = 1;
                for (int i = is; i < i1; i++) fin &= (Kj[i] - Kj[i] == 0.0);
                if (!fin) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
                    bad[m] = 1;
                }
            }
            if (sym)
                for (int i = is; i < i1; i++) Km[(size_t) i * n + j] = Kj[i];
        }
    }
}

/* All kernels of one feature group: its base matrices once, then every kernel. nt > 1
   parallelises inside the group; with 'interruptible', the work is cut into blocks with a
   user-interrupt check between them (only outside parallel regions). */
static void one_group(const double *x, int n, const double *z, int nz, int sym,
                      const int *feat, int nf, const int *members, int nm, const int *ktype,
                      const double *kpar1, const double *kpar2, double *out,
                      double *D2, double *IP, double *CH, int nt, double *tlast, int *bad)
{
    int need = 0;
    for (int k = 0; k < nm; k++) need |= mk_kernel_base_kind(ktype[members[k]]);
    /* blocks of about 4e6 base entries / 1000 tiles between interrupt checks */
    int jstep = tlast ? (int) (4e6 / ((double) nz * (nf > 0 ? nf : 1))) + 1 : n;
    for (int j0 = 0; j0 < n; j0 += jstep) {
        int j1 = j0 + jstep < n ? j0 + jstep : n;
        group_base(x, n, z, nz, feat, nf, need, sym, D2, IP, CH, j0, j1, nt);
        if (tlast) mk_interrupt_every(tlast, 0.02);
    }
    const int B = 64;
    const int tr = (nz + B - 1) / B, tc = (n + B - 1) / B;
    const int ntile = sym ? tc * (tc + 1) / 2 : tr * tc;
    const int ntask = nm * ntile;
    int tstep = tlast ? 1000 : ntask;
    for (int t0 = 0; t0 < ntask; t0 += tstep) {
        int t1 = t0 + tstep < ntask ? t0 + tstep : ntask;
        group_tiles(n, nz, sym, members, ktype, kpar1, kpar2, out, D2, IP, CH, B, ntile, tr,
                    t0, t1, nt, bad);
        if (tlast) mk_interrupt_every(tlast, 0.02);
    }
}

void mk_gram(const double *x, int n, int p, const double *z, int nz,
             const int *gstart, const int *gfeat, int M, const int *kgroup, const int *ktype,
             const double *kpar1, const double *kpar2, double *out, int *bad, int nthreads)
{
    (void) p;
    for (int m = 0; m < M; m++) bad[m] = 0;
    int sym = (z == NULL);
    if (sym) { z = x; nz = n; }
    const size_t nn = (size_t) nz * n;
    int nt = mk_threads_for(nthreads, (double) nn * M);
    int ngroups = 0, anych = 0;
    for (int m = 0; m < M; m++) {
        if (kgroup[m] + 1 > ngroups) ngroups = kgroup[m] + 1;
        if (ktype[m] == MK_CHISQ) anych = 1;
    }
    /* kernels listed group by group (counting sort) */
    int *goff = (int *) R_alloc(ngroups + 1, sizeof(int));
    int *gmem = (int *) R_alloc(M > 0 ? M : 1, sizeof(int));
    int *fill = (int *) R_alloc(ngroups + 1, sizeof(int));
    for (int g = 0; g <= ngroups; g++) goff[g] = 0;
    for (int m = 0; m < M; m++) goff[kgroup[m] + 1]++;
    for (int g = 0; g < ngroups; g++) goff[g + 1] += goff[g];
    for (int g = 0; g <= ngroups; g++) fill[g] = goff[g];
    for (int m = 0; m < M; m++) gmem[fill[kgroup[m]]++] = m;

    /* many groups: one group per thread at a time, each thread with its own scratch, in rounds
       of a few groups per thread with an interrupt check between rounds; few groups: the
       threads share each group, which checks for interrupts itself */
    int across = (nt > 1 && ngroups >= 2 * nt);
    int nscratch = across ? nt : 1;
    double *D2 = (double *) R_alloc(nn * nscratch, sizeof(double));
    double *IP = (double *) R_alloc(nn * nscratch, sizeof(double));
    double *CH = anych ? (double *) R_alloc(nn * nscratch, sizeof(double)) : NULL;
    double tlast = mk_time();
    if (across) {
#ifdef _OPENMP
        int round = 4 * nt;
        for (int g0 = 0; g0 < ngroups; g0 += round) {
            int g1 = g0 + round < ngroups ? g0 + round : ngroups;
#pragma omp parallel num_threads(nt)
            {
                int tid = omp_get_thread_num();
                size_t off = (size_t) tid * nn;
#pragma omp for schedule(dynamic, 1)
                for (int g = g0; g < g1; g++) {
                    int nm = goff[g + 1] - goff[g];
                    if (nm == 0) continue;
                    one_group(x, n, z, nz, sym, gfeat + gstart[g], gstart[g + 1] - gstart[g],
                              gmem + goff[g], nm, ktype, kpar1, kpar2, out, D2 + off, IP + off,
                              CH ? CH + off : NULL, 1, NULL, bad);
                }
            }
            mk_interrupt_every(&tlast, 0.02);
        }
#endif
    } else {
        for (int g = 0; g < ngroups; g++) {
            int nm = goff[g + 1] - goff[g];
            if (nm == 0) continue;
            one_group(x, n, z, nz, sym, gfeat + gstart[g], gstart[g + 1] - gstart[g],
                      gmem + goff[g], nm, ktype, kpar1, kpar2, out, D2, IP, CH, nt, &tlast, bad);
        }
    }
}

void mk_normalize(double *K, int n, int M, int norm, double jitter, double *scale,
                  double *colmeans, double *grandmean, int nthreads)
{
    const size_t nn = (size_t) n * n;
    int nt = mk_threads_for(nthreads, (double) nn * M);
    (void) nt;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static)
#endif
    for (int m = 0; m < M; m++) {
        double *Km = K + (size_t) m * nn;
        double s = 1.0;
        if (norm == MK_NORM_CENTER_TRACE) {
            double *cm = colmeans + (size_t) m * n, gm = 0.0;
            for (int j = 0; j < n; j++) {
                double t = 0.0;
                for (int i = 0; i < n; i++) t += Km[(size_t) j * n + i];
                cm[j] = t / n;
                gm += cm[j];
            }
            gm /= n;
            grandmean[m] = gm;
            for (int j = 0; j < n; j++)
                for (int i = 0; i < n; i++) Km[(size_t) j * n + i] += gm - cm[i] - cm[j];
        }
        if (norm != MK_NORM_NONE) {
            double tr = 0.0;
            for (int i = 0; i < n; i++) tr += Km[(size_t) i * n + i];
            s = tr > 0.0 ? tr : 1.0;
            double inv = 1.0 / s;
            for (size_t k = 0; k < nn; k++) Km[k] *= inv;
        }
        scale[m] = s;
        if (jitter != 0.0)
            for (int i = 0; i < n; i++) Km[(size_t) i * n + i] += jitter;
    }
}

/* ------------------------------------------------------------------ .Call */

static int kernel_dims(SEXP K, int *n, int *M)
{
    SEXP dim = getAttrib(K, R_DimSymbol);
    if (!isReal(K) || LENGTH(dim) != 3) error("'K' must be a double n x n x M array");
    *n = INTEGER(dim)[0];
    *M = INTEGER(dim)[2];
    return INTEGER(dim)[1];
}

/* For each kernel: the largest |K - K'| relative to max |K|, and the smallest eigenvalue
   relative to the largest absolute one (LAPACK dsyevr on a scratch copy). */
SEXP mkc_check_psd(SEXP K)
{
    int n, M;
    if (kernel_dims(K, &n, &M) != n) error("kernels must be square");
    const size_t nn = (size_t) n * n;
    SEXP asym = PROTECT(allocVector(REALSXP, M));
    SEXP mineig = PROTECT(allocVector(REALSXP, M));
    double *A = (double *) R_alloc(nn, sizeof(double));
    double *w = (double *) R_alloc(n, sizeof(double));
    int *isuppz = (int *) R_alloc(2, sizeof(int));
    int il = 1, iu = 1, found = 0, info = 0, lwork = -1, liwork = -1, iwq, one = 1;
    double vl = 0.0, vu = 0.0, abstol = 0.0, wq, z;
    /* one workspace query and one allocation for all kernels (they share n) */
    F77_CALL(dsyevr)("N", "I", "L", &n, A, &n, &vl, &vu, &il, &iu, &abstol, &found, w,
                     &z, &one, isuppz, &wq, &lwork, &iwq, &liwork, &info FCONE FCONE FCONE);
    lwork = (int) wq; liwork = iwq;
    double *work = (double *) R_alloc(lwork, sizeof(double));
    int *iwork = (int *) R_alloc(liwork, sizeof(int));
    for (int m = 0; m < M; m++) {
        const double *Km = REAL(K) + (size_t) m * nn;
        double amax = 0.0, dmax = 0.0;
        for (int j = 0; j < n; j++)
            for (int i = 0; i < n; i++) {
                double v = Km[(size_t) j * n + i];
                if (fabs(v) > amax) amax = fabs(v);
                double d = fabs(v - Km[(size_t) i * n + j]);
                if (d > dmax) dmax = d;
            }
        REAL(asym)[m] = amax > 0.0 ? dmax / amax : 0.0;
        memcpy(A, Km, nn * sizeof(double));
        F77_CALL(dsyevr)("N", "I", "L", &n, A, &n, &vl, &vu, &il, &iu, &abstol, &found, w,
                         &z, &one, isuppz, work, &lwork, iwork, &liwork, &info FCONE FCONE FCONE);
        if (info != 0) error("eigenvalue computation failed for kernel %d", m + 1);
        /* the largest |eigenvalue| is bounded below by max |K_ij| */
        REAL(mineig)[m] = amax > 0.0 ? w[0] / amax : 0.0;
        R_CheckUserInterrupt();
    }
    const char *nms[] = {"asymmetry", "min_eigen", NULL};
    SEXP out = mk_list_new(nms);
    SET_VECTOR_ELT(out, 0, asym);
    SET_VECTOR_ELT(out, 1, mineig);
    UNPROTECT(3);
    return out;
}

