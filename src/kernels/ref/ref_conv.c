/* Reference convolution family (opset.md Convolution, ConvolutionBackwardData,
 * ConvolutionBackwardWeights, ConvTranspose, ConvTransposeBackwardData,
 * ConvTransposeBackwardWeights).
 *
 * Every tensor is first viewed in canonical 5-D order — data [N, C, D, H, W],
 * weights [A, B, KD, KH, KW] — with missing leading spatial dims of extent 1,
 * so NCX/NXC, OIX/XIO/IOX/XOI and arbitrary strides all reduce to one layout.
 * Three canonical routines cover the six ops: the ConvTranspose family uses
 * IOX weights, which are exactly the OIX weights of the adjoint convolution
 * (ConvTranspose = conv backward-data, its backward-data = conv forward, its
 * backward-weights = conv backward-weights with src and diff_dst swapped). */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "ir/status.h"
#include "kernels/ref/ref_common.h"
#include "kernels/ref/ref_kernels.h"
#include "ops/spatial_utils.h"

/* Canonical 5-D view of a strided tensor. */
typedef struct {
    int64_t d[5]; /* extents */
    int64_t s[5]; /* element strides in the original tensor (0 for inserted dims) */
} cv5;

/* Per-spatial-slot geometry (slots 0..2 = D, H, W). */
typedef struct {
    int64_t S[3], Dl[3], P[3]; /* stride, dilation, begin padding */
} conv_geom;

/* Threads for a loop of about `work` scalar operations: the context's
 * budget, or 1 where a parallel region would cost more than it saves. */
static int conv_threads(const pt_exec_ctx *ctx, int64_t work) {
    if (work < 32768) return 1;
    return ctx && ctx->nthreads > 0 ? ctx->nthreads : omp_get_max_threads();
}

static int64_t cv5_count(const cv5 *v) { return v->d[0] * v->d[1] * v->d[2] * v->d[3] * v->d[4]; }

/* Data tensor in NCX (nxc == false) or NXC order. */
static void cv5_data(const pt_tview *t, bool nxc, cv5 *v) {
    const int64_t *d = t->lt.dims, *s = t->lt.layout.strides;
    int r = t->lt.ndims, k = r - 2, cdim = nxc ? r - 1 : 1;
    v->d[0] = d[0], v->s[0] = s[0];
    v->d[1] = d[cdim], v->s[1] = s[cdim];
    for (int slot = 0; slot < 3; ++slot) {
        int j = slot - (3 - k);
        int ax = nxc ? 1 + j : 2 + j;
        v->d[2 + slot] = j >= 0 ? d[ax] : 1;
        v->s[2 + slot] = j >= 0 ? s[ax] : 0;
    }
}

/* Weights tensor: "X first" formats (XIO, XOI) store [K.., B, A]; the others
 * (OIX, IOX) store [A, B, K..].  Canonical order is [A, B, K..]. */
static void cv5_weights(const pt_tview *t, bool x_first, cv5 *v) {
    const int64_t *d = t->lt.dims, *s = t->lt.layout.strides;
    int r = t->lt.ndims, k = r - 2;
    int a0 = x_first ? r - 1 : 0, a1 = x_first ? r - 2 : 1, sp0 = x_first ? 0 : 2;
    v->d[0] = d[a0], v->s[0] = s[a0];
    v->d[1] = d[a1], v->s[1] = s[a1];
    for (int slot = 0; slot < 3; ++slot) {
        int j = slot - (3 - k);
        v->d[2 + slot] = j >= 0 ? d[sp0 + j] : 1;
        v->s[2 + slot] = j >= 0 ? s[sp0 + j] : 0;
    }
}

static int64_t cv5_off(const cv5 *v, int64_t lin) {
    int64_t off = 0;
    for (int i = 4; i >= 0; --i) {
        off += (lin % v->d[i]) * v->s[i];
        lin /= v->d[i];
    }
    return off;
}

