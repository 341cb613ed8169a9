/* Schema rows of the spatial ops: pooling, convolution and transposed
 * convolution (forward and backward), interpolation and batch normalization
 * (spatial geometry, the ops and their supported data types: docs/ops.md). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ir/dtype.h"
#include "ops/schema_tables.h"
#include "ops/shape_utils.h"
#include "ops/spatial_utils.h"

#define MAXD DNNL_MAX_NDIMS
#define UNK (-1) /* internal marker for an extent that is not known yet */

#define A_STRIDES dnnl_graph_op_attr_strides
#define A_PADS_B dnnl_graph_op_attr_pads_begin
#define A_PADS_E dnnl_graph_op_attr_pads_end
#define A_KERNEL dnnl_graph_op_attr_kernel
#define A_DIL dnnl_graph_op_attr_dilations
#define A_OPAD dnnl_graph_op_attr_output_padding
#define A_GROUPS dnnl_graph_op_attr_groups
#define A_AUTO_PAD dnnl_graph_op_attr_auto_pad
#define A_DFMT dnnl_graph_op_attr_data_format
#define A_WFMT dnnl_graph_op_attr_weights_format
#define A_ROUND dnnl_graph_op_attr_rounding_type
#define A_SIZES dnnl_graph_op_attr_sizes
#define A_SCALES dnnl_graph_op_attr_scales
#define A_EPS dnnl_graph_op_attr_epsilon
#define A_MOMENTUM dnnl_graph_op_attr_momentum

#define AUTO_PAD_SET "None|SAME_UPPER|SAME_LOWER|VALID"
#define DFMT_SET "NCX|NXC"
#define CONV_WFMT_SET "OIX|XIO"
#define DECONV_WFMT_SET "IOX|XOI"
#define MODE_SET "nearest|linear|bilinear|trilinear"
#define CTM_SET "half_pixel|align_corners"

typedef long long ll; /* for printing */

/* ---- shape helpers ----------------------------------------------------- */

static int64_t dim_at(const pt_lt *lt, int i) {
    if (lt->ndims < 0 || i < 0 || i >= lt->ndims) return UNK;
    return lt->dims[i] >= 0 ? lt->dims[i] : UNK;
}

/* Two extents agree unless both are known and differ. */
static bool same(int64_t a, int64_t b) { return a == UNK || b == UNK || a == b; }

/* Folds a second source of one extent into `*acc`; false on a contradiction. */
static bool merge(int64_t *acc, int64_t v) {
    if (!same(*acc, v)) return false;
    if (*acc == UNK) *acc = v;
    return true;
}

/* Writes an inferred shape (UNK = not inferable).  Dims that cannot be
 * inferred keep the declared value: a dynamic input dim never rejects a
 * declared output (only known inferred dims are verified). */
static pt_status emit(pt_lt *out, int r, const int64_t *d) {
    int64_t tmp[MAXD];
    for (int i = 0; i < r; ++i) {
        if (d[i] != UNK)
            tmp[i] = d[i];
        else if (out->ndims == r && out->dims[i] >= 0)
            tmp[i] = out->dims[i];
        else
            tmp[i] = PT_UNKNOWN_DIM;
    }
    return pt_set_output_shape(out, r, tmp);
}

static void fill(int64_t *d, int n, int64_t v) {
    for (int i = 0; i < n; ++i) d[i] = v;
}

/* Takes the rank of `lt` into `*r` (first known one wins); contradicting
 * known ranks -> invalid_shape. */
static pt_status agree_rank(const pt_op *op, int *r, const pt_lt *lt, const char *what) {
    if (lt->ndims < 0) return dnnl_success;
    if (lt->ndims > MAXD)
        return pt_op_fail(op, dnnl_invalid_shape, "%s rank %d too large", what, lt->ndims);
    if (*r < 0) {
        *r = lt->ndims;
    } else if (*r != lt->ndims) {
        return pt_op_fail(op, dnnl_invalid_shape, "%s has rank %d, expected %d", what, lt->ndims,
                          *r);
    }
    return dnnl_success;
}

static pt_status rank_in(const pt_op *op, int r, int lo, int hi, const char *what) {
    if (r < lo || r > hi)
        return pt_op_fail(op, dnnl_invalid_shape, "%s rank %d not in [%d, %d]", what, r, lo, hi);
    return dnnl_success;
}

/* Rank shared by three tensors; [3, hi] once known (r = -1: all unknown). */
static pt_status rank3(const pt_op *op, const pt_lt *a, const char *an, const pt_lt *b,
                       const char *bn, const pt_lt *c, const char *cn, int hi, int *r) {
    *r = -1;
    PT_CHECK(agree_rank(op, r, a, an));
    PT_CHECK(agree_rank(op, r, b, bn));
    PT_CHECK(agree_rank(op, r, c, cn));
    if (*r >= 0) PT_CHECK(rank_in(op, *r, 3, hi, an));
    return dnnl_success;
}

static bool is_ncx(const pt_op *op) { return strcmp(pt_op_str(op, A_DFMT, "NXC"), "NCX") == 0; }
static int ch_axis(bool ncx, int r) { return ncx ? 1 : r - 1; }
static int sp_axis(bool ncx, int j) { return ncx ? 2 + j : 1 + j; }

/* Positions of the O and I extents and of the first kernel extent in a
 * weights tensor of rank r: "OIX"/"IOX" lead with the channels,
 * "XIO"/"XOI" end with them. */
typedef struct {
    int o, i, k0;
} wlayout;

static wlayout weights_layout(const pt_op *op, bool transpose, int r) {
    const char *f = pt_op_str(op, A_WFMT, transpose ? "XOI" : "XIO");
    wlayout w;
    bool x_first = f[0] == 'X';
    bool o_first = x_first ? f[1] == 'O' : f[0] == 'O';
    int a = x_first ? r - 2 : 0, b = x_first ? r - 1 : 1;
    w.o = o_first ? a : b;
    w.i = o_first ? b : a;
    w.k0 = x_first ? 0 : 2;
    return w;
}

/* ---- geometry attributes ----------------------------------------------- */

typedef struct {
    int k;
    int64_t stride[MAXD], dil[MAXD], kern[MAXD], pb[MAXD], pe[MAXD], opad[MAXD];
    const char *auto_pad;
    bool ceil_mode;
} geom;

enum {
    G_KERNEL = 1,  /* `kernel` attribute (pooling) */
    G_DIL = 2,     /* required `dilations` (convolutions) */
    G_DIL_OPT = 4, /* optional `dilations`, empty = all 1 (max pooling) */
    G_OPAD = 8,    /* `output_padding` used (ConvTranspose) */
};

/* Reads a per-spatial-dim list; with `empty_ok` an absent/empty list means
 * every entry is `dflt`.  Wrong length -> invalid_shape; values
 * below `min` -> invalid_shape (add_op rejects them first). */
static pt_status read_list(const pt_op *op, int attr, int k, bool empty_ok, int64_t dflt,
                           int64_t min, int64_t *dst) {
    size_t n = 0;
    const int64_t *v = pt_op_s64s(op, attr, &n);
    if (n == 0 && empty_ok) {
        fill(dst, k, dflt);
        return dnnl_success;
    }
    /* Serialised oneDNN graphs may carry a full 12-entry output_padding list
     * whose tail is zero: accept trailing zeros beyond the spatial dims. */
    if (attr == A_OPAD && v && n > (size_t)k) {
        bool tail_zero = true;
        for (size_t j = (size_t)k; j < n; ++j) tail_zero = tail_zero && v[j] == 0;
        if (tail_zero) n = (size_t)k;
    }
    if (n != (size_t)k || !v)
        return pt_op_fail(op, dnnl_invalid_shape,
                          "%s has %zu entries, expected %d (one per spatial dim)",
                          pt_attr_name(attr), n, k);
    for (int j = 0; j < k; ++j) {
        if (v[j] < min)
            return pt_op_fail(op, dnnl_invalid_shape, "%s[%d] = %lld, must be >= %lld",
                              pt_attr_name(attr), j, (ll)v[j], (ll)min);
        dst[j] = v[j];
    }
    return dnnl_success;
}

