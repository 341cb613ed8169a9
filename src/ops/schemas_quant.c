/* Schema rows of Quantize, Dequantize (attribute scales/zps) and
 * DynamicQuantize, DynamicDequantize (tensor scales/zps, per_tensor /
 * per_channel / per_group with `group_shape` or the list form
 * `axis`+`groups`); quantization is described in docs/ops.md. */
#include <stdio.h>
#include <math.h>
#include <string.h>

#include "ops/schema_tables.h"
#include "ops/shape_utils.h"

#define PT_DT_INT8 (PT_DT(dnnl_s8) | PT_DT(dnnl_u8))
#define PT_DT_INT4 (PT_DT(dnnl_s4) | PT_DT(dnnl_u4))
#define PT_DT_FP8 (PT_DT(dnnl_f8_e4m3) | PT_DT(dnnl_f8_e5m2))

static bool is_fp8(dnnl_data_type_t dt) { return dt == dnnl_f8_e4m3 || dt == dnnl_f8_e5m2; }
static bool is_int4(dnnl_data_type_t dt) { return dt == dnnl_s4 || dt == dnnl_u4; }

static const char *qtype_of(const pt_op *op) {
    return pt_op_str(op, dnnl_graph_op_attr_qtype, "per_tensor");
}

/* ---- Quantize / Dequantize (static) ---- */

static pt_status check_static(const pt_op *op) {
    bool per_tensor = strcmp(qtype_of(op), "per_tensor") == 0;
    size_t ns = 0, nz = 0;
    const float *sc = pt_op_f32s(op, dnnl_graph_op_attr_scales, &ns);
    /* NaN or Inf scales would fill the tensor with NaN or saturated values;
     * Quantize divides by its scales, so a zero is refused too. */
    for (size_t i = 0; i < ns; ++i) {
        if (!isfinite(sc[i]))
            return pt_op_fail(op, dnnl_invalid_graph_op, "scale %zu is %g: scales must be finite", i, (double)sc[i]);
        if (sc[i] == 0.0f && op->kind == dnnl_graph_op_quantize)
            return pt_op_fail(op, dnnl_invalid_graph_op, "scale %zu is zero (Quantize divides by it)", i);
    }
    bool has_zps = pt_op_has(op, dnnl_graph_op_attr_zps);
    pt_op_s64s(op, dnnl_graph_op_attr_zps, &nz);
    if (per_tensor && ns != 1)
        return pt_op_fail(op, dnnl_invalid_graph_op, "per_tensor needs 1 scale, got %zu", ns);
    if (has_zps && nz != ns)
        return pt_op_fail(op, dnnl_invalid_graph_op, "%zu zps for %zu scales", nz, ns);
    /* The quantized side is dst for Quantize and src for Dequantize. */
    dnnl_data_type_t q =
            op->kind == dnnl_graph_op_quantize ? op->out[0].data_type : op->in[0].data_type;
    if (has_zps && is_fp8(q))
        return pt_op_fail(op, dnnl_invalid_graph_op, "zps are not allowed with an fp8 tensor");
    return dnnl_success;
}

static pt_status infer_static(const pt_op *op, const pt_lt *in, pt_lt *out) {
    const pt_lt *src = &in[0];
    size_t ns = 0;
    const float *sc = pt_op_f32s(op, dnnl_graph_op_attr_scales, &ns);
    if (op->kind == dnnl_graph_op_quantize) {
        for (size_t i = 0; i < ns; ++i)
            if (sc[i] == 0.0f)
                return pt_op_fail(op, dnnl_invalid_arguments, "scale %zu is zero", i);
    }
    if (strcmp(qtype_of(op), "per_channel") == 0 && src->ndims >= 0) {
        int64_t a;
        if (!pt_norm_axis(pt_op_s64(op, dnnl_graph_op_attr_axis, 1), src->ndims, &a))
            return pt_op_fail(op, dnnl_invalid_shape, "axis out of range for rank %d",
                              src->ndims);
        if (pt_dim_known(src->dims[a]) && (int64_t)ns != src->dims[a])
            return pt_op_fail(op, dnnl_invalid_shape, "%zu scales for %lld channels", ns,
                              (long long)src->dims[a]);
    }
    return pt_infer_like(&out[0], src);
}

/* ---- DynamicQuantize / DynamicDequantize ---- */

