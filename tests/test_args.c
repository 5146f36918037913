/*
 * test_args.c: the BLAS argument rules of gemm_tuned and gemm_tuned_d (src/args.c), no
 * GPU needed.
 *
 * Every rule is checked twice: through gt_args_check (pure: status, BLAS position,
 * message, action) and through the public entry point, which must apply the same rules
 * before it touches the driver. main points GEMMTUNE_LIBCUDA at a file that does not
 * exist before the first call, so this process never has a driver, on any machine: a
 * valid call must then come back GT_NO_DRIVER, and an early return (m == 0, nothing to
 * do) must come back GT_SUCCESS without an error message, proving it never tried.
 * Every case of the rules runs as sgemm (gemm_tuned, float; the case's own name) and as
 * dgemm (gemm_tuned_d, double; the name with "_d"): both share one implementation that
 * must not drift. The f64-only cases check what differs: pointers aligned to 8 bytes,
 * and double scalars that no float could hold.
 * Also: status strings, the per-thread last error and its clearing.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "gemmtune.h"
#include "key.h"
#include "log.h"
#include "tap.h"

/* ===== helpers ===== */

/* Fake device pointers: never dereferenced (no driver). Aligned to 16 bytes, so valid
 * for float and double alike. */
#define PA ((const void *)(uintptr_t)0x10000)
#define PB ((const void *)(uintptr_t)0x20000)
#define PC ((void *)(uintptr_t)0x30000)

/* The data type the cases run as: GT_DT_F32 (gemm_tuned) or GT_DT_F64 (gemm_tuned_d). */
static int dt = GT_DT_F32;

/* One call's arguments, in gemm_tuned's order; the scalars in double, which holds every
 * float the f32 cases use exactly. */
typedef struct {
    int opA, opB;
    int64_t m, n, k;
    double alpha;
    const void *A;
    int64_t lda;
    const void *B;
    int64_t ldb;
    double beta;
    void *C;
    int64_t ldc;
} call;

/* A valid NN call of 10 x 20 x 30 with the minimal leading dimensions. */
static call base(void) {
    call c = {GT_OP_N, GT_OP_N, 10, 20, 30, 1.0, PA, 10, PB, 30, 0.5, PC, 10};
    return c;
}

static gt_status check(const call *c, gt_action *act) {
    gt_error_clear();
    *act = (gt_action)-1;
    return gt_args_check(c->opA, c->opB, c->m, c->n, c->k, c->alpha, c->A, c->lda, c->B, c->ldb,
                         c->beta, c->C, c->ldc, dt == GT_DT_F64 ? 8 : 4, act);
}

static gt_status public_call(const call *c) {
    if (dt == GT_DT_F64)
        return gemm_tuned_d((gt_op)c->opA, (gt_op)c->opB, c->m, c->n, c->k, c->alpha, c->A,
                            c->lda, c->B, c->ldb, c->beta, c->C, c->ldc, NULL);
    return gemm_tuned((gt_op)c->opA, (gt_op)c->opB, c->m, c->n, c->k, (float)c->alpha, c->A,
                      c->lda, c->B, c->ldb, (float)c->beta, c->C, c->ldc, NULL);
}

/* 1 when msg contains name as a word of its own ("m" in "argument 3 (m)", not in "argument"). */
static int names_word(const char *msg, const char *name) {
    size_t len = strlen(name);
    for (const char *p = msg; (p = strstr(p, name)) != NULL; p++) {
        int before = p > msg && (isalnum((unsigned char)p[-1]) || p[-1] == '_');
        int after = isalnum((unsigned char)p[len]) || p[len] == '_';
        if (!before && !after) return 1;
    }
    return 0;
}

