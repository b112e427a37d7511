/* A bounded cache of kernel columns for the SMO on the fly (libsvm style: least recently used
 * entries leave first, the size fixed by the caller from the memory budget).
 *
 * An entry holds the M per-kernel columns of one training point (n x M doubles, computed by
 * mk_store_cols_buf, which shares a feature group's distances), so that a column of any
 * combination sum_m w_m K_m (the current weights, a point on a line search) costs O(nM) from
 * the cache, without recomputing kernels. The column source (mk_kcsrc) hands such combined
 * columns to the SMO (svm.c, mk_smo_src). Sizes and measurements: inst/notes/NOTES-store.md,
 * "Column cache".
 */
#include "mklearn.h"
#include <string.h>

int mk_kcache_cap(int n, int entries)
{
    int lo = n < MK_KCACHE_MIN ? n : MK_KCACHE_MIN;
    if (entries <= 0 || entries > n) return n;   /* 0: whole */
    return entries < lo ? lo : entries;
}

void mk_kcache_init(mk_kcache *kc, const mk_store *st, int entries)
{
    const int n = st->n, M = st->M;
    kc->st = st;
    kc->n = n; kc->M = M;
    kc->cap = mk_kcache_cap(n, entries);
    kc->used = 0;
    kc->head = kc->tail = -1;
    kc->hits = kc->misses = 0.0;
    kc->scr = NULL;
    kc->data = (double *) mk_alloc_huge((size_t) kc->cap * n * M * sizeof(double));
    kc->diag = (double *) R_alloc((size_t) n * M, sizeof(double));
    kc->base = (double *) R_alloc(n, sizeof(double));
    kc->slot = (int *) R_alloc(n, sizeof(int));
    kc->owner = (int *) R_alloc(kc->cap, sizeof(int));
    kc->prev = (int *) R_alloc(kc->cap, sizeof(int));
    kc->next = (int *) R_alloc(kc->cap, sizeof(int));
    for (int j = 0; j < n; j++) kc->slot[j] = -1;
    for (int m = 0; m < M; m++) mk_store_diag(st, m, kc->diag + (size_t) m * n);
}

/* LRU list: head is the most recent slot */
static void lru_unlink(mk_kcache *kc, int s)
{
    int p = kc->prev[s], q = kc->next[s];
    if (p >= 0) kc->next[p] = q; else kc->head = q;
    if (q >= 0) kc->prev[q] = p; else kc->tail = p;
}

static void lru_front(mk_kcache *kc, int s)
{
    kc->prev[s] = -1;
    kc->next[s] = kc->head;
    if (kc->head >= 0) kc->prev[kc->head] = s;
    kc->head = s;
    if (kc->tail < 0) kc->tail = s;
}

const double *mk_kcache_get(mk_kcache *kc, int j)
{
    const size_t len = (size_t) kc->n * kc->M;
    int s = kc->slot[j];
    if (s >= 0) {
        kc->hits++;
        if (s != kc->head) { lru_unlink(kc, s); lru_front(kc, s); }
        return kc->data + (size_t) s * len;
    }
    kc->misses++;
    if (kc->used < kc->cap) s = kc->used++;
    else {   /* the least recently used entry leaves */
        s = kc->tail;
        lru_unlink(kc, s);
        kc->slot[kc->owner[s]] = -1;
    }
    double *e = kc->data + (size_t) s * len;
    mk_store_cols_buf(kc->st, NULL, kc->M, j, e, kc->base);
    kc->owner[s] = j;
    kc->slot[j] = s;
    lru_front(kc, s);
    return e;
}

/* out = sum_m w_m E_m over the n x M columns E, kernel by kernel in order (the rounding of
   mk_store_combine); kernels of weight 0 skipped */
static void kc_comb(const double *E, int n, int M, const double *w, double *out)
{
    int first = 1;
    for (int m = 0; m < M; m++) {
        double wm = w[m];
        if (wm == 0.0) continue;
        const double *e = E + (size_t) m * n;
        if (first) for (int t = 0; t < n; t++) out[t] = 0.0 + wm * e[t];
        else for (int t = 0; t < n; t++) out[t] += wm * e[t];
        first = 0;
    }
    if (first) for (int t = 0; t < n; t++) out[t] = 0.0;
}

