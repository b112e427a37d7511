/* SVM-family MKL, part 1: the machinery shared by SimpleMKL, HessianMKL and lp-norm MKL,
 * the SimpleMKL solver itself, and the .Call wrappers of all three.
 *
 * All three minimise J(d) = max_a sum(a) - (1/2) sum_m d_m v_m(a),  v_m(a) = (y.a)' K_m (y.a),
 * over 0 <= a <= C, y'a = 0, i.e. J(d) is the optimal C-SVM dual value on the combined
 * kernel K(d) = sum_m d_m K_m.  d lives on the simplex (SimpleMKL, HessianMKL, lp with p = 1)
 * or on the unit lp sphere (lp-norm MKL, p > 1).  dJ/dd_m = -v_m(a*)/2.
 */
#define USE_FC_LEN_T
#include "mklearn.h"
#include <math.h>
#include <float.h>
#include <string.h>
#include <limits.h>

/* ------------------------------------------------------------ shared machinery */

void mk_sf_init(mk_sf_work *w, const double *K, int n, int M, const double *y, double C,
                const mk_sf_opts *o)
{
    w->K = K; w->y = y; w->n = n; w->M = M; w->C = C;
    w->svm_tol = o->svm_tol; w->svm_maxiter = o->svm_maxiter;
    w->nthreads = o->nthreads; w->verbose = o->verbose;
    w->Kd = (double *) R_alloc((size_t) n * n, sizeof(double));
    w->grad = (double *) R_alloc(n, sizeof(double));
    w->ya = (double *) R_alloc(n, sizeof(double));
    w->svm_solves = w->grad_evals = w->hess_evals = w->svm_fail = 0;
    w->smo_iter = 0.0;
    w->t0 = mk_time();
    w->t_svm = w->t_grad = w->t_dir = 0.0;
}

/* The SVM on the kernel already in w->Kd, warm-started from alpha (in/out); returns the SVM
   dual value, which is J at that kernel up to the SMO tolerance. */
double mk_sf_solve(mk_sf_work *w, double *alpha, double *b)
{
    double t = mk_time();
    mk_svm_result res;
    mk_smo(w->Kd, w->n, w->y, w->C, w->svm_tol, w->svm_maxiter, alpha, w->grad, &res);
    w->svm_solves++;
    if (res.status != 0) w->svm_fail++;
    w->smo_iter += res.iter;
    *b = res.b;
    w->t_svm += mk_time() - t;
    return res.obj;
}

/* J at weights d: one combined-kernel build (only d_m != 0 enter), one warm-started SMO. */
double mk_sf_svm(mk_sf_work *w, const double *d, double *alpha, double *b)
{
    double t = mk_time();
    mk_combine(w->K, w->n, w->M, d, w->Kd, w->nthreads);
    w->t_svm += mk_time() - t;
    return mk_sf_solve(w, alpha, b);
}

/* v_m = (y.a)' K_m (y.a) for every kernel; the gradient of J is -v/2. */
void mk_sf_quad(mk_sf_work *w, const double *alpha, double *v)
{
    double t = mk_time();
    for (int i = 0; i < w->n; i++) w->ya[i] = w->y[i] * alpha[i];
    mk_quad_kernels(w->K, w->n, NULL, w->M, w->ya, v, w->nthreads);
    w->grad_evals++;
    w->t_grad += mk_time() - t;
}

/* The dual norm of the constraint set of d applied to v >= 0: max_m v_m for the simplex
   (p = 1), ||v||_{p*} with p* = p/(p-1) for the unit lp ball (p > 1). */
double mk_sf_dualnorm(const double *v, int M, double p)
{
    double vmax = 0.0;
    for (int m = 0; m < M; m++) if (v[m] > vmax) vmax = v[m];
    if (p <= 1.0 || vmax <= 0.0) return vmax;
    double ps = p / (p - 1.0), s = 0.0;
    for (int m = 0; m < M; m++) if (v[m] > 0.0) s += pow(v[m] / vmax, ps);
    return vmax * pow(s, 1.0 / ps);
}

