/* x86 helpers of the integer packer (kernels/gemm/gemm_pack_int.c). */
#ifndef PARTITA_KERNELS_X86_GEMM_PACK_INT_X86_H
#define PARTITA_KERNELS_X86_GEMM_PACK_INT_X86_H

#include "kernels/gemm/gemm_internal.h"

/* Weights (s8 / u8 / s4 / u4) with k contiguous (strips of a multiple of 16
 * rows) or rows contiguous, dequantised into F32 or BF16 panels of R rows in
 * a zeroed `dst`, as pt_gemm_pack_panels_int lays them out; false (nothing
 * written) for cases it does not take.  AVX-512 F/BW. */
bool pt_gemm_pack_dequant_avx512(const pt_gemm_ukernel *uk, int R, const pt_gemm_operand *o, const void *data,
                                 const void *scales, const void *zps, int64_t r0, int64_t rows, int64_t k0,
                                 int64_t kc, void *dst);

/* U8S8 panels (R a multiple of 16) from u8 / s8 data with rows contiguous:
 * each byte xor `flip`, sums[row] = Σ_k of the stored values (as s8 when
 * signed_vals).  Same bytes and sums as the portable packer; false (nothing
 * written) for cases it does not take.  `dst` need not be zeroed: padding
 * k of the last quad and padding rows are written as zero.  AVX-512 BW. */
bool pt_gemm_pack_u8s8_rows_contiguous_avx512(int R, const pt_gemm_operand *o, const void *data, int64_t r0,
                                              int64_t rows, int64_t k0, int64_t kc, int64_t kcp, uint8_t flip,
                                              bool signed_vals, uint8_t *dst, int32_t *sums);

/* One strip of such panels from nseg segments of seglen k each (a multiple
 * of 4 where nseg > 1), a pointer per segment and row: rows[seg·R + j] holds
 * row j's k values seg·seglen .. seg·seglen + seglen - 1 (k contiguous).
 * Rows past rs and k past nseg·seglen up to kcp are written as zero; sums[j]
 * for j < rs when sums is not NULL.  R a multiple of 4 up to
 * PT_GEMM_U8S8_STRIP_MAX_R. */
#define PT_GEMM_U8S8_STRIP_MAX_R 64
void pt_gemm_pack_u8s8_strip_avx512(int R, const uint8_t *const *rows, int rs, int nseg, int64_t seglen, int64_t kcp,
                                    uint8_t flip, bool signed_vals, uint8_t *panel, int32_t *sums);

/* The same for k contiguous (s_k = 1, any row stride), R a multiple of 4 up
 * to PT_GEMM_U8S8_STRIP_MAX_R. */
bool pt_gemm_pack_u8s8_k_contiguous_avx512(int R, const pt_gemm_operand *o, const void *data, int64_t r0,
                                           int64_t rows, int64_t k0, int64_t kc, int64_t kcp, uint8_t flip,
                                           bool signed_vals, uint8_t *dst, int32_t *sums);

/* One row of the U8S8 s32 -> f32 step, in place: c[j] becomes
 * (float)(c[j] - colterm[j] + rowterm) * scale[j] for j < n, with every
 * term exact in int32 (the driver checks the bounds).  AVX-512 F. */
void pt_gemm_u8s8_row_to_f32_avx512(int32_t *c, int64_t n, const int32_t *colterm, int32_t rowterm,
                                    const float *scale);

#endif
