/* SpicyMKL on a low-rank store (K_m = G_m G_m' + jitter I): kernel products, quadratic forms
 * and the first sweep's statistics through the factors in O(n r_m), and the Newton matrix as an
 * operator (sp_lrnm) for the CG solve, O(n sum r_a) per product instead of an n x n matrix,
 * preconditioned by Woodbury in the active kernels' ranks (sp_lrwb_*) while that is cheap.
 * The gap is that of the problem on the approximated kernels (NOTES-spicy.md).
 */
#include "spicy.h"

/* t = G' x on rows i0 <= i < i1 of an n x r factor, four columns per pass over x (the
   reference BLAS dgemv reads x once per column, unvectorised: most of a fit's time) */
MK_CLONES
static void sp_lr_gtx(int n, int r, const double *G, const double *x, int i0, int i1, double *t)
{
    int c = 0;
    for (; c + 4 <= r; c += 4) {
        const double *g0 = G + (size_t) c * n, *g1 = g0 + n, *g2 = g1 + n, *g3 = g2 + n;
        double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
        MK_SIMD_RED(s0, s1, s2, s3)
        for (int i = i0; i < i1; i++) {
            double xi = x[i];
            s0 += g0[i] * xi; s1 += g1[i] * xi; s2 += g2[i] * xi; s3 += g3[i] * xi;
        }
        t[c] = s0; t[c + 1] = s1; t[c + 2] = s2; t[c + 3] = s3;
    }
    for (; c < r; c++) {
        const double *g0 = G + (size_t) c * n;
        double s0 = 0.0;
        MK_SIMD_RED(s0)
        for (int i = i0; i < i1; i++) s0 += g0[i] * x[i];
        t[c] = s0;
    }
}

/* y += a G t on rows i0 <= i < i1, four columns per pass over y */
MK_CLONES
static void sp_lr_gax(int n, int r, double a, const double *G, const double *t, int i0, int i1,
                      double *y)
{
    int c = 0;
    for (; c + 4 <= r; c += 4) {
        const double *g0 = G + (size_t) c * n, *g1 = g0 + n, *g2 = g1 + n, *g3 = g2 + n;
        double a0 = a * t[c], a1 = a * t[c + 1], a2 = a * t[c + 2], a3 = a * t[c + 3];
        MK_SIMD
        for (int i = i0; i < i1; i++) y[i] += a0 * g0[i] + a1 * g1[i] + a2 * g2[i] + a3 * g3[i];
    }
    for (; c < r; c++) {
        const double *g0 = G + (size_t) c * n;
        double a0 = a * t[c];
        MK_SIMD
        for (int i = i0; i < i1; i++) y[i] += a0 * g0[i];
    }
}

/* y1 = K_m x1 and (x2 not NULL) y2 = K_m x2: G_m (G_m' x) + jitter x. Plain C and BLAS: safe in
   OpenMP regions (the thread's block of lrbuf). */
void sp_lr_mv2(const sp_state *S, int m, const double *x1, const double *x2, double *y1,
               double *y2)
{
    int n = S->n, r;
    const double *G = mk_store_factor(S->st, m, &r);
    double *t = sp_thread_buf(S->lrbuf, S->lrs), jit = S->st->jitter;
    for (int k = 0; k < 2; k++) {
        const double *x = k ? x2 : x1;
        double *y = k ? y2 : y1;
        if (!x) continue;
        for (int i = 0; i < n; i++) y[i] = jit * x[i];
        if (r == 0) continue;
        sp_lr_gtx(n, r, G, x, 0, n, t);
        sp_lr_gax(n, r, 1.0, G, t, 0, n, y);
    }
}

/* u'K_m u = |G_m'u|^2 + jitter |u|^2 */
double sp_lr_quad(const sp_state *S, int m, const double *u)
{
    int n = S->n, r;
    const double *G = mk_store_factor(S->st, m, &r);
    double *t = sp_thread_buf(S->lrbuf, S->lrs);
    double q = S->st->jitter * mk_dot(n, u, u);
    if (r == 0) return q;
    sp_lr_gtx(n, r, G, u, 0, n, t);
    return q + mk_dot(r, t, t);
}

/* The first sweep's statistics of kernel m (mk_kernel_stats): kv = K_m v, k1 = K_m 1,
   s1 = sqrt(1'K_m 1) and lc = sqrt(tr(P K_m P)) >= sqrt(lambda_max(P K_m P)) (the trace bound:
   ||G_m||_F^2 - |G_m'1|^2 / n + jitter (n - 1)). */
