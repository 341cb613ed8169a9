/* AVX-512 row of the vector-kernel table (kernels/vec/vec.h).  exp, 1/d and
 * erfc come from mem_math_avx512.h (shared with the memory-bound rows). */
#include <immintrin.h>
#include <math.h>

#include "kernels/vec/vec_rows.h"
#include "kernels/x86/avx512_bf16_round.h"
#include "kernels/x86/avx512_int8_round.h"
#include "kernels/x86/mem_math_avx512.h"
#include "kernels/x86/vec_exp_x86.h"

static inline __mmask16 tail_mask(int64_t left) { return left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1u); }

static float avx512_max(const float *x, int64_t n) {
    __m512 m = _mm512_set1_ps(-INFINITY), m1 = m;
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) { /* a NaN in x yields m: NaN skipped */
        m = _mm512_max_ps(_mm512_loadu_ps(x + i), m);
        m1 = _mm512_max_ps(_mm512_loadu_ps(x + i + 16), m1);
    }
    for (; i < n; i += 16) {
        const __mmask16 k = tail_mask(n - i);
        m = _mm512_max_ps(_mm512_mask_loadu_ps(_mm512_set1_ps(-INFINITY), k, x + i), m);
    }
    return _mm512_reduce_max_ps(_mm512_max_ps(m, m1));
}

static float avx512_exp_sum(float *x, int64_t n, float sub) {
    const __m512 s = _mm512_set1_ps(sub);
    __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        const __m512 e0 = pt_avx512_exp_terms(_mm512_sub_ps(_mm512_loadu_ps(x + i), s));
        const __m512 e1 = pt_avx512_exp_terms(_mm512_sub_ps(_mm512_loadu_ps(x + i + 16), s));
        _mm512_storeu_ps(x + i, e0);
        _mm512_storeu_ps(x + i + 16, e1);
        acc0 = _mm512_add_ps(acc0, e0);
        acc1 = _mm512_add_ps(acc1, e1);
    }
    for (; i < n; i += 16) {
        const __mmask16 k = tail_mask(n - i);
        const __m512 e = pt_avx512_exp_terms(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + i), s));
        _mm512_mask_storeu_ps(x + i, k, e);
        acc0 = _mm512_add_ps(acc0, _mm512_maskz_mov_ps(k, e));
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
}

static void avx512_scale(float *x, int64_t n, float s) {
    const __m512 f = _mm512_set1_ps(s);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(x + i, _mm512_mul_ps(_mm512_loadu_ps(x + i), f));
    if (i < n) {
        const __mmask16 k = tail_mask(n - i);
        _mm512_mask_storeu_ps(x + i, k, _mm512_mul_ps(_mm512_maskz_loadu_ps(k, x + i), f));
    }
}

/* ---- conversions ---- */

/* Main loops run whole vectors unmasked (masked stores are slow on some
 * cores); the tail runs once with a mask. */
static inline __m512 bf16x16_to_f32(__m256i h) { return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16)); }

static void avx512_bf16_to_f32(float *dst, const uint16_t *src, int64_t n) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(dst + i, bf16x16_to_f32(_mm256_loadu_si256((const __m256i *)(src + i))));
    if (i < n) {
        const __mmask16 k = tail_mask(n - i);
        _mm512_mask_storeu_ps(dst + i, k, bf16x16_to_f32(_mm256_maskz_loadu_epi16(k, src + i)));
    }
}

/* Integer rounding (not vcvtneps2bf16, which flushes subnormals). */
static inline __m256i bf16_round(__m512 v) { return pt_avx512_bf16_round(v); }

static void avx512_f32_to_bf16(uint16_t *dst, const float *src, int64_t n) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) _mm256_storeu_si256((__m256i *)(dst + i), bf16_round(_mm512_loadu_ps(src + i)));
    if (i < n) {
        const __mmask16 k = tail_mask(n - i);
        _mm256_mask_storeu_epi16(dst + i, k, bf16_round(_mm512_maskz_loadu_ps(k, src + i)));
    }
}

