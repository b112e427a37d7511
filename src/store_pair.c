/* MWUMKL's access paths to the kernel store (mwu.c is their only caller).
 *
 * column pairs  K_m[, j1] - K_m[, j2] for every kernel m, the pair set once per step: on the
 *               fly, kernels of one feature group share the two columns' distances or inner
 *               products (mk_store_pair_set), and a group's Gaussians are chained from one
 *               exponential (store_chain.c) in runs planned once per fit (mk_store_pair_runs).
 * feature maps  polynomial and linear kernels on one column as q weighted outer products of the
 *               column's powers (mk_store_fmap), so a solver keeps O(q) state for them.
 *
 * Backends: dense (columns read from the array) and fly; a new backend adds its branch to
 * mk_store_pair_diff (and may return 0 from mk_store_fmap).
 */
#include "store.h"
#include <string.h>

/* ------------------------------------------------------------------ column pairs */

void mk_store_pair_init(const mk_store *s, mk_store_pair *pp)
{
    memset(pp, 0, sizeof(*pp));
    pp->s = s;
    pp->j1 = pp->j2 = -1;
    pp->nthreads = s->nthreads;
    if (s->kind == MK_STORE_DENSE) return;
    int ng = 0;
    for (int m = 0; m < s->M; m++) if (s->kgroup[m] + 1 > ng) ng = s->kgroup[m] + 1;
    pp->ng = ng;
    /* which base kinds each group needs */
    int *need = (int *) R_alloc(ng, sizeof(int));
    for (int g = 0; g < ng; g++) need[g] = 0;
    for (int m = 0; m < s->M; m++) need[s->kgroup[m]] |= mk_kernel_base_kind(s->ktype[m]);
    /* share the bases of a group's two columns when kernels share groups (on average two or
       more kernels per group) and the bases take at most 256 MB */
    size_t slots = 0;
    for (int g = 0; g < ng; g++)
        for (int b = 0; b < 3; b++) if (need[g] & (1 << b)) slots++;
    double bytes = (double) slots * 2.0 * s->nr * sizeof(double);
    if (2.0 * slots > (double) s->M || bytes > 256e6) return;
    pp->share = 1;
    pp->nslot = (int) slots;
    pp->slot = (int *) R_alloc((size_t) ng * 3, sizeof(int));
    pp->sgroup = (int *) R_alloc(slots, sizeof(int));
    pp->skind = (int *) R_alloc(slots, sizeof(int));
    int k = 0;
    for (int g = 0; g < ng; g++)
        for (int b = 0; b < 3; b++) {
            if (need[g] & (1 << b)) {
                pp->slot[g * 3 + b] = k;
                pp->sgroup[k] = g;
                pp->skind[k] = 1 << b;
                k++;
            } else pp->slot[g * 3 + b] = -1;
        }
    pp->base = (double *) R_alloc(slots * 2 * (size_t) s->nr, sizeof(double));
}

static int kind_bit(int kind) { return kind == MK_BASE_D2 ? 0 : (kind == MK_BASE_IP ? 1 : 2); }

/* Base values of both columns j1, j2 for rows i0..i1-1 of one feature group, in one pass over
   the group's columns of z: 32 rows at a time, their sums kept in registers across the
   group's features (added in the order mk_kernel_base adds them: the same values up to the
   rounding of fused multiply-adds in the AVX versions). */
