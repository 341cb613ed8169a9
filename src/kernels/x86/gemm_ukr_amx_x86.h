/* AMX microkernels of the BF16 and U8S8 kinds (contract: pt_gemm_ukr_fn in
 * kernels/gemm/gemm.h; gemm_amx.c says how they use the usual panels).
 * Only the row tables take their addresses, and the registry calls them only
 * where runtime/cpu.c found AMX and the OS granted its state. */
#ifndef PARTITA_KERNELS_X86_GEMM_UKR_AMX_X86_H
#define PARTITA_KERNELS_X86_GEMM_UKR_AMX_X86_H

#include <stdint.h>

struct pt_gemm_prefetch;

/* 32 rows x 32 columns: four 16 x 16 accumulator tiles. */
#define PT_GEMM_AMX_MR 32
#define PT_GEMM_AMX_NR 32
/* k groups per line of the prefetch stream (pt_gemm_ukernel.pf_groups_per_line). */
#define PT_GEMM_AMX_PF_GROUPS 2
#ifndef PT_GEMM_AMX_PF_GROUPS_S8
/* The U8S8 row's: a pair of strips (one packing call and seven others at
 * 128 rows) fetches the next pair's KC lines, one per k row.  Alternating
 * builds, int8 128x4096x4096: 1.89 ms with 2 (and its source 8 rows ahead
 * in the packing call), 1.99 with 1, 1.88 with 4 (16 rows ahead). */
#define PT_GEMM_AMX_PF_GROUPS_S8 2
#endif
void pt_gemm_ukr_amx_bf16(int64_t kc, const void *a, const void *b, void *c, int64_t ldc, int mr, int nr,
                          int accumulate);
void pt_gemm_ukr_amx_u8s8(int64_t kc, const void *a, const void *b, void *c, int64_t ldc, int mr, int nr,
                          int accumulate);
/* The driver's A layout for them (pt_gemm_ukernel.a_prep): full steps of 16
 * k groups laid out as tiles in place, and the kernels that take it. */
void pt_gemm_amx_prep_a_bf16(void *panel, int64_t kcp);
void pt_gemm_amx_prep_a_u8s8(void *panel, int64_t kcp);
void pt_gemm_ukr_amx_bf16_prepped(int64_t kc, const void *a, const void *b, void *c, int64_t ldc, int mr, int nr,
                                  int accumulate);
void pt_gemm_ukr_amx_u8s8_prepped(int64_t kc, const void *a, const void *b, void *c, int64_t ldc, int mr, int nr,
                                  int accumulate);
/* pt_gemm_ukernel.pack_a_rows_prepped of the U8S8 row (gemm_amx.c). */
void pt_gemm_amx_pack_a_rows_u8s8(const uint8_t *const *rows, int rows_in, int nseg, int64_t seglen, uint8_t flip,
                                  void *dst, int32_t *sums);
/* The prepped kernels with the prefetch stream (pt_gemm_ukernel.run_pf)
 * and their packing forms (run_packing: bf16 or s8 B from its source). */
void pt_gemm_ukr_amx_bf16_prepped_pf(int64_t kc, const void *a, const void *b, void *c, int64_t ldc, int mr, int nr,
                                     int accumulate, struct pt_gemm_prefetch *pf);
void pt_gemm_ukr_amx_bf16_packing(int64_t kc, const void *a, const void *b_src, int64_t b_ld, int b_cols, void *b_dst,
                                  int32_t *b_sums, void *c, int64_t ldc, int mr, int nr, int accumulate,
                                  struct pt_gemm_prefetch *pf);
void pt_gemm_ukr_amx_u8s8_prepped_pf(int64_t kc, const void *a, const void *b, void *c, int64_t ldc, int mr, int nr,
                                     int accumulate, struct pt_gemm_prefetch *pf);
void pt_gemm_ukr_amx_u8s8_packing(int64_t kc, const void *a, const void *b_src, int64_t b_ld, int b_cols, void *b_dst,
                                  int32_t *b_sums, void *c, int64_t ldc, int mr, int nr, int accumulate,
                                  struct pt_gemm_prefetch *pf);

#endif
