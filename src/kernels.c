/* Kernel functions, Gram arrays and their normalisation.
 * Each feature group's distances / inner products are computed once and reused for every
 * kernel on that group; kernels are filled in parallel. Training kernels are symmetric:
 * only the lower triangle is computed, each value written to both triangles. The kernel
 * functions themselves (mk_kernel_base, mk_kernel_apply) are shared with the on-the-fly
 * kernel store, so both give the same values. */
#define USE_FC_LEN_T
#include "mklearn.h"
#include <R_ext/Lapack.h>
#include <R_ext/BLAS.h>
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
        mk_vexp_ax(-1.0 / (2.0 * p1 * p1), base, out, len);
        break;
    }
    case MK_LAPLACE: {
        double c = -1.0 / p1;
        for (int i = 0; i < len; i++) out[i] = c * sqrt(base[i]);
        mk_vexp(out, len);
        break;
    }
    case MK_CHISQ:
        mk_vexp_ax(-p1, base, out, len);
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
        if (need & MK_BASE_D2)
            mk_kernel_base(x, n, z + i0, nz, nz - i0, j, feat, nf, MK_BASE_D2, D2 + o);
        if (need & MK_BASE_IP)
            mk_kernel_base(x, n, z + i0, nz, nz - i0, j, feat, nf, MK_BASE_IP, IP + o);
        if (need & MK_BASE_CH)
            mk_kernel_base(x, n, z + i0, nz, nz - i0, j, feat, nf, MK_BASE_CH, CH + o);
    }
}

/* A large feature group (at least MK_BLAS_FEAT features and MK_BLAS_WORK multiply-adds) gets
   its squared distances and inner products from one matrix product (BLAS dgemm) instead of
   the feature-by-feature loop. Squared distances come from the centred data as
   |z_i|^2 + |x_j|^2 - 2 <z_i, x_j>; that difference loses accuracy where the distance is small
   against the norms, so every pair with d2 < (|z_i|^2 + |x_j|^2) / MK_BLAS_CANCEL is recomputed
   feature by feature (the diagonal of a training kernel among them: exactly 0). Elsewhere the
   relative error of d2 is below (nf + 2) eps MK_BLAS_CANCEL. */
#define MK_BLAS_FEAT 8
#define MK_BLAS_WORK 4e6
#define MK_BLAS_CANCEL 16.0

static int group_uses_blas(int n, int nz, int nf, int need)
{
    return (need & (MK_BASE_D2 | MK_BASE_IP)) && nf >= MK_BLAS_FEAT &&
        (double) n * nz * nf >= MK_BLAS_WORK;
}

/* Gather the group's columns of z into zg (nz x nf) and of x, transposed, into xt (nf x n),
   centred by the means of x's columns when 'centre'; with sx, the squared row norms of both. */
static void gather_group(const double *x, int n, const double *z, int nz, const int *feat,
                         int nf, int centre, double *zg, double *xt, double *sx, double *sz)
{
    for (int f = 0; f < nf; f++) {
        const double *xc = x + (size_t) feat[f] * n, *zc = z + (size_t) feat[f] * nz;
        double mu = 0.0;
        if (centre) {
            for (int i = 0; i < n; i++) mu += xc[i];
            mu /= n;
        }
        for (int i = 0; i < n; i++) xt[(size_t) i * nf + f] = xc[i] - mu;
        double *zo = zg + (size_t) f * nz;
        for (int i = 0; i < nz; i++) zo[i] = zc[i] - mu;
    }
    if (!sx) return;
    for (int i = 0; i < n; i++) {
        double t = 0.0;
        for (int f = 0; f < nf; f++) t += xt[(size_t) i * nf + f] * xt[(size_t) i * nf + f];
        sx[i] = t;
    }
    for (int i = 0; i < nz; i++) sz[i] = 0.0;
    for (int f = 0; f < nf; f++) {
        const double *zo = zg + (size_t) f * nz;
        for (int i = 0; i < nz; i++) sz[i] += zo[i] * zo[i];
    }
}

