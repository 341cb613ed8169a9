/* Tensor functions (docs/api.md), tensor ids included. */
#include <stdlib.h>
#include <string.h>

#include "oneapi/dnnl/dnnl_graph.h"
#include "runtime/tensor.h"

static pt_status tensor_new(dnnl_graph_tensor_t *tensor, const pt_lt *lt, dnnl_engine_t engine,
                            void *handle, size_t id) {
    if (!tensor || !lt || !engine) return pt_err(dnnl_invalid_arguments, "tensor_create: NULL argument");
    if (lt->property == dnnl_graph_tensor_property_host_scalar)
        return pt_err(dnnl_invalid_arguments,
                      "tensor_create: logical tensor %zu is a host scalar (use tensor_create_scalar)", lt->id);
    size_t size;
    PT_CHECK(pt_lt_check(lt, "tensor_create"));
    PT_CHECK(pt_lt_span_bytes(lt, &size)); /* refuses layouts no buffer can hold */
    struct dnnl_graph_tensor *t = calloc(1, sizeof *t);
    if (!t) {
        *tensor = NULL;
        return dnnl_out_of_memory;
    }
    t->lt = *lt;
    t->engine = engine;
    t->id = id;
    if (handle == DNNL_MEMORY_ALLOCATE) {
        if (size == SIZE_MAX) {
            free(t);
            return pt_err(dnnl_invalid_arguments,
                          "tensor_create: cannot allocate tensor %zu with unknown size", lt->id);
        }
        t->data = pt_engine_alloc(engine, size);
        if (!t->data) {
            free(t);
            *tensor = NULL;
            return pt_err(dnnl_out_of_memory, "tensor_create: allocation of %zu bytes failed", size);
        }
        t->owned = true;
    } else {
        t->data = handle;
    }
    *tensor = t;
    return dnnl_success;
}

dnnl_status_t DNNL_API dnnl_graph_tensor_create(dnnl_graph_tensor_t *tensor,
                                                const dnnl_graph_logical_tensor_t *logical_tensor,
                                                dnnl_engine_t engine, void *handle) {
    return tensor_new(tensor, logical_tensor, engine, handle, logical_tensor ? logical_tensor->id : 0);
}

dnnl_status_t DNNL_API dnnl_graph_tensor_create_with_id(dnnl_graph_tensor_t *tensor,
                                                        const dnnl_graph_logical_tensor_t *logical_tensor,
                                                        dnnl_engine_t engine, void *handle, size_t id) {
    bool given = id != SIZE_MAX;
    if (!given && logical_tensor) id = logical_tensor->id; /* SIZE_MAX: no explicit id */
    pt_status st = tensor_new(tensor, logical_tensor, engine, handle, id);
    if (st == dnnl_success) (*tensor)->id_given = given;
    return st;
}

dnnl_status_t DNNL_API dnnl_graph_tensor_create_scalar(dnnl_graph_tensor_t *tensor,
                                                       const dnnl_graph_logical_tensor_t *logical_tensor,
                                                       void *handle) {
    if (!tensor || !logical_tensor) return pt_err(dnnl_invalid_arguments, "tensor_create_scalar: NULL argument");
    if (logical_tensor->property != dnnl_graph_tensor_property_host_scalar)
        return pt_err(dnnl_invalid_arguments, "tensor_create_scalar: logical tensor %zu is not a host scalar",
                      logical_tensor->id);
    if (!handle || handle == DNNL_MEMORY_ALLOCATE)
        return pt_err(dnnl_invalid_arguments, "tensor_create_scalar: a value pointer is required");
    PT_CHECK(pt_lt_check(logical_tensor, "tensor_create_scalar")); /* ndims 0: kernels read one value */
    struct dnnl_graph_tensor *t = calloc(1, sizeof *t);
    if (!t) return dnnl_out_of_memory;
    t->lt = *logical_tensor;
    t->id = logical_tensor->id;
    switch (logical_tensor->data_type) {
    case dnnl_s32: memcpy(&t->scalar.s32, handle, sizeof(int32_t)); break;
    case dnnl_f32: memcpy(&t->scalar.f32, handle, sizeof(float)); break;
    case dnnl_s64: memcpy(&t->scalar.s64, handle, sizeof(int64_t)); break;
    default:
        free(t);
        return pt_err(dnnl_invalid_arguments, "tensor_create_scalar: data type must be s32, f32 or s64");
    }
    t->data = &t->scalar;
    *tensor = t;
    return dnnl_success;
}

static bool is_scalar(const struct dnnl_graph_tensor *t) {
    return t->lt.property == dnnl_graph_tensor_property_host_scalar;
}

dnnl_status_t DNNL_API dnnl_graph_tensor_destroy(dnnl_graph_tensor_t tensor) {
    if (!tensor) return dnnl_success;
    if (tensor->owned) pt_engine_free(tensor->engine, tensor->data);
    free(tensor);
    return dnnl_success;
}

dnnl_status_t DNNL_API dnnl_graph_tensor_get_data_handle(const_dnnl_graph_tensor_t tensor, void **handle) {
    if (!tensor || !handle) return pt_err(dnnl_invalid_arguments, "tensor_get_data_handle: NULL argument");
    *handle = is_scalar(tensor) ? NULL : tensor->data;
    return dnnl_success;
}

dnnl_status_t DNNL_API dnnl_graph_tensor_set_data_handle(dnnl_graph_tensor_t tensor, void *handle) {
    if (!tensor) return pt_err(dnnl_invalid_arguments, "tensor_set_data_handle: tensor is NULL");
    if (is_scalar(tensor))
        return pt_err(dnnl_invalid_arguments, "tensor_set_data_handle: tensor %zu is a host scalar", tensor->lt.id);
    if (handle == DNNL_MEMORY_ALLOCATE)
        return pt_err(dnnl_invalid_arguments, "tensor_set_data_handle: DNNL_MEMORY_ALLOCATE is not a buffer");
    if (tensor->owned) pt_engine_free(tensor->engine, tensor->data);
    tensor->owned = false;
    tensor->data = handle;
    return dnnl_success;
}

dnnl_status_t DNNL_API dnnl_graph_tensor_get_engine(const_dnnl_graph_tensor_t tensor, dnnl_engine_t *engine) {
    if (!tensor || !engine) return pt_err(dnnl_invalid_arguments, "tensor_get_engine: NULL argument");
    *engine = tensor->engine;
    return dnnl_success;
}

dnnl_status_t DNNL_API dnnl_graph_tensor_get_logical_tensor(const_dnnl_graph_tensor_t tensor,
                                                            dnnl_graph_logical_tensor_t *logical_tensor) {
    if (!tensor || !logical_tensor) return pt_err(dnnl_invalid_arguments, "tensor_get_logical_tensor: NULL argument");
    *logical_tensor = tensor->lt;
    return dnnl_success;
}

dnnl_status_t DNNL_API dnnl_graph_tensor_get_id(const_dnnl_graph_tensor_t tensor, size_t *id) {
    if (!tensor || !id) return pt_err(dnnl_invalid_arguments, "tensor_get_id: NULL argument");
    *id = tensor->id;
    return dnnl_success;
}
