# The data sets of the MKL-L0/1 benchmarks (bench-l01.R, bench-l01-kernels.R): Ionosphere,
# Sonar, Pima and BreastCancer (complete cases, numeric) from mlbench; heart, banknote (400 rows
# drawn once, seed 7), Wpbc (without its first column, the recurrence time), Liver (ILPD) and
# Haberman from the CSVs of a data folder beside the repository (or beside its parent; or
# MKLEARN_DATA); load_set() returns NULL when a CSV is absent.
data_dir <- function() {
  cand <- c(Sys.getenv("MKLEARN_DATA"), file.path("..", "shared", "data"),
            file.path("..", "..", "shared", "data"))
  cand <- cand[nzchar(cand) & dir.exists(cand)]
  if (length(cand)) cand[1] else file.path("..", "shared", "data")
}

load_set <- function(name, dir = data_dir()) {
  e <- environment()
  if (name == "ionosphere") {
    utils::data("Ionosphere", package = "mlbench", envir = e)
    x <- Ionosphere[, -c(2, 35)]
    x$V1 <- as.numeric(as.character(x$V1))
    return(list(x = as.matrix(x), y = ifelse(Ionosphere$Class == "bad", 1, -1)))
  }
  if (name == "sonar") {
    utils::data("Sonar", package = "mlbench", envir = e)
    return(list(x = as.matrix(Sonar[, 1:60]), y = ifelse(Sonar$Class == "M", 1, -1)))
  }
  if (name == "pima") {
    utils::data("PimaIndiansDiabetes", package = "mlbench", envir = e)
    d <- PimaIndiansDiabetes
    return(list(x = as.matrix(d[, 1:8]), y = ifelse(d$diabetes == "pos", 1, -1)))
  }
  if (name == "breastcancer") {
    utils::data("BreastCancer", package = "mlbench", envir = e)
    d <- BreastCancer[stats::complete.cases(BreastCancer), ]
    x <- sapply(d[, 2:10], function(v) as.numeric(as.character(v)))
    return(list(x = x, y = ifelse(d$Class == "malignant", 1, -1)))
  }
  f <- file.path(dir, paste0(name, ".csv"))
  if (!file.exists(f)) return(NULL)
  d <- utils::read.csv(f)
  x <- as.matrix(d[, -1])
  y <- as.double(d$y)
  if (name == "wpbc") x <- x[, -1]      # x1 is the recurrence time, which leaks the label
  if (name == "banknote") {
    set.seed(7)
    i <- sample(nrow(x), 400)
    x <- x[i, ]; y <- y[i]
  }
  list(x = x, y = y)
}
