/* The SVM-family driver's services on a low-rank store (K_m = G_m G_m' + jitter I): the SVM on
 * K(d) by the linear solver of lsvm.c on F = [sqrt(d_m) G_m], and the line kernel kept as
 * weights (base dB, direction DD: K(dB + t DD) is solved at its weights, never formed), the
 * quadratic forms v_m = |G_m'x|^2 + jitter |x|^2 of the certificate, and HessianMKL's
 * curvature through the factors. O(n sum r_m) memory; svmfam.c calls these when the store is
 * low rank, the strategies reach them through mk_sf_ctx. (NOTES-svm-family.md, "Low rank")
 * On an on-the-fly store the same line as weights, the SVM by the SMO through the column
 * cache of kcache.c (NOTES-store.md, "Column cache"): no n x n buffer either.
 */
#define USE_FC_LEN_T
#include "mklearn.h"
#include <R_ext/BLAS.h>
#include <R_ext/Lapack.h>
#include <math.h>
#include <string.h>
#ifndef FCONE
#define FCONE
#endif

typedef struct {
    mk_lr_factors fa;
    double *dK;          /* the weights fa was built for (valid when built) */
    double *dL;          /* the weights of the last solve */
    double *dB, *DD, *DD2;
    double *grad, *w;
    int built;
    mk_kcache *kc;       /* on the fly: the column cache and the SMO's source on it */
    mk_kcsrc *cs;
} lr_drv;

static lr_drv *drv(mk_sf_ctx *c) { return (lr_drv *) c->lrdrv; }

/* The SVM on K(dw), warm-started from alpha (in/out): J and *b. */
static double lr_solve(mk_sf_ctx *c, const double *dw, double *alpha, double *b)
{
    lr_drv *L = drv(c);
    const int M = c->M;
    double t = mk_time();
    mk_svm_result res;
    if (L->kc) {
        if (dw != L->dL) memcpy(L->dL, dw, (size_t) M * sizeof(double));
        mk_kcsrc_set(L->cs, dw);
        mk_smo_src(&L->cs->q, c->n, c->y, c->C, c->o->box, c->svm_tol, c->o->svm_maxiter, 0,
                   alpha, L->grad, &res);
        return mk_sf_counted(c, &res, t, b);
    }
    if (!L->built || memcmp(dw, L->dK, (size_t) M * sizeof(double)) != 0) {
        mk_lr_factors_set(&L->fa, dw, c->o->nthreads);
        memcpy(L->dK, dw, (size_t) M * sizeof(double));
        L->built = 1;
    }
    if (dw != L->dL) memcpy(L->dL, dw, (size_t) M * sizeof(double));
    mk_lsvm(L->fa.Ft, c->n, L->fa.R, c->y, c->C, L->fa.jit, c->svm_tol, c->o->svm_maxiter,
            alpha, L->grad, L->w, &res);
    return mk_sf_counted(c, &res, t, b);
}

static double lr_J_at(mk_sf_ctx *c, const double *d, double *alpha, double *b)
{
    return lr_solve(c, d, alpha, b);
}

static double lr_J_line(mk_sf_ctx *c, double t, double *alpha, double *b)
{
    lr_drv *L = drv(c);
    for (int m = 0; m < c->M; m++) L->dL[m] = L->dB[m] + t * L->DD[m];
    return lr_solve(c, L->dL, alpha, b);
}

static double lr_J_probe(mk_sf_ctx *c, double t, const int *idx, const double *wk,
                         const double *wd, int cnt, double *alpha, double *b)
{
    lr_drv *L = drv(c);
    for (int m = 0; m < c->M; m++) { L->dL[m] = L->dB[m] + t * L->DD[m]; L->DD2[m] = L->DD[m]; }
    for (int k = 0; k < cnt; k++) { L->dL[idx[k]] += wk[k]; L->DD2[idx[k]] += wd[k]; }
    return lr_solve(c, L->dL, alpha, b);
}

static void lr_take_probe(mk_sf_ctx *c)
{
    lr_drv *L = drv(c);
    double *tmp = L->DD;
    memcpy(L->dB, L->dL, (size_t) c->M * sizeof(double));
    L->DD = L->DD2; L->DD2 = tmp;
}

static void lr_dir_combine(mk_sf_ctx *c, const double *D)
{
    memcpy(drv(c)->DD, D, (size_t) c->M * sizeof(double));
}