static pt_status read_geom(const pt_op *op, int k, unsigned flags, geom *g) {
    g->k = k;
    PT_CHECK(read_list(op, A_STRIDES, k, false, 1, 1, g->stride));
    if (flags & G_KERNEL)
        PT_CHECK(read_list(op, A_KERNEL, k, false, 1, 1, g->kern));
    else
        fill(g->kern, k, 1);
    if (flags & (G_DIL | G_DIL_OPT))
        PT_CHECK(read_list(op, A_DIL, k, (flags & G_DIL_OPT) != 0, 1, 1, g->dil));
    else
        fill(g->dil, k, 1);
    g->auto_pad = pt_op_str(op, A_AUTO_PAD, "None");
    /* Explicit pads are ignored (and not length-checked) under auto_pad. */
    if (pt_auto_pad_none(g->auto_pad)) {
        PT_CHECK(read_list(op, A_PADS_B, k, true, 0, 0, g->pb));
        PT_CHECK(read_list(op, A_PADS_E, k, true, 0, 0, g->pe));
    } else {
        fill(g->pb, k, 0);
        fill(g->pe, k, 0);
    }
    if (flags & G_OPAD)
        PT_CHECK(read_list(op, A_OPAD, k, true, 0, 0, g->opad));
    else
        fill(g->opad, k, 0);
    g->ceil_mode = strcmp(pt_op_str(op, A_ROUND, "floor"), "ceil") == 0;
    return dnnl_success;
}

/* Output extent of spatial dim j from input extent `in` and kernel extent
 * `kern`: the convolution/pooling formula, or with `transpose` the
 * ConvTranspose one (with output_padding).  UNK while either is unknown. */
static pt_status out_extent(const pt_op *op, const geom *g, int j, bool transpose, int64_t in,
                            int64_t kern, int64_t *o) {
    if (in == UNK || kern == UNK) {
        *o = UNK;
        return dnnl_success;
    }
    int64_t pb, pe;
    pt_resolve_pad(g->auto_pad, transpose, in, kern, g->stride[j], g->dil[j], g->pb[j], g->pe[j],
                   &pb, &pe);
    *o = transpose ? pt_deconv_out_extent(in, kern, g->stride[j], g->dil[j], pb, pe, g->opad[j])
                   : pt_conv_out_extent(in, kern, g->stride[j], g->dil[j], pb, pe, g->ceil_mode);
    if (*o >= 0) return dnnl_success;
    char opad[48] = "";
    if (transpose) snprintf(opad, sizeof opad, ", output_padding %lld", (ll)g->opad[j]);
    return pt_op_fail(op, dnnl_invalid_shape,
                      "spatial dim %d: input %lld, kernel %lld, stride %lld, dilation %lld, "
                      "pads %lld+%lld%s give a non-positive output extent",
                      j, (ll)in, (ll)kern, (ll)g->stride[j], (ll)g->dil[j], (ll)pb, (ll)pe, opad);
}

static pt_status fwd_extent(const pt_op *op, const geom *g, int j, int64_t in, int64_t kern,
                            int64_t *o) {
    return out_extent(op, g, j, false, in, kern, o);
}

static pt_status mismatch(const pt_op *op, const char *what, int64_t got, int64_t want) {
    return pt_op_fail(op, dnnl_invalid_shape, "%s is %lld, expected %lld", what, (ll)got, (ll)want);
}

/* ---- backward shape sources -------------------------------------------- */

/* The result shape of a backward op whose shape is not derivable from its
 * inputs: the shape attribute when set (oneDNN stores all zeros as "unset"),
 * else a fully declared output.  *found = false when neither exists. */
static pt_status given_shape(const pt_op *op, int attr, const pt_lt *out, bool *found, int *r,
                             int64_t *d) {
    size_t n = 0;
    const int64_t *v = pt_op_s64s(op, attr, &n);
    bool set = false;
    for (size_t i = 0; v && i < n; ++i) set = set || v[i] != 0;
    *found = false;
    if (set) {
        if (n > MAXD)
            return pt_op_fail(op, dnnl_invalid_shape, "%s has %zu entries (max %d)",
                              pt_attr_name(attr), n, MAXD);
        for (size_t i = 0; i < n; ++i) {
            if (v[i] < 0)
                return pt_op_fail(op, dnnl_invalid_shape, "%s[%zu] = %lld is negative",
                                  pt_attr_name(attr), i, (ll)v[i]);
            d[i] = v[i];
        }
        *r = (int)n;
        *found = true;
    } else if (pt_lt_shape_known(out)) {
        for (int i = 0; i < out->ndims; ++i) d[i] = out->dims[i];
        *r = out->ndims;
        *found = true;
    }
    return dnnl_success;
}

/* Writes what is known of the result and reports the missing shape source:
 * a runtime-only shape input cannot be read at shape inference
 * (dnnl_unimplemented); no source at all is a shape error. */
static pt_status no_shape_source(const pt_op *op, int attr, bool input_given, pt_lt *out, int r,
                                 const int64_t *partial) {
    if (r >= 0) PT_CHECK(emit(out, r, partial));
    if (input_given)
        return pt_op_fail(op, dnnl_unimplemented,
                          "output shape comes only from the runtime %s input; declare the output "
                          "shape or set the %s attribute",
                          pt_attr_name(attr), pt_attr_name(attr));
    return pt_op_fail(op, dnnl_invalid_shape,
                      "no %s attribute or input and the output shape is not declared",
                      pt_attr_name(attr));
}

/* ---- pooling ----------------------------------------------------------- */

static pt_status infer_pool_fwd(const pt_op *op, const pt_lt *in, pt_lt *out, unsigned flags) {
    int r = -1;
    PT_CHECK(agree_rank(op, &r, &in[0], "src"));
    PT_CHECK(agree_rank(op, &r, &out[0], "dst"));
    if (r < 0) return dnnl_success;
    PT_CHECK(rank_in(op, r, 3, 5, "src"));
    bool ncx = is_ncx(op);
    int k = r - 2, c = ch_axis(ncx, r);
    geom g;
    PT_CHECK(read_geom(op, k, flags, &g));
    int64_t d[MAXD];
    d[0] = dim_at(&in[0], 0);
    d[c] = dim_at(&in[0], c);
    for (int j = 0; j < k; ++j) {
        int x = sp_axis(ncx, j);
        PT_CHECK(fwd_extent(op, &g, j, dim_at(&in[0], x), g.kern[j], &d[x]));
    }
    return emit(&out[0], r, d);
}

static pt_status infer_avg_pool(const pt_op *op, const pt_lt *in, pt_lt *out) {
    return infer_pool_fwd(op, in, out, G_KERNEL);
}
static pt_status infer_max_pool(const pt_op *op, const pt_lt *in, pt_lt *out) {
    return infer_pool_fwd(op, in, out, G_KERNEL | G_DIL_OPT);
}

