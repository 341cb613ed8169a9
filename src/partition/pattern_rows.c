/* The fusion pattern registry (fusion-patterns.md §17): one row per pass.
 * Chain-shaped patterns are data (chain_patterns.c); attention and MLP
 * patterns have matcher functions of their own. */
#include "partition/pattern_rows.h"

#include "kernels/fused/chain_post_ops.h"
#include "kernels/fused/compute_post_ops.h"
#include "partition/chain_patterns.h"
#include "partition/pattern_mlp.h"
#include "partition/pattern_sdpa.h"
#include "partition/pattern_sdpa_bwd.h"

#define CHAIN(name, prio) {#name, (prio), NULL, NULL, &pt_chain_##name}
/* A chain row whose partitions run through a fused kernel. */
#define CHAIN_FUSED(name, prio, prepare) {#name, (prio), NULL, (prepare), &pt_chain_##name}

const pt_pattern_row pt_pattern_rows[] = {
    /* Gated MLP (§4): one fused kernel for the four rows. */
    {"quantized_gated_mlp", 22.1f, pt_match_quantized_gated_mlp, pt_prepare_gated_mlp, NULL},
    {"quantized_gated_mlp_v1", 22.1f, pt_match_quantized_gated_mlp_v1, pt_prepare_gated_mlp, NULL},
    {"gated_mlp_v1", 22.05f, pt_match_gated_mlp_v1, pt_prepare_gated_mlp, NULL},
    /* Quantized and compressed SDPA forward (§3.3, §3.6-§3.8): one streaming fused kernel. */
    {"x8_sdpa_fusion", 22.0f, pt_match_x8_sdpa, pt_prepare_sdpa_fwd, NULL},
    {"int8_bf16_sdp_fusion", 22.0f, pt_match_int8_bf16_sdpa, pt_prepare_sdpa_fwd, NULL},
    {"sdp_with_compressed_kv_fusion", 22.0f, pt_match_sdpa_compressed_kv, pt_prepare_sdpa_fwd, NULL},
    {"sdp_with_compressed_v_fusion", 22.0f, pt_match_sdpa_compressed_v, pt_prepare_sdpa_fwd, NULL},
    {"sdp_with_compressed_k_fusion", 22.0f, pt_match_sdpa_compressed_k, pt_prepare_sdpa_fwd, NULL},
    {"int8_fp32_gpt_sdp", 22.0f, pt_match_int8_fp32_gpt_sdpa, pt_prepare_sdpa_fwd, NULL},
    {"int8_bf16_gpt_sdp", 22.0f, pt_match_int8_bf16_gpt_sdpa, pt_prepare_sdpa_fwd, NULL},
    {"gated_mlp", 22.0f, pt_match_gated_mlp, pt_prepare_gated_mlp, NULL},
    /* SDPA forward: float_sdp_fusion with the Gemma, GPT, GQA and JAX forms folded in (§3.1-§3.5). */
    /* SDPA / GQA training backward (§3.9): one fused kernel for both rows. */
    {"float_gqa_backward_fusion", 21.1f, pt_match_gqa_bwd, pt_prepare_sdpa_bwd, NULL},
    {"float_sdp_fusion", 21.0f, pt_match_sdpa_fwd, pt_prepare_sdpa_fwd, NULL},
    {"float_sdp_backward_fusion", 21.0f, pt_match_sdpa_bwd, pt_prepare_sdpa_bwd, NULL},
    CHAIN_FUSED(float_bmb, 19.5f, pt_prepare_compute_post_ops),
    CHAIN_FUSED(x8x8x8_conv_add_post_ops_cpu, 10.6f, pt_prepare_compute_post_ops),
    CHAIN(x8s8x_conv_reshape_post_ops, 10.6f),
    CHAIN_FUSED(x8s8x_tc_conv_add_post_ops_cpu, 10.6f, pt_prepare_compute_post_ops),
    CHAIN_FUSED(x8s8x8_convtranspose_add_post_ops_cpu, 10.6f, pt_prepare_compute_post_ops),
    CHAIN_FUSED(x8x8x_conv_post_ops, 10.5f, pt_prepare_compute_post_ops),
    CHAIN_FUSED(x8s8x_tc_conv_post_ops, 10.5f, pt_prepare_compute_post_ops),
    CHAIN_FUSED(x8s8x8_convtranspose_post_ops_cpu, 10.5f, pt_prepare_compute_post_ops),
    CHAIN_FUSED(x8x8x8_tc_matmul_add_post_ops_cpu, 10.5f, pt_prepare_compute_post_ops),
    CHAIN(x8x8x8_tc_matmul_reshape_transpose_reshape, 10.5f),
    CHAIN(x8x8x_tc_matmul_transpose_reorder, 10.5f),
    CHAIN_FUSED(fp_convtranspose_post_ops, 10.4f, pt_prepare_compute_post_ops),
    CHAIN_FUSED(x8x8x_tc_matmul_post_ops, 10.4f, pt_prepare_compute_post_ops),
    CHAIN(fp_conv_postops_depthwise_postops_cpu, 10.3f),
    CHAIN_FUSED(x8_reorder_sum_cpu, 10.2f, pt_prepare_chain_post_ops),
    CHAIN_FUSED(x8_pool_add_post_ops_cpu, 10.1f, pt_prepare_chain_post_ops),
    CHAIN_FUSED(fp_reorder_sum, 10.1f, pt_prepare_chain_post_ops),
    CHAIN_FUSED(x8_reorder, 10.1f, pt_prepare_chain_post_ops),
    CHAIN_FUSED(x8x8x8_matmul_add_post_ops_cpu, 10.0f, pt_prepare_compute_post_ops),
    CHAIN(x8x8x8_matmul_reshape_transpose_reshape, 10.0f),
    CHAIN(x8x8x_matmul_transpose_reorder, 10.0f),
    CHAIN(x8_pool_reshape_transpose, 10.0f),
    CHAIN_FUSED(x8_pool_post_ops, 10.0f, pt_prepare_chain_post_ops),
    CHAIN_FUSED(x8x8x_matmul_post_ops, 9.9f, pt_prepare_compute_post_ops),
    CHAIN_FUSED(fp_pool_post_ops, 9.9f, pt_prepare_chain_post_ops),
    CHAIN_FUSED(fp_conv_post_ops, 9.8f, pt_prepare_compute_post_ops),
    CHAIN(fp_matmul_transpose_reorder, 9.1f),
    CHAIN_FUSED(s8f32s8_bnorm, 9.0f, pt_prepare_chain_post_ops),
    CHAIN(fp_matmul_reshape_transpose_reshape, 9.0f),
    CHAIN_FUSED(fp_matmul_dropout, 8.9f, pt_prepare_chain_post_ops),
    CHAIN_FUSED(fp_bnorm_relu, 8.8f, pt_prepare_chain_post_ops),
    CHAIN(fp_bnorm_bwd_relu_bwd, 8.8f),
    CHAIN_FUSED(fp_matmul_post_ops, 8.8f, pt_prepare_compute_post_ops),
    CHAIN_FUSED(fp_interpolate_post_ops, 8.4f, pt_prepare_chain_post_ops),
    CHAIN_FUSED(fp_reduction_post_ops, 8.4f, pt_prepare_chain_post_ops),
    CHAIN_FUSED(groupnorm_post_ops_fusion, 8.4f, pt_prepare_chain_post_ops),
    CHAIN_FUSED(fp_binary_post_ops, 8.3f, pt_prepare_chain_post_ops),
    CHAIN_FUSED(fp_eltwise_dropout, 8.3f, pt_prepare_chain_post_ops),
    CHAIN_FUSED(fp_reciprocal_multiply, 8.2f, pt_prepare_chain_post_ops),
    {"int8_concat_fusion", 8.2f, pt_match_int8_concat, pt_prepare_chain_post_ops, NULL},
    CHAIN_FUSED(fp_eltwise_binary, 8.2f, pt_prepare_chain_post_ops),
    CHAIN_FUSED(fp_softmax_post_ops, 8.2f, pt_prepare_chain_post_ops),
    CHAIN_FUSED(layernorm_post_ops_fusion_cpu, 8.2f, pt_prepare_chain_post_ops),
    CHAIN(shuffle_fusion, 8.2f),
    CHAIN_FUSED(typecast_quantize_fusion, 8.1f, pt_prepare_chain_post_ops),
    CHAIN_FUSED(sum_fusion, 8.1f, pt_prepare_chain_post_ops),
};
const int pt_pattern_row_count = (int)(sizeof pt_pattern_rows / sizeof pt_pattern_rows[0]);
