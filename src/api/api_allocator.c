/* Allocator objects and engines that use them. */
#include <stdlib.h>

#include "oneapi/dnnl/dnnl_graph.h"
#include "runtime/engine.h"

dnnl_status_t DNNL_API dnnl_graph_allocator_create(dnnl_graph_allocator_t *allocator,
                                                   dnnl_graph_host_allocate_f host_malloc,
                                                   dnnl_graph_host_deallocate_f host_free) {
    if (!allocator) return pt_err(dnnl_invalid_arguments, "allocator_create: allocator is NULL");
    struct dnnl_graph_allocator *a = calloc(1, sizeof *a);
    if (!a) return dnnl_out_of_memory;
    /* Both callbacks or neither: a half-specified pair falls back to the built-in one. */
    if (host_malloc && host_free) {
        a->alloc = host_malloc;
        a->dealloc = host_free;
    }
    *allocator = a;
    return dnnl_success;
}

dnnl_status_t DNNL_API dnnl_graph_allocator_destroy(dnnl_graph_allocator_t allocator) {
    if (!allocator) return pt_err(dnnl_invalid_arguments, "allocator_destroy: allocator is NULL");
    free(allocator);
    return dnnl_success;
}

dnnl_status_t DNNL_API dnnl_graph_make_engine_with_allocator(dnnl_engine_t *engine, dnnl_engine_kind_t kind,
                                                             size_t index, const_dnnl_graph_allocator_t alloc) {
    if (!alloc) return pt_err(dnnl_invalid_arguments, "make_engine_with_allocator: allocator is NULL");
    pt_status st = pt_engine_create(engine, kind, index);
    if (st != dnnl_success) return st;
    (*engine)->alloc = alloc->alloc;
    (*engine)->dealloc = alloc->dealloc;
    return dnnl_success;
}
