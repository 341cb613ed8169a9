/* The chain-shaped fusion pattern rows (docs/fusion.md), each written once:
 * name, priority, fused-kernel family and steps, as data for the matcher in
 * pattern_chain.c.  Each pattern is a spine of steps; the
 * comments give the pattern in the spec's notation.  Grouped optional parts
 * such as `(TypeCast → Quantize)?` are two optional steps plus a whole-match
 * predicate. */
#include "partition/chain_patterns.h"

#include <string.h>

#include "ops/op_schema.h"

/* ---- op sets ------------------------------------------------------------ */

static bool is_unary(int k) { return pt_match_is_unary(k); }
static bool is_binary(int k) { return pt_match_is_binary(k); }

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
 * (the f8 convolution form). */
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

/* Compressed weights: 8- or 4-bit integers dequantised with tensor scales. */
static bool dyn_dq_int_weights(const pt_graph *g, int op) {
    dnnl_data_type_t t = in_dt(g, op, 0);
    return t == dnnl_s8 || t == dnnl_u8 || t == dnnl_s4 || t == dnnl_u4;
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
 * its input is constant, a graph input, or made by a Wildcard. */
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
 * known: the depthwise pattern). */
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

/* BiasAdd after a compute op that has no bias input. */
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
 * exclude_pad = false. */
static bool pool_fusable(const pt_graph *g, int op) {
    const pt_op *o = op_at(g, op);
    if (o->kind != dnnl_graph_op_avg_pool) return true;
    bool ceil = strcmp(pt_op_str(o, dnnl_graph_op_attr_rounding_type, "floor"), "ceil") == 0;
    return !(ceil && !pt_op_bool(o, dnnl_graph_op_attr_exclude_pad, false));
}

/* SoftMax post-ops: every input of the post-op is f32. */
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

/* ---- int8 concat: a matcher function (Concat has any number of inputs) --- */

/* Equal scales and zero points (values compared as numbers). */
static bool same_quant_params(const pt_op *a, const pt_op *b) {
    size_t na = 0, nb = 0, za = 0, zb = 0;
    const float *sa = pt_op_f32s(a, dnnl_graph_op_attr_scales, &na);
    const float *sb = pt_op_f32s(b, dnnl_graph_op_attr_scales, &nb);
    const int64_t *pa = pt_op_s64s(a, dnnl_graph_op_attr_zps, &za), *pb = pt_op_s64s(b, dnnl_graph_op_attr_zps, &zb);
    if (na != nb || za != zb) return false;
    for (size_t i = 0; i < na; ++i)
        if (sa[i] != sb[i]) return false;
    for (size_t i = 0; i < za; ++i)
        if (pa[i] != pb[i]) return false;
    return true;
}

int pt_match_int8_concat(pt_match *m, int first) {
    const pt_graph *g = m->g;
    const pt_op *cat = g->ops[first];
    if (cat->kind != dnnl_graph_op_concat || (int)cat->nin + 2 > m->cap) return 0;
    if (!pt_schema_supported(cat) || cat->nout != 1) return 0;
    int q = pt_match_sole_consumer(g, first, 0);
    if (q < 0 || m->group[q] >= 0 || g->ops[q]->kind != dnnl_graph_op_quantize || !q_int8(g, q)) return 0;
    pt_match_take(m, first, PT_CHAIN_ANCHOR);
    for (size_t i = 0; i < cat->nin; ++i) {
        const pt_tensor_info *t = pt_match_tensor(g, cat->in[i].id);
        int p = t ? t->producer : -1;
        bool ok = p >= 0 && m->group[p] < 0 && g->ops[p]->kind == dnnl_graph_op_dequantize && dq_int8(g, p) &&
                  t->nconsumers == 1 && same_quant_params(g->ops[p], g->ops[q]) &&
                  !pt_match_has(m, p); /* one Dequantize feeding two inputs */
        if (!ok) return m->n = 0;
        pt_match_take(m, p, PT_CHAIN_CONCAT_IN);
    }
    pt_match_take(m, q, PT_CHAIN_OUT_QUANT);
    return m->n;
}

/* ---- step and link shorthands --------------------------------------------- */

