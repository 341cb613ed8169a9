#include "ir/logical_tensor.h"

#include <stdio.h>
#include <string.h>

#include "ir/dtype.h"

bool pt_lt_shape_known(const pt_lt *lt) {
    if (lt->ndims < 0 || lt->ndims > DNNL_MAX_NDIMS) return false;
    for (int d = 0; d < lt->ndims; ++d)
        if (lt->dims[d] < 0) return false;
    return true;
}

int64_t pt_lt_nelems(const pt_lt *lt) {
    if (!pt_lt_shape_known(lt)) return -1;
    int64_t n = 1;
    for (int d = 0; d < lt->ndims; ++d) n *= lt->dims[d];
    return n;
}

void pt_dense_strides(int ndims, const int64_t *dims, int64_t *strides) {
    int64_t s = 1;
    for (int d = ndims - 1; d >= 0; --d) {
        strides[d] = s;
        s *= dims[d] > 1 ? dims[d] : 1;
    }
}

void pt_lt_make_dense(pt_lt *lt) {
    lt->layout_type = dnnl_graph_layout_type_strided;
    memset(lt->layout.strides, 0, sizeof lt->layout.strides);
    if (lt->ndims > 0) pt_dense_strides(lt->ndims, lt->dims, lt->layout.strides);
}

bool pt_lt_is_dense(const pt_lt *lt) {
    if (lt->layout_type != dnnl_graph_layout_type_strided || !pt_lt_shape_known(lt)) return false;
    int64_t s = 1;
    for (int d = lt->ndims - 1; d >= 0; --d) {
        if (lt->dims[d] != 1 && lt->layout.strides[d] != s) return false;
        s *= lt->dims[d] > 1 ? lt->dims[d] : 1;
    }
    return true;
}

size_t pt_lt_mem_size(const pt_lt *lt) {
    int bits = pt_dt_bits(lt->data_type);
    if (lt->layout_type != dnnl_graph_layout_type_strided &&
        lt->layout_type != dnnl_graph_layout_type_opaque)
        return SIZE_MAX;
    if (lt->ndims == 0) return bits >= 8 ? (size_t)bits / 8 : 1;
    if (!pt_lt_shape_known(lt)) return SIZE_MAX;
    /* Opaque layouts produced by Partita are always dense row-major. */
    int64_t span = 0;
    for (int d = 0; d < lt->ndims; ++d) {
        if (lt->dims[d] == 0) return 0;
    }
    if (lt->layout_type == dnnl_graph_layout_type_opaque) {
        span = pt_lt_nelems(lt);
    } else {
        for (int d = 0; d < lt->ndims; ++d) {
            int64_t st = lt->layout.strides[d];
            if (lt->dims[d] != 1 && st < 0) return SIZE_MAX;
            int64_t e = lt->dims[d] * (lt->dims[d] == 1 ? 1 : st);
            if (e > span) span = e;
        }
    }
    return pt_dt_bytes(lt->data_type, span);
}

bool pt_lt_equal(const pt_lt *a, const pt_lt *b) {
    if (a->id != b->id || a->data_type != b->data_type || a->ndims != b->ndims ||
        a->property != b->property)
        return false;
    for (int d = 0; d < a->ndims; ++d)
        if (a->dims[d] != b->dims[d]) return false;
    if (a->ndims <= 0) return true;
    if (a->layout_type == b->layout_type) {
        if (a->layout_type == dnnl_graph_layout_type_strided) {
            for (int d = 0; d < a->ndims; ++d)
                if (a->layout.strides[d] != b->layout.strides[d]) return false;
            return true;
        }
        if (a->layout_type == dnnl_graph_layout_type_opaque)
            return a->layout.layout_id == b->layout.layout_id;
        return true;
    }
    /* strided vs opaque: Partita's opaque layout is dense row-major. */
    const pt_lt *s = a->layout_type == dnnl_graph_layout_type_strided ? a : b;
    const pt_lt *o = a->layout_type == dnnl_graph_layout_type_opaque ? a : b;
    if (s->layout_type != dnnl_graph_layout_type_strided ||
        o->layout_type != dnnl_graph_layout_type_opaque)
        return false;
    return pt_lt_is_dense(s);
}

void pt_lt_describe(const pt_lt *lt, char *buf, size_t cap) {
    size_t n = (size_t)snprintf(buf, cap, "%s:", pt_dt_name(lt->data_type));
    if (lt->ndims < 0) {
        if (n < cap) snprintf(buf + n, cap - n, "?");
        return;
    }
    for (int d = 0; d < lt->ndims && n < cap; ++d) {
        if (lt->dims[d] == PT_UNKNOWN_DIM)
            n += (size_t)snprintf(buf + n, cap - n, "%s?", d ? "x" : "");
        else
            n += (size_t)snprintf(buf + n, cap - n, "%s%lld", d ? "x" : "", (long long)lt->dims[d]);
    }
}
