/*
 * test_stage.c: which operands a call stages into aligned copies (src/stage.c's
 * gt_stage_plan), no GPU needed.
 *
 * Cases: a byte-bound call with a small narrow activation and output beside a 16-byte
 * aligned weight stages those two, not the weight, with their leading dimensions rounded
 * up to 16 bytes and their copies laid out apart; the staged call (gt_stage_apply) is in
 * the 16-byte class; a call already in that class, one whose every operand is narrow and
 * large, one whose narrow part is the large weight, one whose narrow operands are one
 * row (m = 1: GEMV's) and one whose copies would pass the memory bound stage nothing; a C that is read (beta != 0) costs a copy in as well.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "call.h"
#include "stage.h"
#include "tap.h"

/* A call of dtype dt with device addresses that are 256-byte aligned unless offset. */
static gt_gemm call(int dt, int opa, int opb, int64_t m, int64_t n, int64_t k, int64_t lda,
                    int64_t ldb, int64_t ldc, double beta) {
    gt_gemm g;
    memset(&g, 0, sizeof g);
    g.dtype = dt, g.opa = opa, g.opb = opb, g.m = m, g.n = n, g.k = k;
    g.alpha = 1.0, g.beta = beta;
    g.A = (const void *)(uintptr_t)0x7f0000000000ull;
    g.B = (const void *)(uintptr_t)0x7f1000000000ull;
    g.C = (void *)(uintptr_t)0x7f2000000000ull;
    g.lda = lda, g.ldb = ldb, g.ldc = ldc;
    return g;
}

/* The class of g's three operands, as gt_call_key computes it. */
static int class_of(const gt_gemm *g) {
    uintptr_t p[2] = {(uintptr_t)g->A, (uintptr_t)g->B}, c = (uintptr_t)g->C;
    int64_t ld[2] = {g->lda, g->ldb};
    int ab = gt_key_align_class(p, 2, ld, 2, gt_dtype_in_size(g->dtype));
    int cc = gt_key_align_class(&c, 1, &g->ldc, 1, gt_dtype_out_size(g->dtype));
    return ab < cc ? ab : cc;
}

static void stage_small_narrow_beside_wide_weight(void) {
    /* 77 tokens against a 128256 x 4096 weight stored N x K (NT), bf16: A (77 x 4096,
     * lda 77) and C (77 x 128256, ldc 77) are 2-byte aligned, B 16-byte. */
    gt_gemm g = call(GT_DT_BF16, GT_OP_N, GT_OP_T, 77, 128256, 4096, 77, 128256, 77, 0.0);
    TAP_CHECK(class_of(&g) == 2, "class %d", class_of(&g));
    gt_stage st;
    TAP_CHECK(gt_stage_plan(&g, class_of(&g), &st) == 1, "not staged");
    TAP_CHECK(st.a && !st.b && st.c, "staged a %d b %d c %d", st.a, st.b, st.c);
    TAP_CHECK(st.lda == 80 && st.ldc == 80, "lda %lld ldc %lld (want 80: 160 bytes)",
              (long long)st.lda, (long long)st.ldc);
    /* A's copy (80 x 4096 x 2 bytes), then C's, each 256-byte aligned, nothing overlapping. */
    TAP_CHECK(st.off_a == 0 && st.off_c == 80 * 4096 * 2 && st.off_c % 256 == 0,
              "off_a %zu off_c %zu", st.off_a, st.off_c);
    TAP_CHECK(st.bytes >= st.off_c + (size_t)80 * 128256 * 2 && st.bytes % 256 == 0,
              "bytes %zu", st.bytes);
    gt_gemm s;
    gt_stage_apply(&st, &g, 0x7f3000000000ull, &s);
    TAP_CHECK(class_of(&s) == 16, "staged class %d", class_of(&s));
    TAP_CHECK(s.B == g.B && s.ldb == g.ldb && s.m == g.m && s.n == g.n && s.k == g.k &&
                  s.beta == g.beta && s.dtype == g.dtype,
              "the staged call differs beyond A and C");
    TAP_CHECK((uintptr_t)s.A == 0x7f3000000000ull + st.off_a &&
                  (uintptr_t)s.C == 0x7f3000000000ull + st.off_c,
              "staged pointers");
    /* The same in f32 with A transposed (stored 4096 x 77, lda 4097): a copy's ld is its
     * rows rounded up to 16 bytes, 4096 for A, 80 for C. */
    g = call(GT_DT_F32, GT_OP_T, GT_OP_T, 77, 128256, 4096, 4097, 128256, 77, 0.0);
    TAP_CHECK(gt_stage_plan(&g, class_of(&g), &st) == 1 && st.a && !st.b && st.c &&
                  st.lda == 4096 && st.ldc == 80,
              "f32 TT: a %d b %d c %d lda %lld ldc %lld", st.a, st.b, st.c, (long long)st.lda,
              (long long)st.ldc);
}

