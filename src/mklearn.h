/* mklearn: every C prototype of the package.
 *
 * Conventions
 *  - Kernel arrays are column-major n x n x M doubles; kernel m starts at K + m*n*n.
 *  - Pure C functions work on double* / int* and never call the R API from threaded code.
 *  - .Call wrappers are named mkc_<name> and registered in init.c as "<name>", so R calls
 *    .Call(C_<name>, ...). Wrappers check types/lengths with error(), allocate scratch with
 *    R_alloc, and return named lists.
 */
#ifndef MKLEARN_H
#define MKLEARN_H

#include <R.h>
#include <Rinternals.h>
#include <R_ext/RS.h>

#ifdef _OPENMP
#include <omp.h>
#endif

/* ---------------------------------------------------------------- utils.c */
/* Number of threads to use: requested (<= 0 means the OpenMP default), capped by
   omp_get_thread_limit() (OMP_THREAD_LIMIT); 1 without OpenMP. */
int mk_threads(int requested);
/* out = sum_m d[m] * K_m over the kernels with d[m] != 0. */
void mk_combine(const double *K, int n, int M, const double *d, double *out, int nthreads);
/* v' A v for a symmetric n x n A (work: n doubles). */
double mk_quad(const double *A, int n, const double *v, double *work);
/* out[j] = v' K_{idx[j]} v for j < nidx (idx NULL means all M kernels, nidx = M). */
void mk_quad_kernels(const double *K, int n, const int *idx, int nidx, const double *v,
                     double *out, int nthreads);
/* y = A x for a symmetric n x n A (BLAS dsymv). */
void mk_symv(const double *A, int n, const double *x, double *y);
/* Cholesky solve of (A) X = B in place; A is overwritten by its factor. Returns LAPACK info. */
int mk_chol_solve(double *A, int n, double *B, int nrhs);
/* Wall-clock seconds since an arbitrary origin. */
double mk_time(void);

/* out = sum_j K_{idx[j]} alpha[, j] for K nz x n x M, alpha n x Ma, idx 0-based (NULL: the
   first Ma kernels): decision values without the bias. */
void mk_kernel_mv(const double *K, int nz, int n, const int *idx, int Ma, const double *alpha,
                  double *out, int nthreads);
SEXP mkc_kernel_mv(SEXP K, SEXP alpha, SEXP idx, SEXP nthreads);
SEXP mkc_combine(SEXP K, SEXP d, SEXP nthreads);
SEXP mkc_threads(SEXP requested);

/* -------------------------------------------------------------- kernels.c */
/* Kernel type codes (R/kernels.R keeps the same table). */
enum { MK_LINEAR = 0, MK_POLY = 1, MK_RBF = 2, MK_LAPLACE = 3, MK_CHISQ = 4 };
/* Normalisation codes. */
enum { MK_NORM_NONE = 0, MK_NORM_TRACE = 1, MK_NORM_CENTER_TRACE = 2 };

/* Raw kernels: out is nz x n x M (nz = n when z is NULL, the symmetric training case).
   Feature groups: group g uses features gfeat[gstart[g] .. gstart[g+1]-1] (0-based).
   Kernel m: group kgroup[m], type ktype[m], parameters kpar1[m], kpar2[m]. */
void mk_gram(const double *x, int n, int p, const double *z, int nz,
             const int *gstart, const int *gfeat, int M, const int *kgroup, const int *ktype,
             const double *kpar1, const double *kpar2, double *out, int nthreads);
/* Training normalisation in place; fills scale[M], colmeans[n*M], grandmean[M]
   (colmeans/grandmean only for MK_NORM_CENTER_TRACE). Then adds jitter to the diagonal. */
void mk_normalize(double *K, int n, int M, int norm, double jitter, double *scale,
                  double *colmeans, double *grandmean, int nthreads);
/* The same normalisation applied to test-by-train kernels Kt (nz x n x M). */
void mk_normalize_test(double *Kt, int nz, int n, int M, int norm, const double *scale,
                       const double *colmeans, const double *grandmean, int nthreads);

SEXP mkc_gram(SEXP x, SEXP z, SEXP gstart, SEXP gfeat, SEXP kgroup, SEXP ktype,
              SEXP kpar1, SEXP kpar2, SEXP norm, SEXP jitter, SEXP stats, SEXP nthreads);
SEXP mkc_normalize(SEXP K, SEXP norm, SEXP jitter, SEXP nthreads);
SEXP mkc_normalize_test(SEXP Kt, SEXP norm, SEXP stats, SEXP nthreads);
SEXP mkc_check_psd(SEXP K);

/* ------------------------------------------------------------------ svm.c */
typedef struct {
    double b;     /* bias */
    double obj;   /* dual objective sum(a) - a'Qa/2 (maximised) */
    double viol;  /* maximal KKT violation m(a) - M(a) at exit */
    int iter;     /* SMO iterations */
    int status;   /* 0 converged, 1 iteration limit */
} mk_svm_result;

/* C-SVM dual on a precomputed kernel by SMO with second-order working-set selection
   (Fan, Chen & Lin 2005). K: n x n; y in {-1,+1}; alpha: in = warm start (projected onto
   0 <= a <= C, y'a = 0 if needed), out = solution. grad: n doubles of scratch; on exit
   grad[i] = (Q a)_i - 1 with Q = diag(y) K diag(y). */
int mk_smo(const double *K, int n, const double *y, double C, double tol, int maxiter,
           double *alpha, double *grad, mk_svm_result *res);
