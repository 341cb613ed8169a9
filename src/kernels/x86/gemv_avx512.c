/* AVX-512 chunk kernels of the small-M path (kernels/gemm/gemm_gemv.h).
 *
 * k contiguous B ([n][k] weights): 16-wide dot products along k with every
 * row of A; one column at a time for one row of A (a single sequential
 * stream), four columns at a time for more rows (M x 4 FMA chains); the
 * same position a few columns ahead is prefetched.  4-bit weights
 * go through a 16-entry table per (column, group) holding the finished
 * value R((q - zp) * scale): vpermps looks a nibble up directly, so
 * dequantisation costs nothing per element.  16 bytes of nibbles are
 * broadcast to the four 128-bit lanes and shifted per lane group (no
 * widening shuffle), which yields the k in a fixed scattered order; A is
 * reordered the same way once per chunk.
 *
 * Columns contiguous B ([k][n]): a block of columns accumulated in an L1
 * buffer while B is read row by row in long contiguous runs; 4-bit B 64
 * bytes (128 columns) at a time, each nibble looked up in a 16-entry table
 * of its integer value by vpermps after a per-dword shift; without
 * rounding of B values, scale and zero point are applied once per column
 * and group segment instead of per value (nc_nibble_kernel).
 *
 * Every kernel is instantiated per M (1..4), B type and rounding, so the
 * accumulators live in registers and the type tests fold away. */
#include <immintrin.h>
#include <string.h>

#include "kernels/gemm/gemm_gemv.h"
#include "kernels/gemm/gemm_int_load.h"
#include "kernels/x86/gemv_params_x86.h"

#define AINLINE static inline __attribute__((always_inline))
#define KCH PT_GEMV_KCHUNK

enum { DT_F32, DT_BF16, DT_F16, DT_S8, DT_U8, DT_S4, DT_U4 };

static int dt_code(dnnl_data_type_t dt) {
    switch (dt) {
    case dnnl_f32: return DT_F32;
    case dnnl_bf16: return DT_BF16;
    case dnnl_f16: return DT_F16;
    case dnnl_s8: return DT_S8;
    case dnnl_u8: return DT_U8;
    case dnnl_s4: return DT_S4;
    case dnnl_u4: return DT_U4;
    default: return -1;
    }
}

static inline __mmask16 first_lanes(int64_t n) { return n >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << n) - 1); }

/* Round to nearest even bf16 and back; NaN passes unchanged. */
AINLINE __m512 round_bf16(__m512 x) {
    __m512i u = _mm512_castps_si512(x);
    __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    __m512i r = _mm512_add_epi32(u, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff)));
    r = _mm512_and_si512(r, _mm512_set1_epi32((int)0xffff0000u));
    return _mm512_mask_mov_ps(_mm512_castsi512_ps(r), _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x);
}

AINLINE __m512 apply_round(__m512 x, int round_bf16_on) { return round_bf16_on ? round_bf16(x) : x; }

/* 16 B values at p (element offset e) as f32, lanes past `mask` zero.
 * Not for 4-bit types. */
AINLINE __m512 load16(const void *p, int64_t e, int DT, __mmask16 mask) {
    switch (DT) {
    case DT_F32: return _mm512_maskz_loadu_ps(mask, (const float *)p + e);
    case DT_BF16:
        return _mm512_castsi512_ps(
            _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(mask, (const uint16_t *)p + e)), 16));
    case DT_F16: return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(mask, (const uint16_t *)p + e));
    case DT_S8: return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(mask, (const int8_t *)p + e)));
    default: return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(mask, (const uint8_t *)p + e)));
    }
}

AINLINE float hsum(__m512 v) { return _mm512_reduce_add_ps(v); }

/* K elements per dequantisation group (0: the parameters do not change along k). */
static inline int64_t group_len(const pt_gemv_chunk *ch) {
    const pt_gemm_dequant *dq = &ch->bo->dq;
    return dq->on && dq->group > 0 ? dq->group : 0;
}

/* End of the segment (group, or the whole chunk) that holds absolute k. */
static inline int64_t segment_end(int64_t group, int64_t k, int64_t kend) {
    if (group <= 0) return kend;
    int64_t e = (k / group + 1) * group;
    return e < kend ? e : kend;
}

/* Groups the chunk touches (at most KCH / 32 + 1 for the kernels that keep
 * one parameter per group and column). */
#define MAX_CHUNK_GROUPS (KCH / 32 + 2)

static inline int64_t chunk_groups(const pt_gemv_chunk *ch, int64_t group, int64_t *g0) {
    if (group <= 0) return *g0 = 0, 1;
    *g0 = ch->k0 / group;
    return (ch->k0 + ch->klen - 1) / group - *g0 + 1;
}

