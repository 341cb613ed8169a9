/* AVX2 + FMA row of the vector-kernel table (kernels/vec/vec.h).  Without
 * vscalefps, 2^n is built in the exponent field: n is clamped to the normal
 * range and results below the normal range are made by a second factor. */
#include <immintrin.h>
#include <math.h>

#include "kernels/vec/vec_rows.h"
#include "kernels/x86/vec_exp_x86.h"

static inline __m256 pow2i(__m256 n) { /* 2^n for integral n in [-126, 127] */
    const __m256i e = _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127));
    return _mm256_castsi256_ps(_mm256_slli_epi32(e, 23));
}

static inline __m256 exp256(__m256 x) {
    const __m256 lo = _mm256_set1_ps(PT_EXP_MIN);
    const __m256 zero = _mm256_cmp_ps(x, lo, _CMP_LT_OQ);
    const __m256 big = _mm256_cmp_ps(x, _mm256_set1_ps(PT_EXP_MAX), _CMP_GT_OQ);
    /* min/max return their second operand when one is NaN: x goes second so NaN passes. */
    x = _mm256_max_ps(lo, _mm256_min_ps(_mm256_set1_ps(PT_EXP_MAX), x));
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
    /* 2^n = 2^n1 · 2^n2 with both factors normal (n in [-150, 128]). */
    const __m256 n1 = _mm256_max_ps(_mm256_min_ps(n, _mm256_set1_ps(127.f)), _mm256_set1_ps(-126.f));
    const __m256 n2 = _mm256_sub_ps(n, n1);
    __m256 y = _mm256_mul_ps(_mm256_mul_ps(p, pow2i(n1)), pow2i(n2));
    y = _mm256_blendv_ps(y, _mm256_set1_ps(INFINITY), big);
    return _mm256_andnot_ps(zero, y);
}

/* Lanes [0, left) of a tail. */
static inline __m256i tail_mask(int64_t left) {
    const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(left > 8 ? 8 : left)), idx);
}

static inline float hsum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

static inline float hmax(__m256 v) {
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

static float avx2_max(const float *x, int64_t n) {
    __m256 m = _mm256_set1_ps(-INFINITY);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) m = _mm256_max_ps(_mm256_loadu_ps(x + i), m); /* NaN in x: m kept */
    if (i < n) {
        const __m256i k = tail_mask(n - i);
        const __m256 v = _mm256_blendv_ps(_mm256_set1_ps(-INFINITY), _mm256_maskload_ps(x + i, k), _mm256_castsi256_ps(k));
        m = _mm256_max_ps(v, m);
    }
    return hmax(m);
}

static float avx2_exp_sum(float *x, int64_t n, float sub) {
    const __m256 s = _mm256_set1_ps(sub);
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256 e0 = exp256(_mm256_sub_ps(_mm256_loadu_ps(x + i), s));
        const __m256 e1 = exp256(_mm256_sub_ps(_mm256_loadu_ps(x + i + 8), s));
        _mm256_storeu_ps(x + i, e0);
        _mm256_storeu_ps(x + i + 8, e1);
        acc0 = _mm256_add_ps(acc0, e0);
        acc1 = _mm256_add_ps(acc1, e1);
    }
    for (; i < n; i += 8) {
        const __m256i k = tail_mask(n - i);
        const __m256 e = exp256(_mm256_sub_ps(_mm256_maskload_ps(x + i, k), s));
        _mm256_maskstore_ps(x + i, k, e);
        acc0 = _mm256_add_ps(acc0, _mm256_and_ps(e, _mm256_castsi256_ps(k)));
    }
    return hsum(_mm256_add_ps(acc0, acc1));
}

static void avx2_scale(float *x, int64_t n, float s) {
    const __m256 f = _mm256_set1_ps(s);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), f));
    for (; i < n; ++i) x[i] *= s;
}

const pt_vec_ops pt_vec_row_avx2 = {
    .name = "avx2", .level = PT_ISA_AVX2, .max = avx2_max, .exp_sum = avx2_exp_sum, .scale = avx2_scale};