/* Expects both paths to reject c with position pos and a message naming the argument. */
#define EXPECT_BAD(c, pos, name) expect_bad(c, pos, name, __LINE__)
static void expect_bad(const call *c, int pos, const char *name, int line) {
    gt_action act;
    gt_status s = check(c, &act);
    TAP_CHECK(s == GT_INVALID_VALUE, "line %d: gt_args_check status %d, want INVALID_VALUE", line,
              s);
    TAP_CHECK(gt_last_error_arg() == pos, "line %d: gt_args_check position %d, want %d (%s)",
              line, gt_last_error_arg(), pos, gt_last_error());
    TAP_CHECK(names_word(gt_last_error(), name), "line %d: message '%s' does not name '%s'", line,
              gt_last_error(), name);
    char num[16];
    snprintf(num, sizeof num, "%d", pos);
    TAP_CHECK(names_word(gt_last_error(), num), "line %d: message '%s' lacks position %d", line,
              gt_last_error(), pos);

    s = public_call(c);
    TAP_CHECK(s == GT_INVALID_VALUE, "line %d: gemm_tuned status %d (%s), want INVALID_VALUE: %s",
              line, s, gt_status_string(s), gt_last_error());
    TAP_CHECK(gt_last_error_arg() == pos, "line %d: gemm_tuned position %d, want %d (%s)", line,
              gt_last_error_arg(), pos, gt_last_error());
    TAP_CHECK(names_word(gt_last_error(), name),
              "line %d: gemm_tuned message '%s' does not name '%s'", line, gt_last_error(), name);
}

/* Expects both paths to accept c: the pure check with action act; the public call with
 * GT_SUCCESS and no message when there is nothing to do, else GT_NO_DRIVER (this process
 * has no driver) with a message, and never an argument position. */
#define EXPECT_OK(c, act) expect_ok(c, act, __LINE__)
static void expect_ok(const call *c, gt_action want, int line) {
    gt_action act;
    gt_status s = check(c, &act);
    TAP_CHECK(s == GT_SUCCESS, "line %d: gt_args_check status %d: %s", line, s, gt_last_error());
    TAP_CHECK(s != GT_SUCCESS || act == want, "line %d: action %d, want %d", line, act, want);
    TAP_CHECK(gt_last_error_arg() == 0, "line %d: position %d on success", line,
              gt_last_error_arg());

    s = public_call(c);
    if (want == GT_ACT_NONE) {
        TAP_CHECK(s == GT_SUCCESS, "line %d: gemm_tuned status %d (%s): %s", line, s,
                  gt_status_string(s), gt_last_error());
        TAP_CHECK(gt_last_error()[0] == 0,
                  "line %d: nothing to do, yet a message (touched the driver?): '%s'", line,
                  gt_last_error());
    } else {
        TAP_CHECK(s == GT_NO_DRIVER || s == GT_NO_DEVICE,
                  "line %d: gemm_tuned status %d (%s), want NO_DRIVER/NO_DEVICE: %s", line, s,
                  gt_status_string(s), gt_last_error());
        TAP_CHECK(gt_last_error()[0] != 0, "line %d: status %d without a message", line, s);
    }
    TAP_CHECK(gt_last_error_arg() == 0, "line %d: gemm_tuned position %d for a valid call",
              line, gt_last_error_arg());
}

/* ===== operations and sizes ===== */

static void args_bad_ops(void) {
    call c = base();
    c.opA = 3;
    EXPECT_BAD(&c, 1, "opA");
    c.opA = -1;
    EXPECT_BAD(&c, 1, "opA");
    c = base();
    c.opB = 3;
    EXPECT_BAD(&c, 2, "opB");
    c.opB = 'N'; /* a character is not an op */
    EXPECT_BAD(&c, 2, "opB");
}

static void args_negative_sizes(void) {
    call c = base();
    c.m = -1;
    EXPECT_BAD(&c, 3, "m");
    c = base();
    c.n = -1;
    EXPECT_BAD(&c, 4, "n");
    c = base();
    c.k = -1;
    EXPECT_BAD(&c, 5, "k");
    c = base();
    c.k = INT64_MIN;
    EXPECT_BAD(&c, 5, "k");
}

static void args_sizes_above_int32(void) {
    call c = base();
    c.m = (int64_t)INT32_MAX + 1;
    c.lda = c.ldc = c.m;
    EXPECT_BAD(&c, 3, "m");
    c = base();
    c.n = (int64_t)INT32_MAX + 1;
    EXPECT_BAD(&c, 4, "n");
    c = base();
    c.k = (int64_t)INT32_MAX + 1;
    c.ldb = c.k;
    EXPECT_BAD(&c, 5, "k");
    /* INT32_MAX itself is allowed (n, with tight leading dimensions). */
    c = base();
    c.n = INT32_MAX;
    gt_action act;
    TAP_CHECK(check(&c, &act) == GT_SUCCESS && act == GT_ACT_GEMM, "n = INT32_MAX rejected: %s",
              gt_last_error());
}

