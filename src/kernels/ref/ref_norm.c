/* Reference normalisation ops (docs/ops.md: LayerNorm, LayerNormBackward,
 * GroupNorm, RMSNorm, BatchNormInference, BatchNormForwardTraining,
 * BatchNormTrainingBackward).  Statistics are accumulated in f64 with two
 * passes; every tensor is addressed through its own strides. */
#include <math.h>
#include <string.h>

#include "ir/status.h"
#include "kernels/ref/ref_common.h"
#include "kernels/ref/ref_kernels.h"

/* ---- addressing helpers -------------------------------------------------- */

/* Offset of the row-major linear index `lin` over the listed axes of a tensor
 * with extents `dims` and strides `st`. */
static int64_t axes_off(int64_t lin, const int64_t *dims, const int64_t *st, const int *axes, int naxes) {
    int64_t off = 0;
    for (int i = naxes - 1; i >= 0; --i) {
        int64_t e = dims[axes[i]];
        if (e <= 0) return 0;
        off += (lin % e) * st[axes[i]];
        lin /= e;
    }
    return off;
}

/* Offsets of all `count` positions over the listed axes (row-major order),
 * into the next piece of scratch. */
static int64_t *axes_table(char **cur, const int64_t *dims, const int64_t *st, const int *axes, int naxes,
                           int64_t count, const pt_exec_ctx *ctx) {
    int64_t *tab = pt_scratch_take(cur, (size_t)count * sizeof(int64_t));
    int nt_ = pt_ref_threads_for(ctx, count * naxes);
#pragma omp parallel for schedule(static) num_threads(nt_) if (nt_ > 1)
    for (int64_t i = 0; i < count; ++i) tab[i] = axes_off(i, dims, st, axes, naxes);
    return tab;
}

/* Element `lin` of a tensor in its own row-major order (aux tensors such as
 * [C] statistics or [N, G] means, whatever their rank). */
static int64_t flat_off(const pt_tview *t, int64_t lin) {
    int64_t idx[DNNL_MAX_NDIMS];
    pt_unravel(lin, t->lt.ndims, t->lt.dims, idx);
    return pt_tv_off(t, idx);
}

/* Stores element `lin` of an optional aux tensor (statistics, gradients of
 * per-channel parameters); nothing when the tensor is absent. */
static void aux_set(const pt_tview *t, int64_t lin, double v) {
    if (t) pt_tv_setf(t, flat_off(t, lin), (float)v);
}

/* Two of them at the same position (mean and variance, or the two
 * gradients), `a` first. */
static void aux_set2(const pt_tview *a, const pt_tview *b, int64_t lin, double va, double vb) {
    aux_set(a, lin, va);
    aux_set(b, lin, vb);
}

/* Strides of `t` broadcast (right-aligned, unidirectionally) to a rank-r
 * shape `dims`: 0 for missing or stretched dims.  False if not broadcastable. */
static bool bcast_strides(const pt_tview *t, int r, const int64_t *dims, int64_t *es) {
    int tr = t->lt.ndims;
    if (tr > r) return false;
    for (int d = 0; d < r; ++d) es[d] = 0;
    for (int j = 0; j < tr; ++j) {
        int d = j + r - tr;
        int64_t e = t->lt.dims[j];
        if (e != 1 && e != dims[d]) return false;
        es[d] = e == 1 ? 0 : t->lt.layout.strides[j];
    }
    return true;
}

static bool same_shape(const pt_tview *a, const pt_tview *b) {
    if (a->lt.ndims != b->lt.ndims) return false;
    for (int d = 0; d < a->lt.ndims; ++d)
        if (a->lt.dims[d] != b->lt.dims[d]) return false;
    return true;
}

static pt_status need_count(const char *opname, const char *what, const pt_tview *t, int64_t n) {
    if (pt_tv_nelems(t) != n)
        return pt_err(dnnl_invalid_arguments, "%s: %s has %lld elements, expected %lld", opname, what,
                      (long long)pt_tv_nelems(t), (long long)n);
    return dnnl_success;
}

/* Flat offsets of the first n elements of an aux tensor, into the next piece
 * of scratch (NULL tensor -> NULL, no scratch taken). */
