/*
 * test_key.c: the problem key (base/key.c), no GPU needed.
 *
 * Cases: the alignment class from pointers and leading dimensions; the canonical text
 * of a key and of its shape (exact strings, truncation like snprintf); hashing and
 * equality (equal keys hash equal whatever lies after the device name's terminator or in
 * padding; every field takes part); data type names, sizes and the f64 key text; the
 * key's text parsed back (gt_key_parse: every field, every type, a device name holding
 * '|', sm100 and sm120, the largest sizes) and every malformed or non-canonical text
 * refused with a reason.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "key.h"
#include "tap.h"

/* ===== helpers ===== */

/* A key whose bytes outside the fields are `fill` (0 or garbage). */
static void sample_key(gt_key *k, int fill) {
    memset(k, fill, sizeof *k);
    /* strcpy, not snprintf: the bytes after the terminator keep the fill. */
    strcpy(k->device, "NVIDIA H100 80GB HBM3");
    k->cc_major = 9;
    k->cc_minor = 0;
    k->sm_count = 132;
    k->dtype = GT_DT_F32;
    k->opa = 0;
    k->opb = 1;
    k->m = 4096;
    k->n = 2048;
    k->k = 1024;
    k->align = 16;
    k->beta0 = 0;
}

static int align_of(uintptr_t a, uintptr_t b, uintptr_t c, int64_t lda, int64_t ldb,
                    int64_t ldc) {
    const uintptr_t ptrs[3] = {a, b, c};
    const int64_t lds[3] = {lda, ldb, ldc};
    return gt_key_align_class(ptrs, 3, lds, 3, 4);
}

/* ===== alignment class ===== */

static void key_align_class_pointers(void) {
    const uintptr_t base = 0x7f0000000000u; /* 256-byte aligned, like cudaMalloc */
    TAP_CHECK(align_of(base, base + 256, base + 4096, 4, 8, 1024) == 16, "all aligned: %d",
              align_of(base, base + 256, base + 4096, 4, 8, 1024));
    /* Any one pointer lowers the class for all. */
    static const struct {
        uintptr_t off;
        int want;
    } offs[] = {{16, 16}, {32, 16}, {8, 8}, {24, 8}, {4, 4}, {12, 4}, {260, 4}, {2, 2}, {1, 1}};
    for (size_t i = 0; i < sizeof offs / sizeof offs[0]; i++)
        for (int which = 0; which < 3; which++) {
            uintptr_t p[3] = {base, base + 512, base + 1024};
            p[which] += offs[i].off;
            int got = align_of(p[0], p[1], p[2], 64, 64, 64);
            TAP_CHECK(got == offs[i].want, "pointer %d offset by %zu: class %d, want %d", which,
                      (size_t)offs[i].off, got, offs[i].want);
        }
    /* No pointers and no leading dimensions: the widest class. */
    TAP_CHECK(gt_key_align_class(NULL, 0, NULL, 0, 4) == 16, "empty: %d",
              gt_key_align_class(NULL, 0, NULL, 0, 4));
}

static void key_align_class_leading_dims(void) {
    const uintptr_t base = 0x10000;
    /* ld in floats: a multiple of 4 floats keeps 16 bytes; 2 floats 8 bytes; odd 4. */
    static const struct {
        int64_t ld;
        int want;
    } cases[] = {{4, 16}, {8, 16}, {4096, 16}, {1028, 16}, {2, 8}, {6, 8}, {1026, 8},
                 {1, 4},  {3, 4},  {17, 4},    {1001, 4}, {4097, 4}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int which = 0; which < 3; which++) {
            int64_t ld[3] = {64, 128, 256};
            ld[which] = cases[i].ld;
            int got = align_of(base, base, base, ld[0], ld[1], ld[2]);
            TAP_CHECK(got == cases[i].want, "ld %d = %lld: class %d, want %d", which,
                      (long long)cases[i].ld, got, cases[i].want);
        }
    /* The lower of the pointer and ld limits wins. */
    TAP_CHECK(align_of(base + 8, base, base, 1001, 4, 4) == 4, "ptr 8, ld odd: %d",
              align_of(base + 8, base, base, 1001, 4, 4));
    TAP_CHECK(align_of(base + 4, base, base, 4, 4, 2) == 4, "ptr 4, ld 2: %d",
              align_of(base + 4, base, base, 4, 4, 2));
    TAP_CHECK(align_of(base + 16, base, base, 4, 4, 2) == 8, "ptr 16, ld 2: %d",
              align_of(base + 16, base, base, 4, 4, 2));
}

