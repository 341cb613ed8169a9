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

#include "kernels/x86/avx512_transpose.h"
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

/* The block steps inline into each block function, so that the shapes of
 * whole blocks are constants there. */
#define PT_PERMUTE_INLINE static inline __attribute__((always_inline))

enum { STORE_MASKED, STORE_FULL, STORE_STREAM };

static inline __mmask64 low_bytes(int64_t n) { return n >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << n) - 1; }

static inline int64_t min64(int64_t x, int64_t y) { return x < y ? x : y; }

/* Bytes [from, to) of a 64-byte vector. */
static inline __mmask64 byte_range(int64_t from, int64_t to) { return low_bytes(to) & ~low_bytes(from); }

/* A block: elements [c0, c1) of source rows s + i·ssa, i in [r0, r1) (of
 * 64 / elem each way), go to dst row pieces d + j·dsb, j in [c0, c1), at
 * element i.  s and d are where row 0 and element 0 would be: outside the
 * ranges they may lie outside the tensors, never read or written there. */
typedef struct {
    uintptr_t s, d;
    int64_t ssa, dsb, r0, r1, c0, c1;
    int mode;
} block_at;

/* Row piece j of dst: a whole line streamed, a whole piece stored, or the
 * bytes of rows [r0, r1) stored. */
PT_PERMUTE_INLINE void put(block_at k, int64_t j, __m512i v, size_t elem) {
    char *d = (char *)(k.d + (uintptr_t)(j * k.dsb));
    if (k.mode == STORE_STREAM) _mm512_stream_si512((void *)d, v);
    else if (k.mode == STORE_FULL) _mm512_storeu_si512(d, v);
    else _mm512_mask_storeu_epi8(d, byte_range(k.r0 * (int64_t)elem, k.r1 * (int64_t)elem), v);
}

/* r[i] = elements [c0, c1) of source row g + i where that row is in
 * [r0, r1), zero elsewhere. */
PT_PERMUTE_INLINE void load16(__m512i r[16], block_at k, int64_t g, size_t elem, bool whole) {
    if (whole) {
        for (int64_t i = 0; i < 16; ++i) r[i] = _mm512_loadu_si512((const void *)(k.s + (uintptr_t)((g + i) * k.ssa)));
        return;
    }
    const __mmask64 m = byte_range(k.c0 * (int64_t)elem, k.c1 * (int64_t)elem);
    for (int64_t i = 0; i < 16; ++i) {
        const bool in = g + i >= k.r0 && g + i < k.r1;
        r[i] = in ? _mm512_maskz_loadu_epi8(m, (const void *)(k.s + (uintptr_t)((g + i) * k.ssa)))
                  : _mm512_setzero_si512();
    }
}

/* out[L] = the 128-bit lanes L of x0, x1, x2, x3 (a 4 x 4 transpose of lanes). */
PT_PERMUTE_INLINE void transpose_lanes(__m512i x0, __m512i x1, __m512i x2, __m512i x3, __m512i out[4]) {
    const __m512i u0 = _mm512_shuffle_i32x4(x0, x1, 0x88), u1 = _mm512_shuffle_i32x4(x0, x1, 0xDD);
    const __m512i v0 = _mm512_shuffle_i32x4(x2, x3, 0x88), v1 = _mm512_shuffle_i32x4(x2, x3, 0xDD);
    out[0] = _mm512_shuffle_i32x4(u0, v0, 0x88);
    out[1] = _mm512_shuffle_i32x4(u1, v1, 0x88);
    out[2] = _mm512_shuffle_i32x4(u0, v0, 0xDD);
    out[3] = _mm512_shuffle_i32x4(u1, v1, 0xDD);
}

/* Block of 16 x 16 four-byte elements; `whole`: all of it (a constant
 * once inlined, so that whole blocks run without the edge tests). */
