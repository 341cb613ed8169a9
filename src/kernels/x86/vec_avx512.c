/* AVX-512 row of the vector-kernel table (kernels/vec/vec.h).  exp uses
 * vscalefps for the 2^n step, which handles overflow to +inf and gradual
 * underflow in one instruction. */
#include <immintrin.h>
#include <math.h>

#include "kernels/vec/vec_rows.h"
#include "kernels/x86/vec_exp_x86.h"

static inline __m512 exp512(__m512 x) {
    const __m512 lo = _mm512_set1_ps(PT_EXP_MIN);
    const __mmask16 zero = _mm512_cmp_ps_mask(x, lo, _CMP_LT_OQ);
    /* min/max return their second operand when one is NaN: x goes second so NaN passes. */
    x = _mm512_max_ps(lo, _mm512_min_ps(_mm512_set1_ps(PT_EXP_MAX + 1.f), x));
    const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(PT_EXP_LOG2E)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(PT_EXP_LN2_HI), x);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(PT_EXP_LN2_LO), r);
    __m512 p = _mm512_set1_ps(PT_EXP_C6);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(PT_EXP_C5));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(PT_EXP_C4));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(PT_EXP_C3));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(PT_EXP_C2));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.f));
    return _mm512_maskz_mov_ps((__mmask16)~zero, _mm512_scalef_ps(p, n));
}

static inline __mmask16 tail_mask(int64_t left) { return left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1u); }

static float avx512_max(const float *x, int64_t n) {
    __m512 m = _mm512_set1_ps(-INFINITY);
    for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 k = tail_mask(n - i);
        const __m512 v = _mm512_mask_loadu_ps(_mm512_set1_ps(-INFINITY), k, x + i);
        m = _mm512_max_ps(v, m); /* a NaN in v yields m: NaN skipped */
    }
    return _mm512_reduce_max_ps(m);
}

static float avx512_exp_sum(float *x, int64_t n, float sub) {
    const __m512 s = _mm512_set1_ps(sub);
    __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        const __m512 e0 = exp512(_mm512_sub_ps(_mm512_loadu_ps(x + i), s));
        const __m512 e1 = exp512(_mm512_sub_ps(_mm512_loadu_ps(x + i + 16), s));
        _mm512_storeu_ps(x + i, e0);
        _mm512_storeu_ps(x + i + 16, e1);
        acc0 = _mm512_add_ps(acc0, e0);
        acc1 = _mm512_add_ps(acc1, e1);
    }
    for (; i < n; i += 16) {
        const __mmask16 k = tail_mask(n - i);
        const __m512 e = exp512(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + i), s));
        _mm512_mask_storeu_ps(x + i, k, e);
        acc0 = _mm512_add_ps(acc0, _mm512_maskz_mov_ps(k, e));
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
}

static void avx512_scale(float *x, int64_t n, float s) {
    const __m512 f = _mm512_set1_ps(s);
    for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 k = tail_mask(n - i);
        _mm512_mask_storeu_ps(x + i, k, _mm512_mul_ps(_mm512_maskz_loadu_ps(k, x + i), f));
    }
}

const pt_vec_ops pt_vec_row_avx512 = {
    .name = "avx512", .level = PT_ISA_AVX512, .max = avx512_max, .exp_sum = avx512_exp_sum, .scale = avx512_scale};
