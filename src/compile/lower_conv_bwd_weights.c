/* A lone ConvolutionBackwardWeights partition on the GEMM microkernels
 * (kernels/fused/conv_bwd_weights.h): the reference decoder resolves the
 * geometry (strides, dilations, pads incl. auto_pad, groups, formats) once,
 * the kernel plans the product. */
#include "compile/lower_fused.h"
#include "compile/ref_bind.h"
#include "kernels/fused/conv_bwd_weights.h"

pt_status pt_lower_conv_bwd_weights(const pt_op *const *ops, const int *roles, size_t nops, const pt_lt *in,
                                    size_t nin, const pt_lt *out, size_t nout, pt_fused *fused,
                                    const pt_lower_ctx *lc) {
    (void)roles;
    const int kind = nops == 1 ? (int)ops[0]->kind : -1;
    /* ConvTransposeBackwardWeights: the adjoint convolution's src is the
     * ConvTranspose's diff_dst, its diff_dst the ConvTranspose's src. */
    const bool transposed = kind == dnnl_graph_op_conv_transpose_backward_weights;
    if ((kind != dnnl_graph_op_convolution_backward_weights && !transposed) || nin < 2 || nout != 1 || !lc)
        return pt_err(dnnl_unimplemented, "ConvolutionBackwardWeights: not a lone op");
    pt_bound_kernel k;
    PT_CHECK(pt_ref_bind(ops[0], &k));
    const pt_status st = pt_conv_bww_make((const pt_ref_conv_params *)k.params, in, transposed, &out[0], lc->fpmath,
                                          fused);
    pt_bound_kernel_release(&k);
    return st;
}
