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
#include <math.h>
#include <string.h>
#ifdef _OPENMP
#define THREAD_SCR(kc, len) ((kc)->tscr + (size_t) omp_get_thread_num() * ((len) + (kc)->n))
#else
#define THREAD_SCR(kc, len) ((kc)->tscr)
#endif

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
    kc->tscr = kc->acc = NULL;
    kc->nt = 0;
    kc->kvals = 0.0;
    kc->ntmax = 0;
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
    kc->kvals += (double) len;
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

/* The threads' scratch (a point's columns, n x M, and the distances, n), and with ranges the
   ranges' sums of mk_kcache_mv, allocated at the first call that needs them. A pass in order
   through an LRU smaller than n would drop every entry before its next use: the entries filled
   first stay (kc_pass_fill; NOTES-store.md, "MKL-L0/1 on the fly"). */
static void kc_pass_alloc(mk_kcache *kc, int ranges)
{
    const size_t len = (size_t) kc->n * kc->M;
    if (!kc->tscr) {
        kc->nt = mk_threads(kc->st->nthreads);
        kc->tscr = (double *) mk_alloc_huge((size_t) kc->nt * (len + kc->n) * sizeof(double));
    }
    if (ranges && !kc->acc)
        kc->acc = (double *) mk_alloc_huge((size_t) MK_KCACHE_RANGES * 2 * len * sizeof(double));
}

/* The threads for `work` under the one thread rule, at most those of the scratch (kc->nt);
   kc->ntmax keeps the most used (tests) */
static int kc_threads(mk_kcache *kc, double work)
{
    int nt = mk_threads_for(kc->st->nthreads, work);
    if (nt > kc->nt) nt = kc->nt;
    if (nt > kc->ntmax) kc->ntmax = nt;
    return nt;
}

/* The free entries go to the points from the last down (the ones every pass reads), claimed
   in order here and filled by the threads (an entry's columns as mk_kcache_get computes them). */
static void kc_pass_fill(mk_kcache *kc, int j0)
{
    const size_t len = (size_t) kc->n * kc->M;
    int nf = 0, want = 0;
    for (int j = kc->n - 1; j >= j0 && want < kc->cap - kc->used; j--) want += kc->slot[j] < 0;
    if (want == 0) return;   /* no scratch: a pass runs at every CG step */
    int *todo = (int *) R_alloc(want, sizeof(int));
    for (int j = kc->n - 1; j >= j0 && kc->used < kc->cap; j--) {
        if (kc->slot[j] >= 0) continue;
        int s = kc->used++;
        kc->owner[s] = j;
        kc->slot[j] = s;
        lru_front(kc, s);
        todo[nf++] = s;
    }
    int nt = kc_threads(kc, 4.0 * nf * len);
    kc->kvals += (double) nf * len;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
#endif
    for (int t = 0; t < nf; t++) {
        int s = todo[t];
        double *base = THREAD_SCR(kc, len) + len;
        mk_store_cols_buf(kc->st, NULL, kc->M, kc->owner[s], kc->data + (size_t) s * len, base);
    }
}

/* One range's points a <= j < b of the trailing block from j0 (mk_kcache_mv): rows j0..j of
   point j's columns (its entry, or computed into the thread's scratch); out_k[j] = their dot
   with v_k, and the rows i < j add K[i, j] v_k[j] to the range's sums acc (rows j0..b-1). */
static void kc_pass_range(mk_kcache *kc, int j0, int a, int b, const int *idx, int cnt, int nv,
                          const double *const *v, double *const *out, double *acc,
                          double *scr)
{
    const int n = kc->n;
    const size_t len = (size_t) n * kc->M;
    double *base = scr + len;
    for (int q = 0; q < nv * cnt; q++)
        memset(acc + (size_t) q * n + j0, 0, (size_t) (b - j0) * sizeof(double));
    for (int j = a; j < b; j++) {
        int s = kc->slot[j], whole = s >= 0;
        const double *E = scr;
        if (whole) E = kc->data + (size_t) s * len;
        else mk_store_cols_rows(kc->st, idx, cnt, j, j0, j + 1, scr + j0, (size_t) n, base);
        for (int c = 0; c < cnt; c++) {
            const double *e = E + (size_t) (whole && idx ? idx[c] : c) * n;
            for (int k = 0; k < nv; k++) {
                double vj = v[k][j], *ak = acc + (size_t) (k * cnt + c) * n;
                out[k][j + (size_t) c * n] = mk_dot4(j - j0 + 1, e + j0, v[k] + j0);
                for (int i = j0; i < j; i++) ak[i] += e[i] * vj;
            }
        }
    }
}

