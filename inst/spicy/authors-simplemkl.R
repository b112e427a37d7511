# The authors' SimpleMKL (Rakotomamonjy et al.'s Matlab SimpleMKL toolbox, run under GNU Octave)
# timed beside mklearn's SimpleMKL and SpicyMKL (hinge) on the problems of fig3.R: Ringnorm,
# N = 200 training points of split s (seed 3 + s - 1), the M random Gaussian kernels of seed
# 1000 + M, z-scored features, unit trace, relative duality gap 0.01, the paper's C (SimpleMKL at
# the box constant C_svm of the SpicyMKL hinge solution, see common.R). Both SimpleMKLs get the
# same normalised kernel matrices: R builds them (gram()), fits mklearn on them as precomputed
# kernels, writes them to a binary file and Octave reads that file.
#
# The toolbox is not part of this package. Get SimpleMKL version 1.0 (the code the SpicyMKL paper
# used, from Rakotomamonjy's page asi.insa-rouen.fr/enseignants/~arakotom/code/mklindex.html; a
# mirror: github.com/maxis1718/SimpleMKL, commit a497bf7 "SimpleMKL Matlab v1.0", which is the
# one measured in authors-simplemkl-results.csv), compile its MEX files for Octave in its folder
# (mkoctfile --mex vectorize.c devectorize.c, then the same for vectorize_single.c and
# devectorize_single.c; Octave's development files, e.g. Debian's liboctave-dev, provide
# mkoctfile) and point SIMPLEMKL_DIR at that folder (the one holding mklsvm.m, monqp.m,
# svmclass.m). OCTAVE names the Octave binary (default "octave").
#
# The toolbox's options are those of its own example exmklclass.m (duality-gap stopping rule at
# 0.01, numericalprecision 1e-8, lambdareg 1e-8, seuil 0, golden-section step 0.1, the packed
# kernel storage efficientkernel = 1, built by its build_efficientK() before the timer), except
# nbitermax = 5000 (mklearn's SimpleMKL gets maxiter = 5000 too). MKLEARN_AUTHORS_STORAGE=array
# runs it on the 3-D array of kernels instead (efficientkernel = 0, no MEX files needed). Its SVM
# (svmclass / monqp) solves on sum_m d_m K_m at the box constant of the stored kernels, which is
# mklearn's C_svm / kscale (R/cscale.R). Both report J(d), the SVM dual value at the final
# weights, and stop at the same relative gap (J(d) - sum(a) + max_m a'YK_mYa / 2) / J(d).
# mklearn runs on one thread and Octave on one core (reference BLAS); times are CPU seconds
# (user + system) of the fit: Octave's cputime() around mklsvm(), R's proc.time() around mkl()
# on the precomputed kernels, beside elapsed seconds.
#
# Run from the repository root (rows of the same split, M, C and implementation are replaced):
#   SIMPLEMKL_DIR=<toolbox> nice -n 10 Rscript inst/spicy/authors-simplemkl.R [C_paper ...]
# MKLEARN_AUTHORS_M (default 50,200,500,2000), MKLEARN_SPLITS (default 1; MKLEARN_FIRST_SPLIT
# starts at a later one), MKLEARN_AUTHORS_REPS (mklearn's fits are repeated and their median
# times kept, default 3; one such fit takes about a second, the authors' up to minutes, and CPU
# seconds of one fit varied up to twofold on the shared machine) and MKLEARN_AUTHORS_TIMEOUT
# (elapsed seconds allowed to one Octave fit, default 3600) set the run.
#
# MKLEARN_AUTHORS_CODE (default "simple"; a comma list of simple, hessian, spicy) picks the
# authors' codes run. hessian: Chapelle's HessianMKL (Chapelle and Rakotomamonjy, "Second order
# optimization of kernel parameters", 2008), its kernel_combination.m and Bottou's SVQP solver
# (svqp.cpp, svqp.h; the folder must hold svqp as an Octave MEX file), as copied into the
# experiment scripts of Kloft et al.'s lp-norm MKL study; a public mirror:
# github.com/xinwangliu/Radius-incorporated-MKL-algorithm, commit ee5afac, folder
# shogun-3.2.0/myScript/experiments/mnist/hessmkl. Point HESSIANMKL_DIR at that folder. It runs at
# the same box constant as SimpleMKL with Chapelle's own stopping rule (the Newton step's
# predicted decrease below 1e-5 of the objective): the duality-gap rule Kloft et al. added
# (max_dgap) takes the primal at a bias averaged over the free support vectors, which on a small
# test stayed 1.6% above the dual at the optimum, so it never stopped. Its J(d) and gap (the
# driver's) are computed after the timer from the SVM at its weights. mklearn's HessianMKL is
# fitted beside it.
# spicy: Suzuki and Tomioka's SpicyMKL toolbox (version 3, SpicyMKL.m; a public mirror: the
# GURLS repository github.com/LCSL/GURLS, commit 5289c0d, folder
# gurls/optimizers/mkl/func/SpicyMKL_ver3; removed there at the next commit). Its MEX files
# (normKj.c, HessAugMexbias.c) cast Matlab's dimension array to int* and need Matlab's blas.h, so
# under Octave (64-bit mwSize) the toolbox's own M-file versions of those two functions are used
# (the same code, its auxiliary_m_file folder): no compilation. Point SPICYMKL_DIR at the folder.
# It gets the hinge loss (options.loss = 'svm') at mklearn's SpicyMKL constant
# (fit$info$C_solver, the paper's C on these unit-trace kernels) and its defaults otherwise
# (duality-gap stop at tolOuter = 0.01); its objective in the CSV is its primal objective
# (story.primalobj), compared with mklearn's SpicyMKL (hinge) objective.
# Writes inst/spicy/authors-simplemkl-results.csv and appends to authors-simplemkl-console.txt.
source(file.path(if (file.exists("inst/spicy")) "inst/spicy" else ".", "common.R"))
options(width = 150)
codes <- strsplit(Sys.getenv("MKLEARN_AUTHORS_CODE", "simple"), ",")[[1]]
if (!length(codes) || !all(codes %in% c("simple", "hessian", "spicy")))
  stop("MKLEARN_AUTHORS_CODE: a comma list of simple, hessian, spicy", call. = FALSE)
