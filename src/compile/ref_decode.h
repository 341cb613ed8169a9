/* Decoders of the reference kernels: each reads one op (with concrete
 * logical tensors) once at compile time into its kernel's parameter struct
 * (kernels/ref/ref_params.h) and sizes the scratch the kernel takes from its
 * execution context.  pt_decode_<stem> binds pt_ref_<stem>. */
#ifndef PARTITA_COMPILE_REF_DECODE_H
#define PARTITA_COMPILE_REF_DECODE_H

#include "ir/op.h"
#include "kernels/kernel.h"
#include "kernels/ref/eltwise_math.h"

typedef pt_status (*pt_ref_decoder)(const pt_op *op, pt_bound_kernel *out);

/* The decoder of an op kind, from the op-kind table (compile/ref_table.c);
 * NULL for kinds that never run. */
pt_ref_decoder pt_ref_decoder_of(int kind);

#define PT_DECODE_DECL(stem) pt_status pt_decode_##stem(const pt_op *op, pt_bound_kernel *out)

/* ref_decode_elementwise.c */
PT_DECODE_DECL(eltwise);
PT_DECODE_DECL(eltwise_bwd);
PT_DECODE_DECL(binary);
PT_DECODE_DECL(select);
PT_DECODE_DECL(bias_add);
PT_DECODE_DECL(bias_add_bwd);
PT_DECODE_DECL(prelu);
PT_DECODE_DECL(prelu_bwd);
PT_DECODE_DECL(softmax);
PT_DECODE_DECL(softmax_bwd);
PT_DECODE_DECL(reduce);
/* ref_decode_data.c */
PT_DECODE_DECL(typecast);
PT_DECODE_DECL(reorder);
PT_DECODE_DECL(static_reshape);
PT_DECODE_DECL(static_transpose);
PT_DECODE_DECL(concat);
PT_DECODE_DECL(gen_index);
PT_DECODE_DECL(dropout);
PT_DECODE_DECL(quantize);
PT_DECODE_DECL(dequantize);
PT_DECODE_DECL(dynamic_quantize);
PT_DECODE_DECL(dynamic_dequantize);
/* ref_decode_spatial.c */
PT_DECODE_DECL(matmul);
PT_DECODE_DECL(conv);
PT_DECODE_DECL(conv_bwd_data);
PT_DECODE_DECL(conv_bwd_weights);
PT_DECODE_DECL(conv_transpose);
PT_DECODE_DECL(conv_transpose_bwd_data);
PT_DECODE_DECL(conv_transpose_bwd_weights);
PT_DECODE_DECL(avg_pool);
PT_DECODE_DECL(avg_pool_bwd);
PT_DECODE_DECL(max_pool);
PT_DECODE_DECL(max_pool_bwd);
PT_DECODE_DECL(interpolate);
PT_DECODE_DECL(interpolate_bwd);
/* ref_decode_norm.c */
PT_DECODE_DECL(layer_norm);
PT_DECODE_DECL(layer_norm_bwd);
PT_DECODE_DECL(group_norm);
PT_DECODE_DECL(rms_norm);
PT_DECODE_DECL(batch_norm_inference);
PT_DECODE_DECL(batch_norm_fwd_training);
PT_DECODE_DECL(batch_norm_bwd);

/* The attributes of a unary op (forward or backward) with their defaults;
 * also used by the fused post-op programs. */
pt_eltwise_params pt_eltwise_params_of(const pt_op *op);

/* Group sizes of per_group quantization from the op's `group_shape`,
 * `groups` and `axis` attributes (see pt_quant_groups_resolve in
 * kernels/ref/ref_quant_groups.h). */
pt_status pt_quant_group_sizes(const pt_op *op, int r, const int64_t *src_dims, int64_t *G);

/* ref_decode_common.c: shared by the decoders.  Binds `fn` in `out` with a
 * heap copy of the `size`-byte parameter struct `init` followed by `extra`
 * zeroed bytes (release = free); returns the copy, NULL when out of memory. */
void *pt_decode_params(pt_bound_kernel *out, pt_kernel_fn fn, const void *init, size_t size, size_t extra);
/* The same as a status. */
pt_status pt_decode_bind(pt_bound_kernel *out, pt_kernel_fn fn, const void *init, size_t size);
/* An s64 list attribute of k entries into outv: absent or empty gives
 * `dflt` everywhere; dnnl_invalid_arguments for another length or an entry
 * below `minv`. */
pt_status pt_decode_list(const pt_op *op, int attr, int k, int64_t dflt, int64_t minv, const char *what,
                         int64_t *outv);
/* data_format: NXC (true) or NCX (false); anything else is an error. */
pt_status pt_decode_nxc(const pt_op *op, bool *nxc);

#endif
