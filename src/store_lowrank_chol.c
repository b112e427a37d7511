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
#include <limits.h>
#include <string.h>
#include <stdlib.h>
#include <R_ext/Rallocators.h>

/* one kernel's raw factor: L (n x rmax, column-major; only its first r columns are written,
   so the pages of the others are never touched), its pivots and residual diagonal d */
typedef struct {
    double *L, *d;
    int *piv, r, done;
    double trace, resid, stop, floor_d;   /* raw trace, residual trace(K - L L'), the stops */
} lr_fac;

/* col -= L[, 0..r-1] b, four columns per pass over col */
static void sub_cols(const double *L, int n, int r, const double *b, double *restrict col)
{
    int k = 0;
    for (; k + 3 < r; k += 4) {
        const double *a0 = L + (size_t) k * n, *a1 = a0 + n, *a2 = a1 + n, *a3 = a2 + n;
        double b0 = b[k], b1 = b[k + 1], b2 = b[k + 2], b3 = b[k + 3];
        for (int i = 0; i < n; i++)
            col[i] -= (a0[i] * b0 + a1[i] * b1) + (a2[i] * b2 + a3[i] * b3);
    }
    for (; k < r; k++) {
        const double *a = L + (size_t) k * n;
        double bk = b[k];
        for (int i = 0; i < n; i++) col[i] -= a[i] * bk;
    }
}

/* The start of kernel m's factorisation: its raw diagonal, trace and stopping thresholds (the
   residual trace at most tol * trace; a residual diagonal at most 1e-13 of the largest is
   rounding and never a pivot). */
static void fac_start(const mk_store *s, int m, double tol, lr_fac *f)
{
    int n = s->n;
    double *d = f->d, tr = 0.0, dmax = 0.0, res = 0.0;
    store_fly_raw_diag(s, m, d);
    for (int i = 0; i < n; i++) { tr += d[i]; if (d[i] > dmax) dmax = d[i]; }
    for (int i = 0; i < n; i++) { if (d[i] < 0.0) d[i] = 0.0; res += d[i]; }
    f->trace = tr;
    f->resid = res;
    f->stop = tol * tr;
    f->floor_d = 1e-13 * dmax;
    f->r = 0;
    f->done = !(res > f->stop);
}

/* Up to `steps` pivots of kernel m's pivoted incomplete Cholesky, greedy on the largest
   residual diagonal; done when the residual trace meets the stop, at rmax pivots, or when no
   diagonal is above the rounding floor. Scratch col: n doubles; lp: rmax doubles. */
static void fac_steps(const mk_store *s, int m, int rmax, int steps, lr_fac *f, double *col,
                      double *lp)
{
    int n = s->n, r = f->r;
    double *d = f->d, *L = f->L;
    for (int t = 0; t < steps && !f->done; t++) {
        int p = -1;
        double dp = f->floor_d;
        for (int i = 0; i < n; i++) if (d[i] > dp) { dp = d[i]; p = i; }
        if (p < 0) { f->done = 1; break; }
        double *Lr = L + (size_t) r * n;
        store_fly_raw(s, m, p, 0, n, col);
        for (int k = 0; k < r; k++) lp[k] = L[(size_t) k * n + p];
        sub_cols(L, n, r, lp, col);
        double sq = sqrt(dp), inv = 1.0 / sq, res = 0.0;
        for (int i = 0; i < n; i++) Lr[i] = col[i] * inv;
        for (int k = 0; k < r; k++) Lr[f->piv[k]] = 0.0;   /* zero in exact arithmetic */
        Lr[p] = sq;
        for (int i = 0; i < n; i++) {
            double v = d[i] - Lr[i] * Lr[i];
            d[i] = v > 0.0 ? v : 0.0;
            res += d[i];
        }
        res -= d[p];
        d[p] = 0.0;
        f->piv[r++] = p;
        f->r = r;
        f->resid = res;
        if (r >= rmax || !(res > f->stop)) f->done = 1;
    }
}

/* Kernel m's factor normalised in place (f->L) and its pivot rows into Lp (r x r, lower
   triangular, raw): trace, G = L / sqrt(s) with s the exact raw trace; centre + trace,
   G = (L - 1 lbar') / sqrt(s) with s = trace - n |lbar|^2, the trace of the centred L L' off the
   diagonal and of K on it (equal to the dense scale at full rank). */
