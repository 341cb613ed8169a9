/* SDPA / GQA training backward (docs/fusion.md, attention patterns): the
 * matchers of float_sdp_backward_fusion and float_gqa_backward_fusion
 * (pattern_sdpa_bwd.c) and the roles they give the matched ops, which the
 * fused kernel's lowering (compile/lower_sdpa_bwd.c) starts from. */
#ifndef PARTITA_PARTITION_PATTERN_SDPA_BWD_H
#define PARTITA_PARTITION_PATTERN_SDPA_BWD_H

#include "partition/match.h"
#include "partition/pattern_sdpa.h"

/* Role of every op a backward matcher takes that the forward has no role
 * for; the recomputed S = Q·Kᵀ and its scale and masks keep the forward's
 * roles (PT_SDPA_QK, PT_SDPA_SCALE, PT_SDPA_MASK, PT_SDPA_SELECT,
 * PT_SDPA_CAUSAL_*). */
typedef enum {
    PT_SDPA_BWD_SUB_STATS = PT_SDPA_FWD_ROLE_END, /* Subtract(masked scores, softmax stats) */
    PT_SDPA_BWD_EXP,         /* P = Exp(...) */
    /* dV = Pᵀ·dO. */
    PT_SDPA_BWD_P_DROPOUT,   /* Dropout of P on the dV path */
    PT_SDPA_BWD_P_CAST,      /* TypeCast of P on the dV path */
    PT_SDPA_BWD_DV,          /* the dV MatMul */
    PT_SDPA_BWD_DV_REDUCE,   /* GQA: ReduceSum of dV over the repeated heads */
    /* dS = P ⊙ (dP − Dc), scaled. */
    PT_SDPA_BWD_DP,          /* dP = dO·Vᵀ MatMul */
    PT_SDPA_BWD_DP_DROPOUT,  /* Dropout of dP */
    PT_SDPA_BWD_OD_MUL,      /* O ⊙ dO Multiply */
    PT_SDPA_BWD_DC_REDUCE,   /* Dc = ReduceSum(O ⊙ dO) along the head size */
    PT_SDPA_BWD_SUB_DC,      /* Subtract(dP, Dc) */
    PT_SDPA_BWD_DS0,         /* dS0 = Multiply(P, dP − Dc) */
    PT_SDPA_BWD_END,         /* End reading dS0 (the dM output) */
    PT_SDPA_BWD_DS_SCALE,    /* dS = dS0 (× | ÷) factor */
    PT_SDPA_BWD_DS_CAST,     /* TypeCast of dS */
    /* dQ = dS·K, dK = dSᵀ·Q. */
    PT_SDPA_BWD_DQ,          /* the dQ MatMul */
    PT_SDPA_BWD_DK,          /* the dK MatMul */
    PT_SDPA_BWD_DK_REDUCE,   /* GQA: ReduceSum of dK over the repeated heads */
} pt_sdpa_bwd_role;

/* Tries MatMul `first` as the Q·K MatMul of an SDPA backward block
 * (pt_match_fn):
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
 * number of matched ops (the End op included), or 0. */
int pt_match_sdpa_bwd(pt_match *m, int first);
int pt_match_gqa_bwd(pt_match *m, int first);

#endif
