/* C-SVM dual: SMO with second-order working-set selection (Fan, Chen & Lin, JMLR 2005).
 * min_a (1/2) a'Qa - e'a, 0 <= a_i <= C_i, y'a = 0, Q = diag(y) K diag(y); C_i = C, or C w_i
 * with case weights (a per-point box, as libsvm's weighted variant). K's columns come from a
 * column source: a whole kernel in memory, or the bounded column cache of kcache.c (on the
 * fly: inst/notes/NOTES-store.md, "Column cache"). */
#include "mklearn.h"
#include <math.h>
#include <float.h>

#define TAU 1e-12

/* Make a warm start feasible: clip to the box, then scale the heavier class down so y'a = 0. */
void mk_svm_project(int n, const double *y, const double *C, double *a)
{
    double sp = 0.0, sn = 0.0;
    for (int i = 0; i < n; i++) {
        if (!(a[i] > 0.0)) a[i] = 0.0;       /* also catches NaN */
        if (a[i] > C[i]) a[i] = C[i];
        if (y[i] > 0) sp += a[i]; else sn += a[i];
    }
    if (fabs(sp - sn) <= 1e-13 * (sp + sn)) return;   /* feasible up to rounding */
    if (sp > sn) {
        double f = sn / sp;
        for (int i = 0; i < n; i++) if (y[i] > 0) a[i] *= f;
    } else {
        double f = sp / sn;
        for (int i = 0; i < n; i++) if (y[i] < 0) a[i] *= f;
    }
}

/* A point with an empty box (C_i = 0: case weight 0) says nothing about b. */
double mk_svm_bias(int n, const double *y, const double *C, const double *a, const double *G)
{
    double ub = INFINITY, lb = -INFINITY, sfree = 0.0;
    int nfree = 0;
    for (int i = 0; i < n; i++) {
        double yG = y[i] * G[i];
        if (!(C[i] > 0.0)) continue;
        if (a[i] >= C[i]) {
            if (y[i] < 0) ub = fmin(ub, yG); else lb = fmax(lb, yG);
        } else if (a[i] <= 0.0) {
            if (y[i] > 0) ub = fmin(ub, yG); else lb = fmax(lb, yG);
        } else {
            nfree++;
            sfree += yG;
        }
    }
    double rho = nfree > 0 ? sfree / nfree : 0.5 * (ub + lb);
    return -rho;
}

int mk_smo(const double *K, int n, const double *y, double C, double tol, int maxiter,
           double *alpha, double *G, mk_svm_result *res)
{
    return mk_smo_box(K, n, y, C, NULL, tol, maxiter, 0, alpha, G, res);
}

/* the column source of a whole kernel in memory: pointers into it */
static const double *whole_col(mk_qsrc *q, int i, int slot)
{
    (void) slot;
    return q->K + (size_t) i * q->n;
}

static void whole_diag(mk_qsrc *q, double *d)
{
    for (int t = 0; t < q->n; t++) d[t] = q->K[(size_t) t * q->n + t];
}

int mk_smo_box(const double *K, int n, const double *y, double Cs, const double *box,
               double tol, int maxiter, int shrink, double *alpha, double *G, mk_svm_result *res)
{
    mk_qsrc q = { whole_col, whole_diag, K, n, NULL };
    return mk_smo_src(&q, n, y, Cs, box, tol, maxiter, shrink, alpha, G, res);
}

/* The choice of i: point t of I_up (y > 0 below its bound, y < 0 above 0) replaces the best so far
   (Gm, im) when its -y G is at least as large */
static inline void pick_up(double yt, double at, double Ct, double g, int t, double *Gm, int *im)
{
    if (yt > 0) {
        if (at < Ct && -g >= *Gm) { *Gm = -g; *im = t; }
    } else {
        if (at > 0.0 && g >= *Gm) { *Gm = g; *im = t; }
    }
}

/* G[t] = (Q a)_t - 1 for the points t of rows (nrows of them; rows NULL: every point), summed
   over the non-zero alphas in index order: the start of a solve, and the points shrinking set
   aside when they come back */
static void smo_grad(mk_qsrc *q, int n, const double *y, const double *a, double *G,
                     const int *rows, int nrows)
{
    if (rows) for (int k = 0; k < nrows; k++) G[rows[k]] = -1.0;
    else for (int t = 0; t < n; t++) G[t] = -1.0;
    for (int i = 0; i < n; i++) {
        if (a[i] == 0.0) continue;
        const double *Ki = q->col(q, i, 0);
        double ai = a[i] * y[i];
        if (rows) for (int k = 0; k < nrows; k++) { int t = rows[k]; G[t] += ai * y[t] * Ki[t]; }
        else for (int t = 0; t < n; t++) G[t] += ai * y[t] * Ki[t];
    }
}