/* Rounds an f32 operand value to the precision the fpmath mode permits (§1.5). */
static float conv_fpmath_round(float v, dnnl_fpmath_mode_t mode) {
    switch (mode) {
        case dnnl_fpmath_mode_bf16:
        case dnnl_fpmath_mode_any: return pt_bf16_to_f32(pt_f32_to_bf16(v));
        case dnnl_fpmath_mode_f16: return pt_f16_to_f32(pt_f32_to_f16(v));
        case dnnl_fpmath_mode_tf32: {
            uint32_t u;
            memcpy(&u, &v, sizeof u);
            if ((u & 0x7f800000u) == 0x7f800000u) return v; /* inf / NaN unchanged */
            u += 0xfffu + ((u >> 13) & 1u);                 /* RNE to 10 mantissa bits */
            u &= ~0x1fffu;
            memcpy(&v, &u, sizeof v);
            return v;
        }
        default: return v;
    }
}

/* Dense canonical f32 copy of a tensor (fpmath-rounded when it is f32). */
static float *cv5_load(const pt_tview *t, const cv5 *v, const pt_exec_ctx *ctx) {
    int64_t n = cv5_count(v);
    float *buf = malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    if (!buf) return NULL;
    dnnl_fpmath_mode_t mode = ctx ? ctx->fpmath : dnnl_fpmath_mode_strict;
    bool round = t->lt.data_type == dnnl_f32 && mode != dnnl_fpmath_mode_strict;
    int nt = conv_threads(ctx, n);
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
    for (int64_t i = 0; i < n; ++i) {
        float x = pt_tv_getf(t, cv5_off(v, i));
        buf[i] = round ? conv_fpmath_round(x, mode) : x;
    }
    return buf;
}

static void cv5_store(const pt_tview *t, const cv5 *v, const float *buf, const pt_exec_ctx *ctx) {
    int64_t n = cv5_count(v);
    int nt = conv_threads(ctx, n);
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
    for (int64_t i = 0; i < n; ++i) pt_tv_setf(t, cv5_off(v, i), buf[i]);
}

/* dst[N, OC, O] = bias + sum src[N, IC, I] * w[OC, IC/G, K]. */
static void conv_fwd_core(const float *src, const int64_t *sd, const float *w, const int64_t *wd,
                          const float *bias, float *dst, const int64_t *dd, int64_t G, const conv_geom *g,
                          const pt_exec_ctx *ctx) {
    int64_t N = dd[0], OC = dd[1], OD = dd[2], OH = dd[3], OW = dd[4];
    int64_t IC = sd[1], ID = sd[2], IH = sd[3], IW = sd[4];
    int64_t ICg = wd[1], OCg = OC / G, KD = wd[2], KH = wd[3], KW = wd[4];
    int64_t total = N * OC * OD * OH * OW;
    int nt = conv_threads(ctx, total * ICg * KD * KH * KW);
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
    for (int64_t lin = 0; lin < total; ++lin) {
        int64_t ow = lin % OW, oh = (lin / OW) % OH, od = (lin / (OW * OH)) % OD;
        int64_t oc = (lin / (OW * OH * OD)) % OC, n = lin / (OW * OH * OD * OC);
        int64_t grp = oc / OCg;
        double acc = bias ? (double)bias[oc] : 0.0;
        for (int64_t c = 0; c < ICg; ++c) {
            const float *sp = src + (n * IC + grp * ICg + c) * ID * IH * IW;
            const float *wp = w + (oc * ICg + c) * KD * KH * KW;
            for (int64_t kd = 0; kd < KD; ++kd) {
                int64_t id = od * g->S[0] + kd * g->Dl[0] - g->P[0];
                if (id < 0 || id >= ID) continue;
                for (int64_t kh = 0; kh < KH; ++kh) {
                    int64_t ih = oh * g->S[1] + kh * g->Dl[1] - g->P[1];
                    if (ih < 0 || ih >= IH) continue;
                    for (int64_t kw = 0; kw < KW; ++kw) {
                        int64_t iw = ow * g->S[2] + kw * g->Dl[2] - g->P[2];
                        if (iw < 0 || iw >= IW) continue;
                        acc += (double)sp[(id * IH + ih) * IW + iw] * (double)wp[(kd * KH + kh) * KW + kw];
                    }
                }
            }
        }
        dst[lin] = (float)acc;
    }
}

