/* The SVM-family driver: SimpleMKL, HessianMKL and lp-norm MKL share this outer loop.
 *
 * J(d) = max_a sum(a) - (1/2) sum_m d_m v_m(a) over 0 <= a <= C, y'a = 0 is the optimal C-SVM
 * dual value on K(d); the driver evaluates it by the SMO warm-started from the previous alpha,
 * certifies every iterate by the relative duality gap, and asks a step strategy (the table
 * below) for the next point. Converged means gap <= tol, decided here and nowhere else.
 */
#include "mklearn.h"
#include <math.h>
#include <float.h>
#include <string.h>

/* The strategies, by method code (0 simple, 1 hessian, 2 lp). */
static const mk_sf_strategy strategies[] = {
    { "simple", 1, 1, 0, mk_sf_simple_init, NULL, mk_sf_simple_step },
    { "hessian", 1, 0, 1, mk_sf_hessian_init, NULL, mk_sf_hessian_step },
    { "lp", 0, 0, 0, mk_sf_lp_init, mk_sf_lp_start, mk_sf_lp_step },
};

/* Rebuild the base kernel B = K(d) from the store every this many outer iterations (the
   strategies carry it with O(n^2) updates in between; this bounds the rounding drift). */
#define SF_REBUILD 25
/* The loosest SMO tolerance the retry rule ends at. */
#define SF_SVM_TOL_MIN 1e-12

typedef struct {
    double *Kd;          /* kernel of the last SVM solve (n x n) */
    double *B, *KD;      /* line kernel: base K(d) and direction (n x n each; line strategies) */
    double *KD2;         /* the tentative direction of the last J_probe */
    double *grad, *ya;   /* SMO gradient, signed alpha (n) */
    int nth2;            /* threads for an O(n^2) elementwise pass */
    int kd_at_d;         /* Kd holds K(c->d) (the driver's own solve at the current point) */
    double last_check;   /* time of the last user-interrupt check */
    /* gradient screening (strategies with screen = 1): per kernel a reference point R_m with
       KR_m = K_m R_m, K1_m = K_m 1 and the constants of the bound of v_m(x) = x'K_m x
       (mk_kbound, kstats.c: exact along 1 and R_m, lambda_max(P K_m P) for the rest) */
    int screen, screen_ready;
    double *R, *KR, *K1, *ub, *mvbuf;
    mk_kref *ref;
    int *idx;
    int nscreened;       /* v_m bounded (screening) or not read (working set), all checks */
    /* kernel working set (strategies with wset = 1, dense store: sf_wset_quad) */
    int wset, nW;
    int *W, *inW, *Wc;
    double *vw;
} sf_drv;

/* ------------------------------------------------------------------ SVM solves */

/* The SMO on drv->Kd, warm-started from alpha (in/out), shrinking unless the control says not. */
static double sf_solve(mk_sf_ctx *c, double *alpha, double *b)
{
    sf_drv *w = (sf_drv *) c->drv;
    mk_interrupt_every(&w->last_check, 0.02);
    double t = mk_time();
    mk_svm_result res;
    mk_smo_box(w->Kd, c->n, c->y, c->C, c->o->box, c->svm_tol, c->o->svm_maxiter,
               c->o->shrink, alpha, w->grad, &res);
    return mk_sf_counted(c, &res, t, b);
}

static double sf_J_at(mk_sf_ctx *c, const double *d, double *alpha, double *b)
{
    sf_drv *w = (sf_drv *) c->drv;
    w->kd_at_d = 0;
    double t = mk_time();
    mk_store_combine(c->st, d, w->Kd);
    c->t_svm += mk_time() - t;
    return sf_solve(c, alpha, b);
}

/* out = A + t X, elementwise over n x n */
static void sf_line(const double *A, const double *X, double t, double *out, int n, int nth)
{
#ifdef _OPENMP
#pragma omp parallel for if(nth > 1) num_threads(nth) schedule(static)
#endif
    for (int j = 0; j < n; j++) {
        size_t o = (size_t) j * n;
        for (int i = 0; i < n; i++) out[o + i] = A[o + i] + t * X[o + i];
    }
    (void) nth;
}

static double sf_J_line(mk_sf_ctx *c, double t, double *alpha, double *b)
{
    sf_drv *w = (sf_drv *) c->drv;
    w->kd_at_d = 0;
    double t0 = mk_time();
    sf_line(w->B, w->KD, t, w->Kd, c->n, w->nth2);
    c->t_svm += mk_time() - t0;
    return sf_solve(c, alpha, b);
}