static void avx512_f16_to_f32(float *dst, const uint16_t *src, int64_t n) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(dst + i, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(src + i))));
    if (i < n) {
        const __mmask16 k = tail_mask(n - i);
        _mm512_mask_storeu_ps(dst + i, k, _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(k, src + i)));
    }
}

static void avx512_f32_to_f16(uint16_t *dst, const float *src, int64_t n) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm256_storeu_si256((__m256i *)(dst + i), _mm512_cvtps_ph(_mm512_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    if (i < n) {
        const __mmask16 k = tail_mask(n - i);
        const __m256i h = _mm512_cvtps_ph(_mm512_maskz_loadu_ps(k, src + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        _mm256_mask_storeu_epi16(dst + i, k, h);
    }
}

/* ---- statistics and normalisation in f64 lanes ---- */

static inline __m512d lo8_pd(__m512 v) { return _mm512_cvtps_pd(_mm512_castps512_ps256(v)); }
static inline __m512d hi8_pd(__m512 v) { return _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1))); }

static double avx512_sum_f64(const float *x, int64_t n) {
    __m512d a0 = _mm512_setzero_pd(), a1 = _mm512_setzero_pd(), a2 = a0, a3 = a0;
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) { /* four chains: the adds' latency hidden */
        const __m512 u = _mm512_loadu_ps(x + i), w = _mm512_loadu_ps(x + i + 16);
        a0 = _mm512_add_pd(a0, lo8_pd(u));
        a1 = _mm512_add_pd(a1, hi8_pd(u));
        a2 = _mm512_add_pd(a2, lo8_pd(w));
        a3 = _mm512_add_pd(a3, hi8_pd(w));
    }
    a0 = _mm512_add_pd(a0, a2);
    a1 = _mm512_add_pd(a1, a3);
    for (; i < n; i += 16) {
        const __m512 v = _mm512_maskz_loadu_ps(tail_mask(n - i), x + i);
        a0 = _mm512_add_pd(a0, _mm512_cvtps_pd(_mm512_castps512_ps256(v)));
        a1 = _mm512_add_pd(a1, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1))));
    }
    return _mm512_reduce_add_pd(_mm512_add_pd(a0, a1));
}

static double avx512_sum_sq_dev_f64(const float *x, int64_t n, double mean) {
    const __m512d mu = _mm512_set1_pd(mean);
    __m512d a0 = _mm512_setzero_pd(), a1 = _mm512_setzero_pd(), a2 = a0, a3 = a0;
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        const __m512 u = _mm512_loadu_ps(x + i), w = _mm512_loadu_ps(x + i + 16);
        const __m512d d0 = _mm512_sub_pd(lo8_pd(u), mu), d1 = _mm512_sub_pd(hi8_pd(u), mu);
        const __m512d d2 = _mm512_sub_pd(lo8_pd(w), mu), d3 = _mm512_sub_pd(hi8_pd(w), mu);
        a0 = _mm512_fmadd_pd(d0, d0, a0);
        a1 = _mm512_fmadd_pd(d1, d1, a1);
        a2 = _mm512_fmadd_pd(d2, d2, a2);
        a3 = _mm512_fmadd_pd(d3, d3, a3);
    }
    a0 = _mm512_add_pd(a0, a2);
    a1 = _mm512_add_pd(a1, a3);
    for (; i < n; i += 16) {
        const __mmask16 k = tail_mask(n - i);
        const __m512 v = _mm512_maskz_loadu_ps(k, x + i);
        const __m512d d0 = _mm512_maskz_sub_pd((__mmask8)k, _mm512_cvtps_pd(_mm512_castps512_ps256(v)), mu);
        const __m512d d1 = _mm512_maskz_sub_pd((__mmask8)(k >> 8),
                                               _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1))), mu);
        a0 = _mm512_fmadd_pd(d0, d0, a0);
        a1 = _mm512_fmadd_pd(d1, d1, a1);
    }
    return _mm512_reduce_add_pd(_mm512_add_pd(a0, a1));
}

