/* Registration table only: every .Call entry with its exact argument count. */
#include "mklearn.h"
#include <R_ext/Rdynload.h>

#define ENTRY(name, n) {#name, (DL_FUNC) &mkc_##name, n}

static const R_CallMethodDef callMethods[] = {
    ENTRY(threads, 1),
    ENTRY(combine, 3),
    ENTRY(kernel_mv, 4),
    ENTRY(gram, 12),
    ENTRY(normalize, 4),
    ENTRY(normalize_test, 4),
    ENTRY(check_psd, 1),
    ENTRY(smo, 6),
    ENTRY(kridge, 3),
    /* ---- spicy BEGIN ---- */
    ENTRY(spicy, 9),
    /* ---- spicy END ---- */
    /* ---- svm family BEGIN ---- */
    ENTRY(simple, 7),
    ENTRY(hessian, 7),
    ENTRY(lpnorm, 7),
    /* ---- svm family END ---- */
    {NULL, NULL, 0}
};

void R_init_mklearn(DllInfo *dll)
{
    R_registerRoutines(dll, NULL, callMethods, NULL, NULL);
    R_useDynamicSymbols(dll, FALSE);
    R_forceSymbols(dll, TRUE);
}
