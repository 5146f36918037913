/*
 * gemm.c: gemmtune from C, built against the installed library:
 *   cc -std=c11 gemm.c $(pkg-config --cflags --libs gemmtune) \
 *      -I/usr/local/cuda/include -L/usr/local/cuda/lib64 -lcudart -o gemm
 * C = A * B for 1000 x 1000 x 1000 in fp32 on the default stream: the first call tunes
 * (or finds the cache's winner), the second runs the winner; then C[0] against the host's
 * sum. Exits 1 with the library's or CUDA's message when something fails.
 */
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <gemmtune.h>

#define N 1000

static int cuda_ok(cudaError_t e, const char *what) {
    if (e == cudaSuccess) return 1;
    fprintf(stderr, "gemm example: %s: CUDA error: %s\n", what, cudaGetErrorString(e));
    return 0;
}

int main(void) {
    size_t bytes = sizeof(float) * N * N;
    float *hA = malloc(bytes), *hB = malloc(bytes), *hC = malloc(bytes);
    float *A = NULL, *B = NULL, *C = NULL;
    int rc = 1;
    if (!hA || !hB || !hC) goto out;
    for (int i = 0; i < N * N; i++) hA[i] = (float)(i % 7) - 3, hB[i] = (float)(i % 5) - 2;
    if (!cuda_ok(cudaMalloc((void **)&A, bytes), "cudaMalloc") ||
        !cuda_ok(cudaMalloc((void **)&B, bytes), "cudaMalloc") ||
        !cuda_ok(cudaMalloc((void **)&C, bytes), "cudaMalloc") ||
        !cuda_ok(cudaMemcpy(A, hA, bytes, cudaMemcpyHostToDevice), "cudaMemcpy") ||
        !cuda_ok(cudaMemcpy(B, hB, bytes, cudaMemcpyHostToDevice), "cudaMemcpy"))
        goto out;
    for (int call = 0; call < 2; call++) {
        gt_status s = gemm_tuned(GT_OP_N, GT_OP_N, N, N, N, 1.0f, A, N, B, N, 0.0f, C, N, NULL);
        if (s != GT_SUCCESS) {
            fprintf(stderr, "gemm example: gemm_tuned: %s: %s\n", gt_status_string(s), gt_last_error());
            goto out;
        }
    }
    if (!cuda_ok(cudaMemcpy(hC, C, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy")) goto out;
    double want = 0;
    for (int l = 0; l < N; l++) want += (double)hA[l * N] * hB[l];
    gt_stats st;
    gt_get_stats(&st);
    printf("C[0] = %g (host: %g); calls %llu, tuned %llu, from the cache %llu\n", hC[0], want,
           (unsigned long long)st.calls, (unsigned long long)st.tunes,
           (unsigned long long)st.cache_hits);
    rc = fabs(hC[0] - want) <= 1e-3 * fabs(want) + 1e-3 ? 0 : 1;
out:
    cudaFree(A), cudaFree(B), cudaFree(C);
    free(hA), free(hB), free(hC);
    gt_release();
    return rc;
}
