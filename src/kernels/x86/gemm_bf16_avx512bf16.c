/* BF16 microkernel for AVX512_BF16: a 12 x 32 tile in 24 zmm accumulators;
 * each vdpbf16ps adds the products of one k pair (A pair broadcast, B pairs
 * of 16 columns), twice the f32 FMA rate. */
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "kernels/x86/gemm_ukr_float_x86.h"
#include "kernels/x86/gemm_prefetch_x86.h"

#define MR PT_GEMM_AVX512BF16_MR
#define NR PT_GEMM_AVX512BF16_NR

static inline __mmask16 lane_mask(int n) { return n >= 16 ? (__mmask16)0xffff : n <= 0 ? 0 : (__mmask16)((1u << n) - 1); }

/* One k pair of A row i as a 32-bit lane. */
static inline int32_t load_pair(const uint16_t *p) {
    int32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* Writes (or adds) one accumulator row into c, only the first nr columns. */
static inline void store_row(float *c, __m512 v0, __m512 v1, __mmask16 m0, __mmask16 m1, int accumulate) {
    if (accumulate) {
        v0 = _mm512_add_ps(v0, _mm512_maskz_loadu_ps(m0, c));
        v1 = _mm512_add_ps(v1, _mm512_maskz_loadu_ps(m1, c + 16));
    }
    _mm512_mask_storeu_ps(c, m0, v0);
    _mm512_mask_storeu_ps(c + 16, m1, v1);
}

#define DECL(i) __m512 c##i##_0 = _mm512_setzero_ps(), c##i##_1 = _mm512_setzero_ps();
#define STEP(i)                                                                    \
    {                                                                              \
        __m512bh ai = (__m512bh)_mm512_set1_epi32(load_pair(ap + 2 * (i)));        \
        c##i##_0 = _mm512_dpbf16_ps(c##i##_0, ai, b0);                             \
        c##i##_1 = _mm512_dpbf16_ps(c##i##_1, ai, b1);                             \
    }
#define STORE(i) \
    if (i < mr) store_row(cp + (i) * ldc, c##i##_0, c##i##_1, m0, m1, accumulate);

/* The same for at most 8 rows (16 accumulators): the last row tile of a
 * block whose rows are not a multiple of 12 (128 = 10 x 12 + 8) no longer
 * computes four rows for nothing. */
static inline __attribute__((always_inline)) void rows8(int64_t kc, const void *a, const void *b, void *c,
                                                        int64_t ldc, int mr, int nr, int accumulate,
                                                        pt_gemm_prefetch *pf) {
    const uint16_t *ap = a, *bp = b;
    float *cp = c;
    DECL(0) DECL(1) DECL(2) DECL(3) DECL(4) DECL(5) DECL(6) DECL(7)
    for (int i = 0; i < mr; ++i) {
        _mm_prefetch((const char *)(cp + i * ldc), _MM_HINT_T0);
        if (nr > 16) _mm_prefetch((const char *)(cp + i * ldc + 16), _MM_HINT_T0);
    }
    pt_pf_cursor pfc = pt_pf_open(pf);
    for (int64_t k = 0, step = 0; k < kc; k += 2, ap += 2 * MR, bp += 2 * NR, ++step) {
        if (pf && step % PT_GEMM_PREFETCH_STEPS == 0) pt_pf_step(&pfc);
        __m512bh b0 = (__m512bh)_mm512_loadu_si512(bp), b1 = (__m512bh)_mm512_loadu_si512(bp + 32);
        STEP(0) STEP(1) STEP(2) STEP(3) STEP(4) STEP(5) STEP(6) STEP(7)
    }
    pt_pf_close(&pfc, pf);
    __mmask16 m0 = lane_mask(nr), m1 = lane_mask(nr - 16);
    STORE(0) STORE(1) STORE(2) STORE(3) STORE(4) STORE(5) STORE(6) STORE(7)
}

static inline __attribute__((always_inline)) void tile(int64_t kc, const void *a, const void *b, void *c,
                                                       int64_t ldc, int mr, int nr, int accumulate,
                                                       pt_gemm_prefetch *pf) {
    const uint16_t *ap = a, *bp = b;
    float *cp = c;
    if (mr <= 8) {
        rows8(kc, a, b, c, ldc, mr, nr, accumulate, pf);
        return;
    }
    DECL(0) DECL(1) DECL(2) DECL(3) DECL(4) DECL(5) DECL(6) DECL(7) DECL(8) DECL(9) DECL(10) DECL(11)
    /* Both lines of each C row: the tile often comes from L3 (a thread's C
     * rows outgrow L2), and the k loop hides the fetch (a C row's second
     * line left unfetched cost about 6 % of the kernel at 1024^3). */
    for (int i = 0; i < mr; ++i) {
        _mm_prefetch((const char *)(cp + i * ldc), _MM_HINT_T0);
        if (nr > 16) _mm_prefetch((const char *)(cp + i * ldc + 16), _MM_HINT_T0);
    }
    pt_pf_cursor pfc = pt_pf_open(pf);
    for (int64_t k = 0, step = 0; k < kc; k += 2, ap += 2 * MR, bp += 2 * NR, ++step) {
        if (pf && step % PT_GEMM_PREFETCH_STEPS == 0) pt_pf_step(&pfc);
        __m512bh b0 = (__m512bh)_mm512_loadu_si512(bp), b1 = (__m512bh)_mm512_loadu_si512(bp + 32);
        STEP(0) STEP(1) STEP(2) STEP(3) STEP(4) STEP(5) STEP(6) STEP(7) STEP(8) STEP(9) STEP(10) STEP(11)
    }
    pt_pf_close(&pfc, pf);
    __mmask16 m0 = lane_mask(nr), m1 = lane_mask(nr - 16);
    STORE(0) STORE(1) STORE(2) STORE(3) STORE(4) STORE(5) STORE(6) STORE(7) STORE(8) STORE(9) STORE(10) STORE(11)
}

void pt_gemm_ukr_avx512bf16_bf16(int64_t kc, const void *a, const void *b, void *c, int64_t ldc, int mr, int nr,
                                 int accumulate) {
    tile(kc, a, b, c, ldc, mr, nr, accumulate, NULL);
}

void pt_gemm_ukr_avx512bf16_bf16_pf(int64_t kc, const void *a, const void *b, void *c, int64_t ldc, int mr, int nr,
                                    int accumulate, pt_gemm_prefetch *pf) {
    tile(kc, a, b, c, ldc, mr, nr, accumulate, pf);
}
