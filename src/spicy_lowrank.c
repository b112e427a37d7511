/* SpicyMKL on a low-rank store (K_m = G_m G_m' + jitter I): kernel products, quadratic forms
 * and the first sweep's statistics through the factors in O(n r_m), and the Newton matrix as an
 * operator (sp_lrnm) for the CG solve, O(n sum r_a) per product instead of an n x n matrix.
 * The gap is that of the problem on the approximated kernels (NOTES-spicy.md).
 */
#include "spicy.h"

/* y1 = K_m x1 and (x2 not NULL) y2 = K_m x2: G_m (G_m' x) + jitter x. Plain C and BLAS: safe in
   OpenMP regions (the thread's block of lrbuf). */
void sp_lr_mv2(const sp_state *S, int m, const double *x1, const double *x2, double *y1,
               double *y2)
{
    int n = S->n, r, one = 1;
    const double *G = mk_store_factor(S->st, m, &r);
    double *t = sp_thread_buf(S->lrbuf, S->lrs), done = 1.0, dzero = 0.0,
        jit = S->st->jitter;
    for (int k = 0; k < 2; k++) {
        const double *x = k ? x2 : x1;
        double *y = k ? y2 : y1;
        if (!x) continue;
        for (int i = 0; i < n; i++) y[i] = jit * x[i];
        if (r == 0) continue;
        F77_CALL(dgemv)("T", &n, &r, &done, G, &n, x, &one, &dzero, t, &one FCONE);
        F77_CALL(dgemv)("N", &n, &r, &done, G, &n, t, &one, &done, y, &one FCONE);
    }
}

/* u'K_m u = |G_m'u|^2 + jitter |u|^2 */
double sp_lr_quad(const sp_state *S, int m, const double *u)
{
    int n = S->n, r, one = 1;
    const double *G = mk_store_factor(S->st, m, &r);
    double *t = sp_thread_buf(S->lrbuf, S->lrs), done = 1.0, dzero = 0.0;
    double q = S->st->jitter * mk_dot(n, u, u);
    if (r == 0) return q;
    F77_CALL(dgemv)("T", &n, &r, &done, G, &n, u, &one, &dzero, t, &one FCONE);
    return q + mk_dot(r, t, t);
}

/* The first sweep's statistics of kernel m (mk_kernel_stats): kv = K_m v, k1 = K_m 1,
   s1 = sqrt(1'K_m 1) and lc = sqrt(tr(P K_m P)) >= sqrt(lambda_max(P K_m P)) (the trace bound:
   ||G_m||_F^2 - |G_m'1|^2 / n + jitter (n - 1)). */
void sp_lr_stats(const sp_state *S, int m, const double *v, double *kv, double *s1, double *lc,
                 double *k1)
{
    int n = S->n, r, one = 1;
    const double *G = mk_store_factor(S->st, m, &r), *rn = S->lr.rn + (size_t) m * n;
    double *t = sp_thread_buf(S->lrbuf, S->lrs), done = 1.0, jit = S->st->jitter;
    sp_lr_mv2(S, m, v, NULL, kv, NULL);
    double fro = 0.0, t1 = 0.0;
    for (int i = 0; i < n; i++) fro += rn[i];
    for (int c = 0; c < r; c++) {
        const double *gc = G + (size_t) c * n;
        double sc = 0.0;
        for (int i = 0; i < n; i++) sc += gc[i];
        t[c] = sc;
        t1 += sc * sc;
    }
    for (int i = 0; i < n; i++) k1[i] = jit;
    if (r > 0) F77_CALL(dgemv)("N", &n, &r, &done, G, &n, t, &one, &done, k1, &one FCONE);
    *s1 = sp_sqrt0(t1 + jit * n);
    *lc = sp_sqrt0(fro - t1 / n + jit * (n - 1));
}

/* The low-rank Newton operator from the active kernels' coefficients (after sp_newton_coefs) */
void sp_lr_newton(sp_state *S)
{
    sp_lrnm *L = &S->lr;
    int n = S->n;
    L->na = S->na; L->act = S->act; L->c1 = S->hc1; L->c2 = S->hc2; L->gb = S->gammab;
    double js = 0.0;
    for (int a = 0; a < L->na; a++) js += L->c1[a];
    js *= S->st->jitter;
    for (int i = 0; i < n; i++) { L->dh[i] = S->hl[i] + js; L->fd[i] = L->gb; }
    for (int a = 0; a < L->na; a++) {
        const double *rn = L->rn + (size_t) L->act[a] * n, *w = L->KD + (size_t) L->act[a] * n;
        double c1 = L->c1[a], c2 = L->c2[a];
        for (int i = 0; i < n; i++) L->fd[i] += c1 * rn[i] + c2 * w[i] * w[i];
    }
    L->rows = 0; L->gathered = 0;
}

double sp_nm_diag(const sp_state *S, int i)
{
    return S->lr.on ? S->lr.dh[i] + S->lr.fd[i] : mk_symmat_diag(&S->nm, i);
}

void sp_nm_set_diag(sp_state *S, int i, double v)
{
    if (S->lr.on) S->lr.dh[i] = v - S->lr.fd[i];
    else mk_symmat_set_diag(&S->nm, i, v);
}

