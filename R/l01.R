# MKL-L0/1-SVM (Shi & Zhu) by ADMM: the R front end of src/l01.c.
#
# The ADMM runs on the kernels as stored. C and the three penalties are given on the scale of
# kernels with unit mean diagonal (the paper's raw Gaussian kernels) and converted here with
# the kernels' mean diagonal kscale: the problem on c K is the problem on K with C, rho1, rho2,
# rho3 multiplied by c (w scales by 1/c), so the same settings mean the same thing whatever the
# normalisation (unit trace divides Gaussian kernels by n).

# The starting point. "svm": the hinge-loss SVM on the uniform combination of the free kernels
# (SMO), read as an L0/1 iterate (w = Y alpha, lambda = -alpha on the working set, b from the
# SVM, u the margin slack), d uniform over them. "reference": the authors' start (w = 0, b = b0,
# d uniform over the free kernels, all multipliers 0, u = 0). Kernels not free stay at d = 0.
l01_start <- function(Kc, y, kscale, control, M, n, free = rep(TRUE, M)) {
  T0 <- l01_warmup_set(y, control$warmup_size)
  d <- free / sum(free)
  st <- list(w = numeric(n), u = numeric(n), lambda = numeric(n), d = d, z = numeric(M),
             theta = numeric(M), b = 1, a = control$a0 / kscale, T = T0, free = free)
  if (control$start == "reference") {
    st$b <- control$b0
    return(st)
  }
  # "svm": the SVM on the uniform combination at the box constant of the same scale
  s <- l01_svm(Kc, y, control$svm_C / kscale, d, kc = control$kcache)
  w <- s$alpha * y
  kw <- s$kw
  st$w <- w
  st$b <- s$b
  st$u <- 1 - y * kw - s$b * y
  st$lambda <- -s$alpha
  st$T <- s$alpha > 0
  st
}

# The SVM of the "svm" start on the combination with weights d, and (kw = TRUE) K(d) (y.alpha):
# Kc is that combination (n x n), a low-rank store (the linear SVM of src/lsvm.c, no n x n
# matrix) or a fly store (the SMO through the column cache of kc entries, src/kcache.c; its
# cache collected before the ADMM allocates its own).
l01_svm <- function(Kc, y, C, d, kw = TRUE, kc = 0L) {
  n <- length(y)
  if (is.matrix(Kc)) {
    s <- .Call(C_smo, Kc, y, C, numeric(n), 1e-3, 10000000L)
    if (kw) s$kw <- drop(Kc %*% (s$alpha * y))
    return(s)
  }
  s <- if (Kc$kind == .mk_codes$store[["fly"]]) {
    r <- .Call(C_smo_store, Kc, y, as.double(C), as.double(d), numeric(n), 1e-3, 10000000L,
               as.integer(kc))
    invisible(gc(full = FALSE))
    r
  } else .Call(C_lsvm, Kc, y, C, as.double(d), numeric(n), 1e-3, 1000000L)
  k <- which(d > 0)
  if (kw) s$kw <- drop(.Call(C_store_mv, Kc, k, s$alpha * y) %*% d[k])
  s
}

# The w-step of wstep = "auto": Woodbury ("chol") on a low-rank store when the kernels let in
# have a total rank R with R^2 <= 50 n and R <= 4096, conjugate gradients otherwise. Woodbury's
# R^3 / 3 factorisation after a change of d then costs less than about ten CG iterations,
# each two passes over the n x R factors, and G'G with its factor take at most 270 MB
# (inst/notes/NOTES-l01.md, "Low rank"). Also read by the memory check (R/memory.R).
l01_wstep <- function(wstep, lowrank, R, n) {
  if (!identical(wstep, "auto")) return(wstep)
  if (lowrank && R^2 <= 50 * n && R <= 4096) "chol" else "cg"
}

# The kernels nearly the identity on the training set: effective number of neighbours of a
# training point (kernel_neighbours(), R/store.R) below cut. The d-step can prefer them, as
# they reproduce any margin target on the training points, and a fit on them predicts sign(b)
# on new points (inst/notes/NOTES-l01.md). None when all are.
l01_near_identity <- function(store, cut) {
  M <- store_dims(store)[3L]
  if (!(cut > 0) || M < 2L) return(rep(FALSE, M))
  near <- l01_near(store, seq_len(M), cut)
  if (all(near)) near[] <- FALSE
  near
}

