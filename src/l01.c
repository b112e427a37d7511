/* MKL-L0/1-SVM by ADMM (Shi & Zhu; steps 1-9 of the algorithm as restated in
 * inst/notes/NOTES-l01.md).
 *
 *   minimise (1/2) w' K(d) w + C #{i : u_i > 0}
 *   s.t.     u + Y K(d) w + b y = 1,  d >= 0,  sum(d) = 1,      K(d) = sum_m d_m K_m
 *
 * Kernels are read through the kernel store only. One iteration costs one batch of M kernel
 * products G = [K_1 w ... K_M w] (shared by the b-, d- and lambda-steps and the next u-step),
 * plus the w-step (I + rho1 K(d)) w = rhs, done by one of
 *   - warm-started conjugate gradients on the combined K(d) (wstep = 0), or
 *   - a Cholesky factor of I + rho1 K(d), reused while d does not change (wstep = 1).
 * On the fly the products K_m v (G, and K(d) p over the kernels with d_m > 0) are passes over
 * the column cache of kcache.c, and CG reads K(d)'s columns combined for as many points as the
 * budget leaves room for (n doubles each, refilled when d changes), the rest through the cache
 * (NOTES-store.md, "MKL-L0/1 on the fly"); the Cholesky w-step factors an n x n K(d).
 * The M x M d-system is solved exactly (Cholesky) and projected onto the simplex.
 *
 * Every starting value (including the warm-up working set) comes from the R front end
 * (R/l01.R), which owns the defaults. */
#define USE_FC_LEN_T
#include "mklearn.h"
#include <R_ext/BLAS.h>
#include <R_ext/Lapack.h>
#include <math.h>
#include <string.h>
#ifndef FCONE
#define FCONE
#endif

/* the eight blocks, in the order of the spec's stopping rule */
enum { B_U = 0, B_W, B_B, B_Z, B_D, B_THETA, B_A, B_LAMBDA, NBLOCK };
static const char *const block_names[NBLOCK] =
    { "u", "w", "b", "z", "d", "theta", "a", "lambda" };

typedef struct {
    double C, rho1, rho2, rho3, tol, cg_tol;
    int maxiter, warmup, wstep, cg_maxiter, joint, freeze_T;
    int kcache;        /* on the fly: entries of the column cache (0: every point) */
    int kcols;         /* on the fly, CG: K(d)'s columns held combined (points 0..kcols-1) */
    mk_progress *prog;
} l01_opts;

typedef struct {
    double *w, *u, *lambda, *d, *z, *theta;   /* n, n, n, M, M, M */
    double b, a;
    int *T;                                   /* n: 1 if in the working set */
    int *free;                                /* M: 0 for a kernel held at d_m = 0 */
} l01_iter;

typedef struct {
    int iterations, converged, n_T, n_S, chol_factorizations, cg_iterations, worst_block;
    int T_frozen;
    double change[NBLOCK], objective, time;
} l01_out;

/* ------------------------------------------------------------------ small helpers */

static double dist2(const double *a, const double *b, int n)
{
    double s = 0.0;
    for (int i = 0; i < n; i++) { double t = a[i] - b[i]; s += t * t; }
    return sqrt(s);
}

static double norm2(const double *a, int n) { return sqrt(mk_dot(n, a, a)); }

static int cmp_desc(const void *p, const void *q)
{
    double a = *(const double *) p, b = *(const double *) q;
    return (a < b) - (a > b);
}

/* Euclidean projection of v (length M) onto the probability simplex (Wang & Carreira-Perpinan
   2013): sort decreasingly, take the largest j with s_j - (cumsum_j - 1) / j > 0, shift by
   that threshold and clip at 0. srt: M doubles of scratch. */
static void simplex_project(double *v, int M, double *srt)
{
    memcpy(srt, v, (size_t) M * sizeof(double));
    qsort(srt, (size_t) M, sizeof(double), cmp_desc);
    double cum = 0.0, tau = 0.0;
    for (int j = 0; j < M; j++) {
        cum += srt[j];
        double t = (cum - 1.0) / (j + 1);
        if (srt[j] - t > 0) tau = t;
    }
    for (int m = 0; m < M; m++) v[m] = v[m] > tau ? v[m] - tau : 0.0;
}

