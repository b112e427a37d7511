/* mklearn: every C prototype of the package.
 *
 * Architecture (DEVELOPERS.md draws it):
 *   runtime (utils.c)  threads, time, interrupts, the R <-> C contract (named lists)
 *   kernels.c          kernel functions, Gram arrays, normalisation
 *   store.c            the kernel store: the only way a solver reads kernels (dense or on the fly;
 *                      store_chain.c, store_pair.c (MWUMKL's paths), store_call.c beside it)
 *   linalg.c           shared numerics: sweeps over symmetric matrices (kernels, Newton matrices),
 *                      Gram products of low-rank factors
 *   kstats.c           shared numerics: kernel statistics and screening bounds of ||x||_K
 *   cg.c               shared numerics: preconditioned (deflated) conjugate gradients
 *   svm.c              SMO C-SVM on a dense matrix or through the column cache
 *   kcache.c           the bounded kernel-column cache of the on-the-fly store
 *   lsvm.c             the same SVM on low-rank factors (dual coordinate descent)
 *   svmfam.c           SVM-family driver (outer loop, certificate, line kernel, .Call entry)
 *   svmfam_lr.c        its services on a low-rank store
 *   simple.c, hessian.c, lpnorm.c   its step strategies
 *   spicy*.c           SpicyMKL (spicy.h: state, loss table; one file per phase)
 *   uniform.c          kernel ridge (the regression branch of the uniform method)
 * Calls go one way down this list's dependency order: store.c uses kernels.c, the solvers use
 * store.c and svm.c, the strategies are reached from the driver through a function table only.
 *
 * Conventions
 *  - Pure C functions work on double* / int* and never call the R API from threaded code.
 *  - .Call wrappers are named mkc_<name> and registered in init.c as "<name>", so R calls
 *    .Call(C_<name>, ...). Wrappers check types/lengths with error(), allocate scratch with
 *    R_alloc, read options from a named list by name, and return named lists (mk_list_new).
 */
#ifndef MKLEARN_H
#define MKLEARN_H

#include <R.h>
#include <Rinternals.h>
#include <R_ext/RS.h>
#include <stddef.h>

#ifdef _OPENMP
#include <omp.h>
#endif

/* ====================================================================== runtime: utils.c */
/* Work (in multiply-adds, or kernel entries touched) below which a region runs on one thread:
   below it the fork/join cost, and on a busy machine waiting for a descheduled thread,
   dominates. */
#define MK_PAR_WORK 4e6
/* Called from R_init_mklearn: remembers the process id, so that a forked child (parallel::
   mclapply, future's multicore) runs on one thread. */
void mk_runtime_init(void);
/* The thread rule: requested > 0, else the OpenMP default (OMP_NUM_THREADS); capped by
   OMP_THREAD_LIMIT and by the number of processors; 1 in a forked child or without OpenMP. */
int mk_threads(int requested);
/* This thread's number inside an OpenMP region (0 without OpenMP). */
int mk_thread_id(void);
/* mk_threads(requested), but 1 when work < MK_PAR_WORK. */
int mk_threads_for(int requested, double work);
/* R_alloc for large scratch touched in sequence, with the advice (Linux) to back it with
   transparent huge pages: first touch and streaming over 4 KB pages cost several times more in
   virtual machines. mk_advise_huge: the advice alone (blocks under 8 MB are left alone). */
void *mk_alloc_huge(size_t bytes);
void mk_advise_huge(void *p, size_t bytes);
/* Wall-clock seconds since an arbitrary origin. */
double mk_time(void);
/* R_CheckUserInterrupt() at most every 'every' seconds (pass the address of a timer initialised
   to 0); only from code outside OpenMP regions. */
void mk_interrupt_every(double *last, double every);
/* v[i] = exp(v[i]), vectorised (relative error about 2e-16; arguments below -708 give 0, above
   709 Inf, NaN stays NaN). Thread-safe. */
/* Hot loops compiled for AVX-512, AVX2 and the baseline, the version chosen at load time from the
   processor's features (GCC on x86-64 Linux; elsewhere one version). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && \
    __GNUC__ >= 8
#define MK_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define MK_CLONES
#endif
void mk_vexp(double *v, int n);
/* out[i] = exp(a x[i]) (out may be x): the same values as mk_vexp of a x[i], one pass fewer */
void mk_vexp_ax(double a, const double *x, double *out, int n);
/* Cholesky solve of A X = B in place; A is overwritten by its factor. Returns LAPACK info. */
int mk_chol_solve(double *A, int n, double *B, int nrhs);

/* Progress of a long fit, the one hook of every solver. The control list's entry
   "progress_fun" is NULL (no reports) or an R function of one number, the fraction of the fit
   done in [0, 1] (R/progress.R makes it and decides what, if anything, is shown). A solver calls
   mk_progress_tick() once per outer iteration, next to its interrupt check (never inside an
   OpenMP region or from a thread), and mk_progress_done() when its loop ends. The fraction is
   the larger of the iterations done out of the cap, it / maxiter, and how far the convergence
   criterion has come on a log scale, log(c0 / crit) / log(c0 / tol) with c0 its first value
   above tol (crit = NA_REAL: iterations only); it never decreases, and only done() reports 1.
   The R function is called at most every MK_PROGRESS_EVERY seconds (or its attribute "every",
   for tests). */
#define MK_PROGRESS_EVERY 0.25
typedef struct {
    SEXP fun;        /* R_NilValue: no reports */
    double every;    /* seconds between reports */
    double last;     /* time of the last report */
    double frac;     /* the largest fraction so far */
    double crit0;    /* the first criterion above tol (NaN until seen) */
} mk_progress;
void mk_progress_init(mk_progress *p, SEXP control);
void mk_progress_tick(mk_progress *p, int it, int maxiter, double crit, double tol);
void mk_progress_done(mk_progress *p);

/* The R <-> C contract. Options arrive as one named list, read by name (an absent name is an
   error: the R front end fills every default). Results leave as named lists. */
SEXP mk_ctl(SEXP ctl, const char *name);          /* the element, or error() */
/* The element of a named list, or R_NilValue when absent (what == NULL) or error("<what> '<name>'
   is missing"). */
SEXP mk_list_elt(SEXP list, const char *name, const char *what);
/* Copy the named double vector of length len (a start value: init or warm-start lists). */
void mk_list_copy(SEXP list, const char *name, double *dst, R_xlen_t len);
double mk_ctl_real(SEXP ctl, const char *name);   /* one number (integer or double) */
int mk_ctl_int(SEXP ctl, const char *name);       /* one integer (integer, logical or double) */
/* A named list with the given names (NULL-terminated), PROTECTed once: the caller UNPROTECTs
   it; elements set with SET_VECTOR_ELT are protected by the list. */
SEXP mk_list_new(const char *const *names);
/* Set the element called name of a list made by mk_list_new (an absent name is an error). */
void mk_list_set(SEXP list, const char *name, SEXP value);
/* A new (unprotected) double vector holding x[0..len-1]. */
SEXP mk_real_vec(const double *x, R_xlen_t len);
/* The integer codes R passes for options, defined once here; mkc_codes() returns them as named
   integer vectors and a test checks that R's tables (R/codes.R) agree. */
enum { MK_LOSS_HINGE = 0, MK_LOSS_LOGISTIC = 1, MK_LOSS_SQUARED = 2, MK_LOSS_EPSILON = 3,
       MK_NLOSS = 4 };
enum { MK_SF_SIMPLE = 0, MK_SF_HESSIAN = 1, MK_SF_LP = 2, MK_NSF = 3 };
SEXP mkc_codes(void);
/* Growable history: ncol columns of doubles, rows appended, storage doubling on demand, so
   maxiter = 1e9 costs nothing until rows are written. */
typedef struct { int ncol, len, cap; double *tab; } mk_hist;
void mk_hist_init(mk_hist *h, int ncol);
void mk_hist_add(mk_hist *h, const double *row);
/* The history as a data frame-ready named list of columns (names: ncol strings). */
SEXP mk_hist_sexp(const mk_hist *h, const char *const *names);

