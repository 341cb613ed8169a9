/* Convolutions on the GEMM microkernels, through the public API: each graph
 * runs with its compiled kernels and through the reference kernels (the
 * oracle), compared within the engine's bound (f32 accumulation).  Forward
 * convolutions with post-ops, lone ConvolutionBackwardData (a transposed
 * convolution of diff_dst) and lone ConvolutionBackwardWeights (positions
 * as the reduction, in chunks: sizes on both sides of a chunk), the two
 * ConvTranspose backward ops (the adjoint convolution), NCX / NXC,
 * OIX / XIO, groups, strides, dilations, padding, 1-D to 3-D, bf16 data
 * and the bf16 math mode; quantized convolutions (u8 / s8 src with zero
 * points, s8 weights per tensor or per channel, bias, ReLU / Clamp,
 * post-sum, Quantize or f32 out) on the U8S8 kind. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "test_graph_util.h"
#include "test_util.h"

static uint32_t rng = 99u;

/* A tensor (id + 1; 0: none) that gets an infinity and a NaN among its values. */
static size_t g_nonfinite;

static void fill_input(const tg_graph *g, int t, void *buf) {
    (void)g;
    tg_attn_fill f = {&rng, TG_V_RAND, 0.f, 0.f, 0.f};
    tg_fill(&g->lt[t], buf, tg_attn_value, &f);
    if (g_nonfinite == (size_t)t + 1 && g->lt[t].data_type == dnnl_f32 && tg_nelems(&g->lt[t]) > 11)
        ((float *)buf)[3] = INFINITY, ((float *)buf)[11] = NAN;
}

/* Runs `g` compiled and through the reference kernels; every result within
 * the engine bound (wider for the bf16 math mode: operands rounded to bf16,
 * sums of up to `terms` products). */
static void check_graph(const char *name, tg_graph *g, int terms) {
    const tg_graph *sets[2] = {g, g};
    tg_bufs B;
    tg_bufs_alloc(&B, sets, 2, fill_input);
    tg_run_info ri, fi;
    bool ok = tg_run(g, &(tg_run_opts){.policy = dnnl_graph_partition_policy_fusion, .reference = true}, B.set[0], &ri);
    ok = ok && tg_run(g, &(tg_run_opts){.policy = dnnl_graph_partition_policy_fusion}, B.set[1], &fi);
    CHECK(ok);
    if (ok) {
        CHECK(tg_count_fused(&fi, NULL) >= 1); /* the kernel under test ran */
        for (int r = 0; r < g->nres; ++r) {
            const size_t t = g->result[r] - 1;
            const tg_lt *lt = &g->lt[t];
            if (g->fpmath == dnnl_fpmath_mode_bf16) {
                /* bf16 operands: each product off by up to 2^-8 relative. */
                tg_diff d = tg_diff_values(lt, B.set[0][t], B.set[1][t], NULL);
                (void)d;
                const float *a = B.set[0][t], *b = B.set[1][t];
                int64_t bad = 0;
                for (int64_t e = 0; e < tg_nelems(lt); ++e)
                    bad += fabs((double)a[tg_offset(lt, e)] - b[tg_offset(lt, e)]) > 8e-3 * sqrt((double)terms) + 1e-3;
                if (bad) printf("  %s: %lld elements beyond the bf16 bound\n", name, (long long)bad);
                CHECK(bad == 0);
            } else {
                tg_check_values(name, lt, B.set[0][t], B.set[1][t], tg_engine_tol);
            }
        }
    }
    tg_bufs_free(&B);
}

typedef struct {
    int k;                        /* spatial dims */
    int64_t N, IC, OC, G, in[3], ker[3], S[3], Dl[3], pb[3], pe[3];
    bool nxc, xio;
    bool nonfinite_w; /* forward: an infinity and a NaN among the weights */
    dnnl_data_type_t dt;
    dnnl_fpmath_mode_t mode;
} cfg;

static cfg base(int k) {
    cfg c;
    memset(&c, 0, sizeof c);
    c.k = k, c.N = 2, c.IC = 8, c.OC = 12, c.G = 1, c.dt = dnnl_f32;
    for (int j = 0; j < 3; ++j) c.in[j] = 7 + 3 * j, c.ker[j] = 3, c.S[j] = 1, c.Dl[j] = 1, c.pb[j] = 1, c.pe[j] = 1;
    return c;
}

