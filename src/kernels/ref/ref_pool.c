/* Reference pooling (docs/ops.md: AvgPool, AvgPoolBackward, MaxPool,
 * MaxPoolBackward).  Tensors are addressed through a canonical 5-D view
 * [N, C, D, H, W] (missing leading spatial dims have extent 1), which covers
 * NCX / NXC and arbitrary strides; 1-3 spatial dims. */
#include <float.h>
#include <string.h>

#include "ir/status.h"
#include "kernels/ref/ref_common.h"
#include "kernels/ref/ref_kernels.h"

typedef pt_v5 pv5;
typedef pt_ref_pool_params pool_attrs;

static void pv5_make(const pt_tview *t, bool nxc, pv5 *v) { pt_v5_data(&t->lt, nxc, v); }

static pt_status pool_check_nc(const pool_attrs *a, const pt_tview *x, const pt_tview *y, const pv5 *vx,
                               const pv5 *vy) {
    if (x->lt.ndims != y->lt.ndims || vx->d[0] != vy->d[0] || vx->d[1] != vy->d[1])
        return pt_err(dnnl_invalid_arguments, "%s: src/dst batch or channel mismatch", a->name);
    return dnnl_success;
}

/* Number of window taps of output `o` along `slot` that fall inside [0, I). */
static int64_t avg_valid_taps(const pool_attrs *a, int slot, int64_t o, int64_t I) {
    int64_t b = o * a->S[slot] - a->P[slot];
    int64_t lo = b < 0 ? 0 : b, hi = b + a->K[slot];
    if (hi > I) hi = I;
    return hi > lo ? hi - lo : 0;
}

size_t pt_ref_avg_pool_scratch(const pt_ref_pool_params *p, const pt_lt *out) {
    pv5 v;
    pt_v5_data(out, p->nxc, &v);
    return pt_scratch_round((size_t)(v.d[2] + v.d[3] + v.d[4]) * sizeof(int64_t));
}

/* Per-slot tables of valid-tap counts for each output position, in scratch
 * (`out` is the output view, of tensor `tout`). */
static pt_status avg_count_tables(const pool_attrs *a, const pv5 *in, const pt_tview *tout, const pv5 *outv,
                                  const pt_exec_ctx *ctx, int64_t *tab[3]) {
    PT_CHECK(pt_ref_need_scratch(a->name, ctx, pt_ref_avg_pool_scratch(a, &tout->lt)));
    int64_t *p = ctx->scratch;
    for (int slot = 0; slot < 3; ++slot) {
        tab[slot] = p;
        for (int64_t o = 0; o < outv->d[2 + slot]; ++o) p[o] = avg_valid_taps(a, slot, o, in->d[2 + slot]);
        p += outv->d[2 + slot];
    }
    return dnnl_success;
}

/* AvgPool divisor for output position (z, y, x): |V| or the full kernel volume. */
static inline int64_t avg_den(const pool_attrs *a, int64_t *const tab[3], int64_t z, int64_t y, int64_t x) {
    if (!a->exclude) return a->K[0] * a->K[1] * a->K[2];
    return tab[0][z] * tab[1][y] * tab[2][x];
}

/* Port count, equal ranks, canonical views of in[0] / out[0] and their batch
 * and channel extents. */
static pt_status pool_views(const pool_attrs *a, const char *need, size_t min_in, const pt_tview *in, size_t nin,
                            const pt_tview *out, size_t nout, pv5 *vi, pv5 *vo) {
    if (nin < min_in || nout < 1) return pt_err(dnnl_invalid_arguments, "%s: needs %s", a->name, need);
    PT_CHECK(pt_ref_same_rank(a->name, &in[0], &out[0], min_in > 1 ? &in[1] : NULL));
    pv5_make(&in[0], a->nxc, vi);
    pv5_make(&out[0], a->nxc, vo);
    return dnnl_success;
}

/* AvgPool and its backward: views of in[0] / out[0] (vi / vo), batch and
 * channel check between the input-side data (forward src, backward
 * diff_src) and the output side, valid-tap tables over the output positions
 * (forward dst, backward diff_dst); the thread count for the main loop. */
static pt_status avg_prepare(const pool_attrs *a, bool fwd, const pt_tview *in, size_t nin, const pt_tview *out,
                             size_t nout, pv5 *vi, pv5 *vo, const pt_exec_ctx *ctx, int64_t *tab[3], int *nt) {
    PT_CHECK(pool_views(a, fwd ? "1 input, 1 output" : "1-2 inputs, 1 output", 1, in, nin, out, nout, vi, vo));
    const pt_tview *x = fwd ? &in[0] : &out[0], *y = fwd ? &out[0] : &in[0];
    const pv5 *vx = fwd ? vi : vo, *vy = fwd ? vo : vi;
    PT_CHECK(pool_check_nc(a, x, y, vx, vy));
    *nt = pt_ref_threads_for(ctx, pt_v5_count(vo) * a->K[0] * a->K[1] * a->K[2]);
    return avg_count_tables(a, vx, y, vy, ctx, tab);
}