void sp_lr_stats(const sp_state *S, int m, const double *v, double *kv, double *s1, double *lc,
                 double *k1)
{
    int n = S->n, r, one = 1;
    const double *G = mk_store_factor(S->st, m, &r), *rn = S->lr.rn + (size_t) m * n;
    double *t = sp_thread_buf(S->lrbuf, S->lrs), done = 1.0, jit = S->st->jitter;
    sp_lr_mv2(S, m, v, NULL, kv, NULL);
    double fro = 0.0, t1 = 0.0;
    for (int i = 0; i < n; i++) fro += rn[i];
    for (int c = 0; c < r; c++) {
        const double *gc = G + (size_t) c * n;
        double sc = 0.0;
        for (int i = 0; i < n; i++) sc += gc[i];
        t[c] = sc;
        t1 += sc * sc;
    }
    for (int i = 0; i < n; i++) k1[i] = jit;
    if (r > 0) F77_CALL(dgemv)("N", &n, &r, &done, G, &n, t, &one, &done, k1, &one FCONE);
    *s1 = sp_sqrt0(t1 + jit * n);
    *lc = sp_sqrt0(fro - t1 / n + jit * (n - 1));
}

/* The low-rank Newton operator from the active kernels' coefficients (after sp_newton_coefs) */
void sp_lr_newton(sp_state *S)
{
    sp_lrnm *L = &S->lr;
    int n = S->n;
    L->na = S->na; L->act = S->act; L->c1 = S->hc1; L->c2 = S->hc2; L->gb = S->gammab;
    double js = 0.0;
    for (int a = 0; a < L->na; a++) js += L->c1[a];
    js *= S->st->jitter;
    for (int i = 0; i < n; i++) { L->dh[i] = S->hl[i] + js; L->fd[i] = L->gb; }
    for (int a = 0; a < L->na; a++) {
        const double *rn = L->rn + (size_t) L->act[a] * n, *w = L->KD + (size_t) L->act[a] * n;
        double c1 = L->c1[a], c2 = L->c2[a];
        for (int i = 0; i < n; i++) L->fd[i] += c1 * rn[i] + c2 * w[i] * w[i];
    }
    L->rows = 0; L->gathered = 0; L->wvalid = 0;
    L->tk = 1;
    for (int a = 0; a < L->na; a++)
        L->tk += S->st->goff[L->act[a] + 1] - S->st->goff[L->act[a]] + 1;
    L->lnt = sp_threads(S, 2.0 * n * L->tk);   /* short products: one thread (the regions' cost) */
}

double sp_nm_diag(const sp_state *S, int i)
{
    return S->lr.on ? S->lr.dh[i] + S->lr.fd[i] : mk_symmat_diag(&S->nm, i);
}

void sp_nm_set_diag(sp_state *S, int i, double v)
{
    if (S->lr.on) S->lr.dh[i] = v - S->lr.fd[i];
    else mk_symmat_set_diag(&S->nm, i, v);
}

/* q = H p (the operator, or the formed matrix on nt threads) */
void sp_nm_mv(sp_state *S, const double *p, double *q, int nt)
{
    if (S->lr.on) sp_lrnm_mv(&S->lr, p, q);
    else mk_symmat_mv(&S->nm, p, q, nt, S->qt);
}

/* The operator's factor passes by blocks of rows, on lnt threads (sp_lr_newton): t = U'x for
   U = [G_a, w_a, ..., 1] (the partial sums of each block in tp, added in block order), and
   y += sum_a G_a (s1_a t_a) + s2_a t_wa w_a by rows. One block is the serial BLAS order. */
static void sp_lr_rows(const sp_lrnm *L, int nb, int b, int *i0, int *i1)
{
    int n = L->n, h = (n / nb + 7) & ~7;
    *i0 = b * h < n ? b * h : n;
    *i1 = (b + 1) * h < n && b + 1 < nb ? (b + 1) * h : n;
}

static void sp_lr_ut_rows(const sp_lrnm *L, const double *x, int i0, int i1, double *t)
{
    int n = L->n, nr = i1 - i0, o = 0;
    double sx = 0.0;
    for (int a = 0; a < L->na; a++) {
        int r, m = L->act[a];
        const double *G = mk_store_factor(L->st, m, &r), *w = L->KD + (size_t) m * n;
        sp_lr_gtx(n, r, G, x, i0, i1, t + o);
        t[o + r] = mk_dot(nr, w + i0, x + i0);
        o += r + 1;
    }
    for (int i = i0; i < i1; i++) sx += x[i];
    t[o] = sx;
}

/* t (length L->tk) = U'x on the operator's threads */
static void sp_lr_ut(const sp_lrnm *L, const double *x, double *t)
{
    int nb = L->lnt, k = L->tk;
    if (nb <= 1) { sp_lr_ut_rows(L, x, 0, L->n, t); return; }
#ifdef _OPENMP
#pragma omp parallel for num_threads(nb) schedule(static, 1)
#endif
    for (int b = 0; b < nb; b++) {
        int i0, i1;
        sp_lr_rows(L, nb, b, &i0, &i1);
        sp_lr_ut_rows(L, x, i0, i1, L->tp + (size_t) b * k);
    }
    for (int j = 0; j < k; j++) {
        double v = 0.0;
        for (int b = 0; b < nb; b++) v += L->tp[(size_t) b * k + j];
        t[j] = v;
    }
}