static void lr_dir_axpy(mk_sf_ctx *c, int m, double t) { drv(c)->DD[m] += t; }

static void lr_base_move(mk_sf_ctx *c, double t)
{
    lr_drv *L = drv(c);
    for (int m = 0; m < c->M; m++) L->dB[m] += t * L->DD[m];
}

static void lr_base_take_line(mk_sf_ctx *c)
{
    memcpy(drv(c)->dB, drv(c)->dL, (size_t) c->M * sizeof(double));
}

static void lr_base_axpy(mk_sf_ctx *c, int m, double t) { drv(c)->dB[m] += t; }

static void lr_base_div(mk_sf_ctx *c, double s)
{
    for (int m = 0; m < c->M; m++) drv(c)->dB[m] /= s;
}

/* On the fly: column j of the line's base K(dB), from the column cache. */
static const double *lr_base_col(mk_sf_ctx *c, int j, double *buf)
{
    lr_drv *L = drv(c);
    mk_kcache_comb(L->kc, j, L->dB, buf);
    return buf;
}

static const double *lr_point_cols(mk_sf_ctx *c, int j)
{
    return mk_kcache_get(drv(c)->kc, j);
}

/* The base of the line back at the current weights (the driver's periodic rebuild). */
void mk_sf_lr_rebuild(mk_sf_ctx *c)
{
    memcpy(drv(c)->dB, c->d, (size_t) c->M * sizeof(double));
}

/* u = G'x, all R columns (threaded over columns: each is one dot product, a fixed order). */
static void lr_Gtx(const mk_store *st, const double *x, double *u, int nthreads)
{
    const int n = st->n, R = st->goff[st->M];
    int nt = mk_threads_for(nthreads, (double) n * R);
    (void) nt;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
#endif
    for (int k = 0; k < R; k++) {
        const double *g = st->G + (size_t) k * n;
        double s = 0.0;
        for (int i = 0; i < n; i++) s += g[i] * x[i];
        u[k] = s;
    }
}

/* v_m = x'K_m x = |G_m'x|^2 + jitter |x|^2 for every kernel, O(n R). */
void mk_sf_lr_quad(mk_sf_ctx *c, const double *x, double *v)
{
    const mk_store *st = c->st;
    lr_drv *L = drv(c);
    lr_Gtx(st, x, L->w, c->o->nthreads);
    double xx = 0.0;
    for (int i = 0; i < c->n; i++) xx += x[i] * x[i];
    for (int m = 0; m < c->M; m++) {
        double s = 0.0;
        for (int k = st->goff[m]; k < st->goff[m + 1]; k++) s += L->w[k] * L->w[k];
        v[m] = s + st->jitter * xx;
    }
}

/* HessianMKL's curvature on the free support vectors S (ns of them), al = y.a: Z with
   Z'Z = X' Kbar^{-1} X, X = [Q, 1], Q[, m] = (K_m al)_S, Kbar = K(d)_SS + ridge I (the ridge of
   the dense path, 1e-10 of the mean diagonal). With ns <= R, Kbar is formed (ns x ns) and
   Z = L^{-1} X as the dense path does; otherwise by Woodbury with K(d)_SS = F_S F_S' + s I,
   X'Kbar^{-1}X = (X'X - P'(sI + F_S'F_S)^{-1}P) / s, P = F_S'X, and Z = Lambda^{1/2} V' from its
   eigendecomposition ((M + 1) rows). Returns Z (R_alloc) and its rows in *zr; NULL on failure. */
/* The free SVs' factor rows in blocks of this many rows on the Woodbury path: its memory is
   O(block R), not O(ns R) (mkl_memory(), R/memory.R, counts the same). */
#define LR_HESS_BLOCK 4096

/* Rows S[j0 .. j0 + nb) of the active columns of F = [sqrt(d_m) G_m] into FS (nb x Ra). */
static void lr_gather_rows(const mk_store *st, int n, const double *d, int M, const int *S,
                           int j0, int nb, double *FS)
{
    int k0 = 0;
    for (int m = 0; m < M; m++) {
        if (!(d[m] > 0.0)) continue;
        double sq = sqrt(d[m]);
        for (int k = st->goff[m]; k < st->goff[m + 1]; k++) {
            const double *g = st->G + (size_t) k * n;
            double *f = FS + (size_t) k0++ * nb;
            for (int j = 0; j < nb; j++) f[j] = sq * g[S[j0 + j]];
        }
    }
}

