/* SpicyMKL (Suzuki & Tomioka 2009): dual augmented Lagrangian / proximal minimisation for
 * block 1-norm and elastic-net multiple kernel learning. This private header of the spicy*.c
 * files holds the state, the options, the loss table type and their prototypes.
 *
 * Problem (P):  minimise_{alpha, b}  sum_i loss(y_i, z_i) + sum_m psi(||alpha_m||_{K_m}),
 *               z = sum_m K_m alpha_m + b 1,   psi(x) = C1 x + (C2 / 2) x^2.
 * Block 1-norm: C1 = C, C2 = 0. Elastic net: C1 = C (1 - lambda), C2 = C lambda.
 *
 * Outer loop (proximal point):  rho = argmin phi_gamma(rho; alpha, b, aux), then
 *   alpha_m <- prox(alpha_m + gamma rho),  b <- b + gamma_b sum(rho),  aux <- multiplier update.
 * Inner loop: Newton with Armijo backtracking on phi_gamma; only kernels that can be active on the
 * current line segment enter gradient, Hessian and line search (Remark 1 / Sec. 3.4). Kernels whose
 * coefficient block is zero are screened without reading K_m: from a reference point r (with
 * K_m r, K_m 1 and ||r||_{K_m} stored, O(MN) memory), rho' is split into a part along 1 and r
 * and a remainder w orthogonal to both; ||rho'||^2_{K_m} is exact but for w'K_m w, bounded by
 * lambda_max(P K_m P) ||w||^2, with lambda_max(PKP) bounded by min(tr, Frobenius, Gershgorin)
 * computed in the first sweep (mk_kbound, kstats.c). A test in O(1) per kernel from a shared
 * anchor point comes first, and along a Newton segment the bound costs O(1) per kernel and step
 * length once its dots with rho and D are known. ||.||_{K_m} is convex, so a kernel certified
 * below C1 at both ends of a Newton segment is inactive along the whole segment and is not read
 * at all. Lazy screening: kernels outside S are tested on [rho, rho + c D] only for the step c
 * that passes the Armijo test with the kernels of S (a lower bound of phi), and those that fail
 * join S before the test is repeated at the same c; kernels of S found inactive at rho leave S
 * with their exact K_m rho.
 * The Newton matrix sums c_m K_m + c'_m w_m w_m' over active kernels, four kernels per pass over
 * a cache-resident panel of H, threads on column ranges of equal triangle area. With the CG solve
 * from MK_TRI_MIN rows it is kept in single precision (mk_symmat: packed triangle, diagonal and
 * bias term in double): its CG products read a quarter of the bytes of the double n x n array,
 * while gradient, line search and gap stay exact; the model rounds' CG products are done in
 * single-precision arithmetic too.
 *
 * Loss-conjugate parts of phi (rho_i = -d loss / d z_i at the optimum):
 *  squared  loss (y - z)^2 / 2:  rho^2 / 2 - y rho
 *  logistic loss log(1 + exp(-y z)):  t log t + (1 - t) log(1 - t),  t = y rho in (0, 1)
 *  hinge: -y rho + max(0, xi - g (1 - y rho))^2 / (2 g) + max(0, zeta - g y rho)^2 / (2 g)
 *         (slack variables xi, zeta of Sec. 3.3, Eqs. 10-12; g = gamma, or slack_ratio gamma
 *         with the CG solve: softer walls, fewer Newton steps cut by them)
 *  epsilon-insensitive: a slack copy s of the fitted values (constraint s = K alpha + b, multiplier
 *         rho) with its own proximal term ||s - s_t||^2 / (2 g); the term of phi is
 *         -min_s [ loss(s) + rho s + (s - s_t)^2 / (2 g) ], whose gradient is -prox(s_t - g rho)
 *         and whose Hessian is g * prox'(.) in {0, g}; s is updated to the prox like xi, zeta
 *         above.
 *         This g has its own schedule (start <= 10, multiplied only after short Newton loops):
 *         the smoothed kink at rho = 0 has width 2 eps / g, and with g = gamma -> 1e8 Newton could
 *         no longer resolve it. A small Levenberg-Marquardt term keeps its Newton steps bounded.
 * Every loss-specific operation is one entry of the loss table sp_losses[] (spicy_loss.c):
 * adding a loss is adding its code (MK_LOSS_*, mklearn.h), its functions and one entry.
 * Hinge with the CG solve: the Newton direction is refined on a model of phi that keeps the slack
 * pieces exact (sp_model_direction), so that coordinates crossing a kink do not cut the steps.
 * Inner tolerance: ||gradient|| <= max(itol, inner_rel (P - D) / n) sqrt(n) after the first
 * Newton step of a loop (itol sqrt(n) before it; itol = inner_tol), with the absolute gap P - D of
 * the last outer iteration or of the start (inexact proximal point; inner_rel tightened tenfold
 * after an outer iteration that did not reduce the gap). An outer iteration that took no Newton
 * step and did not reduce the gap tightens itol itself and steps gamma back (sp_run). On a
 * low-rank store an inner loop near the end also stops once the gap it would certify is within
 * tol (sp_early_stop).
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
 * Hinge, block 1-norm, a gap just above tol (at most SP_SVM_GAP tol): a second dual point, the
 * SVM dual on sum_m d_m K_m with the current kernel weights (sp_svm_dual), and the better of the
 * two certifies.
 *
 * Files (each includes this header first): spicy.c the .Call entry, allocation and the driver
 * (outer loop sp_run, inner loop sp_newton); spicy_loss.c the loss table; spicy_sweep.c kernel
 * sweeps over the store (products, norms); spicy_screen.c screening bounds and the working set;
 * spicy_newton.c the Newton matrix and solve; spicy_hinge.c the hinge's model and box
 * directions; spicy_step.c start, step cap, line search, proximal update; spicy_gap.c the dual
 * value and gap. Kernels are read only through the kernel store (mk_store_kernel[_upper] /
 * mk_store_col): pointers into the array for a dense store, per-thread scratch filled on demand
 * for an on-the-fly store. Shared numerics: linalg.c, kstats.c, cg.c (mklearn.h).
 */
