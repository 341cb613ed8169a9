/* AVX2 + FMA row of the vector-kernel table (kernels/vec/vec.h); exp from
 * math_avx2.h. */
#include <immintrin.h>
#include <math.h>
#include <string.h>

#include "kernels/vec/vec_rows.h"
#include "kernels/x86/math_avx2.h"
#include "kernels/x86/vec_exp_x86.h"

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
        const __m256 e0 = pt_avx2_exp_terms(_mm256_sub_ps(_mm256_loadu_ps(x + i), s));
        const __m256 e1 = pt_avx2_exp_terms(_mm256_sub_ps(_mm256_loadu_ps(x + i + 8), s));
        _mm256_storeu_ps(x + i, e0);
        _mm256_storeu_ps(x + i + 8, e1);
        acc0 = _mm256_add_ps(acc0, e0);
        acc1 = _mm256_add_ps(acc1, e1);
    }
    for (; i < n; i += 8) {
        const __m256i k = tail_mask(n - i);
        const __m256 e = pt_avx2_exp_terms(_mm256_sub_ps(_mm256_maskload_ps(x + i, k), s));
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

/* The loops below run whole vectors of 8 and finish a tail of n - i < 8
 * elements through a zero-padded copy on the stack. */

/* ---- conversions ---- */

static inline __m256 bf16x8_to_f32(__m128i h) { return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16)); }

/* The reference's nearest-even carry, NaN made quiet, packed to 8 x u16. */
static inline __m128i f32x8_to_bf16(__m256 v) {
    const __m256i u = _mm256_castps_si256(v);
    const __m256i a = _mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff));
    const __m256i nan = _mm256_cmpgt_epi32(a, _mm256_set1_epi32(0x7f800000)); /* a < 2^31: signed compare is fine */
    const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
    __m256i r = _mm256_srli_epi32(_mm256_add_epi32(u, _mm256_add_epi32(odd, _mm256_set1_epi32(0x7fff))), 16);
    r = _mm256_blendv_epi8(r, _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x40)), nan);
    const __m256i packed = _mm256_packus_epi32(r, r); /* per 128-bit half: lanes 0-3, 0-3, 4-7, 4-7 */
    return _mm256_castsi256_si128(_mm256_permute4x64_epi64(packed, 0x08));
}

static void avx2_bf16_to_f32(float *dst, const uint16_t *src, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, bf16x8_to_f32(_mm_loadu_si128((const __m128i *)(src + i))));
    if (i < n) {
        uint16_t t[8] = {0};
        float f[8];
        memcpy(t, src + i, (size_t)(n - i) * sizeof *t);
        _mm256_storeu_ps(f, bf16x8_to_f32(_mm_loadu_si128((const __m128i *)t)));
        memcpy(dst + i, f, (size_t)(n - i) * sizeof *f);
    }
}

static void avx2_f32_to_bf16(uint16_t *dst, const float *src, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm_storeu_si128((__m128i *)(dst + i), f32x8_to_bf16(_mm256_loadu_ps(src + i)));
    if (i < n) {
        float f[8] = {0};
        uint16_t t[8];
        memcpy(f, src + i, (size_t)(n - i) * sizeof *f);
        _mm_storeu_si128((__m128i *)t, f32x8_to_bf16(_mm256_loadu_ps(f)));
        memcpy(dst + i, t, (size_t)(n - i) * sizeof *t);
    }
}

static void avx2_f16_to_f32(float *dst, const uint16_t *src, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(src + i))));
    if (i < n) {
        uint16_t t[8] = {0};
        float f[8];
        memcpy(t, src + i, (size_t)(n - i) * sizeof *t);
        _mm256_storeu_ps(f, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)t)));
        memcpy(dst + i, f, (size_t)(n - i) * sizeof *f);
    }
}

