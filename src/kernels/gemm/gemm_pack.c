/* Packing of operands into microkernel panels (layout in gemm_internal.h):
 * float sources (f32, bf16, f16) here, integer sources in gemm_pack_int.c.
 * Each panel kind has three loops: rows contiguous (copy k by k), k
 * contiguous (transpose in k blocks that stay in L1), and any strides.  The
 * element converters are constant arguments of static inline loops, so the
 * compiler specialises one loop per source type.  On AVX-512 CPUs the common
 * f32 / bf16 layouts go to src/kernels/x86/gemm_pack_avx512.c instead. */
#include <string.h>

#include "ir/dtype.h"
#include "ir/dtype_round.h"
#include "kernels/gemm/gemm_internal.h"
#include "kernels/x86/gemm_pack_x86.h"

typedef float (*to_f32_fn)(const void *p, int64_t e);
typedef uint16_t (*to_bf16_fn)(const void *p, int64_t e);

static float f32_of_f32(const void *p, int64_t e) { return ((const float *)p)[e]; }
static float f32_of_bf16(const void *p, int64_t e) { return pt_bf16_to_f32(((const uint16_t *)p)[e]); }
static float f32_of_f16(const void *p, int64_t e) { return pt_f16_to_f32(((const uint16_t *)p)[e]); }

static uint16_t bf16_of_f32(const void *p, int64_t e) { return pt_bf16_bits_rne(((const float *)p)[e]); }
static uint16_t bf16_of_bf16(const void *p, int64_t e) { return ((const uint16_t *)p)[e]; }
static uint16_t bf16_of_f16(const void *p, int64_t e) { return pt_bf16_bits_rne(pt_f16_to_f32(((const uint16_t *)p)[e])); }

enum { K_BLOCK = 64 }; /* k run per row in the transposing loops */

/* The AVX-512 helpers take f32 / bf16 rows with contiguous k or rows. */
static bool fast_pack(void) { return pt_isa() >= PT_ISA_AVX512; }

/* One F32 strip [kc][R] from `rows_in` source rows starting at element src. */
static inline void strip_f32(to_f32_fn conv, const void *src, int64_t s_row, int64_t s_k, int rows_in, int R,
                             int64_t kc, float *dst) {
    if (s_row == 1) {
        for (int64_t k = 0; k < kc; ++k) {
            float *d = dst + k * R;
            for (int r = 0; r < rows_in; ++r) d[r] = conv(src, k * s_k + r);
            for (int r = rows_in; r < R; ++r) d[r] = 0.0f;
        }
        return;
    }
    if (rows_in < R)
        for (int64_t k = 0; k < kc; ++k) memset(dst + k * R + rows_in, 0, sizeof(float) * (size_t)(R - rows_in));
    if (s_k == 1) {
        for (int64_t kb = 0; kb < kc; kb += K_BLOCK) {
            int64_t ke = kb + K_BLOCK < kc ? kb + K_BLOCK : kc;
            for (int r = 0; r < rows_in; ++r)
                for (int64_t k = kb; k < ke; ++k) dst[k * R + r] = conv(src, r * s_row + k);
        }
        return;
    }
    for (int r = 0; r < rows_in; ++r)
        for (int64_t k = 0; k < kc; ++k) dst[k * R + r] = conv(src, r * s_row + k * s_k);
}

