# Solver settings (R/control.R): mkl_control() checks names and values, method_control() fills
# every default from the one table and refuses settings the method does not read. SpicyMKL's
# tuning knobs (spicy_tuning(), R/tuning.R) are tested in test-tuning.R.

mc <- function(method, control = NULL) mklearn:::method_control(method, control)

# One acceptable (non-default) value for the settings these tests know; any other setting (a
# newer method's) is tried with its table default, which must be acceptable too.
valid_value <- list(tol = 1e-3, nthreads = 1L, verbose = FALSE, memory = 1e9, store = "dense",
                    maxiter = 5L, svm_tol = 1e-3, svm_maxiter = 10L, newton_tol = 1e-3,
                    gold_tol = 0.2, line_search = "first", max_time = 5,
                    check_kernels = "full")
test_value <- function(nm) {
  if (!is.null(valid_value[[nm]])) return(valid_value[[nm]])
  for (tab in mklearn:::.control_methods) if (nm %in% names(tab)) {
    v <- tab[[nm]]
    if (!is.null(v) && !(length(v) == 1L && is.na(v))) return(v)
  }
  NULL
}

test_that("mkl_control() refuses unknown names, naming them", {
  expect_error(mkl_control(maxiters = 1), "unknown setting.*maxiters")
  expect_error(mkl_control(tol = 0.1, svmtol = 1e-3, gama = 2), "svmtol, gama")
  # the message lists the known settings
  expect_error(mkl_control(maxiters = 1), "Known settings:.*maxiter")
  expect_error(mkl_control(1e-3, 10, 1e-4, 100, 1, FALSE, 1e9, "auto", 5),
               "must be named")
  # every name of every table is known, and its test value (or its default) accepted
  known <- unique(c(names(mklearn:::.control_common),
                    unlist(lapply(mklearn:::.control_methods, names))))
  expect_true(all(names(valid_value) %in% known))
  for (nm in known) {
    v <- test_value(nm)
    if (!is.null(v)) expect_s3_class(do.call(mkl_control, setNames(list(v), nm)), "mkl_control")
  }
})

test_that("mkl_control() refuses bad values and records only what was set", {
  expect_identical(unclass(mkl_control()), setNames(list(), character()))
  ctl <- mkl_control(tol = 1e-3, maxiter = 7)
  expect_s3_class(ctl, "mkl_control")
  expect_identical(names(ctl), c("tol", "maxiter"))
  expect_identical(ctl$maxiter, 7L)
  expect_identical(mkl_control(maxiter = 1e12)$maxiter, .Machine$integer.max)
  for (bad in list(-1, 0, NA, Inf, "0.1", c(0.1, 0.2)))
    expect_error(mkl_control(tol = bad), "'tol' must be one finite number > 0")
  expect_error(mkl_control(svm_tol = 0), "'svm_tol'")
  expect_error(mkl_control(gold_tol = NA), "'gold_tol'")
  expect_error(mkl_control(newton_tol = -1), "'newton_tol'")
  expect_identical(mkl_control(newton_tol = 0)[["newton_tol"]], 0)
  expect_error(mkl_control(maxiter = 0), "'maxiter' must be one finite number >= 1")
  expect_error(mkl_control(svm_maxiter = -5), "'svm_maxiter'")
  for (v in list(TRUE, FALSE, 0, 1L, 3)) expect_identical(mkl_control(verbose = v)$verbose, v)
  for (bad in list(NA, "yes", -1, 1.5, c(TRUE, FALSE)))
    expect_error(mkl_control(verbose = bad), "'verbose' must be TRUE, FALSE or a trace level")
  expect_identical(mkl_control(max_time = Inf)$max_time, Inf)
  expect_error(mkl_control(max_time = 0), "'max_time' must be one positive number")
  expect_error(mkl_control(max_time = NA), "'max_time'")
  # names are matched exactly: a setting never stands in for another it is a prefix of
  ctl <- mkl_control(svm_tol = 1e-3)
  expect_identical(names(ctl), "svm_tol")
  expect_identical(mc("uniform", ctl)$svm_maxiter, mklearn:::.control_methods$uniform$svm_maxiter)
  expect_identical(mc("spicy", list(gamma_max = 1e3))$gamma, NA_real_)
  expect_identical(mkl_control(line_search = "first")$line_search, "first")
  expect_error(mkl_control(line_search = "golden"), "should be one of")
})

