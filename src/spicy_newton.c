/* SpicyMKL: the Newton system. The gradient of phi, the Newton matrix (kernels, rank-one
 * terms, bias, loss curvature; cached kernel part; single precision), its solve (Cholesky, or
 * mk_cg_solve with the block preconditioner and deflation) and the Newton direction.
 */
#include "spicy.h"

/* Columns j0 <= j < j1 of the upper triangle of
     H = gb 11' + diag(hl) + sum_a c1[a] K_{m_a} + c2[a] w_a w_a'   (w_a = KD column of m_a)
   into A (mk_symmat): H itself, or in single precision the part without gb 11' and diag(hl),
   rounded once per entry, and the whole diagonal in double. Kernels are taken four at a time, so
   that each H entry is loaded and stored once per four kernel entries, and the columns are cut
   into panels that stay in cache while every kernel streams through them (single precision:
   the panel is summed in pan, SP_PANEL x n doubles). Kernel columns come from the store (cb: 4
   blocks of scratch for an on-the-fly store, NULL for a dense one). Plain C: safe in OpenMP
   regions. */

/* column j of a single-precision Newton matrix from hj, its kernel part summed in double:
   rounded once into the packed triangle, the whole diagonal (with gb and hl) kept in double */
static inline void sp_nm_store_col(const mk_symmat *A, int j, const double *hj, double gb,
                                   const double *hl)
{
    float *pj = A->P + (size_t) j * (j + 1) / 2;
    MK_SIMD
    for (int i = 0; i <= j; i++) pj[i] = (float) hj[i];
    A->dg[j] = hj[j] + gb + hl[j];
}

MK_CLONES
static void sp_hess_cols(const sp_state *S, int na, const int *act, const double *c1,
                         const double *c2, double gb, const double *hl, const mk_symmat *A,
                         int j0, int j1, double *cb, double *pan)
{
    int n = S->n;
    const mk_store *st = S->st;
    size_t scr = S->hscr;
    double *b0 = cb, *b1 = cb ? cb + scr : NULL, *b2 = cb ? cb + 2 * scr : NULL,
        *b3 = cb ? cb + 3 * scr : NULL;
    for (int jb = j0; jb < j1; jb += SP_PANEL) {
        int je = jb + SP_PANEL < j1 ? jb + SP_PANEL : j1;
        /* column j of the panel at hb + j n */
        double *hb = A->P ? pan - (size_t) jb * n : A->H;
        for (int j = jb; j < je; j++) {
            double *hj = hb + (size_t) j * n, h0 = A->P ? 0.0 : gb;
            for (int i = 0; i <= j; i++) hj[i] = h0;
            if (!A->P) hj[j] += hl[j];
        }
        int a = 0;
        for (; a + 4 <= na; a += 4) {
            int m0 = act[a], m1 = act[a + 1], m2 = act[a + 2], m3 = act[a + 3];
            const double *w0 = S->KD + (size_t) m0 * n, *w1 = S->KD + (size_t) m1 * n,
                *w2 = S->KD + (size_t) m2 * n, *w3 = S->KD + (size_t) m3 * n;
            double a0 = c1[a], a1 = c1[a + 1], a2 = c1[a + 2], a3 = c1[a + 3];
            for (int j = jb; j < je; j++) {
                double *hj = hb + (size_t) j * n;
                const double *p0 = mk_store_col(st, m0, j, b0), *p1 = mk_store_col(st, m1, j, b1),
                    *p2 = mk_store_col(st, m2, j, b2), *p3 = mk_store_col(st, m3, j, b3);
                double e0 = c2[a] * w0[j], e1 = c2[a + 1] * w1[j], e2 = c2[a + 2] * w2[j],
                    e3 = c2[a + 3] * w3[j];
                MK_SIMD
                for (int i = 0; i <= j; i++)
                    hj[i] += (a0 * p0[i] + e0 * w0[i]) + (a1 * p1[i] + e1 * w1[i]) +
                        (a2 * p2[i] + e2 * w2[i]) + (a3 * p3[i] + e3 * w3[i]);
            }
        }
        for (; a < na; a++) {
            int m0 = act[a];
            const double *w0 = S->KD + (size_t) m0 * n;
            double a0 = c1[a];
            for (int j = jb; j < je; j++) {
                double *hj = hb + (size_t) j * n;
                const double *p0 = mk_store_col(st, m0, j, b0);
                double e0 = c2[a] * w0[j];
                MK_SIMD
                for (int i = 0; i <= j; i++) hj[i] += a0 * p0[i] + e0 * w0[i];
            }
        }
        if (A->P)
            for (int j = jb; j < je; j++) sp_nm_store_col(A, j, hb + (size_t) j * n, gb, hl);
    }
}

