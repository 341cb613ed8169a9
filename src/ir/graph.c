/* Graph construction and finalization: connect ops through logical tensor
 * ids, check that every id describes one tensor, find a topological order. */
#include "ir/graph.h"

#include <stdlib.h>
#include <string.h>


static size_t next_graph_id = 1;

pt_status pt_graph_create(pt_graph **out, dnnl_engine_kind_t ekind, dnnl_fpmath_mode_t mode) {
    pt_graph *g = calloc(1, sizeof *g);
    if (!g) return dnnl_out_of_memory;
    g->id = __atomic_fetch_add(&next_graph_id, 1, __ATOMIC_RELAXED);
    g->ekind = ekind;
    g->fpmath = mode;
    *out = g;
    return dnnl_success;
}

static void clear_analysis(pt_graph *g) {
    for (size_t i = 0; i < g->ntensors; ++i) free(g->tensors[i].consumers);
    free(g->tensors);
    free(g->topo);
    g->tensors = NULL;
    g->topo = NULL;
    g->ntensors = 0;
}

void pt_graph_destroy(pt_graph *g) {
    if (!g) return;
    /* The partition layer owns g->parts and has released them already
     * (pt_graph_release, partition/graph_parts.h). */
    free(g->parts);
    clear_analysis(g);
    for (size_t i = 0; i < g->nops; ++i) pt_op_free(g->ops[i]);
    free(g->ops);
    free(g);
}

pt_status pt_graph_check_new_op(const pt_graph *g, size_t op_id, const char *kind_name) {
    if (g->finalized)
        return pt_err(dnnl_invalid_graph, "add_op: graph %zu is already finalized (op %s#%zu)", g->id,
                      kind_name, op_id);
    for (size_t i = 0; i < g->nops; ++i)
        if (g->ops[i]->id == op_id)
            return pt_err(dnnl_invalid_graph, "add_op: op id %zu is already in graph %zu", op_id, g->id);
    return dnnl_success;
}

pt_status pt_graph_append_op(pt_graph *g, pt_op *copy) {
    if (g->nops == g->cap_ops) {
        size_t nc = g->cap_ops ? g->cap_ops * 2 : 16;
        pt_op **na = realloc(g->ops, nc * sizeof *na);
        if (!na) return dnnl_out_of_memory;
        g->ops = na;
        g->cap_ops = nc;
    }
    g->ops[g->nops++] = copy;
    return dnnl_success;
}

static int cmp_tensor_id(const void *a, const void *b) {
    size_t x = ((const pt_tensor_info *)a)->id, y = ((const pt_tensor_info *)b)->id;
    return x < y ? -1 : x > y;
}

