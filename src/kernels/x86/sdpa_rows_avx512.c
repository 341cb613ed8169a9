/* AVX-512 row of the SDPA row-operation table (kernels/fused/sdpa_rows.h):
 * the portable loop bodies compiled with AVX-512, and the decode block
 * operations over 8 / 4-bit K and V written with intrinsics.
 *
 * 4-bit rows: a group's 16 possible dequantized values (i - zp)·scale sit in
 * one register and each nibble picks its value with one vpermps (which reads
 * only the low 4 bits of the index), so a value costs a shift or nothing, a
 * permute and an FMA — and is exactly the value the reference dequantizes.
 * The paired f32 vector is in pair-split order (even columns, then odd, per
 * 32), so the low and high nibbles of 16 bytes meet 16 consecutive floats
 * each.  8-bit rows: widened, converted and dequantized by one FMA per 16.
 * Four rows go together so that the paired vector is loaded once and the
 * four sums are reduced together. */
#define SD_ROWS_F16C 1 /* built with -mf16c */
#include <immintrin.h>

#include "kernels/fused/sdpa_rows.h"

/* (i - z)·s for the 16 nibble values i of a u4 / s4 row. */
static inline __m512 q4_table(int is_signed, float z, float s) {
    const __m512 iota = is_signed ? _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, -8, -7, -6, -5, -4, -3, -2, -1)
                                  : _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    return _mm512_mul_ps(_mm512_sub_ps(iota, _mm512_set1_ps(z)), _mm512_set1_ps(s));
}

/* 16 bytes of a 4-bit row as 16 lanes (the low nibble is lane & 15). */
static inline __m512i q4_bytes(const uint8_t *p) { return _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)p)); }

/* 16 values of an 8-bit row as f32. */
static inline __m512 q8_values(const void *p, int is_signed) {
    const __m128i b = _mm_loadu_si128((const __m128i *)p);
    return _mm512_cvtepi32_ps(is_signed ? _mm512_cvtepi8_epi32(b) : _mm512_cvtepu8_epi32(b));
}

/* Rows ahead are prefetched: the decode loop alternates between the K and V
 * streams (and their parameters) block by block, and the hardware
 * prefetchers lose the streams at each switch.  One distance, into L1.
 * Until session 20 every line was fetched twice, into L2 4 KiB on and into
 * L1 1 KiB on (on an earlier, faster host that had raised S_kv 16384,
 * s8 groups of 128 from 61-64 to 74-76 % of stream); on Zen 4 the doubled
 * fetches held the fill buffers (a tenth of dots_q's samples on the
 * prefetch instructions) and one fetch 2 KiB on is faster: bench_sdpa
 * decode, 2 threads, medians of three alternating rounds, s8 groups of 128
 * 5.35 -> 4.78 ms (S_kv 16384) and 1.26 -> 1.17 (4096), s8 groups of 32
 * with zero points 6.00 -> 5.46 and 1.39 -> 1.29, u4 2-5 %. */
#define SD_PREFETCH_BYTES 2048

/* always_inline: as a function of its own GCC finds it free of side effects
 * (prefetches do not count) and drops the calls.  The `bytes` from `row`
 * on, that distance ahead. */
static inline __attribute__((always_inline)) void prefetch_span(const void *row, int64_t bytes) {
    const char *p = row;
    for (int64_t o = 0; o < bytes; o += 64) _mm_prefetch(p + SD_PREFETCH_BYTES + o, _MM_HINT_T0);
}

