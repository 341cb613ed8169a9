/* AVX2 row of the SDPA column-operation table (kernels/fused/sdpa_panel.h):
 * the portable bodies compiled with AVX2, and exp with its column sum for
 * rows of 16 queries (the AVX2 f32 microkernel's NR) written with
 * intrinsics (the vector kernels' exp, math_avx2.h): the portable body
 * calls expf per element. */
#include <immintrin.h>

#include "kernels/fused/sdpa_panel.h"
#include "kernels/x86/math_avx2.h"

static void exp_rows_avx2(float *x, int64_t nk, int w, const float *sub, float *l) {
    if (w != 16) {
        sd_panel_exp_rows(x, nk, w, sub, l);
        return;
    }
    const __m256 s0 = _mm256_loadu_ps(sub), s1 = _mm256_loadu_ps(sub + 8);
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
    for (int64_t j = 0; j < nk; ++j) {
        float *r = x + j * 16;
        const __m256 e0 = pt_avx2_exp_nonpos(_mm256_sub_ps(_mm256_loadu_ps(r), s0));
        const __m256 e1 = pt_avx2_exp_nonpos(_mm256_sub_ps(_mm256_loadu_ps(r + 8), s1));
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
    add_cols_avx2, transpose_out_avx2, pack_t_avx2,   pack_rows_avx2,
    NULL,          0,                  0};