MK_CLONES
static void pair_base(const mk_store *s, int g, int kind, int j1, int j2, int i0, int i1,
                      double *o1, double *o2)
{
    int len = i1 - i0, n = s->n, nr = s->nr, nf = group_nf(s, g);
    const int *feat = s->gfeat + s->gstart[g];
    if (kind == MK_BASE_CH) {
        for (int i = 0; i < len; i++) { o1[i] = 0.0; o2[i] = 0.0; }
        for (int f = 0; f < nf; f++) {
            size_t c = (size_t) feat[f];
            const double *zc = s->z + c * nr + i0;
            double b1 = s->x[c * n + j1], b2 = s->x[c * n + j2];
            for (int i = 0; i < len; i++) {
                double a = zc[i], d1 = a - b1, s1 = a + b1, d2 = a - b2, s2 = a + b2;
                if (s1 != 0.0) o1[i] += d1 * d1 / s1;
                if (s2 != 0.0) o2[i] += d2 * d2 / s2;
            }
        }
        return;
    }
    const int d2 = kind == MK_BASE_D2;
    int i = 0;
    for (; i + 32 <= len; i += 32) {
        double a1[32] = { 0 }, a2[32] = { 0 };
        for (int f = 0; f < nf; f++) {
            size_t c = (size_t) feat[f];
            const double *zc = s->z + c * nr + i0 + i;
            double b1 = s->x[c * n + j1], b2 = s->x[c * n + j2];
            if (d2) {
#ifdef _OPENMP
#pragma omp simd
#endif
                for (int k = 0; k < 32; k++) {
                    double e1 = zc[k] - b1, e2 = zc[k] - b2;
                    a1[k] += e1 * e1;
                    a2[k] += e2 * e2;
                }
            } else {
#ifdef _OPENMP
#pragma omp simd
#endif
                for (int k = 0; k < 32; k++) { a1[k] += zc[k] * b1; a2[k] += zc[k] * b2; }
            }
        }
        for (int k = 0; k < 32; k++) { o1[i + k] = a1[k]; o2[i + k] = a2[k]; }
    }
    for (; i < len; i++) {
        double a1 = 0.0, a2 = 0.0;
        for (int f = 0; f < nf; f++) {
            size_t c = (size_t) feat[f];
            double zv = s->z[c * nr + i0 + i], b1 = s->x[c * n + j1], b2 = s->x[c * n + j2];
            if (d2) { double e1 = zv - b1, e2 = zv - b2; a1 += e1 * e1; a2 += e2 * e2; }
            else { a1 += zv * b1; a2 += zv * b2; }
        }
        o1[i] = a1;
        o2[i] = a2;
    }
}

void mk_store_pair_set(mk_store_pair *pp, int j1, int j2)
{
    const mk_store *s = pp->s;
    pp->j1 = j1;
    pp->j2 = j2;
    if (!pp->share) return;
    int nr = s->nr, B = 1024, nb = (nr + B - 1) / B, ntask = pp->nslot * nb;
    double work = 0.0;
    for (int k = 0; k < pp->nslot; k++) work += 6.0 * nr * group_nf(s, pp->sgroup[k]);
    int nt = mk_threads_for(pp->nthreads, work);
    (void) nt;
#ifdef _OPENMP
#pragma omp parallel for if (nt > 1) num_threads(nt) schedule(dynamic, 1)
#endif
    for (int task = 0; task < ntask; task++) {
        int k = task / nb, b = task % nb;
        int i0 = b * B, i1 = i0 + B < nr ? i0 + B : nr;
        double *o1 = pp->base + (size_t) k * 2 * nr;
        pair_base(s, pp->sgroup[k], pp->skind[k], j1, j2, i0, i1, o1 + i0, o1 + nr + i0);
    }
}

/* out = rows i0..i0+len-1 of the normalised columns j1 minus j2 of kernel m from their raw
   values c1, c2 (out may be c2); the rows j1, j2 (diagonal entries, jitter) one value at a
   time. inv: 1 / scale[m] (trace), 1 (none). */
MK_CLONES
static void pair_finish(const mk_store *s, int m, double inv, int i0, int len, int j1, int j2,
                        const double *c1, const double *c2, double *out)
{
    int i1 = i0 + len, r1 = j1 >= i0 && j1 < i1, r2 = j2 >= i0 && j2 < i1;
    double a11 = r1 ? c1[j1 - i0] : 0.0, a21 = r1 ? c2[j1 - i0] : 0.0;
    double a12 = r2 ? c1[j2 - i0] : 0.0, a22 = r2 ? c2[j2 - i0] : 0.0;
    if (s->norm == MK_NORM_CENTER_TRACE) {
        double gm = s->grandmean[m];
        const double *cm = s->colmeans + (size_t) m * s->n + i0;
        double e1 = s->colmeans[(size_t) m * s->n + j1], e2 = s->colmeans[(size_t) m * s->n + j2];
#ifdef _OPENMP
#pragma omp simd
#endif
        for (int k = 0; k < len; k++)
            out[k] = (c1[k] + (gm - cm[k] - e1)) * inv - (c2[k] + (gm - cm[k] - e2)) * inv;
        if (r1) out[j1 - i0] = norm_one(s, m, j1, j1, a11) - norm_one(s, m, j1, j2, a21);
        if (r2) out[j2 - i0] = norm_one(s, m, j2, j1, a12) - norm_one(s, m, j2, j2, a22);
        return;
    }
    if (s->norm == MK_NORM_TRACE) {
#ifdef _OPENMP
#pragma omp simd
#endif
        for (int k = 0; k < len; k++) out[k] = c1[k] * inv - c2[k] * inv;
    } else {
#ifdef _OPENMP
#pragma omp simd
#endif
        for (int k = 0; k < len; k++) out[k] = c1[k] - c2[k];
    }
    /* norm_one's arithmetic without its reads of the store */
    double J = s->jitter;
    if (s->norm == MK_NORM_TRACE) { a11 *= inv; a21 *= inv; a12 *= inv; a22 *= inv; }
    if (r1) out[j1 - i0] = (a11 + J) - (j1 == j2 ? a21 + J : a21);
    if (r2) out[j2 - i0] = (j2 == j1 ? a12 + J : a12) - (a22 + J);
}

