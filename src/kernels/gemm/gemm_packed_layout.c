/* Prepacked weights as a user-visible opaque layout (seed 004, option 2):
 * the registry entry of a plan's packed B, rebuilding a packing plan from a
 * layout id for a Reorder, and the way back (gemm.h). */
#include <string.h>

#include "ir/dtype.h"
#include "kernels/gemm/gemm_internal.h"

static const char layout_tag[8] = "ptgemmB";

static bool describable(const pt_gemm_plan *p) {
    const pt_gemm_desc *d = &p->d;
    if (d->kind != PT_GEMM_F32 && d->kind != PT_GEMM_BF16) return false;
    if (d->b.dq.on || (d->b.dt != dnnl_f32 && d->b.dt != dnnl_bf16 && d->b.dt != dnnl_f16)) return false;
    for (int i = 0; i < d->nbd; ++i)
        if (d->bdims[i] > 1 && d->b_bs[i] != 0) return false;
    return strlen(p->uk->name) < sizeof(((pt_gemm_packed_layout *)0)->ukernel);
}

static pt_gemm_packed_layout describe(const pt_gemm_plan *p, bool k_last) {
    pt_gemm_packed_layout l;
    memset(&l, 0, sizeof l); /* padding too: the registry compares bytes */
    memcpy(l.tag, layout_tag, sizeof l.tag);
    l.kind = p->d.kind;
    strcpy(l.ukernel, p->uk->name);
    l.K = p->d.K, l.N = p->d.N;
    l.src_dt = p->d.b.dt;
    l.round = p->d.kind == PT_GEMM_F32 ? p->d.b.round : dnnl_fpmath_mode_strict;
    l.k_last = k_last;
    return l;
}

size_t pt_gemm_packed_b_register(const pt_gemm_plan *p, bool k_last) {
    if (!p || !describable(p)) return 0;
    const pt_gemm_packed_layout l = describe(p, k_last);
    return pt_opaque_layout_register(p->packed_b_bytes, &l, sizeof l);
}

static bool layout_of_id(size_t id, pt_gemm_packed_layout *l, size_t *bytes) {
    size_t len = 0;
    if (!pt_opaque_layout_find(id, bytes, l, sizeof *l, &len)) return false;
    return len == sizeof *l && memcmp(l->tag, layout_tag, sizeof l->tag) == 0;
}

bool pt_gemm_packed_b_layout(size_t id, pt_gemm_packed_layout *out) {
    size_t bytes;
    return out && layout_of_id(id, out, &bytes);
}

bool pt_gemm_packed_b_matches(const pt_gemm_plan *p, bool k_last, size_t id) {
    pt_gemm_packed_layout l;
    size_t bytes;
    if (!p || !describable(p) || !layout_of_id(id, &l, &bytes)) return false;
    const pt_gemm_packed_layout want = describe(p, k_last);
    return bytes == p->packed_b_bytes && memcmp(&l, &want, sizeof l) == 0;
}

pt_status pt_gemm_packed_b_plan(size_t id, dnnl_data_type_t dt, int64_t s_row, int64_t s_k, pt_gemm_plan *out) {
    pt_gemm_packed_layout l;
    size_t bytes;
    if (!out || !layout_of_id(id, &l, &bytes))
        return pt_err(dnnl_invalid_arguments, "opaque layout %zu is not a packed-weight layout", id);
    if (dt != l.src_dt)
        return pt_err(dnnl_invalid_arguments, "packed-weight layout %zu holds data type %d, not %d", id,
                      (int)l.src_dt, (int)dt);
    const pt_gemm_ukernel *uk = NULL;
    for (size_t i = 0; i < pt_gemm_ukernel_count(l.kind) && !uk; ++i)
        if (strcmp(pt_gemm_ukernel_at(l.kind, i)->name, l.ukernel) == 0) uk = pt_gemm_ukernel_at(l.kind, i);
    if (!uk) return pt_err(dnnl_invalid_arguments, "packed-weight layout %zu: no microkernel %s", id, l.ukernel);
    pt_gemm_desc d;
    memset(&d, 0, sizeof d);
    d.kind = l.kind;
    d.M = 1, d.N = l.N, d.K = l.K;
    d.a.dt = l.kind == PT_GEMM_BF16 ? dnnl_bf16 : dnnl_f32;
    d.a.s_row = l.K, d.a.s_k = 1;
    d.b.dt = dt, d.b.s_row = s_row, d.b.s_k = s_k;
    d.a.round = d.b.round = l.round;
    d.b_constant = true;
    PT_CHECK(pt_gemm_plan_init_with(out, &d, 1, uk));
    if (out->packed_b_bytes != bytes)
        return pt_err(dnnl_invalid_arguments, "packed-weight layout %zu: size mismatch", id);
    return dnnl_success;
}

void pt_gemm_unpack_b_all(const pt_gemm_plan *p, const void *packed, void *dst) {
    const pt_gemm_desc *d = &p->d;
    const int nr = p->uk->nr, kg = p->uk->kg;
    const int64_t kcp = pt_gemm_kc_padded(p->uk, d->K);
    const size_t strip = (size_t)nr * (size_t)kcp; /* elements per strip */
    for (int64_t n = 0; n < d->N; ++n) {
        const size_t s0 = (size_t)(n / nr) * strip, j = (size_t)(n % nr);
        for (int64_t k = 0; k < d->K; ++k) {
            const size_t at = s0 + ((size_t)(k / kg) * (size_t)nr + j) * (size_t)kg + (size_t)(k % kg);
            const float v = d->kind == PT_GEMM_BF16 ? pt_bf16_to_f32(((const uint16_t *)packed)[at])
                                                    : ((const float *)packed)[at];
            pt_store_f32(dst, d->b.dt, n * d->b.s_row + k * d->b.s_k, v);
        }
    }
}
