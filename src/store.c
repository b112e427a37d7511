/* The kernel store: the one way solvers read kernels.
 *
 * dense  the normalised nr x n x M array (column-major); columns and kernels are pointers into it.
 * fly    kernel columns computed from the data and the kernel description, then normalised with
 *        the training statistics exactly as mk_normalize / mk_normalize_test do on an array
 *        (same operations in the same order, so both backends agree to the last bit or so).
 *
 * Batch operations stream kernels column by column (contiguous memory, vectorisable) and take
 * their thread count from mk_threads_for(), so small work stays on one thread.
 *
 * Files: store.c (this: reading the R list, the dense and fly backends, the solver-facing
 * primitives and batch operations), store_chain.c (Gaussian chains of the fly backend),
 * store_pair.c (MWUMKL's column pairs and feature maps), store_call.c (.Call entries), store.h
 * (their shared internals).
 *
 * Adding a backend (e.g. low rank) is one file store_<name>.c beside these, plus:
 *  - a kind code (MK_STORE_<NAME> in mklearn.h, the same code in R/codes.R) and its fields in
 *    mk_store, filled by a branch of mk_store_read that checks them with error();
 *  - what every solver needs: mk_store_scratch (per-thread scratch of one single-kernel call),
 *    mk_store_col (column j of kernel m, nr rows, thread-safe, no R API) and mk_store_diag;
 *    a branch of each for the new kind, calling functions of store_<name>.c, and of
 *    col_scratch / pass_work (its scratch per column call and the cost of its columns);
 *  - mk_store_kernel, mk_store_ksrc's fill (the sweeps' column blocks), mk_store_decision and
 *    mk_store_cols have a fly path that reads the fly fields: the backend adds its branch there
 *    (low rank has one in the fill); mk_store_kmv2, mk_store_kquad,
 *    the batch operations (mv, quad, combine, axpy) read through mk_store_col and serve any
 *    backend unchanged, and the backend may specialise them (one branch, as dense does);
 *  - training statistics (mk_store_train_stats) and test stores where it has them;
 *  - MWUMKL's paths (store_pair.c) only if MWUMKL is to run on it (else R rejects the store
 *    for that method: the pair paths read fly fields for any kind but dense).
 * Calls go one way: store_call.c calls store.c; store.c and store_pair.c call store_chain.c
 * (and kernels.c, linalg.c); store_chain.c calls none of them.
 */
#include "store.h"
#include <math.h>
#include <string.h>

/* ------------------------------------------------------------------ reading the R list */

static const double *real_of(SEXP v, R_xlen_t len, const char *name)
{
    if (!isReal(v) || XLENGTH(v) != len) error("kernel store: '%s' must be %lld doubles", name,
                                               (long long) len);
    return REAL(v);
}

static const int *int_of(SEXP v, R_xlen_t len, const char *name)
{
    if (!isInteger(v) || (len >= 0 && XLENGTH(v) != len))
        error("kernel store: '%s' must be integer%s", name, len >= 0 ? " of the right length" : "");
    return INTEGER(v);
}

static void fly_rowmeans(mk_store *s);

/* a required entry of the store list */
static SEXP entry(SEXP s, const char *name) { return mk_list_elt(s, name, "kernel store: entry"); }

