/* Packing of integer operands (s8, u8, s4, u4): U8S8 panels with their k
 * sums, and integer weights dequantised into F32 / BF16 panels (see
 * gemm_internal.h for the layout).
 *
 * Each panel is zeroed first, then every valid row is filled in the order
 * the source allows: with k contiguous a row at a time (a run of k decoded
 * at once, dequantisation parameters per group segment); with rows
 * contiguous a k at a time (a run of rows decoded at once, parameters per
 * row refreshed at group boundaries); otherwise element by element.  The
 * runs are plain loops over arrays, which the compiler vectorises.  On
 * AVX-512, k-contiguous weights into strips of a multiple of 16 rows go
 * through x86/gemm_pack_int_avx512.c. */
#include <string.h>

#include "ir/dtype.h"
#include "ir/dtype_round.h"
#include "kernels/gemm/gemm_int_load.h"
#include "kernels/gemm/gemm_internal.h"
#include "kernels/x86/gemm_pack_int_x86.h"

/* Elements decoded per step of a k-contiguous row. */
#define RUN 256

/* n integers of type dt from element e0 on, `step` elements apart. */
static void decode_ints(const void *p, dnnl_data_type_t dt, int64_t e0, int64_t step, int64_t n, int32_t *out) {
    switch (dt) {
    case dnnl_s8: {
        const int8_t *s = (const int8_t *)p + e0;
        if (step == 1)
            for (int64_t i = 0; i < n; ++i) out[i] = s[i];
        else
            for (int64_t i = 0; i < n; ++i) out[i] = s[i * step];
        return;
    }
    case dnnl_u8: {
        const uint8_t *s = (const uint8_t *)p + e0;
        if (step == 1)
            for (int64_t i = 0; i < n; ++i) out[i] = s[i];
        else
            for (int64_t i = 0; i < n; ++i) out[i] = s[i * step];
        return;
    }
    case dnnl_s4:
    case dnnl_u4: {
        int64_t i = 0;
        if (step == 1) {
            if (e0 & 1) out[i++] = pt_gemm_load_int(p, dt, e0);
            /* Whole bytes: low nibble first, s4 sign-extended as (v ^ 8) - 8. */
            const uint8_t *s = (const uint8_t *)p + (e0 + i) / 2;
            const int32_t flip = dt == dnnl_s4 ? 8 : 0;
            int64_t pairs = (n - i) / 2;
            for (int64_t j = 0; j < pairs; ++j) {
                out[i + 2 * j] = ((s[j] & 15) ^ flip) - flip;
                out[i + 2 * j + 1] = ((s[j] >> 4) ^ flip) - flip;
            }
            i += 2 * pairs;
        }
        for (; i < n; ++i) out[i] = pt_gemm_load_int(p, dt, e0 + i * step);
        return;
    }
    default:
        for (int64_t i = 0; i < n; ++i) out[i] = pt_gemm_load_int(p, dt, e0 + i * step);
        return;
    }
}

/* ---- U8S8 panels ------------------------------------------------------------ */

void pt_gemm_pack_u8s8_rows(int R, const uint8_t *const *rows, int rows_in, int nseg, int64_t seglen, uint8_t flip,
                            uint8_t *dst, int32_t *sums) {
    const int64_t kc = (int64_t)nseg * seglen;
    if (pt_isa() >= PT_ISA_AVX512 && R % 4 == 0 && R <= PT_GEMM_U8S8_STRIP_MAX_R) {
        pt_gemm_pack_u8s8_strip_avx512(R, rows, rows_in, nseg, seglen, kc, flip, false, dst, sums);
        return;
    }
    for (int r = 0; r < R; ++r) {
        int32_t sum = 0;
        for (int64_t k = 0; k < kc; ++k) {
            const uint8_t v = r < rows_in ? (uint8_t)(rows[(k / seglen) * R + r][k % seglen] ^ flip) : 0;
            dst[(k / 4) * R * 4 + r * 4 + k % 4] = v;
            sum += v;
        }
        if (r < rows_in) sums[r] = sum;
    }
}

