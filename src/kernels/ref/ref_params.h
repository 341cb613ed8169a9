/* Decoded parameters of the reference kernels: what each kernel needs from
 * its op, read once at compile time by its decoder (compile/ref_decode_*.c).
 * Kernels see these structs, never an op.  `name` is the op kind's name,
 * used in error messages. */
#ifndef PARTITA_KERNELS_REF_REF_PARAMS_H
#define PARTITA_KERNELS_REF_REF_PARAMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "oneapi/dnnl/dnnl_graph_types.h"
#include "kernels/ref/eltwise_math.h"

/* Kernels that need nothing but the op's name (TypeCast, Reorder,
 * StaticReshape, Dropout). */
typedef struct {
    const char *name;
} pt_ref_name_params;

/* Unary element-wise forward and backward ops. */
typedef struct {
    const char *name;
    pt_eltwise_params p;
} pt_ref_eltwise_params;

/* Binary element-wise ops and Select. */
typedef struct {
    const char *name;
    int kind;
    bool bcast_none; /* auto_broadcast = none */
} pt_ref_binary_params;

/* BiasAdd, BiasAddBackward, PReLU, PReLUBackward: the channel dim resolved
 * for the rank of input 0. */
typedef struct {
    int cdim;
    bool per_channel; /* PReLU per_channel_broadcast */
} pt_ref_chan_params;

/* StaticTranspose: src dim feeding each dst dim. */
typedef struct {
    int r;
    int perm[DNNL_MAX_NDIMS];
} pt_ref_transpose_params;

/* Concat, GenIndex: the axis resolved for the output rank. */
typedef struct {
    int axis;
} pt_ref_axis_params;

/* Quantize / Dequantize / DynamicQuantize / DynamicDequantize: the scale and
 * zero-point addressing per src element x is Σ_d (x_d / G[d])·ss[d] (zs[d]
 * for zero points).  Attribute scales and zero points are copied here. */
typedef struct {
    const char *name;
    bool quantize;
    bool has_zp; /* dynamic: a zero-point input was declared */
    int64_t G[DNNL_MAX_NDIMS], ss[DNNL_MAX_NDIMS], zs[DNNL_MAX_NDIMS];
    float *scales; /* static: ns scales, nz zero points */
    int64_t *zps;
    size_t ns, nz;
} pt_ref_quant_params;

/* Reductions: axes from the attribute are resolved here; an `axes` input is
 * data and is read by the kernel. */
typedef struct {
    const char *name;
    int kind;
    int nattr_axes; /* 0: no axes attribute */
    bool red[DNNL_MAX_NDIMS];
} pt_ref_reduce_params;

/* SoftMax / LogSoftmax and their backward ops. */
typedef struct {
    const char *name;
    bool is_log, inf_as_zero;
    int axis;
} pt_ref_softmax_params;

/* MatMul: transpose flags (only meaningful for rank >= 2 operands). */
typedef struct {
    bool ta, tb;
} pt_ref_matmul_params;

/* Convolution family: layout flags, groups and the resolved geometry of the
 * canonical spatial slots (D, H, W). */
typedef struct {
    const char *name;
    bool nxc, x_first;
    int64_t G;
    int64_t S[3], Dl[3], P[3]; /* stride, dilation, begin padding */
} pt_ref_conv_params;

/* Pooling: resolved window geometry per canonical slot. */
typedef struct {
    const char *name;
    bool nxc;
    bool exclude; /* AvgPool divisor: valid taps only */
    int64_t S[3], K[3], Dl[3], P[3];
} pt_ref_pool_params;

/* Interpolate / InterpolateBackward. */
typedef enum { PT_INTERP_NEAREST, PT_INTERP_LINEAR } pt_interp_mode;
typedef struct {
    const char *name;
    bool nxc, align_corners;
    pt_interp_mode mode;
    int k; /* spatial dims */
} pt_ref_interp_params;

/* Normalisations: `axis` is the resolved begin_norm_axis (LayerNorm,
 * LayerNormBackward, RMSNorm); `nxc` picks the channel dim of GroupNorm and
 * BatchNorm*. */
typedef struct {
    const char *name;
    int axis;
    bool nxc, affine;
    int64_t groups;
    double eps, momentum;
} pt_ref_norm_params;

#endif
