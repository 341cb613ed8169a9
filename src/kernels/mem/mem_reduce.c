/* Reductions over one contiguous block of dims of a dense tensor
 * (kernels/mem/mem.h), in the reference's summation order. */
#include <math.h>
#include <string.h>

#include "ir/dtype.h"
#include "kernels/mem/mem_io.h"
#include "kernels/mem/mem_rows.h"

static float reduce_init(int kind) {
    switch (kind) {
        case dnnl_graph_op_reduce_max: return -INFINITY;
        case dnnl_graph_op_reduce_min: return INFINITY;
        case dnnl_graph_op_reduce_prod: return 1.f;
        default: return 0.f;
    }
}

/* The step of one chain: the reference's (NaN sticks in Max / Min). */
static inline float chain_step(int kind, float acc, float x) {
    switch (kind) {
        case dnnl_graph_op_reduce_max: return (x > acc || isnan(x)) ? x : acc;
        case dnnl_graph_op_reduce_min: return (x < acc || isnan(x)) ? x : acc;
        case dnnl_graph_op_reduce_prod: return acc * x;
        default: return acc + x;
    }
}

/* acc[i] = step(acc[i], x[i]) for i < n; Max / Min through chain_step with
 * the kind a constant in each loop, so that the loops vectorise. */
static void reduce_step(const pt_vec_ops *v, int kind, float *acc, const float *x, int64_t n) {
    switch (kind) {
        case dnnl_graph_op_reduce_max:
            for (int64_t i = 0; i < n; ++i) acc[i] = chain_step(dnnl_graph_op_reduce_max, acc[i], x[i]);
            break;
        case dnnl_graph_op_reduce_min:
            for (int64_t i = 0; i < n; ++i) acc[i] = chain_step(dnnl_graph_op_reduce_min, acc[i], x[i]);
            break;
        case dnnl_graph_op_reduce_prod: v->binary(dnnl_graph_op_multiply, acc, acc, 1, x, 1, n); break;
        default: v->binary(dnnl_graph_op_add, acc, acc, 1, x, 1, n); break;
    }
}

/* Outputs reduced side by side when the reduced block is innermost: each
 * keeps its own chain in the reference's order (so results stay
 * bit-identical), and the chains of ROW_GROUP rows interleave, so that the
 * add latency of one chain overlaps the others (one chain at a time waited
 * on every add). */
#define ROW_GROUP 8
/* Rows ahead whose run an outer reduction fetches. */
#define PF_ROWS 4
/* Columns an outer reduction carries down the rows at once (its chains in
 * L1): as many as the threads allow, so that each reads long runs of every
 * row, fetched into L2 PF_ROWS rows ahead.  bench_membound's mean over the
 * first axis of [4096, 4096] f32, 2 threads (Xeon, session 14): runs of
 * 1024 fetched into L1 1.9-2.2 ms, the loads waiting on the fetches; runs of
 * 2048 1.8-2.1; fetched into L2 instead 1.6-1.7. */
#define OUTER_SPAN 4096
/* The run is added in pieces of OUTER_PIECE columns, each after fetching
 * its share of the run PF_ROWS rows on: a burst of a whole run's fetches
 * (128 lines) held the fill buffers.  Zen 4, same benchmark, 2 threads,
 * medians of five alternating rounds: 2.49 -> 2.11 ms (pieces of 64:
 * 2.08). */
#define OUTER_PIECE 256

/* acc[j] = step(acc[j], x[j][i]) for i < m, j < rows (rows <= ROW_GROUP), i
 * outer: the kind a constant in each copy, the rows unrolled. */
static inline __attribute__((always_inline)) void chains(int kind, float *acc, const float *const *x, int rows,
                                                         int64_t m) {
    float a[ROW_GROUP];
    for (int j = 0; j < ROW_GROUP; ++j) a[j] = j < rows ? acc[j] : 0.f;
    if (rows == ROW_GROUP) {
        for (int64_t i = 0; i < m; ++i)
            for (int j = 0; j < ROW_GROUP; ++j) a[j] = chain_step(kind, a[j], x[j][i]);
    } else {
        for (int j = 0; j < rows; ++j)
            for (int64_t i = 0; i < m; ++i) a[j] = chain_step(kind, a[j], x[j][i]);
    }
    for (int j = 0; j < rows; ++j) acc[j] = a[j];
}

