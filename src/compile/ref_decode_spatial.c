/* Decoders of the MatMul, convolution, pooling and interpolation reference
 * kernels: attributes checked once, padding resolved against the compiled
 * shapes (auto_pad), scratch sized. */
#include <string.h>

#include "compile/ref_decode.h"
#include "kernels/ref/ref_common.h"
#include "kernels/ref/ref_kernels.h"
#include "ops/op_schema.h"
#include "ops/spatial_utils.h"

/* ---- MatMul -------------------------------------------------------------- */

PT_DECODE_DECL(matmul) {
    pt_ref_matmul_params m = {.ta = pt_op_bool(op, dnnl_graph_op_attr_transpose_a, false),
                              .tb = pt_op_bool(op, dnnl_graph_op_attr_transpose_b, false)};
    PT_CHECK(pt_decode_bind(out, pt_ref_matmul, &m, sizeof m));
    if (op->nin >= 2) out->scratch_bytes = pt_ref_matmul_scratch(&m, &op->in[0], &op->in[1]);
    return dnnl_success;
}

/* ---- shared geometry ------------------------------------------------------- */

/* The tensors a decoder reads by position: inputs 0..nin-1, then outputs. */
static const pt_lt *port(const pt_op *op, size_t k) {
    if (k < op->nin) return &op->in[k];
    k -= op->nin;
    return k < op->nout ? &op->out[k] : NULL;
}

/* Ranks of in[0], in[1] and out[0] agree and lie in [3, 5]: the canonical
 * views of the compiled shapes exist (otherwise the kernel reports). */
static bool ranks_ok(const pt_op *op, size_t n_in_needed) {
    if (op->nin < n_in_needed || op->nout < 1) return false;
    int r = op->in[0].ndims;
    if (r < 3 || r > 5 || op->out[0].ndims != r) return false;
    return n_in_needed < 2 || op->in[1].ndims == r;
}

/* Resolves stride, dilation and begin padding of the canonical slots (D, H,
 * W) of k = rank - 2 spatial dims; `in` / `kd` are the canonical extents of
 * the tensor auto_pad looks at and of the kernel window. */
static void resolve_geom(const char *auto_pad, bool transpose_rule, int k, const int64_t *strides,
                         const int64_t *dils, const int64_t *pb, const int64_t *pe, const int64_t *in,
                         const int64_t *kd, int64_t *S, int64_t *Dl, int64_t *P) {
    for (int slot = 0; slot < 3; ++slot) {
        int j = slot - (3 - k);
        if (j < 0) {
            S[slot] = 1, Dl[slot] = 1, P[slot] = 0;
            continue;
        }
        int64_t b = pb[j], e = pe[j];
        pt_resolve_pad(auto_pad, transpose_rule, in[2 + slot], kd[2 + slot], strides[j], dils[j], pb[j], pe[j], &b,
                       &e);
        S[slot] = strides[j], Dl[slot] = dils[j], P[slot] = b;
    }
}

/* ---- convolution family ----------------------------------------------------- */

/* `pad_port` is the data tensor whose spatial extents drive auto_pad and
 * `w_port` the weights tensor (ports as numbered by port()). */
static pt_status decode_conv(const pt_op *op, pt_bound_kernel *out, pt_kernel_fn fn, bool transpose,
                             size_t pad_port, size_t w_port, bool transpose_rule, bool has_bias) {
    const char *name = pt_op_kind_name(op->kind);
    const int rank = op->nin ? op->in[0].ndims : 0;
    if (rank < 3 || rank > 5) return pt_err(dnnl_unimplemented, "%s: rank %d not in [3, 5]", name, rank);
    const int k = rank - 2;
    pt_ref_conv_params c = {.name = name};
    PT_CHECK(pt_decode_nxc(op, &c.nxc));
    const char *wf = pt_op_str(op, dnnl_graph_op_attr_weights_format, transpose ? "XOI" : "XIO");
    if (strcmp(wf, transpose ? "XOI" : "XIO") == 0) c.x_first = true;
    else if (strcmp(wf, transpose ? "IOX" : "OIX") == 0) c.x_first = false;
    else return pt_err(dnnl_invalid_arguments, "%s: bad weights_format '%s'", name, wf);
    c.G = pt_op_s64(op, dnnl_graph_op_attr_groups, 1);
    if (c.G < 1) return pt_err(dnnl_invalid_arguments, "%s: groups %lld < 1", name, (long long)c.G);
    int64_t strides[3], dils[3], pb[3], pe[3];
    PT_CHECK(pt_decode_list(op, dnnl_graph_op_attr_strides, k, 1, 1, "strides", strides));
    PT_CHECK(pt_decode_list(op, dnnl_graph_op_attr_dilations, k, 1, 1, "dilations", dils));
    PT_CHECK(pt_decode_list(op, dnnl_graph_op_attr_pads_begin, k, 0, 0, "pads_begin", pb));
    PT_CHECK(pt_decode_list(op, dnnl_graph_op_attr_pads_end, k, 0, 0, "pads_end", pe));
    const char *auto_pad = pt_op_str(op, dnnl_graph_op_attr_auto_pad, "None");
    const bool ok = ranks_ok(op, 2); /* otherwise the kernel rejects the call */
    if (ok) {
        pt_v5 x, w;
        pt_v5_data(port(op, pad_port), c.nxc, &x);
        pt_v5_weights(port(op, w_port), c.x_first, &w);
        resolve_geom(auto_pad, transpose_rule, k, strides, dils, pb, pe, x.d, w.d, c.S, c.Dl, c.P);
    }
    PT_CHECK(pt_decode_bind(out, fn, &c, sizeof c));
    if (ok)
        out->scratch_bytes = pt_ref_conv_scratch(&op->in[0], &op->in[1], &op->out[0],
                                                 has_bias && op->nin > 2 ? &op->in[2] : NULL);
    return dnnl_success;
}

