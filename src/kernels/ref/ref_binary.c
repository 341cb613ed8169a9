/* Reference binary element-wise ops with NumPy broadcasting, Select with its
 * two-step broadcast, BiasAdd, PReLU and their backward ops (docs/ops.md).
 * Inputs are converted to f32, computed in f32, stored once in the
 * destination type (s32 Add/Subtract included). */
#include <math.h>
#include <string.h>

#include "ir/status.h"
#include "kernels/ref/ref_common.h"
#include "kernels/ref/ref_kernels.h"
/* `t` broadcasts one-way into `out`: rank not larger, right-aligned
 * dims equal or 1. */
static bool bcast_into(const pt_tview *t, const pt_tview *out) {
    int shift = out->lt.ndims - t->lt.ndims;
    if (shift < 0) return false;
    for (int d = 0; d < t->lt.ndims; ++d)
        if (t->lt.dims[d] != 1 && t->lt.dims[d] != out->lt.dims[d + shift]) return false;
    return true;
}

/* `out` is exactly the NumPy broadcast of `a` and `b`. */
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

/* Checks the views of a binary op or Select (cond NULL for binary ops) and
 * the broadcast of its inputs into dst. */
static pt_status bcast_check(const pt_ref_binary_params *p, const pt_tview *c, const pt_tview *a,
                             const pt_tview *b, const pt_tview *dst) {
    const char *name = p->name;
    if (c) PT_CHECK(pt_ref_check_view(name, c, "cond"));
    PT_CHECK(pt_ref_check_view(name, a, "src_0"));
    PT_CHECK(pt_ref_check_view(name, b, "src_1"));
    PT_CHECK(pt_ref_check_view(name, dst, "dst"));
    if (p->bcast_none) {
        if ((c && !pt_ref_same_dims(c, dst)) || !pt_ref_same_dims(a, dst) || !pt_ref_same_dims(b, dst))
            return pt_err(dnnl_invalid_shape, "%s: auto_broadcast=none needs identical shapes", name);
        return dnnl_success;
    }
    /* Select: step 1 dst = broadcast(src_0, src_1); step 2 cond one-way into it. */
    if (!is_bcast_of(a, b, dst))
        return pt_err(dnnl_invalid_shape, c ? "%s: dst shape is not the broadcast of src_0 and src_1"
                                            : "%s: dst shape is not the broadcast of the inputs",
                      name);
    if (c && !bcast_into(c, dst))
        return pt_err(dnnl_invalid_shape, "%s: cond does not broadcast one-way into dst", name);
    return dnnl_success;
}

/* dst = kind(a, b), or cond ? a : b when `c` is given (Select). */
static pt_status binary_run(const pt_ref_binary_params *p, const pt_tview *c, const pt_tview *a,
                            const pt_tview *b, const pt_tview *dst, const pt_exec_ctx *ctx) {
    PT_CHECK(bcast_check(p, c, a, b, dst));
    const int kind = p->kind, r = dst->lt.ndims;
    const int64_t n = pt_tv_nelems(dst);
    if (n == 0) return dnnl_success;
    const int64_t inner = r ? dst->lt.dims[r - 1] : 1, outer = n / inner;
    const int64_t cs = c ? inner_stride(c, r) : 0, as = inner_stride(a, r), bs = inner_stride(b, r);
    const int64_t ds = r ? dst->lt.layout.strides[r - 1] : 0;
#pragma omp parallel for schedule(static) num_threads(pt_ref_threads(ctx)) if (n > 4096)
    for (int64_t o = 0; o < outer; ++o) {
        int64_t idx[DNNL_MAX_NDIMS] = {0};
        if (r > 1) pt_unravel(o, r - 1, dst->lt.dims, idx);
        int64_t co = c ? pt_tv_off_bcast(c, r, idx) : 0, ao = pt_tv_off_bcast(a, r, idx);
        int64_t bo = pt_tv_off_bcast(b, r, idx), dof = pt_tv_off(dst, idx);
        for (int64_t i = 0; i < inner; ++i) {
            float v;
            if (c) {
                bool take = pt_tv_getf(c, co + i * cs) != 0.f; /* any non-zero byte is true */
                v = take ? pt_tv_getf(a, ao + i * as) : pt_tv_getf(b, bo + i * bs);
            } else {
                v = binary_apply(kind, pt_tv_getf(a, ao + i * as), pt_tv_getf(b, bo + i * bs));
            }
            pt_tv_setf(dst, dof + i * ds, v);
        }
    }
    return dnnl_success;
}

PT_REF_DECL(pt_ref_binary) {
    const pt_ref_binary_params *p = params;
    if (nin < 2 || nout < 1) return pt_err(dnnl_invalid_arguments, "%s: needs 2 inputs, 1 output", p->name);
    return binary_run(p, NULL, &in[0], &in[1], &out[0], ctx);
}

/* ---- Select -------------------------------------------------------------- */

