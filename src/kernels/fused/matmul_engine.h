/* MatMul partitions on the GEMM engine (kernels/gemm/gemm.h).
 *
 * The compute lowering builds a pt_cp_state for every MatMul partition
 * (a lone MatMul included); pt_mme_prepare then reads the operands'
 * prologue programs and, for MatMul, plans the product on the engine:
 *   - an operand loaded as it is (f32, bf16, f16) is handed to the packer
 *     in place, with its strides;
 *   - an operand that is one Dequantize / DynamicDequantize of integer data
 *     (s8, u8, s4, u4; per-tensor, per-channel or per-group scales and zero
 *     points) is dequantised by the packer (or the small-M path) from the
 *     compressed bytes; when both operands are int8 with per-tensor
 *     activations parameters it runs as u8 x s8 -> s32 (VNNI where present);
 *   - any other prologue is evaluated into a dense f32 copy first.
 * The compute kind follows the operands and the math mode: bf16 x bf16, or
 * f32 operands under fpmath bf16 / any, use the bf16 kind; f16 / tf32 modes
 * round f32 operands on packing (docs/numerics.md); integer weights follow
 * the mode only with apply_to_int (seed 002), else they keep the integer
 * path (u8 x s8, or exact f32 dequantisation).  The epilogue program
 * of the partition runs on each finished tile.
 *
 * Constant weights (property `constant`, with constant dequantisation
 * parameters) are packed whole at their first execution and kept in the
 * constant tensor cache (runtime/const_cache.h) when it is enabled. */
#ifndef PARTITA_KERNELS_FUSED_MATMUL_ENGINE_H
#define PARTITA_KERNELS_FUSED_MATMUL_ENGINE_H

#include <stdbool.h>

#include "kernels/fused/compute_post_ops.h"

/* Plans the engine path for MatMul state `s` (already prepared by the
 * lowering); `port_constant[i]` tells whether partition input i has
 * property constant.  `port_layout[i]` (NULL: all plain) says how input i
 * was given: 0 plain; PT_MME_LAYOUT_ANY for a constant weight given with
 * layout `any`, which the engine may turn into its packed-weight layout
 * (seed 004, option 2: where packing ahead pays); otherwise the id of a
 * packed-weight opaque layout (kernels/gemm/gemm.h), read as such when it
 * is exactly what this product packs.  On success s->mme is set;
 * dnnl_unimplemented leaves the state as it was (the compute kernel's own
 * path runs). */
#define PT_MME_LAYOUT_ANY SIZE_MAX
pt_status pt_mme_prepare(pt_cp_state *s, const bool *port_constant, const size_t *port_layout, size_t nin,
                         dnnl_fpmath_mode_t mode, bool apply_to_int);

/* The input port the engine reads in its packed-weight layout and that
 * layout's id; -1 when it reads every input plain. */
int pt_mme_packed_port(const pt_cp_state *s, size_t *layout_id);

/* Scratch of the engine path for up to s->nthr threads. */
size_t pt_mme_scratch_bytes(const pt_cp_state *s);

pt_status pt_mme_run(const pt_cp_state *s, const pt_tview *in, size_t nin, const pt_tview *out, void *scratch,
                     const pt_exec_ctx *ctx);

void pt_mme_free(pt_cp_state *s);

/* Name of the microkernel the plan uses ("" without the engine path). */
const char *pt_mme_kernel_name(const pt_cp_state *s);

#endif
