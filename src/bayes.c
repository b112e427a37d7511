/* Empirical Bayesian MKL (Tomioka & Suzuki (2010), Section 3, Eqs. 19-23).
 *
 * Model: y = sum_m f_m + e, f_m ~ GP(0, d_m K_m), e ~ N(0, s2 I), optionally a constant
 * kernel 1 1' with its own variance d0 (the bias). With Kbar = s2 I + sum_m d_m K_m + d0 1 1'
 * and beta = Kbar^{-1} y, the objective is Eq. 19,
 *     J = (1/2) y' beta + (1/2) log |Kbar|,
 * and every variance theta_j of a matrix P_j (K_m, I for the noise, 1 1' for the bias) has
 *     dJ/dtheta_j = (t_j - q_j) / 2,  t_j = tr(Kbar^{-1} P_j),  q_j = beta' P_j beta.
 * MacKay's update (Eq. 23) is theta_j <- theta_j q_j / t_j (fixed point: q_j = t_j, the
 * stationarity condition); the bound-minimisation (MM) update theta_j <- theta_j sqrt(q_j / t_j)
 * minimises a majoriser of J (log |Kbar| is concave in theta: bound it by its tangent; the data
 * term is a minimum over (f_m) of Eq. 20), so it never increases J. With the safeguard on, a
 * MacKay step that would increase J is replaced by the MM step from the same point.
 *
 * Stopping rule: max_j theta_j |t_j - q_j| / 2 = max |dJ / d log theta_j| <= tol (nats), i.e.
 * Eq. 23's fixed point scaled by each variance's share theta_j t_j of the fit.
 *
 * One step at the current point: one combination of the active kernels into Kbar, its inverse
 * and log determinant by one blocked sweep (bayes_inv.c; J and beta from them), then one pass
 * over each active kernel's columns giving both
 * t_m = sum_ij (Kbar^{-1})_ij (K_m)_ij and q_m = beta' K_m beta (no product of two n x n
 * matrices is formed); on a low-rank store the same quantities come from the Woodbury form of
 * Kbar in the factors' ranks (bayes_lowrank.c). A kernel whose share of the prior variance
 * falls below 'prune' leaves the active set for good: it is never combined or read again.
 *
 * Scoring (the default update): once the MacKay steps have brought max |dJ/dlog theta| below
 * EB_SCORING_START, each step is a projected Newton step in theta with the Hessian replaced by
 * Q / 2, Q_jk = (P_j beta)' Kbar^{-1} (P_k beta), an estimate of the Fisher information (its
 * expectation over y is tr(Kbar^{-1} P_j Kbar^{-1} P_k) / 2 = E[Hessian]) that costs one
 * product with Kbar^{-1} per free variance, plus a secant (rank-one) correction learned from
 * the previous scoring point. A variance the step drives below zero is set to
 * zero (a kernel at zero re-enters when its gradient turns negative); a backtracking line
 * search keeps J decreasing, and a step it cannot make falls back to MacKay's.
 * Measurements: inst/notes/NOTES-bayes.md.
 *
 * Every default and the starting point come from the R front end (R/bayes.R). */
#include "bayes.h"

static void point_alloc(eb_point *p, int M)
{
    p->d = (double *) R_alloc(M, sizeof(double));
    p->q = (double *) R_alloc(M, sizeof(double));
    p->t = (double *) R_alloc(M, sizeof(double));
    for (int m = 0; m < M; m++) p->q[m] = p->t[m] = NA_REAL;
    p->s2 = p->d0 = p->J = 0.0;
    p->qs = p->ts = p->qb = p->tb = 0.0;   /* qb, tb stay 0 without the bias kernel */
}

static double store_pass_work(const eb_work *w, int cnt)
{
    double v = (double) cnt * w->n * w->n * 2.0;
    return w->st->kind == MK_STORE_DENSE ? v : v * 4.0;
}

/* Mean diagonal of every kernel (dense: n reads each; on the fly: a pass over the columns). */
static void eb_scales(eb_work *w)
{
    int n = w->n, M = w->M;
    if (w->lr) { eb_lr_scales(w); return; }
    int nt = mk_threads_for(w->o->nthreads, w->st->kind == MK_STORE_DENSE ? (double) n * M :
                            4.0 * n * n * M);
    if (nt > w->nbuf) nt = w->nbuf;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
#endif
    for (int m = 0; m < M; m++) {
        double *b = w->buf ? w->buf + (size_t) mk_thread_id() * n : NULL;
        double s = 0.0;
        for (int j = 0; j < n; j++) s += mk_store_col(w->st, m, j, b)[j];
        w->scale[m] = s / n;
    }
}

