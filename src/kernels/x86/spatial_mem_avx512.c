/* AVX-512 MaxPool / AvgPool and Interpolate on dense NXC tensors
 * (spatial_mem_x86.h).  The source type is a constant in each copy of the
 * pixel loops (its loads inline); the destination type is switched per
 * vector stored, a branch that always goes the same way. */
#include <immintrin.h>

#include "kernels/x86/avx512_bf16_round.h"
#include "kernels/x86/spatial_mem_x86.h"

#define PT_SP_INLINE static inline __attribute__((always_inline))

/* Output pixels ahead of the one computed whose source is prefetched. */
#define PT_SP_AHEAD 4

PT_SP_INLINE int64_t elem_bytes(dnnl_data_type_t dt) { return dt == dnnl_f32 ? 4 : 2; }

PT_SP_INLINE __mmask16 lanes(int64_t left) { return left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1u); }

/* 16 elements at p of type dt as f32; `full` a constant: all lanes, else the
 * lanes in k (the others zero). */
PT_SP_INLINE __m512 load16(const char *p, dnnl_data_type_t dt, bool full, __mmask16 k) {
    if (dt == dnnl_f32) return full ? _mm512_loadu_ps(p) : _mm512_maskz_loadu_ps(k, p);
    const __m256i h = full ? _mm256_loadu_si256((const __m256i *)p) : _mm256_maskz_loadu_epi16(k, p);
    if (dt == dnnl_f16) return _mm512_cvtph_ps(h);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

/* 8 elements at p of type dt as f64 (exact), lanes in k. */
PT_SP_INLINE __m512d load8_f64(const char *p, dnnl_data_type_t dt, bool full, __mmask8 k) {
    if (dt == dnnl_f32) return _mm512_cvtps_pd(full ? _mm256_loadu_ps((const float *)p) : _mm256_maskz_loadu_ps(k, p));
    const __m128i h = full ? _mm_loadu_si128((const __m128i *)p) : _mm_maskz_loadu_epi16(k, p);
    if (dt == dnnl_f16) return _mm512_cvtps_pd(_mm256_cvtph_ps(h));
    return _mm512_cvtps_pd(_mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16)));
}

/* 16 f32 results as type dt (rounded as the reference): f32 in all 16
 * lanes, bf16 / f16 in the low 256 bits. */