static void dims_of(const cfg *c, int64_t *x, int64_t *w, int64_t *y) {
    const int r = c->k + 2;
    x[0] = y[0] = c->N;
    x[c->nxc ? r - 1 : 1] = c->IC;
    y[c->nxc ? r - 1 : 1] = c->OC;
    for (int j = 0; j < c->k; ++j) {
        x[c->nxc ? 1 + j : 2 + j] = c->in[j];
        y[c->nxc ? 1 + j : 2 + j] = (c->in[j] + c->pb[j] + c->pe[j] - c->Dl[j] * (c->ker[j] - 1) - 1) / c->S[j] + 1;
        w[c->xio ? j : 2 + j] = c->ker[j];
    }
    if (c->xio) w[r - 2] = c->IC / c->G, w[r - 1] = c->OC;
    else w[0] = c->OC, w[1] = c->IC / c->G;
}

/* `transposed`: the ConvTranspose formats (IOX / XOI name the same memory
 * as OIX / XIO of the adjoint convolution). */
static void conv_attrs(tg_op *o, const cfg *c, bool with_dst_shape, const int64_t *x, bool transposed) {
    tg_attr_s64(o, dnnl_graph_op_attr_strides, c->S, c->k);
    tg_attr_s64(o, dnnl_graph_op_attr_dilations, c->Dl, c->k);
    tg_attr_s64(o, dnnl_graph_op_attr_pads_begin, c->pb, c->k);
    tg_attr_s64(o, dnnl_graph_op_attr_pads_end, c->pe, c->k);
    tg_attr_s64(o, dnnl_graph_op_attr_groups, &c->G, 1);
    tg_attr_str(o, dnnl_graph_op_attr_data_format, c->nxc ? "NXC" : "NCX");
    tg_attr_str(o, dnnl_graph_op_attr_weights_format, transposed ? (c->xio ? "XOI" : "IOX") : c->xio ? "XIO" : "OIX");
    if (with_dst_shape) tg_attr_s64(o, dnnl_graph_op_attr_dst_shape, x, c->k + 2);
}

/* The ConvTranspose backward ops are written in the adjoint convolution's
 * terms: ConvTransposeBackwardData(diff_dst = conv x) = conv y,
 * ConvTransposeBackwardWeights(src = conv y, diff_dst = conv x). */
enum { FWD, BWD_DATA, BWD_WEIGHTS, T_BWD_DATA, T_BWD_WEIGHTS };

static void run_case(const char *name, const cfg *c, int which) {
    tg_graph g;
    memset(&g, 0, sizeof g);
    g.fpmath = c->mode;
    const int r = c->k + 2;
    int64_t xd[5], wd[5], yd[5];
    dims_of(c, xd, wd, yd);
    int64_t positions = c->N, taps = 1;
    for (int j = 0; j < c->k; ++j) positions *= yd[c->nxc ? 1 + j : 2 + j], taps *= c->ker[j];
    int terms = 0;
    if (which == FWD) {
        size_t x = tg_tensor(&g, c->dt, r, xd, NULL), w = tg_tensor(&g, c->dt, r, wd, NULL);
        size_t y = tg_tensor(&g, c->dt, r, yd, NULL), z = tg_tensor(&g, c->dt, r, yd, NULL);
        tg_op *o = tg_add(&g, dnnl_graph_op_convolution, 2, (size_t[]){x, w}, 1, (size_t[]){y});
        conv_attrs(o, c, false, NULL, false);
        tg_add(&g, dnnl_graph_op_relu, 1, (size_t[]){y}, 1, (size_t[]){z});
        g.result[g.nres++] = z;
        terms = (int)(c->IC / c->G * taps);
        g_nonfinite = c->nonfinite_w ? w : 0;
    } else if (which == BWD_DATA) {
        size_t dy = tg_tensor(&g, c->dt, r, yd, NULL), w = tg_tensor(&g, c->dt, r, wd, NULL);
        size_t dx = tg_tensor(&g, c->dt, r, xd, NULL);
        tg_op *o = tg_add(&g, dnnl_graph_op_convolution_backward_data, 2, (size_t[]){dy, w}, 1, (size_t[]){dx});
        conv_attrs(o, c, true, xd, false);
        g.result[g.nres++] = dx;
        terms = (int)(c->OC / c->G * taps);
    } else if (which == BWD_WEIGHTS) {
        size_t x = tg_tensor(&g, c->dt, r, xd, NULL), dy = tg_tensor(&g, c->dt, r, yd, NULL);
        size_t dw = tg_tensor(&g, c->dt, r, wd, NULL);
        tg_op *o = tg_add(&g, dnnl_graph_op_convolution_backward_weights, 2, (size_t[]){x, dy}, 1, (size_t[]){dw});
        conv_attrs(o, c, false, NULL, false);
        tg_attr_s64(o, dnnl_graph_op_attr_weights_shape, wd, r);
        g.result[g.nres++] = dw;
        terms = (int)positions;
    } else if (which == T_BWD_DATA) {
        size_t dy = tg_tensor(&g, c->dt, r, xd, NULL), w = tg_tensor(&g, c->dt, r, wd, NULL);
        size_t dx = tg_tensor(&g, c->dt, r, yd, NULL);
        tg_op *o = tg_add(&g, dnnl_graph_op_conv_transpose_backward_data, 2, (size_t[]){dy, w}, 1, (size_t[]){dx});
        conv_attrs(o, c, false, NULL, true);
        g.result[g.nres++] = dx;
        terms = (int)(c->IC / c->G * taps);
    } else {
        size_t src = tg_tensor(&g, c->dt, r, yd, NULL), dy = tg_tensor(&g, c->dt, r, xd, NULL);
        size_t dw = tg_tensor(&g, c->dt, r, wd, NULL);
        tg_op *o = tg_add(&g, dnnl_graph_op_conv_transpose_backward_weights, 2, (size_t[]){src, dy}, 1,
                          (size_t[]){dw});
        conv_attrs(o, c, false, NULL, true);
        tg_attr_s64(o, dnnl_graph_op_attr_weights_shape, wd, r);
        g.result[g.nres++] = dw;
        terms = (int)positions;
    }
    check_graph(name, &g, terms);
    g_nonfinite = 0;
}

