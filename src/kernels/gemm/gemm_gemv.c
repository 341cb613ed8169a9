/* Small-M path (see gemm_internal.h): A is converted and rounded chunk by
 * chunk of K onto the stack; B is read where it lies.  The integer kind
 * (u8 / s8 A, s8 B) runs on the VNNI kernel (x86/gemv_u8s8_avx512vnni.c)
 * with s32 sums, where the CPU has it; elsewhere it keeps the packed path.  The AVX-512 chunk
 * kernels (x86/gemv_avx512.c, and x86/gemv_avx512bf16.c for 4-bit weights
 * of the BF16 kind) take the common cases; the portable loops below take
 * every case pt_gemm_gemv_supported admits. */
#include <string.h>

#include "ir/dtype.h"
#include "ir/dtype_round.h"
#include "kernels/gemm/gemm_gemv.h"
#include "kernels/gemm/gemm_int_load.h"

/* Columns per block of the portable loop over columns-contiguous B. */
#define PORTABLE_NBLOCK 256

static bool is_float_dt(dnnl_data_type_t dt) { return dt == dnnl_f32 || dt == dnnl_bf16 || dt == dnnl_f16; }
static bool is_int_weight_dt(dnnl_data_type_t dt) {
    return dt == dnnl_s8 || dt == dnnl_u8 || dt == dnnl_s4 || dt == dnnl_u4;
}

static bool is_nibble_dt(dnnl_data_type_t dt) { return dt == dnnl_s4 || dt == dnnl_u4; }

/* The descriptor-level half of what the AVX-512 chunk kernels take (they
 * check again per chunk).  The portable loops are far slower than packing,
 * so the path is offered only where these kernels run: the rest (other ISA
 * levels, f16 / tf32 rounding of f32 B, 4-bit weights at odd strides or in
 * groups off the 32 grid) goes to the packed GEMM. */
static bool simd_covers(const pt_gemm_desc *d) {
    const pt_gemm_operand *b = &d->b;
    if (pt_isa() < PT_ISA_AVX512) return false;
    if (d->kind == PT_GEMM_F32 && b->dt == dnnl_f32 &&
        (b->round == dnnl_fpmath_mode_f16 || b->round == dnnl_fpmath_mode_tf32))
        return false;
    const int64_t group = b->dq.on ? b->dq.group : 0;
    if (b->s_k == 1) {
        if (group > 0 && group < 32) return false;
        return !is_nibble_dt(b->dt) || (b->s_row % 2 == 0 && group % 32 == 0);
    }
    /* Columns contiguous: a tile starting at an odd 4-bit column splits
     * that column off (pt_gemm_gemv_tile). */
    return !is_nibble_dt(b->dt) || b->s_k % 2 == 0;
}

/* ---- the integer kind (U8S8) ---- */

/* K within which the s32 sums cannot overflow (K·255·128 < 2³¹). */
#define GEMV_INT_MAX_K 65536

/* Where the VNNI kernel runs (the packed path takes the rest). */
static bool int_covers(const pt_gemm_desc *d) {
    if (!pt_cpu_row_usable(PT_ISA_AVX512, PT_CPU_AVX512_VNNI, pt_isa_cap())) return false;
    if ((d->a.dt != dnnl_u8 && d->a.dt != dnnl_s8) || d->b.dt != dnnl_s8 || d->b.dq.on) return false;
    return d->K <= GEMV_INT_MAX_K && (d->b.s_row == 1 || d->b.s_k == 1);
}

static int64_t int_k_padded(const pt_gemm_desc *d) { return (d->K + 63) / 64 * 64; }

size_t pt_gemm_gemv_int_scratch(const pt_gemm_desc *d, int64_t nlen) {
    return (size_t)(d->M * int_k_padded(d)) + (size_t)nlen * sizeof(int32_t) + 64;
}

