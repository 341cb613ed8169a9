/* Reference data-movement ops: TypeCast, Reorder, StaticReshape,
 * StaticTranspose, Concat, GenIndex, and Dropout (Philox RNG).  Copies
 * between views of the same type move bits unchanged; type changes follow
 * the conversion rules of docs/numerics.md. */
#include <string.h>

#include "ir/status.h"
#include "kernels/ref/philox.h"
#include "kernels/ref/ref_common.h"
#include "kernels/ref/ref_kernels.h"
static bool lt_dense(const pt_lt *lt) {
    int64_t s = 1;
    for (int d = lt->ndims - 1; d >= 0; --d) {
        if (lt->dims[d] != 1 && lt->layout.strides[d] != s) return false;
        s *= lt->dims[d] > 1 ? lt->dims[d] : 1;
    }
    return true;
}
static bool is_dense(const pt_tview *t) { return lt_dense(&t->lt); }

static bool wide_type(dnnl_data_type_t dt) {
    return dt == dnnl_s32 || dt == dnnl_s64 || dt == dnnl_f64;
}

/* One element from s[so] to d[dof]: bits unchanged for equal byte-sized types,
 * exact through f64 between wide integer/f64 types, through f32 otherwise. */
static inline void copy_elem(const pt_tview *s, int64_t so, const pt_tview *d, int64_t dof) {
    dnnl_data_type_t sdt = s->lt.data_type, ddt = d->lt.data_type;
    int bits = pt_dt_bits(sdt);
    if (sdt == ddt && bits >= 8) {
        size_t eb = (size_t)bits / 8;
        memcpy((char *)d->data + (size_t)dof * eb, (const char *)s->data + (size_t)so * eb, eb);
    } else if (wide_type(sdt) && wide_type(ddt)) {
        pt_store_f64(d->data, ddt, dof, pt_load_f64(s->data, sdt, so));
    } else {
        pt_store_f32(d->data, ddt, dof, pt_load_f32(s->data, sdt, so));
    }
}

/* Copies the `dims`-shaped block s[s0 + Σ i·ss] -> d[d0 + Σ i·ds]. */
static void copy_block(const pt_tview *s, int64_t s0, const int64_t *ss, const pt_tview *d,
                       int64_t d0, const int64_t *ds, int r, const int64_t *dims, int nt) {
    int64_t n = 1;
    for (int k = 0; k < r; ++k) n *= dims[k];
    if (n == 0) return;
    const int64_t inner = r ? dims[r - 1] : 1, outer = n / inner;
    const int64_t si = r ? ss[r - 1] : 0, di = r ? ds[r - 1] : 0;
    /* Two threads must not write the two nibbles of one byte. */
    const bool par = n > 4096 && pt_dt_bits(d->lt.data_type) >= 8;
#pragma omp parallel for schedule(static) num_threads(nt) if (par)
    for (int64_t o = 0; o < outer; ++o) {
        int64_t idx[DNNL_MAX_NDIMS] = {0};
        if (r > 1) pt_unravel(o, r - 1, dims, idx);
        int64_t so = s0, dof = d0;
        for (int k = 0; k < r - 1; ++k) so += idx[k] * ss[k], dof += idx[k] * ds[k];
        for (int64_t i = 0; i < inner; ++i) copy_elem(s, so + i * si, d, dof + i * di);
    }
}

static void *elem_ptr(void *base, dnnl_data_type_t dt, int64_t k) {
    return (char *)base + (size_t)((uint64_t)k * (uint64_t)pt_dt_bits(dt) / 8u);
}