/* Kbar at p, its inverse in w->A (lower triangle), beta and p->J. Returns 0, or non-zero when
   Kbar is not numerically positive definite. */
static int eb_factor(eb_work *w, eb_point *p)
{
    int n = w->n, one = 1;
    double done = 1.0, dzero = 0.0, ld = 0.0;
    if (w->lr) return eb_lr_factor(w, p);
    mk_store_combine(w->st, p->d, w->A);
    for (int i = 0; i < n; i++) w->A[(size_t) i * n + i] += p->s2;
    if (w->o->bias_kernel && p->d0 > 0.0)
        for (int j = 0; j < n; j++)
            for (int i = j; i < n; i++) w->A[(size_t) j * n + i] += p->d0;
    w->factorizations++;
    R_CheckUserInterrupt();   /* each phase of a step is O(n^2 M) or O(n^3): check between */
    if (eb_spd_inverse(w->A, n, w->sw, w->sp, w->o->nthreads, &ld) != 0) {
        p->J = R_PosInf;
        return 1;
    }
    F77_CALL(dsymv)("L", &n, &done, w->A, &n, w->y, &one, &dzero, w->beta, &one FCONE);
    double yb = 0.0;
    for (int i = 0; i < n; i++) yb += w->y[i] * w->beta[i];
    p->J = 0.5 * yb + ld;
    return 0;
}

/* After eb_factor at p (w->A holds Kbar^{-1}, lower triangle): t and q of the noise, the bias
   kernel and every active kernel (one pass over each kernel's columns). */
static int eb_stats(eb_work *w, eb_point *p)
{
    int n = w->n;
    const double *A = w->A;
    if (w->lr) { eb_lr_stats(w, p); return 0; }
    double ts = 0.0, qs = 0.0, tb = 0.0, sb = 0.0;
    for (int i = 0; i < n; i++) {
        ts += A[(size_t) i * n + i];
        qs += w->beta[i] * w->beta[i];
        sb += w->beta[i];
    }
    p->ts = ts; p->qs = qs;
    p->tb = p->qb = 0.0;
    if (w->o->bias_kernel) {
        for (int j = 0; j < n; j++)
            for (int i = j + 1; i < n; i++) tb += A[(size_t) j * n + i];
        p->tb = ts + 2.0 * tb; p->qb = sb * sb;
        for (int i = 0; i < n; i++) w->ub[i] = sb;
    }
    int na = w->na;
    int nt = mk_threads_for(w->o->nthreads, store_pass_work(w, na));
    if (nt > w->nbuf) nt = w->nbuf;
    const double *beta = w->beta;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
#endif
    for (int k = 0; k < na; k++) {
        int m = w->idx[k];
        double *b = w->buf ? w->buf + (size_t) mk_thread_id() * n : NULL;
        double tm = 0.0, qm = 0.0;
        for (int j = 0; j < n; j++) {
            /* t_m = sum_ij A_ij (K_m)_ij from the lower triangle: diagonal plus twice below */
            const double *c = mk_store_col(w->st, m, j, b), *aj = A + (size_t) j * n;
            double st = 0.0, sq = 0.0;
            for (int i = 0; i < j; i++) sq += beta[i] * c[i];
            for (int i = j + 1; i < n; i++) { st += aj[i] * c[i]; sq += beta[i] * c[i]; }
            sq += beta[j] * c[j];
            tm += aj[j] * c[j] + 2.0 * st;
            qm += beta[j] * sq;
            w->kb[(size_t) m * n + j] = sq;   /* (K_m beta)_j: K_m is symmetric */
        }
        p->t[m] = tm;
        p->q[m] = qm;
    }
    R_CheckUserInterrupt();   /* the pass reads every active kernel */
    return 0;
}

/* Convergence measures over the free, active variances theta_j (pruned kernels, d_m = 0,
   satisfy Eq. 23 trivially and are not counted; the noise variance at its floor with q < t is
   at a bound, where optimality is the sign of the gradient):
   kind 0: max |dJ / d log theta_j| = max theta_j |t_j - q_j| / 2, in nats: the stopping rule
           (Eq. 23 scaled by theta_j t_j / 2; a kernel whose share theta_j t_j of the fit is tiny
           cannot move J whatever its ratio);
   kind 1: max |q_j / t_j - 1|, the relative change one MacKay step would make. */
