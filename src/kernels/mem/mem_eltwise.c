/* Unary element-wise ops, conversions and binary ops on dense tensors
 * (kernels/mem/mem.h), in chunks of PT_MEM_CHUNK elements held in f32. */
#include <string.h>

#include "ir/dtype.h"
#include "kernels/mem/mem_io.h"
#include "kernels/vec/vec_rows.h"

pt_status pt_mem_unary_run(const pt_fused *f, const pt_tview *in, size_t nin, const pt_tview *out, size_t nout,
                           void *scratch, const pt_exec_ctx *ctx) {
    (void)scratch;
    const pt_mem_unary_plan *p = f->state;
    (void)nin, (void)nout;
    const pt_vec_ops *v = pt_vec();
    const dnnl_data_type_t sdt = in[p->io.in[0]].lt.data_type, ddt = out[p->io.out[0]].lt.data_type;
    const int64_t n = p->n, chunks = (n + PT_MEM_CHUNK - 1) / PT_MEM_CHUNK;
    const size_t bytes = (size_t)n * (pt_dt_bytes(sdt, 1) + pt_dt_bytes(ddt, 1));
    const int nt = pt_mem_threads(ctx, bytes, chunks, ctx->nthreads);
    const void *src = in[p->io.in[0]].data;
    void *dst = out[p->io.out[0]].data;
    const bool copy = p->convert && sdt == ddt;
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        float xb[PT_MEM_CHUNK], yb[PT_MEM_CHUNK];
        int64_t b, e;
        pt_mem_share(chunks, nt > 1 ? pt_thread_id() : 0, pt_mem_team(nt), &b, &e);
        for (int64_t c = b; c < e; ++c) {
            const int64_t at = c * PT_MEM_CHUNK, len = n - at < PT_MEM_CHUNK ? n - at : PT_MEM_CHUNK;
            if (copy) {
                const size_t sz = pt_dt_bytes(sdt, 1);
                if (src != dst) memcpy((char *)dst + (size_t)at * sz, (const char *)src + (size_t)at * sz, (size_t)len * sz);
                continue;
            }
            if (p->convert) { /* converted in registers straight into an f32 destination */
                if (ddt == dnnl_f32) {
                    const float *x = pt_mem_load(v, sdt, src, at, len, (float *)dst + at);
                    if (x != (float *)dst + at) memcpy((float *)dst + at, x, (size_t)len * sizeof *x);
                } else {
                    pt_mem_store(v, ddt, dst, at, len, pt_mem_load(v, sdt, src, at, len, xb));
                }
                continue;
            }
            const float *x = pt_mem_load(v, sdt, src, at, len, xb);
            float *y = pt_mem_out(ddt, dst, at, yb);
            if (!v->eltwise(&p->op, y, x, len)) {
                pt_vec_row_generic.eltwise(&p->op, y, x, len);
            }
            pt_mem_store(v, ddt, dst, at, len, y);
        }
    }
    return dnnl_success;
}

/* Elements [at, at + len) of inner run `row` of a binary op. */
static void binary_piece(const pt_mem_binary_plan *p, const pt_vec_ops *v, const pt_tview *a, const pt_tview *b, const pt_tview *out,
                         int64_t row, int64_t at, int64_t len, float *ab, float *bb, float *yb) {
    const int last = p->nd - 1;
    int64_t oa = 0, ob = 0, rest = row;
    for (int d = last - 1; d >= 0; --d) {
        const int64_t i = rest % p->dims[d];
        rest /= p->dims[d];
        oa += i * p->sa[d];
        ob += i * p->sb[d];
    }
    const int64_t as = p->sa[last], bs = p->sb[last];
    oa += at * as;
    ob += at * bs;
    const float *xa = pt_mem_load(v, a->lt.data_type, a->data, oa, as ? len : 1, ab);
    const float *xb = pt_mem_load(v, b->lt.data_type, b->data, ob, bs ? len : 1, bb);
    const dnnl_data_type_t ddt = out->lt.data_type;
    const int64_t od = row * p->dims[last] + at;
    float *y = pt_mem_out(ddt, out->data, od, yb);
    if (!v->binary(p->kind, y, xa, as, xb, bs, len)) pt_vec_row_generic.binary(p->kind, y, xa, as, xb, bs, len);
    pt_mem_store(v, ddt, out->data, od, len, y);
}

pt_status pt_mem_binary_run(const pt_fused *f, const pt_tview *in, size_t nin, const pt_tview *out, size_t nout,
                            void *scratch, const pt_exec_ctx *ctx) {
    (void)scratch;
    const pt_mem_binary_plan *p = f->state;
    (void)nin, (void)nout;
    const pt_tview *a = &in[p->io.in[0]], *bv = &in[p->io.in[1]], *dst = &out[p->io.out[0]];
    const pt_vec_ops *v = pt_vec();
    const int64_t inner = p->dims[p->nd - 1], rows = p->n / inner;
    const int64_t pieces_per_row = (inner + PT_MEM_CHUNK - 1) / PT_MEM_CHUNK, pieces = rows * pieces_per_row;
    const size_t bytes = (size_t)p->n * (pt_dt_bytes(a->lt.data_type, 1) + pt_dt_bytes(bv->lt.data_type, 1) +
                                         pt_dt_bytes(dst->lt.data_type, 1));
    const int nt = pt_mem_threads(ctx, bytes, pieces, ctx->nthreads);
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        float ab[PT_MEM_CHUNK], bb[PT_MEM_CHUNK], yb[PT_MEM_CHUNK];
        int64_t b, e;
        pt_mem_share(pieces, nt > 1 ? pt_thread_id() : 0, pt_mem_team(nt), &b, &e);
        for (int64_t k = b; k < e; ++k) {
            const int64_t row = k / pieces_per_row, at = (k % pieces_per_row) * PT_MEM_CHUNK;
            binary_piece(p, v, a, bv, dst, row, at, inner - at < PT_MEM_CHUNK ? inner - at : PT_MEM_CHUNK, ab, bb, yb);
        }
    }
    return dnnl_success;
}
