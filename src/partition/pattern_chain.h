/* Chain patterns as data (the notation of docs/fusion.md).
 *
 * A chain pattern is a spine of steps: the first step is the op the pass
 * starts from, and every later step consumes the running value (output 0 of
 * the previous spine op) at its entry port.  A step may be optional (`X?`),
 * repeated (`X*`, `X+`), restricted to a kind set ((A | B), POST, ...) and to
 * ops that pass a predicate (attributes, data types, constness).  A step may
 * also require producer branches on its other inputs: a short backward chain
 * of ops (nearest producer first, e.g. `Quantize? → Dequantize`) whose far
 * end reads a partition input.
 *
 * Matching is greedy with backtracking: every step takes as many ops as fit,
 * and when a later required step or the final checks fail, earlier
 * repetitions give ops back (so a near-match falls back to a smaller
 * partition).  The final checks are: closed intermediates (no value feeds
 * both a matched op and an outside one),
 * schema support of every op, and the row's own whole-match predicate. */
#ifndef PARTITA_PARTITION_PATTERN_CHAIN_H
#define PARTITA_PARTITION_PATTERN_CHAIN_H

#include <stdbool.h>

#include "ir/graph.h"
#include "partition/match.h"

#define PT_CHAIN_MAX_REPEAT 19 /* repetition cap of X* / X+ */

/* Roles of a chain match: each step and each link names the role its ops
 * take, so the lowering finds the anchor, the operand branches and the
 * epilogue without walking the ops again. */
typedef enum {
    PT_CHAIN_ANCHOR = 1, /* the op the chain is built around (MatMul, pooling, SoftMax...) */
    PT_CHAIN_ANCHOR2,    /* a second compute op (the depthwise convolution) */
    PT_CHAIN_PRE,        /* a spine op before the anchor (the bmb binary chain, its TypeCast) */
    PT_CHAIN_POST,       /* a spine op after the anchor, in match order (BiasAdd, POST, ...) */
    PT_CHAIN_OUT_CAST,   /* the final TypeCast (or the one before the final Quantize) */
    PT_CHAIN_OUT_QUANT,  /* the final Quantize */
    PT_CHAIN_SRC_DEQUANT, /* branch on the anchor's src: Dequantize ... */
    PT_CHAIN_SRC_CAST,    /* ... and its TypeCast */
    PT_CHAIN_WEI_DEQUANT, /* branch on the weights: Dequantize, */
    PT_CHAIN_WEI_QUANT,   /* the Quantize before it, */
    PT_CHAIN_WEI_CAST,    /* the TypeCast after it, */
    PT_CHAIN_WEI_RESHAPE, /* the StaticReshapes around them */
    PT_CHAIN_SUM_DEQUANT, /* branch on the post-sum operand: Dequantize ... */
    PT_CHAIN_SUM_CAST,    /* ... and its TypeCast */
    PT_CHAIN_BIAS_CAST,   /* TypeCast of the bias */
    PT_CHAIN_CONCAT_IN,   /* Dequantize of a Concat input (int8_concat_fusion) */
} pt_chain_role;

typedef bool (*pt_kind_set_fn)(int kind);
typedef bool (*pt_op_check_fn)(const pt_graph *g, int op);

/* Which input of a step op the running value may enter. */
typedef enum {
    PT_ENTRY_0 = 0,    /* input 0 only */
    PT_ENTRY_SWAP = 1, /* input 0, or input 1 for Add/Multiply/Maximum/Minimum, or 1/2 for Select */
    PT_ENTRY_1 = 2,    /* input 1 only */
} pt_entry;

/* One op of a backward producer chain. */
typedef struct {
    int kind;           /* op kind, or -1 to use `set` */
    pt_kind_set_fn set; /* used when kind < 0 */
    bool optional;
    pt_op_check_fn check; /* may be NULL */
    pt_chain_role role;
} pt_link_spec;

#define PT_BRANCH_OTHER (-1) /* the binary input that is not the entry */

/* A producer chain required (or allowed) on one input of a step op. */
typedef struct {
    int port; /* input index, or PT_BRANCH_OTHER */
    const pt_link_spec *links;
    int nlinks;
} pt_branch_spec;

typedef struct {
    int kind;           /* op kind, or -1 to use `set` */
    pt_kind_set_fn set; /* used when kind < 0 */
    unsigned char min, max;
    pt_entry entry;
    pt_op_check_fn check; /* may be NULL */
    const pt_branch_spec *branches;
    int nbranches;
    pt_chain_role role;
} pt_step_spec;

typedef struct {
    const pt_step_spec *steps;
    int nsteps;
    /* Whole-match predicate over the matched ops (spine and branches in match
     * order); step[i] is the spine step ops[i] matched, -1 for branch ops.
     * Expresses grouped optional parts such as `(TypeCast → Quantize)?`.
     * May be NULL. */
    bool (*accept)(const pt_graph *g, const int *ops, const int *step, int n);
} pt_chain_pattern;

/* Matches `pat` with its first step at op `first` into m (see match.h), each
 * op with the role of its step or link; returns the matched op count, 0 on
 * no match. */
int pt_chain_match(const pt_chain_pattern *pat, pt_match *m, int first);

#endif
