/* AVX-512 permuting copy (permute_x86.h).  A block is 64 bytes on each side
 * (16 x 16 four-byte, 32 x 32 two-byte, 64 x 64 one-byte elements): its
 * source rows are transposed as 16 x 16 dwords, 16 rows at a time, then
 * narrower elements are sorted out of the dwords, so that every store writes
 * one whole 64-byte row piece of dst.  Edge blocks load and store under
 * masks.  A tile is TILE_A_BLOCKS x TILE_B_BLOCKS blocks; while one tile
 * is copied, the source of the next one is prefetched block by block into
 * L2 (strided source rows get little from the hardware prefetchers; with a
 * power-of-two row stride the rows share a few L1 sets, so L1 would lose
 * them before their turn). */
#include <immintrin.h>

#include "kernels/x86/permute_x86.h"

#define BLOCK_BYTES 64
/* Tiles long along a (1 KiB runs of dst rows) and short along b (two lines
 * of each source row): dst runs counted more than source runs here (f32
 * 4096 x 4096 on one thread: 16 x 2 blocks 80% of a copy, 4 x 4 68%,
 * 2 x 8 60%). */
#define TILE_A_BLOCKS 16
#define TILE_B_BLOCKS 2
/* How far ahead of the copy the rows path prefetches its source. */
#define ROWS_PREFETCH_BYTES 4096

enum { STORE_MASKED, STORE_FULL, STORE_STREAM };

static inline __mmask64 low_bytes(int64_t n) { return n >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << n) - 1; }

static inline int64_t min64(int64_t x, int64_t y) { return x < y ? x : y; }

/* One 64-byte row piece of dst: a whole line streamed, a whole piece stored,
 * or its first bytes (mask m) stored. */
static inline void put(char *d, __m512i v, __mmask64 m, int mode) {
    if (mode == STORE_STREAM) _mm512_stream_si512((void *)d, v);
    else if (mode == STORE_FULL) _mm512_storeu_si512(d, v);
    else _mm512_mask_storeu_epi8(d, m, v);
}

/* r[i] = the bytes (mask m) of source row i < rows, zero past them. */
static inline void load16(__m512i r[16], const char *s, int64_t ss, int64_t rows, __mmask64 m) {
    for (int i = 0; i < 16; ++i) r[i] = i < rows ? _mm512_maskz_loadu_epi8(m, s + i * ss) : _mm512_setzero_si512();
}

/* out[L] = the 128-bit lanes L of x0, x1, x2, x3 (a 4 x 4 transpose of lanes). */
static inline void transpose_lanes(__m512i x0, __m512i x1, __m512i x2, __m512i x3, __m512i out[4]) {
    const __m512i u0 = _mm512_shuffle_i32x4(x0, x1, 0x88), u1 = _mm512_shuffle_i32x4(x0, x1, 0xDD);
    const __m512i v0 = _mm512_shuffle_i32x4(x2, x3, 0x88), v1 = _mm512_shuffle_i32x4(x2, x3, 0xDD);
    out[0] = _mm512_shuffle_i32x4(u0, v0, 0x88);
    out[1] = _mm512_shuffle_i32x4(u1, v1, 0x88);
    out[2] = _mm512_shuffle_i32x4(u0, v0, 0xDD);
    out[3] = _mm512_shuffle_i32x4(u1, v1, 0xDD);
}

/* In place: r[j] becomes dword j of rows 0..15 (dword i of r[j] from r[i]). */
static inline void transpose_dwords(__m512i r[16]) {
    __m512i t[16];
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
    }
    /* r[g + c]: in each 128-bit lane L, dword 4L + c of rows g..g+3. */
    for (int g = 0; g < 16; g += 4) {
        r[g] = _mm512_unpacklo_epi64(t[g], t[g + 2]);
        r[g + 1] = _mm512_unpackhi_epi64(t[g], t[g + 2]);
        r[g + 2] = _mm512_unpacklo_epi64(t[g + 1], t[g + 3]);
        r[g + 3] = _mm512_unpackhi_epi64(t[g + 1], t[g + 3]);
    }
    /* Dword 4L + c of all rows: lanes L of r[c], r[4 + c], r[8 + c], r[12 + c]. */
    for (int c = 0; c < 4; ++c) {
        __m512i col[4];
        transpose_lanes(r[c], r[4 + c], r[8 + c], r[12 + c], col);
        for (int L = 0; L < 4; ++L) t[4 * L + c] = col[L];
    }
    for (int j = 0; j < 16; ++j) r[j] = t[j];
}

