/* Fusion pattern registry and matcher driver.  Each row is one pass with a
 * priority; passes run from the highest priority down, each visiting ops in
 * topological order and trying them as the first op of its pattern.  A row without a fused kernel (or whose kernel
 * declines the shapes at compile time) runs op by op through the plan. */
#include "partition/pattern.h"

#include <stdbool.h>
#include <stdlib.h>

#include "partition/pattern_rows.h"

/* True when `op` may join a partition: not yet taken, and a kind the
 * library runs. */
static bool available(const pt_graph *g, const int *group, int op) {
    if (group[op] >= 0) return false;
    int k = g->ops[op]->kind;
    return k != dnnl_graph_op_end && k != dnnl_graph_op_wildcard;
}

/* Rejects a candidate whose ops would form a cycle with the outside: some op
 * outside the set consumes a value from inside and (transitively) feeds the
 * set.  *oom is set when the check could not allocate. */
static bool creates_cycle(const pt_graph *g, const bool *in_set, bool *oom) {
    size_t n = g->nops;
    bool *reach = calloc(n ? n : 1, sizeof(bool)); /* outside ops reachable from the set */
    if (!reach) {
        *oom = true;
        return true;
    }
    bool found = false;
    for (size_t t = 0; t < n && !found; ++t) {
        int i = g->topo[t];
        const pt_op *op = g->ops[i];
        bool fed = false;
        for (size_t k = 0; k < op->nin; ++k) {
            const pt_tensor_info *ti = &g->tensors[pt_graph_tensor_index(g, op->in[k].id)];
            if (ti->producer < 0) continue;
            if ((in_set[ti->producer] && !in_set[i]) || reach[ti->producer]) fed = true;
        }
        if (in_set[i]) {
            if (fed) found = true; /* path set -> outside -> set */
        } else if (fed) {
            reach[i] = true;
        }
    }
    free(reach);
    return found;
}

pt_status pt_match_patterns(const pt_graph *g, int *group, int *roles, const pt_pattern_row **rows,
                            int *ngroups) {
    size_t n = g->nops;
    int *match = malloc((n ? n : 1) * sizeof(int));
    int *match_roles = malloc((n ? n : 1) * sizeof(int));
    bool *in_set = calloc(n ? n : 1, sizeof(bool));
    if (!match || !match_roles || !in_set) {
        free(match);
        free(match_roles);
        free(in_set);
        return dnnl_out_of_memory;
    }
    /* The registry lists rows in driver order (priority from the highest
     * down, ties in table order). */
    int nrows = pt_pattern_row_count();
    /* A matcher that could not allocate must not quietly leave ops unfused. */
    bool oom = false;
    for (int r = 0; r < nrows && !oom; ++r) {
        const pt_pattern_row *row = pt_pattern_row_at(r);
        for (size_t t = 0; t < n && !oom; ++t) {
            int first = g->topo[t];
            if (!available(g, group, first)) continue;
            pt_match m = {.g = g, .group = group, .ops = match, .roles = match_roles, .n = 0, .cap = (int)n};
            int cnt = row->match ? row->match(&m, first) : pt_chain_match(row->chain, &m, first);
            oom = m.out_of_memory;
            if (cnt <= 0 || oom) continue;
            bool ok = true;
            /* An End op may join only as part of a match (the End op of docs/ops.md): its
             * input becomes an output port, as the SDPA backward dM. */
            for (int m = 0; m < cnt; ++m)
                ok = ok && (available(g, group, match[m]) ||
                            (group[match[m]] < 0 && g->ops[match[m]]->kind == dnnl_graph_op_end));
            if (!ok) continue;
            for (size_t i = 0; i < n; ++i) in_set[i] = false;
            for (int m = 0; m < cnt; ++m) in_set[match[m]] = true;
            if (creates_cycle(g, in_set, &oom)) continue;
            for (int m = 0; m < cnt; ++m) {
                group[match[m]] = *ngroups;
                roles[match[m]] = match_roles[m];
            }
            rows[*ngroups] = row;
            ++*ngroups;
            pt_verbose(2, "info,pattern,hit,%s", row->name);
        }
    }
    free(match);
    free(match_roles);
    free(in_set);
    return oom ? dnnl_out_of_memory : dnnl_success;
}
