/* The AVX-512 rows of kernels/mem/mem_rows.h, written once: the including
 * file provides
 *   static inline __m256i pt_mem_bf16x16(__m512 v)
 *   static inline __m512i pt_mem_bf16x32(__m512 a, __m512 b)
 * (16 f32, and a's 16 then b's 16, rounded to bf16 bits as
 * ir/dtype_round.h), the only step the two rows (with and without
 * AVX512_BF16) do differently. */
#ifndef PARTITA_KERNELS_X86_MEM_ROWS_AVX512_H
#define PARTITA_KERNELS_X86_MEM_ROWS_AVX512_H

#include <immintrin.h>
#include <math.h>
#include <string.h>

#include "kernels/mem/mem_rows.h"
#include "kernels/x86/avx512_int8_round.h"
#include "kernels/x86/avx512_transpose.h"
#include "kernels/x86/mem_math_avx512.h"
#include "kernels/x86/vec_exp_x86.h"

/* Everything here inlines into the row functions: a maker left out of line
 * costs a call per vector, and its loads keep a run-time mask (masked loads
 * that miss the caches are far slower than plain ones). */
#define PT_MEM_INLINE static inline __attribute__((always_inline))

PT_MEM_INLINE __mmask16 pt_mem_mask16(int64_t left) {
    return left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1u);
}

PT_MEM_INLINE __m512 pt_mem_widen_bf16(__m256i h) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

/* Elements [i, i + 16) of an f32 / bf16 row as f32 (lanes outside k zero). */
PT_MEM_INLINE __m512 pt_mem_load16(const void *src, bool bf16, int64_t i, __mmask16 k) {
    if (bf16) return pt_mem_widen_bf16(_mm256_maskz_loadu_epi16(k, (const uint16_t *)src + i));
    return _mm512_maskz_loadu_ps(k, (const float *)src + i);
}

/* The same for an f32, bf16 or f16 source. */
PT_MEM_INLINE __m512 pt_mem_load16_dt(const void *src, dnnl_data_type_t dt, int64_t i, __mmask16 k) {
    if (dt == dnnl_f16) return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(k, (const uint16_t *)src + i));
    return pt_mem_load16(src, dt == dnnl_bf16, i, k);
}

PT_MEM_INLINE __m256i pt_mem_bf16x16(__m512 v);
PT_MEM_INLINE __m512i pt_mem_bf16x32(__m512 a, __m512 b);

/* Elements [i, i + 16) of dst (f32, bf16 or f16), cached stores, lanes in k. */
PT_MEM_INLINE void pt_mem_store16(void *dst, dnnl_data_type_t dt, int64_t i, __m512 v, __mmask16 k) {
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

PT_MEM_INLINE void pt_mem_emit_dt(void *dst, dnnl_data_type_t dt, bool stream, int64_t n, const void *ctx,
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
            __m512i h;
            if (dt == dnnl_bf16) {
                h = pt_mem_bf16x32(a, b);
            } else {
                const __m256i ha = _mm512_cvtps_ph(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
                h = _mm512_inserti64x4(_mm512_castsi256_si512(ha), _mm512_cvtps_ph(b, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), 1);
            }
            _mm512_stream_si512((void *)((uint16_t *)dst + i), h);
        }
    }
    if (dt == dnnl_bf16) /* pairs of vectors: one conversion for 32 */
        for (; i + 32 <= n; i += 32) {
            const __m512 a = f(ctx, i, 0xFFFF), b = f(ctx, i + 16, 0xFFFF);
            _mm512_storeu_si512((void *)((uint16_t *)dst + i), pt_mem_bf16x32(a, b));
        }
    for (; i + 16 <= n; i += 16) pt_mem_store16(dst, dt, i, f(ctx, i, 0xFFFF), 0xFFFF);
    if (i < n) pt_mem_store16(dst, dt, i, f(ctx, i, pt_mem_mask16(n - i)), pt_mem_mask16(n - i));
}

/* pt_mem_emit_dt with the destination type a constant in each copy: its
 * per-vector switch folds away. */
PT_MEM_INLINE void pt_mem_emit(void *dst, dnnl_data_type_t dt, bool stream, int64_t n, const void *ctx, pt_mem_make16 f) {
    switch ((int)dt) {
        case dnnl_bf16: pt_mem_emit_dt(dst, dnnl_bf16, stream, n, ctx, f); break;
        case dnnl_f16: pt_mem_emit_dt(dst, dnnl_f16, stream, n, ctx, f); break;
        default: pt_mem_emit_dt(dst, dnnl_f32, stream, n, ctx, f); break;
    }
}

/* Prefetch of the next piece of the source while this one is written, at
 * its pace (a fixed number of lines per vector written, so that the last
 * line goes out with the last vector): memory keeps reading while the
 * stores drain, and the next pass over that piece finds it in L2. */
typedef struct {
    const char *at, *end;
    int64_t per_vector;
} pt_mem_prefetch;

PT_MEM_INLINE pt_mem_prefetch pt_mem_prefetch_init(const void *pf, size_t bytes, int64_t n) {
    const int64_t lines = pf ? (int64_t)((bytes + 63) / 64) : 0, vectors = (n + 15) / 16;
    const char *p = pf;
    return (pt_mem_prefetch){.at = p, .end = p ? p + bytes : NULL,
                             .per_vector = vectors > 0 ? (lines + vectors - 1) / vectors : 0};
}

PT_MEM_INLINE void pt_mem_prefetch_step(pt_mem_prefetch *q) {
    for (int64_t j = 0; j < q->per_vector && q->at < q->end; ++j, q->at += 64) _mm_prefetch(q->at, _MM_HINT_T1);
}

/* A prefetch spread evenly over `steps` vectors (a row's passes): each
 * step touches the address `stride` bytes past the last, stride the
 * source's bytes over the steps rounded up, so that memory keeps reading the
 * next row the whole time this one computes, not only while it is written.
 * A line touched twice costs one load-port slot; no branch but NULL's, and
 * no state beyond one pointer (a counter kept in memory would chain the
 * steps through store-to-load forwarding). */
typedef struct {
    uintptr_t at; /* an address, not a pointer: it may run past the source (a prefetch never faults) */
    uintptr_t stride;
    /* pt_mem_trickle_step_in with two levels: `at` to L2 (T1) and the line
     * `back` bytes before it to L1 (see pt_mem_run_prefetch). */
    uintptr_t back;
} pt_mem_trickle;

PT_MEM_INLINE pt_mem_trickle pt_mem_trickle_init(const void *pf, size_t bytes, int64_t steps) {
    return (pt_mem_trickle){.at = (uintptr_t)pf, .stride = pf && steps > 0 ? (bytes + (size_t)steps - 1) / (size_t)steps : 0};
}

PT_MEM_INLINE void pt_mem_trickle_step(pt_mem_trickle *q) {
    if (q->at) _mm_prefetch((const char *)q->at, _MM_HINT_T1);
    q->at += q->stride;
}

/* The step of a trickle made with two levels (two_level a constant where
 * it is called: the one-level steps of the compute-bound rows keep their
 * two instructions; a run-time test cost SoftMax bf16 2-4%). */
PT_MEM_INLINE void pt_mem_trickle_step_in(pt_mem_trickle *q, bool two_level) {
    if (!two_level) {
        pt_mem_trickle_step(q);
        return;
    }
    if (q->at) {
        _mm_prefetch((const char *)q->at, _MM_HINT_T1);
        _mm_prefetch((const char *)(q->at - q->back), _MM_HINT_T0);
    }
    q->at += q->stride;
}

/* ---- rows in a pipeline ----
 * A row op whose last pass writes (SoftMax's scaling, LayerNorm's
 * normalisation) would write its whole row in one burst: the non-temporal
 * stores then wait on memory while nothing else runs, and during the passes
 * before, memory only reads.  Over a run of rows the ops below write row r
 * in pieces between the chunks of row r + 1's first passes instead, so that
 * reads, writes and arithmetic overlap all along; the rows ahead are
 * prefetched evenly over the steps (with both, 64 MiB on two threads:
 * SoftMax f32 10-18% faster, LayerNorm f32 22-29%; docs/bench.md). */

/* Elements per chunk of a pass, multiples of 512 so that the sums keep the
 * order of one pass over the whole row.  Finer pieces overlap more and cost
 * more per piece.  Measured on rows of 4096 (64 MiB, two threads): SoftMax
 * 512 about 8% slower than 2048 on rows in L2; LayerNorm / RMSNorm with an
 * f32 dst (the heavy f64 normalisation) 512 3-10% faster than 2048, with a
 * bf16 dst one piece per row (written whole after the next row's
 * statistics) up to 5% faster than pieces of 2048. */
#define PT_MEM_SOFTMAX_CHUNK 2048
#define PT_MEM_NORM_CHUNK(f32_out, n) ((f32_out) ? 512 : (n))

/* Where piece j of `pieces` of a row of n elements at dst (elements of esz
 * bytes) starts: 0 for the first, n past the last, j·n / pieces moved up to
 * the next 64-byte line of dst between, so that streamed pieces write whole
 * lines (any n, any alignment). */
PT_MEM_INLINE int64_t pt_mem_piece_start(const void *dst, int64_t esz, int64_t n, int64_t j, int64_t pieces) {
    if (j <= 0) return 0;
    if (j >= pieces) return n;
    int64_t a = n * j / pieces;
    const uintptr_t at = (uintptr_t)dst + (uintptr_t)(a * esz);
    if (at % (uintptr_t)esz == 0) a += (int64_t)((64 - at % 64) % 64) / esz;
    return a < n ? a : n;
}

/* How far ahead of the row it computes a run of rows prefetches: at least
 * a row.  Measured on rows of 4096 (64 MiB, two threads): 128 to 256 KiB
 * ahead best, 512 KiB slower again for f32 rows (the prefetched lines leave
 * L2 before they are read); with the T0 hint below, 0-10% faster than the
 * next row but one into L2 (the order of the variants rotated per run: the
 * one timed right after the copy comes out up to 10% slower). */
#define PT_MEM_PREFETCH_AHEAD ((size_t)128 << 10)

/* With two levels, the line this far ahead goes to L1 as well. */
#define PT_MEM_PREFETCH_NEAR ((size_t)8 << 10)

/* The prefetch for row r of a run of `rows` rows of `bytes` each from src:
 * the row's worth of bytes `ahead` past it, spread over `steps`, none past
 * the run; the first row starts at the next row and takes what its steps
 * cover at a line each (the rows between go without: a few rows per run).
 * The lines go to L2 (T1): they arrive long before their use.  Into L1
 * (T0) measured faster on the faster VM of the early sessions; on Zen 4
 * (32 KiB L1D) it evicted the row being computed: 64 MiB,
 * 2 threads, medians of 3-4 alternating rounds, SoftMax bf16 5.98-6.22 ->
 * 5.50-5.53 ms, LayerNorm f32 4.14 -> 3.70, bf16 4.43 -> 3.80, RMSNorm
 * f32 3.89 -> 3.54, bf16 3.63 -> 3.09 (session 20).  With
 * `two_level` they go to L2 (T1) and the lines PT_MEM_PREFETCH_NEAR ahead
 * to L1: SoftMax with an f32 source 5-15% faster that way, with a bf16 one
 * 3-5% slower, the norms within the noise (rotated runs, 64 MiB). */
