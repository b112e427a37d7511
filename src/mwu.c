/* MWUMKL: matrix multiplicative weights for MKL (Moeller, Raman, Saha & Venkatasubramanian
 * 2014, Algorithms 2-4, whose notation this writes out; measurements: inst/notes/NOTES-mwu.md).
 *
 * State, O(M n): alpha (n), and for every kernel m the vector Ga_m = G_m alpha and the scalar
 * s_m = alpha' G_m alpha, with G_m = Y K_m Y / r_m + I / C (r_m the trace of K_m, C the 2-norm
 * soft-margin constant; 1/C = 0 is the hard margin). Each iteration reads two columns of every
 * kernel through the store (mk_store_pair_*: only their difference is needed), never an n x n
 * matrix.
 *
 * One iteration:
 *  oracle   j+ = argmax g over y = +1, j- = argmax g over y = -1 (infeasible if
 *           g_j+ + g_j- < -2 sqrt(omega), mwu_gfloor); alpha += delta = (e_j+ + e_j-) / 2.
 *  phase A  (parallel over kernels, O(M)) s_m += 2 delta' Ga_m + delta' G_m delta, from the
 *           difference of K_m's two columns at rows j+, j-, kept >= 0; p_m = eps' sqrt(s_m).
 *  weights  the closed-form exponential of Lemma 4.1: c_m = cosh(p_m) e^-r,
 *           l_m = -sinh(p_m) e^-r / S, S = 2 sum c_m + M (n - 1) e^-r, with r = max p when it
 *           exceeds the overflow cutoff (the spec's two branches are this formula with r = 0 and
 *           r = max p). The coefficient of Ga_m in g, 2 l_m / sqrt(s_m), is written with
 *           sinh(p) / sqrt(s) = eps' sinh(p) / p, finite at s = 0.
 *  phase B  (parallel over kernels and row blocks, O(M n)) Ga_m += G_m delta from the two
 *           columns, and g = sum_m 2 l_m / sqrt(s_m) Ga_m in the same pass over Ga (one read and
 *           one write of the O(M n) state per iteration).
 */
#include "mklearn.h"
#include <math.h>
#include <string.h>

typedef struct {
    double eps;        /* approximation parameter epsilon */
    double invC;       /* 1 / C (0: hard margin) */
    double cutoff;     /* overflow cutoff of the exponentiation (20) */
    double gfloor;     /* the oracle fails when g_j+ + g_j- < -gfloor (mwu_gfloor) */
    int T;             /* iterations */
    int nthreads, verbose, hist_every;
    int fmap;          /* kernels of finite rank without O(n) state (1) or as any other (0) */
    int chain;         /* Gaussian kernels' columns chained (mk_store_pair_runs) (1) or not */
    int block;         /* > 0: row block of the kernel designs (else 4096 above n = 8192) */
} mwu_opts;


/* sinh(p) e^-r / p and cosh(p) e^-r for p >= 0 */
static void hyp_scaled(double p, double r, double *sc, double *ch)
{
    double ep = exp(p - r), em = r == 0.0 ? 1.0 / ep : exp(-p - r);
    *ch = 0.5 * (ep + em);
    if (p < 1e-4) *sc = exp(-r) * (1.0 + p * p / 6.0);
    else *sc = 0.5 * (ep - em) / p;
}

/* The largest g of each class over len rows and the first index reaching it (-1: no row of
   that class, or only NaN): the maxima in one vectorised pass, then the first index of each. */
MK_CLONES
static void class_max(const double *g, const double *y, int len, double *mp, int *ip,
                      double *mn, int *in)
{
    double a = -HUGE_VAL, b = -HUGE_VAL;
#ifdef _OPENMP
#pragma omp simd reduction(max:a, b)
#endif
    for (int i = 0; i < len; i++) {
        double v = g[i];
        int pos = y[i] > 0;
        a = pos && v > a ? v : a;
        b = !pos && v > b ? v : b;
    }
    int ia = -1, ib = -1;
    for (int i = 0; i < len && (ia < 0 || ib < 0); i++) {
        if (y[i] > 0) { if (ia < 0 && g[i] == a) ia = i; }
        else if (ib < 0 && g[i] == b) ib = i;
    }
    *mp = a; *ip = ia; *mn = b; *in = ib;
}

/* The oracle: the first index of the largest g among y = +1 (jp) and among y = -1 (jn); the
   first index of each class when a NaN in g leaves a maximum unreached. */
static void oracle(const double *g, const double *y, int n, int *jp, int *jn)
{
    double mp, mn;
    int a, b;
    class_max(g, y, n, &mp, &a, &mn, &b);
    if (a < 0 || b < 0)
        for (int i = n - 1; i >= 0; i--) { if (y[i] > 0) a = i; else b = i; }
    *jp = a;
    *jn = b;
}

/* s_m after the step delta = (e_jp + e_jn) / 2: s + 2 delta' G_m alpha + delta' G_m delta, with
   delta' G_m delta = (K_pp + K_nn - 2 K_pn) r_m / 4 + 1 / (2 C) from the column difference
   (dp = K_pp - K_pn, dn = K_pn - K_nn); kept >= 0 (rounding can push it below 0 with a hard
   margin). */
static double s_next(double s, const double *Gam, int jp, int jn, double rm, double dp,
                     double dn, double invC)
{
    double v = s + (Gam[jp] + Gam[jn]) + 0.25 * (rm * (dp - dn) + 2.0 * invC);
    return v > 0.0 ? v : 0.0;
}

/* Rows i0..i0+len-1 of Ga_m += G_m delta (Gam, y, d and ga point at row i0; d the column
   difference), and ga += c Ga_m of the updated rows. */