static double sf_J_probe(mk_sf_ctx *c, double t, const int *idx, const double *wk,
                         const double *wd, int cnt, double *alpha, double *b)
{
    sf_drv *w = (sf_drv *) c->drv;
    w->kd_at_d = 0;
    double t0 = mk_time();
    if (!w->KD2)   /* on the first probe: only strategies that probe pay for it */
        w->KD2 = (double *) mk_alloc_huge((size_t) c->n * c->n * sizeof(double));
    sf_line(w->B, w->KD, t, w->Kd, c->n, w->nth2);
    memcpy(w->KD2, w->KD, (size_t) c->n * c->n * sizeof(double));
    mk_store_combine_add(c->st, idx, wk, wd, cnt, w->Kd, w->KD2);
    c->t_svm += mk_time() - t0;
    return sf_solve(c, alpha, b);
}

/* ------------------------------------------------------------------ line kernel services */

/* base = the kernel of the last J_probe, direction = its tentative direction */
static void sf_take_probe(mk_sf_ctx *c)
{
    sf_drv *w = (sf_drv *) c->drv;
    double *tmp = w->B;
    w->B = w->Kd; w->Kd = tmp;
    tmp = w->KD; w->KD = w->KD2; w->KD2 = tmp;
}

static void sf_dir_combine(mk_sf_ctx *c, const double *D)
{
    sf_drv *w = (sf_drv *) c->drv;
    double t = mk_time();
    mk_store_combine(c->st, D, w->KD);
    c->t_svm += mk_time() - t;
}

static void sf_dir_axpy(mk_sf_ctx *c, int m, double t)
{
    sf_drv *w = (sf_drv *) c->drv;
    double t0 = mk_time();
    mk_store_axpy(c->st, m, t, w->KD);
    c->t_svm += mk_time() - t0;
}

static void sf_base_move(mk_sf_ctx *c, double t)
{
    sf_drv *w = (sf_drv *) c->drv;
    double t0 = mk_time();
    sf_line(w->B, w->KD, t, w->B, c->n, w->nth2);
    c->t_svm += mk_time() - t0;
}

static void sf_base_take_line(mk_sf_ctx *c)
{
    sf_drv *w = (sf_drv *) c->drv;
    double *tmp = w->B;
    w->B = w->Kd; w->Kd = tmp;
}

static void sf_base_axpy(mk_sf_ctx *c, int m, double t)
{
    sf_drv *w = (sf_drv *) c->drv;
    double t0 = mk_time();
    mk_store_axpy(c->st, m, t, w->B);
    c->t_svm += mk_time() - t0;
}

static void sf_base_div(mk_sf_ctx *c, double s)
{
    sf_drv *w = (sf_drv *) c->drv;
    size_t nn = (size_t) c->n * c->n;
    for (size_t i = 0; i < nn; i++) w->B[i] /= s;
}

static const double *sf_base_col(mk_sf_ctx *c, int j, double *buf)
{
    (void) buf;
    return ((sf_drv *) c->drv)->B + (size_t) j * c->n;
}

/* ------------------------------------------------------------------ certificate */

/* The dual norm of the constraint set of d applied to v >= 0: max_m v_m for the simplex
   (p = 1), ||v||_{p*} with p* = p/(p-1) for the unit lp ball (p > 1). */
static double sf_dualnorm(const double *v, int M, double p)
{
    double vmax = 0.0;
    for (int m = 0; m < M; m++) if (v[m] > vmax) vmax = v[m];
    if (p <= 1.0 || vmax <= 0.0) return vmax;
    double ps = p / (p - 1.0), s = 0.0;
    for (int m = 0; m < M; m++) if (v[m] > 0.0) s += pow(v[m] / vmax, ps);
    return vmax * pow(s, 1.0 / ps);
}

/* Duality gap J(d) - D(a), D(a) = sum(a) - (1/2) dualnorm(v(a)).
 * D(a) is a lower bound of the MKL optimum: for any feasible a and d the SVM dual at K(d) gives
 *   J(d) >= sum(a) - (1/2) sum_m d_m v_m(a) >= sum(a) - (1/2) max_{d' feasible} sum_m d'_m v_m(a),
 * and the maximum of the linear form d'v is max_m v_m over the simplex and ||v||_{p*} over the
 * unit lp ball (Hoelder, attained at d'_m proportional to v_m^{p*-1}). So
 * D(a) <= min_d J(d) <= J(d), and the gap bounds the suboptimality of J(d). */
