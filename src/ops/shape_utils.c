/* Broadcasting and output-shape verification with unknown dims and ranks
 * (the broadcasting rules of docs/ops.md). */
#include "ops/shape_utils.h"

#include <string.h>

static bool dim_known(int64_t d) { return d >= 0; }

/* Seed 003 InferDim: `?` against `1` or `?` stays `?`; `?` against a static
 * extent other than 1 takes that extent; two static extents other than 1
 * must agree (extent 0 counts as "other than 1"). */
static pt_status infer_dim(int64_t d0, int64_t d1, int64_t *out) {
    bool k0 = dim_known(d0), k1 = dim_known(d1);
    if (!k0 && !k1) {
        *out = PT_UNKNOWN_DIM;
    } else if (!k0) {
        *out = d1 == 1 ? PT_UNKNOWN_DIM : d1;
    } else if (!k1) {
        *out = d0 == 1 ? PT_UNKNOWN_DIM : d0;
    } else if (d0 == 1) {
        *out = d1;
    } else if (d1 == 1 || d0 == d1) {
        *out = d0;
    } else {
        return dnnl_invalid_shape;
    }
    return dnnl_success;
}

pt_status pt_broadcast_shapes(int an, const int64_t *a, int bn, const int64_t *b,
                              int *ondims, int64_t *odims) {
    if (an > DNNL_MAX_NDIMS || bn > DNNL_MAX_NDIMS) return dnnl_invalid_shape;
    /* Unranked operands are dropped; with none left the result is unranked. */
    if (an < 0 && bn < 0) {
        *ondims = -1;
        return dnnl_success;
    }
    if (an < 0 || bn < 0) {
        int n = an < 0 ? bn : an;
        const int64_t *s = an < 0 ? b : a;
        int64_t tmp[DNNL_MAX_NDIMS];
        for (int d = 0; d < n; ++d) tmp[d] = dim_known(s[d]) ? s[d] : PT_UNKNOWN_DIM;
        *ondims = n;
        memcpy(odims, tmp, (size_t)n * sizeof(int64_t));
        return dnnl_success;
    }
    int r = an > bn ? an : bn;
    int64_t tmp[DNNL_MAX_NDIMS];
    for (int d = 0; d < r; ++d) {
        /* Left-pad the shorter shape with 1s. */
        int ia = d - (r - an), ib = d - (r - bn);
        int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
        if (infer_dim(da, db, &tmp[d]) != dnnl_success) {
            return pt_err(dnnl_invalid_shape,
                          "broadcast: dimension %d extents %lld and %lld are incompatible", d,
                          (long long)da, (long long)db);
        }
    }
    *ondims = r;
    memcpy(odims, tmp, (size_t)r * sizeof(int64_t));
    return dnnl_success;
}

bool pt_unidirectional_ok(int sn, const int64_t *s, int tn, const int64_t *t) {
    if (sn < 0 || tn < 0) return true; /* checked again once ranks are known */
    if (sn > tn) return false;
    for (int d = 0; d < sn; ++d) {
        int64_t sd = s[sn - 1 - d], td = t[tn - 1 - d];
        if (!dim_known(sd) || !dim_known(td)) continue;
        if (sd != 1 && sd != td) return false;
    }
    return true;
}

static bool strides_unknown(const pt_lt *lt) {
    for (int d = 0; d < lt->ndims; ++d)
        if (lt->layout.strides[d] == PT_UNKNOWN_DIM || lt->layout.strides[d] < 0) return true;
    return false;
}

pt_status pt_set_output_shape(pt_lt *out, int ndims, const int64_t *dims) {
    /* Nothing inferred (every operand unranked): nothing to check or fill. */
    if (ndims < 0) return dnnl_success;
    if (ndims > DNNL_MAX_NDIMS) return dnnl_invalid_shape;
    bool fresh_rank = out->ndims < 0;
    if (fresh_rank) {
        /* A declared unranked output takes the inferred shape as is. */
        out->ndims = ndims;
        for (int d = 0; d < ndims; ++d) out->dims[d] = dim_known(dims[d]) ? dims[d] : PT_UNKNOWN_DIM;
    } else {
        if (out->ndims != ndims) {
            return pt_err(dnnl_invalid_shape,
                          "tensor %zu: declared rank %d differs from inferred rank %d", out->id,
                          out->ndims, ndims);
        }
        /* Seed 003 verification table: inferred ? vs declared static is an
         * error; inferred static fills a declared ?; two statics must agree. */
        for (int d = 0; d < ndims; ++d) {
            int64_t inf = dims[d], dec = out->dims[d];
            if (!dim_known(inf)) {
                if (dim_known(dec)) {
                    return pt_err(dnnl_invalid_shape,
                                  "tensor %zu: dim %d declared %lld but cannot be inferred "
                                  "from the inputs",
                                  out->id, d, (long long)dec);
                }
                continue;
            }
            if (!dim_known(dec)) {
                out->dims[d] = inf;
            } else if (dec != inf) {
                return pt_err(dnnl_invalid_shape,
                              "tensor %zu: dim %d declared %lld but inferred %lld", out->id, d,
                              (long long)dec, (long long)inf);
            }
        }
    }
    if (out->layout_type == dnnl_graph_layout_type_strided) {
        if (pt_lt_shape_known(out)) {
            if (fresh_rank || strides_unknown(out)) pt_lt_make_dense(out);
        } else if (fresh_rank) {
            for (int d = 0; d < DNNL_MAX_NDIMS; ++d) out->layout.strides[d] = PT_UNKNOWN_DIM;
        }
    }
    return dnnl_success;
}

bool pt_norm_axis(int64_t a, int r, int64_t *out) {
    if (r < 0 || a < -(int64_t)r || a >= (int64_t)r) return false;
    *out = a < 0 ? a + r : a;
    return true;
}
