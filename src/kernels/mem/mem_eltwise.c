/* Unary element-wise ops, conversions and binary ops on dense tensors
 * (kernels/mem/mem.h), in chunks of PT_MEM_CHUNK elements held in f32.  With
 * an ISA row (mem_rows.h) and an output of at least PT_MEM_STREAM_BYTES, each
 * chunk's results go from L1 to memory with non-temporal stores. */
#include <string.h>

#include "ir/dtype.h"
#include "kernels/mem/mem_io.h"
#include "kernels/mem/mem_rows.h"
#include "kernels/vec/vec_rows.h"

/* The ISA row when an output of `bytes` is streamed, else NULL. */
static const pt_mem_rows *stream_rows(size_t bytes) {
    const pt_mem_rows *m = pt_mem_rows_get();
    return m && bytes >= PT_MEM_STREAM_BYTES ? m : NULL;
}

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
    const pt_mem_rows *sm = stream_rows((size_t)n * pt_dt_bytes(ddt, 1)), *m = pt_mem_rows_get();
    if (m && !copy && (p->convert || m->unary(&p->op, dst, ddt, src, sdt, 0, false))) {
        /* One pass per thread share: load, compute, store per vector. */
        const size_t ses = pt_dt_bytes(sdt, 1), des = pt_dt_bytes(ddt, 1);
#pragma omp parallel num_threads(nt) if (nt > 1)
        {
            int64_t b, e;
            pt_mem_share(chunks, nt > 1 ? pt_thread_id() : 0, pt_mem_team(nt), &b, &e);
            b *= PT_MEM_CHUNK, e = e * PT_MEM_CHUNK < n ? e * PT_MEM_CHUNK : n;
            if (b < e) {
                const void *x = (const char *)src + (size_t)b * ses;
                void *y = (char *)dst + (size_t)b * des;
                if (p->convert) m->convert(y, ddt, x, sdt, e - b, sm != NULL);
                else m->unary(&p->op, y, ddt, x, sdt, e - b, sm != NULL);
            }
            if (sm) sm->fence();
        }
        return dnnl_success;
    }
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        float xb[PT_MEM_CHUNK], yb[PT_MEM_CHUNK];
        int64_t b, e;
        pt_mem_share(chunks, nt > 1 ? pt_thread_id() : 0, pt_mem_team(nt), &b, &e);
        for (int64_t c = b; c < e; ++c) {
            const int64_t at = c * PT_MEM_CHUNK, len = n - at < PT_MEM_CHUNK ? n - at : PT_MEM_CHUNK;
            /* The next chunk's source, prefetched while this one streams out. */
            const int64_t next = c + 1 < e ? (n - at - len < PT_MEM_CHUNK ? n - at - len : PT_MEM_CHUNK) : 0;
            const void *pf = next ? (const char *)src + (size_t)(at + len) * pt_dt_bytes(sdt, 1) : NULL;
            const size_t pf_bytes = (size_t)next * pt_dt_bytes(sdt, 1);
            if (copy) {
                const size_t sz = pt_dt_bytes(sdt, 1);
                if (src != dst) memcpy((char *)dst + (size_t)at * sz, (const char *)src + (size_t)at * sz, (size_t)len * sz);
                continue;
            }
            if (p->convert) { /* converted in registers straight into an f32 destination */
                if (sm) {
                    sm->stream((char *)dst + (size_t)at * pt_dt_bytes(ddt, 1), ddt, pt_mem_load(v, sdt, src, at, len, xb), len, pf,
                               pf_bytes);
                } else if (ddt == dnnl_f32) {
                    const float *x = pt_mem_load(v, sdt, src, at, len, (float *)dst + at);
                    if (x != (float *)dst + at) memcpy((float *)dst + at, x, (size_t)len * sizeof *x);
                } else {
                    pt_mem_store(v, ddt, dst, at, len, pt_mem_load(v, sdt, src, at, len, xb));
                }
                continue;
            }
            const float *x = pt_mem_load(v, sdt, src, at, len, xb);
            float *y = sm ? yb : pt_mem_out(ddt, dst, at, yb);
            if (!v->eltwise(&p->op, y, x, len)) {
                pt_vec_row_generic.eltwise(&p->op, y, x, len);
            }
            if (sm) sm->stream((char *)dst + (size_t)at * pt_dt_bytes(ddt, 1), ddt, y, len, pf, pf_bytes);
            else pt_mem_store(v, ddt, dst, at, len, y);
        }
        if (sm) sm->fence();
    }
    return dnnl_success;
}

/* Element offsets in a and b of element `at` of inner run `row`. */
static void piece_offsets(const pt_mem_binary_plan *p, int64_t row, int64_t at, int64_t *oa, int64_t *ob) {
    const int last = p->nd - 1;
    int64_t rest = row;
    *oa = at * p->sa[last], *ob = at * p->sb[last];
    for (int d = last - 1; d >= 0; --d) {
        const int64_t i = rest % p->dims[d];
        rest /= p->dims[d];
        *oa += i * p->sa[d];
        *ob += i * p->sb[d];
    }
}

