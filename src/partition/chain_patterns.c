/* Chain-shaped fusion patterns (fusion-patterns.md §5-§14) written as data
 * for the matcher in pattern_chain.c.  Each pattern is a spine of steps; the
 * comments give the pattern in the spec's notation.  Grouped optional parts
 * such as `(TypeCast → Quantize)?` are two optional steps plus a whole-match
 * predicate. */
#include "partition/chain_patterns.h"

#include <string.h>

#include "ops/op_schema.h"

/* ---- op sets (§2.1) ------------------------------------------------------ */

static bool is_unary(int k) {
    switch (k) {
    case dnnl_graph_op_abs: case dnnl_graph_op_clamp: case dnnl_graph_op_elu:
    case dnnl_graph_op_exp: case dnnl_graph_op_gelu: case dnnl_graph_op_hard_sigmoid:
    case dnnl_graph_op_hard_swish: case dnnl_graph_op_leaky_relu: case dnnl_graph_op_log:
    case dnnl_graph_op_mish: case dnnl_graph_op_sigmoid: case dnnl_graph_op_softplus:
    case dnnl_graph_op_relu: case dnnl_graph_op_round: case dnnl_graph_op_sqrt:
    case dnnl_graph_op_square: case dnnl_graph_op_tanh: return true;
    default: return false;
    }
}

static bool is_binary(int k) {
    switch (k) {
    case dnnl_graph_op_add: case dnnl_graph_op_multiply: case dnnl_graph_op_maximum:
    case dnnl_graph_op_minimum: case dnnl_graph_op_divide: case dnnl_graph_op_subtract: return true;
    default: return false;
    }
}

static bool is_post(int k) { return is_unary(k) || is_binary(k); }

static bool is_mul_or_div(int k) { return k == dnnl_graph_op_multiply || k == dnnl_graph_op_divide; }

static bool is_pool(int k) { return k == dnnl_graph_op_avg_pool || k == dnnl_graph_op_max_pool; }

static bool is_reduction(int k) { return k >= dnnl_graph_op_reduce_l1 && k <= dnnl_graph_op_reduce_sum; }

static bool is_bnorm_fwd(int k) {
    return k == dnnl_graph_op_batch_norm_inference || k == dnnl_graph_op_batch_norm_forward_training;
}

static bool is_reshape_or_transpose(int k) {
    return k == dnnl_graph_op_static_reshape || k == dnnl_graph_op_static_transpose;
}

/* ---- predicates ----------------------------------------------------------- */

static const pt_op *op_at(const pt_graph *g, int op) { return g->ops[op]; }

static bool is_int8(dnnl_data_type_t t) { return t == dnnl_s8 || t == dnnl_u8; }
static bool is_f8(dnnl_data_type_t t) { return t == dnnl_f8_e4m3 || t == dnnl_f8_e5m2; }
static bool is_x8(dnnl_data_type_t t) { return is_int8(t) || is_f8(t); }

static dnnl_data_type_t in_dt(const pt_graph *g, int op, int port) {
    return op_at(g, op)->nin > (size_t)port ? op_at(g, op)->in[port].data_type : dnnl_data_type_undef;
}
static dnnl_data_type_t out_dt(const pt_graph *g, int op) {
    return op_at(g, op)->nout ? op_at(g, op)->out[0].data_type : dnnl_data_type_undef;
}

/* f8 Dequantize feeding a convolution: scales all 1, zero points absent or 0
 * (§7.2). */
static bool unit_scale_no_zp(const pt_op *op) {
    size_t n = 0;
    const float *sc = pt_op_f32s(op, dnnl_graph_op_attr_scales, &n);
    for (size_t i = 0; sc && i < n; ++i)
        if (sc[i] != 1.0f) return false;
    const int64_t *zp = pt_op_s64s(op, dnnl_graph_op_attr_zps, &n);
    for (size_t i = 0; zp && i < n; ++i)
        if (zp[i] != 0) return false;
    return true;
}

static bool unit_zp_free(const pt_op *op) {
    size_t n = 0;
    const int64_t *zp = pt_op_s64s(op, dnnl_graph_op_attr_zps, &n);
    for (size_t i = 0; zp && i < n; ++i)
        if (zp[i] != 0) return false;
    return true;
}

static bool per_tensor(const pt_op *op) {
    const char *q = pt_op_str(op, dnnl_graph_op_attr_qtype, "per_tensor");
    return strcmp(q, "per_tensor") == 0;
}