/* Same-shape copy with optional type change (TypeCast, Reorder). */
static pt_status copy_same_shape(const char *name, const pt_tview *src, const pt_tview *dst,
                                 const pt_exec_ctx *ctx) {
    if (!pt_ref_same_dims(src, dst)) return pt_err(dnnl_invalid_shape, "%s: src and dst shapes differ", name);
    const int64_t n = pt_tv_nelems(dst);
    if (n == 0) return dnnl_success;
    if (src->data == dst->data && src->lt.data_type == dst->lt.data_type && is_dense(src) &&
        is_dense(dst))
        return dnnl_success;
    if (is_dense(src) && is_dense(dst)) {
        /* Chunks of an even element count keep 4-bit bytes whole. */
        const int64_t chunk = 1 << 16, nchunks = (n + chunk - 1) / chunk;
#pragma omp parallel for schedule(static) num_threads(pt_ref_threads(ctx)) if (nchunks > 1)
        for (int64_t c = 0; c < nchunks; ++c) {
            int64_t b = c * chunk, e = b + chunk < n ? b + chunk : n;
            pt_convert_dense(elem_ptr(src->data, src->lt.data_type, b), src->lt.data_type,
                             elem_ptr(dst->data, dst->lt.data_type, b), dst->lt.data_type, e - b);
        }
        return dnnl_success;
    }
    copy_block(src, 0, src->lt.layout.strides, dst, 0, dst->lt.layout.strides, dst->lt.ndims,
               dst->lt.dims, pt_ref_threads(ctx));
    return dnnl_success;
}

/* TypeCast and Reorder: the same copy under two names. */
PT_REF_DECL(pt_ref_typecast) {
    const char *name = ((const pt_ref_name_params *)params)->name;
    PT_CHECK(pt_ref_check_io(name, "1 input, 1 output", 1, in, nin, out, nout));
    return copy_same_shape(name, &in[0], &out[0], ctx);
}

PT_REF_DECL(pt_ref_reorder) { return pt_ref_typecast(params, in, nin, out, nout, ctx); }

/* ---- StaticReshape ------------------------------------------------------- */

size_t pt_ref_static_reshape_scratch(const pt_lt *src, const pt_lt *dst) {
    /* Only an in-place run between different layouts needs a dense copy. */
    if (lt_dense(src) && lt_dense(dst) && src->data_type == dst->data_type) return 0;
    return pt_scratch_round(pt_dt_bytes(src->data_type, (int64_t)pt_lt_count(src)));
}

PT_REF_DECL(pt_ref_static_reshape) {
    (void)params;
    PT_CHECK(pt_ref_check_io("StaticReshape", "1 input, 1 output", 1, in, nin, out, nout));
    const pt_tview *src = &in[0], *dst = &out[0];
    const int64_t n = pt_tv_nelems(dst);
    if (n != pt_tv_nelems(src))
        return pt_err(dnnl_invalid_shape, "StaticReshape: element counts differ (%lld vs %lld)",
                      (long long)pt_tv_nelems(src), (long long)n);
    if (n == 0) return dnnl_success;
    const bool dense = is_dense(src) && is_dense(dst);
    if (dense && src->lt.data_type == dst->lt.data_type) {
        if (src->data != dst->data)
            pt_convert_dense(src->data, src->lt.data_type, dst->data, dst->lt.data_type, n);
        return dnnl_success;
    }
    /* In place with different layouts: go through a dense copy of src. */
    pt_tview s = *src;
    if (src->data == dst->data) {
        PT_CHECK(pt_ref_need_scratch("StaticReshape", ctx, pt_ref_static_reshape_scratch(&src->lt, &dst->lt)));
        pt_dense_strides(s.lt.ndims, s.lt.dims, s.lt.layout.strides);
        s.data = ctx->scratch;
        copy_block(src, 0, src->lt.layout.strides, &s, 0, s.lt.layout.strides, s.lt.ndims,
                   s.lt.dims, pt_ref_threads(ctx));
    }
    const int rs = s.lt.ndims, rd = dst->lt.ndims;
    const int64_t inner = rd ? dst->lt.dims[rd - 1] : 1, outer = n / inner;
    const int64_t di = rd ? dst->lt.layout.strides[rd - 1] : 0;
    const bool par = n > 4096 && pt_dt_bits(dst->lt.data_type) >= 8;
#pragma omp parallel for schedule(static) num_threads(pt_ref_threads(ctx)) if (par)
    for (int64_t o = 0; o < outer; ++o) {
        int64_t didx[DNNL_MAX_NDIMS] = {0}, sidx[DNNL_MAX_NDIMS] = {0};
        if (rd > 1) pt_unravel(o, rd - 1, dst->lt.dims, didx);
        pt_unravel(o * inner, rs, s.lt.dims, sidx); /* same row-major position in src */
        int64_t dof = pt_tv_off(dst, didx);
        for (int64_t i = 0; i < inner; ++i) {
            copy_elem(&s, pt_tv_off(&s, sidx), dst, dof + i * di);
            pt_next_index(rs, s.lt.dims, sidx);
        }
    }
    return dnnl_success;
}

