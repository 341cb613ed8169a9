/* Reference reductions: ReduceL1, ReduceL2, ReduceMax, ReduceMean, ReduceMin,
 * ReduceProd, ReduceSum (docs/ops.md).  Axes come from a non-empty `axes`
 * attribute (decoded at compile time) or the s32 `axes` input; with neither
 * the op is the identity.  Accumulation in f32, one conversion to T. */
#include <math.h>
#include <string.h>

#include "ir/status.h"
#include "kernels/ref/ref_common.h"
#include "kernels/ref/ref_kernels.h"
static float reduce_init(int kind) {
    switch (kind) {
        case dnnl_graph_op_reduce_max: return -INFINITY;
        case dnnl_graph_op_reduce_min: return INFINITY;
        case dnnl_graph_op_reduce_prod: return 1.f;
        default: return 0.f;
    }
}

static inline float reduce_step(int kind, float acc, float x) {
    switch (kind) {
        case dnnl_graph_op_reduce_l1: return acc + fabsf(x);
        case dnnl_graph_op_reduce_l2: return acc + x * x;
        case dnnl_graph_op_reduce_max: return (x > acc || isnan(x)) ? x : acc; /* NaN sticks */
        case dnnl_graph_op_reduce_min: return (x < acc || isnan(x)) ? x : acc;
        case dnnl_graph_op_reduce_prod: return acc * x;
        default: return acc + x; /* sum, mean */
    }
}

static float reduce_final(int kind, float acc, int64_t n) {
    switch (kind) {
        case dnnl_graph_op_reduce_l2: return sqrtf(acc);
        case dnnl_graph_op_reduce_mean: return acc / (float)n;
        default: return acc;
    }
}

pt_status pt_ref_reduce_mark_axis(const char *name, int64_t a, int r, bool *red) {
    int64_t an = a < 0 ? a + r : a;
    if (an < 0 || an >= r || red[an])
        return pt_err(dnnl_invalid_shape, "%s: axis %lld out of range for rank %d or repeated", name,
                      (long long)a, r);
    red[an] = true;
    return dnnl_success;
}

/* Collects the reduced axes into `red` (flags per src dim).  Returns the
 * number of listed axes (0: no axis source at all) or -1 on error. */
static int read_axes(const pt_ref_reduce_params *p, const pt_tview *in, size_t nin, int r, bool *red,
                     pt_status *st) {
    const char *name = p->name;
    if (p->nattr_axes > 0) {
        for (int d = 0; d < r; ++d) red[d] = p->red[d];
        return p->nattr_axes;
    }
    size_t na = 0;
    const pt_tview *t = NULL;
    if (nin > 1 && in[1].data) {
        t = &in[1];
        if (t->lt.ndims > 1 || pt_dt_bits(t->lt.data_type) == 0) {
            *st = pt_err(dnnl_invalid_arguments, "%s: axes input must be a 1-D integer tensor", name);
            return -1;
        }
        na = (size_t)pt_tv_nelems(t);
    }
    for (int d = 0; d < r; ++d) red[d] = false;
    for (size_t i = 0; i < na; ++i) {
        int64_t a = (int64_t)pt_load_f64(t->data, t->lt.data_type,
                                         t->lt.ndims ? (int64_t)i * t->lt.layout.strides[0] : 0);
        *st = pt_ref_reduce_mark_axis(name, a, r, red);
        if (*st != dnnl_success) return -1;
    }
    return (int)na;
}

/* No axis source: dst = src. */
static pt_status identity(const char *name, const pt_tview *src, const pt_tview *dst,
                          const pt_exec_ctx *ctx) {
    const int r = src->lt.ndims;
    if (dst->lt.ndims != r || memcmp(dst->lt.dims, src->lt.dims, sizeof(int64_t) * (size_t)r) != 0)
        return pt_err(dnnl_invalid_shape, "%s: without axes dst must have the src shape", name);
    const int64_t n = pt_tv_nelems(src);
#pragma omp parallel for schedule(static) num_threads(pt_ref_threads(ctx)) if (n > 4096)
    for (int64_t k = 0; k < n; ++k) {
        int64_t idx[DNNL_MAX_NDIMS] = {0};
        pt_unravel(k, r, src->lt.dims, idx);
        pt_tv_setf(dst, pt_tv_off(dst, idx), pt_tv_getf(src, pt_tv_off(src, idx)));
    }
    return dnnl_success;
}