static bool dq_x8(const pt_graph *g, int op) { return is_x8(in_dt(g, op, 0)); }
static bool dq_int8(const pt_graph *g, int op) { return is_int8(in_dt(g, op, 0)); }
static bool dq_s8(const pt_graph *g, int op) { return in_dt(g, op, 0) == dnnl_s8; }
static bool dq_int8_per_tensor(const pt_graph *g, int op) {
    return dq_int8(g, op) && per_tensor(op_at(g, op));
}
static bool dq_s8_zp0(const pt_graph *g, int op) {
    return dq_s8(g, op) && per_tensor(op_at(g, op)) && unit_zp_free(op_at(g, op));
}

/* Convolution src: int8, or f8 with unit scales and no zero point. */
static bool dq_conv_src(const pt_graph *g, int op) {
    dnnl_data_type_t t = in_dt(g, op, 0);
    return is_int8(t) || (is_f8(t) && unit_scale_no_zp(op_at(g, op)));
}
/* Convolution weights: s8, or f8 with unit scales and no zero point. */
static bool dq_conv_wei(const pt_graph *g, int op) {
    dnnl_data_type_t t = in_dt(g, op, 0);
    return t == dnnl_s8 || (is_f8(t) && unit_scale_no_zp(op_at(g, op)));
}

static bool q_int8(const pt_graph *g, int op) { return is_int8(out_dt(g, op)); }
static bool q_int8_per_tensor(const pt_graph *g, int op) {
    return q_int8(g, op) && per_tensor(op_at(g, op));
}
static bool q_s8_zp0(const pt_graph *g, int op) {
    return out_dt(g, op) == dnnl_s8 && per_tensor(op_at(g, op)) && unit_zp_free(op_at(g, op));
}

/* The optional weight Quantize of the MatMul and bf16 convolution patterns:
 * its input is constant, a graph input, or made by a Wildcard (§2.4). */
static bool q_weight(const pt_graph *g, int op) {
    const pt_op *o = op_at(g, op);
    if (o->nin < 1) return false;
    if (o->in[0].property == dnnl_graph_tensor_property_constant) return true;
    int ti = pt_graph_tensor_index(g, o->in[0].id);
    if (ti < 0) return false;
    int p = g->tensors[ti].producer;
    return p < 0 || g->ops[p]->kind == dnnl_graph_op_wildcard;
}
static bool q_weight_int8(const pt_graph *g, int op) { return q_int8(g, op); }

static bool tc_to_bf16(const pt_graph *g, int op) { return out_dt(g, op) == dnnl_bf16; }
static bool tc_from_bf16(const pt_graph *g, int op) { return in_dt(g, op, 0) == dnnl_bf16; }
static bool tc_bf16_to_f32(const pt_graph *g, int op) {
    return in_dt(g, op, 0) == dnnl_bf16 && out_dt(g, op) == dnnl_f32;
}
static bool tc_from_f32(const pt_graph *g, int op) { return in_dt(g, op, 0) == dnnl_f32; }

static bool add_no_broadcast(const pt_graph *g, int op) {
    return strcmp(pt_op_str(op_at(g, op), dnnl_graph_op_attr_auto_broadcast, "numpy"), "none") == 0;
}

static bool binary_f32_out(const pt_graph *g, int op) { return out_dt(g, op) == dnnl_f32; }

static bool all_inputs_from(const pt_graph *g, int op, int from, dnnl_data_type_t t) {
    const pt_op *o = op_at(g, op);
    for (size_t i = (size_t)from; i < o->nin; ++i)
        if (o->in[i].data_type != t) return false;
    return true;
}
static bool bnorm_params_f32(const pt_graph *g, int op) { return all_inputs_from(g, op, 1, dnnl_f32); }
static bool bnorm_bwd_params_f32(const pt_graph *g, int op) {
    return all_inputs_from(g, op, 2, dnnl_f32);
}
static bool norm_params_f32(const pt_graph *g, int op) { return all_inputs_from(g, op, 1, dnnl_f32); }

static bool half_pixel(const pt_graph *g, int op) {
    return strcmp(pt_op_str(op_at(g, op), dnnl_graph_op_attr_coordinate_transformation_mode,
                            "half_pixel"),
                  "half_pixel") == 0;
}

static bool has_axes(const pt_graph *g, int op) {
    size_t n = 0;
    return pt_op_s64s(op_at(g, op), dnnl_graph_op_attr_axes, &n) != NULL && n > 0;
}

/* All spatial dims of a convolution's weights equal `v` (shapes must be
 * known: §7.1 depthwise pattern). */
