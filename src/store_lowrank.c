/* The low-rank backend of the kernel store: kernel m of the training rows is G_m G_m' plus the
 * jitter on the diagonal, G_m the n x r_m block of the factor matrix G at column goff[m]
 * (column-major, leading dimension n, the training normalisation already applied to it); a
 * test store also holds Gz (nr rows, the same columns) and K_m(Z, X) = Gz_m G_m'.
 * Columns, diagonals and decision values cost O(nr r_m) per kernel. */
#include "store.h"
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

/* out = sum_k K_{idx[k]} alpha[, k]: Gz_m (G_m' alpha_k) (+ jitter alpha_k when square) */
void lr_decision(const mk_store *s, const int *idx, int cnt, const double *alpha, double *out)
{
    int nr = s->nr, n = s->n, rmax = 0;
    for (int m = 0; m < s->M; m++)
        if (s->goff[m + 1] - s->goff[m] > rmax) rmax = s->goff[m + 1] - s->goff[m];
    double *t = (double *) R_alloc(rmax > 0 ? rmax : 1, sizeof(double));
    for (int i = 0; i < nr; i++) out[i] = 0.0;
    for (int k = 0; k < cnt; k++) {
        int m = idx ? idx[k] : k, r;
        const double *G = mk_store_factor(s, m, &r), *Z = s->Gz + (size_t) s->goff[m] * nr;
        const double *a = alpha + (size_t) k * n;
        for (int c = 0; c < r; c++) {
            const double *gc = G + (size_t) c * n;
            double v = 0.0;
            for (int j = 0; j < n; j++) v += gc[j] * a[j];
            t[c] = v;
        }
        for (int c = 0; c < r; c++) {
            const double *zc = Z + (size_t) c * nr;
            double v = t[c];
            if (v == 0.0) continue;
            for (int i = 0; i < nr; i++) out[i] += zc[i] * v;
        }
        if (s->square && s->jitter != 0.0)
            for (int i = 0; i < nr; i++) out[i] += s->jitter * a[i];
    }
}