static double sf_gap(const double *alpha, int n, const double *v, int M, double J, double p)
{
    double sa = 0.0;
    for (int i = 0; i < n; i++) sa += alpha[i];
    return J - (sa - 0.5 * sf_dualnorm(v, M, p));
}

/* ------------------------------------------------------------------ gradient screening */

#define SF_MVCHUNK 512  /* kernels per batch of products K_m x (threads split a batch) */

/* x becomes the reference point of kernel m, whose K_m x is in KR_m: the rest of its mk_kref
   (mean xm and centred squared norm xc2 of x). Returns v_m = x'K_m x. Plain C: safe in OpenMP
   regions. */
static double sf_set_ref(sf_drv *w, int m, const double *x, double xm, double xc2, int n)
{
    size_t o = (size_t) m * n;
    const double *kr = w->KR + o;
    double q = mk_dot(n, x, kr), t = 0.0;
    for (int i = 0; i < n; i++) t += kr[i];
    memcpy(w->R + o, x, (size_t) n * sizeof(double));
    mk_kref *rf = w->ref + m;
    rf->r = w->R + o; rf->Kr = kr; rf->k1 = w->K1 + o;
    rf->nr = sqrt(q > 0.0 ? q : 0.0);
    rf->rm = xm; rf->rc2 = xc2; rf->rt = t;
    return q;
}

/* First evaluation: every v_m exactly, with x as the reference of every kernel and the bound
   constants (mk_kernel_stats: one pass over the kernels, as the unscreened quadratic forms). */
static void sf_screen_first(mk_sf_ctx *c, double *v)
{
    sf_drv *w = (sf_drv *) c->drv;
    const mk_store *st = c->st;
    const int n = c->n, M = c->M;
    const double *x = w->ya;
    double xm, xc2;
    mk_centred(n, x, &xm, &xc2);
    size_t scr = mk_store_scratch(st);
    int nt = mk_threads_for(c->o->nthreads, (double) M * n * n);
    double *kb = scr ? (double *) R_alloc((size_t) (nt > 0 ? nt : 1) * scr, sizeof(double))
        : NULL;
    double *rb = (double *) R_alloc((size_t) (nt > 0 ? nt : 1) * n, sizeof(double));
    (void) nt;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, 4) if (nt > 1)
#endif
    for (int m = 0; m < M; m++) {
#ifdef _OPENMP
        int th = omp_get_thread_num();
#else
        int th = 0;
#endif
        mk_ksrc Km;
        mk_store_ksrc(st, m, 1, kb ? kb + (size_t) th * scr : NULL, &Km);
        double *kr = w->KR + (size_t) m * n, *k1 = w->K1 + (size_t) m * n, s1, lc;
        /* whole columns at every n: the triangle sweep (mk_kernel_stats_tri) rounds K_m x,
           and so the exact v_m, differently and would move SimpleMKL's iterates */
        mk_kernel_stats(&Km, x, kr, &s1, &lc, rb + (size_t) th * n, k1);
        w->ref[m].s11 = s1 * s1;
        w->ref[m].lc = lc;
        v[m] = sf_set_ref(w, m, x, xm, xc2, n);
    }
    w->screen_ready = 1;
}

/* v_m for the kernels with d_m > 0, and for the others either an upper bound below v_mu (the
   value at the largest weight; among equal ones the largest value) or, when the bound does not
   show that, the exact value with x as its new reference point. The largest v, which the
   certificate uses, is always an exact one. */