/* ====================================================================== kernels.c */
/* Kernel type codes (R/kernels.R keeps the same table). */
enum { MK_LINEAR = 0, MK_POLY = 1, MK_RBF = 2, MK_LAPLACE = 3, MK_CHISQ = 4, MK_NKERNEL = 5 };
/* Normalisation codes. */
enum { MK_NORM_NONE = 0, MK_NORM_TRACE = 1, MK_NORM_CENTER_TRACE = 2, MK_NNORM = 3 };
/* Base quantities a kernel type is a function of. */
enum { MK_BASE_D2 = 1, MK_BASE_IP = 2, MK_BASE_CH = 4 };
int mk_kernel_base_kind(int type);
/* base[i] for rows i < nz of z (leading dimension ldz) against row j of x (n x p), over
   features feat[0..nf-1]: squared distance, inner product or chi-square distance (kind: one
   MK_BASE_*), summed over the features in order. */
void mk_kernel_base(const double *x, int n, const double *z, int ldz, int nz, int j,
                    const int *feat, int nf, int kind, double *base);
/* out[i] = k(base[i]) for kernel type / parameters (out may be base). */
void mk_kernel_apply(int type, double p1, double p2, const double *base, int len, double *out);

/* Raw kernels: out is nz x n x M (nz = n when z is NULL, the symmetric training case).
   Feature groups: group g uses features gfeat[gstart[g] .. gstart[g+1]-1] (0-based).
   Kernel m: group kgroup[m], type ktype[m], parameters kpar1[m], kpar2[m]. bad[m] (M ints) is
   set to 1 when kernel m has a NaN or infinite value. Checks for a user interrupt between
   blocks of work. */
void mk_gram(const double *x, int n, int p, const double *z, int nz,
             const int *gstart, const int *gfeat, int M, const int *kgroup, const int *ktype,
             const double *kpar1, const double *kpar2, double *out, int *bad, int nthreads);
/* Training normalisation in place; fills scale[M], colmeans[n*M], grandmean[M]
   (colmeans/grandmean only for MK_NORM_CENTER_TRACE). Then adds jitter to the diagonal. */
void mk_normalize(double *K, int n, int M, int norm, double jitter, double *scale,
                  double *colmeans, double *grandmean, int nthreads);
/* The PSD check of precomputed kernels: asymmetry and smallest relative eigenvalue. */
SEXP mkc_check_kernels(SEXP K, SEXP level, SEXP nthreads);

/* ====================================================== store.c, store_chain.c, store_call.c */
/* The kernel store: every solver reads kernels through it, never by indexing an array.
 * A store describes nr x n kernel matrices K_m(Z, X), m < M: the training kernels (Z = X,
 * nr = n, square, with the training normalisation and jitter) or test-by-train blocks for
 * prediction (Z = new rows, normalised with the training statistics, no jitter).
 *  - dense: one nr x n x M column-major array (training arrays built by gram(), or precomputed
 *    kernels after normalisation);
 *  - on the fly (fly): kernel columns computed from x, z and the kernel description (type,
 *    parameters, feature group, normalisation statistics); no n x n x M array exists.
 * Single-kernel primitives are thread-safe (no R API, no shared writes): they take a scratch
 * buffer of mk_store_scratch() doubles. Batch operations open their own OpenMP regions (never
 * call them from inside one) and choose their thread count with mk_threads_for().
 * A backend is a kind code below, its fields in mk_store, a branch of mk_store_read, and the
 * column access every solver needs (mk_store_scratch, mk_store_col, mk_store_diag); the batch
 * operations read through mk_store_col, so they serve a new backend unchanged. A new backend
 * (e.g. low rank) lives in its own store_<name>.c; store.c's top comment lists each branch. */
enum { MK_STORE_DENSE = 0, MK_STORE_FLY = 1, MK_STORE_LOWRANK = 2, MK_NSTORE = 3 };
typedef struct {
    int kind, nr, n, M, nthreads;
    int square;                       /* training store: Z = X (jitter on the diagonal) */
    const double *K;                  /* dense: nr x n x M */
    /* on the fly */
    const double *x, *z;              /* x: n x p, z: nr x p (z = x when square) */
    int p;
    const int *gstart, *gfeat, *kgroup, *ktype;
    const double *kpar1, *kpar2;
    int norm;
    double jitter;
    const double *scale, *colmeans, *grandmean;   /* training statistics (M, n x M, M) */
    const double *rowmeans;           /* nr x M: row means of the raw test kernels (centring) */
    /* low rank: K_m = G_m G_m' (+ jitter I when square), G_m the n x r_m block of G at column
       goff[m] (r_m = goff[m + 1] - goff[m], normalisation applied); a test store's Gz (nr rows,
       the same columns) gives K_m(Z, X) = Gz_m G_m' (Gz = G when square) */
    const double *G, *Gz;
    const int *goff;
} mk_store;

/* Low rank: kernel m's training factor G_m (n x *r, leading dimension n) and test factor Gz_m
   (nr x *r, leading dimension nr); error() for another kind. (store_lowrank.c) */
const double *mk_store_factor(const mk_store *s, int m, int *r);
const double *mk_store_factor_test(const mk_store *s, int m, int *r);
/* t = G_m' x (r_m values; x: n values), each summed over the rows in order; thread-safe */
void mk_store_factor_tmul(const mk_store *s, int m, const double *x, double *t);
/* Fill st from the R store list (see R/store.R); checks types and lengths with error(). A
   fly test store with centring computes its row means here (R_alloc). */
void mk_store_read(SEXP s, mk_store *st);
/* Doubles of scratch a thread needs for one single-kernel call (0 for dense): a kernel up to
   MK_KERNEL_WHOLE_MAX doubles, else MK_SWEEP_COLS columns, for a column call (mk_store_col,
   mk_store_kmv2, mk_store_kquad, nr of them) or a sweep through mk_store_ksrc. */
size_t mk_store_scratch(const mk_store *s);
/* Column j (length nr) of kernel m: a pointer into the array (dense) or buf (fly). */
const double *mk_store_col(const mk_store *s, int m, int j, double *buf);
/* The whole nr x n kernel m: a pointer into the array (dense) or buf, nr * n doubles (fly). */
const double *mk_store_kernel(const mk_store *s, int m, double *buf);
/* y1 = K_m x1 (and y2 = K_m x2 if x2 != NULL), one column-order sweep; x: n, y: nr. */
void mk_store_kmv2(const mk_store *s, int m, const double *x1, const double *x2, double *y1,
                   double *y2, double *buf);
/* v' K_m v (square stores). */
double mk_store_kquad(const mk_store *s, int m, const double *v, double *buf);

/* Batch operations (threaded over kernels or columns). */
/* out[, j] = K_{idx[j]} v for j < cnt (column j at out + j * ldo); idx NULL: kernels 0..cnt-1 */
void mk_store_mv(const mk_store *s, const int *idx, int cnt, const double *v, double *out,
                 size_t ldo);
/* out[j] = v' K_{idx[j]} v */
void mk_store_quad(const mk_store *s, const int *idx, int cnt, const double *v, double *out);
/* Dense square stores: out[j] = v' K_m v for m = idx[j], j < cnt (idx NULL: kernels 0..cnt-1;
   the bits of mk_store_quad) and, in the same read, U[, m] = K_m v (n x M) on the rows where
   v != 0 (the others: scratch) */
void mk_store_quad_u(const mk_store *s, const int *idx, int cnt, const double *v, double *out,
                     double *U);
/* out (nr x n) = sum_m d[m] K_m over the kernels with d[m] != 0 */
void mk_store_combine(const mk_store *s, const double *d, double *out);
/* out (nr x n) += sum_k w[k] K_{idx[k]}, k < cnt, and if w2 != NULL, in the same read,
   out2 += sum_k w2[k] K_{idx[k]} */
void mk_store_combine_add(const mk_store *s, const int *idx, const double *w, const double *w2,
                          int cnt, double *out, double *out2);
/* A (nr x n) += t K_m */
void mk_store_axpy(const mk_store *s, int m, double t, double *A);
/* out[i] = sum_j (K_{idx[j]} alpha[, j])_i, alpha n x cnt: decision values without the bias */
void mk_store_decision(const mk_store *s, const int *idx, int cnt, const double *alpha,
                       double *out);
