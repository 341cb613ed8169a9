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

#include "ir/dtype.h"
#include "ir/dtype_round.h"
#include "runtime/cpu.h"

/* A block of 8 / 4-bit K or V rows for the decode path, as stored (seed
 * 002): row j is data + j·ld bytes, s8 / u8 or s4 / u4 (low nibble first);
 * its columns [g·run, (g+1)·run) share the scale sc[j·nruns + g] and zero
 * point zp[j·nruns + g] (zp NULL: 0).  Dequantized value: (q - zp)·sc. */
typedef struct {
    const void *data;
    int64_t ld;
    int bits, is_signed;
    int64_t run, nruns;
    const float *sc, *zp;
} pt_sdpa_qrows;

/* The column order the 4-bit block operations use for the f32 vector they
 * pair with the rows: within each chunk of 32 columns, the 16 even columns
 * (low nibbles) first, then the 16 odd ones.  Position of column c. */
static inline int64_t sd_pair_split_pos(int64_t c) {
    const int64_t k = c & 31;
    return (c - k) + (k >> 1) + ((k & 1) << 4);
}

/* The longest row the block operations take (the portable bodies stage a
 * dequantized row on the stack). */
#define SD_QROWS_MAX_N 4096

/* Whether the block operations take a block of n columns of these rows:
 * 4-bit: n and run multiples of 32; 8-bit: multiples of 16. */
static inline int sd_qrows_supported(int bits, int64_t n, int64_t run) {
    const int64_t w = bits == 4 ? 32 : 16;
    return (bits == 4 || bits == 8) && n > 0 && n <= SD_QROWS_MAX_N && n % w == 0 && run % w == 0 && n % run == 0;
}

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
    /* x[i] = x[i] + a[i], a f32, bf16 bits or f16 bits. */
    void (*add_f32)(float *x, const float *a, int64_t n);
    void (*add_bf16)(float *x, const uint16_t *a, int64_t n);
    void (*add_f16)(float *x, const uint16_t *a, int64_t n);
    /* x[i] = other where (cond[i] != 0) != keep_true (1-byte conditions). */
    void (*select_u8)(float *x, const uint8_t *cond, int64_t n, float other, int keep_true);
    /* out[j] = Σ_d x[d]·rows[j·ld + d] for j < nrows (lane-wise partial sums). */
    void (*dots)(const float *x, int64_t n, const float *rows, int64_t nrows, int64_t ld, float *out);
    /* y[i] = y[i] + a·x[i]. */
    void (*axpy)(float *y, const float *x, int64_t n, float a);
    /* out[i] = q[i] as f32, q s8 or u8. */
    void (*widen_s8)(const int8_t *q, int64_t n, float *out);
    void (*widen_u8)(const uint8_t *q, int64_t n, float *out);
    /* out[2i], out[2i+1] = low, high nibble of b[i] for i < npairs, as s4
     * (sign-extended) or u4. */
    void (*widen_4bit)(const uint8_t *b, int64_t npairs, int is_signed, float *out);
    /* x[i] = (x[i] - zp[i / run])·scale[i / run]. */
    void (*sub_mul_runs)(float *x, int64_t n, int64_t run, const float *zp, const float *scale);
    /* Decode over 8-bit rows, dequantised in registers (seed 002): for j <
     * nrows, row q_j = rows + j·ld (bytes; s8 when is_signed, else u8) with
     * per-run parameters sc / zp + j·nruns:
     *   out[j] = Σ_g sc[g]·Σ_{i in run g} x[i]·(q_j[i] - zp[g]). */
    void (*dots_q8)(const float *x, int64_t n, const void *rows, int is_signed, int64_t nrows, int64_t ld,
                    int64_t run, const float *sc, const float *zp, float *out);
    /* y[i] = y[i] + a·sc[i / run]·(q[i] - zp[i / run]), q s8 / u8. */
    void (*axpy_q8)(float *y, const void *q, int is_signed, int64_t n, int64_t run, float a, const float *sc,
                    const float *zp);
    /* Decode over a block of rows (sd_qrows_supported(k->bits, n, k->run)),
     * dequantized in registers: out[j] = Σ_i x[i]·row_j[i] for j < nrows.
     * For 4-bit rows x is in pair-split order (sd_pair_split_pos). */
    void (*dots_q)(const float *x, int64_t n, const pt_sdpa_qrows *k, int64_t nrows, float *out);
    /* y[i] += Σ_j p[j]·row_j[i] over j < nrows, rows with p[j] == 0 skipped;
     * for 4-bit rows y is in pair-split order. */
    void (*axpys_q)(float *y, int64_t n, const pt_sdpa_qrows *v, int64_t nrows, const float *p);
    /* Decode over 16-bit float rows widened in registers: row j at rows +
     * j·ld (elements), bf16 bits, or f16 bits when is_f16.
     * out[j] = Σ_i x[i]·row_j[i]; y[i] += Σ_j p[j]·row_j[i] (p[j] == 0 skipped). */
    void (*dots_h)(const float *x, int64_t n, const uint16_t *rows, int is_f16, int64_t nrows, int64_t ld,
                   float *out);
    void (*axpys_h)(float *y, int64_t n, const uint16_t *rows, int is_f16, int64_t nrows, int64_t ld,
                    const float *p);
    /* Outer product into bf16 rows: row k < nk at dst + k·ld (elements)
     * gets bf16(f_k·x[e]) for e < n, f_k = a[k] (rounded to bf16 first when
     * round_a), each product rounded to nearest even as ir/dtype_round.h
     * converts f32 (NaN made quiet). */
    void (*outer_bf16)(uint16_t *dst, int64_t ld, const float *a, int round_a, int64_t nk, const float *x, int64_t n);
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