#ifndef SPICY_H
#define SPICY_H
#define USE_FC_LEN_T
#include "mklearn.h"
/* no contraction into fused multiply-adds in the AVX versions (MK_CLONES): the iterates keep the
   rounding of the baseline build (see inst/notes/NOTES-spicy.md) */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize ("fp-contract=off")
#endif
#include <R_ext/BLAS.h>
#include <R_ext/Lapack.h>
#include <R_ext/Utils.h>
#include <math.h>
#include <float.h>
#include <string.h>
#ifndef FCONE
#define FCONE
#endif

/* Internal tuning constants (the R front end does not expose them). */
#define SP_STEP_CAP 1.0     /* max |Newton step| of the box-type dual variables */
#define SP_START_SCALE 1.0  /* cold start: rho0 scaled to max_m ||rho0||_{K_m} = C1 */
#define SP_GS_MAX 10.0      /* initial slack proximal parameter (losses with their own schedule) */
#define SP_GS_NEWTON 10     /* ... raised after inner loops of at most this many Newton steps */
#define SP_BUDGET 2.0       /* a Newton step may at most double the working set (else halved) */
#define SP_THR_EPS 1e-10    /* safety margin of the screening test */
#define SP_CG_MAXIT 100     /* CG iterations per Newton direction (truncated Newton) */
#define SP_ROUND_MAXIT 20   /* ... and per model round: a round needs a descent direction of the
                               model, not its minimiser (the exact line minimum follows) */
#define SP_BACKOFF_MAX 2    /* gamma steps back from a drift at most this many times a fit */
#define SP_ITOL_FLOOR 1e-6  /* ... and inner_tol tightens down to this fraction of itself */
#define SP_HOLD_MAX 2       /* gamma is held after at most this many unsolved inner loops */
#define SP_FLOOR (64.0 * DBL_EPSILON) /* rounding allowance of the line search, relative to
                               |phi|: steps whose decrease phi cannot resolve are accepted */
