/* F32 microkernel for AVX-512: a 12 x 32 tile in 24 zmm accumulators.  Zen 4
 * and Skylake-X retire one zmm FMA (or two ymm) per cycle at latency 4, so
 * 24 independent chains keep the FMA pipes busy while the 2 B loads and 12
 * broadcasts per k ride the load ports. */
#include <immintrin.h>
#include <stdint.h>

#include "kernels/x86/gemm_ukr_float_x86.h"
#include "kernels/x86/gemm_prefetch_x86.h"

#define MR PT_GEMM_AVX512_F32_MR
#define NR PT_GEMM_AVX512_F32_NR

static inline __mmask16 lane_mask(int n) { return n >= 16 ? (__mmask16)0xffff : n <= 0 ? 0 : (__mmask16)((1u << n) - 1); }

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
#define STEP(i)                                   \
    {                                             \
        __m512 ai = _mm512_set1_ps(ap[i]);        \
        c##i##_0 = _mm512_fmadd_ps(ai, b0, c##i##_0); \
        c##i##_1 = _mm512_fmadd_ps(ai, b1, c##i##_1); \
    }
/* B from the packed panel, or (packing form) from the source rows, zero
 * past bcols, stored into the panel on the way (columns past NR, up to
 * 2·NR, into the next strip's panel, kc rows on: pt_gemm_ukr_packing_fn).  The source rows lie a
 * page or more apart, so the kernel fetches them SOURCE_AHEAD k on (as an
 * integer address: it may lie past the source), into L2: with a row stride
 * of a multiple of 4 KiB every row's lines fall in the same one or two L1
 * sets (12 ways), so fetches into L1 further ahead than a few rows were
 * evicted before use; perf put half the packing call's samples on the
 * source loads.  128x4096x4096, alternating builds: 32 rows into L1
 * 16.9 ms (4, 8, 16 alike), into L2 16 rows 16.7, 32 16.1, 64 15.9, 96
 * 16.0, 128 16.5. */
#define SOURCE_AHEAD 64
#define LOAD_B                                                                            \
    if (bs) {                                                                             \
        const uintptr_t ahead = brow + (uintptr_t)(SOURCE_AHEAD * bld * 4);                   \
        _mm_prefetch((const char *)ahead, _MM_HINT_T1);                                       \
        _mm_prefetch((const char *)(ahead + 64), _MM_HINT_T1);                                \
        b0 = _mm512_maskz_loadu_ps(bm0, (const void *)brow);                                  \
        b1 = _mm512_maskz_loadu_ps(bm1, (const void *)(brow + 64));                           \
        _mm512_storeu_ps(bd, b0), _mm512_storeu_ps(bd + 16, b1);                          \
        if (bcols > NR) {                                                                 \
            _mm_prefetch((const char *)(ahead + 128), _MM_HINT_T1);                           \
            _mm_prefetch((const char *)(ahead + 192), _MM_HINT_T1);                           \
            _mm512_storeu_ps(bd + kc * NR, _mm512_maskz_loadu_ps(bm2, (const void *)(brow + 128))); \
            _mm512_storeu_ps(bd + kc * NR + 16, _mm512_maskz_loadu_ps(bm3, (const void *)(brow + 192))); \
        }                                                                                 \
        brow += (uintptr_t)(bld * 4), bd += NR;                                               \
    } else {                                                                              \
        b0 = _mm512_loadu_ps(bp), b1 = _mm512_loadu_ps(bp + 16);                          \
    }
/* Both lines of each C row fetched, then the k loop: B from the panel or
 * the source (LOAD_B), the prefetch stream on the way, `steps` per k. */
#define K_LOOP(steps)                                                                      \
    for (int i = 0; i < mr; ++i) {                                                         \
        _mm_prefetch((const char *)(cp + i * ldc), _MM_HINT_T0);                           \
        if (nr > 16) _mm_prefetch((const char *)(cp + i * ldc + 16), _MM_HINT_T0);         \
    }                                                                                      \
    const __mmask16 bm0 = lane_mask(bcols), bm1 = lane_mask(bcols - 16);                   \
    const __mmask16 bm2 = lane_mask(bcols - 32), bm3 = lane_mask(bcols - 48);              \
    uintptr_t brow = (uintptr_t)bs; /* next source row (an integer: it steps past it) */   \
    pt_pf_cursor pfc = pt_pf_open(pf);                                                     \
    for (int64_t k = 0, step = 0; k < kc; ++k, ap += MR, bp += NR, ++step) {               \
        if (pf && step % PT_GEMM_PREFETCH_STEPS == 0) pt_pf_step(&pfc);                   \
        __m512 b0, b1;                                                                     \
        LOAD_B                                                                             \
        steps                                                                              \
    }                                                                                      \
    pt_pf_close(&pfc, pf);