/* Ports: in[0] = 0, in[1] = 1, out[0] = nin. */
PT_DECODE_DECL(conv) { return decode_conv(op, out, pt_ref_conv, false, 0, 1, false, true); }
PT_DECODE_DECL(conv_bwd_data) { return decode_conv(op, out, pt_ref_conv_bwd_data, false, op->nin, 1, false, false); }
PT_DECODE_DECL(conv_bwd_weights) {
    return decode_conv(op, out, pt_ref_conv_bwd_weights, false, 0, op->nin, false, false);
}
PT_DECODE_DECL(conv_transpose) { return decode_conv(op, out, pt_ref_conv_transpose, true, 0, 1, true, true); }
PT_DECODE_DECL(conv_transpose_bwd_data) {
    return decode_conv(op, out, pt_ref_conv_transpose_bwd_data, true, 0, 1, false, false);
}
PT_DECODE_DECL(conv_transpose_bwd_weights) {
    return decode_conv(op, out, pt_ref_conv_transpose_bwd_weights, true, 1, op->nin, false, false);
}

/* ---- pooling ------------------------------------------------------------------ */

/* `data_port` is the tensor whose spatial extents drive auto_pad (forward
 * src, or diff_src for the backward ops). */
static pt_status decode_pool(const pt_op *op, pt_bound_kernel *out, pt_kernel_fn fn, size_t data_port, bool dilated,
                             pt_ref_pool_params **pp) {
    const char *name = pt_op_kind_name(op->kind);
    const pt_lt *data = port(op, data_port);
    const int r = data ? data->ndims : 0;
    if (r < 3 || r > 5) return pt_err(dnnl_unimplemented, "%s: rank %d not in [3, 5]", name, r);
    const int k = r - 2;
    pt_ref_pool_params a = {.name = name};
    PT_CHECK(pt_decode_nxc(op, &a.nxc));
    size_t nk = 0;
    if (!pt_op_s64s(op, dnnl_graph_op_attr_kernel, &nk) || nk == 0)
        return pt_err(dnnl_invalid_arguments, "%s: kernel attribute missing", name);
    int64_t kernel[3], strides[3], dils[3] = {1, 1, 1}, pb[3], pe[3];
    PT_CHECK(pt_decode_list(op, dnnl_graph_op_attr_kernel, k, 1, 1, "kernel", kernel));
    PT_CHECK(pt_decode_list(op, dnnl_graph_op_attr_strides, k, 1, 1, "strides", strides));
    PT_CHECK(pt_decode_list(op, dnnl_graph_op_attr_pads_begin, k, 0, 0, "pads_begin", pb));
    PT_CHECK(pt_decode_list(op, dnnl_graph_op_attr_pads_end, k, 0, 0, "pads_end", pe));
    if (dilated) PT_CHECK(pt_decode_list(op, dnnl_graph_op_attr_dilations, k, 1, 1, "dilations", dils));
    const char *auto_pad = pt_op_str(op, dnnl_graph_op_attr_auto_pad, "None");
    pt_v5 v;
    pt_v5_data(data, a.nxc, &v);
    /* The window as a canonical 5-D "kernel tensor" for resolve_geom. */
    int64_t kd[5] = {1, 1, 1, 1, 1};
    for (int slot = 0; slot < 3; ++slot) {
        int j = slot - (3 - k);
        a.K[slot] = j >= 0 ? kernel[j] : 1;
        kd[2 + slot] = a.K[slot];
    }
    resolve_geom(auto_pad, false, k, strides, dils, pb, pe, v.d, kd, a.S, a.Dl, a.P);
    *pp = pt_decode_params(out, fn, &a, sizeof a, 0);
    return *pp ? dnnl_success : dnnl_out_of_memory;
}