PT_PERMUTE_INLINE void block4_at(block_at k, bool whole) {
    __m512i r[16];
    load16(r, k, 0, 4, whole);
    pt_avx512_transpose16(r);
    for (int64_t j = whole ? 0 : k.c0; j < (whole ? 16 : k.c1); ++j) put(k, j, r[j], 4);
}

/* Block of 32 x 32 two-byte elements, as two groups of 16 source rows. */
PT_PERMUTE_INLINE void block2_at(block_at k, bool whole) {
    /* Even halves of the dwords to the low 256 bits, odd ones to the high. */
    const __m512i split = _mm512_set_epi16(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1, 30, 28, 26, 24,
                                           22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    __m512i g[2][16];
    for (int h = 0; h < 2; ++h) {
        load16(g[h], k, 16 * h, 2, whole);
        if (!whole && (k.r1 <= 16 * h || k.r0 >= 16 * (h + 1))) continue; /* zeros: never stored */
        pt_avx512_transpose16(g[h]);
        for (int j = 0; j < 16; ++j) g[h][j] = _mm512_permutexvar_epi16(split, g[h][j]);
    }
    /* g[h][j]: element 2j of rows 16h.. in the low half, element 2j + 1 in the high half. */
    if (whole) k.c0 = 0, k.c1 = 32;
    for (int64_t j = k.c0 / 2; 2 * j < k.c1; ++j) {
        if (2 * j >= k.c0) put(k, 2 * j, _mm512_shuffle_i64x2(g[0][j], g[1][j], 0x44), 2);
        if (2 * j + 1 < k.c1) put(k, 2 * j + 1, _mm512_shuffle_i64x2(g[0][j], g[1][j], 0xEE), 2);
    }
}

/* Block of 64 x 64 one-byte elements, as four groups of 16 source rows. */
PT_PERMUTE_INLINE void block1_at(block_at k, bool whole) {
    /* Byte k of each dword of a 128-bit lane to dword k of the lane, then
     * dword k of every lane to 128-bit lane k. */
    const __m512i bytes = _mm512_broadcast_i32x4(_mm_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15));
    const __m512i lanes = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    __m512i g[4][16];
    for (int h = 0; h < 4; ++h) {
        load16(g[h], k, 16 * h, 1, whole);
        if (!whole && (k.r1 <= 16 * h || k.r0 >= 16 * (h + 1))) continue;
        pt_avx512_transpose16(g[h]);
        for (int j = 0; j < 16; ++j) g[h][j] = _mm512_permutexvar_epi32(lanes, _mm512_shuffle_epi8(g[h][j], bytes));
    }
    /* Lane k of g[h][j]: element 4j + k of rows 16h..16h+15. */
    if (whole) k.c0 = 0, k.c1 = 64;
    for (int64_t j = k.c0 / 4; 4 * j < k.c1; ++j) {
        __m512i row[4];
        transpose_lanes(g[0][j], g[1][j], g[2][j], g[3][j], row);
        for (int64_t q = 4 * j < k.c0 ? k.c0 - 4 * j : 0; q < 4 && 4 * j + q < k.c1; ++q)
            put(k, 4 * j + q, row[q], 1);
    }
}

static void block4(const block_at *k, bool whole) { whole ? block4_at(*k, true) : block4_at(*k, false); }
static void block2(const block_at *k, bool whole) { whole ? block2_at(*k, true) : block2_at(*k, false); }
static void block1(const block_at *k, bool whole) { whole ? block1_at(*k, true) : block1_at(*k, false); }

/* ---- output that runs on contiguously in dst ---- */

/* Such output is built in an L1 stage and leaves it in whole lines of dst,
 * streamed: a line written in two parts by two stores (tiles that end
 * inside a line) would be read first by the cached stores that partial
 * lines take.  The stage leaves after each group of dst rows, so that the
 * stores spread among the loads (16 KiB bursts: NCHW -> NHWC 5.2 ms
 * instead of 4.6 on one thread). */
#define STAGE_BYTES 16384

