/* Data-type facts and every scalar conversion at its edges (docs/numerics.md):
 * NaN, ±inf, saturation, RNE ties, subnormals, f8 two-step rounding, 4-bit
 * nibble packing, boolean. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "ir/dtype.h"
#include "test_util.h"

typedef union {
    uint32_t u;
    float f;
} f32_pun;
static float fbits(uint32_t u) { return ((f32_pun){.u = u}).f; }
static uint32_t bitsf(float f) { return ((f32_pun){.f = f}).u; }

/* Codes below n (but those with all `skip` bits set: NaN / inf) that do not
 * survive decode + encode. */
static int roundtrip_failures(uint32_t n, uint32_t skip, float (*dec)(uint32_t), uint32_t (*enc)(float)) {
    int bad = 0;
    for (uint32_t c = 0; c < n; ++c) {
        if ((c & skip) == skip) continue;
        bad += enc(dec(c)) != c;
    }
    return bad;
}
static float dec_f16(uint32_t c) { return pt_f16_to_f32((uint16_t)c); }
static uint32_t enc_f16(float f) { return pt_f32_to_f16(f); }
static float dec_e4m3(uint32_t c) { return pt_e4m3_to_f32((uint8_t)c); }
static uint32_t enc_e4m3(float f) { return pt_f32_to_e4m3(f); }

static void test_facts(void) {
    CHECK_EQ_INT(pt_dt_bits(dnnl_f32), 32);
    CHECK_EQ_INT(pt_dt_bits(dnnl_bf16), 16);
    CHECK_EQ_INT(pt_dt_bits(dnnl_boolean), 8);
    CHECK_EQ_INT(pt_dt_bits(dnnl_s4), 4);
    CHECK_EQ_INT(pt_dt_bits(dnnl_f4_e2m1), 4);
    CHECK_EQ_INT(pt_dt_bits(dnnl_s64), 64);
    CHECK_EQ_INT(pt_dt_bits(dnnl_data_type_undef), 0);
    CHECK_EQ_INT(pt_dt_bytes(dnnl_u4, 3), 2);
    CHECK_EQ_INT(pt_dt_bytes(dnnl_u4, 4), 2);
    CHECK_EQ_INT(pt_dt_bytes(dnnl_f32, 3), 12);
    CHECK_EQ_INT(pt_dt_bytes(dnnl_f16, 0), 0);

    static const dnnl_data_type_t all[] = {
            dnnl_f32,     dnnl_bf16, dnnl_f16, dnnl_s32,  dnnl_s8,      dnnl_u8,
            dnnl_f64,     dnnl_boolean, dnnl_f8_e5m2, dnnl_f8_e4m3, dnnl_s4, dnnl_u4,
            dnnl_e8m0,    dnnl_f4_e2m1, dnnl_f4_e3m0, dnnl_s64, dnnl_data_type_undef};
    static const char *names[] = {"f32",     "bf16", "f16",  "s32",     "s8",      "u8",
                                  "f64",     "boolean", "f8_e5m2", "f8_e4m3", "s4", "u4",
                                  "e8m0",    "f4_e2m1", "f4_e3m0", "s64", "undef"};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) {
        CHECK(strcmp(pt_dt_name(all[i]), names[i]) == 0);
        CHECK_EQ_INT(pt_dt_from_name(names[i]), all[i]);
    }
    CHECK(strcmp(pt_dt_name((dnnl_data_type_t)99), "undef") == 0);
    CHECK_EQ_INT(pt_dt_from_name("bool"), dnnl_data_type_undef);
    CHECK_EQ_INT(pt_dt_from_name(NULL), dnnl_data_type_undef);

    CHECK(pt_dt_is_float(dnnl_f8_e4m3) && pt_dt_is_float(dnnl_f64) && !pt_dt_is_float(dnnl_s8));
    CHECK(pt_dt_is_int(dnnl_u4) && pt_dt_is_int(dnnl_s64) && !pt_dt_is_int(dnnl_boolean));
    CHECK(pt_dt_is_graph_type(dnnl_boolean) && pt_dt_is_graph_type(dnnl_s64));
    CHECK(!pt_dt_is_graph_type(dnnl_f64) && !pt_dt_is_graph_type(dnnl_e8m0) &&
          !pt_dt_is_graph_type(dnnl_f4_e2m1));
}