/* Parameters of column n for the chunk's groups. */
static inline void column_params(const pt_gemv_chunk *ch, int64_t n, int64_t g0, int64_t ng, float *scale,
                                 float *zp) {
    const pt_gemm_dequant *dq = &ch->bo->dq;
    pt_gemv_params_f32(ch, n * dq->sc_sn + g0 * dq->sc_sg, dq->sc_sg, n * dq->zp_sn + g0 * dq->zp_sg, dq->zp_sg,
                       ng, scale, zp);
}

static inline void put_c(const pt_gemv_chunk *ch, int m, int64_t j, float v) {
    float *p = &ch->c[m * ch->ldc + j];
    *p = ch->accumulate ? *p + v : v;
}

/* k-contiguous B is read four columns at a time, each a short stream (2 KiB
 * for 4096 int4 values) on which the hardware prefetchers barely ramp up;
 * so the kernels prefetch the same position of the column this many
 * columns ahead, which keeps the next group's lines in flight.  Dense
 * columns are fetched into L2 (a column of 4096 f32 is 16 KiB, so four
 * ahead into L1 evicted what was in use: f32 1x4096x4096 with B [N, K]
 * 2.3 -> 1.5-1.7 ms on Zen 4); the 4-bit kernels, bound by their
 * arithmetic, measured the same either way. */
#define PREFETCH_COLS 4



/* ---- k contiguous, 8- to 32-bit B ------------------------------------------ */

/* NC (<= 4) columns starting at column j (columns past nlen repeat the last
 * one and are not stored): M x NC accumulators. */
AINLINE void kc_dense_cols(const pt_gemv_chunk *ch, int64_t j, const int M, const int NC, const int DT,
                           const int DQ, const int RB) {
    const pt_gemm_operand *o = ch->bo;
    const int esize = DT == DT_F32 ? 4 : DT == DT_BF16 || DT == DT_F16 ? 2 : 1;
    int64_t base[4], n[4];
    const char *ahead[4];
    for (int c = 0; c < NC; ++c) {
        n[c] = ch->n0 + (j + c < ch->nlen ? j + c : ch->nlen - 1);
        base[c] = n[c] * o->s_row + ch->k0;
        ahead[c] = (const char *)ch->b + ((ch->n0 + j + c + PREFETCH_COLS) * o->s_row + ch->k0) * esize;
    }
    const int64_t group = DQ ? group_len(ch) : 0;
    int64_t g0 = 0, ng = DQ ? chunk_groups(ch, group, &g0) : 1;
    _Alignas(64) float zps[4][MAX_CHUNK_GROUPS], scs[4][MAX_CHUNK_GROUPS];
    if (DQ)
        for (int c = 0; c < NC; ++c) column_params(ch, n[c], g0, ng, scs[c], zps[c]);
    __m512 acc[4][4];
    for (int m = 0; m < M; ++m)
        for (int c = 0; c < NC; ++c) acc[m][c] = _mm512_setzero_ps();
    const int64_t kend = ch->k0 + ch->klen;
    for (int64_t ks = ch->k0, gi = 0; ks < kend; ++gi) {
        int64_t se = segment_end(group, ks, kend);
        __m512 zv[4], sv[4];
        for (int c = 0; c < NC; ++c) {
            zv[c] = DQ ? _mm512_set1_ps(zps[c][gi]) : _mm512_setzero_ps();
            sv[c] = DQ ? _mm512_set1_ps(scs[c][gi]) : _mm512_setzero_ps();
        }
        for (int64_t k = ks; k < se; k += 16) {
            __mmask16 mask = first_lanes(se - k);
            __m512 av[4];
            for (int m = 0; m < M; ++m) av[m] = _mm512_maskz_loadu_ps(mask, ch->a + m * KCH + (k - ch->k0));
            for (int c = 0; c < NC; ++c) {
                if (((k - ch->k0) * esize) % 64 == 0) _mm_prefetch(ahead[c] + (k - ch->k0) * esize, _MM_HINT_T1);
                __m512 v = load16(ch->b, base[c] + (k - ch->k0), DT, mask);
                if (DQ) v = _mm512_mul_ps(_mm512_sub_ps(v, zv[c]), sv[c]);
                v = apply_round(v, RB);
                for (int m = 0; m < M; ++m) acc[m][c] = _mm512_fmadd_ps(av[m], v, acc[m][c]);
            }
        }
        ks = se;
    }
    for (int c = 0; c < NC && j + c < ch->nlen; ++c)
        for (int m = 0; m < M; ++m) put_c(ch, m, j + c, hsum(acc[m][c]));
}

