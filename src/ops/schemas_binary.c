/* Schema rows of the binary element-wise ops (the binary template of
 * docs/ops.md, GreaterEqual included), Select (two-step broadcast),
 * BiasAdd(+Backward) and PReLU(+Backward). */
#include <string.h>

#include "ops/schema_tables.h"
#include "ops/shape_utils.h"

#define PT_DT_ARITH (PT_DT_FLOAT3 | PT_DT(dnnl_s32))
#define AB_ALLOWED "none|numpy"

static bool broadcast_none(const pt_op *op) {
    return strcmp(pt_op_str(op, dnnl_graph_op_attr_auto_broadcast, "numpy"), "none") == 0;
}

/* dst = broadcast(src_0, src_1) (numpy) or the common shape (none). */
static pt_status infer_binary(const pt_op *op, const pt_lt *in, pt_lt *out) {
    if (broadcast_none(op))
        return pt_infer_same_shape(op, &in[0], &in[1], &out[0],
                                   "input shapes differ with auto_broadcast = none");
    int n;
    int64_t dims[DNNL_MAX_NDIMS];
    if (pt_broadcast_shapes(in[0].ndims, in[0].dims, in[1].ndims, in[1].dims, &n, dims) !=
        dnnl_success)
        return pt_op_fail(op, dnnl_invalid_shape, "input shapes are not broadcastable");
    return pt_set_output_shape(&out[0], n, dims);
}

/* (src_0, src_1 -> dst) combinations of Add/Subtract (with_s32) and
 * Multiply/Divide: equal types, or one f32 input with an f32 output. */
static bool arith_combo(const pt_op *op, bool with_s32) {
    dnnl_data_type_t a = op->in[0].data_type, b = op->in[1].data_type, c = op->out[0].data_type;
    if (a == dnnl_s32 || b == dnnl_s32 || c == dnnl_s32)
        return with_s32 && a == dnnl_s32 && b == dnnl_s32 && c == dnnl_s32;
    if (a == b && b == c) return true;
    return c == dnnl_f32 && (a == dnnl_f32 || b == dnnl_f32);
}
static bool supported_add_sub(const pt_op *op) { return arith_combo(op, true); }
static bool supported_mul_div(const pt_op *op) { return arith_combo(op, false); }

/* Select: S = broadcast(src_0, src_1); cond must broadcast one-way into S. */
static pt_status infer_select(const pt_op *op, const pt_lt *in, pt_lt *out) {
    const pt_lt *cond = &in[0], *a = &in[1], *b = &in[2];
    int n;
    int64_t dims[DNNL_MAX_NDIMS];
    if (broadcast_none(op)) {
        int n2;
        int64_t d2[DNNL_MAX_NDIMS];
        if (pt_merge_same_shape(a->ndims, a->dims, b->ndims, b->dims, &n2, d2) != dnnl_success ||
            pt_merge_same_shape(cond->ndims, cond->dims, n2, d2, &n, dims) != dnnl_success)
            return pt_op_fail(op, dnnl_invalid_shape,
                              "input shapes differ with auto_broadcast = none");
        return pt_set_output_shape(&out[0], n, dims);
    }
    if (pt_broadcast_shapes(a->ndims, a->dims, b->ndims, b->dims, &n, dims) != dnnl_success)
        return pt_op_fail(op, dnnl_invalid_shape, "src_0 and src_1 are not broadcastable");
    if (!pt_unidirectional_ok(cond->ndims, cond->dims, n, dims))
        return pt_op_fail(op, dnnl_invalid_shape,
                          "cond does not broadcast one-way into the src_0/src_1 shape");
    return pt_set_output_shape(&out[0], n, dims);
}

/* BiasAdd: src rank >= 2, bias [C] with C selected by data_format. */
static pt_status infer_bias_add(const pt_op *op, const pt_lt *in, pt_lt *out) {
    const pt_lt *src = &in[0], *bias = &in[1];
    if (src->ndims >= 0 && src->ndims < 2)
        return pt_op_fail(op, dnnl_invalid_shape, "src rank %d < 2", src->ndims);
    if (bias->ndims >= 0 && bias->ndims != 1)
        return pt_op_fail(op, dnnl_invalid_shape, "bias rank %d != 1", bias->ndims);
    if (src->ndims >= 2 && bias->ndims == 1) {
        int c = pt_channel_axis(pt_op_str(op, dnnl_graph_op_attr_data_format, "NXC"), src->ndims);
        int64_t C = src->dims[c], L = bias->dims[0];
        if (pt_dim_known(C) && pt_dim_known(L) && C != L)
            return pt_op_fail(op, dnnl_invalid_shape, "bias length %lld != channels %lld",
                              (long long)L, (long long)C);
    }
    return pt_infer_like(&out[0], src);
}

