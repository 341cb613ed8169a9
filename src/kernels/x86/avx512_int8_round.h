/* f32 -> s8 / u8 at the AVX-512 level as ir/dtype.c converts: clamped to
 * the range, rounded to nearest even (the default MXCSR mode), NaN -> 0.
 * Shared by the vector and memory-bound rows; include only from files built
 * with the AVX-512 flags. */
#ifndef PARTITA_KERNELS_X86_AVX512_INT8_ROUND_H
#define PARTITA_KERNELS_X86_AVX512_INT8_ROUND_H

#include <immintrin.h>
#include <stdbool.h>

static inline __attribute__((always_inline)) __m128i pt_avx512_to_int8(__m512 v, bool is_signed) {
    const __mmask16 ord = _mm512_cmp_ps_mask(v, v, _CMP_ORD_Q);
    v = _mm512_min_ps(_mm512_max_ps(v, _mm512_set1_ps(is_signed ? -128.f : 0.f)),
                      _mm512_set1_ps(is_signed ? 127.f : 255.f));
    const __m512i q = _mm512_maskz_cvtps_epi32(ord, v);
    return is_signed ? _mm512_cvtsepi32_epi8(q) : _mm512_cvtusepi32_epi8(q);
}

#endif