static int64_t *flat_table(char **cur, const pt_tview *t, int64_t n) {
    if (!t) return NULL;
    int64_t *tab = pt_scratch_take(cur, (size_t)n * sizeof(int64_t));
    for (int64_t i = 0; i < n; ++i) tab[i] = flat_off(t, i);
    return tab;
}

/* ---- LayerNorm / LayerNormBackward / RMSNorm ------------------------------ */

/* Normalised begin_norm_axis; outer = dims before it, inner = dims from it. */
static pt_status norm_split(const pt_ref_norm_params *p, const pt_lt *src, int *axis, int64_t *outer,
                            int64_t *inner) {
    int r = src->ndims, a = p->axis;
    if (r < 1) return pt_err(dnnl_invalid_arguments, "%s: src must have rank >= 1", p->name);
    if (a >= r) return pt_err(dnnl_invalid_arguments, "%s: begin_norm_axis out of range for rank %d", p->name, r);
    *axis = a;
    *outer = 1, *inner = 1;
    for (int d = 0; d < r; ++d) *(d < a ? outer : inner) *= src->dims[d];
    return dnnl_success;
}

/* Scratch of LayerNorm (offset tables of src, dst and affine params) and
 * LayerNormBackward (src, diff_dst, diff_src, gamma tables, per-row mean and
 * 1/sigma). */
size_t pt_ref_layer_norm_scratch(const pt_ref_norm_params *p, const pt_lt *src, bool bwd) {
    int a = 0;
    int64_t T = 0, M = 0;
    if (norm_split(p, src, &a, &T, &M) != dnnl_success) return 0;
    size_t tab = pt_scratch_round((size_t)M * sizeof(int64_t));
    if (!bwd) return tab * (p->affine ? 4 : 2);
    return tab * (p->affine ? 4 : 3) + 2 * pt_scratch_round((size_t)T * sizeof(double));
}

/* Scratch of RMSNorm: offset tables of src, dst and gamma. */
size_t pt_ref_rms_norm_scratch(const pt_ref_norm_params *p, const pt_lt *src) {
    int a = 0;
    int64_t T = 0, M = 0;
    if (norm_split(p, src, &a, &T, &M) != dnnl_success) return 0;
    return 3 * pt_scratch_round((size_t)M * sizeof(int64_t));
}

static void axis_range(int from, int to, int *axes) {
    for (int i = from; i < to; ++i) axes[i - from] = i;
}

PT_REF_DECL(pt_ref_layer_norm) {
    const pt_ref_norm_params *p = params;
    const char *nm = p->name;
    if (nin < 1 || nout < 1) return pt_err(dnnl_invalid_arguments, "%s: needs an input and an output", nm);
    const pt_tview *src = &in[0], *dst = &out[0];
    int a;
    int64_t T, M;
    PT_CHECK(norm_split(p, &src->lt, &a, &T, &M));
    if (!same_shape(src, dst)) return pt_err(dnnl_invalid_arguments, "%s: dst shape differs from src", nm);
    bool affine = p->affine;
    if (affine && nin < 3) return pt_err(dnnl_invalid_arguments, "%s: use_affine needs gamma and beta", nm);
    const pt_tview *gamma = affine ? &in[1] : NULL, *beta = affine ? &in[2] : NULL;
    const pt_tview *mean = nout > 1 ? &out[1] : NULL, *var = nout > 2 ? &out[2] : NULL;
    if (gamma) PT_CHECK(need_count(nm, "gamma", gamma, M));
    if (beta) PT_CHECK(need_count(nm, "beta", beta, M));
    if (mean) PT_CHECK(need_count(nm, "mean", mean, T));
    if (var) PT_CHECK(need_count(nm, "variance", var, T));
    double eps = p->eps;
    int r = src->lt.ndims, inner_axes[DNNL_MAX_NDIMS], outer_axes[DNNL_MAX_NDIMS];
    axis_range(a, r, inner_axes);
    axis_range(0, a, outer_axes);
    PT_CHECK(pt_ref_need_scratch(nm, ctx, pt_ref_layer_norm_scratch(p, &src->lt, false)));
    char *cur = ctx->scratch;
    int64_t *si = axes_table(&cur, src->lt.dims, src->lt.layout.strides, inner_axes, r - a, M, ctx);
    int64_t *di = axes_table(&cur, dst->lt.dims, dst->lt.layout.strides, inner_axes, r - a, M, ctx);
    int64_t *gi = flat_table(&cur, gamma, M), *bi = flat_table(&cur, beta, M);
    int nt_ = pt_ref_threads_for(ctx, T * M * 3);
#pragma omp parallel for schedule(static) num_threads(nt_) if (nt_ > 1)
    for (int64_t t = 0; t < T; ++t) {
        int64_t so = axes_off(t, src->lt.dims, src->lt.layout.strides, outer_axes, a);
        int64_t dof = axes_off(t, dst->lt.dims, dst->lt.layout.strides, outer_axes, a);
        double sum = 0.0, sq = 0.0;
        for (int64_t i = 0; i < M; ++i) sum += pt_tv_getf(src, so + si[i]);
        double mu = M > 0 ? sum / (double)M : 0.0;
        for (int64_t i = 0; i < M; ++i) {
            double x = pt_tv_getf(src, so + si[i]) - mu;
            sq += x * x;
        }
        double s2 = M > 0 ? sq / (double)M : 0.0;
        double inv = 1.0 / sqrt(s2 + eps);
        for (int64_t i = 0; i < M; ++i) {
            double y = (pt_tv_getf(src, so + si[i]) - mu) * inv;
            if (gamma) y = y * pt_tv_getf(gamma, gi[i]) + pt_tv_getf(beta, bi[i]);
            pt_tv_setf(dst, dof + di[i], (float)y);
        }
        aux_set2(mean, var, t, mu, s2);
    }
    return dnnl_success;
}