static void fac_normalise(const mk_store *s, const lr_fac *f, double *Lp, double *lbar,
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
        double *g = f->L + (size_t) k * n, c = lbar[k];
        for (int c2 = 0; c2 < r; c2++) Lp[(size_t) k * r + c2] = g[f->piv[c2]];
        for (int i = 0; i < n; i++) g[i] = (g[i] - c) * inv;
    }
}

/* ------------------------------------------------------------------ one copy of the factors
   Each kernel's raw factor is malloc'ed at the cap (pages not written stay unresident) and
   normalised in place; the first kernel's block then grows (realloc: mremap for large blocks,
   no copy) to hold all factors, the others are copied in and freed one by one, and the block
   becomes the data of R's matrix through a custom allocator (allocVector3): the peak is the
   factors once plus one kernel's. An external pointer frees the blocks after an interrupt.
   inst/notes/NOTES-store.md */
typedef struct { int M; void **buf; } lr_bufs;

static void bufs_free(SEXP ext)
{
    lr_bufs *b = (lr_bufs *) R_ExternalPtrAddr(ext);
    if (!b) return;
    for (int m = 0; m < b->M; m++) free(b->buf[m]);
    free(b->buf);
    free(b);
    R_ClearExternalPtr(ext);
}

/* the allocator's state: the block to hand over (NULL: a probe, which mallocs) and its size,
   the size R asked for and the block it got */
typedef struct { void *p; size_t size, asked; void *got; void **owner; } lr_hand;

static void *hand_alloc(R_allocator_t *a, size_t size)
{
    lr_hand *h = (lr_hand *) a->data;
    h->asked = size;
    if (h->p == NULL) return h->got = malloc(size);
    if (size > h->size) return NULL;
    h->got = h->p;
    h->p = NULL;
    *h->owner = NULL;                 /* R owns the block from here */
    return h->got;
}

static void hand_free(R_allocator_t *a, void *p) { (void) a; free(p); }

/* the offset of a real vector's data in a block of a custom allocator (R's header is in
   front) and the bytes R asks beyond the data: probed once on a small vector */
static void hand_probe(size_t *off, size_t *extra)
{
    static size_t o = 0, e = 0;
    if (!o) {
        lr_hand h = { NULL, 0, 0, NULL, NULL };
        R_allocator_t a = { hand_alloc, hand_free, NULL, &h };
        SEXP v = PROTECT(allocVector3(REALSXP, 1024, &a));
        if (!h.got || (char *) REAL(v) < (char *) h.got)
            error("the low-rank factors: R's custom allocator was not used");
        o = (size_t) ((char *) REAL(v) - (char *) h.got);
        e = h.asked - 1024 * sizeof(double);
        UNPROTECT(1);
    }
    *off = o;
    *extra = e;
}

/* The n x R matrix of the normalised factors from the kernels' blocks (data at off in each):
   kernel 0's block grows to hold all, the others are copied in and freed in turn, and R gets
   the block as its matrix's data. */
static SEXP hand_over(lr_bufs *b, const lr_fac *f, const int *goff, int n, size_t off,
                      size_t extra, SEXP ext)
{
    int M = b->M;
    size_t R = (size_t) goff[M], bytes = (size_t) n * R * sizeof(double);
    size_t size = off + bytes + (extra > off ? extra - off : 0);
    void *blk = realloc(b->buf[0], size);
    if (!blk) error("cannot allocate the low-rank factors (%.1f Gb)", (double) size / 1e9);
    b->buf[0] = blk;
    double *g = (double *) ((char *) blk + off);
    for (int m = 1; m < M; m++) {
        if (f[m].r) memcpy(g + (size_t) goff[m] * n, f[m].L, (size_t) n * f[m].r * sizeof(double));
        free(b->buf[m]);
        b->buf[m] = NULL;
    }
    lr_hand h = { blk, size, 0, NULL, b->buf };
    R_allocator_t a = { hand_alloc, hand_free, NULL, &h };
    SEXP G = PROTECT(allocVector3(REALSXP, (R_xlen_t) n * R, &a));
    if ((void *) REAL(G) != (void *) g) memmove(REAL(G), g, bytes);
    bufs_free(ext);
    UNPROTECT(1);
    return G;
}

/* a new vector set as element nm of the list out (which protects it) */
static SEXP new_elt(SEXP out, const char *nm, SEXPTYPE type, R_xlen_t len)
{
    SEXP v = allocVector(type, len);
    mk_list_set(out, nm, v);
    return v;
}

