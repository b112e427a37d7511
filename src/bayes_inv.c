/* Empirical Bayes: the inverse and log determinant of the n x n covariance Kbar in one blocked
 * symmetric sweep (Gauss-Jordan on a positive definite matrix, no pivoting). Sweeping every
 * block of columns turns A into -A^{-1}; the pivot of each block is a Schur complement, whose
 * Cholesky factor gives the log determinant. All but O(n^2 EB_NB) of the n^3 flops are
 * symmetric rank-EB_NB updates through a register-blocked kernel: with a reference BLAS the
 * factorisation and inverse by LAPACK (dpotrf, dtrtri, dlauum) ran two to three times slower
 * (NOTES-bayes.md). Only the lower triangle is read and written. */
#include "bayes.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* C[i, j] -= sum_l W[i, l] W[j, l] over the 4 x 4 tiles of the lower triangle of C (n x n)
   whose rows and columns lie outside [k0, k1); W is n x kb, column-major with leading
   dimension n. Tiles start at multiples of 4, so none straddles [k0, k1) (a multiple of 4)
   but the last, ragged one, which lies in the last block. */
static void sweep_update(double *C, int n, const double *W, int kb, int k0, int k1, int nt)
{
    int ntile = (n + 3) / 4;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, 4)
#endif
    for (int tj = 0; tj < ntile; tj++) {
        int j = 4 * tj, jn = n - j < 4 ? n - j : 4;
        if (j >= k0 && j < k1) continue;
        for (int i = j; i < n; i += 4) {
            int in = n - i < 4 ? n - i : 4;
            if (i >= k0 && i < k1) { i = k1 - 4; continue; }
            double *c = C + i + (size_t) j * n;
            if (in == 4 && jn == 4) {
                double c00 = 0, c10 = 0, c20 = 0, c30 = 0, c01 = 0, c11 = 0, c21 = 0, c31 = 0,
                    c02 = 0, c12 = 0, c22 = 0, c32 = 0, c03 = 0, c13 = 0, c23 = 0, c33 = 0;
                const double *a = W + i, *b = W + j;
                for (int l = 0; l < kb; l++, a += n, b += n) {
                    double a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3];
                    double b0 = b[0], b1 = b[1], b2 = b[2], b3 = b[3];
                    c00 += a0 * b0; c10 += a1 * b0; c20 += a2 * b0; c30 += a3 * b0;
                    c01 += a0 * b1; c11 += a1 * b1; c21 += a2 * b1; c31 += a3 * b1;
                    c02 += a0 * b2; c12 += a1 * b2; c22 += a2 * b2; c32 += a3 * b2;
                    c03 += a0 * b3; c13 += a1 * b3; c23 += a2 * b3; c33 += a3 * b3;
                }
                c[0] -= c00; c[1] -= c10; c[2] -= c20; c[3] -= c30; c += n;
                c[0] -= c01; c[1] -= c11; c[2] -= c21; c[3] -= c31; c += n;
                c[0] -= c02; c[1] -= c12; c[2] -= c22; c[3] -= c32; c += n;
                c[0] -= c03; c[1] -= c13; c[2] -= c23; c[3] -= c33;
            } else {
                for (int jj = 0; jj < jn; jj++)
                    for (int ii = 0; ii < in; ii++) {
                        double s = 0.0;
                        for (int l = 0; l < kb; l++)
                            s += W[i + ii + (size_t) l * n] * W[j + jj + (size_t) l * n];
                        c[ii + (size_t) jj * n] -= s;
                    }
            }
        }
    }
}

/* Column c of block [k0, k1) of the symmetric matrix (lower storage), as a full column of
   length n (rows in the block excluded): the entry of row i < k0 is stored at (k0 + c, i). */
static void panel_get(const double *A, int n, int k0, int k1, double *W)
{
    int kb = k1 - k0;
    for (int i = 0; i < k0; i++)
        for (int c = 0; c < kb; c++) W[i + (size_t) c * n] = A[k0 + c + (size_t) i * n];
    for (int c = 0; c < kb; c++)
        memcpy(W + k1 + (size_t) c * n, A + k1 + (size_t) (k0 + c) * n,
               (size_t) (n - k1) * sizeof(double));
}

static void panel_put(double *A, int n, int k0, int k1, const double *W)
{
    int kb = k1 - k0;
    for (int i = 0; i < k0; i++)
        for (int c = 0; c < kb; c++) A[k0 + c + (size_t) i * n] = W[i + (size_t) c * n];
    for (int c = 0; c < kb; c++)
        memcpy(A + k1 + (size_t) (k0 + c) * n, W + k1 + (size_t) c * n,
               (size_t) (n - k1) * sizeof(double));
}

/* W <- W L^{-T} (right == 0) or W L^{-1} (right == 1) on the rows outside [k0, k1), L lower
   kb x kb (leading dimension kb): column operations of length n, one axpy each. */
