/* Empirical Bayesian MKL on a low-rank store: K_m = G_m G_m' + jitter I, so that
 *     Kbar = s I + F F',  F = [sqrt(d_m) G_m (d_m > 0), sqrt(d0) 1],  s = sigma2 + jitter sum d_m,
 * and with B = s I + F'F = L L' (k x k, k the columns of F), by Woodbury and the determinant lemma
 *     Kbar^{-1} u = (u - F B^{-1} F'u) / s,   log |Kbar| = (n - k) log s + log |B|.
 * The Gram matrix [G, 1]'[G, 1] is formed once (O(n R^2)); a step costs O(n R) for beta and the
 * products K_m beta, O(k^3) for B's factor and inverse, and for the traces t_m = tr(Kbar^{-1} K_m)
 * = (||G_m||_F^2 - ||L^{-1} F'G_m||_F^2) / s + jitter tr(Kbar^{-1}) O(k) per column of F (O(k^2)
 * per column of a kernel outside F): no n x n matrix
 * (NOTES-bayes.md). */
#include "bayes.h"

/* column c of [G, 1] */
static const double *lr_gcol(const eb_work *w, int c)
{
    return c < w->lr->R ? w->st->G + (size_t) c * w->n : w->lr->ones;
}

/* out[a] = sc[a] [G, 1][, col[a]]' u for the k columns of F; runs of adjacent columns of one
   scale (a kernel's block) by one BLAS product */
static void lr_ft(const eb_work *w, const double *u, double *out)
{
    const eb_lr *L = w->lr;
    int n = w->n, one = 1;
    double done = 1.0, dzero = 0.0;
    for (int a = 0; a < L->k;) {
        int e = a + 1;
        while (e < L->k && L->col[e] == L->col[e - 1] + 1 && L->col[e] < L->R &&
               L->sc[e] == L->sc[a]) e++;
        int r = e - a;
        F77_CALL(dgemv)("T", &n, &r, &done, lr_gcol(w, L->col[a]), &n, u, &one, &dzero, out + a,
                        &one FCONE);
        for (int b = a; b < e; b++) out[b] *= L->sc[a];
        a = e;
    }
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
void eb_lr_init(eb_work *w)
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
    L->col = (int *) R_alloc(R1, sizeof(int));
    L->ones = (double *) R_alloc(n, sizeof(double));
    for (int i = 0; i < n; i++) L->ones[i] = 1.0;
    double done = 1.0, dzero = 0.0;
    if (R > 0) {
        /* by panels of 256 columns and blocks of 1024 rows, with an interrupt check between
           them (O(n R^2) in all): the diagonal block by dsyrk, the part above it by dgemm */
        double tlast = mk_time();
        for (int j0 = 0; j0 < R; j0 += 256) {
            int jb = R - j0 < 256 ? R - j0 : 256;
            const double *Gj = st->G + (size_t) j0 * n;
            double *Cd = L->C + j0 + (size_t) j0 * R1, *Co = L->C + (size_t) j0 * R1;
            for (int i0 = 0; i0 < n; i0 += 1024) {
                int nb = n - i0 < 1024 ? n - i0 : 1024;
                double bt = i0 == 0 ? 0.0 : 1.0;
                F77_CALL(dsyrk)("U", "T", &jb, &nb, &done, Gj + i0, &n, &bt, Cd, &R1
                                FCONE FCONE);
                if (j0 > 0)
                    F77_CALL(dgemm)("T", "N", &j0, &jb, &nb, &done, st->G + i0, &n, Gj + i0, &n,
                                    &bt, Co, &R1 FCONE FCONE);
                mk_interrupt_every(&tlast, 0.02);
            }
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

/* After eb_lr_factor at p: t and q of the noise, the bias kernel and the kernels of w->idx, and
   K_m beta into w->kb. */
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
    if (w->o->bias_kernel) {
        p->tb = (n - lr_xnorm(w, L->R)) / s; p->qb = sb * sb;
        for (int i = 0; i < n; i++) w->ub[i] = sb;
    }
    /* a kernel out of F costs O(k^2 r_m) (lr_xnorm): an interrupt check per kernel */
    double tlast = mk_time();
    for (int j = 0; j < w->na; j++) {
        mk_interrupt_every(&tlast, 0.02);
        int m = w->idx[j], r = goff[m + 1] - goff[m];
        double tm = 0.0, qm = 0.0;
        for (int c = goff[m]; c < goff[m + 1]; c++)
            tm += L->C[c + (size_t) c * R1] - lr_xnorm(w, c);
        double *kb = w->kb + (size_t) m * n;
        memcpy(kb, w->beta, (size_t) n * sizeof(double));
        if (r > 0) {
            const double *G = w->st->G + (size_t) goff[m] * n;
            F77_CALL(dgemv)("T", &n, &r, &done, G, &n, w->beta, &one, &dzero, L->z, &one FCONE);
            for (int c = 0; c < r; c++) qm += L->z[c] * L->z[c];
            F77_CALL(dgemv)("N", &n, &r, &done, G, &n, L->z, &one, &L->jit, kb, &one FCONE);
        } else {
            for (int i = 0; i < n; i++) kb[i] *= L->jit;
        }
        p->t[m] = tm / s + L->jit * ts;
        p->q[m] = qm + L->jit * qs;
    }
    R_CheckUserInterrupt();
}

/* out = Kbar^{-1} u (after eb_lr_factor) */
void eb_lr_solve(const eb_work *w, const double *u, double *out)
{
    const eb_lr *L = w->lr;
    int n = w->n, k = L->k, one = 1, info = 0;
    memcpy(out, u, (size_t) n * sizeof(double));
    if (k > 0) {
        lr_ft(w, u, L->z);
        F77_CALL(dpotrs)("L", &k, &one, L->B, &k, L->z, &k, &info FCONE);
        lr_f(w, L->z, -1.0, out);
    }
    for (int i = 0; i < n; i++) out[i] /= L->s;
}