static void key_align_class_elem_size(void) {
    /* The ld is in elements: elem_size scales it to bytes. */
    const uintptr_t p = 0x10000;
    const int64_t ld3 = 3, ld2 = 2, ld1 = 1;
    TAP_CHECK(gt_key_align_class(&p, 1, &ld3, 1, 4) == 4, "3 floats: %d",
              gt_key_align_class(&p, 1, &ld3, 1, 4));
    TAP_CHECK(gt_key_align_class(&p, 1, &ld3, 1, 8) == 8, "3 doubles: %d",
              gt_key_align_class(&p, 1, &ld3, 1, 8));
    TAP_CHECK(gt_key_align_class(&p, 1, &ld2, 1, 8) == 16, "2 doubles: %d",
              gt_key_align_class(&p, 1, &ld2, 1, 8));
    TAP_CHECK(gt_key_align_class(&p, 1, &ld3, 1, 2) == 2, "3 halves: %d",
              gt_key_align_class(&p, 1, &ld3, 1, 2));
    TAP_CHECK(gt_key_align_class(&p, 1, &ld1, 1, 1) == 1, "1 byte: %d",
              gt_key_align_class(&p, 1, &ld1, 1, 1));
    /* Only the first nptrs / nlds entries count. */
    const uintptr_t ptrs[2] = {0x10000, 0x10001};
    const int64_t lds[2] = {4, 1};
    TAP_CHECK(gt_key_align_class(ptrs, 1, lds, 1, 4) == 16, "counts ignored: %d",
              gt_key_align_class(ptrs, 1, lds, 1, 4));
}

/* ===== text ===== */

static void key_format_text(void) {
    gt_key k;
    sample_key(&k, 0);
    char buf[256];
    const char *want = "NVIDIA H100 80GB HBM3|sm90|132|f32|NT|4096x2048x1024|a16|b0";
    int n = gt_key_format(&k, buf, sizeof buf);
    TAP_CHECK(strcmp(buf, want) == 0, "'%s'\n  want '%s'", buf, want);
    TAP_CHECK(n == (int)strlen(want), "returned %d, want %zu", n, strlen(want));

    /* Another key: every field shows. */
    strcpy(k.device, "NVIDIA A100-SXM4-40GB");
    k.cc_major = 8, k.cc_minor = 6, k.sm_count = 108;
    k.opa = 1, k.opb = 0;
    k.m = 1, k.n = 7, k.k = 65536;
    k.align = 4, k.beta0 = 1;
    const char *want2 = "NVIDIA A100-SXM4-40GB|sm86|108|f32|TN|1x7x65536|a4|b1";
    n = gt_key_format(&k, buf, sizeof buf);
    TAP_CHECK(strcmp(buf, want2) == 0, "'%s'\n  want '%s'", buf, want2);
    TAP_CHECK(n == (int)strlen(want2), "returned %d", n);

    /* Truncation: like snprintf, terminated, returns the full length. */
    char small[10];
    memset(small, 'Z', sizeof small);
    n = gt_key_format(&k, small, sizeof small);
    TAP_CHECK(n == (int)strlen(want2), "truncated: returned %d", n);
    TAP_CHECK(small[9] == 0 && strncmp(small, want2, 9) == 0, "truncated text '%.10s'", small);
    TAP_CHECK(gt_key_format(&k, NULL, 0) == (int)strlen(want2), "size 0");
}

static void key_shape_text(void) {
    gt_key k;
    sample_key(&k, 0);
    char buf[64];
    int n = gt_key_shape(&k, buf, sizeof buf);
    TAP_CHECK(strcmp(buf, "4096x2048x1024:NT") == 0, "'%s'", buf);
    TAP_CHECK(n == (int)strlen("4096x2048x1024:NT"), "returned %d", n);
    static const char *ops[4] = {"NN", "NT", "TN", "TT"};
    for (int i = 0; i < 4; i++) {
        k.opa = i >> 1, k.opb = i & 1;
        k.m = 17, k.n = 33, k.k = 2147483647LL;
        char want[64];
        snprintf(want, sizeof want, "17x33x2147483647:%s", ops[i]);
        gt_key_shape(&k, buf, sizeof buf);
        TAP_CHECK(strcmp(buf, want) == 0, "'%s', want '%s'", buf, want);
    }
    /* The shape text is the problem part of the full key text. */
    char full[256];
    sample_key(&k, 0);
    gt_key_format(&k, full, sizeof full);
    TAP_CHECK(strstr(full, "|NT|4096x2048x1024|") != NULL, "'%s'", full);
}