static void pack_u8s8(const pt_gemm_ukernel *uk, bool is_b, const pt_gemm_operand *o, const void *data, int64_t r0,
                      int64_t rows, int64_t k0, int64_t kc, uint8_t *dst, int32_t *sums) {
    const int R = is_b ? uk->nr : uk->mr;
    const int64_t kcp = pt_gemm_kc_padded(uk, kc), strips = (rows + R - 1) / R;
    /* s8 A becomes u8 by +128, which on the bit pattern is a flip of bit 7. */
    const uint8_t flip = !is_b && o->dt == dnnl_s8 ? 0x80 : 0;
    const bool signed_vals = is_b && o->dt == dnnl_s8;
    const uint8_t *src = data;
    if (o->s_row == 1 && o->s_k != 1 && pt_isa() >= PT_ISA_AVX512 &&
        pt_gemm_pack_u8s8_rows_contiguous_avx512(R, o, data, r0, rows, k0, kc, kcp, flip, signed_vals, dst, sums))
        return;
    if (o->s_k == 1 && pt_isa() >= PT_ISA_AVX512 &&
        pt_gemm_pack_u8s8_k_contiguous_avx512(R, o, data, r0, rows, k0, kc, kcp, flip, signed_vals, dst, sums))
        return;
    memset(dst, 0, (size_t)(strips * R * kcp));
    if (o->dt != dnnl_s8 && o->dt != dnnl_u8) {
        /* 4-bit B (values fit s8): decoded a row at a time. */
        int32_t q[RUN];
        for (int64_t row = 0; row < rows; ++row) {
            uint8_t *out = dst + (row / R) * R * kcp + (row % R) * 4;
            int32_t sum = 0;
            for (int64_t kb = 0; kb < kc; kb += RUN) {
                const int64_t n = kc - kb < RUN ? kc - kb : RUN;
                decode_ints(data, o->dt, (r0 + row) * o->s_row + (k0 + kb) * o->s_k, o->s_k, n, q);
                for (int64_t i = 0; i < n; ++i) {
                    const int64_t k = kb + i;
                    out[(k / 4) * R * 4 + k % 4] = (uint8_t)(int8_t)q[i];
                    sum += q[i];
                }
            }
            if (sums) sums[row] = sum;
        }
        return;
    }
    if (o->s_row == 1 && o->s_k != 1) {
        /* Rows contiguous: one k at a time, R rows of it. */
        if (sums) memset(sums, 0, sizeof(int32_t) * (size_t)rows);
        for (int64_t s = 0; s < strips; ++s) {
            const int64_t rs = rows - s * R < R ? rows - s * R : R;
            uint8_t *panel = dst + s * R * kcp;
            for (int64_t k = 0; k < kc; ++k) {
                const uint8_t *in = src + (r0 + s * R) + (k0 + k) * o->s_k;
                uint8_t *out = panel + (k / 4) * R * 4 + k % 4;
                for (int64_t r = 0; r < rs; ++r) out[4 * r] = in[r] ^ flip;
                if (sums)
                    for (int64_t r = 0; r < rs; ++r) sums[s * R + r] += signed_vals ? (int8_t)in[r] : (in[r] ^ flip);
            }
        }
        return;
    }
    /* k contiguous (or any strides): a row at a time, quads of k as words. */
    for (int64_t row = 0; row < rows; ++row) {
        const uint8_t *in = src + (r0 + row) * o->s_row + k0 * o->s_k;
        uint8_t *out = dst + (row / R) * R * kcp + (row % R) * 4;
        int32_t sum = 0;
        if (o->s_k == 1) {
            int64_t k = 0;
            for (; k + 4 <= kc; k += 4) {
                uint32_t v;
                memcpy(&v, in + k, 4);
                v ^= flip * 0x01010101u;
                memcpy(out + k * R, &v, 4);
            }
            for (; k < kc; ++k) out[(k / 4) * R * 4 + k % 4] = in[k] ^ flip;
            /* s8 sources sum as signed; the shifted A adds 128 per k. */
            if (o->dt == dnnl_s8)
                for (int64_t i = 0; i < kc; ++i) sum += (int8_t)in[i];
            else
                for (int64_t i = 0; i < kc; ++i) sum += in[i];
            if (flip) sum += 128 * (int32_t)kc;
        } else {
            for (int64_t k = 0; k < kc; ++k) {
                uint8_t v = in[k * o->s_k] ^ flip;
                out[(k / 4) * R * 4 + k % 4] = v;
                sum += signed_vals ? (int8_t)v : v;
            }
        }
        if (sums) sums[row] = sum;
    }
}

/* ---- dequantised F32 / BF16 panels -------------------------------------------- */

/* Zero point and scale of weight row `row` in group g. */
static inline void params_at(const pt_gemm_dequant *dq, const void *scales, const void *zps, int64_t row, int64_t g,
                             int32_t *zp, float *scale) {
    *zp = dq->zp_dt != dnnl_data_type_undef ? pt_gemm_load_int(zps, dq->zp_dt, row * dq->zp_sn + g * dq->zp_sg) : 0;
    *scale = pt_gemm_load_scale(scales, dq->scale_dt, row * dq->sc_sn + g * dq->sc_sg);
}

/* Writes value v of (row r of the strip, k) into a panel of R rows. */
static inline void put_f32(float *panel, int R, int64_t k, int64_t r, float v) { panel[k * R + r] = v; }
static inline void put_bf16(uint16_t *panel, int R, int64_t k, int64_t r, float v) {
    panel[(k >> 1) * R * 2 + r * 2 + (k & 1)] = pt_bf16_bits_rne(v);
}

