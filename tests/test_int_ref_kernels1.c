/* Reference kernels, part 1: eltwise (fwd/bwd), binary, Select, BiasAdd,
 * PReLU, data movement, Dropout, quantization, reductions, softmax.
 * Expected values are hand-computed literals (small inputs, odd sizes,
 * permuted/strided layouts, broadcasting, 4-bit packing). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir/dtype.h"
#include "ir/op.h"
#include "compile/ref_bind.h"
#include "kernels/ref/ref_common.h"
#include "test_util.h"

#define DIMS(...) ((const int64_t[]){__VA_ARGS__})
#define TOL(v) (1e-5 + 1e-5 * fabs((double)(v)))

static pt_tview view(dnnl_data_type_t dt, int nd, const int64_t *dims, const int64_t *strides,
                     void *data) {
    pt_tview t;
    memset(&t, 0, sizeof t);
    t.lt.ndims = nd;
    t.lt.data_type = dt;
    t.lt.layout_type = dnnl_graph_layout_type_strided;
    for (int d = 0; d < nd; ++d) t.lt.dims[d] = dims[d];
    if (strides)
        for (int d = 0; d < nd; ++d) t.lt.layout.strides[d] = strides[d];
    else
        pt_dense_strides(nd, t.lt.dims, t.lt.layout.strides);
    t.data = data;
    return t;
}

/* Decodes `op` with the given decoder, runs its kernel once, releases. */
static pt_status run(pt_ref_decoder decode, const pt_op *op, pt_tview *in, size_t nin, pt_tview *out,
                     size_t nout) {
    pt_exec_ctx ctx = {.fpmath = dnnl_fpmath_mode_strict, .apply_to_int = 0, .nthreads = 0};
    return pt_ref_run_with(decode, op, in, nin, out, nout, &ctx);
}

static pt_op *mkop(dnnl_graph_op_kind_t kind) { return pt_op_new(1, kind, "t"); }
static void set_f(pt_op *op, int name, float v) { pt_op_set_f32(op, name, &v, 1, false); }
static void set_i(pt_op *op, int name, int64_t v) { pt_op_set_s64(op, name, &v, 1, false); }
static void set_is(pt_op *op, int name, const int64_t *v, size_t n) {
    pt_op_set_s64(op, name, v, n, true);
}

/* ---- eltwise ------------------------------------------------------------- */

static const float X7[7] = {-2.5f, -1.f, -0.25f, 0.f, 0.5f, 1.f, 3.7f};
static const float D7[7] = {0.3f, -1.2f, 2.f, 0.7f, -0.4f, 1.1f, -2.f};
static const float Y7[7] = {0.25f, 1.f, 4.f, 9.f, 2.f, 0.5f, 16.f};

/* Runs a unary op on a 7-element input read through stride 2 and compares. */
static void check_fwd(pt_op *op, const float *x, const float *expect) {
    float sbuf[14], dbuf[7];
    for (int i = 0; i < 7; ++i) sbuf[2 * i] = x[i], sbuf[2 * i + 1] = 1234.f;
    pt_tview s = view(dnnl_f32, 1, DIMS(7), DIMS(2), sbuf), d = view(dnnl_f32, 1, DIMS(7), NULL, dbuf);
    CHECK_EQ_INT(run(pt_decode_eltwise, op, &s, 1, &d, 1), dnnl_success);
    for (int i = 0; i < 7; ++i) {
        if (isnan(expect[i])) CHECK(isnan(dbuf[i]));
        else CHECK_NEAR(dbuf[i], expect[i], TOL(expect[i]));
    }
    pt_op_free(op);
}

static void test_eltwise_fwd(void) {
    pt_op *op;
    check_fwd(mkop(dnnl_graph_op_abs), X7, (const float[]){2.5f, 1, 0.25f, 0, 0.5f, 1, 3.7f});
    op = mkop(dnnl_graph_op_clamp);
    set_f(op, dnnl_graph_op_attr_min, -0.5f);
    set_f(op, dnnl_graph_op_attr_max, 2.f);
    check_fwd(op, X7, (const float[]){-0.5f, -0.5f, -0.25f, 0, 0.5f, 1, 2});
    op = mkop(dnnl_graph_op_elu);
    set_f(op, dnnl_graph_op_attr_alpha, 0.7f);
    check_fwd(op, X7, (const float[]){-0.642540501f, -0.442484391f, -0.154839452f, 0, 0.5f, 1, 3.7f});
    check_fwd(mkop(dnnl_graph_op_exp), X7,
              (const float[]){0.0820849986f, 0.367879441f, 0.778800783f, 1, 1.64872127f,
                              2.71828183f, 40.4473044f});
    check_fwd(mkop(dnnl_graph_op_gelu), X7,
              (const float[]){-0.0155241633f, -0.158655254f, -0.100323419f, 0, 0.345731231f,
                              0.841344746f, 3.69960114f});
    op = mkop(dnnl_graph_op_gelu);
    pt_op_set_str(op, dnnl_graph_op_attr_mode, "gelu_tanh");
    check_fwd(op, X7,
              (const float[]){-0.0150842661f, -0.158808009f, -0.100324649f, 0, 0.34571401f,
                              0.841191991f, 3.69972819f});
    op = mkop(dnnl_graph_op_hard_sigmoid);
    set_f(op, dnnl_graph_op_attr_alpha, 0.2f);
    set_f(op, dnnl_graph_op_attr_beta, 0.5f);
    check_fwd(op, X7, (const float[]){0, 0.3f, 0.45f, 0.5f, 0.6f, 0.7f, 1});
    check_fwd(mkop(dnnl_graph_op_hard_swish), X7,
              (const float[]){-0.208333333f, -0.333333333f, -0.114583333f, 0, 0.291666667f,
                              0.666666667f, 3.7f});
    op = mkop(dnnl_graph_op_leaky_relu);
    set_f(op, dnnl_graph_op_attr_alpha, 0.1f);
    check_fwd(op, X7, (const float[]){-0.25f, -0.1f, -0.025f, 0, 0.5f, 1, 3.7f});
    check_fwd(mkop(dnnl_graph_op_log), Y7,
              (const float[]){-1.38629436f, 0, 1.38629436f, 2.19722458f, 0.693147181f,
                              -0.693147181f, 2.77258872f});
    check_fwd(mkop(dnnl_graph_op_mish), X7,
              (const float[]){-0.196816204f, -0.303401461f, -0.129926964f, 0, 0.375245211f,
                              0.865098388f, 3.69569487f});
    op = mkop(dnnl_graph_op_pow);
    set_f(op, dnnl_graph_op_attr_beta, 1.5f);
    check_fwd(op, X7, (const float[]){NAN, NAN, NAN, 0, 0.353553391f, 1, 7.1170921f});
    check_fwd(mkop(dnnl_graph_op_reciprocal), Y7,
              (const float[]){4, 1, 0.25f, 0.111111111f, 0.5f, 2, 0.0625f});
    check_fwd(mkop(dnnl_graph_op_relu), X7, (const float[]){0, 0, 0, 0, 0.5f, 1, 3.7f});
    /* Round: ties to even (-2.5 -> -2, 0.5 -> 0). */
    check_fwd(mkop(dnnl_graph_op_round), X7, (const float[]){-2, -1, 0, 0, 0, 1, 4});
    check_fwd(mkop(dnnl_graph_op_sigmoid), X7,
              (const float[]){0.07585818f, 0.268941421f, 0.437823499f, 0.5f, 0.622459331f,
                              0.731058579f, 0.975872979f});
    op = mkop(dnnl_graph_op_softplus);
    set_f(op, dnnl_graph_op_attr_beta, 2.f);
    check_fwd(op, X7,
              (const float[]){0.00335767424f, 0.0634640055f, 0.237038492f, 0.34657359f,
                              0.656630844f, 1.06346401f, 3.70030553f});
    check_fwd(mkop(dnnl_graph_op_sqrt), Y7, (const float[]){0.5f, 1, 2, 3, 1.41421356f, 0.707106781f, 4});
    check_fwd(mkop(dnnl_graph_op_square), X7, (const float[]){6.25f, 1, 0.0625f, 0, 0.25f, 1, 13.69f});
    check_fwd(mkop(dnnl_graph_op_tanh), X7,
              (const float[]){-0.986614298f, -0.761594156f, -0.244918662f, 0, 0.462117157f,
                              0.761594156f, 0.998778241f});

    /* Clamp: NaN -> min; min > max -> max everywhere. */
    {
        float x[2] = {NAN, 5.f}, y[2];
        op = mkop(dnnl_graph_op_clamp);
        set_f(op, dnnl_graph_op_attr_min, 3.f);
        set_f(op, dnnl_graph_op_attr_max, 1.f);
        pt_tview s = view(dnnl_f32, 1, DIMS(2), NULL, x), d = view(dnnl_f32, 1, DIMS(2), NULL, y);
        CHECK_EQ_INT(run(pt_decode_eltwise, op, &s, 1, &d, 1), dnnl_success);
        CHECK(y[0] == 1.f && y[1] == 1.f);
        pt_op_free(op);
    }
    /* bf16 in place on a permuted 2x3 layout: exp(0) = 1, exp(1) = 2.71875 in bf16. */
    {
        uint16_t b[6];
        const float lv[6] = {0, 1, 2, -1, 0.5f, 3};
        const int64_t st[2] = {1, 2};
        for (int i = 0; i < 2; ++i)
            for (int j = 0; j < 3; ++j) b[i * st[0] + j * st[1]] = pt_f32_to_bf16(lv[i * 3 + j]);
        pt_tview s = view(dnnl_bf16, 2, DIMS(2, 3), st, b);
        op = mkop(dnnl_graph_op_exp);
        CHECK_EQ_INT(run(pt_decode_eltwise, op, &s, 1, &s, 1), dnnl_success);
        CHECK_EQ_INT(b[0], 0x3F80);                  /* (0,0): exp(0) */
        CHECK_EQ_INT(b[2], pt_f32_to_bf16(expf(1)));  /* (0,1) */
        CHECK_EQ_INT(b[2], 0x402E);                  /* 2.71875 */
        CHECK_EQ_INT(b[1], pt_f32_to_bf16(expf(-1))); /* (1,0) */
        pt_op_free(op);
    }
    /* Wrong kind and mismatched shapes are rejected. */
    {
        float x[2] = {0}, y[3];
        pt_tview s = view(dnnl_f32, 1, DIMS(2), NULL, x), d = view(dnnl_f32, 1, DIMS(3), NULL, y);
        op = mkop(dnnl_graph_op_relu);
        CHECK_EQ_INT(run(pt_decode_eltwise, op, &s, 1, &d, 1), dnnl_invalid_arguments);
        pt_op_free(op);
        op = mkop(dnnl_graph_op_matmul);
        CHECK_EQ_INT(run(pt_decode_eltwise, op, &s, 1, &s, 1), dnnl_unimplemented);
        pt_op_free(op);
    }
}

