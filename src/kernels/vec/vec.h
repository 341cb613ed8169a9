/* Vector row kernels: the element-wise building blocks that attention,
 * SoftMax and the memory-bound kernels share (row maximum, exp with a sum,
 * scaling).  One table row per ISA level, the best usable row chosen once
 * per process (PARTITA_ISA caps it), as for the GEMM microkernels.
 *
 * Every function is pure: no allocation, no IR, any n >= 0 (tails
 * included), no alignment required.  Accuracy: the generic row calls libm
 * (expf); the SIMD rows evaluate exp with a range reduction and a degree-6
 * polynomial, within 3 ulp of the exact value over the f32 range, exactly 0 below
 * -103.97 (so exp(-inf) = 0) and +inf above 88.73; NaN stays NaN. */
#ifndef PARTITA_KERNELS_VEC_VEC_H
#define PARTITA_KERNELS_VEC_VEC_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/ref/eltwise_math.h"
#include "runtime/cpu.h"

typedef struct pt_vec_ops {
    const char *name; /* "avx512": shown by verbose */
    pt_isa_level level;
    unsigned features; /* PT_CPU_* sub-features required on top of level */
    /* max_i x[i]; -inf for n = 0 (NaN elements are skipped). */
    float (*max)(const float *x, int64_t n);
    /* x[i] = exp(x[i] - sub) in place; returns Σ x[i] (f32, lane-wise partial
     * sums).  Softmax terms: a row may return 0 for terms below e^-87
     * (the SIMD rows do, x86/vec_exp_x86.h says why). */
    float (*exp_sum)(float *x, int64_t n, float sub);
    /* x[i] *= s. */
    void (*scale)(float *x, int64_t n, float s);

    /* ---- the memory-bound kernels (kernels/mem/) ---- */
    /* Conversions, rounding as ir/dtype_round.h (nearest even, subnormals
     * kept, NaN stays NaN): bf16 / f16 bits <-> f32. */
    void (*bf16_to_f32)(float *dst, const uint16_t *src, int64_t n);
    void (*f32_to_bf16)(uint16_t *dst, const float *src, int64_t n);
    void (*f16_to_f32)(float *dst, const uint16_t *src, int64_t n);
    void (*f32_to_f16)(uint16_t *dst, const float *src, int64_t n);
    /* Σ x[i] and Σ (x[i] - mean)² accumulated in f64 lanes. */
    double (*sum_f64)(const float *x, int64_t n);
    double (*sum_sq_dev_f64)(const float *x, int64_t n, double mean);
    /* y[i] = (float)(((x[i] - mean) · inv) · g[i] + b[i]) in f64, one
     * rounding to f32; g and b may be NULL (then not applied). */
    void (*normalize)(float *y, const float *x, int64_t n, double mean, double inv, const float *g,
                      const float *b);
    /* y[i] = (float)((x[i] - mean) · scale + shift) in f64 (GroupNorm: one
     * channel's gamma folded into scale). */
    void (*normalize1)(float *y, const float *x, int64_t n, double mean, double scale, double shift);
    /* Per-channel statistics and normalisation (GroupNorm over `rows`
     * channels-last rows of n channels, row r of x at x + r·ldx): with
     * d = x[i] - k[i] in f64, s1[i] += d and s2[i] += d² row after row (the
     * shifted sums of one pass); y[i] = (float)((x[i] - mean[i]) · scale[i]
     * + shift[i]) in f64; with `stream`, y may be written with
     * non-temporal stores (fenced before returning) where a row allows. */
    void (*acc_shift_f64)(double *s1, double *s2, const float *x, int64_t ldx, int64_t rows, const double *k,
                          int64_t n);
    void (*normalize_each)(float *y, int64_t ldy, const float *x, int64_t ldx, int64_t rows, int64_t n,
                           const double *mean, const double *scale, const double *shift, bool stream);
    /* acc[i] += x[i] in f64; y[i] = (float)(acc[i] / d) (AvgPool, as the
     * reference sums its taps). */
    void (*acc_f64)(double *acc, const float *x, int64_t n);
    void (*div_f64)(float *y, const double *acc, int64_t n, double d);
    /* y[i] = (x[i] - a) - b (LogSoftmax). */
    void (*sub2)(float *y, const float *x, int64_t n, float a, float b);
    /* y[i] = f(x[i]) for the unary kind of `p` (pt_eltwise_params of
     * kernels/ref/eltwise_math.h); false when the row has no vector form of
     * that kind (the generic row has all of them: the reference formulas). */
    bool (*eltwise)(const pt_eltwise_params *p, float *y, const float *x, int64_t n);
    /* y[i] = a[i·as] op b[i·bs] with as, bs in {0, 1} (0: a broadcast
     * scalar); op an Add / Subtract / Multiply / Divide / Maximum / Minimum
     * kind (false for others).  Results identical to the reference's f32
     * arithmetic. */
    bool (*binary)(int kind, float *y, const float *a, int64_t as, const float *b, int64_t bs, int64_t n);
    /* 8-bit integers <-> f32; to integers as ir/dtype.c: clamp to the
     * range, round to nearest even, NaN gives 0. */
    void (*s8_to_f32)(float *dst, const int8_t *src, int64_t n);
    void (*u8_to_f32)(float *dst, const uint8_t *src, int64_t n);
    void (*f32_to_s8)(int8_t *dst, const float *src, int64_t n);
    void (*f32_to_u8)(uint8_t *dst, const float *src, int64_t n);
} pt_vec_ops;

/* Best row usable under `cap` (never NULL: the generic row always is). */
const pt_vec_ops *pt_vec_select(pt_isa_level cap);
/* The row chosen once for the process (cap = pt_isa()). */
const pt_vec_ops *pt_vec(void);

/* Every row (tests walk them; rows the CPU cannot run included). */
size_t pt_vec_count(void);
const pt_vec_ops *pt_vec_at(size_t i);

#endif
