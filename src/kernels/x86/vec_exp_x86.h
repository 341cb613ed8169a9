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
#define PT_EXP_C6 (1.f / 720.f)
#define PT_EXP_C5 (1.f / 120.f)
#define PT_EXP_C4 (1.f / 24.f)
#define PT_EXP_C3 (1.f / 6.f)
#define PT_EXP_C2 0.5f

#endif
