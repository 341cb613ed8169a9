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
    /* One pass over a row of src (f32 or bf16): s[0] = Σ (x[i] - k), s[1] =
     * Σ (x[i] - k)² in f64 lanes; a bf16 row is also widened into xb (unless
     * NULL). */
    void (*norm_stats)(const void *src, dnnl_data_type_t dt, int64_t n, double k, float *xb, double s[2]);
    /* dst[i] (type dt: f32 or bf16) = (((x[i] - mean)·inv)·g[i] + b[i]) in
     * f64 (as vec.h's normalize; g, b may be NULL), streamed when `stream`;
     * meanwhile the pf_bytes at pf (the next row) are prefetched into L2. */
    void (*norm_apply)(void *dst, dnnl_data_type_t dt, bool stream, const float *x, int64_t n, double mean,
                       double inv, const double *g, const double *b, const void *pf, size_t pf_bytes);
    /* A whole LayerNorm (rms: RMSNorm) row with a bf16 dst, x f32 or bf16,
     * g and b f32 (or NULL): the mean (0 for RMSNorm) and variance, then
     * dst = ((x - mean)·inv)·g + b with inv = 1/sqrt(var + eps), the
     * arithmetic in f32 (see docs/numerics.md).  With st (not NULL) the
     * statistics are norm_stats' f64 ones (k = x[0], 0 for RMSNorm), stored
     * in st[0] = mean, st[1] = variance, and dst is within 1 bf16 ulp of the
     * f64 result; without, they come from f32 lane sums (worst-case
     * relative error of the variance about 2⁻¹⁶, of the mean about 2⁻¹⁸ of
     * the standard deviation; typically near 2⁻²⁴·√n): still within 1 bf16
     * ulp except for |x - mean| below about 2⁻⁸ standard deviations, where
     * the error stays below 2⁻¹⁸·|g| absolute.  Streamed when `stream`, the
     * pf_bytes at pf (the next row) prefetched into L2 evenly over the
     * passes. */
    void (*norm_bf16)(uint16_t *dst, bool stream, const void *x, dnnl_data_type_t xdt, int64_t n, bool rms,
                      double eps, const float *g, const float *b, const void *pf, size_t pf_bytes, double st[2]);
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
