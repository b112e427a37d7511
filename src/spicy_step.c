/* SpicyMKL: the step. The starting point and first sweep, the step cap, the line search
 * and the accepted step, the proximal (outer) update and the primal value.
 */
#include "spicy.h"

static void sp_primal(sp_state *S);

/* Starting point: rho (cold: the loss's start, balanced, inside the box), the first sweep over
   every kernel (K_m alpha_m and K_m rho for nonzero blocks, screening constants and ||rho||_{K_m}
   for all), the cold-start scaling, the first working set, z and the slack variables. */
void sp_start(sp_state *S)
{
    int n = S->n, M = S->M;
    const double *y = S->y;
    const sp_loss *L = S->L;
    double *rho = S->rho, *alpha = S->alpha;
    double C1 = S->C1;

    memset(S->Ka, 0, sizeof(double) * (size_t) n * M);
    for (int m = 0; m < M; m++) {
        int nz = 0;
        const double *am = alpha + (size_t) m * n;
        for (int i = 0; i < n; i++) if (am[i] != 0.0) { nz = 1; break; }
        S->anz[m] = nz;
        S->inS[m] = 0;
        S->anorm[m] = 0.0;
        S->sc.stamp[m] = -1;
    }
    if (!S->warm) {
        /* balanced (sum(rho) = 0) and inside the loss's box: a feasible dual point, scaled
           further below so that few kernels are active at the start (Remark 1) */
        for (int i = 0; i < n; i++) rho[i] = L->rho0 * y[i];
        double keep[2] = { rho[0], rho[1] };
        L->project(n, y, rho, S->o->cw);
        double nrm = 0.0;
        for (int i = 0; i < n; i++) nrm += fabs(rho[i]);
        if (!(nrm > 0.0)) { rho[0] = keep[0]; rho[1] = keep[1]; }   /* one class only */
    }
    if (L->interior) L->interior(n, y, rho, S->o->cw);

    /* K_m alpha_m for nonzero blocks, K_m rho0 for them too (fused) */
    int cnt = 0;
    for (int m = 0; m < M; m++) if (S->anz[m]) { S->list[cnt] = m; S->flag[cnt] = 1; cnt++; }
    sp_kernel_mv(S, cnt, rho, alpha, (size_t) n, S->Kr, S->Ka, 0);
    for (int j = 0; j < cnt; j++) {
        int m = S->list[j];
        S->anorm[m] = sp_sqrt0(mk_dot(n, alpha + (size_t) m * n, S->Ka + (size_t) m * n));
        S->inS[m] = 1;
    }
    /* norms of rho0 and the screening constants of every kernel: one full sweep (two triangle
       sweeps from MK_TRI_MIN rows) */
    double *ones = NULL;
    if (n >= MK_TRI_MIN) {
        ones = (double *) R_alloc(n, sizeof(double));
        for (int i = 0; i < n; i++) ones[i] = 1.0;
    }
    int nt = M > 1 ? sp_threads(S, (double) M * n * n) : 1;
    if (nt > M) nt = M;
    /* chunks of 8 kernels keep the scheduling cheap for thousands of small kernels; with few
       large ones, one kernel at a time keeps every thread busy */
    int chunk = M >= 64 * nt ? 8 : 1;
    (void) chunk;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, chunk) if (nt > 1)
#endif
    for (int m = 0; m < M; m++) {
        double *rs = sp_thread_buf(S->rsbuf, (size_t) n);
        double *kr = S->Kr + (size_t) m * n;
        if (S->lr.on) {
            sp_lr_stats(S, m, rho, kr, S->sc.s1 + m, S->sc.sqL + m, S->sc.K1 + (size_t) m * n);
            S->sc.nref[m] = sp_sqrt0(mk_dot(n, rho, kr));
            continue;
        }
        /* from MK_TRI_MIN rows an on-the-fly kernel is computed on its upper triangle only */
        mk_ksrc Km;
        sp_ksrc(S, m, &Km);
        if (ones)
            mk_kernel_stats_tri(&Km, rho, ones, kr, S->sc.s1 + m, S->sc.sqL + m, rs,
                                S->sc.K1 + (size_t) m * n);
        else
            mk_kernel_stats(&Km, rho, kr, S->sc.s1 + m, S->sc.sqL + m, rs,
                            S->sc.K1 + (size_t) m * n);
        S->sc.nref[m] = sp_sqrt0(mk_dot(n, rho, kr));
    }
    S->nprod += M;
    if (!S->warm && C1 > 0.0) {
        /* scale the cold start so that only the strongest kernels are active */
        double maxn = 0.0;
        for (int m = 0; m < M; m++) if (S->sc.nref[m] > maxn) maxn = S->sc.nref[m];
        double kap = maxn > 0.0 ? SP_START_SCALE * C1 / maxn : 1.0;
        if (kap < 1.0) {
            for (int i = 0; i < n; i++) rho[i] *= kap;
            for (int m = 0; m < M; m++) S->sc.nref[m] *= kap;
            for (int m = 0; m < M; m++) {
                double *kr = S->Kr + (size_t) m * n;
                for (int i = 0; i < n; i++) kr[i] *= kap;
            }
        }
    }
    for (int m = 0; m < M; m++) sp_set_ref(S, m, rho);
    /* the start is the first anchor of the screening bounds: every norm there is exact */
    memcpy(S->sc.xa, rho, sizeof(double) * n);
    for (int m = 0; m < M; m++) S->sc.ua[m] = S->sc.nref[m];
    /* zero blocks that are active at rho0 join S (K_m rho0 is already in Kr) */
    for (int m = 0; m < M; m++)
        if (!S->anz[m] && (S->sc.nref[m] > C1 * (1.0 - SP_THR_EPS) || !S->o->screen)) S->inS[m] = 1;
    sp_tick(S, 0);

    /* z (with the primal value at the start) and the slack variables consistent with it */
    sp_primal(S);
    if (!S->warm && L->aux_start) L->aux_start(n, y, S->z, S->aux);
    if (S->bx.on) {
        /* the box holds rho itself: no slack multipliers */
        memset(S->aux, 0, 2 * sizeof(double) * (size_t) n);
    }
}

