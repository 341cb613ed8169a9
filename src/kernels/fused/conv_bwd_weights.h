/* ConvolutionBackwardWeights on the GEMM microkernels:
 *   diff_w[g][oc][c * T + tap] = Σ_{n, p} diff_dst[n][g·OCg + oc][p] · src[n][g·ICg + c][p·S + tap·D - P]
 * one product per group with M = output channels, N = input channels x
 * taps and the positions as the reduction: diff_dst is packed in place as
 * the A operand (positions are one stride apart in dense layouts), src as
 * im2col columns for each chunk of positions.  Work items are (group, block
 * of columns), each owning its columns of diff_w, so threads share nothing;
 * f32 accumulation (docs/numerics.md). */
#ifndef PARTITA_KERNELS_FUSED_CONV_BWD_WEIGHTS_H
#define PARTITA_KERNELS_FUSED_CONV_BWD_WEIGHTS_H

#include "kernels/kernel.h"
#include "kernels/ref/ref_common.h"
#include "kernels/ref/ref_params.h"

typedef struct {
    pt_ref_conv_params geom;  /* strides, dilations, begin pads per canonical slot; groups */
    pt_v5 src, ddst, dw;      /* canonical views of the ports */
    int64_t OCg, ICg, T, K;   /* K = ICg * T columns per group */
    int64_t P;                /* output positions per image */
    int64_t dd_pos_stride;    /* element step between consecutive positions of diff_dst */
    dnnl_data_type_t src_dt, ddst_dt;
    dnnl_fpmath_mode_t round; /* operands rounded as the math mode says (f32 kind) */
    int src_port, ddst_port;  /* ports of src and diff_dst (swapped for ConvTransposeBackwardWeights) */
    int64_t kc, nbw, items;   /* positions per chunk, columns per item, items */
    int nthr;
    size_t dw_off, thr_off, thr_bytes, a_off, col_off, b_off; /* scratch layout */
} pt_conv_bww_plan;

/* Plans the kernel for a ConvolutionBackwardWeights op decoded into `geom`
 * with input ports in[0..1] = src, diff_dst (diff_dst, src with `swap`:
 * the adjoint convolution of a ConvTranspose) and diff_weights, and
 * fills `f`; dnnl_unimplemented for layouts it does not take (positions of
 * diff_dst not one stride apart, non-float types). */
pt_status pt_conv_bww_make(const pt_ref_conv_params *geom, const pt_lt *in, bool swap, const pt_lt *dw,
                           dnnl_fpmath_mode_t mode, pt_fused *f);

#endif