void mk_kcache_comb(mk_kcache *kc, int j, const double *w, double *out)
{
    kc_comb(mk_kcache_get(kc, j), kc->n, kc->M, w, out);
}

/* ------------------------------------------------------------------ products in one pass */

/* Point j's columns for a pass: its entry when cached (*whole = 1: every kernel's column), else
   a free entry filled while there is one and fill != 0, else the kernels idx alone computed
   into scratch (*whole = 0: column c of idx[c]) without evicting. A pass in order through an
   LRU smaller than n would drop every entry before its next use: the entries filled first
   stay (NOTES-store.md, "MKL-L0/1 on the fly"). */
const double *mk_kcache_pass_get(mk_kcache *kc, int j, const int *idx, int cnt, int fill,
                                 int *whole)
{
    const size_t len = (size_t) kc->n * kc->M;
    int s = kc->slot[j];
    *whole = 1;
    if (s >= 0) { kc->hits++; return kc->data + (size_t) s * len; }
    if (fill && kc->used < kc->cap) return mk_kcache_get(kc, j);
    kc->misses++;
    if (!kc->scr) kc->scr = (double *) mk_alloc_huge(len * sizeof(double));
    mk_store_cols_buf(kc->st, idx, cnt, j, kc->scr, kc->base);
    *whole = 0;
    return kc->scr;
}

/* out_k[j + c n] = K_{idx[c]}[, j]' v_k for the points j >= j0, c < cnt, k < nv (idx NULL:
   kernels 0..cnt-1): one pass from the last point down (so that the entries kept are those of
   the last points, which every pass reads), by mk_kcache_pass_get. One thread. */
void mk_kcache_mv(mk_kcache *kc, int j0, const int *idx, int cnt, int nv,
                  const double *const *v, double *const *out)
{
    const int n = kc->n;
    for (int j = n - 1; j >= j0; j--) {
        int whole;
        const double *E = mk_kcache_pass_get(kc, j, idx, cnt, 1, &whole);
        for (int c = 0; c < cnt; c++) {
            const double *e = E + (size_t) (whole && idx ? idx[c] : c) * n;
            for (int k = 0; k < nv; k++) out[k][j + (size_t) c * n] = mk_dot4(n, e, v[k]);
        }
    }
}

/* ------------------------------------------------------------------ K(d) p on the fly */

/* The operator of CG solves with K(d) = sum_m d_m K_m on the fly (MKL-L0/1's w-step, kernel
   ridge): K(d)'s columns summed for points 0..nc-1 (n doubles each, as many as the budget
   leaves room for), the other rows of K(d) p by one pass over the cache (mk_kcache_mv).
   NOTES-store.md, "MKL-L0/1 on the fly". */
void mk_kdop_init(mk_kdop *op, mk_kcache *kc, int nc, int fill)
{
    const int n = kc->n, M = kc->M;
    op->kc = kc;
    op->nc = nc < n ? nc : n;
    op->fill = fill;
    op->tick = NULL;
    op->nact = 0;
    op->d = NULL;
    op->act = (int *) R_alloc(M, sizeof(int));
    op->Kc = op->nc > 0 ? (double *) mk_alloc_huge((size_t) n * op->nc * sizeof(double)) : NULL;
    op->P[0] = op->P[1] = NULL;
    if (op->nc < n) {
        op->P[0] = (double *) R_alloc((size_t) n * M, sizeof(double));
        op->P[1] = (double *) R_alloc((size_t) n * M, sizeof(double));
    }
}

/* K(d)'s columns of points 0..nc-1 for the weights d (kept by pointer), each the sum of its
   active kernels' columns in their order (one pass over those points' columns; their entries
   fill the cache when op->fill, for weights that change: MKL-L0/1). With op->tick, user
   interrupts are checked between columns (one thread, outside OpenMP). */
