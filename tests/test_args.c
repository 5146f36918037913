/*
 * test_args.c: the BLAS argument rules of gemm_tuned and gemm_tuned_d (src/call.c), no
 * GPU needed.
 *
 * Every rule is checked twice: through gt_call_check (pure: status, BLAS position,
 * message, action) and through the public entry point, which must apply the same rules
 * before it touches the driver. main points GEMMTUNE_LIBCUDA at a file that does not
 * exist before the first call, so this process never has a driver, on any machine: a
 * valid call must then come back GT_NO_DRIVER, and an early return (m == 0, nothing to
 * do) must come back GT_SUCCESS without an error message, proving it never tried.
 * Every case of the rules runs as sgemm (gemm_tuned, float; the case's own name) and as
 * dgemm (gemm_tuned_d, double; the name with "_d"): both share one implementation that
 * must not drift. The f64-only cases check what differs: pointers aligned to 8 bytes,
 * and double scalars that no float could hold.
 * The typed entry (gemm_tuned_ex, cases args_ex_*) through its public call only: its own
 * positions (cublasGemmEx's without the handle), enum values outside their enums
 * (GT_INVALID_VALUE at 8, 11, 15, 17), NULL scalars (6, 13), every supported and
 * unsupported combination of types (GT_NOT_SUPPORTED, no position), scalars read in the
 * compute type, and pointers aligned to their own element (2 bytes for 16-bit A and B,
 * 4 for a 32F C).
 * Also: status strings, the per-thread last error and its clearing.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "call.h"
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
    const gt_gemm g = {dt, c->opA, c->opB, c->m, c->n, c->k, c->alpha, c->beta, c->A, c->B,
                       c->C, c->lda, c->ldb, c->ldc, NULL};
    return gt_call_check(&gt_pos_blas, &g, act);
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
    TAP_CHECK(s == GT_INVALID_VALUE, "line %d: gt_call_check status %d, want INVALID_VALUE", line,
              s);
    TAP_CHECK(gt_last_error_arg() == pos, "line %d: gt_call_check position %d, want %d (%s)",
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
    TAP_CHECK(s == GT_SUCCESS, "line %d: gt_call_check status %d: %s", line, s, gt_last_error());
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

/* ===== gemm_tuned_ex ===== */

/* One gemm_tuned_ex call's arguments, in its order (the stream is always NULL). */
typedef struct {
    int opA, opB;
    int64_t m, n, k;
    const void *alpha;
    const void *A;
    int Atype;
    int64_t lda;
    const void *B;
    int Btype;
    int64_t ldb;
    const void *beta;
    void *C;
    int Ctype;
    int64_t ldc;
    int compute;
} ex_call;

static const float ex_one_f = 1.0f, ex_half_f = 0.5f, ex_zero_f = 0.0f;
static const double ex_one_d = 1.0, ex_half_d = 0.5;

/* A valid f16 (16F A, B, C; COMPUTE_32F) NN call of 10 x 20 x 30, minimal leading
 * dimensions, beta 0.5. */
static ex_call ex_base(void) {
    ex_call c = {GT_OP_N,   GT_OP_N,  10, 20,       30, &ex_one_f, PA,       GT_R_16F, 10,
                 PB,        GT_R_16F, 30, &ex_half_f, PC, GT_R_16F, 10, GT_COMPUTE_32F};
    return c;
}

static gt_status ex_public(const ex_call *c) {
    return gemm_tuned_ex((gt_op)c->opA, (gt_op)c->opB, c->m, c->n, c->k, c->alpha, c->A,
                         (gt_datatype)c->Atype, c->lda, c->B, (gt_datatype)c->Btype, c->ldb,
                         c->beta, c->C, (gt_datatype)c->Ctype, c->ldc,
                         (gt_compute_type)c->compute, NULL);
}

/* Expects GT_INVALID_VALUE at position pos, with a message naming the argument and its
 * position. */
#define EXPECT_EX_BAD(c, pos, name) expect_ex_bad(c, pos, name, __LINE__)
static void expect_ex_bad(const ex_call *c, int pos, const char *name, int line) {
    gt_status s = ex_public(c);
    TAP_CHECK(s == GT_INVALID_VALUE,
              "line %d: gemm_tuned_ex status %d (%s), want INVALID_VALUE: %s", line, s,
              gt_status_string(s), gt_last_error());
    TAP_CHECK(gt_last_error_arg() == pos, "line %d: position %d, want %d (%s)", line,
              gt_last_error_arg(), pos, gt_last_error());
    TAP_CHECK(names_word(gt_last_error(), name), "line %d: message '%s' does not name '%s'",
              line, gt_last_error(), name);
    char num[16];
    snprintf(num, sizeof num, "%d", pos);
    TAP_CHECK(names_word(gt_last_error(), num), "line %d: message '%s' lacks position %d", line,
              gt_last_error(), pos);
}

