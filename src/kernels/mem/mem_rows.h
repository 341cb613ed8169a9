/* ISA rows of the memory-bound kernels' own fused steps (kernels/mem/): what
 * the shared vector table (kernels/vec/vec.h) composes from separate passes
 * over a row, done here in one pass with the narrow types converted in
 * registers and, for outputs much larger than the caches, non-temporal
 * stores (a cached store first reads the line it overwrites: a third stream
 * of memory traffic on top of the read and the write).
 *
 * Only the AVX-512 level has rows; pt_mem_rows() is NULL below it (or under
 * PARTITA_ISA=avx2 / generic), and the kernels then compose the vector
 * table's steps.  Rows are pure functions: no allocation, any n >= 0, no
 * alignment required (streaming starts at the first 64-byte boundary of the
 * destination).  Results are those of the vector table's steps (bit-identical
 * conversions, the f64 normalisation of vec.h) except where noted. */
#ifndef PARTITA_KERNELS_MEM_MEM_ROWS_H
#define PARTITA_KERNELS_MEM_MEM_ROWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/ref/eltwise_math.h"
#include "runtime/cpu.h"

/* Outputs of at least this many bytes are streamed past the caches (half the
 * last-level cache of most parts: smaller results stay cached for the next op). */
#define PT_MEM_STREAM_BYTES ((size_t)16 << 20)

/* Floats a row op's staging buffer takes per row of n elements (whole
 * 64-byte lines). */
#define PT_MEM_ROW_FLOATS(n) (((n) + 15) / 16 * 16)

