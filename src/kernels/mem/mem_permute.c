/* Copies between dense layouts with different dim orders (kernels/mem/mem.h). */
#include <string.h>

#include "kernels/mem/mem_io.h"

#define PT_MEM_TILE 32

/* Offsets in src and dst of outer item `k`: every dim but a and b. */
static void outer_offsets(const pt_mem_permute_plan *p, int64_t k, int64_t *so, int64_t *dof) {
    *so = *dof = 0;
    for (int d = p->nd - 1; d >= 0; --d) {
        if (d == p->a || d == p->b) continue;
        const int64_t i = k % p->dims[d];
        k /= p->dims[d];
        *so += i * p->ss[d];
        *dof += i * p->ds[d];
    }
}

#define PT_TILE_COPY(T)                                                                                   \
    static void tile_##T(const T *s, T *d, int64_t na, int64_t nb, int64_t ssa, int64_t dsb) {            \
        for (int64_t ib = 0; ib < nb; ++ib)                                                             \
            for (int64_t ia = 0; ia < na; ++ia) d[ia + ib * dsb] = s[ia * ssa + ib];                     \
    }
PT_TILE_COPY(uint8_t)
PT_TILE_COPY(uint16_t)
PT_TILE_COPY(uint32_t)
#undef PT_TILE_COPY

pt_status pt_mem_permute_run(const pt_fused *f, const pt_tview *in, size_t nin, const pt_tview *out, size_t nout,
                             void *scratch, const pt_exec_ctx *ctx) {
    (void)nin, (void)nout, (void)scratch;
    const pt_mem_permute_plan *p = f->state;
    const char *src = in[p->io.in[0]].data;
    char *dst = out[p->io.out[0]].data;
    int64_t outer = 1, total = 1;
    for (int d = 0; d < p->nd; ++d) {
        total *= p->dims[d];
        if (d != p->a && d != p->b) outer *= p->dims[d];
    }
    const bool rows = p->a == p->b;
    const int64_t na = p->dims[p->a], nb = rows ? 1 : p->dims[p->b];
    const int64_t ta = rows ? 1 : (na + PT_MEM_TILE - 1) / PT_MEM_TILE, tb = rows ? 1 : (nb + PT_MEM_TILE - 1) / PT_MEM_TILE;
    const int64_t items = outer * ta * tb;
    const int nt = pt_mem_threads(ctx, 2 * (size_t)total * p->elem, items, ctx->nthreads);
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        int64_t b, e;
        pt_mem_share(items, nt > 1 ? pt_thread_id() : 0, pt_mem_team(nt), &b, &e);
        for (int64_t k = b; k < e; ++k) {
            int64_t so, dof;
            outer_offsets(p, k / (ta * tb), &so, &dof);
            if (rows) { /* contiguous on both sides */
                memcpy(dst + (size_t)dof * p->elem, src + (size_t)so * p->elem, (size_t)na * p->elem);
                continue;
            }
            const int64_t t = k % (ta * tb), a0 = t / tb * PT_MEM_TILE, b0 = t % tb * PT_MEM_TILE;
            const int64_t la = na - a0 < PT_MEM_TILE ? na - a0 : PT_MEM_TILE, lb = nb - b0 < PT_MEM_TILE ? nb - b0 : PT_MEM_TILE;
            so += a0 * p->ss[p->a] + b0;
            dof += a0 + b0 * p->ds[p->b];
            switch (p->elem) {
                case 4: tile_uint32_t((const uint32_t *)src + so, (uint32_t *)dst + dof, la, lb, p->ss[p->a], p->ds[p->b]); break;
                case 2: tile_uint16_t((const uint16_t *)src + so, (uint16_t *)dst + dof, la, lb, p->ss[p->a], p->ds[p->b]); break;
                default: tile_uint8_t((const uint8_t *)src + so, (uint8_t *)dst + dof, la, lb, p->ss[p->a], p->ds[p->b]); break;
            }
        }
    }
    return dnnl_success;
}
