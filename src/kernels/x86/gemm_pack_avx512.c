/* AVX-512 packing of f32 / bf16 operands (see gemm_pack_x86.h).  Rows with
 * contiguous k go through a 16 x 16 transpose of 32-bit lanes (an f32, or a
 * bf16 k pair), so both reads and writes stay whole vectors. */
#include <immintrin.h>
#include <stdint.h>

#include "kernels/x86/avx512_transpose.h"
#include "kernels/x86/gemm_pack_x86.h"

/* k rows ahead that the rows-contiguous packers prefetch. */
#define PF_K 16
/* Lines ahead along each row that the k-contiguous packers prefetch. */
#define PF_LINES 4

static inline __mmask16 mask16(int64_t n) { return n >= 16 ? (__mmask16)0xffff : n <= 0 ? 0 : (__mmask16)((1u << n) - 1); }
static inline __mmask32 mask32(int64_t n) { return n >= 32 ? (__mmask32)0xffffffffu : n <= 0 ? 0 : (__mmask32)((1u << n) - 1); }

/* f32 bits rounded to nearest even at bit 16 (the bf16 in the top half);
 * NaN keeps its payload with the quiet bit set, as pt_f32_to_bf16. */
static inline __m512i round_bf16_hi(__m512i u) {
    const __m512i one = _mm512_set1_epi32(1), bias = _mm512_set1_epi32(0x7fff);
    __m512i r = _mm512_add_epi32(u, _mm512_add_epi32(bias, _mm512_and_si512(_mm512_srli_epi32(u, 16), one)));
    __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff)),
                                            _mm512_set1_epi32(0x7f800000));
    return _mm512_mask_or_epi32(r, nan, u, _mm512_set1_epi32(0x00400000));
}

/* Rows g .. g + 15 of an F32 strip [kc][R] from a pointer per row (k
 * contiguous; NULL, or past n, zeros), each row fetched a few lines on. */
static inline void pack_f32_group(const float *const *rows, int n, int R, int g, int64_t kc, float *dst) {
    const __mmask16 store = mask16(R - g);
    for (int64_t k0 = 0; k0 < kc; k0 += 16) {
        const __mmask16 kmask = mask16(kc - k0);
        __m512i r[16];
        for (int i = 0; i < 16; ++i) {
            const float *row = i < n ? rows[i] : NULL;
            if (row) _mm_prefetch((const char *)(row + k0 + 16 * PF_LINES), _MM_HINT_T0);
            r[i] = row ? _mm512_maskz_loadu_epi32(kmask, row + k0) : _mm512_setzero_si512();
        }
        pt_avx512_transpose16(r);
        const int kw = kc - k0 < 16 ? (int)(kc - k0) : 16;
        for (int j = 0; j < kw; ++j) _mm512_mask_storeu_epi32(dst + (k0 + j) * R + g, store, r[j]);
    }
}

void pt_gemm_pack_f32_kcontig_avx512(const float *src, int64_t s_row, int rows_in, int R, int64_t kc, float *dst) {
    for (int g = 0; g < R; g += 16) {
        const int n = rows_in - g < 16 ? rows_in - g : 16;
        const float *rows[16];
        for (int i = 0; i < n; ++i) rows[i] = src + (g + i) * s_row;
        pack_f32_group(rows, n, R, g, kc, dst);
    }
}

void pt_gemm_pack_f32_rows_avx512(const float *const *rows, int rows_in, int R, int64_t kc, float *dst) {
    for (int g = 0; g < R; g += 16) pack_f32_group(rows + g, rows_in - g < 16 ? rows_in - g : 16, R, g, kc, dst);
}

