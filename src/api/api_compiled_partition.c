/* Compiled partition functions (docs/api.md), execute_with_options included. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "oneapi/dnnl/dnnl_graph.h"
#include "compile/compiled.h"

dnnl_status_t DNNL_API dnnl_graph_compiled_partition_create(dnnl_graph_compiled_partition_t *compiled_partition,
                                                            dnnl_graph_partition_t partition) {
    if (!compiled_partition || !partition)
        return pt_err(dnnl_invalid_arguments, "compiled_partition_create: NULL argument");
    struct dnnl_graph_compiled_partition *cp = calloc(1, sizeof *cp);
    if (!cp) return dnnl_out_of_memory;
    pt_status st = pt_partition_handle_new(partition->impl, &cp->part);
    if (st != dnnl_success) {
        free(cp);
        return st;
    }
    cp->part->own_fpmath = partition->own_fpmath;
    cp->part->fpmath = partition->fpmath;
    cp->part->apply_to_int = partition->apply_to_int;
    *compiled_partition = cp;
    return dnnl_success;
}

static pt_status execute_common(const_dnnl_graph_compiled_partition_t cp, dnnl_stream_t stream, size_t num_inputs,
                                const_dnnl_graph_tensor_t *inputs, size_t num_outputs,
                                const_dnnl_graph_tensor_t *outputs, const_dnnl_graph_tensor_t scratchpad,
                                const size_t *key) {
    if (!cp || !stream || !inputs || !outputs)
        return pt_err(dnnl_invalid_arguments, "compiled_partition_execute: NULL argument");
    if (!cp->c) return pt_err(dnnl_invalid_arguments, "compiled_partition_execute: partition was never compiled");
    return pt_execute(cp->c, stream, num_inputs, inputs, num_outputs, outputs, scratchpad, key);
}

dnnl_status_t DNNL_API dnnl_graph_compiled_partition_execute(const_dnnl_graph_compiled_partition_t compiled_partition,
                                                             dnnl_stream_t stream, size_t num_inputs,
                                                             const_dnnl_graph_tensor_t *inputs, size_t num_outputs,
                                                             const_dnnl_graph_tensor_t *outputs) {
    return execute_common(compiled_partition, stream, num_inputs, inputs, num_outputs, outputs, NULL, NULL);
}

dnnl_status_t DNNL_API dnnl_graph_compiled_partition_execute_v2(
        const_dnnl_graph_compiled_partition_t compiled_partition, dnnl_stream_t stream, size_t num_inputs,
        const_dnnl_graph_tensor_t *inputs, size_t num_outputs, const_dnnl_graph_tensor_t *outputs,
        const_dnnl_graph_tensor_t scratchpad) {
    return execute_common(compiled_partition, stream, num_inputs, inputs, num_outputs, outputs, scratchpad, NULL);
}

dnnl_status_t DNNL_API dnnl_graph_compiled_partition_execute_with_options(
        const_dnnl_graph_compiled_partition_t compiled_partition, dnnl_stream_t stream, size_t num_inputs,
        const_dnnl_graph_tensor_t *inputs, size_t num_outputs, const_dnnl_graph_tensor_t *outputs,
        const dnnl_graph_execute_options_t *options) {
    if (!options) return pt_err(dnnl_invalid_arguments, "execute_with_options: options is NULL");
    /* The key names the constant inputs of this call in the constant
     * tensor cache (kernels that cache derived weights include it). */
    return execute_common(compiled_partition, stream, num_inputs, inputs, num_outputs, outputs, NULL,
                          &options->key);
}

dnnl_status_t DNNL_API dnnl_graph_compiled_partition_destroy(dnnl_graph_compiled_partition_t compiled_partition) {
    if (!compiled_partition) return dnnl_success;
    pt_compiled_release(compiled_partition->c);
    dnnl_graph_partition_destroy(compiled_partition->part);
    free(compiled_partition);
    return dnnl_success;
}

dnnl_status_t DNNL_API dnnl_graph_compiled_partition_query_logical_tensor(
        const_dnnl_graph_compiled_partition_t compiled_partition, size_t tid, dnnl_graph_logical_tensor_t *lt) {
    if (!compiled_partition || !lt) return pt_err(dnnl_invalid_arguments, "query_logical_tensor: NULL argument");
    const pt_compiled *c = compiled_partition->c;
    if (c) {
        for (size_t i = 0; i < c->nin; ++i)
            if (c->inputs[i].id == tid) {
                *lt = c->inputs[i];
                return dnnl_success;
            }
        for (size_t i = 0; i < c->nout; ++i)
            if (c->outputs[i].id == tid) {
                *lt = c->outputs[i];
                return dnnl_success;
            }
    }
    return pt_err(dnnl_invalid_arguments, "query_logical_tensor: %zu is not a port of this compiled partition%s",
                  tid, c ? "" : " (not compiled)");
}

dnnl_status_t DNNL_API dnnl_graph_compiled_partition_get_inplace_ports(
        const_dnnl_graph_compiled_partition_t compiled_partition, size_t *num_inplace_pairs,
        const dnnl_graph_inplace_pair_t **inplace_pairs) {
    if (!compiled_partition || !num_inplace_pairs || !inplace_pairs)
        return pt_err(dnnl_invalid_arguments, "get_inplace_ports: NULL argument");
    const pt_compiled *c = compiled_partition->c;
    *num_inplace_pairs = c ? c->ninplace : 0;
    *inplace_pairs = c ? c->inplace : NULL;
    return dnnl_success;
}

dnnl_status_t DNNL_API dnnl_graph_compiled_partition_get_scratchpad_logical_tensor(
        const_dnnl_graph_compiled_partition_t compiled_partition, dnnl_graph_logical_tensor_t *lt) {
    if (!compiled_partition || !lt) return pt_err(dnnl_invalid_arguments, "get_scratchpad_logical_tensor: NULL argument");
    memset(lt, 0, sizeof *lt);
    lt->id = SIZE_MAX;
    lt->ndims = 1;
    const pt_compiled *c = compiled_partition->c;
    /* A fused plan needs only its kernel's scratch, not the op-by-op one. */
    lt->dims[0] = !c ? 0 : (int64_t)pt_compiled_scratchpad_bytes(c);
    lt->data_type = dnnl_u8;
    lt->property = dnnl_graph_tensor_property_variable;
    lt->layout_type = dnnl_graph_layout_type_strided;
    lt->layout.strides[0] = 1;
    return dnnl_success;
}