PT_MEM_INLINE pt_mem_trickle pt_mem_run_prefetch(const char *src, size_t bytes, int64_t r, int64_t rows, int64_t steps,
                                                 bool two_level) {
    const size_t ahead = bytes > PT_MEM_PREFETCH_AHEAD ? bytes : PT_MEM_PREFETCH_AHEAD;
    const size_t total = bytes * (size_t)rows, at = bytes * (size_t)r;
    const size_t from = r == 0 ? bytes : at + ahead;
    size_t to = at + ahead + bytes < total ? at + ahead + bytes : total;
    if (to > from + 64 * (size_t)steps) to = from + 64 * (size_t)steps;
    if (from >= to) return pt_mem_trickle_init(NULL, 0, 1);
    pt_mem_trickle q = pt_mem_trickle_init(src + from, to - from, steps);
    if (two_level && ahead > PT_MEM_PREFETCH_NEAR) q.back = ahead - PT_MEM_PREFETCH_NEAR;
    return q;
}

/* ---- stream ---- */

typedef struct {
    const float *src;
    pt_mem_prefetch pf;
} pt_mem_copy_ctx;

PT_MEM_INLINE __m512 pt_mem_make_copy(const void *ctx, int64_t i, __mmask16 k) {
    pt_mem_copy_ctx *c = (pt_mem_copy_ctx *)ctx;
    pt_mem_prefetch_step(&c->pf);
    return _mm512_maskz_loadu_ps(k, c->src + i);
}

static void pt_mem_row_stream(void *dst, dnnl_data_type_t dt, const float *src, int64_t n, const void *pf,
                              size_t pf_bytes) {
    pt_mem_copy_ctx c = {.src = src, .pf = pt_mem_prefetch_init(pf, pf_bytes, n)};
    pt_mem_emit(dst, dt, true, n, &c, pt_mem_make_copy);
}

static void pt_mem_row_fence(void) { _mm_sfence(); }

/* ---- LayerNorm / RMSNorm ---- */

PT_MEM_INLINE __m512d pt_mem_lo8(__m512 v) { return _mm512_cvtps_pd(_mm512_castps512_ps256(v)); }
PT_MEM_INLINE __m512d pt_mem_hi8(__m512 v) {
    return _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
}

/* Running f64 sums of x - k and (x - k)² over a row: eight chains (sums and
 * squares of two vectors' halves), so that their latency is hidden. */
typedef struct {
    __m512d a0, a1, a2, a3, q0, q1, q2, q3;
} pt_mem_sums64;

PT_MEM_INLINE pt_mem_sums64 pt_mem_sums64_zero(void) {
    const __m512d z = _mm512_setzero_pd();
    return (pt_mem_sums64){z, z, z, z, z, z, z, z};
}

/* Elements [i, end) of a row (f32 or bf16; i a multiple of 32, end the row's
 * end or a multiple of 32) into s, about k; a bf16 row is also widened into
 * xb (unless NULL).  Chunks of one row in order give the sums of one pass. */
PT_MEM_INLINE void pt_mem_sums64_part(const void *src, bool bf16, int64_t i, int64_t end, __m512d kd, float *xb,
                                      pt_mem_sums64 *s, pt_mem_trickle *pf) {
    for (; i + 32 <= end; i += 32) {
        const __m512 u = pt_mem_load16(src, bf16, i, 0xFFFF), w = pt_mem_load16(src, bf16, i + 16, 0xFFFF);
        if (bf16 && xb) {
            _mm512_storeu_ps(xb + i, u);
            _mm512_storeu_ps(xb + i + 16, w);
        }
        const __m512d d0 = _mm512_sub_pd(pt_mem_lo8(u), kd), d1 = _mm512_sub_pd(pt_mem_hi8(u), kd);
        const __m512d d2 = _mm512_sub_pd(pt_mem_lo8(w), kd), d3 = _mm512_sub_pd(pt_mem_hi8(w), kd);
        s->a0 = _mm512_add_pd(s->a0, d0), s->a1 = _mm512_add_pd(s->a1, d1);
        s->a2 = _mm512_add_pd(s->a2, d2), s->a3 = _mm512_add_pd(s->a3, d3);
        s->q0 = _mm512_fmadd_pd(d0, d0, s->q0), s->q1 = _mm512_fmadd_pd(d1, d1, s->q1);
        s->q2 = _mm512_fmadd_pd(d2, d2, s->q2), s->q3 = _mm512_fmadd_pd(d3, d3, s->q3);
        pt_mem_trickle_step(pf);
        pt_mem_trickle_step(pf);
    }
    for (; i < end; i += 16) {
        const __mmask16 m = pt_mem_mask16(end - i);
        const __m512 u = pt_mem_load16(src, bf16, i, m);
        if (bf16 && xb) _mm512_mask_storeu_ps(xb + i, m, u);
        const __m512d d0 = _mm512_maskz_sub_pd((__mmask8)m, pt_mem_lo8(u), kd);
        const __m512d d1 = _mm512_maskz_sub_pd((__mmask8)(m >> 8), pt_mem_hi8(u), kd);
        s->a0 = _mm512_add_pd(s->a0, d0), s->a1 = _mm512_add_pd(s->a1, d1);
        s->q0 = _mm512_fmadd_pd(d0, d0, s->q0), s->q1 = _mm512_fmadd_pd(d1, d1, s->q1);
        pt_mem_trickle_step(pf);
    }
}

/* Mean and variance of n elements from their sums about k (t[0] = Σ x - k,
 * t[1] = Σ (x - k)²; RMSNorm: k = 0, mean 0, variance Σ x² / n). */
PT_MEM_INLINE void pt_mem_norm_moments(const double t[2], double k, int64_t n, bool rms, double *mean, double *var) {
    *mean = 0.0;
    if (rms) {
        *var = t[1] / (double)n;
    } else { /* Σ (x - mean)² = Σ (x - k)² - (Σ (x - k))² / n */
        *mean = k + t[0] / (double)n;
        *var = (t[1] - t[0] * (t[0] / (double)n)) / (double)n;
        if (*var < 0.0) *var = 0.0;
    }
}

PT_MEM_INLINE void pt_mem_sums64_moments(const pt_mem_sums64 *s, double k, int64_t n, bool rms, double *mean,
                                         double *var) {
    const double t[2] = {
        _mm512_reduce_add_pd(_mm512_add_pd(_mm512_add_pd(s->a0, s->a2), _mm512_add_pd(s->a1, s->a3))),
        _mm512_reduce_add_pd(_mm512_add_pd(_mm512_add_pd(s->q0, s->q2), _mm512_add_pd(s->q1, s->q3)))};
    pt_mem_norm_moments(t, k, n, rms, mean, var);
}

/* The shift of the one-pass sums: the row's first element (0 for RMSNorm). */
/* The shift of a row's one-pass sums: its first element, or 0 where that is
 * not finite (an infinite shift would make every difference, and the mean,
 * NaN where the reference's mean is the infinity). */
PT_MEM_INLINE double pt_mem_norm_shift(const void *x, bool bf16, bool rms) {
    const double k = rms ? 0.0 : (double)_mm512_cvtss_f32(pt_mem_load16(x, bf16, 0, 1));
    return isfinite(k) ? k : 0.0;
}

/* f32 output: ((x - mean)·inv)·g + b in f64 (as vec.h's normalize), rounded once. */
typedef struct {
    const float *x;
    const double *g, *b;
    __m512d mean, inv;
    pt_mem_trickle *pf;
} pt_mem_norm_ctx;

PT_MEM_INLINE __m512d pt_mem_norm8(const pt_mem_norm_ctx *c, __m512d x, int64_t i, __mmask8 k) {
    __m512d v = _mm512_mul_pd(_mm512_sub_pd(x, c->mean), c->inv);
    if (c->g) v = _mm512_mul_pd(v, _mm512_maskz_loadu_pd(k, c->g + i));
    if (c->b) v = _mm512_add_pd(v, _mm512_maskz_loadu_pd(k, c->b + i));
    return v;
}

PT_MEM_INLINE __m512 pt_mem_make_norm(const void *ctx, int64_t i, __mmask16 k) {
    const pt_mem_norm_ctx *c = ctx;
    pt_mem_trickle_step(c->pf);
    const __m512 x = _mm512_maskz_loadu_ps(k, c->x + i);
    const __m512d lo = pt_mem_norm8(c, pt_mem_lo8(x), i, (__mmask8)k);
    const __m512d hi = pt_mem_norm8(c, pt_mem_hi8(x), i + 8, (__mmask8)(k >> 8));
    return _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps(lo)), _mm512_cvtpd_ps(hi), 1);
}

/* bf16 output: the normalisation in f32.  u = (x - mean)·inv as
 * fma(x - mh, inv, -ml·inv), the mean split into two f32 (mh + ml): x - mh
 * is exact near the mean (Sterbenz) and one rounding follows, so u keeps
 * about 2⁻²² relative accuracy however close x is to the mean; then
 * y = fma(u, g, b), one more rounding.  Where 4095·|y| >= |b|,
 * |u·g| <= 4096·|y| and y's error stays below about 2⁻¹⁰ of it, under
 * bf16's half-ulp (2⁻⁹ at least): y rounds to the nearest bf16 or its
 * neighbour.  A vector with a lane where b cancels the product further is
 * recomputed in f64 as vec.h's normalize does (with 255 instead of 4095,
 * LayerNorm bf16 with random beta ran about 10% slower). */
typedef struct {
    const void *x;
    bool bf16;
    const float *g, *b;
    __m512 mh, mlinv, inv;
    pt_mem_trickle *pf;
    struct pt_mem_norm64 *f64; /* the f64 recompute's state, apart: only the cold path writes it */
} pt_mem_norm32_ctx;

/* The f64 recompute wants the f64 statistics: taken on its first need when
 * the row's own came from f32 sums (exact false).  x: the whole row. */
typedef struct pt_mem_norm64 {
    __m512d mean, invd;
    const void *x;
    int64_t n;
    bool bf16, rms, exact;
    double eps;
} pt_mem_norm64;

static __attribute__((noinline, cold)) void pt_mem_norm_exact(pt_mem_norm64 *c) {
    pt_mem_trickle none = pt_mem_trickle_init(NULL, 0, 1);
    const double k = pt_mem_norm_shift(c->x, c->bf16, c->rms);
    pt_mem_sums64 s = pt_mem_sums64_zero();
    if (c->bf16) pt_mem_sums64_part(c->x, true, 0, c->n, _mm512_set1_pd(k), NULL, &s, &none);
    else pt_mem_sums64_part(c->x, false, 0, c->n, _mm512_set1_pd(k), NULL, &s, &none);
    double mean, var;
    pt_mem_sums64_moments(&s, k, c->n, c->rms, &mean, &var);
    c->mean = _mm512_set1_pd(mean), c->invd = _mm512_set1_pd(1.0 / sqrt(var + c->eps));
    c->exact = true;
}

