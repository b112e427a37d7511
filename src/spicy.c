/* SpicyMKL (Suzuki & Tomioka 2009): dual augmented Lagrangian / proximal minimisation for
 * block 1-norm and elastic-net multiple kernel learning.
 *
 * Problem (P):  minimise_{alpha, b}  sum_i loss(y_i, z_i) + sum_m psi(||alpha_m||_{K_m}),
 *               z = sum_m K_m alpha_m + b 1,   psi(x) = C1 x + (C2 / 2) x^2.
 * Block 1-norm: C1 = C, C2 = 0. Elastic net: C1 = C (1 - lambda), C2 = C lambda.
 *
 * Outer loop (proximal point):  rho = argmin phi_gamma(rho; alpha, b, aux), then
 *   alpha_m <- prox(alpha_m + gamma rho),  b <- b + gamma_b sum(rho),  aux <- multiplier update.
 * Inner loop: Newton with Armijo backtracking on phi_gamma; only kernels that can be active on the
 * current line segment enter gradient, Hessian and line search (Remark 1 / Sec. 3.4). Kernels whose
 * coefficient block is zero are screened without reading K_m: from a reference point r (with
 * K_m r, K_m 1 and ||r||_{K_m} stored, O(MN) memory), rho' is split into a part along 1 and r
 * and a remainder w orthogonal to both; ||rho'||^2_{K_m} is exact but for w'K_m w, bounded by
 * lambda_max(P K_m P) ||w||^2, with lambda_max(PKP) bounded by min(tr, Frobenius, Gershgorin)
 * computed in the first sweep (mk_kbound, kstats.c). A test in O(1) per kernel from a shared
 * anchor point
 * comes first, and along a Newton segment the bound costs O(1) per kernel and step length once
 * its dots with rho and D are known. ||.||_{K_m} is convex, so a kernel certified below C1 at
 * both ends of a Newton segment is inactive along the whole segment and is not read at all.
 * Lazy screening: kernels
 * outside S are tested on [rho, rho + c D] only for the step c that passes the Armijo test with
 * the kernels of S (a lower bound of phi), and those that fail join S before the test is
 * repeated at the same c; kernels of S found inactive at rho leave S with their exact K_m rho.
 * The Newton matrix sums c_m K_m + c'_m w_m w_m' over active kernels, four kernels per pass over
 * a cache-resident panel of H, threads on column ranges of equal triangle area. With the CG solve
 * from MK_TRI_MIN rows it is kept in single precision (mk_symmat: packed triangle, diagonal and
 * bias term in double): its CG products read a quarter of the bytes of the double n x n array,
 * while gradient, line search and gap stay exact; the model rounds' CG products are done in
 * single-precision arithmetic too.
 *
 * Loss-conjugate parts of phi (rho_i = -d loss / d z_i at the optimum):
 *  squared  loss (y - z)^2 / 2:  rho^2 / 2 - y rho
 *  logistic loss log(1 + exp(-y z)):  t log t + (1 - t) log(1 - t),  t = y rho in (0, 1)
 *  hinge: -y rho + max(0, xi - g (1 - y rho))^2 / (2 g) + max(0, zeta - g y rho)^2 / (2 g)
 *         (slack variables xi, zeta of Sec. 3.3, Eqs. 10-12; g = gamma, or slack_ratio gamma
 *         with the CG solve: softer walls, fewer Newton steps cut by them)
 *  epsilon-insensitive: a slack copy s of the fitted values (constraint s = K alpha + b, multiplier
 *         rho) with its own proximal term ||s - s_t||^2 / (2 g); the term of phi is
 *         -min_s [ loss(s) + rho s + (s - s_t)^2 / (2 g) ], whose gradient is -prox(s_t - g rho) and
 *         whose Hessian is g * prox'(.) in {0, g}; s is updated to the prox like xi, zeta above.
 *         This g has its own schedule (start <= 10, multiplied only after short Newton loops):
 *         the smoothed kink at rho = 0 has width 2 eps / g, and with g = gamma -> 1e8 Newton could
 *         no longer resolve it. A small Levenberg-Marquardt term keeps its Newton steps bounded.
 * Every loss-specific operation is one entry of the loss table sp_losses[] (below): adding a
 * loss is adding its functions and one entry.
 * Hinge with the CG solve: the Newton direction is refined on a model of phi that keeps the slack
 * pieces exact (sp_model_direction), so that coordinates crossing a kink do not cut the steps.
 * Inner tolerance: ||gradient|| <= max(itol, inner_rel (P - D) / n) sqrt(n) after the first
 * Newton step of a loop (itol sqrt(n) before it; itol = inner_tol), with the absolute gap P - D of
 * the last outer iteration or of the start (inexact proximal point; inner_rel tightened tenfold
 * after an outer iteration that did not reduce the gap). An outer iteration that took no Newton
 * step and did not reduce the gap tightens itol itself and steps gamma back (sp_run).
 * Newton safeguards: the Hessian is factored with a tiny ridge (Cholesky, or Jacobi-preconditioned
 * CG for n >= cg_threshold, which falls back to the preconditioned gradient when H has no
 * curvature along it, e.g. H = gamma_b 11' at a balanced hinge cold start); logistic systems
 * are diagonally equilibrated first; steps of the box-type dual variables are capped at 1 in
 * the max-norm, logistic steps are truncated per coordinate to stay inside 0 < y rho < 1; a step
 * that would more than double the kernel working set is halved first (trust region on the
 * working set).
 *
 * Stopping: relative duality gap (P - D) / P from a feasible dual point (Sec. 5.1 / spec): clip rho
 * into the loss's box, balance it so that sum(rho) = 0 by shrinking the heavier side, and (block
 * 1-norm) scale it into ||rho||_{K_m} <= C1. D <= P always (weak duality), so the gap is >= 0.
 * Elastic net: D = -f*(-u) - sum_m max(||u||_{K_m} - C1, 0)^2 / (2 C2), the better of u and of u
 * scaled into the C1-ball. Norms of kernels certified below C1 by the bound are not computed.
 * Hinge, block 1-norm, a gap just above tol (at most SP_SVM_GAP tol): a second dual point, the
 * SVM dual on sum_m d_m K_m with the current kernel weights (sp_svm_dual), and the better of the
 * two certifies.
 *
 * Code layout: small kernel sweeps; the loss table; the solver state; the phases (start, Newton
 * direction, step cap, screening, line search, proximal update, dual value and gap), each a
 * function over the state; the driver sp_run(); the .Call wrapper. Kernels are read only through
 * the kernel store (mk_store_kernel[_upper] / mk_store_col): pointers into the array for a dense
 * store, per-thread scratch filled on demand for an on-the-fly store.
 */
#define USE_FC_LEN_T
#include "mklearn.h"
/* no contraction into fused multiply-adds in the AVX versions (MK_CLONES): the iterates keep the
   rounding of the baseline build (with them, a hinge fit at gap 1e-10, n = 60, that converged
   with whole-column sweeps stalled at 2e-10; gaps near 1e-10 are at the rounding floor of the
   hinge fit, see test-spicy.R) */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize ("fp-contract=off")
#endif
#include <R_ext/BLAS.h>
#include <R_ext/Lapack.h>
#include <R_ext/Utils.h>
#include <math.h>
#include <float.h>
#include <string.h>
#ifndef FCONE
#define FCONE
#endif

/* Internal tuning constants (the R front end does not expose them). */
#define SP_STEP_CAP 1.0     /* max |Newton step| of the box-type dual variables */
#define SP_START_SCALE 1.0  /* cold start: rho0 scaled to max_m ||rho0||_{K_m} = C1 */
#define SP_GS_MAX 10.0      /* initial slack proximal parameter (losses with their own schedule) */
#define SP_GS_NEWTON 10     /* ... raised after inner loops of at most this many Newton steps */
#define SP_BUDGET 2.0       /* a Newton step may at most double the working set (else halved) */
#define SP_THR_EPS 1e-10    /* safety margin of the screening test */
#define SP_CG_MAXIT 100     /* CG iterations per Newton direction (truncated Newton) */
#define SP_ROUND_MAXIT 20   /* ... and per model round: a round needs a descent direction of the
                               model, not its minimiser (the exact line minimum follows) */
#define SP_BACKOFF_MAX 2    /* gamma steps back from a drift at most this many times a fit */
#define SP_ITOL_FLOOR 1e-6  /* ... and inner_tol tightens down to this fraction of itself */
#define SP_HOLD_MAX 2       /* gamma is held after at most this many unsolved inner loops in a row */
#define SP_FLOOR (64.0 * DBL_EPSILON) /* rounding allowance of the line search, relative to
                               |phi|: steps whose decrease phi cannot resolve are accepted */
#define SP_BLOCK_KAPPA 1.0  /* CG preconditioner: the free block is factored when nf^3 / 3 <=
                               kappa 2 n^2 flops, about ten products with H: R's reference dpotrf
                               runs at 2.3-2.8 GFlop/s here, a product with H (upper triangle,
                               two threads) at about 20 */
#define SP_BLOCK_MIN 200    /* ... and always up to this size (a factor takes about 1 ms) */
#define SP_SVM_GAP 2.0      /* hinge: an SVM dual point is tried when tol < gap <= this x tol */
#define SP_SVM_TOL 1e-3     /* ... its SMO tolerance (any feasible point certifies) */
#define SP_SVM_ITER 20      /* ... and at most this many SMO iterations per observation */
#define SP_CACHE_DRIFT 0.1  /* Newton matrix cache: the kernel part is rebuilt when its weights
                               moved by more than this fraction of their sum */

#define SP_BOX_SNAP 1e-12  /* box: coordinates this close to a bound are put on it */
#define SP_BOX_INNER 1e-3  /* box: y rho in (SP_BOX_INNER, 1 - SP_BOX_INNER) counts as inside */
#define SP_BOX_LM 1e-6     /* box: ridge of the free block, relative to gamma and the gradient */
#define SP_BOX_MAXIT 20    /* box: rounds of the active-set loop */
#define SP_BOX_CGMAX 200   /* box: CG iterations of a round */
#define SP_BOX_CGTOL 1e-4  /* box: ... relative to |g| on the free set */
/* Products with the Newton matrix (CG solves and model rounds), and forming it, run on the
   solver's threads from SP_CG_PAR_MIN rows, below MK_PAR_WORK too: a product is short (0.1-0.3
   ms at n = 700-1000) but an OpenMP region costs microseconds, and the threads split the packed
   triangle. Ringnorm, 20 kernels (Fig. 4's draw), CG and model time of the fit on two threads
   against one: n = 700 -19%, n = 1000 -25%; n = 500 (the double triangle, 1 MB) no gain (0.026
   against 0.025 s). */
#define SP_CG_PAR_MIN 600

/* ------------------------------------------------------------------ losses */

/* One entry per loss (index = loss code of R/spicy.R). aux holds the loss's multipliers:
   hinge xi[0..n-1], zeta[n..2n-1]; epsilon-insensitive s[0..n-1]; nothing for the others. */
typedef struct {
    const char *name;
    int binary;       /* labels in {-1, +1} */
    double rho0;      /* cold start: rho = rho0 * y, then projected onto the dual box */
    int equilibrate;  /* diagonal equilibration of the Newton matrix before Cholesky */
    double lm;        /* Levenberg-Marquardt weight (0: none), relative to the slack gamma */
    int own_gamma;    /* the slack proximal parameter follows its own schedule (not gamma) */
    int pieces;       /* the loss part of phi is piecewise quadratic in each coordinate, with its
                         Hessian diagonal constant on each piece (the model direction) */
    /* sum_i loss(y_i, z_i) */
    double (*value)(int n, const double *y, const double *z, double eps);
    /* loss part of phi at rho (+Inf outside its domain); grad / diagonal hess if not NULL */
    double (*phi)(int n, const double *y, const double *rho, const double *aux, double g,
                  double eps, double *grad, double *hess);
    /* multipliers consistent with the fitted values z at a cold start (NULL: none) */
    void (*aux_start)(int n, const double *y, const double *z, double *aux);
    /* multiplier update at the inner solution (NULL: none) */
    void (*aux_update)(int n, const double *y, const double *rho, double *aux, double g,
                       double eps);
    /* -f*(-u) for a feasible u */
    double (*neg_conj)(int n, const double *y, const double *u, double eps);
    /* make u feasible: the loss's box and sum(u) = 0 (in place) */
    void (*project)(int n, const double *y, double *u);
    /* move rho strictly inside an open domain (NULL: closed domain) */
    void (*interior)(int n, const double *y, double *rho);
    /* cap the Newton step D at rho (g: gradient, tmp: n scratch); NULL: no cap */
    void (*cap)(int n, const double *y, const double *rho, const double *g, double *D,
                double *tmp);
} sp_loss;

/* hinge */
static double hinge_value(int n, const double *y, const double *z, double eps)
{
    (void) eps;
    double s = 0.0;
    for (int i = 0; i < n; i++) { double v = 1.0 - y[i] * z[i]; s += v > 0.0 ? v : 0.0; }
    return s;
}

static double hinge_phi(int n, const double *y, const double *rho, const double *aux, double g,
                        double eps, double *grad, double *hess)
{
    (void) eps;
    double s = 0.0;
    for (int i = 0; i < n; i++) {
        double t = y[i] * rho[i];
        double p = aux[i] - g * (1.0 - t), q = aux[n + i] - g * t;
        s += -t;
        if (p > 0.0) s += p * p / (2.0 * g); else p = 0.0;
        if (q > 0.0) s += q * q / (2.0 * g); else q = 0.0;
        if (grad) grad[i] = y[i] * (p - q - 1.0);
        if (hess) hess[i] = (p > 0.0 ? g : 0.0) + (q > 0.0 ? g : 0.0);
    }
    return s;
}

static void hinge_aux_start(int n, const double *y, const double *z, double *aux)
{
    for (int i = 0; i < n; i++) {
        double v = 1.0 - y[i] * z[i];
        aux[i] = v > 0.0 ? v : 0.0;
        aux[n + i] = v < 0.0 ? -v : 0.0;
    }
}

static void hinge_aux_update(int n, const double *y, const double *rho, double *aux, double g,
                             double eps)
{
    (void) eps;
    for (int i = 0; i < n; i++) {
        double t = y[i] * rho[i];
        double p = aux[i] - g * (1.0 - t), q = aux[n + i] - g * t;
        aux[i] = p > 0.0 ? p : 0.0;
        aux[n + i] = q > 0.0 ? q : 0.0;
    }
}

static double hinge_neg_conj(int n, const double *y, const double *u, double eps)
{
    (void) eps;
    double s = 0.0;
    for (int i = 0; i < n; i++) s += y[i] * u[i];
    return s;
}

/* logistic */
static double logistic_value(int n, const double *y, const double *z, double eps)
{
    (void) eps;
    double s = 0.0;
    for (int i = 0; i < n; i++) {
        double v = -y[i] * z[i];
        s += (v > 0.0 ? v : 0.0) + log1p(exp(-fabs(v)));
    }
    return s;
}

static double logistic_phi(int n, const double *y, const double *rho, const double *aux,
                           double g, double eps, double *grad, double *hess)
{
    (void) aux; (void) g; (void) eps;
    double s = 0.0;
    for (int i = 0; i < n; i++) {
        double t = y[i] * rho[i];
        if (!(t > 0.0 && t < 1.0)) return R_PosInf;
        s += t * log(t) + (1.0 - t) * log1p(-t);
        if (grad) grad[i] = y[i] * (log(t) - log1p(-t));
        if (hess) hess[i] = 1.0 / (t * (1.0 - t));
    }
    return s;
}

/* 0 log 0 = 0 */
static double logistic_neg_conj(int n, const double *y, const double *u, double eps)
{
    (void) eps;
    double s = 0.0;
    for (int i = 0; i < n; i++) {
        double t = y[i] * u[i];
        if (t > 0.0) s -= t * log(t);
        if (t < 1.0) s -= (1.0 - t) * log1p(-t);
    }
    return s;
}

static void logistic_interior(int n, const double *y, double *rho)
{
    for (int i = 0; i < n; i++) {
        double t = y[i] * rho[i];
        if (!(t > 1e-8)) t = 1e-8;
        if (!(t < 1.0 - 1e-8)) t = 1.0 - 1e-8;
        rho[i] = y[i] * t;
    }
}

/* Stay strictly inside 0 < y rho < 1. Coordinates close to the boundary (well-classified
   points, t ~ 1e-10) would otherwise shrink the whole step to nothing once gamma is large:
   truncate their own steps to 99.5% of the way to the boundary, and scale the whole step only
   if that truncated direction is not a descent direction. */