static void chains_of(int kind, float *acc, const float *const *x, int rows, int64_t m) {
    switch (kind) {
        case dnnl_graph_op_reduce_max: chains(dnnl_graph_op_reduce_max, acc, x, rows, m); break;
        case dnnl_graph_op_reduce_min: chains(dnnl_graph_op_reduce_min, acc, x, rows, m); break;
        case dnnl_graph_op_reduce_prod: chains(dnnl_graph_op_reduce_prod, acc, x, rows, m); break;
        default: chains(dnnl_graph_op_reduce_sum, acc, x, rows, m); break;
    }
}

/* Outputs [o0, o0 + rows) of an innermost reduction: rows of len inputs,
 * a chunk of each at a time (converted to f32 where narrow), the next
 * chunk of every row fetched meanwhile. */
static void reduce_rows(const pt_mem_reduce_plan *p, const pt_vec_ops *v, const pt_tview *src, int64_t o0, int rows,
                        float *acc, float *xb) {
    const dnnl_data_type_t sdt = src->lt.data_type;
    const size_t esz = pt_dt_bytes(sdt, 1);
    for (int j = 0; j < rows; ++j) acc[j] = reduce_init(p->kind);
    for (int64_t r = 0; r < p->len; r += PT_MEM_CHUNK) {
        const int64_t m = p->len - r < PT_MEM_CHUNK ? p->len - r : PT_MEM_CHUNK;
        const float *x[ROW_GROUP];
        for (int j = 0; j < rows; ++j) {
            const int64_t at = (o0 + j) * p->len + r;
            x[j] = pt_mem_load(v, sdt, src->data, at, m, xb + (size_t)j * PT_MEM_CHUNK);
            if (r + m < p->len)
                for (int64_t l = 0; l < (int64_t)((size_t)m * esz + 63) / 64; ++l)
                    __builtin_prefetch((const char *)src->data + (size_t)(at + m) * esz + 64 * (size_t)l);
        }
        chains_of(p->kind, acc, x, rows, m);
    }
}

