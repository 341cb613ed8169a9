/* Reference binary element-wise ops with NumPy broadcasting (opset §1.3,
 * §1.9), Select with its two-step broadcast (seed 000), BiasAdd, PReLU and
 * their backward ops.  Inputs are converted to f32, computed in f32, stored
 * once in the destination type (s32 Add/Subtract included, §1.2). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/status.h"
#include "kernels/ref/ref_common.h"
#include "kernels/ref/ref_kernels.h"
#include "ops/op_schema.h"





/* `t` broadcasts one-way into `out` (§1.3.2): rank not larger, right-aligned
 * dims equal or 1. */
static bool bcast_into(const pt_tview *t, const pt_tview *out) {
    int shift = out->lt.ndims - t->lt.ndims;
    if (shift < 0) return false;
    for (int d = 0; d < t->lt.ndims; ++d)
        if (t->lt.dims[d] != 1 && t->lt.dims[d] != out->lt.dims[d + shift]) return false;
    return true;
}

/* `out` is exactly the NumPy broadcast of `a` and `b` (§1.3.1). */
static bool is_bcast_of(const pt_tview *a, const pt_tview *b, const pt_tview *out) {
    if (!bcast_into(a, out) || !bcast_into(b, out)) return false;
    int r = out->lt.ndims;
    for (int d = 0; d < r; ++d) {
        int da = d - (r - a->lt.ndims), db = d - (r - b->lt.ndims);
        int64_t ea = da >= 0 ? a->lt.dims[da] : 1, eb = db >= 0 ? b->lt.dims[db] : 1;
        int64_t e = ea != 1 ? ea : eb;
        if (e != out->lt.dims[d]) return false;
    }
    return true;
}

/* Stride of `t` along the last dim of a rank-`r` broadcast output (0 when that
 * dim is missing or stretched). */
static int64_t inner_stride(const pt_tview *t, int r) {
    int tr = t->lt.ndims;
    if (tr == 0 || r == 0 || t->lt.dims[tr - 1] == 1) return 0;
    return t->lt.layout.strides[tr - 1];
}

static bool auto_broadcast_none(const pt_op *op) {
    const char *ab = pt_op_str(op, dnnl_graph_op_attr_auto_broadcast, "numpy");
    return ab && strcmp(ab, "none") == 0;
}

/* ---- binary element-wise ------------------------------------------------- */

static float binary_apply(int kind, float a, float b) {
    switch (kind) {
        case dnnl_graph_op_add: return a + b;
        case dnnl_graph_op_subtract: return a - b;
        case dnnl_graph_op_multiply: return a * b;
        case dnnl_graph_op_divide: return a / b;
        case dnnl_graph_op_maximum: return a > b ? a : b;
        case dnnl_graph_op_minimum: return a < b ? a : b;
        case dnnl_graph_op_squared_difference: {
            float d = a - b;
            return d * d;
        }
        case dnnl_graph_op_greater_equal: return a >= b ? 1.f : 0.f; /* NaN -> false */
        default: return 0.f;
    }
}