void pt_gemm_gemv_int_tile(const pt_gemm_desc *d, const void *a, const void *b, float a_scale, const float *b_scales,
                           int64_t n0, int64_t nlen, float *c, int64_t ldc, void *work) {
    if (nlen <= 0) return;
    const int M = (int)d->M;
    const int64_t K = d->K, Kp = int_k_padded(d);
    const bool s8a = d->a.dt == dnnl_s8;
    const int64_t za = (int64_t)d->q.a_zp + (s8a ? 128 : 0);
    /* A as u8 rows (s8 shifted by 128, as the packed path does), zero past K,
     * and their sums for B's zero point. */
    uint8_t *au = work;
    int32_t *colsum = (int32_t *)(((uintptr_t)(au + M * Kp) + 63) & ~(uintptr_t)63);
    int32_t rowsum[PT_GEMV_MAX_M]; /* K·255 < 2³¹ for K <= GEMV_INT_MAX_K */
    for (int m = 0; m < M; ++m) {
        uint8_t *row = au + m * Kp;
        const uint8_t *src = (const uint8_t *)a + m * d->a.s_row;
        int32_t sum = 0;
        for (int64_t k = 0; k < K; ++k) {
            row[k] = (uint8_t)(src[k * d->a.s_k] ^ (s8a ? 0x80u : 0u));
            sum += row[k];
        }
        memset(row + K, 0, (size_t)(Kp - K));
        rowsum[m] = sum;
    }
    const bool kc = d->b.s_k == 1;
    const pt_gemv_int_chunk ch = {.M = M, .a = au, .lda = Kp, .K = K,
                                  .b = (const int8_t *)b + n0 * (kc ? d->b.s_row : 1),
                                  .ldb = kc ? d->b.s_row : d->b.s_k, .k_contiguous = kc, .nlen = nlen,
                                  .acc = (int32_t *)c, .ldacc = ldc, .colsum = za ? colsum : NULL};
    pt_gemv_int_avx512vnni(&ch);
    /* The packed path's s32 -> f32 step (colsum unused when za is 0). */
    pt_gemm_u8s8_dequantize(d, a_scale, b_scales, c, ldc, rowsum, za ? colsum : NULL, n0, M, nlen);
}

bool pt_gemm_gemv_supported(const pt_gemm_desc *d) {
    if (d->kind == PT_GEMM_U8S8)
        return d->M >= 1 && d->M <= PT_GEMV_MAX_M && d->N >= 1 && d->K >= 0 && int_covers(d);
    if (d->kind != PT_GEMM_F32 && d->kind != PT_GEMM_BF16) return false;
    if (d->M < 1 || d->M > PT_GEMV_MAX_M || d->N < 1 || d->K < 0) return false;
    if (!is_float_dt(d->a.dt)) return false;
    const pt_gemm_operand *b = &d->b;
    if (!is_float_dt(b->dt) && !is_int_weight_dt(b->dt)) return false;
    if (b->s_row != 1 && b->s_k != 1) return false;
    if (b->dq.on) {
        const pt_gemm_dequant *q = &b->dq;
        if (!is_int_weight_dt(b->dt) || !is_float_dt(q->scale_dt) || q->group < 0) return false;
        if (q->zp_dt != dnnl_data_type_undef && !is_int_weight_dt(q->zp_dt) && q->zp_dt != dnnl_s32) return false;
    }
    return simd_covers(d);
}

static float load_float(const void *p, dnnl_data_type_t dt, int64_t e) {
    switch (dt) {
    case dnnl_bf16: return pt_bf16_to_f32(((const uint16_t *)p)[e]);
    case dnnl_f16: return pt_f16_to_f32(((const uint16_t *)p)[e]);
    default: return ((const float *)p)[e];
    }
}

/* Rows of A over k [k0, k0 + klen) into dst[m][..] as f32, rounded as the
 * panels of the kind would be, zero up to the next multiple of 64.  Type
 * and rounding switches sit outside the loops so that these vectorise. */