/* The lane sums of four registers. */
static inline __m128 sum4(__m512 a0, __m512 a1, __m512 a2, __m512 a3) {
    /* Fold 512 -> 256 bits per register, two registers per result. */
    const __m512 s01 = _mm512_add_ps(_mm512_shuffle_f32x4(a0, a1, 0x44), _mm512_shuffle_f32x4(a0, a1, 0xEE));
    const __m512 s23 = _mm512_add_ps(_mm512_shuffle_f32x4(a2, a3, 0x44), _mm512_shuffle_f32x4(a2, a3, 0xEE));
    /* 128-bit block r now holds register r's four partial sums. */
    __m512 s = _mm512_add_ps(_mm512_shuffle_f32x4(s01, s23, 0x88), _mm512_shuffle_f32x4(s01, s23, 0xDD));
    s = _mm512_add_ps(s, _mm512_permute_ps(s, _MM_SHUFFLE(2, 3, 0, 1)));
    s = _mm512_add_ps(s, _mm512_permute_ps(s, _MM_SHUFFLE(1, 0, 3, 2)));
    return _mm512_castps512_ps128(
        _mm512_permutexvar_ps(_mm512_setr_epi32(0, 4, 8, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), s));
}

/* The block operation; run32 (a constant per call site) says the runs are
 * 32 columns, so that each group is one step without a loop. */
static inline __attribute__((always_inline)) void dots_q_rows(const float *x, const pt_sdpa_qrows *k, int64_t nrows,
                                                              float *out, int run32) {
    const int64_t nr = k->nruns, run = run32 ? 32 : k->run;
    const int sgn = k->is_signed;
    int64_t j = 0;
    for (; j + 4 <= nrows; j += 4) {
        const uint8_t *r0 = (const uint8_t *)k->data + j * k->ld;
        const uint8_t *r1 = r0 + k->ld, *r2 = r1 + k->ld, *r3 = r2 + k->ld;
        __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        prefetch_span(r0, 4 * k->ld);
        for (int64_t g = 0; g < nr; ++g) {
            const float *s = k->sc + j * nr + g, *z = k->zp ? k->zp + j * nr + g : NULL;
            const float z0 = z ? z[0] : 0.f, z1 = z ? z[nr] : 0.f, z2 = z ? z[2 * nr] : 0.f,
                        z3 = z ? z[3 * nr] : 0.f;
            if (k->bits == 4) {
                const __m512 t0 = q4_table(sgn, z0, s[0]), t1 = q4_table(sgn, z1, s[nr]);
                const __m512 t2 = q4_table(sgn, z2, s[2 * nr]), t3 = q4_table(sgn, z3, s[3 * nr]);
                for (int64_t c = g * run; c < (g + 1) * run; c += 32) {
                    const __m512 xl = _mm512_loadu_ps(x + c), xh = _mm512_loadu_ps(x + c + 16);
                    __m512i b;
#define SD_Q4_DOT(r, t, a)                                                                                   \
    b = q4_bytes(r + c / 2);                                                                                 \
    a = _mm512_fmadd_ps(xl, _mm512_permutexvar_ps(b, t), a);                                                 \
    a = _mm512_fmadd_ps(xh, _mm512_permutexvar_ps(_mm512_srli_epi32(b, 4), t), a);
                    SD_Q4_DOT(r0, t0, a0)
                    SD_Q4_DOT(r1, t1, a1)
                    SD_Q4_DOT(r2, t2, a2)
                    SD_Q4_DOT(r3, t3, a3)
#undef SD_Q4_DOT
                }
            } else {
                const __m512 m0 = _mm512_set1_ps(s[0]), m1 = _mm512_set1_ps(s[nr]);
                const __m512 m2 = _mm512_set1_ps(s[2 * nr]), m3 = _mm512_set1_ps(s[3 * nr]);
                const __m512 c0 = _mm512_set1_ps(-z0 * s[0]), c1 = _mm512_set1_ps(-z1 * s[nr]);
                const __m512 c2 = _mm512_set1_ps(-z2 * s[2 * nr]), c3 = _mm512_set1_ps(-z3 * s[3 * nr]);
                for (int64_t c = g * run; c < (g + 1) * run; c += 16) {
                    const __m512 xv = _mm512_loadu_ps(x + c);
                    a0 = _mm512_fmadd_ps(xv, _mm512_fmadd_ps(q8_values(r0 + c, sgn), m0, c0), a0);
                    a1 = _mm512_fmadd_ps(xv, _mm512_fmadd_ps(q8_values(r1 + c, sgn), m1, c1), a1);
                    a2 = _mm512_fmadd_ps(xv, _mm512_fmadd_ps(q8_values(r2 + c, sgn), m2, c2), a2);
                    a3 = _mm512_fmadd_ps(xv, _mm512_fmadd_ps(q8_values(r3 + c, sgn), m3, c3), a3);
                }
            }
        }
        _mm_storeu_ps(out + j, sum4(a0, a1, a2, a3));
    }
    for (; j < nrows; ++j) {
        const uint8_t *r = (const uint8_t *)k->data + j * k->ld;
        __m512 a = _mm512_setzero_ps();
        for (int64_t g = 0; g < nr; ++g) {
            const float s = k->sc[j * nr + g], z = k->zp ? k->zp[j * nr + g] : 0.f;
            if (k->bits == 4) {
                const __m512 t = q4_table(sgn, z, s);
                for (int64_t c = g * run; c < (g + 1) * run; c += 32) {
                    const __m512i b = q4_bytes(r + c / 2);
                    a = _mm512_fmadd_ps(_mm512_loadu_ps(x + c), _mm512_permutexvar_ps(b, t), a);
                    a = _mm512_fmadd_ps(_mm512_loadu_ps(x + c + 16),
                                        _mm512_permutexvar_ps(_mm512_srli_epi32(b, 4), t), a);
                }
            } else {
                const __m512 m = _mm512_set1_ps(s), c0 = _mm512_set1_ps(-z * s);
                for (int64_t c = g * run; c < (g + 1) * run; c += 16)
                    a = _mm512_fmadd_ps(_mm512_loadu_ps(x + c), _mm512_fmadd_ps(q8_values(r + c, sgn), m, c0), a);
            }
        }
        out[j] = _mm512_reduce_add_ps(a);
    }
}

