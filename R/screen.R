# Screening of kernels that memorise: before a fit, the kernels of a kernel set that are nearly
# the identity on the training data (a Gaussian much narrower than the distances between the
# points: each point's only neighbour is itself) are dropped. MKL solvers favour such kernels
# (they separate any training labels) and then predict poorly; see NOTES-kernels.md.

# The effective number of neighbours below which a kernel counts as the identity: the
# option mklearn.screen (default 0, no screening; 3 drops only near-identity kernels).
screen_threshold <- function() {
  th <- getOption("mklearn.screen", 0)
  if (!is.numeric(th) || length(th) != 1L || is.na(th) || th < 0)
    stop("option 'mklearn.screen' must be one non-negative number (0: no screening)",
         call. = FALSE)
  th
}

# The effective number of neighbours per point (kernel_neighbours, on up to 100 columns) of
# every kernel of the resolved set rk on the data xs. Built-in kernels are computed on the fly;
# custom kernels need their dense store, whose size is checked against `memory` (bytes) first.
set_neighbours <- function(rk, xs, nthreads = 0L, memory = Inf) {
  if (has_custom(rk)) {
    need <- 8 * as.double(nrow(xs))^2 * nrow(rk$table)
    if (need > memory)
      stop(sprintf(paste0("screening the kernels (options(mklearn.screen)) needs the dense store ",
                          "of the custom kernels: %s for %d kernels on %d rows, above the ",
                          "memory budget of %s (mkl_control(memory = )); raise it, or keep ",
                          "every kernel with options(mklearn.screen = 0) or cv.mkl(screen = ",
                          "NULL)"), format_bytes(need), nrow(rk$table), nrow(xs),
                   format_bytes(memory)), call. = FALSE)
    st <- dense_store(rk, xs, nthreads)
  } else st <- fly_store(rk, xs, nthreads)
  kernel_neighbours(st, cols = 100L)
}

# The resolved kernel set rk without the kernels whose effective number of neighbours on the
# training data xs is below screen_threshold(); the dropped labels in rk$screened. The widest
# kernel stays when every one is below. `memory`: the budget of a dense store (custom kernels).
screen_kernels <- function(rk, xs, nthreads = 0L, memory = Inf) {
  th <- screen_threshold()
  M <- nrow(rk$table)
  if (th <= 1 || M < 2L) return(rk)
  nb <- set_neighbours(rk, xs, nthreads, memory)
  drop <- which(!is.na(nb) & nb < th)
  if (length(drop) == M) drop <- drop[-which.max(nb)]
  if (!length(drop)) return(rk)
  inform <- function(msg) message(structure(class = c("mklearn_screen_message", "message",
                                                      "condition"),
                                            list(message = paste0(msg, "\n"), call = NULL)))
  inform(sprintf(paste0("%d kernel(s) nearly the identity on the training data (fewer than %s ",
                         "effective neighbours per point) left out: %s%s ",
                         "(options(mklearn.screen = 0) keeps them)"),
                  length(drop), format(th),
                  paste(utils::head(rk$labels[drop], 4L), collapse = ", "),
                  if (length(drop) > 4L) sprintf(" and %d more", length(drop) - 4L) else ""))
  rk$table <- rk$table[-drop, , drop = FALSE]
  rk$screened <- rk$labels[drop]
  rk$labels <- rk$labels[-drop]
  rk
}