void mk_store_read(SEXP s, mk_store *st)
{
    if (!isNewList(s)) error("kernel store: not a list");
    memset(st, 0, sizeof(*st));
    st->kind = asInteger(entry(s, "kind"));
    SEXP nt = mk_list_elt(s, "nthreads", NULL);
    st->nthreads = isNull(nt) ? 0 : asInteger(nt);
    if (st->kind == MK_STORE_DENSE) {
        SEXP K = entry(s, "K");
        SEXP dim = getAttrib(K, R_DimSymbol);
        if (!isReal(K) || (LENGTH(dim) != 3 && LENGTH(dim) != 2))
            error("kernel store: 'K' must be a double nr x n x M array");
        st->nr = INTEGER(dim)[0];
        st->n = INTEGER(dim)[1];
        st->M = LENGTH(dim) == 3 ? INTEGER(dim)[2] : 1;
        st->K = REAL(K);
        st->square = st->nr == st->n;
    } else if (st->kind == MK_STORE_FLY) {
        SEXP x = entry(s, "x"), z = mk_list_elt(s, "z", NULL);
        if (!isReal(x) || !isMatrix(x)) error("kernel store: 'x' must be a double matrix");
        st->n = nrows(x);
        st->p = ncols(x);
        st->x = REAL(x);
        if (isNull(z)) {
            st->z = st->x; st->nr = st->n; st->square = 1;
        } else {
            if (!isReal(z) || !isMatrix(z) || ncols(z) != st->p)
                error("kernel store: 'z' must be a double matrix with the columns of 'x'");
            st->z = REAL(z); st->nr = nrows(z); st->square = 0;
        }
        SEXP kt = entry(s, "ktype");
        st->M = LENGTH(kt);
        st->ktype = int_of(kt, st->M, "ktype");
        st->kgroup = int_of(entry(s, "kgroup"), st->M, "kgroup");
        st->kpar1 = real_of(entry(s, "kpar1"), st->M, "kpar1");
        st->kpar2 = real_of(entry(s, "kpar2"), st->M, "kpar2");
        SEXP gs = entry(s, "gstart"), gf = entry(s, "gfeat");
        st->gstart = int_of(gs, -1, "gstart");
        st->gfeat = int_of(gf, -1, "gfeat");
        int ng = LENGTH(gs) - 1;
        if (ng < 1 || st->gstart[0] != 0 || st->gstart[ng] != LENGTH(gf))
            error("kernel store: malformed feature groups");
        for (int g = 0; g < ng; g++)
            if (st->gstart[g + 1] < st->gstart[g]) error("kernel store: malformed feature groups");
        for (int k = 0; k < LENGTH(gf); k++)
            if (st->gfeat[k] < 0 || st->gfeat[k] >= st->p)
                error("kernel store: feature index out of range");
        for (int m = 0; m < st->M; m++) {
            if (st->kgroup[m] < 0 || st->kgroup[m] >= ng)
                error("kernel store: group index out of range");
            if (st->ktype[m] < MK_LINEAR || st->ktype[m] > MK_CHISQ)
                error("kernel store: unknown kernel type");
        }
        st->norm = asInteger(entry(s, "norm"));
        st->jitter = asReal(entry(s, "jitter"));
        SEXP sc = mk_list_elt(s, "scale", NULL);
        if (!isNull(sc)) {
            st->scale = real_of(sc, st->M, "scale");
            if (st->norm == MK_NORM_CENTER_TRACE) {
                st->colmeans = real_of(entry(s, "colmeans"), (R_xlen_t) st->n * st->M, "colmeans");
                st->grandmean = real_of(entry(s, "grandmean"), st->M, "grandmean");
            }
            if (!st->square && st->norm == MK_NORM_CENTER_TRACE) fly_rowmeans(st);
        } else if (st->norm != MK_NORM_NONE && !st->square)
            error("kernel store: a test store needs the training normalisation");
    } else if (st->kind == MK_STORE_LOWRANK) {
        lr_read(s, st);
    } else error("kernel store: unknown kind %d", st->kind);
    if (st->nr < 1 || st->n < 1 || st->M < 1) error("kernel store: empty");
}

/* ------------------------------------------------------------------ fly columns */

/* The raw (un-normalised) kernel m on rows i0 <= i < i1 against training point j. */
static void fly_raw(const mk_store *s, int m, int j, int i0, int i1, double *out)
{
    int g = s->kgroup[m];
    mk_kernel_base(s->x, s->n, s->z + i0, s->nr, i1 - i0, j, s->gfeat + s->gstart[g],
                   group_nf(s, g), mk_kernel_base_kind(s->ktype[m]), out);
    mk_kernel_apply(s->ktype[m], s->kpar1[m], s->kpar2[m], out, i1 - i0, out);
}

/* The raw diagonal of training kernel m (n values) in one call: a point's distances to itself
   are 0 and its inner product is summed feature by feature as mk_kernel_base sums it, so the
   values equal fly_raw's entry by entry. */
static void fly_raw_diag(const mk_store *s, int m, double *out)
{
    int g = s->kgroup[m], n = s->n, kind = mk_kernel_base_kind(s->ktype[m]);
    for (int i = 0; i < n; i++) out[i] = 0.0;
    if (kind == MK_BASE_IP) {
        const int *feat = s->gfeat + s->gstart[g];
        for (int f = 0; f < group_nf(s, g); f++) {
            const double *xc = s->x + (size_t) feat[f] * n;
            for (int i = 0; i < n; i++) out[i] += xc[i] * xc[i];
        }
    }
    mk_kernel_apply(s->ktype[m], s->kpar1[m], s->kpar2[m], out, n, out);
}

void store_fly_raw(const mk_store *s, int m, int j, int i0, int i1, double *out)
{
    fly_raw(s, m, j, i0, i1, out);
}

void store_fly_raw_diag(const mk_store *s, int m, double *out) { fly_raw_diag(s, m, out); }

