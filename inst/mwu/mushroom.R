# MWUMKL at the paper's scale on Mushroom (Moeller et al. 2014): Fig. 5's Mushroom runs, training
# time against N with 1344 per-feature kernels, MWUMKL (epsilon = 0.2) beside UNIFORM. One random
# 80/20 partition per split; the first 1625, 3250 and 4875 points of the training partition and
# all its 6499 (the paper's 1625 to 6500: a quarter to all of it), tested on the test partition.
# Data: arules::Mushroom (8124 transactions, 114 items), the 112 items other than the class as
# 0/1 features (the one-hot coding of the 22 categorical attributes: the paper's 112 dimensions)
# and the paper's 12 kernels on each (polynomial of degree 1-3, Gaussian of 9 widths):
# 112 x 12 = 1344 kernels. An item absent from a training part gives constant kernels there;
# they are kept, so that every fit has the paper's 1344 kernels.
# UNIFORM (an SVM on the average kernel): the dense kernels would need 28 GB at the smallest
# size, so it runs on the low-rank store (a kernel on one 0/1 column has rank 2 at most, as the
# memory check's rank bound knows; the process peaks below 1 GB, NOTES-mwu.md) and, up to
# maxN_fly points, with the kernels computed on the fly (as LibSVM does with one kernel), its
# column cache sized by the default memory budget.
#   Rscript inst/mwu/mushroom.R [outdir] [splits = 1] [maxN = 6500] [maxN_fly = 1625] [minN = 0]
# writes mwu-mushroom-fig5.csv (date and machine in every row; rows of the same split, N,
# method and store are replaced, so the splits can be run in chunks).
source(file.path(if (file.exists("inst/mwu")) "inst/mwu" else ".", "common.R"))
a <- commandArgs(TRUE)
outdir <- if (length(a) >= 1) a[1] else "inst/mwu"
splits <- if (length(a) >= 2) as.integer(a[2]) else 1L
maxN <- if (length(a) >= 3) as.numeric(a[3]) else 6500
maxN_fly <- if (length(a) >= 4) as.numeric(a[4]) else 1625
minN <- if (length(a) >= 5) as.numeric(a[5]) else 0
memory <- NULL   # the default budget, mkl_control(memory = )

utils::data("Mushroom", package = "arules")
m <- methods::as(Mushroom, "matrix") * 1
cls <- grepl("^Class=", colnames(m))
x <- m[, !cls]
y <- factor(ifelse(m[, "Class=poisonous"] == 1, 1, -1))
ks12 <- kernel_set(poly_kernel(1:3), rbf_kernel(sigma = 1 / sqrt(2 * 2^seq(0, 4, 0.5))),
                   features = "each")
cat(sprintf("Mushroom: %d points, %d features, %d kernels\n", nrow(x), ncol(x),
            n_kernels(ks12, x)))

# the constant features of a training part beside the fit's columns (its kernels are kept)
one <- function(method, store, tr, te, ...) {
  r <- timed_fit(x, y, ks12, method, tr, te, memory, store = store, warnings = FALSE, ...)
  const <- sum(apply(x[tr, ], 2, function(v) length(unique(v)) == 1))
  cbind(r[1:4], constant_features = const, r[-(1:4)])
}

out <- file.path(outdir, "mwu-mushroom-fig5.csv")
for (s in seq_len(splits)) {
  set.seed(s)
  te <- sample(nrow(x), round(0.2 * nrow(x)))
  trall <- sample(setdiff(seq_len(nrow(x)), te))        # the training partition, in random order
  for (N in c(1625, 3250, 4875, length(trall))) {
    if (N > maxN) break
    if (N < minN) next
    for (ms in list(c("mwu", "fly"), c("uniform", "lowrank"), c("uniform", "fly"))) {
      if (ms[2] == "fly" && ms[1] == "uniform" && N > maxN_fly) next
      r <- cbind(split = s, if (ms[1] == "mwu") one(ms[1], ms[2], trall[seq_len(N)], te,
                                                     epsilon = 0.2)
                 else one(ms[1], ms[2], trall[seq_len(N)], te))
      print(r[, 1:11], row.names = FALSE)
      old <- if (file.exists(out)) utils::read.csv(out, stringsAsFactors = FALSE)
      if (!is.null(old))
        old <- old[!(old$split == s & old$N == N & old$method == ms[1] &
                     old$store == ms[2]), , drop = FALSE]
      utils::write.csv(rbind(old, r), out, row.names = FALSE)
    }
  }
}