/* The loss's cap on D; returns 1 if D is a descent direction (S->gd = g'D < 0). */
int sp_step_cap(sp_state *S)
{
    if (S->L->cap) S->L->cap(S->n, S->y, S->rho, S->g, S->D, S->tmp, S->o->cw);
    S->gd = mk_dot(S->n, S->g, S->D);
    return S->gd < 0.0;
}

/* Armijo backtracking on phi along D: r_m(c)^2 = r^2 + 2 c gamma B + c^2 gamma^2 Dq for m in S.
   With lazy screening, an accepted c first brings in the kernels outside S that may be active
   on [rho, rho + c D]; the test is then repeated at the same c. Returns 1 with *c the step. */
int sp_line_search(sp_state *S, double *cstep)
{
    int n = S->n, M = S->M;
    const sp_opts *o = S->o;
    const double *rho = S->rho, *D = S->D;
    double *tmp = S->tmp, *Bq = S->Bq, *Dq = S->Dq;
    double gamma = S->gamma, thr = S->thr, den = S->den, gammab = S->gammab;
    double lim = S->C1 * S->C1 * (1.0 - SP_THR_EPS);
    int lazy = o->screen && o->lazy;
    int nt = sp_threads(S, 3.0 * M * n);
    (void) nt;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
#endif
    for (int m = 0; m < M; m++) {
        if (!S->inS[m]) continue;
        const double *ka = S->Ka + (size_t) m * n, *kr = S->Kr + (size_t) m * n,
            *kd = S->KD + (size_t) m * n;
        double bb = gamma * mk_dot(n, D, kr);
        if (S->anz[m]) bb += mk_dot(n, D, ka);
        Bq[m] = bb;
        Dq[m] = mk_dot(n, D, kd);
    }
    double sd = 0.0;
    for (int i = 0; i < n; i++) sd += D[i];
    double c = 1.0;
    int ok = 0;
    for (int ls = 0; ls < 60; ls++) {
        if (ls > 0) R_CheckUserInterrupt();   /* trials may bring kernels in: products */
        for (int i = 0; i < n; i++) tmp[i] = rho[i] + c * D[i];
        double bc = *S->b + gammab * (S->sr + c * sd);
        double val = S->L->phi(n, S->y, tmp, S->aux, S->gsl, S->eps, NULL, NULL, S->o->cw) +
            bc * bc / (2.0 * gammab);
        for (int m = 0; m < M; m++) {
            if (!S->inS[m]) continue;
            double rr = S->r[m] * S->r[m] + 2.0 * c * gamma * Bq[m] +
                c * c * gamma * gamma * Dq[m];
            double rc = rr > 0.0 ? sqrt(rr) : 0.0;
            if (rc > thr) val += (rc - thr) * (rc - thr) / (2.0 * gamma * den);
        }
        if (o->verbose > 2 && ls < 3)
            Rprintf("      ls c=%.3e val-phi0=%.6e c*gd=%.6e\n", c, val - S->phi0, c * S->gd);
        if (val <= S->phi0 + 1e-4 * c * S->gd + SP_FLOOR * fabs(S->phi0)) {
            if (lazy) {
                /* kernels outside S that may be active on [rho, rho + c D] (tmp is the end
                   point; at rho itself they are certified inactive) */
                int cnew = 0;
                sp_bounds_all(S, tmp, S->sc.ubv, lim, 1, c);
                for (int m = 0; m < M; m++) {
                    if (S->inS[m]) continue;
                    if (S->sc.ubv[m] > lim) {
                        S->inS[m] = 1;
                        memset(S->Ka + (size_t) m * n, 0, sizeof(double) * n);
                        /* K_m rho is still exact if m left S in this Newton step */
                        S->list[cnew] = m; S->flag[cnew] = S->sc.stamp[m] == S->sc.stepid ? 0 : 1;
                        cnew++;
                    }
                }
                if (cnew > 0) {
                    sp_tick(S, 6);
                    sp_products(S, cnew, rho, D);
                    sp_tick(S, 5);
                    double rmx, rxc2;
                    mk_centred(n, rho, &rmx, &rxc2);
                    nt = cnew > 1 ? sp_threads(S, 8.0 * cnew * n) : 1;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
#endif
                    for (int j = 0; j < cnew; j++) {
                        int m = S->list[j];
                        const double *kr = S->Kr + (size_t) m * n, *kd = S->KD + (size_t) m * n;
                        sp_set_ref_c(S, m, rho, rmx, rxc2);
                        S->r[m] = gamma * S->sc.nref[m];
                        Bq[m] = gamma * mk_dot(n, D, kr);
                        Dq[m] = mk_dot(n, D, kd);
                    }
                    S->cnt += cnew;
                    continue;   /* the same c again, now with every kernel it needs */
                }
            }
            if (val > S->phi0 + 1e-4 * c * S->gd) S->nfloor++;
            ok = 1; break;
        }
        c *= 0.5;
    }
    *cstep = c;
    return ok;
}