PT_REF_DECL(pt_ref_avg_pool) {
    const pool_attrs *pa = params, a = *pa;
    pv5 vs, vd;
    int64_t *tab[3];
    int nt;
    PT_CHECK(avg_prepare(&a, true, in, nin, out, nout, &vs, &vd, ctx, tab, &nt));
    const pt_tview *src = &in[0], *dst = &out[0];
    int64_t total = pt_v5_count(&vd);
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
    for (int64_t lin = 0; lin < total; ++lin) {
        int64_t q[5];
        pt_pos5(vd.d, lin, q);
        const int64_t n = q[0], c = q[1], od = q[2], oh = q[3], ow = q[4];
        double sum = 0.0;
        for (int64_t kd = 0; kd < a.K[0]; ++kd) {
            int64_t id = od * a.S[0] - a.P[0] + kd;
            if (id < 0 || id >= vs.d[2]) continue;
            for (int64_t kh = 0; kh < a.K[1]; ++kh) {
                int64_t ih = oh * a.S[1] - a.P[1] + kh;
                if (ih < 0 || ih >= vs.d[3]) continue;
                for (int64_t kw = 0; kw < a.K[2]; ++kw) {
                    int64_t iw = ow * a.S[2] - a.P[2] + kw;
                    if (iw < 0 || iw >= vs.d[4]) continue;
                    sum += pt_tv_getf(src, pt_v5_off(&vs, n, c, id, ih, iw));
                }
            }
        }
        int64_t den = avg_den(&a, tab, od, oh, ow);
        pt_tv_setf(dst, pt_v5_off(&vd, n, c, od, oh, ow), den > 0 ? (float)(sum / (double)den) : 0.0f);
    }
    return dnnl_success;
}

/* Range [lo, hi) of outputs along `slot` whose window (dilated taps) can
 * contain input position i; caller still checks tap alignment. */
static void out_range(const pool_attrs *a, int slot, int64_t i, int64_t O, int64_t *lo, int64_t *hi) {
    int64_t ext = (a->K[slot] - 1) * a->Dl[slot]; /* window spans [b, b + ext] */
    int64_t num_lo = i + a->P[slot] - ext;        /* o * S >= num_lo */
    int64_t l = num_lo <= 0 ? 0 : (num_lo + a->S[slot] - 1) / a->S[slot];
    int64_t num_hi = i + a->P[slot]; /* o * S <= num_hi */
    int64_t h = num_hi < 0 ? -1 : num_hi / a->S[slot];
    *lo = l;
    *hi = h + 1 < O ? h + 1 : O;
}

PT_REF_DECL(pt_ref_avg_pool_bwd) {
    const pool_attrs *pa = params, a = *pa;
    pv5 vdd, vds;
    int64_t *tab[3];
    int nt;
    PT_CHECK(avg_prepare(&a, false, in, nin, out, nout, &vdd, &vds, ctx, tab, &nt));
    const pt_tview *dd = &in[0], *ds = &out[0];
    int64_t total = pt_v5_count(&vds);
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
    for (int64_t lin = 0; lin < total; ++lin) {
        int64_t q[5];
        pt_pos5(vds.d, lin, q);
        const int64_t n = q[0], c = q[1], id = q[2], ih = q[3], iw = q[4];
        int64_t lo[3], hi[3];
        out_range(&a, 0, id, vdd.d[2], &lo[0], &hi[0]);
        out_range(&a, 1, ih, vdd.d[3], &lo[1], &hi[1]);
        out_range(&a, 2, iw, vdd.d[4], &lo[2], &hi[2]);
        double sum = 0.0;
        for (int64_t od = lo[0]; od < hi[0]; ++od)
            for (int64_t oh = lo[1]; oh < hi[1]; ++oh)
                for (int64_t ow = lo[2]; ow < hi[2]; ++ow) {
                    int64_t den = avg_den(&a, tab, od, oh, ow);
                    if (den > 0) sum += pt_tv_getf(dd, pt_v5_off(&vdd, n, c, od, oh, ow)) / (double)den;
                }
        pt_tv_setf(ds, pt_v5_off(&vds, n, c, id, ih, iw), (float)sum);
    }
    return dnnl_success;
}

/* Lowest finite value of a floating type (MaxPool with no valid tap). */
static float lowest_of(dnnl_data_type_t dt) {
    switch (dt) {
        case dnnl_bf16: return pt_bf16_to_f32(0xff7fu);
        case dnnl_f16: return -65504.0f;
        default: return -FLT_MAX;
    }
}

/* Arg-max tap of the window of output (od, oh, ow) in plane (n, c): scans in
 * row-major kernel order, replacing only on strictly greater values (ties ->
 * first).  Returns false when no tap is inside the input. */
