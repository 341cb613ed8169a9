/* exp, 1/d and erfc on 16 floats at the AVX-512 level, written once for the
 * vector table's row (vec_avx512.c), the memory-bound rows
 * (mem_rows_avx512.h) and the SDPA column operations (sdpa_panel_avx512.c),
 * so that all give the same values bit for bit.
 * Include only from files built with the AVX-512 flags. */
#ifndef PARTITA_KERNELS_X86_MEM_MATH_AVX512_H
#define PARTITA_KERNELS_X86_MEM_MATH_AVX512_H

#include <immintrin.h>
#include <stdbool.h>
#include <math.h>

#include "kernels/ref/eltwise_math.h"
#include "kernels/x86/vec_exp_x86.h"

/* Inlined into every loop: a call per vector would cost more than the body. */
#define PT_AVX512_MATH_INLINE static inline __attribute__((always_inline))

/* c[0] + c[1]·x + ... + c[n]·x^n by Horner's rule, highest power first (n
 * a constant at each call: the loop unrolls into n FMAs). */
PT_AVX512_MATH_INLINE __m512 pt_avx512_poly(__m512 x, const float *c, int n) {
    __m512 p = _mm512_fmadd_ps(_mm512_set1_ps(c[n]), x, _mm512_set1_ps(c[n - 1]));
#pragma GCC unroll 16
    for (int i = n - 2; i >= 0; --i) p = _mm512_fmadd_ps(p, x, _mm512_set1_ps(c[i]));
    return p;
}

/* exp of an x inside [PT_EXP_MIN, PT_EXP_MAX + 1] or NaN (vec_exp_x86.h)
 * in the lanes of `keep`, +0 in the others: n·ln2 + r, Taylor to degree 6,
 * vscalefps for 2^n (overflow to +inf and gradual underflow in one
 * instruction).  n = x·log2(e) rounded to nearest by adding and taking
 * away 1.5·2^23 (one fma and a subtraction; vrndscaleps is two µops on
 * Intel cores): BERT-large f32 MHA about 3 % faster; n is then rounded
 * from the exact product instead of its f32 rounding, which can move a
 * half-way case to the other n, where r is still inside the range the
 * polynomial covers.  The lanes whose exp is 0 are masked off the vscalefps
 * rather than scaled down to 0: on Intel cores an underflowing vscalefps
 * takes a microcode assist (75 ns a vector against 2.5 measured on a Xeon
 * with AVX512-FP16), and a masked-off lane takes none; a causal or padding
 * mask of -inf made SDPA 4.4 times slower there. */
PT_AVX512_MATH_INLINE __m512 pt_avx512_exp_in_range(__m512 x, __mmask16 keep) {
    const __m512 magic = _mm512_set1_ps(12582912.f); /* 1.5 * 2^23 */
    const __m512 n = _mm512_sub_ps(_mm512_fmadd_ps(x, _mm512_set1_ps(PT_EXP_LOG2E), magic), magic);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(PT_EXP_LN2_HI), x);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(PT_EXP_LN2_LO), r);
    __m512 p = pt_avx512_poly(r, (const float[]){1.f, 1.f, PT_EXP_C2, PT_EXP_C3, PT_EXP_C4, PT_EXP_C5,
            PT_EXP_C6}, 6);
    return _mm512_maskz_scalef_ps(keep, p, n);
}

/* exp(x): 0 below `lo`, +inf above PT_EXP_MAX, NaN kept. */
PT_AVX512_MATH_INLINE __m512 pt_avx512_exp_above(__m512 x, float lo_value) {
    const __m512 lo = _mm512_set1_ps(lo_value);
    const __mmask16 keep = _mm512_cmp_ps_mask(x, lo, _CMP_NLT_UQ); /* NaN kept */
    /* min/max return their second operand when one is NaN: x goes second so NaN passes. */
    x = _mm512_max_ps(lo, _mm512_min_ps(_mm512_set1_ps(PT_EXP_MAX + 1.f), x));
    return pt_avx512_exp_in_range(x, keep);
}

/* exp(x) with gradual underflow: 0 below PT_EXP_MIN (the Exp op and the
 * activations built on exp). */
