/* Helpers for reference kernels: strided element addressing and N-d loops. */
#ifndef PARTITA_KERNELS_REF_COMMON_H
#define PARTITA_KERNELS_REF_COMMON_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ir/dtype.h"
#include "kernels/kernel.h"

/* Linear element offset of multi-index `idx` in view `t`. */
static inline int64_t pt_tv_off(const pt_tview *t, const int64_t *idx) {
    int64_t off = 0;
    for (int d = 0; d < t->lt.ndims; ++d) off += idx[d] * t->lt.layout.strides[d];
    return off;
}
/* Offset for an index of a (possibly higher-rank) broadcast output: `t` is
 * right-aligned against `ondims`; stretched dims (extent 1) read index 0. */
static inline int64_t pt_tv_off_bcast(const pt_tview *t, int ondims, const int64_t *oidx) {
    int64_t off = 0;
    int shift = ondims - t->lt.ndims;
    for (int d = 0; d < t->lt.ndims; ++d) {
        int64_t i = t->lt.dims[d] == 1 ? 0 : oidx[d + shift];
        off += i * t->lt.layout.strides[d];
    }
    return off;
}
static inline float pt_tv_getf(const pt_tview *t, int64_t off) {
    return pt_load_f32(t->data, t->lt.data_type, off);
}
static inline void pt_tv_setf(const pt_tview *t, int64_t off, float v) {
    pt_store_f32(t->data, t->lt.data_type, off, v);
}
static inline int64_t pt_tv_nelems(const pt_tview *t) {
    int64_t n = 1;
    for (int d = 0; d < t->lt.ndims; ++d) n *= t->lt.dims[d];
    return n;
}
/* Advances a row-major multi-index; returns false after the last one. */
static inline bool pt_next_index(int ndims, const int64_t *dims, int64_t *idx) {
    for (int d = ndims - 1; d >= 0; --d) {
        if (++idx[d] < dims[d]) return true;
        idx[d] = 0;
    }
    return false;
}
/* Multi-index of the row-major linear position `lin` in `dims`. */
static inline void pt_unravel(int64_t lin, int ndims, const int64_t *dims, int64_t *idx) {
    for (int d = ndims - 1; d >= 0; --d) {
        int64_t e = dims[d] > 0 ? dims[d] : 1;
        idx[d] = lin % e;
        lin /= e;
    }
}

/* ref_common.c: threads a kernel may use (the context's budget); checks
 * that a view has a known shape, a data type and data; equal dims. */
int pt_ref_threads(const pt_exec_ctx *ctx);
pt_status pt_ref_check_view(const pt_op *op, const pt_tview *t, const char *what);
bool pt_ref_same_dims(const pt_tview *a, const pt_tview *b);

#endif
