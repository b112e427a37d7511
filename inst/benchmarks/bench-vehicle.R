# Accuracy where a tuned single Gaussian wins, and the time of cv.mkl() against tune.svm:
# mlbench's Vehicle (846 x 18, four classes), Glass (214 x 9, six classes), iris, and the binary
# Sonar, Ionosphere and BreastCancer, 80/20 splits (seeded). Beside each other in the same run,
# on the same training rows:
#  - e1071::tune.svm over its 72-point grid (gamma 2^(-8:0), cost 2^(-1:6); 10-fold CV);
#  - unless MKL_BENCH_CVC=0, cv.mkl(screen = NULL) of an MKL method (default "hessian") over
#    the C grid 10^(2:0 by -0.5), five folds, all the kernels (the CV over C alone, "cv_C");
#  - unless MKL_BENCH_SCREEN=0, cv.mkl() at its default, screen = "auto" ("cv_auto"): the
#    screening threshold (the kernel choice) by CV jointly with C on the same folds, taken only
#    when it wins by more than one standard error, near-duplicate kernels merged in every fit.
# Printed per split: test accuracy, the chosen threshold and C, CPU seconds (user + system of
# this single-threaded process) of each, and each cv.mkl's time over tune.svm's in the same
# run; then per data set the mean and sd over the splits.
# Kernels: Gaussian widths c(0.1, 0.25, 0.5, 0.75, 1:20) and polynomial degrees 1-3 on the
# feature groups MKL_BENCH_FEATURES ("all,each": 513 kernels on Vehicle, 270 on Glass, 135 on
# iris; "all": 27). MKL_BENCH_SPLITS: the number of splits (default 5).
# "kept": the kernels of cv_auto's path on all the data. MKL_BENCH_FIRST: the first split.
# Usage: MKL_BENCH_SPLITS=5 MKL_BENCH_FEATURES=all MKL_BENCH_SCREEN=1 MKL_BENCH_CVC=1 \
#          Rscript bench-vehicle.R [method] [data ...]
suppressPackageStartupMessages({
  library(mklearn)
  library(e1071)
})
args <- commandArgs(trailingOnly = TRUE)
method <- if (length(args)) args[1L] else "hessian"
sets_run <- if (length(args) > 1L) args[-1L] else c("Vehicle", "Glass", "iris")
nsplit <- as.integer(Sys.getenv("MKL_BENCH_SPLITS", "5"))
feat <- strsplit(Sys.getenv("MKL_BENCH_FEATURES", "all"), ",")[[1L]]
do_screen <- Sys.getenv("MKL_BENCH_SCREEN", "1") != "0"
do_cvc <- Sys.getenv("MKL_BENCH_CVC", "1") != "0"
first <- as.integer(Sys.getenv("MKL_BENCH_FIRST", "1"))
ks <- kernel_set(rbf_kernel(sigma = c(0.1, 0.25, 0.5, 0.75, 1:20)), poly_kernel(degree = 1:3),
                 features = feat)
Cgrid <- 10^seq(2, 0, by = -0.5)
ctl <- mkl_control(nthreads = 1)

load_data <- function(nm) {
  e <- environment()
  data(list = nm, package = if (nm == "iris") "datasets" else "mlbench", envir = e)
  d <- get(nm, envir = e)
  switch(nm,
         Vehicle = list(x = as.matrix(d[, -19]), y = d$Class),
         Glass = list(x = as.matrix(d[, -10]), y = droplevels(d$Type)),
         iris = list(x = as.matrix(d[, 1:4]), y = d$Species),
         Sonar = list(x = as.matrix(d[, -61]), y = d$Class),
         Ionosphere = {
           x <- d[, -c(2, 35)]
           x$V1 <- as.numeric(as.character(x$V1))
           list(x = as.matrix(x), y = d$Class)
         },
         BreastCancer = {
           d <- d[stats::complete.cases(d), ]
           list(x = sapply(d[, 2:10], function(v) as.numeric(as.character(v))), y = d$Class)
         })
}
quiet <- function(expr) suppressMessages(suppressWarnings(expr))
# CPU seconds (user + system) of this single-threaded process: on a shared machine the elapsed
# time depends on the other load, the CPU time hardly
cpu <- function() sum(proc.time()[c("user.self", "sys.self")])

res <- NULL
for (nm in sets_run) {
  d <- load_data(nm)
  for (s in first - 1L + seq_len(nsplit)) {
    set.seed(s)
    tr <- sample(nrow(d$x), round(0.8 * nrow(d$x)))
    te <- setdiff(seq_len(nrow(d$x)), tr)
    acc <- function(pred) mean(as.character(pred) == as.character(d$y[te]))
    t0 <- cpu()
    tu <- tune.svm(d$x[tr, ], d$y[tr], gamma = 2^(-8:0), cost = 2^(-1:6))
    t_tune <- cpu() - t0
    a_tune <- acc(predict(tu$best.model, d$x[te, ]))
    set.seed(100 + s)
    fid <- sample(rep(seq_len(5L), length.out = length(tr)))
    cv0 <- NULL
    t_cv0 <- NA_real_
    if (do_cvc) {
      t0 <- cpu()
      cv0 <- quiet(cv.mkl(d$x[tr, ], d$y[tr], kernels = ks, method = method, C = Cgrid,
                          foldid = fid, control = ctl, screen = NULL))
      t_cv0 <- cpu() - t0
    }
    cvs <- NULL
    t_cvs <- NA_real_
    if (do_screen) {
      t0 <- cpu()
      cvs <- quiet(cv.mkl(d$x[tr, ], d$y[tr], kernels = ks, method = method, C = Cgrid,
                          foldid = fid, control = ctl))
      t_cvs <- cpu() - t0
    }
    row <- data.frame(data = nm, kernels = n_kernels(ks, d$x), split = s,
                      tune_svm = round(a_tune, 3),
                      cv_C = if (do_cvc) round(acc(predict(cv0, d$x[te, ])), 3) else NA,
                      cv_auto = if (do_screen) round(acc(predict(cvs, d$x[te, ])), 3) else NA,
                      threshold = if (do_screen && !is.null(cvs$screen.min)) cvs$screen.min
                                  else NA,
                      tried = if (do_screen) paste(cvs$screen, collapse = "/") else NA,
                      kept = if (do_screen) cvs$fit$fits[[1L]]$M else NA,
                      C = signif(if (do_screen) cvs$C.min else if (do_cvc) cv0$C.min else NA, 3),
                      t_tune = round(t_tune, 1), t_cv_C = round(t_cv0, 1),
                      t_cv_auto = round(t_cvs, 1), ratio_cv_C = round(t_cv0 / t_tune, 2),
                      ratio_cv_auto = round(t_cvs / t_tune, 2))
    print(row, row.names = FALSE)
    res <- rbind(res, row)
  }
}
cat(sprintf("\nmeans (sd) over %d split(s), method %s, features %s\n", nsplit, method,
            paste(feat, collapse = "+")))
cols <- c("tune_svm", "cv_C", "cv_auto", "t_tune", "t_cv_C", "t_cv_auto", "ratio_cv_C",
          "ratio_cv_auto")
summ <- do.call(rbind, lapply(split(res, factor(res$data, unique(res$data))), function(r)
  data.frame(data = r$data[1L], kernels = r$kernels[1L], splits = nrow(r),
             t(sprintf("%.3f (%.3f)", colMeans(r[cols]), vapply(r[cols], stats::sd, 1))))))
names(summ)[-(1:3)] <- cols
print(summ, row.names = FALSE)