static void load_a_chunk(const pt_gemm_desc *d, const void *a, int64_t k0, int64_t klen,
                         float dst[][PT_GEMV_KCHUNK]) {
    const pt_gemm_operand *o = &d->a;
    const int64_t padded = (klen + 63) / 64 * 64, sk = o->s_k;
    const dnnl_fpmath_mode_t mode = d->kind == PT_GEMM_BF16 ? dnnl_fpmath_mode_bf16
                                    : o->dt == dnnl_f32     ? o->round
                                                            : dnnl_fpmath_mode_strict;
    for (int m = 0; m < d->M; ++m) {
        float *row = dst[m];
        const int64_t e0 = m * o->s_row + k0 * sk;
        if (o->dt == dnnl_f32) {
            const float *p = (const float *)a + e0;
            for (int64_t k = 0; k < klen; ++k) row[k] = p[k * sk];
        } else {
            const uint16_t *p = (const uint16_t *)a + e0;
            if (o->dt == dnnl_bf16)
                for (int64_t k = 0; k < klen; ++k) row[k] = pt_bf16_to_f32(p[k * sk]);
            else
                for (int64_t k = 0; k < klen; ++k) row[k] = pt_f16_to_f32(p[k * sk]);
        }
        switch (mode) {
        case dnnl_fpmath_mode_bf16:
        case dnnl_fpmath_mode_any:
            for (int64_t k = 0; k < klen; ++k) row[k] = pt_round_bf16(row[k]);
            break;
        case dnnl_fpmath_mode_f16:
            for (int64_t k = 0; k < klen; ++k) row[k] = pt_round_f16(row[k]);
            break;
        case dnnl_fpmath_mode_tf32:
            for (int64_t k = 0; k < klen; ++k) row[k] = pt_round_tf32(row[k]);
            break;
        default: break;
        }
        for (int64_t k = klen; k < padded; ++k) row[k] = 0.0f;
    }
}

/* B value (n, k): converted, dequantised and rounded as the chunk says. */
static float b_value(const pt_gemv_chunk *ch, pt_gemv_round r, int64_t n, int64_t k) {
    const pt_gemm_operand *o = ch->bo;
    int64_t e = n * o->s_row + k * o->s_k;
    float v;
    if (is_float_dt(o->dt)) {
        v = load_float(ch->b, o->dt, e);
    } else {
        int32_t q = pt_gemm_load_int(ch->b, o->dt, e);
        if (o->dq.on) {
            const pt_gemm_dequant *dq = &o->dq;
            int64_t g = dq->group > 0 ? k / dq->group : 0;
            int32_t zp = dq->zp_dt != dnnl_data_type_undef
                             ? pt_gemm_load_int(ch->zps, dq->zp_dt, n * dq->zp_sn + g * dq->zp_sg)
                             : 0;
            v = (float)(q - zp) * pt_gemm_load_scale(ch->scales, dq->scale_dt, n * dq->sc_sn + g * dq->sc_sg);
        } else {
            v = (float)q;
        }
    }
    switch (r) {
    case PT_GEMV_ROUND_BF16: return pt_round_bf16(v);
    case PT_GEMV_ROUND_F16: return pt_round_f16(v);
    case PT_GEMV_ROUND_TF32: return pt_round_tf32(v);
    default: return v;
    }
}

static void put_c(const pt_gemv_chunk *ch, int m, int64_t j, float v) {
    float *p = &ch->c[m * ch->ldc + j];
    *p = ch->accumulate ? *p + v : v;
}

/* k contiguous: one column at a time, decoded once and dotted with each row. */
static void portable_k_contiguous(const pt_gemv_chunk *ch, pt_gemv_round r) {
    float col[PT_GEMV_KCHUNK];
    for (int64_t j = 0; j < ch->nlen; ++j) {
        for (int64_t k = 0; k < ch->klen; ++k) col[k] = b_value(ch, r, ch->n0 + j, ch->k0 + k);
        for (int m = 0; m < ch->M; ++m) {
            const float *a = ch->a + m * PT_GEMV_KCHUNK;
            float s = 0.0f;
            for (int64_t k = 0; k < ch->klen; ++k) s += a[k] * col[k];
            put_c(ch, m, j, s);
        }
    }
}