/* out[, k] (nr) = column j of kernel idx[k], k < cnt; on the fly, kernels of one feature group
   listed together share their distances */
void mk_store_cols(const mk_store *s, const int *idx, int cnt, int j, double *out);
/* the same with the caller's scratch base (nr doubles on the fly; unused when dense) */
void mk_store_cols_buf(const mk_store *s, const int *idx, int cnt, int j, double *out,
                       double *base);
/* rows i0..i1-1 of the same columns, column k at out + k * ldo (base: i1 - i0 doubles on the
   fly); thread-safe */
void mk_store_cols_rows(const mk_store *s, const int *idx, int cnt, int j, int i0, int i1,
                        double *out, size_t ldo, double *base);
/* The diagonal (n) of training kernel m (on the fly: one kernel evaluation per point, no
   scratch). */
void mk_store_diag(const mk_store *s, int m, double *d);
/* Fly training statistics (what mk_normalize computes on a dense array): scale[M],
   colmeans[n*M], grandmean[M] of the raw kernels of s (s->scale etc. are not read). */
void mk_store_train_stats(const mk_store *s, double *scale, double *colmeans, double *grandmean,
                          double *diagmean);
/* Normalise a raw nr x n x M test array with the training statistics of the test store s. */
void mk_store_normalize_test(const mk_store *s, double *Kt);

/* .Call (store_call.c): the dense array of a fly store (gram()): training list(K, scale,
   colmeans, grandmean, nonfinite), or the normalised test array; training statistics; batch
   operations. */
SEXP mkc_store_dense(SEXP store);
SEXP mkc_store_pool(SEXP on, SEXP min_bytes);
SEXP mkc_store_stats(SEXP store);
SEXP mkc_store_mv(SEXP store, SEXP idx, SEXP v);
SEXP mkc_store_quad(SEXP store, SEXP idx, SEXP v);
SEXP mkc_store_combine(SEXP store, SEXP d);
SEXP mkc_store_decision(SEXP store, SEXP idx, SEXP alpha);
SEXP mkc_store_cols(SEXP store, SEXP idx, SEXP j);
SEXP mkc_store_neighbours(SEXP store, SEXP idx, SEXP js, SEXP w);
/* front.c: the R front end's passes over n rows (Platt's sigmoid, the standardisation) */
SEXP mkc_platt_pass(SEXP f, SEXP t, SEXP w, SEXP par, SEXP derivs);
SEXP mkc_front_colstats(SEXP x, SEXP center);
SEXP mkc_front_sweep(SEXP x, SEXP center, SEXP scale);
double mk_platt_value(const double *f, const double *t, const double *w, R_xlen_t n, double a,
                      double b);
void mk_platt_derivs(const double *f, const double *t, const double *w, R_xlen_t n, double a,
                     double b, double *out);
void mk_colstats(const double *x, R_xlen_t n, int p, const double *c, double *out);
void mk_colsweep(const double *x, R_xlen_t n, int p, const double *c, const double *s,
                 double *out);
SEXP mkc_store_diag(SEXP store, SEXP idx);
SEXP mkc_store_offdiag(SEXP store, SEXP idx, SEXP w, SEXP js, SEXP is, SEXP bs);
SEXP mkc_store_factor_tmul(SEXP store, SEXP idx, SEXP x);
/* (store_lowrank_chol.c) the low-rank factors of a fly training store (pivoted incomplete
   Cholesky to a relative residual-trace tolerance or a rank cap), and the test factors or
   decision values of a fly test store's new rows from them */
SEXP mkc_store_lowrank(SEXP store, SEXP tol, SEXP rank);
SEXP mkc_store_lowrank_test(SEXP store, SEXP fac, SEXP beta);
SEXP mkc_threads(SEXP requested);
/* A'B for double matrices A (n x ra) and B (n x rb) by mk_crossprod (sym: A'A from A alone);
   for the tests */
SEXP mkc_gram(SEXP A, SEXP B, SEXP sym);

/* ====================================================================== store_pair.c */
/* MWUMKL's access paths to the store (dense and fly backends).
   Two columns j1, j2 of every kernel, read kernel by kernel (MWUMKL's step). init: once per
   fit (R_alloc); set: once per pair, outside parallel regions (on the fly it computes, in
   parallel, each feature group's distances / inner products for both columns when kernels
   share groups); mk_store_pair_diff reads kernel m's two columns, thread-safe. */
typedef struct {
    const mk_store *s;
    int j1, j2, ng, share, nslot;
    int nthreads;                     /* threads for set (the store's; a solver may lower it) */
    int *slot, *sgroup, *skind;       /* slot[g * 3 + kind bit]: the shared base of a group */
    double *base;                     /* nslot x 2 columns x nr */
    /* the run plan (mk_store_pair_runs), by position: kernel, chain link degree (0: a run's
       start), 1 / scale (1 unscaled or dense), Gaussian gamma */
    int *rm, *rlq;
    double *rinv, *rgam;
} mk_store_pair;
void mk_store_pair_init(const mk_store *s, mk_store_pair *pp);
void mk_store_pair_set(mk_store_pair *pp, int j1, int j2);
/* d = rows i0..i1-1 of K_m[, j1] - K_m[, j2] for the pair set in pp (training store), with the
   values the array's columns hold; buf: i1 - i0 doubles (unused when dense). One
   pass: the normalisation is applied to both columns in the loop that subtracts them. */
void mk_store_pair_diff(const mk_store_pair *pp, int m, int i0, int i1, double *d, double *buf);
/* Runs of kernels whose pair differences are computed together: idx (cnt kernels) is put in
   run order, the plan kept in pp (positions 0..cnt-1). With chain != 0 on the fly, Gaussian
   kernels of one feature group in increasing gamma form runs of up to 16 whose columns are
   chained from one exponential, within 2^-54 per link; every other kernel is a run of one.
   rstart (cnt + 1): the runs' first positions and cnt. Returns the number of runs. Once per
   fit, after init; idx must live as long as pp. */
int mk_store_pair_runs(mk_store_pair *pp, int *idx, int cnt, int chain, int *rstart);
/* mk_store_pair_diff of the kernels at positions k0..k0+cnt-1 (one run or several runs of one):
   position k0 + k's difference at d + k ldd; buf: 2 (i1 - i0) doubles. */
void mk_store_pair_diff_run(const mk_store_pair *pp, int k0, int cnt, int i0, int i1, double *d,
                            size_t ldd, double *buf);
/* Kernels of finite rank on the training rows (fly training stores): a polynomial or linear
   kernel on one column c is, after its normalisation, K_m = sum_k w[k] phi_k phi_k' + jitter I,
   k < q, with phi_k the column's k-th power (centred when the store centres). Returns q (w
   filled, *key = c) or 0 when kernel m is not of this kind (or q > MK_FMAP_MAX). */
#define MK_FMAP_MAX 8
int mk_store_fmap(const mk_store *s, int m, int *key, double *w);
/* The basis phi (n x q, column k at phi + k n) of column key. */
void mk_store_fmap_basis(const mk_store *s, int key, int q, double *phi);

/* ====================================================================== svm.c */
typedef struct {
    double b;     /* bias */
    double obj;   /* dual objective sum(a) - a'Qa/2 (maximised) */
    double viol;  /* maximal KKT violation m(a) - M(a) at exit */
    int iter;     /* SMO iterations */
    int status;   /* 0 converged, 1 iteration limit */
    double work;  /* the solve's work: points the SMO's selections passed over (n per iteration
                     unless shrunk); lsvm.c: factor rows read, O(R) each */
} mk_svm_result;

/* Where the SMO reads K's columns: col(q, i, slot) returns column i (n values), valid until the
   next call with the same slot (0 or 1: the SMO holds two columns at once); diag(q, d) fills
   the diagonal. A whole kernel K in memory (mk_smo_box), or the column cache (kcache.c). */