static double eb_measure(const eb_work *w, const eb_point *p, int kind)
{
    double r = 0.0, v;
#define EB_TERM(theta, q, t) do { \
        v = kind == 0 ? 0.5 * (theta) * fabs((t) - (q)) : fabs((q) / (t) - 1.0); \
        if (!(v <= r)) r = v; /* NaN propagates */ \
    } while (0)
    for (int k = 0; k < w->na; k++) {
        int m = w->idx[k];
        EB_TERM(p->d[m], p->q[m], p->t[m]);
    }
    int at_floor = p->s2 <= w->o->s2_floor * (1.0 + 1e-12) && p->qs < p->ts;
    if (!w->o->fix_s2 && !at_floor) EB_TERM(p->s2, p->qs, p->ts);
    if (w->o->bias_kernel && p->d0 > 0.0) EB_TERM(p->d0, p->qb, p->tb);
#undef EB_TERM
    return r;
}

/* The update theta_j <- theta_j (q_j / t_j)^(e ex_j) from p into np (e = 1 MacKay, 1/2 MM;
   ex: per-variance exponents of the accelerated step, index M the noise, M + 1 the bias, or
   NULL for 1); with prune > 0, variances whose share of the prior variance falls below prune
   become 0. */
static double upd(double theta, double r, double e)
{
    double v = theta * (e == 1.0 ? r : (e == 0.5 ? sqrt(r) : pow(r, e)));
    return (R_FINITE(v) && v > 0.0) ? v : 0.0;
}

static void eb_update(const eb_work *w, const eb_point *p, eb_point *np, double e,
                      const double *ex, double prune)
{
    int M = w->M;
    for (int m = 0; m < M; m++) np->d[m] = 0.0;
    double tot = 0.0;
    for (int k = 0; k < w->na; k++) {
        int m = w->idx[k];
        double r = p->t[m] > 0.0 ? p->q[m] / p->t[m] : 0.0;
        np->d[m] = upd(p->d[m], r, ex ? e * ex[m] : e);
        tot += np->d[m] * w->scale[m];
    }
    np->s2 = p->s2;
    if (!w->o->fix_s2) {
        np->s2 = upd(p->s2, p->qs / p->ts, ex ? e * ex[M] : e);
        if (!(np->s2 >= w->o->s2_floor)) np->s2 = w->o->s2_floor;
    }
    np->d0 = 0.0;
    if (w->o->bias_kernel && p->d0 > 0.0)
        np->d0 = upd(p->d0, p->tb > 0.0 ? p->qb / p->tb : 0.0, ex ? e * ex[M + 1] : e);
    tot += np->s2 + np->d0;
    if (prune > 0.0) {
        for (int k = 0; k < w->na; k++) {
            int m = w->idx[k];
            if (np->d[m] * w->scale[m] < prune * tot) np->d[m] = 0.0;
        }
        if (np->d0 < prune * tot) np->d0 = 0.0;
    }
}

/* Acceleration: a variance whose MacKay ratio q/t stays on the same side of 1 doubles its
   exponent (up to ex_max); a change of side resets it to 1. */
static void eb_accel(const eb_work *w, const eb_point *p, double *ex, signed char *sg,
                     double ex_max)
{
    int M = w->M;
    for (int k = 0; k <= w->na + 1; k++) {
        int j;
        double r;
        if (k < w->na) { j = w->idx[k]; r = p->q[j] / p->t[j]; }
        else if (k == w->na) { j = M; r = p->qs / p->ts; }
        else { j = M + 1; r = p->tb > 0.0 ? p->qb / p->tb : 1.0; }
        signed char s = r > 1.0 ? 1 : (r < 1.0 ? -1 : 0);
        if (s != 0 && s == sg[j]) { ex[j] *= 2.0; if (ex[j] > ex_max) ex[j] = ex_max; }
        else ex[j] = 1.0;
        sg[j] = s;
    }
}

/* The variance of free variable v at p, and a pointer to it in np. */
static double *var_ref(eb_point *p, int v)
{
    return v >= 0 ? p->d + v : (v == EB_VAR_NOISE ? &p->s2 : &p->d0);
}

/* A symmetric rank-one (secant) correction E of H = Q / 2 from the previous scoring point:
   (H + E) s = y for s, y the changes of the free variances and of the gradient, so that the
   steps near the optimum converge faster than with Q / 2 alone (NOTES-bayes.md). E restarts at
   zero when the free variables change. Leaves H + E in H (Q / 2 in w->hq). */
