/* SpicyMKL: the hinge's directions with the CG solve. The model direction (rounds of an
 * active-set Newton method on a model that keeps the slack pieces exact) and the box direction
 * (rho kept in 0 <= y rho <= 1 without slack variables), and the switch to the box.
 */
#include "spicy.h"

/* Hinge with the CG solve: the Newton direction D minimises the quadratic model of phi with the
   loss curvature of the slack pieces at rho. Coordinates between the kinks have only the kernels'
   curvature, so D moves many of them across a kink, where the slack term adds curvature gamma,
   and the line search cuts such steps short. The model
     m(d) = phi_L(rho + d) - phi_L(rho) + (g - gL)'d + d'H_K d / 2,
   H_K = H - diag(hl) (kernels, low rank, gamma_b 11'), keeps the loss part phi_L exact. D is
   refined on it by rounds of an active-set (semismooth) Newton method: the exact minimum of m
   along the current direction (from d = 0 along the Newton direction first), then the pieces at
   the new point and a CG solve of (H_K + diag(their curvature)) delta = -grad m. m decreases in
   every round, so the result is a descent direction of phi (m(d) < 0 gives g'd < 0: the other
   terms are >= 0). The rounds stop when no piece changes at a full step, when grad m is below
   1e-3 |g|, or after model_rounds rounds. A round costs a CG solve and one product with H, no
   kernel reads; its CG solve is deflated by the search directions of the step's earlier solves
   (mk_defl) and truncated at SP_ROUND_MAXIT iterations: any CG iterate lowers the quadratic
   part, so a truncated round still descends. With the single-precision Newton matrix the
   rounds' CG products are also done in single-precision arithmetic (mk_symmat.fast); the Newton
   direction's own solve keeps double arithmetic. Measurements: inst/notes/NOTES-spicy.md. */

/* slope of m along dd at x + t dd (x = rho + d): h = a + t b + sum_i dd_i (gL_i(x + t dd) -
   gL_i(x)); *dh its derivative. gl1: gL at x; tmp, gl2, hh: n scratch */
static double sp_model_slope(sp_state *S, const double *x, const double *dd, double t, double a,
                             double b, const double *gl1, double *tmp, double *gl2, double *hh,
                             double *dh)
{
    int n = S->n;
    S->md.slopes++;
    for (int i = 0; i < n; i++) tmp[i] = x[i] + t * dd[i];
    S->L->phi(n, S->y, tmp, S->aux, S->gsl, S->eps, gl2, hh, S->o->cw);
    double h = a + t * b, c = b;
    for (int i = 0; i < n; i++) { h += dd[i] * (gl2[i] - gl1[i]); c += dd[i] * dd[i] * hh[i]; }
    *dh = c;
    return h;
}

/* the minimum of m along dd from x: the root of the slope, which is nondecreasing and piecewise
   linear in t (h(0) = a < 0): Newton's method on it, bracketed, with bisection as safeguard.
   On a low-rank store a Newton step of at most SP_LM_REL t ends it (the root of the linear piece
   at t: the rest of the iterations only moved the rounding; NOTES-spicy.md); elsewhere the
   bracket's width does (dense and on-the-fly fits as they were) */
static double sp_model_linemin(sp_state *S, const double *x, const double *dd, double a,
                               double b, const double *gl1, double *tmp, double *gl2, double *hh)
{
    double lo = 0.0, hi = R_PosInf, t = 1.0, dh;
    for (int it = 0; it < 100; it++) {
        double h = sp_model_slope(S, x, dd, t, a, b, gl1, tmp, gl2, hh, &dh);
        if (h == 0.0) return t;
        if (h < 0.0) lo = t; else hi = t;
        if (R_FINITE(hi) && hi - lo <= 1e-12 * hi) break;
        double tn = dh > 0.0 ? t - h / dh : R_PosInf;
        if (tn > lo && tn < hi && S->lr.on && fabs(tn - t) <= SP_LM_REL * t) return tn;
        if (!(tn > lo && tn < hi)) tn = R_FINITE(hi) ? 0.5 * (lo + hi) : 2.0 * t;
        if (!R_FINITE(hi) && tn > 1e12) return tn;   /* no curvature ahead: the step cap bounds D */
        t = tn;
    }
    return R_FINITE(hi) ? hi : t;
}

