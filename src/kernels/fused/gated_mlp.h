/* The fused gated-MLP kernel. */
#ifndef PARTITA_KERNELS_FUSED_GATED_MLP_H
#define PARTITA_KERNELS_FUSED_GATED_MLP_H

#include "kernels/kernel.h"

/* Builds the fused gated-MLP kernel for a partition matched by a gated-MLP
 * row.  dnnl_unimplemented for forms it does not compute (1-D operands, a
 * transposed hidden operand, shapes that need broadcasting between the gate
 * and up branches), so the partition then runs op by op. */
pt_status pt_prepare_gated_mlp(const pt_op *const *ops, size_t nops, const pt_lt *in, size_t nin,
                               const pt_lt *out, size_t nout, pt_fused *fused);

#endif
