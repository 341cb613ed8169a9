#include "graph_api.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

/* Stores a dlsym result into a function-pointer field. The memcpy avoids the
 * object-to-function pointer cast that ISO C leaves undefined. */
static int bind_symbol(void *handle, const char *name, void *field,
        char *error, size_t error_size) {
    void *symbol = dlsym(handle, name);
    if (!symbol) {
        snprintf(error, error_size, "missing symbol %s", name);
        return -1;
    }
    memcpy(field, &symbol, sizeof symbol);
    return 0;
}

int graph_api_load(graph_api *api, const char *label, const char *library_path,
        char *error, size_t error_size) {
    memset(api, 0, sizeof *api);
    api->label = label;
    api->handle = dlopen(library_path, RTLD_NOW | RTLD_LOCAL);
    if (!api->handle) {
        snprintf(error, error_size, "%s", dlerror());
        return -1;
    }
#define BIND(field, symbol) \
    if (bind_symbol(api->handle, symbol, &api->field, error, error_size)) \
        goto fail;
    BIND(engine_create, "dnnl_engine_create")
    BIND(engine_destroy, "dnnl_engine_destroy")
    BIND(stream_create, "dnnl_stream_create")
    BIND(stream_wait, "dnnl_stream_wait")
    BIND(stream_destroy, "dnnl_stream_destroy")
    BIND(logical_tensor_init, "dnnl_graph_logical_tensor_init")
    BIND(logical_tensor_init_with_strides,
            "dnnl_graph_logical_tensor_init_with_strides")
    BIND(logical_tensor_init_with_dims, "dnnl_graph_logical_tensor_init_with_dims")
    BIND(logical_tensor_get_mem_size, "dnnl_graph_logical_tensor_get_mem_size")
    BIND(tensor_create, "dnnl_graph_tensor_create")
    BIND(tensor_create_scalar, "dnnl_graph_tensor_create_scalar")
    BIND(tensor_destroy, "dnnl_graph_tensor_destroy")
    BIND(tensor_get_data_handle, "dnnl_graph_tensor_get_data_handle")
    BIND(op_create, "dnnl_graph_op_create")
    BIND(op_destroy, "dnnl_graph_op_destroy")
    BIND(op_add_input, "dnnl_graph_op_add_input")
    BIND(op_add_output, "dnnl_graph_op_add_output")
    BIND(op_set_attr_f32, "dnnl_graph_op_set_attr_f32")
    BIND(op_set_attr_bool, "dnnl_graph_op_set_attr_bool")
    BIND(op_set_attr_s64, "dnnl_graph_op_set_attr_s64")
    BIND(op_set_attr_str, "dnnl_graph_op_set_attr_str")
    BIND(graph_create_with_fpmath_mode, "dnnl_graph_graph_create_with_fpmath_mode")
    BIND(graph_set_fpmath_mode, "dnnl_graph_graph_set_fpmath_mode")
    BIND(graph_destroy, "dnnl_graph_graph_destroy")
    BIND(add_op, "dnnl_graph_add_op")
    BIND(graph_finalize, "dnnl_graph_graph_finalize")
    BIND(graph_filter, "dnnl_graph_graph_filter")
    BIND(graph_get_partition_num, "dnnl_graph_graph_get_partition_num")
    BIND(graph_get_partitions, "dnnl_graph_graph_get_partitions")
    BIND(partition_destroy, "dnnl_graph_partition_destroy")
    BIND(partition_get_op_num, "dnnl_graph_partition_get_op_num")
    BIND(partition_is_supported, "dnnl_graph_partition_is_supported")
    BIND(partition_get_input_ports_num, "dnnl_graph_partition_get_input_ports_num")
    BIND(partition_get_input_ports, "dnnl_graph_partition_get_input_ports")
    BIND(partition_get_output_ports_num,
            "dnnl_graph_partition_get_output_ports_num")
    BIND(partition_get_output_ports, "dnnl_graph_partition_get_output_ports")
    BIND(partition_compile, "dnnl_graph_partition_compile")
    BIND(compiled_partition_create, "dnnl_graph_compiled_partition_create")
    BIND(compiled_partition_destroy, "dnnl_graph_compiled_partition_destroy")
    BIND(compiled_partition_query_logical_tensor,
            "dnnl_graph_compiled_partition_query_logical_tensor")
    BIND(compiled_partition_execute, "dnnl_graph_compiled_partition_execute")
    BIND(set_constant_tensor_cache_capacity, "dnnl_graph_set_constant_tensor_cache_capacity")
#undef BIND
    return 0;
fail:
    dlclose(api->handle);
    api->handle = NULL;
    return -1;
}

const char *graph_api_status_name(dnnl_status_t status) {
    switch (status) {
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
