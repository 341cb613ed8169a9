/* Fusion pattern matcher: patterns are registry rows; matching assigns
 * groups of ops to fused partitions (docs/fusion.md). */
#ifndef PARTITA_PARTITION_PATTERN_H
#define PARTITA_PARTITION_PATTERN_H

#include "ir/graph.h"

/* Runs every fusion pass by priority over the finalized graph `g`.  For each
 * match, sets group[op] = new group index and roles[op] = the op's role for
 * the matched ops, and rows[group] = the matching pattern row; unmatched ops
 * keep group -1.  *ngroups is the number of groups created. */
struct pt_pattern_row;
pt_status pt_match_patterns(const pt_graph *g, int *group, int *roles, const struct pt_pattern_row **rows,
                            int *ngroups);

#endif
