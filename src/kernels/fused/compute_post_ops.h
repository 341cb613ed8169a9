/* Fused MatMul / Convolution / ConvTranspose partitions with prologue and
 * epilogue element-wise chains (fusion-patterns.md §2.2-§2.4, §5, §6, §7.1,
 * §7.2, §8).
 *
 * One prepare serves every compute row (fp_matmul_post_ops,
 * x8x8x_matmul_post_ops and the other quantized / bf16-typecast MatMul rows,
 * fp_conv_post_ops, x8x8x_conv_post_ops, fp_convtranspose_post_ops,
 * float_bmb, ...).  It works from the partition's op list alone:
 *   - exactly one anchor (MatMul, Convolution or ConvTranspose);
 *   - the ops that produce the anchor's src and weights inside the partition
 *     (Dequantize, DynamicDequantize, weight Quantize -> Dequantize,
 *     TypeCast, the bmb binary pre-chain, ...) become a prologue program per
 *     operand, applied while tiles of the operand are packed;
 *   - every other op forms the epilogue program (BiasAdd, BatchNormInference,
 *     POST*, post-sum Add(., Dequantize(ext)), Select, TypeCast, SmoothQuant
 *     Multiply/Divide, final Quantize), applied to each output tile while it
 *     is in cache;
 * any other shape returns dnnl_unimplemented (op-by-op fallback).  See
 * kernels/fused/postops.h for what the programs accept.
 *
 * Arithmetic is the reference kernels' (ref_matmul.c, ref_conv.c) bit for
 * bit: operands are converted to f32 (and rounded per the fpmath mode when
 * their declared type is f32), products accumulate in double in the
 * reference order (MatMul: k ascending, then + bias; Convolution: bias, then
 * input channel outer / kernel taps inner; ConvTranspose: bias, then taps
 * outer / input channel inner; taps outside the input are skipped) and the
 * sum is rounded to f32.  Intermediates follow the benchmark reference
 * (fusion-patterns.md §18.2): values of integer / f8 types (Quantize
 * outputs) are rounded to them, bf16/f16 intermediates - including a
 * TypeCast(bf16) MatMul operand and a bf16 MatMul output that a TypeCast
 * turns back into f32 - stay f32, and only the partition output is stored
 * in its type; this is what oneDNN's fused kernels compute too.  For f32
 * graphs that is exactly the op-by-op result.  Neither the anchor's output
 * nor any other intermediate exists at full size: the kernel packs one row
 * block of the src and one column block of the weights per work item and
 * keeps a tile of accumulators. */
#ifndef PARTITA_KERNELS_FUSED_COMPUTE_POST_OPS_H
#define PARTITA_KERNELS_FUSED_COMPUTE_POST_OPS_H

#include <stdbool.h>
#include <stddef.h>

#include "ir/op.h" /* until the fused lowering moves to compile/ */
#include "kernels/kernel.h"

/* pt_pattern_row.prepare for the compute rows. */
pt_status pt_prepare_compute_post_ops(const pt_op *const *ops, size_t nops, const pt_lt *in, size_t nin,
                                      const pt_lt *out, size_t nout, pt_fused *fused);

/* The same kernel with every bf16/f16 intermediate rounded to its declared
 * type (anchor operands and output included): bit-identical to the op-by-op
 * path through the reference kernels.  For tests and debugging. */
pt_status pt_prepare_compute_post_ops_op_by_op(const pt_op *const *ops, size_t nops, const pt_lt *in, size_t nin,
                                               const pt_lt *out, size_t nout, pt_fused *fused);

/* In-place pair (abi.md dnnl_graph_compiled_partition_get_inplace_ports):
 * true when `f` was prepared by pt_prepare_compute_post_ops and the
 * partition output may share its buffer with one input: an epilogue operand
 * (typically the post-sum / final Add operand) that has the output's dims,
 * data type and strides, is read only at each element's own position and by
 * no other op of the partition, and does not appear twice among the ports.
 * The kernel reads that operand for a run of output elements before writing
 * those elements and never touches them again, so the caller may pass the
 * same buffer for both.  prepare also records the pair in pt_fused
 * (has_inplace, port indices), which compile.c reports. */
bool pt_compute_post_ops_inplace(const pt_fused *f, size_t *input_id, size_t *output_id);

#endif