static bool max_window(const pool_attrs *a, const pt_tview *src, const pv5 *vs, int64_t n, int64_t c, int64_t od,
                       int64_t oh, int64_t ow, float *best, int64_t pos[3]) {
    bool found = false;
    for (int64_t kd = 0; kd < a->K[0]; ++kd) {
        int64_t id = od * a->S[0] - a->P[0] + kd * a->Dl[0];
        if (id < 0 || id >= vs->d[2]) continue;
        for (int64_t kh = 0; kh < a->K[1]; ++kh) {
            int64_t ih = oh * a->S[1] - a->P[1] + kh * a->Dl[1];
            if (ih < 0 || ih >= vs->d[3]) continue;
            for (int64_t kw = 0; kw < a->K[2]; ++kw) {
                int64_t iw = ow * a->S[2] - a->P[2] + kw * a->Dl[2];
                if (iw < 0 || iw >= vs->d[4]) continue;
                float v = pt_tv_getf(src, pt_v5_off(vs, n, c, id, ih, iw));
                if (!found || v > *best) {
                    *best = v;
                    pos[0] = id, pos[1] = ih, pos[2] = iw;
                    found = true;
                }
            }
        }
    }
    return found;
}

PT_REF_DECL(pt_ref_max_pool) {
    const pool_attrs *pa = params, a = *pa;
    pv5 vs, vd;
    PT_CHECK(pool_views(&a, "1 input, 1 output", 1, in, nin, out, nout, &vs, &vd));
    PT_CHECK(pool_check_nc(&a, &in[0], &out[0], &vs, &vd));
    const pt_tview *src = &in[0], *dst = &out[0];
    float lowest = lowest_of(dst->lt.data_type);
    int64_t total = pt_v5_count(&vd);
    int nt = pt_ref_threads_for(ctx, total * a.K[0] * a.K[1] * a.K[2]);
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
    for (int64_t lin = 0; lin < total; ++lin) {
        int64_t q[5];
        pt_pos5(vd.d, lin, q);
        const int64_t n = q[0], c = q[1], od = q[2], oh = q[3], ow = q[4];
        float best = lowest; /* kept when no tap is inside the input */
        int64_t pos[3];
        max_window(&a, src, &vs, n, c, od, oh, ow, &best, pos);
        pt_tv_setf(dst, pt_v5_off(&vd, n, c, od, oh, ow), best);
    }
    return dnnl_success;
}

size_t pt_ref_max_pool_bwd_scratch(const pt_lt *src) { return pt_scratch_round(pt_lt_count(src) * sizeof(float)); }

/* What the backward scatter reads for one diff_dst element. */
typedef struct {
    const pool_attrs *a;
    const pt_tview *src, *dd;
    const pv5 *vs, *vdd;
} max_scatter;

/* Adds diff_dst (n, c, od, oh, ow) onto the arg-max tap of its window. */
static void max_scatter_one(const void *arg, float *ap, int64_t n, int64_t c, int64_t od, int64_t oh, int64_t ow) {
    const max_scatter *s = arg;
    float best = 0.0f;
    int64_t pos[3];
    if (!max_window(s->a, s->src, s->vs, n, c, od, oh, ow, &best, pos)) return;
    ap[(pos[0] * s->vs->d[3] + pos[1]) * s->vs->d[4] + pos[2]] += pt_tv_getf(s->dd, pt_v5_off(s->vdd, n, c, od, oh, ow));
}

PT_REF_DECL(pt_ref_max_pool_bwd) {
    const pool_attrs *pa = params, a = *pa;
    pv5 vs, vdd, vds;
    PT_CHECK(pool_views(&a, "2 inputs, 1 output", 2, in, nin, out, nout, &vs, &vds));
    pv5_make(&in[1], a.nxc, &vdd);
    PT_CHECK(pool_check_nc(&a, &in[0], &in[1], &vs, &vdd));
    for (int i = 0; i < 5; ++i)
        if (vs.d[i] != vds.d[i]) return pt_err(dnnl_invalid_arguments, "MaxPoolBackward: diff_src shape != src shape");
    if (pt_v5_count(&vs) == 0) return dnnl_success;
    /* Scatter into a dense canonical accumulator. */
    PT_CHECK(pt_ref_need_scratch(a.name, ctx, pt_ref_max_pool_bwd_scratch(&in[0].lt)));
    const max_scatter s = {.a = &a, .src = &in[0], .dd = &in[1], .vs = &vs, .vdd = &vdd};
    int nt = pt_ref_threads_for(ctx, pt_v5_count(&vdd) * a.K[0] * a.K[1] * a.K[2]);
    pt_v5_scatter(&out[0], &vds, &vdd, ctx->scratch, nt, max_scatter_one, &s, ctx);
    return dnnl_success;
}
