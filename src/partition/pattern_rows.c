/* The fusion pattern registry (fusion-patterns.md §17): one row per pass.
 * Chain-shaped patterns are data (chain_patterns.c); attention and MLP
 * patterns have matcher functions of their own. */
#include "partition/pattern_rows.h"

#include "partition/chain_patterns.h"
#include "partition/pattern_mlp.h"
#include "partition/pattern_sdpa.h"
#include "partition/pattern_sdpa_bwd.h"

#define CHAIN(name, prio) {#name, (prio), NULL, &pt_chain_##name, PT_FUSED_NONE}
/* A chain row whose partitions run through a fused kernel. */
#define CHAIN_FUSED(name, prio, family) {#name, (prio), NULL, &pt_chain_##name, (family)}

/* Adapters from the matchers that still return a bare op list: their ops
 * get PT_ROLE_NONE. */
#define LIST_MATCHER(fn)                                               \
    static int fn##_roles(pt_match *m, int first) {                     \
        int cnt = fn(m->g, m->group, first, m->ops, m->cap);           \
        for (int i = 0; i < cnt; ++i) m->roles[i] = PT_ROLE_NONE;      \
        m->n = cnt > 0 ? cnt : 0;                                      \
        return m->n;                                                   \
    }
LIST_MATCHER(pt_match_quantized_gated_mlp)
LIST_MATCHER(pt_match_quantized_gated_mlp_v1)
LIST_MATCHER(pt_match_gated_mlp_v1)
LIST_MATCHER(pt_match_gated_mlp)
LIST_MATCHER(pt_match_int8_concat)