void sp_model_direction(sp_state *S)
{
    int n = S->n;
    mk_symmat *A = &S->nm;
    sp_lrnm *LR = S->lr.on ? &S->lr : NULL;
    double *D = S->D, *w = S->md.w;
    double *gl0 = w, *gl1 = w + n, *hl1 = w + 2 * (size_t) n, *hkd = w + 3 * (size_t) n,
        *hkp = w + 4 * (size_t) n, *gm = w + 5 * (size_t) n, *p = w + 6 * (size_t) n,
        *x = w + 7 * (size_t) n, *tmp = w + 8 * (size_t) n, *gl2 = w + 9 * (size_t) n,
        *hd = w + 10 * (size_t) n, *hh = w + 11 * (size_t) n;
    int nt = sp_nm_threads(S, (double) n * n);
    const double *hl = S->hl;
    for (int i = 0; i < n; i++) hd[i] = sp_nm_diag(S, i);
    S->L->phi(n, S->y, S->rho, S->aux, S->gsl, S->eps, gl0, NULL, S->o->cw);
    /* d = 0: x = rho, grad m (gm) = g; the first direction is the Newton direction */
    memcpy(p, D, sizeof(double) * n);
    memcpy(x, S->rho, sizeof(double) * n);
    memcpy(gl1, gl0, sizeof(double) * n);
    memcpy(gm, S->g, sizeof(double) * n);
    memcpy(hl1, hl, sizeof(double) * n);
    for (int i = 0; i < n; i++) hkd[i] = 0.0;
    double gtol = 1e-3 * S->gnorm;
    int moved = 0;
    for (int r = 0; r <= S->o->model_rounds; r++) {
        if (r > 0) {
            double gn = sqrt(mk_dot(n, gm, gm));
            if (gn <= gtol) break;
            for (int i = 0; i < n; i++) sp_nm_set_diag(S, i, hd[i] - hl[i] + hl1[i]);
            A->fast = A->P != NULL;
            int info = sp_solve(A, LR, n, gm, p, S->work, 1, 0, gn, &S->cgit, &S->fb, hl1, nt,
                                S->qt, &S->df, SP_ROUND_MAXIT, LR ? hkp : NULL);
            A->fast = 0;
            for (int i = 0; i < n; i++) sp_nm_set_diag(S, i, hd[i]);
            if (info != 0) break;
            S->md.rounds++;
        }
        /* H_K p: on a low-rank store from the solve's residual (H p = -gm - r, with the round's
           diagonal hl1; NOTES-spicy.md), else a product */
        if (LR && r > 0) for (int i = 0; i < n; i++) hkp[i] -= hl1[i] * p[i];
        else if (LR) for (int i = 0; i < n; i++) hkp[i] = S->md.hx[i] - hl[i] * p[i];
        else {
            sp_nm_mv(S, p, hkp, nt);
            for (int i = 0; i < n; i++) hkp[i] -= hl[i] * p[i];
        }
        double a = mk_dot(n, gm, p), b = mk_dot(n, p, hkp);
        if (!(a < 0.0)) break;
        double t = sp_model_linemin(S, x, p, a, b, gl1, tmp, gl2, hh);
        /* the new point x = rho + d, its pieces (hl1) and grad m there */
        int changed = 0;
        moved = 1;
        for (int i = 0; i < n; i++) { x[i] += t * p[i]; hkd[i] += t * hkp[i]; }
        S->L->phi(n, S->y, x, S->aux, S->gsl, S->eps, gl1, tmp, S->o->cw);
        for (int i = 0; i < n; i++) {
            changed += tmp[i] != hl1[i];
            hl1[i] = tmp[i];
            gm[i] = S->g[i] - gl0[i] + gl1[i] + hkd[i];
        }
        if (!R_FINITE(t) || t > 1e12 || (changed == 0 && t == 1.0)) break;
    }
    if (moved) for (int i = 0; i < n; i++) D[i] = x[i] - S->rho[i];
}

