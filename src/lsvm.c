/* C-SVM dual on a low-rank kernel K = F F' + jit I (F: n x R, by rows): the problem of svm.c,
 * min_a (1/2) a'Qa - e'a, 0 <= a <= C, y'a = 0, Q = diag(y) K diag(y), solved without an n x n
 * matrix by dual coordinate descent (Hsieh, Chang, Lin, Keerthi & Sundararajan 2008: random
 * order, shrinking) on w = F'(y.a), O(R) per coordinate.
 *
 * The unregularised bias (y'a = 0) by an augmented Lagrangian: each round minimises
 *   (1/2) a'(Q + rho yy')a - e'a + lam y'a  over the box only,
 * whose solution is the SVM's on the hyperplane y'a = s it ends at (the maximal-violating-pair
 * test of svm.c does not see lam); lam moves to the root of s(lam) by secant steps (rho fixed:
 * a growing rho slows the coordinate descent down). The last round is made feasible through
 * its free alphas and the SMO's test is applied to the exact gradient.
 * Once shrinking leaves few coordinates (at most R and MK_LSVM_CACHE), their block
 * K_cc = F_c F_c' is formed and the passes read it (O(|c|) per coordinate instead of O(R)),
 * when the passes already spent on that set have cost as much as forming it.
 * Measurements: inst/notes/NOTES-svm-family.md, "Low rank".
 */
#include "mklearn.h"
#include <math.h>
#include <string.h>
#include <stdint.h>

/* the first rho (times the mean diagonal) and the loosest round tolerance */
#define LS_RHO 0.1
#define LS_EPS0 1.0

/* in four running sums (linalg.c): a single one waits on each addition's latency, and this dot
   is the solver's inner loop (NOTES-svm-family.md, "Low rank") */
static double ls_dot(const double *restrict a, const double *restrict b, int R)
{
    return mk_dot4(R, a, b);
}

static void ls_axpy(double t, const double *restrict x, double *restrict y, int R)
{
    for (int k = 0; k < R; k++) y[k] += t * x[k];
}

/* xorshift64*: the coordinate order, from a fixed seed (results do not depend on R's RNG) */
static uint64_t ls_rand(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12; x ^= x << 25; x ^= x >> 27;
    *s = x;
    return x * 2685821657736338717ULL;
}

/* The exact w = F'(y.a), G = Qa - 1 and the SMO's violation max_{I_up} -yG + max_{I_low} yG;
   *reads counts the factor rows read (O(R) each). */
static double ls_exact(const double *Ft, int n, int R, const double *y, double C, double jit,
                       const double *a, double *w, double *G, double *reads)
{
    memset(w, 0, (size_t) R * sizeof(double));
    for (int i = 0; i < n; i++)
        if (a[i] != 0.0) { ls_axpy(y[i] * a[i], Ft + (size_t) i * R, w, R); *reads += 1.0; }
    *reads += n;
    double up = -INFINITY, low = -INFINITY;
    for (int i = 0; i < n; i++) {
        double g = y[i] * ls_dot(Ft + (size_t) i * R, w, R) + jit * a[i] - 1.0;
        G[i] = g;
        double yg = y[i] * g;
        if ((y[i] > 0 && a[i] < C) || (y[i] < 0 && a[i] > 0.0)) up = fmax(up, -yg);
        if ((y[i] > 0 && a[i] > 0.0) || (y[i] < 0 && a[i] < C)) low = fmax(low, yg);
    }
    return up + low;
}

typedef struct {
    const double *Ft, *y, *Qd;
    int n, R;
    double C, jit, rho, lam, s;   /* s = y'a, kept with a */
    double *a, *w;
    int *idx;
    int active;                   /* idx[0..active-1]: the coordinates not shrunk */
    double pgmax_old, pgmin_old;  /* the shrinking thresholds of the last pass */
    uint64_t seed;
    /* the block of nc coordinates cset (while cached): Kc = F_c F_c' (nc x nc), u = F_c w,
       dya the changes of y.a on c not yet added to w; cpos[i]: i's place in c or -1; rent:
       coordinate visits since the active set fell to the cache's size; reads: factor rows
       read (O(R) each: the solve's work) */
    double *Kc, *u, *dya, rent, reads;
    int *cset, *cpos;
    int nc, cap, cached;
} ls_state;