toolbox <- function(var, file, what) {      # the folder of an authors' code, checked
  d <- Sys.getenv(var)
  if (!nzchar(d) || !file.exists(file.path(d, file)))
    stop(sprintf("set %s to the %s folder (see the header)", var, what), call. = FALSE)
  normalizePath(d)
}
tbx <- if ("simple" %in% codes) toolbox("SIMPLEMKL_DIR", "mklsvm.m", "SimpleMKL toolbox's")
hbx <- if ("hessian" %in% codes) toolbox("HESSIANMKL_DIR", "kernel_combination.m", "HessianMKL")
sbx <- if ("spicy" %in% codes) toolbox("SPICYMKL_DIR", "SpicyMKL.m", "SpicyMKL toolbox's")
octave <- Sys.getenv("OCTAVE", "octave")
args <- as.numeric(commandArgs(TRUE))
Cs <- if (length(args)) args else 0.05
Ms <- as.integer(strsplit(Sys.getenv("MKLEARN_AUTHORS_M", "50,200,500,2000"), ",")[[1]])
splits <- as.integer(Sys.getenv("MKLEARN_SPLITS", "1"))
first <- as.integer(Sys.getenv("MKLEARN_FIRST_SPLIT", "1"))
reps <- as.integer(Sys.getenv("MKLEARN_AUTHORS_REPS", "3"))
timeout <- as.numeric(Sys.getenv("MKLEARN_AUTHORS_TIMEOUT", "3600"))
packed <- Sys.getenv("MKLEARN_AUTHORS_STORAGE", "packed") != "array"
label <- if (packed) "authors' SimpleMKL (Octave)" else "authors' SimpleMKL (Octave, 3-D array)"
labels <- c(hessian = "authors' HessianMKL (Octave)", spicy = "authors' SpicyMKL (Octave)")
oct_version <- system2(octave, c("--no-gui", "--norc", "--quiet", "--eval",
                                 shQuote("printf('%s', version())")), stdout = TRUE,
                       stderr = FALSE)