PT_MEM_INLINE __m512d pt_mem_norm8_f32params(const pt_mem_norm32_ctx *c, __m512d x, int64_t i, __mmask8 k) {
    __m512d v = _mm512_mul_pd(_mm512_sub_pd(x, c->f64->mean), c->f64->invd);
    if (c->g) v = _mm512_mul_pd(v, _mm512_cvtps_pd(_mm256_maskz_loadu_ps(k, c->g + i)));
    if (c->b) v = _mm512_add_pd(v, _mm512_cvtps_pd(_mm256_maskz_loadu_ps(k, c->b + i)));
    return v;
}

PT_MEM_INLINE __m512 pt_mem_make_norm32(const void *ctx, int64_t i, __mmask16 k) {
    const pt_mem_norm32_ctx *c = ctx;
    pt_mem_trickle_step(c->pf);
    const __m512 x = pt_mem_load16(c->x, c->bf16, i, k);
    const __m512 u = _mm512_fmadd_ps(_mm512_sub_ps(x, c->mh), c->inv, c->mlinv);
    if (!c->b) return c->g ? _mm512_mul_ps(u, _mm512_maskz_loadu_ps(k, c->g + i)) : u;
    const __m512 b = _mm512_maskz_loadu_ps(k, c->b + i);
    const __m512 y = c->g ? _mm512_fmadd_ps(u, _mm512_maskz_loadu_ps(k, c->g + i), b) : _mm512_add_ps(u, b);
    const __mmask16 cancels =
        _mm512_cmp_ps_mask(_mm512_mul_ps(_mm512_abs_ps(y), _mm512_set1_ps(4095.f)), _mm512_abs_ps(b), _CMP_LT_OQ);
    if (__builtin_expect(cancels == 0, 1)) return y;
    /* The f32 sums' statistics (relative error about 2⁻²⁴·√n typical) serve
     * the f64 recompute up to a cancellation of 2¹⁴; beyond, the f64 ones. */
    if (!c->f64->exact && _mm512_cmp_ps_mask(_mm512_mul_ps(_mm512_abs_ps(y), _mm512_set1_ps(16384.f)), _mm512_abs_ps(b), _CMP_LT_OQ))
        pt_mem_norm_exact(c->f64);
    const __m512d lo = pt_mem_norm8_f32params(c, pt_mem_lo8(x), i, (__mmask8)k);
    const __m512d hi = pt_mem_norm8_f32params(c, pt_mem_hi8(x), i + 8, (__mmask8)(k >> 8));
    return _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps(lo)), _mm512_cvtpd_ps(hi), 1);
}

PT_MEM_INLINE __m512d pt_mem_fold8(__m512 v) { return _mm512_add_pd(pt_mem_lo8(v), pt_mem_hi8(v)); }

/* Running sums of x - c and (x - c)² in f32 lanes, each lane's partial sums
 * over at most 16 terms (chunks of 512 elements) then added into f64:
 * relative error below 17·2⁻²⁴ of Σ |x - c| (resp. of the sum of squares). */
typedef struct {
    __m512d t1, t2;
} pt_mem_sums32;

/* Elements [i, n) of a row (f32 or bf16; i a multiple of 512, n the row's
 * end or a multiple of 512) into s.  A bf16 row is widened 32 at a
 * time as its even and odd elements (two instructions; a sum needs no
 * order). */
PT_MEM_INLINE void pt_mem_sums32_part(const void *src, bool bf16, int64_t i, int64_t n, float c, pt_mem_sums32 *s,
                                      pt_mem_trickle *pf) {
    const __m512 cv = _mm512_set1_ps(c);
    const __m512i odd = _mm512_set1_epi32((int)0xFFFF0000u);
    while (i + 32 <= n) {
        const int64_t end = i + 512 <= n ? i + 512 : n - (n - i) % 32;
        __m512 a0 = _mm512_setzero_ps(), a1 = a0, q0 = a0, q1 = a0;
        for (; i < end; i += 32) {
            __m512 u, w;
            if (bf16) {
                const __m512i v = _mm512_loadu_si512((const void *)((const uint16_t *)src + i));
                u = _mm512_castsi512_ps(_mm512_slli_epi32(v, 16)), w = _mm512_castsi512_ps(_mm512_and_si512(v, odd));
            } else {
                u = _mm512_loadu_ps((const float *)src + i), w = _mm512_loadu_ps((const float *)src + i + 16);
            }
            u = _mm512_sub_ps(u, cv), w = _mm512_sub_ps(w, cv);
            a0 = _mm512_add_ps(a0, u), a1 = _mm512_add_ps(a1, w);
            q0 = _mm512_fmadd_ps(u, u, q0), q1 = _mm512_fmadd_ps(w, w, q1);
            pt_mem_trickle_step(pf);
            pt_mem_trickle_step(pf);
        }
        s->t1 = _mm512_add_pd(s->t1, pt_mem_fold8(_mm512_add_ps(a0, a1)));
        s->t2 = _mm512_add_pd(s->t2, pt_mem_fold8(_mm512_add_ps(q0, q1)));
    }
    if (i < n) { /* under 32 left: lanes past the end masked out */
        const int64_t r = n - i;
        __m512 u, w;
        __mmask16 ku, kw;
        if (bf16) {
            const __m512i v = _mm512_maskz_loadu_epi16((__mmask32)((1u << r) - 1u), (const uint16_t *)src + i);
            u = _mm512_castsi512_ps(_mm512_slli_epi32(v, 16)), w = _mm512_castsi512_ps(_mm512_and_si512(v, odd));
            ku = pt_mem_mask16((r + 1) / 2), kw = pt_mem_mask16(r / 2);
        } else {
            ku = pt_mem_mask16(r), kw = pt_mem_mask16(r > 16 ? r - 16 : 0);
            u = _mm512_maskz_loadu_ps(ku, (const float *)src + i), w = _mm512_maskz_loadu_ps(kw, (const float *)src + i + 16);
        }
        u = _mm512_maskz_sub_ps(ku, u, cv), w = _mm512_maskz_sub_ps(kw, w, cv);
        s->t1 = _mm512_add_pd(s->t1, pt_mem_fold8(_mm512_add_ps(u, w)));
        s->t2 = _mm512_add_pd(s->t2, pt_mem_fold8(_mm512_fmadd_ps(u, u, _mm512_mul_ps(w, w))));
        pt_mem_trickle_step(pf);
        pt_mem_trickle_step(pf);
    }
}

/* Mean and variance of a row of n > 0 elements from its f32 lane sums s
 * about c; where (mean - c)² > 3·variance, a second pass about the mean so
 * found (no cancellation then; the row is in L1 / L2 by now). */
PT_MEM_INLINE void pt_mem_sums32_moments(const void *row, bool x16, int64_t n, bool rms, float c, pt_mem_sums32 *s,
                                         pt_mem_trickle *q, double *mean, double *var) {
    const double m1 = rms ? 0.0 : _mm512_reduce_add_pd(s->t1) / (double)n;
    *var = _mm512_reduce_add_pd(s->t2) / (double)n - m1 * m1;
    *mean = (double)c + m1;
    if (!rms && isfinite(m1) && m1 * m1 > 3.0 * *var) {
        const float c2 = (float)*mean;
        *s = (pt_mem_sums32){_mm512_setzero_pd(), _mm512_setzero_pd()};
        pt_mem_sums32_part(row, x16, 0, n, c2, s, q);
        const double m2 = _mm512_reduce_add_pd(s->t1) / (double)n;
        *mean = (double)c2 + m2, *var = _mm512_reduce_add_pd(s->t2) / (double)n - m2 * m2;
    }
    if (*var < 0.0) *var = 0.0;
}

/* A normalised row waiting to be written, in pieces as SoftMax's. */
typedef struct {
    char *dst; /* NULL: none */
    const void *x; /* its source: f32, or bf16 for a bf16 dst from a bf16 row */
    __m512d mean, inv; /* f32 dst */
    __m512 mh, mlinv, inv32; /* bf16 dst */
    pt_mem_norm64 f64; /* bf16 dst: the f64 recompute's state */
    int64_t next, pieces;
} pt_mem_norm_out;

/* The affine parameters of a LayerNorm / RMSNorm row op. */
typedef struct {
    const double *g64, *b64; /* f32 dst (or NULL) */
    const float *g32, *b32;  /* bf16 dst (or NULL) */
} pt_mem_norm_affine;

PT_MEM_INLINE const double *pt_mem_at64(const double *p, int64_t a) { return p ? p + a : NULL; }
PT_MEM_INLINE const float *pt_mem_at32(const float *p, int64_t a) { return p ? p + a : NULL; }

/* The next piece of o (x16: its x is bf16). */
PT_MEM_INLINE void pt_mem_norm_piece(pt_mem_norm_out *o, bool f32_out, bool x16, bool stream, int64_t n,
                                     const pt_mem_norm_affine *af, pt_mem_trickle *pf) {
    if (!o->dst || o->next >= o->pieces) return;
    const int64_t esz = f32_out ? 4 : 2;
    const int64_t a = pt_mem_piece_start(o->dst, esz, n, o->next, o->pieces);
    const int64_t b = pt_mem_piece_start(o->dst, esz, n, o->next + 1, o->pieces);
    ++o->next;
    if (b <= a) return;
    if (f32_out) {
        const pt_mem_norm_ctx c = {.x = (const float *)o->x + a, .g = pt_mem_at64(af->g64, a),
                                   .b = pt_mem_at64(af->b64, a), .mean = o->mean, .inv = o->inv, .pf = pf};
        pt_mem_emit_dt(o->dst + a * esz, dnnl_f32, stream, b - a, &c, pt_mem_make_norm);
    } else {
        const pt_mem_norm32_ctx c = {.x = (const char *)o->x + a * (x16 ? 2 : 4), .bf16 = x16,
                                     .g = pt_mem_at32(af->g32, a), .b = pt_mem_at32(af->b32, a), .mh = o->mh,
                                     .mlinv = o->mlinv, .inv = o->inv32, .pf = pf, .f64 = &o->f64};
        pt_mem_emit_dt(o->dst + a * esz, dnnl_bf16, stream, b - a, &c, pt_mem_make_norm32);
    }
}

/* The run of rows with the source type (x16: bf16) and the destination
 * (f32_out: f32, else bf16) constants.  Statistics: f64 sums for an f32
 * dst or when st asks for them; otherwise f32 lane sums about c = x[0]:
 * where (mean - c)² <= 3·variance, Σ |x - c| / n <= 2·sd, so the mean's
 * error stays below about 2⁻¹⁸·sd and the variance's below about 2⁻¹⁶ of it
 * (at most a factor 4 of cancellation); other rows take a second pass about
 * the mean so found (the row is in L1 / L2 by then).  RMSNorm's Σ x² has no
 * cancellation. */