/* Normalise raw values of kernel m, rows i0..i1-1, column j, in place (training statistics;
   the same arithmetic as mk_normalize / mk_normalize_test on an array). */
static void fly_norm(const mk_store *s, int m, int j, int i0, int i1, double *v)
{
    int len = i1 - i0;
    if (s->norm == MK_NORM_CENTER_TRACE) {
        double gm = s->grandmean[m], inv = 1.0 / s->scale[m];
        const double *cm = s->colmeans + (size_t) m * s->n;
        if (s->square) {
            for (int k = 0; k < len; k++) v[k] = (v[k] + (gm - cm[i0 + k] - cm[j])) * inv;
        } else {
            const double *rm = s->rowmeans + (size_t) m * s->nr;
            for (int k = 0; k < len; k++) v[k] = (v[k] - rm[i0 + k] - cm[j] + gm) * inv;
        }
    } else if (s->norm == MK_NORM_TRACE) {
        double inv = 1.0 / s->scale[m];
#ifdef _OPENMP
#pragma omp simd
#endif
        for (int k = 0; k < len; k++) v[k] *= inv;
    }
    if (s->square && s->jitter != 0.0 && j >= i0 && j < i1) v[j - i0] += s->jitter;
}

static void fly_col(const mk_store *s, int m, int j, int i0, int i1, double *out)
{
    fly_raw(s, m, j, i0, i1, out);
    fly_norm(s, m, j, i0, i1, out);
}

/* Row means of the raw test kernels (centring), nr x M, summed over j in order. */
static void fly_rowmeans(mk_store *s)
{
    int nr = s->nr, n = s->n, M = s->M;
    double *rm = (double *) R_alloc((size_t) nr * M, sizeof(double));
    int nt = mk_threads_for(s->nthreads, (double) nr * n * M);
    double *buf = (double *) R_alloc((size_t) nt * nr, sizeof(double));
    (void) nt;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
#endif
    for (int m = 0; m < M; m++) {
        double *b = THREAD_BUF(buf, nr);
        double *r = rm + (size_t) m * nr;
        for (int i = 0; i < nr; i++) r[i] = 0.0;
        for (int j = 0; j < n; j++) {
            fly_raw(s, m, j, 0, nr, b);
            for (int i = 0; i < nr; i++) r[i] += b[i];
        }
        for (int i = 0; i < nr; i++) r[i] /= n;
    }
    s->rowmeans = rm;
}

void mk_store_train_stats(const mk_store *s, double *scale, double *colmeans, double *grandmean,
                          double *diagmean)
{
    int n = s->n, M = s->M;
    if (!s->square) error("kernel store: training statistics need a training store");
    if (s->kind == MK_STORE_LOWRANK)
        error("kernel store: a low-rank store's factors are normalised");
    int nt = mk_threads_for(s->nthreads, (double) n * n * M);
    double *buf = (double *) R_alloc((size_t) nt * n, sizeof(double));
    (void) nt;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
#endif
    for (int m = 0; m < M; m++) {
        double *b = THREAD_BUF(buf, n);
        double tr = 0.0;
        if (s->norm == MK_NORM_CENTER_TRACE) {
            double *cm = colmeans + (size_t) m * n, gm = 0.0;
            for (int j = 0; j < n; j++) {
                fly_raw(s, m, j, 0, n, b);
                double t = 0.0;
                for (int i = 0; i < n; i++) t += b[i];
                cm[j] = t / n;
                gm += cm[j];
                tr += b[j];
            }
            gm /= n;
            grandmean[m] = gm;
            /* trace of the centred kernel, entry by entry as mk_normalize sums it */
            tr = 0.0;
            fly_raw_diag(s, m, b);
            for (int j = 0; j < n; j++) tr += b[j] + (gm - cm[j] - cm[j]);
        } else {
            fly_raw_diag(s, m, b);
            for (int j = 0; j < n; j++) tr += b[j];
        }
        scale[m] = s->norm == MK_NORM_NONE ? 1.0 : (tr > 0.0 ? tr : 1.0);
        /* the mean diagonal of the stored kernel (non-finite when the kernel is) */
        if (diagmean) diagmean[m] = tr / scale[m] / n + s->jitter;
    }
}

/* ------------------------------------------------------------------ single-kernel primitives */

size_t mk_store_scratch(const mk_store *s)
{
    if (s->kind == MK_STORE_DENSE) return 0;
    double whole = (double) s->nr * s->n;
    return whole <= MK_KERNEL_WHOLE_MAX ? (size_t) whole : (size_t) MK_SWEEP_COLS * s->nr;
}

