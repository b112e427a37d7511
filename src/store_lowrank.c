/* The low-rank backend of the kernel store: kernel m of the training rows is G_m G_m' plus the
 * jitter on the diagonal, G_m the n x r_m block of the factor matrix G at column goff[m]
 * (column-major, leading dimension n, the training normalisation already applied to it); a
 * test store also holds Gz (nr rows, the same columns) and K_m(Z, X) = Gz_m G_m'.
 * Columns, diagonals and decision values cost O(nr r_m) per kernel. */
#include "store.h"
#include <stdlib.h>
#include <string.h>

void lr_read(SEXP s, mk_store *st)
{
    SEXP G = mk_list_elt(s, "G", "kernel store: entry"), go = mk_list_elt(s, "goff",
                                                                          "kernel store: entry");
    SEXP Gz = mk_list_elt(s, "Gz", NULL);
    if (!isReal(G) || !isMatrix(G)) error("kernel store: 'G' must be a double matrix");
    if (!isInteger(go) || LENGTH(go) < 2) error("kernel store: 'goff' must be integer");
    st->n = nrows(G);
    st->M = LENGTH(go) - 1;
    st->goff = INTEGER(go);
    if (st->goff[0] != 0 || st->goff[st->M] != ncols(G))
        error("kernel store: 'goff' does not match the columns of 'G'");
    for (int m = 0; m < st->M; m++)
        if (st->goff[m + 1] < st->goff[m]) error("kernel store: 'goff' must not decrease");
    st->G = REAL(G);
    if (isNull(Gz)) {
        st->Gz = st->G; st->nr = st->n; st->square = 1;
    } else {
        if (!isReal(Gz) || !isMatrix(Gz) || ncols(Gz) != ncols(G))
            error("kernel store: 'Gz' must be a double matrix with the columns of 'G'");
        st->Gz = REAL(Gz); st->nr = nrows(Gz); st->square = 0;
    }
    st->norm = MK_NORM_NONE;
    st->jitter = asReal(mk_list_elt(s, "jitter", "kernel store: entry"));
}

const double *mk_store_factor(const mk_store *s, int m, int *r)
{
    if (s->kind != MK_STORE_LOWRANK) error("kernel store: not a low-rank store");
    *r = s->goff[m + 1] - s->goff[m];
    return s->G + (size_t) s->goff[m] * s->n;
}

const double *mk_store_factor_test(const mk_store *s, int m, int *r)
{
    if (s->kind != MK_STORE_LOWRANK) error("kernel store: not a low-rank store");
    *r = s->goff[m + 1] - s->goff[m];
    return s->Gz + (size_t) s->goff[m] * s->nr;
}

/* rows i0..i1-1 of column j of kernel m */
void lr_col(const mk_store *s, int m, int j, int i0, int i1, double *out)
{
    int r, nr = s->nr, n = s->n;
    const double *G = mk_store_factor(s, m, &r), *Z = s->Gz + (size_t) s->goff[m] * nr;
    for (int i = i0; i < i1; i++) out[i - i0] = 0.0;
    for (int k = 0; k < r; k++) {
        double g = G[(size_t) k * n + j];
        const double *zk = Z + (size_t) k * nr;
        if (g == 0.0) continue;
        for (int i = i0; i < i1; i++) out[i - i0] += zk[i] * g;
    }
    if (s->square && j >= i0 && j < i1) out[j - i0] += s->jitter;
}

void lr_diag(const mk_store *s, int m, double *d)
{
    int r, n = s->n;
    const double *G = mk_store_factor(s, m, &r);
    for (int i = 0; i < n; i++) d[i] = 0.0;
    for (int k = 0; k < r; k++) {
        const double *gk = G + (size_t) k * n;
        for (int i = 0; i < n; i++) d[i] += gk[i] * gk[i];
    }
    for (int i = 0; i < n; i++) d[i] += s->jitter;
}

/* t = G_m' x (r_m values, each summed in a fixed order) */
void mk_store_factor_tmul(const mk_store *s, int m, const double *x, double *t)
{
    int r, n = s->n;
    const double *G = mk_store_factor(s, m, &r);
    for (int c = 0; c < r; c++) t[c] = mk_dot4(n, G + (size_t) c * n, x);
}