static void logistic_cap(int n, const double *y, const double *rho, const double *g, double *D,
                         double *tmp)
{
    double dmax = 0.0;
    for (int i = 0; i < n; i++) if (fabs(D[i]) > dmax) dmax = fabs(D[i]);
    double c = 1.0, gt = 0.0;
    for (int i = 0; i < n; i++) {
        double t = y[i] * rho[i], dt = y[i] * D[i];
        if (dt > 0.0 && t + dt >= 1.0) dt = 0.995 * (1.0 - t);
        if (dt < 0.0 && t + dt <= 0.0) dt = -0.995 * t;
        tmp[i] = y[i] * dt;
        gt += g[i] * tmp[i];
    }
    if (gt < 0.0) {
        memcpy(D, tmp, sizeof(double) * n);
        dmax = 0.0;
        for (int i = 0; i < n; i++) if (fabs(D[i]) > dmax) dmax = fabs(D[i]);
    } else {
        for (int i = 0; i < n; i++) {
            double t = y[i] * rho[i], dt = y[i] * D[i];
            if (dt > 0.0 && t + dt >= 1.0) { double cc = 0.995 * (1.0 - t) / dt; if (cc < c) c = cc; }
            if (dt < 0.0 && t + dt <= 0.0) { double cc = 0.995 * t / (-dt); if (cc < c) c = cc; }
        }
    }
    double cap = c * dmax;
    if (dmax > cap) for (int i = 0; i < n; i++) D[i] *= cap / dmax;
}

/* squared */
static double squared_value(int n, const double *y, const double *z, double eps)
{
    (void) eps;
    double s = 0.0;
    for (int i = 0; i < n; i++) { double v = y[i] - z[i]; s += 0.5 * v * v; }
    return s;
}

static double squared_phi(int n, const double *y, const double *rho, const double *aux,
                          double g, double eps, double *grad, double *hess)
{
    (void) aux; (void) g; (void) eps;
    double s = 0.0;
    for (int i = 0; i < n; i++) {
        double r = rho[i];
        s += 0.5 * r * r - y[i] * r;
        if (grad) grad[i] = r - y[i];
        if (hess) hess[i] = 1.0;
    }
    return s;
}

static double squared_neg_conj(int n, const double *y, const double *u, double eps)
{
    (void) eps;
    double s = 0.0;
    for (int i = 0; i < n; i++) s += y[i] * u[i] - 0.5 * u[i] * u[i];
    return s;
}

/* the squared loss has no box: only sum(u) = 0 */
static void squared_project(int n, const double *y, double *u)
{
    (void) y;
    double m = 0.0;
    for (int i = 0; i < n; i++) m += u[i];
    m /= n;
    for (int i = 0; i < n; i++) u[i] -= m;
}

/* epsilon-insensitive */
static double epsilon_value(int n, const double *y, const double *z, double eps)
{
    double s = 0.0;
    for (int i = 0; i < n; i++) { double v = fabs(y[i] - z[i]) - eps; s += v > 0.0 ? v : 0.0; }
    return s;
}

/* prox of g * max(|s - y| - eps, 0) at w; *d = derivative (0 or 1). */
static double sp_prox_eps(double w, double y, double eps, double g, double *d)
{
    double r = w - y, ar = fabs(r), sg = r >= 0.0 ? 1.0 : -1.0;
    if (ar <= eps) { *d = 1.0; return w; }
    if (ar <= eps + g) { *d = 0.0; return y + sg * eps; }
    *d = 1.0;
    return w - sg * g;
}

static double epsilon_phi(int n, const double *y, const double *rho, const double *aux,
                          double g, double eps, double *grad, double *hess)
{
    double s = 0.0;
    for (int i = 0; i < n; i++) {
        double r = rho[i], d, st = aux[i];
        double p = sp_prox_eps(st - g * r, y[i], eps, g, &d);
        double l = fabs(p - y[i]) - eps;
        if (l < 0.0) l = 0.0;
        s -= l + r * p + (p - st) * (p - st) / (2.0 * g);
        if (grad) grad[i] = -p;
        if (hess) hess[i] = g * d;
    }
    return s;
}

static void epsilon_aux_start(int n, const double *y, const double *z, double *aux)
{
    (void) y;
    for (int i = 0; i < n; i++) aux[i] = z[i];
}

static void epsilon_aux_update(int n, const double *y, const double *rho, double *aux, double g,
                               double eps)
{
    for (int i = 0; i < n; i++) {
        double d;
        aux[i] = sp_prox_eps(aux[i] - g * rho[i], y[i], eps, g, &d);
    }
}

static double epsilon_neg_conj(int n, const double *y, const double *u, double eps)
{
    double s = 0.0;
    for (int i = 0; i < n; i++) s += y[i] * u[i] - eps * fabs(u[i]);
    return s;
}

/* shared by the box-type losses */

/* sum(u) = 0 by shrinking the heavier side */
static void sp_balance(int n, double *u)
{
    double P = 0.0, Q = 0.0;
    for (int i = 0; i < n; i++) { if (u[i] > 0.0) P += u[i]; else Q -= u[i]; }
    if (P > Q) {
        double f = P > 0.0 ? Q / P : 0.0;
        for (int i = 0; i < n; i++) if (u[i] > 0.0) u[i] *= f;
    } else if (Q > P) {
        double f = Q > 0.0 ? P / Q : 0.0;
        for (int i = 0; i < n; i++) if (u[i] < 0.0) u[i] *= f;
    }
}

/* 0 <= y u <= 1 (hinge, logistic) */
static void ybox_project(int n, const double *y, double *u)
{
    for (int i = 0; i < n; i++) {
        double t = y[i] * u[i];
        if (t < 0.0) t = 0.0;
        if (t > 1.0) t = 1.0;
        u[i] = y[i] * t;
    }
    sp_balance(n, u);
}

/* -1 <= u <= 1 (epsilon-insensitive) */
static void box1_project(int n, const double *y, double *u)
{
    (void) y;
    for (int i = 0; i < n; i++) {
        if (u[i] > 1.0) u[i] = 1.0;
        if (u[i] < -1.0) u[i] = -1.0;
    }
    sp_balance(n, u);
}

/* Box-type dual variables live on a scale of 1: a longer step only costs kernel sweeps in the
   screening and is cut by the line search. */
static void box_cap(int n, const double *y, const double *rho, const double *g, double *D,
                    double *tmp)
{
    (void) y; (void) rho; (void) g; (void) tmp;
    double dmax = 0.0, cap = SP_STEP_CAP;
    for (int i = 0; i < n; i++) if (fabs(D[i]) > dmax) dmax = fabs(D[i]);
    if (dmax > cap) for (int i = 0; i < n; i++) D[i] *= cap / dmax;
}

/* The loss table, indexed by the loss code (R/spicy.R: spicy_loss_codes).
   Levenberg-Marquardt: the piecewise-quadratic epsilon part has coordinates without curvature
   of their own between its kinks; a term that vanishes with the gradient keeps the Newton
   direction bounded there. The hinge runs without it (it hurt tight tolerances). */
static const sp_loss sp_losses[] = {
    /* name        binary rho0 equil lm    own_gamma pieces */
    { "hinge",     1,     0.5, 0,    0.0,  0,        1, hinge_value, hinge_phi,
      hinge_aux_start, hinge_aux_update, hinge_neg_conj, ybox_project, NULL, box_cap },
    { "logistic",  1,     0.5, 1,    0.0,  0,        0, logistic_value, logistic_phi, NULL,
      NULL, logistic_neg_conj, ybox_project, logistic_interior, logistic_cap },
    { "squared",   0,     1.0, 0,    0.0,  0,        0, squared_value, squared_phi, NULL,
      NULL, squared_neg_conj, squared_project, NULL, NULL },
    { "epsilon",   0,     1.0, 0,    0.01, 1,        0, epsilon_value, epsilon_phi,
      epsilon_aux_start, epsilon_aux_update, epsilon_neg_conj, box1_project, NULL, box_cap },
};
#define SP_NLOSS ((int) (sizeof(sp_losses) / sizeof(sp_losses[0])))

/* ------------------------------------------------------------------ solver state */

typedef struct {
    double C1, C2, eps;                 /* penalty psi(x) = C1 x + C2 x^2 / 2; epsilon of the loss */
    double tol, inner_tol, gamma_mult, gamma_max;
    int maxiter, inner_maxiter, nthreads, verbose, cg, cg_threshold, screen, lazy;
    int cache;                          /* Newton matrix cache: 1 on, 0 off, -1 with CG */
    int model_rounds;                   /* rounds of the model direction (0: none) */
    int deflate;                        /* ... their CG solves deflated by this many directions */
    int single;                         /* Newton matrix in single precision (CG, n >= 512) */
    double slack_ratio;                 /* hinge with CG: slack parameter = slack_ratio gamma */
    double inner_rel;                   /* inner tolerance relative to the last gap (0: none) */
    double box_fraction;                /* hinge with CG: the box once at most this share of rho
                                           is inside it (sp_box_switch; 0: never) */
    int svm_dual;                       /* hinge: SVM dual points near tol (sp_svm_dual) */
    mk_progress *prog;
} sp_opts;

typedef struct {
    double primal, dual, gap, sumnorm;
    int iter, status, n_active, newton, cgit, cgblock, ls_fail, rejected, floor, rebuilds,
        model, deflated, single, svm, svm_won, backoff, box, boxleft;
    long nprod;
} sp_result;

typedef struct {
    /* problem */
    const mk_store *st;
    int n, M;
    const double *y;
    const sp_loss *L;
    const sp_opts *o;
    double C1, C2, eps;
    /* threads and kernel scratch: kbuf holds nt_max blocks of scr doubles (one per thread),
       hbuf nt_max blocks of 4 scr (the four kernels of a Hessian pass); NULL for a dense store */
    int nt_max;
    size_t scr;
    double *kbuf, *hbuf, *rsbuf;
    double *qt;    /* CG: nt_max blocks of n doubles (the threads' parts of a product with H) */
    /* iterate (owned by the caller): alpha n x M, b, rho n, aux 2n */
    double *alpha, *b, *rho, *aux;
    double gamma, gammab;   /* proximal parameters of the kernels and of the bias */
    double gam_s, gsl;      /* own schedule of the slack parameter; the one in use */
    double slack;           /* slack parameter / gamma (losses without their own schedule) */
    double irel, absgap;    /* inner tolerance relative to the last absolute gap (0: unknown) */
    double gcap;            /* cap of gamma and gamma_b: gamma_max, or lower after a drift */
    double itol;            /* the inner loop's absolute tolerance (inner_tol, or tighter) */
    int warm;
    /* per kernel */
    int *inS;      /* kernel in the working set S (exact products maintained) */
    int *anz;      /* alpha_m != 0 */
    double *Ka;    /* n x M: K_m alpha_m     (valid for m in S) */
    double *Kr;    /* n x M: K_m rho         (valid for m in S) */
    double *KD;    /* n x M: K_m Delta       (scratch for m in S) */
    double *REF;   /* n x M: reference points for the screening bound */
    double *nref;  /* ||REF_m||_{K_m}; for m outside S, Kr holds K_m REF_m */
    double *rmean, *rc2, *rt;   /* mean(REF_m), ||REF_m - mean||^2, 1'K_m REF_m */
    double *K1;    /* n x M: K_m 1 (column sums, from the first sweep) */
    double *sqL;   /* sqrt(lambda_max) bound on the centred subspace (mk_kernel_stats) */
    double *s1;    /* sqrt(1'K_m 1) */
    double *anorm; /* ||alpha_m||_{K_m} */
    double *r;     /* ||alpha_m + gamma rho||_{K_m} at the current rho (m in S) */
    double *sm;    /* ||u||_{K_m} of the dual point (-1: certified <= C1) */
    double *Bq, *Dq, *ubv;   /* line search coefficients; screening bounds */
    double *xa, *ua;  /* anchor point and, per kernel, an upper bound of ||xa||_{K_m} (Inf: none) */
    double *cf;       /* 6 x M: x'r, x'k1, x'Kr for x = rho and x = D0 (segment of a Newton step) */
    int *cfid, segid; /* segment for which cf[, m] holds; the current segment */
    double dsc;       /* D = dsc D0 (the trust region halves D) */
    int *list, *flag; /* scratch lists for threaded products */
    int *stamp;    /* Newton step at which m left S */
    int stepid;
    /* Newton step */
    double *g, *hl, *D, *tmp, *z, *u, *H, *work, *hc1, *hc2;
    /* the Newton matrix as the solves see it (H, or its single-precision form with nt_max
       panels of SP_PANEL x n doubles to sum its columns in) */
    mk_symmat nm;
    double *hpan;
    /* cached kernel part of the Newton matrix, G = sum_m gc1[m] K_m (upper triangle; NULL: no
       cache), rebuilt when the weights drift (SP_CACHE_DRIFT); zn, zM: n and M zeros (the kernel
       part alone is built with hl = 0 and hc2 = 0) */
    double *G, *gc1, *zn, *zM;
    int gvalid, grefresh;
    /* model direction (sp_model_direction): 12 n doubles of scratch (NULL: not used); rounds
       taken */
    double *mw;
    int nmodel;
    /* SVM dual points (sp_svm_dual): the combined kernel (n x n), alpha, gradient and dual point
       (3n), the kernels' weights (M); tried, and certifying better than the projected rho */
    double *Kd, *sva, *svw;
    int nsvm, nsvm_won;
    int *act, na, cnt, use_cg, nhold;
    mk_pcblock fb;
    mk_defl df;
    double phi0, gnorm, gd, sr, thr, den;
    /* counters and results */
    long nprod;    /* kernel sweeps performed (products and quadratic forms) */
    int newton_total, cgit, ls_fail, nrejected, nactive, nfloor, nbackoff;
    double primal, dual, gap, sumnorm;
    double t0, tq, tm[9];   /* section timers, reported when verbose */
    /* hinge in the box (sp_box_direction): rho stays in 0 <= y rho <= 1, no slack variables.
       box: in the box now; boxok: the fit may (still) switch to it; boxfrom, boxleft: the
       outer iterations it started and was left (0: not yet); itcur: the current one. bxi: the
       step's free coordinates (bxnf of them, sp_box_free); bxc: their states; bxs: those not
       held; bxH: the free block of H (bxcap doubles); bxF: 7 n scratch; bxd: n; nzr, vzr, nzd,
       vzd: the nonzeros of rho and D for the products by columns */
    int box, boxok, boxfrom, boxleft, itcur, bxnf, *bxi, *bxc, *bxs, *nzr, *nzd, nnzr, nnzd;
    double *bxH, *bxF, *bxd, *vzr, *vzd;
    size_t bxcap;
    long bxclip, bxfree, bxfail, bxround;
} sp_state;

/* this thread's block of a per-thread scratch array (NULL for a dense store) */
static double *sp_thread_buf(double *base, size_t per)
{
    if (!base || per == 0) return NULL;
#ifdef _OPENMP
    return base + (size_t) omp_get_thread_num() * per;
#else
    return base;
#endif
}

static void sp_tick(sp_state *S, int j)
{
    double t = mk_time();
    S->tm[j] += t - S->tq;
    S->tq = t;
}

/* threads for a region of 'work' multiply-adds (at most nt_max, the size of the scratch) */
static int sp_threads(const sp_state *S, double work)
{
    int nt = mk_threads_for(S->o->nthreads, work);
    return nt < S->nt_max ? nt : S->nt_max;
}

/* threads of a pass over the Newton matrix (its products, and forming it from na kernels): from
   SP_CG_PAR_MIN rows always the solver's threads */
static int sp_nm_threads(const sp_state *S, double work)
{
    if (S->n >= SP_CG_PAR_MIN && work < MK_PAR_WORK) work = MK_PAR_WORK;
    return sp_threads(S, work);
}

/* kernel m for the sweeps above: its upper triangle suffices from MK_TRI_MIN rows (an
   on-the-fly store then computes only that) */
static const double *sp_kernel(const sp_state *S, int m)
{
    double *buf = sp_thread_buf(S->kbuf, S->scr);
    return S->n >= MK_TRI_MIN ? mk_store_kernel_upper(S->st, m, buf)
                              : mk_store_kernel(S->st, m, buf);
}

static double sp_sqrt0(double q)
{
    return q > 0.0 ? sqrt(q) : 0.0;
}

/* the reference point of kernel m becomes v, whose K_m v is in Kr; vm, vc2: mean of v and
   squared norm of the centred v (mk_centred). Plain C: safe in OpenMP regions. */
static void sp_set_ref_c(sp_state *S, int m, const double *v, double vm, double vc2)
{
    int n = S->n;
    const double *kr = S->Kr + (size_t) m * n;
    double t = 0.0;
    for (int i = 0; i < n; i++) t += kr[i];
    S->nref[m] = sp_sqrt0(mk_dot(n, v, kr));
    S->rt[m] = t;
    S->cfid[m] = -1;
    S->rmean[m] = vm; S->rc2[m] = vc2;
    memcpy(S->REF + (size_t) m * n, v, sizeof(double) * n);
}

static void sp_set_ref(sp_state *S, int m, const double *v)
{
    double vm, vc2;
    mk_centred(S->n, v, &vm, &vc2);
    sp_set_ref_c(S, m, v, vm, vc2);
}