const double *mk_store_col(const mk_store *s, int m, int j, double *buf)
{
    if (s->kind == MK_STORE_DENSE)
        return s->K + (size_t) m * s->nr * s->n + (size_t) j * s->nr;
    if (s->kind == MK_STORE_LOWRANK) lr_col(s, m, j, 0, s->nr, buf);
    else fly_col(s, m, j, 0, s->nr, buf);
    return buf;
}

const double *mk_store_kernel(const mk_store *s, int m, double *buf)
{
    if (s->kind == MK_STORE_DENSE) return s->K + (size_t) m * s->nr * s->n;
    for (int j = 0; j < s->n; j++) mk_store_col(s, m, j, buf + (size_t) j * s->nr);
    return buf;
}

/* mk_ksrc's columns j + c, c < w, of kernel m into buf + c n: rows 0..j + c (the upper
   triangle, half the work) or all rows (full), each as a whole kernel would hold it */
static void store_fill(const void *ctx, int m, int j, int w, int full, double *buf)
{
    const mk_store *s = (const mk_store *) ctx;
    for (int c = 0; c < w; c++) {
        int i1 = full ? s->n : j + c + 1;
        double *out = buf + (size_t) c * s->n;
        if (s->kind == MK_STORE_LOWRANK) lr_col(s, m, j + c, 0, i1, out);
        else fly_col(s, m, j + c, 0, i1, out);
    }
}

/* (a training store: square; no R API, called from threads) */
void mk_store_ksrc(const mk_store *s, int m, int full, double *buf, mk_ksrc *K)
{
    K->A = s->kind == MK_STORE_DENSE ? s->K + (size_t) m * s->nr * s->n : NULL;
    if (!K->A && (double) s->n * s->n <= MK_KERNEL_WHOLE_MAX) {
        /* small enough to hold whole: computed once, column by column (the same values) */
        for (int j = 0; j < s->n; j++) store_fill(s, m, j, 1, full, buf + (size_t) j * s->n);
        K->A = buf;
    }
    K->n = s->n;
    K->m = m;
    K->fill = store_fill;
    K->ctx = s;
    K->buf = buf;
}

void mk_store_kmv2(const mk_store *s, int m, const double *x1, const double *x2, double *y1,
                   double *y2, double *buf)
{
    int nr = s->nr, n = s->n;
    if (s->kind == MK_STORE_LOWRANK) { lr_kmv2(s, m, x1, x2, y1, y2); return; }
    for (int i = 0; i < nr; i++) y1[i] = 0.0;
    if (x2) for (int i = 0; i < nr; i++) y2[i] = 0.0;
    /* dense columns are streamed, zeros of x1 included, unless most of x1 is zero (skipping
       a few zeros costs more than it saves: inst/notes/NOTES-store.md) */
    int stream = 0;
    if (!x2 && s->kind == MK_STORE_DENSE) {
        int nz = 0;
        for (int j = 0; j < n; j++) nz += x1[j] != 0.0;
        stream = 4 * nz >= n;
    }
    /* a square dense kernel read whole: the shared sweep (linalg.c), the same sums */
    if (s->kind == MK_STORE_DENSE && s->square && (x2 || stream)) {
        mk_symv2_full(mk_store_kernel(s, m, NULL), n, x1, x2, y1, y2);
        return;
    }
    for (int j = 0; j < n; j++) {
        double a1 = x1[j];
        if (!x2 && a1 == 0.0 && !stream) continue;
        const double *c = mk_store_col(s, m, j, buf);
        if (x2) {
            double a2 = x2[j];
            for (int i = 0; i < nr; i++) { y1[i] += c[i] * a1; y2[i] += c[i] * a2; }
        } else if (a1 != 0.0 || stream) {
            for (int i = 0; i < nr; i++) y1[i] += c[i] * a1;
        }
    }
}

/* v'Av from the lower triangle of a symmetric dense A: half the reads of a full sweep. With
   u != NULL, in the same read, u = A v on the rows where v != 0 (the others: scratch): below
   the diagonal column j adds v_j A_ij to u_i, and u_j takes its own column's sum (HessianMKL's
   Q from the certificate's pass: inst/notes/NOTES-model.md, "The solver's passes"); v'Av has
   the same bits either way. */