/* Hinge in the box: phi = -y'rho + kernel terms + bias term on 0 <= y rho <= 1 (the hinge
   conjugate without slack variables). The direction D solves the Newton model on the box
   (minimise g'd + d'Hd / 2 with rho + d in the box) by an active-set loop: coordinates at a
   bound whose gradient points out of the box stay fixed (D = 0); the rest (the free set I) is
   solved with the free block H_II, and coordinates that the solution carries out of the box are
   clipped to their bound and the others solved again, until none leaves. rho + D is then in the
   box, so the line search (steps c <= 1) stays feasible. H_II is gathered from the columns of the
   free coordinates (|I| x n reads per active kernel), and D and rho are sparse (fixed
   coordinates at the lower bound are 0), so the kernel products read only their columns. */
void sp_box_snap(sp_state *S)
{
    int n = S->n;
    const double *y = S->y;
    for (int i = 0; i < n; i++) {
        double t = y[i] * S->rho[i];
        if (t < SP_BOX_SNAP) S->rho[i] = 0.0;
        else if (t > 1.0 - SP_BOX_SNAP) S->rho[i] = y[i];
    }
}

/* the free block of H (nf x nf, full, column-major) on the coordinates fi */
MK_CLONES
static void sp_box_block_cols(const sp_state *S, const int *fi, int nf, int j0, int j1,
                              double *Hb, double *buf)
{
    int n = S->n;
    for (int jj = j0; jj < j1; jj++) {
        int j = fi[jj];
        double *hj = Hb + (size_t) jj * nf;
        for (int ii = 0; ii < nf; ii++) hj[ii] = S->gammab;
        for (int a = 0; a < S->na; a++) {
            int m = S->act[a];
            const double *kc = mk_store_col(S->st, m, j, buf), *w = S->KD + (size_t) m * n;
            double c1 = S->hc1[a], e = S->hc2[a] * w[j];
            for (int ii = 0; ii < nf; ii++) {
                int i = fi[ii];
                hj[ii] += c1 * kc[i] + e * w[i];
            }
        }
    }
}

/* The free set of the step (bx.idx[0..bx.nf-1]: the coordinates not held at a bound, where the
   gradient does not point out of the box) and the gradient's norm on it */
double sp_box_free(sp_state *S)
{
    double s = 0.0;
    int nf = 0;
    for (int i = 0; i < S->n; i++) {
        double t = S->y[i] * S->rho[i], yg = S->y[i] * S->g[i];
        if ((t <= 0.0 && yg > 0.0) || (t >= 1.0 && yg < 0.0)) continue;
        S->bx.idx[nf++] = i;
        s += S->g[i] * S->g[i];
    }
    S->bx.nf = nf;
    return sqrt(s);
}

/* out[a] = (H x)_rows[a] for the full nf x nf block H (column-major, symmetric) */
MK_CLONES
static void sp_box_mv(const double *Hb, int nf, const int *rows, int nr, const double *x,
                      double *out, int nt)
{
    (void) nt;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
#endif
    for (int a = 0; a < nr; a++) {
        const double *h = Hb + (size_t) (rows ? rows[a] : a) * nf;
        double q = 0.0;
        MK_SIMD_RED(q)
        for (int k = 0; k < nf; k++) q += h[k] * x[k];
        out[a] = q;
    }
}

/* The free block H_II of the step (grown to the largest free set so far; scratch until the fit
   returns) from the columns of the free coordinates; returns the ridge added to it */
