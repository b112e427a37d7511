# Independent work (cross-validation folds; the binary problems of a multiclass fit on a kernel
# store computed on the fly) runs through future.apply when it is installed, so any future
# backend runs it (future::plan(): sequential, multisession, a cluster, a scheduler through
# future.batchtools), and through lapply() otherwise. Progress goes through progressr when it
# is installed: the user's handlers decide what is shown (nothing without handlers).

# lapply() over X, through future.apply::future_lapply() when future.apply is installed. Each
# element gets its own parallel-safe random-number stream (future.seed = TRUE), so the results
# do not depend on the backend or the number of workers. FUN should be a function of the package
# namespace and receive what it needs through '...' (exported once to each worker), so that no
# large object of the calling frame is sent by accident.
mk_lapply <- function(X, FUN, ...) {
  if (requireNamespace("future.apply", quietly = TRUE))
    future.apply::future_lapply(X, FUN, ..., future.seed = TRUE)
  else lapply(X, FUN, ...)
}

# The number of workers of the current future plan (1 without future.apply).
parallel_workers <- function() {
  if (!requireNamespace("future.apply", quietly = TRUE)) return(1)
  as.numeric(future::nbrOfWorkers())
}

# Settings for fits that run on parallel workers: one thread per fit unless the user set
# 'nthreads' (several workers each running the OpenMP default would oversubscribe the cores).
# The results do not depend on the thread count (the C code has no thread-dependent reductions).
worker_control <- function(control) {
  if (is.null(control)) control <- mkl_control()
  if (parallel_workers() > 1 && inherits(control, "mkl_control") &&
      is.null(control[["nthreads"]]))
    control[["nthreads"]] <- 1L
  control
}

# ------------------------------------------------------------------ progress

# Nesting depth of mklearn's progress reports: work inside a reported step (a fold of a
# cross-validation, say) reports nothing of its own.
.mk_progress <- new.env(parent = emptyenv())
.mk_progress$depth <- 0L

# A progressr progressor of 'steps' steps when progressr is installed, there are at least two
# steps and no enclosing mklearn report; otherwise a function that does nothing. The progressor
# is finished when the frame 'envir' exits.
mk_progressor <- function(steps, envir = parent.frame()) {
  if (steps >= 2L && .mk_progress$depth == 0L && requireNamespace("progressr", quietly = TRUE))
    progressr::progressor(steps = steps, envir = envir)
  else function(...) invisible(NULL)
}

# Silence mklearn's progress reports until progress_restore(); returns the previous depth.
progress_quiet <- function() {
  old <- .mk_progress$depth
  .mk_progress$depth <- old + 1L
  old
}
progress_restore <- function(old) .mk_progress$depth <- old