/* The shared base values of kernel m's group for rows i0.. (both columns), or NULL. */
static const double *pair_shared(const mk_store_pair *pp, int m, int i0)
{
    if (!pp->share) return NULL;
    const mk_store *s = pp->s;
    int k = pp->slot[s->kgroup[m] * 3 + kind_bit(mk_kernel_base_kind(s->ktype[m]))];
    return pp->base + (size_t) k * 2 * s->nr + i0;
}

static double norm_inv(const mk_store *s, int m)
{
    return s->norm == MK_NORM_NONE ? 1.0 : 1.0 / s->scale[m];
}

void mk_store_pair_diff(const mk_store_pair *pp, int m, int i0, int i1, double *d, double *buf)
{
    const mk_store *s = pp->s;
    int nr = s->nr, len = i1 - i0, j1 = pp->j1, j2 = pp->j2;
    if (!s->square) error("kernel store: column pairs need a training store");
    if (s->kind == MK_STORE_DENSE) {
        const double *K = s->K + (size_t) m * nr * s->n;
        const double *c1 = K + (size_t) j1 * nr + i0, *c2 = K + (size_t) j2 * nr + i0;
#ifdef _OPENMP
#pragma omp simd
#endif
        for (int k = 0; k < len; k++) d[k] = c1[k] - c2[k];
        return;
    }
    /* raw columns: the first in buf, the second in d */
    double *o1 = buf;
    int g = s->kgroup[m], kind = mk_kernel_base_kind(s->ktype[m]);
    const double *b1 = pair_shared(pp, m, i0), *b2;
    if (b1) b2 = b1 + nr;
    else {
        mk_kernel_base(s->x, s->n, s->z + i0, nr, len, j1, s->gfeat + s->gstart[g],
                       group_nf(s, g), kind, o1);
        mk_kernel_base(s->x, s->n, s->z + i0, nr, len, j2, s->gfeat + s->gstart[g],
                       group_nf(s, g), kind, d);
        b1 = o1; b2 = d;
    }
    mk_kernel_apply(s->ktype[m], s->kpar1[m], s->kpar2[m], b1, len, o1);
    mk_kernel_apply(s->ktype[m], s->kpar1[m], s->kpar2[m], b2, len, d);
    pair_finish(s, m, norm_inv(s, m), i0, len, j1, j2, o1, d, d);
}

int mk_store_pair_runs(mk_store_pair *pp, int *idx, int cnt, int chain, int *rstart)
{
    const mk_store *s = pp->s;
    pp->rm = idx;
    pp->rlq = (int *) R_alloc(cnt > 0 ? cnt : 1, sizeof(int));
    pp->rinv = (double *) R_alloc(cnt > 0 ? cnt : 1, sizeof(double));
    pp->rgam = (double *) R_alloc(cnt > 0 ? cnt : 1, sizeof(double));
    int nruns = cnt;
    for (int k = 0; k < cnt; k++) { pp->rlq[k] = 0; rstart[k] = k; }
    if (s->kind == MK_STORE_FLY && pp->share && chain && cnt > 1) {
        /* the Gaussian kernels first, by group and gamma; the others after, in their order */
        chain_key *key = (chain_key *) R_alloc(cnt, sizeof(chain_key));
        int nrbf = 0, nother = 0;
        int *other = (int *) R_alloc(cnt, sizeof(int));
        for (int k = 0; k < cnt; k++) {
            int m = idx[k];
            if (s->ktype[m] == MK_RBF) {
                key[nrbf].m = m;
                key[nrbf].g = 2 * s->kgroup[m] + 1;
                key[nrbf].gam = rbf_gamma(s, m);
                nrbf++;
            } else other[nother++] = m;
        }
        store_chain_links(s, key, nrbf, pp->rlq);
        nruns = 0;
        for (int k = 0; k < nrbf; k++) {
            idx[k] = key[k].m;
            if (pp->rlq[k] == 0) rstart[nruns++] = k;
        }
        for (int k = 0; k < nother; k++) {
            idx[nrbf + k] = other[k];
            pp->rlq[nrbf + k] = 0;
            rstart[nruns++] = nrbf + k;
        }
    }
    rstart[nruns] = cnt;
    for (int k = 0; k < cnt; k++) {
        int m = idx[k];
        pp->rinv[k] = s->kind == MK_STORE_FLY ? norm_inv(s, m) : 1.0;
        pp->rgam[k] = s->kind == MK_STORE_FLY && s->ktype[m] == MK_RBF ? rbf_gamma(s, m) : 0.0;
    }
    return nruns;
}