#define K(kd) .kind = (kd), .set = NULL
#define S(fn) .kind = -1, .set = (fn)
#define ONE .min = 1, .max = 1
#define OPT .min = 0, .max = 1
#define STAR .min = 0, .max = PT_CHAIN_MAX_REPEAT
#define PLUS .min = 1, .max = PT_CHAIN_MAX_REPEAT
#define SWAP .entry = PT_ENTRY_SWAP
#define R(r) .role = PT_CHAIN_##r
#define BR(arr) .branches = (arr), .nbranches = (int)(sizeof(arr) / sizeof((arr)[0]))

#define LINK(kd, opt, chk, role) {(kd), NULL, (opt), (chk), PT_CHAIN_##role}

/* Common steps. */
#define BIAS_OPT {K(dnnl_graph_op_bias_add), OPT, .check = bias_after_two_inputs, R(POST)}
#define POST_STAR {S(is_post), STAR, SWAP, R(POST)}
#define POST_PLUS {S(is_post), PLUS, SWAP, R(POST)}
#define SELECT_OPT {K(dnnl_graph_op_select), OPT, SWAP, R(POST)}
#define QUANT_OUT {K(dnnl_graph_op_quantize), ONE, R(OUT_QUANT)}
#define QUANT_OUT_OPT {K(dnnl_graph_op_quantize), OPT, R(OUT_QUANT)}

/* ---- producer branches ---------------------------------------------------- */

static const pt_link_spec l_dq_x8[] = {LINK(dnnl_graph_op_dequantize, false, dq_x8, SRC_DEQUANT)};
static const pt_link_spec l_dq_int8[] = {LINK(dnnl_graph_op_dequantize, false, dq_int8, SRC_DEQUANT)};
static const pt_link_spec l_dq_int8_pt[] = {LINK(dnnl_graph_op_dequantize, false, dq_int8_per_tensor, SRC_DEQUANT)};
static const pt_link_spec l_dq_conv_src[] = {LINK(dnnl_graph_op_dequantize, false, dq_conv_src, SRC_DEQUANT)};
static const pt_link_spec l_dq_s8_zp0[] = {LINK(dnnl_graph_op_dequantize, false, dq_s8_zp0, SRC_DEQUANT)};
/* Weights: Quantize? → Dequantize, nearest producer first. */
#define WEI(dq, q)                                                                                 \
    {LINK(dnnl_graph_op_dequantize, false, dq, WEI_DEQUANT), LINK(dnnl_graph_op_quantize, true, q, WEI_QUANT)}
static const pt_link_spec l_wei_matmul[] = WEI(dq_x8, q_weight);
static const pt_link_spec l_wei_conv[] = WEI(dq_conv_wei, NULL);
static const pt_link_spec l_wei_conv_q8[] = WEI(dq_conv_wei, q_weight_int8);
static const pt_link_spec l_wei_s8[] = WEI(dq_s8, q_weight_int8);
/* StaticReshape → Quantize → Dequantize(s8) → StaticReshape → [1] Conv. */
static const pt_link_spec l_wei_reshaped[] = {LINK(dnnl_graph_op_static_reshape, false, NULL, WEI_RESHAPE),
                                              LINK(dnnl_graph_op_dequantize, false, dq_s8, WEI_DEQUANT),
                                              LINK(dnnl_graph_op_quantize, false, q_int8, WEI_QUANT),
                                              LINK(dnnl_graph_op_static_reshape, false, NULL, WEI_RESHAPE)};
/* bf16 compute: Dequantize → TypeCast(→bf16), and for weights Quantize? before. */
#define TC_TO_BF16(role) LINK(dnnl_graph_op_type_cast, false, tc_to_bf16, role)
static const pt_link_spec l_tc_dq_x8[] = {TC_TO_BF16(SRC_CAST),
                                          LINK(dnnl_graph_op_dequantize, false, dq_x8, SRC_DEQUANT)};
static const pt_link_spec l_tc_dq_int8[] = {TC_TO_BF16(SRC_CAST),
                                            LINK(dnnl_graph_op_dequantize, false, dq_int8, SRC_DEQUANT)};
static const pt_link_spec l_tc_wei_matmul[] = {TC_TO_BF16(WEI_CAST),
                                               LINK(dnnl_graph_op_dequantize, false, dq_x8, WEI_DEQUANT),
                                               LINK(dnnl_graph_op_quantize, true, q_weight, WEI_QUANT)};
static const pt_link_spec l_tc_wei_conv[] = {TC_TO_BF16(WEI_CAST),
                                             LINK(dnnl_graph_op_dequantize, false, dq_s8, WEI_DEQUANT),
                                             LINK(dnnl_graph_op_quantize, true, q_weight, WEI_QUANT)};
