/* Partition functions (docs/api.md), with the partition-level math mode. */
#include <stdlib.h>

#include "oneapi/dnnl/dnnl_graph.h"
#include "compile/compiled.h"
#include "compile/json_dump.h"
#include "ir/graph.h"
#include "ops/op_schema.h"
#include "ops/graph_add.h"
#include "partition/graph_parts.h"
#include "partition/partition.h"
#include "runtime/settings.h"

dnnl_status_t DNNL_API dnnl_graph_partition_create_with_op(dnnl_graph_partition_t *partition,
                                                           const_dnnl_graph_op_t op, dnnl_engine_kind_t ekind) {
    if (!partition || !op) return pt_err(dnnl_invalid_arguments, "partition_create_with_op: NULL argument");
    if (ekind != dnnl_cpu)
        return pt_err(dnnl_invalid_graph, "partition_create_with_op: no backend for engine kind %d", (int)ekind);
    pt_graph *g = NULL;
    pt_status st = pt_graph_create(&g, ekind, pt_default_fpmath());
    if (st != dnnl_success) return st;
    st = pt_graph_add_op(g, op);
    if (st == dnnl_success) st = pt_graph_finalize(g);
    if (st == dnnl_invalid_graph) st = dnnl_invalid_graph_op; /* a lone op can only fail its own checks */
    if (st == dnnl_success) st = pt_partition_graph(g, dnnl_graph_partition_policy_fusion);
    if (st == dnnl_success && g->nparts != 1)
        st = pt_err(dnnl_invalid_graph, "partition_create_with_op: op #%zu did not form one partition", op->id);
    if (st == dnnl_success) st = pt_partition_handle_new(g->parts[0], partition);
    pt_graph_release(g);
    return st;
}

dnnl_status_t DNNL_API dnnl_graph_partition_destroy(dnnl_graph_partition_t partition) {
    if (!partition) return dnnl_success;
    pt_partition_impl_release(partition->impl);
    free(partition);
    return dnnl_success;
}

dnnl_status_t DNNL_API dnnl_graph_partition_get_op_num(const_dnnl_graph_partition_t partition, size_t *num) {
    if (!partition || !num) return pt_err(dnnl_invalid_arguments, "partition_get_op_num: NULL argument");
    *num = partition->impl->nops;
    return dnnl_success;
}

dnnl_status_t DNNL_API dnnl_graph_partition_get_ops(dnnl_graph_partition_t partition, size_t num, size_t *ids) {
    if (!partition || !ids) return pt_err(dnnl_invalid_arguments, "partition_get_ops: NULL argument");
    if (num != partition->impl->nops)
        return pt_err(dnnl_invalid_arguments, "partition_get_ops: num %zu, partition has %zu ops", num,
                      partition->impl->nops);
    for (size_t i = 0; i < num; ++i) ids[i] = partition->impl->ops[i]->id;
    return dnnl_success;
}

dnnl_status_t DNNL_API dnnl_graph_partition_get_id(const_dnnl_graph_partition_t partition, size_t *id) {
    if (!partition || !id) return pt_err(dnnl_invalid_arguments, "partition_get_id: NULL argument");
    *id = partition->impl->id;
    return dnnl_success;
}

dnnl_status_t DNNL_API dnnl_graph_partition_compile(dnnl_graph_partition_t partition,
                                                    dnnl_graph_compiled_partition_t compiled_partition,
                                                    size_t in_num, const dnnl_graph_logical_tensor_t **inputs,
                                                    size_t out_num, const dnnl_graph_logical_tensor_t **outputs,
                                                    dnnl_engine_t engine) {
    if (!partition || !compiled_partition || !engine)
        return pt_err(dnnl_invalid_arguments, "partition_compile: NULL partition, compiled partition or engine");
    if ((in_num && !inputs) || (out_num && !outputs))
        return pt_err(dnnl_invalid_arguments, "partition_compile: NULL logical tensor array");
    if (compiled_partition->part->impl != partition->impl)
        return pt_err(dnnl_invalid_arguments,
                      "partition_compile: compiled partition was created from another partition");
    pt_compiled *c = NULL;
    pt_status st = pt_compile(partition, in_num, inputs, out_num, outputs, engine, &c);
    if (st != dnnl_success) return st;
    pt_compiled_release(compiled_partition->c);
    compiled_partition->c = c;
    if (pt_dump_mode() & dnnl_graph_dump_mode_subgraph) {
        pt_dump_subgraph(partition->impl, c);
    }
    return dnnl_success;
}