void mk_kdop_set(mk_kdop *op, const double *d)
{
    const int n = op->kc->n, M = op->kc->M;
    op->d = d;
    op->nact = 0;
    for (int m = 0; m < M; m++) if (d[m] != 0.0) op->act[op->nact++] = m;
    for (int j = 0; j < op->nc; j++) {
        int whole;
        if (op->tick) mk_interrupt_every(op->tick, 0.02);
        const double *E = mk_kcache_pass_get(op->kc, j, op->act, op->nact, op->fill, &whole);
        double *col = op->Kc + (size_t) j * n;
        for (int i = 0; i < n; i++) col[i] = 0.0;
        for (int c = 0; c < op->nact; c++) {
            double dm = d[op->act[c]];
            const double *e = E + (size_t) (whole ? op->act[c] : c) * n;
            for (int i = 0; i < n; i++) col[i] += dm * e[i];
        }
    }
}

/* q_k = K(d) p_k for k < np (1 or 2): K(d) is symmetric, so row j of K(d) p is K(d)'s column
   j times p: from the summed columns for j < nc, else one pass over the cache for both vectors,
   sum over the active kernels of d_m (K_m p)_j in their order */
void mk_kdop_mv(mk_kdop *op, int np, const double *p1, const double *p2, double *q1,
                double *q2)
{
    const int n = op->kc->n, nc = op->nc;
    const double *pp[2] = { p1, p2 };
    double *qq[2] = { q1, q2 };
    for (int j = 0; j < nc; j++)
        for (int k = 0; k < np; k++)
            qq[k][j] = mk_dot4(n, op->Kc + (size_t) j * n, pp[k]);
    if (nc == n) return;
    mk_kcache_mv(op->kc, nc, op->act, op->nact, np, pp, op->P);
    for (int k = 0; k < np; k++) {
        for (int i = nc; i < n; i++) qq[k][i] = 0.0;
        for (int c = 0; c < op->nact; c++) {
            double dm = op->d[op->act[c]];
            const double *g = op->P[k] + (size_t) c * n;
            for (int i = nc; i < n; i++) qq[k][i] += dm * g[i];
        }
    }
}

/* ------------------------------------------------------------------ the SMO's column source */

static const double *kcsrc_col(mk_qsrc *q, int i, int slot)
{
    mk_kcsrc *cs = (mk_kcsrc *) q;
    if (cs->col[slot] == i) return cs->buf[slot];
    if (cs->col[1 - slot] == i) {   /* held in the other slot: swap, so both stay valid */
        double *b = cs->buf[slot];
        int c = cs->col[slot];
        cs->buf[slot] = cs->buf[1 - slot]; cs->col[slot] = i;
        cs->buf[1 - slot] = b; cs->col[1 - slot] = c;
        return cs->buf[slot];
    }
    mk_kcache_comb(cs->kc, i, cs->w, cs->buf[slot]);
    cs->col[slot] = i;
    return cs->buf[slot];
}

static void kcsrc_diag(mk_qsrc *q, double *d)
{
    mk_kcsrc *cs = (mk_kcsrc *) q;
    kc_comb(cs->kc->diag, cs->kc->n, cs->kc->M, cs->w, d);
}

void mk_kcsrc_init(mk_kcsrc *cs, mk_kcache *kc)
{
    const int n = kc->n;
    cs->q.col = kcsrc_col;
    cs->q.diag = kcsrc_diag;
    cs->q.K = NULL;
    cs->q.n = n;
    cs->q.ctx = kc;
    cs->kc = kc;
    cs->w = (double *) R_alloc(kc->M, sizeof(double));
    cs->buf[0] = (double *) R_alloc(n, sizeof(double));
    cs->buf[1] = (double *) R_alloc(n, sizeof(double));
    cs->col[0] = cs->col[1] = -1;
}

void mk_kcsrc_set(mk_kcsrc *cs, const double *w)
{
    if (cs->col[0] >= 0 && memcmp(w, cs->w, (size_t) cs->kc->M * sizeof(double)) == 0) return;
    memcpy(cs->w, w, (size_t) cs->kc->M * sizeof(double));
    cs->col[0] = cs->col[1] = -1;
}