/* f32 B with one row of A: one column at a time, a single sequential stream
 * per thread (measured near the read bandwidth; four streams reach about
 * 70%).  Otherwise four columns at a time: enough FMA chains for more rows,
 * and for narrower B types, whose one chain would cap a stream at 16
 * elements per FMA latency. */
AINLINE void kc_dense(const pt_gemv_chunk *ch, const int M, const int DT, const int DQ, const int RB) {
    if (M == 1 && DT == DT_F32)
        for (int64_t j = 0; j < ch->nlen; ++j) kc_dense_cols(ch, j, 1, 1, DT, DQ, RB);
    else
        for (int64_t j = 0; j < ch->nlen; j += 4) kc_dense_cols(ch, j, M, 4, DT, DQ, RB);
}

/* ---- k contiguous, 4-bit B -------------------------------------------------- */

/* The 16 values a nibble stands for in one (column, group). */
AINLINE __m512 nibble_table(int is_s4, float zp, float scale, int RB) {
    const __m512 u4 = _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const __m512 s4 = _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, -8, -7, -6, -5, -4, -3, -2, -1);
    __m512 t = _mm512_mul_ps(_mm512_sub_ps(is_s4 ? s4 : u4, _mm512_set1_ps(zp)), _mm512_set1_ps(scale));
    return apply_round(t, RB);
}

/* Lane l of the two vectors a 16-byte block of nibble pairs unpacks into
 * (broadcast to the four 128-bit lanes, each dword shifted right by its
 * lane group times 4 (low vector) or 16 more (high vector)): element
 * 8 (l % 4) + l / 4 and that plus 4. */
static inline int nibble_lane_elem(int l, int high) { return 8 * (l % 4) + l / 4 + 4 * high; }

/* A reordered per block of 32 k into that lane order, once per chunk. */
static void reorder_a_nibbles(const pt_gemv_chunk *ch, float dst[][KCH]) {
    int64_t blocks = (ch->klen + 31) / 32;
    for (int m = 0; m < ch->M; ++m) {
        const float *a = ch->a + m * KCH;
        for (int64_t b = 0; b < blocks; ++b)
            for (int l = 0; l < 16; ++l) {
                dst[m][32 * b + l] = a[32 * b + nibble_lane_elem(l, 0)];
                dst[m][32 * b + 16 + l] = a[32 * b + nibble_lane_elem(l, 1)];
            }
    }
}

/* Four columns from column j.  At M <= 2 the two vectors of a block
 * accumulate apart (more independent chains); above, one accumulator per
 * (row, column) keeps them within the register file. */