/* The set aside points back in the active set (act: every point, ascending), their G rebuilt.
   Returns n. */
static int smo_unshrink(mk_qsrc *q, int n, const double *y, const double *a, double *G,
                        int *act, int na, int *out)
{
    int nout = 0, k = 0;
    for (int t = 0; t < n; t++) {
        if (k < na && act[k] == t) k++;
        else out[nout++] = t;
    }
    if (nout > 0) smo_grad(q, n, y, a, G, out, nout);
    for (int t = 0; t < n; t++) act[t] = t;
    return n;
}

/* Shrinking (libsvm's rule, Chang & Lin 2011, section 5.1): a point at a bound that cannot be
   in a violating pair while the largest violations on either side stay as they are leaves the
   active set act (na points, ascending). The first time the violation over act is within
   10 tol, every point comes back (G rebuilt) before it shrinks again. Returns the new na.
   Measurements: inst/notes/NOTES-model.md, "Shrinking in the inner SMO". */
static int smo_shrink(mk_qsrc *q, int n, const double *y, const double *a, const double *C,
                      double *G, int *act, int na, double tol, int *unshrunk, int *out)
{
    double g1 = -INFINITY, g2 = -INFINITY;   /* max over I_up of -y G, over I_low of y G */
    int i1 = -1;
    for (int k = 0; k < na; k++) {
        int t = act[k];
        pick_up(y[t], a[t], C[t], G[t], t, &g1, &i1);
        if (y[t] > 0) { if (a[t] > 0.0 && G[t] > g2) g2 = G[t]; }
        else if (a[t] < C[t] && -G[t] > g2) g2 = -G[t];
    }
    if (!*unshrunk && g1 + g2 <= 10.0 * tol) {
        *unshrunk = 1;
        na = smo_unshrink(q, n, y, a, G, act, na, out);
    }
    int m = 0;
    for (int k = 0; k < na; k++) {
        int t = act[k], gone = 0;
        if (a[t] >= C[t]) gone = y[t] > 0 ? -G[t] > g1 : -G[t] > g2;
        else if (a[t] <= 0.0) gone = y[t] > 0 ? G[t] > g2 : G[t] > g1;
        if (!gone) act[m++] = t;
    }
    return m;
}

/* The first i of a selection: the max over I_up of -y G among the na points of act
   (*Gmax; -1 when I_up is empty there). */
static int smo_first_i(const int *act, int na, const double *y, const double *a,
                       const double *C, const double *G, double *Gmax)
{
    double g = -INFINITY;
    int i = -1;
    for (int k = 0; k < na; k++) {
        int t = act[k];
        pick_up(y[t], a[t], C[t], G[t], t, &g, &i);
    }
    *Gmax = g;
    return i;
}

/* j: the second-order gain over I_low among the na points of act, given i (column Ki, Kii) and
   Gmax = -y_i G_i; *Gmax2 = max over those of I_low of y G. -1 when none gains. */
static int smo_select_j(const int *act, int na, const double *y, const double *a,
                        const double *C, const double *G, const double *Ki, double Kii,
                        const double *Kdiag, double Gmax, double *Gmax2)
{
    double obj_min = INFINITY, g2 = -INFINITY;
    int j = -1;
    for (int k = 0; k < na; k++) {
        int t = act[k];
        double mgt; /* -y_t G_t, only for t in I_low */
        if (y[t] > 0) {
            if (!(a[t] > 0.0)) continue;
            mgt = -G[t];
        } else {
            if (!(a[t] < C[t])) continue;
            mgt = G[t];
        }
        if (-mgt > g2) g2 = -mgt;
        double bdiff = Gmax - mgt;
        if (bdiff > 0.0) {
            double quad = Kii + Kdiag[t] - 2.0 * Ki[t];
            if (quad <= 0.0) quad = TAU;
            double o = -(bdiff * bdiff) / quad;
            if (o <= obj_min) { obj_min = o; j = t; }
        }
    }
    *Gmax2 = g2;
    return j;
}

