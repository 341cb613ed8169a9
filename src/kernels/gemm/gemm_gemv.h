/* The small-M path's inner contract (gemm_gemv.c prepares, ISA files
 * compute): one K chunk of M <= PT_GEMV_MAX_M rows of A, already in f32
 * and rounded as the kind requires, against columns [n0, n0 + nlen) of B
 * read in place.  B values are converted to f32, dequantised as
 * (q - zp) * scale and then rounded: to bf16 for the BF16 kind, per
 * `b_round` for f32 B of the F32 kind (other B types are used as they are).
 * Where no rounding applies, a kernel may factor the dequantisation out of
 * a group's sum (s·(Σ a·q - zp·Σ a)): the same value up to f32 rounding. */
#ifndef PARTITA_KERNELS_GEMM_GEMM_GEMV_H
#define PARTITA_KERNELS_GEMM_GEMM_GEMV_H

#include "kernels/gemm/gemm_internal.h"

/* K elements per chunk: the A chunk lives on the stack (M x this floats). */
#define PT_GEMV_KCHUNK 4096

typedef struct pt_gemv_chunk {
    pt_gemm_kind kind;
    int M;
    const float *a; /* [M][PT_GEMV_KCHUNK], zero past klen up to a multiple of 64 */
    int64_t k0, klen; /* absolute first k of the chunk (groups count from k = 0), length */
    const pt_gemm_operand *bo;
    const void *b, *scales, *zps;
    int64_t n0, nlen;
    float *c;
    int64_t ldc;
    bool accumulate; /* add to c (later chunks) instead of writing it */
} pt_gemv_chunk;

/* The rounding applied to B values after conversion / dequantisation. */
typedef enum { PT_GEMV_ROUND_NONE, PT_GEMV_ROUND_BF16, PT_GEMV_ROUND_F16, PT_GEMV_ROUND_TF32 } pt_gemv_round;

static inline pt_gemv_round pt_gemv_b_round(const pt_gemv_chunk *ch) {
    if (ch->kind == PT_GEMM_BF16) return PT_GEMV_ROUND_BF16;
    if (ch->bo->dt != dnnl_f32) return PT_GEMV_ROUND_NONE;
    switch (ch->bo->round) {
    case dnnl_fpmath_mode_bf16:
    case dnnl_fpmath_mode_any: return PT_GEMV_ROUND_BF16;
    case dnnl_fpmath_mode_f16: return PT_GEMV_ROUND_F16;
    case dnnl_fpmath_mode_tf32: return PT_GEMV_ROUND_TF32;
    default: return PT_GEMV_ROUND_NONE;
    }
}

/* Accumulator floats (all M rows) of the chunk kernels over columns-
 * contiguous B: one block of columns is swept down the whole K chunk, its
 * sums in L1 (16 KiB: a third to a half of a current core's L1D).  Blocks
 * wider than L1 (64 KiB before) kept the sums in L2: on Zen 4 (32 KiB L1D)
 * f32 4x4096x4096 took 2.5 ms against 1.75 with L1-sized blocks, and one
 * row was no faster (1.49 against 1.50 ms at 1x4096x4096).  B's rows are
 * fetched ahead into L2, not L1, where they would evict the sums. */
#define PT_GEMV_NC_ACC 4096

/* Columns per accumulator block for M rows of A (a multiple of 128). */
static inline int64_t pt_gemv_nc_cols(int M) { return PT_GEMV_NC_ACC / M / 128 * 128; }

/* AVX-512 chunk kernels (gemv_avx512.c); false when the chunk's case is not
 * one they cover (the portable loop then runs it). */
bool pt_gemv_chunk_avx512(const pt_gemv_chunk *ch);
/* 4-bit weights of the BF16 kind through vdpbf16ps (gemv_avx512bf16.c);
 * tried first where AVX512_BF16 is usable. */
bool pt_gemv_chunk_avx512bf16(const pt_gemv_chunk *ch);

/* The integer small-M contract (U8S8 kind): acc[m·ldacc + j] = Σ_k a[m·lda
 * + k] · B[k][j] exactly in s32 for m < M, j < nlen, k < K, and (colsum not
 * NULL) colsum[j] = Σ_k B[k][j]; B[k][j] is b[j·ldb + k] when k_contiguous,
 * else b[k·ldb + j].  A rows are u8, zero-padded to a multiple of 4 k.  The
 * caller keeps K·255·128 within int32. */
typedef struct pt_gemv_int_chunk {
    int M;
    const uint8_t *a;
    int64_t lda, K;
    const int8_t *b;
    int64_t ldb;
    bool k_contiguous;
    int64_t nlen;
    int32_t *acc;
    int64_t ldacc;
    int32_t *colsum;
} pt_gemv_int_chunk;

/* AVX-512 VNNI (gemv_u8s8_avx512vnni.c). */
void pt_gemv_int_avx512vnni(const pt_gemv_int_chunk *ch);

#endif