/* H = G + gb 11' + diag(hl) + sum_a c2[a] w_a w_a' (upper triangles; w_a = KD column of
   m_a), from the cached kernel part G: one pass over the triangle. Plain C. */
MK_CLONES
static void sp_hess_lowrank_cols(const sp_state *S, const double *G, int na, const int *act,
                                 const double *c2, double gb, const double *hl, const mk_symmat *A,
                                 int j0, int j1, double *col)
{
    int n = S->n;
    for (int j = j0; j < j1; j++) {
        const double *gj = G + (size_t) j * n;
        double *hj = A->P ? col : A->H + (size_t) j * n, h0 = A->P ? 0.0 : gb;
        MK_SIMD
        for (int i = 0; i <= j; i++) hj[i] = gj[i] + h0;
        if (!A->P) hj[j] += hl[j];
        for (int a = 0; a < na; a++) {
            const double *w = S->KD + (size_t) act[a] * n;
            double e = c2[a] * w[j];
            if (e == 0.0) continue;
            MK_SIMD
            for (int i = 0; i <= j; i++) hj[i] += e * w[i];
        }
        if (A->P) sp_nm_store_col(A, j, hj, gb, hl);
    }
}

/* The terms of a Newton matrix: gb 11' + diag(hl) + sum_a c1[a] K_{m_a} + c2[a] w_a w_a' (m_a =
   act[a]), or with G (the cached kernel part) in place of the c1 terms; into A. */
typedef struct {
    int na;
    const int *act;
    const double *c1, *c2;
    double gb;
    const double *hl, *G;
    const mk_symmat *A;
} sp_hterms;

/* columns j0 <= j < j1 of the upper triangle (cb, pan: the thread's scratch) */
static void sp_hess_part(const sp_state *S, const sp_hterms *T, int j0, int j1, double *cb,
                         double *pan)
{
    if (T->G)
        sp_hess_lowrank_cols(S, T->G, T->na, T->act, T->c2, T->gb, T->hl, T->A, j0, j1, pan);
    else
        sp_hess_cols(S, T->na, T->act, T->c1, T->c2, T->gb, T->hl, T->A, j0, j1, cb, pan);
}

/* the whole upper triangle on nt threads, column ranges of equal triangle area */
static void sp_hess_tri(const sp_state *S, const sp_hterms *T, int nt)
{
    int n = S->n;
#ifdef _OPENMP
    if (nt > 1) {
#pragma omp parallel num_threads(nt)
        {
            int j0, j1;
            mk_tri_cols(n, omp_get_thread_num(), omp_get_num_threads(), &j0, &j1);
            if (j1 > j0)
                sp_hess_part(S, T, j0, j1, sp_thread_buf(S->hbuf, 4 * S->hscr),
                             sp_thread_buf(S->hpan, SP_PANEL * n));
        }
        return;
    }
#endif
    (void) nt;
    sp_hess_part(S, T, 0, n, S->hbuf, S->hpan);
}

