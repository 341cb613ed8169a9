/* Group sizes of per_group quantization, shared by the DynamicQuantize /
 * DynamicDequantize decoders and the fused kernels' preparation. */
#ifndef PARTITA_KERNELS_REF_QUANT_GROUPS_H
#define PARTITA_KERNELS_REF_QUANT_GROUPS_H

#include <stddef.h>
#include <stdint.h>

#include "ir/status.h"

/* Fills G[0..r-1] (elements per group along each src dim) from the oneDNN
 * `group_shape` list (gs) and/or the seed form (`axis` list, default {1},
 * plus `groups`, the number of groups per listed axis; unlisted dims and
 * listed dims without a `groups` entry get 1).  When both forms are given
 * they must agree.  dnnl_invalid_arguments (with a verbose line naming
 * `name`) when neither form is given, a list has the wrong length, an axis
 * is out of range or repeated, or a group count does not divide its dim.
 * The op-reading wrapper is pt_quant_group_sizes (compile/ref_decode.h). */
pt_status pt_quant_groups_resolve(const char *name, const int64_t *gs, size_t ngs, const int64_t *groups,
                                  size_t ngr, const int64_t *axis, size_t nax, int r, const int64_t *dims,
                                  int64_t *G);

#endif