/* Backward: input 0 = x (src or dst per use_dst), input 1 = D7 as diff_dst
 * read through stride 2, output f32. */
static void check_bwd(pt_op *op, const float *x, const float *expect) {
    float xb[7], db[14], out[7];
    for (int i = 0; i < 7; ++i) xb[i] = x[i], db[2 * i] = D7[i], db[2 * i + 1] = 99.f;
    pt_tview in[2] = {view(dnnl_f32, 1, DIMS(7), NULL, xb), view(dnnl_f32, 1, DIMS(7), DIMS(2), db)};
    pt_tview o = view(dnnl_f32, 1, DIMS(7), NULL, out);
    CHECK_EQ_INT(run(pt_decode_eltwise_bwd, op, in, 2, &o, 1), dnnl_success);
    for (int i = 0; i < 7; ++i) CHECK_NEAR(out[i], expect[i], TOL(expect[i]));
    pt_op_free(op);
}

static void test_eltwise_bwd(void) {
    pt_op *op;
    check_bwd(mkop(dnnl_graph_op_abs_backward), X7, (const float[]){-0.3f, 1.2f, -2, 0, -0.4f, 1.1f, -2});
    op = mkop(dnnl_graph_op_clamp_backward);
    set_f(op, dnnl_graph_op_attr_min, -0.5f);
    set_f(op, dnnl_graph_op_attr_max, 2.f);
    pt_op_set_bool(op, dnnl_graph_op_attr_use_dst, false);
    check_bwd(op, X7, (const float[]){0, 0, 2, 0.7f, -0.4f, 1.1f, 0});
    op = mkop(dnnl_graph_op_elu_backward);
    set_f(op, dnnl_graph_op_attr_alpha, 0.7f);
    pt_op_set_bool(op, dnnl_graph_op_attr_use_dst, false);
    check_bwd(op, X7, (const float[]){0.0172378497f, -0.309018731f, 1.0903211f, 0.49f, -0.4f, 1.1f, -2});
    op = mkop(dnnl_graph_op_elu_backward); /* use_dst defaults to true */
    set_f(op, dnnl_graph_op_attr_alpha, 0.7f);
    check_bwd(op, X7, (const float[]){-0.54f, 0.36f, 0.9f, 0.49f, -0.4f, 1.1f, -2});
    check_bwd(mkop(dnnl_graph_op_gelu_backward), X7,
              (const float[]){-0.0112833258f, 0.0999785647f, 0.60925329f, 0.35f, -0.34699805f,
                              1.19164702f, -2.00292777f});
    op = mkop(dnnl_graph_op_gelu_backward);
    pt_op_set_str(op, dnnl_graph_op_attr_mode, "gelu_tanh");
    check_bwd(op, X7,
              (const float[]){-0.0113854729f, 0.0995569006f, 0.60929181f, 0.35f, -0.346947961f,
                              1.19126049f, -2.00231345f});
    op = mkop(dnnl_graph_op_hard_sigmoid_backward);
    set_f(op, dnnl_graph_op_attr_alpha, 0.2f);
    set_f(op, dnnl_graph_op_attr_beta, 0.5f);
    check_bwd(op, X7, (const float[]){0, -0.24f, 0.4f, 0.14f, -0.08f, 0.22f, 0});
    check_bwd(mkop(dnnl_graph_op_hard_swish_backward), X7,
              (const float[]){-0.1f, -0.2f, 0.833333333f, 0.35f, -0.266666667f, 0.916666667f, -2});
    check_bwd(mkop(dnnl_graph_op_mish_backward), X7,
              (const float[]){-0.0329230718f, -0.0710601071f, 0.879631203f, 0.42f, -0.35456975f,
                              1.15393984f, -2.01446817f});
    check_bwd(mkop(dnnl_graph_op_relu_backward), X7, (const float[]){0, 0, 0, 0, -0.4f, 1.1f, -2});
    op = mkop(dnnl_graph_op_sigmoid_backward);
    pt_op_set_bool(op, dnnl_graph_op_attr_use_dst, false);
    check_bwd(op, X7,
              (const float[]){0.021031115f, -0.23593432f, 0.492268165f, 0.175f, -0.0940014849f,
                              0.216273127f, -0.0470898165f});
    check_bwd(mkop(dnnl_graph_op_sigmoid_backward), X7,
              (const float[]){-2.625f, 2.4f, -0.625f, 0, -0.1f, 0, 19.98f});
    op = mkop(dnnl_graph_op_softplus_backward);
    set_f(op, dnnl_graph_op_attr_beta, 2.f);
    check_bwd(op, X7,
              (const float[]){0.00200785528f, -0.143043506f, 0.755081338f, 0.35f, -0.292423431f,
                              0.968876786f, -1.99877824f});
    op = mkop(dnnl_graph_op_sqrt_backward);
    pt_op_set_bool(op, dnnl_graph_op_attr_use_dst, false);
    check_bwd(op, Y7, (const float[]){0.3f, -0.6f, 0.5f, 0.116666667f, -0.141421356f, 0.777817459f, -0.25f});
    check_bwd(mkop(dnnl_graph_op_sqrt_backward), Y7,
              (const float[]){0.6f, -0.6f, 0.25f, 0.0388888889f, -0.1f, 1.1f, -0.0625f});
    op = mkop(dnnl_graph_op_tanh_backward);
    pt_op_set_bool(op, dnnl_graph_op_attr_use_dst, false);
    check_bwd(op, X7,
              (const float[]){0.007977668f, -0.50396921f, 1.8800297f, 0.7f, -0.314579093f,
                              0.461971776f, -0.00488404949f});
    check_bwd(mkop(dnnl_graph_op_tanh_backward), X7,
              (const float[]){-1.575f, 0, 1.875f, 0.7f, -0.3f, 0, 25.38f});
}

/* ---- binary -------------------------------------------------------------- */