static void avx2_f32_to_f16(uint16_t *dst, const float *src, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(dst + i), _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    if (i < n) {
        float f[8] = {0};
        uint16_t t[8];
        memcpy(f, src + i, (size_t)(n - i) * sizeof *f);
        _mm_storeu_si128((__m128i *)t, _mm256_cvtps_ph(_mm256_loadu_ps(f), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        memcpy(dst + i, t, (size_t)(n - i) * sizeof *t);
    }
}

/* ---- statistics and normalisation in f64 lanes ---- */

static inline double hsum_pd(__m256d v) {
    __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}

static double avx2_sum_f64(const float *x, int64_t n) {
    __m256d a0 = _mm256_setzero_pd(), a1 = _mm256_setzero_pd();
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        a0 = _mm256_add_pd(a0, _mm256_cvtps_pd(_mm_loadu_ps(x + i)));
        a1 = _mm256_add_pd(a1, _mm256_cvtps_pd(_mm_loadu_ps(x + i + 4)));
    }
    double s = hsum_pd(_mm256_add_pd(a0, a1));
    for (; i < n; ++i) s += x[i];
    return s;
}

static double avx2_sum_sq_dev_f64(const float *x, int64_t n, double mean) {
    const __m256d mu = _mm256_set1_pd(mean);
    __m256d a0 = _mm256_setzero_pd(), a1 = _mm256_setzero_pd();
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256d d0 = _mm256_sub_pd(_mm256_cvtps_pd(_mm_loadu_ps(x + i)), mu);
        const __m256d d1 = _mm256_sub_pd(_mm256_cvtps_pd(_mm_loadu_ps(x + i + 4)), mu);
        a0 = _mm256_fmadd_pd(d0, d0, a0);
        a1 = _mm256_fmadd_pd(d1, d1, a1);
    }
    double s = hsum_pd(_mm256_add_pd(a0, a1));
    for (; i < n; ++i) {
        const double d = x[i] - mean;
        s += d * d;
    }
    return s;
}

static void avx2_normalize(float *y, const float *x, int64_t n, double mean, double inv, const float *g, const float *b) {
    const __m256d mu = _mm256_set1_pd(mean), iv = _mm256_set1_pd(inv);
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        __m256d v = _mm256_mul_pd(_mm256_sub_pd(_mm256_cvtps_pd(_mm_loadu_ps(x + i)), mu), iv);
        if (g) v = _mm256_mul_pd(v, _mm256_cvtps_pd(_mm_loadu_ps(g + i)));
        if (b) v = _mm256_add_pd(v, _mm256_cvtps_pd(_mm_loadu_ps(b + i)));
        _mm_storeu_ps(y + i, _mm256_cvtpd_ps(v));
    }
    for (; i < n; ++i) {
        double v = (x[i] - mean) * inv;
        if (g) v *= g[i];
        if (b) v += b[i];
        y[i] = (float)v;
    }
}

static void avx2_normalize1(float *y, const float *x, int64_t n, double mean, double scale, double shift) {
    const __m256d mu = _mm256_set1_pd(mean), sc = _mm256_set1_pd(scale), sh = _mm256_set1_pd(shift);
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) /* mul then add, unfused, as the generic row */
        _mm_storeu_ps(y + i, _mm256_cvtpd_ps(_mm256_add_pd(_mm256_mul_pd(_mm256_sub_pd(_mm256_cvtps_pd(_mm_loadu_ps(x + i)), mu), sc), sh)));
    for (; i < n; ++i) y[i] = (float)((x[i] - mean) * scale + shift);
}

