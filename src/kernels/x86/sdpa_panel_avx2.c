/* AVX2 row of the SDPA column-operation table (kernels/fused/sdpa_panel.h):
 * the portable bodies compiled with AVX2, and exp with its column sum for
 * rows of 16 queries (the AVX2 f32 microkernel's NR) written with
 * intrinsics: the portable body calls expf per element. */
#include <immintrin.h>

#include "kernels/fused/sdpa_panel.h"
#include "kernels/x86/vec_exp_x86.h"

/* exp(x) for x <= 0 (NaN stays NaN).  The argument is clamped at -88,
 * where n rounds to -127: 2^n built in the exponent field is then 0, so
 * masked scores (-inf) give 0 without a mask. */
static inline __m256 exp8(__m256 x) {
    x = _mm256_max_ps(_mm256_set1_ps(-88.f), x); /* vmaxps returns its second operand for NaN */
    const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(PT_EXP_LOG2E)),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(PT_EXP_LN2_HI), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(PT_EXP_LN2_LO), r);
    __m256 p = _mm256_set1_ps(PT_EXP_C6);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(PT_EXP_C5));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(PT_EXP_C4));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(PT_EXP_C3));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(PT_EXP_C2));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.f));
    const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}

static void exp_rows_avx2(float *x, int64_t nk, int w, const float *sub, float *l) {
    if (w != 16) {
        sd_panel_exp_rows(x, nk, w, sub, l);
        return;
    }
    const __m256 s0 = _mm256_loadu_ps(sub), s1 = _mm256_loadu_ps(sub + 8);
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
    for (int64_t j = 0; j < nk; ++j) {
        float *r = x + j * 16;
        const __m256 e0 = exp8(_mm256_sub_ps(_mm256_loadu_ps(r), s0));
        const __m256 e1 = exp8(_mm256_sub_ps(_mm256_loadu_ps(r + 8), s1));
        _mm256_storeu_ps(r, e0);
        _mm256_storeu_ps(r + 8, e1);
        a0 = _mm256_add_ps(a0, e0), a1 = _mm256_add_ps(a1, e1);
    }
    _mm256_storeu_ps(l, _mm256_add_ps(_mm256_loadu_ps(l), a0));
    _mm256_storeu_ps(l + 8, _mm256_add_ps(_mm256_loadu_ps(l + 8), a1));
}

static void max_rows_avx2(float *x, int64_t nk, int w, const float *add, float *m) {
    sd_panel_max_rows(x, nk, w, add, m);
}
static void scale_rows_avx2(float *o, int64_t n, int w, const float *alpha) { sd_panel_scale_rows(o, n, w, alpha); }
static void add_cols_avx2(float *x, int64_t nk, int w, int nq, const float *const *src) {
    sd_panel_add_cols(x, nk, w, nq, src);
}
static void transpose_out_avx2(const float *o, int64_t n, int w, int nq, const float *scale, float *dst, int64_t ld) {
    sd_panel_transpose_out(o, n, w, nq, scale, dst, ld);
}
static void pack_t_avx2(const float *src, int64_t ld, int rows, int64_t k, int R, float scale, float *dst) {
    sd_panel_pack_t(src, ld, rows, k, R, scale, dst);
}
static void pack_rows_avx2(const float *src, int64_t ld, int64_t nk, int64_t n, int R, float *dst, size_t strip) {
    sd_panel_pack_rows(src, ld, nk, n, R, dst, strip);
}

const pt_sdpa_panel_ops pt_sdpa_panel_avx2 = {
    "avx2",        PT_ISA_AVX2,        max_rows_avx2, exp_rows_avx2, scale_rows_avx2,
    add_cols_avx2, transpose_out_avx2, pack_t_avx2,   pack_rows_avx2};