/* The factorisation of every kernel of a fly training store (statistics not needed):
   list(G, goff, piv (1-based), Lp (each kernel's r x r pivot rows, one after the other),
   lbar, scale, trace, resid) with tol the relative residual-trace tolerance and rank the cap.
   Threads take kernels; kernels advance by rounds of a few pivots with an interrupt check
   between rounds. */
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
    if (M < 1) error("the factorisation needs at least one kernel");
    size_t off, extra;
    hand_probe(&off, &extra);
    lr_bufs *bb = (lr_bufs *) calloc(1, sizeof(lr_bufs));
    if (bb) bb->buf = (void **) calloc(M, sizeof(void *));
    if (!bb || !bb->buf) { free(bb); error("cannot allocate the low-rank factors"); }
    bb->M = M;
    SEXP ext = PROTECT(R_MakeExternalPtr(bb, R_NilValue, R_NilValue));
    R_RegisterCFinalizer(ext, bufs_free);
    lr_fac *f = (lr_fac *) R_alloc(M, sizeof(lr_fac));
    for (int m = 0; m < M; m++) {
        size_t sz = off + (size_t) n * rmax * sizeof(double);
        bb->buf[m] = malloc(sz);
        if (!bb->buf[m]) error("cannot allocate the low-rank factors (%.1f Gb)", sz * 1e-9 * M);
        f[m].L = (double *) ((char *) bb->buf[m] + off);
        f[m].d = (double *) R_alloc(n, sizeof(double));
        f[m].piv = (int *) R_alloc(rmax, sizeof(int));
    }
    /* pivots per kernel and round: about 2e7 multiply-adds */
    int steps = (int) (2e7 / ((double) n * (rmax + 20.0)));
    steps = steps < 1 ? 1 : steps > 64 ? 64 : steps;
    int nt = mk_threads_for(st.nthreads, (double) n * rmax * (rmax + 8.0) * M);
    double *scr = (double *) R_alloc((size_t) nt * ((size_t) n + rmax), sizeof(double));
    double tlast = mk_time();
    (void) nt;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
#endif
    for (int m = 0; m < M; m++) fac_start(&st, m, tl, f + m);
    for (;;) {
        int todo = 0;
        for (int m = 0; m < M; m++) todo += !f[m].done;
        if (!todo) break;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
#endif
        for (int m = 0; m < M; m++) {
            if (f[m].done) continue;
            double *b = THREAD_BUF(scr, (size_t) n + rmax);
            fac_steps(&st, m, rmax, steps, f + m, b, b + n);
        }
        mk_interrupt_every(&tlast, 0.02);
    }
    R_xlen_t R = 0, R2 = 0;
    for (int m = 0; m < M; m++) {
        R += f[m].r;
        R2 += (R_xlen_t) f[m].r * f[m].r;
    }
    if (R > INT_MAX) error("the low-rank factors have more than 2^31 columns");
    const char *nm[] = { "G", "goff", "piv", "Lp", "lbar", "scale", "trace", "resid", NULL };
    SEXP out = mk_list_new(nm);
    SEXP go = new_elt(out, "goff", INTSXP, M + 1), pv = new_elt(out, "piv", INTSXP, R);
    SEXP Lp = new_elt(out, "Lp", REALSXP, R2), lb = new_elt(out, "lbar", REALSXP, R);
    SEXP sc = new_elt(out, "scale", REALSXP, M), tr = new_elt(out, "trace", REALSXP, M);
    SEXP rs = new_elt(out, "resid", REALSXP, M);
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
    double *lp = REAL(Lp), *lbar = REAL(lb), *scale = REAL(sc);
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
#endif
    for (int m = 0; m < M; m++)
        fac_normalise(&st, f + m, lp + loff[m], lbar + goff[m], scale + m);
    SEXP G = hand_over(bb, f, goff, n, off, extra, ext);
    mk_list_set(out, "G", G);
    SEXP dim = PROTECT(allocVector(INTSXP, 2));
    INTEGER(dim)[0] = n; INTEGER(dim)[1] = (int) R;
    setAttrib(G, R_DimSymbol, dim);
    UNPROTECT(3);
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

/* The distinct kernel bases (distances or inner products) of the decision values: kernels of one
   feature group share their pivots' bases (the narrow kernels' pivots recur in the wide ones';
   NOTES-store.md). key[c]: column c's base; g, kind, j: each base's group, kind and row. */