static void eb_secant(eb_work *w, const eb_point *p, int nf, double *H, const double *g)
{
    double *E = w->corr;
    int same = w->npv == nf;
    for (int a = 0; same && a < nf; a++) same = w->pvar[a] == w->var[a];
    if (!same) for (int k = 0; k < nf * nf; k++) E[k] = 0.0;
    memcpy(w->hq, H, (size_t) nf * nf * sizeof(double));
    if (same) {
        double *sv = w->au, *r = w->au + nf, rs = 0.0, rr = 0.0, ss = 0.0;
        for (int a = 0; a < nf; a++) sv[a] = *var_ref((eb_point *) p, w->var[a]) - w->pth[a];
        for (int a = 0; a < nf; a++) {
            double hs = 0.0;
            for (int b = 0; b < nf; b++) hs += (H[a + b * nf] + E[a + b * nf]) * sv[b];
            r[a] = g[a] - w->pg[a] - hs;
        }
        for (int a = 0; a < nf; a++) { rs += r[a] * sv[a]; rr += r[a] * r[a]; ss += sv[a] * sv[a]; }
        if (fabs(rs) > 1e-8 * sqrt(rr * ss))
            for (int a = 0; a < nf; a++)
                for (int b = 0; b < nf; b++) E[a + b * nf] += r[a] * r[b] / rs;
    }
    for (int k = 0; k < nf * nf; k++) H[k] += E[k];
    w->npv = nf;
    for (int a = 0; a < nf; a++) {
        w->pvar[a] = w->var[a];
        w->pth[a] = *var_ref((eb_point *) p, w->var[a]);
        w->pg[a] = g[a];
    }
}

/* One scoring step from p (after eb_stats at p: w->A = Kbar^{-1}, w->kb) into np, factorised
   (np->J set). Returns 0 when the line search accepted it, 1 otherwise (w->A is then
   overwritten). */
static int eb_scoring(eb_work *w, eb_point *p, eb_point *np)
{
    const eb_opts *o = w->o;
    int n = w->n, M = w->M, nf = 0, one = 1, info = 0;
    double *g = w->gs, *H = w->hs, done = 1.0, dzero = 0.0;
    for (int k = 0; k < w->na && nf <= EB_SCORING_MAXVAR; k++) {
        int m = w->idx[k];
        double gm = 0.5 * (p->t[m] - p->q[m]);
        if (p->d[m] > 0.0 || gm < 0.0) { w->var[nf] = m; g[nf++] = gm; }
    }
    if (nf > EB_SCORING_MAXVAR) return 1;
    int at_floor = p->s2 <= o->s2_floor * (1.0 + 1e-12) && p->qs > p->ts;
    if (!o->fix_s2 && !at_floor) { w->var[nf] = EB_VAR_NOISE; g[nf++] = 0.5 * (p->ts - p->qs); }
    if (o->bias_kernel && p->d0 > 0.0) {
        w->var[nf] = EB_VAR_BIAS;
        g[nf++] = 0.5 * (p->tb - p->qb);
    }
    if (nf == 0 || nf > EB_SCORING_MAXVAR) return 1;
    /* H = Q / 2 over the free variables: u_j = P_j beta, Q_jk = u_j' Kbar^{-1} u_k (a low-rank
       store: from its Gram matrix, bayes_lowrank.c) */
    const double **u = w->up;
    if (w->lr) eb_lr_scoring_q(w, p, nf, H);
    else {
        for (int a = 0; a < nf; a++) {
            int v = w->var[a];
            u[a] = v >= 0 ? w->kb + (size_t) v * n : (v == EB_VAR_NOISE ? w->beta : w->ub);
            F77_CALL(dsymv)("L", &n, &done, w->A, &n, u[a], &one, &dzero,
                            w->au + (size_t) a * n, &one FCONE);
        }
        for (int a = 0; a < nf; a++)
            for (int b = a; b < nf; b++) {
                double v = 0.0;
                const double *x = u[a], *z = w->au + (size_t) b * n;
                for (int i = 0; i < n; i++) v += x[i] * z[i];
                H[a + b * nf] = H[b + a * nf] = 0.5 * v;
            }
    }
    double hmax = 0.0;
    for (int a = 0; a < nf; a++) if (H[a + a * nf] > hmax) hmax = H[a + a * nf];
    if (!(hmax > 0.0)) return 1;
    for (int a = 0; a < nf; a++) H[a + a * nf] += 1e-12 * hmax;
    eb_secant(w, p, nf, H, g);
    F77_CALL(dpotrf)("L", &nf, H, &nf, &info FCONE);
    if (info != 0) {
        /* the correction left the positive definite cone: Q / 2 alone, and a fresh start */
        memcpy(H, w->hq, (size_t) nf * nf * sizeof(double));
        for (int k = 0; k < nf * nf; k++) w->corr[k] = 0.0;
        F77_CALL(dpotrf)("L", &nf, H, &nf, &info FCONE);
    }
    if (info != 0) return 1;
    double *step = w->au;   /* the products are no longer needed */
    for (int a = 0; a < nf; a++) step[a] = -g[a];
    F77_CALL(dpotrs)("L", &nf, &one, H, &nf, step, &nf, &info FCONE);
    if (info != 0) return 1;
    /* backtracking along the projected arc: Armijo on the change actually made */
    /* the next trial minimises the quadratic through J(p), the slope and the rejected trial,
       within [0.1, 0.5] of the last scale (halving when that trial was not finite) */
    double sc = 1.0;
    for (int trial = 0; trial < 12; trial++) {
        double dec = 0.0, tot = 0.0;
        memcpy(np->d, p->d, (size_t) M * sizeof(double));
        np->s2 = p->s2; np->d0 = p->d0;
        for (int a = 0; a < nf; a++) {
            double *th = var_ref(np, w->var[a]);
            *th += sc * step[a];
            if (!(*th > 0.0)) *th = 0.0;
        }
        if (np->s2 < o->s2_floor) np->s2 = o->s2_floor;
        for (int k = 0; k < w->na; k++) tot += np->d[w->idx[k]] * w->scale[w->idx[k]];
        tot += np->s2 + np->d0;
        for (int k = 0; k < w->na; k++) {
            int m = w->idx[k];
            if (np->d[m] * w->scale[m] < o->prune * tot) np->d[m] = 0.0;
        }
        if (np->d0 < o->prune * tot) np->d0 = 0.0;
        for (int a = 0; a < nf; a++) {
            int v = w->var[a];
            dec += (*var_ref(np, v) - *var_ref(p, v)) * g[a];
        }
        if (!(dec < 0.0)) { sc *= 0.5; continue; }
        int ok = eb_factor(w, np) == 0;
        if (ok && np->J <= p->J + 1e-4 * dec) return 0;
        double curv = np->J - p->J - dec, next = 0.5 * sc;
        if (ok && curv > 0.0) {
            next = -0.5 * dec * sc / curv;
            if (next < 0.1 * sc) next = 0.1 * sc;
            if (next > 0.5 * sc) next = 0.5 * sc;
        }
        sc = next;
    }
    return 1;
}