# Whether kernels k have fewer than cut effective neighbours (FALSE where undefined).
l01_near <- function(store, k, cut) {
  near <- kernel_neighbours(store, k) < cut
  near[is.na(near)] <- FALSE
  near
}

# A collapsed run: at least 90% of its weight on the near-identity kernels (near_of(k) tells
# which of kernels k are), or one predicted class on the training data (y_i f(x_i) = 1 - u_i)
# while both labels occur.
l01_collapsed <- function(r, y, near_of) {
  f <- y * (1 - r$u)
  if (all(f > 0) || all(f < 0)) return(TRUE)
  w <- which(r$d > 0)
  sum(r$d[w][near_of(w)]) >= 0.9 * sum(r$d)
}

# The warm-up working set: a class-balanced subset of the samples (size at least 2), or all.
l01_warmup_set <- function(y, size) {
  n <- length(y)
  if (is.na(size) || size >= n) return(rep(TRUE, n))
  pos <- which(y > 0); neg <- which(y < 0)
  k <- max(1L, as.integer(ceiling(size / 2)))
  T <- rep(FALSE, n)
  T[c(pos[seq_len(min(k, length(pos)))], neg[seq_len(min(size - min(k, length(pos)),
                                                         length(neg)))])] <- TRUE
  T
}

# The kernels the ADMM lets in when more than `select` are offered: the `select` kernels of
# largest alignment w'K_m w / ||K_m||_F with the SVM on the uniform combination (w = Y alpha),
# SimpleMKL's gradient at that point taken per unit of each kernel's norm (unit trace alone
# favours low-rank kernels). The ADMM on M kernels keeps d near uniform or memorises
# (inst/notes/NOTES-l01.md). All kernels when M <= select.
l01_preselect <- function(store, y, Kc, kscale, control, M) {
  k <- l01_select_count(control$select, M)
  if (M <= k) return(rep(TRUE, M))
  s <- l01_svm(Kc, y, control$svm_C / kscale, rep(1 / M, M), kw = FALSE, kc = control$kcache)
  score <- .Call(C_store_quad, store, seq_len(M), s$alpha * y) / sqrt(l01_frob2(store))
  free <- logical(M)
  free[order(-score)[seq_len(k)]] <- TRUE
  free
}

# How many kernels the ADMM lets in: `select`, or by default every kernel up to 20 and
# max(10, ceiling(sqrt(M) / 2)) above: the aligned kernels come in families of near copies
# (every near-identity width, every width on one feature), so a few slots suffice at a few
# hundred kernels and more are needed at a thousand (inst/notes/NOTES-l01.md).
l01_select_count <- function(select, M) {
  if (!is.null(select)) return(select)
  if (M <= 20L) M else max(10L, as.integer(ceiling(sqrt(M) / 2)))
}

# The squared Frobenius norms of the kernels: on a low-rank store exact from the factors
# (K_m = G_m G_m' + jitter I: |G_m'G_m|_F^2 + 2 jitter |G_m|_F^2 + n jitter^2), otherwise from
# `cols` of their columns evenly spread.
l01_frob2 <- function(store, cols = 100L) {
  n <- store_dims(store)[2L]; M <- store_dims(store)[3L]
  if (store$kind == .mk_codes$store[["lowrank"]]) {
    jit <- store$jitter
    return(vapply(seq_len(M), function(m) {
      G <- store$G[, factor_cols(store, m), drop = FALSE]
      sum(crossprod(G)^2) + 2 * jit * sum(G^2) + n * jit^2
    }, 0))
  }
  js <- spread_rows(n, cols)
  acc <- double(M)
  for (j in js) acc <- acc + colSums(.Call(C_store_cols, store, seq_len(M), as.integer(j))^2)
  acc * n / length(js)
}

