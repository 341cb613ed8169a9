/* Compiled partition cache, constant tensor cache and dump mode (docs/api.md, "Environment variables" and "Partita additions"). */
#include <stdint.h>

#include "oneapi/dnnl/dnnl_graph.h"
#include "compile/cp_cache.h"
#include "runtime/settings.h"

dnnl_status_t DNNL_API dnnl_graph_get_compiled_partition_cache_capacity(int *capacity) {
    if (!capacity) return pt_err(dnnl_invalid_arguments, "get_compiled_partition_cache_capacity: NULL argument");
    *capacity = pt_cp_cache_capacity();
    return dnnl_success;
}

dnnl_status_t DNNL_API dnnl_graph_set_compiled_partition_cache_capacity(int capacity) {
    return pt_cp_cache_set_capacity(capacity);
}

dnnl_status_t DNNL_API dnnl_graph_set_constant_tensor_cache(int flag) {
    if (flag < 0) return pt_err(dnnl_invalid_arguments, "set_constant_tensor_cache: flag %d < 0", flag);
    size_t mb = flag ? SIZE_MAX : 0;
    pt_set_const_cache_capacity_mb(dnnl_cpu, mb);
    pt_set_const_cache_capacity_mb(dnnl_gpu, mb);
    return dnnl_success;
}

dnnl_status_t DNNL_API dnnl_graph_get_constant_tensor_cache(int *flag) {
    if (!flag) return pt_err(dnnl_invalid_arguments, "get_constant_tensor_cache: flag is NULL");
    *flag = pt_const_cache_capacity_mb(dnnl_cpu) || pt_const_cache_capacity_mb(dnnl_gpu);
    return dnnl_success;
}

dnnl_status_t DNNL_API dnnl_graph_set_constant_tensor_cache_capacity(dnnl_engine_kind_t eng_kind, size_t size) {
    return pt_set_const_cache_capacity_mb(eng_kind, size);
}

dnnl_status_t DNNL_API dnnl_graph_get_constant_tensor_cache_capacity(dnnl_engine_kind_t eng_kind, size_t *size) {
    if (!size) return pt_err(dnnl_invalid_arguments, "get_constant_tensor_cache_capacity: size is NULL");
    if (eng_kind != dnnl_cpu && eng_kind != dnnl_gpu)
        return pt_err(dnnl_invalid_arguments, "get_constant_tensor_cache_capacity: invalid engine kind %d",
                      (int)eng_kind);
    *size = pt_const_cache_capacity_mb(eng_kind);
    return dnnl_success;
}

dnnl_status_t DNNL_API dnnl_graph_set_dump_mode(dnnl_graph_dump_mode_t modes) {
    return pt_set_dump_mode((unsigned)modes);
}
