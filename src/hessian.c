/* HessianMKL (Chapelle & Rakotomamonjy 2008) as a step strategy of the SVM-family driver
 * (svmfam.c): constrained Newton steps on the kernel weights.
 *
 * At the SVM solution a (signed alpha = y.a), with S the free support vectors (0 < a_i < C)
 * and Kbar = K(d)_{SS}, differentiating the margin equations K(d)_{S,:} alpha + b = y_S gives
 *   H_{ml} = q_m' Abar q_l,  q_m = (K_m alpha)_S,
 *   Abar = top-left block of [[Kbar, 1], [1', 0]]^{-1}
 *        = Kbar^{-1} - Kbar^{-1} 1 1' Kbar^{-1} / (1'Kbar^{-1}1).
 * (q_m uses the whole alpha, bounded support vectors included: they move the margin of S even
 * though their own alpha does not change; the paper's K^m_{sv,sv} alpha_sv is the special case
 * with no bounded support vectors.)  With Kbar = L L' (Cholesky), Z = L^{-1} Q, z = L^{-1} 1:
 *   H = Z'Z - w w' / c,  w = Z'z,  c = z'z.
 * The step solves min (1/2) s'Hs + g's, sum(s) = 0, d + s >= 0 (Eq. 4); in x = d + s this is a
 * strictly convex QP on the simplex, solved by a primal active-set method that starts at a vertex
 * and needs only the columns of H of the kernels it lets in (computed lazily from Z), so a
 * step costs O(M n_sv^2) for Z plus O(M n_sv) per kernel in the QP working set, not O(M^3).
 */
#define USE_FC_LEN_T
#include "mklearn.h"
#include <R_ext/BLAS.h>
#include <R_ext/Lapack.h>
#include <math.h>
#include <float.h>
#include <string.h>
#ifndef FCONE
#define FCONE
#endif

typedef struct {
    int M, ns, cap, ncached;
    const double *Z;   /* ns x M */
    const double *wv;  /* M */
    double cw, ridge;
    double *cache;     /* M x cap */
    int *slot;         /* M: cache slot or -1 */
} hcols;

/* Column j of H (ridge included), computed on first use; NULL if the cache is full. */
static const double *hcol(hcols *hc, int j)
{
    if (hc->slot[j] >= 0) return hc->cache + (size_t) hc->slot[j] * hc->M;
    if (hc->ncached >= hc->cap) return NULL;
    double *col = hc->cache + (size_t) hc->ncached * hc->M;
    hc->slot[j] = hc->ncached++;
    int M = hc->M, ns = hc->ns, one = 1;
    double d1 = 1.0, d0 = 0.0;
    F77_CALL(dgemv)("T", &ns, &M, &d1, hc->Z, &ns, hc->Z + (size_t) j * ns, &one, &d0, col, &one
                    FCONE);
    double f = hc->wv[j] / hc->cw;
    for (int m = 0; m < M; m++) col[m] -= hc->wv[m] * f;
    col[j] += hc->ridge;
    return col;
}

/* Cholesky factor L (lower, leading dimension ld) of H_FF for the working set F, kept up to
   date as kernels enter and leave F, so that an active-set iteration costs O(|F|^2) instead
   of a fresh O(|F|^3) factorisation. */
typedef struct { double *L; int ld, nf; } chol_ws;

/* Append kernel j (H column hj, full length M) to F; 0 on success, -1 if H_FF + j is not
   numerically positive definite. */
static int chol_add(chol_ws *cw, const int *F, const double *hj, int j, double *tmp)
{
    int nf = cw->nf, ld = cw->ld;
    double *L = cw->L, ss = 0.0;
    for (int r = 0; r < nf; r++) {          /* forward solve L t = H_{F, j} */
        double v = hj[F[r]];
        for (int c = 0; c < r; c++) v -= L[r + (size_t) c * ld] * tmp[c];
        tmp[r] = v / L[r + (size_t) r * ld];
        ss += tmp[r] * tmp[r];
    }
    double piv = hj[j] - ss;
    if (!(piv > 1e-13 * hj[j])) return -1;
    for (int c = 0; c < nf; c++) L[nf + (size_t) c * ld] = tmp[c];
    L[nf + (size_t) nf * ld] = sqrt(piv);
    cw->nf = nf + 1;
    return 0;
}

