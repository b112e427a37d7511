/* SimpleMKL (Rakotomamonjy, Bach, Canu & Grandvalet 2008) as a step strategy of the SVM-family
 * driver (svmfam.c): reduced-gradient descent on the simplex with a line search on J(d).
 *
 * A step follows the descent path (see breakpoints()) while J decreases from one breakpoint
 * (a weight reaching zero) to the next, then line-searches the piece after the last accepted
 * breakpoint. Every point is evaluated on the line kernel: the driver keeps the base K(d) and
 * the direction K_D = sum_m D_m K_m of the current piece; a breakpoint k pieces ahead costs a
 * read of the kernels that leave in between (probe()), a point on the piece O(n^2).
 */
#include "mklearn.h"
#include <math.h>
#include <string.h>

/* Reduced-gradient descent direction on the simplex. g = -v/2; mu = argmax d (among equal
   largest weights, as at the uniform start, the one with the steepest gradient);
   D_m = -(g_m - g_mu) except 0 where d_m = 0 and that would push d_m below zero;
   D_mu = -sum_{m != mu} D_m. Returns 0 if D is (numerically) zero. */
static int simple_direction(const double *d, const double *v, int M, double *D, int *mu_out)
{
    int mu = 0;
    for (int m = 1; m < M; m++) if (d[m] > d[mu] || (d[m] == d[mu] && v[m] > v[mu])) mu = m;
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
    double *D, *D0, *d0, *dt, *dold, *at;
    double bestJ, bestb, bestt, *bestd, *besta;   /* line search: the best point seen */
    /* the breakpoints of the descent path (see descend()) */
    double *ratio, *bT, *bcmu, *coef, *coefd;
    int *order, *bend, *pidx;
} simple_ws;

