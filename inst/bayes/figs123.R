# Full-scale version of vignettes/bayes.Rmd: Tomioka & Suzuki (2010), Figs. 1-3, on the
# mlbench DNA splice-junction data (the substitute for the paper's Caltech-101 kernels).
# Three binary tasks (ei vs ie, ei vs n, ie vs n) like the paper's three class pairs; kernels:
# Gaussian and chi-square kernels of 10 widths each on 20 feature groups (windows of the
# sequence, like the paper's spatial cells) = 400 kernels; 5, 10, 20, 30, 40, 50 training
# samples per class, 20 random splits, test on all the other rows of the pair; C of every
# method chosen by 4-fold cross-validation on each training set (the paper: 2 x 4-fold),
# elastic net's lambda from {0, 0.2, ..., 1}.
# Run:  Rscript inst/bayes/figs123.R [splits]   (writes figs123-results.csv and
#       figs123-weights.csv next to this script, or to the working directory)
library(mklearn)
args <- commandArgs(TRUE)
splits <- if (length(args)) as.integer(args[1]) else 20L
data(DNA, package = "mlbench")
x <- sapply(DNA[, 1:180], function(v) as.numeric(as.character(v)))
pos_cols <- function(p) (3 * (p - 1) + 1):(3 * p)
win <- function(from, len) unlist(lapply(from:(from + len - 1), pos_cols))
groups <- c(lapply(seq(1, 56, by = 5), win, len = 5),            # 12 windows of 5 positions
            lapply(c(1, 16, 31, 46), win, len = 15),             # 4 windows of 15
            list(win(21, 10), win(26, 10), win(31, 10)),         # 3 around the junction
            list(1:180))                                         # the whole sequence
ks <- kernel_set(rbf_kernel(seq(0.5, 5, length.out = 10)),
                 chisq_kernel(seq(0.02, 0.5, length.out = 10)), features = groups)
Cs <- mkl_compare_C(uniform = c(100, 10, 1, 0.1), l1 = c(500, 50, 5, 0.5),
                    elastic = c(500, 50, 5, 0.5), elastic_cv = c(500, 50, 5, 0.5),
                    l2 = c(100, 10, 1, 0.1))
pairs <- list(c("ei", "ie"), c("ei", "n"), c("ie", "n"))
out <- list(); wts <- list()
for (pr in pairs) {
  keep <- DNA$Class %in% pr
  cmp <- mkl_compare(x[keep, ], droplevels(DNA$Class[keep]), ks, C = Cs,
                     n_train = c(5, 10, 20, 30, 40, 50), splits = splits, seed = 1,
                     standardize = FALSE, control = mkl_control(platt = "train"))
  print(cmp)
  tag <- paste(pr, collapse = "_vs_")
  out[[tag]] <- cbind(task = tag, cmp$results)
  wts[[tag]] <- data.frame(task = tag, kernel = rownames(cmp$weights), cmp$weights,
                           row.names = NULL)
}
stamp <- sprintf("%s on %s (%s, R %s)", format(Sys.time(), "%Y-%m-%d %H:%M"),
                 Sys.info()[["nodename"]], utils::sessionInfo()$running, getRversion())
res <- do.call(rbind, out); res$run <- stamp
w <- do.call(rbind, wts); w$run <- stamp
dir <- if (file.exists("inst/bayes")) "inst/bayes" else "."
utils::write.csv(res, file.path(dir, "figs123-results.csv"), row.names = FALSE)
utils::write.csv(w, file.path(dir, "figs123-weights.csv"), row.names = FALSE)
