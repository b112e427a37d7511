/* SimpleMKL (Rakotomamonjy, Bach, Canu & Grandvalet 2008) as a step strategy of the SVM-family
 * driver (svmfam.c): reduced-gradient descent on the simplex with a line search on J(d).
 *
 * Every trial point d + t D of a step is evaluated on the line kernel K(d) + t K_D: the driver
 * keeps the base K(d), this file sets the direction K_D = sum_m D_m K_m and moves the base as
 * it accepts points, so a trial costs O(n^2) for its kernel instead of a build over all
 * active kernels, and a patched direction (one weight dropped, the largest one rebalanced)
 * updates K_D in O(n^2) per changed weight.
 */
#include "mklearn.h"
#include <math.h>
#include <string.h>

/* Reduced-gradient descent direction on the simplex. g = -v/2; mu = argmax d;
   D_m = -(g_m - g_mu) except 0 where d_m = 0 and that would push d_m below zero;
   D_mu = -sum_{m != mu} D_m. Returns 0 if D is (numerically) zero. */
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

typedef struct {
    double *D, *Dold, *dt, *dold, *at;
    double bestJ, bestb, bestt, *bestd, *besta;   /* line search: the best point seen */
} simple_ws;

void *mk_sf_simple_init(mk_sf_ctx *c)
{
    const int n = c->n, M = c->M;
    simple_ws *w = (simple_ws *) R_alloc(1, sizeof(simple_ws));
    w->D = (double *) R_alloc(M, sizeof(double));
    w->Dold = (double *) R_alloc(M, sizeof(double));
    w->dt = (double *) R_alloc(M, sizeof(double));
    w->dold = (double *) R_alloc(M, sizeof(double));
    w->at = (double *) R_alloc(n, sizeof(double));
    w->bestd = (double *) R_alloc(M, sizeof(double));
    w->besta = (double *) R_alloc(n, sizeof(double));
    return w;
}

/* J(d + t D) on the line kernel, warm-started from the current alpha; keeps the best point. */
static double ls_eval(mk_sf_ctx *c, simple_ws *w, double t)
{
    const int M = c->M, n = c->n;
    double bt;
    move_simplex(c->d, w->D, t, M, -1, w->dt);
    memcpy(w->at, c->a, (size_t) n * sizeof(double));
    double J = c->J_line(c, t, w->at, &bt);
    if (J < w->bestJ) {
        w->bestJ = J; w->bestb = bt; w->bestt = t;
        memcpy(w->bestd, w->dt, (size_t) M * sizeof(double));
        memcpy(w->besta, w->at, (size_t) n * sizeof(double));
    }
    return J;
}