/* kd = G d over the nf free kernels: column k of G (n x nf) is kernel fidx[k], weight d[fidx[k]];
   kernels with d_m = 0 are skipped */
static void comb_cols(const double *G, int n, int nf, const int *fidx, const double *d,
                      double *kd)
{
    for (int i = 0; i < n; i++) kd[i] = 0.0;
    for (int k = 0; k < nf; k++) {
        double dm = d[fidx[k]];
        if (dm == 0.0) continue;
        const double *g = G + (size_t) k * n;
        for (int i = 0; i < n; i++) kd[i] += dm * g[i];
    }
}

/* ------------------------------------------------------------------ the w-step */

typedef struct {
    int n, M, mode, have_factor, nfact, cgit;
    double *Kd;        /* n x n: K(d) (CG) or the Cholesky factor of I + rho1 K(d) */
    double *dfac;      /* M: the d of Kd */
    double *r, *q, *q2, *work;   /* residual, K(d) x of the two systems, CG scratch (3n) */
    mk_l01_lr *lr;     /* a low-rank store: the w-step through the factors (l01_lowrank.c) */
    mk_kcache *kc;     /* on the fly: the column cache (G, and K(d) p without Kd for CG) */
    mk_kdop kd;        /* on the fly, CG: K(d) p through the cache (kcache.c), for d = dfac */
} wsolver;

/* Make ws->Kd current for d: K(d) (CG) or the Cholesky factor of I + rho1 K(d) (reused while
   d does not change). */
static void wsolver_update(wsolver *ws, const mk_store *st, const double *d, double rho1)
{
    int n = ws->n, M = ws->M;
    if (ws->lr) { ws->nfact += mk_l01_lr_update(ws->lr, d, rho1); return; }
    if (ws->kc && ws->mode == 0) {   /* products through the cache: only the active kernels */
        if (ws->have_factor && memcmp(ws->dfac, d, (size_t) M * sizeof(double)) == 0) return;
        memcpy(ws->dfac, d, (size_t) M * sizeof(double));
        ws->have_factor = 1;
        mk_kdop_set(&ws->kd, ws->dfac);
        return;
    }
    if (ws->have_factor && memcmp(ws->dfac, d, (size_t) M * sizeof(double)) == 0) return;
    mk_store_combine(st, d, ws->Kd);
    if (ws->mode == 1) {
        for (size_t k = 0; k < (size_t) n * n; k++) ws->Kd[k] *= rho1;
        for (int i = 0; i < n; i++) ws->Kd[(size_t) i * n + i] += 1.0;
        int info = 0;
        F77_CALL(dpotrf)("L", &n, ws->Kd, &n, &info FCONE);
        if (info != 0) error("l01: I + rho1 K(d) is not positive definite (dpotrf %d)", info);
        ws->nfact++;
    }
    memcpy(ws->dfac, d, (size_t) M * sizeof(double));
    ws->have_factor = 1;
}

/* q_k = K(d) p_k for k < np (1 or 2): the combined kernel, or on the fly the summed columns and
   one pass over the cache for both systems (mk_kdop_mv, kcache.c) */
static void wsolver_kdv(wsolver *ws, int np, const double *p1, const double *p2, double *q1,
                        double *q2)
{
    if (!ws->kc) { mk_symv2_full(ws->Kd, ws->n, p1, p2, q1, q2); return; }
    mk_kdop_mv(&ws->kd, np, p1, p2, q1, q2);
}

/* The CG operator of I + rho1 K(d): q = p + rho1 K(d) p. */
typedef struct { wsolver *ws; double rho1; } wop;

static void wop_mv(void *ctx, const double *p, double *q)
{
    const wop *o = (const wop *) ctx;
    int n = o->ws->n;
    wsolver_kdv(o->ws, 1, p, NULL, q, NULL);
    for (int i = 0; i < n; i++) q[i] = p[i] + o->rho1 * q[i];
}

/* (I + rho1 K(d)) x_k = rhs_k for k < nrhs (1 or 2); x_k holds the previous solution (the CG
   warm start) on entry. Conjugate gradients (cg.c), one system after the other, each stopped by
   its own residual test relative to ||rhs_k||; their starting products K(d) x_k share one
   sweep. Cholesky: one dpotrs per system. */
