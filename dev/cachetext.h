/*
 * cachetext.h: the dev tools' reader of a cache text (`gemmtune export`, cache/text.h; e.g.
 * the widetrain-DT.txt files of bench/runs, data/defaults/h200.txt). For each W line whose
 * key parses, one call of each() with the key and its timed candidates (the T lines of
 * status ok with a time, in the file's order, at most CACHETEXT_MAX). Header only: each
 * tool is built from one file. Returns 0, or -1 after perror when the file cannot be
 * opened.
 */
#ifndef GT_DEV_CACHETEXT_H
#define GT_DEV_CACHETEXT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kcfg.h"
#include "key.h"

#define CACHETEXT_MAX 4096

typedef void (*cachetext_fn)(const char *key_text, const gt_key *key, const gt_kcfg *cfgs,
                             const double *times, int n, void *user);

static int cachetext_read(const char *path, cachetext_fn each, void *user) {
    static gt_kcfg cfgs[CACHETEXT_MAX];
    static double times[CACHETEXT_MAX];
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        return -1;
    }
    char line[4096], key_text[512] = "";
    gt_key key;
    int have_key = 0, n = 0;
    for (int more = 1; more;) {
        more = fgets(line, sizeof line, f) != NULL;
        char *fld[8] = {0};
        int nf = 0;
        if (more) {
            line[strcspn(line, "\n")] = 0;
            for (char *p = line; p && nf < 8;) {
                fld[nf++] = p;
                p = strchr(p, '\t');
                if (p) *p++ = 0;
            }
        }
        if (!more || (strcmp(fld[0], "W") == 0 && nf > 1)) {
            if (have_key) each(key_text, &key, cfgs, times, n, user);
            if (!more) break;
            char why[200];
            have_key = gt_key_parse(fld[1], &key, why, sizeof why) == 0;
            snprintf(key_text, sizeof key_text, "%s", fld[1]);
            n = 0;
        } else if (strcmp(fld[0], "T") == 0 && nf > 3 && have_key && n < CACHETEXT_MAX &&
                   strcmp(fld[2], "ok") == 0) {
            char why[200];
            if (gt_kcfg_parse(fld[1], &cfgs[n], why, sizeof why) != 0) continue;
            times[n] = atof(fld[3]);
            if (times[n] > 0) n++;
        }
    }
    fclose(f);
    return 0;
}

#endif