static bool conv_kernel_all(const pt_graph *g, int op, int64_t v) {
    const pt_op *o = op_at(g, op);
    if (o->nin < 2) return false;
    const pt_lt *w = &o->in[1];
    if (w->ndims < 3) return false;
    bool oix = strcmp(pt_op_str(o, dnnl_graph_op_attr_weights_format, "XIO"), "OIX") == 0;
    int first = oix ? 2 : 0, last = oix ? w->ndims - 1 : w->ndims - 3;
    for (int d = first; d <= last; ++d)
        if (w->dims[d] != v) return false;
    return true;
}
static bool conv_1x1(const pt_graph *g, int op) { return conv_kernel_all(g, op, 1); }
static bool conv_3x3(const pt_graph *g, int op) { return conv_kernel_all(g, op, 3); }

/* BiasAdd after a compute op that has no bias input (§2.3). */
static bool bias_after_two_inputs(const pt_graph *g, int op) {
    const pt_op *o = op_at(g, op);
    int ti = o->nin ? pt_graph_tensor_index(g, o->in[0].id) : -1;
    int p = ti < 0 ? -1 : g->tensors[ti].producer;
    return p < 0 || g->ops[p]->nin == 2;
}

/* fp_reorder_sum: the other Add operand comes from outside, not the reorder. */
static bool add_of_two_values(const pt_graph *g, int op) {
    const pt_op *o = op_at(g, op);
    return add_no_broadcast(g, op) && o->nin == 2 && o->in[0].id != o->in[1].id;
}

/* Pooling that fusion never takes: AvgPool with rounding_type = ceil and
 * exclude_pad = false (§9). */
static bool pool_fusable(const pt_graph *g, int op) {
    const pt_op *o = op_at(g, op);
    if (o->kind != dnnl_graph_op_avg_pool) return true;
    bool ceil = strcmp(pt_op_str(o, dnnl_graph_op_attr_rounding_type, "floor"), "ceil") == 0;
    return !(ceil && !pt_op_bool(o, dnnl_graph_op_attr_exclude_pad, false));
}

/* SoftMax post-ops: every input of the post-op is f32 (§11). */
static bool post_f32_inputs(const pt_graph *g, int op) { return all_inputs_from(g, op, 0, dnnl_f32); }

/* `(A → B)?` groups: step `a` matched only together with step `b`. */
static bool step_present(const int *step, int n, int s) {
    for (int i = 0; i < n; ++i)
        if (step[i] == s) return true;
    return false;
}
static bool tc_conv_tail(const pt_graph *g, const int *ops, const int *step, int n) {
    (void)g, (void)ops;
    return !step_present(step, n, 3) || step_present(step, n, 4); /* (TypeCast → Quantize)? */
}
static bool tc_reorder_tail(const pt_graph *g, const int *ops, const int *step, int n) {
    (void)g, (void)ops;
    return !step_present(step, n, 4) || step_present(step, n, 5); /* (TypeCast → Quantize)? */
}
static bool smooth_quant_tail(const pt_graph *g, const int *ops, const int *step, int n) {
    (void)g, (void)ops;
    return !step_present(step, n, 6) || step_present(step, n, 7); /* ((Mul|Div)? → Quantize)? */
}

/* ---- step and link shorthands --------------------------------------------- */

#define K(kd) .kind = (kd), .set = NULL
#define S(fn) .kind = -1, .set = (fn)
#define ONE .min = 1, .max = 1
#define OPT .min = 0, .max = 1
#define STAR .min = 0, .max = PT_CHAIN_MAX_REPEAT
#define PLUS .min = 1, .max = PT_CHAIN_MAX_REPEAT
#define SWAP .entry = PT_ENTRY_SWAP
#define BR(arr) .branches = (arr), .nbranches = (int)(sizeof(arr) / sizeof((arr)[0]))
#define PATTERN_IF(name, accept, ...)                                                              \
    static const pt_step_spec steps_##name[] = {__VA_ARGS__};                                      \
    const pt_chain_pattern pt_chain_##name = {steps_##name,                                        \
                                              (int)(sizeof steps_##name / sizeof steps_##name[0]), \
                                              (accept)};
#define PATTERN(name, ...) PATTERN_IF(name, NULL, __VA_ARGS__)

#define LINK(kd, opt, chk) {(kd), NULL, (opt), (chk)}

/* Common steps. */
#define BIAS_OPT {K(dnnl_graph_op_bias_add), OPT, .check = bias_after_two_inputs}
#define POST_STAR {S(is_post), STAR, SWAP}
#define POST_PLUS {S(is_post), PLUS, SWAP}
#define SELECT_OPT {K(dnnl_graph_op_select), OPT, SWAP}

/* ---- producer branches ---------------------------------------------------- */