PT_MEM_INLINE void pt_mem_norm_run(char *dst, bool f32_out, bool stream, const char *src, bool x16, int64_t n,
                                   int64_t rows, bool rms, double eps, const pt_mem_norm_affine *af, float *xb,
                                   double *st) {
    const size_t ses = x16 ? 2 : 4, des = f32_out ? 4 : 2;
    const int64_t chunk = PT_MEM_NORM_CHUNK(f32_out, n > 0 ? n : 1), chunks = (n + chunk - 1) / chunk;
    const int64_t vectors = (n + 15) / 16;
    const bool widen = f32_out && x16, f64_stats = f32_out || st;
    float *cur = xb, *next = xb + PT_MEM_ROW_FLOATS(n);
    pt_mem_norm_out o = {.dst = NULL};
    for (int64_t r = 0; r < rows; ++r) {
        const char *row = src + (size_t)(r * n) * ses;
        pt_mem_trickle q = pt_mem_run_prefetch(src, (size_t)n * ses, r, rows, (o.dst ? 2 : 1) * vectors, false);
        double mean = 0.0, var = 0.0;
        if (n > 0 && f64_stats) {
            const double k = pt_mem_norm_shift(row, x16, rms);
            pt_mem_sums64 s = pt_mem_sums64_zero();
            for (int64_t i = 0; i < n; i += chunk) {
                pt_mem_sums64_part(row, x16, i, n - i > chunk ? i + chunk : n, _mm512_set1_pd(k),
                                   widen ? cur : NULL, &s, &q);
                pt_mem_norm_piece(&o, f32_out, x16, stream, n, af, &q);
            }
            pt_mem_sums64_moments(&s, k, n, rms, &mean, &var);
        } else if (n > 0) {
            const float c = (float)pt_mem_norm_shift(row, x16, rms);
            pt_mem_sums32 s = {_mm512_setzero_pd(), _mm512_setzero_pd()};
            for (int64_t i = 0; i < n; i += chunk) {
                pt_mem_sums32_part(row, x16, i, n - i > chunk ? i + chunk : n, c, &s, &q);
                pt_mem_norm_piece(&o, f32_out, x16, stream, n, af, &q);
            }
            pt_mem_sums32_moments(row, x16, n, rms, c, &s, &q, &mean, &var);
        }
        while (o.dst && o.next < o.pieces) pt_mem_norm_piece(&o, f32_out, x16, stream, n, af, &q);
        if (st) st[2 * r] = mean, st[2 * r + 1] = var;
        const double inv = 1.0 / sqrt(var + eps);
        o = (pt_mem_norm_out){.dst = dst + (size_t)(r * n) * des, .x = widen ? (const void *)cur : row,
                              .pieces = chunks};
        if (f32_out) {
            o.mean = _mm512_set1_pd(mean), o.inv = _mm512_set1_pd(inv);
        } else {
            const float mh = (float)mean, ml = (float)(mean - (double)mh);
            o.mh = _mm512_set1_ps(mh), o.mlinv = _mm512_set1_ps((float)(-(double)ml * inv));
            o.inv32 = _mm512_set1_ps((float)inv);
            o.f64 = (pt_mem_norm64){.mean = _mm512_set1_pd(mean), .invd = _mm512_set1_pd(inv), .x = row, .n = n,
                                    .bf16 = x16, .rms = rms, .exact = st != NULL, .eps = eps};
        }
        float *t = cur;
        cur = next, next = t;
    }
    if (o.dst) { /* the last row at once */
        pt_mem_trickle none = pt_mem_trickle_init(NULL, 0, 1);
        o.pieces = 1;
        pt_mem_norm_piece(&o, f32_out, x16, stream, n, af, &none);
    }
}

static void pt_mem_rows_norm(void *dst, dnnl_data_type_t ddt, bool stream, const void *x, dnnl_data_type_t xdt,
                             int64_t n, int64_t rows, bool rms, double eps, const double *g64, const double *b64,
                             const float *g32, const float *b32, float *xb, double *st) {
    const pt_mem_norm_affine af = {g64, b64, g32, b32};
    const bool x16 = xdt == dnnl_bf16;
    if (ddt == dnnl_f32) { /* each combination a copy with constants */
        if (x16) pt_mem_norm_run(dst, true, stream, x, true, n, rows, rms, eps, &af, xb, st);
        else pt_mem_norm_run(dst, true, stream, x, false, n, rows, rms, eps, &af, xb, st);
    } else {
        if (x16) pt_mem_norm_run(dst, false, stream, x, true, n, rows, rms, eps, &af, xb, st);
        else pt_mem_norm_run(dst, false, stream, x, false, n, rows, rms, eps, &af, xb, st);
    }
}

/* ---- element-wise math ---- */

/* erf(z) / z for |z| <= 1 as a polynomial in u = z² of degree 7
 * (interpolation at the Chebyshev nodes of [0, 1]; error below 2e-9, under
 * the f32 rounding of the evaluation). */
#define PT_MEM_ERF_Q0 1.128379225730896f
#define PT_MEM_ERF_Q1 (-0.37612637877464294f)
#define PT_MEM_ERF_Q2 0.11283782124519348f
#define PT_MEM_ERF_Q3 (-0.026865430176258087f)
#define PT_MEM_ERF_Q4 0.005221031606197357f
#define PT_MEM_ERF_Q5 (-0.0008484080317430198f)
#define PT_MEM_ERF_Q6 0.00011265958892181516f
#define PT_MEM_ERF_Q7 (-9.667044650996104e-06f)

/* GELU(x) = x·(1 + erf(x/√2))/2.  A vector whose |x/√2| are all <= 1 takes
 * the polynomial, 1 + erf formed by one FMA; any other takes erfc(|z|) =
 * t·exp(-z² + P(t)) (mem_math_avx512.h), which keeps the relative accuracy for
 * large negative x where 1 + erf cancels. */
PT_MEM_INLINE __m512 pt_mem_gelu_erf(__m512 x) {
    const __m512 z = _mm512_mul_ps(x, _mm512_set1_ps(PT_SQRT1_2));
    const __m512 az = _mm512_abs_ps(z);
    const __m512 hx = _mm512_mul_ps(_mm512_set1_ps(0.5f), x);
    if (_mm512_cmp_ps_mask(az, _mm512_set1_ps(1.f), _CMP_LE_OQ) == 0xFFFF) {
        const __m512 u = _mm512_mul_ps(z, z);
        __m512 q = pt_avx512_poly(u, (const float[]){PT_MEM_ERF_Q0, PT_MEM_ERF_Q1, PT_MEM_ERF_Q2,
                PT_MEM_ERF_Q3, PT_MEM_ERF_Q4, PT_MEM_ERF_Q5, PT_MEM_ERF_Q6, PT_MEM_ERF_Q7}, 7);
        return _mm512_mul_ps(hx, _mm512_fmadd_ps(z, q, _mm512_set1_ps(1.f)));
    }
    return pt_avx512_gelu_erfc(x);
}

/* GELU (erf form) rounded to bf16 / f16 afterwards: where every x² <= 2,
 * x·(1/2 + x·Q(x²)) with Q(u) = erf(x/√2)/(2x) fitted to degree 4 on
 * [0, 2] (relative error of the result below 6e-6 there, against a half ulp
 * of 2^-9 / 2^-12: the f32 form's narrow value or its neighbour near a tie);
 * seven operations on the FMA pipes instead of twelve.  x = -0 gives -0.
 * Other vectors take the wider form below, or erfc with the narrow exp. */
#define PT_MEM_GELU_NARROW_Q0 0.3989418148994446f
#define PT_MEM_GELU_NARROW_Q1 (-0.06647937744855881f)
#define PT_MEM_GELU_NARROW_Q2 0.009929700754582882f
#define PT_MEM_GELU_NARROW_Q3 (-0.0011246450012549758f)
#define PT_MEM_GELU_NARROW_Q4 7.720875146333128e-05f

/* The same form over x² <= 6.25 (|x| <= 2.5, where 1/2 + x·Q cancels down to
 * Φ(-2.5) = 0.0062: Q of degree 7, 1.5e-7, and the f32 evaluation's
 * roundings leave the result within 3.1e-5 relative): ten operations where
 * the erfc form takes 21; with inputs drawn from N(0, 1), 82 % of the
 * vectors of 16 qualify, against 6 % for x² <= 2. */
#define PT_MEM_GELU_WIDE_Q0 0.398942232131958f
#define PT_MEM_GELU_WIDE_Q1 (-0.06648919731378555f)
#define PT_MEM_GELU_WIDE_Q2 0.009969688951969147f
#define PT_MEM_GELU_WIDE_Q3 (-0.0011824071407318115f)
#define PT_MEM_GELU_WIDE_Q4 0.00011228062066948041f
#define PT_MEM_GELU_WIDE_Q5 (-8.30801855045138e-06f)
#define PT_MEM_GELU_WIDE_Q6 4.2500724362071196e-07f
#define PT_MEM_GELU_WIDE_Q7 (-1.090821832860911e-08f)

PT_MEM_INLINE __m512 pt_mem_gelu_erf_narrow(__m512 x) {
    const __m512 u = _mm512_mul_ps(x, x);
    __m512 q;
    if (_mm512_cmp_ps_mask(u, _mm512_set1_ps(2.f), _CMP_LE_OQ) == 0xFFFF)
        q = pt_avx512_poly(u, (const float[]){PT_MEM_GELU_NARROW_Q0, PT_MEM_GELU_NARROW_Q1, PT_MEM_GELU_NARROW_Q2,
                PT_MEM_GELU_NARROW_Q3, PT_MEM_GELU_NARROW_Q4}, 4);
    else if (_mm512_cmp_ps_mask(u, _mm512_set1_ps(6.25f), _CMP_LE_OQ) == 0xFFFF)
        q = pt_avx512_poly(u, (const float[]){PT_MEM_GELU_WIDE_Q0, PT_MEM_GELU_WIDE_Q1, PT_MEM_GELU_WIDE_Q2,
                PT_MEM_GELU_WIDE_Q3, PT_MEM_GELU_WIDE_Q4, PT_MEM_GELU_WIDE_Q5, PT_MEM_GELU_WIDE_Q6,
                PT_MEM_GELU_WIDE_Q7}, 7);
    else
        return pt_avx512_gelu_erfc_as(x, true);
    return _mm512_mul_ps(x, _mm512_fmadd_ps(x, q, _mm512_set1_ps(0.5f)));
}

