/* AMX microkernels of the BF16 and U8S8 kinds (contract: pt_gemm_ukr_fn in
 * kernels/gemm/gemm.h): 32 x 32 tiles of C as four 16 x 16 accumulator
 * tiles, k in steps of 16 k groups (32 bf16 or 64 u8 / s8 values).
 *
 * They take the engine's usual panels ([kc/kg][R][kg]), so every user of a
 * kind's default row (the driver, SDPA, the gated MLP, convolution) runs on
 * them unchanged.  A B panel is already the tile layout AMX wants for its
 * second operand (k groups by rows, columns' groups side by side), read with
 * a row stride of 32 groups.  An A tile needs each row's k groups side by
 * side instead: 16 x 16 transposes of the A panel's 32-bit groups, done
 * once per packed A block by the driver (a_prep, then the _prepped
 * kernels), or per call on the stack for callers that pack A themselves.
 * The tile configuration is checked on every call and loaded when the
 * thread's is not ours: other code on the thread (another library's AMX
 * kernels) may have loaded its own in between.
 *
 * The OS grants AMX state per process (runtime/cpu.c asks for it); rows
 * requiring PT_CPU_AMX_* run only where that was granted. */
#include <immintrin.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "kernels/x86/avx512_transpose.h"
#include "kernels/x86/gemm_prefetch_x86.h"
#include "kernels/x86/gemm_ukr_amx_x86.h"

#define TILE_ROWS 16 /* k groups per step; rows of every tile */
#define TILE_GROUPS 16 /* 32-bit groups per tile row (64 bytes) */
#define PANEL_GROUPS 32 /* MR = NR = 32: groups per panel row */
/* B from memory (bf16 128x4096x4096 between oneDNN's runs in
 * bench_vs_onednn): the packing form fetches its source rows SOURCE_AHEAD k
 * rows on, and every form with the driver's stream fetches a line of the
 * next strip's source every PT_GEMM_AMX_PF_GROUPS k groups, 8 per tile step
 * (about 1024 / M lines a step are needed).  Without both that case took 6.0 ms,
 * with 16 / 8 3.7-4.1 (8 / 8: 5.1, 24 / 8: 4.0, 16 / 4: 5.5, 16 / 16: 4.8);
 * with B in cache the fetches cost little (2.8-3.0 ms either way).  The bf16
 * form's fetches go to L2 (T1): its source rows lie a multiple of 4 KiB
 * apart, all in the same L1 sets; 8 rows on, against 16 into L1: medians
 * 3.90 / 4.21 and 3.93 / 4.07 ms in two sets of eight alternating rounds
 * (16 rows into L2: 4.18, 24: 4.2, 32: 4.1, 64: 4.9); in bench_vs_onednn
 * within its noise. */
#define SOURCE_AHEAD 8
/* The s8 packing form's distance, in k rows (a line of each). */
#ifndef SOURCE_AHEAD_S8
#define SOURCE_AHEAD_S8 8
#endif

/* Palette 1, tiles 0-3 C (h, g), 4-5 A halves, 6-7 B halves; all 16 rows
 * of 64 bytes. */
typedef struct {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} __attribute__((aligned(64))) amx_config;

/* A constant in memory: built on the stack, the compiler took the field
 * stores as dead (ldtilecfg's read of them is not visible to it) and the
 * first tile instruction faulted. */
static const amx_config g_config = {
    .palette = 1,
    .colsb = {64, 64, 64, 64, 64, 64, 64, 64},
    .rows = {TILE_ROWS, TILE_ROWS, TILE_ROWS, TILE_ROWS, TILE_ROWS, TILE_ROWS, TILE_ROWS, TILE_ROWS},
};

/* ldtilecfg (which also zeroes every tile) took a seventh of a call at
 * 1024^3: it is skipped when the thread's configuration is already ours,
 * which reading it back tells cheaply; another library's AMX code on the
 * thread in between makes it load again. */
static inline __attribute__((always_inline)) void load_config(void) {
    amx_config now;
    _tile_storeconfig(&now);
    __asm__ volatile("" : : "r"(&now) : "memory"); /* the compiler does not see the instruction write `now` */
    if (memcmp(&now, &g_config, sizeof now) != 0) _tile_loadconfig(&g_config);
}

