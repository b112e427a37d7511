# Full-scale SpicyMKL paper Fig. 4: CPU time against the number of training samples,
# N = 200 ... 2000 points of mlbench.ringnorm (20 dimensions), 20 Gaussian kernels on random
# feature subsets (random_kernels(20, 20), one draw for every N), unit trace, relative duality
# gap 0.01; SpicyMKL (hinge and logistic), SimpleMKL and HessianMKL at the paper's C = 0.005,
# 0.05, 0.5 (see common.R). Each row has the whole mkl() call and the solver time.
# MKLEARN_SPLITS (default 1; the paper: 10) random draws of the training points per N (split 1
# is the draw of earlier runs); the kernels stay the same draw. Rows are written after each N
# of a split, so a stopped run keeps its finished cells; MKLEARN_FIRST_SPLIT (default 1) starts
# at a later split, so that the splits can be run in chunks.
# Run from the repository root, in chunks if you like (rows of the same split, N and C are
# replaced):
#   Rscript inst/spicy/fig4.R [C_paper ...]      e.g. MKLEARN_SPLITS=10 Rscript inst/spicy/fig4.R
# writes inst/spicy/fig4-results.csv and appends to inst/spicy/fig4-console.txt.
source(file.path(if (file.exists("inst/spicy")) "inst/spicy" else ".", "common.R"))
options(width = 150)
args <- as.numeric(commandArgs(TRUE))
Cs <- if (length(args)) args else c(0.005, 0.05, 0.5)
Ns <- as.integer(unlist(strsplit(Sys.getenv("MKLEARN_FIG4_N", "200,500,1000,1500,2000"), ",")))
dir <- out_dir("spicy")
con <- file(file.path(dir, "fig4-console.txt"), open = "a")
sink(con, split = TRUE)
cat(sprintf("== fig4.R %s, C = %s, N = %s\n", format(Sys.time()), paste(Cs, collapse = ", "),
            paste(Ns, collapse = ", ")))
splits <- as.integer(Sys.getenv("MKLEARN_SPLITS", "1"))
first <- as.integer(Sys.getenv("MKLEARN_FIRST_SPLIT", "1"))   # splits first..splits
set.seed(4)
ks <- random_kernels(20, p = 20)
# rows written before the split column existed are the first split
out <- file.path(dir, "fig4-results.csv")
if (file.exists(out)) {
  old <- utils::read.csv(out, stringsAsFactors = FALSE)
  if (!"split" %in% names(old))
    utils::write.csv(cbind(split = 1L, old), out, row.names = FALSE)
}
for (s in seq(first, splits)) {
  for (N in Ns) {
    set.seed(4000 + N + 10000 * (s - 1))   # distinct seeds for every split and N
    rn <- mlbench::mlbench.ringnorm(N, d = 20)
    res <- NULL
    for (C in Cs) {
      r <- cbind(split = s, N = N, four_methods(rn$x, rn$classes, ks, C))
      print(r[, c("split", "N", "method", "C_paper", "C", "whole_s", "whole_cpu_s", "solver_s",
                  "iterations", "converged", "n_selected")], row.names = FALSE)
      res <- rbind(res, r)
    }
    merge_csv(stamp(res), out, c("split", "N", "C_paper", "method"))  # each cell kept
  }
}
sink(); close(con)
