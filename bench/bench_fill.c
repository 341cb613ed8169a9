#include "bench_fill.h"

#include <math.h>
#include <string.h>

static uint64_t mix(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Uniform in [0, 1). */
static double unit(size_t tensor_id, size_t index) {
    uint64_t h = mix(((uint64_t)tensor_id << 40) ^ (uint64_t)index);
    return (double)(h >> 11) * (1.0 / 9007199254740992.0);
}

float fill_value(size_t tensor_id, size_t index, dnnl_data_type_t data_type,
        fill_role role, int zero_point) {
    double u = unit(tensor_id, index);
    if (role == FILL_SCALE) return (float)(0.02 + 0.03 * u);
    if (role == FILL_ZERO_POINT) return (float)(int)(u * 4);
    if (role == FILL_QUANTIZED) {
        int lowest = 0, highest = 0;
        switch (data_type) {
        case dnnl_u8: highest = 255; break;
        case dnnl_s8: lowest = -128; highest = 127; break;
        case dnnl_u4: highest = 15; break;
        case dnnl_s4: lowest = -8; highest = 7; break;
        case dnnl_s32: lowest = -(1 << 30); highest = 1 << 30; break;
        default: return (float)(2 * u - 1);
        }
        int v = zero_point + (int)(u * 16) - 8;
        return (float)(v < lowest ? lowest : v > highest ? highest : v);
    }
    switch (data_type) {
    case dnnl_u8:
    case dnnl_u4: return (float)(int)(u * 16);
    case dnnl_s8:
    case dnnl_s4: return (float)((int)(u * 16) - 8);
    case dnnl_s32:
    case dnnl_s64: return (float)(int)(u * 4);
    case dnnl_boolean: return u < 0.5 ? 0.f : 1.f;
    default: return (float)(2 * u - 1);
    }
}

uint16_t float_to_bf16(float f) {
    uint32_t bits;
    memcpy(&bits, &f, 4);
    if ((bits & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((bits >> 16) | 0x40);
    bits += 0x7fffu + ((bits >> 16) & 1); /* round to nearest even */
    return (uint16_t)(bits >> 16);
}

float bf16_to_float(uint16_t h) {
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

uint16_t float_to_f16(float f) {
    uint32_t bits;
    memcpy(&bits, &f, 4);
    uint16_t sign = (uint16_t)((bits >> 16) & 0x8000);
    float a = fabsf(f);
    if (isnan(f)) return 0x7e00;
    if (a >= 65520.f) return sign | 0x7c00;
    if (a < 6.103515625e-05f) /* subnormal half: steps of 2^-24 */
        return sign | (uint16_t)lrintf(a * 16777216.f);
    uint32_t exponent = ((bits >> 23) & 0xff) - 127 + 15;
    uint32_t mantissa = bits & 0x7fffff;
    uint32_t half = (exponent << 10) | (mantissa >> 13);
    uint32_t rest = mantissa & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (half & 1))) ++half;
    return sign | (uint16_t)half;
}

float f16_to_float(uint16_t h) {
    int exponent = (h >> 10) & 0x1f;
    int mantissa = h & 0x3ff;
    float v;
    if (exponent == 0) v = ldexpf((float)mantissa, -24);
    else if (exponent == 31) v = mantissa ? NAN : INFINITY;
    else v = ldexpf((float)(mantissa | 0x400), exponent - 25);
    return (h & 0x8000) ? -v : v;
}

/* 8-bit floats with `mantissa_bits` and the exponent bias of the format;
 * e4m3 has no infinities (0x7f is NaN), e5m2 follows IEEE rules. */
static float f8_to_float(uint8_t b, int mantissa_bits, int bias, int is_e4m3) {
    int exponent_bits = 7 - mantissa_bits;
    int exponent = (b >> mantissa_bits) & ((1 << exponent_bits) - 1);
    int mantissa = b & ((1 << mantissa_bits) - 1);
    int max_exponent = (1 << exponent_bits) - 1;
    float v;
    if (is_e4m3 && exponent == max_exponent && mantissa == 7) v = NAN;
    else if (!is_e4m3 && exponent == max_exponent) v = mantissa ? NAN : INFINITY;
    else if (exponent == 0) v = ldexpf((float)mantissa, 1 - bias - mantissa_bits);
    else v = ldexpf((float)(mantissa | (1 << mantissa_bits)),
            exponent - bias - mantissa_bits);
    return (b & 0x80) ? -v : v;
}

/* Rounds to the nearest representable 8-bit float by search: only 256
 * codes, and fill values are few enough per tensor that this stays cheap
 * relative to the benchmark itself. */
static uint8_t float_to_f8(float f, int is_e4m3) {
    uint8_t best = 0;
    float best_error = INFINITY;
    for (int code = 0; code < 256; ++code) {
        float v = is_e4m3 ? f8_to_float((uint8_t)code, 3, 7, 1)
                          : f8_to_float((uint8_t)code, 2, 15, 0);
        if (!isfinite(v)) continue;
        float error = fabsf(v - f);
        if (error < best_error) {
            best_error = error;
            best = (uint8_t)code;
        }
    }
    return best;
}

void fill_buffer(void *buffer, size_t count, dnnl_data_type_t data_type,
        size_t tensor_id, fill_role role, int zero_point) {
    uint8_t *bytes = buffer;
    if (data_type == dnnl_s4 || data_type == dnnl_u4) {
        memset(buffer, 0, (count + 1) / 2);
        for (size_t i = 0; i < count; ++i) {
            int v = (int)fill_value(tensor_id, i, data_type, role, zero_point);
            bytes[i / 2] |= (uint8_t)((v & 0xf) << ((i & 1) * 4));
        }
        return;
    }
    if (data_type == dnnl_f8_e4m3 || data_type == dnnl_f8_e5m2) {
        /* A table of the codes of 1/64 steps in [-1, 1] avoids a search per
         * element; fill values are quantised to that grid first. */
        uint8_t table[129];
        for (int k = 0; k <= 128; ++k)
            table[k] = float_to_f8((float)(k - 64) / 64.f,
                    data_type == dnnl_f8_e4m3);
        for (size_t i = 0; i < count; ++i) {
            float v = fill_value(tensor_id, i, dnnl_f32, role, zero_point);
            int k = (int)lrintf(v * 64.f) + 64;
            bytes[i] = table[k < 0 ? 0 : k > 128 ? 128 : k];
        }
        return;
    }
    for (size_t i = 0; i < count; ++i) {
        float v = fill_value(tensor_id, i, data_type, role, zero_point);
        switch (data_type) {
        case dnnl_f32: ((float *)buffer)[i] = v; break;
        case dnnl_bf16: ((uint16_t *)buffer)[i] = float_to_bf16(v); break;
        case dnnl_f16: ((uint16_t *)buffer)[i] = float_to_f16(v); break;
        case dnnl_s32: ((int32_t *)buffer)[i] = (int32_t)v; break;
        case dnnl_s64: ((int64_t *)buffer)[i] = (int64_t)v; break;
        case dnnl_s8: ((int8_t *)buffer)[i] = (int8_t)v; break;
        case dnnl_u8:
        case dnnl_boolean: bytes[i] = (uint8_t)v; break;
        case dnnl_f64: ((double *)buffer)[i] = v; break;
        default: bytes[i] = 0; break;
        }
    }
}

float load_as_float(const void *buffer, size_t index, dnnl_data_type_t data_type) {
    const uint8_t *bytes = buffer;
    switch (data_type) {
    case dnnl_f32: return ((const float *)buffer)[index];
    case dnnl_bf16: return bf16_to_float(((const uint16_t *)buffer)[index]);
    case dnnl_f16: return f16_to_float(((const uint16_t *)buffer)[index]);
    case dnnl_s32: return (float)((const int32_t *)buffer)[index];
    case dnnl_s64: return (float)((const int64_t *)buffer)[index];
    case dnnl_s8: return (float)((const int8_t *)buffer)[index];
    case dnnl_u8:
    case dnnl_boolean: return (float)bytes[index];
    case dnnl_f64: return (float)((const double *)buffer)[index];
    case dnnl_f8_e4m3: return f8_to_float(bytes[index], 3, 7, 1);
    case dnnl_f8_e5m2: return f8_to_float(bytes[index], 2, 15, 0);
    case dnnl_u4: return (float)((bytes[index / 2] >> ((index & 1) * 4)) & 0xf);
    case dnnl_s4: {
        int v = (bytes[index / 2] >> ((index & 1) * 4)) & 0xf;
        return (float)(v >= 8 ? v - 16 : v);
    }
    default: return NAN;
    }
}