PT_REF_DECL(pt_ref_layer_norm_bwd) {
    const pt_ref_norm_params *p = params;
    const char *nm = p->name;
    if (nin < 4 || nout < 1) return pt_err(dnnl_invalid_arguments, "%s: needs 4-6 inputs, 1-3 outputs", nm);
    const pt_tview *src = &in[0], *dd = &in[1], *mean = &in[2], *var = &in[3], *ds = &out[0];
    int a;
    int64_t T, M;
    PT_CHECK(norm_split(p, &src->lt, &a, &T, &M));
    if (!same_shape(src, dd) || !same_shape(src, ds))
        return pt_err(dnnl_invalid_arguments, "%s: src/diff_dst/diff_src shapes differ", nm);
    bool affine = p->affine;
    if (affine && nin < 5) return pt_err(dnnl_invalid_arguments, "%s: use_affine needs gamma", nm);
    const pt_tview *gamma = affine ? &in[4] : NULL;
    const pt_tview *dg = nout > 1 ? &out[1] : NULL, *db = nout > 2 ? &out[2] : NULL;
    PT_CHECK(need_count(nm, "mean", mean, T));
    PT_CHECK(need_count(nm, "variance", var, T));
    if (gamma) PT_CHECK(need_count(nm, "gamma", gamma, M));
    if (dg) PT_CHECK(need_count(nm, "diff_gamma", dg, M));
    if (db) PT_CHECK(need_count(nm, "diff_beta", db, M));
    double eps = p->eps;
    int r = src->lt.ndims, inner_axes[DNNL_MAX_NDIMS], outer_axes[DNNL_MAX_NDIMS];
    axis_range(a, r, inner_axes);
    axis_range(0, a, outer_axes);
    const int64_t *dims = src->lt.dims;
    PT_CHECK(pt_ref_need_scratch(nm, ctx, pt_ref_layer_norm_scratch(p, &src->lt, true)));
    char *cur = ctx->scratch;
    int64_t *si = axes_table(&cur, dims, src->lt.layout.strides, inner_axes, r - a, M, ctx);
    int64_t *ddi = axes_table(&cur, dims, dd->lt.layout.strides, inner_axes, r - a, M, ctx);
    int64_t *dsi = axes_table(&cur, dims, ds->lt.layout.strides, inner_axes, r - a, M, ctx);
    int64_t *gi = flat_table(&cur, gamma, M);
    double *mu = pt_scratch_take(&cur, (size_t)T * sizeof(double));
    double *inv = pt_scratch_take(&cur, (size_t)T * sizeof(double));
    for (int64_t t = 0; t < T; ++t) {
        mu[t] = pt_tv_getf(mean, flat_off(mean, t));
        inv[t] = 1.0 / sqrt((double)pt_tv_getf(var, flat_off(var, t)) + eps);
    }
    /* Gradients of gamma / beta first: diff_src may alias diff_dst. */
    if (dg || db) {
        int nt_ = pt_ref_threads_for(ctx, M * T * 2);
#pragma omp parallel for schedule(static) num_threads(nt_) if (nt_ > 1)
        for (int64_t i = 0; i < M; ++i) {
            double sg = 0.0, sb = 0.0;
            for (int64_t t = 0; t < T; ++t) {
                double d = pt_tv_getf(dd, axes_off(t, dims, dd->lt.layout.strides, outer_axes, a) + ddi[i]);
                double xh = (pt_tv_getf(src, axes_off(t, dims, src->lt.layout.strides, outer_axes, a) + si[i]) -
                             mu[t]) * inv[t];
                sg += d * xh;
                sb += d;
            }
            aux_set2(dg, db, i, sg, sb);
        }
    }
    int nt_ = pt_ref_threads_for(ctx, T * M * 4);
#pragma omp parallel for schedule(static) num_threads(nt_) if (nt_ > 1)
    for (int64_t t = 0; t < T; ++t) {
        int64_t so = axes_off(t, dims, src->lt.layout.strides, outer_axes, a);
        int64_t ddo = axes_off(t, dims, dd->lt.layout.strides, outer_axes, a);
        int64_t dso = axes_off(t, dims, ds->lt.layout.strides, outer_axes, a);
        double sum_g = 0.0, sum_gx = 0.0;
        for (int64_t i = 0; i < M; ++i) {
            double g = pt_tv_getf(dd, ddo + ddi[i]);
            if (gamma) g *= pt_tv_getf(gamma, gi[i]);
            double xh = (pt_tv_getf(src, so + si[i]) - mu[t]) * inv[t];
            sum_g += g;
            sum_gx += g * xh;
        }
        double mg = M > 0 ? sum_g / (double)M : 0.0, mgx = M > 0 ? sum_gx / (double)M : 0.0;
        for (int64_t i = 0; i < M; ++i) {
            double g = pt_tv_getf(dd, ddo + ddi[i]);
            if (gamma) g *= pt_tv_getf(gamma, gi[i]);
            double xh = (pt_tv_getf(src, so + si[i]) - mu[t]) * inv[t];
            pt_tv_setf(ds, dso + dsi[i], (float)(inv[t] * (g - mg - xh * mgx)));
        }
    }
    return dnnl_success;
}

