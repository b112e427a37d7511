/* Gaussian chains of the fly backend: the raw values of a feature group's Gaussian kernels, in
 * increasing gamma, each from the one before (mk_store_decision, the pair runs of store_pair.c).
 *
 * exp(-gamma_k b) = exp(-gamma_{k-1} b) exp(-(gamma_k - gamma_{k-1}) b), the second factor a
 * Taylor polynomial of degree q in u = (gamma_k - gamma_{k-1}) b, u <= delta * bmax (bmax: the
 * group's largest squared distance over the rows), with q the least degree whose remainder
 * u^(q+1) / (q+1)! is below 2^-54. A link is made when delta * bmax <= 0.1 (q <= 9), a chain
 * has at most 16 kernels (rounding adds about one unit in the last place per link); its first
 * kernel takes the exponential itself.
 */
#include "store.h"

#define CHAIN_LEN 16
static int chain_cmp(const void *a, const void *b)
{
    const chain_key *x = a, *y = b;
    if (x->g != y->g) return x->g < y->g ? -1 : 1;
    if (x->gam != y->gam) return x->gam < y->gam ? -1 : 1;
    return x->m < y->m ? -1 : (x->m > y->m);
}

/* (-1)^j / j!, j = 0..9 */
static const double exp_taylor[10] = {
    1.0, -1.0, 1.0 / 2, -1.0 / 6, 1.0 / 24, -1.0 / 120, 1.0 / 720, -1.0 / 5040, 1.0 / 40320,
    -1.0 / 362880 };

/* e *= exp(-delta b) (one column) and e1 *= exp(-delta b1), e2 *= exp(-delta b2) (two, in
   one pass) by the degree-q Taylor polynomial; q a constant in each call below, so the loops
   are unrolled and vectorised */
static inline __attribute__((always_inline)) void
link1_q(double delta, const int q, const double *restrict b, double *restrict e, int len)
{
#ifdef _OPENMP
#pragma omp simd
#endif
    for (int i = 0; i < len; i++) {
        double u = delta * b[i], p = exp_taylor[q];
        for (int j = q - 1; j >= 0; j--) p = p * u + exp_taylor[j];
        e[i] *= p;
    }
}

static inline __attribute__((always_inline)) void
link2_q(double delta, const int q, const double *restrict b1, const double *restrict b2,
        double *restrict e1, double *restrict e2, int len)
{
#ifdef _OPENMP
#pragma omp simd
#endif
    for (int i = 0; i < len; i++) {
        double u1 = delta * b1[i], u2 = delta * b2[i];
        double p1 = exp_taylor[q], p2 = exp_taylor[q];
        for (int j = q - 1; j >= 0; j--) {
            p1 = p1 * u1 + exp_taylor[j];
            p2 = p2 * u2 + exp_taylor[j];
        }
        e1[i] *= p1;
        e2[i] *= p2;
    }
}

/* the degree as a constant: CALL(Q) for Q = q (9 above 8) */
#define CHAIN_DISPATCH(q, CALL)                                                           \
    switch (q) {                                                                          \
    case 1: CALL(1); break; case 2: CALL(2); break; case 3: CALL(3); break;               \
    case 4: CALL(4); break; case 5: CALL(5); break; case 6: CALL(6); break;               \
    case 7: CALL(7); break; case 8: CALL(8); break; default: CALL(9); break;              \
    }

MK_CLONES
void store_chain_link1(double delta, int q, const double *restrict b, double *restrict e,
                       int len)
{
#define LINK1(Q) link1_q(delta, Q, b, e, len)
    CHAIN_DISPATCH(q, LINK1)
#undef LINK1
}

MK_CLONES
void store_chain_link2(double delta, int q, const double *restrict b1, const double *restrict b2,
                       double *restrict e1, double *restrict e2, int len)
{
#define LINK2(Q) link2_q(delta, Q, b1, b2, e1, e2, len)
    CHAIN_DISPATCH(q, LINK2)
#undef LINK2
}

/* The link degree from gamma_{k-1} to gamma_k on a group whose squared distances are at most
   bmax: the least q with u^(q+1) / (q+1)! <= 2^-54 for u = (gamma_k - gamma_{k-1}) bmax, or 0
   (no link) when u > 0.1. */
static int chain_degree(double dgam, double bmax)
{
    double u = dgam * bmax;
    if (!(u <= 0.1) || !R_FINITE(u)) return 0;
    double t = u;
    int q = 1;
    while (t * u / (q + 1) > 0x1p-54) { t = t * u / (q + 1); q++; }
    return q;
}

/* The largest squared distance of group g between any two rows of x and z: the sum over its
   features of the squared range of their values. */
static double group_bmax(const mk_store *s, int g)
{
    double v = 0.0;
    for (int f = s->gstart[g]; f < s->gstart[g + 1]; f++) {
        const double *xc = s->x + (size_t) s->gfeat[f] * s->n;
        const double *zc = s->z + (size_t) s->gfeat[f] * s->nr;
        double lo = xc[0], hi = xc[0];
        for (int i = 1; i < s->n; i++) {
            lo = xc[i] < lo ? xc[i] : lo;
            hi = xc[i] > hi ? xc[i] : hi;
        }
        for (int i = 0; i < s->nr; i++) {
            lo = zc[i] < lo ? zc[i] : lo;
            hi = zc[i] > hi ? zc[i] : hi;
        }
        v += (hi - lo) * (hi - lo);
    }
    return v;
}

/* Sorts key (g: 2 x feature group, + 1 for a Gaussian; gam: a Gaussian's gamma) by group and
   gamma, and gives each the degree of its link from the key before it (lq; 0: none): only
   Gaussians of one group, in runs of at most CHAIN_LEN. */
void store_chain_links(const mk_store *s, chain_key *key, int cnt, int *lq)
{
    qsort(key, cnt, sizeof(chain_key), chain_cmp);
    int ng = 0;
    for (int t = 0; t < cnt; t++) if (key[t].g / 2 + 1 > ng) ng = key[t].g / 2 + 1;
    double *bmax = (double *) R_alloc(ng > 0 ? ng : 1, sizeof(double));
    for (int g = 0; g < ng; g++) bmax[g] = -1.0;
    int len = 0;
    for (int t = 0; t < cnt; t++) {
        int q = 0, g = key[t].g / 2;
        if (t > 0 && key[t].g % 2 == 1 && key[t].g == key[t - 1].g && len < CHAIN_LEN) {
            if (bmax[g] < 0.0) bmax[g] = group_bmax(s, g);
            q = chain_degree(key[t].gam - key[t - 1].gam, bmax[g]);
        }
        lq[t] = q;
        len = q > 0 ? len + 1 : 1;
    }
}
