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

/* Canonical 5-D view of a spatial tensor: data [N, C, D, H, W] or weights
 * [A, B, KD, KH, KW]; missing leading spatial dims have extent 1, stride 0. */
typedef struct {
    int64_t d[5]; /* extents */
    int64_t s[5]; /* element strides in the tensor */
} pt_v5;

static inline int64_t pt_v5_count(const pt_v5 *v) { return v->d[0] * v->d[1] * v->d[2] * v->d[3] * v->d[4]; }
static inline int64_t pt_v5_off(const pt_v5 *v, int64_t n, int64_t c, int64_t z, int64_t y, int64_t x) {
    return n * v->s[0] + c * v->s[1] + z * v->s[2] + y * v->s[3] + x * v->s[4];
}
/* The 5-index q of row-major position `lin` in extents d[0..4]. */
static inline void pt_pos5(const int64_t *d, int64_t lin, int64_t *q) {
    for (int i = 4; i >= 0; --i) {
        q[i] = lin % d[i];
        lin /= d[i];
    }
}
/* Offset of the element at row-major position `lin` of the canonical order. */
static inline int64_t pt_v5_lin_off(const pt_v5 *v, int64_t lin) {
    int64_t off = 0;
    for (int i = 4; i >= 0; --i) {
        off += (lin % v->d[i]) * v->s[i];
        lin /= v->d[i];
    }
    return off;
}

/* Elements of a logical tensor, 0 when the shape is not known. */
static inline size_t pt_lt_count(const pt_lt *lt) {
    int64_t n = pt_lt_nelems(lt);
    return n > 0 ? (size_t)n : 0;
}

/* Scratch from ctx->scratch, carved in 64-byte aligned pieces: a kernel's
 * sizing function adds pt_scratch_round of each piece, the kernel takes the
 * pieces in the same order. */
static inline size_t pt_scratch_round(size_t bytes) { return (bytes + 63) / 64 * 64; }
static inline void *pt_scratch_take(char **cur, size_t bytes) {
    void *p = *cur;
    if (p) *cur += pt_scratch_round(bytes); /* none at all (empty tensors): stays NULL */
    return p;
}

/* ref_common.c: threads a kernel may use (the context's budget); the same
 * for a loop of about `work` scalar operations (1 where a parallel region
 * would cost more than it saves); checks that a view has a known shape, a
 * data type and data; equal dims; the common start of a kernel (at least
 * min_in inputs and one output, `need` completing "<name>: needs ...", then
 * in[0] "src" and out[0] "dst" checked); equal ranks of two or three views; the
 * context holds `need` bytes of scratch; canonical 5-D views. */
int pt_ref_threads(const pt_exec_ctx *ctx);
int pt_ref_threads_for(const pt_exec_ctx *ctx, int64_t work);
pt_status pt_ref_check_view(const char *name, const pt_tview *t, const char *what);
bool pt_ref_same_dims(const pt_tview *a, const pt_tview *b);
pt_status pt_ref_check_io(const char *name, const char *need, size_t min_in, const pt_tview *in, size_t nin,
                          const pt_tview *out, size_t nout);
pt_status pt_ref_same_rank(const char *name, const pt_tview *a, const pt_tview *b, const pt_tview *c);
pt_status pt_ref_need_scratch(const char *name, const pt_exec_ctx *ctx, size_t need);
void pt_v5_data(const pt_lt *lt, bool nxc, pt_v5 *v);
void pt_v5_weights(const pt_lt *lt, bool x_first, pt_v5 *v);
/* Stores a dense buffer in canonical order into tensor `t` seen as `v`. */
void pt_v5_store(const pt_tview *t, const pt_v5 *v, const float *buf, const pt_exec_ctx *ctx);
/* Backward ops that scatter into their output: `acc` (dense, the canonical
 * shape `vds`) is zeroed, then for each (n, c) plane (planes are independent
 * and split over nt threads) fn(arg, plane of acc, n, c, z, y, x) is called
 * for every position (z, y, x) of `vdd` in row-major order; acc is finally
 * stored into `ds`. */
typedef void (*pt_v5_scatter_fn)(const void *arg, float *ap, int64_t n, int64_t c, int64_t z, int64_t y, int64_t x);
void pt_v5_scatter(const pt_tview *ds, const pt_v5 *vds, const pt_v5 *vdd, float *acc, int nt, pt_v5_scatter_fn fn,
                   const void *arg, const pt_exec_ctx *ctx);

/* Reads a one-element integer tensor (a 0-D host scalar or a 1-element
 * tensor: Dropout's seed and offset); false when it is not one. */
bool pt_read_scalar_i64(const pt_tview *t, int64_t *v);

#endif
