/* Output comparison (docs/numerics.md, "How the partita CLI compares"). */
#ifndef PARTITA_TOOLS_COMPARE_H
#define PARTITA_TOOLS_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fill.h"

typedef enum { PC_CMP_OK = 0, PC_CMP_MISTRUSTED, PC_CMP_FAILED } pc_cmp_result;

/* Threshold of the primitive driver matching `producer` for output
 * `out_index` of type `dt` (the threshold table of docs/numerics.md). */
float pc_cmp_threshold(const pc_op *producer, size_t out_index, dnnl_data_type_t dt);

/* Compares n values of tensor `lt` (produced by op `producer` of the view):
 * `ref` is the f32 reference, `got` the library result converted to f32.
 * Writes a short explanation into msg for failures and mistrust. */
pc_cmp_result pc_compare(const pc_part_view *pv, const pc_op *producer, size_t out_index, const pc_lt *lt,
                         const float *ref, const float *got, int64_t n, char *msg, size_t cap);

#endif