/* Groups [s0, s0 + np) of rows h*16 .. h*16 + 15 of the A panel, as a tile:
 * row m holds its np groups, then zeros. */
static inline __attribute__((always_inline)) void a_tile(const uint32_t *a, int64_t s0, int np, int h,
                                                         uint32_t *dst) {
    __m512i r[16];
    for (int p = 0; p < 16; ++p)
        r[p] = p < np ? _mm512_loadu_si512(a + (s0 + p) * PANEL_GROUPS + h * 16) : _mm512_setzero_si512();
    pt_avx512_transpose16(r);
    for (int m = 0; m < 16; ++m) _mm512_store_si512(dst + m * TILE_GROUPS, r[m]);
}

/* Groups [g0, g0 + np) of the bf16 B panels of up to 64 columns from their
 * source (k rows ld apart, the columns in `cols`, bit j column j; a k row
 * at or past kc reads as zeros): columns 0-31 into the panel at dst, 32-63
 * into the one at dst + dst2 (uint32 units), as the panels' k-pair rows.
 * Two panels a call for the reason the s8 packer gives (two lines of each
 * k row read together). */
static inline __attribute__((always_inline)) void b_pack_groups_bf16(const void *src_v, int64_t ld, int64_t kc,
                                                                     __mmask64 cols, int64_t g0, int np,
                                                                     uint32_t *dst, int64_t dst2, __m512i *sums) {
    const uint16_t *src = src_v;
    (void)sums; /* nothing to sum for a float kind */
    const bool two = (cols >> 32) != 0;
    for (int g = 0; g < np; ++g) {
        const int64_t k = 2 * (g0 + g);
        const uint16_t *row = src + k * ld;
        const uintptr_t ahead = (uintptr_t)row + (uintptr_t)(SOURCE_AHEAD * ld * 2); /* may lie past the source */
        _mm_prefetch((const char *)ahead, _MM_HINT_T1);
        _mm_prefetch((const char *)(ahead + (uintptr_t)(ld * 2)), _MM_HINT_T1);
        if (two) {
            _mm_prefetch((const char *)(ahead + 64), _MM_HINT_T1);
            _mm_prefetch((const char *)(ahead + (uintptr_t)(ld * 2) + 64), _MM_HINT_T1);
        }
        for (int h = 0; h < 1 + two; ++h) {
            const __mmask32 m = (__mmask32)(cols >> (32 * h));
            const __m512i even = _mm512_maskz_loadu_epi16(m, row + 32 * h);
            const __m512i odd = _mm512_maskz_loadu_epi16(k + 1 < kc ? m : 0, k + 1 < kc ? row + ld + 32 * h : row);
            __m512i lo, hi;
            pt_avx512_pair_rows16(even, odd, &lo, &hi);
            _mm512_storeu_si512(dst + h * dst2 + (g0 + g) * PANEL_GROUPS, lo);
            _mm512_storeu_si512(dst + h * dst2 + (g0 + g) * PANEL_GROUPS + 16, hi);
        }
    }
}

/* Groups [g0, g0 + np) of the s8 B panels of up to 64 columns from their
 * source (k rows ld bytes apart, the columns in `cols`, bit j column j; a k
 * row at or past kc reads as zeros): columns 0-31 into the panel at dst,
 * 32-63 into the one at dst + dst2 (uint32 units), as k-quad rows, each
 * column's four k in one dword, and added to the column sums (sums[h]:
 * columns 16h .. 16h + 15).  Two panels a call, because a strip of 32 s8
 * columns is half a line of each k row: the lines (all in one L1 set when
 * ld is a multiple of 4 KiB) are read once for both strips instead of twice
 * (measured: the second strip's packing took 40 % of the first's, waiting
 * on L2).  Per group, 128-bit lane pairs of rows k, k + 1 and k + 2, k + 3
 * go into one vector each, and one byte permutation per 16 columns
 * interleaves them. */