/* Duality gap J(d) - D(a), D(a) = sum(a) - (1/2) dualnorm(v(a)).
 * Why D(a) is a valid lower bound of the MKL optimum: for any feasible a and any feasible d,
 * the SVM dual at K(d) gives J(d) >= sum(a) - (1/2) sum_m d_m v_m(a)
 *                                 >= sum(a) - (1/2) max_{d' feasible} sum_m d'_m v_m(a)
 * and the maximum of the linear form d'v over the simplex is max_m v_m, over the unit lp ball
 * (v >= 0) it is ||v||_{p*} by Hoelder (attained at d'_m proportional to v_m^{p*-1}).
 * So D(a) <= min_d J(d) <= J(d): gap >= 0 bounds the suboptimality of J(d).  With J taken as
 * the SMO dual value at the same a, J - D(a) = (1/2)(dualnorm(v) - d'v) >= 0 exactly. */
double mk_sf_gap(const double *alpha, int n, const double *v, int M, double J, double p)
{
    double sa = 0.0;
    for (int i = 0; i < n; i++) sa += alpha[i];
    return J - (sa - 0.5 * mk_sf_dualnorm(v, M, p));
}

/* cap: the most rows ever needed (maxiter + 2); storage starts small and doubles on demand
   (maxiter can be huge while the run stops early). */
void mk_sf_hist_init(mk_sf_hist *h, int cap, int M)
{
    h->maxcap = cap;
    if (cap > 64) cap = 64;
    h->cap = cap; h->len = 0; h->M = M;
    h->tab = (double *) R_alloc((size_t) cap * MK_SF_HCOLS, sizeof(double));
    h->wpath = (double *) R_alloc((size_t) cap * M, sizeof(double));
}

/* The top of every outer iteration of the three solvers: v_m = a'YK_mYa, the relative duality
   gap (lp dual norm p), a history row, and the stopping rule. Returns 1 to stop, with
   *reason = 0 (gap <= tol) or 1 (iteration or time limit); otherwise checks for a user
   interrupt and returns 0. */
int mk_sf_checkpoint(mk_sf_work *w, const mk_sf_opts *o, mk_sf_hist *h, int it, double J,
                     const double *a, const double *d, double *v, double p, double step,
                     double *rg, int *reason)
{
    mk_sf_quad(w, a, v);
    *rg = mk_sf_gap(a, w->n, v, w->M, J, p) / fabs(J);
    mk_sf_record(h, w, it, J, *rg, d, step);
    if (*rg <= o->tol) { *reason = 0; return 1; }
    if (it >= o->maxiter || mk_time() - w->t0 > o->max_time) { *reason = 1; return 1; }
    R_CheckUserInterrupt();
    return 0;
}

void mk_sf_record(mk_sf_hist *h, const mk_sf_work *w, int it, double J, double relgap,
                  const double *d, double step)
{
    if (h->len >= h->cap) {
        if (h->cap >= h->maxcap) return;
        int nc = (h->cap > h->maxcap / 2) ? h->maxcap : 2 * h->cap;
        double *tab = (double *) R_alloc((size_t) nc * MK_SF_HCOLS, sizeof(double));
        double *wp = (double *) R_alloc((size_t) nc * h->M, sizeof(double));
        for (int c = 0; c < MK_SF_HCOLS; c++)
            memcpy(tab + (size_t) c * nc, h->tab + (size_t) c * h->cap,
                   (size_t) h->len * sizeof(double));
        for (int m = 0; m < h->M; m++)
            memcpy(wp + (size_t) m * nc, h->wpath + (size_t) m * h->cap,
                   (size_t) h->len * sizeof(double));
        h->tab = tab; h->wpath = wp; h->cap = nc;
    }
    int r = h->len, cap = h->cap, nact = 0;
    for (int m = 0; m < h->M; m++) {
        if (d[m] > 0.0) nact++;
        h->wpath[r + (size_t) m * cap] = d[m];
    }
    double row[MK_SF_HCOLS] = { (double) it, mk_time() - w->t0, J, relgap, (double) nact,
                                (double) w->svm_solves, (double) w->grad_evals,
                                (double) w->hess_evals, step };
    for (int c = 0; c < MK_SF_HCOLS; c++) h->tab[r + (size_t) c * cap] = row[c];
    h->len++;
    if (w->verbose)
        Rprintf("iter %4d  J = %.10g  gap = %.3e  active = %d  svm = %d\n", it, J, relgap,
                nact, w->svm_solves);
}

