/* SpicyMKL (Suzuki & Tomioka 2009): dual augmented Lagrangian / proximal minimisation for
 * block 1-norm and elastic-net multiple kernel learning.
 *
 * Problem (P):  minimise_{alpha, b}  sum_i loss(y_i, z_i) + sum_m psi(||alpha_m||_{K_m}),
 *               z = sum_m K_m alpha_m + b 1,   psi(x) = C1 x + (C2 / 2) x^2.
 * Block 1-norm: C1 = C, C2 = 0. Elastic net: C1 = C (1 - lambda), C2 = C lambda.
 *
 * Outer loop (proximal point):  rho = argmin phi_gamma(rho; alpha, b, aux), then
 *   alpha_m <- prox(alpha_m + gamma rho),  b <- b + gamma_b sum(rho),  aux <- multiplier update.
 * Inner loop: Newton with Armijo backtracking on phi_gamma; only kernels that can be active on the
 * current line segment enter gradient, Hessian and line search (Remark 1 / Sec. 3.4). Kernels whose
 * coefficient block is zero are screened without touching K_m: from a reference point r (with
 * K_m r and ||r||_{K_m} stored, O(MN) memory) and e = rho' - r,
 *   ||rho'||^2_{K_m} = ||r||^2 + 2 (K_m r)'e + ||e||^2_{K_m},
 *   ||e||_{K_m} <= |mean(e)| sqrt(1'K_m 1) + sqrt(lambda_max(P K_m P)) ||e - mean(e)||,
 * with lambda_max(PKP) bounded by min(tr, Frobenius, Gershgorin) computed in the first sweep.
 * The bound is convex in rho', so a kernel whose bound stays below C1 at both ends of a Newton
 * segment is inactive along the whole segment and is not read at all. Lazy screening: kernels
 * outside S are tested on [rho, rho + c D] only for the step c that passes the Armijo test with
 * the kernels of S (a lower bound of phi), and those that fail join S before the test is
 * repeated at the same c; kernels of S found inactive at rho leave S with their exact K_m rho.
 * The Newton matrix sums c_m K_m + c'_m w_m w_m' over active kernels, four kernels per pass over
 * a cache-resident panel of H, threads on column ranges of equal triangle area.
 *
 * Loss-conjugate parts of phi (rho_i = -d loss / d z_i at the optimum):
 *  squared  loss (y - z)^2 / 2:  rho^2 / 2 - y rho
 *  logistic loss log(1 + exp(-y z)):  t log t + (1 - t) log(1 - t),  t = y rho in (0, 1)
 *  hinge: -y rho + max(0, xi - g (1 - y rho))^2 / (2 g) + max(0, zeta - g y rho)^2 / (2 g)
 *         (slack variables xi, zeta of Sec. 3.3, Eqs. 10-12; g = gamma)
 *  epsilon-insensitive: a slack copy s of the fitted values (constraint s = K alpha + b, multiplier
 *         rho) with its own proximal term ||s - s_t||^2 / (2 g); the term of phi is
 *         -min_s [ loss(s) + rho s + (s - s_t)^2 / (2 g) ], whose gradient is -prox(s_t - g rho) and
 *         whose Hessian is g * prox'(.) in {0, g}; s is updated to the prox like xi, zeta above.
 *         This g has its own schedule (start <= 10, multiplied only after short Newton loops):
 *         the smoothed kink at rho = 0 has width 2 eps / g, and with g = gamma -> 1e8 Newton could
 *         no longer resolve it. A small Levenberg-Marquardt term keeps its Newton steps bounded.
 * Newton safeguards: the Hessian is factored with a tiny ridge (Cholesky, or Jacobi-preconditioned
 * CG for n >= cg_threshold, which falls back to the preconditioned gradient when H has no
 * curvature along it, e.g. H = gamma_b 11' at a balanced hinge cold start); logistic systems
 * are diagonally equilibrated first; steps of the box-type dual variables are capped at 1 in
 * the max-norm, logistic steps are truncated per coordinate to stay inside 0 < y rho < 1; a step
 * that would more than double the kernel working set is halved first (trust region on the
 * working set).
 *
 * Stopping: relative duality gap (P - D) / P from a feasible dual point (Sec. 5.1 / spec): clip rho
 * into the loss's box, balance it so that sum(rho) = 0 by shrinking the heavier side, and (block
 * 1-norm) scale it into ||rho||_{K_m} <= C1. D <= P always (weak duality), so the gap is >= 0.
 * Elastic net: D = -f*(-u) - sum_m max(||u||_{K_m} - C1, 0)^2 / (2 C2), the better of u and of u
 * scaled into the C1-ball. Norms of kernels certified below C1 by the bound are not computed.
 */
#define USE_FC_LEN_T
#include "mklearn.h"
#include <R_ext/BLAS.h>
#include <R_ext/Lapack.h>
#include <R_ext/Utils.h>
#include <math.h>
#include <float.h>
#include <string.h>
#ifndef FCONE
#define FCONE
#endif

enum { SP_HINGE = 0, SP_LOGISTIC = 1, SP_SQUARED = 2, SP_EPSILON = 3 };

/* ------------------------------------------------------------------ small kernels */

/* Threads only pay off for at least a few million kernel entries per region: below that the
   fork/join cost (and, on a busy machine, waiting for a descheduled thread) dominates. */
#define SP_PAR(cnt, n) ((cnt) > 1 && (double) (cnt) * (double) (n) * (double) (n) >= 4e6)
/* the same for loops of O(n) work per kernel (dot products, screening bounds) */
#define SP_PARV(nt, cnt, n) ((nt) > 1 && (double) (cnt) * (double) (n) >= 4e5)

#ifdef _OPENMP
#define SP_SIMD _Pragma("omp simd")
#define SP_SIMD_RED(...) _Pragma(SP_STR(omp simd reduction(+:__VA_ARGS__)))
#define SP_STR(x) #x
#else
#define SP_SIMD
#define SP_SIMD_RED(...)
#endif

/* The kernel sweeps below read whole columns (contiguous, vectorisable axpy / dot forms):
   on this kind of hardware that is several times faster than the triangle-only loops of dsymv,
   although it reads twice the entries. Plain C (no BLAS, no R API): safe inside OpenMP regions. */

/* v' A v for a symmetric A */
static double sp_quad(const double *A, int n, const double *v)
{
    double s = 0.0;
    for (int j = 0; j < n; j++) {
        const double *aj = A + (size_t) j * n;
        double t = 0.0;
        SP_SIMD_RED(t)
        for (int i = 0; i < n; i++) t += aj[i] * v[i];
        s += v[j] * t;
    }
    return s;
}

/* y1 = A x1 (and y2 = A x2 if x2 != NULL), one sweep over A */
static void sp_symv2(const double *A, int n, const double *x1, const double *x2,
                     double *y1, double *y2)
{
    for (int i = 0; i < n; i++) y1[i] = 0.0;
    if (x2) {
        for (int i = 0; i < n; i++) y2[i] = 0.0;
        for (int j = 0; j < n; j++) {
            const double *aj = A + (size_t) j * n;
            double a1 = x1[j], a2 = x2[j];
            SP_SIMD
            for (int i = 0; i < n; i++) { y1[i] += aj[i] * a1; y2[i] += aj[i] * a2; }
        }
    } else {
        for (int j = 0; j < n; j++) {
            const double *aj = A + (size_t) j * n;
            double a1 = x1[j];
            SP_SIMD
            for (int i = 0; i < n; i++) y1[i] += aj[i] * a1;
        }
    }
}

/* One sweep over a kernel: v'Av, sqrt(1'A1) and sqrt(min(tr A, ||PAP||_F)) with P the centring
   projection; the last two bound ||c 1 + w||_A <= |c| sqrt(1'A1) + sqrt(lambda_max(PAP)) ||w||
   for w orthogonal to 1 (lambda_max(PAP) <= ||PAP||_F, <= lambda_max(A) <= tr A). */