/* y += Gz_m t over rows i0..i1-1 (y indexed from i0) */
static void lr_zt(const mk_store *s, int m, const double *t, int i0, int i1, double *y)
{
    int nr = s->nr, r = s->goff[m + 1] - s->goff[m];
    const double *Z = s->Gz + (size_t) s->goff[m] * nr;
    for (int c = 0; c < r; c++) {
        const double *zc = Z + (size_t) c * nr;
        double v = t[c];
        if (v == 0.0) continue;
        for (int i = i0; i < i1; i++) y[i - i0] += zc[i] * v;
    }
}

static int lr_rmax(const mk_store *s)
{
    int rmax = 1;
    for (int m = 0; m < s->M; m++)
        if (s->goff[m + 1] - s->goff[m] > rmax) rmax = s->goff[m + 1] - s->goff[m];
    return rmax;
}

double lr_pass_work(const mk_store *s, const int *idx, int cnt)
{
    double w = 0.0;
    for (int k = 0; k < cnt; k++) {
        int m = idx ? idx[k] : k;
        w += 2.0 * (s->goff[m + 1] - s->goff[m]) * (s->n + s->nr);
    }
    return w;
}

/* y = K_m x, column by column of the factor: t_c = G_c' x, then y += Gz_c t_c (no scratch) */
static void lr_kmv1(const mk_store *s, int m, const double *x, double *y)
{
    int nr = s->nr, n = s->n, r;
    const double *G = mk_store_factor(s, m, &r), *Z = s->Gz + (size_t) s->goff[m] * nr;
    for (int i = 0; i < nr; i++) y[i] = 0.0;
    for (int c = 0; c < r; c++) {
        const double *zc = Z + (size_t) c * nr;
        double t = mk_dot4(n, G + (size_t) c * n, x);
        if (t != 0.0) for (int i = 0; i < nr; i++) y[i] += zc[i] * t;
    }
    if (s->square && s->jitter != 0.0) for (int i = 0; i < nr; i++) y[i] += s->jitter * x[i];
}

void lr_kmv2(const mk_store *s, int m, const double *x1, const double *x2, double *y1,
             double *y2)
{
    lr_kmv1(s, m, x1, y1);
    if (x2) lr_kmv1(s, m, x2, y2);
}

double lr_kquad(const mk_store *s, int m, const double *v)
{
    int r, n = s->n;
    const double *G = mk_store_factor(s, m, &r);
    double q = 0.0, vv = 0.0;
    for (int c = 0; c < r; c++) {
        double t = mk_dot4(n, G + (size_t) c * n, v);
        q += t * t;
    }
    if (s->jitter != 0.0) {
        vv = mk_dot4(n, v, v);
        q += s->jitter * vv;
    }
    return q;
}

/* out = sum_k K_{idx[k]} alpha[, k]: t = G_m' alpha_k for every kernel (threads over kernels),
   then Gz_m t (+ jitter alpha_k when square) by blocks of rows (threads over blocks); every
   value is summed in a fixed order, so any thread count gives the same bits */
void lr_decision(const mk_store *s, const int *idx, int cnt, const double *alpha, double *out)
{
    int nr = s->nr, n = s->n, rmax = lr_rmax(s);
    double *t = (double *) R_alloc((size_t) (cnt > 0 ? cnt : 1) * rmax, sizeof(double));
    int nt = mk_threads_for(s->nthreads, lr_pass_work(s, idx, cnt) / 2.0);
    (void) nt;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
#endif
    for (int k = 0; k < cnt; k++)
        mk_store_factor_tmul(s, idx ? idx[k] : k, alpha + (size_t) k * n, t + (size_t) k * rmax);
    const int B = 1024;
    int nblk = (nr + B - 1) / B;
    if (nt > nblk) nt = nblk;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
#endif
    for (int blk = 0; blk < nblk; blk++) {
        int i0 = blk * B, i1 = i0 + B < nr ? i0 + B : nr;
        double *o = out + i0;
        for (int i = 0; i < i1 - i0; i++) o[i] = 0.0;
        for (int k = 0; k < cnt; k++) {
            lr_zt(s, idx ? idx[k] : k, t + (size_t) k * rmax, i0, i1, o);
            if (s->square && s->jitter != 0.0) {
                const double *a = alpha + (size_t) k * n;
                for (int i = i0; i < i1; i++) o[i - i0] += s->jitter * a[i];
            }
        }
    }
}