/* Base matrix (kind MK_BASE_D2 or MK_BASE_IP) of one large group, columns j0 <= j < j1 (sym:
   rows i >= j only, up to the block's own upper corner), from the gathered data: one dgemm
   per block of MK_BLAS_COLS columns, the blocks shared by the threads (the reference BLAS
   runs on one thread, and each block's distances are finished while it is in cache). */
#define MK_BLAS_COLS 64
static void group_base_blas(const double *x, int n, const double *z, int nz, const int *feat,
                            int nf, int kind, int sym, const double *zg, const double *xt,
                            const double *sx, const double *sz, double *out, int j0, int j1,
                            int nt)
{
    int nb = (j1 - j0 + MK_BLAS_COLS - 1) / MK_BLAS_COLS;
    (void) nt;
#ifdef _OPENMP
#pragma omp parallel for if (nt > 1) num_threads(nt) schedule(dynamic, 1)
#endif
    for (int b = 0; b < nb; b++) {
        int c0 = j0 + b * MK_BLAS_COLS, c1 = c0 + MK_BLAS_COLS < j1 ? c0 + MK_BLAS_COLS : j1;
        int i0 = sym ? c0 : 0, m = nz - i0, nc = c1 - c0, k = nf, lda = nz, ldb = nf, ldc = nz;
        double one = 1.0, zero = 0.0;
        if (m <= 0) continue;
        F77_CALL(dgemm)("N", "N", &m, &nc, &k, &one, zg + i0, &lda, xt + (size_t) c0 * nf,
                        &ldb, &zero, out + (size_t) c0 * nz + i0, &ldc FCONE FCONE);
        if (kind != MK_BASE_D2) continue;
        for (int j = c0; j < c1; j++) {
            double *o = out + (size_t) j * nz, sj = sx[j];
            for (int i = sym ? j : 0; i < nz; i++) {
                double s = sz[i] + sj, v = s - 2.0 * o[i];
                if (v * MK_BLAS_CANCEL < s)
                    mk_kernel_base(x, n, z + i, nz, 1, j, feat, nf, MK_BASE_D2, &v);
                o[i] = v;
            }
        }
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
                      double *D2, double *IP, double *CH, double *gs, int nt, double *tlast,
                      int *bad)
{
    int need = 0;
    for (int k = 0; k < nm; k++) need |= mk_kernel_base_kind(ktype[members[k]]);
    /* blocks of about 4e6 base entries / 1000 tiles between interrupt checks */
    int jstep = tlast ? (int) (4e6 / ((double) nz * (nf > 0 ? nf : 1))) + 1 : n;
    if (gs && group_uses_blas(n, nz, nf, need)) {
        /* gs: scratch for the gathered group, (n + nz) (nf + 1) doubles */
        double *zg = gs, *xt = zg + (size_t) nz * nf, *sx = xt + (size_t) n * nf, *sz = sx + n;
        int jb = tlast ? (int) (4e7 / ((double) nz * nf)) + 1 : n;
        for (int kind = MK_BASE_D2; kind <= MK_BASE_IP; kind <<= 1) {
            if (!(need & kind)) continue;
            gather_group(x, n, z, nz, feat, nf, kind == MK_BASE_D2, zg, xt,
                         kind == MK_BASE_D2 ? sx : NULL, sz);
            double *dst = kind == MK_BASE_D2 ? D2 : IP;
            for (int j0 = 0; j0 < n; j0 += jb) {
                int j1 = j0 + jb < n ? j0 + jb : n;
                group_base_blas(x, n, z, nz, feat, nf, kind, sym, zg, xt, sx, sz, dst, j0, j1,
                                nt);
                if (tlast) mk_interrupt_every(tlast, 0.02);
            }
        }
        need &= ~(MK_BASE_D2 | MK_BASE_IP);
    }
    if (need)
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

    /* large groups (BLAS products, group_uses_blas) one at a time, the threads sharing each
       group, which checks for interrupts itself; the others: when there are many, one group per
       thread at a time, each thread with its own scratch, in rounds of a few groups per thread
       with an interrupt check between rounds; when few, like the large ones */
    int *big = (int *) R_alloc(ngroups + 1, sizeof(int));
    int nsmall = 0, maxnf = 0;
    for (int g = 0; g < ngroups; g++) {
        int need = 0;
        for (int k = goff[g]; k < goff[g + 1]; k++) need |= mk_kernel_base_kind(ktype[gmem[k]]);
        int nf = gstart[g + 1] - gstart[g];
        big[g] = goff[g + 1] > goff[g] && group_uses_blas(n, nz, nf, need);
        if (big[g] && nf > maxnf) maxnf = nf;
        if (!big[g] && goff[g + 1] > goff[g]) nsmall++;
    }
    double *gs = maxnf ? (double *) R_alloc((size_t) (n + nz) * (maxnf + 1), sizeof(double))
        : NULL;
    int across = (nt > 1 && nsmall >= 2 * nt);
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
                    if (nm == 0 || big[g]) continue;
                    one_group(x, n, z, nz, sym, gfeat + gstart[g], gstart[g + 1] - gstart[g],
                              gmem + goff[g], nm, ktype, kpar1, kpar2, out, D2 + off, IP + off,
                              CH ? CH + off : NULL, NULL, 1, NULL, bad);
                }
            }
            mk_interrupt_every(&tlast, 0.02);
        }