/* ---- StaticTranspose ----------------------------------------------------- */

PT_REF_DECL(pt_ref_static_transpose) {
    const pt_ref_transpose_params *p = params;
    PT_CHECK(pt_ref_check_io("StaticTranspose", "1 input, 1 output", 1, in, nin, out, nout));
    const pt_tview *src = &in[0], *dst = &out[0];
    const int r = src->lt.ndims;
    if (dst->lt.ndims != r || p->r != r)
        return pt_err(dnnl_invalid_shape, "StaticTranspose: src rank %d, dst rank %d", r, dst->lt.ndims);
    int64_t sstr[DNNL_MAX_NDIMS];
    for (int k = 0; k < r; ++k) {
        int q = p->perm[k];
        if (dst->lt.dims[k] != src->lt.dims[q])
            return pt_err(dnnl_invalid_shape, "StaticTranspose: dst dim %d is %lld, expected %lld", k,
                          (long long)dst->lt.dims[k], (long long)src->lt.dims[q]);
        sstr[k] = src->lt.layout.strides[q];
    }
    copy_block(src, 0, sstr, dst, 0, dst->lt.layout.strides, r, dst->lt.dims, pt_ref_threads(ctx));
    return dnnl_success;
}

/* ---- Concat -------------------------------------------------------------- */

PT_REF_DECL(pt_ref_concat) {
    if (nin < 1 || nout < 1) return pt_err(dnnl_invalid_arguments, "Concat: needs inputs and 1 output");
    const pt_tview *dst = &out[0];
    PT_CHECK(pt_ref_check_view("Concat", dst, "dst"));
    const int r = dst->lt.ndims, a = ((const pt_ref_axis_params *)params)->axis;
    if (a >= r) return pt_err(dnnl_invalid_arguments, "Concat: axis %d out of range for rank %d", a, r);
    int64_t total = 0;
    for (size_t i = 0; i < nin; ++i) {
        const pt_tview *s = &in[i];
        PT_CHECK(pt_ref_check_view("Concat", s, "src"));
        if (s->lt.ndims != r) return pt_err(dnnl_invalid_shape, "Concat: input %zu rank differs", i);
        for (int d = 0; d < r; ++d)
            if (d != a && s->lt.dims[d] != dst->lt.dims[d])
                return pt_err(dnnl_invalid_shape, "Concat: input %zu dim %d differs from dst", i, d);
        total += s->lt.dims[a];
    }
    if (total != dst->lt.dims[a])
        return pt_err(dnnl_invalid_shape, "Concat: dst dim %lld is %lld, inputs sum to %lld",
                      (long long)a, (long long)dst->lt.dims[a], (long long)total);
    int64_t off = 0;
    for (size_t i = 0; i < nin; ++i) {
        const pt_tview *s = &in[i];
        copy_block(s, 0, s->lt.layout.strides, dst, off * dst->lt.layout.strides[a],
                   dst->lt.layout.strides, r, s->lt.dims, pt_ref_threads(ctx));
        off += s->lt.dims[a];
    }
    return dnnl_success;
}

/* ---- GenIndex ------------------------------------------------------------ */

