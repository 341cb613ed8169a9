/* Decoders of the data-movement and quantization reference kernels. */
#include <string.h>

#include "compile/ref_decode.h"
#include "kernels/ref/ref_kernels.h"
#include "kernels/ref/ref_quant_groups.h"
#include "ops/op_schema.h"

static const pt_lt *in_lt(const pt_op *op, size_t k) { return k < op->nin ? &op->in[k] : NULL; }
static const pt_lt *out_lt(const pt_op *op, size_t k) { return k < op->nout ? &op->out[k] : NULL; }

static pt_status decode_named(const pt_op *op, pt_bound_kernel *out, pt_kernel_fn fn) {
    pt_ref_name_params n = {.name = pt_op_kind_name(op->kind)};
    return pt_decode_bind(out, fn, &n, sizeof n);
}

/* A dense copy of src only for an in-place run between layouts. */
PT_DECODE_DECL(static_reshape) {
    PT_CHECK(decode_named(op, out, pt_ref_static_reshape));
    if (op->nin && op->nout) out->scratch_bytes = pt_ref_static_reshape_scratch(&op->in[0], &op->out[0]);
    return dnnl_success;
}

PT_DECODE_DECL(typecast) { return decode_named(op, out, pt_ref_typecast); }
PT_DECODE_DECL(reorder) { return decode_named(op, out, pt_ref_reorder); }
PT_DECODE_DECL(dropout) { return decode_named(op, out, pt_ref_dropout); }

PT_DECODE_DECL(static_transpose) {
    const int r = op->nin ? op->in[0].ndims : 0;
    if (r < 0 || r > DNNL_MAX_NDIMS) return pt_err(dnnl_invalid_shape, "StaticTranspose: src rank %d", r);
    size_t no = 0;
    const int64_t *order = pt_op_s64s(op, dnnl_graph_op_attr_order, &no);
    if (no != 0 && no != (size_t)r)
        return pt_err(dnnl_invalid_shape, "StaticTranspose: order has %zu entries for rank %d", no, r);
    pt_ref_transpose_params t = {.r = r};
    bool seen[DNNL_MAX_NDIMS] = {false};
    for (int k = 0; k < r; ++k) {
        int64_t q = no ? order[k] : r - 1 - k; /* empty order = reverse */
        if (q < 0) q += r;
        if (q < 0 || q >= r || seen[q]) return pt_err(dnnl_invalid_shape, "StaticTranspose: order is not a permutation");
        seen[q] = true;
        t.perm[k] = (int)q;
    }
    return pt_decode_bind(out, pt_ref_static_transpose, &t, sizeof t);
}

/* Concat and GenIndex: `axis` resolved for the rank of output 0. */
static pt_status decode_axis(const pt_op *op, pt_bound_kernel *out, pt_kernel_fn fn) {
    const int r = op->nout ? op->out[0].ndims : 0;
    int64_t a0 = pt_op_s64(op, dnnl_graph_op_attr_axis, 0), a = a0 < 0 ? a0 + r : a0;
    if (r == 0 || a < 0 || a >= r)
        return pt_err(dnnl_invalid_arguments, "%s: axis %lld out of range for rank %d", pt_op_kind_name(op->kind),
                      (long long)a0, r);
    pt_ref_axis_params ap = {.axis = (int)a};
    return pt_decode_bind(out, fn, &ap, sizeof ap);
}

PT_DECODE_DECL(concat) { return decode_axis(op, out, pt_ref_concat); }
PT_DECODE_DECL(gen_index) { return decode_axis(op, out, pt_ref_gen_index); }

/* ---- quantization ------------------------------------------------------------ */

pt_status pt_quant_group_sizes(const pt_op *op, int r, const int64_t *dims, int64_t *G) {
    size_t ngs = 0, ngr = 0, nax = 0;
    const int64_t *gs = pt_op_s64s(op, dnnl_graph_op_attr_group_shape, &ngs);
    const int64_t *groups = pt_op_s64s(op, dnnl_graph_op_attr_groups, &ngr);
    const int64_t *axis = pt_op_s64s(op, dnnl_graph_op_attr_axis, &nax);
    return pt_quant_groups_resolve(pt_op_kind_name(op->kind), gs, ngs, groups, ngr, axis, nax, r, dims, G);
}