typedef struct {
    uintptr_t at;      /* dst address of stage[0], a line boundary */
    size_t skip, fill; /* stage[skip, fill) holds output (skip: before dst's start, only in the first line) */
    _Alignas(64) char stage[STAGE_BYTES];
} line_writer;

static void writer_start(line_writer *w, char *dst) {
    w->skip = w->fill = (uintptr_t)dst % 64;
    w->at = (uintptr_t)dst - w->skip;
}

/* Writes out the whole lines of the stage (every byte when `last`) and moves
 * what is left of a line to its start. */
static void writer_flush(line_writer *w, bool last) {
    const size_t end = last ? w->fill : w->fill / 64 * 64;
    for (size_t i = 0; i < end; i += 64) {
        const __m512i v = _mm512_load_si512((const void *)(w->stage + i));
        char *d = (char *)(w->at + i);
        const size_t from = i == 0 ? w->skip : 0, to = end - i < 64 ? end - i : 64;
        if (from == 0 && to == 64) _mm512_stream_si512((void *)d, v);
        else _mm512_mask_storeu_epi8(d, byte_range((int64_t)from, (int64_t)to), v);
    }
    if (end == 0) return; /* not a whole line yet: the first one keeps its skip */
    if (!last && end < w->fill) _mm512_store_si512((void *)w->stage, _mm512_load_si512((const void *)(w->stage + end)));
    w->at += end, w->fill -= end, w->skip = 0;
}

/* Tile extents in elements.  The block grid follows dst's lines along a
 * and the source's lines along b, so a plane spans up to be - 1 more
 * elements of blocks each way: tiles are counted for the worst case (the
 * last ones may be empty). */
static void tile_shape(size_t elem, int64_t na, int64_t *ta, int64_t *tb) {
    const int64_t be = BLOCK_BYTES / (int64_t)elem, blocks_a = (na + 2 * (be - 1)) / be;
    *ta = (blocks_a < TILE_A_BLOCKS ? blocks_a : TILE_A_BLOCKS) * be;
    *tb = TILE_B_BLOCKS * be;
}

int64_t pt_permute_tiles_avx512(size_t elem, int64_t na, int64_t nb) {
    int64_t ta, tb;
    tile_shape(elem, na, &ta, &tb);
    const int64_t pad = BLOCK_BYTES / (int64_t)elem - 1;
    return (na + pad + ta - 1) / ta * ((nb + pad + tb - 1) / tb);
}

/* Elements before `p` since its 64-byte line began, when rows `stride`
 * bytes apart all begin that far into a line; else 0. */
static inline int64_t line_shift(const char *p, int64_t stride, int64_t es) {
    return stride % 64 == 0 && (uintptr_t)p % (uintptr_t)es == 0 ? (int64_t)((uintptr_t)p % 64) / es : 0;
}

/* Prefetches source rows [r0, r1) (virtual) at virtual column c of a
 * source whose virtual origin is ps (0: none), the columns before sb
 * clamped to sb. */
PT_PERMUTE_INLINE void prefetch_rows(uintptr_t ps, int64_t r0, int64_t r1, int64_t c, int64_t sb, int64_t ssa,
                                     int64_t es) {
    for (int64_t r = r0; ps && r < r1; ++r)
        _mm_prefetch((const char *)(ps + (uintptr_t)(r * ssa + (c > sb ? c : sb) * es)), _MM_HINT_T1);
}

/* Tiles [t0, t1) of a plane whose dst rows follow one another (dsb = na
 * elements) and fit one tile along a: each group of be dst rows is
 * transposed into a line writer, so that dst leaves in whole lines wherever
 * it starts.  Parameters as pt_permute_plane_avx512, with the source's
 * column shift sb and the tiles' extent tb along b. */