#endif
    }
    for (int g = 0; g < ngroups; g++) {
        int nm = goff[g + 1] - goff[g];
        if (nm == 0 || (across && !big[g])) continue;
        one_group(x, n, z, nz, sym, gfeat + gstart[g], gstart[g + 1] - gstart[g],
                  gmem + goff[g], nm, ktype, kpar1, kpar2, out, D2, IP, CH, gs, nt, &tlast, bad);
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

/* ------------------------------------------------------------------ precomputed kernels */

/* The checks of precomputed training kernels. One pass over each kernel (level >= 1) reads its
   lower triangle tile by tile together with the mirrored tile and finds, relative to its
   largest |entry| amax:
   - non-finite entries (NaN, Inf);
   - the asymmetry max |K_ij - K_ji|;
   - three upper bounds on the smallest eigenvalue, each a necessary condition for positive
     semidefiniteness: the smallest diagonal entry, the smallest eigenvalue of the 2 x 2
     principal minors [K_ii K_ij; K_ij K_jj] (computed only where K_ij^2 > K_ii K_jj; Cauchy
     interlacing: a principal minor's smallest eigenvalue bounds the kernel's from above), and
     the smallest Rayleigh quotient v'Kv / v'v over MK_NRAY fixed pseudo-random sign vectors.
   level 2 adds the smallest eigenvalue itself (LAPACK dsyevr, one kernel at a time). level 0
   finds non-finite entries only (any shape: test-by-train kernels). */
#define MK_NRAY 4
#define MK_CB 64
/* Prefetch distance in columns: a tile reads 64 short column pieces, too many streams for the
   hardware prefetcher (measurements: inst/notes/NOTES-kernels.md). */
#define MK_PF 4

typedef struct {
    double amax, asym, mind, lam2, q[MK_NRAY];
    int li, lj, nonfin;
} kcheck_part;

/* Tile column jb of kernel Km (rows and columns >= jb * MK_CB of its lower triangle, and the
   mirrored tiles, each copied transposed into a small buffer so that both are read with unit
   stride) into one partial result; dg: the diagonal of Km. */
MK_CLONES
static void check_tile_col(const double *Km, const double *dg, int n, int jb, const double *sg,
                           kcheck_part *r)
{
    int j0 = jb * MK_CB, j1 = j0 + MK_CB < n ? j0 + MK_CB : n;
    double amax = 0.0, asym = 0.0, mind = INFINITY, lam2 = 0.0, q[MK_NRAY];
    double T[MK_CB * MK_CB];
    int li = -1, lj = -1, fin = 1;
    for (int k = 0; k < MK_NRAY; k++) q[k] = 0.0;
    const double *s0 = sg, *s1 = sg + n, *s2 = sg + 2 * (size_t) n, *s3 = sg + 3 * (size_t) n;
    for (int j = j0; j < j1; j++) {
        double dj = dg[j];
        fin &= (dj - dj == 0.0);
        if (dj < mind) mind = dj;
        if (fabs(dj) > amax) amax = fabs(dj);
        for (int k = 0; k < MK_NRAY; k++) q[k] += dj;     /* s_j^2 K_jj */
    }
    for (int i0 = j0; i0 < n; i0 += MK_CB) {
        int i1 = i0 + MK_CB < n ? i0 + MK_CB : n;
        /* T[(j - j0) * MK_CB + (i - i0)] = K[j, i]: the mirror of the tile K[i0:i1, j0:j1] */
        for (int i = i0; i < i1; i++) {
            const double *Ki = Km + (size_t) i * n;
#if defined(__GNUC__)
            if (i + MK_PF < n) {
                const double *Kp = Ki + (size_t) MK_PF * n;
                for (int j = j0; j < j1; j += 8) __builtin_prefetch(Kp + j, 0, 3);
            }
#endif
            for (int j = j0; j < j1; j++) T[(j - j0) * MK_CB + (i - i0)] = Ki[j];
        }
        for (int j = j0; j < j1; j++) {
            const double *Kj = Km + (size_t) j * n, *Tj = T + (j - j0) * MK_CB - i0;
#if defined(__GNUC__)
            if (j + MK_PF < j1) {
                const double *Kp = Kj + (size_t) MK_PF * n;
                for (int i = i0; i < i1; i += 8) __builtin_prefetch(Kp + i, 0, 3);
            }
#endif
            double dj = dg[j];
            int is = i0 > j ? i0 : j + 1;
            double t0 = 0.0, t1 = 0.0, t2 = 0.0, t3 = 0.0, am = 0.0, as = 0.0, viol = 0.0;
            double fz = 0.0;     /* x - x is 0 for finite x and NaN otherwise: stays 0 iff finite */
#ifdef _OPENMP
#pragma omp simd reduction(+:t0, t1, t2, t3, fz) reduction(max:am, as, viol)
#endif
            for (int i = is; i < i1; i++) {
                double a = Kj[i], b = Tj[i];
                fz += (a - a) + (b - b);
                double fa = fabs(a), fb = fabs(b), d = fabs(a - b);
                am = fa > am ? fa : am;
                am = fb > am ? fb : am;
                as = d > as ? d : as;
                double v = a * a - dg[i] * dj;
                viol = v > viol ? v : viol;
                t0 += s0[i] * a; t1 += s1[i] * a; t2 += s2[i] * a; t3 += s3[i] * a;
            }
            fin &= (fz == 0.0);
            if (am > amax) amax = am;
            if (as > asym) asym = as;
            q[0] += 2.0 * s0[j] * t0; q[1] += 2.0 * s1[j] * t1;
            q[2] += 2.0 * s2[j] * t2; q[3] += 2.0 * s3[j] * t3;
            if (viol > 0.0)      /* a 2 x 2 minor in this column is negative: find the worst */
                for (int i = is; i < i1; i++) {
                    double a = Kj[i], di = dg[i];
                    if (a * a <= di * dj) continue;
                    double h = 0.5 * (di - dj);
                    double lam = 0.5 * (di + dj) - sqrt(h * h + a * a);
                    if (lam < lam2) { lam2 = lam; li = i; lj = j; }
                }
        }
    }
    r->amax = amax; r->asym = asym; r->mind = mind; r->lam2 = lam2; r->li = li; r->lj = lj;
    r->nonfin = !fin;
    for (int k = 0; k < MK_NRAY; k++) r->q[k] = q[k];
}

/* The smallest eigenvalue of each kernel (dsyevr on a scratch copy), into mineig[]. */
static void min_eigen_all(const double *K, int n, int M, double *mineig)
{
    const size_t nn = (size_t) n * n;
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
        memcpy(A, K + (size_t) m * nn, nn * sizeof(double));
        F77_CALL(dsyevr)("N", "I", "L", &n, A, &n, &vl, &vu, &il, &iu, &abstol, &found, w,
                         &z, &one, isuppz, work, &lwork, iwork, &liwork, &info FCONE FCONE FCONE);
        if (info != 0) error("eigenvalue computation failed for kernel %d", m + 1);
        mineig[m] = w[0];
        R_CheckUserInterrupt();
    }
}