static const pt_link_spec l_dq_x8[] = {LINK(dnnl_graph_op_dequantize, false, dq_x8)};
static const pt_link_spec l_dq_int8[] = {LINK(dnnl_graph_op_dequantize, false, dq_int8)};
static const pt_link_spec l_dq_int8_pt[] = {LINK(dnnl_graph_op_dequantize, false, dq_int8_per_tensor)};
static const pt_link_spec l_dq_conv_src[] = {LINK(dnnl_graph_op_dequantize, false, dq_conv_src)};
/* Weights: Quantize? → Dequantize, nearest producer first. */
static const pt_link_spec l_wei_matmul[] = {LINK(dnnl_graph_op_dequantize, false, dq_x8),
                                            LINK(dnnl_graph_op_quantize, true, q_weight)};
static const pt_link_spec l_wei_conv[] = {LINK(dnnl_graph_op_dequantize, false, dq_conv_wei),
                                          LINK(dnnl_graph_op_quantize, true, NULL)};
static const pt_link_spec l_wei_conv_q8[] = {LINK(dnnl_graph_op_dequantize, false, dq_conv_wei),
                                             LINK(dnnl_graph_op_quantize, true, q_weight_int8)};
static const pt_link_spec l_wei_s8[] = {LINK(dnnl_graph_op_dequantize, false, dq_s8),
                                        LINK(dnnl_graph_op_quantize, true, q_weight_int8)};
/* StaticReshape → Quantize → Dequantize(s8) → StaticReshape → [1] Conv. */
static const pt_link_spec l_wei_reshaped[] = {LINK(dnnl_graph_op_static_reshape, false, NULL),
                                              LINK(dnnl_graph_op_dequantize, false, dq_s8),
                                              LINK(dnnl_graph_op_quantize, false, q_int8),
                                              LINK(dnnl_graph_op_static_reshape, false, NULL)};
/* bf16 compute: Dequantize → TypeCast(→bf16). */
static const pt_link_spec l_tc_dq_x8[] = {LINK(dnnl_graph_op_type_cast, false, tc_to_bf16),
                                          LINK(dnnl_graph_op_dequantize, false, dq_x8)};
static const pt_link_spec l_tc_dq_int8[] = {LINK(dnnl_graph_op_type_cast, false, tc_to_bf16),
                                            LINK(dnnl_graph_op_dequantize, false, dq_int8)};
static const pt_link_spec l_tc_wei_matmul[] = {LINK(dnnl_graph_op_type_cast, false, tc_to_bf16),
                                               LINK(dnnl_graph_op_dequantize, false, dq_x8),
                                               LINK(dnnl_graph_op_quantize, true, q_weight)};
static const pt_link_spec l_tc_wei_conv[] = {LINK(dnnl_graph_op_type_cast, false, tc_to_bf16),
                                             LINK(dnnl_graph_op_dequantize, false, dq_s8),
                                             LINK(dnnl_graph_op_quantize, true, q_weight)};
/* Post-sum operands. */
static const pt_link_spec l_sum_dq[] = {LINK(dnnl_graph_op_dequantize, false, dq_x8)};
static const pt_link_spec l_sum_dq_int8[] = {LINK(dnnl_graph_op_dequantize, false, dq_int8)};
static const pt_link_spec l_sum_tc_dq[] = {LINK(dnnl_graph_op_type_cast, false, NULL),
                                           LINK(dnnl_graph_op_dequantize, false, dq_x8)};
/* Bias through an optional TypeCast (§2.3). */
static const pt_link_spec l_bias_tc[] = {LINK(dnnl_graph_op_type_cast, true, NULL)};

static const pt_branch_spec b_x8_matmul[] = {{0, l_dq_x8, 1}, {1, l_wei_matmul, 2}};
static const pt_branch_spec b_x8_conv[] = {{0, l_dq_conv_src, 1}, {1, l_wei_conv, 2}};
static const pt_branch_spec b_x8_conv_add[] = {{0, l_dq_conv_src, 1}, {1, l_wei_conv_q8, 2}};
static const pt_branch_spec b_x8_conv_reshape[] = {{0, l_dq_int8, 1}, {1, l_wei_reshaped, 4}};
static const pt_branch_spec b_x8_convt[] = {{0, l_dq_int8, 1}, {1, l_wei_s8, 2}};
static const pt_branch_spec b_tc_matmul[] = {{0, l_tc_dq_x8, 2}, {1, l_tc_wei_matmul, 3}};
static const pt_branch_spec b_tc_conv[] = {{0, l_tc_dq_int8, 2}, {1, l_tc_wei_conv, 3}};
static const pt_branch_spec b_sum[] = {{PT_BRANCH_OTHER, l_sum_dq, 1}};
static const pt_branch_spec b_sum_int8[] = {{PT_BRANCH_OTHER, l_sum_dq_int8, 1}};
static const pt_branch_spec b_sum_tc[] = {{PT_BRANCH_OTHER, l_sum_tc_dq, 2}};
static const pt_branch_spec b_bias_tc[] = {{1, l_bias_tc, 1}};
static const pt_branch_spec b_src_dq_int8[] = {{0, l_dq_int8, 1}};
static const pt_branch_spec b_src_dq_int8_pt[] = {{0, l_dq_int8_pt, 1}};
static const pt_link_spec l_dq_s8_zp0[] = {LINK(dnnl_graph_op_dequantize, false, dq_s8_zp0)};
static const pt_branch_spec b_src_dq_s8_zp0[] = {{0, l_dq_s8_zp0, 1}};

