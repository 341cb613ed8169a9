/* x86 microkernels of the F32 and BF16 kinds (contract: pt_gemm_ukr_fn in
 * kernels/gemm/gemm.h).  Each lives in a file compiled for its ISA; only
 * gemm_rows_float.c takes their addresses, and the registry calls them only
 * on CPUs that pt_cpu_row_usable accepts. */
#ifndef PARTITA_KERNELS_X86_GEMM_UKR_FLOAT_X86_H
#define PARTITA_KERNELS_X86_GEMM_UKR_FLOAT_X86_H

#include <stdint.h>

struct pt_gemm_prefetch;

/* AVX-512 F32: 12 rows x 32 columns (24 zmm accumulators). */
#define PT_GEMM_AVX512_F32_MR 12
#define PT_GEMM_AVX512_F32_NR 32
void pt_gemm_ukr_avx512_f32(int64_t kc, const void *a, const void *b, void *c, int64_t ldc, int mr, int nr,
                            int accumulate);
void pt_gemm_ukr_avx512_f32_pf(int64_t kc, const void *a, const void *b, void *c, int64_t ldc, int mr, int nr,
                               int accumulate, struct pt_gemm_prefetch *pf);
void pt_gemm_ukr_avx512_f32_packing(int64_t kc, const void *a, const void *b_src, int64_t b_ld, int b_cols,
                                    void *b_dst, int32_t *b_sums, void *c, int64_t ldc, int mr, int nr, int accumulate,
                                    struct pt_gemm_prefetch *pf);

/* pt_gemm_ukernel.run_a_segs of the AVX-512 F32 row. */
void pt_gemm_ukr_avx512_f32_segs(int nseg, int64_t seglen, const float *const *a, const void *b, const float *init,
                                 void *c, int64_t ldc, int mr, int nr, int accumulate);

/* AVX2 F32: 6 rows x 16 columns (12 ymm accumulators). */
#define PT_GEMM_AVX2_F32_MR 6
#define PT_GEMM_AVX2_F32_NR 16
void pt_gemm_ukr_avx2_f32(int64_t kc, const void *a, const void *b, void *c, int64_t ldc, int mr, int nr,
                          int accumulate);
void pt_gemm_ukr_avx2_f32_pf(int64_t kc, const void *a, const void *b, void *c, int64_t ldc, int mr, int nr,
                             int accumulate, struct pt_gemm_prefetch *pf);
void pt_gemm_ukr_avx2_f32_packing(int64_t kc, const void *a, const void *b_src, int64_t b_ld, int b_cols,
                                  void *b_dst, int32_t *b_sums, void *c, int64_t ldc, int mr, int nr, int accumulate,
                                  struct pt_gemm_prefetch *pf);

/* AVX512_BF16: 12 rows x 32 columns of vdpbf16ps over k pairs. */
#define PT_GEMM_AVX512BF16_MR 12
#define PT_GEMM_AVX512BF16_NR 32
void pt_gemm_ukr_avx512bf16_bf16(int64_t kc, const void *a, const void *b, void *c, int64_t ldc, int mr, int nr,
                                 int accumulate);
void pt_gemm_ukr_avx512bf16_bf16_pf(int64_t kc, const void *a, const void *b, void *c, int64_t ldc, int mr, int nr,
                                    int accumulate, struct pt_gemm_prefetch *pf);

/* AVX2 BF16: 6 rows x 16 columns; bf16 pairs widened to f32 and FMA'd. */
#define PT_GEMM_AVX2_BF16_MR 6
#define PT_GEMM_AVX2_BF16_NR 16
void pt_gemm_ukr_avx2_bf16(int64_t kc, const void *a, const void *b, void *c, int64_t ldc, int mr, int nr,
                           int accumulate);

#endif