static double *lr_hess_gram(mk_sf_ctx *c, const int *S, int ns, const double *al, int *zr)
{
    const mk_store *st = c->st;
    lr_drv *L = drv(c);
    const int n = c->n, M = c->M, M1 = M + 1;
    const double *d = c->d, one = 1.0, zero = 0.0;
    int Ra = 0, info = 0;
    double sd = 0.0;
    for (int m = 0; m < M; m++)
        if (d[m] > 0.0) { Ra += st->goff[m + 1] - st->goff[m]; sd += d[m]; }
    /* X = [Q, 1] (ns x M1); F_S (ns x Ra) whole while ns <= Ra, else by blocks of rows */
    const int nbmax = ns <= Ra ? ns : (ns < LR_HESS_BLOCK ? ns : LR_HESS_BLOCK);
    double *FS = (double *) R_alloc((size_t) nbmax * (Ra > 0 ? Ra : 1), sizeof(double));
    double *X = (double *) R_alloc((size_t) ns * M1, sizeof(double));
    lr_Gtx(st, al, L->w, c->o->nthreads);
    for (int m = 0; m < M; m++) {
        double *q = X + (size_t) m * ns;
        for (int k = 0; k < ns; k++) q[k] = st->jitter * al[S[k]];
        for (int k = st->goff[m]; k < st->goff[m + 1]; k++) {
            const double *g = st->G + (size_t) k * n;
            double u = L->w[k];
            for (int j = 0; j < ns; j++) q[j] += g[S[j]] * u;
        }
    }
    for (int k = 0; k < ns; k++) X[(size_t) M * ns + k] = 1.0;
    double jd = st->jitter * sd;
    if (ns <= Ra) {   /* Kbar formed: the dense path's arithmetic */
        lr_gather_rows(st, n, d, M, S, 0, ns, FS);
        double tr = 0.0;
        for (size_t k = 0; k < (size_t) ns * Ra; k++) tr += FS[k] * FS[k];
        double ridge = 1e-10 * (tr / ns + jd);
        double *Kb = (double *) R_alloc((size_t) ns * ns, sizeof(double));
        F77_CALL(dsyrk)("L", "N", &ns, &Ra, &one, FS, &ns, &zero, Kb, &ns FCONE FCONE);
        double *Kb2 = (double *) R_alloc((size_t) ns * ns, sizeof(double));
        info = 1;
        for (int r = 0; r < 6 && info != 0; r++, ridge *= 100.0) {
            memcpy(Kb2, Kb, (size_t) ns * ns * sizeof(double));
            for (int k = 0; k < ns; k++) Kb2[k + (size_t) k * ns] += jd + ridge;
            F77_CALL(dpotrf)("L", &ns, Kb2, &ns, &info FCONE);
        }
        if (info != 0) return NULL;
        F77_CALL(dtrsm)("L", "L", "N", "N", &ns, &M1, &one, Kb2, &ns, X, &ns
                        FCONE FCONE FCONE FCONE);
        *zr = ns;
        return X;
    }
    /* Woodbury in the Ra active columns: A = F_S'F_S and P = F_S'X summed over blocks of rows
       (one block, the whole F_S, up to LR_HESS_BLOCK free SVs) */
    double ms = -1.0, tr = 0.0;
    double *A = (double *) R_alloc((size_t) Ra * Ra, sizeof(double));
    double *P = (double *) R_alloc((size_t) Ra * M1, sizeof(double));
    double *T = (double *) R_alloc((size_t) Ra * M1, sizeof(double));
    double *Gm = (double *) R_alloc((size_t) M1 * M1, sizeof(double));
    for (int j0 = 0; j0 < ns; j0 += nbmax) {
        int nb = ns - j0 < nbmax ? ns - j0 : nbmax;
        const double beta = j0 > 0 ? 1.0 : 0.0;
        lr_gather_rows(st, n, d, M, S, j0, nb, FS);
        for (size_t k = 0; k < (size_t) nb * Ra; k++) tr += FS[k] * FS[k];
        F77_CALL(dsyrk)("L", "T", &Ra, &nb, &one, FS, &nb, &beta, A, &Ra FCONE FCONE);
        F77_CALL(dgemm)("T", "N", &Ra, &M1, &nb, &one, FS, &nb, X + j0, &ns, &beta, P, &Ra
                        FCONE FCONE);
    }
    double s = jd + 1e-10 * (tr / ns + jd);
    for (int k = 0; k < Ra; k++) A[k + (size_t) k * Ra] += s;
    F77_CALL(dpotrf)("L", &Ra, A, &Ra, &info FCONE);
    if (info != 0) return NULL;
    memcpy(T, P, (size_t) Ra * M1 * sizeof(double));
    F77_CALL(dpotrs)("L", &Ra, &M1, A, &Ra, T, &Ra, &info FCONE);
    F77_CALL(dgemm)("T", "N", &M1, &M1, &ns, &one, X, &ns, X, &ns, &zero, Gm, &M1 FCONE FCONE);
    F77_CALL(dgemm)("T", "N", &M1, &M1, &Ra, &ms, P, &Ra, T, &Ra, &one, Gm, &M1 FCONE FCONE);
    for (size_t k = 0; k < (size_t) M1 * M1; k++) Gm[k] /= s;
    /* Z = Lambda^{1/2} V' (negative eigenvalues of rounding to 0) */
    double *ev = (double *) R_alloc(M1, sizeof(double)), wq;
    int lw = -1;
    F77_CALL(dsyev)("V", "L", &M1, Gm, &M1, ev, &wq, &lw, &info FCONE FCONE);
    lw = (int) wq;
    double *wk = (double *) R_alloc(lw > 1 ? lw : 1, sizeof(double));
    F77_CALL(dsyev)("V", "L", &M1, Gm, &M1, ev, wk, &lw, &info FCONE FCONE);
    if (info != 0) return NULL;
    double *Z = (double *) R_alloc((size_t) M1 * M1, sizeof(double));
    for (int j = 0; j < M1; j++)
        for (int r = 0; r < M1; r++)
            Z[r + (size_t) j * M1] = sqrt(ev[r] > 0.0 ? ev[r] : 0.0) * Gm[j + (size_t) r * M1];
    *zr = M1;
    return Z;
}