static void test_bf16(void) {
    CHECK_EQ_INT(pt_f32_to_bf16(1.f), 0x3F80);
    CHECK_EQ_INT(pt_f32_to_bf16(fbits(0x3F808000)), 0x3F80); /* tie -> even */
    CHECK_EQ_INT(pt_f32_to_bf16(fbits(0x3F818000)), 0x3F82); /* tie -> even */
    CHECK_EQ_INT(pt_f32_to_bf16(fbits(0x3F808001)), 0x3F81); /* above the tie */
    CHECK_EQ_INT(pt_f32_to_bf16(fbits(0xBF807FFF)), 0xBF80); /* below the tie */
    CHECK_EQ_INT(pt_f32_to_bf16(INFINITY), 0x7F80);
    CHECK_EQ_INT(pt_f32_to_bf16(-INFINITY), 0xFF80);
    CHECK_EQ_INT(pt_f32_to_bf16(fbits(0x7F7FFFFF)), 0x7F80); /* overflow -> inf */
    CHECK_EQ_INT(pt_f32_to_bf16(fbits(0x7F7F8000)), 0x7F80); /* tie with odd 0x7F7F -> inf */
    CHECK_EQ_INT(pt_f32_to_bf16(fbits(0x7F7F7FFF)), 0x7F7F);
    CHECK_EQ_INT(pt_f32_to_bf16(fbits(0x7FC00000)), 0x7FC0);
    CHECK_EQ_INT(pt_f32_to_bf16(fbits(0x7F800001)), 0x7FC0); /* signalling -> quiet */
    CHECK_EQ_INT(pt_f32_to_bf16(fbits(0xFF800001)), 0xFFC0); /* sign kept */
    CHECK_EQ_INT(pt_f32_to_bf16(-0.f), 0x8000);
    CHECK(pt_bf16_to_f32(0x3FC0) == 1.5f);
    CHECK(pt_bf16_to_f32(0xFF80) == -INFINITY);
    CHECK(isnan(pt_bf16_to_f32(0x7FC1)));
    CHECK(pt_bf16_to_f32(0x0001) == fbits(0x00010000)); /* subnormal, exact */
}

static void test_f16(void) {
    CHECK_EQ_INT(pt_f32_to_f16(1.f), 0x3C00);
    CHECK_EQ_INT(pt_f32_to_f16(-2.f), 0xC000);
    CHECK_EQ_INT(pt_f32_to_f16(65504.f), 0x7BFF);
    CHECK_EQ_INT(pt_f32_to_f16(65519.f), 0x7BFF);
    CHECK_EQ_INT(pt_f32_to_f16(65520.f), 0x7C00); /* tie with odd max -> inf */
    CHECK_EQ_INT(pt_f32_to_f16(-1e6f), 0xFC00);
    CHECK_EQ_INT(pt_f32_to_f16(INFINITY), 0x7C00);
    CHECK_EQ_INT(pt_f32_to_f16(NAN) & 0x7E00, 0x7E00); /* quiet NaN */
    CHECK((pt_f32_to_f16(-NAN) & 0x8000) != 0);
    CHECK_EQ_INT(pt_f32_to_f16(1.f + 0x1p-11f), 0x3C00);        /* tie -> even */
    CHECK_EQ_INT(pt_f32_to_f16(1.f + 3 * 0x1p-11f), 0x3C02);    /* tie -> even */
    CHECK_EQ_INT(pt_f32_to_f16(1.f + 0x1p-11f + 0x1p-20f), 0x3C01);
    CHECK_EQ_INT(pt_f32_to_f16(0x1p-14f), 0x0400);              /* min normal */
    CHECK_EQ_INT(pt_f32_to_f16(0x1p-24f), 0x0001);              /* min subnormal */
    CHECK_EQ_INT(pt_f32_to_f16(0x1p-25f), 0x0000);              /* tie -> even 0 */
    CHECK_EQ_INT(pt_f32_to_f16(1.5f * 0x1p-25f), 0x0001);
    CHECK_EQ_INT(pt_f32_to_f16(3 * 0x1p-25f), 0x0002);          /* 1.5 ulp tie -> 2 */
    CHECK_EQ_INT(pt_f32_to_f16(1023.5f * 0x1p-24f), 0x0400);    /* rounds up into normals */
    CHECK_EQ_INT(pt_f32_to_f16(1e-40f), 0x0000);                /* f32 subnormal -> 0 */
    CHECK_EQ_INT(pt_f32_to_f16(-1e-40f), 0x8000);
    CHECK(pt_f16_to_f32(0x0001) == 0x1p-24f);
    CHECK(pt_f16_to_f32(0x83FF) == -1023 * 0x1p-24f);
    CHECK(pt_f16_to_f32(0x7BFF) == 65504.f);
    CHECK(pt_f16_to_f32(0xFC00) == -INFINITY);
    CHECK(isnan(pt_f16_to_f32(0x7E00)));
    CHECK(pt_f16_to_f32(0x8000) == 0.f && signbit(pt_f16_to_f32(0x8000)));
    /* every finite f16 survives a round trip */
    CHECK_EQ_INT(roundtrip_failures(0x10000, 0x7C00, dec_f16, enc_f16), 0);
}

