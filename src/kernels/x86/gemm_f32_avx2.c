/* F32 microkernel for AVX2: a 6 x 16 tile in 12 ymm accumulators (two FMA
 * pipes at latency 4 need at least 8 independent chains). */
#include <immintrin.h>
#include <stdint.h>

#include "kernels/x86/gemm_prefetch_x86.h"
#include "kernels/x86/gemm_ukr_float_x86.h"

#define MR PT_GEMM_AVX2_F32_MR
#define NR PT_GEMM_AVX2_F32_NR

/* Lane j of the mask is set when j < n (maskload / maskstore take sign bits). */
static inline __m256i lane_mask(int n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* Writes (or adds) one accumulator row into c, only the first nr columns. */
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
#define STEP(i)                                       \
    {                                                 \
        __m256 ai = _mm256_broadcast_ss(ap + (i));    \
        c##i##_0 = _mm256_fmadd_ps(ai, b0, c##i##_0); \
        c##i##_1 = _mm256_fmadd_ps(ai, b1, c##i##_1); \
    }
/* B from the packed panel, or (packing form) from the source row, zero
 * past bcols, stored into the panel on the way; source rows fetched into
 * L2 SOURCE_AHEAD k on (integer addresses: they may lie past the source),
 * as the AVX-512 row does (why there): 128x4096x4096 under PARTITA_ISA=avx2
 * 30.4 -> 29.0 ms against 32 rows into L1. */
#define SOURCE_AHEAD 64
#define LOAD_B                                                                                   \
    if (bs) {                                                                                    \
        _mm_prefetch((const char *)(brow + (uintptr_t)(SOURCE_AHEAD * bld * 4)), _MM_HINT_T1);   \
        b0 = _mm256_maskload_ps((const float *)brow, bm0);                                       \
        b1 = _mm256_maskload_ps((const float *)(brow + 32), bm1);                                \
        _mm256_storeu_ps(bd, b0), _mm256_storeu_ps(bd + 8, b1);                                  \
        brow += (uintptr_t)(bld * 4), bd += NR;                                                  \
    } else {                                                                                     \
        b0 = _mm256_loadu_ps(bp), b1 = _mm256_loadu_ps(bp + 8);                                  \
    }
#define STORE(i) \
    if (i < mr) store_row(cp + (i) * ldc, c##i##_0, c##i##_1, nr, m0, m1, accumulate);

static inline __attribute__((always_inline)) void tile(int64_t kc, const void *a, const void *b, void *c,
                                                       int64_t ldc, int mr, int nr, int accumulate,
                                                       pt_gemm_prefetch *pf, const float *bs, int64_t bld, int bcols,
                                                       float *bd) {
    const float *ap = a, *bp = b;
    float *cp = c;
    DECL(0) DECL(1) DECL(2) DECL(3) DECL(4) DECL(5)
    const __m256i bm0 = lane_mask(bcols), bm1 = lane_mask(bcols - 8);
    uintptr_t brow = (uintptr_t)bs; /* next source row (an integer: it steps past the source) */
    pt_pf_cursor pfc = pt_pf_open(pf);
    for (int64_t k = 0, step = 0; k < kc; ++k, ap += MR, bp += NR, ++step) {
        if (pf && step % PT_GEMM_PREFETCH_STEPS == 0) pt_pf_step(&pfc);
        __m256 b0, b1;
        LOAD_B
        STEP(0) STEP(1) STEP(2) STEP(3) STEP(4) STEP(5)
    }
    pt_pf_close(&pfc, pf);
    __m256i m0 = lane_mask(nr), m1 = lane_mask(nr - 8);
    STORE(0) STORE(1) STORE(2) STORE(3) STORE(4) STORE(5)
}

void pt_gemm_ukr_avx2_f32(int64_t kc, const void *a, const void *b, void *c, int64_t ldc, int mr, int nr,
                          int accumulate) {
    tile(kc, a, b, c, ldc, mr, nr, accumulate, NULL, NULL, 0, 0, NULL);
}

void pt_gemm_ukr_avx2_f32_pf(int64_t kc, const void *a, const void *b, void *c, int64_t ldc, int mr, int nr,
                             int accumulate, pt_gemm_prefetch *pf) {
    tile(kc, a, b, c, ldc, mr, nr, accumulate, pf, NULL, 0, 0, NULL);
}

void pt_gemm_ukr_avx2_f32_packing(int64_t kc, const void *a, const void *b_src, int64_t b_ld, int b_cols,
                                  void *b_dst, int32_t *b_sums, void *c, int64_t ldc, int mr, int nr, int accumulate,
                                  pt_gemm_prefetch *pf) {
    (void)b_sums; /* an F32 row sums nothing */
    tile(kc, a, b_dst, c, ldc, mr, nr, accumulate, pf, b_src, b_ld, b_cols, b_dst); /* the panel as b: stepped, not read */
}