static inline __attribute__((always_inline)) void b_pack_groups_s8(const void *src_v, int64_t ld, int64_t kc,
                                                                   __mmask64 cols, int64_t g0, int np, uint32_t *dst,
                                                                   int64_t dst2, __m512i *sums) {
    const int8_t *src = src_v;
    /* Byte 4j + q: row q's column j of the 32 columns (rows 0, 1 in the
     * first vector's halves, 2, 3 in the second's); the second 16: j + 16. */
    const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const __m512i pick_lo = _mm512_add_epi32(_mm512_mullo_epi32(iota, _mm512_set1_epi32(0x01010101)),
                                             _mm512_set1_epi32(0x60402000));
    const __m512i pick_hi = _mm512_add_epi32(pick_lo, _mm512_set1_epi32(0x10101010));
    const __m512i ones = _mm512_set1_epi8(1);
    const bool two = (cols >> 32) != 0;
    for (int g = 0; g < np; ++g) {
        const int64_t k = 4 * (g0 + g);
        const int8_t *row = src + k * ld;
        const uintptr_t ahead = (uintptr_t)row + (uintptr_t)(SOURCE_AHEAD_S8 * ld); /* may lie past the source */
        for (int q = 0; q < 4; ++q) _mm_prefetch((const char *)(ahead + (uintptr_t)(q * ld)), _MM_HINT_T0);
        __m512i r[4];
        for (int q = 0; q < 4; ++q)
            r[q] = _mm512_maskz_loadu_epi8(k + q < kc ? cols : 0, k + q < kc ? row + q * ld : row);
        uint32_t *out = dst + (g0 + g) * PANEL_GROUPS;
        for (int h = 0; h < 1 + two; ++h) {
            /* Lanes 2h, 2h + 1 (the panel's 32 columns) of two rows each. */
            const __m512i r01 = h ? _mm512_shuffle_i64x2(r[0], r[1], 0xee) : _mm512_shuffle_i64x2(r[0], r[1], 0x44);
            const __m512i r23 = h ? _mm512_shuffle_i64x2(r[2], r[3], 0xee) : _mm512_shuffle_i64x2(r[2], r[3], 0x44);
            const __m512i q_lo = _mm512_permutex2var_epi8(r01, pick_lo, r23);
            const __m512i q_hi = _mm512_permutex2var_epi8(r01, pick_hi, r23);
            _mm512_storeu_si512(out + h * dst2, q_lo);
            _mm512_storeu_si512(out + h * dst2 + 16, q_hi);
            sums[2 * h] = _mm512_dpbusd_epi32(sums[2 * h], ones, q_lo);
            sums[2 * h + 1] = _mm512_dpbusd_epi32(sums[2 * h + 1], ones, q_hi);
        }
    }
}

/* The shared body, DP the tile product instruction.  A's tiles of a full
 * step come from the panel itself when it was prepared (a_prep: PREPPED),
 * else, and for a last step of fewer than 16 k groups, from transposes on
 * the stack; the transposes of step s + 1 run while the products of step s
 * do, into the other of two buffers: a tile load cannot take data from
 * stores still in flight, so loading a buffer just written stalled. */
