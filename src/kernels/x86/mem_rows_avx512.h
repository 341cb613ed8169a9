/* The AVX-512 rows of kernels/mem/mem_rows.h, written once: the including
 * file defines PT_MEM_ROW (the row's name) and provides
 *   static inline __m256i pt_mem_bf16x16(__m512 v)
 * (16 f32 rounded to bf16 bits as ir/dtype_round.h), the only step the two
 * rows (with and without AVX512_BF16) do differently. */
#ifndef PARTITA_KERNELS_X86_MEM_ROWS_AVX512_H
#define PARTITA_KERNELS_X86_MEM_ROWS_AVX512_H

#include <immintrin.h>

#include "kernels/mem/mem_rows.h"

static inline __mmask16 pt_mem_mask16(int64_t left) {
    return left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1u);
}

static inline __m512 pt_mem_widen_bf16(__m256i h) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

/* Elements [i, i + 16) of an f32 / bf16 row as f32 (lanes outside k zero). */
static inline __m512 pt_mem_load16(const void *src, bool bf16, int64_t i, __mmask16 k) {
    if (bf16) return pt_mem_widen_bf16(_mm256_maskz_loadu_epi16(k, (const uint16_t *)src + i));
    return _mm512_maskz_loadu_ps(k, (const float *)src + i);
}

static inline __m256i pt_mem_bf16x16(__m512 v);

