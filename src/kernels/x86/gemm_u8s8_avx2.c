/* U8S8 microkernel on plain AVX2, exact: a 6 x 8 s32 tile.  Each k quad of
 * 8 B columns (32 s8) is widened to two vectors of s16 [column][k0..k3]; the
 * row's A quad, widened to s16 and broadcast as one qword, meets it in
 * vpmaddwd, which leaves per column two partial sums (k0+k1, k2+k3) in
 * adjacent dwords.  Those pairs stay apart in the accumulators until the
 * store, where one vphaddd joins them.  u8 * s8 pair sums fit s32 exactly
 * (vpmaddubsw would saturate at s16). */
#include <immintrin.h>

#include "kernels/x86/gemm_u8s8_x86.h"

#define MR PT_GEMM_U8S8_AVX2_MR
#define NR PT_GEMM_U8S8_AVX2_NR

/* The A quad at p as four s16, broadcast to every qword. */
static inline __m256i a_quad_s16(const uint8_t *p) {
    int32_t v;
    __builtin_memcpy(&v, p, sizeof v);
    __m128i w = _mm_cvtepu8_epi16(_mm_cvtsi32_si128(v));
    return _mm256_broadcastq_epi64(w);
}

/* One row of the tile: hadd within 128-bit lanes gives columns
 * 0 1 4 5 | 2 3 6 7, which a qword permute puts in order. */
static inline void store_row(int32_t *row, __m256i lo, __m256i hi, __m256i mask, int nr, int accumulate) {
    __m256i s = _mm256_permute4x64_epi64(_mm256_hadd_epi32(lo, hi), _MM_SHUFFLE(3, 1, 2, 0));
    if (nr >= NR) {
        if (accumulate) s = _mm256_add_epi32(s, _mm256_loadu_si256((const __m256i *)row));
        _mm256_storeu_si256((__m256i *)row, s);
    } else {
        if (accumulate) s = _mm256_add_epi32(s, _mm256_maskload_epi32(row, mask));
        _mm256_maskstore_epi32(row, mask, s);
    }
}

/* Named accumulators (an array of them was kept on the stack by GCC):
 * c<i>_0 holds columns 0-3 of row i as (k01, k23) dword pairs, c<i>_1 4-7. */
#define DECL(i) __m256i c##i##_0 = _mm256_setzero_si256(), c##i##_1 = _mm256_setzero_si256();
#define STEP(i)                                                          \
    {                                                                    \
        __m256i ai = a_quad_s16(ap + 4 * (i));                           \
        c##i##_0 = _mm256_add_epi32(c##i##_0, _mm256_madd_epi16(ai, b0)); \
        c##i##_1 = _mm256_add_epi32(c##i##_1, _mm256_madd_epi16(ai, b1)); \
    }
#define STORE(i) \
    if (i < mr) store_row(cc + (i) * ldc, c##i##_0, c##i##_1, mask, nr, accumulate);

void pt_gemm_ukr_avx2_u8s8(int64_t kc, const void *a, const void *b, void *c, int64_t ldc, int mr, int nr,
                           int accumulate) {
    const uint8_t *ap = a;
    const int8_t *bp = b;
    DECL(0) DECL(1) DECL(2) DECL(3) DECL(4) DECL(5)
    for (int64_t k = 0; k < kc; k += 4, ap += 4 * MR, bp += 4 * NR) {
        __m256i b0 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)bp));
        __m256i b1 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(bp + 16)));
        STEP(0) STEP(1) STEP(2) STEP(3) STEP(4) STEP(5)
    }
    int32_t *cc = c;
    __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(nr), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    STORE(0) STORE(1) STORE(2) STORE(3) STORE(4) STORE(5)
}
