/*
 * test_dropin.c: the cuBLAS drop-in (dropin/cublas.c) preloaded into a program written
 * against cuBLAS alone, here a stand-in (tests/mock_cublas.c), no GPU needed. Run with
 * LD_PRELOAD=libgemmtune_cublas.so (tests/meson.build does).
 *
 * Cases: the drop-in takes the program's calls (its counts move) and passes them to the
 * real cuBLAS unchanged when it cannot route them: device pointer mode, GEMMTUNE_CUBLAS=off,
 * types gemmtune lacks (int8, mixed A and B types), a legacy compute type; calls it routes
 * that gemmtune refuses (a pointer off its element's alignment: gemmtune writes nothing)
 * go to cuBLAS as they came (fell back), for Sgemm, Dgemm_64, Hgemm and GemmEx in bf16;
 * cublasLtMatmul as a plain GEMM routed, and not with a bias epilogue, a batch, a row
 * order, D apart from C or a device pointer mode; GEMMTUNE_LOG=info naming each shape
 * once, cuBLASLt calls sent to cuBLAS included.
 * Routed calls that gemmtune serves need a GPU: the Python and PyTorch runs cover them.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mock_cublas.h"
#include "tap.h"

int cublasSgemm_v2(void *, int, int, int, int, int, const float *, const float *, int,
                   const float *, int, const float *, float *, int);
int cublasDgemm_v2_64(void *, int, int, int64_t, int64_t, int64_t, const double *,
                      const double *, int64_t, const double *, int64_t, const double *,
                      double *, int64_t);
int cublasHgemm(void *, int, int, int, int, int, const void *, const void *, int, const void *,
                int, const void *, void *, int);
int cublasGemmEx(void *, int, int, int, int, int, const void *, const void *, int, int,
                 const void *, int, int, const void *, void *, int, int, int, int);
int cublasLtMatmul(void *, void *, const void *, const void *, void *, const void *, void *,
                   const void *, const void *, void *, void *, void *, const void *, void *, size_t,
                   void *);

typedef void (*counts_fn)(unsigned long long out[3]);
static counts_fn counts;

/* The drop-in's counts now: routed, forwarded, fell back. */
static void now(unsigned long long c[3]) {
    c[0] = c[1] = c[2] = 0;
    if (counts) counts(c);
}

/* Device addresses one byte off alignment: gemmtune refuses them before any GPU work. */
#define BAD ((void *)(uintptr_t)0x7f0000000001ull)

/* Runs call (an expression), then checks that the stand-in cuBLAS got it with m and that
 * the drop-in's counts moved by (routed, forwarded, fell back). */
#define EXPECT(what, call, m_, r, f, b)                                                         \
    do {                                                                                        \
        unsigned long long c0[3], c1[3];                                                        \
        now(c0);                                                                                \
        int calls0 = mock_cublas_calls();                                                       \
        int st = (call);                                                                        \
        now(c1);                                                                                \
        TAP_CHECK(st == 0 && mock_cublas_calls() == calls0 + 1 && mock_cublas_last_m() == (m_), \
                  "%s: status %d, cuBLAS called %d times, m %d", what, st,                     \
                  mock_cublas_calls() - calls0, mock_cublas_last_m());                          \
        TAP_CHECK(c1[0] - c0[0] == (r) && c1[1] - c0[1] == (f) && c1[2] - c0[2] == (b),        \
                  "%s: routed +%llu forwarded +%llu fell back +%llu, want %d %d %d", what,     \
                  c1[0] - c0[0], c1[1] - c0[1], c1[2] - c0[2], r, f, b);                        \
    } while (0)