static void wsolve(wsolver *ws, double rho1, int nrhs, const double *const *rhs,
                   double *const *x, double cg_tol, int cg_maxiter)
{
    int n = ws->n, one = 1;
    if (ws->lr) {
        ws->cgit += mk_l01_lr_solve(ws->lr, rho1, nrhs, rhs, x, cg_tol, cg_maxiter);
        return;
    }
    if (ws->mode == 1) {
        for (int k = 0; k < nrhs; k++) {
            memcpy(x[k], rhs[k], (size_t) n * sizeof(double));
            int info = 0;
            F77_CALL(dpotrs)("L", &n, &one, ws->Kd, &n, x[k], &n, &info FCONE);
        }
        return;
    }
    double *q[2] = { ws->q, ws->q2 };
    wsolver_kdv(ws, nrhs, x[0], nrhs > 1 ? x[1] : NULL, q[0], q[1]);
    wop op = { ws, rho1 };
    mk_cg cg;
    memset(&cg, 0, sizeof(cg));
    cg.n = n; cg.maxit = cg_maxiter; cg.mv = wop_mv; cg.mv_ctx = &op;
    cg.check_start = 1; cg.work = ws->work;
    for (int k = 0; k < nrhs; k++) {
        for (int i = 0; i < n; i++) ws->r[i] = rhs[k][i] - x[k][i] - rho1 * q[k][i];
        double bn = norm2(rhs[k], n);
        cg.tol = cg_tol * (bn > 0 ? bn : 1.0);
        int iters = 0;
        mk_cg_solve(&cg, x[k], ws->r, &iters);
        ws->cgit += iters;
    }
}

/* ------------------------------------------------------------------ the ADMM */

/* History columns (the names are given to R in the wrapper). */
#define L01_HCOL 18

/* Scratch of the ADMM and the state that lives across iterations (G = [K_m w] over the free
   kernels fidx, K(d) w, the working sets and the w-step's solver). Kernels held at d_m = 0 take
   no part: G and the d-system are nf wide, so their cost follows the free kernels, not M. */
typedef struct {
    int n, M, nf, *fidx;
    double thr;                                /* sqrt(2 C / rho1), the u-step's threshold */
    double *G, *kdw, *s, *rhs, *v, *old, *oldM, *w0, *w1, *H, *rd, *srt;
    int *S, *Tp, *Tpp;                   /* kernel working set; T one and two iterations ago */
    int frozen, ncycle;
    wsolver ws;
} l01_work;

static double *dalloc(size_t len) { return (double *) R_alloc(len, sizeof(double)); }

/* G = [K_m w] over the free kernels (every kernel: no index list); on the fly one pass over
   the column cache */
static void l01_products(l01_work *k, const mk_store *st, const double *w)
{
    const int *idx = k->nf == k->M ? NULL : k->fidx;
    if (k->ws.kc) mk_kcache_mv(k->ws.kc, 0, idx, k->nf, 1, &w, &k->G);
    else mk_store_mv(st, idx, k->nf, w, k->G, (size_t) k->n);
}

static void l01_work_init(l01_work *k, const mk_store *st, const l01_opts *o, const l01_iter *x)
{
    int n = st->n, M = st->M, nf = 0;
    k->n = n; k->M = M;
    k->fidx = (int *) R_alloc(M, sizeof(int));
    for (int m = 0; m < M; m++) if (x->free[m]) k->fidx[nf++] = m;
    k->nf = nf;
    k->thr = sqrt(2.0 * o->C / o->rho1);
    k->G = dalloc((size_t) n * nf);
    k->kdw = dalloc(n); k->s = dalloc(n); k->rhs = dalloc(n); k->v = dalloc(n);
    k->old = dalloc(n); k->oldM = dalloc(M); k->w0 = dalloc(n); k->w1 = dalloc(n);
    k->H = dalloc((size_t) nf * nf); k->rd = dalloc(M); k->srt = dalloc(2 * (size_t) M);
    k->S = (int *) R_alloc(M, sizeof(int));
    k->Tp = (int *) R_alloc(n, sizeof(int));
    k->Tpp = (int *) R_alloc(n, sizeof(int));
    k->frozen = 0; k->ncycle = 0;
    for (int i = 0; i < n; i++) k->Tp[i] = k->Tpp[i] = x->T[i];

    wsolver *ws = &k->ws;
    ws->n = n; ws->M = M; ws->mode = o->wstep; ws->have_factor = 0; ws->nfact = 0; ws->cgit = 0;
    ws->lr = st->kind == MK_STORE_LOWRANK ? mk_l01_lr_new(st, o->wstep, x->free) : NULL;
    ws->kc = NULL;
    if (st->kind == MK_STORE_FLY) {
        ws->kc = (mk_kcache *) R_alloc(1, sizeof(mk_kcache));
        mk_kcache_init(ws->kc, st, o->kcache);
        if (o->wstep == 0) mk_kdop_init(&ws->kd, ws->kc, o->kcols);
    }
    ws->Kd = ws->lr || (ws->kc && o->wstep == 0) ? NULL : dalloc((size_t) n * n);
    ws->dfac = dalloc(M);
    ws->r = dalloc(n); ws->q = dalloc(n); ws->q2 = dalloc(n);
    ws->work = dalloc(3 * (size_t) n);

    /* G = [K_m w], K(d) w for the starting point */
    l01_products(k, st, x->w);
    comb_cols(k->G, n, nf, k->fidx, x->d, k->kdw);
    for (int m = 0; m < M; m++) k->S[m] = x->free[m];
    memcpy(k->w0, x->w, (size_t) n * sizeof(double));
    for (int i = 0; i < n; i++) k->w1[i] = 0.0;
}