#define AMX_BODY(DP, PREPPED, PACK, PACKER, PF, PFG)                                                          \
    do {                                                                                                      \
        const uint32_t *ap = a, *bp = b;                                                                      \
        pt_pf_cursor pfc = pt_pf_open(PF);                                                                    \
        const int64_t groups = kc / kg;                                                                       \
        uint32_t at[2][2][16 * TILE_GROUPS] __attribute__((aligned(64)));                                     \
        uint32_t bt[16 * PANEL_GROUPS] __attribute__((aligned(64)));                                          \
        load_config();                                                                                        \
        if (whole && accumulate) { /* C's own tile: summed into directly */                                  \
            _tile_loadd(0, cw, ldc * 4);                                                                      \
            _tile_loadd(1, cw + 16, ldc * 4);                                                                 \
            _tile_loadd(2, cw + 16 * ldc, ldc * 4);                                                           \
            _tile_loadd(3, cw + 16 * ldc + 16, ldc * 4);                                                      \
        } else {                                                                                              \
            _tile_zero(0);                                                                                    \
            _tile_zero(1);                                                                                    \
            _tile_zero(2);                                                                                    \
            _tile_zero(3);                                                                                    \
        }                                                                                                     \
        int np = groups < TILE_ROWS ? (int)groups : TILE_ROWS;                                                \
        if (PACK) PACKER(b_src, b_ld, kc_real, b_cols, 0, np, (uint32_t *)b,                                  \
                            groups * PANEL_GROUPS, b_sum);                                                    \
        if (!(PREPPED) || np < TILE_ROWS) {                                                                   \
            a_tile(ap, 0, np, 0, at[0][0]);                                                                   \
            a_tile(ap, 0, np, 1, at[0][1]);                                                                   \
        }                                                                                                     \
        for (int64_t s0 = 0, buf = 0; s0 < groups; s0 += TILE_ROWS, buf ^= 1) {                              \
            np = groups - s0 < TILE_ROWS ? (int)(groups - s0) : TILE_ROWS;                                    \
            const uint32_t *brow = bp + s0 * PANEL_GROUPS;                                                    \
            if (np < TILE_ROWS) { /* the last step: B rows past the panel are zeros */                        \
                memset(bt, 0, sizeof bt);                                                                     \
                memcpy(bt, brow, (size_t)np * PANEL_GROUPS * sizeof(uint32_t));                               \
                brow = bt;                                                                                    \
            }                                                                                                 \
            if ((PREPPED) && np == TILE_ROWS) {                                                               \
                _tile_loadd(4, ap + s0 * PANEL_GROUPS, TILE_GROUPS * 4);                                      \
                _tile_loadd(5, ap + s0 * PANEL_GROUPS + 16 * TILE_GROUPS, TILE_GROUPS * 4);                   \
            } else {                                                                                          \
                _tile_loadd(4, at[buf][0], TILE_GROUPS * 4);                                                  \
                _tile_loadd(5, at[buf][1], TILE_GROUPS * 4);                                                  \
            }                                                                                                 \
            _tile_loadd(6, brow, PANEL_GROUPS * 4);                                                           \
            _tile_loadd(7, brow + 16, PANEL_GROUPS * 4);                                                      \
            DP(0, 4, 6);                                                                                      \
            DP(1, 4, 7);                                                                                      \
            DP(2, 5, 6);                                                                                      \
            DP(3, 5, 7);                                                                                      \
            if (PF)                                                                                           \
                for (int q = 0; q < (np + (PFG) - 1) / (PFG); ++q)                                            \
                    pt_pf_step(&pfc);                                                                         \
            const int64_t s1 = s0 + TILE_ROWS;                                                                \
            if (s1 < groups) {                                                                                \
                const int n1 = groups - s1 < TILE_ROWS ? (int)(groups - s1) : TILE_ROWS;                      \
                if (PACK) PACKER(b_src, b_ld, kc_real, b_cols, s1, n1, (uint32_t *)b,                         \
                                    groups * PANEL_GROUPS, b_sum);                                            \
                if (!(PREPPED) || n1 < TILE_ROWS) {                                                           \
                    a_tile(ap, s1, n1, 0, at[buf ^ 1][0]);                                                    \
                    a_tile(ap, s1, n1, 1, at[buf ^ 1][1]);                                                    \
                }                                                                                             \
            }                                                                                                 \
        }                                                                                                     \
        if (whole) {                                                                                          \
            _tile_stored(0, cw, ldc * 4);                                                                     \
            _tile_stored(1, cw + 16, ldc * 4);                                                                \
            _tile_stored(2, cw + 16 * ldc, ldc * 4);                                                          \
            _tile_stored(3, cw + 16 * ldc + 16, ldc * 4);                                                     \
        } else {                                                                                              \
            _tile_stored(0, cb, PANEL_GROUPS * 4);                                                            \
            _tile_stored(1, cb + 16, PANEL_GROUPS * 4);                                                       \
            _tile_stored(2, cb + 16 * PANEL_GROUPS, PANEL_GROUPS * 4);                                        \
            _tile_stored(3, cb + 16 * PANEL_GROUPS + 16, PANEL_GROUPS * 4);                                   \
        }                                                                                                     \
        pt_pf_close(&pfc, PF);                                                                                \
    } while (0)

/* C's mr x nr corner from the 32 x 32 tile buffer (f32 or s32 lanes); a
 * whole tile went to C directly. */