/* the screening reference of kernel m (outside S) */
static mk_kref sp_kref(const sp_state *S, int m)
{
    size_t o = (size_t) m * S->n;
    mk_kref R = { S->REF + o, S->Kr + o, S->K1 + o, S->nref[m], S->rmean[m], S->rc2[m],
                  S->rt[m], S->s1[m] * S->s1[m], S->sqL[m] };
    return R;
}

/* screening bound of kernel m (outside S) at x (mean mx, centred squared norm xc2) */
static double sp_bound(const sp_state *S, int m, const double *x, double mx, double xc2)
{
    mk_kref R = sp_kref(S, m);
    return mk_kbound(S->n, x, mx, xc2, &R);
}

/* Screening bounds at x of every kernel outside S into ub[] (0 for the kernels of S); returns how
   many exceed lim. A test in O(1) per kernel comes first: with e = x - xa (xa the anchor point),
   ||x||_{K_m} <= ua[m] + |mean(e)| s1 + lc ||e - mean(e)||, and a kernel this certifies needs no
   bound from its reference point (O(n)). reset: when more than an eighth of the kernels needed
   that bound, x becomes the anchor (the bounds of all are computed). */
/* bound of kernel m (outside S) at rho + ce D0 from its segment dots (computed on first use) */
static double sp_seg_bound(sp_state *S, int m, double ce, double mx, double xc2)
{
    double *cf = S->cf + 6 * (size_t) m;
    mk_kref R = sp_kref(S, m);
    if (S->cfid[m] != S->segid) {
        mk_kref_dots2(S->n, S->rho, S->D, &R, cf);
        cf[3] = cf[3] / S->dsc; cf[4] = cf[4] / S->dsc; cf[5] = cf[5] / S->dsc;
        S->cfid[m] = S->segid;
    }
    return mk_kbound_dots(S->n, mx, xc2, cf[0] + ce * cf[3], cf[1] + ce * cf[4],
                          cf[2] + ce * cf[5], &R);
}

/* c >= 0: x = rho + c D, and the bounds come from the segment dots (O(1) per kernel) */
static int sp_bounds_all(sp_state *S, const double *x, double *ub, double lim, int reset, double c)
{
    double ce = c * S->dsc;
    int n = S->n, M = S->M;
    double mu = 0.0, ss = 0.0;
    for (int i = 0; i < n; i++) mu += x[i] - S->xa[i];
    mu /= n;
    for (int i = 0; i < n; i++) { double d = x[i] - S->xa[i] - mu; ss += d * d; }
    double amu = fabs(mu), w = sqrt(ss), mx, xc2;
    mk_centred(n, x, &mx, &xc2);
    int nfull = 0, nover = 0;
    int nt = sp_threads(S, 3.0 * M * n);
    (void) nt;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static) reduction(+:nfull, nover) if (nt > 1)
#endif
    for (int m = 0; m < M; m++) {
        if (S->inS[m]) { ub[m] = 0.0; continue; }
        double pre = S->ua[m] + amu * S->s1[m] + S->sqL[m] * w;
        if (pre * pre <= lim) { ub[m] = pre * pre; continue; }
        ub[m] = c >= 0.0 ? sp_seg_bound(S, m, ce, mx, xc2) : sp_bound(S, m, x, mx, xc2);
        nfull++;
        nover += ub[m] > lim;
    }
    if (reset && 8 * nfull > M) {
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
#endif
        for (int m = 0; m < M; m++) {
            if (S->inS[m]) { S->ua[m] = R_PosInf; continue; }
            double pre = S->ua[m] + amu * S->s1[m] + S->sqL[m] * w;
            if (pre * pre <= lim)
                ub[m] = c >= 0.0 ? sp_seg_bound(S, m, ce, mx, xc2) : sp_bound(S, m, x, mx, xc2);
            S->ua[m] = sqrt(ub[m]);
        }
        memcpy(S->xa, x, sizeof(double) * n);
    }
    return nover;
}

/* out = sum_k v[k] K_m[, idx[k]]: K_m x for a sparse x (n x nnz reads) */
MK_CLONES
static void sp_cols_mv(const sp_state *S, int m, const int *idx, const double *v, int nnz,
                       double *out, double *buf)
{
    int n = S->n, k = 0;
    for (int i = 0; i < n; i++) out[i] = 0.0;
    if (S->st->kind == MK_STORE_DENSE)
        for (; k + 2 <= nnz; k += 2) {
            const double *c0 = mk_store_col(S->st, m, idx[k], buf),
                *c1 = mk_store_col(S->st, m, idx[k + 1], buf);
            double v0 = v[k], v1 = v[k + 1];
            MK_SIMD
            for (int i = 0; i < n; i++) out[i] += v0 * c0[i] + v1 * c1[i];
        }
    for (; k < nnz; k++) {
        const double *c0 = mk_store_col(S->st, m, idx[k], buf);
        double v0 = v[k];
        MK_SIMD
        for (int i = 0; i < n; i++) out[i] += v0 * c0[i];
    }
}

/* the nonzeros of x into idx, v; returns their number */
static int sp_nz(int n, const double *x, int *idx, double *v)
{
    int k = 0;
    for (int i = 0; i < n; i++) if (x[i] != 0.0) { idx[k] = i; v[k] = x[i]; k++; }
    return k;
}

/* Kernel products for list[0..cnt-1]; flag[j] = 1: Kr and KD (fused), 0: KD only, 2: Kr only.
   In the box (S->box) rho and D are sparse and the products are sums of their columns. */
static void sp_products(sp_state *S, int cnt, const double *rho, const double *D)
{
    int n = S->n;
    if (S->box && cnt > 0) {
        S->nnzr = sp_nz(n, rho, S->nzr, S->vzr);
        S->nnzd = sp_nz(n, D, S->nzd, S->vzd);
    }
    int nt = cnt > 1 ? sp_threads(S, (double) cnt * n * n) : 1;
    (void) nt;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) if (nt > 1)
#endif
    for (int j = 0; j < cnt; j++) {
        int m = S->list[j];
        double *kr = S->Kr + (size_t) m * n, *kd = S->KD + (size_t) m * n;
        if (S->box) {
            /* rho and D are sparse in the box: sums of columns */
            double *buf = sp_thread_buf(S->kbuf, S->scr);
            if (S->flag[j] != 2) sp_cols_mv(S, m, S->nzd, S->vzd, S->nnzd, kd, buf);
            if (S->flag[j] != 0) sp_cols_mv(S, m, S->nzr, S->vzr, S->nnzr, kr, buf);
            continue;
        }
        const double *Km = sp_kernel(S, m);
        if (S->flag[j] == 1) mk_symv2(Km, n, rho, D, kr, kd);
        else if (S->flag[j] == 0) mk_symv2(Km, n, D, NULL, kd, NULL);
        else mk_symv2(Km, n, rho, NULL, kr, NULL);
    }
    S->nprod += cnt;
}

/* r_m = ||alpha_m + gamma rho||_{K_m} for m in S at the current rho */
static void sp_norms(sp_state *S)
{
    int n = S->n, M = S->M;
    double gamma = S->gamma;
    const double *rho = S->rho;
    int nt = sp_threads(S, 2.0 * M * n);
    (void) nt;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
#endif
    for (int m = 0; m < M; m++) {
        if (!S->inS[m]) continue;
        const double *ka = S->Ka + (size_t) m * n, *kr = S->Kr + (size_t) m * n;
        double r2 = gamma * gamma * mk_dot(n, rho, kr);
        if (S->anz[m]) r2 += S->anorm[m] * S->anorm[m] + 2.0 * gamma * mk_dot(n, rho, ka);
        S->r[m] = r2 > 0.0 ? sqrt(r2) : 0.0;
    }
}

/* ------------------------------------------------------------------ Newton system */

/* Columns j0 <= j < j1 of the upper triangle of
     H = gb 11' + diag(hl) + sum_a c1[a] K_{m_a} + c2[a] w_a w_a'   (w_a = KD column of m_a)
   into A (mk_symmat): H itself, or in single precision the part without gb 11' and diag(hl),
   rounded once per entry, and the whole diagonal in double. Kernels are taken four at a time, so
   that each H entry is loaded and stored once per four kernel entries, and the columns are cut
   into panels that stay in cache while every kernel streams through them (single precision:
   the panel is summed in pan, SP_PANEL x n doubles). Kernel columns come from the store (cb: 4
   blocks of scratch for an on-the-fly store, NULL for a dense one). Plain C: safe in OpenMP
   regions. */
#define SP_PANEL 48

/* column j of a single-precision Newton matrix from hj, its kernel part summed in double:
   rounded once into the packed triangle, the whole diagonal (with gb and hl) kept in double */
static inline void sp_nm_store_col(const mk_symmat *A, int j, const double *hj, double gb,
                                   const double *hl)
{
    float *pj = A->P + (size_t) j * (j + 1) / 2;
    MK_SIMD
    for (int i = 0; i <= j; i++) pj[i] = (float) hj[i];
    A->dg[j] = hj[j] + gb + hl[j];
}

MK_CLONES
static void sp_hess_cols(const sp_state *S, int na, const int *act, const double *c1,
                         const double *c2, double gb, const double *hl, const mk_symmat *A,
                         int j0, int j1, double *cb, double *pan)
{
    int n = S->n;
    const mk_store *st = S->st;
    size_t scr = S->scr;
    double *b0 = cb, *b1 = cb ? cb + scr : NULL, *b2 = cb ? cb + 2 * scr : NULL,
        *b3 = cb ? cb + 3 * scr : NULL;
    for (int jb = j0; jb < j1; jb += SP_PANEL) {
        int je = jb + SP_PANEL < j1 ? jb + SP_PANEL : j1;
        /* column j of the panel at hb + j n */
        double *hb = A->P ? pan - (size_t) jb * n : A->H;
        for (int j = jb; j < je; j++) {
            double *hj = hb + (size_t) j * n, h0 = A->P ? 0.0 : gb;
            for (int i = 0; i <= j; i++) hj[i] = h0;
            if (!A->P) hj[j] += hl[j];
        }
        int a = 0;
        for (; a + 4 <= na; a += 4) {
            int m0 = act[a], m1 = act[a + 1], m2 = act[a + 2], m3 = act[a + 3];
            const double *w0 = S->KD + (size_t) m0 * n, *w1 = S->KD + (size_t) m1 * n,
                *w2 = S->KD + (size_t) m2 * n, *w3 = S->KD + (size_t) m3 * n;
            double a0 = c1[a], a1 = c1[a + 1], a2 = c1[a + 2], a3 = c1[a + 3];
            for (int j = jb; j < je; j++) {
                double *hj = hb + (size_t) j * n;
                const double *p0 = mk_store_col(st, m0, j, b0), *p1 = mk_store_col(st, m1, j, b1),
                    *p2 = mk_store_col(st, m2, j, b2), *p3 = mk_store_col(st, m3, j, b3);
                double e0 = c2[a] * w0[j], e1 = c2[a + 1] * w1[j], e2 = c2[a + 2] * w2[j],
                    e3 = c2[a + 3] * w3[j];
                MK_SIMD
                for (int i = 0; i <= j; i++)
                    hj[i] += (a0 * p0[i] + e0 * w0[i]) + (a1 * p1[i] + e1 * w1[i]) +
                        (a2 * p2[i] + e2 * w2[i]) + (a3 * p3[i] + e3 * w3[i]);
            }
        }
        for (; a < na; a++) {
            int m0 = act[a];
            const double *w0 = S->KD + (size_t) m0 * n;
            double a0 = c1[a];
            for (int j = jb; j < je; j++) {
                double *hj = hb + (size_t) j * n;
                const double *p0 = mk_store_col(st, m0, j, b0);
                double e0 = c2[a] * w0[j];
                MK_SIMD
                for (int i = 0; i <= j; i++) hj[i] += a0 * p0[i] + e0 * w0[i];
            }
        }
        if (A->P)
            for (int j = jb; j < je; j++) sp_nm_store_col(A, j, hb + (size_t) j * n, gb, hl);
    }
}

/* The whole upper triangle; threads take column ranges of equal triangle area. */
static void sp_hessian(const sp_state *S, int na, const int *act, const double *c1,
                       const double *c2, double gb, const double *hl, const mk_symmat *A)
{
    int n = S->n;
    int nt = sp_nm_threads(S, (double) na * n * n);
    if (S->st->kind != MK_STORE_DENSE) {
        /* on the fly every column is computed here, which takes long: blocks of panels, with
           a user-interrupt check between blocks (outside the parallel regions) */
        const int panel = SP_PANEL, nb = (n + panel - 1) / panel, per = 2 * (nt > 0 ? nt : 1);
        double tlast = mk_time();
        for (int b0 = 0; b0 < nb; b0 += per) {
            int b1 = b0 + per < nb ? b0 + per : nb;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) if (nt > 1)
#endif
            for (int b = b0; b < b1; b++) {
                int j0 = b * panel, j1 = j0 + panel < n ? j0 + panel : n;
                sp_hess_cols(S, na, act, c1, c2, gb, hl, A, j0, j1,
                             sp_thread_buf(S->hbuf, 4 * S->scr),
                             sp_thread_buf(S->hpan, SP_PANEL * n));
            }
            mk_interrupt_every(&tlast, 0.02);
        }
        return;
    }
#ifdef _OPENMP
    if (nt > 1) {
#pragma omp parallel num_threads(nt)
        {
            int j0, j1;
            mk_tri_cols(n, omp_get_thread_num(), omp_get_num_threads(), &j0, &j1);
            if (j1 > j0)
                sp_hess_cols(S, na, act, c1, c2, gb, hl, A, j0, j1,
                             sp_thread_buf(S->hbuf, 4 * S->scr),
                             sp_thread_buf(S->hpan, SP_PANEL * n));
        }
        return;
    }
#endif
    (void) nt;
    sp_hess_cols(S, na, act, c1, c2, gb, hl, A, 0, n, S->hbuf, S->hpan);
}

/* H = G + gb 11' + diag(hl) + sum_a c2[a] w_a w_a' (upper triangles; w_a = KD column of
   m_a), from the cached kernel part G: one pass over the triangle. Plain C. */
MK_CLONES
static void sp_hess_lowrank_cols(const sp_state *S, const double *G, int na, const int *act,
                                 const double *c2, double gb, const double *hl, const mk_symmat *A,
                                 int j0, int j1, double *col)
{
    int n = S->n;
    for (int j = j0; j < j1; j++) {
        const double *gj = G + (size_t) j * n;
        double *hj = A->P ? col : A->H + (size_t) j * n, h0 = A->P ? 0.0 : gb;
        MK_SIMD
        for (int i = 0; i <= j; i++) hj[i] = gj[i] + h0;
        if (!A->P) hj[j] += hl[j];
        for (int a = 0; a < na; a++) {
            const double *w = S->KD + (size_t) act[a] * n;
            double e = c2[a] * w[j];
            if (e == 0.0) continue;
            MK_SIMD
            for (int i = 0; i <= j; i++) hj[i] += e * w[i];
        }
        if (A->P) sp_nm_store_col(A, j, hj, gb, hl);
    }
}

static void sp_hess_lowrank(const sp_state *S, const double *G, int na, const int *act,
                            const double *c2, double gb, const double *hl, const mk_symmat *A)
{
    int n = S->n;
    int nt = sp_nm_threads(S, (double) (na + 1) * n * n / 2);
#ifdef _OPENMP
    if (nt > 1) {
#pragma omp parallel num_threads(nt)
        {
            int j0, j1;
            mk_tri_cols(n, omp_get_thread_num(), omp_get_num_threads(), &j0, &j1);
            if (j1 > j0)
                sp_hess_lowrank_cols(S, G, na, act, c2, gb, hl, A, j0, j1,
                                     sp_thread_buf(S->hpan, SP_PANEL * n));
        }
        return;
    }
#endif
    (void) nt;
    sp_hess_lowrank_cols(S, G, na, act, c2, gb, hl, A, 0, n, S->hpan);
}

/* ------------------------------------------------------------------ Newton solve */

/* Solve H d = -g. H is n x n (upper triangle filled); work: n*n + 5n doubles (Cholesky), 5n
   (CG). cg: 0 Cholesky, 1 CG (mk_cg_solve) preconditioned by the diagonal and the free block B
   (coordinates with hl = 0); its products with H run on nt threads (qt: nt * n doubles). Df
   (kmax = 0: none): the deflation directions, recorded by this solve and deflating it unless
   Df->rec, which starts a new set. CG stops after cgmax iterations (and 2n) at the latest. Returns 0 on
   success. */