static int64_t lt_count(const pt_lt *t) { return pt_lt_nelems(t); }

/* Stride of a per-channel parameter vector of `want` elements (0 when it has
 * one element); -1 when its shape does not fit. */
static int64_t vector_stride(const pt_lt *t, int64_t want, bool allow_one) {
    int64_t n = lt_count(t);
    if (n == want && t->ndims == 1) return want == 1 ? 0 : t->layout.strides[0];
    if (n == 1 && (allow_one || want == 1)) return 0;
    return -1;
}

/* Fills the addressing of `p` for src / scales / zero points per qtype.
 * `dynamic` selects the tensor form (axis may be a list, per_group allowed). */
static pt_status build_qparams(const pt_op *op, const pt_lt *src, const pt_lt *sc, const pt_lt *zp, bool dynamic,
                               pt_ref_quant_params *p) {
    const char *name = pt_op_kind_name(op->kind);
    const int r = src->ndims;
    for (int d = 0; d < DNNL_MAX_NDIMS; ++d) p->G[d] = 1, p->ss[d] = 0, p->zs[d] = 0;
    const char *qtype = pt_op_str(op, dnnl_graph_op_attr_qtype, "per_tensor");
    const bool per_group = qtype && strcmp(qtype, "per_group") == 0;
    size_t nax = 0;
    const int64_t *axis = pt_op_s64s(op, dnnl_graph_op_attr_axis, &nax);
    if (!per_group && nax > 1) return pt_err(dnnl_invalid_arguments, "%s: %zu axes need qtype per_group", name, nax);
    if (!qtype || strcmp(qtype, "per_tensor") == 0) {
        if (lt_count(sc) != 1) return pt_err(dnnl_invalid_shape, "%s: per_tensor needs exactly one scale", name);
        if (zp && lt_count(zp) != 1)
            return pt_err(dnnl_invalid_shape, "%s: per_tensor needs exactly one zero point", name);
        return dnnl_success;
    }
    if (strcmp(qtype, "per_channel") == 0) {
        int64_t a = nax ? axis[0] : 1;
        if (a < 0) a += r;
        if (a < 0 || a >= r)
            return pt_err(dnnl_invalid_arguments, "%s: axis %lld out of range for rank %d", name,
                          (long long)(nax ? axis[0] : 1), r);
        int64_t s = vector_stride(sc, src->dims[a], false);
        if (s < 0)
            return pt_err(dnnl_invalid_shape, "%s: per_channel needs %lld scales, got %lld", name,
                          (long long)src->dims[a], (long long)lt_count(sc));
        p->ss[a] = s;
        if (zp) {
            int64_t z = vector_stride(zp, src->dims[a], dynamic);
            if (z < 0)
                return pt_err(dnnl_invalid_shape, "%s: per_channel zero points: %lld, need %s%lld", name,
                              (long long)lt_count(zp), dynamic ? "1 or " : "", (long long)src->dims[a]);
            p->zs[a] = z;
        }
        return dnnl_success;
    }
    if (dynamic && per_group) {
        PT_CHECK(pt_quant_group_sizes(op, r, src->dims, p->G));
        if (sc->ndims != r)
            return pt_err(dnnl_invalid_shape, "%s: per_group scales rank %d != src rank %d", name, sc->ndims, r);
        if (zp && zp->ndims != r)
            return pt_err(dnnl_invalid_shape, "%s: per_group zero points rank %d != src rank %d", name, zp->ndims, r);
        for (int d = 0; d < r; ++d) {
            if (sc->dims[d] * p->G[d] != src->dims[d])
                return pt_err(dnnl_invalid_shape, "%s: scales dim %d is %lld, src %lld with group size %lld", name, d,
                              (long long)sc->dims[d], (long long)src->dims[d], (long long)p->G[d]);
            if (zp && zp->dims[d] != sc->dims[d])
                return pt_err(dnnl_invalid_shape, "%s: zero points shape differs from scales", name);
            p->ss[d] = sc->dims[d] == 1 ? 0 : sc->layout.strides[d];
            p->zs[d] = (!zp || zp->dims[d] == 1) ? 0 : zp->layout.strides[d];
        }
        return dnnl_success;
    }
    return pt_err(dnnl_invalid_arguments, "%s: unsupported qtype '%s'", name, qtype);
}

