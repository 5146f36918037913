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

static const char *dtype_names[] = {"f32", "f64"};

const char *gt_dtype_name(int dtype) {
    if (dtype < 0 || dtype >= (int)(sizeof dtype_names / sizeof dtype_names[0])) return "?";
    return dtype_names[dtype];
}

int gt_dtype_size(int dtype) { return dtype == GT_DT_F64 ? 8 : 4; }

int gt_dtype_parse(const char *name) {
    for (int i = 0; i < (int)(sizeof dtype_names / sizeof dtype_names[0]); i++)
        if (strcmp(name, dtype_names[i]) == 0) return i;
    return -1;
}

int gt_key_shape(const gt_key *key, char *buf, size_t size) {
    return snprintf(buf, size, "%lldx%lldx%lld:%c%c", (long long)key->m, (long long)key->n,
                    (long long)key->k, key->opa ? 'T' : 'N', key->opb ? 'T' : 'N');
}

int gt_key_format(const gt_key *key, char *buf, size_t size) {
    return snprintf(buf, size, "%s|sm%d%d|%d|%s|%c%c|%lldx%lldx%lld|a%d|b%d", key->device,
                    key->cc_major, key->cc_minor, key->sm_count, gt_dtype_name(key->dtype),
                    key->opa ? 'T' : 'N', key->opb ? 'T' : 'N', (long long)key->m,
                    (long long)key->n, (long long)key->k, key->align, key->beta0);
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