AINLINE void kc_nibble_cols(const pt_gemv_chunk *ch, const float (*ap)[KCH], int64_t j, const int M, const int S4,
                            const int RB) {
    enum { NC = 4 };
    const int SPLIT = M <= 2;
    const pt_gemm_operand *o = ch->bo;
    const uint8_t *col[NC], *ahead[NC];
    int64_t n[NC];
    for (int c = 0; c < NC; ++c) {
        n[c] = ch->n0 + (j + c < ch->nlen ? j + c : ch->nlen - 1);
        col[c] = (const uint8_t *)ch->b + (n[c] * o->s_row + ch->k0) / 2;
        ahead[c] = (const uint8_t *)ch->b + ((ch->n0 + j + c + PREFETCH_COLS) * o->s_row + ch->k0) / 2;
    }
    const int64_t group = group_len(ch);
    int64_t g0, ng = chunk_groups(ch, group, &g0);
    _Alignas(64) float zps[NC][MAX_CHUNK_GROUPS], scs[NC][MAX_CHUNK_GROUPS];
    for (int c = 0; c < NC; ++c) column_params(ch, n[c], g0, ng, scs[c], zps[c]);
    __m512 acc[4][NC][2];
    for (int m = 0; m < M; ++m)
        for (int c = 0; c < NC; ++c) acc[m][c][0] = acc[m][c][1] = _mm512_setzero_ps();
    const __m512i shift_lo = _mm512_setr_epi32(0, 0, 0, 0, 4, 4, 4, 4, 8, 8, 8, 8, 12, 12, 12, 12);
    const __m512i shift_hi = _mm512_add_epi32(shift_lo, _mm512_set1_epi32(16));
    const __m512i lo_elem = _mm512_setr_epi32(0, 8, 16, 24, 1, 9, 17, 25, 2, 10, 18, 26, 3, 11, 19, 27);
    const __m512i hi_elem = _mm512_add_epi32(lo_elem, _mm512_set1_epi32(4));
    const int64_t kend = ch->k0 + ch->klen;
    for (int64_t ks = ch->k0, gi = 0; ks < kend; ++gi) {
        int64_t se = segment_end(group, ks, kend);
        __m512 tab[NC];
        for (int c = 0; c < NC; ++c) tab[c] = nibble_table(S4, zps[c][gi], scs[c][gi], RB);
        for (int64_t k = ks; k < se; k += 32) {
            const int64_t rem = se - k, kr = k - ch->k0;
            __mmask16 lo_ok = 0xffff, hi_ok = 0xffff;
            if (rem < 32) {
                lo_ok = _mm512_cmplt_epi32_mask(lo_elem, _mm512_set1_epi32((int)rem));
                hi_ok = _mm512_cmplt_epi32_mask(hi_elem, _mm512_set1_epi32((int)rem));
            }
            __m512 a_lo[4], a_hi[4];
            for (int m = 0; m < M; ++m) {
                a_lo[m] = _mm512_loadu_ps(&ap[m][kr]);
                a_hi[m] = _mm512_loadu_ps(&ap[m][kr + 16]);
            }
            for (int c = 0; c < NC; ++c) {
                if (kr % 128 == 0) _mm_prefetch((const char *)ahead[c] + kr / 2, _MM_HINT_T0);
                const __m128i bytes = rem >= 32 ? _mm_loadu_si128((const __m128i *)(col[c] + kr / 2))
                                                : _mm_maskz_loadu_epi8(first_lanes((rem + 1) / 2), col[c] + kr / 2);
                const __m512i q = _mm512_broadcast_i32x4(bytes);
                __m512 lo = _mm512_permutexvar_ps(_mm512_srlv_epi32(q, shift_lo), tab[c]);
                __m512 hi = _mm512_permutexvar_ps(_mm512_srlv_epi32(q, shift_hi), tab[c]);
                if (rem < 32) lo = _mm512_maskz_mov_ps(lo_ok, lo), hi = _mm512_maskz_mov_ps(hi_ok, hi);
                for (int m = 0; m < M; ++m) {
                    acc[m][c][0] = _mm512_fmadd_ps(a_lo[m], lo, acc[m][c][0]);
                    acc[m][c][SPLIT] = _mm512_fmadd_ps(a_hi[m], hi, acc[m][c][SPLIT]);
                }
            }
        }
        ks = se;
    }
    for (int c = 0; c < NC && j + c < ch->nlen; ++c)
        for (int m = 0; m < M; ++m)
            put_c(ch, m, j + c, hsum(SPLIT ? _mm512_add_ps(acc[m][c][0], acc[m][c][1]) : acc[m][c][0]));
}

AINLINE void kc_nibble(const pt_gemv_chunk *ch, const float (*ap)[KCH], const int M, const int S4, const int RB) {
    for (int64_t j = 0; j < ch->nlen; j += 4) kc_nibble_cols(ch, ap, j, M, S4, RB);
}

/* ---- columns contiguous ------------------------------------------------------ */

/* Rows of B ahead that software prefetch asks for (dense rows into L2:
 * f32 1x4096x4096 1.84 -> 1.49 ms median on Zen 4, whose 32 KiB L1D four
 * 16 KiB rows ahead overran). */
#define PREFETCH_ROWS 4

/* One k row (or two: K2) of B over w columns into the accumulators. */
AINLINE void nc_rows(const pt_gemv_chunk *ch, float *acc, int64_t W, int64_t w, int64_t e, int64_t k, const float *zbuf,
                     const float *sbuf, const int M, const int DT, const int DQ, const int RB, const int K2) {
    const pt_gemm_operand *o = ch->bo;
    const int bits = DT == DT_F32 ? 32 : DT == DT_BF16 || DT == DT_F16 ? 16 : 8;
    const int64_t line_cols = 512 / bits;
    __m512 a0[4], a1[4];
    for (int m = 0; m < M; ++m) {
        a0[m] = _mm512_set1_ps(ch->a[m * KCH + (k - ch->k0)]);
        a1[m] = K2 ? _mm512_set1_ps(ch->a[m * KCH + (k + 1 - ch->k0)]) : a0[m];
    }
    for (int64_t j = 0; j < w; j += 16) {
        if (j % line_cols == 0) {
            _mm_prefetch((const char *)ch->b + (e + j + PREFETCH_ROWS * o->s_k) * bits / 8, _MM_HINT_T1);
            if (K2) _mm_prefetch((const char *)ch->b + (e + j + (PREFETCH_ROWS + 1) * o->s_k) * bits / 8, _MM_HINT_T1);
        }
        __m512 v[2];
        for (int r = 0; r <= K2; ++r) v[r] = load16(ch->b, e + r * o->s_k + j, DT, first_lanes(w - j));
        const __m512 z = DQ ? _mm512_load_ps(zbuf + j) : _mm512_setzero_ps();
        const __m512 sc = DQ ? _mm512_load_ps(sbuf + j) : _mm512_setzero_ps();
        for (int r = 0; r <= K2; ++r) {
            if (DQ) v[r] = _mm512_mul_ps(_mm512_sub_ps(v[r], z), sc);
            v[r] = apply_round(v[r], RB);
        }
        for (int m = 0; m < M; ++m) {
            float *at = acc + m * W + j;
            __m512 t = _mm512_fmadd_ps(a0[m], v[0], _mm512_load_ps(at));
            if (K2) t = _mm512_fmadd_ps(a1[m], v[1], t);
            _mm512_store_ps(at, t);
        }
    }
}