/* Input index along one slot reached by output `o` and tap `t`, or -1. */
static inline int64_t bwd_src_pos(int64_t i, int64_t t, int slot, const conv_geom *g, int64_t O) {
    int64_t num = i + g->P[slot] - t * g->Dl[slot];
    if (num < 0 || num % g->S[slot] != 0) return -1;
    int64_t o = num / g->S[slot];
    return o < O ? o : -1;
}

/* diff_src[N, IC, I] = bias + sum diff_dst[N, OC, O] * w[OC, IC/G, K] (adjoint of conv_fwd_core). */
static void conv_bwd_data_core(const float *ddst, const int64_t *ddd, const float *w, const int64_t *wd,
                               const float *bias, float *dsrc, const int64_t *sd, int64_t G,
                               const conv_geom *g, const pt_exec_ctx *ctx) {
    int64_t N = sd[0], IC = sd[1], ID = sd[2], IH = sd[3], IW = sd[4];
    int64_t OC = ddd[1], OD = ddd[2], OH = ddd[3], OW = ddd[4];
    int64_t ICg = wd[1], OCg = OC / G, KD = wd[2], KH = wd[3], KW = wd[4];
    int64_t total = N * IC * ID * IH * IW;
    int nt = conv_threads(ctx, total * OCg * KD * KH * KW);
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
    for (int64_t lin = 0; lin < total; ++lin) {
        int64_t iw = lin % IW, ih = (lin / IW) % IH, id = (lin / (IW * IH)) % ID;
        int64_t ic = (lin / (IW * IH * ID)) % IC, n = lin / (IW * IH * ID * IC);
        int64_t grp = ic / ICg, c = ic % ICg;
        double acc = bias ? (double)bias[ic] : 0.0;
        for (int64_t kd = 0; kd < KD; ++kd) {
            int64_t od = bwd_src_pos(id, kd, 0, g, OD);
            if (od < 0) continue;
            for (int64_t kh = 0; kh < KH; ++kh) {
                int64_t oh = bwd_src_pos(ih, kh, 1, g, OH);
                if (oh < 0) continue;
                for (int64_t kw = 0; kw < KW; ++kw) {
                    int64_t ow = bwd_src_pos(iw, kw, 2, g, OW);
                    if (ow < 0) continue;
                    int64_t dpos = (od * OH + oh) * OW + ow, wpos = (kd * KH + kh) * KW + kw;
                    for (int64_t ocg = 0; ocg < OCg; ++ocg) {
                        int64_t oc = grp * OCg + ocg;
                        acc += (double)ddst[(n * OC + oc) * OD * OH * OW + dpos] *
                               (double)w[(oc * ICg + c) * KD * KH * KW + wpos];
                    }
                }
            }
        }
        dsrc[lin] = (float)acc;
    }
}

/* diff_w[OC, IC/G, K] = sum_n,o diff_dst[N, OC, O] * src[N, IC, o*S + k*D - P]. */
static void conv_bwd_weights_core(const float *src, const int64_t *sd, const float *ddst, const int64_t *ddd,
                                  float *dw, const int64_t *wd, int64_t G, const conv_geom *g,
                                  const pt_exec_ctx *ctx) {
    int64_t N = sd[0], IC = sd[1], ID = sd[2], IH = sd[3], IW = sd[4];
    int64_t OC = ddd[1], OD = ddd[2], OH = ddd[3], OW = ddd[4];
    int64_t ICg = wd[1], OCg = OC / G, KD = wd[2], KH = wd[3], KW = wd[4];
    int64_t total = OC * ICg * KD * KH * KW;
    int nt = conv_threads(ctx, total * N * OD * OH * OW);
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt) if (nt > 1)
    for (int64_t lin = 0; lin < total; ++lin) {
        int64_t kw = lin % KW, kh = (lin / KW) % KH, kd = (lin / (KW * KH)) % KD;
        int64_t c = (lin / (KW * KH * KD)) % ICg, oc = lin / (KW * KH * KD * ICg);
        int64_t ic = (oc / OCg) * ICg + c;
        double acc = 0.0;
        for (int64_t n = 0; n < N; ++n) {
            const float *sp = src + (n * IC + ic) * ID * IH * IW;
            const float *dp = ddst + (n * OC + oc) * OD * OH * OW;
            for (int64_t od = 0; od < OD; ++od) {
                int64_t id = od * g->S[0] + kd * g->Dl[0] - g->P[0];
                if (id < 0 || id >= ID) continue;
                for (int64_t oh = 0; oh < OH; ++oh) {
                    int64_t ih = oh * g->S[1] + kh * g->Dl[1] - g->P[1];
                    if (ih < 0 || ih >= IH) continue;
                    for (int64_t ow = 0; ow < OW; ++ow) {
                        int64_t iw = ow * g->S[2] + kw * g->Dl[2] - g->P[2];
                        if (iw < 0 || iw >= IW) continue;
                        acc += (double)dp[(od * OH + oh) * OW + ow] * (double)sp[(id * IH + ih) * IW + iw];
                    }
                }
            }
        }
        dw[lin] = (float)acc;
    }
}