MK_CLONES
static void ga_update(double *restrict Gam, const double *restrict y, const double *restrict d,
                      int i0, int len, int jp, int jn, double invC, double hm, double c,
                      double *restrict ga)
{
    if (jp >= i0 && jp < i0 + len) Gam[jp - i0] += 0.5 * invC;
    if (jn >= i0 && jn < i0 + len) Gam[jn - i0] += 0.5 * invC;
#ifdef _OPENMP
#pragma omp simd
#endif
    for (int i = 0; i < len; i++) {
        double v = Gam[i] + hm * y[i] * d[i];
        Gam[i] = v;
        ga[i] += c * v;
    }
}

/* The weights' factors sc_m = sinh(p_m) e^-r / p_m of s (in coef), with r = max p above the
   cutoff (else 0); returns the entropy of the normalised weights. */
static double weights_of(const double *s, int M, double epsp, double cutoff, double *coef)
{
    double q = 0.0;
    for (int m = 0; m < M; m++) { double pm = epsp * sqrt(s[m]); if (pm > q) q = pm; }
    double r = q > cutoff ? q : 0.0, wsum = 0.0, wlog = 0.0, ch;
    for (int m = 0; m < M; m++) {
        hyp_scaled(epsp * sqrt(s[m]), r, &coef[m], &ch);
        wsum += coef[m];
    }
    for (int m = 0; m < M; m++) if (coef[m] > 0.0) wlog += coef[m] * log(coef[m]);
    return wsum > 0.0 ? log(wsum) - wlog / wsum : 0.0;
}

/* Kernels of finite rank (mk_store_fmap: polynomial and linear kernels on one column, on the
   fly) keep no O(n) state. On the basis phi_g of their column g, K_m = sum_k w_mk phi_gk phi_gk'
   + J I; with the moments A_gk = phi_gk' (y * alpha), shared by the kernels of g and updated in
   O(q) per step,
     G_m alpha = y * sum_k w_mk A_gk phi_gk / r_m + (J / r_m + 1 / C) alpha,
     s_m = (sum_k w_mk A_gk^2 + J |alpha|^2) / r_m + |alpha|^2 / C,
   s_m computed afresh at every step (non-negative by construction). Their part of g is one
   O(n q) pass per column g with the summed coefficients B_gk = A_gk sum_m c_m w_mk / r_m and
   beta = sum_m c_m (J / r_m + 1 / C). */
typedef struct {
    int nmap, ngrp, n;
    int off;           /* position of the first mapped kernel in the per-kernel arrays */
    int *km, *kg;      /* nmap: kernel, group */
    int *q;            /* ngrp: basis size */
    double *w;         /* nmap x MK_FMAP_MAX */
    double *yphi;      /* ngrp x MK_FMAP_MAX x n: y * phi_gk */
    double *A, *B;     /* ngrp x MK_FMAP_MAX */
    double beta, a2, J;
} mwu_map;

/* Sort the kernels into mapped ones (mp) and those with state (the list sk, *ns of them). */
static void map_init(const mk_store *st, const double *y, int use, mwu_map *mp, int *sk,
                     int *ns)
{
    const int M = st->M, n = st->n, F = MK_FMAP_MAX;
    memset(mp, 0, sizeof(*mp));
    mp->n = n;
    mp->J = st->jitter;
    mp->km = (int *) R_alloc(M, sizeof(int));
    mp->kg = (int *) R_alloc(M, sizeof(int));
    mp->w = (double *) R_alloc((size_t) M * F, sizeof(double));
    int *key = (int *) R_alloc(M, sizeof(int)), *gkey = (int *) R_alloc(M, sizeof(int));
    int *gq = (int *) R_alloc(M, sizeof(int));
    int *gof = (int *) R_alloc(st->p > 0 ? st->p : 1, sizeof(int));
    for (int c = 0; c < st->p; c++) gof[c] = -1;
    int k = 0;
    for (int m = 0; m < M; m++) {
        int q = use ? mk_store_fmap(st, m, &key[m], mp->w + (size_t) mp->nmap * F) : 0;
        if (q == 0) { sk[k++] = m; continue; }
        for (int j = q; j < F; j++) mp->w[(size_t) mp->nmap * F + j] = 0.0;
        int g = gof[key[m]];
        if (g < 0) { g = gof[key[m]] = mp->ngrp++; gkey[g] = key[m]; gq[g] = 0; }
        if (q > gq[g]) gq[g] = q;
        mp->km[mp->nmap] = m;
        mp->kg[mp->nmap] = g;
        mp->nmap++;
    }
    *ns = k;
    if (mp->ngrp == 0) return;
    mp->q = gq;
    mp->yphi = (double *) R_alloc((size_t) mp->ngrp * F * n, sizeof(double));
    mp->A = (double *) R_alloc((size_t) mp->ngrp * F, sizeof(double));
    mp->B = (double *) R_alloc((size_t) mp->ngrp * F, sizeof(double));
    for (int g = 0; g < mp->ngrp; g++) {
        double *ph = mp->yphi + (size_t) g * F * n;
        mk_store_fmap_basis(st, gkey[g], gq[g], ph);
        for (int k = 0; k < gq[g]; k++)
            for (int i = 0; i < n; i++) ph[(size_t) k * n + i] *= y[i];
    }
    for (int j = 0; j < mp->ngrp * F; j++) mp->A[j] = 0.0;
}

