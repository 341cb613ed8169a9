/* Decoders of the normalisation reference kernels. */
#include "compile/ref_decode.h"
#include "kernels/ref/ref_kernels.h"
#include "ops/op_schema.h"

/* Common attributes; with `by_axis` begin_norm_axis is resolved for the rank
 * of input 0 (LayerNorm family), otherwise data_format is decoded. */
static pt_status decode_norm(const pt_op *op, pt_bound_kernel *out, pt_kernel_fn fn, bool by_axis,
                             pt_ref_norm_params **pp) {
    pt_ref_norm_params a = {.name = pt_op_kind_name(op->kind)};
    if (by_axis) {
        int r = op->nin ? op->in[0].ndims : 0;
        int64_t ax = pt_op_s64(op, dnnl_graph_op_attr_begin_norm_axis, -1);
        if (ax < 0) ax += r;
        if (r < 1) return pt_err(dnnl_invalid_arguments, "%s: src must have rank >= 1", a.name);
        if (ax < 0 || ax >= r)
            return pt_err(dnnl_invalid_arguments, "%s: begin_norm_axis out of range for rank %d", a.name, r);
        a.axis = (int)ax;
    } else {
        PT_CHECK(pt_decode_nxc(op, &a.nxc));
    }
    a.affine = pt_op_bool(op, dnnl_graph_op_attr_use_affine, true);
    a.groups = pt_op_s64(op, dnnl_graph_op_attr_groups, 1);
    a.eps = pt_op_f32(op, dnnl_graph_op_attr_epsilon, 1e-5f);
    a.momentum = pt_op_f32(op, dnnl_graph_op_attr_momentum, 0.5f);
    *pp = pt_decode_params(out, fn, &a, sizeof a, 0);
    return *pp ? dnnl_success : dnnl_out_of_memory;
}

PT_DECODE_DECL(layer_norm) {
    pt_ref_norm_params *p = NULL;
    PT_CHECK(decode_norm(op, out, pt_ref_layer_norm, true, &p));
    out->scratch_bytes = pt_ref_layer_norm_scratch(p, &op->in[0], false);
    return dnnl_success;
}

PT_DECODE_DECL(layer_norm_bwd) {
    pt_ref_norm_params *p = NULL;
    PT_CHECK(decode_norm(op, out, pt_ref_layer_norm_bwd, true, &p));
    out->scratch_bytes = pt_ref_layer_norm_scratch(p, &op->in[0], true);
    return dnnl_success;
}

PT_DECODE_DECL(rms_norm) {
    pt_ref_norm_params *p = NULL;
    PT_CHECK(decode_norm(op, out, pt_ref_rms_norm, true, &p));
    out->scratch_bytes = pt_ref_rms_norm_scratch(p, &op->in[0]);
    return dnnl_success;
}

PT_DECODE_DECL(group_norm) {
    pt_ref_norm_params *p = NULL;
    PT_CHECK(decode_norm(op, out, pt_ref_group_norm, false, &p));
    if (op->nin) out->scratch_bytes = pt_ref_group_norm_scratch(p, &op->in[0]);
    return dnnl_success;
}

/* BatchNorm*: offset tables for `ntensors` data tensors of the src shape. */
static pt_status decode_bn(const pt_op *op, pt_bound_kernel *out, pt_kernel_fn fn, int ntensors) {
    pt_ref_norm_params *p = NULL;
    PT_CHECK(decode_norm(op, out, fn, false, &p));
    if (op->nin) out->scratch_bytes = pt_ref_batch_norm_scratch(p, &op->in[0], ntensors);
    return dnnl_success;
}

PT_DECODE_DECL(batch_norm_inference) { return decode_bn(op, out, pt_ref_batch_norm_inference, 2); }
PT_DECODE_DECL(batch_norm_fwd_training) { return decode_bn(op, out, pt_ref_batch_norm_fwd_training, 2); }
PT_DECODE_DECL(batch_norm_bwd) { return decode_bn(op, out, pt_ref_batch_norm_bwd, 3); }
