/* f32 -> bf16 at the AVX-512 level with integer steps (not vcvtneps2bf16,
 * which flushes subnormals): the reference's nearest-even carry, NaN made
 * quiet.  Shared by the vector and memory-bound rows; include only from
 * files built with the AVX-512 flags. */
#ifndef PARTITA_KERNELS_X86_AVX512_BF16_ROUND_H
#define PARTITA_KERNELS_X86_AVX512_BF16_ROUND_H

#include <immintrin.h>

static inline __attribute__((always_inline)) __m256i pt_avx512_bf16_round(__m512 v) {
    const __m512i u = _mm512_castps_si512(v);
    const __mmask16 nan =
        _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff)), _mm512_set1_epi32(0x7f800000));
    const __m512i odd = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    __m512i r = _mm512_srli_epi32(_mm512_add_epi32(u, _mm512_add_epi32(odd, _mm512_set1_epi32(0x7fff))), 16);
    r = _mm512_mask_mov_epi32(r, nan, _mm512_or_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(0x40)));
    return _mm512_cvtepi32_epi16(r);
}

#endif