#define STORE_CORNER(T, LOAD, STORE, ADD)                                                                     \
    do {                                                                                                      \
        if (whole) break;                                                                                     \
        T *cc = c;                                                                                            \
        for (int i = 0; i < mr; ++i)                                                                          \
            for (int j = 0; j < nr; j += 16) {                                                                \
                const __mmask16 k = nr - j >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (nr - j)) - 1);    \
                __typeof__(LOAD(k, cb)) v = LOAD(k, cb + i * PANEL_GROUPS + j);                               \
                if (accumulate) v = ADD(v, LOAD(k, cc + i * ldc + j));                                        \
                STORE(cc + i * ldc + j, k, v);                                                                \
            }                                                                                                 \
    } while (0)

static inline __m512 load_ps(__mmask16 k, const void *p) { return _mm512_maskz_loadu_ps(k, p); }
static inline __m512i load_epi32(__mmask16 k, const void *p) { return _mm512_maskz_loadu_epi32(k, p); }

/* The panel's full steps of 16 k groups as two A tiles each (rows 0-15,
 * then 16-31, each row its 16 groups), in place; a last, shorter step stays
 * as packed (the kernels transpose it per call). */
static void a_prep(void *panel, int64_t groups) {
    uint32_t *p = panel;
    for (int64_t s0 = 0; s0 + TILE_ROWS <= groups; s0 += TILE_ROWS) {
        uint32_t *blk = p + s0 * PANEL_GROUPS;
        __m512i lo[16], hi[16];
        for (int g = 0; g < 16; ++g) {
            lo[g] = _mm512_loadu_si512(blk + g * PANEL_GROUPS);
            hi[g] = _mm512_loadu_si512(blk + g * PANEL_GROUPS + 16);
        }
        pt_avx512_transpose16(lo);
        pt_avx512_transpose16(hi);
        for (int m = 0; m < 16; ++m) {
            _mm512_storeu_si512(blk + m * TILE_GROUPS, lo[m]);
            _mm512_storeu_si512(blk + 16 * TILE_GROUPS + m * TILE_GROUPS, hi[m]);
        }
    }
}

void pt_gemm_amx_prep_a_bf16(void *panel, int64_t kcp) { a_prep(panel, kcp / 2); }
void pt_gemm_amx_prep_a_u8s8(void *panel, int64_t kcp) { a_prep(panel, kcp / 4); }

#define DP_BF16(C, A, B) _tile_dpbf16ps(C, A, B)
#define DP_U8S8(C, A, B) _tile_dpbusd(C, A, B)

/* One kernel: NAME over k groups of KG values into C of lane type T, A as
 * packed or (PREPPED) as a_prep left it, (PACK) B packed from its source
 * into the panel b on the way by PACKER (with the column sums of an integer
 * B in b_sum), fetching PF's stream (a pt_gemm_prefetch pointer or NULL),
 * one line per PFG k groups. */
#define AMX_KERNEL_BODY(T, KG, DP, PREPPED, PACK, PACKER, PF, PFG, LOAD, STORE, ADD)                          \
    const int64_t kg = KG;                                                                                    \
    const bool whole = mr == 32 && nr == 32;                                                                  \
    T cb[32 * PANEL_GROUPS] __attribute__((aligned(64))), *cw = c;                                            \
    __m512i b_sum[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(),               \
                        _mm512_setzero_si512()};                                                              \
    AMX_BODY(DP, PREPPED, PACK, PACKER, PF, PFG);                                                             \
    STORE_CORNER(T, LOAD, STORE, ADD);
#define AMX_KERNEL(NAME, T, KG, DP, PREPPED, LOAD, STORE, ADD)                                                \
    void NAME(int64_t kc, const void *a, const void *b, void *c, int64_t ldc, int mr, int nr, int accumulate) { \
        const void *b_src = NULL;                                                                             \
        const int64_t b_ld = 0, kc_real = 0;                                                                  \
        const __mmask32 b_cols = 0;                                                                           \
        AMX_KERNEL_BODY(T, KG, DP, PREPPED, 0, b_pack_groups_bf16, (pt_gemm_prefetch *)NULL, 1, LOAD, STORE,  \
                        ADD)                                                                                  \
        (void)b_sum;                                                                                          \
    }