/* The whole upper triangle; threads take column ranges of equal triangle area. */
static void sp_hessian(const sp_state *S, int na, const int *act, const double *c1,
                       const double *c2, double gb, const double *hl, const mk_symmat *A)
{
    int n = S->n;
    int nt = sp_nm_threads(S, (double) na * n * n);
    if (S->st->kind != MK_STORE_DENSE) {
        /* on the fly every column is computed here, which takes long: blocks of panels, with
           a user-interrupt check between blocks (outside the parallel regions) */
        const int panel = SP_PANEL, nb = (n + panel - 1) / panel, per = 2 * (nt > 0 ? nt : 1);
        double tlast = mk_time();
        for (int b0 = 0; b0 < nb; b0 += per) {
            int b1 = b0 + per < nb ? b0 + per : nb;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) if (nt > 1)
#endif
            for (int b = b0; b < b1; b++) {
                int j0 = b * panel, j1 = j0 + panel < n ? j0 + panel : n;
                sp_hess_cols(S, na, act, c1, c2, gb, hl, A, j0, j1,
                             sp_thread_buf(S->hbuf, 4 * S->hscr),
                             sp_thread_buf(S->hpan, SP_PANEL * n));
            }
            mk_interrupt_every(&tlast, 0.02);
        }
        return;
    }
    sp_hterms T = { na, act, c1, c2, gb, hl, NULL, A };
    sp_hess_tri(S, &T, nt);
}

static void sp_hess_lowrank(const sp_state *S, const double *G, int na, const int *act,
                            const double *c2, double gb, const double *hl, const mk_symmat *A)
{
    int n = S->n;
    int nt = sp_nm_threads(S, (double) (na + 1) * n * n / 2);
    sp_hterms T = { na, act, NULL, c2, gb, hl, G, A };
    sp_hess_tri(S, &T, nt);
}

/* Solve H d = -g. H is n x n (upper triangle filled); work: n*n + 5n doubles (Cholesky), 5n
   (CG). cg: 0 Cholesky, 1 CG (mk_cg_solve) preconditioned by the diagonal and the free block B
   (coordinates with hl = 0); its products with H run on nt threads (qt: nt * n doubles). Df
   (kmax = 0: none): the deflation directions, recorded by this solve and deflating it unless
   Df->rec, which starts a new set. CG stops after cgmax iterations (and 2n) at the latest.
   L (not NULL): the low-rank operator in place of A (CG only). hx (CG, not NULL): H d = -g - r
   from CG's residual r, which saves the model rounds a product with H. Returns 0 on success. */