PT_REF_OP_KERNEL(pt_ref_binary) {
    switch (op->kind) {
        case dnnl_graph_op_add:
        case dnnl_graph_op_subtract:
        case dnnl_graph_op_multiply:
        case dnnl_graph_op_divide:
        case dnnl_graph_op_maximum:
        case dnnl_graph_op_minimum:
        case dnnl_graph_op_squared_difference:
        case dnnl_graph_op_greater_equal: break;
        default:
            return pt_err(dnnl_unimplemented, "binary: op kind %s is not a binary op",
                          pt_op_kind_name(op->kind));
    }
    const char *name = pt_op_kind_name(op->kind);
    if (nin < 2 || nout < 1) return pt_err(dnnl_invalid_arguments, "%s: needs 2 inputs, 1 output", name);
    const pt_tview *a = &in[0], *b = &in[1], *dst = &out[0];
    PT_CHECK(pt_ref_check_view(op, a, "src_0"));
    PT_CHECK(pt_ref_check_view(op, b, "src_1"));
    PT_CHECK(pt_ref_check_view(op, dst, "dst"));
    if (auto_broadcast_none(op)) {
        if (!pt_ref_same_dims(a, dst) || !pt_ref_same_dims(b, dst))
            return pt_err(dnnl_invalid_shape, "%s: auto_broadcast=none needs identical shapes", name);
    } else if (!is_bcast_of(a, b, dst)) {
        return pt_err(dnnl_invalid_shape, "%s: dst shape is not the broadcast of the inputs", name);
    }
    const int kind = op->kind, r = dst->lt.ndims;
    const int64_t n = pt_tv_nelems(dst);
    if (n == 0) return dnnl_success;
    const int64_t inner = r ? dst->lt.dims[r - 1] : 1, outer = n / inner;
    const int64_t as = inner_stride(a, r), bs = inner_stride(b, r);
    const int64_t ds = r ? dst->lt.layout.strides[r - 1] : 0;
#pragma omp parallel for schedule(static) num_threads(pt_ref_threads(ctx)) if (n > 4096)
    for (int64_t o = 0; o < outer; ++o) {
        int64_t idx[DNNL_MAX_NDIMS] = {0};
        if (r > 1) pt_unravel(o, r - 1, dst->lt.dims, idx);
        int64_t ao = pt_tv_off_bcast(a, r, idx), bo = pt_tv_off_bcast(b, r, idx);
        int64_t dof = pt_tv_off(dst, idx);
        for (int64_t i = 0; i < inner; ++i) {
            float v = binary_apply(kind, pt_tv_getf(a, ao + i * as), pt_tv_getf(b, bo + i * bs));
            pt_tv_setf(dst, dof + i * ds, v);
        }
    }
    return dnnl_success;
}

/* ---- Select -------------------------------------------------------------- */

PT_REF_OP_KERNEL(pt_ref_select) {
    if (nin < 3 || nout < 1) return pt_err(dnnl_invalid_arguments, "Select: needs 3 inputs, 1 output");
    const pt_tview *c = &in[0], *a = &in[1], *b = &in[2], *dst = &out[0];
    PT_CHECK(pt_ref_check_view(op, c, "cond"));
    PT_CHECK(pt_ref_check_view(op, a, "src_0"));
    PT_CHECK(pt_ref_check_view(op, b, "src_1"));
    PT_CHECK(pt_ref_check_view(op, dst, "dst"));
    if (auto_broadcast_none(op)) {
        if (!pt_ref_same_dims(c, dst) || !pt_ref_same_dims(a, dst) || !pt_ref_same_dims(b, dst))
            return pt_err(dnnl_invalid_shape, "Select: auto_broadcast=none needs identical shapes");
    } else {
        /* Step 1: dst = broadcast(src_0, src_1); step 2: cond one-way into it. */
        if (!is_bcast_of(a, b, dst))
            return pt_err(dnnl_invalid_shape, "Select: dst shape is not the broadcast of src_0 and src_1");
        if (!bcast_into(c, dst))
            return pt_err(dnnl_invalid_shape, "Select: cond does not broadcast one-way into dst");
    }
    const int r = dst->lt.ndims;
    const int64_t n = pt_tv_nelems(dst);
    if (n == 0) return dnnl_success;
    const int64_t inner = r ? dst->lt.dims[r - 1] : 1, outer = n / inner;
    const int64_t cs = inner_stride(c, r), as = inner_stride(a, r), bs = inner_stride(b, r);
    const int64_t ds = r ? dst->lt.layout.strides[r - 1] : 0;
#pragma omp parallel for schedule(static) num_threads(pt_ref_threads(ctx)) if (n > 4096)
    for (int64_t o = 0; o < outer; ++o) {
        int64_t idx[DNNL_MAX_NDIMS] = {0};
        if (r > 1) pt_unravel(o, r - 1, dst->lt.dims, idx);
        int64_t co = pt_tv_off_bcast(c, r, idx), ao = pt_tv_off_bcast(a, r, idx);
        int64_t bo = pt_tv_off_bcast(b, r, idx), dof = pt_tv_off(dst, idx);
        for (int64_t i = 0; i < inner; ++i) {
            bool take = pt_tv_getf(c, co + i * cs) != 0.f; /* any non-zero byte is true */
            float v = take ? pt_tv_getf(a, ao + i * as) : pt_tv_getf(b, bo + i * bs);
            pt_tv_setf(dst, dof + i * ds, v);
        }
    }
    return dnnl_success;
}