/* The prepped kernel with the driver's prefetch stream (run_pf). */
#define AMX_KERNEL_PF(NAME, T, KG, DP, PFG, LOAD, STORE, ADD)                                                 \
    void NAME(int64_t kc, const void *a, const void *b, void *c, int64_t ldc, int mr, int nr, int accumulate,  \
              pt_gemm_prefetch *pf) {                                                                         \
        const void *b_src = NULL;                                                                             \
        const int64_t b_ld = 0, kc_real = 0;                                                                  \
        const __mmask32 b_cols = 0;                                                                           \
        AMX_KERNEL_BODY(T, KG, DP, 1, 0, b_pack_groups_bf16, pf, PFG, LOAD, STORE, ADD)                       \
        (void)b_sum;                                                                                          \
    }
AMX_KERNEL_PF(pt_gemm_ukr_amx_bf16_prepped_pf, float, 2, DP_BF16, PT_GEMM_AMX_PF_GROUPS, load_ps,
              _mm512_mask_storeu_ps, _mm512_add_ps)
AMX_KERNEL_PF(pt_gemm_ukr_amx_u8s8_prepped_pf, int32_t, 4, DP_U8S8, PT_GEMM_AMX_PF_GROUPS_S8, load_epi32,
              _mm512_mask_storeu_epi32, _mm512_add_epi32)

AMX_KERNEL(pt_gemm_ukr_amx_bf16, float, 2, DP_BF16, 0, load_ps, _mm512_mask_storeu_ps, _mm512_add_ps)
AMX_KERNEL(pt_gemm_ukr_amx_bf16_prepped, float, 2, DP_BF16, 1, load_ps, _mm512_mask_storeu_ps, _mm512_add_ps)
AMX_KERNEL(pt_gemm_ukr_amx_u8s8, int32_t, 4, DP_U8S8, 0, load_epi32, _mm512_mask_storeu_epi32, _mm512_add_epi32)
AMX_KERNEL(pt_gemm_ukr_amx_u8s8_prepped, int32_t, 4, DP_U8S8, 1, load_epi32, _mm512_mask_storeu_epi32,
           _mm512_add_epi32)

/* The first n of up to 64 source columns (a packing call's one or two strips). */
static inline __mmask64 cols_mask(int n) { return n >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << n) - 1); }

/* The packing form of the bf16 kernel (pt_gemm_ukr_packing_fn; A as a_prep
 * left it): kc k rows of bf16 B (odd kc: the last pair's second
 * row zero) packed into the panel step by step, each step's packing while
 * the previous step's products run.  At 128x4096x4096 this took the
 * product from 3.67 to 2.8 ms: B no longer goes to a chunk buffer in L2 and
 * back, and its loads overlap the tile products. */
void pt_gemm_ukr_amx_bf16_packing(int64_t kc_real, const void *a, const void *b_src, int64_t b_ld, int b_cols_n,
                                  void *b, int32_t *b_sums, void *c, int64_t ldc, int mr, int nr, int accumulate,
                                  struct pt_gemm_prefetch *pf) {
    (void)b_sums; /* a float kind sums nothing */
    const __mmask64 b_cols = cols_mask(b_cols_n);
    const int64_t kc = (kc_real + 1) & ~(int64_t)1;
    AMX_KERNEL_BODY(float, 2, DP_BF16, 1, 1, b_pack_groups_bf16, pf, PT_GEMM_AMX_PF_GROUPS, load_ps,
                    _mm512_mask_storeu_ps, _mm512_add_ps)
}

/* The same for the U8S8 kind: s8 B (kc not a multiple of four: the last
 * quad's missing rows zero), b_cols up to 2 x 32: the columns past 32 go
 * to the next panel (b + kcp x 32 bytes, the strip the driver computes
 * next), and each column's Σ_k to b_sums. */
