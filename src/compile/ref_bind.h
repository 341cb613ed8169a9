/* Binding an op to its reference kernel at compile time: the op's decoder
 * reads its attributes and logical tensors once into the kernel's parameter
 * struct and sizes the scratch the kernel needs; execute then only runs. */
#ifndef PARTITA_COMPILE_REF_BIND_H
#define PARTITA_COMPILE_REF_BIND_H

#include "compile/ref_decode.h"
#include "ir/op.h"
#include "kernels/kernel.h"

/* Decodes `op` (concrete logical tensors) for its reference kernel.
 * dnnl_unimplemented when the kind has no reference kernel.  An op its
 * decoder rejects still binds: the kernel then returns the decoder's status
 * when run (execute reports it, as when kernels decoded at run time). */
pt_status pt_ref_bind(const pt_op *op, pt_bound_kernel *out);
void pt_bound_kernel_release(pt_bound_kernel *k);

/* Binds, runs once with scratch of its own and releases: for tests and
 * other one-off callers, never on an execute path.  The op's logical
 * tensors are replaced by those of the views (the op may have no ports);
 * a decoder's rejection is returned directly.  pt_ref_run_with uses the
 * given decoder whatever the op kind. */
pt_status pt_ref_run_with(pt_ref_decoder decode, const pt_op *op, const pt_tview *in, size_t nin,
                          const pt_tview *out, size_t nout, const pt_exec_ctx *ctx);
pt_status pt_ref_run(const pt_op *op, const pt_tview *in, size_t nin, const pt_tview *out, size_t nout,
                     const pt_exec_ctx *ctx);

#endif
