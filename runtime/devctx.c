/*
 * devctx.c: per-context state (devctx.h). Owns the table of contexts, their helper
 * modules and tuning streams. A context is looked up on every call: the table is small
 * and a mutex-guarded scan is far cheaper than the launch that follows.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "devctx.h"

#include <assert.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_sources.h"
#include "log.h"
#include "load.h"
#include "rtc.h"

#define MAX_CONTEXTS 64

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static gt_devctx *table[MAX_CONTEXTS];
static int ntable;

gt_status gt_devctx_get(CUcontext ctx, gt_devctx **out) {
    pthread_mutex_lock(&lock);
    for (int i = 0; i < ntable; i++)
        if (table[i]->ctx == ctx) {
            *out = table[i];
            pthread_mutex_unlock(&lock);
            return GT_SUCCESS;
        }
    gt_status s = GT_SUCCESS;
    gt_devctx *dc = NULL;
    CUdevice dev;
    CUresult r = gt_cu.ctx_get_device(&dev);
    if (r != CUDA_SUCCESS) {
        s = gt_cu_fail(r, "cuCtxGetDevice");
    } else if (ntable == MAX_CONTEXTS) {
        s = gt_fail(GT_NOT_SUPPORTED, "more than %d CUDA contexts", MAX_CONTEXTS);
    } else if (!(dc = calloc(1, sizeof *dc))) {
        s = gt_fail(GT_OUT_OF_MEMORY, "context state");
    } else if ((s = gt_cu_device_query(dev, &dc->dev)) == GT_SUCCESS) {
        dc->ctx = ctx;
        pthread_mutex_init(&dc->resolve_lock, NULL);
        pthread_mutex_init(&dc->tune_lock, NULL);
        dc->arch = dc->dev.cc_major * 10 + dc->dev.cc_minor;
        table[ntable++] = dc;
        *out = dc;
        dc = NULL;
    }
    free(dc);
    pthread_mutex_unlock(&lock);
    return s;
}

/* Loads one helper program, the instantiations chosen by -D<guard> (aux.cu), through the
 * binary cache (load.h: a process's first tuning of a type then skips about 0.1 s of
 * NVRTC per program); then looks up each of its kernels `gt_<kind>_<type>` into fns[i].
 * Under `lock`. */
static gt_status load_aux(gt_devctx *dc, const char *guard, const char *type, int nkinds,
                          const char *const *kinds, CUfunction *const *fns, CUmodule *mod_out) {
    gt_program p;
    memset(&p, 0, sizeof p);
    snprintf(p.text, sizeof p.text, "helpers|%s", guard);
    snprintf(p.name, sizeof p.name, "aux.cu");
    p.source = gt_src_aux;
    snprintf(p.storage[0], sizeof p.storage[0], "-D%s", guard);
    p.options[0] = p.storage[0];
    p.noptions = 1;
    CUmodule mod = NULL;
    gt_status s = gt_load_module(&p, dc->arch, 1, NULL, NULL, &mod, NULL);
    CUfunction got[8];
    for (int i = 0; i < nkinds && s == GT_SUCCESS; i++) {
        char name[48];
        snprintf(name, sizeof name, "gt_%s_%s", kinds[i], type);
        CUresult r = gt_cu.module_get_function(&got[i], mod, name);
        if (r != CUDA_SUCCESS) s = gt_cu_fail(r, name);
    }
    if (s != GT_SUCCESS) {
        if (mod) gt_cu.module_unload(mod);
        return s;
    }
    for (int i = 0; i < nkinds; i++) *fns[i] = got[i];
    *mod_out = mod;
    return GT_SUCCESS;
}

/* Storage type stype's helpers, on first need. Under `lock`. */
static gt_status aux_stype(gt_devctx *dc, int stype) {
    if (dc->aux_st[stype]) return GT_SUCCESS;
    char guard[32];
    snprintf(guard, sizeof guard, "GT_AUX_ST_%s", gt_stype_name(stype));
    static const char *const kinds[] = {"scale", "fill", "cmp", "pad", "round", "copy"};
    CUfunction *const fns[] = {&dc->scale[stype], &dc->fill[stype], &dc->cmp[stype],
                               &dc->pad[stype],   &dc->round[stype], &dc->copy[stype]};
    return load_aux(dc, guard, gt_stype_name(stype), 6, kinds, fns, &dc->aux_st[stype]);
}