PT_REF_DECL(pt_ref_select) {
    const pt_ref_binary_params *p = params;
    if (nin < 3 || nout < 1) return pt_err(dnnl_invalid_arguments, "Select: needs 3 inputs, 1 output");
    return binary_run(p, &in[0], &in[1], &in[2], &out[0], ctx);
}

/* ---- BiasAdd ------------------------------------------------------------- */

PT_REF_DECL(pt_ref_bias_add) {
    const pt_ref_chan_params *p = params;
    if (nin < 2 || nout < 1) return pt_err(dnnl_invalid_arguments, "BiasAdd: needs 2 inputs, 1 output");
    const pt_tview *src = &in[0], *bias = &in[1], *dst = &out[0];
    PT_CHECK(pt_ref_check_view("BiasAdd", src, "src"));
    PT_CHECK(pt_ref_check_view("BiasAdd", bias, "bias"));
    PT_CHECK(pt_ref_check_view("BiasAdd", dst, "dst"));
    const int r = src->lt.ndims;
    if (r < 2) return pt_err(dnnl_invalid_shape, "BiasAdd: src rank %d < 2", r);
    const int ca = p->cdim;
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

PT_REF_DECL(pt_ref_bias_add_bwd) {
    const pt_ref_chan_params *p = params;
    if (nin < 1 || nout < 1)
        return pt_err(dnnl_invalid_arguments, "BiasAddBackward: needs 1 input, 1 output");
    const pt_tview *dd = &in[0], *db = &out[0];
    PT_CHECK(pt_ref_check_view("BiasAddBackward", dd, "diff_dst"));
    PT_CHECK(pt_ref_check_view("BiasAddBackward", db, "diff_bias"));
    const int r = dd->lt.ndims;
    if (r < 2) return pt_err(dnnl_invalid_shape, "BiasAddBackward: diff_dst rank %d < 2", r);
    const int ca = p->cdim;
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

PT_REF_DECL(pt_ref_prelu) {
    const pt_ref_chan_params *p = params;
    if (nin < 2 || nout < 1) return pt_err(dnnl_invalid_arguments, "PReLU: needs 2 inputs, 1 output");
    const pt_tview *src = &in[0], *slope = &in[1], *dst = &out[0];
    PT_CHECK(pt_ref_check_view("PReLU", src, "src"));
    PT_CHECK(pt_ref_check_view("PReLU", slope, "slope"));
    PT_CHECK(pt_ref_check_view("PReLU", dst, "dst"));
    if (!pt_ref_same_dims(src, dst)) return pt_err(dnnl_invalid_shape, "PReLU: dst shape differs from src");
    const int r = src->lt.ndims;
    int64_t vs[DNNL_MAX_NDIMS], dn[DNNL_MAX_NDIMS];
    if (!slope_map(src, slope, p->per_channel, p->cdim, vs, dn))
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

PT_REF_DECL(pt_ref_prelu_bwd) {
    const pt_ref_chan_params *p = params;
    if (nin < 3 || nout < 2)
        return pt_err(dnnl_invalid_arguments, "PReLUBackward: needs 3 inputs, 2 outputs");
    const pt_tview *src = &in[0], *slope = &in[1], *dd = &in[2];
    const pt_tview *ds = &out[0], *dslope = &out[1];
    PT_CHECK(pt_ref_check_view("PReLUBackward", src, "src"));
    PT_CHECK(pt_ref_check_view("PReLUBackward", slope, "slope"));
    PT_CHECK(pt_ref_check_view("PReLUBackward", dd, "diff_dst"));
    PT_CHECK(pt_ref_check_view("PReLUBackward", ds, "diff_src"));
    PT_CHECK(pt_ref_check_view("PReLUBackward", dslope, "diff_slope"));
    if (!pt_ref_same_dims(src, dd) || !pt_ref_same_dims(src, ds))
        return pt_err(dnnl_invalid_shape, "PReLUBackward: src, diff_dst and diff_src shapes differ");
    if (!pt_ref_same_dims(slope, dslope))
        return pt_err(dnnl_invalid_shape, "PReLUBackward: diff_slope shape differs from slope");
    const int r = src->lt.ndims;
    int64_t vs[DNNL_MAX_NDIMS], dn[DNNL_MAX_NDIMS];
    if (!slope_map(src, slope, true, p->cdim, vs, dn))
        return pt_err(dnnl_invalid_shape, "PReLUBackward: slope is not broadcastable to src");
    const int64_t n = pt_tv_nelems(src), ns = pt_tv_nelems(slope);
    PT_CHECK(pt_ref_need_scratch("PReLUBackward", ctx, pt_ref_prelu_bwd_scratch(&slope->lt)));
    char *cur = ctx->scratch;
    float *acc = pt_scratch_take(&cur, (size_t)ns * sizeof(float));
    if (ns > 0) memset(acc, 0, (size_t)ns * sizeof(float));
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
    return dnnl_success;
}

size_t pt_ref_prelu_bwd_scratch(const pt_lt *slope) {
    return pt_scratch_round(pt_lt_count(slope) * sizeof(float));
}
