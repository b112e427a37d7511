/* The low-rank store's factors: pivoted incomplete Cholesky of each kernel of a fly training
 * store (greedy on the largest residual diagonal; kernel m costs r_m exact columns and
 * O(n r_m^2) updates), stopping at a relative residual-trace tolerance or a rank cap; the
 * training normalisation applied to the factors; and, for new rows, the test factors or the
 * decision values from r_m kernel evaluations per row and kernel (the triangular solve on the
 * pivot rows is done once on the coefficients for decision values). Threads take kernels
 * (factorisation, test factors) or blocks of rows (decision values). inst/notes/NOTES-store.md
 */
#include "store.h"
#include <math.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>

/* one kernel's raw factor while it grows: L (n x cap, column-major) and its pivots */
typedef struct {
    double *L;
    int *piv, r, cap, fail;
    double trace, resid;   /* raw trace and residual trace trace(K - L L') */
} lr_fac;

static int fac_grow(lr_fac *f, int n, int cap)
{
    double *L = (double *) realloc(f->L, (size_t) n * cap * sizeof(double));
    if (!L) return 0;
    f->L = L;
    int *p = (int *) realloc(f->piv, (size_t) cap * sizeof(int));
    if (!p) return 0;
    f->piv = p;
    f->cap = cap;
    return 1;
}

/* col -= L[, 0..r-1] b, four columns per pass over col */
static void sub_cols(const double *L, int n, int r, const double *b, double *restrict col)
{
    int k = 0;
    for (; k + 3 < r; k += 4) {
        const double *a0 = L + (size_t) k * n, *a1 = a0 + n, *a2 = a1 + n, *a3 = a2 + n;
        double b0 = b[k], b1 = b[k + 1], b2 = b[k + 2], b3 = b[k + 3];
        for (int i = 0; i < n; i++) col[i] -= (a0[i] * b0 + a1[i] * b1) + (a2[i] * b2 + a3[i] * b3);
    }
    for (; k < r; k++) {
        const double *a = L + (size_t) k * n;
        double bk = b[k];
        for (int i = 0; i < n; i++) col[i] -= a[i] * bk;
    }
}

/* Pivoted incomplete Cholesky of raw kernel m: pivots while the residual trace exceeds
   tol * trace, fewer than rmax pivots are taken and the largest residual diagonal is above
   1e-13 of the largest diagonal (rounding). Scratch d, col: n doubles; lp: rmax doubles. */
static void fac_kernel(const mk_store *s, int m, double tol, int rmax, lr_fac *f, double *d,
                       double *col, double *lp)
{
    int n = s->n, r = 0;
    store_fly_raw_diag(s, m, d);
    double tr = 0.0, dmax = 0.0;
    for (int i = 0; i < n; i++) { tr += d[i]; if (d[i] > dmax) dmax = d[i]; }
    double res = 0.0;
    for (int i = 0; i < n; i++) { if (d[i] < 0.0) d[i] = 0.0; res += d[i]; }
    f->trace = tr;
    double stop = tol * tr, floor_d = 1e-13 * dmax;
    while (r < rmax && res > stop) {
        int p = -1;
        double dp = floor_d;
        for (int i = 0; i < n; i++) if (d[i] > dp) { dp = d[i]; p = i; }
        if (p < 0) break;
        if (r == f->cap) {
            int cap = f->cap < 8 ? 16 : 2 * f->cap;
            if (!fac_grow(f, n, cap < rmax ? cap : rmax)) { f->fail = 1; break; }
        }
        double *L = f->L, *Lr = L + (size_t) r * n;
        store_fly_raw(s, m, p, 0, n, col);
        for (int k = 0; k < r; k++) lp[k] = L[(size_t) k * n + p];
        sub_cols(L, n, r, lp, col);
        double sq = sqrt(dp), inv = 1.0 / sq;
        for (int i = 0; i < n; i++) Lr[i] = col[i] * inv;
        for (int k = 0; k < r; k++) Lr[f->piv[k]] = 0.0;   /* zero in exact arithmetic */
        Lr[p] = sq;
        res = 0.0;
        for (int i = 0; i < n; i++) {
            double v = d[i] - Lr[i] * Lr[i];
            d[i] = v > 0.0 ? v : 0.0;
            res += d[i];
        }
        d[p] = 0.0;
        f->piv[r++] = p;
    }
    f->r = r;
    f->resid = res;
}

