/* Gated MLP (docs/fusion.md, gated MLP): the matchers of the four pattern
 * rows and the roles they give the matched ops; compile/lower_gated_mlp.c
 * turns a match into the fused kernel's plan (kernels/fused/gated_mlp.h). */
#ifndef PARTITA_PARTITION_PATTERN_MLP_H
#define PARTITA_PARTITION_PATTERN_MLP_H

#include "partition/match.h"

/* Roles of a gated-MLP match (PT_ROLE_NONE is never used). */
typedef enum {
    PT_MLP_DOWN = 1,     /* the down-projection MatMul (the anchor) */
    PT_MLP_HIDDEN_CAST,  /* TypeCast between the combine op and the down MatMul */
    PT_MLP_COMBINE,      /* the BINARY op joining the gate and up branches */
    PT_MLP_UP,           /* the up-projection MatMul */
    PT_MLP_GATE,         /* the gate-projection MatMul */
    PT_MLP_ACT,          /* the UNARY activation after the gate MatMul */
    PT_MLP_SWISH_SIGMOID, /* swish gate: its Sigmoid ... */
    PT_MLP_SWISH_MUL,     /* ... and its Multiply(g, Sigmoid(g)) */
    PT_MLP_GATE_DEQUANT, /* DynamicDequantize of the gate weights */
    PT_MLP_UP_DEQUANT,   /* DynamicDequantize of the up weights */
    PT_MLP_DOWN_DEQUANT, /* DynamicDequantize of the down weights */
} pt_mlp_role;

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
 * must be compressed so). */
int pt_match_gated_mlp(pt_match *m, int first);
int pt_match_gated_mlp_v1(pt_match *m, int first);
int pt_match_quantized_gated_mlp(pt_match *m, int first);
int pt_match_quantized_gated_mlp_v1(pt_match *m, int first);

#endif