#define SP_BLOCK_KAPPA 1.0  /* CG preconditioner: the free block is factored when nf^3 / 3 <=
                               kappa 2 n^2 flops, about ten products with H (the factorisation
                               runs at about a tenth of a product's speed; see the notes) */
#define SP_WB_FLOOR 1e-10   /* low rank: Woodbury preconditioner's diagonal floor, relative to the
                               diagonal of the factor part (zero loss curvature, no jitter) */
#define SP_WB_SAME 1e-9     /* ... diagonal values this close (relative) count as one: the model
                               rounds' diagonal carries rounding noise */
#define SP_WB_COST 60.0    /* ... used while its factor (k^3 / 3) costs at most ten products with
                              the operator (2 n k): k^2 <= SP_WB_COST n */
#define SP_WB_BUILD 80.0   /* ... and while building its capacitance (wk^2 per coordinate off the
                              shared diagonal value, n wk^2 / 2 from scratch) costs at most
                              SP_WB_BUILD / 4 products */
#define SP_WB_DIRECT 0.1   /* ... solves by it alone while H d = b - (wd - dh) d holds to this
                              fraction of CG's tolerance (checked after each build) */
#define SP_WB_GRAM 16777216 /* ... and its cache of the factors' Gram blocks, doubles at most */
#define SP_WB_GRAMX 1000.0 /* ... and while the blocks not cached yet (2 n r_a r_b flops each)
                              cost at most this many products with the operator (4 n k) */
#define SP_WB_UPD 8.0      /* ... its factor by a rank-one update per coordinate moved (k^2 / 2
                              rotations) while SP_WB_UPD x that many <= k, else refactored */
#define SP_WB_DOWN 1e-8    /* ... a downdate keeps each pivot's square above this fraction of
                              the old one, else the capacitance is refactored */
#define SP_WB_CHK 1e-11    /* ... and an updated factor's product with a fixed vector matches
                              the capacitance's to this (relative), else refactored */
#define SP_LM_REL 1e-12    /* low rank: the model's line minimum is taken when a Newton step on
                              its slope moves t by at most this (relative): t is then the root of
                              the slope's linear piece; the bracket's width otherwise */
#define SP_BLOCK_MIN 200    /* ... and always up to this size (a small factor is cheap) */
#define SP_EARLY_GAP 20.0   /* low rank: an inner loop checks the gap it would certify once the
                               last certified gap is at most this times tol, */
#define SP_EARLY_TOL 0.9    /* ... and stops when that gap is at most this times tol */
#define SP_SVM_GAP 2.0      /* hinge: an SVM dual point is tried when tol < gap <= this x tol */
#define SP_SVM_TOL 1e-3     /* ... its SMO tolerance (any feasible point certifies) */
#define SP_SVM_ITER 20      /* ... and at most this many SMO iterations per observation */
#define SP_CACHE_DRIFT 0.1  /* Newton matrix cache: the kernel part is rebuilt when its weights
                               moved by more than this fraction of their sum */

#define SP_BOX_SNAP 1e-12  /* box: coordinates this close to a bound are put on it */
#define SP_BOX_INNER 1e-3  /* box: y rho in (SP_BOX_INNER, 1 - SP_BOX_INNER) counts as inside */
#define SP_BOX_LM 1e-6     /* box: ridge of the free block, relative to gamma and the gradient */
#define SP_BOX_MAXIT 20    /* box: rounds of the active-set loop */
#define SP_BOX_CGMAX 200   /* box: CG iterations of a round */
#define SP_BOX_CGTOL 1e-4  /* box: ... relative to |g| on the free set */
/* Products with the Newton matrix (CG solves and model rounds), and forming it, run on the
   solver's threads from SP_CG_PAR_MIN rows, below MK_PAR_WORK too: a product is short but an
   OpenMP region costs only microseconds (measurements: inst/notes/NOTES-spicy.md). */
#define SP_CG_PAR_MIN 600
#define SP_PANEL 48        /* Newton matrix: columns per cache-resident panel (sp_hess_cols) */

/* One entry per loss, indexed by the loss codes MK_LOSS_* (mklearn.h). aux holds the loss's
   multipliers: hinge xi[0..n-1], zeta[n..2n-1]; epsilon-insensitive s[0..n-1]; nothing for
   the others. */