static void panel_trsm(double *W, int n, int k0, int k1, const double *L, int right)
{
    int kb = k1 - k0;
    for (int s = 0; s < kb; s++) {
        int c = right ? kb - 1 - s : s;
        double *wc = W + (size_t) c * n;
        if (!right) {
            for (int l = 0; l < c; l++) {
                double f = L[c + l * kb];
                const double *wl = W + (size_t) l * n;
                for (int i = 0; i < k0; i++) wc[i] -= f * wl[i];
                for (int i = k1; i < n; i++) wc[i] -= f * wl[i];
            }
        } else {
            for (int l = c + 1; l < kb; l++) {
                double f = L[l + c * kb];
                const double *wl = W + (size_t) l * n;
                for (int i = 0; i < k0; i++) wc[i] -= f * wl[i];
                for (int i = k1; i < n; i++) wc[i] -= f * wl[i];
            }
        }
        double r = 1.0 / L[c + c * kb];
        for (int i = 0; i < k0; i++) wc[i] *= r;
        for (int i = k1; i < n; i++) wc[i] *= r;
    }
}

/* A (n x n, lower triangle) positive definite -> A^{-1} (lower triangle) and *ld = (1/2)
   log |A|. W: n x EB_NB scratch, P: EB_NB^2 scratch. Returns 0, or k > 0 when the pivot
   block starting at column k - 1 is not positive definite (A then holds no inverse). */
int eb_spd_inverse(double *A, int n, double *W, double *P, int nthreads, double *ld)
{
    int info = 0;
    double half = 0.0;
    int nt = mk_threads_for(nthreads, (double) n * n * EB_NB);
    for (int k0 = 0; k0 < n; k0 += EB_NB) {
        int k1 = k0 + EB_NB < n ? k0 + EB_NB : n, kb = k1 - k0;
        for (int c = 0; c < kb; c++)
            for (int r = c; r < kb; r++) P[r + c * kb] = A[k0 + r + (size_t) (k0 + c) * n];
        F77_CALL(dpotrf)("L", &kb, P, &kb, &info FCONE);
        if (info != 0) return k0 + 1;
        for (int c = 0; c < kb; c++) half += log(P[c + c * kb]);
        panel_get(A, n, k0, k1, W);
        panel_trsm(W, n, k0, k1, P, 0);          /* W = B L^{-T} */
        sweep_update(A, n, W, kb, k0, k1, nt);   /* C -= B P^{-1} B' */
        panel_trsm(W, n, k0, k1, P, 1);          /* W = B P^{-1} */
        panel_put(A, n, k0, k1, W);
        F77_CALL(dpotri)("L", &kb, P, &kb, &info FCONE);
        if (info != 0) return k0 + 1;
        for (int c = 0; c < kb; c++)
            for (int r = c; r < kb; r++) A[k0 + r + (size_t) (k0 + c) * n] = -P[r + c * kb];
        R_CheckUserInterrupt();
    }
    for (int j = 0; j < n; j++)
        for (int i = j; i < n; i++) A[i + (size_t) j * n] = -A[i + (size_t) j * n];
    *ld = half;
    return 0;
}

/* LAPACK's dpotrf ("L") and dtrtri ("L", "N") by their own blocked loops (the reference
   implementation's calls in its order, blocks of EB_NB), with an interrupt check per block: as
   one LAPACK call the k x k factorisation of the low-rank form could not be interrupted for
   O(k^3) (NOTES-bayes.md). Return LAPACK's info. */
int eb_chol_checked(double *A, int n)
{
    int info = 0;
    double one = 1.0, mone = -1.0;
    for (int j = 0; j < n; j += EB_NB) {
        int jb = n - j < EB_NB ? n - j : EB_NB, rest = n - j - jb;
        double *Ajj = A + j + (size_t) j * n;
        F77_CALL(dsyrk)("L", "N", &jb, &j, &mone, A + j, &n, &one, Ajj, &n FCONE FCONE);
        F77_CALL(dpotrf)("L", &jb, Ajj, &n, &info FCONE);
        if (info != 0) return info + j;
        if (rest > 0) {
            F77_CALL(dgemm)("N", "T", &rest, &jb, &j, &mone, A + j + jb, &n, A + j, &n, &one,
                            Ajj + jb, &n FCONE FCONE);
            F77_CALL(dtrsm)("R", "L", "T", "N", &rest, &jb, &one, Ajj, &n, Ajj + jb, &n
                            FCONE FCONE FCONE FCONE);
        }
        R_CheckUserInterrupt();
    }
    return 0;
}

int eb_trinv_checked(double *A, int n)
{
    int info = 0;
    double one = 1.0, mone = -1.0;
    for (int j = 0; j < n; j++) if (A[j + (size_t) j * n] == 0.0) return j + 1;
    for (int j = ((n - 1) / EB_NB) * EB_NB; j >= 0; j -= EB_NB) {
        int jb = n - j < EB_NB ? n - j : EB_NB, rest = n - j - jb;
        double *Ajj = A + j + (size_t) j * n;
        if (rest > 0) {
            double *Ann = Ajj + jb + (size_t) jb * n;
            F77_CALL(dtrmm)("L", "L", "N", "N", &rest, &jb, &one, Ann, &n, Ajj + jb, &n
                            FCONE FCONE FCONE FCONE);
            F77_CALL(dtrsm)("R", "L", "N", "N", &rest, &jb, &mone, Ajj, &n, Ajj + jb, &n
                            FCONE FCONE FCONE FCONE);
        }
        F77_CALL(dtrtri)("L", "N", &jb, Ajj, &n, &info FCONE FCONE);
        if (info != 0) return info + j;
        R_CheckUserInterrupt();
    }
    return 0;
}