/* Floats of accumulators (all rows) for columns-contiguous B (4-bit). */
#define NC_ACC_FLOATS PT_GEMV_NC_ACC

AINLINE void nc_kernel(const pt_gemv_chunk *ch, const int M, const int DT, const int DQ, const int RB) {
    const pt_gemm_operand *o = ch->bo;
    /* Block width: as wide as the chunk's columns, up to the limit. */
    const int64_t wmax = DQ ? PT_GEMV_NC_ACC / M / 32 * 32 : pt_gemv_nc_cols(M);
    const int64_t W = ch->nlen < wmax ? (ch->nlen + 31) / 32 * 32 : wmax;
    _Alignas(64) float acc[PT_GEMV_NC_ACC], zbuf[DQ ? PT_GEMV_NC_ACC : 1], sbuf[DQ ? PT_GEMV_NC_ACC : 1];
    const int64_t kend = ch->k0 + ch->klen, group = DQ ? group_len(ch) : 0;
    const pt_gemm_dequant *dq = &o->dq;
    for (int64_t jb = 0; jb < ch->nlen; jb += W) {
        const int64_t w = ch->nlen - jb < W ? ch->nlen - jb : W, nb = ch->n0 + jb;
        memset(acc, 0, sizeof(float) * (size_t)(M * W));
        for (int64_t ks = ch->k0; ks < kend;) {
            int64_t se = segment_end(group, ks, kend);
            if (DQ) {
                int64_t g = group > 0 ? ks / group : 0;
                pt_gemv_params_f32(ch, nb * dq->sc_sn + g * dq->sc_sg, dq->sc_sn, nb * dq->zp_sn + g * dq->zp_sg,
                                   dq->zp_sn, w, sbuf, zbuf);
                for (int64_t j = w; j < (w + 31) / 32 * 32; ++j) sbuf[j] = zbuf[j] = 0.0f;
            }
            int64_t k = ks;
            for (; k + 1 < se; k += 2)
                nc_rows(ch, acc, W, w, nb * o->s_row + k * o->s_k, k, zbuf, sbuf, M, DT, DQ, RB, 1);
            if (k < se) nc_rows(ch, acc, W, w, nb * o->s_row + k * o->s_k, k, zbuf, sbuf, M, DT, DQ, RB, 0);
            ks = se;
        }
        for (int m = 0; m < M; ++m)
            for (int64_t j = 0; j < w; ++j) put_c(ch, m, jb + j, acc[m * W + j]);
    }
}

/* ---- dispatch ------------------------------------------------------------------ */



#define FOR_M(CALL)                                                                                             \
    switch (ch->M) {                                                                                            \
    case 1: CALL(1); break;                                                                                     \
    case 2: CALL(2); break;                                                                                     \
    case 3: CALL(3); break;                                                                                     \
    default: CALL(4); break;                                                                                    \
    }

/* ---- columns contiguous, 4-bit B ----------------------------------------------- */

/* 64 bytes of a k row are 128 columns.  Dword i of the raw vector holds
 * columns 8i..8i+7, one nibble each; shifted right by 4s, its low nibble is
 * column 8i + s, and vpermps reads only the low 4 bits of an index, so one
 * shift and one table lookup give 16 columns as f32 with no masking, no
 * widening shuffle and no conversion.  Accumulators, scales and zero points
 * of a 128-column block use that order: vector s, lane i = column 8i + s. */
static inline int64_t nib128_pos(int64_t j) { return (j & ~(int64_t)127) + (j & 7) * 16 + ((j & 127) >> 3); }

/* n (a multiple of 128) values from column order into that order. */
static inline void nib128_order(const float *src, float *dst, int64_t n) {
    const __m512i idx = _mm512_setr_epi32(0, 8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104, 112, 120);
    for (int64_t j = 0; j < n; j += 128)
        for (int s = 0; s < 8; ++s) _mm512_store_ps(dst + j + 16 * s, _mm512_i32gather_ps(idx, src + j + s, 4));
}