/* ---- attribute handling --------------------------------------------------- */

typedef enum { CONV_FWD, CONV_BWD_DATA, CONV_BWD_WEIGHTS } conv_role;

typedef struct {
    const char *name;  /* op name for messages */
    bool transpose;    /* ConvTranspose family (IOX/XOI weights) */
    bool nxc;
    bool x_first;      /* XIO / XOI */
    int64_t G;
    int k;             /* spatial dims */
    int64_t strides[3], dils[3], pb[3], pe[3];
    const char *auto_pad;
} conv_attrs;

/* Reads an s64 list attribute of length k (absent or empty -> `dflt`). */
static pt_status conv_list(const pt_op *op, int attr, int k, int64_t dflt, int64_t minv, const char *what,
                           const char *opname, int64_t *outv) {
    size_t n = 0;
    const int64_t *v = pt_op_s64s(op, attr, &n);
    if (!v || n == 0) {
        for (int j = 0; j < k; ++j) outv[j] = dflt;
        return dnnl_success;
    }
    if ((int)n != k)
        return pt_err(dnnl_invalid_arguments, "%s: %s has %zu entries, expected %d", opname, what, n, k);
    for (int j = 0; j < k; ++j) {
        if (v[j] < minv)
            return pt_err(dnnl_invalid_arguments, "%s: %s[%d] = %lld out of range", opname, what, j, (long long)v[j]);
        outv[j] = v[j];
    }
    return dnnl_success;
}

static pt_status conv_read_attrs(const pt_op *op, const char *name, bool transpose, int rank, conv_attrs *a) {
    memset(a, 0, sizeof *a);
    a->name = name;
    a->transpose = transpose;
    if (rank < 3 || rank > 5) return pt_err(dnnl_unimplemented, "%s: rank %d not in [3, 5]", name, rank);
    a->k = rank - 2;
    const char *df = pt_op_str(op, dnnl_graph_op_attr_data_format, "NXC");
    const char *wf = pt_op_str(op, dnnl_graph_op_attr_weights_format, transpose ? "XOI" : "XIO");
    if (strcmp(df, "NXC") == 0) a->nxc = true;
    else if (strcmp(df, "NCX") == 0) a->nxc = false;
    else return pt_err(dnnl_invalid_arguments, "%s: bad data_format '%s'", name, df);
    if (strcmp(wf, transpose ? "XOI" : "XIO") == 0) a->x_first = true;
    else if (strcmp(wf, transpose ? "IOX" : "OIX") == 0) a->x_first = false;
    else return pt_err(dnnl_invalid_arguments, "%s: bad weights_format '%s'", name, wf);
    a->G = pt_op_s64(op, dnnl_graph_op_attr_groups, 1);
    if (a->G < 1) return pt_err(dnnl_invalid_arguments, "%s: groups %lld < 1", name, (long long)a->G);
    PT_CHECK(conv_list(op, dnnl_graph_op_attr_strides, a->k, 1, 1, "strides", name, a->strides));
    PT_CHECK(conv_list(op, dnnl_graph_op_attr_dilations, a->k, 1, 1, "dilations", name, a->dils));
    PT_CHECK(conv_list(op, dnnl_graph_op_attr_pads_begin, a->k, 0, 0, "pads_begin", name, a->pb));
    PT_CHECK(conv_list(op, dnnl_graph_op_attr_pads_end, a->k, 0, 0, "pads_end", name, a->pe));
    a->auto_pad = pt_op_str(op, dnnl_graph_op_attr_auto_pad, "None");
    return dnnl_success;
}