static void sp_kernel_stats(const double *A, int n, const double *v, double *Av, double *s1,
                            double *lc, double *rs)
{
    double g = 0.0, fr = 0.0, rr = 0.0, tr = 0.0;
    for (int i = 0; i < n; i++) Av[i] = 0.0;
    for (int j = 0; j < n; j++) {
        const double *aj = A + (size_t) j * n;
        double cs = 0.0, f = 0.0, vj = v[j];
        SP_SIMD_RED(cs, f)
        for (int i = 0; i < n; i++) { double a = aj[i]; Av[i] += a * vj; cs += a; f += a * a; }
        g += cs; rr += cs * cs; tr += aj[j]; fr += f;
        rs[j] = cs / n;   /* column (= row) means */
    }
    double pf = fr - 2.0 * rr / n + g * g / ((double) n * n);
    if (pf < 0.0) pf = 0.0;
    pf = sqrt(pf) + 1e-12 * sqrt(fr);   /* ||PAP||_F plus a rounding allowance */
    if (tr < pf) pf = tr;
    /* Gershgorin bound of PAP (tight for the near-diagonal kernels of narrow widths); a second
       pass over the kernel, which is still in cache */
    {
        double gm = g / ((double) n * n), gmax = 0.0;
        for (int j = 0; j < n; j++) {
            const double *aj = A + (size_t) j * n;
            double c = gm - rs[j], t = 0.0;
            SP_SIMD_RED(t)
            for (int i = 0; i < n; i++) t += fabs(aj[i] - rs[i] + c);
            if (t > gmax) gmax = t;
        }
        gmax *= 1.0 + 1e-12;
        if (gmax < pf) pf = gmax;
    }
    *s1 = sqrt(g > 0.0 ? g : 0.0);
    *lc = sqrt(pf > 0.0 ? pf : 0.0);
}

