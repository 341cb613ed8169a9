/* The lowerings of the fused-kernel families (see fused_lowering.h): each
 * decodes a matched partition into its kernel's plan. */
#ifndef PARTITA_COMPILE_LOWER_FUSED_H
#define PARTITA_COMPILE_LOWER_FUSED_H

#include "compile/fused_lowering.h"

/* Gated MLP (roles of partition/pattern_mlp.h).  dnnl_unimplemented for
 * forms the kernel does not compute (1-D operands, a transposed hidden
 * operand, shapes that need broadcasting between the gate and up branches). */
pt_status pt_lower_gated_mlp(const pt_op *const *ops, const int *roles, size_t nops, const pt_lt *in, size_t nin,
                             const pt_lt *out, size_t nout, pt_fused *fused);

/* Chain partitions without a compute anchor (roles of
 * partition/pattern_chain.h). */
pt_status pt_lower_chain_post_ops(const pt_op *const *ops, const int *roles, size_t nops, const pt_lt *in,
                                  size_t nin, const pt_lt *out, size_t nout, pt_fused *fused);
/* The same from the ops alone (the non-element-wise op is the anchor): for
 * tests. */
pt_status pt_prepare_chain_post_ops(const pt_op *const *ops, size_t nops, const pt_lt *in, size_t nin,
                                    const pt_lt *out, size_t nout, pt_fused *fused);

/* Compute partitions (roles of partition/pattern_chain.h). */
pt_status pt_lower_compute_post_ops(const pt_op *const *ops, const int *roles, size_t nops, const pt_lt *in,
                                    size_t nin, const pt_lt *out, size_t nout, pt_fused *fused);
/* The same from the ops alone (the compute op is the anchor), and the same
 * with every bf16/f16 intermediate rounded to its declared type (anchor
 * operands and output included): bit-identical to the op-by-op path
 * through the reference kernels.  For tests and debugging. */
pt_status pt_prepare_compute_post_ops(const pt_op *const *ops, size_t nops, const pt_lt *in, size_t nin,
                                      const pt_lt *out, size_t nout, pt_fused *fused);
pt_status pt_prepare_compute_post_ops_op_by_op(const pt_op *const *ops, size_t nops, const pt_lt *in, size_t nin,
                                               const pt_lt *out, size_t nout, pt_fused *fused);

#endif