PT_REF_DECL(pt_ref_rms_norm) {
    const pt_ref_norm_params *p = params;
    const char *nm = p->name;
    if (nin < 1 || nout < 1) return pt_err(dnnl_invalid_arguments, "%s: needs 1-2 inputs, 1 output", nm);
    const pt_tview *src = &in[0], *dst = &out[0], *gamma = nin > 1 ? &in[1] : NULL;
    int a;
    int64_t T, M;
    PT_CHECK(norm_split(p, &src->lt, &a, &T, &M));
    if (!same_shape(src, dst)) return pt_err(dnnl_invalid_arguments, "%s: dst shape differs from src", nm);
    int r = src->lt.ndims;
    int64_t gs[DNNL_MAX_NDIMS];
    if (gamma && !bcast_strides(gamma, r, src->lt.dims, gs))
        return pt_err(dnnl_invalid_arguments, "%s: gamma not broadcastable to src", nm);
    double eps = p->eps;
    int inner_axes[DNNL_MAX_NDIMS], outer_axes[DNNL_MAX_NDIMS];
    axis_range(a, r, inner_axes);
    axis_range(0, a, outer_axes);
    const int64_t *dims = src->lt.dims;
    PT_CHECK(pt_ref_need_scratch(nm, ctx, pt_ref_rms_norm_scratch(p, &src->lt)));
    char *cur = ctx->scratch;
    int64_t *si = axes_table(&cur, dims, src->lt.layout.strides, inner_axes, r - a, M, ctx);
    int64_t *di = axes_table(&cur, dims, dst->lt.layout.strides, inner_axes, r - a, M, ctx);
    int64_t *gi = gamma ? axes_table(&cur, dims, gs, inner_axes, r - a, M, ctx) : NULL;
    int nt_ = pt_ref_threads_for(ctx, T * M * 2);
#pragma omp parallel for schedule(static) num_threads(nt_) if (nt_ > 1)
    for (int64_t t = 0; t < T; ++t) {
        int64_t so = axes_off(t, dims, src->lt.layout.strides, outer_axes, a);
        int64_t dof = axes_off(t, dims, dst->lt.layout.strides, outer_axes, a);
        int64_t go = gamma ? axes_off(t, dims, gs, outer_axes, a) : 0;
        double sq = 0.0;
        for (int64_t i = 0; i < M; ++i) {
            double x = pt_tv_getf(src, so + si[i]);
            sq += x * x;
        }
        double inv = 1.0 / sqrt((M > 0 ? sq / (double)M : 0.0) + eps);
        for (int64_t i = 0; i < M; ++i) {
            double y = pt_tv_getf(src, so + si[i]) * inv;
            if (gamma) y *= pt_tv_getf(gamma, go + gi[i]);
            pt_tv_setf(dst, dof + di[i], (float)y);
        }
    }
    return dnnl_success;
}