int sp_solve(const mk_symmat *A, sp_lrnm *L, int n, const double *g, double *d, double *work,
             int cg, int equil, double gnorm, int *cgit, mk_pcblock *B, const double *hl, int nt,
             double *qt, mk_defl *Df, int cgmax, double *hx)
{
    int info = 0;
    const int one = 1;
    const double *H = A->H;
    if (!cg) {
        /* logistic: symmetric diagonal equilibration (its conjugate makes the diagonal range over
           many orders of magnitude near the boundary). Other losses: no scaling, a ridge relative
           to the largest diagonal entry (their Hessians are singular along the coordinates
           between the kinks, where the ridge bounds the Newton step). */
        double *F = work, *sc = work + (size_t) n * n;
        double dmax = 0.0;
        for (int i = 0; i < n; i++) {
            double h = H[(size_t) i * n + i];
            sc[i] = (equil && h > 0.0) ? 1.0 / sqrt(h) : 1.0;
            if (h > dmax) dmax = h;
        }
        double mu = equil ? 1e-13 : 1e-13 * (dmax > 0.0 ? dmax : 1.0);
        for (int tries = 0; tries < 8; tries++) {
            for (int j = 0; j < n; j++) {
                const double *hj = H + (size_t) j * n;
                double *fj = F + (size_t) j * n;
                for (int i = 0; i <= j; i++) fj[i] = hj[i] * sc[i] * sc[j];
                fj[j] += mu;
            }
            F77_CALL(dpotrf)("U", &n, F, &n, &info FCONE);
            if (info == 0) break;
            mu *= 100.0;
        }
        if (info != 0) return info;
        for (int i = 0; i < n; i++) d[i] = -g[i] * sc[i];
        F77_CALL(dpotrs)("U", &n, &one, F, &n, d, &n, &info FCONE);
        for (int i = 0; i < n; i++) d[i] *= sc[i];
        return info;
    }
    /* PCG on the explicit H, Jacobi and free-block preconditioner, deflated by Df */
    double *r = work, *pre = work + 4 * n;
    int wb = 0;
    if (L) {
        /* the low-rank operator: the Woodbury preconditioner, else the free block from the
           gathered factor rows */
        wb = sp_lrwb_prepare(L) == 0;
        L->wused += wb;
        if (!wb) {
            sp_lrnm_gather(L, hl, B->cap);
            mk_pcblock_prepare(B, n, hl, sp_lrnm_entry, L);
        }
    } else {
        mk_pcblock_prepare(B, n, hl, mk_symmat_entry, A);
    }
    double eta = gnorm < 0.25 ? sqrt(gnorm) : 0.5;
    if (eta > 1e-2) eta = 1e-2;
    if (wb && sp_lrwb_direct(L, g, d, r, hx, eta * gnorm)) {   /* Woodbury alone: no CG */
        if (Df && Df->rec) { Df->k = 0; Df->rec = 0; }   /* no directions to deflate by */
        return 0;
    }
    for (int i = 0; i < n; i++) {   /* CG from d = 0 (also after a direct solve that failed) */
        double h = L ? L->dh[i] + L->fd[i] : mk_symmat_diag(A, i);
        pre[i] = h > 0.0 ? 1.0 / h : 1.0;
        d[i] = 0.0; r[i] = -g[i];
    }
    B->pre = pre;
    /* take_first: no curvature along the first direction (hinge cold start with balanced
       classes: H = gamma_b 11' and 1'g = 0); that direction is taken, and the step cap and the
       line search scale it, as the ridge does in the Cholesky branch */
    mk_symmat_op op = { A, nt, qt };
    mk_cg c = { n, 2 * n < cgmax ? 2 * n : cgmax, eta * gnorm, L ? sp_lrnm_mv : mk_symmat_op_mv,
                L ? (void *) L : (void *) &op,
                wb ? sp_lrwb_apply : mk_pcblock_apply, wb ? (void *) L : (void *) B, 0, 1, Df,
                hl, work + n };
    int it = 0;
    info = mk_cg_solve(&c, d, r, &it);
    *cgit += it;
    if (hx) for (int i = 0; i < n; i++) hx[i] = -g[i] - r[i];
    return info;
}

/* phi and its gradient at rho (loss part, bias term, active kernels); fills the active list.
   Returns ||gradient||. */
double sp_gradient(sp_state *S)
{
    int n = S->n, M = S->M;
    const double *rho = S->rho;
    double *g = S->g;
    sp_norms(S);
    double sr = 0.0;
    for (int i = 0; i < n; i++) sr += rho[i];
    double bt = *S->b + S->gammab * sr;
    double phi0 = S->L->phi(n, S->y, rho, S->aux, S->gsl, S->eps, g, S->hl, S->o->cw) +
        bt * bt / (2.0 * S->gammab);
    for (int i = 0; i < n; i++) g[i] += bt;
    int na = 0;
    double gamma = S->gamma, thr = gamma * S->C1, den = 1.0 + gamma * S->C2;
    for (int m = 0; m < M; m++) {
        if (!S->inS[m] || !(S->r[m] > thr)) continue;
        S->act[na++] = m;
        double rm = S->r[m];
        phi0 += (rm - thr) * (rm - thr) / (2.0 * gamma * den);
        double s = (rm - thr) / (den * rm);
        const double *ka = S->Ka + (size_t) m * n, *kr = S->Kr + (size_t) m * n;
        for (int i = 0; i < n; i++) g[i] += s * (ka[i] + gamma * kr[i]);
    }
    S->sr = sr; S->phi0 = phi0; S->na = na; S->thr = thr; S->den = den;
    S->gnorm = sqrt(mk_dot(n, g, g));
    return S->gnorm;
}