/* ===== hash and equality ===== */

static void key_hash_equal_same_fields(void) {
    gt_key a, b;
    sample_key(&a, 0);
    sample_key(&b, 0);
    TAP_CHECK(gt_key_equal(&a, &b), "identical keys unequal");
    TAP_CHECK(gt_key_hash(&a) == gt_key_hash(&b), "identical keys hash differently");
    TAP_CHECK(gt_key_equal(&a, &a), "a key is not equal to itself");
}

static void key_hash_ignores_bytes_after_name(void) {
    /* Garbage after the device name's terminator and in any padding must not matter. */
    static const int fills[] = {0xAB, 0xFF, 0x01, 0x5A};
    gt_key clean;
    sample_key(&clean, 0);
    for (size_t i = 0; i < sizeof fills / sizeof fills[0]; i++) {
        gt_key dirty;
        sample_key(&dirty, fills[i]);
        TAP_CHECK(memcmp(&dirty, &clean, sizeof clean) != 0, "fill 0x%x changed nothing",
                  fills[i]);
        TAP_CHECK(gt_key_equal(&clean, &dirty), "fill 0x%x: keys unequal", fills[i]);
        TAP_CHECK(gt_key_hash(&clean) == gt_key_hash(&dirty), "fill 0x%x: hashes differ",
                  fills[i]);
    }
    /* A name shortened in place: what is left after the new terminator is ignored. */
    gt_key a, b;
    sample_key(&a, 0);
    sample_key(&b, 0);
    strcpy(a.device, "GPU");
    strcpy(b.device, "GPU-with-a-longer-name");
    b.device[3] = 0;
    TAP_CHECK(gt_key_equal(&a, &b), "old name tail matters for equality");
    TAP_CHECK(gt_key_hash(&a) == gt_key_hash(&b), "old name tail matters for the hash");
}

static void key_every_field_matters(void) {
    gt_key base;
    sample_key(&base, 0);
    const uint64_t h0 = gt_key_hash(&base);
    enum { NCHANGES = 15 };
    for (int c = 0; c < NCHANGES; c++) {
        gt_key k = base;
        const char *what = "?";
        switch (c) {
        case 0: strcpy(k.device, "NVIDIA H100 80GB HBM2e"), what = "device"; break;
        case 1: strcpy(k.device, "NVIDIA H100 80GB HBM"), what = "device prefix"; break;
        case 2: k.device[0] = 0, what = "empty device"; break;
        case 3: k.cc_major = 8, what = "cc_major"; break;
        case 4: k.cc_minor = 1, what = "cc_minor"; break;
        case 5: k.sm_count = 114, what = "sm_count"; break;
        case 6: k.dtype = 1, what = "dtype"; break;
        case 7: k.opa = 1, what = "opa"; break;
        case 8: k.opb = 0, what = "opb"; break;
        case 9: k.m = 4097, what = "m"; break;
        case 10: k.n = 2049, what = "n"; break;
        case 11: k.k = 1025, what = "k"; break;
        case 12: k.align = 8, what = "align"; break;
        case 13: k.beta0 = 1, what = "beta0"; break;
        case 14: k.m = base.n, k.n = base.m, what = "m and n swapped"; break;
        }
        TAP_CHECK(!gt_key_equal(&base, &k), "%s changed, keys still equal", what);
        TAP_CHECK(!gt_key_equal(&k, &base), "%s changed, keys still equal (reversed)", what);
        /* Not required of a hash in general, but each field must feed it: a fixed FNV-1a
         * over these values has no collision here. */
        TAP_CHECK(gt_key_hash(&k) != h0, "%s changed, same hash %016llx", what,
                  (unsigned long long)h0);
    }
}