static void sf_screened_v(mk_sf_ctx *c, double *v)
{
    sf_drv *w = (sf_drv *) c->drv;
    const int n = c->n, M = c->M;
    const double *x = w->ya, *d = c->d;
    if (!w->screen_ready) { sf_screen_first(c, v); return; }
    int cnt = 0, mu = 0;
    for (int m = 0; m < M; m++) {
        if (d[m] > 0.0) w->idx[cnt++] = m;
        if (d[m] > d[mu]) mu = m;
    }
    mk_store_quad(c->st, w->idx, cnt, x, w->ub);
    for (int k = 0; k < cnt; k++) v[w->idx[k]] = w->ub[k];
    /* among equal largest weights, the largest v (SimpleMKL's choice of mu) */
    for (int k = 0; k < cnt; k++) {
        int m = w->idx[k];
        if (d[m] == d[mu] && v[m] > v[mu]) mu = m;
    }
    double thr = v[mu], xm, xc2;
    mk_centred(n, x, &xm, &xc2);
    /* bounds of the zero weights */
    int nt = mk_threads_for(c->o->nthreads, 3.0 * (double) M * n);
    (void) nt;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
#endif
    for (int m = 0; m < M; m++)
        if (!(d[m] > 0.0)) w->ub[m] = mk_kbound(n, x, xm, xc2, w->ref + m);
    cnt = 0;
    for (int m = 0; m < M; m++) {
        if (d[m] > 0.0) continue;
        /* a margin for the rounding of the bound itself */
        if (w->ub[m] + 1e-12 * (fabs(w->ub[m]) + fabs(thr)) < thr) {
            v[m] = w->ub[m] > 0.0 ? w->ub[m] : 0.0;
            w->nscreened++;
        } else w->idx[cnt++] = m;
    }
    for (int k0 = 0; k0 < cnt; k0 += SF_MVCHUNK) {
        int kc = cnt - k0 < SF_MVCHUNK ? cnt - k0 : SF_MVCHUNK;
        mk_store_mv(c->st, w->idx + k0, kc, x, w->mvbuf, (size_t) n);
        for (int k = 0; k < kc; k++) {
            int m = w->idx[k0 + k];
            memcpy(w->KR + (size_t) m * n, w->mvbuf + (size_t) k * n, (size_t) n * sizeof(double));
            v[m] = sf_set_ref(w, m, x, xm, xc2, n);
        }
    }
}

/* ------------------------------------------------------------------ kernel working set */

/* v_m = (y.a)'K_m(y.a) of the kernels idx[0..cnt-1] (NULL: every kernel) into out, and on a
   dense store U's columns K_m (y.a) for HessianMKL's Q */
static void sf_quad(mk_sf_ctx *c, const int *idx, int cnt, double *out)
{
    sf_drv *w = (sf_drv *) c->drv;
    if (c->kv) mk_store_quad_u(c->st, idx, cnt, w->ya, out, c->kv);
    else mk_store_quad(c->st, idx, cnt, w->ya, out);
}

/* The quadratic forms over the kernel working set W (HessianMKL on a dense or fly store): v_m
   (and on a dense store U's column) for the kernels of W only. Their gap J - sum(a) +
   max_W v / 2 is a lower bound of the gap; when it is within tol, or with force, the other
   kernels are read too (the certificate).
   W then becomes the kernels with weight and those whose v_m, where it is known, is at least
   vbar - (vmax - vbar), vbar = d'v the weights' mean: a kernel with v_m < vbar does not lower
   J to first order (NOTES-model.md). Returns 1 when every v_m was computed. */
static int sf_wset_quad(mk_sf_ctx *c, double *v, int force)
{
    sf_drv *w = (sf_drv *) c->drv;
    const int n = c->n, M = c->M;
    const double *d = c->d;
    int nw = w->nW;
    sf_quad(c, w->W, nw, w->vw);
    double vbar = 0.0, vmax = 0.0;
    for (int k = 0; k < nw; k++) {
        int m = w->W[k];
        v[m] = w->vw[k];
        vbar += d[m] * v[m];
        if (v[m] > vmax) vmax = v[m];
    }
    int full = nw == M;
    /* the working set's gap: a lower bound of the gap (the dual norm over fewer kernels) */
    if (!full && (force || sf_gap(c->a, n, w->vw, nw, c->J, c->o->p) / fabs(c->J) <= c->o->tol)) {
        int nc = 0;
        for (int m = 0; m < M; m++) if (!w->inW[m]) w->Wc[nc++] = m;
        sf_quad(c, w->Wc, nc, w->vw);
        for (int k = 0; k < nc; k++) {
            v[w->Wc[k]] = w->vw[k];
            if (w->vw[k] > vmax) vmax = w->vw[k];
        }
        full = 1;
    }
    if (!full) w->nscreened += M - nw;
    double thr = vbar - (vmax - vbar);
    int cnt = 0;
    for (int m = 0; m < M; m++) {
        int keep = d[m] > 0.0 || ((full || w->inW[m]) && v[m] >= thr);
        w->inW[m] = keep;
        if (keep) w->W[cnt++] = m;
    }
    w->nW = cnt;
    c->wk = w->W; c->nwk = cnt;
    return full;
}

/* v_m = (y.a)' K_m (y.a) for every kernel (or the working set's: the row's gap is then NA;
   force: every kernel), the relative gap, one history row. */
