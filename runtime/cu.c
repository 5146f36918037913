/*
 * cu.c: the CUDA driver loaded with dlopen (cu.h). Owns the dlopen handle, the function
 * table and the outcome of cuInit; never unloads the driver (other code in the process
 * may still use it).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cu.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"
#include "log.h"

gt_cu_api gt_cu;

/* ===== the symbol table ===== */

/* Versioned names first: cuda.h maps the plain API names to these, and the driver keeps
 * the old unversioned ones only for old binaries. */
static const struct {
    size_t offset;
    const char *names[2];
} symbols[] = {
#define SYM(field, a, b) {offsetof(gt_cu_api, field), {a, b}}
    SYM(init, "cuInit", NULL),
    SYM(driver_get_version, "cuDriverGetVersion", NULL),
    SYM(get_error_name, "cuGetErrorName", NULL),
    SYM(get_error_string, "cuGetErrorString", NULL),
    SYM(device_get_count, "cuDeviceGetCount", NULL),
    SYM(device_get, "cuDeviceGet", NULL),
    SYM(device_get_name, "cuDeviceGetName", NULL),
    SYM(device_get_attribute, "cuDeviceGetAttribute", NULL),
    SYM(device_total_mem, "cuDeviceTotalMem_v2", "cuDeviceTotalMem"),
    SYM(primary_ctx_retain, "cuDevicePrimaryCtxRetain", NULL),
    SYM(ctx_get_current, "cuCtxGetCurrent", NULL),
    SYM(ctx_set_current, "cuCtxSetCurrent", NULL),
    SYM(ctx_push, "cuCtxPushCurrent_v2", "cuCtxPushCurrent"),
    SYM(ctx_pop, "cuCtxPopCurrent_v2", "cuCtxPopCurrent"),
    SYM(ctx_get_device, "cuCtxGetDevice", NULL),
    SYM(ctx_synchronize, "cuCtxSynchronize", NULL),
    SYM(stream_get_ctx, "cuStreamGetCtx", NULL),
    SYM(stream_create, "cuStreamCreate", NULL),
    SYM(stream_destroy, "cuStreamDestroy_v2", "cuStreamDestroy"),
    SYM(stream_synchronize, "cuStreamSynchronize", NULL),
    SYM(mem_alloc, "cuMemAlloc_v2", "cuMemAlloc"),
    SYM(mem_free, "cuMemFree_v2", "cuMemFree"),
    SYM(mem_get_info, "cuMemGetInfo_v2", "cuMemGetInfo"),
    SYM(memcpy_htod, "cuMemcpyHtoD_v2", "cuMemcpyHtoD"),
    SYM(memcpy_dtoh, "cuMemcpyDtoH_v2", "cuMemcpyDtoH"),
    SYM(memcpy_dtod_async, "cuMemcpyDtoDAsync_v2", "cuMemcpyDtoDAsync"),
    SYM(memset_d8_async, "cuMemsetD8Async", NULL),
    SYM(memcpy_2d_async, "cuMemcpy2DAsync_v2", "cuMemcpy2DAsync"),
    SYM(module_load_data, "cuModuleLoadData", NULL),
    SYM(module_unload, "cuModuleUnload", NULL),
    SYM(module_get_function, "cuModuleGetFunction", NULL),
    SYM(func_get_attribute, "cuFuncGetAttribute", NULL),
    SYM(func_set_attribute, "cuFuncSetAttribute", NULL),
    SYM(launch_kernel, "cuLaunchKernel", NULL),
    SYM(event_create, "cuEventCreate", NULL),
    SYM(event_destroy, "cuEventDestroy_v2", "cuEventDestroy"),
    SYM(event_record, "cuEventRecord", NULL),
    SYM(event_synchronize, "cuEventSynchronize", NULL),
    SYM(event_elapsed, "cuEventElapsedTime_v2", "cuEventElapsedTime"),
    SYM(event_query, "cuEventQuery", NULL),
    SYM(memcpy_htod_async, "cuMemcpyHtoDAsync_v2", "cuMemcpyHtoDAsync"),
    SYM(memcpy_dtoh_async, "cuMemcpyDtoHAsync_v2", "cuMemcpyDtoHAsync"),
    SYM(stream_is_capturing, "cuStreamIsCapturing", NULL),
    SYM(thread_exchange_capture_mode, "cuThreadExchangeStreamCaptureMode", NULL),
    SYM(stream_begin_capture, "cuStreamBeginCapture_v2", "cuStreamBeginCapture"),
    SYM(stream_end_capture, "cuStreamEndCapture", NULL),
    SYM(graph_launch, "cuGraphLaunch", NULL),
    SYM(graph_exec_destroy, "cuGraphExecDestroy", NULL),
    SYM(graph_destroy, "cuGraphDestroy", NULL),
#undef SYM
};