/* Expects GT_NOT_SUPPORTED: no position (every argument is valid on its own), and a
 * message that names the types given. */
#define EXPECT_EX_UNSUPPORTED(c, w1, w2) expect_ex_unsupported(c, w1, w2, __LINE__)
static void expect_ex_unsupported(const ex_call *c, const char *want1, const char *want2,
                                  int line) {
    gt_status s = ex_public(c);
    TAP_CHECK(s == GT_NOT_SUPPORTED,
              "line %d: gemm_tuned_ex status %d (%s), want NOT_SUPPORTED: %s", line, s,
              gt_status_string(s), gt_last_error());
    TAP_CHECK(gt_last_error_arg() == 0, "line %d: position %d for a valid but unsupported call",
              line, gt_last_error_arg());
    TAP_CHECK(strstr(gt_last_error(), want1) != NULL && strstr(gt_last_error(), want2) != NULL,
              "line %d: message '%s' lacks '%s' or '%s'", line, gt_last_error(), want1, want2);
}

/* Expects the call accepted: GT_SUCCESS without a message when there is nothing to do
 * (the driver never tried), else GT_NO_DRIVER (this process has none) with a message;
 * never a position. */
#define EXPECT_EX_OK(c, nothing) expect_ex_ok(c, nothing, __LINE__)
static void expect_ex_ok(const ex_call *c, int nothing, int line) {
    gt_status s = ex_public(c);
    if (nothing) {
        TAP_CHECK(s == GT_SUCCESS, "line %d: gemm_tuned_ex status %d (%s): %s", line, s,
                  gt_status_string(s), gt_last_error());
        TAP_CHECK(gt_last_error()[0] == 0,
                  "line %d: nothing to do, yet a message (touched the driver?): '%s'", line,
                  gt_last_error());
    } else {
        TAP_CHECK(s == GT_NO_DRIVER, "line %d: gemm_tuned_ex status %d (%s), want NO_DRIVER: %s",
                  line, s, gt_status_string(s), gt_last_error());
        TAP_CHECK(strstr(gt_last_error(), "gemmtune-no-such-libcuda") != NULL,
                  "line %d: message '%s' is not the missing driver's", line, gt_last_error());
    }
    TAP_CHECK(gt_last_error_arg() == 0, "line %d: position %d for a valid call", line,
              gt_last_error_arg());
}

static void args_ex_enums_out_of_range(void) {
    ex_call c = ex_base();
    c.Atype = 4;
    EXPECT_EX_BAD(&c, 8, "Atype");
    c.Atype = -1;
    EXPECT_EX_BAD(&c, 8, "Atype");
    c = ex_base();
    c.Btype = 4;
    EXPECT_EX_BAD(&c, 11, "Btype");
    c = ex_base();
    c.Ctype = 99;
    EXPECT_EX_BAD(&c, 15, "Ctype");
    c.Ctype = INT32_MIN;
    EXPECT_EX_BAD(&c, 15, "Ctype");
    c = ex_base();
    c.compute = 4;
    EXPECT_EX_BAD(&c, 17, "computeType");
    c.compute = -1;
    EXPECT_EX_BAD(&c, 17, "computeType");
    /* An enum value out of range is bad input even where the other types alone would be
     * an unsupported combination: INVALID_VALUE, not NOT_SUPPORTED. */
    c = ex_base();
    c.Atype = GT_R_32F, c.Btype = GT_R_16BF, c.Ctype = 7;
    EXPECT_EX_BAD(&c, 15, "Ctype");
}

static void args_ex_null_scalars(void) {
    ex_call c = ex_base();
    c.alpha = NULL;
    EXPECT_EX_BAD(&c, 6, "alpha");
    c = ex_base();
    c.beta = NULL;
    EXPECT_EX_BAD(&c, 13, "beta");
    /* Even with nothing to do: the scalars are read before anything else. */
    c = ex_base();
    c.m = 0;
    c.beta = NULL;
    EXPECT_EX_BAD(&c, 13, "beta");
}