static void dropin_takes_and_forwards(void) {
    if (!counts) TAP_SKIP("skipped: the drop-in is not preloaded (LD_PRELOAD)");
    const float a = 1.0f, b = 0.0f;
    const double ad = 1.0, bd = 0.0;
    const unsigned short ah = 0x3c00, bh = 0;  /* 1.0 and 0.0 as halves */
    mock_cublas_set_pointer_mode(0);
    unsetenv("GEMMTUNE_CUBLAS");
    EXPECT("Sgemm, refused by gemmtune", cublasSgemm_v2(NULL, 0, 0, 17, 9, 5, &a, BAD, 17, BAD, 5, &b, BAD, 17), 17, 0, 0, 1);
    EXPECT("Dgemm_64, refused", cublasDgemm_v2_64(NULL, 1, 0, 33, 9, 5, &ad, BAD, 5, BAD, 5, &bd, BAD, 33), 33, 0, 0, 1);
    EXPECT("Hgemm, refused", cublasHgemm(NULL, 0, 1, 19, 9, 5, &ah, BAD, 19, BAD, 9, &bh, BAD, 19), 19, 0, 0, 1);
    /* GemmEx bf16 (14) in, f32 (0) out, COMPUTE_32F (68): routed, refused. */
    EXPECT("GemmEx bf16, refused", cublasGemmEx(NULL, 0, 0, 21, 9, 5, &a, BAD, 14, 21, BAD, 14, 5, &b, BAD, 0, 21, 68, -1), 21, 0, 0, 1);
    /* Not routable: int8 (3) in, int32 (10) out, COMPUTE_32I (72); mixed A and B types; a
     * legacy compute type (CUDA_R_32F, 0). */
    EXPECT("GemmEx int8", cublasGemmEx(NULL, 0, 0, 23, 9, 4, &a, BAD, 3, 24, BAD, 3, 4, &b, BAD, 10, 23, 72, -1), 23, 0, 1, 0);
    EXPECT("GemmEx mixed", cublasGemmEx(NULL, 0, 0, 25, 9, 5, &a, BAD, 2, 25, BAD, 14, 5, &b, BAD, 0, 25, 68, -1), 25, 0, 1, 0);
    EXPECT("GemmEx legacy compute", cublasGemmEx(NULL, 0, 0, 27, 9, 5, &a, BAD, 0, 27, BAD, 0, 5, &b, BAD, 0, 27, 0, -1), 27, 0, 1, 0);
    /* Device pointer mode: alpha is on the device, never read here. */
    mock_cublas_set_pointer_mode(1);
    EXPECT("Sgemm, device pointer mode", cublasSgemm_v2(NULL, 0, 0, 29, 9, 5, BAD, BAD, 29, BAD, 5, BAD, BAD, 29), 29, 0, 1, 0);
    mock_cublas_set_pointer_mode(0);
    /* Routing off at run time. */
    setenv("GEMMTUNE_CUBLAS", "off", 1);
    EXPECT("Sgemm, GEMMTUNE_CUBLAS=off", cublasSgemm_v2(NULL, 0, 0, 31, 9, 5, &a, BAD, 31, BAD, 5, &b, BAD, 31), 31, 0, 1, 0);
    unsetenv("GEMMTUNE_CUBLAS");
}

static void dropin_lt_plain_gemm_only(void) {
    if (!counts) TAP_SKIP("skipped: the drop-in is not preloaded (LD_PRELOAD)");
    unsetenv("GEMMTUNE_CUBLAS");
    /* bf16 (14) A 21 x 5, B 5 x 9, C = D 21 x 9 f32 (0), COMPUTE_32F (68), scale f32,
     * host pointers, no transposes, the default epilogue (1). */
    mock_desc d = {{0}, {0}};
    d.v[0] = 68, d.v[1] = 0, d.v[2] = 0, d.v[7] = 1;
    mock_layout la = {14, 0, 1, 21, 5, 21}, lb = {14, 0, 1, 5, 9, 5}, lc = {0, 0, 1, 21, 9, 21};
    const float a = 1.0f, b = 0.0f;
    EXPECT("Lt plain GEMM, refused", cublasLtMatmul(NULL, &d, &a, BAD, &la, BAD, &lb, &b, BAD, &lc, BAD, &lc, NULL, NULL, 0, NULL), 21, 0, 0, 1);
    d.v[7] = 2; /* CUBLASLT_EPILOGUE_RELU */
    EXPECT("Lt epilogue", cublasLtMatmul(NULL, &d, &a, BAD, &la, BAD, &lb, &b, BAD, &lc, BAD, &lc, NULL, NULL, 0, NULL), 21, 0, 1, 0);
    d.v[7] = 1;
    d.p[20] = BAD; /* a D scale pointer (fp8) */
    EXPECT("Lt scale pointer", cublasLtMatmul(NULL, &d, &a, BAD, &la, BAD, &lb, &b, BAD, &lc, BAD, &lc, NULL, NULL, 0, NULL), 21, 0, 1, 0);
    d.p[20] = NULL;
    mock_layout batched = lc;
    batched.batch = 2;
    EXPECT("Lt batch", cublasLtMatmul(NULL, &d, &a, BAD, &la, BAD, &lb, &b, BAD, &batched, BAD, &batched, NULL, NULL, 0, NULL), 21, 0, 1, 0);
    mock_layout rows = la;
    rows.order = 1; /* CUBLASLT_ORDER_ROW */
    EXPECT("Lt row order", cublasLtMatmul(NULL, &d, &a, BAD, &rows, BAD, &lb, &b, BAD, &lc, BAD, &lc, NULL, NULL, 0, NULL), 21, 0, 1, 0);
    EXPECT("Lt D apart from C", cublasLtMatmul(NULL, &d, &a, BAD, &la, BAD, &lb, &b, (void *)0x7f0000000101ull, &lc, BAD, &lc, NULL, NULL, 0, NULL), 21, 0, 1, 0);
    d.v[2] = 1; /* device pointer mode */
    EXPECT("Lt device pointers", cublasLtMatmul(NULL, &d, &a, BAD, &la, BAD, &lb, &b, BAD, &lc, BAD, &lc, NULL, NULL, 0, NULL), 21, 0, 1, 0);
    d.v[2] = 0;
    /* A's shape not matching C's rows: not a GEMM the drop-in understands. */
    mock_layout wrong = la;
    wrong.rows = 20;
    EXPECT("Lt shapes that disagree", cublasLtMatmul(NULL, &d, &a, BAD, &wrong, BAD, &lb, &b, BAD, &lc, BAD, &lc, NULL, NULL, 0, NULL), 20, 0, 1, 0);
}

