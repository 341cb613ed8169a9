/* AVX-512 row of the SDPA column-operation table (kernels/fused/
 * sdpa_panel.h): rows of 32 queries as two registers, the running max and
 * sum of each query in its lane for the whole block of keys.  exp is the
 * vector kernels' (mem_math_avx512.h, same values), fused with the
 * lane-wise sum so that each score is loaded and stored once. */
#include <immintrin.h>

#include "kernels/fused/sdpa_panel.h"
#include "kernels/x86/avx512_transpose.h"
#include "kernels/x86/mem_math_avx512.h"

/* Rows of attention heads lie a head's stride apart (4 KiB in BERT's
 * layout): every row is on its own page, where the hardware prefetchers
 * stop, so the packing and output loops fetch the rows they take next
 * themselves.  Prefetches do not fault past a tensor's end. */
static inline void prefetch_row(const float *row, int64_t n, int write) {
    for (int64_t c = 0; c < n; c += 16) {
        if (write) _mm_prefetch((const char *)(row + c), _MM_HINT_ET0);
        else _mm_prefetch((const char *)(row + c), _MM_HINT_T0);
    }
}

static void max_rows_avx512(float *x, int64_t nk, int w, const float *add, float *m) {
    if (w != 32) {
        sd_panel_max_rows(x, nk, w, add, m);
        return;
    }
    /* max(x, m) keeps m where x is NaN (vmaxps returns its second operand). */
    __m512 m0 = _mm512_loadu_ps(m), m1 = _mm512_loadu_ps(m + 16);
    if (add) {
        for (int64_t j = 0; j < nk; ++j) {
            float *r = x + j * 32;
            const __m512 a = _mm512_set1_ps(add[j]);
            const __m512 x0 = _mm512_add_ps(_mm512_loadu_ps(r), a), x1 = _mm512_add_ps(_mm512_loadu_ps(r + 16), a);
            _mm512_storeu_ps(r, x0);
            _mm512_storeu_ps(r + 16, x1);
            m0 = _mm512_max_ps(x0, m0);
            m1 = _mm512_max_ps(x1, m1);
        }
    } else {
        for (int64_t j = 0; j < nk; ++j) {
            m0 = _mm512_max_ps(_mm512_loadu_ps(x + j * 32), m0);
            m1 = _mm512_max_ps(_mm512_loadu_ps(x + j * 32 + 16), m1);
        }
    }
    _mm512_storeu_ps(m, m0);
    _mm512_storeu_ps(m + 16, m1);
}

static void exp_rows_avx512(float *x, int64_t nk, int w, const float *sub, float *l) {
    if (w != 32) {
        sd_panel_exp_rows(x, nk, w, sub, l);
        return;
    }
    const __m512 s0 = _mm512_loadu_ps(sub), s1 = _mm512_loadu_ps(sub + 16);
    /* Two rows per step into separate sums: the adds do not wait on each other. */
    __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps(), b0 = _mm512_setzero_ps(), b1 = _mm512_setzero_ps();
    int64_t j = 0;
    for (; j + 2 <= nk; j += 2) {
        float *r = x + j * 32;
        const __m512 e0 = pt_avx512_exp_nonpos(_mm512_sub_ps(_mm512_loadu_ps(r), s0));
        const __m512 e1 = pt_avx512_exp_nonpos(_mm512_sub_ps(_mm512_loadu_ps(r + 16), s1));
        const __m512 e2 = pt_avx512_exp_nonpos(_mm512_sub_ps(_mm512_loadu_ps(r + 32), s0));
        const __m512 e3 = pt_avx512_exp_nonpos(_mm512_sub_ps(_mm512_loadu_ps(r + 48), s1));
        _mm512_storeu_ps(r, e0);
        _mm512_storeu_ps(r + 16, e1);
        _mm512_storeu_ps(r + 32, e2);
        _mm512_storeu_ps(r + 48, e3);
        a0 = _mm512_add_ps(a0, e0), a1 = _mm512_add_ps(a1, e1);
        b0 = _mm512_add_ps(b0, e2), b1 = _mm512_add_ps(b1, e3);
    }
    if (j < nk) {
        float *r = x + j * 32;
        const __m512 e0 = pt_avx512_exp_nonpos(_mm512_sub_ps(_mm512_loadu_ps(r), s0));
        const __m512 e1 = pt_avx512_exp_nonpos(_mm512_sub_ps(_mm512_loadu_ps(r + 16), s1));
        _mm512_storeu_ps(r, e0);
        _mm512_storeu_ps(r + 16, e1);
        a0 = _mm512_add_ps(a0, e0), a1 = _mm512_add_ps(a1, e1);
    }
    _mm512_storeu_ps(l, _mm512_add_ps(_mm512_loadu_ps(l), _mm512_add_ps(a0, b0)));
    _mm512_storeu_ps(l + 16, _mm512_add_ps(_mm512_loadu_ps(l + 16), _mm512_add_ps(a1, b1)));
}

