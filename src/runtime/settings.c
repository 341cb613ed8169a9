#include "runtime/settings.h"

#include "runtime/const_cache.h"

#include <ctype.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static const char *env2(const char *onednn, const char *dnnl) {
    const char *v = getenv(onednn);
    return v ? v : getenv(dnnl);
}

/* ---- default math mode ---- */
static int fpmath = -1;

static const char *const fpmath_names[] = {"strict", "bf16", "f16", "any", "tf32"}; /* by enum value */

const char *pt_fpmath_name(dnnl_fpmath_mode_t mode) {
    return (unsigned)mode < sizeof fpmath_names / sizeof fpmath_names[0] ? fpmath_names[mode] : "strict";
}

static int parse_fpmath(const char *v) {
    for (int i = 0; i < 5; ++i)
        if (strcasecmp(v, fpmath_names[i]) == 0) return i;
    return dnnl_fpmath_mode_strict;
}

dnnl_fpmath_mode_t pt_default_fpmath(void) {
    pthread_mutex_lock(&lock);
    if (fpmath < 0) {
        const char *v = env2("ONEDNN_DEFAULT_FPMATH_MODE", "DNNL_DEFAULT_FPMATH_MODE");
        fpmath = v ? parse_fpmath(v) : dnnl_fpmath_mode_strict;
    }
    int m = fpmath;
    pthread_mutex_unlock(&lock);
    return (dnnl_fpmath_mode_t)m;
}

pt_status pt_set_default_fpmath(dnnl_fpmath_mode_t mode) {
    if ((int)mode < dnnl_fpmath_mode_strict || (int)mode > dnnl_fpmath_mode_tf32)
        return pt_err(dnnl_invalid_arguments, "set_default_fpmath_mode: invalid mode %d", (int)mode);
    pthread_mutex_lock(&lock);
    fpmath = mode;
    pthread_mutex_unlock(&lock);
    return dnnl_success;
}

/* ---- constant tensor cache capacities (MB) ---- */
static int const_read = 0;
static size_t const_mb[3]; /* indexed by engine kind */

/* "cpu:<MB>" or "cpu:<MB>;gpu:<MB>" */
static void read_const_env(void) {
    if (const_read) return;
    const_read = 1;
    const char *v = env2("ONEDNN_GRAPH_CONSTANT_TENSOR_CACHE_CAPACITY",
                         "DNNL_GRAPH_CONSTANT_TENSOR_CACHE_CAPACITY");
    if (!v) return;
    const char *p = v;
    while (*p) {
        int kind = -1;
        if (strncasecmp(p, "cpu:", 4) == 0) kind = dnnl_cpu;
        if (strncasecmp(p, "gpu:", 4) == 0) kind = dnnl_gpu;
        if (kind < 0) break;
        p += 4;
        char *end = NULL;
        unsigned long long mb = strtoull(p, &end, 10);
        if (end == p) break;
        const_mb[kind] = (size_t)mb;
        p = end;
        if (*p == ';') ++p;
    }
}

size_t pt_const_cache_capacity_mb(dnnl_engine_kind_t kind) {
    if ((int)kind < 0 || (int)kind > 2) return 0;
    pthread_mutex_lock(&lock);
    read_const_env();
    size_t r = const_mb[kind];
    pthread_mutex_unlock(&lock);
    return r;
}

pt_status pt_set_const_cache_capacity_mb(dnnl_engine_kind_t kind, size_t mb) {
    if (kind != dnnl_cpu && kind != dnnl_gpu)
        return pt_err(dnnl_invalid_arguments, "constant tensor cache: invalid engine kind %d", (int)kind);
    pthread_mutex_lock(&lock);
    read_const_env();
    const_mb[kind] = mb;
    pthread_mutex_unlock(&lock);
    if (kind == dnnl_cpu) pt_const_cache_clear(); /* a new capacity empties the cache */
    return dnnl_success;
}

/* ---- graph dump ---- */
static int dump = -1;

static unsigned parse_dump(const char *v) {
    unsigned m = 0;
    char buf[64];
    while (*v) {
        size_t n = strcspn(v, ",");
        if (n >= sizeof buf) return 0;
        memcpy(buf, v, n);
        buf[n] = 0;
        if (strcasecmp(buf, "graph") == 0)
            m |= dnnl_graph_dump_mode_graph;
        else if (strcasecmp(buf, "subgraph") == 0)
            m |= dnnl_graph_dump_mode_subgraph;
        else if (strcasecmp(buf, "pattern") == 0)
            ; /* pattern hits are printed by the verbose channel */
        else
            return 0; /* an unknown flag disables all dumping */
        v += n;
        if (*v == ',') ++v;
    }
    return m;
}

unsigned pt_dump_mode(void) {
    pthread_mutex_lock(&lock);
    if (dump < 0) {
        const char *v = env2("ONEDNN_GRAPH_DUMP", "DNNL_GRAPH_DUMP");
        dump = v ? (int)parse_dump(v) : 0;
    }
    unsigned m = (unsigned)dump;
    pthread_mutex_unlock(&lock);
    return m;
}

pt_status pt_set_dump_mode(unsigned modes) {
    if (modes & ~(unsigned)(dnnl_graph_dump_mode_graph | dnnl_graph_dump_mode_subgraph))
        return pt_err(dnnl_invalid_arguments, "set_dump_mode: unknown mode bits 0x%x", modes);
    pthread_mutex_lock(&lock);
    dump = (int)modes;
    pthread_mutex_unlock(&lock);
    return dnnl_success;
}