/* Post-sum operands. */
static const pt_link_spec l_sum_dq[] = {LINK(dnnl_graph_op_dequantize, false, dq_x8, SUM_DEQUANT)};
static const pt_link_spec l_sum_dq_int8[] = {LINK(dnnl_graph_op_dequantize, false, dq_int8, SUM_DEQUANT)};
static const pt_link_spec l_sum_dq_int8_pt[] = {
    LINK(dnnl_graph_op_dequantize, false, dq_int8_per_tensor, SUM_DEQUANT)};
static const pt_link_spec l_sum_tc_dq[] = {LINK(dnnl_graph_op_type_cast, false, NULL, SUM_CAST),
                                           LINK(dnnl_graph_op_dequantize, false, dq_x8, SUM_DEQUANT)};
/* Bias through an optional TypeCast. */
static const pt_link_spec l_bias_tc[] = {LINK(dnnl_graph_op_type_cast, true, NULL, BIAS_CAST)};

static const pt_link_spec l_wei_dyn_dq[] = {
    LINK(dnnl_graph_op_dynamic_dequantize, false, dyn_dq_int_weights, WEI_DEQUANT)};
static const pt_branch_spec b_compressed_wei[] = {{1, l_wei_dyn_dq, 1}};
static const pt_branch_spec b_x8_matmul[] = {{0, l_dq_x8, 1}, {1, l_wei_matmul, 2}};
static const pt_branch_spec b_x8_conv[] = {{0, l_dq_conv_src, 1}, {1, l_wei_conv, 2}};
static const pt_branch_spec b_x8_conv_add[] = {{0, l_dq_conv_src, 1}, {1, l_wei_conv_q8, 2}};
static const pt_branch_spec b_x8_conv_reshape[] = {{0, l_dq_int8, 1}, {1, l_wei_reshaped, 4}};
static const pt_branch_spec b_x8_convt[] = {{0, l_dq_int8, 1}, {1, l_wei_s8, 2}};
static const pt_branch_spec b_tc_matmul[] = {{0, l_tc_dq_x8, 2}, {1, l_tc_wei_matmul, 3}};
static const pt_branch_spec b_tc_conv[] = {{0, l_tc_dq_int8, 2}, {1, l_tc_wei_conv, 3}};
static const pt_branch_spec b_sum[] = {{PT_BRANCH_OTHER, l_sum_dq, 1}};
static const pt_branch_spec b_sum_int8[] = {{PT_BRANCH_OTHER, l_sum_dq_int8, 1}};
static const pt_branch_spec b_sum_int8_pt[] = {{PT_BRANCH_OTHER, l_sum_dq_int8_pt, 1}};
static const pt_branch_spec b_sum_tc[] = {{PT_BRANCH_OTHER, l_sum_tc_dq, 2}};
static const pt_branch_spec b_bias_tc[] = {{1, l_bias_tc, 1}};
static const pt_branch_spec b_src_dq_int8[] = {{0, l_dq_int8, 1}};
static const pt_branch_spec b_src_dq_int8_pt[] = {{0, l_dq_int8_pt, 1}};
static const pt_branch_spec b_src_dq_s8_zp0[] = {{0, l_dq_s8_zp0, 1}};

/* Anchors with their operand branches, and the bias through a TypeCast. */
#define CONV(br) {K(dnnl_graph_op_convolution), ONE, BR(br), R(ANCHOR)}
#define CONVT(br) {K(dnnl_graph_op_conv_transpose), ONE, BR(br), R(ANCHOR)}
#define MATMUL(br) {K(dnnl_graph_op_matmul), ONE, BR(br), R(ANCHOR)}
#define MATMUL_FP {K(dnnl_graph_op_matmul), ONE, R(ANCHOR)}
#define POOL_X8 {S(is_pool), ONE, .check = pool_fusable, BR(b_src_dq_int8_pt), R(ANCHOR)}
#define BIAS_TC_OPT {K(dnnl_graph_op_bias_add), OPT, .check = bias_after_two_inputs, BR(b_bias_tc), R(POST)}
/* The post-sum: Add(·, branch) */
#define SUM_ADD(br) {K(dnnl_graph_op_add), ONE, SWAP, BR(br), R(POST)}
/* (StaticReshape?) → StaticTranspose → (StaticReshape?) */
#define RESHAPE_TRANSPOSE_RESHAPE                                                                  \
    {K(dnnl_graph_op_static_reshape), OPT, R(POST)}, {K(dnnl_graph_op_static_transpose), ONE, R(POST)}, \
        {K(dnnl_graph_op_static_reshape), OPT, R(POST)}