/* Step 1, u: the L0/1 proximal step on s with the working set T. Returns the change of u. */
static double l01_u_step(l01_work *k, const double *y, const l01_opts *o, l01_iter *x, int it)
{
    int n = k->n;
    double *s = k->s;
    for (int i = 0; i < n; i++)
        s[i] = 1.0 - y[i] * k->kdw[i] - x->b * y[i] - x->lambda[i] / o->rho1;
    if (it > o->warmup && !k->frozen) {
        /* T from s; a working set that alternates between two sets (points leave T, lose their
           multiplier, and re-enter) is frozen at the points common to both after three such
           cycles, or at iteration freeze_T: the rest is then an ADMM on a fixed working set */
        int same2 = 1, same1 = 1;
        for (int i = 0; i < n; i++) {
            k->Tpp[i] = k->Tp[i];
            k->Tp[i] = x->T[i];
            x->T[i] = (s[i] > 0.0 && s[i] <= k->thr);
            same2 &= x->T[i] == k->Tpp[i];
            same1 &= x->T[i] == k->Tp[i];
        }
        if (it > o->warmup + 2 && same2 && !same1) k->ncycle++;
        if (k->ncycle >= 3 || it >= o->freeze_T) {
            for (int i = 0; i < n; i++) x->T[i] = x->T[i] && k->Tp[i];
            k->frozen = it;
        }
    }
    memcpy(k->old, x->u, (size_t) n * sizeof(double));
    for (int i = 0; i < n; i++) x->u[i] = x->T[i] ? 0.0 : s[i];
    return dist2(k->old, x->u, n);
}

/* Steps 2-3, w and b (one after the other as in the spec, or jointly), then G and K(d) w for
   the new w. Sets the changes of w and b. */