/* diff_dst must be the forward (floor) pooling output of diff_src `ds`. */
static pt_status verify_pool_diff_dst(const pt_op *op, const geom *g, bool ncx, int r,
                                      const int64_t *ds, const pt_lt *dd) {
    if (dd->ndims >= 0 && dd->ndims != r)
        return pt_op_fail(op, dnnl_invalid_shape, "diff_dst rank %d differs from diff_src rank %d",
                          dd->ndims, r);
    int c = ch_axis(ncx, r);
    if (!same(dim_at(dd, 0), ds[0])) return mismatch(op, "diff_dst batch", dim_at(dd, 0), ds[0]);
    if (!same(dim_at(dd, c), ds[c])) return mismatch(op, "diff_dst channels", dim_at(dd, c), ds[c]);
    for (int j = 0; j < g->k; ++j) {
        int x = sp_axis(ncx, j);
        int64_t o;
        PT_CHECK(fwd_extent(op, g, j, ds[x], g->kern[j], &o));
        if (!same(dim_at(dd, x), o))
            return mismatch(op, "diff_dst spatial extent", dim_at(dd, x), o);
    }
    return dnnl_success;
}

static pt_status infer_avg_pool_bwd(const pt_op *op, const pt_lt *in, pt_lt *out) {
    bool ncx = is_ncx(op), found;
    int r = -1;
    int64_t d[MAXD];
    PT_CHECK(given_shape(op, dnnl_graph_op_attr_src_shape, &out[0], &found, &r, d));
    if (!found) {
        /* diff_src keeps diff_dst's batch and channels; spatial extents need
         * src_shape. */
        PT_CHECK(agree_rank(op, &r, &in[0], "diff_dst"));
        PT_CHECK(agree_rank(op, &r, &out[0], "diff_src"));
        if (r >= 2) {
            fill(d, r, UNK);
            d[0] = dim_at(&in[0], 0);
            d[ch_axis(ncx, r)] = dim_at(&in[0], ch_axis(ncx, r));
        }
        return no_shape_source(op, dnnl_graph_op_attr_src_shape, op->nin >= 2, &out[0],
                               r >= 2 ? r : -1, d);
    }
    PT_CHECK(rank_in(op, r, 3, 5, "diff_src"));
    geom g;
    PT_CHECK(read_geom(op, r - 2, G_KERNEL, &g));
    g.ceil_mode = false; /* no rounding_type on the backward op */
    PT_CHECK(verify_pool_diff_dst(op, &g, ncx, r, d, &in[0]));
    return emit(&out[0], r, d);
}

/* diff_src = src.shape (rank r); batch and channels may also come from
 * diff_dst. */
static pt_status diff_src_like_src(const pt_op *op, const pt_lt *src, const pt_lt *dd, bool ncx,
                                   int r, int64_t *d) {
    int c = ch_axis(ncx, r);
    if (c < 0 || c >= r) return pt_op_fail(op, dnnl_invalid_shape, "rank %d", r);
    for (int i = 0; i < r; ++i) d[i] = dim_at(src, i);
    if (!merge(&d[0], dim_at(dd, 0))) return mismatch(op, "diff_dst batch", dim_at(dd, 0), d[0]);
    if (!merge(&d[c], dim_at(dd, c))) return mismatch(op, "diff_dst channels", dim_at(dd, c), d[c]);
    return dnnl_success;
}

static pt_status infer_max_pool_bwd(const pt_op *op, const pt_lt *in, pt_lt *out) {
    const pt_lt *src = &in[0], *dd = &in[1];
    int r;
    PT_CHECK(rank3(op, src, "src", dd, "diff_dst", &out[0], "diff_src", 5, &r));
    if (r < 0) return dnnl_success;
    bool ncx = is_ncx(op);
    geom g;
    PT_CHECK(read_geom(op, r - 2, G_KERNEL | G_DIL_OPT, &g));
    g.ceil_mode = false;
    int64_t d[MAXD];
    PT_CHECK(diff_src_like_src(op, src, dd, ncx, r, d));
    PT_CHECK(verify_pool_diff_dst(op, &g, ncx, r, d, dd));
    return emit(&out[0], r, d);
}

/* ---- convolution family ------------------------------------------------ */

static pt_status read_groups(const pt_op *op, int64_t *g) {
    *g = pt_op_s64(op, A_GROUPS, 1);
    if (*g < 1) return pt_op_fail(op, dnnl_invalid_shape, "groups = %lld, must be >= 1", (ll)*g);
    return dnnl_success;
}

/* Bias must be [OC]; it also supplies OC when the weights do not. */
static pt_status merge_bias(const pt_op *op, const pt_lt *bias, int64_t *oc) {
    if (bias->ndims >= 0 && bias->ndims != 1)
        return pt_op_fail(op, dnnl_invalid_shape, "bias rank %d, expected 1", bias->ndims);
    if (!merge(oc, dim_at(bias, 0))) return mismatch(op, "bias extent", dim_at(bias, 0), *oc);
    return dnnl_success;
}

/* `n` channels (UNK: unknown) of one side ("input"/"output") must split
 * into G groups; with `wname` the weights extent `w` must be n / G. */
static pt_status grouped_channels(const pt_op *op, const char *side, int64_t n, int64_t G,
                                  const char *wname, int64_t w) {
    if (n == UNK) return dnnl_success;
    if (n % G != 0)
        return pt_op_fail(op, dnnl_invalid_shape, "%s channels %lld not divisible by groups %lld",
                          side, (ll)n, (ll)G);
    if (wname && !same(w, n / G))
        return pt_op_fail(op, dnnl_invalid_shape,
                          "weights %s extent %lld differs from %s channels / groups = %lld", wname,
                          (ll)w, side, (ll)(n / G));
    return dnnl_success;
}

/* Convolution family channel rule: IC = I·G (I = weights I-extent), OC % G == 0. */
static pt_status conv_channels(const pt_op *op, int64_t ic, int64_t wi, int64_t oc, int64_t G) {
    PT_CHECK(grouped_channels(op, "input", ic, G, "I", wi));
    return grouped_channels(op, "output", oc, G, NULL, 0);
}

/* ConvTranspose family channel rule: weights I = IC, weights O = OC / G. */
static pt_status deconv_channels(const pt_op *op, int64_t ic, int64_t wi, int64_t oc, int64_t wo,
                                 int64_t G) {
    if (!same(ic, wi)) return mismatch(op, "weights I extent", wi, ic);
    PT_CHECK(grouped_channels(op, "input", ic, G, NULL, 0));
    return grouped_channels(op, "output", oc, G, "O", wo);
}

/* What every convolution-family inference reads once the rank r is known. */
typedef struct {
    bool ncx, transpose; /* transpose: ConvTranspose weights layout */
    int r, k, c;         /* rank, spatial dims, channel axis */
    int64_t G;
    wlayout wl;
    geom g;
} conv_ctx;

static pt_status conv_ctx_init(const pt_op *op, int r, bool transpose, unsigned flags,
                               conv_ctx *x) {
    x->ncx = is_ncx(op);
    x->transpose = transpose;
    x->r = r;
    x->k = r - 2;
    x->c = ch_axis(x->ncx, r);
    PT_CHECK(read_groups(op, &x->G));
    x->wl = weights_layout(op, transpose, r);
    return read_geom(op, x->k, flags, &x->g);
}

/* Known extents of `lt` for a rank-r shape (UNK elsewhere). */
static void dims_of(const pt_lt *lt, int r, int64_t *d) {
    for (int i = 0; i < r; ++i) d[i] = dim_at(lt, i);
}

/* Per spatial dim: the convolution output extent of input extent from[x]
 * and kernel extent kern[j] must agree with `to` (`what` names it). */
static pt_status check_conv_extents(const pt_op *op, const conv_ctx *x, const int64_t *from,
                                    const int64_t *kern, const pt_lt *to, const char *what) {
    for (int j = 0; j < x->k; ++j) {
        int a = sp_axis(x->ncx, j);
        int64_t o;
        PT_CHECK(fwd_extent(op, &x->g, j, from[a], kern[j], &o));
        if (!same(dim_at(to, a), o)) return mismatch(op, what, dim_at(to, a), o);
    }
    return dnnl_success;
}