test_that("memory and store are validated", {
  expect_identical(mkl_control(memory = 2e9)$memory, 2e9)
  for (bad in list(0, -1, NA_real_, "1e9", c(1, 2)))
    expect_error(mkl_control(memory = bad), "'memory' must be one positive number of bytes")
  expect_identical(mkl_control(memory = Inf)$memory, Inf)
  for (s in c("auto", "dense", "fly")) expect_identical(mkl_control(store = s)$store, s)
  expect_identical(mkl_control(store = "de")$store, "dense")
  expect_error(mkl_control(store = "disk"), "should be one of")
  expect_error(mkl_control(store = c("dense", "fly")), "length 1")
  # the budget decides "auto", and a dense store above it is refused with both remedies named
  d <- two_class(n = 30, p = 3)
  ks <- kernel_set(rbf_kernel(1), features = "each")
  expect_error(mkl(d$x, d$y, kernels = ks, method = "uniform",
                   control = mkl_control(store = "dense", memory = 100)),
               "above the memory budget.*mkl_control\\(memory = \\)")
  f <- mkl(d$x, d$y, kernels = ks, method = "uniform",
           control = mkl_control(memory = mkl_memory(30, 3, "uniform", "fly")$total))
  expect_identical(f$store, "fly")
  # the default budget: the option, else half the machine's memory
  old <- options(mklearn.max_bytes = 12345)
  on.exit(options(old), add = TRUE)
  expect_identical(mc("uniform")$memory, 12345)
  expect_identical(mc("uniform", mkl_control(memory = 99))$memory, 99)
  options(mklearn.max_bytes = NULL)
  mem <- mc("uniform")$memory
  expect_true(is.double(mem) && length(mem) == 1L && mem > 0 && is.finite(mem))
  if (file.exists("/proc/meminfo")) {
    tot <- as.double(gsub("[^0-9]", "", grep("^MemTotal:", readLines("/proc/meminfo"),
                                             value = TRUE))) * 1024
    expect_equal(mem, tot / 2)
  }
})

test_that("nthreads is validated, and defaults to the option mklearn.threads", {
  expect_identical(mkl_control(nthreads = 2)$nthreads, 2L)
  expect_identical(mkl_control(nthreads = 0)$nthreads, 0L)
  for (bad in list(-1, 1.5, NA, "2", c(1, 2)))
    expect_error(mkl_control(nthreads = bad), "'nthreads' must be one non-negative integer")
  old <- options(mklearn.threads = 1L)
  on.exit(options(old), add = TRUE)
  expect_identical(mc("uniform")$nthreads, 1L)
  expect_identical(suppressMessages(mc("spicy", mkl_control(nthreads = 3)))$nthreads,
                   min(3L, parallel::detectCores()))
  options(mklearn.threads = -2)
  expect_error(mc("uniform"), "'nthreads'")
  options(mklearn.threads = NULL)
  expect_identical(mc("uniform")$nthreads, 0L)
})

