/*
 * tune.h: tuning one problem key on one device.
 *
 * States of one tuning run, each moved on by the function named:
 *   SPACE    -> gt_space_build          ranked candidates within the count budget
 *   COMPILE  -> compile_all             NVRTC on a thread pool, in the background of
 *                                       ARENA and TIME; failures recorded
 *   ARENA    -> arena_alloc             bounded scratch memory (inputs of the key's data
 *                                       type, random; output; split-K workspace); or
 *                                       SKIPPED
 *   TIME     -> time_one (each)         as soon as that candidate is compiled: warm-up,
 *                                       events per run, median (screening: a few runs
 *                                       for one clearly slower than the best); until
 *                                       the time budget is spent or the best has held
 *                                       against the ranked rest
 *   VERIFY   -> gt_verify (each)       fastest first, against the reference, until one passes
 *   DONE     winner loaded, every candidate's outcome in the report; compiles still
 *            under way finish in the background (gt_tune_wait_compiles)
 * The user's buffers are never touched: every run works on the arena.
 */
#ifndef GT_TUNE_H
#define GT_TUNE_H

#include <stddef.h>

#include "devctx.h"
#include "kern.h"
#include "space.h"

/* max_candidates for every candidate the legal and prune rules keep (an exhaustive
 * offline tuning). */
#define GT_TUNE_ALL_CANDIDATES 2147483647
typedef struct gt_tune_opts {
    int max_candidates;   /* <= 0: default 32 (GEMMTUNE_TUNE_MAX_CANDIDATES);
                             GT_TUNE_ALL_CANDIDATES: all */
    double budget_s;      /* wall seconds for COMPILE and TIME together, from the start;
                             candidates not compiled and timed by then are dropped, but
                             the first that compiles is always timed; <= 0: default 1.5
                             (GEMMTUNE_TUNE_BUDGET_S, fractions allowed) */
    size_t mem_limit;     /* bytes; 0: default (size of C, one copy of A and B, 2 x L2, and
                           * the largest split-K workspace of the candidates) */
    int threads;          /* compile threads; <= 0: one per CPU */
    int same_order;       /* 1: only candidates whose results are bit-identical to the
                           * default kernel's (GT_SPACE_SAME_ORDER: no split-K, no tensor
                           * cores), as background tuning promises */
    const gt_kcfg *seeds; /* configurations to time first (select.h's gt_select_rank: the
                           * near-winners of the class's tuned shapes), each kept only
                           * where the space for this key holds it; the cost model's
                           * order follows */
    int nseeds;
    const gt_modelfix *fix; /* the cost model's correction (modelfix.h), fitted to the
                             * data type's timings of every class; NULL: the model as is */
    int verify_all;       /* 1: check every timed candidate against the reference, not only
                           * until one passes (the winner is the same: the fastest that
                           * passes); for tests and `tools/gpu_run.sh memcheck`. 0: from
                           * GEMMTUNE_TUNE_VERIFY_ALL=1 */
    int time_all;         /* 1: time every candidate the budget reaches, never stopping
                           * where the best has held (gt_tune_best_held): `gemmtune tune
                           * --exhaustive` and `--candidates`; also with verify_all and under
                           * GEMMTUNE_TEST_FAULT, whose candidates are meant to be reached */
} gt_tune_opts;

/* At most GT_TUNE_SEEDS seeds are timed first. */
#define GT_TUNE_SEEDS 4

/* The order candidates are compiled and timed in, at most max of space (n configurations
 * in the cost model's order) into out; the count. The seeds first, in their order; then,
 * where space holds more than max, half of the places left in the model's order, a
 * quarter to the best of each group (family, block tile, BK, split-K) not yet listed, in
 * the model's order, and the rest in the model's order again; where it holds no more, the
 * model's order. The model ranks the members of one group close together (they differ in
 * warp layout, stages and vectors), so its first places can fill with one group; on
 * shapes it was not shaped on, the best is often another group's (gt_tune takes space as
 * the model's first 4 x max). In the first half a SIMT group has at most
 * GT_TUNE_LEAD_SAME members (its others follow in the model's order): the budget compiles
 * about one candidate per CPU, and a SIMT group's members run close together (their
 * median 3% behind the group's best on the training list's wide tunings; MMA 2%, DMMA 5%,
 * WGMMA 6%), so its places go further to other groups. On those tunings (dev/wave_sim.c)
 * the best of an f32 list's first 8, 12 and 16 rose from 0.947, 0.951 and 0.973 of the
 * best found to 0.976, 0.977 and 0.979; bf16's fell with any cap. Pure. */
#define GT_TUNE_LEAD_SAME 3
int gt_tune_order(const gt_cand *space, int n, const gt_kcfg *seeds, int nseeds, int max,
                  gt_kcfg *out);

/* The compile pool's threads: requested (opts.threads, GEMMTUNE_TUNE_THREADS; <= 0: one
 * per CPU of cpus), one fewer while the helper kernels must be compiled too (helpers != 0)
 * on the tuning thread, unless fewer than cpus were requested; at least 1. Pure. */
int gt_tune_threads(int requested, long cpus, int helpers);

