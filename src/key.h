/*
 * key.h: the problem key, the identity under which a tuned kernel is found.
 *
 * A key names everything that decides which kernel is best and which kernels are
 * legal: the device model, the data type, the two operations, the exact M/N/K
 * (baked into the kernel), the alignment class and whether beta is zero.
 * Leading dimensions beyond their alignment class are run-time arguments and are
 * not part of the key (DESIGN.md, "Problem key").
 *
 * This header is plain C: cache/ uses it without knowing about CUDA.
 */
#ifndef GT_KEY_H
#define GT_KEY_H

#include <stddef.h>
#include <stdint.h>

/* Data type and compute mode of a problem: f32 (gemm_tuned) and f64 (gemm_tuned_d). */
typedef enum { GT_DT_F32 = 0, GT_DT_F64 = 1 } gt_dtype;

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
 * leading dimension (given in elements of elem_size bytes) admits. */
int gt_key_align_class(const uintptr_t *ptrs, int nptrs, const int64_t *lds, int nlds,
                       int elem_size);

/* Canonical one-line text of a key, e.g.
 * "NVIDIA H100 80GB HBM3|sm90|132|f32|NT|4096x4096x4096|a16|b0". Returns the length
 * that the full text needs (like snprintf). */
int gt_key_format(const gt_key *key, char *buf, size_t size);

/* Shape part only, e.g. "4096x4096x4096:NT". */
int gt_key_shape(const gt_key *key, char *buf, size_t size);

uint64_t gt_key_hash(const gt_key *key);
int gt_key_equal(const gt_key *a, const gt_key *b);

const char *gt_dtype_name(int dtype);
/* "f32" -> GT_DT_F32, "f64" -> GT_DT_F64; -1 when unknown. */
int gt_dtype_parse(const char *name);
/* Bytes of one element: 4 or 8. */
int gt_dtype_size(int dtype);

#endif