/* y[i0..i1) += sum_a s1[a] G_a t_a + s2[a] t_wa w_a (t as sp_lr_ut lays it out) */
static void sp_lr_u_rows(const sp_lrnm *L, const double *t, const double *s1, const double *s2,
                         int i0, int i1, double *y)
{
    int n = L->n, o = 0;
    for (int a = 0; a < L->na; a++) {
        int r, m = L->act[a];
        const double *G = mk_store_factor(L->st, m, &r), *w = L->KD + (size_t) m * n;
        double e = s2[a] * t[o + r], sa = s1[a];
        if (sa != 0.0) sp_lr_gax(n, r, sa, G, t + o, i0, i1, y);
        if (e != 0.0) for (int i = i0; i < i1; i++) y[i] += e * w[i];
        o += r + 1;
    }
}

/* y = (xd x + c0 + sum_a s1[a] G_a t_a + s2[a] t_wa w_a) / dv by blocks of rows on the
   operator's threads (xd, dv: NULL for ones) */
static void sp_lr_u(const sp_lrnm *L, const double *t, const double *s1, const double *s2,
                    const double *xd, const double *x, double c0, const double *dv, double *y)
{
    int nb = L->lnt > 1 ? L->lnt : 1;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nb) schedule(static, 1) if (nb > 1)
#endif
    for (int b = 0; b < nb; b++) {
        int i0, i1;
        sp_lr_rows(L, nb, b, &i0, &i1);
        if (xd) for (int i = i0; i < i1; i++) y[i] = xd[i] * x[i] + c0;
        else for (int i = i0; i < i1; i++) y[i] = x[i] + c0;
        sp_lr_u_rows(L, t, s1, s2, i0, i1, y);
        if (dv) for (int i = i0; i < i1; i++) y[i] /= dv[i];
    }
}

/* q = H p for the operator (an mk_cg_op: ctx is the sp_lrnm) */
void sp_lrnm_mv(void *ctx, const double *p, double *q)
{
    const sp_lrnm *L = (const sp_lrnm *) ctx;
    double *t = L->tu;
    sp_lr_ut(L, p, t);
    for (int a = 0; a < L->na; a++) L->ts2[a] = L->c2[a];
    sp_lr_u(L, t, L->c1, L->ts2, L->dh, p, L->gb * t[L->tk - 1], NULL, q);
}

/* The rows of the scaled factors [sqrt(c1_a) G_a, sqrt(c2_a) w_a] at the coordinates with
   key 0 (the block mk_pcblock_prepare factors, when there are at most cap of them) */
void sp_lrnm_gather(sp_lrnm *L, const double *key, int cap)
{
    int n = L->n, nf = 0, rows = 0;
    L->rows = 0; L->gathered = 0;
    for (int a = 0; a < L->na; a++) rows += L->st->goff[L->act[a] + 1] - L->st->goff[L->act[a]] + 1;
    if (cap <= 0 || (size_t) rows * cap > L->gcap) return;
    for (int i = 0; i < n; i++) if (key[i] == 0.0 && ++nf > cap) return;
    if (nf == 0) return;
    nf = 0;
    for (int i = 0; i < n; i++) {
        L->pos[i] = -1;
        if (key[i] != 0.0) continue;
        double *g = L->gt + (size_t) nf * rows;
        L->pos[i] = nf++;
        for (int a = 0; a < L->na; a++) {
            int r, m = L->act[a];
            const double *G = mk_store_factor(L->st, m, &r);
            double s1 = sqrt(L->c1[a] > 0.0 ? L->c1[a] : 0.0);
            for (int c = 0; c < r; c++) *g++ = s1 * G[i + (size_t) c * n];
            *g++ = sqrt(L->c2[a] > 0.0 ? L->c2[a] : 0.0) * L->KD[(size_t) m * n + i];
        }
    }
    L->rows = rows; L->gathered = 1;
}

/* entry (i, j), i <= j, of the operator at gathered coordinates (mk_pcblock_prepare) */
double sp_lrnm_entry(const void *ctx, int i, int j)
{
    const sp_lrnm *L = (const sp_lrnm *) ctx;
    if (!L->gathered || L->pos[i] < 0 || L->pos[j] < 0)
        error("SpicyMKL: a low-rank Newton entry outside the gathered block");
    double v = L->gb + mk_dot(L->rows, L->gt + (size_t) L->pos[i] * L->rows,
                              L->gt + (size_t) L->pos[j] * L->rows);
    return i == j ? v + L->dh[i] : v;
}

/* Woodbury preconditioner of the operator (NOTES-spicy.md, "Low-rank store"): P = diag(wd) +
   U U' equals H where the loss or the jitter gives every coordinate a diagonal; P^{-1} costs two
   passes over the active factors and a solve with the wk x wk capacitance. */

