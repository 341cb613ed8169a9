/* Vector row kernels: the element-wise building blocks that attention,
 * SoftMax and the memory-bound kernels share (row maximum, exp with a sum,
 * scaling).  One table row per ISA level, the best usable row chosen once
 * per process (PARTITA_ISA caps it), as for the GEMM microkernels.
 *
 * Every function is pure: no allocation, no IR, any n >= 0 (tails
 * included), no alignment required.  Accuracy: the generic row calls libm
 * (expf); the SIMD rows evaluate exp with a range reduction and a degree-6
 * polynomial, within 2 ulp of expf over the f32 range, exactly 0 below
 * -103.97 (so exp(-inf) = 0) and +inf above 88.73; NaN stays NaN. */
#ifndef PARTITA_KERNELS_VEC_VEC_H
#define PARTITA_KERNELS_VEC_VEC_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/cpu.h"

typedef struct pt_vec_ops {
    const char *name; /* "avx512": shown by verbose */
    pt_isa_level level;
    unsigned features; /* PT_CPU_* sub-features required on top of level */
    /* max_i x[i]; -inf for n = 0 (NaN elements are skipped). */
    float (*max)(const float *x, int64_t n);
    /* x[i] = exp(x[i] - sub) in place; returns Σ x[i] (f32, lane-wise partial sums). */
    float (*exp_sum)(float *x, int64_t n, float sub);
    /* x[i] *= s. */
    void (*scale)(float *x, int64_t n, float s);
} pt_vec_ops;

/* Best row usable under `cap` (never NULL: the generic row always is). */
const pt_vec_ops *pt_vec_select(pt_isa_level cap);
/* The row chosen once for the process (cap = pt_isa()). */
const pt_vec_ops *pt_vec(void);

/* Every row (tests walk them; rows the CPU cannot run included). */
size_t pt_vec_count(void);
const pt_vec_ops *pt_vec_at(size_t i);

#endif
