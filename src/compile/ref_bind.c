/* Reference-kernel binding (see ref_bind.h). */
#include "compile/ref_bind.h"

#include <stdlib.h>

#include "ops/op_schema.h"

pt_status pt_ref_bind(const pt_op *op, pt_bound_kernel *out) {
    *out = (pt_bound_kernel){0};
    pt_kernel_fn fn = pt_ref_kernel(op->kind);
    if (!fn) return pt_err(dnnl_unimplemented, "no kernel for op %s#%zu", pt_op_kind_name(op->kind), op->id);
    /* Kernels not yet converted to a decoded struct take the op itself; it
     * outlives the binding (compiled steps own their op copies). */
    out->run = fn;
    out->params = (void *)op;
    return dnnl_success;
}

void pt_bound_kernel_release(pt_bound_kernel *k) {
    if (k->release && k->params) k->release(k->params);
    *k = (pt_bound_kernel){0};
}

pt_status pt_ref_run(const pt_op *op, const pt_tview *in, size_t nin, const pt_tview *out, size_t nout,
                     const pt_exec_ctx *ctx) {
    pt_bound_kernel k;
    PT_CHECK(pt_ref_bind(op, &k));
    pt_exec_ctx c = *ctx;
    c.scratch = k.scratch_bytes ? malloc(k.scratch_bytes) : NULL;
    c.scratch_bytes = k.scratch_bytes;
    pt_status st = k.scratch_bytes && !c.scratch ? dnnl_out_of_memory : k.run(k.params, in, nin, out, nout, &c);
    free(c.scratch);
    pt_bound_kernel_release(&k);
    return st;
}
