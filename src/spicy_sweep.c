/* SpicyMKL: threads and kernel sweeps over the store: the kernels' products with rho and
 * the Newton direction (fused, or by columns when they are sparse), the norms of the working set.
 */
#include "spicy.h"

void sp_tick(sp_state *S, int j)
{
    double t = mk_time();
    S->tm[j] += t - S->tq;
    S->tq = t;
}

/* threads for a region of 'work' multiply-adds (at most nt_max, the size of the scratch) */
int sp_threads(const sp_state *S, double work)
{
    int nt = mk_threads_for(S->o->nthreads, work);
    return nt < S->nt_max ? nt : S->nt_max;
}

/* threads of a pass over the Newton matrix (its products, and forming it from na kernels): from
   SP_CG_PAR_MIN rows always the solver's threads */
int sp_nm_threads(const sp_state *S, double work)
{
    if (S->n >= SP_CG_PAR_MIN && work < MK_PAR_WORK) work = MK_PAR_WORK;
    return sp_threads(S, work);
}

/* kernel m for the sweeps (mk_symv2, mk_quad, the kernel statistics): an on-the-fly store
   computes it into this thread's kbuf, whole when small, else by blocks of columns (its upper
   triangle only from MK_TRI_MIN rows) */
void sp_ksrc(const sp_state *S, int m, mk_ksrc *K)
{
    mk_store_ksrc(S->st, m, S->n < MK_TRI_MIN, sp_thread_buf(S->kbuf, S->scr), K);
}

/* out = sum_k v[k] K_m[, idx[k]]: K_m x for a sparse x (n x nnz reads) */
MK_CLONES
static void sp_cols_mv(const sp_state *S, int m, const int *idx, const double *v, int nnz,
                       double *out, double *buf)
{
    int n = S->n, k = 0;
    for (int i = 0; i < n; i++) out[i] = 0.0;
    if (S->st->kind == MK_STORE_DENSE)
        for (; k + 2 <= nnz; k += 2) {
            const double *c0 = mk_store_col(S->st, m, idx[k], buf),
                *c1 = mk_store_col(S->st, m, idx[k + 1], buf);
            double v0 = v[k], v1 = v[k + 1];
            MK_SIMD
            for (int i = 0; i < n; i++) out[i] += v0 * c0[i] + v1 * c1[i];
        }
    for (; k < nnz; k++) {
        const double *c0 = mk_store_col(S->st, m, idx[k], buf);
        double v0 = v[k];
        MK_SIMD
        for (int i = 0; i < n; i++) out[i] += v0 * c0[i];
    }
}

/* the nonzeros of x into idx, v; returns their number */
static int sp_nz(int n, const double *x, int *idx, double *v)
{
    int k = 0;
    for (int i = 0; i < n; i++) if (x[i] != 0.0) { idx[k] = i; v[k] = x[i]; k++; }
    return k;
}

/* Kernel products for list[0..cnt-1] with x1 and x2 (x2 + m s2 for kernel m), into column m of
   the n x M arrays Y1, Y2: flag[j] = 1 both (one fused sweep), 0 Y2 only, 2 Y1 only. sparse
   (the box): x1 = rho and x2 = D are sparse and the products are sums of the columns of their
   nonzeros (bx.nzr, bx.nzd). */
void sp_kernel_mv(sp_state *S, int cnt, const double *x1, const double *x2, size_t s2,
                  double *Y1, double *Y2, int sparse)
{
    int n = S->n;
    int nt = cnt > 1 ? sp_threads(S, (double) cnt * n * n) : 1;
    (void) nt;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) if (nt > 1)