/* Eight lanes of normalize: the reference's f64 expression, one rounding. */
static inline __m256 normalize8(__m256 x, __m512d mu, __m512d inv, const float *g, const float *b, __mmask8 k) {
    __m512d v = _mm512_mul_pd(_mm512_sub_pd(_mm512_cvtps_pd(x), mu), inv);
    if (g) v = _mm512_mul_pd(v, _mm512_cvtps_pd(_mm256_maskz_loadu_ps(k, g)));
    if (b) v = _mm512_add_pd(v, _mm512_cvtps_pd(_mm256_maskz_loadu_ps(k, b)));
    return _mm512_cvtpd_ps(v);
}

static void avx512_normalize(float *y, const float *x, int64_t n, double mean, double inv, const float *g, const float *b) {
    const __m512d mu = _mm512_set1_pd(mean), iv = _mm512_set1_pd(inv);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, normalize8(_mm256_loadu_ps(x + i), mu, iv, g ? g + i : NULL, b ? b + i : NULL, 0xFF));
    for (; i < n; i += 8) {
        const __mmask8 k = (__mmask8)tail_mask(n - i);
        const __m256 r = normalize8(_mm256_maskz_loadu_ps(k, x + i), mu, iv, g ? g + i : NULL, b ? b + i : NULL, k);
        _mm256_mask_storeu_ps(y + i, k, r);
    }
}

static void avx512_normalize1(float *y, const float *x, int64_t n, double mean, double scale, double shift) {
    const __m512d mu = _mm512_set1_pd(mean), sc = _mm512_set1_pd(scale), sh = _mm512_set1_pd(shift);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) /* mul then add, unfused, as the generic row */
        _mm256_storeu_ps(y + i, _mm512_cvtpd_ps(_mm512_add_pd(_mm512_mul_pd(_mm512_sub_pd(_mm512_cvtps_pd(_mm256_loadu_ps(x + i)), mu), sc), sh)));
    if (i < n) {
        const __mmask8 k = (__mmask8)tail_mask(n - i);
        const __m512d v = _mm512_add_pd(_mm512_mul_pd(_mm512_sub_pd(_mm512_cvtps_pd(_mm256_maskz_loadu_ps(k, x + i)), mu), sc), sh);
        _mm256_mask_storeu_ps(y + i, k, _mm512_cvtpd_ps(v));
    }
}

/* Channels-last GroupNorm rows: 32 channels at a time, their sums (or
 * mean, scale, shift) held in registers over the `rows` rows instead of
 * loaded and stored per row.  Each channel still adds its rows in order,
 * so the sums are the per-row loop's. */
#define NX_CH 32
static void avx512_acc_shift_f64(double *s1, double *s2, const float *x, int64_t ldx, int64_t rows, const double *k,
                                 int64_t n) {
    int64_t i = 0;
    for (; i + NX_CH <= n; i += NX_CH) {
        __m512d a1[4], a2[4], kk[4];
#pragma GCC unroll 4
        for (int j = 0; j < 4; ++j)
            a1[j] = _mm512_loadu_pd(s1 + i + 8 * j), a2[j] = _mm512_loadu_pd(s2 + i + 8 * j),
            kk[j] = _mm512_loadu_pd(k + i + 8 * j);
        for (int64_t r = 0; r < rows; ++r) {
            const float *xr = x + r * ldx + i;
#pragma GCC unroll 4
            for (int j = 0; j < 4; ++j) {
                const __m512d d = _mm512_sub_pd(_mm512_cvtps_pd(_mm256_loadu_ps(xr + 8 * j)), kk[j]);
                a1[j] = _mm512_add_pd(a1[j], d);
                a2[j] = _mm512_fmadd_pd(d, d, a2[j]);
            }
        }
#pragma GCC unroll 4
        for (int j = 0; j < 4; ++j) _mm512_storeu_pd(s1 + i + 8 * j, a1[j]), _mm512_storeu_pd(s2 + i + 8 * j, a2[j]);
    }
    for (; i < n; i += 8) {
        const __mmask8 m = n - i >= 8 ? (__mmask8)0xFF : (__mmask8)((1u << (n - i)) - 1u);
        __m512d a1 = _mm512_maskz_loadu_pd(m, s1 + i), a2 = _mm512_maskz_loadu_pd(m, s2 + i);
        const __m512d kk = _mm512_maskz_loadu_pd(m, k + i);
        for (int64_t r = 0; r < rows; ++r) {
            const __m512d d = _mm512_sub_pd(_mm512_cvtps_pd(_mm256_maskz_loadu_ps(m, x + r * ldx + i)), kk);
            a1 = _mm512_add_pd(a1, d);
            a2 = _mm512_fmadd_pd(d, d, a2);
        }
        _mm512_mask_storeu_pd(s1 + i, m, a1);
        _mm512_mask_storeu_pd(s2 + i, m, a2);
    }
}