PT_SP_INLINE __m512i to_dt(__m512 v, dnnl_data_type_t dt) {
    if (dt == dnnl_f32) return _mm512_castps_si512(v);
    if (dt == dnnl_bf16) return _mm512_castsi256_si512(pt_avx512_bf16_round(v));
    return _mm512_castsi256_si512(_mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

/* 16 results to p, cached stores, lanes in k (all when `full`). */
PT_SP_INLINE void store16(char *p, dnnl_data_type_t dt, __m512 v, bool full, __mmask16 k) {
    const __m512i h = to_dt(v, dt);
    if (dt == dnnl_f32 && full) _mm512_storeu_si512(p, h);
    else if (dt == dnnl_f32) _mm512_mask_storeu_epi32(p, k, h);
    else if (full) _mm256_storeu_si256((__m256i *)p, _mm512_castsi512_si256(h));
    else _mm256_mask_storeu_epi16(p, k, _mm512_castsi512_si256(h));
}

/* A thread's output, written in order 16 elements at a time past the caches
 * (non-temporal stores need aligned lines of 16 elements: 64 bytes of f32,
 * 32 of bf16 / f16).  When the output does not start on such a line (a
 * malloc'd buffer is 16 bytes past one), each line is put together from the
 * last vector's upper lanes and the next one's lower lanes with one
 * permute; the partial lines at both ends take masked cached stores. */
typedef struct {
    char *at;      /* the next aligned line */
    int shift;     /* elements before the first aligned line (0: aligned) */
    bool started;  /* the first vector is written (its head) */
    __m512i carry; /* the last vector, its lanes from `shift` not written yet */
    __m512i idx;   /* lanes shift.. of carry, then the next vector's */
} nt_writer;

PT_SP_INLINE nt_writer nt_start(char *dst, dnnl_data_type_t dt) {
    const uintptr_t line = dt == dnnl_f32 ? 64 : 32, es = dt == dnnl_f32 ? 4 : 2;
    nt_writer w = {.shift = (int)((line - (uintptr_t)dst % line) % line / es), .started = false};
    w.at = dst + (uintptr_t)w.shift * es;
    w.carry = _mm512_setzero_si512();
    w.idx = _mm512_add_epi32(_mm512_set1_epi32(w.shift),
                             _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0));
    if (dt != dnnl_f32) w.idx = _mm512_castsi256_si512(_mm512_cvtepi32_epi16(w.idx));
    return w;
}

/* The next 16 results (bits from to_dt). */
PT_SP_INLINE void nt_put(nt_writer *w, dnnl_data_type_t dt, __m512i v) {
    const __mmask16 head = (__mmask16)((1u << w->shift) - 1u);
    if (dt == dnnl_f32) {
        if (w->shift == 0) {
            _mm512_stream_si512((__m512i *)w->at, v);
            w->at += 64;
        } else if (w->started) {
            _mm512_stream_si512((__m512i *)w->at, _mm512_permutex2var_epi32(w->carry, w->idx, v));
            w->at += 64;
        } else {
            _mm512_mask_storeu_epi32(w->at - 4 * w->shift, head, v);
        }
    } else {
        const __m256i h = _mm512_castsi512_si256(v);
        if (w->shift == 0) {
            _mm256_stream_si256((__m256i *)w->at, h);
            w->at += 32;
        } else if (w->started) {
            _mm256_stream_si256((__m256i *)w->at, _mm256_permutex2var_epi16(_mm512_castsi512_si256(w->carry),
                                                                             _mm512_castsi512_si256(w->idx), h));
            w->at += 32;
        } else {
            _mm256_mask_storeu_epi16(w->at - 2 * w->shift, head, h);
        }
    }
    w->started = true;
    w->carry = v;
}

/* The lanes left in the last vector, then the fence that orders this
 * thread's non-temporal stores before whatever follows. */
PT_SP_INLINE void nt_finish(nt_writer *w, dnnl_data_type_t dt) {
    if (w->shift && w->started) {
        const __mmask16 rest = (__mmask16)((1u << (16 - w->shift)) - 1u);
        if (dt == dnnl_f32) {
            _mm512_mask_storeu_epi32(w->at, rest, _mm512_permutex2var_epi32(w->carry, w->idx, w->carry));
        } else {
            const __m256i c = _mm512_castsi512_si256(w->carry);
            _mm256_mask_storeu_epi16(w->at, rest, _mm256_permutex2var_epi16(c, _mm512_castsi512_si256(w->idx), c));
        }
    }
    _mm_sfence();
}

/* Where a kernel's results go: p with cached stores, or, when `nt` (the
 * vectors come in output order, all full), the writer. */
typedef struct {
    bool nt;
    nt_writer w;
} out_sink;

PT_SP_INLINE void put16_dt(out_sink *o, char *p, dnnl_data_type_t dt, __m512 v, bool full, __mmask16 k) {
    if (o->nt) nt_put(&o->w, dt, to_dt(v, dt));
    else store16(p, dt, v, full, k);
}

/* put16_dt with the destination type a constant in each branch. */
PT_SP_INLINE void put16(out_sink *o, char *p, dnnl_data_type_t dt, __m512 v, bool full, __mmask16 k) {
    switch ((int)dt) {
        case dnnl_bf16: put16_dt(o, p, dnnl_bf16, v, full, k); break;
        case dnnl_f16: put16_dt(o, p, dnnl_f16, v, full, k); break;
        default: put16_dt(o, p, dnnl_f32, v, full, k); break;
    }
}

/* Streamed output of C channels per pixel from dst, when `stream` allows and
 * every vector is full. */
PT_SP_INLINE out_sink sink_of(char *dst, dnnl_data_type_t dt, int64_t C, bool stream) {
    out_sink o = {.nt = stream && C % 16 == 0 && (uintptr_t)dst % (dt == dnnl_f32 ? 4u : 2u) == 0};
    if (o.nt) o.w = nt_start(dst, dt);
    return o;
}

PT_SP_INLINE void sink_end(out_sink *o, dnnl_data_type_t dt) {
    if (!o->nt) return;
    switch ((int)dt) {
        case dnnl_bf16: nt_finish(&o->w, dnnl_bf16); break;
        case dnnl_f16: nt_finish(&o->w, dnnl_f16); break;
        default: nt_finish(&o->w, dnnl_f32); break;
    }
}

/* Lines [p, p + bytes) into L2: a 3x3 window's new columns PT_SP_AHEAD
 * pixels on are about 12 KiB (f32, 128 channels), too much to bring into a
 * 32 KiB L1 ahead of use.  Zen 4, bench_membound (64 MiB, 2 threads,
 * medians of five alternating rounds): MaxPool 3x3 stride 2 2.80 -> 2.32 ms
 * (into L1 before), AvgPool 2x2 2.46 -> 2.35, Interpolate alike; 8 pixels
 * ahead instead of 4 gained nothing. */
PT_SP_INLINE void prefetch_span(const char *p, int64_t bytes) {
    for (int64_t i = 0; i < bytes; i += 64) _mm_prefetch(p + i, _MM_HINT_T1);
}

/* Whole source rows for the next output row, prefetched into L2 a few
 * lines per pixel while this output row's pixels run (linear Interpolate
 * reads its source rows in bursts, as it builds a blend row: without this,
 * 2x bilinear ran 40-55% of the copy instead of 65-70%; MaxPool / AvgPool
 * measured no gain from it over their per-pixel prefetch). */
#define PT_SP_ROWS 8
typedef struct {
    const char *row[PT_SP_ROWS], *at, *end;
    int n, next;
    int64_t row_bytes, step; /* bytes per row, bytes per pixel */
} row_trickle;

/* Starts the rows added with add_row, spread over `pixels` steps. */
PT_SP_INLINE void trickle_begin(row_trickle *r, int64_t pixels) {
    r->next = 0, r->at = r->end = NULL;
    r->step = pixels > 0 ? (r->n * r->row_bytes + pixels - 1) / pixels : 0;
}

PT_SP_INLINE void trickle_add(row_trickle *r, const char *row) {
    for (int j = 0; j < r->n; ++j)
        if (r->row[j] == row) return;
    if (r->n < PT_SP_ROWS) r->row[r->n++] = row;
}

PT_SP_INLINE void trickle_step(row_trickle *r) {
    for (int64_t left = r->step; left > 0;) {
        if (r->at >= r->end) {
            if (r->next == r->n) return;
            r->at = r->row[r->next], r->end = r->row[r->next] + r->row_bytes, ++r->next;
        }
        for (; left > 0 && r->at < r->end; left -= 64, r->at += 64) _mm_prefetch(r->at, _MM_HINT_T1);
    }
}

/* Row-major position (n, d, h, w) of an output pixel, advanced one by one
 * (no divisions per pixel). */
typedef struct {
    int64_t n, d, h, w;
} pixel_pos;

PT_SP_INLINE pixel_pos pos_of(const int64_t dd[5], int64_t k) {
    pixel_pos q;
    q.w = k % dd[4], k /= dd[4];
    q.h = k % dd[3], k /= dd[3];
    q.d = k % dd[2], q.n = k / dd[2];
    return q;
}

PT_SP_INLINE void pos_next(const int64_t dd[5], pixel_pos *q) {
    if (++q->w < dd[4]) return;
    q->w = 0;
    if (++q->h < dd[3]) return;
    q->h = 0;
    if (++q->d < dd[2]) return;
    q->d = 0, ++q->n;
}

/* ---- pooling ---- */

/* Valid taps of a window that starts at b along an axis of I inputs: the
 * first at *first, *count of them (taps inside [0, I) are consecutive). */
PT_SP_INLINE void axis_taps(int64_t b, int64_t K, int64_t dl, int64_t I, int64_t *first, int64_t *count) {
    const int64_t k0 = b >= 0 ? 0 : (-b + dl - 1) / dl, i0 = b + k0 * dl;
    int64_t n = i0 >= I ? 0 : (I - 1 - i0) / dl + 1;
    if (n > K - k0) n = K - k0;
    *first = i0, *count = n > 0 ? n : 0;
}

/* The valid taps of one output pixel: the first at `at`, nd × nh × nw of
 * them, `sd`, `sh`, `sw` bytes apart along each axis. */
typedef struct {
    const char *at;
    int64_t nd, nh, nw, sd, sh, sw;
} pool_window;

/* Max over the window of nv vectors from channel byte offset c (full
 * vectors, or one with lanes k): the first tap, then vmaxps(x, best) per
 * tap, which is "x > best ? x : best" (NaN taps after the first never
 * replace, as the reference's comparison). */
PT_SP_INLINE void max_block(const pool_window *w, int64_t c, dnnl_data_type_t sdt, int nv, bool full, __mmask16 k,
                            __m512 *best) {
    const char *base = w->at + c;
    const int64_t vb = 16 * elem_bytes(sdt);
    for (int j = 0; j < nv; ++j) best[j] = load16(base + j * vb, sdt, full, k);
    for (int64_t d = 0; d < w->nd; ++d)
        for (int64_t h = 0; h < w->nh; ++h) {
            const char *row = base + d * w->sd + h * w->sh;
            for (int64_t x = d == 0 && h == 0 ? 1 : 0; x < w->nw; ++x)
                for (int j = 0; j < nv; ++j)
                    best[j] = _mm512_max_ps(load16(row + x * w->sw + j * vb, sdt, full, k), best[j]);
        }
}

/* f64 sums over the window (the reference's tap order, from 0.0), divided
 * once by den and rounded to f32; 0 when den is 0.  A power-of-two den
 * multiplies by its exact reciprocal instead: the same result, as sums of
 * f32 values stay far above the f64 subnormals. */
PT_SP_INLINE void avg_block(const pool_window *w, int64_t c, dnnl_data_type_t sdt, int nv, bool full, __mmask16 k,
                            int64_t den, __m512 *out) {
    const char *base = w->at + c;
    const int64_t vb = 16 * elem_bytes(sdt), hb = 8 * elem_bytes(sdt);
    const __mmask8 klo = (__mmask8)k, khi = (__mmask8)(k >> 8);
    __m512d lo[8], hi[8];
    for (int j = 0; j < nv; ++j) lo[j] = hi[j] = _mm512_setzero_pd();
    for (int64_t d = 0; d < w->nd; ++d)
        for (int64_t h = 0; h < w->nh; ++h) {
            const char *row = base + d * w->sd + h * w->sh;
            for (int64_t x = 0; x < w->nw; ++x)
                for (int j = 0; j < nv; ++j) {
                    const char *t = row + x * w->sw + j * vb;
                    lo[j] = _mm512_add_pd(lo[j], load8_f64(t, sdt, full, klo));
                    hi[j] = _mm512_add_pd(hi[j], load8_f64(t + hb, sdt, full, khi));
                }
        }
    const bool pow2 = den > 0 && (den & (den - 1)) == 0;
    const __m512d scale = _mm512_set1_pd(pow2 ? 1.0 / (double)den : (double)den);
    for (int j = 0; j < nv; ++j) {
        __m512d a = lo[j], b = hi[j];
        if (pow2) {
            a = _mm512_mul_pd(a, scale), b = _mm512_mul_pd(b, scale);
        } else if (den > 0) {
            a = _mm512_div_pd(a, scale), b = _mm512_div_pd(b, scale);
        } else {
            a = b = _mm512_setzero_pd();
        }
        out[j] = _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps(a)), _mm512_cvtpd_ps(b), 1);
    }
}

