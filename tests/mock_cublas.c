/*
 * mock_cublas.c: a stand-in for cuBLAS's GEMM entries and handle getters, for
 * test_dropin (no GPU): each entry counts its calls and keeps the last m; the handle's
 * pointer mode is the test's to set. Nothing is computed.
 */
#include "mock_cublas.h"

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

/* cuBLASLt: attributes read back with cuBLASLt's size checks (4-byte enums, 8-byte
 * pointers and sizes). */
int cublasLtMatmulDescGetAttribute(void *d, int attr, void *buf, size_t size, size_t *written) {
    mock_desc *m = d;
    if (attr < 0 || attr >= 40) return 7;
    int ptr = attr >= 17;
    if (size != (ptr ? sizeof(void *) : 4)) return 7; /* CUBLAS_STATUS_INVALID_VALUE */
    if (ptr) *(void **)buf = m->p[attr];
    else *(uint32_t *)buf = m->v[attr];
    *written = size;
    return 0;
}
int cublasLtMatrixLayoutGetAttribute(void *l, int attr, void *buf, size_t size, size_t *written) {
    mock_layout *m = l;
    switch (attr) {
    case 0: if (size != 4) return 7; *(uint32_t *)buf = m->type; break;
    case 1: if (size != 4) return 7; *(int32_t *)buf = m->order; break;
    case 2: if (size != 8) return 7; *(uint64_t *)buf = m->rows; break;
    case 3: if (size != 8) return 7; *(uint64_t *)buf = m->cols; break;
    case 4: if (size != 8) return 7; *(int64_t *)buf = m->ld; break;
    case 5: if (size != 4) return 7; *(int32_t *)buf = m->batch; break;
    default: return 7;
    }
    *written = size;
    return 0;
}
int cublasLtMatmul(void *h, void *d, const void *al, const void *A, void *Ad, const void *B,
                   void *Bd, const void *be, const void *C, void *Cd, void *D, void *Dd,
                   const void *algo, void *ws, size_t wsb, void *stream) {
    (void)h, (void)d, (void)al, (void)A, (void)B, (void)Bd, (void)be, (void)C, (void)Cd;
    (void)D, (void)Dd, (void)algo, (void)ws, (void)wsb, (void)stream;
    return COUNT(((mock_layout *)Ad)->rows);
}