static int sp_solve(const mk_symmat *A, int n, const double *g, double *d, double *work, int cg,
                    int equil, double gnorm, int *cgit, mk_pcblock *B, const double *hl, int nt,
                    double *qt, mk_defl *Df, int cgmax)
{
    int info = 0;
    const int one = 1;
    const double *H = A->H;
    if (!cg) {
        /* logistic: symmetric diagonal equilibration (its conjugate makes the diagonal range over
           many orders of magnitude near the boundary). Other losses: no scaling, a ridge relative
           to the largest diagonal entry (their Hessians are singular along the coordinates
           between the kinks, where the ridge bounds the Newton step). */
        double *F = work, *sc = work + (size_t) n * n;
        double dmax = 0.0;
        for (int i = 0; i < n; i++) {
            double h = H[(size_t) i * n + i];
            sc[i] = (equil && h > 0.0) ? 1.0 / sqrt(h) : 1.0;
            if (h > dmax) dmax = h;
        }
        double mu = equil ? 1e-13 : 1e-13 * (dmax > 0.0 ? dmax : 1.0);
        for (int attempt = 0; attempt < 8; attempt++) {
            for (int j = 0; j < n; j++) {
                const double *hj = H + (size_t) j * n;
                double *fj = F + (size_t) j * n;
                for (int i = 0; i <= j; i++) fj[i] = hj[i] * sc[i] * sc[j];
                fj[j] += mu;
            }
            F77_CALL(dpotrf)("U", &n, F, &n, &info FCONE);
            if (info == 0) break;
            mu *= 100.0;
        }
        if (info != 0) return info;
        for (int i = 0; i < n; i++) d[i] = -g[i] * sc[i];
        F77_CALL(dpotrs)("U", &n, &one, F, &n, d, &n, &info FCONE);
        for (int i = 0; i < n; i++) d[i] *= sc[i];
        return info;
    }
    /* PCG on the explicit H, Jacobi and free-block preconditioner, deflated by Df */
    double *r = work, *pre = work + 4 * n;
    mk_pcblock_prepare(B, n, hl, mk_symmat_entry, A);
    for (int i = 0; i < n; i++) {
        double h = mk_symmat_diag(A, i);
        pre[i] = h > 0.0 ? 1.0 / h : 1.0;
        d[i] = 0.0; r[i] = -g[i];
    }
    B->pre = pre;
    double eta = gnorm < 0.25 ? sqrt(gnorm) : 0.5;
    if (eta > 1e-2) eta = 1e-2;
    /* take_first: no curvature along the first direction (hinge cold start with balanced
       classes: H = gamma_b 11' and 1'g = 0); that direction is taken, and the step cap and the
       line search scale it, as the ridge does in the Cholesky branch */
    mk_symmat_op op = { A, nt, qt };
    mk_cg c = { n, 2 * n < cgmax ? 2 * n : cgmax, eta * gnorm, mk_symmat_op_mv, &op,
                mk_pcblock_apply, B, 0, 1, Df, hl, work + n };
    int it = 0;
    info = mk_cg_solve(&c, d, r, &it);
    *cgit += it;
    return info;
}

/* ------------------------------------------------------------------ phase: start */

static void sp_primal(sp_state *S);

/* Starting point: rho (cold: the loss's start, balanced, inside the box), the first sweep over
   every kernel (K_m alpha_m and K_m rho for nonzero blocks, screening constants and ||rho||_{K_m}
   for all), the cold-start scaling, the first working set, z and the slack variables. */
static void sp_start(sp_state *S)
{
    int n = S->n, M = S->M;
    const double *y = S->y;
    const sp_loss *L = S->L;
    double *rho = S->rho, *alpha = S->alpha;
    double C1 = S->C1;

    memset(S->Ka, 0, sizeof(double) * (size_t) n * M);
    for (int m = 0; m < M; m++) {
        int nz = 0;
        const double *am = alpha + (size_t) m * n;
        for (int i = 0; i < n; i++) if (am[i] != 0.0) { nz = 1; break; }
        S->anz[m] = nz;
        S->inS[m] = 0;
        S->anorm[m] = 0.0;
        S->stamp[m] = -1;
    }
    if (!S->warm) {
        /* balanced (sum(rho) = 0) and inside the loss's box: a feasible dual point, scaled
           further below so that few kernels are active at the start (Remark 1) */
        for (int i = 0; i < n; i++) rho[i] = L->rho0 * y[i];
        double keep[2] = { rho[0], rho[1] };
        L->project(n, y, rho);
        double nrm = 0.0;
        for (int i = 0; i < n; i++) nrm += fabs(rho[i]);
        if (!(nrm > 0.0)) { rho[0] = keep[0]; rho[1] = keep[1]; }   /* one class only */
    }
    if (L->interior) L->interior(n, y, rho);

    /* K_m alpha_m for nonzero blocks, K_m rho0 for them too (fused) */
    int cnt = 0;
    for (int m = 0; m < M; m++) if (S->anz[m]) { S->list[cnt] = m; S->flag[cnt] = 1; cnt++; }
    int nt = cnt > 1 ? sp_threads(S, (double) cnt * n * n) : 1;
    (void) nt;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) if (nt > 1)
#endif
    for (int j = 0; j < cnt; j++) {
        int m = S->list[j];
        const double *Km = sp_kernel(S, m);
        mk_symv2(Km, n, rho, alpha + (size_t) m * n, S->Kr + (size_t) m * n,
                 S->Ka + (size_t) m * n);
    }
    S->nprod += cnt;
    for (int j = 0; j < cnt; j++) {
        int m = S->list[j];
        S->anorm[m] = sp_sqrt0(mk_dot(n, alpha + (size_t) m * n, S->Ka + (size_t) m * n));
        S->inS[m] = 1;
    }
    /* norms of rho0 and the screening constants of every kernel: one full sweep (two triangle
       sweeps from MK_TRI_MIN rows) */
    double *ones = NULL;
    if (n >= MK_TRI_MIN) {
        ones = (double *) R_alloc(n, sizeof(double));
        for (int i = 0; i < n; i++) ones[i] = 1.0;
    }
    nt = M > 1 ? sp_threads(S, (double) M * n * n) : 1;
    if (nt > M) nt = M;
    /* chunks of 8 kernels keep the scheduling cheap for thousands of small kernels, but with few
       large ones they leave a thread idle: 20 kernels on two threads went 8 + 4 against 8 */
    int chunk = M >= 64 * nt ? 8 : 1;
    (void) chunk;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, chunk) if (nt > 1)
#endif
    for (int m = 0; m < M; m++) {
        double *rs = sp_thread_buf(S->rsbuf, (size_t) n);
        double *kr = S->Kr + (size_t) m * n;
        /* from MK_TRI_MIN rows an on-the-fly kernel is computed on its upper triangle only */
        const double *Km = sp_kernel(S, m);
        if (ones)
            mk_kernel_stats_tri(Km, n, rho, ones, kr, S->s1 + m, S->sqL + m, rs,
                                S->K1 + (size_t) m * n);
        else
            mk_kernel_stats(Km, n, rho, kr, S->s1 + m, S->sqL + m, rs, S->K1 + (size_t) m * n);
        S->nref[m] = sp_sqrt0(mk_dot(n, rho, kr));
    }
    S->nprod += M;
    if (!S->warm && C1 > 0.0) {
        /* scale the cold start so that only the strongest kernels are active */
        double maxn = 0.0;
        for (int m = 0; m < M; m++) if (S->nref[m] > maxn) maxn = S->nref[m];
        double kap = maxn > 0.0 ? SP_START_SCALE * C1 / maxn : 1.0;
        if (kap < 1.0) {
            for (int i = 0; i < n; i++) rho[i] *= kap;
            for (int m = 0; m < M; m++) S->nref[m] *= kap;
            for (int m = 0; m < M; m++) {
                double *kr = S->Kr + (size_t) m * n;
                for (int i = 0; i < n; i++) kr[i] *= kap;
            }
        }
    }
    for (int m = 0; m < M; m++) sp_set_ref(S, m, rho);
    /* the start is the first anchor of the screening bounds: every norm there is exact */
    memcpy(S->xa, rho, sizeof(double) * n);
    for (int m = 0; m < M; m++) S->ua[m] = S->nref[m];
    /* zero blocks that are active at rho0 join S (K_m rho0 is already in Kr) */
    for (int m = 0; m < M; m++)
        if (!S->anz[m] && (S->nref[m] > C1 * (1.0 - SP_THR_EPS) || !S->o->screen)) S->inS[m] = 1;
    sp_tick(S, 0);

    /* z (with the primal value at the start) and the slack variables consistent with it */
    sp_primal(S);
    if (!S->warm && L->aux_start) L->aux_start(n, y, S->z, S->aux);
    if (S->box) {
        /* the box holds rho itself: no slack multipliers */
        memset(S->aux, 0, 2 * sizeof(double) * (size_t) n);
    }
}

/* ------------------------------------------------------------------ phase: Newton direction */

/* phi and its gradient at rho (loss part, bias term, active kernels); fills the active list.
   Returns ||gradient||. */
static double sp_gradient(sp_state *S)
{
    int n = S->n, M = S->M;
    const double *rho = S->rho;
    double *g = S->g;
    sp_norms(S);
    double sr = 0.0;
    for (int i = 0; i < n; i++) sr += rho[i];
    double bt = *S->b + S->gammab * sr;
    double phi0 = S->L->phi(n, S->y, rho, S->aux, S->gsl, S->eps, g, S->hl) +
        bt * bt / (2.0 * S->gammab);
    for (int i = 0; i < n; i++) g[i] += bt;
    int na = 0;
    double gamma = S->gamma, thr = gamma * S->C1, den = 1.0 + gamma * S->C2;
    for (int m = 0; m < M; m++) {
        if (!S->inS[m] || !(S->r[m] > thr)) continue;
        S->act[na++] = m;
        double rm = S->r[m];
        phi0 += (rm - thr) * (rm - thr) / (2.0 * gamma * den);
        double s = (rm - thr) / (den * rm);
        const double *ka = S->Ka + (size_t) m * n, *kr = S->Kr + (size_t) m * n;
        for (int i = 0; i < n; i++) g[i] += s * (ka[i] + gamma * kr[i]);
    }
    S->sr = sr; S->phi0 = phi0; S->na = na; S->thr = thr; S->den = den;
    S->gnorm = sqrt(mk_dot(n, g, g));
    return S->gnorm;
}

/* The Newton matrix H from the coefficients hc1, hc2 of the active kernels (act, ascending). With
   the cache, its kernel part comes from G, rebuilt first when sum_m |hc1_m - gc1_m| (0 for a
   kernel on one side only) exceeds SP_CACHE_DRIFT sum_m hc1_m. */
static void sp_newton_matrix(sp_state *S)
{
    S->nm.gb = S->gammab;
    if (!S->G) {
        sp_hessian(S, S->na, S->act, S->hc1, S->hc2, S->gammab, S->hl, &S->nm);
        return;
    }
    double drift = 0.0, tot = 0.0;
    for (int m = 0, a = 0; m < S->M; m++) {
        double c = (a < S->na && S->act[a] == m) ? S->hc1[a++] : 0.0;
        tot += c;
        drift += fabs(c - (S->gvalid ? S->gc1[m] : 0.0));
    }
    if (!S->gvalid || drift > SP_CACHE_DRIFT * tot) {
        mk_symmat Gm = { S->n, S->G, NULL, NULL, 0.0, 0, NULL, NULL };
        sp_hessian(S, S->na, S->act, S->hc1, S->zM, 0.0, S->zn, &Gm);
        for (int m = 0; m < S->M; m++) S->gc1[m] = 0.0;
        for (int a = 0; a < S->na; a++) S->gc1[S->act[a]] = S->hc1[a];
        S->gvalid = 1; S->grefresh++;
    }
    sp_hess_lowrank(S, S->G, S->na, S->act, S->hc2, S->gammab, S->hl, &S->nm);
}

/* ------------------------------------------------------------------ phase: model direction */

/* Hinge with the CG solve: the Newton direction D minimises the quadratic model of phi with the
   loss curvature of the slack pieces at rho. Coordinates between the kinks have only the kernels'
   curvature, so D moves many of them across a kink, where the slack term adds curvature gamma:
   along such a D phi rose like c^2 with thousands of times the predicted curvature, and the line
   search cut the steps to 1/8-1/64 (N = 2000, C = 0.5: 344 Newton steps, 60-80 coordinates
   crossing a kink at c = 1 while the kernel part matched its quadratic model to 1%). The model
     m(d) = phi_L(rho + d) - phi_L(rho) + (g - gL)'d + d'H_K d / 2,
   H_K = H - diag(hl) (kernels, low rank, gamma_b 11'), keeps the loss part phi_L exact. D is
   refined on it by rounds of an active-set (semismooth) Newton method: the exact minimum of m
   along the current direction (from d = 0 along the Newton direction first), then the pieces at
   the new point and a CG solve of (H_K + diag(their curvature)) delta = -grad m. m decreases in
   every round, so the result is a descent direction of phi (m(d) < 0 gives g'd < 0: the other
   terms are >= 0). The rounds stop when no piece changes at a full step, when grad m is below 1e-3
   |g|, or after model_rounds rounds. A round costs a CG solve and one product with H, no
   kernel reads; its CG solve is deflated by the search directions of the step's earlier solves
   (mk_defl: ringnorm N = 2000, seed 1, C = 0.005 / 0.05 / 0.5: 1881 / 1367 / 2466 -> 1345 /
   806 / 1246 CG iterations in all, the same Newton steps) and truncated at SP_ROUND_MAXIT
   iterations: any CG iterate lowers the quadratic part, so a truncated round still descends.
   With the single-precision Newton matrix the rounds' CG products are also done in
   single-precision arithmetic (mk_symmat.fast; the growth benchmark's 15 fits at N = 2000, medians
   of five alternating runs: 7.47 -> 7.25 s in all, C = 0.5 2.39 -> 2.27 s, the same Newton
   steps, objectives within 1.3e-5 at gap 0.01). The Newton direction's solve keeps double
   arithmetic: in float its own CG iterations rose by 19-33% (two draws, N = 1000 and 2000),
   which took most of the gain, while the rounds' counts stayed within 2%. */

/* slope of m along dd at x + t dd (x = rho + d): h = a + t b + sum_i dd_i (gL_i(x + t dd) -
   gL_i(x)); *dh its derivative. gl1: gL at x; tmp, gl2, hh: n scratch */
static double sp_model_slope(sp_state *S, const double *x, const double *dd, double t, double a,
                             double b, const double *gl1, double *tmp, double *gl2, double *hh,
                             double *dh)
{
    int n = S->n;
    for (int i = 0; i < n; i++) tmp[i] = x[i] + t * dd[i];
    S->L->phi(n, S->y, tmp, S->aux, S->gsl, S->eps, gl2, hh);
    double h = a + t * b, c = b;
    for (int i = 0; i < n; i++) { h += dd[i] * (gl2[i] - gl1[i]); c += dd[i] * dd[i] * hh[i]; }
    *dh = c;
    return h;
}

/* the minimum of m along dd from x: the root of the slope, which is nondecreasing and piecewise
   linear in t (h(0) = a < 0): Newton's method on it, bracketed, with bisection as safeguard */
static double sp_model_linemin(sp_state *S, const double *x, const double *dd, double a,
                               double b, const double *gl1, double *tmp, double *gl2, double *hh)
{
    double lo = 0.0, hi = R_PosInf, t = 1.0, dh;
    for (int it = 0; it < 100; it++) {
        double h = sp_model_slope(S, x, dd, t, a, b, gl1, tmp, gl2, hh, &dh);
        if (h == 0.0) return t;
        if (h < 0.0) lo = t; else hi = t;
        if (R_FINITE(hi) && hi - lo <= 1e-12 * hi) break;
        double tn = dh > 0.0 ? t - h / dh : R_PosInf;
        if (!(tn > lo && tn < hi)) tn = R_FINITE(hi) ? 0.5 * (lo + hi) : 2.0 * t;
        if (!R_FINITE(hi) && tn > 1e12) return tn;   /* no curvature ahead: the step cap bounds D */
        t = tn;
    }
    return R_FINITE(hi) ? hi : t;
}

