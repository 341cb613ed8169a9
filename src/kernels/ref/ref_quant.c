/* Reference quantization ops (opset §1.4): Quantize / Dequantize with
 * attribute scales and zero points, DynamicQuantize / DynamicDequantize with
 * tensor scales and zero points, per_tensor, per_channel and per_group
 * granularity, 8-bit, 4-bit (packed, §1.1.1) and fp8 data. */
#include <stdlib.h>
#include <string.h>

#include "ir/status.h"
#include "kernels/ref/ref_common.h"
#include "kernels/ref/ref_kernels.h"
#include "kernels/ref/ref_quant_groups.h"
#include "ops/op_schema.h"




/* ---- group sizes (§1.4.3) ------------------------------------------------ */

pt_status pt_quant_group_sizes(const pt_op *op, int r, const int64_t *dims, int64_t *G) {
    const char *name = pt_op_kind_name(op->kind);
    size_t ngs = 0, ngr = 0, nax = 0;
    const int64_t *gs = pt_op_s64s(op, dnnl_graph_op_attr_group_shape, &ngs);
    const int64_t *groups = pt_op_s64s(op, dnnl_graph_op_attr_groups, &ngr);
    const int64_t *axis = pt_op_s64s(op, dnnl_graph_op_attr_axis, &nax);
    const bool has_gs = gs && ngs > 0, has_groups = groups && ngr > 0;
    if (r < 0 || r > DNNL_MAX_NDIMS)
        return pt_err(dnnl_invalid_arguments, "%s: per_group needs a ranked src", name);
    if (!has_gs && !has_groups)
        return pt_err(dnnl_invalid_arguments, "%s: per_group needs group_shape or groups", name);
    int64_t Gs[DNNL_MAX_NDIMS];
    if (has_groups) {
        static const int64_t default_axis[1] = {1};
        if (!axis || nax == 0) axis = default_axis, nax = 1;
        if (nax > (size_t)r || ngr > nax)
            return pt_err(dnnl_invalid_arguments,
                          "%s: %zu axes / %zu groups do not fit a rank-%d src", name, nax, ngr, r);
        for (int d = 0; d < r; ++d) Gs[d] = 1;
        bool seen[DNNL_MAX_NDIMS] = {false};
        for (size_t i = 0; i < nax; ++i) {
            int64_t a = axis[i] < 0 ? axis[i] + r : axis[i];
            if (a < 0 || a >= r || seen[a])
                return pt_err(dnnl_invalid_arguments, "%s: axis %lld out of range or repeated", name,
                              (long long)axis[i]);
            seen[a] = true;
            if (i >= ngr) continue;
            int64_t g = groups[i], e = dims[a];
            if (g < 1 || g > e || e % g != 0)
                return pt_err(dnnl_invalid_arguments,
                              "%s: groups[%zu] = %lld does not split dim %lld of extent %lld", name, i,
                              (long long)g, (long long)a, (long long)e);
            Gs[a] = e / g;
        }
    }
    if (has_gs) {
        if (ngs != (size_t)r)
            return pt_err(dnnl_invalid_arguments, "%s: group_shape has %zu entries for rank %d", name,
                          ngs, r);
        for (int d = 0; d < r; ++d) {
            if (gs[d] < 1)
                return pt_err(dnnl_invalid_arguments, "%s: group_shape[%d] = %lld < 1", name, d,
                              (long long)gs[d]);
            if (has_groups && gs[d] != Gs[d])
                return pt_err(dnnl_invalid_arguments,
                              "%s: group_shape and groups disagree on dim %d (%lld vs %lld)", name, d,
                              (long long)gs[d], (long long)Gs[d]);
            G[d] = gs[d];
        }
    } else {
        for (int d = 0; d < r; ++d) G[d] = Gs[d];
    }
    return dnnl_success;
}

/* ---- parameter addressing ------------------------------------------------ */

/* Scale / zero-point lookup for a src element x: offset Σ_d (x_d / G[d])·st[d]
 * into the scales view (`ss`) and the zero-point view (`zs`). */
typedef struct {
    const pt_tview *sc, *zp; /* zp NULL: zero point 0 */
    int64_t G[DNNL_MAX_NDIMS], ss[DNNL_MAX_NDIMS], zs[DNNL_MAX_NDIMS];
} qparams;

/* Stride of a per-channel parameter vector of `want` elements (0 when it has
 * one element); -1 when its shape does not fit. */
static int64_t vector_stride(const pt_tview *t, int64_t want, bool allow_one) {
    int64_t n = pt_tv_nelems(t);
    if (n == want && t->lt.ndims == 1) return want == 1 ? 0 : t->lt.layout.strides[0];
    if (n == 1 && (allow_one || want == 1)) return 0;
    return -1;
}

/* Fills `p` for src/scales/zps per qtype (§1.4.2).  `dynamic` selects the
 * tensor form (axis may be a list, per_group allowed). */
