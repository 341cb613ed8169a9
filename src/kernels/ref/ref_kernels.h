/* Every reference kernel (plain C, every data type, any strided layout).
 * `params` is the kernel's struct from ref_params.h, filled by its decoder
 * pt_decode_<stem> (compile/ref_decode.h).  The op-kind table
 * (ops/op_table.def) names each kind's stem; compile/ref_table.c expands it. */
#ifndef PARTITA_KERNELS_REF_KERNELS_H
#define PARTITA_KERNELS_REF_KERNELS_H

#include "kernels/kernel.h"
#include "kernels/ref/ref_params.h"

#define PT_REF_DECL(fn) \
    pt_status fn(const void *params, const pt_tview *in, size_t nin, const pt_tview *out, \
                 size_t nout, const pt_exec_ctx *ctx)

/* ref_eltwise.c: unary forward ops (dispatch on the decoded kind) and their backward ops */
PT_REF_DECL(pt_ref_eltwise);
PT_REF_DECL(pt_ref_eltwise_bwd);
/* ref_binary.c: Add Divide Maximum Minimum Multiply SquaredDifference Subtract GreaterEqual; Select; BiasAdd; PReLU */
PT_REF_DECL(pt_ref_binary);
PT_REF_DECL(pt_ref_select);
PT_REF_DECL(pt_ref_bias_add);
PT_REF_DECL(pt_ref_bias_add_bwd);
PT_REF_DECL(pt_ref_prelu);
PT_REF_DECL(pt_ref_prelu_bwd);
/* ref_data.c: data movement */
PT_REF_DECL(pt_ref_typecast);
PT_REF_DECL(pt_ref_reorder);
PT_REF_DECL(pt_ref_static_reshape);
PT_REF_DECL(pt_ref_static_transpose);
PT_REF_DECL(pt_ref_concat);
PT_REF_DECL(pt_ref_gen_index);
PT_REF_DECL(pt_ref_dropout);
/* ref_quant.c */
PT_REF_DECL(pt_ref_quantize);
PT_REF_DECL(pt_ref_dequantize);
PT_REF_DECL(pt_ref_dynamic_quantize);
PT_REF_DECL(pt_ref_dynamic_dequantize);
/* ref_reduce.c: the seven Reduce* ops */
PT_REF_DECL(pt_ref_reduce);
/* ref_softmax.c: SoftMax / LogSoftmax and their backward ops */
PT_REF_DECL(pt_ref_softmax);
PT_REF_DECL(pt_ref_softmax_bwd);
/* ref_matmul.c */
PT_REF_DECL(pt_ref_matmul);
/* ref_conv.c */
PT_REF_DECL(pt_ref_conv);
PT_REF_DECL(pt_ref_conv_bwd_data);
PT_REF_DECL(pt_ref_conv_bwd_weights);
PT_REF_DECL(pt_ref_conv_transpose);
PT_REF_DECL(pt_ref_conv_transpose_bwd_data);
PT_REF_DECL(pt_ref_conv_transpose_bwd_weights);
/* ref_pool.c */
PT_REF_DECL(pt_ref_avg_pool);
PT_REF_DECL(pt_ref_avg_pool_bwd);
PT_REF_DECL(pt_ref_max_pool);
PT_REF_DECL(pt_ref_max_pool_bwd);
/* ref_interp.c */
PT_REF_DECL(pt_ref_interpolate);
PT_REF_DECL(pt_ref_interpolate_bwd);
/* ref_norm.c */
PT_REF_DECL(pt_ref_layer_norm);
PT_REF_DECL(pt_ref_layer_norm_bwd);
PT_REF_DECL(pt_ref_group_norm);
PT_REF_DECL(pt_ref_rms_norm);
PT_REF_DECL(pt_ref_batch_norm_inference);
PT_REF_DECL(pt_ref_batch_norm_fwd_training);
PT_REF_DECL(pt_ref_batch_norm_bwd);

/* Marks axis `a` (negative: from the back) of a rank-r tensor in `red`;
 * dnnl_invalid_shape when out of range or already marked. */
pt_status pt_ref_reduce_mark_axis(const char *name, int64_t a, int r, bool *red);

/* Scratch bytes of the kernels that need any, from the logical tensors they
 * will run on (decoders size ctx->scratch with them; kernels check it). */
size_t pt_ref_prelu_bwd_scratch(const pt_lt *slope);
size_t pt_ref_static_reshape_scratch(const pt_lt *src, const pt_lt *dst);
size_t pt_ref_matmul_scratch(const pt_ref_matmul_params *p, const pt_lt *a, const pt_lt *b);
size_t pt_ref_conv_scratch(const pt_lt *x, const pt_lt *w, const pt_lt *y, const pt_lt *bias);
size_t pt_ref_avg_pool_scratch(const pt_ref_pool_params *p, const pt_lt *diff_or_dst);
size_t pt_ref_max_pool_bwd_scratch(const pt_lt *src);
size_t pt_ref_interp_scratch(const pt_ref_interp_params *p, const pt_lt *dst, const pt_lt *acc);
size_t pt_ref_layer_norm_scratch(const pt_ref_norm_params *p, const pt_lt *src, bool bwd);
size_t pt_ref_rms_norm_scratch(const pt_ref_norm_params *p, const pt_lt *src);
size_t pt_ref_group_norm_scratch(const pt_ref_norm_params *p, const pt_lt *src);
size_t pt_ref_batch_norm_scratch(const pt_ref_norm_params *p, const pt_lt *src, int ntensors);

#endif
