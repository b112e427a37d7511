/* Shared numerics: statistics of a kernel from one sweep (sqrt(1'K1), a bound of
 * sqrt(lambda_max(PKP)), K 1) and upper bounds of ||x||_K from them and a reference point, in
 * O(n) or, from dots, O(1) per kernel: screening of kernels whose norm stays below a threshold
 * without reading them: SpicyMKL's screening and the SVM family's gradient screening
 * (svmfam.c). State-free plain C: safe inside OpenMP regions.
 */
#define USE_FC_LEN_T
#include "mklearn.h"
#include <R_ext/BLAS.h>
/* no contraction into fused multiply-adds in the MK_CLONES versions: every version rounds as
   the baseline build does (see inst/notes/NOTES-spicy.md) */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize ("fp-contract=off")
#endif
#include <math.h>

/* The constants from the sums of a kernel's sweeps: g = 1'A1, rr = ||A1||^2, tr = tr A,
   fr = ||A||_F^2 and gmax the largest Gershgorin sum of PAP; s1 = sqrt(1'A1) and lc the square
   root of the least of ||PAP||_F (plus a rounding allowance), tr A and gmax. */
static void kstats_finish(int n, double g, double rr, double tr, double fr, double gmax,
                          double *s1, double *lc)
{
    double pf = fr - 2.0 * rr / n + g * g / ((double) n * n);
    if (pf < 0.0) pf = 0.0;
    pf = sqrt(pf) + 1e-12 * sqrt(fr);   /* ||PAP||_F plus a rounding allowance */
    if (tr < pf) pf = tr;
    gmax *= 1.0 + 1e-12;
    if (gmax < pf) pf = gmax;
    *s1 = sqrt(g > 0.0 ? g : 0.0);
    *lc = sqrt(pf > 0.0 ? pf : 0.0);
}

/* One sweep over a kernel: A v, sqrt(1'A1) and sqrt(min(tr A, ||PAP||_F)) with P the centring
   projection; the last two bound ||c 1 + w||_A <= |c| sqrt(1'A1) + sqrt(lambda_max(PAP)) ||w||
   for w orthogonal to 1 (lambda_max(PAP) <= ||PAP||_F, <= lambda_max(A) <= tr A); the
   Gershgorin bound of PAP lowers it further. rs: n doubles of scratch; k1 (or NULL): A 1.
   A computed kernel (K->A NULL) is computed twice, a column at a time. */
MK_CLONES
void mk_kernel_stats(const mk_ksrc *K, const double *v, double *Av, double *s1, double *lc,
                     double *rs, double *k1)
{
    int n = K->n;
    const double *a[1];
    double g = 0.0, fr = 0.0, rr = 0.0, tr = 0.0;
    for (int i = 0; i < n; i++) Av[i] = 0.0;
    for (int j = 0; j < n; j++) {
        mk_ksrc_cols(K, j, 1, 1, a);
        const double *aj = a[0];
        double cs = 0.0, f = 0.0, vj = v[j];
        MK_SIMD_RED(cs, f)
        for (int i = 0; i < n; i++) { double e = aj[i]; Av[i] += e * vj; cs += e; f += e * e; }
        g += cs; rr += cs * cs; tr += aj[j]; fr += f;
        rs[j] = cs / n;   /* column (= row) means */
        if (k1) k1[j] = cs;   /* A 1 */
    }
    /* Gershgorin bound of PAP (tight for the near-diagonal kernels of narrow widths); a second
       pass over the kernel, which is still in cache */
    double gm = g / ((double) n * n), gmax = 0.0;
    for (int j = 0; j < n; j++) {
        mk_ksrc_cols(K, j, 1, 1, a);
        const double *aj = a[0];
        double c = gm - rs[j], t = 0.0;
        MK_SIMD_RED(t)
        for (int i = 0; i < n; i++) t += fabs(aj[i] - rs[i] + c);
        if (t > gmax) gmax = t;
    }
    kstats_finish(n, g, rr, tr, fr, gmax, s1, lc);
}