/* Static shape equality where both sides are known (ranks included). */
static bool shapes_clash(const pt_lt *a, const pt_lt *b) {
    if (a->ndims < 0 || b->ndims < 0) return false;
    if (a->ndims != b->ndims) return true;
    for (int d = 0; d < a->ndims; ++d)
        if (pt_dim_known(a->dims[d]) && pt_dim_known(b->dims[d]) && a->dims[d] != b->dims[d])
            return true;
    return false;
}

/* Group sizes from `group_shape` (oneDNN form).  Returns false with a
 * message in `why` when the attribute is malformed for rank r. */
static bool groups_from_group_shape(const pt_op *op, int r, int64_t *G, char *why, size_t cap) {
    size_t n = 0;
    const int64_t *gs = pt_op_s64s(op, dnnl_graph_op_attr_group_shape, &n);
    if ((int)n != r) {
        snprintf(why, cap, "group_shape has %zu entries for rank %d", n, r);
        return false;
    }
    for (int d = 0; d < r; ++d) {
        if (gs[d] < 1) {
            snprintf(why, cap, "group_shape[%d] = %lld < 1", d, (long long)gs[d]);
            return false;
        }
        G[d] = gs[d];
    }
    return true;
}

/* Group sizes from the list form: dimension axis[i] is split into groups[i]
 * groups; other dims get G = 1.  G[d] = -1 where the source
 * extent is unknown. */
static bool groups_from_lists(const pt_op *op, const pt_lt *src, int64_t *G, char *why,
                             size_t cap) {
    int r = src->ndims;
    size_t ng = 0, na = 0;
    const int64_t *groups = pt_op_s64s(op, dnnl_graph_op_attr_groups, &ng);
    const int64_t *axis = pt_op_s64s(op, dnnl_graph_op_attr_axis, &na);
    bool named[DNNL_MAX_NDIMS] = {false};
    for (int d = 0; d < r; ++d) G[d] = 1;
    if ((int)na > r) {
        snprintf(why, cap, "%zu axes for rank %d", na, r);
        return false;
    }
    if (ng > na) {
        snprintf(why, cap, "%zu groups for %zu axes", ng, na);
        return false;
    }
    for (size_t i = 0; i < na; ++i) {
        int64_t a;
        if (!pt_norm_axis(axis[i], r, &a)) {
            snprintf(why, cap, "axis %lld out of range for rank %d", (long long)axis[i], r);
            return false;
        }
        if (named[a]) {
            snprintf(why, cap, "axis %lld repeated", (long long)a);
            return false;
        }
        named[a] = true;
        if (i >= ng) continue;
        int64_t n = groups[i], ext = src->dims[a];
        if (n < 1) {
            snprintf(why, cap, "groups[%zu] = %lld < 1", i, (long long)n);
            return false;
        }
        if (!pt_dim_known(ext)) {
            G[a] = -1;
        } else if (n > ext || ext % n != 0) {
            snprintf(why, cap, "dim %lld (extent %lld) cannot be split into %lld groups",
                     (long long)a, (long long)ext, (long long)n);
            return false;
        } else {
            G[a] = ext / n;
        }
    }
    return true;
}

/* True when two resolved group vectors differ on a dim known in both. */
static bool groups_disagree(const int64_t *g1, const int64_t *g2, int r, int *dim) {
    for (int d = 0; d < r; ++d)
        if (g1[d] >= 0 && g2[d] >= 0 && g1[d] != g2[d]) {
            *dim = d;
            return true;
        }
    return false;
}

/* Resolves G for per_group at compile time: one form is needed; when both
 * are given they must agree. */
static pt_status resolve_groups(const pt_op *op, const pt_lt *src, int64_t *G) {
    char why[160];
    bool has_gs = pt_op_has(op, dnnl_graph_op_attr_group_shape);
    bool has_groups = pt_op_has(op, dnnl_graph_op_attr_groups);
    if (!has_gs && !has_groups)
        return pt_op_fail(op, dnnl_invalid_shape, "per_group needs group_shape or groups");
    int64_t g2[DNNL_MAX_NDIMS];
    if (has_gs && !groups_from_group_shape(op, src->ndims, G, why, sizeof why))
        return pt_op_fail(op, dnnl_invalid_shape, "%s", why);
    if (has_groups && !groups_from_lists(op, src, has_gs ? g2 : G, why, sizeof why))
        return pt_op_fail(op, dnnl_invalid_shape, "%s", why);
    int d;
    if (has_gs && has_groups && groups_disagree(G, g2, src->ndims, &d))
        return pt_op_fail(op, dnnl_invalid_shape, "group_shape and groups disagree on dim %d", d);
    return dnnl_success;
}

