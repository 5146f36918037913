/*
 * measure.c: timing GPU work with CUDA events (measure.h). Owns only the events it
 * creates when the caller gives none; launches nothing of its own.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* clock_gettime under -std=c11 */
#endif
#include "measure.h"

#include <stdlib.h>
#include <time.h>

#include "cu.h"
#include "log.h"

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double gt_measure_median(double *t, int n) {
    qsort(t, (size_t)n, sizeof t[0], cmp_double);
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

gt_status gt_measure(CUstream s, CUevent *ev, int nev, int warmup, int reps,
                     gt_measure_run run, void *user, double *t_us, double *median_us) {
    if (reps < 1 || warmup < 0 || (ev && nev < 2))
        return gt_fail(GT_INVALID_VALUE, "gt_measure: %d warm-ups, %d runs, %d events", warmup,
                       reps, nev);
    CUevent own[GT_MEASURE_EVENTS];
    int nown = 0;
    double few[64], *t = t_us;
    gt_status st = GT_SUCCESS;
    CUresult r = CUDA_SUCCESS;
    if (!ev) {
        for (; nown < GT_MEASURE_EVENTS; nown++)
            if ((r = gt_cu.event_create(&own[nown], CU_EVENT_DEFAULT)) != CUDA_SUCCESS) {
                st = gt_cu_fail(r, "cuEventCreate");
                goto out;
            }
        ev = own, nev = GT_MEASURE_EVENTS;
    }
    if (!t) t = reps <= (int)(sizeof few / sizeof few[0]) ? few : malloc(sizeof *t * (size_t)reps);
    if (!t) {
        st = gt_fail(GT_OUT_OF_MEMORY, "times of %d runs", reps);
        goto out;
    }
    for (int i = 0; i < warmup; i++)
        if ((st = run(user, i)) != GT_SUCCESS) goto out;
    /* Chunks of nev - 1 runs, each between consecutive events; one wait a chunk. */
    for (int done = 0; done < reps;) {
        int n = reps - done < nev - 1 ? reps - done : nev - 1;
        for (int j = 0; j <= n && r == CUDA_SUCCESS; j++) {
            r = gt_cu.event_record(ev[j], s);
            if (j < n && r == CUDA_SUCCESS && (st = run(user, warmup + done + j)) != GT_SUCCESS)
                goto out;
        }
        if (r == CUDA_SUCCESS) r = gt_cu.event_synchronize(ev[n]);
        for (int j = 0; j < n && r == CUDA_SUCCESS; j++) {
            float ms = 0;
            r = gt_cu.event_elapsed(&ms, ev[j], ev[j + 1]);
            t[done + j] = ms * 1000.0;
        }
        if (r != CUDA_SUCCESS) {
            st = gt_cu_fail(r, reps == 1 ? "timing run" : "timing runs");
            goto out;
        }
        done += n;
    }
    *median_us = gt_measure_median(t, reps);
out:
    if (t && t != t_us && t != few) free(t);
    for (int i = 0; i < nown; i++) gt_cu.event_destroy(own[i]);
    return st;
}

double gt_measure_now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