void *mk_sf_simple_init(mk_sf_ctx *c)
{
    const int n = c->n, M = c->M;
    simple_ws *w = (simple_ws *) R_alloc(1, sizeof(simple_ws));
    w->D = (double *) R_alloc(M, sizeof(double));
    w->D0 = (double *) R_alloc(M, sizeof(double));
    w->d0 = (double *) R_alloc(M, sizeof(double));
    w->dt = (double *) R_alloc(M, sizeof(double));
    w->dold = (double *) R_alloc(M, sizeof(double));
    w->at = (double *) R_alloc(n, sizeof(double));
    w->bestd = (double *) R_alloc(M, sizeof(double));
    w->besta = (double *) R_alloc(n, sizeof(double));
    w->ratio = (double *) R_alloc(M, sizeof(double));
    w->bT = (double *) R_alloc((size_t) M + 2, sizeof(double));
    w->bcmu = (double *) R_alloc((size_t) M + 2, sizeof(double));
    w->coef = (double *) R_alloc((size_t) M + 1, sizeof(double));
    w->coefd = (double *) R_alloc((size_t) M + 1, sizeof(double));
    w->order = (int *) R_alloc((size_t) M + 1, sizeof(int));
    w->bend = (int *) R_alloc((size_t) M + 2, sizeof(int));
    w->pidx = (int *) R_alloc((size_t) M + 1, sizeof(int));
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

/* The descent path of SimpleMKL. From d0 along D0 (D0_mu = -sum of the others) the weights
 * move until one reaches zero; that weight leaves, the direction keeps the other entries and
 * D_mu takes up the change, and so on. Every entry but mu keeps its D0 value while its weight
 * is positive, so the path is d_m(T) = max(0, d0_m + T D0_m) (m != mu), d_mu(T) = 1 - the
 * others, and its breakpoints T_1 < T_2 < ... are the sorted ratios d0_m / -D0_m (kernels with
 * equal ratios leave together), ending where d_mu reaches zero if it does first.
 * Fills bT[1..nb], bend[k] (kernels order[bend[k-1] .. bend[k]-1] leave at T_k; bend[0] = 0),
 * bcmu[k] = d_mu(T_k); returns nb, *mub = 1 when T_nb is where d_mu reaches zero. */
static int breakpoints(simple_ws *w, const double *d0, const double *D0, int M, int mu,
                       int *mub)
{
    int nz = 0;
    for (int m = 0; m < M; m++)
        if (m != mu && D0[m] < 0.0 && d0[m] > 0.0) {
            w->order[nz] = m;
            w->ratio[nz] = -d0[m] / D0[m];
            nz++;
        }
    rsort_with_index(w->ratio, w->order, nz);
    double T = 0.0, cmu = d0[mu], Dmu = D0[mu];
    int pos = 0, nb = 0;
    w->bT[0] = 0.0; w->bend[0] = 0; w->bcmu[0] = cmu;
    *mub = 0;
    while (pos < nz) {
        double r = w->ratio[pos], sD = 0.0;
        int end = pos;
        while (end < nz && w->ratio[end] == r) sD += D0[w->order[end++]];
        if (Dmu < 0.0 && cmu + (r - T) * Dmu <= 0.0) break;   /* d_mu reaches zero first */
        cmu += (r - T) * Dmu; T = r; Dmu += sD;
        nb++;
        w->bT[nb] = T; w->bend[nb] = end; w->bcmu[nb] = cmu;
        pos = end;
    }
    /* Once every decreasing weight has left, D_mu is minus the sum of the increasing entries;
       the running sum above leaves a rounding residue that, negative, would send d_mu (and
       with it every weight) to zero at a huge T. */
    if (pos == nz) {
        double sp = 0.0;
        for (int m = 0; m < M; m++) if (m != mu && D0[m] > 0.0) sp += D0[m];
        Dmu = -sp;
    }
    if (Dmu < 0.0) {
        nb++;
        w->bT[nb] = T + cmu / -Dmu; w->bend[nb] = pos; w->bcmu[nb] = 0.0;
        *mub = 1;
    }
    return nb;
}

/* J at breakpoint k of the path from the accepted breakpoint lo: the line kernel of piece lo
   (B = K(d(T_lo)), KD its direction) carried to T_k, corrected for the kernels that left in
   between (their weights there are 0, not d0_m + T_k D0_m; d_mu takes up the difference). */
static double probe(mk_sf_ctx *c, simple_ws *w, int mu, int lo, int k, double *alpha,
                    double *b)
{
    int p0 = w->bend[lo], cnt = w->bend[k] - p0;
    double se = 0.0, sD = 0.0;
    const double Tk = w->bT[k];
    for (int q = 0; q < cnt; q++) {
        int m = w->order[p0 + q];
        double e = -(w->d0[m] + Tk * w->D0[m]);
        w->pidx[q] = m; w->coef[q] = e; se += e;
        w->coefd[q] = -w->D0[m]; sD += w->D0[m];
    }
    w->pidx[cnt] = mu; w->coef[cnt] = -se; w->coefd[cnt] = sD;
    return c->J_probe(c, Tk - w->bT[lo], w->pidx, w->coef, w->coefd, cnt > 0 ? cnt + 1 : 0,
                      alpha, b);
}

/* Move the accepted point from breakpoint lo to k, whose kernel and direction the last probe
   built (its alpha in w->at): the direction loses the kernels that left, d_mu's entry takes up
   their sum. */
static void accept(mk_sf_ctx *c, simple_ws *w, int mu, int lo, int k, double b, double J)
{
    const int M = c->M;
    int p0 = w->bend[lo], cnt = w->bend[k] - p0;
    double sD = 0.0;
    c->take_probe(c);
    for (int q = 0; q < cnt; q++) {
        int m = w->order[p0 + q];
        sD += w->D0[m];
        w->D[m] = 0.0;
    }
    w->D[mu] += sD;
    /* the weights at T_k */
    const double Tk = w->bT[k];
    double *d = c->d, s = 0.0;
    for (int m = 0; m < M; m++)
        if (m != mu) d[m] = w->D[m] != 0.0 ? w->d0[m] + Tk * w->D[m] : w->d0[m];
    for (int q = 0; q < w->bend[k]; q++) d[w->order[q]] = 0.0;
    d[mu] = w->bcmu[k];
    for (int m = 0; m < M; m++) { if (d[m] < 0.0) d[m] = 0.0; s += d[m]; }
    for (int m = 0; m < M; m++) d[m] /= s;
    memcpy(c->a, w->at, (size_t) c->n * sizeof(double));
    c->b = b; c->J = J;
}

int mk_sf_simple_step(mk_sf_ctx *c, void *vws, int it, const double *v)
{
    simple_ws *w = (simple_ws *) vws;
    const int n = c->n, M = c->M;
    double *d = c->d, *a = c->a, *D = w->D;
    const double r = 0.5 * (3.0 - sqrt(5.0));   /* golden-section fraction 0.382 */
    (void) it;

    double t0 = mk_time();
    memcpy(w->dold, d, (size_t) M * sizeof(double));
    int mu;
    int found = simple_direction(d, v, M, D, &mu);
    c->t_dir += mk_time() - t0;
    if (!found) return MK_SF_STALLED;

    /* Negligible weights (< 1e-9) that D drives to zero leave first, without an SVM solve (J
       changes by O(1e-9) relative): the pieces of the path they would end are too short for
       J to be compared. */
    {
        int nneg = 0;
        for (int m = 0; m < M; m++)
            if (m != mu && D[m] < 0.0 && d[m] > 0.0 && d[m] < 1e-9) {
                c->base_axpy(c, m, -d[m]);
                d[m] = 0.0; D[m] = 0.0; nneg++;
            }
        if (nneg) {
            double sd = 0.0, s = 0.0;
            for (int m = 0; m < M; m++) sd += d[m];
            c->base_div(c, sd);
            for (int m = 0; m < M; m++) d[m] /= sd;
            for (int m = 0; m < M; m++) if (m != mu) s += D[m];
            D[mu] = -s;
        }
    }
    double dmax = 0.0;
    for (int m = 0; m < M; m++) if (fabs(D[m]) > dmax) dmax = fabs(D[m]);
    int nb = 0, mub = 0, klo = 0, khi = -1;
    if (dmax > 0.0) {
        c->dir_combine(c, D);
        memcpy(w->d0, d, (size_t) M * sizeof(double));
        memcpy(w->D0, D, (size_t) M * sizeof(double));
        t0 = mk_time();
        nb = breakpoints(w, d, D, M, mu, &mub);
        c->t_dir += mk_time() - t0;
    }

    /* Descent: SimpleMKL follows the path while J decreases from one breakpoint to the next.
       The breakpoints are visited by galloping (klo + 1, 2, 4, ... ahead) while J keeps
       decreasing, then by bisection between the last accepted breakpoint and the first
       rejected one, so the search ends, as the one-by-one walk does, at a breakpoint klo whose
       successor khi = klo + 1 has no lower J, every accepted move having lowered J. */
    if (nb > 0) {
        double bt;
        int s = 1;
        for (;;) {
            int k = klo + s < nb ? klo + s : nb;
            memcpy(w->at, a, (size_t) n * sizeof(double));
            double Jk = probe(c, w, mu, klo, k, w->at, &bt);
            if (Jk < c->J) {
                accept(c, w, mu, klo, k, bt, Jk);
                klo = k;
                if (k == nb) break;
                s *= 2;
            } else { khi = k; break; }
        }
        while (khi > klo + 1) {
            int k = klo + (khi - klo) / 2;
            memcpy(w->at, a, (size_t) n * sizeof(double));
            double Jk = probe(c, w, mu, klo, k, w->at, &bt);
            if (Jk < c->J) { accept(c, w, mu, klo, k, bt, Jk); klo = k; }
            else khi = k;
        }
    }
    (void) mub;
    int linesearch = khi > klo;
    double gmax = linesearch ? w->bT[khi] - w->bT[klo] : 0.0;

    /* Golden-section search for min_t J(d + t D) on [0, gmax] (the piece klo -> khi), J(0) = J. */
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