/* Elements [i, i + 16) of dst (f32, bf16 or f16), cached stores, lanes in k. */
static inline void pt_mem_store16(void *dst, dnnl_data_type_t dt, int64_t i, __m512 v, __mmask16 k) {
    switch ((int)dt) {
        case dnnl_bf16: _mm256_mask_storeu_epi16((uint16_t *)dst + i, k, pt_mem_bf16x16(v)); break;
        case dnnl_f16:
            _mm256_mask_storeu_epi16((uint16_t *)dst + i, k, _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
            break;
        default: _mm512_mask_storeu_ps((float *)dst + i, k, v); break;
    }
}

/* The writer shared by every row op: f(ctx, i, k) makes elements [i, i + 16)
 * (lanes in k); they go to dst with cached stores, or, when `stream`, with
 * non-temporal stores of whole 64-byte lines from the first aligned one on
 * (cached stores for the head before it and the tail after the last line). */
typedef __m512 (*pt_mem_make16)(const void *ctx, int64_t i, __mmask16 k);

static inline void pt_mem_emit(void *dst, dnnl_data_type_t dt, bool stream, int64_t n, const void *ctx,
                               pt_mem_make16 f) {
    const int64_t esz = dt == dnnl_f32 ? 4 : 2, per_line = 64 / esz;
    int64_t i = 0;
    if (stream && (uintptr_t)dst % (uintptr_t)esz == 0) {
        int64_t head = (int64_t)((64 - (uintptr_t)dst % 64) % 64) / esz;
        if (head > n) head = n;
        for (; i < head; i += 16) {
            const int64_t m = head - i < 16 ? head - i : 16;
            pt_mem_store16(dst, dt, i, f(ctx, i, pt_mem_mask16(m)), pt_mem_mask16(m));
        }
        i = head;
        for (; i + per_line <= n; i += per_line) {
            if (esz == 4) {
                _mm512_stream_ps((float *)dst + i, f(ctx, i, 0xFFFF));
                continue;
            }
            const __m512 a = f(ctx, i, 0xFFFF), b = f(ctx, i + 16, 0xFFFF);
            __m256i ha, hb;
            if (dt == dnnl_bf16) {
                ha = pt_mem_bf16x16(a), hb = pt_mem_bf16x16(b);
            } else {
                ha = _mm512_cvtps_ph(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
                hb = _mm512_cvtps_ph(b, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
            }
            _mm512_stream_si512((void *)((uint16_t *)dst + i), _mm512_inserti64x4(_mm512_castsi256_si512(ha), hb, 1));
        }
    }
    for (; i + 16 <= n; i += 16) pt_mem_store16(dst, dt, i, f(ctx, i, 0xFFFF), 0xFFFF);
    if (i < n) pt_mem_store16(dst, dt, i, f(ctx, i, pt_mem_mask16(n - i)), pt_mem_mask16(n - i));
}

/* ---- stream ---- */

static inline __m512 pt_mem_make_copy(const void *ctx, int64_t i, __mmask16 k) {
    return _mm512_maskz_loadu_ps(k, (const float *)ctx + i);
}

static void pt_mem_row_stream(void *dst, dnnl_data_type_t dt, const float *src, int64_t n) {
    pt_mem_emit(dst, dt, true, n, src, pt_mem_make_copy);
}

static void pt_mem_row_fence(void) { _mm_sfence(); }

/* ---- LayerNorm / RMSNorm ---- */

static inline __m512d pt_mem_lo8(__m512 v) { return _mm512_cvtps_pd(_mm512_castps512_ps256(v)); }
static inline __m512d pt_mem_hi8(__m512 v) {
    return _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
}

static void pt_mem_row_norm_stats(const void *src, dnnl_data_type_t dt, int64_t n, double k, float *xb, double s[2]) {
    const bool bf16 = dt == dnnl_bf16;
    const __m512d kd = _mm512_set1_pd(k);
    /* Eight chains (sums and squares of two vectors' halves): latency hidden. */
    __m512d a0 = _mm512_setzero_pd(), a1 = a0, a2 = a0, a3 = a0, q0 = a0, q1 = a0, q2 = a0, q3 = a0;
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        const __m512 u = pt_mem_load16(src, bf16, i, 0xFFFF), w = pt_mem_load16(src, bf16, i + 16, 0xFFFF);
        if (bf16) {
            _mm512_storeu_ps(xb + i, u);
            _mm512_storeu_ps(xb + i + 16, w);
        }
        const __m512d d0 = _mm512_sub_pd(pt_mem_lo8(u), kd), d1 = _mm512_sub_pd(pt_mem_hi8(u), kd);
        const __m512d d2 = _mm512_sub_pd(pt_mem_lo8(w), kd), d3 = _mm512_sub_pd(pt_mem_hi8(w), kd);
        a0 = _mm512_add_pd(a0, d0), a1 = _mm512_add_pd(a1, d1), a2 = _mm512_add_pd(a2, d2), a3 = _mm512_add_pd(a3, d3);
        q0 = _mm512_fmadd_pd(d0, d0, q0), q1 = _mm512_fmadd_pd(d1, d1, q1);
        q2 = _mm512_fmadd_pd(d2, d2, q2), q3 = _mm512_fmadd_pd(d3, d3, q3);
    }
    for (; i < n; i += 16) {
        const __mmask16 m = pt_mem_mask16(n - i);
        const __m512 u = pt_mem_load16(src, bf16, i, m);
        if (bf16) _mm512_mask_storeu_ps(xb + i, m, u);
        const __m512d d0 = _mm512_maskz_sub_pd((__mmask8)m, pt_mem_lo8(u), kd);
        const __m512d d1 = _mm512_maskz_sub_pd((__mmask8)(m >> 8), pt_mem_hi8(u), kd);
        a0 = _mm512_add_pd(a0, d0), a1 = _mm512_add_pd(a1, d1);
        q0 = _mm512_fmadd_pd(d0, d0, q0), q1 = _mm512_fmadd_pd(d1, d1, q1);
    }
    s[0] = _mm512_reduce_add_pd(_mm512_add_pd(_mm512_add_pd(a0, a2), _mm512_add_pd(a1, a3)));
    s[1] = _mm512_reduce_add_pd(_mm512_add_pd(_mm512_add_pd(q0, q2), _mm512_add_pd(q1, q3)));
}

typedef struct {
    const float *x;
    const double *g, *b;
    __m512d mean, inv;
    const char *pf, *pf_end, *pf_next;
    int64_t n;
    size_t pf_bytes;
} pt_mem_norm_ctx;

static inline __m512d pt_mem_norm8(const pt_mem_norm_ctx *c, __m512d x, int64_t i, __mmask8 k) {
    __m512d v = _mm512_mul_pd(_mm512_sub_pd(x, c->mean), c->inv);
    if (c->g) v = _mm512_mul_pd(v, _mm512_maskz_loadu_pd(k, c->g + i));
    if (c->b) v = _mm512_add_pd(v, _mm512_maskz_loadu_pd(k, c->b + i));
    return v;
}

static inline __m512 pt_mem_make_norm(const void *ctx, int64_t i, __mmask16 k) {
    pt_mem_norm_ctx *c = (pt_mem_norm_ctx *)ctx;
    /* The next row's lines at the pace of this one: memory stays busy while
     * this row is computed from the caches. */
    const char *want = c->pf + (size_t)(i + 16) * c->pf_bytes / (size_t)c->n;
    for (; c->pf_next < c->pf_end && c->pf_next < want; c->pf_next += 64) _mm_prefetch(c->pf_next, _MM_HINT_T1);
    const __m512 x = _mm512_maskz_loadu_ps(k, c->x + i);
    const __m512d lo = pt_mem_norm8(c, pt_mem_lo8(x), i, (__mmask8)k);
    const __m512d hi = pt_mem_norm8(c, pt_mem_hi8(x), i + 8, (__mmask8)(k >> 8));
    return _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps(lo)), _mm512_cvtpd_ps(hi), 1);
}

static void pt_mem_row_norm_apply(void *dst, dnnl_data_type_t dt, bool stream, const float *x, int64_t n, double mean,
                                  double inv, const double *g, const double *b, const void *pf, size_t pf_bytes) {
    pt_mem_norm_ctx c = {.x = x, .g = g, .b = b, .mean = _mm512_set1_pd(mean), .inv = _mm512_set1_pd(inv),
                         .pf = pf, .pf_end = pf ? (const char *)pf + pf_bytes : NULL, .pf_next = pf, .n = n,
                         .pf_bytes = pf ? pf_bytes : 0};
    pt_mem_emit(dst, dt, stream, n, &c, pt_mem_make_norm);
}

#define PT_MEM_ROW_OPS                           \
    .stream = pt_mem_row_stream, .fence = pt_mem_row_fence, .norm_stats = pt_mem_row_norm_stats, \
    .norm_apply = pt_mem_row_norm_apply

#endif
