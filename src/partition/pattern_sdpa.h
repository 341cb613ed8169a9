/* Scaled dot-product attention forward (docs/fusion.md, attention
 * patterns): the matchers (pattern_sdpa.c) and the roles they give the
 * matched ops.  The fused kernel's lowering (compile/lower_sdpa.c) starts
 * from those roles. */
#ifndef PARTITA_PARTITION_PATTERN_SDPA_H
#define PARTITA_PARTITION_PATTERN_SDPA_H

#include "partition/match.h"

/* Role of every op an SDPA forward matcher takes; the backward matchers
 * reuse the Q·Kᵀ and score-chain roles (QK to CAUSAL_SELECT) for their
 * recomputed forward.  Q, K and V have one
 * group each, in the same order, so PT_SDPA_K_RESHAPE - PT_SDPA_Q_RESHAPE
 * is the offset from a Q role to the matching K role (and twice it to V). */
typedef enum {
    PT_SDPA_NONE = PT_ROLE_NONE,
    PT_SDPA_QK,         /* the Q·Kᵀ MatMul (the anchor) */
    PT_SDPA_Q_RESHAPE,  /* StaticReshape of the outside Q */
    PT_SDPA_Q_DEQ,      /* Dequantize / DynamicDequantize of Q */
    PT_SDPA_Q_CAST,     /* TypeCast(f32 → bf16) after Q's Dequantize */
    PT_SDPA_K_RESHAPE,  /* the same three for K */
    PT_SDPA_K_DEQ,
    PT_SDPA_K_CAST,
    PT_SDPA_V_RESHAPE,  /* and for V (the P·V MatMul's other operand) */
    PT_SDPA_V_DEQ,
    PT_SDPA_V_CAST,
    PT_SDPA_SCALE,      /* Multiply / Divide of the scores by an outside factor */
    PT_SDPA_MASK,       /* Add of an outside (explicit) mask */
    PT_SDPA_SELECT,     /* masked fill: Select with outside condition and fill */
    PT_SDPA_SCORE_RESHAPE, /* StaticReshape of a scale or mask operand */
    PT_SDPA_SOFTCAP,    /* Tanh of the soft-capping block */
    PT_SDPA_CAUSAL_ROW, /* implicit causal mask: GenIndex of the rows */
    PT_SDPA_CAUSAL_COL, /* GenIndex of the columns */
    PT_SDPA_CAUSAL_ADD, /* bottom-right alignment: row index + s_kv */
    PT_SDPA_CAUSAL_SUB, /* ... - s_q */
    PT_SDPA_CAUSAL_GE,  /* GreaterEqual(row side, column side) */
    PT_SDPA_CAUSAL_SELECT, /* Select(condition, scores, fill) */
    PT_SDPA_SOFTMAX,
    PT_SDPA_P_DROPOUT,  /* between SoftMax and the P·V MatMul: Dropout */
    PT_SDPA_P_CAST,     /* TypeCast */
    PT_SDPA_P_QUANT,    /* Quantize of the quantization round trip */
    PT_SDPA_P_DEQUANT,  /* Dequantize of the round trip */
    PT_SDPA_P_TRANSPOSE, /* JAX layout: StaticTranspose of P */
    PT_SDPA_P_REORDER,  /* JAX layout: Reorder after it */
    PT_SDPA_PV,         /* the P·V MatMul */
    PT_SDPA_OUT_RESHAPE, /* after the P·V MatMul: StaticReshape */
    PT_SDPA_OUT_TRANSPOSE, /* StaticTranspose */
    PT_SDPA_OUT_REORDER, /* Reorder */
    PT_SDPA_OUT_CAST,   /* TypeCast */
    PT_SDPA_OUT_QUANT,  /* Quantize of the output */
    PT_SDPA_FWD_ROLE_END /* the backward roles (pattern_sdpa_bwd.h) follow */
} pt_sdpa_role;

/* Every matcher tries MatMul `first` as the Q·K MatMul of an SDPA forward
 * block (pt_match_fn).
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
int pt_match_sdpa_fwd(pt_match *m, int first);

/* x8_sdpa_fusion (22.0): Dequantize(Q), Dequantize(K) → MatMul →
 * Scale? → ExplicitMask? → PadSelect? → SoftMax → Quantize → Dequantize →
 * MatMul(·, Dequantize(V)) → OutReorder? → Quantize; every quantized tensor
 * of one type (u8, s8, f8_e4m3 or f8_e5m2). */
int pt_match_x8_sdpa(pt_match *m, int first);

/* int8_bf16_sdp_fusion (22.0): Q / K / V through Dequantize →
 * TypeCast(bf16); SoftMax → TypeCast(f32) → Quantize → Dequantize →
 * TypeCast(bf16) → MatMul → StaticTranspose → (Reorder | StaticReshape) →
 * TypeCast(f32) → Quantize. */
int pt_match_int8_bf16_sdpa(pt_match *m, int first);

/* int8_fp32_gpt_sdp / int8_bf16_gpt_sdp (22.0): Q / K / V through
 * Dequantize (→ TypeCast(bf16)); MatMul →[1] Select → Divide → Add →
 * SoftMax → TypeCast{0..2} → Quantize → Dequantize (→ TypeCast) → MatMul →
 * StaticTranspose → (Reorder | StaticReshape) → (TypeCast? → Quantize)?. */
int pt_match_int8_fp32_gpt_sdpa(pt_match *m, int first);
int pt_match_int8_bf16_gpt_sdpa(pt_match *m, int first);

/* sdp_with_compressed_{kv,v,k}_fusion (22.0): K and / or V through
 * DynamicDequantize (u8 / s8 / u4 / s4 data, float scales, optional zero
 * points); MatMul → Scale? → CausalMask? → ExplicitMask? → PadSelect? →
 * SoftMax →[0] MatMul; nothing after the second MatMul. */
int pt_match_sdpa_compressed_kv(pt_match *m, int first);
int pt_match_sdpa_compressed_v(pt_match *m, int first);
int pt_match_sdpa_compressed_k(pt_match *m, int first);

/* Implicit causal mask on the value produced by op `cur`, shared by the
 * forward and backward matchers: two GenIndex and a Select read the value;
 * GenIndex_row [→ Add(ext s_kv) →[0] Subtract(ext s_q)] →[0] GreaterEqual,
 * GenIndex_col →[1] GreaterEqual →[0] Select(·, value, fill) (value and
 * fill at inputs 1 / 2 either way).  Takes the ops with the PT_SDPA_CAUSAL_*
 * roles and appends the outside tensors it reads to ext[*next] (capacity
 * cap).  Returns the Select, or -1. */
int pt_sdpa_match_causal(pt_match *m, int cur, size_t *ext, int *next, int cap);

#endif