PT_AVX512_MATH_INLINE __m512 pt_avx512_exp(__m512 x) { return pt_avx512_exp_above(x, PT_EXP_MIN); }

/* exp(x) for softmax terms (x minus the maximum of its row, or minus the
 * log-sum-exp): results below e^PT_EXP_NORMAL_MIN, subnormal or nearly so,
 * are +0 (vec_exp_x86.h says why). */
PT_AVX512_MATH_INLINE __m512 pt_avx512_exp_terms(__m512 x) { return pt_avx512_exp_above(x, PT_EXP_NORMAL_MIN); }

/* pt_avx512_exp_terms for x <= 0 or NaN, without clamps: a lane below
 * the bound (-inf included) may compute garbage, but never a subnormal,
 * and its vscalefps is masked off to +0; the other lanes are what the clamp
 * left them, so the values are the same bit for bit.  One instruction less
 * per vector: SoftMax bf16 (64 MiB, 2 threads) 7.07-7.43 -> 6.64-6.87 ms. */
PT_AVX512_MATH_INLINE __m512 pt_avx512_exp_nonpos(__m512 x) {
    const __m512 lo = _mm512_set1_ps(PT_EXP_NORMAL_MIN);
    const __mmask16 keep = _mm512_cmp_ps_mask(x, lo, _CMP_NLT_UQ); /* NaN kept */
    return pt_avx512_exp_in_range(x, keep);
}

/* exp(x) for x <= 0 or NaN where the result is rounded to bf16 / f16
 * afterwards (SoftMax and GELU's erfc into a narrow type): 2^t with t = x·log2(e) rounded
 * once, f = t - floor(t) by vreduceps, a degree-4 fit of 2^f on [0, 1) and
 * vscalefps by t (which floors its exponent itself).  Relative error below
 * 6.5e-6 over [-87, 0], t's rounding included, against a half ulp of 2^-9
 * (bf16) or 2^-12 (f16): the narrow result is the one pt_avx512_exp_nonpos
 * would round to, or its neighbour near a tie.  Six operations on the FMA
 * pipes instead of ten (a Zen 4 core: 7.5 cycles a vector against 10.5).
 * Lanes below lo_value are +0: PT_EXP_NORMAL_MIN for SoftMax's terms, as in
 * pt_avx512_exp_nonpos; PT_EXP_MIN for erfc, gradual underflow kept. */
PT_AVX512_MATH_INLINE __m512 pt_avx512_exp_narrow_above(__m512 x, float lo_value) {
    const __mmask16 keep = _mm512_cmp_ps_mask(x, _mm512_set1_ps(lo_value), _CMP_NLT_UQ); /* NaN kept */
    const __m512 t = _mm512_mul_ps(x, _mm512_set1_ps(PT_EXP_LOG2E));
    const __m512 f = _mm512_reduce_ps(t, _MM_FROUND_TO_NEG_INF); /* t - floor(t), in [0, 1) */
    __m512 p = pt_avx512_poly(f, (const float[]){PT_EXP2_NARROW_C0, PT_EXP2_NARROW_C1, PT_EXP2_NARROW_C2,
            PT_EXP2_NARROW_C3, PT_EXP2_NARROW_C4}, 4);
    return _mm512_maskz_scalef_ps(keep, p, t);
}

PT_AVX512_MATH_INLINE __m512 pt_avx512_exp_nonpos_narrow(__m512 x) {
    return pt_avx512_exp_narrow_above(x, PT_EXP_NORMAL_MIN);
}

/* 1/d for d >= 1 or +inf: vrcp14ps and one Newton step (about 2^-27
 * relative) instead of a division, several times slower; 1/inf stays 0. */
PT_AVX512_MATH_INLINE __m512 pt_avx512_recip(__m512 d) {
    const __m512 r0 = _mm512_rcp14_ps(d);
    const __m512 r = _mm512_fmadd_ps(r0, _mm512_fnmadd_ps(d, r0, _mm512_set1_ps(1.f)), r0);
    return _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(d, _mm512_set1_ps(INFINITY), _CMP_EQ_OQ), r0);
}

