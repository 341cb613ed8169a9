/* Shared checks and helpers of the reference kernels. */
#include "kernels/ref/ref_common.h"

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

int pt_ref_threads_for(const pt_exec_ctx *ctx, int64_t work) { return work < 32768 ? 1 : pt_ref_threads(ctx); }

pt_status pt_ref_check_view(const char *name, const pt_tview *t, const char *what) {
    if (t->lt.ndims < 0 || t->lt.ndims > DNNL_MAX_NDIMS)
        return pt_err(dnnl_invalid_arguments, "%s: %s has invalid rank %d",
                      name, what, t->lt.ndims);
    for (int d = 0; d < t->lt.ndims; ++d)
        if (t->lt.dims[d] < 0)
            return pt_err(dnnl_invalid_arguments, "%s: %s has unknown dim %d",
                          name, what, d);
    if (pt_dt_bits(t->lt.data_type) == 0)
        return pt_err(dnnl_invalid_arguments, "%s: %s has no data type", name, what);
    if (!t->data && pt_tv_nelems(t) > 0)
        return pt_err(dnnl_invalid_arguments, "%s: %s has no data", name, what);
    return dnnl_success;
}

bool pt_ref_same_dims(const pt_tview *a, const pt_tview *b) {
    if (a->lt.ndims != b->lt.ndims) return false;
    for (int d = 0; d < a->lt.ndims; ++d)
        if (a->lt.dims[d] != b->lt.dims[d]) return false;
    return true;
}


pt_status pt_ref_check_io(const char *name, const char *need, size_t min_in, const pt_tview *in, size_t nin,
                          const pt_tview *out, size_t nout) {
    if (nin < min_in || nout < 1) return pt_err(dnnl_invalid_arguments, "%s: needs %s", name, need);
    PT_CHECK(pt_ref_check_view(name, &in[0], "src"));
    return pt_ref_check_view(name, &out[0], "dst");
}

pt_status pt_ref_same_rank(const char *name, const pt_tview *a, const pt_tview *b, const pt_tview *c) {
    if (b->lt.ndims != a->lt.ndims || (c && c->lt.ndims != a->lt.ndims))
        return pt_err(dnnl_invalid_arguments, "%s: tensor ranks differ", name);
    return dnnl_success;
}

pt_status pt_ref_need_scratch(const char *name, const pt_exec_ctx *ctx, size_t need) {
    if (need && (!ctx->scratch || ctx->scratch_bytes < need))
        return pt_err(dnnl_out_of_memory, "%s: scratch of %zu bytes, %zu needed", name,
                      ctx->scratch ? ctx->scratch_bytes : (size_t)0, need);
    return dnnl_success;
}

void pt_v5_data(const pt_lt *lt, bool nxc, pt_v5 *v) {
    const int64_t *d = lt->dims, *s = lt->layout.strides;
    int r = lt->ndims, k = r - 2, cdim = nxc ? r - 1 : 1;
    v->d[0] = d[0], v->s[0] = s[0];
    v->d[1] = d[cdim], v->s[1] = s[cdim];
    for (int slot = 0; slot < 3; ++slot) {
        int j = slot - (3 - k);
        int ax = nxc ? 1 + j : 2 + j;
        v->d[2 + slot] = j >= 0 ? d[ax] : 1;
        v->s[2 + slot] = j >= 0 ? s[ax] : 0;
    }
}

/* "X first" weight formats (XIO, XOI) store [K.., B, A]; the others (OIX,
 * IOX) store [A, B, K..]. */
void pt_v5_weights(const pt_lt *lt, bool x_first, pt_v5 *v) {
    const int64_t *d = lt->dims, *s = lt->layout.strides;
    int r = lt->ndims, k = r - 2;
    int a0 = x_first ? r - 1 : 0, a1 = x_first ? r - 2 : 1, sp0 = x_first ? 0 : 2;
    v->d[0] = d[a0], v->s[0] = s[a0];
    v->d[1] = d[a1], v->s[1] = s[a1];
    for (int slot = 0; slot < 3; ++slot) {
        int j = slot - (3 - k);
        v->d[2 + slot] = j >= 0 ? d[sp0 + j] : 1;
        v->s[2 + slot] = j >= 0 ? s[sp0 + j] : 0;
    }
}

void pt_v5_store(const pt_tview *t, const pt_v5 *v, const float *buf, const pt_exec_ctx *ctx) {
    int64_t n = pt_v5_count(v);
    int nt = pt_ref_threads_for(ctx, n);
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
    for (int64_t i = 0; i < n; ++i) pt_tv_setf(t, pt_v5_lin_off(v, i), buf[i]);
}

void pt_v5_scatter(const pt_tview *ds, const pt_v5 *vds, const pt_v5 *vdd, float *acc, int nt, pt_v5_scatter_fn fn,
                   const void *arg, const pt_exec_ctx *ctx) {
    const int64_t C = vds->d[1], plane = vds->d[2] * vds->d[3] * vds->d[4], nplanes = vds->d[0] * C;
    memset(acc, 0, (size_t)(plane * nplanes) * sizeof(float));
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
    for (int64_t p = 0; p < nplanes; ++p) {
        int64_t n = p / C, c = p % C;
        float *ap = acc + p * plane;
        for (int64_t z = 0; z < vdd->d[2]; ++z)
            for (int64_t y = 0; y < vdd->d[3]; ++y)
                for (int64_t x = 0; x < vdd->d[4]; ++x) fn(arg, ap, n, c, z, y, x);
    }
    pt_v5_store(ds, vds, acc, ctx);
}

/* See ref_common.h. */
bool pt_read_scalar_i64(const pt_tview *t, int64_t *v) {
    if (!t->data || pt_tv_nelems(t) != 1) return false;
    switch (t->lt.data_type) {
        case dnnl_s64: memcpy(v, t->data, sizeof *v); return true;
        case dnnl_s32: {
            int32_t x;
            memcpy(&x, t->data, sizeof x);
            *v = x;
            return true;
        }
        default:
            if (pt_dt_bits(t->lt.data_type) == 0) return false;
            *v = pt_f64_to_s64(pt_load_f64(t->data, t->lt.data_type, 0));
            return true;
    }
}