static void test_binary(void) {
    pt_op *op = mkop(dnnl_graph_op_add);
    {   /* [2,3] + [3] */
        float a[6] = {1, 2, 3, 4, 5, 6}, b[3] = {10, 20, 30}, d[6];
        pt_tview in[2] = {view(dnnl_f32, 2, DIMS(2, 3), NULL, a), view(dnnl_f32, 1, DIMS(3), NULL, b)};
        pt_tview o = view(dnnl_f32, 2, DIMS(2, 3), NULL, d);
        CHECK_EQ_INT(run(pt_decode_binary, op, in, 2, &o, 1), dnnl_success);
        const float e[6] = {11, 22, 33, 14, 25, 36};
        for (int i = 0; i < 6; ++i) CHECK_EQ_INT(d[i], e[i]);
        /* dst that is not the broadcast shape */
        float big[12];
        pt_tview o2 = view(dnnl_f32, 2, DIMS(4, 3), NULL, big);
        CHECK_EQ_INT(run(pt_decode_binary, op, in, 2, &o2, 1), dnnl_invalid_shape);
    }
    {   /* different ranks [2,1,3] + [4,1] -> [2,4,3], dst permuted (strides 4,1,8) */
        float a[6] = {1, 2, 3, 4, 5, 6}, b[4] = {10, 20, 30, 40}, d[24];
        pt_tview in[2] = {view(dnnl_f32, 3, DIMS(2, 1, 3), NULL, a), view(dnnl_f32, 2, DIMS(4, 1), NULL, b)};
        pt_tview o = view(dnnl_f32, 3, DIMS(2, 4, 3), DIMS(4, 1, 8), d);
        CHECK_EQ_INT(run(pt_decode_binary, op, in, 2, &o, 1), dnnl_success);
        CHECK_EQ_INT(d[1 * 4 + 2 * 1 + 0 * 8], 34); /* (1,2,0) = 4 + 30 */
        CHECK_EQ_INT(d[0 * 4 + 3 * 1 + 2 * 8], 43); /* (0,3,2) = 3 + 40 */
        CHECK_EQ_INT(d[1 * 4 + 0 * 1 + 1 * 8], 15); /* (1,0,1) = 5 + 10 */
    }
    {   /* s32: computed in f32 then RNE + saturation */
        int32_t a[3] = {16777217, 2147483647, -5}, b[3] = {0, 1000, 3}, d[3];
        pt_tview in[2] = {view(dnnl_s32, 1, DIMS(3), NULL, a), view(dnnl_s32, 1, DIMS(3), NULL, b)};
        pt_tview o = view(dnnl_s32, 1, DIMS(3), NULL, d);
        CHECK_EQ_INT(run(pt_decode_binary, op, in, 2, &o, 1), dnnl_success);
        CHECK_EQ_INT(d[0], 16777216);
        CHECK_EQ_INT(d[1], 2147483520);
        CHECK_EQ_INT(d[2], -2);
    }
    {   /* auto_broadcast = none refuses different shapes */
        float a[6] = {0}, b[3] = {0}, d[6];
        pt_op_set_str(op, dnnl_graph_op_attr_auto_broadcast, "none");
        pt_tview in[2] = {view(dnnl_f32, 2, DIMS(2, 3), NULL, a), view(dnnl_f32, 1, DIMS(3), NULL, b)};
        pt_tview o = view(dnnl_f32, 2, DIMS(2, 3), NULL, d);
        CHECK_EQ_INT(run(pt_decode_binary, op, in, 2, &o, 1), dnnl_invalid_shape);
    }
    pt_op_free(op);

    {   /* GreaterEqual -> boolean; NaN -> false; s32 compared after f32 rounding */
        float a[4] = {1, NAN, 2, -0.f}, b[4] = {1, 1, 3, 0.f};
        uint8_t d[4];
        op = mkop(dnnl_graph_op_greater_equal);
        pt_tview in[2] = {view(dnnl_f32, 1, DIMS(4), NULL, a), view(dnnl_f32, 1, DIMS(4), NULL, b)};
        pt_tview o = view(dnnl_boolean, 1, DIMS(4), NULL, d);
        CHECK_EQ_INT(run(pt_decode_binary, op, in, 2, &o, 1), dnnl_success);
        CHECK(d[0] == 1 && d[1] == 0 && d[2] == 0 && d[3] == 1);
        int32_t ia[2] = {16777216, 3}, ib[2] = {16777217, 4};
        pt_tview in2[2] = {view(dnnl_s32, 1, DIMS(2), NULL, ia), view(dnnl_s32, 1, DIMS(2), NULL, ib)};
        pt_tview o2 = view(dnnl_boolean, 1, DIMS(2), NULL, d);
        CHECK_EQ_INT(run(pt_decode_binary, op, in2, 2, &o2, 1), dnnl_success);
        CHECK(d[0] == 1 && d[1] == 0);
        pt_op_free(op);
    }
    {   /* Maximum / Minimum NaN asymmetry, Divide by zero, SquaredDifference */
        float a[3] = {NAN, 1, 1}, b[3] = {1, NAN, 0}, d[3];
        pt_tview in[2] = {view(dnnl_f32, 1, DIMS(3), NULL, a), view(dnnl_f32, 1, DIMS(3), NULL, b)};
        pt_tview o = view(dnnl_f32, 1, DIMS(3), NULL, d);
        op = mkop(dnnl_graph_op_maximum);
        CHECK_EQ_INT(run(pt_decode_binary, op, in, 2, &o, 1), dnnl_success);
        CHECK(d[0] == 1 && isnan(d[1]) && d[2] == 1);
        pt_op_free(op);
        op = mkop(dnnl_graph_op_minimum);
        CHECK_EQ_INT(run(pt_decode_binary, op, in, 2, &o, 1), dnnl_success);
        CHECK(d[0] == 1 && isnan(d[1]) && d[2] == 0);
        pt_op_free(op);
        float p[3] = {1, -1, 0}, z[3] = {0, 0, 0};
        pt_tview in2[2] = {view(dnnl_f32, 1, DIMS(3), NULL, p), view(dnnl_f32, 1, DIMS(3), NULL, z)};
        op = mkop(dnnl_graph_op_divide);
        CHECK_EQ_INT(run(pt_decode_binary, op, in2, 2, &o, 1), dnnl_success);
        CHECK(isinf(d[0]) && d[0] > 0 && isinf(d[1]) && d[1] < 0 && isnan(d[2]));
        pt_op_free(op);
        float s0[2] = {1, 5}, s1[2] = {4, 2};
        pt_tview in3[2] = {view(dnnl_f32, 1, DIMS(2), NULL, s0), view(dnnl_f32, 1, DIMS(2), NULL, s1)};
        pt_tview o3 = view(dnnl_f32, 1, DIMS(2), NULL, d);
        op = mkop(dnnl_graph_op_squared_difference);
        CHECK_EQ_INT(run(pt_decode_binary, op, in3, 2, &o3, 1), dnnl_success);
        CHECK(d[0] == 9 && d[1] == 9);
        pt_op_free(op);
    }
    {   /* mixed f32 - bf16 -> f32; Multiply f16 x f16 -> f16 with a scalar (rank 0) */
        float a[2] = {1.5f, 2}, d[2];
        uint16_t b[2] = {0x3F80, 0x4000};
        pt_tview in[2] = {view(dnnl_f32, 1, DIMS(2), NULL, a), view(dnnl_bf16, 1, DIMS(2), NULL, b)};
        pt_tview o = view(dnnl_f32, 1, DIMS(2), NULL, d);
        op = mkop(dnnl_graph_op_subtract);
        CHECK_EQ_INT(run(pt_decode_binary, op, in, 2, &o, 1), dnnl_success);
        CHECK(d[0] == 0.5f && d[1] == 0.f);
        pt_op_free(op);
        uint16_t h[3] = {0x3C00, 0x4000, 0xC200}, s = 0x4200 /* 3 */, hd[3];
        pt_tview in2[2] = {view(dnnl_f16, 1, DIMS(3), NULL, h), view(dnnl_f16, 0, NULL, NULL, &s)};
        pt_tview o2 = view(dnnl_f16, 1, DIMS(3), NULL, hd);
        op = mkop(dnnl_graph_op_multiply);
        CHECK_EQ_INT(run(pt_decode_binary, op, in2, 2, &o2, 1), dnnl_success);
        CHECK_EQ_INT(hd[0], 0x4200); /* 3 */
        CHECK_EQ_INT(hd[1], 0x4600); /* 6 */
        CHECK_EQ_INT(hd[2], 0xC880); /* -9 */
        pt_op_free(op);
    }
}

static void test_select(void) {
    pt_op *op = mkop(dnnl_graph_op_select);
    {   /* cond [3] one-way into S = bcast([2,3], [1]) = [2,3]; byte 2 counts as true */
        uint8_t c[3] = {1, 0, 2};
        float t[6] = {1, 2, 3, 4, 5, 6}, e[1] = {-1}, d[6];
        pt_tview in[3] = {view(dnnl_boolean, 1, DIMS(3), NULL, c), view(dnnl_f32, 2, DIMS(2, 3), NULL, t),
                          view(dnnl_f32, 1, DIMS(1), NULL, e)};
        pt_tview o = view(dnnl_f32, 2, DIMS(2, 3), NULL, d);
        CHECK_EQ_INT(run(pt_decode_select, op, in, 3, &o, 1), dnnl_success);
        const float x[6] = {1, -1, 3, 4, -1, 6};
        for (int i = 0; i < 6; ++i) CHECK_EQ_INT(d[i], x[i]);
    }
    {   /* cond [2,1], then [1,3], else [2,3] (permuted storage), bf16 */
        uint8_t c[2] = {0, 1};
        uint16_t t[3], e[6], d[6];
        for (int j = 0; j < 3; ++j) t[j] = pt_f32_to_bf16((float)(10 * (j + 1)));
        for (int i = 0; i < 2; ++i)
            for (int j = 0; j < 3; ++j) e[i + 2 * j] = pt_f32_to_bf16((float)(3 * i + j + 1));
        pt_tview in[3] = {view(dnnl_boolean, 2, DIMS(2, 1), NULL, c), view(dnnl_bf16, 2, DIMS(1, 3), NULL, t),
                          view(dnnl_bf16, 2, DIMS(2, 3), DIMS(1, 2), e)};
        pt_tview o = view(dnnl_bf16, 2, DIMS(2, 3), NULL, d);
        CHECK_EQ_INT(run(pt_decode_select, op, in, 3, &o, 1), dnnl_success);
        const float x[6] = {1, 2, 3, 10, 20, 30};
        for (int i = 0; i < 6; ++i) CHECK_EQ_INT(pt_bf16_to_f32(d[i]), x[i]);
    }
    {   /* cond must not enlarge the result: cond [2,3] with then/else [3] */
        uint8_t c[6] = {0};
        float t[3] = {0}, e[3] = {0}, d[6];
        pt_tview in[3] = {view(dnnl_boolean, 2, DIMS(2, 3), NULL, c), view(dnnl_f32, 1, DIMS(3), NULL, t),
                          view(dnnl_f32, 1, DIMS(3), NULL, e)};
        pt_tview o = view(dnnl_f32, 1, DIMS(3), NULL, d);
        CHECK_EQ_INT(run(pt_decode_select, op, in, 3, &o, 1), dnnl_invalid_shape);
        pt_tview o2 = view(dnnl_f32, 2, DIMS(2, 3), NULL, d);
        CHECK_EQ_INT(run(pt_decode_select, op, in, 3, &o2, 1), dnnl_invalid_shape);
        /* cond [2] into [2,3]: trailing dims 2 vs 3 */
        float t2[6] = {0};
        pt_tview in2[3] = {view(dnnl_boolean, 1, DIMS(2), NULL, c), view(dnnl_f32, 2, DIMS(2, 3), NULL, t2),
                           view(dnnl_f32, 1, DIMS(3), NULL, e)};
        CHECK_EQ_INT(run(pt_decode_select, op, in2, 3, &o2, 1), dnnl_invalid_shape);
    }
    pt_op_free(op);
}