/* erfc's argument z >= 0 (or NaN) clamped to 11, and t = 1 / (1 + z/2) by
 * vrcp14ps and a Newton step.  Past 11, exp's argument -z² + P(t) is below
 * PT_EXP_MIN, so the result is the +0 that z = 11 .. inf give anyway, and
 * neither 1/inf nor exp's own clamps need mending (four operations of 34
 * fewer in the accurate form, the same values bit for bit). */
PT_AVX512_MATH_INLINE __m512 pt_avx512_erfc_t(__m512 *z) {
    *z = _mm512_min_ps(_mm512_set1_ps(11.f), *z); /* NaN kept: min returns its second operand */
    const __m512 d = _mm512_fmadd_ps(*z, _mm512_set1_ps(0.5f), _mm512_set1_ps(1.f));
    const __m512 r0 = _mm512_rcp14_ps(d);
    return _mm512_fmadd_ps(r0, _mm512_fnmadd_ps(d, r0, _mm512_set1_ps(1.f)), r0);
}

/* erfc(z) for z >= 0 or NaN: t·exp(-z² + P(t)) (vec_exp_x86.h). */
PT_AVX512_MATH_INLINE __m512 pt_avx512_erfc(__m512 z) {
    const __m512 t = pt_avx512_erfc_t(&z);
    __m512 p = pt_avx512_poly(t, (const float[]){PT_ERFC_P0, PT_ERFC_P1, PT_ERFC_P2, PT_ERFC_P3, PT_ERFC_P4,
            PT_ERFC_P5, PT_ERFC_P6, PT_ERFC_P7, PT_ERFC_P8, PT_ERFC_P9}, 9);
    const __m512 a = _mm512_fnmadd_ps(z, z, p); /* in [-123, 0] or NaN */
    return _mm512_mul_ps(t, pt_avx512_exp_in_range(a, _mm512_cmp_ps_mask(a, _mm512_set1_ps(PT_EXP_MIN), _CMP_NLT_UQ)));
}

/* erfc(z) for z >= 0 (or NaN) rounded to bf16 / f16 afterwards, in the same
 * form with less: P of degree 5 fitted on t in [1/6, 1] (z in [0, 10];
 * relative error of erfc 7.6e-6), the narrow exp (gradual underflow kept
 * down to e^PT_EXP_MIN); within about 2e-5 relative all told.  The clamp
 * keeps GELU(-inf) NaN (-inf·0), as the reference's.  21 operations. */
PT_AVX512_MATH_INLINE __m512 pt_avx512_erfc_narrow(__m512 z) {
    const __m512 t = pt_avx512_erfc_t(&z);
    __m512 p = pt_avx512_poly(t, (const float[]){PT_ERFC_NARROW_P0, PT_ERFC_NARROW_P1, PT_ERFC_NARROW_P2,
            PT_ERFC_NARROW_P3, PT_ERFC_NARROW_P4, PT_ERFC_NARROW_P5}, 5);
    return _mm512_mul_ps(t, pt_avx512_exp_narrow_above(_mm512_fnmadd_ps(z, z, p), PT_EXP_MIN));
}

/* GELU(x) = x·erfc(-x/√2)/2 through erfc(|z|) (erfc(-z) = 2 - erfc(z)):
 * keeps the relative accuracy for large negative x, where 1 + erf cancels;
 * `narrow`: rounded to bf16 / f16 afterwards. */
PT_AVX512_MATH_INLINE __m512 pt_avx512_gelu_erfc_as(__m512 x, bool narrow) {
    const __m512 z = _mm512_mul_ps(x, _mm512_set1_ps(PT_SQRT1_2));
    const __m512 c = narrow ? pt_avx512_erfc_narrow(_mm512_abs_ps(z)) : pt_avx512_erfc(_mm512_abs_ps(z));
    const __mmask16 pos = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_GE_OQ);
    return _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(0.5f), x), _mm512_mask_sub_ps(c, pos, _mm512_set1_ps(2.f), c));
}

PT_AVX512_MATH_INLINE __m512 pt_avx512_gelu_erfc(__m512 x) { return pt_avx512_gelu_erfc_as(x, false); }

#endif