/* Checks scales/zps shapes against the granularity.  `full` adds the checks
 * that oneDNN defers to compile time (they still run only where shapes are
 * known); add_op runs the subset with full == false. */
static pt_status check_dynamic_shapes(const pt_op *op, const pt_lt *in, size_t nin, bool full) {
    pt_status st = full ? dnnl_invalid_shape : dnnl_invalid_graph_op;
    const pt_lt *src = &in[0], *sc = &in[1], *zp = nin > 2 ? &in[2] : NULL;
    const char *qt = qtype_of(op);
    int64_t ns = pt_lt_nelems(sc), nz = zp ? pt_lt_nelems(zp) : -1;
    size_t na = 0;
    pt_op_s64s(op, dnnl_graph_op_attr_axis, &na);
    if (strcmp(qt, "per_tensor") == 0) {
        if (ns > 1) return pt_op_fail(op, st, "per_tensor needs 1 scale, got %lld", (long long)ns);
        if (nz > 1) return pt_op_fail(op, st, "per_tensor needs 1 zero point, got %lld", (long long)nz);
        if (full && na > 1) return pt_op_fail(op, st, "several axes need qtype per_group");
        return dnnl_success;
    }
    if (strcmp(qt, "per_channel") == 0) {
        if (ns >= 0 && nz >= 0 && nz != 1 && nz != ns)
            return pt_op_fail(op, st, "%lld zero points for %lld scales", (long long)nz,
                              (long long)ns);
        if (!full) return dnnl_success;
        if (na > 1) return pt_op_fail(op, st, "several axes need qtype per_group");
        if (sc->ndims >= 0 && sc->ndims != 1)
            return pt_op_fail(op, st, "per_channel scales must be 1-D");
        if (src->ndims < 0) return dnnl_success;
        int64_t a;
        if (!pt_norm_axis(pt_op_s64(op, dnnl_graph_op_attr_axis, 1), src->ndims, &a))
            return pt_op_fail(op, st, "axis out of range for rank %d", src->ndims);
        if (ns >= 0 && pt_dim_known(src->dims[a]) && ns != src->dims[a])
            return pt_op_fail(op, st, "%lld scales for %lld channels", (long long)ns,
                              (long long)src->dims[a]);
        return dnnl_success;
    }
    /* per_group */
    if (src->ndims >= 0 && src->ndims < 2)
        return pt_op_fail(op, st, "per_group needs src rank >= 2, got %d", src->ndims);
    if (src->ndims >= 0 && sc->ndims >= 0 && sc->ndims != src->ndims)
        return pt_op_fail(op, st, "scales rank %d != src rank %d", sc->ndims, src->ndims);
    if (zp && shapes_clash(zp, sc))
        return pt_op_fail(op, st, "zero points must have the scales' shape");
    if (src->ndims < 0) return dnnl_success;
    int64_t G[DNNL_MAX_NDIMS];
    if (!full) {
        /* add_op: only two well-formed forms that disagree are an error here;
         * a malformed or missing form is reported at compile time. */
        int64_t g2[DNNL_MAX_NDIMS];
        char why[160];
        int d;
        if (pt_op_has(op, dnnl_graph_op_attr_group_shape) &&
            pt_op_has(op, dnnl_graph_op_attr_groups) &&
            groups_from_group_shape(op, src->ndims, G, why, sizeof why) &&
            groups_from_lists(op, src, g2, why, sizeof why) &&
            groups_disagree(G, g2, src->ndims, &d))
            return pt_op_fail(op, st, "group_shape and groups disagree on dim %d", d);
        return dnnl_success;
    }
    PT_CHECK(resolve_groups(op, src, G));
    if (sc->ndims < 0) return dnnl_success;
    for (int d = 0; d < src->ndims; ++d) {
        int64_t s = src->dims[d], c = sc->dims[d];
        if (G[d] < 0 || !pt_dim_known(s) || !pt_dim_known(c)) continue;
        if (c * G[d] != s)
            return pt_op_fail(op, st, "scales dim %d is %lld, expected %lld / %lld", d,
                              (long long)c, (long long)s, (long long)G[d]);
    }
    return dnnl_success;
}