/* f16 bits to f32 (exact), without branches so that loops vectorize. */
static inline float sd_f16_bits_to_f32(uint16_t h) {
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    const float sub = (float)m * 5.9604644775390625e-8f; /* m · 2^-24: subnormals and zero */
    uint32_t subbits, bits;
    memcpy(&subbits, &sub, sizeof subbits);
    bits = e == 31 ? 0x7f800000u | (m << 13) : e == 0 ? subbits : ((e + 112u) << 23) | (m << 13);
    bits |= sign;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* An ISA file built with F16C defines SD_ROWS_F16C before including this
 * header: f16 widening by vcvtph2ps (exact, as the bit manipulation) and
 * f16 rounding by a vcvtps2ph / vcvtph2ps round trip (nearest even,
 * subnormals and overflow to infinity as pt_round_f16; NaN kept as it is). */
#if defined(SD_ROWS_F16C) && defined(__AVX512F__)
#include <immintrin.h>
/* 16 lanes a step, the tail masked (the AVX-512 row). */
static inline void sd_rows_round_f16(float *x, int64_t n) {
    for (int64_t c = 0; c < n; c += 16) {
        const __mmask16 k = n - c >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - c)) - 1u);
        const __m512 v = _mm512_maskz_loadu_ps(k, x + c);
        const __m512 r = _mm512_cvtph_ps(_mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        _mm512_mask_storeu_ps(x + c, k, _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), v));
    }
}
#elif defined(SD_ROWS_F16C)
#include <immintrin.h>
static inline void sd_rows_round_f16(float *x, int64_t n) {
    int64_t c = 0;
    for (; c + 8 <= n; c += 8) {
        const __m256 v = _mm256_loadu_ps(x + c);
        const __m256 r = _mm256_cvtph_ps(_mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        _mm256_storeu_ps(x + c, _mm256_blendv_ps(r, v, _mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
    }
    for (; c < n; ++c) x[c] = pt_round_f16(x[c]);
}
#else
static inline void sd_rows_round_f16(float *x, int64_t n) {
    for (int64_t c = 0; c < n; ++c) x[c] = pt_round_f16(x[c]);
}
#endif

#ifdef SD_ROWS_F16C
static inline void sd_rows_add_f16(float *x, const uint16_t *a, int64_t n) {
    int64_t c = 0;
    for (; c + 8 <= n; c += 8)
        _mm256_storeu_ps(x + c, _mm256_add_ps(_mm256_loadu_ps(x + c),
                                              _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(a + c)))));
    for (; c < n; ++c) x[c] = x[c] + _cvtsh_ss(a[c]);
}
#else
static inline void sd_rows_add_f16(float *x, const uint16_t *a, int64_t n) {
    for (int64_t c = 0; c < n; ++c) x[c] = x[c] + sd_f16_bits_to_f32(a[c]);
}
#endif

static inline void sd_rows_select_u8(float *x, const uint8_t *cond, int64_t n, float other, int keep_true) {
    for (int64_t c = 0; c < n; ++c) x[c] = (cond[c] != 0) == (keep_true != 0) ? x[c] : other;
}

static inline void sd_rows_dots(const float *x, int64_t n, const float *rows, int64_t nrows, int64_t ld,
                                float *out) {
    enum { L = 16 }; /* independent partial sums: the loop vectorizes without reassociation */
    for (int64_t j = 0; j < nrows; ++j) {
        const float *r = rows + j * ld;
        float part[L] = {0};
        int64_t d = 0;
        for (; d + L <= n; d += L)
            for (int l = 0; l < L; ++l) part[l] = part[l] + x[d + l] * r[d + l];
        for (int l = 0; d + l < n; ++l) part[l] = part[l] + x[d + l] * r[d + l];
        float s = 0.f;
        for (int l = 0; l < L; ++l) s += part[l];
        out[j] = s;
    }
}

static inline void sd_rows_axpy(float *y, const float *x, int64_t n, float a) {
    for (int64_t i = 0; i < n; ++i) y[i] = y[i] + a * x[i];
}

static inline void sd_rows_widen_s8(const int8_t *q, int64_t n, float *out) {
    for (int64_t i = 0; i < n; ++i) out[i] = (float)q[i];
}

static inline void sd_rows_widen_u8(const uint8_t *q, int64_t n, float *out) {
    for (int64_t i = 0; i < n; ++i) out[i] = (float)q[i];
}

static inline void sd_rows_widen_4bit(const uint8_t *b, int64_t npairs, int is_signed, float *out) {
    const int flip = is_signed ? 8 : 0;
    for (int64_t i = 0; i < npairs; ++i) {
        out[2 * i] = (float)(((b[i] & 15) ^ flip) - flip);
        out[2 * i + 1] = (float)(((b[i] >> 4) ^ flip) - flip);
    }
}

static inline void sd_rows_sub_mul_runs(float *x, int64_t n, int64_t run, const float *zp, const float *scale) {
    for (int64_t j = 0, g = 0; j < n; j += run, ++g) {
        const int64_t e = j + run < n ? j + run : n;
        const float z = zp[g], s = scale[g];
        for (int64_t d = j; d < e; ++d) x[d] = (x[d] - z) * s;
    }
}

static inline void sd_rows_dots_q8(const float *x, int64_t n, const void *rows, int is_signed, int64_t nrows,
                                   int64_t ld, int64_t run, const float *sc, const float *zp, float *out) {
    enum { L = 16 };
    const int64_t nruns = (n + run - 1) / run;
    for (int64_t j = 0; j < nrows; ++j) {
        const int8_t *qs = (const int8_t *)rows + j * ld;
        const uint8_t *qu = (const uint8_t *)rows + j * ld;
        const float *scj = sc + j * nruns, *zpj = zp + j * nruns;
        float total = 0.f;
        for (int64_t g = 0, i0 = 0; i0 < n; ++g, i0 += run) {
            const int64_t e = i0 + run < n ? i0 + run : n;
            float part[L] = {0};
            const float z = zpj[g];
            int64_t i = i0;
            if (is_signed) {
                for (; i + L <= e; i += L)
                    for (int l = 0; l < L; ++l) part[l] = part[l] + x[i + l] * ((float)qs[i + l] - z);
                for (int l = 0; i + l < e; ++l) part[l] = part[l] + x[i + l] * ((float)qs[i + l] - z);
            } else {
                for (; i + L <= e; i += L)
                    for (int l = 0; l < L; ++l) part[l] = part[l] + x[i + l] * ((float)qu[i + l] - z);
                for (int l = 0; i + l < e; ++l) part[l] = part[l] + x[i + l] * ((float)qu[i + l] - z);
            }
            float s = 0.f;
            for (int l = 0; l < L; ++l) s += part[l];
            total += s * scj[g];
        }
        out[j] = total;
    }
}

static inline void sd_rows_axpy_q8(float *y, const void *q, int is_signed, int64_t n, int64_t run, float a,
                                   const float *sc, const float *zp) {
    const int8_t *qs = (const int8_t *)q;
    const uint8_t *qu = (const uint8_t *)q;
    for (int64_t i0 = 0, g = 0; i0 < n; i0 += run, ++g) {
        const int64_t e = i0 + run < n ? i0 + run : n;
        const float m = a * sc[g], z = zp[g];
        if (is_signed)
            for (int64_t i = i0; i < e; ++i) y[i] = y[i] + m * ((float)qs[i] - z);
        else
            for (int64_t i = i0; i < e; ++i) y[i] = y[i] + m * ((float)qu[i] - z);
    }
}

/* Element i of chunk position `pos` (pair-split order) of a 4-bit row: the
 * byte is pos's index within its 16, the nibble its half. */
static inline float sd_rows_q4_at(const uint8_t *row, int64_t pos, int is_signed) {
    const int64_t c0 = pos & ~(int64_t)31, k = pos & 31;
    const uint8_t b = row[c0 / 2 + (k & 15)];
    return (float)pt_int4_value(k < 16 ? (uint8_t)(b & 15) : (uint8_t)(b >> 4), is_signed != 0);
}

static inline float sd_rows_q8_at(const void *row, int64_t i, int is_signed) {
    return is_signed ? (float)((const int8_t *)row)[i] : (float)((const uint8_t *)row)[i];
}

/* Row j's n dequantized values (4-bit: in pair-split order), the width
 * branch taken once per run. */
static inline void sd_rows_q_dequant(const pt_sdpa_qrows *k, int64_t j, float *v) {
    const uint8_t *row = (const uint8_t *)k->data + j * k->ld;
    for (int64_t g = 0; g < k->nruns; ++g) {
        const float s = k->sc[j * k->nruns + g], z = k->zp ? k->zp[j * k->nruns + g] : 0.f;
        const int64_t b = g * k->run, e = b + k->run;
        if (k->bits == 4)
            for (int64_t i = b; i < e; ++i) v[i] = (sd_rows_q4_at(row, i, k->is_signed) - z) * s;
        else
            for (int64_t i = b; i < e; ++i) v[i] = (sd_rows_q8_at(row, i, k->is_signed) - z) * s;
    }
}

static inline void sd_rows_dots_q(const float *x, int64_t n, const pt_sdpa_qrows *k, int64_t nrows, float *out) {
    float v[SD_QROWS_MAX_N];
    for (int64_t j = 0; j < nrows; ++j) {
        sd_rows_q_dequant(k, j, v);
        sd_rows_dots(x, n, v, 1, n, &out[j]);
    }
}

static inline void sd_rows_axpys_q(float *y, int64_t n, const pt_sdpa_qrows *v, int64_t nrows, const float *p) {
    float w[SD_QROWS_MAX_N];
    for (int64_t j = 0; j < nrows; ++j) {
        if (p[j] == 0.f) continue;
        sd_rows_q_dequant(v, j, w);
        sd_rows_axpy(y, w, n, p[j]);
    }
}

static inline float sd_rows_h_at(const uint16_t *row, int64_t i, int is_f16) {
    return is_f16 ? sd_f16_bits_to_f32(row[i]) : pt_bf16_bits_to_f32(row[i]);
}

static inline void sd_rows_dots_h(const float *x, int64_t n, const uint16_t *rows, int is_f16, int64_t nrows,
                                  int64_t ld, float *out) {
    enum { L = 16 };
    for (int64_t j = 0; j < nrows; ++j) {
        const uint16_t *r = rows + j * ld;
        float part[L] = {0};
        int64_t d = 0;
        for (; d + L <= n; d += L)
            for (int l = 0; l < L; ++l) part[l] = part[l] + x[d + l] * sd_rows_h_at(r, d + l, is_f16);
        for (int l = 0; d + l < n; ++l) part[l] = part[l] + x[d + l] * sd_rows_h_at(r, d + l, is_f16);
        float t = 0.f;
        for (int l = 0; l < L; ++l) t += part[l];
        out[j] = t;
    }
}

static inline void sd_rows_axpys_h(float *y, int64_t n, const uint16_t *rows, int is_f16, int64_t nrows, int64_t ld,
                                   const float *p) {
    for (int64_t j = 0; j < nrows; ++j) {
        if (p[j] == 0.f) continue;
        const uint16_t *r = rows + j * ld;
        for (int64_t i = 0; i < n; ++i) y[i] = y[i] + p[j] * sd_rows_h_at(r, i, is_f16);
    }
}

static inline void sd_rows_outer_bf16(uint16_t *dst, int64_t ld, const float *a, int round_a, int64_t nk,
                                      const float *x, int64_t n) {
    for (int64_t k = 0; k < nk; ++k) {
        const float f = round_a ? pt_round_bf16(a[k]) : a[k];
        uint16_t *d = dst + k * ld;
        for (int64_t e = 0; e < n; ++e) d[e] = pt_bf16_bits_rne(f * x[e]);
    }
}

/* dots_q / axpys_q / dots_h / axpys_h of a row from the portable bodies
 * (ISA files without their own). */
#define PT_SDPA_ROWS_PORTABLE_Q(suffix)                                                                         \
    static void widen_4bit_##suffix(const uint8_t *b, int64_t np, int sgn, float *out) {                      \
        sd_rows_widen_4bit(b, np, sgn, out);                                                                  \
    }                                                                                                         \
    static void dots_q_##suffix(const float *x, int64_t n, const pt_sdpa_qrows *k, int64_t nrows, float *out) { \
        sd_rows_dots_q(x, n, k, nrows, out);                                                                  \
    }                                                                                                         \
    static void axpys_q_##suffix(float *y, int64_t n, const pt_sdpa_qrows *v, int64_t nrows, const float *p) { \
        sd_rows_axpys_q(y, n, v, nrows, p);                                                                   \
    }                                                                                                         \
    static void dots_h_##suffix(const float *x, int64_t n, const uint16_t *rows, int is_f16, int64_t nrows,    \
                                int64_t ld, float *out) {                                                     \
        sd_rows_dots_h(x, n, rows, is_f16, nrows, ld, out);                                                   \
    }                                                                                                         \
    static void axpys_h_##suffix(float *y, int64_t n, const uint16_t *rows, int is_f16, int64_t nrows,         \
                                 int64_t ld, const float *p) {                                                \
        sd_rows_axpys_h(y, n, rows, is_f16, nrows, ld, p);                                                    \
    }

