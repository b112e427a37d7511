/* Shared numerics: sweeps over symmetric matrices (kernels, Newton matrices), products and
 * quadratic forms with one or two vectors, in full, upper or packed single-precision storage,
 * threaded by column ranges of equal triangle area; mk_symmat and its product. Used by SpicyMKL,
 * L0/1 (l01.c) and any solver that multiplies by a kernel or a symmetric system matrix; the Gram
 * products A'B of tall matrices (low-rank factors) faster than the reference BLAS. Plain
 * C (no R API): every function is safe inside OpenMP regions but mk_symmat_mv, which opens one.
 */
#include "mklearn.h"
/* no contraction into fused multiply-adds in the MK_CLONES versions: every version rounds as
   the baseline build does (see inst/notes/NOTES-spicy.md) */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize ("fp-contract=off")
#endif
#include <math.h>

/* y1 = K x1 (and y2 = K x2 if x2 != NULL) by whole columns, one sweep over K */
static inline __attribute__((always_inline)) void
symv2_full(const mk_ksrc *K, const double *x1, const double *x2, double *y1, double *y2)
{
    int n = K->n;
    const double *a[1];
    for (int i = 0; i < n; i++) y1[i] = 0.0;
    if (x2) {
        for (int i = 0; i < n; i++) y2[i] = 0.0;
        for (int j = 0; j < n; j++) {
            mk_ksrc_cols(K, j, 1, 1, a);
            const double *aj = a[0];
            double a1 = x1[j], a2 = x2[j];
            MK_SIMD
            for (int i = 0; i < n; i++) { y1[i] += aj[i] * a1; y2[i] += aj[i] * a2; }
        }
    } else {
        for (int j = 0; j < n; j++) {
            mk_ksrc_cols(K, j, 1, 1, a);
            const double *aj = a[0];
            double a1 = x1[j];
            MK_SIMD
            for (int i = 0; i < n; i++) y1[i] += aj[i] * a1;
        }
    }
}

MK_CLONES
void mk_symv2_full(const double *A, int n, const double *x1, const double *x2, double *y1,
                   double *y2)
{
    mk_ksrc K = { .A = A, .n = n };
    symv2_full(&K, x1, x2, y1, y2);
}

/* v'K v by whole columns */
static inline __attribute__((always_inline)) double quad_full(const mk_ksrc *K, const double *v)
{
    int n = K->n;
    const double *a[1];
    double s = 0.0;
    for (int j = 0; j < n; j++) {
        mk_ksrc_cols(K, j, 1, 1, a);
        const double *aj = a[0];
        double t = 0.0;
        MK_SIMD_RED(t)
        for (int i = 0; i < n; i++) t += aj[i] * v[i];
        s += v[j] * t;
    }
    return s;
}

MK_CLONES
double mk_quad_full(const double *A, int n, const double *v)
{
    mk_ksrc K = { .A = A, .n = n };
    return quad_full(&K, v);
}

/* y[0..j1) = A[, j0..j1) x[j0..j1), the upper triangle of columns j0 <= j < j1 of A (rows of
   the triangle above them and their transposes: together over a partition of 0..n, y = A x).
   One template for two storages: COL(j) points to rows 0..j of column j (type T), R is the type
   of x, y and the arithmetic, and DIAG(aj, j, xj) is the diagonal term (a packed single-precision
   Newton matrix keeps its diagonal apart, see mk_symmat). */
