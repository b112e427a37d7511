/* MKL-L0/1-SVM's w-step on a low-rank store (K_m = G_m G_m' + jitter I): the systems
 * (I + rho1 K(d)) x = rhs of l01.c without an n x n matrix. With F = [sqrt(d_m) G_m] over the
 * kernels with d_m > 0 and c = 1 + rho1 jitter sum(d), the matrix is c I + rho1 F F':
 *   - conjugate gradients on the product K(d) p = F (F' p) + jitter sum(d) p, O(n R) each;
 *   - or exactly by Woodbury, x = (rhs - F s) / c with (c / rho1 I + F'F) s = F' rhs, through
 *     the Cholesky factor of that R x R matrix, kept while d is the same, from G'G over the
 *     free kernels' columns (the only ones with d_m > 0), formed once by mk_crossprod (linalg.c).
 * With Woodbury the joint (w, b) step also makes the products K_m w (mk_l01_lr_wb); otherwise
 * the rest of the ADMM (K_m w, the d-system) reads the store's O(n r) primitives.
 * (inst/notes/NOTES-l01.md, "Low rank") */
#define USE_FC_LEN_T
#include "mklearn.h"
#include <R_ext/BLAS.h>
#include <R_ext/Lapack.h>
#include <math.h>
#include <string.h>
#ifndef FCONE
#define FCONE
#endif

struct mk_l01_lr {
    const mk_store *st;
    int n, M, Rtot, Rf, mode, Ra, have;
    int *cols;          /* Ra: the factor columns of the kernels with d_m > 0 */
    int *lcol;          /* Ra: their places among the free kernels' Rf columns (G'G's index) */
    int *free;          /* M: 0 for a kernel held at d_m = 0 */
    int *fcols;         /* Rf: the free kernels' factor columns, in kernel order */
    double *g1;         /* Woodbury: Rf column sums of those columns */
    double *tf, *cf, *va;   /* Woodbury, joint step: Rf each, G_f'rhs, G_f'w, v by column */
    double *sc;         /* Ra: sqrt(d_m) of each of those columns */
    double jd, rho1;    /* jitter sum(d); the rho1 of the factor */
    double *d;          /* M: the weights cols and sc were made for */
    double *t, *t2;     /* Rtot each: F'p (t2: the joint step's second system) */
    double *GtG, *A;    /* Woodbury: G'G over the free kernels (Rf x Rf), the factor (Ra x Ra) */
    double *q, *r, *work;
};

#define L01_LR_ROWS 256   /* rows per block of the joint step's second pass */

static double *lr_dalloc(size_t len) { return (double *) R_alloc(len ? len : 1, sizeof(double)); }