test_that("method_control() fills every default from the one table", {
  tabs <- mklearn:::.control_methods
  common <- mklearn:::.control_common
  fam <- vapply(mkl_methods(), function(m) mklearn:::method_info(m)$control, "")
  expect_true(all(fam %in% names(tabs)))
  old <- options(mklearn.max_bytes = 1e9, mklearn.threads = 0L)
  on.exit(options(old), add = TRUE)
  for (m in names(fam)) {
    ctl <- mc(m)
    tab <- c(tabs[[fam[[m]]]], mklearn:::.control_tuning[[fam[[m]]]]$defaults)
    not_read <- mklearn:::.control_not_read[[fam[[m]]]]
    expect_setequal(names(ctl), union(setdiff(names(common), not_read), names(tab)))
    for (nm in setdiff(names(common), c(names(tab), not_read))) {   # a table may override one
      want <- if (nm == "memory") 1e9 else common[[nm]]
      expect_identical(ctl[[nm]], want, label = paste(m, nm))
    }
    for (nm in names(tab)) {
      if (is.null(tab[[nm]])) next
      expect_identical(ctl[[nm]], tab[[nm]], label = paste(m, nm))
    }
    # the same from an empty mkl_control()
    expect_identical(mc(m, mkl_control()), ctl)
  }
  # the derived Newton tolerance of the SVM family: 1e-5 at tol = 0.01, tighter below
  expect_equal(mc("simple")$newton_tol, 1e-5)
  expect_equal(mc("hessian", mkl_control(tol = 1e-3))$newton_tol, 1e-7)
  expect_equal(mc("lp", mkl_control(tol = 0.1))$newton_tol, 1e-5)
  expect_identical(mc("lp", mkl_control(newton_tol = 3e-4))$newton_tol, 3e-4)
  # user values override the table, the rest keep their defaults
  ctl <- mc("spicy", mkl_control(maxiter = 9, store = "fly",
                                 tuning = spicy_tuning(inner_tol = 1e-4)))
  expect_identical(ctl$maxiter, 9L)
  expect_identical(ctl$inner_tol, 1e-4)
  expect_identical(ctl$store, "fly")
  expect_identical(ctl$gamma_max, mklearn:::.spicy_tuning$gamma_max)
  expect_identical(ctl$tol, common$tol)
  # a table entry overrides the common default where a method has its own (tol of l01)
  for (m in names(fam)) if ("tol" %in% names(tabs[[fam[[m]]]]))
    expect_identical(mc(m)$tol, tabs[[fam[[m]]]]$tol)
})

test_that("a plain list works for internal calls and is checked the same way", {
  old <- options(mklearn.max_bytes = 1e9)
  on.exit(options(old), add = TRUE)
  ctl <- mc("spicy", list(maxiter = 3, inner_tol = 1e-5, verbose = NULL))
  expect_identical(ctl$maxiter, 3L)           # coerced like mkl_control() does
  expect_identical(ctl$inner_tol, 1e-5)
  expect_identical(ctl$verbose, FALSE)         # NULL entries mean "default"
  expect_identical(ctl$inner_maxiter, mklearn:::.spicy_tuning$inner_maxiter)
  expect_error(mc("spicy", list(box_fraction = 2)), "'box_fraction'")   # knobs checked too
  # internal lists may carry extra entries without an error (the front ends add loss, C, ...)
  expect_identical(mc("uniform", list(loss = "hinge"))$loss, "hinge")
  expect_error(mc("uniform", list(tol = -1)), "'tol'")
  expect_error(mc("simple", list(store = "ssd")), "should be one of")
})

test_that("mkl() refuses a setting the chosen method does not read", {
  d <- two_class(n = 30, p = 3)
  ks <- kernel_set(rbf_kernel(1))
  expect_error(mkl(d$x, d$y, kernels = ks, method = "uniform",
                   control = mkl_control(tuning = spicy_tuning(inner_tol = 1e-3))),
               "spicy_tuning\\(\\) tunes method 'spicy'; method 'uniform' does not read it")
  expect_error(mkl(d$x, d$y, kernels = ks, method = "spicy",
                   control = mkl_control(gold_tol = 0.2)),
               "method 'spicy' does not use the setting\\(s\\) gold_tol")
  expect_error(mkl(d$x, d$y, kernels = ks, method = "simple",
                   control = mkl_control(sigma2 = 1, rho1 = 5)),
               "method 'simple' does not use the setting\\(s\\) sigma2, rho1")
  expect_error(mkl(d$x, d$y, kernels = ks, method = "uniform", control = mkl_control(maxiter = 5)),
               "'uniform' does not use.*maxiter")
  # the same refusals from method_control() for every method: everything outside its table
  fam <- vapply(mkl_methods(), function(m) mklearn:::method_info(m)$control, "")
  for (m in names(fam)) {
    mine <- c(names(mklearn:::.control_common), names(mklearn:::.control_methods[[fam[[m]]]]))
    foreign <- setdiff(unlist(lapply(mklearn:::.control_methods, names)), mine)
    for (nm in foreign) {
      v <- test_value(nm)
      if (is.null(v)) next
      expect_error(mc(m, do.call(mkl_control, setNames(list(v), nm))),
                   sprintf("method '%s' does not use the setting\\(s\\) %s", m, nm))
    }
  }
  # a control that is not from mkl_control() is refused by mkl()
  expect_error(mkl(d$x, d$y, kernels = ks, method = "uniform", control = list(tol = 0.1)),
               "made by mkl_control")
  # a setting the method reads is accepted and used
  f <- mkl(d$x, d$y, kernels = ks, method = "uniform", C = 1,
           control = mkl_control(svm_tol = 1e-9, nthreads = 1))
  expect_s3_class(f, "mkl")
  expect_lt(f$info$svm_violation, 1e-9)
})