const pt_pattern_row pt_pattern_rows[] = {
    /* Gated MLP (§4): one fused kernel for the four rows. */
    {"quantized_gated_mlp", 22.1f, pt_match_quantized_gated_mlp_roles, NULL, PT_FUSED_GATED_MLP},
    {"quantized_gated_mlp_v1", 22.1f, pt_match_quantized_gated_mlp_v1_roles, NULL, PT_FUSED_GATED_MLP},
    {"gated_mlp_v1", 22.05f, pt_match_gated_mlp_v1_roles, NULL, PT_FUSED_GATED_MLP},
    /* Quantized and compressed SDPA forward: one streaming fused kernel. */
    {"x8_sdpa_fusion", 22.0f, pt_match_x8_sdpa, NULL, PT_FUSED_SDPA_FWD},
    {"int8_bf16_sdp_fusion", 22.0f, pt_match_int8_bf16_sdpa, NULL, PT_FUSED_SDPA_FWD},
    {"sdp_with_compressed_kv_fusion", 22.0f, pt_match_sdpa_compressed_kv, NULL, PT_FUSED_SDPA_FWD},
    {"sdp_with_compressed_v_fusion", 22.0f, pt_match_sdpa_compressed_v, NULL, PT_FUSED_SDPA_FWD},
    {"sdp_with_compressed_k_fusion", 22.0f, pt_match_sdpa_compressed_k, NULL, PT_FUSED_SDPA_FWD},
    {"int8_fp32_gpt_sdp", 22.0f, pt_match_int8_fp32_gpt_sdpa, NULL, PT_FUSED_SDPA_FWD},
    {"int8_bf16_gpt_sdp", 22.0f, pt_match_int8_bf16_gpt_sdpa, NULL, PT_FUSED_SDPA_FWD},
    {"gated_mlp", 22.0f, pt_match_gated_mlp_roles, NULL, PT_FUSED_GATED_MLP},
    /* SDPA forward: float_sdp_fusion with the Gemma, GPT, GQA and JAX forms folded in. */
    /* SDPA / GQA training backward: one fused kernel for both rows. */
    {"float_gqa_backward_fusion", 21.1f, pt_match_gqa_bwd, NULL, PT_FUSED_SDPA_BWD},
    {"float_sdp_fusion", 21.0f, pt_match_sdpa_fwd, NULL, PT_FUSED_SDPA_FWD},
    {"float_sdp_backward_fusion", 21.0f, pt_match_sdpa_bwd, NULL, PT_FUSED_SDPA_BWD},
    CHAIN_FUSED(float_bmb, 19.5f, PT_FUSED_COMPUTE_POST_OPS),
    CHAIN_FUSED(x8x8x8_conv_add_post_ops_cpu, 10.6f, PT_FUSED_COMPUTE_POST_OPS),
    CHAIN(x8s8x_conv_reshape_post_ops, 10.6f),
    CHAIN_FUSED(x8s8x_tc_conv_add_post_ops_cpu, 10.6f, PT_FUSED_COMPUTE_POST_OPS),
    CHAIN_FUSED(x8s8x8_convtranspose_add_post_ops_cpu, 10.6f, PT_FUSED_COMPUTE_POST_OPS),
    CHAIN_FUSED(x8x8x_conv_post_ops, 10.5f, PT_FUSED_COMPUTE_POST_OPS),
    CHAIN_FUSED(x8s8x_tc_conv_post_ops, 10.5f, PT_FUSED_COMPUTE_POST_OPS),
    CHAIN_FUSED(x8s8x8_convtranspose_post_ops_cpu, 10.5f, PT_FUSED_COMPUTE_POST_OPS),
    CHAIN_FUSED(x8x8x8_tc_matmul_add_post_ops_cpu, 10.5f, PT_FUSED_COMPUTE_POST_OPS),
    CHAIN(x8x8x8_tc_matmul_reshape_transpose_reshape, 10.5f),
    CHAIN(x8x8x_tc_matmul_transpose_reorder, 10.5f),
    CHAIN_FUSED(fp_convtranspose_post_ops, 10.4f, PT_FUSED_COMPUTE_POST_OPS),
    CHAIN_FUSED(x8x8x_tc_matmul_post_ops, 10.4f, PT_FUSED_COMPUTE_POST_OPS),
    CHAIN(fp_conv_postops_depthwise_postops_cpu, 10.3f),
    CHAIN_FUSED(x8_reorder_sum_cpu, 10.2f, PT_FUSED_CHAIN_POST_OPS),
    CHAIN_FUSED(x8_pool_add_post_ops_cpu, 10.1f, PT_FUSED_CHAIN_POST_OPS),
    CHAIN_FUSED(fp_reorder_sum, 10.1f, PT_FUSED_CHAIN_POST_OPS),
    CHAIN_FUSED(x8_reorder, 10.1f, PT_FUSED_CHAIN_POST_OPS),
    CHAIN_FUSED(x8x8x8_matmul_add_post_ops_cpu, 10.0f, PT_FUSED_COMPUTE_POST_OPS),
    CHAIN(x8x8x8_matmul_reshape_transpose_reshape, 10.0f),
    CHAIN(x8x8x_matmul_transpose_reorder, 10.0f),
    CHAIN(x8_pool_reshape_transpose, 10.0f),
    CHAIN_FUSED(x8_pool_post_ops, 10.0f, PT_FUSED_CHAIN_POST_OPS),
    CHAIN_FUSED(x8x8x_matmul_post_ops, 9.9f, PT_FUSED_COMPUTE_POST_OPS),
    CHAIN_FUSED(fp_pool_post_ops, 9.9f, PT_FUSED_CHAIN_POST_OPS),
    CHAIN_FUSED(fp_conv_post_ops, 9.8f, PT_FUSED_COMPUTE_POST_OPS),
    CHAIN(fp_matmul_transpose_reorder, 9.1f),
    CHAIN_FUSED(s8f32s8_bnorm, 9.0f, PT_FUSED_CHAIN_POST_OPS),
    CHAIN(fp_matmul_reshape_transpose_reshape, 9.0f),
    CHAIN_FUSED(fp_matmul_dropout, 8.9f, PT_FUSED_CHAIN_POST_OPS),
    CHAIN_FUSED(fp_bnorm_relu, 8.8f, PT_FUSED_CHAIN_POST_OPS),
    CHAIN(fp_bnorm_bwd_relu_bwd, 8.8f),
    CHAIN_FUSED(fp_matmul_post_ops, 8.8f, PT_FUSED_COMPUTE_POST_OPS),
    CHAIN_FUSED(fp_interpolate_post_ops, 8.4f, PT_FUSED_CHAIN_POST_OPS),
    CHAIN_FUSED(fp_reduction_post_ops, 8.4f, PT_FUSED_CHAIN_POST_OPS),
    CHAIN_FUSED(groupnorm_post_ops_fusion, 8.4f, PT_FUSED_CHAIN_POST_OPS),
    CHAIN_FUSED(fp_binary_post_ops, 8.3f, PT_FUSED_CHAIN_POST_OPS),
    CHAIN_FUSED(fp_eltwise_dropout, 8.3f, PT_FUSED_CHAIN_POST_OPS),
    CHAIN_FUSED(fp_reciprocal_multiply, 8.2f, PT_FUSED_CHAIN_POST_OPS),
    {"int8_concat_fusion", 8.2f, pt_match_int8_concat_roles, NULL, PT_FUSED_CHAIN_POST_OPS},
    CHAIN_FUSED(fp_eltwise_binary, 8.2f, PT_FUSED_CHAIN_POST_OPS),
    CHAIN_FUSED(fp_softmax_post_ops, 8.2f, PT_FUSED_CHAIN_POST_OPS),
    CHAIN_FUSED(layernorm_post_ops_fusion_cpu, 8.2f, PT_FUSED_CHAIN_POST_OPS),
    CHAIN(shuffle_fusion, 8.2f),
    CHAIN_FUSED(typecast_quantize_fusion, 8.1f, PT_FUSED_CHAIN_POST_OPS),
    CHAIN_FUSED(sum_fusion, 8.1f, PT_FUSED_CHAIN_POST_OPS),
};
const int pt_pattern_row_count = (int)(sizeof pt_pattern_rows / sizeof pt_pattern_rows[0]);
