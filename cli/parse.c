/*
 * parse.c: the words of the gemmtune command that every verb shares (parse.h): shapes,
 * shape files, data types, numbers, the cache's path, the usage text.
 *
 * Reads the library's tables (key.h, env.h, kcfg.h) and asks cache/db.h for the default
 * cache path; drives no GPU, opens no cache, and includes nothing else of cli/.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "parse.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "env.h"
#include "kcfg.h"
#include "key.h"
#include "layers.h"

/* ===== shapes ===== */

static int parse_op(char c, int *op) {
    if (c == 'N' || c == 'n') *op = 0;
    else if (c == 'T' || c == 't' || c == 'C' || c == 'c') *op = 1;
    else return -1;
    return 0;
}

int cli_parse_shape(const char *s, cli_shape *out) {
    char ops[3] = "NN";
    int used = 0;
    long long m, n, k;
    if (sscanf(s, "%lldx%lldx%lld%n", &m, &n, &k, &used) != 3) return -1;
    if (s[used] == ':') {
        if (strlen(s + used + 1) != 2) return -1;
        memcpy(ops, s + used + 1, 2);
    } else if (s[used]) {
        return -1;
    }
    if (m < 1 || n < 1 || k < 1 || m > 2147483647LL || n > 2147483647LL || k > 2147483647LL)
        return -1;
    if (parse_op(ops[0], &out->opa) || parse_op(ops[1], &out->opb)) return -1;
    out->m = m, out->n = n, out->k = k;
    return 0;
}

void cli_shape_format(const cli_shape *sh, char *buf, size_t size) {
    gt_key key = {.m = sh->m, .n = sh->n, .k = sh->k, .opa = sh->opa, .opb = sh->opb};
    gt_key_shape(&key, buf, size);
}

/* One size of a ranged shape at *p: "N" or "LO:HI" (a colon followed by a digit). */
static int parse_size(const char **p, long long *lo, long long *hi) {
    char *end;
    if (**p < '0' || **p > '9') return -1;
    *lo = *hi = strtoll(*p, &end, 10);
    if (end[0] == ':' && end[1] >= '0' && end[1] <= '9') *hi = strtoll(end + 1, &end, 10);
    *p = end;
    return 0;
}

int cli_push_shapes(const char *s, cli_shape **v, int *n, int *cap) {
    long long lo[3], hi[3];
    const char *p = s;
    for (int d = 0; d < 3; d++) {
        if (parse_size(&p, &lo[d], &hi[d]) != 0) return -1;
        if (d < 2 && *p++ != 'x') return -1;
    }
    char text[96];
    const char *ops = *p == ':' ? p : "";
    if (*p && *p != ':') return -1;
    int ranged = -1;
    for (int d = 0; d < 3; d++) {
        if (lo[d] == hi[d]) continue;
        if (ranged >= 0 || lo[d] > hi[d]) return -1;
        ranged = d;
    }
    if (ranged < 0) {
        cli_shape sh;
        snprintf(text, sizeof text, "%lldx%lldx%lld%s", lo[0], lo[1], lo[2], ops);
        if (cli_parse_shape(text, &sh) != 0) return -1;
        return cli_push_shape(v, n, cap, &sh) != 0 ? -2 : 0;
    }
    /* The points: LO, the powers of two strictly between, HI. */
    long long pts[CLI_RANGE_MAX];
    int np = 0;
    pts[np++] = lo[ranged];
    for (long long q = 1; q < hi[ranged] && q <= 2147483647LL; q *= 2)
        if (q > lo[ranged]) {
            if (np == CLI_RANGE_MAX - 1) return -1;
            pts[np++] = q;
        }
    pts[np++] = hi[ranged];
    for (int i = 0; i < np; i++) {
        long long d[3] = {lo[0], lo[1], lo[2]};
        d[ranged] = pts[i];
        cli_shape sh;
        snprintf(text, sizeof text, "%lldx%lldx%lld%s", d[0], d[1], d[2], ops);
        if (cli_parse_shape(text, &sh) != 0) return -1;
        if (cli_push_shape(v, n, cap, &sh) != 0) return -2;
    }
    return 0;
}

int cli_push_shape(cli_shape **v, int *n, int *cap, const cli_shape *sh) {
    if (*n == *cap) {
        int ncap = *cap ? 2 * *cap : 16;
        cli_shape *nv = realloc(*v, sizeof **v * (size_t)ncap);
        if (!nv) return -1;
        *v = nv, *cap = ncap;
    }
    (*v)[(*n)++] = *sh;
    return 0;
}