typedef struct pt_mem_rows {
    const char *name;
    pt_isa_level level;
    unsigned features; /* PT_CPU_* sub-features required on top of level */
    /* dst[0, n) of type dt (f32, bf16, f16) = src rounded as vec.h's
     * conversions, written with non-temporal stores; meanwhile the pf_bytes
     * at pf (the source of the caller's next piece; NULL: none) are
     * prefetched into L2, so that reads overlap the writes. */
    void (*stream)(void *dst, dnnl_data_type_t dt, const float *src, int64_t n, const void *pf, size_t pf_bytes);
    /* Orders this thread's non-temporal stores before its later stores (once
     * at the end of a thread's share). */
    void (*fence)(void);
    /* LayerNorm (RMSNorm when rms) along each of `rows` consecutive rows of
     * n elements: dst = ((x - mean)·inv)·g + b with inv = 1/sqrt(var + eps),
     * x f32 or bf16, dst f32 or bf16, the mean 0 for RMSNorm.  Pipelined as
     * softmax below.  The statistics come from f64 sums of x - k and
     * (x - k)² (k = x[0], 0 for RMSNorm) in one pass.
     * - f32 dst: normalised in f64 with g64, b64 (f64 arrays or NULL) and
     *   rounded once, as vec.h's normalize; a bf16 x is widened into xb
     *   (2·PT_MEM_ROW_FLOATS(n) floats) on the way.
     * - bf16 dst: normalised in f32 with g32, b32 (f32 arrays or NULL; see
     *   docs/numerics.md); within 1 bf16 ulp of the f64 result.  Without st
     *   the statistics come from f32 lane sums instead (worst-case relative
     *   error of the variance about 2⁻¹⁶, of the mean about 2⁻¹⁸ of the
     *   standard deviation; typically near 2⁻²⁴·√n): still within 1 bf16 ulp
     *   except for |x - mean| below about 2⁻⁸ standard deviations, where the
     *   error stays below 2⁻¹⁸·|g| absolute.
     * st (NULL or 2 per row): each row's mean and variance from the f64
     * sums.  Streamed when `stream`. */
    void (*norm)(void *dst, dnnl_data_type_t ddt, bool stream, const void *x, dnnl_data_type_t xdt, int64_t n,
                 int64_t rows, bool rms, double eps, const double *g64, const double *b64, const float *g32,
                 const float *b32, float *xb, double *st);
    /* dst[0, n) (type ddt) = src (type sdt) converted; f32, bf16, f16. */
    void (*convert)(void *dst, dnnl_data_type_t ddt, const void *src, dnnl_data_type_t sdt, int64_t n, bool stream);
    /* dst = f(src) for ReLU (bit-identical), Sigmoid (as vec.h's rows),
     * GELU (tanh form as vec.h's rows; erf form: see docs/numerics.md);
     * false for other kinds (n = 0 asks whether the kind is one). */
    bool (*unary)(const pt_eltwise_params *p, void *dst, dnnl_data_type_t ddt, const void *src, dnnl_data_type_t sdt,
                  int64_t n, bool stream);
    /* dst[i] = a[i·as] op b[i·bs] (as, bs in {0, 1}) for the kinds of vec.h's
     * binary, the reference's f32 arithmetic; false for other kinds. */
    bool (*binary)(int kind, void *dst, dnnl_data_type_t ddt, const void *a, dnnl_data_type_t adt, int64_t as,
                   const void *b, dnnl_data_type_t bdt, int64_t bs, int64_t n, bool stream);
    /* Quantize: dst (s8 / u8) = x·s + z, then as ir/dtype.c converts (s holds
     * the reciprocals of the scales); dequantize: dst (f32, bf16, f16) =
     * (x - z)·s; each step rounded to f32 as the reference does.  x of type
     * sdt: f32, bf16 or f16 when quantizing; s8, u8, s4 or u4 (4-bit data
     * starting at the low nibble of its first byte) when dequantizing.  s and z hold one value (step 0), one
     * per element (step 1) or, dequantizing, one per group of `step`
     * elements (a power of two >= 16) from the first; z NULL (step 0 only):
     * no zero point.  Float outputs streamed
     * when `stream`.  False for other types (n = 0 asks). */
    bool (*quant)(void *dst, dnnl_data_type_t ddt, const void *src, dnnl_data_type_t sdt, int64_t n, const float *s,
                  const float *z, int64_t step, bool quantize, bool stream);
    /* GroupNorm over a channel-major block of n elements (x f32, bf16 or
     * f16): mean = Σx / n and var = Σ(x - mean)² / n with vec.h's f64 sums
     * (sum_f64, sum_sq_dev_f64: the same values) or, with `lanes32` (an f32
     * or bf16 block), LayerNorm's f32 lane sums about x[0] (the bounds of
     * docs/numerics.md); and per channel dst (f32,
     * bf16, f16) = (float)((x - mean)·scale + shift) in f64 as vec.h's
     * normalize1, streamed when `stream`, the pf_bytes at pf fetched into L2
     * meanwhile. */
    void (*gnorm_stats)(const void *x, dnnl_data_type_t xdt, int64_t n, bool lanes32, double *mean, double *var);
    void (*affine)(void *dst, dnnl_data_type_t ddt, bool stream, const void *x, dnnl_data_type_t xdt, int64_t n,
                   double mean, double scale, double shift, const void *pf, size_t pf_bytes);
    /* Reductions over the innermost axis, `rows` (<= 16) rows of n elements
     * `ld` apart (src f32, bf16 or f16): acc[j] = step(acc[j], x[j][i]) for
     * i = 0, 1, ... in order, the reference's chain of each row (Sum: +,
     * Prod: ·, Max / Min: "greater / less or NaN replaces"), sixteen rows
     * side by side: bit-identical. */
    void (*reduce)(int kind, float *acc, const void *src, dnnl_data_type_t sdt, int64_t ld, int rows, int64_t n);
    /* SoftMax along each of `rows` consecutive rows of n elements: dst
     * (type ddt) = exp(src - max) / Σ exp(src - max), src of type sdt (f32,
     * bf16, f16), as the vector table composes it (max, exp_sum, scale by
     * 1/sum: bit-identical); x (2·PT_MEM_ROW_FLOATS(n) floats, in L1 / L2)
     * holds two rows in f32: one row is written in pieces while the next
     * one's passes run, the rows ahead prefetched into L2.  A row whose
     * maximum is -inf gives zeros when inf_as_zero.  Streamed when
     * `stream`. */
    void (*softmax)(void *dst, dnnl_data_type_t ddt, bool stream, const void *src, dnnl_data_type_t sdt, int64_t n,
                    int64_t rows, float *x, bool inf_as_zero);
} pt_mem_rows;

extern const pt_mem_rows pt_mem_rows_avx512;     /* kernels/x86/mem_avx512.c */
extern const pt_mem_rows pt_mem_rows_avx512bf16; /* kernels/x86/mem_avx512bf16.c */

/* Best row usable under `cap`, or NULL. */
const pt_mem_rows *pt_mem_rows_select(pt_isa_level cap);
/* The row chosen once for the process (cap = pt_isa()), or NULL. */
const pt_mem_rows *pt_mem_rows_get(void);
/* Every row (tests walk them; rows the CPU cannot run included). */
size_t pt_mem_rows_count(void);
const pt_mem_rows *pt_mem_rows_at(size_t i);

#endif