static double sp_box_block(sp_state *S, int nf, const int *fi)
{
    int n = S->n;
    double gamma = S->gamma;
    if ((size_t) nf * nf > S->bx.cap) {
        size_t want = (size_t) nf * nf + (size_t) nf * nf / 2, full = (size_t) n * n;
        S->bx.cap = want < full ? want : full;
        S->bx.H = (double *) mk_alloc_huge(S->bx.cap * sizeof(double));
    }
    double *Hb = S->bx.H;
    int nt = sp_nm_threads(S, (double) S->na * nf * nf + (double) nf * n);
    (void) nt;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, 8) if (nt > 1)
#endif
    for (int jj = 0; jj < nf; jj++)
        sp_box_block_cols(S, fi, nf, jj, jj + 1, Hb, sp_thread_buf(S->kbuf, S->scr));
    double dmax = 0.0;
    for (int ii = 0; ii < nf; ii++) {
        double hii = Hb[(size_t) ii * nf + ii];
        if (hii > dmax) dmax = hii;
    }
    /* a small ridge: the free block is the kernels' curvature alone, of fast-decaying spectrum */
    double ridge = SP_BOX_LM * gamma * (S->gnorm / sqrt((double) n) < 1.0 ?
                                        S->gnorm / sqrt((double) n) : 1.0) + 1e-10 * dmax;
    sp_tick(S, 2);
    return ridge;
}

/* The primal-dual active set method on the box (Hintermueller, Ito and Kunisch 2002) for the
   Newton model on the free set: bx.state[ii] = 0 free, -1 / 1 held at the lower / upper bound;
   the free coordinates are solved with the held ones at their bounds (CG on the free block, from
   the last solution), then coordinates carried out of the box are held and held ones whose
   multiplier (the model's gradient) points into the box are let go, until no set changes (at
   most SP_BOX_MAXIT rounds). The block's products (sp_box_mv: whole columns against a vector
   with zeros off the free list) run on the solver's threads. The solution goes to bx.d;
   returns 1 when the sets settled. */
static int sp_box_active_set(sp_state *S, int nf, const int *fi, double ridge)
{
    const double *y = S->y, *rho = S->rho, *g = S->g, *Hb = S->bx.H;
    int *st = S->bx.state, *fr = S->bx.open;
    double *d = S->bx.d, *cg = S->bx.F;
    double *cr = cg, *cz = cg + nf, *cp = cg + 2 * (size_t) nf, *cq = cg + 3 * (size_t) nf,
        *pf = cg + 5 * (size_t) nf, *hd = cg + 6 * (size_t) nf;
    int ntc = sp_nm_threads(S, (double) nf * nf);
    for (int ii = 0; ii < nf; ii++) { st[ii] = 0; d[ii] = 0.0; }
    int settled = 0;
    double r0 = 0.0;
    for (int ii = 0; ii < nf; ii++) r0 += g[fi[ii]] * g[fi[ii]];
    double tol2 = SP_BOX_CGTOL * SP_BOX_CGTOL * r0;
    for (int it = 0; it < SP_BOX_MAXIT; it++) {
        int nfr = 0;
        for (int ii = 0; ii < nf; ii++) {
            int i = fi[ii];
            if (st[ii] < 0) d[ii] = -rho[i];
            else if (st[ii] > 0) d[ii] = y[i] - rho[i];
            else fr[nfr++] = ii;
        }
        sp_box_mv(Hb, nf, NULL, nf, d, hd, ntc);
        double rz = 0.0;
        for (int a = 0; a < nfr; a++) {
            int ii = fr[a];
            double hii = Hb[(size_t) ii * nf + ii] + ridge;
            cr[a] = -g[fi[ii]] - hd[ii] - ridge * d[ii];
            cz[a] = cr[a] / hii;
            cp[a] = cz[a];
            rz += cr[a] * cz[a];
        }
        for (int ii = 0; ii < nf; ii++) pf[ii] = 0.0;
        for (int k = 0; k < SP_BOX_CGMAX && nfr > 0; k++) {
            double rr = 0.0;
            for (int a = 0; a < nfr; a++) rr += cr[a] * cr[a];
            if (rr <= tol2) break;
            for (int a = 0; a < nfr; a++) pf[fr[a]] = cp[a];
            sp_box_mv(Hb, nf, fr, nfr, pf, cq, ntc);
            double pq = 0.0;
            for (int a = 0; a < nfr; a++) { cq[a] += ridge * cp[a]; pq += cp[a] * cq[a]; }
            if (!(pq > 0.0)) break;
            double al = rz / pq, rzn = 0.0;
            for (int a = 0; a < nfr; a++) {
                int ii = fr[a];
                d[ii] += al * cp[a];
                cr[a] -= al * cq[a];
                cz[a] = cr[a] / (Hb[(size_t) ii * nf + ii] + ridge);
                rzn += cr[a] * cz[a];
            }
            double be = rzn / rz;
            rz = rzn;
            for (int a = 0; a < nfr; a++) cp[a] = cz[a] + be * cp[a];
            S->cgit++;
        }
        sp_box_mv(Hb, nf, NULL, nf, d, hd, ntc);
        int change = 0;
        for (int ii = 0; ii < nf; ii++) {
            int i = fi[ii], ns = st[ii];
            if (st[ii] == 0) {
                double t = y[i] * (rho[i] + d[ii]);
                ns = t < 0.0 ? -1 : (t > 1.0 ? 1 : 0);
            } else {
                double q = g[i] + ridge * d[ii] + hd[ii];
                double ym = y[i] * q;
                if ((st[ii] < 0 && ym < 0.0) || (st[ii] > 0 && ym > 0.0)) ns = 0;
            }
            change += ns != st[ii];
            st[ii] = ns;
        }
        S->bx.nclip += change;
        S->bx.nround++;
        if (change == 0) { settled = 1; break; }
    }
    return settled;
}