/* One output pixel's C channels: 8 vectors at a time in registers, the rest
 * one vector at a time (the last one masked). */
PT_SP_INLINE void pool_pixel(const pt_mem_pool_plan *p, const pool_window *w, int64_t den, dnnl_data_type_t sdt,
                             char *y, dnnl_data_type_t ddt, out_sink *o, bool is_max) {
    const int64_t C = p->sd[1], es = elem_bytes(sdt), ds = elem_bytes(ddt);
    __m512 r[8];
    int64_t c = 0;
    if (is_max && (w->nd == 0 || w->nh == 0 || w->nw == 0)) { /* no valid tap */
        const __m512 lowest = _mm512_set1_ps(p->lowest);
        for (; c < C; c += 16) put16(o, y + c * ds, ddt, lowest, C - c >= 16, lanes(C - c));
        return;
    }
    for (; c + 128 <= C; c += 128) {
        if (is_max) max_block(w, c * es, sdt, 8, true, 0xFFFF, r);
        else avg_block(w, c * es, sdt, 8, true, 0xFFFF, den, r);
        for (int j = 0; j < 8; ++j) put16(o, y + (c + 16 * j) * ds, ddt, r[j], true, 0xFFFF);
    }
    for (; c + 16 <= C; c += 16) {
        if (is_max) max_block(w, c * es, sdt, 1, true, 0xFFFF, r);
        else avg_block(w, c * es, sdt, 1, true, 0xFFFF, den, r);
        put16(o, y + c * ds, ddt, r[0], true, 0xFFFF);
    }
    if (c < C) {
        const __mmask16 k = lanes(C - c);
        if (is_max) max_block(w, c * es, sdt, 1, false, k, r);
        else avg_block(w, c * es, sdt, 1, false, k, den, r);
        put16(o, y + c * ds, ddt, r[0], false, k);
    }
}

