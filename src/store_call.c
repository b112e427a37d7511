/* The kernel store's .Call entries: materialising a fly store (gram(), predict()), training
 * statistics, and the batch operations R calls directly (products, quadratic forms,
 * combinations, decision values, columns). Thin: check, call the store, return. */
#include "mklearn.h"
#include <R_ext/Rallocators.h>
#include <stdlib.h>
#include <string.h>

/* bad[m] = 1 where the per-kernel statistics v (per values each) are not all finite */
static void flag_nonfinite(const double *v, size_t per, int M, int *bad)
{
    for (int m = 0; m < M; m++)
        for (size_t k = 0; k < per; k++)
            if (!R_FINITE(v[(size_t) m * per + k])) { bad[m] = 1; break; }
}

/* the flagged kernels, 1-based */
static SEXP flagged(const int *bad, int M)
{
    int cnt = 0;
    for (int m = 0; m < M; m++) cnt += bad[m] != 0;
    SEXP out = allocVector(INTSXP, cnt);
    for (int m = 0, k = 0; m < M; m++) if (bad[m]) INTEGER(out)[k++] = m + 1;
    return out;
}

/* ------------------------------------------------------------------ store array pool */

/* While cv.mkl() searches (mkc_store_pool(TRUE)), the square training arrays come from an
   allocator whose free keeps the block last freed, and the next array that fits takes it: a
   search builds 18 stores of 0.3-0.7 GB one after the other, and each fresh block costs the
   zeroing of its pages on first touch (inst/notes/NOTES-model.md, "A store array reused
   across a search's fits"). Before an array the block does not hold, the garbage collector
   runs (about 40 ms), so the store of the fit before is free; arrays below min_bytes (zeroed
   faster) keep R's allocator. */
#define POOL_HDR 64   /* bytes before the block R sees: its capacity (keeps 16-byte alignment) */
static struct { int on; char *blk; size_t cap, min_bytes; int built, reused; } pool;

static void pool_release(char *base) { free(base); }

static void *pool_alloc(R_allocator_t *a, size_t size)
{
    (void) a;
    pool.built++;
    if (pool.blk && pool.cap >= size) {
        char *p = pool.blk;
        pool.blk = NULL;
        pool.reused++;
        return p + POOL_HDR;
    }
    if (pool.blk) { pool_release(pool.blk); pool.blk = NULL; }   /* too small: no two at once */
    char *p = malloc(size + POOL_HDR);
    if (!p) return NULL;   /* R reports it as any failed allocation */
    memcpy(p, &size, sizeof(size_t));
    return p + POOL_HDR;
}

static void pool_free(R_allocator_t *a, void *mem)
{
    (void) a;
    char *p = (char *) mem - POOL_HDR;
    size_t cap;
    memcpy(&cap, p, sizeof(size_t));
    if (pool.on && (!pool.blk || cap > pool.cap)) {   /* keep the larger of the two */
        if (pool.blk) pool_release(pool.blk);
        pool.blk = p;
        pool.cap = cap;
    } else pool_release(p);
}

static R_allocator_t pool_allocator = { pool_alloc, pool_free, NULL, NULL };

/* A training array of len doubles: from the pool while it is on (after a garbage collection,
   which hands the arrays no longer referenced to it), else R's own. */
static SEXP store_array(R_xlen_t len, int square)
{
    size_t bytes = (size_t) len * sizeof(double);
    if (!pool.on || !square || bytes < pool.min_bytes) return allocVector(REALSXP, len);
    if (!pool.blk || pool.cap < bytes) R_gc();
    return allocVector3(REALSXP, len, &pool_allocator);
}

/* mkc_store_pool(on, min_bytes): switch the pool on (for arrays of at least min_bytes) or off
   (which frees the block it holds); returns the arrays built from it and those that reused a
   block since it was last switched on. */
SEXP mkc_store_pool(SEXP on, SEXP min_bytes)
{
    if (!isLogical(on) || LENGTH(on) != 1 || LOGICAL(on)[0] == NA_LOGICAL)
        error("'on' must be TRUE or FALSE");
    if (!isReal(min_bytes) || LENGTH(min_bytes) != 1 || !(REAL(min_bytes)[0] >= 0))
        error("'min_bytes' must be a number >= 0");
    SEXP out = PROTECT(allocVector(INTSXP, 2));
    INTEGER(out)[0] = pool.built;
    INTEGER(out)[1] = pool.reused;
    pool.on = LOGICAL(on)[0];
    pool.min_bytes = (size_t) REAL(min_bytes)[0];
    if (pool.on) pool.built = pool.reused = 0;
    else if (pool.blk) { pool_release(pool.blk); pool.blk = NULL; }
    UNPROTECT(1);
    return out;
}