/* The step alpha += (e_jp + e_jn) / 2 in the moments and |alpha|^2 (before alpha changes). */
static void map_move(mwu_map *mp, const double *alpha, int jp, int jn)
{
    mp->a2 += (alpha[jp] + 0.25) + (alpha[jn] + 0.25);
    const int F = MK_FMAP_MAX, n = mp->n;
    for (int g = 0; g < mp->ngrp; g++) {
        const double *ph = mp->yphi + (size_t) g * F * n;
        for (int k = 0; k < mp->q[g]; k++)
            mp->A[g * F + k] += 0.5 * (ph[(size_t) k * n + jp] + ph[(size_t) k * n + jn]);
    }
}

/* s_m and p_m of the mapped kernels; returns their largest p (0 if none). */
static double map_p(const mwu_map *mp, const double *rinv, double invC, double epsp, double *s,
                    double *p)
{
    const int F = MK_FMAP_MAX;
    double q = 0.0;
    for (int i = 0; i < mp->nmap; i++) {
        int m = mp->off + i;
        const double *w = mp->w + (size_t) i * F, *A = mp->A + (size_t) mp->kg[i] * F;
        double v = mp->J * mp->a2;
        for (int k = 0; k < F; k++) v += w[k] * A[k] * A[k];
        double sm = v * rinv[m] + mp->a2 * invC;
        s[m] = sm > 0.0 ? sm : 0.0;
        p[m] = epsp * sqrt(s[m]);
        if (p[m] > q) q = p[m];
    }
    return q;
}

/* B_gk = A_gk sum_m c_m w_mk / r_m and beta from per-kernel coefficients c (by position),
   each times mult. */
static void map_mix(mwu_map *mp, const double *c, double mult, const double *rinv, double invC)
{
    const int F = MK_FMAP_MAX;
    for (int j = 0; j < mp->ngrp * F; j++) mp->B[j] = 0.0;
    double beta = 0.0;
    for (int i = 0; i < mp->nmap; i++) {
        int m = mp->off + i;
        double cm = mult * c[m], cr = cm * rinv[m];
        const double *w = mp->w + (size_t) i * F;
        double *B = mp->B + (size_t) mp->kg[i] * F;
        for (int k = 0; k < F; k++) B[k] += cr * w[k];
        beta += cr * mp->J + cm * invC;
    }
    for (int j = 0; j < mp->ngrp * F; j++) mp->B[j] *= mp->A[j];
    mp->beta = beta;
}

/* The mapped kernels' weights against the shift r: coef[m] = sinh(p) e^-r / p, then B and beta;
   returns their sum of cosh(p) e^-r. */
static double map_coef(mwu_map *mp, const double *p, double r, const double *rinv, double invC,
                       double *coef)
{
    double chs = 0.0, ch;
    for (int i = 0; i < mp->nmap; i++) {
        int m = mp->off + i;
        hyp_scaled(p[m], r, &coef[m], &ch);
        chs += ch;
    }
    map_mix(mp, coef, 1.0, rinv, invC);
    return chs;
}

/* g[i] += f (y_i sum_gk B_gk phi_gk[i] + beta alpha_i) for rows i0..i0+len-1 (g and alpha
   pointing at row i0). Thread-safe. */
static void map_add(const mwu_map *mp, double f, const double *alpha, int i0, int len,
                    double *restrict g)
{
    if (mp->nmap == 0) return;
    const int F = MK_FMAP_MAX, n = mp->n;
    for (int gg = 0; gg < mp->ngrp; gg++)
        for (int k = 0; k < mp->q[gg]; k++) {
            const double c = f * mp->B[gg * F + k];
            const double *restrict ph = mp->yphi + ((size_t) gg * F + k) * n + i0;
            for (int i = 0; i < len; i++) g[i] += c * ph[i];
        }
    const double cb = f * mp->beta;
    for (int i = 0; i < len; i++) g[i] += cb * alpha[i];
}

/* The state kernels' runs (mk_store_pair_runs): sk in run order and the runs' starts. */
typedef struct {
    int nruns, maxlen;
    int *rstart;
} mwu_runs;

/* One step when a kernel's columns are one block (n <= 8192): a single pass over the kernels
   updates s_m from the pair's entries, Ga_m, and accumulates g with the weights of the new s_m.
   The normaliser S and the overflow shift r are global; each thread accumulates against its
   own shift rth (0 until one of its kernels exceeds the cutoff, then its largest p, its
   accumulators rescaled when it grows), and the threads' sums are combined against
   R = max rth, which is the spec's r (0, or max p when it exceeds the cutoff). */
