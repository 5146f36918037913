/*
 * load.c: binary cache, else NVRTC, then store (load.h).
 */
#include "load.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu.h"
#include "kernel_sources.h"
#include "layers.h"
#include "log.h"

static void bin_key(const gt_program *p, int arch, gt_db_bin_key *bk) {
    bk->src_hash = gt_kernel_source_hash;
    bk->program = p->text;
    bk->arch = gt_rtc_pick_arch(arch);
    bk->nvrtc = gt_rtc_version();
    bk->driver = gt_cu_driver_version();
}

gt_status gt_load_compile(const gt_program *p, int arch, gt_rtc_result *out) {
    if (p->specific)
        return gt_rtc_compile_specific(p->source, p->name, p->options, p->noptions, arch, out);
    return gt_rtc_compile(p->source, p->name, p->options, p->noptions, arch, out);
}

/* The stored cubin of p, malloc'd, or NULL. */
static void *stored(const gt_program *p, int arch, size_t *size) {
    gt_db_bin_key bk;
    bin_key(p, arch, &bk);
    return gt_layers_bin_get(&bk, size);
}

gt_status gt_load_image(const gt_program *p, int arch, int use_cache, gt_rtc_result *out,
                        int *cached) {
    *cached = 0;
    if (use_cache) {
        memset(out, 0, sizeof *out);
        out->image = stored(p, arch, &out->size);
        if (out->image) {
            *cached = 1;
            return GT_SUCCESS;
        }
    }
    return gt_load_compile(p, arch, out);
}

void gt_load_programs(const char *prefix, int arch, int (*fn)(const char *text, void *user),
                      void *user) {
    gt_program p;
    snprintf(p.text, sizeof p.text, "%s", prefix);
    gt_db_bin_key bk;
    bin_key(&p, arch, &bk);
    gt_layers_bin_programs(&bk, fn, user);
}

void gt_load_store(const gt_program *p, int arch, const void *image, size_t size) {
    gt_db_bin_key bk;
    bin_key(p, arch, &bk);
    gt_layers_bin_put(&bk, image, size);
}

gt_status gt_load_accept_image(const void *image, const char *name, gt_load_accept accept,
                               void *user, CUmodule *out) {
    CUmodule mod = NULL;
    CUresult r = gt_cu.module_load_data(&mod, image);
    if (r != CUDA_SUCCESS) {
        char what[160];
        snprintf(what, sizeof what, "cuModuleLoadData (%s)", name);
        return gt_cu_fail(r, what);
    }
    gt_status s = accept ? accept(mod, user) : GT_SUCCESS;
    if (s != GT_SUCCESS) {
        gt_cu.module_unload(mod);
        return s;
    }
    *out = mod;
    return GT_SUCCESS;
}

gt_status gt_load_module(const gt_program *p, int arch, int use_cache, gt_load_accept accept,
                         void *user, CUmodule *out, int *cached) {
    if (cached) *cached = 0;
    size_t size = 0;
    void *image = use_cache ? stored(p, arch, &size) : NULL;
    if (image) {
        gt_status s = gt_load_accept_image(image, p->name, accept, user, out);
        free(image);
        if (s == GT_SUCCESS) {
            if (cached) *cached = 1;
            return GT_SUCCESS;
        }
        gt_stat_add(GT_STAT_REJECTED, 1);
        gt_log(GT_LOG_WARN, "stored binary of %s does not load (%s)%s", p->text,
               gt_last_error(), use_cache == GT_LOAD_HELD ? "" : "; recompiling");
    }
    if (use_cache == GT_LOAD_HELD)
        return gt_fail(GT_NO_CANDIDATE, "%s: no loadable binary held", p->text);
    gt_rtc_result res;
    gt_status s = gt_load_compile(p, arch, &res);
    if (s == GT_SUCCESS) s = gt_load_accept_image(res.image, p->name, accept, user, out);
    if (s == GT_SUCCESS && use_cache) gt_load_store(p, arch, res.image, res.size);
    gt_rtc_result_free(&res);
    return s;
}