/* Fills what the inputs tell of a backward result whose shape source is
 * missing (x->r >= 0; d has x->r entries). */
typedef void (*partial_shape_fn)(const conv_ctx *x, const pt_lt *a, const pt_lt *b, int64_t *d);

/* Start of the backward ops whose result shape does not follow from their
 * inputs (a, b): the result d comes from the shape attribute `attr` or a
 * fully declared output.  Without either, writes the partial shape and
 * fails (see no_shape_source); on success x describes the result's rank. */
static pt_status conv_bwd_begin(const pt_op *op, const pt_lt *a, const char *an, const pt_lt *b,
                                const char *bn, pt_lt *out, const char *outn, int attr,
                                bool transpose, partial_shape_fn partial, conv_ctx *x,
                                int64_t *d) {
    int r;
    PT_CHECK(rank3(op, a, an, b, bn, out, outn, 5, &r));
    PT_CHECK(read_groups(op, &x->G));
    bool found;
    int rs = -1;
    PT_CHECK(given_shape(op, attr, out, &found, &rs, d));
    if (!found) {
        x->r = r;
        if (r >= 0) {
            x->ncx = is_ncx(op);
            x->transpose = transpose;
            x->c = ch_axis(x->ncx, r);
            x->wl = weights_layout(op, transpose, r);
            fill(d, r, UNK);
            partial(x, a, b, d);
        }
        return no_shape_source(op, attr, op->nin >= 3, out, r, d);
    }
    int r0 = rs;
    PT_CHECK(agree_rank(op, &r0, a, an));
    PT_CHECK(agree_rank(op, &r0, b, bn));
    PT_CHECK(rank_in(op, rs, 3, 5, outn));
    return conv_ctx_init(op, rs, transpose, G_DIL, x);
}

/* Rank and geometry of the ops whose result follows from input `a` and the
 * weights; x->r < 0 when no rank is known (nothing to infer). */
static pt_status conv_fwd_begin(const pt_op *op, const pt_lt *a, const char *an, const pt_lt *w,
                                pt_lt *out, const char *outn, bool transpose, unsigned flags,
                                conv_ctx *x) {
    PT_CHECK(rank3(op, a, an, w, "weights", out, outn, 5, &x->r));
    return x->r < 0 ? dnnl_success : conv_ctx_init(op, x->r, transpose, flags, x);
}

/* Emits [batch of a, channels ch, the output extents of a's spatial extents
 * through the weights' kernel], by the ConvTranspose formula with
 * `deconv_formula`, else by the Convolution one. */
static pt_status conv_fwd_emit(const pt_op *op, const conv_ctx *x, const pt_lt *a, const pt_lt *w,
                               int64_t ch, bool deconv_formula, pt_lt *out) {
    int64_t d[MAXD];
    d[0] = dim_at(a, 0);
    d[x->c] = ch;
    for (int j = 0; j < x->k; ++j) {
        int s = sp_axis(x->ncx, j);
        PT_CHECK(out_extent(op, &x->g, j, deconv_formula, dim_at(a, s), dim_at(w, x->wl.k0 + j),
                            &d[s]));
    }
    return emit(out, x->r, d);
}

static pt_status infer_conv(const pt_op *op, const pt_lt *in, pt_lt *out) {
    const pt_lt *src = &in[0], *w = &in[1];
    conv_ctx x;
    PT_CHECK(conv_fwd_begin(op, src, "src", w, &out[0], "dst", false, G_DIL, &x));
    if (x.r < 0) return dnnl_success;
    int64_t ic = dim_at(src, x.c), oc = dim_at(w, x.wl.o);
    if (op->nin >= 3) PT_CHECK(merge_bias(op, &in[2], &oc));
    PT_CHECK(conv_channels(op, ic, dim_at(w, x.wl.i), oc, x.G));
    return conv_fwd_emit(op, &x, src, w, oc, false, &out[0]);
}

/* Batch from diff_dst and IC = weights I-extent · G are known. */
static void conv_bwd_data_partial(const conv_ctx *x, const pt_lt *dd, const pt_lt *w, int64_t *d) {
    int64_t wi = dim_at(w, x->wl.i);
    d[0] = dim_at(dd, 0);
    d[x->c] = wi != UNK && wi <= INT64_MAX / x->G ? wi * x->G : UNK;
}

static pt_status infer_conv_bwd_data(const pt_op *op, const pt_lt *in, pt_lt *out) {
    const pt_lt *dd = &in[0], *w = &in[1];
    conv_ctx x;
    int64_t d[MAXD];
    PT_CHECK(conv_bwd_begin(op, dd, "diff_dst", w, "weights", &out[0], "diff_src",
                            dnnl_graph_op_attr_dst_shape, false, conv_bwd_data_partial, &x, d));
    int64_t oc = dim_at(dd, x.c), wo = dim_at(w, x.wl.o);
    if (!same(oc, wo)) return mismatch(op, "diff_dst channels", oc, wo);
    PT_CHECK(conv_channels(op, d[x.c], dim_at(w, x.wl.i), oc != UNK ? oc : wo, x.G));
    if (!same(dim_at(dd, 0), d[0])) return mismatch(op, "diff_dst batch", dim_at(dd, 0), d[0]);
    int64_t wd[MAXD];
    dims_of(w, x.r, wd);
    PT_CHECK(check_conv_extents(op, &x, d, wd + x.wl.k0, dd, "diff_dst spatial extent"));
    return emit(&out[0], x.r, d);
}

/* The weights' O extent is diff_dst's channels and I is src's channels,
 * the grouped one divided by G (I for Convolution, O for ConvTranspose). */
static void bwd_weights_partial(const conv_ctx *x, const pt_lt *src, const pt_lt *dd, int64_t *d) {
    int64_t ic = dim_at(src, x->c), oc = dim_at(dd, x->c);
    if (x->transpose)
        oc = oc != UNK && oc % x->G == 0 ? oc / x->G : UNK;
    else
        ic = ic != UNK && ic % x->G == 0 ? ic / x->G : UNK;
    d[x->wl.o] = oc;
    d[x->wl.i] = ic;
}

/* ConvolutionBackwardWeights, or with `transpose` ConvTransposeBackwardWeights. */
static pt_status infer_bwd_weights(const pt_op *op, const pt_lt *in, pt_lt *out, bool transpose) {
    const pt_lt *src = &in[0], *dd = &in[1];
    conv_ctx x;
    int64_t d[MAXD];
    PT_CHECK(conv_bwd_begin(op, src, "src", dd, "diff_dst", &out[0], "diff_weights",
                            dnnl_graph_op_attr_weights_shape, transpose, bwd_weights_partial, &x,
                            d));
    int64_t ic = dim_at(src, x.c), oc = dim_at(dd, x.c);
    if (transpose) {
        PT_CHECK(deconv_channels(op, ic, d[x.wl.i], oc, d[x.wl.o], x.G));
    } else {
        if (!same(oc, d[x.wl.o])) return mismatch(op, "diff_dst channels", oc, d[x.wl.o]);
        PT_CHECK(conv_channels(op, ic, d[x.wl.i], d[x.wl.o], x.G));
    }
    if (!same(dim_at(dd, 0), dim_at(src, 0)))
        return mismatch(op, "diff_dst batch", dim_at(dd, 0), dim_at(src, 0));
    /* Auto-padding and the size relation run on the input of the forward
     * formula: src for Convolution; diff_dst for ConvTranspose, whose
     * Convolution formula maps diff_dst extents onto src extents. */
    const pt_lt *from = transpose ? dd : src, *to = transpose ? src : dd;
    int64_t fd[MAXD];
    dims_of(from, x.r, fd);
    PT_CHECK(check_conv_extents(op, &x, fd, d + x.wl.k0, to,
                                transpose ? "src spatial extent" : "diff_dst spatial extent"));
    return emit(&out[0], x.r, d);
}