static void dots_q_avx512(const float *x, int64_t n, const pt_sdpa_qrows *k, int64_t nrows, float *out) {
    (void)n;
    if (k->bits == 4 && k->run == 32) dots_q_rows(x, k, nrows, out, 1);
    else dots_q_rows(x, k, nrows, out, 0);
}

/* 4-bit rows: each row's group tables (i - zp)·m with m = p[j]·scale are
 * one FMA i·m + (-zp·m) (within an ulp of (i - zp)·m; the values are
 * weighted by p anyway) whose two factors come broadcast from memory; they
 * are computed here for Q4_FACTORS (row, group) pairs at a time, rows with
 * the same p next to each other, so that the row loop spends no scalar
 * arithmetic or register broadcasts on them (same roundings as one by one). */
#define Q4_FACTORS 1024

static void q4_factors(const pt_sdpa_qrows *v, int64_t j0, int64_t nrows, const float *p, float *m, float *k) {
    const int64_t nr = v->nruns;
    const float *sc = v->sc + j0 * nr, *zp = v->zp ? v->zp + j0 * nr : NULL;
    const __m512 sign = _mm512_set1_ps(-0.f);
    int64_t j = 0;
    if (nr == 1) {
        for (; j + 16 <= nrows; j += 16) {
            const __m512 mj = _mm512_mul_ps(_mm512_loadu_ps(p + j), _mm512_loadu_ps(sc + j));
            const __m512 zj = zp ? _mm512_loadu_ps(zp + j) : _mm512_setzero_ps();
            _mm512_storeu_ps(m + j, mj);
            _mm512_storeu_ps(k + j, _mm512_mul_ps(_mm512_xor_ps(zj, sign), mj));
        }
    } else if (nr == 4) {
        /* Four rows of four groups per register: p[j] repeated four times. */
        const __m512i rep = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
        for (; j + 4 <= nrows; j += 4) {
            const __m512 pj = _mm512_permutexvar_ps(rep, _mm512_castps128_ps512(_mm_loadu_ps(p + j)));
            const __m512 mj = _mm512_mul_ps(pj, _mm512_loadu_ps(sc + 4 * j));
            const __m512 zj = zp ? _mm512_loadu_ps(zp + 4 * j) : _mm512_setzero_ps();
            _mm512_storeu_ps(m + 4 * j, mj);
            _mm512_storeu_ps(k + 4 * j, _mm512_mul_ps(_mm512_xor_ps(zj, sign), mj));
        }
    }
    for (; j < nrows; ++j)
        for (int64_t g = 0; g < nr; ++g) {
            const float mg = p[j] * sc[j * nr + g], zg = zp ? zp[j * nr + g] : 0.f;
            m[j * nr + g] = mg, k[j * nr + g] = -zg * mg;
        }
}

