/* Pieces the fused SDPA forward (sdpa_run.c) and backward (sdpa_bwd.c)
 * kernels share: element access with fast paths for the float types, the
 * rounding to a declared type, the implicit causal mask's index arithmetic
 * and the carving of per-thread scratch. */
#ifndef PARTITA_KERNELS_FUSED_SDPA_COMMON_H
#define PARTITA_KERNELS_FUSED_SDPA_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/dtype.h"
#include "ir/dtype_round.h"
#include "kernels/fused/run_io.h"
#include "kernels/kernel.h"
#include "runtime/share.h"

/* One side of the causal mask's GreaterEqual at element (i, j): the column
 * or row index, for the bottom-right form shifted by + s_kv - s_q. */
static inline float sd_causal_side(bool col, int64_t i, int64_t j, bool offset, float add, float sub) {
    int64_t idx = col ? j : i;
    if (!offset) return (float)idx;
    /* Add / Subtract on s32 as the op-by-op path evaluates them: f32, stored s32. */
    int32_t t = pt_f32_to_s32((float)idx + add);
    t = pt_f32_to_s32((float)t - sub);
    return (float)t;
}

/* Batch coordinates bidx[0..nb) of row-major batch index b over dims bdims
 * (bidx[0] = 0 when nb is 0). */
static inline void sd_batch_index(int64_t b, int nb, const int64_t *bdims, int64_t *bidx) {
    bidx[0] = 0;
    for (int i = nb - 1; i >= 0; --i) {
        bidx[i] = b % bdims[i];
        b /= bdims[i];
    }
}

/* Lays out n buffers one after the other in a scratch region, each 64-byte
 * aligned: *fields[k] receives the offset of buffer k (bytes[k] long).
 * Returns the region's size. */
static inline size_t sd_carve(size_t *const *fields, const size_t *bytes, int n) {
    size_t at = 0;
    for (int k = 0; k < n; ++k) {
        *fields[k] = at;
        at += (bytes[k] + 63) / 64 * 64;
    }
    return at;
}

/* Threads for a run: the count planned at compile time, at most the
 * context's budget and `work` items, at least one. */
static inline int sd_threads(int planned, const pt_exec_ctx *ctx, int64_t work) {
    int n = planned;
    if (ctx && ctx->nthreads > 0 && ctx->nthreads < n) n = ctx->nthreads;
    if ((int64_t)n > work) n = (int)work;
    return n < 1 ? 1 : n;
}

/* Runs fn(arg, w, buf) for w in [0, nwork) on nthr threads, items handed
 * out `chunk` at a time (consecutive items that share data go to one
 * thread); buf is the calling thread's slice (bytes [tid * thr_bytes, (tid +
 * 1) * thr_bytes)) of `scratch`.  Odd chunks run their items last to first:
 * threads mostly take neighbouring chunks at once, and the SDPA forward's
 * chunks are heads whose rows share the tensors' rows (BERT's [S, heads,
 * D] layouts put neighbouring heads 256 bytes apart); from opposite ends
 * two threads work on different query rows, so on different pages and
 * away from each other's prefetched lines (BERT-large f32, 2 threads:
 * faster in 17 of 22 alternating runs, about 1 %). */
typedef struct {
    int64_t nwork, chunk, nchunks, next; /* next: the next chunk to claim */
    char *scratch;
    size_t thr_bytes;
    void (*fn)(const void *arg, int64_t w, char *buf);
    const void *arg;
} sd_chunks_job;

static void sd_chunks_body(void *v, int tid) {
    sd_chunks_job *j = v;
    char *buf = j->scratch + (size_t)tid * j->thr_bytes;
    for (int64_t c; (c = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED)) < j->nchunks;) {
        const int64_t lo = c * j->chunk, hi = (c + 1) * j->chunk < j->nwork ? (c + 1) * j->chunk : j->nwork;
        for (int64_t i = lo; i < hi; ++i) j->fn(j->arg, c & 1 ? hi - 1 - (i - lo) : i, buf);
    }
}

/* omp: an OpenMP team of nthr, else the caller and the helpers of
 * runtime/share.h that come (small jobs: share.h says why). */
static inline void sd_parallel_chunks(int nthr, bool omp, int64_t nwork, int64_t chunk, void *scratch,
                                      size_t thr_bytes, void (*fn)(const void *arg, int64_t w, char *buf),
                                      const void *arg) {
    sd_chunks_job job = {nwork, chunk, (nwork + chunk - 1) / chunk, 0, scratch, thr_bytes, fn, arg};
    pt_share_team_run(nthr, omp, sd_chunks_body, &job);
}

/* Reserves `bytes` (64-byte aligned) at offset *at of a scratch layout and
 * returns its offset. */
static inline size_t sd_take(size_t *at, size_t bytes) {
    size_t off = *at;
    *at += (bytes + 63) / 64 * 64;
    return off;
}

#endif