typedef struct mk_qsrc mk_qsrc;
struct mk_qsrc {
    const double *(*col)(mk_qsrc *q, int i, int slot);
    void (*diag)(mk_qsrc *q, double *d);
    const double *K;
    int n;
    void *ctx;
};

/* C-SVM dual on a dense n x n kernel by SMO with second-order working-set selection
   (Fan, Chen & Lin 2005). y in {-1,+1}; alpha: in = warm start (projected onto
   0 <= a <= C, y'a = 0 if needed), out = solution. grad: n doubles of scratch; on exit
   grad[i] = (Q a)_i - 1 with Q = diag(y) K diag(y). Checks for a user interrupt about every
   0.02 s (never call it from an OpenMP region). */
int mk_smo(const double *K, int n, const double *y, double C, double tol, int maxiter,
           double *alpha, double *grad, mk_svm_result *res);
/* The same with a box per point, 0 <= alpha_i <= box[i] (case weights: box[i] = C w_i; a
   point of box 0 never moves and does not enter b); box NULL: box[i] = C. shrink 1: libsvm's
   shrinking of the active set (the same optimum within tol, other iterates); 0: every point. */
int mk_smo_box(const double *K, int n, const double *y, double C, const double *box,
               double tol, int maxiter, int shrink, double *alpha, double *grad,
               mk_svm_result *res);
SEXP mkc_smo(SEXP K, SEXP y, SEXP C, SEXP alpha0, SEXP tol, SEXP maxiter);
/* mk_smo_box on the columns of a column source */
int mk_smo_src(mk_qsrc *q, int n, const double *y, double C, const double *box,
               double tol, int maxiter, int shrink, double *alpha, double *grad,
               mk_svm_result *res);
/* The SMO on K(d) of a training store through the column cache (cache: its entries; 0 whole):
   the result list of mkc_smo. */
SEXP mkc_smo_store(SEXP store, SEXP y, SEXP C, SEXP d, SEXP alpha0, SEXP tol, SEXP maxiter,
                   SEXP cache);

/* Make a warm start feasible: clip to [0, C], scale the heavier class down so that y'a = 0. */
void mk_svm_project(int n, const double *y, const double *C, double *a);
/* The bias -rho of an SVM solution from its gradient G = Qa - 1 (mean of y G over the free
   alphas, else the middle of the bounds). */
double mk_svm_bias(int n, const double *y, const double *C, const double *a, const double *G);
/* Fill res at the end of a solve: the dual objective from G = Qa - 1, the bias, and the
   violation, iterations and status given. */
void mk_svm_finish(int n, const double *y, const double *C, const double *a, const double *G,
                   double viol, int iter, int status, mk_svm_result *res);
/* The result list of an SVM .Call (alpha, b, objective, violation, iterations, converged, and
   r->work under the name work unless NULL), returned protected once. */
SEXP mk_svm_sexp(SEXP alpha, const mk_svm_result *r, const char *work);

/* ====================================================================== kcache.c */
/* A bounded cache of kernel columns (least recently used first out): an entry holds the M
   columns of one training point (n x M doubles), so that a column of any combination
   sum_m w_m K_m costs O(nM). cap entries (mk_kcache_cap: 0 or more than n means whole, at
   least MK_KCACHE_MIN); one thread (no R API besides the allocations of init). */
#define MK_KCACHE_MIN 4
/* the fixed column ranges of a pass (mk_kcache_mv): its sums do not depend on the threads */
#define MK_KCACHE_RANGES 8
typedef struct {
    const mk_store *st;
    int n, M, cap, used, head, tail;
    double *data;        /* cap entries of n x M */
    double *diag;        /* n x M: every kernel's diagonal */
    double *base;        /* n: mk_store_cols_buf's scratch */
    double *tscr, *acc;  /* mk_kcache_mv: per thread n x M + n; MK_KCACHE_RANGES x 2 n x M */
    int nt, ntmax;       /* threads of tscr; the most a pass ran on */
    double kvals;        /* kernel values computed (entries and passes) */
    int *slot;           /* n: the entry of a point, or -1 */
    int *owner, *prev, *next;   /* cap: the point of an entry, the LRU list */
    double hits, misses;
} mk_kcache;
int mk_kcache_cap(int n, int entries);
void mk_kcache_init(mk_kcache *kc, const mk_store *st, int entries);
/* the n x M columns of training point j (valid until the next get) */
const double *mk_kcache_get(mk_kcache *kc, int j);
/* out (n) = sum_m w_m K_m[, j] */
void mk_kcache_comb(mk_kcache *kc, int j, const double *w, double *out);
/* The trailing principal block's product: rows j >= j0 of out_k (n x cnt) =
   sum_{i >= j0} K_{idx[c]}[i, j] v_k[i], c < cnt, k < nv <= 2 (idx NULL: kernels 0..cnt-1;
   j0 = 0: the whole product). Free entries filled first (the last points), then each point's
   rows j0..j only (symmetry), threads over MK_KCACHE_RANGES fixed ranges of points: the same
   bits for any thread count. */
void mk_kcache_mv(mk_kcache *kc, int j0, const int *idx, int cnt, int nv,
                  const double *const *v, double *const *out);
/* out[, j - j0] (ldo apart) = sum_c w[idx[c]] K_{idx[c]}[, j], j0 <= j < j1, threads over the
   points (the scratch of mk_kcache_mv; no entry filled) */
void mk_kcache_comb_cols(mk_kcache *kc, int j0, int j1, const int *idx, int cnt,
                         const double *w, double *out, size_t ldo);
/* .Call (tests): mk_kcache_mv of every kernel through a cache of `cache` entries */
SEXP mkc_kcache_mv(SEXP store, SEXP j0, SEXP v, SEXP cache);
/* K(d) p for one or two vectors on the fly (MKL-L0/1's w-step, kernel ridge): K(d)'s columns
   summed for the points 0..nc-1 (n x nc, set for the weights d by mk_kdop_set, which keeps d by
   pointer; the cache's free entries are left to the other points), the rows of the other
   points from the summed columns' rows and the trailing block's pass over the cache
   (mk_kcache_mv; P: its products K_m p, n x M per vector, allocated when nc < n); tick: NULL,
   or the time of the last interrupt check (mk_kdop_set checks between blocks of columns) */
typedef struct {
    mk_kcache *kc;
    int nc, nact;
    double *tick;
    int *act;            /* M: the kernels with d_m != 0, nact of them */
    const double *d;     /* M: the weights (the caller's) */
    double *Kc;          /* n x nc: K(d)'s summed columns, or NULL */
    double *P[2];
} mk_kdop;
void mk_kdop_init(mk_kdop *op, mk_kcache *kc, int nc);
void mk_kdop_set(mk_kdop *op, const double *d);
void mk_kdop_mv(mk_kdop *op, int np, const double *p1, const double *p2, double *q1,
                double *q2);
/* The SMO's column source on the cache for the weights set by mk_kcsrc_set (q first: a
   mk_kcsrc * is a mk_qsrc *). */
typedef struct {
    mk_qsrc q;
    mk_kcache *kc;
    double *w, *buf[2];
    int col[2];
} mk_kcsrc;
void mk_kcsrc_init(mk_kcsrc *cs, mk_kcache *kc);
void mk_kcsrc_set(mk_kcsrc *cs, const double *w);

/* ====================================================================== lsvm.c */
/* The same C-SVM dual when K = F F' + jit I with F (n x R) given by its rows (Ft: row i at
   Ft + i * R): dual coordinate descent (Hsieh et al. 2008: random order, shrinking) with the
   equality y'a = 0 by an augmented Lagrangian, O(n R) per pass and O(R) state w = F'(y.a).
   Stops on the SMO's test (maximal violating pair below tol, a feasible); alpha: in = warm
   start, out = solution; grad (n): out = Qa - 1; w (R): out = F'(y.a). res->iter counts
   passes. (inst/notes/NOTES-svm-family.md, "Low rank") */
int mk_lsvm(const double *Ft, int n, int R, const double *y, double C, double jit, double tol,
            int maxiter, double *alpha, double *grad, double *w, mk_svm_result *res);