static inline __m256 nx_normalize8(__m256 x, __m512d mean, __m512d scale, __m512d shift) {
    /* mul then add, unfused, as the generic row */
    return _mm512_cvtpd_ps(_mm512_add_pd(_mm512_mul_pd(_mm512_sub_pd(_mm512_cvtps_pd(x), mean), scale), shift));
}

static void avx512_normalize_each(float *y, int64_t ldy, const float *x, int64_t ldx, int64_t rows, int64_t n,
                                  const double *mean, const double *scale, const double *shift, bool stream) {
    /* Streamed stores need 32-byte aligned rows; the fence before returning
     * orders them before whatever the caller does next. */
    const bool nt = stream && ((uintptr_t)y | (uintptr_t)(ldy * 4)) % 32 == 0;
    int64_t i = 0;
    for (; i + NX_CH <= n; i += NX_CH) {
        __m512d mu[4], sc[4], sh[4];
#pragma GCC unroll 4
        for (int j = 0; j < 4; ++j)
            mu[j] = _mm512_loadu_pd(mean + i + 8 * j), sc[j] = _mm512_loadu_pd(scale + i + 8 * j),
            sh[j] = _mm512_loadu_pd(shift + i + 8 * j);
        for (int64_t r = 0; r < rows; ++r) {
            const float *xr = x + r * ldx + i;
            float *yr = y + r * ldy + i;
#pragma GCC unroll 4
            for (int j = 0; j < 4; ++j) {
                const __m256 v = nx_normalize8(_mm256_loadu_ps(xr + 8 * j), mu[j], sc[j], sh[j]);
                if (nt)
                    _mm256_stream_ps(yr + 8 * j, v);
                else
                    _mm256_storeu_ps(yr + 8 * j, v);
            }
        }
    }
    for (; i < n; i += 8) {
        const __mmask8 m = n - i >= 8 ? (__mmask8)0xFF : (__mmask8)((1u << (n - i)) - 1u);
        const __m512d mu = _mm512_maskz_loadu_pd(m, mean + i), sc = _mm512_maskz_loadu_pd(m, scale + i),
                      sh = _mm512_maskz_loadu_pd(m, shift + i);
        for (int64_t r = 0; r < rows; ++r)
            _mm256_mask_storeu_ps(y + r * ldy + i, m, nx_normalize8(_mm256_maskz_loadu_ps(m, x + r * ldx + i), mu, sc, sh));
    }
    if (nt) _mm_sfence();
}
#undef NX_CH

static void avx512_acc_f64(double *acc, const float *x, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm512_storeu_pd(acc + i, _mm512_add_pd(_mm512_loadu_pd(acc + i), _mm512_cvtps_pd(_mm256_loadu_ps(x + i))));
    for (; i < n; ++i) acc[i] += x[i];
}

static void avx512_div_f64(float *y, const double *acc, int64_t n, double d) {
    const __m512d dv = _mm512_set1_pd(d);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm512_cvtpd_ps(_mm512_div_pd(_mm512_loadu_pd(acc + i), dv)));
    for (; i < n; ++i) y[i] = (float)(acc[i] / d);
}