/* The box direction: the Newton model on the box solved on the free set (sp_box_active_set),
   clipped into the box; it must lower the model, else the fit leaves the box. */
int sp_box_direction(sp_state *S)
{
    int n = S->n;
    const double *y = S->y, *rho = S->rho, *g = S->g;
    double *D = S->D;
    sp_tick(S, 1);
    sp_newton_coefs(S);
    /* the free set, from sp_box_free at this rho and gradient */
    int nf = S->bx.nf, *fi = S->bx.idx;
    memset(D, 0, sizeof(double) * (size_t) n);
    S->bx.nfree += nf;
    if (nf == 0) { sp_tick(S, 2); return 0; }
    double ridge = sp_box_block(S, nf, fi);
    int settled = sp_box_active_set(S, nf, fi, ridge), ok = 0;
    const double *Hb = S->bx.H, *d = S->bx.d;
    double *dv = S->bx.F + 4 * (size_t) nf, *hd = S->bx.F + 6 * (size_t) nf;
    int ntc = sp_nm_threads(S, (double) nf * nf);
    /* the last solution clipped into the box is the direction if it lowers the model */
    for (int ii = 0; ii < nf; ii++) {
        int i = fi[ii];
        double t = y[i] * (rho[i] + d[ii]);
        dv[ii] = t < 0.0 ? -rho[i] : (t > 1.0 ? y[i] - rho[i] : d[ii]);
    }
    sp_box_mv(Hb, nf, NULL, nf, dv, hd, ntc);
    double mval = 0.0;
    for (int ii = 0; ii < nf; ii++)
        mval += dv[ii] * (g[fi[ii]] + (hd[ii] + ridge * dv[ii]) / 2.0);
    if (mval < 0.0) {
        for (int ii = 0; ii < nf; ii++) D[fi[ii]] = dv[ii];
        ok = 1;
    }
    if (S->o->verbose > 2) {
        double gd = 0.0;
        for (int i = 0; i < n; i++) gd += g[i] * D[i];
        Rprintf("      box: nf %d ok %d settled %d gd %.3e ridge %.3e rounds %ld cg %d\n", nf, ok,
                settled, gd, ridge, S->bx.nround, S->cgit);
    }
    sp_tick(S, 3);
    if (!ok || !settled) {
        /* The active-set loop did not settle in SP_BOX_MAXIT rounds, or its point does not lower
           the model: the fit leaves the box for good (unsettled loops are costly, see
           inst/notes/NOTES-spicy.md). rho is in the box and the slack variables are zero, a
           valid state of the slack path; this step keeps the box's direction if it descends,
           else takes the slack path's. */
        S->bx.nfail++;
        S->bx.on = 0;
        S->bx.ok = 0;
        S->bx.left = S->itcur + 1;
        if (S->o->verbose) Rprintf("spicy: the box is left at outer iteration %d\n", S->bx.left);
        if (!ok) return sp_direction(S);
    }
    return 0;
}