/* wd_i: dh_i, floored at SP_WB_FLOOR times the diagonal of U U' (free coordinates, no jitter) */
static double sp_wb_diag(const sp_lrnm *L, int i)
{
    return L->dh[i] > L->wfl ? L->dh[i] : L->wfl;
}

/* a and b equal up to SP_WB_SAME (relative): one diagonal value for the capacitance */
static int sp_wb_same(double a, double b)
{
    return fabs(a - b) <= SP_WB_SAME * fabs(b);
}

static double sp_wb_s(double c)
{
    return c > 0.0 ? sqrt(c) : 0.0;
}

/* row i of U into u (wk) */
static void sp_wb_row(const sp_lrnm *L, int i, double *u)
{
    int n = L->n;
    for (int a = 0; a < L->na; a++) {
        int r, m = L->act[a];
        const double *G = mk_store_factor(L->st, m, &r);
        double s1 = sp_wb_s(L->c1[a]), *o = u + L->woff[a];
        for (int c = 0; c < r; c++) o[c] = s1 * G[i + (size_t) c * n];
        o[r] = sp_wb_s(L->c2[a]) * L->KD[(size_t) m * n + i];
    }
    u[L->wk - 1] = sp_wb_s(L->gb);
}

/* G_a'G_b and G_a'1, G_b'1 into the caches (a <= b, kernel numbers) */
static void sp_wb_gram(sp_lrnm *L, int ma, int mb)
{
    int n = L->n, M = L->st->M, R = L->st->goff[M], ra, rb;
    const double *Ga = mk_store_factor(L->st, ma, &ra), *Gb = mk_store_factor(L->st, mb, &rb);
    int mm[2] = { ma, mb };
    for (int j = 0; j < 2; j++) {
        int m = mm[j], r;
        if (L->gok[m * M + m] & 2) continue;
        const double *G = mk_store_factor(L->st, m, &r);
        for (int c = 0; c < r; c++) {
            double t = 0.0;
            for (int i = 0; i < n; i++) t += G[i + (size_t) c * n];
            L->g1[L->st->goff[m] + c] = t;
        }
        L->gok[m * M + m] |= 2;
    }
    if (L->gok[ma * M + mb] & 1) return;
    mk_crossprod(n, ra, rb, Ga, Gb, ma == mb,
                 L->gg + L->st->goff[ma] + (size_t) L->st->goff[mb] * R, R);
    L->gok[ma * M + mb] |= 1;
}

/* rows idx[0..nr) of U, row j scaled by se[j], into W (nr x wk, column-major) */
static void sp_wb_gather(const sp_lrnm *L, const int *idx, const double *se, int nr, double *W)
{
    int n = L->n;
    for (int a = 0; a < L->na; a++) {
        int r, m = L->act[a];
        const double *G = mk_store_factor(L->st, m, &r), *w = L->KD + (size_t) m * n;
        double s1 = sp_wb_s(L->c1[a]), s2 = sp_wb_s(L->c2[a]), *o = W + (size_t) L->woff[a] * nr;
        for (int c = 0; c < r; c++, o += nr) {
            const double *g = G + (size_t) c * n;
            for (int j = 0; j < nr; j++) o[j] = s1 * g[idx[j]] * se[j];
        }
        for (int j = 0; j < nr; j++) o[j] = s2 * w[idx[j]] * se[j];
    }
    double sb = sp_wb_s(L->gb), *o = W + (size_t) (L->wk - 1) * nr;
    for (int j = 0; j < nr; j++) o[j] = sb * se[j];
}

/* the capacitance's terms (1 / wd_i - 1 / v) u_i u_i' for the coordinates off the shared value
   v: their rows scaled by sqrt|1 / wd_i - 1 / v|, by sign, gathered by chunks into ws */
static void sp_wb_offv(sp_lrnm *L, double v, int chunk)
{
    int n = L->n, k = L->wk;
    double iv = 1.0 / v;
    for (int sg = 1; sg >= -1; sg -= 2) {
        int nr = 0;
        for (int i = 0; i <= n; i++) {
            if (i < n) {
                double e = 1.0 / L->wd[i] - iv;
                if (L->wd[i] == v || (sg > 0) != (e > 0.0)) continue;
                L->widx[nr] = i; L->wse[nr++] = sqrt(fabs(e));
                if (nr < chunk) continue;
            }
            if (nr == 0) continue;
            sp_wb_gather(L, L->widx, L->wse, nr, L->ws);
            mk_crossprod_acc(nr, nr, k, k, (double) sg, L->ws, L->ws, 1, L->wa, k);
            nr = 0;
        }
    }
}

/* the Gram blocks of the active kernels not cached yet: sum of r_a r_b (a <= b, half on the
   diagonal), their cost over 2 n flops */