static void sp_model_direction(sp_state *S)
{
    int n = S->n;
    mk_symmat *A = &S->nm;
    double *D = S->D, *w = S->mw;
    double *gl0 = w, *gl1 = w + n, *hl1 = w + 2 * (size_t) n, *hkd = w + 3 * (size_t) n,
        *hkp = w + 4 * (size_t) n, *gm = w + 5 * (size_t) n, *p = w + 6 * (size_t) n,
        *x = w + 7 * (size_t) n, *tmp = w + 8 * (size_t) n, *gl2 = w + 9 * (size_t) n,
        *hd = w + 10 * (size_t) n, *hh = w + 11 * (size_t) n;
    int nt = sp_nm_threads(S, (double) n * n);
    const double *hl = S->hl;
    for (int i = 0; i < n; i++) hd[i] = mk_symmat_diag(A, i);
    S->L->phi(n, S->y, S->rho, S->aux, S->gsl, S->eps, gl0, NULL);
    /* d = 0: x = rho, grad m (gm) = g; the first direction is the Newton direction */
    memcpy(p, D, sizeof(double) * n);
    memcpy(x, S->rho, sizeof(double) * n);
    memcpy(gl1, gl0, sizeof(double) * n);
    memcpy(gm, S->g, sizeof(double) * n);
    memcpy(hl1, hl, sizeof(double) * n);
    for (int i = 0; i < n; i++) hkd[i] = 0.0;
    double gtol = 1e-3 * S->gnorm;
    int moved = 0;
    for (int r = 0; r <= S->o->model_rounds; r++) {
        if (r > 0) {
            double gn = sqrt(mk_dot(n, gm, gm));
            if (gn <= gtol) break;
            for (int i = 0; i < n; i++) mk_symmat_set_diag(A, i, hd[i] - hl[i] + hl1[i]);
            A->fast = A->P != NULL;
            int info = sp_solve(A, n, gm, p, S->work, 1, 0, gn, &S->cgit, &S->fb, hl1, nt, S->qt,
                                &S->df, SP_ROUND_MAXIT);
            A->fast = 0;
            for (int i = 0; i < n; i++) mk_symmat_set_diag(A, i, hd[i]);
            if (info != 0) break;
            S->nmodel++;
        }
        mk_symmat_mv(A, p, hkp, nt, S->qt);
        for (int i = 0; i < n; i++) hkp[i] -= hl[i] * p[i];
        double a = mk_dot(n, gm, p), b = mk_dot(n, p, hkp);
        if (!(a < 0.0)) break;
        double t = sp_model_linemin(S, x, p, a, b, gl1, tmp, gl2, hh);
        /* the new point x = rho + d, its pieces (hl1) and grad m there */
        int changed = 0;
        moved = 1;
        for (int i = 0; i < n; i++) { x[i] += t * p[i]; hkd[i] += t * hkp[i]; }
        S->L->phi(n, S->y, x, S->aux, S->gsl, S->eps, gl1, tmp);
        for (int i = 0; i < n; i++) {
            changed += tmp[i] != hl1[i];
            hl1[i] = tmp[i];
            gm[i] = S->g[i] - gl0[i] + gl1[i] + hkd[i];
        }
        if (!R_FINITE(t) || t > 1e12 || (changed == 0 && t == 1.0)) break;
    }
    if (moved) for (int i = 0; i < n; i++) D[i] = x[i] - S->rho[i];
}

/* Hessian (loss diagonal + gamma_b 11' + active kernels) and the Newton direction D.
   Returns 0 on success. */
/* The active kernels' Newton coefficients (hc1: of K_m, hc2: of the rank-one term w w') and
   w = K_m v_m, v_m = alpha_m + gamma rho, in KD (free scratch until the step's products) */
static void sp_newton_coefs(sp_state *S)
{
    int n = S->n;
    double gamma = S->gamma, thr = S->thr, den = S->den;
    for (int a = 0; a < S->na; a++) {
        int m = S->act[a];
        double rm = S->r[m], q = thr / rm;
        S->hc1[a] = gamma / den * (1.0 - q);
        S->hc2[a] = q > 0.0 ? gamma / den * q / (rm * rm) : 0.0;
        double *w = S->KD + (size_t) m * n;
        const double *ka = S->Ka + (size_t) m * n, *kr = S->Kr + (size_t) m * n;
        if (S->anz[m]) for (int i = 0; i < n; i++) w[i] = ka[i] + gamma * kr[i];
        else for (int i = 0; i < n; i++) w[i] = gamma * kr[i];
    }
}

static int sp_direction(sp_state *S)
{
    int n = S->n;
    double lmw = S->L->lm;
    if (lmw > 0.0) {
        /* Levenberg-Marquardt: vanishes with the gradient, so the local convergence is kept */
        double tau = S->gsl * lmw * (S->gnorm / sqrt((double) n));
        if (tau > S->gsl * lmw) tau = S->gsl * lmw;
        for (int i = 0; i < n; i++) S->hl[i] += tau;
    }
    sp_tick(S, 1);
    sp_newton_coefs(S);
    sp_newton_matrix(S);
    sp_tick(S, 2);
    S->df.rec = S->df.kmax > 0;
    int info = sp_solve(&S->nm, n, S->g, S->D, S->work, S->use_cg, S->L->equilibrate, S->gnorm,
                        &S->cgit, &S->fb, S->hl, S->use_cg ? sp_nm_threads(S, (double) n * n) : 1,
                        S->qt, &S->df, SP_CG_MAXIT);
    sp_tick(S, 3);
    if (info == 0 && S->mw) {
        sp_model_direction(S);
        sp_tick(S, 8);
    }
    return info;
}

/* ------------------------------------------------------------------ phase: box direction */

/* Hinge in the box: phi = -y'rho + kernel terms + bias term on 0 <= y rho <= 1 (the hinge
   conjugate without slack variables). The direction D solves the Newton model on the box
   (minimise g'd + d'Hd / 2 with rho + d in the box) by an active-set loop: coordinates at a
   bound whose gradient points out of the box stay fixed (D = 0); the rest (the free set I) is
   solved with the free block H_II, and coordinates that the solution carries out of the box are
   clipped to their bound and the others solved again, until none leaves. rho + D is then in the
   box, so the line search (steps c <= 1) stays feasible. H_II is gathered from the columns of the
   free coordinates (|I| x n reads per active kernel), and D and rho are sparse (fixed
   coordinates at the lower bound are 0), so the kernel products read only their columns. */
static void sp_box_snap(sp_state *S)
{
    int n = S->n;
    const double *y = S->y;
    for (int i = 0; i < n; i++) {
        double t = y[i] * S->rho[i];
        if (t < SP_BOX_SNAP) S->rho[i] = 0.0;
        else if (t > 1.0 - SP_BOX_SNAP) S->rho[i] = y[i];
    }
}

/* the free block of H (nf x nf, full, column-major) on the coordinates fi */
MK_CLONES
static void sp_box_block_cols(const sp_state *S, const int *fi, int nf, int j0, int j1,
                              double *Hb, double *buf)
{
    int n = S->n;
    for (int jj = j0; jj < j1; jj++) {
        int j = fi[jj];
        double *hj = Hb + (size_t) jj * nf;
        for (int ii = 0; ii < nf; ii++) hj[ii] = S->gammab;
        for (int a = 0; a < S->na; a++) {
            int m = S->act[a];
            const double *kc = mk_store_col(S->st, m, j, buf), *w = S->KD + (size_t) m * n;
            double c1 = S->hc1[a], e = S->hc2[a] * w[j];
            for (int ii = 0; ii < nf; ii++) {
                int i = fi[ii];
                hj[ii] += c1 * kc[i] + e * w[i];
            }
        }
    }
}

/* The free set of the step (bxi[0..bxnf-1]: the coordinates not held at a bound, where the
   gradient does not point out of the box) and the gradient's norm on it */
static double sp_box_free(sp_state *S)
{
    double s = 0.0;
    int nf = 0;
    for (int i = 0; i < S->n; i++) {
        double t = S->y[i] * S->rho[i], yg = S->y[i] * S->g[i];
        if ((t <= 0.0 && yg > 0.0) || (t >= 1.0 && yg < 0.0)) continue;
        S->bxi[nf++] = i;
        s += S->g[i] * S->g[i];
    }
    S->bxnf = nf;
    return sqrt(s);
}

/* out[a] = (H x)_rows[a] for the full nf x nf block H (column-major, symmetric) */
MK_CLONES
static void sp_box_mv(const double *Hb, int nf, const int *rows, int nr, const double *x,
                      double *out, int nt)
{
    (void) nt;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
#endif
    for (int a = 0; a < nr; a++) {
        const double *h = Hb + (size_t) (rows ? rows[a] : a) * nf;
        double q = 0.0;
        MK_SIMD_RED(q)
        for (int k = 0; k < nf; k++) q += h[k] * x[k];
        out[a] = q;
    }
}

static int sp_box_direction(sp_state *S)
{
    int n = S->n;
    const double *y = S->y, *rho = S->rho, *g = S->g;
    double *D = S->D;
    double gamma = S->gamma;
    sp_tick(S, 1);
    sp_newton_coefs(S);
    /* the free set, from sp_box_free at this rho and gradient */
    int nf = S->bxnf, *fi = S->bxi;
    memset(D, 0, sizeof(double) * (size_t) n);
    S->bxfree += nf;
    if (nf == 0) { sp_tick(S, 2); return 0; }
    if ((size_t) nf * nf > S->bxcap) {
        /* the block grows with the largest free set so far (scratch until the fit returns) */
        size_t want = (size_t) nf * nf + (size_t) nf * nf / 2, full = (size_t) n * n;
        S->bxcap = want < full ? want : full;
        S->bxH = (double *) mk_alloc_huge(S->bxcap * sizeof(double));
    }
    double *Hb = S->bxH;
    int nt = sp_nm_threads(S, (double) S->na * nf * nf + (double) nf * n);
    (void) nt;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, 8) if (nt > 1)
#endif
    for (int jj = 0; jj < nf; jj++)
        sp_box_block_cols(S, fi, nf, jj, jj + 1, Hb, sp_thread_buf(S->kbuf, S->scr));
    double dmax = 0.0;
    for (int ii = 0; ii < nf; ii++) {
        double hii = Hb[(size_t) ii * nf + ii];
        if (hii > dmax) dmax = hii;
    }
    /* a small ridge: the free block is the kernels' curvature alone, of fast-decaying spectrum */
    double ridge = SP_BOX_LM * gamma * (S->gnorm / sqrt((double) n) < 1.0 ?
                                        S->gnorm / sqrt((double) n) : 1.0) + 1e-10 * dmax;
    sp_tick(S, 2);
    /* the primal-dual active set method on the box (Hintermueller, Ito and Kunisch 2002):
       bxc[ii] = 0 free, -1 / 1 held at the lower / upper bound; the free coordinates are
       solved with the held ones at their bounds (CG on the free block, from the last
       solution), then coordinates carried out of the box are held and held ones whose
       multiplier (the model's gradient) points into the box are let go, until no set changes
       (at most SP_BOX_MAXIT rounds). The last solution clipped into the box is the direction
       if it lowers the model, else a projected diagonal Newton step. The block's products
       (sp_box_mv: whole columns against a vector with zeros off the free list) run on the
       solver's threads. */
    int *st = S->bxc, *fr = S->bxs;
    double *d = S->bxd, *cg = S->bxF;
    double *cr = cg, *cz = cg + nf, *cp = cg + 2 * (size_t) nf, *cq = cg + 3 * (size_t) nf,
        *dv = cg + 4 * (size_t) nf, *pf = cg + 5 * (size_t) nf, *hd = cg + 6 * (size_t) nf;
    int ntc = sp_nm_threads(S, (double) nf * nf);
    for (int ii = 0; ii < nf; ii++) { st[ii] = 0; d[ii] = 0.0; }
    int ok = 0, settled = 0;
    double r0 = 0.0;
    for (int ii = 0; ii < nf; ii++) r0 += g[fi[ii]] * g[fi[ii]];
    double tol2 = SP_BOX_CGTOL * SP_BOX_CGTOL * r0;
    for (int it = 0; it < SP_BOX_MAXIT; it++) {
        int nfr = 0;
        for (int ii = 0; ii < nf; ii++) {
            int i = fi[ii];
            if (st[ii] < 0) d[ii] = -rho[i];
            else if (st[ii] > 0) d[ii] = y[i] - rho[i];
            else fr[nfr++] = ii;
        }
        sp_box_mv(Hb, nf, NULL, nf, d, hd, ntc);
        double rz = 0.0;
        for (int a = 0; a < nfr; a++) {
            int ii = fr[a];
            double hii = Hb[(size_t) ii * nf + ii] + ridge;
            cr[a] = -g[fi[ii]] - hd[ii] - ridge * d[ii];
            cz[a] = cr[a] / hii;
            cp[a] = cz[a];
            rz += cr[a] * cz[a];
        }
        for (int ii = 0; ii < nf; ii++) pf[ii] = 0.0;
        for (int k = 0; k < SP_BOX_CGMAX && nfr > 0; k++) {
            double rr = 0.0;
            for (int a = 0; a < nfr; a++) rr += cr[a] * cr[a];
            if (rr <= tol2) break;
            for (int a = 0; a < nfr; a++) pf[fr[a]] = cp[a];
            sp_box_mv(Hb, nf, fr, nfr, pf, cq, ntc);
            double pq = 0.0;
            for (int a = 0; a < nfr; a++) { cq[a] += ridge * cp[a]; pq += cp[a] * cq[a]; }
            if (!(pq > 0.0)) break;
            double al = rz / pq, rzn = 0.0;
            for (int a = 0; a < nfr; a++) {
                int ii = fr[a];
                d[ii] += al * cp[a];
                cr[a] -= al * cq[a];
                cz[a] = cr[a] / (Hb[(size_t) ii * nf + ii] + ridge);
                rzn += cr[a] * cz[a];
            }
            double be = rzn / rz;
            rz = rzn;
            for (int a = 0; a < nfr; a++) cp[a] = cz[a] + be * cp[a];
            S->cgit++;
        }
        sp_box_mv(Hb, nf, NULL, nf, d, hd, ntc);
        int change = 0;
        for (int ii = 0; ii < nf; ii++) {
            int i = fi[ii], ns = st[ii];
            if (st[ii] == 0) {
                double t = y[i] * (rho[i] + d[ii]);
                ns = t < 0.0 ? -1 : (t > 1.0 ? 1 : 0);
            } else {
                double q = g[i] + ridge * d[ii] + hd[ii];
                double ym = y[i] * q;
                if ((st[ii] < 0 && ym < 0.0) || (st[ii] > 0 && ym > 0.0)) ns = 0;
            }
            change += ns != st[ii];
            st[ii] = ns;
        }
        S->bxclip += change;
        S->bxround++;
        if (change == 0) { settled = 1; break; }
    }
    for (int ii = 0; ii < nf; ii++) {
        int i = fi[ii];
        double t = y[i] * (rho[i] + d[ii]);
        dv[ii] = t < 0.0 ? -rho[i] : (t > 1.0 ? y[i] - rho[i] : d[ii]);
    }
    sp_box_mv(Hb, nf, NULL, nf, dv, hd, ntc);
    double mval = 0.0;
    for (int ii = 0; ii < nf; ii++)
        mval += dv[ii] * (g[fi[ii]] + (hd[ii] + ridge * dv[ii]) / 2.0);
    if (mval < 0.0) {
        for (int ii = 0; ii < nf; ii++) D[fi[ii]] = dv[ii];
        ok = 1;
    }
    if (S->o->verbose > 2) {
        double gd = 0.0;
        for (int i = 0; i < n; i++) gd += g[i] * D[i];
        Rprintf("      box: nf %d ok %d settled %d gd %.3e ridge %.3e rounds %ld cg %d\n", nf, ok,
                settled, gd, ridge, S->bxround, S->cgit);
    }
    sp_tick(S, 3);
    if (!ok || !settled) {
        /* The active-set loop did not settle in SP_BOX_MAXIT rounds, or its point does not lower
           the model: the fit leaves the box for good (in one test fit under another rounding,
           unsettled loops cost 89 more Newton steps and ten times the CG iterations). rho is
           in the box and the slack variables are zero, a valid state of the slack path; this
           step keeps the box's direction if it descends, else takes the slack path's. */
        S->bxfail++;
        S->box = 0;
        S->boxok = 0;
        S->boxleft = S->itcur + 1;
        if (S->o->verbose) Rprintf("spicy: the box is left at outer iteration %d\n", S->boxleft);
        if (!ok) return sp_direction(S);
    }
    return 0;
}

/* ------------------------------------------------------------------ phase: step cap */

/* The loss's cap on D; returns 1 if D is a descent direction (S->gd = g'D < 0). */
static int sp_step_cap(sp_state *S)
{
    if (S->L->cap) S->L->cap(S->n, S->y, S->rho, S->g, S->D, S->tmp);
    S->gd = mk_dot(S->n, S->g, S->D);
    return S->gd < 0.0;
}

/* ------------------------------------------------------------------ phase: screening */

/* Trust region on the kernel working set: halve the step while it would bring more than a
   budget of new kernels into S (their bound fails at rho + D). */
static void sp_trust_region(sp_state *S)
{
    int n = S->n, M = S->M;
    S->segid++;   /* a new segment: rho or D changed */
    S->dsc = 1.0;
    if (!(SP_BUDGET > 0.0) || !S->o->screen) return;
    double lim = S->C1 * S->C1 * (1.0 - SP_THR_EPS);
    int nS = 0;
    for (int m = 0; m < M; m++) nS += S->inS[m];
    double budget = SP_BUDGET * (nS > 16 ? nS : 16);
    for (int tr = 0; tr < 8; tr++) {
        for (int i = 0; i < n; i++) S->tmp[i] = S->rho[i] + S->D[i];
        int nnew = sp_bounds_all(S, S->tmp, S->ubv, lim, 0, 1.0);
        if (nnew <= budget) break;
        for (int i = 0; i < n; i++) S->D[i] *= 0.5;
        S->gd *= 0.5;
        S->dsc *= 0.5;
    }
}

