/* Partitions: a set of ops chosen by the library, with input/output ports. */
#ifndef PARTITA_PARTITION_PARTITION_H
#define PARTITA_PARTITION_PARTITION_H

#include <stdbool.h>
#include <stddef.h>

#include "ir/graph.h"

typedef struct pt_partition_impl {
    int refcount; /* atomic: shared by the graph and every handle */
    size_t id;    /* process-wide unique */
    dnnl_engine_kind_t ekind;
    dnnl_fpmath_mode_t fpmath; /* inherited from the graph */
    int apply_to_int;
    pt_op **ops; /* deep copies, in execution order */
    int *roles;  /* roles[i]: the matcher's role for ops[i] (see match.h) */
    size_t nops;
    pt_lt *inputs; /* one entry per (op, input) pair from outside (repeats possible) */
    size_t nin;
    pt_lt *outputs;
    size_t nout;
    bool supported;
    const struct pt_pattern_row *row; /* matched fusion pattern; NULL for a leftover single op */
} pt_partition_impl;

struct dnnl_graph_partition {
    pt_partition_impl *impl;
    bool own_fpmath; /* partition-level math mode set (docs/api.md) */
    dnnl_fpmath_mode_t fpmath;
    int apply_to_int;
};

void pt_partition_impl_retain(pt_partition_impl *p);
void pt_partition_impl_release(pt_partition_impl *p);
/* New handle sharing `impl` (takes a reference). */
pt_status pt_partition_handle_new(pt_partition_impl *impl, struct dnnl_graph_partition **out);
/* Math mode in effect for a partition handle. */
void pt_partition_fpmath(const struct dnnl_graph_partition *p, dnnl_fpmath_mode_t *mode, int *apply_to_int);

/* Runs partitioning on a finalized graph and stores the result in g->parts
 * (topological order). */
pt_status pt_partition_graph(pt_graph *g, dnnl_graph_partition_policy_t policy);

/* True when the library can compile and run `op` on its own. */
bool pt_op_supported_alone(const pt_op *op);

#endif
