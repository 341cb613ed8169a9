/* AVX-512 packing helpers for the common operand layouts (gemm_pack.c
 * dispatches to them when pt_isa() reaches AVX-512).  Layouts as in
 * kernels/gemm/gemm_internal.h: one strip of R rows; rows past rows_in and
 * k past kc are written as zero. */
#ifndef PARTITA_KERNELS_X86_GEMM_PACK_X86_H
#define PARTITA_KERNELS_X86_GEMM_PACK_X86_H

#include <stdbool.h>
#include <stdint.h>

/* f32 rows with contiguous k (s_k == 1) into an F32 strip [kc][R]. */
void pt_gemm_pack_f32_kcontig_avx512(const float *src, int64_t s_row, int rows_in, int R, int64_t kc, float *dst);
/* The same from one pointer per row (k contiguous; a NULL row is zeros):
 * an implicit-GEMM convolution's rows, each a tap's channels in the input. */
void pt_gemm_pack_f32_rows_avx512(const float *const *rows, int rows_in, int R, int64_t kc, float *dst);
/* The same two layouts from f16 sources, widened exactly on load. */
void pt_gemm_pack_f16_kcontig_avx512(const uint16_t *src, int64_t s_row, int rows_in, int R, int64_t kc, float *dst);
void pt_gemm_pack_f16_rcontig_avx512(const uint16_t *src, int64_t s_k, int rows_in, int R, int64_t kc, float *dst);

/* F32 strips [kc][R] from f32 source rows that are contiguous (s_row = 1),
 * k at stride s_k; rows past rows_in zero.  rows_in may exceed R: then
 * ceil(rows_in / R) strips, R * kc floats apart, are filled in one pass
 * over k (longer contiguous runs of each source k row). */
void pt_gemm_pack_f32_rcontig_avx512(const float *src, int64_t s_k, int rows_in, int R, int64_t kc, float *dst);

/* f32 or bf16 rows with contiguous k (s_k == 1) into a BF16 strip
 * [kcp/2][R][2]; f32 rounds to nearest even (NaN stays a quiet NaN). */
void pt_gemm_pack_bf16_kcontig_avx512(const void *src, bool src_bf16, int64_t s_row, int rows_in, int R, int64_t kc,
                                      uint16_t *dst);

/* f32 or bf16 with contiguous rows (s_row == 1) into a BF16 strip.  For
 * bf16 sources and R a multiple of 32, rows_in may exceed R: then
 * ceil(rows_in / R) strips, R * kcp words apart, in one pass over k. */
void pt_gemm_pack_bf16_rcontig_avx512(const void *src, bool src_bf16, int64_t s_k, int rows_in, int R, int64_t kc,
                                      uint16_t *dst);

#endif