/* BiasAddBackward: diff_bias = [C] of diff_dst (rank >= 4). */
static pt_status infer_bias_add_bwd(const pt_op *op, const pt_lt *in, pt_lt *out) {
    const pt_lt *dd = &in[0];
    if (dd->ndims < 0) return dnnl_success;
    if (dd->ndims < 4)
        return pt_op_fail(op, dnnl_invalid_shape, "diff_dst rank %d < 4", dd->ndims);
    int c = pt_channel_axis(pt_op_str(op, dnnl_graph_op_attr_data_format, "NXC"), dd->ndims);
    int64_t C = dd->dims[c];
    return pt_set_output_shape(&out[0], 1, &C);
}

/* PReLU slope rules (docs/ops.md): 1-D per-channel, 1-D over the last dim
 * (or length 1), or a unidirectional broadcast for rank >= 2. */
static bool prelu_slope_ok(const pt_lt *src, const pt_lt *slope, const char *fmt,
                           bool per_channel) {
    if (src->ndims < 0 || slope->ndims < 0) return true;
    int r = src->ndims;
    if (slope->ndims == 1) {
        int64_t L = slope->dims[0];
        if (!pt_dim_known(L)) return true;
        if (per_channel && r > 1) {
            int64_t C = src->dims[pt_channel_axis(fmt, r)];
            return !pt_dim_known(C) || L == C;
        }
        if (L == 1) return true;
        if (r == 0) return false;
        int64_t last = src->dims[r - 1];
        return !pt_dim_known(last) || L == last;
    }
    return pt_unidirectional_ok(slope->ndims, slope->dims, r, src->dims);
}

static pt_status infer_prelu(const pt_op *op, const pt_lt *in, pt_lt *out) {
    const char *fmt = pt_op_str(op, dnnl_graph_op_attr_data_format, "NXC");
    bool pcb = pt_op_bool(op, dnnl_graph_op_attr_per_channel_broadcast, true);
    if (!prelu_slope_ok(&in[0], &in[1], fmt, pcb))
        return pt_op_fail(op, dnnl_invalid_shape, "slope is not broadcastable to src");
    return pt_infer_like(&out[0], &in[0]);
}

/* PReLUBackward: a 1-D slope longer than 1 is per channel (for a 1-D src the
 * only dim); higher ranks broadcast one-way. */
static pt_status infer_prelu_bwd(const pt_op *op, const pt_lt *in, pt_lt *out) {
    const pt_lt *src = &in[0], *slope = &in[1], *dd = &in[2];
    const char *fmt = pt_op_str(op, dnnl_graph_op_attr_data_format, "NXC");
    bool ok = true;
    if (src->ndims >= 0 && slope->ndims >= 0) {
        if (slope->ndims == 1) {
            int64_t L = slope->dims[0];
            if (pt_dim_known(L) && L != 1) {
                if (src->ndims == 0) {
                    ok = false;
                } else {
                    int c = src->ndims == 1 ? 0 : pt_channel_axis(fmt, src->ndims);
                    ok = !pt_dim_known(src->dims[c]) || src->dims[c] == L;
                }
            }
        } else {
            ok = pt_unidirectional_ok(slope->ndims, slope->dims, src->ndims, src->dims);
        }
    }
    if (!ok) return pt_op_fail(op, dnnl_invalid_shape, "slope is not broadcastable to src");
    PT_CHECK(pt_infer_same_shape(op, src, dd, &out[0], "diff_dst shape differs from src shape"));
    return pt_infer_like(&out[1], slope);
}

static const pt_port_spec arith_in[] = {PT_PORT("src_0", PT_DT_ARITH, 'A'),
                                        PT_PORT("src_1", PT_DT_ARITH, 'B')};