/* Window geometry of output pixel q: its valid taps, and along w the range
 * of source columns new to it (not in the window of the pixel before). */
typedef struct {
    int64_t d0, nd, h0, nh, w0, nw, new_lo, new_hi;
} pool_taps;

PT_SP_INLINE pool_taps pool_taps_of(const pt_mem_pool_plan *p, const int64_t dl[3], const pixel_pos *q) {
    pool_taps t;
    const int64_t bw = q->w * p->S[2] - p->P[2], ext = (p->K[2] - 1) * dl[2];
    axis_taps(q->d * p->S[0] - p->P[0], p->K[0], dl[0], p->sd[2], &t.d0, &t.nd);
    axis_taps(q->h * p->S[1] - p->P[1], p->K[1], dl[1], p->sd[3], &t.h0, &t.nh);
    axis_taps(bw, p->K[2], dl[2], p->sd[4], &t.w0, &t.nw);
    t.new_lo = bw - p->S[2] + ext + 1 > bw ? bw - p->S[2] + ext + 1 : bw;
    t.new_lo = t.new_lo < 0 ? 0 : t.new_lo;
    t.new_hi = bw + ext < p->sd[4] - 1 ? bw + ext : p->sd[4] - 1;
    return t;
}

PT_SP_INLINE void pool_pixels(const pt_mem_pool_plan *p, const char *src, dnnl_data_type_t sdt, char *dst,
                              dnnl_data_type_t ddt, int64_t b, int64_t e, bool stream, bool is_max) {
    const int64_t C = p->sd[1], es = elem_bytes(sdt), ds = elem_bytes(ddt);
    const int64_t H = p->sd[3], W = p->sd[4], pix = C * es; /* bytes per source pixel */
    /* AvgPool takes no dilation (the reference ignores it). */
    const int64_t dl[3] = {is_max ? p->Dl[0] : 1, is_max ? p->Dl[1] : 1, is_max ? p->Dl[2] : 1};
    const int64_t taps = p->K[0] * p->K[1] * p->K[2];
    pool_window w = {.sd = dl[0] * H * W * pix, .sh = dl[1] * W * pix, .sw = dl[2] * pix};
    out_sink o = sink_of(dst + b * C * ds, ddt, C, stream);
    pixel_pos q = pos_of(p->dd, b), f = pos_of(p->dd, b + PT_SP_AHEAD < e ? b + PT_SP_AHEAD : e);
    for (int64_t k = b; k < e; ++k) {
        if (k + PT_SP_AHEAD < e) { /* the columns new to pixel k + AHEAD, on each of its rows */
            const pool_taps t = pool_taps_of(p, dl, &f);
            if (t.new_lo <= t.new_hi)
                for (int64_t d = 0; d < t.nd; ++d)
                    for (int64_t h = 0; h < t.nh; ++h) {
                        const int64_t row = (f.n * p->sd[2] + t.d0 + d * dl[0]) * H + t.h0 + h * dl[1];
                        prefetch_span(src + (row * W + t.new_lo) * pix, (t.new_hi - t.new_lo + 1) * pix);
                    }
            pos_next(p->dd, &f);
        }
        const pool_taps t = pool_taps_of(p, dl, &q);
        w.at = src + (((q.n * p->sd[2] + t.d0) * H + t.h0) * W + t.w0) * pix;
        w.nd = t.nd, w.nh = t.nh, w.nw = t.nw;
        const int64_t den = !is_max && p->exclude ? t.nd * t.nh * t.nw : taps;
        pool_pixel(p, &w, den, sdt, dst + k * C * ds, ddt, &o, is_max);
        pos_next(p->dd, &q);
    }
    sink_end(&o, ddt);
}