static double sf_certify(mk_sf_ctx *c, double *v, int it, double step, mk_hist *hist,
                         mk_hist *wpath, int force)
{
    sf_drv *w = (sf_drv *) c->drv;
    const int n = c->n, M = c->M;
    double t = mk_time();
    int full = 1;
    for (int i = 0; i < n; i++) w->ya[i] = c->y[i] * c->a[i];
    c->kv_ok = 0;
    if (c->st->kind == MK_STORE_LOWRANK) mk_sf_lr_quad(c, w->ya, v);
    else if (w->screen) sf_screened_v(c, v);
    else if (w->wset) { full = sf_wset_quad(c, v, force); c->kv_ok = c->kv != NULL; }
    else { sf_quad(c, NULL, M, v); c->kv_ok = c->kv != NULL; }
    c->grad_evals++;
    c->t_grad += mk_time() - t;
    double rg = full ? sf_gap(c->a, n, v, M, c->J, c->o->p) / fabs(c->J) : NA_REAL;
    int nact = 0;
    for (int m = 0; m < M; m++) if (c->d[m] > 0.0) nact++;
    double row[MK_SF_HCOLS] = { (double) it, mk_time() - c->t0, c->J, rg, (double) nact,
                                (double) c->svm_solves, (double) c->grad_evals,
                                (double) c->hess_evals, step };
    mk_hist_add(hist, row);
    mk_hist_add(wpath, c->d);
    if (c->o->verbose)
        Rprintf("iter %4d  J = %.10g  gap = %.3e  active = %d  svm = %d\n", it, c->J, rg, nact,
                c->svm_solves);
    return rg;
}

/* ------------------------------------------------------------------ the outer loop */