static pt_status build_qparams(const pt_op *op, const pt_tview *src, const pt_tview *sc,
                               const pt_tview *zp, bool dynamic, qparams *p) {
    const char *name = pt_op_kind_name(op->kind);
    const int r = src->lt.ndims;
    p->sc = sc, p->zp = zp;
    for (int d = 0; d < DNNL_MAX_NDIMS; ++d) p->G[d] = 1, p->ss[d] = 0, p->zs[d] = 0;
    const char *qtype = pt_op_str(op, dnnl_graph_op_attr_qtype, "per_tensor");
    const bool per_group = qtype && strcmp(qtype, "per_group") == 0;
    size_t nax = 0;
    const int64_t *axis = pt_op_s64s(op, dnnl_graph_op_attr_axis, &nax);
    if (!per_group && nax > 1)
        return pt_err(dnnl_invalid_arguments, "%s: %zu axes need qtype per_group", name, nax);
    if (!qtype || strcmp(qtype, "per_tensor") == 0) {
        if (pt_tv_nelems(sc) != 1)
            return pt_err(dnnl_invalid_shape, "%s: per_tensor needs exactly one scale", name);
        if (zp && pt_tv_nelems(zp) != 1)
            return pt_err(dnnl_invalid_shape, "%s: per_tensor needs exactly one zero point", name);
        return dnnl_success;
    }
    if (strcmp(qtype, "per_channel") == 0) {
        int64_t a = nax ? axis[0] : 1;
        if (a < 0) a += r;
        if (a < 0 || a >= r)
            return pt_err(dnnl_invalid_arguments, "%s: axis %lld out of range for rank %d", name,
                          (long long)(nax ? axis[0] : 1), r);
        int64_t s = vector_stride(sc, src->lt.dims[a], false);
        if (s < 0)
            return pt_err(dnnl_invalid_shape, "%s: per_channel needs %lld scales, got %lld", name,
                          (long long)src->lt.dims[a], (long long)pt_tv_nelems(sc));
        p->ss[a] = s;
        if (zp) {
            int64_t z = vector_stride(zp, src->lt.dims[a], dynamic);
            if (z < 0)
                return pt_err(dnnl_invalid_shape, "%s: per_channel zero points: %lld, need %s%lld",
                              name, (long long)pt_tv_nelems(zp), dynamic ? "1 or " : "",
                              (long long)src->lt.dims[a]);
            p->zs[a] = z;
        }
        return dnnl_success;
    }
    if (dynamic && per_group) {
        PT_CHECK(pt_quant_group_sizes(op, r, src->lt.dims, p->G));
        if (sc->lt.ndims != r)
            return pt_err(dnnl_invalid_shape, "%s: per_group scales rank %d != src rank %d", name,
                          sc->lt.ndims, r);
        if (zp && zp->lt.ndims != r)
            return pt_err(dnnl_invalid_shape, "%s: per_group zero points rank %d != src rank %d",
                          name, zp->lt.ndims, r);
        for (int d = 0; d < r; ++d) {
            if (sc->lt.dims[d] * p->G[d] != src->lt.dims[d])
                return pt_err(dnnl_invalid_shape,
                              "%s: scales dim %d is %lld, src %lld with group size %lld", name, d,
                              (long long)sc->lt.dims[d], (long long)src->lt.dims[d],
                              (long long)p->G[d]);
            if (zp && zp->lt.dims[d] != sc->lt.dims[d])
                return pt_err(dnnl_invalid_shape, "%s: zero points shape differs from scales", name);
            p->ss[d] = sc->lt.dims[d] == 1 ? 0 : sc->lt.layout.strides[d];
            p->zs[d] = (!zp || zp->lt.dims[d] == 1) ? 0 : zp->lt.layout.strides[d];
        }
        return dnnl_success;
    }
    return pt_err(dnnl_invalid_arguments, "%s: unsupported qtype '%s'", name, qtype);
}

/* Applies the §1.4.1 formula to every element of src into dst. */
static void quant_loop(const qparams *p, const pt_tview *src, const pt_tview *dst, bool quantize,
                       int nt) {
    const int r = src->lt.ndims;
    const int64_t n = pt_tv_nelems(src);
    if (n == 0) return;
    const int64_t inner = r ? src->lt.dims[r - 1] : 1, outer = n / inner;
    const int64_t si = r ? src->lt.layout.strides[r - 1] : 0;
    const int64_t di = r ? dst->lt.layout.strides[r - 1] : 0;
    const int64_t gi = r ? p->G[r - 1] : 1, ssi = r ? p->ss[r - 1] : 0, zsi = r ? p->zs[r - 1] : 0;
    /* Two threads must not write the two nibbles of one byte. */
    const bool par = n > 4096 && pt_dt_bits(dst->lt.data_type) >= 8;
#pragma omp parallel for schedule(static) num_threads(nt) if (par)
    for (int64_t o = 0; o < outer; ++o) {
        int64_t idx[DNNL_MAX_NDIMS] = {0};
        if (r > 1) pt_unravel(o, r - 1, src->lt.dims, idx);
        int64_t so = pt_tv_off(src, idx), dof = pt_tv_off(dst, idx), sco = 0, zo = 0;
        for (int d = 0; d < r - 1; ++d) {
            sco += idx[d] / p->G[d] * p->ss[d];
            zo += idx[d] / p->G[d] * p->zs[d];
        }
        for (int64_t i = 0; i < inner; ++i) {
            int64_t g = i / gi;
            float x = pt_tv_getf(src, so + i * si);
            float s = pt_tv_getf(p->sc, sco + g * ssi);
            float v;
            if (quantize) {
                float inv = 1.f / s; /* reciprocal once in f32, then multiply */
                v = p->zp ? x * inv + pt_tv_getf(p->zp, zo + g * zsi) : x * inv;
            } else {
                v = p->zp ? (x - pt_tv_getf(p->zp, zo + g * zsi)) * s : x * s;
            }
            pt_tv_setf(dst, dof + i * di, v); /* saturating RNE / §1.2 conversion */
        }
    }
}