static void test_e5m2(void) {
    CHECK_EQ_INT(pt_f32_to_e5m2(1.f), 0x3C);
    CHECK_EQ_INT(pt_f32_to_e5m2(-1.5f), 0xBE);
    CHECK_EQ_INT(pt_f32_to_e5m2(57344.f), 0x7B);   /* max finite */
    CHECK_EQ_INT(pt_f32_to_e5m2(60000.f), 0x7B);   /* below the tie */
    CHECK_EQ_INT(pt_f32_to_e5m2(61440.f), 0x7C);   /* tie with odd max -> inf */
    CHECK_EQ_INT(pt_f32_to_e5m2(1e6f), 0x7C);      /* not saturating */
    CHECK_EQ_INT(pt_f32_to_e5m2(-1e6f), 0xFC);
    CHECK_EQ_INT(pt_f32_to_e5m2(INFINITY), 0x7C);
    CHECK_EQ_INT(pt_f32_to_e5m2(NAN), 0x7E);
    CHECK_EQ_INT(pt_f32_to_e5m2(-NAN), 0xFE);
    CHECK_EQ_INT(pt_f32_to_e5m2(0x1p-16f), 0x01);  /* min subnormal */
    CHECK_EQ_INT(pt_f32_to_e5m2(0x1p-17f), 0x00);  /* tie -> 0 */
    CHECK_EQ_INT(pt_f32_to_e5m2(-0x1p-17f), 0x80);
    CHECK_EQ_INT(pt_f32_to_e5m2(1.125f), 0x3C);    /* tie -> even */
    CHECK_EQ_INT(pt_f32_to_e5m2(1.375f), 0x3E);    /* tie -> even */
    /* two-step rounding: 1.125 + 2^-13 is a tie only after f32 -> f16 */
    CHECK_EQ_INT(pt_f32_to_e5m2(1.125f + 0x1p-13f), 0x3C);
    CHECK(pt_e5m2_to_f32(0x7B) == 57344.f);
    CHECK(pt_e5m2_to_f32(0x7C) == INFINITY);
    CHECK(pt_e5m2_to_f32(0x01) == 0x1p-16f);
    CHECK(isnan(pt_e5m2_to_f32(0x7F)) && isnan(pt_e5m2_to_f32(0xFD)));
}