/* Remove position k of F from the factor: drop row k, then Givens rotations on the column
   pairs (i, i+1), i >= k, restore the lower-triangular shape (L L' is unchanged by them). */
static void chol_remove(chol_ws *cw, int k)
{
    int nf = cw->nf, ld = cw->ld;
    double *L = cw->L;
    for (int c = 0; c < nf; c++)
        for (int r = k; r < nf - 1; r++) L[r + (size_t) c * ld] = L[r + 1 + (size_t) c * ld];
    for (int i = k; i < nf - 1; i++) {
        double *ci = L + (size_t) i * ld, *cn = L + (size_t) (i + 1) * ld;
        double a = ci[i], bb = cn[i], rr = hypot(a, bb);
        if (rr == 0.0) continue;
        double cs = a / rr, sn = bb / rr;
        for (int r = i; r < nf - 1; r++) {
            double t1 = ci[r], t2 = cn[r];
            ci[r] = cs * t1 + sn * t2;
            cn[r] = -sn * t1 + cs * t2;
        }
        ci[i] = rr; cn[i] = 0.0;
    }
    cw->nf = nf - 1;
}

/* Solve L L' z = z in place. */
static void chol_solve(const chol_ws *cw, double *z)
{
    int nf = cw->nf, ld = cw->ld;
    const double *L = cw->L;
    for (int r = 0; r < nf; r++) {
        double v = z[r];
        for (int c = 0; c < r; c++) v -= L[r + (size_t) c * ld] * z[c];
        z[r] = v / L[r + (size_t) r * ld];
    }
    for (int r = nf - 1; r >= 0; r--) {
        const double *cr = L + (size_t) r * ld;
        double v = z[r];
        for (int q = r + 1; q < nf; q++) v -= cr[q] * z[q];
        z[r] = v / cr[r];
    }
}

/* Hx = Z'(Z x) - w (w'x) / c + ridge x for x supported on F (O(ns |F| + ns M)). */
static void h_times(const hcols *hc, const int *F, int nf, const double *x, double *zx,
                    double *Hx)
{
    int ns = hc->ns, M = hc->M, one = 1;
    double d1 = 1.0, d0 = 0.0, wx = 0.0;
    for (int k = 0; k < ns; k++) zx[k] = 0.0;
    for (int l = 0; l < nf; l++) {
        const double *zl = hc->Z + (size_t) F[l] * ns;
        double xl = x[F[l]];
        for (int k = 0; k < ns; k++) zx[k] += zl[k] * xl;
        wx += hc->wv[F[l]] * xl;
    }
    F77_CALL(dgemv)("T", &ns, &M, &d1, hc->Z, &ns, zx, &one, &d0, Hx, &one FCONE);
    for (int m = 0; m < M; m++) Hx[m] += -hc->wv[m] * wx / hc->cw + hc->ridge * x[m];
}

/* Let kernel j into the working set F (position *nf) and the factor; -1 if its H column does not
   fit the cache or H_FF would lose positive definiteness. */
static int qp_enter(hcols *hc, chol_ws *cw, int *F, int *nf, int *inF, int j, double *tmp)
{
    const double *col = hcol(hc, j);
    if (!col || chol_add(cw, F, col, j, tmp) != 0) return -1;
    F[(*nf)++] = j; inF[j] = 1;
    return 0;
}

/* min (1/2) x'Hx + c'x over {x >= 0, sum x = 1}.  Primal active-set method from the best vertex,
   with the Cholesky factor of H_FF updated as kernels enter and leave the working set F.
   diagH: the diagonal of H (ridge included).  x: out.  Returns the number of iterations, or -1
   if the working set outgrew the column cache or lost positive definiteness (x is then the last
   feasible iterate). */