/* Geometry for the canonical slots.  `pad_in` gives the spatial extents
 * (canonical 5-D dims) that auto_pad resolution uses, `kd` the kernel dims. */
static void conv_make_geom(const conv_attrs *a, const int64_t *pad_in, const int64_t *kd, bool transpose_rule,
                           conv_geom *g) {
    for (int slot = 0; slot < 3; ++slot) {
        int j = slot - (3 - a->k);
        if (j < 0) {
            g->S[slot] = 1, g->Dl[slot] = 1, g->P[slot] = 0;
            continue;
        }
        int64_t pb = a->pb[j], pe = a->pe[j];
        pt_resolve_pad(a->auto_pad, transpose_rule, pad_in[2 + slot], kd[2 + slot], a->strides[j], a->dils[j],
                       a->pb[j], a->pe[j], &pb, &pe);
        g->S[slot] = a->strides[j], g->Dl[slot] = a->dils[j], g->P[slot] = pb;
    }
}

static bool same_rank3(const pt_tview *x, const pt_tview *y, const pt_tview *z) {
    return x->lt.ndims == y->lt.ndims && y->lt.ndims == z->lt.ndims;
}

/* Checks conv-forward consistency of canonical shapes: data in [N, IC, ..],
 * weights [OC, IC/G, K..], data out [N, OC, ..]. */
static pt_status conv_check(const conv_attrs *a, const cv5 *x, const cv5 *w, const cv5 *y) {
    if (x->d[0] != y->d[0])
        return pt_err(dnnl_invalid_arguments, "%s: batch mismatch (%lld vs %lld)", a->name, (long long)x->d[0],
                      (long long)y->d[0]);
    if (w->d[1] * a->G != x->d[1])
        return pt_err(dnnl_invalid_arguments, "%s: %lld input channels vs weights %lld x groups %lld", a->name,
                      (long long)x->d[1], (long long)w->d[1], (long long)a->G);
    if (w->d[0] != y->d[1] || y->d[1] % a->G != 0)
        return pt_err(dnnl_invalid_arguments, "%s: %lld output channels vs weights %lld (groups %lld)", a->name,
                      (long long)y->d[1], (long long)w->d[0], (long long)a->G);
    return dnnl_success;
}

static pt_status conv_bias(const conv_attrs *a, const pt_tview *b, int64_t C, float **out) {
    *out = NULL;
    if (!b) return dnnl_success;
    if (pt_tv_nelems(b) != C || b->lt.ndims < 1)
        return pt_err(dnnl_invalid_arguments, "%s: bias must be [%lld]", a->name, (long long)C);
    float *buf = malloc((size_t)(C > 0 ? C : 1) * sizeof(float));
    if (!buf) return pt_err(dnnl_out_of_memory, "%s: scratch allocation failed", a->name);
    int64_t idx[DNNL_MAX_NDIMS];
    for (int64_t c = 0; c < C; ++c) {
        pt_unravel(c, b->lt.ndims, b->lt.dims, idx);
        buf[c] = pt_tv_getf(b, pt_tv_off(b, idx));
    }
    *out = buf;
    return dnnl_success;
}

/* Runs one canonical routine.  x / w are the canonical operands (views of
 * tensors tx / tw), y the canonical output view of ty; `role` picks the routine:
 *   CONV_FWD:         y = conv(x, w)          x data in, w weights, y data out
 *   CONV_BWD_DATA:    y = conv_bwd_data(x, w) x diff_dst, w weights, y diff_src
 *   CONV_BWD_WEIGHTS: y = conv_bwd_w(x, w)    x src, w diff_dst (data), y weights */