/* ---- BiasAdd ------------------------------------------------------------- */

/* Channel dim per data_format (§1.8.1): 1 for NCX, last for NXC. */
static int channel_dim(const pt_op *op, int r) {
    const char *df = pt_op_str(op, dnnl_graph_op_attr_data_format, "NXC");
    if (r <= 1) return 0;
    return (df && strcmp(df, "NCX") == 0) ? 1 : r - 1;
}

PT_REF_OP_KERNEL(pt_ref_bias_add) {
    if (nin < 2 || nout < 1) return pt_err(dnnl_invalid_arguments, "BiasAdd: needs 2 inputs, 1 output");
    const pt_tview *src = &in[0], *bias = &in[1], *dst = &out[0];
    PT_CHECK(pt_ref_check_view(op, src, "src"));
    PT_CHECK(pt_ref_check_view(op, bias, "bias"));
    PT_CHECK(pt_ref_check_view(op, dst, "dst"));
    const int r = src->lt.ndims;
    if (r < 2) return pt_err(dnnl_invalid_shape, "BiasAdd: src rank %d < 2", r);
    const int ca = channel_dim(op, r);
    if (bias->lt.ndims != 1 || bias->lt.dims[0] != src->lt.dims[ca])
        return pt_err(dnnl_invalid_shape, "BiasAdd: bias must be 1-D of length %lld",
                      (long long)src->lt.dims[ca]);
    if (!pt_ref_same_dims(src, dst)) return pt_err(dnnl_invalid_shape, "BiasAdd: dst shape differs from src");
    const int64_t n = pt_tv_nelems(dst);
    if (n == 0) return dnnl_success;
    const int64_t inner = dst->lt.dims[r - 1], outer = n / inner;
    const int64_t bst = bias->lt.layout.strides[0];
    const int64_t ss = src->lt.layout.strides[r - 1], ds = dst->lt.layout.strides[r - 1];
    const int64_t bs_inner = ca == r - 1 ? bst : 0;
#pragma omp parallel for schedule(static) num_threads(pt_ref_threads(ctx)) if (n > 4096)
    for (int64_t o = 0; o < outer; ++o) {
        int64_t idx[DNNL_MAX_NDIMS] = {0};
        pt_unravel(o, r - 1, dst->lt.dims, idx);
        int64_t so = pt_tv_off(src, idx), dof = pt_tv_off(dst, idx);
        int64_t bo = ca == r - 1 ? 0 : idx[ca] * bst;
        for (int64_t i = 0; i < inner; ++i) {
            float v = pt_tv_getf(src, so + i * ss) + pt_tv_getf(bias, bo + i * bs_inner);
            pt_tv_setf(dst, dof + i * ds, v);
        }
    }
    return dnnl_success;
}

PT_REF_OP_KERNEL(pt_ref_bias_add_bwd) {
    if (nin < 1 || nout < 1)
        return pt_err(dnnl_invalid_arguments, "BiasAddBackward: needs 1 input, 1 output");
    const pt_tview *dd = &in[0], *db = &out[0];
    PT_CHECK(pt_ref_check_view(op, dd, "diff_dst"));
    PT_CHECK(pt_ref_check_view(op, db, "diff_bias"));
    const int r = dd->lt.ndims;
    if (r < 2) return pt_err(dnnl_invalid_shape, "BiasAddBackward: diff_dst rank %d < 2", r);
    const int ca = channel_dim(op, r);
    const int64_t C = dd->lt.dims[ca];
    if (db->lt.ndims != 1 || db->lt.dims[0] != C)
        return pt_err(dnnl_invalid_shape, "BiasAddBackward: diff_bias must be [%lld]", (long long)C);
    /* Iterate every position of one channel: the channel dim is pinned. */
    int64_t rest[DNNL_MAX_NDIMS];
    memcpy(rest, dd->lt.dims, sizeof(int64_t) * (size_t)r);
    rest[ca] = 1;
    int64_t m = 1;
    for (int d = 0; d < r; ++d) m *= rest[d];
    const int64_t dbs = db->lt.layout.strides[0];
#pragma omp parallel for schedule(static) num_threads(pt_ref_threads(ctx)) if (C * m > 4096)
    for (int64_t c = 0; c < C; ++c) {
        float acc = 0.f;
        int64_t idx[DNNL_MAX_NDIMS] = {0};
        for (int64_t k = 0; k < m; ++k) {
            pt_unravel(k, r, rest, idx);
            idx[ca] = c;
            acc += pt_tv_getf(dd, pt_tv_off(dd, idx));
        }
        pt_tv_setf(db, c * dbs, acc);
    }
    return dnnl_success;
}