static void plane_staged(const char *src, char *dst, size_t elem, int64_t na, int64_t nb, int64_t ssa, int64_t dsb,
                         int64_t t0, int64_t t1, const char *next, int64_t sb, int64_t tb) {
    const int64_t be = BLOCK_BYTES / (int64_t)elem, es = (int64_t)elem, vb = nb + sb;
    const int64_t tiles_b = (nb + be - 1 + tb - 1) / tb;
    const uintptr_t s0 = (uintptr_t)src - (uintptr_t)(sb * es);
    void (*block)(const block_at *, bool) = elem == 4 ? block4 : elem == 2 ? block2 : block1;
    line_writer w;
    bool started = false;
    for (int64_t t = t0; t < t1; ++t) {
        const int64_t u0 = t % tiles_b * tb;
        if (t / tiles_b > 0 || u0 >= vb) continue; /* tiles past the one along a are empty here */
        uintptr_t ps = 0;
        int64_t pu = 0;
        if (t + 1 < t1 && (t + 1) / tiles_b == 0) ps = s0, pu = (t + 1) % tiles_b * tb;
        else if (next) ps = (uintptr_t)next - (uintptr_t)(sb * es);
        for (int64_t j = 0; j < tb && u0 + j < vb; j += be) {
            const int64_t u = u0 + j, c0 = u < sb ? sb - u : 0, c1 = min64(be, vb - u);
            char *first = dst + (u + c0 - sb) * dsb; /* dst of the group's first row */
            if (!started) writer_start(&w, first), started = true;
            /* Stage address of dst address x: w.stage + (x - w.at). */
            const uintptr_t to_stage = (uintptr_t)w.stage - w.at;
            for (int64_t i = 0; i < na; i += be) {
                prefetch_rows(ps, i, min64(i + be, na), pu + j, sb, ssa, es);
                block_at k = {.s = s0 + (uintptr_t)(i * ssa + u * es),
                              .d = (uintptr_t)dst + to_stage + (uintptr_t)(i * es + (u - sb) * dsb),
                              .ssa = ssa,
                              .dsb = dsb,
                              .r0 = 0,
                              .r1 = min64(be, na - i),
                              .c0 = c0,
                              .c1 = c1};
                k.mode = k.r1 == be ? STORE_FULL : STORE_MASKED;
                block(&k, k.r1 == be && c0 == 0 && c1 == be);
            }
            w.fill += (size_t)((c1 - c0) * dsb);
            writer_flush(&w, false); /* at once: stores spread among the loads */
        }
    }
    if (started) writer_flush(&w, true);
}