void pt_pool_nxc_avx512(const pt_mem_pool_plan *p, const void *src, dnnl_data_type_t sdt, void *dst,
                        dnnl_data_type_t ddt, int64_t b, int64_t e, bool stream) {
    const char *s = src;
    char *y = dst;
    switch ((int)sdt) {
        case dnnl_bf16:
            if (p->is_max) pool_pixels(p, s, dnnl_bf16, y, ddt, b, e, stream, true);
            else pool_pixels(p, s, dnnl_bf16, y, ddt, b, e, stream, false);
            break;
        case dnnl_f16:
            if (p->is_max) pool_pixels(p, s, dnnl_f16, y, ddt, b, e, stream, true);
            else pool_pixels(p, s, dnnl_f16, y, ddt, b, e, stream, false);
            break;
        default:
            if (p->is_max) pool_pixels(p, s, dnnl_f32, y, ddt, b, e, stream, true);
            else pool_pixels(p, s, dnnl_f32, y, ddt, b, e, stream, false);
            break;
    }
}

/* ---- Interpolate ---- */

/* a·w + b·(1 - w), each product and the sum rounded to f32 (the reference's
 * lerp; no FMA). */
PT_SP_INLINE __m512 lerp(__m512 a, __m512 b, __m512 w, __m512 w1) {
    return _mm512_add_ps(_mm512_mul_ps(a, w), _mm512_mul_ps(b, w1));
}