/* ---- channel-based ops (GroupNorm, BatchNorm*) ---------------------------- */

/* Channel dim per data_format; `others` receives every other non-batch axis
 * (with_batch == false) or every non-channel axis (with_batch == true). */
static pt_status chan_layout(const pt_ref_norm_params *p, const pt_lt *src, bool with_batch, int *cdim,
                             int *others, int *nothers) {
    int r = src->ndims;
    if (r < 2) return pt_err(dnnl_invalid_arguments, "%s: src rank %d < 2", p->name, r);
    *cdim = p->nxc ? r - 1 : 1;
    *nothers = 0;
    for (int d = with_batch ? 0 : 1; d < r; ++d)
        if (d != *cdim) others[(*nothers)++] = d;
    return dnnl_success;
}

PT_REF_DECL(pt_ref_group_norm) {
    const pt_ref_norm_params *p = params;
    const char *nm = p->name;
    if (nin < 1 || nout < 1) return pt_err(dnnl_invalid_arguments, "%s: needs an input and an output", nm);
    const pt_tview *src = &in[0], *dst = &out[0];
    int cdim = 1, sp_axes[DNNL_MAX_NDIMS], nsp = 0;
    PT_CHECK(chan_layout(p, &src->lt, false, &cdim, sp_axes, &nsp));
    if (!same_shape(src, dst)) return pt_err(dnnl_invalid_arguments, "%s: dst shape differs from src", nm);
    const int64_t *dims = src->lt.dims;
    int64_t N = dims[0], C = dims[cdim], G = p->groups;
    if (G < 1 || G > C || C % G != 0)
        return pt_err(dnnl_invalid_arguments, "%s: groups %lld incompatible with %lld channels", nm, (long long)G,
                      (long long)C);
    bool affine = p->affine;
    if (affine && nin < 3) return pt_err(dnnl_invalid_arguments, "%s: use_affine needs gamma and beta", nm);
    const pt_tview *gamma = affine ? &in[1] : NULL, *beta = affine ? &in[2] : NULL;
    const pt_tview *mean = nout > 1 ? &out[1] : NULL, *var = nout > 2 ? &out[2] : NULL;
    if (gamma) PT_CHECK(need_count(nm, "gamma", gamma, C));
    if (beta) PT_CHECK(need_count(nm, "beta", beta, C));
    if (mean) PT_CHECK(need_count(nm, "mean", mean, N * G));
    if (var) PT_CHECK(need_count(nm, "variance", var, N * G));
    double eps = p->eps;
    int64_t SP = 1;
    for (int i = 0; i < nsp; ++i) SP *= dims[sp_axes[i]];
    PT_CHECK(pt_ref_need_scratch(nm, ctx, pt_ref_group_norm_scratch(p, &src->lt)));
    char *cur = ctx->scratch;
    int64_t *ss = axes_table(&cur, dims, src->lt.layout.strides, sp_axes, nsp, SP, ctx);
    int64_t *dsp = axes_table(&cur, dims, dst->lt.layout.strides, sp_axes, nsp, SP, ctx);
    int64_t Cg = C / G, cnt = Cg * SP;
    const int64_t *sst = src->lt.layout.strides, *dst_st = dst->lt.layout.strides;
    int nt_ = pt_ref_threads_for(ctx, N * G * cnt * 3);
#pragma omp parallel for schedule(static) num_threads(nt_) if (nt_ > 1)
    for (int64_t ng = 0; ng < N * G; ++ng) {
        int64_t n = ng / G, g = ng % G;
        double sum = 0.0, sq = 0.0;
        for (int64_t c = g * Cg; c < (g + 1) * Cg; ++c) {
            int64_t base = n * sst[0] + c * sst[cdim];
            for (int64_t s = 0; s < SP; ++s) sum += pt_tv_getf(src, base + ss[s]);
        }
        double mu = cnt > 0 ? sum / (double)cnt : 0.0;
        for (int64_t c = g * Cg; c < (g + 1) * Cg; ++c) {
            int64_t base = n * sst[0] + c * sst[cdim];
            for (int64_t s = 0; s < SP; ++s) {
                double x = pt_tv_getf(src, base + ss[s]) - mu;
                sq += x * x;
            }
        }
        double s2 = cnt > 0 ? sq / (double)cnt : 0.0, inv = 1.0 / sqrt(s2 + eps);
        for (int64_t c = g * Cg; c < (g + 1) * Cg; ++c) {
            double gm = gamma ? pt_tv_getf(gamma, flat_off(gamma, c)) : 1.0;
            double bt = beta ? pt_tv_getf(beta, flat_off(beta, c)) : 0.0;
            int64_t base = n * sst[0] + c * sst[cdim], dbase = n * dst_st[0] + c * dst_st[cdim];
            for (int64_t s = 0; s < SP; ++s)
                pt_tv_setf(dst, dbase + dsp[s], (float)(gm * (pt_tv_getf(src, base + ss[s]) - mu) * inv + bt));
        }
        aux_set2(mean, var, ng, mu, s2);
    }
    return dnnl_success;
}

