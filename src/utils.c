/* The runtime layer (threads, time, interrupts), the R <-> C contract (options read by name,
 * named result lists, growable histories) and small linear-algebra helpers. */
#define USE_FC_LEN_T
#include "mklearn.h"
#include <R_ext/BLAS.h>
#include <R_ext/Lapack.h>
#include <string.h>
#include <time.h>
#include <limits.h>
#include <math.h>
#include <unistd.h>
#include <stdint.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif
#ifndef FCONE
#define FCONE
#endif

/* ------------------------------------------------------------------ large scratch */

#define MK_HUGE ((uintptr_t) 1 << 21)   /* a transparent huge page */
#define MK_HUGE_MIN (4 * MK_HUGE)       /* smaller blocks get no advice */

void mk_advise_huge(void *p, size_t bytes)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (bytes < MK_HUGE_MIN) return;
    uintptr_t a = ((uintptr_t) p + MK_HUGE - 1) & ~(MK_HUGE - 1);
    uintptr_t e = ((uintptr_t) p + bytes) & ~(MK_HUGE - 1);
    if (e > a) (void) madvise((void *) a, e - a, MADV_HUGEPAGE);
#else
    (void) p; (void) bytes;
#endif
}

void *mk_alloc_huge(size_t bytes)
{
    /* aligned to a huge page inside the block, so the advice covers all of it (small blocks,
       which get no advice, are not padded) */
    if (bytes < MK_HUGE_MIN) return R_alloc(bytes > 0 ? bytes : 1, 1);
    char *p = R_alloc(bytes + MK_HUGE, 1);
    char *a = (char *) (((uintptr_t) p + MK_HUGE - 1) & ~(MK_HUGE - 1));
    mk_advise_huge(a, bytes);
    return a;
}

/* ------------------------------------------------------------------ vectorised exp */

/* v[i] = exp(v[i]) for n values, in loops the compiler vectorises: the argument is clamped to
   [-708, 709], then exp(x) = 2^k exp(r) with k = round(x / ln 2), r = x - k ln 2
   (Cody-Waite split of ln 2, |r| <= 0.347), exp(r) by its Taylor polynomial of degree 13
   (truncation below 1e-17 relative) and 2^k added to the exponent bits; arguments below -708
   give 0. Relative error about 2e-16 against the C library's exp, at a fraction of its cost
   where the loop vectorises. On x86-64 with GCC the function is compiled for AVX-512, AVX2 and
   the baseline, chosen at load time from the processor's features (MK_CLONES). */
#ifdef _OPENMP
#define MK_SIMD _Pragma("omp simd")
#else
#define MK_SIMD
#endif

MK_CLONES
void mk_vexp_ax(double a, const double *x, double *out, int n)
{
    const double magic = 6755399441055744.0;   /* 1.5 * 2^52: adding it rounds to an integer */
    double keep[256];   /* one chunk's arguments a x (read before out is written: out may be x) */
    for (int c0 = 0; c0 < n; c0 += 256) {
        int len = n - c0 < 256 ? n - c0 : 256;
        const double *xc = x + c0;
        MK_SIMD
        for (int i = 0; i < len; i++) keep[i] = a * xc[i];
        double *restrict w = out + c0;
        MK_SIMD
        for (int i = 0; i < len; i++) {
            double x0 = keep[i];
            double t = x0 > -708.0 ? x0 : -708.0;
            t = t < 709.0 ? t : 709.0;
            double kd = t * 1.4426950408889634 + magic;
            double k = kd - magic;
            double r = t - k * 0.6931471803691238 - k * 1.9082149292705877e-10;
            double q = 1.0 / 6227020800.0;
            q = q * r + 1.0 / 479001600.0;
            q = q * r + 1.0 / 39916800.0;
            q = q * r + 1.0 / 3628800.0;
            q = q * r + 1.0 / 362880.0;
            q = q * r + 1.0 / 40320.0;
            q = q * r + 1.0 / 5040.0;
            q = q * r + 1.0 / 720.0;
            q = q * r + 1.0 / 120.0;
            q = q * r + 1.0 / 24.0;
            q = q * r + 1.0 / 6.0;
            q = q * r + 0.5;
            q = q * r + 1.0;
            q = q * r + 1.0;
            int64_t kb, qb;
            memcpy(&kb, &kd, sizeof kb);
            memcpy(&qb, &q, sizeof qb);
            qb += (int64_t) ((uint64_t) kb << 52);   /* the low bits of kd hold k */
            double y;
            memcpy(&y, &qb, sizeof y);
            y = x0 < -708.0 ? 0.0 : y;               /* below -708 the result is 0 */
            y = x0 > 709.0 ? HUGE_VAL : y;
            w[i] = x0 == x0 ? y : x0;                /* NaN stays NaN */
        }
    }
}