/* Non-finite entries of each of the M slices of length len (level 0). */
static void nonfinite_slices(const double *K, size_t len, int M, int *bad, int nt)
{
    (void) nt;
#ifdef _OPENMP
#pragma omp parallel for if (nt > 1) num_threads(nt) schedule(static)
#endif
    for (int m = 0; m < M; m++) {
        const double *Km = K + (size_t) m * len;
        int fin = 1;
        for (size_t k = 0; k < len; k++) fin &= (Km[k] - Km[k] == 0.0);
        bad[m] = !fin;
    }
}

/* The tile pass of level 1 over every kernel (n x n each): one partial result per kernel and
   tile column, M * ceil(n / MK_CB) of them (R_alloc). */
static kcheck_part *check_tiles(const double *Kp, int n, int M, int nt)
{
    const size_t nn = (size_t) n * n;
    /* fixed sign vectors (xorshift64, fixed seed: the check never touches R's RNG) */
    double *sg = (double *) R_alloc((size_t) MK_NRAY * n, sizeof(double));
    unsigned long long st = 0x9E3779B97F4A7C15ULL;
    for (size_t k = 0; k < (size_t) MK_NRAY * n; k++) {
        st ^= st << 13; st ^= st >> 7; st ^= st << 17;
        sg[k] = (st >> 32) & 1ULL ? 1.0 : -1.0;
    }
    const int ntc = (n + MK_CB - 1) / MK_CB;
    kcheck_part *part = (kcheck_part *) R_alloc((size_t) M * ntc, sizeof(kcheck_part));
    double *dg = (double *) R_alloc((size_t) M * n, sizeof(double));   /* the diagonals */
    for (int m = 0; m < M; m++)
        for (int i = 0; i < n; i++)
            dg[(size_t) m * n + i] = Kp[(size_t) m * nn + (size_t) i * (n + 1)];
    /* tasks (kernel, tile column) in rounds of about 5e7 entries between interrupt checks */
    const size_t ntask = (size_t) M * ntc;
    size_t step = (size_t) (5e7 / ((double) nn / ntc + 1.0)) + 1;
    double tlast = mk_time();
    for (size_t t0 = 0; t0 < ntask; t0 += step) {
        size_t t1 = t0 + step < ntask ? t0 + step : ntask;
        long long a0 = (long long) t0, a1 = (long long) t1;
        (void) nt;
#ifdef _OPENMP
#pragma omp parallel for if (nt > 1) num_threads(nt) schedule(dynamic, 1)
#endif
        for (long long t = a0; t < a1; t++) {
            int m = (int) (t / ntc), jb = (int) (t % ntc);
            check_tile_col(Kp + (size_t) m * nn, dg + (size_t) m * n, n, jb, sg, part + t);
        }
        mk_interrupt_every(&tlast, 0.02);
    }
    return part;
}