/* rho <- rho + c D, and the products of S with it */
void sp_accept(sp_state *S, double c)
{
    int n = S->n, M = S->M;
    for (int i = 0; i < n; i++) S->rho[i] += c * S->D[i];
    int nt = sp_threads(S, 2.0 * M * n);
    (void) nt;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
#endif
    for (int m = 0; m < M; m++) {
        if (!S->inS[m]) continue;
        double *kr = S->Kr + (size_t) m * n;
        const double *kd = S->KD + (size_t) m * n;
        for (int i = 0; i < n; i++) kr[i] += c * kd[i];
    }
}

/* Outer updates (Eqs. 5, 6, 10, 11): alpha_m <- prox(alpha_m + gamma rho) with K_m alpha_m
   alongside, b <- b + gamma_b sum(rho), the loss's multipliers; then z and the primal value. */
void sp_prox_update(sp_state *S)
{
    int n = S->n, M = S->M;
    const double *rho = S->rho;
    double gamma = S->gamma, C1 = S->C1, C2 = S->C2;
    sp_norms(S);
    double sr = 0.0;
    for (int i = 0; i < n; i++) sr += rho[i];
    double thr = gamma * C1, den = 1.0 + gamma * C2;
    for (int m = 0; m < M; m++) {
        if (!S->inS[m]) continue;
        double *am = S->alpha + (size_t) m * n, *ka = S->Ka + (size_t) m * n;
        const double *kr = S->Kr + (size_t) m * n;
        double rm = S->r[m];
        if (rm > thr) {
            double s = (rm - thr) / (den * rm);
            for (int i = 0; i < n; i++) {
                am[i] = s * (am[i] + gamma * rho[i]);
                ka[i] = s * (ka[i] + gamma * kr[i]);
            }
            S->anorm[m] = s * rm;
            S->anz[m] = 1;
        } else {
            if (S->anz[m]) {
                memset(am, 0, sizeof(double) * n);
                memset(ka, 0, sizeof(double) * n);
            }
            S->anz[m] = 0;
            S->anorm[m] = 0.0;
            /* norm of rho is exact here: refresh the reference point */
            sp_set_ref(S, m, rho);
        }
    }
    *S->b += S->gammab * sr;
    if (S->L->aux_update)
        S->L->aux_update(n, S->y, rho, S->aux, S->gsl, S->eps, S->o->cw);
    sp_primal(S);
}

/* z = sum_m K_m alpha_m + b and the primal value at (alpha, b); active kernels, sum of norms */
static void sp_primal(sp_state *S)
{
    int n = S->n, M = S->M;
    double C1 = S->C1, C2 = S->C2;
    int nactive = 0;
    double pen = 0.0, sumnorm = 0.0, *z = S->z;
    for (int i = 0; i < n; i++) z[i] = *S->b;
    for (int m = 0; m < M; m++) {
        S->sm[m] = 0.0;
        if (!S->anz[m]) continue;
        const double *ka = S->Ka + (size_t) m * n;
        for (int i = 0; i < n; i++) z[i] += ka[i];
        nactive++;
        pen += C1 * S->anorm[m] + 0.5 * C2 * S->anorm[m] * S->anorm[m];
        sumnorm += S->anorm[m];
    }
    S->primal = S->L->value(n, S->y, z, S->eps, S->o->cw) + pen;
    S->nactive = nactive;
    S->sumnorm = sumnorm;
}

/* The line search's coefficients and the step's vectors */
void sp_step_alloc(sp_state *S)
{
    int n = S->n, M = S->M;
    S->Bq = (double *) R_alloc(M, sizeof(double));
    S->Dq = (double *) R_alloc(M, sizeof(double));
    S->tmp = (double *) R_alloc(n, sizeof(double));
    S->z = (double *) R_alloc(n, sizeof(double));
    S->u = (double *) R_alloc(n, sizeof(double));
}