static void l01_wb_step(l01_work *k, const mk_store *st, const double *y, const l01_opts *o,
                        l01_iter *x, double *ch)
{
    int n = k->n;
    double rho1 = o->rho1, *rhs = k->rhs, *v = k->v, *w0 = k->w0, *w1 = k->w1;
    wsolver_update(&k->ws, st, x->d, rho1);
    memcpy(k->old, x->w, (size_t) n * sizeof(double));
    double bnew;
    if (o->joint) {
        /* (w, b) as one block: w = w0 - b w1 with (I + rho1 K(d)) w0 = -Y (lambda +
           rho1 (u - 1)), (I + rho1 K(d)) w1 = rho1 1, and b from y'(u + Y K(d) w + b y - 1
           + lambda / rho1) = 0 */
        for (int i = 0; i < n; i++) rhs[i] = -y[i] * (x->lambda[i] + rho1 * (x->u[i] - 1.0));
        if (k->ws.lr && k->ws.mode == 1) {
            /* Woodbury on a low-rank store: w, b and G in two passes over the factors */
            double sy = 0.0;
            for (int i = 0; i < n; i++) sy += y[i] * (x->u[i] - 1.0 + x->lambda[i] / rho1);
            bnew = mk_l01_lr_wb(k->ws.lr, rho1, rhs, sy, k->nf, k->fidx, x->w, k->G);
        } else {
            double num = 0.0, den = 0.0;
            for (int i = 0; i < n; i++) v[i] = rho1;
            const double *rr2[2] = { rhs, v };
            double *xx2[2] = { w0, w1 };
            wsolve(&k->ws, rho1, 2, rr2, xx2, o->cg_tol, o->cg_maxiter);
            for (int i = 0; i < n; i++) {
                num += y[i] * (x->u[i] - 1.0 + x->lambda[i] / rho1) + (rhs[i] - w0[i]) / rho1;
                den += w1[i] / rho1;
            }
            bnew = -num / den;
            for (int i = 0; i < n; i++) x->w[i] = w0[i] - bnew * w1[i];
            l01_products(k, st, x->w);
        }
        comb_cols(k->G, n, k->nf, k->fidx, x->d, k->kdw);
    } else {
        /* the spec's order: w (2), then b (3) with the new w */
        for (int i = 0; i < n; i++)
            rhs[i] = -y[i] * (x->lambda[i] + rho1 * (x->u[i] + x->b * y[i] - 1.0));
        const double *rr1[1] = { rhs };
        double *xx1[1] = { x->w };
        wsolve(&k->ws, rho1, 1, rr1, xx1, o->cg_tol, o->cg_maxiter);
        l01_products(k, st, x->w);
        comb_cols(k->G, n, k->nf, k->fidx, x->d, k->kdw);
        double sb = 0.0;
        for (int i = 0; i < n; i++)
            sb += y[i] * (x->lambda[i] + rho1 * (x->u[i] + y[i] * k->kdw[i] - 1.0));
        bnew = -sb / (n * rho1);
    }
    ch[B_W] = dist2(k->old, x->w, n);
    ch[B_B] = fabs(bnew - x->b);
    x->b = bnew;
}

/* Steps 4-8: z and the kernel working set S, the exact d-system, theta and a (with d before
   the projection), the projection of d onto the simplex. Sets the changes of z, d, theta, a. */
static void l01_d_step(l01_work *k, const double *y, const l01_opts *o, l01_iter *x, double *ch)
{
    int n = k->n, M = k->M, nf = k->nf, one = 1, *S = k->S, *fidx = k->fidx;
    double rho1 = o->rho1, rho2 = o->rho2, rho3 = o->rho3, *H = k->H, *rd = k->rd, *v = k->v;
    /* 4. z and S */
    memcpy(k->oldM, x->z, (size_t) M * sizeof(double));
    for (int m = 0; m < M; m++) {
        double t = x->d[m] + x->theta[m] / rho2;
        S[m] = x->free[m] && t > 0.0;
        x->z[m] = S[m] ? t : 0.0;
    }
    ch[B_Z] = dist2(k->oldM, x->z, M);

    /* 5. d: (rho1 G'G + rho2 I + rho3 11') d = r over the free kernels, solved exactly (a
       kernel held out solves d_m = 0 and is left out of the system) */
    for (int i = 0; i < n; i++) {
        double q = y[i] * x->u[i] + x->b - y[i];     /* (Y (u + b y - 1))_i */
        v[i] = -0.5 * x->w[i] - y[i] * x->lambda[i] - rho1 * q;
    }
    {
        double zero = 0.0, fone = 1.0;
        F77_CALL(dgemv)("T", &n, &nf, &fone, k->G, &n, v, &one, &zero, rd, &one FCONE);
        F77_CALL(dsyrk)("L", "T", &nf, &n, &rho1, k->G, &n, &zero, H, &nf FCONE FCONE);
    }
    for (int j = 0; j < nf; j++) {
        int m = fidx[j];
        rd[j] += -x->theta[m] + rho2 * x->z[m] - x->a + rho3;
        for (int l = j; l < nf; l++) H[(size_t) j * nf + l] += rho3;
        H[(size_t) j * nf + j] += rho2;
    }
    memcpy(k->oldM, x->d, (size_t) M * sizeof(double));
    if (mk_chol_solve(H, nf, rd, 1) != 0) error("l01: the d-system is not positive definite");
    double *dn = rd;

    /* 6. theta on S, 7. a: both with d before the projection */
    double thch = 0.0, sumd = 0.0;
    for (int j = 0; j < nf; j++) {
        int m = fidx[j];
        sumd += dn[j];
        if (S[m]) {
            double t = rho2 * (dn[j] - x->z[m]);
            x->theta[m] += t;
            thch += t * t;
        }
    }
    ch[B_THETA] = sqrt(thch);
    double da = rho3 * (sumd - 1.0);
    x->a += da;
    ch[B_A] = fabs(da);

    /* 8. project d onto the simplex over the free kernels, zero outside S */
    simplex_project(dn, nf, k->srt);
    for (int m = 0; m < M; m++) x->d[m] = 0.0;
    for (int j = 0; j < nf; j++) if (S[fidx[j]]) x->d[fidx[j]] = dn[j];
    ch[B_D] = dist2(k->oldM, x->d, M);
}

