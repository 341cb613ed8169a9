/* Data-type names, element access and rounding for the runner.  Written
 * independently of the library (docs/graph-json.md, docs/numerics.md)
 * so reference values and comparisons do not reuse the code under test. */
#ifndef PARTITA_TOOLS_DTCONV_H
#define PARTITA_TOOLS_DTCONV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "oneapi/dnnl/dnnl_common_types.h"

/* JSON dtype string <-> enum; pc_dt_from_name returns -1 for unknown names
 * ("undef" is a valid name and maps to dnnl_data_type_undef). */
int pc_dt_from_name(const char *name);
const char *pc_dt_name(dnnl_data_type_t dt);

/* Storage size in bits (4 for s4/u4, 0 for undef). */
int pc_dt_bits(dnnl_data_type_t dt);
bool pc_dt_is_float(dnnl_data_type_t dt);   /* f32 bf16 f16 f8_* */
bool pc_dt_is_xf16(dnnl_data_type_t dt);    /* bf16 f16 */
bool pc_dt_is_narrow(dnnl_data_type_t dt);  /* bf16 f16 f8_* s4 u4 */
/* Relative epsilon of the type (2^-23 f32, 2^-7 bf16, 2^-10 f16, 2^-2 e5m2,
 * 2^-3 e4m3); 0 for integer types. */
float pc_dt_eps(dnnl_data_type_t dt);

/* Rounds an f32 value to the value grid of `dt` (RNE, saturation for
 * integers, the two-step f8 rules), returned as f32. */
float pc_round_to(dnnl_data_type_t dt, float v);

/* Element k (linear element offset) of a buffer of type dt. */
float pc_load(const void *base, dnnl_data_type_t dt, int64_t k);
void pc_store(void *base, dnnl_data_type_t dt, int64_t k, float v);

/* Bytes needed by a strided tensor (docs/ops.md, memory layout). */
size_t pc_buffer_bytes(dnnl_data_type_t dt, int ndims, const int64_t *dims, const int64_t *strides);

#endif
