/* Helpers shared by the fused-kernel lowerings (see lower_fused.h). */
#include "compile/lower_fused.h"

int pt_lower_port_of(const pt_lt *ports, size_t n, size_t id) {
    for (size_t i = 0; i < n; ++i)
        if (ports[i].id == id) return (int)i;
    return -1;
}

int pt_lower_producer(const pt_op *const *ops, size_t nops, size_t id) {
    for (size_t i = 0; i < nops; ++i)
        for (size_t k = 0; k < ops[i]->nout; ++k)
            if (ops[i]->out[k].id == id) return (int)i;
    return -1;
}

bool pt_lower_lt_known(const pt_lt *lt) {
    if (lt->ndims < 0 || lt->ndims > DNNL_MAX_NDIMS) return false;
    for (int d = 0; d < lt->ndims; ++d)
        if (lt->dims[d] < 0) return false;
    return true;
}

bool pt_lower_same_dims(const pt_lt *a, const pt_lt *b) {
    if (a->ndims != b->ndims || a->ndims < 0) return false;
    for (int d = 0; d < a->ndims; ++d)
        if (a->dims[d] != b->dims[d]) return false;
    return true;
}

void pt_lower_mark_ancestors(const pt_op *const *ops, size_t nops, size_t id, int limit, unsigned bit,
                             unsigned *mark) {
    int p = pt_lower_producer(ops, nops, id);
    if (p < 0 || p >= limit || (mark[p] & bit)) return;
    mark[p] |= bit;
    for (size_t k = 0; k < ops[p]->nin; ++k) pt_lower_mark_ancestors(ops, nops, ops[p]->in[k].id, limit, bit, mark);
}
