/* Fast single-op kernels of the memory-bound ops (SoftMax, LogSoftmax,
 * LayerNorm, RMSNorm, unary element-wise ops, binary ops with broadcast,
 * TypeCast / Reorder between f32, bf16 and f16) on dense tensors, built on
 * the vector-kernel table (kernels/vec/vec.h).  compile/lower_single_op.c
 * fills a plan per compiled partition; the plan's run function is a
 * pt_fused run.  Each pass keeps one row (or one chunk of 1024 elements) in
 * L1/L2 in f32, so the tensor crosses memory once; bf16 / f16 are
 * converted in registers on the way.  At the AVX-512 level (mem_rows.h) the
 * element-wise ops, conversions and binary ops load, compute and store per
 * vector in one pass, norms and SoftMax fuse their passes, and outputs of
 * PT_MEM_STREAM_BYTES or more bypass the caches (non-temporal stores).
 * OpenMP over rows or chunks with at least PT_MEM_BYTES_PER_THREAD per
 * thread (one thread for small tensors).
 * docs/numerics.md states how each differs from its reference kernel. */
#ifndef PARTITA_KERNELS_MEM_MEM_H
#define PARTITA_KERNELS_MEM_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/kernel.h"
#include "kernels/ref/eltwise_math.h"

#define PT_MEM_BYTES_PER_THREAD ((size_t)64 << 10)
#define PT_MEM_CHUNK 1024 /* elements per step of the element-wise kernels */

/* Which partition port holds each of the op's inputs and outputs (a
 * partition lists a tensor used twice once). */
typedef struct {
    int in[3], out[3];
} pt_mem_ports;

/* Data types the kernels load and store (f32, bf16, f16). */
bool pt_mem_dtype_ok(dnnl_data_type_t dt);
/* Dense row-major with known dims (the only layout these kernels take). */
bool pt_mem_dense(const pt_lt *lt);
/* Threads the plan sizes per-thread scratch for. */
int pt_mem_max_threads(void);

/* SoftMax / LogSoftmax along `axis` of a dense [outer, len, inner] tensor.
 * Scratch: per thread one f32 row (two for LogSoftmax). */
typedef struct {
    int64_t outer, len, inner;
    bool is_log, inf_as_zero;
    dnnl_data_type_t src_dt, dst_dt;
    int threads; /* planned: scratch holds this many rows */
    pt_mem_ports io;
} pt_mem_softmax_plan;
size_t pt_mem_softmax_scratch(const pt_mem_softmax_plan *p);
pt_status pt_mem_softmax_run(const pt_fused *f, const pt_tview *in, size_t nin, const pt_tview *out, size_t nout,
                             void *scratch, const pt_exec_ctx *ctx);

/* LayerNorm / RMSNorm over the last `len` elements of each of `rows` rows
 * (f64 statistics as the reference).  LayerNorm ports: src [, gamma, beta] ->
 * dst [, mean, variance]; RMSNorm: src [, gamma] -> dst.  Scratch: f32 gamma
 * and beta, and per thread two f32 rows. */
typedef struct {
    int64_t rows, len;
    bool rms, has_gamma, has_beta, has_stats;
    double eps;
    int threads;
    pt_mem_ports io;
} pt_mem_norm_plan;
size_t pt_mem_norm_scratch(const pt_mem_norm_plan *p);
pt_status pt_mem_norm_run(const pt_fused *f, const pt_tview *in, size_t nin, const pt_tview *out, size_t nout,
                          void *scratch, const pt_exec_ctx *ctx);

/* GroupNorm on a dense tensor.  NCX (or no spatial dims): the groups are
 * `groups` = N·G contiguous blocks of Cg channels × SP elements; statistics
 * as LayerNorm's, each channel's gamma folded into the f64 scale.  NXC
 * (`nxc`): per sample, an [SP, C] slab crossed three times (per-channel f64
 * sums, then squared deviations from the group mean, then the normalisation),
 * the SP rows split over the threads.  Ports: src [, gamma, beta] -> dst [,
 * mean, variance]. */
typedef struct {
    int64_t groups, g, cg, sp; /* groups: N·G blocks; g: G per sample */
    bool nxc, has_affine, has_stats;
    double eps;
    int threads;
    pt_mem_ports io;
} pt_mem_gnorm_plan;
size_t pt_mem_gnorm_scratch(const pt_mem_gnorm_plan *p);
pt_status pt_mem_gnorm_run(const pt_fused *f, const pt_tview *in, size_t nin, const pt_tview *out, size_t nout,
                           void *scratch, const pt_exec_ctx *ctx);

/* MaxPool / AvgPool on dense NXC tensors: per output pixel, the window's
 * taps in the reference's order, vectorised across the C contiguous
 * channels (MaxPool: first valid tap, then "greater replaces"; AvgPool: f64
 * sums divided once): bit-identical.  src / dst extents as the canonical
 * [N, C, D, H, W] view.  At the AVX-512 level each thread's pixels run in
 * kernels/x86/spatial_mem_x86.h (the channels in registers; no scratch). */
typedef struct {
    bool is_max, exclude;
    int64_t sd[5], dd[5]; /* src and dst extents */
    int64_t S[3], K[3], Dl[3], P[3];
    float lowest; /* MaxPool output of a window with no valid tap */
    int threads;
    pt_mem_ports io;
} pt_mem_pool_plan;
size_t pt_mem_pool_scratch(const pt_mem_pool_plan *p);
pt_status pt_mem_pool_run(const pt_fused *f, const pt_tview *in, size_t nin, const pt_tview *out, size_t nout,
                          void *scratch, const pt_exec_ctx *ctx);