static double sp_wb_gram_flops(const sp_lrnm *L)
{
    int M = L->st->M;
    double f = 0.0;
    for (int b = 0; b < L->na; b++)
        for (int a = 0; a <= b; a++) {
            int ma = L->act[a] < L->act[b] ? L->act[a] : L->act[b];
            int mb = L->act[a] < L->act[b] ? L->act[b] : L->act[a], ra, rb;
            if (L->gok[ma * M + mb] & 1) continue;
            mk_store_factor(L->st, ma, &ra);
            mk_store_factor(L->st, mb, &rb);
            f += (double) ra * rb * (ma == mb ? 0.5 : 1.0);
        }
    return f;
}

/* the capacitance from the most frequent diagonal value v: I + U'U / v from the cached Gram
   blocks (O(n wk na) for the w_a columns) plus (1 / wd_i - 1 / v) u_i u_i' for the other
   coordinates (sp_wb_offv); 0 when built, -1 when there are too many other coordinates or the
   Gram blocks not cached yet cost too much */
static int sp_wb_build_ref(sp_lrnm *L)
{
    int n = L->n, k = L->wk, M = L->st->M, R = L->st->goff[M];
    if (!L->gg) return -1;
    /* v: the most frequent of the first four distinct values (the hinge has three) */
    double val[4], v;
    int cnt[4] = { 0, 0, 0, 0 }, nv = 0, ne, best = 0;
    for (int i = 0; i < n; i++) {
        int j = 0;
        while (j < nv && !sp_wb_same(L->wd[i], val[j])) j++;
        if (j == nv && nv < 4) val[nv++] = L->wd[i];
        if (j < nv) cnt[j]++;
    }
    for (int j = 1; j < nv; j++) if (cnt[j] > cnt[best]) best = j;
    v = val[best]; ne = n - cnt[best];
    if ((double) ne * k > SP_WB_BUILD * n || sp_wb_gram_flops(L) > 2.0 * SP_WB_GRAMX * k)
        return -1;
    for (int i = 0; i < n; i++) if (sp_wb_same(L->wd[i], v)) L->wd[i] = v;
    int chunk = (int) (((size_t) n * (L->rmax + 1)) / (size_t) k);   /* rows per product */
    if (chunk < 1) return -1;
    double iv = 1.0 / v, sb = sp_wb_s(L->gb);
    memset(L->wa, 0, sizeof(double) * (size_t) k * k);
    for (int b = 0; b < L->na; b++) {
        int rb, mb = L->act[b], ob = L->woff[b];
        const double *wb = L->KD + (size_t) mb * n;
        mk_store_factor(L->st, mb, &rb);
        double s1b = sp_wb_s(L->c1[b]), s2b = sp_wb_s(L->c2[b]), sw = 0.0;
        for (int a = 0; a <= b; a++) {
            int ra, ma = L->act[a], oa = L->woff[a];
            const double *Ga = mk_store_factor(L->st, ma, &ra), *wa = L->KD + (size_t) ma * n;
            double s1a = sp_wb_s(L->c1[a]), s2a = sp_wb_s(L->c2[a]);
            sp_wb_gram(L, ma < mb ? ma : mb, ma < mb ? mb : ma);
            const double *gab = L->gg + L->st->goff[ma] + (size_t) L->st->goff[mb] * R;
            double e = s1a * s1b * iv;
            for (int c = 0; c < rb; c++)
                for (int q = 0; q < ra; q++)
                    L->wa[oa + q + (size_t) (ob + c) * k] = e * gab[q + (size_t) c * R];
            e = s1a * s2b * iv;   /* G_a' w_b */
            sp_lr_gtx(n, ra, Ga, wb, 0, n, L->wt);
            for (int q = 0; q < ra; q++) L->wa[oa + q + (size_t) (ob + rb) * k] = e * L->wt[q];
            if (a < b) {       /* w_a' G_b */
                const double *Gb = mk_store_factor(L->st, mb, &rb);
                e = s2a * s1b * iv;
                sp_lr_gtx(n, rb, Gb, wa, 0, n, L->wt);
                for (int c = 0; c < rb; c++) L->wa[oa + ra + (size_t) (ob + c) * k] = e * L->wt[c];
            }
            L->wa[oa + ra + (size_t) (ob + rb) * k] = s2a * s2b * iv * mk_dot(n, wa, wb);
        }
        for (int c = 0; c < rb; c++)
            L->wa[ob + c + (size_t) (k - 1) * k] = s1b * sb * iv * L->g1[L->st->goff[mb] + c];
        for (int i = 0; i < n; i++) sw += wb[i];
        L->wa[ob + rb + (size_t) (k - 1) * k] = s2b * sb * iv * sw;
    }
    L->wa[(size_t) k * k - 1] = L->gb * n * iv;
    sp_wb_offv(L, v, chunk);
    for (int j = 0; j < k; j++) L->wa[j + (size_t) j * k] += 1.0;
    return 0;
}

