/* Element-wise chain programs for fused kernels (post-ops and operand
 * prologues of docs/fusion.md; numerics of docs/numerics.md).
 *
 * A program is compiled once, at compile time, from a list of element-wise
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
 * reference (docs/numerics.md: a TypeCast inside a partition is a no-op
 * there, intermediates are not rounded), which is what fused
 * partitions must match.  The result itself is rounded only with
 * desc.round_result; otherwise the caller stores it with pt_run_store, which
 * performs the conversion.
 *
 * Use:
 *   compile: pt_postops_create(&desc, &prog) (compile/lower_postops.h)
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

#include "kernels/fused/run_io.h"
#include "kernels/kernel.h"
#include "kernels/ref/eltwise_math.h"

#define PO_MAXD DNNL_MAX_NDIMS
#define PO_MAX_REGS 64
#define PO_MAX_VALUES 256
#define PO_MAX_OPERANDS 3

typedef pt_eltwise_params po_unary;

/* ---- the program (built by compile/lower_postops.c, run by postops.c) ---- */

typedef enum { OPD_REG, OPD_PORT, OPD_CONST } po_opd_kind;

/* An instruction input: a register, or memory (a partition port or a
 * program-owned constant array) addressed per iteration dim by
 * (index / div) * es. */
typedef struct {
    po_opd_kind kind;
    int reg;   /* OPD_REG */
    int port;  /* OPD_PORT */
    int cidx;  /* OPD_CONST */
    dnnl_data_type_t dt;
    int64_t es[PO_MAXD];
    int64_t div[PO_MAXD];
} po_opd;

typedef enum { I_COPY, I_UNARY, I_BINARY, I_SELECT, I_BN, I_QUANT, I_DEQUANT } po_ikind;

typedef struct {
    po_ikind ik;
    int kind; /* op kind (binary operator) */
    po_unary un;
    po_opd a[PO_MAX_OPERANDS];
    int na;
    bool inv_given; /* I_QUANT: a[1] already holds 1/scale */
    int dst;
    dnnl_data_type_t dt;
    bool round;
    /* I_BN: parameters (ports) read at bind time into per-channel tables */
    int bn_port[4];
    dnnl_data_type_t bn_dt[4];
    int64_t bn_stride[4];
    int64_t bn_C;
    int bn_cdim;       /* iteration dim of the channel, -1 when C == 1 */
    size_t bn_off;     /* first double of this op's tables in the binding */
    double bn_eps;
} po_instr;

typedef struct pt_postops {
    int ndims;
    int64_t dims[PO_MAXD];
    po_instr *ins;
    int nins;
    int nregs;
    float **consts;
    int nconsts;
    dnnl_data_type_t result_dt;
    size_t bn_doubles;
    size_t nin;
} pt_postops;

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

/* A copy of p over fewer iteration dims: adjacent dims merged wherever every
 * memory operand steps through the pair as through one dim (no broadcast
 * inside it, nested strides, or broadcast over both), so that runs can be
 * longer than the last dim.  NULL when no dims merge, when a BatchNorm
 * instruction indexes a dim, or out of memory: then keep using p.  Shares
 * p's constants (p must outlive it); free with pt_postops_destroy_flat.
 * Meant for programs evaluated over their whole dense space. */
pt_postops *pt_postops_flatten(const pt_postops *p);
/* The same, merging only pairs of dims from `first_dim` on (dims before it
 * keep their indices). */
pt_postops *pt_postops_flatten_from(const pt_postops *p, int first_dim);
void pt_postops_destroy_flat(pt_postops *f);

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
 * output run only after applying the chain to it (an in-place pair, docs/api.md). */
bool pt_postops_inplace_port(const pt_postops *p, size_t port);

#endif