/* Kernel m's normalised factor into G (n x r) and its pivot rows into Lp (r x r, lower
   triangular): trace, G = L / sqrt(s) with s the exact raw trace; centre + trace,
   G = (L - 1 lbar') / sqrt(s) with s = trace - n |lbar|^2, the trace of the centred L L' off the
   diagonal and of K on it (equal to the dense scale at full rank). */
static void fac_normalise(const mk_store *s, const lr_fac *f, double *G, double *Lp, double *lbar,
                          double *scale)
{
    int n = s->n, r = f->r;
    double sc = f->trace;
    for (int k = 0; k < r; k++) lbar[k] = 0.0;
    if (s->norm == MK_NORM_CENTER_TRACE) {
        for (int k = 0; k < r; k++) {
            const double *a = f->L + (size_t) k * n;
            double t = 0.0;
            for (int i = 0; i < n; i++) t += a[i];
            lbar[k] = t / n;
            sc -= n * lbar[k] * lbar[k];
        }
    }
    if (s->norm == MK_NORM_NONE || !(sc > 0.0)) sc = 1.0;
    *scale = sc;
    double inv = 1.0 / sqrt(sc);
    for (int k = 0; k < r; k++) {
        const double *a = f->L + (size_t) k * n;
        double *g = G + (size_t) k * n, c = lbar[k];
        for (int i = 0; i < n; i++) g[i] = (a[i] - c) * inv;
        for (int c2 = 0; c2 < r; c2++) Lp[(size_t) k * r + c2] = a[f->piv[c2]];
    }
}

/* The factorisation of every kernel of a fly training store (statistics not needed):
   list(G, goff, piv (1-based), Lp (each kernel's r x r pivot rows, one after the other),
   lbar, scale, trace, resid) with tol the relative residual-trace tolerance and rank the cap. */
SEXP mkc_store_lowrank(SEXP store, SEXP tol, SEXP rank)
{
    mk_store st;
    mk_store_read(store, &st);
    if (st.kind != MK_STORE_FLY || !st.square)
        error("the factorisation needs a fly training store");
    double tl = asReal(tol);
    int rmax = asInteger(rank), n = st.n, M = st.M;
    if (!(tl >= 0.0) || rmax == NA_INTEGER || rmax < 1) error("'tol' and 'rank' are invalid");
    if (rmax > n) rmax = n;
    lr_fac *f = (lr_fac *) R_alloc(M, sizeof(lr_fac));
    memset(f, 0, (size_t) M * sizeof(lr_fac));
    int nt = mk_threads_for(st.nthreads, (double) n * rmax * (rmax + 8.0) * M);
    double *scr = (double *) R_alloc((size_t) nt * (2 * (size_t) n + rmax), sizeof(double));
    (void) nt;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
#endif
    for (int m = 0; m < M; m++) {
        double *b = THREAD_BUF(scr, 2 * (size_t) n + rmax);
        fac_kernel(&st, m, tl, rmax, f + m, b, b + n, b + 2 * (size_t) n);
    }
    int fail = 0;
    R_xlen_t R = 0, R2 = 0;
    for (int m = 0; m < M; m++) {
        fail |= f[m].fail;
        R += f[m].r;
        R2 += (R_xlen_t) f[m].r * f[m].r;
    }
    if (R > INT_MAX) error("the low-rank factors have more than 2^31 columns");
    if (fail) {
        for (int m = 0; m < M; m++) { free(f[m].L); free(f[m].piv); }
        error("the low-rank factorisation could not allocate its factors");
    }
    const char *nm[] = { "G", "goff", "piv", "Lp", "lbar", "scale", "trace", "resid", NULL };
    SEXP out = mk_list_new(nm);
    /* each element is set as soon as it is allocated (protected by the list) */
    SEXP G = allocMatrix(REALSXP, n, (int) R);
    mk_list_set(out, "G", G);
    SEXP go = allocVector(INTSXP, M + 1);
    mk_list_set(out, "goff", go);
    SEXP pv = allocVector(INTSXP, R);
    mk_list_set(out, "piv", pv);
    SEXP Lp = allocVector(REALSXP, R2);
    mk_list_set(out, "Lp", Lp);
    SEXP lb = allocVector(REALSXP, R);
    mk_list_set(out, "lbar", lb);
    SEXP sc = allocVector(REALSXP, M);
    mk_list_set(out, "scale", sc);
    SEXP tr = allocVector(REALSXP, M);
    mk_list_set(out, "trace", tr);
    SEXP rs = allocVector(REALSXP, M);
    mk_list_set(out, "resid", rs);
    size_t *loff = (size_t *) R_alloc(M + 1, sizeof(size_t));
    INTEGER(go)[0] = 0; loff[0] = 0;
    for (int m = 0; m < M; m++) {
        INTEGER(go)[m + 1] = INTEGER(go)[m] + f[m].r;
        loff[m + 1] = loff[m] + (size_t) f[m].r * f[m].r;
        for (int k = 0; k < f[m].r; k++) INTEGER(pv)[INTEGER(go)[m] + k] = f[m].piv[k] + 1;
        REAL(tr)[m] = f[m].trace;
        REAL(rs)[m] = f[m].resid;
    }
    const int *goff = INTEGER(go);
    double *g = REAL(G), *lp = REAL(Lp), *lbar = REAL(lb), *scale = REAL(sc);
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
#endif
    for (int m = 0; m < M; m++) {
        fac_normalise(&st, f + m, g + (size_t) goff[m] * n, lp + loff[m], lbar + goff[m],
                      scale + m);
        free(f[m].L); free(f[m].piv);
    }
    UNPROTECT(1);
    return out;
}

