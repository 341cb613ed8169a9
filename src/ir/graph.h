/* The graph: deep copies of the user's ops, connected by logical tensor ids. */
#ifndef PARTITA_IR_GRAPH_H
#define PARTITA_IR_GRAPH_H

#include <stdbool.h>
#include <stddef.h>

#include "ir/op.h"

struct pt_partition_impl;

/* Where a tensor id is produced and consumed (built by finalize). */
typedef struct {
    size_t id;
    pt_lt lt;         /* the description every occurrence agrees on */
    int producer;     /* op index, -1 for graph inputs */
    int producer_port;
    int *consumers;   /* op indices (repeats possible) */
    int nconsumers;
} pt_tensor_info;

struct dnnl_graph_graph {
    size_t id;
    dnnl_engine_kind_t ekind;
    dnnl_fpmath_mode_t fpmath;
    int apply_to_int;
    pt_op **ops;
    size_t nops, cap_ops;
    bool finalized;
    /* Built by finalize. */
    int *topo;        /* op indices in a topological order (stable: insertion order first) */
    pt_tensor_info *tensors;
    size_t ntensors;
    /* Result of the last filter, owned by the partition layer
     * (partition/graph_parts.h). */
    struct pt_partition_impl **parts;
    size_t nparts;
    bool dumped_partitioning;
};
typedef struct dnnl_graph_graph pt_graph;

pt_status pt_graph_create(pt_graph **g, dnnl_engine_kind_t ekind, dnnl_fpmath_mode_t mode);
void pt_graph_destroy(pt_graph *g);
/* add_op checks that need no op schema: the graph is not finalized and the
 * op id is new (kind_name is for the message). */
pt_status pt_graph_check_new_op(const pt_graph *g, size_t op_id, const char *kind_name);
/* Appends a verified op; the graph takes ownership on success.  Schema
 * verification is the ops layer's (ops/graph_add.h: pt_graph_add_op). */
pt_status pt_graph_append_op(pt_graph *g, pt_op *copy);
pt_status pt_graph_finalize(pt_graph *g);
/* Index of the tensor info for `id`, or -1. */
int pt_graph_tensor_index(const pt_graph *g, size_t id);

#endif