static void key_hash_spreads(void) {
    /* 4096 shapes that differ in m, n and k: all hashes distinct, and both halves of the
     * 64-bit value vary (a hash table may use either). */
    enum { N = 4096 };
    uint64_t *h = malloc(sizeof *h * N);
    TAP_CHECK(h != NULL, "out of memory");
    if (!h) return;
    gt_key k;
    sample_key(&k, 0);
    for (int i = 0; i < N; i++) {
        k.m = 1 + (i & 15), k.n = 1 + ((i >> 4) & 15), k.k = 1 + (i >> 8);
        h[i] = gt_key_hash(&k);
    }
    int dups = 0;
    uint64_t low_or = 0, low_and = ~0ull, high_or = 0, high_and = ~0ull;
    for (int i = 0; i < N; i++) {
        for (int j = 0; j < i; j++) dups += h[i] == h[j];
        low_or |= h[i] & 0xffffffffu, low_and &= h[i] & 0xffffffffu;
        high_or |= h[i] >> 32, high_and &= h[i] >> 32;
    }
    TAP_CHECK(dups == 0, "%d duplicate hashes among %d shapes", dups, N);
    TAP_CHECK(low_or != low_and && high_or != high_and, "a half of the hash never changes");
    free(h);
}

/* ===== data types ===== */

static void key_dtype_names(void) {
    /* Every known type: its name, the round trip, its storage types and element sizes,
     * and whether it runs on tensor cores only. Values are stored by name (cache files),
     * so the numbers only need to differ; the names must stay what they are. */
    static const struct {
        int dtype;
        const char *name;
        int in, out, in_size, out_size, tensor_only;
    } known[] = {{GT_DT_F32, "f32", GT_ST_F32, GT_ST_F32, 4, 4, 0},
                 {GT_DT_F64, "f64", GT_ST_F64, GT_ST_F64, 8, 8, 0},
                 {GT_DT_TF32, "tf32", GT_ST_F32, GT_ST_F32, 4, 4, 1},
                 {GT_DT_F16, "f16", GT_ST_F16, GT_ST_F16, 2, 2, 1},
                 {GT_DT_F16_F32, "f16_f32", GT_ST_F16, GT_ST_F32, 2, 4, 1},
                 {GT_DT_BF16, "bf16", GT_ST_BF16, GT_ST_BF16, 2, 2, 1},
                 {GT_DT_BF16_F32, "bf16_f32", GT_ST_BF16, GT_ST_F32, 2, 4, 1},
                 {GT_DT_F32_3XTF32, "f32_3xtf32", GT_ST_F32, GT_ST_F32, 4, 4, 0}};
    TAP_CHECK(sizeof known / sizeof known[0] == GT_NDTYPES, "%d types known to the test, %d to key.h",
              (int)(sizeof known / sizeof known[0]), GT_NDTYPES);
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        const char *name = gt_dtype_name(known[i].dtype);
        TAP_CHECK(name && strcmp(name, known[i].name) == 0, "dtype %d is '%s', want '%s'",
                  known[i].dtype, name ? name : "(null)", known[i].name);
        TAP_CHECK(gt_dtype_parse(known[i].name) == known[i].dtype, "round trip of '%s': %d",
                  known[i].name, gt_dtype_parse(known[i].name));
        TAP_CHECK(gt_dtype_in(known[i].dtype) == known[i].in &&
                      gt_dtype_out(known[i].dtype) == known[i].out,
                  "storage of %s: %s -> %s", known[i].name, gt_stype_name(gt_dtype_in(known[i].dtype)),
                  gt_stype_name(gt_dtype_out(known[i].dtype)));
        TAP_CHECK(gt_dtype_in_size(known[i].dtype) == known[i].in_size &&
                      gt_dtype_out_size(known[i].dtype) == known[i].out_size,
                  "sizes of %s: %d, %d; want %d, %d", known[i].name,
                  gt_dtype_in_size(known[i].dtype), gt_dtype_out_size(known[i].dtype),
                  known[i].in_size, known[i].out_size);
        TAP_CHECK(gt_dtype_tensor_only(known[i].dtype) == known[i].tensor_only,
                  "%s tensor-only: %d", known[i].name, gt_dtype_tensor_only(known[i].dtype));
        for (size_t j = 0; j < i; j++)
            TAP_CHECK(known[i].dtype != known[j].dtype, "%s and %s share a value", known[i].name,
                      known[j].name);
    }
    static const char *unknown[] = {"", "f3", "f32 ", " f32", "f320", "?", "F64", "f6",
                                    "f64 ", "f640", "double", "TF32", "bf16_", "f16f32",
                                    "f16_f16", "half"};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++)
        TAP_CHECK(gt_dtype_parse(unknown[i]) == -1, "'%s' parsed as %d", unknown[i],
                  gt_dtype_parse(unknown[i]));
    /* An unknown value still has a printable name, one that does not parse. */
    static const int bad[] = {-1, GT_NDTYPES, 99};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *s = gt_dtype_name(bad[i]);
        TAP_CHECK(s != NULL && s[0] != 0, "dtype %d has no name", bad[i]);
        TAP_CHECK(s == NULL || gt_dtype_parse(s) == -1, "dtype %d's name '%s' parses", bad[i],
                  s ? s : "");
    }
}