SEXP mkc_check_kernels(SEXP K, SEXP level, SEXP nthreads)
{
    SEXP dim = getAttrib(K, R_DimSymbol);
    if (!isReal(K) || LENGTH(dim) != 3) error("'K' must be a double array with three dimensions");
    if (!isInteger(level) || LENGTH(level) != 1 || INTEGER(level)[0] < 0 || INTEGER(level)[0] > 2)
        error("'level' must be 0, 1 or 2");
    if (!isInteger(nthreads) || LENGTH(nthreads) != 1) error("'nthreads' must be one integer");
    int nr = INTEGER(dim)[0], n = INTEGER(dim)[1], M = INTEGER(dim)[2], lev = INTEGER(level)[0];
    const double *Kp = REAL(K);
    const size_t nn = (size_t) nr * n;
    int nt = mk_threads_for(INTEGER(nthreads)[0], (double) nn * M);
    int np = 0;
    SEXP nonfin = PROTECT(allocVector(LGLSXP, M)); np++;
    if (lev == 0) {
        nonfinite_slices(Kp, nn, M, LOGICAL(nonfin), nt);
        const char *nms[] = {"nonfinite", NULL};
        SEXP out = mk_list_new(nms); np++;   /* returned protected */
        mk_list_set(out, "nonfinite", nonfin);
        UNPROTECT(np);
        return out;
    }
    if (nr != n) error("training kernels must be square");
    SEXP asym = PROTECT(allocVector(REALSXP, M)); np++;
    SEXP mind = PROTECT(allocVector(REALSXP, M)); np++;
    SEXP minor = PROTECT(allocVector(REALSXP, M)); np++;
    SEXP pair = PROTECT(allocMatrix(INTSXP, M, 2)); np++;
    SEXP ray = PROTECT(allocVector(REALSXP, M)); np++;
    SEXP eig = PROTECT(allocVector(REALSXP, M)); np++;
    SEXP amaxs = PROTECT(allocVector(REALSXP, M)); np++;
    const int ntc = (n + MK_CB - 1) / MK_CB;
    kcheck_part *part = check_tiles(Kp, n, M, nt);
    for (int m = 0; m < M; m++) {
        kcheck_part r = part[(size_t) m * ntc];
        for (int jb = 1; jb < ntc; jb++) {
            const kcheck_part *p = part + (size_t) m * ntc + jb;
            if (p->amax > r.amax) r.amax = p->amax;
            if (p->asym > r.asym) r.asym = p->asym;
            if (p->mind < r.mind) r.mind = p->mind;
            if (p->lam2 < r.lam2) { r.lam2 = p->lam2; r.li = p->li; r.lj = p->lj; }
            r.nonfin |= p->nonfin;
            for (int k = 0; k < MK_NRAY; k++) r.q[k] += p->q[k];
        }
        double qmin = r.q[0];
        for (int k = 1; k < MK_NRAY; k++) if (r.q[k] < qmin) qmin = r.q[k];
        double s = r.amax > 0.0 ? 1.0 / r.amax : 0.0;
        LOGICAL(nonfin)[m] = r.nonfin;
        REAL(amaxs)[m] = r.amax;
        REAL(asym)[m] = r.asym * s;
        REAL(mind)[m] = r.mind * s;
        REAL(minor)[m] = r.lam2 * s;
        INTEGER(pair)[m] = r.li + 1;
        INTEGER(pair)[m + M] = r.lj + 1;
        REAL(ray)[m] = qmin / n * s;
        REAL(eig)[m] = NA_REAL;
    }
    if (lev == 2) {
        int anybad = 0;
        for (int m = 0; m < M; m++) anybad |= LOGICAL(nonfin)[m];
        if (anybad) error("kernels with non-finite entries have no eigenvalues");
        min_eigen_all(Kp, n, M, REAL(eig));
        for (int m = 0; m < M; m++) {
            /* the largest |eigenvalue| is bounded below by max |K_ij| */
            double a = REAL(amaxs)[m];
            REAL(eig)[m] = a > 0.0 ? REAL(eig)[m] / a : 0.0;
        }
    }
    const char *nms[] = {"nonfinite", "asymmetry", "min_diag", "min_minor", "minor_pair",
                         "min_rayleigh", "min_eigen", "amax", NULL};
    SEXP out = mk_list_new(nms); np++;   /* returned protected */
    mk_list_set(out, "nonfinite", nonfin);
    mk_list_set(out, "asymmetry", asym);
    mk_list_set(out, "min_diag", mind);
    mk_list_set(out, "min_minor", minor);
    mk_list_set(out, "minor_pair", pair);
    mk_list_set(out, "min_rayleigh", ray);
    mk_list_set(out, "min_eigen", eig);
    mk_list_set(out, "amax", amaxs);
    UNPROTECT(np);
    return out;
}