/* ---- §5 Binary – MatMul – Binary ------------------------------------------ */

/* BINARY(ext, ext) → BINARY* → TypeCast? →[0] MatMul → BINARY* → TypeCast? */
PATTERN(float_bmb,
        {S(is_binary), ONE, .check = binary_f32_out},
        {S(is_binary), STAR, SWAP},
        {K(dnnl_graph_op_type_cast), OPT},
        {K(dnnl_graph_op_matmul), ONE},
        {S(is_binary), STAR, SWAP},
        {K(dnnl_graph_op_type_cast), OPT})

/* ---- §7.2 quantized convolution, §8 ConvTranspose ------------------------- */

/* Dequantize →[0] Conv ←[1] Dequantize ← Quantize?; → BiasAdd? →
 * Add(·, Dequantize(ext)) → POST* → Quantize */
PATTERN(x8x8x8_conv_add_post_ops_cpu,
        {K(dnnl_graph_op_convolution), ONE, BR(b_x8_conv_add)},
        BIAS_OPT,
        {K(dnnl_graph_op_add), ONE, SWAP, BR(b_sum)},
        POST_STAR,
        {K(dnnl_graph_op_quantize), ONE})

/* weights StaticReshape → Quantize → Dequantize(s8) → StaticReshape →[1] Conv;
 * → BiasAdd? → POST* → Quantize? */
PATTERN(x8s8x_conv_reshape_post_ops,
        {K(dnnl_graph_op_convolution), ONE, BR(b_x8_conv_reshape)},
        BIAS_OPT,
        POST_STAR,
        {K(dnnl_graph_op_quantize), OPT})

/* bf16: → (TypeCast? →[1] BiasAdd)? → Add(·, TypeCast(Dequantize(ext))) →
 * POST* → TypeCast(bf16→f32) → Quantize */
PATTERN(x8s8x_tc_conv_add_post_ops_cpu,
        {K(dnnl_graph_op_convolution), ONE, BR(b_tc_conv)},
        {K(dnnl_graph_op_bias_add), OPT, .check = bias_after_two_inputs, BR(b_bias_tc)},
        {K(dnnl_graph_op_add), ONE, SWAP, BR(b_sum_tc)},
        POST_STAR,
        {K(dnnl_graph_op_type_cast), ONE, .check = tc_from_bf16},
        {K(dnnl_graph_op_quantize), ONE})

PATTERN(x8s8x8_convtranspose_add_post_ops_cpu,
        {K(dnnl_graph_op_conv_transpose), ONE, BR(b_x8_convt)},
        BIAS_OPT,
        {K(dnnl_graph_op_add), ONE, SWAP, BR(b_sum)},
        POST_STAR,
        {K(dnnl_graph_op_quantize), ONE})

PATTERN(x8x8x_conv_post_ops,
        {K(dnnl_graph_op_convolution), ONE, BR(b_x8_conv)},
        BIAS_OPT,
        POST_STAR,
        {K(dnnl_graph_op_quantize), OPT})

PATTERN_IF(x8s8x_tc_conv_post_ops, tc_conv_tail,
        {K(dnnl_graph_op_convolution), ONE, BR(b_tc_conv)},
        {K(dnnl_graph_op_bias_add), OPT, .check = bias_after_two_inputs, BR(b_bias_tc)},
        POST_STAR,
        {K(dnnl_graph_op_type_cast), OPT, .check = tc_from_bf16},
        {K(dnnl_graph_op_quantize), OPT})

PATTERN(x8s8x8_convtranspose_post_ops_cpu,
        {K(dnnl_graph_op_conv_transpose), ONE, BR(b_x8_convt)},
        BIAS_OPT,
        POST_STAR,
        {K(dnnl_graph_op_quantize), OPT})

/* ---- §6.3 quantized MatMul --------------------------------------------------- */

PATTERN(x8x8x8_tc_matmul_add_post_ops_cpu,
        {K(dnnl_graph_op_matmul), ONE, BR(b_tc_matmul)},
        BIAS_OPT,
        {K(dnnl_graph_op_add), ONE, SWAP, BR(b_sum_tc)},
        POST_STAR,
        {K(dnnl_graph_op_type_cast), ONE},
        {S(is_mul_or_div), OPT},
        {K(dnnl_graph_op_quantize), ONE})