/* The rows of F = [sqrt(d_m) G_m] (kernels with d_m > 0) of a low-rank training store, the
   input of mk_lsvm: K(d) = F F' + jit I. init allocates n x (all columns); set fills Ft (R x n,
   row i at Ft + i * R) and jit = jitter * sum d for the weights d. */
typedef struct {
    const mk_store *st;
    double *Ft, jit;
    int R, Rtot;
} mk_lr_factors;
void mk_lr_factors_init(mk_lr_factors *f, const mk_store *st);
void mk_lr_factors_set(mk_lr_factors *f, const double *d, int nthreads);
SEXP mkc_lsvm(SEXP store, SEXP y, SEXP C, SEXP d, SEXP alpha0, SEXP tol, SEXP maxiter);

/* ====================================================================== casew.c */
/* The weighted mean diagonal of the training kernels (averaged over kernels): mkl()'s kernel
   scale with case weights w (n doubles >= 0, positive sum). */
SEXP mkc_case_kscale(SEXP store, SEXP w);

/* ====================================================================== uniform.c */
/* Kernel ridge: (K + lambda I) beta = y - b, b chosen so that sum(beta) = 0. */
int mk_kridge(const double *K, int n, const double *y, double lambda, double *beta, double *b);
/* The same with a ridge per point lam[i] (lam NULL: lambda for every point). */
int mk_kridge_w(const double *K, int n, const double *y, double lambda, const double *lam,
                double *beta, double *b);
SEXP mkc_kridge(SEXP K, SEXP y, SEXP lambda);
/* the same on a fly store by CG through the column cache, for the kernel weights d (control:
   kcache, kcols, cg_tol, cg_maxiter; lambda: n ridges, Inf for a row left out) */
SEXP mkc_kridge_fly(SEXP store, SEXP y, SEXP lambda, SEXP d, SEXP control);

/* ====================================================================== shared numerics */
/* Vectorised loops with a fixed reduction order (omp simd). A file with these loops also
   disables contraction into fused multiply-adds (#pragma GCC optimize ("fp-contract=off") before
   its first include), so that every MK_CLONES version rounds as the baseline build does. */
#ifdef _OPENMP
#define MK_STR(x) #x
#define MK_SIMD _Pragma("omp simd")
#define MK_SIMD_RED(...) _Pragma(MK_STR(omp simd reduction(+:__VA_ARGS__)))
#else
#define MK_SIMD
#define MK_SIMD_RED(...)
#endif

/* ---------------------------------------------------------------- linalg.c: symmetric sweeps
   Products and quadratic forms of a symmetric n x n matrix A (column-major). "Upper": only the
   upper triangle is read (half the bytes; sweeps are bound by memory bandwidth); "full": whole
   columns, faster below MK_TRI_MIN rows where the triangle's short columns cost more than the
   bytes they save. Plain C (no R API): safe inside OpenMP regions. */
#define MK_TRI_MIN 512
/* A kernel as the sweeps below read it: the whole matrix A (column-major), or, when A is NULL,
   columns computed on demand: fill(ctx, m, j, w, full, buf) writes columns j + c, c < w <=
   MK_SWEEP_COLS, of kernel m at buf + c n (rows 0..j + c, or all n rows when full), so a
   sweep holds MK_SWEEP_COLS columns instead of n (an on-the-fly store: mk_store_ksrc). */
#define MK_SWEEP_COLS 4
/* Up to this many doubles (64 MB) a computed kernel is held whole instead (mk_store_ksrc): the
   sweeps that read a kernel twice (the kernel statistics) then compute it once */
#define MK_KERNEL_WHOLE_MAX 8388608.0
typedef struct {
    const double *A;
    int n, m;
    void (*fill)(const void *ctx, int m, int j, int w, int full, double *buf);
    const void *ctx;
    double *buf;
} mk_ksrc;
/* pointers a[c] to columns j + c, c < w, of K (see mk_ksrc) */
static inline void mk_ksrc_cols(const mk_ksrc *K, int j, int w, int full, const double **a)
{
    if (K->A) {
        for (int c = 0; c < w; c++) a[c] = K->A + (size_t) (j + c) * K->n;
        return;
    }
    K->fill(K->ctx, K->m, j, w, full, K->buf);
    for (int c = 0; c < w; c++) a[c] = K->buf + (size_t) c * K->n;
}
/* kernel m of a square store as a mk_ksrc for mk_symv2, mk_quad and the kernel statistics: the
   array (dense), else computed into buf (mk_store_scratch() doubles): whole when n^2 <=
   MK_KERNEL_WHOLE_MAX (all rows when full, else the upper triangle), else by blocks of columns
   as the sweep reads them (store.c) */
void mk_store_ksrc(const mk_store *s, int m, int full, double *buf, mk_ksrc *K);
/* y1 = A x1, and y2 = A x2 when x2 != NULL, in one sweep by whole columns */
void mk_symv2_full(const double *A, int n, const double *x1, const double *x2, double *y1,
                   double *y2);
/* v'A v by whole columns */
double mk_quad_full(const double *A, int n, const double *v);
/* Column block j0 <= j < j1 of the upper triangle: y[0..j1) = that block times x[j0..j1) plus
   its transpose; over a partition of 0..n the blocks' y sum to A x. Upper storage (double), or
   packed upper storage (float, column j at j (j + 1) / 2, diagonal not read: kept apart) in
   double or in single-precision arithmetic. */
void mk_symv_upper_cols(const double *A, int n, const double *x, double *y, int j0, int j1);
void mk_symv_packed_cols(const float *A, int n, const double *x, double *y, int j0, int j1);
void mk_symv_packed_colsf(const float *A, int n, const float *x, float *y, int j0, int j1);
/* y = A x from the upper triangle */
void mk_symv_upper(const double *A, int n, const double *x, double *y);
/* y1 = K x1 (and y2 = K x2, x2 may be NULL) in one sweep: upper triangle from MK_TRI_MIN rows,
   whole columns below */
void mk_symv2(const mk_ksrc *K, const double *x1, const double *x2, double *y1, double *y2);
/* v'K v: upper triangle from MK_TRI_MIN rows, whole columns below */
double mk_quad(const mk_ksrc *K, const double *v);
/* a'b, summed in index order */
double mk_dot(int n, const double *a, const double *b);
double mk_dot4(int n, const double *a, const double *b);
/* Gram products of tall matrices (low-rank factors), faster than the reference BLAS's dgemm:
   mk_crossprod_acc: C += al A'B (ra x rb, leading dimension ldc) for nr x ra and nr x rb
   matrices of leading dimension ld, by blocks of MK_XPROD_ROWS rows; sym (A = B): the upper
   triangle only. mk_crossprod: C = A'B for n-row A and B (sym: A'A, the upper triangle
   mirrored). */
#define MK_XPROD_ROWS 256
void mk_crossprod_acc(int nr, int ld, int ra, int rb, double al, const double *A,
                      const double *B, int sym, double *C, int ldc);
void mk_crossprod(int n, int ra, int rb, const double *A, const double *B, int sym, double *C,
                  int ldc);
/* Columns [*j0, *j1) of thread t of T: column ranges of equal upper-triangle area over 0..n */
void mk_tri_cols(int n, int t, int T, int *j0, int *j1);
/* A symmetric matrix in one of two storages: H (n x n, upper triangle, double), or P (upper
   triangle packed by column, float, without the diagonal) with the whole diagonal dg and a
   rank-one term gb 11' (off the diagonal) in double, applied in the products: a float entry
   holding a large gb would lose the rest. fast: P's products in float arithmetic, through xf
   (n floats) and yf (n floats per thread). */
typedef struct {
    int n;
    double *H;
    float *P;
    double *dg, gb;
    int fast;
    float *xf, *yf;
} mk_symmat;
double mk_symmat_diag(const mk_symmat *A, int i);
void mk_symmat_set_diag(mk_symmat *A, int i, double v);
/* entry (i, j), i <= j; A is a const mk_symmat * (the signature of mk_pcblock_prepare) */
double mk_symmat_entry(const void *A, int i, int j);
/* q = A p on nt threads (column ranges of equal triangle area; qt: nt blocks of n doubles,
   each thread's part, summed in thread order) */
