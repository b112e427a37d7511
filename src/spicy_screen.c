/* SpicyMKL: screening. The reference points of the bounds, the bounds of every kernel
 * outside the working set S (mk_kbound, kstats.c), the trust region on S and the screening of a
 * Newton step.
 */
#include "spicy.h"

/* the reference point of kernel m becomes v, whose K_m v is in Kr; vm, vc2: mean of v and
   squared norm of the centred v (mk_centred). Plain C: safe in OpenMP regions. */
void sp_set_ref_c(sp_state *S, int m, const double *v, double vm, double vc2)
{
    int n = S->n;
    const double *kr = S->Kr + (size_t) m * n;
    double t = 0.0;
    for (int i = 0; i < n; i++) t += kr[i];
    S->sc.nref[m] = sp_sqrt0(mk_dot(n, v, kr));
    S->sc.rt[m] = t;
    S->sc.cfid[m] = -1;
    S->sc.rmean[m] = vm; S->sc.rc2[m] = vc2;
    memcpy(S->sc.REF + (size_t) m * n, v, sizeof(double) * n);
}

void sp_set_ref(sp_state *S, int m, const double *v)
{
    double vm, vc2;
    mk_centred(S->n, v, &vm, &vc2);
    sp_set_ref_c(S, m, v, vm, vc2);
}

/* the screening reference of kernel m (outside S) */
static mk_kref sp_kref(const sp_state *S, int m)
{
    size_t o = (size_t) m * S->n;
    const sp_screening *c = &S->sc;
    mk_kref R = { c->REF + o, S->Kr + o, c->K1 + o, c->nref[m], c->rmean[m], c->rc2[m], c->rt[m],
                  c->s1[m] * c->s1[m], c->sqL[m] };
    return R;
}

/* screening bound of kernel m (outside S) at x (mean mx, centred squared norm xc2) */
static double sp_bound(const sp_state *S, int m, const double *x, double mx, double xc2)
{
    mk_kref R = sp_kref(S, m);
    return mk_kbound(S->n, x, mx, xc2, &R);
}

/* bound of kernel m (outside S) at rho + ce D0 from its segment dots (computed on first use) */
static double sp_seg_bound(sp_state *S, int m, double ce, double mx, double xc2)
{
    double *cf = S->sc.cf + 6 * (size_t) m;
    mk_kref R = sp_kref(S, m);
    if (S->sc.cfid[m] != S->sc.segid) {
        mk_kref_dots2(S->n, S->rho, S->D, &R, cf);
        cf[3] = cf[3] / S->sc.dsc; cf[4] = cf[4] / S->sc.dsc; cf[5] = cf[5] / S->sc.dsc;
        S->sc.cfid[m] = S->sc.segid;
    }
    return mk_kbound_dots(S->n, mx, xc2, cf[0] + ce * cf[3], cf[1] + ce * cf[4],
                          cf[2] + ce * cf[5], &R);
}

/* Screening bounds at x of every kernel outside S into ub[] (0 for the kernels of S); returns how
   many exceed lim. A test in O(1) per kernel comes first: with e = x - xa (xa the anchor point),
   ||x||_{K_m} <= ua[m] + |mean(e)| s1 + lc ||e - mean(e)||, and a kernel this certifies needs no
   bound from its reference point (O(n)). reset: when more than an eighth of the kernels needed
   that bound, x becomes the anchor (the bounds of all are computed).
   c >= 0: x = rho + c D, and the bounds come from the segment dots (O(1) per kernel). */
int sp_bounds_all(sp_state *S, const double *x, double *ub, double lim, int reset, double c)
{
    double ce = c * S->sc.dsc;
    int n = S->n, M = S->M;
    double mu = 0.0, ss = 0.0;
    for (int i = 0; i < n; i++) mu += x[i] - S->sc.xa[i];
    mu /= n;
    for (int i = 0; i < n; i++) { double d = x[i] - S->sc.xa[i] - mu; ss += d * d; }
    double amu = fabs(mu), w = sqrt(ss), mx, xc2;
    mk_centred(n, x, &mx, &xc2);
    int nfull = 0, nover = 0;
    int nt = sp_threads(S, 3.0 * M * n);
    (void) nt;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static) reduction(+:nfull, nover) if (nt > 1)
#endif
    for (int m = 0; m < M; m++) {
        if (S->inS[m]) { ub[m] = 0.0; continue; }
        double pre = S->sc.ua[m] + amu * S->sc.s1[m] + S->sc.sqL[m] * w;
        if (pre * pre <= lim) { ub[m] = pre * pre; continue; }
        ub[m] = c >= 0.0 ? sp_seg_bound(S, m, ce, mx, xc2) : sp_bound(S, m, x, mx, xc2);
        nfull++;
        nover += ub[m] > lim;
    }
    if (reset && 8 * nfull > M) {
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
#endif
        for (int m = 0; m < M; m++) {
            if (S->inS[m]) { S->sc.ua[m] = R_PosInf; continue; }
            double pre = S->sc.ua[m] + amu * S->sc.s1[m] + S->sc.sqL[m] * w;
            if (pre * pre <= lim)
                ub[m] = c >= 0.0 ? sp_seg_bound(S, m, ce, mx, xc2) : sp_bound(S, m, x, mx, xc2);
            S->sc.ua[m] = sqrt(ub[m]);
        }
        memcpy(S->sc.xa, x, sizeof(double) * n);
    }
    return nover;
}

