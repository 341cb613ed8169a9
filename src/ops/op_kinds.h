/* Op kinds: names, families and reference-kernel presence, all read from the
 * one op-kind table (op_table.def). */
#ifndef PARTITA_OPS_OP_KINDS_H
#define PARTITA_OPS_OP_KINDS_H

#include <stdbool.h>

/* What an op kind is, as the planner and the pattern matchers ask it.  The
 * _BWD families are the backward ops of the family before them. */
typedef enum {
    PT_OP_FAM_NONE = -1,     /* not an op kind */
    PT_OP_FAM_INTERNAL,      /* End, Wildcard: bookkeeping, never run */
    PT_OP_FAM_UNARY,         /* unary element-wise template (Abs ... Tanh, Pow) */
    PT_OP_FAM_UNARY_BWD,
    PT_OP_FAM_BINARY,        /* binary element-wise template (Add ... GreaterEqual) */
    PT_OP_FAM_BINARY_OTHER,  /* other element-wise ops of 2+ inputs: Select, BiasAdd, PReLU */
    PT_OP_FAM_BINARY_OTHER_BWD,
    PT_OP_FAM_MATMUL,
    PT_OP_FAM_CONV,          /* Convolution, ConvTranspose */
    PT_OP_FAM_CONV_BWD,
    PT_OP_FAM_POOL,          /* AvgPool, MaxPool */
    PT_OP_FAM_POOL_BWD,
    PT_OP_FAM_INTERP,
    PT_OP_FAM_INTERP_BWD,
    PT_OP_FAM_NORM,          /* batch, layer, group and RMS normalization */
    PT_OP_FAM_NORM_BWD,
    PT_OP_FAM_SOFTMAX,       /* SoftMax, LogSoftmax */
    PT_OP_FAM_SOFTMAX_BWD,
    PT_OP_FAM_REDUCE,
    PT_OP_FAM_QUANT,         /* (Dynamic)(De)Quantize */
    PT_OP_FAM_DATA,          /* data movement and generation: Concat, Reorder, reshapes,
                                TypeCast, GenIndex, Dropout */
} pt_op_family_t;

const char *pt_op_kind_name(int kind);      /* "MatMul"; "Unknown" otherwise */
int pt_op_kind_from_name(const char *name); /* -1 if unknown */

pt_op_family_t pt_op_family(int kind);   /* PT_OP_FAM_NONE for unknown kinds */
bool pt_op_is_unary_eltwise(int kind);   /* family UNARY */
bool pt_op_is_binary_eltwise(int kind);  /* family BINARY */

/* True when the kind has a reference kernel, i.e. ops of this kind can run
 * (false for End, Wildcard and unknown kinds). */
bool pt_op_kind_has_ref(int kind);

#endif
