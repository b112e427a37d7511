# Full-scale SpicyMKL paper Fig. 3: CPU time against the number of kernels, M = 50 ...
# 6000, N = 200 training points of mlbench.ringnorm (20 dimensions), Gaussian kernels on random
# feature subsets with widths 5 chi^2_1 + 0.1 (random_kernels()), unit trace, relative duality
# gap 0.01; SpicyMKL (hinge and logistic), SimpleMKL and HessianMKL at the paper's C = 0.005,
# 0.05, 0.5 (SimpleMKL and HessianMKL at the equivalent box constant, see common.R). Each row
# has the whole mkl() call (building and normalising the kernels, fitting) and the solver time.
# (The paper's second set, Splice, is not run here.)
# Run from the repository root, in chunks if you like (rows of the same M and C are replaced):
#   Rscript inst/spicy/fig3.R [C_paper ...]      e.g. Rscript inst/spicy/fig3.R 0.05
# writes inst/spicy/fig3-results.csv and appends to inst/spicy/fig3-console.txt.
source(file.path(if (file.exists("inst/spicy")) "inst/spicy" else ".", "common.R"))
options(width = 150)
args <- as.numeric(commandArgs(TRUE))
Cs <- if (length(args)) args else c(0.005, 0.05, 0.5)
Ms <- as.integer(unlist(strsplit(Sys.getenv("MKLEARN_FIG3_M",
                                            "50,100,200,500,1000,2000,4000,6000"), ",")))
dir <- out_dir("spicy")
con <- file(file.path(dir, "fig3-console.txt"), open = "a")
sink(con, split = TRUE)
cat(sprintf("== fig3.R %s, C = %s, M = %s\n", format(Sys.time()), paste(Cs, collapse = ", "),
            paste(Ms, collapse = ", ")))
set.seed(3)
rn <- mlbench::mlbench.ringnorm(200, d = 20)
res <- NULL
for (M in Ms) {
  set.seed(1000 + M)
  ks <- random_kernels(M, p = 20)
  for (C in Cs) {
    r <- cbind(M = M, four_methods(rn$x, rn$classes, ks, C))
    print(r[, c("M", "method", "C_paper", "C", "whole_s", "solver_s", "iterations",
                "converged", "n_selected")], row.names = FALSE)
    res <- rbind(res, r)
  }
}
merge_csv(stamp(res), file.path(dir, "fig3-results.csv"), c("M", "C_paper", "method"))
sink(); close(con)