#define MK_SYMV_COLS(NAME, T, R, COL, DIAG)                                                        \
MK_CLONES                                                                                          \
void NAME(const T *A, int n, const R *x, R *y, int j0, int j1)                                     \
{                                                                                                  \
    (void) n;                                                                                      \
    for (int i = 0; i < j1; i++) y[i] = 0;                                                         \
    int j = j0;                                                                                    \
    for (; j + 4 <= j1; j += 4) {                                                                  \
        const T *a0 = COL(j), *a1 = COL(j + 1), *a2 = COL(j + 2), *a3 = COL(j + 3);                \
        R p0 = x[j], p1 = x[j + 1], p2 = x[j + 2], p3 = x[j + 3];                                  \
        R s0 = 0, s1 = 0, s2 = 0, s3 = 0;                                                          \
        MK_SIMD_RED(s0, s1, s2, s3)                                                                \
        for (int i = 0; i < j; i++) {                                                              \
            R b0 = a0[i], b1 = a1[i], b2 = a2[i], b3 = a3[i], u = x[i];                            \
            y[i] += (b0 * p0 + b1 * p1) + (b2 * p2 + b3 * p3);                                     \
            s0 += b0 * u; s1 += b1 * u; s2 += b2 * u; s3 += b3 * u;                                \
        }                                                                                          \
        R sc[4] = { s0, s1, s2, s3 };                                                              \
        for (int c = 0; c < 4; c++) {                                                              \
            const T *ac = COL(j + c);                                                              \
            R xc = x[j + c];                                                                       \
            for (int i = j; i < j + c; i++) { y[i] += ac[i] * xc; sc[c] += ac[i] * x[i]; }         \
            y[j + c] += sc[c] DIAG(ac, j + c, xc);                                                 \
        }                                                                                          \
    }                                                                                              \
    for (; j < j1; j++) {                                                                          \
        const T *aj = COL(j);                                                                      \
        R xj = x[j], s = 0;                                                                        \
        for (int i = 0; i < j; i++) { y[i] += aj[i] * xj; s += aj[i] * x[i]; }                     \
        y[j] += s DIAG(aj, j, xj);                                                                 \
    }                                                                                              \
}
#define MK_COL_FULL(j) (A + (size_t) (j) * n)
#define MK_COL_PACKED(j) (A + (size_t) (j) * ((j) + 1) / 2)
#define MK_DIAG_IN(a, j, x) + (a)[j] * (x)
#define MK_DIAG_APART(a, j, x)
MK_SYMV_COLS(mk_symv_upper_cols, double, double, MK_COL_FULL, MK_DIAG_IN)
/* the packed single-precision triangle without its diagonal, in double arithmetic */
MK_SYMV_COLS(mk_symv_packed_cols, float, double, MK_COL_PACKED, MK_DIAG_APART)
/* and in single-precision arithmetic (mk_symmat.fast): these products are bound by the
   arithmetic, which float does at twice the width (see inst/notes/NOTES-spicy.md) */
MK_SYMV_COLS(mk_symv_packed_colsf, float, float, MK_COL_PACKED, MK_DIAG_APART)

/* y = A x, upper triangle of A */
void mk_symv_upper(const double *A, int n, const double *x, double *y)
{
    mk_symv_upper_cols(A, n, x, y, 0, n);
}

/* y1 (and y2) += the upper-triangle block of columns j..j+3 (a[c]: column j + c, rows 0..j + c)
   times x1 (x2) plus its transpose: a step of mk_symv2, the rounding of mk_symv_upper_cols */
static inline __attribute__((always_inline)) void
symv2_block4(const double *const *a, int j, const double *x1, const double *x2, double *y1,
             double *y2)
{
    const double *a0 = a[0], *a1 = a[1], *a2 = a[2], *a3 = a[3];
    double p0 = x1[j], p1 = x1[j + 1], p2 = x1[j + 2], p3 = x1[j + 3];
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0, t0 = 0.0, t1 = 0.0, t2 = 0.0, t3 = 0.0;
    if (x2) {
        double q0 = x2[j], q1 = x2[j + 1], q2 = x2[j + 2], q3 = x2[j + 3];
        MK_SIMD_RED(s0, s1, s2, s3, t0, t1, t2, t3)
        for (int i = 0; i < j; i++) {
            double b0 = a0[i], b1 = a1[i], b2 = a2[i], b3 = a3[i], u = x1[i], w = x2[i];
            y1[i] += (b0 * p0 + b1 * p1) + (b2 * p2 + b3 * p3);
            y2[i] += (b0 * q0 + b1 * q1) + (b2 * q2 + b3 * q3);
            s0 += b0 * u; s1 += b1 * u; s2 += b2 * u; s3 += b3 * u;
            t0 += b0 * w; t1 += b1 * w; t2 += b2 * w; t3 += b3 * w;
        }
    } else {
        MK_SIMD_RED(s0, s1, s2, s3)
        for (int i = 0; i < j; i++) {
            double b0 = a0[i], b1 = a1[i], b2 = a2[i], b3 = a3[i], u = x1[i];
            y1[i] += (b0 * p0 + b1 * p1) + (b2 * p2 + b3 * p3);
            s0 += b0 * u; s1 += b1 * u; s2 += b2 * u; s3 += b3 * u;
        }
    }
    double sc[4] = { s0, s1, s2, s3 }, tc[4] = { t0, t1, t2, t3 };
    for (int c = 0; c < 4; c++) {
        const double *ac = a[c];
        double uc = x1[j + c], wc = x2 ? x2[j + c] : 0.0;
        for (int i = j; i < j + c; i++) {
            y1[i] += ac[i] * uc; sc[c] += ac[i] * x1[i];
            if (x2) { y2[i] += ac[i] * wc; tc[c] += ac[i] * x2[i]; }
        }
        y1[j + c] += sc[c] + ac[j + c] * uc;
        if (x2) y2[j + c] += tc[c] + ac[j + c] * wc;
    }
}