int mk_svmfam(const mk_sf_strategy *s, const mk_store *st, const double *y, double C,
              const mk_sf_opts *o, double *d, double *a, double *b, double *J, double *gap,
              int *iter, mk_hist *hist, mk_hist *wpath, mk_sf_ctx *c)
{
    const int n = st->n, M = st->M, lr = st->kind == MK_STORE_LOWRANK;
    const int wl = st->kind != MK_STORE_DENSE;   /* the line kept as weights (svmfam_lr.c) */
    const size_t nn = (size_t) n * n;
    sf_drv *w = (sf_drv *) R_alloc(1, sizeof(sf_drv));
    /* n x n and n x M scratch: huge pages where the system gives them (mk_alloc_huge); none
       on a low-rank or on-the-fly store (svmfam_lr.c keeps the line as weights, the SVM reads
       the factors or the column cache) */
    const size_t nnb = nn * sizeof(double);
    w->Kd = wl ? NULL : (double *) mk_alloc_huge(nnb);
    w->B = s->line && !wl ? (double *) mk_alloc_huge(nnb) : NULL;
    w->KD = s->line && !wl ? (double *) mk_alloc_huge(nnb) : NULL;
    w->KD2 = NULL;   /* allocated by the first J_probe (SimpleMKL's line search) */
    w->grad = (double *) R_alloc(n, sizeof(double));
    w->ya = (double *) R_alloc(n, sizeof(double));
    w->nth2 = mk_threads_for(o->nthreads, (double) nn);
    w->last_check = 0.0;
    w->kd_at_d = 0;
    /* gradient screening: 3 n x M doubles, worth it only with many kernels */
    w->screen = s->screen && o->screen && o->p <= 1.0 && M >= 2 && !lr;
    w->screen_ready = 0;
    w->nscreened = 0;
    if (w->screen) {
        size_t nM = (size_t) n * M;
        w->R = (double *) mk_alloc_huge(nM * sizeof(double));
        w->KR = (double *) mk_alloc_huge(nM * sizeof(double));
        w->K1 = (double *) mk_alloc_huge(nM * sizeof(double));
        w->ref = (mk_kref *) R_alloc(M, sizeof(mk_kref));
        w->ub = (double *) R_alloc(M, sizeof(double));
        w->idx = (int *) R_alloc(M, sizeof(int));
        w->mvbuf = (double *) R_alloc((size_t) n * SF_MVCHUNK, sizeof(double));
    }

    memset(c, 0, sizeof(*c));
    c->st = st; c->y = y; c->n = n; c->M = M; c->C = C; c->o = o;
    c->svm_tol = o->svm_tol;
    c->d = d; c->a = a;
    c->t0 = mk_time();
    c->J_at = sf_J_at; c->J_line = sf_J_line;
    c->dir_combine = sf_dir_combine; c->dir_axpy = sf_dir_axpy;
    c->J_probe = sf_J_probe; c->take_probe = sf_take_probe;
    c->base_move = sf_base_move; c->base_take_line = sf_base_take_line;
    c->base_axpy = sf_base_axpy; c->base_div = sf_base_div; c->base_col = sf_base_col;
    c->drv = w;
    if (wl) mk_sf_lr_attach(c);

    double *v = (double *) R_alloc(M, sizeof(double));
    double *dold = (double *) R_alloc(M, sizeof(double));
    if (s->start) s->start(c);
    else {   /* the simplex; the sum in long double, as R's sum() */
        long double sd = 0.0;
        for (int m = 0; m < M; m++) sd += d[m];
        for (int m = 0; m < M; m++) d[m] /= (double) sd;
    }
    void *ws = s->init(c);
    /* the kernel working set: from the kernels with weight (all of them from uniform ones) */
    w->wset = s->wset && o->screen && !w->screen && !lr;
    if (w->wset) {
        w->W = (int *) R_alloc(M, sizeof(int));
        w->inW = (int *) R_alloc(M, sizeof(int));
        w->Wc = (int *) R_alloc(M, sizeof(int));
        w->vw = (double *) R_alloc(M, sizeof(double));
        w->nW = 0;
        for (int m = 0; m < M; m++) {
            w->inW[m] = d[m] > 0.0;
            if (w->inW[m]) w->W[w->nW++] = m;
        }
    }

    c->J = c->J_at(c, d, a, &c->b);
    w->kd_at_d = 1;
    double step = 0.0, rg;
    int it = 0, reason;
    for (;; it++) {
        /* every kernel at the start (a warm start's new C may let others in: without them
           each fit took about one more step) and at a limit (the last row is a certificate) */
        int lim = it >= o->maxiter || mk_time() - c->t0 > o->max_time;
        rg = sf_certify(c, v, it, step, hist, wpath, lim || it == 0);
        if (rg <= o->tol) { reason = MK_SF_STOP_GAP; break; }
        if (lim) {
            reason = MK_SF_STOP_LIMIT;
            break;
        }
        R_CheckUserInterrupt();
        mk_progress_tick(o->prog, it, o->maxiter, rg, o->tol);
        if (s->line && it % SF_REBUILD == 0 && wl) mk_sf_lr_rebuild(c);
        else if (s->line && it % SF_REBUILD == 0) {
            if (w->kd_at_d) {   /* the last solve was the driver's own at this d: reuse K(d) */
                double *tmp = w->B;
                w->B = w->Kd; w->Kd = tmp;
            } else {
                double t = mk_time();
                mk_store_combine(st, d, w->B);
                c->t_svm += mk_time() - t;
            }
            w->kd_at_d = 0;
        }
        memcpy(dold, d, (size_t) M * sizeof(double));
        int status = s->step(c, ws, it, v);
        step = 0.0;
        for (int m = 0; m < M; m++) step += fabs(d[m] - dold[m]);
        if (status == MK_SF_MOVED) continue;
        /* No improvement found: the SMO accuracy may be what limits the comparisons of J (or
           the gradient and curvature built from alpha). Tighten it 100x, re-solve at d, go on;
           only at the tightest tolerance is the strategy's verdict final. */
        if (c->svm_tol > SF_SVM_TOL_MIN) {
            c->svm_tol = fmax(SF_SVM_TOL_MIN, 0.01 * c->svm_tol);
            c->J = c->J_at(c, d, a, &c->b);
            w->kd_at_d = 1;
            continue;
        }
        it++;
        rg = sf_certify(c, v, it, step, hist, wpath, 1);
        reason = rg <= o->tol ? MK_SF_STOP_GAP :
                 status == MK_SF_DECREMENT ? MK_SF_STOP_DECREMENT : MK_SF_STOP_STALLED;
        break;
    }
    c->screened = w->nscreened;
    mk_progress_done(o->prog);
    *b = c->b; *J = c->J; *gap = rg; *iter = it;
    return reason;
}

/* ------------------------------------------------------------------ .Call entry */