static void avx2_acc_shift_f64(double *s1, double *s2, const float *x, int64_t ldx, int64_t rows, const double *k,
                               int64_t n) {
    for (int64_t r = 0; r < rows; ++r, x += ldx) {
        int64_t i = 0;
        for (; i + 4 <= n; i += 4) {
            const __m256d d = _mm256_sub_pd(_mm256_cvtps_pd(_mm_loadu_ps(x + i)), _mm256_loadu_pd(k + i));
            _mm256_storeu_pd(s1 + i, _mm256_add_pd(_mm256_loadu_pd(s1 + i), d));
            _mm256_storeu_pd(s2 + i, _mm256_fmadd_pd(d, d, _mm256_loadu_pd(s2 + i)));
        }
        for (; i < n; ++i) {
            const double d = x[i] - k[i];
            s1[i] += d;
            s2[i] += d * d;
        }
    }
}

static void avx2_normalize_each(float *y, int64_t ldy, const float *x, int64_t ldx, int64_t rows, int64_t n,
                                const double *mean, const double *scale, const double *shift, bool stream) {
    (void)stream; /* always cached stores here */
    for (int64_t r = 0; r < rows; ++r, x += ldx, y += ldy) {
        int64_t i = 0;
        for (; i + 4 <= n; i += 4) /* mul then add, unfused, as the generic row */
            _mm_storeu_ps(y + i, _mm256_cvtpd_ps(_mm256_add_pd(_mm256_mul_pd(_mm256_sub_pd(_mm256_cvtps_pd(_mm_loadu_ps(x + i)), _mm256_loadu_pd(mean + i)), _mm256_loadu_pd(scale + i)), _mm256_loadu_pd(shift + i))));
        for (; i < n; ++i) y[i] = (float)((x[i] - mean[i]) * scale[i] + shift[i]);
    }
}

static void avx2_acc_f64(double *acc, const float *x, int64_t n) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) _mm256_storeu_pd(acc + i, _mm256_add_pd(_mm256_loadu_pd(acc + i), _mm256_cvtps_pd(_mm_loadu_ps(x + i))));
    for (; i < n; ++i) acc[i] += x[i];
}

static void avx2_div_f64(float *y, const double *acc, int64_t n, double d) {
    const __m256d dv = _mm256_set1_pd(d);
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) _mm_storeu_ps(y + i, _mm256_cvtpd_ps(_mm256_div_pd(_mm256_loadu_pd(acc + i), dv)));
    for (; i < n; ++i) y[i] = (float)(acc[i] / d);
}

static void avx2_sub2(float *y, const float *x, int64_t n, float a, float b) {
    const __m256 va = _mm256_set1_ps(a), vb = _mm256_set1_ps(b);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_sub_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i), va), vb));
    for (; i < n; ++i) y[i] = x[i] - a - b;
}

/* ---- element-wise functions ---- */

static inline __m256 abs256(__m256 x) { return _mm256_andnot_ps(_mm256_set1_ps(-0.f), x); }

static inline __m256 tanh256(__m256 x) {
    const __m256 t = abs256(x);
    const __m256 small = _mm256_cmp_ps(t, _mm256_set1_ps(PT_TANH_SMALL), _CMP_LT_OQ);
    const __m256 x2 = _mm256_mul_ps(x, x);
    __m256 p = _mm256_set1_ps(PT_TANH_T15);
    p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(PT_TANH_T13));
    p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(PT_TANH_T11));
    p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(PT_TANH_T9));
    p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(PT_TANH_T7));
    p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(PT_TANH_T5));
    p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(PT_TANH_T3));
    const __m256 near0 = _mm256_fmadd_ps(_mm256_mul_ps(p, x2), x, x);
    const __m256 e = pt_avx2_exp(_mm256_add_ps(t, t));
    __m256 far = _mm256_sub_ps(_mm256_set1_ps(1.f), _mm256_div_ps(_mm256_set1_ps(2.f), _mm256_add_ps(e, _mm256_set1_ps(1.f))));
    far = _mm256_or_ps(far, _mm256_and_ps(x, _mm256_set1_ps(-0.f)));
    return _mm256_blendv_ps(far, near0, small);
}

