/*
 * rtc.h: NVRTC compilation of one kernel program to a cubin.
 *
 * The one place that talks to NVRTC. A compile takes the source text, the program
 * options and the target architecture; it returns the cubin (malloc'd) or a status with
 * the NVRTC log kept in the result for whoever wants the detail. Thread-safe: each call
 * is its own NVRTC program, so the tuner compiles candidates on a thread pool.
 */
#ifndef GT_RTC_H
#define GT_RTC_H

#include <stddef.h>

#include "gemmtune.h"

typedef struct gt_rtc_result {
    void *image;    /* cubin, malloc'd; NULL on failure */
    size_t size;
    char *log;      /* NVRTC log, malloc'd, may be NULL */
    char error[256];/* one line on failure */
} gt_rtc_result;

/* Compiles `source` (program name `name`) with `options` for sm_<arch> (e.g. 90), or the
 * newest architecture this NVRTC supports below it. The source may include
 * "common.cuh" (kernel_src/common.cuh). */
gt_status gt_rtc_compile(const char *source, const char *name, const char *const *options,
                         int noptions, int arch, gt_rtc_result *out);
/* The same for the architecture-specific target sm_<arch>a (Hopper's wgmma, setmaxnreg),
 * which runs only on that exact architecture: GT_NOT_SUPPORTED when this NVRTC does not
 * list arch itself. */
gt_status gt_rtc_compile_specific(const char *source, const char *name,
                                  const char *const *options, int noptions, int arch,
                                  gt_rtc_result *out);
void gt_rtc_result_free(gt_rtc_result *r);

/* The NVRTC version, e.g. "13.0". */
const char *gt_rtc_version(void);

/* The architecture gt_rtc_compile will use for a device of architecture `arch`
 * (major * 10 + minor); 0 when NVRTC supports none at or below it. */
int gt_rtc_pick_arch(int arch);

/* Compiles a trivial program for arch once per process (later calls return at once), so
 * that NVRTC's first-use cost is paid by one thread, not by a pool of them at once. */
void gt_rtc_warm(int arch);

#endif
