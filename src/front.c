/* The R front end's passes over n rows done in C, so that they leave R no garbage: Platt's
   sigmoid (R/methods.R platt_fit()), whose Newton loop made about two dozen n-vectors per
   iteration, and the standardisation of x (R/utils.R standardize_x()), whose sweeps made about
   ten copies of x. The arithmetic is R's (elementwise in double, sums in long double in order,
   as sum() and colSums()), so the results are those of the R code to the bit
   (NOTES-store.md, "R front end"). */
#include "mklearn.h"
#include <Rmath.h>
#include <math.h>

#pragma GCC optimize ("fp-contract=off")

static const double *front_reals(SEXP v, R_xlen_t len, const char *what)
{
    if (!isReal(v) || XLENGTH(v) != len) error("%s", what);
    return REAL(v);
}

/* Platt's negative log-likelihood at par = (A, B), z = A f + B:
   sum_i w_i (-t_i log plogis(z_i) - (1 - t_i) log plogis(-z_i)) (derivs FALSE); or
   (g_A, g_B, H_AA, H_AB, H_BB) with p = plogis(z), r = w (p - t), g = (sum r f, sum r),
   h = w p (1 - p), H = (sum h f f, sum h f, sum h). w NULL: every weight 1. */
SEXP mkc_platt_pass(SEXP f, SEXP t, SEXP w, SEXP par, SEXP derivs)
{
    if (!isReal(f)) error("'f' must be a double vector");
    const R_xlen_t n = XLENGTH(f);
    const double *fv = REAL(f), *tv = front_reals(t, n, "'t' must have length(f) doubles");
    const double *wv = isNull(w) ? NULL :
        front_reals(w, n, "'w' must be NULL or length(f) doubles");
    const double *pv = front_reals(par, 2, "'par' must be two doubles");
    const double a = pv[0], b = pv[1];
    if (!asLogical(derivs)) {
        long double s = 0.0;
        for (R_xlen_t i = 0; i < n; i++) {
            const double z = a * fv[i] + b, ti = tv[i];
            double v = (-ti) * plogis(z, 0.0, 1.0, 1, 1) - (1 - ti) * plogis(-z, 0.0, 1.0, 1, 1);
            if (wv) v = wv[i] * v;
            s += v;
        }
        return ScalarReal((double) s);
    }
    long double s[5] = {0.0, 0.0, 0.0, 0.0, 0.0};
    for (R_xlen_t i = 0; i < n; i++) {
        const double p = plogis(a * fv[i] + b, 0.0, 1.0, 1, 0);
        double r = p - tv[i], h = p;
        if (wv) { r = wv[i] * r; h = wv[i] * p; }
        h = h * (1 - p);
        const double hf = h * fv[i];
        s[0] += r * fv[i]; s[1] += r; s[2] += hf * fv[i]; s[3] += hf; s[4] += h;
    }
    SEXP out = PROTECT(allocVector(REALSXP, 5));
    for (int k = 0; k < 5; k++) REAL(out)[k] = (double) s[k];
    UNPROTECT(1);
    return out;
}

/* Per column j of the n x p matrix x: sum_i (x_ij - center_j)^2 and max_i |x_ij| (2 x p). */
SEXP mkc_front_colstats(SEXP x, SEXP center)
{
    if (!isReal(x) || !isMatrix(x)) error("'x' must be a double matrix");
    const R_xlen_t n = nrows(x);
    const int p = ncols(x);
    const double *c = front_reals(center, p, "'center' must have ncol(x) doubles");
    SEXP out = PROTECT(allocMatrix(REALSXP, 2, p));
    for (int j = 0; j < p; j++) {
        const double *col = REAL(x) + (size_t) j * n;
        long double s = 0.0;
        double mag = R_NegInf;
        for (R_xlen_t i = 0; i < n; i++) {
            const double d = col[i] - c[j];
            s += d * d;
            const double v = fabs(col[i]);
            if (v > mag) mag = v;
        }
        REAL(out)[2 * j] = (double) s;
        REAL(out)[2 * j + 1] = mag;
    }
    UNPROTECT(1);
    return out;
}

/* (x - center_j) / scale_j column by column, one copy of x with its attributes (as sweep()). */
SEXP mkc_front_sweep(SEXP x, SEXP center, SEXP scale)
{
    if (!isReal(x) || !isMatrix(x)) error("'x' must be a double matrix");
    const R_xlen_t n = nrows(x);
    const int p = ncols(x);
    const double *c = front_reals(center, p, "'center' must have ncol(x) doubles");
    const double *s = front_reals(scale, p, "'scale' must have ncol(x) doubles");
    SEXP out = PROTECT(allocMatrix(REALSXP, (int) n, p));
    DUPLICATE_ATTRIB(out, x);
    for (int j = 0; j < p; j++) {
        const double *col = REAL(x) + (size_t) j * n;
        double *o = REAL(out) + (size_t) j * n;
        for (R_xlen_t i = 0; i < n; i++) o[i] = (col[i] - c[j]) / s[j];
    }
    UNPROTECT(1);
    return out;
}
