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

/* Platt's negative log-likelihood at (a, b), z = a f + b:
   sum_i w_i (-t_i log plogis(z_i) - (1 - t_i) log plogis(-z_i)). w NULL: every weight 1. */
double mk_platt_value(const double *f, const double *t, const double *w, R_xlen_t n, double a,
                      double b)
{
    long double s = 0.0;
    for (R_xlen_t i = 0; i < n; i++) {
        const double z = a * f[i] + b, ti = t[i];
        double v = (-ti) * plogis(z, 0.0, 1.0, 1, 1) - (1 - ti) * plogis(-z, 0.0, 1.0, 1, 1);
        if (w) v = w[i] * v;
        s += v;
    }
    return (double) s;
}

/* Its derivatives into out[5] = (g_A, g_B, H_AA, H_AB, H_BB): p = plogis(z), r = w (p - t),
   g = (sum r f, sum r), h = w p (1 - p), H = (sum h f f, sum h f, sum h). */
void mk_platt_derivs(const double *f, const double *t, const double *w, R_xlen_t n, double a,
                     double b, double *out)
{
    long double s[5] = {0.0, 0.0, 0.0, 0.0, 0.0};
    for (R_xlen_t i = 0; i < n; i++) {
        const double p = plogis(a * f[i] + b, 0.0, 1.0, 1, 0);
        double r = p - t[i], h = p;
        if (w) { r = w[i] * r; h = w[i] * p; }
        h = h * (1 - p);
        const double hf = h * f[i];
        s[0] += r * f[i]; s[1] += r; s[2] += hf * f[i]; s[3] += hf; s[4] += h;
    }
    for (int k = 0; k < 5; k++) out[k] = (double) s[k];
}

/* Per column j of the n x p matrix x: sum_i (x_ij - c_j)^2 and max_i |x_ij| into out (2 x p). */
void mk_colstats(const double *x, R_xlen_t n, int p, const double *c, double *out)
{
    for (int j = 0; j < p; j++) {
        const double *col = x + (size_t) j * n;
        long double s = 0.0;
        double mag = R_NegInf;
        for (R_xlen_t i = 0; i < n; i++) {
            const double d = col[i] - c[j];
            s += d * d;
            const double v = fabs(col[i]);
            if (v > mag) mag = v;
        }
        out[2 * j] = (double) s;
        out[2 * j + 1] = mag;
    }
}

/* out = (x - c_j) / s_j column by column (n x p). */
void mk_colsweep(const double *x, R_xlen_t n, int p, const double *c, const double *s,
                 double *out)
{
    for (int j = 0; j < p; j++) {
        const double *col = x + (size_t) j * n;
        double *o = out + (size_t) j * n;
        for (R_xlen_t i = 0; i < n; i++) o[i] = (col[i] - c[j]) / s[j];
    }
}

/* ------------------------------------------------------------------ .Call entries */

SEXP mkc_platt_pass(SEXP f, SEXP t, SEXP w, SEXP par, SEXP derivs)
{
    if (!isReal(f)) error("'f' must be a double vector");
    const R_xlen_t n = XLENGTH(f);
    const double *tv = front_reals(t, n, "'t' must have length(f) doubles");
    const double *wv = isNull(w) ? NULL :
        front_reals(w, n, "'w' must be NULL or length(f) doubles");
    const double *pv = front_reals(par, 2, "'par' must be two doubles");
    if (!asLogical(derivs)) return ScalarReal(mk_platt_value(REAL(f), tv, wv, n, pv[0], pv[1]));
    SEXP out = PROTECT(allocVector(REALSXP, 5));
    mk_platt_derivs(REAL(f), tv, wv, n, pv[0], pv[1], REAL(out));
    UNPROTECT(1);
    return out;
}

SEXP mkc_front_colstats(SEXP x, SEXP center)
{
    if (!isReal(x) || !isMatrix(x)) error("'x' must be a double matrix");
    const int p = ncols(x);
    const double *c = front_reals(center, p, "'center' must have ncol(x) doubles");
    SEXP out = PROTECT(allocMatrix(REALSXP, 2, p));
    mk_colstats(REAL(x), nrows(x), p, c, REAL(out));
    UNPROTECT(1);
    return out;
}

/* One copy of x with its attributes (as sweep()). */
SEXP mkc_front_sweep(SEXP x, SEXP center, SEXP scale)
{
    if (!isReal(x) || !isMatrix(x)) error("'x' must be a double matrix");
    const int n = nrows(x), p = ncols(x);
    const double *c = front_reals(center, p, "'center' must have ncol(x) doubles");
    const double *s = front_reals(scale, p, "'scale' must have ncol(x) doubles");
    SEXP out = PROTECT(allocMatrix(REALSXP, n, p));
    DUPLICATE_ATTRIB(out, x);
    mk_colsweep(REAL(x), n, p, c, s, REAL(out));
    UNPROTECT(1);
    return out;
}