static void avx512_sub2(float *y, const float *x, int64_t n, float a, float b) {
    const __m512 va = _mm512_set1_ps(a), vb = _mm512_set1_ps(b);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, _mm512_sub_ps(_mm512_sub_ps(_mm512_loadu_ps(x + i), va), vb));
    if (i < n) {
        const __mmask16 k = tail_mask(n - i);
        _mm512_mask_storeu_ps(y + i, k, _mm512_sub_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + i), va), vb));
    }
}

/* ---- element-wise functions ---- */

static inline __m512 tanh512(__m512 x) {
    const __m512 t = _mm512_abs_ps(x);
    const __mmask16 small = _mm512_cmp_ps_mask(t, _mm512_set1_ps(PT_TANH_SMALL), _CMP_LT_OQ);
    const __m512 x2 = _mm512_mul_ps(x, x);
    __m512 p = _mm512_set1_ps(PT_TANH_T15);
    p = _mm512_fmadd_ps(p, x2, _mm512_set1_ps(PT_TANH_T13));
    p = _mm512_fmadd_ps(p, x2, _mm512_set1_ps(PT_TANH_T11));
    p = _mm512_fmadd_ps(p, x2, _mm512_set1_ps(PT_TANH_T9));
    p = _mm512_fmadd_ps(p, x2, _mm512_set1_ps(PT_TANH_T7));
    p = _mm512_fmadd_ps(p, x2, _mm512_set1_ps(PT_TANH_T5));
    p = _mm512_fmadd_ps(p, x2, _mm512_set1_ps(PT_TANH_T3));
    const __m512 near0 = _mm512_fmadd_ps(_mm512_mul_ps(p, x2), x, x);
    const __m512 e = pt_avx512_exp(_mm512_add_ps(t, t));
    __m512 far = _mm512_fnmadd_ps(_mm512_set1_ps(2.f), pt_avx512_recip(_mm512_add_ps(e, _mm512_set1_ps(1.f))), _mm512_set1_ps(1.f));
    far = _mm512_or_ps(far, _mm512_and_ps(x, _mm512_set1_ps(-0.f))); /* sign of x */
    return _mm512_mask_mov_ps(far, small, near0);
}

static inline __m512 gelu_tanh512(__m512 x) {
    const __m512 g = _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(PT_GELU_TANH_C), x),
                                   _mm512_fmadd_ps(_mm512_mul_ps(x, x), _mm512_set1_ps(0.044715f), _mm512_set1_ps(1.f)));
    /* (1 + tanh g) / 2 = 1 / (1 + exp(-2g)): no cancellation for negative x. */
    const __m512 e = pt_avx512_exp_terms(_mm512_mul_ps(_mm512_set1_ps(-2.f), g));
    return _mm512_mul_ps(x, pt_avx512_recip(_mm512_add_ps(_mm512_set1_ps(1.f), e)));
}

static inline __m512 sigmoid512(__m512 x) {
    const __m512 e = pt_avx512_exp_terms(_mm512_sub_ps(_mm512_setzero_ps(), x));
    return pt_avx512_recip(_mm512_add_ps(_mm512_set1_ps(1.f), e));
}

/* v clamped to [0, 1] with NaN passed through (the reference's order of tests). */
static inline __m512 unit_clamp512(__m512 v) {
    v = _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_LE_OQ), _mm512_setzero_ps());
    return _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(v, _mm512_set1_ps(1.f), _CMP_GE_OQ), _mm512_set1_ps(1.f));
}

