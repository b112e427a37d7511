# Independent work (cross-validation folds; the binary problems of a multiclass fit on a kernel
# store computed on the fly) runs through future.apply when it is installed, so any future
# backend runs it (future::plan(): sequential, multisession, a cluster, a scheduler through
# future.batchtools), and through lapply() otherwise. Progress goes through progressr when it
# is installed: the user's handlers decide what is shown (nothing without handlers).

# lapply() over X, through future.apply::future_lapply() on several workers. Each
# element gets its own parallel-safe random-number stream (future.seed = TRUE), so the results
# do not depend on the backend or the number of workers. FUN should be a function of the package
# namespace and receive what it needs through '...' (exported once to each worker), so that no
# large object of the calling frame is sent by accident.
mk_lapply <- function(X, FUN, ...) {
  if (parallel_workers() > 1) future.apply::future_lapply(X, FUN, ..., future.seed = TRUE)
  else if (requireNamespace("future.apply", quietly = TRUE)) lapply_streams(X, FUN, ...)
  else lapply(X, FUN, ...)
}

# lapply() with the random-number streams future_lapply(future.seed = TRUE) gives its elements
# (L'Ecuyer-CMRG substreams from the caller's state), without its futures and its search for
# globals (a sequential plan needs neither); the caller's stream is then left where
# future_lapply() leaves it (two uniform draws on), so that later draws are the same too.
lapply_streams <- function(X, FUN, ...) {
  env <- globalenv()
  if (!exists(".Random.seed", envir = env, inherits = FALSE)) stats::runif(1L)
  old <- get(".Random.seed", envir = env, inherits = FALSE)
  on.exit({
    assign(".Random.seed", old, envir = env)
    stats::runif(2L)
  })
  if (!(length(old) == 7L && old[1L] %% 10000L == 407L)) {
    RNGkind("L'Ecuyer-CMRG")
    seed <- get(".Random.seed", envir = env, inherits = FALSE)
    assign(".Random.seed", old, envir = env)
  } else seed <- old
  streams <- vector("list", length(X))
  for (i in seq_along(X)) {
    streams[[i]] <- parallel::nextRNGSubStream(seed)
    seed <- parallel::nextRNGStream(seed)
  }
  lapply(seq_along(X), function(i) {
    assign(".Random.seed", streams[[i]], envir = env)
    FUN(X[[i]], ...)
  })
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