typedef struct { int *key, *g, *kind, *j; } lr_base;
typedef struct { int g, kind, j, c; } lr_bkey;

static int cmp_bkey(const void *a, const void *b)
{
    const lr_bkey *x = a, *y = b;
    if (x->g != y->g) return x->g < y->g ? -1 : 1;
    if (x->kind != y->kind) return x->kind < y->kind ? -1 : 1;
    if (x->j != y->j) return x->j < y->j ? -1 : 1;
    return (x->c > y->c) - (x->c < y->c);
}

static int base_keys(const mk_store *s, const lr_pred *p, const double *w, lr_base *bs)
{
    int R = p->goff[s->M], cnt = 0, U = 0;
    lr_bkey *k = (lr_bkey *) R_alloc(R > 0 ? R : 1, sizeof(lr_bkey));
    bs->key = (int *) R_alloc(R > 0 ? R : 1, sizeof(int));
    for (int m = 0; m < s->M; m++)
        for (int c = p->goff[m]; c < p->goff[m + 1]; c++) {
            bs->key[c] = -1;
            if (w[c] == 0.0) continue;
            k[cnt].g = s->kgroup[m]; k[cnt].kind = mk_kernel_base_kind(s->ktype[m]);
            k[cnt].j = p->piv[c] - 1; k[cnt].c = c;
            cnt++;
        }
    qsort(k, cnt, sizeof(lr_bkey), cmp_bkey);
    bs->g = (int *) R_alloc(cnt > 0 ? cnt : 1, sizeof(int));
    bs->kind = (int *) R_alloc(cnt > 0 ? cnt : 1, sizeof(int));
    bs->j = (int *) R_alloc(cnt > 0 ? cnt : 1, sizeof(int));
    for (int i = 0; i < cnt; i++) {
        if (i == 0 || k[i].g != k[i - 1].g || k[i].kind != k[i - 1].kind || k[i].j != k[i - 1].j) {
            bs->g[U] = k[i].g; bs->kind[U] = k[i].kind; bs->j[U] = k[i].j;
            U++;
        }
        bs->key[k[i].c] = U - 1;
    }
    return U;
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
    lr_base bs;
    int U = base_keys(&st, &p, w, &bs);
    /* rows per block: the block's bases of every shared pivot within about 8 MB per thread */
    int B = 256;
    while (B > 16 && (double) B * (U + 1) * sizeof(double) > 8e6) B /= 2;
    int nblk = (nr + B - 1) / B;
    int nt = mk_threads_for(st.nthreads, (double) nr * R * st.p);
    if (nt > nblk) nt = nblk;
    size_t per = (size_t) B * (U + 1);
    double *scr = (double *) R_alloc((size_t) (nt > 0 ? nt : 1) * per, sizeof(double));
    double tlast = mk_time();
    (void) nt;
    /* rounds of two blocks per thread with an interrupt check between them */
    int rb = 2 * (nt > 0 ? nt : 1);
    for (int b0 = 0; b0 < nblk; b0 += rb) {
        int b1 = b0 + rb < nblk ? b0 + rb : nblk;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
#endif
        for (int blk = b0; blk < b1; blk++) {
            int i0 = blk * B, i1 = i0 + B < nr ? i0 + B : nr, len = i1 - i0;
            double *b = THREAD_BUF(scr, per), *base = b + B, *o = f + i0;
            for (int u = 0; u < U; u++)
                mk_kernel_base(st.x, st.n, st.z + i0, st.nr, len, bs.j[u],
                               st.gfeat + st.gstart[bs.g[u]], group_nf(&st, bs.g[u]), bs.kind[u],
                               base + (size_t) u * B);
            for (int i = 0; i < len; i++) o[i] = -c0;
            for (int m = 0; m < M; m++)
                for (int c = p.goff[m]; c < p.goff[m + 1]; c++) {
                    if (w[c] == 0.0) continue;
                    mk_kernel_apply(st.ktype[m], st.kpar1[m], st.kpar2[m],
                                    base + (size_t) bs.key[c] * B, len, b);
                    for (int i = 0; i < len; i++) o[i] += w[c] * b[i];
                }
        }
        mk_interrupt_every(&tlast, 0.02);
    }
    UNPROTECT(1);
    return out;
}
