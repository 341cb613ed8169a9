/* Reductions over one contiguous block of dims of a dense tensor
 * (kernels/mem/mem.h), in the reference's summation order. */
#include <math.h>
#include <string.h>

#include "ir/dtype.h"
#include "kernels/mem/mem_io.h"

static float reduce_init(int kind) {
    switch (kind) {
        case dnnl_graph_op_reduce_max: return -INFINITY;
        case dnnl_graph_op_reduce_min: return INFINITY;
        case dnnl_graph_op_reduce_prod: return 1.f;
        default: return 0.f;
    }
}

/* acc[i] = step(acc[i], x[i]) for i < n, the reference's step (NaN sticks in
 * Max / Min). */
static void reduce_step(const pt_vec_ops *v, int kind, float *acc, const float *x, int64_t n) {
    switch (kind) {
        case dnnl_graph_op_reduce_max:
            for (int64_t i = 0; i < n; ++i) acc[i] = (x[i] > acc[i] || isnan(x[i])) ? x[i] : acc[i];
            break;
        case dnnl_graph_op_reduce_min:
            for (int64_t i = 0; i < n; ++i) acc[i] = (x[i] < acc[i] || isnan(x[i])) ? x[i] : acc[i];
            break;
        case dnnl_graph_op_reduce_prod: v->binary(dnnl_graph_op_multiply, acc, acc, 1, x, 1, n); break;
        default: v->binary(dnnl_graph_op_add, acc, acc, 1, x, 1, n); break;
    }
}

/* One output: its len inputs x[0..len) in order. */
static float reduce_row(int kind, float acc, const float *x, int64_t len) {
    switch (kind) {
        case dnnl_graph_op_reduce_max:
            for (int64_t i = 0; i < len; ++i) acc = (x[i] > acc || isnan(x[i])) ? x[i] : acc;
            return acc;
        case dnnl_graph_op_reduce_min:
            for (int64_t i = 0; i < len; ++i) acc = (x[i] < acc || isnan(x[i])) ? x[i] : acc;
            return acc;
        case dnnl_graph_op_reduce_prod:
            for (int64_t i = 0; i < len; ++i) acc *= x[i];
            return acc;
        default:
            for (int64_t i = 0; i < len; ++i) acc += x[i];
            return acc;
    }
}

pt_status pt_mem_reduce_run(const pt_fused *f, const pt_tview *in, size_t nin, const pt_tview *out, size_t nout,
                            void *scratch, const pt_exec_ctx *ctx) {
    (void)nin, (void)nout, (void)scratch;
    const pt_mem_reduce_plan *p = f->state;
    const pt_vec_ops *v = pt_vec();
    const pt_tview *src = &in[p->io.in[0]], *dst = &out[p->io.out[0]];
    const dnnl_data_type_t sdt = src->lt.data_type, ddt = dst->lt.data_type;
    const int64_t per_outer = (p->inner + PT_MEM_CHUNK - 1) / PT_MEM_CHUNK, pieces = p->outer * per_outer;
    const size_t bytes = pt_dt_bytes(sdt, p->outer * p->len * p->inner);
    const int nt = pt_mem_threads(ctx, bytes, pieces, ctx->nthreads);
    const float n = (float)p->len;
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        float acc[PT_MEM_CHUNK], xb[PT_MEM_CHUNK];
        int64_t b, e;
        pt_mem_share(pieces, nt > 1 ? pt_thread_id() : 0, pt_mem_team(nt), &b, &e);
        for (int64_t k = b; k < e; ++k) {
            const int64_t o = k / per_outer, at = (k % per_outer) * PT_MEM_CHUNK;
            const int64_t len = p->inner - at < PT_MEM_CHUNK ? p->inner - at : PT_MEM_CHUNK;
            if (p->inner == 1) {
                /* One chain along a contiguous row, converted a chunk at a time. */
                float a = reduce_init(p->kind);
                for (int64_t r = 0; r < p->len; r += PT_MEM_CHUNK) {
                    const int64_t m = p->len - r < PT_MEM_CHUNK ? p->len - r : PT_MEM_CHUNK;
                    a = reduce_row(p->kind, a, pt_mem_load(v, sdt, src->data, o * p->len + r, m, xb), m);
                }
                acc[0] = a;
            } else {
                for (int64_t i = 0; i < len; ++i) acc[i] = reduce_init(p->kind);
                for (int64_t r = 0; r < p->len; ++r)
                    reduce_step(v, p->kind, acc, pt_mem_load(v, sdt, src->data, (o * p->len + r) * p->inner + at, len, xb),
                                len);
            }
            if (p->kind == dnnl_graph_op_reduce_mean) v->binary(dnnl_graph_op_divide, acc, acc, 1, &n, 0, len);
            float *y = pt_mem_out(ddt, dst->data, o * p->inner + at, acc);
            if (y != acc) memcpy(y, acc, (size_t)len * sizeof *y);
            pt_mem_store(v, ddt, dst->data, o * p->inner + at, len, acc);
        }
    }
    return dnnl_success;
}
