/* The matcher helper kit (see match.h). */
#include "partition/match.h"

#include "ops/op_schema.h"

const pt_tensor_info *pt_match_tensor(const pt_graph *g, size_t id) {
    int ti = pt_graph_tensor_index(g, id);
    return ti < 0 ? NULL : &g->tensors[ti];
}

int pt_match_producer(const pt_graph *g, size_t id) {
    const pt_tensor_info *t = pt_match_tensor(g, id);
    return t ? t->producer : -1;
}

int pt_match_sole_consumer(const pt_graph *g, int op, int port) {
    const pt_op *o = g->ops[op];
    if ((size_t)port >= o->nout) return -1;
    const pt_tensor_info *t = pt_match_tensor(g, o->out[port].id);
    if (!t || t->nconsumers != 1) return -1;
    return t->consumers[0];
}

bool pt_match_has(const pt_match *m, int op) {
    for (int i = 0; i < m->n; ++i)
        if (m->ops[i] == op) return true;
    return false;
}

bool pt_match_is_free(const pt_match *m, int op) {
    return op >= 0 && m->group[op] < 0 && !pt_match_has(m, op);
}

bool pt_match_take(pt_match *m, int op, int role) {
    if (m->n >= m->cap) return false;
    m->ops[m->n] = op;
    m->roles[m->n] = role;
    ++m->n;
    return true;
}

int pt_match_role_of(const pt_match *m, int op) {
    for (int i = 0; i < m->n; ++i)
        if (m->ops[i] == op) return m->roles[i];
    return PT_ROLE_NONE;
}

bool pt_match_is_unary(int kind) {
    return pt_op_is_unary_eltwise(kind) && kind != dnnl_graph_op_pow && kind != dnnl_graph_op_reciprocal;
}

bool pt_match_is_binary(int kind) {
    return pt_op_is_binary_eltwise(kind) && kind != dnnl_graph_op_squared_difference &&
           kind != dnnl_graph_op_greater_equal;
}