#define STORE(i) \
    if (i < mr) store_row(cp + (i) * ldc, c##i##_0, c##i##_1, m0, m1, accumulate);

/* The same for at most 8 rows (16 accumulators): the last row tile of a
 * block whose rows are not a multiple of 12 (128 = 10 x 12 + 8) no longer
 * computes four rows for nothing. */
static inline __attribute__((always_inline)) void rows8(int64_t kc, const void *a, const void *b, void *c,
                                                        int64_t ldc, int mr, int nr, int accumulate,
                                                        pt_gemm_prefetch *pf, const float *bs, int64_t bld,
                                                        int bcols, float *bd) {
    const float *ap = a, *bp = b;
    float *cp = c;
    DECL(0) DECL(1) DECL(2) DECL(3) DECL(4) DECL(5) DECL(6) DECL(7)
    K_LOOP(STEP(0) STEP(1) STEP(2) STEP(3) STEP(4) STEP(5) STEP(6) STEP(7))
    __mmask16 m0 = lane_mask(nr), m1 = lane_mask(nr - 16);
    STORE(0) STORE(1) STORE(2) STORE(3) STORE(4) STORE(5) STORE(6) STORE(7)
}

static inline __attribute__((always_inline)) void tile(int64_t kc, const void *a, const void *b, void *c,
                                                       int64_t ldc, int mr, int nr, int accumulate,
                                                       pt_gemm_prefetch *pf, const float *bs, int64_t bld, int bcols,
                                                       float *bd) {
    const float *ap = a, *bp = b;
    float *cp = c;
    if (mr <= 8) {
        rows8(kc, a, b, c, ldc, mr, nr, accumulate, pf, bs, bld, bcols, bd);
        return;
    }
    DECL(0) DECL(1) DECL(2) DECL(3) DECL(4) DECL(5) DECL(6) DECL(7) DECL(8) DECL(9) DECL(10) DECL(11)
    /* Both lines of each C row: the tile often comes from L3 (a thread's C
     * rows outgrow L2), and the k loop hides the fetch (a C row's second
     * line left unfetched cost about 6 % of the kernel at 1024^3). */
    K_LOOP(STEP(0) STEP(1) STEP(2) STEP(3) STEP(4) STEP(5) STEP(6) STEP(7) STEP(8) STEP(9) STEP(10) STEP(11))
    __mmask16 m0 = lane_mask(nr), m1 = lane_mask(nr - 16);
    STORE(0) STORE(1) STORE(2) STORE(3) STORE(4) STORE(5) STORE(6) STORE(7) STORE(8) STORE(9) STORE(10) STORE(11)
}

void pt_gemm_ukr_avx512_f32(int64_t kc, const void *a, const void *b, void *c, int64_t ldc, int mr, int nr,
                            int accumulate) {
    tile(kc, a, b, c, ldc, mr, nr, accumulate, NULL, NULL, 0, 0, NULL);
}

void pt_gemm_ukr_avx512_f32_pf(int64_t kc, const void *a, const void *b, void *c, int64_t ldc, int mr, int nr,
                               int accumulate, pt_gemm_prefetch *pf) {
    tile(kc, a, b, c, ldc, mr, nr, accumulate, pf, NULL, 0, 0, NULL);
}

void pt_gemm_ukr_avx512_f32_packing(int64_t kc, const void *a, const void *b_src, int64_t b_ld, int b_cols,
                                    void *b_dst, int32_t *b_sums, void *c, int64_t ldc, int mr, int nr, int accumulate,
                                    pt_gemm_prefetch *pf) {
    (void)b_sums; /* an F32 row sums nothing */
    tile(kc, a, b_dst, c, ldc, mr, nr, accumulate, pf, b_src, b_ld, b_cols, b_dst); /* the panel as b: stepped, not read */
}

/* A read in place (pt_gemm_ukernel.run_a_segs): segment s holds k
 * s·seglen .. (s+1)·seglen - 1, row r's at a[s·MR + r]; B the usual
 * panel over all of them.  The accumulators stay in registers across the
 * segments (an implicit-GEMM convolution's taps), and no A panel is
 * written or read.  The accumulators start from the row `init` (NULL:
 * zeros), then take the products in the panel form's k order. */
#define SEG_STEP(i)                                   \
    {                                                 \
        __m512 ai = _mm512_set1_ps(p##i[k]);          \
        c##i##_0 = _mm512_fmadd_ps(ai, b0, c##i##_0); \
        c##i##_1 = _mm512_fmadd_ps(ai, b1, c##i##_1); \
    }
#define SEG_PTR(i) const float *p##i = a[s * MR + (i)];
/* Accumulators of row i from the row `init` (every row the same). */
#define SEG_DECL(i) __m512 c##i##_0 = i0, c##i##_1 = i1;

static void segs8(int nseg, int64_t seglen, const float *const *a, const float *bp, const float *init, float *cp,
                  int64_t ldc, int mr, int nr, int accumulate) {
    const __m512 i0 = init ? _mm512_maskz_loadu_ps(lane_mask(nr), init) : _mm512_setzero_ps();
    const __m512 i1 = init ? _mm512_maskz_loadu_ps(lane_mask(nr - 16), init + 16) : _mm512_setzero_ps();
    SEG_DECL(0) SEG_DECL(1) SEG_DECL(2) SEG_DECL(3) SEG_DECL(4) SEG_DECL(5) SEG_DECL(6) SEG_DECL(7)
    for (int s = 0; s < nseg; ++s) {
        SEG_PTR(0) SEG_PTR(1) SEG_PTR(2) SEG_PTR(3) SEG_PTR(4) SEG_PTR(5) SEG_PTR(6) SEG_PTR(7)
        for (int64_t k = 0; k < seglen; ++k, bp += NR) {
            const __m512 b0 = _mm512_loadu_ps(bp), b1 = _mm512_loadu_ps(bp + 16);
            SEG_STEP(0) SEG_STEP(1) SEG_STEP(2) SEG_STEP(3) SEG_STEP(4) SEG_STEP(5) SEG_STEP(6) SEG_STEP(7)
        }
    }
    __mmask16 m0 = lane_mask(nr), m1 = lane_mask(nr - 16);
    STORE(0) STORE(1) STORE(2) STORE(3) STORE(4) STORE(5) STORE(6) STORE(7)
}

void pt_gemm_ukr_avx512_f32_segs(int nseg, int64_t seglen, const float *const *a, const void *b, const float *init,
                                 void *c, int64_t ldc, int mr, int nr, int accumulate) {
    const float *bp = b;
    float *cp = c;
    if (mr <= 8) {
        segs8(nseg, seglen, a, bp, init, cp, ldc, mr, nr, accumulate);
        return;
    }
    const __m512 i0 = init ? _mm512_maskz_loadu_ps(lane_mask(nr), init) : _mm512_setzero_ps();
    const __m512 i1 = init ? _mm512_maskz_loadu_ps(lane_mask(nr - 16), init + 16) : _mm512_setzero_ps();
    SEG_DECL(0) SEG_DECL(1) SEG_DECL(2) SEG_DECL(3) SEG_DECL(4) SEG_DECL(5)
    SEG_DECL(6) SEG_DECL(7) SEG_DECL(8) SEG_DECL(9) SEG_DECL(10) SEG_DECL(11)
    for (int s = 0; s < nseg; ++s) {
        SEG_PTR(0) SEG_PTR(1) SEG_PTR(2) SEG_PTR(3) SEG_PTR(4) SEG_PTR(5)
        SEG_PTR(6) SEG_PTR(7) SEG_PTR(8) SEG_PTR(9) SEG_PTR(10) SEG_PTR(11)
        for (int64_t k = 0; k < seglen; ++k, bp += NR) {
            const __m512 b0 = _mm512_loadu_ps(bp), b1 = _mm512_loadu_ps(bp + 16);
            SEG_STEP(0) SEG_STEP(1) SEG_STEP(2) SEG_STEP(3) SEG_STEP(4) SEG_STEP(5)
            SEG_STEP(6) SEG_STEP(7) SEG_STEP(8) SEG_STEP(9) SEG_STEP(10) SEG_STEP(11)
        }
    }
    __mmask16 m0 = lane_mask(nr), m1 = lane_mask(nr - 16);
    STORE(0) STORE(1) STORE(2) STORE(3) STORE(4) STORE(5) STORE(6) STORE(7) STORE(8) STORE(9) STORE(10) STORE(11)
}
