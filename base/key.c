/*
 * key.c: the problem key (see key.h): alignment class, canonical text, hashing.
 * Owns no state.
 */
#include "key.h"

#include <stdio.h>
#include <string.h>

/* ===== API ===== */

int gt_key_align_class(const uintptr_t *ptrs, int nptrs, const int64_t *lds, int nlds,
                       int elem_size) {
    int align = 16;
    for (int i = 0; i < nptrs; i++)
        while (align > 1 && ptrs[i] % (uintptr_t)align != 0) align /= 2;
    for (int i = 0; i < nlds; i++) {
        /* Stepping by one column moves ld * elem_size bytes: that must keep the vector
         * aligned too. */
        uint64_t bytes = (uint64_t)lds[i] * (uint64_t)elem_size;
        while (align > 1 && bytes % (uint64_t)align != 0) align /= 2;
    }
    return align;
}

/* Each data type: its name and the storage types of A/B and of C (key.h). */
static const struct {
    const char *name;
    int in, out, tensor_only;
} dtypes[GT_NDTYPES] = {
    [GT_DT_F32] = {"f32", GT_ST_F32, GT_ST_F32, 0},
    [GT_DT_F64] = {"f64", GT_ST_F64, GT_ST_F64, 0},
    [GT_DT_TF32] = {"tf32", GT_ST_F32, GT_ST_F32, 1},
    [GT_DT_F16] = {"f16", GT_ST_F16, GT_ST_F16, 1},
    [GT_DT_F16_F32] = {"f16_f32", GT_ST_F16, GT_ST_F32, 1},
    [GT_DT_BF16] = {"bf16", GT_ST_BF16, GT_ST_BF16, 1},
    [GT_DT_BF16_F32] = {"bf16_f32", GT_ST_BF16, GT_ST_F32, 1},
    [GT_DT_F32_3XTF32] = {"f32_3xtf32", GT_ST_F32, GT_ST_F32, 0},
};

static const struct {
    const char *name;
    int size;
} stypes[GT_NSTYPES] = {
    [GT_ST_F32] = {"f32", 4}, [GT_ST_F64] = {"f64", 8}, [GT_ST_F16] = {"f16", 2}, [GT_ST_BF16] = {"bf16", 2}};

static int dt_ok(int dtype) { return dtype >= 0 && dtype < GT_NDTYPES; }

const char *gt_dtype_name(int dtype) { return dt_ok(dtype) ? dtypes[dtype].name : "?"; }
int gt_dtype_in(int dtype) { return dt_ok(dtype) ? dtypes[dtype].in : GT_ST_F32; }
int gt_dtype_out(int dtype) { return dt_ok(dtype) ? dtypes[dtype].out : GT_ST_F32; }
int gt_dtype_in_size(int dtype) { return gt_stype_size(gt_dtype_in(dtype)); }
int gt_dtype_out_size(int dtype) { return gt_stype_size(gt_dtype_out(dtype)); }
int gt_dtype_tensor_only(int dtype) { return dt_ok(dtype) && dtypes[dtype].tensor_only; }
int gt_dtype_split3(int dtype) { return dtype == GT_DT_F32_3XTF32; }

int gt_dtype_parse(const char *name) {
    for (int i = 0; i < GT_NDTYPES; i++)
        if (strcmp(name, dtypes[i].name) == 0) return i;
    return -1;
}

const char *gt_stype_name(int stype) {
    return stype >= 0 && stype < GT_NSTYPES ? stypes[stype].name : "?";
}
int gt_stype_size(int stype) { return stype >= 0 && stype < GT_NSTYPES ? stypes[stype].size : 4; }

int gt_key_shape(const gt_key *key, char *buf, size_t size) {
    return snprintf(buf, size, "%lldx%lldx%lld:%c%c", (long long)key->m, (long long)key->n,
                    (long long)key->k, key->opa ? 'T' : 'N', key->opb ? 'T' : 'N');
}

int gt_key_problem(const gt_key *key, char *buf, size_t size) {
    return snprintf(buf, size, "%s|%c%c|%lldx%lldx%lld|a%d|b%d", gt_dtype_name(key->dtype),
                    key->opa ? 'T' : 'N', key->opb ? 'T' : 'N', (long long)key->m,
                    (long long)key->n, (long long)key->k, key->align, key->beta0);
}

int gt_key_format(const gt_key *key, char *buf, size_t size) {
    int n = snprintf(buf, size, "%s|sm%d%d|%d|", key->device, key->cc_major, key->cc_minor,
                     key->sm_count);
    if (n < 0) return n;
    int m = gt_key_problem(key, (size_t)n < size ? buf + n : NULL,
                           (size_t)n < size ? size - (size_t)n : 0);
    return m < 0 ? m : n + m;
}

/* FNV-1a over the fields, not the struct bytes: padding and the bytes after the
 * device name's terminator must not matter. */
static uint64_t fnv(uint64_t h, const void *p, size_t n) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 1099511628211ull;
    }
    return h;
}

uint64_t gt_key_hash(const gt_key *key) {
    uint64_t h = 14695981039346656037ull;
    h = fnv(h, key->device, strlen(key->device));
    int ints[] = {key->cc_major, key->cc_minor, key->sm_count, key->dtype,
                  key->opa,      key->opb,      key->align,    key->beta0};
    h = fnv(h, ints, sizeof ints);
    int64_t dims[] = {key->m, key->n, key->k};
    return fnv(h, dims, sizeof dims);
}

int gt_key_equal(const gt_key *a, const gt_key *b) {
    return strcmp(a->device, b->device) == 0 && a->cc_major == b->cc_major &&
           a->cc_minor == b->cc_minor && a->sm_count == b->sm_count && a->dtype == b->dtype &&
           a->opa == b->opa && a->opb == b->opb && a->m == b->m && a->n == b->n &&
           a->k == b->k && a->align == b->align && a->beta0 == b->beta0;
}