/* ------------------------------------------------------------------ SimpleMKL */

/* Reduced-gradient descent direction on the simplex (Rakotomamonjy et al. 2008).
   g = -v/2; mu = argmax d; D_m = -(g_m - g_mu) except 0 where d_m = 0 and that would
   push d_m below zero; D_mu = -sum_{m != mu} D_m.  Returns 0 if D is (numerically) zero. */
static int simple_direction(const double *d, const double *v, int M, double *D, int *mu_out)
{
    int mu = 0;
    for (int m = 1; m < M; m++) if (d[m] > d[mu]) mu = m;
    double gmu = -0.5 * v[mu], s = 0.0, scale = 0.0, dmax = 0.0;
    for (int m = 0; m < M; m++) {
        if (m == mu) continue;
        double rg = -0.5 * v[m] - gmu;
        D[m] = (d[m] <= 0.0 && rg > 0.0) ? 0.0 : -rg;
        s += D[m];
        if (fabs(0.5 * v[m]) > scale) scale = fabs(0.5 * v[m]);
    }
    D[mu] = -s;
    for (int m = 0; m < M; m++) if (fabs(D[m]) > dmax) dmax = fabs(D[m]);
    *mu_out = mu;
    return dmax > 1e-14 * (scale + fabs(gmu)) && dmax > 0.0;
}

/* Largest t with d + t D >= 0; *jb = blocking index (-1 if none). */
static double max_step(const double *d, const double *D, int M, int *jb)
{
    double t = INFINITY;
    *jb = -1;
    for (int m = 0; m < M; m++)
        if (D[m] < 0.0) {
            double r = -d[m] / D[m];
            if (r < t) { t = r; *jb = m; }
        }
    return t;
}

/* out = d + t D projected back to the simplex (tiny negatives to zero, renormalised). */
static void move_simplex(const double *d, const double *D, double t, int M, int jb,
                         double *out)
{
    double s = 0.0;
    for (int m = 0; m < M; m++) {
        double x = d[m] + t * D[m];
        if (x < 1e-14 * fabs(d[m]) || x < 0.0 || m == jb) x = 0.0;
        out[m] = x; s += x;
    }
    for (int m = 0; m < M; m++) out[m] /= s;
}

/* Kernels along the search line.  With Kc = K(d) and KD = sum_m D_m K_m, the combined kernel
   at d + t D is Kc + t KD: every SVM solve of a line search (feasible steps and golden section)
   then costs O(n^2) for its kernel instead of a build over all active kernels, and a patched
   direction (one weight dropped, the largest one rebalanced) updates KD in O(n^2) per change. */
/* out = Kc + t KD; out may be Kc (then it is Kc += t KD, e.g. with KD one kernel K_m) */
static void kern_line(const double *Kc, const double *KD, double t, double *out, int n,
                      int nthreads)
{
#ifdef _OPENMP
#pragma omp parallel for if(n >= 1000) num_threads(nthreads) schedule(static)
#endif
    for (int j = 0; j < n; j++) {
        size_t o = (size_t) j * n;
        for (int i = 0; i < n; i++) out[o + i] = Kc[o + i] + t * KD[o + i];
    }
    (void) nthreads;
}