/* The Newton matrix H from the coefficients hc1, hc2 of the active kernels (act, ascending). With
   the cache, its kernel part comes from G, rebuilt first when sum_m |hc1_m - gc1_m| (0 for a
   kernel on one side only) exceeds SP_CACHE_DRIFT sum_m hc1_m. */
static void sp_newton_matrix(sp_state *S)
{
    S->nm.gb = S->gammab;
    if (S->lr.on) { sp_lr_newton(S); return; }
    if (!S->nc.G) {
        sp_hessian(S, S->na, S->act, S->hc1, S->hc2, S->gammab, S->hl, &S->nm);
        return;
    }
    double drift = 0.0, tot = 0.0;
    for (int m = 0, a = 0; m < S->M; m++) {
        double c = (a < S->na && S->act[a] == m) ? S->hc1[a++] : 0.0;
        tot += c;
        drift += fabs(c - (S->nc.valid ? S->nc.gc1[m] : 0.0));
    }
    if (!S->nc.valid || drift > SP_CACHE_DRIFT * tot) {
        mk_symmat Gm = { S->n, S->nc.G, NULL, NULL, 0.0, 0, NULL, NULL };
        sp_hessian(S, S->na, S->act, S->hc1, S->nc.zM, 0.0, S->nc.zn, &Gm);
        for (int m = 0; m < S->M; m++) S->nc.gc1[m] = 0.0;
        for (int a = 0; a < S->na; a++) S->nc.gc1[S->act[a]] = S->hc1[a];
        S->nc.valid = 1; S->nc.rebuilds++;
    }
    sp_hess_lowrank(S, S->nc.G, S->na, S->act, S->hc2, S->gammab, S->hl, &S->nm);
}

/* The active kernels' Newton coefficients (hc1: of K_m, hc2: of the rank-one term w w') and
   w = K_m v_m, v_m = alpha_m + gamma rho, in KD (free scratch until the step's products) */
void sp_newton_coefs(sp_state *S)
{
    int n = S->n;
    double gamma = S->gamma, thr = S->thr, den = S->den;
    for (int a = 0; a < S->na; a++) {
        int m = S->act[a];
        double rm = S->r[m], q = thr / rm;
        S->hc1[a] = gamma / den * (1.0 - q);
        S->hc2[a] = q > 0.0 ? gamma / den * q / (rm * rm) : 0.0;
        double *w = S->KD + (size_t) m * n;
        const double *ka = S->Ka + (size_t) m * n, *kr = S->Kr + (size_t) m * n;
        if (S->anz[m]) for (int i = 0; i < n; i++) w[i] = ka[i] + gamma * kr[i];
        else for (int i = 0; i < n; i++) w[i] = gamma * kr[i];
    }
}

/* Hessian (loss diagonal + gamma_b 11' + active kernels) and the Newton direction D.
   Returns 0 on success. */
int sp_direction(sp_state *S)
{
    int n = S->n;
    double lmw = S->L->lm;
    if (lmw > 0.0) {
        /* Levenberg-Marquardt: vanishes with the gradient, so the local convergence is kept */
        double tau = S->gsl * lmw * (S->gnorm / sqrt((double) n));
        if (tau > S->gsl * lmw) tau = S->gsl * lmw;
        for (int i = 0; i < n; i++) S->hl[i] += tau;
    }
    sp_tick(S, 1);
    sp_newton_coefs(S);
    sp_newton_matrix(S);
    sp_tick(S, 2);
    S->df.rec = S->df.kmax > 0;
    int info = sp_solve(&S->nm, S->lr.on ? &S->lr : NULL, n, S->g, S->D, S->work, S->use_cg,
                        S->L->equilibrate, S->gnorm, &S->cgit, &S->fb, S->hl,
                        S->use_cg ? sp_nm_threads(S, (double) n * n) : 1, S->qt, &S->df,
                        SP_CG_MAXIT, S->md.hx);
    sp_tick(S, 3);
    if (info == 0 && S->md.w) {
        sp_model_direction(S);
        sp_tick(S, 8);
    }
    return info;
}