static void args_ex_sizes_and_leading_dimensions(void) {
    ex_call c = ex_base(); /* m 10, n 20, k 30 */
    c.opA = 3;
    EXPECT_EX_BAD(&c, 1, "opA");
    c = ex_base();
    c.opB = -1;
    EXPECT_EX_BAD(&c, 2, "opB");
    c = ex_base();
    c.m = -1;
    EXPECT_EX_BAD(&c, 3, "m");
    c = ex_base();
    c.n = -5;
    EXPECT_EX_BAD(&c, 4, "n");
    c = ex_base();
    c.k = -1;
    EXPECT_EX_BAD(&c, 5, "k");
    /* gemm_tuned_ex's positions: lda 9, ldb 12, ldc 16 (not sgemm's 8, 10, 13). */
    c = ex_base();
    c.lda = 9;
    EXPECT_EX_BAD(&c, 9, "lda");
    c.opA = GT_OP_T; /* A stored k x m: lda >= k = 30 */
    c.lda = 10;
    EXPECT_EX_BAD(&c, 9, "lda");
    c = ex_base();
    c.ldb = 29;
    EXPECT_EX_BAD(&c, 12, "ldb");
    c = ex_base();
    c.ldc = 9;
    EXPECT_EX_BAD(&c, 16, "ldc");
    c.ldc = 0;
    EXPECT_EX_BAD(&c, 16, "ldc");
    /* A size and a leading dimension wrong at once: the lower position (3, m). */
    c = ex_base();
    c.m = -3, c.ldc = 0;
    EXPECT_EX_BAD(&c, 3, "m");
    c = ex_base();
    c.lda = 1, c.ldc = 1;
    EXPECT_EX_BAD(&c, 9, "lda");
}

static void args_ex_null_pointers(void) {
    ex_call c = ex_base();
    c.A = NULL;
    EXPECT_EX_BAD(&c, 7, "A");
    c = ex_base();
    c.B = NULL;
    EXPECT_EX_BAD(&c, 10, "B");
    c = ex_base();
    c.C = NULL;
    EXPECT_EX_BAD(&c, 14, "C");
    /* All three: A, the lowest position, first. */
    c.A = NULL, c.B = NULL;
    EXPECT_EX_BAD(&c, 7, "A");
    c.A = PA;
    EXPECT_EX_BAD(&c, 10, "B");
}

static void args_ex_pointer_alignment(void) {
    /* 16-bit A and B: 2 bytes are enough, an odd address is not. */
    ex_call c = ex_base();
    c.A = (const void *)(uintptr_t)0x1001;
    EXPECT_EX_BAD(&c, 7, "A");
    TAP_CHECK(strstr(gt_last_error(), "aligned to 2 bytes") != NULL,
              "message '%s' does not say 2 bytes", gt_last_error());
    c = ex_base();
    c.B = (const void *)(uintptr_t)0x2003;
    EXPECT_EX_BAD(&c, 10, "B");
    c = ex_base();
    c.C = (void *)(uintptr_t)0x3001;
    EXPECT_EX_BAD(&c, 14, "C");
    c = ex_base();
    c.A = (const void *)(uintptr_t)0x1002;
    c.B = (const void *)(uintptr_t)0x2006;
    c.C = (void *)(uintptr_t)0x300a;
    EXPECT_EX_OK(&c, 0);
    /* f16_f32 and bf16_f32: 16-bit A and B at 2 (mod 4) are fine, a 32F C there is not. */
    const int ab[2] = {GT_R_16F, GT_R_16BF};
    for (int i = 0; i < 2; i++) {
        c = ex_base();
        c.Atype = c.Btype = ab[i], c.Ctype = GT_R_32F;
        c.A = (const void *)(uintptr_t)0x1002;
        c.B = (const void *)(uintptr_t)0x2002;
        EXPECT_EX_OK(&c, 0);
        c.C = (void *)(uintptr_t)0x3002;
        EXPECT_EX_BAD(&c, 14, "C");
        TAP_CHECK(strstr(gt_last_error(), "aligned to 4 bytes") != NULL,
                  "message '%s' does not say 4 bytes", gt_last_error());
        c.C = (void *)(uintptr_t)0x3004;
        EXPECT_EX_OK(&c, 0);
    }
    /* 32F A (tf32) wants 4 bytes, 64F A 8. */
    c = ex_base();
    c.Atype = c.Btype = c.Ctype = GT_R_32F, c.compute = GT_COMPUTE_32F_FAST_TF32;
    c.A = (const void *)(uintptr_t)0x1002;
    EXPECT_EX_BAD(&c, 7, "A");
    c = ex_base();
    c.Atype = c.Btype = c.Ctype = GT_R_64F, c.compute = GT_COMPUTE_64F;
    c.alpha = &ex_one_d, c.beta = &ex_half_d;
    c.B = (const void *)(uintptr_t)0x2004;
    EXPECT_EX_BAD(&c, 10, "B");
    TAP_CHECK(strstr(gt_last_error(), "8 bytes") != NULL, "message '%s' does not say 8 bytes",
              gt_last_error());
}