/* Step 9, lambda with the new d (K(d) w recombined from G). Returns the change of lambda. */
static double l01_lambda_step(l01_work *k, const double *y, const l01_opts *o, l01_iter *x)
{
    int n = k->n;
    comb_cols(k->G, n, k->nf, k->fidx, x->d, k->kdw);
    memcpy(k->old, x->lambda, (size_t) n * sizeof(double));
    for (int i = 0; i < n; i++)
        x->lambda[i] = x->T[i] ?
            x->lambda[i] + o->rho1 * (x->u[i] + y[i] * k->kdw[i] + x->b * y[i] - 1.0) : 0.0;
    return dist2(k->old, x->lambda, n);
}

/* The changes relative to the blocks' norms, the objective and the history row. Returns the
   largest relative change (the stopping criterion). */
static double l01_record(l01_work *k, const l01_opts *o, const l01_iter *x, double *ch, int it,
                         double t0, mk_hist *h, l01_out *out)
{
    int n = k->n, M = k->M;
    double hrow[L01_HCOL];
    double norms[NBLOCK] = { norm2(x->u, n), norm2(x->w, n), fabs(x->b), norm2(x->z, M),
                             norm2(x->d, M), norm2(x->theta, M), fabs(x->a),
                             norm2(x->lambda, n) };
    double worst = 0.0;
    int wb = 0;
    for (int b = 0; b < NBLOCK; b++) {
        ch[b] /= (norms[b] > 1.0 ? norms[b] : 1.0);
        if (ch[b] > worst) { worst = ch[b]; wb = b; }
        out->change[b] = ch[b];
    }
    out->worst_block = wb;
    int nT = 0, nS = 0, nviol = 0;
    double quad = 0.0;
    for (int i = 0; i < n; i++) {
        nT += x->T[i];
        nviol += x->u[i] > 0.0;
        quad += x->w[i] * k->kdw[i];
    }
    for (int m = 0; m < M; m++) nS += k->S[m];
    out->objective = 0.5 * quad + o->C * nviol;
    memcpy(k->srt, x->d, (size_t) M * sizeof(double));
    qsort(k->srt, (size_t) M, sizeof(double), cmp_desc);
    int nact = 0;
    for (int m = 0; m < M; m++) nact += x->d[m] > 0.0;
    hrow[0] = it; hrow[1] = mk_time() - t0; hrow[2] = out->objective; hrow[3] = NA_REAL;
    hrow[4] = nact;
    for (int b = 0; b < NBLOCK; b++) hrow[5 + b] = ch[b];
    hrow[13] = nT; hrow[14] = nS;
    for (int b = 0; b < 3; b++) hrow[15 + b] = b < M ? k->srt[b] : NA_REAL;
    mk_hist_add(h, hrow);
    out->n_T = nT; out->n_S = nS;
    return worst;
}

static void l01_admm(const mk_store *st, const double *y, const l01_opts *o, l01_iter *x,
                     mk_hist *h, l01_out *out)
{
    l01_work k;
    double t0 = mk_time();
    l01_work_init(&k, st, o, x);
    out->converged = 0;
    out->worst_block = -1;
    int it;
    for (it = 1; it <= o->maxiter; it++) {
        R_CheckUserInterrupt();
        double ch[NBLOCK];
        ch[B_U] = l01_u_step(&k, y, o, x, it);
        l01_wb_step(&k, st, y, o, x, ch);
        l01_d_step(&k, y, o, x, ch);
        ch[B_LAMBDA] = l01_lambda_step(&k, y, o, x);
        double worst = l01_record(&k, o, x, ch, it, t0, h, out);
        if (worst < o->tol) { out->converged = 1; break; }
        mk_progress_tick(o->prog, it, o->maxiter, worst, o->tol);
    }
    mk_progress_done(o->prog);
    out->iterations = it > o->maxiter ? o->maxiter : it;
    out->T_frozen = k.frozen;
    out->chol_factorizations = k.ws.nfact;
    out->cg_iterations = k.ws.cgit;
    out->time = mk_time() - t0;
}

