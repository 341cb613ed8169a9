/* U8S8 microkernel on AVX-512 VNNI: a 12 x 32 s32 tile in 24 zmm
 * accumulators.  Per k quad: two 64-byte B loads (32 columns x 4 k), twelve
 * dword broadcasts of A (vpdpbusd can only broadcast its s8 operand, so A's
 * u8 quads are broadcast into registers) and 24 independent vpdpbusd. */
#include <immintrin.h>

#include "kernels/x86/gemm_u8s8_x86.h"
#include "kernels/x86/gemm_prefetch_x86.h"

#define MR PT_GEMM_U8S8_AVX512_MR
#define NR PT_GEMM_U8S8_AVX512_NR

static inline int32_t quad_at(const uint8_t *p) {
    int32_t v;
    __builtin_memcpy(&v, p, sizeof v);
    return v;
}

/* Writes (or adds) one row of the tile; masks cover the column tail. */
static inline void store_row(int32_t *c, __m512i lo, __m512i hi, __mmask16 mlo, __mmask16 mhi, int accumulate) {
    if (accumulate) {
        lo = _mm512_add_epi32(lo, _mm512_maskz_loadu_epi32(mlo, c));
        hi = _mm512_add_epi32(hi, _mm512_maskz_loadu_epi32(mhi, c + 16));
    }
    _mm512_mask_storeu_epi32(c, mlo, lo);
    _mm512_mask_storeu_epi32(c + 16, mhi, hi);
}

/* Named accumulators, not an array: GCC kept acc[MR][2] on the stack and
 * copied every accumulator through memory each k quad (~35 % of peak). */
#define DECL(i) __m512i c##i##_0 = _mm512_setzero_si512(), c##i##_1 = _mm512_setzero_si512();
#define STEP(i)                                                   \
    {                                                             \
        __m512i ai = _mm512_set1_epi32(quad_at(ap + 4 * (i)));    \
        c##i##_0 = _mm512_dpbusd_epi32(c##i##_0, ai, b0);         \
        c##i##_1 = _mm512_dpbusd_epi32(c##i##_1, ai, b1);         \
    }
#define STORE(i) \
    if (i < mr) store_row(cc + (i) * ldc, c##i##_0, c##i##_1, mlo, mhi, accumulate);

/* The same for at most 8 rows (16 accumulators): the last row tile of a
 * block whose rows are not a multiple of 12 (128 = 10 x 12 + 8) no longer
 * computes four rows for nothing. */
static inline __attribute__((always_inline)) void rows8(int64_t kc, const void *a, const void *b, void *c,
                                                        int64_t ldc, int mr, int nr, int accumulate,
                                                        pt_gemm_prefetch *pf) {
    const uint8_t *ap = a;
    const int8_t *bp = b;
    int32_t *cc = c;
    DECL(0) DECL(1) DECL(2) DECL(3) DECL(4) DECL(5) DECL(6) DECL(7)
    for (int i = 0; i < mr; ++i) {
        _mm_prefetch((const char *)(cc + i * ldc), _MM_HINT_T0);
        if (nr > 16) _mm_prefetch((const char *)(cc + i * ldc + 16), _MM_HINT_T0);
    }
    pt_pf_cursor pfc = pt_pf_open(pf);
    for (int64_t k = 0, step = 0; k < kc; k += 4, ap += 4 * MR, bp += 4 * NR, ++step) {
        if (pf && step % PT_GEMM_PREFETCH_STEPS == 0) pt_pf_step(&pfc);
        __m512i b0 = _mm512_loadu_si512(bp), b1 = _mm512_loadu_si512(bp + 64);
        STEP(0) STEP(1) STEP(2) STEP(3) STEP(4) STEP(5) STEP(6) STEP(7)
    }
    pt_pf_close(&pfc, pf);
    __mmask16 mlo = nr >= 16 ? 0xffff : (__mmask16)((1u << nr) - 1);
    __mmask16 mhi = nr >= 32 ? 0xffff : nr <= 16 ? 0 : (__mmask16)((1u << (nr - 16)) - 1);
    STORE(0) STORE(1) STORE(2) STORE(3) STORE(4) STORE(5) STORE(6) STORE(7)
}

static inline __attribute__((always_inline)) void tile(int64_t kc, const void *a, const void *b, void *c,
                                                       int64_t ldc, int mr, int nr, int accumulate,
                                                       pt_gemm_prefetch *pf) {
    const uint8_t *ap = a;
    const int8_t *bp = b;
    int32_t *cc = c;
    if (mr <= 8) {
        rows8(kc, a, b, c, ldc, mr, nr, accumulate, pf);
        return;
    }
    DECL(0) DECL(1) DECL(2) DECL(3) DECL(4) DECL(5) DECL(6) DECL(7) DECL(8) DECL(9) DECL(10) DECL(11)
    /* Both lines of each C row: the tile often comes from L3 (a thread's C
     * rows outgrow L2), and the k loop hides the fetch (a C row's second
     * line left unfetched cost about 6 % of the kernel at 1024^3). */
    for (int i = 0; i < mr; ++i) {
        _mm_prefetch((const char *)(cc + i * ldc), _MM_HINT_T0);
        if (nr > 16) _mm_prefetch((const char *)(cc + i * ldc + 16), _MM_HINT_T0);
    }
    pt_pf_cursor pfc = pt_pf_open(pf);
    for (int64_t k = 0, step = 0; k < kc; k += 4, ap += 4 * MR, bp += 4 * NR, ++step) {
        if (pf && step % PT_GEMM_PREFETCH_STEPS == 0) pt_pf_step(&pfc);
        __m512i b0 = _mm512_loadu_si512(bp), b1 = _mm512_loadu_si512(bp + 64);
        STEP(0) STEP(1) STEP(2) STEP(3) STEP(4) STEP(5) STEP(6) STEP(7) STEP(8) STEP(9) STEP(10) STEP(11)
    }
    pt_pf_close(&pfc, pf);
    __mmask16 mlo = nr >= 16 ? 0xffff : (__mmask16)((1u << nr) - 1);
    __mmask16 mhi = nr >= 32 ? 0xffff : nr <= 16 ? 0 : (__mmask16)((1u << (nr - 16)) - 1);
    STORE(0) STORE(1) STORE(2) STORE(3) STORE(4) STORE(5) STORE(6) STORE(7) STORE(8) STORE(9) STORE(10) STORE(11)
}

void pt_gemm_ukr_avx512vnni_u8s8(int64_t kc, const void *a, const void *b, void *c, int64_t ldc, int mr, int nr,
                                 int accumulate) {
    tile(kc, a, b, c, ldc, mr, nr, accumulate, NULL);
}

void pt_gemm_ukr_avx512vnni_u8s8_pf(int64_t kc, const void *a, const void *b, void *c, int64_t ldc, int mr, int nr,
                                    int accumulate, pt_gemm_prefetch *pf) {
    tile(kc, a, b, c, ldc, mr, nr, accumulate, pf);
}
