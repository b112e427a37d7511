/* SpicyMKL: the .Call entry mkc_spicy, the allocation of the state and the driver (outer
 * loop sp_run, inner Newton loop sp_newton). The algorithm and the file layout: spicy.h.
 */
#include "spicy.h"

static const char *const sp_hist_names[] = { "time", "objective", "dual", "gap", "n_active",
                                             "newton", NULL };

/* verbose > 1: one line per Newton step (kernels of S needed on the step: exact norms) */
static void sp_trace(const sp_state *S, int k, double c)
{
    int n = S->n, need = 0;
    double C1 = S->C1;
    for (int m = 0; m < S->M; m++) {
        if (!S->inS[m]) continue;
        if (S->anz[m]) { need++; continue; }
        const double *kr = S->Kr + (size_t) m * n, *kd = S->KD + (size_t) m * n;
        double a0 = mk_dot(n, S->rho, kr),
            a1 = a0 + 2.0 * mk_dot(n, S->D, kr) + mk_dot(n, S->D, kd);
        if (a0 > C1 * C1 || a1 > C1 * C1) need++;
    }
    /* box-type losses with slack multipliers (hinge): coordinates below / between / above the
       kinks y rho = zeta / g and 1 - xi / g, and how many the step moves to another piece */
    int pc[3] = { 0, 0, 0 }, chg = 0;
    if (S->L->aux_update && S->L->binary) {
        for (int i = 0; i < n; i++) {
            double t0 = S->y[i] * S->rho[i], t1 = t0 + c * S->y[i] * S->D[i];
            double lo = S->aux[n + i] / S->gsl,
                hi = (S->o->cw ? S->o->cw[i] : 1.0) - S->aux[i] / S->gsl;
            int a0 = t0 < lo ? 0 : (t0 > hi ? 2 : 1), a1 = t1 < lo ? 0 : (t1 > hi ? 2 : 1);
            pc[a0]++;
            chg += a0 != a1;
        }
    }
    Rprintf("   newton %d: phi %.10g |g| %.3e gd %.3e step %.3e |S| %d needed %d active %d "
            "pieces %d/%d/%d moved %d\n",
            k, S->phi0, S->gnorm, S->gd, c, S->cnt, need, S->na, pc[0], pc[1], pc[2], chg);
}

/* The inner loop's tolerance on ||gradient|| at its step k: itol sqrt(n) (itol = inner_tol,
   tightened after a drift, see sp_run), relaxed from the second step on to irel (P - D) /
   sqrt(n) with the absolute gap P - D of the last outer iteration (or of the starting
   point). The certificate is exact whatever the inner accuracy,
   and an inner problem far from the optimum need not be solved to 1e-6: the outer iteration
   moves its solution anyway (inexact proximal point). The first step keeps the tight tolerance:
   a loop that stopped before it would spend an outer iteration on the same rho. */
static double sp_inner_tol(const sp_state *S, int k)
{
    double rn = sqrt((double) S->n), t = S->itol * rn;
    if (k > 0 && S->irel > 0.0 && S->absgap > 0.0 && R_FINITE(S->absgap)) {
        double a = S->irel * S->absgap / rn;
        if (a > t) t = a;
    }
    return t;
}

/* Low-rank store, an inner loop once the last certified gap is within SP_EARLY_GAP of tol (every
   second Newton step): the gap the outer iteration would certify if the loop stopped at this rho,
   the primal after the proximal update (as sp_prox_update, O(n |S|), into the free z) and the
   dual at rho (a pass per kernel above C1 by its bound). Within SP_EARLY_TOL of tol the loop
   stops: the rest of the last inner loop would only overshoot tol (NOTES-spicy.md). */
