# Probabilities of classification fits: Platt's sigmoid fitted on cross-validated decision
# values (mkl_control(platt = "cv"), the default, as libsvm does) or on the training decision
# values ("train"). The sigmoid itself is platt_fit() (R/methods.R); measurements in
# inst/notes/NOTES-model.md (inst/benchmarks/bench-platt.R).

.platt_nfolds <- 5L
.platt_seed <- 5L
# Folds are fitted until this many rows are held out: at large n one or two of the five folds
# give the sigmoid's two parameters as closely as all five (NOTES-model.md, "Probabilities")
.platt_heldout <- 5000L
# A low-rank fit with this many training rows per factor column (the model is linear in them)
# takes its training decision values: as well calibrated there (NOTES-model.md, "Probabilities")
.platt_rows_per_rank <- 50

# Evaluates expr with the random-number stream set by `seed`, then puts the session's stream
# back as it was (or absent), so that a fit neither reads nor moves the global stream.
with_seed <- function(seed, expr) {
  env <- globalenv()
  had <- exists(".Random.seed", envir = env, inherits = FALSE)
  old <- if (had) get(".Random.seed", envir = env, inherits = FALSE)
  on.exit(if (had) assign(".Random.seed", old, envir = env) else
    if (exists(".Random.seed", envir = env, inherits = FALSE))
      rm(".Random.seed", envir = env))
  set.seed(seed)
  expr
}

# The start of a fold fit (rows `tr` of the training rows) from the fit on all the data, where
# a method's state allows it: the SVM family its kernel weights, SpicyMKL its coefficients and
# multipliers on those rows, Empirical Bayes its variances, MKL-L0/1 its iterate on those rows
# (NOTES-l01.md); otherwise a cold start (NULL).
platt_warm <- function(fit, tr) {
  st <- restore_state(fit)
  if (is.null(st)) return(NULL)
  n <- fit$nobs
  switch(fit$method,
         simple = , hessian = , lp = if (length(st$weights)) list(weights = st$weights),
         spicy = if (is.matrix(st$alpha) && nrow(st$alpha) == n && length(st$rho) == n) {
           st$alpha <- st$alpha[tr, , drop = FALSE]
           st$rho <- st$rho[tr]
           st$aux <- c(st$aux[tr], st$aux[n + tr])
           st$dim <- c(length(tr), ncol(st$alpha))
           st
         },
         bayes = st,
         # the chained start of fit_l01(): no preselection, no collapse check
         l01 = if (length(st$w) == n) {
           for (v in c("w", "lambda", "u", "T")) st[[v]] <- st[[v]][tr]
           st
         },
         NULL)
}

# Whether a fit of n rows skips the folds: on a low-rank store (`lowrank`) of R factor columns,
# at least .platt_rows_per_rank rows per column.
platt_rank_rows <- function(lowrank, n, R) lowrank && n >= .platt_rows_per_rank * R

# Held-out decision values of the fits `fits` (one per C, "mkl" objects on `store`) by an
# internal cross-validation: per fold, the solver on the training part of the store (its
# principal submatrix) at each C, warm-started from the fit on all the data; the held-out
# decision values read the whole store through the fold's coefficients (zero on the held-out
# rows). Folds are fitted in turn until .platt_heldout rows are held out; the other rows' values
# are NA. Returns an n x length(C) matrix, or a character reason when it cannot run. Case
# weights (ctl$case_weights): each fold fit gets those of its rows, and C's conversion their
# total; rows of weight 0 count for nothing in the class check and the sigmoid.
platt_cv_values <- function(fitfun, store, y, C, ctl, base, fits) {
  cw <- ctl$case_weights
  if (min(table(factor(if (is.null(cw)) y else y[cw > 0], c(-1, 1)))) < .platt_nfolds)
    return(sprintf("fewer than %d points of a class", .platt_nfolds))
  n <- length(y)
  if (platt_rank_rows(identical(store$kind, .mk_codes$store[["lowrank"]]), n, ncol(store$G)))
    return(sprintf("at least %d rows per factor column", .platt_rows_per_rank))
  # with weights, the rows of weight 0 are spread over the folds as a class of their own
  strata <- if (is.null(cw)) y else ifelse(cw > 0, y, 0)
  foldid <- with_seed(.platt_seed, make_folds(strata, .platt_nfolds, TRUE))
  ctl$verbose <- FALSE
  old <- progress_quiet()
  on.exit(progress_restore(old))
  dv <- matrix(NA_real_, n, length(C))
  held <- 0L
  for (k in seq_len(.platt_nfolds)) {
    if (held >= .platt_heldout) break
    tr <- which(foldid != k)
    out <- foldid == k
    # the fit's garbage (its checks' copies, the previous fold's copy) collected before the copy
    if (length(store$K) + length(store$G) > 4e6) gc(verbose = FALSE)
    st <- subset_store(store, tr)
    if (!is.null(cw)) ctl$case_weights <- cw[tr]
    for (j in seq_along(C)) {
      Cs <- solver_C(base$method, C[j], base$kscale, if (is.null(cw)) length(tr) else sum(cw[tr]))
      res <- tryCatch(suppressWarnings(fitfun(st, y[tr], "classification", Cs, ctl,
                                              platt_warm(fits[[j]], tr))),
                      error = function(e) e)
      if (inherits(res, "error"))
        return(paste("a fold fit failed:", conditionMessage(res)))
      alpha <- res$alpha
      if (is_outer_alpha(alpha)) {
        u <- numeric(n)
        u[tr] <- alpha$u
        alpha$u <- u
      } else {
        a <- matrix(0, n, ncol(alpha))
        a[tr, ] <- alpha
        alpha <- a
      }
      act <- alpha_cols_nonzero(alpha)
      dv[out, j] <- train_decision(store, alpha, act, base$kernel_info, as.double(res$b))[out]
    }
    rm(st, res)   # collected before the next fold's copy: one at a time (NOTES-store.md)
    held <- held + sum(out)
  }
  dv
}