/* ------------------------------------------------------------------ .Call */

static double *vec_copy(SEXP lst, const char *name, int len)
{
    double *out = (double *) R_alloc(len, sizeof(double));
    mk_list_copy(lst, name, out, len);
    return out;
}

/* The options by name (R/l01.R fills every entry), with their ranges checked. */
static void l01_read_opts(SEXP control, double C, int n, l01_opts *o)
{
    o->C = C;
    o->rho1 = mk_ctl_real(control, "rho1");
    o->rho2 = mk_ctl_real(control, "rho2");
    o->rho3 = mk_ctl_real(control, "rho3");
    o->tol = mk_ctl_real(control, "tol");
    o->cg_tol = mk_ctl_real(control, "cg_tol");
    o->maxiter = mk_ctl_int(control, "maxiter");
    o->warmup = mk_ctl_int(control, "warmup");
    o->cg_maxiter = n;
    o->joint = mk_ctl_int(control, "joint_wb");
    o->freeze_T = mk_ctl_int(control, "freeze_T");
    /* optional (absent: the whole cache), so calls recorded before it still run */
    SEXP kcx = mk_list_elt(control, "kcache", NULL);
    o->kcache = isNull(kcx) ? 0 : asInteger(kcx);
    if (o->kcache < 0 || o->kcache == NA_INTEGER) error("control entry 'kcache' must be >= 0");
    SEXP kcl = mk_list_elt(control, "kcols", NULL);
    o->kcols = isNull(kcl) ? 0 : asInteger(kcl);
    if (o->kcols < 0 || o->kcols == NA_INTEGER) error("control entry 'kcols' must be >= 0");
    SEXP wsx = mk_ctl(control, "wstep");
    if (!isString(wsx) || LENGTH(wsx) != 1) error("control entry 'wstep' must be one string");
    const char *wsn = CHAR(STRING_ELT(wsx, 0));
    if (strcmp(wsn, "cg") == 0) o->wstep = 0;
    else if (strcmp(wsn, "chol") == 0) o->wstep = 1;
    else error("control entry 'wstep' must be \"cg\" or \"chol\"");
    if (!(o->rho1 > 0 && o->rho2 > 0 && o->rho3 > 0)) error("rho1, rho2, rho3 must be positive");
}

/* Every starting value by name (copies: the ADMM updates them in place). */
static void l01_read_start(SEXP start, int n, int M, l01_iter *x)
{
    if (!isNewList(start)) error("'start' must be a named list");
    x->w = vec_copy(start, "w", n);
    x->u = vec_copy(start, "u", n);
    x->lambda = vec_copy(start, "lambda", n);
    x->d = vec_copy(start, "d", M);
    x->z = vec_copy(start, "z", M);
    x->theta = vec_copy(start, "theta", M);
    x->b = mk_ctl_real(start, "b");
    x->a = mk_ctl_real(start, "a");
    SEXP Tx = mk_ctl(start, "T");
    if (!isLogical(Tx) || LENGTH(Tx) != n) error("start value 'T' must be %d logicals", n);
    x->T = (int *) R_alloc(n, sizeof(int));
    for (int i = 0; i < n; i++) x->T[i] = LOGICAL(Tx)[i] == TRUE;
    /* 'free' is optional (absent: every kernel free), so calls recorded before it still run */
    SEXP Fx = R_NilValue, nms = getAttrib(start, R_NamesSymbol);
    for (int k = 0; k < LENGTH(start) && !isNull(nms); k++)
        if (strcmp(CHAR(STRING_ELT(nms, k)), "free") == 0) Fx = VECTOR_ELT(start, k);
    if (!isNull(Fx) && (!isLogical(Fx) || LENGTH(Fx) != M))
        error("start value 'free' must be %d logicals", M);
    x->free = (int *) R_alloc(M, sizeof(int));
    int nfree = 0;
    for (int m = 0; m < M; m++) nfree += x->free[m] = isNull(Fx) || LOGICAL(Fx)[m] == TRUE;
    if (nfree == 0) error("start value 'free' must keep at least one kernel");
}