/* One output pixel of `k` linear dims (0: nearest) from its source taps
 * t[z][y][x] (only those the dims use are read): depth, then height, then
 * width blends, as the reference. */
PT_SP_INLINE __m512 interp16(const char *const t[2][2][2], int64_t c, dnnl_data_type_t sdt, bool full, __mmask16 m,
                             int k, const __m512 w[3], const __m512 w1[3]) {
    if (k == 0) return load16(t[0][0][0] + c, sdt, full, m);
    __m512 e[2][2], f[2];
    for (int y = 0; y < (k >= 2 ? 2 : 1); ++y)
        for (int x = 0; x < 2; ++x) {
            e[y][x] = load16(t[0][y][x] + c, sdt, full, m);
            if (k == 3) e[y][x] = lerp(e[y][x], load16(t[1][y][x] + c, sdt, full, m), w[0], w1[0]);
        }
    for (int x = 0; x < 2; ++x) f[x] = k >= 2 ? lerp(e[0][x], e[1][x], w[1], w1[1]) : e[0][x];
    return lerp(f[0], f[1], w[2], w1[2]);
}

PT_SP_INLINE void interp_pixels(const pt_mem_interp_plan *p, const char *src, dnnl_data_type_t sdt, char *dst,
                                dnnl_data_type_t ddt, int64_t b, int64_t e, bool stream, int k) {
    const int64_t C = p->sd[1], es = elem_bytes(sdt), ds = elem_bytes(ddt);
    const int64_t D = p->sd[2], H = p->sd[3], W = p->sd[4], pix = C * es;
    pixel_pos q = pos_of(p->dd, b), f = pos_of(p->dd, b + PT_SP_AHEAD < e ? b + PT_SP_AHEAD : e);
    out_sink o = sink_of(dst + b * C * ds, ddt, C, stream);
    int64_t last_r0 = -1, last_r1 = -1, last_x = -1; /* the source rows and last column prefetched */
    for (int64_t i = b; i < e; ++i) {
        if (i + PT_SP_AHEAD < e) { /* the source pixels of pixel i + AHEAD not prefetched yet */
            const pt_mem_interp_tap *fd = &p->tab[0][f.d], *fh = &p->tab[1][f.h], *fw = &p->tab[2][f.w];
            const int64_t r0 = (f.n * D + fd->i0) * H + fh->i0, r1 = (f.n * D + fd->i1) * H + fh->i1;
            const int64_t x1 = k ? fw->i1 : fw->i0;
            const bool same = r0 == last_r0 && r1 == last_r1;
            const int64_t x0 = same && last_x >= fw->i0 ? last_x + 1 : fw->i0;
            if (x0 <= x1)
                for (int z = 0; z < (k == 3 ? 2 : 1); ++z)
                    for (int y = 0; y < (k >= 2 ? 2 : 1); ++y) {
                        const int64_t r = (f.n * D + (z ? fd->i1 : fd->i0)) * H + (y ? fh->i1 : fh->i0);
                        prefetch_span(src + (r * W + x0) * pix, (x1 - x0 + 1) * pix);
                    }
            last_r0 = r0, last_r1 = r1, last_x = same && last_x > x1 ? last_x : x1;
            pos_next(p->dd, &f);
        }
        const pt_mem_interp_tap *td = &p->tab[0][q.d], *th = &p->tab[1][q.h], *tw = &p->tab[2][q.w];
        const char *t[2][2][2];
        for (int z = 0; z < 2; ++z)
            for (int y = 0; y < 2; ++y)
                for (int x = 0; x < 2; ++x)
                    t[z][y][x] = src + (((q.n * D + (z ? td->i1 : td->i0)) * H + (y ? th->i1 : th->i0)) * W +
                                        (x ? tw->i1 : tw->i0)) * pix;
        const __m512 w[3] = {_mm512_set1_ps(td->wl), _mm512_set1_ps(th->wl), _mm512_set1_ps(tw->wl)};
        const __m512 w1[3] = {_mm512_set1_ps(1.0f - td->wl), _mm512_set1_ps(1.0f - th->wl),
                              _mm512_set1_ps(1.0f - tw->wl)};
        char *y = dst + i * C * ds;
        int64_t c = 0;
        for (; c + 16 <= C; c += 16)
            put16(&o, y + c * ds, ddt, interp16(t, c * es, sdt, true, 0xFFFF, k, w, w1), true, 0xFFFF);
        if (c < C) {
            const __mmask16 m = lanes(C - c);
            put16(&o, y + c * ds, ddt, interp16(t, c * es, sdt, false, m, k, w, w1), false, m);
        }
        pos_next(p->dd, &q);
    }
    sink_end(&o, ddt);
}

