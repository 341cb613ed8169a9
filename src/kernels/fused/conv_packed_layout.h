/* Convolution / ConvTranspose weights in the engine's packed layout as a
 * user-visible opaque layout (seed 004, option 2): 64 bytes of header (byte
 * 63: every weight finite) and then, for each group and block of output
 * channels, the B panels of the GEMM microkernel (pt_gemm_pack_panels) over
 * rows w[j][k], k = tap * (input channels of the group) + c.  The layout
 * depends on the microkernel, the convolution's geometry and the block of
 * output channels the kernel planned, not on the input's spatial size. */
#ifndef PARTITA_KERNELS_FUSED_CONV_PACKED_LAYOUT_H
#define PARTITA_KERNELS_FUSED_CONV_PACKED_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/logical_tensor.h"
#include "kernels/gemm/gemm.h"

typedef struct pt_conv_packed_layout {
    char tag[8];              /* "ptconvW" */
    pt_gemm_kind kind;
    char ukernel[40];
    bool deconv;              /* canonical weight dims [I, O/G, D, H, W] (else [O, I/G, D, H, W]) */
    int64_t G, Q, NB, qblocks; /* groups, output channels per group, per block, blocks */
    int64_t cg, KD, KH, KW;   /* input channels per group, kernel extents */
    int wndims;
    int wmap[5];              /* canonical dim -> weight tensor dim (-1: absent) */
    int64_t wdims[DNNL_MAX_NDIMS];
    dnnl_data_type_t src_dt;
    dnnl_fpmath_mode_t round;
} pt_conv_packed_layout;

/* Bytes of one (group, block) of panels and of the whole layout. */
size_t pt_conv_packed_block_bytes(const pt_conv_packed_layout *l, const pt_gemm_ukernel *uk);
size_t pt_conv_packed_bytes(const pt_conv_packed_layout *l, const pt_gemm_ukernel *uk);

/* Registers `l` (padding bytes must be zero: memset it first); 0 when the
 * registry is full or the microkernel name does not fit. */
size_t pt_conv_packed_register(const pt_conv_packed_layout *l);
/* The description behind `id`; false when `id` is not a convolution layout. */
bool pt_conv_packed_find(size_t id, pt_conv_packed_layout *l);

/* Packs a plain weight tensor (`plain`: its logical tensor, strides of any
 * order) into layout `l` (`rows`: pt_conv_packed_scratch_bytes of scratch),
 * or unpacks it back.  The microkernel must be usable here
 * (dnnl_invalid_arguments otherwise). */
size_t pt_conv_packed_scratch_bytes(const pt_conv_packed_layout *l);
pt_status pt_conv_packed_pack(const pt_conv_packed_layout *l, const pt_lt *plain, const void *src, void *dst,
                              float *rows);
pt_status pt_conv_packed_unpack(const pt_conv_packed_layout *l, const pt_lt *plain, const void *src, void *dst);

#endif