static void key_f64_text(void) {
    /* The data type is a field of its own in the key text (so the cache keeps f32 and f64
     * winners of one shape apart), and not in the shape text. */
    gt_key k;
    sample_key(&k, 0);
    k.dtype = GT_DT_F64;
    k.align = 8;
    char buf[256];
    const char *want = "NVIDIA H100 80GB HBM3|sm90|132|f64|NT|4096x2048x1024|a8|b0";
    int n = gt_key_format(&k, buf, sizeof buf);
    TAP_CHECK(strcmp(buf, want) == 0, "'%s'\n  want '%s'", buf, want);
    TAP_CHECK(n == (int)strlen(want), "returned %d, want %zu", n, strlen(want));
    gt_key_shape(&k, buf, sizeof buf);
    TAP_CHECK(strcmp(buf, "4096x2048x1024:NT") == 0, "shape '%s'", buf);
    /* The same problem as f32 is another key. */
    gt_key f;
    sample_key(&f, 0);
    f.align = 8;
    TAP_CHECK(!gt_key_equal(&k, &f) && gt_key_hash(&k) != gt_key_hash(&f),
              "f32 and f64 keys of one shape are equal or hash alike");
    f.dtype = GT_DT_F64;
    TAP_CHECK(gt_key_equal(&k, &f) && gt_key_hash(&k) == gt_key_hash(&f),
              "two f64 keys of one shape differ");
    /* Alignment class of doubles: an odd ld of doubles still keeps 8 bytes; 2 keep 16. */
    const uintptr_t ptrs[3] = {0x10000, 0x20000, 0x30000};
    const int64_t odd[3] = {4097, 4096, 4096}, even[3] = {4098, 4096, 2};
    TAP_CHECK(gt_key_align_class(ptrs, 3, odd, 3, gt_dtype_in_size(GT_DT_F64)) == 8,
              "odd ld of doubles: %d", gt_key_align_class(ptrs, 3, odd, 3, 8));
    TAP_CHECK(gt_key_align_class(ptrs, 3, even, 3, gt_dtype_in_size(GT_DT_F64)) == 16,
              "even lds of doubles: %d", gt_key_align_class(ptrs, 3, even, 3, 8));
}

/* ===== parsing the text ===== */

/* gt_key_parse(gt_key_format(k)) == k, field by field, for keys that vary every field. */
static void key_parse_round_trip(void) {
    static const struct {
        const char *device;
        int major, minor, sms;
    } devs[] = {{"NVIDIA H100 80GB HBM3", 9, 0, 132}, {"NVIDIA A100-SXM4-80GB", 8, 0, 108},
                {"NVIDIA B200", 10, 0, 148},          {"NVIDIA GeForce RTX 5090", 12, 0, 170},
                {"Odd|Name|With|Bars", 8, 6, 1},       {"x", 5, 2, 2}};
    int n = 0;
    for (size_t d = 0; d < sizeof devs / sizeof devs[0]; d++)
        for (int t = 0; t < GT_NDTYPES; t++)
            for (int ops = 0; ops < 4; ops++) {
                gt_key k, back;
                sample_key(&k, 0);
                strcpy(k.device, devs[d].device);
                k.cc_major = devs[d].major, k.cc_minor = devs[d].minor;
                k.sm_count = devs[d].sms;
                k.dtype = t;
                k.opa = ops & 1, k.opb = ops >> 1;
                k.m = 1 + ops, k.n = INT64_MAX - t, k.k = 17 * (int64_t)(d + 1);
                k.align = 1 << ((t + ops) % 5);
                k.beta0 = (int)(d & 1);
                char text[256], why[128] = "";
                gt_key_format(&k, text, sizeof text);
                int rc = gt_key_parse(text, &back, why, sizeof why);
                TAP_CHECK(rc == 0 && gt_key_equal(&k, &back), "'%s': %s", text, why);
                n++;
            }
    TAP_CHECK(n == 6 * GT_NDTYPES * 4, "%d keys", n);
    gt_key k;
    TAP_CHECK(gt_key_parse("NVIDIA H100 80GB HBM3|sm90|132|bf16_f32|TN|1x2x3|a2|b0", &k, NULL,
                           0) == 0 &&
                  k.cc_major == 9 && k.cc_minor == 0 && k.sm_count == 132 &&
                  k.dtype == GT_DT_BF16_F32 && k.opa == 1 && k.opb == 0 && k.m == 1 &&
                  k.n == 2 && k.k == 3 && k.align == 2 && k.beta0 == 0,
              "fields of a known text");
}

