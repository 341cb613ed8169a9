/* Logical tensor functions (docs/api.md): operate on caller-owned structs. */
#include <string.h>

#include "ir/dtype.h"
#include "oneapi/dnnl/dnnl_graph.h"
#include "ir/logical_tensor.h"

static pt_status check_scalar_rules(int32_t ndims, dnnl_data_type_t dtype, dnnl_graph_tensor_property_t ptype) {
    if (ptype == dnnl_graph_tensor_property_host_scalar) {
        if (ndims != 0)
            return pt_err(dnnl_invalid_arguments, "logical tensor: host_scalar needs ndims 0, got %d", ndims);
        if (dtype != dnnl_s32 && dtype != dnnl_f32 && dtype != dnnl_s64)
            return pt_err(dnnl_invalid_arguments, "logical tensor: host_scalar data type must be s32, f32 or s64");
    }
    return dnnl_success;
}

static void fill_head(pt_lt *lt, size_t tid, dnnl_data_type_t dtype, int32_t ndims,
                      dnnl_graph_layout_type_t ltype, dnnl_graph_tensor_property_t ptype) {
    memset(lt, 0, sizeof *lt);
    lt->id = tid;
    lt->ndims = ndims;
    lt->data_type = dtype;
    lt->layout_type = ltype;
    lt->property = ptype;
}

dnnl_status_t DNNL_API dnnl_graph_logical_tensor_init(dnnl_graph_logical_tensor_t *logical_tensor, size_t tid,
                                                      dnnl_data_type_t dtype, int32_t ndims,
                                                      dnnl_graph_layout_type_t ltype,
                                                      dnnl_graph_tensor_property_t ptype) {
    if (!logical_tensor) return pt_err(dnnl_invalid_arguments, "logical_tensor_init: output is NULL");
    if (ndims > DNNL_MAX_NDIMS)
        return pt_err(dnnl_invalid_arguments, "logical_tensor_init: tensor %zu ndims %d > 12", tid, ndims);
    PT_CHECK(check_scalar_rules(ndims, dtype, ptype));
    pt_lt lt;
    fill_head(&lt, tid, dtype, ndims, ltype, ptype);
    if (ndims != 0)
        for (int d = 0; d < DNNL_MAX_NDIMS; ++d) lt.dims[d] = lt.layout.strides[d] = DNNL_GRAPH_UNKNOWN_DIM;
    *logical_tensor = lt;
    return dnnl_success;
}

dnnl_status_t DNNL_API dnnl_graph_logical_tensor_init_with_dims(dnnl_graph_logical_tensor_t *logical_tensor,
                                                                size_t tid, dnnl_data_type_t dtype,
                                                                int32_t ndims, const dnnl_dims_t dims,
                                                                dnnl_graph_layout_type_t ltype,
                                                                dnnl_graph_tensor_property_t ptype) {
    if (!logical_tensor) return pt_err(dnnl_invalid_arguments, "logical_tensor_init_with_dims: output is NULL");
    if (ndims < 0 || ndims > DNNL_MAX_NDIMS)
        return pt_err(dnnl_invalid_arguments, "logical_tensor_init_with_dims: tensor %zu ndims %d", tid, ndims);
    if (ndims > 0 && !dims)
        return pt_err(dnnl_invalid_arguments, "logical_tensor_init_with_dims: tensor %zu dims is NULL", tid);
    PT_CHECK(check_scalar_rules(ndims, dtype, ptype));
    pt_lt lt;
    fill_head(&lt, tid, dtype, ndims, ltype, ptype);
    if (ndims > 0) {
        bool known = true;
        for (int d = 0; d < ndims; ++d) {
            lt.dims[d] = dims[d];
            if (dims[d] < 0) known = false;
        }
        if (known && ltype == dnnl_graph_layout_type_strided)
            pt_dense_strides(ndims, lt.dims, lt.layout.strides);
        else
            for (int d = 0; d < DNNL_MAX_NDIMS; ++d) lt.layout.strides[d] = DNNL_GRAPH_UNKNOWN_DIM;
    }
    *logical_tensor = lt;
    return dnnl_success;
}

dnnl_status_t DNNL_API dnnl_graph_logical_tensor_init_with_strides(
        dnnl_graph_logical_tensor_t *logical_tensor, size_t tid, dnnl_data_type_t dtype, int32_t ndims,
        const dnnl_dims_t dims, const dnnl_dims_t strides, dnnl_graph_tensor_property_t ptype) {
    if (!logical_tensor) return pt_err(dnnl_invalid_arguments, "logical_tensor_init_with_strides: output is NULL");
    if (ndims < 0 || ndims > DNNL_MAX_NDIMS)
        return pt_err(dnnl_invalid_arguments, "logical_tensor_init_with_strides: tensor %zu ndims %d", tid, ndims);
    if (ndims > 0 && (!dims || !strides))
        return pt_err(dnnl_invalid_arguments, "logical_tensor_init_with_strides: tensor %zu dims/strides NULL", tid);
    PT_CHECK(check_scalar_rules(ndims, dtype, ptype));
    pt_lt lt;
    fill_head(&lt, tid, dtype, ndims, dnnl_graph_layout_type_strided, ptype);
    for (int d = 0; d < ndims; ++d) {
        lt.dims[d] = dims[d];
        lt.layout.strides[d] = strides[d];
    }
    *logical_tensor = lt;
    return dnnl_success;
}

dnnl_status_t DNNL_API dnnl_graph_logical_tensor_get_mem_size(const dnnl_graph_logical_tensor_t *logical_tensor,
                                                              size_t *size) {
    if (!logical_tensor || !size) return pt_err(dnnl_invalid_arguments, "logical_tensor_get_mem_size: NULL argument");
    size_t bytes;
    PT_CHECK(pt_lt_span_bytes(logical_tensor, &bytes));
    *size = bytes;
    return dnnl_success;
}

dnnl_status_t DNNL_API dnnl_graph_logical_tensor_is_equal(const dnnl_graph_logical_tensor_t *lt1,
                                                          const dnnl_graph_logical_tensor_t *lt2,
                                                          uint8_t *is_equal) {
    if (!lt1 || !lt2 || !is_equal) return pt_err(dnnl_invalid_arguments, "logical_tensor_is_equal: NULL argument");
    *is_equal = pt_lt_equal(lt1, lt2) ? 1 : 0;
    return dnnl_success;
}
