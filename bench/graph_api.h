/* A table of the graph-API entry points, filled with dlsym from one shared
 * library (Partita's libpartita.so or oneDNN's libdnnl.so). Both libraries
 * export the same C ABI, so every benchmark drives either one through the
 * same code and the comparison measures the libraries, not the callers. */
#ifndef BENCH_GRAPH_API_H
#define BENCH_GRAPH_API_H

#include <stddef.h>
#include <stdint.h>

#include "oneapi/dnnl/dnnl_graph.h"

typedef struct graph_api {
    const char *label;   /* "partita" or "onednn", for messages */
    void *handle;        /* from dlopen */

    dnnl_status_t (*engine_create)(dnnl_engine_t *, dnnl_engine_kind_t, size_t);
    dnnl_status_t (*engine_destroy)(dnnl_engine_t);
    dnnl_status_t (*stream_create)(dnnl_stream_t *, dnnl_engine_t, unsigned);
    dnnl_status_t (*stream_wait)(dnnl_stream_t);
    dnnl_status_t (*stream_destroy)(dnnl_stream_t);

    dnnl_status_t (*logical_tensor_init)(dnnl_graph_logical_tensor_t *, size_t,
            dnnl_data_type_t, int32_t, dnnl_graph_layout_type_t,
            dnnl_graph_tensor_property_t);
    dnnl_status_t (*logical_tensor_init_with_strides)(
            dnnl_graph_logical_tensor_t *, size_t, dnnl_data_type_t, int32_t,
            const dnnl_dims_t, const dnnl_dims_t, dnnl_graph_tensor_property_t);
    dnnl_status_t (*logical_tensor_init_with_dims)(
            dnnl_graph_logical_tensor_t *, size_t, dnnl_data_type_t, int32_t,
            const dnnl_dims_t, dnnl_graph_layout_type_t,
            dnnl_graph_tensor_property_t);
    dnnl_status_t (*logical_tensor_get_mem_size)(
            const dnnl_graph_logical_tensor_t *, size_t *);

    dnnl_status_t (*tensor_create)(dnnl_graph_tensor_t *,
            const dnnl_graph_logical_tensor_t *, dnnl_engine_t, void *);
    dnnl_status_t (*tensor_create_scalar)(dnnl_graph_tensor_t *,
            const dnnl_graph_logical_tensor_t *, void *);
    dnnl_status_t (*tensor_destroy)(dnnl_graph_tensor_t);
    dnnl_status_t (*tensor_get_data_handle)(const_dnnl_graph_tensor_t, void **);

    dnnl_status_t (*op_create)(dnnl_graph_op_t *, size_t, dnnl_graph_op_kind_t,
            const char *);
    dnnl_status_t (*op_destroy)(dnnl_graph_op_t);
    dnnl_status_t (*op_add_input)(dnnl_graph_op_t,
            const dnnl_graph_logical_tensor_t *);
    dnnl_status_t (*op_add_output)(dnnl_graph_op_t,
            const dnnl_graph_logical_tensor_t *);
    dnnl_status_t (*op_set_attr_f32)(dnnl_graph_op_t, dnnl_graph_op_attr_t,
            const float *, size_t);
    dnnl_status_t (*op_set_attr_bool)(dnnl_graph_op_t, dnnl_graph_op_attr_t,
            const uint8_t *, size_t);
    dnnl_status_t (*op_set_attr_s64)(dnnl_graph_op_t, dnnl_graph_op_attr_t,
            const int64_t *, size_t);
    dnnl_status_t (*op_set_attr_str)(dnnl_graph_op_t, dnnl_graph_op_attr_t,
            const char *, size_t);

    dnnl_status_t (*graph_create_with_fpmath_mode)(dnnl_graph_graph_t *,
            dnnl_engine_kind_t, dnnl_fpmath_mode_t);
    dnnl_status_t (*graph_set_fpmath_mode)(dnnl_graph_graph_t,
            dnnl_fpmath_mode_t, int);
    dnnl_status_t (*graph_destroy)(dnnl_graph_graph_t);
    dnnl_status_t (*add_op)(dnnl_graph_graph_t, dnnl_graph_op_t);
    dnnl_status_t (*graph_finalize)(dnnl_graph_graph_t);
    dnnl_status_t (*graph_filter)(dnnl_graph_graph_t,
            dnnl_graph_partition_policy_t);
    dnnl_status_t (*graph_get_partition_num)(const_dnnl_graph_graph_t,
            size_t *);
    dnnl_status_t (*graph_get_partitions)(dnnl_graph_graph_t, size_t,
            dnnl_graph_partition_t *);

    dnnl_status_t (*partition_destroy)(dnnl_graph_partition_t);
    dnnl_status_t (*partition_get_op_num)(const_dnnl_graph_partition_t,
            size_t *);
    dnnl_status_t (*partition_is_supported)(const_dnnl_graph_partition_t,
            uint8_t *);
    dnnl_status_t (*partition_get_input_ports_num)(
            const_dnnl_graph_partition_t, size_t *);
    dnnl_status_t (*partition_get_input_ports)(const_dnnl_graph_partition_t,
            size_t, dnnl_graph_logical_tensor_t *);
    dnnl_status_t (*partition_get_output_ports_num)(
            const_dnnl_graph_partition_t, size_t *);
    dnnl_status_t (*partition_get_output_ports)(const_dnnl_graph_partition_t,
            size_t, dnnl_graph_logical_tensor_t *);
    dnnl_status_t (*partition_compile)(dnnl_graph_partition_t,
            dnnl_graph_compiled_partition_t, size_t,
            const dnnl_graph_logical_tensor_t **, size_t,
            const dnnl_graph_logical_tensor_t **, dnnl_engine_t);

    dnnl_status_t (*compiled_partition_create)(
            dnnl_graph_compiled_partition_t *, dnnl_graph_partition_t);
    dnnl_status_t (*compiled_partition_destroy)(
            dnnl_graph_compiled_partition_t);
    dnnl_status_t (*compiled_partition_query_logical_tensor)(
            const_dnnl_graph_compiled_partition_t, size_t,
            dnnl_graph_logical_tensor_t *);
    dnnl_status_t (*compiled_partition_execute)(
            const_dnnl_graph_compiled_partition_t, dnnl_stream_t, size_t,
            const_dnnl_graph_tensor_t *, size_t, const_dnnl_graph_tensor_t *);
    dnnl_status_t (*set_constant_tensor_cache_capacity)(dnnl_engine_kind_t, size_t);
} graph_api;

/* Opens library_path with RTLD_LOCAL (so the two libraries' identical symbol
 * names never resolve into each other) and fills every entry. Returns 0, or
 * -1 with a message in error (dlerror text or the missing symbol). The
 * library is never closed: oneDNN's runtime (SYCL, TBB) keeps threads and
 * exit handlers that must outlive the benchmark's own teardown. */
int graph_api_load(graph_api *api, const char *label, const char *library_path,
        char *error, size_t error_size);

/* Short name of a status code, for the tables. */
const char *graph_api_status_name(dnnl_status_t status);

#endif
