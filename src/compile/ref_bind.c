/* Reference-kernel binding (see ref_bind.h). */
#include "compile/ref_bind.h"

#include <stdlib.h>

#include "compile/ref_decode.h"
#include "ops/op_schema.h"

/* An op its decoder rejected: compile still succeeds (as when kernels read
 * their attributes at execute time) and running reports the same status. */
static pt_status run_rejected(const void *params, const pt_tview *in, size_t nin, const pt_tview *out, size_t nout,
                              const pt_exec_ctx *ctx) {
    return *(const pt_status *)params;
}

pt_status pt_ref_bind(const pt_op *op, pt_bound_kernel *out) {
    *out = (pt_bound_kernel){0};
    pt_ref_decoder decode = pt_ref_decoder_of(op->kind);
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
    pt_ref_decoder decode = pt_ref_decoder_of(op->kind);
    if (!decode) return pt_err(dnnl_unimplemented, "no kernel for op %s#%zu", pt_op_kind_name(op->kind), op->id);
    return pt_ref_run_with(decode, op, in, nin, out, nout, ctx);
}