/* A 1-D view over an attribute list. */
static pt_tview list_view(const void *data, dnnl_data_type_t dt, size_t n) {
    pt_tview t;
    memset(&t, 0, sizeof t);
    t.lt.ndims = 1;
    t.lt.dims[0] = (int64_t)n;
    t.lt.data_type = dt;
    t.lt.layout_type = dnnl_graph_layout_type_strided;
    t.lt.layout.strides[0] = 1;
    t.data = (void *)data;
    return t;
}

/* Quantize / Dequantize: scales and zps from attributes. */
static pt_status static_quant(const pt_op *op, const pt_tview *in, size_t nin, const pt_tview *out,
                              size_t nout, const pt_exec_ctx *ctx, bool quantize) {
    const char *name = pt_op_kind_name(op->kind);
    if (nin < 1 || nout < 1) return pt_err(dnnl_invalid_arguments, "%s: needs 1 input, 1 output", name);
    const pt_tview *src = &in[0], *dst = &out[0];
    PT_CHECK(pt_ref_check_view(op, src, "src"));
    PT_CHECK(pt_ref_check_view(op, dst, "dst"));
    if (!pt_ref_same_dims(src, dst)) return pt_err(dnnl_invalid_shape, "%s: dst shape differs from src", name);
    size_t ns = 0, nz = 0;
    const float *scales = pt_op_f32s(op, dnnl_graph_op_attr_scales, &ns);
    const int64_t *zps = pt_op_s64s(op, dnnl_graph_op_attr_zps, &nz);
    if (!scales || ns == 0) return pt_err(dnnl_invalid_arguments, "%s: scales attribute missing", name);
    if (nz != 0 && nz != ns)
        return pt_err(dnnl_invalid_arguments, "%s: %zu zps for %zu scales", name, nz, ns);
    if (quantize)
        for (size_t i = 0; i < ns; ++i)
            if (scales[i] == 0.f)
                return pt_err(dnnl_invalid_arguments, "%s: scale %zu is zero", name, i);
    pt_tview sv = list_view(scales, dnnl_f32, ns), zv = list_view(zps, dnnl_s64, nz);
    qparams p;
    PT_CHECK(build_qparams(op, src, &sv, nz ? &zv : NULL, false, &p));
    quant_loop(&p, src, dst, quantize, pt_ref_threads(ctx));
    return dnnl_success;
}

PT_REF_OP_KERNEL(pt_ref_quantize) { return static_quant(op, in, nin, out, nout, ctx, true); }
PT_REF_OP_KERNEL(pt_ref_dequantize) { return static_quant(op, in, nin, out, nout, ctx, false); }

/* DynamicQuantize / DynamicDequantize: scales (and optional zps) are inputs. */
static pt_status dynamic_quant(const pt_op *op, const pt_tview *in, size_t nin, const pt_tview *out,
                               size_t nout, const pt_exec_ctx *ctx, bool quantize) {
    const char *name = pt_op_kind_name(op->kind);
    if (nin < 2 || nout < 1)
        return pt_err(dnnl_invalid_arguments, "%s: needs 2-3 inputs, 1 output", name);
    const pt_tview *src = &in[0], *sc = &in[1], *dst = &out[0];
    const pt_tview *zp = (nin > 2 && in[2].data) ? &in[2] : NULL;
    PT_CHECK(pt_ref_check_view(op, src, "src"));
    PT_CHECK(pt_ref_check_view(op, sc, "scales"));
    if (zp) PT_CHECK(pt_ref_check_view(op, zp, "zps"));
    PT_CHECK(pt_ref_check_view(op, dst, "dst"));
    if (!pt_ref_same_dims(src, dst)) return pt_err(dnnl_invalid_shape, "%s: dst shape differs from src", name);
    qparams p;
    PT_CHECK(build_qparams(op, src, sc, zp, true, &p));
    quant_loop(&p, src, dst, quantize, pt_ref_threads(ctx));
    return dnnl_success;
}

PT_REF_OP_KERNEL(pt_ref_dynamic_quantize) { return dynamic_quant(op, in, nin, out, nout, ctx, true); }
PT_REF_OP_KERNEL(pt_ref_dynamic_dequantize) { return dynamic_quant(op, in, nin, out, nout, ctx, false); }