int cli_read_shapes(const char *path, cli_shape **v, int *n, int *cap) {
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "gemmtune: cannot open %s: %s\n", path, strerror(errno));
        return -1;
    }
    char line[512];
    int lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash) *hash = 0;
        char a[64], b[8] = "N", c[8] = "N";
        long long m, nn, k;
        cli_shape sh;
        int got = sscanf(line, "%lld %lld %lld %7s %7s", &m, &nn, &k, b, c);
        if (got >= 3) {
            char text[128];
            snprintf(text, sizeof text, "%lldx%lldx%lld:%c%c", m, nn, k, b[0], c[0]);
            if (cli_parse_shape(text, &sh) != 0 || (got == 4) || strlen(b) != 1 ||
                strlen(c) != 1) {
                fprintf(stderr, "gemmtune: %s:%d: bad shape line\n", path, lineno);
                fclose(f);
                return -1;
            }
        } else if (sscanf(line, "%63s", a) == 1) {
            int r = cli_push_shapes(a, v, n, cap);
            if (r != 0) {
                if (r == -2) fprintf(stderr, "gemmtune: out of memory reading %s\n", path);
                else fprintf(stderr, "gemmtune: %s:%d: bad shape '%s'\n", path, lineno, a);
                fclose(f);
                return -1;
            }
            continue;
        } else {
            continue;
        }
        if (cli_push_shape(v, n, cap, &sh) != 0) {
            fprintf(stderr, "gemmtune: out of memory reading %s\n", path);
            fclose(f);
            return -1;
        }
    }
    fclose(f);
    return 0;
}

/* ===== data types and numbers ===== */

int cli_parse_dtype(const char *verb, const char *text, int *dtype) {
    *dtype = gt_dtype_parse(text);
    if (*dtype >= 0) return 0;
    /* The names straight from key.c, printed one by one: no buffer to outgrow as types
     * are added. */
    fprintf(stderr, "gemmtune %s: --dtype '%s': unknown data type (known:", verb, text);
    for (int t = 0; t < GT_NDTYPES; t++)
        fprintf(stderr, "%s %s", t ? "," : "", gt_dtype_name(t));
    fprintf(stderr, ")\n");
    return 2;
}

int cli_parse_index(const char *s, int *out) {
    if (!s || *s < '0' || *s > '9') return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (*end || errno || v > 2147483647L) return -1;
    *out = (int)v;
    return 0;
}

int cli_parse_finite(const char *s, double *out) {
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !isfinite(v)) return -1;
    *out = v;
    return 0;
}

/* ===== the cache ===== */

int cli_cache_path(const char *verb, char *buf, size_t size) {
    gt_status s = gt_layers_user_file(buf, size, NULL);
    if (s == GT_CACHE_ERROR) {
        fprintf(stderr, "gemmtune %s: no cache path (set GEMMTUNE_CACHE or HOME, or give "
                        "--cache FILE; on a shared filesystem the host needs a name)\n", verb);
        return -1;
    }
    if (s != GT_SUCCESS) {
        fprintf(stderr, "gemmtune %s: the cache path is too long\n", verb);
        return -1;
    }
    return 0;
}

/* ===== usage ===== */

/* The text a table's help function writes (it returns the length it needs, like
 * snprintf), malloc'd; NULL when out of memory. */
static char *table_help(int (*help)(char *, size_t)) {
    int n = help(NULL, 0);
    char *text = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (text) help(text, (size_t)n + 1);
    return text;
}