mk_l01_lr *mk_l01_lr_new(const mk_store *st, int mode, const int *free)
{
    if (st->kind != MK_STORE_LOWRANK) error("l01: not a low-rank store");
    mk_l01_lr *L = (mk_l01_lr *) R_alloc(1, sizeof(mk_l01_lr));
    int n = st->n, M = st->M, R = st->goff[M], Rf = 0;
    for (int m = 0; m < M; m++) if (free[m]) Rf += st->goff[m + 1] - st->goff[m];
    L->st = st; L->n = n; L->M = M; L->Rtot = R; L->Rf = Rf; L->mode = mode; L->Ra = 0;
    L->have = 0;
    L->cols = (int *) R_alloc(R ? R : 1, sizeof(int));
    L->lcol = (int *) R_alloc(R ? R : 1, sizeof(int));
    L->free = (int *) R_alloc(M, sizeof(int));
    memcpy(L->free, free, (size_t) M * sizeof(int));
    L->sc = lr_dalloc(R); L->t = lr_dalloc(R); L->t2 = lr_dalloc(R); L->d = lr_dalloc(M);
    L->q = lr_dalloc(n); L->r = lr_dalloc(n);
    L->work = lr_dalloc(3 * (size_t) n);
    L->GtG = L->A = NULL;
    L->jd = 0.0; L->rho1 = 0.0;
    L->fcols = (int *) R_alloc(Rf ? Rf : 1, sizeof(int));
    for (int m = 0, j = 0; m < M; m++)
        if (free[m]) for (int k = st->goff[m]; k < st->goff[m + 1]; k++) L->fcols[j++] = k;
    L->g1 = L->tf = L->cf = L->va = NULL;
    if (mode == 1 && Rf > 0) {
        L->g1 = lr_dalloc(Rf); L->tf = lr_dalloc(Rf); L->cf = lr_dalloc(Rf);
        L->va = lr_dalloc(Rf);
        for (int j = 0; j < Rf; j++) {
            const double *g = st->G + (size_t) L->fcols[j] * n;
            double t = 0.0;
            for (int i = 0; i < n; i++) t += g[i];
            L->g1[j] = t;
        }
        /* G_a'G_b for free kernels a <= b, each block into its place (both triangles): the
           kernels held at d_m = 0 never enter the factor (reference dsyrk over all R columns
           was half of 300 iterations on Adult: NOTES-l01.md, "Adult at rank cap 50: the
           Woodbury step in two passes") */
        L->GtG = lr_dalloc((size_t) Rf * Rf);
        L->A = lr_dalloc((size_t) Rf * Rf);
        for (int a = 0, oa = 0; a < M; a++) {
            if (!free[a]) continue;
            int ra = st->goff[a + 1] - st->goff[a];
            for (int b = a, ob = oa; b < M; b++) {
                if (!free[b]) continue;
                int rb = st->goff[b + 1] - st->goff[b];
                double *C = L->GtG + oa + (size_t) ob * Rf;
                mk_crossprod(n, ra, rb, st->G + (size_t) st->goff[a] * n,
                             st->G + (size_t) st->goff[b] * n, a == b, C, Rf);
                for (int c = 0; c < rb; c++)
                    for (int q = 0; q < ra; q++) L->GtG[ob + c + (size_t) (oa + q) * Rf] =
                        C[q + (size_t) c * Rf];
                ob += rb;
            }
            oa += ra;
        }
    }
    return L;
}

/* the threads of one O(n Ra) product */
static int lr_threads(const mk_l01_lr *L)
{
    return mk_threads_for(L->st->nthreads, (double) L->n * L->Ra);
}

/* t = F'p: one dot product per active column, in a fixed order (threads over columns) */
static void lr_ftmul(const mk_l01_lr *L, const double *p, double *t)
{
    const int n = L->n, Ra = L->Ra;
    const double *G = L->st->G;
    int nt = lr_threads(L);
    (void) nt;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
#endif
    for (int a = 0; a < Ra; a++) {
        const double *g = G + (size_t) L->cols[a] * n;
        double s = 0.0;
        for (int i = 0; i < n; i++) s += g[i] * p[i];
        t[a] = L->sc[a] * s;
    }
}

/* out = F t + diag * p (p may be NULL: no diagonal term), by blocks of rows (threads) */
static void lr_fmul(const mk_l01_lr *L, const double *t, double diag, const double *p,
                    double *out)
{
    int nt = lr_threads(L);
    (void) nt;
    const int n = L->n, Ra = L->Ra, B = 256;
    const double *G = L->st->G;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
#endif
    for (int i0 = 0; i0 < n; i0 += B) {
        int i1 = i0 + B < n ? i0 + B : n;
        for (int i = i0; i < i1; i++) out[i] = p ? diag * p[i] : 0.0;
        for (int a = 0; a < Ra; a++) {
            const double *g = G + (size_t) L->cols[a] * n;
            double v = L->sc[a] * t[a];
            if (v == 0.0) continue;
            for (int i = i0; i < i1; i++) out[i] += g[i] * v;
        }
    }
}

/* q = K(d) p = F (F'p) + jitter sum(d) p */
static void lr_kd(const mk_l01_lr *L, const double *p, double *q, double *t)
{
    lr_ftmul(L, p, t);
    lr_fmul(L, t, L->jd, p, q);
}

/* Make the active columns current for d (and, with Woodbury, the factor for d and rho1).
   Returns 1 when a Cholesky factorisation was made. */