/* Every combination of the four element types and four compute types: exactly those of
 * gemmtune.h's table are accepted, every other one is NOT_SUPPORTED. */
static void args_ex_combinations(void) {
    static const struct {
        int ab, c, compute;
    } supported[] = {
        {GT_R_32F, GT_R_32F, GT_COMPUTE_32F},   {GT_R_32F, GT_R_32F, GT_COMPUTE_32F_FAST_TF32},
        {GT_R_64F, GT_R_64F, GT_COMPUTE_64F},   {GT_R_16F, GT_R_16F, GT_COMPUTE_32F},
        {GT_R_16F, GT_R_32F, GT_COMPUTE_32F},   {GT_R_16BF, GT_R_16BF, GT_COMPUTE_32F},
        {GT_R_16BF, GT_R_32F, GT_COMPUTE_32F},  {GT_R_32F, GT_R_32F, GT_COMPUTE_32F_EMULATED_3XTF32},
    };
    static const char *tname[4] = {"32F", "64F", "16F", "16BF"};
    int accepted = 0;
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++)
            for (int cc = 0; cc < 4; cc++)
                for (int comp = 0; comp < 4; comp++) {
                    ex_call c = ex_base();
                    c.Atype = a, c.Btype = b, c.Ctype = cc, c.compute = comp;
                    /* Scalars of the compute type. */
                    if (comp == GT_COMPUTE_64F) c.alpha = &ex_one_d, c.beta = &ex_half_d;
                    int want = 0;
                    for (size_t i = 0; i < sizeof supported / sizeof supported[0]; i++)
                        want |= supported[i].ab == a && supported[i].ab == b &&
                                supported[i].c == cc && supported[i].compute == comp;
                    gt_status s = ex_public(&c);
                    if (want) {
                        accepted++;
                        TAP_CHECK(s == GT_NO_DRIVER && gt_last_error_arg() == 0,
                                  "A %s B %s C %s compute %d: status %d (%s): %s", tname[a],
                                  tname[b], tname[cc], comp, s, gt_status_string(s),
                                  gt_last_error());
                    } else {
                        TAP_CHECK(s == GT_NOT_SUPPORTED && gt_last_error_arg() == 0,
                                  "A %s B %s C %s compute %d: status %d (%s), position %d, "
                                  "want NOT_SUPPORTED: %s",
                                  tname[a], tname[b], tname[cc], comp, s, gt_status_string(s),
                                  gt_last_error_arg(), gt_last_error());
                        TAP_CHECK(strstr(gt_last_error(), "supported") != NULL,
                                  "A %s B %s C %s compute %d: message '%s'", tname[a], tname[b],
                                  tname[cc], comp, gt_last_error());
                    }
                }
    TAP_CHECK(accepted == 8, "%d combinations accepted, want 8", accepted);
    /* The ones the issue names, with messages that name the types. */
    ex_call c = ex_base();
    c.Btype = GT_R_16BF; /* A 16F, B 16BF */
    EXPECT_EX_UNSUPPORTED(&c, "16F", "16BF");
    c = ex_base();
    c.compute = GT_COMPUTE_64F, c.alpha = &ex_one_d, c.beta = &ex_half_d;
    EXPECT_EX_UNSUPPORTED(&c, "16F", "COMPUTE_64F");
    c = ex_base();
    c.Atype = c.Btype = GT_R_32F; /* C 16F */
    EXPECT_EX_UNSUPPORTED(&c, "32F", "16F");
    /* tf32 is an opt-in of 32F data only. */
    c = ex_base();
    c.compute = GT_COMPUTE_32F_FAST_TF32;
    EXPECT_EX_UNSUPPORTED(&c, "16F", "COMPUTE_32F_FAST_TF32");
}

