/*
 * cu.h: the CUDA driver API, loaded at run time with dlopen("libcuda.so.1").
 *
 * Loading late is what lets the library, its tests and the command start on a machine
 * without a GPU and report "no CUDA driver" / "no CUDA device" as a status.
 * This module owns the driver handle and the device queries; it knows nothing about
 * GEMM. Everything else calls the driver through `gt_cu.<name>` after gt_cu_load()
 * returned GT_SUCCESS, and turns a failing CUresult into a status with gt_cu_fail().
 *
 * GEMMTUNE_LIBCUDA overrides the library's file name (fault-injection tests point it at
 * a file that does not exist).
 */
#ifndef GT_CU_H
#define GT_CU_H

#include <cuda.h>

#include "gemmtune.h"
#include "key.h"

typedef struct gt_cu_api {
    CUresult (*init)(unsigned int);
    CUresult (*driver_get_version)(int *);
    CUresult (*get_error_name)(CUresult, const char **);
    CUresult (*get_error_string)(CUresult, const char **);
    CUresult (*device_get_count)(int *);
    CUresult (*device_get)(CUdevice *, int);
    CUresult (*device_get_name)(char *, int, CUdevice);
    CUresult (*device_get_attribute)(int *, CUdevice_attribute, CUdevice);
    CUresult (*device_total_mem)(size_t *, CUdevice);
    CUresult (*primary_ctx_retain)(CUcontext *, CUdevice);
    CUresult (*ctx_get_current)(CUcontext *);
    CUresult (*ctx_set_current)(CUcontext);
    CUresult (*ctx_push)(CUcontext);
    CUresult (*ctx_pop)(CUcontext *);
    CUresult (*ctx_get_device)(CUdevice *);
    CUresult (*ctx_synchronize)(void);
    CUresult (*stream_get_ctx)(CUstream, CUcontext *);
    CUresult (*stream_create)(CUstream *, unsigned int);
    CUresult (*stream_destroy)(CUstream);
    CUresult (*stream_synchronize)(CUstream);
    CUresult (*mem_alloc)(CUdeviceptr *, size_t);
    CUresult (*mem_free)(CUdeviceptr);
    CUresult (*mem_get_info)(size_t *, size_t *);
    CUresult (*memcpy_htod)(CUdeviceptr, const void *, size_t);
    CUresult (*memcpy_dtoh)(void *, CUdeviceptr, size_t);
    CUresult (*memcpy_dtod_async)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
    CUresult (*memset_d8_async)(CUdeviceptr, unsigned char, size_t, CUstream);
    CUresult (*memcpy_2d_async)(const CUDA_MEMCPY2D *, CUstream);
    CUresult (*module_load_data)(CUmodule *, const void *);
    CUresult (*module_unload)(CUmodule);
    CUresult (*module_get_function)(CUfunction *, CUmodule, const char *);
    CUresult (*func_get_attribute)(int *, CUfunction_attribute, CUfunction);
    CUresult (*func_set_attribute)(CUfunction, CUfunction_attribute, int);
    CUresult (*launch_kernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                              unsigned, unsigned, CUstream, void **, void **);
    CUresult (*event_create)(CUevent *, unsigned int);
    CUresult (*event_destroy)(CUevent);
    CUresult (*event_record)(CUevent, CUstream);
    CUresult (*event_synchronize)(CUevent);
    CUresult (*event_elapsed)(float *, CUevent, CUevent);
    CUresult (*event_query)(CUevent);
    CUresult (*memcpy_htod_async)(CUdeviceptr, const void *, size_t, CUstream);
    CUresult (*memcpy_dtoh_async)(void *, CUdeviceptr, size_t, CUstream);
    /* Stream capture (CUDA 10.1 and later): whether a stream is capturing, and the calling
     * thread's interaction mode with captures (the library makes its own non-stream calls
     * in relaxed mode, so that they never invalidate an application's capture). */
    CUresult (*stream_is_capturing)(CUstream, CUstreamCaptureStatus *);
    CUresult (*thread_exchange_capture_mode)(CUstreamCaptureMode *);
    CUresult (*stream_begin_capture)(CUstream, CUstreamCaptureMode);
    CUresult (*stream_end_capture)(CUstream, CUgraph *);
    CUresult (*graph_launch)(CUgraphExec, CUstream);
    CUresult (*graph_exec_destroy)(CUgraphExec);
    CUresult (*graph_destroy)(CUgraph);
    /* Optional (CUDA 11.4 and later): graphs instantiated with flags; stream-ordered
     * allocation (11.2), a workspace that a captured graph owns. */
    CUresult (*graph_instantiate)(CUgraphExec *, CUgraph, unsigned long long);
    CUresult (*mem_alloc_async)(CUdeviceptr *, size_t, CUstream);
    CUresult (*mem_free_async)(CUdeviceptr, CUstream);
    /* Optional (CUDA 12.0 and later): a stream's unique id, which tells a new stream from a
     * destroyed one whose handle it reuses. */
    CUresult (*stream_get_id)(CUstream, unsigned long long *);
    /* Optional (drivers of CUDA 12.0 and later; NULL before): TMA descriptors for the
     * WGMMA family, which fails to launch without it. */
    CUresult (*tensor_map_encode_tiled)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,
                                        const cuuint64_t *, const cuuint64_t *,
                                        const cuuint32_t *, const cuuint32_t *,
                                        CUtensorMapInterleave, CUtensorMapSwizzle,
                                        CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
    /* Optional (CUDA 12.0 and later): launches with thread-block clusters, and how many
     * clusters of a kernel fit on the device at once (WGMMA with TMA multicast). */
    CUresult (*launch_kernel_ex)(const CUlaunchConfig *, CUfunction, void **, void **);
    CUresult (*occupancy_max_active_clusters)(int *, CUfunction, const CUlaunchConfig *);
} gt_cu_api;

