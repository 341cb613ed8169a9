/* BF16-kind chunk kernel of the small-M path for 4-bit weights with k
 * contiguous (kernels/gemm/gemm_gemv.h), on AVX512_BF16.
 *
 * Every B value of the BF16 kind is bf16((q - zp) * scale), one of 16 per
 * (column, group): a 32-word table (the 16 values twice, so vpermw may see
 * the neighbouring nibble's low bit in index bit 4) turns 32 nibbles into 32
 * bf16 values in one vpermw, and vdpbf16ps multiplies them with A two k at a
 * time.  Per 64 k: one widening load, one shift, two vpermw and two
 * vdpbf16ps per row, half the work of the f32 route.  32 bytes of nibble
 * pairs unpack into the even and the odd k, so A is reordered the same way
 * once per chunk (A of the BF16 kind is already rounded to bf16). */
#include <immintrin.h>
#include <string.h>

#include "kernels/gemm/gemm_gemv.h"
#include "kernels/gemm/gemm_int_load.h"
#include "kernels/x86/gemv_params_x86.h"

#define AINLINE static inline __attribute__((always_inline))
#define KCH PT_GEMV_KCHUNK
#define MAX_CHUNK_GROUPS (KCH / 64 + 2)

static inline __mmask32 first_words(int64_t n) {
    return n >= 32 ? (__mmask32)0xffffffffu : (__mmask32)((1u << n) - 1);
}

/* A as bf16 words, per block of 64 k: the 32 even k, then the 32 odd k. */
static void split_even_odd_bf16(const pt_gemv_chunk *ch, uint16_t dst[][KCH]) {
    const int64_t blocks = (ch->klen + 63) / 64;
    for (int m = 0; m < ch->M; ++m) {
        const float *a = ch->a + m * KCH;
        for (int64_t b = 0; b < blocks; ++b)
            for (int i = 0; i < 32; ++i) {
                uint32_t e, o;
                memcpy(&e, &a[64 * b + 2 * i], 4);
                memcpy(&o, &a[64 * b + 2 * i + 1], 4);
                dst[m][64 * b + i] = (uint16_t)(e >> 16);
                dst[m][64 * b + 32 + i] = (uint16_t)(o >> 16);
            }
    }
}

/* Scale and zero point of column n for the chunk's groups. */
static void column_params(const pt_gemv_chunk *ch, int64_t n, int64_t g0, int64_t ng, float *scale, float *zp) {
    const pt_gemm_dequant *dq = &ch->bo->dq;
    pt_gemv_params_f32(ch, n * dq->sc_sn + g0 * dq->sc_sg, dq->sc_sg, n * dq->zp_sn + g0 * dq->zp_sg, dq->zp_sg, ng,
                       scale, zp);
}

/* The 16 bf16 values of a nibble for one (column, group), twice. */
AINLINE __m512i nibble_table_bf16(int is_s4, float zp, float scale) {
    const __m512 u4 = _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const __m512 s4 = _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, -8, -7, -6, -5, -4, -3, -2, -1);
    __m512 t = _mm512_mul_ps(_mm512_sub_ps(is_s4 ? s4 : u4, _mm512_set1_ps(zp)), _mm512_set1_ps(scale));
    __m256i h = (__m256i)_mm512_cvtneps_pbh(t);
    return _mm512_inserti64x4(_mm512_castsi256_si512(h), h, 1);
}

