/* Graph dump (ONEDNN_GRAPH_DUMP / dnnl_graph_set_dump_mode): writes ops in
 * the JSON graph format of docs/graph-json.md, replayable by the CLI. */
#ifndef PARTITA_COMPILE_JSON_DUMP_H
#define PARTITA_COMPILE_JSON_DUMP_H

#include <stddef.h>

#include "ir/op.h"

/* Writes `n` ops (in execution order) as one graph to `path`.
 * `partition_ids` (may be NULL) gives each op's partition id; when non-NULL
 * every op also gets the `partition_id` (a string) and `backend` ("dnnl_backend")
 * attributes, as in graph-<gid>-partitioning.json.  input_ports/output_ports
 * are derived from the ops.  Prints the informational
 * line "onednn_graph_verbose,info,serialize graph to a json file <name>".
 * Returns dnnl_runtime_error when the file cannot be written. */
pt_status pt_json_dump_ops(const char *path, const pt_op *const *ops, size_t n,
                           dnnl_engine_kind_t ekind, dnnl_fpmath_mode_t fpmath, int apply_to_int,
                           const size_t *partition_ids);

struct pt_partition_impl;
struct pt_compiled;
/* ONEDNN_GRAPH_DUMP=subgraph: writes the partition's ops with their
 * compile-time shapes as graph-<partition id>-<shape hash>.json. */
void pt_dump_subgraph(const struct pt_partition_impl *p, const struct pt_compiled *c);

#endif
