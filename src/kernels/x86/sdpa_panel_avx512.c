/* AVX-512 row of the SDPA column-operation table (kernels/fused/
 * sdpa_panel.h): rows of 32 queries as two registers, the running max and
 * sum of each query in its lane for the whole block of keys.  exp by the
 * range reduction of vec_exp_x86.h (x = n·ln2 + r, degree-6 Taylor
 * polynomial of r, scaled by 2^n with vscalefps), fused with the lane-wise
 * sum so that each score is loaded and stored once. */
#include <immintrin.h>

#include "kernels/fused/sdpa_panel.h"
#include "kernels/x86/vec_exp_x86.h"

static inline __m512 exp16(__m512 x) {
    /* Arguments below PT_EXP_MIN (masked scores: -inf) give 0; the clamp
     * keeps the reduction finite for them. */
    const __mmask16 live = _mm512_cmp_ps_mask(x, _mm512_set1_ps(PT_EXP_MIN), _CMP_GE_OQ);
    x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(PT_EXP_MIN)), _mm512_set1_ps(PT_EXP_MAX + 1.f));
    const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(PT_EXP_LOG2E)),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(PT_EXP_LN2_HI), x);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(PT_EXP_LN2_LO), r);
    __m512 p = _mm512_set1_ps(PT_EXP_C6);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(PT_EXP_C5));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(PT_EXP_C4));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(PT_EXP_C3));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(PT_EXP_C2));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.f));
    return _mm512_maskz_scalef_ps(live, p, n);
}

static void max_rows_avx512(float *x, int64_t nk, int w, const float *add, float *m) {
    if (w != 32) {
        sd_panel_max_rows(x, nk, w, add, m);
        return;
    }
    /* max(x, m) keeps m where x is NaN (vmaxps returns its second operand). */
    __m512 m0 = _mm512_loadu_ps(m), m1 = _mm512_loadu_ps(m + 16);
    if (add) {
        for (int64_t j = 0; j < nk; ++j) {
            float *r = x + j * 32;
            const __m512 a = _mm512_set1_ps(add[j]);
            const __m512 x0 = _mm512_add_ps(_mm512_loadu_ps(r), a), x1 = _mm512_add_ps(_mm512_loadu_ps(r + 16), a);
            _mm512_storeu_ps(r, x0);
            _mm512_storeu_ps(r + 16, x1);
            m0 = _mm512_max_ps(x0, m0);
            m1 = _mm512_max_ps(x1, m1);
        }
    } else {
        for (int64_t j = 0; j < nk; ++j) {
            m0 = _mm512_max_ps(_mm512_loadu_ps(x + j * 32), m0);
            m1 = _mm512_max_ps(_mm512_loadu_ps(x + j * 32 + 16), m1);
        }
    }
    _mm512_storeu_ps(m, m0);
    _mm512_storeu_ps(m + 16, m1);
}

static void exp_rows_avx512(float *x, int64_t nk, int w, const float *sub, float *l) {
    if (w != 32) {
        sd_panel_exp_rows(x, nk, w, sub, l);
        return;
    }
    const __m512 s0 = _mm512_loadu_ps(sub), s1 = _mm512_loadu_ps(sub + 16);
    /* Two rows per step into separate sums: the adds do not wait on each other. */
    __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps(), b0 = _mm512_setzero_ps(), b1 = _mm512_setzero_ps();
    int64_t j = 0;
    for (; j + 2 <= nk; j += 2) {
        float *r = x + j * 32;
        const __m512 e0 = exp16(_mm512_sub_ps(_mm512_loadu_ps(r), s0));
        const __m512 e1 = exp16(_mm512_sub_ps(_mm512_loadu_ps(r + 16), s1));
        const __m512 e2 = exp16(_mm512_sub_ps(_mm512_loadu_ps(r + 32), s0));
        const __m512 e3 = exp16(_mm512_sub_ps(_mm512_loadu_ps(r + 48), s1));
        _mm512_storeu_ps(r, e0);
        _mm512_storeu_ps(r + 16, e1);
        _mm512_storeu_ps(r + 32, e2);
        _mm512_storeu_ps(r + 48, e3);
        a0 = _mm512_add_ps(a0, e0), a1 = _mm512_add_ps(a1, e1);
        b0 = _mm512_add_ps(b0, e2), b1 = _mm512_add_ps(b1, e3);
    }
    if (j < nk) {
        float *r = x + j * 32;
        const __m512 e0 = exp16(_mm512_sub_ps(_mm512_loadu_ps(r), s0));
        const __m512 e1 = exp16(_mm512_sub_ps(_mm512_loadu_ps(r + 16), s1));
        _mm512_storeu_ps(r, e0);
        _mm512_storeu_ps(r + 16, e1);
        a0 = _mm512_add_ps(a0, e0), a1 = _mm512_add_ps(a1, e1);
    }
    _mm512_storeu_ps(l, _mm512_add_ps(_mm512_loadu_ps(l), _mm512_add_ps(a0, b0)));
    _mm512_storeu_ps(l + 16, _mm512_add_ps(_mm512_loadu_ps(l + 16), _mm512_add_ps(a1, b1)));
}

static void scale_rows_avx512(float *o, int64_t n, int w, const float *alpha) {
    if (w != 32) {
        sd_panel_scale_rows(o, n, w, alpha);
        return;
    }
    const __m512 a0 = _mm512_loadu_ps(alpha), a1 = _mm512_loadu_ps(alpha + 16);
    for (int64_t d = 0; d < n; ++d) {
        _mm512_storeu_ps(o + d * 32, _mm512_mul_ps(_mm512_loadu_ps(o + d * 32), a0));
        _mm512_storeu_ps(o + d * 32 + 16, _mm512_mul_ps(_mm512_loadu_ps(o + d * 32 + 16), a1));
    }
}

const pt_sdpa_panel_ops pt_sdpa_panel_avx512 = {"avx512", PT_ISA_AVX512, max_rows_avx512, exp_rows_avx512,
                                                scale_rows_avx512};
