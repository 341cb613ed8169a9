/* Reference computation of one partition (docs/graph-json.md): the ops run
 * one by one, unfused, as single-op partitions with f32 data (the
 * quantization ops keep their real types), plus a few ops computed here. */
#ifndef PARTITA_TOOLS_REFERENCE_H
#define PARTITA_TOOLS_REFERENCE_H

#include <stddef.h>
#include <stdint.h>

#include "oneapi/dnnl/dnnl_graph.h"
#include "fill.h"

/* Dense row-major f32 values of tensors, keyed by tensor id. */
typedef struct {
    size_t id;
    pc_lt lt; /* declared logical tensor */
    float *v;
    int64_t n;
} pc_tval;

typedef struct {
    pc_tval *t;
    size_t n, cap;
} pc_values;

pc_tval *pc_values_find(pc_values *vs, size_t id);
/* Adds (or replaces) an entry with room for lt's elements; NULL on OOM. */
pc_tval *pc_values_put(pc_values *vs, const pc_lt *lt);
void pc_values_free(pc_values *vs);

/* Runs the view's ops in order.  `vals` must hold every partition input;
 * on success it also holds every tensor the ops produce.  Some inputs are
 * rewritten on the way (SDPA backward statistics).  Returns 0, or
 * nonzero with a reason. */
int pc_reference_run(const pc_part_view *pv, pc_values *vals, dnnl_engine_t eng, dnnl_stream_t strm, char *err,
                     size_t cap);

/* Philox-based Dropout as docs/ops.md describes it (exposed for tests). */
void pc_ref_dropout(const float *src, int64_t n, int64_t seed, int64_t offset, float p, float *dst, float *mask);

/* Copies dense values into / out of a strided buffer of lt's type. */
void pc_values_to_buffer(const pc_lt *lt, const float *dense, void *buf);
void pc_values_from_buffer(const pc_lt *lt, const void *buf, float *dense);

#endif
