/* Shape helpers shared by the op schemas (broadcasting: docs/ops.md). */
#ifndef PARTITA_OPS_SHAPE_UTILS_H
#define PARTITA_OPS_SHAPE_UTILS_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/logical_tensor.h"

/* Multidirectional (numpy) broadcast of two shapes with unknown dims/ranks.  `*ondims` = -1 when the result is unranked.
 * dnnl_invalid_shape when two static extents are both != 1 and differ. */
pt_status pt_broadcast_shapes(int an, const int64_t *a, int bn, const int64_t *b,
                              int *ondims, int64_t *odims);
/* Unidirectional broadcast of `src` to `target`, unknown dims accepted.
 * Returns true when allowed. */
bool pt_unidirectional_ok(int sn, const int64_t *s, int tn, const int64_t *t);
/* Writes an inferred output shape into `out`, verifying it against the
 * declared one: a declared static dim that differs from a static inferred
 * dim -> dnnl_invalid_shape; a rank mismatch between known ranks ->
 * dnnl_invalid_shape; an unknown inferred dim against a static declared one
 * -> dnnl_invalid_shape, so ops that cannot infer a shape leave their
 * outputs alone.  Dense strides are filled when the output layout is strided
 * (undef/any is left alone) and the result is fully known. */
pt_status pt_set_output_shape(pt_lt *out, int ndims, const int64_t *dims);
/* Normalises axis `a` into [0, r); returns false when out of range. */
bool pt_norm_axis(int64_t a, int r, int64_t *out);

#endif