static bool avx512_eltwise(const pt_eltwise_params *p, float *y, const float *x, int64_t n) {
    const __m512 zero = _mm512_setzero_ps(), alpha = _mm512_set1_ps(p->alpha), beta = _mm512_set1_ps(p->beta);
    const __m512 lo = _mm512_set1_ps(p->lo), hi = _mm512_set1_ps(p->hi);
    (void)zero, (void)alpha, (void)beta, (void)lo, (void)hi;
#define PT_UNARY_LOOP(expr)                                           \
    {                                                                 \
        int64_t i = 0;                                                \
        for (; i + 16 <= n; i += 16) {                                \
            const __m512 v = _mm512_loadu_ps(x + i);                  \
            _mm512_storeu_ps(y + i, (expr));                          \
        }                                                             \
        if (i < n) {                                                  \
            const __mmask16 k = tail_mask(n - i);                     \
            const __m512 v = _mm512_maskz_loadu_ps(k, x + i);         \
            _mm512_mask_storeu_ps(y + i, k, (expr));                  \
        }                                                             \
        return true;                                                  \
    }
    switch (p->kind) {
        case dnnl_graph_op_relu: PT_UNARY_LOOP(_mm512_maskz_mov_ps(_mm512_cmp_ps_mask(v, zero, _CMP_NLE_UQ), v))
        case dnnl_graph_op_leaky_relu:
            PT_UNARY_LOOP(_mm512_mask_mov_ps(_mm512_mul_ps(alpha, v), _mm512_cmp_ps_mask(v, zero, _CMP_GT_OQ), v))
        case dnnl_graph_op_clamp: PT_UNARY_LOOP(_mm512_min_ps(_mm512_max_ps(v, lo), hi))
        case dnnl_graph_op_abs:
            PT_UNARY_LOOP(_mm512_mask_mov_ps(_mm512_xor_ps(v, _mm512_set1_ps(-0.f)), _mm512_cmp_ps_mask(v, zero, _CMP_GT_OQ), v))
        case dnnl_graph_op_square: PT_UNARY_LOOP(_mm512_mul_ps(v, v))
        case dnnl_graph_op_sqrt: PT_UNARY_LOOP(_mm512_sqrt_ps(v))
        case dnnl_graph_op_reciprocal: PT_UNARY_LOOP(_mm512_div_ps(_mm512_set1_ps(1.f), v))
        case dnnl_graph_op_round: PT_UNARY_LOOP(_mm512_roundscale_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC))
        case dnnl_graph_op_exp: PT_UNARY_LOOP(pt_avx512_exp(v))
        case dnnl_graph_op_sigmoid: PT_UNARY_LOOP(sigmoid512(v))
        case dnnl_graph_op_tanh: PT_UNARY_LOOP(tanh512(v))
        case dnnl_graph_op_gelu:
            if (p->gelu_tanh) PT_UNARY_LOOP(gelu_tanh512(v))
            PT_UNARY_LOOP(pt_avx512_gelu_erfc(v))
        case dnnl_graph_op_hard_sigmoid: /* mul then add, unfused, as the reference */ PT_UNARY_LOOP(unit_clamp512(_mm512_add_ps(_mm512_mul_ps(alpha, v), beta)))
        case dnnl_graph_op_hard_swish:
            PT_UNARY_LOOP(_mm512_mul_ps(v, unit_clamp512(_mm512_add_ps(_mm512_mul_ps(_mm512_set1_ps(1.f / 6.f), v), _mm512_set1_ps(0.5f)))))
        default: return false;
    }
#undef PT_UNARY_LOOP
}