#endif
    for (int j = 0; j < cnt; j++) {
        int m = S->list[j];
        double *y1 = Y1 + (size_t) m * n, *y2 = Y2 + (size_t) m * n;
        if (S->lr.on) {
            /* through the factors, O(n r_m), sparse or not */
            const double *x2m = x2 + (size_t) m * s2;
            sp_lr_mv2(S, m, S->flag[j] != 0 ? x1 : NULL, S->flag[j] != 2 ? x2m : NULL,
                      y1, y2);
            continue;
        }
        if (sparse) {
            double *buf = sp_thread_buf(S->kbuf, S->scr);
            if (S->flag[j] != 2) sp_cols_mv(S, m, S->bx.nzd, S->bx.vzd, S->bx.nnzd, y2, buf);
            if (S->flag[j] != 0) sp_cols_mv(S, m, S->bx.nzr, S->bx.vzr, S->bx.nnzr, y1, buf);
            continue;
        }
        const double *x2m = x2 + (size_t) m * s2;
        mk_ksrc Km;
        sp_ksrc(S, m, &Km);
        if (S->flag[j] == 1) mk_symv2(&Km, x1, x2m, y1, y2);
        else if (S->flag[j] == 0) mk_symv2(&Km, x2m, NULL, y2, NULL);
        else mk_symv2(&Km, x1, NULL, y1, NULL);
    }
    S->nprod += cnt;
}

/* K_m rho into Kr and K_m D into KD for list[0..cnt-1] (flag as in sp_kernel_mv); in the box
   rho and D are sparse and the products are sums of their columns. */
void sp_products(sp_state *S, int cnt, const double *rho, const double *D)
{
    int n = S->n;
    if (S->bx.on && cnt > 0) {
        S->bx.nnzr = sp_nz(n, rho, S->bx.nzr, S->bx.vzr);
        S->bx.nnzd = sp_nz(n, D, S->bx.nzd, S->bx.vzd);
    }
    sp_kernel_mv(S, cnt, rho, D, 0, S->Kr, S->KD, S->bx.on);
}

/* r_m = ||alpha_m + gamma rho||_{K_m} for m in S at the current rho */
void sp_norms(sp_state *S)
{
    int n = S->n, M = S->M;
    double gamma = S->gamma;
    const double *rho = S->rho;
    int nt = sp_threads(S, 2.0 * M * n);
    (void) nt;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
#endif
    for (int m = 0; m < M; m++) {
        if (!S->inS[m]) continue;
        const double *ka = S->Ka + (size_t) m * n, *kr = S->Kr + (size_t) m * n;
        double r2 = gamma * gamma * mk_dot(n, rho, kr);
        if (S->anz[m]) r2 += S->anorm[m] * S->anorm[m] + 2.0 * gamma * mk_dot(n, rho, ka);
        S->r[m] = r2 > 0.0 ? sqrt(r2) : 0.0;
    }
}

/* Threads, kernel scratch, and the per-kernel products and norms of the working set */
void sp_sweep_alloc(sp_state *S)
{
    int n = S->n, M = S->M;
    size_t nM = (size_t) n * M;
    S->nt_max = mk_threads(S->o->nthreads);
    /* a low-rank store reads factors, never a whole kernel or column (sp_lr_alloc) */
    int lowrank = S->st->kind == MK_STORE_LOWRANK;
    S->scr = lowrank ? 0 : mk_store_scratch(S->st);
    S->hscr = S->scr > 0 ? (size_t) n : 0;
    if (S->scr > 0) {
        S->kbuf = (double *) R_alloc((size_t) S->nt_max * S->scr, sizeof(double));
        S->hbuf = (double *) R_alloc((size_t) S->nt_max * 4 * S->hscr, sizeof(double));
    }
    S->rsbuf = (double *) R_alloc((size_t) S->nt_max * n, sizeof(double));
    S->inS = (int *) R_alloc(M, sizeof(int));
    S->anz = (int *) R_alloc(M, sizeof(int));
    S->list = (int *) R_alloc(M, sizeof(int));
    S->flag = (int *) R_alloc(M, sizeof(int));
    /* n x M arrays: huge pages where the system gives them (first touch, see mk_alloc_huge) */
    S->Ka = (double *) mk_alloc_huge(nM * sizeof(double));
    S->Kr = (double *) mk_alloc_huge(nM * sizeof(double));
    S->KD = (double *) mk_alloc_huge(nM * sizeof(double));
    S->anorm = (double *) R_alloc(M, sizeof(double));
    S->r = (double *) R_alloc(M, sizeof(double));
    if (lowrank) sp_lr_alloc(S);
}
