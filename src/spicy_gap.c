/* SpicyMKL: the dual value and the duality gap at a feasible dual point, and the SVM dual
 * point that certifies the hinge near the tolerance.
 */
#include "spicy.h"

/* D at the feasible point u = rho projected onto the loss's box and sum(u) = 0, scaled into the
   C1-balls (block 1-norm) or with the elastic-net penalty term; the relative gap (P - D) / P.
   Kernels outside S whose bound certifies ||u||_{K_m} <= C1 are not read; the sweep over the
   others also makes u their screening reference point (K_m u costs the same reads as u'K_m u,
   and u is close to the next iterates). u0 (NULL: rho) is the point projected. */
static void sp_dual_gap_at(sp_state *S, const double *u0)
{
    int n = S->n, M = S->M;
    const double *y = S->y;
    const sp_loss *L = S->L;
    double C1 = S->C1, C2 = S->C2, eps = S->eps;
    double lim = C1 * C1 * (1.0 - SP_THR_EPS);
    double *u = S->u, *sm = S->sm, *tmp = S->tmp;
    memcpy(u, u0 ? u0 : S->rho, sizeof(double) * n);
    L->project(n, y, u, S->o->cw);
    /* upper bounds of ||u||^2_{K_m}: kernels of S from rho (K_m rho is exact there), the others
       from their reference points */
    double *ub = S->sc.ubv, *key = S->Dq;   /* Dq: free outside the line search */
    int nt = sp_threads(S, 3.0 * M * n);
    (void) nt;
    double umx, uxc2, rmx, rxc2;
    mk_centred(n, u, &umx, &uxc2);
    mk_centred(n, S->rho, &rmx, &rxc2);
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
#endif
    for (int m = 0; m < M; m++) {
        if (!S->inS[m]) continue;
        const double *kr = S->Kr + (size_t) m * n;
        double rt = 0.0;
        for (int i = 0; i < n; i++) rt += kr[i];
        mk_kref R = { S->rho, kr, S->sc.K1 + (size_t) m * n, sp_sqrt0(mk_dot(n, S->rho, kr)), rmx,
                      rxc2, rt, S->sc.s1[m] * S->sc.s1[m], S->sc.sqL[m] };
        ub[m] = mk_kbound(n, u, umx, uxc2, &R);
    }
    for (int m = 0; m < M; m++) if (S->inS[m]) key[m] = ub[m];
    sp_bounds_all(S, u, ub, lim, 0, -1.0);
    for (int m = 0; m < M; m++) if (S->inS[m]) ub[m] = key[m];
    int cnt = 0;
    for (int m = 0; m < M; m++) {
        sm[m] = -1.0;   /* not read: certified <= C1, or (block 1-norm) below the largest norm */
        if (ub[m] > lim) { S->list[cnt] = m; key[cnt] = ub[m]; cnt++; }
    }
    /* Block 1-norm: only the largest norm matters (it scales u into the C1-balls), so kernels
       are read in decreasing order of their bound until the next bound is below the largest
       exact norm found (branch and bound); the elastic net needs every norm above C1 */
    int batch = cnt;
    if (C2 <= 0.0 && cnt > 1) {
        revsort(key, S->list, cnt);
        batch = 4 * S->nt_max;
    }
    int done = 0, nread = 0;
    double best2 = lim;
    while (done < cnt) {
        if (!(key[done] > best2)) break;   /* sorted: every remaining bound is lower */
        int j1 = done + batch < cnt ? done + batch : cnt;
        nt = j1 - done > 1 ? sp_threads(S, (double) (j1 - done) * n * n) : 1;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) if (nt > 1)
#endif
        for (int j = done; j < j1; j++) {
            int m = S->list[j];
            if (S->lr.on) {
                /* through the factors: the norms of the approximated kernels */
                if (S->inS[m]) sm[m] = sp_sqrt0(sp_lr_quad(S, m, u));
                else {
                    double *ku = sp_thread_buf(S->rsbuf, (size_t) n);
                    sp_lr_mv2(S, m, S->rho, u, S->Kr + (size_t) m * n, ku);
                    sp_set_ref(S, m, S->rho);
                    sm[m] = sp_sqrt0(mk_dot(n, u, ku));
                }
                continue;
            }
            mk_ksrc Km;
            sp_ksrc(S, m, &Km);
            if (S->inS[m]) sm[m] = sp_sqrt0(mk_quad(&Km, u));
            else {
                /* K_m rho in the same read: rho, where the next Newton loop starts, becomes
                   the reference point (u, the projection of rho, can be far from it) */
                double *ku = sp_thread_buf(S->rsbuf, (size_t) n);
                mk_symv2(&Km, S->rho, u, S->Kr + (size_t) m * n, ku);
                sp_set_ref(S, m, S->rho);
                sm[m] = sp_sqrt0(mk_dot(n, u, ku));
            }
        }
        for (int j = done; j < j1; j++) {
            double v = sm[S->list[j]];
            if (v * v > best2) best2 = v * v;
        }
        nread += j1 - done;
        done = j1;
        if (batch < 64 * S->nt_max) batch *= 2;
    }
    S->nprod += nread;
    if (S->o->verbose > 1)
        Rprintf("   dual: %d kernel sweeps (%d above C1 by the bound)\n", nread, cnt);
    double maxn = 0.0, dual;
    for (int m = 0; m < M; m++) if (sm[m] > maxn) maxn = sm[m];
    double kap = (C1 > 0.0 && maxn > C1) ? C1 / maxn : 1.0;
    if (C2 <= 0.0) {
        for (int i = 0; i < n; i++) u[i] *= kap;
        dual = L->neg_conj(n, y, u, eps, S->o->cw);
    } else {
        double d1 = L->neg_conj(n, y, u, eps, S->o->cw);
        for (int m = 0; m < M; m++) if (sm[m] > C1) {
            double e = sm[m] - C1;
            d1 -= e * e / (2.0 * C2);
        }
        dual = d1;
        if (kap < 1.0) {
            for (int i = 0; i < n; i++) tmp[i] = kap * u[i];
            double d2 = L->neg_conj(n, y, tmp, eps, S->o->cw);
            if (d2 > dual) dual = d2;
        }
    }
    /* D <= P holds exactly; when both agree to the last bits the rounded difference can come
       out as -1e-16: a difference below the floating-point resolution of the objectives is
       reported as a zero gap (anything larger stays as computed, so a negative gap would
       still expose an infeasible dual point) */
    double primal = S->primal, diff = primal - dual,
        scale = fabs(primal) > fabs(dual) ? fabs(primal) : fabs(dual);
    if (diff < 0.0 && -diff <= 64.0 * DBL_EPSILON * scale) diff = 0.0;
    S->dual = dual;
    S->absgap = diff;
    S->gap = primal > 0.0 ? diff / primal : (diff == 0.0 ? 0.0 : R_PosInf);
}

