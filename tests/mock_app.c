/*
 * mock_app.c: a library that calls cuBLAS (the stand-in, tests/mock_cublas.c), for
 * test_dropin_scope, which opens it with RTLD_LOCAL as Python opens PyTorch's: the
 * stand-in cuBLAS then comes in with it, outside the program's global scope.
 */
#include <stdint.h>

int cublasSgemm_v2(void *, int, int, int, int, int, const float *, const float *, int,
                   const float *, int, const float *, float *, int);

/* cublasSgemm_v2 of an m x 9 x 5 product at addresses one byte off alignment (gemmtune
 * refuses them before any GPU work); cuBLAS's status. */
int mock_app_sgemm(int m) {
    void *bad = (void *)(uintptr_t)0x7f0000000001ull;
    const float a = 1.0f, b = 0.0f;
    return cublasSgemm_v2(0, 0, 0, m, 9, 5, &a, bad, m, bad, 5, &b, bad, m);
}