/* Put the low-rank services in c (after the driver filled it). */
void mk_sf_lr_attach(mk_sf_ctx *c)
{
    const int n = c->n, M = c->M;
    lr_drv *L = (lr_drv *) R_alloc(1, sizeof(lr_drv));
    const int fly = c->st->kind == MK_STORE_FLY;
    L->kc = NULL; L->cs = NULL;
    if (fly) {
        L->kc = (mk_kcache *) R_alloc(1, sizeof(mk_kcache));
        L->cs = (mk_kcsrc *) R_alloc(1, sizeof(mk_kcsrc));
        mk_kcache_init(L->kc, c->st, c->o->kcache);
        mk_kcsrc_init(L->cs, L->kc);
        L->fa.Rtot = 0;
    } else mk_lr_factors_init(&L->fa, c->st);
    L->dK = (double *) R_alloc(M, sizeof(double));
    L->dL = (double *) R_alloc(M, sizeof(double));
    L->dB = (double *) R_alloc(M, sizeof(double));
    L->DD = (double *) R_alloc(M, sizeof(double));
    L->DD2 = (double *) R_alloc(M, sizeof(double));
    memcpy(L->dB, c->d, (size_t) M * sizeof(double));
    memset(L->DD, 0, (size_t) M * sizeof(double));
    L->grad = (double *) R_alloc(n, sizeof(double));
    L->w = (double *) R_alloc(L->fa.Rtot > 0 ? L->fa.Rtot : 1, sizeof(double));
    L->built = 0;
    c->lrdrv = L;
    c->J_at = lr_J_at; c->J_line = lr_J_line;
    c->dir_combine = lr_dir_combine; c->dir_axpy = lr_dir_axpy;
    c->J_probe = lr_J_probe; c->take_probe = lr_take_probe;
    c->base_move = lr_base_move; c->base_take_line = lr_base_take_line;
    c->base_axpy = lr_base_axpy; c->base_div = lr_base_div;
    c->base_col = fly ? lr_base_col : NULL;
    c->point_cols = fly ? lr_point_cols : NULL;
    c->hess_gram = fly ? NULL : lr_hess_gram;
}