/* the same for one column j */
static inline __attribute__((always_inline)) void
symv2_col(const double *aj, int j, const double *x1, const double *x2, double *y1, double *y2)
{
    double uj = x1[j], wj = x2 ? x2[j] : 0.0, s = 0.0, t = 0.0;
    for (int i = 0; i < j; i++) {
        y1[i] += aj[i] * uj; s += aj[i] * x1[i];
        if (x2) { y2[i] += aj[i] * wj; t += aj[i] * x2[i]; }
    }
    y1[j] += s + aj[j] * uj;
    if (x2) y2[j] += t + aj[j] * wj;
}

/* y1 = K x1 and y2 = K x2 (x2 == NULL: y1 only) in one sweep over a kernel: its upper triangle
   by blocks of MK_SWEEP_COLS columns from MK_TRI_MIN rows, whole columns below; a computed
   kernel (K->A NULL) gives the same sums as the whole one */
MK_CLONES
void mk_symv2(const mk_ksrc *K, const double *x1, const double *x2, double *y1, double *y2)
{
    int n = K->n;
    const double *a[MK_SWEEP_COLS];
    if (n < MK_TRI_MIN) { symv2_full(K, x1, x2, y1, y2); return; }
    if (!x2 && K->A) { mk_symv_upper(K->A, n, x1, y1); return; }
    for (int i = 0; i < n; i++) y1[i] = 0.0;
    if (x2) for (int i = 0; i < n; i++) y2[i] = 0.0;
    int j = 0;
    for (; j + 4 <= n; j += 4) {
        mk_ksrc_cols(K, j, 4, 0, a);
        symv2_block4(a, j, x1, x2, y1, y2);
    }
    for (; j < n; j++) {
        mk_ksrc_cols(K, j, 1, 0, a);
        symv2_col(a[0], j, x1, x2, y1, y2);
    }
}

/* v'K v for a kernel: from its upper triangle from MK_TRI_MIN rows, whole columns below */
MK_CLONES
double mk_quad(const mk_ksrc *K, const double *v)
{
    int n = K->n;
    const double *a[MK_SWEEP_COLS];
    if (n < MK_TRI_MIN) return quad_full(K, v);
    double off = 0.0, dg = 0.0;
    int j = 0;
    for (; j + 4 <= n; j += 4) {
        mk_ksrc_cols(K, j, 4, 0, a);
        const double *a0 = a[0], *a1 = a[1], *a2 = a[2], *a3 = a[3];
        double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
        MK_SIMD_RED(s0, s1, s2, s3)
        for (int i = 0; i < j; i++) {
            double u = v[i];
            s0 += a0[i] * u; s1 += a1[i] * u; s2 += a2[i] * u; s3 += a3[i] * u;
        }
        double sc[4] = { s0, s1, s2, s3 };
        for (int c = 0; c < 4; c++) {
            const double *ac = a[c];
            for (int i = j; i < j + c; i++) sc[c] += ac[i] * v[i];
            off += v[j + c] * sc[c];
            dg += ac[j + c] * v[j + c] * v[j + c];
        }
    }
    for (; j < n; j++) {
        mk_ksrc_cols(K, j, 1, 0, a);
        const double *aj = a[0];
        double s = 0.0;
        for (int i = 0; i < j; i++) s += aj[i] * v[i];
        off += v[j] * s;
        dg += aj[j] * v[j] * v[j];
    }
    return 2.0 * off + dg;
}