static void stage_where_the_narrow_class_costs_most(void) {
    /* bf16 77 x 14336 x 4096 NT (lda = ldc = 77) and 4096 x 14336 x 77 TN (lda = ldb =
     * 77): a 117 MB operand or output in the 16-byte class, the narrow ones 3 MB. */
    gt_stage st;
    gt_gemm g = call(GT_DT_BF16, GT_OP_N, GT_OP_T, 77, 14336, 4096, 77, 14336, 77, 0.0);
    TAP_CHECK(gt_stage_plan(&g, class_of(&g), &st) == 1 && st.a && !st.b && st.c,
              "77x14336x4096 NT: a %d b %d c %d", st.a, st.b, st.c);
    g = call(GT_DT_BF16, GT_OP_T, GT_OP_N, 4096, 14336, 77, 77, 77, 4096, 0.0);
    TAP_CHECK(gt_stage_plan(&g, class_of(&g), &st) == 1 && st.a && st.b && !st.c &&
                  st.lda == 80 && st.ldb == 80,
              "4096x14336x77 TN: a %d b %d c %d lda %lld ldb %lld", st.a, st.b, st.c,
              (long long)st.lda, (long long)st.ldb);
    /* An 8-byte class loses least (a quarter of the product's time in the model): f32
     * 78 x 14336 x 4096 (lda = ldc = 78: 312 bytes), 150 us of FFMA, is staged for copies
     * of about 11 us; with K = 512 (19 us) it is not. */
    g = call(GT_DT_F32, GT_OP_N, GT_OP_T, 78, 14336, 4096, 78, 14336, 78, 0.0);
    TAP_CHECK(class_of(&g) == 8 && gt_stage_plan(&g, 8, &st) == 1, "f32 class %d not staged",
              class_of(&g));
    g.k = 512;
    TAP_CHECK(gt_stage_plan(&g, 8, &st) == 0, "f32 K = 512 staged");
}

static void stage_nothing_where_it_does_not_pay(void) {
    gt_stage st;
    /* Already 16-byte aligned. */
    gt_gemm g = call(GT_DT_BF16, GT_OP_T, GT_OP_N, 4096, 77, 4096, 4096, 4096, 4096, 0.0);
    TAP_CHECK(class_of(&g) == 16 && gt_stage_plan(&g, 16, &st) == 0 && !st.a && !st.c,
              "aligned call staged");
    /* Every operand narrow and of the same size as the product's bytes. */
    g = call(GT_DT_F32, GT_OP_T, GT_OP_T, 4099, 257, 3001, 3001, 257, 4099, 0.0);
    TAP_CHECK(gt_stage_plan(&g, class_of(&g), &st) == 0, "all narrow: staged a %d b %d c %d",
              st.a, st.b, st.c);
    /* The narrow operand is the large weight (ld 4097 of a 4097 x 4096 bf16 A). */
    g = call(GT_DT_BF16, GT_OP_N, GT_OP_N, 4097, 16, 4096, 4097, 4096, 4104, 0.0);
    TAP_CHECK(gt_stage_plan(&g, class_of(&g), &st) == 0, "narrow weight staged");
    /* One row (m = 1, lda = ldc = 1): A and C are vectors, the call GEMV's. */
    g = call(GT_DT_BF16, GT_OP_N, GT_OP_T, 1, 12288, 4096, 1, 12288, 1, 0.0);
    TAP_CHECK(class_of(&g) == 2 && gt_stage_plan(&g, 2, &st) == 0, "a one-row A and C staged");
    /* Copies beyond GT_STAGE_MAX_BYTES: C of 3 x 2^26 f32 (768 MiB) narrow. */
    g = call(GT_DT_F32, GT_OP_N, GT_OP_T, 3, 67108864, 65536, 3, 67108864, 3, 0.0);
    TAP_CHECK(gt_stage_plan(&g, class_of(&g), &st) == 0, "768 MiB of copies staged");
}

static void stage_reads_c_when_beta_is_not_zero(void) {
    /* A small output with a huge K, A padded to 8 rows (aligned), C narrow (5 x 8):
     * C alone staged. With lda = 5 the narrow A is the 60 MB operand: nothing. */
    gt_stage st;
    gt_gemm g = call(GT_DT_F32, GT_OP_N, GT_OP_N, 5, 8, 3000000, 8, 3000000, 5, 0.0);
    TAP_CHECK(gt_stage_plan(&g, class_of(&g), &st) == 1 && !st.a && !st.b && st.c,
              "5x8x3e6 beta 0: a %d b %d c %d", st.a, st.b, st.c);
    g.lda = 5;
    TAP_CHECK(gt_stage_plan(&g, class_of(&g), &st) == 0, "5x8x3e6 lda 5 staged");
    /* A small call (64 x 8192 x 64 bf16 NN, lda = ldc = 65: 2 MB in all): the copies'
     * launches alone cost more than the narrow class would, with beta zero or not. */
    g = call(GT_DT_BF16, GT_OP_N, GT_OP_N, 64, 8192, 64, 65, 64, 65, 0.0);
    const int beta0 = gt_stage_plan(&g, class_of(&g), &st);
    g.beta = 1.0;
    const int beta1 = gt_stage_plan(&g, class_of(&g), &st);
    TAP_CHECK(beta0 == 0 && beta1 == 0, "small call staged (beta 0: %d, beta 1: %d)", beta0,
              beta1);
    /* 16 x 1048576 x 4096 bf16 TN, C narrow (ldc 17): staged with beta 0 and with beta 1,
     * the copy in making the second costlier; both far below the bound. */
    g = call(GT_DT_BF16, GT_OP_T, GT_OP_N, 16, 1048576, 4096, 4096, 4096, 17, 0.0);
    TAP_CHECK(gt_stage_plan(&g, class_of(&g), &st) == 1 && !st.a && !st.b && st.c,
              "narrow C, beta 0: a %d b %d c %d", st.a, st.b, st.c);
    g.beta = 0.5;
    TAP_CHECK(gt_stage_plan(&g, class_of(&g), &st) == 1 && st.c, "narrow C, beta 0.5");
}

int main(void) {
    TAP_RUN(stage_small_narrow_beside_wide_weight);
    TAP_RUN(stage_where_the_narrow_class_costs_most);
    TAP_RUN(stage_nothing_where_it_does_not_pay);
    TAP_RUN(stage_reads_c_when_beta_is_not_zero);
    return tap_done();
}