/* The same from f16 rows, widened exactly by vcvtph2ps on load. */
void pt_gemm_pack_f16_kcontig_avx512(const uint16_t *src, int64_t s_row, int rows_in, int R, int64_t kc, float *dst) {
    for (int g = 0; g < R; g += 16) {
        const int rows = rows_in - g < 16 ? rows_in - g : 16;
        const __mmask16 store = mask16(R - g);
        for (int64_t k0 = 0; k0 < kc; k0 += 16) {
            const __mmask16 kmask = mask16(kc - k0);
            __m512i r[16];
            for (int i = 0; i < 16; ++i)
                r[i] = i < rows ? _mm512_castps_si512(_mm512_cvtph_ps(
                                      _mm256_maskz_loadu_epi16(kmask, src + (g + i) * s_row + k0)))
                                : _mm512_setzero_si512();
            pt_avx512_transpose16(r);
            const int kw = kc - k0 < 16 ? (int)(kc - k0) : 16;
            for (int j = 0; j < kw; ++j) _mm512_mask_storeu_epi32(dst + (k0 + j) * R + g, store, r[j]);
        }
    }
}

void pt_gemm_pack_bf16_kcontig_avx512(const void *src, bool src_bf16, int64_t s_row, int rows_in, int R, int64_t kc,
                                      uint16_t *dst) {
    /* Word 2i+1 of (lo, hi): the bf16 halves of 32 rounded f32, in k order. */
    const __m512i odd_words = _mm512_set_epi16(63, 61, 59, 57, 55, 53, 51, 49, 47, 45, 43, 41, 39, 37, 35, 33, 31,
                                               29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
    const int64_t pairs = (kc + 1) / 2;
    for (int g = 0; g < R; g += 16) {
        const int rows = rows_in - g < 16 ? rows_in - g : 16;
        const __mmask16 store = mask16(R - g);
        for (int64_t k0 = 0; k0 < kc; k0 += 32) {
            __m512i r[16];
            for (int i = 0; i < 16; ++i) {
                if (i >= rows) {
                    r[i] = _mm512_setzero_si512();
                } else if (src_bf16) {
                    _mm_prefetch((const char *)((const uint16_t *)src + (g + i) * s_row + k0 + 32 * PF_LINES),
                                 _MM_HINT_T0);
                    r[i] = _mm512_maskz_loadu_epi16(mask32(kc - k0), (const uint16_t *)src + (g + i) * s_row + k0);
                } else {
                    const float *row = (const float *)src + (g + i) * s_row + k0;
                    __m512i lo = round_bf16_hi(_mm512_maskz_loadu_epi32(mask16(kc - k0), row));
                    __m512i hi = round_bf16_hi(_mm512_maskz_loadu_epi32(mask16(kc - k0 - 16), row + 16));
                    r[i] = _mm512_permutex2var_epi16(lo, odd_words, hi);
                }
            }
            pt_avx512_transpose16(r);
            const int64_t p0 = k0 / 2, pw = pairs - p0 < 16 ? pairs - p0 : 16;
            for (int j = 0; j < pw; ++j) _mm512_mask_storeu_epi32((uint32_t *)dst + (p0 + j) * R + g, store, r[j]);
        }
    }
}

void pt_gemm_pack_bf16_rcontig_avx512(const void *src, bool src_bf16, int64_t s_k, int rows_in, int R, int64_t kc,
                                      uint16_t *dst) {
    const __m512i hi_half = _mm512_set1_epi32((int32_t)0xffff0000u);
    if (src_bf16 && R % 32 == 0) {
        /* 32 columns a step (pt_avx512_pair_rows16); rows a page apart
         * are prefetched a few pairs on. */
        const int strips = rows_in > R ? (rows_in + R - 1) / R : 1;
        const int64_t strip_words = R * ((kc + 1) & ~(int64_t)1);
        for (int64_t k = 0; k < kc; k += 2) {
            const bool has_odd = k + 1 < kc;
            const uint16_t *p = (const uint16_t *)src + k * s_k;
            if (k + PF_K < kc)
                for (int g = 0; g < rows_in; g += 32) {
                    _mm_prefetch((const char *)(p + PF_K * s_k + g), _MM_HINT_T0);
                    _mm_prefetch((const char *)(p + (PF_K + 1) * s_k + g), _MM_HINT_T0);
                }
            for (int t = 0; t < strips; ++t) {
                uint32_t *d = (uint32_t *)(dst + t * strip_words) + (k / 2) * R;
                const uint16_t *pt = p + t * R;
                for (int g = 0; g < R; g += 32) {
                    const __mmask32 load = mask32(rows_in - t * R - g), odd_load = has_odd ? load : 0;
                    const __m512i even = _mm512_maskz_loadu_epi16(load, pt + g);
                    const __m512i odd = _mm512_maskz_loadu_epi16(odd_load, pt + s_k + g);
                    __m512i lo, hi;
                    pt_avx512_pair_rows16(even, odd, &lo, &hi);
                    _mm512_storeu_si512(d + g, lo);
                    _mm512_storeu_si512(d + g + 16, hi);
                }
            }
        }
        return;
    }
    for (int64_t k = 0; k < kc; k += 2) {
        const bool has_odd = k + 1 < kc;
        uint32_t *d = (uint32_t *)dst + (k / 2) * R;
        for (int g = 0; g < R; g += 16) {
            const __mmask16 load = mask16(rows_in - g), odd_load = has_odd ? load : 0;
            __m512i pair;
            if (src_bf16) {
                const uint16_t *p = (const uint16_t *)src + k * s_k + g;
                __m512i even = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(load, p));
                __m512i odd = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(odd_load, p + s_k));
                pair = _mm512_or_si512(even, _mm512_slli_epi32(odd, 16));
            } else {
                const float *p = (const float *)src + k * s_k + g;
                __m512i even = round_bf16_hi(_mm512_maskz_loadu_epi32(load, p));
                __m512i odd = round_bf16_hi(_mm512_maskz_loadu_epi32(odd_load, p + s_k));
                pair = _mm512_or_si512(_mm512_srli_epi32(even, 16), _mm512_and_si512(odd, hi_half));
            }
            _mm512_mask_storeu_epi32(d + g, mask16(R - g), pair);
        }
    }
}