/* Form the block of the active coordinates idx[0..nc-1] (in place of the last one). */
static void ls_cache(ls_state *S, int nc)
{
    const int R = S->R;
    if (!S->Kc) {
        S->Kc = (double *) R_alloc((size_t) S->cap * S->cap, sizeof(double));
        S->u = (double *) R_alloc((size_t) S->cap, sizeof(double));
        S->dya = (double *) R_alloc((size_t) S->cap, sizeof(double));
        S->cset = (int *) R_alloc((size_t) S->cap, sizeof(int));
    }
    for (int k = 0; k < S->nc; k++) S->cpos[S->cset[k]] = -1;
    S->nc = nc;
    for (int k = 0; k < nc; k++) {
        int i = S->idx[k];
        S->cset[k] = i; S->cpos[i] = k;
    }
    for (int k = 0; k < nc; k++) {
        const double *fk = S->Ft + (size_t) S->cset[k] * R;
        for (int l = k; l < nc; l++) {
            double q = ls_dot(fk, S->Ft + (size_t) S->cset[l] * R, R);
            S->Kc[(size_t) k * nc + l] = q; S->Kc[(size_t) l * nc + k] = q;
        }
    }
    S->reads += 0.5 * (double) nc * (nc + 1);
}

/* Read the block for the active coordinates (all in it): u = F w on them, nothing pending. */
static void ls_use(ls_state *S, int active)
{
    for (int k = 0; k < active; k++) {
        int i = S->idx[k];
        S->u[S->cpos[i]] = ls_dot(S->Ft + (size_t) i * S->R, S->w, S->R);
    }
    memset(S->dya, 0, (size_t) S->nc * sizeof(double));
    S->reads += active;
    S->cached = 1;
}

/* Stop reading the block (kept for a later active set within it): pending changes into w. */
static void ls_uncache(ls_state *S)
{
    if (!S->cached) return;
    for (int k = 0; k < S->nc; k++)
        if (S->dya[k] != 0.0) {
            ls_axpy(S->dya[k], S->Ft + (size_t) S->cset[k] * S->R, S->w, S->R);
            S->reads += 1.0;
        }
    S->cached = 0;
    S->rent = 0.0;
}

/* Whether the active coordinates are all in the block. */
static int ls_within(const ls_state *S, int active)
{
    if (active > S->nc) return 0;
    for (int k = 0; k < active; k++) if (S->cpos[S->idx[k]] < 0) return 0;
    return 1;
}

/* One round: coordinate descent on the box-constrained augmented Lagrangian until a pass has
   pair violation <= eps: over every coordinate when full, else over the coordinates not shrunk
   (the shrinking is kept from round to round). Returns the passes taken (maxpass + 1: limit). */
