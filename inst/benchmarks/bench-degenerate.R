# The effective number of neighbours (kernel_neighbours()) of useful and of memorising kernels,
# and which fits mkl() flags as generalising nothing (fit$degenerate).
# Data: mlbench's BreastCancer (complete cases), PimaIndiansDiabetes, Ionosphere and Sonar,
# at most 400 rows drawn at random (seed 1), 70/30 split, z-scored columns.
# Part 1: one Gaussian kernel on all features (sigma 0.25 ... 5), the uniform SVM at C = 1:
#   neighbours on the training part, training and test accuracy, majority rate, flagged.
# Part 2: l01, simple and spicy at their defaults on the large set
#   kernel_set(rbf_kernel(c(0.1, 0.25, 0.5, 0.75, 1:20)), poly_kernel(1:3),
#   features = c("all", "each")): test accuracy, weight on kernels with fewer than 2
#   neighbours, flagged. One thread. Results: inst/notes/NOTES-model.md.
library(mklearn)
ctl <- mkl_control(nthreads = 1)
# an mlbench set as a numeric matrix (factor columns by their labels) and its class
mlbench_xy <- function(name, ycol, drop = character()) {
  e <- new.env()
  data(list = name, package = "mlbench", envir = e)
  d <- e[[name]]
  d <- d[stats::complete.cases(d), ]
  x <- d[, setdiff(names(d), c(ycol, drop))]
  x[] <- lapply(x, function(v) as.numeric(as.character(v)))
  list(x = as.matrix(x), y = d[[ycol]])
}
sets <- list(breast_cancer = list("BreastCancer", "Class", "Id"),
             pima = list("PimaIndiansDiabetes", "diabetes"),
             ionosphere = list("Ionosphere", "Class", "V2"),
             sonar = list("Sonar", "Class"))
big <- kernel_set(rbf_kernel(sigma = c(0.1, 0.25, 0.5, 0.75, 1:20)), poly_kernel(degree = 1:3),
                  features = c("all", "each"))
single <- list()
multi <- list()
for (nm in names(sets)) {
  d <- do.call(mlbench_xy, sets[[nm]])
  set.seed(1)
  i <- if (nrow(d$x) > 400) sample(nrow(d$x), 400) else seq_len(nrow(d$x))
  x <- d$x[i, ]
  y <- d$y[i]
  tr <- sample(length(y), round(0.7 * length(y)))
  maj <- max(table(y[tr])) / length(tr)
  acc <- function(f, rows) mean(predict(f, x[rows, ]) == y[rows])
  for (s in c(0.25, 0.5, 0.75, 1, 2, 3, 5)) {
    f <- suppressWarnings(mkl(x[tr, ], y[tr], kernels = kernel_set(rbf_kernel(s)),
                              control = ctl))
    st <- mklearn:::dense_store(f$kernel_info, f$x)
    single[[length(single) + 1L]] <- data.frame(
      data = nm, n = length(tr), sigma = s, neighbours = mklearn:::kernel_neighbours(st),
      train = acc(f, tr), test = acc(f, -tr), majority = maj, flagged = !is.null(f$degenerate))
  }
  for (m in c("l01", "simple", "spicy")) {
    t0 <- proc.time()[["elapsed"]]
    f <- suppressWarnings(mkl(x[tr, ], y[tr], method = m, kernels = big, control = ctl))
    act <- which(f$weights > 0)
    st <- mklearn:::dense_store(f$kernel_info, f$x)
    nb <- mklearn:::kernel_neighbours(st, act)
    multi[[length(multi) + 1L]] <- data.frame(
      data = nm, method = m, test = acc(f, -tr), majority = maj, selected = length(act),
      weight_below_2 = sum(f$weights[act][nb < 2]), min_neighbours = min(nb),
      flagged = !is.null(f$degenerate), time = proc.time()[["elapsed"]] - t0)
  }
}
print(do.call(rbind, single), digits = 3, row.names = FALSE)
print(do.call(rbind, multi), digits = 3, row.names = FALSE)