/* J(d + t D): w->Kd = Kc + t KD, then the SMO warm-started from alpha (in/out). */
static double line_svm(mk_sf_work *w, const double *Kc, const double *KD, double t,
                       double *alpha, double *b)
{
    double t0 = mk_time();
    kern_line(Kc, KD, t, w->Kd, w->n, w->nthreads);
    w->t_svm += mk_time() - t0;
    return mk_sf_solve(w, alpha, b);
}

typedef struct {   /* line-search state: the best point seen */
    double J, b, t; double *d, *a;
} ls_best;

static double ls_eval(mk_sf_work *w, const double *Kc, const double *KD, const double *d,
                      const double *D, double t, const double *a0, double *dt, double *at,
                      ls_best *best)
{
    int M = w->M, n = w->n;
    double bt;
    move_simplex(d, D, t, M, -1, dt);
    memcpy(at, a0, (size_t) n * sizeof(double));
    double J = line_svm(w, Kc, KD, t, at, &bt);
    if (J < best->J) {
        best->J = J; best->b = bt; best->t = t;
        memcpy(best->d, dt, (size_t) M * sizeof(double));
        memcpy(best->a, at, (size_t) n * sizeof(double));
    }
    return J;
}

int mk_simplemkl(mk_sf_work *w, const mk_sf_opts *o, double *d, double *a, double *b,
                 mk_sf_hist *h, double *Jout, double *relgap, int *iter, int *reason)
{
    const int n = w->n, M = w->M;
    const size_t nn = (size_t) n * n;
    double *v = (double *) R_alloc(M, sizeof(double));
    double *D = (double *) R_alloc(M, sizeof(double));
    double *Dold = (double *) R_alloc(M, sizeof(double));
    double *dt = (double *) R_alloc(M, sizeof(double));
    double *dold = (double *) R_alloc(M, sizeof(double));
    double *at = (double *) R_alloc(n, sizeof(double));
    double *Kc = (double *) R_alloc(nn, sizeof(double));
    double *KD = (double *) R_alloc(nn, sizeof(double));
    ls_best best;
    best.d = (double *) R_alloc(M, sizeof(double));
    best.a = (double *) R_alloc(n, sizeof(double));
    const double r = 0.5 * (3.0 - sqrt(5.0));   /* golden-section fraction 0.382 */

    double J = mk_sf_svm(w, d, a, b), step = 0.0, rg = INFINITY;
    int it = 0, conv = 0;
    *reason = 1;
    for (;; it++) {
        if (mk_sf_checkpoint(w, o, h, it, J, a, d, v, 1.0, step, &rg, reason)) {
            conv = (*reason == 0);
            break;
        }
        double t0 = mk_time();
        memcpy(dold, d, (size_t) M * sizeof(double));
        int mu, jb;
        if (!simple_direction(d, v, M, D, &mu)) { *reason = 2; break; }
        w->t_dir += mk_time() - t0;
        /* line kernels: KD for the new direction; Kc = K(d) is carried from the previous
           iteration (O(n^2) updates) and rebuilt every 25 iterations against rounding drift */
        t0 = mk_time();
        if (it % 25 == 0) mk_combine(w->K, n, M, d, Kc, w->nthreads);
        mk_combine(w->K, n, M, D, KD, w->nthreads);
        w->t_svm += mk_time() - t0;

        /* Descent: go to the largest feasible step while J decreases there; each accepted
           move sets one more weight to zero and the direction is patched (same gradient). */
        double gmax = 0.0, Jfar = 0.0;
        int linesearch = 1;
        for (;;) {
            gmax = max_step(d, D, M, &jb);
            if (!(gmax < INFINITY) || gmax <= 0.0) { linesearch = 0; break; }
            double bt;
            int negligible = (jb != mu && d[jb] < 1e-9);
            if (negligible) {
                /* a negligible weight blocks the step: drop it without an SVM solve (J and
                   a change by O(1e-9) relative), otherwise it would stall the descent */
                move_simplex(d, D, 0.0, M, jb, dt);
                Jfar = J;
            } else {
                move_simplex(d, D, gmax, M, jb, dt);
                memcpy(at, a, (size_t) n * sizeof(double));
                Jfar = line_svm(w, Kc, KD, gmax, at, &bt);
            }
            if (negligible || Jfar < J) {
                t0 = mk_time();
                if (negligible) {
                    /* Kc = K(dt): take the dropped weights out, renormalise */
                    double kept = 0.0;
                    for (int m = 0; m < M; m++) {
                        if (dt[m] == 0.0 && d[m] != 0.0) kern_line(Kc, w->K + (size_t) m * nn, -d[m], Kc, n, w->nthreads);
                        else kept += d[m];
                    }
                    for (size_t i = 0; i < nn; i++) Kc[i] /= kept;
                } else {
                    double *tmp = Kc; Kc = w->Kd; w->Kd = tmp;   /* Kc = K(d + gmax D) */
                    memcpy(a, at, (size_t) n * sizeof(double));
                    *b = bt; J = Jfar;
                }
                memcpy(d, dt, (size_t) M * sizeof(double));
                if (jb == mu) { w->t_svm += mk_time() - t0; linesearch = 0; break; }
                memcpy(Dold, D, (size_t) M * sizeof(double));
                D[jb] = 0.0;
                double s = 0.0, dmax = 0.0;
                for (int m = 0; m < M; m++) if (m != mu) {
                    if (d[m] <= 0.0 && D[m] < 0.0) D[m] = 0.0;
                    s += D[m];
                }
                D[mu] = -s;
                int nchg = 0;
                for (int m = 0; m < M; m++) if (D[m] != Dold[m]) nchg++;
                if (nchg > 16) mk_combine(w->K, n, M, D, KD, w->nthreads);
                else for (int m = 0; m < M; m++)
                    if (D[m] != Dold[m])
                        kern_line(KD, w->K + (size_t) m * nn, D[m] - Dold[m], KD, n, w->nthreads);
                w->t_svm += mk_time() - t0;
                for (int m = 0; m < M; m++) if (fabs(D[m]) > dmax) dmax = fabs(D[m]);
                if (dmax == 0.0) { linesearch = 0; break; }
            } else break;
        }

        /* Golden-section search for min_t J(d + t D) on [0, gmax], J(0) = J, J(gmax) = Jfar. */
        if (linesearch) {
            best.J = J; best.b = *b; best.t = 0.0;
            memcpy(best.d, d, (size_t) M * sizeof(double));
            memcpy(best.a, a, (size_t) n * sizeof(double));
            double lo = 0.0, hi = gmax;
            double t1 = lo + r * (hi - lo), t2 = hi - r * (hi - lo);
            double f1 = ls_eval(w, Kc, KD, d, D, t1, a, dt, at, &best);
            double f2 = ls_eval(w, Kc, KD, d, D, t2, a, dt, at, &best);
            while (hi - lo > o->gold_tol * gmax) {
                if (f1 < f2) {
                    hi = t2; t2 = t1; f2 = f1; t1 = lo + r * (hi - lo);
                    f1 = ls_eval(w, Kc, KD, d, D, t1, a, dt, at, &best);
                } else {
                    lo = t1; t1 = t2; f1 = f2; t2 = hi - r * (hi - lo);
                    f2 = ls_eval(w, Kc, KD, d, D, t2, a, dt, at, &best);
                }
            }
            /* Near the optimum the best step can be far below gold_tol * gmax: if no point
               improved on t = 0, shrink t by minimising the parabola through J(0), the slope
               g'D at 0 and the smallest trial, (at most 30 trials, t shrinks >= 2x each). */
            if (best.J >= J) {
                double slope = 0.0, tt = t1 < t2 ? t1 : t2, ft = t1 < t2 ? f1 : f2;
                for (int m = 0; m < M; m++) slope -= 0.5 * v[m] * D[m];
                for (int k = 0; k < 30 && best.J >= J && tt > 1e-14 * gmax; k++) {
                    double tq = 0.1 * tt, den = ft - J - slope * tt;
                    if (slope < 0.0 && den > 0.0) {
                        tq = -slope * tt * tt / (2.0 * den);
                        if (tq > 0.5 * tt) tq = 0.5 * tt;
                        if (tq < 1e-3 * tt) tq = 1e-3 * tt;
                    }
                    tt = tq;
                    ft = ls_eval(w, Kc, KD, d, D, tt, a, dt, at, &best);
                }
            }
            if (best.J < J) {
                kern_line(Kc, KD, best.t, Kc, n, w->nthreads);   /* Kc = K(d + t D) */
                J = best.J; *b = best.b;
                memcpy(d, best.d, (size_t) M * sizeof(double));
                memcpy(a, best.a, (size_t) n * sizeof(double));
            }
        }
        step = 0.0;
        for (int m = 0; m < M; m++) step += fabs(d[m] - dold[m]);
        if (step < 1e-12) {
            /* No decrease found: the SMO accuracy limits the comparisons of J. Tighten it
               (100x, down to 1e-12), re-solve at the same d and go on; stop only after that. */
            if (w->svm_tol > 1e-12) {
                w->svm_tol = fmax(1e-12, 0.01 * w->svm_tol);
                J = mk_sf_svm(w, d, a, b);
                continue;
            }
            mk_sf_quad(w, a, v);
            rg = mk_sf_gap(a, n, v, M, J, 1.0) / fabs(J);
            it++;
            mk_sf_record(h, w, it, J, rg, d, step);
            conv = rg <= o->tol;
            *reason = conv ? 0 : 2;
            break;
        }
    }
    *Jout = J; *relgap = rg; *iter = it;
    return conv;
}