/* y[c0 .. c0 + 16·nv) += Σ_j p[j]·row_j there, kept in registers while
 * every row adds to it (nv <= 8, even for 4-bit rows; a constant in the
 * main loop so that the accumulators stay registers).  q4 (a constant per
 * call site, v->bits == 4): 4-bit rows, which take their table factors from
 * m / k (q4_factors, row j at j·nruns); 8-bit rows otherwise. */
enum { Q4_EACH_CHUNK, Q4_FIRST_CHUNK, Q4_AS_NEEDED }; /* where 4-bit rows rebuild their table */

static inline __attribute__((always_inline)) void axpys_cols(float *y, int64_t c0, int nv, const pt_sdpa_qrows *v,
                                                             int64_t nrows, const float *p, int q4,
                                                             const float *m, const float *k, int tables) {
    const int64_t nr = v->nruns, run = v->run;
    const int sgn = v->is_signed;
    __m512 acc[8] = {0};
#pragma GCC unroll 8
    for (int i = 0; i < nv; ++i) acc[i] = _mm512_loadu_ps(y + c0 + 16 * i);
    /* Group of column c0 and columns left in it (no division per row). */
    const int64_t g0 = c0 / run, left0 = run - c0 % run;
    if (q4) {
        /* Chunks of 32 columns (two registers) never straddle a group; the
         * group of chunk i and whether it starts one, once for all rows. */
        int64_t gi[4];
        int newg[4];
        for (int i = 0, g = (int)g0, left = (int)left0; i < nv; i += 2) {
            if (left == 0) ++g, left = (int)run;
            gi[i / 2] = g, newg[i / 2] = i == 0 || left == run;
            left -= 32;
        }
        const __m512 iota = sgn ? _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, -8, -7, -6, -5, -4, -3, -2, -1)
                                : _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        for (int64_t j = 0; j < nrows; ++j) {
            if (p[j] == 0.f) continue;
            const uint8_t *r = (const uint8_t *)v->data + j * v->ld;
            if (c0 == 0) prefetch_span(r, v->ld);
            const float *mj = m + j * nr, *kj = k + j * nr;
            __m512 t = _mm512_setzero_ps();
#pragma GCC unroll 4
            for (int i = 0; i < nv; i += 2) {
                /* A constant per call site where every chunk starts a
                 * group (runs of 32) or only the first does (runs of a
                 * multiple of 128). */
                const int starts = tables == Q4_EACH_CHUNK || i == 0 || (tables == Q4_AS_NEEDED && newg[i / 2]);
                if (starts) t = _mm512_fmadd_ps(iota, _mm512_set1_ps(mj[gi[i / 2]]), _mm512_set1_ps(kj[gi[i / 2]]));
                const __m512i b = q4_bytes(r + (c0 + 16 * i) / 2);
                acc[i] = _mm512_add_ps(acc[i], _mm512_permutexvar_ps(b, t));
                acc[i + 1] = _mm512_add_ps(acc[i + 1], _mm512_permutexvar_ps(_mm512_srli_epi32(b, 4), t));
            }
        }
    } else {
        for (int64_t j = 0; j < nrows; ++j) {
            if (p[j] == 0.f) continue;
            const uint8_t *r = (const uint8_t *)v->data + j * v->ld;
            if (c0 == 0) prefetch_span(r, v->ld);
            const float *sc = v->sc + j * nr + g0, *zp = v->zp ? v->zp + j * nr + g0 : NULL;
            int64_t left = left0;
            __m512 mv = _mm512_setzero_ps(), kv = mv;
#pragma GCC unroll 8
            for (int i = 0; i < nv; ++i) {
                const int64_t c = c0 + 16 * i;
                if (left == 0) ++sc, zp = zp ? zp + 1 : NULL, left = run;
                if (i == 0 || left == run) {
                    const float mg = p[j] * *sc, zg = zp ? *zp : 0.f;
                    mv = _mm512_set1_ps(mg), kv = _mm512_set1_ps(-zg * mg);
                }
                left -= 16;
                acc[i] = _mm512_add_ps(acc[i], _mm512_fmadd_ps(q8_values(r + c, sgn), mv, kv));
            }
        }
    }
