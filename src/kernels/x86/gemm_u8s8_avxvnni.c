/* U8S8 microkernel on AVX-VNNI (VEX vpdpbusd on ymm): a 6 x 16 s32 tile in
 * 12 ymm accumulators; per k quad two 32-byte B loads, six A broadcasts and
 * 12 independent vpdpbusd. */
#include <immintrin.h>

#include "kernels/x86/gemm_u8s8_x86.h"

#define MR PT_GEMM_U8S8_AVXVNNI_MR
#define NR PT_GEMM_U8S8_AVXVNNI_NR

static inline int32_t quad_at(const uint8_t *p) {
    int32_t v;
    __builtin_memcpy(&v, p, sizeof v);
    return v;
}

/* Lane mask of the first n of 8 dwords (n clamped to [0, 8]). */
static inline __m256i lane_mask(int n) {
    n = n < 0 ? 0 : n > 8 ? 8 : n;
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

static inline void store_half(int32_t *c, __m256i v, __m256i mask, int full, int accumulate) {
    if (full) {
        if (accumulate) v = _mm256_add_epi32(v, _mm256_loadu_si256((const __m256i *)c));
        _mm256_storeu_si256((__m256i *)c, v);
    } else {
        if (accumulate) v = _mm256_add_epi32(v, _mm256_maskload_epi32(c, mask));
        _mm256_maskstore_epi32(c, mask, v);
    }
}

/* Named accumulators: an array of them was kept on the stack by GCC. */
#define DECL(i) __m256i c##i##_0 = _mm256_setzero_si256(), c##i##_1 = _mm256_setzero_si256();
#define STEP(i)                                                  \
    {                                                            \
        __m256i ai = _mm256_set1_epi32(quad_at(ap + 4 * (i)));   \
        c##i##_0 = _mm256_dpbusd_avx_epi32(c##i##_0, ai, b0);    \
        c##i##_1 = _mm256_dpbusd_avx_epi32(c##i##_1, ai, b1);    \
    }
#define STORE(i)                                                                              \
    if (i < mr) {                                                                             \
        if (nr > 0) store_half(cc + (i) * ldc, c##i##_0, m0, nr >= 8, accumulate);            \
        if (nr > 8) store_half(cc + (i) * ldc + 8, c##i##_1, m1, nr >= 16, accumulate);       \
    }

void pt_gemm_ukr_avxvnni_u8s8(int64_t kc, const void *a, const void *b, void *c, int64_t ldc, int mr, int nr,
                              int accumulate) {
    const uint8_t *ap = a;
    const int8_t *bp = b;
    DECL(0) DECL(1) DECL(2) DECL(3) DECL(4) DECL(5)
    for (int64_t k = 0; k < kc; k += 4, ap += 4 * MR, bp += 4 * NR) {
        __m256i b0 = _mm256_loadu_si256((const __m256i *)bp), b1 = _mm256_loadu_si256((const __m256i *)(bp + 32));
        STEP(0) STEP(1) STEP(2) STEP(3) STEP(4) STEP(5)
    }
    int32_t *cc = c;
    __m256i m0 = lane_mask(nr), m1 = lane_mask(nr - 8);
    STORE(0) STORE(1) STORE(2) STORE(3) STORE(4) STORE(5)
}