static void test_bias_prelu(void) {
    float src[12], d[12];
    for (int i = 0; i < 12; ++i) src[i] = (float)i;
    float bias[3] = {100, 200, 300};
    pt_op *op = mkop(dnnl_graph_op_bias_add);
    pt_op_set_str(op, dnnl_graph_op_attr_data_format, "NCX");
    {
        pt_tview in[2] = {view(dnnl_f32, 3, DIMS(2, 3, 2), NULL, src), view(dnnl_f32, 1, DIMS(3), NULL, bias)};
        pt_tview o = view(dnnl_f32, 3, DIMS(2, 3, 2), NULL, d);
        CHECK_EQ_INT(run(pt_decode_bias_add, op, in, 2, &o, 1), dnnl_success);
        CHECK_EQ_INT(d[1], 101);  /* (0,0,1) */
        CHECK_EQ_INT(d[10], 310); /* (1,2,0) */
        CHECK_EQ_INT(d[3], 203);  /* (0,1,1) */
        pt_tview bad = view(dnnl_f32, 1, DIMS(2), NULL, bias);
        pt_tview in2[2] = {in[0], bad};
        CHECK_EQ_INT(run(pt_decode_bias_add, op, in2, 2, &o, 1), dnnl_invalid_shape);
    }
    pt_op_free(op);
    op = mkop(dnnl_graph_op_bias_add); /* default NXC */
    {
        pt_tview in[2] = {view(dnnl_f32, 3, DIMS(2, 2, 3), NULL, src), view(dnnl_f32, 1, DIMS(3), NULL, bias)};
        pt_tview o = view(dnnl_f32, 3, DIMS(2, 2, 3), NULL, d);
        CHECK_EQ_INT(run(pt_decode_bias_add, op, in, 2, &o, 1), dnnl_success);
        CHECK_EQ_INT(d[11], 311);
        CHECK_EQ_INT(d[3], 103);
    }
    pt_op_free(op);

    op = mkop(dnnl_graph_op_bias_add_backward);
    {
        float db[3];
        pt_op_set_str(op, dnnl_graph_op_attr_data_format, "NCX");
        pt_tview in = view(dnnl_f32, 3, DIMS(2, 3, 2), NULL, src), o = view(dnnl_f32, 1, DIMS(3), NULL, db);
        CHECK_EQ_INT(run(pt_decode_bias_add_bwd, op, &in, 1, &o, 1), dnnl_success);
        CHECK(db[0] == 14 && db[1] == 22 && db[2] == 30);
        pt_op_set_str(op, dnnl_graph_op_attr_data_format, "NXC");
        in = view(dnnl_f32, 3, DIMS(2, 2, 3), NULL, src);
        CHECK_EQ_INT(run(pt_decode_bias_add_bwd, op, &in, 1, &o, 1), dnnl_success);
        CHECK(db[0] == 18 && db[1] == 22 && db[2] == 26);
    }
    pt_op_free(op);

    op = mkop(dnnl_graph_op_prelu);
    {   /* rule 1: per-channel NCX */
        float s[6] = {-1, 2, -3, 4, -5, 6}, sl[2] = {0.1f, 0.2f};
        pt_op_set_str(op, dnnl_graph_op_attr_data_format, "NCX");
        pt_tview in[2] = {view(dnnl_f32, 3, DIMS(1, 2, 3), NULL, s), view(dnnl_f32, 1, DIMS(2), NULL, sl)};
        pt_tview o = view(dnnl_f32, 3, DIMS(1, 2, 3), NULL, d);
        CHECK_EQ_INT(run(pt_decode_prelu, op, in, 2, &o, 1), dnnl_success);
        const float e[6] = {-0.1f, 2, -0.3f, 4, -1.f, 6};
        for (int i = 0; i < 6; ++i) CHECK_NEAR(d[i], e[i], 1e-6);
    }
    {   /* rule 2: per_channel_broadcast = false -> last dim */
        float s[6] = {-1, -1, -1, 1, -2, -2}, sl[3] = {1, 2, 3};
        pt_op_set_bool(op, dnnl_graph_op_attr_per_channel_broadcast, false);
        pt_tview in[2] = {view(dnnl_f32, 2, DIMS(2, 3), NULL, s), view(dnnl_f32, 1, DIMS(3), NULL, sl)};
        pt_tview o = view(dnnl_f32, 2, DIMS(2, 3), NULL, d);
        CHECK_EQ_INT(run(pt_decode_prelu, op, in, 2, &o, 1), dnnl_success);
        const float e[6] = {-1, -2, -3, 1, -4, -6};
        for (int i = 0; i < 6; ++i) CHECK_EQ_INT(d[i], e[i]);
    }
    {   /* rule 3: slope [2,1] broadcast one-way */
        float s[6] = {-2, -2, 2, -2, -2, 2}, sl[2] = {0.5f, 2};
        pt_tview in[2] = {view(dnnl_f32, 2, DIMS(2, 3), NULL, s), view(dnnl_f32, 2, DIMS(2, 1), NULL, sl)};
        pt_tview o = view(dnnl_f32, 2, DIMS(2, 3), NULL, d);
        CHECK_EQ_INT(run(pt_decode_prelu, op, in, 2, &o, 1), dnnl_success);
        const float e[6] = {-1, -1, 2, -4, -4, 2};
        for (int i = 0; i < 6; ++i) CHECK_EQ_INT(d[i], e[i]);
        pt_tview bad = view(dnnl_f32, 2, DIMS(3, 1), NULL, sl);
        pt_tview in2[2] = {in[0], bad};
        CHECK_EQ_INT(run(pt_decode_prelu, op, in2, 2, &o, 1), dnnl_invalid_shape);
    }
    pt_op_free(op);

    op = mkop(dnnl_graph_op_prelu_backward);
    {
        float s[6] = {-1, 2, -3, 4, -5, 6}, sl[2] = {0.1f, 0.2f}, dd[6] = {1, 2, 3, 4, 5, 6};
        float ds[6], dsl[2];
        pt_op_set_str(op, dnnl_graph_op_attr_data_format, "NCX");
        pt_tview in[3] = {view(dnnl_f32, 3, DIMS(1, 2, 3), NULL, s), view(dnnl_f32, 1, DIMS(2), NULL, sl),
                          view(dnnl_f32, 3, DIMS(1, 2, 3), NULL, dd)};
        pt_tview o[2] = {view(dnnl_f32, 3, DIMS(1, 2, 3), NULL, ds), view(dnnl_f32, 1, DIMS(2), NULL, dsl)};
        CHECK_EQ_INT(run(pt_decode_prelu_bwd, op, in, 3, o, 2), dnnl_success);
        const float e[6] = {0.1f, 2, 0.3f, 4, 1.f, 6};
        for (int i = 0; i < 6; ++i) CHECK_NEAR(ds[i], e[i], 1e-6);
        CHECK_NEAR(dsl[0], -10, 1e-6);
        CHECK_NEAR(dsl[1], -25, 1e-6);
    }
    pt_op_free(op);
}

/* ---- data movement ------------------------------------------------------- */