/* ---- quantized convolutions (the U8S8 kind) -------------------------------- */

/* Integer tensors over their whole range, floats in [-1, 1). */
typedef struct {
    const tg_lt *lt;
} int_fill;
static float next_int_value(void *ctx) {
    const int_fill *f = ctx;
    const uint32_t r = tg_lcg(&rng);
    switch (f->lt->data_type) {
        case dnnl_u8: return (float)(r % 256u);
        case dnnl_s8: return (float)(int)(r % 256u) - 128.f;
        default: return tg_lcg_pm1(&rng);
    }
}
/* A bias tensor (id + 1; 0: none) whose values cycle through NaN, +inf,
 * -inf and a finite value: the epilogue's ReLU / Clamp / Quantize steps on
 * non-finite inputs. */
static size_t g_special_bias;

static void fill_int_input(const tg_graph *g, int t, void *buf) {
    int_fill f = {&g->lt[t]};
    tg_fill(&g->lt[t], buf, next_int_value, &f);
    if (g_special_bias == (size_t)t + 1 && g->lt[t].data_type == dnnl_f32) {
        const float special[4] = {NAN, INFINITY, -INFINITY, 0.25f};
        for (int64_t i = 0; i < tg_nelems(&g->lt[t]); ++i) ((float *)buf)[i] = special[i % 4];
    }
}

typedef struct {
    dnnl_data_type_t src_dt, out_dt; /* out f32: no final Quantize */
    int64_t src_zp, wei_zp, out_zp;
    bool per_channel, bias, bias_add, clamp, post_sum, sum_u8, constant_w;
    bool special_bias; /* NaN, +inf, -inf among the bias values */
} qcfg;

static void quant_attrs(tg_op *o, const float *scales, const int64_t *zps, int n, int axis) {
    tg_attr_str(o, dnnl_graph_op_attr_qtype, n > 1 ? "per_channel" : "per_tensor");
    tg_attr_f32(o, dnnl_graph_op_attr_scales, scales, n);
    tg_attr_s64(o, dnnl_graph_op_attr_zps, zps, n);
    int64_t ax = axis;
    tg_attr_s64(o, dnnl_graph_op_attr_axis, &ax, 1);
}

/* Dequantize(src) and Dequantize(s8 weights) -> Convolution (bias?) ->
 * ReLU or Clamp -> Add(Dequantize(s8 ext))? -> Quantize?, run compiled and
 * through the reference kernels: integer results within 1 (a sum on a
 * rounding boundary), f32 ones within the engine bound. */
