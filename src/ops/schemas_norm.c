/* Schema rows of LayerNorm, LayerNormBackward, GroupNorm and RMSNorm.
 * T1 = data type of src/dst (f32, bf16, f16); T2 = type of the statistics and
 * affine parameters. */
#include <string.h>

#include "ops/schema_tables.h"
#include "ops/shape_utils.h"

#define PT_DT_AUX (PT_DT(dnnl_f32) | PT_DT(dnnl_bf16))

/* Shared rule: a bf16 parameter/statistic needs a bf16 src (LayerNorm,
 * GroupNorm, RMSNorm).  Ports `first` .. n-1 of `lts` carry T2. */
static pt_status check_aux_bf16(const pt_op *op, const pt_lt *lts, size_t n, size_t first) {
    for (size_t i = first; i < n; ++i) {
        if (lts[i].data_type == dnnl_bf16 && op->in[0].data_type != dnnl_bf16) {
            return pt_op_fail(op, dnnl_invalid_graph_op,
                              "bf16 statistics/parameters need a bf16 src (src is %s)",
                              op->in[0].data_type == dnnl_f32 ? "f32" : "f16");
        }
    }
    return dnnl_success;
}

/* (T1, T2) in {(f32,f32), (bf16,f32), (bf16,bf16), (f16,f32)}, plus (f16,f16)
 * where `f16_aux` (RMSNorm).  T2 is the type of the first aux port present. */
static bool norm_combo(dnnl_data_type_t t1, const pt_lt *aux, size_t n, bool f16_aux) {
    for (size_t i = 0; i < n; ++i) {
        dnnl_data_type_t t2 = aux[i].data_type;
        bool ok = t2 == dnnl_f32 || (t2 == dnnl_bf16 && t1 == dnnl_bf16) ||
                  (f16_aux && t2 == dnnl_f16 && t1 == dnnl_f16);
        if (!ok) return false;
    }
    return true;
}

/* Writes dims [from, to) of `lt` into `dims`; returns the count. */
static int slice_dims(const pt_lt *lt, int from, int to, int64_t *dims) {
    for (int d = from; d < to; ++d) dims[d - from] = lt->dims[d];
    return to - from;
}

/* `param` must have shape src.dims[a:] (when both are known). */
static bool param_shape_ok(const pt_lt *src, int a, const pt_lt *param) {
    if (src->ndims < 0 || param->ndims < 0) return true;
    if (param->ndims != src->ndims - a) return false;
    for (int d = 0; d < param->ndims; ++d) {
        int64_t x = src->dims[a + d], y = param->dims[d];
        if (pt_dim_known(x) && pt_dim_known(y) && x != y) return false;
    }
    return true;
}

/* With use_affine = true (the default) the affine inputs up to port
 * `need` - 1 must be present (`what` names them). */
static pt_status check_affine(const pt_op *op, size_t need, const char *what) {
    if (pt_op_bool(op, dnnl_graph_op_attr_use_affine, true) && op->nin < need)
        return pt_op_fail(op, dnnl_invalid_shape, "use_affine = true needs %s", what);
    return dnnl_success;
}

/* begin_norm_axis resolved for `src` (of known rank). */
static pt_status begin_norm_axis(const pt_op *op, const pt_lt *src, int64_t *a) {
    if (!pt_norm_axis(pt_op_s64(op, dnnl_graph_op_attr_begin_norm_axis, -1), src->ndims, a))
        return pt_op_fail(op, dnnl_invalid_shape, "begin_norm_axis out of range for rank %d",
                          src->ndims);
    return dnnl_success;
}

/* The optional ports of a side come all or none: 2 of 1 or 3 is an error. */
static pt_status check_1_or_3(const pt_op *op, size_t n, const char *what) {
    if (n == 2) return pt_op_fail(op, dnnl_invalid_graph_op, "expects 1 or 3 %s, got 2", what);
    return dnnl_success;
}

/* Inputs `first` .. (gamma, then beta) must have shape src.dims[a:]. */
static pt_status check_affine_shapes(const pt_op *op, const pt_lt *in, size_t first, int64_t a) {
    for (size_t i = first; i < op->nin; ++i)
        if (!param_shape_ok(&in[0], (int)a, &in[i]))
            return pt_op_fail(op, dnnl_invalid_shape, "%s shape must be src.dims[%lld:]",
                              i == first ? "gamma" : "beta", (long long)a);
    return dnnl_success;
}

/* add_op checks of the outputs and the T2 ports: with the boolean `flag`
 * (default true) set, all 3 outputs are needed; bf16 statistics/parameters
 * (inputs from `first_aux`, outputs from 1) need a bf16 src. */
static pt_status check_norm_ports(const pt_op *op, int flag, size_t first_aux) {
    PT_CHECK(check_1_or_3(op, op->nout, "outputs"));
    if (pt_op_bool(op, flag, true) && op->nout != 3)
        return pt_op_fail(op, dnnl_invalid_graph_op, "%s = true needs 3 outputs",
                          pt_attr_name(flag));
    PT_CHECK(check_aux_bf16(op, op->in, op->nin, first_aux));
    return check_aux_bf16(op, op->out, op->nout, 1);
}

