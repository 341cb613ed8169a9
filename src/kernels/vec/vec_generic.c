/* Portable row of the vector-kernel table: plain loops over libm. */
#include <math.h>

#include "kernels/vec/vec_rows.h"

static float generic_max(const float *x, int64_t n) {
    float m = -INFINITY;
    for (int64_t i = 0; i < n; ++i)
        if (x[i] > m) m = x[i];
    return m;
}

static float generic_exp_sum(float *x, int64_t n, float sub) {
    float s = 0.f;
    for (int64_t i = 0; i < n; ++i) {
        x[i] = expf(x[i] - sub);
        s += x[i];
    }
    return s;
}

static void generic_scale(float *x, int64_t n, float s) {
    for (int64_t i = 0; i < n; ++i) x[i] *= s;
}

const pt_vec_ops pt_vec_row_generic = {
    .name = "generic", .level = PT_ISA_GENERIC, .max = generic_max, .exp_sum = generic_exp_sum, .scale = generic_scale};