/* Ceil rounding switches the forward divisor to the valid taps. */
PT_DECODE_DECL(avg_pool) {
    pt_ref_pool_params *p = NULL;
    PT_CHECK(decode_pool(op, out, pt_ref_avg_pool, 0, false, &p));
    p->exclude = pt_op_bool(op, dnnl_graph_op_attr_exclude_pad, false) ||
                 strcmp(pt_op_str(op, dnnl_graph_op_attr_rounding_type, "floor"), "ceil") == 0;
    if (op->nout && op->out[0].ndims == op->in[0].ndims) out->scratch_bytes = pt_ref_avg_pool_scratch(p, &op->out[0]);
    return dnnl_success;
}

PT_DECODE_DECL(avg_pool_bwd) {
    pt_ref_pool_params *p = NULL;
    PT_CHECK(decode_pool(op, out, pt_ref_avg_pool_bwd, op->nin, false, &p));
    p->exclude = pt_op_bool(op, dnnl_graph_op_attr_exclude_pad, false);
    if (op->nin && op->in[0].ndims == op->out[0].ndims) out->scratch_bytes = pt_ref_avg_pool_scratch(p, &op->in[0]);
    return dnnl_success;
}

PT_DECODE_DECL(max_pool) {
    pt_ref_pool_params *p = NULL;
    return decode_pool(op, out, pt_ref_max_pool, 0, true, &p);
}

PT_DECODE_DECL(max_pool_bwd) {
    pt_ref_pool_params *p = NULL;
    PT_CHECK(decode_pool(op, out, pt_ref_max_pool_bwd, op->nin, true, &p));
    if (op->nin) out->scratch_bytes = pt_ref_max_pool_bwd_scratch(&op->in[0]);
    return dnnl_success;
}

/* ---- Interpolate ---------------------------------------------------------------- */

/* Output extents come from the tensors themselves, so only the mode, the
 * coordinate transformation and the layout are decoded. */
static pt_status decode_interp(const pt_op *op, pt_bound_kernel *out, pt_kernel_fn fn, const pt_lt *ranked,
                               pt_ref_interp_params **pp) {
    const char *name = pt_op_kind_name(op->kind);
    const int rank = ranked ? ranked->ndims : 0;
    if (rank < 3 || rank > 5) return pt_err(dnnl_unimplemented, "%s: rank %d not in [3, 5]", name, rank);
    pt_ref_interp_params a = {.name = name, .k = rank - 2};
    PT_CHECK(pt_decode_nxc(op, &a.nxc));
    const char *mode = pt_op_str(op, dnnl_graph_op_attr_mode, "");
    if (strcmp(mode, "nearest") == 0) a.mode = PT_INTERP_NEAREST;
    else if (strcmp(mode, "linear") == 0 || strcmp(mode, "bilinear") == 0 || strcmp(mode, "trilinear") == 0)
        a.mode = PT_INTERP_LINEAR;
    else return pt_err(dnnl_invalid_arguments, "%s: bad mode '%s'", name, mode);
    const char *ctm = pt_op_str(op, dnnl_graph_op_attr_coordinate_transformation_mode, "half_pixel");
    if (strcmp(ctm, "half_pixel") == 0) a.align_corners = false;
    else if (strcmp(ctm, "align_corners") == 0) a.align_corners = true;
    else return pt_err(dnnl_invalid_arguments, "%s: bad coordinate_transformation_mode '%s'", name, ctm);
    *pp = pt_decode_params(out, fn, &a, sizeof a, 0);
    return *pp ? dnnl_success : dnnl_out_of_memory;
}

PT_DECODE_DECL(interpolate) {
    pt_ref_interp_params *p = NULL;
    PT_CHECK(decode_interp(op, out, pt_ref_interpolate, op->nin ? &op->in[0] : NULL, &p));
    if (op->nout && op->out[0].ndims == op->in[0].ndims)
        out->scratch_bytes = pt_ref_interp_scratch(p, &op->out[0], NULL);
    return dnnl_success;
}

PT_DECODE_DECL(interpolate_bwd) {
    pt_ref_interp_params *p = NULL;
    PT_CHECK(decode_interp(op, out, pt_ref_interpolate_bwd, op->nout ? &op->out[0] : NULL, &p));
    if (op->nin > 1 && op->in[1].ndims == op->out[0].ndims)
        out->scratch_bytes = pt_ref_interp_scratch(p, &op->in[1], &op->out[0]);
    return dnnl_success;
}
