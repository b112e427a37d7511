/* SpicyMKL: the loss table. One entry per loss code (MK_LOSS_*): the loss value, the loss part
 * of phi with its gradient and diagonal Hessian, multiplier start and update, the conjugate at a
 * feasible dual point, the projection onto the dual box, the step cap.
 * Case weights w (NULL: all 1, with the same bits): the loss w_i loss_i, whose conjugate is
 * w_i loss*(u_i / w_i): the dual box of point i is scaled by w_i (hinge, logistic: 0 <= y u <=
 * w_i; epsilon: |u| <= w_i), the squared loss's conjugate term is u^2 / (2 w_i), and the slack
 * prox of the epsilon-insensitive loss is taken with g w_i. Every w_i > 0 (R leaves out the
 * rows of weight 0).
 */
#include "spicy.h"

/* hinge */
/* the weight of point i (1 without case weights) */
#define SP_W(w, i) ((w) ? (w)[i] : 1.0)

static double hinge_value(int n, const double *y, const double *z, double eps, const double *w)
{
    (void) eps;
    double s = 0.0;
    for (int i = 0; i < n; i++) {
        double v = 1.0 - y[i] * z[i];
        s += v > 0.0 ? SP_W(w, i) * v : 0.0;
    }
    return s;
}

static double hinge_phi(int n, const double *y, const double *rho, const double *aux, double g,
                        double eps, double *grad, double *hess, const double *w)
{
    (void) eps;
    double s = 0.0;
    for (int i = 0; i < n; i++) {
        double t = y[i] * rho[i];
        double p = aux[i] - g * (SP_W(w, i) - t), q = aux[n + i] - g * t;
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
                             double eps, const double *w)
{
    (void) eps;
    for (int i = 0; i < n; i++) {
        double t = y[i] * rho[i];
        double p = aux[i] - g * (SP_W(w, i) - t), q = aux[n + i] - g * t;
        aux[i] = p > 0.0 ? p : 0.0;
        aux[n + i] = q > 0.0 ? q : 0.0;
    }
}

static double hinge_neg_conj(int n, const double *y, const double *u, double eps,
                             const double *w)
{
    (void) eps; (void) w;
    double s = 0.0;
    for (int i = 0; i < n; i++) s += y[i] * u[i];
    return s;
}

/* logistic */
static double logistic_value(int n, const double *y, const double *z, double eps,
                             const double *w)
{
    (void) eps;
    double s = 0.0;
    for (int i = 0; i < n; i++) {
        double v = -y[i] * z[i];
        s += SP_W(w, i) * ((v > 0.0 ? v : 0.0) + log1p(exp(-fabs(v))));
    }
    return s;
}

/* weighted: w_i (t log t + (1 - t) log(1 - t)) with t = y rho / w_i */
static double logistic_phi(int n, const double *y, const double *rho, const double *aux,
                           double g, double eps, double *grad, double *hess, const double *w)
{
    (void) aux; (void) g; (void) eps;
    double s = 0.0;
    for (int i = 0; i < n; i++) {
        double wi = SP_W(w, i), t = y[i] * rho[i] / wi;
        if (!(t > 0.0 && t < 1.0)) return R_PosInf;
        s += wi * (t * log(t) + (1.0 - t) * log1p(-t));
        if (grad) grad[i] = y[i] * (log(t) - log1p(-t));
        if (hess) hess[i] = 1.0 / (t * (1.0 - t)) / wi;
    }
    return s;
}

/* 0 log 0 = 0 */
static double logistic_neg_conj(int n, const double *y, const double *u, double eps,
                                const double *w)
{
    (void) eps;
    double s = 0.0;
    for (int i = 0; i < n; i++) {
        double wi = SP_W(w, i), t = y[i] * u[i] / wi;
        if (t > 0.0) s -= wi * (t * log(t));
        if (t < 1.0) s -= wi * ((1.0 - t) * log1p(-t));
    }
    return s;
}

static void logistic_interior(int n, const double *y, double *rho, const double *w)
{
    for (int i = 0; i < n; i++) {
        double wi = SP_W(w, i), t = y[i] * rho[i] / wi;
        if (!(t > 1e-8)) t = 1e-8;
        if (!(t < 1.0 - 1e-8)) t = 1.0 - 1e-8;
        rho[i] = y[i] * t * wi;
    }
}

/* Stay strictly inside 0 < y rho < 1. Coordinates close to the boundary (well-classified
   points, t ~ 1e-10) would otherwise shrink the whole step to nothing once gamma is large:
   truncate their own steps to 99.5% of the way to the boundary, and scale the whole step only
   if that truncated direction is not a descent direction. */
static void logistic_cap(int n, const double *y, const double *rho, const double *g, double *D,
                         double *tmp, const double *w)
{
    double dmax = 0.0;
    for (int i = 0; i < n; i++) if (fabs(D[i]) > dmax) dmax = fabs(D[i]);
    double c = 1.0, gt = 0.0;
    for (int i = 0; i < n; i++) {
        double wi = SP_W(w, i), t = y[i] * rho[i] / wi, dt = y[i] * D[i] / wi;
        if (dt > 0.0 && t + dt >= 1.0) dt = 0.995 * (1.0 - t);
        if (dt < 0.0 && t + dt <= 0.0) dt = -0.995 * t;
        tmp[i] = y[i] * dt * wi;
        gt += g[i] * tmp[i];
    }
    if (gt < 0.0) {
        memcpy(D, tmp, sizeof(double) * n);
        dmax = 0.0;
        for (int i = 0; i < n; i++) if (fabs(D[i]) > dmax) dmax = fabs(D[i]);
    } else {
        for (int i = 0; i < n; i++) {
            double wi = SP_W(w, i), t = y[i] * rho[i] / wi, dt = y[i] * D[i] / wi;
            if (dt > 0.0 && t + dt >= 1.0) {
                double cc = 0.995 * (1.0 - t) / dt;
                if (cc < c) c = cc;
            }
            if (dt < 0.0 && t + dt <= 0.0) { double cc = 0.995 * t / (-dt); if (cc < c) c = cc; }
        }
    }
    double cap = c * dmax;
    if (dmax > cap) for (int i = 0; i < n; i++) D[i] *= cap / dmax;
}

/* squared */
static double squared_value(int n, const double *y, const double *z, double eps,
                            const double *w)
{
    (void) eps;
    double s = 0.0;
    for (int i = 0; i < n; i++) { double v = y[i] - z[i]; s += SP_W(w, i) * (0.5 * v * v); }
    return s;
}

static double squared_phi(int n, const double *y, const double *rho, const double *aux,
                          double g, double eps, double *grad, double *hess, const double *w)
{
    (void) aux; (void) g; (void) eps;
    double s = 0.0;
    for (int i = 0; i < n; i++) {
        double r = rho[i], wi = SP_W(w, i);
        s += 0.5 * r * r / wi - y[i] * r;
        if (grad) grad[i] = r / wi - y[i];
        if (hess) hess[i] = 1.0 / wi;
    }
    return s;
}

static double squared_neg_conj(int n, const double *y, const double *u, double eps,
                               const double *w)
{
    (void) eps;
    double s = 0.0;
    for (int i = 0; i < n; i++) s += y[i] * u[i] - 0.5 * u[i] * u[i] / SP_W(w, i);
    return s;
}

/* the squared loss has no box: only sum(u) = 0 */
static void squared_project(int n, const double *y, double *u, const double *w)
{
    (void) y; (void) w;
    double m = 0.0;
    for (int i = 0; i < n; i++) m += u[i];
    m /= n;
    for (int i = 0; i < n; i++) u[i] -= m;
}

/* epsilon-insensitive */
static double epsilon_value(int n, const double *y, const double *z, double eps,
                            const double *w)
{
    double s = 0.0;
    for (int i = 0; i < n; i++) {
        double v = fabs(y[i] - z[i]) - eps;
        s += v > 0.0 ? SP_W(w, i) * v : 0.0;
    }
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
                          double g, double eps, double *grad, double *hess, const double *w)
{
    double s = 0.0;
    for (int i = 0; i < n; i++) {
        double r = rho[i], d, st = aux[i], wi = SP_W(w, i);
        double p = sp_prox_eps(st - g * r, y[i], eps, g * wi, &d);
        double l = fabs(p - y[i]) - eps;
        if (l < 0.0) l = 0.0;
        s -= wi * l + r * p + (p - st) * (p - st) / (2.0 * g);
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
                               double eps, const double *w)
{
    for (int i = 0; i < n; i++) {
        double d;
        aux[i] = sp_prox_eps(aux[i] - g * rho[i], y[i], eps, g * SP_W(w, i), &d);
    }
}

static double epsilon_neg_conj(int n, const double *y, const double *u, double eps,
                               const double *w)
{
    (void) w;
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

/* 0 <= y u <= w_i (hinge, logistic) */
static void ybox_project(int n, const double *y, double *u, const double *w)
{
    for (int i = 0; i < n; i++) {
        double t = y[i] * u[i], wi = SP_W(w, i);
        if (t < 0.0) t = 0.0;
        if (t > wi) t = wi;
        u[i] = y[i] * t;
    }
    sp_balance(n, u);
}

/* -w_i <= u <= w_i (epsilon-insensitive) */
static void box1_project(int n, const double *y, double *u, const double *w)
{
    (void) y;
    for (int i = 0; i < n; i++) {
        double wi = SP_W(w, i);
        if (u[i] > wi) u[i] = wi;
        if (u[i] < -wi) u[i] = -wi;
    }
    sp_balance(n, u);
}

/* Box-type dual variables live on a scale of 1: a longer step only costs kernel sweeps in the
   screening and is cut by the line search. */
static void box_cap(int n, const double *y, const double *rho, const double *g, double *D,
                    double *tmp, const double *w)
{
    (void) y; (void) rho; (void) g; (void) tmp; (void) w;
    double dmax = 0.0, cap = SP_STEP_CAP;
    for (int i = 0; i < n; i++) if (fabs(D[i]) > dmax) dmax = fabs(D[i]);
    if (dmax > cap) for (int i = 0; i < n; i++) D[i] *= cap / dmax;
}

/* The loss table, indexed by the loss code (R/spicy.R: spicy_loss_codes).
   Levenberg-Marquardt: the piecewise-quadratic epsilon part has coordinates without curvature
   of their own between its kinks; a term that vanishes with the gradient keeps the Newton
   direction bounded there. The hinge runs without it (it hurt tight tolerances). */
/* the size of the definition must match the declaration in spicy.h: one entry per code */
const sp_loss sp_losses[] = {
    /* name        binary rho0 equil lm    own_gamma pieces */
    [MK_LOSS_HINGE] =
    { "hinge",     1,     0.5, 0,    0.0,  0,        1, hinge_value, hinge_phi,
      hinge_aux_start, hinge_aux_update, hinge_neg_conj, ybox_project, NULL, box_cap },
    [MK_LOSS_LOGISTIC] =
    { "logistic",  1,     0.5, 1,    0.0,  0,        0, logistic_value, logistic_phi, NULL,
      NULL, logistic_neg_conj, ybox_project, logistic_interior, logistic_cap },
    [MK_LOSS_SQUARED] =
    { "squared",   0,     1.0, 0,    0.0,  0,        0, squared_value, squared_phi, NULL,
      NULL, squared_neg_conj, squared_project, NULL, NULL },
    [MK_LOSS_EPSILON] =
    { "epsilon",   0,     1.0, 0,    0.01, 1,        0, epsilon_value, epsilon_phi,
      epsilon_aux_start, epsilon_aux_update, epsilon_neg_conj, box1_project, NULL, box_cap },
};