static double sp_dot(int n, const double *a, const double *b)
{
    double s = 0.0;
    for (int i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

/* Upper bound of ||x||_{K_m}^2 from a reference point r with known ||r||_{K_m} = nr and
   Kr = K_m r:  ||x||^2 = nr^2 + 2 Kr'e + ||e||_K^2 (e = x - r) with the cross term exact and
   ||e||_K <= |mean(e)| s1 + lc ||e - mean(e)||. Convex in x, so a bound below C^2 at both ends
   of a segment holds on the whole segment. */
static double sp_ub2(int n, const double *x, const double *r, const double *Kr, double nr,
                     double s1, double lc)
{
    double mu = 0.0, ss = 0.0, cr = 0.0;
    SP_SIMD_RED(mu, cr)
    for (int i = 0; i < n; i++) { double e = x[i] - r[i]; mu += e; cr += Kr[i] * e; }
    mu /= n;
    SP_SIMD_RED(ss)
    for (int i = 0; i < n; i++) { double d = x[i] - r[i] - mu; ss += d * d; }
    double be = fabs(mu) * s1 + lc * sqrt(ss);
    double v = nr * nr + 2.0 * cr + be * be;
    return v > 0.0 ? v : 0.0;
}

/* ------------------------------------------------------------------ losses */

static double sp_loss_value(int loss, int n, const double *y, const double *z, double eps)
{
    double s = 0.0;
    for (int i = 0; i < n; i++) {
        double v;
        switch (loss) {
        case SP_HINGE: v = 1.0 - y[i] * z[i]; s += v > 0.0 ? v : 0.0; break;
        case SP_LOGISTIC: v = -y[i] * z[i];
            s += (v > 0.0 ? v : 0.0) + log1p(exp(-fabs(v))); break;
        case SP_SQUARED: v = y[i] - z[i]; s += 0.5 * v * v; break;
        default: v = fabs(y[i] - z[i]) - eps; s += v > 0.0 ? v : 0.0; break;
        }
    }
    return s;
}

/* prox of g * max(|s - y| - eps, 0) at w; *d = derivative (0 or 1). */
static double sp_prox_eps(double w, double y, double eps, double g, double *d)
{
    double r = w - y, ar = fabs(r), sg = r >= 0.0 ? 1.0 : -1.0;
    if (ar <= eps) { *d = 1.0; return w; }
    if (ar <= eps + g) { *d = 0.0; return y + sg * eps; }
    *d = 1.0;
    return w - sg * g;
}

/* Loss part of phi at rho; grad/hess (diagonal) optional. aux: hinge xi[0..n-1], zeta[n..2n-1];
   epsilon s[0..n-1]. Returns +Inf outside the domain (logistic). */
static double sp_phi_loss(int loss, int n, const double *y, const double *rho, const double *aux,
                          double g, double eps, double *grad, double *hess)
{
    double s = 0.0;
    for (int i = 0; i < n; i++) {
        double r = rho[i];
        switch (loss) {
        case SP_HINGE: {
            double t = y[i] * r;
            double p = aux[i] - g * (1.0 - t), q = aux[n + i] - g * t;
            s += -t;
            if (p > 0.0) s += p * p / (2.0 * g); else p = 0.0;
            if (q > 0.0) s += q * q / (2.0 * g); else q = 0.0;
            if (grad) grad[i] = y[i] * (p - q - 1.0);
            if (hess) hess[i] = (p > 0.0 ? g : 0.0) + (q > 0.0 ? g : 0.0);
            break;
        }
        case SP_LOGISTIC: {
            double t = y[i] * r;
            if (!(t > 0.0 && t < 1.0)) return R_PosInf;
            s += t * log(t) + (1.0 - t) * log1p(-t);
            if (grad) grad[i] = y[i] * (log(t) - log1p(-t));
            if (hess) hess[i] = 1.0 / (t * (1.0 - t));
            break;
        }
        case SP_SQUARED:
            s += 0.5 * r * r - y[i] * r;
            if (grad) grad[i] = r - y[i];
            if (hess) hess[i] = 1.0;
            break;
        default: {
            double d, st = aux[i];
            double p = sp_prox_eps(st - g * r, y[i], eps, g, &d);
            double l = fabs(p - y[i]) - eps;
            if (l < 0.0) l = 0.0;
            s -= l + r * p + (p - st) * (p - st) / (2.0 * g);
            if (grad) grad[i] = -p;
            if (hess) hess[i] = g * d;
            break;
        }
        }
    }
    return s;
}

/* multiplier (slack) update at the inner solution */
static void sp_update_aux(int loss, int n, const double *y, const double *rho, double *aux,
                          double g, double eps)
{
    if (loss == SP_HINGE) {
        for (int i = 0; i < n; i++) {
            double t = y[i] * rho[i];
            double p = aux[i] - g * (1.0 - t), q = aux[n + i] - g * t;
            aux[i] = p > 0.0 ? p : 0.0;
            aux[n + i] = q > 0.0 ? q : 0.0;
        }
    } else if (loss == SP_EPSILON) {
        for (int i = 0; i < n; i++) {
            double d;
            aux[i] = sp_prox_eps(aux[i] - g * rho[i], y[i], eps, g, &d);
        }
    }
}

/* -f*(-u) for a feasible u (0 log 0 = 0). */
static double sp_neg_conj(int loss, int n, const double *y, const double *u, double eps)
{
    double s = 0.0;
    for (int i = 0; i < n; i++) {
        switch (loss) {
        case SP_HINGE: s += y[i] * u[i]; break;
        case SP_LOGISTIC: {
            double t = y[i] * u[i];
            if (t > 0.0) s -= t * log(t);
            if (t < 1.0) s -= (1.0 - t) * log1p(-t);
            break;
        }
        case SP_SQUARED: s += y[i] * u[i] - 0.5 * u[i] * u[i]; break;
        default: s += y[i] * u[i] - eps * fabs(u[i]); break;
        }
    }
    return s;
}

/* Make u satisfy the loss box and sum(u) = 0 (in place). */
static void sp_dual_project(int loss, int n, const double *y, double *u)
{
    if (loss == SP_SQUARED) {
        double m = 0.0;
        for (int i = 0; i < n; i++) m += u[i];
        m /= n;
        for (int i = 0; i < n; i++) u[i] -= m;
        return;
    }
    for (int i = 0; i < n; i++) {
        if (loss == SP_EPSILON) {
            if (u[i] > 1.0) u[i] = 1.0;
            if (u[i] < -1.0) u[i] = -1.0;
        } else {
            double t = y[i] * u[i];
            if (t < 0.0) t = 0.0;
            if (t > 1.0) t = 1.0;
            u[i] = y[i] * t;
        }
    }
    double P = 0.0, Q = 0.0;
    for (int i = 0; i < n; i++) { if (u[i] > 0.0) P += u[i]; else Q -= u[i]; }
    if (P > Q) {
        double f = P > 0.0 ? Q / P : 0.0;
        for (int i = 0; i < n; i++) if (u[i] > 0.0) u[i] *= f;
    } else if (Q > P) {
        double f = Q > 0.0 ? P / Q : 0.0;
        for (int i = 0; i < n; i++) if (u[i] < 0.0) u[i] *= f;
    }
}

/* ------------------------------------------------------------------ solver state */

typedef struct {
    const double *K; int n, M; const double *y;
    int loss; double C1, C2, eps;
    int nt;
    size_t nn;
    /* per-kernel */
    int *inS;      /* kernel in the working set S (exact products maintained) */
    int *anz;      /* alpha_m != 0 */
    double *Ka;    /* n x M: K_m alpha_m     (valid for m in S) */
    double *Kr;    /* n x M: K_m rho         (valid for m in S) */
    double *KD;    /* n x M: K_m Delta       (scratch for m in S) */
    double *REF;   /* n x M: reference points for the screening bound */
    double *nref;  /* ||REF_m||_{K_m}; for m outside S, Kr holds K_m REF_m */
    double *sqL;   /* sqrt(lambda_max) bound on the centred subspace (sp_kernel_stats) */
    double *s1;    /* sqrt(1'K_m 1) */
    double *anorm; /* ||alpha_m||_{K_m} */
    double *r;     /* ||alpha_m + gamma rho||_{K_m} at the current rho (m in S) */
    int *list, *flag; /* scratch lists for threaded products */
    long nprod;    /* kernel sweeps performed (products and quadratic forms) */
} sp_state;

/* compute the products listed in list[0..cnt-1]; flag[j] = 1: Kr and KD (fused), 0: KD only,
   2: Kr only. */
static void sp_products(sp_state *S, int cnt, const double *rho, const double *D)
{
    int n = S->n;
    (void) S->nt;
#ifdef _OPENMP
#pragma omp parallel for num_threads(S->nt) schedule(dynamic, 1) if (S->nt > 1 && SP_PAR(cnt, n))
#endif
    for (int j = 0; j < cnt; j++) {
        int m = S->list[j];
        const double *Km = S->K + (size_t) m * S->nn;
        double *kr = S->Kr + (size_t) m * n, *kd = S->KD + (size_t) m * n;
        if (S->flag[j] == 1) sp_symv2(Km, n, rho, D, kr, kd);
        else if (S->flag[j] == 0) sp_symv2(Km, n, D, NULL, kd, NULL);
        else sp_symv2(Km, n, rho, NULL, kr, NULL);
    }
    S->nprod += cnt;
}

/* r_m and active flags for m in S at the current rho */
static void sp_norms(sp_state *S, const double *alpha, const double *rho, double gamma)
{
    int n = S->n, nt = S->nt;
    (void) nt;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static) if (SP_PARV(nt, S->M, n))
#endif
    for (int m = 0; m < S->M; m++) {
        if (!S->inS[m]) continue;
        const double *ka = S->Ka + (size_t) m * n, *kr = S->Kr + (size_t) m * n;
        double r2 = gamma * gamma * sp_dot(n, rho, kr);
        if (S->anz[m]) {
            r2 += S->anorm[m] * S->anorm[m] + 2.0 * gamma * sp_dot(n, rho, ka);
            (void) alpha;
        }
        S->r[m] = r2 > 0.0 ? sqrt(r2) : 0.0;
    }
}

/* ------------------------------------------------------------------ Newton system */

/* Columns j0 <= j < j1 of the upper triangle of
     H = gb 11' + diag(hl) + sum_a c1[a] K_{m_a} + c2[a] w_a w_a'   (w_a = KD column of m_a).
   Kernels are taken four at a time, so that each H entry is loaded and stored once per four
   kernel entries, and the columns are cut into panels that stay in cache while every kernel
   streams through them. Plain C: safe in OpenMP regions. */
static void sp_hess_cols(const sp_state *S, int na, const int *act, const double *c1,
                         const double *c2, double gb, const double *hl, double *H, int j0, int j1)
{
    int n = S->n;
    const int panel = 48;
    for (int jb = j0; jb < j1; jb += panel) {
        int je = jb + panel < j1 ? jb + panel : j1;
        for (int j = jb; j < je; j++) {
            double *hj = H + (size_t) j * n;
            for (int i = 0; i <= j; i++) hj[i] = gb;
            hj[j] += hl[j];
        }
        int a = 0;
        for (; a + 4 <= na; a += 4) {
            const double *k0 = S->K + (size_t) act[a] * S->nn, *k1 = S->K + (size_t) act[a + 1] * S->nn,
                *k2 = S->K + (size_t) act[a + 2] * S->nn, *k3 = S->K + (size_t) act[a + 3] * S->nn;
            const double *w0 = S->KD + (size_t) act[a] * n, *w1 = S->KD + (size_t) act[a + 1] * n,
                *w2 = S->KD + (size_t) act[a + 2] * n, *w3 = S->KD + (size_t) act[a + 3] * n;
            double a0 = c1[a], a1 = c1[a + 1], a2 = c1[a + 2], a3 = c1[a + 3];
            for (int j = jb; j < je; j++) {
                double *hj = H + (size_t) j * n;
                const double *p0 = k0 + (size_t) j * n, *p1 = k1 + (size_t) j * n,
                    *p2 = k2 + (size_t) j * n, *p3 = k3 + (size_t) j * n;
                double b0 = c2[a] * w0[j], b1 = c2[a + 1] * w1[j], b2 = c2[a + 2] * w2[j],
                    b3 = c2[a + 3] * w3[j];
                SP_SIMD
                for (int i = 0; i <= j; i++)
                    hj[i] += (a0 * p0[i] + b0 * w0[i]) + (a1 * p1[i] + b1 * w1[i]) +
                        (a2 * p2[i] + b2 * w2[i]) + (a3 * p3[i] + b3 * w3[i]);
            }
        }
        for (; a < na; a++) {
            const double *k0 = S->K + (size_t) act[a] * S->nn, *w0 = S->KD + (size_t) act[a] * n;
            double a0 = c1[a];
            for (int j = jb; j < je; j++) {
                double *hj = H + (size_t) j * n;
                const double *p0 = k0 + (size_t) j * n;
                double b0 = c2[a] * w0[j];
                SP_SIMD
                for (int i = 0; i <= j; i++) hj[i] += a0 * p0[i] + b0 * w0[i];
            }
        }
    }
}

/* The whole upper triangle; threads take column ranges of equal triangle area. */
static void sp_hessian(const sp_state *S, int na, const int *act, const double *c1,
                       const double *c2, double gb, const double *hl, double *H)
{
    int n = S->n, nt = S->nt;
#ifdef _OPENMP
    if (nt > 1 && SP_PAR(na, n)) {
#pragma omp parallel num_threads(nt)
        {
            int t = omp_get_thread_num(), T = omp_get_num_threads();
            int j0 = (int) (n * sqrt((double) t / T)), j1 = (int) (n * sqrt((double) (t + 1) / T));
            if (t == 0) j0 = 0;
            if (t == T - 1) j1 = n;
            if (j1 > j0) sp_hess_cols(S, na, act, c1, c2, gb, hl, H, j0, j1);
        }
        return;
    }
#endif
    (void) nt;
    sp_hess_cols(S, na, act, c1, c2, gb, hl, H, 0, n);
}

/* Solve H d = -g. H is n x n (upper triangle filled); work: n*n + 5n doubles.
   cg: 0 Cholesky, 1 Jacobi-preconditioned CG. Returns 0 on success. */
static int sp_solve(double *H, int n, const double *g, double *d, double *work, int cg,
                    int equil, double gnorm, int *cgit)
{
    int info = 0;
    const int one = 1;
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
        for (int attempt = 0; attempt < 8; attempt++) {
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
    /* PCG with Jacobi preconditioner on the explicit H */
    double *r = work, *z = work + n, *p = work + 2 * n, *q = work + 3 * n, *pre = work + 4 * n;
    const double done = 1.0, dzero = 0.0;
    for (int i = 0; i < n; i++) {
        double h = H[(size_t) i * n + i];
        pre[i] = h > 0.0 ? 1.0 / h : 1.0;
        d[i] = 0.0; r[i] = -g[i]; z[i] = pre[i] * r[i]; p[i] = z[i];
    }
    double eta = gnorm < 0.25 ? sqrt(gnorm) : 0.5;
    if (eta > 1e-2) eta = 1e-2;
    double target = eta * gnorm, rz = sp_dot(n, r, z);
    int it, maxit = n < 1000 ? 2 * n : 2000;
    for (it = 0; it < maxit; it++) {
        F77_CALL(dsymv)("U", &n, &done, H, &n, p, &one, &dzero, q, &one FCONE);
        double pq = sp_dot(n, p, q);
        if (!(pq > 0.0)) {
            /* no curvature along the first (preconditioned steepest-descent) direction: H is
               singular there. Hinge cold start with balanced classes: no slack piece and no
               kernel active yet, H = gamma_b 11' and 1'g = 0, so p'Hp = 0 exactly; returning
               no direction stalled the solver for good. Take that direction instead: the step
               cap and the line search scale it, as the ridge does in the Cholesky branch.
               A later breakdown keeps the iterate reached so far. */
            if (it == 0) { for (int i = 0; i < n; i++) d[i] = p[i]; it = 1; }
            break;
        }
        double a = rz / pq;
        for (int i = 0; i < n; i++) { d[i] += a * p[i]; r[i] -= a * q[i]; }
        if (sqrt(sp_dot(n, r, r)) <= target) { it++; break; }
        for (int i = 0; i < n; i++) z[i] = pre[i] * r[i];
        double rz2 = sp_dot(n, r, z), beta = rz2 / rz;
        rz = rz2;
        for (int i = 0; i < n; i++) p[i] = z[i] + beta * p[i];
    }
    *cgit += it;
    return it == 0 ? 1 : 0;
}

/* ------------------------------------------------------------------ the solver */

typedef struct {
    double tol, inner_tol, gamma0, gammab0, gamma_mult, gamma_max, lm, lm_hinge, step_cap, start_scale, budget, gs_max, gs_newton;
    int maxiter, inner_maxiter, nthreads, verbose, cg, cg_threshold, warm, screen, lazy, dual_ref;
} sp_opts;

typedef struct {
    double primal, dual, gap, sumnorm, gamma, gamma_b;
    int iter, status, n_active, newton, cgit, ls_fail, rejected;
    long nprod;
} sp_result;

/* alpha: n x M (in/out), b, rho (n, in/out), aux (2n, in/out), gam (2, in/out).
   History arrays have length opt->maxiter. Returns 0 converged, 1 iteration limit. */
static int sp_solve_mkl(const double *K, int n, int M, const double *y, int loss,
                        double C1, double C2, double eps, const sp_opts *opt,
                        double *alpha, double *b, double *rho, double *aux, double *gam,
                        double *h_time, double *h_primal, double *h_dual, double *h_gap,
                        int *h_active, int *h_newton, double *norms, sp_result *res)
{
    sp_state S;
    size_t nM = (size_t) n * M;
    double t0 = mk_time();
    S.K = K; S.n = n; S.M = M; S.y = y; S.loss = loss; S.C1 = C1; S.C2 = C2; S.eps = eps;
    S.nt = mk_threads(opt->nthreads); S.nn = (size_t) n * n; S.nprod = 0;
    S.inS = (int *) R_alloc(M, sizeof(int));
    S.anz = (int *) R_alloc(M, sizeof(int));
    S.list = (int *) R_alloc(M, sizeof(int));
    S.flag = (int *) R_alloc(M, sizeof(int));
    S.Ka = (double *) R_alloc(nM, sizeof(double));
    S.Kr = (double *) R_alloc(nM, sizeof(double));
    S.KD = (double *) R_alloc(nM, sizeof(double));
    S.REF = (double *) R_alloc(nM, sizeof(double));
    S.nref = (double *) R_alloc(M, sizeof(double));
    S.sqL = (double *) R_alloc(M, sizeof(double));
    S.s1 = (double *) R_alloc(M, sizeof(double));
    S.anorm = (double *) R_alloc(M, sizeof(double));
    S.r = (double *) R_alloc(M, sizeof(double));
    double *sm = (double *) R_alloc(M, sizeof(double));
    double *H = (double *) R_alloc((size_t) n * n, sizeof(double));
    int use_cg = opt->cg < 0 ? (n >= opt->cg_threshold) : opt->cg;
    /* Cholesky needs a copy of H to factor; CG only vectors */
    double *work = (double *) R_alloc((use_cg ? 0 : (size_t) n * n) + 5 * (size_t) n,
                                      sizeof(double));
    double *g = (double *) R_alloc(n, sizeof(double));
    double *hl = (double *) R_alloc(n, sizeof(double));
    double *D = (double *) R_alloc(n, sizeof(double));
    double *tmp = (double *) R_alloc(n, sizeof(double));
    double *z = (double *) R_alloc(n, sizeof(double));
    double *u = (double *) R_alloc(n, sizeof(double));
    double *Bq = (double *) R_alloc(M, sizeof(double));
    double *Dq = (double *) R_alloc(M, sizeof(double));
    int *act = (int *) R_alloc(M, sizeof(int));
    double *hc1 = (double *) R_alloc(M, sizeof(double));
    double *hc2 = (double *) R_alloc(M, sizeof(double));
    double *ubv = (double *) R_alloc(M, sizeof(double));
    int *stamp = (int *) R_alloc(M, sizeof(int));   /* Newton step at which m left S */
    int stepid = 0;
    for (int m = 0; m < M; m++) stamp[m] = -1;
    double gamma = gam[0], gammab = gam[1];
    const double thr_eps = 1e-10; /* safety margin of the screening test */
    double tm[8] = { 0 }, tq = mk_time();   /* section timers, reported when verbose */
#define SP_TICK(j) do { double t_ = mk_time(); tm[j] += t_ - tq; tq = t_; } while (0)

    memset(S.Ka, 0, sizeof(double) * nM);
    for (int m = 0; m < M; m++) {
        int nz = 0;
        const double *am = alpha + (size_t) m * n;
        for (int i = 0; i < n; i++) if (am[i] != 0.0) { nz = 1; break; }
        S.anz[m] = nz;
        S.inS[m] = 0;
        S.anorm[m] = 0.0;
    }

    /* starting point of rho and the slack variables, if not given */
    if (!opt->warm) {
        for (int i = 0; i < n; i++) {
            switch (loss) {
            case SP_HINGE: case SP_LOGISTIC: rho[i] = 0.5 * y[i]; break;
            default: rho[i] = y[i]; break;
            }
        }
    }
    if (!opt->warm) {
        /* balanced (sum(rho) = 0) and inside the loss's box: a feasible dual point, scaled
           further below so that few kernels are active at the start (Remark 1) */
        double keep[2] = { rho[0], rho[1] };
        sp_dual_project(loss, n, y, rho);
        double nrm = 0.0;
        for (int i = 0; i < n; i++) nrm += fabs(rho[i]);
        if (!(nrm > 0.0)) { rho[0] = keep[0]; rho[1] = keep[1]; }   /* one class only */
    }
    if (loss == SP_LOGISTIC) {
        for (int i = 0; i < n; i++) {
            double t = y[i] * rho[i];
            if (!(t > 1e-8)) t = 1e-8;
            if (!(t < 1.0 - 1e-8)) t = 1.0 - 1e-8;
            rho[i] = y[i] * t;
        }
    }

    /* K_m alpha_m for nonzero blocks, K_m rho0 for them too (fused); norms of rho0 for all */
    {
        int cnt = 0;
        for (int m = 0; m < M; m++) if (S.anz[m]) { S.list[cnt] = m; S.flag[cnt] = 1; cnt++; }
        int nt = S.nt;
        (void) nt;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) if (nt > 1 && SP_PAR(cnt, n))
#endif
        for (int j = 0; j < cnt; j++) {
            int m = S.list[j];
            sp_symv2(K + (size_t) m * S.nn, n, rho, alpha + (size_t) m * n,
                     S.Kr + (size_t) m * n, S.Ka + (size_t) m * n);
        }
        S.nprod += cnt;
        for (int j = 0; j < cnt; j++) {
            int m = S.list[j];
            double a2 = sp_dot(n, alpha + (size_t) m * n, S.Ka + (size_t) m * n);
            S.anorm[m] = a2 > 0.0 ? sqrt(a2) : 0.0;
            S.inS[m] = 1;
        }
        /* norms of rho0 and the screening constants of every kernel: one full sweep */
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt < M ? nt : M) schedule(dynamic, 8) if (nt > 1 && SP_PAR(M, n))
#endif
        for (int m = 0; m < M; m++) {
#ifdef _OPENMP
            double *rs = S.KD + (size_t) omp_get_thread_num() * n;  /* scratch: n per thread */
#else
            double *rs = S.KD;
#endif
            double *kr = S.Kr + (size_t) m * n;
            sp_kernel_stats(K + (size_t) m * S.nn, n, rho, kr, S.s1 + m, S.sqL + m, rs);
            double q = sp_dot(n, rho, kr);
            S.nref[m] = q > 0.0 ? sqrt(q) : 0.0;
        }
        S.nprod += M;
        if (!opt->warm && C1 > 0.0) {
            /* scale the cold start so that only the strongest kernels are active */
            double maxn = 0.0;
            for (int m = 0; m < M; m++) if (S.nref[m] > maxn) maxn = S.nref[m];
            double kap = maxn > 0.0 ? opt->start_scale * C1 / maxn : 1.0;
            if (kap < 1.0) {
                for (int i = 0; i < n; i++) rho[i] *= kap;
                for (int m = 0; m < M; m++) S.nref[m] *= kap;
                for (int m = 0; m < M; m++) {
                    double *kr = S.Kr + (size_t) m * n;
                    for (int i = 0; i < n; i++) kr[i] *= kap;
                }
            }
        }
        for (int m = 0; m < M; m++) memcpy(S.REF + (size_t) m * n, rho, sizeof(double) * n);
        /* zero blocks that are active at rho0 join S */
        for (int m = 0; m < M; m++)   /* K_m rho0 is already in Kr */
            if (!S.anz[m] && (S.nref[m] > C1 * (1.0 - thr_eps) || !opt->screen)) S.inS[m] = 1;
    }
    SP_TICK(0);
    /* z and the slack variables consistent with the starting point */
    for (int i = 0; i < n; i++) z[i] = *b;
    for (int m = 0; m < M; m++) if (S.anz[m]) {
        const double *ka = S.Ka + (size_t) m * n;
        for (int i = 0; i < n; i++) z[i] += ka[i];
    }
    if (!opt->warm) {
        if (loss == SP_HINGE) {
            for (int i = 0; i < n; i++) {
                double v = 1.0 - y[i] * z[i];
                aux[i] = v > 0.0 ? v : 0.0;
                aux[n + i] = v < 0.0 ? -v : 0.0;
            }
        } else if (loss == SP_EPSILON) {
            for (int i = 0; i < n; i++) aux[i] = z[i];
        }
    }

    int status = 1, it, newton_total = 0, cgit = 0, ls_fail = 0, nrejected = 0;
    double gam_s = gam[0] < opt->gs_max ? gam[0] : opt->gs_max;
    double primal = NA_REAL, dual = NA_REAL, gap = NA_REAL;
    for (it = 0; it < opt->maxiter; it++) {
        R_CheckUserInterrupt();
        int nnewton = 0;
        /* proximal parameter of the loss slack variables: the kernel one for the hinge; for the
           epsilon-insensitive loss its own schedule, raised only while the Newton loops stay short:
           its smoothed kink has width 2 eps / gsl and must stay resolvable by Newton's method */
        double gsl = loss == SP_EPSILON ? gam_s : gamma;
        int inner_ok = 0;
        double gnorm0 = 0.0, gnorm_last = 0.0;
        /* ---------------- inner Newton loop: minimise phi over rho ---------------- */
        for (int k = 0; k < opt->inner_maxiter; k++) {
            sp_norms(&S, alpha, rho, gamma);
            double sr = 0.0;
            for (int i = 0; i < n; i++) sr += rho[i];
            double bt = *b + gammab * sr;
            double phi0 = sp_phi_loss(loss, n, y, rho, aux, gsl, eps, g, hl) +
                bt * bt / (2.0 * gammab);
            for (int i = 0; i < n; i++) g[i] += bt;
            int na = 0;
            double thr = gamma * C1, den = 1.0 + gamma * C2;
            for (int m = 0; m < M; m++) {
                if (!S.inS[m] || !(S.r[m] > thr)) continue;
                act[na++] = m;
                double rm = S.r[m];
                phi0 += (rm - thr) * (rm - thr) / (2.0 * gamma * den);
                double s = (rm - thr) / (den * rm);
                const double *ka = S.Ka + (size_t) m * n, *kr = S.Kr + (size_t) m * n;
                for (int i = 0; i < n; i++) g[i] += s * (ka[i] + gamma * kr[i]);
            }
            double gnorm = sqrt(sp_dot(n, g, g));
            if (k == 0) gnorm0 = gnorm;
            gnorm_last = gnorm;
            if (gnorm <= opt->inner_tol * sqrt((double) n)) { inner_ok = 1; break; }
            double lmw = loss == SP_EPSILON ? opt->lm : (loss == SP_HINGE ? opt->lm_hinge : 0.0);
            if (lmw > 0.0) {
                /* piecewise-quadratic loss part: coordinates between the kinks have no curvature
                   of their own; a Levenberg-Marquardt term that vanishes with the gradient keeps
                   the Newton direction bounded without spoiling the local convergence */
                double tau = gsl * lmw * (gnorm / sqrt((double) n));
                if (tau > gsl * lmw) tau = gsl * lmw;
                for (int i = 0; i < n; i++) hl[i] += tau;
            }

            SP_TICK(1);
            /* Hessian: loss diagonal + gamma_b 11' + active kernels (upper triangle) */
            for (int a = 0; a < na; a++) {
                int m = act[a];
                double rm = S.r[m], q = thr / rm;
                hc1[a] = gamma / den * (1.0 - q);
                hc2[a] = q > 0.0 ? gamma / den * q / (rm * rm) : 0.0;
                /* w = K_m v_m (KD is free scratch until the products of this Newton step) */
                double *w = S.KD + (size_t) m * n;
                const double *ka = S.Ka + (size_t) m * n, *kr = S.Kr + (size_t) m * n;
                if (S.anz[m]) for (int i = 0; i < n; i++) w[i] = ka[i] + gamma * kr[i];
                else for (int i = 0; i < n; i++) w[i] = gamma * kr[i];
            }
            sp_hessian(&S, na, act, hc1, hc2, gammab, hl, H);
            SP_TICK(2);
            if (sp_solve(H, n, g, D, work, use_cg, loss == SP_LOGISTIC, gnorm, &cgit) != 0) break;
            SP_TICK(3);
            /* step cap: dual variables of the box-type losses live on a scale of 1; a longer
               step only costs kernel sweeps in the screening and is cut by the line search */
            if (loss != SP_SQUARED) {
                double dmax = 0.0, cap = loss == SP_LOGISTIC ? 1.0 : opt->step_cap;
                for (int i = 0; i < n; i++) if (fabs(D[i]) > dmax) dmax = fabs(D[i]);
                if (loss == SP_LOGISTIC) {
                    /* stay strictly inside 0 < y rho < 1. Coordinates close to the boundary
                       (well-classified points, t ~ 1e-10) would otherwise shrink the whole step
                       to nothing once gamma is large: truncate their own steps to 99.5% of the
                       way to the boundary, and scale the whole step only if that truncated
                       direction is not a descent direction. */
                    double c = 1.0, gt = 0.0;
                    for (int i = 0; i < n; i++) {
                        double t = y[i] * rho[i], dt = y[i] * D[i];
                        if (dt > 0.0 && t + dt >= 1.0) dt = 0.995 * (1.0 - t);
                        if (dt < 0.0 && t + dt <= 0.0) dt = -0.995 * t;
                        tmp[i] = y[i] * dt;
                        gt += g[i] * tmp[i];
                    }
                    if (gt < 0.0) {
                        memcpy(D, tmp, sizeof(double) * n);
                        dmax = 0.0;
                        for (int i = 0; i < n; i++) if (fabs(D[i]) > dmax) dmax = fabs(D[i]);
                    } else {
                        for (int i = 0; i < n; i++) {
                            double t = y[i] * rho[i], dt = y[i] * D[i];
                            if (dt > 0.0 && t + dt >= 1.0) { double cc = 0.995 * (1.0 - t) / dt; if (cc < c) c = cc; }
                            if (dt < 0.0 && t + dt <= 0.0) { double cc = 0.995 * t / (-dt); if (cc < c) c = cc; }
                        }
                    }
                    cap = c * dmax;
                }
                if (dmax > cap) for (int i = 0; i < n; i++) D[i] *= cap / dmax;
            }
            double gd = sp_dot(n, g, D);
            if (!(gd < 0.0)) break;
            nnewton++;

            /* ---- trust region on the kernel working set: shorten the step while it would
               bring more than a budget of new kernels into S (their bound fails) ---- */
            if (opt->budget > 0.0 && opt->screen) {
                int nS = 0;
                for (int m = 0; m < M; m++) nS += S.inS[m];
                double budget = opt->budget * (nS > 16 ? nS : 16);
                for (int tr = 0; tr < 8; tr++) {
                    int nnew = 0;
                    for (int i = 0; i < n; i++) tmp[i] = rho[i] + D[i];
                    for (int m = 0; m < M && nnew <= budget; m++) {
                        if (S.inS[m]) continue;
                        if (sp_ub2(n, tmp, S.REF + (size_t) m * n, S.Kr + (size_t) m * n,
                                   S.nref[m], S.s1[m], S.sqL[m]) > C1 * C1 * (1.0 - thr_eps))
                            nnew++;
                    }
                    if (nnew <= budget) break;
                    for (int i = 0; i < n; i++) D[i] *= 0.5;
                    gd *= 0.5;
                }
            }
            /* ---- screening for the segment [rho, rho + D] ----
               lazy: kernels outside S join only once the line search has found a step c that
               passes the Armijo test with the kernels of S alone (a lower bound of phi, since
               every term is >= 0): the bound is then checked on [rho, rho + c D] only. Steps are
               often cut to a small fraction of D early on, and checking the whole segment brought
               in thousands of kernels that never became active. */
            int lazy = opt->screen && opt->lazy;
            int cnt = 0;
            stepid++;
            for (int i = 0; i < n; i++) tmp[i] = rho[i] + D[i];
            for (int m = 0; m < M; m++) {
                if (S.inS[m]) {
                    if (!S.anz[m]) {
                        /* exact norm at rho is known: refresh the reference point */
                        const double *kr = S.Kr + (size_t) m * n;
                        double q = sp_dot(n, rho, kr);
                        S.nref[m] = q > 0.0 ? sqrt(q) : 0.0;
                        memcpy(S.REF + (size_t) m * n, rho, sizeof(double) * n);
                        /* lazy: a kernel inactive at rho leaves S (its exact K_m rho stays in Kr)
                           and comes back, with K_m D only, if the accepted step needs it */
                        if (lazy ? S.nref[m] * S.nref[m] <= C1 * C1 * (1.0 - thr_eps) :
                            (opt->screen && sp_ub2(n, tmp, rho, kr, S.nref[m], S.s1[m], S.sqL[m]) <=
                             C1 * C1 * (1.0 - thr_eps))) {
                            S.inS[m] = 0;
                            stamp[m] = stepid;
                            continue;
                        }
                    }
                    S.list[cnt] = m; S.flag[cnt] = 0; cnt++;
                } else if (!lazy) {
                    const double *ref = S.REF + (size_t) m * n;
                    double ub = sp_ub2(n, tmp, ref, S.Kr + (size_t) m * n, S.nref[m],
                                       S.s1[m], S.sqL[m]);
                    if (ub > C1 * C1 * (1.0 - thr_eps)) {
                        S.inS[m] = 1;
                        memset(S.Ka + (size_t) m * n, 0, sizeof(double) * n);
                        S.list[cnt] = m; S.flag[cnt] = 1; cnt++;
                    }
                }
            }
            SP_TICK(4);
            sp_products(&S, cnt, rho, D);
            SP_TICK(5);
            for (int j = 0; j < cnt; j++) if (S.flag[j] == 1) {
                int m = S.list[j];
                double q = sp_dot(n, rho, S.Kr + (size_t) m * n);
                S.nref[m] = q > 0.0 ? sqrt(q) : 0.0;
                memcpy(S.REF + (size_t) m * n, rho, sizeof(double) * n);
            }
            sp_norms(&S, alpha, rho, gamma);

            /* ---- line search: r_m(c)^2 = r^2 + 2 c gamma B + c^2 gamma^2 Dq ---- */
#ifdef _OPENMP
#pragma omp parallel for num_threads(S.nt) schedule(static) if (SP_PARV(S.nt, M, n))
#endif
            for (int m = 0; m < M; m++) {
                if (!S.inS[m]) continue;
                const double *ka = S.Ka + (size_t) m * n, *kr = S.Kr + (size_t) m * n,
                    *kd = S.KD + (size_t) m * n;
                double bb = gamma * sp_dot(n, D, kr);
                if (S.anz[m]) bb += sp_dot(n, D, ka);
                Bq[m] = bb;
                Dq[m] = sp_dot(n, D, kd);
            }
            double sd = 0.0;
            for (int i = 0; i < n; i++) sd += D[i];
            double c = 1.0;
            int ok = 0;
            for (int ls = 0; ls < 60; ls++) {
                for (int i = 0; i < n; i++) tmp[i] = rho[i] + c * D[i];
                double bc = *b + gammab * (sr + c * sd);
                double val = sp_phi_loss(loss, n, y, tmp, aux, gsl, eps, NULL, NULL) +
                    bc * bc / (2.0 * gammab);
                for (int m = 0; m < M; m++) {
                    if (!S.inS[m]) continue;
                    double rr = S.r[m] * S.r[m] + 2.0 * c * gamma * Bq[m] +
                        c * c * gamma * gamma * Dq[m];
                    double rc = rr > 0.0 ? sqrt(rr) : 0.0;
                    if (rc > thr) val += (rc - thr) * (rc - thr) / (2.0 * gamma * den);
                }
                if (opt->verbose > 2 && ls < 3)
                    Rprintf("      ls c=%.3e val-phi0=%.6e c*gd=%.6e\n", c, val - phi0, c * gd);
                if (val <= phi0 + 1e-4 * c * gd) {
                    if (lazy) {
                        /* kernels outside S that may be active on [rho, rho + c D] (tmp is the
                           end point; at rho itself they are certified inactive) */
                        int cnew = 0;
#ifdef _OPENMP
#pragma omp parallel for num_threads(S.nt) schedule(static) if (SP_PARV(S.nt, M, n))
#endif
                        for (int m = 0; m < M; m++)
                            ubv[m] = S.inS[m] ? 0.0 :
                                sp_ub2(n, tmp, S.REF + (size_t) m * n, S.Kr + (size_t) m * n,
                                       S.nref[m], S.s1[m], S.sqL[m]);
                        for (int m = 0; m < M; m++) {
                            if (S.inS[m]) continue;
                            if (ubv[m] > C1 * C1 * (1.0 - thr_eps)) {
                                S.inS[m] = 1;
                                memset(S.Ka + (size_t) m * n, 0, sizeof(double) * n);
                                /* K_m rho is still exact if m left S in this Newton step */
                                S.list[cnew] = m; S.flag[cnew] = stamp[m] == stepid ? 0 : 1; cnew++;
                            }
                        }
                        if (cnew > 0) {
                            SP_TICK(6);
                            sp_products(&S, cnew, rho, D);
                            SP_TICK(5);
                            for (int j = 0; j < cnew; j++) {
                                int m = S.list[j];
                                const double *kr = S.Kr + (size_t) m * n, *kd = S.KD + (size_t) m * n;
                                double q = sp_dot(n, rho, kr);
                                S.nref[m] = q > 0.0 ? sqrt(q) : 0.0;
                                memcpy(S.REF + (size_t) m * n, rho, sizeof(double) * n);
                                S.r[m] = gamma * S.nref[m];
                                Bq[m] = gamma * sp_dot(n, D, kr);
                                Dq[m] = sp_dot(n, D, kd);
                            }
                            cnt += cnew;
                            continue;   /* the same c again, now with every kernel it needs */
                        }
                    }
                    ok = 1; break;
                }
                c *= 0.5;
            }
            if (opt->verbose > 1) {
                int need = 0;
                for (int m = 0; m < M; m++) {
                    if (!S.inS[m]) continue;
                    if (S.anz[m]) { need++; continue; }
                    const double *kr = S.Kr + (size_t) m * n, *kd = S.KD + (size_t) m * n;
                    double a0 = sp_dot(n, rho, kr), a1 = a0 + 2.0 * sp_dot(n, D, kr) + sp_dot(n, D, kd);
                    if (a0 > C1 * C1 || a1 > C1 * C1) need++;
                }
                Rprintf("   newton %d: phi %.10g |g| %.3e gd %.3e step %.3e |S| %d needed %d active %d\n",
                        k, phi0, gnorm, gd, ok ? c : 0.0, cnt, need, na);
            }
            SP_TICK(6);
            if (!ok) { ls_fail++; break; }
            for (int i = 0; i < n; i++) rho[i] += c * D[i];
            for (int m = 0; m < M; m++) {
                if (!S.inS[m]) continue;
                double *kr = S.Kr + (size_t) m * n;
                const double *kd = S.KD + (size_t) m * n;
                for (int i = 0; i < n; i++) kr[i] += c * kd[i];
            }
        }
        newton_total += nnewton;
        SP_TICK(1);

        /* ---------------- outer updates (Eqs. 5, 6, 10, 11) ---------------- */
        /* The proximal step is taken even when the inner loop stopped early (iteration limit or
           a failed line search): rejecting such steps was tried and made the semismooth hinge
           case much worse. Inner loops that end without meeting inner_tol are counted. */
        if (!inner_ok && !(gnorm_last <= 1e-3 * gnorm0)) nrejected++;
        sp_norms(&S, alpha, rho, gamma);
        double sr = 0.0;
        for (int i = 0; i < n; i++) sr += rho[i];
        double thr = gamma * C1, den = 1.0 + gamma * C2;
        for (int m = 0; m < M; m++) {
            if (!S.inS[m]) continue;
            double *am = alpha + (size_t) m * n, *ka = S.Ka + (size_t) m * n;
            const double *kr = S.Kr + (size_t) m * n;
            double rm = S.r[m];
            if (rm > thr) {
                double s = (rm - thr) / (den * rm);
                for (int i = 0; i < n; i++) {
                    am[i] = s * (am[i] + gamma * rho[i]);
                    ka[i] = s * (ka[i] + gamma * kr[i]);
                }
                S.anorm[m] = s * rm;
                S.anz[m] = 1;
            } else {
                if (S.anz[m]) {
                    memset(am, 0, sizeof(double) * n);
                    memset(ka, 0, sizeof(double) * n);
                }
                S.anz[m] = 0;
                S.anorm[m] = 0.0;
                /* norm of rho is exact here: refresh the reference point */
                double q = sp_dot(n, rho, kr);
                S.nref[m] = q > 0.0 ? sqrt(q) : 0.0;
                memcpy(S.REF + (size_t) m * n, rho, sizeof(double) * n);
            }
        }
        *b += gammab * sr;
        sp_update_aux(loss, n, y, rho, aux, gsl, eps);
        int nactive = 0;
        double pen = 0.0, sumnorm = 0.0;
        for (int i = 0; i < n; i++) z[i] = *b;
        for (int m = 0; m < M; m++) {
            sm[m] = 0.0;
            if (!S.anz[m]) continue;
            const double *ka = S.Ka + (size_t) m * n;
            for (int i = 0; i < n; i++) z[i] += ka[i];
            nactive++;
            pen += C1 * S.anorm[m] + 0.5 * C2 * S.anorm[m] * S.anorm[m];
            sumnorm += S.anorm[m];
        }
        primal = sp_loss_value(loss, n, y, z, eps) + pen;

        /* ---------------- dual value at a feasible point ---------------- */
        memcpy(u, rho, sizeof(double) * n);
        sp_dual_project(loss, n, y, u);
        {
            int cnt = 0;
            for (int m = 0; m < M; m++) {
                if (S.inS[m]) { S.list[cnt++] = m; continue; }
                double ub = sp_ub2(n, u, S.REF + (size_t) m * n, S.Kr + (size_t) m * n,
                                   S.nref[m], S.s1[m], S.sqL[m]);
                if (ub > C1 * C1 * (1.0 - thr_eps)) S.list[cnt++] = m;
                else sm[m] = -1.0; /* certified <= C1 */
            }
            int nt = S.nt;
            (void) nt;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, 4) if (nt > 1 && SP_PAR(cnt, n))
#endif
            for (int j = 0; j < cnt; j++) {
                int m = S.list[j];
                double q;
                if (S.inS[m] || !opt->dual_ref) q = sp_quad(K + (size_t) m * S.nn, n, u);
                else {
                    /* outside S: the same sweep gives K_m u, which becomes the reference point
                       of the screening bound (u is close to the next iterates) */
                    double *kr = S.Kr + (size_t) m * n;
                    sp_symv2(K + (size_t) m * S.nn, n, u, NULL, kr, NULL);
                    q = sp_dot(n, u, kr);
                    S.nref[m] = q > 0.0 ? sqrt(q) : 0.0;
                    memcpy(S.REF + (size_t) m * n, u, sizeof(double) * n);
                }
                sm[m] = q > 0.0 ? sqrt(q) : 0.0;
            }
            S.nprod += cnt;
            if (opt->verbose > 1) Rprintf("   dual: %d kernel sweeps\n", cnt);
            double maxn = 0.0;
            for (int m = 0; m < M; m++) if (sm[m] > maxn) maxn = sm[m];
            double kap = (C1 > 0.0 && maxn > C1) ? C1 / maxn : 1.0;
            if (C2 <= 0.0) {
                for (int i = 0; i < n; i++) u[i] *= kap;
                dual = sp_neg_conj(loss, n, y, u, eps);
            } else {
                double d1 = sp_neg_conj(loss, n, y, u, eps);
                for (int m = 0; m < M; m++) if (sm[m] > C1) {
                    double e = sm[m] - C1;
                    d1 -= e * e / (2.0 * C2);
                }
                dual = d1;
                if (kap < 1.0) {
                    for (int i = 0; i < n; i++) tmp[i] = kap * u[i];
                    double d2 = sp_neg_conj(loss, n, y, tmp, eps);
                    if (d2 > dual) dual = d2;
                }
            }
        }
        /* D <= P holds exactly; when both agree to the last bits the rounded difference can come
           out as -1e-16: a difference below the floating-point resolution of the objectives is
           reported as a zero gap (anything larger stays as computed, so a negative gap would
           still expose an infeasible dual point) */
        {
            double diff = primal - dual, scale = fabs(primal) > fabs(dual) ? fabs(primal) : fabs(dual);
            if (diff < 0.0 && -diff <= 64.0 * DBL_EPSILON * scale) diff = 0.0;
            gap = primal > 0.0 ? diff / primal : (diff == 0.0 ? 0.0 : R_PosInf);
        }
        SP_TICK(7);
        h_time[it] = mk_time() - t0;
        h_primal[it] = primal; h_dual[it] = dual; h_gap[it] = gap;
        h_active[it] = nactive; h_newton[it] = nnewton;
        res->sumnorm = sumnorm;
        res->n_active = nactive;
        if (opt->verbose)
            Rprintf("spicy %3d: primal %.6g dual %.6g gap %.3e active %d newton %d |S| sweeps %ld gamma %.1e\n",
                    it + 1, primal, dual, gap, nactive, nnewton, S.nprod, gamma);
        if (gap <= opt->tol) { status = 0; it++; break; }
        gamma *= opt->gamma_mult; if (gamma > opt->gamma_max) gamma = opt->gamma_max;
        gammab *= opt->gamma_mult; if (gammab > opt->gamma_max) gammab = opt->gamma_max;
        if (nnewton <= opt->gs_newton) {
            gam_s *= opt->gamma_mult; if (gam_s > opt->gamma_max) gam_s = opt->gamma_max;
        }
    }
    if (opt->verbose)
        Rprintf("spicy times: init %.3f grad %.3f hess %.3f solve %.3f screen %.3f prod %.3f ls %.3f outer %.3f\n",
                tm[0], tm[1], tm[2], tm[3], tm[4], tm[5], tm[6], tm[7]);
