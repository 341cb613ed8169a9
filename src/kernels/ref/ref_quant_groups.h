/* Group sizes of per_group quantization (opset §1.4.3), shared by the
 * DynamicQuantize / DynamicDequantize kernels (and usable by shape checks). */
#ifndef PARTITA_KERNELS_REF_QUANT_GROUPS_H
#define PARTITA_KERNELS_REF_QUANT_GROUPS_H

#include <stdint.h>

#include "ir/op.h"

/* Fills G[0..r-1] (elements per group along each src dim) from the oneDNN
 * `group_shape` attribute and/or the seed form (`axis` list, default {1}, plus
 * `groups`, the number of groups per listed axis; unlisted dims and listed
 * dims without a `groups` entry get 1).  When both forms are given they must
 * agree.  dnnl_invalid_arguments (with a verbose line) when neither form is
 * given, a list has the wrong length, an axis is out of range or repeated, or
 * a group count does not divide its dim. */
pt_status pt_quant_group_sizes(const pt_op *op, int r, const int64_t *src_dims, int64_t *G);

#endif