/* The trailing block's product (mklearn.h). Range r holds the points from j0 + (n - j0)
   sqrt(r / R) on (equal shares of the triangle); row i adds its dot and then the ranges' sums
   in range order: fixed sums whatever the threads (NOTES-store.md, "MKL-L0/1 on the fly"). */
void mk_kcache_mv(mk_kcache *kc, int j0, const int *idx, int cnt, int nv,
                  const double *const *v, double *const *out)
{
    const int n = kc->n, R = MK_KCACHE_RANGES;
    const size_t len = (size_t) n * kc->M;
    if (j0 >= n) return;
    if (nv < 1 || nv > 2 || cnt > kc->M) error("kcache: at most two vectors and M kernels");
    kc_pass_alloc(kc, 1);
    kc_pass_fill(kc, j0);
    int bnd[MK_KCACHE_RANGES + 1];
    for (int r = 0; r <= R; r++) bnd[r] = j0 + (int) floor((n - j0) * sqrt((double) r / R));
    bnd[R] = n;
    for (int j = j0; j < n; j++) {
        if (kc->slot[j] >= 0) { kc->hits++; continue; }
        kc->misses++;
        kc->kvals += (double) (j - j0 + 1) * cnt;
    }
    double work = 0.5 * (double) (n - j0) * (n - j0) * cnt * (nv + 4);
    int nt = kc_threads(kc, work);
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
#endif
    for (int r = 0; r < R; r++)
        kc_pass_range(kc, j0, bnd[r], bnd[r + 1], idx, cnt, nv, v, out,
                      kc->acc + (size_t) r * 2 * len, THREAD_SCR(kc, len));
    for (int q = 0; q < nv * cnt; q++) {
        double *o = out[q / cnt] + (size_t) (q % cnt) * n;
        for (int r = 0; r < R; r++) {
            const double *ar = kc->acc + (size_t) r * 2 * len + (size_t) q * n;
            for (int i = j0; i < bnd[r + 1] - 1; i++) o[i] += ar[i];
        }
    }
}

/* out[, j - j0] (ldo apart) = sum_m w_m K_m[, j] over the kernels idx (weights w by kernel),
   j0 <= j < j1, kernel by kernel in order; the entries read, the other points' columns computed
   into the threads' scratch; threads over points (no entry filled). */
void mk_kcache_comb_cols(mk_kcache *kc, int j0, int j1, const int *idx, int cnt,
                         const double *w, double *out, size_t ldo)
{
    const int n = kc->n;
    const size_t len = (size_t) n * kc->M;
    kc_pass_alloc(kc, 0);
    int nt = kc_threads(kc, 4.0 * (j1 - j0) * (double) n * cnt);
    for (int j = j0; j < j1; j++) if (kc->slot[j] < 0) kc->kvals += (double) n * cnt;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, 16)
#endif
    for (int j = j0; j < j1; j++) {
        double *scr = THREAD_SCR(kc, len), *col = out + (size_t) (j - j0) * ldo;
        int s = kc->slot[j], whole = s >= 0;
        const double *E = scr;
        if (whole) E = kc->data + (size_t) s * len;
        else mk_store_cols_rows(kc->st, idx, cnt, j, 0, n, scr, (size_t) n, scr + len);
        for (int i = 0; i < n; i++) col[i] = 0.0;
        for (int c = 0; c < cnt; c++) {
            double wm = w[idx ? idx[c] : c];
            const double *e = E + (size_t) (whole && idx ? idx[c] : c) * n;
            for (int i = 0; i < n; i++) col[i] += wm * e[i];
        }
    }
}

/* .Call: rows j >= j0 of [K_m v_k] (n x M x nv, rows below j0 NA) by mk_kcache_mv through a
   cache of `cache` entries on a training store, with the kernel values it computed and the
   most threads it ran on (tests). */
SEXP mkc_kcache_mv(SEXP store, SEXP j0, SEXP v, SEXP cache)
{
    mk_store st;
    mk_store_read(store, &st);
    if (!st.square) error("kcache: a training store is needed");
    int n = st.n, M = st.M, a = asInteger(j0);
    if (!isReal(v) || LENGTH(v) % n != 0 || LENGTH(v) / n < 1 || LENGTH(v) / n > 2)
        error("'v' must be n x 1 or n x 2 doubles");
    if (a == NA_INTEGER || a < 0 || a > n) error("'j0' must be in 0..n");
    int nv = LENGTH(v) / n;
    mk_kcache kc;
    mk_kcache_init(&kc, &st, asInteger(cache));
    static const char *const nm[] = { "out", "kernel_values", "threads", NULL };
    SEXP res = mk_list_new(nm), out = allocVector(REALSXP, (R_xlen_t) n * M * nv);
    mk_list_set(res, "out", out);
    const double *vv[2] = { REAL(v), REAL(v) + (nv > 1 ? n : 0) };
    double *oo[2] = { REAL(out), REAL(out) + (size_t) (nv - 1) * n * M };
    for (R_xlen_t i = 0; i < XLENGTH(out); i++) REAL(out)[i] = NA_REAL;
    mk_kcache_mv(&kc, a, NULL, M, nv, vv, oo);
    mk_list_set(res, "kernel_values", ScalarReal(kc.kvals));
    mk_list_set(res, "threads", ScalarInteger(kc.ntmax));
    UNPROTECT(1);
    return res;
}