static inline __m256 erfc256(__m256 z) {
    const __m256 t = _mm256_div_ps(_mm256_set1_ps(1.f), _mm256_fmadd_ps(z, _mm256_set1_ps(0.5f), _mm256_set1_ps(1.f)));
    __m256 p = _mm256_set1_ps(PT_ERFC_P9);
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(PT_ERFC_P8));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(PT_ERFC_P7));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(PT_ERFC_P6));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(PT_ERFC_P5));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(PT_ERFC_P4));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(PT_ERFC_P3));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(PT_ERFC_P2));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(PT_ERFC_P1));
    p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(PT_ERFC_P0));
    return _mm256_mul_ps(t, pt_avx2_exp(_mm256_fnmadd_ps(z, z, p)));
}

static inline __m256 gelu_erf256(__m256 x) {
    const __m256 c = erfc256(abs256(_mm256_mul_ps(x, _mm256_set1_ps(PT_SQRT1_2))));
    const __m256 pos = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GE_OQ);
    const __m256 w = _mm256_blendv_ps(c, _mm256_sub_ps(_mm256_set1_ps(2.f), c), pos); /* erfc(-z) */
    return _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.5f), x), w);
}

static inline __m256 gelu_tanh256(__m256 x) {
    const __m256 g = _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(PT_GELU_TANH_C), x),
                                   _mm256_fmadd_ps(_mm256_mul_ps(x, x), _mm256_set1_ps(0.044715f), _mm256_set1_ps(1.f)));
    /* (1 + tanh g) / 2 = 1 / (1 + exp(-2g)): no cancellation for negative x. */
    const __m256 e = pt_avx2_exp_terms(_mm256_mul_ps(_mm256_set1_ps(-2.f), g));
    return _mm256_div_ps(x, _mm256_add_ps(_mm256_set1_ps(1.f), e));
}

static inline __m256 sigmoid256(__m256 x) {
    const __m256 e = pt_avx2_exp_terms(_mm256_sub_ps(_mm256_setzero_ps(), x));
    return _mm256_div_ps(_mm256_set1_ps(1.f), _mm256_add_ps(_mm256_set1_ps(1.f), e));
}

static inline __m256 unit_clamp256(__m256 v) {
    v = _mm256_blendv_ps(v, _mm256_setzero_ps(), _mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_LE_OQ));
    return _mm256_blendv_ps(v, _mm256_set1_ps(1.f), _mm256_cmp_ps(v, _mm256_set1_ps(1.f), _CMP_GE_OQ));
}