#pragma GCC unroll 8
    for (int i = 0; i < nv; ++i) _mm512_storeu_ps(y + c0 + 16 * i, acc[i]);
}

static void axpys_q_avx512(float *y, int64_t n, const pt_sdpa_qrows *v, int64_t nrows, const float *p) {
    if (v->bits != 4) {
        int64_t c0 = 0;
        for (; c0 + 128 <= n; c0 += 128) axpys_cols(y, c0, 8, v, nrows, p, 0, NULL, NULL, Q4_AS_NEEDED);
        if (c0 < n) axpys_cols(y, c0, (int)((n - c0) / 16), v, nrows, p, 0, NULL, NULL, Q4_AS_NEEDED);
        return;
    }
    float m[Q4_FACTORS], k[Q4_FACTORS];
    const int64_t step = Q4_FACTORS / v->nruns; /* >= 1: n <= SD_QROWS_MAX_N, run >= 32 */
    for (int64_t j0 = 0; j0 < nrows; j0 += step) {
        const int64_t nj = nrows - j0 < step ? nrows - j0 : step;
        pt_sdpa_qrows vj = *v;
        vj.data = (const uint8_t *)v->data + j0 * v->ld;
        vj.sc = v->sc + j0 * v->nruns, vj.zp = v->zp ? v->zp + j0 * v->nruns : NULL;
        q4_factors(v, j0, nj, p + j0, m, k);
        int64_t c0 = 0;
        if (v->run == 32)
            for (; c0 + 128 <= n; c0 += 128) axpys_cols(y, c0, 8, &vj, nj, p + j0, 1, m, k, Q4_EACH_CHUNK);
        else if (v->run % 128 == 0)
            for (; c0 + 128 <= n; c0 += 128) axpys_cols(y, c0, 8, &vj, nj, p + j0, 1, m, k, Q4_FIRST_CHUNK);
        for (; c0 + 128 <= n; c0 += 128) axpys_cols(y, c0, 8, &vj, nj, p + j0, 1, m, k, Q4_AS_NEEDED);
        if (c0 < n) axpys_cols(y, c0, (int)((n - c0) / 16), &vj, nj, p + j0, 1, m, k, Q4_AS_NEEDED);
    }
}

/* out[2i], out[2i+1] = low, high nibble of b[i] (s4 sign-extended): 16
 * bytes per step, the two nibble vectors interleaved by two permutes. */
static void widen_4bit_avx512(const uint8_t *b, int64_t npairs, int is_signed, float *out) {
    const __m512i lo_first = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const __m512i hi_first = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    const __m512i nib = _mm512_set1_epi32(15), flip = _mm512_set1_epi32(is_signed ? 8 : 0);
    int64_t i = 0;
    for (; i + 16 <= npairs; i += 16) {
        const __m512i w = q4_bytes(b + i);
        const __m512i lo = _mm512_sub_epi32(_mm512_xor_si512(_mm512_and_si512(w, nib), flip), flip);
        const __m512i hi = _mm512_sub_epi32(_mm512_xor_si512(_mm512_srli_epi32(w, 4), flip), flip);
        const __m512 fl = _mm512_cvtepi32_ps(lo), fh = _mm512_cvtepi32_ps(hi);
        _mm512_storeu_ps(out + 2 * i, _mm512_permutex2var_ps(fl, lo_first, fh));
        _mm512_storeu_ps(out + 2 * i + 16, _mm512_permutex2var_ps(fl, hi_first, fh));
    }
    sd_rows_widen_4bit(b + i, npairs - i, is_signed, out + 2 * i);
}