static int sp_early_stop(sp_state *S, int k)
{
    const sp_opts *o = S->o;
    if (!S->lr.on || (k & 1) == 0 || !(S->gap <= SP_EARLY_GAP * o->tol)) return 0;
    int n = S->n;
    const double *rho = S->rho;
    double gamma = S->gamma, thr = gamma * S->C1, den = 1.0 + gamma * S->C2, sr = 0.0,
        pen = 0.0, *z = S->z;
    for (int i = 0; i < n; i++) sr += rho[i];
    double b1 = *S->b + S->gammab * sr;
    for (int i = 0; i < n; i++) z[i] = b1;
    for (int m = 0; m < S->M; m++) {
        const double *ka = S->Ka + (size_t) m * n, *kr = S->Kr + (size_t) m * n;
        double an = S->anorm[m], sc = 1.0;
        if (S->inS[m]) {
            double rm = S->r[m];
            if (!(rm > thr)) continue;
            sc = (rm - thr) / (den * rm);
            an = sc * rm;
            for (int i = 0; i < n; i++) z[i] += sc * (ka[i] + gamma * kr[i]);
        } else if (S->anz[m]) {
            for (int i = 0; i < n; i++) z[i] += ka[i];
        } else continue;
        pen += S->C1 * an + 0.5 * S->C2 * an * an;
    }
    double keep[4] = { S->primal, S->dual, S->gap, S->absgap };
    S->primal = S->L->value(n, S->y, z, S->eps, o->cw) + pen;
    sp_dual_gap(S);
    int stop = S->gap <= SP_EARLY_TOL * o->tol;
    S->primal = keep[0]; S->dual = keep[1]; S->gap = keep[2]; S->absgap = keep[3];
    S->nearly += stop;
    return stop;
}

/* The inner loop: Newton on phi over rho. Returns the number of Newton steps taken; *inner_ok
   when the gradient met inner_tol; *gnorm0, *gnorm_last: first and last gradient norms. */
static int sp_newton(sp_state *S, int *inner_ok, double *gnorm0, double *gnorm_last)
{
    const sp_opts *o = S->o;
    int nnewton = 0;
    *inner_ok = 0; *gnorm0 = 0.0; *gnorm_last = 0.0;
    S->fb.nprev = -1;   /* a new inner problem (gamma changed): no factor to reuse */
    S->nc.valid = 0;
    for (int k = 0; k < o->inner_maxiter; k++) {
        R_CheckUserInterrupt();
        if (S->bx.on) sp_box_snap(S);
        double gnorm = sp_gradient(S);
        if (S->bx.on) gnorm = S->gnorm = sp_box_free(S);
        if (k == 0) *gnorm0 = gnorm;
        *gnorm_last = gnorm;
        if (gnorm <= sp_inner_tol(S, k)) { *inner_ok = 1; break; }
        if (sp_early_stop(S, k)) { *inner_ok = 1; break; }
        if ((S->bx.on ? sp_box_direction(S) : sp_direction(S)) != 0) break;
        R_CheckUserInterrupt();   /* the Hessian and its solve dominate a step: check after */
        if (!sp_step_cap(S)) break;
        nnewton++;
        sp_trust_region(S);
        sp_screen(S);
        R_CheckUserInterrupt();
        double c;
        int ok = sp_line_search(S, &c);
        if (o->verbose > 1) sp_trace(S, k, ok ? c : 0.0);
        sp_tick(S, 6);
        if (!ok) { S->ls_fail++; break; }
        sp_accept(S, c);
    }
    return nnewton;
}

/* Outer loop: Newton on phi, proximal update, dual value and gap, gamma schedule. Returns 0
   converged (gap <= tol), 1 iteration limit; the number of iterations in *iter. */