/* ---- LayerNorm ---- */

/* LayerNorm and GroupNorm. */
static pt_status check_layer_norm(const pt_op *op) {
    PT_CHECK(check_1_or_3(op, op->nin, "inputs"));
    return check_norm_ports(op, dnnl_graph_op_attr_keep_stats, 1);
}

static pt_status infer_layer_norm(const pt_op *op, const pt_lt *in, pt_lt *out) {
    const pt_lt *src = &in[0];
    PT_CHECK(check_affine(op, 3, "gamma and beta"));
    PT_CHECK(pt_infer_like(&out[0], src));
    if (src->ndims < 0) return dnnl_success;
    int64_t a;
    PT_CHECK(begin_norm_axis(op, src, &a));
    PT_CHECK(check_affine_shapes(op, in, 1, a));
    int64_t stat[DNNL_MAX_NDIMS];
    int sn = slice_dims(src, 0, (int)a, stat);
    for (size_t i = 1; i < op->nout; ++i) PT_CHECK(pt_set_output_shape(&out[i], sn, stat));
    return dnnl_success;
}

static bool supported_layer_norm(const pt_op *op) {
    return norm_combo(op->in[0].data_type, op->in + 1, op->nin - 1, false) &&
           norm_combo(op->in[0].data_type, op->out + 1, op->nout - 1, false);
}

/* ---- LayerNormBackward ---- */

static pt_status check_layer_norm_bwd(const pt_op *op) {
    return check_norm_ports(op, dnnl_graph_op_attr_use_affine, 2);
}

static pt_status infer_layer_norm_bwd(const pt_op *op, const pt_lt *in, pt_lt *out) {
    const pt_lt *src = &in[0], *dd = &in[1];
    PT_CHECK(check_affine(op, 5, "gamma"));
    PT_CHECK(pt_infer_same_shape(op, src, dd, &out[0], "diff_dst shape differs from src shape"));
    if (src->ndims < 0) return dnnl_success;
    int64_t a;
    PT_CHECK(begin_norm_axis(op, src, &a));
    int64_t stat[DNNL_MAX_NDIMS];
    int sn = slice_dims(src, 0, (int)a, stat);
    for (size_t i = 2; i < 4; ++i) {
        int m;
        int64_t md[DNNL_MAX_NDIMS];
        if (pt_merge_same_shape(in[i].ndims, in[i].dims, sn, stat, &m, md) != dnnl_success)
            return pt_op_fail(op, dnnl_invalid_shape, "%s shape must be src.dims[:%lld]",
                              i == 2 ? "mean" : "variance", (long long)a);
    }
    PT_CHECK(check_affine_shapes(op, in, 4, a));
    int64_t pd[DNNL_MAX_NDIMS];
    int pn;
    if (op->nin > 4 && in[4].ndims >= 0) {
        pn = slice_dims(&in[4], 0, in[4].ndims, pd);
    } else {
        pn = slice_dims(src, (int)a, src->ndims, pd);
    }
    for (size_t i = 1; i < op->nout; ++i) PT_CHECK(pt_set_output_shape(&out[i], pn, pd));
    return dnnl_success;
}

static bool supported_layer_norm_bwd(const pt_op *op) {
    return op->in[1].data_type == op->in[0].data_type &&
           norm_combo(op->in[0].data_type, op->in + 2, op->nin - 2, false) &&
           norm_combo(op->in[0].data_type, op->out + 1, op->nout - 1, false);
}

/* ---- GroupNorm ---- */

static pt_status infer_group_norm(const pt_op *op, const pt_lt *in, pt_lt *out) {
    const pt_lt *src = &in[0];
    PT_CHECK(check_affine(op, 3, "gamma and beta"));
    int64_t G = pt_op_s64(op, dnnl_graph_op_attr_groups, 1);
    if (G < 1) return pt_op_fail(op, dnnl_invalid_shape, "groups %lld < 1", (long long)G);
    PT_CHECK(pt_infer_like(&out[0], src));
    if (src->ndims < 0) return dnnl_success;
    if (src->ndims < 2) return pt_op_fail(op, dnnl_invalid_shape, "src rank %d < 2", src->ndims);
    int c = pt_channel_axis(pt_op_str(op, dnnl_graph_op_attr_data_format, "NXC"), src->ndims);
    int64_t C = src->dims[c];
    if (pt_dim_known(C) && (G > C || C % G != 0))
        return pt_op_fail(op, dnnl_invalid_shape, "channels %lld not divisible into %lld groups",
                          (long long)C, (long long)G);
    for (size_t i = 1; i < op->nin; ++i) {
        const pt_lt *p = &in[i];
        if (p->ndims < 0) continue;
        if (p->ndims != 1 || (pt_dim_known(C) && pt_dim_known(p->dims[0]) && p->dims[0] != C))
            return pt_op_fail(op, dnnl_invalid_shape, "%s must be [C]", i == 1 ? "gamma" : "beta");
    }
    int64_t stat[2] = {src->dims[0], G};
    for (size_t i = 1; i < op->nout; ++i) PT_CHECK(pt_set_output_shape(&out[i], 2, stat));
    return dnnl_success;
}

