/*
 * mock_cublas.c: a stand-in for cuBLAS's GEMM entries and handle getters, for
 * test_dropin (no GPU): each entry counts its calls and keeps the last m; the handle's
 * pointer mode is the test's to set. Nothing is computed.
 */
#include <stdint.h>

static int pointer_mode, calls, last_m;

void mock_cublas_set_pointer_mode(int mode) { pointer_mode = mode; }
int mock_cublas_calls(void) { return calls; }
int mock_cublas_last_m(void) { return last_m; }

int cublasGetPointerMode_v2(void *h, int *mode) {
    (void)h;
    *mode = pointer_mode;
    return 0;
}
int cublasGetStream_v2(void *h, void **stream) {
    (void)h;
    *stream = 0;
    return 0;
}

#define COUNT(m) (calls++, last_m = (int)(m), 0)
int cublasSgemm_v2(void *h, int ta, int tb, int m, int n, int k, const void *al, const void *A,
                   int lda, const void *B, int ldb, const void *be, void *C, int ldc) {
    (void)h, (void)ta, (void)tb, (void)n, (void)k, (void)al, (void)A, (void)lda, (void)B;
    (void)ldb, (void)be, (void)C, (void)ldc;
    return COUNT(m);
}
int cublasDgemm_v2_64(void *h, int ta, int tb, int64_t m, int64_t n, int64_t k, const void *al,
                      const void *A, int64_t lda, const void *B, int64_t ldb, const void *be,
                      void *C, int64_t ldc) {
    (void)h, (void)ta, (void)tb, (void)n, (void)k, (void)al, (void)A, (void)lda, (void)B;
    (void)ldb, (void)be, (void)C, (void)ldc;
    return COUNT(m);
}
int cublasHgemm(void *h, int ta, int tb, int m, int n, int k, const void *al, const void *A,
                int lda, const void *B, int ldb, const void *be, void *C, int ldc) {
    (void)h, (void)ta, (void)tb, (void)n, (void)k, (void)al, (void)A, (void)lda, (void)B;
    (void)ldb, (void)be, (void)C, (void)ldc;
    return COUNT(m);
}
int cublasGemmEx(void *h, int ta, int tb, int m, int n, int k, const void *al, const void *A,
                 int at, int lda, const void *B, int bt, int ldb, const void *be, void *C, int ct,
                 int ldc, int compute, int algo) {
    (void)h, (void)ta, (void)tb, (void)n, (void)k, (void)al, (void)A, (void)at, (void)lda;
    (void)B, (void)bt, (void)ldb, (void)be, (void)C, (void)ct, (void)ldc, (void)compute, (void)algo;
    return COUNT(m);
}
