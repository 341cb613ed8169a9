/* Schema rows of MatMul, the softmax family, the reductions, the shape ops
 * (Concat, StaticReshape, StaticTranspose), Reorder, TypeCast, GenIndex,
 * Dropout, End and Wildcard. */
#include <string.h>

#include "ops/schema_tables.h"
#include "ops/shape_utils.h"

/* ---- MatMul ---- */

/* Output 0 must have input 0's data type or be f32 (MatMul, SoftMaxBackward). */
static bool out_type_ok(const pt_op *op) {
    dnnl_data_type_t t = op->in[0].data_type, d = op->out[0].data_type;
    return d == t || d == dnnl_f32;
}

static pt_status check_out_type(const pt_op *op, const char *out_name, const char *in_name) {
    if (out_type_ok(op)) return dnnl_success;
    return pt_op_fail(op, dnnl_invalid_graph_op,
                      "output 0 (%s) data type must equal %s type or be f32", out_name, in_name);
}

static pt_status check_matmul(const pt_op *op) { return check_out_type(op, "dst", "src"); }

static bool k_clash(int64_t a, int64_t b) { return pt_dim_known(a) && pt_dim_known(b) && a != b; }

static pt_status infer_matmul(const pt_op *op, const pt_lt *in, pt_lt *out) {
    const pt_lt *A = &in[0], *B = &in[1];
    if (A->ndims == 0 || B->ndims == 0)
        return pt_op_fail(op, dnnl_invalid_shape, "rank-0 src or weights");
    if (A->ndims < 0 || B->ndims < 0) return dnnl_success;
    int ra = A->ndims, rb = B->ndims;
    int64_t a[DNNL_MAX_NDIMS], b[DNNL_MAX_NDIMS];
    memcpy(a, A->dims, (size_t)ra * sizeof(int64_t));
    memcpy(b, B->dims, (size_t)rb * sizeof(int64_t));
    /* Transposes swap the last two dims and are ignored for 1-D operands. */
    if (ra >= 2 && pt_op_bool(op, dnnl_graph_op_attr_transpose_a, false)) {
        int64_t t = a[ra - 1];
        a[ra - 1] = a[ra - 2];
        a[ra - 2] = t;
    }
    if (rb >= 2 && pt_op_bool(op, dnnl_graph_op_attr_transpose_b, false)) {
        int64_t t = b[rb - 1];
        b[rb - 1] = b[rb - 2];
        b[rb - 2] = t;
    }
    int rd;
    int64_t d[DNNL_MAX_NDIMS];
    if (ra == 1 && rb == 1) {
        if (k_clash(a[0], b[0]))
            return pt_op_fail(op, dnnl_invalid_shape, "1-D operands of lengths %lld and %lld",
                              (long long)a[0], (long long)b[0]);
        rd = 0;
    } else if (ra == 1) {
        /* [K] x [..., K, N] -> weights shape without its K dim. */
        if (k_clash(a[0], b[rb - 2]))
            return pt_op_fail(op, dnnl_invalid_shape, "K mismatch: %lld vs %lld",
                              (long long)a[0], (long long)b[rb - 2]);
        rd = rb - 1;
        for (int i = 0; i < rb - 2; ++i) d[i] = b[i];
        d[rb - 2] = b[rb - 1];
    } else if (rb == 1) {
        /* [..., M, K] x [K] -> src shape without its last dim. */
        if (k_clash(a[ra - 1], b[0]))
            return pt_op_fail(op, dnnl_invalid_shape, "K mismatch: %lld vs %lld",
                              (long long)a[ra - 1], (long long)b[0]);
        rd = ra - 1;
        for (int i = 0; i < ra - 1; ++i) d[i] = a[i];
    } else {
        if (k_clash(a[ra - 1], b[rb - 2]))
            return pt_op_fail(op, dnnl_invalid_shape, "K mismatch: %lld vs %lld",
                              (long long)a[ra - 1], (long long)b[rb - 2]);
        int nb;
        if (pt_broadcast_shapes(ra - 2, a, rb - 2, b, &nb, d) != dnnl_success)
            return pt_op_fail(op, dnnl_invalid_shape, "batch dims are not broadcastable");
        d[nb] = a[ra - 2];
        d[nb + 1] = b[rb - 1];
        rd = nb + 2;
    }
    if (op->nin > 2 && !pt_unidirectional_ok(in[2].ndims, in[2].dims, rd, d))
        return pt_op_fail(op, dnnl_invalid_shape, "bias is not broadcastable to dst");
    return pt_set_output_shape(&out[0], rd, d);
}