static int sp_run(sp_state *S, mk_hist *hist, int *iter)
{
    const sp_opts *o = S->o;
    int status = 1, it;
    sp_start(S);
    S->gam_s = S->gamma < SP_GS_MAX ? S->gamma : SP_GS_MAX;
    /* hinge with the CG solve: softer slack walls than the kernels' gamma (stiff walls cut
       the Newton steps at large n; the Cholesky Newton below cg_threshold copes with them) */
    S->slack = (S->L->pieces && S->use_cg) ? o->slack_ratio : 1.0;
    S->irel = o->inner_rel;
    S->absgap = 0.0;
    S->gcap = o->gamma_max;
    S->itol = o->inner_tol;
    double gap_prev = R_PosInf;
    if (S->irel > 0.0) {
        /* the gap at the starting point (primal from sp_start) sets the first inner loop's
           tolerance; the cold start is certified below C1 in every kernel: no kernel is read */
        sp_dual_gap(S);
        gap_prev = S->gap;
    }
    for (it = 0; it < o->maxiter; it++) {
        S->itcur = it;
        if (S->bx.ok && !S->bx.on && it > 0 && sp_box_switch(S)) {
            S->bx.from = it + 1;
            if (o->verbose) Rprintf("spicy: rho in the box from outer iteration %d\n", it + 1);
        }
        /* proximal parameter of the loss slack variables: the kernel one, or (epsilon-
           insensitive loss) its own schedule, raised only while the Newton loops stay short:
           its smoothed kink has width 2 eps / gsl and must stay resolvable by Newton's method */
        S->gsl = S->L->own_gamma ? S->gam_s : S->gamma * S->slack;
        int inner_ok;
        double gnorm0, gnorm_last;
        int nnewton = sp_newton(S, &inner_ok, &gnorm0, &gnorm_last);
        S->newton_total += nnewton;
        sp_tick(S, 1);
        /* The proximal step is taken even when the inner loop stopped early (iteration limit or
           a failed line search): the outer iteration still makes progress, and rejecting such
           steps hurts the semismooth hinge case. Inner loops that end without meeting inner_tol
           are counted. */
        int unsolved = !inner_ok && !(gnorm_last <= 1e-3 * gnorm0);
        if (unsolved) S->nrejected++;
        sp_prox_update(S);
        R_CheckUserInterrupt();   /* the dual sweep may read every kernel */
        sp_dual_gap(S);
        if (o->svm_dual && S->L->pieces && S->L->binary && S->C2 <= 0.0 && S->C1 > 0.0 &&
            S->sumnorm > 0.0 && S->gap > o->tol && S->gap <= SP_SVM_GAP * o->tol) {
            R_CheckUserInterrupt();
            sp_svm_dual(S);
        }
        mk_progress_tick(o->prog, it + 1, o->maxiter, S->gap, o->tol);
        sp_tick(S, 7);
        double row[6] = { mk_time() - S->t0, S->primal, S->dual, S->gap, (double) S->nactive,
                          (double) nnewton };
        mk_hist_add(hist, row);
        if (o->verbose)
            Rprintf("spicy %3d: primal %.6g dual %.6g gap %.3e active %d newton %d sweeps %ld "
                    "gamma %.1e\n",
                    it + 1, S->primal, S->dual, S->gap, S->nactive, nnewton, S->nprod, S->gamma);
        if (S->gap <= o->tol) { status = 0; it++; break; }
        /* the relaxed inner tolerance must not stall the outer loop: an outer iteration that
           did not reduce the gap tightens it tenfold (down to inner_tol) */
        if (!(S->gap < gap_prev)) S->irel *= 0.1;
        /* The drift of the inexact proximal step: an inner loop that stops before its first
           Newton step (its gradient under the absolute tolerance itol sqrt(n)) leaves rho as it
           is, and the proximal update on that rho can move alpha the same way in every outer
           iteration, the gap growing linearly and no step ever taken again. An outer iteration
           without a Newton step that did not reduce the gap therefore tightens itol tenfold
           (down to SP_ITOL_FLOOR inner_tol), and steps gamma and gamma_b back by gamma_mult,
           keeping them below that (at most SP_BACKOFF_MAX times a fit: a tighter tolerance may
           be out of reach at gamma = 1e8). Both changes are needed (inst/notes/NOTES-spicy.md). */
        if (nnewton == 0 && inner_ok && !(S->gap < gap_prev)) {
            if (S->itol * 0.1 >= SP_ITOL_FLOOR * o->inner_tol) S->itol *= 0.1;
            if (S->nbackoff < SP_BACKOFF_MAX && o->gamma_mult > 1.0) {
                S->gcap = S->gamma / o->gamma_mult;
                S->gamma = S->gcap;
                if (S->gammab > S->gcap) S->gammab = S->gcap;
                S->nbackoff++;
            }
            if (o->verbose)
                Rprintf("spicy      no step, no gain: gamma %.1e (cap), inner tolerance %.1e\n",
                        S->gcap, S->itol);
        }
        gap_prev = S->gap;
        /* The proximal parameters grow only after an inner problem that was solved: the
           proximal iteration converges at any fixed gamma, and a larger gamma makes the next
           inner problem harder. At most
           SP_HOLD_MAX times in a row: inner problems that stay unsolved at a fixed gamma (an
           inner iteration limit far too small) must not stop the schedule */
        S->nhold = unsolved ? S->nhold + 1 : 0;
        if (S->nhold == 0 || S->nhold > SP_HOLD_MAX) {
            S->nhold = 0;
            S->gamma *= o->gamma_mult; if (S->gamma > S->gcap) S->gamma = S->gcap;
            S->gammab *= o->gamma_mult; if (S->gammab > S->gcap) S->gammab = S->gcap;
        }
        if (nnewton <= SP_GS_NEWTON) {
            S->gam_s *= o->gamma_mult; if (S->gam_s > o->gamma_max) S->gam_s = o->gamma_max;
        }
    }
    mk_progress_done(o->prog);
    if (o->verbose)
        Rprintf("spicy times: init %.3f grad %.3f hess %.3f solve %.3f model %.3f screen %.3f "
                "prod %.3f ls %.3f outer %.3f\n", S->tm[0], S->tm[1], S->tm[2], S->tm[3], S->tm[8],
                S->tm[4], S->tm[5], S->tm[6], S->tm[7]);
    if (o->verbose && S->lr.on)
        Rprintf("spicy low rank: Woodbury solves %ld, builds %ld (from scratch %ld), updates %ld "
                "(factor updated %ld, refused %ld), without CG %ld (checks %ld), inner loops "
                "stopped at the gap %d, model line slopes %ld\n", S->lr.wused, S->lr.wbuilds,
                S->lr.wfull, S->lr.wupdates, S->lr.wfup, S->lr.wfrej, S->lr.wdirects,
                S->lr.wchecks, S->nearly, S->md.slopes);
    if (o->verbose && S->bx.on)
        Rprintf("spicy box: free coordinates %ld (%.1f a step), set changes %ld, rounds %ld, "
                "unsettled %ld\n",
                S->bx.nfree, S->newton_total > 0 ? (double) S->bx.nfree / S->newton_total : 0.0,
                S->bx.nclip, S->bx.nround, S->bx.nfail);
    *iter = it;
    return status;
}