static int simplex_qp(hcols *hc, const double *diagH, const double *c, double *x, int maxit)
{
    const int M = hc->M;
    int *F = (int *) R_alloc(M, sizeof(int)), *inF = (int *) R_alloc(M, sizeof(int));
    int cap = hc->cap;
    chol_ws cw;
    cw.ld = cap; cw.nf = 0;
    cw.L = (double *) R_alloc((size_t) cap * cap, sizeof(double));
    double *u = (double *) R_alloc(cap, sizeof(double));
    double *r = (double *) R_alloc(cap, sizeof(double));
    double *yv = (double *) R_alloc(cap, sizeof(double));
    double *tmp = (double *) R_alloc(cap, sizeof(double));
    double *zx = (double *) R_alloc(hc->ns, sizeof(double));
    double *Hx = (double *) R_alloc(M, sizeof(double));
    double cscale = 0.0;
    for (int m = 0; m < M; m++) {
        x[m] = 0.0; inF[m] = 0;
        if (fabs(c[m]) > cscale) cscale = fabs(c[m]);
        if (diagH[m] > cscale) cscale = diagH[m];
    }
    int j0 = 0;
    for (int m = 1; m < M; m++)
        if (0.5 * diagH[m] + c[m] < 0.5 * diagH[j0] + c[j0]) j0 = m;
    int nf = 0, last = -1;
    if (qp_enter(hc, &cw, F, &nf, inF, j0, tmp) != 0) return -1;
    x[j0] = 1.0;
    int it;
    double tcheck = mk_time();
    for (it = 0; it < maxit; it++) {
        mk_interrupt_every(&tcheck, 0.02);
        /* equality-constrained minimiser on F: H_FF y = lam 1 - c_F, 1'y = 1 */
        for (int k = 0; k < nf; k++) { u[k] = 1.0; r[k] = c[F[k]]; }
        chol_solve(&cw, u);
        chol_solve(&cw, r);
        double su = 0.0, sr = 0.0;
        for (int k = 0; k < nf; k++) { su += u[k]; sr += r[k]; }
        double lam = (1.0 + sr) / su;
        int feasible = 1;
        for (int k = 0; k < nf; k++) {
            yv[k] = lam * u[k] - r[k];
            if (yv[k] < 0.0) feasible = 0;
        }
        if (feasible) {
            for (int k = 0; k < nf; k++) x[F[k]] = yv[k];
            /* multipliers of the bounds x_j >= 0 outside F: (Hx + c)_j - lam */
            h_times(hc, F, nf, x, zx, Hx);
            int jin = -1;
            double best = -1e-10 * (cscale + fabs(lam));
            for (int m = 0; m < M; m++) {
                if (inF[m]) continue;
                double mu = Hx[m] + c[m] - lam;
                if (mu < best) { best = mu; jin = m; }
            }
            if (jin < 0) break;   /* KKT point: optimal */
            if (nf >= cap) return -1;
            if (qp_enter(hc, &cw, F, &nf, inF, jin, tmp) != 0) return -1;
            last = jin;
        } else {
            /* move toward y until the first x_j hits zero, drop the blocking indices */
            double t = 1.0;
            int kb = -1;
            for (int k = 0; k < nf; k++)
                if (yv[k] < 0.0) {
                    double xk = x[F[k]], tk = xk / (xk - yv[k]);
                    if (tk < t || kb < 0) { t = tk; kb = k; }
                }
            int jblock = kb >= 0 ? F[kb] : -1;
            for (int k = 0; k < nf; k++) {
                int j = F[k];
                x[j] = x[j] + t * (yv[k] - x[j]);
            }
            for (int k = nf - 1; k >= 0; k--) {   /* from the end: positions stay valid */
                int j = F[k];
                if (k == kb || x[j] <= 1e-15) {
                    x[j] = 0.0; inF[j] = 0;
                    chol_remove(&cw, k);
                    for (int q = k; q < nf - 1; q++) F[q] = F[q + 1];
                    nf--;
                }
            }
            /* the kernel just let in is dropped again at once: its multiplier was negative
               only by rounding (ill-conditioned H_FF); x is optimal to that accuracy, stop
               here rather than cycle */
            if (jblock == last && t <= 1e-12 && nf > 0) break;
            if (nf == 0) {   /* cannot happen in exact arithmetic; restart from the vertex */
                if (qp_enter(hc, &cw, F, &nf, inF, j0, tmp) != 0) return -1;
                x[j0] = 1.0;
            }
        }
    }
    double s = 0.0;
    for (int m = 0; m < M; m++) { if (x[m] < 0.0) x[m] = 0.0; s += x[m]; }
    for (int m = 0; m < M; m++) x[m] /= s;
    return it;
}

/* Q[:, k] = (K_m alpha)_S for the Mw kernels m = W[k] (W NULL: every kernel), alpha signed,
   restricted to its nonzeros sv; kernel columns from the store (pointers into the array when
   dense, computed into a per-thread buffer of one column on the fly). */
