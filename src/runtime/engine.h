/* Engine, stream and allocator objects (CPU only; GPU kinds are refused). */
#ifndef PARTITA_RUNTIME_ENGINE_H
#define PARTITA_RUNTIME_ENGINE_H

#include <stddef.h>

#include "oneapi/dnnl/dnnl_graph.h"
#include "ir/status.h"

struct dnnl_graph_allocator {
    dnnl_graph_host_allocate_f alloc;
    dnnl_graph_host_deallocate_f dealloc;
};

struct dnnl_engine {
    int refcount; /* atomic; the creator's reference plus one per holder */
    dnnl_engine_kind_t kind;
    size_t index;
    dnnl_graph_host_allocate_f alloc; /* NULL: built-in aligned allocation */
    dnnl_graph_host_deallocate_f dealloc;
};

struct dnnl_stream {
    dnnl_engine_t engine;
    unsigned flags;
    /* Scratch kept from the last execution for the next one (atomic
     * exchange; NULL when none or in use): executions without a user
     * scratchpad reuse it instead of allocating, and the kernel faulting in,
     * fresh pages each time.  Freed by dnnl_stream_destroy. */
    void *kept_scratch;
};

#define PT_ALIGNMENT 64

pt_status pt_engine_create(dnnl_engine_t *engine, dnnl_engine_kind_t kind, size_t index);
void pt_engine_retain(dnnl_engine_t e);
void pt_engine_release(dnnl_engine_t e);
/* 64-byte aligned buffer through the engine's allocator (NULL on failure). */
void *pt_engine_alloc(dnnl_engine_t e, size_t size);
void pt_engine_free(dnnl_engine_t e, void *p);
/* Scratch of at least `bytes` (64-byte aligned) for one execution on `s`:
 * the stream's kept buffer when it is free and large enough, else a new one
 * from the engine's allocator (NULL on failure).  Hand it back with
 * pt_stream_scratch_give, which keeps it for the next execution (a buffer
 * kept meanwhile by another thread is freed). */
void *pt_stream_scratch_take(dnnl_stream_t s, size_t bytes);
void pt_stream_scratch_give(dnnl_stream_t s, void *scratch);
/* Frees the kept buffer (stream destruction). */
void pt_stream_scratch_drop(dnnl_stream_t s);
/* The built-in aligned host allocator. */
void *pt_host_alloc(size_t size, size_t alignment);
void pt_host_free(void *p);

#endif