/* The family's options, by name, with their ranges checked. */
static void read_opts(SEXP control, mk_sf_opts *o)
{
    o->tol = mk_ctl_real(control, "tol");
    o->svm_tol = mk_ctl_real(control, "svm_tol");
    o->p = mk_ctl_real(control, "p");
    o->newton_tol = mk_ctl_real(control, "newton_tol");
    o->gold_tol = mk_ctl_real(control, "gold_tol");
    o->max_time = mk_ctl_real(control, "max_time");
    o->maxiter = mk_ctl_int(control, "maxiter");
    o->svm_maxiter = mk_ctl_int(control, "svm_maxiter");
    o->nthreads = mk_threads(mk_ctl_int(control, "nthreads"));
    o->verbose = mk_ctl_int(control, "verbose");
    o->screen = mk_ctl_int(control, "gradient_screening");
    /* the SMO's shrinking; optional (absent: on) */
    SEXP sk = mk_list_elt(control, "svm_shrinking", NULL);
    o->shrink = isNull(sk) ? 1 : asInteger(sk) != 0;
    /* on the fly the column cache's entries (R/memory.R); optional, 0 (whole) without it */
    SEXP kc = mk_list_elt(control, "kcache", NULL);
    o->kcache = isNull(kc) ? 0 : asInteger(kc);
    /* HessianMKL's free-SV limit; optional (NA or absent: MK_HESS_FREE_MAX), never above it */
    SEXP hf = mk_list_elt(control, "hess_free_max", NULL);
    int hfm = isNull(hf) ? NA_INTEGER : asInteger(hf);
    o->hess_free_max = hfm == NA_INTEGER || hfm > MK_HESS_FREE_MAX ? MK_HESS_FREE_MAX : hfm;
    if (o->hess_free_max < 1) error("control entry 'hess_free_max' must be >= 1");
    SEXP ls = mk_ctl(control, "line_search");
    if (!isString(ls) || XLENGTH(ls) != 1) error("control entry 'line_search' must be a string");
    const char *lss = CHAR(STRING_ELT(ls, 0));
    if (strcmp(lss, "halving") == 0) o->line_search = 1;
    else if (strcmp(lss, "first") == 0) o->line_search = 0;
    else error("control entry 'line_search' must be \"halving\" or \"first\"");
    if (!(o->tol >= 0.0) || !(o->svm_tol > 0.0) || !(o->p >= 1.0) || !(o->newton_tol >= 0.0) ||
        !(o->gold_tol > 0.0) || !(o->max_time > 0.0) || o->maxiter < 0 || o->svm_maxiter < 1 ||
        o->kcache < 0)
        error("invalid control values");
}

/* The per-point box C w_i from the optional control entry case_weights (n weights >= 0), or
   NULL without it. */
static const double *sf_case_box(SEXP control, int n, double C)
{
    SEXP cw = mk_list_elt(control, "case_weights", NULL);
    if (isNull(cw)) return NULL;
    if (!isReal(cw) || XLENGTH(cw) != n)
        error("control entry 'case_weights' must be %d doubles", n);
    double *box = (double *) R_alloc(n, sizeof(double));
    for (int i = 0; i < n; i++) {
        double wi = REAL(cw)[i];
        if (!(wi >= 0.0) || !R_FINITE(wi)) error("case weights must be finite and >= 0");
        box[i] = C * wi;
    }
    return box;
}

/* The start: uniform weights and alpha = 0, unless init holds usable ones. */
static void sf_read_init(SEXP init, int n, int M, double *dp, double *ap)
{
    for (int m = 0; m < M; m++) dp[m] = 1.0 / M;
    for (int i = 0; i < n; i++) ap[i] = 0.0;
    if (isNull(init)) return;
    SEXP w0 = mk_list_elt(init, "weights", NULL), a0 = mk_list_elt(init, "alpha_svm", NULL);
    if (isReal(w0) && XLENGTH(w0) == M) {
        const double *wp = REAL(w0);
        double sw = 0.0;
        int ok = 1;
        for (int m = 0; m < M; m++) {
            if (!R_FINITE(wp[m]) || wp[m] < 0.0) ok = 0;
            else sw += wp[m];
        }
        if (ok && sw > 0.0) memcpy(dp, wp, (size_t) M * sizeof(double));
    }
    if (isReal(a0) && XLENGTH(a0) == n) {
        const double *a0p = REAL(a0);
        int ok = 1;
        for (int i = 0; i < n; i++) if (!R_FINITE(a0p[i])) ok = 0;
        if (ok) memcpy(ap, a0p, (size_t) n * sizeof(double));
    }
}