static pt_status infer_conv_bwd_weights(const pt_op *op, const pt_lt *in, pt_lt *out) {
    return infer_bwd_weights(op, in, out, false);
}

static pt_status infer_deconv(const pt_op *op, const pt_lt *in, pt_lt *out) {
    const pt_lt *src = &in[0], *w = &in[1];
    conv_ctx x;
    PT_CHECK(conv_fwd_begin(op, src, "src", w, &out[0], "dst", true, G_DIL | G_OPAD, &x));
    if (x.r < 0) return dnnl_success;
    int64_t wo = dim_at(w, x.wl.o);
    if (wo != UNK && wo > INT64_MAX / x.G)
        return pt_op_fail(op, dnnl_invalid_shape, "weights O extent %lld too large", (ll)wo);
    int64_t oc = wo != UNK ? wo * x.G : UNK;
    if (op->nin >= 3) PT_CHECK(merge_bias(op, &in[2], &oc));
    PT_CHECK(deconv_channels(op, dim_at(src, x.c), dim_at(w, x.wl.i), oc, wo, x.G));
    return conv_fwd_emit(op, &x, src, w, oc, true, &out[0]);
}

/* diff_src of ConvTranspose = Convolution of diff_dst with the same weights
 * (output_padding is accepted but cannot change the result). */
static pt_status infer_deconv_bwd_data(const pt_op *op, const pt_lt *in, pt_lt *out) {
    const pt_lt *dd = &in[0], *w = &in[1];
    conv_ctx x;
    PT_CHECK(conv_fwd_begin(op, dd, "diff_dst", w, &out[0], "diff_src", true, G_DIL, &x));
    if (x.r < 0) return dnnl_success;
    int64_t wi = dim_at(w, x.wl.i);
    PT_CHECK(deconv_channels(op, wi, wi, dim_at(dd, x.c), dim_at(w, x.wl.o), x.G));
    return conv_fwd_emit(op, &x, dd, w, wi, false, &out[0]);
}

static pt_status infer_deconv_bwd_weights(const pt_op *op, const pt_lt *in, pt_lt *out) {
    return infer_bwd_weights(op, in, out, true);
}

/* ---- interpolation ----------------------------------------------------- */

/* Forward Interpolate output of `src` (rank r): N and C copied, spatial
 * extents from `sizes`, else trunc((float)I · scale).  Wrong list lengths are
 * dnnl_invalid_arguments (docs/ops.md, Interpolate). */
static pt_status interp_extents(const pt_op *op, int r, bool ncx, const pt_lt *src, int64_t *d) {
    int k = r - 2, c = ch_axis(ncx, r);
    size_t ns = 0, nf = 0;
    const int64_t *sz = pt_op_s64s(op, A_SIZES, &ns);
    const float *sc = pt_op_f32s(op, A_SCALES, &nf);
    d[0] = dim_at(src, 0);
    d[c] = dim_at(src, c);
    if (ns > 0 && sz) {
        if (ns != (size_t)k)
            return pt_op_fail(op, dnnl_invalid_arguments, "sizes has %zu entries, expected %d", ns,
                              k);
        for (int j = 0; j < k; ++j) {
            if (sz[j] < 1)
                return pt_op_fail(op, dnnl_invalid_arguments, "sizes[%d] = %lld, must be positive",
                                  j, (ll)sz[j]);
            d[sp_axis(ncx, j)] = sz[j];
        }
        return dnnl_success;
    }
    if (nf == 0 || !sc)
        return pt_op_fail(op, dnnl_invalid_arguments, "neither sizes nor scales is set");
    if (nf != (size_t)k)
        return pt_op_fail(op, dnnl_invalid_arguments, "scales has %zu entries, expected %d", nf, k);
    for (int j = 0; j < k; ++j) {
        int x = sp_axis(ncx, j);
        int64_t i_ext = dim_at(src, x);
        if (i_ext == UNK) {
            d[x] = UNK;
            continue;
        }
        float p = (float)i_ext * sc[j]; /* f32 product, as oneDNN computes it */
        if (!(p >= 0.0f) || p >= 9.0e18f)
            return pt_op_fail(op, dnnl_invalid_arguments, "scales[%d] = %g gives an invalid extent",
                              j, (double)sc[j]);
        d[x] = (int64_t)p; /* conversion truncates */
    }
    return dnnl_success;
}

static pt_status infer_interp(const pt_op *op, const pt_lt *in, pt_lt *out) {
    int r = -1;
    PT_CHECK(agree_rank(op, &r, &in[0], "src"));
    PT_CHECK(agree_rank(op, &r, &out[0], "dst"));
    if (r < 0) return dnnl_success;
    PT_CHECK(rank_in(op, r, 3, MAXD, "src"));
    if (op->nin >= 2) {
        const pt_lt *s = &in[1];
        if (s->ndims >= 0 && s->ndims != 1)
            return pt_op_fail(op, dnnl_invalid_shape, "sizes input rank %d, expected 1", s->ndims);
        if (!same(dim_at(s, 0), r - 2))
            return mismatch(op, "sizes input length", dim_at(s, 0), r - 2);
    }
    int64_t d[MAXD];
    PT_CHECK(interp_extents(op, r, is_ncx(op), &in[0], d));
    return emit(&out[0], r, d);
}

static pt_status infer_interp_bwd(const pt_op *op, const pt_lt *in, pt_lt *out) {
    const pt_lt *src = &in[0], *dd = &in[1];
    int r;
    PT_CHECK(rank3(op, src, "src", dd, "diff_dst", &out[0], "diff_src", MAXD, &r));
    if (r < 0) return dnnl_success;
    bool ncx = is_ncx(op);
    int64_t d[MAXD], f[MAXD];
    PT_CHECK(diff_src_like_src(op, src, dd, ncx, r, d));
    /* Validates sizes/scales; the extents themselves are not compared with
     * diff_dst: the kernel takes every ratio from the actual extents, and
     * oneDNN accepts a diff_dst that the f32 product misses by one (a real
     * graph pairs scales 1.235294 with 17 -> 21; the product truncates to
     * 20).  A deviation from oneDNN, listed in docs/ops.md. */
    PT_CHECK(interp_extents(op, r, ncx, src, f));
    return emit(&out[0], r, d);
}

/* ---- batch normalization ----------------------------------------------- */

/* Inputs [first, last) are per-channel vectors [C]; each known extent folds
 * into `*c`. */
static pt_status bn_channels(const pt_op *op, const pt_lt *in, size_t first, size_t last,
                             int64_t *c) {
    for (size_t i = first; i < last; ++i) {
        if (in[i].ndims >= 0 && in[i].ndims != 1)
            return pt_op_fail(op, dnnl_invalid_shape, "input %zu has rank %d, expected 1 ([C])", i,
                              in[i].ndims);
        if (!merge(c, dim_at(&in[i], 0)))
            return pt_op_fail(op, dnnl_invalid_shape,
                              "input %zu extent %lld differs from channels %lld", i,
                              (ll)dim_at(&in[i], 0), (ll)*c);
    }
    return dnnl_success;
}

/* Shared by the three batch-norm rows: data tensors (input 0 and, for the
 * backward op, input 1) give dst's shape, inputs [aux0, nin) are [C];
 * outputs 1.. are [C]. */