#undef SP_TICK
    gam[0] = gamma; gam[1] = gammab;
    for (int m = 0; m < M; m++) norms[m] = S.anz[m] ? S.anorm[m] : 0.0;
    res->primal = primal; res->dual = dual; res->gap = gap; res->iter = it; res->status = status;
    res->newton = newton_total; res->cgit = cgit; res->ls_fail = ls_fail; res->nprod = S.nprod;
    res->rejected = nrejected;
    res->gamma = gamma; res->gamma_b = gammab;
    return status;
}

/* ------------------------------------------------------------------ .Call wrapper */

/* mkc_spicy(K, y, iopt, dopt, alpha0, b0, rho0, aux0, gamma0)
   iopt: loss, maxiter, inner_maxiter, nthreads, verbose, cg (-1 auto), cg_threshold,
         screen (0: every kernel in the working set, no screening; for testing),
         lazy (1: kernels outside the working set are screened on the accepted step only)
   dopt: C1, C2, eps, tol, inner_tol, gamma0, gammab0, gamma_mult, gamma_max
   alpha0 (n*M or NULL), b0 (1 or NULL), rho0/aux0/gamma0: NULL for a cold start. */
SEXP mkc_spicy(SEXP K, SEXP y, SEXP iopt, SEXP dopt, SEXP alpha0, SEXP b0, SEXP rho0,
               SEXP aux0, SEXP gamma0)
{
    int nprot = 0;
    if (!isReal(K)) error("K must be a double array");
    if (!isReal(y)) error("y must be a double vector");
    if (!isInteger(iopt) || LENGTH(iopt) != 9) error("iopt must be an integer vector of length 9");
    if (!isReal(dopt) || LENGTH(dopt) != 9) error("dopt must be a double vector of length 9");
    SEXP dim = getAttrib(K, R_DimSymbol);
    int n = LENGTH(y);
    if (n < 2) error("need at least two observations");
    int M;
    if (LENGTH(dim) == 3) {
        if (INTEGER(dim)[0] != n || INTEGER(dim)[1] != n) error("K must be n x n x M");
        M = INTEGER(dim)[2];
    } else if (LENGTH(dim) == 2) {
        if (INTEGER(dim)[0] != n || INTEGER(dim)[1] != n) error("K must be n x n x M");
        M = 1;
    } else error("K must be an n x n x M array");
    if (M < 1) error("need at least one kernel");
    const int *io = INTEGER(iopt);
    const double *dp = REAL(dopt);
    int loss = io[0];
    if (loss < 0 || loss > 3) error("unknown loss code");
    sp_opts opt;
    opt.maxiter = io[1] > 0 ? io[1] : 1;
    opt.inner_maxiter = io[2] > 0 ? io[2] : 1;
    opt.nthreads = io[3];
    opt.verbose = io[4];
    opt.cg = io[5];
    opt.cg_threshold = io[6];
    opt.screen = io[7];
    opt.lazy = io[8];
    opt.dual_ref = 1;       /* the dual sweep also refreshes the screening reference point of
                               kernels outside S (K_m u instead of u'K_m u: same reads) */
    double C1 = dp[0], C2 = dp[1], eps = dp[2];
    if (!(C1 >= 0.0) || !(C2 >= 0.0) || !(C1 + C2 > 0.0)) error("invalid C1, C2");
    opt.tol = dp[3]; opt.inner_tol = dp[4]; opt.gamma0 = dp[5]; opt.gammab0 = dp[6];
    opt.gamma_mult = dp[7]; opt.gamma_max = dp[8];
    /* internal tuning constants (see the comments where they are used) */
    opt.lm = 0.01;          /* Levenberg-Marquardt weight, epsilon-insensitive loss */
    opt.lm_hinge = 0.0;     /* the same for the hinge: 1e-3 made n = 600 three times faster but
                               stalled tight tolerances (gap 1e-8), so it is off */
    opt.step_cap = 1.0;     /* max |Newton step| for the box-type dual variables */
    opt.start_scale = 1.0;  /* cold start: rho0 scaled to max_m ||rho0||_{K_m} = C1 */
    opt.gs_max = 10.0;      /* initial slack proximal parameter, epsilon-insensitive loss */
    opt.gs_newton = 10.0;   /* ... raised after inner loops of at most this many Newton steps */
    opt.budget = 2.0;       /* a Newton step may at most double the working set (else halved) */
    if (!(opt.gamma0 > 0.0) || !(opt.gammab0 > 0.0) || !(opt.gamma_mult >= 1.0))
        error("invalid gamma schedule");
    if (!(eps >= 0.0)) error("epsilon must be >= 0");
    const double *yy = REAL(y);
    if (loss == SP_HINGE || loss == SP_LOGISTIC)
        for (int i = 0; i < n; i++) if (yy[i] != 1.0 && yy[i] != -1.0) error("y must be in {-1, +1}");

    size_t nM = (size_t) n * M;
    SEXP alpha = PROTECT(allocMatrix(REALSXP, n, M)); nprot++;
    double *al = REAL(alpha);
    if (!isNull(alpha0)) {
        if (!isReal(alpha0) || (size_t) XLENGTH(alpha0) != nM) error("alpha0 must have n*M doubles");
        memcpy(al, REAL(alpha0), sizeof(double) * nM);
    } else memset(al, 0, sizeof(double) * nM);
    double b = 0.0;
    if (!isNull(b0)) {
        if (!isReal(b0) || LENGTH(b0) != 1) error("b0 must be a double scalar");
        b = REAL(b0)[0];
    }
    SEXP rho = PROTECT(allocVector(REALSXP, n)); nprot++;
    SEXP aux = PROTECT(allocVector(REALSXP, 2 * (R_xlen_t) n)); nprot++;
    memset(REAL(aux), 0, sizeof(double) * 2 * n);
    memset(REAL(rho), 0, sizeof(double) * n);
    opt.warm = 0;
    if (!isNull(rho0)) {
        if (!isReal(rho0) || LENGTH(rho0) != n) error("rho0 must have n doubles");
        if (!isReal(aux0) || LENGTH(aux0) != 2 * n) error("aux0 must have 2n doubles");
        memcpy(REAL(rho), REAL(rho0), sizeof(double) * n);
        memcpy(REAL(aux), REAL(aux0), sizeof(double) * 2 * n);
        opt.warm = 1;
    }
    double gam[2] = { opt.gamma0, opt.gammab0 };
    if (!isNull(gamma0)) {
        if (!isReal(gamma0) || LENGTH(gamma0) != 2) error("gamma0 must have 2 doubles");
        gam[0] = REAL(gamma0)[0]; gam[1] = REAL(gamma0)[1];
        if (!(gam[0] > 0.0) || !(gam[1] > 0.0)) error("invalid gamma0");
    }
    int mi = opt.maxiter;
    SEXP htime = PROTECT(allocVector(REALSXP, mi)); nprot++;
    SEXP hprim = PROTECT(allocVector(REALSXP, mi)); nprot++;
    SEXP hdual = PROTECT(allocVector(REALSXP, mi)); nprot++;
    SEXP hgap = PROTECT(allocVector(REALSXP, mi)); nprot++;
    SEXP hact = PROTECT(allocVector(INTSXP, mi)); nprot++;
    SEXP hnew = PROTECT(allocVector(INTSXP, mi)); nprot++;
    SEXP norms = PROTECT(allocVector(REALSXP, M)); nprot++;
    sp_result res;
    memset(&res, 0, sizeof(res));
    sp_solve_mkl(REAL(K), n, M, yy, loss, C1, C2, eps, &opt, al, &b, REAL(rho), REAL(aux), gam,
                 REAL(htime), REAL(hprim), REAL(hdual), REAL(hgap), INTEGER(hact),
                 INTEGER(hnew), REAL(norms), &res);
    int it = res.iter;
    SEXP hist = PROTECT(allocVector(VECSXP, 6)); nprot++;
    SEXP hv[6] = { htime, hprim, hdual, hgap, hact, hnew };
    for (int j = 0; j < 6; j++) SET_VECTOR_ELT(hist, j, lengthgets(hv[j], it));
    const char *hnm[6] = { "time", "objective", "dual", "gap", "n_active", "newton" };
    SEXP hnames = PROTECT(allocVector(STRSXP, 6)); nprot++;
    for (int j = 0; j < 6; j++) SET_STRING_ELT(hnames, j, mkChar(hnm[j]));
    setAttrib(hist, R_NamesSymbol, hnames);

    const char *nm[18] = { "alpha", "b", "rho", "aux", "gamma", "primal", "dual", "gap",
                           "converged", "iterations", "n_active", "sumnorm", "newton",
                           "cg_iter", "kernel_sweeps", "history", "norms", "rejected" };
    SEXP out = PROTECT(allocVector(VECSXP, 18)); nprot++;
    SEXP names = PROTECT(allocVector(STRSXP, 18)); nprot++;
    for (int j = 0; j < 18; j++) SET_STRING_ELT(names, j, mkChar(nm[j]));
    SET_VECTOR_ELT(out, 0, alpha);
    SET_VECTOR_ELT(out, 1, ScalarReal(b));
    SET_VECTOR_ELT(out, 2, rho);
    SET_VECTOR_ELT(out, 3, aux);
    SEXP gv = PROTECT(allocVector(REALSXP, 2)); nprot++;
    REAL(gv)[0] = gam[0]; REAL(gv)[1] = gam[1];
    SET_VECTOR_ELT(out, 4, gv);
    SET_VECTOR_ELT(out, 5, ScalarReal(res.primal));
    SET_VECTOR_ELT(out, 6, ScalarReal(res.dual));
    SET_VECTOR_ELT(out, 7, ScalarReal(res.gap));
    SET_VECTOR_ELT(out, 8, ScalarLogical(res.status == 0));
    SET_VECTOR_ELT(out, 9, ScalarInteger(res.iter));
    SET_VECTOR_ELT(out, 10, ScalarInteger(res.n_active));
    SET_VECTOR_ELT(out, 11, ScalarReal(res.sumnorm));
    SET_VECTOR_ELT(out, 12, ScalarInteger(res.newton));
    SET_VECTOR_ELT(out, 13, ScalarInteger(res.cgit));
    SET_VECTOR_ELT(out, 14, ScalarReal((double) res.nprod));
    SET_VECTOR_ELT(out, 15, hist);
    SET_VECTOR_ELT(out, 16, norms);
    SET_VECTOR_ELT(out, 17, ScalarInteger(res.rejected));
    setAttrib(out, R_NamesSymbol, names);
    UNPROTECT(nprot);
    return out;
}
