/* F32 and BF16 microkernel rows (best first is not required: the registry
 * picks the highest usable level). */
#include "kernels/gemm/gemm_rows.h"
#include "kernels/gemm/gemm_ukr_generic.h"

#define GEN_MR PT_GEMM_GENERIC_MR
#define GEN_NR PT_GEMM_GENERIC_NR

const pt_gemm_ukernel pt_gemm_rows_f32[] = {
    {"generic_f32_4x16", PT_GEMM_F32, PT_ISA_GENERIC, 0, GEN_MR, GEN_NR, 1, pt_gemm_ukr_generic_f32},
};
const size_t pt_gemm_rows_f32_count = sizeof pt_gemm_rows_f32 / sizeof pt_gemm_rows_f32[0];

const pt_gemm_ukernel pt_gemm_rows_bf16[] = {
    {"generic_bf16_4x16", PT_GEMM_BF16, PT_ISA_GENERIC, 0, GEN_MR, GEN_NR, 2, pt_gemm_ukr_generic_bf16},
};
const size_t pt_gemm_rows_bf16_count = sizeof pt_gemm_rows_bf16 / sizeof pt_gemm_rows_bf16[0];