static pt_status infer_bn(const pt_op *op, const pt_lt *in, pt_lt *out, size_t n_data, size_t aux0,
                          int min_rank) {
    int r = -1;
    PT_CHECK(agree_rank(op, &r, &in[0], "src"));
    if (n_data > 1) PT_CHECK(agree_rank(op, &r, &in[1], "diff_dst"));
    PT_CHECK(agree_rank(op, &r, &out[0], "dst"));
    if (r >= 0 && r < min_rank)
        return pt_op_fail(op, dnnl_invalid_shape, "src rank %d, expected >= %d", r, min_rank);
    int c_ax = r >= 0 ? ch_axis(is_ncx(op), r) : -1;
    int64_t d[MAXD];
    for (int i = 0; i < r; ++i) {
        d[i] = dim_at(&in[0], i);
        if (n_data > 1 && !merge(&d[i], dim_at(&in[1], i)))
            return mismatch(op, "diff_dst extent", dim_at(&in[1], i), d[i]);
    }
    int64_t c = r >= 0 ? d[c_ax] : UNK;
    PT_CHECK(bn_channels(op, in, aux0, op->nin, &c));
    if (r >= 0) {
        d[c_ax] = c;
        PT_CHECK(emit(&out[0], r, d));
    }
    for (size_t o = 1; o < op->nout; ++o) PT_CHECK(emit(&out[o], 1, &c));
    return dnnl_success;
}

static pt_status infer_bn_fwd(const pt_op *op, const pt_lt *in, pt_lt *out) {
    return infer_bn(op, in, out, 1, 1, 2);
}
static pt_status infer_bn_inf(const pt_op *op, const pt_lt *in, pt_lt *out) {
    return infer_bn(op, in, out, 1, 1, 2);
}
static pt_status infer_bn_bwd(const pt_op *op, const pt_lt *in, pt_lt *out) {
    return infer_bn(op, in, out, 2, 2, 4);
}

/* ---- add_op checks ----------------------------------------------------- */

static pt_status check_list_min(const pt_op *op, int attr, int64_t min) {
    size_t n = 0;
    const int64_t *v = pt_op_s64s(op, attr, &n);
    for (size_t i = 0; v && i < n; ++i)
        if (v[i] < min)
            return pt_op_fail(op, dnnl_invalid_graph_op, "%s[%zu] = %lld, must be >= %lld",
                              pt_attr_name(attr), i, (ll)v[i], (ll)min);
    return dnnl_success;
}

/* `v` is one of the '|'-separated entries of `set` (auto_pad ignores case). */
static bool in_set(const char *v, const char *set, bool icase) {
    size_t vn = strlen(v);
    for (const char *p = set;;) {
        const char *e = strchr(p, '|');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == vn) {
            size_t i = 0;
            for (; i < n; ++i) {
                char a = p[i], b = v[i];
                if (icase) {
                    if (a >= 'a' && a <= 'z') a = (char)(a - 'a' + 'A');
                    if (b >= 'a' && b <= 'z') b = (char)(b - 'a' + 'A');
                }
                if (a != b) break;
            }
            if (i == n) return true;
        }
        if (!e) return false;
        p = e + 1;
    }
}

static pt_status check_str(const pt_op *op, int attr, const char *set, bool icase) {
    const char *v = pt_op_str(op, attr, NULL);
    if (v && !in_set(v, set, icase))
        return pt_op_fail(op, dnnl_invalid_graph_op, "%s = \"%s\" not allowed (allowed: %s)",
                          pt_attr_name(attr), v, set);
    return dnnl_success;
}

/* Value checks shared by pooling and convolutions.  The registry
 * has already rejected attributes an op does not define, so checking every
 * spatial attribute here is harmless for the ops lacking some. */
static pt_status check_spatial(const pt_op *op, const char *wfmt_set) {
    PT_CHECK(check_list_min(op, A_PADS_B, 0));
    PT_CHECK(check_list_min(op, A_PADS_E, 0));
    PT_CHECK(check_list_min(op, A_OPAD, 0));
    PT_CHECK(check_list_min(op, A_STRIDES, 1));
    PT_CHECK(check_list_min(op, A_DIL, 1));
    PT_CHECK(check_list_min(op, A_KERNEL, 1));
    PT_CHECK(check_list_min(op, dnnl_graph_op_attr_src_shape, 0));
    PT_CHECK(check_list_min(op, dnnl_graph_op_attr_dst_shape, 0));
    PT_CHECK(check_list_min(op, dnnl_graph_op_attr_weights_shape, 0));
    if (pt_op_has(op, A_GROUPS) && pt_op_s64(op, A_GROUPS, 1) < 1)
        return pt_op_fail(op, dnnl_invalid_graph_op, "groups = %lld, must be >= 1",
                          (ll)pt_op_s64(op, A_GROUPS, 1));
    PT_CHECK(check_str(op, A_DFMT, DFMT_SET, false));
    PT_CHECK(check_str(op, A_AUTO_PAD, AUTO_PAD_SET, true));
    PT_CHECK(check_str(op, A_ROUND, "floor|ceil", false));
    if (wfmt_set) PT_CHECK(check_str(op, A_WFMT, wfmt_set, false));
    return dnnl_success;
}

static pt_status check_pool(const pt_op *op) { return check_spatial(op, NULL); }

static pt_status check_max_pool(const pt_op *op) {
    PT_CHECK(check_spatial(op, NULL));
    size_t nd = 0, nk = 0;
    pt_op_s64s(op, A_DIL, &nd);
    pt_op_s64s(op, A_KERNEL, &nk);
    if (nd > 0 && nd != nk)
        return pt_op_fail(op, dnnl_invalid_graph_op, "dilations has %zu entries but kernel has %zu",
                          nd, nk);
    return dnnl_success;
}

static pt_status check_conv(const pt_op *op) { return check_spatial(op, CONV_WFMT_SET); }
static pt_status check_deconv(const pt_op *op) { return check_spatial(op, DECONV_WFMT_SET); }

static pt_status check_interp(const pt_op *op) {
    PT_CHECK(check_str(op, A_DFMT, DFMT_SET, false));
    PT_CHECK(check_str(op, dnnl_graph_op_attr_mode, MODE_SET, false));
    PT_CHECK(check_str(op, dnnl_graph_op_attr_coordinate_transformation_mode, CTM_SET, false));
    size_t ns = 0, nf = 0;
    const int64_t *sz = pt_op_s64s(op, A_SIZES, &ns);
    const float *sc = pt_op_f32s(op, A_SCALES, &nf);
    if (ns > 0 && nf > 0)
        return pt_op_fail(op, dnnl_invalid_graph_op, "sizes and scales are both set");
    if (ns == 0 && nf == 0)
        return pt_op_fail(op, dnnl_invalid_graph_op, "one of sizes and scales must be set");
    for (size_t i = 0; sz && i < ns; ++i)
        if (sz[i] < 1)
            return pt_op_fail(op, dnnl_invalid_graph_op, "sizes[%zu] = %lld, must be positive", i,
                              (ll)sz[i]);
    for (size_t i = 0; sc && i < nf; ++i)
        if (!(sc[i] > 0.0f) || isinf(sc[i]))
            return pt_op_fail(op, dnnl_invalid_graph_op, "scales[%zu] = %g, must be positive", i,
                              (double)sc[i]);
    return dnnl_success;
}

/* Batch-norm attribute values and the rule "T2 = bf16 only with T1 = bf16";
 * `aux` is the first statistics input. */
