/* Schema rows of the unary element-wise templates (opset §1.9): forward ops
 * take `src` and produce `dst`; backward ops take (src or dst, diff_dst) and
 * produce `diff_src`.  All tensors share one type T in {f32, bf16, f16} and
 * the output has the shape of input 0 (forward: the registry's default
 * inference; backward: diff_dst must have that shape too). */
#include "ops/schema_tables.h"

#include "ops/shape_utils.h"

static const pt_port_spec fwd_in[] = {PT_PORT("src", PT_DT_FLOAT3, 'T')};
static const pt_port_spec fwd_out[] = {PT_PORT("dst", PT_DT_FLOAT3, 'T')};
/* Input 0 is `src` or, with use_dst, the forward `dst`. */
static const pt_port_spec bwd_in[] = {PT_PORT("src", PT_DT_FLOAT3, 'T'),
                                      PT_PORT("diff_dst", PT_DT_FLOAT3, 'T')};
static const pt_port_spec bwd_out[] = {PT_PORT("diff_src", PT_DT_FLOAT3, 'T')};

static const pt_attr_spec a_alpha[] = {PT_REQ_F32(dnnl_graph_op_attr_alpha), PT_ATTR_LIST_END};
static const pt_attr_spec a_alpha_beta[] = {PT_REQ_F32(dnnl_graph_op_attr_alpha),
                                            PT_REQ_F32(dnnl_graph_op_attr_beta), PT_ATTR_LIST_END};
static const pt_attr_spec a_beta[] = {PT_REQ_F32(dnnl_graph_op_attr_beta), PT_ATTR_LIST_END};
static const pt_attr_spec a_min_max[] = {PT_REQ_F32(dnnl_graph_op_attr_min),
                                         PT_REQ_F32(dnnl_graph_op_attr_max), PT_ATTR_LIST_END};
static const pt_attr_spec a_gelu[] = {
        PT_OPT_STR(dnnl_graph_op_attr_mode, "gelu_erf", "gelu_erf|gelu_tanh"), PT_ATTR_LIST_END};
static const pt_attr_spec a_softplus[] = {PT_OPT_F32(dnnl_graph_op_attr_beta, 1.0f),
                                          PT_ATTR_LIST_END};

static const pt_attr_spec a_use_dst[] = {PT_OPT_BOOL(dnnl_graph_op_attr_use_dst, 1),
                                         PT_ATTR_LIST_END};
static const pt_attr_spec a_alpha_use_dst[] = {PT_REQ_F32(dnnl_graph_op_attr_alpha),
                                               PT_OPT_BOOL(dnnl_graph_op_attr_use_dst, 1),
                                               PT_ATTR_LIST_END};
static const pt_attr_spec a_min_max_use_dst[] = {PT_REQ_F32(dnnl_graph_op_attr_min),
                                                 PT_REQ_F32(dnnl_graph_op_attr_max),
                                                 PT_OPT_BOOL(dnnl_graph_op_attr_use_dst, 1),
                                                 PT_ATTR_LIST_END};

static pt_status infer_bwd(const pt_op *op, const pt_lt *in, pt_lt *out) {
    int n;
    int64_t dims[DNNL_MAX_NDIMS];
    if (pt_merge_same_shape(in[0].ndims, in[0].dims, in[1].ndims, in[1].dims, &n, dims) !=
        dnnl_success)
        return pt_op_fail(op, dnnl_invalid_shape, "diff_dst shape differs from input 0 shape");
    return pt_set_output_shape(&out[0], n, dims);
}

#define FWD(k, nm, a) \
    {.kind = (k), .name = (nm), .inputs = fwd_in, .n_in_specs = 1, .min_in = 1, .max_in = 1, \
     .outputs = fwd_out, .n_out_specs = 1, .min_out = 1, .max_out = 1, .attrs = (a)}
#define BWD(k, nm, a) \
    {.kind = (k), .name = (nm), .inputs = bwd_in, .n_in_specs = 2, .min_in = 2, .max_in = 2, \
     .outputs = bwd_out, .n_out_specs = 1, .min_out = 1, .max_out = 1, .attrs = (a), \
     .infer = infer_bwd}

const pt_op_schema pt_schemas_eltwise[] = {
    FWD(dnnl_graph_op_abs, "Abs", NULL),
    FWD(dnnl_graph_op_clamp, "Clamp", a_min_max),
    FWD(dnnl_graph_op_elu, "Elu", a_alpha),
    FWD(dnnl_graph_op_exp, "Exp", NULL),
    FWD(dnnl_graph_op_gelu, "GELU", a_gelu),
    FWD(dnnl_graph_op_hard_sigmoid, "HardSigmoid", a_alpha_beta),
    FWD(dnnl_graph_op_hard_swish, "HardSwish", NULL),
    FWD(dnnl_graph_op_leaky_relu, "LeakyReLU", a_alpha),
    FWD(dnnl_graph_op_log, "Log", NULL),
    FWD(dnnl_graph_op_mish, "Mish", NULL),
    FWD(dnnl_graph_op_pow, "Pow", a_beta),
    FWD(dnnl_graph_op_reciprocal, "Reciprocal", NULL),
    FWD(dnnl_graph_op_relu, "ReLU", NULL),
    FWD(dnnl_graph_op_round, "Round", NULL),
    FWD(dnnl_graph_op_sigmoid, "Sigmoid", NULL),
    FWD(dnnl_graph_op_softplus, "SoftPlus", a_softplus),
    FWD(dnnl_graph_op_sqrt, "Sqrt", NULL),
    FWD(dnnl_graph_op_square, "Square", NULL),
    FWD(dnnl_graph_op_tanh, "Tanh", NULL),

    BWD(dnnl_graph_op_abs_backward, "AbsBackward", NULL),
    BWD(dnnl_graph_op_clamp_backward, "ClampBackward", a_min_max_use_dst),
    BWD(dnnl_graph_op_elu_backward, "EluBackward", a_alpha_use_dst),
    BWD(dnnl_graph_op_gelu_backward, "GELUBackward", a_gelu),
    BWD(dnnl_graph_op_hard_sigmoid_backward, "HardSigmoidBackward", a_alpha_beta),
    BWD(dnnl_graph_op_hard_swish_backward, "HardSwishBackward", NULL),
    BWD(dnnl_graph_op_mish_backward, "MishBackward", NULL),
    BWD(dnnl_graph_op_relu_backward, "ReLUBackward", a_use_dst),
    BWD(dnnl_graph_op_sigmoid_backward, "SigmoidBackward", a_use_dst),
    BWD(dnnl_graph_op_softplus_backward, "SoftPlusBackward", a_softplus),
    BWD(dnnl_graph_op_sqrt_backward, "SqrtBackward", a_use_dst),
    BWD(dnnl_graph_op_tanh_backward, "TanhBackward", a_use_dst),
};
const int pt_schemas_eltwise_count = PT_COUNT(pt_schemas_eltwise);
