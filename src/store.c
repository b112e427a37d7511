/* The kernel store: the one way solvers read kernels.
 *
 * dense  the normalised nr x n x M array (column-major); columns and kernels are pointers into it.
 * fly    kernel columns computed from the data and the kernel description, then normalised with
 *        the training statistics exactly as mk_normalize / mk_normalize_test do on an array
 *        (same operations in the same order, so both backends agree to the last bit or so).
 *
 * Batch operations stream kernels column by column (contiguous memory, vectorisable) and take
 * their thread count from mk_threads_for(), so small work stays on one thread.
 */
#include "mklearn.h"
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

void mk_store_read(SEXP s, mk_store *st)
{
    if (!isNewList(s)) error("kernel store: not a list");
    memset(st, 0, sizeof(*st));
    st->kind = asInteger(mk_list_elt(s, "kind", "kernel store: entry"));
    SEXP nt = mk_list_elt(s, "nthreads", NULL);
    st->nthreads = isNull(nt) ? 0 : asInteger(nt);
    if (st->kind == MK_STORE_DENSE) {
        SEXP K = mk_list_elt(s, "K", "kernel store: entry");
        SEXP dim = getAttrib(K, R_DimSymbol);
        if (!isReal(K) || (LENGTH(dim) != 3 && LENGTH(dim) != 2))
            error("kernel store: 'K' must be a double nr x n x M array");
        st->nr = INTEGER(dim)[0];
        st->n = INTEGER(dim)[1];
        st->M = LENGTH(dim) == 3 ? INTEGER(dim)[2] : 1;
        st->K = REAL(K);
        st->square = st->nr == st->n;
    } else if (st->kind == MK_STORE_FLY) {
        SEXP x = mk_list_elt(s, "x", "kernel store: entry"), z = mk_list_elt(s, "z", NULL);
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
        SEXP kt = mk_list_elt(s, "ktype", "kernel store: entry");
        st->M = LENGTH(kt);
        st->ktype = int_of(kt, st->M, "ktype");
        st->kgroup = int_of(mk_list_elt(s, "kgroup", "kernel store: entry"), st->M, "kgroup");
        st->kpar1 = real_of(mk_list_elt(s, "kpar1", "kernel store: entry"), st->M, "kpar1");
        st->kpar2 = real_of(mk_list_elt(s, "kpar2", "kernel store: entry"), st->M, "kpar2");
        SEXP gs = mk_list_elt(s, "gstart", "kernel store: entry"), gf = mk_list_elt(s, "gfeat", "kernel store: entry");
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
        st->norm = asInteger(mk_list_elt(s, "norm", "kernel store: entry"));
        st->jitter = asReal(mk_list_elt(s, "jitter", "kernel store: entry"));
        SEXP sc = mk_list_elt(s, "scale", NULL);
        if (!isNull(sc)) {
            st->scale = real_of(sc, st->M, "scale");
            if (st->norm == MK_NORM_CENTER_TRACE) {
                st->colmeans = real_of(mk_list_elt(s, "colmeans", "kernel store: entry"), (R_xlen_t) st->n * st->M,
                                       "colmeans");
                st->grandmean = real_of(mk_list_elt(s, "grandmean", "kernel store: entry"), st->M, "grandmean");
            }
            if (!st->square && st->norm == MK_NORM_CENTER_TRACE) fly_rowmeans(st);
        } else if (st->norm != MK_NORM_NONE && !st->square)
            error("kernel store: a test store needs the training normalisation");
    } else error("kernel store: unknown kind %d", st->kind);
    if (st->nr < 1 || st->n < 1 || st->M < 1) error("kernel store: empty");
}

/* ------------------------------------------------------------------ fly columns */

/* this thread's slice of a per-thread scratch array (NULL stays NULL) */
#ifdef _OPENMP
#define THREAD_BUF(base, len) ((base) ? (base) + (size_t) omp_get_thread_num() * (len) : NULL)
#else
#define THREAD_BUF(base, len) (base)
#endif

static int group_nf(const mk_store *s, int g) { return s->gstart[g + 1] - s->gstart[g]; }

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
    return s->kind == MK_STORE_DENSE ? 0 : (size_t) s->nr * s->n;
}

const double *mk_store_col(const mk_store *s, int m, int j, double *buf)
{
    if (s->kind == MK_STORE_DENSE)
        return s->K + (size_t) m * s->nr * s->n + (size_t) j * s->nr;
    fly_col(s, m, j, 0, s->nr, buf);
    return buf;
}

const double *mk_store_kernel(const mk_store *s, int m, double *buf)
{
    if (s->kind == MK_STORE_DENSE) return s->K + (size_t) m * s->nr * s->n;
    for (int j = 0; j < s->n; j++) fly_col(s, m, j, 0, s->nr, buf + (size_t) j * s->nr);
    return buf;
}

const double *mk_store_kernel_upper(const mk_store *s, int m, double *buf)
{
    if (s->kind == MK_STORE_DENSE) return s->K + (size_t) m * s->nr * s->n;
    for (int j = 0; j < s->n; j++) fly_col(s, m, j, 0, j + 1, buf + (size_t) j * s->nr);
    return buf;
}