int mk_smo_src(mk_qsrc *q, int n, const double *y, double Cs, const double *box,
               double tol, int maxiter, int shrink, double *alpha, double *G, mk_svm_result *res)
{
    double *a = alpha;
    /* the box of every point (C_i = C bit for bit without case weights) */
    const void *vmax = vmaxget();
    double *C = (double *) R_alloc(n, sizeof(double));
    for (int t = 0; t < n; t++) C[t] = box ? box[t] : Cs;
    mk_svm_project(n, y, C, a);

    /* gradient G = Q a - e, accumulated over the non-zero alphas */
    smo_grad(q, n, y, a, G, NULL, n);

    /* the diagonal, read by every working-set selection, in its own vector (released on exit:
       the MKL solvers call this thousands of times within one .Call) */
    double *Kdiag = (double *) R_alloc(n, sizeof(double));
    q->diag(q, Kdiag);
    /* the active set (every point until shrinking sets some aside; shrink 0: always every
       point, the same iterates as without it); out: scratch of the set aside points */
    int *act = (int *) R_alloc(2 * (size_t) n, sizeof(int)), *out = act + n;
    for (int t = 0; t < n; t++) act[t] = t;
    int na = n, unshrunk = 0, counter = (n < 1000 ? n : 1000) + 1;

    int iter = 0, status = 1;
    double viol = 0.0, tlast = mk_time(), Gnext, work = 0.0;
    /* the first i; each later one is found by the pass that updates G (below) */
    int inext = smo_first_i(act, na, y, a, C, G, &Gnext);
    while (iter < maxiter) {
        if ((iter & 1023) == 1023) mk_interrupt_every(&tlast, 0.02);
        if (shrink && --counter == 0) {
            counter = n < 1000 ? n : 1000;
            na = smo_shrink(q, n, y, a, C, G, act, na, tol, &unshrunk, out);
            inext = smo_first_i(act, na, y, a, C, G, &Gnext);
        }
        /* select i: max over I_up of -y G; j: second order gain over I_low (on the active set) */
        double Gmax = Gnext, Gmax2 = -INFINITY;
        int i = inext, j = -1;
        const double *Ki = NULL;
        double Kii = 0.0;
        if (i >= 0) {
            Ki = q->col(q, i, 0);
            Kii = Ki[i];
            j = smo_select_j(act, na, y, a, C, G, Ki, Kii, Kdiag, Gmax, &Gmax2);
        }
        work += na;
        viol = i >= 0 ? Gmax + Gmax2 : 0.0;
        if (i < 0 || viol < tol || j < 0) {
            if (na == n) { status = 0; break; }
            /* optimal on the active set: bring the others back, look again over every point
               (the next pass, not shrinking before it) and shrink after the next iteration */
            na = smo_unshrink(q, n, y, a, G, act, na, out);
            counter = 2;
            inext = smo_first_i(act, na, y, a, C, G, &Gnext);
            continue;
        }
        iter++;

        const double *Kj = q->col(q, j, 1);   /* Ki stays valid: another slot */
        double Qij = y[i] * y[j] * Ki[j];
        double ai_old = a[i], aj_old = a[j];
        if (y[i] != y[j]) {
            double quad = Kii + Kj[j] + 2.0 * Qij;
            if (quad <= 0.0) quad = TAU;
            double delta = (-G[i] - G[j]) / quad;
            double diff = a[i] - a[j];
            a[i] += delta; a[j] += delta;
            if (diff > 0.0) { if (a[j] < 0.0) { a[j] = 0.0; a[i] = diff; } }
            else            { if (a[i] < 0.0) { a[i] = 0.0; a[j] = -diff; } }
            if (diff > C[i] - C[j]) { if (a[i] > C[i]) { a[i] = C[i]; a[j] = C[i] - diff; } }
            else                    { if (a[j] > C[j]) { a[j] = C[j]; a[i] = C[j] + diff; } }
        } else {
            double quad = Kii + Kj[j] - 2.0 * Qij;
            if (quad <= 0.0) quad = TAU;
            double delta = (G[i] - G[j]) / quad;
            double sum = a[i] + a[j];
            a[i] -= delta; a[j] += delta;
            if (sum > C[i]) { if (a[i] > C[i]) { a[i] = C[i]; a[j] = sum - C[i]; } }
            else            { if (a[j] < 0.0) { a[j] = 0.0; a[i] = sum; } }
            if (sum > C[j]) { if (a[j] > C[j]) { a[j] = C[j]; a[i] = sum - C[j]; } }
            else            { if (a[i] < 0.0) { a[i] = 0.0; a[j] = sum; } }
        }
        double di = (a[i] - ai_old) * y[i], dj = (a[j] - aj_old) * y[j];
        /* the update of G and the next choice of i in one pass (inst/notes/NOTES-model.md,
           "The solver's passes"); over the whole range, without the index, while nothing is
           set aside */
        Gnext = -INFINITY; inext = -1;
        if (na == n) {
            for (int t = 0; t < n; t++) {
                G[t] += y[t] * (Ki[t] * di + Kj[t] * dj);
                pick_up(y[t], a[t], C[t], G[t], t, &Gnext, &inext);
            }
        } else {
            for (int k = 0; k < na; k++) {
                int t = act[k];
                G[t] += y[t] * (Ki[t] * di + Kj[t] * dj);
                pick_up(y[t], a[t], C[t], G[t], t, &Gnext, &inext);
            }
        }
    }
    /* stopped at the iteration cap with points set aside: their G for the bias and objective */
    if (na < n) na = smo_unshrink(q, n, y, a, G, act, na, out);

    mk_svm_finish(n, y, C, a, G, viol, iter, status, res);
    res->work = work;
    vmaxset(vmax);
    return status;
}