static void test_e4m3(void) {
    CHECK_EQ_INT(pt_f32_to_e4m3(1.f), 0x38);
    CHECK_EQ_INT(pt_f32_to_e4m3(-2.f), 0xC0);
    CHECK_EQ_INT(pt_f32_to_e4m3(448.f), 0x7E);     /* max finite */
    CHECK_EQ_INT(pt_f32_to_e4m3(456.f), 0x7E);     /* (448, 464] -> 448 */
    CHECK_EQ_INT(pt_f32_to_e4m3(464.f), 0x7E);
    CHECK_EQ_INT(pt_f32_to_e4m3(-464.f), 0xFE);
    CHECK_EQ_INT(pt_f32_to_e4m3(464.125f), 0x7E);  /* f16 rounds the tie to 464 */
    CHECK_EQ_INT(pt_f32_to_e4m3(464.25f), 0x7F);   /* f16 0x5F41 > 0x5F40 -> NaN */
    CHECK_EQ_INT(pt_f32_to_e4m3(480.f), 0x7F);
    CHECK_EQ_INT(pt_f32_to_e4m3(-500.f), 0xFF);
    CHECK_EQ_INT(pt_f32_to_e4m3(INFINITY), 0x7F);  /* no infinities */
    CHECK_EQ_INT(pt_f32_to_e4m3(-INFINITY), 0xFF);
    CHECK_EQ_INT(pt_f32_to_e4m3(NAN), 0x7F);
    CHECK_EQ_INT(pt_f32_to_e4m3(0x1p-9f), 0x01);   /* min subnormal */
    CHECK_EQ_INT(pt_f32_to_e4m3(0x1p-10f), 0x00);  /* <= 2^-10 -> 0 */
    CHECK_EQ_INT(pt_f32_to_e4m3(-0x1p-10f), 0x80);
    CHECK_EQ_INT(pt_f32_to_e4m3(1e-30f), 0x00);
    CHECK_EQ_INT(pt_f32_to_e4m3(1.5f * 0x1p-10f), 0x01);
    CHECK_EQ_INT(pt_f32_to_e4m3(7 * 0x1p-9f), 0x07);      /* max subnormal */
    CHECK_EQ_INT(pt_f32_to_e4m3(7.5f * 0x1p-9f), 0x08);   /* tie -> even (min normal) */
    CHECK_EQ_INT(pt_f32_to_e4m3(0x1p-6f), 0x08);
    CHECK_EQ_INT(pt_f32_to_e4m3(1.0625f), 0x38);          /* tie -> even */
    CHECK_EQ_INT(pt_f32_to_e4m3(1.1875f), 0x3A);          /* tie -> even */
    CHECK_EQ_INT(pt_f32_to_e4m3(1.0625f + 0x1p-14f), 0x38); /* two-step: tie after f16 */
    CHECK_EQ_INT(pt_f32_to_e4m3(1.0625f + 0x1p-10f), 0x39); /* above the tie in f16 too */
    CHECK(pt_e4m3_to_f32(0x7E) == 448.f);
    CHECK(pt_e4m3_to_f32(0xFE) == -448.f);
    CHECK(isnan(pt_e4m3_to_f32(0x7F)) && isnan(pt_e4m3_to_f32(0xFF)));
    CHECK(pt_e4m3_to_f32(0x78) == 256.f); /* exponent 15 with mantissa != 7 is finite */
    CHECK(pt_e4m3_to_f32(0x01) == 0x1p-9f);
    CHECK(pt_e4m3_to_f32(0x08) == 0x1p-6f);
    CHECK(pt_e4m3_to_f32(0x80) == 0.f && signbit(pt_e4m3_to_f32(0x80)));
    /* every non-NaN code survives a round trip */
    CHECK_EQ_INT(roundtrip_failures(256, 0x7F, dec_e4m3, enc_e4m3), 0);
}