void pt_gemm_pack_f16_rcontig_avx512(const uint16_t *src, int64_t s_k, int rows_in, int R, int64_t kc, float *dst) {
    const int strips = rows_in > R ? (rows_in + R - 1) / R : 1;
    for (int64_t k = 0; k < kc; ++k) {
        const uint16_t *in = src + k * s_k;
        for (int t = 0; t < strips; ++t) {
            float *out = dst + t * R * kc + k * R;
            const int rows_t = rows_in - t * R;
            for (int g = 0; g < R; g += 16)
                _mm512_mask_storeu_ps(out + g, mask16(R - g),
                                      _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(mask16(rows_t - g), in + t * R + g)));
        }
    }
}

void pt_gemm_pack_f32_rcontig_avx512(const float *src, int64_t s_k, int rows_in, int R, int64_t kc, float *dst) {
    const int strips = rows_in > R ? (rows_in + R - 1) / R : 1;
    for (int64_t k = 0; k < kc; ++k) {
        const float *in = src + k * s_k;
        /* Rows of B lie a page or more apart, out of the hardware
         * prefetcher's reach: fetch a few k ahead (packing 40 % faster at 1024^3). */
        if (k + PF_K < kc)
            for (int g = 0; g < rows_in; g += 16) _mm_prefetch((const char *)(in + PF_K * s_k + g), _MM_HINT_T0);
        for (int t = 0; t < strips; ++t) {
            float *out = dst + t * R * kc + k * R;
            const int rows_t = rows_in - t * R;
            /* Lanes past rows_t load as zero, which is the padding. */
            for (int g = 0; g < R; g += 16)
                _mm512_mask_storeu_ps(out + g, mask16(R - g),
                                      _mm512_maskz_loadu_ps(mask16(rows_t - g), in + t * R + g));
        }
    }
}
