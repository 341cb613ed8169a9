/* Op-kind and attribute names of the JSON graph format (docs/graph-json.md)
 * plus the op groups the harness knobs and the comparison rules use.  The
 * names come from the library's own tables (pt_op_kind_name, pt_attr_name);
 * the groups are the runner's. */
#ifndef PARTITA_TOOLS_OP_KINDS_H
#define PARTITA_TOOLS_OP_KINDS_H

#include <stdbool.h>

#include "oneapi/dnnl/dnnl_graph_types.h"

/* Attribute value types as written in the JSON "type" field. */
typedef enum {
    PC_AT_NONE = 0, /* unknown / not one of the six */
    PC_AT_BOOL,
    PC_AT_S64,
    PC_AT_S64S,
    PC_AT_F32,
    PC_AT_F32S,
    PC_AT_STR,
} pc_attr_type;

/* Op groups (bit flags). */
enum {
    PC_K_UNARY = 1u << 0,        /* unary eltwise forward ops (--op-kind=ID:undef) */
    PC_K_BINARY_ARITH = 1u << 1, /* Add BiasAdd Divide Maximum Minimum Multiply Subtract */
    PC_K_BINARY_DRV = 1u << 2,   /* binary-driver kinds (--op-kind) */
    PC_K_ELTWISE_DRV = 1u << 3,  /* eltwise-driver kinds (--op-kind) */
    PC_K_QUANT = 1u << 4,        /* Quantize Dequantize DynamicQuantize DynamicDequantize */
    PC_K_REORDER_DRV = 1u << 5,  /* reorder-based: quant ops, TypeCast, Reorder */
    PC_K_REDUCTION = 1u << 6,
    PC_K_POOL = 1u << 7,
    PC_K_NORM = 1u << 8,
    PC_K_BWD = 1u << 9,          /* eltwise backward ops */
    PC_K_WEIGHTED = 1u << 10,    /* MatMul and the Convolution / ConvTranspose family */
};

/* Kind from its JSON name ("MatMul"); -1 if unknown. */
int pc_kind_from_name(const char *name);
/* JSON name of a kind; "Unknown" otherwise. */
const char *pc_kind_name(int kind);
unsigned pc_kind_flags(int kind);
static inline bool pc_kind_is(int kind, unsigned flag) { return (pc_kind_flags(kind) & flag) != 0; }

/* Attribute id from its JSON name; dnnl_graph_op_attr_undef if unknown. */
int pc_attr_from_name(const char *name);
const char *pc_attr_name(int attr);
/* Value type implied by the attribute id range (docs/api.md). */
pc_attr_type pc_attr_type_of(int attr);
/* JSON "type" string <-> pc_attr_type. */
const char *pc_attr_type_str(pc_attr_type t);
pc_attr_type pc_attr_type_from_str(const char *s);

#endif
