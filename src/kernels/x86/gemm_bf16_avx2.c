/* BF16 microkernel for AVX2-only CPUs: a 6 x 16 tile in 12 ymm
 * accumulators.  A bf16 is the top half of an f32, so each k pair widens
 * with one shift (even k) and one mask (odd k) and goes through two FMAs. */
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "kernels/x86/gemm_ukr_float_x86.h"

#define MR PT_GEMM_AVX2_BF16_MR
#define NR PT_GEMM_AVX2_BF16_NR

static inline __m256i lane_mask(int n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* Even (low) and odd (high) bf16 of each 32-bit lane as f32. */
static inline __m256 even_f32(__m256i pairs) { return _mm256_castsi256_ps(_mm256_slli_epi32(pairs, 16)); }
static inline __m256 odd_f32(__m256i pairs, __m256i hi) { return _mm256_castsi256_ps(_mm256_and_si256(pairs, hi)); }

static inline int32_t load_pair(const uint16_t *p) {
    int32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline void store_row(float *c, __m256 v0, __m256 v1, int nr, __m256i m0, __m256i m1, int accumulate) {
    if (nr == NR) {
        if (accumulate) v0 = _mm256_add_ps(v0, _mm256_loadu_ps(c)), v1 = _mm256_add_ps(v1, _mm256_loadu_ps(c + 8));
        _mm256_storeu_ps(c, v0);
        _mm256_storeu_ps(c + 8, v1);
        return;
    }
    if (accumulate) {
        v0 = _mm256_add_ps(v0, _mm256_maskload_ps(c, m0));
        v1 = _mm256_add_ps(v1, _mm256_maskload_ps(c + 8, m1));
    }
    _mm256_maskstore_ps(c, m0, v0);
    _mm256_maskstore_ps(c + 8, m1, v1);
}

#define DECL(i) __m256 c##i##_0 = _mm256_setzero_ps(), c##i##_1 = _mm256_setzero_ps();
#define STEP(i)                                                         \
    {                                                                   \
        __m256i pair = _mm256_set1_epi32(load_pair(ap + 2 * (i)));      \
        __m256 a_even = even_f32(pair), a_odd = odd_f32(pair, hi);      \
        c##i##_0 = _mm256_fmadd_ps(a_even, b0e, c##i##_0);              \
        c##i##_1 = _mm256_fmadd_ps(a_even, b1e, c##i##_1);              \
        c##i##_0 = _mm256_fmadd_ps(a_odd, b0o, c##i##_0);               \
        c##i##_1 = _mm256_fmadd_ps(a_odd, b1o, c##i##_1);               \
    }
#define STORE(i) \
    if (i < mr) store_row(cp + (i) * ldc, c##i##_0, c##i##_1, nr, m0, m1, accumulate);

void pt_gemm_ukr_avx2_bf16(int64_t kc, const void *a, const void *b, void *c, int64_t ldc, int mr, int nr,
                           int accumulate) {
    const uint16_t *ap = a, *bp = b;
    float *cp = c;
    const __m256i hi = _mm256_set1_epi32((int32_t)0xffff0000u);
    DECL(0) DECL(1) DECL(2) DECL(3) DECL(4) DECL(5)
    for (int64_t k = 0; k < kc; k += 2, ap += 2 * MR, bp += 2 * NR) {
        __m256i p0 = _mm256_loadu_si256((const __m256i *)bp), p1 = _mm256_loadu_si256((const __m256i *)(bp + 16));
        __m256 b0e = even_f32(p0), b0o = odd_f32(p0, hi), b1e = even_f32(p1), b1o = odd_f32(p1, hi);
        STEP(0) STEP(1) STEP(2) STEP(3) STEP(4) STEP(5)
    }
    __m256i m0 = lane_mask(nr), m1 = lane_mask(nr - 8);
    STORE(0) STORE(1) STORE(2) STORE(3) STORE(4) STORE(5)
}
