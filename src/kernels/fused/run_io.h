/* Converting run access shared by the fused kernels: n elements of a buffer
 * of any data type at element offset `off`, element stride `stride`, as f32
 * values.  Typed loops for the common types (the conversions are exact, or
 * round as pt_store_f32 does), pt_load_f32 / pt_store_f32 for the rest. */
#ifndef PARTITA_KERNELS_FUSED_RUN_IO_H
#define PARTITA_KERNELS_FUSED_RUN_IO_H

#include <stdint.h>

#include "oneapi/dnnl/dnnl_common_types.h"
#include "ir/dtype.h"
#include "ir/dtype_round.h"

void pt_run_load(const void *base, dnnl_data_type_t dt, int64_t off, int64_t stride, float *x, int64_t n);
void pt_run_store(void *base, dnnl_data_type_t dt, int64_t off, int64_t stride, const float *x, int64_t n);
/* Rounds n values in place to data type dt (what a store/load round trip
 * through dt gives; identity for f32). */
void pt_run_round(dnnl_data_type_t dt, float *x, int64_t n);

/* The same access one element at a time, inline: for kernels whose inner
 * loops touch single elements (attention tiles). */
static inline float pt_elem_load(const void *base, dnnl_data_type_t dt, int64_t off) {
    switch ((int)dt) {
        case dnnl_f32: return ((const float *)base)[off];
        case dnnl_bf16: return pt_bf16_to_f32(((const uint16_t *)base)[off]);
        case dnnl_f16: return pt_f16_to_f32(((const uint16_t *)base)[off]);
        case dnnl_s8: return (float)((const int8_t *)base)[off];
        case dnnl_u8: return (float)((const uint8_t *)base)[off];
        default: return pt_load_f32(base, dt, off);
    }
}

static inline void pt_elem_store(void *base, dnnl_data_type_t dt, int64_t off, float v) {
    switch ((int)dt) {
        case dnnl_f32: ((float *)base)[off] = v; break;
        case dnnl_bf16: ((uint16_t *)base)[off] = pt_f32_to_bf16(v); break;
        case dnnl_f16: ((uint16_t *)base)[off] = pt_f32_to_f16(v); break;
        default: pt_store_f32(base, dt, off, v); break;
    }
}

/* Rounds to a declared type: the value an op writing that type stores
 * (identity for f32; integer and f8 types go through their store). */
static inline float pt_elem_round(dnnl_data_type_t dt, float v) {
    switch ((int)dt) {
        case dnnl_f32: return v;
        case dnnl_bf16:
        case dnnl_f16: return pt_round_to_dt(dt, v);
        default: {
            uint64_t tmp = 0;
            pt_store_f32(&tmp, dt, 0, v);
            return pt_load_f32(&tmp, dt, 0);
        }
    }
}

#endif