/* GELU, tanh form: x / (1 + exp(-2g)), g = √(2/π)·(x + 0.044715·x³). */
PT_MEM_INLINE __m512 pt_mem_gelu_tanh(__m512 x) {
    const __m512 g = _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(PT_GELU_TANH_C), x),
                                   _mm512_fmadd_ps(_mm512_mul_ps(x, x), _mm512_set1_ps(0.044715f), _mm512_set1_ps(1.f)));
    const __m512 e = pt_avx512_exp_terms(_mm512_mul_ps(_mm512_set1_ps(-2.f), g));
    return _mm512_mul_ps(x, pt_avx512_recip(_mm512_add_ps(_mm512_set1_ps(1.f), e)));
}

PT_MEM_INLINE __m512 pt_mem_sigmoid(__m512 x) {
    return pt_avx512_recip(_mm512_add_ps(_mm512_set1_ps(1.f), pt_avx512_exp_terms(_mm512_sub_ps(_mm512_setzero_ps(), x))));
}

/* ---- fused element-wise ops: load, compute, store in one pass ---- */

typedef struct {
    const void *src;
    dnnl_data_type_t dt;
} pt_mem_src;

PT_MEM_INLINE __m512 pt_mem_make_convert(const void *ctx, int64_t i, __mmask16 k) {
    const pt_mem_src *c = ctx;
    return pt_mem_load16_dt(c->src, c->dt, i, k);
}

PT_MEM_INLINE __m512 pt_mem_make_relu(const void *ctx, int64_t i, __mmask16 k) {
    const pt_mem_src *c = ctx;
    const __m512 v = pt_mem_load16_dt(c->src, c->dt, i, k);
    return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_NLE_UQ), v); /* NaN kept */
}

PT_MEM_INLINE __m512 pt_mem_make_gelu_erf(const void *ctx, int64_t i, __mmask16 k) {
    const pt_mem_src *c = ctx;
    return pt_mem_gelu_erf(pt_mem_load16_dt(c->src, c->dt, i, k));
}

PT_MEM_INLINE __m512 pt_mem_make_gelu_erf_narrow(const void *ctx, int64_t i, __mmask16 k) {
    const pt_mem_src *c = ctx;
    return pt_mem_gelu_erf_narrow(pt_mem_load16_dt(c->src, c->dt, i, k));
}

PT_MEM_INLINE __m512 pt_mem_make_gelu_tanh(const void *ctx, int64_t i, __mmask16 k) {
    const pt_mem_src *c = ctx;
    return pt_mem_gelu_tanh(pt_mem_load16_dt(c->src, c->dt, i, k));
}

PT_MEM_INLINE __m512 pt_mem_make_sigmoid(const void *ctx, int64_t i, __mmask16 k) {
    const pt_mem_src *c = ctx;
    return pt_mem_sigmoid(pt_mem_load16_dt(c->src, c->dt, i, k));
}

/* Software prefetch for the one-source passes below (unary ops and
 * conversions over a thread's whole share): each block of PT_MEM_AHEAD_BLOCK
 * elements first touches its source PT_MEM_AHEAD_BYTES further on.  On the
 * Xeon of sessions 12-13 the hardware prefetcher left the loads of the bf16
 * GELU waiting on memory: 64 MiB took 16.2 ms (26 % of the alternating copy)
 * and 6.2 ms (66 %) with this; blocks of 1024-2048 and distances of 2-8 KiB
 * measured alike, 256 elements 2 KiB ahead slower.  The ops with arithmetic
 * per element (GELU, Sigmoid) fetch into L2 rather than L1: on Zen 4 (32 KiB
 * L1D), 64 MiB, 2 threads, medians of three alternating rounds, GELU bf16
 * 5.53 -> 5.05 ms, f32 3.58 -> 3.35, Sigmoid f32 4.33 -> 3.73; ReLU and the
 * conversions, which only stream, measured 3-8 % slower that way and keep
 * L1 (session 20). */
#define PT_MEM_AHEAD_BLOCK 2048
#define PT_MEM_AHEAD_BYTES 4096

PT_MEM_INLINE int64_t pt_mem_esz(dnnl_data_type_t dt) { return dt == dnnl_f32 ? 4 : 2; }

PT_MEM_INLINE void pt_mem_fetch_block(const void *src, dnnl_data_type_t sdt, int64_t at, int64_t len, bool to_l2) {
    const char *q = (const char *)src + at * pt_mem_esz(sdt) + PT_MEM_AHEAD_BYTES;
    if (to_l2)
        for (int64_t b = 0; b < len * pt_mem_esz(sdt); b += 64) _mm_prefetch(q + b, _MM_HINT_T1);
    else
        for (int64_t b = 0; b < len * pt_mem_esz(sdt); b += 64) _mm_prefetch(q + b, _MM_HINT_T0);
}

static void pt_mem_row_convert(void *dst, dnnl_data_type_t ddt, const void *src, dnnl_data_type_t sdt, int64_t n,
                               bool stream) {
    for (int64_t i = 0; i < n; i += PT_MEM_AHEAD_BLOCK) {
        const int64_t len = n - i < PT_MEM_AHEAD_BLOCK ? n - i : PT_MEM_AHEAD_BLOCK;
        const pt_mem_src c = {(const char *)src + i * pt_mem_esz(sdt), sdt};
        pt_mem_fetch_block(src, sdt, i, len, false);
        pt_mem_emit((char *)dst + i * pt_mem_esz(ddt), ddt, stream, len, &c, pt_mem_make_convert);
    }
}

/* One block of a unary op (the caller checked the kind). */
static void pt_mem_unary_block(const pt_eltwise_params *p, void *dst, dnnl_data_type_t ddt, const void *src,
                               dnnl_data_type_t sdt, int64_t n, bool stream) {
    const pt_mem_src c = {src, sdt};
    switch (p->kind) {
        case dnnl_graph_op_relu: pt_mem_emit(dst, ddt, stream, n, &c, pt_mem_make_relu); break;
        case dnnl_graph_op_sigmoid: pt_mem_emit(dst, ddt, stream, n, &c, pt_mem_make_sigmoid); break;
        case dnnl_graph_op_gelu: /* each emit with a constant maker, so that it inlines */
            if (p->gelu_tanh) pt_mem_emit(dst, ddt, stream, n, &c, pt_mem_make_gelu_tanh);
            else if (ddt == dnnl_f32) pt_mem_emit(dst, ddt, stream, n, &c, pt_mem_make_gelu_erf);
            else pt_mem_emit(dst, ddt, stream, n, &c, pt_mem_make_gelu_erf_narrow);
            break;
        default: break;
    }
}

static bool pt_mem_row_unary(const pt_eltwise_params *p, void *dst, dnnl_data_type_t ddt, const void *src,
                             dnnl_data_type_t sdt, int64_t n, bool stream) {
    if (p->kind != dnnl_graph_op_relu && p->kind != dnnl_graph_op_sigmoid && p->kind != dnnl_graph_op_gelu) return false;
    const bool to_l2 = p->kind != dnnl_graph_op_relu; /* the ops with arithmetic per element */
    for (int64_t i = 0; i < n; i += PT_MEM_AHEAD_BLOCK) {
        const int64_t len = n - i < PT_MEM_AHEAD_BLOCK ? n - i : PT_MEM_AHEAD_BLOCK;
        pt_mem_fetch_block(src, sdt, i, len, to_l2);
        pt_mem_unary_block(p, (char *)dst + i * pt_mem_esz(ddt), ddt, (const char *)src + i * pt_mem_esz(sdt), sdt,
                           len, stream);
    }
    return true;
}

typedef struct {
    const void *a, *b;
    dnnl_data_type_t adt, bdt;
    __m512 sa, sb; /* the broadcast scalars */
    bool a_full, b_full;
} pt_mem_bin_ctx;

#define PT_MEM_BIN_MAKE(name, op)                                                             \
    PT_MEM_INLINE __m512 name(const void *ctx, int64_t i, __mmask16 k) {                       \
        const pt_mem_bin_ctx *c = ctx;                                                       \
        const __m512 u = c->a_full ? pt_mem_load16_dt(c->a, c->adt, i, k) : c->sa;            \
        const __m512 v = c->b_full ? pt_mem_load16_dt(c->b, c->bdt, i, k) : c->sb;            \
        return op(u, v);                                                                     \
    }
PT_MEM_BIN_MAKE(pt_mem_make_add, _mm512_add_ps)
PT_MEM_BIN_MAKE(pt_mem_make_sub, _mm512_sub_ps)
PT_MEM_BIN_MAKE(pt_mem_make_mul, _mm512_mul_ps)
PT_MEM_BIN_MAKE(pt_mem_make_div, _mm512_div_ps)
PT_MEM_BIN_MAKE(pt_mem_make_max, _mm512_max_ps) /* u > v ? u : v, as the reference */
PT_MEM_BIN_MAKE(pt_mem_make_min, _mm512_min_ps) /* u < v ? u : v */
#undef PT_MEM_BIN_MAKE

PT_MEM_INLINE float pt_mem_scalar(const void *p, dnnl_data_type_t dt) {
    return _mm512_cvtss_f32(pt_mem_load16_dt(p, dt, 0, 1));
}

static bool pt_mem_row_binary(int kind, void *dst, dnnl_data_type_t ddt, const void *a, dnnl_data_type_t adt,
                              int64_t as, const void *b, dnnl_data_type_t bdt, int64_t bs, int64_t n, bool stream) {
    const pt_mem_bin_ctx c = {.a = a, .b = b, .adt = adt, .bdt = bdt, .a_full = as != 0, .b_full = bs != 0,
                              .sa = _mm512_set1_ps(as ? 0.f : pt_mem_scalar(a, adt)),
                              .sb = _mm512_set1_ps(bs ? 0.f : pt_mem_scalar(b, bdt))};
    switch (kind) {
        case dnnl_graph_op_add: pt_mem_emit(dst, ddt, stream, n, &c, pt_mem_make_add); return true;
        case dnnl_graph_op_subtract: pt_mem_emit(dst, ddt, stream, n, &c, pt_mem_make_sub); return true;
        case dnnl_graph_op_multiply: pt_mem_emit(dst, ddt, stream, n, &c, pt_mem_make_mul); return true;
        case dnnl_graph_op_divide: pt_mem_emit(dst, ddt, stream, n, &c, pt_mem_make_div); return true;
        case dnnl_graph_op_maximum: pt_mem_emit(dst, ddt, stream, n, &c, pt_mem_make_max); return true;
        case dnnl_graph_op_minimum: pt_mem_emit(dst, ddt, stream, n, &c, pt_mem_make_min); return true;
        default: return false;
    }
}

/* ---- Quantize / Dequantize ---- */

typedef struct {
    const void *src;
    const float *s, *z; /* per element or per group, or NULL: sv / zv */
    __m512 sv, zv;
    int gshift;         /* per group: log2 of the group's length */
} pt_mem_quant_ctx;

/* The values of groups of 2^sh elements (v[g] for elements [g·2^sh,
 * (g + 1)·2^sh)) for elements [i, i + 16), lanes in k: the one or two
 * groups the vector meets (groups of 16 or more), spread by a permute. */
