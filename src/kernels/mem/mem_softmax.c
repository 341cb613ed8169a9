/* SoftMax and LogSoftmax on dense tensors (kernels/mem/mem.h).  Each row is
 * brought into an f32 buffer in L1/L2 once; the maximum, the exponentials
 * with their sum and the scaling then run on the buffer through the vector
 * table, and the row is written once.  A row along a non-last axis
 * (inner > 1) is gathered and scattered element by element.  With an ISA row
 * (mem_rows.h), a SoftMax along the last axis runs as one row op over each
 * thread's run of rows: each row read into a buffer converted in registers,
 * exp and sum in place, then scaled and stored (streamed for large outputs)
 * in pieces while the next row's passes run, the rows ahead prefetched. */
#include <math.h>
#include <string.h>

#include "ir/dtype.h"
#include "kernels/mem/mem_io.h"
#include "kernels/mem/mem_rows.h"

/* Two rows: LogSoftmax's working copy, or the row ops' pipeline (mem_rows.h). */
static size_t row_bytes(const pt_mem_softmax_plan *p) {
    return 2 * (size_t)PT_MEM_ROW_FLOATS(p->len) * sizeof(float);
}

/* No rows (an empty tensor): nothing to stage, however long the axis. */
size_t pt_mem_softmax_scratch(const pt_mem_softmax_plan *p) {
    return p->outer == 0 || p->inner == 0 ? 0 : row_bytes(p) * (size_t)p->threads;
}

/* Row of `len` elements from element `base`, `stride` apart, into buf (f32). */
static void gather(const pt_vec_ops *v, dnnl_data_type_t dt, const void *src, int64_t base, int64_t stride,
                   int64_t len, float *buf) {
    if (stride == 1) {
        const float *x = pt_mem_load(v, dt, src, base, len, buf);
        if (x != buf) memcpy(buf, x, (size_t)len * sizeof *buf);
        return;
    }
    for (int64_t k = 0; k < len; ++k) buf[k] = pt_load_f32(src, dt, base + k * stride);
}

static void scatter(const pt_vec_ops *v, dnnl_data_type_t dt, void *dst, int64_t base, int64_t stride, int64_t len,
                    const float *buf) {
    if (stride == 1) {
        float *y = pt_mem_out(dt, dst, base, (float *)buf);
        if (y != buf) memcpy(y, buf, (size_t)len * sizeof *buf);
        pt_mem_store(v, dt, dst, base, len, buf);
        return;
    }
    for (int64_t k = 0; k < len; ++k) pt_store_f32(dst, dt, base + k * stride, buf[k]);
}

static void softmax_row(const pt_mem_softmax_plan *p, const pt_vec_ops *v, float *x, float *tmp) {
    const int64_t len = p->len;
    const float m = v->max(x, len);
    if (p->is_log) {
        memcpy(tmp, x, (size_t)len * sizeof *tmp);
        const float s = v->exp_sum(tmp, len, m);
        v->sub2(x, x, len, m, logf(s)); /* x - max - log(sum), as the reference */
        return;
    }
    if (p->inf_as_zero && m == -INFINITY) { /* a fully masked row gives zeros */
        memset(x, 0, (size_t)len * sizeof *x);
        return;
    }
    const float s = v->exp_sum(x, len, m);
    v->scale(x, len, 1.f / s);
}

pt_status pt_mem_softmax_run(const pt_fused *f, const pt_tview *in, size_t nin, const pt_tview *out, size_t nout,
                             void *scratch, const pt_exec_ctx *ctx) {
    const pt_mem_softmax_plan *p = f->state;
    if (nin < 1 || nout < 1) return pt_err(dnnl_invalid_arguments, "mem softmax: needs 1 input and 1 output");
    const pt_vec_ops *v = pt_vec();
    const int64_t rows = p->outer * p->inner;
    if (rows == 0) return dnnl_success;
    const size_t bytes = (size_t)(rows * p->len) * (pt_dt_bytes(p->src_dt, 1) + pt_dt_bytes(p->dst_dt, 1));
    const int nt = pt_mem_threads(ctx, bytes, rows, p->threads);
    const size_t per = row_bytes(p);
    const void *src = in[p->io.in[0]].data;
    void *dst = out[p->io.out[0]].data;
    const pt_mem_rows *m = pt_mem_rows_get();
    const bool float_io = (p->src_dt == dnnl_f32 || p->src_dt == dnnl_bf16 || p->src_dt == dnnl_f16) &&
                          (p->dst_dt == dnnl_f32 || p->dst_dt == dnnl_bf16 || p->dst_dt == dnnl_f16);
    if (m && p->inner == 1 && !p->is_log && float_io) {
        const int64_t len = p->len;
        const size_t ses = pt_dt_bytes(p->src_dt, 1), des = pt_dt_bytes(p->dst_dt, 1);
        const bool stream = (size_t)(rows * len) * des >= PT_MEM_STREAM_BYTES;
#pragma omp parallel num_threads(nt) if (nt > 1)
        {
            const int t = nt > 1 ? pt_thread_id() : 0;
            float *x = (float *)((char *)scratch + per * (size_t)t);
            int64_t b, e;
            pt_mem_share(rows, t, pt_mem_team(nt), &b, &e);
            m->softmax((char *)dst + (size_t)(b * len) * des, p->dst_dt, stream, (const char *)src + (size_t)(b * len) * ses,
                       p->src_dt, len, e - b, x, p->inf_as_zero);
            if (stream) m->fence();
        }
        return dnnl_success;
    }
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        const int t = nt > 1 ? pt_thread_id() : 0;
        float *x = (float *)((char *)scratch + per * (size_t)t), *tmp = x + p->len;
        int64_t b, e;
        pt_mem_share(rows, t, pt_mem_team(nt), &b, &e);
        /* A contiguous f32 destination row serves as the working row itself. */
        const bool in_place = p->inner == 1 && p->dst_dt == dnnl_f32;
        for (int64_t r = b; r < e; ++r) {
            const int64_t base = (r / p->inner) * p->len * p->inner + r % p->inner;
            float *row = in_place ? (float *)dst + base : x;
            gather(v, p->src_dt, src, base, p->inner, p->len, row);
            softmax_row(p, v, row, tmp);
            if (!in_place) scatter(v, p->dst_dt, dst, base, p->inner, p->len, x);
        }
    }
    return dnnl_success;
}