static void fused_step(const mk_store_pair *pp, const mwu_opts *o, const double *y,
                       const double *rinv, double epsp, int jp, int jn, double *s, double *Ga,
                       const mwu_runs *ru, mwu_map *mp, const double *alpha, double *p,
                       double *coef, int n, int M, int nt, double *gacc, double *buf,
                       double *rth, double *chth, double *g)
{
    for (int k = 0; k < nt; k++) { rth[k] = 0.0; chth[k] = 0.0; }
    memset(gacc, 0, (size_t) nt * n * sizeof(double));
    const double invC = o->invC, cutoff = o->cutoff;
    /* the mapped kernels against their own shift, combined below as one more thread's */
    double qm = map_p(mp, rinv, invC, epsp, s, p), rmap = qm > cutoff ? qm : 0.0;
    double chmap = map_coef(mp, p, rmap, rinv, invC, coef);
#ifdef _OPENMP
#pragma omp parallel for if (nt > 1) num_threads(nt) schedule(static)
#endif
    for (int r = 0; r < ru->nruns; r++) {
        int th = mk_thread_id(), k0 = ru->rstart[r], cnt = ru->rstart[r + 1] - k0;
        double *dd = buf + (size_t) th * (ru->maxlen + 2) * n;
        mk_store_pair_diff_run(pp, k0, cnt, 0, n, dd + 2 * n, n, dd);
        double *ga = gacc + (size_t) th * n;
        for (int k = k0; k < k0 + cnt; k++) {
            const double *d = dd + (size_t) (k - k0 + 2) * n;
            double *Gam = Ga + (size_t) k * n;
            double rm = rinv[k], sm = s_next(s[k], Gam, jp, jn, rm, d[jp], d[jn], invC);
            s[k] = sm;
            double pm = epsp * sqrt(sm);
            if (pm > cutoff && pm > rth[th]) {
                double f = exp(rth[th] - pm);
                for (int i = 0; i < n; i++) ga[i] *= f;
                chth[th] *= f;
                rth[th] = pm;
            }
            double sc, ch;
            hyp_scaled(pm, rth[th], &sc, &ch);
            chth[th] += ch;
            ga_update(Gam, y, d, 0, n, jp, jn, invC, 0.5 * rm, sc, ga);
        }
    }
    double R = rmap, chs = 0.0;
    for (int k = 0; k < nt; k++) if (rth[k] > R) R = rth[k];
    for (int k = 0; k < nt; k++) chs += chth[k] * exp(rth[k] - R);
    chs += chmap * exp(rmap - R);
    double S = 2.0 * chs + (double) M * (n - 1) * exp(-R), f = -2.0 * epsp / S;
    for (int i = 0; i < n; i++) g[i] = 0.0;
    for (int k = 0; k < nt; k++) {
        double fk = f * exp(rth[k] - R);
        const double *ga = gacc + (size_t) k * n;
        for (int i = 0; i < n; i++) g[i] += fk * ga[i];
    }
    map_add(mp, f * exp(rmap - R), alpha, 0, n, g);
}

/* One step in two passes (n > 8192: a kernel's columns are read in row blocks): s_m and p_m
   from the pair's entries (O(M)), the global shift and normaliser, then Ga_m and g by row
   blocks. */
static void split_step(const mk_store_pair *pp, const mwu_opts *o, const double *y,
                       const double *rinv, double epsp, int jp, int jn, double *s, double *Ga,
                       const int *sk, int Ns, const mwu_runs *ru, mwu_map *mp, const double *alpha,
                       int n, int M, int nt, int B, int nb, double *gacc, double *buf,
                       double *qmax, double *csum, double *p, double *coef, double *g)
{
    for (int k = 0; k < nt; k++) qmax[k] = 0.0;
#ifdef _OPENMP
#pragma omp parallel for if (nt > 1 && Ns >= 512) num_threads(nt) schedule(static)
#endif
    for (int k = 0; k < Ns; k++) {
        int th = mk_thread_id(), m = sk[k];
        double dp, dn, *sb = buf + (size_t) th * 2 * B;
        mk_store_pair_diff(pp, m, jp, jp + 1, &dp, sb);
        mk_store_pair_diff(pp, m, jn, jn + 1, &dn, sb);
        s[k] = s_next(s[k], Ga + (size_t) k * n, jp, jn, rinv[k], dp, dn, o->invC);
        p[k] = epsp * sqrt(s[k]);
        if (p[k] > qmax[th]) qmax[th] = p[k];
    }
    double q = map_p(mp, rinv, o->invC, epsp, s, p);
    for (int k = 0; k < nt; k++) if (qmax[k] > q) q = qmax[k];
    double r = q > o->cutoff ? q : 0.0;
    for (int k = 0; k < nt; k++) csum[k] = 0.0;
#ifdef _OPENMP
#pragma omp parallel for if (nt > 1 && Ns >= 512) num_threads(nt) schedule(static)
#endif
    for (int k = 0; k < Ns; k++) {
        double sc, ch;
        hyp_scaled(p[k], r, &sc, &ch);
        coef[k] = sc;
        csum[mk_thread_id()] += ch;
    }
    double ch_sum = map_coef(mp, p, r, rinv, o->invC, coef);
    for (int k = 0; k < nt; k++) ch_sum += csum[k];
    double S = 2.0 * ch_sum + (double) M * (n - 1) * exp(-r), f = -2.0 * epsp / S;
    memset(gacc, 0, (size_t) nt * n * sizeof(double));
    const long ntask = (long) ru->nruns * nb;
#ifdef _OPENMP
#pragma omp parallel for if (nt > 1) num_threads(nt) schedule(static)
#endif
    for (long task = 0; task < ntask; task++) {
        int th = mk_thread_id();
        int r = (int) (task / nb), blk = (int) (task % nb);
        int k0 = ru->rstart[r], cnt = ru->rstart[r + 1] - k0;
        int i0 = blk * B, i1 = i0 + B < n ? i0 + B : n;
        double *dd = buf + (size_t) th * (ru->maxlen + 2) * B;
        mk_store_pair_diff_run(pp, k0, cnt, i0, i1, dd + 2 * B, B, dd);
        for (int k = k0; k < k0 + cnt; k++) {
            ga_update(Ga + (size_t) k * n + i0, y + i0, dd + (size_t) (k - k0 + 2) * B, i0,
                      i1 - i0, jp, jn, o->invC, 0.5 * rinv[k], f * coef[k],
                      gacc + (size_t) th * n + i0);
        }
    }
    for (int i = 0; i < n; i++) {
        double v = 0.0;
        for (int k = 0; k < nt; k++) v += gacc[(size_t) k * n + i];
        g[i] = v;
    }
    map_add(mp, f, alpha, 0, n, g);
}