static bool avx512_binary(int kind, float *y, const float *a, int64_t as, const float *b, int64_t bs, int64_t n) {
    const __m512 sa = _mm512_set1_ps(as ? 0.f : a[0]), sb = _mm512_set1_ps(bs ? 0.f : b[0]);
#define PT_BINARY_LOOP(op)                                                              \
    {                                                                                   \
        int64_t i = 0;                                                                  \
        for (; i + 16 <= n; i += 16) {                                                  \
            const __m512 u = as ? _mm512_loadu_ps(a + i) : sa;                          \
            const __m512 v = bs ? _mm512_loadu_ps(b + i) : sb;                          \
            _mm512_storeu_ps(y + i, op(u, v));                                          \
        }                                                                               \
        if (i < n) {                                                                    \
            const __mmask16 k = tail_mask(n - i);                                       \
            const __m512 u = as ? _mm512_maskz_loadu_ps(k, a + i) : sa;                 \
            const __m512 v = bs ? _mm512_maskz_loadu_ps(k, b + i) : sb;                 \
            _mm512_mask_storeu_ps(y + i, k, op(u, v));                                  \
        }                                                                               \
        return true;                                                                    \
    }
    switch (kind) {
        case dnnl_graph_op_add: PT_BINARY_LOOP(_mm512_add_ps)
        case dnnl_graph_op_subtract: PT_BINARY_LOOP(_mm512_sub_ps)
        case dnnl_graph_op_multiply: PT_BINARY_LOOP(_mm512_mul_ps)
        case dnnl_graph_op_divide: PT_BINARY_LOOP(_mm512_div_ps)
        case dnnl_graph_op_maximum: PT_BINARY_LOOP(_mm512_max_ps) /* u > v ? u : v, as the reference */
        case dnnl_graph_op_minimum: PT_BINARY_LOOP(_mm512_min_ps) /* u < v ? u : v */
        default: return false;
    }
#undef PT_BINARY_LOOP
}

/* ---- 8-bit integers ---- */

static void avx512_s8_to_f32(float *dst, const int8_t *src, int64_t n) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(dst + i, _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(src + i)))));
    if (i < n) {
        const __mmask16 k = tail_mask(n - i);
        _mm512_mask_storeu_ps(dst + i, k, _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(k, src + i))));
    }
}

static void avx512_u8_to_f32(float *dst, const uint8_t *src, int64_t n) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(dst + i, _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(src + i)))));
    if (i < n) {
        const __mmask16 k = tail_mask(n - i);
        _mm512_mask_storeu_ps(dst + i, k, _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(k, src + i))));
    }
}

static void avx512_f32_to_s8(int8_t *dst, const float *src, int64_t n) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) _mm_storeu_si128((__m128i *)(dst + i), pt_avx512_to_int8(_mm512_loadu_ps(src + i), true));
    if (i < n) {
        const __mmask16 k = tail_mask(n - i);
        _mm_mask_storeu_epi8(dst + i, k, pt_avx512_to_int8(_mm512_maskz_loadu_ps(k, src + i), true));
    }
}

static void avx512_f32_to_u8(uint8_t *dst, const float *src, int64_t n) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) _mm_storeu_si128((__m128i *)(dst + i), pt_avx512_to_int8(_mm512_loadu_ps(src + i), false));
    if (i < n) {
        const __mmask16 k = tail_mask(n - i);
        _mm_mask_storeu_epi8(dst + i, k, pt_avx512_to_int8(_mm512_maskz_loadu_ps(k, src + i), false));
    }
}

const pt_vec_ops pt_vec_row_avx512 = {.name = "avx512",
                                      .level = PT_ISA_AVX512,
                                      .max = avx512_max,
                                      .exp_sum = avx512_exp_sum,
                                      .scale = avx512_scale,
                                      .bf16_to_f32 = avx512_bf16_to_f32,
                                      .f32_to_bf16 = avx512_f32_to_bf16,
                                      .f16_to_f32 = avx512_f16_to_f32,
                                      .f32_to_f16 = avx512_f32_to_f16,
                                      .sum_f64 = avx512_sum_f64,
                                      .sum_sq_dev_f64 = avx512_sum_sq_dev_f64,
                                      .normalize = avx512_normalize,
                                      .normalize1 = avx512_normalize1,
                                      .acc_shift_f64 = avx512_acc_shift_f64,
                                      .normalize_each = avx512_normalize_each,
                                      .acc_f64 = avx512_acc_f64,
                                      .div_f64 = avx512_div_f64,
                                      .sub2 = avx512_sub2,
                                      .eltwise = avx512_eltwise,
                                      .binary = avx512_binary,
                                      .s8_to_f32 = avx512_s8_to_f32,
                                      .u8_to_f32 = avx512_u8_to_f32,
                                      .f32_to_s8 = avx512_f32_to_s8,
                                      .f32_to_u8 = avx512_f32_to_u8};