/* The working set for the segment [rho, rho + D] and its products K_m D (and K_m rho for
   kernels joining S).
   Lazy (the default): kernels outside S join only once the line search has found a step c that
   passes the Armijo test with the kernels of S alone (a lower bound of phi, since every term is
   >= 0), and the bound is then checked on [rho, rho + c D] only: steps are often cut to a small
   fraction of D early on, and the whole segment would bring in kernels that are never active.
   Kernels of S with a zero block that are inactive at rho leave S (their exact K_m rho stays in
   Kr) and come back, with K_m D only, if the accepted step needs them.
   Segment screening (lazy off): kernels outside S whose bound fails at rho + D join S now. */
static void sp_screen(sp_state *S)
{
    int n = S->n, M = S->M;
    const sp_opts *o = S->o;
    const double *rho = S->rho, *D = S->D;
    double lim = S->C1 * S->C1 * (1.0 - SP_THR_EPS);
    int lazy = o->screen && o->lazy;
    int cnt = 0;
    S->stepid++;
    for (int i = 0; i < n; i++) S->tmp[i] = rho[i] + D[i];
    double tmx, txc2, rmx, rxc2;
    mk_centred(n, S->tmp, &tmx, &txc2);
    mk_centred(n, rho, &rmx, &rxc2);
    /* kernels of S with a zero block: their exact norm at rho is known, so rho becomes their
       reference point */
    int nt = sp_threads(S, 4.0 * M * n);
    (void) nt;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
#endif
    for (int m = 0; m < M; m++)
        if (S->inS[m] && !S->anz[m]) sp_set_ref_c(S, m, rho, rmx, rxc2);
    for (int m = 0; m < M; m++) {
        if (S->inS[m]) {
            if (!S->anz[m]) {
                if (lazy ? S->nref[m] * S->nref[m] <= lim :
                    (o->screen && sp_bound(S, m, S->tmp, tmx, txc2) <=
                     lim)) {
                    S->inS[m] = 0;
                    S->stamp[m] = S->stepid;
                    continue;
                }
            }
            S->list[cnt] = m; S->flag[cnt] = 0; cnt++;
        } else if (!lazy) {
            if (sp_bound(S, m, S->tmp, tmx, txc2) > lim) {
                S->inS[m] = 1;
                memset(S->Ka + (size_t) m * n, 0, sizeof(double) * n);
                S->list[cnt] = m; S->flag[cnt] = 1; cnt++;
            }
        }
    }
    sp_tick(S, 4);
    sp_products(S, cnt, rho, D);
    sp_tick(S, 5);
    for (int j = 0; j < cnt; j++) if (S->flag[j] == 1) sp_set_ref_c(S, S->list[j], rho, rmx, rxc2);
    sp_norms(S);
    S->cnt = cnt;
}

/* ------------------------------------------------------------------ phase: line search */

/* Armijo backtracking on phi along D: r_m(c)^2 = r^2 + 2 c gamma B + c^2 gamma^2 Dq for m in S.
   With lazy screening, an accepted c first brings in the kernels outside S that may be active
   on [rho, rho + c D]; the test is then repeated at the same c. Returns 1 with *c the step. */
static int sp_line_search(sp_state *S, double *cstep)
{
    int n = S->n, M = S->M;
    const sp_opts *o = S->o;
    const double *rho = S->rho, *D = S->D;
    double *tmp = S->tmp, *Bq = S->Bq, *Dq = S->Dq;
    double gamma = S->gamma, thr = S->thr, den = S->den, gammab = S->gammab;
    double lim = S->C1 * S->C1 * (1.0 - SP_THR_EPS);
    int lazy = o->screen && o->lazy;
    int nt = sp_threads(S, 3.0 * M * n);
    (void) nt;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
#endif
    for (int m = 0; m < M; m++) {
        if (!S->inS[m]) continue;
        const double *ka = S->Ka + (size_t) m * n, *kr = S->Kr + (size_t) m * n,
            *kd = S->KD + (size_t) m * n;
        double bb = gamma * mk_dot(n, D, kr);
        if (S->anz[m]) bb += mk_dot(n, D, ka);
        Bq[m] = bb;
        Dq[m] = mk_dot(n, D, kd);
    }
    double sd = 0.0;
    for (int i = 0; i < n; i++) sd += D[i];
    double c = 1.0;
    int ok = 0;
    for (int ls = 0; ls < 60; ls++) {
        if (ls > 0) R_CheckUserInterrupt();   /* trials may bring kernels in: products */
        for (int i = 0; i < n; i++) tmp[i] = rho[i] + c * D[i];
        double bc = *S->b + gammab * (S->sr + c * sd);
        double val = S->L->phi(n, S->y, tmp, S->aux, S->gsl, S->eps, NULL, NULL) +
            bc * bc / (2.0 * gammab);
        for (int m = 0; m < M; m++) {
            if (!S->inS[m]) continue;
            double rr = S->r[m] * S->r[m] + 2.0 * c * gamma * Bq[m] +
                c * c * gamma * gamma * Dq[m];
            double rc = rr > 0.0 ? sqrt(rr) : 0.0;
            if (rc > thr) val += (rc - thr) * (rc - thr) / (2.0 * gamma * den);
        }
        if (o->verbose > 2 && ls < 3)
            Rprintf("      ls c=%.3e val-phi0=%.6e c*gd=%.6e\n", c, val - S->phi0, c * S->gd);
        if (val <= S->phi0 + 1e-4 * c * S->gd + SP_FLOOR * fabs(S->phi0)) {
            if (lazy) {
                /* kernels outside S that may be active on [rho, rho + c D] (tmp is the end
                   point; at rho itself they are certified inactive) */
                int cnew = 0;
                sp_bounds_all(S, tmp, S->ubv, lim, 1, c);
                for (int m = 0; m < M; m++) {
                    if (S->inS[m]) continue;
                    if (S->ubv[m] > lim) {
                        S->inS[m] = 1;
                        memset(S->Ka + (size_t) m * n, 0, sizeof(double) * n);
                        /* K_m rho is still exact if m left S in this Newton step */
                        S->list[cnew] = m; S->flag[cnew] = S->stamp[m] == S->stepid ? 0 : 1;
                        cnew++;
                    }
                }
                if (cnew > 0) {
                    sp_tick(S, 6);
                    sp_products(S, cnew, rho, D);
                    sp_tick(S, 5);
                    double rmx, rxc2;
                    mk_centred(n, rho, &rmx, &rxc2);
                    nt = cnew > 1 ? sp_threads(S, 8.0 * cnew * n) : 1;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
#endif
                    for (int j = 0; j < cnew; j++) {
                        int m = S->list[j];
                        const double *kr = S->Kr + (size_t) m * n, *kd = S->KD + (size_t) m * n;
                        sp_set_ref_c(S, m, rho, rmx, rxc2);
                        S->r[m] = gamma * S->nref[m];
                        Bq[m] = gamma * mk_dot(n, D, kr);
                        Dq[m] = mk_dot(n, D, kd);
                    }
                    S->cnt += cnew;
                    continue;   /* the same c again, now with every kernel it needs */
                }
            }
            if (val > S->phi0 + 1e-4 * c * S->gd) S->nfloor++;
            ok = 1; break;
        }
        c *= 0.5;
    }
    *cstep = c;
    return ok;
}

/* rho <- rho + c D, and the products of S with it */
static void sp_accept(sp_state *S, double c)
{
    int n = S->n, M = S->M;
    for (int i = 0; i < n; i++) S->rho[i] += c * S->D[i];
    int nt = sp_threads(S, 2.0 * M * n);
    (void) nt;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
#endif
    for (int m = 0; m < M; m++) {
        if (!S->inS[m]) continue;
        double *kr = S->Kr + (size_t) m * n;
        const double *kd = S->KD + (size_t) m * n;
        for (int i = 0; i < n; i++) kr[i] += c * kd[i];
    }
}

/* verbose > 1: one line per Newton step (kernels of S needed on the step: exact norms) */
static void sp_trace(const sp_state *S, int k, double c)
{
    int n = S->n, need = 0;
    double C1 = S->C1;
    for (int m = 0; m < S->M; m++) {
        if (!S->inS[m]) continue;
        if (S->anz[m]) { need++; continue; }
        const double *kr = S->Kr + (size_t) m * n, *kd = S->KD + (size_t) m * n;
        double a0 = mk_dot(n, S->rho, kr),
            a1 = a0 + 2.0 * mk_dot(n, S->D, kr) + mk_dot(n, S->D, kd);
        if (a0 > C1 * C1 || a1 > C1 * C1) need++;
    }
    /* box-type losses with slack multipliers (hinge): coordinates below / between / above the
       kinks y rho = zeta / g and 1 - xi / g, and how many the step moves to another piece */
    int pc[3] = { 0, 0, 0 }, chg = 0;
    if (S->L->aux_update && S->L->binary) {
        for (int i = 0; i < n; i++) {
            double t0 = S->y[i] * S->rho[i], t1 = t0 + c * S->y[i] * S->D[i];
            double lo = S->aux[n + i] / S->gsl, hi = 1.0 - S->aux[i] / S->gsl;
            int a0 = t0 < lo ? 0 : (t0 > hi ? 2 : 1), a1 = t1 < lo ? 0 : (t1 > hi ? 2 : 1);
            pc[a0]++;
            chg += a0 != a1;
        }
    }
    Rprintf("   newton %d: phi %.10g |g| %.3e gd %.3e step %.3e |S| %d needed %d active %d "
            "pieces %d/%d/%d moved %d\n",
            k, S->phi0, S->gnorm, S->gd, c, S->cnt, need, S->na, pc[0], pc[1], pc[2], chg);
}

/* The inner loop's tolerance on ||gradient|| at its step k: itol sqrt(n) (itol = inner_tol,
   tightened after a drift, see sp_run), relaxed from the second step on to irel (P - D) /
   sqrt(n) with the absolute gap P - D of the last outer iteration (or of the starting
   point). The certificate is exact whatever the inner accuracy,
   and an inner problem far from the optimum need not be solved to 1e-6: the outer iteration
   moves its solution anyway (inexact proximal point). A loop that stopped before its first step
   would spend an outer iteration on the same rho (ringnorm N = 2000, C = 0.5: 27 -> 30 Newton
   steps, against 25 with one step at least). */
static double sp_inner_tol(const sp_state *S, int k)
{
    double rn = sqrt((double) S->n), t = S->itol * rn;
    if (k > 0 && S->irel > 0.0 && S->absgap > 0.0 && R_FINITE(S->absgap)) {
        double a = S->irel * S->absgap / rn;
        if (a > t) t = a;
    }
    return t;
}

/* The inner loop: Newton on phi over rho. Returns the number of Newton steps taken; *inner_ok
   when the gradient met inner_tol; *gnorm0, *gnorm_last: first and last gradient norms. */
static int sp_newton(sp_state *S, int *inner_ok, double *gnorm0, double *gnorm_last)
{
    const sp_opts *o = S->o;
    int nnewton = 0;
    *inner_ok = 0; *gnorm0 = 0.0; *gnorm_last = 0.0;
    S->fb.nprev = -1;   /* a new inner problem (gamma changed): no factor to reuse */
    S->gvalid = 0;
    for (int k = 0; k < o->inner_maxiter; k++) {
        R_CheckUserInterrupt();
        if (S->box) sp_box_snap(S);
        double gnorm = sp_gradient(S);
        if (S->box) gnorm = S->gnorm = sp_box_free(S);
        if (k == 0) *gnorm0 = gnorm;
        *gnorm_last = gnorm;
        if (gnorm <= sp_inner_tol(S, k)) { *inner_ok = 1; break; }
        if ((S->box ? sp_box_direction(S) : sp_direction(S)) != 0) break;
        R_CheckUserInterrupt();   /* the Hessian and its solve dominate a step: check after */
        if (!sp_step_cap(S)) break;
        nnewton++;
        sp_trust_region(S);
        sp_screen(S);
        R_CheckUserInterrupt();
        double c;
        int ok = sp_line_search(S, &c);
        if (o->verbose > 1) sp_trace(S, k, ok ? c : 0.0);
        sp_tick(S, 6);
        if (!ok) { S->ls_fail++; break; }
        sp_accept(S, c);
    }
    return nnewton;
}

/* ------------------------------------------------------------------ phase: proximal update */

/* Outer updates (Eqs. 5, 6, 10, 11): alpha_m <- prox(alpha_m + gamma rho) with K_m alpha_m
   alongside, b <- b + gamma_b sum(rho), the loss's multipliers; then z and the primal value. */
static void sp_prox_update(sp_state *S)
{
    int n = S->n, M = S->M;
    const double *rho = S->rho;
    double gamma = S->gamma, C1 = S->C1, C2 = S->C2;
    sp_norms(S);
    double sr = 0.0;
    for (int i = 0; i < n; i++) sr += rho[i];
    double thr = gamma * C1, den = 1.0 + gamma * C2;
    for (int m = 0; m < M; m++) {
        if (!S->inS[m]) continue;
        double *am = S->alpha + (size_t) m * n, *ka = S->Ka + (size_t) m * n;
        const double *kr = S->Kr + (size_t) m * n;
        double rm = S->r[m];
        if (rm > thr) {
            double s = (rm - thr) / (den * rm);
            for (int i = 0; i < n; i++) {
                am[i] = s * (am[i] + gamma * rho[i]);
                ka[i] = s * (ka[i] + gamma * kr[i]);
            }
            S->anorm[m] = s * rm;
            S->anz[m] = 1;
        } else {
            if (S->anz[m]) {
                memset(am, 0, sizeof(double) * n);
                memset(ka, 0, sizeof(double) * n);
            }
            S->anz[m] = 0;
            S->anorm[m] = 0.0;
            /* norm of rho is exact here: refresh the reference point */
            sp_set_ref(S, m, rho);
        }
    }
    *S->b += S->gammab * sr;
    if (S->L->aux_update) S->L->aux_update(n, S->y, rho, S->aux, S->gsl, S->eps);
    sp_primal(S);
}

/* z = sum_m K_m alpha_m + b and the primal value at (alpha, b); active kernels, sum of norms */
static void sp_primal(sp_state *S)
{
    int n = S->n, M = S->M;
    double C1 = S->C1, C2 = S->C2;
    int nactive = 0;
    double pen = 0.0, sumnorm = 0.0, *z = S->z;
    for (int i = 0; i < n; i++) z[i] = *S->b;
    for (int m = 0; m < M; m++) {
        S->sm[m] = 0.0;
        if (!S->anz[m]) continue;
        const double *ka = S->Ka + (size_t) m * n;
        for (int i = 0; i < n; i++) z[i] += ka[i];
        nactive++;
        pen += C1 * S->anorm[m] + 0.5 * C2 * S->anorm[m] * S->anorm[m];
        sumnorm += S->anorm[m];
    }
    S->primal = S->L->value(n, S->y, z, S->eps) + pen;
    S->nactive = nactive;
    S->sumnorm = sumnorm;
}

/* ------------------------------------------------------------------ phase: dual value and gap */

/* D at the feasible point u = rho projected onto the loss's box and sum(u) = 0, scaled into the
   C1-balls (block 1-norm) or with the elastic-net penalty term; the relative gap (P - D) / P.
   Kernels outside S whose bound certifies ||u||_{K_m} <= C1 are not read; the sweep over the
   others also makes u their screening reference point (K_m u costs the same reads as u'K_m u,
   and u is close to the next iterates). u0 (NULL: rho) is the point projected. */