/* aux_stype for the launchers, which do not hold `lock`. */
static gt_status aux_stype_locked(gt_devctx *dc, int stype) {
    pthread_mutex_lock(&lock);
    gt_status s = aux_stype(dc, stype);
    pthread_mutex_unlock(&lock);
    return s;
}

gt_status gt_devctx_aux(gt_devctx *dc, int dtype) {
    assert(dtype >= 0 && dtype < GT_NDTYPES);
    pthread_mutex_lock(&lock);
    gt_status s = aux_stype(dc, gt_dtype_in(dtype));
    if (s == GT_SUCCESS) s = aux_stype(dc, gt_dtype_out(dtype));
    if (s == GT_SUCCESS && !dc->aux_ref[dtype]) {
        char guard[48];
        snprintf(guard, sizeof guard, "GT_AUX_REF_%s", gt_dtype_name(dtype));
        static const char *const kinds[] = {"ref"};
        CUfunction *const fns[] = {&dc->ref[dtype]};
        s = load_aux(dc, guard, gt_dtype_name(dtype), 1, kinds, fns, &dc->aux_ref[dtype]);
    }
    pthread_mutex_unlock(&lock);
    return s;
}

int gt_devctx_aux_ready(gt_devctx *dc, int dtype) {
    assert(dtype >= 0 && dtype < GT_NDTYPES);
    pthread_mutex_lock(&lock);
    int ready = dc->aux_st[gt_dtype_in(dtype)] && dc->aux_st[gt_dtype_out(dtype)] && dc->aux_ref[dtype];
    pthread_mutex_unlock(&lock);
    return ready;
}

gt_status gt_devctx_tune_stream(gt_devctx *dc, CUstream *out) {
    pthread_mutex_lock(&lock);
    gt_status s = GT_SUCCESS;
    if (!dc->tune_stream) {
        CUresult r = gt_cu.stream_create(&dc->tune_stream, CU_STREAM_NON_BLOCKING);
        if (r != CUDA_SUCCESS) s = gt_cu_fail(r, "cuStreamCreate (tuning stream)");
    }
    *out = dc->tune_stream;
    pthread_mutex_unlock(&lock);
    return s;
}

gt_status gt_devctx_for_device(int ordinal, gt_devctx **out) {
    gt_status s = gt_cu_load();
    if (s != GT_SUCCESS) return s;
    int count = 0;
    CUresult r = gt_cu.device_get_count(&count);
    if (r != CUDA_SUCCESS) return gt_cu_fail(r, "cuDeviceGetCount");
    if (ordinal < 0 || ordinal >= count)
        return gt_fail(GT_INVALID_VALUE, "device %d does not exist (this node has %d)", ordinal,
                       count);
    CUdevice dev;
    CUcontext ctx;
    if ((r = gt_cu.device_get(&dev, ordinal)) != CUDA_SUCCESS) return gt_cu_fail(r, "cuDeviceGet");
    if ((r = gt_cu.primary_ctx_retain(&ctx, dev)) != CUDA_SUCCESS)
        return gt_cu_fail(r, "cuDevicePrimaryCtxRetain");
    if ((r = gt_cu.ctx_set_current(ctx)) != CUDA_SUCCESS) return gt_cu_fail(r, "cuCtxSetCurrent");
    return gt_devctx_get(ctx, out);
}

gt_status gt_devctx_supports(const gt_devctx *dc, int dtype) {
    if (!gt_dtype_tensor_only(dtype) || dc->dev.cc_major >= 8) return GT_SUCCESS;
    return gt_fail(GT_NOT_SUPPORTED,
                   "data type %s runs on tensor cores only: it needs compute capability 8.0 or "
                   "later, and %s is %d.%d",
                   gt_dtype_name(dtype), dc->dev.name, dc->dev.cc_major, dc->dev.cc_minor);
}

static unsigned blocks_for(long long n, unsigned threads) {
    long long b = (n + threads - 1) / threads;
    return (unsigned)(b < 1 ? 1 : b > 65535 ? 65535 : b);
}