/* KR (1..4) k rows of B over w columns into the accumulators; the values
 * are (q - zp) * scale in f32, rounded as the other kernels do, then FMA'd
 * row after row in k order.  RAW: the values are q itself (no zero point,
 * scale or rounding: nc_nibble_kernel's factored form), one shift, one
 * lookup and one FMA per 16 values and row of A (a Zen 4 core issues about
 * two 512-bit operations a cycle, so these three, not the FMA, set the
 * pace; decoding by masks, ORs into a float's mantissa and a subtraction,
 * or by masks and an unsigned conversion, measured no faster). */
AINLINE void nc_nib_rows(const pt_gemv_chunk *ch, float *acc, int64_t W, int64_t w, int64_t e, int64_t k,
                         const float *zbuf, const float *sbuf, const int M, const int S4, const int ZP, const int RB,
                         const int KR, const int RAW) {
    const pt_gemm_operand *o = ch->bo;
    const __m512 tab = S4 ? _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, -8, -7, -6, -5, -4, -3, -2, -1)
                          : _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    __m512 a[4][4];
    for (int r = 0; r < KR; ++r)
        for (int m = 0; m < M; ++m) a[r][m] = _mm512_set1_ps(ch->a[m * KCH + (k + r - ch->k0)]);
    const uint8_t *b = (const uint8_t *)ch->b;
    for (int64_t j = 0; j < w; j += 128) {
        __m512i raw[4];
        for (int r = 0; r < KR; ++r) {
            const uint8_t *row = b + (e + r * o->s_k + j) / 2;
            /* Two steps ahead (PREFETCH_ROWS rows for single rows). */
            _mm_prefetch((const char *)row + (KR == 1 ? PREFETCH_ROWS : 2 * KR) * o->s_k / 2, _MM_HINT_T0);
            raw[r] = w - j >= 128 ? _mm512_loadu_si512(row)
                                  : _mm512_maskz_loadu_epi8(w - j >= 127 ? ~(__mmask64)0
                                                                          : (((__mmask64)1 << ((w - j + 1) / 2)) - 1),
                                                            row);
        }
#pragma GCC unroll 8
        for (int sh = 0; sh < 8; ++sh) {
            const __m512 sc = RAW ? _mm512_setzero_ps() : _mm512_load_ps(sbuf + j + 16 * sh);
            const __m512 z = ZP && !RAW ? _mm512_load_ps(zbuf + j + 16 * sh) : _mm512_setzero_ps();
            __m512 t[4];
            for (int m = 0; m < M; ++m) t[m] = _mm512_load_ps(acc + m * W + j + 16 * sh);
            for (int r = 0; r < KR; ++r) {
                __m512 v = _mm512_permutexvar_ps(sh ? _mm512_srli_epi32(raw[r], 4 * sh) : raw[r], tab);
                if (!RAW) {
                    if (ZP) v = _mm512_sub_ps(v, z);
                    v = apply_round(_mm512_mul_ps(v, sc), RB);
                }
                for (int m = 0; m < M; ++m) t[m] = _mm512_fmadd_ps(a[r][m], v, t[m]);
            }
            for (int m = 0; m < M; ++m) _mm512_store_ps(acc + m * W + j + 16 * sh, t[m]);
        }
    }
}

/* Without dequantisation the parameters are scale 1 and zero point 0
 * (pt_gemv_params_f32): q * 1 is q, the value the other kernels use.
 *
 * FACT (no rounding of B values): within a segment of one group the scale
 * and zero point are constant per column, so Σ a·(q - zp)·s is computed as
 * s·(Σ a·q - zp·Σ a): the rows accumulate raw q into the segment's sums,
 * and each segment ends with one fold per column into the totals.  The
 * result differs from dequantising each value first only in rounding (both
 * are f32 sums of the same products).  Rounded B values (bf16 math) need
 * each value dequantised, so they keep the per-value form. */