/* ===== leading dimensions ===== */

static void args_lda(void) {
    /* opA = N: A is m x k, lda >= max(1, m). */
    call c = base(); /* m 10, k 30 */
    c.lda = 9;
    EXPECT_BAD(&c, 8, "lda");
    c.lda = 10;
    EXPECT_OK(&c, GT_ACT_GEMM);
    c.lda = 11;
    EXPECT_OK(&c, GT_ACT_GEMM);
    c.lda = -10;
    EXPECT_BAD(&c, 8, "lda");
    /* opA = T: A is stored k x m, lda >= max(1, k). */
    c = base();
    c.opA = GT_OP_T;
    c.lda = 29;
    EXPECT_BAD(&c, 8, "lda");
    c.lda = 10; /* enough for N, not for T */
    EXPECT_BAD(&c, 8, "lda");
    c.lda = 30;
    EXPECT_OK(&c, GT_ACT_GEMM);
    /* m == 1: lda must still be >= 1 */
    c = base();
    c.m = 1;
    c.ldc = 1;
    c.lda = 0;
    EXPECT_BAD(&c, 8, "lda");
    c.lda = 1;
    EXPECT_OK(&c, GT_ACT_GEMM);
}

static void args_ldb(void) {
    /* opB = N: B is k x n, ldb >= max(1, k). */
    call c = base(); /* k 30, n 20 */
    c.ldb = 29;
    EXPECT_BAD(&c, 10, "ldb");
    c.ldb = 20; /* enough for T, not for N */
    EXPECT_BAD(&c, 10, "ldb");
    c.ldb = 30;
    EXPECT_OK(&c, GT_ACT_GEMM);
    /* opB = T: B is stored n x k, ldb >= max(1, n). */
    c = base();
    c.opB = GT_OP_T;
    c.ldb = 19;
    EXPECT_BAD(&c, 10, "ldb");
    c.ldb = 20;
    EXPECT_OK(&c, GT_ACT_GEMM);
    c.ldb = 0;
    EXPECT_BAD(&c, 10, "ldb");
}

static void args_ldc(void) {
    call c = base(); /* m 10 */
    c.ldc = 9;
    EXPECT_BAD(&c, 13, "ldc");
    c.ldc = 0;
    EXPECT_BAD(&c, 13, "ldc");
    c.ldc = 10;
    EXPECT_OK(&c, GT_ACT_GEMM);
    /* ldc does not depend on the ops. */
    c.opA = GT_OP_T, c.opB = GT_OP_T, c.lda = 30, c.ldb = 20;
    c.ldc = 9;
    EXPECT_BAD(&c, 13, "ldc");
}

static void args_zero_ld_with_zero_size(void) {
    /* BLAS: ld >= max(1, rows) even when rows == 0, and even though nothing is done. */
    call c = base();
    c.m = 0;
    c.lda = 0;
    c.ldc = 1;
    EXPECT_BAD(&c, 8, "lda");
    c = base();
    c.m = 0;
    c.lda = 1;
    c.ldc = 0;
    EXPECT_BAD(&c, 13, "ldc");
    c = base();
    c.k = 0;
    c.ldb = 0; /* opB = N: rows are k = 0, minimum 1 */
    EXPECT_BAD(&c, 10, "ldb");
    c.ldb = 1;
    EXPECT_OK(&c, GT_ACT_SCALE);
    /* The smallest legal leading dimensions with m == 0 do nothing. */
    c = base();
    c.m = 0, c.lda = 1, c.ldc = 1;
    EXPECT_OK(&c, GT_ACT_NONE);
}

static void args_ld_too_large(void) {
    /* ld * columns must stay an int64 byte offset. */
    call c = base(); /* opA = N: A has k = 30 columns */
    c.lda = INT64_MAX / 4;
    EXPECT_BAD(&c, 8, "lda");
    c = base();
    c.ldb = INT64_MAX / 4;
    EXPECT_BAD(&c, 10, "ldb");
    c = base();
    c.ldc = INT64_MAX / 4;
    EXPECT_BAD(&c, 13, "ldc");
}