#define TRANSPOSE_REORDER {K(dnnl_graph_op_static_transpose), ONE, R(POST)}, {K(dnnl_graph_op_reorder), ONE, R(POST)}
/* TypeCast(bf16 → ·) before the final Quantize. */
#define TC_FROM_BF16(occ) {K(dnnl_graph_op_type_cast), occ, .check = tc_from_bf16, R(OUT_CAST)}

/* ---- the rows ------------------------------------------------------------------------- */

/* One row per chain pattern: name, priority, fused-kernel family, optional
 * whole-match predicate, then the steps.  The steps become a compound literal
 * (static storage at file scope). */
#define ROW_IF(nm, prio, family, accept, ...)                                                      \
    {#nm, (prio), NULL,                                                                            \
     &(const pt_chain_pattern){(const pt_step_spec[]){__VA_ARGS__},                                \
                               (int)(sizeof((const pt_step_spec[]){__VA_ARGS__}) / sizeof(pt_step_spec)), \
                               (accept)},                                                          \
     (family)}
#define ROW(nm, prio, family, ...) ROW_IF(nm, prio, family, NULL, __VA_ARGS__)

#define F_NONE PT_FUSED_NONE /* op by op */
#define F_COMPUTE PT_FUSED_COMPUTE_POST_OPS
#define F_CHAIN PT_FUSED_CHAIN_POST_OPS

/* In the order the driver runs them: priority from the highest down; rows of
 * one priority run in table order. */
