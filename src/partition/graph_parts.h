/* The partitions of a graph (g->parts) belong to the partition layer: it
 * creates them (pt_partition_graph) and releases them, so the graph itself
 * (ir/) never needs to know what a partition is. */
#ifndef PARTITA_PARTITION_GRAPH_PARTS_H
#define PARTITA_PARTITION_GRAPH_PARTS_H

#include "ir/graph.h"

/* Releases the graph's references to its partitions (handles the user holds
 * stay valid). */
void pt_graph_clear_partitions(pt_graph *g);
/* Clears the partitions, then destroys the graph. */
void pt_graph_release(pt_graph *g);

#endif