/* Interpolate (nearest, linear) on dense NXC tensors: per output pixel the
 * reference's taps and weights (tables made at compile time by
 * pt_mem_interp_taps), the linear blend a·w + b·(1 - w) depth, height, then
 * width, vectorised across the C contiguous channels: bit-identical.  At the
 * AVX-512 level each thread's pixels run in kernels/x86/spatial_mem_x86.h
 * (linear over 2-3 dims: depth and height blended once per output row into
 * a scratch row of sd[4]·C floats per thread). */
typedef struct {
    int64_t i0, i1;
    float wl;
} pt_mem_interp_tap;
typedef struct {
    bool nearest, align_corners;
    int k; /* spatial dims */
    int64_t sd[5], dd[5];
    pt_mem_interp_tap *tab[3]; /* per slot, dd[2 + slot] entries (owned: one allocation at tab[0]) */
    int threads;
    pt_mem_ports io;
} pt_mem_interp_plan;
/* Fills p->tab (one allocation); false when out of memory. */
bool pt_mem_interp_taps(pt_mem_interp_plan *p);
size_t pt_mem_interp_scratch(const pt_mem_interp_plan *p);
pt_status pt_mem_interp_run(const pt_fused *f, const pt_tview *in, size_t nin, const pt_tview *out, size_t nout,
                            void *scratch, const pt_exec_ctx *ctx);

/* Unary element-wise op (the reference's formula where the vector row has
 * no form of the kind), or a conversion (`convert`: TypeCast / Reorder with
 * equal layouts), over n dense elements. */
typedef struct {
    int64_t n;
    bool convert;
    pt_eltwise_params op;
    pt_mem_ports io;
} pt_mem_unary_plan;
pt_status pt_mem_unary_run(const pt_fused *f, const pt_tview *in, size_t nin, const pt_tview *out, size_t nout,
                           void *scratch, const pt_exec_ctx *ctx);

/* Binary op with NumPy broadcast of two dense inputs into a dense dst: dims
 * merged into at most PT_MEM_BIN_DIMS runs, the last one the inner loop (each
 * input steps 0 or 1 element there). */
#define PT_MEM_BIN_DIMS 6
typedef struct {
    int kind, nd;
    int64_t dims[PT_MEM_BIN_DIMS], sa[PT_MEM_BIN_DIMS], sb[PT_MEM_BIN_DIMS]; /* strides in elements, 0: broadcast */
    int64_t n;
    pt_mem_ports io;
} pt_mem_binary_plan;
pt_status pt_mem_binary_run(const pt_fused *f, const pt_tview *in, size_t nin, const pt_tview *out, size_t nout,
                            void *scratch, const pt_exec_ctx *ctx);

/* Quantize / Dequantize / DynamicQuantize / DynamicDequantize on dense src
 * and dst (s8 / u8 / s4 / u4 integers, f32 / bf16 / f16 floats): the scale
 * and zero point of src element x sit at Σ_d (x_d / G[d])·ss[d] (zs[d] for
 * zero points) of the attribute lists or of inputs 1 and 2, as in the
 * reference.  Per chunk of the last dim: one scale for the chunk when it lies
 * in one group, else one per element; the arithmetic is the reference's
 * (x·(1/s) + z, (x - z)·s, each step rounded to f32). */
typedef struct {
    bool quantize, dynamic, has_zp;
    int nd;
    int64_t n, dims[DNNL_MAX_NDIMS], G[DNNL_MAX_NDIMS], ss[DNNL_MAX_NDIMS], zs[DNNL_MAX_NDIMS];
    float *scales;  /* static: the attribute lists (owned by the plan); reciprocals when quantizing */
    float *zps;
    pt_mem_ports io;
} pt_mem_quant_plan;
bool pt_mem_quant_dtype_ok(dnnl_data_type_t dt);

/* A same-type copy between two dense layouts that order the dims
 * differently (Reorder to a permuted layout, StaticTranspose seen as a copy
 * into a permuted view): dims of extent 1 dropped; `a` is the dim that is
 * contiguous in dst, `b` the one contiguous in src.  When they are the same
 * dim, rows are copied whole; otherwise in tiles over (a, b), so that both
 * sides touch whole cache lines (kernels/mem/mem_permute.c: the AVX-512
 * tiles, streaming and dim merging). */
typedef struct {
    int nd, a, b;
    int64_t dims[DNNL_MAX_NDIMS], ss[DNNL_MAX_NDIMS], ds[DNNL_MAX_NDIMS];
    size_t elem; /* bytes per element: 1, 2 or 4 */
    pt_mem_ports io;
} pt_mem_permute_plan;
pt_status pt_mem_permute_run(const pt_fused *f, const pt_tview *in, size_t nin, const pt_tview *out, size_t nout,
                             void *scratch, const pt_exec_ctx *ctx);

/* ReduceSum / ReduceMean / ReduceMax / ReduceMin / ReduceProd of a dense
 * [outer, len, inner] source over `len` into a dense [outer, inner] dst, in
 * the reference's order (each output accumulates its len inputs one after
 * another in f32), so results are bit-identical: vectorised across the
 * inner outputs, one sequential chain per output when inner = 1. */
typedef struct {
    int kind;
    int64_t outer, len, inner;
    pt_mem_ports io;
} pt_mem_reduce_plan;
pt_status pt_mem_reduce_run(const pt_fused *f, const pt_tview *in, size_t nin, const pt_tview *out, size_t nout,
                            void *scratch, const pt_exec_ctx *ctx);
pt_status pt_mem_quant_run(const pt_fused *f, const pt_tview *in, size_t nin, const pt_tview *out, size_t nout,
                           void *scratch, const pt_exec_ctx *ctx);

#endif