/* Block of 16 x 16 four-byte elements: la source rows of lb elements. */
static void block4(const char *s, char *d, int64_t ssa, int64_t dsb, int64_t la, int64_t lb, int mode) {
    __m512i r[16];
    load16(r, s, ssa, la, low_bytes(4 * lb));
    transpose_dwords(r);
    const __mmask64 m = low_bytes(4 * la);
    for (int j = 0; j < lb; ++j) put(d + j * dsb, r[j], m, mode);
}

/* Block of 32 x 32 two-byte elements, as two groups of 16 source rows. */
static void block2(const char *s, char *d, int64_t ssa, int64_t dsb, int64_t la, int64_t lb, int mode) {
    /* Even halves of the dwords to the low 256 bits, odd ones to the high. */
    const __m512i split = _mm512_set_epi16(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1, 30, 28, 26, 24,
                                           22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    const __mmask64 lm = low_bytes(2 * lb);
    __m512i g[2][16];
    for (int h = 0; h < 2; ++h) {
        load16(g[h], s + 16 * h * ssa, ssa, la - 16 * h, lm);
        if (la <= 16 * h) continue; /* zeros: never stored */
        transpose_dwords(g[h]);
        for (int j = 0; j < 16; ++j) g[h][j] = _mm512_permutexvar_epi16(split, g[h][j]);
    }
    /* g[h][j]: element 2j of rows 16h.. in the low half, element 2j + 1 in the high half. */
    const __mmask64 m = low_bytes(2 * la);
    for (int j = 0; 2 * j < lb; ++j) {
        put(d + 2 * j * dsb, _mm512_shuffle_i64x2(g[0][j], g[1][j], 0x44), m, mode);
        if (2 * j + 1 < lb) put(d + (2 * j + 1) * dsb, _mm512_shuffle_i64x2(g[0][j], g[1][j], 0xEE), m, mode);
    }
}

/* Block of 64 x 64 one-byte elements, as four groups of 16 source rows. */
static void block1(const char *s, char *d, int64_t ssa, int64_t dsb, int64_t la, int64_t lb, int mode) {
    /* Byte k of each dword of a 128-bit lane to dword k of the lane, then
     * dword k of every lane to 128-bit lane k. */
    const __m512i bytes = _mm512_broadcast_i32x4(_mm_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15));
    const __m512i lanes = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    const __mmask64 lm = low_bytes(lb);
    __m512i g[4][16];
    for (int h = 0; h < 4; ++h) {
        load16(g[h], s + 16 * h * ssa, ssa, la - 16 * h, lm);
        if (la <= 16 * h) continue;
        transpose_dwords(g[h]);
        for (int j = 0; j < 16; ++j) g[h][j] = _mm512_permutexvar_epi32(lanes, _mm512_shuffle_epi8(g[h][j], bytes));
    }
    /* Lane k of g[h][j]: element 4j + k of rows 16h..16h+15. */
    const __mmask64 m = low_bytes(la);
    for (int j = 0; 4 * j < lb; ++j) {
        __m512i row[4];
        transpose_lanes(g[0][j], g[1][j], g[2][j], g[3][j], row);
        for (int k = 0; k < 4 && 4 * j + k < lb; ++k) put(d + (4 * j + k) * dsb, row[k], m, mode);
    }
}

/* Tile extents in elements: along a no more blocks than the plane has. */
static void tile_shape(size_t elem, int64_t na, int64_t *ta, int64_t *tb) {
    const int64_t be = BLOCK_BYTES / (int64_t)elem, blocks_a = (na + be - 1) / be;
    *ta = (blocks_a < TILE_A_BLOCKS ? blocks_a : TILE_A_BLOCKS) * be;
    *tb = TILE_B_BLOCKS * be;
}

int64_t pt_permute_tiles_avx512(size_t elem, int64_t na, int64_t nb) {
    int64_t ta, tb;
    tile_shape(elem, na, &ta, &tb);
    return (na + ta - 1) / ta * ((nb + tb - 1) / tb);
}

