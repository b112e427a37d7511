# Full-scale HessianMKL paper Figs. 2 and 3: the relative duality gap against the iteration on
# Ionosphere and Liver (ILPD, the BUPA set is not available), and the weights of the five
# kernels that carry the most HessianMKL weight along the iterations, SimpleMKL beside
# HessianMKL, on one random 70/30 split (the paper shows one example run). Settings as in
# fig1.R: the 27 (d + 1) SimpleMKL kernels, centred and scaled to unit trace, C = 100 on them,
# relative duality gap 0.01, SimpleMKL up to 5000 iterations.
# Run from the repository root:   Rscript inst/hessian/fig2.R
# writes inst/hessian/fig2-results.csv (gap paths), fig3-weights.csv (weight paths) and appends
# to inst/hessian/fig2-console.txt.
suppressPackageStartupMessages(library(mklearn))
source(file.path(if (file.exists("inst/spicy")) "inst/spicy" else "../spicy", "common.R"))
options(width = 150)
ks <- kernel_set(rbf_kernel(sigma = c(0.1, 0.25, 0.5, 0.75, 1:20)), poly_kernel(degree = 1:3),
                 features = c("all", "each"), normalize = "center_trace")
dir <- out_dir("hessian")
con <- file(file.path(dir, "fig2-console.txt"), open = "a")
sink(con, split = TRUE)
cat(sprintf("== fig2.R %s\n", format(Sys.time())))
gaps <- NULL
wts <- NULL
for (s in c("ionosphere", "liver")) {
  d <- read_set(s)
  set.seed(207)                                   # split 1 of fig1.R
  tr <- sample(nrow(d$x), round(0.7 * nrow(d$x)))
  fits <- lapply(c(SimpleMKL = "simple", HessianMKL = "hessian"), function(m)
    suppressWarnings(mkl(d$x[tr, ], d$y[tr], kernels = ks, method = m, C = 100 / length(tr),
                         control = mkl_control(maxiter = 5000, max_time = 300,
                                               platt = "train"))))
  top5 <- order(-fits$HessianMKL$weights)[1:5]
  for (m in names(fits)) {
    h <- fits[[m]]$history
    gaps <- rbind(gaps, data.frame(set = s, method = m, iteration = h$iteration, gap = h$gap,
                                   objective = h$objective, time = h$time))
    w <- fits[[m]]$info$weights_path[, top5, drop = FALSE]
    wts <- rbind(wts, data.frame(set = s, method = m, iteration = seq_len(nrow(w)) - 1L,
                                 kernel = rep(names(fits$HessianMKL$weights)[top5],
                                              each = nrow(w)),
                                 weight = as.vector(w)))
    cat(sprintf("%s %s: %d iterations, final gap %.4f, %.2f s\n", s, m,
                fits[[m]]$iterations, utils::tail(h$gap, 1L), fits[[m]]$timing[["fit"]]))
  }
}
utils::write.csv(stamp(gaps), file.path(dir, "fig2-results.csv"), row.names = FALSE)
utils::write.csv(stamp(wts), file.path(dir, "fig3-weights.csv"), row.names = FALSE)
sink(); close(con)
