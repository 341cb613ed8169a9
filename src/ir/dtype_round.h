/* Rounding an f32 value through a narrower floating-point format and back:
 * the one home of the bf16 / f16 / tf32 rounding that reference and fused
 * kernels apply for declared intermediate types and non-strict math modes.
 * All round to nearest even; infinities and NaN pass through unchanged
 * (NaN stays NaN). */
#ifndef PARTITA_IR_DTYPE_ROUND_H
#define PARTITA_IR_DTYPE_ROUND_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "oneapi/dnnl/dnnl_common_types.h"

/* f32 to bf16 bits: round to nearest even, a carry out of the largest
 * finite value gives infinity, NaN stays a (quiet) NaN.  Inline because
 * packers run it once per element; pt_f32_to_bf16 (ir/dtype.h) is this.
 * A select rather than an early return, so that loops calling it vectorize. */
static inline uint16_t pt_bf16_bits_rne(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    const uint32_t r = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    return (uint16_t)((u & 0x7fffffffu) > 0x7f800000u ? (u >> 16) | 0x40u : r);
}

/* bf16 bits to f32 (exact). */
static inline float pt_bf16_bits_to_f32(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* To bf16 (8 mantissa bits) and back. */
static inline float pt_round_bf16(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u) return x;
    u += 0x7fffu + ((u >> 16) & 1u);
    u &= 0xffff0000u;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* To f16 and back: 10 mantissa bits, overflow to infinity, f16 subnormals on
 * the 2^-24 grid.  Branch-free (all cases computed, then selected with
 * masks): dequantized weights mix the ranges at random. */
static inline float pt_round_f16(float x) {
    uint32_t u, sub;
    memcpy(&u, &x, sizeof u);
    uint32_t a = u & 0x7fffffffu, sign = u & 0x80000000u;
    uint32_t nrm = (u + 0xfffu + ((u >> 13) & 1u)) & ~0x1fffu;
    float m = (fabsf(x) + 0.75f) - 0.75f; /* below 2^-14: the 2^-24 grid */
    memcpy(&sub, &m, sizeof sub);
    sub |= sign;
    uint32_t is_sub = 0u - (uint32_t)(a < 0x38800000u), is_inf = 0u - (uint32_t)(a >= 0x477ff000u);
    uint32_t is_nan = 0u - (uint32_t)(a > 0x7f800000u);
    uint32_t r = (sub & is_sub) | (nrm & ~is_sub);
    r = ((sign | 0x7f800000u) & is_inf) | (r & ~is_inf); /* |x| >= 65520 */
    r = (u & is_nan) | (r & ~is_nan);
    memcpy(&x, &r, sizeof x);
    return x;
}

/* To tf32 (10 mantissa bits, f32 exponent range) and back. */
static inline float pt_round_tf32(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    if ((u & 0x7f800000u) == 0x7f800000u) return x;
    u += 0xfffu + ((u >> 13) & 1u);
    u &= ~0x1fffu;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* Rounds to a declared floating-point type (identity for f32 and others). */
static inline float pt_round_to_dt(dnnl_data_type_t dt, float x) {
    switch ((int)dt) {
        case dnnl_bf16: return pt_round_bf16(x);
        case dnnl_f16: return pt_round_f16(x);
        default: return x;
    }
}

/* The down-conversion a math mode permits on an f32 MatMul / convolution
 * operand: bf16 for bf16 and any, f16, tf32; strict keeps the value. */
static inline float pt_round_fpmath(dnnl_fpmath_mode_t mode, float x) {
    switch (mode) {
        case dnnl_fpmath_mode_bf16:
        case dnnl_fpmath_mode_any: return pt_round_bf16(x);
        case dnnl_fpmath_mode_f16: return pt_round_f16(x);
        case dnnl_fpmath_mode_tf32: return pt_round_tf32(x);
        default: return x;
    }
}

#endif
