/* exp on 8 floats at the AVX2 + FMA level, written once for the vector
 * table's row (vec_avx2.c) and the SDPA column operations
 * (sdpa_panel_avx2.c), so that both give the same values bit for bit.
 * Without vscalefps, 2^n is built in the exponent field: n is clamped to
 * the normal range and results below it are made by a second factor.
 * Include only from files built with the AVX2 flags. */
#ifndef PARTITA_KERNELS_X86_MATH_AVX2_H
#define PARTITA_KERNELS_X86_MATH_AVX2_H

#include <immintrin.h>
#include <math.h>

#include "kernels/x86/vec_exp_x86.h"

#define PT_AVX2_MATH_INLINE static inline __attribute__((always_inline))

/* 2^n for integral n in [-126, 127]. */
PT_AVX2_MATH_INLINE __m256 pt_avx2_pow2i(__m256 n) {
    const __m256i e = _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127));
    return _mm256_castsi256_ps(_mm256_slli_epi32(e, 23));
}

/* exp of an x inside [PT_EXP_MIN, PT_EXP_MAX] or NaN (vec_exp_x86.h):
 * n·ln2 + r, Taylor to degree 6, 2^n = 2^n1 · 2^n2 with both factors
 * normal (n in [-150, 128]). */
PT_AVX2_MATH_INLINE __m256 pt_avx2_exp_in_range(__m256 x) {
    const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(PT_EXP_LOG2E)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(PT_EXP_LN2_HI), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(PT_EXP_LN2_LO), r);
    __m256 p = _mm256_set1_ps(PT_EXP_C6);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(PT_EXP_C5));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(PT_EXP_C4));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(PT_EXP_C3));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(PT_EXP_C2));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.f));
    const __m256 n1 = _mm256_max_ps(_mm256_min_ps(n, _mm256_set1_ps(127.f)), _mm256_set1_ps(-126.f));
    const __m256 n2 = _mm256_sub_ps(n, n1);
    return _mm256_mul_ps(_mm256_mul_ps(p, pt_avx2_pow2i(n1)), pt_avx2_pow2i(n2));
}

/* exp(x): 0 below `lo`, +inf above PT_EXP_MAX, NaN kept. */
PT_AVX2_MATH_INLINE __m256 pt_avx2_exp_above(__m256 x, float lo_value) {
    const __m256 lo = _mm256_set1_ps(lo_value);
    const __m256 zero = _mm256_cmp_ps(x, lo, _CMP_LT_OQ);
    const __m256 big = _mm256_cmp_ps(x, _mm256_set1_ps(PT_EXP_MAX), _CMP_GT_OQ);
    /* min/max return their second operand when one is NaN: x goes second so
     * NaN passes.  Lanes below lo compute exp(0) and are zeroed after:
     * scaled down to 0 they would underflow, which Intel cores handle by a
     * microcode assist per instruction (mem_math_avx512.h). */
    x = _mm256_andnot_ps(zero, _mm256_max_ps(lo, _mm256_min_ps(_mm256_set1_ps(PT_EXP_MAX), x)));
    const __m256 y = _mm256_blendv_ps(pt_avx2_exp_in_range(x), _mm256_set1_ps(INFINITY), big);
    return _mm256_andnot_ps(zero, y);
}

/* exp(x) with gradual underflow: 0 below PT_EXP_MIN. */
PT_AVX2_MATH_INLINE __m256 pt_avx2_exp(__m256 x) { return pt_avx2_exp_above(x, PT_EXP_MIN); }

/* exp(x) for softmax terms: 0 below PT_EXP_NORMAL_MIN (vec_exp_x86.h). */
PT_AVX2_MATH_INLINE __m256 pt_avx2_exp_terms(__m256 x) { return pt_avx2_exp_above(x, PT_EXP_NORMAL_MIN); }

/* pt_avx2_exp_terms for x <= 0 or NaN: without the upper clamp. */
PT_AVX2_MATH_INLINE __m256 pt_avx2_exp_nonpos(__m256 x) {
    const __m256 zero = _mm256_cmp_ps(x, _mm256_set1_ps(PT_EXP_NORMAL_MIN), _CMP_LT_OQ);
    return _mm256_andnot_ps(zero, pt_avx2_exp_in_range(_mm256_andnot_ps(zero, x)));
}

#endif