/* The dense array of a fly store: raw kernels by mk_gram, then the training normalisation
   (computed here: list(K, scale, colmeans, grandmean)) or, for a test store, the training
   statistics it carries (the normalised array). */
SEXP mkc_store_dense(SEXP store)
{
    mk_store st;
    mk_store_read(store, &st);
    if (st.kind != MK_STORE_FLY) error("only a fly store can be materialised");
    size_t len = (size_t) st.nr * st.n * st.M;
    SEXP K = PROTECT(store_array((R_xlen_t) len, st.square));
    mk_advise_huge(REAL(K), len * sizeof(double));
    SEXP dim = PROTECT(allocVector(INTSXP, 3));
    INTEGER(dim)[0] = st.nr; INTEGER(dim)[1] = st.n; INTEGER(dim)[2] = st.M;
    setAttrib(K, R_DimSymbol, dim);
    UNPROTECT(1);
    int *bad = (int *) R_alloc(st.M, sizeof(int));
    mk_gram(st.x, st.n, st.p, st.square ? NULL : st.z, st.nr, st.gstart, st.gfeat, st.M,
            st.kgroup, st.ktype, st.kpar1, st.kpar2, REAL(K), bad, st.nthreads);
    if (!st.square) {
        mk_store_normalize_test(&st, REAL(K));
        /* kernels with a non-finite value: attribute "nonfinite" (1-based), checked by R */
        if (st.rowmeans) flag_nonfinite(st.rowmeans, st.nr, st.M, bad);
        SEXP nf = PROTECT(flagged(bad, st.M));
        setAttrib(K, install("nonfinite"), nf);
        UNPROTECT(2);
        return K;
    }
    const char *nm[] = { "K", "scale", "colmeans", "grandmean", "nonfinite", NULL };
    SEXP out = mk_list_new(nm);
    mk_list_set(out, "K", K);
    int centre = st.norm == MK_NORM_CENTER_TRACE;
    SEXP sc = allocVector(REALSXP, st.M);
    mk_list_set(out, "scale", sc);
    SEXP cm = centre ? allocMatrix(REALSXP, st.n, st.M) : R_NilValue;
    mk_list_set(out, "colmeans", cm);
    SEXP gm = centre ? allocVector(REALSXP, st.M) : R_NilValue;
    mk_list_set(out, "grandmean", gm);
    mk_normalize(REAL(K), st.n, st.M, st.norm, st.jitter, REAL(sc), centre ? REAL(cm) : NULL,
                 centre ? REAL(gm) : NULL, st.nthreads);
    /* finite raw values stay finite after normalisation unless a statistic overflowed */
    flag_nonfinite(REAL(sc), 1, st.M, bad);
    if (centre) {
        flag_nonfinite(REAL(cm), st.n, st.M, bad);
        flag_nonfinite(REAL(gm), 1, st.M, bad);
    }
    mk_list_set(out, "nonfinite", flagged(bad, st.M));
    UNPROTECT(2);
    return out;
}

/* ------------------------------------------------------------ statistics, batch operations */

/* 1-based kernel indices from R (NULL: all) into 0-based C ones */
static const int *kernel_index(SEXP idx, int M, int *cnt)
{
    if (isNull(idx)) { *cnt = M; return NULL; }
    if (!isInteger(idx)) error("'idx' must be integer");
    int k = LENGTH(idx);
    int *out = (int *) R_alloc(k > 0 ? k : 1, sizeof(int));
    for (int j = 0; j < k; j++) {
        out[j] = INTEGER(idx)[j] - 1;
        if (out[j] < 0 || out[j] >= M) error("kernel index out of range");
    }
    *cnt = k;
    return out;
}

/* The mean diagonal of each kernel of a dense training store, as R's mean() computes it: a
   long double sum, then its correction pass (a constant diagonal gives its value exactly, so a
   kernel and its submatrices, the rows of a one-vs-one problem, share their scale) */
static void dense_diag_means(const mk_store *st, double *out)
{
    double *d = (double *) R_alloc(st->n, sizeof(double));
    for (int m = 0; m < st->M; m++) {
        mk_store_diag(st, m, d);
        long double t = 0.0, c = 0.0;
        for (int j = 0; j < st->n; j++) t += d[j];
        t /= st->n;
        for (int j = 0; j < st->n; j++) c += d[j] - t;
        out[m] = (double) (t + c / st->n);
    }
}

/* The training statistics of a store: list(scale, colmeans, grandmean, diag_mean). A dense
   store has only its mean diagonals (the rest NULL): n reads per kernel, in C because R's
   indexing of the diagonals is slow at thousands of kernels (inst/notes/NOTES-store.md). */