int mk_sf_simple_step(mk_sf_ctx *c, void *vws, int it, const double *v)
{
    simple_ws *w = (simple_ws *) vws;
    const int n = c->n, M = c->M;
    double *d = c->d, *a = c->a, *D = w->D, *Dold = w->Dold, *dt = w->dt, *at = w->at;
    const double r = 0.5 * (3.0 - sqrt(5.0));   /* golden-section fraction 0.382 */
    (void) it;

    double t0 = mk_time();
    memcpy(w->dold, d, (size_t) M * sizeof(double));
    int mu, jb;
    int found = simple_direction(d, v, M, D, &mu);
    c->t_dir += mk_time() - t0;
    if (!found) return MK_SF_STALLED;
    c->dir_combine(c, D);

    /* Descent: go to the largest feasible step while J decreases there; each accepted move
       sets one more weight to zero and the direction is patched (same gradient). */
    double gmax = 0.0, Jfar = 0.0;
    int linesearch = 1;
    for (;;) {
        gmax = max_step(d, D, M, &jb);
        if (!(gmax < INFINITY) || gmax <= 0.0) { linesearch = 0; break; }
        double bt = 0.0;
        int negligible = (jb != mu && d[jb] < 1e-9);
        if (negligible) {
            /* a negligible weight blocks the step: drop it without an SVM solve (J and a
               change by O(1e-9) relative), otherwise it would stall the descent */
            move_simplex(d, D, 0.0, M, jb, dt);
            Jfar = c->J;
        } else {
            move_simplex(d, D, gmax, M, jb, dt);
            memcpy(at, a, (size_t) n * sizeof(double));
            Jfar = c->J_line(c, gmax, at, &bt);
        }
        if (!(negligible || Jfar < c->J)) break;
        if (negligible) {
            /* base = K(dt): take the dropped weights out, renormalise */
            double kept = 0.0;
            for (int m = 0; m < M; m++) {
                if (dt[m] == 0.0 && d[m] != 0.0) c->base_axpy(c, m, -d[m]);
                else kept += d[m];
            }
            c->base_div(c, kept);
        } else {
            c->base_take_line(c);                 /* base = K(d + gmax D) */
            memcpy(a, at, (size_t) n * sizeof(double));
            c->b = bt; c->J = Jfar;
        }
        memcpy(d, dt, (size_t) M * sizeof(double));
        if (jb == mu) { linesearch = 0; break; }
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
        if (nchg > 16) c->dir_combine(c, D);
        else for (int m = 0; m < M; m++)
            if (D[m] != Dold[m]) c->dir_axpy(c, m, D[m] - Dold[m]);
        for (int m = 0; m < M; m++) if (fabs(D[m]) > dmax) dmax = fabs(D[m]);
        if (dmax == 0.0) { linesearch = 0; break; }
    }

    /* Golden-section search for min_t J(d + t D) on [0, gmax], J(0) = J, J(gmax) = Jfar. */
    if (linesearch) {
        const double J = c->J;
        w->bestJ = J; w->bestb = c->b; w->bestt = 0.0;
        memcpy(w->bestd, d, (size_t) M * sizeof(double));
        memcpy(w->besta, a, (size_t) n * sizeof(double));
        double lo = 0.0, hi = gmax;
        double t1 = lo + r * (hi - lo), t2 = hi - r * (hi - lo);
        double f1 = ls_eval(c, w, t1);
        double f2 = ls_eval(c, w, t2);
        while (hi - lo > c->o->gold_tol * gmax) {
            if (f1 < f2) {
                hi = t2; t2 = t1; f2 = f1; t1 = lo + r * (hi - lo);
                f1 = ls_eval(c, w, t1);
            } else {
                lo = t1; t1 = t2; f1 = f2; t2 = hi - r * (hi - lo);
                f2 = ls_eval(c, w, t2);
            }
        }
        /* Near the optimum the best step can be far below gold_tol * gmax: if no point
           improved on t = 0, shrink t by minimising the parabola through J(0), the slope g'D
           at 0 and the smallest trial (at most 30 trials, t shrinks >= 2x each). */
        if (w->bestJ >= J) {
            double slope = 0.0, tt = t1 < t2 ? t1 : t2, ft = t1 < t2 ? f1 : f2;
            for (int m = 0; m < M; m++) slope -= 0.5 * v[m] * D[m];
            for (int k = 0; k < 30 && w->bestJ >= J && tt > 1e-14 * gmax; k++) {
                double tq = 0.1 * tt, den = ft - J - slope * tt;
                if (slope < 0.0 && den > 0.0) {
                    tq = -slope * tt * tt / (2.0 * den);
                    if (tq > 0.5 * tt) tq = 0.5 * tt;
                    if (tq < 1e-3 * tt) tq = 1e-3 * tt;
                }
                tt = tq;
                ft = ls_eval(c, w, tt);
            }
        }
        if (w->bestJ < J) {
            c->base_move(c, w->bestt);            /* base = K(d + t D) */
            c->J = w->bestJ; c->b = w->bestb;
            memcpy(d, w->bestd, (size_t) M * sizeof(double));
            memcpy(a, w->besta, (size_t) n * sizeof(double));
        }
    }
    double step = 0.0;
    for (int m = 0; m < M; m++) step += fabs(d[m] - w->dold[m]);
    /* no decrease found: the comparisons of J are at the limit of the SMO accuracy */
    return step < 1e-12 ? MK_SF_STALLED : MK_SF_MOVED;
}