/* One step with the rows shared among the threads, for few kernels (3 kernels on 50,000 points:
   loops over kernels would leave threads idle and serial passes over n between them). s_m, the
   shift and the weights first (O(M)); then one parallel pass over row blocks in which a block
   updates Ga_m of every kernel, writes its rows of g (summed over m in order: the same values
   for any number of threads) and finds its largest g in each class. The next pair is the
   oracle's: the first index of the largest g of each class. */
static void row_step(const mk_store_pair *pp, const mwu_opts *o, const double *y,
                     const double *rinv, double epsp, int jp, int jn, double *s, double *Ga,
                     const int *sk, int Ns, mwu_map *mp, const double *alpha,
                     int n, int M, int nt, int B, int nb, double *buf, double *p, double *coef,
                     double *bmax, int *barg, double *g, int *nextp, int *nextn)
{
    double q = map_p(mp, rinv, o->invC, epsp, s, p);
    for (int k = 0; k < Ns; k++) {
        int m = sk[k];
        double dp, dn;
        mk_store_pair_diff(pp, m, jp, jp + 1, &dp, buf);
        mk_store_pair_diff(pp, m, jn, jn + 1, &dn, buf);
        s[k] = s_next(s[k], Ga + (size_t) k * n, jp, jn, rinv[k], dp, dn, o->invC);
        p[k] = epsp * sqrt(s[k]);
        if (p[k] > q) q = p[k];
    }
    double r = q > o->cutoff ? q : 0.0, chs = 0.0;
    for (int k = 0; k < Ns; k++) {
        double ch;
        hyp_scaled(p[k], r, &coef[k], &ch);
        chs += ch;
    }
    chs += map_coef(mp, p, r, rinv, o->invC, coef);
    const double f = -2.0 * epsp / (2.0 * chs + (double) M * (n - 1) * exp(-r));
    const double invC = o->invC;
#ifdef _OPENMP
#pragma omp parallel for if (nt > 1) num_threads(nt) schedule(static)
#endif
    for (int blk = 0; blk < nb; blk++) {
        int th = mk_thread_id();
        int i0 = blk * B, i1 = i0 + B < n ? i0 + B : n, len = i1 - i0;
        double *d = buf + (size_t) th * 2 * B, *gb = g + i0;
        const double *yy = y + i0;
        for (int i = 0; i < len; i++) gb[i] = 0.0;
        for (int k = 0; k < Ns; k++) {
            int m = sk[k];
            mk_store_pair_diff(pp, m, i0, i1, d, d + B);
            ga_update(Ga + (size_t) k * n + i0, yy, d, i0, len, jp, jn, invC, 0.5 * rinv[k],
                      f * coef[k], gb);
        }
        map_add(mp, f, alpha + i0, i0, len, gb);
        int ip, in;
        class_max(gb, yy, len, &bmax[2 * blk], &ip, &bmax[2 * blk + 1], &in);
        barg[2 * blk] = ip < 0 ? -1 : i0 + ip;
        barg[2 * blk + 1] = in < 0 ? -1 : i0 + in;
    }
    int a = -1, b = -1;
    for (int blk = 0; blk < nb; blk++) {
        if (barg[2 * blk] >= 0 && (a < 0 || bmax[2 * blk] > g[a])) a = barg[2 * blk];
        if (barg[2 * blk + 1] >= 0 && (b < 0 || bmax[2 * blk + 1] > g[b])) b = barg[2 * blk + 1];
    }
    *nextp = a;
    *nextn = b;
}

/* The oracle's floor 2 sqrt(omega): g_j+ + g_j- below it certifies that no alpha (sum 1,
   y'alpha = 0) has max_m alpha' G_m alpha <= omega. The balanced uniform alpha has at most
   |alpha|^2 (1 + 1/C) <= omega / 2 (unit-trace kernels: eigenvalues <= 1), so with positive
   semidefinite kernels the oracle cannot fail at any C; omega = 1 (the paper's floor 2) unless
   the soft-margin term 1/C lifts that bound above 1/2 (inst/notes/NOTES-mwu.md). */
static double mwu_gfloor(int n, int npos, double invC)
{
    double a2 = 0.25 / npos + 0.25 / (n - npos), omega = 2.0 * a2 * (1.0 + invC);
    return 2.0 * sqrt(omega > 1.0 ? omega : 1.0);
}

/* The working state of a fit: the per-kernel arrays in position order (the state kernels in
   run order, then the mapped ones), Ga, the step design and its scratch. */
typedef struct {
    int n, M, Ns;      /* Ns kernels with O(n) state (Ga_k at Ga + k n) */
    int rows, B, nb, nt;   /* row design (few kernels) or kernel design; row block, threads */
    double epsp;       /* eps' = -log(1 - epsilon) */
    double *g, *s, *p, *coef, *rinv, *Ga;
    double *bmax, *gacc, *qmax, *csum, *rth, *chth, *buf;
    int *barg, *sk, *perm;
    mwu_map mp;
    mwu_runs ru;
    mk_store_pair pp;
} mwu_work;

/* Allocates the state (alpha and g at 0), splits the kernels into mapped and state ones,
   chooses the step design and plans the pair runs; counts: mapped and chained kernels. */