/* ===== ordering ===== */

static void args_lowest_position_reported(void) {
    /* Set each pair of the size and leading-dimension rules wrong at once: the lower
     * position is the one reported, as the reference BLAS xerbla does. */
    static const int positions[] = {1, 2, 3, 4, 5, 8, 10, 13};
    const int np = (int)(sizeof positions / sizeof positions[0]);
    for (int i = 0; i < np; i++)
        for (int j = i + 1; j < np; j++) {
            call c = base();
            for (int t = 0; t < 2; t++) {
                switch (t ? positions[j] : positions[i]) {
                case 1: c.opA = 7; break;
                case 2: c.opB = 7; break;
                case 3: c.m = -3; break;
                case 4: c.n = -4; break;
                case 5: c.k = -5; break;
                case 8: c.lda = 9; break;
                case 10: c.ldb = 29; break;
                case 13: c.ldc = 9; break;
                }
            }
            gt_action act;
            gt_status s = check(&c, &act);
            TAP_CHECK(s == GT_INVALID_VALUE && gt_last_error_arg() == positions[i],
                      "bad %d and %d: status %d position %d (%s)", positions[i], positions[j], s,
                      gt_last_error_arg(), gt_last_error());
            s = public_call(&c);
            TAP_CHECK(s == GT_INVALID_VALUE && gt_last_error_arg() == positions[i],
                      "gemm_tuned, bad %d and %d: status %d position %d (%s)", positions[i],
                      positions[j], s, gt_last_error_arg(), gt_last_error());
        }
    /* Every pointer wrong: A first, then B, then C. */
    call c = base();
    c.A = NULL, c.B = NULL, c.C = NULL;
    EXPECT_BAD(&c, 7, "A");
    c.A = PA;
    EXPECT_BAD(&c, 9, "B");
    c.B = PB;
    EXPECT_BAD(&c, 12, "C");
}

/* ===== pointers ===== */

static void args_null_pointers(void) {
    call c = base();
    c.A = NULL;
    EXPECT_BAD(&c, 7, "A");
    c = base();
    c.B = NULL;
    EXPECT_BAD(&c, 9, "B");
    c = base();
    c.C = NULL;
    EXPECT_BAD(&c, 12, "C");
    /* Transposed operands: the same positions. */
    c = base();
    c.opA = GT_OP_T, c.opB = GT_OP_T, c.lda = 30, c.ldb = 20;
    c.A = NULL;
    EXPECT_BAD(&c, 7, "A");
}

static void args_null_ab_not_read(void) {
    /* alpha == 0 or k == 0: A and B are not read, so NULL is fine. */
    call c = base();
    c.A = NULL, c.B = NULL;
    c.alpha = 0.0f;
    EXPECT_OK(&c, GT_ACT_SCALE);
    c.alpha = -0.0f;
    EXPECT_OK(&c, GT_ACT_SCALE);
    c = base();
    c.A = NULL, c.B = NULL;
    c.k = 0, c.ldb = 1;
    EXPECT_OK(&c, GT_ACT_SCALE);
    /* ... and with beta == 1 there is nothing to do: C may be NULL too. */
    c.beta = 1.0f;
    c.C = NULL;
    EXPECT_OK(&c, GT_ACT_NONE);
    /* ... but C is written when beta != 1. */
    c.beta = 0.0f;
    EXPECT_BAD(&c, 12, "C");
    /* m == 0 or n == 0: nothing is touched at all. */
    c = base();
    c.A = NULL, c.B = NULL, c.C = NULL;
    c.n = 0;
    EXPECT_OK(&c, GT_ACT_NONE);
    c = base();
    c.A = NULL, c.B = NULL, c.C = NULL;
    c.m = 0;
    EXPECT_OK(&c, GT_ACT_NONE);
}

