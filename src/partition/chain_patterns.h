/* The chain-shaped fusion pattern rows (chain_patterns.c), one entry each:
 * name, priority, fused-kernel family and the pattern as data.  The registry
 * (pattern_rows.c) runs them with the matcher-function rows. */
#ifndef PARTITA_PARTITION_CHAIN_PATTERNS_H
#define PARTITA_PARTITION_CHAIN_PATTERNS_H

#include "partition/pattern_chain.h"
#include "partition/pattern_rows.h"

/* In driver order: priority from the highest down, ties in table order. */
extern const pt_pattern_row pt_chain_rows[];
extern const int pt_chain_row_count;

/* The pattern of chain row `name`, or NULL (for tests). */
const pt_chain_pattern *pt_chain_pattern_named(const char *name);

/* int8_concat_fusion: Dequantize(int8) on every input → Concat →
 * Quantize(int8), all with the same scales and zero points.  Roles: the
 * Concat is PT_CHAIN_ANCHOR, the Dequantizes PT_CHAIN_CONCAT_IN, the Quantize
 * PT_CHAIN_OUT_QUANT. */
int pt_match_int8_concat(pt_match *m, int first);

#endif