static double quad_lower(const double *A, int n, const double *v, double *u)
{
    double s = 0.0;
    if (u) for (int i = 0; i < n; i++) u[i] = 0.0;
    for (int j = 0; j < n; j++) {
        const double *aj = A + (size_t) j * n;
        double vj = v[j], t0 = 0.0, t1 = 0.0, t2 = 0.0, t3 = 0.0;
        if (vj == 0.0) continue;
        /* four partial sums: independent chains of additions */
        int i = j + 1;
        if (u) {
            for (; i + 3 < n; i += 4) {
                double a0 = aj[i], a1 = aj[i + 1], a2 = aj[i + 2], a3 = aj[i + 3];
                t0 += a0 * v[i]; t1 += a1 * v[i + 1]; t2 += a2 * v[i + 2]; t3 += a3 * v[i + 3];
                u[i] += a0 * vj; u[i + 1] += a1 * vj; u[i + 2] += a2 * vj; u[i + 3] += a3 * vj;
            }
            for (; i < n; i++) { t0 += aj[i] * v[i]; u[i] += aj[i] * vj; }
        } else {
            for (; i + 3 < n; i += 4) {
                t0 += aj[i] * v[i]; t1 += aj[i + 1] * v[i + 1];
                t2 += aj[i + 2] * v[i + 2]; t3 += aj[i + 3] * v[i + 3];
            }
            for (; i < n; i++) t0 += aj[i] * v[i];
        }
        double t = (t0 + t1) + (t2 + t3);
        if (u) u[j] += aj[j] * vj + t;
        s += vj * (2.0 * t + aj[j] * vj);
    }
    return s;
}

double mk_store_kquad(const mk_store *s, int m, const double *v, double *buf)
{
    int n = s->n;
    if (s->kind == MK_STORE_DENSE) return quad_lower(mk_store_kernel(s, m, NULL), n, v, NULL);
    if (s->kind == MK_STORE_LOWRANK) return lr_kquad(s, m, v);
    double q = 0.0;
    for (int j = 0; j < n; j++) {
        if (v[j] == 0.0) continue;
        const double *c = mk_store_col(s, m, j, buf);
        double t = 0.0;
        for (int i = 0; i < n; i++) t += c[i] * v[i];
        q += v[j] * t;
    }
    return q;
}

/* ------------------------------------------------------------------ batch operations */

/* per-thread scratch of the size column operations need (fly: nr doubles) */
static double *col_scratch(const mk_store *s, int nt)
{
    if (s->kind == MK_STORE_DENSE) return NULL;
    return (double *) R_alloc((size_t) nt * s->nr, sizeof(double));
}

/* work of one pass over cnt kernels (fly columns cost about p times more) */
static double pass_work(const mk_store *s, int cnt)
{
    double w = (double) cnt * s->nr * s->n;
    return s->kind == MK_STORE_DENSE ? w : w * 4.0;
}

void mk_store_mv(const mk_store *s, const int *idx, int cnt, const double *v, double *out,
                 size_t ldo)
{
    int nt = mk_threads_for(s->nthreads, s->kind == MK_STORE_LOWRANK ?
                            lr_pass_work(s, idx, cnt) : pass_work(s, cnt));
    double *scr = col_scratch(s, nt);
    (void) nt;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
#endif
    for (int k = 0; k < cnt; k++)
        mk_store_kmv2(s, idx ? idx[k] : k, v, NULL, out + (size_t) k * ldo, NULL,
                      THREAD_BUF(scr, s->nr));
}

void mk_store_quad(const mk_store *s, const int *idx, int cnt, const double *v, double *out)
{
    int nt = mk_threads_for(s->nthreads, s->kind == MK_STORE_LOWRANK ?
                            lr_pass_work(s, idx, cnt) / 2.0 : pass_work(s, cnt));
    double *scr = col_scratch(s, nt);
    (void) nt;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, 4)
#endif
    for (int k = 0; k < cnt; k++)
        out[k] = mk_store_kquad(s, idx ? idx[k] : k, v, THREAD_BUF(scr, s->nr));
}

void mk_store_quad_u(const mk_store *s, const int *idx, int cnt, const double *v, double *out,
                     double *U)
{
    int n = s->n;
    int nt = mk_threads_for(s->nthreads, pass_work(s, cnt));
    (void) nt;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, 4)
#endif
    for (int k = 0; k < cnt; k++) {
        int m = idx ? idx[k] : k;
        out[k] = quad_lower(mk_store_kernel(s, m, NULL), n, v, U + (size_t) m * n);
    }
}

/* A combination adds kernels into out by blocks of columns of about COMB_DOUBLES doubles
   (256 KB, in cache), four kernels per sweep of the block (added one after the other: the
   rounding of a kernel-by-kernel sum, as on the fly), each kernel's slab read contiguously
   (not one column of every kernel in turn: inst/notes/NOTES-store.md). */
#define COMB_DOUBLES 32768

/* out (= or +=) sum_k w[k] K_{idx[k]} (idx NULL: K_k), and if w2 != NULL also
   out2 += sum_k w2[k] K_{idx[k]} in the same read; kernels with both weights 0 skipped; blocks
   of columns in parallel, kernels added in the order given (deterministic). */