static int ls_round(ls_state *S, double eps, int full, int maxpass, double *tlast)
{
    const int n = S->n, R = S->R;
    const double C = S->C, *y = S->y;
    double *a = S->a, *w = S->w;
    int active = S->active, pass = 0, done = 0;
    double pgmax_old = S->pgmax_old, pgmin_old = S->pgmin_old;
    while (pass < maxpass) {
        pass++;
        mk_interrupt_every(tlast, 0.02);
        if (S->cached && active > S->nc) ls_uncache(S);   /* unshrunk: past the block */
        if (!S->cached) {
            /* the block when the active set is within it; else rent or buy: form a block
               once the passes over this many coordinates have cost (visits x R) what
               forming it costs (active^2 R / 2) */
            if (ls_within(S, active)) ls_use(S, active);
            else if (active <= S->cap) {
                S->rent += active;
                if (S->rent >= 0.5 * (double) active * active) {
                    ls_cache(S, active);
                    ls_use(S, active);
                }
            } else S->rent = 0.0;
        }
        const int cached = S->cached, nc = S->nc;
        if (!cached) S->reads += active;
        for (int k = 0; k < active - 1; k++) {   /* random order of the active set */
            int j = k + (int) (ls_rand(&S->seed) % (uint64_t) (active - k));
            int t = S->idx[k]; S->idx[k] = S->idx[j]; S->idx[j] = t;
        }
        double up = -INFINITY, low = -INFINITY, pgmax = -INFINITY, pgmin = INFINITY;
        for (int k = 0; k < active; k++) {
            int i = S->idx[k];
            const double *fi = S->Ft + (size_t) i * R;
            double yi = y[i], ai = a[i];
            double fw = cached ? S->u[S->cpos[i]] : ls_dot(fi, w, R);
            double g = yi * (fw + S->lam + S->rho * S->s) + S->jit * ai - 1.0;
            double pg = 0.0;
            if (ai <= 0.0) {
                if (g > pgmax_old) {   /* shrink: at the bound and pushed against it */
                    active--;
                    S->idx[k] = S->idx[active]; S->idx[active] = i;
                    k--;
                    continue;
                }
                if (g < 0.0) pg = g;
            } else if (ai >= C) {
                if (g < pgmin_old) {
                    active--;
                    S->idx[k] = S->idx[active]; S->idx[active] = i;
                    k--;
                    continue;
                }
                if (g > 0.0) pg = g;
            } else pg = g;
            double yg = yi * g;
            if ((yi > 0 && ai < C) || (yi < 0 && ai > 0.0)) up = fmax(up, -yg);
            if ((yi > 0 && ai > 0.0) || (yi < 0 && ai < C)) low = fmax(low, yg);
            pgmax = fmax(pgmax, pg); pgmin = fmin(pgmin, pg);
            if (pg == 0.0) continue;
            double an = ai - g / (S->Qd[i] + S->rho);
            an = an < 0.0 ? 0.0 : (an > C ? C : an);
            double dl = (an - ai) * yi;
            if (dl == 0.0) continue;
            a[i] = an;
            if (cached) {
                int c = S->cpos[i];
                const double *kc = S->Kc + (size_t) c * nc;
                for (int l = 0; l < nc; l++) S->u[l] += dl * kc[l];
                S->dya[c] += dl;
            } else { ls_axpy(dl, fi, w, R); S->reads += 1.0; }
            S->s += dl;
        }
        if (up + low <= eps) {
            done = active == n || !full;
            if (done) break;
            active = n;   /* converged on the shrunk set: check every coordinate */
            pgmax_old = INFINITY; pgmin_old = -INFINITY;
            continue;
        }
        pgmax_old = pgmax > 0.0 ? pgmax : INFINITY;
        pgmin_old = pgmin < 0.0 ? pgmin : -INFINITY;
    }
    S->active = active; S->pgmax_old = pgmax_old; S->pgmin_old = pgmin_old;
    return done ? pass : maxpass + 1;
}

/* Make y'a = 0 by moving free alphas (0 < a < C) only: scaling every alpha of a class, as a
   warm start is made feasible, would take bounded ones off C, where their gradient is a large
   violation. Falls back to that scaling when the free alphas have no room. */
static void ls_feasible(int n, const double *y, double C, const double *Cv, double *a)
{
    double s = 0.0;
    for (int i = 0; i < n; i++) s += y[i] * a[i];
    for (int i = 0; i < n && s != 0.0; i++) {
        if (!(a[i] > 0.0 && a[i] < C)) continue;
        /* a_i moves by -y_i t, t of the sign of s, within the box */
        double room = (s > 0.0) == (y[i] > 0) ? a[i] : C - a[i];
        double t = fabs(s) < room ? fabs(s) : room;
        a[i] -= (s > 0.0 ? y[i] : -y[i]) * t;
        s -= (s > 0.0 ? t : -t);
    }
    if (s != 0.0) mk_svm_project(n, y, Cv, a);
}

/* The point made feasible (y'a = 0), its exact w, gradient G and violation (returned); the block's
   pending changes are then void (w is exact). */
static double ls_settle(ls_state *S, const double *Cv, double *G)
{
    ls_feasible(S->n, S->y, S->C, Cv, S->a);
    double viol = ls_exact(S->Ft, S->n, S->R, S->y, S->C, S->jit, S->a, S->w, G, &S->reads);
    S->cached = 0;
    S->rent = 0.0;
    return viol;
}