/* Hinge with the CG solve: the switch to the box (sp_box_direction) at the start of an outer
   iteration, once at most box_fraction n coordinates of rho lie strictly inside it (y rho in
   (1e-3, 1 - 1e-3)). The soft walls' Newton systems cost n^2 per product and kernel read
   whatever the free set; the box's cost follows the free set (its block, the columns of the
   nonzeros of rho and D), which at the solution is small on data with few margin points.
   Returns 1 if it switched: rho is clipped into the box, the slack variables are dropped (the
   box holds rho itself) and the start's kernel products are recomputed at the clipped rho (one
   sweep of every kernel). */
int sp_box_switch(sp_state *S)
{
    int n = S->n, nfree = 0;
    const double *y = S->y;
    double *rho = S->rho;
    for (int i = 0; i < n; i++) {
        double t = y[i] * rho[i];
        nfree += t > SP_BOX_INNER && t < 1.0 - SP_BOX_INNER;
    }
    if (S->o->verbose > 1)
        Rprintf("spicy: %d of %d coordinates inside the box\n", nfree, n);
    if ((double) nfree > S->o->box_fraction * n) return 0;
    for (int i = 0; i < n; i++) {
        double t = y[i] * rho[i];
        if (t < 0.0) rho[i] = 0.0; else if (t > 1.0) rho[i] = y[i];
    }
    S->bx.on = 1;
    S->warm = 1;
    sp_start(S);
    S->nc.valid = 0;
    return 1;
}

/* The model direction (hinge-type losses with the CG solve), the deflation of its CG solves by
   up to cg_deflate directions, and the box (the hinge with the model direction). Call after
   sp_newton_alloc (use_cg). */
void sp_hinge_alloc(sp_state *S)
{
    int n = S->n;
    const sp_opts *o = S->o;
    if (S->use_cg && S->L->pieces && o->model_rounds > 0) {
        S->md.w = (double *) R_alloc(12 * (size_t) n, sizeof(double));
        if (S->lr.on) S->md.hx = (double *) R_alloc(n, sizeof(double));
    }
    if (S->md.w && o->deflate > 0) mk_defl_alloc(&S->df, n, o->deflate < n ? o->deflate : n);
    sp_box *B = &S->bx;
    memset(B, 0, sizeof(*B));
    B->ok = o->box_fraction > 0.0 && S->L == &sp_losses[MK_LOSS_HINGE] && S->md.w != NULL;
    if (!B->ok) return;
    B->idx = (int *) R_alloc(n, sizeof(int));
    B->state = (int *) R_alloc(n, sizeof(int));
    B->open = (int *) R_alloc(n, sizeof(int));
    B->nzr = (int *) R_alloc(n, sizeof(int));
    B->nzd = (int *) R_alloc(n, sizeof(int));
    B->vzr = (double *) R_alloc(n, sizeof(double));
    B->vzd = (double *) R_alloc(n, sizeof(double));
    B->d = (double *) R_alloc(n, sizeof(double));
    B->F = (double *) R_alloc(7 * (size_t) n, sizeof(double));
}
