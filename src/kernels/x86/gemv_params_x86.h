/* Dequantisation parameters of the small-M path as f32 (shared by the
 * AVX-512 chunk kernels): runs of contiguous scales / zero points are
 * converted 16 at a time, strided ones one by one with the type switch
 * outside the loop.  For files built with AVX-512 flags only. */
#ifndef PARTITA_KERNELS_X86_GEMV_PARAMS_X86_H
#define PARTITA_KERNELS_X86_GEMV_PARAMS_X86_H

#include <immintrin.h>
#include <string.h>

#include "kernels/gemm/gemm_gemv.h"
#include "kernels/gemm/gemm_int_load.h"

static inline __mmask16 pt_gemv_lanes(int64_t n) { return n >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << n) - 1); }

/* count contiguous scales of type dt from element e0 on. */
static inline void params_scales_run(const void *p, dnnl_data_type_t dt, int64_t e0, int64_t count, float *out) {
    for (int64_t i = 0; i < count; i += 16) {
        __mmask16 m = pt_gemv_lanes(count - i);
        __m512 v;
        if (dt == dnnl_bf16)
            v = _mm512_castsi512_ps(_mm512_slli_epi32(
                _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, (const uint16_t *)p + e0 + i)), 16));
        else if (dt == dnnl_f16)
            v = _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, (const uint16_t *)p + e0 + i));
        else
            v = _mm512_maskz_loadu_ps(m, (const float *)p + e0 + i);
        _mm512_mask_storeu_ps(out + i, m, v);
    }
}

/* count contiguous zero points from element e0 on; false for a run the
 * vector code does not take (4-bit from an odd element). */
static inline bool params_zps_run(const void *p, dnnl_data_type_t dt, int64_t e0, int64_t count, float *out) {
    if ((dt == dnnl_s4 || dt == dnnl_u4) && (e0 & 1)) return false;
    for (int64_t i = 0; i < count; i += 16) {
        __mmask16 m = pt_gemv_lanes(count - i);
        __m512i v;
        switch (dt) {
        case dnnl_s8: v = _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(m, (const int8_t *)p + e0 + i)); break;
        case dnnl_u8: v = _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(m, (const uint8_t *)p + e0 + i)); break;
        case dnnl_s32: v = _mm512_maskz_loadu_epi32(m, (const int32_t *)p + e0 + i); break;
        default: {
            /* Nibble pairs: byte b feeds lanes 2b (low) and 2b + 1 (high). */
            __m128i x = _mm_maskz_loadu_epi8(pt_gemv_lanes((count - i + 1) / 2), (const uint8_t *)p + (e0 + i) / 2);
            __m512i d = _mm512_cvtepu8_epi32(_mm_unpacklo_epi8(x, x));
            if (dt == dnnl_s4) {
                const __m512i up = _mm512_setr_epi32(28, 24, 28, 24, 28, 24, 28, 24, 28, 24, 28, 24, 28, 24, 28, 24);
                v = _mm512_srai_epi32(_mm512_sllv_epi32(d, up), 28);
            } else {
                const __m512i down = _mm512_setr_epi32(0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4);
                v = _mm512_and_si512(_mm512_srlv_epi32(d, down), _mm512_set1_epi32(15));
            }
            break;
        }
        }
        _mm512_mask_storeu_ps(out + i, m, _mm512_cvtepi32_ps(v));
    }
    return true;
}

/* `count` dequantisation parameters as f32: scales at element offsets
 * sb + i * ss, zero points at zb + i * zs (0 without zero points; 1 and 0
 * without dequantisation). */
static inline void pt_gemv_params_f32(const pt_gemv_chunk *ch, int64_t sb, int64_t ss, int64_t zb, int64_t zs,
                                      int64_t count, float *scale, float *zp) {
    const pt_gemm_dequant *dq = &ch->bo->dq;
    if (!dq->on) {
        for (int64_t i = 0; i < count; ++i) scale[i] = 1.0f, zp[i] = 0.0f;
        return;
    }
    const void *sp = ch->scales, *zpp = ch->zps;
    if (ss == 1) params_scales_run(sp, dq->scale_dt, sb, count, scale);
    else if (dq->scale_dt == dnnl_bf16)
        for (int64_t i = 0; i < count; ++i) {
            uint32_t u = (uint32_t)((const uint16_t *)sp)[sb + i * ss] << 16;
            memcpy(&scale[i], &u, 4);
        }
    else if (dq->scale_dt == dnnl_f16)
        for (int64_t i = 0; i < count; ++i) scale[i] = _cvtsh_ss(((const uint16_t *)sp)[sb + i * ss]);
    else
        for (int64_t i = 0; i < count; ++i) scale[i] = ((const float *)sp)[sb + i * ss];
    if (zs == 1 && dq->zp_dt != dnnl_data_type_undef && params_zps_run(zpp, dq->zp_dt, zb, count, zp)) return;
    switch (dq->zp_dt) {
    case dnnl_s8:
        for (int64_t i = 0; i < count; ++i) zp[i] = (float)((const int8_t *)zpp)[zb + i * zs];
        break;
    case dnnl_u8:
        for (int64_t i = 0; i < count; ++i) zp[i] = (float)((const uint8_t *)zpp)[zb + i * zs];
        break;
    case dnnl_s32:
        for (int64_t i = 0; i < count; ++i) zp[i] = (float)((const int32_t *)zpp)[zb + i * zs];
        break;
    case dnnl_s4:
    case dnnl_u4:
        for (int64_t i = 0; i < count; ++i) zp[i] = (float)pt_gemm_load_int(zpp, dq->zp_dt, zb + i * zs);
        break;
    default:
        for (int64_t i = 0; i < count; ++i) zp[i] = 0.0f;
        break;
    }
}

#endif
