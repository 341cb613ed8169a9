/* Layout and thread helpers of the memory-bound kernels. */
#include "kernels/mem/mem_io.h"

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