/* ---- RMSNorm ---- */

static pt_status check_rms_norm(const pt_op *op) {
    return check_aux_bf16(op, op->in, op->nin, 1);
}

static pt_status infer_rms_norm(const pt_op *op, const pt_lt *in, pt_lt *out) {
    const pt_lt *src = &in[0];
    int64_t a;
    if (src->ndims >= 0) PT_CHECK(begin_norm_axis(op, src, &a));
    if (op->nin > 1 && !pt_unidirectional_ok(in[1].ndims, in[1].dims, src->ndims, src->dims))
        return pt_op_fail(op, dnnl_invalid_shape, "gamma is not broadcastable to src");
    return pt_infer_like(&out[0], src);
}

static bool supported_rms_norm(const pt_op *op) {
    return norm_combo(op->in[0].data_type, op->in + 1, op->nin - 1, true);
}

/* ---- rows ---- */

static const pt_port_spec ln_in[] = {PT_PORT("src", PT_DT_FLOAT3, 'A'),
                                     PT_PORT_OPT("gamma", PT_DT_AUX, 'B'),
                                     PT_PORT_OPT("beta", PT_DT_AUX, 'B')};
static const pt_port_spec ln_out[] = {PT_PORT("dst", PT_DT_FLOAT3, 'A'),
                                      PT_PORT_OPT("mean", PT_DT_AUX, 'B'),
                                      PT_PORT_OPT("variance", PT_DT_AUX, 'B')};
static const pt_port_spec lnb_in[] = {
        PT_PORT("src", PT_DT_FLOAT3, 'A'),      PT_PORT("diff_dst", PT_DT_FLOAT3, 'A'),
        PT_PORT("mean", PT_DT_AUX, 'B'),        PT_PORT("variance", PT_DT_AUX, 'B'),
        PT_PORT_OPT("gamma", PT_DT_AUX, 'B'),   PT_PORT_OPT("beta", PT_DT_AUX, 'B')};
static const pt_port_spec lnb_out[] = {PT_PORT("diff_src", PT_DT_FLOAT3, 'A'),
                                       PT_PORT_OPT("diff_gamma", PT_DT_AUX, 'B'),
                                       PT_PORT_OPT("diff_beta", PT_DT_AUX, 'B')};
static const pt_port_spec rms_in[] = {PT_PORT("src", PT_DT_FLOAT3, 'A'),
                                      PT_PORT_OPT("gamma", PT_DT_FLOAT3, 'B')};
static const pt_port_spec rms_out[] = {PT_PORT("dst", PT_DT_FLOAT3, 'A')};

static const pt_attr_spec a_ln[] = {PT_OPT_BOOL(dnnl_graph_op_attr_keep_stats, 1),
                                    PT_OPT_S64(dnnl_graph_op_attr_begin_norm_axis, -1),
                                    PT_OPT_BOOL(dnnl_graph_op_attr_use_affine, 1),
                                    PT_OPT_F32(dnnl_graph_op_attr_epsilon, 1e-5f),
                                    PT_ATTR_LIST_END};
static const pt_attr_spec a_lnb[] = {PT_OPT_S64(dnnl_graph_op_attr_begin_norm_axis, -1),
                                     PT_OPT_BOOL(dnnl_graph_op_attr_use_affine, 1),
                                     PT_OPT_F32(dnnl_graph_op_attr_epsilon, 1e-5f),
                                     PT_ATTR_LIST_END};
static const pt_attr_spec a_gn[] = {PT_REQ_S64(dnnl_graph_op_attr_groups),
                                    PT_OPT_BOOL(dnnl_graph_op_attr_keep_stats, 1),
                                    PT_OPT_BOOL(dnnl_graph_op_attr_use_affine, 1),
                                    PT_OPT_F32(dnnl_graph_op_attr_epsilon, 1e-5f),
                                    PT_OPT_STR(dnnl_graph_op_attr_data_format, "NXC", "NCX|NXC"),
                                    PT_ATTR_LIST_END};
static const pt_attr_spec a_rms[] = {PT_OPT_S64(dnnl_graph_op_attr_begin_norm_axis, -1),
                                     PT_OPT_F32(dnnl_graph_op_attr_epsilon, 1e-5f),
                                     PT_ATTR_LIST_END};

/*     row             inputs  outputs  attrs  check                 infer                 supported */
PT_ROW(layer_norm,     ln_in,  ln_out,  a_ln,  check_layer_norm,     infer_layer_norm,     supported_layer_norm);
PT_ROW(layer_norm_bwd, lnb_in, lnb_out, a_lnb, check_layer_norm_bwd, infer_layer_norm_bwd,
       supported_layer_norm_bwd);
PT_ROW(group_norm,     ln_in,  ln_out,  a_gn,  check_layer_norm,     infer_group_norm,     supported_layer_norm);
PT_ROW(rms_norm,       rms_in, rms_out, a_rms, check_rms_norm,       infer_rms_norm,       supported_rms_norm);
