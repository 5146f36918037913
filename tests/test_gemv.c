/*
 * test_gemv.c: the GEMV family (kernel_src/gemm_gemv.cu) on the GPU.
 *
 * For every data type, every op pair and each orientation (N small with M long, M small
 * with N long, and both small with a long K), the cost model's best GEMV candidate
 * without split-K and with it, on tensor cores (TCORE) and not where the key allows both,
 * each compiled exact and shape-generic, runs on
 *  - a 16-byte class (leading dimensions rounded up to 16 bytes: 16-byte vector loads),
 *  - the element class: leading dimensions padded by one element and A's pointer one
 *    element past an aligned address, with K odd (not a multiple of any vector width);
 * M or N is 1 in some shapes and beta is nonzero in some. Each result is graded against
 * the float64 reference (prob.h's bounds), and on the 16-byte class the generic kernel's
 * bits equal the exact one's.
 * The default run takes f32, f64, bf16 and f16; `--all` (suite sweep) adds the types that
 * share their kernels' paths: f16_f32, bf16_f32, tf32 and f32_3xtf32.
 * Without a GPU every case says "skipped: no CUDA device".
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_probe.h"
#include "kprogs.h"
#include "tap.h"

GPU_TEST_STATE();

/* One shape of a case. */
typedef struct shape3 {
    long long m, n, k;
} shape3;

/* Per program of a data type's batch: its op pair, shape and class. */
typedef struct progs_of {
    int op[KPROGS_MAX], shape[KPROGS_MAX], narrow[KPROGS_MAX];
} progs_of;

/* Rounds rows up to a multiple of 16 bytes of elements of es bytes, less rows: the pad. */
static long long pad16(long long rows, int es) {
    long long per = 16 / es, r = rows > 1 ? rows : 1;
    return (r + per - 1) / per * per - r;
}

/* The problem: the 16-byte class (narrow 0) or the element class (narrow 1: each leading
 * dimension one element longer, A read from one element past its allocation's start). */
static prob problem_of(int dt, int op, const shape3 *s, int narrow) {
    prob p;
    int es = (int)gr_size(gt_dtype_in(dt)), ec = (int)gr_size(gt_dtype_out(dt));
    int opa = op & 1, opb = op >> 1;
    long long pa = narrow ? 1 : pad16(opa ? s->k : s->m, es);
    long long pb = narrow ? 1 : pad16(opb ? s->n : s->k, es);
    long long pc = narrow ? 1 : pad16(s->m, ec);
    /* beta nonzero for two op pairs, zero for the others. */
    prob_init(&p, dt, opa, opb, s->m, s->n, s->k, pa, pb, pc, 0.75, op == 1 || op == 2 ? -0.5 : 0.0);
    if (narrow) {
        /* The device A starts one element in: the host copy moves to match (prob_init
         * allocates one element more than A needs). */
        size_t na = (size_t)(p.lda * (opa ? s->m : s->k));
        memmove(p.A, (char *)p.A + p.ea, na * p.ea);
    }
    return p;
}

static gt_gemm gemm_of(const prob *p, int narrow) {
    gt_gemm g = prob_gemm(p, p->dC);
    if (narrow) g.A = GT_PTR(p->dA + p->ea);
    return g;
}

/* Shapes: N small (1 and 3), M small (1 and 5), both small with a long K. K is odd. */
static const shape3 shapes[] = {{777, 1, 1001}, {1003, 3, 517}, {1, 999, 1003},
                                {5, 515, 777}, {4, 8, 20001}};
#define NSHAPES ((int)(sizeof shapes / sizeof shapes[0]))