static void run_quant_case(const char *name, const cfg *c, const qcfg *q) {
    tg_graph g;
    memset(&g, 0, sizeof g);
    g.fpmath = c->mode;
    g.apply_to_int = 1;
    const int r = c->k + 2;
    int64_t xd[5], wd[5], yd[5];
    dims_of(c, xd, wd, yd);
    size_t xq = tg_tensor(&g, q->src_dt, r, xd, NULL), wq = tg_tensor(&g, dnnl_s8, r, wd, NULL);
    if (q->constant_w) tg_lt_of(&g, wq)->property = dnnl_graph_tensor_property_constant;
    size_t x = tg_tensor(&g, dnnl_f32, r, xd, NULL), w = tg_tensor(&g, dnnl_f32, r, wd, NULL);
    const float sa = 0.02f;
    tg_op *o = tg_add(&g, dnnl_graph_op_dequantize, 1, (size_t[]){xq}, 1, (size_t[]){x});
    quant_attrs(o, &sa, &q->src_zp, 1, 1);
    float ws[TG_MAXV];
    int64_t wz[TG_MAXV];
    const int nsc = q->per_channel ? (int)c->OC : 1;
    if (nsc > TG_MAXV) { /* the scale list holds TG_MAXV values */
        CHECK(nsc <= TG_MAXV);
        return;
    }
    for (int i = 0; i < nsc; ++i) ws[i] = 0.004f + 0.001f * (float)(i % 5), wz[i] = q->wei_zp;
    o = tg_add(&g, dnnl_graph_op_dequantize, 1, (size_t[]){wq}, 1, (size_t[]){w});
    quant_attrs(o, ws, wz, nsc, c->xio ? r - 1 : 0);
    size_t y = tg_tensor(&g, dnnl_f32, r, yd, NULL);
    g_special_bias = 0;
    if (q->bias) {
        size_t b = tg_tensor(&g, dnnl_f32, 1, (int64_t[]){c->OC}, NULL);
        if (q->special_bias) g_special_bias = b;
        o = tg_add(&g, dnnl_graph_op_convolution, 3, (size_t[]){x, w, b}, 1, (size_t[]){y});
    } else {
        o = tg_add(&g, dnnl_graph_op_convolution, 2, (size_t[]){x, w}, 1, (size_t[]){y});
    }
    conv_attrs(o, c, false, NULL, false);
    if (q->bias_add) {
        size_t b = tg_tensor(&g, dnnl_f32, 1, (int64_t[]){c->OC}, NULL), yb = tg_tensor(&g, dnnl_f32, r, yd, NULL);
        o = tg_add(&g, dnnl_graph_op_bias_add, 2, (size_t[]){y, b}, 1, (size_t[]){yb});
        tg_attr_str(o, dnnl_graph_op_attr_data_format, c->nxc ? "NXC" : "NCX");
        y = yb;
    }
    if (q->post_sum) {
        size_t eq = tg_tensor(&g, q->sum_u8 ? dnnl_u8 : dnnl_s8, r, yd, NULL), e = tg_tensor(&g, dnnl_f32, r, yd, NULL);
        const float es = 0.05f;
        const int64_t ez = 1;
        o = tg_add(&g, dnnl_graph_op_dequantize, 1, (size_t[]){eq}, 1, (size_t[]){e});
        quant_attrs(o, &es, &ez, 1, 1);
        size_t sum = tg_tensor(&g, dnnl_f32, r, yd, NULL);
        tg_add(&g, dnnl_graph_op_add, 2, (size_t[]){y, e}, 1, (size_t[]){sum});
        y = sum;
    }
    size_t z = tg_tensor(&g, dnnl_f32, r, yd, NULL);
    if (q->clamp) {
        o = tg_add(&g, dnnl_graph_op_clamp, 1, (size_t[]){y}, 1, (size_t[]){z});
        const float lo = -0.7f, hi = 1.5f;
        tg_attr_f32(o, dnnl_graph_op_attr_min, &lo, 1);
        tg_attr_f32(o, dnnl_graph_op_attr_max, &hi, 1);
    } else {
        tg_add(&g, dnnl_graph_op_relu, 1, (size_t[]){y}, 1, (size_t[]){z});
    }
    if (q->out_dt != dnnl_f32) {
        size_t zq = tg_tensor(&g, q->out_dt, r, yd, NULL);
        const float os = 0.01f;
        o = tg_add(&g, dnnl_graph_op_quantize, 1, (size_t[]){z}, 1, (size_t[]){zq});
        quant_attrs(o, &os, &q->out_zp, 1, 1);
        z = zq;
    }
    g.result[g.nres++] = z;
    const tg_graph *sets[2] = {&g, &g};
    tg_bufs B;
    tg_bufs_alloc(&B, sets, 2, fill_int_input);
    tg_run_info ri, fi;
    bool ok = tg_run(&g, &(tg_run_opts){.policy = dnnl_graph_partition_policy_fusion, .reference = true}, B.set[0], &ri);
    ok = ok && tg_run(&g, &(tg_run_opts){.policy = dnnl_graph_partition_policy_fusion}, B.set[1], &fi);
    CHECK(ok);
    if (ok) {
        CHECK(tg_count_fused(&fi, "conv") >= 1); /* the int8 convolution row ran fused */
        tg_check_values(name, tg_lt_of(&g, z), B.set[0][z - 1], B.set[1][z - 1], tg_engine_tol);
    }
    tg_bufs_free(&B);
}