static void mwu_setup(const mk_store *st, const double *y, const double *tr, const mwu_opts *o,
                      double *alpha, mwu_work *w, int *counts)
{
    const int n = st->n, M = st->M;
    w->n = n;
    w->M = M;
    w->epsp = -log(1.0 - o->eps);
    w->g = (double *) R_alloc(n, sizeof(double));
    /* per-kernel arrays are in position order (set below) */
    w->s = (double *) R_alloc(M, sizeof(double));
    w->p = (double *) R_alloc(M, sizeof(double));
    w->coef = (double *) R_alloc(M, sizeof(double));
    w->rinv = (double *) R_alloc(M, sizeof(double));
    for (int i = 0; i < n; i++) { w->g[i] = 0.0; alpha[i] = 0.0; }
    for (int m = 0; m < M; m++) w->s[m] = 0.0;
    /* the kernels with O(n) state (sk, Ns of them, Ga_k at Ga + k n) and the mapped ones */
    w->sk = (int *) R_alloc(M, sizeof(int));
    map_init(st, y, o->fmap, &w->mp, w->sk, &w->Ns);
    const int Ns = w->Ns;
    w->Ga = (double *) R_alloc((size_t) n * (Ns > 0 ? Ns : 1), sizeof(double));
    memset(w->Ga, 0, (size_t) n * Ns * sizeof(double));

    /* few kernels: rows shared among the threads (row_step); else kernels shared, in one pass
       per step while a kernel's columns fit one block (fused_step), by row blocks beyond */
    const int rows = Ns <= 32;
    int B = rows ? (n < 1024 ? n : 1024) : (n <= 8192 ? n : 4096);
    if (!rows && o->block > 0 && o->block < n) B = o->block;   /* (tests: the split step) */
    const int nb = (n + B - 1) / B;
    /* work of a step: two exponentials per entry dominate (inst/notes/NOTES-mwu.md) */
    int nt = mk_threads_for(o->nthreads, (rows ? 200.0 : 60.0) * (double) (Ns + 1) * n);
    w->rows = rows; w->B = B; w->nb = nb; w->nt = nt;
    w->bmax = (double *) R_alloc(2 * (size_t) nb, sizeof(double));
    w->barg = (int *) R_alloc(2 * (size_t) nb, sizeof(int));
    w->gacc = (double *) R_alloc((size_t) nt * n, sizeof(double));
    w->qmax = (double *) R_alloc(nt, sizeof(double));
    w->csum = (double *) R_alloc(nt, sizeof(double));
    w->rth = (double *) R_alloc(nt, sizeof(double));
    w->chth = (double *) R_alloc(nt, sizeof(double));
    mk_store_pair_init(st, &w->pp);
    /* kernel runs: the pair differences of a run come from one pass (fused and split steps) */
    mwu_runs *ru = &w->ru;
    ru->rstart = (int *) R_alloc((size_t) Ns + 1, sizeof(int));
    ru->nruns = mk_store_pair_runs(&w->pp, w->sk, Ns, !rows && o->chain, ru->rstart);
    ru->maxlen = 1;
    for (int r = 0; r < ru->nruns; r++)
        if (ru->rstart[r + 1] - ru->rstart[r] > ru->maxlen)
            ru->maxlen = ru->rstart[r + 1] - ru->rstart[r];
    /* positions: the state kernels in run order, then the mapped ones, so that the steps read
       s, p, coef and rinv in order (a million kernels: 8 MB each, out of cache) */
    w->perm = (int *) R_alloc(M, sizeof(int));
    for (int k = 0; k < Ns; k++) w->perm[k] = w->sk[k];
    for (int i = 0; i < w->mp.nmap; i++) w->perm[Ns + i] = w->mp.km[i];
    w->mp.off = Ns;
    for (int k = 0; k < M; k++) w->rinv[k] = 1.0 / tr[w->perm[k]];
    counts[0] = w->mp.nmap;
    counts[1] = Ns - ru->nruns;   /* kernels whose columns come from a chain link */
    w->buf = (double *) R_alloc((size_t) nt * (ru->maxlen + 2) * B, sizeof(double));
}

/* The T iterations (oracle, step, history). Returns MWU_DONE, or MWU_INFEASIBLE with *iter the
   iterations done before the infeasible one. */