const pt_pattern_row pt_chain_rows[] = {
    /* Binary - MatMul - Binary: BINARY(ext, ext) → BINARY* → TypeCast? →[0]
     * MatMul → BINARY* → TypeCast? */
    ROW(float_bmb, 19.5f, F_COMPUTE,
        {S(is_binary), ONE, .check = binary_f32_out, R(PRE)},
        {S(is_binary), STAR, SWAP, R(PRE)},
        {K(dnnl_graph_op_type_cast), OPT, R(PRE)},
        MATMUL_FP,
        {S(is_binary), STAR, SWAP, R(POST)},
        {K(dnnl_graph_op_type_cast), OPT, R(OUT_CAST)}),

    /* Quantized convolution and ConvTranspose. */
    /* Dequantize →[0] Conv ←[1] Dequantize ← Quantize?; → BiasAdd? →
     * Add(·, Dequantize(ext)) → POST* → Quantize */
    ROW(x8x8x8_conv_add_post_ops_cpu, 10.6f, F_COMPUTE, CONV(b_x8_conv_add), BIAS_OPT, SUM_ADD(b_sum), POST_STAR,
        QUANT_OUT),
    /* weights StaticReshape → Quantize → Dequantize(s8) → StaticReshape →[1]
     * Conv; → BiasAdd? → POST* → Quantize? */
    ROW(x8s8x_conv_reshape_post_ops, 10.6f, F_NONE, CONV(b_x8_conv_reshape), BIAS_OPT, POST_STAR, QUANT_OUT_OPT),
    /* bf16: → (TypeCast? →[1] BiasAdd)? → Add(·, TypeCast(Dequantize(ext))) →
     * POST* → TypeCast(bf16→f32) → Quantize */
    ROW(x8s8x_tc_conv_add_post_ops_cpu, 10.6f, F_COMPUTE, CONV(b_tc_conv), BIAS_TC_OPT, SUM_ADD(b_sum_tc), POST_STAR,
        TC_FROM_BF16(ONE), QUANT_OUT),
    ROW(x8s8x8_convtranspose_add_post_ops_cpu, 10.6f, F_COMPUTE, CONVT(b_x8_convt), BIAS_OPT, SUM_ADD(b_sum),
        POST_STAR, QUANT_OUT),
    ROW(x8x8x_conv_post_ops, 10.5f, F_COMPUTE, CONV(b_x8_conv), BIAS_OPT, POST_STAR, QUANT_OUT_OPT),
    ROW_IF(x8s8x_tc_conv_post_ops, 10.5f, F_COMPUTE, tc_conv_tail, CONV(b_tc_conv), BIAS_TC_OPT, POST_STAR,
           TC_FROM_BF16(OPT), QUANT_OUT_OPT),
    ROW(x8s8x8_convtranspose_post_ops_cpu, 10.5f, F_COMPUTE, CONVT(b_x8_convt), BIAS_OPT, POST_STAR, QUANT_OUT_OPT),

    /* Quantized MatMul. */
    ROW(x8x8x8_tc_matmul_add_post_ops_cpu, 10.5f, F_COMPUTE, MATMUL(b_tc_matmul), BIAS_OPT, SUM_ADD(b_sum_tc),
        POST_STAR,
        {K(dnnl_graph_op_type_cast), ONE, R(OUT_CAST)},
        {S(is_mul_or_div), OPT, R(POST)},
        QUANT_OUT),
    ROW(x8x8x8_tc_matmul_reshape_transpose_reshape, 10.5f, F_NONE, MATMUL(b_tc_matmul), BIAS_OPT,
        RESHAPE_TRANSPOSE_RESHAPE, TC_FROM_BF16(ONE), QUANT_OUT),
    ROW_IF(x8x8x_tc_matmul_transpose_reorder, 10.5f, F_NONE, tc_reorder_tail, MATMUL(b_tc_matmul), BIAS_OPT,
           TRANSPOSE_REORDER, TC_FROM_BF16(OPT), QUANT_OUT_OPT),

    /* Float ConvTranspose. */
    ROW(fp_convtranspose_post_ops, 10.4f, F_COMPUTE, {K(dnnl_graph_op_conv_transpose), ONE, R(ANCHOR)}, BIAS_OPT,
        POST_STAR),

    /* → (TypeCast? →[1] BiasAdd)? → POST* → Select? → TypeCast? → Add? →
     * ((Multiply | Divide)? → Quantize)? */
    ROW_IF(x8x8x_tc_matmul_post_ops, 10.4f, F_COMPUTE, smooth_quant_tail, MATMUL(b_tc_matmul), BIAS_TC_OPT,
           POST_STAR, SELECT_OPT,
           {K(dnnl_graph_op_type_cast), OPT, R(POST)},
           {K(dnnl_graph_op_add), OPT, SWAP, R(POST)},
           {S(is_mul_or_div), OPT, SWAP, R(POST)},
           QUANT_OUT_OPT),

    /* Convolution(1x1) → BiasAdd? → POST* → Convolution(3x3) → BiasAdd? → POST* */
    ROW(fp_conv_postops_depthwise_postops_cpu, 10.3f, F_NONE,
        {K(dnnl_graph_op_convolution), ONE, .check = conv_1x1, R(ANCHOR)},
        BIAS_OPT, POST_STAR,
        {K(dnnl_graph_op_convolution), ONE, .check = conv_3x3, R(ANCHOR2)},
        BIAS_OPT, POST_STAR),

    /* Reorder and pooling. */
    ROW(x8_reorder_sum_cpu, 10.2f, F_CHAIN,
        {K(dnnl_graph_op_reorder), ONE, BR(b_src_dq_int8), R(ANCHOR)},
        {K(dnnl_graph_op_add), ONE, SWAP, .check = add_no_broadcast, BR(b_sum_int8), R(POST)},
        {K(dnnl_graph_op_quantize), ONE, .check = q_int8, R(OUT_QUANT)}),
    ROW(x8_pool_add_post_ops_cpu, 10.1f, F_CHAIN, POOL_X8, SUM_ADD(b_sum_int8_pt), POST_STAR,
        {K(dnnl_graph_op_quantize), ONE, .check = q_int8_per_tensor, R(OUT_QUANT)}),
    ROW(fp_reorder_sum, 10.1f, F_CHAIN,
        {K(dnnl_graph_op_reorder), ONE, R(ANCHOR)},
        {K(dnnl_graph_op_add), ONE, SWAP, .check = add_of_two_values, R(POST)}),
    ROW(x8_reorder, 10.1f, F_CHAIN,
        {K(dnnl_graph_op_reorder), ONE, BR(b_src_dq_int8), R(ANCHOR)},
        {K(dnnl_graph_op_quantize), ONE, .check = q_int8, R(OUT_QUANT)}),

    ROW(x8x8x8_matmul_add_post_ops_cpu, 10.0f, F_COMPUTE, MATMUL(b_x8_matmul), BIAS_OPT, SUM_ADD(b_sum), POST_STAR,
        QUANT_OUT),
    ROW(x8x8x8_matmul_reshape_transpose_reshape, 10.0f, F_NONE, MATMUL(b_x8_matmul), BIAS_OPT,
        RESHAPE_TRANSPOSE_RESHAPE, QUANT_OUT),
    ROW(x8x8x_matmul_transpose_reorder, 10.0f, F_NONE, MATMUL(b_x8_matmul), BIAS_OPT, TRANSPOSE_REORDER,
        QUANT_OUT_OPT),
    ROW(x8_pool_reshape_transpose, 10.0f, F_NONE, POOL_X8,
        {S(is_reshape_or_transpose), OPT, R(POST)},
        {K(dnnl_graph_op_quantize), ONE, .check = q_int8_per_tensor, R(OUT_QUANT)}),
    ROW(x8_pool_post_ops, 10.0f, F_CHAIN, POOL_X8, POST_STAR,
        {K(dnnl_graph_op_quantize), ONE, .check = q_int8_per_tensor, R(OUT_QUANT)}),
    ROW(x8x8x_matmul_post_ops, 9.9f, F_COMPUTE, MATMUL(b_x8_matmul), BIAS_OPT, POST_STAR, SELECT_OPT, QUANT_OUT_OPT),
    ROW(fp_pool_post_ops, 9.9f, F_CHAIN, {S(is_pool), ONE, .check = pool_fusable, R(ANCHOR)}, POST_PLUS),

    /* Float convolution: Convolution → BiasAdd? → BatchNormInference? → POST*
     * → TypeCast(bf16→f32)?  (the swish form POST(x) → Sigmoid → Multiply(x,
     * ·) is a POST* chain with an internal operand) */
    ROW(fp_conv_post_ops, 9.8f, F_COMPUTE,
        {K(dnnl_graph_op_convolution), ONE, R(ANCHOR)},
        BIAS_OPT,
        {K(dnnl_graph_op_batch_norm_inference), OPT, .check = bnorm_params_f32, R(POST)},
        POST_STAR,
        {K(dnnl_graph_op_type_cast), OPT, .check = tc_bf16_to_f32, R(OUT_CAST)}),

    /* Float MatMul. */
    ROW(fp_matmul_transpose_reorder, 9.1f, F_NONE, MATMUL_FP, BIAS_OPT,
        {K(dnnl_graph_op_type_cast), OPT, R(POST)}, TRANSPOSE_REORDER),
    ROW(s8f32s8_bnorm, 9.0f, F_CHAIN,
        {K(dnnl_graph_op_batch_norm_inference), ONE, BR(b_src_dq_s8_zp0), R(ANCHOR)},
        {K(dnnl_graph_op_relu), OPT, R(POST)},
        {K(dnnl_graph_op_quantize), ONE, .check = q_s8_zp0, R(OUT_QUANT)}),
    ROW(fp_matmul_reshape_transpose_reshape, 9.0f, F_NONE, MATMUL_FP, BIAS_OPT,
        {K(dnnl_graph_op_type_cast), OPT, R(POST)}, RESHAPE_TRANSPOSE_RESHAPE),
    ROW(fp_matmul_dropout, 8.9f, F_CHAIN, MATMUL_FP, {K(dnnl_graph_op_dropout), ONE, R(POST)}),

    /* Weight-only compression: DynamicDequantize(int weights) →[1] MatMul →
     * BiasAdd? → POST* → TypeCast? (seed 002; int4/int8 weights with
     * per-tensor, per-channel or per-group scales and zero points). */
    ROW(compressed_wei_matmul_post_ops, 8.85f, F_COMPUTE, MATMUL(b_compressed_wei), BIAS_OPT, POST_STAR,
        {K(dnnl_graph_op_type_cast), OPT, R(OUT_CAST)}),
    /* Normalization. */
    ROW(fp_bnorm_relu, 8.8f, F_CHAIN,
        {S(is_bnorm_fwd), ONE, .check = bnorm_params_f32, R(ANCHOR)},
        {K(dnnl_graph_op_relu), ONE, R(POST)}),
    /* ReLUBackward → [1] BatchNormTrainingBackward (the gradient input) */
    ROW(fp_bnorm_bwd_relu_bwd, 8.8f, F_NONE,
        {K(dnnl_graph_op_relu_backward), ONE, R(PRE)},
        {K(dnnl_graph_op_batch_norm_backward), ONE, .entry = PT_ENTRY_1, .check = bnorm_bwd_params_f32,
         R(ANCHOR)}),
    /* MatMul → BiasAdd? → POST* → Select? → TypeCast? */
    ROW(fp_matmul_post_ops, 8.8f, F_COMPUTE, MATMUL_FP, BIAS_OPT, POST_STAR, SELECT_OPT,
        {K(dnnl_graph_op_type_cast), OPT, R(OUT_CAST)}),

    /* Interpolate, reduction, normalization. */
    ROW(fp_interpolate_post_ops, 8.4f, F_CHAIN,
        {K(dnnl_graph_op_interpolate), ONE, .check = half_pixel, R(ANCHOR)}, POST_PLUS),
    ROW(fp_reduction_post_ops, 8.4f, F_CHAIN, {S(is_reduction), ONE, .check = has_axes, R(ANCHOR)}, POST_STAR),
    ROW(groupnorm_post_ops_fusion, 8.4f, F_CHAIN,
        {K(dnnl_graph_op_group_norm), ONE, .check = norm_params_f32, R(ANCHOR)},
        POST_STAR,
        {K(dnnl_graph_op_type_cast), OPT, R(POST)},
        POST_STAR,
        QUANT_OUT_OPT),

    /* Element-wise chains (every op a post-op, no anchor). */
    ROW(fp_binary_post_ops, 8.3f, F_CHAIN, {S(is_binary), ONE, R(POST)}, POST_PLUS),
    ROW(fp_eltwise_dropout, 8.3f, F_CHAIN, {S(is_unary), ONE, R(POST)}, {K(dnnl_graph_op_dropout), ONE, R(POST)}),
    ROW(fp_reciprocal_multiply, 8.2f, F_CHAIN,
        {K(dnnl_graph_op_reciprocal), ONE, R(POST)},
        {K(dnnl_graph_op_multiply), ONE, SWAP, R(POST)}),
    /* Dequantize(int8) on every input → Concat → Quantize(int8), all with the
     * same scales and zero points: Concat has a variable number of inputs, so
     * this row has a matcher function. */
    {"int8_concat_fusion", 8.2f, pt_match_int8_concat, NULL, F_CHAIN},
    ROW(fp_eltwise_binary, 8.2f, F_CHAIN, {S(is_unary), ONE, R(POST)}, {S(is_binary), PLUS, SWAP, R(POST)}),
    /* SoftMax → POST* → TypeCast? → Quantize? (the TypeCast converts from f32) */
    ROW(fp_softmax_post_ops, 8.2f, F_CHAIN,
        {K(dnnl_graph_op_softmax), ONE, R(ANCHOR)},
        {S(is_post), STAR, SWAP, .check = post_f32_inputs, R(POST)},
        {K(dnnl_graph_op_type_cast), OPT, .check = tc_from_f32, R(OUT_CAST)},
        QUANT_OUT_OPT),
    ROW(layernorm_post_ops_fusion_cpu, 8.2f, F_CHAIN,
        {K(dnnl_graph_op_layer_norm), ONE, .check = norm_params_f32, R(ANCHOR)},
        {K(dnnl_graph_op_type_cast), OPT, R(POST)},
        POST_STAR,
        QUANT_OUT_OPT),

    /* Shuffle, TypeCast + Quantize, sum. */
    ROW(shuffle_fusion, 8.2f, F_NONE,
        {K(dnnl_graph_op_static_reshape), ONE, R(POST)},
        {K(dnnl_graph_op_static_transpose), ONE, R(POST)},
        {K(dnnl_graph_op_static_reshape), ONE, R(POST)}),
    ROW(typecast_quantize_fusion, 8.1f, F_CHAIN,
        {K(dnnl_graph_op_type_cast), ONE, .check = tc_from_bf16, R(OUT_CAST)},
        QUANT_OUT),
    ROW(sum_fusion, 8.1f, F_CHAIN,
        {K(dnnl_graph_op_add), ONE, .check = add_no_broadcast, R(POST)},
        {K(dnnl_graph_op_add), PLUS, SWAP, .check = add_no_broadcast, R(POST)}),
};
const int pt_chain_row_count = (int)(sizeof pt_chain_rows / sizeof pt_chain_rows[0]);

const pt_chain_pattern *pt_chain_pattern_named(const char *name) {
    for (int r = 0; r < pt_chain_row_count; ++r)
        if (pt_chain_rows[r].chain && strcmp(pt_chain_rows[r].name, name) == 0) return pt_chain_rows[r].chain;
    return NULL;
}

