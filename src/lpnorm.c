/* lp-norm MKL (Kloft et al. 2009; Tomioka & Suzuki, Table 1 / Corollary 4), p >= 1.
 *
 * min over ||d||_p <= 1, d >= 0 of J(d) (the SVM dual value on K(d)), by alternating the
 * warm-started SVM at fixed d with the closed-form weight update
 *   ||w_m|| = d_m sqrt(v_m),  d_m = ||w_m||^(2/(p+1)) / (sum_l ||w_l||^(2p/(p+1)))^(1/p),
 * which is the minimiser over the lp ball of sum_m ||w_m||^2 / d_m for the current w.
 * The iterates satisfy ||d||_p = 1 (for p = 1 that is the simplex, and the update is the
 * block 1-norm rule d_m proportional to ||w_m||).  Stopping: the relative gap
 * (J(d) - [sum(a) - ||v(a)||_{p*} / 2]) / J(d), p* = p/(p-1) (max_m v_m for p = 1); see
 * mk_sf_gap in simple.c for why this is a certificate.
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

int mk_lpmkl(mk_sf_work *w, const mk_sf_opts *o, double *d, double *a, double *b,
             mk_sf_hist *h, double *Jout, double *relgap, int *iter, int *reason)
{
    const int M = w->M;
    const double p = o->p;
    double *v = (double *) R_alloc(M, sizeof(double));
    double *wn = (double *) R_alloc(M, sizeof(double));
    lp_normalise(d, M, p);
    double J = mk_sf_svm(w, d, a, b), step = 0.0, rg = INFINITY;
    int it = 0, conv = 0;
    *reason = 1;
    for (;; it++) {
        if (mk_sf_checkpoint(w, o, h, it, J, a, d, v, p, step, &rg, reason)) {
            conv = (*reason == 0);
            break;
        }
        double t = mk_time();
        /* ||w_m||, computed in scaled form: u_m = (||w_m|| / max ||w||)^(2/(p+1)) */
        double wmax = 0.0;
        for (int m = 0; m < M; m++) {
            wn[m] = d[m] * sqrt(v[m] > 0.0 ? v[m] : 0.0);
            if (wn[m] > wmax) wmax = wn[m];
        }
        if (!(wmax > 0.0)) { *reason = 2; break; }
        const double e = 2.0 / (p + 1.0);
        for (int m = 0; m < M; m++) {
            double u = wn[m] / wmax;
            /* weights that underflow relative to the largest are set to zero: they cannot
               come back in the multiplicative update anyway */
            wn[m] = (u > 1e-300) ? pow(u, e) : 0.0;
        }
        lp_normalise(wn, M, p);
        step = 0.0;
        for (int m = 0; m < M; m++) { step += fabs(wn[m] - d[m]); d[m] = wn[m]; }
        w->t_dir += mk_time() - t;
        J = mk_sf_svm(w, d, a, b);
    }
    *Jout = J; *relgap = rg; *iter = it;
    return conv;
}

SEXP mkc_lpnorm(SEXP K, SEXP y, SEXP C, SEXP d0, SEXP alpha0, SEXP dpar, SEXP ipar)
{
    return mk_sf_call(2, K, y, C, d0, alpha0, dpar, ipar);
}