static void gemv_case(int dt, int *ran, int *split_ran, int *tcore_ran) {
    static kprogs ps;
    static progs_of of;
    memset(&ps, 0, sizeof ps);
    gt_devctx *dc = NULL;
    for (int op = 0; op < 4; op++)
        for (int si = 0; si < NSHAPES; si++)
            for (int narrow = 0; narrow < 2; narrow++) {
                prob p = problem_of(dt, op, &shapes[si], narrow);
                const gt_gemm g = gemm_of(&p, narrow);
                gt_key key;
                int ok = current_devctx(&dc) == GT_SUCCESS;
                if (ok) gt_call_key(dc, &g, &key);
                prob_free(&p);
                TAP_CHECK(ok, "device state: %s", gt_last_error());
                if (!ok) return;
                TAP_CHECK(narrow ? key.align == (int)gr_size(gt_dtype_in(dt)) : key.align >= 16,
                          "%s class %d bytes", narrow ? "element" : "16-byte", key.align);
                for (int v = 0; v < 4; v++) {
                    const int split = v & 1, tcore = v >> 1;
                    gt_kcfg c;
                    if (!kprogs_best(&key, dc, GT_FAM_GEMV, split, tcore, &c) || ps.n + 2 > KPROGS_MAX)
                        continue;
                    /* The generic twin on the 16-byte class (the other class's code paths
                     * are the same in both). */
                    for (int gen = 0; gen < (narrow ? 1 : 2); gen++) {
                        ps.key[ps.n] = key, ps.cfg[ps.n] = c, ps.cfg[ps.n].generic = gen;
                        of.op[ps.n] = op, of.shape[ps.n] = si, of.narrow[ps.n] = narrow;
                        ps.n++;
                    }
                }
            }
    ps.arch = dc->arch;
    kprogs_compile(&ps);
    for (int i = 0; i < ps.n; i += of.narrow[i] ? 1 : 2) {
        const shape3 *s = &shapes[of.shape[i]];
        prob p = problem_of(dt, of.op[i], s, of.narrow[i]);
        const gt_gemm g = gemm_of(&p, of.narrow[i]);
        gr_ref ref;
        prob_reference(&p, &ref);
        char text[96], name[240];
        gt_kcfg_format(&ps.cfg[i], text, sizeof text);
        snprintf(name, sizeof name, "%s %lldx%lldx%lld:%c%c %s class %s", gt_dtype_name(dt), s->m,
                 s->n, s->k, of.op[i] & 1 ? 'T' : 'N', of.op[i] >> 1 ? 'T' : 'N',
                 of.narrow[i] ? "element" : "16-byte", text);
        /* The generic twin on the 16-byte class only. */
        if (kprogs_check(&ps, i, !of.narrow[i], &p, &g, &ref, name)) {
            (*ran)++;
            *split_ran += ps.cfg[i].split > 1;
            *tcore_ran += ps.cfg[i].tcore;
        }
        gr_ref_free(&ref);
        prob_free(&p);
    }
    kprogs_free(&ps);
}

/* Every op pair, shape and class of one type: at least one GEMV kernel per combination
 * (4 x 5 x 2) and some split-K ones. */
#define GEMV_TYPE_CASE(fn, dt)                                                           \
    static void fn(void) {                                                               \
        NEED_GPU();                                                                      \
        int ran = 0, split = 0, tcore = 0;                                               \
        gemv_case(dt, &ran, &split, &tcore);                                             \
        TAP_CHECK(ran >= 4 * NSHAPES * 2, "%d GEMV kernels checked", ran);               \
        TAP_CHECK(split >= 4, "%d of them split K", split);                              \
        TAP_CHECK(gr_size(gt_dtype_in(dt)) != 2 || tcore >= 8, "%d on tensor cores", tcore); \
        printf("# %s: %d GEMV configurations checked, %d split K, %d on tensor cores\n",    \
               gt_dtype_name(dt), ran, split, tcore);                                    \
    }
GEMV_TYPE_CASE(gemv_f32, GT_DT_F32)
GEMV_TYPE_CASE(gemv_f64, GT_DT_F64)
GEMV_TYPE_CASE(gemv_bf16, GT_DT_BF16)
GEMV_TYPE_CASE(gemv_f16, GT_DT_F16)
GEMV_TYPE_CASE(gemv_f16_f32, GT_DT_F16_F32)
GEMV_TYPE_CASE(gemv_bf16_f32, GT_DT_BF16_F32)
GEMV_TYPE_CASE(gemv_tf32, GT_DT_TF32)
GEMV_TYPE_CASE(gemv_f32_3xtf32, GT_DT_F32_3XTF32)

int main(int argc, char **argv) {
    gpu_state = gpu_probe(no_gpu_reason, sizeof no_gpu_reason, 1);
    TAP_RUN(gemv_f32);
    TAP_RUN(gemv_f64);
    TAP_RUN(gemv_bf16);
    TAP_RUN(gemv_f16);
    if (argc > 1 && strcmp(argv[1], "--all") == 0) {
        TAP_RUN(gemv_f16_f32);
        TAP_RUN(gemv_bf16_f32);
        TAP_RUN(gemv_tf32);
        TAP_RUN(gemv_f32_3xtf32);
    }
    gt_release();
    return tap_done();
}