/* Elements [at, at + len) of inner run `row` of a binary op; when streamed,
 * the next piece (next_row, next_at, next_len; next_len 0: none) of the
 * first full-length input is prefetched meanwhile. */
static void binary_piece(const pt_mem_binary_plan *p, const pt_vec_ops *v, const pt_tview *a, const pt_tview *b, const pt_tview *out,
                         int64_t row, int64_t at, int64_t len, float *ab, float *bb, float *yb, const pt_mem_rows *sm,
                         int64_t next_row, int64_t next_at, int64_t next_len) {
    const int last = p->nd - 1;
    int64_t oa, ob;
    piece_offsets(p, row, at, &oa, &ob);
    const int64_t as = p->sa[last], bs = p->sb[last];
    const dnnl_data_type_t adt = a->lt.data_type, bdt = b->lt.data_type, odt = out->lt.data_type;
    const pt_mem_rows *m = pt_mem_rows_get();
    if (m && m->binary(p->kind, (char *)out->data + (size_t)(row * p->dims[last] + at) * pt_dt_bytes(odt, 1), odt,
                       (const char *)a->data + (size_t)oa * pt_dt_bytes(adt, 1), adt, as,
                       (const char *)b->data + (size_t)ob * pt_dt_bytes(bdt, 1), bdt, bs, len, sm != NULL))
        return; /* one pass: load, compute, store per vector */
    const float *xa = pt_mem_load(v, a->lt.data_type, a->data, oa, as ? len : 1, ab);
    const float *xb = pt_mem_load(v, b->lt.data_type, b->data, ob, bs ? len : 1, bb);
    const dnnl_data_type_t ddt = out->lt.data_type;
    const int64_t od = row * p->dims[last] + at;
    float *y = sm ? yb : pt_mem_out(ddt, out->data, od, yb);
    if (!v->binary(p->kind, y, xa, as, xb, bs, len)) pt_vec_row_generic.binary(p->kind, y, xa, as, xb, bs, len);
    if (!sm) {
        pt_mem_store(v, ddt, out->data, od, len, y);
        return;
    }
    const void *pf = NULL;
    size_t pf_bytes = 0;
    if (next_len > 0 && (as || bs)) {
        int64_t na, nb;
        piece_offsets(p, next_row, next_at, &na, &nb);
        const pt_tview *full = as ? a : b;
        pf = (const char *)full->data + (size_t)(as ? na : nb) * pt_dt_bytes(full->lt.data_type, 1);
        pf_bytes = (size_t)next_len * pt_dt_bytes(full->lt.data_type, 1);
    }
    sm->stream((char *)out->data + (size_t)od * pt_dt_bytes(ddt, 1), ddt, y, len, pf, pf_bytes);
}

pt_status pt_mem_binary_run(const pt_fused *f, const pt_tview *in, size_t nin, const pt_tview *out, size_t nout,
                            void *scratch, const pt_exec_ctx *ctx) {
    (void)scratch;
    const pt_mem_binary_plan *p = f->state;
    (void)nin, (void)nout;
    const pt_tview *a = &in[p->io.in[0]], *bv = &in[p->io.in[1]], *dst = &out[p->io.out[0]];
    const pt_vec_ops *v = pt_vec();
    if (p->n == 0) return dnnl_success; /* an empty tensor: nothing to write (and no row length to divide by) */
    const int64_t inner = p->dims[p->nd - 1], rows = p->n / inner;
    const int64_t pieces_per_row = (inner + PT_MEM_CHUNK - 1) / PT_MEM_CHUNK, pieces = rows * pieces_per_row;
    const size_t bytes = (size_t)p->n * (pt_dt_bytes(a->lt.data_type, 1) + pt_dt_bytes(bv->lt.data_type, 1) +
                                         pt_dt_bytes(dst->lt.data_type, 1));
    const int nt = pt_mem_threads(ctx, bytes, pieces, ctx->nthreads);
    const pt_mem_rows *sm = stream_rows((size_t)p->n * pt_dt_bytes(dst->lt.data_type, 1));
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        float ab[PT_MEM_CHUNK], bb[PT_MEM_CHUNK], yb[PT_MEM_CHUNK];
        int64_t b, e;
        pt_mem_share(pieces, nt > 1 ? pt_thread_id() : 0, pt_mem_team(nt), &b, &e);
        for (int64_t k = b; k < e; ++k) {
            const int64_t row = k / pieces_per_row, at = (k % pieces_per_row) * PT_MEM_CHUNK;
            const int64_t nrow = (k + 1) / pieces_per_row, nat = ((k + 1) % pieces_per_row) * PT_MEM_CHUNK;
            const int64_t nlen = k + 1 < e ? (inner - nat < PT_MEM_CHUNK ? inner - nat : PT_MEM_CHUNK) : 0;
            binary_piece(p, v, a, bv, dst, row, at, inner - at < PT_MEM_CHUNK ? inner - at : PT_MEM_CHUNK, ab, bb, yb, sm,
                         nrow, nat, nlen);
        }
        if (sm) sm->fence();
    }
    return dnnl_success;
}