SEXP mkc_store_stats(SEXP store)
{
    mk_store st;
    mk_store_read(store, &st);
    if (!st.square) error("statistics need a training store");
    const char *nm[] = { "scale", "colmeans", "grandmean", "diag_mean", NULL };
    SEXP out = mk_list_new(nm);
    SEXP dm = allocVector(REALSXP, st.M);
    mk_list_set(out, "diag_mean", dm);
    if (st.kind == MK_STORE_DENSE) {
        dense_diag_means(&st, REAL(dm));
        UNPROTECT(1);
        return out;
    }
    if (st.kind == MK_STORE_LOWRANK) {
        /* the factors are normalised: only the mean diagonals */
        double *d = (double *) R_alloc(st.n, sizeof(double));
        for (int m = 0; m < st.M; m++) {
            mk_store_diag(&st, m, d);
            double t = 0.0;
            for (int i = 0; i < st.n; i++) t += d[i];
            REAL(dm)[m] = t / st.n;
        }
        UNPROTECT(1);
        return out;
    }
    SEXP sc = allocVector(REALSXP, st.M);
    mk_list_set(out, "scale", sc);
    int centre = st.norm == MK_NORM_CENTER_TRACE;
    SEXP cm = centre ? allocMatrix(REALSXP, st.n, st.M) : R_NilValue;
    mk_list_set(out, "colmeans", cm);
    SEXP gm = centre ? allocVector(REALSXP, st.M) : R_NilValue;
    mk_list_set(out, "grandmean", gm);
    mk_store_train_stats(&st, REAL(sc), centre ? REAL(cm) : NULL, centre ? REAL(gm) : NULL,
                         REAL(dm));
    UNPROTECT(1);
    return out;
}

/* the doubles of v, which must be len of them (else the error msg) */
static const double *reals(SEXP v, R_xlen_t len, const char *msg)
{
    if (!isReal(v) || XLENGTH(v) != len) error("%s", msg);
    return REAL(v);
}

/* The store and its kernel indices (NULL: all kernels, cnt = M) */
static const int *read_indexed(SEXP store, SEXP idx, mk_store *st, int *cnt)
{
    mk_store_read(store, st);
    return kernel_index(idx, st->M, cnt);
}

SEXP mkc_store_mv(SEXP store, SEXP idx, SEXP v)
{
    mk_store st;
    int cnt;
    const int *ix = read_indexed(store, idx, &st, &cnt);
    const double *vv = reals(v, st.n, "'v' must have n doubles");
    SEXP out = PROTECT(allocMatrix(REALSXP, st.nr, cnt));
    mk_store_mv(&st, ix, cnt, vv, REAL(out), (size_t) st.nr);
    UNPROTECT(1);
    return out;
}

SEXP mkc_store_quad(SEXP store, SEXP idx, SEXP v)
{
    mk_store st;
    int cnt;
    mk_store_read(store, &st);
    if (st.nr != st.n) error("quadratic forms need square kernels");
    const int *ix = kernel_index(idx, st.M, &cnt);
    SEXP out = PROTECT(allocVector(REALSXP, cnt));
    mk_store_quad(&st, ix, cnt, reals(v, st.n, "'v' must have n doubles"), REAL(out));
    UNPROTECT(1);
    return out;
}

SEXP mkc_store_combine(SEXP store, SEXP d)
{
    mk_store st;
    mk_store_read(store, &st);
    const double *dd = reals(d, st.M, "'d' must have M doubles");
    SEXP out = PROTECT(allocMatrix(REALSXP, st.nr, st.n));
    mk_store_combine(&st, dd, REAL(out));
    UNPROTECT(1);
    return out;
}

SEXP mkc_store_decision(SEXP store, SEXP idx, SEXP alpha)
{
    mk_store st;
    int cnt;
    const int *ix = read_indexed(store, idx, &st, &cnt);
    const double *a = reals(alpha, (R_xlen_t) st.n * cnt, "'alpha' must be n x length(idx)");
    SEXP out = PROTECT(allocVector(REALSXP, st.nr));
    mk_store_decision(&st, ix, cnt, a, REAL(out));
    UNPROTECT(1);
    return out;
}

SEXP mkc_store_cols(SEXP store, SEXP idx, SEXP j)
{
    mk_store st;
    int cnt, jj = asInteger(j) - 1;
    const int *ix = read_indexed(store, idx, &st, &cnt);
    if (jj < 0 || jj >= st.n) error("column index out of range");
    SEXP out = PROTECT(allocMatrix(REALSXP, st.nr, cnt));
    mk_store_cols(&st, ix, cnt, jj, REAL(out));
    UNPROTECT(1);
    return out;
}

/* The effective neighbours of the kernels idx (w NULL: one value each) or of their combination
   with weights w (one value), over the columns js (1-based): mk_kernel_neighbours */
