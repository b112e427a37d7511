/* Empirical Bayesian MKL on a low-rank store: K_m = G_m G_m' + jitter I, so that
 *     Kbar = s I + F F',  F = [sqrt(d_m) G_m (d_m > 0), sqrt(d0) 1],  s = sigma2 + jitter sum d_m,
 * and with B = s I + F'F = L L' (k x k, k the columns of F), by Woodbury and the determinant lemma
 *     Kbar^{-1} u = (u - F B^{-1} F'u) / s,   log |Kbar| = (n - k) log s + log |B|.
 * The Gram matrix [G, 1]'[G, 1] is formed once (O(n R^2)); a step costs O(n R) for beta and
 * [G, 1]'beta, O(k^3) for B's factor and inverse, and for the traces t_m = tr(Kbar^{-1} K_m)
 * = (||G_m||_F^2 - ||L^{-1} F'G_m||_F^2) / s + jitter tr(Kbar^{-1}) O(k) per column of F (O(k^2)
 * per column of a kernel outside F); the scoring system comes from the Gram matrix alone: no
 * n x n matrix (NOTES-bayes.md). */
#include "bayes.h"

/* column c of [G, 1] */
static const double *lr_gcol(const eb_work *w, int c)
{
    return c < w->lr->R ? w->st->G + (size_t) c * w->n : w->lr->ones;
}

/* out += f F v (v: k, scaled by sc inside) */
static void lr_f(const eb_work *w, const double *v, double f, double *out)
{
    const eb_lr *L = w->lr;
    int n = w->n, one = 1;
    for (int a = 0; a < L->k;) {
        int e = a + 1;
        while (e < L->k && L->col[e] == L->col[e - 1] + 1 && L->col[e] < L->R &&
               L->sc[e] == L->sc[a]) e++;
        int r = e - a;
        double al = f * L->sc[a];
        F77_CALL(dgemv)("N", &n, &r, &al, lr_gcol(w, L->col[a]), &n, v + a, &one, &(double){1.0},
                        out, &one FCONE);
        a = e;
    }
}

/* The Gram matrix of [G, 1] (both triangles), [G, 1]'y, and the scratch of the steps */
void eb_lr_init(eb_work *w, int nv)
{
    eb_lr *L = (eb_lr *) R_alloc(1, sizeof(eb_lr));
    memset(L, 0, sizeof(*L));
    w->lr = L;
    const mk_store *st = w->st;
    int n = w->n, R = st->goff[w->M], R1 = R + 1, one = 1;
    size_t RR = (size_t) R1 * R1;
    L->R = R;
    L->jit = st->jitter;
    L->C = (double *) R_alloc(RR, sizeof(double));
    L->B = (double *) R_alloc(RR, sizeof(double));
    L->pos = (int *) R_alloc(R1, sizeof(int));
    L->Li = (double *) R_alloc(RR, sizeof(double));
    L->Gy = (double *) R_alloc(R1, sizeof(double));
    L->z = (double *) R_alloc(R1, sizeof(double));
    L->v = (double *) R_alloc(R1, sizeof(double));
    L->sc = (double *) R_alloc(R1, sizeof(double));
    L->gb = (double *) R_alloc(R1, sizeof(double));
    L->V = (double *) R_alloc((size_t) R1 * nv, sizeof(double));
    L->Y = (double *) R_alloc((size_t) R1 * nv, sizeof(double));
    L->cc = (double *) R_alloc(nv, sizeof(double));
    L->col = (int *) R_alloc(R1, sizeof(int));
    L->ones = (double *) R_alloc(n, sizeof(double));
    for (int i = 0; i < n; i++) L->ones[i] = 1.0;
    double done = 1.0, dzero = 0.0;
    if (R > 0) {
        /* the upper triangle by blocks of 1024 rows (mk_crossprod_acc, linalg.c: about ten
           times the reference BLAS's dsyrk and dgemm, which took about 29 s of CPU on Adult;
           NOTES-bayes.md), with an interrupt check between them (O(n R^2) in all) */
        double tlast = mk_time();
        for (size_t q = 0; q < (size_t) R1 * R; q++) L->C[q] = 0.0;
        for (int i0 = 0; i0 < n; i0 += 1024) {
            int nb = n - i0 < 1024 ? n - i0 : 1024;
            mk_crossprod_acc(nb, n, R, R, 1.0, st->G + i0, st->G + i0, 1, L->C, R1);
            mk_interrupt_every(&tlast, 0.02);
        }
        F77_CALL(dgemv)("T", &n, &R, &done, st->G, &n, L->ones, &one, &dzero,
                        L->C + (size_t) R * R1, &one FCONE);
        F77_CALL(dgemv)("T", &n, &R, &done, st->G, &n, w->y, &one, &dzero, L->Gy, &one FCONE);
    }
    L->C[RR - 1] = (double) n;
    for (int j = 0; j < R1; j++)
        for (int i = j + 1; i < R1; i++) L->C[i + (size_t) j * R1] = L->C[j + (size_t) i * R1];
    double sy = 0.0;
    for (int i = 0; i < n; i++) sy += w->y[i];
    L->Gy[R] = sy;
    R_CheckUserInterrupt();
}

