/* U8S8 microkernel rows (u8 x s8 -> s32 in groups of four k). */
#include "kernels/gemm/gemm_rows.h"
#include "kernels/gemm/gemm_ukr_generic.h"

const pt_gemm_ukernel pt_gemm_rows_u8s8[] = {
    {"generic_u8s8_4x16", PT_GEMM_U8S8, PT_ISA_GENERIC, 0, PT_GEMM_GENERIC_MR, PT_GEMM_GENERIC_NR, 4,
     pt_gemm_ukr_generic_u8s8},
};
const size_t pt_gemm_rows_u8s8_count = sizeof pt_gemm_rows_u8s8 / sizeof pt_gemm_rows_u8s8[0];
