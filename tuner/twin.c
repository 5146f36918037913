/*
 * twin.c: an exact-shape kernel against its generic twin (twin.h).
 */
#include "twin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu.h"
#include "env.h"
#include "log.h"
#include "tune.h"

gt_status gt_twin_check(gt_devctx *dc, const gt_key *key, const gt_kern *generic,
                        const gt_kern *exact, size_t mem_limit, int *outcome, char *why,
                        size_t why_size) {
    *outcome = GT_TWIN_SKIPPED;
    why[0] = 0;
    const char *faults = gt_env(GT_ENV_TEST_FAULT);
    const int fault_twin = faults && strstr(faults, "twin") != NULL;
    CUstream s;
    gt_status st = gt_devctx_tune_stream(dc, &s);
    if (st != GT_SUCCESS) return st;
    /* The tuner's scratch layout (tune.h): C's padding rows then count in the check. */
    gt_scratch sc;
    gt_tune_scratch(key, &sc);
    const long long es = gt_dtype_in_size(key->dtype), esc = gt_dtype_out_size(key->dtype);
    const size_t abytes = sc.abytes, bbytes = sc.bbytes, cbytes = sc.cbytes;
    const size_t ws = generic->ws_bytes > exact->ws_bytes ? generic->ws_bytes : exact->ws_bytes;
    const size_t need = abytes + bbytes + 2 * cbytes + ws;
    int fits;
    st = gt_tune_mem_fits(need, mem_limit, "the check", &fits, why, why_size);
    if (st != GT_SUCCESS || !fits) return st;
    CUdeviceptr a = 0, b = 0, c[2] = {0, 0}, w = 0;
    void *host[2] = {malloc(cbytes), malloc(cbytes)};
    if (!host[0] || !host[1]) {
        free(host[0]), free(host[1]);
        snprintf(why, why_size, "no host memory for two outputs of %.1f MiB", cbytes / 1048576.0);
        return GT_SUCCESS;
    }
    CUresult r = gt_cu.mem_alloc(&a, abytes);
    if (r == CUDA_SUCCESS) r = gt_cu.mem_alloc(&b, bbytes);
    if (r == CUDA_SUCCESS) r = gt_cu.mem_alloc(&c[0], cbytes);
    if (r == CUDA_SUCCESS) r = gt_cu.mem_alloc(&c[1], cbytes);
    if (r == CUDA_SUCCESS && ws) r = gt_cu.mem_alloc(&w, ws);
    if (r == CUDA_SUCCESS && ws) r = gt_cu.memset_d8_async(w, 0, ws, s);
    if (r == CUDA_ERROR_OUT_OF_MEMORY) {
        snprintf(why, why_size, "could not allocate %.1f MiB", need / 1048576.0);
    } else if (r != CUDA_SUCCESS) {
        st = gt_cu_fail(r, "device memory for the twin check");
    } else {
        const int in = gt_dtype_in(key->dtype), out = gt_dtype_out(key->dtype);
        st = gt_aux_fill(dc, s, in, a, (long long)(abytes / (size_t)es), 21, 0, 0);
        if (st == GT_SUCCESS) st = gt_aux_fill(dc, s, in, b, (long long)(bbytes / (size_t)es), 22, 0, 0);
        gt_gemm g = {.dtype = key->dtype, .opa = key->opa, .opb = key->opb, .m = key->m,
                     .n = key->n, .k = key->k, .alpha = 1.0, .beta = key->beta0 ? 0.0 : 0.75,
                     .A = GT_PTR(a), .B = GT_PTR(b), .lda = sc.lda, .ldb = sc.ldb, .ldc = sc.ldc,
                     .stream = s};
        /* Output 0: the generic kernel; output 1: the exact one, then the exact one again
         * over output 0 (the same C0 first). */
        const gt_kern *run[3] = {generic, exact, exact};
        const int into[3] = {0, 1, 0};
        int differ = 0;
        for (int i = 0; i < 3 && st == GT_SUCCESS && !differ; i++) {
            g.C = GT_PTR(c[into[i]]);
            st = gt_aux_fill(dc, s, out, c[into[i]], (long long)(cbytes / (size_t)esc), 23, 0, 0);
            if (st == GT_SUCCESS) st = gt_kern_launch(run[i], &g, w);
            if (st == GT_SUCCESS && i > 0) {
                r = gt_cu.memcpy_dtoh_async(host[into[i]], c[into[i]], cbytes, s);
                if (r == CUDA_SUCCESS && i == 1) r = gt_cu.memcpy_dtoh_async(host[0], c[0], cbytes, s);
                if (r == CUDA_SUCCESS) r = gt_cu.stream_synchronize(s);
                /* Test aid (GEMMTUNE_TEST_FAULT=twin): the exact kernel's output off by
                 * one bit, as a defective twin's would be. */
                if (r == CUDA_SUCCESS && i == 1 && fault_twin) ((unsigned char *)host[1])[0] ^= 1;
                if (r != CUDA_SUCCESS) st = gt_cu_fail(r, "the twin check's outputs");
                else differ = memcmp(host[0], host[1], cbytes) != 0;
            }
        }
        if (st == GT_SUCCESS) {
            *outcome = differ ? GT_TWIN_DIFFER : GT_TWIN_SAME;
            if (differ) snprintf(why, why_size, "the exact kernel's bits differ from the generic one's");
        }
    }
    /* Nothing is freed while a launch may still use it. */
    gt_cu.stream_synchronize(s);
    if (a) gt_cu.mem_free(a);
    if (b) gt_cu.mem_free(b);
    for (int i = 0; i < 2; i++)
        if (c[i]) gt_cu.mem_free(c[i]);
    if (w) gt_cu.mem_free(w);
    free(host[0]), free(host[1]);
    return st;
}
