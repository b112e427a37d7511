# MWUMKL at the paper's scale on Adult (Moeller et al. 2014): Fig. 4a (training time against N,
# MWUMKL beside UNIFORM and LIBLINEAR+ (common.R; needs LiblineaR, C by 3-fold cross-validation
# on each training part), 12 kernels on all features, epsilon = 0.05, one random 80/20 partition,
# growing parts of the training partition tested on the whole test partition), Table 2's Adult
# row (3 Gaussian kernels on the whole training partition) and the times per kernel of Fig. 5.
# Data: arules::AdultUCI, the 32,561 labelled rows (the paper: 48,842 in Fig. 4, 39,073 in
# Table 2, the binarised a9a version with 123 features): the six numeric columns scaled to
# [0, 1], the eight categorical ones one-hot (a missing category is a row of zeros), 105
# features. UNIFORM (an SVM on the average kernel) may take `memory` bytes: the dense kernels
# while they fit (the paper's machine had 2 GB), the low-rank store beyond.
#   Rscript inst/mwu/adult.R [outdir] [maxN = 26049] [parts = fig4,table2]
#                            [methods = mwu,uniform,liblinear]
# (the stored Fig. 4 run: Rscript inst/mwu/adult.R inst/mwu Inf fig4, then
# Rscript inst/mwu/adult.R inst/mwu Inf fig4 liblinear; the rows of the sizes and methods run
# replace theirs in an existing mwu-adult-fig4.csv, the others are kept)
# writes mwu-adult-fig4.csv and mwu-adult-table2.csv (date and machine in every row).
source(file.path(if (file.exists("inst/mwu")) "inst/mwu" else ".", "common.R"))
a <- commandArgs(TRUE)
outdir <- if (length(a) >= 1) a[1] else "inst/mwu"
maxN <- if (length(a) >= 2) as.numeric(a[2]) else Inf
parts <- if (length(a) >= 3) strsplit(a[3], ",")[[1]] else c("fig4", "table2")
methods <- if (length(a) >= 4) strsplit(a[4], ",")[[1]] else c("mwu", "uniform", "liblinear")
if ("fig4" %in% parts && "liblinear" %in% methods) {
  if (!requireNamespace("LiblineaR", quietly = TRUE))
    stop("LIBLINEAR+ needs the LiblineaR package (or leave 'liblinear' out of methods)",
         call. = FALSE)
  cat(liblinear_note(), "\n")
}
memory <- 2e9

utils::data("AdultUCI", package = "arules")
d <- AdultUCI[!is.na(AdultUCI$income), ]
num <- vapply(d, is.numeric, TRUE)
x <- as.matrix(d[num])
x <- sweep(sweep(x, 2, apply(x, 2, min)), 2, apply(x, 2, function(v) diff(range(v))), "/")
for (v in names(d)[!num & names(d) != "income"]) {
  f <- factor(d[[v]], ordered = FALSE)
  oh <- outer(as.integer(f), seq_along(levels(f)), "==") * 1
  oh[is.na(oh)] <- 0
  colnames(oh) <- paste(v, levels(f), sep = "=")
  x <- cbind(x, oh)
}
y <- factor(ifelse(d$income == "large", 1, -1))
set.seed(1)
te <- sample(nrow(x), round(0.2 * nrow(x)))
trall <- sample(setdiff(seq_len(nrow(x)), te))          # the training partition, in random order
cat(sprintf("Adult: %d points, %d features; training partition %d, test %d\n",
            nrow(x), ncol(x), length(trall), length(te)))
ks12 <- kernel_set(poly_kernel(1:3), rbf_kernel(sigma = 1 / sqrt(2 * 2^seq(0, 4, 0.5))))
# LIBLINEAR+'s kernels: the same, unnormalised and without the diagonal jitter (common.R)
ks12n <- kernel_set(poly_kernel(1:3), rbf_kernel(sigma = 1 / sqrt(2 * 2^seq(0, 4, 0.5))),
                    normalize = "none", jitter = 0)

one <- function(method, tr, ks, ...) timed_fit(x, y, ks, method, tr, te, memory, ...)

if ("fig4" %in% parts) {
  f4file <- file.path(outdir, "mwu-adult-fig4.csv")
  fig4 <- NULL
  for (N in c(1000, 2000, 5000, 10000, 20000, length(trall))) {
    if (N > maxN) break
    for (m in intersect(c("mwu", "uniform"), methods)) {
      r <- if (m == "mwu") one(m, trall[seq_len(N)], ks12, epsilon = 0.05) else
        one(m, trall[seq_len(N)], ks12)
      fig4 <- rbind(fig4, data.frame(r, C = 1, features = NA, note = NA))
      print(r[, 1:9], row.names = FALSE)
    }
    if ("liblinear" %in% methods) {
      # C grid below the small sets' 0.001-10 (their CV chose 10 twice in 240 fits): the dual
      # solver's cost grows steeply with C (NOTES-mwu.md, "LIBLINEAR+ and WDBC")
      l <- run_liblinear_plus(ks12n, x, y, trall[seq_len(N)], te, Cs = 10^(-4:-1), seed = 1)
      fig4 <- rbind(fig4, data.frame(N = N, method = "liblinear", store = "nystroem", M = l$M,
                                     seconds = l$time, cpu = l$cpu, solver = NA, T = NA,
                                     accuracy = 1 - l$error, stamp, C = l$C,
                                     features = l$features, note = liblinear_note()))
      print(fig4[nrow(fig4), c(1:9, 12:13)], row.names = FALSE)
    }
    # the rows of this run replace those of the same size and method in an existing file
    old <- if (file.exists(f4file)) utils::read.csv(f4file)
    if (!is.null(old)) {
      for (v in setdiff(names(fig4), names(old))) old[[v]] <- NA
      old <- old[!(paste(old$N, old$method) %in% paste(fig4$N, fig4$method)), names(fig4)]
    }
    utils::write.csv(rbind(old, fig4), f4file, row.names = FALSE)
  }
}
if ("table2" %in% parts) {
  r <- one("mwu", trall, kernel_set(rbf_kernel(sigma = c(1, 3, 10))), epsilon = 0.05)
  print(r[, 1:9], row.names = FALSE)
  utils::write.csv(r, file.path(outdir, "mwu-adult-table2.csv"), row.names = FALSE)
}