/* Shared setup of the BatchNorm ops: channel axis, per-channel position
 * count M and offset tables over the non-channel axes for up to 3 tensors. */
typedef struct {
    int cdim;
    int64_t C, M;
    int64_t *tab[3];
} bn_setup;

/* Positions per channel of a rank >= 2 tensor (every non-channel axis). */
static int64_t bn_per_channel(const pt_ref_norm_params *p, const pt_lt *src, int *axes, int *naxes, int *cdim) {
    if (chan_layout(p, src, true, cdim, axes, naxes) != dnnl_success) return 0;
    int64_t M = 1;
    for (int i = 0; i < *naxes; ++i) M *= src->dims[axes[i]];
    return M;
}

size_t pt_ref_batch_norm_scratch(const pt_ref_norm_params *p, const pt_lt *src, int ntensors) {
    int axes[DNNL_MAX_NDIMS], naxes = 0, cdim;
    return (size_t)ntensors * pt_scratch_round((size_t)bn_per_channel(p, src, axes, &naxes, &cdim) * sizeof(int64_t));
}

/* Scratch of GroupNorm: offset tables of src and dst over the spatial axes. */
size_t pt_ref_group_norm_scratch(const pt_ref_norm_params *p, const pt_lt *src) {
    int axes[DNNL_MAX_NDIMS], naxes = 0, cdim;
    if (chan_layout(p, src, false, &cdim, axes, &naxes) != dnnl_success) return 0;
    int64_t SP = 1;
    for (int i = 0; i < naxes; ++i) SP *= src->dims[axes[i]];
    return 2 * pt_scratch_round((size_t)SP * sizeof(int64_t));
}

static pt_status bn_prepare(const pt_ref_norm_params *p, const pt_tview *const *ts, int nt, bn_setup *b,
                            const pt_exec_ctx *ctx) {
    const char *nm = p->name;
    int axes[DNNL_MAX_NDIMS], naxes = 0;
    memset(b, 0, sizeof *b);
    PT_CHECK(chan_layout(p, &ts[0]->lt, true, &b->cdim, axes, &naxes));
    for (int i = 1; i < nt; ++i)
        if (!same_shape(ts[0], ts[i])) return pt_err(dnnl_invalid_arguments, "%s: data tensor shapes differ", nm);
    const int64_t *dims = ts[0]->lt.dims;
    b->C = dims[b->cdim];
    b->M = 1;
    for (int i = 0; i < naxes; ++i) b->M *= dims[axes[i]];
    PT_CHECK(pt_ref_need_scratch(nm, ctx, pt_ref_batch_norm_scratch(p, &ts[0]->lt, nt)));
    char *cur = ctx->scratch;
    for (int i = 0; i < nt; ++i) b->tab[i] = axes_table(&cur, dims, ts[i]->lt.layout.strides, axes, naxes, b->M, ctx);
    return dnnl_success;
}