/* ---- PReLU --------------------------------------------------------------- */

/* Maps every src dim to a stride into the slope view (`vs`) and into a dense
 * row-major copy of the slope (`dn`), per the PReLU slope broadcast rules:
 * a 1-D slope goes to the channel dim (`per_channel`, rank > 1) or the last
 * dim, a length-1 slope is shared, a higher-rank slope broadcasts one-way. */
static bool slope_map(const pt_tview *src, const pt_tview *slope, bool per_channel, int ca,
                      int64_t *vs, int64_t *dn) {
    const int r = src->lt.ndims, sr = slope->lt.ndims;
    for (int d = 0; d < r; ++d) vs[d] = dn[d] = 0;
    if (sr == 0) return true;
    if (sr == 1) {
        int64_t len = slope->lt.dims[0];
        if (len == 1) return true;
        if (r == 0) return false;
        int d = (per_channel && r > 1) ? ca : r - 1;
        if (len != src->lt.dims[d]) return false;
        vs[d] = slope->lt.layout.strides[0];
        dn[d] = 1;
        return true;
    }
    if (sr > r) return false;
    int64_t dense[DNNL_MAX_NDIMS];
    pt_dense_strides(sr, slope->lt.dims, dense);
    for (int j = 0; j < sr; ++j) {
        int d = j + r - sr;
        int64_t e = slope->lt.dims[j];
        if (e == 1) continue;
        if (e != src->lt.dims[d]) return false;
        vs[d] = slope->lt.layout.strides[j];
        dn[d] = dense[j];
    }
    return true;
}

PT_REF_OP_KERNEL(pt_ref_prelu) {
    if (nin < 2 || nout < 1) return pt_err(dnnl_invalid_arguments, "PReLU: needs 2 inputs, 1 output");
    const pt_tview *src = &in[0], *slope = &in[1], *dst = &out[0];
    PT_CHECK(pt_ref_check_view(op, src, "src"));
    PT_CHECK(pt_ref_check_view(op, slope, "slope"));
    PT_CHECK(pt_ref_check_view(op, dst, "dst"));
    if (!pt_ref_same_dims(src, dst)) return pt_err(dnnl_invalid_shape, "PReLU: dst shape differs from src");
    const int r = src->lt.ndims;
    const bool pcb = pt_op_bool(op, dnnl_graph_op_attr_per_channel_broadcast, true);
    int64_t vs[DNNL_MAX_NDIMS], dn[DNNL_MAX_NDIMS];
    if (!slope_map(src, slope, pcb, channel_dim(op, r), vs, dn))
        return pt_err(dnnl_invalid_shape, "PReLU: slope is not broadcastable to src");
    const int64_t n = pt_tv_nelems(dst);
    if (n == 0) return dnnl_success;
    const int64_t inner = r ? dst->lt.dims[r - 1] : 1, outer = n / inner;
    const int64_t ss = r ? src->lt.layout.strides[r - 1] : 0;
    const int64_t ds = r ? dst->lt.layout.strides[r - 1] : 0;
    const int64_t ps = r ? vs[r - 1] : 0;
#pragma omp parallel for schedule(static) num_threads(pt_ref_threads(ctx)) if (n > 4096)
    for (int64_t o = 0; o < outer; ++o) {
        int64_t idx[DNNL_MAX_NDIMS] = {0};
        if (r > 1) pt_unravel(o, r - 1, dst->lt.dims, idx);
        int64_t so = pt_tv_off(src, idx), dof = pt_tv_off(dst, idx), po = 0;
        for (int d = 0; d < r; ++d) po += idx[d] * vs[d];
        for (int64_t i = 0; i < inner; ++i) {
            float s = pt_tv_getf(src, so + i * ss);
            float v = s > 0.f ? s : pt_tv_getf(slope, po + i * ps) * s;
            pt_tv_setf(dst, dof + i * ds, v);
        }
    }
    return dnnl_success;
}

