/* Small-M integer products on AVX-512 VNNI (kernels/gemm/gemm_gemv.h): s32
 * sums of up to PT_GEMV_MAX_M rows of u8 A against s8 B read where it lies,
 * with B's column sums for the zero-point terms.  vpdpbusd multiplies u8
 * quads of its first source by s8 quads of its second: A's quads are
 * broadcast, B's come four k values per column. */
#include <immintrin.h>
#include <string.h>

#include "kernels/gemm/gemm_gemv.h"

#define INL static inline __attribute__((always_inline))

INL __m512i quad_bcast(const uint8_t *p) {
    int32_t v;
    memcpy(&v, p, sizeof v);
    return _mm512_set1_epi32(v);
}

/* The first w of 64 columns whose sums sit in v0..v3 as the unpacks below
 * leave them: column 16·L + 4·i + p is dword 4·L + p of vector i. */
INL void store_cols(__m512i v0, __m512i v1, __m512i v2, __m512i v3, int32_t *dst, int w) {
    int32_t t[4][16], out[64];
    _mm512_storeu_si512(t[0], v0);
    _mm512_storeu_si512(t[1], v1);
    _mm512_storeu_si512(t[2], v2);
    _mm512_storeu_si512(t[3], v3);
    for (int L = 0; L < 4; ++L)
        for (int i = 0; i < 4; ++i) memcpy(&out[16 * L + 4 * i], &t[i][4 * L], 4 * sizeof(int32_t));
    memcpy(dst, out, (size_t)w * sizeof(int32_t));
}

/* Columns contiguous (B[k][j] at b[k·ldb + j]): a pass over K for w <=
 * NC_WIDE columns.  Row by row in groups of K_GROUP, each group swept in
 * sub-blocks of 64 columns: the group's row segments (16 KiB) stay in L1
 * while the sweep reads each 64-byte line of them once, and the next
 * group's lines are prefetched on the way.  (Walking K for one 64-column
 * block at a time instead reads one line per 4 KiB row: slower than the
 * packed path.)  The sums live in L1 in the unpacks' order between groups.
 * Rows past K read as zero (a is zero-padded to a multiple of 4 k). */
#define NC_WIDE 1024
#define K_GROUP 16

INL void ncols_pass(const int M, const uint8_t *a, int64_t lda, int64_t K, const int8_t *b, int64_t ldb, int w,
                    int32_t *acc, int64_t ldacc, int32_t *colsum) {
    _Alignas(64) int32_t sums[PT_GEMV_MAX_M + 1][NC_WIDE];
    const int subs = (w + 63) / 64, rows = M + (colsum != NULL);
    for (int m = 0; m < rows; ++m) memset(sums[m], 0, (size_t)subs * 64 * sizeof(int32_t));
    const __m512i ones = _mm512_set1_epi8(1), zero = _mm512_setzero_si512();
    for (int64_t k0 = 0; k0 < K; k0 += K_GROUP) {
        for (int sb = 0; sb < subs; ++sb) {
            const int left = w - 64 * sb;
            const __mmask64 cm = left >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << left) - 1);
            const int8_t *col = b + 64 * sb;
            __m512i v[PT_GEMV_MAX_M + 1][4] = {{zero, zero, zero, zero}}; /* unused rows fold away */
#pragma GCC unroll 5
            for (int m = 0; m < PT_GEMV_MAX_M + 1; ++m) {
                if (m >= M && (m < PT_GEMV_MAX_M || !colsum)) continue;
                const int row = m < M ? m : M;
#pragma GCC unroll 4
                for (int i = 0; i < 4; ++i) v[m][i] = _mm512_load_si512(&sums[row][64 * sb + 16 * i]);
            }
#pragma GCC unroll 4
            for (int q = 0; q < K_GROUP / 4; ++q) {
                const int64_t k = k0 + 4 * q;
                if (k >= K) break;
                const int8_t *r = col + k * ldb;
                const __m512i r0 = _mm512_maskz_loadu_epi8(cm, r);
                const __m512i r1 = k + 1 < K ? _mm512_maskz_loadu_epi8(cm, r + ldb) : zero;
                const __m512i r2 = k + 2 < K ? _mm512_maskz_loadu_epi8(cm, r + 2 * ldb) : zero;
                const __m512i r3 = k + 3 < K ? _mm512_maskz_loadu_epi8(cm, r + 3 * ldb) : zero;
                const __m512i t0 = _mm512_unpacklo_epi8(r0, r1), t1 = _mm512_unpackhi_epi8(r0, r1);
                const __m512i t2 = _mm512_unpacklo_epi8(r2, r3), t3 = _mm512_unpackhi_epi8(r2, r3);
                const __m512i qv[4] = {_mm512_unpacklo_epi16(t0, t2), _mm512_unpackhi_epi16(t0, t2),
                                       _mm512_unpacklo_epi16(t1, t3), _mm512_unpackhi_epi16(t1, t3)};
#pragma GCC unroll 5
                for (int m = 0; m < PT_GEMV_MAX_M + 1; ++m) {
                    if (m >= M && (m < PT_GEMV_MAX_M || !colsum)) continue;
                    const __m512i av = m < M ? quad_bcast(a + m * lda + k) : ones;
#pragma GCC unroll 4
                    for (int i = 0; i < 4; ++i) v[m][i] = _mm512_dpbusd_epi32(v[m][i], av, qv[i]);
                }
            }
            for (int64_t r = k0 + K_GROUP; r < k0 + 2 * K_GROUP && r < K; ++r)
                _mm_prefetch((const char *)(col + r * ldb), _MM_HINT_T0);
#pragma GCC unroll 5
            for (int m = 0; m < PT_GEMV_MAX_M + 1; ++m) {
                if (m >= M && (m < PT_GEMV_MAX_M || !colsum)) continue;
                const int row = m < M ? m : M;
#pragma GCC unroll 4
                for (int i = 0; i < 4; ++i) _mm512_store_si512(&sums[row][64 * sb + 16 * i], v[m][i]);
            }
        }
    }
    for (int sb = 0; sb < subs; ++sb) {
        const int cols = w - 64 * sb < 64 ? w - 64 * sb : 64;
        for (int m = 0; m < rows; ++m) {
            const int32_t *p = &sums[m][64 * sb];
            store_cols(_mm512_load_si512(p), _mm512_load_si512(p + 16), _mm512_load_si512(p + 32),
                       _mm512_load_si512(p + 48), m < M ? acc + m * ldacc + 64 * sb : colsum + 64 * sb, cols);
        }
    }
}

