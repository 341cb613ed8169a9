/* The tensor object: a logical tensor, an engine and a data pointer. */
#ifndef PARTITA_RUNTIME_TENSOR_H
#define PARTITA_RUNTIME_TENSOR_H

#include <stdbool.h>

#include "ir/logical_tensor.h"
#include "runtime/engine.h"

struct dnnl_graph_tensor {
    pt_lt lt;
    dnnl_engine_t engine; /* not owned (the user keeps it alive); NULL for host scalars */
    void *data;
    bool owned;           /* data allocated by the library through engine */
    size_t id;            /* explicit id (tensor_create_with_id) or lt.id */
    bool id_given;        /* created with an explicit id (names it in the constant cache) */
    union {
        int32_t s32;
        float f32;
        int64_t s64;
    } scalar;             /* host-scalar value (data points here) */
};

#endif