double mk_symmat_diag(const mk_symmat *A, int i)
{
    return A->P ? A->dg[i] : A->H[(size_t) i * A->n + i];
}

void mk_symmat_set_diag(mk_symmat *A, int i, double v)
{
    if (A->P) A->dg[i] = v; else A->H[(size_t) i * A->n + i] = v;
}

/* entry (i, j), i <= j */
double mk_symmat_entry(const void *Av, int i, int j)
{
    const mk_symmat *A = (const mk_symmat *) Av;
    if (!A->P) return A->H[(size_t) j * A->n + i];
    return i == j ? A->dg[i] : (double) A->P[(size_t) j * (j + 1) / 2 + i] + A->gb;
}

/* Columns [*j0, *j1) of thread t of T: ranges of equal upper-triangle area over 0..n */
void mk_tri_cols(int n, int t, int T, int *j0, int *j1)
{
    *j0 = t == 0 ? 0 : (int) (n * sqrt((double) t / T));
    *j1 = t == T - 1 ? n : (int) (n * sqrt((double) (t + 1) / T));
    if (*j1 < *j0) *j1 = *j0;
}

/* q[0..j1) = the columns j0 <= j < j1 of the upper triangle times p (see MK_SYMV_COLS); fast:
   from A->xf (p in float) through yf, the thread's float result */
static void symmat_cols(const mk_symmat *A, const double *p, double *q, float *yf, int j0,
                        int j1)
{
    if (A->P && A->fast) {
        mk_symv_packed_colsf(A->P, A->n, A->xf, yf, j0, j1);
        for (int i = 0; i < j1; i++) q[i] = yf[i];
    } else if (A->P) mk_symv_packed_cols(A->P, A->n, p, q, j0, j1);
    else mk_symv_upper_cols(A->H, A->n, p, q, j0, j1);
}

/* q += diag and bias parts of a packed matrix */
static void symmat_finish(const mk_symmat *A, const double *p, double *q)
{
    if (!A->P) return;
    int n = A->n;
    double sp = 0.0;
    for (int i = 0; i < n; i++) sp += p[i];
    for (int i = 0; i < n; i++) q[i] += A->gb * (sp - p[i]) + A->dg[i] * p[i];
}

/* q = A p on nt threads: column ranges of equal triangle area, each thread's part in its own
   n doubles of qt, summed after */
void mk_symmat_mv(const mk_symmat *A, const double *p, double *q, int nt, double *qt)
{
    int n = A->n;
    if (A->P && A->fast) for (int i = 0; i < n; i++) A->xf[i] = (float) p[i];
#ifdef _OPENMP
    if (nt > 1) {
        int used = 1;
#pragma omp parallel num_threads(nt)
        {
            int t = omp_get_thread_num(), T = omp_get_num_threads(), j0, j1;
            mk_tri_cols(n, t, T, &j0, &j1);
            double *qp = qt + (size_t) t * n;
            if (t == 0) used = T;
            symmat_cols(A, p, qp, A->yf ? A->yf + (size_t) t * n : NULL, j0, j1);
            for (int i = j1; i < n; i++) qp[i] = 0.0;
        }
        for (int i = 0; i < n; i++) {
            double v = 0.0;
            for (int t = 0; t < used; t++) v += qt[(size_t) t * n + i];
            q[i] = v;
        }
        symmat_finish(A, p, q);
        return;
    }
#endif
    (void) nt; (void) qt;
    symmat_cols(A, p, q, A->yf, 0, n);
    symmat_finish(A, p, q);
}

