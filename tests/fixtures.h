/*
 * fixtures.h: devices and keys shared by the CPU tests (no GPU needed): the limits of an
 * H100 and an A100 as gt_klimits, and a key builder for either.
 */
#ifndef GT_TEST_FIXTURES_H
#define GT_TEST_FIXTURES_H

#include <stdio.h>
#include <string.h>

#include "kcfg.h"
#include "key.h"

static const gt_klimits h100 = {.max_threads_per_block = 1024,
                                .smem_per_block = 232448,
                                .regs_per_block = 65536,
                                .regs_per_sm = 65536,
                                .sm_count = 132};
static const gt_klimits a100 = {.max_threads_per_block = 1024,
                                .smem_per_block = 166912,
                                .regs_per_block = 65536,
                                .regs_per_sm = 65536,
                                .sm_count = 108};

/* A key on an H100 (arch >= 90) or an A100 (arch 80). */
static inline void fixture_key(gt_key *k, int arch, int opa, int opb, long long m, long long n,
                               long long kk, int align, int beta0) {
    memset(k, 0, sizeof *k);
    snprintf(k->device, sizeof k->device, "%s",
             arch >= 90 ? "NVIDIA H100 80GB HBM3" : "NVIDIA A100-SXM4-80GB");
    k->cc_major = arch / 10;
    k->cc_minor = arch % 10;
    k->sm_count = arch >= 90 ? 132 : 108;
    k->dtype = GT_DT_F32;
    k->opa = opa, k->opb = opb;
    k->m = m, k->n = n, k->k = kk;
    k->align = align;
    k->beta0 = beta0;
}

#endif