void pt_permute_plane_avx512(const char *src, char *dst, size_t elem, int64_t na, int64_t nb, int64_t ssa,
                             int64_t dsb, int64_t t0, int64_t t1, bool stream, const char *next) {
    int64_t ta, tb;
    tile_shape(elem, na, &ta, &tb);
    const int64_t be = BLOCK_BYTES / (int64_t)elem, es = (int64_t)elem;
    if (stream && dsb == na * es && na <= ta && be * dsb + 64 <= STAGE_BYTES && ((uintptr_t)dst % 64 || dsb % 64)) {
        plane_staged(src, dst, elem, na, nb, ssa, dsb, t0, t1, next, line_shift(src, ssa, es), tb);
        return;
    }
    /* Virtual coordinates v = a + sa, u = b + sb put the blocks' dst row
     * pieces and source row pieces on line boundaries where the strides
     * allow; the first blocks then start sa rows, sb columns in. */
    const int64_t sa = line_shift(dst, dsb, es), sb = line_shift(src, ssa, es), va = na + sa, vb = nb + sb;
    const bool lines = stream && dsb % 64 == 0 && ((uintptr_t)dst - (uintptr_t)(sa * es)) % 64 == 0;
    const int64_t tiles_b = (nb + be - 1 + tb - 1) / tb;
    const uintptr_t s0 = (uintptr_t)src - (uintptr_t)(sa * ssa + sb * es);
    const uintptr_t d0 = (uintptr_t)dst - (uintptr_t)(sa * es + sb * dsb);
    void (*block)(const block_at *, bool) = elem == 4 ? block4 : elem == 2 ? block2 : block1;
    for (int64_t t = t0; t < t1; ++t) {
        const int64_t v0 = t / tiles_b * ta, u0 = t % tiles_b * tb;
        if (v0 >= va || u0 >= vb) continue;
        /* The next tile's source (virtual rows from pv, columns from pu), prefetched alongside. */
        uintptr_t ps = 0;
        int64_t pv = 0, pu = 0;
        if (t + 1 < t1) ps = s0, pv = (t + 1) / tiles_b * ta, pu = (t + 1) % tiles_b * tb;
        else if (next) ps = (uintptr_t)next - (uintptr_t)(sa * ssa + sb * es);
        for (int64_t i = 0; i < ta && v0 + i < va; i += be) {
            const int64_t v = v0 + i, pr0 = pv + i > sa ? pv + i : sa, pr1 = min64(pv + i + be, va);
            block_at k = {.ssa = ssa, .dsb = dsb, .r0 = v < sa ? sa - v : 0, .r1 = min64(be, va - v)};
            for (int64_t j = 0; j < tb && u0 + j < vb; j += be) {
                const int64_t u = u0 + j;
                if (pu + j < vb) prefetch_rows(ps, pr0, pr1, pu + j, sb, ssa, es);
                k.s = s0 + (uintptr_t)(v * ssa + u * es), k.d = d0 + (uintptr_t)(v * es + u * dsb);
                k.c0 = u < sb ? sb - u : 0, k.c1 = min64(be, vb - u);
                const bool rows = k.r0 == 0 && k.r1 == be;
                k.mode = !rows ? STORE_MASKED : lines ? STORE_STREAM : STORE_FULL;
                block(&k, rows && k.c0 == 0 && k.c1 == be);
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

/* d[0, n) = s[0, n), a prefetch step per line. */
PT_PERMUTE_INLINE void copy_bytes(char *d, const char *s, size_t n, rows_prefetch *q) {
    size_t i = 0;
    for (; i + 64 <= n; i += 64) {
        rows_prefetch_step(q);
        _mm512_storeu_si512(d + i, _mm512_loadu_si512(s + i));
    }
    if (i < n) {
        const __mmask64 m = low_bytes((int64_t)(n - i));
        _mm512_mask_storeu_epi8(d + i, m, _mm512_maskz_loadu_epi8(m, s + i));
    }
}

void pt_permute_rows_avx512(const char *src, char *dst, int64_t rows, size_t bytes, int64_t ss, int64_t ds,
                            bool stream) {
    rows_prefetch q = {.src = src, .ss = ss, .rows = rows, .bytes = bytes};
    for (int k = 0; k < ROWS_PREFETCH_BYTES / 64; ++k) rows_prefetch_step(&q);
    for (int64_t r = 0; r < rows; ++r) {
        const char *s = src + r * ss;
        char *d = dst + r * ds;
        if (!stream) {
            copy_bytes(d, s, bytes, &q);
            continue;
        }
        size_t i = (64 - (uintptr_t)d % 64) % 64; /* up to dst's first line boundary */
        i = i < bytes ? i : bytes;
        if (i) _mm512_mask_storeu_epi8(d, low_bytes((int64_t)i), _mm512_maskz_loadu_epi8(low_bytes((int64_t)i), s));
        for (; i + 64 <= bytes; i += 64) {
            rows_prefetch_step(&q);
            _mm512_stream_si512((void *)(d + i), _mm512_loadu_si512(s + i));
        }
        if (i < bytes) {
            const __mmask64 m = low_bytes((int64_t)(bytes - i));
            _mm512_mask_storeu_epi8(d + i, m, _mm512_maskz_loadu_epi8(m, s + i));
        }
    }
}

void pt_permute_fence_avx512(void) { _mm_sfence(); }
