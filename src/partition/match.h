/* What a matcher hands over, and the helper kit every matcher shares.
 *
 * A match is the list of graph ops a pattern row took, each with a named
 * role (an enum of the row's family: the SDPA roles in pattern_sdpa.h, the
 * gated-MLP roles in pattern_mlp.h, the chain roles in pattern_chain.h).
 * The partition keeps the roles beside its ops, so the compile-time
 * lowering of a fused kernel reads "the Q·Kᵀ MatMul" or "the down
 * projection" instead of walking the ops again. */
#ifndef PARTITA_PARTITION_MATCH_H
#define PARTITA_PARTITION_MATCH_H

#include <stdbool.h>
#include <stddef.h>

#include "ir/graph.h"

/* Role 0 of every family: an op the lowering does not need to name. */
#define PT_ROLE_NONE 0

typedef struct pt_match {
    const pt_graph *g;
    const int *group; /* group[op] >= 0: taken by an earlier match */
    int *ops;         /* matched graph op indices, in match order */
    int *roles;       /* roles[i]: role of ops[i] */
    int n, cap;
    bool out_of_memory; /* a matcher could not allocate: the driver fails with dnnl_out_of_memory */
} pt_match;

/* Matcher of a pattern row: tries graph op `first` as the pattern's first
 * op; on success leaves the match in m (m->n > 0) and returns m->n, else 0
 * (m->n is reset by the driver before each try). */
typedef int (*pt_match_fn)(pt_match *m, int first);

/* Tensor facts of a finalized graph. */
const pt_tensor_info *pt_match_tensor(const pt_graph *g, size_t id);
int pt_match_producer(const pt_graph *g, size_t id); /* op index, -1 for graph inputs */
/* The single consumer of output `port` of op `op`, or -1 when the tensor has
 * zero or several consumers. */
int pt_match_sole_consumer(const pt_graph *g, int op, int port);

/* Match bookkeeping. */
bool pt_match_has(const pt_match *m, int op);
/* Not taken by an earlier match and not already part of this one. */
bool pt_match_is_free(const pt_match *m, int op);
/* Appends `op` with `role`; false when the match is full. */
bool pt_match_take(pt_match *m, int op, int role);
/* Role of graph op `op` in the match (PT_ROLE_NONE when absent). */
int pt_match_role_of(const pt_match *m, int op);

/* The element-wise kind sets fusion patterns name (docs/fusion.md): UNARY is
 * the unary eltwise family without Pow and Reciprocal, BINARY the binary
 * family without SquaredDifference and GreaterEqual. */
bool pt_match_is_unary(int kind);
bool pt_match_is_binary(int kind);

#endif