static bool avx2_eltwise(const pt_eltwise_params *p, float *y, const float *x, int64_t n) {
    const __m256 zero = _mm256_setzero_ps(), alpha = _mm256_set1_ps(p->alpha), beta = _mm256_set1_ps(p->beta);
    const __m256 lo = _mm256_set1_ps(p->lo), hi = _mm256_set1_ps(p->hi);
    (void)zero, (void)alpha, (void)beta, (void)lo, (void)hi;
#define PT_UNARY_LOOP(expr)                                                    \
    {                                                                          \
        int64_t i = 0;                                                         \
        for (; i + 8 <= n; i += 8) {                                           \
            const __m256 v = _mm256_loadu_ps(x + i);                           \
            _mm256_storeu_ps(y + i, (expr));                                   \
        }                                                                      \
        if (i < n) {                                                           \
            float t[8] = {0};                                                  \
            memcpy(t, x + i, (size_t)(n - i) * sizeof *t);                     \
            const __m256 v = _mm256_loadu_ps(t);                               \
            _mm256_storeu_ps(t, (expr));                                       \
            memcpy(y + i, t, (size_t)(n - i) * sizeof *t);                     \
        }                                                                      \
        return true;                                                           \
    }
    switch (p->kind) {
        case dnnl_graph_op_relu:
            PT_UNARY_LOOP(_mm256_and_ps(_mm256_cmp_ps(v, zero, _CMP_NLE_UQ), v))
        case dnnl_graph_op_leaky_relu:
            PT_UNARY_LOOP(_mm256_blendv_ps(_mm256_mul_ps(alpha, v), v, _mm256_cmp_ps(v, zero, _CMP_GT_OQ)))
        case dnnl_graph_op_clamp: PT_UNARY_LOOP(_mm256_min_ps(_mm256_max_ps(v, lo), hi))
        case dnnl_graph_op_abs:
            PT_UNARY_LOOP(_mm256_blendv_ps(_mm256_xor_ps(v, _mm256_set1_ps(-0.f)), v, _mm256_cmp_ps(v, zero, _CMP_GT_OQ)))
        case dnnl_graph_op_square: PT_UNARY_LOOP(_mm256_mul_ps(v, v))
        case dnnl_graph_op_sqrt: PT_UNARY_LOOP(_mm256_sqrt_ps(v))
        case dnnl_graph_op_reciprocal: PT_UNARY_LOOP(_mm256_div_ps(_mm256_set1_ps(1.f), v))
        case dnnl_graph_op_round: PT_UNARY_LOOP(_mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC))
        case dnnl_graph_op_exp: PT_UNARY_LOOP(pt_avx2_exp(v))
        case dnnl_graph_op_sigmoid: PT_UNARY_LOOP(sigmoid256(v))
        case dnnl_graph_op_tanh: PT_UNARY_LOOP(tanh256(v))
        case dnnl_graph_op_gelu:
            if (p->gelu_tanh) PT_UNARY_LOOP(gelu_tanh256(v))
            PT_UNARY_LOOP(gelu_erf256(v))
        case dnnl_graph_op_hard_sigmoid: /* mul then add, unfused, as the reference */ PT_UNARY_LOOP(unit_clamp256(_mm256_add_ps(_mm256_mul_ps(alpha, v), beta)))
        case dnnl_graph_op_hard_swish:
            PT_UNARY_LOOP(_mm256_mul_ps(v, unit_clamp256(_mm256_add_ps(_mm256_mul_ps(_mm256_set1_ps(1.f / 6.f), v), _mm256_set1_ps(0.5f)))))
        default: return false;
    }
#undef PT_UNARY_LOOP
}

static bool avx2_binary(int kind, float *y, const float *a, int64_t as, const float *b, int64_t bs, int64_t n) {
    const __m256 sa = _mm256_set1_ps(as ? 0.f : a[0]), sb = _mm256_set1_ps(bs ? 0.f : b[0]);
#define PT_BINARY_LOOP(op)                                                     \
    {                                                                          \
        int64_t i = 0;                                                         \
        for (; i + 8 <= n; i += 8) {                                           \
            const __m256 u = as ? _mm256_loadu_ps(a + i) : sa;                 \
            const __m256 v = bs ? _mm256_loadu_ps(b + i) : sb;                 \
            _mm256_storeu_ps(y + i, op(u, v));                                 \
        }                                                                      \
        if (i < n) {                                                           \
            float ta[8] = {0}, tb[8] = {0};                                    \
            if (as) memcpy(ta, a + i, (size_t)(n - i) * sizeof *ta);           \
            if (bs) memcpy(tb, b + i, (size_t)(n - i) * sizeof *tb);           \
            const __m256 u = as ? _mm256_loadu_ps(ta) : sa;                    \
            const __m256 v = bs ? _mm256_loadu_ps(tb) : sb;                    \
            _mm256_storeu_ps(ta, op(u, v));                                    \
            memcpy(y + i, ta, (size_t)(n - i) * sizeof *ta);                   \
        }                                                                      \
        return true;                                                           \
    }
    switch (kind) {
        case dnnl_graph_op_add: PT_BINARY_LOOP(_mm256_add_ps)
        case dnnl_graph_op_subtract: PT_BINARY_LOOP(_mm256_sub_ps)
        case dnnl_graph_op_multiply: PT_BINARY_LOOP(_mm256_mul_ps)
        case dnnl_graph_op_divide: PT_BINARY_LOOP(_mm256_div_ps)
        case dnnl_graph_op_maximum: PT_BINARY_LOOP(_mm256_max_ps) /* u > v ? u : v, as the reference */
        case dnnl_graph_op_minimum: PT_BINARY_LOOP(_mm256_min_ps) /* u < v ? u : v */
        default: return false;
    }
#undef PT_BINARY_LOOP
}

