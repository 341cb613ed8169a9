/* AVX2 row of the SDPA row-operation table (kernels/fused/sdpa_rows.h): the
 * portable loop bodies compiled with AVX2. */
#include "kernels/fused/sdpa_rows.h"

PT_SDPA_ROWS_DEFINE(avx2, "avx2", PT_ISA_AVX2);