PATTERN(x8x8x8_tc_matmul_reshape_transpose_reshape,
        {K(dnnl_graph_op_matmul), ONE, BR(b_tc_matmul)},
        BIAS_OPT,
        {K(dnnl_graph_op_static_reshape), OPT},
        {K(dnnl_graph_op_static_transpose), ONE},
        {K(dnnl_graph_op_static_reshape), OPT},
        {K(dnnl_graph_op_type_cast), ONE, .check = tc_from_bf16},
        {K(dnnl_graph_op_quantize), ONE})

PATTERN_IF(x8x8x_tc_matmul_transpose_reorder, tc_reorder_tail,
        {K(dnnl_graph_op_matmul), ONE, BR(b_tc_matmul)},
        BIAS_OPT,
        {K(dnnl_graph_op_static_transpose), ONE},
        {K(dnnl_graph_op_reorder), ONE},
        {K(dnnl_graph_op_type_cast), OPT, .check = tc_from_bf16},
        {K(dnnl_graph_op_quantize), OPT})

/* → (TypeCast? →[1] BiasAdd)? → POST* → Select? → TypeCast? → Add? →
 * ((Multiply | Divide)? → Quantize)? */
PATTERN_IF(x8x8x_tc_matmul_post_ops, smooth_quant_tail,
        {K(dnnl_graph_op_matmul), ONE, BR(b_tc_matmul)},
        {K(dnnl_graph_op_bias_add), OPT, .check = bias_after_two_inputs, BR(b_bias_tc)},
        POST_STAR,
        SELECT_OPT,
        {K(dnnl_graph_op_type_cast), OPT},
        {K(dnnl_graph_op_add), OPT, SWAP},
        {S(is_mul_or_div), OPT, SWAP},
        {K(dnnl_graph_op_quantize), OPT})

PATTERN(x8x8x8_matmul_add_post_ops_cpu,
        {K(dnnl_graph_op_matmul), ONE, BR(b_x8_matmul)},
        BIAS_OPT,
        {K(dnnl_graph_op_add), ONE, SWAP, BR(b_sum)},
        POST_STAR,
        {K(dnnl_graph_op_quantize), ONE})

PATTERN(x8x8x8_matmul_reshape_transpose_reshape,
        {K(dnnl_graph_op_matmul), ONE, BR(b_x8_matmul)},
        BIAS_OPT,
        {K(dnnl_graph_op_static_reshape), OPT},
        {K(dnnl_graph_op_static_transpose), ONE},
        {K(dnnl_graph_op_static_reshape), OPT},
        {K(dnnl_graph_op_quantize), ONE})

PATTERN(x8x8x_matmul_transpose_reorder,
        {K(dnnl_graph_op_matmul), ONE, BR(b_x8_matmul)},
        BIAS_OPT,
        {K(dnnl_graph_op_static_transpose), ONE},
        {K(dnnl_graph_op_reorder), ONE},
        {K(dnnl_graph_op_quantize), OPT})

PATTERN(x8x8x_matmul_post_ops,
        {K(dnnl_graph_op_matmul), ONE, BR(b_x8_matmul)},
        BIAS_OPT,
        POST_STAR,
        SELECT_OPT,
        {K(dnnl_graph_op_quantize), OPT})

/* ---- §8 float ConvTranspose, §7.1 float convolution ------------------------- */

PATTERN(fp_convtranspose_post_ops,
        {K(dnnl_graph_op_conv_transpose), ONE},
        BIAS_OPT,
        POST_STAR)

/* Convolution(1x1) → BiasAdd? → POST* → Convolution(3x3) → BiasAdd? → POST* */
PATTERN(fp_conv_postops_depthwise_postops_cpu,
        {K(dnnl_graph_op_convolution), ONE, .check = conv_1x1},
        BIAS_OPT,
        POST_STAR,
        {K(dnnl_graph_op_convolution), ONE, .check = conv_3x3},
        BIAS_OPT,
        POST_STAR)

/* Convolution → BiasAdd? → BatchNormInference? → POST* → TypeCast(bf16→f32)?
 * (the swish form POST(x) → Sigmoid → Multiply(x, ·) of
 * fp_conv_post_ops_swish_post_ops is a POST* chain with an internal operand) */
PATTERN(fp_conv_post_ops,
        {K(dnnl_graph_op_convolution), ONE},
        BIAS_OPT,
        {K(dnnl_graph_op_batch_norm_inference), OPT, .check = bnorm_params_f32},
        POST_STAR,
        {K(dnnl_graph_op_type_cast), OPT, .check = tc_bf16_to_f32})

/* ---- §14 reorder ---------------------------------------------------------------- */

