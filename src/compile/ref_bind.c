/* Reference-kernel binding (see ref_bind.h). */
#include "compile/ref_bind.h"

#include <stdlib.h>

#include "compile/ref_decode.h"
#include "kernels/ref/ref_kernels.h"
#include "ops/op_schema.h"

/* Reference kernel -> its decoder.  The op kind -> kernel table is
 * kernels/ref/ref_registry.c; this maps each kernel to the decoder that
 * fills its parameters, so the kind table exists once. */
static const struct {
    pt_kernel_fn run;
    pt_ref_decoder decode;
} decoders[] = {
    {pt_ref_eltwise, pt_decode_eltwise},
    {pt_ref_eltwise_bwd, pt_decode_eltwise_bwd},
    {pt_ref_binary, pt_decode_binary},
    {pt_ref_select, pt_decode_select},
    {pt_ref_bias_add, pt_decode_bias_add},
    {pt_ref_bias_add_bwd, pt_decode_bias_add_bwd},
    {pt_ref_prelu, pt_decode_prelu},
    {pt_ref_prelu_bwd, pt_decode_prelu_bwd},
    {pt_ref_typecast, pt_decode_typecast},
    {pt_ref_reorder, pt_decode_reorder},
    {pt_ref_static_reshape, pt_decode_static_reshape},
    {pt_ref_static_transpose, pt_decode_static_transpose},
    {pt_ref_concat, pt_decode_concat},
    {pt_ref_gen_index, pt_decode_gen_index},
    {pt_ref_dropout, pt_decode_dropout},
    {pt_ref_quantize, pt_decode_quantize},
    {pt_ref_dequantize, pt_decode_dequantize},
    {pt_ref_dynamic_quantize, pt_decode_dynamic_quantize},
    {pt_ref_dynamic_dequantize, pt_decode_dynamic_dequantize},
    {pt_ref_reduce, pt_decode_reduce},
    {pt_ref_softmax, pt_decode_softmax},
    {pt_ref_softmax_bwd, pt_decode_softmax_bwd},
    {pt_ref_matmul, pt_decode_matmul},
    {pt_ref_conv, pt_decode_conv},
    {pt_ref_conv_bwd_data, pt_decode_conv_bwd_data},
    {pt_ref_conv_bwd_weights, pt_decode_conv_bwd_weights},
    {pt_ref_conv_transpose, pt_decode_conv_transpose},
    {pt_ref_conv_transpose_bwd_data, pt_decode_conv_transpose_bwd_data},
    {pt_ref_conv_transpose_bwd_weights, pt_decode_conv_transpose_bwd_weights},
    {pt_ref_avg_pool, pt_decode_avg_pool},
    {pt_ref_avg_pool_bwd, pt_decode_avg_pool_bwd},
    {pt_ref_max_pool, pt_decode_max_pool},
    {pt_ref_max_pool_bwd, pt_decode_max_pool_bwd},
    {pt_ref_interpolate, pt_decode_interpolate},
    {pt_ref_interpolate_bwd, pt_decode_interpolate_bwd},
    {pt_ref_layer_norm, pt_decode_layer_norm},
    {pt_ref_layer_norm_bwd, pt_decode_layer_norm_bwd},
    {pt_ref_group_norm, pt_decode_group_norm},
    {pt_ref_rms_norm, pt_decode_rms_norm},
    {pt_ref_batch_norm_inference, pt_decode_batch_norm_inference},
    {pt_ref_batch_norm_fwd_training, pt_decode_batch_norm_fwd_training},
    {pt_ref_batch_norm_bwd, pt_decode_batch_norm_bwd},
};

static pt_ref_decoder decoder_of(const pt_op *op) {
    pt_kernel_fn fn = pt_ref_kernel(op->kind);
    for (size_t i = 0; fn && i < sizeof decoders / sizeof decoders[0]; ++i)
        if (decoders[i].run == fn) return decoders[i].decode;
    return NULL;
}

/* An op its decoder rejected: compile still succeeds (as when kernels read
 * their attributes at execute time) and running reports the same status. */
static pt_status run_rejected(const void *params, const pt_tview *in, size_t nin, const pt_tview *out, size_t nout,
                              const pt_exec_ctx *ctx) {
    return *(const pt_status *)params;
}

pt_status pt_ref_bind(const pt_op *op, pt_bound_kernel *out) {
    *out = (pt_bound_kernel){0};
    pt_ref_decoder decode = decoder_of(op);
    if (!decode) return pt_err(dnnl_unimplemented, "no kernel for op %s#%zu", pt_op_kind_name(op->kind), op->id);
    pt_status st = decode(op, out);
    if (st == dnnl_success || st == dnnl_out_of_memory) return st;
    pt_bound_kernel_release(out);
    pt_status *p = malloc(sizeof *p);
    if (!p) return dnnl_out_of_memory;
    *p = st;
    *out = (pt_bound_kernel){.run = run_rejected, .params = p, .release = free};
    return dnnl_success;
}

void pt_bound_kernel_release(pt_bound_kernel *k) {
    if (k->release && k->params) k->release(k->params);
    *k = (pt_bound_kernel){0};
}

pt_status pt_ref_run_with(pt_ref_decoder decode, const pt_op *op, const pt_tview *in, size_t nin,
                          const pt_tview *out, size_t nout, const pt_exec_ctx *ctx) {
    /* The decoder reads the op's logical tensors: give it the views' ones. */
    pt_op *c = pt_op_clone(op);
    if (!c) return dnnl_out_of_memory;
    c->nin = c->nout = 0;
    pt_status st = dnnl_success;
    for (size_t i = 0; i < nin && st == dnnl_success; ++i) st = pt_op_add_input(c, &in[i].lt);
    for (size_t i = 0; i < nout && st == dnnl_success; ++i) st = pt_op_add_output(c, &out[i].lt);
    pt_bound_kernel k = {0};
    if (st == dnnl_success) st = decode(c, &k);
    pt_op_free(c);
    if (st != dnnl_success) {
        pt_bound_kernel_release(&k);
        return st;
    }
    pt_exec_ctx x = *ctx;
    x.scratch = k.scratch_bytes ? malloc(k.scratch_bytes) : NULL;
    x.scratch_bytes = k.scratch_bytes;
    st = k.scratch_bytes && !x.scratch ? dnnl_out_of_memory : k.run(k.params, in, nin, out, nout, &x);
    free(x.scratch);
    pt_bound_kernel_release(&k);
    return st;
}

pt_status pt_ref_run(const pt_op *op, const pt_tview *in, size_t nin, const pt_tview *out, size_t nout,
                     const pt_exec_ctx *ctx) {
    pt_ref_decoder decode = decoder_of(op);
    if (!decode) return pt_err(dnnl_unimplemented, "no kernel for op %s#%zu", pt_op_kind_name(op->kind), op->id);
    return pt_ref_run_with(decode, op, in, nin, out, nout, ctx);
}