static void key_parse_refuses(void) {
    static const struct {
        const char *text, *why;
    } bad[] = {
        {"", "not a key"},
        {"NVIDIA H100|sm90|132|f32|NT|64x64x64|a16", "not a key"},
        {"|sm90|132|f32|NT|64x64x64|a16|b0", "empty device"},
        {"H100|90|132|f32|NT|64x64x64|a16|b0", "compute capability"},
        {"H100|sm9|132|f32|NT|64x64x64|a16|b0", "compute capability"},
        {"H100|smx0|132|f32|NT|64x64x64|a16|b0", "compute capability"},
        {"H100|sm090|132|f32|NT|64x64x64|a16|b0", "one text"},
        {"H100|sm90|0|f32|NT|64x64x64|a16|b0", "SM count"},
        {"H100|sm90|-4|f32|NT|64x64x64|a16|b0", "SM count"},
        {"H100|sm90|0132|f32|NT|64x64x64|a16|b0", "one text"},
        {"H100|sm90|132|f99|NT|64x64x64|a16|b0", "data type"},
        {"H100|sm90|132|F32|NT|64x64x64|a16|b0", "data type"},
        {"H100|sm90|132|f32|NC|64x64x64|a16|b0", "ops"},
        {"H100|sm90|132|f32|N|64x64x64|a16|b0", "ops"},
        {"H100|sm90|132|f32|NT|64x64|a16|b0", "size"},
        {"H100|sm90|132|f32|NT|0x64x64|a16|b0", "size"},
        {"H100|sm90|132|f32|NT|64x64x64x1|a16|b0", "size"},
        {"H100|sm90|132|f32|NT|64x+64x64|a16|b0", "size"},
        {"H100|sm90|132|f32|NT|64x64x99999999999999999999|a16|b0", "size"},
        {"H100|sm90|132|f32|NT|064x64x64|a16|b0", "one text"},
        {"H100|sm90|132|f32|NT|64x64x64|a3|b0", "alignment"},
        {"H100|sm90|132|f32|NT|64x64x64|a32|b0", "alignment"},
        {"H100|sm90|132|f32|NT|64x64x64|16|b0", "alignment"},
        {"H100|sm90|132|f32|NT|64x64x64|a16|b2", "beta"},
        {"H100|sm90|132|f32|NT|64x64x64|a16|b0 ", "beta"},
        {"H100|sm90|132|f32|NT|64x64x64|a16|", "beta"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gt_key k;
        char why[128] = "";
        int rc = gt_key_parse(bad[i].text, &k, why, sizeof why);
        TAP_CHECK(rc == -1 && strstr(why, bad[i].why), "'%s': rc %d, why '%s', want '%s'",
                  bad[i].text, rc, why, bad[i].why);
    }
    char longname[200];
    memset(longname, 'D', sizeof longname);
    snprintf(longname + GT_DEVICE_NAME_MAX, sizeof longname - GT_DEVICE_NAME_MAX,
             "|sm90|132|f32|NT|64x64x64|a16|b0");
    gt_key k;
    char why[128] = "";
    TAP_CHECK(gt_key_parse(longname, &k, why, sizeof why) == -1 && strstr(why, "too long"),
              "a device name of %d bytes: '%s'", GT_DEVICE_NAME_MAX, why);
}

int main(void) {
    TAP_RUN(key_align_class_pointers);
    TAP_RUN(key_align_class_leading_dims);
    TAP_RUN(key_align_class_elem_size);
    TAP_RUN(key_format_text);
    TAP_RUN(key_shape_text);
    TAP_RUN(key_hash_equal_same_fields);
    TAP_RUN(key_hash_ignores_bytes_after_name);
    TAP_RUN(key_every_field_matters);
    TAP_RUN(key_hash_spreads);
    TAP_RUN(key_dtype_names);
    TAP_RUN(key_f64_text);
    TAP_RUN(key_parse_round_trip);
    TAP_RUN(key_parse_refuses);
    return tap_done();
}