extern gt_cu_api gt_cu;

/* What the library needs to know of a device. */
typedef struct gt_cu_device {
    CUdevice dev;
    char name[GT_DEVICE_NAME_MAX];
    int cc_major, cc_minor, sm_count;
    int max_threads_per_block;
    int smem_per_block;         /* without opt-in */
    int smem_per_block_optin;
    int regs_per_block;
    int regs_per_sm;
    int l2_bytes;
    int mem_clock_khz;          /* peak memory clock; 0 where the driver does not say */
    int mem_bus_bits;           /* global memory bus width; 0 where the driver does not say */
    size_t total_mem;
} gt_cu_device;

/* Loads the driver and calls cuInit once per process (thread-safe). GT_NO_DRIVER when
 * the library cannot be loaded or is too old, GT_NO_DEVICE when it has no device. */
gt_status gt_cu_load(void);

/* Records a message "what: NAME (text)" and maps r to a status (out-of-memory to
 * GT_OUT_OF_MEMORY, launch faults to GT_LAUNCH_FAILED, the rest GT_CUDA_ERROR). */
gt_status gt_cu_fail(CUresult r, const char *what);

/* The driver's version as text, e.g. "13000"; "none" when not loaded. */
const char *gt_cu_driver_version(void);

/* Fills d for a device. */
gt_status gt_cu_device_query(CUdevice dev, gt_cu_device *d);

/*
 * Makes the context of `stream` (NULL: the current context, else device 0's primary
 * context) current for the calling thread, as the runtime API would. *pushed tells
 * gt_cu_leave whether to pop. *ctx is the context the work belongs to.
 */
gt_status gt_cu_enter(CUstream stream, CUcontext *ctx, int *pushed);
void gt_cu_leave(int pushed);

/* *capturing = 1 when `stream` (of the current context) is under CUDA Graph capture,
 * active or already invalidated by someone else: then nothing but stream work may go on
 * it. The legacy default stream cannot be used while a blocking stream of its context is
 * captured: that is an error (nothing has been done). */
gt_status gt_cu_capturing(CUstream stream, int *capturing);

/* The calling thread's capture interaction mode set to relaxed (the library's own
 * allocations, loads and synchronizations of its own streams then never invalidate an
 * application's capture, whatever its mode or thread); gt_cu_relaxed_end restores the
 * mode gt_cu_relaxed_begin returned. */
CUstreamCaptureMode gt_cu_relaxed_begin(void);
void gt_cu_relaxed_end(CUstreamCaptureMode previous);

#endif