/* Linear over k >= 2 dims, the depth and height blends done once per output
 * row: F[x] (f32, every source column x) is the reference's f[x] for the row
 * (the same operations on the same values), then each pixel blends F[x0]
 * and F[x1] across the width.  While a row's pixels are written, the source
 * rows the next output row adds are prefetched into L2, a few lines per
 * pixel. */
PT_SP_INLINE void interp_rows(const pt_mem_interp_plan *p, const char *src, dnnl_data_type_t sdt, char *dst,
                              dnnl_data_type_t ddt, int64_t b, int64_t e, bool stream, int k, float *F) {
    const int64_t C = p->sd[1], es = elem_bytes(sdt), ds = elem_bytes(ddt);
    const int64_t D = p->sd[2], H = p->sd[3], W = p->sd[4], pix = C * es, OW = p->dd[4];
    pixel_pos q = pos_of(p->dd, b);
    out_sink o = sink_of(dst + b * C * ds, ddt, C, stream);
    int64_t built_n = -1, built_d = -1, built_h = -1; /* the output row F holds */
    int64_t lo = 0, hi = -1;                          /* its columns built so far */
    const char *r[2][2] = {{src, src}, {src, src}};
    __m512 wd = _mm512_setzero_ps(), wd1 = wd, wh = wd, wh1 = wd;
    row_trickle rows = {.row_bytes = W * pix};
    for (int64_t i = b; i < e; ++i) {
        const pt_mem_interp_tap *tw = &p->tab[2][q.w];
        if (q.n != built_n || q.d != built_d || q.h != built_h) {
            const pt_mem_interp_tap *td = &p->tab[0][q.d], *th = &p->tab[1][q.h];
            for (int z = 0; z < 2; ++z)
                for (int y = 0; y < 2; ++y)
                    r[z][y] = src + ((q.n * D + (z ? td->i1 : td->i0)) * H + (y ? th->i1 : th->i0)) * W * pix;
            wd = _mm512_set1_ps(td->wl), wd1 = _mm512_set1_ps(1.0f - td->wl);
            wh = _mm512_set1_ps(th->wl), wh1 = _mm512_set1_ps(1.0f - th->wl);
            lo = 0, hi = -1;
            built_n = q.n, built_d = q.d, built_h = q.h;
            /* The next output row's source rows that this one does not use. */
            pixel_pos nx = {q.n, q.d, q.h, p->dd[4] - 1};
            pos_next(p->dd, &nx);
            rows.n = 0;
            if (nx.n < p->dd[0]) {
                const pt_mem_interp_tap *nd = &p->tab[0][nx.d], *nh = &p->tab[1][nx.h];
                for (int z = 0; z < (k == 3 ? 2 : 1); ++z)
                    for (int y = 0; y < 2; ++y) {
                        const int64_t at = (nx.n * D + (z ? nd->i1 : nd->i0)) * H + (y ? nh->i1 : nh->i0);
                        const char *row = src + at * W * pix;
                        bool have = false;
                        for (int zz = 0; zz < (k == 3 ? 2 : 1); ++zz)
                            for (int yy = 0; yy < 2; ++yy) have = have || row == r[zz][yy];
                        if (!have) trickle_add(&rows, row);
                    }
            }
            trickle_begin(&rows, OW);
        }
        trickle_step(&rows);
        /* The columns this pixel blends, built as the row's pixels reach
         * them (taps only move right along a row): the arithmetic spreads
         * between the stores instead of stalling them once per row. */
        if (tw->i0 < lo || tw->i0 > hi + 1) lo = tw->i0, hi = tw->i0 - 1;
        for (; hi < tw->i1; ++hi) {
            const int64_t x = hi + 1;
            for (int64_t c = 0; c < C; c += 16) {
                const bool full = C - c >= 16;
                const __mmask16 m = lanes(C - c);
                const int64_t at = x * pix + c * es;
                __m512 e0 = load16(r[0][0] + at, sdt, full, m), e1 = load16(r[0][1] + at, sdt, full, m);
                if (k == 3) {
                    e0 = lerp(e0, load16(r[1][0] + at, sdt, full, m), wd, wd1);
                    e1 = lerp(e1, load16(r[1][1] + at, sdt, full, m), wd, wd1);
                }
                _mm512_mask_storeu_ps(F + x * C + c, m, lerp(e0, e1, wh, wh1));
            }
        }
        const __m512 ww = _mm512_set1_ps(tw->wl), ww1 = _mm512_set1_ps(1.0f - tw->wl);
        const float *f0 = F + tw->i0 * C, *f1 = F + tw->i1 * C;
        char *y = dst + i * C * ds;
        int64_t c = 0;
        for (; c + 16 <= C; c += 16)
            put16(&o, y + c * ds, ddt, lerp(_mm512_loadu_ps(f0 + c), _mm512_loadu_ps(f1 + c), ww, ww1), true, 0xFFFF);
        if (c < C) {
            const __mmask16 m = lanes(C - c);
            const __m512 v = lerp(_mm512_maskz_loadu_ps(m, f0 + c), _mm512_maskz_loadu_ps(m, f1 + c), ww, ww1);
            put16(&o, y + c * ds, ddt, v, false, m);
        }
        pos_next(p->dd, &q);
    }
    sink_end(&o, ddt);
}