/* src/weights/bias share T (add_op); dst must be T or f32. */
static bool supported_matmul(const pt_op *op) { return out_type_ok(op); }

/* ---- softmax family ---- */

static pt_status check_softmax(const pt_op *op) {
    dnnl_data_type_t s = op->in[0].data_type, d = op->out[0].data_type;
    if (s != d && s != dnnl_f32 && d != dnnl_f32)
        return pt_op_fail(op, dnnl_invalid_graph_op,
                          "src and dst types differ and neither is f32");
    return dnnl_success;
}

static pt_status check_softmax_bwd(const pt_op *op) {
    return check_out_type(op, "diff_src", "diff_dst");
}

/* Output 0 copies input 0; optional stats (SoftMax output 1) = src with the
 * axis dim set to 1.  The axis is validated once the rank is known. */
static pt_status infer_softmax(const pt_op *op, const pt_lt *in, pt_lt *out) {
    const pt_lt *src = &in[0];
    int64_t dflt = (op->kind == dnnl_graph_op_log_softmax ||
                    op->kind == dnnl_graph_op_log_softmax_backward)
            ? -1
            : 1;
    int64_t a = 0;
    if (src->ndims >= 0 &&
        !pt_norm_axis(pt_op_s64(op, dnnl_graph_op_attr_axis, dflt), src->ndims, &a))
        return pt_op_fail(op, dnnl_invalid_shape, "axis out of range for rank %d", src->ndims);
    if (op->nin > 1) /* Backward: diff_dst and dst have one shape. */
        return pt_infer_same_shape(op, &in[0], &in[1], &out[0], "diff_dst and dst shapes differ");
    PT_CHECK(pt_infer_like(&out[0], src));
    if (op->nout > 1 && src->ndims >= 0) {
        int64_t st[DNNL_MAX_NDIMS];
        memcpy(st, src->dims, (size_t)src->ndims * sizeof(int64_t));
        st[a] = 1;
        PT_CHECK(pt_set_output_shape(&out[1], src->ndims, st));
    }
    return dnnl_success;
}

static bool supported_softmax(const pt_op *op) {
    dnnl_data_type_t s = op->in[0].data_type, d = op->out[0].data_type;
    return s == d || s == dnnl_f32 || d == dnnl_f32;
}

/* ---- reductions ---- */

static pt_status check_reduce(const pt_op *op) {
    size_t n = 0;
    pt_op_s64s(op, dnnl_graph_op_attr_axes, &n);
    if (n > 0 && op->nin > 1)
        return pt_op_fail(op, dnnl_invalid_graph_op,
                          "axes given both as attribute and as input 1");
    return dnnl_success;
}

static pt_status infer_reduce(const pt_op *op, const pt_lt *in, pt_lt *out) {
    const pt_lt *src = &in[0];
    /* Runtime axes: the output shape must be declared; nothing to infer. */
    if (op->nin > 1) return dnnl_success;
    size_t na = 0;
    const int64_t *axes = pt_op_s64s(op, dnnl_graph_op_attr_axes, &na);
    if (na == 0) return pt_infer_like(&out[0], src); /* no axes: identity */
    if (src->ndims < 0) return dnnl_success;
    int r = src->ndims;
    bool reduced[DNNL_MAX_NDIMS] = {false};
    for (size_t i = 0; i < na; ++i) {
        int64_t a;
        if (!pt_norm_axis(axes[i], r, &a))
            return pt_op_fail(op, dnnl_invalid_shape, "axis %lld out of range for rank %d",
                              (long long)axes[i], r);
        if (reduced[a]) return pt_op_fail(op, dnnl_invalid_shape, "axis %lld repeated", (long long)a);
        reduced[a] = true;
    }
    bool keep = pt_op_bool(op, dnnl_graph_op_attr_keep_dims, false);
    int64_t d[DNNL_MAX_NDIMS];
    int n = 0;
    for (int i = 0; i < r; ++i) {
        if (!reduced[i])
            d[n++] = src->dims[i];
        else if (keep)
            d[n++] = 1;
    }
    return pt_set_output_shape(&out[0], n, d);
}

/* ---- Concat ---- */