int mk_l01_lr_update(mk_l01_lr *L, const double *d, double rho1)
{
    const mk_store *st = L->st;
    const int M = L->M;
    if (L->have && L->rho1 == rho1 && memcmp(L->d, d, (size_t) M * sizeof(double)) == 0)
        return 0;
    int Ra = 0, lf = 0;
    double sd = 0.0;
    for (int m = 0; m < M; m++) {
        int r = st->goff[m + 1] - st->goff[m];
        if (!(d[m] > 0.0)) { lf += L->free[m] ? r : 0; continue; }
        if (!L->free[m]) error("l01: kernel %d is held at weight 0 but has d > 0", m + 1);
        sd += d[m];
        for (int k = st->goff[m]; k < st->goff[m + 1]; k++) {
            L->cols[Ra] = k;
            L->lcol[Ra] = lf++;
            L->sc[Ra++] = sqrt(d[m]);
        }
    }
    L->Ra = Ra;
    L->jd = st->jitter * sd;
    L->rho1 = rho1;
    memcpy(L->d, d, (size_t) M * sizeof(double));
    L->have = 1;
    if (L->mode != 1 || Ra == 0) return 0;
    const int Rf = L->Rf;
    double cr = (1.0 + rho1 * L->jd) / rho1, *A = L->A;
    for (int b = 0; b < Ra; b++)
        for (int a = b; a < Ra; a++)
            A[a + (size_t) b * Ra] = L->sc[a] * L->sc[b] *
                L->GtG[L->lcol[a] + (size_t) L->lcol[b] * Rf];
    for (int a = 0; a < Ra; a++) A[a + (size_t) a * Ra] += cr;
    int info = 0;
    F77_CALL(dpotrf)("L", &Ra, A, &Ra, &info FCONE);
    if (info != 0) error("l01: c / rho1 I + F'F is not positive definite (dpotrf %d)", info);
    return 1;
}

/* The CG operator of I + rho1 K(d) */
typedef struct { const mk_l01_lr *L; double rho1; double *t; } lr_wop;

static void lr_wop_mv(void *ctx, const double *p, double *q)
{
    const lr_wop *o = (const lr_wop *) ctx;
    lr_kd(o->L, p, q, o->t);
    for (int i = 0; i < o->L->n; i++) q[i] = p[i] + o->rho1 * q[i];
}

/* (I + rho1 K(d)) x_k = rhs_k, k < nrhs, as l01.c's wsolve (x_k: the CG warm start on entry):
   CG stopped at cg_tol relative to ||rhs_k||, or Woodbury. Returns the CG iterations. */
int mk_l01_lr_solve(mk_l01_lr *L, double rho1, int nrhs, const double *const *rhs,
                    double *const *x, double cg_tol, int cg_maxiter)
{
    const int n = L->n;
    int total = 0;
    if (nrhs < 1 || nrhs > 2) error("l01: 1 or 2 w-systems at a time, not %d", nrhs);
    if (L->mode == 1) {
        /* the joint (w, b) step takes mk_l01_lr_wb (below): here one system at a time */
        double c = 1.0 + rho1 * L->jd;
        int Ra = L->Ra, one = 1, info = 0;
        for (int k = 0; k < nrhs; k++) {
            if (Ra > 0) {
                lr_ftmul(L, rhs[k], L->t);
                F77_CALL(dpotrs)("L", &Ra, &one, L->A, &Ra, L->t, &Ra, &info FCONE);
                lr_fmul(L, L->t, 0.0, NULL, L->q);
            } else memset(L->q, 0, (size_t) n * sizeof(double));
            for (int i = 0; i < n; i++) x[k][i] = (rhs[k][i] - L->q[i]) / c;
        }
        return 0;
    }
    lr_wop op = { L, rho1, L->t };
    mk_cg cg;
    memset(&cg, 0, sizeof(cg));
    cg.n = n; cg.maxit = cg_maxiter; cg.mv = lr_wop_mv; cg.mv_ctx = &op;
    cg.check_start = 1; cg.work = L->work;
    for (int k = 0; k < nrhs; k++) {
        lr_kd(L, x[k], L->q, L->t);
        double bn = 0.0;
        for (int i = 0; i < n; i++) {
            L->r[i] = rhs[k][i] - x[k][i] - rho1 * L->q[i];
            bn += rhs[k][i] * rhs[k][i];
        }
        bn = sqrt(bn);
        cg.tol = cg_tol * (bn > 0 ? bn : 1.0);
        int iters = 0;
        mk_cg_solve(&cg, x[k], L->r, &iters);
        total += iters;
    }
    return total;
}

