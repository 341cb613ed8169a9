/* AVX-512 dequantising packer for the common weight layouts: s8 / u8 / s4 /
 * u4 with k contiguous into F32 or BF16 panels whose strip width is a
 * multiple of 16, and with rows contiguous into any strip width
 * (kernels/gemm/gemm_pack_int.c dispatches here).
 *
 * Sixteen rows at a time: each row's run of k is decoded and dequantised in
 * a vector (16 k for F32 panels, 32 k for BF16 panels, whose dwords are
 * then the (even k, odd k) pairs of the panel), and one 16 x 16 dword
 * transpose turns the rows into panel lines.  The values are those of the
 * portable packer bit for bit: (float)(q - zp) * scale, bf16 by round to
 * nearest even with NaN quieted as pt_f32_to_bf16 does. */
#include <immintrin.h>
#include <string.h>

#include "kernels/gemm/gemm_int_load.h"
#include "kernels/x86/avx512_transpose.h"
#include "kernels/x86/gemm_pack_int_x86.h"

static inline __mmask16 lanes16(int64_t n) {
    return n >= 16 ? (__mmask16)0xffff : n <= 0 ? (__mmask16)0 : (__mmask16)((1u << n) - 1);
}

/* `count` (<= 16) integers of type dt from element e on (e even for 4-bit),
 * as f32; lanes past count zero. */
static inline __m512 decode16(const void *p, dnnl_data_type_t dt, int64_t e, int64_t count) {
    const __mmask16 m = lanes16(count);
    __m512i v;
    switch (dt) {
    case dnnl_s8: v = _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(m, (const int8_t *)p + e)); break;
    case dnnl_u8: v = _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(m, (const uint8_t *)p + e)); break;
    default: {
        __m128i x = _mm_maskz_loadu_epi8(lanes16((count + 1) / 2), (const uint8_t *)p + e / 2);
        __m512i d = _mm512_cvtepu8_epi32(_mm_unpacklo_epi8(x, x)); /* byte b in lanes 2b, 2b + 1 */
        if (dt == dnnl_s4) {
            const __m512i up = _mm512_setr_epi32(28, 24, 28, 24, 28, 24, 28, 24, 28, 24, 28, 24, 28, 24, 28, 24);
            v = _mm512_srai_epi32(_mm512_sllv_epi32(d, up), 28);
        } else {
            const __m512i down = _mm512_setr_epi32(0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4, 0, 4);
            v = _mm512_and_si512(_mm512_srlv_epi32(d, down), _mm512_set1_epi32(15));
        }
        v = _mm512_maskz_mov_epi32(m, v);
        break;
    }
    }
    return _mm512_cvtepi32_ps(v);
}

/* bf16 bits of each lane in its low half (pt_f32_to_bf16). */
static inline __m512i to_bf16_bits(__m512 x) {
    __m512i u = _mm512_castps_si512(x);
    __m512i r = _mm512_add_epi32(u, _mm512_add_epi32(_mm512_set1_epi32(0x7fff),
                                                     _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1))));
    r = _mm512_srli_epi32(r, 16);
    __m512i nan = _mm512_or_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(0x40));
    return _mm512_mask_mov_epi32(r, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), nan);
}

/* A vector of dequantised values rounded to round_dt (pt_round_f16 /
 * pt_round_bf16: round to nearest even; vcvtps2ph's conversion is that,
 * overflow to infinity and subnormals included). */
