/* Converting run access (see run_io.h). */
#include "kernels/fused/run_io.h"

#include <stdbool.h>
#include <string.h>

#include "ir/dtype.h"
#include "kernels/vec/vec.h"

/* Saturating round-half-even to [lo, hi] (NaN -> 0): pt_f32_to_s8 / _u8
 * without the call.  After clamping |v| <= 255, so adding and subtracting
 * 1.5 * 2^23 rounds to an integer in the current (nearest-even) mode, as
 * nearbyintf does (IEEE arithmetic: the compiler may not fold the pair);
 * zero comes out as +0, like the integer round trip. */
static inline float po_round_int(float v, float lo, float hi) {
    if (v != v) return 0.f;
    v = v < lo ? lo : (v > hi ? hi : v);
    return (v + 12582912.f) - 12582912.f;
}

/* binary16 → binary32 (exact, as pt_f16_to_f32) without branches, so row
 * loops stay cheap on random data: the magnitude bits moved into f32
 * position and scaled by 2^112 give normal and subnormal values; inf / NaN
 * get the f32 exponent. */
static inline float f16_to_f32(uint16_t h) {
    uint32_t u = (uint32_t)(h & 0x7fffu) << 13;
    float f;
    memcpy(&f, &u, sizeof f);
    f *= 0x1p112f;
    memcpy(&u, &f, sizeof u);
    u |= (h & 0x7c00u) == 0x7c00u ? 0x7f800000u : 0u;
    u |= (uint32_t)(h & 0x8000u) << 16;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Contiguous 4-bit elements, byte by byte: element e in byte e/2, the low
 * nibble when e is even. */
static void load_nibbles(const uint8_t *q, bool is_signed, int64_t off, float *x, int64_t n) {
    int64_t i = 0;
    if (n > 0 && (off & 1)) x[i++] = (float)(q[off >> 1] >> 4);
    for (; i + 1 < n; i += 2) {
        uint8_t byte = q[(off + i) >> 1];
        x[i] = (float)(byte & 0xf);
        x[i + 1] = (float)(byte >> 4);
    }
    if (i < n) x[i] = (float)(q[(off + i) >> 1] & 0xf);
    if (is_signed)
        for (int64_t j = 0; j < n; ++j) x[j] = x[j] >= 8.f ? x[j] - 16.f : x[j];
}

void pt_run_load(const void *base, dnnl_data_type_t dt, int64_t off, int64_t stride, float *x, int64_t n) {
    switch ((int)dt) {
        case dnnl_f32: {
            const float *s = (const float *)base + off;
            if (stride == 1) memcpy(x, s, (size_t)n * sizeof(float));
            else
                for (int64_t i = 0; i < n; ++i) x[i] = s[i * stride];
            break;
        }
        /* Dense runs of 16 / 8-bit values through the vector row (exact
         * widenings, as below). */
        case dnnl_bf16: { /* the upper half of an f32: pt_bf16_to_f32 inline */
            const uint16_t *s = (const uint16_t *)base + off;
            if (stride == 1) {
                pt_vec()->bf16_to_f32(x, s, n);
                break;
            }
            for (int64_t i = 0; i < n; ++i) {
                uint32_t u = (uint32_t)s[i * stride] << 16;
                memcpy(&x[i], &u, sizeof u);
            }
            break;
        }
        case dnnl_f16: {
            const uint16_t *s = (const uint16_t *)base + off;
            if (stride == 1) pt_vec()->f16_to_f32(x, s, n);
            else
                for (int64_t i = 0; i < n; ++i) x[i] = f16_to_f32(s[i * stride]);
            break;
        }
        case dnnl_s8: {
            const int8_t *s = (const int8_t *)base + off;
            if (stride == 1) pt_vec()->s8_to_f32(x, s, n);
            else
                for (int64_t i = 0; i < n; ++i) x[i] = (float)s[i * stride];
            break;
        }
        case dnnl_u8: {
            const uint8_t *s = (const uint8_t *)base + off;
            if (stride == 1) pt_vec()->u8_to_f32(x, s, n);
            else
                for (int64_t i = 0; i < n; ++i) x[i] = (float)s[i * stride];
            break;
        }
        case dnnl_s32: {
            const int32_t *s = (const int32_t *)base + off;
            for (int64_t i = 0; i < n; ++i) x[i] = (float)s[i * stride];
            break;
        }
        case dnnl_u4:
        case dnnl_s4:
            if (stride == 1) {
                load_nibbles(base, dt == dnnl_s4, off, x, n);
                break;
            }
            for (int64_t i = 0; i < n; ++i) x[i] = pt_load_f32(base, dt, off + i * stride);
            break;
        default:
            for (int64_t i = 0; i < n; ++i) x[i] = pt_load_f32(base, dt, off + i * stride);
            break;
    }
}

void pt_run_store(void *base, dnnl_data_type_t dt, int64_t off, int64_t stride, const float *x, int64_t n) {
    switch ((int)dt) {
        case dnnl_f32: {
            float *d = (float *)base + off;
            if (stride == 1) {
                if (d != x) memcpy(d, x, (size_t)n * sizeof(float)); /* x may be the output itself */
            } else {
                for (int64_t i = 0; i < n; ++i) d[i * stride] = x[i];
            }
            break;
        }
        /* Dense runs go through the vector row (same conversions: round to
         * nearest even, saturated integers, NaN to 0). */
        case dnnl_bf16: {
            uint16_t *d = (uint16_t *)base + off;
            if (stride == 1) pt_vec()->f32_to_bf16(d, x, n);
            else
                for (int64_t i = 0; i < n; ++i) d[i * stride] = pt_f32_to_bf16(x[i]);
            break;
        }
        case dnnl_f16: {
            uint16_t *d = (uint16_t *)base + off;
            if (stride == 1) pt_vec()->f32_to_f16(d, x, n);
            else
                for (int64_t i = 0; i < n; ++i) d[i * stride] = pt_f32_to_f16(x[i]);
            break;
        }
        case dnnl_s8: {
            int8_t *d = (int8_t *)base + off;
            if (stride == 1) pt_vec()->f32_to_s8(d, x, n);
            else
                for (int64_t i = 0; i < n; ++i) d[i * stride] = (int8_t)po_round_int(x[i], -128.f, 127.f);
            break;
        }
        case dnnl_u8: {
            uint8_t *d = (uint8_t *)base + off;
            if (stride == 1) pt_vec()->f32_to_u8(d, x, n);
            else
                for (int64_t i = 0; i < n; ++i) d[i * stride] = (uint8_t)po_round_int(x[i], 0.f, 255.f);
            break;
        }
        default:
            for (int64_t i = 0; i < n; ++i) pt_store_f32(base, dt, off + i * stride, x[i]);
            break;
    }
}

void pt_run_round(dnnl_data_type_t dt, float *x, int64_t n) {
    switch ((int)dt) {
        case dnnl_f32: break;
        case dnnl_bf16:
            for (int64_t i = 0; i < n; ++i) x[i] = pt_bf16_to_f32(pt_f32_to_bf16(x[i]));
            break;
        case dnnl_f16:
            for (int64_t i = 0; i < n; ++i) x[i] = pt_f16_to_f32(pt_f32_to_f16(x[i]));
            break;
        case dnnl_s8:
            for (int64_t i = 0; i < n; ++i) x[i] = po_round_int(x[i], -128.f, 127.f);
            break;
        case dnnl_u8:
            for (int64_t i = 0; i < n; ++i) x[i] = po_round_int(x[i], 0.f, 255.f);
            break;
        default: {
            uint64_t cell[2];
            for (int64_t i = 0; i < n; ++i) {
                memset(cell, 0, sizeof cell);
                pt_store_f32(cell, dt, 0, x[i]);
                x[i] = pt_load_f32(cell, dt, 0);
            }
            break;
        }
    }
}

