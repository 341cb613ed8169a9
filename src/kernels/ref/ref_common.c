/* Shared checks and helpers of the reference kernels. */
#include "kernels/ref/ref_common.h"

#include "ops/op_schema.h"

#ifdef _OPENMP
#include <omp.h>
#endif

int pt_ref_threads(const pt_exec_ctx *ctx) {
#ifdef _OPENMP
    return ctx && ctx->nthreads > 0 ? ctx->nthreads : omp_get_max_threads();
#else
    (void)ctx;
    return 1;
#endif
}

pt_status pt_ref_check_view(const pt_op *op, const pt_tview *t, const char *what) {
    if (t->lt.ndims < 0 || t->lt.ndims > DNNL_MAX_NDIMS)
        return pt_err(dnnl_invalid_arguments, "%s: %s has invalid rank %d",
                      pt_op_kind_name(op->kind), what, t->lt.ndims);
    for (int d = 0; d < t->lt.ndims; ++d)
        if (t->lt.dims[d] < 0)
            return pt_err(dnnl_invalid_arguments, "%s: %s has unknown dim %d",
                          pt_op_kind_name(op->kind), what, d);
    if (pt_dt_bits(t->lt.data_type) == 0)
        return pt_err(dnnl_invalid_arguments, "%s: %s has no data type", pt_op_kind_name(op->kind), what);
    if (!t->data && pt_tv_nelems(t) > 0)
        return pt_err(dnnl_invalid_arguments, "%s: %s has no data", pt_op_kind_name(op->kind), what);
    return dnnl_success;
}

bool pt_ref_same_dims(const pt_tview *a, const pt_tview *b) {
    if (a->lt.ndims != b->lt.ndims) return false;
    for (int d = 0; d < a->lt.ndims; ++d)
        if (a->lt.dims[d] != b->lt.dims[d]) return false;
    return true;
}

