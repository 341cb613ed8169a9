/* Building partitions from a grouping of ops: ports, supported flag and a
 * topological order of the partitions. */
#include "partition/partition.h"

#include <stdlib.h>
#include <string.h>

#include "ops/op_schema.h"
#include "partition/graph_parts.h"
#include "partition/pattern.h"
#include "partition/pattern_rows.h"

static size_t next_partition_id = 1;

void pt_partition_impl_retain(pt_partition_impl *p) {
    if (p) __atomic_add_fetch(&p->refcount, 1, __ATOMIC_ACQ_REL);
}

void pt_partition_impl_release(pt_partition_impl *p) {
    if (!p || __atomic_sub_fetch(&p->refcount, 1, __ATOMIC_ACQ_REL) != 0) return;
    for (size_t i = 0; i < p->nops; ++i) pt_op_free(p->ops[i]);
    free(p->ops);
    free(p->roles);
    free(p->inputs);
    free(p->outputs);
    free(p);
}

pt_status pt_partition_handle_new(pt_partition_impl *impl, struct dnnl_graph_partition **out) {
    struct dnnl_graph_partition *h = calloc(1, sizeof *h);
    if (!h) return dnnl_out_of_memory;
    pt_partition_impl_retain(impl);
    h->impl = impl;
    *out = h;
    return dnnl_success;
}

void pt_partition_fpmath(const struct dnnl_graph_partition *p, dnnl_fpmath_mode_t *mode,
                         int *apply_to_int) {
    *mode = p->own_fpmath ? p->fpmath : p->impl->fpmath;
    *apply_to_int = p->own_fpmath ? p->apply_to_int : p->impl->apply_to_int;
}

bool pt_op_supported_alone(const pt_op *op) {
    return pt_op_kind_has_ref(op->kind) && pt_schema_supported(op);
}

static pt_status push_port(pt_lt **arr, size_t *n, const pt_lt *lt) {
    pt_lt *na = realloc(*arr, (*n + 1) * sizeof(pt_lt));
    if (!na) return dnnl_out_of_memory;
    *arr = na;
    na[(*n)++] = *lt;
    return dnnl_success;
}

/* Builds one partition from the ops with group[op] == gid (in topological order). */
static pt_status build_one(const pt_graph *g, const int *group, const int *roles, int gid,
                           const pt_pattern_row *row, pt_partition_impl **out) {
    pt_partition_impl *p = calloc(1, sizeof *p);
    if (!p) return dnnl_out_of_memory;
    p->refcount = 1;
    p->id = __atomic_fetch_add(&next_partition_id, 1, __ATOMIC_RELAXED);
    p->ekind = g->ekind;
    p->fpmath = g->fpmath;
    p->apply_to_int = g->apply_to_int;
    p->row = row;
    pt_status st = dnnl_success;
    size_t count = 0;
    for (size_t i = 0; i < g->nops; ++i)
        if (group[i] == gid) ++count;
    p->ops = calloc(count ? count : 1, sizeof(pt_op *));
    p->roles = calloc(count ? count : 1, sizeof(int));
    if (!p->ops || !p->roles) st = dnnl_out_of_memory;
    for (size_t t = 0; t < g->nops && st == dnnl_success; ++t) {
        int i = g->topo[t];
        if (group[i] != gid) continue;
        pt_op *copy = pt_op_clone(g->ops[i]);
        if (!copy) {
            st = dnnl_out_of_memory;
            break;
        }
        p->roles[p->nops] = roles[i];
        p->ops[p->nops++] = copy;
        for (size_t k = 0; k < copy->nin && st == dnnl_success; ++k) {
            const pt_tensor_info *ti = &g->tensors[pt_graph_tensor_index(g, copy->in[k].id)];
            if (ti->producer < 0 || group[ti->producer] != gid)
                st = push_port(&p->inputs, &p->nin, &ti->lt);
        }
        for (size_t k = 0; k < copy->nout && st == dnnl_success; ++k) {
            const pt_tensor_info *ti = &g->tensors[pt_graph_tensor_index(g, copy->out[k].id)];
            bool leaves = ti->nconsumers == 0;
            for (int c = 0; c < ti->nconsumers; ++c)
                if (group[ti->consumers[c]] != gid ||
                    g->ops[ti->consumers[c]]->kind == dnnl_graph_op_end)
                    leaves = true;
            if (leaves) st = push_port(&p->outputs, &p->nout, &ti->lt);
        }
    }
    if (st == dnnl_success) {
        p->supported = true;
        if (row == NULL)
            p->supported = p->nops == 1 && pt_op_supported_alone(p->ops[0]);
    }
    if (st != dnnl_success) {
        pt_partition_impl_release(p);
        return st;
    }
    *out = p;
    return dnnl_success;
}

