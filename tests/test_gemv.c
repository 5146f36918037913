/*
 * test_gemv.c: the GEMV family (kernel_src/gemm_gemv.cu) on the GPU.
 *
 * For every data type, every op pair and each orientation (N small with M long, M small
 * with N long, and both small with a long K), the cost model's best GEMV candidate
 * without split-K and with it, each compiled exact and shape-generic, runs on
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
#include <unistd.h>

#include "gpu_probe.h"
#include "pool.h"
#include "prob.h"
#include "space.h"
#include "tap.h"

static int gpu_state;
static char no_gpu_reason[200];
#define NEED_GPU() GPU_NEED(gpu_state, no_gpu_reason)

/* One shape of a case: the three sizes and whether it keeps the 16-byte class. */
typedef struct shape3 {
    long long m, n, k;
} shape3;

/* The programs of one data type: per op pair, shape and class, GEMV's best unsplit and
 * split candidates, exact (even entries) and generic (the next one). */
#define MAX_PROGS 256
typedef struct progs {
    int n, arch;
    gt_key key[MAX_PROGS];
    gt_kcfg cfg[MAX_PROGS];
    int op[MAX_PROGS], shape[MAX_PROGS], narrow[MAX_PROGS];
    gt_rtc_result res[MAX_PROGS];
    gt_status st[MAX_PROGS];
} progs;

static void compile_one(int i, void *user) {
    progs *p = user;
    p->st[i] = gt_kern_compile(&p->cfg[i], &p->key[i], p->arch, &p->res[i]);
}

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

/* GEMV's best candidate for key with split-K or without; 0 when there is none. */
static int pick(const gt_key *key, gt_devctx *dc, int split, gt_kcfg *out) {
    gt_klimits lim;
    gt_kern_limits(dc, &lim);
    gt_cand *c = NULL;
    gt_space_counts counts;
    int n = gt_space_build(key, &lim, 0, 0, &c, &counts), found = 0;
    for (int i = 0; i < n && !found; i++)
        if (c[i].cfg.fam == GT_FAM_GEMV && (c[i].cfg.split > 1) == split) *out = c[i].cfg, found = 1;
    free(c);
    return found;
}

static int run_prog(prob *p, progs *ps, int i, char *why, size_t size) {
    gt_kern k;
    gt_status s = ps->st[i];
    if (s == GT_SUCCESS) s = gt_kern_load(ps->res[i].image, &ps->cfg[i], &ps->key[i], &k);
    if (s == GT_SUCCESS) {
        prob_reset_c(p);
        const gt_gemm g = gemm_of(p, ps->narrow[i]);
        /* Split-K: the default stream's workspace (runtime/work.c), as gemm_tuned uses. */
        s = gt_kern_run(&k, &g, 0);
        if (s == GT_SUCCESS && gt_cu.ctx_synchronize() != CUDA_SUCCESS) s = GT_CUDA_ERROR;
        gt_kern_unload(&k);
    }
    if (s != GT_SUCCESS) {
        snprintf(why, size, "%s: %s", gt_status_string(s), gt_last_error());
        return -1;
    }
    prob_fetch_c(p, p->dC);
    return 0;
}

/* Shapes: N small (1 and 3), M small (1 and 5), both small with a long K. K is odd. */
static const shape3 shapes[] = {{777, 1, 1001}, {1003, 3, 517}, {1, 999, 1003},
                                {5, 515, 777}, {4, 8, 20001}};
#define NSHAPES ((int)(sizeof shapes / sizeof shapes[0]))

static void gemv_case(int dt, int *ran, int *split_ran) {
    static progs ps;
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
                for (int split = 0; split < 2; split++) {
                    gt_kcfg c;
                    if (!pick(&key, dc, split, &c) || ps.n + 2 > MAX_PROGS) continue;
                    /* The generic twin on the 16-byte class (the other class's code paths
                     * are the same in both). */
                    for (int gen = 0; gen < (narrow ? 1 : 2); gen++) {
                        ps.key[ps.n] = key, ps.cfg[ps.n] = c, ps.cfg[ps.n].generic = gen;
                        ps.op[ps.n] = op, ps.shape[ps.n] = si, ps.narrow[ps.n] = narrow;
                        ps.n++;
                    }
                }
            }
    ps.arch = dc->arch;
    gt_pool_run(ps.n, 0, compile_one, &ps);
    for (int i = 0; i < ps.n; i += ps.narrow[i] ? 1 : 2) {
        const shape3 *s = &shapes[ps.shape[i]];
        prob p = problem_of(dt, ps.op[i], s, ps.narrow[i]);
        gr_ref ref;
        prob_reference(&p, &ref);
        char text[96], why[400], name[240];
        gt_kcfg_format(&ps.cfg[i], text, sizeof text);
        snprintf(name, sizeof name, "%s %lldx%lldx%lld:%c%c %s class %s", gt_dtype_name(dt), s->m,
                 s->n, s->k, ps.op[i] & 1 ? 'T' : 'N', ps.op[i] >> 1 ? 'T' : 'N',
                 ps.narrow[i] ? "element" : "16-byte", text);
        size_t bytes = c_bytes(&p);
        void *want = malloc(bytes);
        int ok = run_prog(&p, &ps, i, why, sizeof why) == 0;
        TAP_CHECK(ok, "%s: exact kernel: %s", name, why);
        if (ok) {
            gr_result res;
            TAP_CHECK(prob_grade(&p, &ref, &res) <= 1.0, "%s: exact wrong: %s", name, res.text);
            memcpy(want, p.C, bytes);
        }
        const int twin = !ps.narrow[i];
        int gok = ok && (!twin || run_prog(&p, &ps, i + 1, why, sizeof why) == 0);
        TAP_CHECK(!ok || gok, "%s: generic kernel: %s", name, why);
        if (gok && twin) {
            gr_result res;
            TAP_CHECK(prob_grade(&p, &ref, &res) <= 1.0, "%s: generic wrong: %s", name, res.text);
            TAP_CHECK(memcmp(want, p.C, bytes) == 0, "%s: generic and exact differ", name);
        }
        if (gok) {
            (*ran)++;
            *split_ran += ps.cfg[i].split > 1;
        }
        free(want);
        gr_ref_free(&ref);
        prob_free(&p);
    }
    for (int i = 0; i < ps.n; i++) gt_rtc_result_free(&ps.res[i]);
}

/* Every op pair, shape and class of one type: at least one GEMV kernel per combination
 * (4 x 5 x 2) and some split-K ones. */
#define GEMV_TYPE_CASE(fn, dt)                                                           \
    static void fn(void) {                                                               \
        NEED_GPU();                                                                      \
        int ran = 0, split = 0;                                                          \
        gemv_case(dt, &ran, &split);                                                     \
        TAP_CHECK(ran >= 4 * NSHAPES * 2, "%d GEMV kernels checked", ran);               \
        TAP_CHECK(split >= 4, "%d of them split K", split);                              \
        printf("# %s: %d GEMV configurations checked, %d split K\n", gt_dtype_name(dt), ran, \
               split);                                                                   \
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