/* The result list (returned protected once); d and a are protected by the caller. */
static SEXP sf_result(SEXP d, SEXP a, double b, double J, double gap, int iter, int converged,
                      int reason, const mk_hist *hist, const mk_hist *wpath, const mk_sf_ctx *c)
{
    const int M = c->M;
    static const char *const hnames[] = { "iteration", "time", "objective", "gap", "n_active",
                                          "svm_solves", "grad_evals", "hessian_evals", "step" };
    static const char *const names[] = { "weights", "alpha", "b", "objective", "gap",
                                         "iterations", "converged", "reason", "history",
                                         "weights_path", "counts", "times", NULL };
    SEXP out = mk_list_new(names);
    mk_list_set(out, "weights", d);
    mk_list_set(out, "alpha", a);
    mk_list_set(out, "b", ScalarReal(b));
    mk_list_set(out, "objective", ScalarReal(J));
    mk_list_set(out, "gap", ScalarReal(gap));
    mk_list_set(out, "iterations", ScalarInteger(iter));
    mk_list_set(out, "converged", ScalarLogical(converged));
    mk_list_set(out, "reason", ScalarInteger(reason));
    mk_list_set(out, "history", mk_hist_sexp(hist, hnames));
    SEXP wps = allocMatrix(REALSXP, wpath->len, M);
    mk_list_set(out, "weights_path", wps);
    double *wpp = REAL(wps);
    for (int r = 0; r < wpath->len; r++)
        for (int m = 0; m < M; m++)
            wpp[r + (size_t) m * wpath->len] = wpath->tab[(size_t) r * M + m];
    SEXP counts = allocVector(REALSXP, 8);
    mk_list_set(out, "counts", counts);
    REAL(counts)[0] = c->svm_solves; REAL(counts)[1] = c->grad_evals;
    REAL(counts)[2] = c->hess_evals; REAL(counts)[3] = c->svm_fail; REAL(counts)[4] = c->smo_iter;
    REAL(counts)[5] = c->screened; REAL(counts)[6] = c->hess_flat; REAL(counts)[7] = c->smo_work;
    SEXP times = allocVector(REALSXP, 4);
    mk_list_set(out, "times", times);
    REAL(times)[0] = mk_time() - c->t0; REAL(times)[1] = c->t_svm;
    REAL(times)[2] = c->t_grad; REAL(times)[3] = c->t_dir;
    return out;
}

SEXP mkc_svmfam(SEXP method, SEXP store, SEXP y, SEXP C, SEXP control, SEXP init)
{
    const int nmeth = (int) (sizeof(strategies) / sizeof(strategies[0]));
    if ((!isInteger(method) && !isReal(method)) || XLENGTH(method) != 1)
        error("'method' must be one integer code");
    int code = asInteger(method);
    if (code < 0 || code >= nmeth) error("unknown SVM-family method code %d", code);
    const mk_sf_strategy *s = &strategies[code];

    mk_store st;
    mk_store_read(store, &st);
    if (!st.square || st.nr != st.n) error("the SVM family needs a square training store");
    const int n = st.n, M = st.M;
    if (!isReal(y) || XLENGTH(y) != n) error("'y' must be a double vector of length %d", n);
    const double *yp = REAL(y);
    for (int i = 0; i < n; i++) if (yp[i] != 1.0 && yp[i] != -1.0) error("y must be in {-1, +1}");
    if (!isReal(C) || XLENGTH(C) != 1) error("'C' must be one number");
    double Cv = REAL(C)[0];
    if (!(Cv > 0.0) || !R_FINITE(Cv)) error("C must be positive and finite");
    mk_sf_opts o;
    read_opts(control, &o);
    mk_progress prog;
    mk_progress_init(&prog, control);
    o.prog = &prog;
    if (code != MK_SF_LP) o.p = 1.0;
    if (!isNull(init) && !isNewList(init)) error("'init' must be NULL or a list");
    o.box = sf_case_box(control, n, Cv);

    int nprot = 0;
    SEXP d = PROTECT(allocVector(REALSXP, M)); nprot++;
    SEXP a = PROTECT(allocVector(REALSXP, n)); nprot++;
    double *dp = REAL(d), *ap = REAL(a);
    sf_read_init(init, n, M, dp, ap);

    mk_hist hist, wpath;
    mk_hist_init(&hist, MK_SF_HCOLS);
    mk_hist_init(&wpath, M);
    mk_sf_ctx c;
    double b = 0.0, J = 0.0, gap = 0.0;
    int iter = 0;
    int reason = mk_svmfam(s, &st, yp, Cv, &o, dp, ap, &b, &J, &gap, &iter, &hist, &wpath, &c);

    SEXP out = sf_result(d, a, b, J, gap, iter, gap <= o.tol, reason, &hist, &wpath, &c);
    UNPROTECT(nprot + 1);
    return out;
}
