/* Packing of integer operands (s8, u8, s4, u4): U8S8 panels with their k
 * sums, and integer weights dequantised into F32 / BF16 panels (see
 * gemm_internal.h for the layout). */
#include <string.h>

#include "ir/dtype.h"
#include "kernels/gemm/gemm_internal.h"

/* Integer element e of a tensor of type dt (4-bit: byte e/2, low nibble first). */
static inline int32_t load_int(const void *p, dnnl_data_type_t dt, int64_t e) {
    switch (dt) {
    case dnnl_s8: return ((const int8_t *)p)[e];
    case dnnl_u8: return ((const uint8_t *)p)[e];
    case dnnl_s32: return ((const int32_t *)p)[e];
    case dnnl_s4: {
        uint8_t byte = ((const uint8_t *)p)[e >> 1], v = (e & 1) ? byte >> 4 : byte & 15;
        return (int32_t)(v ^ 8) - 8;
    }
    case dnnl_u4: {
        uint8_t byte = ((const uint8_t *)p)[e >> 1];
        return (e & 1) ? byte >> 4 : byte & 15;
    }
    default: return 0;
    }
}

static inline float load_scale(const void *p, dnnl_data_type_t dt, int64_t e) {
    switch (dt) {
    case dnnl_bf16: return pt_bf16_to_f32(((const uint16_t *)p)[e]);
    case dnnl_f16: return pt_f16_to_f32(((const uint16_t *)p)[e]);
    default: return ((const float *)p)[e];
    }
}

/* Dequantised value of weight (row, k). */
static inline float dequant(const pt_gemm_operand *o, const void *data, const void *scales, const void *zps,
                            int64_t row, int64_t k) {
    int32_t q = load_int(data, o->dt, row * o->s_row + k * o->s_k);
    if (!o->dq.on) return (float)q;
    const pt_gemm_dequant *d = &o->dq;
    int64_t g = d->group > 0 ? k / d->group : 0;
    int32_t zp = d->zp_dt != dnnl_data_type_undef ? load_int(zps, d->zp_dt, row * d->zp_sn + g * d->zp_sg) : 0;
    return (float)(q - zp) * load_scale(scales, d->scale_dt, row * d->sc_sn + g * d->sc_sg);
}

void pt_gemm_pack_panels_int(const pt_gemm_ukernel *uk, bool is_b, const pt_gemm_operand *o, const void *data,
                             const void *scales, const void *zps, int64_t r0, int64_t rows, int64_t k0, int64_t kc,
                             void *dst, int32_t *sums) {
    const int R = is_b ? uk->nr : uk->mr, kg = uk->kg;
    const int64_t kcp = pt_gemm_kc_padded(uk, kc), strips = (rows + R - 1) / R;
    if (sums) memset(sums, 0, sizeof(int32_t) * (size_t)rows);
    for (int64_t s = 0; s < strips; ++s)
        for (int64_t kk = 0; kk < kcp; kk += kg)
            for (int r = 0; r < R; ++r)
                for (int q = 0; q < kg; ++q) {
                    int64_t row = s * R + r, k = kk + q;
                    size_t at = (size_t)(s * R * kcp + kk * R + r * kg + q);
                    bool in = row < rows && k < kc;
                    if (uk->kind == PT_GEMM_U8S8) {
                        int32_t v = in ? load_int(data, o->dt, (r0 + row) * o->s_row + (k0 + k) * o->s_k) : 0;
                        if (!is_b && o->dt == dnnl_s8 && in) v += 128;
                        if (is_b) ((int8_t *)dst)[at] = (int8_t)v;
                        else ((uint8_t *)dst)[at] = (uint8_t)v;
                        if (sums && in) sums[row] += v;
                    } else {
                        float v = in ? dequant(o, data, scales, zps, r0 + row, k0 + k) : 0.0f;
                        if (uk->kind == PT_GEMM_BF16) ((uint16_t *)dst)[at] = pt_f32_to_bf16(v);
                        else ((float *)dst)[at] = v;
                    }
                }
}