static pt_status infer_concat(const pt_op *op, const pt_lt *in, pt_lt *out) {
    int r = -1;
    for (size_t i = 0; i < op->nin; ++i) {
        if (in[i].ndims < 0) continue;
        if (r >= 0 && in[i].ndims != r)
            return pt_op_fail(op, dnnl_invalid_shape, "input %zu rank %d differs from %d", i,
                              in[i].ndims, r);
        r = in[i].ndims;
    }
    if (r < 0) return dnnl_success;
    int64_t a;
    if (!pt_norm_axis(pt_op_s64(op, dnnl_graph_op_attr_axis, 0), r, &a))
        return pt_op_fail(op, dnnl_invalid_arguments, "axis out of range for rank %d", r);
    int64_t d[DNNL_MAX_NDIMS];
    for (int k = 0; k < r; ++k) d[k] = PT_UNKNOWN_DIM;
    int64_t sum = 0;
    bool sum_known = true;
    for (size_t i = 0; i < op->nin; ++i) {
        if (in[i].ndims < 0) {
            sum_known = false;
            continue;
        }
        for (int k = 0; k < r; ++k) {
            int64_t v = in[i].dims[k];
            if (k == a) {
                if (pt_dim_known(v))
                    sum += v;
                else
                    sum_known = false;
                continue;
            }
            if (!pt_dim_known(v)) continue;
            if (pt_dim_known(d[k]) && d[k] != v)
                return pt_op_fail(op, dnnl_invalid_shape,
                                  "input %zu dim %d is %lld, expected %lld", i, k, (long long)v,
                                  (long long)d[k]);
            d[k] = v;
        }
    }
    d[a] = sum_known ? sum : PT_UNKNOWN_DIM;
    return pt_set_output_shape(&out[0], r, d);
}

/* ---- StaticReshape ---- */

static pt_status infer_reshape(const pt_op *op, const pt_lt *in, pt_lt *out) {
    const pt_lt *src = &in[0];
    size_t n = 0;
    const int64_t *shape = pt_op_s64s(op, dnnl_graph_op_attr_shape, &n);
    bool special_zero = pt_op_bool(op, dnnl_graph_op_attr_special_zero, false);
    if (n > DNNL_MAX_NDIMS)
        return pt_op_fail(op, dnnl_invalid_shape, "shape has %zu entries", n);
    int64_t d[DNNL_MAX_NDIMS];
    int infer_at = -1;
    bool out_known = true; /* every resolved entry other than -1 is known */
    int64_t n_out = 1;
    for (size_t i = 0; i < n; ++i) {
        int64_t v = shape[i];
        if (v < -1) return pt_op_fail(op, dnnl_invalid_shape, "shape[%zu] = %lld", i, (long long)v);
        if (v == -1) {
            if (infer_at >= 0) return pt_op_fail(op, dnnl_invalid_shape, "more than one -1 in shape");
            infer_at = (int)i;
            d[i] = PT_UNKNOWN_DIM;
            continue;
        }
        if (v == 0 && special_zero) {
            if (src->ndims >= 0 && (int)i >= src->ndims)
                return pt_op_fail(op, dnnl_invalid_shape,
                                  "special zero at %zu beyond src rank %d", i, src->ndims);
            v = src->ndims >= 0 ? src->dims[i] : PT_UNKNOWN_DIM;
        }
        d[i] = pt_dim_known(v) ? v : PT_UNKNOWN_DIM;
        if (pt_dim_known(v))
            n_out *= v;
        else
            out_known = false;
    }
    int64_t n_in = pt_lt_nelems(src);
    if (infer_at >= 0) {
        if (out_known && n_out == 0)
            return pt_op_fail(op, dnnl_invalid_shape, "-1 with a zero-size shape product");
        if (out_known && n_in >= 0) {
            if (n_in % n_out != 0)
                return pt_op_fail(op, dnnl_invalid_shape, "%lld elements cannot take shape",
                                  (long long)n_in);
            d[infer_at] = n_in / n_out;
        }
    } else if (out_known && n_in >= 0 && n_in != n_out) {
        return pt_op_fail(op, dnnl_invalid_shape, "element count %lld != %lld", (long long)n_in,
                          (long long)n_out);
    }
    /* Nothing is known about an unranked src: infer only a fully resolved shape. */
    if (src->ndims < 0) {
        for (size_t i = 0; i < n; ++i)
            if (!pt_dim_known(d[i])) return dnnl_success;
    }
    return pt_set_output_shape(&out[0], (int)n, d);
}

/* ---- StaticTranspose ---- */