typedef struct {
    const char *name;
    int binary;       /* labels in {-1, +1} */
    double rho0;      /* cold start: rho = rho0 * y, then projected onto the dual box */
    int equilibrate;  /* diagonal equilibration of the Newton matrix before Cholesky */
    double lm;        /* Levenberg-Marquardt weight (0: none), relative to the slack gamma */
    int own_gamma;    /* the slack proximal parameter follows its own schedule (not gamma) */
    int pieces;       /* the loss part of phi is piecewise quadratic in each coordinate, with its
                         Hessian diagonal constant on each piece (the model direction) */
    /* Every function but aux_start takes the case weights w last (NULL: none; spicy_loss.c). */
    /* sum_i w_i loss(y_i, z_i) */
    double (*value)(int n, const double *y, const double *z, double eps, const double *w);
    /* loss part of phi at rho (+Inf outside its domain); grad / diagonal hess if not NULL */
    double (*phi)(int n, const double *y, const double *rho, const double *aux, double g,
                  double eps, double *grad, double *hess, const double *w);
    /* multipliers consistent with the fitted values z at a cold start (NULL: none) */
    void (*aux_start)(int n, const double *y, const double *z, double *aux);
    /* multiplier update at the inner solution (NULL: none) */
    void (*aux_update)(int n, const double *y, const double *rho, double *aux, double g,
                       double eps, const double *w);
    /* -f*(-u) for a feasible u */
    double (*neg_conj)(int n, const double *y, const double *u, double eps, const double *w);
    /* make u feasible: the loss's box and sum(u) = 0 (in place) */
    void (*project)(int n, const double *y, double *u, const double *w);
    /* move rho strictly inside an open domain (NULL: closed domain) */
    void (*interior)(int n, const double *y, double *rho, const double *w);
    /* cap the Newton step D at rho (g: gradient, tmp: n scratch); NULL: no cap */
    void (*cap)(int n, const double *y, const double *rho, const double *g, double *D,
                double *tmp, const double *w);
} sp_loss;

typedef struct {
    double C1, C2, eps;                 /* penalty psi(x) = C1 x + C2 x^2 / 2; the loss's epsilon */
    double tol, inner_tol, gamma_mult, gamma_max;
    int maxiter, inner_maxiter, nthreads, verbose, cg, cg_threshold, screen, lazy;
    int cache;                          /* Newton matrix cache: 1 on, 0 off, -1 with CG */
    int model_rounds;                   /* rounds of the model direction (0: none) */
    int deflate;                        /* ... their CG solves deflated by this many directions */
    int single;                         /* Newton matrix in single precision (CG, n >= 512) */
    double slack_ratio;                 /* hinge with CG: slack parameter = slack_ratio gamma */
    double inner_rel;                   /* inner tolerance relative to the last gap (0: none) */
    double box_fraction;                /* hinge with CG: the box once at most this share of rho
                                           is inside it (sp_box_switch; 0: never) */
    int svm_dual;                       /* hinge: SVM dual points near tol (sp_svm_dual) */
    mk_progress *prog;
    const double *cw;                   /* case weights (n, all > 0), or NULL: none */
} sp_opts;

typedef struct {
    double primal, dual, gap, sumnorm;
    int iter, status, n_active, newton, cgit, cgblock, ls_fail, rejected, floor, rebuilds,
        model, deflated, single, svm, svm_won, backoff, box, boxleft;
    long nprod;
} sp_result;

/* Screening (spicy_screen.c): per kernel m outside the working set, a reference point REF_m
   with K_m REF_m in Kr and the constants of the bound mk_kbound (kstats.c), the anchor point of
   the O(1) test, and the dots of a Newton segment. */
typedef struct {
    double *REF;   /* n x M: reference points for the screening bound */
    double *nref;  /* ||REF_m||_{K_m}; for m outside S, Kr holds K_m REF_m */
    double *rmean, *rc2, *rt;   /* mean(REF_m), ||REF_m - mean||^2, 1'K_m REF_m */
    double *K1;    /* n x M: K_m 1 (column sums, from the first sweep) */
    double *sqL;   /* sqrt(lambda_max) bound on the centred subspace (mk_kernel_stats) */
    double *s1;    /* sqrt(1'K_m 1) */
    double *ubv;   /* screening bounds */
    double *xa, *ua;  /* anchor point and, per kernel, an upper bound of ||xa||_{K_m} (Inf: none) */
    double *cf;       /* 6 x M: x'r, x'k1, x'Kr for x = rho and x = D0 (segment of a Newton step) */
    int *cfid, segid; /* segment for which cf[, m] holds; the current segment */
    double dsc;       /* D = dsc D0 (the trust region halves D) */
    int *stamp;    /* Newton step at which m left S */
    int stepid;
} sp_screening;

