/* The microkernel tables, one per compute kind; gemm_registry.c selects from
 * them.  Adding an ISA variant is one row in the kind's table file
 * (gemm_rows_float.c: F32 and BF16; gemm_rows_int.c: U8S8) plus the file
 * that holds the microkernel (src/kernels/x86/, with its own ISA flags). */
#ifndef PARTITA_KERNELS_GEMM_GEMM_ROWS_H
#define PARTITA_KERNELS_GEMM_GEMM_ROWS_H

#include "kernels/gemm/gemm.h"

extern const pt_gemm_ukernel pt_gemm_rows_f32[];
extern const size_t pt_gemm_rows_f32_count;
extern const pt_gemm_ukernel pt_gemm_rows_bf16[];
extern const size_t pt_gemm_rows_bf16_count;
extern const pt_gemm_ukernel pt_gemm_rows_u8s8[];
extern const size_t pt_gemm_rows_u8s8_count;

#endif
