/* AVX-512 row of kernels/mem/mem_rows.h (mem_rows_avx512.h), for CPUs
 * without AVX512_BF16: bf16 rounded with integer steps (the reference's
 * nearest-even carry, NaN made quiet). */
#include "kernels/x86/avx512_bf16_round.h"
#include "kernels/x86/mem_rows_avx512.h"

PT_MEM_INLINE __m256i pt_mem_bf16x16(__m512 v) { return pt_avx512_bf16_round(v); }

PT_MEM_INLINE __m512i pt_mem_bf16x32(__m512 a, __m512 b) {
    return _mm512_inserti64x4(_mm512_castsi256_si512(pt_avx512_bf16_round(a)), pt_avx512_bf16_round(b), 1);
}

const pt_mem_rows pt_mem_rows_avx512 = {.name = "avx512", .level = PT_ISA_AVX512, .features = 0, PT_MEM_ROW_OPS};