/* mk_kernel_stats from the upper triangle (from MK_TRI_MIN rows): the same statistics in two
   triangle sweeps instead of two whole-kernel sweeps: from MK_TRI_MIN rows a kernel no longer
   stays in cache between the passes, and the triangles halve the bytes read. Pass 1 is the
   two-vector product [A v, A 1] (mk_symv2; ones: n ones); pass 2 the squares and the Gershgorin
   sums of PAP, whose entries a_ij - m_i - m_j + gm (m: row means, gm: mean entry) are
   symmetric, so each entry of the triangle adds to the sums of its row and of its column.
   t: n doubles of scratch. */
MK_CLONES
void mk_kernel_stats_tri(const mk_ksrc *K, const double *v, const double *ones, double *Av,
                         double *s1, double *lc, double *t, double *k1)
{
    int n = K->n;
    const double *a[MK_SWEEP_COLS];
    mk_symv2(K, v, ones, Av, k1);
    double g = 0.0, rr = 0.0, tr = 0.0, inv = 1.0 / n;
    for (int j = 0; j < n; j++) {
        g += k1[j]; rr += k1[j] * k1[j];
        t[j] = 0.0;
    }
    /* tr A is summed in pass 2, in the same order (the diagonal is read there) */
    double gm = g / ((double) n * n), fo = 0.0, fd = 0.0;
    int j = 0;
    for (; j + 4 <= n; j += 4) {
        mk_ksrc_cols(K, j, 4, 0, a);
        const double *a0 = a[0], *a1 = a[1], *a2 = a[2], *a3 = a[3];
        double c0 = gm - k1[j] * inv, c1 = gm - k1[j + 1] * inv, c2 = gm - k1[j + 2] * inv,
            c3 = gm - k1[j + 3] * inv;
        double s0 = 0.0, s1c = 0.0, s2 = 0.0, s3 = 0.0, f = 0.0;
        MK_SIMD_RED(s0, s1c, s2, s3, f)
        for (int i = 0; i < j; i++) {
            double r = k1[i] * inv, b0 = a0[i], b1 = a1[i], b2 = a2[i], b3 = a3[i];
            double e0 = fabs(b0 - r + c0), e1 = fabs(b1 - r + c1), e2 = fabs(b2 - r + c2),
                e3 = fabs(b3 - r + c3);
            t[i] += (e0 + e1) + (e2 + e3);
            s0 += e0; s1c += e1; s2 += e2; s3 += e3;
            f += (b0 * b0 + b1 * b1) + (b2 * b2 + b3 * b3);
        }
        fo += f;
        double sc[4] = { s0, s1c, s2, s3 }, cc[4] = { c0, c1, c2, c3 };
        for (int c = 0; c < 4; c++) {
            const double *ac = a[c];
            for (int i = j; i < j + c; i++) {
                double e = fabs(ac[i] - k1[i] * inv + cc[c]);
                t[i] += e; sc[c] += e; fo += ac[i] * ac[i];
            }
            double d = ac[j + c];
            t[j + c] += sc[c] + fabs(d - k1[j + c] * inv + cc[c]);
            fd += d * d;
            tr += d;
        }
    }
    for (; j < n; j++) {
        mk_ksrc_cols(K, j, 1, 0, a);
        const double *aj = a[0];
        double cj = gm - k1[j] * inv, sj = 0.0;
        for (int i = 0; i < j; i++) {
            double e = fabs(aj[i] - k1[i] * inv + cj);
            t[i] += e; sj += e; fo += aj[i] * aj[i];
        }
        t[j] += sj + fabs(aj[j] - k1[j] * inv + cj);
        fd += aj[j] * aj[j];
        tr += aj[j];
    }
    double gmax = 0.0;
    for (int i = 0; i < n; i++) if (t[i] > gmax) gmax = t[i];
    kstats_finish(n, g, rr, tr, 2.0 * fo + fd, gmax, s1, lc);
}

/* mean and squared norm of the centred x (two passes: no cancellation) */
void mk_centred(int n, const double *x, double *mx, double *xc2)
{
    double mu = 0.0, ss = 0.0;
    for (int i = 0; i < n; i++) mu += x[i];
    mu /= n;
    for (int i = 0; i < n; i++) { double d = x[i] - mu; ss += d * d; }
    *mx = mu; *xc2 = ss;
}