PT_MEM_INLINE __m512 pt_mem_group16(const float *v, int sh, int64_t i, __mmask16 k) {
    /* A vector that starts on a multiple of 16 lies in one group (groups
     * are 16 or more, powers of two): one broadcast (the general form's
     * masked load and permute held a u4 DynamicDequantize in groups of
     * 128 to 15 GB/s on one core with its output in L3; 22 so). */
    if ((i & 15) == 0) return _mm512_set1_ps(v[i >> sh]);
    const int64_t g0 = i >> sh, last = i + __builtin_popcount((unsigned)k) - 1;
    const __m512 two = _mm512_maskz_loadu_ps((last >> sh) != g0 ? 3 : 1, v + g0);
    const __m512i lane = _mm512_add_epi32(_mm512_set1_epi32((int)(i - (g0 << sh))),
                                          _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0));
    return _mm512_permutexvar_ps(_mm512_srli_epi32(lane, sh), two);
}

/* Elements [i, i + 16) of packed 4-bit data (element e in byte e/2, low
 * nibble first; i even) as f32: each byte duplicated into two lanes, the
 * odd lanes shifted down a nibble. */
PT_MEM_INLINE __m512 pt_mem_load16_4bit(const uint8_t *src, bool is_signed, int64_t i, __mmask16 k) {
    const int count = __builtin_popcount((unsigned)k); /* k: the low lanes */
    const __m128i b = _mm_maskz_loadu_epi8(pt_mem_mask16((count + 1) / 2), src + i / 2);
    const __m512i shift = _mm512_set_epi32(4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0);
    __m512i v = _mm512_srlv_epi32(_mm512_cvtepu8_epi32(_mm_unpacklo_epi8(b, b)), shift);
    v = is_signed ? _mm512_srai_epi32(_mm512_slli_epi32(v, 28), 28) : _mm512_and_si512(v, _mm512_set1_epi32(15));
    return _mm512_maskz_cvtepi32_ps(k, v);
}

/* Elements [i, i + 16) of an f32, bf16, f16, s8, u8, s4 or u4 source as f32. */
PT_MEM_INLINE __m512 pt_mem_load16_q(const void *src, dnnl_data_type_t dt, int64_t i, __mmask16 k) {
    switch ((int)dt) {
        case dnnl_s4: return pt_mem_load16_4bit(src, true, i, k);
        case dnnl_u4: return pt_mem_load16_4bit(src, false, i, k);
        case dnnl_s8: return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(k, (const int8_t *)src + i)));
        case dnnl_u8: return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(k, (const uint8_t *)src + i)));
        default: return pt_mem_load16_dt(src, dt, i, k);
    }
}

/* One maker per source type and scale form (FORM 0: one value, 1: per
 * element, 2: per group), so that each emit's loads are constants. */
#define PT_MEM_DEQUANT_MAKE(name, DT, FORM)                                                                 \
    PT_MEM_INLINE __m512 name(const void *ctx, int64_t i, __mmask16 k) {                                     \
        const pt_mem_quant_ctx *c = ctx;                                                                   \
        const __m512 x = pt_mem_load16_q(c->src, DT, i, k);                                                \
        if (FORM == 1)                                                                                     \
            return _mm512_mul_ps(_mm512_sub_ps(x, _mm512_maskz_loadu_ps(k, c->z + i)),                     \
                                 _mm512_maskz_loadu_ps(k, c->s + i));                                      \
        if (FORM == 2)                                                                                     \
            return _mm512_mul_ps(_mm512_sub_ps(x, pt_mem_group16(c->z, c->gshift, i, k)),                  \
                                 pt_mem_group16(c->s, c->gshift, i, k));                                   \
        return _mm512_mul_ps(_mm512_sub_ps(x, c->zv), c->sv);                                              \
    }
#define PT_MEM_DEQUANT_MAKE2(DT, suffix)                                      \
    PT_MEM_DEQUANT_MAKE(pt_mem_make_dequant_##suffix, DT, 0)                 \
    PT_MEM_DEQUANT_MAKE(pt_mem_make_dequant_each_##suffix, DT, 1)            \
    PT_MEM_DEQUANT_MAKE(pt_mem_make_dequant_group_##suffix, DT, 2)
PT_MEM_DEQUANT_MAKE2(dnnl_s8, s8)
PT_MEM_DEQUANT_MAKE2(dnnl_u8, u8)
PT_MEM_DEQUANT_MAKE2(dnnl_s4, s4)
PT_MEM_DEQUANT_MAKE2(dnnl_u4, u4)
#undef PT_MEM_DEQUANT_MAKE2
#undef PT_MEM_DEQUANT_MAKE

PT_MEM_INLINE void pt_mem_quant_run(int8_t *dst, bool is_signed, const void *src, dnnl_data_type_t sdt, int64_t n,
                                    const pt_mem_quant_ctx *c) {
    for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 k = pt_mem_mask16(n - i);
        const __m512 x = pt_mem_load16_q(src, sdt, i, k);
        const __m512 y = c->s ? _mm512_add_ps(_mm512_mul_ps(x, _mm512_maskz_loadu_ps(k, c->s + i)),
                                              _mm512_maskz_loadu_ps(k, c->z + i))
                              : _mm512_add_ps(_mm512_mul_ps(x, c->sv), c->zv);
        _mm_mask_storeu_epi8(dst + i, k, pt_avx512_to_int8(y, is_signed));
    }
}

static bool pt_mem_row_quant(void *dst, dnnl_data_type_t ddt, const void *src, dnnl_data_type_t sdt, int64_t n,
                             const float *s, const float *z, int64_t step, bool quantize, bool stream) {
    /* The types the ops take: quantizing floats, dequantizing integers (each
     * type a copy of the loops: the rest is left to the vector table). */
    const bool float_src = sdt == dnnl_f32 || sdt == dnnl_bf16 || sdt == dnnl_f16;
    const bool int_src = sdt == dnnl_s8 || sdt == dnnl_u8 || sdt == dnnl_s4 || sdt == dnnl_u4;
    if (quantize ? !float_src : !int_src) return false;
    if (quantize ? ddt != dnnl_s8 && ddt != dnnl_u8 : ddt != dnnl_f32 && ddt != dnnl_bf16 && ddt != dnnl_f16)
        return false;
    if (step > 1 && (quantize || step < 16 || (step & (step - 1)) != 0)) return false;
    if (n == 0) return true;
    if (step && !z) return false;
    /* Without a zero point zv is 0: x - 0 is x, and y + 0 changes no value
     * the conversion to an integer keeps. */
    const pt_mem_quant_ctx c = {.src = src, .s = step ? s : NULL, .z = step ? z : NULL,
                                .sv = _mm512_set1_ps(s[0]), .zv = _mm512_set1_ps(z ? z[0] : 0.f),
                                .gshift = step > 1 ? __builtin_ctzll((unsigned long long)step) : 0};
    if (quantize) {
        switch ((int)sdt) { /* the source type a constant in each copy */
            case dnnl_bf16: pt_mem_quant_run(dst, ddt == dnnl_s8, src, dnnl_bf16, n, &c); break;
            case dnnl_f16: pt_mem_quant_run(dst, ddt == dnnl_s8, src, dnnl_f16, n, &c); break;
            default: pt_mem_quant_run(dst, ddt == dnnl_s8, src, dnnl_f32, n, &c); break;
        }
        return true;
    }
#define PT_MEM_DEQUANT_EMIT(suffix)                                                            \
    if (step > 1) pt_mem_emit(dst, ddt, stream, n, &c, pt_mem_make_dequant_group_##suffix); \
    else if (step) pt_mem_emit(dst, ddt, stream, n, &c, pt_mem_make_dequant_each_##suffix); \
    else pt_mem_emit(dst, ddt, stream, n, &c, pt_mem_make_dequant_##suffix);                \
    break;
    switch ((int)sdt) {
        case dnnl_s8: PT_MEM_DEQUANT_EMIT(s8)
        case dnnl_u8: PT_MEM_DEQUANT_EMIT(u8)
        case dnnl_s4: PT_MEM_DEQUANT_EMIT(s4)
        default: PT_MEM_DEQUANT_EMIT(u4)
    }
#undef PT_MEM_DEQUANT_EMIT
    return true;
}

/* ---- GroupNorm over channel-major blocks ---- */

/* Σx, then Σ(x - mean)², in f64 lanes with vec.h's sum_f64 / sum_sq_dev_f64
 * order (four chains over 32 elements, the tail into the first two), x read
 * in its own type: the same statistics without a widened copy. */
PT_MEM_INLINE void pt_mem_gnorm_stats_run(const void *x, dnnl_data_type_t xdt, int64_t n, double *mean, double *var) {
    __m512d a0 = _mm512_setzero_pd(), a1 = a0, a2 = a0, a3 = a0;
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        const __m512 u = pt_mem_load16_dt(x, xdt, i, 0xFFFF), w = pt_mem_load16_dt(x, xdt, i + 16, 0xFFFF);
        a0 = _mm512_add_pd(a0, pt_mem_lo8(u)), a1 = _mm512_add_pd(a1, pt_mem_hi8(u));
        a2 = _mm512_add_pd(a2, pt_mem_lo8(w)), a3 = _mm512_add_pd(a3, pt_mem_hi8(w));
    }
    a0 = _mm512_add_pd(a0, a2), a1 = _mm512_add_pd(a1, a3);
    for (int64_t j = i; j < n; j += 16) {
        const __m512 v = pt_mem_load16_dt(x, xdt, j, pt_mem_mask16(n - j));
        a0 = _mm512_add_pd(a0, pt_mem_lo8(v)), a1 = _mm512_add_pd(a1, pt_mem_hi8(v));
    }
    const double mu = n > 0 ? _mm512_reduce_add_pd(_mm512_add_pd(a0, a1)) / (double)n : 0.0;
    const __m512d m = _mm512_set1_pd(mu);
    a0 = _mm512_setzero_pd(), a1 = a0, a2 = a0, a3 = a0;
    for (i = 0; i + 32 <= n; i += 32) {
        const __m512 u = pt_mem_load16_dt(x, xdt, i, 0xFFFF), w = pt_mem_load16_dt(x, xdt, i + 16, 0xFFFF);
        const __m512d d0 = _mm512_sub_pd(pt_mem_lo8(u), m), d1 = _mm512_sub_pd(pt_mem_hi8(u), m);
        const __m512d d2 = _mm512_sub_pd(pt_mem_lo8(w), m), d3 = _mm512_sub_pd(pt_mem_hi8(w), m);
        a0 = _mm512_fmadd_pd(d0, d0, a0), a1 = _mm512_fmadd_pd(d1, d1, a1);
        a2 = _mm512_fmadd_pd(d2, d2, a2), a3 = _mm512_fmadd_pd(d3, d3, a3);
    }
    a0 = _mm512_add_pd(a0, a2), a1 = _mm512_add_pd(a1, a3);
    for (int64_t j = i; j < n; j += 16) {
        const __mmask16 k = pt_mem_mask16(n - j);
        const __m512 v = pt_mem_load16_dt(x, xdt, j, k);
        const __m512d d0 = _mm512_maskz_sub_pd((__mmask8)k, pt_mem_lo8(v), m);
        const __m512d d1 = _mm512_maskz_sub_pd((__mmask8)(k >> 8), pt_mem_hi8(v), m);
        a0 = _mm512_fmadd_pd(d0, d0, a0), a1 = _mm512_fmadd_pd(d1, d1, a1);
    }
    *mean = mu;
    *var = n > 0 ? _mm512_reduce_add_pd(_mm512_add_pd(a0, a1)) / (double)n : 0.0;
}

static void pt_mem_rows_gnorm_stats(const void *x, dnnl_data_type_t xdt, int64_t n, bool lanes32, double *mean,
                                    double *var) {
    if (lanes32 && n > 0 && (xdt == dnnl_bf16 || xdt == dnnl_f32)) { /* LayerNorm's f32 lane sums */
        const bool x16 = xdt == dnnl_bf16;
        const float c = (float)pt_mem_norm_shift(x, x16, false);
        pt_mem_sums32 s = {_mm512_setzero_pd(), _mm512_setzero_pd()};
        pt_mem_trickle none = pt_mem_trickle_init(NULL, 0, 1);
        pt_mem_sums32_part(x, x16, 0, n, c, &s, &none);
        pt_mem_sums32_moments(x, x16, n, false, c, &s, &none, mean, var);
        return;
    }
    switch ((int)xdt) { /* the source type a constant in each copy */
        case dnnl_bf16: pt_mem_gnorm_stats_run(x, dnnl_bf16, n, mean, var); break;
        case dnnl_f16: pt_mem_gnorm_stats_run(x, dnnl_f16, n, mean, var); break;
        default: pt_mem_gnorm_stats_run(x, dnnl_f32, n, mean, var); break;
    }
}

typedef struct {
    const void *x;
    __m512d mu, sc, sh;
    pt_mem_prefetch pf;
} pt_mem_affine_ctx;

/* (float)((x - mean)·scale + shift) in f64, mul then add (vec.h's
 * normalize1); one maker per source type. */
#define PT_MEM_AFFINE_MAKE(name, DT)                                                                      \
    PT_MEM_INLINE __m512 name(const void *ctx, int64_t i, __mmask16 k) {                                   \
        pt_mem_affine_ctx *c = (pt_mem_affine_ctx *)ctx;                                                 \
        pt_mem_prefetch_step(&c->pf);                                                                    \
        const __m512 v = pt_mem_load16_dt(c->x, DT, i, k);                                               \
        const __m512d lo = _mm512_add_pd(_mm512_mul_pd(_mm512_sub_pd(pt_mem_lo8(v), c->mu), c->sc), c->sh); \
        const __m512d hi = _mm512_add_pd(_mm512_mul_pd(_mm512_sub_pd(pt_mem_hi8(v), c->mu), c->sc), c->sh); \
        return _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps(lo)), _mm512_cvtpd_ps(hi), 1);  \
    }
PT_MEM_AFFINE_MAKE(pt_mem_make_affine_f32, dnnl_f32)
PT_MEM_AFFINE_MAKE(pt_mem_make_affine_bf16, dnnl_bf16)
PT_MEM_AFFINE_MAKE(pt_mem_make_affine_f16, dnnl_f16)
#undef PT_MEM_AFFINE_MAKE

/* A bf16 dst in f32, as LayerNorm's (pt_mem_make_norm32): u = (x - mean)·scale
 * as fma(x - mh, sc, -ml·sc) with the mean split into two f32, y = u + shift;
 * where 4095·|y| >= |shift| y is within about 2⁻¹⁰ of itself and rounds to
 * the nearest bf16 or its neighbour; a vector with a lane where the shift
 * cancels u further is computed in f64 as the f32 / f16 dst are (the f64
 * statistics are GroupNorm's own, so nothing to recompute).  The f64 form
 * took 40 % of a bf16 GroupNorm's time. */
typedef struct {
    pt_mem_affine_ctx d; /* the f64 form */
    __m512 mh, mlsc, sc, sh;
} pt_mem_affine32_ctx;

#define PT_MEM_AFFINE32_MAKE(name, DT)                                                                    \
    PT_MEM_INLINE __m512 name(const void *ctx, int64_t i, __mmask16 k) {                                   \
        pt_mem_affine32_ctx *c = (pt_mem_affine32_ctx *)ctx;                                             \
        pt_mem_prefetch_step(&c->d.pf);                                                                  \
        const __m512 v = pt_mem_load16_dt(c->d.x, DT, i, k);                                             \
        const __m512 y = _mm512_add_ps(_mm512_fmadd_ps(_mm512_sub_ps(v, c->mh), c->sc, c->mlsc), c->sh);   \
        const __mmask16 cancels = _mm512_cmp_ps_mask(_mm512_mul_ps(_mm512_abs_ps(y), _mm512_set1_ps(4095.f)), \
                                                     _mm512_abs_ps(c->sh), _CMP_LT_OQ);                  \
        if (__builtin_expect(cancels == 0, 1)) return y;                                                 \
        const __m512d lo = _mm512_add_pd(_mm512_mul_pd(_mm512_sub_pd(pt_mem_lo8(v), c->d.mu), c->d.sc), c->d.sh); \
        const __m512d hi = _mm512_add_pd(_mm512_mul_pd(_mm512_sub_pd(pt_mem_hi8(v), c->d.mu), c->d.sc), c->d.sh); \
        return _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps(lo)), _mm512_cvtpd_ps(hi), 1);  \
    }