/* The result list (returned protected once). */
static SEXP l01_result(const l01_iter *x, const l01_out *out, const mk_hist *h, int n, int M)
{
    static const char *const hnames[L01_HCOL] = {
        "iteration", "time", "objective", "gap", "n_active",
        "change_u", "change_w", "change_b", "change_z", "change_d", "change_theta", "change_a",
        "change_lambda", "n_T", "n_S", "d_1", "d_2", "d_3" };
    static const char *const rnames[] = {
        "w", "b", "d", "z", "theta", "a", "lambda", "u", "T", "objective", "converged",
        "iterations", "history", "change", "worst_block", "n_T", "n_S", "chol_factorizations",
        "cg_iterations", "time", "T_frozen", NULL };
    SEXP res = mk_list_new(rnames);
    mk_list_set(res, "w", mk_real_vec(x->w, n));
    mk_list_set(res, "b", ScalarReal(x->b));
    mk_list_set(res, "d", mk_real_vec(x->d, M));
    mk_list_set(res, "z", mk_real_vec(x->z, M));
    mk_list_set(res, "theta", mk_real_vec(x->theta, M));
    mk_list_set(res, "a", ScalarReal(x->a));
    mk_list_set(res, "lambda", mk_real_vec(x->lambda, n));
    mk_list_set(res, "u", mk_real_vec(x->u, n));
    SEXP Tout = allocVector(LGLSXP, n);
    mk_list_set(res, "T", Tout);
    for (int i = 0; i < n; i++) LOGICAL(Tout)[i] = x->T[i];
    mk_list_set(res, "objective", ScalarReal(out->objective));
    mk_list_set(res, "converged", ScalarLogical(out->converged));
    mk_list_set(res, "iterations", ScalarInteger(out->iterations));
    mk_list_set(res, "history", mk_hist_sexp(h, hnames));
    SEXP chg = allocVector(REALSXP, NBLOCK);
    mk_list_set(res, "change", chg);
    SEXP chn = PROTECT(allocVector(STRSXP, NBLOCK));
    for (int b = 0; b < NBLOCK; b++) {
        REAL(chg)[b] = out->change[b];
        SET_STRING_ELT(chn, b, mkChar(block_names[b]));
    }
    setAttrib(chg, R_NamesSymbol, chn);
    UNPROTECT(1);
    mk_list_set(res, "worst_block",
                mkString(out->worst_block >= 0 ? block_names[out->worst_block] : ""));
    mk_list_set(res, "n_T", ScalarInteger(out->n_T));
    mk_list_set(res, "n_S", ScalarInteger(out->n_S));
    mk_list_set(res, "chol_factorizations", ScalarInteger(out->chol_factorizations));
    mk_list_set(res, "cg_iterations", ScalarInteger(out->cg_iterations));
    mk_list_set(res, "time", ScalarReal(out->time));
    mk_list_set(res, "T_frozen", ScalarInteger(out->T_frozen));
    return res;
}

SEXP mkc_l01(SEXP store, SEXP y, SEXP C, SEXP control, SEXP start)
{
    mk_store st;
    mk_store_read(store, &st);
    if (!st.square) error("l01 needs a square training store");
    int n = st.n, M = st.M;
    if (!isReal(y) || LENGTH(y) != n) error("'y' must be %d doubles", n);
    const double *yy = REAL(y);
    for (int i = 0; i < n; i++)
        if (yy[i] != 1.0 && yy[i] != -1.0) error("'y' must be in {-1, +1}");
    if (!isReal(C) || LENGTH(C) != 1 || !(REAL(C)[0] > 0)) error("'C' must be one positive number");
    l01_opts o;
    l01_read_opts(control, REAL(C)[0], n, &o);
    mk_progress prog;
    mk_progress_init(&prog, control);
    o.prog = &prog;
    l01_iter x;
    l01_read_start(start, n, M, &x);

    mk_hist h;
    mk_hist_init(&h, L01_HCOL);
    l01_out out;
    memset(&out, 0, sizeof(out));
    l01_admm(&st, yy, &o, &x, &h, &out);
    SEXP res = l01_result(&x, &out, &h, n, M);
    UNPROTECT(1);
    return res;
}