static void scale_rows_avx512(float *o, int64_t n, int w, const float *alpha) {
    if (w != 32) {
        sd_panel_scale_rows(o, n, w, alpha);
        return;
    }
    const __m512 a0 = _mm512_loadu_ps(alpha), a1 = _mm512_loadu_ps(alpha + 16);
    for (int64_t d = 0; d < n; ++d) {
        _mm512_storeu_ps(o + d * 32, _mm512_mul_ps(_mm512_loadu_ps(o + d * 32), a0));
        _mm512_storeu_ps(o + d * 32 + 16, _mm512_mul_ps(_mm512_loadu_ps(o + d * 32 + 16), a1));
    }
}

static void add_cols_avx512(float *x, int64_t nk, int w, int nq, const float *const *src) {
    if (w != 32) {
        sd_panel_add_cols(x, nk, w, nq, src);
        return;
    }
    const int qfull = nq / 16 * 16;
    const int64_t jfull = nk / 16 * 16;
    for (int q0 = 0; q0 < qfull; q0 += 16)
        for (int64_t j0 = 0; j0 < jfull; j0 += 16) {
            __m512 r[16];
            for (int k = 0; k < 16; ++k) r[k] = _mm512_loadu_ps(src[q0 + k] + j0);
            pt_avx512_transpose16_ps(r);
            for (int k = 0; k < 16; ++k) {
                float *row = x + (j0 + k) * 32 + q0;
                _mm512_storeu_ps(row, _mm512_add_ps(_mm512_loadu_ps(row), r[k]));
            }
        }
    /* Tails: keys past the last 16 of the full column groups, then the
     * columns past them. */
    for (int q = 0; q < qfull; ++q)
        for (int64_t j = jfull; j < nk; ++j) x[j * 32 + q] += src[q][j];
    for (int q = qfull; q < nq; ++q)
        for (int64_t j = 0; j < nk; ++j) x[j * 32 + q] += src[q][j];
}