static void test_e8m0_f4(void) {
    CHECK(pt_e8m0_to_f32(127) == 1.f);
    CHECK(pt_e8m0_to_f32(128) == 2.f);
    CHECK(pt_e8m0_to_f32(0) == 0x1p-127f);
    CHECK(isnan(pt_e8m0_to_f32(255)));
    CHECK_EQ_INT(pt_f32_to_e8m0(1.f), 127);
    CHECK_EQ_INT(pt_f32_to_e8m0(3.f), 128);   /* rounds down to a power of two */
    CHECK_EQ_INT(pt_f32_to_e8m0(-4.f), 129);  /* sign dropped */
    CHECK_EQ_INT(pt_f32_to_e8m0(INFINITY), 255);
    CHECK_EQ_INT(pt_f32_to_e8m0(NAN), 255);

    static const float mag[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
    for (int c = 0; c < 8; ++c) {
        CHECK(pt_f4e2m1_to_f32((uint8_t)c) == mag[c]);
        CHECK(pt_f4e2m1_to_f32((uint8_t)(c | 8)) == -mag[c]);
        CHECK_EQ_INT(pt_f32_to_f4e2m1(mag[c]), c);
    }
    CHECK_EQ_INT(pt_f32_to_f4e2m1(0.25f), 0); /* ties to even */
    CHECK_EQ_INT(pt_f32_to_f4e2m1(0.75f), 2);
    CHECK_EQ_INT(pt_f32_to_f4e2m1(1.25f), 2);
    CHECK_EQ_INT(pt_f32_to_f4e2m1(1.75f), 4);
    CHECK_EQ_INT(pt_f32_to_f4e2m1(2.5f), 4);
    CHECK_EQ_INT(pt_f32_to_f4e2m1(3.5f), 6);
    CHECK_EQ_INT(pt_f32_to_f4e2m1(5.f), 6);
    CHECK_EQ_INT(pt_f32_to_f4e2m1(5.5f), 7);
    CHECK_EQ_INT(pt_f32_to_f4e2m1(100.f), 7);  /* saturates */
    CHECK_EQ_INT(pt_f32_to_f4e2m1(-100.f), 15);
    CHECK_EQ_INT(pt_f32_to_f4e2m1(INFINITY), 7);
    CHECK_EQ_INT(pt_f32_to_f4e2m1(-0.5f), 9);
    CHECK_EQ_INT(pt_f32_to_f4e2m1(NAN), 7);
}

static void test_int(void) {
    CHECK_EQ_INT(pt_f32_to_s8(127.5f), 127);
    CHECK_EQ_INT(pt_f32_to_s8(-128.5f), -128);
    CHECK_EQ_INT(pt_f32_to_s8(2.5f), 2);
    CHECK_EQ_INT(pt_f32_to_s8(3.5f), 4);
    CHECK_EQ_INT(pt_f32_to_s8(-2.5f), -2);
    CHECK_EQ_INT(pt_f32_to_s8(0.5f), 0);
    CHECK_EQ_INT(pt_f32_to_s8(-0.5f), 0);
    CHECK_EQ_INT(pt_f32_to_s8(NAN), 0);
    CHECK_EQ_INT(pt_f32_to_s8(INFINITY), 127);
    CHECK_EQ_INT(pt_f32_to_s8(-INFINITY), -128);

    CHECK_EQ_INT(pt_f32_to_u8(-1.f), 0);
    CHECK_EQ_INT(pt_f32_to_u8(255.5f), 255);
    CHECK_EQ_INT(pt_f32_to_u8(254.5f), 254);
    CHECK_EQ_INT(pt_f32_to_u8(1.5f), 2);
    CHECK_EQ_INT(pt_f32_to_u8(NAN), 0);
    CHECK_EQ_INT(pt_f32_to_u8(INFINITY), 255);

    CHECK_EQ_INT(pt_f32_to_s32(2147483648.f), 2147483520);
    CHECK_EQ_INT(pt_f32_to_s32(3e9f), 2147483520);
    CHECK_EQ_INT(pt_f32_to_s32(-3e9f), INT32_MIN);
    CHECK_EQ_INT(pt_f32_to_s32(INFINITY), 2147483520);
    CHECK_EQ_INT(pt_f32_to_s32(-INFINITY), INT32_MIN);
    CHECK_EQ_INT(pt_f32_to_s32(NAN), 0);
    CHECK_EQ_INT(pt_f32_to_s32(2.5f), 2);
    CHECK_EQ_INT(pt_f32_to_s32(-3.5f), -4);
    CHECK_EQ_INT(pt_f32_to_s32(16777216.f), 16777216);

    CHECK(pt_f64_to_s64(1e19) == INT64_MAX);
    CHECK(pt_f64_to_s64(-1e19) == INT64_MIN);
    CHECK(pt_f64_to_s64(9223372036854775808.0) == INT64_MAX);
    CHECK(pt_f64_to_s64(-9223372036854775808.0) == INT64_MIN);
    CHECK_EQ_INT(pt_f64_to_s64(2.5), 2);
    CHECK_EQ_INT(pt_f64_to_s64(-5.5), -6);
    CHECK_EQ_INT(pt_f64_to_s64(NAN), 0);

    CHECK_EQ_INT(pt_f32_to_s4(7.5f), 7);
    CHECK_EQ_INT(pt_f32_to_s4(-8.5f), -8);
    CHECK_EQ_INT(pt_f32_to_s4(-7.5f), -8); /* tie -> even */
    CHECK_EQ_INT(pt_f32_to_s4(6.5f), 6);
    CHECK_EQ_INT(pt_f32_to_s4(NAN), 0);
    CHECK_EQ_INT(pt_f32_to_u4(15.5f), 15);
    CHECK_EQ_INT(pt_f32_to_u4(14.5f), 14);
    CHECK_EQ_INT(pt_f32_to_u4(-1.f), 0);
    CHECK_EQ_INT(pt_f32_to_u4(NAN), 0);
}

static void test_access(void) {
    /* nibble order: dense u4 [1,2,3] -> 0x21, 0x03 */
    uint8_t b[2] = {0, 0};
    for (int k = 0; k < 3; ++k) pt_store_f32(b, dnnl_u4, k, (float)(k + 1));
    CHECK_EQ_INT(b[0], 0x21);
    CHECK_EQ_INT(b[1], 0x03);
    for (int k = 0; k < 3; ++k) CHECK(pt_load_f32(b, dnnl_u4, k) == (float)(k + 1));
    /* writes keep the other nibble */
    uint8_t c = 0xAB;
    pt_store_f32(&c, dnnl_u4, 0, 5.f);
    CHECK_EQ_INT(c, 0xA5);
    pt_store_f32(&c, dnnl_u4, 1, 3.f);
    CHECK_EQ_INT(c, 0x35);
    pt_store_f32(&c, dnnl_u4, 1, 99.f); /* saturates to 15 */
    CHECK_EQ_INT(c, 0xF5);
    /* s4: two's complement nibbles */
    uint8_t s = 0;
    pt_store_f32(&s, dnnl_s4, 1, -1.f);
    pt_store_f32(&s, dnnl_s4, 0, -8.f);
    CHECK_EQ_INT(s, 0xF8);
    CHECK(pt_load_f32(&s, dnnl_s4, 0) == -8.f && pt_load_f32(&s, dnnl_s4, 1) == -1.f);
    pt_store_f32(&s, dnnl_s4, 0, 7.f);
    CHECK_EQ_INT(s, 0xF7);
    uint8_t f4 = 0;
    pt_store_f32(&f4, dnnl_f4_e2m1, 1, -6.f);
    CHECK_EQ_INT(f4, 0xF0);
    CHECK(pt_load_f32(&f4, dnnl_f4_e2m1, 1) == -6.f);
    uint8_t e3 = 0;
    pt_store_f32(&e3, dnnl_f4_e3m0, 0, 0.25f);
    pt_store_f32(&e3, dnnl_f4_e3m0, 1, 100.f);
    CHECK_EQ_INT(e3, 0x71);
    CHECK(pt_load_f32(&e3, dnnl_f4_e3m0, 0) == 0.25f && pt_load_f32(&e3, dnnl_f4_e3m0, 1) == 16.f);

    /* boolean: zero -> false, anything else (NaN too) -> true; consumers read non-zero as true */
    uint8_t bo[6];
    const float bv[6] = {0.f, -0.f, NAN, 0.5f, -3.f, INFINITY};
    for (int k = 0; k < 6; ++k) pt_store_f32(bo, dnnl_boolean, k, bv[k]);
    CHECK(bo[0] == 0 && bo[1] == 0 && bo[2] == 1 && bo[3] == 1 && bo[4] == 1 && bo[5] == 1);
    pt_store_f64(bo, dnnl_boolean, 0, NAN);
    CHECK_EQ_INT(bo[0], 1);
    uint8_t raw[2] = {2, 0};
    CHECK(pt_load_f32(raw, dnnl_boolean, 0) == 1.f && pt_load_f32(raw, dnnl_boolean, 1) == 0.f);
    CHECK(pt_load_f64(raw, dnnl_boolean, 0) == 1.0);

    /* s32 / s64 through f64: exact */
    int32_t i32[2] = {INT32_MIN, INT32_MAX};
    CHECK(pt_load_f64(i32, dnnl_s32, 0) == -2147483648.0 && pt_load_f64(i32, dnnl_s32, 1) == 2147483647.0);
    CHECK(pt_load_f32(i32, dnnl_s32, 1) == 2147483648.f); /* s32 -> f32 RNE */
    pt_store_f64(i32, dnnl_s32, 0, 2147483647.0);
    CHECK_EQ_INT(i32[0], INT32_MAX);
    pt_store_f64(i32, dnnl_s32, 0, 1e12);
    CHECK_EQ_INT(i32[0], INT32_MAX);
    pt_store_f64(i32, dnnl_s32, 0, -2.5);
    CHECK_EQ_INT(i32[0], -2);
    pt_store_f64(i32, dnnl_s32, 0, NAN);
    CHECK_EQ_INT(i32[0], 0);
    pt_store_f32(i32, dnnl_s32, 0, 3e9f); /* f32 rule: clamp to 2147483520 */
    CHECK_EQ_INT(i32[0], 2147483520);
    int64_t i64[1] = {9007199254740991LL};
    CHECK(pt_load_f64(i64, dnnl_s64, 0) == 9007199254740991.0);
    pt_store_f64(i64, dnnl_s64, 0, -9007199254740991.0);
    CHECK(i64[0] == -9007199254740991LL);
    pt_store_f32(i64, dnnl_s64, 0, 1.5f);
    CHECK(i64[0] == 2);
    double f64[1];
    pt_store_f32(f64, dnnl_f64, 0, 0.1f);
    CHECK(f64[0] == (double)0.1f);
    CHECK(pt_load_f32(f64, dnnl_f64, 0) == 0.1f);
    /* f8 through load/store */
    uint8_t f8[2];
    pt_store_f32(f8, dnnl_f8_e4m3, 0, 1000.f);
    pt_store_f32(f8, dnnl_f8_e5m2, 1, 1e6f);
    CHECK(f8[0] == 0x7F && f8[1] == 0x7C);
    CHECK(isnan(pt_load_f32(f8, dnnl_f8_e4m3, 0)) && isinf(pt_load_f32(f8, dnnl_f8_e5m2, 1)));
}

static void test_convert_dense(void) {
    float f[5] = {1, 1.00390625f, -0.f, NAN, 3e38f};
    uint16_t bf[5];
    pt_convert_dense(f, dnnl_f32, bf, dnnl_bf16, 5);
    CHECK(bf[0] == 0x3F80 && bf[1] == 0x3F80 && bf[2] == 0x8000 && bf[3] == 0x7FC0 && bf[4] == 0x7F62);
    float back[5];
    pt_convert_dense(bf, dnnl_bf16, back, dnnl_f32, 5);
    CHECK(back[0] == 1.f && back[2] == 0.f && signbit(back[2]) && isnan(back[3]));
    uint16_t h[2];
    float big[2] = {1e5f, -0x1p-24f};
    pt_convert_dense(big, dnnl_f32, h, dnnl_f16, 2);
    CHECK(h[0] == 0x7C00 && h[1] == 0x8001);
    pt_convert_dense(h, dnnl_f16, back, dnnl_f32, 2);
    CHECK(isinf(back[0]) && back[1] == -0x1p-24f);

    int32_t i32[2] = {INT32_MAX, -7};
    int64_t i64[2];
    pt_convert_dense(i32, dnnl_s32, i64, dnnl_s64, 2); /* exact via f64 */
    CHECK(i64[0] == INT32_MAX && i64[1] == -7);
    float sat[2] = {3e9f, NAN};
    pt_convert_dense(sat, dnnl_f32, i32, dnnl_s32, 2);
    CHECK(i32[0] == 2147483520 && i32[1] == 0);

    /* 4-bit: odd count keeps the other nibble of the last byte */
    uint8_t src[2] = {0x21, 0x03}, dst[2] = {0xEE, 0xEE};
    pt_convert_dense(src, dnnl_u4, dst, dnnl_u4, 3);
    CHECK(dst[0] == 0x21 && dst[1] == 0xE3);
    float fv[3];
    pt_convert_dense(src, dnnl_u4, fv, dnnl_f32, 3);
    CHECK(fv[0] == 1 && fv[1] == 2 && fv[2] == 3);
    float in[3] = {-1, 7.6f, -9};
    uint8_t s4[2] = {0, 0xA0};
    pt_convert_dense(in, dnnl_f32, s4, dnnl_s4, 3);
    CHECK(s4[0] == 0x7F && s4[1] == 0xA8); /* -1 -> F, 7.6 -> 7 (sat), -9 -> 8 */
    int8_t s8v[3];
    pt_convert_dense(s4, dnnl_s4, s8v, dnnl_s8, 3);
    CHECK(s8v[0] == -1 && s8v[1] == 7 && s8v[2] == -8);
}

int main(void) {
    test_facts();
    test_bf16();
    test_f16();
    test_e5m2();
    test_e4m3();
    test_e8m0_f4();
    test_int();
    test_access();
    test_convert_dense();
    (void)bitsf;
    return pt_test_summary("test_int_dtype");
}