static void build_Q(const mk_store *st, const int *W, int Mw, const int *S, int ns,
                    const int *sv, int nsv, const double *al, double *Q, int nthreads)
{
    size_t sc = st->kind == MK_STORE_DENSE ? 0 : (size_t) st->nr;
    double *buf = sc ? (double *) R_alloc((size_t) nthreads * sc, sizeof(double)) : NULL;
#ifdef _OPENMP
#pragma omp parallel num_threads(nthreads)
#endif
    {
        int tid = 0;
#ifdef _OPENMP
        tid = omp_get_thread_num();
#endif
        double *mybuf = buf ? buf + (size_t) tid * sc : NULL;
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
        for (int j = 0; j < Mw; j++) {
            int m = W ? W[j] : j;
            double *q = Q + (size_t) j * ns;
            for (int k = 0; k < ns; k++) {
                const double *col = mk_store_col(st, m, S[k], mybuf);
                double s = 0.0;
                for (int l = 0; l < nsv; l++) s += col[sv[l]] * al[sv[l]];
                q[k] = s;
            }
        }
    }
}

/* The step works on the kernels of the driver's working set (c->wk, Mw of them; every kernel
   when c->wk is NULL): g, dw, cq, xw, sw, diagH, wv are compact (Mw), x and sdir full (M). */
typedef struct {
    double *g, *dw, *cq, *xw, *sw, *x, *sdir, *dt, *diagH, *wv, *tmp, *at, *ab, *db, *al, *cache;
    int *S, *sv, *slot, cap, Mw;
    const int *W;
} hess_ws;

void *mk_sf_hessian_init(mk_sf_ctx *c)
{
    const int n = c->n, M = c->M;
    hess_ws *w = (hess_ws *) R_alloc(1, sizeof(hess_ws));
    w->g = (double *) R_alloc(M, sizeof(double));
    w->dw = (double *) R_alloc(M, sizeof(double));
    w->xw = (double *) R_alloc(M, sizeof(double));
    w->sw = (double *) R_alloc(M, sizeof(double));
    w->cq = (double *) R_alloc(M, sizeof(double));
    w->x = (double *) R_alloc(M, sizeof(double));
    w->sdir = (double *) R_alloc(M, sizeof(double));
    w->dt = (double *) R_alloc(M, sizeof(double));
    w->diagH = (double *) R_alloc(M, sizeof(double));
    w->wv = (double *) R_alloc(M, sizeof(double));
    w->tmp = (double *) R_alloc(n > M ? n : M, sizeof(double));
    w->at = (double *) R_alloc(n, sizeof(double));
    w->ab = (double *) R_alloc(n, sizeof(double));
    w->db = (double *) R_alloc(M, sizeof(double));
    w->al = (double *) R_alloc(n, sizeof(double));
    w->S = (int *) R_alloc(n, sizeof(int));
    w->sv = (int *) R_alloc(n, sizeof(int));
    w->slot = (int *) R_alloc(M, sizeof(int));
    w->cap = M < 1000 ? M : 1000;
    w->cache = (double *) mk_alloc_huge((size_t) M * w->cap * sizeof(double));
    /* dense: Q's columns come from the certificate's pass over the kernels (c->kv), which
       reads each kernel once for both, instead of a second read in build_Q */
    if (c->st->kind == MK_STORE_DENSE && !c->point_cols && !c->hess_gram)
        c->kv = (double *) R_alloc((size_t) n * M, sizeof(double));
    return w;
}

/* Z = L^{-1} [Q, 1] (ns x (M + 1)), Kbar = K(d)_{SS} + ridge = L L' from the driver's base
   kernel (up to 6 ridges, x100 each); NULL when no ridge makes Kbar positive definite, or with
   more than o->hess_free_max free SVs (the model then falls back as without curvature; its
   ns x ns matrix is what mkl_memory() counts, R/memory.R). One ns x ns buffer: Kbar's lower
   triangle is kept in the upper one and its diagonal apart, so a retry restores it. */