/* ===== loading ===== */

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static gt_status load_status = GT_INTERNAL;
static char load_message[512];
static char driver_version[32] = "none";

static void load(void) {
    const char *file = gt_env(GT_ENV_LIBCUDA);
    if (!file) file = "libcuda.so.1";
    void *h = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        load_status = GT_NO_DRIVER;
        snprintf(load_message, sizeof load_message, "cannot load %s (%s)",
                 file, dlerror());
        return;
    }
    for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; i++) {
        void *fn = NULL;
        for (int j = 0; j < 2 && !fn && symbols[i].names[j]; j++)
            fn = dlsym(h, symbols[i].names[j]);
        if (!fn) {
            load_status = GT_NO_DRIVER;
            snprintf(load_message, sizeof load_message,
                     "%s lacks %s (driver too old?)", file, symbols[i].names[0]);
            return;
        }
        memcpy((char *)&gt_cu + symbols[i].offset, &fn, sizeof fn);
    }
    void *tm = dlsym(h, "cuTensorMapEncodeTiled");
    memcpy(&gt_cu.tensor_map_encode_tiled, &tm, sizeof tm);
    void *lx = dlsym(h, "cuLaunchKernelEx"), *oc = dlsym(h, "cuOccupancyMaxActiveClusters");
    memcpy(&gt_cu.launch_kernel_ex, &lx, sizeof lx);
    memcpy(&gt_cu.occupancy_max_active_clusters, &oc, sizeof oc);
    void *gi = dlsym(h, "cuGraphInstantiateWithFlags"), *ma = dlsym(h, "cuMemAllocAsync"),
         *mf = dlsym(h, "cuMemFreeAsync"), *si = dlsym(h, "cuStreamGetId");
    memcpy(&gt_cu.graph_instantiate, &gi, sizeof gi);
    memcpy(&gt_cu.mem_alloc_async, &ma, sizeof ma);
    memcpy(&gt_cu.mem_free_async, &mf, sizeof mf);
    memcpy(&gt_cu.stream_get_id, &si, sizeof si);
    CUresult r = gt_cu.init(0);
    if (r != CUDA_SUCCESS) {
        const char *name = "?";
        gt_cu.get_error_name(r, &name);
        load_status = r == CUDA_ERROR_NO_DEVICE ? GT_NO_DEVICE : GT_NO_DRIVER;
        snprintf(load_message, sizeof load_message, "cuInit failed with %s", name);
        return;
    }
    int version = 0, count = 0;
    gt_cu.driver_get_version(&version);
    snprintf(driver_version, sizeof driver_version, "%d", version);
    if (gt_cu.device_get_count(&count) != CUDA_SUCCESS || count == 0) {
        load_status = GT_NO_DEVICE;
        snprintf(load_message, sizeof load_message, "the driver sees no device");
        return;
    }
    load_status = GT_SUCCESS;
}

gt_status gt_cu_load(void) {
    pthread_once(&load_once, load);
    if (load_status != GT_SUCCESS) return gt_fail(load_status, "%s", load_message);
    return GT_SUCCESS;
}

const char *gt_cu_driver_version(void) { return driver_version; }

gt_status gt_cu_fail(CUresult r, const char *what) {
    const char *name = "CUDA_ERROR_UNKNOWN", *text = "unknown error";
    if (gt_cu.get_error_name) gt_cu.get_error_name(r, &name);
    if (gt_cu.get_error_string) gt_cu.get_error_string(r, &text);
    gt_status s = GT_CUDA_ERROR;
    if (r == CUDA_ERROR_OUT_OF_MEMORY) s = GT_OUT_OF_MEMORY;
    if (r == CUDA_ERROR_LAUNCH_FAILED || r == CUDA_ERROR_ILLEGAL_ADDRESS ||
        r == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES || r == CUDA_ERROR_MISALIGNED_ADDRESS ||
        r == CUDA_ERROR_INVALID_PC || r == CUDA_ERROR_ILLEGAL_INSTRUCTION)
        s = GT_LAUNCH_FAILED;
    return gt_fail(s, "%s: %s (%s)", what, name, text);
}

/* ===== devices and contexts ===== */

