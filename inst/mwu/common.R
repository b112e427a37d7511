# Shared by the full-scale MWUMKL scripts (fullscale.R, adult.R, mushroom.R): the date and machine
# stamped on every row, the process's CPU time, and one timed fit with its test accuracy.
suppressPackageStartupMessages(library(mklearn))

stamp <- list(date = format(Sys.time(), "%Y-%m-%d %H:%M"),
              machine = sprintf("%s, %d cores, R %s", Sys.info()[["nodename"]],
                                parallel::detectCores(), getRversion()))
cpu <- function() sum(proc.time()[c("user.self", "sys.self", "user.child", "sys.child")],
                      na.rm = TRUE)

# The whole mkl() call on the training rows `tr` (C = 1, no standardisation: the scripts scale
# the features themselves; the sigmoid on the training values, as only classes are predicted),
# timed in elapsed and CPU seconds, and its accuracy on the rows `te`. `store`: the kernel store
# (mkl_control()); `warnings = FALSE` silences the fit's warnings (constant kernels of a part).
timed_fit <- function(x, y, ks, method, tr, te, memory, store = "auto", warnings = TRUE, ...) {
  invisible(gc())
  c0 <- cpu(); t0 <- proc.time()[["elapsed"]]
  ctl <- mkl_control(platt = "train", nthreads = 1, memory = memory, store = store,
                     progress = FALSE)
  call <- function() suppressMessages(mkl(x[tr, ], y[tr], ks, method = method, C = 1,
                                          standardize = "none", control = ctl, ...))
  f <- if (warnings) call() else suppressWarnings(call())
  el <- proc.time()[["elapsed"]] - t0; cp <- cpu() - c0
  data.frame(N = length(tr), method = method, store = f$store, M = length(f$weights),
             seconds = el, cpu = cp, solver = f$timing[["fit"]], T = f$iterations,
             accuracy = mean(predict(f, x[te, ]) == y[te]), stamp)
}

# ---- LIBLINEAR+, the paper's baseline (not in the package: needs LiblineaR): a linear SVM
# (LibLinear's L2-regularised squared hinge, dual coordinate descent, bias term: type 1, as
# scikit-learn's LinearSVC that the paper used) on Nystroem features of every kernel (Williams
# and Seeger), each kernel unnormalised ("LibLinear is a primal method, we don't need to scale
# each kernel"). The map of a kernel: k landmark rows drawn from the training rows (the paper's
# 150; all of them when fewer), W its k x k kernel, features K(x, L) U diag(1 / sqrt(lambda))
# over W's eigenpairs with lambda above `tol` times the largest (a rank-r map, r <= k: a kernel
# on one feature has few distinct directions, a polynomial of degree p at most p + 1).
nystroem_map <- function(ks, x, k = 150, tol = 1e-8) {
  L <- x[sort(sample(nrow(x), min(k, nrow(x)))), , drop = FALSE]
  W <- gram(ks, L, nthreads = 1)
  maps <- lapply(seq_len(dim(W)[3]), function(m) {
    w <- W[, , m]
    top <- max(diag(w))
    if (!(top > 0)) return(NULL)
    R <- suppressWarnings(chol(w, pivot = TRUE, tol = tol * top))
    r <- attr(R, "rank")
    list(rows = attr(R, "pivot")[seq_len(r)],
         inv = backsolve(R[seq_len(r), seq_len(r), drop = FALSE], diag(r)))
  })
  list(ks = ks, L = L, maps = maps)
}
# The features of the rows z under a map (z x sum of the ranks), 60 kernels at a time.
nystroem_features <- function(map, z) {
  M <- length(map$maps)
  out <- vector("list", M)
  for (b in split(seq_len(M), ceiling(seq_len(M) / 60))) {
    K <- gram(map$ks, map$L, z, which = b, nthreads = 1)
    for (j in seq_along(b)) if (!is.null(map$maps[[b[j]]]))
      out[[b[j]]] <- matrix(K[, , j], nrow(z))[, map$maps[[b[j]]]$rows, drop = FALSE] %*%
        map$maps[[b[j]]]$inv
  }
  do.call(cbind, out)
}
# The whole baseline on the training rows: the maps, the training features and the fit.
liblinear_plus <- function(ks, x, y, C, k = 150) {
  map <- nystroem_map(ks, x, k)
  f <- LiblineaR::LiblineaR(nystroem_features(map, x), y, type = 1, cost = C, bias = 1)
  list(map = map, fit = f)
}
predict_liblinear_plus <- function(obj, z)
  predict(obj$fit, nystroem_features(obj$map, z))$predictions
# C by `nfolds`-fold cross-validation on the training rows (folds stratified by class; each
# fold's maps from its own training rows), the first C of the least error; then the whole
# baseline on all the training rows with that C, timed (elapsed and CPU seconds), and its
# misclassification on the rows `te`. `seed`: the random stream of the folds and landmarks.
run_liblinear_plus <- function(ks, x, y, tr, te, Cs, seed, k = 150, nfolds = 3) {
  set.seed(seed)
  ytr <- y[tr]
  fold <- integer(length(tr))
  for (cl in unique(ytr)) {
    i <- which(ytr == cl)
    fold[i] <- sample(rep_len(seq_len(nfolds), length(i)))
  }
  cverr <- numeric(length(Cs))
  for (v in seq_len(nfolds)) {
    a <- tr[fold != v]; h <- tr[fold == v]
    map <- nystroem_map(ks, x[a, , drop = FALSE], k)
    Fa <- nystroem_features(map, x[a, , drop = FALSE])
    Fh <- nystroem_features(map, x[h, , drop = FALSE])
    for (i in seq_along(Cs)) {
      f <- LiblineaR::LiblineaR(Fa, y[a], type = 1, cost = Cs[i], bias = 1)
      cverr[i] <- cverr[i] + sum(as.character(predict(f, Fh)$predictions) != as.character(y[h]))
    }
  }
  C <- Cs[which.min(cverr)]
  invisible(gc())
  c0 <- cpu(); t0 <- proc.time()[["elapsed"]]
  obj <- liblinear_plus(ks, x[tr, , drop = FALSE], y[tr], C, k)
  el <- proc.time()[["elapsed"]] - t0; cp <- cpu() - c0
  err <- mean(as.character(predict_liblinear_plus(obj, x[te, , drop = FALSE])) !=
                as.character(y[te]))
  list(C = C, error = err, time = el, cpu = cp, M = length(obj$map$maps),
       features = sum(vapply(obj$map$maps, function(u) length(u$rows), 1L)),
       landmarks = nrow(obj$map$L))
}
liblinear_note <- function(k = 150)
  sprintf("LiblineaR %s, type 1, Nystroem %d landmarks", utils::packageVersion("LiblineaR"), k)