/* Upper bound of ||x||^2_K from the reference point R->r (K r = R->Kr, ||r||_K = R->nr),
   k1 = K 1 (s11 = 1'K 1) and r_c, x_c the centred vectors: x is split as
     x = a 1 + b r + w,  b = x_c'r_c / ||r_c||^2,  w = x_c - b r_c  (w orthogonal to 1),
   and ||x||^2_K = ||a 1 + b r||^2_K + 2 (a k1 + b Kr)'w + w'K w, where only the last term is
   bounded, by lambda_max(P K P) ||w||^2 <= lc^2 ||w||^2; the others are exact. Growth of x
   along r or a shift of its mean keeps the bound tight. mx, xc2: mean and ||x_c||^2
   (mk_centred); R->rm, rc2, rt: mean(r), ||r_c||^2 and 1'Kr. */
MK_CLONES
double mk_kbound(int n, const double *x, double mx, double xc2, const mk_kref *R)
{
    const double *r = R->r, *k1 = R->k1, *Kr = R->Kr;
    double xr = 0.0, xk = 0.0, xq = 0.0;
    MK_SIMD_RED(xr, xk, xq)
    for (int i = 0; i < n; i++) { xr += x[i] * r[i]; xk += x[i] * k1[i]; xq += x[i] * Kr[i]; }
    return mk_kbound_dots(n, mx, xc2, xr, xk, xq, R);
}

/* the same from the dots xr = x'r, xk = x'k1, xq = x'Kr */
double mk_kbound_dots(int n, double mx, double xc2, double xr, double xk, double xq,
                      const mk_kref *R)
{
    double nr = R->nr, rm = R->rm, rc2 = R->rc2, rt = R->rt, s11 = R->s11, lc = R->lc;
    double p = xr - n * mx * rm;          /* x_c' r_c */
    double b = rc2 > 0.0 ? p / rc2 : 0.0;
    double w2 = xc2 - b * p;              /* ||w||^2 */
    /* rounding allowance of the split (p and w2 lose digits when x is close to a multiple of r) */
    w2 += 1e-13 * (xc2 + fabs(b) * (fabs(xr) + n * fabs(mx * rm)));
    if (w2 < 0.0) w2 = 0.0;
    double a = mx - b * rm;
    double vkv = a * a * s11 + 2.0 * a * b * rt + b * b * nr * nr;
    double k1w = (xk - mx * s11) - b * (rt - rm * s11);
    double krw = (xq - mx * rt) - b * (nr * nr - rm * rt);
    double v = vkv + 2.0 * (a * k1w + b * krw) + lc * lc * w2;
    return v > 0.0 ? v : 0.0;
}

/* out = (x'r, x'k1, x'Kr, d'r, d'k1, d'Kr): the dots of a segment x + c d */
MK_CLONES
void mk_kref_dots2(int n, const double *x, const double *d, const mk_kref *R, double *out)
{
    const double *r = R->r, *k1 = R->k1, *kr = R->Kr;
    double a0 = 0.0, a1 = 0.0, a2 = 0.0, b0 = 0.0, b1 = 0.0, b2 = 0.0;
    MK_SIMD_RED(a0, a1, a2, b0, b1, b2)
    for (int i = 0; i < n; i++) {
        a0 += x[i] * r[i]; a1 += x[i] * k1[i]; a2 += x[i] * kr[i];
        b0 += d[i] * r[i]; b1 += d[i] * k1[i]; b2 += d[i] * kr[i];
    }
    out[0] = a0; out[1] = a1; out[2] = a2; out[3] = b0; out[4] = b1; out[5] = b2;
}

/* ------------------------------------------------------------------ effective neighbours */

