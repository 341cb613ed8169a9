/* Converting run access shared by the fused kernels: n elements of a buffer
 * of any data type at element offset `off`, element stride `stride`, as f32
 * values.  Typed loops for the common types (the conversions are exact, or
 * round as pt_store_f32 does), pt_load_f32 / pt_store_f32 for the rest. */
#ifndef PARTITA_KERNELS_FUSED_RUN_IO_H
#define PARTITA_KERNELS_FUSED_RUN_IO_H

#include <stdint.h>

#include "oneapi/dnnl/dnnl_common_types.h"

void pt_run_load(const void *base, dnnl_data_type_t dt, int64_t off, int64_t stride, float *x, int64_t n);
void pt_run_store(void *base, dnnl_data_type_t dt, int64_t off, int64_t stride, const float *x, int64_t n);
/* Rounds n values in place to data type dt (what a store/load round trip
 * through dt gives; identity for f32). */
void pt_run_round(dnnl_data_type_t dt, float *x, int64_t n);

#endif