static pt_status infer_transpose(const pt_op *op, const pt_lt *in, pt_lt *out) {
    const pt_lt *src = &in[0];
    if (src->ndims < 0) return dnnl_success;
    int r = src->ndims;
    size_t n = 0;
    const int64_t *order = pt_op_s64s(op, dnnl_graph_op_attr_order, &n);
    if (n != 0 && (int)n != r)
        return pt_op_fail(op, dnnl_invalid_shape, "order has %zu entries for rank %d", n, r);
    bool used[DNNL_MAX_NDIMS] = {false};
    int64_t d[DNNL_MAX_NDIMS];
    for (int k = 0; k < r; ++k) {
        int64_t p = r - 1 - k; /* empty order: reverse */
        if (n != 0 && !pt_norm_axis(order[k], r, &p))
            return pt_op_fail(op, dnnl_invalid_shape, "order[%d] = %lld out of range", k,
                              (long long)order[k]);
        if (used[p]) return pt_op_fail(op, dnnl_invalid_shape, "order repeats axis %lld", (long long)p);
        used[p] = true;
        d[k] = src->dims[p];
    }
    return pt_set_output_shape(&out[0], r, d);
}

/* ---- TypeCast, GenIndex, Wildcard ---- */

static pt_status check_type_cast(const pt_op *op) {
    dnnl_data_type_t s = op->in[0].data_type, d = op->out[0].data_type;
    if (s == d)
        return pt_op_fail(op, dnnl_invalid_graph_op, "src and dst have the same data type");
    if (s != dnnl_f32 && d != dnnl_f32)
        return pt_op_fail(op, dnnl_invalid_graph_op, "bf16 <-> f16 casts are not supported");
    return dnnl_success;
}

static pt_status infer_gen_index(const pt_op *op, const pt_lt *in, pt_lt *out) {
    int64_t a;
    if (in[0].ndims >= 0 &&
        !pt_norm_axis(pt_op_s64(op, dnnl_graph_op_attr_axis, 0), in[0].ndims, &a))
        return pt_op_fail(op, dnnl_invalid_arguments, "axis out of range for rank %d",
                          in[0].ndims);
    return pt_infer_like(&out[0], &in[0]);
}

/* Wildcard is never computed: outputs keep their declared shapes, which must
 * be complete. */
static pt_status infer_wildcard(const pt_op *op, const pt_lt *in, pt_lt *out) {
    for (size_t i = 0; i < op->nout; ++i)
        if (!pt_lt_shape_known(&out[i]))
            return pt_op_fail(op, dnnl_unimplemented,
                              "output %zu shape unknown (Wildcard shapes are not inferred)", i);
    return dnnl_success;
}

static bool never_supported(const pt_op *op) { return false; }

/* ---- rows ---- */

static const pt_port_spec mm_in[] = {PT_PORT("src", PT_DT_FLOAT3, 'T'),
                                     PT_PORT("weights", PT_DT_FLOAT3, 'T'),
                                     PT_PORT_OPT("bias", PT_DT_FLOAT3, 'T')};
static const pt_port_spec any_float_out[] = {PT_PORT("dst", PT_DT_FLOAT3, 0)};
static const pt_port_spec sm_in[] = {PT_PORT("src", PT_DT_FLOAT3, 0)};
static const pt_port_spec sm_out[] = {PT_PORT("dst", PT_DT_FLOAT3, 0),
                                      PT_PORT_OPT("stats", PT_DT(dnnl_f32), 0)};
static const pt_port_spec smb_in[] = {PT_PORT("diff_dst", PT_DT_FLOAT3, 'T'),
                                      PT_PORT("dst", PT_DT_FLOAT3, 'T')};
static const pt_port_spec smb_out[] = {PT_PORT("diff_src", PT_DT_FLOAT3, 0)};
static const pt_port_spec t_in[] = {PT_PORT("src", PT_DT_FLOAT3, 'T')};
static const pt_port_spec t_out[] = {PT_PORT("dst", PT_DT_FLOAT3, 'T')};
static const pt_port_spec lsb_in[] = {PT_PORT("diff_dst", PT_DT_FLOAT3, 'T'),
                                      PT_PORT("dst", PT_DT_FLOAT3, 'T')};
static const pt_port_spec lsb_out[] = {PT_PORT("diff_src", PT_DT_FLOAT3, 'T')};
static const pt_port_spec red_in[] = {PT_PORT("src", PT_DT_FLOAT3, 'T'),
                                      PT_PORT_OPT("axes", PT_DT(dnnl_s32), 0)};
static const pt_port_spec concat_in[] = {PT_PORT("src_i", PT_DT_FLOAT3, 'T')};
static const pt_port_spec gi_out[] = {PT_PORT("dst", PT_DT(dnnl_s32), 0)};
static const pt_port_spec drop_in[] = {
        PT_PORT("src", PT_DT_FLOAT3, 'T'), PT_PORT("seed", PT_DT(dnnl_s64), 0),
        PT_PORT("offset", PT_DT(dnnl_s64), 0), PT_PORT("probability", PT_DT(dnnl_f32), 0)};