static const pt_port_spec arith_out[] = {PT_PORT("dst", PT_DT_ARITH, 'C')};
static const pt_port_spec float_in[] = {PT_PORT("src_0", PT_DT_FLOAT3, 'A'),
                                        PT_PORT("src_1", PT_DT_FLOAT3, 'B')};
static const pt_port_spec float_out[] = {PT_PORT("dst", PT_DT_FLOAT3, 'C')};
static const pt_port_spec same_in[] = {PT_PORT("src_0", PT_DT_FLOAT3, 'T'),
                                       PT_PORT("src_1", PT_DT_FLOAT3, 'T')};
static const pt_port_spec same_out[] = {PT_PORT("dst", PT_DT_FLOAT3, 'T')};
static const pt_port_spec ge_in[] = {PT_PORT("src_0", PT_DT_ARITH, 'T'),
                                     PT_PORT("src_1", PT_DT_ARITH, 'T')};
static const pt_port_spec ge_out[] = {PT_PORT("dst", PT_DT(dnnl_boolean), 0)};
static const pt_port_spec select_in[] = {PT_PORT("cond", PT_DT(dnnl_boolean), 0),
                                         PT_PORT("src_0", PT_DT_FLOAT3, 'T'),
                                         PT_PORT("src_1", PT_DT_FLOAT3, 'T')};
static const pt_port_spec bias_add_in[] = {PT_PORT("src", PT_DT_FLOAT3, 'T'),
                                           PT_PORT("bias", PT_DT_FLOAT3, 'T')};
static const pt_port_spec bias_bwd_in[] = {PT_PORT("diff_dst", PT_DT_FLOAT3, 'T')};
static const pt_port_spec bias_bwd_out[] = {PT_PORT("diff_bias", PT_DT_FLOAT3, 'T')};
static const pt_port_spec prelu_in[] = {PT_PORT("src", PT_DT_FLOAT3, 'T'),
                                        PT_PORT("slope", PT_DT_FLOAT3, 'T')};
static const pt_port_spec prelu_bwd_in[] = {PT_PORT("src", PT_DT_FLOAT3, 'T'),
                                            PT_PORT("slope", PT_DT_FLOAT3, 'T'),
                                            PT_PORT("diff_dst", PT_DT_FLOAT3, 'T')};
static const pt_port_spec prelu_bwd_out[] = {PT_PORT("diff_src", PT_DT_FLOAT3, 'T'),
                                             PT_PORT("diff_slope", PT_DT_FLOAT3, 'T')};

static const pt_attr_spec a_broadcast[] = {
        PT_OPT_STR(dnnl_graph_op_attr_auto_broadcast, "numpy", AB_ALLOWED), PT_ATTR_LIST_END};
static const pt_attr_spec a_data_format[] = {
        PT_OPT_STR(dnnl_graph_op_attr_data_format, "NXC", "NCX|NXC"), PT_ATTR_LIST_END};
static const pt_attr_spec a_prelu[] = {
        PT_OPT_STR(dnnl_graph_op_attr_data_format, "NXC", "NCX|NXC"),
        PT_OPT_BOOL(dnnl_graph_op_attr_per_channel_broadcast, 1), PT_ATTR_LIST_END};

/*     row            inputs        outputs        attributes     check infer               supported */
PT_ROW(add_sub,       arith_in,     arith_out,     a_broadcast,   NULL, infer_binary,       supported_add_sub);
PT_ROW(mul_div,       float_in,     float_out,     a_broadcast,   NULL, infer_binary,       supported_mul_div);
PT_ROW(binary_same,   same_in,      same_out,      a_broadcast,   NULL, infer_binary,       NULL);
PT_ROW(greater_equal, ge_in,        ge_out,        a_broadcast,   NULL, infer_binary,       NULL);
PT_ROW(select,        select_in,    same_out,      a_broadcast,   NULL, infer_select,       NULL);
PT_ROW(bias_add,      bias_add_in,  same_out,      a_data_format, NULL, infer_bias_add,     NULL);
PT_ROW(bias_add_bwd,  bias_bwd_in,  bias_bwd_out,  a_data_format, NULL, infer_bias_add_bwd, NULL);
PT_ROW(prelu,         prelu_in,     same_out,      a_prelu,       NULL, infer_prelu,        NULL);
PT_ROW(prelu_bwd,     prelu_bwd_in, prelu_bwd_out, a_data_format, NULL, infer_prelu_bwd,    NULL);