int pt_graph_tensor_index(const pt_graph *g, size_t id) {
    size_t lo = 0, hi = g->ntensors;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (g->tensors[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < g->ntensors && g->tensors[lo].id == id ? (int)lo : -1;
}

/* Collects every distinct tensor id with one representative description. */
static pt_status collect_tensors(pt_graph *g) {
    size_t total = 0;
    for (size_t i = 0; i < g->nops; ++i) total += g->ops[i]->nin + g->ops[i]->nout;
    pt_tensor_info *t = calloc(total ? total : 1, sizeof *t);
    if (!t) return dnnl_out_of_memory;
    size_t n = 0;
    for (size_t i = 0; i < g->nops; ++i) {
        const pt_op *op = g->ops[i];
        for (size_t k = 0; k < op->nin + op->nout; ++k) {
            const pt_lt *lt = k < op->nin ? &op->in[k] : &op->out[k - op->nin];
            t[n].id = lt->id;
            t[n].lt = *lt;
            t[n].producer = -1;
            ++n;
        }
    }
    qsort(t, n, sizeof *t, cmp_tensor_id);
    size_t u = 0;
    for (size_t i = 0; i < n; ++i)
        if (u == 0 || t[u - 1].id != t[i].id) t[u++] = t[i];
    g->tensors = t;
    g->ntensors = u;
    return dnnl_success;
}

static pt_status add_consumer(pt_tensor_info *ti, int op) {
    int *nc = realloc(ti->consumers, (size_t)(ti->nconsumers + 1) * sizeof(int));
    if (!nc) return dnnl_out_of_memory;
    ti->consumers = nc;
    ti->consumers[ti->nconsumers++] = op;
    return dnnl_success;
}

static pt_status connect(pt_graph *g) {
    for (size_t i = 0; i < g->nops; ++i) {
        const pt_op *op = g->ops[i];
        for (size_t k = 0; k < op->nin + op->nout; ++k) {
            bool is_in = k < op->nin;
            const pt_lt *lt = is_in ? &op->in[k] : &op->out[k - op->nin];
            pt_tensor_info *ti = &g->tensors[pt_graph_tensor_index(g, lt->id)];
            if (!pt_lt_equal(lt, &ti->lt)) {
                char a[128], b[128];
                pt_lt_describe(lt, a, sizeof a);
                pt_lt_describe(&ti->lt, b, sizeof b);
                return pt_err(dnnl_invalid_graph,
                              "finalize: logical tensor %zu is described differently by op #%zu "
                              "('%s') (%s) and elsewhere (%s)",
                              lt->id, op->id, op->name ? op->name : "", a, b);
            }
            if (is_in) {
                PT_CHECK(add_consumer(ti, (int)i));
            } else {
                if (ti->producer >= 0)
                    return pt_err(dnnl_invalid_graph,
                                  "finalize: logical tensor %zu has two producers (ops #%zu and #%zu)",
                                  lt->id, g->ops[ti->producer]->id, op->id);
                ti->producer = (int)i;
                ti->producer_port = (int)(k - op->nin);
            }
        }
    }
    return dnnl_success;
}

/* Kahn's algorithm; among ready ops the one added first goes first, so a
 * graph given in execution order keeps that order. */
static pt_status topo_sort(pt_graph *g) {
    size_t n = g->nops;
    int *pending = calloc(n ? n : 1, sizeof(int));
    g->topo = malloc((n ? n : 1) * sizeof(int));
    if (!pending || !g->topo) {
        free(pending);
        return dnnl_out_of_memory;
    }
    for (size_t i = 0; i < n; ++i) {
        const pt_op *op = g->ops[i];
        for (size_t k = 0; k < op->nin; ++k) {
            const pt_tensor_info *ti = &g->tensors[pt_graph_tensor_index(g, op->in[k].id)];
            if (ti->producer >= 0) ++pending[i];
        }
    }
    bool *done = calloc(n ? n : 1, sizeof(bool));
    if (!done) {
        free(pending);
        return dnnl_out_of_memory;
    }
    size_t placed = 0;
    while (placed < n) {
        size_t pick = n;
        for (size_t i = 0; i < n; ++i)
            if (!done[i] && pending[i] == 0) {
                pick = i;
                break;
            }
        if (pick == n) break; /* every remaining op waits on another: a cycle */
        done[pick] = true;
        g->topo[placed++] = (int)pick;
        const pt_op *op = g->ops[pick];
        for (size_t k = 0; k < op->nout; ++k) {
            const pt_tensor_info *ti = &g->tensors[pt_graph_tensor_index(g, op->out[k].id)];
            for (int c = 0; c < ti->nconsumers; ++c) --pending[ti->consumers[c]];
        }
    }
    free(pending);
    free(done);
    if (placed < n) return pt_err(dnnl_invalid_graph, "finalize: graph %zu contains a cycle", g->id);
    return dnnl_success;
}

pt_status pt_graph_finalize(pt_graph *g) {
    if (g->finalized) return dnnl_success;
    clear_analysis(g);
    pt_status st = collect_tensors(g);
    if (st == dnnl_success) st = connect(g);
    if (st == dnnl_success) st = topo_sort(g);
    if (st != dnnl_success) {
        clear_analysis(g);
        return st;
    }
    g->finalized = true;
    return dnnl_success;
}
