/*
 * log.h: status messages, the per-thread last error, logging and counters.
 *
 * Every failing path of the library ends in gt_fail(), which records a message for
 * gt_last_error() in the calling thread and returns the status, so that an error is one
 * line: `return gt_fail(GT_CUDA_ERROR, "cuMemAlloc(%zu bytes): %s", n, why);`.
 * Nothing here prints unless the log level (GEMMTUNE_LOG or gt_set_log_level) or a
 * callback asks for it.
 */
#ifndef GT_LOG_H
#define GT_LOG_H

#include <stdarg.h>

#include "gemmtune.h"

enum { GT_LOG_OFF = 0, GT_LOG_ERROR = 1, GT_LOG_WARN = 2, GT_LOG_INFO = 3, GT_LOG_DEBUG = 4 };

#if defined(__GNUC__)
#define GT_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define GT_PRINTF(a, b)
#endif

/* Records a formatted message as this thread's last error and returns status. */
gt_status gt_fail(gt_status status, const char *fmt, ...) GT_PRINTF(2, 3);
/* As gt_fail, and records the BLAS position of the invalid argument. */
gt_status gt_fail_arg(int position, const char *fmt, ...) GT_PRINTF(2, 3);
/* Forgets this thread's last error (at the start of each API call). */
void gt_error_clear(void);

void gt_log(int level, const char *fmt, ...) GT_PRINTF(2, 3);

/* Counters (gt_stats); atomic. */
enum { GT_STAT_CALLS, GT_STAT_PLAN_HITS, GT_STAT_CACHE_HITS, GT_STAT_TUNES,
       GT_STAT_FALLBACKS, GT_STAT_COMPILES, GT_STAT_CUBIN_HITS, GT_STAT_NEAREST,
       GT_STAT_REJECTED, GT_STAT_ASYNC_TUNES, GT_STAT_CAPTURED, GT_STAT_DEFERRED,
       GT_STAT_STAGED, GT_STAT_SPECIALIZED,
       GT_STAT_COUNT };
void gt_stat_add(int which, unsigned long long n);

#endif