/* q = H p (the operator, or the formed matrix on nt threads) */
void sp_nm_mv(sp_state *S, const double *p, double *q, int nt)
{
    if (S->lr.on) sp_lrnm_mv(&S->lr, p, q);
    else mk_symmat_mv(&S->nm, p, q, nt, S->qt);
}

/* q = H p for the operator (an mk_cg_op: ctx is the sp_lrnm) */
void sp_lrnm_mv(void *ctx, const double *p, double *q)
{
    const sp_lrnm *L = (const sp_lrnm *) ctx;
    int n = L->n, one = 1;
    double sp = 0.0, done = 1.0, dzero = 0.0;
    for (int i = 0; i < n; i++) sp += p[i];
    for (int i = 0; i < n; i++) q[i] = L->dh[i] * p[i] + L->gb * sp;
    for (int a = 0; a < L->na; a++) {
        int r, m = L->act[a];
        const double *G = mk_store_factor(L->st, m, &r), *w = L->KD + (size_t) m * n;
        double c1 = L->c1[a], e = L->c2[a] * mk_dot(n, w, p);
        if (r > 0 && c1 != 0.0) {
            F77_CALL(dgemv)("T", &n, &r, &done, G, &n, p, &one, &dzero, L->t, &one FCONE);
            F77_CALL(dgemv)("N", &n, &r, &c1, G, &n, L->t, &one, &done, q, &one FCONE);
        }
        if (e != 0.0) for (int i = 0; i < n; i++) q[i] += e * w[i];
    }
}

/* The rows of the scaled factors [sqrt(c1_a) G_a, sqrt(c2_a) w_a] at the coordinates with
   key 0 (the block mk_pcblock_prepare factors, when there are at most cap of them) */
void sp_lrnm_gather(sp_lrnm *L, const double *key, int cap)
{
    int n = L->n, nf = 0, rows = 0;
    L->rows = 0; L->gathered = 0;
    for (int a = 0; a < L->na; a++) rows += L->st->goff[L->act[a] + 1] - L->st->goff[L->act[a]] + 1;
    if (cap <= 0 || (size_t) rows * cap > L->gcap) return;
    for (int i = 0; i < n; i++) if (key[i] == 0.0 && ++nf > cap) return;
    if (nf == 0) return;
    nf = 0;
    for (int i = 0; i < n; i++) {
        L->pos[i] = -1;
        if (key[i] != 0.0) continue;
        double *g = L->gt + (size_t) nf * rows;
        L->pos[i] = nf++;
        for (int a = 0; a < L->na; a++) {
            int r, m = L->act[a];
            const double *G = mk_store_factor(L->st, m, &r);
            double s1 = sqrt(L->c1[a] > 0.0 ? L->c1[a] : 0.0);
            for (int c = 0; c < r; c++) *g++ = s1 * G[i + (size_t) c * n];
            *g++ = sqrt(L->c2[a] > 0.0 ? L->c2[a] : 0.0) * L->KD[(size_t) m * n + i];
        }
    }
    L->rows = rows; L->gathered = 1;
}

/* entry (i, j), i <= j, of the operator at gathered coordinates (mk_pcblock_prepare) */
double sp_lrnm_entry(const void *ctx, int i, int j)
{
    const sp_lrnm *L = (const sp_lrnm *) ctx;
    if (!L->gathered || L->pos[i] < 0 || L->pos[j] < 0)
        error("SpicyMKL: a low-rank Newton entry outside the gathered block");
    double v = L->gb + mk_dot(L->rows, L->gt + (size_t) L->pos[i] * L->rows,
                              L->gt + (size_t) L->pos[j] * L->rows);
    return i == j ? v + L->dh[i] : v;
}

/* The squared row norms of each factor (n x M), the per-thread scratch and the operator's
   vectors; the free block's gathered rows are sized by sp_newton_alloc. */
void sp_lr_alloc(sp_state *S)
{
    int n = S->n, M = S->M, rmax = 1;
    sp_lrnm *L = &S->lr;
    L->on = 1; L->n = n; L->st = S->st; L->KD = S->KD;
    for (int m = 0; m < M; m++) {
        int r = S->st->goff[m + 1] - S->st->goff[m];
        if (r > rmax) rmax = r;
    }
    L->rmax = rmax;
    S->lrs = 2 * (size_t) rmax;
    S->lrbuf = (double *) R_alloc((size_t) S->nt_max * S->lrs, sizeof(double));
    double *rn = (double *) R_alloc((size_t) n * M, sizeof(double));
    for (int m = 0; m < M; m++) {
        int r;
        const double *G = mk_store_factor(S->st, m, &r);
        double *o = rn + (size_t) m * n;
        for (int i = 0; i < n; i++) o[i] = 0.0;
        for (int c = 0; c < r; c++)
            for (int i = 0; i < n; i++) o[i] += G[i + (size_t) c * n] * G[i + (size_t) c * n];
    }
    L->rn = rn;
    L->dh = (double *) R_alloc(n, sizeof(double));
    L->fd = (double *) R_alloc(n, sizeof(double));
    L->t = (double *) R_alloc(rmax, sizeof(double));
    L->pos = (int *) R_alloc(n, sizeof(int));
}