PT_MEM_AFFINE32_MAKE(pt_mem_make_affine32_f32, dnnl_f32)
PT_MEM_AFFINE32_MAKE(pt_mem_make_affine32_bf16, dnnl_bf16)
PT_MEM_AFFINE32_MAKE(pt_mem_make_affine32_f16, dnnl_f16)
#undef PT_MEM_AFFINE32_MAKE

static void pt_mem_rows_affine(void *dst, dnnl_data_type_t ddt, bool stream, const void *x, dnnl_data_type_t xdt,
                               int64_t n, double mean, double scale, double shift, const void *pf, size_t pf_bytes) {
    pt_mem_affine_ctx c = {.x = x, .mu = _mm512_set1_pd(mean), .sc = _mm512_set1_pd(scale),
                           .sh = _mm512_set1_pd(shift), .pf = pt_mem_prefetch_init(pf, pf_bytes, n)};
    /* Parameters well inside f32's normal range (else the f64 form). */
    const double sa = fabs(scale);
    if (ddt == dnnl_bf16 && fabs(mean) < 1e30 && sa > 1e-30 && sa < 1e30 && fabs(shift) < 1e30) {
        const float mh = (float)mean, sc = (float)scale;
        pt_mem_affine32_ctx c32 = {.d = c, .mh = _mm512_set1_ps(mh), .sc = _mm512_set1_ps(sc),
                                   .mlsc = _mm512_set1_ps((float)(-(mean - (double)mh) * (double)sc)),
                                   .sh = _mm512_set1_ps((float)shift)};
        switch ((int)xdt) {
            case dnnl_bf16: pt_mem_emit(dst, ddt, stream, n, &c32, pt_mem_make_affine32_bf16); break;
            case dnnl_f16: pt_mem_emit(dst, ddt, stream, n, &c32, pt_mem_make_affine32_f16); break;
            default: pt_mem_emit(dst, ddt, stream, n, &c32, pt_mem_make_affine32_f32); break;
        }
        return;
    }
    switch ((int)xdt) {
        case dnnl_bf16: pt_mem_emit(dst, ddt, stream, n, &c, pt_mem_make_affine_bf16); break;
        case dnnl_f16: pt_mem_emit(dst, ddt, stream, n, &c, pt_mem_make_affine_f16); break;
        default: pt_mem_emit(dst, ddt, stream, n, &c, pt_mem_make_affine_f32); break;
    }
}

/* ---- reductions over the innermost axis ---- */

/* acc = the reference's step (acc, x) for the kind.  Max: x when x > acc or
 * x is NaN, else acc; vmaxps(x, acc) is "x > acc ? x : acc" (acc on NaN
 * either side, and on ties), so only a NaN x needs the blend, whose mask
 * does not wait on acc.  Min likewise. */
PT_MEM_INLINE __m512 pt_mem_reduce_step(int kind, __m512 acc, __m512 x) {
    switch (kind) {
        case dnnl_graph_op_reduce_max:
            return _mm512_mask_mov_ps(_mm512_max_ps(x, acc), _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x);
        case dnnl_graph_op_reduce_min:
            return _mm512_mask_mov_ps(_mm512_min_ps(x, acc), _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x);
        case dnnl_graph_op_reduce_prod: return _mm512_mul_ps(acc, x);
        default: return _mm512_add_ps(acc, x);
    }
}

/* Lines ahead along each row that the reduction fetches. */
#define PT_MEM_REDUCE_AHEAD 512

PT_MEM_INLINE void pt_mem_reduce_run(int kind, float *acc, const void *src, dnnl_data_type_t sdt, int64_t ld, int rows,
                                     int64_t n) {
    const int64_t esz = sdt == dnnl_f32 ? 4 : 2;
    __m512 a = _mm512_maskz_loadu_ps(pt_mem_mask16(rows), acc);
    for (int64_t i = 0; i < n; i += 16) {
        const int64_t cols = n - i < 16 ? n - i : 16;
        const __mmask16 k = pt_mem_mask16(cols);
        __m512 r[16];
        for (int j = 0; j < 16; ++j) {
            if (j < rows) {
                const char *row = (const char *)src + (size_t)(j * ld + i) * (size_t)esz;
                _mm_prefetch(row + PT_MEM_REDUCE_AHEAD, _MM_HINT_T0);
                r[j] = pt_mem_load16_dt(src, sdt, j * ld + i, k);
            } else {
                r[j] = _mm512_setzero_ps();
            }
        }
        pt_avx512_transpose16_ps(r); /* r[c]: column c of the sixteen rows */
        for (int c = 0; c < cols; ++c) a = pt_mem_reduce_step(kind, a, r[c]);
    }
    _mm512_mask_storeu_ps(acc, pt_mem_mask16(rows), a);
}

static void pt_mem_rows_reduce(int kind, float *acc, const void *src, dnnl_data_type_t sdt, int64_t ld, int rows,
                               int64_t n) {
    switch (kind) { /* the kind and the source type constants in each copy */
#define PT_MEM_REDUCE_KIND(K)                                                                  \
    case K:                                                                                    \
        if (sdt == dnnl_bf16) pt_mem_reduce_run(K, acc, src, dnnl_bf16, ld, rows, n);          \
        else if (sdt == dnnl_f16) pt_mem_reduce_run(K, acc, src, dnnl_f16, ld, rows, n);       \
        else pt_mem_reduce_run(K, acc, src, dnnl_f32, ld, rows, n);                            \
        break;
        PT_MEM_REDUCE_KIND(dnnl_graph_op_reduce_max)
        PT_MEM_REDUCE_KIND(dnnl_graph_op_reduce_min)
        PT_MEM_REDUCE_KIND(dnnl_graph_op_reduce_prod)
        default: PT_MEM_REDUCE_KIND(dnnl_graph_op_reduce_sum)
#undef PT_MEM_REDUCE_KIND
    }
}