static const pt_port_spec drop_out[] = {PT_PORT("dst", PT_DT_FLOAT3, 'T'),
                                        PT_PORT_OPT("mask", PT_DT(dnnl_u8), 0)};
static const pt_port_spec any_in[] = {PT_PORT("src", PT_DT_ANY, 0)};
static const pt_port_spec any_out[] = {PT_PORT_OPT("dst", PT_DT_ANY, 0)};
static const pt_port_spec any_opt_in[] = {PT_PORT_OPT("src", PT_DT_ANY, 0)};

static const pt_attr_spec a_matmul[] = {
        PT_OPT_BOOL(dnnl_graph_op_attr_transpose_a, 0),
        PT_OPT_BOOL(dnnl_graph_op_attr_transpose_b, 0),
        PT_OPT_STR(dnnl_graph_op_attr_accumulation_mode, "strict",
                   "strict|relaxed|any|f32|s32|f16"),
        PT_ATTR_LIST_END};
static const pt_attr_spec a_softmax[] = {
        PT_OPT_S64(dnnl_graph_op_attr_axis, 1),
        PT_OPT_STR(dnnl_graph_op_attr_mode, "none", "none|inf_as_zero"), PT_ATTR_LIST_END};
static const pt_attr_spec a_axis_1[] = {PT_OPT_S64(dnnl_graph_op_attr_axis, 1), PT_ATTR_LIST_END};
static const pt_attr_spec a_axis_m1[] = {PT_OPT_S64(dnnl_graph_op_attr_axis, -1),
                                         PT_ATTR_LIST_END};
static const pt_attr_spec a_axis_req[] = {PT_REQ_S64(dnnl_graph_op_attr_axis), PT_ATTR_LIST_END};
/* axes default [] = "not provided" and is left absent (see op_schema.c). */
static const pt_attr_spec a_reduce[] = {PT_OPT_S64S(dnnl_graph_op_attr_axes),
                                        PT_OPT_BOOL(dnnl_graph_op_attr_keep_dims, 0),
                                        PT_ATTR_LIST_END};
static const pt_attr_spec a_reshape[] = {PT_REQ_S64S(dnnl_graph_op_attr_shape),
                                         PT_REQ_BOOL(dnnl_graph_op_attr_special_zero),
                                         PT_ATTR_LIST_END};
static const pt_attr_spec a_transpose[] = {PT_REQ_S64S(dnnl_graph_op_attr_order),
                                           PT_ATTR_LIST_END};

/*     row               inputs     outputs        attrs        check              infer            supported */
PT_ROW(matmul,           mm_in,     any_float_out, a_matmul,    check_matmul,      infer_matmul,    supported_matmul);
PT_ROW(softmax,          sm_in,     sm_out,        a_softmax,   check_softmax,     infer_softmax,   supported_softmax);
PT_ROW(softmax_bwd,      smb_in,    smb_out,       a_axis_1,    check_softmax_bwd, infer_softmax,   NULL);
PT_ROW(log_softmax,      t_in,      t_out,         a_axis_m1,   NULL,              infer_softmax,   NULL);
PT_ROW(log_softmax_bwd,  lsb_in,    lsb_out,       a_axis_m1,   NULL,              infer_softmax,   NULL);
PT_ROW(reduce,           red_in,    t_out,         a_reduce,    check_reduce,      infer_reduce,    NULL);
PT_ROW(static_reshape,   t_in,      t_out,         a_reshape,   NULL,              infer_reshape,   NULL);
PT_ROW(static_transpose, t_in,      t_out,         a_transpose, NULL,              infer_transpose, NULL);
PT_ROW(reorder,          t_in,      t_out,         NULL,        NULL,              NULL,            NULL);
PT_ROW(type_cast,        sm_in,     any_float_out, NULL,        check_type_cast,   NULL,            NULL);
PT_ROW(gen_index,        sm_in,     gi_out,        a_axis_req,  NULL,              infer_gen_index, NULL);
PT_ROW(dropout,          drop_in,   drop_out,      NULL,        NULL,              NULL,            NULL);
/* Concat repeats its one input spec; Wildcard takes and gives any number of
 * values; End takes one value and produces nothing. */
const pt_op_schema pt_schema_concat =
        PT_SCHEMA(concat_in, t_out, .max_in = 64, .attrs = a_axis_req, .infer = infer_concat);
const pt_op_schema pt_schema_wildcard = PT_SCHEMA(any_opt_in, any_out, .max_in = -1, .max_out = -1,
                                                  .infer = infer_wildcard, .supported = never_supported);
const pt_op_schema pt_schema_end = {.inputs = any_in, .n_in_specs = 1};
