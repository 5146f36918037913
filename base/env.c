/*
 * env.c: the table of environment variables (env.h) and the one place that reads them.
 */
#include "env.h"

#include <stdio.h>
#include <stdlib.h>

#define GT_ENV_ROW(id, name, dflt, meaning) [id] = {name, dflt, meaning},
const gt_env_var gt_env_vars[GT_NENV] = {GT_ENV_TABLE(GT_ENV_ROW)};
#undef GT_ENV_ROW

const char *gt_env(gt_env_id id) {
    if ((int)id < 0 || id >= GT_NENV) return NULL;
    const char *v = getenv(gt_env_vars[id].name);
    return v && *v ? v : NULL;
}

long gt_env_long(gt_env_id id, long dflt) {
    const char *v = gt_env(id);
    if (!v) return dflt;
    char *end;
    long x = strtol(v, &end, 10);
    return *end || x <= 0 ? dflt : x;
}

double gt_env_double(gt_env_id id, double dflt) {
    const char *v = gt_env(id);
    if (!v) return dflt;
    char *end;
    double x = strtod(v, &end);
    return *end || !(x > 0) ? dflt : x;
}

int gt_env_help(char *buf, size_t size) {
    size_t len = 0;
    for (int i = 0; i < GT_NENV; i++) {
        int n = snprintf(len < size ? buf + len : NULL, len < size ? size - len : 0,
                         "  %-29s %s (default: %s)\n", gt_env_vars[i].name,
                         gt_env_vars[i].meaning, gt_env_vars[i].dflt);
        if (n < 0) return n;
        len += (size_t)n;
    }
    if (size && len >= size) buf[size - 1] = 0;
    return (int)len;
}