/* y[0..nb) += sum_e x[e] g_e[0..nb) over r columns g_e = g + e ld, and z += sum_e u[e] g_e
   when z != NULL, four columns at a time (one read of the columns, one read and write of y
   and z per four columns; each entry summed in a fixed order) */
static void lr_axpy_cols(int nb, int ld, int r, const double *g, const double *x, double *y,
                         const double *u, double *z)
{
    int e = 0;
    for (; e + 3 < r; e += 4) {
        const double *restrict g0 = g + (size_t) e * ld, *restrict g1 = g0 + ld,
            *restrict g2 = g1 + ld, *restrict g3 = g2 + ld;
        double *restrict yr = y, *restrict zr = z;
        double x0 = x[e], x1 = x[e + 1], x2 = x[e + 2], x3 = x[e + 3];
        if (z) {
            double u0 = u[e], u1 = u[e + 1], u2 = u[e + 2], u3 = u[e + 3];
            MK_SIMD
            for (int i = 0; i < nb; i++) {
                yr[i] += (g0[i] * x0 + g1[i] * x1) + (g2[i] * x2 + g3[i] * x3);
                zr[i] += (g0[i] * u0 + g1[i] * u1) + (g2[i] * u2 + g3[i] * u3);
            }
        } else {
            MK_SIMD
            for (int i = 0; i < nb; i++)
                yr[i] += (g0[i] * x0 + g1[i] * x1) + (g2[i] * x2 + g3[i] * x3);
        }
    }
    for (; e < r; e++) {
        const double *restrict g0 = g + (size_t) e * ld;
        double *restrict yr = y, *restrict zr = z;
        double x0 = x[e];
        if (z) {
            double u0 = u[e];
            MK_SIMD
            for (int i = 0; i < nb; i++) { yr[i] += g0[i] * x0; zr[i] += g0[i] * u0; }
        } else {
            MK_SIMD
            for (int i = 0; i < nb; i++) yr[i] += g0[i] * x0;
        }
    }
}

/* The joint (w, b) block of the ADMM (l01.c, l01_wb_step) by Woodbury, for the d of the last
   update: w_0 and w_1 solve (I + rho1 K(d)) w_k = rhs_k with rhs_1 = rho1 1, b = -(sy + (1'rhs_0
   - 1'w_0) / rho1) / (1'w_1 / rho1), w = w_0 - b w_1, and P = [K_m w] for the nf free kernels
   fidx (n x nf, K_m w = G_m (G_m'w) + jitter w). Two passes over the free kernels' factor
   columns where the w-step and the products took four: G_f'rhs_0 (G_f'rhs_1 = rho1 g1), then
   w and P together by blocks of rows; 1'w_k and G_f'w come from G'G and g1 (R x R algebra).
   Returns b. (NOTES-l01.md, "Low rank" and "Adult at rank cap 50: the Woodbury step in two
   passes") */