/* One BF16 strip [kcp/2][R][2]: element (k, r) at (k/2)*2R + 2r + k%2. */
static inline void strip_bf16(to_bf16_fn conv, const void *src, int64_t s_row, int64_t s_k, int rows_in, int R,
                              int64_t kc, uint16_t *dst) {
    const int64_t kcp = (kc + 1) & ~(int64_t)1;
    if (s_row == 1) {
        for (int64_t k = 0; k < kcp; ++k) {
            uint16_t *d = dst + (k >> 1) * 2 * R + (k & 1);
            if (k < kc)
                for (int r = 0; r < rows_in; ++r) d[2 * r] = conv(src, k * s_k + r);
            else
                for (int r = 0; r < rows_in; ++r) d[2 * r] = 0;
            for (int r = rows_in; r < R; ++r) d[2 * r] = 0;
        }
        return;
    }
    if (rows_in < R)
        for (int64_t p = 0; p < kcp / 2; ++p)
            memset(dst + p * 2 * R + 2 * rows_in, 0, sizeof(uint16_t) * 2 * (size_t)(R - rows_in));
    if (kc < kcp)
        for (int r = 0; r < rows_in; ++r) dst[(kc >> 1) * 2 * R + 2 * r + 1] = 0;
    for (int64_t kb = 0; kb < kc; kb += K_BLOCK) {
        int64_t ke = kb + K_BLOCK < kc ? kb + K_BLOCK : kc;
        for (int r = 0; r < rows_in; ++r)
            for (int64_t k = kb; k < ke; ++k) dst[(k >> 1) * 2 * R + 2 * r + (k & 1)] = conv(src, r * s_row + k * s_k);
    }
}

/* Byte address of element e of a float operand (2- or 4-byte elements). */
static inline const void *elem_at(const void *data, dnnl_data_type_t dt, int64_t e) {
    return (const char *)data + e * (dt == dnnl_f32 ? 4 : 2);
}

static void pack_f32_panels(const pt_gemm_operand *o, const void *data, int R, int64_t r0, int64_t rows,
                            int64_t k0, int64_t kc, float *dst) {
    const bool fast = fast_pack();
    if (fast && o->dt == dnnl_f32 && o->s_row == 1 && o->s_k != 1) {
        /* Rows contiguous: RCONTIG_STRIPS strips per pass over k. */
        enum { RCONTIG_STRIPS = 8 };
        for (int64_t s = 0; s * R < rows; s += RCONTIG_STRIPS) {
            const int64_t left = rows - s * R, n = left < RCONTIG_STRIPS * R ? left : RCONTIG_STRIPS * R;
            const int64_t strips = (n + R - 1) / R;
            float *d = dst + s * R * kc;
            pt_gemm_pack_f32_rcontig_avx512((const float *)data + (r0 + s * R) + k0 * o->s_k, o->s_k, (int)n, R, kc,
                                            d);
            if (o->round != dnnl_fpmath_mode_strict)
                for (int64_t i = 0; i < strips * R * kc; ++i) d[i] = pt_round_fpmath(o->round, d[i]);
        }
        return;
    }
    for (int64_t s = 0; s * R < rows; ++s) {
        int rows_in = rows - s * R < R ? (int)(rows - s * R) : R;
        const void *src = elem_at(data, o->dt, (r0 + s * R) * o->s_row + k0 * o->s_k);
        float *d = dst + s * R * kc;
        switch (o->dt) {
        case dnnl_bf16: strip_f32(f32_of_bf16, src, o->s_row, o->s_k, rows_in, R, kc, d); break;
        case dnnl_f16:
            if (fast && o->s_k == 1) pt_gemm_pack_f16_kcontig_avx512(src, o->s_row, rows_in, R, kc, d);
            else if (fast && o->s_row == 1) pt_gemm_pack_f16_rcontig_avx512(src, o->s_k, rows_in, R, kc, d);
            else strip_f32(f32_of_f16, src, o->s_row, o->s_k, rows_in, R, kc, d);
            break;
        default:
            if (o->s_k == 1 && fast) pt_gemm_pack_f32_kcontig_avx512(src, o->s_row, rows_in, R, kc, d);
            else strip_f32(f32_of_f32, src, o->s_row, o->s_k, rows_in, R, kc, d);
            /* The math mode rounds f32 operands only; the strip is hot in L1. */
            if (o->round != dnnl_fpmath_mode_strict)
                for (int64_t i = 0; i < R * kc; ++i) d[i] = pt_round_fpmath(o->round, d[i]);
            break;
        }
    }
}