static void test_data(void) {
    pt_op *op = mkop(dnnl_graph_op_type_cast);
    {   /* f32 (permuted) -> bf16: RNE ties */
        const float lv[6] = {1, 1.00390625f, 1.01171875f, -2, 65536.f, 0.1f};
        float s[6];
        uint16_t d[6];
        for (int i = 0; i < 2; ++i)
            for (int j = 0; j < 3; ++j) s[i + 2 * j] = lv[3 * i + j];
        pt_tview in = view(dnnl_f32, 2, DIMS(2, 3), DIMS(1, 2), s), o = view(dnnl_bf16, 2, DIMS(2, 3), NULL, d);
        CHECK_EQ_INT(run(pt_decode_typecast, op, &in, 1, &o, 1), dnnl_success);
        CHECK_EQ_INT(d[0], 0x3F80);
        CHECK_EQ_INT(d[1], 0x3F80); /* tie -> even */
        CHECK_EQ_INT(d[2], 0x3F82); /* tie -> even */
        CHECK_EQ_INT(d[3], 0xC000);
        CHECK_EQ_INT(d[4], 0x4780);
        CHECK_EQ_INT(d[5], 0x3DCD); /* 0.1 = 0x3DCCCCCD */
        /* f16 -> f32 dense */
        uint16_t h[3] = {0x3C00, 0x0001, 0xFC00};
        float f[3];
        pt_tview in2 = view(dnnl_f16, 1, DIMS(3), NULL, h), o2 = view(dnnl_f32, 1, DIMS(3), NULL, f);
        CHECK_EQ_INT(run(pt_decode_typecast, op, &in2, 1, &o2, 1), dnnl_success);
        CHECK(f[0] == 1.f && f[1] == 0x1p-24f && isinf(f[2]) && f[2] < 0);
    }
    pt_op_free(op);

    op = mkop(dnnl_graph_op_reorder);
    {   /* dense [2,3,4] -> strides (1,2,6) */
        float s[24], d[24];
        for (int i = 0; i < 24; ++i) s[i] = (float)i;
        pt_tview in = view(dnnl_f32, 3, DIMS(2, 3, 4), NULL, s), o = view(dnnl_f32, 3, DIMS(2, 3, 4), DIMS(1, 2, 6), d);
        CHECK_EQ_INT(run(pt_decode_reorder, op, &in, 1, &o, 1), dnnl_success);
        CHECK_EQ_INT(d[1 + 0 + 12], 14); /* (1,0,2) */
        CHECK_EQ_INT(d[0 + 4 + 6], 9);   /* (0,2,1) */
        CHECK_EQ_INT(d[1 + 4 + 18], 23); /* (1,2,3) */
    }
    {   /* u4 [3,3] stored transposed -> dense; the spare high nibble is kept */
        uint8_t s[5] = {0x30, 0x16, 0x74, 0x52, 0x08}, d[5] = {0, 0, 0, 0, 0xF0};
        pt_tview in = view(dnnl_u4, 2, DIMS(3, 3), DIMS(1, 3), s), o = view(dnnl_u4, 2, DIMS(3, 3), NULL, d);
        CHECK_EQ_INT(run(pt_decode_reorder, op, &in, 1, &o, 1), dnnl_success);
        CHECK_EQ_INT(d[0], 0x10);
        CHECK_EQ_INT(d[1], 0x32);
        CHECK_EQ_INT(d[2], 0x54);
        CHECK_EQ_INT(d[3], 0x76);
        CHECK_EQ_INT(d[4], 0xF8);
        /* dense -> dense, odd count */
        uint8_t d2[2] = {0xAA, 0xAA};
        uint8_t s2[2] = {0x21, 0x03};
        pt_tview in2 = view(dnnl_u4, 1, DIMS(3), NULL, s2), o2 = view(dnnl_u4, 1, DIMS(3), NULL, d2);
        CHECK_EQ_INT(run(pt_decode_reorder, op, &in2, 1, &o2, 1), dnnl_success);
        CHECK_EQ_INT(d2[0], 0x21);
        CHECK_EQ_INT(d2[1], 0xA3);
    }
    pt_op_free(op);

    op = mkop(dnnl_graph_op_static_reshape);
    {   /* [2,3] stored transposed -> [3,2] dense, then in place */
        float s[6] = {0, 3, 1, 4, 2, 5}, d[6];
        pt_tview in = view(dnnl_f32, 2, DIMS(2, 3), DIMS(1, 2), s), o = view(dnnl_f32, 2, DIMS(3, 2), NULL, d);
        CHECK_EQ_INT(run(pt_decode_static_reshape, op, &in, 1, &o, 1), dnnl_success);
        for (int i = 0; i < 6; ++i) CHECK_EQ_INT(d[i], i);
        pt_tview o2 = view(dnnl_f32, 2, DIMS(3, 2), NULL, s);
        CHECK_EQ_INT(run(pt_decode_static_reshape, op, &in, 1, &o2, 1), dnnl_success);
        for (int i = 0; i < 6; ++i) CHECK_EQ_INT(s[i], i);
        pt_tview o3 = view(dnnl_f32, 1, DIMS(5), NULL, d);
        CHECK_EQ_INT(run(pt_decode_static_reshape, op, &in, 1, &o3, 1), dnnl_invalid_shape);
    }
    pt_op_free(op);

    {   /* StaticTranspose [2,3,4]: order [2,0,1], [-1,0,1], empty = reverse */
        float s[24], d[24];
        for (int i = 0; i < 24; ++i) s[i] = (float)i;
        pt_tview in = view(dnnl_f32, 3, DIMS(2, 3, 4), NULL, s);
        pt_tview o = view(dnnl_f32, 3, DIMS(4, 2, 3), NULL, d);
        op = mkop(dnnl_graph_op_static_transpose);
        set_is(op, dnnl_graph_op_attr_order, DIMS(2, 0, 1), 3);
        CHECK_EQ_INT(run(pt_decode_static_transpose, op, &in, 1, &o, 1), dnnl_success);
        CHECK_EQ_INT(d[3 * 6 + 1 * 3 + 2], 23); /* (3,1,2) */
        CHECK_EQ_INT(d[1 * 6 + 0 * 3 + 2], 9);  /* (1,0,2) */
        memset(d, 0, sizeof d);
        set_is(op, dnnl_graph_op_attr_order, DIMS(-1, 0, 1), 3);
        CHECK_EQ_INT(run(pt_decode_static_transpose, op, &in, 1, &o, 1), dnnl_success);
        CHECK_EQ_INT(d[3 * 6 + 1 * 3 + 2], 23);
        set_is(op, dnnl_graph_op_attr_order, NULL, 0);
        pt_tview o2 = view(dnnl_f32, 3, DIMS(4, 3, 2), NULL, d);
        CHECK_EQ_INT(run(pt_decode_static_transpose, op, &in, 1, &o2, 1), dnnl_success);
        CHECK_EQ_INT(d[3 * 6 + 2 * 2 + 1], 23); /* (3,2,1) */
        CHECK_EQ_INT(d[2 * 6 + 1 * 2 + 0], 6);  /* (2,1,0) */
        set_is(op, dnnl_graph_op_attr_order, DIMS(0, 0, 1), 3);
        CHECK_EQ_INT(run(pt_decode_static_transpose, op, &in, 1, &o, 1), dnnl_invalid_shape);
        pt_op_free(op);
    }

    op = mkop(dnnl_graph_op_concat);
    {   /* [2,1] ++ [2,3] (stored transposed) along axis 1 and -1 */
        float a[2] = {1, 2}, b[6] = {3, 6, 4, 7, 5, 8}, d[8];
        pt_tview in[2] = {view(dnnl_f32, 2, DIMS(2, 1), NULL, a), view(dnnl_f32, 2, DIMS(2, 3), DIMS(1, 2), b)};
        pt_tview o = view(dnnl_f32, 2, DIMS(2, 4), NULL, d);
        const float e[8] = {1, 3, 4, 5, 2, 6, 7, 8};
        set_i(op, dnnl_graph_op_attr_axis, 1);
        CHECK_EQ_INT(run(pt_decode_concat, op, in, 2, &o, 1), dnnl_success);
        for (int i = 0; i < 8; ++i) CHECK_EQ_INT(d[i], e[i]);
        memset(d, 0, sizeof d);
        set_i(op, dnnl_graph_op_attr_axis, -1);
        CHECK_EQ_INT(run(pt_decode_concat, op, in, 2, &o, 1), dnnl_success);
        for (int i = 0; i < 8; ++i) CHECK_EQ_INT(d[i], e[i]);
        set_i(op, dnnl_graph_op_attr_axis, 0);
        CHECK_EQ_INT(run(pt_decode_concat, op, in, 2, &o, 1), dnnl_invalid_shape);
        set_i(op, dnnl_graph_op_attr_axis, 2);
        CHECK_EQ_INT(run(pt_decode_concat, op, in, 2, &o, 1), dnnl_invalid_arguments);
    }
    pt_op_free(op);

    op = mkop(dnnl_graph_op_gen_index);
    {
        float s[6] = {0};
        int32_t d[6];
        pt_tview in = view(dnnl_f32, 2, DIMS(2, 3), NULL, s), o = view(dnnl_s32, 2, DIMS(2, 3), NULL, d);
        set_i(op, dnnl_graph_op_attr_axis, 1);
        CHECK_EQ_INT(run(pt_decode_gen_index, op, &in, 1, &o, 1), dnnl_success);
        CHECK(d[0] == 0 && d[1] == 1 && d[2] == 2 && d[3] == 0 && d[4] == 1 && d[5] == 2);
        set_i(op, dnnl_graph_op_attr_axis, -2);
        CHECK_EQ_INT(run(pt_decode_gen_index, op, &in, 1, &o, 1), dnnl_success);
        CHECK(d[0] == 0 && d[1] == 0 && d[2] == 0 && d[3] == 1 && d[4] == 1 && d[5] == 1);
        set_i(op, dnnl_graph_op_attr_axis, 2);
        CHECK_EQ_INT(run(pt_decode_gen_index, op, &in, 1, &o, 1), dnnl_invalid_arguments);
    }
    pt_op_free(op);
}

/* Expected values from an independent Philox-4x32-10 implementation checked
 * against the Random123 known-answer vectors. */
static void test_dropout(void) {
    pt_op *op = mkop(dnnl_graph_op_dropout);
    float s[10], d[10];
    uint8_t m[10];
    for (int i = 0; i < 10; ++i) s[i] = (float)(i + 1);
    int64_t seed = 12345, offset = 7;
    float p = 0.5f;
    pt_tview in[4] = {view(dnnl_f32, 2, DIMS(2, 5), NULL, s), view(dnnl_s64, 0, NULL, NULL, &seed),
                      view(dnnl_s64, 0, NULL, NULL, &offset), view(dnnl_f32, 0, NULL, NULL, &p)};
    in[1].lt.property = in[2].lt.property = in[3].lt.property = dnnl_graph_tensor_property_host_scalar;
    /* dst stored transposed; element (i,j) at i + 2j */
    pt_tview o[2] = {view(dnnl_f32, 2, DIMS(2, 5), DIMS(1, 2), d), view(dnnl_u8, 2, DIMS(2, 5), NULL, m)};
    CHECK_EQ_INT(run(pt_decode_dropout, op, in, 4, o, 2), dnnl_success);
    {
        const float e[10] = {2, 0, 0, 8, 0, 0, 0, 16, 0, 20};
        const uint8_t em[10] = {1, 0, 0, 1, 0, 0, 0, 1, 0, 1};
        for (int k = 0; k < 10; ++k) {
            int i = k / 5, j = k % 5;
            CHECK_EQ_INT(d[i + 2 * j], e[k]);
            CHECK_EQ_INT(m[k], em[k]);
        }
    }
    /* legacy path (offset 0): four consecutive indices share one word */
    seed = -3, offset = 0;
    CHECK_EQ_INT(run(pt_decode_dropout, op, in, 4, o, 1), dnnl_success);
    {
        const float e[10] = {0, 0, 0, 0, 10, 12, 14, 16, 18, 20};
        for (int k = 0; k < 10; ++k) CHECK_EQ_INT(d[(k / 5) + 2 * (k % 5)], e[k]);
    }
    /* 64-bit seed, negative offset, p = 0.3; 1-element 1-D scalars accepted */
    seed = 0x123456789abcdefLL, offset = -2, p = 0.3f;
    in[1] = view(dnnl_s64, 1, DIMS(1), NULL, &seed);
    in[3] = view(dnnl_f32, 1, DIMS(1), NULL, &p);
    pt_tview dense = view(dnnl_f32, 2, DIMS(2, 5), NULL, d);
    CHECK_EQ_INT(run(pt_decode_dropout, op, in, 4, &dense, 1), dnnl_success);
    {
        const float e[10] = {1.4285714626312256f, 0, 4.285714149475098f, 5.714285850524902f,
                             7.142857551574707f, 8.571428298950195f, 0, 0, 12.85714340209961f,
                             14.285715103149414f};
        for (int k = 0; k < 10; ++k) CHECK_EQ_INT(d[k], e[k]);
    }
    /* p = 1 drops everything (inv_q = 0 and no word exceeds 2^32 - 1) */
    p = 1.f;
    CHECK_EQ_INT(run(pt_decode_dropout, op, in, 4, &dense, 1), dnnl_success);
    for (int k = 0; k < 10; ++k) CHECK(d[k] == 0.f);
    pt_op_free(op);
}

