/* 16 x 16 transposes of 32-bit lanes at the AVX-512 level, shared by the
 * packers, the SDPA panels, the permuting copy and the memory-bound rows.
 * Include only from files built with the AVX-512 flags. */
#ifndef PARTITA_KERNELS_X86_AVX512_TRANSPOSE_H
#define PARTITA_KERNELS_X86_AVX512_TRANSPOSE_H

#include <immintrin.h>

/* In place: r[j] lane i <- r[i] lane j.  Pairs of dwords, then of qwords,
 * interleave within 128-bit lanes (u[4q + e] then holds element e of each
 * lane for rows 4q .. 4q + 3); two rounds of 128-bit lane shuffles gather
 * the four row groups. */
static inline __attribute__((always_inline)) void pt_avx512_transpose16(__m512i r[16]) {
    __m512i t[16], u[16];
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
    }
    for (int q = 0; q < 4; ++q) {
        u[4 * q + 0] = _mm512_unpacklo_epi64(t[4 * q], t[4 * q + 2]);
        u[4 * q + 1] = _mm512_unpackhi_epi64(t[4 * q], t[4 * q + 2]);
        u[4 * q + 2] = _mm512_unpacklo_epi64(t[4 * q + 1], t[4 * q + 3]);
        u[4 * q + 3] = _mm512_unpackhi_epi64(t[4 * q + 1], t[4 * q + 3]);
    }
    for (int e = 0; e < 4; ++e) {
        const __m512i a = _mm512_shuffle_i32x4(u[e], u[4 + e], 0x88), b = _mm512_shuffle_i32x4(u[e], u[4 + e], 0xdd);
        const __m512i c = _mm512_shuffle_i32x4(u[8 + e], u[12 + e], 0x88);
        const __m512i d = _mm512_shuffle_i32x4(u[8 + e], u[12 + e], 0xdd);
        r[e] = _mm512_shuffle_i32x4(a, c, 0x88);
        r[4 + e] = _mm512_shuffle_i32x4(b, d, 0x88);
        r[8 + e] = _mm512_shuffle_i32x4(a, c, 0xdd);
        r[12 + e] = _mm512_shuffle_i32x4(b, d, 0xdd);
    }
}

/* The same on floats. */
static inline __attribute__((always_inline)) void pt_avx512_transpose16_ps(__m512 r[16]) {
    __m512i v[16];
    for (int i = 0; i < 16; ++i) v[i] = _mm512_castps_si512(r[i]);
    pt_avx512_transpose16(v);
    for (int i = 0; i < 16; ++i) r[i] = _mm512_castsi512_ps(v[i]);
}

/* Two rows of 32 16-bit values as 32 pairs (row `even`'s value in the low
 * half): the pairs of columns 0-15 in *lo, 16-31 in *hi, the layout of a
 * bf16 B panel's k-pair row.  vpunpck{l,h}wd pair within 128-bit lanes, one
 * qword permute each puts the lanes in column order. */
static inline __attribute__((always_inline)) void pt_avx512_pair_rows16(__m512i even, __m512i odd, __m512i *lo,
                                                                         __m512i *hi) {
    const __m512i first = _mm512_setr_epi64(0, 1, 8, 9, 2, 3, 10, 11);
    const __m512i second = _mm512_setr_epi64(4, 5, 12, 13, 6, 7, 14, 15);
    const __m512i l = _mm512_unpacklo_epi16(even, odd), h = _mm512_unpackhi_epi16(even, odd);
    *lo = _mm512_permutex2var_epi64(l, first, h);
    *hi = _mm512_permutex2var_epi64(l, second, h);
}

#endif