static void pack_bf16_panels(const pt_gemm_operand *o, const void *data, int R, int64_t r0, int64_t rows,
                             int64_t k0, int64_t kc, uint16_t *dst) {
    const int64_t kcp = (kc + 1) & ~(int64_t)1;
    const bool fast = fast_pack() && o->dt != dnnl_f16 && (o->s_k == 1 || o->s_row == 1);
    if (fast && o->dt == dnnl_bf16 && o->s_row == 1 && o->s_k != 1 && R % 32 == 0) {
        /* Rows contiguous: RCONTIG_STRIPS strips per pass over k. */
        enum { RCONTIG_STRIPS = 8 };
        for (int64_t s = 0; s * R < rows; s += RCONTIG_STRIPS) {
            const int64_t left = rows - s * R, n = left < RCONTIG_STRIPS * R ? left : RCONTIG_STRIPS * R;
            pt_gemm_pack_bf16_rcontig_avx512((const uint16_t *)data + (r0 + s * R) + k0 * o->s_k, true, o->s_k, (int)n,
                                             R, kc, dst + s * R * kcp);
        }
        return;
    }
    for (int64_t s = 0; s * R < rows; ++s) {
        int rows_in = rows - s * R < R ? (int)(rows - s * R) : R;
        const void *src = elem_at(data, o->dt, (r0 + s * R) * o->s_row + k0 * o->s_k);
        uint16_t *d = dst + s * R * kcp;
        if (fast && o->s_k == 1) {
            pt_gemm_pack_bf16_kcontig_avx512(src, o->dt == dnnl_bf16, o->s_row, rows_in, R, kc, d);
            continue;
        }
        if (fast) {
            pt_gemm_pack_bf16_rcontig_avx512(src, o->dt == dnnl_bf16, o->s_k, rows_in, R, kc, d);
            continue;
        }
        switch (o->dt) {
        case dnnl_bf16: strip_bf16(bf16_of_bf16, src, o->s_row, o->s_k, rows_in, R, kc, d); break;
        case dnnl_f16: strip_bf16(bf16_of_f16, src, o->s_row, o->s_k, rows_in, R, kc, d); break;
        default: strip_bf16(bf16_of_f32, src, o->s_row, o->s_k, rows_in, R, kc, d); break;
        }
    }
}

void pt_gemm_pack_f32_rows(const float *const *rows, int rows_in, int R, int64_t kc, dnnl_fpmath_mode_t round,
                           float *dst) {
    if (fast_pack()) {
        pt_gemm_pack_f32_rows_avx512(rows, rows_in, R, kc, dst);
    } else {
        for (int64_t k = 0; k < kc; ++k) {
            float *d = dst + k * R;
            for (int r = 0; r < R; ++r) d[r] = r < rows_in && rows[r] ? rows[r][k] : 0.f;
        }
    }
    if (round != dnnl_fpmath_mode_strict)
        for (int64_t i = 0; i < R * kc; ++i) dst[i] = pt_round_fpmath(round, dst[i]);
}

void pt_gemm_pack_panels(const pt_gemm_ukernel *uk, bool is_b, const pt_gemm_operand *o, const void *data,
                         const void *scales, const void *zps, int64_t r0, int64_t rows, int64_t k0, int64_t kc,
                         void *dst, int32_t *sums) {
    switch (o->dt) {
    case dnnl_s8:
    case dnnl_u8:
    case dnnl_s4:
    case dnnl_u4: pt_gemm_pack_panels_int(uk, is_b, o, data, scales, zps, r0, rows, k0, kc, dst, sums); return;
    default: break;
    }
    const int R = is_b ? uk->nr : uk->mr;
    if (uk->kind == PT_GEMM_BF16) pack_bf16_panels(o, data, R, r0, rows, k0, kc, dst);
    else pack_f32_panels(o, data, R, r0, rows, k0, kc, dst);
}