/* Columns contiguous: a block of columns accumulated row of B by row. */
static void portable_n_contiguous(const pt_gemv_chunk *ch, pt_gemv_round r) {
    float acc[PT_GEMV_MAX_M][PORTABLE_NBLOCK], row[PORTABLE_NBLOCK];
    for (int64_t jb = 0; jb < ch->nlen; jb += PORTABLE_NBLOCK) {
        int64_t w = ch->nlen - jb < PORTABLE_NBLOCK ? ch->nlen - jb : PORTABLE_NBLOCK;
        memset(acc, 0, sizeof acc);
        for (int64_t k = 0; k < ch->klen; ++k) {
            for (int64_t j = 0; j < w; ++j) row[j] = b_value(ch, r, ch->n0 + jb + j, ch->k0 + k);
            for (int m = 0; m < ch->M; ++m) {
                float av = ch->a[m * PT_GEMV_KCHUNK + k];
                for (int64_t j = 0; j < w; ++j) acc[m][j] += av * row[j];
            }
        }
        for (int m = 0; m < ch->M; ++m)
            for (int64_t j = 0; j < w; ++j) put_c(ch, m, jb + j, acc[m][j]);
    }
}

void pt_gemm_gemv_tile(const pt_gemm_desc *d, const void *a, const void *b, const void *scales, const void *zps,
                       int64_t n0, int64_t nlen, float *c, int64_t ldc) {
    pt_gemm_gemv_tile_k(d, a, b, scales, zps, 0, d->K, n0, nlen, c, ldc);
}

void pt_gemm_gemv_tile_k(const pt_gemm_desc *d, const void *a, const void *b, const void *scales, const void *zps,
                         int64_t kbeg, int64_t kend, int64_t n0, int64_t nlen, float *c, int64_t ldc) {
    if (nlen <= 0) return;
    if (kend <= kbeg) {
        for (int m = 0; m < d->M; ++m) memset(c + m * ldc, 0, sizeof(float) * (size_t)nlen);
        return;
    }
    _Alignas(64) float abuf[PT_GEMV_MAX_M][PT_GEMV_KCHUNK];
    const bool simd = pt_isa() >= PT_ISA_AVX512;
    const bool simd_bf16 = pt_cpu_row_usable(PT_ISA_AVX512, PT_CPU_AVX512_BF16, pt_isa_cap());
    for (int64_t k0 = kbeg; k0 < kend; k0 += PT_GEMV_KCHUNK) {
        int64_t klen = kend - k0 < PT_GEMV_KCHUNK ? kend - k0 : PT_GEMV_KCHUNK;
        load_a_chunk(d, a, k0, klen, abuf);
        pt_gemv_chunk ch = {d->kind, (int)d->M, &abuf[0][0], k0, klen, &d->b, b, scales, zps,
                            n0, nlen, c, ldc, k0 > kbeg};
        if (simd && d->b.s_k != 1 && is_nibble_dt(d->b.dt) && (ch.n0 & 1)) {
            /* 4-bit columns contiguous from an odd column: that column alone
             * here, the rest from a whole byte on. */
            pt_gemv_chunk first = ch;
            first.nlen = 1;
            portable_n_contiguous(&first, pt_gemv_b_round(&first));
            ch.n0 += 1, ch.nlen -= 1, ch.c += 1;
            if (ch.nlen == 0) continue;
        }
        if (simd_bf16 && pt_gemv_chunk_avx512bf16(&ch)) continue;
        if (simd && pt_gemv_chunk_avx512(&ch)) continue;
        if (d->b.s_k == 1) portable_k_contiguous(&ch, pt_gemv_b_round(&ch));
        else portable_n_contiguous(&ch, pt_gemv_b_round(&ch));
    }
}