AINLINE void nibble_cols(const pt_gemv_chunk *ch, const uint16_t (*ap)[KCH], int64_t j, const int M, const int S4) {
    enum { NC = 4 };
    const int SPLIT = M <= 2;
    const pt_gemm_operand *o = ch->bo;
    const pt_gemm_dequant *dq = &o->dq;
    /* Prefetch: the same position NC columns ahead (see gemv_avx512.c). */
    const uint8_t *col[NC], *ahead[NC];
    int64_t n[NC];
    for (int c = 0; c < NC; ++c) {
        n[c] = ch->n0 + (j + c < ch->nlen ? j + c : ch->nlen - 1);
        col[c] = (const uint8_t *)ch->b + (n[c] * o->s_row + ch->k0) / 2;
        ahead[c] = (const uint8_t *)ch->b + ((ch->n0 + j + c + NC) * o->s_row + ch->k0) / 2;
    }
    const int64_t group = dq->on && dq->group > 0 ? dq->group : 0, kend = ch->k0 + ch->klen;
    const int64_t g0 = group ? ch->k0 / group : 0, ng = group ? (kend - 1) / group - g0 + 1 : 1;
    float zps[NC][MAX_CHUNK_GROUPS], scs[NC][MAX_CHUNK_GROUPS];
    for (int c = 0; c < NC; ++c) column_params(ch, n[c], g0, ng, scs[c], zps[c]);
    __m512 acc[4][NC][2];
    for (int m = 0; m < M; ++m)
        for (int c = 0; c < NC; ++c) acc[m][c][0] = acc[m][c][1] = _mm512_setzero_ps();
    for (int64_t ks = ch->k0, gi = 0; ks < kend; ++gi) {
        int64_t se = group ? (ks / group + 1) * group : kend;
        se = se < kend ? se : kend;
        __m512i tab[NC];
        for (int c = 0; c < NC; ++c) tab[c] = nibble_table_bf16(S4, zps[c][gi], scs[c][gi]);
        for (int64_t k = ks; k < se; k += 64) {
            const int64_t rem = se - k, kr = k - ch->k0;
            const __mmask32 even = first_words((rem + 1) / 2), odd = first_words(rem / 2);
            __m512i a_even[4], a_odd[4];
            for (int m = 0; m < M; ++m) {
                a_even[m] = _mm512_loadu_si512(&ap[m][kr]);
                a_odd[m] = _mm512_loadu_si512(&ap[m][kr + 32]);
            }
            for (int c = 0; c < NC; ++c) {
                _mm_prefetch((const char *)ahead[c] + kr / 2, _MM_HINT_T0);
                __m512i w = _mm512_cvtepu8_epi16(_mm256_maskz_loadu_epi8(even, col[c] + kr / 2));
                __m512i lo = _mm512_permutexvar_epi16(w, tab[c]);
                __m512i hi = _mm512_permutexvar_epi16(_mm512_srli_epi16(w, 4), tab[c]);
                if (rem < 64) lo = _mm512_maskz_mov_epi16(even, lo), hi = _mm512_maskz_mov_epi16(odd, hi);
                for (int m = 0; m < M; ++m) {
                    acc[m][c][0] = _mm512_dpbf16_ps(acc[m][c][0], (__m512bh)a_even[m], (__m512bh)lo);
                    acc[m][c][SPLIT] = _mm512_dpbf16_ps(acc[m][c][SPLIT], (__m512bh)a_odd[m], (__m512bh)hi);
                }
            }
        }
        ks = se;
    }
    for (int c = 0; c < NC && j + c < ch->nlen; ++c)
        for (int m = 0; m < M; ++m) {
            float v = _mm512_reduce_add_ps(SPLIT ? _mm512_add_ps(acc[m][c][0], acc[m][c][1]) : acc[m][c][0]);
            float *p = &ch->c[m * ch->ldc + j + c];
            *p = ch->accumulate ? *p + v : v;
        }
}

AINLINE void nibble_all(const pt_gemv_chunk *ch, const uint16_t (*ap)[KCH], const int M, const int S4) {
    for (int64_t j = 0; j < ch->nlen; j += 4) nibble_cols(ch, ap, j, M, S4);
}

bool pt_gemv_chunk_avx512bf16(const pt_gemv_chunk *ch) {
    const pt_gemm_operand *o = ch->bo;
    if (ch->kind != PT_GEMM_BF16 || (o->dt != dnnl_s4 && o->dt != dnnl_u4) || o->s_k != 1) return false;
    if (o->s_row % 2 != 0 || ch->k0 % 2 != 0 || ch->M < 1 || ch->M > 4) return false;
    if (o->dq.on && o->dq.group > 0 && o->dq.group % 64 != 0) return false;
    _Alignas(64) uint16_t ap[PT_GEMV_MAX_M][KCH];
    split_even_odd_bf16(ch, ap);
    const uint16_t(*a)[KCH] = (const uint16_t(*)[KCH])ap;
    const int s4 = o->dt == dnnl_s4;
    switch (ch->M) {
    case 1: s4 ? nibble_all(ch, a, 1, 1) : nibble_all(ch, a, 1, 0); break;
    case 2: s4 ? nibble_all(ch, a, 2, 1) : nibble_all(ch, a, 2, 0); break;
    case 3: s4 ? nibble_all(ch, a, 3, 1) : nibble_all(ch, a, 3, 0); break;
    default: s4 ? nibble_all(ch, a, 4, 1) : nibble_all(ch, a, 4, 0); break;
    }
    return true;
}
