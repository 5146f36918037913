/*
 * twin.h: does an exact-shape kernel give its generic twin's bits? (src/dispatch.c asks
 * before the twin takes a plan's place: mode cached's specialization.)
 *
 * Both kernels run the key's problem on the same random inputs (A, B and C0 uniform in
 * [-1, 1), alpha 1, beta 0.75 or 0 as the key says; the tuner's scratch layout,
 * gt_tune_scratch, so C's padding rows are compared too), the exact one twice, on the
 * context's tuning stream; all three outputs must be equal bit for bit. The two forms sum
 * every output in the same order (docs/DESIGN.md), so a difference is a defect of one of
 * them (a race gives different bits run to run), and the generic kernel stays.
 * GEMMTUNE_TEST_FAULT=twin flips one bit of the exact kernel's first output (a test aid).
 */
#ifndef GT_TWIN_H
#define GT_TWIN_H

#include "devctx.h"
#include "kern.h"
#include "key.h"

/* The outcome of gt_twin_check. */
enum { GT_TWIN_SAME = 0, GT_TWIN_DIFFER = 1, GT_TWIN_SKIPPED = 2 };

/* Runs generic and exact (both loaded for key in dc's context, which is current) as the
 * header says. GT_SUCCESS with *outcome: GT_TWIN_SAME, GT_TWIN_DIFFER, or GT_TWIN_SKIPPED
 * when the device memory (inputs, two outputs, the workspace) would pass mem_limit (0:
 * none) or leave less than 5% of the device free; why says which. Other statuses are
 * driver failures. Never touches the caller's memory. */
gt_status gt_twin_check(gt_devctx *dc, const gt_key *key, const gt_kern *generic,
                        const gt_kern *exact, size_t mem_limit, int *outcome, char *why,
                        size_t why_size);

#endif
