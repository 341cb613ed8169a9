/* Gated MLP (fusion-patterns.md §4): the matchers of the four pattern rows
 * (pattern_mlp.c) and the fused kernel's compile-time preparation
 * (kernels/fused/gated_mlp.c). */
#ifndef PARTITA_PARTITION_PATTERN_MLP_H
#define PARTITA_PARTITION_PATTERN_MLP_H

#include "ir/graph.h"
#include "kernels/kernel.h"

/* Each matcher tries MatMul `first` as the down projection of
 *
 *   src →[0] MatMul(·, W_gate) → Act? ─[0]┐
 *                                          BINARY → TypeCast? →[0] MatMul(·, W_down)
 *   src →[0] MatMul(·, W_up) ─────────[1]┘
 *
 * (gate and up swap sides for the commutative kinds).  gated_mlp: Act is
 * absent or one UNARY op; gated_mlp_v1: Act is the swish Multiply(g,
 * Sigmoid(g)).  The quantized rows additionally take, for each weight,
 * W_int, scales, [zps] → DynamicDequantize →[1] MatMul (at least one weight
 * must be compressed so).  Returns the number of matched ops, or 0. */
int pt_match_gated_mlp(const pt_graph *g, const int *group, int first, int *ops_out, int cap);
int pt_match_gated_mlp_v1(const pt_graph *g, const int *group, int first, int *ops_out, int cap);
int pt_match_quantized_gated_mlp(const pt_graph *g, const int *group, int first, int *ops_out, int cap);
int pt_match_quantized_gated_mlp_v1(const pt_graph *g, const int *group, int first, int *ops_out,
                                    int cap);

/* Builds the fused gated-MLP kernel for a partition matched by any of the
 * rows above.  dnnl_unimplemented for forms it does not compute (1-D
 * operands, a transposed hidden operand, shapes that need broadcasting
 * between the gate and up branches), so the partition then runs op by op. */
pt_status pt_prepare_gated_mlp(const pt_op *const *ops, size_t nops, const pt_lt *in, size_t nin,
                               const pt_lt *out, size_t nout, pt_fused *fused);

#endif