void mk_store_kmv2(const mk_store *s, int m, const double *x1, const double *x2, double *y1,
                   double *y2, double *buf)
{
    int nr = s->nr, n = s->n;
    for (int i = 0; i < nr; i++) y1[i] = 0.0;
    if (x2) for (int i = 0; i < nr; i++) y2[i] = 0.0;
    /* dense columns are streamed, zeros of x1 included, unless most of x1 is zero: skipping
       them made a product at half zeros 1.8x slower than at none (200 x 200 kernels) */
    int stream = 0;
    if (!x2 && s->kind == MK_STORE_DENSE) {
        int nz = 0;
        for (int j = 0; j < n; j++) nz += x1[j] != 0.0;
        stream = 4 * nz >= n;
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

/* v'Av from the lower triangle of a symmetric dense A: half the reads of a full sweep */
static double quad_lower(const double *A, int n, const double *v)
{
    double s = 0.0;
    for (int j = 0; j < n; j++) {
        const double *aj = A + (size_t) j * n;
        double vj = v[j], t0 = 0.0, t1 = 0.0, t2 = 0.0, t3 = 0.0;
        if (vj == 0.0) continue;
        /* four partial sums: independent chains of additions */
        int i = j + 1;
        for (; i + 3 < n; i += 4) {
            t0 += aj[i] * v[i]; t1 += aj[i + 1] * v[i + 1];
            t2 += aj[i + 2] * v[i + 2]; t3 += aj[i + 3] * v[i + 3];
        }
        for (; i < n; i++) t0 += aj[i] * v[i];
        s += vj * (2.0 * ((t0 + t1) + (t2 + t3)) + aj[j] * vj);
    }
    return s;
}

double mk_store_kquad(const mk_store *s, int m, const double *v, double *buf)
{
    int n = s->n;
    if (s->kind == MK_STORE_DENSE) return quad_lower(mk_store_kernel(s, m, NULL), n, v);
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
    int nt = mk_threads_for(s->nthreads, pass_work(s, cnt));
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
    int nt = mk_threads_for(s->nthreads, pass_work(s, cnt));
    double *scr = col_scratch(s, nt);
    (void) nt;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, 4)
#endif
    for (int k = 0; k < cnt; k++)
        out[k] = mk_store_kquad(s, idx ? idx[k] : k, v, THREAD_BUF(scr, s->nr));
}

/* A combination adds kernels into out by blocks of columns of about COMB_DOUBLES doubles
   (256 KB, in cache), four kernels per sweep of the block (added one after the other: the
   rounding of a kernel-by-kernel sum, as on the fly), each kernel's slab read contiguously.
   Reading one column of every kernel in turn instead (320 KB apart at n = 200) made a pass
   over 6000 kernels 2.0 s against 0.15-0.2 s now (a streaming read of the array: 0.2 s). */
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

/* ------------------------------------------------------------------ chains */

/* Gaussian kernels on one feature group, in increasing gamma, form chains: exp(-gamma_k b) =
   exp(-gamma_{k-1} b) exp(-(gamma_k - gamma_{k-1}) b), the second factor a Taylor polynomial
   of degree q in u = (gamma_k - gamma_{k-1}) b, u <= delta * bmax (bmax: the group's largest
   squared distance over the rows), with q the least degree whose remainder
   u^(q+1) / (q+1)! is below 2^-54. A link is made when delta * bmax <= 0.1 (q <= 9), a chain
   has at most 16 kernels (rounding adds about one unit in the last place per link); its first
   kernel takes the exponential itself. */
#define CHAIN_LEN 16
typedef struct { int m, g; double gam; } chain_key;
static int chain_cmp(const void *a, const void *b)
{
    const chain_key *x = a, *y = b;
    if (x->g != y->g) return x->g < y->g ? -1 : 1;
    if (x->gam != y->gam) return x->gam < y->gam ? -1 : 1;
    return x->m < y->m ? -1 : (x->m > y->m);
}
static double rbf_gamma(const mk_store *s, int m) { return 1.0 / (2.0 * s->kpar1[m] * s->kpar1[m]); }

/* (-1)^j / j!, j = 0..9 */
static const double exp_taylor[10] = {
    1.0, -1.0, 1.0 / 2, -1.0 / 6, 1.0 / 24, -1.0 / 120, 1.0 / 720, -1.0 / 5040, 1.0 / 40320,
    -1.0 / 362880 };

/* e *= exp(-delta b) (one column) and e1 *= exp(-delta b1), e2 *= exp(-delta b2) (two, in
   one pass) by the degree-q Taylor polynomial; q a constant in each call below, so the loops
   are unrolled and vectorised */
static inline __attribute__((always_inline)) void
link1_q(double delta, const int q, const double *restrict b, double *restrict e, int len)
{
#ifdef _OPENMP
#pragma omp simd
#endif
    for (int i = 0; i < len; i++) {
        double u = delta * b[i], p = exp_taylor[q];
        for (int j = q - 1; j >= 0; j--) p = p * u + exp_taylor[j];
        e[i] *= p;
    }
}

static inline __attribute__((always_inline)) void
link2_q(double delta, const int q, const double *restrict b1, const double *restrict b2,
        double *restrict e1, double *restrict e2, int len)
{
#ifdef _OPENMP
#pragma omp simd
#endif
    for (int i = 0; i < len; i++) {
        double u1 = delta * b1[i], u2 = delta * b2[i];
        double p1 = exp_taylor[q], p2 = exp_taylor[q];
        for (int j = q - 1; j >= 0; j--) { p1 = p1 * u1 + exp_taylor[j]; p2 = p2 * u2 + exp_taylor[j]; }
        e1[i] *= p1;
        e2[i] *= p2;
    }
}

/* the degree as a constant: CALL(Q) for Q = q (9 above 8) */
#define CHAIN_DISPATCH(q, CALL)                                                           \
    switch (q) {                                                                          \
    case 1: CALL(1); break; case 2: CALL(2); break; case 3: CALL(3); break;               \
    case 4: CALL(4); break; case 5: CALL(5); break; case 6: CALL(6); break;               \
    case 7: CALL(7); break; case 8: CALL(8); break; default: CALL(9); break;              \
    }

MK_CLONES
static void chain_link1(double delta, int q, const double *restrict b, double *restrict e,
                        int len)
{
#define LINK1(Q) link1_q(delta, Q, b, e, len)
    CHAIN_DISPATCH(q, LINK1)
#undef LINK1
}

MK_CLONES
static void chain_link2(double delta, int q, const double *restrict b1, const double *restrict b2,
                        double *restrict e1, double *restrict e2, int len)
{
#define LINK2(Q) link2_q(delta, Q, b1, b2, e1, e2, len)
    CHAIN_DISPATCH(q, LINK2)
#undef LINK2
}

/* The link degree from gamma_{k-1} to gamma_k on a group whose squared distances are at most
   bmax: the least q with u^(q+1) / (q+1)! <= 2^-54 for u = (gamma_k - gamma_{k-1}) bmax, or 0
   (no link) when u > 0.1. */
static int chain_degree(double dgam, double bmax)
{
    double u = dgam * bmax;
    if (!(u <= 0.1) || !R_FINITE(u)) return 0;
    double t = u;
    int q = 1;
    while (t * u / (q + 1) > 0x1p-54) { t = t * u / (q + 1); q++; }
    return q;
}

/* The largest squared distance of group g between any two rows of x and z: the sum over its
   features of the squared range of their values. */
static double group_bmax(const mk_store *s, int g)
{
    double v = 0.0;
    for (int f = s->gstart[g]; f < s->gstart[g + 1]; f++) {
        const double *xc = s->x + (size_t) s->gfeat[f] * s->n;
        const double *zc = s->z + (size_t) s->gfeat[f] * s->nr;
        double lo = xc[0], hi = xc[0];
        for (int i = 1; i < s->n; i++) { lo = xc[i] < lo ? xc[i] : lo; hi = xc[i] > hi ? xc[i] : hi; }
        for (int i = 0; i < s->nr; i++) { lo = zc[i] < lo ? zc[i] : lo; hi = zc[i] > hi ? zc[i] : hi; }
        v += (hi - lo) * (hi - lo);
    }
    return v;
}

/* Sorts key (g: 2 x feature group, + 1 for a Gaussian; gam: a Gaussian's gamma) by group and
   gamma, and gives each the degree of its link from the key before it (lq; 0: none): only
   Gaussians of one group, in runs of at most CHAIN_LEN. */
static void chain_links(const mk_store *s, chain_key *key, int cnt, int *lq)
{
    qsort(key, cnt, sizeof(chain_key), chain_cmp);
    int ng = 0;
    for (int t = 0; t < cnt; t++) if (key[t].g / 2 + 1 > ng) ng = key[t].g / 2 + 1;
    double *bmax = (double *) R_alloc(ng > 0 ? ng : 1, sizeof(double));
    for (int g = 0; g < ng; g++) bmax[g] = -1.0;
    int len = 0;
    for (int t = 0; t < cnt; t++) {
        int q = 0, g = key[t].g / 2;
        if (t > 0 && key[t].g % 2 == 1 && key[t].g == key[t - 1].g && len < CHAIN_LEN) {
            if (bmax[g] < 0.0) bmax[g] = group_bmax(s, g);
            q = chain_degree(key[t].gam - key[t - 1].gam, bmax[g]);
        }
        lq[t] = q;
        len = q > 0 ? len + 1 : 1;
    }
}

/* Decision values: threads take blocks of rows, each streaming every kernel's columns over its
   rows (no reduction, deterministic). On the fly, kernels of one feature group share the base
   distances of each column, a group's Gaussians are chained, and more than 2048 kernels are
   also split into ranges summed apart. */
void mk_store_decision(const mk_store *s, const int *idx, int cnt, const double *alpha,
                       double *out)
{
    int nr = s->nr, n = s->n;
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
        chain_links(s, key, cnt, lq);
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
                        if (lq[t] > 0 && chained) chain_link1(gam[t] - gam[t - 1], lq[t], base, ech, len);
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
    int nr = s->nr, prev_g = -1, prev_kind = 0;
    double *base = s->kind == MK_STORE_DENSE ? NULL : (double *) R_alloc(nr, sizeof(double));
    for (int k = 0; k < cnt; k++) {
        int m = idx ? idx[k] : k;
        double *o = out + (size_t) k * nr;
        if (s->kind == MK_STORE_DENSE) {
            memcpy(o, mk_store_col(s, m, j, NULL), (size_t) nr * sizeof(double));
            continue;
        }
        int g = s->kgroup[m], kind = mk_kernel_base_kind(s->ktype[m]);
        if (g != prev_g || kind != prev_kind) {
            mk_kernel_base(s->x, s->n, s->z, nr, nr, j, s->gfeat + s->gstart[g], group_nf(s, g),
                           kind, base);
            prev_g = g; prev_kind = kind;
        }
        mk_kernel_apply(s->ktype[m], s->kpar1[m], s->kpar2[m], base, nr, o);
        fly_norm(s, m, j, 0, nr, o);
    }
}

/* ------------------------------------------------------------------ column pairs */

void mk_store_pair_init(const mk_store *s, mk_store_pair *pp)
{
    memset(pp, 0, sizeof(*pp));
    pp->s = s;
    pp->j1 = pp->j2 = -1;
    pp->nthreads = s->nthreads;
    if (s->kind == MK_STORE_DENSE) return;
    int ng = 0;
    for (int m = 0; m < s->M; m++) if (s->kgroup[m] + 1 > ng) ng = s->kgroup[m] + 1;
    pp->ng = ng;
    /* which base kinds each group needs */
    int *need = (int *) R_alloc(ng, sizeof(int));
    for (int g = 0; g < ng; g++) need[g] = 0;
    for (int m = 0; m < s->M; m++) need[s->kgroup[m]] |= mk_kernel_base_kind(s->ktype[m]);
    /* share the bases of a group's two columns when kernels share groups (on average two or
       more kernels per group) and the bases take at most 256 MB */
    size_t slots = 0;
    for (int g = 0; g < ng; g++)
        for (int b = 0; b < 3; b++) if (need[g] & (1 << b)) slots++;
    double bytes = (double) slots * 2.0 * s->nr * sizeof(double);
    if (2.0 * slots > (double) s->M || bytes > 256e6) return;
    pp->share = 1;
    pp->nslot = (int) slots;
    pp->slot = (int *) R_alloc((size_t) ng * 3, sizeof(int));
    pp->sgroup = (int *) R_alloc(slots, sizeof(int));
    pp->skind = (int *) R_alloc(slots, sizeof(int));
    int k = 0;
    for (int g = 0; g < ng; g++)
        for (int b = 0; b < 3; b++) {
            if (need[g] & (1 << b)) {
                pp->slot[g * 3 + b] = k;
                pp->sgroup[k] = g;
                pp->skind[k] = 1 << b;
                k++;
            } else pp->slot[g * 3 + b] = -1;
        }
    pp->base = (double *) R_alloc(slots * 2 * (size_t) s->nr, sizeof(double));
}

static int kind_bit(int kind) { return kind == MK_BASE_D2 ? 0 : (kind == MK_BASE_IP ? 1 : 2); }

/* Base values of both columns j1, j2 for rows i0..i1-1 of one feature group, in one pass over
   the group's columns of z: 32 rows at a time, their sums kept in registers across the
   group's features (added in the order mk_kernel_base adds them: the same values up to the
   rounding of fused multiply-adds in the AVX versions). */
MK_CLONES
static void pair_base(const mk_store *s, int g, int kind, int j1, int j2, int i0, int i1,
                      double *o1, double *o2)
{
    int len = i1 - i0, n = s->n, nr = s->nr, nf = group_nf(s, g);
    const int *feat = s->gfeat + s->gstart[g];
    if (kind == MK_BASE_CH) {
        for (int i = 0; i < len; i++) { o1[i] = 0.0; o2[i] = 0.0; }
        for (int f = 0; f < nf; f++) {
            size_t c = (size_t) feat[f];
            const double *zc = s->z + c * nr + i0;
            double b1 = s->x[c * n + j1], b2 = s->x[c * n + j2];
            for (int i = 0; i < len; i++) {
                double a = zc[i], d1 = a - b1, s1 = a + b1, d2 = a - b2, s2 = a + b2;
                if (s1 != 0.0) o1[i] += d1 * d1 / s1;
                if (s2 != 0.0) o2[i] += d2 * d2 / s2;
            }
        }
        return;
    }
    const int d2 = kind == MK_BASE_D2;
    int i = 0;
    for (; i + 32 <= len; i += 32) {
        double a1[32] = { 0 }, a2[32] = { 0 };
        for (int f = 0; f < nf; f++) {
            size_t c = (size_t) feat[f];
            const double *zc = s->z + c * nr + i0 + i;
            double b1 = s->x[c * n + j1], b2 = s->x[c * n + j2];
            if (d2) {
#ifdef _OPENMP
#pragma omp simd
#endif
                for (int k = 0; k < 32; k++) {
                    double e1 = zc[k] - b1, e2 = zc[k] - b2;
                    a1[k] += e1 * e1;
                    a2[k] += e2 * e2;
                }
            } else {
#ifdef _OPENMP
#pragma omp simd
#endif
                for (int k = 0; k < 32; k++) { a1[k] += zc[k] * b1; a2[k] += zc[k] * b2; }
            }
        }
        for (int k = 0; k < 32; k++) { o1[i + k] = a1[k]; o2[i + k] = a2[k]; }
    }
    for (; i < len; i++) {
        double a1 = 0.0, a2 = 0.0;
        for (int f = 0; f < nf; f++) {
            size_t c = (size_t) feat[f];
            double zv = s->z[c * nr + i0 + i], b1 = s->x[c * n + j1], b2 = s->x[c * n + j2];
            if (d2) { double e1 = zv - b1, e2 = zv - b2; a1 += e1 * e1; a2 += e2 * e2; }
            else { a1 += zv * b1; a2 += zv * b2; }
        }
        o1[i] = a1;
        o2[i] = a2;
    }
}

void mk_store_pair_set(mk_store_pair *pp, int j1, int j2)
{
    const mk_store *s = pp->s;
    pp->j1 = j1;
    pp->j2 = j2;
    if (!pp->share) return;
    int nr = s->nr, B = 1024, nb = (nr + B - 1) / B, ntask = pp->nslot * nb;
    double work = 0.0;
    for (int k = 0; k < pp->nslot; k++) work += 6.0 * nr * group_nf(s, pp->sgroup[k]);
    int nt = mk_threads_for(pp->nthreads, work);
    (void) nt;
#ifdef _OPENMP
#pragma omp parallel for if (nt > 1) num_threads(nt) schedule(dynamic, 1)
#endif
    for (int task = 0; task < ntask; task++) {
        int k = task / nb, b = task % nb;
        int i0 = b * B, i1 = i0 + B < nr ? i0 + B : nr;
        double *o1 = pp->base + (size_t) k * 2 * nr;
        pair_base(s, pp->sgroup[k], pp->skind[k], j1, j2, i0, i1, o1 + i0, o1 + nr + i0);
    }
}

/* One training value of kernel m, row i, column j, from its raw value: fly_norm's arithmetic. */
static double norm_one(const mk_store *s, int m, int i, int j, double v)
{
    if (s->norm == MK_NORM_CENTER_TRACE) {
        const double *cm = s->colmeans + (size_t) m * s->n;
        v = (v + (s->grandmean[m] - cm[i] - cm[j])) * (1.0 / s->scale[m]);
    } else if (s->norm == MK_NORM_TRACE) v *= 1.0 / s->scale[m];
    return i == j ? v + s->jitter : v;
}

/* out = rows i0..i0+len-1 of the normalised columns j1 minus j2 of kernel m from their raw
   values c1, c2 (out may be c2); the rows j1, j2 (diagonal entries, jitter) one value at a
   time. inv: 1 / scale[m] (trace), 1 (none). */
MK_CLONES
static void pair_finish(const mk_store *s, int m, double inv, int i0, int len, int j1, int j2,
                        const double *c1, const double *c2, double *out)
{
    int i1 = i0 + len, r1 = j1 >= i0 && j1 < i1, r2 = j2 >= i0 && j2 < i1;
    double a11 = r1 ? c1[j1 - i0] : 0.0, a21 = r1 ? c2[j1 - i0] : 0.0;
    double a12 = r2 ? c1[j2 - i0] : 0.0, a22 = r2 ? c2[j2 - i0] : 0.0;
    if (s->norm == MK_NORM_CENTER_TRACE) {
        double gm = s->grandmean[m];
        const double *cm = s->colmeans + (size_t) m * s->n + i0;
        double e1 = s->colmeans[(size_t) m * s->n + j1], e2 = s->colmeans[(size_t) m * s->n + j2];
#ifdef _OPENMP
#pragma omp simd
#endif
        for (int k = 0; k < len; k++)
            out[k] = (c1[k] + (gm - cm[k] - e1)) * inv - (c2[k] + (gm - cm[k] - e2)) * inv;
        if (r1) out[j1 - i0] = norm_one(s, m, j1, j1, a11) - norm_one(s, m, j1, j2, a21);
        if (r2) out[j2 - i0] = norm_one(s, m, j2, j1, a12) - norm_one(s, m, j2, j2, a22);
        return;
    }
    if (s->norm == MK_NORM_TRACE) {
#ifdef _OPENMP
#pragma omp simd
#endif
        for (int k = 0; k < len; k++) out[k] = c1[k] * inv - c2[k] * inv;
    } else {
#ifdef _OPENMP
#pragma omp simd
#endif
        for (int k = 0; k < len; k++) out[k] = c1[k] - c2[k];
    }
    /* norm_one's arithmetic without its reads of the store */
    double J = s->jitter;
    if (s->norm == MK_NORM_TRACE) { a11 *= inv; a21 *= inv; a12 *= inv; a22 *= inv; }
    if (r1) out[j1 - i0] = (a11 + J) - (j1 == j2 ? a21 + J : a21);
    if (r2) out[j2 - i0] = (j2 == j1 ? a12 + J : a12) - (a22 + J);
}

/* The shared base values of kernel m's group for rows i0.. (both columns), or NULL. */
static const double *pair_shared(const mk_store_pair *pp, int m, int i0)
{
    if (!pp->share) return NULL;
    const mk_store *s = pp->s;
    int k = pp->slot[s->kgroup[m] * 3 + kind_bit(mk_kernel_base_kind(s->ktype[m]))];
    return pp->base + (size_t) k * 2 * s->nr + i0;
}

static double norm_inv(const mk_store *s, int m)
{
    return s->norm == MK_NORM_NONE ? 1.0 : 1.0 / s->scale[m];
}

void mk_store_pair_diff(const mk_store_pair *pp, int m, int i0, int i1, double *d, double *buf)
{
    const mk_store *s = pp->s;
    int nr = s->nr, len = i1 - i0, j1 = pp->j1, j2 = pp->j2;
    if (!s->square) error("kernel store: column pairs need a training store");
    if (s->kind == MK_STORE_DENSE) {
        const double *K = s->K + (size_t) m * nr * s->n;
        const double *c1 = K + (size_t) j1 * nr + i0, *c2 = K + (size_t) j2 * nr + i0;
#ifdef _OPENMP
#pragma omp simd
#endif
        for (int k = 0; k < len; k++) d[k] = c1[k] - c2[k];
        return;
    }
    /* raw columns: the first in buf, the second in d */
    double *o1 = buf;
    int g = s->kgroup[m], kind = mk_kernel_base_kind(s->ktype[m]);
    const double *b1 = pair_shared(pp, m, i0), *b2;
    if (b1) b2 = b1 + nr;
    else {
        mk_kernel_base(s->x, s->n, s->z + i0, nr, len, j1, s->gfeat + s->gstart[g],
                       group_nf(s, g), kind, o1);
        mk_kernel_base(s->x, s->n, s->z + i0, nr, len, j2, s->gfeat + s->gstart[g],
                       group_nf(s, g), kind, d);
        b1 = o1; b2 = d;
    }
    mk_kernel_apply(s->ktype[m], s->kpar1[m], s->kpar2[m], b1, len, o1);
    mk_kernel_apply(s->ktype[m], s->kpar1[m], s->kpar2[m], b2, len, d);
    pair_finish(s, m, norm_inv(s, m), i0, len, j1, j2, o1, d, d);
}

int mk_store_pair_runs(mk_store_pair *pp, int *idx, int cnt, int chain, int *rstart)
{
    const mk_store *s = pp->s;
    pp->rm = idx;
    pp->rlq = (int *) R_alloc(cnt > 0 ? cnt : 1, sizeof(int));
    pp->rinv = (double *) R_alloc(cnt > 0 ? cnt : 1, sizeof(double));
    pp->rgam = (double *) R_alloc(cnt > 0 ? cnt : 1, sizeof(double));
    int nruns = cnt;
    for (int k = 0; k < cnt; k++) { pp->rlq[k] = 0; rstart[k] = k; }
    if (s->kind == MK_STORE_FLY && pp->share && chain && cnt > 1) {
        /* the Gaussian kernels first, by group and gamma; the others after, in their order */
        chain_key *key = (chain_key *) R_alloc(cnt, sizeof(chain_key));
        int nrbf = 0, nother = 0;
        int *other = (int *) R_alloc(cnt, sizeof(int));
        for (int k = 0; k < cnt; k++) {
            int m = idx[k];
            if (s->ktype[m] == MK_RBF) {
                key[nrbf].m = m; key[nrbf].g = 2 * s->kgroup[m] + 1; key[nrbf].gam = rbf_gamma(s, m);
                nrbf++;
            } else other[nother++] = m;
        }
        chain_links(s, key, nrbf, pp->rlq);
        nruns = 0;
        for (int k = 0; k < nrbf; k++) {
            idx[k] = key[k].m;
            if (pp->rlq[k] == 0) rstart[nruns++] = k;
        }
        for (int k = 0; k < nother; k++) {
            idx[nrbf + k] = other[k];
            pp->rlq[nrbf + k] = 0;
            rstart[nruns++] = nrbf + k;
        }
    }
    rstart[nruns] = cnt;
    for (int k = 0; k < cnt; k++) {
        int m = idx[k];
        pp->rinv[k] = s->kind == MK_STORE_FLY ? norm_inv(s, m) : 1.0;
        pp->rgam[k] = s->kind == MK_STORE_FLY && s->ktype[m] == MK_RBF ? rbf_gamma(s, m) : 0.0;
    }
    return nruns;
}

void mk_store_pair_diff_run(const mk_store_pair *pp, int k0, int cnt, int i0, int i1, double *d,
                            size_t ldd, double *buf)
{
    const mk_store *s = pp->s;
    int len = i1 - i0, nr = s->nr;
    const int *ms = pp->rm + k0;
    if (cnt == 1 || pp->rlq[k0 + 1] == 0) {
        for (int k = 0; k < cnt; k++) mk_store_pair_diff(pp, ms[k], i0, i1, d + k * ldd, buf);
        return;
    }
    /* a chain: Gaussian kernels of one group with shared base values */
    const double *b1 = pair_shared(pp, ms[0], i0), *b2 = b1 + nr;
    const double *gam = pp->rgam + k0, *inv = pp->rinv + k0;
    const int *lq = pp->rlq + k0;
    double *e1 = buf, *e2 = buf + len;
    mk_vexp_ax(-gam[0], b1, e1, len);
    mk_vexp_ax(-gam[0], b2, e2, len);
    pair_finish(s, ms[0], inv[0], i0, len, pp->j1, pp->j2, e1, e2, d);
    for (int k = 1; k < cnt; k++) {
        chain_link2(gam[k] - gam[k - 1], lq[k], b1, b2, e1, e2, len);
        pair_finish(s, ms[k], inv[k], i0, len, pp->j1, pp->j2, e1, e2, d + k * ldd);
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
    fly_raw_diag(s, m, d);
    for (int j = 0; j < n; j++) d[j] = norm_one(s, m, j, j, d[j]);
}

/* ------------------------------------------------------------------ finite feature maps */

int mk_store_fmap(const mk_store *s, int m, int *key, double *w)
{
    if (s->kind != MK_STORE_FLY || !s->square) return 0;
    int t = s->ktype[m], g = s->kgroup[m];
    if ((t != MK_POLY && t != MK_LINEAR) || group_nf(s, g) != 1) return 0;
    int deg = t == MK_LINEAR ? 1 : (int) s->kpar1[m];
    double c = t == MK_LINEAR ? 0.0 : s->kpar2[m];
    if (deg < 1 || deg + 1 > MK_FMAP_MAX || !R_FINITE(c)) return 0;
    double inv = s->norm == MK_NORM_NONE ? 1.0 : 1.0 / s->scale[m], binom = 1.0;
    /* (a b + c)^deg = sum_k binom(deg, k) c^(deg - k) a^k b^k */
    for (int k = 0; k <= deg; k++) {
        double cp = 1.0;
        for (int e = k; e < deg; e++) cp *= c;
        w[k] = binom * cp * inv;
        binom = binom * (deg - k) / (k + 1);
    }
    *key = s->gfeat[s->gstart[g]];
    return deg + 1;
}

void mk_store_fmap_basis(const mk_store *s, int key, int q, double *phi)
{
    int n = s->n;
    const double *xc = s->x + (size_t) key * n;
    for (int i = 0; i < n; i++) {
        double v = 1.0;
        for (int k = 0; k < q; k++) { phi[(size_t) k * n + i] = v; v *= xc[i]; }
    }
    if (s->norm != MK_NORM_CENTER_TRACE) return;
    for (int k = 0; k < q; k++) {
        double *f = phi + (size_t) k * n, mean = 0.0;
        for (int i = 0; i < n; i++) mean += f[i];
        mean /= n;
        for (int i = 0; i < n; i++) f[i] -= mean;
    }
}

/* ------------------------------------------------------------------ materialising a store */

void mk_store_normalize_test(const mk_store *s, double *Kt)
{
    int nr = s->nr, n = s->n, M = s->M;
    int nt = mk_threads_for(s->nthreads, (double) nr * n * M);
    (void) nt;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static)
#endif
    for (int m = 0; m < M; m++)
        for (int j = 0; j < n; j++)
            fly_norm(s, m, j, 0, nr, Kt + (size_t) m * nr * n + (size_t) j * nr);
}

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

/* The dense array of a fly store: raw kernels by mk_gram, then the training normalisation
   (computed here: list(K, scale, colmeans, grandmean)) or, for a test store, the training
   statistics it carries (the normalised array). */
SEXP mkc_store_dense(SEXP store)
{
    mk_store st;
    mk_store_read(store, &st);
    if (st.kind != MK_STORE_FLY) error("only a fly store can be materialised");
    size_t len = (size_t) st.nr * st.n * st.M;
    SEXP K = PROTECT(allocVector(REALSXP, (R_xlen_t) len));
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
    SET_VECTOR_ELT(out, 0, K);
    int centre = st.norm == MK_NORM_CENTER_TRACE;
    SEXP sc = allocVector(REALSXP, st.M);
    SET_VECTOR_ELT(out, 1, sc);
    SEXP cm = centre ? allocMatrix(REALSXP, st.n, st.M) : R_NilValue;
    SET_VECTOR_ELT(out, 2, cm);
    SEXP gm = centre ? allocVector(REALSXP, st.M) : R_NilValue;
    SET_VECTOR_ELT(out, 3, gm);
    mk_normalize(REAL(K), st.n, st.M, st.norm, st.jitter, REAL(sc), centre ? REAL(cm) : NULL,
                 centre ? REAL(gm) : NULL, st.nthreads);
    /* finite raw values stay finite after normalisation unless a statistic overflowed */
    flag_nonfinite(REAL(sc), 1, st.M, bad);
    if (centre) {
        flag_nonfinite(REAL(cm), st.n, st.M, bad);
        flag_nonfinite(REAL(gm), 1, st.M, bad);
    }
    SET_VECTOR_ELT(out, 4, flagged(bad, st.M));
    UNPROTECT(2);
    return out;
}

/* ------------------------------------------------------------------ .Call */

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
   store has only its mean diagonals (the rest NULL): n reads per kernel, where R's indexing of
   the diagonals took 0.13 s for 6000 kernels of 200 x 200. */
SEXP mkc_store_stats(SEXP store)
{
    mk_store st;
    mk_store_read(store, &st);
    if (!st.square) error("statistics need a training store");
    const char *nm[] = { "scale", "colmeans", "grandmean", "diag_mean", NULL };
    SEXP out = mk_list_new(nm);
    SEXP dm = allocVector(REALSXP, st.M);
    SET_VECTOR_ELT(out, 3, dm);
    if (st.kind == MK_STORE_DENSE) {
        dense_diag_means(&st, REAL(dm));
        UNPROTECT(1);
        return out;
    }
    SEXP sc = allocVector(REALSXP, st.M);
    SET_VECTOR_ELT(out, 0, sc);
    int centre = st.norm == MK_NORM_CENTER_TRACE;
    SEXP cm = centre ? allocMatrix(REALSXP, st.n, st.M) : R_NilValue;
    SET_VECTOR_ELT(out, 1, cm);
    SEXP gm = centre ? allocVector(REALSXP, st.M) : R_NilValue;
    SET_VECTOR_ELT(out, 2, gm);
    mk_store_train_stats(&st, REAL(sc), centre ? REAL(cm) : NULL, centre ? REAL(gm) : NULL,
                         REAL(dm));
    UNPROTECT(1);
    return out;
}

SEXP mkc_store_mv(SEXP store, SEXP idx, SEXP v)
{
    mk_store st;
    mk_store_read(store, &st);
    int cnt;
    const int *ix = kernel_index(idx, st.M, &cnt);
    if (!isReal(v) || LENGTH(v) != st.n) error("'v' must have n doubles");
    SEXP out = PROTECT(allocMatrix(REALSXP, st.nr, cnt));
    mk_store_mv(&st, ix, cnt, REAL(v), REAL(out), (size_t) st.nr);
    UNPROTECT(1);
    return out;
}

SEXP mkc_store_quad(SEXP store, SEXP idx, SEXP v)
{
    mk_store st;
    mk_store_read(store, &st);
    if (st.nr != st.n) error("quadratic forms need square kernels");
    int cnt;
    const int *ix = kernel_index(idx, st.M, &cnt);
    if (!isReal(v) || LENGTH(v) != st.n) error("'v' must have n doubles");
    SEXP out = PROTECT(allocVector(REALSXP, cnt));
    mk_store_quad(&st, ix, cnt, REAL(v), REAL(out));
    UNPROTECT(1);
    return out;
}

SEXP mkc_store_combine(SEXP store, SEXP d)
{
    mk_store st;
    mk_store_read(store, &st);
    if (!isReal(d) || LENGTH(d) != st.M) error("'d' must have M doubles");
    SEXP out = PROTECT(allocMatrix(REALSXP, st.nr, st.n));
    mk_store_combine(&st, REAL(d), REAL(out));
    UNPROTECT(1);
    return out;
}

SEXP mkc_store_decision(SEXP store, SEXP idx, SEXP alpha)
{
    mk_store st;
    mk_store_read(store, &st);
    int cnt;
    const int *ix = kernel_index(idx, st.M, &cnt);
    if (!isReal(alpha) || XLENGTH(alpha) != (R_xlen_t) st.n * cnt)
        error("'alpha' must be n x length(idx)");
    SEXP out = PROTECT(allocVector(REALSXP, st.nr));
    mk_store_decision(&st, ix, cnt, REAL(alpha), REAL(out));
    UNPROTECT(1);
    return out;
}

SEXP mkc_store_cols(SEXP store, SEXP idx, SEXP j)
{
    mk_store st;
    mk_store_read(store, &st);
    int cnt, jj = asInteger(j) - 1;
    const int *ix = kernel_index(idx, st.M, &cnt);
    if (jj < 0 || jj >= st.n) error("column index out of range");
    SEXP out = PROTECT(allocMatrix(REALSXP, st.nr, cnt));
    mk_store_cols(&st, ix, cnt, jj, REAL(out));
    UNPROTECT(1);
    return out;
}