static pt_status check_bn_common(const pt_op *op, size_t aux) {
    PT_CHECK(check_str(op, A_DFMT, DFMT_SET, false));
    if (pt_op_has(op, A_EPS)) {
        float e = pt_op_f32(op, A_EPS, 0.0f);
        if (!(e >= 0.0f))
            return pt_op_fail(op, dnnl_invalid_graph_op, "epsilon = %g, must be >= 0", (double)e);
    }
    if (pt_op_has(op, A_MOMENTUM)) {
        float m = pt_op_f32(op, A_MOMENTUM, 0.5f);
        if (!(m >= 0.0f))
            return pt_op_fail(op, dnnl_invalid_graph_op, "momentum = %g, must be >= 0", (double)m);
    }
    if (op->nin > aux && op->in[aux].data_type == dnnl_bf16 && op->in[0].data_type != dnnl_bf16)
        return pt_op_fail(op, dnnl_invalid_graph_op,
                          "bf16 statistics require a bf16 src (src is %s)",
                          pt_dt_name(op->in[0].data_type));
    return dnnl_success;
}

static pt_status check_bn_fwd(const pt_op *op) {
    /* gamma and beta come together (the library rejects 4 inputs). */
    if (op->nin == 4)
        return pt_op_fail(op, dnnl_invalid_graph_op,
                          "4 inputs: gamma and beta must be given together");
    return check_bn_common(op, 1);
}
static pt_status check_bn_inf(const pt_op *op) { return check_bn_common(op, 1); }
static pt_status check_bn_bwd(const pt_op *op) {
    if (op->nout == 2)
        return pt_op_fail(op, dnnl_invalid_graph_op,
                          "2 outputs: diff_gamma and diff_beta must be produced together");
    return check_bn_common(op, 2);
}

/* ---- supported data-type combinations ------------------------------------ */

static bool is_float3(dnnl_data_type_t t) {
    return t == dnnl_f32 || t == dnnl_bf16 || t == dnnl_f16;
}

/* The first `n_data` inputs and every output share T ∈ {f32, bf16, f16};
 * later inputs are s32 shape tensors. */
static bool same_float(const pt_op *op, size_t n_data) {
    if (op->nin < 1 || op->nout < 1) return false;
    dnnl_data_type_t t = op->in[0].data_type;
    if (!is_float3(t)) return false;
    for (size_t i = 0; i < op->nin; ++i)
        if (op->in[i].data_type != (i < n_data ? t : dnnl_s32)) return false;
    for (size_t o = 0; o < op->nout; ++o)
        if (op->out[o].data_type != t) return false;
    return true;
}

static bool supported_1(const pt_op *op) { return same_float(op, 1); }
static bool supported_2(const pt_op *op) { return same_float(op, 2); }
static bool supported_3(const pt_op *op) { return same_float(op, 3); }

/* Batch norm: T1 on the first `n1_in` inputs and the first output, T2 on the
 * rest; (T1, T2) ∈ {(f32,f32), (bf16,f32), (bf16,bf16), (f16,f32)}. */
static bool bn_supported(const pt_op *op, size_t n1_in) {
    if (op->nin <= n1_in || op->nout < 1) return false;
    dnnl_data_type_t t1 = op->in[0].data_type, t2 = op->in[n1_in].data_type;
    bool combo = (t2 == dnnl_f32 && is_float3(t1)) || (t2 == dnnl_bf16 && t1 == dnnl_bf16);
    if (!combo) return false;
    for (size_t i = 0; i < op->nin; ++i)
        if (op->in[i].data_type != (i < n1_in ? t1 : t2)) return false;
    for (size_t o = 0; o < op->nout; ++o)
        if (op->out[o].data_type != (o == 0 ? t1 : t2)) return false;
    return true;
}
static bool supported_bn1(const pt_op *op) { return bn_supported(op, 1); }
static bool supported_bn2(const pt_op *op) { return bn_supported(op, 2); }

/* ---- port specs -------------------------------------------------------- */

#define F3 PT_DT_FLOAT3
#define S32 PT_DT(dnnl_s32)
#define BN_T2 (PT_DT(dnnl_f32) | PT_DT(dnnl_bf16))

static const pt_port_spec in_src[] = {PT_PORT("src", F3, 'T')};
static const pt_port_spec out_dst[] = {PT_PORT("dst", F3, 'T')};
static const pt_port_spec out_diff_src[] = {PT_PORT("diff_src", F3, 'T')};
static const pt_port_spec out_diff_weights[] = {PT_PORT("diff_weights", F3, 'T')};
static const pt_port_spec in_avg_pool_bwd[] = {PT_PORT("diff_dst", F3, 'T'),
                                               PT_PORT_OPT("src_shape", S32, 0)};
static const pt_port_spec in_max_pool_bwd[] = {PT_PORT("src", F3, 'T'),
                                               PT_PORT("diff_dst", F3, 'T')};
static const pt_port_spec in_conv[] = {PT_PORT("src", F3, 'T'), PT_PORT("weights", F3, 'T'),
                                       PT_PORT_OPT("bias", F3, 'T')};
static const pt_port_spec in_conv_bwd_data[] = {
    PT_PORT("diff_dst", F3, 'T'), PT_PORT("weights", F3, 'T'), PT_PORT_OPT("dst_shape", S32, 0)};
static const pt_port_spec in_bwd_weights[] = {PT_PORT("src", F3, 'T'), PT_PORT("diff_dst", F3, 'T'),
                                              PT_PORT_OPT("weights_shape", S32, 0)};
static const pt_port_spec in_deconv_bwd_data[] = {PT_PORT("diff_dst", F3, 'T'),
                                                  PT_PORT("weights", F3, 'T')};
static const pt_port_spec in_interp[] = {PT_PORT("src", F3, 'T'), PT_PORT_OPT("sizes", S32, 0)};
static const pt_port_spec in_interp_bwd[] = {PT_PORT("src", F3, 'T'), PT_PORT("diff_dst", F3, 'T'),
                                             PT_PORT_OPT("sizes", S32, 0)};
static const pt_port_spec in_bn_fwd[] = {
    PT_PORT("src", F3, '1'), PT_PORT("mean", BN_T2, '2'), PT_PORT("variance", BN_T2, '2'),
    PT_PORT_OPT("gamma", BN_T2, '2'), PT_PORT_OPT("beta", BN_T2, '2')};
static const pt_port_spec out_bn_fwd[] = {
    PT_PORT("dst", F3, '1'), PT_PORT("running_mean", BN_T2, '2'),
    PT_PORT("running_variance", BN_T2, '2'), PT_PORT("batch_mean", BN_T2, '2'),
    PT_PORT("batch_variance", BN_T2, '2')};
static const pt_port_spec in_bn_inf[] = {PT_PORT("src", F3, '1'), PT_PORT("gamma", BN_T2, '2'),
                                         PT_PORT("beta", BN_T2, '2'), PT_PORT("mean", BN_T2, '2'),
                                         PT_PORT("variance", BN_T2, '2')};
static const pt_port_spec out_bn_inf[] = {PT_PORT("dst", F3, '1')};
static const pt_port_spec in_bn_bwd[] = {
    PT_PORT("src", F3, '1'), PT_PORT("diff_dst", F3, '1'), PT_PORT("mean", BN_T2, '2'),
    PT_PORT("variance", BN_T2, '2'), PT_PORT_OPT("gamma", BN_T2, '2')};
static const pt_port_spec out_bn_bwd[] = {PT_PORT("diff_src", F3, '1'),
                                          PT_PORT_OPT("diff_gamma", BN_T2, '2'),
                                          PT_PORT_OPT("diff_beta", BN_T2, '2')};

/* ---- attribute specs --------------------------------------------------- */

/* An absent or empty list means "all zeros" (pads, output_padding) or "all
 * ones" (MaxPool dilations); the registry leaves the attribute absent. */
#define OPT_S64S_EMPTY(n)                                                                          \
    { .name = (n), .kind = PT_ATTR_S64S, .has_default = true, .dflt_v = NULL, .dflt_n = 0 }