static void point_copy(eb_point *to, const eb_point *from, int M)
{
    memcpy(to->d, from->d, (size_t) M * sizeof(double));
    memcpy(to->q, from->q, (size_t) M * sizeof(double));
    memcpy(to->t, from->t, (size_t) M * sizeof(double));
    to->s2 = from->s2; to->d0 = from->d0; to->J = from->J;
    to->qs = from->qs; to->ts = from->ts; to->qb = from->qb; to->tb = from->tb;
}

#define EB_HCOLS 10

typedef struct {
    int iterations, stop, mm_steps, mackay_rejected, accel_rejected, scoring_steps,
        scoring_rejected;
    double residual, time;
} eb_out;

/* The iteration from p (p->d, p->s2, p->d0 set); on return p is the last accepted point (with
   its traces and quadratic forms) and w->beta is Kbar^{-1} y there. pruned_at[m]: the step at
   which kernel m left the active set (0: still active, -1: inactive from the start). */
/* The kernels with positive variance. */
static int eb_nactive(const eb_work *w, const eb_point *p)
{
    int c = 0;
    for (int k = 0; k < w->na; k++) c += p->d[w->idx[k]] > 0.0;
    return c;
}

/* The scoring phase: every kernel is read from here on (a kernel at zero may re-enter). */
static int eb_scoring_begin(eb_work *w, eb_point *p)
{
    w->scoring = 1;
    w->na = 0;
    for (int m = 0; m < w->M; m++) if (w->scale[m] > 0.0) w->idx[w->na++] = m;
    return eb_factor(w, p) != 0 || eb_stats(w, p) != 0;
}

