/* Data-type helpers; see dtconv.h. */
#include "dtconv.h"

#include <math.h>
#include <string.h>

static const struct {
    dnnl_data_type_t dt;
    const char *name;
} dt_names[] = {
    {dnnl_data_type_undef, "undef"}, {dnnl_f16, "f16"}, {dnnl_bf16, "bf16"}, {dnnl_f32, "f32"},
    {dnnl_s32, "s32"}, {dnnl_s8, "s8"}, {dnnl_u8, "u8"}, {dnnl_boolean, "boolean"},
    {dnnl_f8_e5m2, "f8_e5m2"}, {dnnl_f8_e4m3, "f8_e4m3"}, {dnnl_s4, "s4"}, {dnnl_u4, "u4"},
    {dnnl_s64, "s64"},
};

int pc_dt_from_name(const char *name) {
    if (!name) return -1;
    for (size_t i = 0; i < sizeof dt_names / sizeof dt_names[0]; ++i)
        if (strcmp(dt_names[i].name, name) == 0) return (int)dt_names[i].dt;
    return -1;
}

const char *pc_dt_name(dnnl_data_type_t dt) {
    for (size_t i = 0; i < sizeof dt_names / sizeof dt_names[0]; ++i)
        if (dt_names[i].dt == dt) return dt_names[i].name;
    return "undef";
}

int pc_dt_bits(dnnl_data_type_t dt) {
    switch (dt) {
        case dnnl_f32: case dnnl_s32: return 32;
        case dnnl_f16: case dnnl_bf16: return 16;
        case dnnl_s8: case dnnl_u8: case dnnl_boolean: case dnnl_f8_e5m2: case dnnl_f8_e4m3: return 8;
        case dnnl_s4: case dnnl_u4: return 4;
        case dnnl_s64: case dnnl_f64: return 64;
        default: return 0;
    }
}

bool pc_dt_is_float(dnnl_data_type_t dt) {
    return dt == dnnl_f32 || dt == dnnl_bf16 || dt == dnnl_f16 || dt == dnnl_f8_e5m2 || dt == dnnl_f8_e4m3;
}

bool pc_dt_is_xf16(dnnl_data_type_t dt) { return dt == dnnl_bf16 || dt == dnnl_f16; }

bool pc_dt_is_narrow(dnnl_data_type_t dt) {
    return dt == dnnl_bf16 || dt == dnnl_f16 || dt == dnnl_f8_e5m2 || dt == dnnl_f8_e4m3 || dt == dnnl_s4 ||
           dt == dnnl_u4;
}

float pc_dt_eps(dnnl_data_type_t dt) {
    switch (dt) {
        case dnnl_f32: return ldexpf(1.f, -23);
        case dnnl_bf16: return ldexpf(1.f, -7);
        case dnnl_f16: return ldexpf(1.f, -10);
        case dnnl_f8_e5m2: return ldexpf(1.f, -2);
        case dnnl_f8_e4m3: return ldexpf(1.f, -3);
        default: return 0.f;
    }
}

/* Round-to-nearest-even onto a binary float grid with `mbits` fraction bits
 * and minimum normal exponent `emin` (below it the spacing stays fixed:
 * subnormals).  No upper bound: callers handle overflow. */
static float round_grid(float v, int mbits, int emin) {
    if (v == 0.f || !isfinite(v)) return v;
    int e;
    frexpf(fabsf(v), &e);
    int ex = e - 1;
    if (ex < emin) ex = emin;
    float q = ldexpf(1.f, ex - mbits);
    return nearbyintf(v / q) * q;
}

static float round_f16(float v) {
    float r = round_grid(v, 10, -14);
    if (isfinite(r) && fabsf(r) > 65504.f) r = copysignf(INFINITY, r);
    return r;
}

static float round_bf16(float v) {
    if (isnan(v)) return v;
    return round_grid(v, 7, -126); /* overflow turns into inf by itself */
}

static float round_e5m2(float v) {
    float h = round_f16(v);
    float r = round_grid(h, 2, -14);
    if (isfinite(r) && fabsf(r) > 57344.f) r = copysignf(INFINITY, r);
    return r;
}