void mk_symmat_mv(const mk_symmat *A, const double *p, double *q, int nt, double *qt);
/* mk_symmat_mv as a CG operator (mk_cg.mv): ctx is a mk_symmat_op */
typedef struct {
    const mk_symmat *A;
    int nt;
    double *qt;
} mk_symmat_op;
void mk_symmat_op_mv(void *ctx, const double *p, double *q);

/* ---------------------------------------------------------------- kstats.c: kernel statistics
   Statistics of a kernel A (n x n) from one sweep, and upper bounds of ||x||^2_A = x'A x that
   cost O(n) (or O(1) from dots) instead of a sweep: screening of kernels whose norm must stay
   below a threshold. P is the centring projection I - 11'/n. State-free; plain C. */
/* One sweep (plus a second over the cached kernel): Av = A v, s1 = sqrt(1'A1), lc = sqrt of the
   least of tr A, ||PAP||_F and the largest Gershgorin sum of PAP (>= sqrt(lambda_max(PAP))),
   k1 = A 1 (NULL: not kept). rs: n doubles of scratch. */
void mk_kernel_stats(const mk_ksrc *K, const double *v, double *Av, double *s1, double *lc,
                     double *rs, double *k1);
/* the same from the upper triangle in two triangle sweeps (for n >= MK_TRI_MIN, where a kernel
   no longer stays in cache between passes); ones: n ones; t: n doubles of scratch; k1 needed */
void mk_kernel_stats_tri(const mk_ksrc *K, const double *v, const double *ones, double *Av,
                         double *s1, double *lc, double *t, double *k1);
/* mean of x and squared norm of x - mean (two passes) */
void mk_centred(int n, const double *x, double *mx, double *xc2);
/* A reference point r of kernel A for the bound: r, A r, A 1 (n each), ||r||_A, mean(r),
   ||r - mean(r)||^2, 1'A r, 1'A 1 and lc (mk_kernel_stats). */
typedef struct {
    const double *r, *Kr, *k1;
    double nr, rm, rc2, rt, s11, lc;
} mk_kref;
/* Upper bound of ||x||^2_A (x of mean mx, centred squared norm xc2): x = a 1 + b r + w with w
   orthogonal to 1 and r; exact but for w'A w <= lc^2 ||w||^2. */
double mk_kbound(int n, const double *x, double mx, double xc2, const mk_kref *R);
/* the same from the dots xr = x'r, xk = x'k1, xq = x'Kr (a bound along a segment x + c d
   costs O(1) per c once the dots of x and d are known) */
double mk_kbound_dots(int n, double mx, double xc2, double xr, double xk, double xq,
                      const mk_kref *R);
/* the dots of x and d with r, k1 and Kr: out = (x'r, x'k1, x'Kr, d'r, d'k1, d'Kr) */
void mk_kref_dots2(int n, const double *x, const double *d, const mk_kref *R, double *out);

/* Effective neighbours per point of each kernel idx[c] (w NULL) or of sum_c w_c K_idx[c], over
   the 0-based columns js, with R's sums (R/store.R kernel_neighbours()); NA where a diagonal
   entry read is <= 0. */
#define MK_NB_CHUNK 4194304   /* columns a call holds, doubles (at least one column) */
void mk_kernel_neighbours(const mk_store *s, const int *idx, int cnt, const int *js, int nj,
                          const double *w, double *out);

/* A low-rank store's squares off the diagonal of sum_c w_c K_idx[c] (0-based kernels idx,
   rows is in blocks of bs, columns js), per column: R/store.R lowrank_offdiag(). Rows taken
   MK_OFFDIAG_ROWS at a time (its scratch: R/memory.R memory_r_heap()). */
#define MK_OFFDIAG_ROWS 128
void mk_lowrank_offdiag(const mk_store *s, const int *idx, int cnt, const double *w,
                        const int *js, int nj, const int *is, int ni, int bs, double *off);

/* ---------------------------------------------------------------- cg.c: conjugate gradients
   One preconditioned CG for a symmetric positive (semi)definite A given by its product. */
typedef void (*mk_cg_op)(void *ctx, const double *in, double *out);
/* Preconditioner: Jacobi (pre = inverse diagonal, n doubles the caller fills) and the Cholesky
   factor of the block of coordinates whose key is 0 (in SpicyMKL those without loss curvature,
   which Jacobi scaling cannot condition), up to cap coordinates; the factor is reused while the
   block's coordinates do not change (a factor of an earlier matrix is still a preconditioner). */
typedef struct {
    int n;           /* order of the matrix (set by mk_pcblock_prepare) */
    int cap;         /* largest block factored; 0: Jacobi only */
    int nf;          /* size of the block in the current solve (0: Jacobi only) */
    int nprev;       /* size of the block the factor F belongs to (-1: no valid factor) */
    int *idx, *prev; /* its coordinates in this solve; those of F */
    double *F, *zf;  /* cap x cap upper Cholesky factor; cap scratch */
    const double *pre; /* n: the inverse diagonal (Jacobi), set by the caller before a solve */
    int used;        /* solves that used the block */
} mk_pcblock;
/* zero it and allocate room for blocks of up to cap coordinates (R_alloc) */
void mk_pcblock_init(mk_pcblock *B, int cap);
/* the block of this solve: coordinates with key[i] == 0, factored from entry(ctx, i, j), i <= j
   (or the previous factor when the coordinates are the same); none when more than cap */
void mk_pcblock_prepare(mk_pcblock *B, int n, const double *key,
                        double (*entry)(const void *, int, int), const void *ctx);
/* z = P^{-1} r (an mk_cg_op: ctx is the mk_pcblock) */
void mk_pcblock_apply(void *B, const double *r, double *z);
/* Deflation (Saad, Yeung, Erhel and Guyomarc'h 2000) of a sequence of solves whose matrices
   differ only on the diagonal, A = A0 + diag(s - s0): the search directions of a recording
   solve (matrix A0, diagonal part s0) are kept, up to kmax; a later solve starts from the
   Galerkin solution on their span and keeps its directions A-orthogonal to it. */
typedef struct {
    int kmax;        /* directions kept at most (0: no deflation) */
    int k, kp;       /* directions held; those in use by the solve at hand */
    int rec;         /* 1: the next solve records a new set (and is not deflated) */
    int used;        /* solves deflated */
    double *W, *Q;   /* n x kmax: directions w (w'A0 w = 1) and A0 w */
    double *AW;      /* n x kmax: A W for the matrix of the solve at hand */
    double *s0;      /* n: the recording solve's diagonal part */
    double *dv;      /* n: s - s0 on the coordinates where it is nonzero (di) */
    int *di;
    double *G;       /* kmax x kmax: W'Q (column c filled in rows 0..c) */
    double *E, *T;   /* k x k: W'AW and its eigenvectors; T: k x kd, the basis W T */
    double *ev, *xv, *mu, *wk;   /* kmax each; wk: lwork (dsyev) */
    int lwork;
} mk_defl;
/* room for km directions of length n (R_alloc); a zeroed mk_defl is "no deflation" */
void mk_defl_alloc(mk_defl *Df, int n, int km);
typedef struct {
    int n, maxit;
    double tol;          /* stop when ||r|| <= tol */
    mk_cg_op mv;         /* q = A p */
    void *mv_ctx;
    mk_cg_op pc;         /* z = M^{-1} r; NULL: none */
    void *pc_ctx;
    int check_start;     /* 1: no iteration when the start's ||r|| <= tol already */
    int take_first;      /* 1: when A has no curvature along the first direction p (p'Ap <= 0),
                            x += p (a descent direction for a caller's line search) */
    mk_defl *defl;       /* NULL or kmax = 0: no deflation */
    const double *shift; /* with defl: this solve's diagonal part s */
    double *work;        /* 3n doubles */
} mk_cg;
/* Solve A x = b: on entry x is the start and r = b - A x its residual; on return x the
   solution, r its residual, *iters the iterations taken. Returns 0, or 1 when no iteration was
   taken and no deflated start was made (A singular along the first direction). Checks for user
   interrupts every 32 iterations: call outside OpenMP regions. */
