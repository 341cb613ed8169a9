/* The fusion pattern registry: one row per pass.  Adding a pattern:
 * docs/adding-a-pattern.md. */
#ifndef PARTITA_PARTITION_PATTERN_ROWS_H
#define PARTITA_PARTITION_PATTERN_ROWS_H

#include "ir/graph.h"
#include "partition/match.h"
#include "partition/pattern_chain.h"

/* Which fused kernel runs a row's partitions.  The partition layer only
 * names it; compile/fused_lowering.c maps each family to the function that
 * lowers the matched ops (with their roles) into that kernel's parameters. */
typedef enum {
    PT_FUSED_NONE = 0,         /* op by op through the reference kernels */
    PT_FUSED_SDPA_FWD,         /* streaming attention forward */
    PT_FUSED_SDPA_BWD,         /* attention training backward */
    PT_FUSED_GATED_MLP,        /* gate/up/down MLP */
    PT_FUSED_COMPUTE_POST_OPS, /* MatMul / Convolution / ConvTranspose + epilogue */
    PT_FUSED_CHAIN_POST_OPS,   /* non-compute anchor + element-wise chain */
    PT_FUSED_COUNT
} pt_fused_family;

typedef struct pt_pattern_row {
    const char *name;
    float priority; /* the driver runs rows from the highest priority down; ties in table order */
    /* Matcher function; NULL for a row whose pattern is data (`chain`). */
    pt_match_fn match;
    const pt_chain_pattern *chain;
    /* Fused kernel family; PT_FUSED_NONE runs op by op.  A kernel that
     * declines the shapes at compile time also falls back to op by op. */
    pt_fused_family fused;
} pt_pattern_row;

/* The registry: the matcher-function rows of pattern_rows.c and the chain
 * rows of chain_patterns.c, in the order the driver runs them (priority from
 * the highest down; ties: matcher-function rows first, then table order). */
int pt_pattern_row_count(void);
const pt_pattern_row *pt_pattern_row_at(int i); /* NULL when out of range */

#endif
