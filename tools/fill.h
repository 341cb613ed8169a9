/* Partition views and input data generation (docs/graph-json.md, "Input data"). */
#ifndef PARTITA_TOOLS_FILL_H
#define PARTITA_TOOLS_FILL_H

#include <stdbool.h>
#include <stddef.h>

#include "case_json.h"

/* The ops of one partition, as indices into the case, in topological
 * order, plus what the driver recognizes the partition as. */
typedef struct {
    const pc_case *c;
    size_t *ops;
    size_t n;
    bool sdpa_fwd;  /* MatMul -> ... -> SoftMax -> ... -> MatMul */
    bool sdpa_bwd;  /* attention backward: Subtract -> Exp with several MatMuls */
    bool gated_mlp; /* two MatMuls sharing their activation feeding a third */
} pc_part_view;

/* Sets the recognition flags of a view whose c/ops/n are filled. */
void pc_view_classify(pc_part_view *pv);
bool pc_view_has_op(const pc_part_view *pv, size_t op_index);
/* True when tensor `tid` is produced by an op of the view. */
bool pc_view_produces(const pc_part_view *pv, size_t tid);
/* First op of the view (view order) reading tensor `tid`; -1 if none. */
long pc_view_first_consumer(const pc_part_view *pv, size_t tid, size_t *input_index);
/* True when an op of the view consumes tensor `tid`. */
bool pc_view_consumes(const pc_part_view *pv, size_t tid);

/* Generates deterministic test data for partition input `lt` (dense,
 * row-major, nelems values, each exactly representable in lt's type). */
void pc_fill_input(const pc_part_view *pv, const pc_lt *lt, float *vals);

#endif