/* 16 bf16 / f16 values as f32 (exact). */
static inline __m512 h_values(const uint16_t *p, int is_f16) {
    const __m256i h = _mm256_loadu_si256((const __m256i *)p);
    return is_f16 ? _mm512_cvtph_ps(h) : _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

static void dots_h_avx512(const float *x, int64_t n, const uint16_t *rows, int is_f16, int64_t nrows, int64_t ld,
                          float *out) {
    if (n % 16) {
        sd_rows_dots_h(x, n, rows, is_f16, nrows, ld, out);
        return;
    }
    int64_t j = 0;
    for (; j + 4 <= nrows; j += 4) {
        const uint16_t *r0 = rows + j * ld, *r1 = r0 + ld, *r2 = r1 + ld, *r3 = r2 + ld;
        __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        for (int64_t c = 0; c < n; c += 16) {
            const __m512 xv = _mm512_loadu_ps(x + c);
            a0 = _mm512_fmadd_ps(xv, h_values(r0 + c, is_f16), a0);
            a1 = _mm512_fmadd_ps(xv, h_values(r1 + c, is_f16), a1);
            a2 = _mm512_fmadd_ps(xv, h_values(r2 + c, is_f16), a2);
            a3 = _mm512_fmadd_ps(xv, h_values(r3 + c, is_f16), a3);
        }
        _mm_storeu_ps(out + j, sum4(a0, a1, a2, a3));
    }
    for (; j < nrows; ++j) {
        __m512 a = _mm512_setzero_ps();
        for (int64_t c = 0; c < n; c += 16)
            a = _mm512_fmadd_ps(_mm512_loadu_ps(x + c), h_values(rows + j * ld + c, is_f16), a);
        out[j] = _mm512_reduce_add_ps(a);
    }
}

/* y[c0 .. c0 + 16·nv) += Σ_j p[j]·row_j there, in registers (nv <= 8). */
static inline __attribute__((always_inline)) void axpys_h_cols(float *y, int64_t c0, int nv, const uint16_t *rows,
                                                               int is_f16, int64_t nrows, int64_t ld,
                                                               const float *p) {
    __m512 acc[8] = {0};
#pragma GCC unroll 8
    for (int i = 0; i < nv; ++i) acc[i] = _mm512_loadu_ps(y + c0 + 16 * i);
    for (int64_t j = 0; j < nrows; ++j) {
        if (p[j] == 0.f) continue;
        const __m512 pj = _mm512_set1_ps(p[j]);
        const uint16_t *r = rows + j * ld + c0;
#pragma GCC unroll 8
        for (int i = 0; i < nv; ++i) acc[i] = _mm512_fmadd_ps(pj, h_values(r + 16 * i, is_f16), acc[i]);
    }
#pragma GCC unroll 8
    for (int i = 0; i < nv; ++i) _mm512_storeu_ps(y + c0 + 16 * i, acc[i]);
}

static void axpys_h_avx512(float *y, int64_t n, const uint16_t *rows, int is_f16, int64_t nrows, int64_t ld,
                           const float *p) {
    if (n % 16) {
        sd_rows_axpys_h(y, n, rows, is_f16, nrows, ld, p);
        return;
    }
    int64_t c0 = 0;
    for (; c0 + 128 <= n; c0 += 128) axpys_h_cols(y, c0, 8, rows, is_f16, nrows, ld, p);
    if (c0 < n) axpys_h_cols(y, c0, (int)((n - c0) / 16), rows, is_f16, nrows, ld, p);
}

PT_SDPA_ROWS_DEFINE(avx512, "avx512", PT_ISA_AVX512);
