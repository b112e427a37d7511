# Full-scale paper Table 2 for MKL-L0/1-SVM: 10 random 70/30 splits on Ionosphere, Sonar, Wpbc,
# Pima, Liver (ILPD) and Haberman, 10 Gaussian kernels, beside SimpleMKL; writes
# inst/l01/table2-results.csv (one row per set, method and split, with date and machine).
#
#   Rscript inst/l01/table2.R            # from the repository root (see bench-l01.R for the
#                                        # environment variables MKLEARN_LIB, MKLEARN_REF_LIB)
source(file.path("inst", "benchmarks", "bench-l01.R"), echo = FALSE)
out <- get("table2", envir = globalenv())
out$date <- format(Sys.time(), "%Y-%m-%d %H:%M")
out$machine <- sprintf("%s, %s, %d cores, R %s", Sys.info()[["nodename"]],
                       Sys.info()[["machine"]], parallel::detectCores(), getRversion())
utils::write.csv(out, file.path("inst", "l01", "table2-results.csv"), row.names = FALSE)