static void args_ex_scalars_in_compute_type(void) {
    /* COMPUTE_32F: alpha is a float 0, so A and B are not read (NULL is fine) and C is
     * scaled; with beta a float 1 there is nothing to do at all. (Were the floats read as
     * doubles, neither would be 0 or 1, and the NULL A would be refused.) */
    ex_call c = ex_base();
    c.alpha = &ex_zero_f;
    c.A = NULL, c.B = NULL;
    EXPECT_EX_OK(&c, 0);
    c.beta = &ex_one_f;
    c.C = NULL;
    EXPECT_EX_OK(&c, 1);
    /* COMPUTE_64F: the scalars are doubles. A double 1e-300 is not zero (though no float
     * holds it), so A is read; a double 1 as beta with alpha 0 is nothing to do. */
    static const double tiny = 1e-300, zero_d = 0.0;
    c = ex_base();
    c.Atype = c.Btype = c.Ctype = GT_R_64F, c.compute = GT_COMPUTE_64F;
    c.alpha = &tiny, c.beta = &ex_half_d;
    c.A = NULL;
    EXPECT_EX_BAD(&c, 7, "A");
    c.alpha = &zero_d, c.beta = &ex_one_d;
    c.C = NULL;
    EXPECT_EX_OK(&c, 1);
}

static void args_ex_nothing_to_do(void) {
    /* m == 0 or n == 0: GT_SUCCESS, nothing launched, no driver needed, for every
     * supported combination and even with NULL pointers. */
    const int types[8][3] = {
        {GT_R_32F, GT_R_32F, GT_COMPUTE_32F},   {GT_R_32F, GT_R_32F, GT_COMPUTE_32F_FAST_TF32},
        {GT_R_64F, GT_R_64F, GT_COMPUTE_64F},   {GT_R_16F, GT_R_16F, GT_COMPUTE_32F},
        {GT_R_16F, GT_R_32F, GT_COMPUTE_32F},   {GT_R_16BF, GT_R_16BF, GT_COMPUTE_32F},
        {GT_R_16BF, GT_R_32F, GT_COMPUTE_32F},  {GT_R_32F, GT_R_32F, GT_COMPUTE_32F_EMULATED_3XTF32}};
    for (int i = 0; i < 8; i++) {
        ex_call c = ex_base();
        c.Atype = c.Btype = types[i][0], c.Ctype = types[i][1], c.compute = types[i][2];
        if (c.compute == GT_COMPUTE_64F) c.alpha = &ex_one_d, c.beta = &ex_half_d;
        c.m = 0;
        EXPECT_EX_OK(&c, 1);
        c.A = NULL, c.B = NULL, c.C = NULL;
        EXPECT_EX_OK(&c, 1);
        c = ex_base();
        c.Atype = c.Btype = types[i][0], c.Ctype = types[i][1], c.compute = types[i][2];
        if (c.compute == GT_COMPUTE_64F) c.alpha = &ex_one_d, c.beta = &ex_half_d;
        c.n = 0;
        EXPECT_EX_OK(&c, 1);
        /* ... and a real product gets as far as the (missing) driver. */
        c.n = 20;
        EXPECT_EX_OK(&c, 0);
    }
    /* A success clears an earlier failure's message and position. */
    ex_call bad = ex_base(), nothing = ex_base();
    bad.ldc = 1;
    nothing.m = 0;
    gt_status s = ex_public(&bad);
    TAP_CHECK(s == GT_INVALID_VALUE && gt_last_error_arg() == 16, "bad ldc: %d, position %d", s,
              gt_last_error_arg());
    EXPECT_EX_OK(&nothing, 1);
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
    TAP_RUN(args_ex_enums_out_of_range);
    TAP_RUN(args_ex_null_scalars);
    TAP_RUN(args_ex_sizes_and_leading_dimensions);
    TAP_RUN(args_ex_null_pointers);
    TAP_RUN(args_ex_pointer_alignment);
    TAP_RUN(args_ex_combinations);
    TAP_RUN(args_ex_scalars_in_compute_type);
    TAP_RUN(args_ex_nothing_to_do);
    TAP_RUN(args_status_strings);
    TAP_RUN_BOTH(args_no_driver_message);
    TAP_RUN_BOTH(args_last_error_cleared_by_success);
    TAP_RUN(args_version);
    return tap_done();
}
