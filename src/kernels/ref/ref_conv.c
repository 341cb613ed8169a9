/* Reference convolution family (docs/ops.md: Convolution, ConvolutionBackwardData,
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
#include <string.h>

#include "ir/dtype_round.h"
#include "ir/status.h"
#include "kernels/ref/ref_common.h"
#include "kernels/ref/ref_kernels.h"

/* Canonical 5-D views: data [N, C, D, H, W], weights [A, B, KD, KH, KW]. */
typedef pt_v5 cv5;
typedef pt_ref_conv_params conv_geom; /* S, Dl, P per spatial slot */

static int64_t cv5_count(const cv5 *v) { return pt_v5_count(v); }

/* Dense canonical f32 copy of a tensor (fpmath-rounded when it is f32). */
static void cv5_load(const pt_tview *t, const cv5 *v, float *buf, const pt_exec_ctx *ctx) {
    int64_t n = cv5_count(v);
    dnnl_fpmath_mode_t mode = ctx ? ctx->fpmath : dnnl_fpmath_mode_strict;
    bool round = t->lt.data_type == dnnl_f32 && mode != dnnl_fpmath_mode_strict;
    int nt = pt_ref_threads_for(ctx, n);
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
    for (int64_t i = 0; i < n; ++i) {
        float x = pt_tv_getf(t, pt_v5_lin_off(v, i));
        buf[i] = round ? pt_round_fpmath(mode, x) : x;
    }
}