/* ------------------------------------------------------------------ new rows */

/* the pieces of the factorisation of the kernels of a test store (one entry per kernel) */
typedef struct { const int *piv, *goff; const double *Lp, *lbar, *scale; size_t *loff; } lr_pred;

static void read_pred(SEXP fac, int M, lr_pred *p)
{
    SEXP go = mk_list_elt(fac, "goff", "low-rank factors: entry");
    if (!isInteger(go) || LENGTH(go) != M + 1) error("low-rank factors: 'goff' must be M + 1");
    p->goff = INTEGER(go);
    int R = p->goff[M];
    p->loff = (size_t *) R_alloc(M + 1, sizeof(size_t));
    p->loff[0] = 0;
    for (int m = 0; m < M; m++) {
        int r = p->goff[m + 1] - p->goff[m];
        if (r < 0) error("low-rank factors: 'goff' must not decrease");
        p->loff[m + 1] = p->loff[m] + (size_t) r * r;
    }
    SEXP pv = mk_list_elt(fac, "piv", "low-rank factors: entry");
    SEXP Lp = mk_list_elt(fac, "Lp", "low-rank factors: entry");
    SEXP lb = mk_list_elt(fac, "lbar", "low-rank factors: entry");
    SEXP sc = mk_list_elt(fac, "scale", "low-rank factors: entry");
    if (!isInteger(pv) || LENGTH(pv) != R || !isReal(Lp) || (size_t) XLENGTH(Lp) != p->loff[M] ||
        !isReal(lb) || LENGTH(lb) != R || !isReal(sc) || LENGTH(sc) != M)
        error("low-rank factors: malformed 'piv', 'Lp', 'lbar' or 'scale'");
    p->piv = INTEGER(pv);
    p->Lp = REAL(Lp);
    p->lbar = REAL(lb);
    p->scale = REAL(sc);
}

/* kernel m's test factor (nr x r, leading dimension nr): raw columns at the pivots, the
   forward solve with the pivot rows, then the training normalisation */