AINLINE void nc_nibble_kernel(const pt_gemv_chunk *ch, const int M, const int S4, const int ZP, const int RB) {
    const pt_gemm_operand *o = ch->bo;
    const int DQ = o->dq.on, FACT = !RB;
    const int64_t W = NC_ACC_FLOATS / M / 128 * 128;
    _Alignas(64) float acc[NC_ACC_FLOATS], zbuf[NC_ACC_FLOATS], sbuf[NC_ACC_FLOATS], zt[NC_ACC_FLOATS],
        st[NC_ACC_FLOATS], total[NC_ACC_FLOATS];
    const int64_t kend = ch->k0 + ch->klen, group = DQ ? group_len(ch) : 0;
    const pt_gemm_dequant *dq = &o->dq;
    for (int64_t jb = 0; jb < ch->nlen; jb += W) {
        const int64_t w = ch->nlen - jb < W ? ch->nlen - jb : W, nb = ch->n0 + jb, wp = (w + 127) / 128 * 128;
        if (!FACT) memset(acc, 0, sizeof(float) * (size_t)(M * W));
        for (int64_t ks = ch->k0; ks < kend;) {
            const int64_t se = segment_end(group, ks, kend);
            if (DQ || ks == ch->k0) {
                const int64_t g = group > 0 ? ks / group : 0;
                pt_gemv_params_f32(ch, nb * dq->sc_sn + g * dq->sc_sg, dq->sc_sn, nb * dq->zp_sn + g * dq->zp_sg,
                                   dq->zp_sn, w, st, zt);
                for (int64_t j = w; j < wp; ++j) st[j] = zt[j] = 0.0f;
                nib128_order(st, sbuf, wp);
                if (ZP || !FACT) nib128_order(zt, zbuf, wp);
            }
            if (FACT) memset(acc, 0, sizeof(float) * (size_t)(M * W));
            int64_t k = ks;
            if (FACT) {
                for (; k + 3 < se; k += 4)
                    nc_nib_rows(ch, acc, W, w, nb * o->s_row + k * o->s_k, k, NULL, NULL, M, S4, 0, 0, 4, 1);
                for (; k < se; ++k)
                    nc_nib_rows(ch, acc, W, w, nb * o->s_row + k * o->s_k, k, NULL, NULL, M, S4, 0, 0, 1, 1);
                /* The segment's fold: total += s·(Σ a·q - zp·Σ a). */
                for (int m = 0; m < M; ++m) {
                    float asum = 0.0f;
                    if (ZP)
                        for (int64_t kk = ks; kk < se; ++kk) asum += ch->a[m * KCH + (kk - ch->k0)];
                    const __m512 as = _mm512_set1_ps(asum);
                    float *tot = total + m * W;
                    const float *sg = acc + m * W;
                    for (int64_t j = 0; j < wp; j += 16) {
                        __m512 v = _mm512_load_ps(sg + j);
                        if (ZP) v = _mm512_fnmadd_ps(_mm512_load_ps(zbuf + j), as, v);
                        const __m512 s = _mm512_load_ps(sbuf + j);
                        _mm512_store_ps(tot + j, ks == ch->k0 ? _mm512_mul_ps(s, v)
                                                              : _mm512_fmadd_ps(s, v, _mm512_load_ps(tot + j)));
                    }
                }
            } else {
                for (; k + 3 < se; k += 4)
                    nc_nib_rows(ch, acc, W, w, nb * o->s_row + k * o->s_k, k, zbuf, sbuf, M, S4, ZP, RB, 4, 0);
                for (; k < se; ++k)
                    nc_nib_rows(ch, acc, W, w, nb * o->s_row + k * o->s_k, k, zbuf, sbuf, M, S4, ZP, RB, 1, 0);
            }
            ks = se;
        }
        const float *res = FACT ? total : acc;
        for (int m = 0; m < M; ++m)
            for (int64_t j = 0; j < w; ++j) put_c(ch, m, jb + j, res[m * W + nib128_pos(j)]);
    }
}

static void nc_nibble_any(const pt_gemv_chunk *ch, int s4, int zp, int rb) {
#define NN(M)                                                                                                   \
    do {                                                                                                        \
        if (s4) {                                                                                               \
            if (zp) rb ? nc_nibble_kernel(ch, M, 1, 1, 1) : nc_nibble_kernel(ch, M, 1, 1, 0);                   \
            else rb ? nc_nibble_kernel(ch, M, 1, 0, 1) : nc_nibble_kernel(ch, M, 1, 0, 0);                      \
        } else {                                                                                                \
            if (zp) rb ? nc_nibble_kernel(ch, M, 0, 1, 1) : nc_nibble_kernel(ch, M, 0, 1, 0);                   \
            else rb ? nc_nibble_kernel(ch, M, 0, 0, 1) : nc_nibble_kernel(ch, M, 0, 0, 0);                      \
        }                                                                                                       \
    } while (0)
    FOR_M(NN)
#undef NN
}

