/* lp-norm MKL (Kloft et al. 2009; Tomioka & Suzuki, Table 1 / Corollary 4), p >= 1, as a step
 * strategy of the SVM-family driver (svmfam.c).
 *
 * min over ||d||_p <= 1, d >= 0 of J(d) (the SVM dual value on K(d)), by alternating the
 * warm-started SVM at fixed d with the closed-form weight update
 *   ||w_m|| = d_m sqrt(v_m),  d_m = ||w_m||^(2/(p+1)) / (sum_l ||w_l||^(2p/(p+1)))^(1/p),
 * which is the minimiser over the lp ball of sum_m ||w_m||^2 / d_m for the current w.
 * The iterates satisfy ||d||_p = 1 (for p = 1 that is the simplex, and the update is the
 * block 1-norm rule d_m proportional to ||w_m||). The driver certifies them by the lp-dual
 * gap, p* = p/(p-1) (max_m v_m for p = 1).
 */
#include "mklearn.h"
#include <math.h>
#include <string.h>

/* Put d on the unit lp sphere (uniform if d is zero). */
static void lp_normalise(double *d, int M, double p)
{
    double dmax = 0.0, s = 0.0;
    for (int m = 0; m < M; m++) { if (!(d[m] > 0.0)) d[m] = 0.0; if (d[m] > dmax) dmax = d[m]; }
    if (dmax <= 0.0) { for (int m = 0; m < M; m++) d[m] = 1.0; dmax = 1.0; }
    for (int m = 0; m < M; m++) s += pow(d[m] / dmax, p);
    double nrm = dmax * pow(s, 1.0 / p);
    for (int m = 0; m < M; m++) d[m] /= nrm;
}

void mk_sf_lp_start(mk_sf_ctx *c)
{
    lp_normalise(c->d, c->M, c->o->p);
}

void *mk_sf_lp_init(mk_sf_ctx *c)
{
    return R_alloc(c->M, sizeof(double));
}

int mk_sf_lp_step(mk_sf_ctx *c, void *ws, int it, const double *v)
{
    const int M = c->M;
    const double p = c->o->p;
    double *d = c->d, *wn = (double *) ws;
    (void) it;
    double t = mk_time();
    /* ||w_m||, computed in scaled form: u_m = (||w_m|| / max ||w||)^(2/(p+1)) */
    double wmax = 0.0;
    for (int m = 0; m < M; m++) {
        wn[m] = d[m] * sqrt(v[m] > 0.0 ? v[m] : 0.0);
        if (wn[m] > wmax) wmax = wn[m];
    }
    if (!(wmax > 0.0)) { c->t_dir += mk_time() - t; return MK_SF_STALLED; }
    const double e = 2.0 / (p + 1.0);
    for (int m = 0; m < M; m++) {
        double u = wn[m] / wmax;
        /* weights that underflow relative to the largest are set to zero: they cannot come
           back in the multiplicative update anyway */
        wn[m] = (u > 1e-300) ? pow(u, e) : 0.0;
    }
    lp_normalise(wn, M, p);
    memcpy(d, wn, (size_t) M * sizeof(double));
    c->t_dir += mk_time() - t;
    c->J = c->J_at(c, d, c->a, &c->b);
    return MK_SF_MOVED;
}