/* the capacitance I + U' diag(wd)^-1 U (upper triangle of wa): by a shared diagonal value
   (sp_wb_build_ref), else from scratch, O(n wk^2), when that costs at most SP_WB_BUILD / 2
   products (k <= SP_WB_BUILD); -1 when neither is cheap */
static int sp_wb_build(sp_lrnm *L)
{
    int n = L->n, k = 0, one = 1;
    double done = 1.0, dzero = 0.0, sb = sp_wb_s(L->gb), sw = 0.0, fm = 0.0;
    for (int a = 0; a < L->na; a++) {
        L->woff[a] = k;
        k += L->st->goff[L->act[a] + 1] - L->st->goff[L->act[a]] + 1;
    }
    L->wk = ++k;
    for (int i = 0; i < n; i++) fm += L->fd[i];
    L->wfl = SP_WB_FLOOR * fm / n;
    if (!(L->wfl > 0.0)) L->wfl = DBL_MIN;
    for (int i = 0; i < n; i++) {
        L->wd[i] = sp_wb_diag(L, i); L->wdh[i] = L->dh[i]; L->wn[i] = 1.0 / L->wd[i];
        sw += L->wn[i];
    }
    if (sp_wb_build_ref(L) == 0) { L->wbuilds++; return 0; }
    if (k > SP_WB_BUILD) return -1;
    L->wbuilds++; L->wfull++;
    memset(L->wa, 0, sizeof(double) * (size_t) k * k);
    for (int b = 0; b < L->na; b++) {
        int rb, mb = L->act[b], ob = L->woff[b];
        const double *Gb = mk_store_factor(L->st, mb, &rb), *wb = L->KD + (size_t) mb * n;
        double s1 = sp_wb_s(L->c1[b]), s2 = sp_wb_s(L->c2[b]);
        for (int c = 0; c < rb; c++) {
            const double *g = Gb + (size_t) c * n;
            double *o = L->ws + (size_t) c * n;
            for (int i = 0; i < n; i++) o[i] = s1 * g[i] * L->wn[i];
        }
        double *o = L->ws + (size_t) rb * n;
        for (int i = 0; i < n; i++) o[i] = s2 * wb[i] * L->wn[i];
        int cb = rb + 1;
        for (int a = 0; a <= b; a++) {
            int ra, ma = L->act[a], oa = L->woff[a];
            const double *Ga = mk_store_factor(L->st, ma, &ra), *wa = L->KD + (size_t) ma * n;
            double s1a = sp_wb_s(L->c1[a]), s2a = sp_wb_s(L->c2[a]);
            if (ra > 0)
                F77_CALL(dgemm)("T", "N", &ra, &cb, &n, &s1a, Ga, &n, L->ws, &n, &dzero,
                                L->wa + oa + (size_t) ob * k, &k FCONE FCONE);
            F77_CALL(dgemv)("T", &n, &cb, &done, L->ws, &n, wa, &one, &dzero, L->wt, &one FCONE);
            for (int c = 0; c < cb; c++) L->wa[oa + ra + (size_t) (ob + c) * k] = s2a * L->wt[c];
        }
        for (int c = 0; c < cb; c++) {
            const double *v = L->ws + (size_t) c * n;
            double t = 0.0;
            for (int i = 0; i < n; i++) t += v[i];
            L->wa[ob + c + (size_t) (k - 1) * k] = sb * t;
        }
    }
    L->wa[(size_t) k * k - 1] = L->gb * sw;
    for (int j = 0; j < k; j++) L->wa[j + (size_t) j * k] += 1.0;
    return 0;
}

/* whether the factor wc, updated by rank-one terms, still factors wa: R'R v = wa v for a fixed
   v to SP_WB_CHK (relative), O(k^2) */
static int sp_wb_check(sp_lrnm *L)
{
    int k = L->wk, one = 1;
    double done = 1.0, dzero = 0.0, *v = L->wx, *q = L->wv, e = 0.0, s = 0.0;
    for (int j = 0; j < k; j++) v[j] = 1.0 + (double) (j % 7) / 7.0;
    F77_CALL(dsymv)("U", &k, &done, L->wa, &k, v, &one, &dzero, q, &one FCONE);
    F77_CALL(dtrmv)("U", "N", "N", &k, L->wc, &k, v, &one FCONE FCONE FCONE);
    F77_CALL(dtrmv)("U", "T", "N", &k, L->wc, &k, v, &one FCONE FCONE FCONE);
    for (int j = 0; j < k; j++) { e += (v[j] - q[j]) * (v[j] - q[j]); s += q[j] * q[j]; }
    return e <= SP_WB_CHK * SP_WB_CHK * s;
}

/* the capacitance after the diagonal moved on few coordinates (the model rounds): a rank-one
   term per coordinate. Returns 0 when too many moved (a rebuild is cheaper), 2 when its factor
   wc was updated with it (at most k / SP_WB_UPD coordinates, checked), else 1 (to refactor);
   wfrej counts the updates refused (a downdate's pivot, the check) */
