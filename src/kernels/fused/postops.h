/* Element-wise chain programs for fused kernels (fusion-patterns.md §2.1-§2.4,
 * §1.2 rule 5, numerics §18).
 *
 * A program is compiled once, at prepare time, from a list of element-wise
 * ops (in execution order) and runs over an "iteration space": the logical
 * dims of the value the chain computes (for an epilogue, the anchor output).
 * Each op becomes one instruction of a small register machine whose
 * registers hold a contiguous run of f32 values along the last iteration
 * dim.  An op input is one of
 *   - the chain's entering value `src` (the caller's buffer, e.g. a MatMul
 *     output row), or the output of an earlier op of the list (any earlier
 *     value, so Multiply(x, Sigmoid(x)) works);
 *   - a partition input port: any data type (including int8/int4/f8 and
 *     boolean), any strides, numpy-broadcast into the op (BiasAdd /
 *     BatchNormInference parameters along the channel axis, quantization
 *     parameters along `axis` or per group);
 * and ops whose inputs are all ports (Dequantize(ext), TypeCast(ext bias))
 * are simply computed per element as well, broadcast into the iteration
 * space (element-wise ops commute with broadcasting).
 *
 * Supported ops: the unary eltwise ops (Abs ... Tanh, also Reciprocal and
 * Pow), the binary ops (Add, Subtract, Multiply, Divide, Maximum, Minimum,
 * SquaredDifference, GreaterEqual), BiasAdd, BatchNormInference (parameters
 * from ports), Select, TypeCast, Quantize / Dequantize (per_tensor,
 * per_channel) and DynamicQuantize / DynamicDequantize (per_tensor,
 * per_channel, per_group).  Anything else makes create() return
 * dnnl_unimplemented, so the caller can fall back to op-by-op execution.
 *
 * Numerics: every op computes in f32 with the reference kernels' formulas
 * (BatchNormInference in double, as the reference does), bit for bit.  A
 * value whose declared type is an integer, f8 or boolean type is rounded to
 * it before the next op reads it (int8 saturation with round-half-even, f8
 * conversion...), as both the op-by-op path and the benchmark reference do.
 * bf16/f16 values are rounded only with desc.round_floats: that reproduces
 * the op-by-op path exactly; without it they stay f32 as in the benchmark
 * reference (fusion-patterns.md §18.2: a TypeCast inside a partition is a
 * no-op there, intermediates are not rounded), which is what fused
 * partitions must match.  The result itself is rounded only with
 * desc.round_result; otherwise the caller stores it with pt_run_store, which
 * performs the conversion.
 *
 * Use:
 *   prepare: pt_postops_create(&desc, &prog)
 *   execute: bound = scratch of pt_postops_bound_bytes(prog) bytes;
 *            pt_postops_bind(prog, ports, nports, bound)          (once)
 *            per thread: tmp = pt_postops_tmp_floats(prog, max_run) floats
 *            per run:    pt_postops_apply(bound, x, n, idx0, tmp)  (any thread)
 *   release: pt_postops_destroy(prog)
 * apply() reads only `bound` and the ports, so it may run concurrently. */
#ifndef PARTITA_KERNELS_FUSED_POSTOPS_H
#define PARTITA_KERNELS_FUSED_POSTOPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/op.h" /* until the fused lowering moves to compile/ */
#include "kernels/kernel.h"

typedef struct pt_postops pt_postops;

typedef struct {
    const pt_op *const *ops; /* chain ops in execution order (may be 0 ops) */
    size_t nops;
    bool has_src;            /* a value enters from the caller's buffer */
    size_t src_id;           /* its logical tensor id (has_src) */
    dnnl_data_type_t src_dt; /* its declared type (has_src; the caller rounded to it) */
    int src_ndims;           /* its dims (has_src; src_dims NULL: the iteration dims): */
    const int64_t *src_dims; /* the iteration dims, or those without leading 1s */
    int ndims;               /* iteration space: the result's dims */
    const int64_t *dims;
    size_t result_id;        /* tensor the chain computes: an op output, the src,
                              * or (no ops, no src) an input port to load */
    bool round_result;       /* round the result to its declared type in apply() */
    bool round_floats;       /* also round to bf16/f16 declared types (see below) */
    const pt_lt *in;         /* partition input ports (compiled order) */
    size_t nin;
} pt_postops_desc;

/* Compiles the chain.  dnnl_unimplemented (with a verbose line) for ops,
 * shapes or operand forms it does not handle; dnnl_out_of_memory. */
pt_status pt_postops_create(const pt_postops_desc *d, pt_postops **out);
void pt_postops_destroy(pt_postops *p);

/* Declared data type of the result (the type pt_run_store must convert to). */
dnnl_data_type_t pt_postops_result_dt(const pt_postops *p);

/* Bytes of the binding (port pointers, per-channel BatchNorm tables), and
 * f32 elements of per-thread temporary storage apply() needs for runs of at
 * most `max_run` elements. */
size_t pt_postops_bound_bytes(const pt_postops *p);
size_t pt_postops_tmp_floats(const pt_postops *p, int64_t max_run);

/* Binds the partition's input views for one execution.  `mem` holds
 * pt_postops_bound_bytes(p) bytes, 16-byte aligned, and stays valid while
 * apply() runs. */
pt_status pt_postops_bind(const pt_postops *p, const pt_tview *in, size_t nin, void *mem);

/* Runs the chain on n (>= 1) consecutive elements along the last iteration
 * dim starting at logical index idx0[0..ndims) (the run must stay inside
 * that dim).  x holds the src values on entry (when the chain has a src) and
 * the result on return.  tmp: pt_postops_tmp_floats(p, n) floats. */
void pt_postops_apply(const void *bound, float *x, int64_t n, const int64_t *idx0, float *tmp);

/* True when the result is computed by reading partition input `port` once
 * per element, at the element's own position (an operand with the
 * iteration space's dims and no other use in the chain).  An output with
 * the same dims, data type and strides as that port may then share its
 * buffer, provided the caller reads the port nowhere else and writes each
 * output run only after applying the chain to it (in-place pair, abi.md). */
bool pt_postops_inplace_port(const pt_postops *p, size_t port);

/* Converting run access helpers shared by fused kernels: n elements at
 * element offset `off`, element stride `stride`, of a buffer of type dt. */
void pt_run_load(const void *base, dnnl_data_type_t dt, int64_t off, int64_t stride, float *x, int64_t n);
void pt_run_store(void *base, dnnl_data_type_t dt, int64_t off, int64_t stride, const float *x, int64_t n);
/* Rounds n values in place to data type dt (what a store/load round trip
 * through dt gives; identity for f32). */
void pt_run_round(dnnl_data_type_t dt, float *x, int64_t n);

#endif
