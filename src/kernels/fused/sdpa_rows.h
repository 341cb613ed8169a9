/* Row operations of the fused SDPA forward kernel's score chain, P's and
 * O's transforms (sdpa_run.c): one table row per ISA level, chosen once
 * (pt_sdpa_rows()), as for the GEMM and vector kernels.  The loop bodies are
 * the portable inline functions below; each ISA file (kernels/x86/
 * sdpa_rows_<isa>.c) compiles them with its own flags, so the compiler
 * vectorizes them with that level's registers.  C11 mode keeps a·b + c two
 * roundings (no contraction), as the reference computes it.  Pure functions,
 * any n >= 0. */
#ifndef PARTITA_KERNELS_FUSED_SDPA_ROWS_H
#define PARTITA_KERNELS_FUSED_SDPA_ROWS_H

#include <stdint.h>
#include <string.h>

#include "ir/dtype_round.h"
#include "runtime/cpu.h"

typedef struct {
    const char *name;
    pt_isa_level level;
    /* x[i] = bf16(x[i]) (round to nearest even, NaN kept). */
    void (*round_bf16)(float *x, int64_t n);
    /* x[i] = f16(x[i]). */
    void (*round_f16)(float *x, int64_t n);
    /* x[i] rounded to an integer of [lo, hi] as an s8 / u8 store does (NaN
     * to 0, saturated, ties to even); |lo|, |hi| < 2^22. */
    void (*round_int)(float *x, int64_t n, float lo, float hi);
    /* x[i] = x[i]·m + a. */
    void (*mul_add)(float *x, int64_t n, float m, float a);
    /* x[i] = (x[i] - s)·m. */
    void (*sub_mul)(float *x, int64_t n, float s, float m);
    /* x[i] = x[i] + a[i], a f32 or bf16 bits. */
    void (*add_f32)(float *x, const float *a, int64_t n);
    void (*add_bf16)(float *x, const uint16_t *a, int64_t n);
} pt_sdpa_row_ops;

const pt_sdpa_row_ops *pt_sdpa_rows(void);

extern const pt_sdpa_row_ops pt_sdpa_rows_generic; /* sdpa_rows.c */
extern const pt_sdpa_row_ops pt_sdpa_rows_avx2;    /* kernels/x86/sdpa_rows_avx2.c */
extern const pt_sdpa_row_ops pt_sdpa_rows_avx512;  /* kernels/x86/sdpa_rows_avx512.c */

static inline void sd_rows_round_bf16(float *x, int64_t n) {
    for (int64_t c = 0; c < n; ++c) {
        /* pt_round_bf16 without its early return: NaN selected unchanged. */
        uint32_t u, r;
        memcpy(&u, &x[c], sizeof u);
        r = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
        r = (u & 0x7fffffffu) > 0x7f800000u ? u : r;
        memcpy(&x[c], &r, sizeof r);
    }
}

static inline void sd_rows_round_f16(float *x, int64_t n) {
    for (int64_t c = 0; c < n; ++c) x[c] = pt_round_f16(x[c]);
}

static inline void sd_rows_round_int(float *x, int64_t n, float lo, float hi) {
    /* Adding and subtracting 1.5·2^23 rounds every value of the clamped
     * range to an integer, ties to even. */
    const float magic = 12582912.f;
    for (int64_t c = 0; c < n; ++c) {
        float v = x[c] != x[c] ? 0.f : x[c];
        v = v < lo ? lo : v > hi ? hi : v;
        x[c] = (v + magic) - magic;
    }
}

static inline void sd_rows_mul_add(float *x, int64_t n, float m, float a) {
    for (int64_t c = 0; c < n; ++c) x[c] = x[c] * m + a;
}

static inline void sd_rows_sub_mul(float *x, int64_t n, float s, float m) {
    for (int64_t c = 0; c < n; ++c) x[c] = (x[c] - s) * m;
}

static inline void sd_rows_add_f32(float *x, const float *a, int64_t n) {
    for (int64_t c = 0; c < n; ++c) x[c] = x[c] + a[c];
}

static inline void sd_rows_add_bf16(float *x, const uint16_t *a, int64_t n) {
    for (int64_t c = 0; c < n; ++c) x[c] = x[c] + pt_bf16_bits_to_f32(a[c]);
}

/* The table row of one ISA level from the bodies above (used once per file). */
#define PT_SDPA_ROWS_DEFINE(suffix, isa_name, isa_level)                                                       \
    static void round_bf16_##suffix(float *x, int64_t n) { sd_rows_round_bf16(x, n); }                        \
    static void round_f16_##suffix(float *x, int64_t n) { sd_rows_round_f16(x, n); }                          \
    static void round_int_##suffix(float *x, int64_t n, float lo, float hi) { sd_rows_round_int(x, n, lo, hi); } \
    static void mul_add_##suffix(float *x, int64_t n, float m, float a) { sd_rows_mul_add(x, n, m, a); }      \
    static void sub_mul_##suffix(float *x, int64_t n, float s, float m) { sd_rows_sub_mul(x, n, s, m); }      \
    static void add_f32_##suffix(float *x, const float *a, int64_t n) { sd_rows_add_f32(x, a, n); }           \
    static void add_bf16_##suffix(float *x, const uint16_t *a, int64_t n) { sd_rows_add_bf16(x, a, n); }      \
    const pt_sdpa_row_ops pt_sdpa_rows_##suffix = {isa_name,          isa_level,         round_bf16_##suffix, \
                                                   round_f16_##suffix, round_int_##suffix, mul_add_##suffix,   \
                                                   sub_mul_##suffix,   add_f32_##suffix,  add_bf16_##suffix}

#endif