static pt_status check_dynamic(const pt_op *op) {
    return check_dynamic_shapes(op, op->in, op->nin, false);
}

static pt_status infer_dynamic(const pt_op *op, const pt_lt *in, pt_lt *out) {
    PT_CHECK(check_dynamic_shapes(op, in, op->nin, true));
    return pt_infer_like(&out[0], &in[0]);
}

/* Zero-point type must match the width of the integer side. */
static bool zps_match(dnnl_data_type_t q, const pt_op *op) {
    if (op->nin < 3) return true;
    dnnl_data_type_t z = op->in[2].data_type;
    if (z == dnnl_s32) return true;
    return is_int4(q) ? is_int4(z) : (z == dnnl_s8 || z == dnnl_u8);
}
static bool supported_dyn_dequant(const pt_op *op) { return zps_match(op->in[0].data_type, op); }
static bool supported_dyn_quant(const pt_op *op) { return zps_match(op->out[0].data_type, op); }

/* ---- rows ---- */

static const pt_port_spec q_in[] = {PT_PORT("src", PT_DT(dnnl_f32), 0)};
static const pt_port_spec q_out[] = {PT_PORT("dst", PT_DT_INT8 | PT_DT_FP8, 0)};
static const pt_port_spec dq_in[] = {PT_PORT("src", PT_DT_INT8 | PT_DT_FP8, 0)};
static const pt_port_spec dq_out[] = {PT_PORT("dst", PT_DT(dnnl_f32), 0)};
static const pt_port_spec dynq_in[] = {
        PT_PORT("src", PT_DT(dnnl_f32), 0), PT_PORT("scales", PT_DT(dnnl_f32), 0),
        PT_PORT_OPT("zps", PT_DT_INT8 | PT_DT_INT4 | PT_DT(dnnl_s32), 0)};
static const pt_port_spec dynq_out[] = {PT_PORT("dst", PT_DT_INT8 | PT_DT_INT4, 0)};
static const pt_port_spec dyndq_in[] = {
        PT_PORT("src", PT_DT_INT8 | PT_DT_INT4, 0), PT_PORT("scales", PT_DT_FLOAT3, 'S'),
        PT_PORT_OPT("zps", PT_DT_INT8 | PT_DT_INT4 | PT_DT(dnnl_s32), 0)};
static const pt_port_spec dyndq_out[] = {PT_PORT("dst", PT_DT_FLOAT3, 'S')};

static const int64_t axis_one[] = {1};
static const pt_attr_spec a_static[] = {
        PT_OPT_STR(dnnl_graph_op_attr_qtype, "per_tensor", "per_tensor|per_channel"),
        PT_OPT_S64(dnnl_graph_op_attr_axis, 1), PT_REQ_F32S(dnnl_graph_op_attr_scales),
        PT_OPT_S64S(dnnl_graph_op_attr_zps), PT_ATTR_LIST_END};
/* axis and groups may be lists here (the list form); axis {1} is stored as the
 * scalar form, which readers treat as a one-element list. */
static const pt_attr_spec a_dynamic[] = {
        PT_OPT_STR(dnnl_graph_op_attr_qtype, "per_tensor", "per_tensor|per_channel|per_group"),
        PT_OPT_S64S_DEF(dnnl_graph_op_attr_axis, axis_one),
        PT_OPT_S64S(dnnl_graph_op_attr_group_shape), PT_OPT_S64S(dnnl_graph_op_attr_groups),
        PT_ATTR_LIST_END};

/*     row                 inputs    outputs    attrs      check          infer          supported */
PT_ROW(quantize,           q_in,     q_out,     a_static,  check_static,  infer_static,  NULL);
PT_ROW(dequantize,         dq_in,    dq_out,    a_static,  check_static,  infer_static,  NULL);
PT_ROW(dynamic_quantize,   dynq_in,  dynq_out,  a_dynamic, check_dynamic, infer_dynamic, supported_dyn_quant);
PT_ROW(dynamic_dequantize, dyndq_in, dyndq_out, a_dynamic, check_dynamic, infer_dynamic, supported_dyn_dequant);
