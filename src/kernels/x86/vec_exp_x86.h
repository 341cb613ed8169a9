/* exp(x) on a vector of floats, shared by the AVX2 and AVX-512 rows of the
 * vector-kernel table (included only from files built with those flags).
 * x = n·ln2 + r with |r| <= ln2/2 (n rounded to nearest, ln2 split in a
 * high part exact in f32 and a low correction); exp(r) by its Taylor
 * polynomial to degree 6 (truncation error below 2^-24 relative on that
 * range); the result scaled by 2^n. */
#ifndef PARTITA_KERNELS_X86_VEC_EXP_X86_H
#define PARTITA_KERNELS_X86_VEC_EXP_X86_H

#define PT_EXP_LOG2E 1.44269504088896341f
#define PT_EXP_LN2_HI 0.693359375f
#define PT_EXP_LN2_LO (-2.12194440e-4f)
#define PT_EXP_MAX 88.7228394f   /* above: +inf */
#define PT_EXP_MIN (-103.972084f) /* below: 0 (f32 subnormals end here) */
/* Softmax terms (exp of x minus the row maximum or the log-sum-exp) below
 * e^-87, where the polynomial times 2^n may fall under FLT_MIN, are 0: a
 * subnormal result costs a microcode assist per instruction on Intel cores
 * (75 ns a vector against 2.6 measured on a Xeon with AVX512-FP16), and so
 * does every later multiply that takes it; SDPA f32 with scores spread over
 * a hundred ran 2.1 times slower.  Such a term adds under 2^-125 to a sum of
 * at least 1; in the 1 + exp(-x) of sigmoid and of GELU's tanh form it
 * leaves 1 exactly as it was. */
#define PT_EXP_NORMAL_MIN (-87.f)
#define PT_EXP_C6 (1.f / 720.f)
#define PT_EXP_C5 (1.f / 120.f)
#define PT_EXP_C4 (1.f / 24.f)
#define PT_EXP_C3 (1.f / 6.f)
#define PT_EXP_C2 0.5f

/* 2^f on [0, 1) to a relative 2.6e-6 (a least-maximum relative error fit of
 * degree 4), for exp results that are rounded to bf16 / f16 afterwards. */
#define PT_EXP2_NARROW_C0 1.0000026226043701f
#define PT_EXP2_NARROW_C1 0.6930038332939148f
#define PT_EXP2_NARROW_C2 0.2414427548646927f
#define PT_EXP2_NARROW_C3 0.05201146379113197f
#define PT_EXP2_NARROW_C4 0.013534167781472206f

/* P of erfc's t·exp(-z² + P(t)) to degree 5, fitted for the least maximum
 * error on t in [1/6, 1] (z in [0, 10]): erfc within 7.6e-6 relative, for
 * results rounded to bf16 / f16 afterwards. */
#define PT_ERFC_NARROW_P0 (-1.2665417194366455f)
#define PT_ERFC_NARROW_P1 1.018013596534729f
#define PT_ERFC_NARROW_P2 0.25444313883781433f
#define PT_ERFC_NARROW_P3 0.47449320554733276f
#define PT_ERFC_NARROW_P4 (-0.7091907858848572f)
#define PT_ERFC_NARROW_P5 0.2287902534008026f

/* tanh: for |x| < PT_TANH_SMALL its odd Taylor series to x^15 (the first
 * omitted term is below 2^-24 relative there); above, 1 - 2 / (exp(2|x|) + 1)
 * with the sign of x. */
#define PT_TANH_SMALL 0.55f
#define PT_TANH_T3 (-1.f / 3.f)
#define PT_TANH_T5 (2.f / 15.f)
#define PT_TANH_T7 (-17.f / 315.f)
#define PT_TANH_T9 (62.f / 2835.f)
#define PT_TANH_T11 (-1382.f / 155925.f)
#define PT_TANH_T13 (21844.f / 6081075.f)
#define PT_TANH_T15 (-929569.f / 638512875.f)

/* erfc(z) for z >= 0 as t·exp(-z² + P(t)), t = 1 / (1 + z/2): the Chebyshev
 * fit published in Numerical Recipes (relative error below 1.2e-7 for every
 * z >= 0), so GELU(x) = x·erfc(-x/√2)/2 keeps its relative accuracy for
 * negative x too. */
#define PT_ERFC_P0 (-1.26551223f)
#define PT_ERFC_P1 1.00002368f
#define PT_ERFC_P2 0.37409196f
#define PT_ERFC_P3 0.09678418f
#define PT_ERFC_P4 (-0.18628806f)
#define PT_ERFC_P5 0.27886807f
#define PT_ERFC_P6 (-1.13520398f)
#define PT_ERFC_P7 1.48851587f
#define PT_ERFC_P8 (-0.82215223f)
#define PT_ERFC_P9 0.17087277f

#endif