/* mean diagonal of K_m: ||G_m||_F^2 / n + jitter */
void eb_lr_scales(eb_work *w)
{
    const eb_lr *L = w->lr;
    int R1 = L->R + 1;
    for (int m = 0; m < w->M; m++) {
        double s = 0.0;
        for (int c = w->st->goff[m]; c < w->st->goff[m + 1]; c++) s += L->C[c + (size_t) c * R1];
        w->scale[m] = s / w->n + L->jit;
    }
}

/* F at p, B = s I + F'F and its Cholesky factor, beta = Kbar^{-1} y and p->J. Returns LAPACK's
   info (0: ok). */
int eb_lr_factor(eb_work *w, eb_point *p)
{
    eb_lr *L = w->lr;
    const int *goff = w->st->goff;
    int n = w->n, R1 = L->R + 1, k = 0, info = 0, one = 1;
    double dsum = 0.0;
    for (int m = 0; m < w->M; m++) {
        if (!(p->d[m] > 0.0)) continue;
        double sq = sqrt(p->d[m]);
        dsum += p->d[m];
        for (int c = goff[m]; c < goff[m + 1]; c++) { L->col[k] = c; L->sc[k++] = sq; }
    }
    if (w->o->bias_kernel && p->d0 > 0.0) { L->col[k] = L->R; L->sc[k++] = sqrt(p->d0); }
    L->k = k;
    for (int c = 0; c <= L->R; c++) L->pos[c] = -1;
    for (int a = 0; a < k; a++) L->pos[L->col[a]] = a;
    double s = p->s2 + L->jit * dsum;
    L->s = s;
    w->factorizations++;
    for (int b = 0; b < k; b++)
        for (int a = b; a < k; a++)
            L->B[a + (size_t) b * k] = L->sc[a] * L->sc[b] *
                L->C[L->col[a] + (size_t) L->col[b] * R1] + (a == b ? s : 0.0);
    if (k > 0) info = eb_chol_checked(L->B, k);   /* O(k^3): checks per block */
    if (info != 0 || !(s > 0.0)) { p->J = R_PosInf; return info != 0 ? info : 1; }
    for (int a = 0; a < k; a++) L->z[a] = L->sc[a] * L->Gy[L->col[a]];
    if (k > 0) F77_CALL(dpotrs)("L", &k, &one, L->B, &k, L->z, &k, &info FCONE);
    memcpy(w->beta, w->y, (size_t) n * sizeof(double));
    lr_f(w, L->z, -1.0, w->beta);
    w->passes++;
    double yb = 0.0, ld = 0.5 * (n - k) * log(s);
    for (int i = 0; i < n; i++) { w->beta[i] /= s; yb += w->y[i] * w->beta[i]; }
    for (int a = 0; a < k; a++) ld += log(L->B[a + (size_t) a * k]);
    p->J = 0.5 * yb + ld;
    return 0;
}