/* The helper kernels take their scalars as double for every type. */
gt_status gt_aux_scale(gt_devctx *dc, CUstream s, int stype, CUdeviceptr C, long long ldc,
                       long long m, long long n, double beta, int beta0) {
    assert(stype >= 0 && stype < GT_NSTYPES);
    gt_status st = aux_stype_locked(dc, stype);
    if (st != GT_SUCCESS) return st;
    void *args[] = {&C, &ldc, &m, &n, &beta, &beta0};
    unsigned gy = (unsigned)(n < 65535 ? n : 65535);
    CUresult r = gt_cu.launch_kernel(dc->scale[stype],
                                     blocks_for(m, 256) > 64 ? 64 : blocks_for(m, 256), gy, 1,
                                     256, 1, 1, 0, s, args, NULL);
    return r == CUDA_SUCCESS ? GT_SUCCESS : gt_cu_fail(r, "cuLaunchKernel (scale)");
}

gt_status gt_aux_fill(gt_devctx *dc, CUstream s, int stype, CUdeviceptr p, long long count,
                      unsigned long long seed, int constant, double value) {
    assert(stype >= 0 && stype < GT_NSTYPES);
    gt_status st = aux_stype_locked(dc, stype);
    if (st != GT_SUCCESS) return st;
    void *args[] = {&p, &count, &seed, &constant, &value};
    unsigned g = blocks_for(count, 256) > 4096 ? 4096 : blocks_for(count, 256);
    CUresult r = gt_cu.launch_kernel(dc->fill[stype], g, 1, 1, 256, 1, 1, 0, s, args, NULL);
    return r == CUDA_SUCCESS ? GT_SUCCESS : gt_cu_fail(r, "cuLaunchKernel (fill)");
}

gt_status gt_aux_round(gt_devctx *dc, CUstream s, int stype, CUdeviceptr p, long long count,
                       int bits) {
    assert(stype >= 0 && stype < GT_NSTYPES);
    gt_status st = aux_stype_locked(dc, stype);
    if (st != GT_SUCCESS) return st;
    void *args[] = {&p, &count, &bits};
    unsigned g = blocks_for(count, 256) > 4096 ? 4096 : blocks_for(count, 256);
    CUresult r = gt_cu.launch_kernel(dc->round[stype], g, 1, 1, 256, 1, 1, 0, s, args, NULL);
    return r == CUDA_SUCCESS ? GT_SUCCESS : gt_cu_fail(r, "cuLaunchKernel (round)");
}

gt_status gt_aux_copy(gt_devctx *dc, CUstream s, int stype, CUdeviceptr dst, CUdeviceptr src,
                      long long ld, long long r0, long long r1, long long c0, long long c1) {
    assert(stype >= 0 && stype < GT_NSTYPES);
    if (r1 <= r0 || c1 <= c0) return GT_SUCCESS;
    gt_status st = aux_stype_locked(dc, stype);
    if (st != GT_SUCCESS) return st;
    void *args[] = {&dst, &src, &ld, &r0, &r1, &c0, &c1};
    long long count = (r1 - r0) * (c1 - c0);
    unsigned g = blocks_for(count, 256) > 4096 ? 4096 : blocks_for(count, 256);
    CUresult r = gt_cu.launch_kernel(dc->copy[stype], g, 1, 1, 256, 1, 1, 0, s, args, NULL);
    return r == CUDA_SUCCESS ? GT_SUCCESS : gt_cu_fail(r, "cuLaunchKernel (copy)");
}

void gt_devctx_release_all(void) {
    pthread_mutex_lock(&lock);
    for (int i = 0; i < ntable; i++) {
        CUcontext cur = NULL;
        gt_cu.ctx_get_current(&cur);
        int pushed = cur != table[i]->ctx && gt_cu.ctx_push(table[i]->ctx) == CUDA_SUCCESS;
        for (int t = 0; t < GT_NSTYPES; t++)
            if (table[i]->aux_st[t]) gt_cu.module_unload(table[i]->aux_st[t]);
        for (int t = 0; t < GT_NDTYPES; t++)
            if (table[i]->aux_ref[t]) gt_cu.module_unload(table[i]->aux_ref[t]);
        if (table[i]->tune_stream) gt_cu.stream_destroy(table[i]->tune_stream);
        if (pushed) gt_cu.ctx_pop(&cur);
        pthread_mutex_destroy(&table[i]->resolve_lock);
        pthread_mutex_destroy(&table[i]->tune_lock);
        free(table[i]);
    }
    ntable = 0;
    pthread_mutex_unlock(&lock);
}
