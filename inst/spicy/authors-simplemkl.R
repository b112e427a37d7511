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
# Writes inst/spicy/authors-simplemkl-results.csv and appends to authors-simplemkl-console.txt.
source(file.path(if (file.exists("inst/spicy")) "inst/spicy" else ".", "common.R"))
options(width = 150)
tbx <- Sys.getenv("SIMPLEMKL_DIR")
if (!nzchar(tbx) || !file.exists(file.path(tbx, "mklsvm.m")))
  stop("set SIMPLEMKL_DIR to the SimpleMKL toolbox's folder (see the header)", call. = FALSE)
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
oct_version <- system2(octave, c("--no-gui", "--norc", "--quiet", "--eval",
                                 shQuote("printf('%s', version())")), stdout = TRUE,
                       stderr = FALSE)
dir <- out_dir("spicy")
out <- file.path(dir, "authors-simplemkl-results.csv")
con <- file(file.path(dir, "authors-simplemkl-console.txt"), open = "a")
sink(con, split = TRUE)
cat(sprintf("== authors-simplemkl.R %s, C = %s, M = %s, splits %d-%d, Octave %s\n",
            format(Sys.time()), paste(Cs, collapse = ", "), paste(Ms, collapse = ", "), first,
            splits, oct_version))
work <- tempfile("authors-simplemkl")
dir.create(work)

# An mklearn fit on the precomputed kernels K, on one thread, `reps` times (the same iterates
# each time): median CPU seconds of the whole call, its elapsed seconds and the solver's.
mk_fit <- function(K, y, method, C, loss = NULL) {
  ctl <- if (method == "simple")
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

# The toolbox's mklsvm() on the kernels in kfile (n x n x M doubles) at box constant C.
octave_fit <- function(kfile, yfile, n, M, C) {
  res <- file.path(work, "result.txt")
  unlink(res)
  m <- file.path(work, "run_authors.m")
  writeLines(c(
    sprintf("warning('off', 'all'); addpath('%s');", normalizePath(tbx)),
    sprintf("fid = fopen('%s', 'r'); K = fread(fid, Inf, 'double'); fclose(fid);", kfile),
    sprintf("K = reshape(K, %d, %d, %d);", n, n, M),
    sprintf("fid = fopen('%s', 'r'); y = fread(fid, Inf, 'double'); fclose(fid);", yfile),
    # exmklclass.m's options (see the header)
    "options.algo = 'svmclass'; options.stopvariation = 0; options.stopKKT = 0;",
    "options.stopdualitygap = 1; options.seuildiffsigma = 1e-2; options.seuildiffconstraint = 0.1;",
    "options.seuildualitygap = 0.01; options.goldensearch_deltmax = 1e-1;",
    "options.numericalprecision = 1e-8; options.lambdareg = 1e-8;",
    "options.firstbasevariable = 'first';",
    "options.nbitermax = 5000; options.seuil = 0; options.seuilitermax = 10; options.miniter = 0;",
    sprintf("options.verbosesvm = 0; options.efficientkernel = %d;", as.integer(packed)),
    if (packed) "K = build_efficientK(K);",
    "c0 = cputime(); tic;",
    sprintf("[Sigma, Alpsup, w0, pos, history, obj, status] = mklsvm(K, y, %.17g, options, 0);", C),
    "el = toc; cpu = cputime() - c0;",
    sprintf("fid = fopen('%s', 'w');", res),
    "fprintf(fid, '%.17g\\n', [cpu; el; obj; sum(Sigma > 0); length(history.dualitygap) - 1;",
    "                           history.dualitygap(end); status]);",
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
  # status 0: the duality gap criterion was met (1: premature stop, 2: nbitermax)
  data.frame(cpu_s = r[1], elapsed_s = r[2], solver_s = r[2], iterations = as.integer(r[5]),
             converged = r[7] == 0 && r[6] < 0.01, gap = r[6], objective = r[3],
             n_selected = as.integer(r[4]))
}

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
      sm <- mk_fit(K, d$y, "simple", C_svm)
      C_box <- sm$fit$info$C_solver           # the box constant on the stored kernels
      res <- rbind(res,
                   cbind(implementation = "mklearn SpicyMKL (hinge)", C = 1 / (2 * C_paper),
                         C_box = NA_real_, h$row),
                   cbind(implementation = "mklearn SimpleMKL", C = C_svm, C_box = C_box, sm$row))
      h <- sm <- NULL
      kfile <- file.path(work, "K.bin")
      writeBin(as.double(K), kfile)
      a <- octave_fit(kfile, yfile, nrow(K), M, C_box)
      unlink(kfile)
      res <- rbind(res, cbind(implementation = label, C = C_svm,
                              C_box = C_box, a))
    }
    res <- cbind(set = "ringnorm", split = s, M = M,
                 C_paper = rep(Cs, each = 3L), res)
    # the authors' objective and time against mklearn's SimpleMKL on the same problem
    ours <- res[res$implementation == "mklearn SimpleMKL", ]
    i <- match(res$C_paper, ours$C_paper)
    res$rel_diff_objective <- ifelse(grepl("SimpleMKL", res$implementation),
                                     (res$objective - ours$objective[i]) / ours$objective[i], NA)
    res$threads <- 1L
    res$software <- sprintf("Octave %s, SimpleMKL toolbox 1.0, %s kernels", oct_version,
                            if (packed) "packed" else "3-D array of")
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
