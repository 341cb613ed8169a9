/* Portable C microkernels (the generic rows of every compute kind): the
 * fallback on any CPU and the shape every SIMD row must agree with. */
#include "kernels/gemm/gemm_ukr_generic.h"

#include <string.h>

#include "ir/dtype_round.h"

#define GMR PT_GEMM_GENERIC_MR
#define GNR PT_GEMM_GENERIC_NR

/* Stores the accumulator tile into c (f32), only the mr x nr corner. */
static void store_f32(const float acc[GMR][GNR], float *c, int64_t ldc, int mr, int nr, int accumulate) {
    for (int i = 0; i < mr; ++i)
        for (int j = 0; j < nr; ++j) c[i * ldc + j] = accumulate ? c[i * ldc + j] + acc[i][j] : acc[i][j];
}

void pt_gemm_ukr_generic_f32(int64_t kc, const void *a, const void *b, void *c, int64_t ldc, int mr, int nr,
                             int accumulate) {
    const float *ap = a, *bp = b;
    float acc[GMR][GNR];
    memset(acc, 0, sizeof acc);
    for (int64_t k = 0; k < kc; ++k, ap += GMR, bp += GNR)
        for (int i = 0; i < GMR; ++i)
            for (int j = 0; j < GNR; ++j) acc[i][j] += ap[i] * bp[j];
    store_f32((const float(*)[GNR])acc, c, ldc, mr, nr, accumulate);
}

void pt_gemm_ukr_generic_bf16(int64_t kc, const void *a, const void *b, void *c, int64_t ldc, int mr, int nr,
                              int accumulate) {
    const uint16_t *ap = a, *bp = b;
    float acc[GMR][GNR];
    memset(acc, 0, sizeof acc);
    /* One k pair per step, both products summed first as vdpbf16ps does. */
    for (int64_t k = 0; k < kc; k += 2, ap += 2 * GMR, bp += 2 * GNR)
        for (int i = 0; i < GMR; ++i) {
            float a0 = pt_bf16_bits_to_f32(ap[2 * i]), a1 = pt_bf16_bits_to_f32(ap[2 * i + 1]);
            for (int j = 0; j < GNR; ++j)
                acc[i][j] += a0 * pt_bf16_bits_to_f32(bp[2 * j]) + a1 * pt_bf16_bits_to_f32(bp[2 * j + 1]);
        }
    store_f32((const float(*)[GNR])acc, c, ldc, mr, nr, accumulate);
}

void pt_gemm_ukr_generic_u8s8(int64_t kc, const void *a, const void *b, void *c, int64_t ldc, int mr, int nr,
                              int accumulate) {
    const uint8_t *ap = a;
    const int8_t *bp = b;
    int32_t acc[GMR][GNR];
    memset(acc, 0, sizeof acc);
    for (int64_t k = 0; k < kc; k += 4, ap += 4 * GMR, bp += 4 * GNR)
        for (int i = 0; i < GMR; ++i)
            for (int j = 0; j < GNR; ++j) {
                int32_t s = 0;
                for (int q = 0; q < 4; ++q) s += (int32_t)ap[4 * i + q] * (int32_t)bp[4 * j + q];
                acc[i][j] += s;
            }
    int32_t *cc = c;
    for (int i = 0; i < mr; ++i)
        for (int j = 0; j < nr; ++j) cc[i * ldc + j] = accumulate ? cc[i * ldc + j] + acc[i][j] : acc[i][j];
}
