/* Reorder between a plain weight and the GEMM engine's packed-weight opaque
 * layout (seed 004, option 2; kernels/gemm/gemm.h): packs with the engine's
 * own packer, or unpacks for inspection. */
#ifndef PARTITA_KERNELS_FUSED_PACKED_REORDER_H
#define PARTITA_KERNELS_FUSED_PACKED_REORDER_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/kernel.h"

/* Fills `f` with a kernel that packs (to_packed) the plain weight of type
 * `dt` with strides s_row over N and s_k over K into layout `layout`, or
 * unpacks it into such a weight.  dnnl_invalid_arguments when `layout` is
 * not a packed-weight layout for `dt` or this CPU cannot run its kernel. */
pt_status pt_packed_reorder_make(size_t layout, dnnl_data_type_t dt, int64_t s_row, int64_t s_k, bool to_packed,
                                 pt_fused *f);

/* The same for a Convolution weight layout (conv_packed_layout.h): `plain`
 * is the plain weight's logical tensor.  dnnl_unimplemented when `layout`
 * is not a convolution layout. */
pt_status pt_packed_reorder_make_conv(size_t layout, const pt_lt *plain, bool to_packed, pt_fused *f);

/* The same for a K / V layout of the fused SDPA (sdpa_packed_layout.h):
 * `plain` is the plain tensor's logical tensor.  dnnl_unimplemented when
 * `layout` is not an SDPA layout. */
pt_status pt_packed_reorder_make_sdpa(size_t layout, const pt_lt *plain, bool to_packed, pt_fused *f);

#endif