/* ---- quantization -------------------------------------------------------- */

static void test_quant_static(void) {
    pt_op *op = mkop(dnnl_graph_op_quantize);
    float x[5] = {0, 1.25f, -5.25f, 200, -0.75f};
    float sc = 0.5f;
    {
        uint8_t q[5];
        pt_op_set_f32(op, dnnl_graph_op_attr_scales, &sc, 1, true);
        set_is(op, dnnl_graph_op_attr_zps, DIMS(10), 1);
        pt_tview in = view(dnnl_f32, 1, DIMS(5), NULL, x), o = view(dnnl_u8, 1, DIMS(5), NULL, q);
        CHECK_EQ_INT(run(pt_decode_quantize, op, &in, 1, &o, 1), dnnl_success);
        /* x*2 + 10 = 10, 12.5, -0.5, 410, 8.5 -> RNE, saturate */
        CHECK(q[0] == 10 && q[1] == 12 && q[2] == 0 && q[3] == 255 && q[4] == 8);
        int8_t s8[5];
        set_is(op, dnnl_graph_op_attr_zps, DIMS(-3), 1);
        pt_tview o2 = view(dnnl_s8, 1, DIMS(5), NULL, s8);
        CHECK_EQ_INT(run(pt_decode_quantize, op, &in, 1, &o2, 1), dnnl_success);
        /* -3, -0.5, -13.5, 397, -4.5 */
        CHECK(s8[0] == -3 && s8[1] == 0 && s8[2] == -14 && s8[3] == 127 && s8[4] == -4);
    }
    {   /* per_channel along axis 1 of [2,2] */
        float xs[4] = {1.5f, 1.5f, -2.5f, 40}, scs[2] = {1, 0.25f};
        int8_t q[4];
        pt_op_set_str(op, dnnl_graph_op_attr_qtype, "per_channel");
        set_i(op, dnnl_graph_op_attr_axis, 1);
        pt_op_set_f32(op, dnnl_graph_op_attr_scales, scs, 2, true);
        set_is(op, dnnl_graph_op_attr_zps, DIMS(0, 1), 2);
        pt_tview in = view(dnnl_f32, 2, DIMS(2, 2), NULL, xs), o = view(dnnl_s8, 2, DIMS(2, 2), NULL, q);
        CHECK_EQ_INT(run(pt_decode_quantize, op, &in, 1, &o, 1), dnnl_success);
        CHECK(q[0] == 2 && q[1] == 7 && q[2] == -2 && q[3] == 127);
        scs[1] = 0;
        pt_op_set_f32(op, dnnl_graph_op_attr_scales, scs, 2, true);
        CHECK_EQ_INT(run(pt_decode_quantize, op, &in, 1, &o, 1), dnnl_invalid_arguments);
        set_i(op, dnnl_graph_op_attr_axis, 0);
        pt_op_set_f32(op, dnnl_graph_op_attr_scales, scs, 1, true);
        set_is(op, dnnl_graph_op_attr_zps, DIMS(0), 1);
        CHECK_EQ_INT(run(pt_decode_quantize, op, &in, 1, &o, 1), dnnl_invalid_shape);
    }
    pt_op_free(op);
    {   /* f8_e4m3 target: x * f32(1/3), not saturating */
        op = mkop(dnnl_graph_op_quantize);
        float s3 = 3.f, xs[4] = {3, 1500, -0.001f, 1.5f};
        uint8_t q[4];
        pt_op_set_f32(op, dnnl_graph_op_attr_scales, &s3, 1, true);
        pt_tview in = view(dnnl_f32, 1, DIMS(4), NULL, xs), o = view(dnnl_f8_e4m3, 1, DIMS(4), NULL, q);
        CHECK_EQ_INT(run(pt_decode_quantize, op, &in, 1, &o, 1), dnnl_success);
        CHECK_EQ_INT(q[0], 0x38); /* 1.0 */
        CHECK_EQ_INT(q[1], 0x7F); /* 500 > 464 -> NaN */
        CHECK_EQ_INT(q[2], 0x80); /* tiny -> -0 */
        CHECK_EQ_INT(q[3], 0x30); /* 0.5 */
        pt_op_free(op);
    }
    {   /* Dequantize u8 per_channel axis 0 with zps; f8_e5m2 per_tensor */
        op = mkop(dnnl_graph_op_dequantize);
        uint8_t q[4] = {130, 0, 255, 7};
        float scs[2] = {0.5f, 2}, d[4];
        pt_op_set_str(op, dnnl_graph_op_attr_qtype, "per_channel");
        set_i(op, dnnl_graph_op_attr_axis, 0);
        pt_op_set_f32(op, dnnl_graph_op_attr_scales, scs, 2, true);
        set_is(op, dnnl_graph_op_attr_zps, DIMS(128, 0), 2);
        pt_tview in = view(dnnl_u8, 2, DIMS(2, 2), NULL, q), o = view(dnnl_f32, 2, DIMS(2, 2), NULL, d);
        CHECK_EQ_INT(run(pt_decode_dequantize, op, &in, 1, &o, 1), dnnl_success);
        CHECK(d[0] == 1 && d[1] == -64 && d[2] == 510 && d[3] == 14);
        pt_op_free(op);
        op = mkop(dnnl_graph_op_dequantize);
        uint8_t f8[3] = {0x3C, 0x7C, 0xBE};
        float two = 2;
        pt_op_set_f32(op, dnnl_graph_op_attr_scales, &two, 1, true);
        pt_tview in2 = view(dnnl_f8_e5m2, 1, DIMS(3), NULL, f8), o2 = view(dnnl_f32, 1, DIMS(3), NULL, d);
        CHECK_EQ_INT(run(pt_decode_dequantize, op, &in2, 1, &o2, 1), dnnl_success);
        CHECK(d[0] == 2 && isinf(d[1]) && d[1] > 0 && d[2] == -3);
        pt_op_free(op);
    }
}