static void combine_blocks(const mk_store *s, const int *idx, const double *w, const double *w2,
                           int cnt, double *out, double *out2, int add)
{
    int nr = s->nr, n = s->n, nact = 0;
    for (int k = 0; k < cnt; k++) if (w[k] != 0.0 || (w2 && w2[k] != 0.0)) nact++;
    int nt = mk_threads_for(s->nthreads, pass_work(s, nact));
    int CB = COMB_DOUBLES / nr;
    if (CB < 1) CB = 1;
    if (CB > (n + nt - 1) / nt) CB = (n + nt - 1) / nt;   /* a block for every thread */
    int nblk = (n + CB - 1) / CB;
    if (nt > nblk) nt = nblk;
    double *scr = col_scratch(s, nt);
    (void) nt;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
#endif
    for (int blk = 0; blk < nblk; blk++) {
        int j0 = blk * CB, j1 = j0 + CB < n ? j0 + CB : n;
        size_t len = (size_t) (j1 - j0) * nr;
        double *o = out + (size_t) j0 * nr, *o2 = out2 ? out2 + (size_t) j0 * nr : NULL;
        double *b = THREAD_BUF(scr, nr);
        if (!add) for (size_t i = 0; i < len; i++) o[i] = 0.0;
        if (s->kind == MK_STORE_DENSE) {
            /* four kernels per sweep of the out block(s) */
            const double *cs[4];
            double ws[4], us[4];
            int q = 0;
            for (int k = 0; k <= cnt; k++) {
                if (k < cnt) {
                    if (w[k] == 0.0 && !(w2 && w2[k] != 0.0)) continue;
                    int m = idx ? idx[k] : k;
                    cs[q] = s->K + ((size_t) m * n + j0) * nr;
                    ws[q] = w[k];
                    us[q] = w2 ? w2[k] : 0.0;
                    q++;
                }
                if (q == 4) {
                    const double *c0 = cs[0], *c1 = cs[1], *c2 = cs[2], *c3 = cs[3];
                    double w0 = ws[0], w1 = ws[1], w2_ = ws[2], w3 = ws[3];
                    if (o2) {
                        double u0 = us[0], u1 = us[1], u2 = us[2], u3 = us[3];
                        for (size_t i = 0; i < len; i++) {
                            double a0 = c0[i], a1 = c1[i], a2 = c2[i], a3 = c3[i];
                            o[i] = (((o[i] + w0 * a0) + w1 * a1) + w2_ * a2) + w3 * a3;
                            o2[i] = (((o2[i] + u0 * a0) + u1 * a1) + u2 * a2) + u3 * a3;
                        }
                    } else
                        for (size_t i = 0; i < len; i++)
                            o[i] = (((o[i] + w0 * c0[i]) + w1 * c1[i]) + w2_ * c2[i]) + w3 * c3[i];
                    q = 0;
                } else if (k == cnt) {
                    for (int r = 0; r < q; r++) {
                        const double *c = cs[r];
                        double wr = ws[r], ur = us[r];
                        for (size_t i = 0; i < len; i++) o[i] += wr * c[i];
                        if (o2) for (size_t i = 0; i < len; i++) o2[i] += ur * c[i];
                    }
                }
            }
            continue;
        }
        for (int k = 0; k < cnt; k++) {
            double wk = w[k], uk = w2 ? w2[k] : 0.0;
            if (wk == 0.0 && uk == 0.0) continue;
            int m = idx ? idx[k] : k;
            for (int j = j0; j < j1; j++) {
                const double *c = mk_store_col(s, m, j, b);
                double *oj = o + (size_t) (j - j0) * nr;
                for (int i = 0; i < nr; i++) oj[i] += wk * c[i];
                if (o2) {
                    double *o2j = o2 + (size_t) (j - j0) * nr;
                    for (int i = 0; i < nr; i++) o2j[i] += uk * c[i];
                }
            }
        }
    }
}

void mk_store_combine(const mk_store *s, const double *d, double *out)
{
    combine_blocks(s, NULL, d, NULL, s->M, out, NULL, 0);
}

void mk_store_combine_add(const mk_store *s, const int *idx, const double *w, const double *w2,
                          int cnt, double *out, double *out2)
{
    if (cnt > 0) combine_blocks(s, idx, w, w2, cnt, out, out2, 1);
}

void mk_store_axpy(const mk_store *s, int m, double t, double *A)
{
    int nr = s->nr, n = s->n;
    int nt = mk_threads_for(s->nthreads, pass_work(s, 1));
    double *scr = col_scratch(s, nt);
    (void) nt;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static)
