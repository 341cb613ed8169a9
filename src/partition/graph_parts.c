/* See graph_parts.h. */
#include "partition/graph_parts.h"

#include <stdlib.h>

#include "partition/partition.h"

void pt_graph_clear_partitions(pt_graph *g) {
    for (size_t i = 0; i < g->nparts; ++i) pt_partition_impl_release(g->parts[i]);
    free(g->parts);
    g->parts = NULL;
    g->nparts = 0;
}

void pt_graph_release(pt_graph *g) {
    if (!g) return;
    pt_graph_clear_partitions(g);
    pt_graph_destroy(g);
}