#define AUTO_PAD PT_OPT_STR(A_AUTO_PAD, "None", AUTO_PAD_SET)
#define DATA_FORMAT PT_OPT_STR(A_DFMT, "NXC", DFMT_SET)
#define CONV_COMMON                                                                                \
    PT_REQ_S64S(A_STRIDES), PT_REQ_S64S(A_PADS_B), PT_REQ_S64S(A_PADS_E), PT_REQ_S64S(A_DIL),      \
        AUTO_PAD, PT_OPT_S64(A_GROUPS, 1), DATA_FORMAT
#define CONV_WFMT PT_OPT_STR(A_WFMT, "XIO", CONV_WFMT_SET)
#define DECONV_WFMT PT_OPT_STR(A_WFMT, "XOI", DECONV_WFMT_SET)

static const pt_attr_spec attrs_avg_pool[] = {PT_REQ_S64S(A_STRIDES),
                                              PT_REQ_S64S(A_PADS_B),
                                              PT_REQ_S64S(A_PADS_E),
                                              PT_REQ_S64S(A_KERNEL),
                                              PT_REQ_BOOL(dnnl_graph_op_attr_exclude_pad),
                                              PT_OPT_STR(A_ROUND, "floor", "floor|ceil"),
                                              AUTO_PAD,
                                              DATA_FORMAT,
                                              PT_ATTR_LIST_END};
static const pt_attr_spec attrs_avg_pool_bwd[] = {PT_REQ_S64S(A_STRIDES),
                                                  PT_REQ_S64S(A_PADS_B),
                                                  PT_REQ_S64S(A_PADS_E),
                                                  PT_REQ_S64S(A_KERNEL),
                                                  PT_REQ_BOOL(dnnl_graph_op_attr_exclude_pad),
                                                  AUTO_PAD,
                                                  DATA_FORMAT,
                                                  PT_OPT_S64S(dnnl_graph_op_attr_src_shape),
                                                  PT_ATTR_LIST_END};
static const pt_attr_spec attrs_max_pool[] = {PT_REQ_S64S(A_STRIDES),
                                              PT_REQ_S64S(A_PADS_B),
                                              PT_REQ_S64S(A_PADS_E),
                                              PT_REQ_S64S(A_KERNEL),
                                              PT_OPT_STR(A_ROUND, "floor", "floor|ceil"),
                                              AUTO_PAD,
                                              OPT_S64S_EMPTY(A_DIL),
                                              DATA_FORMAT,
                                              PT_ATTR_LIST_END};
static const pt_attr_spec attrs_max_pool_bwd[] = {PT_REQ_S64S(A_STRIDES),
                                                  PT_REQ_S64S(A_PADS_B),
                                                  PT_REQ_S64S(A_PADS_E),
                                                  PT_REQ_S64S(A_KERNEL),
                                                  AUTO_PAD,
                                                  OPT_S64S_EMPTY(A_DIL),
                                                  DATA_FORMAT,
                                                  PT_ATTR_LIST_END};
static const pt_attr_spec attrs_conv[] = {CONV_COMMON, CONV_WFMT, PT_ATTR_LIST_END};
static const pt_attr_spec attrs_conv_bwd_data[] = {CONV_COMMON, CONV_WFMT, OPT_S64S_EMPTY(A_OPAD),
                                                   PT_OPT_S64S(dnnl_graph_op_attr_dst_shape),
                                                   PT_ATTR_LIST_END};
static const pt_attr_spec attrs_conv_bwd_weights[] = {
    CONV_COMMON, CONV_WFMT, PT_OPT_S64S(dnnl_graph_op_attr_weights_shape), PT_ATTR_LIST_END};
static const pt_attr_spec attrs_deconv[] = {CONV_COMMON, DECONV_WFMT, OPT_S64S_EMPTY(A_OPAD),
                                            PT_ATTR_LIST_END};
static const pt_attr_spec attrs_deconv_bwd_data[] = {CONV_COMMON, DECONV_WFMT,
                                                     OPT_S64S_EMPTY(A_OPAD), PT_ATTR_LIST_END};
static const pt_attr_spec attrs_deconv_bwd_weights[] = {
    CONV_COMMON, DECONV_WFMT, OPT_S64S_EMPTY(A_OPAD), PT_OPT_S64S(dnnl_graph_op_attr_weights_shape),
    PT_ATTR_LIST_END};
static const pt_attr_spec attrs_interp[] = {
    PT_REQ_STR(dnnl_graph_op_attr_mode, MODE_SET),
    PT_OPT_STR(dnnl_graph_op_attr_coordinate_transformation_mode, "half_pixel", CTM_SET),
    PT_OPT_S64S(A_SIZES),
    {.name = A_SCALES, .kind = PT_ATTR_F32S},
    DATA_FORMAT,
    PT_ATTR_LIST_END};
/* momentum has no filled default: oneDNN leaves it absent and uses 0.5. */
static const pt_attr_spec attrs_bn_fwd[] = {
    PT_REQ_F32(A_EPS), {.name = A_MOMENTUM, .kind = PT_ATTR_F32}, DATA_FORMAT, PT_ATTR_LIST_END};
static const pt_attr_spec attrs_bn[] = {PT_REQ_F32(A_EPS), DATA_FORMAT, PT_ATTR_LIST_END};

/* ---- the table --------------------------------------------------------- */

/* Rows: row name, inputs, outputs, attributes, check, shape inference,
 * supported data types. */
PT_ROW(avg_pool, in_src, out_dst, attrs_avg_pool, check_pool, infer_avg_pool, supported_1);
PT_ROW(avg_pool_bwd, in_avg_pool_bwd, out_diff_src, attrs_avg_pool_bwd, check_pool, infer_avg_pool_bwd,
       supported_1);
PT_ROW(max_pool, in_src, out_dst, attrs_max_pool, check_max_pool, infer_max_pool, supported_1);
PT_ROW(max_pool_bwd, in_max_pool_bwd, out_diff_src, attrs_max_pool_bwd, check_max_pool, infer_max_pool_bwd,
       supported_2);
PT_ROW(conv, in_conv, out_dst, attrs_conv, check_conv, infer_conv, supported_3);
PT_ROW(conv_bwd_data, in_conv_bwd_data, out_diff_src, attrs_conv_bwd_data, check_conv, infer_conv_bwd_data,
       supported_2);
PT_ROW(conv_bwd_weights, in_bwd_weights, out_diff_weights, attrs_conv_bwd_weights, check_conv,
       infer_conv_bwd_weights, supported_2);
PT_ROW(conv_transpose, in_conv, out_dst, attrs_deconv, check_deconv, infer_deconv, supported_3);
PT_ROW(conv_transpose_bwd_data, in_deconv_bwd_data, out_diff_src, attrs_deconv_bwd_data, check_deconv,
       infer_deconv_bwd_data, supported_2);
PT_ROW(conv_transpose_bwd_weights, in_bwd_weights, out_diff_weights, attrs_deconv_bwd_weights, check_deconv,
       infer_deconv_bwd_weights, supported_2);
PT_ROW(interpolate, in_interp, out_dst, attrs_interp, check_interp, infer_interp, supported_1);
PT_ROW(interpolate_bwd, in_interp_bwd, out_diff_src, attrs_interp, check_interp, infer_interp_bwd, supported_2);
PT_ROW(batch_norm_fwd_training, in_bn_fwd, out_bn_fwd, attrs_bn_fwd, check_bn_fwd, infer_bn_fwd, supported_bn1);
PT_ROW(batch_norm_inference, in_bn_inf, out_bn_inf, attrs_bn, check_bn_inf, infer_bn_inf, supported_bn1);
PT_ROW(batch_norm_bwd, in_bn_bwd, out_bn_bwd, attrs_bn, check_bn_bwd, infer_bn_bwd, supported_bn2);