dnnl_status_t DNNL_API dnnl_graph_partition_get_input_ports_num(const_dnnl_graph_partition_t partition,
                                                                size_t *num) {
    if (!partition || !num) return pt_err(dnnl_invalid_arguments, "partition_get_input_ports_num: NULL argument");
    *num = partition->impl->nin;
    return dnnl_success;
}

/* Copies a partition's port list after checking the caller's count. */
static dnnl_status_t copy_ports(const char *fn, size_t num, size_t have, const pt_lt *ports,
                                dnnl_graph_logical_tensor_t *dst) {
    if (num != have) return pt_err(dnnl_invalid_arguments, "%s: num %zu, partition has %zu", fn, num, have);
    for (size_t i = 0; i < num; ++i) dst[i] = ports[i];
    return dnnl_success;
}

dnnl_status_t DNNL_API dnnl_graph_partition_get_input_ports(const_dnnl_graph_partition_t partition, size_t num,
                                                            dnnl_graph_logical_tensor_t *inputs) {
    if (!partition || !inputs) return pt_err(dnnl_invalid_arguments, "partition_get_input_ports: NULL argument");
    return copy_ports("partition_get_input_ports", num, partition->impl->nin, partition->impl->inputs, inputs);
}

dnnl_status_t DNNL_API dnnl_graph_partition_get_output_ports_num(const_dnnl_graph_partition_t partition,
                                                                 size_t *num) {
    if (!partition || !num) return pt_err(dnnl_invalid_arguments, "partition_get_output_ports_num: NULL argument");
    *num = partition->impl->nout;
    return dnnl_success;
}

dnnl_status_t DNNL_API dnnl_graph_partition_get_output_ports(const_dnnl_graph_partition_t partition, size_t num,
                                                             dnnl_graph_logical_tensor_t *outputs) {
    if (!partition || !outputs) return pt_err(dnnl_invalid_arguments, "partition_get_output_ports: NULL argument");
    return copy_ports("partition_get_output_ports", num, partition->impl->nout, partition->impl->outputs, outputs);
}

dnnl_status_t DNNL_API dnnl_graph_partition_is_supported(const_dnnl_graph_partition_t partition,
                                                         uint8_t *is_supported) {
    if (!partition || !is_supported) return pt_err(dnnl_invalid_arguments, "partition_is_supported: NULL argument");
    *is_supported = partition->impl->supported ? 1 : 0;
    return dnnl_success;
}

dnnl_status_t DNNL_API dnnl_graph_partition_get_engine_kind(const_dnnl_graph_partition_t partition,
                                                            dnnl_engine_kind_t *kind) {
    if (!partition || !kind) return pt_err(dnnl_invalid_arguments, "partition_get_engine_kind: NULL argument");
    *kind = partition->impl->ekind;
    return dnnl_success;
}

dnnl_status_t DNNL_API dnnl_graph_partition_set_fpmath_mode(dnnl_graph_partition_t partition,
                                                            dnnl_fpmath_mode_t mode, int apply_to_int) {
    if (!partition) return pt_err(dnnl_invalid_arguments, "partition_set_fpmath_mode: partition is NULL");
    if ((int)mode < dnnl_fpmath_mode_strict || (int)mode > dnnl_fpmath_mode_tf32)
        return pt_err(dnnl_invalid_arguments, "partition_set_fpmath_mode: invalid mode %d", (int)mode);
    partition->own_fpmath = true;
    partition->fpmath = mode;
    partition->apply_to_int = apply_to_int != 0;
    return dnnl_success;
}

dnnl_status_t DNNL_API dnnl_graph_partition_get_fpmath_mode(const_dnnl_graph_partition_t partition,
                                                            dnnl_fpmath_mode_t *mode, int *apply_to_int) {
    if (!partition || !mode || !apply_to_int)
        return pt_err(dnnl_invalid_arguments, "partition_get_fpmath_mode: NULL argument");
    pt_partition_fpmath(partition, mode, apply_to_int);
    return dnnl_success;
}

dnnl_status_t DNNL_API dnnl_graph_partition_infer_shape(const_dnnl_graph_partition_t partition, size_t num_inputs,
                                                        const dnnl_graph_logical_tensor_t **inputs,
                                                        size_t num_outputs, dnnl_graph_logical_tensor_t **outputs) {
    if (!partition || (num_inputs && !inputs) || (num_outputs && !outputs))
        return pt_err(dnnl_invalid_arguments, "partition_infer_shape: NULL argument");
    for (size_t i = 0; i < num_inputs; ++i)
        if (!inputs[i]) return pt_err(dnnl_invalid_arguments, "partition_infer_shape: input %zu is NULL", i);
    return pt_partition_infer_shapes(partition->impl, num_inputs, inputs, num_outputs, outputs);
}