static pt_status conv_run(const conv_attrs *a, conv_role role, const pt_tview *tx, const cv5 *x,
                          const pt_tview *tw, const cv5 *w, const pt_tview *ty, const cv5 *y, const float *bias,
                          const conv_geom *g, const pt_exec_ctx *ctx) {
    if (cv5_count(y) == 0) return dnnl_success;
    float *X = cv5_load(tx, x, ctx), *W = cv5_load(tw, w, ctx);
    float *Y = malloc((size_t)cv5_count(y) * sizeof(float));
    if (!X || !W || !Y) {
        free(X), free(W), free(Y);
        return pt_err(dnnl_out_of_memory, "%s: scratch allocation failed", a->name);
    }
    switch (role) {
        case CONV_FWD: conv_fwd_core(X, x->d, W, w->d, bias, Y, y->d, a->G, g, ctx); break;
        case CONV_BWD_DATA: conv_bwd_data_core(X, x->d, W, w->d, bias, Y, y->d, a->G, g, ctx); break;
        case CONV_BWD_WEIGHTS: conv_bwd_weights_core(X, x->d, W, w->d, Y, y->d, a->G, g, ctx); break;
    }
    cv5_store(ty, y, Y, ctx);
    free(X), free(W), free(Y);
    return dnnl_success;
}

/* ---- the six ops ------------------------------------------------------------ */

PT_REF_OP_KERNEL(pt_ref_conv) {
    if (nin < 2 || nout < 1) return pt_err(dnnl_invalid_arguments, "Convolution: needs 2-3 inputs, 1 output");
    conv_attrs a;
    PT_CHECK(conv_read_attrs(op, "Convolution", false, in[0].lt.ndims, &a));
    if (!same_rank3(&in[0], &in[1], &out[0])) return pt_err(dnnl_invalid_arguments, "Convolution: rank mismatch");
    cv5 x, w, y;
    cv5_data(&in[0], a.nxc, &x);
    cv5_weights(&in[1], a.x_first, &w);
    cv5_data(&out[0], a.nxc, &y);
    PT_CHECK(conv_check(&a, &x, &w, &y));
    float *bias;
    PT_CHECK(conv_bias(&a, nin > 2 ? &in[2] : NULL, y.d[1], &bias));
    conv_geom g;
    conv_make_geom(&a, x.d, w.d, false, &g);
    pt_status st = conv_run(&a, CONV_FWD, &in[0], &x, &in[1], &w, &out[0], &y, bias, &g, ctx);
    free(bias);
    return st;
}

PT_REF_OP_KERNEL(pt_ref_conv_bwd_data) {
    if (nin < 2 || nout < 1)
        return pt_err(dnnl_invalid_arguments, "ConvolutionBackwardData: needs 2-3 inputs, 1 output");
    conv_attrs a;
    PT_CHECK(conv_read_attrs(op, "ConvolutionBackwardData", false, in[0].lt.ndims, &a));
    if (!same_rank3(&in[0], &in[1], &out[0]))
        return pt_err(dnnl_invalid_arguments, "ConvolutionBackwardData: rank mismatch");
    cv5 dd, w, ds;
    cv5_data(&in[0], a.nxc, &dd);
    cv5_weights(&in[1], a.x_first, &w);
    cv5_data(&out[0], a.nxc, &ds);
    PT_CHECK(conv_check(&a, &ds, &w, &dd));
    conv_geom g;
    conv_make_geom(&a, ds.d, w.d, false, &g);
    return conv_run(&a, CONV_BWD_DATA, &in[0], &dd, &in[1], &w, &out[0], &ds, NULL, &g, ctx);
}

PT_REF_OP_KERNEL(pt_ref_conv_bwd_weights) {
    if (nin < 2 || nout < 1)
        return pt_err(dnnl_invalid_arguments, "ConvolutionBackwardWeights: needs 2-3 inputs, 1 output");
    conv_attrs a;
    PT_CHECK(conv_read_attrs(op, "ConvolutionBackwardWeights", false, in[0].lt.ndims, &a));
    if (!same_rank3(&in[0], &in[1], &out[0]))
        return pt_err(dnnl_invalid_arguments, "ConvolutionBackwardWeights: rank mismatch");
    cv5 x, dd, dw;
    cv5_data(&in[0], a.nxc, &x);
    cv5_data(&in[1], a.nxc, &dd);
    cv5_weights(&out[0], a.x_first, &dw);
    PT_CHECK(conv_check(&a, &x, &dw, &dd));
    conv_geom g;
    conv_make_geom(&a, x.d, dw.d, false, &g);
    return conv_run(&a, CONV_BWD_WEIGHTS, &in[0], &x, &in[1], &dd, &out[0], &dw, NULL, &g, ctx);
}