/* a'b, summed in index order */
double mk_dot(int n, const double *a, const double *b)
{
    double s = 0.0;
    for (int i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

/* a'b in four partial sums (independent chains of additions: a serial reduction is not
   vectorised at -O2, and the pass would be bound by their latency), added in a fixed order */
MK_CLONES double mk_dot4(int n, const double *a, const double *b)
{
    double t0 = 0.0, t1 = 0.0, t2 = 0.0, t3 = 0.0;
    int j = 0;
    for (; j + 3 < n; j += 4) {
        t0 += a[j] * b[j]; t1 += a[j + 1] * b[j + 1];
        t2 += a[j + 2] * b[j + 2]; t3 += a[j + 3] * b[j + 3];
    }
    for (; j < n; j++) t0 += a[j] * b[j];
    return (t0 + t1) + (t2 + t3);
}

/* s[j + 2 c] = sum_{i0 <= i < i1} a_j[i] b_c[i] for two columns a_j and four b_c: eight
   accumulators, the columns read once (the reference BLAS dgemm takes one dot at a time) */
MK_CLONES
static void gram_tile(const double *a0, const double *a1, const double *b0, const double *b1,
                      const double *b2, const double *b3, int i0, int i1, double *s)
{
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0, s4 = 0.0, s5 = 0.0, s6 = 0.0, s7 = 0.0;
    MK_SIMD_RED(s0, s1, s2, s3, s4, s5, s6, s7)
    for (int i = i0; i < i1; i++) {
        double x0 = a0[i], x1 = a1[i];
        s0 += x0 * b0[i]; s1 += x1 * b0[i]; s2 += x0 * b1[i]; s3 += x1 * b1[i];
        s4 += x0 * b2[i]; s5 += x1 * b2[i]; s6 += x0 * b3[i]; s7 += x1 * b3[i];
    }
    s[0] = s0; s[1] = s1; s[2] = s2; s[3] = s3; s[4] = s4; s[5] = s5; s[6] = s6; s[7] = s7;
}

/* C += al A'B by blocks of MK_XPROD_ROWS rows (a block of A stays in cache while the columns
   of B pass), the blocks' sums added in row order; sym (A = B): the upper triangle only. Edge
   tiles repeat the last column and drop its sums. */
void mk_crossprod_acc(int nr, int ld, int ra, int rb, double al, const double *A,
                      const double *B, int sym, double *C, int ldc)
{
    double s[8];
    for (int i0 = 0; i0 < nr; i0 += MK_XPROD_ROWS) {
        int i1 = i0 + MK_XPROD_ROWS < nr ? i0 + MK_XPROD_ROWS : nr;
        for (int c = 0; c < rb; c += 4) {
            const double *bc[4];
            for (int j = 0; j < 4; j++) bc[j] = B + (size_t) (c + j < rb ? c + j : rb - 1) * ld;
            int qe = sym ? (c + 4 < ra ? c + 4 : ra) : ra;
            for (int q = 0; q < qe; q += 2) {
                const double *a0 = A + (size_t) q * ld, *a1 = q + 1 < ra ? a0 + ld : a0;
                gram_tile(a0, a1, bc[0], bc[1], bc[2], bc[3], i0, i1, s);
                for (int j = 0; j < 4 && c + j < rb; j++)
                    for (int h = 0; h < 2 && q + h < ra && (!sym || q + h <= c + j); h++)
                        C[q + h + (size_t) (c + j) * ldc] += al * s[h + 2 * j];
            }
        }
    }
}

void mk_crossprod(int n, int ra, int rb, const double *A, const double *B, int sym, double *C,
                  int ldc)
{
    for (int c = 0; c < rb; c++) for (int q = 0; q < ra; q++) C[q + (size_t) c * ldc] = 0.0;
    mk_crossprod_acc(n, n, ra, rb, 1.0, A, sym ? A : B, sym, C, ldc);
    if (sym)
        for (int c = 0; c < rb; c++)
            for (int q = c + 1; q < ra; q++) C[q + (size_t) c * ldc] = C[c + (size_t) q * ldc];
}

void mk_symmat_op_mv(void *ctx, const double *p, double *q)
{
    const mk_symmat_op *o = (const mk_symmat_op *) ctx;
    mk_symmat_mv(o->A, p, q, o->nt, o->qt);
}
