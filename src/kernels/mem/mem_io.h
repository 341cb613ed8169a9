/* Helpers shared by the memory-bound kernels (kernels/mem/mem.h): typed
 * runs to and from f32 through the vector table, and the thread count. */
#ifndef PARTITA_KERNELS_MEM_MEM_IO_H
#define PARTITA_KERNELS_MEM_MEM_IO_H

#include "kernels/mem/mem.h"
#include "kernels/vec/vec.h"

/* Elements [e, e + n) of a dense tensor of type dt as f32: the tensor itself
 * when it is f32, else converted into buf. */
static inline const float *pt_mem_load(const pt_vec_ops *v, dnnl_data_type_t dt, const void *base, int64_t e,
                                       int64_t n, float *buf) {
    switch ((int)dt) {
        case dnnl_bf16: v->bf16_to_f32(buf, (const uint16_t *)base + e, n); return buf;
        case dnnl_f16: v->f16_to_f32(buf, (const uint16_t *)base + e, n); return buf;
        default: return (const float *)base + e;
    }
}

/* Where f32 results for elements [e, e + n) go: the tensor itself when it is
 * f32, else buf (then pt_mem_store converts them). */
static inline float *pt_mem_out(dnnl_data_type_t dt, void *base, int64_t e, float *buf) {
    return dt == dnnl_f32 ? (float *)base + e : buf;
}

static inline void pt_mem_store(const pt_vec_ops *v, dnnl_data_type_t dt, void *base, int64_t e, int64_t n,
                                const float *buf) {
    switch ((int)dt) {
        case dnnl_bf16: v->f32_to_bf16((uint16_t *)base + e, buf, n); break;
        case dnnl_f16: v->f32_to_f16((uint16_t *)base + e, buf, n); break;
        default: break; /* f32: written in place by pt_mem_out */
    }
}

/* Threads for `bytes` of traffic split into `items` pieces: at least
 * PT_MEM_BYTES_PER_THREAD each, at most ctx->nthreads, `cap` and items. */
int pt_mem_threads(const pt_exec_ctx *ctx, size_t bytes, int64_t items, int cap);

/* Inside a region opened with num_threads(nt) if (nt > 1): the team the
 * runtime actually gave (it may be smaller than nt, e.g. 1 when the caller
 * already runs in a parallel region) and the calling thread's index. */
static inline int pt_mem_team(int nt) {
#ifdef _OPENMP
    return nt > 1 ? omp_get_num_threads() : 1;
#else
    (void)nt;
    return 1;
#endif
}

/* The share [*b, *e) of `n` items of thread t in a team of `team`. */
static inline void pt_mem_share(int64_t n, int t, int team, int64_t *b, int64_t *e) {
    *b = n * t / team;
    *e = n * (t + 1) / team;
}

#endif
