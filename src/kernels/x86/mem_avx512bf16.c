/* AVX-512 row of kernels/mem/mem_rows.h (mem_rows_avx512.h) for CPUs with
 * AVX512_BF16: vcvtneps2bf16 rounds to nearest even and quiets NaN as the
 * reference does, in one instruction, but reads subnormal inputs as zero;
 * a vector holding one (rare; vfpclassps finds them in one step) takes the
 * integer steps instead. */
#include "kernels/x86/avx512_bf16_round.h"
#include "kernels/x86/mem_rows_avx512.h"

#define PT_MEM_SUBNORMAL 0x20 /* vfpclassps category: denormal, either sign */

PT_MEM_INLINE __m256i pt_mem_bf16x16(__m512 v) {
    if (__builtin_expect(_mm512_fpclass_ps_mask(v, PT_MEM_SUBNORMAL) == 0, 1)) return (__m256i)_mm512_cvtneps_pbh(v);
    return pt_avx512_bf16_round(v);
}

/* Two vectors into one: vcvtne2ps2bf16 puts its second operand in the low half. */
PT_MEM_INLINE __m512i pt_mem_bf16x32(__m512 a, __m512 b) {
    if (__builtin_expect((_mm512_fpclass_ps_mask(a, PT_MEM_SUBNORMAL) | _mm512_fpclass_ps_mask(b, PT_MEM_SUBNORMAL)) == 0, 1))
        return (__m512i)_mm512_cvtne2ps_pbh(b, a);
    return _mm512_inserti64x4(_mm512_castsi256_si512(pt_avx512_bf16_round(a)), pt_avx512_bf16_round(b), 1);
}

const pt_mem_rows pt_mem_rows_avx512bf16 = {
    .name = "avx512bf16", .level = PT_ISA_AVX512, .features = PT_CPU_AVX512_BF16, PT_MEM_ROW_OPS};