pt_status pt_partition_graph(pt_graph *g, dnnl_graph_partition_policy_t policy) {
    pt_graph_clear_partitions(g);
    size_t n = g->nops;
    int *group = malloc((n ? n : 1) * sizeof(int));
    int *roles = calloc(n ? n : 1, sizeof(int));
    const pt_pattern_row **names = calloc(n ? n : 1, sizeof(*names));
    if (!group || !roles || !names) {
        free(group);
        free(roles);
        free(names);
        return dnnl_out_of_memory;
    }
    for (size_t i = 0; i < n; ++i) group[i] = -1;
    int ngroups = 0;
    pt_status st = dnnl_success;
    if (policy == dnnl_graph_partition_policy_fusion) st = pt_match_patterns(g, group, roles, names, &ngroups);
    /* Leftovers: one partition per op. */
    for (size_t i = 0; i < n && st == dnnl_success; ++i)
        if (group[i] < 0) group[i] = ngroups++;

    /* Topological order of the partition graph; among ready partitions the
     * one whose last op comes first in the op order goes first (the
     * reference's order whenever that order is already valid). */
    int ng = ngroups ? ngroups : 1;
    int *last_pos = malloc((size_t)ng * sizeof(int));
    int *order = malloc((size_t)ng * sizeof(int));
    int *pending = calloc((size_t)ng, sizeof(int));
    bool *placed = calloc((size_t)ng, sizeof(bool));
    g->parts = calloc((size_t)ng, sizeof(pt_partition_impl *));
    if (!last_pos || !order || !pending || !placed || !g->parts) st = dnnl_out_of_memory;
    if (st == dnnl_success) {
        for (size_t t = 0; t < n; ++t) last_pos[group[g->topo[t]]] = (int)t;
        for (size_t i = 0; i < n; ++i)
            for (size_t k = 0; k < g->ops[i]->nin; ++k) {
                const pt_tensor_info *ti = &g->tensors[pt_graph_tensor_index(g, g->ops[i]->in[k].id)];
                if (ti->producer >= 0 && group[ti->producer] != group[i]) ++pending[group[i]];
            }
        for (int k = 0; k < ngroups; ++k) {
            int pick = -1;
            for (int c = 0; c < ngroups; ++c)
                if (!placed[c] && pending[c] == 0 && (pick < 0 || last_pos[c] < last_pos[pick])) pick = c;
            if (pick < 0) {
                st = pt_err(dnnl_invalid_graph, "partitioning produced a dependence cycle");
                break;
            }
            placed[pick] = true;
            order[k] = pick;
            for (size_t i = 0; i < n; ++i)
                for (size_t q = 0; q < g->ops[i]->nin; ++q) {
                    const pt_tensor_info *ti = &g->tensors[pt_graph_tensor_index(g, g->ops[i]->in[q].id)];
                    if (ti->producer >= 0 && group[ti->producer] == pick && group[i] != pick) --pending[group[i]];
                }
        }
        for (int k = 0; k < ngroups && st == dnnl_success; ++k) {
            st = build_one(g, group, roles, order[k], names[order[k]], &g->parts[k]);
            if (st == dnnl_success) g->nparts = (size_t)k + 1;
        }
    }
    free(pending);
    free(placed);
    free(last_pos);
    free(order);
    free(group);
    free(roles);
    free(names);
    if (st != dnnl_success) pt_graph_clear_partitions(g);
    return st;
}