/* The table row of one ISA level from the bodies above (used once per file;
 * widen_4bit_<suffix>, dots_q_<suffix>, axpys_q_<suffix>, dots_h_<suffix>, axpys_h_<suffix> defined before it, by
 * PT_SDPA_ROWS_PORTABLE_Q or by the ISA file itself). */
#define PT_SDPA_ROWS_DEFINE(suffix, isa_name, isa_level)                                                       \
    static void round_bf16_##suffix(float *x, int64_t n) { sd_rows_round_bf16(x, n); }                        \
    static void round_f16_##suffix(float *x, int64_t n) { sd_rows_round_f16(x, n); }                          \
    static void round_int_##suffix(float *x, int64_t n, float lo, float hi) { sd_rows_round_int(x, n, lo, hi); } \
    static void mul_add_##suffix(float *x, int64_t n, float m, float a) { sd_rows_mul_add(x, n, m, a); }      \
    static void sub_mul_##suffix(float *x, int64_t n, float s, float m) { sd_rows_sub_mul(x, n, s, m); }      \
    static void add_f32_##suffix(float *x, const float *a, int64_t n) { sd_rows_add_f32(x, a, n); }           \
    static void add_bf16_##suffix(float *x, const uint16_t *a, int64_t n) { sd_rows_add_bf16(x, a, n); }      \
    static void add_f16_##suffix(float *x, const uint16_t *a, int64_t n) { sd_rows_add_f16(x, a, n); }        \
    static void select_u8_##suffix(float *x, const uint8_t *cond, int64_t n, float other, int keep) {        \
        sd_rows_select_u8(x, cond, n, other, keep);                                                           \
    }                                                                                                         \
    static void dots_##suffix(const float *x, int64_t n, const float *rows, int64_t nrows, int64_t ld, float *out) { \
        sd_rows_dots(x, n, rows, nrows, ld, out);                                                             \
    }                                                                                                         \
    static void axpy_##suffix(float *y, const float *x, int64_t n, float a) { sd_rows_axpy(y, x, n, a); }     \
    static void widen_s8_##suffix(const int8_t *q, int64_t n, float *out) { sd_rows_widen_s8(q, n, out); }    \
    static void widen_u8_##suffix(const uint8_t *q, int64_t n, float *out) { sd_rows_widen_u8(q, n, out); }   \
    static void sub_mul_runs_##suffix(float *x, int64_t n, int64_t run, const float *zp, const float *sc) {   \
        sd_rows_sub_mul_runs(x, n, run, zp, sc);                                                              \
    }                                                                                                         \
    static void dots_q8_##suffix(const float *x, int64_t n, const void *rows, int sgn, int64_t nrows, int64_t ld, \
                                 int64_t run, const float *sc, const float *zp, float *out) {                \
        sd_rows_dots_q8(x, n, rows, sgn, nrows, ld, run, sc, zp, out);                                        \
    }                                                                                                         \
    static void axpy_q8_##suffix(float *y, const void *q, int sgn, int64_t n, int64_t run, float a,            \
                                 const float *sc, const float *zp) {                                          \
        sd_rows_axpy_q8(y, q, sgn, n, run, a, sc, zp);                                                        \
    }                                                                                                         \
    static void outer_bf16_##suffix(uint16_t *dst, int64_t ld, const float *a, int round_a, int64_t nk,        \
                                    const float *x, int64_t n) {                                              \
        sd_rows_outer_bf16(dst, ld, a, round_a, nk, x, n);                                                    \
    }                                                                                                         \
    const pt_sdpa_row_ops pt_sdpa_rows_##suffix = {                                                           \
        isa_name,         isa_level,          round_bf16_##suffix, round_f16_##suffix, round_int_##suffix,      \
        mul_add_##suffix, sub_mul_##suffix,   add_f32_##suffix,    add_bf16_##suffix,  add_f16_##suffix,        \
        select_u8_##suffix, dots_##suffix,                                                                     \
        axpy_##suffix,    widen_s8_##suffix,  widen_u8_##suffix,   widen_4bit_##suffix, sub_mul_runs_##suffix, \
        dots_q8_##suffix, axpy_q8_##suffix,   dots_q_##suffix,     axpys_q_##suffix,    dots_h_##suffix,           \
        axpys_h_##suffix, outer_bf16_##suffix}

#endif
