/* Registration table only: every .Call entry with its exact argument count. */
#include "mklearn.h"
#include <R_ext/Rdynload.h>

#define ENTRY(name, n) {#name, (DL_FUNC) &mkc_##name, n}

static const R_CallMethodDef callMethods[] = {
    ENTRY(threads, 1),
    ENTRY(codes, 0),
    ENTRY(gram, 3),
    ENTRY(check_kernels, 3),
    ENTRY(store_dense, 1),
    ENTRY(store_pool, 2),
    ENTRY(store_stats, 1),
    ENTRY(store_mv, 3),
    ENTRY(store_quad, 3),
    ENTRY(store_combine, 2),
    ENTRY(store_decision, 3),
    ENTRY(store_cols, 3),
    ENTRY(store_neighbours, 4),
    ENTRY(platt_pass, 5),
    ENTRY(front_colstats, 2),
    ENTRY(front_sweep, 3),
    ENTRY(store_offdiag, 6),
    ENTRY(store_diag, 2),
    ENTRY(store_lowrank, 3),
    ENTRY(store_factor_tmul, 3),
    ENTRY(store_lowrank_test, 3),
    ENTRY(smo, 6),
    ENTRY(smo_store, 8),
    ENTRY(kcache_mv, 4),
    ENTRY(lsvm, 7),
    ENTRY(kridge, 3),
    ENTRY(kridge_fly, 5),
    ENTRY(spicy, 4),
    ENTRY(spicy_cholup, 3),
    ENTRY(svmfam, 6),
    ENTRY(l01, 5),
    ENTRY(bayes, 4),
    ENTRY(mwu, 4),
    ENTRY(case_kscale, 2),
    {NULL, NULL, 0}
};

void R_init_mklearn(DllInfo *dll)
{
    R_registerRoutines(dll, NULL, callMethods, NULL, NULL);
    R_useDynamicSymbols(dll, FALSE);
    R_forceSymbols(dll, TRUE);
    mk_runtime_init();
}
