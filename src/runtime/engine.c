#include "runtime/engine.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void *pt_host_alloc(size_t size, size_t alignment) {
    if (alignment < sizeof(void *)) alignment = PT_ALIGNMENT;
    if (size == 0) size = 1;
    /* aligned_alloc needs a size multiple of the alignment. */
    size_t rounded = (size + alignment - 1) / alignment * alignment;
    if (rounded < size) return NULL;
    return aligned_alloc(alignment, rounded);
}

void pt_host_free(void *p) { free(p); }

pt_status pt_engine_create(dnnl_engine_t *engine, dnnl_engine_kind_t kind, size_t index) {
    if (!engine) return pt_err(dnnl_invalid_arguments, "engine_create: engine is NULL");
    if (kind != dnnl_cpu)
        return pt_err(dnnl_invalid_arguments, "engine_create: engine kind %d not available (CPU-only build)", (int)kind);
    if (index != 0)
        return pt_err(dnnl_invalid_arguments, "engine_create: cpu device index %zu out of range (1 device)", index);
    struct dnnl_engine *e = calloc(1, sizeof *e);
    if (!e) return dnnl_out_of_memory;
    e->refcount = 1;
    e->kind = kind;
    e->index = index;
    *engine = e;
    return dnnl_success;
}

void pt_engine_retain(dnnl_engine_t e) {
    if (e) __atomic_add_fetch(&e->refcount, 1, __ATOMIC_ACQ_REL);
}

void pt_engine_release(dnnl_engine_t e) {
    if (e && __atomic_sub_fetch(&e->refcount, 1, __ATOMIC_ACQ_REL) == 0) free(e);
}

void *pt_engine_alloc(dnnl_engine_t e, size_t size) {
    if (e && e->alloc) return e->alloc(size ? size : 1, PT_ALIGNMENT);
    return pt_host_alloc(size, PT_ALIGNMENT);
}

void pt_engine_free(dnnl_engine_t e, void *p) {
    if (!p) return;
    if (e && e->dealloc)
        e->dealloc(p);
    else
        pt_host_free(p);
}

/* A kept buffer starts with one 64-byte header holding its usable size. */
#define SCRATCH_HEADER PT_ALIGNMENT

void *pt_stream_scratch_take(dnnl_stream_t s, size_t bytes) {
    char *kept = __atomic_exchange_n(&s->kept_scratch, (void *)NULL, __ATOMIC_ACQ_REL);
    if (kept) {
        size_t have;
        memcpy(&have, kept, sizeof have);
        if (have >= bytes) return kept + SCRATCH_HEADER;
        pt_engine_free(s->engine, kept);
    }
    if (bytes > SIZE_MAX - SCRATCH_HEADER) return NULL;
    char *p = pt_engine_alloc(s->engine, bytes + SCRATCH_HEADER);
    if (!p) return NULL;
    memcpy(p, &bytes, sizeof bytes);
    return p + SCRATCH_HEADER;
}

void pt_stream_scratch_give(dnnl_stream_t s, void *scratch) {
    if (!scratch) return;
    char *base = (char *)scratch - SCRATCH_HEADER;
    void *old = __atomic_exchange_n(&s->kept_scratch, (void *)base, __ATOMIC_ACQ_REL);
    if (old) pt_engine_free(s->engine, old);
}

void pt_stream_scratch_drop(dnnl_stream_t s) {
    void *kept = __atomic_exchange_n(&s->kept_scratch, (void *)NULL, __ATOMIC_ACQ_REL);
    if (kept) pt_engine_free(s->engine, kept);
}
