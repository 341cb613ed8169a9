/* F32 and BF16 microkernel rows (best first is not required: the registry
 * picks the highest usable level).  The x86 rows exist only where the
 * compiler builds src/kernels/x86/. */
#include "kernels/gemm/gemm_rows.h"
#include "kernels/gemm/gemm_ukr_generic.h"
#include "kernels/x86/gemm_ukr_amx_x86.h"
#include "kernels/x86/gemm_ukr_float_x86.h"

#define GEN_MR PT_GEMM_GENERIC_MR
#define GEN_NR PT_GEMM_GENERIC_NR

const pt_gemm_ukernel pt_gemm_rows_f32[] = {
    {"generic_f32_4x16", PT_GEMM_F32, PT_ISA_GENERIC, 0, GEN_MR, GEN_NR, 1, pt_gemm_ukr_generic_f32, NULL, NULL, NULL,
     NULL, 0, NULL, NULL, 1},
    {"avx2_f32_6x16", PT_GEMM_F32, PT_ISA_AVX2, 0, PT_GEMM_AVX2_F32_MR, PT_GEMM_AVX2_F32_NR, 1,
     pt_gemm_ukr_avx2_f32, pt_gemm_ukr_avx2_f32_pf, pt_gemm_ukr_avx2_f32_packing, NULL, NULL, 0, NULL, NULL, 1},
    /* Its packing form packs up to two strips a call. */
    {"avx512_f32_12x32", PT_GEMM_F32, PT_ISA_AVX512, 0, PT_GEMM_AVX512_F32_MR, PT_GEMM_AVX512_F32_NR, 1,
     pt_gemm_ukr_avx512_f32, pt_gemm_ukr_avx512_f32_pf, pt_gemm_ukr_avx512_f32_packing, NULL, NULL, 0, NULL,
     pt_gemm_ukr_avx512_f32_segs, 2},
};
const size_t pt_gemm_rows_f32_count = sizeof pt_gemm_rows_f32 / sizeof pt_gemm_rows_f32[0];

const pt_gemm_ukernel pt_gemm_rows_bf16[] = {
    {"generic_bf16_4x16", PT_GEMM_BF16, PT_ISA_GENERIC, 0, GEN_MR, GEN_NR, 2, pt_gemm_ukr_generic_bf16, NULL, NULL,
     NULL, NULL, 0, NULL, NULL, 1},
    {"avx2_bf16_6x16", PT_GEMM_BF16, PT_ISA_AVX2, 0, PT_GEMM_AVX2_BF16_MR, PT_GEMM_AVX2_BF16_NR, 2,
     pt_gemm_ukr_avx2_bf16, NULL, NULL, NULL, NULL, 0, NULL, NULL, 1},
    /* Of one level the first usable row wins: AMX before vdpbf16ps.  Its
     * packing form packs up to two strips a call (the driver pairs them
     * for items of two A strips only). */
    {"amx_bf16_32x32", PT_GEMM_BF16, PT_ISA_AVX512, PT_CPU_AVX512_BF16 | PT_CPU_AMX_BF16, PT_GEMM_AMX_MR,
     PT_GEMM_AMX_NR, 2, pt_gemm_ukr_amx_bf16, pt_gemm_ukr_amx_bf16_prepped_pf, pt_gemm_ukr_amx_bf16_packing,
     pt_gemm_amx_prep_a_bf16, pt_gemm_ukr_amx_bf16_prepped, PT_GEMM_AMX_PF_GROUPS, NULL, NULL, 2},
    {"avx512bf16_bf16_12x32", PT_GEMM_BF16, PT_ISA_AVX512, PT_CPU_AVX512_BF16, PT_GEMM_AVX512BF16_MR,
     PT_GEMM_AVX512BF16_NR, 2, pt_gemm_ukr_avx512bf16_bf16, pt_gemm_ukr_avx512bf16_bf16_pf, NULL, NULL,
     NULL, 0, NULL, NULL, 1},
};
const size_t pt_gemm_rows_bf16_count = sizeof pt_gemm_rows_bf16 / sizeof pt_gemm_rows_bf16[0];