int mk_lsvm(const double *Ft, int n, int R, const double *y, double C, double jit, double tol,
            int maxiter, double *alpha, double *grad, double *w, mk_svm_result *res)
{
    const void *vmax = vmaxget();
    /* the box of every point, as the SMO's shared helpers take it (svm.c) */
    double *Cv = (double *) R_alloc(n, sizeof(double));
    for (int i = 0; i < n; i++) Cv[i] = C;
    mk_svm_project(n, y, Cv, alpha);
    double *Qd = (double *) R_alloc(n, sizeof(double));
    double qmax = 0.0, qmean = 0.0;
    for (int i = 0; i < n; i++) {
        const double *fi = Ft + (size_t) i * R;
        Qd[i] = ls_dot(fi, fi, R) + jit;
        qmean += Qd[i];
        if (Qd[i] > qmax) qmax = Qd[i];
    }
    qmean /= n;
    if (!(qmean > 0.0)) qmean = 1.0;
    ls_state S = { Ft, y, Qd, n, R, C, jit, LS_RHO * qmean, 0.0, 0.0, alpha, w, NULL, n,
                   INFINITY, -INFINITY, 0x9E3779B97F4A7C15ULL,
                   NULL, NULL, NULL, 0.0, (double) n, NULL, NULL, 0, 0, 0 };
    /* the block is formed only where it is cheaper per coordinate: at most R coordinates */
    S.cap = n < MK_LSVM_CACHE ? n : MK_LSVM_CACHE;
    if (R < S.cap) S.cap = R;
    S.idx = (int *) R_alloc(n, sizeof(int));
    S.cpos = (int *) R_alloc(n, sizeof(int));
    for (int k = 0; k < n; k++) { S.idx[k] = k; S.cpos[k] = -1; }
    double viol = ls_exact(Ft, n, R, y, C, jit, alpha, w, grad, &S.reads);
    S.lam = mk_svm_bias(n, y, Cv, alpha, grad);   /* the multiplier of y'a = 0 is the bias */
    /* rounds far from y'a = 0 are solved loosely (inexact augmented Lagrangian) */
    double eps = 0.5 * tol, sprev = INFINITY, tlast = mk_time(), ll = 0.0, sl = 0.0;
    int passes = 0, status = 0, force = 0, fresh = 1;   /* fresh: grad, viol of this alpha */
    while (!(viol < tol)) {
        int left = maxiter - passes;
        if (left <= 0) { status = 1; break; }
        S.s = 0.0;
        for (int i = 0; i < n; i++) S.s += y[i] * alpha[i];
        double er = fmax(eps, fmin(LS_EPS0, qmax * sprev));
        /* a round checks every coordinate only once y'a is near 0 (the last rounds) */
        int full = er <= eps && (force || qmax * sprev <= 0.1 * tol);
        int p = ls_round(&S, er, full, left, &tlast);
        passes += p > left ? left : p;
        fresh = 0;
        double s = S.s;
        /* the next multiplier: the root of s(lam) (non-increasing) by the secant through the
           last two rounds when they bracket it or slope down, else the augmented Lagrangian
           step lam + rho s */
        double lnext = S.lam + S.rho * s;
        if (isfinite(sprev) && s != sl && (S.lam - ll) * (s - sl) < 0.0) {
            double ls = S.lam - s * (S.lam - ll) / (s - sl);
            if (isfinite(ls)) lnext = ls;
        }
        int still = isfinite(sprev) && s == sl;   /* the round left y'a where it was */
        /* a multiplier move beyond the loosest round tolerance shifts every gradient past the
           shrinking thresholds: the next round sees every coordinate */
        if (fabs(lnext - S.lam) > LS_EPS0 && S.active < n) {
            S.active = n; S.pgmax_old = INFINITY; S.pgmin_old = -INFINITY;
        }
        ll = S.lam; sl = s;
        S.lam = lnext;
        /* a round counts once y'a is small enough for making it 0 to move the gradient by at
           most tol / 10 */
        if ((fabs(s) * qmax > 0.1 * tol || er > eps) && p <= left) {
            /* y'a stuck far from 0: the shrunk set hides the coordinates the multiplier moves
               (lam would only creep by rho s); the next round sees them all */
            if (still && S.active < n) {
                S.active = n; S.pgmax_old = INFINITY; S.pgmin_old = -INFINITY;
            }
            sprev = fabs(s);
            continue;
        }
        if (!full && p <= left) { force = 1; sprev = fabs(s); continue; }
        force = 0;
        viol = ls_settle(&S, Cv, grad);
        fresh = 1;
        if (p > left) { status = 1; break; }
        eps *= 0.25;
    }
    /* stopped by maxiter after a loose round: the reported point is made feasible (y'a = 0)
       and its objective, bias and violation are of it, not of the last exact check */
    if (!fresh) viol = ls_settle(&S, Cv, grad);
    ls_uncache(&S);
    mk_svm_finish(n, y, Cv, alpha, grad, viol, passes, status, res);
    res->work = S.reads;
    vmaxset(vmax);
    return status;
}

