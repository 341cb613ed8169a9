/* Graph functions (docs/api.md). */
#include <stdio.h>
#include <stdlib.h>

#include "oneapi/dnnl/dnnl_graph.h"
#include "ir/graph.h"
#include "ops/graph_add.h"
#include "partition/graph_parts.h"
#include "partition/partition.h"
#include "compile/json_dump.h"
#include "runtime/settings.h"

dnnl_status_t DNNL_API dnnl_graph_graph_create(dnnl_graph_graph_t *graph, dnnl_engine_kind_t engine_kind) {
    if (!graph) return pt_err(dnnl_invalid_arguments, "graph_create: graph is NULL");
    return pt_graph_create(graph, engine_kind, pt_default_fpmath());
}

dnnl_status_t DNNL_API dnnl_graph_graph_create_with_fpmath_mode(dnnl_graph_graph_t *graph,
                                                                dnnl_engine_kind_t engine_kind,
                                                                dnnl_fpmath_mode_t mode) {
    if (!graph) return pt_err(dnnl_invalid_arguments, "graph_create_with_fpmath_mode: graph is NULL");
    if ((int)mode < dnnl_fpmath_mode_strict || (int)mode > dnnl_fpmath_mode_tf32)
        return pt_err(dnnl_invalid_arguments, "graph_create_with_fpmath_mode: invalid mode %d", (int)mode);
    return pt_graph_create(graph, engine_kind, mode);
}

dnnl_status_t DNNL_API dnnl_graph_graph_destroy(dnnl_graph_graph_t graph) {
    pt_graph_release(graph);
    return dnnl_success;
}

dnnl_status_t DNNL_API dnnl_graph_graph_set_fpmath_mode(dnnl_graph_graph_t graph, dnnl_fpmath_mode_t mode,
                                                        int apply_to_int) {
    if (!graph) return pt_err(dnnl_invalid_arguments, "graph_set_fpmath_mode: graph is NULL");
    if ((int)mode < dnnl_fpmath_mode_strict || (int)mode > dnnl_fpmath_mode_tf32)
        return pt_err(dnnl_invalid_arguments, "graph_set_fpmath_mode: invalid mode %d", (int)mode);
    if (graph->finalized) return pt_err(dnnl_invalid_graph, "graph_set_fpmath_mode: graph is finalized");
    graph->fpmath = mode;
    graph->apply_to_int = apply_to_int != 0;
    return dnnl_success;
}

dnnl_status_t DNNL_API dnnl_graph_graph_get_fpmath_mode(dnnl_graph_graph_t graph, dnnl_fpmath_mode_t *mode,
                                                        int *apply_to_int) {
    if (!graph) return pt_err(dnnl_invalid_arguments, "graph_get_fpmath_mode: graph is NULL");
    if (graph->finalized) return pt_err(dnnl_invalid_graph, "graph_get_fpmath_mode: graph is finalized");
    if (mode) *mode = graph->fpmath;
    if (apply_to_int) *apply_to_int = graph->apply_to_int;
    return dnnl_success;
}

dnnl_status_t DNNL_API dnnl_graph_add_op(dnnl_graph_graph_t graph, dnnl_graph_op_t op) {
    if (!graph || !op) return pt_err(dnnl_invalid_arguments, "add_op: NULL argument");
    return pt_graph_add_op(graph, op);
}

dnnl_status_t DNNL_API dnnl_graph_graph_finalize(dnnl_graph_graph_t graph) {
    if (!graph) return pt_err(dnnl_invalid_arguments, "graph_finalize: graph is NULL");
    return pt_graph_finalize(graph);
}

dnnl_status_t DNNL_API dnnl_graph_graph_is_finalized(dnnl_graph_graph_t graph, uint8_t *finalized) {
    if (!graph || !finalized) return pt_err(dnnl_invalid_arguments, "graph_is_finalized: NULL argument");
    *finalized = graph->finalized ? 1 : 0;
    return dnnl_success;
}

static void dump_graph(const pt_graph *g, const char *suffix, const size_t *pids) {
    char path[256];
    snprintf(path, sizeof path, "graph-%zu%s.json", g->id, suffix);
    pt_json_dump_ops(path, (const pt_op *const *)g->ops, g->nops, g->ekind, g->fpmath, g->apply_to_int, pids);
}

dnnl_status_t DNNL_API dnnl_graph_graph_filter(dnnl_graph_graph_t graph, dnnl_graph_partition_policy_t policy) {
    if (!graph) return pt_err(dnnl_invalid_graph, "graph_filter: graph is NULL");
    if (!graph->finalized) return pt_err(dnnl_invalid_graph, "graph_filter: graph %zu is not finalized", graph->id);
    if (policy != dnnl_graph_partition_policy_fusion && policy != dnnl_graph_partition_policy_debug)
        return pt_err(dnnl_invalid_graph, "graph_filter: unknown policy %d", (int)policy);
    if (pt_dump_mode() & dnnl_graph_dump_mode_graph) dump_graph(graph, "", NULL);
    pt_status st = pt_partition_graph(graph, policy);
    if (st != dnnl_success && st != dnnl_out_of_memory) return dnnl_invalid_graph;
    graph->dumped_partitioning = false;
    pt_verbose(2, "info,partition,graph %zu,%zu ops,%zu partitions", graph->id, graph->nops, graph->nparts);
    return st;
}

dnnl_status_t DNNL_API dnnl_graph_graph_get_partition_num(const_dnnl_graph_graph_t graph, size_t *num) {
    if (!graph) return pt_err(dnnl_invalid_graph, "graph_get_partition_num: graph is NULL");
    if (!num) return pt_err(dnnl_invalid_arguments, "graph_get_partition_num: num is NULL");
    *num = graph->nparts;
    return dnnl_success;
}

dnnl_status_t DNNL_API dnnl_graph_graph_get_partitions(dnnl_graph_graph_t graph, size_t num,
                                                       dnnl_graph_partition_t *partitions) {
    if (!graph || !partitions || num == 0)
        return pt_err(dnnl_invalid_graph, "graph_get_partitions: NULL graph/array or num == 0");
    if (num != graph->nparts)
        return pt_err(dnnl_invalid_arguments, "graph_get_partitions: num %zu differs from partition count %zu", num,
                      graph->nparts);
    for (size_t i = 0; i < num; ++i) {
        pt_status st = pt_partition_handle_new(graph->parts[i], &partitions[i]);
        if (st != dnnl_success) {
            for (size_t j = 0; j < i; ++j) {
                dnnl_graph_partition_destroy(partitions[j]);
                partitions[j] = NULL;
            }
            return st;
        }
    }
    if ((pt_dump_mode() & dnnl_graph_dump_mode_graph) && !graph->dumped_partitioning) {
        size_t *pids = malloc((graph->nops ? graph->nops : 1) * sizeof(size_t));
        if (pids) {
            for (size_t i = 0; i < graph->nops; ++i) {
                pids[i] = 0;
                for (size_t p = 0; p < graph->nparts; ++p)
                    for (size_t k = 0; k < graph->parts[p]->nops; ++k)
                        if (graph->parts[p]->ops[k]->id == graph->ops[i]->id) pids[i] = graph->parts[p]->id;
            }
            dump_graph(graph, "-partitioning", pids);
            free(pids);
        }
        graph->dumped_partitioning = true;
    }
    return dnnl_success;
}