void pt_gemm_ukr_amx_u8s8_packing(int64_t kc_real, const void *a, const void *b_src, int64_t b_ld, int b_cols_n,
                                  void *b, int32_t *b_sums, void *c, int64_t ldc, int mr, int nr, int accumulate,
                                  struct pt_gemm_prefetch *pf) {
    const __mmask64 b_cols = cols_mask(b_cols_n);
    const int64_t kc = (kc_real + 3) & ~(int64_t)3;
    AMX_KERNEL_BODY(int32_t, 4, DP_U8S8, 1, 1, b_pack_groups_s8, pf, PT_GEMM_AMX_PF_GROUPS_S8, load_epi32,
                    _mm512_mask_storeu_epi32, _mm512_add_epi32)
    if (b_sums)
        for (int h = 0; h < 4; ++h)
            _mm512_mask_storeu_epi32(b_sums + 16 * h, (__mmask16)(b_cols >> (16 * h)), b_sum[h]);
}

/* U8S8 A rows straight into the prepared layout (pt_gemm_ukernel.
 * pack_a_rows_prepped): a full step of 16 k groups is the strip's 32 rows of
 * 64 bytes one after the other, which for channels-last convolutions is a
 * 64-byte copy per position and tap, where the packed layout interleaves
 * the rows' k quads and the kernel transposes them back on every call.  A
 * last, shorter step keeps the packed layout [group][row][4], as a_prep
 * leaves it.  Values: byte ^ flip (0 for rows past rows_in and k past the
 * segments); sums[r] = Σ of row r's stored bytes (u8), r < rows_in. */
void pt_gemm_amx_pack_a_rows_u8s8(const uint8_t *const *rows, int rows_in, int nseg, int64_t seglen, uint8_t flip,
                                  void *dst, int32_t *sums) {
    enum { R = PT_GEMM_AMX_MR, STEP = TILE_ROWS * 4 };
    const int64_t kc = (int64_t)nseg * seglen, kcp = (kc + 3) & ~(int64_t)3, full = kcp / STEP * STEP;
    const __m512i fl = _mm512_set1_epi8((char)flip), zero = _mm512_setzero_si512();
    uint8_t *out = dst;
    for (int r = 0; r < R; ++r) {
        __m512i acc = zero;
        for (int64_t k0 = 0; k0 < full; k0 += STEP) {
            uint8_t *line = out + k0 * R + r * STEP;
            if (r >= rows_in) {
                _mm512_storeu_si512(line, zero);
                continue;
            }
            __m512i v;
            const int64_t seg = k0 / seglen, off = k0 - seg * seglen;
            if (off + STEP <= seglen) { /* one segment holds the step */
                v = _mm512_xor_si512(_mm512_loadu_si512(rows[seg * R + r] + off), fl);
            } else { /* pieces of several segments; k past them zero */
                _Alignas(64) uint8_t tmp[STEP];
                for (int64_t k = k0; k < k0 + STEP;) {
                    if (k >= kc) {
                        memset(tmp + (k - k0), 0, (size_t)(k0 + STEP - k));
                        break;
                    }
                    const int64_t s = k / seglen, o = k - s * seglen;
                    const int64_t n = seglen - o < k0 + STEP - k ? seglen - o : k0 + STEP - k;
                    memcpy(tmp + (k - k0), rows[s * R + r] + o, (size_t)n);
                    k += n;
                }
                const __mmask64 valid = kc - k0 >= STEP ? ~(__mmask64)0 : (((__mmask64)1 << (kc - k0)) - 1);
                v = _mm512_maskz_mov_epi8(valid, _mm512_xor_si512(_mm512_load_si512(tmp), fl));
            }
            _mm512_storeu_si512(line, v);
            acc = _mm512_add_epi64(acc, _mm512_sad_epu8(v, zero));
        }
        /* The shorter last step: k quads of the rows side by side. */
        int32_t tail = 0;
        for (int64_t k = full; k < kcp; ++k) {
            uint8_t b = 0;
            if (r < rows_in && k < kc) b = (uint8_t)(rows[(k / seglen) * R + r][k % seglen] ^ flip);
            out[full * R + ((k - full) / 4) * R * 4 + r * 4 + (k & 3)] = b;
            tail += b;
        }
        if (sums && r < rows_in) sums[r] = (int32_t)_mm512_reduce_add_epi64(acc) + tail;
    }
}