# Platt's sigmoid for every fit of a path on one store (fit_store_path()): on cross-validated
# decision values (platt = "cv") or on the training ones; fit$platt_method says which, and
# why a cross-validation fell back to the training values. Inside with_platt_deferred() the
# cross-validation is left to the caller (platt_method "deferred", training values meanwhile).
platt_path <- function(fits, fitfun, store, y, C, ctl, base) {
  if (base$task != "classification" || !.fold_fit$sigmoid) return(fits)   # R/cv.R
  how <- if (identical(ctl[["platt"]], "train") || identical(base$loss, "logistic"))
    "train" else "cv"
  if (how == "cv" && .platt_defer$on) {
    return(lapply(fits, function(f) {
      f$platt <- platt_fit(f$fitted, y, f$loss, ctl$case_weights)
      f$platt_method <- "deferred"
      f
    }))
  }
  t0 <- proc.time()[["elapsed"]]
  dv <- if (how == "cv") platt_cv_values(fitfun, store, y, C, ctl, base, fits)
  t_cv <- (proc.time()[["elapsed"]] - t0) / length(fits)
  for (j in seq_along(fits)) {
    f <- fits[[j]]
    if (is.matrix(dv)) {
      ok <- !is.na(dv[, j])
      f$platt <- platt_fit(dv[ok, j], y[ok], f$loss, ctl$case_weights[ok])
      f$platt_method <- "cv"
      f$heldout <- heldout_summary(dv[, j], f$fitted, y, ctl$case_weights)
      f$timing <- c(f$timing, platt = t_cv)
    } else {
      f$platt <- platt_fit(f$fitted, y, f$loss, ctl$case_weights)
      f$platt_method <- if (identical(base$loss, "logistic")) "logistic" else
        if (is.character(dv)) paste0("train (", dv, ")") else "train"
    }
    fits[[j]] <- f
  }
  fits
}

# What the held-out decision values `dv` (NA: not held out) say of a fit against its training
# decision values `fitted`: the rows held out, their accuracy, the training accuracy on the
# same rows, the majority rate of their labels and its class (1: the negative, 2: the positive),
# the recall of each class, and the counts of the classes predicted and labelled (case weights
# count in the rates and the majority; rows of weight 0 do not count). Read by
# heldout_degenerate() (R/mkl.R).
heldout_summary <- function(dv, fitted, y, cw = NULL) {
  w <- if (is.null(cw)) rep(1, length(y)) else cw
  ok <- !is.na(dv) & w > 0
  w <- w[ok] / sum(w[ok])
  yo <- y[ok]
  hit <- decision_class(dv[ok]) == yo
  rec <- function(s) if (any(s)) sum(w[s] * hit[s]) / sum(w[s]) else NA_real_
  rates <- c(sum(w[yo < 0]), sum(w[yo > 0]))
  list(n = sum(ok), accuracy = sum(w * hit),
       train_accuracy = sum(w * (decision_class(fitted[ok]) == yo)),
       majority = max(rates), majority_class = which.max(rates),
       recall = c(rec(yo < 0), rec(yo > 0)),
       predicted = c(sum(dv[ok] <= 0), sum(dv[ok] > 0)), labels = c(sum(yo < 0), sum(yo > 0)))
}

# cv.mkl() calibrates its path on all the data with the held-out decision values of its own
# folds, instead of a second cross-validation inside every fit (half of its time otherwise).
.platt_defer <- new.env(parent = emptyenv())
.platt_defer$on <- FALSE

with_platt_deferred <- function(expr) {
  old <- .platt_defer$on
  .platt_defer$on <- TRUE
  on.exit(.platt_defer$on <- old)
  expr
}

# Whether a fit (binary, multiclass or path) left its sigmoids to the caller.
platt_deferred <- function(fit) {
  fits <- if (inherits(fit, "mkl_path")) fit$fits else list(fit)
  any(vapply(fits, function(f) {
    bins <- if (inherits(f, "mkl_multi")) f$fits else list(f)
    any(vapply(bins, function(b) identical(b$platt_method, "deferred"), TRUE))
  }, TRUE))
}

# The deferred sigmoids of the path `fit` on held-out decision values: dv[[j]], per C, an
# n x (binary problems) matrix over every training row (one-vs-one problems read their rows).
platt_from_folds <- function(fit, dv) {
  path <- inherits(fit, "mkl_path")
  fits <- if (path) fit$fits else list(fit)
  for (j in seq_along(fits)) {
    multi <- inherits(fits[[j]], "mkl_multi")
    bins <- if (multi) fits[[j]]$fits else list(fits[[j]])
    for (b in seq_along(bins)) {
      f <- bins[[b]]
      if (!identical(f$platt_method, "deferred")) next
      v <- dv[[j]][, b]
      if (!is.null(f$rows)) v <- v[f$rows]
      f$platt <- platt_fit(v, f$y, f$loss, f$case_weights)
      f$platt_method <- "cv"
      bins[[b]] <- f
    }
    if (multi) fits[[j]]$fits[] <- bins else fits[[j]] <- bins[[1L]]
  }
  if (path) {
    fit$fits <- fits
    fit
  } else fits[[1L]]
}