int cli_usage(FILE *f, int code) {
    fputs("usage: gemmtune [--cache FILE] VERB [options]\n"
          "  info                      GPU, driver, NVRTC, cache files, built-in defaults,\n"
          "                            kernel source hash\n"
          "  tune SHAPE... | --file F  pre-warm the cache (tune what is missing)\n"
          "      --force               tune even if cached\n"
          "      --budget S            seconds of compiling and timing per shape\n"
          "                            (default 1.5, GEMMTUNE_TUNE_BUDGET_S)\n"
          "      --candidates N        candidates ranked for timing per shape, all timed\n"
          "                            that the budget reaches (default 32,\n"
          "                            GEMMTUNE_TUNE_MAX_CANDIDATES, timing ending early\n"
          "                            where the best has held against the rest)\n"
          "      --exhaustive          time every candidate the legal and prune rules\n"
          "                            keep, with no budget unless --budget is given\n"
          "                            (for a shape list run overnight)\n"
          "      --devices all|LIST    one worker per GPU (LIST: 0,2,3); GPUs of one model\n"
          "                            share the shapes, each model tunes all of them\n"
          "      --shard I/N           only shapes j with j % N == I (0-based; default from\n"
          "                            SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN and\n"
          "                            SLURM_ARRAY_TASK_COUNT, else SLURM_PROCID and\n"
          "                            SLURM_NTASKS, else 0/1)\n"
          "      --dry-run             print the shapes this invocation would tune; touch\n"
          "                            neither GPU nor cache\n"
          "      --dtype T             the data type of every shape (default f32)\n"
          "  list [--dtype T]          what the cache holds (of data type T only)\n"
          "  show SHAPE [--dtype T]    every candidate's timing for the keys of SHAPE\n"
          "  run SHAPE [--alpha A] [--beta B] [--reps N] [--dtype T] [--save DIR]\n"
          "                            tune if needed, run on random data, check, time\n"
          "      --save DIR            write the problem to DIR (its last component created):\n"
          "                            meta.txt (dtype, ops, m, n, k, alpha, beta, lda, ldb,\n"
          "                            ldc, ab_type, c_type: one 'name value' a line) and the\n"
          "                            raw column-major little-endian A.bin, B.bin, C0.bin (C\n"
          "                            before) and C.bin (C after the first call); written\n"
          "                            only when the run completes\n"
          "  export -o FILE [--text] [--device NAME] [--dtype T] [--keep N]\n"
          "                            write the cache's winners and timings of this kernel\n"
          "                            source to a new FILE (configurations, never binaries)\n"
          "      --text                FILE is a cache text (reviewable lines: a W line per\n"
          "                            key, a T line per candidate; the form of the built-in\n"
          "                            defaults) instead of an SQLite file\n"
          "      --keep N              each key's N fastest timings that ran, the winner's\n"
          "                            and every failed one (a smaller file to ship; the\n"
          "                            suite's keys of a default tuning hold 32); merge too\n"
          "  import FILE               merge FILE's entries into the cache (each validated;\n"
          "                            per key the faster one stays)\n"
          "  merge A B... -o C [--text] [--device NAME] [--dtype T] [--keep N]\n"
          "                            write to a new C the fastest entry per key of A B...,\n"
          "                            with its provenance (host, date, library version)\n"
          "  defaults --file SHAPES [--dtype T]... -o FILE\n"
          "                            the built-in defaults' file of this GPU in one go: tune\n"
          "                            every shape of SHAPES for every T (default f32) into a\n"
          "                            private temporary cache (your cache, GEMMTUNE_CACHE_PATH\n"
          "                            and the built-in defaults untouched and unread), then\n"
          "                            write its entries to FILE as a cache text; copied to\n"
          "                            data/defaults/<gpu>.txt, a rebuild builds it in\n"
          "  prebuild [--dtype T]... [--ops NN,NT,TN,TT] [--align 16,8,4,2,1]\n"
          "           [--beta zero|nonzero|any] [--threads N]\n"
          "                            compile this node's generic kernels (M, N, K as\n"
          "                            arguments) into the binary cache: for every class of\n"
          "                            each T (op pair, alignment class in bytes, beta zero\n"
          "                            or not; all by default), the configurations the\n"
          "                            selector picks for shapes no cache holds; a first\n"
          "                            call of such a shape then compiles nothing\n"
          "  prune                     delete entries of other kernel sources or library\n"
          "                            versions, and cubins of other sources, NVRTC, driver\n"
          "SHAPE: MxNxK[:AB], ops A, B in N (as stored) or T (transposed); column-major.\n"
          "For tune, one of M, N, K may be a range LO:HI: LO, each power of two between and\n"
          "HI (4096x1:256x4096:TN tunes N = 1, 2, 4, ..., 256; the selector covers the rest).\n"
          "A shape file (--file) holds one shape a line, MxNxK[:AB] or M N K opA opB; '#'\n"
          "starts a comment. Every cache file read (import, merge, export's cache) may be\n"
          "an SQLite file or a cache text.\n"
          "T: a data type (--dtype; A and B -> C, the entry point it tunes for):\n"
          "  f32       float, fp32 FMA (gemm_tuned; the default)\n"
          "  f64       double (gemm_tuned_d)\n"
          "  tf32      float, tf32 tensor cores (gemm_tuned_ex, COMPUTE_32F_FAST_TF32)\n"
          "  f16       half -> half, f32 accumulation (gemm_tuned_ex, 16F/16F)\n"
          "  f16_f32   half -> float (gemm_tuned_ex, 16F/32F)\n"
          "  bf16      bfloat16 -> bfloat16, f32 accumulation (gemm_tuned_ex, 16BF/16BF)\n"
          "  bf16_f32  bfloat16 -> float (gemm_tuned_ex, 16BF/32F)\n"
          "  f32_3xtf32  float, fp32 emulated on tf32 tensor cores (3xTF32) where faster,\n"
          "            else fp32 FMA (gemm_tuned_ex, COMPUTE_32F_EMULATED_3XTF32)\n"
          "  tf32, f16, f16_f32, bf16 and bf16_f32 run on tensor cores only: compute\n"
          "  capability 8.0 or later.\n"
          "  --alpha and --beta are floats for every type but f64.\n"
          "--cache FILE uses FILE as the cache (same as GEMMTUNE_CACHE).\n"
          "Environment:\n",
          f);
    char *env = table_help(gt_env_help), *params = table_help(gt_kcfg_help);
    fprintf(f, "%s\n%s", env ? env : "  (out of memory)\n", params ? params : "");
    free(env);
    free(params);
    return code;
}