static void test_quantized(void) {
    const qcfg q0 = {.src_dt = dnnl_u8, .out_dt = dnnl_u8, .src_zp = 5, .out_zp = 3, .per_channel = true,
                     .bias = true, .constant_w = true};
    qcfg q = q0;
    cfg c = base(2);
    c.nxc = c.xio = true;
    run_quant_case("int8 2d NXC XIO u8 zp pad 1 bias relu -> u8", &c, &q);
    q.constant_w = false;
    run_quant_case("int8 2d NXC XIO variable weights", &c, &q);
    q = q0;
    q.src_dt = dnnl_s8, q.src_zp = -3, q.wei_zp = 2, q.per_channel = false, q.bias = false, q.clamp = true;
    q.out_dt = dnnl_s8, q.out_zp = -2;
    c = base(2); /* NCX OIX: the program's own epilogue */
    run_quant_case("int8 2d NCX OIX s8 zps clamp -> s8", &c, &q);
    c.nxc = c.xio = true;
    run_quant_case("int8 2d NXC XIO s8 zps clamp -> s8", &c, &q);
    q = q0;
    q.out_dt = dnnl_f32;
    c = base(2);
    c.nxc = c.xio = true, c.G = 2, c.S[0] = 2, c.Dl[1] = 2, c.IC = 10, c.OC = 6;
    run_quant_case("int8 2d NXC groups 2 stride 2 dilation 2 -> f32", &c, &q);
    q = q0;
    q.bias_add = true, q.bias = false; /* the pattern takes a BiasAdd after a two-input Convolution */
    run_quant_case("int8 2d NXC groups 2 BiasAdd relu -> u8", &c, &q);
    q.clamp = true, q.out_dt = dnnl_f32;
    run_quant_case("int8 2d NXC groups 2 BiasAdd clamp -> f32", &c, &q);
    c.nxc = c.xio = false;
    run_quant_case("int8 2d NCX groups 2 BiasAdd clamp -> f32", &c, &q);
    c.nxc = c.xio = true;
    q = q0;
    q.post_sum = true;
    c = base(2);
    c.nxc = c.xio = true;
    run_quant_case("int8 2d NXC post-sum -> u8", &c, &q);
    q.bias = false, q.bias_add = true, q.sum_u8 = true, q.clamp = true, q.out_dt = dnnl_s8, q.out_zp = 4;
    run_quant_case("int8 2d NXC BiasAdd post-sum(u8) clamp -> s8", &c, &q);
    q.out_dt = dnnl_f32;
    run_quant_case("int8 2d NXC BiasAdd post-sum(u8) clamp -> f32", &c, &q);
    q = q0;
    c = base(1);
    c.nxc = c.xio = true, c.N = 3, c.in[0] = 300, c.ker[0] = 5, c.pb[0] = 2, c.pe[0] = 0, c.IC = 3, c.OC = 31;
    run_quant_case("int8 1d long odd channels (K not a multiple of 4)", &c, &q);
    c = base(3);
    c.nxc = c.xio = true, c.N = 1, c.in[0] = 4, c.in[1] = 5, c.in[2] = 6, c.S[2] = 2, c.IC = 4, c.OC = 5;
    run_quant_case("int8 3d NXC", &c, &q);
    c = base(2);
    c.nxc = c.xio = true, c.N = 1, c.IC = 1, c.OC = 1, c.in[0] = 1, c.in[1] = 1, c.ker[0] = c.ker[1] = 1;
    c.pb[0] = c.pb[1] = c.pe[0] = c.pe[1] = 0;
    run_quant_case("int8 1x1 everything", &c, &q);
    c = base(2);
    c.nxc = c.xio = true, c.IC = 32, c.OC = 32, c.in[0] = 13, c.in[1] = 11, c.ker[0] = c.ker[1] = 1;
    c.pb[0] = c.pb[1] = c.pe[0] = c.pe[1] = 0;
    run_quant_case("int8 1x1 NXC 32 -> 32 (src rows in place)", &c, &q);
    c.S[0] = 2;
    run_quant_case("int8 1x1 NXC stride 2", &c, &q);
    c = base(2);
    c.N = 3, c.IC = 12, c.OC = 20, c.in[0] = 20, c.in[1] = 13, c.ker[0] = c.ker[1] = 1;
    c.pb[0] = c.pb[1] = c.pe[0] = c.pe[1] = 0;
    run_quant_case("int8 1x1 NCX 3 images (blocks within and across images)", &c, &q);
    c = base(2);
    c.nxc = c.xio = true, c.IC = 8, c.OC = 300, c.in[0] = 9, c.in[1] = 7, c.ker[0] = c.ker[1] = 1;
    c.pb[0] = c.pb[1] = c.pe[0] = c.pe[1] = 0;
    q.per_channel = false; /* more channels than a scale list holds */
    run_quant_case("int8 1x1 NXC 300 output channels (column blocks)", &c, &q);
    /* Non-finite bias values through each step of the epilogue, 64
     * channels at a time and in the tail: ReLU keeps NaN (then 0 in an
     * integer), +0 for -0 in f32; Clamp takes NaN to its low bound. */
    q.special_bias = true;
    run_quant_case("int8 1x1 NXC 300 channels NaN / inf bias relu -> u8", &c, &q);
    q.out_dt = dnnl_s8, q.out_zp = -5;
    run_quant_case("int8 1x1 NXC 300 channels NaN / inf bias relu -> s8", &c, &q);
    q.clamp = true;
    run_quant_case("int8 1x1 NXC 300 channels NaN / inf bias clamp -> s8", &c, &q);
    q.out_dt = dnnl_f32;
    run_quant_case("int8 1x1 NXC 300 channels NaN / inf bias clamp -> f32", &c, &q);
    q.clamp = false;
    run_quant_case("int8 1x1 NXC 300 channels NaN / inf bias relu -> f32", &c, &q);
    q.special_bias = false;
    c = base(2);
    c.nxc = c.xio = true, c.N = 1, c.IC = 1200, c.OC = 6, c.in[0] = 4, c.in[1] = 5;
    q = q0;
    q.wei_zp = -7; /* K = 10800: the zero-point correction in int64 */
    run_quant_case("int8 2d NXC K 10800", &c, &q);
    /* 64 and 96 channels of a 3x3: on AMX a tile step of k is one tap's
     * channels, or a tap and a half; s8 src with zero points. */
    q = q0;
    c = base(2);
    c.nxc = c.xio = true, c.N = 1, c.IC = 64, c.OC = 32, c.in[0] = 9, c.in[1] = 11;
    run_quant_case("int8 2d NXC 3x3 64 channels", &c, &q);
    q.out_dt = dnnl_f32;
    c.IC = 96, c.OC = 31, c.in[0] = 6; /* per-channel scales: at most TG_MAXV output channels */
    run_quant_case("int8 2d NXC 3x3 96 channels", &c, &q);
    q.src_dt = dnnl_s8, q.src_zp = -3, q.wei_zp = 2, q.per_channel = false, q.clamp = true;
    run_quant_case("int8 2d NXC 3x3 96 channels s8 src, weight zero point", &c, &q);
    q = q0;
    c = base(2);
    c.nxc = c.xio = true, c.IC = 16, c.OC = 24, c.in[0] = c.in[1] = 12;
    c.mode = dnnl_fpmath_mode_bf16; /* with apply_to_int: the float path */
    run_quant_case("int8 2d fpmath bf16 applied to int", &c, &q);
}