static void sp_dual_gap_at(sp_state *S, const double *u0)
{
    int n = S->n, M = S->M;
    const double *y = S->y;
    const sp_loss *L = S->L;
    double C1 = S->C1, C2 = S->C2, eps = S->eps;
    double lim = C1 * C1 * (1.0 - SP_THR_EPS);
    double *u = S->u, *sm = S->sm, *tmp = S->tmp;
    memcpy(u, u0 ? u0 : S->rho, sizeof(double) * n);
    L->project(n, y, u);
    /* upper bounds of ||u||^2_{K_m}: kernels of S from rho (K_m rho is exact there), the others
       from their reference points */
    double *ub = S->ubv, *key = S->Dq;   /* Dq: free outside the line search */
    int nt = sp_threads(S, 3.0 * M * n);
    (void) nt;
    double umx, uxc2, rmx, rxc2;
    mk_centred(n, u, &umx, &uxc2);
    mk_centred(n, S->rho, &rmx, &rxc2);
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
#endif
    for (int m = 0; m < M; m++) {
        if (!S->inS[m]) continue;
        const double *kr = S->Kr + (size_t) m * n;
        double rt = 0.0;
        for (int i = 0; i < n; i++) rt += kr[i];
        mk_kref R = { S->rho, kr, S->K1 + (size_t) m * n, sp_sqrt0(mk_dot(n, S->rho, kr)), rmx,
                      rxc2, rt, S->s1[m] * S->s1[m], S->sqL[m] };
        ub[m] = mk_kbound(n, u, umx, uxc2, &R);
    }
    for (int m = 0; m < M; m++) if (S->inS[m]) key[m] = ub[m];
    sp_bounds_all(S, u, ub, lim, 0, -1.0);
    for (int m = 0; m < M; m++) if (S->inS[m]) ub[m] = key[m];
    int cnt = 0;
    for (int m = 0; m < M; m++) {
        sm[m] = -1.0;   /* not read: certified <= C1, or (block 1-norm) below the largest norm */
        if (ub[m] > lim) { S->list[cnt] = m; key[cnt] = ub[m]; cnt++; }
    }
    /* Block 1-norm: only the largest norm matters (it scales u into the C1-balls), so kernels
       are read in decreasing order of their bound until the next bound is below the largest
       exact norm found (branch and bound); the elastic net needs every norm above C1 */
    int batch = cnt;
    if (C2 <= 0.0 && cnt > 1) {
        revsort(key, S->list, cnt);
        batch = 4 * S->nt_max;
    }
    int done = 0, nread = 0;
    double best2 = lim;
    while (done < cnt) {
        if (!(key[done] > best2)) break;   /* sorted: every remaining bound is lower */
        int j1 = done + batch < cnt ? done + batch : cnt;
        nt = j1 - done > 1 ? sp_threads(S, (double) (j1 - done) * n * n) : 1;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) if (nt > 1)
#endif
        for (int j = done; j < j1; j++) {
            int m = S->list[j];
            const double *Km = sp_kernel(S, m);
            if (S->inS[m]) sm[m] = sp_sqrt0(mk_quad(Km, n, u));
            else {
                /* K_m rho in the same read: rho, where the next Newton loop starts, becomes
                   the reference point (u, the projection of rho, can be far from it) */
                double *ku = sp_thread_buf(S->rsbuf, (size_t) n);
                mk_symv2(Km, n, S->rho, u, S->Kr + (size_t) m * n, ku);
                sp_set_ref(S, m, S->rho);
                sm[m] = sp_sqrt0(mk_dot(n, u, ku));
            }
        }
        for (int j = done; j < j1; j++) {
            double v = sm[S->list[j]];
            if (v * v > best2) best2 = v * v;
        }
        nread += j1 - done;
        done = j1;
        if (batch < 64 * S->nt_max) batch *= 2;
    }
    S->nprod += nread;
    if (S->o->verbose > 1) Rprintf("   dual: %d kernel sweeps (%d above C1 by the bound)\n", nread, cnt);
    double maxn = 0.0, dual;
    for (int m = 0; m < M; m++) if (sm[m] > maxn) maxn = sm[m];
    double kap = (C1 > 0.0 && maxn > C1) ? C1 / maxn : 1.0;
    if (C2 <= 0.0) {
        for (int i = 0; i < n; i++) u[i] *= kap;
        dual = L->neg_conj(n, y, u, eps);
    } else {
        double d1 = L->neg_conj(n, y, u, eps);
        for (int m = 0; m < M; m++) if (sm[m] > C1) {
            double e = sm[m] - C1;
            d1 -= e * e / (2.0 * C2);
        }
        dual = d1;
        if (kap < 1.0) {
            for (int i = 0; i < n; i++) tmp[i] = kap * u[i];
            double d2 = L->neg_conj(n, y, tmp, eps);
            if (d2 > dual) dual = d2;
        }
    }
    /* D <= P holds exactly; when both agree to the last bits the rounded difference can come
       out as -1e-16: a difference below the floating-point resolution of the objectives is
       reported as a zero gap (anything larger stays as computed, so a negative gap would
       still expose an infeasible dual point) */
    double primal = S->primal, diff = primal - dual,
        scale = fabs(primal) > fabs(dual) ? fabs(primal) : fabs(dual);
    if (diff < 0.0 && -diff <= 64.0 * DBL_EPSILON * scale) diff = 0.0;
    S->dual = dual;
    S->absgap = diff;
    S->gap = primal > 0.0 ? diff / primal : (diff == 0.0 ? 0.0 : R_PosInf);
}

static void sp_dual_gap(sp_state *S)
{
    sp_dual_gap_at(S, NULL);
}

/* A second dual point for the hinge loss with the block 1-norm, tried when the gap is just above
   tol: the dual of the SVM on the combined kernel sum_m d_m K_m with the current weights d_m =
   ||f_m|| / sum_l ||f_l|| and C_svm = sum_l ||f_l|| / C1 (at the optimum, the MKL dual point is
   that SVM's y a / C_svm), by SMO warm-started from the projected rho; u = y a / C_svm lies in
   the box with sum(u) = 0 whatever the SMO accuracy, and sp_dual_gap_at scales it into the
   C1-balls. The better of the two dual values is kept. The projected rho loses most where a few
   active kernels overshoot their C1-ball: bench-spicy's seed-1 data (ringnorm N = 2000, 20
   kernels, C = 0.5), after four outer iterations, gap 1.06e-2 -> 4.0e-3 (tol 0.01), which saves
   the fifth outer iteration. Cost: the combined kernel (mk_store_combine: a pass over the active
   kernels into an n x n matrix, allocated on first use) and the SMO. */
static void sp_svm_dual(sp_state *S)
{
    int n = S->n, M = S->M;
    if (!S->Kd) {
        S->Kd = (double *) mk_alloc_huge((size_t) n * n * sizeof(double));
        S->sva = (double *) R_alloc(3 * (size_t) n, sizeof(double));
        S->svw = (double *) R_alloc(M, sizeof(double));
    }
    int nk = 0;
    for (int m = 0; m < M; m++) {
        S->svw[m] = S->anz[m] ? S->anorm[m] / S->sumnorm : 0.0;
        nk += S->anz[m] != 0;
    }
    if (nk == 0) return;
    S->nsvm++;
    mk_store_combine(S->st, S->svw, S->Kd);
    S->nprod += nk;
    double csvm = S->sumnorm / S->C1, *a = S->sva, *g = S->sva + n, *u = S->sva + 2 * (size_t) n;
    for (int i = 0; i < n; i++) {
        double t = S->y[i] * S->rho[i];
        a[i] = (t > 0.0 ? (t < 1.0 ? t : 1.0) : 0.0) * csvm;
    }
    mk_svm_result res;
    mk_smo(S->Kd, n, S->y, csvm, SP_SVM_TOL, SP_SVM_ITER * n, a, g, &res);
    for (int i = 0; i < n; i++) u[i] = S->y[i] * a[i] / csvm;
    double d0 = S->dual, ag0 = S->absgap, g0 = S->gap;
    sp_dual_gap_at(S, u);
    if (S->o->verbose)
        Rprintf("spicy      SVM dual point: %d SMO iterations, gap %.3e -> %.3e\n", res.iter, g0,
                S->gap);
    if (S->dual > d0) S->nsvm_won++;
    else { S->dual = d0; S->absgap = ag0; S->gap = g0; }
}

/* ------------------------------------------------------------------ the driver */

static const char *const sp_hist_names[] = { "time", "objective", "dual", "gap", "n_active",
                                             "newton", NULL };

/* Outer loop: Newton on phi, proximal update, dual value and gap, gamma schedule. Returns 0
   converged (gap <= tol), 1 iteration limit; the number of iterations in *iter. */
/* Hinge with the CG solve: the switch to the box (sp_box_direction) at the start of an outer
   iteration, once at most box_fraction n coordinates of rho lie strictly inside it (y rho in
   (1e-3, 1 - 1e-3)). The soft walls' Newton systems cost n^2 per product and kernel read
   whatever the free set; the box's cost follows the free set (its block, the columns of the
   nonzeros of rho and D), which at the solution is small on data with few margin points.
   Returns 1 if it switched: rho is clipped into the box, the slack variables are dropped (the
   box holds rho itself) and the start's kernel products are recomputed at the clipped rho (one
   sweep of every kernel). */
static int sp_box_switch(sp_state *S)
{
    int n = S->n, nfree = 0;
    const double *y = S->y;
    double *rho = S->rho;
    for (int i = 0; i < n; i++) {
        double t = y[i] * rho[i];
        nfree += t > SP_BOX_INNER && t < 1.0 - SP_BOX_INNER;
    }
    if (S->o->verbose > 1)
        Rprintf("spicy: %d of %d coordinates inside the box\n", nfree, n);
    if ((double) nfree > S->o->box_fraction * n) return 0;
    for (int i = 0; i < n; i++) {
        double t = y[i] * rho[i];
        if (t < 0.0) rho[i] = 0.0; else if (t > 1.0) rho[i] = y[i];
    }
    S->box = 1;
    S->warm = 1;
    sp_start(S);
    S->gvalid = 0;
    return 1;
}

static int sp_run(sp_state *S, mk_hist *hist, int *iter)
{
    const sp_opts *o = S->o;
    int status = 1, it;
    sp_start(S);
    S->gam_s = S->gamma < SP_GS_MAX ? S->gamma : SP_GS_MAX;
    /* hinge with the CG solve: softer slack walls than the kernels' gamma (at n = 2000 the
       stiff walls cut the Newton steps; below cg_threshold the Cholesky Newton copes, and
       with many kernels softer walls let rho wander out of the box and wake more kernels) */
    S->slack = (S->L->pieces && S->use_cg) ? o->slack_ratio : 1.0;
    S->irel = o->inner_rel;
    S->absgap = 0.0;
    S->gcap = o->gamma_max;
    S->itol = o->inner_tol;
    double gap_prev = R_PosInf;
    if (S->irel > 0.0) {
        /* the gap at the starting point (primal from sp_start) sets the first inner loop's
           tolerance; the cold start is certified below C1 in every kernel: no kernel is read */
        sp_dual_gap(S);
        gap_prev = S->gap;
    }
    for (it = 0; it < o->maxiter; it++) {
        S->itcur = it;
        if (S->boxok && !S->box && it > 0 && sp_box_switch(S)) {
            S->boxfrom = it + 1;
            if (o->verbose) Rprintf("spicy: rho in the box from outer iteration %d\n", it + 1);
        }
        /* proximal parameter of the loss slack variables: the kernel one, or (epsilon-
           insensitive loss) its own schedule, raised only while the Newton loops stay short:
           its smoothed kink has width 2 eps / gsl and must stay resolvable by Newton's method */
        S->gsl = S->L->own_gamma ? S->gam_s : S->gamma * S->slack;
        int inner_ok;
        double gnorm0, gnorm_last;
        int nnewton = sp_newton(S, &inner_ok, &gnorm0, &gnorm_last);
        S->newton_total += nnewton;
        sp_tick(S, 1);
        /* The proximal step is taken even when the inner loop stopped early (iteration limit or
           a failed line search): the outer iteration still makes progress, and rejecting such
           steps hurts the semismooth hinge case. Inner loops that end without meeting inner_tol
           are counted. */
        int unsolved = !inner_ok && !(gnorm_last <= 1e-3 * gnorm0);
        if (unsolved) S->nrejected++;
        sp_prox_update(S);
        R_CheckUserInterrupt();   /* the dual sweep may read every kernel */
        sp_dual_gap(S);
        if (o->svm_dual && S->L->pieces && S->L->binary && S->C2 <= 0.0 && S->C1 > 0.0 &&
            S->sumnorm > 0.0 && S->gap > o->tol && S->gap <= SP_SVM_GAP * o->tol) {
            R_CheckUserInterrupt();
            sp_svm_dual(S);
        }
        mk_progress_tick(o->prog, it + 1, o->maxiter, S->gap, o->tol);
        sp_tick(S, 7);
        double row[6] = { mk_time() - S->t0, S->primal, S->dual, S->gap, (double) S->nactive,
                          (double) nnewton };
        mk_hist_add(hist, row);
        if (o->verbose)
            Rprintf("spicy %3d: primal %.6g dual %.6g gap %.3e active %d newton %d sweeps %ld gamma %.1e\n",
                    it + 1, S->primal, S->dual, S->gap, S->nactive, nnewton, S->nprod, S->gamma);
        if (S->gap <= o->tol) { status = 0; it++; break; }
        /* the relaxed inner tolerance must not stall the outer loop: an outer iteration that
           did not reduce the gap tightens it tenfold (down to inner_tol) */
        if (!(S->gap < gap_prev)) S->irel *= 0.1;
        /* The drift of the inexact proximal step: an inner loop that stops before its first
           Newton step (its gradient under the absolute tolerance itol sqrt(n)) leaves rho as it
           is, and the proximal update on that rho can move alpha the same way in every outer
           iteration, the gap growing linearly and no step ever taken again. An outer iteration
           without a Newton step that did not reduce the gap therefore tightens itol tenfold
           (down to SP_ITOL_FLOOR inner_tol), and steps gamma and gamma_b back by gamma_mult,
           keeping them below that (at most SP_BACKOFF_MAX times a fit: a tighter tolerance may
           be out of reach at gamma = 1e8). Hinge, n = 300, 10 kernels, C1 = 10, tol 1e-8, CG:
           the gap rose from 1.8e-8 to 1.4e-7 at gamma = 1e8 and the fit ran to maxiter (500);
           either change alone left it there (inner loops at their limit at 1e8; or the gap
           drifting up at 1e6); both converge in 10 outer iterations. */
        if (nnewton == 0 && inner_ok && !(S->gap < gap_prev)) {
            if (S->itol * 0.1 >= SP_ITOL_FLOOR * o->inner_tol) S->itol *= 0.1;
            if (S->nbackoff < SP_BACKOFF_MAX && o->gamma_mult > 1.0) {
                S->gcap = S->gamma / o->gamma_mult;
                S->gamma = S->gcap;
                if (S->gammab > S->gcap) S->gammab = S->gcap;
                S->nbackoff++;
            }
            if (o->verbose)
                Rprintf("spicy      no step, no gain: gamma %.1e (cap), inner tolerance %.1e\n",
                        S->gcap, S->itol);
        }
        gap_prev = S->gap;
        /* The proximal parameters grow only after an inner problem that was solved: the
           proximal iteration converges at any fixed gamma, and a larger gamma makes the next
           inner problem harder (hinge at n = 2000, C = 0.5: inner loops at the iteration limit
           from gamma = 1e4 on, the gap oscillating for six more outer iterations). At most
           SP_HOLD_MAX times in a row: inner problems that stay unsolved at a fixed gamma (an
           inner iteration limit far too small) must not stop the schedule */
        S->nhold = unsolved ? S->nhold + 1 : 0;
        if (S->nhold == 0 || S->nhold > SP_HOLD_MAX) {
            S->nhold = 0;
            S->gamma *= o->gamma_mult; if (S->gamma > S->gcap) S->gamma = S->gcap;
            S->gammab *= o->gamma_mult; if (S->gammab > S->gcap) S->gammab = S->gcap;
        }
        if (nnewton <= SP_GS_NEWTON) {
            S->gam_s *= o->gamma_mult; if (S->gam_s > o->gamma_max) S->gam_s = o->gamma_max;
        }
    }
    mk_progress_done(o->prog);
    if (o->verbose)
        Rprintf("spicy times: init %.3f grad %.3f hess %.3f solve %.3f model %.3f screen %.3f "
                "prod %.3f ls %.3f outer %.3f\n", S->tm[0], S->tm[1], S->tm[2], S->tm[3], S->tm[8],
                S->tm[4], S->tm[5], S->tm[6], S->tm[7]);
    if (o->verbose && S->box)
        Rprintf("spicy box: free coordinates %ld (%.1f a step), set changes %ld, rounds %ld, "
                "unsettled %ld\n",
                S->bxfree, S->newton_total > 0 ? (double) S->bxfree / S->newton_total : 0.0,
                S->bxclip, S->bxround, S->bxfail);
    *iter = it;
    return status;
}

/* The solver on plain arrays. alpha: n x M (in/out), b, rho (n, in/out), aux (2n, in/out),
   gam (2: gamma, gamma_b; in/out); warm: rho and aux hold a previous state. History rows go to
   hist; norms[m] = ||alpha_m||_{K_m}; kbounds (M x 2) the kernels' screening constants
   (mk_kernel_stats). Scratch from R_alloc. Returns 0 converged, 1 limit. */