/* The Newton system: its coefficients, the matrix (single precision with the CG solve from
   MK_TRI_MIN rows: its CG products read half the bytes, while the exact gradient and line search
   keep the iterates' accuracy; else H in double), the cache of its kernel part, the solve's
   preconditioner and vectors (Cholesky needs a copy of H to factor; CG only vectors). */
void sp_newton_alloc(sp_state *S)
{
    int n = S->n, M = S->M;
    const sp_opts *o = S->o;
    S->act = (int *) R_alloc(M, sizeof(int));
    S->hc1 = (double *) R_alloc(M, sizeof(double));
    S->hc2 = (double *) R_alloc(M, sizeof(double));
    S->use_cg = o->cg < 0 ? (n >= o->cg_threshold) : o->cg;
    memset(&S->nm, 0, sizeof(S->nm));
    S->nm.n = n;
    if (S->lr.on) {
        /* low rank: the operator sp_lrnm with the CG solve (mkc_spicy sets cg, no cache, no
           single precision), its free block bounded by a product's cost O(n R) */
        double R = (double) S->st->goff[M] + M, cap = cbrt(6.0 * SP_BLOCK_KAPPA * n * R);
        if (cap < SP_BLOCK_MIN) cap = SP_BLOCK_MIN;
        int fcap = cap < n ? (int) cap : n;
        S->lr.gcap = (size_t) fcap * (size_t) R;
        S->lr.gt = (double *) R_alloc(S->lr.gcap, sizeof(double));
        mk_pcblock_init(&S->fb, fcap);
        memset(&S->df, 0, sizeof(S->df));
        S->work = (double *) R_alloc(5 * (size_t) n, sizeof(double));
        S->qt = NULL;
        S->g = (double *) R_alloc(n, sizeof(double));
        S->hl = (double *) R_alloc(n, sizeof(double));
        S->D = (double *) R_alloc(n, sizeof(double));
        return;
    }
    if (o->single && S->use_cg && n >= MK_TRI_MIN) {
        S->nm.P = (float *) mk_alloc_huge((size_t) n * (n + 1) / 2 * sizeof(float));
        S->nm.dg = (double *) R_alloc(n, sizeof(double));
        S->nm.xf = (float *) R_alloc(n, sizeof(float));
        S->nm.yf = (float *) R_alloc((size_t) S->nt_max * n, sizeof(float));
        S->hpan = (double *) R_alloc((size_t) S->nt_max * SP_PANEL * n, sizeof(double));
    } else {
        S->H = (double *) mk_alloc_huge((size_t) n * n * sizeof(double));
        S->hpan = NULL;
    }
    S->nm.H = S->H;
    /* the cache: one more n x n matrix */
    if (o->cache > 0 || (o->cache < 0 && S->use_cg)) {
        S->nc.G = (double *) mk_alloc_huge((size_t) n * n * sizeof(double));
        S->nc.gc1 = (double *) R_alloc(M, sizeof(double));
        S->nc.zn = (double *) R_alloc(n, sizeof(double));
        S->nc.zM = (double *) R_alloc(M, sizeof(double));
        memset(S->nc.zn, 0, sizeof(double) * (size_t) n);
        memset(S->nc.zM, 0, sizeof(double) * (size_t) M);
    }
    int fcap = 0;
    if (S->use_cg) {
        double cap = cbrt(6.0 * SP_BLOCK_KAPPA * (double) n * (double) n);
        if (cap < SP_BLOCK_MIN) cap = SP_BLOCK_MIN;
        fcap = cap < n ? (int) cap : n;
    }
    mk_pcblock_init(&S->fb, fcap);
    memset(&S->df, 0, sizeof(S->df));   /* no deflation unless sp_hinge_alloc sets it up */
    S->work = (double *) R_alloc((S->use_cg ? 0 : (size_t) n * n) + 5 * (size_t) n,
                                 sizeof(double));
    S->qt = S->use_cg ? (double *) R_alloc((size_t) S->nt_max * n, sizeof(double)) : NULL;
    S->g = (double *) R_alloc(n, sizeof(double));
    S->hl = (double *) R_alloc(n, sizeof(double));
    S->D = (double *) R_alloc(n, sizeof(double));
}