/* The effective neighbours per training point of each kernel idx[c] (w NULL: out[c]) or of the
   combination sum_c w_c K_idx[c] (out[0]), averaged over the columns js (0-based): per column
   j, sum_i K[i, j]^2 / K[j, j]^2, NaN (R's NA) when K[j, j] <= 0 in any column. The sums run
   in long double over the squares rounded to double, as R's colSums() and sum(), and the
   combination kernel by kernel in order, as R's matrix-vector product, so the values are R's
   of the same formula. Kernels by chunks of at most MK_NB_CHUNK doubles of columns (the
   combination carried across chunks in order); scratch from R_alloc. For R/store.R
   (kernel_neighbours(), combined_neighbours()), without the n x M garbage per column. */
/* column j's sum_i col[i]^2 / col[j]^2, the sum in long double over the squares in double */
static double nb_ratio(const double *col, int nr, double d)
{
    long double sq = 0.0;
    for (int i = 0; i < nr; i++) { double v = col[i] * col[i]; sq += v; }
    return (double) sq / (d * d);
}

void mk_kernel_neighbours(const mk_store *s, const int *idx, int cnt, const int *js, int nj,
                          const double *w, double *out)
{
    const int nr = s->nr;
    int ch = (int) (MK_NB_CHUNK / nr);
    if (ch < 1) ch = 1;
    if (ch > cnt) ch = cnt;
    double *buf = (double *) R_alloc((size_t) nr * ch, sizeof(double));
    int *ix = (int *) R_alloc(ch, sizeof(int));
    /* the columns' distance scratch once, not one R_alloc per column (R's garbage until the
       call returns: 200 n doubles per check; NOTES-store.md, "R front end") */
    double *base = s->kind == MK_STORE_DENSE ? NULL : (double *) R_alloc(nr, sizeof(double));
    if (w) {
        double *comb = (double *) R_alloc(nr, sizeof(double));
        double acc = 0.0;
        int na = 0;
        for (int t = 0; t < nj; t++) {
            const int j = js[t];
            for (int i = 0; i < nr; i++) comb[i] = 0.0;
            for (int c0 = 0; c0 < cnt; c0 += ch) {
                const int c1 = c0 + ch < cnt ? c0 + ch : cnt;
                for (int c = c0; c < c1; c++) ix[c - c0] = idx ? idx[c] : c;
                mk_store_cols_buf(s, ix, c1 - c0, j, buf, base);
                for (int c = c0; c < c1; c++) {
                    const double *col = buf + (size_t) (c - c0) * nr, wc = w[c];
                    for (int i = 0; i < nr; i++) comb[i] += wc * col[i];
                }
            }
            const double d = comb[j];
            if (!(d > 0.0)) { na = 1; continue; }
            acc += nb_ratio(comb, nr, d);
        }
        out[0] = na ? NA_REAL : acc / nj;
        return;
    }
    for (int c0 = 0; c0 < cnt; c0 += ch) {
        const int c1 = c0 + ch < cnt ? c0 + ch : cnt;
        for (int c = c0; c < c1; c++) { ix[c - c0] = idx ? idx[c] : c; out[c] = 0.0; }
        for (int t = 0; t < nj; t++) {
            const int j = js[t];
            mk_store_cols_buf(s, ix, c1 - c0, j, buf, base);
            for (int c = c0; c < c1; c++) {
                const double *col = buf + (size_t) (c - c0) * nr, d = col[j];
                if (ISNA(out[c])) continue;
                if (!(d > 0.0)) { out[c] = NA_REAL; continue; }
                out[c] += nb_ratio(col, nr, d);
            }
        }
        for (int c = c0; c < c1; c++) if (!ISNA(out[c])) out[c] /= nj;
    }
}

/* The low-rank combination's squares off the diagonal (R/store.R lowrank_offdiag()): A = sum_c
   w_c G_c[is, ] G_c[js, ]' (G_c kernel idx[c]'s factor columns), per column j the sum over rows
   is (every row when NULL) of A[i, j]^2 less the diagonal entry's square where row js[j] is
   among them, the rows taken in blocks of bs consecutive entries of is and the blocks' sums
   added in order from 0. The
   same arithmetic as the R code it replaces (A = 0 + w_c (G_is G_js') kernel by kernel with
   BLAS dgemm, whose entries do not depend on the rows taken together; the squares rounded to
   double and summed per column in long double, as colSums()), by MK_OFFDIAG_ROWS rows at a time:
   scratch of a few hundred rows instead of R's garbage per block (NOTES-store.md). */
