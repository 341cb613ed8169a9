/* The fusion pattern registry: one row per pass. */
#ifndef PARTITA_PARTITION_PATTERN_ROWS_H
#define PARTITA_PARTITION_PATTERN_ROWS_H

#include "ir/graph.h"
#include "kernels/kernel.h"
#include "partition/pattern_chain.h"

typedef struct pt_pattern_row {
    const char *name;
    float priority; /* the driver runs rows from the highest priority down; ties in table order */
    /* Tries `first` as the first op of the pattern.  Writes the matched op
     * indices to ops_out (at most cap) and returns their count, or 0 when the
     * pattern does not match there.  Ops already grouped (group[i] >= 0) must
     * not be used. */
    int (*match)(const pt_graph *g, const int *group, int first, int *ops_out, int cap);
    /* Optional fused kernel.  Called at compile time with the partition's ops
     * (concrete logical tensors, execution order) and compiled ports; returns
     * dnnl_success and fills *fused when it can run these shapes.  Any other
     * status makes the partition run op by op through reference kernels. */
    pt_status (*prepare)(const pt_op *const *ops, size_t nops, const pt_lt *in, size_t nin,
                         const pt_lt *out, size_t nout, pt_fused *fused);
    /* A row whose pattern is data: used when `match` is NULL. */
    const pt_chain_pattern *chain;
} pt_pattern_row;

extern const pt_pattern_row pt_pattern_rows[];
extern const int pt_pattern_row_count;

/* The single consumer of output `port` of op `op`, or -1 when the tensor has
 * zero or several consumers. */
int pt_pattern_sole_consumer(const pt_graph *g, int op, int port);

#endif
