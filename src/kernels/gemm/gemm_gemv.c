/* Small-M path (see gemm_internal.h). */
#include "kernels/gemm/gemm_internal.h"

bool pt_gemm_gemv_supported(const pt_gemm_desc *d) {
    (void)d;
    return false; /* not yet: every M goes through the packed path */
}

void pt_gemm_gemv_tile(const pt_gemm_desc *d, const void *a, const void *b, const void *scales, const void *zps,
                       int64_t n0, int64_t nlen, float *c, int64_t ldc) {
    (void)d, (void)a, (void)b, (void)scales, (void)zps, (void)n0, (void)nlen, (void)c, (void)ldc;
}