SEXP mkc_smo(SEXP K, SEXP y, SEXP C, SEXP alpha0, SEXP tol, SEXP maxiter);

/* ---------------------------------------------------------------- uniform.c */
/* Kernel ridge: (K + lambda I) beta = y - b, b chosen so that sum(beta) = 0. */
int mk_kridge(const double *K, int n, const double *y, double lambda, double *beta, double *b);
SEXP mkc_kridge(SEXP K, SEXP y, SEXP lambda);

/* ================= solver sections: each owner edits only its own block =========== */
/* ---- spicy.c (SpicyMKL) BEGIN ---- */
/* SpicyMKL: dual augmented Lagrangian MKL (block 1-norm / elastic net; hinge, logistic,
   squared, epsilon-insensitive losses). See src/spicy.c for the argument layout. */
SEXP mkc_spicy(SEXP K, SEXP y, SEXP iopt, SEXP dopt, SEXP alpha0, SEXP b0, SEXP rho0,
               SEXP aux0, SEXP gamma0);
/* ---- spicy.c (SpicyMKL) END ---- */

/* ---- simple.c / hessian.c / lpnorm.c (SVM family) BEGIN ---- */
/* Shared machinery of the SVM-family MKL solvers (simple.c): J(d) = optimal C-SVM dual value
   on K(d) = sum_m d_m K_m, computed by mk_smo warm-started from the previous alpha. */
typedef struct {
    const double *K; const double *y;
    int n, M, svm_maxiter, nthreads, verbose;
    double C, svm_tol;
    double *Kd, *grad, *ya;          /* n*n combined kernel, n SMO gradient, n signed alpha */
    int svm_solves, grad_evals, hess_evals, svm_fail;
    double smo_iter;                 /* SMO iterations over all solves */
    double t0, t_svm, t_grad, t_dir; /* start time; seconds in SVM solves (incl. combine),
                                        in gradients, in direction finding (Hessian + QP) */
} mk_sf_work;
/* Per-outer-iteration record: MK_SF_HCOLS columns (iteration, time, objective, gap,
   n_active, svm_solves, grad_evals, hessian_evals, step) and the weights path. */
#define MK_SF_HCOLS 9
typedef struct { int cap, maxcap, len, M; double *tab, *wpath; } mk_sf_hist;
/* Options shared by the three solvers: dpar = (tol, svm_tol, p, newton_tol, gold_tol,
   max_time), ipar = (maxiter, svm_maxiter, nthreads, verbose, line_search). */
typedef struct { double tol, svm_tol, p, newton_tol, gold_tol, max_time; int maxiter,
                 svm_maxiter, nthreads, verbose, line_search; } mk_sf_opts;
void mk_sf_init(mk_sf_work *w, const double *K, int n, int M, const double *y, double C,
                const mk_sf_opts *o);
double mk_sf_svm(mk_sf_work *w, const double *d, double *alpha, double *b);
double mk_sf_solve(mk_sf_work *w, double *alpha, double *b);
void mk_sf_quad(mk_sf_work *w, const double *alpha, double *v);
double mk_sf_dualnorm(const double *v, int M, double p);
double mk_sf_gap(const double *alpha, int n, const double *v, int M, double J, double p);
void mk_sf_hist_init(mk_sf_hist *h, int cap, int M);
void mk_sf_record(mk_sf_hist *h, const mk_sf_work *w, int it, double J, double relgap,
                  const double *d, double step);
/* Top of each outer iteration: quadratic forms, relative gap, history row, stopping rule
   (returns 1 to stop; *reason 0 = gap, 1 = limit), user interrupt. */
int mk_sf_checkpoint(mk_sf_work *w, const mk_sf_opts *o, mk_sf_hist *h, int it, double J,
                     const double *a, const double *d, double *v, double p, double step,
                     double *rg, int *reason);
/* Solvers: d (M, in = start on the feasible set, out), alpha (n, in = warm start, out), b out.
   They return 1 when the stopping rule was met; *J, *relgap, *iter are set; *reason is
   0 = gap <= tol, 1 = maxiter or max_time, 2 = no descent found even with the tightest SMO
   tolerance (1e-12), 3 = Newton decrement (HessianMKL). */
int mk_simplemkl(mk_sf_work *w, const mk_sf_opts *o, double *d, double *alpha, double *b,
                 mk_sf_hist *h, double *J, double *relgap, int *iter, int *reason);
int mk_hessianmkl(mk_sf_work *w, const mk_sf_opts *o, double *d, double *alpha, double *b,
                  mk_sf_hist *h, double *J, double *relgap, int *iter, int *reason);
int mk_lpmkl(mk_sf_work *w, const mk_sf_opts *o, double *d, double *alpha, double *b,
             mk_sf_hist *h, double *J, double *relgap, int *iter, int *reason);
/* .Call wrappers: (K, y, C, d0, alpha0, dpar, ipar). */
SEXP mk_sf_call(int method, SEXP K, SEXP y, SEXP C, SEXP d0, SEXP alpha0, SEXP dpar, SEXP ipar);
SEXP mkc_simple(SEXP K, SEXP y, SEXP C, SEXP d0, SEXP alpha0, SEXP dpar, SEXP ipar);
SEXP mkc_hessian(SEXP K, SEXP y, SEXP C, SEXP d0, SEXP alpha0, SEXP dpar, SEXP ipar);
SEXP mkc_lpnorm(SEXP K, SEXP y, SEXP C, SEXP d0, SEXP alpha0, SEXP dpar, SEXP ipar);
/* ---- simple.c / hessian.c / lpnorm.c (SVM family) END ---- */

#endif