int mk_cg_solve(const mk_cg *c, double *x, double *r, int *iters);

/* ====================================================================== spicy*.c */
/* SpicyMKL: dual augmented Lagrangian MKL (block 1-norm / elastic net; hinge, logistic,
   squared, epsilon-insensitive losses) on a square training store. control: named list built
   by fit_spicy() (R/spicy.R), read by name; init: NULL (cold start) or a named list alpha
   (n*M), b, rho (n), aux (2n), gamma (2) of a previous fit. Returns a named list (alpha, b,
   rho, aux, gamma, primal, dual, gap, converged, iterations, ..., history, norms). */
SEXP mkc_spicy(SEXP store, SEXP y, SEXP control, SEXP init);
/* the upper Cholesky factor R updated by sg[i] X[i, ]'X[i, ] for each row of X in turn (the
   Woodbury capacitance's factor updates, sp_chol_r1; NULL when a downdate fails); for the tests */
SEXP mkc_spicy_cholup(SEXP R, SEXP X, SEXP sg);

/* ====================================================================== SVM family */
/* SimpleMKL, HessianMKL and lp-norm MKL minimise J(d), the optimal C-SVM dual value on
 * K(d) = sum_m d_m K_m, over d >= 0 with sum(d) = 1 (simplex) or ||d||_p = 1 (lp sphere).
 * dJ/dd_m = -v_m / 2 with v_m = (y.a)' K_m (y.a) at the SVM solution a.
 *
 * One driver (svmfam.c) owns the outer loop: the first SVM solve, the checkpoint (quadratic
 * forms, certified relative duality gap, history row, stopping rule, user interrupt), the
 * tighten-the-SVM-and-retry rule, the line kernel and the .Call entry. A step strategy
 * (simple.c, hessian.c, lpnorm.c) proposes and accepts the next point. Strategies never call
 * the driver by symbol: they use the services it puts in mk_sf_ctx; the driver reaches them
 * through its table of mk_sf_strategy. */

/* Options, read from the control list by name. */
typedef struct {
    double tol;          /* relative duality gap at which the fit has converged */
    double svm_tol;      /* initial SMO tolerance (tightened by the driver when needed) */
    double p;            /* 1: simplex; > 1: unit lp sphere */
    double newton_tol;   /* HessianMKL: predicted decrease below newton_tol * J = no progress */
    double gold_tol;     /* SimpleMKL: golden-section width relative to the feasible step */
    double max_time;     /* seconds (Inf: none) */
    int maxiter, svm_maxiter, nthreads, verbose;
    int line_search;     /* HessianMKL step length: 1 keep halving while J decreases, 0 first */
    int screen;          /* gradient screening for strategies that allow it (1: on) */
    int shrink;          /* the SMO's shrinking on a dense store (1: on; svm.c) */
    int kcache;          /* on the fly: entries of the column cache (0: whole; kcache.c) */
    int hess_free_max;   /* HessianMKL: most free SVs whose Gram matrix is formed */
    mk_progress *prog;   /* progress of the fit (mk_progress_tick), or NULL */
    const double *box;   /* per-point box C w_i (case weights), or NULL: C for every point */
} mk_sf_opts;

/* What a step returns. MK_SF_MOVED: a point was accepted (c->d, c->a, c->b, c->J updated).
   Otherwise the strategy found no improvement (it may still have moved the point by a
   negligible amount) and says why; the driver then tightens the SMO tolerance and retries. */
enum { MK_SF_MOVED = 0, MK_SF_STALLED = 1, MK_SF_DECREMENT = 2 };
/* Stop reasons (R: .mk_codes$svmfam_stop). */
enum { MK_SF_STOP_GAP = 0, MK_SF_STOP_LIMIT = 1, MK_SF_STOP_STALLED = 2,
       MK_SF_STOP_DECREMENT = 3, MK_NSF_STOP = 4 };

typedef struct mk_sf_ctx mk_sf_ctx;
struct mk_sf_ctx {
    /* the problem */
    const mk_store *st;
    const double *y;
    int n, M;
    double C;
    const mk_sf_opts *o;
    double svm_tol;                /* current SMO tolerance */
    /* the current point: alpha of the SVM on K(d), its bias and J(d) */
    double *d, *a, b, J;
    /* counters and seconds (strategies add their own Hessian evaluations and t_dir) */
    int svm_solves, grad_evals, hess_evals, svm_fail;
    int hess_flat;                 /* HessianMKL steps without curvature: too many free SVs */
    double smo_iter, smo_work;     /* SMO iterations, points passed over (mk_svm_result) */
    double screened;               /* v_m bounded (gradient screening) or not read (working set) */
    double t0, t_svm, t_grad, t_dir;
    /* HessianMKL on a dense store: U = [K_m (y.a)] (n x M) from the certificate's pass, valid
       (kv_ok) for the alpha of the last certificate until the strategy reads it */
    double *kv;
    int kv_ok;
    /* the kernel working set (strategies with wset = 1, dense store): the step reads v_m and
       U's columns only for the nwk kernels wk[] (ascending); wk NULL: every kernel */
    const int *wk;
    int nwk;
    /* Services of the driver. J_at: the SVM on K(d) warm-started from alpha (in/out); returns
       J(d) and sets *b. The line kernel keeps the base B = K(c->d) (built by the driver at
       the start of every 25th iteration and kept up to date by the strategy through
       base_* as it moves d) and a direction KD = sum_m D_m K_m; J_line(t) solves the SVM on
       B + t KD in O(n^2) for its kernel. */
    double (*J_at)(mk_sf_ctx *c, const double *d, double *alpha, double *b);
    double (*J_line)(mk_sf_ctx *c, double t, double *alpha, double *b);
    void (*dir_combine)(mk_sf_ctx *c, const double *D);      /* KD = sum_m D_m K_m */
    void (*dir_axpy)(mk_sf_ctx *c, int m, double t);         /* KD += t K_m */
    /* the SVM on B + t KD + sum_k w[k] K_{idx[k]}, like J_line, with (same read of those cnt
       kernels) a tentative direction KD + sum_k wd[k] K_{idx[k]}; take_probe makes them the
       base and the direction */
    double (*J_probe)(mk_sf_ctx *c, double t, const int *idx, const double *w,
                      const double *wd, int cnt, double *alpha, double *b);
    void (*take_probe)(mk_sf_ctx *c);
    void (*base_move)(mk_sf_ctx *c, double t);               /* B += t KD */
    void (*base_take_line)(mk_sf_ctx *c);                    /* B = kernel of the last J_line */
    void (*base_axpy)(mk_sf_ctx *c, int m, double t);        /* B += t K_m */
    void (*base_div)(mk_sf_ctx *c, double s);                /* B /= s */
    /* column j of B (n values; in buf, n doubles, or a pointer into B; NULL: low rank) */
    const double *(*base_col)(mk_sf_ctx *c, int j, double *buf);
    /* on the fly: the n x M columns of point j from the column cache, valid until the next
       cache read (NULL on other stores) */
    const double *(*point_cols)(mk_sf_ctx *c, int j);
    /* Low rank only (NULL otherwise): HessianMKL's curvature on the free support vectors S,
       al = y.a: Z (*zr rows, M + 1 columns) with Z'Z = [Q 1]' Kbar^{-1} [Q 1], Q[, m] =
       (K_m al)_S, Kbar = K(d)_SS + ridge; NULL on failure (svmfam_lr.c) */
    double *(*hess_gram)(mk_sf_ctx *c, const int *S, int ns, const double *al, int *zr);
    void *drv;                     /* the driver's own state */
    void *lrdrv;                   /* the low-rank services' state */
};

/* Count one SVM solve that started at time t0 and return its J (the drivers' solves). */
static inline double mk_sf_counted(mk_sf_ctx *c, const mk_svm_result *res, double t0, double *b)
{
    c->svm_solves++;
    if (res->status != 0) c->svm_fail++;
    c->smo_iter += res->iter;
    c->smo_work += res->work;
    *b = res->b;
    c->t_svm += mk_time() - t0;
    return res->obj;
}