static inline double aux_get(const pt_tview *t, int64_t c, double dflt) {
    return t ? (double)pt_tv_getf(t, flat_off(t, c)) : dflt;
}

PT_REF_DECL(pt_ref_batch_norm_inference) {
    const pt_ref_norm_params *p = params;
    const char *nm = p->name;
    if (nin < 5 || nout < 1) return pt_err(dnnl_invalid_arguments, "%s: needs 5 inputs, 1 output", nm);
    const pt_tview *src = &in[0], *gamma = &in[1], *beta = &in[2], *mean = &in[3], *var = &in[4], *dst = &out[0];
    const pt_tview *data[2] = {src, dst};
    bn_setup b;
    PT_CHECK(bn_prepare(p, data, 2, &b, ctx));
    pt_status st = dnnl_success;
    const char *names[4] = {"gamma", "beta", "mean", "variance"};
    for (int i = 0; i < 4 && st == dnnl_success; ++i) st = need_count(nm, names[i], &in[1 + i], b.C);
    if (st != dnnl_success) return st;
    double eps = p->eps;
    int64_t sc = src->lt.layout.strides[b.cdim], dc = dst->lt.layout.strides[b.cdim];
    int nt_ = pt_ref_threads_for(ctx, b.C * b.M);
#pragma omp parallel for schedule(static) num_threads(nt_) if (nt_ > 1)
    for (int64_t c = 0; c < b.C; ++c) {
        double inv = 1.0 / sqrt(aux_get(var, c, 1.0) + eps);
        double g = aux_get(gamma, c, 1.0), bt = aux_get(beta, c, 0.0), mu = aux_get(mean, c, 0.0);
        for (int64_t i = 0; i < b.M; ++i) {
            double x = pt_tv_getf(src, c * sc + b.tab[0][i]);
            pt_tv_setf(dst, c * dc + b.tab[1][i], (float)(g * (x - mu) * inv + bt));
        }
    }
    return dnnl_success;
}

PT_REF_DECL(pt_ref_batch_norm_fwd_training) {
    const pt_ref_norm_params *p = params;
    const char *nm = p->name;
    if (nin < 3 || nout < 1) return pt_err(dnnl_invalid_arguments, "%s: needs 3 or 5 inputs, 5 outputs", nm);
    const pt_tview *src = &in[0], *mean = &in[1], *var = &in[2], *dst = &out[0];
    const pt_tview *gamma = nin > 3 ? &in[3] : NULL, *beta = nin > 4 ? &in[4] : NULL;
    const pt_tview *rmean = nout > 1 ? &out[1] : NULL, *rvar = nout > 2 ? &out[2] : NULL;
    const pt_tview *bmean = nout > 3 ? &out[3] : NULL, *bvar = nout > 4 ? &out[4] : NULL;
    const pt_tview *data[2] = {src, dst};
    bn_setup b;
    PT_CHECK(bn_prepare(p, data, 2, &b, ctx));
    const pt_tview *aux[8] = {mean, var, gamma, beta, rmean, rvar, bmean, bvar};
    const char *names[8] = {"mean", "variance", "gamma", "beta", "running_mean", "running_variance",
                            "batch_mean", "batch_variance"};
    pt_status st = dnnl_success;
    for (int i = 0; i < 8 && st == dnnl_success; ++i)
        if (aux[i]) st = need_count(nm, names[i], aux[i], b.C);
    if (st != dnnl_success) return st;
    double eps = p->eps;
    double m = p->momentum;
    int64_t sc = src->lt.layout.strides[b.cdim], dc = dst->lt.layout.strides[b.cdim];
    int nt_ = pt_ref_threads_for(ctx, b.C * b.M * 3);
#pragma omp parallel for schedule(static) num_threads(nt_) if (nt_ > 1)
    for (int64_t c = 0; c < b.C; ++c) {
        double sum = 0.0, sq = 0.0;
        for (int64_t i = 0; i < b.M; ++i) sum += pt_tv_getf(src, c * sc + b.tab[0][i]);
        double mu = b.M > 0 ? sum / (double)b.M : 0.0;
        for (int64_t i = 0; i < b.M; ++i) {
            double x = pt_tv_getf(src, c * sc + b.tab[0][i]) - mu;
            sq += x * x;
        }
        double s2 = b.M > 0 ? sq / (double)b.M : 0.0, inv = 1.0 / sqrt(s2 + eps);
        double g = aux_get(gamma, c, 1.0), bt = aux_get(beta, c, 0.0);
        /* Previous running statistics are read before any output is written
         * (the running outputs may share buffers with them). */
        double old_mean = aux_get(mean, c, 0.0), old_var = aux_get(var, c, 0.0);
        for (int64_t i = 0; i < b.M; ++i) {
            double x = pt_tv_getf(src, c * sc + b.tab[0][i]);
            pt_tv_setf(dst, c * dc + b.tab[1][i], (float)(g * (x - mu) * inv + bt));
        }
        aux_set2(rmean, rvar, c, m * old_mean + (1.0 - m) * mu, m * old_var + (1.0 - m) * s2);
        aux_set2(bmean, bvar, c, mu, s2);
    }
    return dnnl_success;
}

