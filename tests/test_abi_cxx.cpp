// Partita - checks that the public C headers are valid C++ and that a
// handful of functions have exactly the declared types.
//
// Each function is assigned to a pointer of its exact declared type; any
// mismatch in return type, parameter types or constness fails to compile.
// Linked against the library, the program simply returns 0.

#include <cstddef>
#include <cstdint>

#include "oneapi/dnnl/dnnl_common.h"
#include "oneapi/dnnl/dnnl_graph.h"

static_assert(sizeof(dnnl_graph_logical_tensor_t) == 224,
        "logical tensor size");
static_assert(offsetof(dnnl_graph_logical_tensor_t, layout) == 128,
        "logical tensor layout offset");
static_assert(sizeof(dnnl_version_t) == 32, "version size");
static_assert(sizeof(dnnl_graph_op_kind_t) == 4, "enum size");
static_assert(dnnl_graph_op_last_symbol == 88, "op kind count");
static_assert(dnnl_graph_op_attr_end == 0xFF, "attr end");

int main() {
    // Common API.
    size_t (*p_engine_get_count)(dnnl_engine_kind_t) = dnnl_engine_get_count;
    dnnl_status_t (*p_engine_create)(dnnl_engine_t *, dnnl_engine_kind_t,
            size_t) = dnnl_engine_create;
    dnnl_status_t (*p_engine_get_kind)(dnnl_engine_t, dnnl_engine_kind_t *)
            = dnnl_engine_get_kind;
    dnnl_status_t (*p_stream_create)(dnnl_stream_t *, dnnl_engine_t, unsigned)
            = dnnl_stream_create;
    dnnl_status_t (*p_stream_get_engine)(const_dnnl_stream_t, dnnl_engine_t *)
            = dnnl_stream_get_engine;
    dnnl_status_t (*p_set_verbose)(int) = dnnl_set_verbose;
    const dnnl_version_t *(*p_version)(void) = dnnl_version;

    // Graph API.
    dnnl_status_t (*p_allocator_create)(dnnl_graph_allocator_t *,
            dnnl_graph_host_allocate_f, dnnl_graph_host_deallocate_f)
            = dnnl_graph_allocator_create;
    dnnl_status_t (*p_make_engine)(dnnl_engine_t *, dnnl_engine_kind_t, size_t,
            const_dnnl_graph_allocator_t)
            = dnnl_graph_make_engine_with_allocator;
    dnnl_status_t (*p_lt_init_with_dims)(dnnl_graph_logical_tensor_t *,
            size_t, dnnl_data_type_t, int32_t, const int64_t *,
            dnnl_graph_layout_type_t, dnnl_graph_tensor_property_t)
            = dnnl_graph_logical_tensor_init_with_dims;
    dnnl_status_t (*p_lt_is_equal)(const dnnl_graph_logical_tensor_t *,
            const dnnl_graph_logical_tensor_t *, uint8_t *)
            = dnnl_graph_logical_tensor_is_equal;
    dnnl_status_t (*p_op_create)(dnnl_graph_op_t *, size_t,
            dnnl_graph_op_kind_t, const char *)
            = dnnl_graph_op_create;
    dnnl_status_t (*p_set_attr_f32)(dnnl_graph_op_t, dnnl_graph_op_attr_t,
            const float *, size_t)
            = dnnl_graph_op_set_attr_f32;
    dnnl_status_t (*p_get_ops)(dnnl_graph_partition_t, size_t, size_t *)
            = dnnl_graph_partition_get_ops;
    dnnl_status_t (*p_compile)(dnnl_graph_partition_t,
            dnnl_graph_compiled_partition_t, size_t,
            const dnnl_graph_logical_tensor_t **, size_t,
            const dnnl_graph_logical_tensor_t **, dnnl_engine_t)
            = dnnl_graph_partition_compile;
    dnnl_status_t (*p_execute_v2)(const_dnnl_graph_compiled_partition_t,
            dnnl_stream_t, size_t, const_dnnl_graph_tensor_t *, size_t,
            const_dnnl_graph_tensor_t *, const_dnnl_graph_tensor_t)
            = dnnl_graph_compiled_partition_execute_v2;
    dnnl_status_t (*p_inplace)(const_dnnl_graph_compiled_partition_t,
            size_t *, const dnnl_graph_inplace_pair_t **)
            = dnnl_graph_compiled_partition_get_inplace_ports;
    dnnl_status_t (*p_get_fpmath)(dnnl_graph_graph_t, dnnl_fpmath_mode_t *,
            int *)
            = dnnl_graph_graph_get_fpmath_mode;
    dnnl_status_t (*p_get_partition_num)(const_dnnl_graph_graph_t, size_t *)
            = dnnl_graph_graph_get_partition_num;
    dnnl_status_t (*p_set_dump_mode)(dnnl_graph_dump_mode_t)
            = dnnl_graph_set_dump_mode;

    // Partita additions.
    dnnl_status_t (*p_execute_with_options)(
            const_dnnl_graph_compiled_partition_t, dnnl_stream_t, size_t,
            const_dnnl_graph_tensor_t *, size_t, const_dnnl_graph_tensor_t *,
            const dnnl_graph_execute_options_t *)
            = dnnl_graph_compiled_partition_execute_with_options;
    dnnl_status_t (*p_tensor_create_with_id)(dnnl_graph_tensor_t *,
            const dnnl_graph_logical_tensor_t *, dnnl_engine_t, void *, size_t)
            = dnnl_graph_tensor_create_with_id;
    dnnl_status_t (*p_infer_shape)(const_dnnl_graph_partition_t, size_t,
            const dnnl_graph_logical_tensor_t **, size_t,
            dnnl_graph_logical_tensor_t **)
            = dnnl_graph_partition_infer_shape;

    const void *all[] = {(const void *)p_engine_get_count,
            (const void *)p_engine_create, (const void *)p_engine_get_kind,
            (const void *)p_stream_create, (const void *)p_stream_get_engine,
            (const void *)p_set_verbose, (const void *)p_version,
            (const void *)p_allocator_create, (const void *)p_make_engine,
            (const void *)p_lt_init_with_dims, (const void *)p_lt_is_equal,
            (const void *)p_op_create, (const void *)p_set_attr_f32,
            (const void *)p_get_ops, (const void *)p_compile,
            (const void *)p_execute_v2, (const void *)p_inplace,
            (const void *)p_get_fpmath, (const void *)p_get_partition_num,
            (const void *)p_set_dump_mode, (const void *)p_execute_with_options,
            (const void *)p_tensor_create_with_id,
            (const void *)p_infer_shape};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); ++i)
        if (all[i] == nullptr) return 1;

    dnnl_graph_logical_tensor_t lt = {};
    lt.layout.layout_id = 0;
    (void)lt;
    (void)DNNL_MEMORY_ALLOCATE;
    return 0;
}
