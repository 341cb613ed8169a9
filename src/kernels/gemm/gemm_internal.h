/* Engine-internal contracts between the driver (gemm_driver.c), the packers
 * (gemm_pack.c: float sources; gemm_pack_int.c: integer sources) and the
 * small-M path (gemm_gemv.c).  Not for use outside src/kernels/gemm. */
#ifndef PARTITA_KERNELS_GEMM_GEMM_INTERNAL_H
#define PARTITA_KERNELS_GEMM_GEMM_INTERNAL_H

#include "kernels/gemm/gemm.h"

/* The integer-source half of pt_gemm_pack_panels (gemm_pack_int.c): called
 * for o->dt in {s8, u8, s4, u4}. */
void pt_gemm_pack_panels_int(const pt_gemm_ukernel *uk, bool is_b, const pt_gemm_operand *o, const void *data,
                             const void *scales, const void *zps, int64_t r0, int64_t rows, int64_t k0, int64_t kc,
                             void *dst, int32_t *sums);

/* Small-M path (M <= PT_GEMV_MAX_M; F32 and BF16 kinds, and U8S8 where the
 * CPU has AVX512_VNNI): streams B in its
 * own layout and type (f32, bf16, f16, or s8/u8/s4/u4 dequantised in
 * registers), never packing it.  Computes c[m * ldc + j] = Σ_k A[m][k] ·
 * B[k][n0 + j] for m < M, j < nlen; `a` / `b` point at this batch item's
 * operands.  Rounding of f32 operands follows the operands' `round` mode;
 * the BF16 kind rounds both operands to bf16 (as its panels would).  Pure. */
#define PT_GEMV_MAX_M 4
bool pt_gemm_gemv_supported(const pt_gemm_desc *d);
void pt_gemm_gemv_tile(const pt_gemm_desc *d, const void *a, const void *b, const void *scales, const void *zps,
                       int64_t n0, int64_t nlen, float *c, int64_t ldc);
/* The same over k in [kbeg, kend) only (a partial sum; dequantisation
 * groups still count from k = 0): how the driver splits long K. */
void pt_gemm_gemv_tile_k(const pt_gemm_desc *d, const void *a, const void *b, const void *scales, const void *zps,
                         int64_t kbeg, int64_t kend, int64_t n0, int64_t nlen, float *c, int64_t ldc);

/* The U8S8 kind's tile: c[m * ldc + j] = a_scale · b_scale(n0 + j) ·
 * Σ_k (A[m][k] - za)(B[k][n0 + j] - zb), the same value the packed path's
 * s32 -> f32 step gives (d->q's zero points, s8 A taken as u8 + 128);
 * b_scales per column (d->q.b_scale_per_n) or one (NULL: 1).  `work` holds
 * pt_gemm_gemv_int_scratch(d, nlen) bytes. */
size_t pt_gemm_gemv_int_scratch(const pt_gemm_desc *d, int64_t nlen);
void pt_gemm_gemv_int_tile(const pt_gemm_desc *d, const void *a, const void *b, float a_scale, const float *b_scales,
                           int64_t n0, int64_t nlen, float *c, int64_t ldc, void *work);

/* The U8S8 kind's s32 -> f32 step, in place over an mlen x nlen block
 * (row stride ld) whose columns start at n0: a_scale · b_scale(n) times
 * the exact Σ (a - za)(b - zb), from the raw s32 sums and A's row sums /
 * B's column sums (colsum NULL: all zero; read only when za != 0).
 * Shared by the packed path (gemm_driver.c) and the small-M tile. */
void pt_gemm_u8s8_dequantize(const pt_gemm_desc *d, float a_scale, const float *b_scales, void *cblk, int64_t ld,
                             const int32_t *rowsum, const int32_t *colsum, int64_t n0, int64_t mlen, int64_t nlen);

#endif
