/* SDPA / GQA training backward (fusion-patterns.md §3.9): the matchers of
 * float_sdp_backward_fusion and float_gqa_backward_fusion
 * (pattern_sdpa_bwd.c) and the fused kernel's compile-time preparation
 * (kernels/fused/sdpa_bwd.c). */
#ifndef PARTITA_PARTITION_PATTERN_SDPA_BWD_H
#define PARTITA_PARTITION_PATTERN_SDPA_BWD_H

#include "ir/graph.h"
#include "kernels/kernel.h"

/* Tries MatMul `first` as the Q·K MatMul of an SDPA backward block:
 *   S = MatMul(Q, K) → Scale? → CausalMask? → ExplicitMask? → PadSelect? →
 *   Subtract(·, Stats) → Exp = P;
 *   P → Dropout? → TypeCast? →[0] MatMul(·, dO) = dV;
 *   dP = MatMul(dO, V) → Dropout?;  Dc = ReduceSum(Multiply(O, dO), axes -1);
 *   dS0 = Multiply(P, Subtract(dP, Dc)) [→ End];
 *   dS = (Multiply | Divide)(dS0, ext) → TypeCast? →[0] MatMul(·, K) = dQ,
 *                                                   →[0] MatMul(·, Q) = dK.
 * The same Q, K and dO tensors feed every place named above; f32 Q means no
 * TypeCast, xf16 Q means both TypeCasts.  pt_match_sdpa_bwd is the form
 * without reductions; pt_match_gqa_bwd additionally requires dV and dK to be
 * followed by a ReduceSum over batch axes (the N_rep axis).  Returns the
 * number of matched ops written to ops_out (the End op included), or 0. */
int pt_match_sdpa_bwd(const pt_graph *g, const int *group, int first, int *ops_out, int cap);
int pt_match_gqa_bwd(const pt_graph *g, const int *group, int first, int *ops_out, int cap);

/* Builds the fused backward kernel for a partition matched by either row.
 * dnnl_unimplemented for forms it does not compute (unexpected shapes or
 * layouts), so the partition then runs op by op. */
pt_status pt_prepare_sdpa_bwd(const pt_op *const *ops, size_t nops, const pt_lt *in, size_t nin,
                              const pt_lt *out, size_t nout, pt_fused *fused);

#endif