int main(void) {
    tg_setup();
    const char *kinds[5] = {"conv", "conv bwd data", "conv bwd weights", "convtranspose bwd data",
                            "convtranspose bwd weights"};
    for (int which = FWD; which <= T_BWD_WEIGHTS; ++which) {
        char name[160];
        cfg c = base(2);
        snprintf(name, sizeof name, "%s 2d NCX OIX pad 1", kinds[which]);
        run_case(name, &c, which);
        c.nxc = c.xio = true, c.G = 2, c.S[0] = 2, c.Dl[1] = 2;
        snprintf(name, sizeof name, "%s 2d NXC XIO groups 2 stride 2 dilation 2", kinds[which]);
        run_case(name, &c, which);
        c = base(1);
        c.N = 3, c.in[0] = 300, c.ker[0] = 5, c.pb[0] = 2, c.pe[0] = 0, c.IC = 3, c.OC = 40; /* 888 positions */
        snprintf(name, sizeof name, "%s 1d long (positions past a chunk)", kinds[which]);
        run_case(name, &c, which);
        c = base(3);
        c.N = 1, c.in[0] = 4, c.in[1] = 5, c.in[2] = 6, c.S[2] = 2, c.IC = 4, c.OC = 5, c.G = 1;
        snprintf(name, sizeof name, "%s 3d", kinds[which]);
        run_case(name, &c, which);
        c = base(2);
        c.N = 1, c.IC = 1, c.OC = 1, c.in[0] = 1, c.in[1] = 1, c.ker[0] = c.ker[1] = 1, c.pb[0] = c.pb[1] = 0,
        c.pe[0] = c.pe[1] = 0;
        snprintf(name, sizeof name, "%s 1x1 everything", kinds[which]);
        run_case(name, &c, which);
        /* 1x1, stride 1, no padding: src rows packed where they are; NCX
         * blocks that cross an image go through im2col rows. */
        for (int nxc = 0; nxc < 2; ++nxc) {
            c = base(2);
            c.nxc = c.xio = nxc, c.N = 3, c.IC = 5, c.OC = 9, c.in[0] = 20, c.in[1] = 13;
            c.ker[0] = c.ker[1] = 1, c.pb[0] = c.pb[1] = c.pe[0] = c.pe[1] = 0;
            snprintf(name, sizeof name, "%s 1x1 %s 3 images", kinds[which], nxc ? "NXC" : "NCX");
            run_case(name, &c, which);
        }
        /* NXC rows of 30 and 61 positions: on AVX-512 whole strips of 12
         * read in place (one stride apart), strips in the padding or across
         * a row copied; rows of the top and bottom taps all padding. */
        c = base(2);
        c.nxc = c.xio = true, c.IC = 16, c.OC = 40, c.in[0] = 5, c.in[1] = 30;
        snprintf(name, sizeof name, "%s 2d NXC rows of 30", kinds[which]);
        run_case(name, &c, which);
        c.N = 1, c.IC = 7, c.OC = 9, c.in[0] = 4, c.in[1] = 122, c.S[1] = 2, c.Dl[0] = 2, c.pb[0] = c.pe[0] = 2;
        snprintf(name, sizeof name, "%s 2d NXC rows of 61, stride 2, dilation 2", kinds[which]);
        run_case(name, &c, which);
        c = base(2);
        c.dt = dnnl_bf16;
        snprintf(name, sizeof name, "%s 2d bf16", kinds[which]);
        run_case(name, &c, which);
        c = base(2);
        c.mode = dnnl_fpmath_mode_bf16, c.IC = 32, c.OC = 64, c.in[0] = c.in[1] = 20;
        snprintf(name, sizeof name, "%s 2d fpmath bf16", kinds[which]);
        run_case(name, &c, which);
    }
    /* Weights that are not all finite: the block runs exactly (padding taps
     * skipped as the reference skips them, not multiplied by 0). */
    for (int xio = 0; xio < 2; ++xio) {
        cfg c = base(2);
        c.nxc = c.xio = xio, c.nonfinite_w = true, c.IC = 16, c.OC = 24, c.in[1] = 30;
        run_case(xio ? "conv 2d NXC XIO weights with inf and NaN" : "conv 2d NCX OIX weights with inf and NaN", &c,
                 FWD);
    }
    test_quantized();
    tg_teardown();
    return pt_test_summary("test_int_conv_engine");
}