static void transpose_out_avx512(const float *o, int64_t n, int w, int nq, const float *scale, float *dst,
                                 int64_t ld) {
    if (w != 32) {
        sd_panel_transpose_out(o, n, w, nq, scale, dst, ld);
        return;
    }
    const int qfull = nq / 16 * 16;
    const int64_t dfull = n / 16 * 16;
    for (int q = 0; q < qfull; ++q) prefetch_row(dst + q * ld, n, 1);
    /* Sixteen output rows at a time, up to 64 values of each transposed
     * into a staging block first, then written row by row: each row's lines
     * in a row on its page rather than one line of sixteen pages at a time
     * (BERT-large f32: a quarter less time writing the output). */
    for (int q0 = 0; q0 < qfull; q0 += 16) {
        _Alignas(64) float rows[16][64];
        for (int64_t e0 = 0; e0 < dfull; e0 += 64) {
            const int64_t ne = dfull - e0 < 64 ? dfull - e0 : 64;
            for (int64_t d0 = 0; d0 < ne; d0 += 16) {
                __m512 r[16];
                for (int k = 0; k < 16; ++k) r[k] = _mm512_loadu_ps(o + (e0 + d0 + k) * 32 + q0);
                pt_avx512_transpose16_ps(r);
                if (scale)
                    for (int k = 0; k < 16; ++k) r[k] = _mm512_mul_ps(r[k], _mm512_set1_ps(scale[q0 + k]));
                for (int k = 0; k < 16; ++k) _mm512_store_ps(rows[k] + d0, r[k]);
            }
            /* Each row's values through registers, four at a time: as a
             * plain loop GCC made the copy a `rep movsq` (an inline memcpy),
             * slow for 256 bytes; that copy held 60 % of this function's
             * samples (BERT-large f32). */
            for (int k = 0; k < 16; ++k) {
                float *row = dst + (q0 + k) * ld + e0;
                int64_t d0 = 0;
                for (; d0 + 64 <= ne; d0 += 64) {
                    const __m512 v0 = _mm512_load_ps(rows[k] + d0), v1 = _mm512_load_ps(rows[k] + d0 + 16);
                    const __m512 v2 = _mm512_load_ps(rows[k] + d0 + 32), v3 = _mm512_load_ps(rows[k] + d0 + 48);
                    _mm512_storeu_ps(row + d0, v0), _mm512_storeu_ps(row + d0 + 16, v1);
                    _mm512_storeu_ps(row + d0 + 32, v2), _mm512_storeu_ps(row + d0 + 48, v3);
                }
                for (; d0 < ne; d0 += 16) _mm512_storeu_ps(row + d0, _mm512_load_ps(rows[k] + d0));
            }
        }
    }
    /* Tails: d past the last 16 of the full column groups, then the columns past them. */
    for (int q = 0; q < nq; ++q) {
        const float s = scale ? scale[q] : 1.f;
        for (int64_t d = q < qfull ? dfull : 0; d < n; ++d) dst[q * ld + d] = scale ? o[d * 32 + q] * s : o[d * 32 + q];
    }
}

/* Sixteen rows at a time transposed in registers; rows past `rows` read as
 * zeros, lanes past R not stored. */
static void pack_t_avx512(const float *src, int64_t ld, int rows, int64_t k, int R, float scale, float *dst) {
    const int64_t kfull = k / 16 * 16;
    const __m512 sc = _mm512_set1_ps(scale);
    /* The caller packs the rows after these next (strips of K, query blocks). */
    for (int i = 0; i < rows; ++i) prefetch_row(src + (rows + i) * ld, k, 0);
    for (int r0 = 0; r0 < R; r0 += 16) {
        const int lanes = R - r0 < 16 ? R - r0 : 16;
        const __mmask16 keep = (__mmask16)((1u << lanes) - 1);
        for (int64_t k0 = 0; k0 < kfull; k0 += 16) {
            __m512 r[16];
            for (int i = 0; i < 16; ++i)
                r[i] = r0 + i < rows ? _mm512_mul_ps(_mm512_loadu_ps(src + (r0 + i) * ld + k0), sc)
                                     : _mm512_setzero_ps();
            pt_avx512_transpose16_ps(r);
            /* Masked stores are slow: whole registers in ascending order,
             * so the lanes past R land where the next store writes; only the
             * strip's very last one is masked. */
            for (int c = 0; c < 16; ++c) {
                if (lanes < 16 && k0 + c + 1 == k) _mm512_mask_storeu_ps(dst + (k0 + c) * R + r0, keep, r[c]);
                else _mm512_storeu_ps(dst + (k0 + c) * R + r0, r[c]);
            }
        }
    }
    for (int64_t kk = kfull; kk < k; ++kk)
        for (int r = 0; r < R; ++r) dst[kk * R + r] = r < rows ? src[r * ld + kk] * scale : 0.f;
}