static float round_e4m3(float v) {
    float h = round_f16(v);
    if (isnan(h) || fabsf(h) > 464.f) return copysignf(NAN, v);
    float r = round_grid(h, 3, -6);
    if (fabsf(r) > 448.f) r = copysignf(448.f, r);
    return r;
}

static float round_int(float v, float lo, float hi) {
    if (isnan(v)) return 0.f;
    if (v < lo) v = lo;
    if (v > hi) v = hi;
    return nearbyintf(v);
}

float pc_round_to(dnnl_data_type_t dt, float v) {
    switch (dt) {
        case dnnl_f16: return round_f16(v);
        case dnnl_bf16: return round_bf16(v);
        case dnnl_f8_e5m2: return round_e5m2(v);
        case dnnl_f8_e4m3: return round_e4m3(v);
        case dnnl_s8: return round_int(v, -128.f, 127.f);
        case dnnl_u8: return round_int(v, 0.f, 255.f);
        case dnnl_s4: return round_int(v, -8.f, 7.f);
        case dnnl_u4: return round_int(v, 0.f, 15.f);
        case dnnl_s32: return round_int(v, -2147483648.f, 2147483520.f);
        case dnnl_s64: return isnan(v) ? 0.f : nearbyintf(v);
        case dnnl_boolean: return v != 0.f ? 1.f : 0.f;
        default: return v;
    }
}

/* ---- bit encodings -------------------------------------------------------- */

