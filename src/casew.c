/* Case weights: the kernel scale of a weighted fit, the weighted mean diagonal of the training
 * kernels (averaged over the kernels), on which C is converted (R/cscale.R): a row of weight 2
 * counts as two rows, as when it is duplicated. */
#include "mklearn.h"

SEXP mkc_case_kscale(SEXP store, SEXP w)
{
    mk_store st;
    mk_store_read(store, &st);
    if (!st.square) error("the kernel scale needs a training store");
    const int n = st.n, M = st.M;
    if (!isReal(w) || XLENGTH(w) != n) error("'w' must be %d doubles", n);
    const double *wp = REAL(w);
    double sw = 0.0;
    for (int i = 0; i < n; i++) sw += wp[i];
    if (!(sw > 0.0)) error("the case weights sum to zero");
    double *d = (double *) R_alloc(n, sizeof(double));
    long double tot = 0.0;
    for (int m = 0; m < M; m++) {
        mk_store_diag(&st, m, d);
        long double t = 0.0;
        for (int i = 0; i < n; i++) t += (long double) wp[i] * d[i];
        tot += t / sw;
    }
    return ScalarReal((double) (tot / M));
}