static void pack_rows_avx512(const float *src, int64_t ld, int64_t nk, int64_t n, int R, float *dst, size_t strip) {
    if (R > 16) {
        sd_panel_pack_rows(src, ld, nk, n, R, dst, strip);
        return;
    }
    const int64_t nstrips = (n + R - 1) / R;
    const __mmask16 full = (__mmask16)((1u << R) - 1);
    /* Row by row: each source row is read once while it is in cache. */
    for (int64_t j = 0; j < nk; ++j) {
        const float *row = src + j * ld;
        prefetch_row(row + 8 * ld, n, 0);
        for (int64_t s = 0; s < nstrips; ++s) {
            const int64_t c0 = s * R;
            /* Whole loads inside the row; whole stores but for the last
             * key, whose lanes past R would land on the next strip's
             * first key (written already). */
            const __mmask16 in = n - c0 >= R ? full : (__mmask16)((1u << (n - c0)) - 1);
            const __m512 x = n - c0 >= 16 ? _mm512_loadu_ps(row + c0) : _mm512_maskz_loadu_ps(in, row + c0);
            if (j + 1 < nk) _mm512_storeu_ps(dst + s * strip + j * R, x);
            else _mm512_mask_storeu_ps(dst + s * strip + j * R, full, x);
        }
    }
}

/* scores_max: the f32 microkernel's 12 x 32 tile (24 accumulators, the
 * same products summed in the same order) with max_rows done on the tile
 * in registers, so the scores are stored once rather than stored, then
 * read and rewritten by max_rows. */
#define SC_MR 12
#define SC_DECL(i) __m512 c##i##_0 = _mm512_setzero_ps(), c##i##_1 = _mm512_setzero_ps();
#define SC_STEP(i)                                    \
    {                                                 \
        const __m512 ai = _mm512_set1_ps(a[i]);       \
        c##i##_0 = _mm512_fmadd_ps(ai, b0, c##i##_0); \
        c##i##_1 = _mm512_fmadd_ps(ai, b1, c##i##_1); \
    }
/* max(x, m) keeps m where x is NaN (vmaxps returns its second operand). */
#define SC_STORE(i)                                                      \
    if (i < rows) {                                                      \
        if (add) {                                                       \
            const __m512 ai = _mm512_set1_ps(add[k + i]);                \
            c##i##_0 = _mm512_add_ps(c##i##_0, ai);                      \
            c##i##_1 = _mm512_add_ps(c##i##_1, ai);                      \
        }                                                                \
        _mm512_storeu_ps(x + (k + i) * 32, c##i##_0);                    \
        _mm512_storeu_ps(x + (k + i) * 32 + 16, c##i##_1);               \
        m0 = _mm512_max_ps(c##i##_0, m0), m1 = _mm512_max_ps(c##i##_1, m1); \
    }

static void scores_max_avx512(int64_t D, const float *kpan, int64_t nk, const float *qpan, const float *add, float *x,
                              float *m) {
    __m512 m0 = _mm512_loadu_ps(m), m1 = _mm512_loadu_ps(m + 16);
    for (int64_t k = 0; k < nk; k += SC_MR) {
        const int rows = nk - k < SC_MR ? (int)(nk - k) : SC_MR;
        const float *a = kpan + k * D, *b = qpan;
        SC_DECL(0) SC_DECL(1) SC_DECL(2) SC_DECL(3) SC_DECL(4) SC_DECL(5)
        SC_DECL(6) SC_DECL(7) SC_DECL(8) SC_DECL(9) SC_DECL(10) SC_DECL(11)
        for (int64_t d = 0; d < D; ++d, a += SC_MR, b += 32) {
            const __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16);
            SC_STEP(0) SC_STEP(1) SC_STEP(2) SC_STEP(3) SC_STEP(4) SC_STEP(5)
            SC_STEP(6) SC_STEP(7) SC_STEP(8) SC_STEP(9) SC_STEP(10) SC_STEP(11)
        }
        SC_STORE(0) SC_STORE(1) SC_STORE(2) SC_STORE(3) SC_STORE(4) SC_STORE(5)
        SC_STORE(6) SC_STORE(7) SC_STORE(8) SC_STORE(9) SC_STORE(10) SC_STORE(11)
    }
    _mm512_storeu_ps(m, m0), _mm512_storeu_ps(m + 16, m1);
}

const pt_sdpa_panel_ops pt_sdpa_panel_avx512 = {
    "avx512",        PT_ISA_AVX512,        max_rows_avx512, exp_rows_avx512, scale_rows_avx512,
    add_cols_avx512, transpose_out_avx512, pack_t_avx512,   pack_rows_avx512, scores_max_avx512,
    SC_MR,           32};
