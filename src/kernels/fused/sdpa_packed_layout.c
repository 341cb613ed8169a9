/* K / V of the fused SDPA forward packed ahead (sdpa_packed_layout.h). */
#include <string.h>

#include "ir/dtype.h"
#include "kernels/fused/sdpa_packed_layout.h"

static const char layout_tag[8] = "ptsdpaB";

size_t pt_sdpa_packed_register(const pt_gemm_ukernel *uk, dnnl_data_type_t dt, dnnl_fpmath_mode_t round, int ndims,
                               const int64_t *dims, int n_dim, int k_dim, pt_sdpa_packed_layout *out) {
    if (!uk || ndims < 1 || ndims > DNNL_MAX_NDIMS || n_dim == k_dim || n_dim >= ndims || k_dim >= ndims)
        return 0;
    pt_sdpa_packed_layout l;
    memset(&l, 0, sizeof l); /* padding too: the registry compares bytes */
    memcpy(l.tag, layout_tag, sizeof l.tag);
    l.ndims = ndims;
    l.n_dim = n_dim, l.k_dim = k_dim;
    l.items = 1;
    for (int d = 0; d < ndims; ++d) {
        if (dims[d] < 1) return 0;
        l.dims[d] = dims[d];
        if (d != n_dim && d != k_dim) l.items *= dims[d];
    }
    /* One head as a plain weight the GEMM engine describes itself. */
    pt_gemm_desc d;
    memset(&d, 0, sizeof d);
    d.kind = uk->kind;
    d.M = 1;
    d.N = n_dim >= 0 ? dims[n_dim] : 1;
    d.K = k_dim >= 0 ? dims[k_dim] : 1;
    d.a.dt = uk->kind == PT_GEMM_BF16 ? dnnl_bf16 : dnnl_f32;
    d.a.s_row = d.K, d.a.s_k = 1;
    d.b.dt = dt, d.b.s_row = d.K, d.b.s_k = 1;
    d.a.round = d.b.round = uk->kind == PT_GEMM_F32 ? round : dnnl_fpmath_mode_strict;
    d.b_constant = true;
    pt_gemm_plan plan;
    if (pt_gemm_plan_init_with(&plan, &d, 1, uk) != dnnl_success) return 0;
    l.item_layout = pt_gemm_packed_b_register(&plan, k_dim > n_dim);
    if (!l.item_layout) return 0;
    l.item_bytes = (plan.packed_b_bytes + 63) / 64 * 64;
    const size_t id = pt_opaque_layout_register(l.item_bytes * (size_t)l.items, &l, sizeof l);
    if (id && out) *out = l;
    return id;
}

bool pt_sdpa_packed_find(size_t id, pt_sdpa_packed_layout *l) {
    size_t bytes = 0, len = 0;
    pt_sdpa_packed_layout tmp;
    if (!pt_opaque_layout_find(id, &bytes, &tmp, sizeof tmp, &len)) return false;
    if (len != sizeof tmp || memcmp(tmp.tag, layout_tag, sizeof tmp.tag) != 0) return false;
    if (l) *l = tmp;
    return true;
}

pt_status pt_sdpa_packed_reorder_init(size_t id, const pt_lt *plain, pt_sdpa_packed_reorder *r) {
    memset(r, 0, sizeof *r);
    if (!pt_sdpa_packed_find(id, &r->l)) return pt_err(dnnl_invalid_arguments, "layout %zu is not an SDPA layout", id);
    const pt_sdpa_packed_layout *l = &r->l;
    if (plain->ndims != l->ndims || plain->layout_type != dnnl_graph_layout_type_strided)
        return pt_err(dnnl_invalid_arguments, "packed K / V layout %zu: the plain side has another rank", id);
    for (int d = 0; d < l->ndims; ++d) {
        if (plain->dims[d] != l->dims[d])
            return pt_err(dnnl_invalid_arguments, "packed K / V layout %zu: the plain side has another shape", id);
        r->plain_strides[d] = plain->layout.strides[d];
    }
    const int64_t s_row = l->n_dim >= 0 ? plain->layout.strides[l->n_dim] : 0;
    const int64_t s_k = l->k_dim >= 0 ? plain->layout.strides[l->k_dim] : 0;
    /* The plan refuses another type and a microkernel this CPU cannot run. */
    if (pt_gemm_packed_b_plan(l->item_layout, plain->data_type, s_row, s_k, &r->item) != dnnl_success)
        return pt_err(dnnl_invalid_arguments, "packed K / V layout %zu: not for this type or CPU", id);
    r->plain_elem_bytes = pt_dt_bytes(plain->data_type, 1);
    return dnnl_success;
}

void pt_sdpa_packed_reorder_run(const pt_sdpa_packed_reorder *r, bool to_packed, const void *src, void *dst) {
    const pt_sdpa_packed_layout *l = &r->l;
    int64_t idx[DNNL_MAX_NDIMS] = {0};
    for (int64_t item = 0; item < l->items; ++item) {
        int64_t off = 0; /* the head's first element in the plain tensor */
        for (int d = 0; d < l->ndims; ++d) off += idx[d] * r->plain_strides[d];
        const size_t poff = (size_t)off * r->plain_elem_bytes, koff = (size_t)item * l->item_bytes;
        if (to_packed) pt_gemm_pack_b_all(&r->item, (const char *)src + poff, NULL, NULL, (char *)dst + koff);
        else pt_gemm_unpack_b_all(&r->item, (const char *)src + koff, (char *)dst + poff);
        /* Next head: row-major over the dims the panels do not take. */
        for (int d = l->ndims - 1; d >= 0; --d) {
            if (d == l->n_dim || d == l->k_dim) continue;
            if (++idx[d] < l->dims[d]) break;
            idx[d] = 0;
        }
    }
}
