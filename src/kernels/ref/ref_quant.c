/* Reference quantization ops (docs/ops.md): Quantize / Dequantize with
 * attribute scales and zero points, DynamicQuantize / DynamicDequantize with
 * tensor scales and zero points, per_tensor, per_channel and per_group
 * granularity, 8-bit, 4-bit (packed) and fp8 data.  The scale / zero-point
 * addressing is decoded at compile time (compile/ref_decode_quant.c). */
#include <string.h>

#include "ir/status.h"
#include "kernels/ref/ref_common.h"
#include "kernels/ref/ref_kernels.h"
#include "kernels/ref/ref_quant_groups.h"
/* ---- group sizes ---------------------------------------------------------- */

pt_status pt_quant_groups_resolve(const char *name, const int64_t *gs, size_t ngs, const int64_t *groups,
                                  size_t ngr, const int64_t *axis, size_t nax, int r, const int64_t *dims,
                                  int64_t *G) {
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

/* ---- the kernels ---------------------------------------------------------- */

/* Scale / zero-point lookup for a src element x: offset Σ_d (x_d / G[d])·st[d]
 * into the scales view and the zero-point view (zp NULL: zero point 0). */
typedef struct {
    const pt_tview *sc, *zp;
    const int64_t *G, *ss, *zs;
} qview;

/* Applies the quantization formula to every element of src into dst. */
static void quant_loop(const qview *p, const pt_tview *src, const pt_tview *dst, bool quantize,
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
            pt_tv_setf(dst, dof + i * di, v); /* saturating RNE conversion */
        }
    }
}


/* A 1-D view over a decoded attribute list. */
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

/* All four ops: src and dst checked, then scales / zero points from the
 * decoded lists (Quantize, Dequantize) or from inputs 1 and 2 (dynamic). */
static pt_status quant_run(const pt_ref_quant_params *p, bool dynamic, const pt_tview *in, size_t nin,
                           const pt_tview *out, size_t nout, const pt_exec_ctx *ctx) {
    const char *name = p->name;
    if (nin < (dynamic ? 2u : 1u) || nout < 1)
        return pt_err(dnnl_invalid_arguments, dynamic ? "%s: needs 2-3 inputs, 1 output" : "%s: needs 1 input, 1 output",
                      name);
    const pt_tview *src = &in[0], *dst = &out[0];
    pt_tview sv = list_view(p->scales, dnnl_f32, p->ns), zv = list_view(p->zps, dnnl_s64, p->nz);
    qview q = {.sc = &sv, .zp = p->nz ? &zv : NULL, .G = p->G, .ss = p->ss, .zs = p->zs};
    PT_CHECK(pt_ref_check_view(name, src, "src"));
    if (dynamic) {
        q.sc = &in[1];
        q.zp = (nin > 2 && in[2].data) ? &in[2] : NULL;
        PT_CHECK(pt_ref_check_view(name, q.sc, "scales"));
        if (q.zp) PT_CHECK(pt_ref_check_view(name, q.zp, "zps"));
        if (q.zp && !p->has_zp)
            return pt_err(dnnl_invalid_arguments, "%s: zero points given but not declared at compile time", name);
    }
    PT_CHECK(pt_ref_check_view(name, dst, "dst"));
    if (!pt_ref_same_dims(src, dst)) return pt_err(dnnl_invalid_shape, "%s: dst shape differs from src", name);
    quant_loop(&q, src, dst, p->quantize, pt_ref_threads(ctx));
    return dnnl_success;
}

PT_REF_DECL(pt_ref_quantize) { return quant_run(params, false, in, nin, out, nout, ctx); }
PT_REF_DECL(pt_ref_dequantize) { return quant_run(params, false, in, nin, out, nout, ctx); }
PT_REF_DECL(pt_ref_dynamic_quantize) { return quant_run(params, true, in, nin, out, nout, ctx); }
PT_REF_DECL(pt_ref_dynamic_dequantize) { return quant_run(params, true, in, nin, out, nout, ctx); }