/* Cached kernel part of the Newton matrix (spicy_newton.c), G = sum_m gc1[m] K_m (upper
   triangle; NULL: no cache), rebuilt when the weights drift (SP_CACHE_DRIFT); zn, zM: n and M
   zeros (the kernel part alone is built with hl = 0 and hc2 = 0); rebuilds: times built. */
typedef struct {
    double *G, *gc1, *zn, *zM;
    int valid, rebuilds;
} sp_ncache;

/* Model direction (sp_model_direction): 12 n doubles of scratch (NULL: not used); rounds taken;
   hx (low-rank store, else NULL): H D from the Newton direction's CG residual (sp_solve);
   slopes: evaluations of the model's slope by its line minimisation (each a pass of the loss) */
typedef struct {
    double *w, *hx;
    int rounds;
    long slopes;
} sp_model;

/* SVM dual points (sp_svm_dual): the combined kernel (n x n), alpha, gradient and dual point
   (3n), the kernels' weights (M); tried, and certifying better than the projected rho */
typedef struct {
    double *Kd, *a, *w;
    int tried, won;
} sp_svmdual;

/* Hinge in the box (sp_box_direction): rho stays in 0 <= y rho <= 1, no slack variables.
   on: in the box now; ok: the fit may (still) switch to it; from, left: the outer iterations it
   started and was left (0: not yet). idx: the step's free coordinates (nf of them,
   sp_box_free); state: their states; open: those not held; H: the free block of H (cap
   doubles); F: 7 n scratch; d: n; nzr, vzr, nzd, vzd: the nonzeros of rho and D for the
   products by columns; counters of set changes, free coordinates, unsettled loops, rounds. */
typedef struct {
    int on, ok, from, left, nf, *idx, *state, *open, *nzr, *nzd, nnzr, nnzd;
    double *H, *F, *d, *vzr, *vzd;
    size_t cap;
    long nclip, nfree, nfail, nround;
} sp_box;

/* The Newton matrix on a low-rank store (spicy_lowrank.c), never formed:
     H = diag(dh) + gb 11' + sum_a c1[a] G_a G_a' + c2[a] w_a w_a'   (m_a = act[a], w_a in KD),
   dh = hl + jitter sum_a c1[a]; fd its diagonal without dh (so that the whole diagonal can be
   set, as the model rounds do); products O(n sum r_a). The CG preconditioner's free block reads
   its entries from the rows of the scaled factors gathered into gt (rows x nf, column pos[i]). */
typedef struct {
    int on, n, na, rows, rmax, gathered;
    const mk_store *st;
    const double *KD, *rn;   /* rn: n x M, the squared row norms of each G_m */
    const int *act;
    const double *c1, *c2;
    double gb;
    double *dh, *fd, *gt;
    int *pos;
    /* products by blocks of rows on lnt threads: tk = sum_a (r_a + 1) + 1 entries of U'x, the
       blocks' partial sums tp (nt_max x tk), the sum tu, per-kernel scales ts1, ts2 */
    int lnt, tk;
    double *tp, *tu, *ts1, *ts2;
    size_t gcap;
    /* Woodbury preconditioner P = diag(wd) + U U' (sp_lrwb_prepare), U = [sqrt(c1_a) G_a,
       sqrt(c2_a) w_a, ..., sqrt(gb) 1] (wk columns), wd = dh floored at SP_WB_FLOOR times the
       diagonal of U U': the capacitance I + U' diag(wd)^-1 U (wa) and its Cholesky factor (wc);
       wdh the dh it was built for; ws n x (rmax + 1) and wt, wn, widx, wse scratch; wvalid: wa
       matches the operator's coefficients (cleared by sp_lr_newton); wfail: no factor, Jacobi
       instead. */
    int wk, wkmax, wvalid, wfail, *woff, *widx;
    double *wa, *wc, *wd, *wdh, *ws, *wt, *wn, *wse, wfl;
    long wbuilds, wupdates, wfull, wused;   /* wused: solves it preconditioned */
    /* wc updated by rank-one terms instead of refactored (sp_wb_update): wcok, wc is the factor
       of wa; wx 3 wk, wv wk scratch; wfup: updates so taken, wfrej: refused (a downdate's pivot,
       the check) */
    int wcok;
    double *wx, *wv;
    long wfup, wfrej;
    /* the solve by Woodbury alone (sp_lrwb_direct): 1 checked since the last build, -1 not yet,
       0 failed its check; solves it did, checks */
    int wdirect;
    long wdirects, wchecks;
    /* the factors' Gram blocks G_a'G_b (R x R, block (a, b) valid when gok[a M + b]) and G_m'1
       (R, valid when gok[m M + m]): fixed, computed when two kernels are first active together */
    double *gg, *g1;
    int *gok;
} sp_lrnm;

