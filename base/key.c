/*
 * key.c: the problem key (see key.h): alignment class, canonical text, hashing.
 * Owns no state.
 */
#include "key.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
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

int gt_key_class(const gt_key *key, char *buf, size_t size) {
    return snprintf(buf, size, "%s|%c%c|a%d|b%d", gt_dtype_name(key->dtype), key->opa ? 'T' : 'N',
                    key->opb ? 'T' : 'N', key->align, key->beta0);
}

int gt_key_format(const gt_key *key, char *buf, size_t size) {
    int n = snprintf(buf, size, "%s|sm%d%d|%d|", key->device, key->cc_major, key->cc_minor,
                     key->sm_count);
    if (n < 0) return n;
    int m = gt_key_problem(key, (size_t)n < size ? buf + n : NULL,
                           (size_t)n < size ? size - (size_t)n : 0);
    return m < 0 ? m : n + m;
}

/* A decimal number of the digits at *p, at least 0, at most max: its value, with *p
 * past it; -1 when there is no digit or it is larger than max. */
static long long take_number(const char **p, long long max) {
    if (**p < '0' || **p > '9') return -1;
    errno = 0;
    char *end;
    long long v = strtoll(*p, &end, 10);
    if (errno || v > max) return -1;
    *p = end;
    return v;
}

static int parse_fail(char *why, size_t whysize, const char *what) {
    if (why && whysize) snprintf(why, whysize, "%s", what);
    return -1;
}

int gt_key_parse(const char *text, gt_key *key, char *why, size_t whysize) {
    memset(key, 0, sizeof *key);
    /* The device part may hold '|': the seven fixed fields are counted from the right. */
    const char *bar[7];
    size_t len = strlen(text);
    int found = 0;
    for (size_t i = len; i-- > 0 && found < 7;)
        if (text[i] == '|') bar[6 - found++] = text + i;
    if (found < 7) return parse_fail(why, whysize, "not a key: want device|smXY|SMs|dtype|AB|MxNxK|aN|bN");
    size_t dlen = (size_t)(bar[0] - text);
    if (dlen == 0) return parse_fail(why, whysize, "key: empty device name");
    if (dlen >= sizeof key->device) return parse_fail(why, whysize, "key: device name too long");
    memcpy(key->device, text, dlen);
    key->device[dlen] = 0;

    const char *p = bar[0] + 1;
    if (strncmp(p, "sm", 2) != 0) return parse_fail(why, whysize, "key: compute capability is not smXY");
    p += 2;
    long long cc = take_number(&p, 9999);
    if (cc < 10 || p != bar[1]) return parse_fail(why, whysize, "key: compute capability is not smXY");
    key->cc_major = (int)(cc / 10), key->cc_minor = (int)(cc % 10);

    p = bar[1] + 1;
    long long sms = take_number(&p, 1 << 30);
    if (sms < 1 || p != bar[2]) return parse_fail(why, whysize, "key: SM count is not a number from 1");
    key->sm_count = (int)sms;

    char name[32];
    size_t nlen = (size_t)(bar[3] - bar[2] - 1);
    if (nlen >= sizeof name) return parse_fail(why, whysize, "key: unknown data type");
    memcpy(name, bar[2] + 1, nlen);
    name[nlen] = 0;
    key->dtype = gt_dtype_parse(name);
    if (key->dtype < 0) return parse_fail(why, whysize, "key: unknown data type");

    p = bar[3] + 1;
    if (bar[4] - p != 2 || (p[0] != 'N' && p[0] != 'T') || (p[1] != 'N' && p[1] != 'T'))
        return parse_fail(why, whysize, "key: ops are not two of N and T");
    key->opa = p[0] == 'T', key->opb = p[1] == 'T';

    p = bar[4] + 1;
    int64_t *dims[3] = {&key->m, &key->n, &key->k};
    for (int d = 0; d < 3; d++) {
        long long v = take_number(&p, INT64_MAX);
        if (v < 1 || (d < 2 ? *p != 'x' : p != bar[5]))
            return parse_fail(why, whysize, "key: size is not MxNxK, each from 1");
        *dims[d] = v;
        p++;
    }

    p = bar[5] + 1;
    long long a = *p == 'a' ? (p++, take_number(&p, 16)) : -1;
    if ((a != 1 && a != 2 && a != 4 && a != 8 && a != 16) || p != bar[6])
        return parse_fail(why, whysize, "key: alignment class is not a1, a2, a4, a8 or a16");
    key->align = (int)a;

    p = bar[6] + 1;
    if ((strcmp(p, "b0") != 0 && strcmp(p, "b1") != 0))
        return parse_fail(why, whysize, "key: beta part is not b0 or b1");
    key->beta0 = p[1] == '1';

    /* One text per key: anything else (leading zeros, a sign) is not this key's text. */
    char again[512];
    int n = gt_key_format(key, again, sizeof again);
    if (n < 0 || (size_t)n >= sizeof again || strcmp(again, text) != 0)
        return parse_fail(why, whysize, "key: not in the one text form (leading zeros?)");
    return 0;
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
