/* Schema rows of the unary element-wise templates (docs/ops.md): forward ops
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
    return pt_infer_same_shape(op, &in[0], &in[1], &out[0],
                               "diff_dst shape differs from input 0 shape");
}

/* Rows by attribute set; op_table.def maps each kind to one of them. */
#define FWD(row, a) PT_ROW(row, fwd_in, fwd_out, a, NULL, NULL, NULL)
#define BWD(row, a) PT_ROW(row, bwd_in, bwd_out, a, NULL, infer_bwd, NULL)

FWD(unary, NULL);
FWD(unary_alpha, a_alpha);
FWD(clamp, a_min_max);
FWD(gelu, a_gelu);
FWD(hard_sigmoid, a_alpha_beta);
FWD(pow, a_beta);
FWD(softplus, a_softplus);

BWD(unary_bwd, NULL);
BWD(unary_bwd_use_dst, a_use_dst);
BWD(clamp_bwd, a_min_max_use_dst);
BWD(elu_bwd, a_alpha_use_dst);
BWD(gelu_bwd, a_gelu);
BWD(hard_sigmoid_bwd, a_alpha_beta);
BWD(softplus_bwd, a_softplus);