# One ADMM fit (and its chained restarts) with the kernels outside `free` held at d = 0.
l01_run <- function(store, y, C, control, init, warm, free, Kc, kscale, prog, grow = 1) {
  n <- length(y); M <- length(free)
  # the penalties of d = z and sum(d) = 1 grow with the number of free kernels: a weight of
  # 1/M moves by a whole share for a change of 1/M (inst/notes/NOTES-l01.md)
  # (times `grow` in the run again after a collapse)
  rho_d <- 0.3 * control$rho1 * n * max(1, sum(free) / 10)^1.25
  rho2 <- grow * (if (is.null(control$rho2)) rho_d else control$rho2)
  rho3 <- grow * (if (is.null(control$rho3)) rho_d else control$rho3)
  # the CG's residual tolerance below tol: a warm-started CG at a fixed 1e-6 leaves w still
  # when its residual holds, and the blocks then change by ~1e-5 forever (inst/notes/NOTES-l01.md)
  cg_tol <- if (is.null(control$cg_tol)) min(1e-6, control$tol / 10) else control$cg_tol
  ctl <- list(rho1 = control$rho1 / kscale, rho2 = rho2 / kscale, rho3 = rho3 / kscale,
              tol = control$tol, maxiter = control$maxiter,
              warmup = control$warmup, wstep = control$wstep, cg_tol = cg_tol,
              joint_wb = control$joint_wb, freeze_T = control$freeze_T,
              kcache = as.integer(control$kcache), kcols = as.integer(control$kcols))
  ctl["progress_fun"] <- list(progress_part(prog, 1L, control$restarts + 1L))
  Cs <- C / kscale
  start <- if (warm) {
    # the authors' chained protocol: a previous convergent iterate, with u = 0, theta = 0 and
    # the warm-up working set again
    list(w = init$w, u = numeric(n), lambda = init$lambda, d = init$d, z = init$z,
         theta = numeric(M), b = init$b, a = init$a, T = l01_warmup_set(y, control$warmup_size),
         free = free)
  } else {
    if (!all(free) && control$start == "svm" && is.matrix(Kc))
      Kc <- .Call(C_store_combine, store, free / sum(free))
    l01_start(Kc, y, kscale, control, M, n, free)
  }
  r <- .Call(C_l01, store, y, as.double(Cs), ctl, start)
  runs <- 1L
  while (runs <= control$restarts) {
    st <- list(w = r$w, u = numeric(n), lambda = r$lambda, d = r$d, z = r$z,
               theta = numeric(M), b = r$b, a = r$a, T = l01_warmup_set(y, control$warmup_size),
               free = free)
    ctl["progress_fun"] <- list(progress_part(prog, runs + 1L, control$restarts + 1L))
    r2 <- .Call(C_l01, store, y, as.double(Cs), ctl, st)
    r2$history$iteration <- r2$history$iteration + max(r$history$iteration)
    r2$history$time <- r2$history$time + max(r$history$time)
    r2$history <- Map(c, r$history, r2$history)
    r2$iterations <- r$iterations + r2$iterations
    r <- r2
    runs <- runs + 1L
  }
  list(r = r, ctl = ctl, Cs = Cs, runs = runs)
}

