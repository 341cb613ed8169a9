/* The chain-shaped fusion patterns of fusion-patterns.md §5-§14, as data
 * (chain_patterns.c).  Rows in pattern_rows.c point at them. */
#ifndef PARTITA_PARTITION_CHAIN_PATTERNS_H
#define PARTITA_PARTITION_CHAIN_PATTERNS_H

#include "partition/pattern_chain.h"

#define PT_CHAIN_PATTERNS(X)                                                                       \
    X(float_bmb)                                                                                   \
    X(x8x8x8_conv_add_post_ops_cpu)                                                                \
    X(x8s8x_conv_reshape_post_ops)                                                                 \
    X(x8s8x_tc_conv_add_post_ops_cpu)                                                              \
    X(x8s8x8_convtranspose_add_post_ops_cpu)                                                       \
    X(x8x8x_conv_post_ops)                                                                         \
    X(x8s8x_tc_conv_post_ops)                                                                      \
    X(x8s8x8_convtranspose_post_ops_cpu)                                                           \
    X(x8x8x8_tc_matmul_add_post_ops_cpu)                                                           \
    X(x8x8x8_tc_matmul_reshape_transpose_reshape)                                                  \
    X(x8x8x_tc_matmul_transpose_reorder)                                                           \
    X(fp_convtranspose_post_ops)                                                                   \
    X(x8x8x_tc_matmul_post_ops)                                                                    \
    X(fp_conv_postops_depthwise_postops_cpu)                                                       \
    X(x8_reorder_sum_cpu)                                                                          \
    X(x8_pool_add_post_ops_cpu)                                                                    \
    X(fp_reorder_sum)                                                                              \
    X(x8_reorder)                                                                                  \
    X(x8x8x8_matmul_add_post_ops_cpu)                                                              \
    X(x8x8x8_matmul_reshape_transpose_reshape)                                                     \
    X(x8x8x_matmul_transpose_reorder)                                                              \
    X(x8_pool_reshape_transpose)                                                                   \
    X(x8_pool_post_ops)                                                                            \
    X(x8x8x_matmul_post_ops)                                                                       \
    X(fp_pool_post_ops)                                                                            \
    X(fp_conv_post_ops)                                                                            \
    X(fp_matmul_transpose_reorder)                                                                 \
    X(s8f32s8_bnorm)                                                                               \
    X(fp_matmul_reshape_transpose_reshape)                                                         \
    X(fp_matmul_dropout)                                                                           \
    X(fp_bnorm_relu)                                                                               \
    X(fp_bnorm_bwd_relu_bwd)                                                                       \
    X(fp_matmul_post_ops)                                                                          \
    X(fp_interpolate_post_ops)                                                                     \
    X(fp_reduction_post_ops)                                                                       \
    X(groupnorm_post_ops_fusion)                                                                   \
    X(fp_binary_post_ops)                                                                          \
    X(fp_eltwise_dropout)                                                                          \
    X(fp_reciprocal_multiply)                                                                      \
    X(fp_eltwise_binary)                                                                           \
    X(fp_softmax_post_ops)                                                                         \
    X(layernorm_post_ops_fusion_cpu)                                                               \
    X(shuffle_fusion)                                                                              \
    X(typecast_quantize_fusion)                                                                    \
    X(sum_fusion)

#define PT_DECLARE_CHAIN(name) extern const pt_chain_pattern pt_chain_##name;
PT_CHAIN_PATTERNS(PT_DECLARE_CHAIN)
#undef PT_DECLARE_CHAIN

/* int8_concat_fusion (§14): Dequantize(int8) on every input → Concat →
 * Quantize(int8), all with the same scales and zero points.  Concat has a
 * variable number of inputs, so this one is a matcher function. */
int pt_match_int8_concat(const pt_graph *g, const int *group, int first, int *ops_out, int cap);

#endif