/* ------------------------------------------------------------------ scaled factors */

void mk_lr_factors_init(mk_lr_factors *f, const mk_store *st)
{
    if (st->kind != MK_STORE_LOWRANK) error("kernel store: not a low-rank store");
    f->st = st;
    f->Rtot = st->goff[st->M];
    f->R = 0;
    f->jit = 0.0;
    f->Ft = (double *) mk_alloc_huge((size_t) st->n * (f->Rtot > 0 ? f->Rtot : 1) *
                                     sizeof(double));
}

/* Ft = rows of [sqrt(d_m) G_m] over the kernels with d_m > 0 (negative weights, rounding of a
   line, count as 0), jit = jitter * sum d; the transpose by blocks of rows, threaded. */
void mk_lr_factors_set(mk_lr_factors *f, const double *d, int nthreads)
{
    const mk_store *st = f->st;
    const int n = st->n, M = st->M;
    int R = 0;
    double sd = 0.0;
    for (int m = 0; m < M; m++)
        if (d[m] > 0.0) { R += st->goff[m + 1] - st->goff[m]; sd += d[m]; }
    f->R = R;
    f->jit = st->jitter * sd;
    if (R == 0) return;
    double *Ft = f->Ft;
    const int B = 64;
    int nt = mk_threads_for(nthreads, (double) n * R);
    (void) nt;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
#endif
    for (int i0 = 0; i0 < n; i0 += B) {
        int i1 = i0 + B < n ? i0 + B : n, k0 = 0;
        for (int m = 0; m < M; m++) {
            if (!(d[m] > 0.0)) continue;
            double sq = sqrt(d[m]);
            for (int k = st->goff[m]; k < st->goff[m + 1]; k++, k0++) {
                const double *g = st->G + (size_t) k * n;
                for (int i = i0; i < i1; i++) Ft[(size_t) i * R + k0] = sq * g[i];
            }
        }
    }
}

/* .Call: the SVM on K = sum_m d_m K_m of a low-rank training store; the list of mkc_smo
   (iterations: passes) and row_reads, the factor rows read (the solve's work in units of R). */
SEXP mkc_lsvm(SEXP store, SEXP y, SEXP C, SEXP d, SEXP alpha0, SEXP tol, SEXP maxiter)
{
    mk_store st;
    mk_store_read(store, &st);
    if (st.kind != MK_STORE_LOWRANK || !st.square)
        error("'store' must be a low-rank training store");
    const int n = st.n, M = st.M;
    if (!isReal(y) || XLENGTH(y) != n || !isReal(alpha0) || XLENGTH(alpha0) != n)
        error("'y' and 'alpha0' must be double vectors of length %d", n);
    if (!isReal(d) || XLENGTH(d) != M) error("'d' must be a double vector of length %d", M);
    double c = asReal(C), eps = asReal(tol);
    int mi = asInteger(maxiter);
    if (!(c > 0.0) || !R_FINITE(c) || !(eps > 0.0) || mi < 1) error("invalid C, tol or maxiter");
    int nprot = 0;
    SEXP a = PROTECT(duplicate(alpha0)); nprot++;
    mk_lr_factors fa;
    mk_lr_factors_init(&fa, &st);
    mk_lr_factors_set(&fa, REAL(d), st.nthreads);
    double *G = (double *) R_alloc(n, sizeof(double));
    double *w = (double *) R_alloc(fa.R > 0 ? fa.R : 1, sizeof(double));
    mk_svm_result r;
    mk_lsvm(fa.Ft, n, fa.R, REAL(y), c, fa.jit, eps, mi, REAL(a), G, w, &r);
    SEXP out = mk_svm_sexp(a, &r, "row_reads");
    UNPROTECT(nprot + 1);
    return out;
}