PT_REF_DECL(pt_ref_reduce) {
    const pt_ref_reduce_params *p = params;
    const int kind = p->kind;
    const char *name = p->name;
    PT_CHECK(pt_ref_check_io(name, "1-2 inputs, 1 output", 1, in, nin, out, nout));
    const pt_tview *src = &in[0], *dst = &out[0];
    const int r = src->lt.ndims;
    bool red[DNNL_MAX_NDIMS];
    pt_status st = dnnl_success;
    const int naxes = read_axes(p, in, nin, r, red, &st);
    if (naxes < 0) return st;
    if (naxes == 0) return identity(name, src, dst, ctx);
    int nred = 0;
    for (int d = 0; d < r; ++d) nred += red[d];

    /* Map src dims to dst strides: reduced dims -> 0.  The dst is either
     * rank r (keep_dims, reduced extents 1) or rank r - nred. */
    int64_t dmap[DNNL_MAX_NDIMS];
    if (dst->lt.ndims == r) {
        for (int d = 0; d < r; ++d) {
            int64_t want = red[d] ? 1 : src->lt.dims[d];
            if (dst->lt.dims[d] != want)
                return pt_err(dnnl_invalid_shape, "%s: dst dim %d is %lld, expected %lld", name, d,
                              (long long)dst->lt.dims[d], (long long)want);
            dmap[d] = red[d] ? 0 : dst->lt.layout.strides[d];
        }
    } else if (dst->lt.ndims == r - nred) {
        for (int d = 0, k = 0; d < r; ++d) {
            if (red[d]) {
                dmap[d] = 0;
                continue;
            }
            if (dst->lt.dims[k] != src->lt.dims[d])
                return pt_err(dnnl_invalid_shape, "%s: dst dim %d is %lld, expected %lld", name, k,
                              (long long)dst->lt.dims[k], (long long)src->lt.dims[d]);
            dmap[d] = dst->lt.layout.strides[k++];
        }
    } else {
        return pt_err(dnnl_invalid_shape, "%s: dst rank %d does not fit src rank %d with %d reduced axes",
                      name, dst->lt.ndims, r, nred);
    }

    /* Split dims into kept (one dst element each) and reduced (accumulated). */
    int nk = 0, nr = 0;
    int64_t kext[DNNL_MAX_NDIMS], kss[DNNL_MAX_NDIMS], kds[DNNL_MAX_NDIMS];
    int64_t rext[DNNL_MAX_NDIMS], rss[DNNL_MAX_NDIMS];
    int64_t nkept = 1, ncount = 1;
    for (int d = 0; d < r; ++d) {
        if (red[d]) {
            rext[nr] = src->lt.dims[d], rss[nr++] = src->lt.layout.strides[d];
            ncount *= src->lt.dims[d];
        } else {
            kext[nk] = src->lt.dims[d], kss[nk] = src->lt.layout.strides[d], kds[nk++] = dmap[d];
            nkept *= src->lt.dims[d];
        }
    }
#pragma omp parallel for schedule(static) num_threads(pt_ref_threads(ctx)) if (nkept * ncount > 4096)
    for (int64_t o = 0; o < nkept; ++o) {
        int64_t kidx[DNNL_MAX_NDIMS] = {0}, ridx[DNNL_MAX_NDIMS] = {0};
        pt_unravel(o, nk, kext, kidx);
        int64_t sbase = 0, doff = 0;
        for (int k = 0; k < nk; ++k) sbase += kidx[k] * kss[k], doff += kidx[k] * kds[k];
        float acc = reduce_init(kind);
        for (int64_t j = 0; j < ncount; ++j) {
            int64_t so = sbase;
            for (int k = 0; k < nr; ++k) so += ridx[k] * rss[k];
            acc = reduce_step(kind, acc, pt_tv_getf(src, so));
            pt_next_index(nr, rext, ridx);
        }
        pt_tv_setf(dst, doff, reduce_final(kind, acc, ncount));
    }
    return dnnl_success;
}
