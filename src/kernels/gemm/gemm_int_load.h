/* Scalar element loads shared by the integer packer and the small-M path:
 * integer values of s8 / u8 / s4 / u4 / s32 tensors and scales of f32 /
 * bf16 / f16 tensors, by linear element offset. */
#ifndef PARTITA_KERNELS_GEMM_GEMM_INT_LOAD_H
#define PARTITA_KERNELS_GEMM_GEMM_INT_LOAD_H

#include <stdint.h>

#include "ir/dtype.h"

/* Integer element e (4-bit: byte e/2, low nibble first); 0 for other types. */
static inline int32_t pt_gemm_load_int(const void *p, dnnl_data_type_t dt, int64_t e) {
    switch (dt) {
    case dnnl_s8: return ((const int8_t *)p)[e];
    case dnnl_u8: return ((const uint8_t *)p)[e];
    case dnnl_s32: return ((const int32_t *)p)[e];
    case dnnl_s4:
    case dnnl_u4: return pt_int4_value(pt_nibble_at(p, e), dt == dnnl_s4);
    default: return 0;
    }
}

/* Scale element e of an f32 / bf16 / f16 tensor. */
static inline float pt_gemm_load_scale(const void *p, dnnl_data_type_t dt, int64_t e) {
    switch (dt) {
    case dnnl_bf16: return pt_bf16_to_f32(((const uint16_t *)p)[e]);
    case dnnl_f16: return pt_f16_to_f32(((const uint16_t *)p)[e]);
    default: return ((const float *)p)[e];
    }
}

#endif