/* One candidate's outcome. */
enum { GT_TR_OK, GT_TR_COMPILE_FAILED, GT_TR_LOAD_FAILED, GT_TR_LAUNCH_FAILED,
       GT_TR_VERIFY_FAILED, GT_TR_NOT_TIMED };
const char *gt_tune_result_name(int status);

typedef struct gt_tune_cand {
    gt_kcfg cfg;
    int status;           /* GT_TR_* */
    int compiled;         /* NVRTC produced its cubin (0: failed, or skipped by the budget) */
    double time_us;       /* median; < 0 when not timed */
    double est_us;        /* the cost model's estimate, corrected (opts.fix) */
    int screened;         /* time_us is the median of GT_TUNE_SCREEN_REPS runs (screening) */
    int seeded;           /* put first from the class's history (opts.seeds) */
    char message[256];
} gt_tune_cand;

/* Screening: a candidate whose first timed run takes over GT_TUNE_SCREEN_FIRST times the
 * best median so far gets GT_TUNE_SCREEN_REPS runs, not a full count (up to 25, about
 * 20 ms of GPU time); where their median is still over GT_TUNE_SCREEN_KEEP times that
 * best, it is the candidate's time, else the candidate is timed in full. A screened
 * candidate cannot win while a faster one verifies (the best only falls); the GPU time it
 * does not take goes to the candidates after it. */
#define GT_TUNE_SCREEN_FIRST 1.5
#define GT_TUNE_SCREEN_KEEP 1.25
#define GT_TUNE_SCREEN_REPS 3
/* 1 where a first run of first_us against the best median best_us (0: none yet) calls
 * for screening. Pure. */
int gt_tune_screens(double first_us, double best_us);
/* 1 where a screening median of median_us against best_us stands as the time. Pure. */
int gt_tune_screen_stands(double median_us, double best_us);

/* Stopping early: the best has held against the ranked rest when at least
 * GT_TUNE_HELD_MIN candidates are timed and every candidate not yet timed would be slower
 * than the best even if it ran as far under its estimate as the luckiest timed one did
 * (the least time / estimate), and by GT_TUNE_HELD_MARGIN more: est x least ratio x
 * margin > best. Never while a seed is left: the history put it first where the model
 * may rank it far down. The model misjudges whole tile groups against each other by 30% and
 * more on shapes it was not shaped on, so the margin is wide: the rule ends runs whose
 * remaining candidates the model puts at twice the best's class of time, and leaves the
 * close ones to the budget. Pure. */
#define GT_TUNE_HELD_MIN 4
#define GT_TUNE_HELD_MARGIN 0.5
int gt_tune_best_held(const gt_tune_cand *cands, int n);

typedef struct gt_tune_report {
    gt_space_counts space;
    int compiled, compile_failed, timed, verify_failed;
    int screened;         /* timed candidates given GT_TUNE_SCREEN_REPS runs only */
    int held;             /* 1: timing stopped where the best held (gt_tune_best_held) */
    int seeded;           /* candidates put first from the class's history (opts.seeds) */
    double seconds;          /* the whole run */
    double compile_seconds;  /* from the start until the last compile this run used
                                finished (later ones finish in the background) */
    double time_seconds;     /* from the first timing until the last (overlaps compiling) */
    int skipped;          /* tuning skipped (memory): no winner, not an error */
    char why[256];
    gt_kcfg winner;
    double time_us, tflops, rel_err;
    void *winner_image;   /* the winner's cubin (malloc'd; gt_tune_report_free) */
    size_t winner_size;
    int ncands;
    gt_tune_cand *cands;  /* malloc'd; gt_tune_report_free */
} gt_tune_report;

/* The scratch layout of key's problem, as tuning's arena and the twin check (twin.h) lay
 * it out: A's and B's leading dimensions rounded up to the alignment class, so that every
 * configuration legal for the key is legal here; C's one class unit more, so that a
 * kernel that writes past row m shows; each operand's bytes. */
typedef struct gt_scratch {
    long long lda, ldb, ldc;
    size_t abytes, bbytes, cbytes;
} gt_scratch;
void gt_tune_scratch(const gt_key *key, gt_scratch *out);

/* *fits 1 when `need` bytes of device memory are within limit (0: no limit) and leave 5%
 * of the device free; else 0 with why saying so ("<what> needs ..."). A status other
 * than GT_SUCCESS when the driver cannot say. */
gt_status gt_tune_mem_fits(size_t need, size_t limit, const char *what, int *fits, char *why,
                           size_t why_size);

/* Fills opts from the environment where fields are left at 0. */
void gt_tune_opts_default(gt_tune_opts *opts);

/* Tunes key on dc (whose context is current). On GT_SUCCESS, *winner is loaded and
 * verified, unless rep->skipped. */
gt_status gt_tune(gt_devctx *dc, const gt_key *key, const gt_tune_opts *opts, gt_kern *winner,
                  gt_tune_report *rep);
void gt_tune_report_free(gt_tune_report *rep);

/* Compiles a tuning run left under way when its budget was spent finish in the
 * background (gt_tune returns without them); this waits until none is left. Called by
 * gt_release and at exit, so that no compile outlives the library's code or NVRTC's. */
void gt_tune_wait_compiles(void);

#endif
