/* Shared numerics: one preconditioned conjugate-gradient solver. The matrix product and the
 * preconditioner come in as function pointers with a context (mk_cg); a Jacobi + factored block
 * preconditioner (mk_pcblock) and the deflation of a sequence of solves whose matrices differ
 * on the diagonal (mk_defl) are options. Used by SpicyMKL's Newton and model-round solves and
 * by L0/1's w-step (l01.c) and kernel ridge on the fly (uniform.c; neither preconditioned nor
 * deflated).
 */
#define USE_FC_LEN_T
#include "mklearn.h"
/* the same rounding in every build (see linalg.c) */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize ("fp-contract=off")
#endif
#include <R_ext/Lapack.h>
#include <math.h>
#include <string.h>
#ifndef FCONE
#define FCONE
#endif

/* ------------------------------------------------------------------ block preconditioner */

void mk_pcblock_init(mk_pcblock *B, int cap)
{
    memset(B, 0, sizeof(*B));
    B->nprev = -1;
    if (cap <= 0) return;
    B->cap = cap;
    B->idx = (int *) R_alloc(cap, sizeof(int));
    B->prev = (int *) R_alloc(cap, sizeof(int));
    B->zf = (double *) R_alloc(cap, sizeof(double));
    B->F = (double *) R_alloc((size_t) cap * cap, sizeof(double));
}

void mk_pcblock_prepare(mk_pcblock *B, int n, const double *key,
                        double (*entry)(const void *, int, int), const void *ctx)
{
    B->n = n;
    B->nf = 0;
    if (B->cap <= 0) return;
    int nf = 0;
    for (int i = 0; i < n; i++)
        if (key[i] == 0.0) {
            if (nf == B->cap) return;   /* too large to factor */
            B->idx[nf++] = i;
        }
    if (nf == 0) return;
    int same = nf == B->nprev;
    for (int b = 0; same && b < nf; b++) same = B->prev[b] == B->idx[b];
    if (!same) {
        double *F = B->F;
        for (int b = 0; b < nf; b++) {
            double *fb = F + (size_t) b * nf;
            for (int a = 0; a <= b; a++) fb[a] = entry(ctx, B->idx[a], B->idx[b]);
            fb[b] *= 1.0 + 1e-12;
        }
        int info = 0;
        F77_CALL(dpotrf)("U", &nf, F, &nf, &info FCONE);
        if (info != 0) { B->nprev = -1; return; }   /* singular block: Jacobi only */
        B->nprev = nf;
        memcpy(B->prev, B->idx, sizeof(int) * (size_t) nf);
    }
    B->nf = nf;
    B->used++;
}

/* z = P^{-1} r: Jacobi, then the block solved with its factor */
void mk_pcblock_apply(void *Bv, const double *r, double *z)
{
    const mk_pcblock *B = (const mk_pcblock *) Bv;
    const double *pre = B->pre;
    int n = B->n;
    for (int i = 0; i < n; i++) z[i] = pre[i] * r[i];
    int nf = B->nf;
    if (nf == 0) return;
    int one = 1, info = 0;
    for (int b = 0; b < nf; b++) B->zf[b] = r[B->idx[b]];
    F77_CALL(dpotrs)("U", &nf, &one, B->F, &nf, B->zf, &nf, &info FCONE);
    for (int b = 0; b < nf; b++) z[B->idx[b]] = B->zf[b];
}

/* ------------------------------------------------------------------ deflation */

/* Room for km directions of length n: one block of doubles, carved */
void mk_defl_alloc(mk_defl *Df, int n, int km)
{
    int info = 0, lw = -1;
    double wq = 0.0;
    F77_CALL(dsyev)("V", "U", &km, &wq, &km, &wq, &wq, &lw, &info FCONE FCONE);
    Df->lwork = info == 0 && wq > 3.0 * km ? (int) wq : 3 * km;
    size_t kn = (size_t) km * n, kk = (size_t) km * km;
    double *b = (double *) R_alloc(3 * kn + 2 * (size_t) n + 3 * kk + 3 * (size_t) km +
                                   (size_t) Df->lwork, sizeof(double));
    Df->kmax = km;
    Df->W = b; Df->Q = b + kn; Df->AW = b + 2 * kn; b += 3 * kn;
    Df->s0 = b; Df->dv = b + n; b += 2 * (size_t) n;
    Df->G = b; Df->E = b + kk; Df->T = b + 2 * kk; b += 3 * kk;
    Df->ev = b; Df->xv = b + km; Df->mu = b + 2 * km; b += 3 * (size_t) km;
    Df->wk = b;
    Df->di = (int *) R_alloc(n, sizeof(int));
}