static double *hess_gram_dense(mk_sf_ctx *c, const int *W, int M, const int *S, int ns,
                               const int *sv, int nsv, const double *al)
{
    const int n = c->n;
    const double d1 = 1.0;
    if (ns > c->o->hess_free_max) { c->hess_flat++; return NULL; }
    double *Kb2 = (double *) R_alloc((size_t) ns * ns, sizeof(double)), *Kb = Kb2;
    double *dg = (double *) R_alloc(ns, sizeof(double));
    double *cbuf = (double *) R_alloc(n, sizeof(double));
    double *Z = (double *) R_alloc((size_t) ns * (M + 1), sizeof(double));
    for (int k = 0; k < ns; k++) {
        const double *col = c->base_col(c, S[k], cbuf);
        for (int l = k; l < ns; l++) Kb[l + (size_t) k * ns] = col[S[l]];
        if (!c->point_cols) continue;
        /* on the fly: Q's row k from the same cache entry (every kernel's column of S[k]) */
        const double *E = c->point_cols(c, S[k]);
        for (int m = 0; m < M; m++) {
            const double *cm = E + (size_t) (W ? W[m] : m) * n;
            double sq = 0.0;
            for (int l = 0; l < nsv; l++) sq += cm[sv[l]] * al[sv[l]];
            Z[k + (size_t) m * ns] = sq;
        }
    }
    double tr = 0.0;
    for (int k = 0; k < ns; k++) {
        dg[k] = Kb[k + (size_t) k * ns];
        tr += dg[k];
        for (int l = k + 1; l < ns; l++) Kb[k + (size_t) l * ns] = Kb[l + (size_t) k * ns];
    }
    double jit = 1e-10 * tr / ns;
    int info = 1;
    for (int r = 0; r < 6 && info != 0; r++, jit *= 100.0) {   /* up to 6 jitters, x100 each */
        if (r > 0)   /* dpotrf overwrote the lower triangle: back from the upper one */
            for (int k = 0; k < ns; k++)
                for (int l = k + 1; l < ns; l++)
                    Kb2[l + (size_t) k * ns] = Kb2[k + (size_t) l * ns];
        for (int k = 0; k < ns; k++) Kb2[k + (size_t) k * ns] = dg[k] + jit;
        F77_CALL(dpotrf)("L", &ns, Kb2, &ns, &info FCONE);
    }
    if (info != 0) return NULL;
    if (!c->point_cols && c->kv_ok) {   /* Q = (K_m al)_S from the certificate's pass */
        for (int m = 0; m < M; m++) {
            const double *u = c->kv + (size_t) (W ? W[m] : m) * n;
            double *q = Z + (size_t) m * ns;
            for (int k = 0; k < ns; k++) q[k] = u[S[k]];
        }
    } else if (!c->point_cols) {
        double work = (double) M * ns *
            (c->st->kind == MK_STORE_FLY ? (double) n * (c->st->p + 1) : (double) nsv);
        build_Q(c->st, W, M, S, ns, sv, nsv, al, Z, mk_threads_for(c->o->nthreads, work));
    }
    double *z = Z + (size_t) ns * M;
    for (int k = 0; k < ns; k++) z[k] = 1.0;
    int Mp1 = M + 1;
    F77_CALL(dtrsm)("L", "L", "N", "N", &ns, &Mp1, &d1, Kb2, &ns, Z, &ns
                    FCONE FCONE FCONE FCONE);
    return Z;
}

/* The model of J at the current SVM solution: the free (S) and all (sv) support vectors, the
   factor Z of H with its rank-one correction (hc) and diag(H) with the ridge. Without usable
   curvature (J locally linear in d, e.g. at most one free SV) a vanishing ridge alone, so that
   the QP goes to the best vertex (a Frank-Wolfe step) and the line search sets its length.
   Scratch from R_alloc (the caller releases it). */
