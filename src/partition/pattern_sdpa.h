/* Scaled dot-product attention forward (fusion-patterns.md §3.1-§3.8): the
 * matchers (pattern_sdpa.c) and the fused kernel's compile-time preparation
 * (kernels/fused/sdpa_prepare.c, sdpa_run.c). */
#ifndef PARTITA_PARTITION_PATTERN_SDPA_H
#define PARTITA_PARTITION_PATTERN_SDPA_H

#include "ir/graph.h"
#include "kernels/kernel.h"

/* Every matcher tries MatMul `first` as the Q·K MatMul of an SDPA forward
 * block and returns the number of matched ops written to ops_out, or 0.
 *
 * float_sdp_fusion (21.0):
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
 * each). */
int pt_match_sdpa_fwd(const pt_graph *g, const int *group, int first, int *ops_out, int cap);

/* x8_sdpa_fusion (§3.6, 22.0): Dequantize(Q), Dequantize(K) → MatMul →
 * Scale? → ExplicitMask? → PadSelect? → SoftMax → Quantize → Dequantize →
 * MatMul(·, Dequantize(V)) → OutReorder? → Quantize; every quantized tensor
 * of one type (u8, s8, f8_e4m3 or f8_e5m2). */
int pt_match_x8_sdpa(const pt_graph *g, const int *group, int first, int *ops_out, int cap);

/* int8_bf16_sdp_fusion (§3.7, 22.0): Q / K / V through Dequantize →
 * TypeCast(bf16); SoftMax → TypeCast(f32) → Quantize → Dequantize →
 * TypeCast(bf16) → MatMul → StaticTranspose → (Reorder | StaticReshape) →
 * TypeCast(f32) → Quantize. */
int pt_match_int8_bf16_sdpa(const pt_graph *g, const int *group, int first, int *ops_out, int cap);

/* int8_fp32_gpt_sdp / int8_bf16_gpt_sdp (§3.3, 22.0): Q / K / V through
 * Dequantize (→ TypeCast(bf16)); MatMul →[1] Select → Divide → Add →
 * SoftMax → TypeCast{0..2} → Quantize → Dequantize (→ TypeCast) → MatMul →
 * StaticTranspose → (Reorder | StaticReshape) → (TypeCast? → Quantize)?. */
int pt_match_int8_fp32_gpt_sdpa(const pt_graph *g, const int *group, int first, int *ops_out, int cap);
int pt_match_int8_bf16_gpt_sdpa(const pt_graph *g, const int *group, int first, int *ops_out, int cap);

/* sdp_with_compressed_{kv,v,k}_fusion (§3.8, 22.0): K and / or V through
 * DynamicDequantize (u8 / s8 / u4 / s4 data, float scales, optional zero
 * points); MatMul → Scale? → CausalMask? → ExplicitMask? → PadSelect? →
 * SoftMax →[0] MatMul; nothing after the second MatMul. */
int pt_match_sdpa_compressed_kv(const pt_graph *g, const int *group, int first, int *ops_out, int cap);
int pt_match_sdpa_compressed_v(const pt_graph *g, const int *group, int first, int *ops_out, int cap);
int pt_match_sdpa_compressed_k(const pt_graph *g, const int *group, int first, int *ops_out, int cap);

/* Builds the streaming fused kernel for a partition matched by any of the
 * matchers above.  dnnl_unimplemented for forms it does not compute
 * (unexpected shapes or layouts, per-channel quantization of P or of the
 * output), so the partition then runs op by op. */
pt_status pt_prepare_sdpa_fwd(const pt_op *const *ops, size_t nops, const pt_lt *in, size_t nin,
                              const pt_lt *out, size_t nout, pt_fused *fused);

#endif