test_that("print.mkl_control shows what was set", {
  expect_output(print(mkl_control()), "all defaults")
  expect_output(print(mkl_control(tol = 0.005, store = "fly")), "tol.*0.005")
})

test_that("misspelt settings and model arguments the method does not read are refused", {
  d <- two_class(30, 2, seed = 11)
  expect_error(mkl_control(maxiters = 1), "unknown setting.*maxiters")
  expect_error(mkl(d$x, d$y, method = "simple", p = 3), "'p'.*method 'lp'")
  expect_error(mkl(d$x, d$y, method = "uniform", lambda = 0.2), "'lambda'")
  expect_error(mkl(d$x, d$y, method = "uniform", epsilon = 0.2), "'epsilon'")
  expect_error(mkl(d$x, d$y, method = "uniform", control = mkl_control(maxiter = 5)),
               "does not use the setting.*maxiter")
})

test_that("check_kernels is validated and refused where nothing reads it", {
  for (v in c("fast", "full", "none"))
    expect_identical(mkl_control(check_kernels = v)$check_kernels, v)
  expect_error(mkl_control(check_kernels = "eigen"),
               "'check_kernels' must be \"fast\", \"full\" or \"none\"")
  expect_error(mkl_control(check_kernels = c("fast", "full")), "'check_kernels' must be")
  expect_error(mkl_control(check_kernels = TRUE), "'check_kernels' must be")
  expect_identical(mc("spicy")$check_kernels, "fast")
  d <- two_class(30)
  expect_error(mkl(d$x, d$y, kernels = kernel_set(rbf_kernel(1)),
                   control = mkl_control(check_kernels = "full")),
               "'check_kernels' is for precomputed kernels")
})

test_that("counts must be whole numbers, and match.arg errors name the setting", {
  expect_error(mkl_control(maxiter = 1.5), "'maxiter' must be a whole number; got 1.5")
  expect_error(mkl_control(svm_maxiter = 100.5), "'svm_maxiter' must be a whole number")
  expect_error(mkl_control(warmup = 2.5), "'warmup' must be a whole number")
  expect_error(mkl_control(tuning = spicy_tuning(inner_maxiter = 2.5)),
               "'inner_maxiter' must be a whole number")
  expect_identical(mkl_control(maxiter = 3)$maxiter, 3L)
  expect_error(svm_smo(diag(2), c(-1, 1), maxiter = 1.5), "'maxiter' must be a whole number")
  expect_error(mkl_control(store = "ssd"), "'store' should be one of.*got \"ssd\"")
  expect_error(mkl_control(line_search = "golden"), "'line_search' should be one of")
  expect_error(mkl_control(bias = "none"), "'bias' should be one of")
  expect_error(mkl_control(start = "bad"), "'start' should be one of")
})

test_that("SpicyMKL's row start is refused with a store it is not read on", {
  d <- two_class(n = 40, p = 3)
  for (s in c("dense", "fly"))
    expect_error(mkl(d$x, d$y, method = "spicy",
                     control = mkl_control(store = s, tuning = spicy_tuning(row_start = 10))),
                 sprintf(paste0("row_start = \\) starts a fit on the low-rank store only, and this ",
                                "call sets mkl_control\\(store = \"%s\"\\)"), s))
  # the low-rank store reads it (a first fit on 10 of the 40 rows); row_start = 0 is no start
  f <- mkl(d$x, d$y, method = "spicy",
           control = mkl_control(store = "lowrank", platt = "train",
                                 tuning = spicy_tuning(row_start = 10)))
  expect_identical(f$info$row_start$rows, 10L)
  expect_silent(mkl(d$x, d$y, method = "spicy",
                    control = mkl_control(store = "dense", platt = "train",
                                          tuning = spicy_tuning(row_start = 0))))
})