/* ---- SoftMax ---- */

typedef struct {
    const float *x;
    __m512 s;
    pt_mem_trickle *pf;
    bool two_level; /* of pf: a constant where the context is made */
} pt_mem_scale_ctx;

PT_MEM_INLINE __m512 pt_mem_make_scale(const void *ctx, int64_t i, __mmask16 k) {
    const pt_mem_scale_ctx *c = ctx;
    pt_mem_trickle_step_in(c->pf, c->two_level);
    return _mm512_mul_ps(_mm512_maskz_loadu_ps(k, c->x + i), c->s);
}

/* A SoftMax row waiting to be written: dst[a, b) = x[a, b)·s. */
typedef struct {
    char *dst; /* NULL: none */
    const float *x;
    float s;
    int64_t next, pieces; /* pieces written, of */
} pt_mem_softmax_out;

PT_MEM_INLINE void pt_mem_softmax_piece(pt_mem_softmax_out *o, dnnl_data_type_t ddt, bool stream, int64_t n,
                                        pt_mem_trickle *pf, bool two_level) {
    if (!o->dst || o->next >= o->pieces) return;
    const int64_t esz = ddt == dnnl_f32 ? 4 : 2;
    const int64_t a = pt_mem_piece_start(o->dst, esz, n, o->next, o->pieces);
    const int64_t b = pt_mem_piece_start(o->dst, esz, n, o->next + 1, o->pieces);
    ++o->next;
    if (b <= a) return;
    pt_mem_scale_ctx c = {.x = o->x + a, .s = _mm512_set1_ps(o->s), .pf = pf, .two_level = two_level};
    pt_mem_emit(o->dst + a * esz, ddt, stream, b - a, &c, pt_mem_make_scale);
}

/* Elements [i, end) of a row into the running maxima m0, m1 (NaN skipped,
 * as vec.h's max); i a multiple of 32.  Nothing is stored: the exp pass
 * reads the row again from L1 (a widened copy written here cost more). */
PT_MEM_INLINE void pt_mem_softmax_load_max(const void *src, dnnl_data_type_t dt, int64_t i, int64_t end,
                                           __m512 *m0, __m512 *m1, pt_mem_trickle *pf, bool two_level) {
    for (; i + 32 <= end; i += 32) {
        __m512 u, w;
        if (dt == dnnl_bf16) { /* even and odd elements: the order does not matter to a max */
            const __m512i b = _mm512_loadu_si512((const uint16_t *)src + i);
            u = _mm512_castsi512_ps(_mm512_slli_epi32(b, 16));
            w = _mm512_castsi512_ps(_mm512_and_si512(b, _mm512_set1_epi32((int)0xffff0000u)));
        } else {
            u = pt_mem_load16_dt(src, dt, i, 0xFFFF), w = pt_mem_load16_dt(src, dt, i + 16, 0xFFFF);
        }
        *m0 = _mm512_max_ps(u, *m0); /* a NaN in u yields m0: NaN skipped */
        *m1 = _mm512_max_ps(w, *m1);
        pt_mem_trickle_step_in(pf, two_level);
        pt_mem_trickle_step_in(pf, two_level);
    }
    for (; i < end; i += 16) {
        const __mmask16 k = pt_mem_mask16(end - i);
        const __m512 u = pt_mem_load16_dt(src, dt, i, k);
        *m0 = _mm512_mask_max_ps(*m0, k, u, *m0);
        pt_mem_trickle_step_in(pf, two_level);
    }
}

/* exp of a SoftMax term: the narrow form where the output is bf16 / f16
 * (mem_math_avx512.h; `narrow` a constant in each copy). */
PT_MEM_INLINE __m512 pt_mem_softmax_exp(__m512 x, bool narrow) {
    return narrow ? pt_avx512_exp_nonpos_narrow(x) : pt_avx512_exp_nonpos(x);
}

/* x[i] = exp(src[i] - mx) over [i, end), summed into a0, a1 as
 * vec.h's exp_sum does over a row (two lane-wise sums over pairs of vectors,
 * the tail into the first: chunks of a multiple of 32 keep that order), so
 * that an f32 row equals the vector table's composition bit for bit. */
PT_MEM_INLINE void pt_mem_softmax_exp_sum(float *x, const void *src, dnnl_data_type_t dt, int64_t i, int64_t end,
                                          float mx, bool narrow, __m512 *a0, __m512 *a1, pt_mem_trickle *pf,
                                          bool two_level) {
    const __m512 s = _mm512_set1_ps(mx);
    for (; i + 32 <= end; i += 32) {
        const __m512 e0 = pt_mem_softmax_exp(_mm512_sub_ps(pt_mem_load16_dt(src, dt, i, 0xFFFF), s), narrow);
        const __m512 e1 = pt_mem_softmax_exp(_mm512_sub_ps(pt_mem_load16_dt(src, dt, i + 16, 0xFFFF), s), narrow);
        _mm512_storeu_ps(x + i, e0);
        _mm512_storeu_ps(x + i + 16, e1);
        *a0 = _mm512_add_ps(*a0, e0);
        *a1 = _mm512_add_ps(*a1, e1);
        pt_mem_trickle_step_in(pf, two_level);
        pt_mem_trickle_step_in(pf, two_level);
    }
    for (; i < end; i += 16) {
        const __mmask16 k = pt_mem_mask16(end - i);
        const __m512 e = pt_mem_softmax_exp(_mm512_sub_ps(pt_mem_load16_dt(src, dt, i, k), s), narrow);
        _mm512_mask_storeu_ps(x + i, k, e);
        *a0 = _mm512_add_ps(*a0, _mm512_maskz_mov_ps(k, e));
        pt_mem_trickle_step_in(pf, two_level);
    }
}

/* The run of rows with the source type a constant. */
PT_MEM_INLINE void pt_mem_softmax_run(char *dst, dnnl_data_type_t ddt, bool stream, const char *src,
                                      dnnl_data_type_t sdt, int64_t n, int64_t rows, float *x, bool inf_as_zero) {
    const size_t ses = sdt == dnnl_f32 ? 4 : 2, des = ddt == dnnl_f32 ? 4 : 2;
    const int64_t chunks = (n + PT_MEM_SOFTMAX_CHUNK - 1) / PT_MEM_SOFTMAX_CHUNK, vectors = (n + 15) / 16;
    const bool two = sdt == dnnl_f32; /* two prefetch levels (pt_mem_run_prefetch) */
    float *cur = x, *next = x + PT_MEM_ROW_FLOATS(n);
    pt_mem_softmax_out o = {.dst = NULL, .pieces = 2 * chunks};
    for (int64_t r = 0; r < rows; ++r) {
        const char *row = src + (size_t)(r * n) * ses;
        pt_mem_trickle q =
            pt_mem_run_prefetch(src, (size_t)n * ses, r, rows, (o.dst ? 3 : 2) * vectors, two);
        __m512 m0 = _mm512_set1_ps(-INFINITY), m1 = m0;
        for (int64_t i = 0; i < n; i += PT_MEM_SOFTMAX_CHUNK) {
            pt_mem_softmax_load_max(row, sdt, i, n - i > PT_MEM_SOFTMAX_CHUNK ? i + PT_MEM_SOFTMAX_CHUNK : n, &m0, &m1, &q,
                                    two);
            pt_mem_softmax_piece(&o, ddt, stream, n, &q, two);
        }
        const float mx = _mm512_reduce_max_ps(_mm512_max_ps(m0, m1));
        float s = 0.f; /* a fully masked row (inf_as_zero) gives zeros */
        if (!inf_as_zero || mx != -INFINITY) {
            __m512 a0 = _mm512_setzero_ps(), a1 = a0;
            for (int64_t i = 0; i < n; i += PT_MEM_SOFTMAX_CHUNK) {
                pt_mem_softmax_exp_sum(cur, row, sdt, i, n - i > PT_MEM_SOFTMAX_CHUNK ? i + PT_MEM_SOFTMAX_CHUNK : n, mx,
                                       ddt != dnnl_f32, &a0, &a1, &q, two);
                pt_mem_softmax_piece(&o, ddt, stream, n, &q, two);
            }
            s = 1.f / _mm512_reduce_add_ps(_mm512_add_ps(a0, a1));
        } else {
            memset(cur, 0, (size_t)n * sizeof *cur);
        }
        while (o.dst && o.next < o.pieces) pt_mem_softmax_piece(&o, ddt, stream, n, &q, two);
        o = (pt_mem_softmax_out){.dst = dst + (size_t)(r * n) * des, .x = cur, .s = s, .pieces = 2 * chunks};
        float *t = cur;
        cur = next, next = t;
    }
    if (o.dst) { /* the last row at once */
        pt_mem_trickle none = pt_mem_trickle_init(NULL, 0, 1);
        o.pieces = 1;
        pt_mem_softmax_piece(&o, ddt, stream, n, &none, false);
    }
}

static void pt_mem_rows_softmax(void *dst, dnnl_data_type_t ddt, bool stream, const void *src, dnnl_data_type_t sdt,
                                int64_t n, int64_t rows, float *x, bool inf_as_zero) {
    /* The source type, and whether the output is f32 (the exp it takes), constants in each copy. */
#define PT_MEM_SOFTMAX_DDT(S)                                                                         \
    if (ddt == dnnl_f32) pt_mem_softmax_run(dst, dnnl_f32, stream, src, S, n, rows, x, inf_as_zero); \
    else pt_mem_softmax_run(dst, ddt, stream, src, S, n, rows, x, inf_as_zero);
    switch ((int)sdt) {
        case dnnl_bf16: PT_MEM_SOFTMAX_DDT(dnnl_bf16) break;
        case dnnl_f16: PT_MEM_SOFTMAX_DDT(dnnl_f16) break;
        default: PT_MEM_SOFTMAX_DDT(dnnl_f32) break;
    }
#undef PT_MEM_SOFTMAX_DDT
}

#define PT_MEM_ROW_OPS                           \
    .stream = pt_mem_row_stream, .fence = pt_mem_row_fence, .norm = pt_mem_rows_norm, .convert = pt_mem_row_convert, .unary = pt_mem_row_unary,     \
    .binary = pt_mem_row_binary, .quant = pt_mem_row_quant, .reduce = pt_mem_rows_reduce, \
    .gnorm_stats = pt_mem_rows_gnorm_stats, .affine = pt_mem_rows_affine, \
    .softmax = pt_mem_rows_softmax

#endif
