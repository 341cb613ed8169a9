/* AVX-512 row of kernels/mem/mem_rows.h (mem_rows_avx512.h), for CPUs
 * without AVX512_BF16: bf16 rounded with integer steps (the reference's
 * nearest-even carry, NaN made quiet). */
#include "kernels/x86/mem_rows_avx512.h"

PT_MEM_INLINE __m256i pt_mem_bf16x16(__m512 v) {
    const __m512i u = _mm512_castps_si512(v);
    const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff)), _mm512_set1_epi32(0x7f800000));
    const __m512i odd = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    __m512i r = _mm512_srli_epi32(_mm512_add_epi32(u, _mm512_add_epi32(odd, _mm512_set1_epi32(0x7fff))), 16);
    r = _mm512_mask_mov_epi32(r, nan, _mm512_or_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(0x40)));
    return _mm512_cvtepi32_epi16(r);
}

const pt_mem_rows pt_mem_rows_avx512 = {.name = "avx512", .level = PT_ISA_AVX512, .features = 0, PT_MEM_ROW_OPS};
