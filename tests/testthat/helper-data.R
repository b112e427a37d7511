# Seeded data shared by the tests.
two_class <- function(n = 80, p = 4, seed = 1) {
  set.seed(seed)
  x <- matrix(rnorm(n * p), n, p, dimnames = list(NULL, paste0("v", seq_len(p))))
  y <- ifelse(x[, 1]^2 + x[, 2] + 0.3 * rnorm(n) > 1, 1, -1)
  list(x = x, y = y)
}
ionosphere_xy <- function() {
  data("Ionosphere", package = "mlbench", envir = environment())
  x <- Ionosphere[, -c(2, 35)]
  x$V1 <- as.numeric(as.character(x$V1))
  list(x = as.matrix(x), y = ifelse(Ionosphere$Class == "bad", 1, -1))
}
rbf_R <- function(a, b, sigma) {
  d2 <- outer(rowSums(a^2), rowSums(b^2), "+") - 2 * tcrossprod(a, b)
  exp(-pmax(d2, 0) / (2 * sigma^2))
}