/* the pivot of column l (its rotations j < l applied, xl the rest of x there): its rotation
   into c[l], s[l]; -1 when a downdate would leave its square below SP_WB_DOWN times the old one */
static int sp_chol_pivot(double *rl, int l, double xl, double sg, double *c, double *s)
{
    double d = rl[l], d2 = d * d + sg * xl * xl;
    if (!(d2 > SP_WB_DOWN * d * d)) return -1;
    double r = sqrt(d2);
    c[l] = r / d;
    s[l] = xl / d;
    rl[l] = r;
    return 0;
}

/* R'R + sg x x' (sg = 1: update, -1: downdate) for the upper Cholesky factor R (k x k,
   column-major), x destroyed: the rotations of LINPACK's dchud / dchdd, applied column by column
   (each column read once, contiguous), two columns at a time (two independent chains of
   rotations; the same operations as one at a time). Returns 0, or -1 when a downdate fails
   (sp_chol_pivot; R is then partly updated: refactor). The Woodbury capacitance's model-round
   updates (sp_wb_update; NOTES-spicy.md). */
int sp_chol_r1(int k, double *R, double *x, double sg)
{
    double *c = x + k, *s = x + 2 * (size_t) k;   /* x has 3 k entries: x, cosines, sines */
    int l = 0;
    for (; l + 1 < k; l += 2) {
        double *ra = R + (size_t) l * k, *rb = ra + k, xa = x[l], xb = x[l + 1];
        for (int j = 0; j < l; j++) {
            if (s[j] == 0.0) continue;
            double a = (ra[j] + sg * s[j] * xa) / c[j], b = (rb[j] + sg * s[j] * xb) / c[j];
            xa = c[j] * xa - s[j] * a;
            xb = c[j] * xb - s[j] * b;
            ra[j] = a;
            rb[j] = b;
        }
        if (sp_chol_pivot(ra, l, xa, sg, c, s) != 0) return -1;
        if (s[l] != 0.0) {
            double b = (rb[l] + sg * s[l] * xb) / c[l];
            xb = c[l] * xb - s[l] * b;
            rb[l] = b;
        }
        if (sp_chol_pivot(rb, l + 1, xb, sg, c, s) != 0) return -1;
    }
    if (l < k) {
        double *rl = R + (size_t) l * k, xl = x[l];
        for (int j = 0; j < l; j++) {
            if (s[j] == 0.0) continue;
            double r = (rl[j] + sg * s[j] * xl) / c[j];
            xl = c[j] * xl - s[j] * r;
            rl[j] = r;
        }
        if (sp_chol_pivot(rl, l, xl, sg, c, s) != 0) return -1;
    }
    return 0;
}

/* test entry: R (upper Cholesky factor, k x k) updated by sg[i] X[i, ]'X[i, ] for each row i of
   X in turn (sp_chol_r1); NULL when a downdate fails */
SEXP mkc_spicy_cholup(SEXP R, SEXP X, SEXP sg)
{
    if (!isReal(R) || !isMatrix(R) || nrows(R) != ncols(R) || !isReal(X) || !isMatrix(X) ||
        ncols(X) != nrows(R) || !isReal(sg) || XLENGTH(sg) != nrows(X))
        error("spicy_cholup: R square, X with its columns, sg one per row of X (doubles)");
    int k = nrows(R), nr = nrows(X);
    SEXP out = PROTECT(duplicate(R));
    double *x = (double *) R_alloc(3 * (size_t) (k > 0 ? k : 1), sizeof(double));
    for (int i = 0; i < nr; i++) {
        for (int j = 0; j < k; j++) x[j] = REAL(X)[i + (size_t) j * nr];
        if (sp_chol_r1(k, REAL(out), x, REAL(sg)[i] > 0.0 ? 1.0 : -1.0) != 0) {
            UNPROTECT(1);
            return R_NilValue;
        }
    }
    UNPROTECT(1);
    return out;
}