void sp_dual_gap(sp_state *S)
{
    sp_dual_gap_at(S, NULL);
}

/* A second dual point for the hinge loss with the block 1-norm, tried when the gap is just above
   tol: the dual of the SVM on the combined kernel sum_m d_m K_m with the current weights d_m =
   ||f_m|| / sum_l ||f_l|| and C_svm = sum_l ||f_l|| / C1 (at the optimum, the MKL dual point is
   that SVM's y a / C_svm), by SMO warm-started from the projected rho; u = y a / C_svm lies in
   the box with sum(u) = 0 whatever the SMO accuracy, and sp_dual_gap_at scales it into the
   C1-balls. The better of the two dual values is kept. The projected rho loses most where a few
   active kernels overshoot their C1-ball (an outer iteration saved: inst/notes/NOTES-spicy.md).
   Cost: the combined kernel (mk_store_combine: a pass over the active
   kernels into an n x n matrix, allocated on first use) and the SMO. */
void sp_svm_dual(sp_state *S)
{
    int n = S->n, M = S->M;
    if (!S->sv.Kd) {
        S->sv.Kd = (double *) mk_alloc_huge((size_t) n * n * sizeof(double));
        S->sv.a = (double *) R_alloc(4 * (size_t) n, sizeof(double));
        S->sv.w = (double *) R_alloc(M, sizeof(double));
    }
    int nk = 0;
    for (int m = 0; m < M; m++) {
        S->sv.w[m] = S->anz[m] ? S->anorm[m] / S->sumnorm : 0.0;
        nk += S->anz[m] != 0;
    }
    if (nk == 0) return;
    S->sv.tried++;
    mk_store_combine(S->st, S->sv.w, S->sv.Kd);
    S->nprod += nk;
    double csvm = S->sumnorm / S->C1, *a = S->sv.a, *g = S->sv.a + n, *u = S->sv.a + 2 * (size_t) n;
    /* case weights: the SVM's box of point i is csvm w_i (u stays in the box 0 <= y u <= w_i) */
    const double *cw = S->o->cw;
    double *box = cw ? S->sv.a + 3 * (size_t) n : NULL;
    for (int i = 0; i < n; i++) {
        double t = S->y[i] * S->rho[i], wi = cw ? cw[i] : 1.0;
        a[i] = (t > 0.0 ? (t < wi ? t : wi) : 0.0) * csvm;
        if (box) box[i] = csvm * wi;
    }
    mk_svm_result res;
    mk_smo_box(S->sv.Kd, n, S->y, csvm, box, SP_SVM_TOL, SP_SVM_ITER * n, 0, a, g, &res);
    for (int i = 0; i < n; i++) u[i] = S->y[i] * a[i] / csvm;
    double d0 = S->dual, ag0 = S->absgap, g0 = S->gap;
    sp_dual_gap_at(S, u);
    if (S->o->verbose)
        Rprintf("spicy      SVM dual point: %d SMO iterations, gap %.3e -> %.3e\n", res.iter, g0,
                S->gap);
    if (S->dual > d0) S->sv.won++;
    else { S->dual = d0; S->absgap = ag0; S->gap = g0; }
}

/* The dual point's norms (the SVM dual point allocates its own on first use) */
void sp_gap_alloc(sp_state *S)
{
    S->sm = (double *) R_alloc(S->M, sizeof(double));
    S->primal = S->dual = S->gap = NA_REAL;
}