/* The solver on plain arrays. alpha: n x M (in/out), b, rho (n, in/out), aux (2n, in/out),
   gam (2: gamma, gamma_b; in/out); warm: rho and aux hold a previous state. History rows go to
   hist; norms[m] = ||alpha_m||_{K_m}; kbounds (M x 2) the kernels' screening constants
   (mk_kernel_stats). Scratch from R_alloc. Returns 0 converged, 1 limit. */
static int sp_fit(const mk_store *st, const double *y, int loss, const sp_opts *o,
                  double *alpha, double *b, double *rho, double *aux, double *gam, int warm,
                  mk_hist *hist, double *norms, double *kbounds, sp_result *res)
{
    sp_state S;
    memset(&S, 0, sizeof(S));
    int M = st->M;
    S.t0 = mk_time(); S.tq = S.t0;
    S.st = st; S.n = st->n; S.M = M; S.y = y; S.L = &sp_losses[loss]; S.o = o;
    S.C1 = o->C1; S.C2 = o->C2; S.eps = o->eps;
    S.alpha = alpha; S.b = b; S.rho = rho; S.aux = aux; S.warm = warm;
    S.gamma = gam[0]; S.gammab = gam[1];
    sp_sweep_alloc(&S);
    sp_screen_alloc(&S);
    sp_step_alloc(&S);
    sp_gap_alloc(&S);
    sp_newton_alloc(&S);
    sp_hinge_alloc(&S);
    int boxable = S.bx.ok;

    int it;
    int status = sp_run(&S, hist, &it);

    gam[0] = S.gamma; gam[1] = S.gammab;
    for (int m = 0; m < M; m++) norms[m] = S.anz[m] ? S.anorm[m] : 0.0;
    /* the screening constants of the first sweep (M x 2 column-major: sqrt(1'K 1), the bound of
       sqrt(lambda_max(PKP))) */
    for (int m = 0; m < M; m++) { kbounds[m] = S.sc.s1[m]; kbounds[M + m] = S.sc.sqL[m]; }
    res->primal = S.primal; res->dual = S.dual; res->gap = S.gap; res->iter = it;
    res->status = status; res->sumnorm = S.sumnorm; res->n_active = S.nactive;
    res->newton = S.newton_total; res->cgit = S.cgit; res->cgblock = S.fb.used;
    res->rebuilds = S.nc.G ? S.nc.rebuilds : NA_INTEGER;
    res->model = S.md.w ? S.md.rounds : NA_INTEGER;
    res->deflated = S.df.kmax > 0 ? S.df.used : NA_INTEGER;
    res->single = S.nm.P != NULL;
    res->ls_fail = S.ls_fail; res->floor = S.nfloor;
    res->svm = S.sv.tried; res->svm_won = S.sv.won;
    res->nprod = S.nprod; res->rejected = S.nrejected; res->backoff = S.nbackoff;
    res->box = boxable ? S.bx.from : NA_INTEGER;
    res->boxleft = boxable ? S.bx.left : NA_INTEGER;
    return status;
}

