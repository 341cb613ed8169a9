/* Turning case ops into library objects through the public C API only. */
#ifndef PARTITA_TOOLS_GRAPH_BUILD_H
#define PARTITA_TOOLS_GRAPH_BUILD_H

#include <stddef.h>

#include "oneapi/dnnl/dnnl_graph.h"
#include "case_json.h"

/* Creates a dnnl op for `op` with the given input/output logical tensors
 * (op->in / op->out when NULL) and all its attributes.  Returns the library
 * status; err names the op and the failing call. */
dnnl_status_t pc_build_op(const pc_op *op, const pc_lt *in, const pc_lt *out, dnnl_graph_op_t *res, char *err,
                          size_t cap);

/* Creates a graph (engine kind `ek`, the case's math mode), adds the ops in
 * `order` and finalizes it. */
dnnl_status_t pc_build_graph(const pc_case *c, const size_t *order, dnnl_engine_kind_t ek, dnnl_graph_graph_t *g,
                             char *err, size_t cap);

const char *pc_status_str(dnnl_status_t st);

#endif