void mk_vexp(double *v, int n)
{
    mk_vexp_ax(1.0, v, v, n);
}

/* ------------------------------------------------------------------ threads */

static pid_t load_pid = 0;

void mk_runtime_init(void)
{
    load_pid = getpid();
}

int mk_threads(int requested)
{
#ifdef _OPENMP
    /* a forked child (mclapply, multicore futures) shares the parent's cores: one thread, as
       OpenMP runtimes are not fork-safe either */
    if (load_pid != 0 && getpid() != load_pid) return 1;
    int n = requested > 0 ? requested : omp_get_max_threads();
    int lim = omp_get_thread_limit();
    if (lim > 0 && n > lim) n = lim;
    int np = omp_get_num_procs();
    if (np > 0 && n > np) n = np;
    return n < 1 ? 1 : n;
#else
    (void) requested;
    return 1;
#endif
}

int mk_thread_id(void)
{
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

int mk_threads_for(int requested, double work)
{
    if (work < MK_PAR_WORK) return 1;
    return mk_threads(requested);
}

double mk_time(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

void mk_interrupt_every(double *last, double every)
{
    double t = mk_time();
    if (t - *last >= every) {
        *last = t;
        R_CheckUserInterrupt();
    }
}

/* ------------------------------------------------------------------ progress of a fit */

void mk_progress_init(mk_progress *p, SEXP control)
{
    SEXP f = mk_ctl(control, "progress_fun");
    if (!isNull(f) && !isFunction(f))
        error("control entry 'progress_fun' must be NULL or a function");
    p->fun = f;             /* protected: an element of the .Call argument 'control' */
    SEXP ev = isNull(f) ? R_NilValue : getAttrib(f, install("every"));
    p->every = (isReal(ev) && XLENGTH(ev) == 1 && REAL(ev)[0] >= 0.0) ? REAL(ev)[0] :
        MK_PROGRESS_EVERY;
    p->last = mk_time();
    p->frac = 0.0;
    p->crit0 = R_NaN;
}

static void progress_report(mk_progress *p, double frac)
{
    SEXP call = PROTECT(lang2(p->fun, ScalarReal(frac)));
    eval(call, R_GlobalEnv);
    UNPROTECT(1);
    p->last = mk_time();
}

void mk_progress_tick(mk_progress *p, int it, int maxiter, double crit, double tol)
{
    if (p == NULL || isNull(p->fun)) return;
    double f = maxiter > 0 ? (double) it / maxiter : 0.0;
    if (R_FINITE(crit) && crit > 0.0 && tol > 0.0) {
        if (ISNAN(p->crit0) && crit > tol) p->crit0 = crit;
        if (!ISNAN(p->crit0)) {
            double g = log(p->crit0 / crit) / log(p->crit0 / tol);
            if (g > f) f = g;
        }
    }
    if (f > 0.999) f = 0.999;       /* only the end of the fit reports 1 */
    if (f > p->frac) p->frac = f;
    if (mk_time() - p->last >= p->every) progress_report(p, p->frac);
}

void mk_progress_done(mk_progress *p)
{
    if (p == NULL || isNull(p->fun)) return;
    p->frac = 1.0;
    progress_report(p, 1.0);
}

int mk_chol_solve(double *A, int n, double *B, int nrhs)
{
    int info = 0;
    F77_CALL(dpotrf)("L", &n, A, &n, &info FCONE);
    if (info != 0) return info;
    F77_CALL(dpotrs)("L", &n, &nrhs, A, &n, B, &n, &info FCONE);
    return info;
}

/* ------------------------------------------------------------------ the contract */

SEXP mk_list_elt(SEXP list, const char *name, const char *what)
{
    SEXP nms = getAttrib(list, R_NamesSymbol);
    if (!isNull(nms))
        for (R_xlen_t i = 0; i < XLENGTH(list); i++)
            if (strcmp(CHAR(STRING_ELT(nms, i)), name) == 0) return VECTOR_ELT(list, i);
    if (what) error("%s '%s' is missing", what, name);
    return R_NilValue;
}

SEXP mk_ctl(SEXP ctl, const char *name)
{
    if (!isNewList(ctl)) error("'control' must be a named list");
    return mk_list_elt(ctl, name, "control entry");
}

void mk_list_copy(SEXP list, const char *name, double *dst, R_xlen_t len)
{
    SEXP v = mk_list_elt(list, name, "start value");
    if (!isReal(v) || XLENGTH(v) != len)
        error("start value '%s' must be %lld doubles", name, (long long) len);
    memcpy(dst, REAL(v), (size_t) len * sizeof(double));
}

double mk_ctl_real(SEXP ctl, const char *name)
{
    SEXP v = mk_ctl(ctl, name);
    if ((!isReal(v) && !isInteger(v) && !isLogical(v)) || XLENGTH(v) != 1)
        error("control entry '%s' must be one number", name);
    double r = asReal(v);
    if (ISNAN(r)) error("control entry '%s' is NA", name);
    return r;
}

int mk_ctl_int(SEXP ctl, const char *name)
{
    double r = mk_ctl_real(ctl, name);
    if (r > INT_MAX) return INT_MAX;
    if (r < INT_MIN) return INT_MIN;
    return (int) r;
}

SEXP mk_list_new(const char *const *names)
{
    int k = 0;
    while (names[k]) k++;
    SEXP out = PROTECT(allocVector(VECSXP, k));
    SEXP nm = PROTECT(allocVector(STRSXP, k));
    for (int i = 0; i < k; i++) SET_STRING_ELT(nm, i, mkChar(names[i]));
    setAttrib(out, R_NamesSymbol, nm);
    UNPROTECT(2);
    return PROTECT(out);
}

void mk_list_set(SEXP list, const char *name, SEXP value)
{
    SEXP nm = getAttrib(list, R_NamesSymbol);
    for (R_xlen_t i = 0; i < XLENGTH(list); i++)
        if (!strcmp(CHAR(STRING_ELT(nm, i)), name)) {
            SET_VECTOR_ELT(list, i, value);
            return;
        }
    error("result list has no element '%s'", name);
}

SEXP mk_real_vec(const double *x, R_xlen_t len)
{
    SEXP v = allocVector(REALSXP, len);
    if (len > 0) memcpy(REAL(v), x, (size_t) len * sizeof(double));
    return v;
}

/* The option codes by name, in the order of the enums in mklearn.h. */
static SEXP mk_codes_vec(const char *const *names, int n)
{
    SEXP v = PROTECT(allocVector(INTSXP, n)), nm = PROTECT(allocVector(STRSXP, n));
    for (int i = 0; i < n; i++) {
        INTEGER(v)[i] = i;
        SET_STRING_ELT(nm, i, mkChar(names[i]));
    }
    setAttrib(v, R_NamesSymbol, nm);
    UNPROTECT(2);
    return v;
}

SEXP mkc_codes(void)
{
    static const char *const loss[MK_NLOSS] = { "hinge", "logistic", "squared", "epsilon" };
    static const char *const kern[MK_NKERNEL] = { "linear", "poly", "rbf", "laplace", "chisq" };
    static const char *const norm[MK_NNORM] = { "none", "trace", "center_trace" };
    static const char *const sf[MK_NSF] = { "simple", "hessian", "lp" };
    static const char *const store[MK_NSTORE] = { "dense", "fly", "lowrank" };
    static const char *const sfstop[MK_NSF_STOP] = { "gap", "limit", "stalled",
                                                      "newton_decrement" };
    static const char *const ebstop[EB_NSTOP] = { "fixed_point", "limit", "stalled", "not_pd" };
    static const char *const ebupd[EB_NUPD] = { "mackay", "mm", "scoring" };
    static const char *const mwu[MWU_NSTATUS] = { "done", "infeasible" };
    static const char *const nm[] = { "loss", "kernel", "norm", "svmfam", "store", "svmfam_stop",
                                      "bayes_stop", "bayes_update", "mwu_status", "limits", NULL };
    /* sizes R's memory arithmetic (R/memory.R) needs: read from here, not restated */
    static const char *const lim[] = { "kernel_whole_max", "kcache_min", "kcache_ranges",
                                       "hess_free_max", "neighbour_chunk", "offdiag_rows",
                                       "lsvm_cache", "eb_scoring_maxvar" };
    const int limv[] = { (int) MK_KERNEL_WHOLE_MAX, MK_KCACHE_MIN, MK_KCACHE_RANGES,
                         MK_HESS_FREE_MAX, MK_NB_CHUNK, MK_OFFDIAG_ROWS, MK_LSVM_CACHE,
                         EB_SCORING_MAXVAR };
    const int nlim = (int) (sizeof(limv) / sizeof(limv[0]));
    SEXP out = mk_list_new(nm);
    mk_list_set(out, "loss", mk_codes_vec(loss, MK_NLOSS));
    mk_list_set(out, "kernel", mk_codes_vec(kern, MK_NKERNEL));
    mk_list_set(out, "norm", mk_codes_vec(norm, MK_NNORM));
    mk_list_set(out, "svmfam", mk_codes_vec(sf, MK_NSF));
    mk_list_set(out, "store", mk_codes_vec(store, MK_NSTORE));
    mk_list_set(out, "svmfam_stop", mk_codes_vec(sfstop, MK_NSF_STOP));
    mk_list_set(out, "bayes_stop", mk_codes_vec(ebstop, EB_NSTOP));
    mk_list_set(out, "bayes_update", mk_codes_vec(ebupd, EB_NUPD));
    mk_list_set(out, "mwu_status", mk_codes_vec(mwu, MWU_NSTATUS));
    SEXP lv = PROTECT(mk_codes_vec(lim, nlim));
    for (int k = 0; k < nlim; k++) INTEGER(lv)[k] = limv[k];
    mk_list_set(out, "limits", lv);
    UNPROTECT(1);
    UNPROTECT(1);
    return out;
}

void mk_hist_init(mk_hist *h, int ncol)
{
    h->ncol = ncol; h->len = 0; h->cap = 32;
    h->tab = (double *) R_alloc((size_t) h->cap * ncol, sizeof(double));
}

/* row-major rows: tab[r * ncol + c] */
void mk_hist_add(mk_hist *h, const double *row)
{
    if (h->len == h->cap) {
        int nc = 2 * h->cap;
        double *t = (double *) R_alloc((size_t) nc * h->ncol, sizeof(double));
        memcpy(t, h->tab, (size_t) h->len * h->ncol * sizeof(double));
        h->tab = t; h->cap = nc;
    }
    memcpy(h->tab + (size_t) h->len * h->ncol, row, (size_t) h->ncol * sizeof(double));
    h->len++;
}

SEXP mk_hist_sexp(const mk_hist *h, const char *const *names)
{
    int nc = h->ncol;
    SEXP out = PROTECT(allocVector(VECSXP, nc));
    SEXP nm = PROTECT(allocVector(STRSXP, nc));
    for (int c = 0; c < nc; c++) {
        SEXP col = allocVector(REALSXP, h->len);
        SET_VECTOR_ELT(out, c, col);
        double *p = REAL(col);
        for (int r = 0; r < h->len; r++) p[r] = h->tab[(size_t) r * nc + c];
        SET_STRING_ELT(nm, c, mkChar(names[c]));
    }
    setAttrib(out, R_NamesSymbol, nm);
    UNPROTECT(2);
    return out;
}

/* ------------------------------------------------------------------ .Call */

SEXP mkc_threads(SEXP requested)
{
    if (!isInteger(requested) || LENGTH(requested) != 1) error("'requested' must be one integer");
    return ScalarInteger(mk_threads(INTEGER(requested)[0]));
}

/* A'B by mk_crossprod (linalg.c); for the tests */
SEXP mkc_gram(SEXP A, SEXP B, SEXP sym)
{
    if (!isReal(A) || !isReal(B) || !isMatrix(A) || !isMatrix(B) || nrows(A) != nrows(B))
        error("gram: A and B must be double matrices with as many rows");
    int n = nrows(A), ra = ncols(A), rb = ncols(B), sy = asLogical(sym) == TRUE;
    if (sy && rb != ra) error("gram: sym needs B = A");
    SEXP C = PROTECT(allocMatrix(REALSXP, ra, rb));
    mk_crossprod(n, ra, rb, REAL(A), REAL(B), sy, REAL(C), ra);
    UNPROTECT(1);
    return C;
}
