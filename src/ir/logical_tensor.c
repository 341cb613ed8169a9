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
    for (int d = 0; d < lt->ndims; ++d)
        if (lt->dims[d] == 0) return 0;
    for (int d = 0; d < lt->ndims; ++d)
        if (__builtin_mul_overflow(n, lt->dims[d], &n)) return -1;
    return n;
}

void pt_dense_strides(int ndims, const int64_t *dims, int64_t *strides) {
    int64_t s = 1;
    for (int d = ndims - 1; d >= 0; --d) {
        strides[d] = s;
        /* Saturates: pt_lt_span_bytes refuses the layout afterwards. */
        if (dims[d] > 1 && __builtin_mul_overflow(s, dims[d], &s)) s = INT64_MAX;
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
        if (lt->dims[d] > 1 && __builtin_mul_overflow(s, lt->dims[d], &s)) return false;
    }
    return true;
}

/* No buffer can exceed 2^48 bytes (x86-64 user space is 2^47): larger
 * tensors are refused, which leaves kernels 2^15 of headroom for the
 * products of dims, strides and element sizes they form. */
#define PT_SPAN_LIMIT ((int64_t)1 << 48)

/* The byte span of a tensor's buffer (the single definition; see the header).
 * Returns NULL and sets *bytes, or returns the reason the layout is refused. */
static const char *span_of(const pt_lt *lt, size_t *bytes) {
    *bytes = SIZE_MAX;
    if (lt->ndims > DNNL_MAX_NDIMS) return "has more than 12 dimensions";
    if (lt->layout_type != dnnl_graph_layout_type_strided && lt->layout_type != dnnl_graph_layout_type_opaque)
        return NULL;
    int bits = pt_dt_bits(lt->data_type);
    if (lt->ndims == 0) {
        *bytes = bits >= 8 ? (size_t)bits / 8 : 1;
        return NULL;
    }
    if (!pt_lt_shape_known(lt)) return NULL;
    if (lt->layout_type == dnnl_graph_layout_type_opaque && lt->layout.layout_id != 0) {
        size_t reg;
        if (!pt_opaque_layout_find(lt->layout.layout_id, &reg, NULL, 0, NULL))
            return "has an opaque layout id that no compiled partition produced";
        *bytes = reg;
        return NULL;
    }
    /* Kernels multiply dims in any order: the product of the non-zero dims
     * must fit even when a zero dim makes the tensor empty. */
    int64_t span = 1;
    bool empty = false;
    for (int d = 0; d < lt->ndims; ++d) {
        if (lt->dims[d] == 0) empty = true;
        else if (__builtin_mul_overflow(span, lt->dims[d], &span) || span > PT_SPAN_LIMIT)
            return "has more than 2^48 elements";
    }
    if (empty) {
        /* No element, but kernels still step the other dims by their
         * strides: those steps must fit too. */
        int64_t last = 0, step;
        for (int d = 0; d < lt->ndims && lt->layout_type == dnnl_graph_layout_type_strided; ++d) {
            int64_t e = lt->dims[d], st = lt->layout.strides[d];
            if (e > 1 && st > 0 &&
                (__builtin_mul_overflow(e - 1, st, &step) || __builtin_add_overflow(last, step, &last) ||
                 last > PT_SPAN_LIMIT))
                return "has strides that span more than 2^48 elements";
        }
        *bytes = 0;
        return NULL;
    }
    if (lt->layout_type == dnnl_graph_layout_type_strided) {
        /* oneDNN's size, max(dims[d] * strides[d]), and the furthest element
         * + 1, which is larger only for overlapping strides (zero among
         * them): the buffer holds every element the strides reach. */
        int64_t spec = 0, last = 0;
        for (int d = 0; d < lt->ndims; ++d) {
            int64_t e = lt->dims[d], st = lt->layout.strides[d], m, step;
            if (e == 1) {
                if (spec < 1) spec = 1;
                continue;
            }
            if (st == DNNL_GRAPH_UNKNOWN_DIM) return NULL;
            if (st < 0) return "has a negative stride";
            if (__builtin_mul_overflow(e, st, &m) || __builtin_mul_overflow(e - 1, st, &step) ||
                __builtin_add_overflow(last, step, &last) || m > PT_SPAN_LIMIT || last > PT_SPAN_LIMIT)
                return "has strides that span more than 2^48 elements";
            if (m > spec) spec = m;
        }
        span = spec > last + 1 ? spec : last + 1;
    }
    uint64_t b;
    if (__builtin_mul_overflow((uint64_t)span, (uint64_t)bits, &b) || (b + 7u) / 8u > (uint64_t)PT_SPAN_LIMIT)
        return "has a byte size over 2^48";
    *bytes = (size_t)((b + 7u) / 8u);
    return NULL;
}