static void hess_model(mk_sf_ctx *c, hess_ws *w, hcols *hc)
{
    const int n = c->n, M = w->Mw, one = 1;
    const double C = c->C, d1 = 1.0, d0 = 0.0;
    double *a = c->a, *g = w->g, *diagH = w->diagH, *wv = w->wv, *al = w->al;
    int *S = w->S, *sv = w->sv;
    int ns = 0, nsv = 0;
    const double eps = 1e-8 * C;
    for (int i = 0; i < n; i++) {
        al[i] = c->y[i] * a[i];
        if (a[i] > 0.0) sv[nsv++] = i;
        double Ci = c->o->box ? c->o->box[i] : C;   /* case weights: the point's own box */
        if (a[i] > eps && a[i] < Ci - eps) S[ns++] = i;
    }
    hc->M = M; hc->cap = w->cap; hc->ncached = 0; hc->cache = w->cache; hc->slot = w->slot;
    for (int m = 0; m < M; m++) w->slot[m] = -1;
    int ok = 0;
    if (ns > 0) {
        double *Z = NULL;
        int zr = ns;   /* rows of Z */
        if (c->hess_gram) Z = c->hess_gram(c, S, ns, al, &zr);   /* low rank: the factors */
        else Z = hess_gram_dense(c, w->W, M, S, ns, sv, nsv, al);
        if (Z) {
            double *z = Z + (size_t) zr * M;
            double cw = 0.0;
            for (int k = 0; k < zr; k++) cw += z[k] * z[k];
            F77_CALL(dgemv)("T", &zr, &M, &d1, Z, &zr, z, &one, &d0, wv, &one FCONE);
            double md = 0.0, mz = 0.0;
            for (int m = 0; m < M; m++) {
                const double *zm = Z + (size_t) m * zr;
                double s = 0.0;
                for (int k = 0; k < zr; k++) s += zm[k] * zm[k];
                diagH[m] = s - wv[m] * wv[m] / cw;
                md += diagH[m]; mz += s;
            }
            md /= M; mz /= M;
            /* with a single free SV, Abar = 0 and H vanishes up to rounding */
            if (md > 1e-10 * mz) {
                hc->Z = Z; hc->wv = wv; hc->cw = cw; hc->ridge = 1e-5 * md;
                for (int m = 0; m < M; m++) diagH[m] += hc->ridge;
                ok = 1;
                ns = zr;
            }
        }
    }
    c->hess_evals++;
    c->kv_ok = 0;   /* the line search moves alpha */
    if (!ok) {
        double gs = 0.0;
        for (int m = 0; m < M; m++) if (fabs(g[m]) > gs) gs = fabs(g[m]);
        gs *= 1e-10;
        double *Z = (double *) R_alloc(M + 1, sizeof(double));
        memset(Z, 0, (M + 1) * sizeof(double));
        memset(wv, 0, M * sizeof(double));
        hc->Z = Z; hc->wv = wv; hc->cw = 1.0; hc->ridge = gs > 0.0 ? gs : 1.0;
        ns = 1;
        for (int m = 0; m < M; m++) diagH[m] = hc->ridge;
    }
    hc->ns = ns;
}

/* The QP step s = x - d of the model (w->sdir), or the Frank-Wolfe vertex when the QP failed
   before any feasible point. Returns the predicted decrease -(g's + s'Hs/2); *qit: the QP's
   iterations (-1: it failed). */
static double hess_direction(mk_sf_ctx *c, hess_ws *w, hcols *hc, int *qit)
{
    const int M = w->Mw, one = 1;
    const double d1 = 1.0, d0 = 0.0;
    double *d = w->dw, *g = w->g, *cq = w->cq, *x = w->xw, *sdir = w->sw, *tmp = w->tmp;
    const double *wv = hc->wv;
    int ns = hc->ns;
    /* c = g - H d, H d = Z'(Z d) - w (w'd)/cw + ridge d */
    F77_CALL(dgemv)("N", &ns, &M, &d1, hc->Z, &ns, d, &one, &d0, tmp, &one FCONE);
    F77_CALL(dgemv)("T", &ns, &M, &d1, hc->Z, &ns, tmp, &one, &d0, cq, &one FCONE);
    double wd = 0.0;
    for (int m = 0; m < M; m++) wd += wv[m] * d[m];
    for (int m = 0; m < M; m++)
        cq[m] = g[m] - (cq[m] - wv[m] * wd / hc->cw + hc->ridge * d[m]);
    *qit = simplex_qp(hc, w->diagH, cq, x, 10 * M + 100);
    if (*qit < 0 && c->o->verbose) Rprintf("HessianMKL: QP working set exceeded the cache\n");
    double sx = 0.0;
    int finite = 1;
    for (int m = 0; m < M; m++) { if (!R_FINITE(x[m])) finite = 0; sx += x[m]; }
    if (!finite || !(sx > 0.0)) {
        int jfw = 0;
        for (int m = 1; m < M; m++) if (g[m] < g[jfw]) jfw = m;
        for (int m = 0; m < M; m++) x[m] = 0.0;
        x[jfw] = 1.0;
    }
    double gs = 0.0, ws = 0.0, ss = 0.0;
    for (int m = 0; m < M; m++) {
        double s = x[m] - d[m];
        sdir[m] = s; gs += g[m] * s; ws += wv[m] * s; ss += s * s;
    }
    F77_CALL(dgemv)("N", &ns, &M, &d1, hc->Z, &ns, sdir, &one, &d0, tmp, &one FCONE);
    double zs = 0.0;
    for (int k = 0; k < ns; k++) zs += tmp[k] * tmp[k];
    double sHs = zs - ws * ws / hc->cw + hc->ridge * ss;
    return -(gs + 0.5 * sHs);
}