static void test_factor(const mk_store *s, const lr_pred *p, int m, double *Z)
{
    int nr = s->nr, r = p->goff[m + 1] - p->goff[m];
    const int *piv = p->piv + p->goff[m];
    const double *Lp = p->Lp + p->loff[m], *lbar = p->lbar + p->goff[m];
    for (int c = 0; c < r; c++) {
        double *zc = Z + (size_t) c * nr;
        store_fly_raw(s, m, piv[c] - 1, 0, nr, zc);
        for (int l = 0; l < c; l++) {
            double a = Lp[(size_t) l * r + c];
            const double *zl = Z + (size_t) l * nr;
            if (a != 0.0) for (int i = 0; i < nr; i++) zc[i] -= a * zl[i];
        }
        double inv = 1.0 / Lp[(size_t) c * r + c];
        for (int i = 0; i < nr; i++) zc[i] *= inv;
    }
    double inv = 1.0 / sqrt(p->scale[m]);
    for (int c = 0; c < r; c++) {
        double *zc = Z + (size_t) c * nr, lb = lbar[c];
        for (int i = 0; i < nr; i++) zc[i] = (zc[i] - lb) * inv;
    }
}

/* w = Lp^-T beta / sqrt(scale) (back substitution), and the constant lbar'beta / sqrt(scale) */
static double coef_solve(const lr_pred *p, int m, const double *beta, double *w)
{
    int r = p->goff[m + 1] - p->goff[m];
    const double *Lp = p->Lp + p->loff[m], *lbar = p->lbar + p->goff[m];
    double inv = 1.0 / sqrt(p->scale[m]), c0 = 0.0;
    for (int c = r - 1; c >= 0; c--) {
        double v = beta[c];
        for (int l = c + 1; l < r; l++) v -= Lp[(size_t) c * r + l] * w[l];
        w[c] = v / Lp[(size_t) c * r + c];
    }
    for (int c = 0; c < r; c++) { c0 += lbar[c] * beta[c]; w[c] *= inv; }
    return c0 * inv;
}

/* New rows of a fly test store (raw kernels: its normalisation is the factors'), with fac the
   factorisation's pieces for its kernels: beta NULL gives the test factors Gz (nr x R); beta
   (R doubles, G_m' alpha_m per kernel) gives the decision values sum_m Gz_m beta_m. */
SEXP mkc_store_lowrank_test(SEXP store, SEXP fac, SEXP beta)
{
    mk_store st;
    mk_store_read(store, &st);
    if (st.kind != MK_STORE_FLY || st.square) error("new rows need a fly test store");
    int nr = st.nr, M = st.M;
    lr_pred p;
    read_pred(fac, M, &p);
    int R = p.goff[M];
    if (isNull(beta)) {
        SEXP Z = PROTECT(allocMatrix(REALSXP, nr, R));
        double *z = REAL(Z);
        int nt = mk_threads_for(st.nthreads, (double) nr * R * (st.p + R / (M > 0 ? M : 1)));
        (void) nt;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
#endif
        for (int m = 0; m < M; m++) test_factor(&st, &p, m, z + (size_t) p.goff[m] * nr);
        UNPROTECT(1);
        return Z;
    }
    if (!isReal(beta) || LENGTH(beta) != R) error("'beta' must have one value per factor column");
    double *w = (double *) R_alloc(R > 0 ? R : 1, sizeof(double)), c0 = 0.0;
    for (int m = 0; m < M; m++) c0 += coef_solve(&p, m, REAL(beta) + p.goff[m], w + p.goff[m]);
    SEXP out = PROTECT(allocVector(REALSXP, nr));
    double *f = REAL(out);
    const int B = 256;
    int nblk = (nr + B - 1) / B;
    int nt = mk_threads_for(st.nthreads, (double) nr * R * st.p);
    if (nt > nblk) nt = nblk;
    double *scr = (double *) R_alloc((size_t) (nt > 0 ? nt : 1) * B, sizeof(double));
    (void) nt;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
#endif
    for (int blk = 0; blk < nblk; blk++) {
        int i0 = blk * B, i1 = i0 + B < nr ? i0 + B : nr, len = i1 - i0;
        double *b = THREAD_BUF(scr, B), *o = f + i0;
        for (int i = 0; i < len; i++) o[i] = -c0;
        for (int m = 0; m < M; m++)
            for (int c = p.goff[m]; c < p.goff[m + 1]; c++) {
                if (w[c] == 0.0) continue;
                store_fly_raw(&st, m, p.piv[c] - 1, i0, i1, b);
                for (int i = 0; i < len; i++) o[i] += w[c] * b[i];
            }
    }
    UNPROTECT(1);
    return out;
}
