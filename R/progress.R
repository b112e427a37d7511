# Progress of one long fit. Every solver with an outer loop (SpicyMKL, the SVM family, MKL-L0/1,
# Empirical Bayes, MWUMKL) reports through one C hook (mk_progress in src/utils.c): its loop
# calls the R function made here with the fraction of the fit done, at most every 0.25 s and
# once with 1 at the end. The fraction is the larger of the iterations done out of the cap and
# how far the convergence criterion has fallen on a log scale from its first value to 'tol'
# (MWUMKL: its fixed number of iterations), and never decreases. Paths, cross-validation and
# multiclass fits report per C, fold or problem (R/parallel.R); the fits inside them report
# nothing of their own (progress_quiet()), so bars never nest.

# The function a solver's control list carries as 'progress_fun' (NULL: no reports, and the C
# loop does nothing). control: the method's complete settings; 'progress' is
#   NA    (default) report a fit only once it has run getOption("mklearn.progress_delay", 2)
#         seconds, and not at all when control$verbose prints the per-iteration trace;
#   TRUE  report from the start; FALSE never.
# With progressr installed the reports are progressr conditions (the user's handlers decide
# what is shown; progressr shows nothing when not interactive unless enabled); without it, a
# text bar in interactive sessions only. The reporter is created at the first report, so a
# short fit signals nothing; it finishes when the fit's frame 'envir' exits.
fit_progress <- function(control, label, envir = parent.frame()) {
  force(envir)
  setting <- control[["progress"]]
  if (is.null(setting) || isFALSE(setting) || .mk_progress$depth > 0L) return(NULL)
  if (is.na(setting) && as.numeric(control[["verbose"]]) > 0) return(NULL)
  use_pr <- requireNamespace("progressr", quietly = TRUE)
  if (use_pr) {
    if (!isTRUE(getOption("progressr.enable", interactive()))) return(NULL)
  } else if (!interactive()) return(NULL)
  delay <- if (isTRUE(setting)) 0 else as.numeric(getOption("mklearn.progress_delay", 2))
  t0 <- proc.time()[["elapsed"]]
  steps <- 100L
  shown <- 0L
  report <- NULL
  f <- function(frac) {
    if (is.null(report)) {
      if (proc.time()[["elapsed"]] - t0 < delay) return(invisible())
      report <<- if (use_pr) {
        p <- progressr::progressor(steps = steps, envir = envir)
        function(k) p(message = label, amount = k - shown)
      } else {
        bar <- utils::txtProgressBar(min = 0, max = steps, style = 3)
        function(k) {
          utils::setTxtProgressBar(bar, k)
          if (k >= steps) close(bar)
        }
      }
    }
    k <- min(steps, as.integer(floor(frac * steps + 1e-9)))
    if (k > shown) {
      report(k)
      shown <<- k
    }
    invisible()
  }
  # seconds between the C loop's calls (0.25 s; tests set the option to 0 to see every tick)
  structure(f, every = as.double(getOption("mklearn.progress_every", 0.25)))
}

# A fit made of 'of' solver runs in a row (MKL-L0/1's chained restarts): run k reports on the
# k-th part of the bar.
progress_part <- function(fun, k, of) {
  if (is.null(fun) || of == 1L) return(fun)
  force(k)
  structure(function(frac) fun((k - 1 + frac) / of), every = attr(fun, "every"))
}