/* GEMMTUNE_LOG=info says once per shape who served it, cublasLtMatmul calls that go to
 * cuBLAS included (each under its own shape). */
static void dropin_log_names_each_shape(void) {
    if (!counts) TAP_SKIP("skipped: the drop-in is not preloaded (LD_PRELOAD)");
    char path[] = "/tmp/gt-dropin-log-XXXXXX";
    int fd = mkstemp(path);
    TAP_CHECK(fd >= 0, "a scratch file");
    if (fd < 0) return;
    fflush(stderr);
    const int saved = dup(2);
    dup2(fd, 2);
    setenv("GEMMTUNE_LOG", "info", 1);
    mock_desc d = {{0}, {0}};
    d.v[0] = 68, d.v[7] = 2; /* COMPUTE_32F, a ReLU epilogue: not a plain GEMM */
    mock_layout la = {14, 0, 1, 21, 5, 21}, lb = {14, 0, 1, 5, 9, 5}, lc = {0, 0, 1, 21, 9, 21};
    mock_layout la2 = {14, 0, 1, 33, 5, 33}, lc2 = {0, 0, 1, 33, 9, 33};
    const float a = 1.0f, b = 0.0f;
    for (int twice = 0; twice < 2; twice++) {
        cublasLtMatmul(NULL, &d, &a, BAD, &la, BAD, &lb, &b, BAD, &lc, BAD, &lc, NULL, NULL, 0, NULL);
        cublasLtMatmul(NULL, &d, &a, BAD, &la2, BAD, &lb, &b, BAD, &lc2, BAD, &lc2, NULL, NULL, 0, NULL);
    }
    unsetenv("GEMMTUNE_LOG");
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    char text[4096] = "";
    FILE *f = fdopen(fd, "r");
    size_t got = 0;
    if (f) {
        rewind(f);
        got = fread(text, 1, sizeof text - 1, f);
        fclose(f);
    }
    text[got] = 0;
    unlink(path);
    const char *one = "gemmtune-cublas: cublasLtMatmul 21x9x5 NN: cuBLAS\n";
    const char *two = "gemmtune-cublas: cublasLtMatmul 33x9x5 NN: cuBLAS\n";
    const char *p1 = strstr(text, one), *p2 = strstr(text, two);
    TAP_CHECK(p1 && p2, "each shape named: '%s'", text);
    TAP_CHECK(p1 && !strstr(p1 + 1, one) && p2 && !strstr(p2 + 1, two), "each shape said once: '%s'", text);
}

int main(void) {
    counts = (counts_fn)dlsym(RTLD_DEFAULT, "gemmtune_cublas_counts");
    TAP_RUN(dropin_takes_and_forwards);
    TAP_RUN(dropin_lt_plain_gemm_only);
    TAP_RUN(dropin_log_names_each_shape);
    return tap_done();
}