pt_status pt_mem_reduce_run(const pt_fused *f, const pt_tview *in, size_t nin, const pt_tview *out, size_t nout,
                            void *scratch, const pt_exec_ctx *ctx) {
    (void)nin, (void)nout, (void)scratch;
    const pt_mem_reduce_plan *p = f->state;
    const pt_vec_ops *v = pt_vec();
    const pt_tview *src = &in[p->io.in[0]], *dst = &out[p->io.out[0]];
    const dnnl_data_type_t sdt = src->lt.data_type, ddt = dst->lt.data_type;
    const size_t bytes = pt_dt_bytes(sdt, p->outer * p->len * p->inner);
    const float n = (float)p->len;
    const pt_mem_rows *m = pt_mem_rows_get();
    if (p->inner == 1 && m && (sdt == dnnl_f32 || sdt == dnnl_bf16 || sdt == dnnl_f16)) {
        /* Pieces of 16 outputs, the chains side by side in the ISA row. */
        const int64_t pieces = (p->outer + 15) / 16;
        const int nt = pt_mem_threads(ctx, bytes, pieces, ctx->nthreads);
#pragma omp parallel num_threads(nt) if (nt > 1)
        {
            float acc[16];
            int64_t b, e;
            pt_mem_share(pieces, nt > 1 ? pt_thread_id() : 0, pt_mem_team(nt), &b, &e);
            for (int64_t k = b; k < e; ++k) {
                const int64_t o0 = k * 16;
                const int rows = p->outer - o0 < 16 ? (int)(p->outer - o0) : 16;
                for (int j = 0; j < rows; ++j) acc[j] = reduce_init(p->kind);
                m->reduce(p->kind, acc, (const char *)src->data + pt_dt_bytes(sdt, o0 * p->len), sdt, p->len, rows,
                          p->len);
                if (p->kind == dnnl_graph_op_reduce_mean) v->binary(dnnl_graph_op_divide, acc, acc, 1, &n, 0, rows);
                float *y = pt_mem_out(ddt, dst->data, o0, acc);
                if (y != acc) memcpy(y, acc, (size_t)rows * sizeof *y);
                pt_mem_store(v, ddt, dst->data, o0, rows, acc);
            }
        }
        return dnnl_success;
    }
    if (p->inner == 1) {
        /* Pieces of ROW_GROUP outputs, each a group of interleaved chains. */
        const int64_t pieces = (p->outer + ROW_GROUP - 1) / ROW_GROUP;
        const int nt = pt_mem_threads(ctx, bytes, pieces, ctx->nthreads);
#pragma omp parallel num_threads(nt) if (nt > 1)
        {
            float acc[ROW_GROUP], xb[ROW_GROUP * PT_MEM_CHUNK];
            int64_t b, e;
            pt_mem_share(pieces, nt > 1 ? pt_thread_id() : 0, pt_mem_team(nt), &b, &e);
            for (int64_t k = b; k < e; ++k) {
                const int64_t o0 = k * ROW_GROUP;
                const int rows = p->outer - o0 < ROW_GROUP ? (int)(p->outer - o0) : ROW_GROUP;
                reduce_rows(p, v, src, o0, rows, acc, xb);
                if (p->kind == dnnl_graph_op_reduce_mean) v->binary(dnnl_graph_op_divide, acc, acc, 1, &n, 0, rows);
                float *y = pt_mem_out(ddt, dst->data, o0, acc);
                if (y != acc) memcpy(y, acc, (size_t)rows * sizeof *y);
                pt_mem_store(v, ddt, dst->data, o0, rows, acc);
            }
        }
        return dnnl_success;
    }
    /* Spans of columns: at most OUTER_SPAN, fewer where the threads would
     * otherwise go without. */
    int64_t span = p->inner < OUTER_SPAN ? p->inner : OUTER_SPAN;
    const int64_t want = ctx->nthreads > 1 ? ctx->nthreads : 1;
    if (p->outer * ((p->inner + span - 1) / span) < want) {
        const int64_t per = (want + p->outer - 1) / p->outer;
        span = ((p->inner + per - 1) / per + 15) / 16 * 16;
        if (span < 16) span = 16;
    }
    const int64_t per_outer = (p->inner + span - 1) / span, pieces = p->outer * per_outer;
    const int nt = pt_mem_threads(ctx, bytes, pieces, ctx->nthreads);
    const size_t esz = pt_dt_bytes(sdt, 1);
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        float acc[OUTER_SPAN], xb[OUTER_SPAN];
        int64_t b, e;
        pt_mem_share(pieces, nt > 1 ? pt_thread_id() : 0, pt_mem_team(nt), &b, &e);
        for (int64_t k = b; k < e; ++k) {
            const int64_t o = k / per_outer, at = (k % per_outer) * span;
            const int64_t len = p->inner - at < span ? p->inner - at : span;
            for (int64_t i = 0; i < len; ++i) acc[i] = reduce_init(p->kind);
            for (int64_t r = 0; r < p->len; ++r) {
                /* The run PF_ROWS rows on: runs lie a row of the source apart,
                 * out of the hardware prefetchers' reach. */
                const char *next = r + PF_ROWS < p->len
                                       ? (const char *)src->data + (size_t)((o * p->len + r + PF_ROWS) * p->inner + at) * esz
                                       : NULL;
                const int64_t lines = (int64_t)(((size_t)len * esz + 63) / 64);
                for (int64_t q = 0; q < len; q += OUTER_PIECE) {
                    const int64_t m = len - q < OUTER_PIECE ? len - q : OUTER_PIECE;
                    if (next) /* the piece's share of the run's lines */
                        for (int64_t l = q * lines / len; l < (q + m) * lines / len; ++l) __builtin_prefetch(next + 64 * l, 0, 2);
                    reduce_step(v, p->kind, acc + q,
                                pt_mem_load(v, sdt, src->data, (o * p->len + r) * p->inner + at + q, m, xb + q), m);
                }
            }
            if (p->kind == dnnl_graph_op_reduce_mean) v->binary(dnnl_graph_op_divide, acc, acc, 1, &n, 0, len);
            float *y = pt_mem_out(ddt, dst->data, o * p->inner + at, acc);
            if (y != acc) memcpy(y, acc, (size_t)len * sizeof *y);
            pt_mem_store(v, ddt, dst->data, o * p->inner + at, len, acc);
        }
    }
    return dnnl_success;
}
