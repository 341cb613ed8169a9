/* Reference SoftMax (modes none / inf_as_zero, optional f32 stats output),
 * LogSoftmax and their backward ops, along one axis, computed in f32. */
#include <math.h>
#include <string.h>

#include "ir/status.h"
#include "kernels/ref/ref_common.h"
#include "kernels/ref/ref_kernels.h"
/* The slices of a softmax: every index with the axis coordinate pinned to 0
 * (`rest`), their count, and the axis extent. */
static int64_t softmax_slices(const pt_tview *t, int a, int64_t *rest, int64_t *len) {
    const int r = t->lt.ndims;
    memcpy(rest, t->lt.dims, sizeof(int64_t) * (size_t)r);
    rest[a] = 1;
    int64_t nslices = 1;
    for (int d = 0; d < r; ++d) nslices *= rest[d];
    *len = t->lt.dims[a];
    return nslices;
}

static pt_status softmax_axis_check(const pt_ref_softmax_params *p, int r) {
    if (p->axis >= r)
        return pt_err(dnnl_invalid_arguments, "%s: axis %d out of range for rank %d", p->name, p->axis, r);
    return dnnl_success;
}

PT_REF_DECL(pt_ref_softmax) {
    const pt_ref_softmax_params *p = params;
    const bool is_log = p->is_log;
    const char *name = p->name;
    PT_CHECK(pt_ref_check_io(name, "1 input, 1-2 outputs", 1, in, nin, out, nout));
    const pt_tview *src = &in[0], *dst = &out[0];
    const pt_tview *stats = (!is_log && nout > 1 && out[1].data) ? &out[1] : NULL;
    if (!pt_ref_same_dims(src, dst)) return pt_err(dnnl_invalid_shape, "%s: dst shape differs from src", name);
    const int r = src->lt.ndims, a = p->axis;
    PT_CHECK(softmax_axis_check(p, r));
    int64_t rest[DNNL_MAX_NDIMS], len;
    const int64_t nslices = softmax_slices(src, a, rest, &len);
    if (stats) {
        PT_CHECK(pt_ref_check_view(name, stats, "stats"));
        if (stats->lt.ndims != r || memcmp(stats->lt.dims, rest, sizeof(int64_t) * (size_t)r) != 0)
            return pt_err(dnnl_invalid_shape, "%s: stats must have the src shape with dim %d = 1", name, a);
    }
    const bool inf_as_zero = p->inf_as_zero;
    const int64_t sa = src->lt.layout.strides[a], da = dst->lt.layout.strides[a];
#pragma omp parallel for schedule(static) num_threads(pt_ref_threads(ctx)) if (nslices * len > 4096)
    for (int64_t o = 0; o < nslices; ++o) {
        int64_t idx[DNNL_MAX_NDIMS] = {0};
        pt_unravel(o, r, rest, idx);
        const int64_t so = pt_tv_off(src, idx), dof = pt_tv_off(dst, idx);
        float m = -INFINITY;
        for (int64_t j = 0; j < len; ++j) {
            float x = pt_tv_getf(src, so + j * sa);
            if (x > m) m = x;
        }
        float sum = 0.f;
        for (int64_t j = 0; j < len; ++j) sum += expf(pt_tv_getf(src, so + j * sa) - m);
        const bool all_masked = inf_as_zero && m == -INFINITY;
        /* A fully masked row reports stats 0, as the fused SDPA kernel does. */
        const float lse = all_masked ? 0.f : m + logf(sum);
        for (int64_t j = 0; j < len; ++j) {
            float x = pt_tv_getf(src, so + j * sa), v;
            if (is_log) v = x - m - logf(sum);
            else if (all_masked) v = 0.f;
            else v = expf(x - m) / sum;
            pt_tv_setf(dst, dof + j * da, v);
        }
        if (stats) pt_tv_setf(stats, pt_tv_off(stats, idx), lse);
    }
    return dnnl_success;
}

PT_REF_DECL(pt_ref_softmax_bwd) {
    const pt_ref_softmax_params *p = params;
    const bool is_log = p->is_log;
    const char *name = p->name;
    if (nin < 2 || nout < 1) return pt_err(dnnl_invalid_arguments, "%s: needs 2 inputs, 1 output", name);
    const pt_tview *dd = &in[0], *y = &in[1], *ds = &out[0];
    PT_CHECK(pt_ref_check_view(name, dd, "diff_dst"));
    PT_CHECK(pt_ref_check_view(name, y, "dst"));
    PT_CHECK(pt_ref_check_view(name, ds, "diff_src"));
    if (!pt_ref_same_dims(dd, y) || !pt_ref_same_dims(dd, ds))
        return pt_err(dnnl_invalid_shape, "%s: diff_dst, dst and diff_src shapes differ", name);
    const int r = dd->lt.ndims, a = p->axis;
    PT_CHECK(softmax_axis_check(p, r));
    int64_t rest[DNNL_MAX_NDIMS], len;
    const int64_t nslices = softmax_slices(dd, a, rest, &len);
    const int64_t dda = dd->lt.layout.strides[a], ya = y->lt.layout.strides[a];
    const int64_t dsa = ds->lt.layout.strides[a];
#pragma omp parallel for schedule(static) num_threads(pt_ref_threads(ctx)) if (nslices * len > 4096)
    for (int64_t o = 0; o < nslices; ++o) {
        int64_t idx[DNNL_MAX_NDIMS] = {0};
        pt_unravel(o, r, rest, idx);
        const int64_t ddo = pt_tv_off(dd, idx), yo = pt_tv_off(y, idx), dso = pt_tv_off(ds, idx);
        float s = 0.f;
        for (int64_t j = 0; j < len; ++j) {
            float g = pt_tv_getf(dd, ddo + j * dda);
            s += is_log ? g : g * pt_tv_getf(y, yo + j * ya);
        }
        for (int64_t j = 0; j < len; ++j) {
            float g = pt_tv_getf(dd, ddo + j * dda), yv = pt_tv_getf(y, yo + j * ya);
            float v = is_log ? g - expf(yv) * s : yv * (g - s);
            pt_tv_setf(ds, dso + j * dsa, v);
        }
    }
    return dnnl_success;
}