static int mwu_iterate(const mwu_opts *o, const double *y, double *alpha, mwu_work *w,
                       int *iter, mk_hist *h, mk_progress *prog)
{
    const int n = w->n, M = w->M, rows = w->rows, nt = w->nt;
    const double epsp = w->epsp;
    double *g = w->g, *s = w->s;
    int nextp = -1, nextn = -1;
    /* The row design's results do not depend on the number of threads, so it adapts it (on a
       busy machine, threads waiting at every step can be slower than one: NOTES-mwu.md).
       Windows of 32 steps time the full team and one thread, the faster runs for 16 windows,
       then both are timed again. */
    const int adapt = rows && nt > 1, W = 32;
    int nt_use = nt, phase = 0, win_it = 0, runs = 0;
    double win_t0 = mk_time(), t_full = 0.0;
    double t0 = mk_time(), last_int = 0.0;
    int status = MWU_DONE, t;
    for (t = 1; t <= o->T; t++) {
        /* oracle */
        int jp, jn;
        if (nextp >= 0 && nextn >= 0) { jp = nextp; jn = nextn; }
        else oracle(g, y, n, &jp, &jn);
        if (g[jp] + g[jn] < -o->gfloor) { status = MWU_INFEASIBLE; break; }
        map_move(&w->mp, alpha, jp, jn);
        alpha[jp] += 0.5;
        alpha[jn] += 0.5;
        if (rows) w->pp.nthreads = nt_use;
        mk_store_pair_set(&w->pp, jp, jn);

        if (rows) {
            row_step(&w->pp, o, y, w->rinv, epsp, jp, jn, s, w->Ga, w->sk, w->Ns, &w->mp, alpha,
                     n, M, nt_use, w->B, w->nb, w->buf, w->p, w->coef, w->bmax, w->barg, g,
                     &nextp, &nextn);
            if (adapt && ++win_it == W) {
                double now = mk_time(), per = (now - win_t0) / W;
                if (phase == 0) { t_full = per; nt_use = 1; phase = 1; }
                else if (phase == 1) { nt_use = per < t_full ? 1 : nt; phase = 2; runs = 0; }
                else if (++runs == 16) { nt_use = nt; phase = 0; }
                win_it = 0;
                win_t0 = now;
            }
        }
        else if (w->nb == 1) fused_step(&w->pp, o, y, w->rinv, epsp, jp, jn, s, w->Ga, &w->ru,
                                        &w->mp, alpha, w->p, w->coef, n, M, nt, w->gacc, w->buf,
                                        w->rth, w->chth, g);
        else split_step(&w->pp, o, y, w->rinv, epsp, jp, jn, s, w->Ga, w->sk, w->Ns, &w->ru,
                        &w->mp, alpha, n, M, nt, w->B, w->nb, w->gacc, w->buf, w->qmax, w->csum,
                        w->p, w->coef, g);

        /* history: iteration, time, objective max_m s_m of alpha / t, entropy of the weights */
        if (t % o->hist_every == 0 || t == o->T) {
            double smax = 0.0;
            for (int m = 0; m < M; m++) if (s[m] > smax) smax = s[m];
            double ent = weights_of(s, M, epsp, o->cutoff, w->coef);
            double row[5] = { (double) t, mk_time() - t0, smax / ((double) t * t), smax, ent };
            mk_hist_add(h, row);
            if (o->verbose)
                Rprintf("mwu %6d/%d  max s %.6g  entropy %.6g  (log M = %.6g)\n", t, o->T,
                        smax / ((double) t * t), ent, log((double) M));
        }
        mk_interrupt_every(&last_int, 0.05);
        mk_progress_tick(prog, t, o->T, NA_REAL, 0.0);
    }
    *iter = t - 1;
    return status;
}

/* The solution after T iterations: mu_m = -2 l_m / sqrt(s_m) of the last weights (scale-free),
   alpha / T; h = sum_m mu_m G_m alpha; bias and scale from its class sums. */
static void mwu_solution(const mwu_opts *o, const double *y, const double *tr, mwu_work *w,
                         double *alpha, double *mu, double *sigma, double *b, double *s_out,
                         double *gsum, double *hout)
{
    const int n = w->n, M = w->M, Ns = w->Ns, nt = w->nt;
    const double T = (double) o->T;
    double *coef = w->coef, *gacc = w->gacc;
    weights_of(w->s, M, w->epsp, o->cutoff, coef);
    double wsum = 0.0;
    for (int k = 0; k < M; k++) wsum += coef[k];
    for (int k = 0; k < M; k++) {
        int m = w->perm[k];
        mu[m] = coef[k] / wsum;
        sigma[m] = mu[m] * (1.0 / tr[m]);
        s_out[m] = w->s[k] / (T * T);
    }
    memset(gacc, 0, (size_t) nt * n * sizeof(double));
#ifdef _OPENMP
#pragma omp parallel for if (nt > 1) num_threads(nt) schedule(static)
#endif
    for (int k = 0; k < Ns; k++) {
        int th = mk_thread_id();
        const double *Gam = w->Ga + (size_t) k * n;
        double *ga = gacc + (size_t) th * n, wk = coef[k] / wsum / T;
        for (int i = 0; i < n; i++) ga[i] += wk * Gam[i];
    }
    /* the mapped kernels' sum_m mu_m G_m alpha / T, with alpha the sum of the steps */
    for (int i = 0; i < n; i++) hout[i] = 0.0;
    map_mix(&w->mp, coef, 1.0 / (wsum * T), w->rinv, o->invC);
    map_add(&w->mp, 1.0, alpha, 0, n, hout);
    for (int i = 0; i < n; i++) alpha[i] /= T;
    double P = 0.0, Q = 0.0;
    for (int i = 0; i < n; i++) {
        double hi = hout[i];
        for (int k = 0; k < nt; k++) hi += gacc[(size_t) k * n + i];
        hout[i] = hi;
        if (y[i] > 0) P += alpha[i] * hi; else Q += alpha[i] * hi;
    }
    /* P + Q = alpha' G alpha is 0 only when no margin exists (hard margin, classes that
       coincide): then h = 0 and the classifier is the constant 0, not 0 / 0 */
    double sc = P + Q > 0.0 ? P + Q : 1.0;
    *b = P + Q > 0.0 ? (Q - P) / (P + Q) : 0.0;
    for (int i = 0; i < n; i++) alpha[i] /= sc;
    *gsum = sc;
}

/* The fit. tr: traces of the M kernels. Out: alpha (n, the paper's alpha scaled for the
   decision function), mu (M, weights on the unit-trace kernels, sum 1), sigma (M, weights on the
   stored kernels: mu / tr), b, s (M, alpha' G_m alpha of the final alpha / T), *iter, *gsum (the
   scale P + Q), hout (n: sum_m mu_m G_m alpha / T, before the scaling), counts (mapped and
   chained kernels). Returns MWU_DONE or MWU_INFEASIBLE (at iteration *iter + 1). */