/* For the solve at hand (diagonal part s): A W = Q + diag(s - s0) W and W'AW = G +
   W'diag(s - s0) W (the difference lives on the coordinates where s changed). The
   eigenvectors of W'AW with eigenvalues above 1e-8 of the largest, scaled by eigenvalue^(-1/2),
   go to T: W T is an A-orthonormal basis of the well-conditioned part of span W (the kept
   directions lose their conjugacy in floating point, and a later solve's matrix is not that of
   the solve that produced them). Returns kd, the size of that basis (0: no deflation). */
static int defl_prepare(mk_defl *Df, int n, const double *s)
{
    int k = Df->k, nd = 0;
    Df->kp = k;
    for (int i = 0; i < n; i++) {
        double dl = s[i] - Df->s0[i];
        if (dl != 0.0) { Df->di[nd] = i; Df->dv[nd++] = dl; }
    }
    for (int c = 0; c < k; c++) {
        const double *wc = Df->W + (size_t) c * n, *qc = Df->Q + (size_t) c * n;
        double *ac = Df->AW + (size_t) c * n;
        memcpy(ac, qc, sizeof(double) * n);
        for (int t = 0; t < nd; t++) ac[Df->di[t]] += Df->dv[t] * wc[Df->di[t]];
    }
    double *E = Df->E;
    for (int b = 0; b < k; b++) {
        const double *wb = Df->W + (size_t) b * n;
        for (int a = 0; a <= b; a++) {
            const double *wa = Df->W + (size_t) a * n;
            double e = Df->G[(size_t) b * Df->kmax + a];
            for (int t = 0; t < nd; t++) e += Df->dv[t] * wa[Df->di[t]] * wb[Df->di[t]];
            E[(size_t) b * k + a] = e; E[(size_t) a * k + b] = e;
        }
    }
    int info = 0, lw = Df->lwork;
    double *ev = Df->ev;
    F77_CALL(dsyev)("V", "U", &k, E, &k, ev, Df->wk, &lw, &info FCONE FCONE);
    if (info != 0 || !(ev[k - 1] > 0.0)) return 0;
    int c0 = 0;
    while (c0 < k && !(ev[c0] > 1e-8 * ev[k - 1])) c0++;
    int kd = k - c0;
    for (int c = 0; c < kd; c++) {
        const double *v = E + (size_t) (c0 + c) * k;
        double sc = 1.0 / sqrt(ev[c0 + c]), *tc = Df->T + (size_t) c * k;
        for (int j = 0; j < k; j++) tc[j] = v[j] * sc;
    }
    return kd;
}

/* mu = T'X'v (X = W or AW) */
static void defl_coef(mk_defl *Df, int n, int kd, const double *X, const double *v)
{
    int k = Df->kp;
    for (int j = 0; j < k; j++) Df->xv[j] = mk_dot(n, X + (size_t) j * n, v);
    for (int c = 0; c < kd; c++) {
        const double *tc = Df->T + (size_t) c * k;
        double m = 0.0;
        for (int j = 0; j < k; j++) m += tc[j] * Df->xv[j];
        Df->mu[c] = m;
    }
}

/* v += s W T mu */
static void defl_add(mk_defl *Df, int n, int kd, const double *X, double s, double *v)
{
    int k = Df->kp;
    for (int j = 0; j < k; j++) {
        double f = 0.0;
        for (int c = 0; c < kd; c++) f += Df->T[(size_t) c * k + j] * Df->mu[c];
        f *= s;
        const double *xj = X + (size_t) j * n;
        for (int i = 0; i < n; i++) v[i] += f * xj[i];
    }
}

