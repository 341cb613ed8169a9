/* Verbose channel: error lines to stderr, info lines to stdout. */
#include "ir/status.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static int verbose_level = -1; /* -1: not read from the environment yet */

static int env_level(void) {
    const char *names[] = {"ONEDNN_VERBOSE", "PARTITA_VERBOSE", "DNNL_VERBOSE"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); ++i) {
        const char *v = getenv(names[i]);
        if (v && *v) {
            char *end = NULL;
            long l = strtol(v, &end, 10);
            if (end != v) return l > 0 ? (int)l : 0;
            return 1; /* non-numeric values such as "all" or "error" enable errors */
        }
    }
    return 0;
}

int pt_verbose_level(void) {
    int l = __atomic_load_n(&verbose_level, __ATOMIC_RELAXED);
    if (l < 0) {
        l = env_level();
        __atomic_store_n(&verbose_level, l, __ATOMIC_RELAXED);
    }
    return l;
}

void pt_set_verbose_level(int level) { __atomic_store_n(&verbose_level, level, __ATOMIC_RELAXED); }

const char *pt_status_name(pt_status st) {
    switch (st) {
    case dnnl_success: return "success";
    case dnnl_out_of_memory: return "out_of_memory";
    case dnnl_invalid_arguments: return "invalid_arguments";
    case dnnl_unimplemented: return "unimplemented";
    case dnnl_last_impl_reached: return "last_impl_reached";
    case dnnl_runtime_error: return "runtime_error";
    case dnnl_not_required: return "not_required";
    case dnnl_invalid_graph: return "invalid_graph";
    case dnnl_invalid_graph_op: return "invalid_graph_op";
    case dnnl_invalid_shape: return "invalid_shape";
    case dnnl_invalid_data_type: return "invalid_data_type";
    default: return "unknown_status";
    }
}

/* Error lines this thread printed: lets a caller add a generic line only
 * when the code it called printed none (one line per refused call). */
static _Thread_local unsigned long err_lines;

unsigned long pt_err_lines(void) { return err_lines; }

pt_status pt_err(pt_status st, const char *fmt, ...) {
    if (pt_verbose_level() >= 1) {
        ++err_lines;
        char msg[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        fprintf(stderr, "onednn_verbose,graph,error,%s,%s\n", pt_status_name(st), msg);
    }
    return st;
}

void pt_verbose(int level, const char *fmt, ...) {
    if (pt_verbose_level() < level) return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    printf("onednn_verbose,graph,%s\n", msg);
    fflush(stdout);
}
