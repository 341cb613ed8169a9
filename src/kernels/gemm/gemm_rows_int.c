/* U8S8 microkernel rows (u8 x s8 -> s32 in groups of four k).  Rows of one
 * level are tried in table order, so AMX comes before AVX512-VNNI and
 * AVX-VNNI before plain AVX2. */
#include "kernels/gemm/gemm_rows.h"
#include "kernels/gemm/gemm_ukr_generic.h"
#include "kernels/x86/gemm_u8s8_x86.h"
#include "kernels/x86/gemm_ukr_amx_x86.h"

const pt_gemm_ukernel pt_gemm_rows_u8s8[] = {
    /* Its packing form sums columns with vpdpbusd and interleaves k rows
     * with vpermt2b (every CPU with AMX has both), two strips a call. */
    {"amx_u8s8_32x32", PT_GEMM_U8S8, PT_ISA_AVX512, PT_CPU_AMX_INT8 | PT_CPU_AVX512_VNNI | PT_CPU_AVX512_VBMI,
     PT_GEMM_AMX_MR, PT_GEMM_AMX_NR, 4, pt_gemm_ukr_amx_u8s8, pt_gemm_ukr_amx_u8s8_prepped_pf,
     pt_gemm_ukr_amx_u8s8_packing, pt_gemm_amx_prep_a_u8s8, pt_gemm_ukr_amx_u8s8_prepped, PT_GEMM_AMX_PF_GROUPS_S8,
     pt_gemm_amx_pack_a_rows_u8s8, NULL, 2},
    {"avx512vnni_u8s8_12x32", PT_GEMM_U8S8, PT_ISA_AVX512, PT_CPU_AVX512_VNNI, PT_GEMM_U8S8_AVX512_MR,
     PT_GEMM_U8S8_AVX512_NR, 4, pt_gemm_ukr_avx512vnni_u8s8, pt_gemm_ukr_avx512vnni_u8s8_pf, NULL, NULL,
     NULL, 0, NULL, NULL, 1},
    {"avxvnni_u8s8_6x16", PT_GEMM_U8S8, PT_ISA_AVX2, PT_CPU_AVX_VNNI, PT_GEMM_U8S8_AVXVNNI_MR,
     PT_GEMM_U8S8_AVXVNNI_NR, 4, pt_gemm_ukr_avxvnni_u8s8, NULL, NULL, NULL, NULL, 0, NULL, NULL, 1},
    {"avx2_u8s8_6x8", PT_GEMM_U8S8, PT_ISA_AVX2, 0, PT_GEMM_U8S8_AVX2_MR, PT_GEMM_U8S8_AVX2_NR, 4,
     pt_gemm_ukr_avx2_u8s8, NULL, NULL, NULL, NULL, 0, NULL, NULL, 1},
    {"generic_u8s8_4x16", PT_GEMM_U8S8, PT_ISA_GENERIC, 0, PT_GEMM_GENERIC_MR, PT_GEMM_GENERIC_NR, 4,
     pt_gemm_ukr_generic_u8s8, NULL, NULL, NULL, NULL, 0, NULL, NULL, 1},
};
const size_t pt_gemm_rows_u8s8_count = sizeof pt_gemm_rows_u8s8 / sizeof pt_gemm_rows_u8s8[0];