/* p -= W T T'(AW)'z: the search direction A-orthogonal to W */
static void defl_project(mk_defl *Df, int n, int kd, const double *z, double *p)
{
    defl_coef(Df, n, kd, Df->AW, z);
    defl_add(Df, n, kd, Df->W, -1.0, p);
}

/* ------------------------------------------------------------------ the solver */

/* Deflated, the solve starts from the Galerkin solution on span W and keeps its search
   directions A-orthogonal to W; a recording solve (Df->rec) keeps its directions instead. */
int mk_cg_solve(const mk_cg *c, double *x, double *r, int *iters)
{
    int n = c->n;
    double *z = c->pc ? c->work : r, *p = c->work + n, *q = c->work + 2 * n;
    double target = c->tol;
    const double *s = c->shift;
    mk_defl *Df = (c->defl && c->defl->kmax > 0) ? c->defl : NULL;
    *iters = 0;
    int kd = (Df && !Df->rec && Df->k > 0) ? defl_prepare(Df, n, s) : 0;
    if (kd) {
        defl_coef(Df, n, kd, Df->W, r);
        defl_add(Df, n, kd, Df->W, 1.0, x);
        defl_add(Df, n, kd, Df->AW, -1.0, r);
        Df->used++;
        if (sqrt(mk_dot(n, r, r)) <= target) return 0;
    } else if (c->check_start && sqrt(mk_dot(n, r, r)) <= target) return 0;
    if (Df && Df->rec) { Df->k = 0; memcpy(Df->s0, s, sizeof(double) * n); }
    if (c->pc) c->pc(c->pc_ctx, r, z);
    for (int i = 0; i < n; i++) p[i] = z[i];
    if (kd) defl_project(Df, n, kd, z, p);
    double rz = mk_dot(n, r, z);
    int it, maxit = c->maxit;
    double tlast = mk_time();
    for (it = 0; it < maxit; it++) {
        if ((it & 31) == 31) mk_interrupt_every(&tlast, 0.02);   /* long solves at large n */
        c->mv(c->mv_ctx, p, q);
        double pq = mk_dot(n, p, q);
        if (!(pq > 0.0)) {
            /* no curvature along p: A is singular there. take_first: p itself is the step along
               the first (preconditioned steepest-descent) direction; a later breakdown keeps
               the iterate reached so far */
            if (it == 0 && c->take_first) {
                for (int i = 0; i < n; i++) { x[i] += p[i]; r[i] -= q[i]; }   /* r = b - A x */
                it = 1;
            }
            break;
        }
        if (Df && Df->k < Df->kmax) {
            /* keep p, scaled to p'Ap = 1, with A0 p = q - (s - s0) p */
            double sc = 1.0 / sqrt(pq);
            double *wc = Df->W + (size_t) Df->k * n, *qc = Df->Q + (size_t) Df->k * n;
            for (int i = 0; i < n; i++) {
                wc[i] = sc * p[i]; qc[i] = sc * (q[i] - (s[i] - Df->s0[i]) * p[i]);
            }
            for (int a = 0; a <= Df->k; a++)
                Df->G[(size_t) Df->k * Df->kmax + a] = mk_dot(n, Df->W + (size_t) a * n, qc);
            Df->k++;
        }
        double a = rz / pq;
        for (int i = 0; i < n; i++) { x[i] += a * p[i]; r[i] -= a * q[i]; }
        if (sqrt(mk_dot(n, r, r)) <= target) { it++; break; }
        if (c->pc) c->pc(c->pc_ctx, r, z);
        double rz2 = mk_dot(n, r, z), beta = rz2 / rz;
        rz = rz2;
        for (int i = 0; i < n; i++) p[i] = z[i] + beta * p[i];
        if (kd) defl_project(Df, n, kd, z, p);
    }
    if (Df) Df->rec = 0;
    *iters = it;
    return (it == 0 && !kd) ? 1 : 0;
}
