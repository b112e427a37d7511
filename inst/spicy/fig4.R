# Full-scale SpicyMKL paper Fig. 4: CPU time against the number of training samples,
# N = 200 ... 2000 points of mlbench.ringnorm (20 dimensions), 20 Gaussian kernels on random
# feature subsets (random_kernels(20, 20), one draw for every N), unit trace, relative duality
# gap 0.01; SpicyMKL (hinge and logistic), SimpleMKL and HessianMKL at the paper's C = 0.005,
# 0.05, 0.5 (see common.R). Each row has the whole mkl() call and the solver time.
# Run from the repository root, in chunks if you like (rows of the same N and C are replaced):
#   Rscript inst/spicy/fig4.R [C_paper ...]
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
set.seed(4)
ks <- random_kernels(20, p = 20)
res <- NULL
for (N in Ns) {
  set.seed(4000 + N)
  rn <- mlbench::mlbench.ringnorm(N, d = 20)
  for (C in Cs) {
    r <- cbind(N = N, four_methods(rn$x, rn$classes, ks, C))
    print(r[, c("N", "method", "C_paper", "C", "whole_s", "solver_s", "iterations",
                "converged", "n_selected")], row.names = FALSE)
    res <- rbind(res, r)
  }
}
merge_csv(stamp(res), file.path(dir, "fig4-results.csv"), c("N", "C_paper", "method"))
sink(); close(con)
