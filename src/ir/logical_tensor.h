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
/* Product of dims (1 for a scalar); -1 if the shape is not known or the
 * product overflows int64. */
int64_t pt_lt_nelems(const pt_lt *lt);
/* Writes dense row-major strides for a known shape. */
void pt_dense_strides(int ndims, const int64_t *dims, int64_t *strides);
/* Sets layout to strided with dense strides (shape must be known). */
void pt_lt_make_dense(pt_lt *lt);
/* True when strided and strides equal the dense row-major ones (dims of 1 ignored). */
bool pt_lt_is_dense(const pt_lt *lt);
/* The one definition of a tensor's byte span, used by get_mem_size, tensor
 * creation, compile and execute.  Strided: oneDNN's max over d of
 * dims[d] * strides[d] elements, or the furthest element + 1 when that is
 * larger (overlapping strides); opaque: dense for layout id 0, the
 * registered size for other ids (an unknown id is refused); rounded up to whole bytes
 * for 4-bit types.  *bytes is SIZE_MAX for any/undef layouts, unknown dims
 * or unknown strides.  dnnl_invalid_arguments (with one verbose line naming
 * the tensor) for more than 12 dims, a negative stride, or an element
 * count (of the non-zero dims), stride span or byte size over 2^48, more
 * than any x86-64 buffer holds (so no product kernels form overflows). */
pt_status pt_lt_span_bytes(const pt_lt *lt, size_t *bytes);
/* Opaque layouts.  Layout id 0 is Partita's plain opaque layout (dense
 * row-major).  Other ids name layouts a kernel registered at compile time
 * (packed weight panels, seed 004 option 2): the registry keeps each
 * layout's byte size, which pt_lt_span_bytes reports, and a description
 * only the registering kernel family reads (at most PT_OPAQUE_DESC_MAX
 * bytes).  Registering the same size and description again returns the same
 * id; ids are never reused.  0 when the registry is full (1024 layouts) or
 * the description does not fit: the caller keeps a plain layout. */
#define PT_OPAQUE_DESC_MAX 256
size_t pt_opaque_layout_register(size_t bytes, const void *desc, size_t desc_len);
/* Size and description of layout `id` (copied, at most desc_cap bytes);
 * false for an id nobody registered.  Thread-safe, like registering. */
bool pt_opaque_layout_find(size_t id, size_t *bytes, void *desc, size_t desc_cap, size_t *desc_len);

/* Fields a logical tensor from the caller must have right wherever it is
 * handed in (op ports, tensors, compile): ndims -1 .. 12, and a host scalar
 * has ndims 0 and type s32/f32/s64.  dnnl_invalid_arguments with one verbose
 * line naming `where` and the tensor otherwise. */
pt_status pt_lt_check(const pt_lt *lt, const char *where);
/* pt_lt_span_bytes without the message: SIZE_MAX where it fails. */
size_t pt_lt_mem_size(const pt_lt *lt);
/* True when two elements of a strided layout share an address (zero or
 * overlapping strides); outputs cannot have such layouts. */
bool pt_lt_overlaps(const pt_lt *lt);
/* dnnl_graph_logical_tensor_is_equal. */
bool pt_lt_equal(const pt_lt *a, const pt_lt *b);
/* Writes "f32:2x3x4" style text (used by verbose and error messages). */
void pt_lt_describe(const pt_lt *lt, char *buf, size_t cap);

#endif