/* A dense 1-D logical tensor of n elements: the shape of an attribute list. */
static pt_lt list_lt(dnnl_data_type_t dt, size_t n) {
    pt_lt t;
    memset(&t, 0, sizeof t);
    t.ndims = 1;
    t.dims[0] = (int64_t)n;
    t.data_type = dt;
    t.layout_type = dnnl_graph_layout_type_strided;
    t.layout.strides[0] = 1;
    return t;
}

/* Quantize / Dequantize: scales and zero points from attributes, copied
 * behind the struct (one allocation, released with it). */
static pt_status decode_static_quant(const pt_op *op, pt_bound_kernel *out, pt_kernel_fn fn, bool quantize) {
    const char *name = pt_op_kind_name(op->kind);
    const pt_lt *src = in_lt(op, 0);
    if (!src || !out_lt(op, 0)) return pt_err(dnnl_invalid_arguments, "%s: needs 1 input, 1 output", name);
    size_t ns = 0, nz = 0;
    const float *scales = pt_op_f32s(op, dnnl_graph_op_attr_scales, &ns);
    const int64_t *zps = pt_op_s64s(op, dnnl_graph_op_attr_zps, &nz);
    if (!scales || ns == 0) return pt_err(dnnl_invalid_arguments, "%s: scales attribute missing", name);
    if (nz != 0 && nz != ns) return pt_err(dnnl_invalid_arguments, "%s: %zu zps for %zu scales", name, nz, ns);
    if (quantize)
        for (size_t i = 0; i < ns; ++i)
            if (scales[i] == 0.f) return pt_err(dnnl_invalid_arguments, "%s: scale %zu is zero", name, i);
    pt_ref_quant_params q = {.name = name, .quantize = quantize, .ns = ns, .nz = nz};
    pt_lt sv = list_lt(dnnl_f32, ns), zv = list_lt(dnnl_s64, nz);
    PT_CHECK(build_qparams(op, src, &sv, nz ? &zv : NULL, false, &q));
    pt_ref_quant_params *p = pt_decode_params(out, fn, &q, sizeof q, nz * sizeof(int64_t) + ns * sizeof(float));
    if (!p) return dnnl_out_of_memory;
    p->zps = (int64_t *)(p + 1);
    p->scales = (float *)(p->zps + nz);
    if (nz) memcpy(p->zps, zps, nz * sizeof(int64_t));
    memcpy(p->scales, scales, ns * sizeof(float));
    return dnnl_success;
}

PT_DECODE_DECL(quantize) { return decode_static_quant(op, out, pt_ref_quantize, true); }
PT_DECODE_DECL(dequantize) { return decode_static_quant(op, out, pt_ref_dequantize, false); }

/* DynamicQuantize / DynamicDequantize: scales (and optional zero points) are
 * inputs; their addressing is fixed by their compiled shapes. */
static pt_status decode_dynamic_quant(const pt_op *op, pt_bound_kernel *out, pt_kernel_fn fn, bool quantize) {
    const char *name = pt_op_kind_name(op->kind);
    const pt_lt *src = in_lt(op, 0), *sc = in_lt(op, 1), *zp = in_lt(op, 2);
    if (!sc || !out_lt(op, 0)) return pt_err(dnnl_invalid_arguments, "%s: needs 2-3 inputs, 1 output", name);
    pt_ref_quant_params q = {.name = name, .quantize = quantize, .has_zp = zp != NULL};
    PT_CHECK(build_qparams(op, src, sc, zp, true, &q));
    return pt_decode_bind(out, fn, &q, sizeof q);
}

PT_DECODE_DECL(dynamic_quantize) { return decode_dynamic_quant(op, out, pt_ref_dynamic_quantize, true); }
PT_DECODE_DECL(dynamic_dequantize) { return decode_dynamic_quant(op, out, pt_ref_dynamic_dequantize, false); }
