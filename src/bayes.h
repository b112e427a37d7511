/* Empirical Bayesian MKL: the state shared by bayes.c (the iteration) and bayes_lowrank.c (its
 * factorisation and statistics on a low-rank store). Private to the two files. */
#ifndef BAYES_H
#define BAYES_H
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
    double tol, prune, s2_floor, accel_max;
    int maxiter, fix_s2, bias_kernel, update, safeguard, nthreads, verbose;
    mk_progress *prog;
} eb_opts;

/* Step types in the history. */
enum { EB_STEP_START = 0, EB_STEP_MACKAY = 1, EB_STEP_MM = 2, EB_STEP_ACCEL = 3,
       EB_STEP_SCORING = 4 };
/* Scoring steps start once max |dJ / dlog theta| is below this (nats): the MacKay steps before
   it find the basin the MacKay iteration converges to (NOTES-bayes.md). */
#define EB_SCORING_START 10.0

/* Low-rank store (bayes_lowrank.c): Kbar = s I + F F', F = [sqrt(d_m) G_m, sqrt(d0) 1] over the
   kernels with d_m > 0 and s = sigma2 + jitter sum d_m; log |Kbar| and every solve through
   B = s I + F'F (k x k, k the columns of F), never an n x n matrix (NOTES-bayes.md). */
typedef struct {
    int R, k;          /* columns of G (the column R of [G, 1] is the ones vector); of F */
    double jit, s;     /* the store's jitter; s of the last factorisation */
    double *C;         /* (R + 1)^2: [G, 1]'[G, 1] */
    double *Gy;        /* R + 1: [G, 1]'y */
    double *B;         /* (R + 1)^2: the Cholesky factor of B (lower, k x k) */
    int *pos;          /* R + 1: the position of a column of [G, 1] in F (-1: none) */
    double *Li;        /* (R + 1)^2: L^{-1} (k x k), for tr(B^{-1}) */
    int *col;          /* k: the columns of [G, 1] in F */
    double *sc;        /* k: their scales sqrt(d) */
    double *z, *v;     /* R + 1 each: scratch */
    double *gb;        /* R + 1: [G, 1]'beta (the blocks of the kernels read by eb_lr_stats) */
    double *V, *Y;     /* (R + 1) x nv each: the scoring system's C e_a and L^{-1} F'u_a */
    double *cc;        /* nv: the scoring system's coefficients of beta */
    double *ones;      /* n ones */
} eb_lr;

typedef struct {
    const mk_store *st;
    const double *y;
    int n, M;
    const eb_opts *o;
    double *A;        /* n x n: Kbar, then its inverse (lower triangles; eb_spd_inverse) */
    double *sw, *sp;  /* n x EB_NB and EB_NB^2: scratch of eb_spd_inverse */
    double *beta;     /* Kbar^{-1} y */
    double *scale;    /* mean diagonal of each kernel */
    double *buf;      /* per-thread column scratch (fly stores) */
    int nbuf;
    int *idx, na;     /* the kernels read each step (MacKay: the active ones; scoring: all) */
    int factorizations, scoring;   /* scoring: the scoring phase has begun */
    int passes;       /* low-rank store: passes over the factors' n rows */
    double *kb;       /* n x M: K_m beta of the kernels read (from the pass of eb_stats; dense) */
    double *au;       /* n x (M + 2): Kbar^{-1} P_j beta of the free variances (scoring; dense) */
    double *ub;       /* n: P_bias beta = (1' beta) 1 (dense) */
    double *hs, *gs;  /* (M + 2)^2 and M + 2: the scoring system */
    int *var;         /* M + 2: its variables (kernel m >= 0, EB_VAR_NOISE, EB_VAR_BIAS) */
    const double **up;   /* M + 2: P_j beta of each variable */
    double *corr, *hq;   /* nv x nv: the secant correction of Q / 2, and Q / 2 itself */
    double *pth, *pg;    /* nv: the variances and gradient at the previous scoring point */
    int *pvar, npv;      /* its variables (npv = 0: none) */
    eb_lr *lr;           /* low-rank store: the Woodbury form of Kbar (NULL: A is used) */
} eb_work;

enum { EB_VAR_NOISE = -1, EB_VAR_BIAS = -2 };
/* A point: the variances, J there, and (after eb_stats) the traces and quadratic forms. */
typedef struct {
    double *d, s2, d0, J;
    double *q, *t;    /* M (active kernels only) */
    double qs, ts, qb, tb;
} eb_point;

/* bayes_inv.c: A^{-1} and (1/2) log |A| by a blocked symmetric sweep, EB_NB columns a block */
#define EB_NB 64
int eb_spd_inverse(double *A, int n, double *W, double *P, int nthreads, double *ld);
/* LAPACK's dpotrf ("L") and dtrtri ("L", "N") with an interrupt check per block */
int eb_chol_checked(double *A, int n);
int eb_trinv_checked(double *A, int n);

/* bayes_lowrank.c: the low-rank forms of the scales, the factorisation (J, beta), the traces
   and quadratic forms, and the scoring system. */
void eb_lr_init(eb_work *w, int nv);
void eb_lr_scales(eb_work *w);
int eb_lr_factor(eb_work *w, eb_point *p);
void eb_lr_stats(eb_work *w, eb_point *p);
void eb_lr_scoring_q(const eb_work *w, const eb_point *p, int nf, double *H);

#endif