static inline __m512 dq_round16(const pt_gemm_dequant *dq, __m512 v) {
    if (dq->round_dt == dnnl_f16) return _mm512_cvtph_ps(_mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    if (dq->round_dt == dnnl_bf16) return _mm512_castsi512_ps(_mm512_slli_epi32(to_bf16_bits(v), 16));
    return v;
}

/* Rows contiguous: per k (per pair of k for BF16), 16 rows decode straight
 * into a panel line; parameters per row are refreshed when the group
 * changes. */
static bool pack_rows_contiguous(const pt_gemm_ukernel *uk, int R, const pt_gemm_operand *o, const void *data,
                                 const void *scales, const void *zps, int64_t r0, int64_t rows, int64_t k0,
                                 int64_t kc, void *dst) {
    enum { MAX_R = 256 };
    const bool bf16 = uk->kind == PT_GEMM_BF16, nibble = o->dt == dnnl_s4 || o->dt == dnnl_u4;
    const pt_gemm_dequant *dq = &o->dq;
    const int kstep = bf16 ? 2 : 1;
    if (R > MAX_R || (nibble && (r0 % 2 != 0 || o->s_k % 2 != 0))) return false;
    /* A BF16 pair of k shares its parameters. */
    if (bf16 && (k0 % 2 != 0 || (dq->on && dq->group % 2 != 0))) return false;
    const int64_t kcp = pt_gemm_kc_padded(uk, kc);
    /* Parameters the same for every row (per k, e.g. a V whose scales go
     * per key): one of each per group, not a row's worth. */
    const bool uniform = dq->on && dq->sc_sn == 0 && (dq->zp_dt == dnnl_data_type_undef || dq->zp_sn == 0);
    _Alignas(64) float zp[MAX_R], scale[MAX_R];
    __m512 zv = _mm512_setzero_ps(), sv = zv; /* uniform: this group's */
    for (int64_t s = 0; s * R < rows; ++s) {
        const int64_t rs = rows - s * R < R ? rows - s * R : R, row0 = r0 + s * R;
        int64_t cur_g = -1;
        for (int64_t k = 0; k < kc; k += kstep) {
            if (dq->on) {
                const int64_t g = dq->group > 0 ? (k0 + k) / dq->group : 0;
                if (g != cur_g && uniform) {
                    const float z = dq->zp_dt != dnnl_data_type_undef
                                        ? (float)pt_gemm_load_int(zps, dq->zp_dt, g * dq->zp_sg)
                                        : 0.0f;
                    zv = _mm512_set1_ps(z), sv = _mm512_set1_ps(pt_gemm_load_scale(scales, dq->scale_dt, g * dq->sc_sg));
                    cur_g = g;
                } else if (g != cur_g) {
                    for (int64_t r = 0; r < rs; ++r) {
                        const int64_t row = row0 + r;
                        zp[r] = dq->zp_dt != dnnl_data_type_undef
                                    ? (float)pt_gemm_load_int(zps, dq->zp_dt, row * dq->zp_sn + g * dq->zp_sg)
                                    : 0.0f;
                        scale[r] = pt_gemm_load_scale(scales, dq->scale_dt, row * dq->sc_sn + g * dq->sc_sg);
                    }
                    cur_g = g;
                }
            }
            for (int64_t b = 0; b < rs; b += 16) {
                const int64_t count = rs - b, e = row0 + b + (k0 + k) * o->s_k;
                __m512 v[2];
                for (int q = 0; q < kstep; ++q) {
                    /* k past kc (the odd tail of a BF16 pair) stays zero. */
                    v[q] = _mm512_setzero_ps();
                    if (k + q >= kc) continue;
                    v[q] = decode16(data, o->dt, e + q * o->s_k, count);
                    if (dq->on)
                        v[q] = dq_round16(dq, _mm512_maskz_mul_ps(lanes16(count),
                                                                  _mm512_sub_ps(v[q], uniform ? zv : _mm512_loadu_ps(zp + b)),
                                                                  uniform ? sv : _mm512_loadu_ps(scale + b)));
                }
                const __mmask16 m = lanes16(count);
                if (bf16) {
                    __m512i pair = _mm512_or_si512(to_bf16_bits(v[0]), _mm512_slli_epi32(to_bf16_bits(v[1]), 16));
                    _mm512_mask_storeu_epi32((uint16_t *)dst + s * R * kcp + (k / 2) * R * 2 + b * 2, m, pair);
                } else {
                    _mm512_mask_storeu_ps((float *)dst + s * R * kcp + k * R + b, m, v[0]);
                }
            }
        }
    }
    return true;
}

bool pt_gemm_pack_dequant_avx512(const pt_gemm_ukernel *uk, int R, const pt_gemm_operand *o, const void *data,
                                 const void *scales, const void *zps, int64_t r0, int64_t rows, int64_t k0,
                                 int64_t kc, void *dst) {
    const bool bf16 = uk->kind == PT_GEMM_BF16, nibble = o->dt == dnnl_s4 || o->dt == dnnl_u4;
    const int KB = bf16 ? 32 : 16; /* k per row vector pair / vector */
    const pt_gemm_dequant *dq = &o->dq;
    if (uk->kind != PT_GEMM_F32 && !bf16) return false;
    if (o->dt != dnnl_s8 && o->dt != dnnl_u8 && !nibble) return false;
    if (o->s_row == 1 && o->s_k != 1) return pack_rows_contiguous(uk, R, o, data, scales, zps, r0, rows, k0, kc, dst);
    if (o->s_k != 1 || R % 16 != 0 || k0 % KB != 0) return false;
    if (nibble && o->s_row % 2 != 0) return false;
    if (dq->on && dq->group > 0 && dq->group % KB != 0) return false;
    const int64_t kcp = pt_gemm_kc_padded(uk, kc);
    for (int64_t rb = 0; rb < rows; rb += 16) {
        const int64_t nrow = rows - rb < 16 ? rows - rb : 16;
        const int64_t strip_off = (rb / R) * R * kcp, row_off = rb % R;
        float zp[16] = {0}, scale[16] = {0};
        int64_t cur_g = -1;
        for (int64_t kk = 0; kk < kc; kk += KB) {
            const int64_t n = kc - kk < KB ? kc - kk : KB;
            if (dq->on) {
                const int64_t g = dq->group > 0 ? (k0 + kk) / dq->group : 0;
                if (g != cur_g) {
                    for (int64_t i = 0; i < nrow; ++i) {
                        const int64_t row = r0 + rb + i;
                        zp[i] = dq->zp_dt != dnnl_data_type_undef
                                    ? (float)pt_gemm_load_int(zps, dq->zp_dt, row * dq->zp_sn + g * dq->zp_sg)
                                    : 0.0f;
                        scale[i] = pt_gemm_load_scale(scales, dq->scale_dt, row * dq->sc_sn + g * dq->sc_sg);
                    }
                    cur_g = g;
                }
            }
            __m512i t[16];
            for (int64_t i = 0; i < 16; ++i) {
                if (i >= nrow) {
                    t[i] = _mm512_setzero_si512();
                    continue;
                }
                const int64_t e = (r0 + rb + i) * o->s_row + k0 + kk;
                __m512 v0 = decode16(data, o->dt, e, n), v1 = _mm512_setzero_ps();
                if (bf16) v1 = decode16(data, o->dt, e + 16, n - 16);
                if (dq->on) {
                    const __m512 z = _mm512_set1_ps(zp[i]), s = _mm512_set1_ps(scale[i]);
                    v0 = dq_round16(dq, _mm512_maskz_mul_ps(lanes16(n), _mm512_sub_ps(v0, z), s));
                    if (bf16) v1 = dq_round16(dq, _mm512_maskz_mul_ps(lanes16(n - 16), _mm512_sub_ps(v1, z), s));
                }
                if (bf16) {
                    /* Words k = 0..31 in order: low halves of v0's then v1's dwords. */
                    const __m512i pick = _mm512_setr_epi32(
                        0x00020000, 0x00060004, 0x000a0008, 0x000e000c, 0x00120010, 0x00160014, 0x001a0018, 0x001e001c,
                        0x00220020, 0x00260024, 0x002a0028, 0x002e002c, 0x00320030, 0x00360034, 0x003a0038, 0x003e003c);
                    t[i] = _mm512_permutex2var_epi16(to_bf16_bits(v0), pick, to_bf16_bits(v1));
                } else {
                    t[i] = _mm512_castps_si512(v0);
                }
            }
            pt_avx512_transpose16(t);
            /* t[j]: panel line j of this block, 16 rows wide. */
            const int64_t lines = bf16 ? (n + 1) / 2 : n;
            if (bf16) {
                uint16_t *p = (uint16_t *)dst + strip_off + (kk / 2) * R * 2 + row_off * 2;
                for (int64_t j = 0; j < lines; ++j) _mm512_storeu_si512(p + j * R * 2, t[j]);
            } else {
                float *p = (float *)dst + strip_off + kk * R + row_off;
                for (int64_t j = 0; j < lines; ++j) _mm512_storeu_si512(p + j * R, t[j]);
            }
        }
    }
    return true;
}

/* Four k of 16 rows (one xmm per k, row r in byte r) as the panel's k quads:
 * 64 bytes, row r's four k in bytes 4r..4r+3. */
static inline __mmask64 lanes64(int64_t n) {
    return n >= 64 ? ~(__mmask64)0 : n <= 0 ? (__mmask64)0 : (((__mmask64)1 << n) - 1);
}

/* Σ of the byte pairs of each word, as s16 (signed or unsigned bytes). */
static inline __m512i pair_sums(__m512i q, bool signed_vals) {
    const __m512i ones8 = _mm512_set1_epi8(1);
    return signed_vals ? _mm512_maddubs_epi16(ones8, q) : _mm512_maddubs_epi16(q, ones8);
}

bool pt_gemm_pack_u8s8_rows_contiguous_avx512(int R, const pt_gemm_operand *o, const void *data, int64_t r0,
                                              int64_t rows, int64_t k0, int64_t kc, int64_t kcp, uint8_t flip,
                                              bool signed_vals, uint8_t *dst, int32_t *sums) {
    /* Groups of strips up to GROUP_ROWS rows go through k together, so each
     * source k row is read in one run of up to 256 bytes (block by block
     * over all k re-read every line four times).  Per k quad, 64 rows a
     * step: each 64-byte k row has its dwords permuted so that byte and
     * word unpacks within 128-bit lanes leave sixteen rows' quads in order
     * in each vector (a quarter of the instructions of sixteen rows a step,
     * which made packing the weights of a 128-row product about as slow as
     * its arithmetic).  Row sums gather as s16 pair sums, widened every
     * SUM16_QUADS quads before they could overflow (|pair| <= 510). */
    enum { GROUP_ROWS = 256, PF_QUADS = 4, SUM16_QUADS = 64 };
    if (R % 16 != 0 || R > GROUP_ROWS || o->s_row != 1 || (o->dt != dnnl_s8 && o->dt != dnnl_u8)) return false;
    const uint8_t *src = data;
    const __m512i fl = _mm512_set1_epi8((char)flip), ones16 = _mm512_set1_epi16(1);
    /* Dword 4L + e <- dword 4e + L: lane L then holds rows 16e + 4L .. + 3. */
    const __m512i perm = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    const int64_t group_strips = GROUP_ROWS / R;
    for (int64_t s0 = 0; s0 * R < rows; s0 += group_strips) {
        const int64_t g_rows = rows - s0 * R < group_strips * R ? rows - s0 * R : group_strips * R;
        const int64_t nstrips = (g_rows + R - 1) / R, padded = nstrips * R, blocks = (padded + 63) / 64;
        const uint8_t *in = src + r0 + s0 * R + k0 * o->s_k;
        uint8_t *gdst = dst + s0 * R * kcp;
        __m512i sum[GROUP_ROWS / 16], sum16[GROUP_ROWS / 16];
        for (int64_t i = 0; i < padded / 16; ++i) sum[i] = sum16[i] = _mm512_setzero_si512();
        for (int64_t k = 0; k < kc; k += 4) {
            if (k + 4 * PF_QUADS < kc)
                for (int j = 0; j < 4; ++j)
                    for (int64_t r = 0; r < g_rows; r += 64)
                        _mm_prefetch((const char *)(in + (k + 4 * PF_QUADS + j) * o->s_k + r), _MM_HINT_T0);
            for (int64_t bl = 0; bl < blocks; ++bl) {
                const int64_t b = bl * 64;
                /* Rows past g_rows (the short last strip) and k past kc
                 * (the padded tail of the last quad) are zero. */
                const __mmask64 m = lanes64(g_rows - b);
                __m512i r[4];
                for (int j = 0; j < 4; ++j) {
                    r[j] = k + j < kc ? _mm512_maskz_loadu_epi8(m, in + (k + j) * o->s_k + b) : _mm512_setzero_si512();
                    if (flip && k + j < kc) r[j] = _mm512_maskz_mov_epi8(m, _mm512_xor_si512(r[j], fl));
                    r[j] = _mm512_permutexvar_epi32(perm, r[j]);
                }
                const __m512i lo01 = _mm512_unpacklo_epi8(r[0], r[1]), hi01 = _mm512_unpackhi_epi8(r[0], r[1]);
                const __m512i lo23 = _mm512_unpacklo_epi8(r[2], r[3]), hi23 = _mm512_unpackhi_epi8(r[2], r[3]);
                /* g[e]: rows b + 16e .. b + 16e + 15 in order. */
                const __m512i g[4] = {_mm512_unpacklo_epi16(lo01, lo23), _mm512_unpackhi_epi16(lo01, lo23),
                                      _mm512_unpacklo_epi16(hi01, hi23), _mm512_unpackhi_epi16(hi01, hi23)};
                for (int e = 0; e < 4; ++e) {
                    const int64_t row = b + 16 * e;
                    if (row >= padded) break;
                    _mm512_storeu_si512(gdst + (row / R) * R * kcp + k * R + (row % R) * 4, g[e]);
                    if (sums) sum16[row / 16] = _mm512_add_epi16(sum16[row / 16], pair_sums(g[e], signed_vals));
                }
            }
            if (sums && ((k / 4 + 1) % SUM16_QUADS == 0 || k + 4 >= kc))
                for (int64_t i = 0; i < padded / 16; ++i) {
                    sum[i] = _mm512_add_epi32(sum[i], _mm512_madd_epi16(sum16[i], ones16));
                    sum16[i] = _mm512_setzero_si512();
                }
        }
        if (sums)
            for (int64_t i = 0; i * 16 < g_rows; ++i)
                _mm512_mask_storeu_epi32(sums + s0 * R + i * 16, lanes16(g_rows - i * 16), sum[i]);
    }
    return true;
}

void pt_gemm_pack_u8s8_strip_avx512(int R, const uint8_t *const *rows, int rs, int nseg, int64_t seglen, int64_t kcp,
                                    uint8_t flip, bool signed_vals, uint8_t *panel, int32_t *sums) {
    const __m128i fl = _mm_set1_epi8((char)flip);
    /* Sums by vpsadbw on unsigned bytes; s8 values are summed as u8 after a
     * flip of bit 7 and the 128 per k taken off at the end. */
    const __m128i sum_flip = _mm_set1_epi8(signed_vals ? (char)0x80 : 0);
    const int64_t kc = (int64_t)nseg * seglen;
    for (int g = 0; g < R; g += 4) {
        __m128i acc[4] = {_mm_setzero_si128(), _mm_setzero_si128(), _mm_setzero_si128(), _mm_setzero_si128()};
        __m512i acc512[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(),
                             _mm512_setzero_si512()};
        for (int seg = 0; seg < nseg; ++seg) {
            const uint8_t *const *sr = rows + (size_t)seg * (size_t)R;
            uint8_t *sp = panel + seg * seglen * R; /* seglen is a multiple of 4 where nseg > 1 */
            const int64_t end = seg + 1 < nseg ? seglen : kcp - seg * seglen; /* padded k of the segment */
            int64_t k = 0;
            if (g + 4 <= rs) {
                /* Four full rows, 64 k a step: the 4 x 4 dword transposes run
                 * in the four 128-bit lanes at once; lane l holds quads
                 * 4l..4l+3 and is stored on its own. */
                const __m512i fl512 = _mm512_set1_epi8((char)flip);
                const __m512i sf512 = _mm512_set1_epi8((char)(signed_vals ? 0x80 : 0));
                for (; k + 64 <= seglen; k += 64) {
                    __m512i r[4];
                    for (int j = 0; j < 4; ++j) {
                        r[j] = _mm512_xor_si512(_mm512_loadu_si512(sr[g + j] + k), fl512);
                        acc512[j] = _mm512_add_epi64(
                            acc512[j], _mm512_sad_epu8(_mm512_xor_si512(r[j], sf512), _mm512_setzero_si512()));
                    }
                    const __m512i t0 = _mm512_unpacklo_epi32(r[0], r[1]), t1 = _mm512_unpackhi_epi32(r[0], r[1]);
                    const __m512i t2 = _mm512_unpacklo_epi32(r[2], r[3]), t3 = _mm512_unpackhi_epi32(r[2], r[3]);
                    const __m512i line[4] = {_mm512_unpacklo_epi64(t0, t2), _mm512_unpackhi_epi64(t0, t2),
                                             _mm512_unpacklo_epi64(t1, t3), _mm512_unpackhi_epi64(t1, t3)};
                    uint8_t *out = sp + k * R + g * 4;
                    for (int q = 0; q < 4; ++q) {
                        _mm_storeu_si128((__m128i *)(out + (4 * 0 + q) * 4 * R), _mm512_castsi512_si128(line[q]));
                        _mm_storeu_si128((__m128i *)(out + (4 * 1 + q) * 4 * R), _mm512_extracti32x4_epi32(line[q], 1));
                        _mm_storeu_si128((__m128i *)(out + (4 * 2 + q) * 4 * R), _mm512_extracti32x4_epi32(line[q], 2));
                        _mm_storeu_si128((__m128i *)(out + (4 * 3 + q) * 4 * R), _mm512_extracti32x4_epi32(line[q], 3));
                    }
                }
            }
            for (; k < seglen; k += 16) {
                const __mmask16 m = lanes16(seglen - k);
                __m128i r[4];
                for (int j = 0; j < 4; ++j) {
                    if (g + j >= rs) {
                        r[j] = _mm_setzero_si128();
                        continue;
                    }
                    r[j] = _mm_maskz_mov_epi8(m, _mm_xor_si128(_mm_maskz_loadu_epi8(m, sr[g + j] + k), fl));
                    const __m128i u = _mm_maskz_mov_epi8(m, _mm_xor_si128(r[j], sum_flip));
                    acc[j] = _mm_add_epi64(acc[j], _mm_sad_epu8(u, _mm_setzero_si128()));
                }
                /* 4 x 4 dword transpose: line q holds quad q of the four rows. */
                const __m128i t0 = _mm_unpacklo_epi32(r[0], r[1]), t1 = _mm_unpackhi_epi32(r[0], r[1]);
                const __m128i t2 = _mm_unpacklo_epi32(r[2], r[3]), t3 = _mm_unpackhi_epi32(r[2], r[3]);
                const __m128i line[4] = {_mm_unpacklo_epi64(t0, t2), _mm_unpackhi_epi64(t0, t2),
                                         _mm_unpacklo_epi64(t1, t3), _mm_unpackhi_epi64(t1, t3)};
                const int64_t quads = (end - k) / 4 < 4 ? (end - k) / 4 : 4;
                for (int64_t q = 0; q < quads; ++q) _mm_storeu_si128((__m128i *)(sp + (k + 4 * q) * R + g * 4), line[q]);
            }
        }
        for (int j = 0; j < 4; ++j)
            acc[j] = _mm_add_epi64(acc[j], _mm_add_epi64(_mm_add_epi64(_mm512_castsi512_si128(acc512[j]),
                                                                       _mm512_extracti32x4_epi32(acc512[j], 1)),
                                                         _mm_add_epi64(_mm512_extracti32x4_epi32(acc512[j], 2),
                                                                       _mm512_extracti32x4_epi32(acc512[j], 3))));
        if (sums)
            for (int j = 0; j < 4 && g + j < rs; ++j) {
                int64_t t = _mm_cvtsi128_si64(acc[j]) + _mm_extract_epi64(acc[j], 1);
                sums[g + j] = (int32_t)(signed_vals ? t - 128 * kc : t);
            }
    }
}

bool pt_gemm_pack_u8s8_k_contiguous_avx512(int R, const pt_gemm_operand *o, const void *data, int64_t r0,
                                           int64_t rows, int64_t k0, int64_t kc, int64_t kcp, uint8_t flip,
                                           bool signed_vals, uint8_t *dst, int32_t *sums) {
    if (R % 4 != 0 || R > PT_GEMM_U8S8_STRIP_MAX_R || o->s_k != 1 || (o->dt != dnnl_s8 && o->dt != dnnl_u8))
        return false;
    const uint8_t *src = data;
    const uint8_t *rowp[PT_GEMM_U8S8_STRIP_MAX_R];
    for (int64_t s = 0; s * R < rows; ++s) {
        const int rs = rows - s * R < R ? (int)(rows - s * R) : R;
        for (int j = 0; j < rs; ++j) rowp[j] = src + (r0 + s * R + j) * o->s_row + k0;
        pt_gemm_pack_u8s8_strip_avx512(R, rowp, rs, 1, kc, kcp, flip, signed_vals, dst + s * R * kcp,
                                       sums ? sums + s * R : NULL);
    }
    return true;
}

void pt_gemm_u8s8_row_to_f32_avx512(int32_t *c, int64_t n, const int32_t *colterm, int32_t rowterm,
                                    const float *scale) {
    const __m512i rt = _mm512_set1_epi32(rowterm);
    for (int64_t j = 0; j < n; j += 16) {
        const __mmask16 m = lanes16(n - j);
        const __m512i v = _mm512_add_epi32(
            _mm512_sub_epi32(_mm512_maskz_loadu_epi32(m, c + j), _mm512_maskz_loadu_epi32(m, colterm + j)), rt);
        const __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(v), _mm512_maskz_loadu_ps(m, scale + j));
        _mm512_mask_storeu_ps((float *)(c + j), m, f);
    }
}