fit_l01 <- function(store, y, task, C, control, init) {
  store <- as_store(store)
  control <- method_control("l01", control)
  store$nthreads <- control$nthreads
  if (task != "classification") stop("method 'l01' does classification only", call. = FALSE)
  dims <- store_dims(store)
  n <- dims[2L]; M <- dims[3L]
  y <- as.double(y)
  # the uniform combination: its mean diagonal is the kernel scale, and the "svm" start
  # solves an SVM on it (a low-rank or fly store stands for it: no n x n matrix; on the fly the
  # column cache takes what the budget leaves, R/memory.R)
  lr <- store$kind != .mk_codes$store[["dense"]]
  kc <- fit_kcache("l01", store, n, M, control)
  control$kcache <- as.integer(kc)
  control$kcols <- attr(kc, "kcols")
  Kc <- if (lr) store else .Call(C_store_combine, store, rep(1 / M, M))
  kscale <- if (lr) kernel_scale(store) else mean(diag(Kc))
  t0 <- proc.time()[["elapsed"]]
  prog <- fit_progress(control, method_info("l01")$label)
  warm <- !is.null(init) && !is.null(init$w) && length(init$w) == n
  free <- if (warm && length(init$free) == M) init$free else
    l01_preselect(store, y, Kc, kscale, control, M)
  control$wstep <- l01_wstep(control$wstep, lr, if (lr) sum(diff(store$goff)[free]) else 0, n)
  run <- l01_run(store, y, C, control, init, warm, free, Kc, kscale, prog)
  if (!warm) {
    # a run that collapsed onto kernels nearly the identity is run again (the collapse is
    # judged on its weighted kernels; every kernel is read only after one)
    cut <- control$identity_cut
    near_of <- function(k) l01_near(store, k, cut)
    if (cut > 0 && M >= 2L && l01_collapsed(run$r, y, near_of)) {
      # first the same kernels with penalties grown tenfold (d kept spread, the narrow kernels
      # acting as a ridge beside the wide ones); if that collapses too, the near-identity
      # kernels held out at the usual penalties (inst/notes/NOTES-l01.md)
      run <- l01_run(store, y, C, control, init, warm, free, Kc, kscale, prog, grow = 10)
      near <- l01_near_identity(store, cut)
      if (l01_collapsed(run$r, y, near_of) && any(near & free) && !all(near | !free)) {
        free <- free & !near
        run <- l01_run(store, y, C, control, init, warm, free, Kc, kscale, prog)
      }
    }
  }
  rm(Kc)
  r <- run$r; ctl <- run$ctl; Cs <- run$Cs; runs <- run$runs
  d <- r$d
  if (sum(d) > 0) d <- d / sum(d)
  # P-stationarity makes w = -Y lambda, zero outside the working set T at the limit; the fit
  # keeps all of w: small entries off T, summed over many points of a wide kernel, move the
  # decision values like a bias (inst/notes/NOTES-l01.md). info$n_sv counts T. With T empty
  # the stationary w = -Y lambda is zero: what is left is the tolerance's residue.
  alpha <- outer(if (any(r$T)) r$w else numeric(n), d)
  hist <- as.data.frame(r$history)
  info <- list(n_sv = r$n_T, n_S = r$n_S, kscale = kscale, C_scaled = Cs,
               rho = c(ctl$rho1, ctl$rho2, ctl$rho3), change = r$change,
               wstep = control$wstep,
               chol_factorizations = r$chol_factorizations, cg_iterations = r$cg_iterations,
               solver_time = proc.time()[["elapsed"]] - t0, runs = runs,
               T_frozen_at = r$T_frozen, held_out = which(!free),
               w_off_T = max(abs(r$w[!r$T]), 0) / max(abs(r$w), .Machine$double.xmin))
  if (!isTRUE(r$converged)) {
    bad <- names(r$change)[r$change >= control$tol]
    info$nonconvergence <- sprintf("block(s) not settled: %s (largest relative change %s in '%s')",
                                   paste(bad, collapse = ", "),
                                   format(signif(max(r$change), 3)), r$worst_block)
  }
  list(weights = d, alpha = alpha, b = r$b, objective = r$objective,
       converged = isTRUE(r$converged), iterations = r$iterations, history = hist,
       state = list(w = r$w, b = r$b, d = r$d, z = r$z, theta = r$theta, a = r$a,
                    lambda = r$lambda, u = r$u, T = r$T, free = free),
       info = info)
}

# Validation of the l01 settings (called by check_control_values()).
check_l01_control <- function(s) {
  for (nm in c("rho1", "rho2", "rho3", "svm_C", "cg_tol"))
    if (!is.null(s[[nm]])) s[[nm]] <- check_scalar(s[[nm]], nm, 0, lower_open = TRUE)
  if (!is.null(s[["identity_cut"]]))
    s[["identity_cut"]] <- check_scalar(s[["identity_cut"]], "identity_cut", 0)
  if (!is.null(s[["joint_wb"]]) && !(is.logical(s[["joint_wb"]]) && length(s[["joint_wb"]]) == 1L &&
                                !is.na(s[["joint_wb"]])))
    stop("'joint_wb' must be TRUE or FALSE", call. = FALSE)
  for (nm in c("b0", "a0"))
    if (!is.null(s[[nm]]) && !(is.numeric(s[[nm]]) && length(s[[nm]]) == 1L &&
                               is.finite(s[[nm]])))
      stop(sprintf("'%s' must be one finite number", nm), call. = FALSE)
  for (nm in c("warmup", "restarts", "freeze_T"))
    if (!is.null(s[[nm]])) s[[nm]] <- check_count(s[[nm]], nm, 0)
  if (!is.null(s[["select"]])) s[["select"]] <- check_count(s[["select"]], "select", 1)
  # (internal: the combined columns of K(d) on the fly, src/l01.c; NA from the budget)
  if (!is.null(s[["kcols"]]) && !identical(s[["kcols"]], NA_integer_))
    s[["kcols"]] <- check_count(s[["kcols"]], "kcols", 0)
  ws <- s[["warmup_size"]]
  if (!is.null(ws) && !(length(ws) == 1L && is.na(ws)))
    s[["warmup_size"]] <- check_count(s[["warmup_size"]], "warmup_size", 2)
  if (!is.null(s[["start"]]))
    s[["start"]] <- match_arg(s[["start"]], c("svm", "reference"), name = "start")
  if (!is.null(s[["wstep"]]))
    s[["wstep"]] <- match_arg(s[["wstep"]], c("auto", "cg", "chol"), name = "wstep")
  s
}