PATTERN(x8_reorder_sum_cpu,
        {K(dnnl_graph_op_reorder), ONE, BR(b_src_dq_int8)},
        {K(dnnl_graph_op_add), ONE, SWAP, .check = add_no_broadcast, BR(b_sum_int8)},
        {K(dnnl_graph_op_quantize), ONE, .check = q_int8})

PATTERN(fp_reorder_sum,
        {K(dnnl_graph_op_reorder), ONE},
        {K(dnnl_graph_op_add), ONE, SWAP, .check = add_of_two_values})

PATTERN(x8_reorder,
        {K(dnnl_graph_op_reorder), ONE, BR(b_src_dq_int8)},
        {K(dnnl_graph_op_quantize), ONE, .check = q_int8})

/* ---- §9 pooling ------------------------------------------------------------------ */

static const pt_branch_spec b_sum_int8_pt[] = {{PT_BRANCH_OTHER, l_dq_int8_pt, 1}};

PATTERN(x8_pool_add_post_ops_cpu,
        {S(is_pool), ONE, .check = pool_fusable, BR(b_src_dq_int8_pt)},
        {K(dnnl_graph_op_add), ONE, SWAP, BR(b_sum_int8_pt)},
        POST_STAR,
        {K(dnnl_graph_op_quantize), ONE, .check = q_int8_per_tensor})

PATTERN(x8_pool_reshape_transpose,
        {S(is_pool), ONE, .check = pool_fusable, BR(b_src_dq_int8_pt)},
        {S(is_reshape_or_transpose), OPT},
        {K(dnnl_graph_op_quantize), ONE, .check = q_int8_per_tensor})

PATTERN(x8_pool_post_ops,
        {S(is_pool), ONE, .check = pool_fusable, BR(b_src_dq_int8_pt)},
        POST_STAR,
        {K(dnnl_graph_op_quantize), ONE, .check = q_int8_per_tensor})

PATTERN(fp_pool_post_ops,
        {S(is_pool), ONE, .check = pool_fusable},
        POST_PLUS)

/* ---- §6.2 / §6.1 float MatMul ------------------------------------------------------ */

PATTERN(fp_matmul_transpose_reorder,
        {K(dnnl_graph_op_matmul), ONE},
        BIAS_OPT,
        {K(dnnl_graph_op_type_cast), OPT},
        {K(dnnl_graph_op_static_transpose), ONE},
        {K(dnnl_graph_op_reorder), ONE})

PATTERN(fp_matmul_reshape_transpose_reshape,
        {K(dnnl_graph_op_matmul), ONE},
        BIAS_OPT,
        {K(dnnl_graph_op_type_cast), OPT},
        {K(dnnl_graph_op_static_reshape), OPT},
        {K(dnnl_graph_op_static_transpose), ONE},
        {K(dnnl_graph_op_static_reshape), OPT})

PATTERN(fp_matmul_dropout,
        {K(dnnl_graph_op_matmul), ONE},
        {K(dnnl_graph_op_dropout), ONE})

/* MatMul → BiasAdd? → POST* → Select? → TypeCast? */
PATTERN(fp_matmul_post_ops,
        {K(dnnl_graph_op_matmul), ONE},
        BIAS_OPT,
        POST_STAR,
        SELECT_OPT,
        {K(dnnl_graph_op_type_cast), OPT})

/* ---- §10 normalization ------------------------------------------------------------- */

PATTERN(s8f32s8_bnorm,
        {K(dnnl_graph_op_batch_norm_inference), ONE, BR(b_src_dq_s8_zp0)},
        {K(dnnl_graph_op_relu), OPT},
        {K(dnnl_graph_op_quantize), ONE, .check = q_s8_zp0})

PATTERN(fp_bnorm_relu,
        {S(is_bnorm_fwd), ONE, .check = bnorm_params_f32},
        {K(dnnl_graph_op_relu), ONE})

/* ReLUBackward → [1] BatchNormTrainingBackward (the gradient input) */
PATTERN(fp_bnorm_bwd_relu_bwd,
        {K(dnnl_graph_op_relu_backward), ONE},
        {K(dnnl_graph_op_batch_norm_backward), ONE, .entry = PT_ENTRY_1, .check = bnorm_bwd_params_f32})

PATTERN(groupnorm_post_ops_fusion,
        {K(dnnl_graph_op_group_norm), ONE, .check = norm_params_f32},
        POST_STAR,
        {K(dnnl_graph_op_type_cast), OPT},
        POST_STAR,
        {K(dnnl_graph_op_quantize), OPT})

PATTERN(layernorm_post_ops_fusion_cpu,
        {K(dnnl_graph_op_layer_norm), ONE, .check = norm_params_f32},
        {K(dnnl_graph_op_type_cast), OPT},
        POST_STAR,
        {K(dnnl_graph_op_quantize), OPT})