double mk_l01_lr_wb(mk_l01_lr *L, double rho1, const double *rhs0, double sy, int nf,
                    const int *fidx, double *w, double *P)
{
    const mk_store *st = L->st;
    const int n = L->n, Ra = L->Ra, Rf = L->Rf, one = 1, B = L01_LR_ROWS;
    if (L->mode != 1) error("l01: the joint Woodbury step needs wstep = \"chol\"");
    int rf = 0;
    for (int k = 0; k < nf; k++) {
        if (!L->free[fidx[k]] || (k > 0 && fidx[k] <= fidx[k - 1]))
            error("l01: the joint Woodbury step needs the free kernels in order");
        rf += st->goff[fidx[k] + 1] - st->goff[fidx[k]];
    }
    if (rf != Rf) error("l01: the joint Woodbury step needs every free kernel");
    const double *G = st->G;
    double c = 1.0 + rho1 * L->jd, *tf = L->tf, *cf = L->cf, *s0 = L->t, *s1 = L->t2;
    int nt = mk_threads_for(st->nthreads, (double) n * Rf);
    (void) nt;
    /* pass 1: G_f'rhs_0, one dot per free column in a fixed order (threads over columns) */
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
#endif
    for (int j = 0; j < Rf; j++) tf[j] = mk_dot4(n, G + (size_t) L->fcols[j] * n, rhs0);
    /* s_k = (c / rho1 I + F'F)^{-1} F'rhs_k; 1'w_k = (1'rhs_k - (F'1)'s_k) / c */
    double sr0 = 0.0, sw0, sw1;
    for (int i = 0; i < n; i++) sr0 += rhs0[i];
    for (int a = 0; a < Ra; a++) {
        s0[a] = L->sc[a] * tf[L->lcol[a]];
        s1[a] = L->sc[a] * rho1 * L->g1[L->lcol[a]];
    }
    if (Ra > 0) {
        int info = 0;
        F77_CALL(dpotrs)("L", &Ra, &one, L->A, &Ra, s0, &Ra, &info FCONE);
        F77_CALL(dpotrs)("L", &Ra, &one, L->A, &Ra, s1, &Ra, &info FCONE);
    }
    double f0 = 0.0, f1 = 0.0;
    for (int a = 0; a < Ra; a++) {
        double g1a = L->sc[a] * L->g1[L->lcol[a]];
        f0 += g1a * s0[a];
        f1 += g1a * s1[a];
    }
    sw0 = (sr0 - f0) / c;
    sw1 = (rho1 * n - f1) / c;
    double b = -(sy + (sr0 - sw0) / rho1) / (sw1 / rho1);
    /* v = sc (s_0 - b s_1) on the active columns, so that F(s_0 - b s_1) = G_a v;
       G_f'w = (G_f'rhs_0 - b rho1 g1 - G_f'G_a v) / c */
    for (int a = 0; a < Ra; a++) s0[a] = L->sc[a] * (s0[a] - b * s1[a]);
    for (int j = 0; j < Rf; j++) {
        const double *gg = L->GtG + (size_t) j * Rf;   /* column j = row j (symmetric) */
        double t = 0.0;
        for (int a = 0; a < Ra; a++) t += gg[L->lcol[a]] * s0[a];
        cf[j] = (tf[j] - b * rho1 * L->g1[j] - t) / c;
    }
    /* pass 2, by blocks of rows (threads over blocks; each entry summed in a fixed order): w =
       (rhs_0 - b rho1 - G_a v) / c, then P[, k] = G_{fidx[k]} cf + jitter w */
    double *act = L->va;   /* v at a free column that is active, else 0 */
    for (int j = 0; j < Rf; j++) act[j] = 0.0;
    for (int a = 0; a < Ra; a++) act[L->lcol[a]] = s0[a];
    const double jit = st->jitter;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
#endif
    for (int i0 = 0; i0 < n; i0 += B) {
        int i1 = i0 + B < n ? i0 + B : n;
        double gw[L01_LR_ROWS];
        for (int i = i0; i < i1; i++) gw[i - i0] = 0.0;
        for (int k = 0, j = 0; k < nf; k++) {
            int m = fidx[k], r = st->goff[m + 1] - st->goff[m];
            double *pk = P + (size_t) k * n;
            for (int i = i0; i < i1; i++) pk[i] = 0.0;
            const double *gk = G + (size_t) st->goff[m] * n + i0;
            int on = L->d[m] > 0.0;   /* the active kernels' columns also make G_a v */
            lr_axpy_cols(i1 - i0, n, r, gk, cf + j, pk + i0, on ? act + j : NULL, on ? gw : NULL);
            j += r;
        }
        for (int i = i0; i < i1; i++) w[i] = (rhs0[i] - b * rho1 - gw[i - i0]) / c;
        if (jit != 0.0)
            for (int k = 0; k < nf; k++) {
                double *pk = P + (size_t) k * n;
                for (int i = i0; i < i1; i++) pk[i] += jit * w[i];
            }
    }
    return b;
}