/* One Newton step: the Hessian at the current SVM solution, the QP for the step s = x - d,
   backtracking along s on the line kernel K(d) + t K_s, K_s = sum_m s_m K_m. */
int mk_sf_hessian_step(mk_sf_ctx *c, void *vws, int it, const double *v)
{
    hess_ws *w = (hess_ws *) vws;
    const int n = c->n, M = c->M;
    double *d = c->d, *a = c->a, *x = w->x, *sdir = w->sdir, *dt = w->dt;
    (void) it;

    double tdir = mk_time();
    const void *vmax = vmaxget();   /* scratch of this step is released at its end */
    /* the working set's kernels (every kernel without one); the others keep d_m = 0 */
    w->W = c->wk;
    w->Mw = c->wk ? c->nwk : M;
    for (int k = 0; k < w->Mw; k++) {
        int m = w->W ? w->W[k] : k;
        w->g[k] = -0.5 * v[m];
        w->dw[k] = d[m];
    }
    hcols hc;
    hess_model(c, w, &hc);
    int qit = 0;
    double pred = hess_direction(c, w, &hc, &qit);
    int ns = hc.ns;
    if (w->W) {
        memset(x, 0, (size_t) M * sizeof(double));
        memset(sdir, 0, (size_t) M * sizeof(double));
    }
    for (int k = 0; k < w->Mw; k++) {
        int m = w->W ? w->W[k] : k;
        x[m] = w->xw[k];
        sdir[m] = w->sw[k];
    }
    c->t_dir += mk_time() - tdir;
    vmaxset(vmax);
    /* A predicted decrease below newton_tol * J (the reference's stopping test) only says that
       the quadratic model sees little progress; the certificate may still be far from tol
       (the model's curvature can hide a kernel that should enter). The step is tried all the
       same, and a failure to decrease J is then reported as the decrement limit. */
    int small = !(pred >= c->o->newton_tol * fabs(c->J));

    /* Backtracking along s: t = 1, 1/2, 1/4, ... until J decreases (the reference rule,
       line_search = 0), or (line_search = 1) continue halving while J keeps decreasing and
       keep the best of the sequence. Trials on the line kernel K(d) + t K_s. */
    c->dir_combine(c, sdir);
    double t = 1.0, bt = 0.0, Jt, Jb = c->J, bb = 0.0, tb = 0.0;
    int acc = 0, last_best = 0;
    for (int k = 0; k < 12; k++, t *= 0.5) {
        double sm = 0.0;
        for (int m = 0; m < M; m++) {
            double xm = d[m] + t * sdir[m];
            if (xm < 1e-14 || (t == 1.0 && x[m] == 0.0)) xm = 0.0;
            dt[m] = xm; sm += xm;
        }
        for (int m = 0; m < M; m++) dt[m] /= sm;
        memcpy(w->at, a, (size_t) n * sizeof(double));
        Jt = c->J_line(c, t, w->at, &bt);
        last_best = 0;
        if (Jt < Jb) {
            acc = 1; last_best = 1; Jb = Jt; bb = bt; tb = t;
            memcpy(w->db, dt, (size_t) M * sizeof(double));
            memcpy(w->ab, w->at, (size_t) n * sizeof(double));
            if (c->o->line_search == 0) break;
        } else if (acc) break;
    }
    if (c->o->verbose)
        Rprintf("  newton: free SV = %d, QP iterations = %d, predicted = %.4g, "
                "actual = %.4g, t = %g\n", ns, qit, pred, c->J - Jb, tb);
    if (!acc) return small ? MK_SF_DECREMENT : MK_SF_STALLED;
    if (last_best) c->base_take_line(c);
    else c->base_move(c, tb);
    memcpy(d, w->db, (size_t) M * sizeof(double));
    memcpy(a, w->ab, (size_t) n * sizeof(double));
    c->b = bb; c->J = Jb;
    return MK_SF_MOVED;
}