dir <- out_dir("spicy")
out <- file.path(dir, "authors-simplemkl-results.csv")
con <- file(file.path(dir, "authors-simplemkl-console.txt"), open = "a")
sink(con, split = TRUE)
cat(sprintf("== authors-simplemkl.R %s, %s, C = %s, M = %s, splits %d-%d, Octave %s\n",
            format(Sys.time()), paste(codes, collapse = ", "), paste(Cs, collapse = ", "),
            paste(Ms, collapse = ", "), first, splits, oct_version))
work <- tempfile("authors-simplemkl")
dir.create(work)

# An mklearn fit on the precomputed kernels K, on one thread, `reps` times (the same iterates
# each time): median CPU seconds of the whole call, its elapsed seconds and the solver's.
mk_fit <- function(K, y, method, C, loss = NULL) {
  ctl <- if (method %in% c("simple", "hessian"))
    mkl_control(maxiter = 5000, max_time = 3600, platt = "train", nthreads = 1) else
    mkl_control(platt = "train", nthreads = 1)
  tm <- matrix(NA_real_, reps, 3L)
  for (r in seq_len(reps)) {
    fit <- NULL
    invisible(gc())
    t0 <- proc.time()
    fit <- suppressWarnings(mkl(y = y, kernels = K, method = method, C = C, loss = loss,
                                control = ctl))
    dt <- proc.time() - t0
    tm[r, ] <- c(dt[["user.self"]] + dt[["sys.self"]], dt[["elapsed"]], fit$timing[["fit"]])
  }
  list(fit = fit, row = data.frame(
    cpu_s = stats::median(tm[, 1L]), elapsed_s = stats::median(tm[, 2L]),
    solver_s = stats::median(tm[, 3L]), iterations = fit$iterations, converged = fit$converged,
    gap = utils::tail(fit$history$gap, 1L), objective = fit$objective,
    n_selected = sum(fit$weights > 0)))
}

# Run, in Octave, `call` (an authors' function on the kernels KK and labels y) timed, after
# adding the folder `dir` to the path and the lines `setup`; the lines `after` leave obj, nsel,
# iters, gap and ok. The kernels come from kfile (n x n x M doubles), the labels from yfile.
run_octave <- function(dir, setup, call, after, kfile, yfile, n, M) {
  res <- file.path(work, "result.txt")
  unlink(res)
  m <- file.path(work, "run_authors.m")
  writeLines(c(
    sprintf("warning('off', 'all'); addpath('%s');", dir),
    sprintf("fid = fopen('%s', 'r'); KK = fread(fid, Inf, 'double'); fclose(fid);", kfile),
    sprintf("KK = reshape(KK, %d, %d, %d);", n, n, M),
    sprintf("fid = fopen('%s', 'r'); y = fread(fid, Inf, 'double'); fclose(fid);", yfile),
    setup, "c0 = cputime(); tic;", call, "el = toc; cpu = cputime() - c0;", after,
    sprintf("fid = fopen('%s', 'w');", res),
    "fprintf(fid, '%.17g\\n', [cpu; el; obj; nsel; iters; gap; ok]);",
    "fclose(fid);"), m)
  t0 <- proc.time()
  st <- system2("timeout", c(timeout, octave, "--no-gui", "--norc", "--quiet", m),
                stdout = FALSE, stderr = FALSE, env = "OMP_NUM_THREADS=1")
  dt <- proc.time() - t0
  if (!file.exists(res)) {
    cat(sprintf("Octave stopped without a result (status %s) after %.0f s elapsed\n", st,
                dt[["elapsed"]]))
    return(data.frame(cpu_s = NA_real_, elapsed_s = dt[["elapsed"]], solver_s = NA_real_,
                      iterations = NA_integer_, converged = FALSE, gap = NA_real_,
                      objective = NA_real_, n_selected = NA_integer_))
  }
  r <- as.numeric(readLines(res))
  data.frame(cpu_s = r[1], elapsed_s = r[2], solver_s = r[2], iterations = as.integer(r[5]),
             converged = r[7] == 1 && r[6] < 0.01, gap = r[6], objective = r[3],
             n_selected = as.integer(r[4]))
}