/* |L^{-1} F'g_c|^2 for column c of [G, 1] (after L^{-1} is in Li). A column of F (position a):
   F'g_c = (B - s I) e_a / sc_a, so L^{-1} F'g_c = (L' e_a - s L^{-1} e_a) / sc_a in O(k); another
   column by a triangular solve, O(k^2). */
static double lr_xnorm(const eb_work *w, int c)
{
    const eb_lr *L = w->lr;
    int k = L->k, a = L->pos[c], R1 = L->R + 1, one = 1;
    double e = 0.0, s = L->s;
    if (a >= 0) {
        for (int b = 0; b < k; b++) {
            double x = (b <= a ? L->B[a + (size_t) b * k] : 0.0) -
                (b >= a ? s * L->Li[b + (size_t) a * k] : 0.0);
            e += x * x;
        }
        return e / (L->sc[a] * L->sc[a]);
    }
    if (k == 0) return 0.0;
    for (int b = 0; b < k; b++) L->v[b] = L->sc[b] * L->C[L->col[b] + (size_t) c * R1];
    F77_CALL(dtrsv)("L", "N", "N", &k, L->B, &k, L->v, &one FCONE FCONE FCONE);
    for (int b = 0; b < k; b++) e += L->v[b] * L->v[b];
    return e;
}

/* After eb_lr_factor at p: t and q of the noise, the bias kernel and the kernels of w->idx,
   and their blocks of [G, 1]'beta (one pass over their factors). */
void eb_lr_stats(eb_work *w, eb_point *p)
{
    eb_lr *L = w->lr;
    const int *goff = w->st->goff;
    int n = w->n, k = L->k, R1 = L->R + 1, one = 1, info = 0;
    double s = L->s, done = 1.0, dzero = 0.0;
    /* tr(Kbar^{-1}) = (n - k + s tr(B^{-1})) / s, tr(B^{-1}) = ||L^{-1}||_F^2 */
    double trb = 0.0;
    if (k > 0) {
        for (int b = 0; b < k; b++)
            for (int a = b; a < k; a++) L->Li[a + (size_t) b * k] = L->B[a + (size_t) b * k];
        info = eb_trinv_checked(L->Li, k);
        for (int b = 0; b < k; b++)
            for (int a = b; a < k; a++) {
                double e = L->Li[a + (size_t) b * k];
                trb += e * e;
            }
    }
    double ts = (n - k + s * trb) / s, qs = 0.0, sb = 0.0;
    for (int i = 0; i < n; i++) { qs += w->beta[i] * w->beta[i]; sb += w->beta[i]; }
    p->ts = ts; p->qs = qs;
    p->tb = p->qb = 0.0;
    L->gb[L->R] = sb;
    if (w->o->bias_kernel) { p->tb = (n - lr_xnorm(w, L->R)) / s; p->qb = sb * sb; }
    /* a kernel out of F costs O(k^2 r_m) (lr_xnorm): an interrupt check per kernel */
    double tlast = mk_time();
    for (int j = 0; j < w->na; j++) {
        mk_interrupt_every(&tlast, 0.02);
        int m = w->idx[j], r = goff[m + 1] - goff[m];
        double tm = 0.0, qm = 0.0, *z = L->gb + goff[m];
        for (int c = goff[m]; c < goff[m + 1]; c++)
            tm += L->C[c + (size_t) c * R1] - lr_xnorm(w, c);
        if (r > 0) {
            const double *G = w->st->G + (size_t) goff[m] * n;
            F77_CALL(dgemv)("T", &n, &r, &done, G, &n, w->beta, &one, &dzero, z, &one FCONE);
            for (int c = 0; c < r; c++) qm += z[c] * z[c];
        }
        p->t[m] = tm / s + L->jit * ts;
        p->q[m] = qm + L->jit * qs;
    }
    w->passes++;
    R_CheckUserInterrupt();
}

