# Probabilities: Brier score of Platt's sigmoid fitted on cross-validated decision values
# (mkl_control(platt = "cv"), the default) and on the training decision values ("train"),
# against e1071::svm(probability = TRUE) (libsvm: Platt on an internal 5-fold cross-validation),
# on 10 random 80/20 splits of Sonar; and the time of a default fit with each calibration.
# Usage: Rscript inst/benchmarks/bench-platt.R [splits]   (results: inst/notes/NOTES-model.md)
suppressPackageStartupMessages(library(mklearn))
data("Sonar", package = "mlbench")
x <- as.matrix(Sonar[, 1:60])
y <- Sonar$Class
args <- commandArgs(trailingOnly = TRUE)
nsplit <- if (length(args)) as.integer(args[1]) else 10L
ctl <- function(platt) mkl_control(nthreads = 1, platt = platt)
brier <- function(p, yy) mean((p - yy)^2)
rows <- list()
for (k in seq_len(nsplit)) {
  set.seed(k)
  tr <- sample(nrow(x), round(0.8 * nrow(x)))
  yy <- as.numeric(y[-tr] == levels(y)[2])
  for (m in c("simple", "spicy")) {
    for (pl in c("train", "cv")) {
      t <- system.time(f <- suppressWarnings(mkl(x[tr, ], y[tr], method = m,
                                                 control = ctl(pl))))[["elapsed"]]
      p <- predict(f, x[-tr, ], type = "prob")[, 2]
      rows[[length(rows) + 1L]] <- data.frame(split = k, model = paste(m, pl), time = t,
                                              brier = brier(p, yy),
                                              error = mean((p > 0.5) != yy))
    }
  }
  t <- system.time(s <- e1071::svm(x[tr, ], y[tr], probability = TRUE))[["elapsed"]]
  p <- attr(predict(s, x[-tr, ], probability = TRUE), "probabilities")[, levels(y)[2]]
  rows[[length(rows) + 1L]] <- data.frame(split = k, model = "e1071 svm", time = t,
                                          brier = brier(p, yy), error = mean((p > 0.5) != yy))
}
res <- do.call(rbind, rows)
tab <- aggregate(cbind(brier, error, time) ~ model, res, mean)
tab$brier_sd <- aggregate(brier ~ model, res, sd)$brier
print(tab, digits = 3, row.names = FALSE)
for (m in c("simple", "spicy")) {
  r <- res$time[res$model == paste(m, "cv")] / res$time[res$model == paste(m, "train")]
  cat(sprintf("%s: time of a default fit, platt = \"cv\" / \"train\": median ratio %.2f\n", m,
              stats::median(r)))
}
