# Default mkl(x, y) for every method beside e1071::svm(x, y) with its defaults, on held-out
# data: Ionosphere, Sonar and Pima (mlbench), five seeded 70/30 splits per data set (the
# accuracies are averages over the splits: one split of Sonar's 62 test points moves by 1.6
# points per point).
# Usage: Rscript bench-defaults.R [methods ...]   (default: every available method)
# Prints, per data set and method, both test accuracies and their difference in points.
suppressPackageStartupMessages({
  library(mklearn)
  library(e1071)
})
methods <- commandArgs(trailingOnly = TRUE)
if (!length(methods)) methods <- mkl_methods()

sets <- list(
  Ionosphere = function() {
    data("Ionosphere", package = "mlbench", envir = environment())
    x <- Ionosphere[, -c(2, 35)]
    x$V1 <- as.numeric(as.character(x$V1))
    list(x = as.matrix(x), y = Ionosphere$Class)
  },
  Sonar = function() {
    data("Sonar", package = "mlbench", envir = environment())
    list(x = as.matrix(Sonar[, -61]), y = Sonar$Class)
  },
  Pima = function() {
    data("PimaIndiansDiabetes", package = "mlbench", envir = environment())
    d <- PimaIndiansDiabetes
    list(x = as.matrix(d[, -9]), y = d$diabetes)
  }
)

res <- NULL
for (nm in names(sets)) {
  d <- sets[[nm]]()
  set.seed(1)
  splits <- replicate(5, sample(nrow(d$x), round(0.7 * nrow(d$x))), simplify = FALSE)
  acc_e <- mean(vapply(splits, function(tr) {
    sv <- e1071::svm(d$x[tr, ], d$y[tr])
    mean(predict(sv, d$x[-tr, ]) == d$y[-tr])
  }, 1))
  for (m in methods) {
    nk <- 0; secs <- 0
    acc_m <- mean(vapply(splits, function(tr) {
      t <- system.time(fit <- withCallingHandlers(mkl(d$x[tr, ], d$y[tr], method = m),
                                                  warning = function(w) {
        message(sprintf("  [%s, %s] warning: %s", nm, m, conditionMessage(w)))
        invokeRestart("muffleWarning")
      }))
      nk <<- nk + length(which(colSums(fit$alpha != 0) > 0)) / length(splits)
      secs <<- secs + t[["elapsed"]] / length(splits)
      mean(predict(fit, d$x[-tr, ]) == d$y[-tr])
    }, 1))
    res <- rbind(res, data.frame(data = nm, n_train = length(splits[[1]]), method = m,
                                 mklearn = round(acc_m, 3), e1071 = round(acc_e, 3),
                                 points = round(100 * (acc_m - acc_e), 1),
                                 kernels = round(nk, 1), seconds = round(secs, 2)))
    cat(sprintf("%-10s %-8s mklearn %.3f  e1071 %.3f  (%+.1f points)\n", nm, m, acc_m, acc_e,
                100 * (acc_m - acc_e)))
  }
}
cat("\n")
print(res, row.names = FALSE)
cat(sprintf("\nlargest shortfall: %.1f points (target: at most 3)\n", max(-res$points)))