#endif
    for (int j = 0; j < n; j++) {
        const double *c = mk_store_col(s, m, j, THREAD_BUF(scr, nr));
        double *aj = A + (size_t) j * nr;
        for (int i = 0; i < nr; i++) aj[i] += t * c[i];
    }
}

/* -------------------------------------------------------------- decisions, columns, diagonals */

/* Decision values: threads take blocks of rows, each streaming every kernel's columns over its
   rows (no reduction, deterministic). On the fly, kernels of one feature group share the base
   distances of each column, a group's Gaussians are chained, and more than 2048 kernels are
   also split into ranges summed apart. */
void mk_store_decision(const mk_store *s, const int *idx, int cnt, const double *alpha,
                       double *out)
{
    int nr = s->nr, n = s->n;
    if (s->kind == MK_STORE_LOWRANK) { lr_decision(s, idx, cnt, alpha, out); return; }
    const int B = 256, fly = s->kind != MK_STORE_DENSE;
    int nblk = (nr + B - 1) / B;
    /* on the fly, the kernels also by ranges of 2048 (few rows, many kernels: both threads),
       each range's sums apart and added in order (the same values for any number of threads) */
    const int KR = 2048, nrng = fly && cnt > KR ? (cnt + KR - 1) / KR : 1;
    int nt = mk_threads_for(s->nthreads, pass_work(s, cnt));
    if (nt > nblk * nrng) nt = nblk * nrng;
    double *part = nrng > 1 ? (double *) R_alloc((size_t) nrng * nr, sizeof(double)) : NULL;
    double *scr = !fly ? NULL :
        (double *) R_alloc((size_t) (nt > 0 ? nt : 1) * 3 * B, sizeof(double));
    /* on the fly: the kernels by feature group, a group's Gaussians in increasing gamma and
       chained (lq > 0: a link from the kernel before in this order) */
    int *ord = NULL, *lq = NULL;
    double *gam = NULL, *at = NULL;
    if (fly && cnt > 0) {
        ord = (int *) R_alloc(cnt, sizeof(int));
        lq = (int *) R_alloc(cnt, sizeof(int));
        gam = (double *) R_alloc(cnt, sizeof(double));
        chain_key *key = (chain_key *) R_alloc(cnt, sizeof(chain_key));
        for (int k = 0; k < cnt; k++) {
            int m = idx ? idx[k] : k, rbf = s->ktype[m] == MK_RBF;
            key[k].m = k;
            key[k].g = 2 * s->kgroup[m] + rbf;
            key[k].gam = rbf ? rbf_gamma(s, m) : -1.0;
        }
        store_chain_links(s, key, cnt, lq);
        for (int t = 0; t < cnt; t++) { ord[t] = key[t].m; gam[t] = key[t].gam; }
        /* the coefficients in that order, by training point: read in sequence below */
        at = (double *) R_alloc((size_t) cnt * n, sizeof(double));
        for (int t = 0; t < cnt; t++) {
            const double *ak = alpha + (size_t) ord[t] * n;
            for (int j = 0; j < n; j++) at[(size_t) j * cnt + t] = ak[j];
        }
    }
    (void) nt;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
#endif
    for (int task = 0; task < nblk * nrng; task++) {
        int blk = task / nrng, rg = task % nrng;
        int i0 = blk * B, i1 = i0 + B < nr ? i0 + B : nr, len = i1 - i0;
        int t0 = rg * KR, t1 = nrng > 1 && t0 + KR < cnt ? t0 + KR : cnt;
        double *o = (nrng > 1 ? part + (size_t) rg * nr : out) + i0;
        for (int i = 0; i < len; i++) o[i] = 0.0;
        if (!fly) {
            for (int k = 0; k < cnt; k++) {
                const double *Km = s->K + (size_t) (idx ? idx[k] : k) * nr * n;
                const double *ak = alpha + (size_t) k * n;
                for (int j = 0; j < n; j++) {
                    double a = ak[j];
                    if (a == 0.0) continue;
                    const double *c = Km + (size_t) j * nr + i0;
                    for (int i = 0; i < len; i++) o[i] += c[i] * a;
                }
            }
        } else {
            double *base = THREAD_BUF(scr, 3 * B), *val = base + B, *ech = val + B;
            for (int j = 0; j < n; j++) {
                int prev_g = -1, prev_kind = 0, chained = 0;
                const double *aj = at + (size_t) j * cnt;
                for (int t = t0; t < t1; t++) {
                    int k = ord[t];
                    double a = aj[t];
                    if (a == 0.0) { chained = 0; continue; }
                    int m = idx ? idx[k] : k, g = s->kgroup[m];
                    int kind = mk_kernel_base_kind(s->ktype[m]);
                    if (g != prev_g || kind != prev_kind) {
                        mk_kernel_base(s->x, n, s->z + i0, nr, len, j, s->gfeat + s->gstart[g],
                                       group_nf(s, g), kind, base);
                        prev_g = g; prev_kind = kind;
                    }
                    if (s->ktype[m] == MK_RBF) {
                        /* ech: the raw Gaussian of this kernel, from the one before if linked */
                        if (lq[t] > 0 && chained)
                            store_chain_link1(gam[t] - gam[t - 1], lq[t], base, ech, len);
                        else mk_vexp_ax(-gam[t], base, ech, len);
                        chained = 1;
                        memcpy(val, ech, (size_t) len * sizeof(double));
                    } else {
                        mk_kernel_apply(s->ktype[m], s->kpar1[m], s->kpar2[m], base, len, val);
                        chained = 0;
                    }
                    fly_norm(s, m, j, i0, i1, val);
                    for (int i = 0; i < len; i++) o[i] += val[i] * a;
                }
            }
        }
    }
    if (nrng > 1)
        for (int i = 0; i < nr; i++) {
            double v = 0.0;
            for (int rg = 0; rg < nrng; rg++) v += part[(size_t) rg * nr + i];
            out[i] = v;
        }
}