SEXP mkc_store_neighbours(SEXP store, SEXP idx, SEXP js, SEXP w)
{
    mk_store st;
    int cnt;
    const int *ix = read_indexed(store, idx, &st, &cnt);
    if (!isInteger(js) || XLENGTH(js) < 1) error("'js' must be a non-empty integer vector");
    const int nj = LENGTH(js);
    int *j0 = (int *) R_alloc(nj, sizeof(int));
    for (int t = 0; t < nj; t++) {
        j0[t] = INTEGER(js)[t] - 1;
        if (j0[t] < 0 || j0[t] >= st.n || j0[t] >= st.nr) error("column index out of range");
    }
    const double *wv = isNull(w) ? NULL :
        reals(w, cnt, "'w' must be NULL or one weight per kernel");
    SEXP out = PROTECT(allocVector(REALSXP, wv ? 1 : cnt));
    mk_kernel_neighbours(&st, ix, cnt, j0, nj, wv, REAL(out));
    UNPROTECT(1);
    return out;
}

/* The diagonals of the training kernels idx (n x length(idx)), read by the store's diagonal
   (mk_store_diag): not a whole column per point (R/mkl.R kernel_diagonals()) */
SEXP mkc_store_diag(SEXP store, SEXP idx)
{
    mk_store st;
    int cnt;
    const int *ix = read_indexed(store, idx, &st, &cnt);
    if (!st.square) error("the diagonals need a training store");
    SEXP out = PROTECT(allocMatrix(REALSXP, st.n, cnt));
    for (int c = 0; c < cnt; c++) mk_store_diag(&st, ix ? ix[c] : c, REAL(out) + (size_t) c * st.n);
    UNPROTECT(1);
    return out;
}

/* A low-rank training store's squares off the diagonal of sum_c w_c K_idx[c] over rows `is`
   (NULL: every row; blocks of `bs` rows) and columns `js` (1-based), per column (R/store.R
   lowrank_offdiag()) */
SEXP mkc_store_offdiag(SEXP store, SEXP idx, SEXP w, SEXP js, SEXP is, SEXP bs)
{
    mk_store st;
    int cnt;
    const int *ix = read_indexed(store, idx, &st, &cnt);
    if (st.kind != MK_STORE_LOWRANK || !st.square) error("not a low-rank training store");
    if (!ix) {
        int *all = (int *) R_alloc(cnt > 0 ? cnt : 1, sizeof(int));
        for (int c = 0; c < cnt; c++) all[c] = c;
        ix = all;
    }
    const double *wv = reals(w, cnt, "'w' must have one weight per kernel");
    if (!isInteger(js) || !(isNull(is) || isInteger(is)))
        error("'js' must be integer and 'is' integer or NULL");
    const int nj = LENGTH(js), ni = isNull(is) ? st.n : LENGTH(is), b = asInteger(bs);
    if (nj < 1 || ni < 1 || b < 1) error("'js', 'is' and 'bs' must be non-empty and positive");
    int *j0 = (int *) R_alloc(nj, sizeof(int)), *i0 = NULL;
    for (int t = 0; t < nj; t++) {
        j0[t] = INTEGER(js)[t] - 1;
        if (j0[t] < 0 || j0[t] >= st.n) error("column index out of range");
    }
    if (!isNull(is)) {   /* NULL: every row, without an index of n */
        i0 = (int *) R_alloc(ni, sizeof(int));
        for (int t = 0; t < ni; t++) {
            i0[t] = INTEGER(is)[t] - 1;
            if (i0[t] < 0 || i0[t] >= st.n) error("row index out of range");
        }
    }
    SEXP out = PROTECT(allocVector(REALSXP, nj));
    mk_lowrank_offdiag(&st, ix, cnt, wv, j0, nj, i0, ni, b, REAL(out));
    UNPROTECT(1);
    return out;
}

/* A low-rank store's G_m' x_k for the kernels idx (x: n x length(idx)), one after the other */
SEXP mkc_store_factor_tmul(SEXP store, SEXP idx, SEXP x)
{
    mk_store st;
    int cnt;
    const int *ix = read_indexed(store, idx, &st, &cnt);
    if (st.kind != MK_STORE_LOWRANK) error("not a low-rank store");
    const double *xx = reals(x, (R_xlen_t) st.n * cnt, "'x' must be n x length(idx)");
    R_xlen_t len = 0;
    for (int k = 0; k < cnt; k++) len += st.goff[(ix ? ix[k] : k) + 1] - st.goff[ix ? ix[k] : k];
    SEXP out = PROTECT(allocVector(REALSXP, len));
    for (int k = 0, off = 0; k < cnt; k++) {
        int m = ix ? ix[k] : k;
        mk_store_factor_tmul(&st, m, xx + (size_t) k * st.n, REAL(out) + off);
        off += st.goff[m + 1] - st.goff[m];
    }
    UNPROTECT(1);
    return out;
}
