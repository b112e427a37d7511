# Full-scale SpicyMKL paper Fig. 3: CPU time against the number of kernels, M = 50 ...
# 6000, N = 200 training points of mlbench.ringnorm (20 dimensions), Gaussian kernels on random
# feature subsets with widths 5 chi^2_1 + 0.1 (random_kernels()), unit trace, relative duality
# gap 0.01; SpicyMKL (hinge and logistic), SimpleMKL and HessianMKL at the paper's C = 0.005,
# 0.05, 0.5 (SimpleMKL and HessianMKL at the equivalent box constant, see common.R). Each row
# has the whole mkl() call (building and normalising the kernels, fitting), elapsed and CPU
# (whole_s, whole_cpu_s), and the solver's elapsed time (solver_s; the vignette plots CPU
# seconds, the solver's as solver_s * whole_cpu_s / whole_s).
# MKLEARN_FIG3_SET=splice runs the paper's second set on mlbench's DNA splice data instead
# (180 binary columns, a junction, ei or ie, against none, n; 200 training points per split).
# MKLEARN_SPLITS (default 1; the paper: 10) random draws of the 200 training points per cell;
# MKLEARN_FIRST_SPLIT (default 1) starts at a later split, so that the splits can be run in chunks.
# Rows are written after each M of a split, so a stopped run keeps its finished cells.
# MKLEARN_SETTLE=0 skips the untimed build of the kernels before each timed call (common.R's
# settle()); Splice at M = 2000-6000 ran so (NOTES-spicy.md, "The paper's Figs. 3 and 4").
# Run from the repository root, in chunks if you like (rows of the same set, split, M and C
# are replaced):
#   Rscript inst/spicy/fig3.R [C_paper ...]      e.g. Rscript inst/spicy/fig3.R 0.05
#   MKLEARN_FIG3_SET=splice MKLEARN_SPLITS=10 Rscript inst/spicy/fig3.R
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
set_name <- Sys.getenv("MKLEARN_FIG3_SET", "ringnorm")
splits <- as.integer(Sys.getenv("MKLEARN_SPLITS", "1"))
first <- as.integer(Sys.getenv("MKLEARN_FIRST_SPLIT", "1"))   # splits first..splits
# split s of the set: 200 training points (split 1 of ringnorm is the draw of earlier runs)
draw <- function(s) {
  set.seed(3 + s - 1)
  if (set_name == "ringnorm") {
    rn <- mlbench::mlbench.ringnorm(200, d = 20)
    return(list(x = rn$x, y = rn$classes))
  }
  DNA <- get(utils::data("DNA", package = "mlbench", envir = environment()))
  i <- sample(nrow(DNA), 200)
  list(x = sapply(DNA[i, 1:180], function(v) as.numeric(as.character(v))),
       y = factor(ifelse(DNA$Class[i] == "n", "none", "junction")))
}
# rows written before the set and split columns existed are ringnorm's first split
out <- file.path(dir, "fig3-results.csv")
if (file.exists(out)) {
  old <- utils::read.csv(out, stringsAsFactors = FALSE)
  if (!"set" %in% names(old))
    utils::write.csv(cbind(set = "ringnorm", split = 1L, old), out, row.names = FALSE)
}
for (s in seq(first, splits)) {
  d <- draw(s)
  for (M in Ms) {
    set.seed(1000 + M)
    ks <- random_kernels(M, p = ncol(d$x))
    res <- NULL
    for (C in Cs) {
      r <- cbind(set = set_name, split = s, M = M, four_methods(d$x, d$y, ks, C))
      print(r[, c("set", "split", "M", "method", "C_paper", "C", "whole_s", "whole_cpu_s",
                  "solver_s", "iterations", "converged", "n_selected")], row.names = FALSE)
      res <- rbind(res, r)
    }
    # four significant digits of C and the gap are all the vignette reads (the file ships)
    for (v in c("C", "gap")) res[[v]] <- signif(res[[v]], 4)
    merge_csv(stamp(res), out, c("set", "split", "M", "C_paper", "method"))  # each cell kept
  }
}
sink(); close(con)