static void args_misaligned_pointers(void) {
    call c = base();
    c.A = (const void *)(uintptr_t)0x1002;
    EXPECT_BAD(&c, 7, "A");
    c = base();
    c.B = (const void *)(uintptr_t)0x2001;
    EXPECT_BAD(&c, 9, "B");
    c = base();
    c.C = (void *)(uintptr_t)0x3003;
    EXPECT_BAD(&c, 12, "C");
    /* One element's alignment is enough (the alignment class only narrows the vector
     * width): 4 bytes for float, 8 for double. */
    const uintptr_t es = dt == GT_DT_F64 ? 8 : 4;
    c = base();
    c.A = (const void *)(uintptr_t)(0x1000 + es);
    c.B = (const void *)(uintptr_t)(0x2000 + 2 * es);
    c.C = (void *)(uintptr_t)(0x3000 + 3 * es);
    EXPECT_OK(&c, GT_ACT_GEMM);
    /* A misaligned A that is never read is not an error. */
    c = base();
    c.A = (const void *)(uintptr_t)0x1002;
    c.alpha = 0.0;
    EXPECT_OK(&c, GT_ACT_SCALE);
}

/* ===== f64 only ===== */

static void args_f64_pointers_aligned_to_8(void) {
    /* 4 bytes: enough for a float, not for a double; each pointer in its position. */
    call c = base();
    c.A = (const void *)(uintptr_t)0x1004;
    EXPECT_BAD(&c, 7, "A");
    TAP_CHECK(strstr(gt_last_error(), "8 bytes") != NULL, "message '%s' does not say 8 bytes",
              gt_last_error());
    c = base();
    c.B = (const void *)(uintptr_t)0x200c;
    EXPECT_BAD(&c, 9, "B");
    c = base();
    c.C = (void *)(uintptr_t)0x3004;
    EXPECT_BAD(&c, 12, "C");
    /* All three 4-byte aligned: A, the lowest position, is the one reported. */
    c = base();
    c.A = (const void *)(uintptr_t)0x1004;
    c.B = (const void *)(uintptr_t)0x2004;
    c.C = (void *)(uintptr_t)0x3004;
    EXPECT_BAD(&c, 7, "A");
    /* Not read: alpha == 0 leaves A and B alone; C must still hold doubles. */
    c.alpha = 0.0;
    EXPECT_BAD(&c, 12, "C");
    c.C = PC;
    EXPECT_OK(&c, GT_ACT_SCALE);
    /* ... and with beta == 1 nothing is touched at all. */
    c.C = (void *)(uintptr_t)0x3004;
    c.beta = 1.0;
    EXPECT_OK(&c, GT_ACT_NONE);
    /* The same pointers are fine as floats. */
    c = base();
    c.A = (const void *)(uintptr_t)0x1004;
    c.B = (const void *)(uintptr_t)0x2004;
    c.C = (void *)(uintptr_t)0x3004;
    dt = GT_DT_F32;
    EXPECT_OK(&c, GT_ACT_GEMM);
    dt = GT_DT_F64;
}

static void args_f64_scalars_are_double(void) {
    /* Scalars no float holds: alpha below float's smallest subnormal is still not zero,
     * so A and B are read (and must be valid); beta next to 1 is not 1, so C is scaled. */
    call c = base();
    c.alpha = 1e-300;
    c.A = NULL;
    EXPECT_BAD(&c, 7, "A");
    c = base();
    c.k = 0, c.ldb = 1;
    c.beta = 1.0 + 1e-15;
    EXPECT_OK(&c, GT_ACT_SCALE);
    c.beta = 1.0;
    EXPECT_OK(&c, GT_ACT_NONE);
    c = base();
    c.alpha = -0.0, c.beta = 1e-300;
    EXPECT_OK(&c, GT_ACT_SCALE);
}

/* ===== ops and actions ===== */

static void args_op_c_is_transposed(void) {
    /* m 10, n 20, k 30: a lda of 15 is enough for N (>= m) but not for T or C (>= k). */
    call c = base();
    c.lda = 15;
    EXPECT_OK(&c, GT_ACT_GEMM);
    c.opA = GT_OP_T;
    EXPECT_BAD(&c, 8, "lda");
    c.opA = GT_OP_C;
    EXPECT_BAD(&c, 8, "lda");
    c.lda = 30;
    EXPECT_OK(&c, GT_ACT_GEMM);
    /* ldb of 25: enough for N (>= k = 30)? no; for C (>= n = 20) yes. */
    c = base();
    c.ldb = 25;
    EXPECT_BAD(&c, 10, "ldb");
    c.opB = GT_OP_C;
    EXPECT_OK(&c, GT_ACT_GEMM);
    c.opB = GT_OP_T;
    EXPECT_OK(&c, GT_ACT_GEMM);
}