void mk_svm_finish(int n, const double *y, const double *C, const double *a, const double *G,
                   double viol, int iter, int status, mk_svm_result *res)
{
    double obj = 0.0;
    for (int t = 0; t < n; t++) obj += a[t] * (1.0 - G[t]);
    res->obj = 0.5 * obj;
    res->b = mk_svm_bias(n, y, C, a, G);
    res->viol = viol;
    res->iter = iter;
    res->status = status;
    res->work = 0.0;
}

SEXP mkc_smo(SEXP K, SEXP y, SEXP C, SEXP alpha0, SEXP tol, SEXP maxiter)
{
    if (!isReal(K) || !isReal(y) || !isReal(alpha0)) error("'K', 'y', 'alpha0' must be double");
    int n = LENGTH(y);
    if ((R_xlen_t) n * n != XLENGTH(K) || LENGTH(alpha0) != n) error("dimension mismatch");
    /* C: one box constant, or one per point (case weights: C w_i, zero allowed) */
    const double *box = isReal(C) && XLENGTH(C) == n && n != 1 ? REAL(C) : NULL;
    if (!box && XLENGTH(C) != 1) error("'C' must be one number or one per point");
    double c = asReal(C), eps = asReal(tol);
    int mi = asInteger(maxiter);
    if (box) {
        c = 0.0;
        for (int i = 0; i < n; i++) {
            if (!(box[i] >= 0.0) || !R_FINITE(box[i])) error("invalid C, tol or maxiter");
            if (box[i] > c) c = box[i];
        }
    }
    if (!(c > 0.0) || !(eps > 0.0) || mi < 1) error("invalid C, tol or maxiter");
    int nprot = 0;
    SEXP a = PROTECT(duplicate(alpha0)); nprot++;
    double *G = (double *) R_alloc(n, sizeof(double));
    mk_svm_result r;
    mk_smo_box(REAL(K), n, REAL(y), c, box, eps, mi, 0, REAL(a), G, &r);
    SEXP out = mk_svm_sexp(a, &r, NULL);
    UNPROTECT(nprot + 1);
    return out;
}

SEXP mkc_smo_store(SEXP store, SEXP y, SEXP C, SEXP d, SEXP alpha0, SEXP tol, SEXP maxiter,
                   SEXP cache)
{
    mk_store st;
    mk_store_read(store, &st);
    if (!st.square || st.nr != st.n) error("the SMO needs a square training store");
    const int n = st.n;
    if (!isReal(y) || !isReal(alpha0) || !isReal(d) || !isReal(C))
        error("'y', 'alpha0', 'd', 'C' must be double");
    if (LENGTH(y) != n || LENGTH(alpha0) != n || LENGTH(d) != st.M) error("dimension mismatch");
    const double *box = XLENGTH(C) == n && n != 1 ? REAL(C) : NULL;
    if (!box && XLENGTH(C) != 1) error("'C' must be one number or one per point");
    double c = box ? 0.0 : REAL(C)[0], eps = asReal(tol);
    if (box) for (int i = 0; i < n; i++) if (box[i] > c) c = box[i];
    int mi = asInteger(maxiter), ent = asInteger(cache);
    if (!(c > 0.0) || !R_FINITE(c) || !(eps > 0.0) || mi < 1 || ent < 0)
        error("invalid C, tol, maxiter or cache");
    mk_kcache kc;
    mk_kcache_init(&kc, &st, ent);
    mk_kcsrc cs;
    mk_kcsrc_init(&cs, &kc);
    mk_kcsrc_set(&cs, REAL(d));
    SEXP a = PROTECT(duplicate(alpha0));
    double *G = (double *) R_alloc(n, sizeof(double));
    mk_svm_result r;
    mk_smo_src(&cs.q, n, REAL(y), c, box, eps, mi, 0, REAL(a), G, &r);
    SEXP out = mk_svm_sexp(a, &r, NULL);
    UNPROTECT(2);
    return out;
}

SEXP mk_svm_sexp(SEXP alpha, const mk_svm_result *r, const char *work)
{
    const char *nms[] = {"alpha", "b", "objective", "violation", "iterations", "converged",
                         work, NULL};
    SEXP out = mk_list_new(nms);
    if (work) mk_list_set(out, work, ScalarReal(r->work));
    mk_list_set(out, "alpha", alpha);
    mk_list_set(out, "b", ScalarReal(r->b));
    mk_list_set(out, "objective", ScalarReal(r->obj));
    mk_list_set(out, "violation", ScalarReal(r->viol));
    mk_list_set(out, "iterations", ScalarInteger(r->iter));
    mk_list_set(out, "converged", ScalarLogical(r->status == 0));
    return out;
}