/* --------------------------------------------------------------- .Call wrappers */

static SEXP named_list(int k, const char **nm, SEXP *val)
{
    SEXP out = PROTECT(allocVector(VECSXP, k)), names = PROTECT(allocVector(STRSXP, k));
    for (int i = 0; i < k; i++) {
        SET_VECTOR_ELT(out, i, val[i]);
        SET_STRING_ELT(names, i, mkChar(nm[i]));
    }
    setAttrib(out, R_NamesSymbol, names);
    UNPROTECT(2);
    return out;
}

SEXP mk_sf_call(int method, SEXP K, SEXP y, SEXP C, SEXP d0, SEXP alpha0, SEXP dpar, SEXP ipar)
{
    if (!isReal(K) || !isReal(y) || !isReal(d0) || !isReal(alpha0) || !isReal(dpar) ||
        !isInteger(ipar))
        error("K, y, d0, alpha0, dpar must be double and ipar integer");
    int n = LENGTH(y);
    SEXP dim = getAttrib(K, R_DimSymbol);
    int M = (LENGTH(dim) == 3) ? INTEGER(dim)[2] : 1;
    if (LENGTH(dim) < 2 || INTEGER(dim)[0] != n || INTEGER(dim)[1] != n ||
        XLENGTH(K) != (R_xlen_t) n * n * M)
        error("K must be an n x n x M array with n = length(y)");
    if (LENGTH(d0) != M || LENGTH(alpha0) != n) error("d0 must have length M, alpha0 length n");
    if (LENGTH(dpar) != 6 || LENGTH(ipar) != 5) error("dpar must have 6, ipar 5 entries");
    double Cv = asReal(C);
    if (!(Cv > 0.0) || !R_FINITE(Cv)) error("C must be positive and finite");
    const double *yp = REAL(y);
    for (int i = 0; i < n; i++) if (yp[i] != 1.0 && yp[i] != -1.0) error("y must be in {-1, +1}");
    mk_sf_opts o;
    const double *dp = REAL(dpar);
    const int *ip = INTEGER(ipar);
    o.tol = dp[0]; o.svm_tol = dp[1]; o.p = dp[2]; o.newton_tol = dp[3]; o.gold_tol = dp[4];
    o.max_time = dp[5];
    o.maxiter = ip[0]; o.svm_maxiter = ip[1]; o.nthreads = mk_threads(ip[2]); o.verbose = ip[3];
    o.line_search = ip[4];
    if (!(o.tol >= 0.0) || !(o.svm_tol > 0.0) || !(o.p >= 1.0) || !(o.gold_tol > 0.0) ||
        !(o.max_time > 0.0) ||
        o.maxiter < 0 || o.svm_maxiter < 1)
        error("invalid control values");

    int nprot = 0;
    SEXP d = PROTECT(duplicate(d0)); nprot++;
    SEXP a = PROTECT(duplicate(alpha0)); nprot++;
    mk_sf_work w;
    mk_sf_init(&w, REAL(K), n, M, yp, Cv, &o);
    mk_sf_hist h;
    mk_sf_hist_init(&h, o.maxiter > INT_MAX - 2 ? INT_MAX : o.maxiter + 2, M);
    double b = 0.0, J = 0.0, rg = 0.0;
    int iter = 0, reason = 0, conv = 0;
    switch (method) {
    case 0: conv = mk_simplemkl(&w, &o, REAL(d), REAL(a), &b, &h, &J, &rg, &iter, &reason); break;
    case 1: conv = mk_hessianmkl(&w, &o, REAL(d), REAL(a), &b, &h, &J, &rg, &iter, &reason); break;
    default: conv = mk_lpmkl(&w, &o, REAL(d), REAL(a), &b, &h, &J, &rg, &iter, &reason); break;
    }

    SEXP hist = PROTECT(allocMatrix(REALSXP, h.len, MK_SF_HCOLS)); nprot++;
    for (int c = 0; c < MK_SF_HCOLS; c++)
        for (int r = 0; r < h.len; r++)
            REAL(hist)[r + (size_t) c * h.len] = h.tab[r + (size_t) c * h.cap];
    SEXP wp = PROTECT(allocMatrix(REALSXP, h.len, M)); nprot++;
    for (int m = 0; m < M; m++)
        for (int r = 0; r < h.len; r++)
            REAL(wp)[r + (size_t) m * h.len] = h.wpath[r + (size_t) m * h.cap];
    SEXP times = PROTECT(allocVector(REALSXP, 4)); nprot++;
    REAL(times)[0] = mk_time() - w.t0; REAL(times)[1] = w.t_svm;
    REAL(times)[2] = w.t_grad; REAL(times)[3] = w.t_dir;
    SEXP counts = PROTECT(allocVector(REALSXP, 5)); nprot++;
    REAL(counts)[0] = w.svm_solves; REAL(counts)[1] = w.grad_evals;
    REAL(counts)[2] = w.hess_evals; REAL(counts)[3] = w.svm_fail; REAL(counts)[4] = w.smo_iter;

    const char *nm[] = { "weights", "alpha", "b", "objective", "gap", "iterations",
                         "converged", "reason", "history", "weights_path", "counts", "times" };
    SEXP val[12];
    val[0] = d; val[1] = a;
    val[2] = PROTECT(ScalarReal(b)); nprot++;
    val[3] = PROTECT(ScalarReal(J)); nprot++;
    val[4] = PROTECT(ScalarReal(rg)); nprot++;
    val[5] = PROTECT(ScalarInteger(iter)); nprot++;
    val[6] = PROTECT(ScalarLogical(conv)); nprot++;
    val[7] = PROTECT(ScalarInteger(reason)); nprot++;
    val[8] = hist; val[9] = wp; val[10] = counts; val[11] = times;
    SEXP out = named_list(12, nm, val);
    UNPROTECT(nprot);
    return out;
}

SEXP mkc_simple(SEXP K, SEXP y, SEXP C, SEXP d0, SEXP alpha0, SEXP dpar, SEXP ipar)
{
    return mk_sf_call(0, K, y, C, d0, alpha0, dpar, ipar);
}