static int sp_wb_update(sp_lrnm *L)
{
    int n = L->n, k = L->wk, one = 1, nc = 0;
    for (int i = 0; i < n; i++)
        if (!sp_wb_same(sp_wb_diag(L, i), L->wd[i]) && (size_t) ++nc * k > (size_t) n) return 0;
    int fu = L->wcok && SP_WB_UPD * nc <= k;
    for (int i = 0; i < n; i++) {
        double d = sp_wb_diag(L, i);
        L->wdh[i] = L->dh[i];
        if (sp_wb_same(d, L->wd[i])) continue;
        double e = 1.0 / d - 1.0 / L->wd[i];
        L->wd[i] = d;
        if (e == 0.0) continue;
        sp_wb_row(L, i, L->wt);
        F77_CALL(dsyr)("U", &k, &e, L->wt, &one, L->wa, &k FCONE);
        if (!fu) continue;
        double se = sqrt(fabs(e));
        for (int j = 0; j < k; j++) L->wx[j] = se * L->wt[j];
        fu = sp_chol_r1(k, L->wc, L->wx, e > 0.0 ? 1.0 : -1.0) == 0;
        L->wfrej += !fu;
    }
    L->wupdates++;
    if (fu && nc == 0) return 2;   /* nothing moved: wc is still the factor */
    L->wcok = 0;
    if (!fu) return 1;
    if (!sp_wb_check(L)) { L->wfrej++; return 1; }
    L->wcok = 1;
    L->wfup++;
    return 2;
}

static int sp_wb_factor(sp_lrnm *L)
{
    int k = L->wk, info = 0;
    memcpy(L->wc, L->wa, sizeof(double) * (size_t) k * k);
    F77_CALL(dpotrf)("U", &k, L->wc, &k, &info FCONE);
    L->wcok = info == 0;
    return info;
}

/* the preconditioner for the operator's present coefficients and diagonal: 0 ready, else none
   (too many columns for the scratch, or no Cholesky factor: Jacobi and the free block) */
int sp_lrwb_prepare(sp_lrnm *L)
{
    if (!L->wa) return -1;
    int k = 1;
    for (int a = 0; a < L->na; a++) k += L->st->goff[L->act[a] + 1] - L->st->goff[L->act[a]] + 1;
    if (k > L->wkmax || (double) k * k > SP_WB_COST * L->n) return -1;
    if (L->wvalid && L->wk == k) {
        int u = sp_wb_update(L);
        if (u == 2 || (u == 1 && sp_wb_factor(L) == 0)) return 0;
    }
    L->wvalid = sp_wb_build(L) == 0;
    if (!L->wvalid) return -1;
    L->wdirect = -1;
    L->wfail = sp_wb_factor(L) != 0;
    return L->wfail ? -1 : 0;
}

/* z = P^{-1} r = diag(wd)^-1 (r - U (I + U' diag(wd)^-1 U)^{-1} U' diag(wd)^-1 r) (an mk_cg_op:
   ctx is the sp_lrnm) */
void sp_lrwb_apply(void *ctx, const double *r, double *z)
{
    sp_lrnm *L = (sp_lrnm *) ctx;
    int n = L->n, k = L->wk, one = 1, info = 0;
    double *s = L->wn, *t = L->wt, sb = sp_wb_s(L->gb);
    for (int i = 0; i < n; i++) s[i] = r[i] / L->wd[i];
    sp_lr_ut(L, s, t);
    for (int a = 0; a < L->na; a++) {
        int ra, o = L->woff[a];
        mk_store_factor(L->st, L->act[a], &ra);
        for (int c = 0; c < ra; c++) t[o + c] *= sp_wb_s(L->c1[a]);
        t[o + ra] *= sp_wb_s(L->c2[a]);
        L->ts1[a] = -sp_wb_s(L->c1[a]);
        L->ts2[a] = -sp_wb_s(L->c2[a]);
    }
    t[k - 1] *= sb;
    F77_CALL(dpotrs)("U", &k, &one, L->wc, &k, t, &k, &info FCONE);
    sp_lr_u(L, t, L->ts1, L->ts2, NULL, r, -sb * t[k - 1], L->wd, z);
}

/* The Woodbury solve without CG: d = P^{-1} b (b = -g). P differs from H only where the floor
   raised the diagonal (by at most SP_WB_FLOOR relative), so H d = b - (wd - dh) d up to the
   solve's rounding; r = b - H d and hx = H d (not NULL) from that identity, no product with H.
   The first solve after each capacitance build checks the identity with a product (it held to
   1e-6 of |b| where CG needs 1e-2: NOTES-spicy.md); if it fails, CG until the next build.
   Returns 1 when |r| <= target (the solve is done), else 0 (d and r to be reset by CG). */