/* The options from the control list, by name, checked (R validates them first); gam0: the
   starting gamma and gamma_b. */
static void sp_read_opts(SEXP control, sp_opts *o, double *gam0)
{
    o->C1 = mk_ctl_real(control, "C1");
    o->C2 = mk_ctl_real(control, "C2");
    o->eps = mk_ctl_real(control, "eps");
    o->tol = mk_ctl_real(control, "tol");
    o->maxiter = mk_ctl_int(control, "maxiter");
    o->inner_tol = mk_ctl_real(control, "inner_tol");
    o->inner_maxiter = mk_ctl_int(control, "inner_maxiter");
    o->nthreads = mk_ctl_int(control, "nthreads");
    o->verbose = mk_ctl_int(control, "verbose");
    o->cg = mk_ctl_int(control, "cg");
    o->cg_threshold = mk_ctl_int(control, "cg_threshold");
    o->cache = mk_ctl_int(control, "newton_cache");
    o->model_rounds = mk_ctl_int(control, "model_rounds");
    o->deflate = mk_ctl_int(control, "cg_deflate");
    o->single = mk_ctl_int(control, "newton_float");
    o->slack_ratio = mk_ctl_real(control, "slack_ratio");
    o->inner_rel = mk_ctl_real(control, "inner_rel");
    o->box_fraction = mk_ctl_real(control, "box_fraction");
    o->svm_dual = mk_ctl_int(control, "svm_dual");
    o->screen = mk_ctl_int(control, "screening");
    o->lazy = mk_ctl_int(control, "lazy_screening");
    gam0[0] = mk_ctl_real(control, "gamma0");
    gam0[1] = mk_ctl_real(control, "gamma_b");
    o->gamma_mult = mk_ctl_real(control, "gamma_mult");
    o->gamma_max = mk_ctl_real(control, "gamma_max");
    if (o->maxiter < 1) o->maxiter = 1;
    if (o->model_rounds < 0 || o->deflate < 0) error("model_rounds and cg_deflate must be >= 0");
    if (!(o->slack_ratio > 0.0) || !(o->inner_rel >= 0.0))
        error("invalid slack_ratio or inner_rel");
    if (!(o->box_fraction >= 0.0 && o->box_fraction <= 1.0))
        error("box_fraction must be in [0, 1]");
    if (o->inner_maxiter < 1) o->inner_maxiter = 1;
    if (!(o->C1 >= 0.0) || !(o->C2 >= 0.0) || !(o->C1 + o->C2 > 0.0)) error("invalid C1, C2");
    if (!(gam0[0] > 0.0) || !(gam0[1] > 0.0) || !(o->gamma_mult >= 1.0))
        error("invalid gamma schedule");
    if (!(o->eps >= 0.0)) error("epsilon must be >= 0");
}

