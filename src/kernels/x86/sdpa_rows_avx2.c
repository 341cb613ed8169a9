/* AVX2 row of the SDPA row-operation table (kernels/fused/sdpa_rows.h): the
 * portable loop bodies compiled with AVX2. */
#define SD_ROWS_F16C 1 /* built with -mf16c */
#include "kernels/fused/sdpa_rows.h"

PT_SDPA_ROWS_PORTABLE_Q(avx2)
PT_SDPA_ROWS_DEFINE(avx2, "avx2", PT_ISA_AVX2);