/* ---- §13 interpolate and reduction -------------------------------------------------- */

PATTERN(fp_interpolate_post_ops,
        {K(dnnl_graph_op_interpolate), ONE, .check = half_pixel},
        POST_PLUS)

PATTERN(fp_reduction_post_ops,
        {S(is_reduction), ONE, .check = has_axes},
        POST_STAR)

/* ---- §12 element-wise chains, §11 SoftMax -------------------------------------------- */

PATTERN(fp_binary_post_ops,
        {S(is_binary), ONE},
        POST_PLUS)

PATTERN(fp_eltwise_dropout,
        {S(is_unary), ONE},
        {K(dnnl_graph_op_dropout), ONE})

PATTERN(fp_reciprocal_multiply,
        {K(dnnl_graph_op_reciprocal), ONE},
        {K(dnnl_graph_op_multiply), ONE, SWAP})

PATTERN(fp_eltwise_binary,
        {S(is_unary), ONE},
        {S(is_binary), PLUS, SWAP})

/* SoftMax → POST* → TypeCast? → Quantize? (the TypeCast converts from f32) */
PATTERN(fp_softmax_post_ops,
        {K(dnnl_graph_op_softmax), ONE},
        {S(is_post), STAR, SWAP, .check = post_f32_inputs},
        {K(dnnl_graph_op_type_cast), OPT, .check = tc_from_f32},
        {K(dnnl_graph_op_quantize), OPT})

/* ---- §14 shuffle, typecast + quantize, §12 sum ----------------------------------------- */

PATTERN(shuffle_fusion,
        {K(dnnl_graph_op_static_reshape), ONE},
        {K(dnnl_graph_op_static_transpose), ONE},
        {K(dnnl_graph_op_static_reshape), ONE})

PATTERN(typecast_quantize_fusion,
        {K(dnnl_graph_op_type_cast), ONE, .check = tc_from_bf16},
        {K(dnnl_graph_op_quantize), ONE})

PATTERN(sum_fusion,
        {K(dnnl_graph_op_add), ONE, .check = add_no_broadcast},
        {K(dnnl_graph_op_add), PLUS, SWAP, .check = add_no_broadcast})

/* ---- int8 concat ---------------------------------------------------------------------- */

static bool same_f32s(const pt_op *a, const pt_op *b, int name) {
    size_t na = 0, nb = 0;
    const float *va = pt_op_f32s(a, name, &na), *vb = pt_op_f32s(b, name, &nb);
    if (na != nb) return false;
    for (size_t i = 0; i < na; ++i)
        if (va[i] != vb[i]) return false;
    return true;
}

static bool same_s64s(const pt_op *a, const pt_op *b, int name) {
    size_t na = 0, nb = 0;
    const int64_t *va = pt_op_s64s(a, name, &na), *vb = pt_op_s64s(b, name, &nb);
    if (na != nb) return false;
    for (size_t i = 0; i < na; ++i)
        if (va[i] != vb[i]) return false;
    return true;
}

int pt_match_int8_concat(const pt_graph *g, const int *group, int first, int *ops, int cap) {
    const pt_op *cat = g->ops[first];
    if (cat->kind != dnnl_graph_op_concat || (int)cat->nin + 2 > cap) return 0;
    if (!pt_schema_supported(cat) || cat->nout != 1) return 0;
    int ti = pt_graph_tensor_index(g, cat->out[0].id);
    if (ti < 0 || g->tensors[ti].nconsumers != 1) return 0;
    int q = g->tensors[ti].consumers[0];
    if (group[q] >= 0 || g->ops[q]->kind != dnnl_graph_op_quantize || !q_int8(g, q)) return 0;
    int n = 0;
    ops[n++] = first;
    for (size_t i = 0; i < cat->nin; ++i) {
        int tin = pt_graph_tensor_index(g, cat->in[i].id);
        if (tin < 0) return 0;
        int p = g->tensors[tin].producer;
        if (p < 0 || group[p] >= 0 || g->ops[p]->kind != dnnl_graph_op_dequantize || !dq_int8(g, p))
            return 0;
        if (g->tensors[tin].nconsumers != 1) return 0;
        if (!same_f32s(g->ops[p], g->ops[q], dnnl_graph_op_attr_scales) ||
            !same_s64s(g->ops[p], g->ops[q], dnnl_graph_op_attr_zps))
            return 0;
        for (int j = 0; j < n; ++j)
            if (ops[j] == p) return 0; /* one Dequantize feeding two inputs */
        ops[n++] = p;
    }
    ops[n++] = q;
    return n;
}
