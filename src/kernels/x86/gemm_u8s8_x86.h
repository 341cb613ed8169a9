/* The x86 U8S8 microkernels (gemm.h contract, kind PT_GEMM_U8S8): tile
 * shapes and entry points; the rows are in kernels/gemm/gemm_rows_int.c. */
#ifndef PARTITA_KERNELS_X86_GEMM_U8S8_X86_H
#define PARTITA_KERNELS_X86_GEMM_U8S8_X86_H

#include "kernels/gemm/gemm.h"

#define PT_GEMM_U8S8_AVX512_MR 12
#define PT_GEMM_U8S8_AVX512_NR 32
#define PT_GEMM_U8S8_AVXVNNI_MR 6
#define PT_GEMM_U8S8_AVXVNNI_NR 16
#define PT_GEMM_U8S8_AVX2_MR 6
#define PT_GEMM_U8S8_AVX2_NR 8

/* zmm vpdpbusd (AVX512_VNNI). */
void pt_gemm_ukr_avx512vnni_u8s8(int64_t kc, const void *a, const void *b, void *c, int64_t ldc, int mr, int nr,
                                 int accumulate);
void pt_gemm_ukr_avx512vnni_u8s8_pf(int64_t kc, const void *a, const void *b, void *c, int64_t ldc, int mr, int nr,
                                    int accumulate, pt_gemm_prefetch *pf);
/* ymm vpdpbusd (AVX-VNNI, VEX encoded). */
void pt_gemm_ukr_avxvnni_u8s8(int64_t kc, const void *a, const void *b, void *c, int64_t ldc, int mr, int nr,
                              int accumulate);
/* Plain AVX2: operands widened to s16 and multiplied with vpmaddwd, which is
 * exact (vpmaddubsw would saturate its s16 pair sums). */
void pt_gemm_ukr_avx2_u8s8(int64_t kc, const void *a, const void *b, void *c, int64_t ldc, int mr, int nr,
                           int accumulate);

#endif
