/* exp, 1/d and erfc on 16 floats at the AVX-512 level, written once for the
 * vector table's row (vec_avx512.c), the memory-bound rows
 * (mem_rows_avx512.h) and the SDPA column operations (sdpa_panel_avx512.c),
 * so that all give the same values bit for bit.
 * Include only from files built with the AVX-512 flags. */
#ifndef PARTITA_KERNELS_X86_MEM_MATH_AVX512_H
#define PARTITA_KERNELS_X86_MEM_MATH_AVX512_H

#include <immintrin.h>
#include <math.h>

#include "kernels/ref/eltwise_math.h"
#include "kernels/x86/vec_exp_x86.h"

/* Inlined into every loop: a call per vector would cost more than the body. */
#define PT_AVX512_MATH_INLINE static inline __attribute__((always_inline))

/* exp of an x inside [PT_EXP_MIN, PT_EXP_MAX + 1] or NaN (vec_exp_x86.h):
 * n·ln2 + r, Taylor to degree 6, vscalefps for 2^n (overflow to +inf and
 * gradual underflow in one instruction). */
PT_AVX512_MATH_INLINE __m512 pt_avx512_exp_in_range(__m512 x) {
    const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(PT_EXP_LOG2E)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(PT_EXP_LN2_HI), x);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(PT_EXP_LN2_LO), r);
    __m512 p = _mm512_fmadd_ps(_mm512_set1_ps(PT_EXP_C6), r, _mm512_set1_ps(PT_EXP_C5));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(PT_EXP_C4));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(PT_EXP_C3));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(PT_EXP_C2));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.f));
    return _mm512_scalef_ps(p, n);
}

/* exp(x): 0 below PT_EXP_MIN, +inf above PT_EXP_MAX, NaN kept. */
PT_AVX512_MATH_INLINE __m512 pt_avx512_exp(__m512 x) {
    const __m512 lo = _mm512_set1_ps(PT_EXP_MIN);
    const __mmask16 zero = _mm512_cmp_ps_mask(x, lo, _CMP_LT_OQ);
    /* min/max return their second operand when one is NaN: x goes second so NaN passes. */
    x = _mm512_max_ps(lo, _mm512_min_ps(_mm512_set1_ps(PT_EXP_MAX + 1.f), x));
    return _mm512_maskz_mov_ps((__mmask16)~zero, pt_avx512_exp_in_range(x));
}

/* exp(x) for x <= 0 or NaN (a value minus the maximum of its row or
 * column): pt_avx512_exp without its upper clamp, and the zero below
 * PT_EXP_MIN from the clamp itself (exp(PT_EXP_MIN) is below half the
 * smallest subnormal, so vscalefps rounds it to +0): the same values with
 * two instructions fewer. */
PT_AVX512_MATH_INLINE __m512 pt_avx512_exp_nonpos(__m512 x) {
    return pt_avx512_exp_in_range(_mm512_max_ps(_mm512_set1_ps(PT_EXP_MIN), x)); /* NaN (second operand) passes */
}

/* 1/d for d >= 1 or +inf: vrcp14ps and one Newton step (about 2^-27
 * relative) instead of a division, several times slower; 1/inf stays 0. */
PT_AVX512_MATH_INLINE __m512 pt_avx512_recip(__m512 d) {
    const __m512 r0 = _mm512_rcp14_ps(d);
    const __m512 r = _mm512_fmadd_ps(r0, _mm512_fnmadd_ps(d, r0, _mm512_set1_ps(1.f)), r0);
    return _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(d, _mm512_set1_ps(INFINITY), _CMP_EQ_OQ), r0);
}

/* erfc(z) for z >= 0: t·exp(-z² + P(t)), t = 1 / (1 + z/2) (vec_exp_x86.h). */
PT_AVX512_MATH_INLINE __m512 pt_avx512_erfc(__m512 z) {
    const __m512 t = pt_avx512_recip(_mm512_fmadd_ps(z, _mm512_set1_ps(0.5f), _mm512_set1_ps(1.f)));
    __m512 p = _mm512_fmadd_ps(_mm512_set1_ps(PT_ERFC_P9), t, _mm512_set1_ps(PT_ERFC_P8));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(PT_ERFC_P7));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(PT_ERFC_P6));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(PT_ERFC_P5));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(PT_ERFC_P4));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(PT_ERFC_P3));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(PT_ERFC_P2));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(PT_ERFC_P1));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(PT_ERFC_P0));
    return _mm512_mul_ps(t, pt_avx512_exp(_mm512_fnmadd_ps(z, z, p)));
}

/* GELU(x) = x·erfc(-x/√2)/2 through erfc(|z|) (erfc(-z) = 2 - erfc(z)):
 * keeps the relative accuracy for large negative x, where 1 + erf cancels. */
PT_AVX512_MATH_INLINE __m512 pt_avx512_gelu_erfc(__m512 x) {
    const __m512 z = _mm512_mul_ps(x, _mm512_set1_ps(PT_SQRT1_2));
    const __m512 c = pt_avx512_erfc(_mm512_abs_ps(z));
    const __mmask16 pos = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_GE_OQ);
    return _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(0.5f), x), _mm512_mask_sub_ps(c, pos, _mm512_set1_ps(2.f), c));
}

#endif