/* One copy per source type and number of linear dims. */
PT_SP_INLINE void interp_of(const pt_mem_interp_plan *p, const char *s, dnnl_data_type_t sdt, char *y,
                            dnnl_data_type_t ddt, int64_t b, int64_t e, bool stream, float *row) {
    if (!p->nearest && p->k >= 2 && row) {
        if (p->k == 2) interp_rows(p, s, sdt, y, ddt, b, e, stream, 2, row);
        else interp_rows(p, s, sdt, y, ddt, b, e, stream, 3, row);
        return;
    }
    switch (p->nearest ? 0 : p->k) {
        case 0: interp_pixels(p, s, sdt, y, ddt, b, e, stream, 0); break;
        case 1: interp_pixels(p, s, sdt, y, ddt, b, e, stream, 1); break;
        case 2: interp_pixels(p, s, sdt, y, ddt, b, e, stream, 2); break;
        default: interp_pixels(p, s, sdt, y, ddt, b, e, stream, 3); break;
    }
}

void pt_interp_nxc_avx512(const pt_mem_interp_plan *p, const void *src, dnnl_data_type_t sdt, void *dst,
                          dnnl_data_type_t ddt, int64_t b, int64_t e, bool stream, float *row) {
    switch ((int)sdt) {
        case dnnl_bf16: interp_of(p, src, dnnl_bf16, dst, ddt, b, e, stream, row); break;
        case dnnl_f16: interp_of(p, src, dnnl_f16, dst, ddt, b, e, stream, row); break;
        default: interp_of(p, src, dnnl_f32, dst, ddt, b, e, stream, row); break;
    }
}
