/* Adding an op to a graph: the graph's own checks, then the op's schema. */
#ifndef PARTITA_OPS_GRAPH_ADD_H
#define PARTITA_OPS_GRAPH_ADD_H

#include "ir/graph.h"

/* Verifies a copy of `op` against its schema (filling attribute defaults) and
 * appends it to `g`.  dnnl_invalid_graph for a finalized graph or a repeated
 * op id, dnnl_invalid_graph_op when the op fails its schema. */
pt_status pt_graph_add_op(pt_graph *g, const pt_op *op);

#endif
