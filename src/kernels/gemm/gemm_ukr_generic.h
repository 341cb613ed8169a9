/* Portable C microkernels of every compute kind (see gemm.h for the
 * contract). */
#ifndef PARTITA_KERNELS_GEMM_GEMM_UKR_GENERIC_H
#define PARTITA_KERNELS_GEMM_GEMM_UKR_GENERIC_H

#include "kernels/gemm/gemm.h"

#define PT_GEMM_GENERIC_MR 4
#define PT_GEMM_GENERIC_NR 16

void pt_gemm_ukr_generic_f32(int64_t kc, const void *a, const void *b, void *c, int64_t ldc, int mr, int nr,
                             int accumulate);
void pt_gemm_ukr_generic_bf16(int64_t kc, const void *a, const void *b, void *c, int64_t ldc, int mr, int nr,
                              int accumulate);
void pt_gemm_ukr_generic_u8s8(int64_t kc, const void *a, const void *b, void *c, int64_t ldc, int mr, int nr,
                              int accumulate);

#endif