/* dst[N, OC, O] = bias + sum src[N, IC, I] * w[OC, IC/G, K]. */
static void conv_fwd_core(const float *src, const int64_t *sd, const float *w, const int64_t *wd,
                          const float *bias, float *dst, const int64_t *dd, int64_t G, const conv_geom *g,
                          const pt_exec_ctx *ctx) {
    int64_t N = dd[0], OC = dd[1], OD = dd[2], OH = dd[3], OW = dd[4];
    int64_t IC = sd[1], ID = sd[2], IH = sd[3], IW = sd[4];
    int64_t ICg = wd[1], OCg = OC / G, KD = wd[2], KH = wd[3], KW = wd[4];
    int64_t total = N * OC * OD * OH * OW;
    int nt = pt_ref_threads_for(ctx, total * ICg * KD * KH * KW);
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
    for (int64_t lin = 0; lin < total; ++lin) {
        int64_t q[5];
        pt_pos5(dd, lin, q);
        const int64_t n = q[0], oc = q[1], od = q[2], oh = q[3], ow = q[4];
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
    int nt = pt_ref_threads_for(ctx, total * OCg * KD * KH * KW);
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
    for (int64_t lin = 0; lin < total; ++lin) {
        int64_t q[5];
        pt_pos5(sd, lin, q);
        const int64_t n = q[0], ic = q[1], id = q[2], ih = q[3], iw = q[4];
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
    int nt = pt_ref_threads_for(ctx, total * N * OD * OH * OW);
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt) if (nt > 1)
    for (int64_t lin = 0; lin < total; ++lin) {
        int64_t q[5];
        pt_pos5(wd, lin, q);
        const int64_t oc = q[0], c = q[1], kd = q[2], kh = q[3], kw = q[4];
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

/* ---- checks and the canonical run ---------------------------------------- */

typedef enum { CONV_FWD, CONV_BWD_DATA, CONV_BWD_WEIGHTS } conv_role;

typedef pt_ref_conv_params conv_attrs;

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

static pt_status conv_bias_check(const conv_attrs *a, const pt_tview *b, int64_t C) {
    if (b && (pt_tv_nelems(b) != C || b->lt.ndims < 1))
        return pt_err(dnnl_invalid_arguments, "%s: bias must be [%lld]", a->name, (long long)C);
    return dnnl_success;
}

static void conv_bias_load(const pt_tview *b, int64_t C, float *buf) {
    int64_t idx[DNNL_MAX_NDIMS];
    for (int64_t c = 0; c < C; ++c) {
        pt_unravel(c, b->lt.ndims, b->lt.dims, idx);
        buf[c] = pt_tv_getf(b, pt_tv_off(b, idx));
    }
}

size_t pt_ref_conv_scratch(const pt_lt *x, const pt_lt *w, const pt_lt *y, const pt_lt *bias) {
    size_t n = pt_scratch_round(pt_lt_count(x) * sizeof(float)) + pt_scratch_round(pt_lt_count(w) * sizeof(float)) +
               pt_scratch_round(pt_lt_count(y) * sizeof(float));
    return n + (bias ? pt_scratch_round(pt_lt_count(bias) * sizeof(float)) : 0);
}

/* Runs one canonical routine.  x / w are the canonical operands (views of
 * tensors tx / tw), y the canonical output view of ty; `role` picks the routine:
 *   CONV_FWD:         y = conv(x, w)          x data in, w weights, y data out
 *   CONV_BWD_DATA:    y = conv_bwd_data(x, w) x diff_dst, w weights, y diff_src
 *   CONV_BWD_WEIGHTS: y = conv_bwd_w(x, w)    x src, w diff_dst (data), y weights */
static pt_status conv_run(const conv_attrs *a, conv_role role, const pt_tview *tx, const cv5 *x,
                          const pt_tview *tw, const cv5 *w, const pt_tview *ty, const cv5 *y, const pt_tview *tb,
                          const pt_exec_ctx *ctx) {
    const conv_geom *g = a;
    if (cv5_count(y) == 0) return dnnl_success;
    PT_CHECK(pt_ref_need_scratch(a->name, ctx, pt_ref_conv_scratch(&tx->lt, &tw->lt, &ty->lt, tb ? &tb->lt : NULL)));
    char *cur = ctx->scratch;
    float *X = pt_scratch_take(&cur, (size_t)cv5_count(x) * sizeof(float));
    float *W = pt_scratch_take(&cur, (size_t)cv5_count(w) * sizeof(float));
    float *Y = pt_scratch_take(&cur, (size_t)cv5_count(y) * sizeof(float));
    float *bias = tb ? pt_scratch_take(&cur, (size_t)y->d[1] * sizeof(float)) : NULL;
    if (tb) conv_bias_load(tb, y->d[1], bias);
    cv5_load(tx, x, X, ctx);
    cv5_load(tw, w, W, ctx);
    switch (role) {
        case CONV_FWD: conv_fwd_core(X, x->d, W, w->d, bias, Y, y->d, a->G, g, ctx); break;
        case CONV_BWD_DATA: conv_bwd_data_core(X, x->d, W, w->d, bias, Y, y->d, a->G, g, ctx); break;
        case CONV_BWD_WEIGHTS: conv_bwd_weights_core(X, x->d, W, w->d, Y, y->d, a->G, g, ctx); break;
    }
    pt_v5_store(ty, y, Y, ctx);
    return dnnl_success;
}

/* ---- the six ops ------------------------------------------------------------ */

/* Checks the port count and ranks and makes the canonical views of in[0],
 * in[1] and out[0] (v[0..2]); v[wt] is a weights tensor, the others data. */
static pt_status conv_views(const conv_attrs *a, const char *need, const pt_tview *in, size_t nin,
                            const pt_tview *out, size_t nout, int wt, cv5 v[3]) {
    if (nin < 2 || nout < 1) return pt_err(dnnl_invalid_arguments, "%s: needs %s", a->name, need);
    if (!same_rank3(&in[0], &in[1], &out[0])) return pt_err(dnnl_invalid_arguments, "%s: rank mismatch", a->name);
    const pt_tview *t[3] = {&in[0], &in[1], &out[0]};
    for (int i = 0; i < 3; ++i) {
        if (i == wt) pt_v5_weights(&t[i]->lt, a->x_first, &v[i]);
        else pt_v5_data(&t[i]->lt, a->nxc, &v[i]);
    }
    return dnnl_success;
}

/* How one op of the family maps onto a canonical routine.  Views v[0..2] are
 * in[0], in[1], out[0]; v[wt] is a weights tensor.  conv_check sees
 * (v[chk[0]], v[chk[1]], v[chk[2]]) as (data in, weights, data out) of the
 * forward convolution; the routine reads v[x] / v[w] and writes v[2]. */
typedef struct {
    const char *need;
    int wt, chk[3];
    conv_role role;
    int x, w;
    bool bias; /* optional in[2] */
} conv_form;

static pt_status conv_exec(const conv_form *f, const conv_attrs *a, const pt_tview *in, size_t nin,
                           const pt_tview *out, size_t nout, const pt_exec_ctx *ctx) {
    cv5 v[3];
    PT_CHECK(conv_views(a, f->need, in, nin, out, nout, f->wt, v));
    PT_CHECK(conv_check(a, &v[f->chk[0]], &v[f->chk[1]], &v[f->chk[2]]));
    const pt_tview *bias = f->bias && nin > 2 ? &in[2] : NULL;
    PT_CHECK(conv_bias_check(a, bias, v[2].d[1]));
    return conv_run(a, f->role, &in[f->x], &v[f->x], &in[f->w], &v[f->w], &out[0], &v[2], bias, ctx);
}

/* Convolution: y = conv(x, w). */
static const conv_form fwd_form = {"2-3 inputs, 1 output", 1, {0, 1, 2}, CONV_FWD, 0, 1, true};
/* ConvolutionBackwardData: diff_src from diff_dst and w. */
static const conv_form bwd_data_form = {"2-3 inputs, 1 output", 1, {2, 1, 0}, CONV_BWD_DATA, 0, 1, false};
/* ConvolutionBackwardWeights: diff_weights from src and diff_dst. */
static const conv_form bwd_w_form = {"2-3 inputs, 1 output", 2, {0, 2, 1}, CONV_BWD_WEIGHTS, 0, 1, false};
/* ConvTranspose: the backward data of the adjoint conv (canonical IOX = OIX). */
static const conv_form t_form = {"2-3 inputs, 1 output", 1, {2, 1, 0}, CONV_BWD_DATA, 0, 1, true};
/* ConvTransposeBackwardData: a forward conv. */
static const conv_form t_bwd_data_form = {"2 inputs, 1 output", 1, {0, 1, 2}, CONV_FWD, 0, 1, false};
/* ConvTransposeBackwardWeights: the adjoint conv's src is diff_dst, its
 * diff_dst the ConvTranspose src. */
static const conv_form t_bwd_w_form = {"2-3 inputs, 1 output", 2, {1, 2, 0}, CONV_BWD_WEIGHTS, 1, 0, false};

PT_REF_DECL(pt_ref_conv) { return conv_exec(&fwd_form, params, in, nin, out, nout, ctx); }
PT_REF_DECL(pt_ref_conv_bwd_data) { return conv_exec(&bwd_data_form, params, in, nin, out, nout, ctx); }
PT_REF_DECL(pt_ref_conv_bwd_weights) { return conv_exec(&bwd_w_form, params, in, nin, out, nout, ctx); }
PT_REF_DECL(pt_ref_conv_transpose) { return conv_exec(&t_form, params, in, nin, out, nout, ctx); }
PT_REF_DECL(pt_ref_conv_transpose_bwd_data) { return conv_exec(&t_bwd_data_form, params, in, nin, out, nout, ctx); }
PT_REF_DECL(pt_ref_conv_transpose_bwd_weights) { return conv_exec(&t_bwd_w_form, params, in, nin, out, nout, ctx); }