# The toolbox's mklsvm() at box constant C, with exmklclass.m's options (see the header).
octave_fit <- function(kfile, yfile, n, M, C) run_octave(tbx, c(
  "options.algo = 'svmclass'; options.stopvariation = 0; options.stopKKT = 0;",
  "options.stopdualitygap = 1; options.seuildiffsigma = 1e-2; options.seuildiffconstraint = 0.1;",
  "options.seuildualitygap = 0.01; options.goldensearch_deltmax = 1e-1;",
  "options.numericalprecision = 1e-8; options.lambdareg = 1e-8;",
  "options.firstbasevariable = 'first';",
  "options.nbitermax = 5000; options.seuil = 0; options.seuilitermax = 10; options.miniter = 0;",
  sprintf("options.verbosesvm = 0; options.efficientkernel = %d;", as.integer(packed)),
  if (packed) "KK = build_efficientK(KK);"),
  sprintf("[Sigma, Alpsup, w0, pos, history, obj, status] = mklsvm(KK, y, %.17g, options, 0);", C),
  # status 0: the duality gap criterion was met (1: premature stop, 2: nbitermax)
  c("nsel = sum(Sigma > 0); iters = length(history.dualitygap) - 1;",
    "gap = history.dualitygap(end); ok = status == 0;"), kfile, yfile, n, M)

# Chapelle's kernel_combination() (HessianMKL) at box constant C with its own stopping rule;
# then, untimed, the SVM at its weights (its SVQP, its ridge) for J(d) and the gap of the other
# SimpleMKL-family fits, (J(d) - sum(a) + max_m a'YK_mYa / 2) / J(d) (see the header).
hessian_fit <- function(kfile, yfile, n, M, C) run_octave(hbx,
  sprintf("C = %.17g; n = %d; M = %d;", C, n, M),
  "[D, t, iters] = kernel_combination(KK, y, C);",
  c("K0 = 1e-8 * eye(n); for m = find(D' > 0), K0 = K0 + D(m) * KK(:, :, m); end;",
    "K0 = (K0 + K0') / 2; a = svqp(K0, y, -C * (y == -1), C * (y == 1), zeros(n, 1), 1);",
    "obj = sum(a .* y) - 0.5 * a' * K0 * a;",
    "q = zeros(M, 1); for m = 1:M, q(m) = 0.5 * a' * KK(:, :, m) * a; end",
    "gap = (obj - sum(abs(a)) + max(q)) / obj; nsel = sum(D > 0); ok = 1;"),
  kfile, yfile, n, M)

# The SpicyMKL toolbox's SpicyMKL() with the hinge loss at penalty C.
spicy_fit <- function(kfile, yfile, n, M, C) run_octave(sbx,
  "options.loss = 'svm'; options.display = 1;",
  sprintf("[al, d, b, act, sv, params, story] = SpicyMKL(KK, y, %.17g, options);", C),
  c("obj = story.primalobj(end); gap = story.dualitygap(end); iters = length(story.dualitygap);",
    "nsel = length(act); ok = gap < 0.01;"), kfile, yfile, n, M)