static void kc_dense_any(const pt_gemv_chunk *ch, int dt, int dq, int rb) {
#define KC(M)                                                                                                   \
    do {                                                                                                        \
        switch (dt) {                                                                                           \
        case DT_F32: rb ? kc_dense(ch, M, DT_F32, 0, 1) : kc_dense(ch, M, DT_F32, 0, 0); break;                 \
        case DT_BF16: kc_dense(ch, M, DT_BF16, 0, 0); break;                                                    \
        case DT_F16: rb ? kc_dense(ch, M, DT_F16, 0, 1) : kc_dense(ch, M, DT_F16, 0, 0); break;                 \
        case DT_S8:                                                                                             \
            if (dq) rb ? kc_dense(ch, M, DT_S8, 1, 1) : kc_dense(ch, M, DT_S8, 1, 0);                           \
            else rb ? kc_dense(ch, M, DT_S8, 0, 1) : kc_dense(ch, M, DT_S8, 0, 0);                              \
            break;                                                                                              \
        default:                                                                                                \
            if (dq) rb ? kc_dense(ch, M, DT_U8, 1, 1) : kc_dense(ch, M, DT_U8, 1, 0);                           \
            else rb ? kc_dense(ch, M, DT_U8, 0, 1) : kc_dense(ch, M, DT_U8, 0, 0);                              \
            break;                                                                                              \
        }                                                                                                       \
    } while (0)
    FOR_M(KC)
#undef KC
}

static void kc_nibble_any(const pt_gemv_chunk *ch, int s4, int rb) {
    _Alignas(64) float ap[PT_GEMV_MAX_M][KCH];
    reorder_a_nibbles(ch, ap);
    const float(*a)[KCH] = (const float(*)[KCH])ap;
#define KN(M)                                                                                                   \
    do {                                                                                                        \
        if (s4) rb ? kc_nibble(ch, a, M, 1, 1) : kc_nibble(ch, a, M, 1, 0);                                     \
        else rb ? kc_nibble(ch, a, M, 0, 1) : kc_nibble(ch, a, M, 0, 0);                                        \
    } while (0)
    FOR_M(KN)
#undef KN
}

static void nc_any(const pt_gemv_chunk *ch, int dt, int dq, int rb) {
#define NC_INT(M, T)                                                                                            \
    do {                                                                                                        \
        if (dq) rb ? nc_kernel(ch, M, T, 1, 1) : nc_kernel(ch, M, T, 1, 0);                                     \
        else rb ? nc_kernel(ch, M, T, 0, 1) : nc_kernel(ch, M, T, 0, 0);                                        \
    } while (0)
#define NCK(M)                                                                                                  \
    do {                                                                                                        \
        switch (dt) {                                                                                           \
        case DT_F32: rb ? nc_kernel(ch, M, DT_F32, 0, 1) : nc_kernel(ch, M, DT_F32, 0, 0); break;               \
        case DT_BF16: nc_kernel(ch, M, DT_BF16, 0, 0); break;                                                   \
        case DT_F16: rb ? nc_kernel(ch, M, DT_F16, 0, 1) : nc_kernel(ch, M, DT_F16, 0, 0); break;               \
        case DT_S8: NC_INT(M, DT_S8); break;                                                                    \
        default: NC_INT(M, DT_U8); break;                                                                       \
        }                                                                                                       \
    } while (0)
    FOR_M(NCK)
#undef NCK
#undef NC_INT
}

bool pt_gemv_chunk_avx512(const pt_gemv_chunk *ch) {
    const pt_gemm_operand *o = ch->bo;
    const int dt = dt_code(o->dt);
    const pt_gemv_round r = pt_gemv_b_round(ch);
    if (dt < 0 || ch->M < 1 || ch->M > 4) return false;
    if (r == PT_GEMV_ROUND_F16 || r == PT_GEMV_ROUND_TF32) return false; /* rare modes: the portable loop */
    const int dq = o->dq.on, nibble = dt == DT_S4 || dt == DT_U4;
    /* bf16 values are bf16 already. */
    const int rb = r == PT_GEMV_ROUND_BF16 && !(dt == DT_BF16 && !dq);
    if (o->s_k == 1) {
        /* One parameter per (column, group) of the chunk is kept. */
        if (dq && o->dq.group > 0 && o->dq.group < 32) return false;
        if (!nibble) {
            kc_dense_any(ch, dt, dq, rb);
            return true;
        }
        /* Whole bytes per column and 32-k blocks inside one group. */
        if (o->s_row % 2 != 0 || ch->k0 % 2 != 0) return false;
        if (dq && o->dq.group > 0 && o->dq.group % 32 != 0) return false;
        kc_nibble_any(ch, dt == DT_S4, rb);
        return true;
    }
    if (nibble && (ch->n0 % 2 != 0 || o->s_k % 2 != 0)) return false;
    if (nibble) {
        nc_nibble_any(ch, dt == DT_S4, dq && o->dq.zp_dt != dnnl_data_type_undef, rb);
        return true;
    }
    nc_any(ch, dt, dq, rb);
    return true;
}