PT_REF_OP_KERNEL(pt_ref_prelu_bwd) {
    if (nin < 3 || nout < 2)
        return pt_err(dnnl_invalid_arguments, "PReLUBackward: needs 3 inputs, 2 outputs");
    const pt_tview *src = &in[0], *slope = &in[1], *dd = &in[2];
    const pt_tview *ds = &out[0], *dslope = &out[1];
    PT_CHECK(pt_ref_check_view(op, src, "src"));
    PT_CHECK(pt_ref_check_view(op, slope, "slope"));
    PT_CHECK(pt_ref_check_view(op, dd, "diff_dst"));
    PT_CHECK(pt_ref_check_view(op, ds, "diff_src"));
    PT_CHECK(pt_ref_check_view(op, dslope, "diff_slope"));
    if (!pt_ref_same_dims(src, dd) || !pt_ref_same_dims(src, ds))
        return pt_err(dnnl_invalid_shape, "PReLUBackward: src, diff_dst and diff_src shapes differ");
    if (!pt_ref_same_dims(slope, dslope))
        return pt_err(dnnl_invalid_shape, "PReLUBackward: diff_slope shape differs from slope");
    const int r = src->lt.ndims;
    int64_t vs[DNNL_MAX_NDIMS], dn[DNNL_MAX_NDIMS];
    if (!slope_map(src, slope, true, channel_dim(op, r), vs, dn))
        return pt_err(dnnl_invalid_shape, "PReLUBackward: slope is not broadcastable to src");
    const int64_t n = pt_tv_nelems(src), ns = pt_tv_nelems(slope);
    float *acc = calloc((size_t)(ns > 0 ? ns : 1), sizeof(float));
    if (!acc) return pt_err(dnnl_out_of_memory, "PReLUBackward: cannot allocate %lld floats", (long long)ns);
    const int64_t inner = r ? src->lt.dims[r - 1] : 1, outer = n > 0 ? n / inner : 0;
    const int64_t ss = r ? src->lt.layout.strides[r - 1] : 0;
    const int64_t dds = r ? dd->lt.layout.strides[r - 1] : 0;
    const int64_t dss = r ? ds->lt.layout.strides[r - 1] : 0;
    const int64_t ps = r ? vs[r - 1] : 0, pd = r ? dn[r - 1] : 0;
    /* Sequential: the slope gradient accumulates across rows. */
    for (int64_t o = 0; o < outer; ++o) {
        int64_t idx[DNNL_MAX_NDIMS] = {0};
        if (r > 1) pt_unravel(o, r - 1, src->lt.dims, idx);
        int64_t so = pt_tv_off(src, idx), ddo = pt_tv_off(dd, idx), dso = pt_tv_off(ds, idx);
        int64_t po = 0, pk = 0;
        for (int d = 0; d < r; ++d) po += idx[d] * vs[d], pk += idx[d] * dn[d];
        for (int64_t i = 0; i < inner; ++i) {
            float s = pt_tv_getf(src, so + i * ss), g = pt_tv_getf(dd, ddo + i * dds);
            float sl = pt_tv_getf(slope, po + i * ps);
            acc[pk + i * pd] += (s < 0.f ? s : 0.f) * g;
            pt_tv_setf(ds, dso + i * dss, s > 0.f ? g : sl * g);
        }
    }
    int64_t idx[DNNL_MAX_NDIMS] = {0};
    for (int64_t k = 0; k < ns; ++k) {
        pt_unravel(k, slope->lt.ndims, slope->lt.dims, idx);
        pt_tv_setf(dslope, pt_tv_off(dslope, idx), acc[k]);
    }
    free(acc);
    return dnnl_success;
}