/* A step strategy. init: its scratch for the whole fit (R_alloc), handed back to step.
   start: puts c->d on the feasible set before the first solve (NULL: the simplex, d / sum d).
   step: from the current point, with v the quadratic forms at it (gradient -v/2), try to
   move; returns MK_SF_MOVED, MK_SF_STALLED or MK_SF_DECREMENT. */
typedef struct {
    const char *name;
    int line;                      /* uses the line kernel */
    /* reads v_m of a zero weight only through "v_m < v_mu" (mu: a largest weight, among equal
       ones the one with the largest v_m), so
       the driver may pass an upper bound of v_m below v_mu instead of v_m (gradient screening) */
    int screen;
    /* takes steps over the kernel working set c->wk alone (the driver's certificate reads the
       other kernels only to confirm a stop: svmfam.c) */
    int wset;
    void *(*init)(mk_sf_ctx *c);
    void (*start)(mk_sf_ctx *c);
    int (*step)(mk_sf_ctx *c, void *ws, int it, const double *v);
} mk_sf_strategy;

/* simple.c: reduced-gradient descent with line search on the simplex (Rakotomamonjy et al.) */
void *mk_sf_simple_init(mk_sf_ctx *c);
int mk_sf_simple_step(mk_sf_ctx *c, void *ws, int it, const double *v);
/* hessian.c: constrained Newton steps (Chapelle & Rakotomamonjy 2008). With more free SVs than
   MK_HESS_FREE_MAX (or the control entry hess_free_max when smaller) the dense Gram matrix of
   the free SVs is not formed (the step falls back as without curvature); R/memory.R counts that
   matrix at min(n, that limit) rows, reading the limit from mkc_codes. */
#define MK_HESS_FREE_MAX 4096
/* lsvm.c: the most coordinates whose block K_cc = F_c F_c' the linear SVM forms (cap^2 doubles
   per solve: R/memory.R) */
#define MK_LSVM_CACHE 2048
void *mk_sf_hessian_init(mk_sf_ctx *c);
int mk_sf_hessian_step(mk_sf_ctx *c, void *ws, int it, const double *v);
/* lpnorm.c: closed-form weight update on the unit lp sphere (Kloft et al.) */
void *mk_sf_lp_init(mk_sf_ctx *c);
void mk_sf_lp_start(mk_sf_ctx *c);
int mk_sf_lp_step(mk_sf_ctx *c, void *ws, int it, const double *v);

/* The driver (svmfam.c). d (M): in = start, out = solution; a (n): in = warm start, out.
   Fills the outputs and the history (9 columns: iteration, time, objective, gap, n_active,
   svm_solves, grad_evals, hessian_evals, step) and the weights path (M columns, one row per
   history row). c is filled by the driver and holds the counters and times on return.
   Returns the stop reason (MK_SF_STOP_*); converged means *gap <= o->tol. */
#define MK_SF_HCOLS 9
int mk_svmfam(const mk_sf_strategy *s, const mk_store *st, const double *y, double C,
              const mk_sf_opts *o, double *d, double *a, double *b, double *J, double *gap,
              int *iter, mk_hist *hist, mk_hist *wpath, mk_sf_ctx *c);
/* svmfam_lr.c: the driver's services on a low-rank store. attach: put them in c (after the
   driver filled it); rebuild: the line's base back at c->d; quad: v_m = x'K_m x, all m. */
void mk_sf_lr_attach(mk_sf_ctx *c);
void mk_sf_lr_rebuild(mk_sf_ctx *c);
void mk_sf_lr_quad(mk_sf_ctx *c, const double *x, double *v);
/* The one .Call entry of the family: method code 0 simple, 1 hessian, 2 lp; control: named
   list (R/simple.R fills every entry); init: NULL or a list with weights and / or alpha_svm. */
SEXP mkc_svmfam(SEXP method, SEXP store, SEXP y, SEXP C, SEXP control, SEXP init);

/* ====================================================================== l01.c */
/* MKL-L0/1-SVM by ADMM (steps 1-9 of inst/notes/NOTES-l01.md). control: named list (R/l01.R:
   rho1, rho2, rho3, tol, maxiter, warmup, wstep "cg" | "chol", cg_tol, joint_wb, freeze_T,
   progress_fun); start: named list of every starting value (w, u, lambda: n; d, z, theta: M;
   b, a; T: n logicals, the warm-up working set). */
SEXP mkc_l01(SEXP store, SEXP y, SEXP C, SEXP control, SEXP start);
/* (l01_lowrank.c) its w-step (I + rho1 K(d)) x = rhs on a low-rank store, O(n R) memory: mode 0
   conjugate gradients, 1 Woodbury over the kernels free[m] != 0 (the others stay at d_m = 0).
   update returns 1 when it factored; solve takes the CG warm start in x and returns the CG
   iterations. */
typedef struct mk_l01_lr mk_l01_lr;
mk_l01_lr *mk_l01_lr_new(const mk_store *st, int mode, const int *free);
int mk_l01_lr_update(mk_l01_lr *L, const double *d, double rho1);
int mk_l01_lr_solve(mk_l01_lr *L, double rho1, int nrhs, const double *const *rhs,
                    double *const *x, double cg_tol, int cg_maxiter);
/* the joint (w, b) step with Woodbury (mode 1): w and [K_m w] over the nf free kernels fidx
   (P, n x nf) for rhs_0 and rhs_1 = rho1 1, sy = sum y (u - 1 + lambda / rho1); returns b */
double mk_l01_lr_wb(mk_l01_lr *L, double rho1, const double *rhs0, double sy, int nf,
                    const int *fidx, double *w, double *P);

/* ====================================================================== bayes.c */
/* Empirical Bayesian MKL (Tomioka & Suzuki 2010, Eqs. 19-23): MacKay updates of the kernel
   variances d_m, the noise variance sigma2 and optionally the variance d0 of a constant (bias)
   kernel, with one Cholesky factorisation of sigma2 I + sum_m d_m K_m (+ d0 1 1') and one pass
   over each active kernel per step. control: named list built by fit_bayes() (R/bayes.R: tol,
   maxiter, prune, sigma2_floor, fix_sigma2, bias_kernel, update (EB_UPD_*), safeguard,
   nthreads, verbose); start: named list d (M; NA: from prior_variance), sigma2, d0, prior_variance.
   Returns a named list (d, sigma2, d0, beta, objective, stop, iterations, residual, history,
   q, t, scale, pruned_at, ...). */
/* Stop reasons (R: .mk_codes$bayes_stop). */
enum { EB_STOP_FP = 0, EB_STOP_LIMIT = 1, EB_STOP_STALLED = 2, EB_STOP_NOTPD = 3, EB_NSTOP = 4 };
/* Update rules (R: .mk_codes$bayes_update). */
enum { EB_UPD_MACKAY = 0, EB_UPD_MM = 1, EB_UPD_SCORING = 2, EB_NUPD = 3 };
/* At most this many free variances take a scoring step (its system and products grow with
   them: R/memory.R); more fall back to MacKay's step, and the scoring phase waits for fewer. */
#define EB_SCORING_MAXVAR 200
SEXP mkc_bayes(SEXP store, SEXP y, SEXP control, SEXP start);

/* ====================================================================== mwu.c */
/* MWUMKL (Moeller, Raman, Saha & Venkatasubramanian 2014; inst/notes/NOTES-mwu.md): matrix
   multiplicative weights on the kernels' two-column updates, O(M n) memory. control: named
   list built by fit_mwu() (R/mwu.R: epsilon, invC (1 / C, 0: hard margin), cutoff, T,
   nthreads, verbose, hist_every, fmap, chain, block, progress_fun (mk_progress: t of T
   iterations)); trace: NULL (computed from the store) or the M traces. Returns a named list
   (alpha, sigma, mu, b, s, iterations, status (0 done, 1 infeasible), trace, history, scale,
   h, kernels (mapped, chained)). */
/* Status of a fit (R: .mk_codes$mwu_status). */
enum { MWU_DONE = 0, MWU_INFEASIBLE = 1, MWU_NSTATUS = 2 };
SEXP mkc_mwu(SEXP store, SEXP y, SEXP control, SEXP trace);

#endif