/* mkc_spicy(store, y, control, init)
   control (named, R/spicy.R): loss (code), C1, C2, eps, tol, maxiter, inner_tol, inner_maxiter,
     nthreads, verbose, cg (-1 auto, 0 Cholesky, 1 CG), cg_threshold, newton_cache (-1 with
     CG, 0, 1), model_rounds (>= 0), cg_deflate (>= 0), newton_float (0, 1), slack_ratio (> 0),
     inner_rel (>= 0), svm_dual (0, 1),
     screening (0: every kernel in the working set; for testing), lazy_screening, gamma0,
     gamma_b, gamma_mult, gamma_max.
   init: NULL (cold start) or a named list alpha (n*M), b, rho (n), aux (2n), gamma (2). */
SEXP mkc_spicy(SEXP store, SEXP y, SEXP control, SEXP init)
{
    int nprot = 0;
    mk_store st;
    mk_store_read(store, &st);
    if (!st.square || st.nr != st.n) error("SpicyMKL needs a square training kernel store");
    if (!isReal(y)) error("y must be a double vector");
    int n = st.n, M = st.M;
    if (LENGTH(y) != n) error("length(y) must equal the number of training points of the store");
    if (n < 2) error("need at least two observations");
    if (M < 1) error("need at least one kernel");
    if (!isNewList(control)) error("'control' must be a named list");

    int loss = mk_ctl_int(control, "loss");
    if (loss < 0 || loss >= MK_NLOSS) error("unknown loss code %d", loss);
    sp_opts o;
    double gam0[2];
    sp_read_opts(control, &o, gam0);
    if (st.kind == MK_STORE_LOWRANK) {
        /* the Newton matrix only as an operator through the factors (CG, double precision, no
           cache); no n x n combination for an SVM dual point, no box (it gathers columns) */
        o.cg = 1; o.cache = 0; o.single = 0; o.svm_dual = 0; o.box_fraction = 0.0;
    }
    mk_progress prog;
    mk_progress_init(&prog, control);
    o.prog = &prog;
    const double *yy = REAL(y);
    /* case weights (optional control entry): the box phase of the hinge assumes unit boxes */
    SEXP cw = mk_list_elt(control, "case_weights", NULL);
    o.cw = NULL;
    if (!isNull(cw)) {
        if (!isReal(cw) || XLENGTH(cw) != n)
            error("control entry 'case_weights' must be %d doubles", n);
        for (int i = 0; i < n; i++)
            if (!(REAL(cw)[i] > 0.0) || !R_FINITE(REAL(cw)[i]))
                error("SpicyMKL's case weights must be finite and > 0");
        o.cw = REAL(cw);
        o.box_fraction = 0.0;
    }
    if (sp_losses[loss].binary)
        for (int i = 0; i < n; i++)
            if (yy[i] != 1.0 && yy[i] != -1.0) error("y must be in {-1, +1}");

    size_t nM = (size_t) n * M;
    SEXP alpha = PROTECT(allocMatrix(REALSXP, n, M)); nprot++;
    SEXP rho = PROTECT(allocVector(REALSXP, n)); nprot++;
    SEXP aux = PROTECT(allocVector(REALSXP, 2 * (R_xlen_t) n)); nprot++;
    SEXP gv = PROTECT(allocVector(REALSXP, 2)); nprot++;
    SEXP norms = PROTECT(allocVector(REALSXP, M)); nprot++;
    SEXP kb = PROTECT(allocMatrix(REALSXP, M, 2)); nprot++;
    double *al = REAL(alpha), *gam = REAL(gv), b = 0.0;
    memset(al, 0, sizeof(double) * nM);
    memset(REAL(rho), 0, sizeof(double) * n);
    memset(REAL(aux), 0, sizeof(double) * 2 * n);
    gam[0] = gam0[0]; gam[1] = gam0[1];
    int warm = 0;
    if (!isNull(init)) {
        if (!isNewList(init)) error("'init' must be NULL or a named list");
        mk_list_copy(init, "alpha", al, (R_xlen_t) nM);
        mk_list_copy(init, "b", &b, 1);
        mk_list_copy(init, "rho", REAL(rho), n);
        mk_list_copy(init, "aux", REAL(aux), 2 * (R_xlen_t) n);
        mk_list_copy(init, "gamma", gam, 2);
        if (!(gam[0] > 0.0) || !(gam[1] > 0.0)) error("invalid init$gamma");
        warm = 1;
    }
    mk_hist hist;
    mk_hist_init(&hist, 6);
    sp_result res;
    memset(&res, 0, sizeof(res));
    sp_fit(&st, yy, loss, &o, al, &b, REAL(rho), REAL(aux), gam, warm, &hist, REAL(norms),
           REAL(kb), &res);

    static const char *const nm[] = { "alpha", "b", "rho", "aux", "gamma", "primal", "dual",
                                      "gap", "converged", "iterations", "n_active", "sumnorm",
                                      "newton", "cg_iter", "kernel_sweeps", "history", "norms",
                                      "rejected", "cg_block", "floor", "rebuilds", "model",
                                      "deflated", "single", "svm_dual", "kernel_bounds",
                                      "backoff", "box", "box_left", NULL };
    SEXP out = mk_list_new(nm); nprot++;
    mk_list_set(out, "alpha", alpha);
    mk_list_set(out, "b", ScalarReal(b));
    mk_list_set(out, "rho", rho);
    mk_list_set(out, "aux", aux);
    mk_list_set(out, "gamma", gv);
    mk_list_set(out, "primal", ScalarReal(res.primal));
    mk_list_set(out, "dual", ScalarReal(res.dual));
    mk_list_set(out, "gap", ScalarReal(res.gap));
    mk_list_set(out, "converged", ScalarLogical(res.status == 0));
    mk_list_set(out, "iterations", ScalarInteger(res.iter));
    mk_list_set(out, "n_active", ScalarInteger(res.n_active));
    mk_list_set(out, "sumnorm", ScalarReal(res.sumnorm));
    mk_list_set(out, "newton", ScalarInteger(res.newton));
    mk_list_set(out, "cg_iter", ScalarInteger(res.cgit));
    mk_list_set(out, "kernel_sweeps", ScalarReal((double) res.nprod));
    mk_list_set(out, "history", mk_hist_sexp(&hist, sp_hist_names));
    mk_list_set(out, "norms", norms);
    mk_list_set(out, "rejected", ScalarInteger(res.rejected));
    mk_list_set(out, "cg_block", ScalarInteger(res.cgblock));
    mk_list_set(out, "floor", ScalarInteger(res.floor));
    mk_list_set(out, "rebuilds", ScalarInteger(res.rebuilds));
    mk_list_set(out, "model", ScalarInteger(res.model));
    mk_list_set(out, "deflated", ScalarInteger(res.deflated));
    mk_list_set(out, "single", ScalarLogical(res.single));
    SEXP sv = PROTECT(allocVector(INTSXP, 2)); nprot++;
    INTEGER(sv)[0] = res.svm; INTEGER(sv)[1] = res.svm_won;
    mk_list_set(out, "svm_dual", sv);
    mk_list_set(out, "kernel_bounds", kb);
    mk_list_set(out, "backoff", ScalarInteger(res.backoff));
    mk_list_set(out, "box", ScalarInteger(res.box));
    mk_list_set(out, "box_left", ScalarInteger(res.boxleft));
    UNPROTECT(nprot);
    return out;
}
