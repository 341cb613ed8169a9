/* Layout and thread helpers of the memory-bound kernels, and the choice of
 * their ISA row (mem_rows.h). */
#include <pthread.h>

#include "kernels/mem/mem_io.h"
#include "kernels/mem/mem_rows.h"

bool pt_mem_dtype_ok(dnnl_data_type_t dt) { return dt == dnnl_f32 || dt == dnnl_bf16 || dt == dnnl_f16; }

bool pt_mem_dense(const pt_lt *lt) {
    if (lt->ndims < 0 || lt->ndims > DNNL_MAX_NDIMS || lt->layout_type != dnnl_graph_layout_type_strided) return false;
    int64_t want = 1;
    for (int d = lt->ndims - 1; d >= 0; --d) {
        if (lt->dims[d] < 0) return false;
        if (lt->dims[d] != 1 && lt->layout.strides[d] != want) return false;
        want *= lt->dims[d];
    }
    return true;
}

int pt_mem_max_threads(void) {
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

int pt_mem_threads(const pt_exec_ctx *ctx, size_t bytes, int64_t items, int cap) {
    int64_t nt = (int64_t)(bytes / PT_MEM_BYTES_PER_THREAD);
    if (nt > ctx->nthreads) nt = ctx->nthreads;
    if (nt > cap) nt = cap;
    if (nt > items) nt = items;
    return nt < 1 ? 1 : (int)nt;
}

/* ---- the ISA rows (mem_rows.h) ---- */

static const pt_mem_rows *const g_rows[] = {&pt_mem_rows_avx512, &pt_mem_rows_avx512bf16};

size_t pt_mem_rows_count(void) { return sizeof g_rows / sizeof g_rows[0]; }

const pt_mem_rows *pt_mem_rows_at(size_t i) { return i < pt_mem_rows_count() ? g_rows[i] : NULL; }

const pt_mem_rows *pt_mem_rows_select(pt_isa_level cap) {
    const pt_mem_rows *best = NULL;
    for (size_t i = 0; i < pt_mem_rows_count(); ++i) {
        const pt_mem_rows *r = g_rows[i];
        if (!pt_cpu_row_usable(r->level, r->features, cap)) continue;
        /* A row with sub-features beats the plain row of its level. */
        if (!best || r->level > best->level || (r->level == best->level && r->features > best->features)) best = r;
    }
    return best;
}

static const pt_mem_rows *g_default;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void choose_default(void) { g_default = pt_mem_rows_select(pt_isa()); }

const pt_mem_rows *pt_mem_rows_get(void) {
    pthread_once(&g_once, choose_default);
    return g_default;
}