static void test_quant_dynamic(void) {
    pt_op *op = mkop(dnnl_graph_op_dynamic_quantize);
    {   /* per_tensor u8 with an s32 zero point */
        float x[3] = {1, -10, 0.25f}, sc = 0.5f;
        int32_t zp = 3;
        uint8_t q[3];
        pt_tview in[3] = {view(dnnl_f32, 1, DIMS(3), NULL, x), view(dnnl_f32, 1, DIMS(1), NULL, &sc),
                          view(dnnl_s32, 1, DIMS(1), NULL, &zp)};
        pt_tview o = view(dnnl_u8, 1, DIMS(3), NULL, q);
        CHECK_EQ_INT(run(pt_decode_dynamic_quantize, op, in, 3, &o, 1), dnnl_success);
        CHECK(q[0] == 5 && q[1] == 0 && q[2] == 4);
    }
    {   /* per_group via group_shape [1,2] -> u4, u4 zero points packed */
        float x[8] = {0, 1, 2, 3, 4, 5, 6, 7}, sc[4] = {1, 2, 0.5f, 4};
        uint8_t zp[2] = {0x21, 0x43}, q[4] = {0};
        pt_op_set_str(op, dnnl_graph_op_attr_qtype, "per_group");
        set_is(op, dnnl_graph_op_attr_group_shape, DIMS(1, 2), 2);
        pt_tview in[3] = {view(dnnl_f32, 2, DIMS(2, 4), NULL, x), view(dnnl_f32, 2, DIMS(2, 2), NULL, sc),
                          view(dnnl_u4, 2, DIMS(2, 2), NULL, zp)};
        pt_tview o = view(dnnl_u4, 2, DIMS(2, 4), NULL, q);
        CHECK_EQ_INT(run(pt_decode_dynamic_quantize, op, in, 3, &o, 1), dnnl_success);
        /* {1,2,3,4, 11,13,6,6} */
        CHECK_EQ_INT(q[0], 0x21);
        CHECK_EQ_INT(q[1], 0x43);
        CHECK_EQ_INT(q[2], 0xDB);
        CHECK_EQ_INT(q[3], 0x66);
        /* same with the seed form axis {1}, groups {2} and s4 output, no zps */
        pt_op_del_attr(op, dnnl_graph_op_attr_group_shape);
        set_is(op, dnnl_graph_op_attr_axis, DIMS(1), 1);
        set_is(op, dnnl_graph_op_attr_groups, DIMS(2), 1);
        uint8_t s4[4] = {0};
        pt_tview o2 = view(dnnl_s4, 2, DIMS(2, 4), NULL, s4);
        CHECK_EQ_INT(run(pt_decode_dynamic_quantize, op, in, 2, &o2, 1), dnnl_success);
        /* row0: 0,1, 1,1.5->2 ; row1: 8->7, 10->7, 1.5->2, 1.75->2 */
        CHECK_EQ_INT(s4[0], 0x10);
        CHECK_EQ_INT(s4[1], 0x21);
        CHECK_EQ_INT(s4[2], 0x77);
        CHECK_EQ_INT(s4[3], 0x22);
        /* scales of the wrong shape */
        pt_tview bad[2] = {in[0], view(dnnl_f32, 2, DIMS(2, 1), NULL, sc)};
        CHECK_EQ_INT(run(pt_decode_dynamic_quantize, op, bad, 2, &o2, 1), dnnl_invalid_shape);
    }
    pt_op_free(op);

    op = mkop(dnnl_graph_op_dynamic_dequantize);
    {   /* s4 per_group, seed form: src [4,2], axis {0,1}, groups {2,1} -> G = [2,2], scales [2,1] */
        uint8_t src[4] = {0x78, 0xF0, 0x23, 0x5E}; /* -8,7, 0,-1, 3,2, -2,5 */
        uint8_t zp[1] = {0x2F};                    /* -1, 2 */
        float sc[2] = {0.5f, 2}, d[8];
        pt_op_set_str(op, dnnl_graph_op_attr_qtype, "per_group");
        set_is(op, dnnl_graph_op_attr_axis, DIMS(0, 1), 2);
        set_is(op, dnnl_graph_op_attr_groups, DIMS(2, 1), 2);
        pt_tview in[3] = {view(dnnl_s4, 2, DIMS(4, 2), NULL, src), view(dnnl_f32, 2, DIMS(2, 1), NULL, sc),
                          view(dnnl_s4, 2, DIMS(2, 1), NULL, zp)};
        pt_tview o = view(dnnl_f32, 2, DIMS(4, 2), NULL, d);
        const float e[8] = {-3.5f, 4, 0.5f, 0, 2, 0, -8, 6};
        CHECK_EQ_INT(run(pt_decode_dynamic_dequantize, op, in, 3, &o, 1), dnnl_success);
        for (int i = 0; i < 8; ++i) CHECK_EQ_INT(d[i], e[i]);
        /* both forms, agreeing */
        set_is(op, dnnl_graph_op_attr_group_shape, DIMS(2, 2), 2);
        memset(d, 0, sizeof d);
        CHECK_EQ_INT(run(pt_decode_dynamic_dequantize, op, in, 3, &o, 1), dnnl_success);
        for (int i = 0; i < 8; ++i) CHECK_EQ_INT(d[i], e[i]);
        /* both forms, disagreeing */
        set_is(op, dnnl_graph_op_attr_group_shape, DIMS(1, 2), 2);
        CHECK_EQ_INT(run(pt_decode_dynamic_dequantize, op, in, 3, &o, 1), dnnl_invalid_arguments);
        /* neither form */
        pt_op_del_attr(op, dnnl_graph_op_attr_group_shape);
        pt_op_del_attr(op, dnnl_graph_op_attr_groups);
        CHECK_EQ_INT(run(pt_decode_dynamic_dequantize, op, in, 3, &o, 1), dnnl_invalid_arguments);
        /* groups that do not divide the dim */
        set_is(op, dnnl_graph_op_attr_groups, DIMS(3, 1), 2);
        CHECK_EQ_INT(run(pt_decode_dynamic_dequantize, op, in, 3, &o, 1), dnnl_invalid_arguments);
    }
    pt_op_free(op);
    op = mkop(dnnl_graph_op_dynamic_dequantize);
    {   /* u4 per_group group_shape [1,2], u4 zps, f16 scales stored transposed -> f16 dst */
        uint8_t src[4] = {0x21, 0x43, 0xDB, 0x66}; /* 1,2,3,4, 11,13,6,6 */
        uint8_t zp[2] = {0x21, 0x43};              /* [[1,2],[3,4]] */
        uint16_t sc[4], d[8];
        /* scales [[1,2],[0.5,4]] at (i,j) -> i + 2j */
        sc[0] = pt_f32_to_f16(1), sc[2] = pt_f32_to_f16(2), sc[1] = pt_f32_to_f16(0.5f), sc[3] = pt_f32_to_f16(4);
        pt_op_set_str(op, dnnl_graph_op_attr_qtype, "per_group");
        set_is(op, dnnl_graph_op_attr_group_shape, DIMS(1, 2), 2);
        pt_tview in[3] = {view(dnnl_u4, 2, DIMS(2, 4), NULL, src), view(dnnl_f16, 2, DIMS(2, 2), DIMS(1, 2), sc),
                          view(dnnl_u4, 2, DIMS(2, 2), NULL, zp)};
        pt_tview o = view(dnnl_f16, 2, DIMS(2, 4), NULL, d);
        CHECK_EQ_INT(run(pt_decode_dynamic_dequantize, op, in, 3, &o, 1), dnnl_success);
        /* (q - z) * s: 0,1, 2,4, 4,5, 8,8 */
        const float e[8] = {0, 1, 2, 4, 4, 5, 8, 8};
        for (int i = 0; i < 8; ++i) CHECK_EQ_INT(pt_f16_to_f32(d[i]), e[i]);
    }
    pt_op_free(op);
    op = mkop(dnnl_graph_op_dynamic_dequantize);
    {   /* s8 per_channel axis 1 with one shared zero point; bf16 dst */
        int8_t src[4] = {10, 20, 30, 40}, zp = 10;
        uint16_t sc[2] = {pt_f32_to_bf16(0.125f), pt_f32_to_bf16(0.5f)}, d[4];
        pt_op_set_str(op, dnnl_graph_op_attr_qtype, "per_channel");
        set_is(op, dnnl_graph_op_attr_axis, DIMS(1), 1);
        pt_tview in[3] = {view(dnnl_s8, 2, DIMS(2, 2), NULL, src), view(dnnl_bf16, 1, DIMS(2), NULL, sc),
                          view(dnnl_s8, 1, DIMS(1), NULL, &zp)};
        pt_tview o = view(dnnl_bf16, 2, DIMS(2, 2), NULL, d);
        CHECK_EQ_INT(run(pt_decode_dynamic_dequantize, op, in, 3, &o, 1), dnnl_success);
        CHECK(pt_bf16_to_f32(d[0]) == 0 && pt_bf16_to_f32(d[1]) == 5 && pt_bf16_to_f32(d[2]) == 2.5f &&
              pt_bf16_to_f32(d[3]) == 15);
        /* several axes without per_group */
        set_is(op, dnnl_graph_op_attr_axis, DIMS(0, 1), 2);
        CHECK_EQ_INT(run(pt_decode_dynamic_dequantize, op, in, 3, &o, 1), dnnl_invalid_arguments);
    }
    pt_op_free(op);
}

/* ---- reductions ---------------------------------------------------------- */

