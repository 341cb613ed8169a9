/* The chain-pattern matcher (see pattern_chain.h). */
#include "partition/pattern_chain.h"

#include <stdlib.h>

#include "ops/op_schema.h"

typedef struct {
    const pt_chain_pattern *pat;
    const pt_graph *g;
    pt_match *m; /* matched ops so far, with their roles */
    int *step;   /* spine step of each matched op, -1 for branch ops */
    int *depth;  /* longest path to a sink, computed on first need */
} chain_ctx;

static bool kind_ok(int want, pt_kind_set_fn set, int kind) {
    return want >= 0 ? kind == want : (set && set(kind));
}

static bool usable(const chain_ctx *c, int op) {
    if (!pt_match_is_free(c->m, op) || c->m->n >= c->m->cap) return false;
    int k = c->g->ops[op]->kind;
    return k != dnnl_graph_op_end && k != dnnl_graph_op_wildcard && pt_schema_supported(c->g->ops[op]);
}

/* Producer op of input `port` of `op`, or -1. */
static int producer_of(const pt_graph *g, int op, int port) {
    const pt_op *o = g->ops[op];
    if (port < 0 || (size_t)port >= o->nin) return -1;
    return pt_match_producer(g, o->in[port].id);
}

/* Appends `op` as spine step `si` (-1: a branch op) with `role`. */
static void push(chain_ctx *c, int op, int si, pt_chain_role role) {
    c->step[c->m->n] = si;
    pt_match_take(c->m, op, role);
}

static void compute_depth(chain_ctx *c) {
    const pt_graph *g = c->g;
    c->depth = calloc(g->nops ? g->nops : 1, sizeof(int));
    if (!c->depth) {
        c->m->out_of_memory = true;
        return;
    }
    for (size_t t = g->nops; t-- > 0;) {
        int i = g->topo[t];
        const pt_op *o = g->ops[i];
        int d = 0;
        for (size_t p = 0; p < o->nout; ++p) {
            const pt_tensor_info *ti = pt_match_tensor(g, o->out[p].id);
            for (int k = 0; ti && k < ti->nconsumers; ++k)
                if (c->depth[ti->consumers[k]] + 1 > d) d = c->depth[ti->consumers[k]] + 1;
        }
        c->depth[i] = d;
    }
}

/* Input ports of `op` the running value may enter for this entry rule. */
static int entry_ports(const pt_op *op, pt_entry e, int ports[2]) {
    if (e == PT_ENTRY_1) {
        ports[0] = 1;
        return 1;
    }
    ports[0] = 0;
    if (e != PT_ENTRY_SWAP) return 1;
    switch (op->kind) {
    case dnnl_graph_op_add:
    case dnnl_graph_op_multiply:
    case dnnl_graph_op_maximum:
    case dnnl_graph_op_minimum: ports[1] = 1; return 2;
    case dnnl_graph_op_select: ports[0] = 1; ports[1] = 2; return 2;
    default: return 1;
    }
}

/* Matches links[li..] backwards from input `port` of `op`.  On failure the
 * match length is restored. */
static bool match_links(chain_ctx *c, int op, int port, const pt_link_spec *links, int nlinks, int li) {
    if (li == nlinks) return true;
    const pt_link_spec *l = &links[li];
    int p = producer_of(c->g, op, port);
    int saved = c->m->n;
    if (p >= 0 && usable(c, p) && kind_ok(l->kind, l->set, c->g->ops[p]->kind) &&
        (!l->check || l->check(c->g, p))) {
        push(c, p, -1, l->role);
        if (match_links(c, p, 0, links, nlinks, li + 1)) return true;
        c->m->n = saved;
    }
    return l->optional && match_links(c, op, port, links, nlinks, li + 1);
}

static bool match_branches(chain_ctx *c, const pt_step_spec *s, int op, int entry) {
    for (int b = 0; b < s->nbranches; ++b) {
        const pt_branch_spec *br = &s->branches[b];
        int port = br->port;
        if (port == PT_BRANCH_OTHER) port = entry == 0 ? 1 : 0;
        if (port < 0 || (size_t)port >= c->g->ops[op]->nin) {
            /* An absent input satisfies a branch made only of optional links. */
            for (int l = 0; l < br->nlinks; ++l)
                if (!br->links[l].optional) return false;
            continue;
        }
        if (!match_links(c, op, port, br->links, br->nlinks, 0)) return false;
    }
    return true;
}