static void args_actions(void) {
    call c = base();
    EXPECT_OK(&c, GT_ACT_GEMM);
    c.beta = 1.0f;
    EXPECT_OK(&c, GT_ACT_GEMM);
    c.beta = 0.0f;
    EXPECT_OK(&c, GT_ACT_GEMM);
    /* alpha == 0 */
    c = base();
    c.alpha = 0.0f;
    c.beta = 1.0f;
    EXPECT_OK(&c, GT_ACT_NONE);
    c.beta = 0.0f;
    EXPECT_OK(&c, GT_ACT_SCALE);
    c.beta = 2.0f;
    EXPECT_OK(&c, GT_ACT_SCALE);
    /* k == 0 */
    c = base();
    c.k = 0, c.ldb = 1;
    c.beta = 1.0f;
    EXPECT_OK(&c, GT_ACT_NONE);
    c.beta = 0.0f;
    EXPECT_OK(&c, GT_ACT_SCALE);
    c.beta = -3.0f;
    EXPECT_OK(&c, GT_ACT_SCALE);
    /* m == 0 / n == 0, whatever alpha and beta */
    c = base();
    c.m = 0;
    c.beta = 0.0f;
    EXPECT_OK(&c, GT_ACT_NONE);
    c = base();
    c.n = 0;
    c.alpha = 2.0f, c.beta = 3.0f;
    EXPECT_OK(&c, GT_ACT_NONE);
    /* 1 x 1 x 1 is a real product */
    c = base();
    c.m = c.n = c.k = 1;
    c.lda = c.ldb = c.ldc = 1;
    EXPECT_OK(&c, GT_ACT_GEMM);
}

/* ===== status and errors ===== */

static void args_status_strings(void) {
    static const gt_status all[] = {
#define GT_STATUS_ALL(name, value, text) GT_##name,
        GT_STATUS_MAP(GT_STATUS_ALL)
#undef GT_STATUS_ALL
    };
    const int n = (int)(sizeof all / sizeof all[0]);
    TAP_CHECK(n >= 13, "GT_STATUS_MAP has %d statuses", n);
    for (int i = 0; i < n; i++) {
        const char *s = gt_status_string(all[i]);
        TAP_CHECK(s != NULL && s[0] != 0, "status %d has no string", all[i]);
        if (!s) continue;
        for (int j = 0; j < i; j++) {
            const char *t = gt_status_string(all[j]);
            TAP_CHECK(t == NULL || strcmp(s, t) != 0, "statuses %d and %d share '%s'", all[i],
                      all[j], s);
        }
    }
    /* Values are distinct too, and an unknown one still gets a string. */
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            TAP_CHECK(all[i] != all[j], "two statuses with value %d", all[i]);
    const char *unknown = gt_status_string((gt_status)12345);
    TAP_CHECK(unknown != NULL && unknown[0] != 0, "unknown status has no string");
    for (int i = 0; unknown && i < n; i++)
        TAP_CHECK(strcmp(unknown, gt_status_string(all[i])) != 0,
                  "unknown status reads as status %d", all[i]);
    TAP_CHECK(strstr(gt_status_string(GT_NO_DRIVER), "driver") != NULL, "NO_DRIVER: '%s'",
              gt_status_string(GT_NO_DRIVER));
}

static void args_no_driver_message(void) {
    call c = base();
    gt_status s = public_call(&c);
    TAP_CHECK(s == GT_NO_DRIVER, "status %d (%s): %s", s, gt_status_string(s), gt_last_error());
    /* The message names what could not be loaded (main set GEMMTUNE_LIBCUDA). */
    TAP_CHECK(strstr(gt_last_error(), "gemmtune-no-such-libcuda") != NULL, "message: '%s'",
              gt_last_error());
    TAP_CHECK(gt_last_error_arg() == 0, "position %d", gt_last_error_arg());
    /* Asking again gives the same answer (the load result is kept). */
    s = public_call(&c);
    TAP_CHECK(s == GT_NO_DRIVER && gt_last_error()[0] != 0, "second call: %d '%s'", s,
              gt_last_error());
}

