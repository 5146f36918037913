/*
 * verify.h: checks a GEMM result against the float64 reference kernel.
 *
 * Which outputs: every output of a problem of at most 512 x 512 outputs. For a larger one,
 * every output of the edge tiles, the first and the last GT_VERIFY_EDGE rows and columns
 * (GT_VERIFY_EDGE is the largest block tile of any family, so these hold the first and
 * last row and column of tiles of every configuration, and its partial tiles), plus a
 * random sample of interior rows x columns. Where that would take more than about 2^36
 * float64 multiply-adds (beyond 8192^3), the bands' long sides are sampled too; the four
 * corner blocks stay whole.
 *
 * What passes (all of it): every checked output finite and within its own bound; the
 * relative Frobenius error over the checked outputs within the type's tolerance; and C's
 * padding (rows m .. ldc - 1 of every column, when ldc > m) unchanged, bit for bit.
 *
 * The bounds, from the roundoff of each data type (gt_verify_bounds_of):
 *   u_in   relative error of an input as the kernel reads it: 0 where inputs are used as
 *          stored (f32, f64, and 16-bit inputs, whose products are exact in f32); tf32
 *          2^-10 (the tensor core ignores the low 13 bits of the fp32 value: truncation,
 *          up to one tf32 ulp); f32_3xtf32 2^-20 (the low-times-low product left out).
 *   u_acc  unit roundoff of the accumulation: 2^-24 (f32 accumulators, also on tensor
 *          cores), 2^-53 for f64.
 *   u_out  unit roundoff of C's type, rounded once at the end: 2^-24 f32, 2^-53 f64,
 *          2^-11 f16, 2^-8 bf16.
 * Per output (Higham, "Accuracy and Stability of Numerical Algorithms", 3.1 and 3.5; the
 * probabilistic form of Higham and Mary, 2019): a dot product of length K summed in any
 * order in precision u is off by at most about lambda * sqrt(K) * u * G with G =
 * |alpha| sum |a||b| + |beta||c0|, for random-signed rounding errors; inputs off by u_in
 * each add at most 2 u_in G; rounding C adds u_out |C|. So
 *     |C - ref| <= (2 u_in + (8 sqrt(K) + 2) u_acc) * G + u_out * |ref| + floor,
 * lambda = 8 covering accumulators that truncate (tensor cores) rather than round; floor
 * is the output type's smallest normal (a result flushed to zero). The float64 reference
 * itself rounds like an f64 kernel: f64's lambda is doubled.
 * Per problem, the relative Frobenius error (typical rather than worst errors: rounding
 * errors of random data are root-mean-square about u / sqrt(3) each):
 *     tol = 1.5 u_in + u_out + c * sqrt(K) * u_acc,  c = 4 (f32, f32_3xtf32), 8 (f64),
 *     16 (tensor-core types),
 * about 10 times the root-mean-square error of recursive summation (0.41 sqrt(K) u) and
 * 1.4 times that of tf32 truncation (about 1.1 * 2^-10), yet below what a kernel that
 * computes in the next coarser type gives: tf32 inputs rounded to bf16 are off by about
 * 3.2e-3, f32 ones rounded to tf32 by 4e-4, f16 ones to 8 bits by 3.2e-3, and alpha off
 * by 1% by 1e-2. The per-output bound catches what a norm cannot: one wrong output, a
 * row or a tile left unwritten, an edge computed from the wrong place.
 */
#ifndef GT_VERIFY_H
#define GT_VERIFY_H

#include <cuda.h>

#include "devctx.h"
#include "gemm.h"
#include "key.h"

/* The largest block tile (BM, BN) of any family (kcfg.c's TILE_VALUES). */
#define GT_VERIFY_EDGE 256

typedef struct gt_verify_bounds {
    double u_in, u_acc, u_out;
    double lambda;     /* of the per-output bound */
    double c_frob;     /* of the Frobenius tolerance */
    double floor_abs;  /* absolute floor of the per-output bound */
} gt_verify_bounds;

/* The constants of the key's data type (the table above). */
void gt_verify_bounds_of(int dtype, gt_verify_bounds *b);

typedef struct gt_verify_result {
    double rel_err;       /* ||C - ref|| / ||ref|| over the checked outputs */
    double tol;           /* its tolerance for this key */
    double worst;         /* largest |C - ref| / bound of one output (inf: non-finite) */
    long long nonfinite;  /* checked outputs that are NaN or Inf */
    long long over;       /* checked outputs beyond their bound */
    long long first_row, first_col; /* the first such output (or non-finite); -1: none */
    long long pad_changed; /* padding elements of C (rows m .. ldc - 1) that changed */
    long long checked;    /* outputs compared */
    double seconds;       /* the check's wall time, reference included */
    int pass;
} gt_verify_result;

/* The Frobenius tolerance of the key's data type and K. */
double gt_verify_tolerance(const gt_key *key);

/* Compares the output of call g (its C, of key's problem) with g->alpha * op(A) * op(B) +
 * g->beta * C0, of the key's data types (A, B in its input type, C0 and C in its output
 * type). C0 is C as it was before the call, of leading dimension ldc0: read for the beta
 * term (not when key->beta0), and, when ldc0 == g->ldc, for the padding check. C0 may be
 * NULL when key->beta0 (the padding is then not checked). Synchronizes g->stream. */
gt_status gt_verify(gt_devctx *dc, const gt_key *key, const gt_gemm *g, const void *C0,
                    int64_t ldc0, gt_verify_result *res);

/* One line for a result: "relative error ... (tolerance ...), worst output ... of its
 * bound, N beyond bound (first at (i, j)), N non-finite, N padding changed, of N". */
void gt_verify_describe(const gt_verify_result *res, char *out, size_t size);

#endif