static void eb_run(eb_work *w, eb_point *p, mk_hist *h, int *pruned_at, eb_out *out)
{
    const eb_opts *o = w->o;
    int M = w->M, mackay = o->update != EB_UPD_MM;
    double t0 = mk_time();
    eb_point np, save;
    point_alloc(&np, M);
    point_alloc(&save, M);
    double *ex = (double *) R_alloc(M + 2, sizeof(double));
    signed char *sg = (signed char *) R_alloc(M + 2, sizeof(signed char));
    for (int j = 0; j < M + 2; j++) { ex[j] = 1.0; sg[j] = 0; }
    w->na = 0;
    for (int m = 0; m < M; m++) {
        if (p->d[m] > 0.0 && w->scale[m] > 0.0) { w->idx[w->na++] = m; pruned_at[m] = 0; }
        else { p->d[m] = 0.0; pruned_at[m] = -1; }
    }
    memset(out, 0, sizeof(*out));
    out->stop = EB_STOP_LIMIT;
    if (eb_factor(w, p) != 0 || eb_stats(w, p) != 0) {
        out->stop = EB_STOP_NOTPD;
        out->residual = NA_REAL;
        return;
    }
    int step = EB_STEP_START;
    for (int it = 0;; it++) {
        double r = eb_measure(w, p, 0);
        double row[EB_HCOLS] = { (double) it, mk_time() - t0, p->J, NA_REAL,
                                 (double) eb_nactive(w, p),
                                 p->s2, r, eb_measure(w, p, 1), (double) step, p->d0 };
        mk_hist_add(h, row);
        out->iterations = it;
        out->residual = r;
        if (o->verbose)
            Rprintf("bayes %4d  J %.10g  max|dJ/dlog d| %.3e  active %d  sigma2 %.4g%s\n", it,
                    p->J, r, eb_nactive(w, p), p->s2, step == EB_STEP_MM ? "  (MM step)" :
                    (step == EB_STEP_ACCEL ? "  (accelerated)" :
                     (step == EB_STEP_SCORING ? "  (scoring)" : "")));
        if (r <= o->tol) { out->stop = EB_STOP_FP; break; }
        if (it >= o->maxiter) { out->stop = EB_STOP_LIMIT; break; }
        R_CheckUserInterrupt();
        mk_progress_tick(o->prog, it, o->maxiter, r, o->tol);

        int scoring = o->update == EB_UPD_SCORING &&
            (w->scoring || (r <= EB_SCORING_START && eb_nactive(w, p) < EB_SCORING_MAXVAR));
        if (scoring && !w->scoring && eb_scoring_begin(w, p)) { out->stop = EB_STOP_NOTPD; break; }
        /* propose; keep p to fall back on */
        point_copy(&save, p, M);
        int info;
        double slack = 1e-12 * (fabs(save.J) + 1.0);
        if (scoring) {
            if (eb_scoring(w, &save, &np) == 0) {
                info = 0;
                step = EB_STEP_SCORING;
                out->scoring_steps++;
                goto accepted;
            }
            out->scoring_rejected++;   /* MacKay's step from the same point instead */
        }
        if (mackay && o->accel_max > 1.0) {
            eb_accel(w, &save, ex, sg, o->accel_max);
            int any = 0;
            for (int j = 0; j < M + 2; j++) if (ex[j] > 1.0) { any = 1; break; }
            if (any) {
                eb_update(w, &save, &np, 1.0, ex, o->prune);
                info = eb_factor(w, &np);
                step = EB_STEP_ACCEL;
                if (info == 0 && np.J <= save.J + slack) goto accepted;
                /* overshoot: back to plain MacKay from here on, until the ratios agree again */
                out->accel_rejected++;
                for (int j = 0; j < M + 2; j++) { ex[j] = 1.0; sg[j] = 0; }
            }
        }
        eb_update(w, &save, &np, mackay ? 1.0 : 0.5, NULL, o->prune);
        info = eb_factor(w, &np);
        step = mackay ? EB_STEP_MACKAY : EB_STEP_MM;
        if (mackay && (info != 0 || (o->safeguard && np.J > save.J + slack))) {
            /* MacKay would increase J (or leave the PD cone): the MM step from the same point,
               without pruning, cannot increase it */
            out->mackay_rejected++;
            eb_update(w, &save, &np, 0.5, NULL, 0.0);
            info = eb_factor(w, &np);
            step = EB_STEP_MM;
        }
    accepted:
        if (step == EB_STEP_MM) out->mm_steps++;
        if (info != 0) {
            /* not even the MM step could be factorised: stay at the last point */
            out->stop = EB_STOP_NOTPD;
            eb_factor(w, &save);
            eb_stats(w, &save);
            point_copy(p, &save, M);
            break;
        }
        int stalled = !(np.J < save.J) && o->safeguard && step == EB_STEP_MM && mackay;
        /* accept np: the active set shrinks to its positive weights (scoring: every kernel
           stays read, and one that re-enters is active again) */
        int na = 0;
        for (int k = 0; k < w->na; k++) {
            int m = w->idx[k];
            if (np.d[m] > 0.0) { w->idx[na++] = m; pruned_at[m] = 0; }
            else {
                if (save.d[m] > 0.0) pruned_at[m] = it + 1;
                if (w->scoring) w->idx[na++] = m; else np.q[m] = np.t[m] = NA_REAL;
            }
        }
        w->na = na;
        if (!w->scoring)
            for (int m = 0; m < M; m++) if (np.d[m] == 0.0) np.q[m] = np.t[m] = NA_REAL;
        if (eb_stats(w, &np) != 0) { out->stop = EB_STOP_NOTPD; break; }
        point_copy(p, &np, M);
        if (stalled) {
            /* no decrease even by the MM step: rounding level; record and stop */
            double r2 = eb_measure(w, p, 0);
            double row2[EB_HCOLS] = { (double) (it + 1), mk_time() - t0, p->J, NA_REAL,
                                      (double) eb_nactive(w, p), p->s2, r2,
                                      eb_measure(w, p, 1),
                                      (double) step, p->d0 };
            mk_hist_add(h, row2);
            out->iterations = it + 1;
            out->residual = r2;
            out->stop = r2 <= o->tol ? EB_STOP_FP : EB_STOP_STALLED;
            break;
        }
    }
    mk_progress_done(o->prog);
    out->time = mk_time() - t0;
}