/* Trust region on the kernel working set: halve the step while it would bring more than a
   budget of new kernels into S (their bound fails at rho + D). */
void sp_trust_region(sp_state *S)
{
    int n = S->n, M = S->M;
    S->sc.segid++;   /* a new segment: rho or D changed */
    S->sc.dsc = 1.0;
    if (!(SP_BUDGET > 0.0) || !S->o->screen) return;
    double lim = S->C1 * S->C1 * (1.0 - SP_THR_EPS);
    int nS = 0;
    for (int m = 0; m < M; m++) nS += S->inS[m];
    double budget = SP_BUDGET * (nS > 16 ? nS : 16);
    for (int tr = 0; tr < 8; tr++) {
        for (int i = 0; i < n; i++) S->tmp[i] = S->rho[i] + S->D[i];
        int nnew = sp_bounds_all(S, S->tmp, S->sc.ubv, lim, 0, 1.0);
        if (nnew <= budget) break;
        for (int i = 0; i < n; i++) S->D[i] *= 0.5;
        S->gd *= 0.5;
        S->sc.dsc *= 0.5;
    }
}

/* The working set for the segment [rho, rho + D] and its products K_m D (and K_m rho for
   kernels joining S).
   Lazy (the default): kernels outside S join only once the line search has found a step c that
   passes the Armijo test with the kernels of S alone (a lower bound of phi, since every term is
   >= 0), and the bound is then checked on [rho, rho + c D] only: steps are often cut to a small
   fraction of D early on, and the whole segment would bring in kernels that are never active.
   Kernels of S with a zero block that are inactive at rho leave S (their exact K_m rho stays in
   Kr) and come back, with K_m D only, if the accepted step needs them.
   Segment screening (lazy off): kernels outside S whose bound fails at rho + D join S now. */
void sp_screen(sp_state *S)
{
    int n = S->n, M = S->M;
    const sp_opts *o = S->o;
    const double *rho = S->rho, *D = S->D;
    double lim = S->C1 * S->C1 * (1.0 - SP_THR_EPS);
    int lazy = o->screen && o->lazy;
    int cnt = 0;
    S->sc.stepid++;
    for (int i = 0; i < n; i++) S->tmp[i] = rho[i] + D[i];
    double tmx, txc2, rmx, rxc2;
    mk_centred(n, S->tmp, &tmx, &txc2);
    mk_centred(n, rho, &rmx, &rxc2);
    /* kernels of S with a zero block: their exact norm at rho is known, so rho becomes their
       reference point */
    int nt = sp_threads(S, 4.0 * M * n);
    (void) nt;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
#endif
    for (int m = 0; m < M; m++)
        if (S->inS[m] && !S->anz[m]) sp_set_ref_c(S, m, rho, rmx, rxc2);
    for (int m = 0; m < M; m++) {
        if (S->inS[m]) {
            if (!S->anz[m]) {
                if (lazy ? S->sc.nref[m] * S->sc.nref[m] <= lim :
                    (o->screen && sp_bound(S, m, S->tmp, tmx, txc2) <=
                     lim)) {
                    S->inS[m] = 0;
                    S->sc.stamp[m] = S->sc.stepid;
                    continue;
                }
            }
            S->list[cnt] = m; S->flag[cnt] = 0; cnt++;
        } else if (!lazy) {
            if (sp_bound(S, m, S->tmp, tmx, txc2) > lim) {
                S->inS[m] = 1;
                memset(S->Ka + (size_t) m * n, 0, sizeof(double) * n);
                S->list[cnt] = m; S->flag[cnt] = 1; cnt++;
            }
        }
    }
    sp_tick(S, 4);
    sp_products(S, cnt, rho, D);
    sp_tick(S, 5);
    for (int j = 0; j < cnt; j++) if (S->flag[j] == 1) sp_set_ref_c(S, S->list[j], rho, rmx, rxc2);
    sp_norms(S);
    S->cnt = cnt;
}

/* The reference points, bound constants, anchor and segment dots of every kernel */
void sp_screen_alloc(sp_state *S)
{
    int n = S->n, M = S->M;
    size_t nM = (size_t) n * M;
    sp_screening *c = &S->sc;
    c->stamp = (int *) R_alloc(M, sizeof(int));
    c->REF = (double *) mk_alloc_huge(nM * sizeof(double));
    c->K1 = (double *) mk_alloc_huge(nM * sizeof(double));
    c->nref = (double *) R_alloc(M, sizeof(double));
    c->rmean = (double *) R_alloc(M, sizeof(double));
    c->rc2 = (double *) R_alloc(M, sizeof(double));
    c->rt = (double *) R_alloc(M, sizeof(double));
    c->sqL = (double *) R_alloc(M, sizeof(double));
    c->s1 = (double *) R_alloc(M, sizeof(double));
    c->ubv = (double *) R_alloc(M, sizeof(double));
    c->ua = (double *) R_alloc(M, sizeof(double));
    c->cf = (double *) R_alloc(6 * (size_t) M, sizeof(double));
    c->cfid = (int *) R_alloc(M, sizeof(int));
    c->segid = 0;
    c->dsc = 1.0;
    c->xa = (double *) R_alloc(n, sizeof(double));
}