typedef struct {
    /* problem */
    const mk_store *st;
    int n, M;
    const double *y;
    const sp_loss *L;
    const sp_opts *o;
    double C1, C2, eps;
    /* threads and kernel scratch: kbuf holds nt_max blocks of scr doubles (a small kernel, else
       MK_SWEEP_COLS columns: the sweeps compute a kernel by blocks of columns, mk_ksrc), hbuf
       nt_max blocks of 4 hscr (one column of each of the four kernels of a Newton-matrix pass:
       hscr = n); NULL for a dense store (R/memory.R counts both) */
    int nt_max;
    size_t scr, hscr;
    double *kbuf, *hbuf, *rsbuf;
    double *qt;    /* CG: nt_max blocks of n doubles (the threads' parts of a product with H) */
    /* iterate (owned by the caller): alpha n x M, b, rho n, aux 2n */
    double *alpha, *b, *rho, *aux;
    double gamma, gammab;   /* proximal parameters of the kernels and of the bias */
    double gam_s, gsl;      /* own schedule of the slack parameter; the one in use */
    double slack;           /* slack parameter / gamma (losses without their own schedule) */
    double irel, absgap;    /* inner tolerance relative to the last absolute gap (0: unknown) */
    double gcap;            /* cap of gamma and gamma_b: gamma_max, or lower after a drift */
    double itol;            /* the inner loop's absolute tolerance (inner_tol, or tighter) */
    int warm;
    /* per kernel */
    int *inS;      /* kernel in the working set S (exact products maintained) */
    int *anz;      /* alpha_m != 0 */
    double *Ka;    /* n x M: K_m alpha_m     (valid for m in S) */
    double *Kr;    /* n x M: K_m rho         (valid for m in S) */
    double *KD;    /* n x M: K_m Delta       (scratch for m in S) */
    double *anorm; /* ||alpha_m||_{K_m} */
    double *r;     /* ||alpha_m + gamma rho||_{K_m} at the current rho (m in S) */
    double *sm;    /* ||u||_{K_m} of the dual point (-1: certified <= C1) */
    double *Bq, *Dq;   /* line search coefficients */
    sp_screening sc;
    int *list, *flag; /* scratch lists for threaded products */
    /* Newton step */
    double *g, *hl, *D, *tmp, *z, *u, *H, *work, *hc1, *hc2;
    /* the Newton matrix as the solves see it (H, or its single-precision form with nt_max
       panels of SP_PANEL x n doubles to sum its columns in) */
    mk_symmat nm;
    double *hpan;
    sp_ncache nc;
    sp_model md;
    sp_svmdual sv;
    int *act, na, cnt, use_cg, nhold;
    mk_pcblock fb;
    mk_defl df;
    double phi0, gnorm, gd, sr, thr, den;
    /* counters and results */
    long nprod;    /* kernel sweeps performed (products and quadratic forms) */
    int newton_total, cgit, ls_fail, nrejected, nactive, nfloor, nbackoff;
    int nearly;    /* inner loops stopped by the gap they would certify (sp_early_stop) */
    double primal, dual, gap, sumnorm;
    double t0, tq, tm[9];   /* section timers, reported when verbose */
    int itcur;     /* the current outer iteration */
    sp_box bx;
    /* low-rank store: per-thread scratch of lrs doubles (two factor-sized vectors) and the
       Newton operator (lr.on = 0 for dense and fly stores) */
    double *lrbuf;
    size_t lrs;
    sp_lrnm lr;
} sp_state;

/* this thread's block of a per-thread scratch array (NULL for a dense store) */
static inline double *sp_thread_buf(double *base, size_t per)
{
    if (!base || per == 0) return NULL;
#ifdef _OPENMP
    return base + (size_t) omp_get_thread_num() * per;
#else
    return base;
#endif
}