/* e'x for the e of variance v in the scoring system (below): G_m'beta on kernel m's block, 1'beta
   on the ones column for the bias, none for the noise */
static double lr_edot(const eb_work *w, int v, const double *x)
{
    const eb_lr *L = w->lr;
    double e = 0.0;
    if (v >= 0)
        for (int c = w->st->goff[v]; c < w->st->goff[v + 1]; c++) e += L->gb[c] * x[c];
    else if (v == EB_VAR_BIAS) e = L->gb[L->R] * x[L->R];
    return e;
}

/* The scoring system H = Q / 2, H_ab = u_a' Kbar^{-1} u_b / 2 over the nf free variances w->var
   (after eb_lr_stats at the factorised point p), from the Gram matrix C alone: u_a = P_a beta =
   [G, 1] e_a + c_a beta with e_a = G_m'beta on kernel m's block and c_a = jitter, e_a = 0 and
   c_a = 1 for the noise, e_a = (1'beta) on the ones column and c_a = 0 for the bias, so that
   u_a'u_b = e_a'C e_b + c_b e_a'g + c_a e_b'g + c_a c_b beta'beta (g = [G, 1]'beta) and
   F'u_a = sc (C e_a + c_a g)[col]; then u_a' Kbar^{-1} u_b = (u_a'u_b - y_a'y_b) / s with
   y_a = L^{-1} F'u_a. O(R^2 + k^2 nf), no pass over the n rows, where a product with Kbar^{-1}
   per variance read the factors twice (NOTES-bayes.md). */
void eb_lr_scoring_q(const eb_work *w, const eb_point *p, int nf, double *H)
{
    const eb_lr *L = w->lr;
    const int *goff = w->st->goff;
    int R = L->R, R1 = R + 1, k = L->k, one = 1;
    double done = 1.0, dzero = 0.0, *V = L->V, *Y = L->Y, *cc = L->cc;
    for (int a = 0; a < nf; a++) {
        int v = w->var[a];
        double *Va = V + (size_t) a * R1;
        int r = v >= 0 ? goff[v + 1] - goff[v] : 0;
        cc[a] = v >= 0 ? L->jit : (v == EB_VAR_NOISE ? 1.0 : 0.0);
        if (r > 0)
            F77_CALL(dgemv)("N", &R1, &r, &done, L->C + (size_t) goff[v] * R1, &R1,
                            L->gb + goff[v], &one, &dzero, Va, &one FCONE);
        else if (v == EB_VAR_BIAS)
            for (int i = 0; i < R1; i++) Va[i] = L->gb[R] * L->C[i + (size_t) R * R1];
        else
            for (int i = 0; i < R1; i++) Va[i] = 0.0;
        for (int b = 0; b < k; b++)
            Y[b + (size_t) a * k] = L->sc[b] * (Va[L->col[b]] + cc[a] * L->gb[L->col[b]]);
    }
    if (k > 0)
        F77_CALL(dtrsm)("L", "L", "N", "N", &k, &nf, &done, L->B, &k, Y, &k
                        FCONE FCONE FCONE FCONE);
    for (int a = 0; a < nf; a++) {
        double ega = lr_edot(w, w->var[a], L->gb);
        for (int b = a; b < nf; b++) {
            double yy = 0.0, eCe = lr_edot(w, w->var[a], V + (size_t) b * R1),
                egb = lr_edot(w, w->var[b], L->gb);
            for (int c = 0; c < k; c++) yy += Y[c + (size_t) a * k] * Y[c + (size_t) b * k];
            double uu = eCe + cc[b] * ega + cc[a] * egb + cc[a] * cc[b] * p->qs;
            H[a + b * nf] = H[b + a * nf] = 0.5 * (uu - yy) / L->s;
        }
    }
}