PT_REF_DECL(pt_ref_gen_index) {
    if (nin < 1 || nout < 1) return pt_err(dnnl_invalid_arguments, "GenIndex: needs 1 input, 1 output");
    const pt_tview *src = &in[0], *dst = &out[0];
    PT_CHECK(pt_ref_check_view("GenIndex", dst, "dst"));
    if (src->lt.ndims != dst->lt.ndims || !pt_ref_same_dims(src, dst))
        return pt_err(dnnl_invalid_shape, "GenIndex: src and dst shapes differ");
    const int r = dst->lt.ndims, a = ((const pt_ref_axis_params *)params)->axis;
    if (a >= r) return pt_err(dnnl_invalid_arguments, "GenIndex: axis %d out of range for rank %d", a, r);
    const int64_t n = pt_tv_nelems(dst);
    if (n == 0) return dnnl_success;
    const int64_t inner = dst->lt.dims[r - 1], outer = n / inner;
    const int64_t di = dst->lt.layout.strides[r - 1];
    const bool par = n > 4096 && pt_dt_bits(dst->lt.data_type) >= 8;
#pragma omp parallel for schedule(static) num_threads(pt_ref_threads(ctx)) if (par)
    for (int64_t o = 0; o < outer; ++o) {
        int64_t idx[DNNL_MAX_NDIMS] = {0};
        pt_unravel(o, r - 1, dst->lt.dims, idx);
        int64_t dof = pt_tv_off(dst, idx);
        for (int64_t i = 0; i < inner; ++i) {
            int64_t v = a == r - 1 ? i : idx[a];
            pt_store_f64(dst->data, dst->lt.data_type, dof + i * di, (double)v);
        }
    }
    return dnnl_success;
}

/* ---- Dropout ------------------------------------------------------------- */


PT_REF_DECL(pt_ref_dropout) {
    (void)params;
    PT_CHECK(pt_ref_check_io("Dropout", "4 inputs and 1-2 outputs", 4, in, nin, out, nout));
    const pt_tview *src = &in[0], *dst = &out[0], *mask = nout > 1 ? &out[1] : NULL;
    if (!pt_ref_same_dims(src, dst)) return pt_err(dnnl_invalid_shape, "Dropout: dst shape differs from src");
    if (mask && mask->data == NULL) mask = NULL; /* an absent optional output */
    if (mask) {
        PT_CHECK(pt_ref_check_view("Dropout", mask, "mask"));
        if (!pt_ref_same_dims(src, mask)) return pt_err(dnnl_invalid_shape, "Dropout: mask shape differs from src");
    }
    int64_t seed, offset;
    if (!pt_read_scalar_i64(&in[1], &seed) || !pt_read_scalar_i64(&in[2], &offset))
        return pt_err(dnnl_invalid_arguments, "Dropout: seed and offset must be one-element tensors");
    if (!in[3].data || pt_tv_nelems(&in[3]) != 1 || pt_dt_bits(in[3].lt.data_type) == 0)
        return pt_err(dnnl_invalid_arguments, "Dropout: probability must be a one-element tensor");
    const pt_dropout_consts dc = pt_dropout_prepare(pt_load_f32(in[3].data, in[3].lt.data_type, 0));

    const int r = src->lt.ndims;
    const int64_t n = pt_tv_nelems(src);
    if (n == 0) return dnnl_success;
    const int64_t inner = r ? src->lt.dims[r - 1] : 1, outer = n / inner;
    const int64_t si = r ? src->lt.layout.strides[r - 1] : 0;
    const int64_t di = r ? dst->lt.layout.strides[r - 1] : 0;
    const int64_t mi = (mask && r) ? mask->lt.layout.strides[r - 1] : 0;
    const bool par = n > 4096 && pt_dt_bits(dst->lt.data_type) >= 8 &&
                     (!mask || pt_dt_bits(mask->lt.data_type) >= 8);
#pragma omp parallel for schedule(static) num_threads(pt_ref_threads(ctx)) if (par)
    for (int64_t o = 0; o < outer; ++o) {
        int64_t idx[DNNL_MAX_NDIMS] = {0};
        if (r > 1) pt_unravel(o, r - 1, src->lt.dims, idx);
        int64_t so = pt_tv_off(src, idx), dof = pt_tv_off(dst, idx);
        int64_t mo = mask ? pt_tv_off(mask, idx) : 0;
        for (int64_t i = 0; i < inner; ++i) {
            uint64_t lin = (uint64_t)(o * inner + i);
            bool keep = pt_dropout_keep(&dc, lin, seed, offset);
            float v = keep ? pt_tv_getf(src, so + i * si) * dc.inv_q : 0.f;
            pt_tv_setf(dst, dof + i * di, v);
            if (mask) pt_tv_setf(mask, mo + i * mi, keep ? 1.f : 0.f);
        }
    }
    return dnnl_success;
}
