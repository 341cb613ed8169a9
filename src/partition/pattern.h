/* Fusion pattern matcher: patterns are registry rows; matching assigns
 * groups of ops to fused partitions (fusion-patterns.md). */
#ifndef PARTITA_PARTITION_PATTERN_H
#define PARTITA_PARTITION_PATTERN_H

#include "ir/graph.h"

/* Runs every fusion pass by priority over the finalized graph `g`.  For each
 * match, sets group[op] = new group index for the matched ops and
 * names[group] = pattern name; unmatched ops keep group -1.  *ngroups is the
 * number of groups created. */
pt_status pt_match_patterns(const pt_graph *g, int *group, const char **names, int *ngroups);

#endif
