/*
 * key.h: the problem key, the identity under which a tuned kernel is found.
 *
 * A key names everything that decides which kernel is best and which kernels are
 * legal: the device model, the data type, the two operations, the exact M/N/K
 * (baked into the kernel), the alignment class and whether beta is zero.
 * Leading dimensions beyond their alignment class are run-time arguments and are
 * not part of the key (docs/DESIGN.md, "Rules each part keeps").
 *
 * This header is plain C: cache/ uses it without knowing about CUDA.
 */
#ifndef GT_KEY_H
#define GT_KEY_H

#include <stddef.h>
#include <stdint.h>

/* Data types of a problem: what A and B hold, what C holds, and the compute type, as one
 * value (the public types of gemmtune.h map onto it, api.c). Scalars (alpha, beta) and
 * accumulation are in the compute type: f64 for GT_DT_F64, f32 for all others.
 *   f32      A, B, C float, exact fp32 FMA (gemm_tuned)
 *   f64      A, B, C double (gemm_tuned_d)
 *   tf32     A, B, C float, products on tf32 tensor cores (an explicit opt-in)
 *   f32_3xtf32  A, B, C float, fp32 products emulated on tf32 tensor cores (3xTF32: each
 *            operand split into a high and a low tf32 part, three products summed; about
 *            fp32's accuracy, an explicit opt-in), or exact FMA where that is faster
 *   f16      A, B, C half;           f16_f32  A, B half, C float
 *   bf16     A, B, C bfloat16;       bf16_f32 A, B bfloat16, C float
 * Values are stored in cache files by name, never by number. */
typedef enum {
    GT_DT_F32 = 0,
    GT_DT_F64 = 1,
    GT_DT_TF32 = 2,
    GT_DT_F16 = 3,
    GT_DT_F16_F32 = 4,
    GT_DT_BF16 = 5,
    GT_DT_BF16_F32 = 6,
    GT_DT_F32_3XTF32 = 7,
} gt_dtype;
#define GT_NDTYPES 8

/* Storage types of elements, for the helper kernels (fill, scale, compare). */
typedef enum { GT_ST_F32 = 0, GT_ST_F64 = 1, GT_ST_F16 = 2, GT_ST_BF16 = 3 } gt_stype;
#define GT_NSTYPES 4

#define GT_DEVICE_NAME_MAX 96

typedef struct gt_key {
    char device[GT_DEVICE_NAME_MAX]; /* device model name, as the driver reports it */
    int cc_major, cc_minor;          /* compute capability */
    int sm_count;                    /* multiprocessors */
    int dtype;                       /* gt_dtype */
    int opa, opb;                    /* 0 = N (as stored), 1 = T (transposed) */
    int64_t m, n, k;                 /* the exact problem size */
    int align;                       /* alignment class in bytes: 1, 2, 4, 8 or 16 */
    int beta0;                       /* 1 when beta == 0: C is then never read */
} gt_key;

/* The widest vector (16, 8, 4, 2 or 1 bytes) that every address and every
 * leading dimension (given in elements of elem_size bytes) admits. (A key whose C is
 * wider than A and B takes the smaller of the classes of A, B and of C.) */
int gt_key_align_class(const uintptr_t *ptrs, int nptrs, const int64_t *lds, int nlds,
                       int elem_size);

/* The one text of a key, e.g.
 * "NVIDIA H100 80GB HBM3|sm90|132|f32|NT|4096x4096x4096|a16|b0": the device part, then
 * the problem part. Returns the length that the full text needs (like snprintf). */
int gt_key_format(const gt_key *key, char *buf, size_t size);
/* The inverse of gt_key_format: 0 with *key, or -1 with the reason in why (may be NULL)
 * when text is not a key's one text. The device is everything before the last seven
 * '|'; the text must be exactly what gt_key_format writes for the key it names (no
 * leading zeros or signs, "sm" then the compute capability's major and its one-digit
 * minor), with a non-empty device that fits GT_DEVICE_NAME_MAX, a known data type, ops
 * N or T, sizes from 1 to 2^63-1, an alignment class of 1, 2, 4, 8 or 16 and b0 or b1. */
int gt_key_parse(const char *text, gt_key *key, char *why, size_t whysize);
/* Its problem part alone ("f32|NT|4096x4096x4096|a16|b0"): what reaches the compiler,
 * so the binary cache names programs by it. */
int gt_key_problem(const gt_key *key, char *buf, size_t size);
/* Its class, the problem part without the sizes ("f32|NT|a16|b0"): what reaches the
 * compiler for a shape-generic kernel (one binary per class and configuration). */
int gt_key_class(const gt_key *key, char *buf, size_t size);

/* The shape as the command takes it (MxNxK:AB), e.g. "4096x4096x4096:NT": the
 * command's input syntax, not a form of the key. */
int gt_key_shape(const gt_key *key, char *buf, size_t size);

uint64_t gt_key_hash(const gt_key *key);
int gt_key_equal(const gt_key *a, const gt_key *b);

/* "f32", "f64", "tf32", "f16", "f16_f32", "bf16", "bf16_f32", "f32_3xtf32"; "?" when out
 * of range. */
const char *gt_dtype_name(int dtype);
/* The inverse of gt_dtype_name; -1 when unknown. */
int gt_dtype_parse(const char *name);
/* Storage type (gt_stype) of A and B, and of C. */
int gt_dtype_in(int dtype);
int gt_dtype_out(int dtype);
/* Bytes of one element of A and B, and of C. */
int gt_dtype_in_size(int dtype);
int gt_dtype_out_size(int dtype);
/* 1 for the types computed on tensor cores only (tf32, f16, bf16): they need compute
 * capability 8.0 and have no SIMT kernel. */
int gt_dtype_tensor_only(int dtype);
/* 1 for f32_3xtf32: fp32 operands split in two tf32 parts on the tensor cores (its
 * WGMMA kernels; SIMT kernels compute it exactly). */
int gt_dtype_split3(int dtype);
/* "f32", "f64", "f16", "bf16"; "?" when out of range. */
const char *gt_stype_name(int stype);
int gt_stype_size(int stype);

#endif