void pt_permute_plane_avx512(const char *src, char *dst, size_t elem, int64_t na, int64_t nb, int64_t ssa,
                             int64_t dsb, int64_t t0, int64_t t1, bool stream, const char *next) {
    int64_t ta, tb;
    tile_shape(elem, na, &ta, &tb);
    const int64_t be = BLOCK_BYTES / (int64_t)elem, es = (int64_t)elem, tiles_b = (nb + tb - 1) / tb;
    /* Blocks start 64 bytes apart along a dst row: all on line boundaries or none. */
    const bool lines = stream && (uintptr_t)dst % 64 == 0 && dsb % 64 == 0;
    void (*block)(const char *, char *, int64_t, int64_t, int64_t, int64_t, int) =
        elem == 4 ? block4 : elem == 2 ? block2 : block1;
    for (int64_t t = t0; t < t1; ++t) {
        const int64_t a0 = t / tiles_b * ta, b0 = t % tiles_b * tb;
        const int64_t la = min64(ta, na - a0), lb = min64(tb, nb - b0);
        const char *pf = NULL; /* the next tile's source, its extents */
        int64_t pa = 0, pb = 0;
        if (t + 1 < t1) {
            const int64_t a1 = (t + 1) / tiles_b * ta, b1 = (t + 1) % tiles_b * tb;
            pf = src + a1 * ssa + b1 * es, pa = min64(ta, na - a1), pb = min64(tb, nb - b1);
        } else if (next) {
            pf = next, pa = min64(ta, na), pb = min64(tb, nb);
        }
        for (int64_t i = 0; i < la; i += be) {
            const int64_t bla = min64(be, la - i);
            const int mode = bla < be ? STORE_MASKED : lines ? STORE_STREAM : STORE_FULL;
            for (int64_t j = 0; j < lb; j += be) {
                if (pf && i < pa && j < pb) {
                    const char *p = pf + i * ssa + j * es;
                    for (int64_t r = 0, n = min64(be, pa - i); r < n; ++r) _mm_prefetch(p + r * ssa, _MM_HINT_T1);
                }
                block(src + (a0 + i) * ssa + (b0 + j) * es, dst + (a0 + i) * es + (b0 + j) * dsb, ssa, dsb, bla,
                      min64(be, lb - j), mode);
            }
        }
    }
}

/* A prefetch running a fixed distance ahead of the rows path's copy. */
typedef struct {
    const char *src;
    int64_t ss, rows, row;
    size_t bytes, at;
} rows_prefetch;

static inline void rows_prefetch_step(rows_prefetch *q) {
    if (q->row >= q->rows) return;
    _mm_prefetch(q->src + q->row * q->ss + (int64_t)q->at, _MM_HINT_T0);
    q->at += 64;
    if (q->at >= q->bytes) q->at = 0, ++q->row;
}

void pt_permute_rows_avx512(const char *src, char *dst, int64_t rows, size_t bytes, int64_t ss, int64_t ds,
                            bool stream) {
    rows_prefetch q = {.src = src, .ss = ss, .rows = rows, .bytes = bytes};
    for (int k = 0; k < ROWS_PREFETCH_BYTES / 64; ++k) rows_prefetch_step(&q);
    for (int64_t r = 0; r < rows; ++r) {
        const char *s = src + r * ss;
        char *d = dst + r * ds;
        size_t i = 0;
        if (stream) {
            const size_t head = (64 - (uintptr_t)d % 64) % 64;
            if (head) {
                i = head < bytes ? head : bytes;
                _mm512_mask_storeu_epi8(d, low_bytes((int64_t)i), _mm512_maskz_loadu_epi8(low_bytes((int64_t)i), s));
            }
            for (; i + 64 <= bytes; i += 64) {
                rows_prefetch_step(&q);
                _mm512_stream_si512((void *)(d + i), _mm512_loadu_si512(s + i));
            }
        } else {
            for (; i + 64 <= bytes; i += 64) {
                rows_prefetch_step(&q);
                _mm512_storeu_si512(d + i, _mm512_loadu_si512(s + i));
            }
        }
        if (i < bytes) {
            const __mmask64 m = low_bytes((int64_t)(bytes - i));
            _mm512_mask_storeu_epi8(d + i, m, _mm512_maskz_loadu_epi8(m, s + i));
        }
    }
}

void pt_permute_fence_avx512(void) { _mm_sfence(); }
