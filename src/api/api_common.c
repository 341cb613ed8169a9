/* dnnl_common.h: engines, streams, default math mode, verbose, version. */
#include <stdlib.h>

#include "oneapi/dnnl/dnnl_common.h"
#include "oneapi/dnnl/dnnl_version_hash.h"
#include "runtime/engine.h"
#include "runtime/settings.h"

size_t DNNL_API dnnl_engine_get_count(dnnl_engine_kind_t kind) { return kind == dnnl_cpu ? 1 : 0; }

dnnl_status_t DNNL_API dnnl_engine_create(dnnl_engine_t *engine, dnnl_engine_kind_t kind, size_t index) {
    return pt_engine_create(engine, kind, index);
}

dnnl_status_t DNNL_API dnnl_engine_get_kind(dnnl_engine_t engine, dnnl_engine_kind_t *kind) {
    if (!engine || !kind) return pt_err(dnnl_invalid_arguments, "engine_get_kind: NULL argument");
    *kind = engine->kind;
    return dnnl_success;
}

dnnl_status_t DNNL_API dnnl_engine_destroy(dnnl_engine_t engine) {
    pt_engine_release(engine);
    return dnnl_success;
}

dnnl_status_t DNNL_API dnnl_stream_create(dnnl_stream_t *stream, dnnl_engine_t engine, unsigned flags) {
    if (!stream || !engine) return pt_err(dnnl_invalid_arguments, "stream_create: NULL argument");
    if (flags & 0x4u) return pt_err(dnnl_unimplemented, "stream_create: profiling needs a GPU engine");
    if (flags & ~(unsigned)(dnnl_stream_in_order | dnnl_stream_out_of_order))
        return pt_err(dnnl_invalid_arguments, "stream_create: unknown flags 0x%x", flags);
    struct dnnl_stream *s = calloc(1, sizeof *s);
    if (!s) return dnnl_out_of_memory;
    pt_engine_retain(engine);
    s->engine = engine;
    s->flags = flags;
    *stream = s;
    return dnnl_success;
}

dnnl_status_t DNNL_API dnnl_stream_get_engine(const_dnnl_stream_t stream, dnnl_engine_t *engine) {
    if (!stream || !engine) return pt_err(dnnl_invalid_arguments, "stream_get_engine: NULL argument");
    *engine = stream->engine;
    return dnnl_success;
}

dnnl_status_t DNNL_API dnnl_stream_wait(dnnl_stream_t stream) {
    /* CPU execution is synchronous: everything submitted is already done. */
    if (!stream) return pt_err(dnnl_invalid_arguments, "stream_wait: stream is NULL");
    return dnnl_success;
}

dnnl_status_t DNNL_API dnnl_stream_destroy(dnnl_stream_t stream) {
    if (!stream) return dnnl_success;
    pt_stream_scratch_drop(stream);
    pt_engine_release(stream->engine);
    free(stream);
    return dnnl_success;
}

dnnl_status_t DNNL_API dnnl_get_default_fpmath_mode(dnnl_fpmath_mode_t *mode) {
    if (!mode) return pt_err(dnnl_invalid_arguments, "get_default_fpmath_mode: mode is NULL");
    *mode = pt_default_fpmath();
    return dnnl_success;
}

dnnl_status_t DNNL_API dnnl_set_default_fpmath_mode(dnnl_fpmath_mode_t mode) {
    return pt_set_default_fpmath(mode);
}

dnnl_status_t DNNL_API dnnl_set_verbose(int level) {
    if (level < 0 || level > 2) return pt_err(dnnl_invalid_arguments, "set_verbose: level %d not in 0..2", level);
    pt_set_verbose_level(level);
    return dnnl_success;
}

const dnnl_version_t DNNL_API *dnnl_version(void) {
    static const dnnl_version_t v = {DNNL_VERSION_MAJOR, DNNL_VERSION_MINOR, DNNL_VERSION_PATCH,
                                     DNNL_VERSION_HASH, DNNL_CPU_RUNTIME, DNNL_GPU_RUNTIME};
    return &v;
}