static int mwu_fit(const mk_store *st, const double *y, const double *tr, const mwu_opts *o,
                   double *alpha, double *mu, double *sigma, double *b, double *s_out, int *iter,
                   double *gsum, double *hout, int *counts, mk_hist *h, mk_progress *prog)
{
    mwu_work w;
    mwu_setup(st, y, tr, o, alpha, &w, counts);
    int status = mwu_iterate(o, y, alpha, &w, iter, h, prog);
    if (status != MWU_DONE) {
        for (int k = 0; k < st->M; k++) s_out[w.perm[k]] = w.s[k];
        for (int m = 0; m < st->M; m++) mu[m] = sigma[m] = NA_REAL;
        return status;
    }
    mk_progress_done(prog);
    mwu_solution(o, y, tr, &w, alpha, mu, sigma, b, s_out, gsum, hout);
    return MWU_DONE;
}

/* ------------------------------------------------------------------ .Call entry */

/* The traces of the M training kernels from their diagonals. */
static void mwu_traces(const mk_store *st, int nthreads, double *tr)
{
    int n = st->n, M = st->M;
    int nt = mk_threads_for(nthreads, (double) n * M * (st->kind == MK_STORE_DENSE ? 1 : 8));
    double *db = (double *) R_alloc((size_t) nt * n, sizeof(double));
    (void) nt;
#ifdef _OPENMP
#pragma omp parallel for if (nt > 1) num_threads(nt) schedule(static)
#endif
    for (int m = 0; m < M; m++) {
        double *d = db + (size_t) mk_thread_id() * n;
        mk_store_diag(st, m, d);
        double v = 0.0;
        for (int j = 0; j < n; j++) v += d[j];
        tr[m] = v;
    }
}

SEXP mkc_mwu(SEXP store, SEXP y, SEXP control, SEXP trace)
{
    mk_store st;
    mk_store_read(store, &st);
    if (!st.square) error("mwu: the kernel store must be a training store");
    int n = st.n, M = st.M, np = 0;
    if (!isReal(y) || LENGTH(y) != n) error("mwu: 'y' must have n doubles");
    const double *yy = REAL(y);
    for (int i = 0; i < n; i++) {
        if (yy[i] != 1.0 && yy[i] != -1.0) error("mwu: 'y' must be -1 or +1");
        np += yy[i] > 0;
    }
    if (np == 0 || np == n) error("mwu: both classes are needed");
    mwu_opts o;
    o.eps = mk_ctl_real(control, "epsilon");
    o.invC = mk_ctl_real(control, "invC");
    o.cutoff = mk_ctl_real(control, "cutoff");
    o.T = mk_ctl_int(control, "T");
    o.nthreads = mk_ctl_int(control, "nthreads");
    o.verbose = mk_ctl_int(control, "verbose");
    o.hist_every = mk_ctl_int(control, "hist_every");
    o.fmap = mk_ctl_int(control, "fmap");
    o.chain = mk_ctl_int(control, "chain");
    o.block = mk_ctl_int(control, "block");
    if (!(o.eps > 0.0 && o.eps < 1.0) || !(o.invC >= 0.0) || o.T < 1 || o.hist_every < 1)
        error("mwu: bad settings");
    o.gfloor = mwu_gfloor(n, np, o.invC);
    mk_progress prog;
    mk_progress_init(&prog, control);

    double *tr = (double *) R_alloc(M, sizeof(double));
    if (isNull(trace)) mwu_traces(&st, o.nthreads, tr);
    else {
        if (!isReal(trace) || LENGTH(trace) != M) error("mwu: 'trace' must have M doubles");
        memcpy(tr, REAL(trace), (size_t) M * sizeof(double));
    }
    for (int m = 0; m < M; m++) {
        if (tr[m] == 0.0)
            error("kernel %d is zero on the training data (trace 0): MWUMKL scales every kernel "
                  "to unit trace; drop it or check the precomputed kernels", m + 1);
        if (!(tr[m] > 0.0) || !R_FINITE(tr[m]))
            error("mwu: kernel %d has a trace that is not positive and finite", m + 1);
    }

    const char *nm[] = { "alpha", "sigma", "mu", "b", "s", "iterations", "status", "trace",
                         "history", "scale", "h", "kernels", NULL };
    SEXP out = mk_list_new(nm);
    SEXP a = allocVector(REALSXP, n);
    mk_list_set(out, "alpha", a);
    SEXP sg = allocVector(REALSXP, M);
    mk_list_set(out, "sigma", sg);
    SEXP mu = allocVector(REALSXP, M);
    mk_list_set(out, "mu", mu);
    SEXP s = allocVector(REALSXP, M);
    mk_list_set(out, "s", s);
    SEXP trs = allocVector(REALSXP, M);
    mk_list_set(out, "trace", trs);
    memcpy(REAL(trs), tr, (size_t) M * sizeof(double));
    SEXP hv = allocVector(REALSXP, n);
    mk_list_set(out, "h", hv);
    SEXP cnt = allocVector(INTSXP, 2);
    mk_list_set(out, "kernels", cnt);
    mk_hist h;
    mk_hist_init(&h, 5);
    double b = NA_REAL, gs = NA_REAL;
    int iter = 0;
    int status = mwu_fit(&st, yy, tr, &o, REAL(a), REAL(mu), REAL(sg), &b, REAL(s), &iter, &gs,
                         REAL(hv), INTEGER(cnt), &h, &prog);
    mk_list_set(out, "b", ScalarReal(b));
    mk_list_set(out, "iterations", ScalarInteger(iter));
    mk_list_set(out, "status", ScalarInteger(status));
    const char *hn[] = { "iteration", "time", "objective", "max_s", "entropy" };
    mk_list_set(out, "history", mk_hist_sexp(&h, hn));
    mk_list_set(out, "scale", ScalarReal(gs));
    UNPROTECT(1);
    return out;
}
