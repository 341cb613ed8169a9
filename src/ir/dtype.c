/* Data-type facts and scalar conversions (docs/numerics.md).
 * Everything here relies only on the default floating-point environment
 * (round-to-nearest-even, no flush-to-zero): nearbyintf/rint give RNE. */
#include "ir/dtype.h"
#include "ir/dtype_round.h"

#include <math.h>
#include <string.h>

static uint32_t f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}
static float f32_from_bits(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* ---- data-type facts ---------------------------------------------------- */

int pt_dt_bits(dnnl_data_type_t dt) {
    switch (dt) {
        case dnnl_f16:
        case dnnl_bf16: return 16;
        case dnnl_f32:
        case dnnl_s32: return 32;
        case dnnl_s8:
        case dnnl_u8:
        case dnnl_boolean:
        case dnnl_f8_e5m2:
        case dnnl_f8_e4m3:
        case dnnl_e8m0: return 8;
        case dnnl_s4:
        case dnnl_u4:
        case dnnl_f4_e2m1:
        case dnnl_f4_e3m0: return 4;
        case dnnl_f64:
        case dnnl_s64: return 64;
        default: return 0;
    }
}

size_t pt_dt_bytes(dnnl_data_type_t dt, int64_t n) {
    if (n <= 0) return 0;
    return (size_t)(((uint64_t)n * (uint64_t)pt_dt_bits(dt) + 7u) / 8u);
}

static const struct {
    dnnl_data_type_t dt;
    const char *name;
} dt_names[] = {
        {dnnl_f32, "f32"},         {dnnl_bf16, "bf16"},        {dnnl_f16, "f16"},
        {dnnl_s32, "s32"},         {dnnl_s8, "s8"},            {dnnl_u8, "u8"},
        {dnnl_f64, "f64"},         {dnnl_boolean, "boolean"},  {dnnl_f8_e5m2, "f8_e5m2"},
        {dnnl_f8_e4m3, "f8_e4m3"}, {dnnl_s4, "s4"},            {dnnl_u4, "u4"},
        {dnnl_e8m0, "e8m0"},       {dnnl_f4_e2m1, "f4_e2m1"},  {dnnl_f4_e3m0, "f4_e3m0"},
        {dnnl_s64, "s64"},         {dnnl_data_type_undef, "undef"},
};

const char *pt_dt_name(dnnl_data_type_t dt) {
    for (size_t i = 0; i < sizeof dt_names / sizeof dt_names[0]; ++i)
        if (dt_names[i].dt == dt) return dt_names[i].name;
    return "undef";
}

dnnl_data_type_t pt_dt_from_name(const char *name) {
    if (!name) return dnnl_data_type_undef;
    for (size_t i = 0; i < sizeof dt_names / sizeof dt_names[0]; ++i)
        if (strcmp(dt_names[i].name, name) == 0) return dt_names[i].dt;
    return dnnl_data_type_undef;
}

bool pt_dt_is_float(dnnl_data_type_t dt) {
    return dt == dnnl_f32 || dt == dnnl_f16 || dt == dnnl_bf16 || dt == dnnl_f64 ||
           dt == dnnl_f8_e5m2 || dt == dnnl_f8_e4m3;
}

bool pt_dt_is_int(dnnl_data_type_t dt) {
    return dt == dnnl_s32 || dt == dnnl_s8 || dt == dnnl_u8 || dt == dnnl_s4 || dt == dnnl_u4 ||
           dt == dnnl_s64;
}

bool pt_dt_is_graph_type(dnnl_data_type_t dt) {
    switch (dt) {
        case dnnl_data_type_undef:
        case dnnl_f16:
        case dnnl_bf16:
        case dnnl_f32:
        case dnnl_s32:
        case dnnl_s8:
        case dnnl_u8:
        case dnnl_boolean:
        case dnnl_f8_e5m2:
        case dnnl_f8_e4m3:
        case dnnl_s4:
        case dnnl_u4:
        case dnnl_s64: return true;
        default: return false;
    }
}

/* ---- narrow floating-point formats --------------------------------------- */

/* Magnitude code (exponent field << mb | mantissa) of the finite, non-negative
 * f32 value `a` rounded (RNE) into a format with `mb` mantissa bits and
 * exponent bias `bias`, subnormals included.  No overflow handling: a result
 * beyond the format's largest exponent is returned as is for the caller to
 * check.  Scaling by powers of two is exact, so the only rounding is
 * nearbyintf's. */
static uint32_t minifloat_code(float a, int mb, int bias) {
    if (a == 0.f) return 0;
    int ex;
    (void)frexpf(a, &ex);
    int e = ex - 1; /* a in [2^e, 2^(e+1)) */
    const int emin = 1 - bias;
    if (e < emin) e = emin; /* subnormal range: fixed quantum 2^(emin-mb) */
    float q = nearbyintf(ldexpf(a, mb - e)); /* significand incl. hidden bit */
    /* (e + bias) << mb plus the fraction; also right for subnormals (field 0
     * when q < 2^mb) and for a rounding carry into the next binade. */
    return ((uint32_t)(e + bias) << mb) + (uint32_t)q - (1u << mb);
}

float pt_bf16_to_f32(uint16_t v) { return pt_bf16_bits_to_f32(v); }

uint16_t pt_f32_to_bf16(float f) { return pt_bf16_bits_rne(f); }

float pt_f16_to_f32(uint16_t v) {
    uint32_t sign = (uint32_t)(v & 0x8000u) << 16;
    uint32_t exp = (v >> 10) & 0x1fu;
    uint32_t man = v & 0x3ffu;
    if (exp == 0x1f) return f32_from_bits(sign | 0x7f800000u | (man << 13));
    if (exp == 0) {
        float m = ldexpf((float)man, -24); /* subnormal (or zero), exact */
        return sign ? -m : m;
    }
    return f32_from_bits(sign | ((exp + 112u) << 23) | (man << 13));
}

uint16_t pt_f32_to_f16(float f) {
    uint32_t u = f32_bits(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((a >> 13) & 0x3ffu)); /* quiet NaN */
    if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* >= 65520 rounds to inf */
    if (a >= 0x38800000u) {                                    /* f16 normal range */
        uint32_t r = a - (112u << 23);                          /* rebias 127 -> 15 */
        r += 0xfffu + ((r >> 13) & 1u);
        return (uint16_t)(sign | (r >> 13));
    }
    /* f16 subnormal or zero: quantum 2^-24 (f32 subnormals round to 0). */
    float q = nearbyintf(f32_from_bits(a) * 0x1p24f);
    return (uint16_t)(sign | (uint16_t)q);
}

float pt_e5m2_to_f32(uint8_t v) { return pt_f16_to_f32((uint16_t)((uint16_t)v << 8)); }

uint8_t pt_f32_to_e5m2(float f) {
    uint16_t h = pt_f32_to_f16(f);
    uint16_t sign = h & 0x8000u, mag = h & 0x7fffu;
    if (mag > 0x7c00u) return (uint8_t)((sign >> 8) | 0x7eu); /* quiet NaN */
    /* RNE on the f16 bit pattern (e5m2 is its upper byte); overflow -> inf. */
    mag = (uint16_t)(mag + 0x7fu + ((mag >> 8) & 1u));
    return (uint8_t)((sign | mag) >> 8);
}

float pt_e4m3_to_f32(uint8_t v) {
    uint32_t exp = (v >> 3) & 0xfu, man = v & 7u;
    float m;
    if (exp == 0xf && man == 7) m = NAN;
    else if (exp == 0) m = ldexpf((float)man, -9);
    else m = ldexpf((float)(8u + man), (int)exp - 10);
    return (v & 0x80u) ? -m : m;
}

uint8_t pt_f32_to_e4m3(float f) {
    uint16_t h = pt_f32_to_f16(f);
    uint8_t sign = (uint8_t)((h >> 8) & 0x80u);
    uint16_t mag = h & 0x7fffu;
    if (mag > 0x5f40u) return (uint8_t)(sign | 0x7fu); /* > 464, inf, NaN -> NaN */
    /* (448, 464] rounds to 448 (the tie 464 goes to the even code 0x7e). */
    return (uint8_t)(sign | minifloat_code(pt_f16_to_f32(mag), 3, 7));
}

float pt_e8m0_to_f32(uint8_t v) {
    if (v == 0xff) return NAN;
    return ldexpf(1.f, (int)v - 127);
}

/* e8m0 has no sign, zero or inf: keep the f32 exponent field (the magnitude
 * rounded down to a power of two); inf and NaN become the NaN code. */
uint8_t pt_f32_to_e8m0(float f) { return (uint8_t)((f32_bits(f) >> 23) & 0xffu); }

float pt_f4e2m1_to_f32(uint8_t nibble) {
    static const float mag[8] = {0.f, 0.5f, 1.f, 1.5f, 2.f, 3.f, 4.f, 6.f};
    float m = mag[nibble & 7u];
    return (nibble & 8u) ? -m : m;
}

/* No inf/NaN in the format: RNE, magnitudes saturate at 6, NaN -> +6 (0x7). */
uint8_t pt_f32_to_f4e2m1(float f) {
    if (isnan(f)) return 0x7;
    uint8_t sign = signbit(f) ? 0x8 : 0x0;
    float a = fabsf(f);
    if (a >= 6.f) return (uint8_t)(sign | 0x7);
    uint32_t code = minifloat_code(a, 1, 1);
    if (code > 7) code = 7;
    return (uint8_t)(sign | code);
}

/* f4_e3m0 (deprecated upstream, not a graph type): bias 3, no mantissa;
 * magnitudes {0, 0.25, 0.5, 1, 2, 4, 8, 16}; saturating like f4_e2m1. */
static float f4e3m0_to_f32(uint8_t nibble) {
    uint32_t e = nibble & 7u;
    float m = e ? ldexpf(1.f, (int)e - 3) : 0.f;
    return (nibble & 8u) ? -m : m;
}
static uint8_t f32_to_f4e3m0(float f) {
    if (isnan(f)) return 0x7;
    uint8_t sign = signbit(f) ? 0x8 : 0x0;
    float a = fabsf(f);
    if (a >= 16.f) return (uint8_t)(sign | 0x7);
    uint32_t code = minifloat_code(a, 0, 3);
    if (code > 7) code = 7;
    return (uint8_t)(sign | code);
}

/* ---- integer conversions ------------------------------------------------- */

/* NaN -> 0; otherwise clamped to [lo, hi] and rounded to nearest even. */
static float saturate_rne(float f, float lo, float hi) {
    if (isnan(f)) return 0.f;
    f = f < lo ? lo : (f > hi ? hi : f);
    return nearbyintf(f);
}

int8_t pt_f32_to_s8(float f) { return (int8_t)saturate_rne(f, -128.f, 127.f); }
uint8_t pt_f32_to_u8(float f) { return (uint8_t)saturate_rne(f, 0.f, 255.f); }
/* 2147483520 is the largest f32 below 2^31. */
int32_t pt_f32_to_s32(float f) { return (int32_t)saturate_rne(f, -2147483648.f, 2147483520.f); }

int64_t pt_f64_to_s64(double f) {
    if (isnan(f)) return 0;
    if (f < -9223372036854775808.0) return INT64_MIN;
    if (f >= 9223372036854775808.0) return INT64_MAX;
    return (int64_t)rint(f);
}

static int32_t f64_to_s32(double f) {
    if (isnan(f)) return 0;
    f = f < -2147483648.0 ? -2147483648.0 : (f > 2147483647.0 ? 2147483647.0 : f);
    return (int32_t)rint(f);
}

int8_t pt_f32_to_s4(float f) { return (int8_t)saturate_rne(f, -8.f, 7.f); }
uint8_t pt_f32_to_u4(float f) { return (uint8_t)saturate_rne(f, 0.f, 15.f); }

/* ---- element access ------------------------------------------------------ */

static void store_nibble(void *base, int64_t k, uint8_t v) {
    uint8_t *p = (uint8_t *)base + (k >> 1);
    if (k & 1) *p = (uint8_t)((*p & 0x0fu) | (uint8_t)((v & 0xfu) << 4));
    else *p = (uint8_t)((*p & 0xf0u) | (v & 0xfu));
}

float pt_load_f32(const void *base, dnnl_data_type_t dt, int64_t k) {
    switch (dt) {
        case dnnl_f32: return ((const float *)base)[k];
        case dnnl_bf16: return pt_bf16_to_f32(((const uint16_t *)base)[k]);
        case dnnl_f16: return pt_f16_to_f32(((const uint16_t *)base)[k]);
        case dnnl_s32: return (float)((const int32_t *)base)[k];
        case dnnl_s8: return (float)((const int8_t *)base)[k];
        case dnnl_u8: return (float)((const uint8_t *)base)[k];
        case dnnl_f64: return (float)((const double *)base)[k];
        case dnnl_boolean: return ((const uint8_t *)base)[k] != 0 ? 1.f : 0.f;
        case dnnl_f8_e5m2: return pt_e5m2_to_f32(((const uint8_t *)base)[k]);
        case dnnl_f8_e4m3: return pt_e4m3_to_f32(((const uint8_t *)base)[k]);
        case dnnl_s4:
        case dnnl_u4: return (float)pt_int4_value(pt_nibble_at(base, k), dt == dnnl_s4);
        case dnnl_e8m0: return pt_e8m0_to_f32(((const uint8_t *)base)[k]);
        case dnnl_f4_e2m1: return pt_f4e2m1_to_f32(pt_nibble_at(base, k));
        case dnnl_f4_e3m0: return f4e3m0_to_f32(pt_nibble_at(base, k));
        case dnnl_s64: return (float)((const int64_t *)base)[k];
        default: return 0.f;
    }
}

double pt_load_f64(const void *base, dnnl_data_type_t dt, int64_t k) {
    switch (dt) {
        case dnnl_f64: return ((const double *)base)[k];
        case dnnl_s32: return (double)((const int32_t *)base)[k];
        case dnnl_s64: return (double)((const int64_t *)base)[k];
        default: return (double)pt_load_f32(base, dt, k);
    }
}

void pt_store_f32(void *base, dnnl_data_type_t dt, int64_t k, float v) {
    switch (dt) {
        case dnnl_f32: ((float *)base)[k] = v; break;
        case dnnl_bf16: ((uint16_t *)base)[k] = pt_f32_to_bf16(v); break;
        case dnnl_f16: ((uint16_t *)base)[k] = pt_f32_to_f16(v); break;
        case dnnl_s32: ((int32_t *)base)[k] = pt_f32_to_s32(v); break;
        case dnnl_s8: ((int8_t *)base)[k] = pt_f32_to_s8(v); break;
        case dnnl_u8: ((uint8_t *)base)[k] = pt_f32_to_u8(v); break;
        case dnnl_f64: ((double *)base)[k] = (double)v; break;
        case dnnl_boolean: ((uint8_t *)base)[k] = v != 0.f ? 1 : 0; break; /* NaN -> true */
        case dnnl_f8_e5m2: ((uint8_t *)base)[k] = pt_f32_to_e5m2(v); break;
        case dnnl_f8_e4m3: ((uint8_t *)base)[k] = pt_f32_to_e4m3(v); break;
        case dnnl_s4: store_nibble(base, k, (uint8_t)pt_f32_to_s4(v)); break;
        case dnnl_u4: store_nibble(base, k, pt_f32_to_u4(v)); break;
        case dnnl_e8m0: ((uint8_t *)base)[k] = pt_f32_to_e8m0(v); break;
        case dnnl_f4_e2m1: store_nibble(base, k, pt_f32_to_f4e2m1(v)); break;
        case dnnl_f4_e3m0: store_nibble(base, k, f32_to_f4e3m0(v)); break;
        case dnnl_s64: ((int64_t *)base)[k] = pt_f64_to_s64((double)v); break;
        default: break;
    }
}

void pt_store_f64(void *base, dnnl_data_type_t dt, int64_t k, double v) {
    switch (dt) {
        case dnnl_f64: ((double *)base)[k] = v; break;
        case dnnl_s32: ((int32_t *)base)[k] = f64_to_s32(v); break;
        case dnnl_s64: ((int64_t *)base)[k] = pt_f64_to_s64(v); break;
        case dnnl_boolean: ((uint8_t *)base)[k] = v != 0.0 ? 1 : 0; break;
        default: pt_store_f32(base, dt, k, (float)v); break;
    }
}

/* Types whose values f64 carries without loss for the purpose of a copy
 * between two of them (s64 beyond 2^53 is copied bitwise when types match). */
static bool wide_type(dnnl_data_type_t dt) {
    return dt == dnnl_s32 || dt == dnnl_s64 || dt == dnnl_f64;
}

void pt_convert_dense(const void *src, dnnl_data_type_t sdt, void *dst, dnnl_data_type_t ddt,
                      int64_t n) {
    if (n <= 0) return;
    if (sdt == ddt) {
        if (pt_dt_bits(sdt) == 4 && (n & 1)) {
            /* Keep the other nibble of the last destination byte. */
            size_t full = (size_t)(n >> 1);
            memmove(dst, src, full);
            store_nibble(dst, n - 1, pt_nibble_at(src, n - 1));
        } else {
            memmove(dst, src, pt_dt_bytes(sdt, n));
        }
        return;
    }
    if (sdt == dnnl_f32 && ddt == dnnl_bf16) {
        const float *s = (const float *)src;
        uint16_t *d = (uint16_t *)dst;
        for (int64_t i = 0; i < n; ++i) d[i] = pt_f32_to_bf16(s[i]);
    } else if (sdt == dnnl_f32 && ddt == dnnl_f16) {
        const float *s = (const float *)src;
        uint16_t *d = (uint16_t *)dst;
        for (int64_t i = 0; i < n; ++i) d[i] = pt_f32_to_f16(s[i]);
    } else if (sdt == dnnl_bf16 && ddt == dnnl_f32) {
        const uint16_t *s = (const uint16_t *)src;
        float *d = (float *)dst;
        for (int64_t i = 0; i < n; ++i) d[i] = pt_bf16_to_f32(s[i]);
    } else if (sdt == dnnl_f16 && ddt == dnnl_f32) {
        const uint16_t *s = (const uint16_t *)src;
        float *d = (float *)dst;
        for (int64_t i = 0; i < n; ++i) d[i] = pt_f16_to_f32(s[i]);
    } else if (wide_type(sdt) && wide_type(ddt)) {
        for (int64_t i = 0; i < n; ++i) pt_store_f64(dst, ddt, i, pt_load_f64(src, sdt, i));
    } else {
        for (int64_t i = 0; i < n; ++i) pt_store_f32(dst, ddt, i, pt_load_f32(src, sdt, i));
    }
}