PT_REF_OP_KERNEL(pt_ref_conv_transpose) {
    if (nin < 2 || nout < 1) return pt_err(dnnl_invalid_arguments, "ConvTranspose: needs 2-3 inputs, 1 output");
    conv_attrs a;
    PT_CHECK(conv_read_attrs(op, "ConvTranspose", true, in[0].lt.ndims, &a));
    if (!same_rank3(&in[0], &in[1], &out[0])) return pt_err(dnnl_invalid_arguments, "ConvTranspose: rank mismatch");
    cv5 x, w, y;
    cv5_data(&in[0], a.nxc, &x);
    cv5_weights(&in[1], a.x_first, &w); /* canonical IOX = OIX of the adjoint conv */
    cv5_data(&out[0], a.nxc, &y);
    PT_CHECK(conv_check(&a, &y, &w, &x));
    float *bias;
    PT_CHECK(conv_bias(&a, nin > 2 ? &in[2] : NULL, y.d[1], &bias));
    conv_geom g;
    conv_make_geom(&a, x.d, w.d, true, &g);
    pt_status st = conv_run(&a, CONV_BWD_DATA, &in[0], &x, &in[1], &w, &out[0], &y, bias, &g, ctx);
    free(bias);
    return st;
}

PT_REF_OP_KERNEL(pt_ref_conv_transpose_bwd_data) {
    if (nin < 2 || nout < 1)
        return pt_err(dnnl_invalid_arguments, "ConvTransposeBackwardData: needs 2 inputs, 1 output");
    conv_attrs a;
    PT_CHECK(conv_read_attrs(op, "ConvTransposeBackwardData", true, in[0].lt.ndims, &a));
    if (!same_rank3(&in[0], &in[1], &out[0]))
        return pt_err(dnnl_invalid_arguments, "ConvTransposeBackwardData: rank mismatch");
    cv5 dd, w, ds;
    cv5_data(&in[0], a.nxc, &dd);
    cv5_weights(&in[1], a.x_first, &w);
    cv5_data(&out[0], a.nxc, &ds);
    PT_CHECK(conv_check(&a, &dd, &w, &ds));
    conv_geom g;
    conv_make_geom(&a, dd.d, w.d, false, &g);
    return conv_run(&a, CONV_FWD, &in[0], &dd, &in[1], &w, &out[0], &ds, NULL, &g, ctx);
}

PT_REF_OP_KERNEL(pt_ref_conv_transpose_bwd_weights) {
    if (nin < 2 || nout < 1)
        return pt_err(dnnl_invalid_arguments, "ConvTransposeBackwardWeights: needs 2-3 inputs, 1 output");
    conv_attrs a;
    PT_CHECK(conv_read_attrs(op, "ConvTransposeBackwardWeights", true, in[0].lt.ndims, &a));
    if (!same_rank3(&in[0], &in[1], &out[0]))
        return pt_err(dnnl_invalid_arguments, "ConvTransposeBackwardWeights: rank mismatch");
    cv5 x, dd, dw;
    cv5_data(&in[0], a.nxc, &x);
    cv5_data(&in[1], a.nxc, &dd);
    cv5_weights(&out[0], a.x_first, &dw);
    /* Adjoint conv: its src is diff_dst, its diff_dst is the ConvTranspose src. */
    PT_CHECK(conv_check(&a, &dd, &dw, &x));
    conv_geom g;
    conv_make_geom(&a, dd.d, dw.d, false, &g);
    return conv_run(&a, CONV_BWD_WEIGHTS, &in[1], &dd, &in[0], &x, &out[0], &dw, NULL, &g, ctx);
}
