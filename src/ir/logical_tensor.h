/* Logical-tensor utilities shared by the API, the graph and the compiler. */
#ifndef PARTITA_IR_LOGICAL_TENSOR_H
#define PARTITA_IR_LOGICAL_TENSOR_H

#include <stdbool.h>
#include <stdint.h>

#include "oneapi/dnnl/dnnl_graph_types.h"
#include "ir/status.h"

typedef dnnl_graph_logical_tensor_t pt_lt;

#define PT_UNKNOWN_DIM DNNL_GRAPH_UNKNOWN_DIM

/* Rank known and every dim >= 0. */
bool pt_lt_shape_known(const pt_lt *lt);
/* Product of dims (1 for a scalar); -1 if the shape is not known. */
int64_t pt_lt_nelems(const pt_lt *lt);
/* Writes dense row-major strides for a known shape. */
void pt_dense_strides(int ndims, const int64_t *dims, int64_t *strides);
/* Sets layout to strided with dense strides (shape must be known). */
void pt_lt_make_dense(pt_lt *lt);
/* True when strided and strides equal the dense row-major ones (dims of 1 ignored). */
bool pt_lt_is_dense(const pt_lt *lt);
/* Byte size as get_mem_size reports it (SIZE_MAX for any/undef layout or unknown dims). */
size_t pt_lt_mem_size(const pt_lt *lt);
/* dnnl_graph_logical_tensor_is_equal. */
bool pt_lt_equal(const pt_lt *a, const pt_lt *b);
/* Writes "f32:2x3x4" style text (used by verbose and error messages). */
void pt_lt_describe(const pt_lt *lt, char *buf, size_t cap);

#endif
