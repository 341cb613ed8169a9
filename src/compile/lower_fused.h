/* The lowerings of the fused-kernel families (see fused_lowering.h): each
 * decodes a matched partition into its kernel's plan. */
#ifndef PARTITA_COMPILE_LOWER_FUSED_H
#define PARTITA_COMPILE_LOWER_FUSED_H

#include <stdbool.h>

#include "compile/fused_lowering.h"

/* Helpers shared by the lowerings (lower_util.c). */
/* Index of the port holding tensor `id`, or -1. */
int pt_lower_port_of(const pt_lt *ports, size_t n, size_t id);
/* Index of the op (among ops[0..nops)) that produces tensor `id`, or -1. */
int pt_lower_producer(const pt_op *const *ops, size_t nops, size_t id);
/* Known rank (at most DNNL_MAX_NDIMS) and dims. */
bool pt_lower_lt_known(const pt_lt *lt);
bool pt_lower_same_dims(const pt_lt *a, const pt_lt *b);
/* Sets `bit` in mark[i] for every op i < limit that tensor `id` depends on. */
void pt_lower_mark_ancestors(const pt_op *const *ops, size_t nops, size_t id, int limit, unsigned bit,
                             unsigned *mark);

/* Gated MLP (roles of partition/pattern_mlp.h).  dnnl_unimplemented for
 * forms the kernel does not compute (1-D operands, a transposed hidden
 * operand, shapes that need broadcasting between the gate and up branches). */
pt_status pt_lower_gated_mlp(const pt_op *const *ops, const int *roles, size_t nops, const pt_lt *in, size_t nin,
                             const pt_lt *out, size_t nout, pt_fused *fused,
                             const pt_lower_ctx *lc);

/* Chain partitions without a compute anchor (roles of
 * partition/pattern_chain.h). */
pt_status pt_lower_chain_post_ops(const pt_op *const *ops, const int *roles, size_t nops, const pt_lt *in,
                                  size_t nin, const pt_lt *out, size_t nout, pt_fused *fused,
                                  const pt_lower_ctx *lc);
/* The same from the ops alone (the non-element-wise op is the anchor): for
 * tests. */
pt_status pt_prepare_chain_post_ops(const pt_op *const *ops, size_t nops, const pt_lt *in, size_t nin,
                                    const pt_lt *out, size_t nout, pt_fused *fused);

/* A lone Reorder between a plain weight and a packed-weight opaque layout
 * (seed 004 option 2; the layout ids come in lc->in_layout / out_layout):
 * wanted when one side is given in such a layout. */
bool pt_packed_reorder_wanted(const pt_op *op, const pt_lower_ctx *lc);
pt_status pt_lower_packed_reorder(const pt_op *const *ops, size_t nops, const pt_lt *in, size_t nin, const pt_lt *out,
                                  size_t nout, pt_fused *fused, const pt_lower_ctx *lc);

/* A lone ConvolutionBackwardWeights on the GEMM microkernels. */
pt_status pt_lower_conv_bwd_weights(const pt_op *const *ops, const int *roles, size_t nops, const pt_lt *in,
                                    size_t nin, const pt_lt *out, size_t nout, pt_fused *fused,
                                    const pt_lower_ctx *lc);

/* Compute partitions (roles of partition/pattern_chain.h). */
pt_status pt_lower_compute_post_ops(const pt_op *const *ops, const int *roles, size_t nops, const pt_lt *in,
                                    size_t nin, const pt_lt *out, size_t nout, pt_fused *fused,
                                    const pt_lower_ctx *lc);
/* The same from the ops alone (the compute op is the anchor), and the same
 * with every bf16/f16 intermediate rounded to its declared type (anchor
 * operands and output included): bit-identical to the op-by-op path
 * through the reference kernels.  For tests and debugging. */
/* A MatMul step of an op-by-op partition bound to the GEMM engine (its
 * ports are the op's own inputs and output, in order).  dnnl_unimplemented
 * when the engine does not take it (the step keeps its reference kernel). */
pt_status pt_bind_matmul_engine(const pt_op *op, const pt_lower_ctx *lc, pt_bound_kernel *out);

pt_status pt_prepare_compute_post_ops(const pt_op *const *ops, size_t nops, const pt_lt *in, size_t nin,
                                      const pt_lt *out, size_t nout, pt_fused *fused);
pt_status pt_prepare_compute_post_ops_op_by_op(const pt_op *const *ops, size_t nops, const pt_lt *in, size_t nin,
                                               const pt_lt *out, size_t nout, pt_fused *fused);
/* The compile path's kernel (GEMM engine for MatMul and Convolution, math
 * mode strict at planning; a Convolution follows the run's mode): not
 * bit-identical, compared within the engine's bound.  For tests. */
pt_status pt_prepare_compute_post_ops_engine(const pt_op *const *ops, size_t nops, const pt_lt *in, size_t nin,
                                             const pt_lt *out, size_t nout, pt_fused *fused);

#endif
