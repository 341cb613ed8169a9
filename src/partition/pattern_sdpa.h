/* Scaled dot-product attention forward (fusion-patterns.md §3.1-§3.4): the
 * matcher (pattern_sdpa.c) and the fused kernel's compile-time preparation
 * (kernels/fused/sdpa.c). */
#ifndef PARTITA_PARTITION_PATTERN_SDPA_H
#define PARTITA_PARTITION_PATTERN_SDPA_H

#include "ir/graph.h"
#include "kernels/kernel.h"

/* Tries MatMul `first` as the Q·K MatMul of an SDPA forward block:
 *   [StaticReshape]? Q, K → MatMul → score chain → SoftMax → Dropout? →
 *   TypeCast{0..2} → MatMul(·, [StaticReshape]? V) → [StaticReshape]? →
 *   [StaticTranspose → (Reorder | StaticReshape)?]?
 * or, JAX layout, … SoftMax → StaticTranspose → Reorder? →[1] MatMul(Vᵀ, ·) …
 * where the score chain is any sequence (at most 16 blocks) of: scale
 * (Multiply | Divide by an outside factor), explicit mask (Add of an outside,
 * optionally reshaped, tensor), masked fill (Select with outside condition and
 * fill), implicit causal mask (GenIndex / [Add → Subtract] / GreaterEqual /
 * Select) and soft-capping Tanh.  Covers float_sdp_fusion, the Gemma form,
 * float_gpt_sdp, float_gqa_fusion and float_sdp_jax_fusion (a superset of
 * each).  Returns the number of matched ops written to ops_out, or 0. */
int pt_match_sdpa_fwd(const pt_graph *g, const int *group, int first, int *ops_out, int cap);

/* Builds the flash-attention style fused kernel for a partition matched by
 * pt_match_sdpa_fwd.  dnnl_unimplemented for forms it does not compute
 * (Dropout, unexpected shapes or layouts), so the partition then runs op by
 * op. */
pt_status pt_prepare_sdpa_fwd(const pt_op *const *ops, size_t nops, const pt_lt *in, size_t nin,
                              const pt_lt *out, size_t nout, pt_fused *fused);

#endif