static inline double sp_sqrt0(double q)
{
    return q > 0.0 ? sqrt(q) : 0.0;
}

/* the loss table (spicy_loss.c), one entry per loss code */
extern const sp_loss sp_losses[MK_NLOSS];

/* Each file's *_alloc: the scratch of its phase (R_alloc), called once by sp_fit. */

/* spicy_sweep.c: threads, timers and kernel sweeps over the store */
void sp_tick(sp_state *S, int j);
int sp_threads(const sp_state *S, double work);
int sp_nm_threads(const sp_state *S, double work);
void sp_ksrc(const sp_state *S, int m, mk_ksrc *K);
void sp_kernel_mv(sp_state *S, int cnt, const double *x1, const double *x2, size_t s2,
                  double *Y1, double *Y2, int sparse);
void sp_products(sp_state *S, int cnt, const double *rho, const double *D);
void sp_norms(sp_state *S);
void sp_sweep_alloc(sp_state *S);

/* spicy_screen.c: screening bounds, the working set S, the trust region on it */
void sp_set_ref_c(sp_state *S, int m, const double *v, double vm, double vc2);
void sp_set_ref(sp_state *S, int m, const double *v);
int sp_bounds_all(sp_state *S, const double *x, double *ub, double lim, int reset, double c);
void sp_trust_region(sp_state *S);
void sp_screen(sp_state *S);
void sp_screen_alloc(sp_state *S);

/* spicy_newton.c: gradient, Newton matrix and solve, the Newton direction */
int sp_solve(const mk_symmat *A, sp_lrnm *L, int n, const double *g, double *d, double *work,
             int cg, int equil, double gnorm, int *cgit, mk_pcblock *B, const double *hl, int nt,
             double *qt, mk_defl *Df, int cgmax, double *hx);
double sp_gradient(sp_state *S);
void sp_newton_coefs(sp_state *S);
int sp_direction(sp_state *S);
void sp_newton_alloc(sp_state *S);

/* spicy_hinge.c: the hinge's model direction and box direction, the switch to the box */
void sp_model_direction(sp_state *S);
void sp_box_snap(sp_state *S);
double sp_box_free(sp_state *S);
int sp_box_direction(sp_state *S);
int sp_box_switch(sp_state *S);
void sp_hinge_alloc(sp_state *S);

/* spicy_step.c: start, step cap, line search, accepted step, proximal update */
void sp_start(sp_state *S);
int sp_step_cap(sp_state *S);
int sp_line_search(sp_state *S, double *cstep);
void sp_accept(sp_state *S, double c);
void sp_prox_update(sp_state *S);
void sp_step_alloc(sp_state *S);

/* spicy_lowrank.c: a low-rank store's kernel products, quadratic forms and first-sweep
   statistics through the factors, and its Newton operator (sp_lrnm) */
void sp_lr_mv2(const sp_state *S, int m, const double *x1, const double *x2, double *y1,
               double *y2);
double sp_lr_quad(const sp_state *S, int m, const double *u);
void sp_lr_stats(const sp_state *S, int m, const double *v, double *kv, double *s1, double *lc,
                 double *k1);
void sp_lr_newton(sp_state *S);
double sp_nm_diag(const sp_state *S, int i);
void sp_nm_set_diag(sp_state *S, int i, double v);
void sp_nm_mv(sp_state *S, const double *p, double *q, int nt);
void sp_lrnm_mv(void *ctx, const double *p, double *q);
double sp_lrnm_entry(const void *ctx, int i, int j);
void sp_lrnm_gather(sp_lrnm *L, const double *key, int cap);
int sp_lrwb_prepare(sp_lrnm *L);
int sp_chol_r1(int k, double *R, double *x, double sg);
void sp_lrwb_apply(void *ctx, const double *r, double *z);
int sp_lrwb_direct(sp_lrnm *L, const double *g, double *d, double *r, double *hx, double target);
void sp_lr_alloc(sp_state *S);

/* spicy_gap.c: dual value and duality gap, the SVM dual point */
void sp_dual_gap(sp_state *S);
void sp_svm_dual(sp_state *S);
void sp_gap_alloc(sp_state *S);

#endif
