/* Portable row of the vector-kernel table: plain loops over libm. */
#include <math.h>

#include "ir/dtype.h"
#include "ir/dtype_round.h"
#include "kernels/vec/vec_rows.h"

static float generic_max(const float *x, int64_t n) {
    float m = -INFINITY;
    for (int64_t i = 0; i < n; ++i)
        if (x[i] > m) m = x[i];
    return m;
}

static float generic_exp_sum(float *x, int64_t n, float sub) {
    float s = 0.f;
    for (int64_t i = 0; i < n; ++i) {
        x[i] = expf(x[i] - sub);
        s += x[i];
    }
    return s;
}

static void generic_scale(float *x, int64_t n, float s) {
    for (int64_t i = 0; i < n; ++i) x[i] *= s;
}

static void generic_bf16_to_f32(float *dst, const uint16_t *src, int64_t n) {
    for (int64_t i = 0; i < n; ++i) dst[i] = pt_bf16_bits_to_f32(src[i]);
}

static void generic_f32_to_bf16(uint16_t *dst, const float *src, int64_t n) {
    for (int64_t i = 0; i < n; ++i) dst[i] = pt_bf16_bits_rne(src[i]);
}

static void generic_f16_to_f32(float *dst, const uint16_t *src, int64_t n) {
    for (int64_t i = 0; i < n; ++i) dst[i] = pt_f16_to_f32(src[i]);
}

static void generic_f32_to_f16(uint16_t *dst, const float *src, int64_t n) {
    for (int64_t i = 0; i < n; ++i) dst[i] = pt_f32_to_f16(src[i]);
}

static double generic_sum_f64(const float *x, int64_t n) {
    double s = 0.0;
    for (int64_t i = 0; i < n; ++i) s += x[i];
    return s;
}

static double generic_sum_sq_dev_f64(const float *x, int64_t n, double mean) {
    double s = 0.0;
    for (int64_t i = 0; i < n; ++i) {
        const double d = x[i] - mean;
        s += d * d;
    }
    return s;
}

static void generic_normalize(float *y, const float *x, int64_t n, double mean, double inv, const float *g,
                              const float *b) {
    for (int64_t i = 0; i < n; ++i) {
        double v = (x[i] - mean) * inv;
        if (g) v *= g[i];
        if (b) v += b[i];
        y[i] = (float)v;
    }
}

static void generic_normalize1(float *y, const float *x, int64_t n, double mean, double scale, double shift) {
    for (int64_t i = 0; i < n; ++i) y[i] = (float)((x[i] - mean) * scale + shift);
}

static void generic_acc_shift_f64(double *s1, double *s2, const float *x, int64_t ldx, int64_t rows, const double *k,
                                  int64_t n) {
    for (int64_t r = 0; r < rows; ++r, x += ldx)
        for (int64_t i = 0; i < n; ++i) {
            const double d = x[i] - k[i];
            s1[i] += d;
            s2[i] += d * d;
        }
}

static void generic_normalize_each(float *y, int64_t ldy, const float *x, int64_t ldx, int64_t rows, int64_t n,
                                   const double *mean, const double *scale, const double *shift, bool stream) {
    (void)stream; /* always cached stores here */
    for (int64_t r = 0; r < rows; ++r, x += ldx, y += ldy)
        for (int64_t i = 0; i < n; ++i) y[i] = (float)((x[i] - mean[i]) * scale[i] + shift[i]);
}

static void generic_acc_f64(double *acc, const float *x, int64_t n) {
    for (int64_t i = 0; i < n; ++i) acc[i] += x[i];
}

static void generic_div_f64(float *y, const double *acc, int64_t n, double d) {
    for (int64_t i = 0; i < n; ++i) y[i] = (float)(acc[i] / d);
}

static void generic_sub2(float *y, const float *x, int64_t n, float a, float b) {
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] - a - b;
}

static bool generic_eltwise(const pt_eltwise_params *p, float *y, const float *x, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = pt_eltwise_fwd(p, x[i]);
    return true;
}

static bool generic_binary(int kind, float *y, const float *a, int64_t as, const float *b, int64_t bs, int64_t n) {
    switch (kind) {
#define PT_BINARY_LOOP(k, expr)                                   \
    case k:                                                       \
        for (int64_t i = 0; i < n; ++i) {                         \
            const float u = a[i * as], v = b[i * bs];             \
            y[i] = (expr);                                        \
        }                                                         \
        return true;
        PT_BINARY_LOOP(dnnl_graph_op_add, u + v)
        PT_BINARY_LOOP(dnnl_graph_op_subtract, u - v)
        PT_BINARY_LOOP(dnnl_graph_op_multiply, u * v)
        PT_BINARY_LOOP(dnnl_graph_op_divide, u / v)
        PT_BINARY_LOOP(dnnl_graph_op_maximum, u > v ? u : v)
        PT_BINARY_LOOP(dnnl_graph_op_minimum, u < v ? u : v)
#undef PT_BINARY_LOOP
        default: return false;
    }
}

static void generic_s8_to_f32(float *dst, const int8_t *src, int64_t n) {
    for (int64_t i = 0; i < n; ++i) dst[i] = (float)src[i];
}

static void generic_u8_to_f32(float *dst, const uint8_t *src, int64_t n) {
    for (int64_t i = 0; i < n; ++i) dst[i] = (float)src[i];
}

static void generic_f32_to_s8(int8_t *dst, const float *src, int64_t n) {
    for (int64_t i = 0; i < n; ++i) dst[i] = pt_f32_to_s8(src[i]);
}

static void generic_f32_to_u8(uint8_t *dst, const float *src, int64_t n) {
    for (int64_t i = 0; i < n; ++i) dst[i] = pt_f32_to_u8(src[i]);
}

const pt_vec_ops pt_vec_row_generic = {.name = "generic",
                                       .level = PT_ISA_GENERIC,
                                       .max = generic_max,
                                       .exp_sum = generic_exp_sum,
                                       .scale = generic_scale,
                                       .bf16_to_f32 = generic_bf16_to_f32,
                                       .f32_to_bf16 = generic_f32_to_bf16,
                                       .f16_to_f32 = generic_f16_to_f32,
                                       .f32_to_f16 = generic_f32_to_f16,
                                       .sum_f64 = generic_sum_f64,
                                       .sum_sq_dev_f64 = generic_sum_sq_dev_f64,
                                       .normalize = generic_normalize,
                                       .normalize1 = generic_normalize1,
                                       .acc_shift_f64 = generic_acc_shift_f64,
                                       .normalize_each = generic_normalize_each,
                                       .acc_f64 = generic_acc_f64,
                                       .div_f64 = generic_div_f64,
                                       .sub2 = generic_sub2,
                                       .eltwise = generic_eltwise,
                                       .binary = generic_binary,
                                       .s8_to_f32 = generic_s8_to_f32,
                                       .u8_to_f32 = generic_u8_to_f32,
                                       .f32_to_s8 = generic_f32_to_s8,
                                       .f32_to_u8 = generic_f32_to_u8};
