# Full-scale SpicyMKL paper Fig. 1: CPU time, test accuracy and number of selected
# kernels (mean and sd over random 80/20 splits) for SpicyMKL (hinge and logistic), SimpleMKL
# and HessianMKL at the paper's C = 0.005, 0.05, 0.5 (SimpleMKL and HessianMKL at the
# equivalent SVM box constant C_svm = sum_m ||f_m|| / C of the SpicyMKL hinge solution, Eq. 13;
# see common.R). Data: Liver (ILPD, 579 x 9: the BUPA set is not available), Pima, Ionosphere,
# Wpbc (without its first column, the recurrence time, which leaks the label) and Sonar, read
# from the UCI CSVs in a data folder beside the repository (set MKLEARN_DATA to their folder).
# Kernels: Gaussians of 24 widths (0.1, 0.25, 0.5, 0.75, 1, ..., 20) and polynomials of degree
# 1-3 on every single variable and on all variables, 27 (d + 1) kernels, unit trace, features
# z-scored on the training part; relative duality gap 0.01.
# Run from the repository root, in chunks if you like (rows of the same set, split and C are
# replaced):   Rscript inst/spicy/fig1.R [splits] [set ...]   e.g. Rscript inst/spicy/fig1.R 10 sonar
# writes inst/spicy/fig1-results.csv (one row per set, split, C and method) and appends to
# inst/spicy/fig1-console.txt.
source(file.path(if (file.exists("inst/spicy")) "inst/spicy" else ".", "common.R"))
options(width = 150)
args <- commandArgs(TRUE)
splits <- if (length(args)) as.integer(args[1]) else 10L
sets <- if (length(args) > 1L) args[-1] else names(fig1_files)
ks <- kernel_set(rbf_kernel(sigma = c(0.1, 0.25, 0.5, 0.75, 1:20)), poly_kernel(degree = 1:3),
                 features = c("all", "each"))
Cs <- c(0.005, 0.05, 0.5)
dir <- out_dir("spicy")
con <- file(file.path(dir, "fig1-console.txt"), open = "a")
sink(con, split = TRUE)
cat(sprintf("== fig1.R %s, %d splits, sets %s\n", format(Sys.time()), splits,
            paste(sets, collapse = ", ")))
res <- NULL
for (s in sets) {
  d <- read_set(s)
  n <- nrow(d$x)
  for (sp in seq_len(splits)) {
    set.seed(100 * sp + 1)
    tr <- sample(n, round(0.8 * n))
    for (C in Cs) {
      r <- cbind(set = s, split = sp, n_train = length(tr), M = n_kernels(ks, d$x),
                 four_methods(d$x[tr, ], d$y[tr], ks, C,
                              test = list(x = d$x[-tr, ], y = d$y[-tr])))
      res <- rbind(res, r)
    }
  }
  a <- stats::aggregate(cbind(solver_s, accuracy, n_selected) ~ method + C_paper,
                        res[res$set == s, ], function(v) c(mean = mean(v), sd = stats::sd(v)))
  cat(sprintf("-- %s (n = %d, M = %d, %d splits)\n", s, n, n_kernels(ks, d$x), splits))
  print(do.call(data.frame, a), digits = 3, row.names = FALSE)
}
merge_csv(stamp(res), file.path(dir, "fig1-results.csv"), c("set", "split", "C_paper", "method"))
sink(); close(con)