SEXP mkc_bayes(SEXP store, SEXP y, SEXP control, SEXP start)
{
    mk_store st;
    mk_store_read(store, &st);
    if (!st.square) error("bayes needs a square training store");
    int n = st.n, M = st.M;
    if (!isReal(y) || LENGTH(y) != n) error("'y' must be %d doubles", n);
    if (!isNewList(start)) error("'start' must be a named list");

    eb_opts o;
    o.tol = mk_ctl_real(control, "tol");
    o.prune = mk_ctl_real(control, "prune");
    o.s2_floor = mk_ctl_real(control, "sigma2_floor");
    o.accel_max = mk_ctl_real(control, "accelerate");
    o.maxiter = mk_ctl_int(control, "maxiter");
    o.fix_s2 = mk_ctl_int(control, "fix_sigma2");
    o.bias_kernel = mk_ctl_int(control, "bias_kernel");
    o.update = mk_ctl_int(control, "update");
    o.safeguard = mk_ctl_int(control, "safeguard");
    o.nthreads = mk_ctl_int(control, "nthreads");
    o.verbose = mk_ctl_int(control, "verbose");
    mk_progress prog;
    mk_progress_init(&prog, control);
    o.prog = &prog;
    if (!(o.prune >= 0.0 && o.prune < 1.0)) error("'prune' must be in [0, 1)");
    if (!(o.s2_floor > 0.0)) error("'sigma2_floor' must be positive");

    eb_work w;
    memset(&w, 0, sizeof(w));
    w.st = &st; w.y = REAL(y); w.n = n; w.M = M; w.o = &o;
    int nv = (M < EB_SCORING_MAXVAR ? M : EB_SCORING_MAXVAR) + 3;
    /* a low-rank store: Kbar in its Woodbury form (bayes_lowrank.c), no n x n matrix */
    if (st.kind == MK_STORE_LOWRANK) eb_lr_init(&w, nv);
    else {
        w.A = (double *) R_alloc((size_t) n * n, sizeof(double));
        w.sw = (double *) R_alloc((size_t) n * EB_NB, sizeof(double));
        w.sp = (double *) R_alloc((size_t) EB_NB * EB_NB, sizeof(double));
    }
    w.beta = (double *) R_alloc(n, sizeof(double));
    w.scale = (double *) R_alloc(M, sizeof(double));
    w.idx = (int *) R_alloc(M, sizeof(int));
    w.nbuf = mk_threads(o.nthreads);
    /* K_m beta, the products with Kbar^{-1} and P_bias beta: the dense scoring system's (au is
       also the step's and the secant's scratch, 2 nv) */
    if (!w.lr) {
        w.kb = (double *) R_alloc((size_t) n * M, sizeof(double));
        w.ub = (double *) R_alloc(n, sizeof(double));
    }
    w.au = (double *) R_alloc((size_t) (w.lr ? 2 : n) * nv, sizeof(double));
    w.hs = (double *) R_alloc((size_t) nv * nv, sizeof(double));
    w.hq = (double *) R_alloc((size_t) nv * nv, sizeof(double));
    w.corr = (double *) R_alloc((size_t) nv * nv, sizeof(double));
    w.pth = (double *) R_alloc(nv, sizeof(double));
    w.pg = (double *) R_alloc(nv, sizeof(double));
    w.pvar = (int *) R_alloc(nv, sizeof(int));
    w.npv = 0;
    w.gs = (double *) R_alloc(M + 3, sizeof(double));
    w.var = (int *) R_alloc(M + 3, sizeof(int));
    w.up = (const double **) R_alloc(M + 3, sizeof(double *));
    w.buf = st.kind != MK_STORE_FLY ? NULL :
        (double *) R_alloc((size_t) w.nbuf * n, sizeof(double));
    eb_scales(&w);

    eb_point p;
    point_alloc(&p, M);
    mk_list_copy(start, "d", p.d, M);
    p.s2 = mk_ctl_real(start, "sigma2");
    p.d0 = o.bias_kernel ? mk_ctl_real(start, "d0") : 0.0;
    double vtot = mk_ctl_real(start, "prior_variance");
    if (!(p.s2 > 0.0)) error("start value 'sigma2' must be positive");
    /* NA weights: the prior variance vtot shared equally by the kernels */
    int nk = 0;
    for (int m = 0; m < M; m++) if (w.scale[m] > 0.0) nk++;
    for (int m = 0; m < M; m++) {
        if (ISNAN(p.d[m])) p.d[m] = w.scale[m] > 0.0 ? vtot / ((double) nk * w.scale[m]) : 0.0;
        if (!(p.d[m] >= 0.0)) error("start weights must be non-negative");
    }

    mk_hist h;
    mk_hist_init(&h, EB_HCOLS);
    int *pruned_at = (int *) R_alloc(M, sizeof(int));
    eb_out out;
    eb_run(&w, &p, &h, pruned_at, &out);

    static const char *const hnames[EB_HCOLS] = {
        "iteration", "time", "objective", "gap", "n_active", "sigma2", "gradient", "residual",
        "step", "bias_variance" };
    static const char *const rnames[] = {
        "d", "sigma2", "d0", "beta", "objective", "stop", "iterations", "grad_max", "history",
        "q", "t", "scale", "pruned_at", "mm_steps", "mackay_rejected", "accel_rejected",
        "factorizations", "time", "q_noise", "t_noise", "scoring_steps", "scoring_rejected",
        "passes", NULL };
    SEXP res = mk_list_new(rnames);
    mk_list_set(res, "d", mk_real_vec(p.d, M));
    mk_list_set(res, "sigma2", ScalarReal(p.s2));
    mk_list_set(res, "d0", ScalarReal(p.d0));
    mk_list_set(res, "beta", mk_real_vec(w.beta, n));
    mk_list_set(res, "objective", ScalarReal(p.J));
    mk_list_set(res, "stop", ScalarInteger(out.stop));
    mk_list_set(res, "iterations", ScalarInteger(out.iterations));
    mk_list_set(res, "grad_max", ScalarReal(out.residual));
    mk_list_set(res, "history", mk_hist_sexp(&h, hnames));
    mk_list_set(res, "q", mk_real_vec(p.q, M));
    mk_list_set(res, "t", mk_real_vec(p.t, M));
    mk_list_set(res, "scale", mk_real_vec(w.scale, M));
    SEXP pa = allocVector(INTSXP, M);
    mk_list_set(res, "pruned_at", pa);
    memcpy(INTEGER(pa), pruned_at, (size_t) M * sizeof(int));
    mk_list_set(res, "mm_steps", ScalarInteger(out.mm_steps));
    mk_list_set(res, "mackay_rejected", ScalarInteger(out.mackay_rejected));
    mk_list_set(res, "accel_rejected", ScalarInteger(out.accel_rejected));
    mk_list_set(res, "factorizations", ScalarInteger(w.factorizations));
    mk_list_set(res, "time", ScalarReal(out.time));
    mk_list_set(res, "q_noise", ScalarReal(p.qs));
    mk_list_set(res, "t_noise", ScalarReal(p.ts));
    mk_list_set(res, "scoring_steps", ScalarInteger(out.scoring_steps));
    mk_list_set(res, "scoring_rejected", ScalarInteger(out.scoring_rejected));
    mk_list_set(res, "passes", ScalarInteger(w.lr ? w.passes : NA_INTEGER));
    UNPROTECT(1);
    return res;
}