static int sp_fit(const mk_store *st, const double *y, int loss, const sp_opts *o,
                  double *alpha, double *b, double *rho, double *aux, double *gam, int warm,
                  mk_hist *hist, double *norms, double *kbounds, sp_result *res)
{
    sp_state S;
    memset(&S, 0, sizeof(S));
    int n = st->n, M = st->M;
    size_t nM = (size_t) n * M;
    S.t0 = mk_time(); S.tq = S.t0;
    S.st = st; S.n = n; S.M = M; S.y = y; S.L = &sp_losses[loss]; S.o = o;
    S.C1 = o->C1; S.C2 = o->C2; S.eps = o->eps;
    S.alpha = alpha; S.b = b; S.rho = rho; S.aux = aux; S.warm = warm;
    S.gamma = gam[0]; S.gammab = gam[1];
    S.nt_max = mk_threads(o->nthreads);
    S.scr = mk_store_scratch(st);
    if (S.scr > 0) {
        S.kbuf = (double *) R_alloc((size_t) S.nt_max * S.scr, sizeof(double));
        S.hbuf = (double *) R_alloc((size_t) S.nt_max * 4 * S.scr, sizeof(double));
    }
    S.rsbuf = (double *) R_alloc((size_t) S.nt_max * n, sizeof(double));
    S.inS = (int *) R_alloc(M, sizeof(int));
    S.anz = (int *) R_alloc(M, sizeof(int));
    S.list = (int *) R_alloc(M, sizeof(int));
    S.flag = (int *) R_alloc(M, sizeof(int));
    S.stamp = (int *) R_alloc(M, sizeof(int));
    S.act = (int *) R_alloc(M, sizeof(int));
    /* n x M arrays: huge pages where the system gives them (first touch, see mk_alloc_huge) */
    S.Ka = (double *) mk_alloc_huge(nM * sizeof(double));
    S.Kr = (double *) mk_alloc_huge(nM * sizeof(double));
    S.KD = (double *) mk_alloc_huge(nM * sizeof(double));
    S.REF = (double *) mk_alloc_huge(nM * sizeof(double));
    S.nref = (double *) R_alloc(M, sizeof(double));
    S.rmean = (double *) R_alloc(M, sizeof(double));
    S.rc2 = (double *) R_alloc(M, sizeof(double));
    S.rt = (double *) R_alloc(M, sizeof(double));
    S.K1 = (double *) mk_alloc_huge(nM * sizeof(double));
    S.sqL = (double *) R_alloc(M, sizeof(double));
    S.s1 = (double *) R_alloc(M, sizeof(double));
    S.anorm = (double *) R_alloc(M, sizeof(double));
    S.r = (double *) R_alloc(M, sizeof(double));
    S.sm = (double *) R_alloc(M, sizeof(double));
    S.Bq = (double *) R_alloc(M, sizeof(double));
    S.Dq = (double *) R_alloc(M, sizeof(double));
    S.ubv = (double *) R_alloc(M, sizeof(double));
    S.ua = (double *) R_alloc(M, sizeof(double));
    S.cf = (double *) R_alloc(6 * (size_t) M, sizeof(double));
    S.cfid = (int *) R_alloc(M, sizeof(int));
    S.segid = 0; S.dsc = 1.0;
    S.xa = (double *) R_alloc(n, sizeof(double));
    S.hc1 = (double *) R_alloc(M, sizeof(double));
    S.hc2 = (double *) R_alloc(M, sizeof(double));
    S.use_cg = o->cg < 0 ? (n >= o->cg_threshold) : o->cg;
    /* the Newton matrix: in single precision with the CG solve from MK_TRI_MIN rows (its CG
       products read half the bytes; the exact gradient and line search keep the iterates'
       accuracy), else H in double */
    memset(&S.nm, 0, sizeof(S.nm));
    S.nm.n = n;
    if (o->single && S.use_cg && n >= MK_TRI_MIN) {
        S.nm.P = (float *) mk_alloc_huge((size_t) n * (n + 1) / 2 * sizeof(float));
        S.nm.dg = (double *) R_alloc(n, sizeof(double));
        S.nm.xf = (float *) R_alloc(n, sizeof(float));
        S.nm.yf = (float *) R_alloc((size_t) S.nt_max * n, sizeof(float));
        S.hpan = (double *) R_alloc((size_t) S.nt_max * SP_PANEL * n, sizeof(double));
    } else {
        S.H = (double *) mk_alloc_huge((size_t) n * n * sizeof(double));
        S.hpan = NULL;
    }
    S.nm.H = S.H;
    /* the Newton matrix cache: one more n x n matrix */
    if (o->cache > 0 || (o->cache < 0 && S.use_cg)) {
        S.G = (double *) mk_alloc_huge((size_t) n * n * sizeof(double));
        S.gc1 = (double *) R_alloc(M, sizeof(double));
        S.zn = (double *) R_alloc(n, sizeof(double));
        S.zM = (double *) R_alloc(M, sizeof(double));
        memset(S.zn, 0, sizeof(double) * (size_t) n);
        memset(S.zM, 0, sizeof(double) * (size_t) M);
    }
    /* Cholesky needs a copy of H to factor; CG only vectors, and the free block */
    int fcap = 0;
    if (S.use_cg) {
        double cap = cbrt(6.0 * SP_BLOCK_KAPPA * (double) n * (double) n);
        if (cap < SP_BLOCK_MIN) cap = SP_BLOCK_MIN;
        fcap = cap < n ? (int) cap : n;
    }
    mk_pcblock_init(&S.fb, fcap);
    /* the model direction: hinge-type losses with the CG solve */
    if (S.use_cg && S.L->pieces && o->model_rounds > 0)
        S.mw = (double *) R_alloc(12 * (size_t) n, sizeof(double));
    /* ... whose CG solves are deflated by up to cg_deflate directions */
    memset(&S.df, 0, sizeof(S.df));
    if (S.mw && o->deflate > 0) mk_defl_alloc(&S.df, n, o->deflate < n ? o->deflate : n);
    S.work = (double *) R_alloc((S.use_cg ? 0 : (size_t) n * n) + 5 * (size_t) n,
                                sizeof(double));
    S.qt = S.use_cg ? (double *) R_alloc((size_t) S.nt_max * n, sizeof(double)) : NULL;
    S.g = (double *) R_alloc(n, sizeof(double));
    S.hl = (double *) R_alloc(n, sizeof(double));
    S.D = (double *) R_alloc(n, sizeof(double));
    S.tmp = (double *) R_alloc(n, sizeof(double));
    S.z = (double *) R_alloc(n, sizeof(double));
    S.u = (double *) R_alloc(n, sizeof(double));
    S.primal = S.dual = S.gap = NA_REAL;
    /* the box (sp_box_direction): hinge with the CG solve and the model direction */
    S.box = S.boxfrom = S.boxleft = S.itcur = 0;
    S.boxok = o->box_fraction > 0.0 && S.L == &sp_losses[0] && S.mw != NULL;
    int boxable = S.boxok;
    S.bxclip = S.bxfree = S.bxfail = S.bxround = 0;
    S.bxcap = 0;
    S.bxH = NULL;
    if (S.boxok) {
        S.bxi = (int *) R_alloc(n, sizeof(int));
        S.bxc = (int *) R_alloc(n, sizeof(int));
        S.bxs = (int *) R_alloc(n, sizeof(int));
        S.nzr = (int *) R_alloc(n, sizeof(int));
        S.nzd = (int *) R_alloc(n, sizeof(int));
        S.vzr = (double *) R_alloc(n, sizeof(double));
        S.vzd = (double *) R_alloc(n, sizeof(double));
        S.bxd = (double *) R_alloc(n, sizeof(double));
        S.bxF = (double *) R_alloc(7 * (size_t) n, sizeof(double));
    }

    int it;
    int status = sp_run(&S, hist, &it);

    gam[0] = S.gamma; gam[1] = S.gammab;
    for (int m = 0; m < M; m++) norms[m] = S.anz[m] ? S.anorm[m] : 0.0;
    /* the screening constants of the first sweep (M x 2 column-major: sqrt(1'K 1), the bound of
       sqrt(lambda_max(PKP))) */
    for (int m = 0; m < M; m++) { kbounds[m] = S.s1[m]; kbounds[M + m] = S.sqL[m]; }
    res->primal = S.primal; res->dual = S.dual; res->gap = S.gap; res->iter = it;
    res->status = status; res->sumnorm = S.sumnorm; res->n_active = S.nactive;
    res->newton = S.newton_total; res->cgit = S.cgit; res->cgblock = S.fb.used;
    res->rebuilds = S.G ? S.grefresh : NA_INTEGER;
    res->model = S.mw ? S.nmodel : NA_INTEGER;
    res->deflated = S.df.kmax > 0 ? S.df.used : NA_INTEGER;
    res->single = S.nm.P != NULL;
    res->ls_fail = S.ls_fail; res->floor = S.nfloor;
    res->svm = S.nsvm; res->svm_won = S.nsvm_won;
    res->nprod = S.nprod; res->rejected = S.nrejected; res->backoff = S.nbackoff;
    res->box = boxable ? S.boxfrom : NA_INTEGER;
    res->boxleft = boxable ? S.boxleft : NA_INTEGER;
    return status;
}

/* ------------------------------------------------------------------ .Call wrapper */

/* mkc_spicy(store, y, control, init)
   control (named, R/spicy.R): loss (code), C1, C2, eps, tol, maxiter, inner_tol, inner_maxiter,
     nthreads, verbose, cg (-1 auto, 0 Cholesky, 1 CG), cg_threshold, newton_cache (-1 with
     CG, 0, 1), model_rounds (>= 0), cg_deflate (>= 0), newton_float (0, 1), slack_ratio (> 0),
     inner_rel (>= 0), svm_dual (0, 1),
     screening (0: every kernel in the working set; for testing), lazy_screening, gamma0,
     gamma_b, gamma_mult, gamma_max.
   init: NULL (cold start) or a named list alpha (n*M), b, rho (n), aux (2n), gamma (2). */
SEXP mkc_spicy(SEXP store, SEXP y, SEXP control, SEXP init)
{
    int nprot = 0;
    mk_store st;
    mk_store_read(store, &st);
    if (!st.square || st.nr != st.n) error("SpicyMKL needs a square training kernel store");
    if (!isReal(y)) error("y must be a double vector");
    int n = st.n, M = st.M;
    if (LENGTH(y) != n) error("length(y) must equal the number of training points of the store");
    if (n < 2) error("need at least two observations");
    if (M < 1) error("need at least one kernel");
    if (!isNewList(control)) error("'control' must be a named list");

    int loss = mk_ctl_int(control, "loss");
    if (loss < 0 || loss >= SP_NLOSS) error("unknown loss code %d", loss);
    sp_opts o;
    o.C1 = mk_ctl_real(control, "C1");
    o.C2 = mk_ctl_real(control, "C2");
    o.eps = mk_ctl_real(control, "eps");
    o.tol = mk_ctl_real(control, "tol");
    o.maxiter = mk_ctl_int(control, "maxiter");
    o.inner_tol = mk_ctl_real(control, "inner_tol");
    o.inner_maxiter = mk_ctl_int(control, "inner_maxiter");
    o.nthreads = mk_ctl_int(control, "nthreads");
    o.verbose = mk_ctl_int(control, "verbose");
    o.cg = mk_ctl_int(control, "cg");
    o.cg_threshold = mk_ctl_int(control, "cg_threshold");
    o.cache = mk_ctl_int(control, "newton_cache");
    o.model_rounds = mk_ctl_int(control, "model_rounds");
    o.deflate = mk_ctl_int(control, "cg_deflate");
    o.single = mk_ctl_int(control, "newton_float");
    o.slack_ratio = mk_ctl_real(control, "slack_ratio");
    o.inner_rel = mk_ctl_real(control, "inner_rel");
    o.box_fraction = mk_ctl_real(control, "box_fraction");
    o.svm_dual = mk_ctl_int(control, "svm_dual");
    o.screen = mk_ctl_int(control, "screening");
    o.lazy = mk_ctl_int(control, "lazy_screening");
    double gamma0 = mk_ctl_real(control, "gamma0"), gammab0 = mk_ctl_real(control, "gamma_b");
    o.gamma_mult = mk_ctl_real(control, "gamma_mult");
    o.gamma_max = mk_ctl_real(control, "gamma_max");
    mk_progress prog;
    mk_progress_init(&prog, control);
    o.prog = &prog;
    if (o.maxiter < 1) o.maxiter = 1;
    if (o.model_rounds < 0 || o.deflate < 0) error("model_rounds and cg_deflate must be >= 0");
    if (!(o.slack_ratio > 0.0) || !(o.inner_rel >= 0.0)) error("invalid slack_ratio or inner_rel");
    if (!(o.box_fraction >= 0.0 && o.box_fraction <= 1.0)) error("box_fraction must be in [0, 1]");
    if (o.inner_maxiter < 1) o.inner_maxiter = 1;
    if (!(o.C1 >= 0.0) || !(o.C2 >= 0.0) || !(o.C1 + o.C2 > 0.0)) error("invalid C1, C2");
    if (!(gamma0 > 0.0) || !(gammab0 > 0.0) || !(o.gamma_mult >= 1.0))
        error("invalid gamma schedule");
    if (!(o.eps >= 0.0)) error("epsilon must be >= 0");
    const double *yy = REAL(y);
    if (sp_losses[loss].binary)
        for (int i = 0; i < n; i++) if (yy[i] != 1.0 && yy[i] != -1.0) error("y must be in {-1, +1}");

    size_t nM = (size_t) n * M;
    SEXP alpha = PROTECT(allocMatrix(REALSXP, n, M)); nprot++;
    SEXP rho = PROTECT(allocVector(REALSXP, n)); nprot++;
    SEXP aux = PROTECT(allocVector(REALSXP, 2 * (R_xlen_t) n)); nprot++;
    SEXP gv = PROTECT(allocVector(REALSXP, 2)); nprot++;
    SEXP norms = PROTECT(allocVector(REALSXP, M)); nprot++;
    SEXP kb = PROTECT(allocMatrix(REALSXP, M, 2)); nprot++;
    double *al = REAL(alpha), *gam = REAL(gv), b = 0.0;
    memset(al, 0, sizeof(double) * nM);
    memset(REAL(rho), 0, sizeof(double) * n);
    memset(REAL(aux), 0, sizeof(double) * 2 * n);
    gam[0] = gamma0; gam[1] = gammab0;
    int warm = 0;
    if (!isNull(init)) {
        if (!isNewList(init)) error("'init' must be NULL or a named list");
        mk_list_copy(init, "alpha", al, (R_xlen_t) nM);
        mk_list_copy(init, "b", &b, 1);
        mk_list_copy(init, "rho", REAL(rho), n);
        mk_list_copy(init, "aux", REAL(aux), 2 * (R_xlen_t) n);
        mk_list_copy(init, "gamma", gam, 2);
        if (!(gam[0] > 0.0) || !(gam[1] > 0.0)) error("invalid init$gamma");
        warm = 1;
    }
    mk_hist hist;
    mk_hist_init(&hist, 6);
    sp_result res;
    memset(&res, 0, sizeof(res));
    sp_fit(&st, yy, loss, &o, al, &b, REAL(rho), REAL(aux), gam, warm, &hist, REAL(norms), REAL(kb),
           &res);

    static const char *const nm[] = { "alpha", "b", "rho", "aux", "gamma", "primal", "dual",
                                      "gap", "converged", "iterations", "n_active", "sumnorm",
                                      "newton", "cg_iter", "kernel_sweeps", "history", "norms",
                                      "rejected", "cg_block", "floor", "rebuilds", "model",
                                      "deflated", "single", "svm_dual", "kernel_bounds",
                                      "backoff", "box", "box_left", NULL };
    SEXP out = mk_list_new(nm); nprot++;
    SET_VECTOR_ELT(out, 0, alpha);
    SET_VECTOR_ELT(out, 1, ScalarReal(b));
    SET_VECTOR_ELT(out, 2, rho);
    SET_VECTOR_ELT(out, 3, aux);
    SET_VECTOR_ELT(out, 4, gv);
    SET_VECTOR_ELT(out, 5, ScalarReal(res.primal));
    SET_VECTOR_ELT(out, 6, ScalarReal(res.dual));
    SET_VECTOR_ELT(out, 7, ScalarReal(res.gap));
    SET_VECTOR_ELT(out, 8, ScalarLogical(res.status == 0));
    SET_VECTOR_ELT(out, 9, ScalarInteger(res.iter));
    SET_VECTOR_ELT(out, 10, ScalarInteger(res.n_active));
    SET_VECTOR_ELT(out, 11, ScalarReal(res.sumnorm));
    SET_VECTOR_ELT(out, 12, ScalarInteger(res.newton));
    SET_VECTOR_ELT(out, 13, ScalarInteger(res.cgit));
    SET_VECTOR_ELT(out, 14, ScalarReal((double) res.nprod));
    SET_VECTOR_ELT(out, 15, mk_hist_sexp(&hist, sp_hist_names));
    SET_VECTOR_ELT(out, 16, norms);
    SET_VECTOR_ELT(out, 17, ScalarInteger(res.rejected));
    SET_VECTOR_ELT(out, 18, ScalarInteger(res.cgblock));
    SET_VECTOR_ELT(out, 19, ScalarInteger(res.floor));
    SET_VECTOR_ELT(out, 20, ScalarInteger(res.rebuilds));
    SET_VECTOR_ELT(out, 21, ScalarInteger(res.model));
    SET_VECTOR_ELT(out, 22, ScalarInteger(res.deflated));
    SET_VECTOR_ELT(out, 23, ScalarLogical(res.single));
    SEXP sv = PROTECT(allocVector(INTSXP, 2)); nprot++;
    INTEGER(sv)[0] = res.svm; INTEGER(sv)[1] = res.svm_won;
    SET_VECTOR_ELT(out, 24, sv);
    SET_VECTOR_ELT(out, 25, kb);
    SET_VECTOR_ELT(out, 26, ScalarInteger(res.backoff));
    SET_VECTOR_ELT(out, 27, ScalarInteger(res.box));
    SET_VECTOR_ELT(out, 28, ScalarInteger(res.boxleft));
    UNPROTECT(nprot);
    return out;
}