pt_status pt_lt_check(const pt_lt *lt, const char *where) {
    if (lt->ndims > DNNL_MAX_NDIMS || lt->ndims < -1)
        return pt_err(dnnl_invalid_arguments, "%s: logical tensor %zu has ndims %d (-1 .. 12 allowed)", where,
                      lt->id, lt->ndims);
    if (lt->property == dnnl_graph_tensor_property_host_scalar &&
        (lt->ndims != 0 ||
         (lt->data_type != dnnl_s32 && lt->data_type != dnnl_f32 && lt->data_type != dnnl_s64)))
        return pt_err(dnnl_invalid_arguments,
                      "%s: logical tensor %zu is a host scalar with ndims %d and data type %d (needs ndims 0, "
                      "s32/f32/s64)",
                      where, lt->id, lt->ndims, (int)lt->data_type);
    return dnnl_success;
}

pt_status pt_lt_span_bytes(const pt_lt *lt, size_t *bytes) {
    const char *why = span_of(lt, bytes);
    if (!why) return dnnl_success;
    char desc[160];
    pt_lt_describe(lt, desc, sizeof desc);
    return pt_err(dnnl_invalid_arguments, "logical tensor %zu (%s) %s", lt->id, desc, why);
}

size_t pt_lt_mem_size(const pt_lt *lt) {
    size_t bytes;
    return span_of(lt, &bytes) ? SIZE_MAX : bytes;
}

bool pt_lt_overlaps(const pt_lt *lt) {
    if (lt->layout_type != dnnl_graph_layout_type_strided || !pt_lt_shape_known(lt)) return false;
    /* Dims of extent > 1 by increasing stride: each stride must step over
     * everything the smaller ones reach (checked sums: pt_lt_span_bytes
     * has accepted the layout). */
    int order[DNNL_MAX_NDIMS], n = 0;
    for (int d = 0; d < lt->ndims; ++d) {
        if (lt->dims[d] == 0) return false;
        if (lt->dims[d] > 1) order[n++] = d;
    }
    for (int i = 1; i < n; ++i)
        for (int j = i; j > 0 && lt->layout.strides[order[j]] < lt->layout.strides[order[j - 1]]; --j) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    int64_t reach = 0; /* furthest offset the smaller strides reach */
    for (int i = 0; i < n; ++i) {
        int64_t st = lt->layout.strides[order[i]], step;
        if (st <= reach) return true;
        if (__builtin_mul_overflow(lt->dims[order[i]] - 1, st, &step) || __builtin_add_overflow(reach, step, &reach))
            return true;
    }
    return false;
}

bool pt_lt_equal(const pt_lt *a, const pt_lt *b) {
    if (a->ndims > DNNL_MAX_NDIMS || b->ndims > DNNL_MAX_NDIMS) return false;
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
    if (o->layout.layout_id != 0) return false; /* a registered (packed) layout is not row-major */
    return pt_lt_is_dense(s);
}

void pt_lt_describe(const pt_lt *lt, char *buf, size_t cap) {
    size_t n = (size_t)snprintf(buf, cap, "%s:", pt_dt_name(lt->data_type));
    if (lt->ndims < 0) {
        if (n < cap) snprintf(buf + n, cap - n, "?");
        return;
    }
    for (int d = 0; d < lt->ndims && d < DNNL_MAX_NDIMS && n < cap; ++d) {
        if (lt->dims[d] == PT_UNKNOWN_DIM)
            n += (size_t)snprintf(buf + n, cap - n, "%s?", d ? "x" : "");
        else
            n += (size_t)snprintf(buf + n, cap - n, "%s%lld", d ? "x" : "", (long long)lt->dims[d]);
    }
}
