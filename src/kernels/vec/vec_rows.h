/* The rows of the vector-kernel table (vec_registry.c): one per ISA level,
 * each defined in the file that holds its code. */
#ifndef PARTITA_KERNELS_VEC_VEC_ROWS_H
#define PARTITA_KERNELS_VEC_VEC_ROWS_H

#include "kernels/vec/vec.h"

extern const pt_vec_ops pt_vec_row_generic; /* vec_generic.c */
extern const pt_vec_ops pt_vec_row_avx2;    /* kernels/x86/vec_avx2.c */
extern const pt_vec_ops pt_vec_row_avx512;  /* kernels/x86/vec_avx512.c */

#endif
