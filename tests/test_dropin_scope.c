/*
 * test_dropin_scope.c: the cuBLAS drop-in preloaded into a program whose cuBLAS is not in
 * its global scope: a library that calls cuBLAS (tests/mock_app.c, linked with the
 * stand-in cuBLAS) opened with RTLD_LOCAL, as Python opens PyTorch's. The drop-in takes
 * the library's calls (it comes first in every scope) and must still find the real cuBLAS
 * to forward them. Run with LD_PRELOAD=libgemmtune_cublas.so and MOCK_APP, the library's
 * path (tests/meson.build sets both). No GPU needed.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "tap.h"

typedef void (*counts_fn)(unsigned long long out[3]);
typedef int (*sgemm_fn)(int m);
typedef int (*get_fn)(void);
typedef void (*set_fn)(int);

static void dropin_finds_a_local_cublas(void) {
    counts_fn counts = (counts_fn)dlsym(RTLD_DEFAULT, "gemmtune_cublas_counts");
    if (!counts) TAP_SKIP("skipped: the drop-in is not preloaded (LD_PRELOAD)");
    const char *path = getenv("MOCK_APP");
    void *app = path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
    TAP_CHECK(app != NULL, "opened the library that calls cuBLAS: %s", app ? "yes" : dlerror());
    if (!app) return;
    /* The stand-in cuBLAS is in the library's scope only. */
    TAP_CHECK(dlsym(RTLD_DEFAULT, "mock_cublas_calls") == NULL,
              "the stand-in cuBLAS is outside the global scope");
    sgemm_fn sgemm = (sgemm_fn)dlsym(app, "mock_app_sgemm");
    get_fn calls = (get_fn)dlsym(app, "mock_cublas_calls"), last_m = (get_fn)dlsym(app, "mock_cublas_last_m");
    set_fn set_mode = (set_fn)dlsym(app, "mock_cublas_set_pointer_mode");
    TAP_CHECK(sgemm && calls && last_m && set_mode, "the library's and the stand-in's entries found");
    if (!(sgemm && calls && last_m && set_mode)) return;
    unsigned long long c0[3], c1[3], c2[3];
    /* Device pointer mode: not routable, forwarded as it came. */
    set_mode(1);
    counts(c0);
    int st = sgemm(41);
    counts(c1);
    TAP_CHECK(st == 0 && calls() == 1 && last_m() == 41, "forwarded: status %d, cuBLAS calls %d, m %d",
              st, calls(), last_m());
    TAP_CHECK(c1[1] - c0[1] == 1, "counted as forwarded (+%llu)", c1[1] - c0[1]);
    /* Host pointer mode: routed, refused by gemmtune (misaligned), then served by cuBLAS. */
    set_mode(0);
    st = sgemm(43);
    counts(c2);
    TAP_CHECK(st == 0 && calls() == 2 && last_m() == 43, "fell back: status %d, cuBLAS calls %d, m %d",
              st, calls(), last_m());
    TAP_CHECK(c2[2] - c1[2] == 1, "counted as fallen back (+%llu)", c2[2] - c1[2]);
    dlclose(app);
}

int main(void) {
    TAP_RUN(dropin_finds_a_local_cublas);
    return tap_done();
}
