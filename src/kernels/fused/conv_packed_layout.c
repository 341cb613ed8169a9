/* Convolution weights in the engine's packed layout (conv_packed_layout.h). */
#include <math.h>
#include <string.h>

#include "ir/dtype.h"
#include "kernels/fused/conv_packed_layout.h"

static const char conv_tag[8] = "ptconvW";

static const pt_gemm_ukernel *ukernel_of(const pt_conv_packed_layout *l) {
    for (size_t i = 0; i < pt_gemm_ukernel_count(l->kind); ++i) {
        const pt_gemm_ukernel *uk = pt_gemm_ukernel_at(l->kind, i);
        if (strcmp(uk->name, l->ukernel) == 0) return pt_cpu_row_usable(uk->level, uk->features, pt_isa()) ? uk : NULL;
    }
    return NULL;
}

static int64_t k_of(const pt_conv_packed_layout *l) { return l->cg * l->KD * l->KH * l->KW; }

size_t pt_conv_packed_block_bytes(const pt_conv_packed_layout *l, const pt_gemm_ukernel *uk) {
    const int64_t nbp = (l->NB + uk->nr - 1) / uk->nr * uk->nr;
    const size_t b = (size_t)(nbp * pt_gemm_kc_padded(uk, k_of(l))) * pt_gemm_panel_elem_bytes(uk->kind);
    return (b + 63) / 64 * 64;
}

size_t pt_conv_packed_bytes(const pt_conv_packed_layout *l, const pt_gemm_ukernel *uk) {
    return 64 + (size_t)(l->G * l->qblocks) * pt_conv_packed_block_bytes(l, uk);
}

size_t pt_conv_packed_register(const pt_conv_packed_layout *l) {
    const pt_gemm_ukernel *uk = ukernel_of(l);
    if (!uk || memcmp(l->tag, conv_tag, sizeof conv_tag) != 0) return 0;
    return pt_opaque_layout_register(pt_conv_packed_bytes(l, uk), l, sizeof *l);
}

bool pt_conv_packed_find(size_t id, pt_conv_packed_layout *l) {
    size_t len = 0, bytes;
    return pt_opaque_layout_find(id, &bytes, l, sizeof *l, &len) && len == sizeof *l &&
           memcmp(l->tag, conv_tag, sizeof conv_tag) == 0;
}

/* Element offset in the plain weight of output channel oc (within group
 * g), input channel c of the group, tap (kd, kh, kw). */
static int64_t plain_offset(const pt_conv_packed_layout *l, const pt_lt *plain, int64_t g, int64_t oc, int64_t c,
                            int64_t tap) {
    const int64_t kw = tap % l->KW, kh = tap / l->KW % l->KH, kd = tap / (l->KW * l->KH);
    const int64_t canon[5] = {l->deconv ? g * l->cg + c : g * l->Q + oc, l->deconv ? oc : c, kd, kh, kw};
    int64_t off = 0;
    for (int d = 0; d < 5; ++d)
        if (l->wmap[d] >= 0) off += canon[d] * plain->layout.strides[l->wmap[d]];
    return off;
}

static pt_status check_plain(const pt_conv_packed_layout *l, const pt_lt *plain) {
    if (plain->data_type != l->src_dt || plain->ndims != l->wndims ||
        plain->layout_type != dnnl_graph_layout_type_strided)
        return pt_err(dnnl_invalid_arguments, "packed convolution weights: plain tensor %zu does not match the layout",
                      plain->id);
    for (int d = 0; d < l->wndims; ++d)
        if (plain->dims[d] != l->wdims[d])
            return pt_err(dnnl_invalid_arguments, "packed convolution weights: tensor %zu dim %d is %lld, layout %lld",
                          plain->id, d, (long long)plain->dims[d], (long long)l->wdims[d]);
    return dnnl_success;
}

size_t pt_conv_packed_scratch_bytes(const pt_conv_packed_layout *l) { return sizeof(float) * (size_t)(l->NB * k_of(l)); }

/* The panels of (group, block) `gb` and that block's channel range. */
static char *block_at(const pt_conv_packed_layout *l, const pt_gemm_ukernel *uk, void *packed, int64_t gb,
                      int64_t *q0, int64_t *nb) {
    *q0 = gb % l->qblocks * l->NB;
    *nb = l->Q - *q0 < l->NB ? l->Q - *q0 : l->NB;
    return (char *)packed + 64 + (size_t)gb * pt_conv_packed_block_bytes(l, uk);
}

pt_status pt_conv_packed_pack(const pt_conv_packed_layout *l, const pt_lt *plain, const void *src, void *dst,
                              float *rows) {
    PT_CHECK(check_plain(l, plain));
    const pt_gemm_ukernel *uk = ukernel_of(l);
    if (!uk) return pt_err(dnnl_invalid_arguments, "packed convolution weights: microkernel %s not usable here", l->ukernel);
    const int64_t K = k_of(l), T = l->KD * l->KH * l->KW;
    const pt_gemm_operand o = {.dt = dnnl_f32, .s_row = K, .s_k = 1, .round = l->round};
    bool finite = true;
    for (int64_t gb = 0; gb < l->G * l->qblocks; ++gb) {
        int64_t q0, nb;
        char *blk = block_at(l, uk, dst, gb, &q0, &nb);
        const int64_t g = gb / l->qblocks;
        for (int64_t j = 0; j < nb; ++j)
            for (int64_t tap = 0; tap < T; ++tap)
                for (int64_t c = 0; c < l->cg; ++c) {
                    const float v = pt_load_f32(src, l->src_dt, plain_offset(l, plain, g, q0 + j, c, tap));
                    finite = finite && isfinite(v);
                    rows[j * K + tap * l->cg + c] = v;
                }
        pt_gemm_pack_panels(uk, true, &o, rows, NULL, NULL, 0, nb, 0, K, blk, NULL);
    }
    memset(dst, 0, 64);
    ((char *)dst)[63] = finite;
    return dnnl_success;
}

pt_status pt_conv_packed_unpack(const pt_conv_packed_layout *l, const pt_lt *plain, const void *src, void *dst) {
    PT_CHECK(check_plain(l, plain));
    const pt_gemm_ukernel *uk = ukernel_of(l);
    if (!uk) return pt_err(dnnl_invalid_arguments, "packed convolution weights: microkernel %s not usable here", l->ukernel);
    const int64_t K = k_of(l), kcp = pt_gemm_kc_padded(uk, K);
    const int nr = uk->nr, kg = uk->kg;
    for (int64_t gb = 0; gb < l->G * l->qblocks; ++gb) {
        int64_t q0, nb;
        const char *blk = block_at(l, uk, (void *)src, gb, &q0, &nb);
        const int64_t g = gb / l->qblocks;
        for (int64_t j = 0; j < nb; ++j)
            for (int64_t k = 0; k < K; ++k) {
                const size_t at = (size_t)(j / nr) * (size_t)nr * (size_t)kcp +
                                  ((size_t)(k / kg) * (size_t)nr + (size_t)(j % nr)) * (size_t)kg + (size_t)(k % kg);
                const float v = uk->kind == PT_GEMM_BF16 ? pt_bf16_to_f32(((const uint16_t *)blk)[at]) : ((const float *)blk)[at];
                pt_store_f32(dst, l->src_dt, plain_offset(l, plain, g, q0 + j, k % l->cg, k / l->cg), v);
            }
    }
    return dnnl_success;
}