void mk_lowrank_offdiag(const mk_store *s, const int *idx, int cnt, const double *w,
                        const int *js, int nj, const int *is, int ni, int bs, double *off)
{
    const int n = s->n, sb = MK_OFFDIAG_ROWS;
    int rmax = 1;
    for (int c = 0; c < cnt; c++) {
        int r = s->goff[idx[c] + 1] - s->goff[idx[c]];
        if (r > rmax) rmax = r;
    }
    double *Gi = (double *) R_alloc((size_t) sb * rmax, sizeof(double));
    /* the columns' factor rows, kernel after kernel (nj x r_c each): the same for every block */
    size_t rsum = 0;
    for (int c = 0; c < cnt; c++) rsum += (size_t) (s->goff[idx[c] + 1] - s->goff[idx[c]]);
    double *Gjall = (double *) R_alloc(rsum > 0 ? (size_t) nj * rsum : 1, sizeof(double));
    for (int c = 0, k0 = 0; c < cnt; c++) {
        const int g0 = s->goff[idx[c]], r = s->goff[idx[c] + 1] - g0;
        for (int k = 0; k < r; k++) {
            const double *g = s->G + (size_t) (g0 + k) * n;
            for (int t = 0; t < nj; t++) Gjall[t + (size_t) (k0 + k) * nj] = g[js[t]];
        }
        k0 += r > 0 ? r : 0;
    }
    double *T = (double *) R_alloc((size_t) sb * nj, sizeof(double));
    double *A = (double *) R_alloc((size_t) sb * nj, sizeof(double));
    double *dg = (double *) R_alloc(nj, sizeof(double));
    int *on = (int *) R_alloc(nj, sizeof(int));
    long double *acc = (long double *) R_alloc(nj, sizeof(long double));
    const double one = 1.0, zero = 0.0;
    for (int t = 0; t < nj; t++) off[t] = 0.0;
    for (int b0 = 0; b0 < ni; b0 += bs) {
        const int b1 = b0 + bs < ni ? b0 + bs : ni;
        for (int t = 0; t < nj; t++) { acc[t] = 0.0; on[t] = 0; }
        for (int i0 = b0; i0 < b1; i0 += sb) {
            const int m = i0 + sb < b1 ? sb : b1 - i0;
            for (size_t e = 0; e < (size_t) m * nj; e++) A[e] = 0.0;
            for (int c = 0, k0 = 0; c < cnt; c++) {
                const int g0 = s->goff[idx[c]], r = s->goff[idx[c] + 1] - g0;
                if (r < 1) continue;
                for (int k = 0; k < r; k++) {
                    const double *g = s->G + (size_t) (g0 + k) * n;
                    for (int i = 0; i < m; i++)
                        Gi[i + (size_t) k * m] = g[is ? is[i0 + i] : i0 + i];
                }
                const double *Gj = Gjall + (size_t) k0 * nj;
                k0 += r;
                F77_CALL(dgemm)("N", "T", &m, &nj, &r, &one, Gi, &m, Gj, &nj, &zero, T, &m
                                FCONE FCONE);
                const double wc = w[c];
                for (size_t e = 0; e < (size_t) m * nj; e++) T[e] = wc * T[e];
                for (size_t e = 0; e < (size_t) m * nj; e++) A[e] = A[e] + T[e];
            }
            for (int t = 0; t < nj; t++) {
                const double *a = A + (size_t) t * m;
                for (int i = 0; i < m; i++) {
                    double v = a[i] * a[i];
                    acc[t] += v;
                    /* the first row of the block that is column js[t]'s own (R's match()) */
                    if (!on[t] && (is ? is[i0 + i] : i0 + i) == js[t]) { on[t] = 1; dg[t] = a[i]; }
                }
            }
        }
        for (int t = 0; t < nj; t++) {
            double o = (double) acc[t];
            if (on[t]) o = o - dg[t] * dg[t];
            off[t] = off[t] + o;
        }
        R_CheckUserInterrupt();
    }
}
