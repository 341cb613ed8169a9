/* Decoders of the element-wise, softmax and reduction reference kernels. */
#include <string.h>

#include "compile/ref_decode.h"
#include "kernels/ref/ref_kernels.h"
#include "ops/op_schema.h"

pt_eltwise_params pt_eltwise_params_of(const pt_op *op) {
    pt_eltwise_params p;
    p.kind = op->kind;
    p.alpha = pt_op_f32(op, dnnl_graph_op_attr_alpha, 0.f);
    p.beta = pt_op_f32(op, dnnl_graph_op_attr_beta, 0.f);
    p.lo = pt_op_f32(op, dnnl_graph_op_attr_min, 0.f);
    p.hi = pt_op_f32(op, dnnl_graph_op_attr_max, 0.f);
    p.use_dst = pt_op_bool(op, dnnl_graph_op_attr_use_dst, true);
    const char *mode = pt_op_str(op, dnnl_graph_op_attr_mode, "gelu_erf");
    p.gelu_tanh = mode && strcmp(mode, "gelu_tanh") == 0;
    if (op->kind == dnnl_graph_op_softplus || op->kind == dnnl_graph_op_softplus_backward)
        p.beta = pt_op_f32(op, dnnl_graph_op_attr_beta, 1.f);
    return p;
}

/* ---- unary ---------------------------------------------------------------- */

static bool bwd_supported(int kind) {
    switch (kind) {
        case dnnl_graph_op_abs_backward:
        case dnnl_graph_op_clamp_backward:
        case dnnl_graph_op_elu_backward:
        case dnnl_graph_op_gelu_backward:
        case dnnl_graph_op_hard_sigmoid_backward:
        case dnnl_graph_op_hard_swish_backward:
        case dnnl_graph_op_mish_backward:
        case dnnl_graph_op_relu_backward:
        case dnnl_graph_op_sigmoid_backward:
        case dnnl_graph_op_softplus_backward:
        case dnnl_graph_op_sqrt_backward:
        case dnnl_graph_op_tanh_backward: return true;
        default: return false;
    }
}

static pt_status decode_unary(const pt_op *op, pt_bound_kernel *out, bool bwd) {
    if (!(bwd ? bwd_supported(op->kind) : pt_op_is_unary_eltwise(op->kind)))
        return pt_err(dnnl_unimplemented, bwd ? "eltwise_bwd: op kind %s is not a unary backward op"
                                              : "eltwise: op kind %s is not a unary op",
                      pt_op_kind_name(op->kind));
    pt_ref_eltwise_params e = {.name = pt_op_kind_name(op->kind), .p = pt_eltwise_params_of(op)};
    return pt_decode_bind(out, bwd ? pt_ref_eltwise_bwd : pt_ref_eltwise, &e, sizeof e);
}

PT_DECODE_DECL(eltwise) { return decode_unary(op, out, false); }
PT_DECODE_DECL(eltwise_bwd) { return decode_unary(op, out, true); }

/* ---- binary and Select ------------------------------------------------------ */

static pt_status decode_binary(const pt_op *op, pt_bound_kernel *out, pt_kernel_fn fn, const char *name) {
    const char *ab = pt_op_str(op, dnnl_graph_op_attr_auto_broadcast, "numpy");
    pt_ref_binary_params b = {.name = name, .kind = op->kind, .bcast_none = ab && strcmp(ab, "none") == 0};
    return pt_decode_bind(out, fn, &b, sizeof b);
}

PT_DECODE_DECL(binary) {
    if (!pt_op_is_binary_eltwise(op->kind))
        return pt_err(dnnl_unimplemented, "binary: op kind %s is not a binary op", pt_op_kind_name(op->kind));
    return decode_binary(op, out, pt_ref_binary, pt_op_kind_name(op->kind));
}

PT_DECODE_DECL(select) { return decode_binary(op, out, pt_ref_select, "Select"); }

/* ---- BiasAdd and PReLU: channel dim per data_format for the rank of input 0
 * (1 for NCX, the last dim for NXC, 0 below rank 2). */