int sp_lrwb_direct(sp_lrnm *L, const double *g, double *d, double *r, double *hx, double target)
{
    int n = L->n;
    if (L->wdirect == 0) return 0;
    for (int i = 0; i < n; i++) r[i] = -g[i];
    sp_lrwb_apply(L, r, d);
    double rr = 0.0;
    for (int i = 0; i < n; i++) {
        double e = (L->wd[i] - L->dh[i]) * d[i];
        rr += e * e;
        r[i] = e;
    }
    if (L->wdirect < 0) {
        double *q = L->ws, dq = 0.0;
        sp_lrnm_mv(L, d, q);
        for (int i = 0; i < n; i++) {
            double e = (-g[i] - q[i]) - r[i];
            dq += e * e;
        }
        L->wdirect = sqrt(dq) <= SP_WB_DIRECT * target;
        L->wchecks++;
        if (!L->wdirect) return 0;
    }
    if (!(sqrt(rr) <= target)) return 0;
    if (hx) for (int i = 0; i < n; i++) hx[i] = -g[i] - r[i];
    L->wdirects++;
    return 1;
}

/* The squared row norms of each factor (n x M), the per-thread scratch and the operator's
   vectors; the free block's gathered rows are sized by sp_newton_alloc. */
void sp_lr_alloc(sp_state *S)
{
    int n = S->n, M = S->M, rmax = 1;
    sp_lrnm *L = &S->lr;
    L->on = 1; L->n = n; L->st = S->st; L->KD = S->KD;
    for (int m = 0; m < M; m++) {
        int r = S->st->goff[m + 1] - S->st->goff[m];
        if (r > rmax) rmax = r;
    }
    L->rmax = rmax;
    S->lrs = 2 * (size_t) rmax;
    S->lrbuf = (double *) R_alloc((size_t) S->nt_max * S->lrs, sizeof(double));
    double *rn = (double *) R_alloc((size_t) n * M, sizeof(double));
    for (int m = 0; m < M; m++) {
        int r;
        const double *G = mk_store_factor(S->st, m, &r);
        double *o = rn + (size_t) m * n;
        for (int i = 0; i < n; i++) o[i] = 0.0;
        for (int c = 0; c < r; c++)
            for (int i = 0; i < n; i++) o[i] += G[i + (size_t) c * n] * G[i + (size_t) c * n];
    }
    L->rn = rn;
    L->dh = (double *) R_alloc(n, sizeof(double));
    L->fd = (double *) R_alloc(n, sizeof(double));
    L->pos = (int *) R_alloc(n, sizeof(int));
    /* the row blocks' partial sums U'x, one block per thread */
    size_t kt = (size_t) S->st->goff[M] + M + 1;
    L->tp = (double *) R_alloc((size_t) S->nt_max * kt, sizeof(double));
    L->tu = (double *) R_alloc(kt, sizeof(double));
    L->ts1 = (double *) R_alloc(M, sizeof(double));
    L->ts2 = (double *) R_alloc(M, sizeof(double));
    /* the Woodbury preconditioner for up to all kernels active */
    int k = S->st->goff[M] + M + 1;
    L->wkmax = k;
    L->woff = (int *) R_alloc(M, sizeof(int));
    L->wa = (double *) R_alloc((size_t) k * k, sizeof(double));
    L->wc = (double *) R_alloc((size_t) k * k, sizeof(double));
    L->wt = (double *) R_alloc(k, sizeof(double));
    L->wd = (double *) R_alloc(n, sizeof(double));
    L->wdh = (double *) R_alloc(n, sizeof(double));
    L->wn = (double *) R_alloc(n, sizeof(double));
    L->wse = (double *) R_alloc(n, sizeof(double));
    L->widx = (int *) R_alloc(n, sizeof(int));
    L->ws = (double *) R_alloc((size_t) n * (rmax + 1), sizeof(double));
    L->wx = (double *) R_alloc(4 * (size_t) k, sizeof(double));
    L->wv = L->wx + 3 * (size_t) k;
    L->wcok = 0; L->wfup = 0; L->wfrej = 0;
    L->wvalid = 0; L->wfail = 0; L->wbuilds = 0; L->wupdates = 0; L->wfull = 0; L->wused = 0;
    L->wdirect = -1; L->wdirects = 0; L->wchecks = 0;
    /* the Gram caches, R x R (up to SP_WB_GRAM doubles; else every build from scratch) */
    size_t R = (size_t) S->st->goff[M];
    L->gg = NULL;
    if (R * R <= SP_WB_GRAM) {
        L->gg = (double *) R_alloc(R * R > 0 ? R * R : 1, sizeof(double));
        L->g1 = (double *) R_alloc(R > 0 ? R : 1, sizeof(double));
        L->gok = (int *) R_alloc((size_t) M * M, sizeof(int));
        memset(L->gok, 0, sizeof(int) * (size_t) M * M);
    }
}