gt_status gt_cu_device_query(CUdevice dev, gt_cu_device *d) {
    memset(d, 0, sizeof *d);
    d->dev = dev;
    CUresult r = gt_cu.device_get_name(d->name, sizeof d->name, dev);
    if (r != CUDA_SUCCESS) return gt_cu_fail(r, "cuDeviceGetName");
    static const struct {
        CUdevice_attribute attr;
        size_t offset;
    } attrs[] = {
        {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, offsetof(gt_cu_device, cc_major)},
        {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, offsetof(gt_cu_device, cc_minor)},
        {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, offsetof(gt_cu_device, sm_count)},
        {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, offsetof(gt_cu_device, max_threads_per_block)},
        {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, offsetof(gt_cu_device, smem_per_block)},
        {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
         offsetof(gt_cu_device, smem_per_block_optin)},
        {CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, offsetof(gt_cu_device, regs_per_block)},
        {CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, offsetof(gt_cu_device, regs_per_sm)},
        {CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, offsetof(gt_cu_device, l2_bytes)},
    };
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
        r = gt_cu.device_get_attribute((int *)((char *)d + attrs[i].offset), attrs[i].attr, dev);
        if (r != CUDA_SUCCESS) return gt_cu_fail(r, "cuDeviceGetAttribute");
    }
    /* The memory's peak, for the cost model's DRAM rate: optional (0 where the driver
     * does not report it; the model then keeps the H100's rate). */
    if (gt_cu.device_get_attribute(&d->mem_clock_khz, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE,
                                   dev) != CUDA_SUCCESS)
        d->mem_clock_khz = 0;
    if (gt_cu.device_get_attribute(&d->mem_bus_bits, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH,
                                   dev) != CUDA_SUCCESS)
        d->mem_bus_bits = 0;
    r = gt_cu.device_total_mem(&d->total_mem, dev);
    if (r != CUDA_SUCCESS) return gt_cu_fail(r, "cuDeviceTotalMem");
    return GT_SUCCESS;
}

gt_status gt_cu_enter(CUstream stream, CUcontext *ctx, int *pushed) {
    *pushed = 0;
    CUcontext cur = NULL, want = NULL;
    CUresult r = gt_cu.ctx_get_current(&cur);
    if (r != CUDA_SUCCESS) return gt_cu_fail(r, "cuCtxGetCurrent");
    /* The legacy and per-thread default streams (handles 0x1, 0x2) belong to whichever
     * context is current. */
    if (stream && stream != CU_STREAM_LEGACY && stream != CU_STREAM_PER_THREAD) {
        r = gt_cu.stream_get_ctx(stream, &want);
        if (r != CUDA_SUCCESS) return gt_cu_fail(r, "cuStreamGetCtx (is the stream valid?)");
    }
    if (!want) want = cur;
    if (!want) {
        /* No context yet: do what the runtime API does, use device 0's primary context. */
        CUdevice dev;
        r = gt_cu.device_get(&dev, 0);
        if (r != CUDA_SUCCESS) return gt_cu_fail(r, "cuDeviceGet(0)");
        r = gt_cu.primary_ctx_retain(&want, dev);
        if (r != CUDA_SUCCESS) return gt_cu_fail(r, "cuDevicePrimaryCtxRetain");
        r = gt_cu.ctx_set_current(want);
        if (r != CUDA_SUCCESS) return gt_cu_fail(r, "cuCtxSetCurrent");
        cur = want;
    }
    if (want != cur) {
        r = gt_cu.ctx_push(want);
        if (r != CUDA_SUCCESS) return gt_cu_fail(r, "cuCtxPushCurrent");
        *pushed = 1;
    }
    *ctx = want;
    return GT_SUCCESS;
}

void gt_cu_leave(int pushed) {
    if (pushed) {
        CUcontext dummy;
        gt_cu.ctx_pop(&dummy);
    }
}

gt_status gt_cu_capturing(CUstream stream, int *capturing) {
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    CUresult r = gt_cu.stream_is_capturing(stream, &st);
    *capturing = 0;
    if (r == CUDA_ERROR_STREAM_CAPTURE_IMPLICIT)
        return gt_cu_fail(r, "the legacy default stream while another stream of its context "
                             "is captured (use the capturing stream)");
    if (r != CUDA_SUCCESS) return gt_cu_fail(r, "cuStreamIsCapturing");
    *capturing = st != CU_STREAM_CAPTURE_STATUS_NONE;
    return GT_SUCCESS;
}

CUstreamCaptureMode gt_cu_relaxed_begin(void) {
    CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
    if (gt_cu.thread_exchange_capture_mode(&mode) != CUDA_SUCCESS) return CU_STREAM_CAPTURE_MODE_RELAXED;
    return mode;
}

void gt_cu_relaxed_end(CUstreamCaptureMode previous) {
    if (previous != CU_STREAM_CAPTURE_MODE_RELAXED) gt_cu.thread_exchange_capture_mode(&previous);
}