static uint32_t f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float f32_from_bits(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Bit layouts of the small binary floats: ebits exponent bits (bias
 * 2^(ebits-1) - 1), mbits fraction bits.  An IEEE-like format keeps the top
 * exponent for inf/NaN; the other kind (e4m3) only spends its all-ones code
 * on NaN and has no infinity. */
typedef struct {
    int ebits, mbits;
    bool ieee;
} minifloat;

static const minifloat F16 = {5, 10, true}, E4M3 = {4, 3, false};

/* `v` must already lie on the format's grid (or be inf/NaN). */
static uint32_t mini_encode(minifloat f, float v) {
    int bias = (1 << (f.ebits - 1)) - 1;
    uint32_t top_exp = ((1u << f.ebits) - 1) << f.mbits;
    uint32_t s = signbit(v) ? 1u << (f.ebits + f.mbits) : 0;
    if (isnan(v)) return s | top_exp | (f.ieee ? 1u << (f.mbits - 1) : (1u << f.mbits) - 1);
    float a = fabsf(v);
    if (isinf(a)) return s | top_exp;
    if (a == 0.f) return s;
    int e;
    frexpf(a, &e);
    int ex = e - 1;
    if (ex < 1 - bias) return s | (uint32_t)ldexpf(a, bias - 1 + f.mbits); /* subnormal */
    uint32_t mant = (uint32_t)ldexpf(a / ldexpf(1.f, ex) - 1.f, f.mbits);
    return s | ((uint32_t)(ex + bias) << f.mbits) | mant;
}

static float mini_decode(minifloat f, uint32_t b) {
    int bias = (1 << (f.ebits - 1)) - 1;
    float s = (b >> (f.ebits + f.mbits)) & 1 ? -1.f : 1.f;
    int ex = (int)(b >> f.mbits) & ((1 << f.ebits) - 1);
    int mant = (int)b & ((1 << f.mbits) - 1);
    if (f.ieee && ex == (1 << f.ebits) - 1) return mant ? NAN : s * INFINITY;
    if (!f.ieee && ex == (1 << f.ebits) - 1 && mant == (1 << f.mbits) - 1) return NAN;
    if (ex == 0) return s * ldexpf((float)mant, 1 - bias - f.mbits);
    return s * ldexpf(1.f + ldexpf((float)mant, -f.mbits), ex - bias);
}

static uint16_t f16_encode(float h) { return (uint16_t)mini_encode(F16, h); }
static float f16_decode(uint16_t b) { return mini_decode(F16, b); }

float pc_load(const void *base, dnnl_data_type_t dt, int64_t k) {
    const uint8_t *p = (const uint8_t *)base;
    switch (dt) {
        case dnnl_f32: {
            float v;
            memcpy(&v, p + 4 * k, 4);
            return v;
        }
        case dnnl_s32: {
            int32_t v;
            memcpy(&v, p + 4 * k, 4);
            return (float)v;
        }
        case dnnl_s64: {
            int64_t v;
            memcpy(&v, p + 8 * k, 8);
            return (float)v;
        }
        case dnnl_f16: {
            uint16_t v;
            memcpy(&v, p + 2 * k, 2);
            return f16_decode(v);
        }
        case dnnl_bf16: {
            uint16_t v;
            memcpy(&v, p + 2 * k, 2);
            return f32_from_bits((uint32_t)v << 16);
        }
        case dnnl_s8: return (float)(int8_t)p[k];
        case dnnl_u8: return (float)p[k];
        case dnnl_boolean: return p[k] ? 1.f : 0.f;
        case dnnl_f8_e5m2: return f16_decode((uint16_t)(p[k] << 8));
        case dnnl_f8_e4m3: return mini_decode(E4M3, p[k]);
        case dnnl_s4:
        case dnnl_u4: {
            unsigned nib = (k & 1) ? (p[k / 2] >> 4) : (p[k / 2] & 0xf);
            if (dt == dnnl_s4 && nib >= 8) return (float)((int)nib - 16);
            return (float)nib;
        }
        default: return 0.f;
    }
}

void pc_store(void *base, dnnl_data_type_t dt, int64_t k, float v) {
    uint8_t *p = (uint8_t *)base;
    float r = pc_round_to(dt, v);
    switch (dt) {
        case dnnl_f32: memcpy(p + 4 * k, &r, 4); break;
        case dnnl_s32: {
            int32_t i = (int32_t)r;
            memcpy(p + 4 * k, &i, 4);
            break;
        }
        case dnnl_s64: {
            int64_t i = (int64_t)r;
            memcpy(p + 8 * k, &i, 8);
            break;
        }
        case dnnl_f16: {
            uint16_t b = f16_encode(r);
            memcpy(p + 2 * k, &b, 2);
            break;
        }
        case dnnl_bf16: {
            uint32_t u = f32_bits(r);
            if (isnan(r)) u |= 0x00400000u;
            uint16_t b = (uint16_t)(u >> 16);
            memcpy(p + 2 * k, &b, 2);
            break;
        }
        case dnnl_s8: p[k] = (uint8_t)(int8_t)r; break;
        case dnnl_u8: p[k] = (uint8_t)r; break;
        case dnnl_boolean: p[k] = r != 0.f ? 1 : 0; break;
        case dnnl_f8_e5m2: p[k] = (uint8_t)(f16_encode(r) >> 8); break;
        case dnnl_f8_e4m3: p[k] = (uint8_t)mini_encode(E4M3, r); break;
        case dnnl_s4:
        case dnnl_u4: {
            unsigned nib = (unsigned)(int)r & 0xfu;
            uint8_t *b = &p[k / 2];
            *b = (k & 1) ? (uint8_t)((*b & 0x0f) | (nib << 4)) : (uint8_t)((*b & 0xf0) | nib);
            break;
        }
        default: break;
    }
}

size_t pc_buffer_bytes(dnnl_data_type_t dt, int ndims, const int64_t *dims, const int64_t *strides) {
    int bits = pc_dt_bits(dt);
    if (bits == 0) return 0;
    int64_t n = 1;
    if (ndims > 0) {
        /* docs/ops.md (memory layout), widened to the last addressed element + 1 so odd
         * (overlapping or permuted) strides never under-allocate. */
        int64_t last = 0;
        n = 0;
        for (int d = 0; d < ndims; ++d) {
            if (dims[d] == 0) return 0;
            if (dims[d] == 1) {
                /* Any stride (even INT64_MIN) is fine: the dim adds no offset. */
                if (n < 1) n = 1;
                continue;
            }
            int64_t span = dims[d] * strides[d];
            if (span > n) n = span;
            last += (dims[d] - 1) * (strides[d] < 0 ? -strides[d] : strides[d]);
        }
        if (last + 1 > n) n = last + 1;
    }
    return bits == 4 ? (size_t)((n + 1) / 2) : (size_t)n * (size_t)(bits / 8);
}