/* k contiguous (or any strides): a row at a time, RUN k per decode. */
static void dequant_by_rows(const pt_gemm_ukernel *uk, int R, const pt_gemm_operand *o, const void *data,
                            const void *scales, const void *zps, int64_t r0, int64_t rows, int64_t k0, int64_t kc,
                            int64_t kcp, void *dst) {
    const pt_gemm_dequant *dq = &o->dq;
    const bool bf16 = uk->kind == PT_GEMM_BF16;
    int32_t q[RUN];
    float v[RUN];
    for (int64_t row = 0; row < rows; ++row) {
        const int64_t src_row = r0 + row, r = row % R, strip_off = (row / R) * R * kcp;
        for (int64_t kb = 0; kb < kc; kb += RUN) {
            const int64_t n = kc - kb < RUN ? kc - kb : RUN;
            decode_ints(data, o->dt, src_row * o->s_row + (k0 + kb) * o->s_k, o->s_k, n, q);
            if (!dq->on) {
                for (int64_t i = 0; i < n; ++i) v[i] = (float)q[i];
            } else {
                /* Segments of one group each. */
                for (int64_t i = 0; i < n;) {
                    const int64_t k = k0 + kb + i, g = dq->group > 0 ? k / dq->group : 0;
                    const int64_t end = dq->group > 0 ? (g + 1) * dq->group - (k0 + kb) : n;
                    const int64_t e = end < n ? end : n;
                    int32_t zp;
                    float scale;
                    params_at(dq, scales, zps, src_row, g, &zp, &scale);
                    for (; i < e; ++i) v[i] = pt_round_to_dt(dq->round_dt, (float)(q[i] - zp) * scale);
                }
            }
            if (bf16) {
                uint16_t *panel = (uint16_t *)dst + strip_off;
                for (int64_t i = 0; i < n; ++i) put_bf16(panel, R, kb + i, r, v[i]);
            } else {
                float *panel = (float *)dst + strip_off;
                for (int64_t i = 0; i < n; ++i) put_f32(panel, R, kb + i, r, v[i]);
            }
        }
    }
}

/* Rows contiguous: a k at a time, the strip's rows decoded together with
 * their parameters kept per row until the group changes. */
static void dequant_by_k(const pt_gemm_ukernel *uk, int R, const pt_gemm_operand *o, const void *data,
                         const void *scales, const void *zps, int64_t r0, int64_t rows, int64_t k0, int64_t kc,
                         int64_t kcp, void *dst) {
    enum { MAX_R = 256 };
    const pt_gemm_dequant *dq = &o->dq;
    const bool bf16 = uk->kind == PT_GEMM_BF16;
    const int64_t strips = (rows + R - 1) / R;
    int32_t q[MAX_R], zp[MAX_R];
    float v[MAX_R], scale[MAX_R];
    for (int64_t s = 0; s < strips; ++s) {
        const int64_t rs = rows - s * R < R ? rows - s * R : R, row0 = r0 + s * R;
        int64_t cur_g = -1;
        for (int64_t k = 0; k < kc; ++k) {
            decode_ints(data, o->dt, row0 * o->s_row + (k0 + k) * o->s_k, 1, rs, q);
            if (dq->on) {
                const int64_t g = dq->group > 0 ? (k0 + k) / dq->group : 0;
                if (g != cur_g) {
                    for (int64_t r = 0; r < rs; ++r) params_at(dq, scales, zps, row0 + r, g, &zp[r], &scale[r]);
                    cur_g = g;
                }
                for (int64_t r = 0; r < rs; ++r) v[r] = pt_round_to_dt(dq->round_dt, (float)(q[r] - zp[r]) * scale[r]);
            } else {
                for (int64_t r = 0; r < rs; ++r) v[r] = (float)q[r];
            }
            if (bf16) {
                uint16_t *panel = (uint16_t *)dst + s * R * kcp;
                for (int64_t r = 0; r < rs; ++r) put_bf16(panel, R, k, r, v[r]);
            } else {
                float *panel = (float *)dst + s * R * kcp;
                for (int64_t r = 0; r < rs; ++r) put_f32(panel, R, k, r, v[r]);
            }
        }
    }
}

void pt_gemm_pack_panels_int(const pt_gemm_ukernel *uk, bool is_b, const pt_gemm_operand *o, const void *data,
                             const void *scales, const void *zps, int64_t r0, int64_t rows, int64_t k0, int64_t kc,
                             void *dst, int32_t *sums) {
    if (uk->kind == PT_GEMM_U8S8) {
        pack_u8s8(uk, is_b, o, data, r0, rows, k0, kc, dst, sums);
        return;
    }
    const int R = is_b ? uk->nr : uk->mr;
    const int64_t kcp = pt_gemm_kc_padded(uk, kc), strips = (rows + R - 1) / R;
    memset(dst, 0, (size_t)(strips * R * kcp) * pt_gemm_panel_elem_bytes(uk->kind));
    if (sums) memset(sums, 0, sizeof(int32_t) * (size_t)rows);
    if (pt_isa() >= PT_ISA_AVX512 && pt_gemm_pack_dequant_avx512(uk, R, o, data, scales, zps, r0, rows, k0, kc, dst))
        return;
    if (o->s_row == 1 && o->s_k != 1 && R <= 256)
        dequant_by_k(uk, R, o, data, scales, zps, r0, rows, k0, kc, kcp, dst);
    else
        dequant_by_rows(uk, R, o, data, scales, zps, r0, rows, k0, kc, kcp, dst);
}