/* Closed intermediates: a value that feeds a matched op has no consumer
 * outside the match. */
static bool intermediates_closed(const chain_ctx *c) {
    for (int i = 0; i < c->m->n; ++i) {
        const pt_op *o = c->g->ops[c->m->ops[i]];
        for (size_t p = 0; p < o->nout; ++p) {
            const pt_tensor_info *t = pt_match_tensor(c->g, o->out[p].id);
            if (!t) continue;
            bool inside = false, outside = false;
            for (int k = 0; k < t->nconsumers; ++k) {
                if (pt_match_has(c->m, t->consumers[k]))
                    inside = true;
                else
                    outside = true;
            }
            if (inside && outside) return false;
        }
    }
    return true;
}

static bool match_step(chain_ctx *c, int si, int count, int last);

/* Tries `op` as the next occurrence of step si (entering at `port`). */
static bool try_op(chain_ctx *c, int si, int count, int op, int port) {
    const pt_step_spec *s = &c->pat->steps[si];
    int saved = c->m->n;
    push(c, op, si, s->role);
    if (match_branches(c, s, op, port) && match_step(c, si, count + 1, op)) return true;
    c->m->n = saved;
    return false;
}

static bool op_fits_step(const chain_ctx *c, const pt_step_spec *s, int op) {
    return usable(c, op) && kind_ok(s->kind, s->set, c->g->ops[op]->kind) &&
           (!s->check || s->check(c->g, op));
}

static bool match_step(chain_ctx *c, int si, int count, int last) {
    if (si == c->pat->nsteps)
        return intermediates_closed(c) &&
               (!c->pat->accept || c->pat->accept(c->g, c->m->ops, c->step, c->m->n));
    const pt_step_spec *s = &c->pat->steps[si];
    if (count < s->max && c->g->ops[last]->nout >= 1) {
        const pt_tensor_info *t = pt_match_tensor(c->g, c->g->ops[last]->out[0].id);
        int nc = t ? t->nconsumers : 0;
        /* Candidate consumers, deeper ones first (the longest chain wins). */
        int cand[8], ncand = 0;
        for (int k = 0; k < nc && ncand < 8; ++k) {
            int op = t->consumers[k];
            bool dup = false;
            for (int j = 0; j < ncand; ++j) dup = dup || cand[j] == op;
            if (!dup && op_fits_step(c, s, op)) cand[ncand++] = op;
        }
        if (ncand > 1) {
            if (!c->depth) compute_depth(c);
            for (int a = 0; c->depth && a < ncand; ++a)
                for (int b = a + 1; b < ncand; ++b)
                    if (c->depth[cand[b]] > c->depth[cand[a]]) {
                        int tmp = cand[a];
                        cand[a] = cand[b];
                        cand[b] = tmp;
                    }
        }
        for (int j = 0; j < ncand; ++j) {
            const pt_op *o = c->g->ops[cand[j]];
            int ports[2], np = entry_ports(o, s->entry, ports);
            for (int q = 0; q < np; ++q) {
                if ((size_t)ports[q] >= o->nin || o->in[ports[q]].id != t->id) continue;
                if (try_op(c, si, count, cand[j], ports[q])) return true;
            }
        }
    }
    return count >= s->min && match_step(c, si + 1, 0, last);
}

int pt_chain_match(const pt_chain_pattern *pat, pt_match *m, int first) {
    m->n = 0;
    if (pat->nsteps <= 0 || m->cap <= 0) return 0;
    chain_ctx c = {pat, m->g, m, malloc((size_t)m->cap * sizeof(int)), NULL};
    if (!c.step) {
        m->out_of_memory = true;
        return 0;
    }
    const pt_step_spec *s0 = &pat->steps[0];
    bool ok = false;
    if (op_fits_step(&c, s0, first)) {
        /* The first op has no running value: its branches are matched as given
         * (PT_BRANCH_OTHER means input 1). */
        push(&c, first, 0, s0->role);
        ok = match_branches(&c, s0, first, 0) && match_step(&c, 0, 1, first);
    }
    free(c.depth);
    free(c.step);
    if (!ok) m->n = 0;
    return m->n;
}
