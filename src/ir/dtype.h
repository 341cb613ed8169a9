/* Data-type facts and scalar conversions (docs/numerics.md).
 * Every conversion rounds to nearest even; integer targets saturate; NaN -> 0
 * for integer targets; boolean: zero -> 0, anything else -> 1. */
#ifndef PARTITA_IR_DTYPE_H
#define PARTITA_IR_DTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "oneapi/dnnl/dnnl_common_types.h"

/* Size of one element in bits (4 for s4/u4/f4_e2m1, 0 for undef/unknown). */
int pt_dt_bits(dnnl_data_type_t dt);
/* Bytes of `n` elements stored densely (4-bit types round up). */
size_t pt_dt_bytes(dnnl_data_type_t dt, int64_t n);
/* Canonical lowercase name ("f32", "bf16", "boolean", "f8_e4m3", ...); "undef" otherwise. */
const char *pt_dt_name(dnnl_data_type_t dt);
/* Parses a name as above; returns dnnl_data_type_undef for unknown names. */
dnnl_data_type_t pt_dt_from_name(const char *name);
bool pt_dt_is_float(dnnl_data_type_t dt); /* f32 f16 bf16 f64 f8_* */
bool pt_dt_is_int(dnnl_data_type_t dt);   /* s32 s8 u8 s4 u4 s64 */
/* True for data types a graph logical tensor may carry (docs/ops.md, data types). */
bool pt_dt_is_graph_type(dnnl_data_type_t dt);

/* Scalar conversions between f32 and the narrow float formats. */
float pt_bf16_to_f32(uint16_t v);
uint16_t pt_f32_to_bf16(float f);
float pt_f16_to_f32(uint16_t v);
uint16_t pt_f32_to_f16(float f);
float pt_e5m2_to_f32(uint8_t v);
uint8_t pt_f32_to_e5m2(float f);
float pt_e4m3_to_f32(uint8_t v);
uint8_t pt_f32_to_e4m3(float f);
float pt_e8m0_to_f32(uint8_t v);
uint8_t pt_f32_to_e8m0(float f);
float pt_f4e2m1_to_f32(uint8_t nibble);
uint8_t pt_f32_to_f4e2m1(float f);

/* Saturating round-to-nearest-even float -> integer conversions (NaN -> 0). */
int8_t pt_f32_to_s8(float f);
uint8_t pt_f32_to_u8(float f);
int32_t pt_f32_to_s32(float f);
int64_t pt_f64_to_s64(double f);
int8_t pt_f32_to_s4(float f);  /* result in [-8, 7] */
uint8_t pt_f32_to_u4(float f); /* result in [0, 15] */

/* 4-bit storage: element k is the low nibble of byte k/2 when k is even,
 * the high nibble when odd.  Shared by the scalar accessors below and the
 * kernels that decode s4 / u4 in bulk. */
static inline uint8_t pt_nibble_at(const void *base, int64_t k) {
    const uint8_t b = ((const uint8_t *)base)[k >> 1];
    return (k & 1) ? (uint8_t)(b >> 4) : (uint8_t)(b & 0xfu);
}
/* The integer a nibble holds: s4 is two's complement in 4 bits. */
static inline int32_t pt_int4_value(uint8_t nibble, bool is_signed) {
    return is_signed ? (int32_t)(nibble ^ 8u) - 8 : (int32_t)nibble;
}

/* Element access in a buffer of type `dt`.  `k` is the linear element offset
 * (for 4-bit types, element k lives in byte k/2, low nibble when k is even). */
float pt_load_f32(const void *base, dnnl_data_type_t dt, int64_t k);
double pt_load_f64(const void *base, dnnl_data_type_t dt, int64_t k); /* exact for s32/s64 */
void pt_store_f32(void *base, dnnl_data_type_t dt, int64_t k, float v);
void pt_store_f64(void *base, dnnl_data_type_t dt, int64_t k, double v);

/* Bulk conversion of n dense elements (used by TypeCast/Reorder fast paths). */
void pt_convert_dense(const void *src, dnnl_data_type_t sdt, void *dst, dnnl_data_type_t ddt, int64_t n);

#endif