static void args_last_error_cleared_by_success(void) {
    call bad = base(), nothing = base();
    bad.ldc = 1;
    nothing.n = 0;
    gt_status s = public_call(&bad);
    TAP_CHECK(s == GT_INVALID_VALUE && gt_last_error_arg() == 13 && gt_last_error()[0],
              "bad call: %d, position %d, '%s'", s, gt_last_error_arg(), gt_last_error());
    s = public_call(&nothing);
    TAP_CHECK(s == GT_SUCCESS, "status %d", s);
    TAP_CHECK(gt_last_error()[0] == 0, "message kept after a successful call: '%s'",
              gt_last_error());
    TAP_CHECK(gt_last_error_arg() == 0, "position %d kept after a successful call",
              gt_last_error_arg());
    /* A failure of another kind clears the position of an earlier invalid argument. */
    s = public_call(&bad);
    TAP_CHECK(s == GT_INVALID_VALUE && gt_last_error_arg() == 13, "bad call again: %d, %d", s,
              gt_last_error_arg());
    call valid = base();
    s = public_call(&valid);
    TAP_CHECK(s == GT_NO_DRIVER && gt_last_error_arg() == 0,
              "valid call after a bad one: status %d, position %d", s, gt_last_error_arg());
    TAP_CHECK(strstr(gt_last_error(), "ldc") == NULL, "old message kept: '%s'", gt_last_error());
}

static void args_version(void) {
    int major = -1, minor = -1, patch = -1;
    gt_version(&major, &minor, &patch);
    TAP_CHECK(major == GT_VERSION_MAJOR && minor == GT_VERSION_MINOR && patch == GT_VERSION_PATCH,
              "gt_version %d.%d.%d, header %d.%d.%d", major, minor, patch, GT_VERSION_MAJOR,
              GT_VERSION_MINOR, GT_VERSION_PATCH);
    char text[32];
    snprintf(text, sizeof text, "%d.%d.%d", major, minor, patch);
    TAP_CHECK(strcmp(text, GT_VERSION_STRING) == 0, "'%s' vs GT_VERSION_STRING '%s'", text,
              GT_VERSION_STRING);
}

/* Runs fn as sgemm (its own name) and as dgemm (the name with "_d"). */
#define TAP_RUN_BOTH(fn)                  \
    do {                                  \
        dt = GT_DT_F32;                   \
        tap_run(fn, #fn);                 \
        dt = GT_DT_F64;                   \
        tap_run(fn, #fn "_d");            \
        dt = GT_DT_F32;                   \
    } while (0)
#define TAP_RUN_F64(fn)                   \
    do {                                  \
        dt = GT_DT_F64;                   \
        tap_run(fn, #fn);                 \
        dt = GT_DT_F32;                   \
    } while (0)

int main(void) {
    /* No driver in this process, on any machine (read at the first gt_cu_load). */
    setenv("GEMMTUNE_LIBCUDA", "/nonexistent/gemmtune-no-such-libcuda.so.1", 1);
    TAP_RUN_BOTH(args_bad_ops);
    TAP_RUN_BOTH(args_negative_sizes);
    TAP_RUN_BOTH(args_sizes_above_int32);
    TAP_RUN_BOTH(args_lda);
    TAP_RUN_BOTH(args_ldb);
    TAP_RUN_BOTH(args_ldc);
    TAP_RUN_BOTH(args_zero_ld_with_zero_size);
    TAP_RUN_BOTH(args_ld_too_large);
    TAP_RUN_BOTH(args_lowest_position_reported);
    TAP_RUN_BOTH(args_null_pointers);
    TAP_RUN_BOTH(args_null_ab_not_read);
    TAP_RUN_BOTH(args_misaligned_pointers);
    TAP_RUN_BOTH(args_op_c_is_transposed);
    TAP_RUN_BOTH(args_actions);
    TAP_RUN_F64(args_f64_pointers_aligned_to_8);
    TAP_RUN_F64(args_f64_scalars_are_double);
    TAP_RUN(args_status_strings);
    TAP_RUN_BOTH(args_no_driver_message);
    TAP_RUN_BOTH(args_last_error_cleared_by_success);
    TAP_RUN(args_version);
    return tap_done();
}