void mk_store_cols(const mk_store *s, const int *idx, int cnt, int j, double *out)
{
    double *base = s->kind == MK_STORE_DENSE ? NULL : (double *) R_alloc(s->nr, sizeof(double));
    mk_store_cols_buf(s, idx, cnt, j, out, base);
}

void mk_store_cols_buf(const mk_store *s, const int *idx, int cnt, int j, double *out,
                       double *base)
{
    mk_store_cols_rows(s, idx, cnt, j, 0, s->nr, out, (size_t) s->nr, base);
}

/* Rows are computed independently (distances, kernel function and normalisation entry by
   entry), so a row range has the bits of the same rows of the whole column. */
void mk_store_cols_rows(const mk_store *s, const int *idx, int cnt, int j, int i0, int i1,
                        double *out, size_t ldo, double *base)
{
    int nr = s->nr, len = i1 - i0, prev_g = -1, prev_kind = 0;
    for (int k = 0; k < cnt; k++) {
        int m = idx ? idx[k] : k;
        double *o = out + (size_t) k * ldo;
        if (s->kind == MK_STORE_DENSE) {
            memcpy(o, mk_store_col(s, m, j, NULL) + i0, (size_t) len * sizeof(double));
            continue;
        }
        if (s->kind == MK_STORE_LOWRANK) { lr_col(s, m, j, i0, i1, o); continue; }
        int g = s->kgroup[m], kind = mk_kernel_base_kind(s->ktype[m]);
        if (g != prev_g || kind != prev_kind) {
            mk_kernel_base(s->x, s->n, s->z + i0, nr, len, j, s->gfeat + s->gstart[g],
                           group_nf(s, g), kind, base);
            prev_g = g; prev_kind = kind;
        }
        mk_kernel_apply(s->ktype[m], s->kpar1[m], s->kpar2[m], base, len, o);
        fly_norm(s, m, j, i0, i1, o);
    }
}

void mk_store_diag(const mk_store *s, int m, double *d)
{
    if (!s->square) error("kernel store: the diagonal needs a training store");
    int n = s->n;
    if (s->kind == MK_STORE_DENSE) {
        const double *K = s->K + (size_t) m * n * n;
        for (int j = 0; j < n; j++) d[j] = K[(size_t) j * n + j];
        return;
    }
    if (s->kind == MK_STORE_LOWRANK) { lr_diag(s, m, d); return; }
    fly_raw_diag(s, m, d);
    for (int j = 0; j < n; j++) d[j] = norm_one(s, m, j, j, d[j]);
}

/* ------------------------------------------------------------------ materialising a store */

void mk_store_normalize_test(const mk_store *s, double *Kt)
{
    int nr = s->nr, n = s->n, M = s->M;
    if (s->kind == MK_STORE_LOWRANK)
        error("kernel store: a low-rank store's factors are normalised");
    int nt = mk_threads_for(s->nthreads, (double) nr * n * M);
    (void) nt;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static)
#endif
    for (int m = 0; m < M; m++)
        for (int j = 0; j < n; j++)
            fly_norm(s, m, j, 0, nr, Kt + (size_t) m * nr * n + (size_t) j * nr);
}