void mk_store_pair_diff_run(const mk_store_pair *pp, int k0, int cnt, int i0, int i1, double *d,
                            size_t ldd, double *buf)
{
    const mk_store *s = pp->s;
    int len = i1 - i0, nr = s->nr;
    const int *ms = pp->rm + k0;
    if (cnt == 1 || pp->rlq[k0 + 1] == 0) {
        for (int k = 0; k < cnt; k++) mk_store_pair_diff(pp, ms[k], i0, i1, d + k * ldd, buf);
        return;
    }
    /* a chain: Gaussian kernels of one group with shared base values */
    const double *b1 = pair_shared(pp, ms[0], i0), *b2 = b1 + nr;
    const double *gam = pp->rgam + k0, *inv = pp->rinv + k0;
    const int *lq = pp->rlq + k0;
    double *e1 = buf, *e2 = buf + len;
    mk_vexp_ax(-gam[0], b1, e1, len);
    mk_vexp_ax(-gam[0], b2, e2, len);
    pair_finish(s, ms[0], inv[0], i0, len, pp->j1, pp->j2, e1, e2, d);
    for (int k = 1; k < cnt; k++) {
        store_chain_link2(gam[k] - gam[k - 1], lq[k], b1, b2, e1, e2, len);
        pair_finish(s, ms[k], inv[k], i0, len, pp->j1, pp->j2, e1, e2, d + k * ldd);
    }
}

/* ------------------------------------------------------------------ finite feature maps */

int mk_store_fmap(const mk_store *s, int m, int *key, double *w)
{
    if (s->kind != MK_STORE_FLY || !s->square) return 0;
    int t = s->ktype[m], g = s->kgroup[m];
    if ((t != MK_POLY && t != MK_LINEAR) || group_nf(s, g) != 1) return 0;
    int deg = t == MK_LINEAR ? 1 : (int) s->kpar1[m];
    double c = t == MK_LINEAR ? 0.0 : s->kpar2[m];
    if (deg < 1 || deg + 1 > MK_FMAP_MAX || !R_FINITE(c)) return 0;
    double inv = s->norm == MK_NORM_NONE ? 1.0 : 1.0 / s->scale[m], binom = 1.0;
    /* (a b + c)^deg = sum_k binom(deg, k) c^(deg - k) a^k b^k */
    for (int k = 0; k <= deg; k++) {
        double cp = 1.0;
        for (int e = k; e < deg; e++) cp *= c;
        w[k] = binom * cp * inv;
        binom = binom * (deg - k) / (k + 1);
    }
    *key = s->gfeat[s->gstart[g]];
    return deg + 1;
}

void mk_store_fmap_basis(const mk_store *s, int key, int q, double *phi)
{
    int n = s->n;
    const double *xc = s->x + (size_t) key * n;
    for (int i = 0; i < n; i++) {
        double v = 1.0;
        for (int k = 0; k < q; k++) { phi[(size_t) k * n + i] = v; v *= xc[i]; }
    }
    if (s->norm != MK_NORM_CENTER_TRACE) return;
    for (int k = 0; k < q; k++) {
        double *f = phi + (size_t) k * n, mean = 0.0;
        for (int i = 0; i < n; i++) mean += f[i];
        mean /= n;
        for (int i = 0; i < n; i++) f[i] -= mean;
    }
}
