/* Fused kernel of the chain rows that have no MatMul / Convolution anchor
 * (fusion-patterns.md §9-§14; numerics §18): pooling, normalization,
 * Interpolate, reduction, SoftMax, Reorder, Concat and Dropout partitions
 * and pure element-wise chains (fp_binary_post_ops, fp_eltwise_binary,
 * sum_fusion, typecast_quantize_fusion, ...).
 *
 * A partition is read as
 *   element-wise prologue -> at most one anchor op -> element-wise epilogue
 *   -> optional Dropout
 * where "element-wise" is what kernels/fused/postops.h compiles (a Reorder
 * counts as a TypeCast: it changes only the layout, and the output is
 * written with its own strides anyway), the anchor is any other op with a
 * reference kernel, and the prologue is the ops the anchor's inputs depend
 * on.
 *   - No anchor: one program over the output's iteration space, applied run
 *     by run and stored in the output's type; no intermediate exists.
 *   - With an anchor: each anchor input computed by the prologue is written
 *     once into an f32 buffer (the anchor needs all of it); the anchor's
 *     reference kernel writes its output into one f32 buffer (or straight
 *     into the partition output when nothing follows it; secondary outputs
 *     such as SoftMax stats or LayerNorm mean / variance go straight to
 *     their ports); the epilogue program then runs over that buffer in
 *     place and stores into the output.  Concat needs no buffer: each
 *     input's runs go through its prologue program and then straight
 *     through the epilogue at their place in the output.
 *   - Dropout at the end is applied per element after the program with the
 *     reference's Philox words (kernels/ref/philox.h).
 * Numerics follow the benchmark reference (§18.2), which the op-by-op path
 * of chain partitions also follows (compile.c widen_intermediates):
 * intermediates stay f32 (bf16/f16 intermediates are not rounded), integer
 * and f8 intermediates are rounded to their types, outputs are converted to
 * their declared types.  Anything else returns dnnl_unimplemented, and the
 * partition runs op by op. */
#ifndef PARTITA_KERNELS_FUSED_CHAIN_POST_OPS_H
#define PARTITA_KERNELS_FUSED_CHAIN_POST_OPS_H

#include <stddef.h>

#include "ir/op.h" /* until the fused lowering moves to compile/ */
#include "kernels/kernel.h"

/* pt_pattern_row.prepare for the chain rows listed above. */
pt_status pt_prepare_chain_post_ops(const pt_op *const *ops, size_t nops, const pt_lt *in, size_t nin,
                                    const pt_lt *out, size_t nout, pt_fused *fused);

#endif