/* ---- 8-bit integers ---- */

static void avx2_s8_to_f32(float *dst, const int8_t *src, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(dst + i, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(src + i)))));
    for (; i < n; ++i) dst[i] = (float)src[i];
}

static void avx2_u8_to_f32(float *dst, const uint8_t *src, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(dst + i, _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(src + i)))));
    for (; i < n; ++i) dst[i] = (float)src[i];
}

/* Eight values clamped, rounded to nearest even, NaN -> 0, as 8 x s32. */
static inline __m256i to_int32_clamped(__m256 v, float lo, float hi) {
    const __m256 ord = _mm256_cmp_ps(v, v, _CMP_ORD_Q);
    v = _mm256_min_ps(_mm256_max_ps(v, _mm256_set1_ps(lo)), _mm256_set1_ps(hi));
    return _mm256_cvtps_epi32(_mm256_and_ps(v, ord));
}

/* 8 x s32 (already in range) to 8 bytes. */
static inline __m128i pack8(__m256i q) {
    const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
    return _mm_packs_epi16(w, w);
}

static inline __m128i pack8u(__m256i q) {
    const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
    return _mm_packus_epi16(w, w);
}

static void avx2_f32_to_s8(int8_t *dst, const float *src, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm_storel_epi64((__m128i *)(dst + i), pack8(to_int32_clamped(_mm256_loadu_ps(src + i), -128.f, 127.f)));
    for (; i < n; ++i) dst[i] = (int8_t)_mm_cvtsi128_si32(pack8(to_int32_clamped(_mm256_set1_ps(src[i]), -128.f, 127.f)));
}

static void avx2_f32_to_u8(uint8_t *dst, const float *src, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm_storel_epi64((__m128i *)(dst + i), pack8u(to_int32_clamped(_mm256_loadu_ps(src + i), 0.f, 255.f)));
    for (; i < n; ++i) dst[i] = (uint8_t)_mm_cvtsi128_si32(pack8u(to_int32_clamped(_mm256_set1_ps(src[i]), 0.f, 255.f)));
}

const pt_vec_ops pt_vec_row_avx2 = {.name = "avx2",
                                    .level = PT_ISA_AVX2,
                                    .max = avx2_max,
                                    .exp_sum = avx2_exp_sum,
                                    .scale = avx2_scale,
                                    .bf16_to_f32 = avx2_bf16_to_f32,
                                    .f32_to_bf16 = avx2_f32_to_bf16,
                                    .f16_to_f32 = avx2_f16_to_f32,
                                    .f32_to_f16 = avx2_f32_to_f16,
                                    .sum_f64 = avx2_sum_f64,
                                    .sum_sq_dev_f64 = avx2_sum_sq_dev_f64,
                                    .normalize = avx2_normalize,
                                    .normalize1 = avx2_normalize1,
                                    .acc_shift_f64 = avx2_acc_shift_f64,
                                    .normalize_each = avx2_normalize_each,
                                    .acc_f64 = avx2_acc_f64,
                                    .div_f64 = avx2_div_f64,
                                    .sub2 = avx2_sub2,
                                    .eltwise = avx2_eltwise,
                                    .binary = avx2_binary,
                                    .s8_to_f32 = avx2_s8_to_f32,
                                    .u8_to_f32 = avx2_u8_to_f32,
                                    .f32_to_s8 = avx2_f32_to_s8,
                                    .f32_to_u8 = avx2_f32_to_u8};
