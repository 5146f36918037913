/*
 * test_env.c: the table of environment variables (base/env.h) is the one list: the code
 * reads no variable outside it, the README names every entry, and gt_env and gt_env_help
 * behave as env.h says. No GPU needed. argv[1] is the source root.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"
#include "tap.h"

static const char *root = ".";

/* The whole file at root/rel, malloc'd, or NULL. */
static char *slurp(const char *rel) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    if (buf) buf[n] = 0;
    fclose(f);
    return buf;
}

static void env_names_unique_and_named(void) {
    for (int i = 0; i < GT_NENV; i++) {
        TAP_CHECK(gt_env_vars[i].name && gt_env_vars[i].name[0], "entry %d has no name", i);
        TAP_CHECK(gt_env_vars[i].meaning && gt_env_vars[i].meaning[0] && gt_env_vars[i].dflt,
                  "%s lacks its meaning or default", gt_env_vars[i].name);
        for (int j = 0; j < i; j++)
            TAP_CHECK(strcmp(gt_env_vars[i].name, gt_env_vars[j].name) != 0, "%s twice",
                      gt_env_vars[i].name);
    }
}

/* gt_env: the value, NULL when unset or empty. */
static void env_reads_through_table(void) {
    const char *name = gt_env_vars[GT_ENV_TUNE_BUDGET_S].name;
    setenv(name, "2.5", 1);
    const char *v = gt_env(GT_ENV_TUNE_BUDGET_S);
    TAP_CHECK(v && strcmp(v, "2.5") == 0, "set: %s", v ? v : "(null)");
    setenv(name, "", 1);
    TAP_CHECK(gt_env(GT_ENV_TUNE_BUDGET_S) == NULL, "empty is unset");
    unsetenv(name);
    TAP_CHECK(gt_env(GT_ENV_TUNE_BUDGET_S) == NULL, "unset");
    TAP_CHECK(gt_env((gt_env_id)GT_NENV) == NULL, "out of range");
}

/* gt_env_help: every name, meaning and default; the length as snprintf counts it. */
static void env_help_lists_table(void) {
    int need = gt_env_help(NULL, 0);
    TAP_CHECK(need > 0, "length %d", need);
    char *buf = malloc((size_t)need + 1);
    TAP_CHECK(buf && gt_env_help(buf, (size_t)need + 1) == need && strlen(buf) == (size_t)need,
              "help text length");
    for (int i = 0; buf && i < GT_NENV; i++)
        TAP_CHECK(strstr(buf, gt_env_vars[i].name) && strstr(buf, gt_env_vars[i].meaning),
                  "help lacks %s", gt_env_vars[i].name);
    char small[16];
    TAP_CHECK(gt_env_help(small, sizeof small) == need && strlen(small) == sizeof small - 1,
              "truncated help is terminated");
    free(buf);
}

/* The README's environment table quotes every entry, as `NAME`. */
static void env_readme_names_all(void) {
    char *readme = slurp("README.md");
    TAP_CHECK(readme != NULL, "cannot read %s/README.md", root);
    if (!readme) return;
    for (int i = 0; i < GT_NENV; i++) {
        char quoted[128];
        snprintf(quoted, sizeof quoted, "`%s`", gt_env_vars[i].name);
        TAP_CHECK(strstr(readme, quoted) != NULL, "README does not name %s", quoted);
    }
    free(readme);
}

/* No source of the library or the command calls getenv but base/env.c. */
static void env_no_getenv_elsewhere(void) {
    static const char *dirs[] = {"base", "cache", "runtime", "tuner", "src", "cli"};
    int files = 0;
    for (size_t d = 0; d < sizeof dirs / sizeof dirs[0]; d++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", root, dirs[d]);
        DIR *dir = opendir(path);
        TAP_CHECK(dir != NULL, "cannot list %s", path);
        if (!dir) continue;
        struct dirent *e;
        while ((e = readdir(dir))) {
            size_t n = strlen(e->d_name);
            if (n < 3 || strcmp(e->d_name + n - 2, ".c") != 0) continue;
            char rel[600];
            snprintf(rel, sizeof rel, "%s/%s", dirs[d], e->d_name);
            char *text = slurp(rel);
            TAP_CHECK(text != NULL, "cannot read %s", rel);
            if (!text) continue;
            files++;
            if (strcmp(rel, "base/env.c") != 0)
                TAP_CHECK(strstr(text, "getenv(") == NULL, "%s calls getenv", rel);
            free(text);
        }
        closedir(dir);
    }
    TAP_CHECK(files >= 20, "only %d sources found under %s", files, root);
}

int main(int argc, char **argv) {
    if (argc > 1) root = argv[1];
    TAP_RUN(env_names_unique_and_named);
    TAP_RUN(env_reads_through_table);
    TAP_RUN(env_help_lists_table);
    TAP_RUN(env_readme_names_all);
    TAP_RUN(env_no_getenv_elsewhere);
    return tap_done();
}
