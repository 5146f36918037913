/*
 * sass.c: compiles kernel programs with NVRTC for sm_90 (no GPU needed) and prints, per
 * program, a hash of each code section of its cubin (the SASS bytes, not the metadata).
 * Two trees' outputs side by side show whether a change to kernel_src/ changed the code
 * of existing programs (e.g. the exact-shape kernels after a refactor): same hash, same
 * machine code.
 *
 * Build (from the repository root, after tools/build.sh):
 *        cc -std=c11 -Ibase -Ituner -Itests -Iinclude -Icache -Iruntime \
 *            -I/usr/local/cuda/include dev/sass.c build/libgemmtune.a \
 *            -L/usr/local/cuda/lib64 -lnvrtc -lsqlite3 -ldl -lpthread -lm -o /tmp/sass
 * Usage: /tmp/sass < LIST, one program per line: DTYPE MxNxK:AB ALIGN BETA0 CONFIG
 *        e.g. "f32 1000x999x77:NT 4 0 f0_64x64x8_w32x16_t4x4_s2_v1_k1_r1"
 * Output: one line per program: the line, then "ok" and "KERNEL=HASH/BYTES" per code
 * section, or "fail: reason". SASS_OPTS=1: print the program's NVRTC options instead (no
 * compile); SASS_LOG=1: NVRTC's log after a failed compile; SASS_DUMP=FILE: the last
 * program's cubin, for nvdisasm.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "kcfg.h"
#include "kern.h"

static uint64_t fnv(const unsigned char *p, size_t n) {
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ULL;
    return h;
}

/* Hashes of the cubin's ".text.*" sections (64-bit little-endian ELF). */
static void text_hashes(const unsigned char *img, size_t size) {
    if (size < 64) return;
    uint64_t shoff;
    uint16_t shentsize, shnum, shstrndx;
    memcpy(&shoff, img + 0x28, 8);
    memcpy(&shentsize, img + 0x3a, 2);
    memcpy(&shnum, img + 0x3c, 2);
    memcpy(&shstrndx, img + 0x3e, 2);
    const unsigned char *strs = NULL;
    {
        const unsigned char *sh = img + shoff + (uint64_t)shstrndx * shentsize;
        uint64_t off;
        memcpy(&off, sh + 0x18, 8);
        strs = img + off;
    }
    for (unsigned i = 0; i < shnum; i++) {
        const unsigned char *sh = img + shoff + (uint64_t)i * shentsize;
        uint32_t name;
        uint64_t off, sz;
        memcpy(&name, sh, 4);
        memcpy(&off, sh + 0x18, 8);
        memcpy(&sz, sh + 0x20, 8);
        const char *nm = (const char *)strs + name;
        if (strncmp(nm, ".text.", 6) == 0) printf(" %s=%016llx/%llu", nm + 6, (unsigned long long)fnv(img + off, sz), (unsigned long long)sz);
    }
}

int main(void) {
    char line[512];
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\n")] = 0;
        if (!line[0] || line[0] == '#') continue;
        char dt[16], shape[64], cfgt[96];
        int align, beta0;
        if (sscanf(line, "%15s %63s %d %d %95s", dt, shape, &align, &beta0, cfgt) != 5) {
            printf("%s fail: cannot read the line\n", line);
            continue;
        }
        long long m, n, k;
        char a = 'N', b = 'N';
        if (sscanf(shape, "%lldx%lldx%lld:%c%c", &m, &n, &k, &a, &b) < 3) {
            printf("%s fail: shape\n", line);
            continue;
        }
        gt_key key;
        fixture_key(&key, 90, a == 'T', b == 'T', m, n, k, align, beta0);
        key.dtype = gt_dtype_parse(dt);
        gt_kcfg cfg;
        char why[256];
        if (gt_kcfg_validate(cfgt, &key, &h100, &cfg, why, sizeof why) != 0) {
            printf("%s fail: %s\n", line, why);
            continue;
        }
        if (getenv("SASS_OPTS")) {
            gt_program pr;
            gt_kern_program(&cfg, &key, &pr);
            for (int i = 0; i < pr.noptions; i++) printf("%s ", pr.options[i]);
            printf("\n");
            continue;
        }
        gt_rtc_result r;
        if (gt_kern_compile(&cfg, &key, 90, &r) != GT_SUCCESS) {
            printf("%s fail: %s\n", line, r.error);
            if (getenv("SASS_LOG") && r.log) fputs(r.log, stdout);
            gt_rtc_result_free(&r);
            continue;
        }
        printf("%s ok", line);
        text_hashes(r.image, r.size);
        const char *dump = getenv("SASS_DUMP");
        FILE *df = dump ? fopen(dump, "wb") : NULL;
        if (df) {
            fwrite(r.image, 1, r.size, df);
            fclose(df);
        }
        printf("\n");
        fflush(stdout);
        gt_rtc_result_free(&r);
    }
    return 0;
}