/* ------------------------------------------------------------------ K(d) p on the fly */

/* The operator of CG solves with K(d) = sum_m d_m K_m on the fly (MKL-L0/1's w-step, kernel
   ridge): K(d)'s columns summed for points 0..nc-1 (n doubles each, as many as the budget
   leaves room for), the other rows of K(d) p from those columns' rows and the trailing block's
   pass over the cache (mk_kcache_mv). NOTES-store.md, "MKL-L0/1 on the fly". */
void mk_kdop_init(mk_kdop *op, mk_kcache *kc, int nc)
{
    const int n = kc->n, M = kc->M;
    op->kc = kc;
    op->nc = nc < n ? nc : n;
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
   active kernels' columns in their order (mk_kcache_comb_cols: threads over the points, no
   entry filled). With op->tick, user interrupts are checked between blocks of columns
   (outside the threads). */
#define KDOP_BLOCK 256
void mk_kdop_set(mk_kdop *op, const double *d)
{
    const int n = op->kc->n, M = op->kc->M;
    op->d = d;
    op->nact = 0;
    for (int m = 0; m < M; m++) if (d[m] != 0.0) op->act[op->nact++] = m;
    for (int j0 = 0; j0 < op->nc; j0 += KDOP_BLOCK) {
        int j1 = j0 + KDOP_BLOCK < op->nc ? j0 + KDOP_BLOCK : op->nc;
        if (op->tick) mk_interrupt_every(op->tick, 0.02);
        mk_kcache_comb_cols(op->kc, j0, j1, op->act, op->nact, d, op->Kc + (size_t) j0 * n,
                            (size_t) n);
    }
}

/* The summed columns' share of K(d) p_k (K(d) symmetric): rows j < nc are column j times p_k,
   rows i >= nc are row i of Kc times p_k's first nc entries (blocks of rows, each summed over j
   in order); fixed sums, threads over points or blocks. */
#define KC_ROWS 512
static void kdop_kc_mv(const mk_kdop *op, int np, const double *const *pp, double *const *qq)
{
    const int n = op->kc->n, nc = op->nc, nb = (n - nc + KC_ROWS - 1) / KC_ROWS;
    const double *Kc = op->Kc;
    int nt = mk_threads_for(op->kc->st->nthreads, (double) n * nc * np);
    (void) nt;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static)
#endif
    for (int j = 0; j < nc; j++)
        for (int k = 0; k < np; k++) qq[k][j] = mk_dot4(n, Kc + (size_t) j * n, pp[k]);
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static)
#endif
    for (int bk = 0; bk < nb; bk++) {
        int i0 = nc + bk * KC_ROWS, i1 = i0 + KC_ROWS < n ? i0 + KC_ROWS : n;
        for (int k = 0; k < np; k++) for (int i = i0; i < i1; i++) qq[k][i] = 0.0;
        for (int j = 0; j < nc; j++) {
            const double *col = Kc + (size_t) j * n;
            for (int k = 0; k < np; k++) {
                double pj = pp[k][j];
                for (int i = i0; i < i1; i++) qq[k][i] += col[i] * pj;
            }
        }
    }
}

/* q_k = K(d) p_k for k < np (1 or 2): the summed columns' share (kdop_kc_mv) plus, for rows
   i >= nc, the block K(d)[nc:n, nc:n] p_k[nc:n] by one pass over the cache (each point's rows
   nc..j only), sum over the active kernels of d_m (K_m p)_i in their order */
void mk_kdop_mv(mk_kdop *op, int np, const double *p1, const double *p2, double *q1,
                double *q2)
{
    const int n = op->kc->n, nc = op->nc;
    const double *pp[2] = { p1, p2 };
    double *qq[2] = { q1, q2 };
    kdop_kc_mv(op, np, pp, qq);
    if (nc == n) return;
    mk_kcache_mv(op->kc, nc, op->act, op->nact, np, pp, op->P);
    for (int k = 0; k < np; k++) {
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