/* K contiguous (B[k][j] at b[j·ldb + k]): four columns at a time, 64 k per
 * step, each column's dword sums reduced at the end. */
INL void kcols_block(const int M, const uint8_t *a, int64_t lda, int64_t K, const int8_t *b, int64_t ldb, int w,
                     int32_t *acc, int64_t ldacc, int32_t *colsum) {
    const __m512i ones = _mm512_set1_epi8(1), zero = _mm512_setzero_si512();
    __m512i s[PT_GEMV_MAX_M][4], cs[4];
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
        cs[j] = zero;
#pragma GCC unroll 4
        for (int m = 0; m < PT_GEMV_MAX_M; ++m) s[m][j] = zero;
    }
    for (int64_t k = 0; k < K; k += 64) {
        const __mmask64 km = K - k >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << (K - k)) - 1);
        __m512i bv[4];
#pragma GCC unroll 4
        for (int j = 0; j < 4; ++j) bv[j] = j < w ? _mm512_maskz_loadu_epi8(km, b + j * ldb + k) : zero;
#pragma GCC unroll 4
        for (int m = 0; m < PT_GEMV_MAX_M; ++m) {
            if (m >= M) break;
            const __m512i av = _mm512_maskz_loadu_epi8(km, a + m * lda + k);
#pragma GCC unroll 4
            for (int j = 0; j < 4; ++j) s[m][j] = _mm512_dpbusd_epi32(s[m][j], av, bv[j]);
        }
        if (colsum) {
#pragma GCC unroll 4
            for (int j = 0; j < 4; ++j) cs[j] = _mm512_dpbusd_epi32(cs[j], ones, bv[j]);
        }
    }
    for (int j = 0; j < w; ++j) {
        for (int m = 0; m < M; ++m) acc[m * ldacc + j] = _mm512_reduce_add_epi32(s[m][j]);
        if (colsum) colsum[j] = _mm512_reduce_add_epi32(cs[j]);
    }
}

/* One copy per row count, so that the accumulators stay in registers. */
#define PT_GEMV_INT_COPY(Mc)                                                                                     \
    static void run_##Mc(const pt_gemv_int_chunk *ch) {                                                         \
        if (ch->k_contiguous) {                                                                                  \
            for (int64_t j = 0; j < ch->nlen; j += 4) {                                                          \
                const int w = ch->nlen - j < 4 ? (int)(ch->nlen - j) : 4;                                        \
                kcols_block(Mc, ch->a, ch->lda, ch->K, ch->b + j * ch->ldb, ch->ldb, w, ch->acc + j, ch->ldacc,   \
                            ch->colsum ? ch->colsum + j : NULL);                                                 \
            }                                                                                                    \
        } else {                                                                                                 \
            for (int64_t j = 0; j < ch->nlen; j += NC_WIDE) {                                                    \
                const int w = ch->nlen - j < NC_WIDE ? (int)(ch->nlen - j) : NC_WIDE;                            \
                ncols_pass(Mc, ch->a, ch->lda, ch->K, ch->b + j, ch->ldb, w, ch->acc + j, ch->ldacc,              \
                           ch->colsum ? ch->colsum + j : NULL);                                                  \
            }                                                                                                    \
        }                                                                                                        \
    }
PT_GEMV_INT_COPY(1)
PT_GEMV_INT_COPY(2)
PT_GEMV_INT_COPY(3)
PT_GEMV_INT_COPY(4)

void pt_gemv_int_avx512vnni(const pt_gemv_int_chunk *ch) {
    switch (ch->M) {
    case 1: run_1(ch); break;
    case 2: run_2(ch); break;
    case 3: run_3(ch); break;
    default: run_4(ch); break;
    }
}
