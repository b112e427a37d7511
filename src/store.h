/* Internals shared by the kernel store's files (store.c, store_chain.c, store_pair.c,
 * store_call.c, and a new backend's store_<name>.c); solvers use only the mk_store_* API of
 * mklearn.h. Small helpers are static inline here so that every file inlines the same code. */
#ifndef MK_STORE_H
#define MK_STORE_H

#include "mklearn.h"

/* this thread's slice of a per-thread scratch array (NULL stays NULL) */
#ifdef _OPENMP
#define THREAD_BUF(base, len) ((base) ? (base) + (size_t) omp_get_thread_num() * (len) : NULL)
#else
#define THREAD_BUF(base, len) (base)
#endif

/* the number of features of feature group g (fly) */
static inline int group_nf(const mk_store *s, int g) { return s->gstart[g + 1] - s->gstart[g]; }

/* One training value of kernel m, row i, column j, from its raw value: fly_norm's arithmetic. */
static inline double norm_one(const mk_store *s, int m, int i, int j, double v)
{
    if (s->norm == MK_NORM_CENTER_TRACE) {
        const double *cm = s->colmeans + (size_t) m * s->n;
        v = (v + (s->grandmean[m] - cm[i] - cm[j])) * (1.0 / s->scale[m]);
    } else if (s->norm == MK_NORM_TRACE) v *= 1.0 / s->scale[m];
    return i == j ? v + s->jitter : v;
}

/* ------------------------------------------------------------------ Gaussian chains
   (store_chain.c): a feature group's Gaussian kernels in increasing gamma, each kernel's raw
   values from the one before by a Taylor link; used by mk_store_decision and the pair runs. */
typedef struct { int m, g; double gam; } chain_key;
static inline double rbf_gamma(const mk_store *s, int m)
{
    return 1.0 / (2.0 * s->kpar1[m] * s->kpar1[m]);
}
/* Sorts key (g: 2 x feature group, + 1 for a Gaussian; gam: a Gaussian's gamma) by group and
   gamma, and gives each the degree of its link from the key before it (lq; 0: none). */
void store_chain_links(const mk_store *s, chain_key *key, int cnt, int *lq);
/* e *= exp(-delta b), len values, by the degree-q link */
void store_chain_link1(double delta, int q, const double *restrict b, double *restrict e,
                       int len);
/* e1 *= exp(-delta b1) and e2 *= exp(-delta b2) in one pass */
void store_chain_link2(double delta, int q, const double *restrict b1, const double *restrict b2,
                       double *restrict e1, double *restrict e2, int len);


/* ------------------------------------------------------------------ low rank (store_lowrank.c) */
void lr_read(SEXP s, mk_store *st);
/* rows i0..i1-1 of column j of kernel m (jitter on the diagonal of a training store) */
void lr_col(const mk_store *s, int m, int j, int i0, int i1, double *out);
void lr_diag(const mk_store *s, int m, double *d);
void lr_decision(const mk_store *s, const int *idx, int cnt, const double *alpha, double *out);
/* the O(n r) primitives of a low-rank store (store_lowrank.c): K_m x = Gz_m (G_m' x), x'K_m x =
   |G_m' x|^2 (+ the jitter's share on a training store) */
void lr_kmv2(const mk_store *s, int m, const double *x1, const double *x2, double *y1,
             double *y2);
double lr_kquad(const mk_store *s, int m, const double *v);
/* multiply-adds of one pass of mv or quad over cnt kernels */
double lr_pass_work(const mk_store *s, const int *idx, int cnt);

/* fly kernels for the factorisation (store.c): the raw (un-normalised) rows i0..i1-1 of column j
   of kernel m, and the raw training diagonal (n values) */
void store_fly_raw(const mk_store *s, int m, int j, int i0, int i1, double *out);
void store_fly_raw_diag(const mk_store *s, int m, double *out);

#endif