static void test_reduce(void) {
    /* logical [[1,-2,3],[-4,5,-6]] stored transposed */
    float s[6] = {1, -4, -2, 5, 3, -6}, d[3];
    pt_tview src = view(dnnl_f32, 2, DIMS(2, 3), DIMS(1, 2), s);
    struct {
        dnnl_graph_op_kind_t kind;
        int64_t axis;
        float e[3];
    } cases[] = {
            {dnnl_graph_op_reduce_sum, 1, {2, -5}},
            {dnnl_graph_op_reduce_l1, 1, {6, 15}},
            {dnnl_graph_op_reduce_l2, 0, {4.12310563f, 5.38516481f, 6.70820393f}},
            {dnnl_graph_op_reduce_max, 0, {1, 5, 3}},
            {dnnl_graph_op_reduce_min, 1, {-2, -6}},
            {dnnl_graph_op_reduce_mean, -1, {2.f / 3.f, -5.f / 3.f}},
            {dnnl_graph_op_reduce_prod, 0, {-4, -10, -18}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        pt_op *op = mkop(cases[c].kind);
        set_is(op, dnnl_graph_op_attr_axes, &cases[c].axis, 1);
        int64_t n = (cases[c].axis == 0) ? 3 : 2;
        pt_tview o = view(dnnl_f32, 1, &n, NULL, d);
        CHECK_EQ_INT(run(pt_decode_reduce, op, &src, 1, &o, 1), dnnl_success);
        for (int i = 0; i < n; ++i) CHECK_NEAR(d[i], cases[c].e[i], TOL(cases[c].e[i]));
        pt_op_free(op);
    }
    {   /* keep_dims, and a strided [2,1] dst */
        float kd[4] = {0};
        pt_op *op = mkop(dnnl_graph_op_reduce_sum);
        set_is(op, dnnl_graph_op_attr_axes, DIMS(1), 1);
        pt_op_set_bool(op, dnnl_graph_op_attr_keep_dims, true);
        pt_tview o = view(dnnl_f32, 2, DIMS(2, 1), DIMS(2, 1), kd);
        CHECK_EQ_INT(run(pt_decode_reduce, op, &src, 1, &o, 1), dnnl_success);
        CHECK(kd[0] == 2 && kd[2] == -5 && kd[1] == 0);
        pt_tview wrong = view(dnnl_f32, 1, DIMS(3), NULL, kd);
        CHECK_EQ_INT(run(pt_decode_reduce, op, &src, 1, &wrong, 1), dnnl_invalid_shape);
        set_is(op, dnnl_graph_op_attr_axes, DIMS(2), 1);
        CHECK_EQ_INT(run(pt_decode_reduce, op, &src, 1, &o, 1), dnnl_invalid_shape);
        set_is(op, dnnl_graph_op_attr_axes, DIMS(1, -1), 2);
        CHECK_EQ_INT(run(pt_decode_reduce, op, &src, 1, &o, 1), dnnl_invalid_shape);
        pt_op_free(op);
    }
    {   /* all axes -> 0-D; axes from an s32 input; no axes -> identity */
        float r0;
        pt_op *op = mkop(dnnl_graph_op_reduce_prod);
        set_is(op, dnnl_graph_op_attr_axes, DIMS(0, 1), 2);
        pt_tview o = view(dnnl_f32, 0, NULL, NULL, &r0);
        CHECK_EQ_INT(run(pt_decode_reduce, op, &src, 1, &o, 1), dnnl_success);
        CHECK_EQ_INT(r0, -720);
        pt_op_free(op);

        op = mkop(dnnl_graph_op_reduce_max);
        set_is(op, dnnl_graph_op_attr_axes, NULL, 0); /* the schema's empty default */
        int32_t ax[2] = {-1, 0};
        pt_tview in[2] = {src, view(dnnl_s32, 1, DIMS(2), NULL, ax)};
        CHECK_EQ_INT(run(pt_decode_reduce, op, in, 2, &o, 1), dnnl_success);
        CHECK_EQ_INT(r0, 5);
        float id[6];
        pt_tview oi = view(dnnl_f32, 2, DIMS(2, 3), NULL, id);
        pt_op *l1 = mkop(dnnl_graph_op_reduce_l1);
        CHECK_EQ_INT(run(pt_decode_reduce, l1, &src, 1, &oi, 1), dnnl_success);
        const float e[6] = {1, -2, 3, -4, 5, -6};
        for (int i = 0; i < 6; ++i) CHECK_EQ_INT(id[i], e[i]);
        pt_op_free(l1);
        pt_op_free(op);
    }
    {   /* bf16 mean over the middle axis of [2,3,2] */
        uint16_t b[12], r[4];
        for (int i = 0; i < 12; ++i) b[i] = pt_f32_to_bf16((float)i);
        pt_op *op = mkop(dnnl_graph_op_reduce_mean);
        set_is(op, dnnl_graph_op_attr_axes, DIMS(1), 1);
        pt_tview in = view(dnnl_bf16, 3, DIMS(2, 3, 2), NULL, b), o = view(dnnl_bf16, 2, DIMS(2, 2), NULL, r);
        CHECK_EQ_INT(run(pt_decode_reduce, op, &in, 1, &o, 1), dnnl_success);
        /* (0+2+4)/3 = 2, (1+3+5)/3 = 3, (6+8+10)/3 = 8, 9 */
        CHECK(pt_bf16_to_f32(r[0]) == 2 && pt_bf16_to_f32(r[1]) == 3 && pt_bf16_to_f32(r[2]) == 8 &&
              pt_bf16_to_f32(r[3]) == 9);
        pt_op_free(op);
    }
}

/* ---- softmax ------------------------------------------------------------- */

static void test_softmax(void) {
    float s[6] = {1, 2, 3, -INFINITY, -INFINITY, -INFINITY}, d[6], st[2];
    pt_tview in = view(dnnl_f32, 2, DIMS(2, 3), NULL, s);
    pt_op *op = mkop(dnnl_graph_op_softmax);
    set_i(op, dnnl_graph_op_attr_axis, 1);
    pt_op_set_str(op, dnnl_graph_op_attr_mode, "inf_as_zero");
    pt_tview o[2] = {view(dnnl_f32, 2, DIMS(2, 3), NULL, d), view(dnnl_f32, 2, DIMS(2, 1), NULL, st)};
    CHECK_EQ_INT(run(pt_decode_softmax, op, &in, 1, o, 2), dnnl_success);
    CHECK_NEAR(d[0], 0.0900305732, 1e-6);
    CHECK_NEAR(d[1], 0.244728471, 1e-6);
    CHECK_NEAR(d[2], 0.665240956, 1e-6);
    CHECK(d[3] == 0 && d[4] == 0 && d[5] == 0);
    CHECK_NEAR(st[0], 3.40760596, 1e-5);
    CHECK(st[1] == 0.f); /* fully masked row: stats 0, as the fused SDPA kernel */
    pt_op_set_str(op, dnnl_graph_op_attr_mode, "none");
    CHECK_EQ_INT(run(pt_decode_softmax, op, &in, 1, o, 1), dnnl_success);
    CHECK(isnan(d[3]));
    pt_tview bad_stats[2] = {o[0], view(dnnl_f32, 2, DIMS(1, 3), NULL, st)};
    CHECK_EQ_INT(run(pt_decode_softmax, op, &in, 1, bad_stats, 2), dnnl_invalid_shape);
    pt_op_free(op);

    {   /* default axis 1 on [2,2] stored transposed, bf16 dst */
        float s2[4] = {0, 0, 1, 1}; /* logical [[0,1],[0,1]] */
        uint16_t b[4];
        pt_tview in2 = view(dnnl_f32, 2, DIMS(2, 2), DIMS(1, 2), s2), o2 = view(dnnl_bf16, 2, DIMS(2, 2), NULL, b);
        op = mkop(dnnl_graph_op_softmax);
        CHECK_EQ_INT(run(pt_decode_softmax, op, &in2, 1, &o2, 1), dnnl_success);
        CHECK_EQ_INT(b[0], pt_f32_to_bf16(0.268941421f));
        CHECK_EQ_INT(b[3], pt_f32_to_bf16(0.731058579f));
        set_i(op, dnnl_graph_op_attr_axis, 0); /* columns are constant -> 0.5 */
        CHECK_EQ_INT(run(pt_decode_softmax, op, &in2, 1, &o2, 1), dnnl_success);
        for (int i = 0; i < 4; ++i) CHECK_EQ_INT(b[i], 0x3F00);
        set_i(op, dnnl_graph_op_attr_axis, 2);
        CHECK_EQ_INT(run(pt_decode_softmax, op, &in2, 1, &o2, 1), dnnl_invalid_arguments);
        pt_op_free(op);
    }
    {   /* LogSoftmax (default axis -1) */
        float l[3];
        pt_tview in3 = view(dnnl_f32, 1, DIMS(3), NULL, s), o3 = view(dnnl_f32, 1, DIMS(3), NULL, l);
        op = mkop(dnnl_graph_op_log_softmax);
        CHECK_EQ_INT(run(pt_decode_softmax, op, &in3, 1, &o3, 1), dnnl_success);
        CHECK_NEAR(l[0], -2.40760596, 1e-5);
        CHECK_NEAR(l[1], -1.40760596, 1e-5);
        CHECK_NEAR(l[2], -0.407605964, 1e-5);
        pt_op_free(op);
    }
    {   /* backward ops on a [1,3] slice (axis 1 / default -1) */
        float y[3] = {0.2f, 0.3f, 0.5f}, dd[3] = {1, 2, 3}, ds[3];
        pt_tview in4[2] = {view(dnnl_f32, 2, DIMS(1, 3), NULL, dd), view(dnnl_f32, 2, DIMS(1, 3), NULL, y)};
        pt_tview o4 = view(dnnl_f32, 2, DIMS(1, 3), NULL, ds);
        op = mkop(dnnl_graph_op_softmax_backward);
        CHECK_EQ_INT(run(pt_decode_softmax_bwd, op, in4, 2, &o4, 1), dnnl_success);
        CHECK_NEAR(ds[0], -0.26, 1e-6);
        CHECK_NEAR(ds[1], -0.09, 1e-6);
        CHECK_NEAR(ds[2], 0.35, 1e-6);
        pt_op_free(op);
        float ly[3] = {logf(0.2f), logf(0.3f), logf(0.5f)};
        in4[1] = view(dnnl_f32, 2, DIMS(1, 3), NULL, ly);
        op = mkop(dnnl_graph_op_log_softmax_backward);
        CHECK_EQ_INT(run(pt_decode_softmax_bwd, op, in4, 2, &o4, 1), dnnl_success);
        CHECK_NEAR(ds[0], -0.2, 1e-5);
        CHECK_NEAR(ds[1], 0.2, 1e-5);
        CHECK_NEAR(ds[2], 0.0, 1e-5);
        pt_op_free(op);
    }
}

/* Larger odd-sized permuted tensors take the parallel paths: compare the
 * binary kernel on a [37,41,3] permuted layout against dense element math. */
static void test_large_strided(void) {
    enum { A = 37, B = 41, C = 3, N = A * B * C };
    float *a = malloc(N * sizeof(float)), *b = malloc(B * sizeof(float)), *d = malloc(N * sizeof(float));
    const int64_t st[3] = {1, A * C, A}; /* dim0 fastest, then dim2, then dim1 */
    for (int i = 0; i < A; ++i)
        for (int j = 0; j < B; ++j)
            for (int k = 0; k < C; ++k) a[i * st[0] + j * st[1] + k * st[2]] = (float)(i * 100 + j * 3 + k);
    for (int j = 0; j < B; ++j) b[j] = (float)(j * 1000);
    pt_op *op = mkop(dnnl_graph_op_add);
    pt_tview in[2] = {view(dnnl_f32, 3, DIMS(A, B, C), st, a), view(dnnl_f32, 2, DIMS(B, 1), NULL, b)};
    pt_tview o = view(dnnl_f32, 3, DIMS(A, B, C), NULL, d);
    CHECK_EQ_INT(run(pt_decode_binary, op, in, 2, &o, 1), dnnl_success);
    int bad = 0;
    for (int i = 0; i < A; ++i)
        for (int j = 0; j < B; ++j)
            for (int k = 0; k < C; ++k)
                bad += d[(i * B + j) * C + k] != (float)(i * 100 + j * 3 + k + j * 1000);
    CHECK_EQ_INT(bad, 0);
    pt_op_free(op);
    free(a), free(b), free(d);
}

int main(void) {
    test_eltwise_fwd();
    test_eltwise_bwd();
    test_binary();
    test_select();
    test_bias_prelu();
    test_data();
    test_dropout();
    test_quant_static();
    test_quant_dynamic();
    test_reduce();
    test_softmax();
    test_large_strided();
    return pt_test_summary("test_int_ref_kernels1");
}