draw <- function(s) {        # split s of fig3.R's Ringnorm
  set.seed(3 + s - 1)
  rn <- mlbench::mlbench.ringnorm(200, d = 20)
  list(x = rn$x, y = rn$classes)
}
for (s in seq(first, splits)) {
  d <- draw(s)
  y_pm <- ifelse(d$y == levels(d$y)[2L], 1, -1)    # the toolbox wants -1 / +1
  yfile <- file.path(work, "y.bin")
  writeBin(y_pm, yfile)
  for (M in Ms) {
    set.seed(1000 + M)
    ks <- random_kernels(M, p = ncol(d$x))
    # the kernels mkl(x, y, kernels = ks) builds: on the z-scored columns, unit trace + jitter
    K <- gram(ks, mklearn:::standardize_x(d$x)$x)
    attributes(K) <- list(dim = dim(K))
    res <- NULL
    for (C_paper in Cs) {
      h <- mk_fit(K, d$y, "spicy", 1 / (2 * C_paper), "hinge")
      C_svm <- h$fit$info$C_svm
      C_spicy <- h$fit$info$C_solver          # the penalty on the stored kernels
      sm <- mk_fit(K, d$y, "simple", C_svm)
      C_box <- sm$fit$info$C_solver           # the box constant on the stored kernels
      hm <- if ("hessian" %in% codes) mk_fit(K, d$y, "hessian", C_svm)
      one <- rbind(cbind(implementation = "mklearn SpicyMKL (hinge)", C = 1 / (2 * C_paper),
                         C_box = NA_real_, h$row),
                   cbind(implementation = "mklearn SimpleMKL", C = C_svm, C_box = C_box, sm$row),
                   if (!is.null(hm))
                     cbind(implementation = "mklearn HessianMKL", C = C_svm, C_box = C_box,
                           hm$row))
      h <- sm <- hm <- NULL
      kfile <- file.path(work, "K.bin")
      writeBin(as.double(K), kfile)
      if ("simple" %in% codes)
        one <- rbind(one, cbind(implementation = label, C = C_svm, C_box = C_box,
                                octave_fit(kfile, yfile, nrow(K), M, C_box)))
      if ("hessian" %in% codes)
        one <- rbind(one, cbind(implementation = labels[["hessian"]], C = C_svm, C_box = C_box,
                                hessian_fit(kfile, yfile, nrow(K), M, C_box)))
      if ("spicy" %in% codes)       # C_box: here the toolbox's penalty
        one <- rbind(one, cbind(implementation = labels[["spicy"]], C = 1 / (2 * C_paper),
                                C_box = C_spicy, spicy_fit(kfile, yfile, nrow(K), M, C_spicy)))
      unlink(kfile)
      res <- rbind(res, cbind(C_paper = C_paper, one))
    }
    res <- cbind(set = "ringnorm", split = s, M = M, res)
    # each objective against mklearn's on the same problem: the SVM-family ones (J(d)) against
    # its SimpleMKL, the authors' SpicyMKL against its SpicyMKL (hinge)
    ref <- ifelse(grepl("SpicyMKL", res$implementation), "mklearn SpicyMKL (hinge)",
                  "mklearn SimpleMKL")
    i <- match(paste(res$C_paper, ref), paste(res$C_paper, res$implementation))
    res$rel_diff_objective <- ifelse(res$implementation == ref, 0,
                                     (res$objective - res$objective[i]) / res$objective[i])
    res$rel_diff_objective[res$implementation == "mklearn SpicyMKL (hinge)" &
                             !("spicy" %in% codes)] <- NA
    res$threads <- 1L
    simple_sw <- sprintf("SimpleMKL toolbox 1.0, %s kernels",
                         if (packed) "packed" else "3-D array of")
    res$software <- sprintf("Octave %s, %s", oct_version, ifelse(
      grepl("authors' HessianMKL", res$implementation), "HessianMKL (kernel_combination.m, SVQP)",
      ifelse(grepl("authors' SpicyMKL", res$implementation), "SpicyMKL toolbox 3 (M-files)",
             simple_sw)))
    print(res[, c("M", "C_paper", "implementation", "C_box", "cpu_s", "elapsed_s", "iterations",
                  "converged", "gap", "objective", "n_selected", "rel_diff_objective")],
          row.names = FALSE)
    res <- stamp(res)
    res$machine <- sub("threads [0-9]+", "threads 1", res$machine)    # all fits here: one thread
    merge_csv(res, out, c("set", "split", "M", "C_paper", "implementation"))
    rm(K); invisible(gc())
  }
}
unlink(work, recursive = TRUE)
sink(); close(con)