static pt_status decode_chan(const pt_op *op, pt_bound_kernel *out, pt_kernel_fn fn) {
    const char *df = pt_op_str(op, dnnl_graph_op_attr_data_format, "NXC");
    int r = op->nin ? op->in[0].ndims : 0;
    pt_ref_chan_params c = {.cdim = r <= 1 ? 0 : ((df && strcmp(df, "NCX") == 0) ? 1 : r - 1),
                            .per_channel = pt_op_bool(op, dnnl_graph_op_attr_per_channel_broadcast, true)};
    return pt_decode_bind(out, fn, &c, sizeof c);
}

PT_DECODE_DECL(bias_add) { return decode_chan(op, out, pt_ref_bias_add); }
PT_DECODE_DECL(bias_add_bwd) { return decode_chan(op, out, pt_ref_bias_add_bwd); }
PT_DECODE_DECL(prelu) { return decode_chan(op, out, pt_ref_prelu); }

PT_DECODE_DECL(prelu_bwd) {
    PT_CHECK(decode_chan(op, out, pt_ref_prelu_bwd));
    if (op->nin > 1) out->scratch_bytes = pt_ref_prelu_bwd_scratch(&op->in[1]);
    return dnnl_success;
}

/* ---- SoftMax / LogSoftmax --------------------------------------------------- */

/* `log_kind` / `kind` are the two kinds the kernel serves; the default axis is
 * -1 for the log variants and 1 otherwise, resolved for the rank of input 0. */
static pt_status decode_softmax(const pt_op *op, pt_bound_kernel *out, pt_kernel_fn fn, int kind, int log_kind,
                                const char *what) {
    const bool is_log = (int)op->kind == log_kind;
    if (!is_log && (int)op->kind != kind)
        return pt_err(dnnl_unimplemented, "%s: op kind %s unsupported", what, pt_op_kind_name(op->kind));
    const char *name = pt_op_kind_name(op->kind);
    int r = op->nin ? op->in[0].ndims : 0;
    int64_t a0 = pt_op_s64(op, dnnl_graph_op_attr_axis, is_log ? -1 : 1), a = a0 < 0 ? a0 + r : a0;
    if (a < 0 || a >= r)
        return pt_err(dnnl_invalid_arguments, "%s: axis %lld out of range for rank %d", name, (long long)a0, r);
    const char *mode = pt_op_str(op, dnnl_graph_op_attr_mode, "none");
    pt_ref_softmax_params sm = {.name = name, .is_log = is_log, .axis = (int)a,
                                .inf_as_zero = !is_log && mode && strcmp(mode, "inf_as_zero") == 0};
    return pt_decode_bind(out, fn, &sm, sizeof sm);
}

PT_DECODE_DECL(softmax) {
    return decode_softmax(op, out, pt_ref_softmax, dnnl_graph_op_softmax, dnnl_graph_op_log_softmax, "softmax");
}

PT_DECODE_DECL(softmax_bwd) {
    return decode_softmax(op, out, pt_ref_softmax_bwd, dnnl_graph_op_softmax_backward,
                          dnnl_graph_op_log_softmax_backward, "softmax_bwd");
}

/* ---- reductions ------------------------------------------------------------- */

PT_DECODE_DECL(reduce) {
    switch (op->kind) {
        case dnnl_graph_op_reduce_l1:
        case dnnl_graph_op_reduce_l2:
        case dnnl_graph_op_reduce_max:
        case dnnl_graph_op_reduce_mean:
        case dnnl_graph_op_reduce_min:
        case dnnl_graph_op_reduce_prod:
        case dnnl_graph_op_reduce_sum: break;
        default:
            return pt_err(dnnl_unimplemented, "reduce: op kind %s is not a reduction", pt_op_kind_name(op->kind));
    }
    pt_ref_reduce_params rp = {.name = pt_op_kind_name(op->kind), .kind = op->kind};
    size_t na = 0;
    const int64_t *axes = pt_op_s64s(op, dnnl_graph_op_attr_axes, &na);
    int r = op->nin ? op->in[0].ndims : 0;
    if (!axes) na = 0;
    for (size_t i = 0; i < na; ++i) PT_CHECK(pt_ref_reduce_mark_axis(rp.name, axes[i], r, rp.red));
    rp.nattr_axes = (int)na;
    return pt_decode_bind(out, pt_ref_reduce, &rp, sizeof rp);
}