PT_REF_DECL(pt_ref_batch_norm_bwd) {
    const pt_ref_norm_params *p = params;
    const char *nm = p->name;
    if (nin < 4 || nout < 1) return pt_err(dnnl_invalid_arguments, "%s: needs 4-5 inputs, 1 or 3 outputs", nm);
    const pt_tview *src = &in[0], *dd = &in[1], *mean = &in[2], *var = &in[3], *ds = &out[0];
    const pt_tview *gamma = nin > 4 ? &in[4] : NULL;
    const pt_tview *dg = nout > 1 ? &out[1] : NULL, *db = nout > 2 ? &out[2] : NULL;
    const pt_tview *data[3] = {src, dd, ds};
    bn_setup b;
    PT_CHECK(bn_prepare(p, data, 3, &b, ctx));
    const pt_tview *aux[5] = {mean, var, gamma, dg, db};
    const char *names[5] = {"mean", "variance", "gamma", "diff_gamma", "diff_beta"};
    pt_status st = dnnl_success;
    for (int i = 0; i < 5 && st == dnnl_success; ++i)
        if (aux[i]) st = need_count(nm, names[i], aux[i], b.C);
    if (st != dnnl_success) return st;
    double eps = p->eps;
    bool full = nout > 1; /* with scale/shift gradients: full formula; else stats are constants */
    int64_t sc = src->lt.layout.strides[b.cdim], ddc = dd->lt.layout.strides[b.cdim];
    int64_t dsc = ds->lt.layout.strides[b.cdim];
    double Md = (double)b.M;
    int nt_ = pt_ref_threads_for(ctx, b.C * b.M * 3);
#pragma omp parallel for schedule(static) num_threads(nt_) if (nt_ > 1)
    for (int64_t c = 0; c < b.C; ++c) {
        double mu = aux_get(mean, c, 0.0), inv = 1.0 / sqrt(aux_get(var, c, 1.0) + eps);
        if (!full) {
            for (int64_t i = 0; i < b.M; ++i)
                pt_tv_setf(ds, c * dsc + b.tab[2][i], (float)(pt_tv_getf(dd, c * ddc + b.tab[1][i]) * inv));
            continue;
        }
        double sb = 0.0, sg = 0.0;
        for (int64_t i = 0; i < b.M; ++i) {
            double d = pt_tv_getf(dd, c * ddc + b.tab[1][i]);
            double xh = (pt_tv_getf(src, c * sc + b.tab[0][i]) - mu) * inv;
            sb += d;
            sg += d * xh;
        }
        double g = aux_get(gamma, c, 1.0);
        for (int64_t i = 0; i < b.M; ++i) {
            double d = pt_tv_getf(dd, c * ddc + b.tab[1][i]);
            double xh = (pt_tv_getf(src, c * sc + b.tab[0][i]) - mu) * inv;
            double v = b.M > 0 ? g * inv * (d - sb / Md - xh * sg / Md) : 0.0;
            pt_tv_setf(ds, c * dsc + b.tab[2][i], (float)v);
        }
        aux_set2(dg, db, c, sg, sb);
    }
    return dnnl_success;
}
