/* Reference pooling (opset.md AvgPool, AvgPoolBackward, MaxPool,
 * MaxPoolBackward).  Tensors are addressed through a canonical 5-D view
 * [N, C, D, H, W] (missing leading spatial dims have extent 1), which covers
 * NCX / NXC and arbitrary strides; 1-3 spatial dims. */
#include <float.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "ir/status.h"
#include "kernels/ref/ref_common.h"
#include "kernels/ref/ref_kernels.h"
#include "ops/spatial_utils.h"

typedef struct {
    int64_t d[5]; /* extents N, C, D, H, W */
    int64_t s[5]; /* strides in the tensor (0 for inserted dims) */
} pv5;

typedef struct {
    const char *name;
    bool nxc;
    int k;
    int64_t S[3], K[3], Dl[3], P[3]; /* per canonical slot (D, H, W) */
    int64_t kernel[3], strides[3], dils[3], pb[3], pe[3]; /* per attribute entry */
    const char *auto_pad;
} pool_attrs;

/* Threads for a loop of about `work` scalar operations: the context's
 * budget, or 1 where a parallel region would cost more than it saves. */
static int pool_threads(const pt_exec_ctx *ctx, int64_t work) {
    if (work < 32768) return 1;
    return ctx && ctx->nthreads > 0 ? ctx->nthreads : omp_get_max_threads();
}

/* Every tensor of an op must share the rank of the first one. */
static pt_status pool_same_rank(const char *name, const pt_tview *a, const pt_tview *b, const pt_tview *c) {
    if (b->lt.ndims != a->lt.ndims || (c && c->lt.ndims != a->lt.ndims))
        return pt_err(dnnl_invalid_arguments, "%s: tensor ranks differ", name);
    return dnnl_success;
}

static void pv5_make(const pt_tview *t, bool nxc, pv5 *v) {
    const int64_t *d = t->lt.dims, *s = t->lt.layout.strides;
    int r = t->lt.ndims, k = r - 2, cdim = nxc ? r - 1 : 1;
    v->d[0] = d[0], v->s[0] = s[0];
    v->d[1] = d[cdim], v->s[1] = s[cdim];
    for (int slot = 0; slot < 3; ++slot) {
        int j = slot - (3 - k);
        int ax = nxc ? 1 + j : 2 + j;
        v->d[2 + slot] = j >= 0 ? d[ax] : 1;
        v->s[2 + slot] = j >= 0 ? s[ax] : 0;
    }
}

static int64_t pv5_count(const pv5 *v) { return v->d[0] * v->d[1] * v->d[2] * v->d[3] * v->d[4]; }

static inline int64_t pv5_off(const pv5 *v, int64_t n, int64_t c, int64_t z, int64_t y, int64_t x) {
    return n * v->s[0] + c * v->s[1] + z * v->s[2] + y * v->s[3] + x * v->s[4];
}

static pt_status pool_list(const pt_op *op, int attr, int k, int64_t dflt, int64_t minv, const char *what,
                           const char *opname, int64_t *outv) {
    size_t n = 0;
    const int64_t *v = pt_op_s64s(op, attr, &n);
    if (!v || n == 0) {
        for (int j = 0; j < k; ++j) outv[j] = dflt;
        return dnnl_success;
    }
    if ((int)n != k)
        return pt_err(dnnl_invalid_arguments, "%s: %s has %zu entries, expected %d", opname, what, n, k);
    for (int j = 0; j < k; ++j) {
        if (v[j] < minv)
            return pt_err(dnnl_invalid_arguments, "%s: %s[%d] = %lld out of range", opname, what, j, (long long)v[j]);
        outv[j] = v[j];
    }
    return dnnl_success;
}

/* Reads the attributes; `data` is the tensor whose spatial extents drive
 * auto_pad (forward src, or diff_src for the backward ops). */
static pt_status pool_read(const pt_op *op, const char *name, const pt_tview *data, bool dilated, pool_attrs *a) {
    memset(a, 0, sizeof *a);
    a->name = name;
    int r = data->lt.ndims;
    if (r < 3 || r > 5) return pt_err(dnnl_unimplemented, "%s: rank %d not in [3, 5]", name, r);
    a->k = r - 2;
    const char *df = pt_op_str(op, dnnl_graph_op_attr_data_format, "NXC");
    if (strcmp(df, "NXC") == 0) a->nxc = true;
    else if (strcmp(df, "NCX") == 0) a->nxc = false;
    else return pt_err(dnnl_invalid_arguments, "%s: bad data_format '%s'", name, df);
    size_t nk = 0;
    if (!pt_op_s64s(op, dnnl_graph_op_attr_kernel, &nk) || nk == 0)
        return pt_err(dnnl_invalid_arguments, "%s: kernel attribute missing", name);
    PT_CHECK(pool_list(op, dnnl_graph_op_attr_kernel, a->k, 1, 1, "kernel", name, a->kernel));
    PT_CHECK(pool_list(op, dnnl_graph_op_attr_strides, a->k, 1, 1, "strides", name, a->strides));
    PT_CHECK(pool_list(op, dnnl_graph_op_attr_pads_begin, a->k, 0, 0, "pads_begin", name, a->pb));
    PT_CHECK(pool_list(op, dnnl_graph_op_attr_pads_end, a->k, 0, 0, "pads_end", name, a->pe));
    if (dilated) PT_CHECK(pool_list(op, dnnl_graph_op_attr_dilations, a->k, 1, 1, "dilations", name, a->dils));
    else
        for (int j = 0; j < a->k; ++j) a->dils[j] = 1;
    a->auto_pad = pt_op_str(op, dnnl_graph_op_attr_auto_pad, "None");

    pv5 v;
    pv5_make(data, a->nxc, &v);
    for (int slot = 0; slot < 3; ++slot) {
        int j = slot - (3 - a->k);
        if (j < 0) {
            a->S[slot] = 1, a->K[slot] = 1, a->Dl[slot] = 1, a->P[slot] = 0;
            continue;
        }
        int64_t pb = a->pb[j], pe = a->pe[j];
        pt_resolve_pad(a->auto_pad, false, v.d[2 + slot], a->kernel[j], a->strides[j], a->dils[j], a->pb[j],
                       a->pe[j], &pb, &pe);
        a->S[slot] = a->strides[j], a->K[slot] = a->kernel[j], a->Dl[slot] = a->dils[j], a->P[slot] = pb;
    }
    return dnnl_success;
}

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

/* Per-slot tables of valid-tap counts for each output position. */
static int64_t *avg_count_tables(const pool_attrs *a, const pv5 *in, const pv5 *outv, int64_t *tab[3]) {
    int64_t total = outv->d[2] + outv->d[3] + outv->d[4];
    int64_t *buf = malloc((size_t)(total > 0 ? total : 1) * sizeof(int64_t));
    if (!buf) return NULL;
    int64_t *p = buf;
    for (int slot = 0; slot < 3; ++slot) {
        tab[slot] = p;
        for (int64_t o = 0; o < outv->d[2 + slot]; ++o) p[o] = avg_valid_taps(a, slot, o, in->d[2 + slot]);
        p += outv->d[2 + slot];
    }
    return buf;
}

/* AvgPool divisor for output position (z, y, x): |V| or the full kernel volume. */
static inline int64_t avg_den(const pool_attrs *a, bool exclude, int64_t *const tab[3], int64_t z, int64_t y,
                              int64_t x) {
    if (!exclude) return a->K[0] * a->K[1] * a->K[2];
    return tab[0][z] * tab[1][y] * tab[2][x];
}

static bool avg_exclude_mode(const pt_op *op, bool with_rounding) {
    bool exclude = pt_op_bool(op, dnnl_graph_op_attr_exclude_pad, false);
    /* Ceil rounding switches to the exclude-padding divisor (opset AvgPool). */
    if (with_rounding && strcmp(pt_op_str(op, dnnl_graph_op_attr_rounding_type, "floor"), "ceil") == 0)
        exclude = true;
    return exclude;
}

PT_REF_OP_KERNEL(pt_ref_avg_pool) {
    if (nin < 1 || nout < 1) return pt_err(dnnl_invalid_arguments, "AvgPool: needs 1 input, 1 output");
    pool_attrs a;
    PT_CHECK(pool_read(op, "AvgPool", &in[0], false, &a));
    PT_CHECK(pool_same_rank("AvgPool", &in[0], &out[0], NULL));
    pv5 vs, vd;
    pv5_make(&in[0], a.nxc, &vs);
    pv5_make(&out[0], a.nxc, &vd);
    PT_CHECK(pool_check_nc(&a, &in[0], &out[0], &vs, &vd));
    bool exclude = avg_exclude_mode(op, true);
    int64_t *tab[3];
    int64_t *tbuf = avg_count_tables(&a, &vs, &vd, tab);
    if (!tbuf) return pt_err(dnnl_out_of_memory, "AvgPool: scratch allocation failed");
    const pt_tview *src = &in[0], *dst = &out[0];
    int64_t OD = vd.d[2], OH = vd.d[3], OW = vd.d[4], C = vd.d[1];
    int64_t total = pv5_count(&vd);
    int nt = pool_threads(ctx, total * a.K[0] * a.K[1] * a.K[2]);
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
    for (int64_t lin = 0; lin < total; ++lin) {
        int64_t ow = lin % OW, oh = (lin / OW) % OH, od = (lin / (OW * OH)) % OD;
        int64_t c = (lin / (OW * OH * OD)) % C, n = lin / (OW * OH * OD * C);
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
                    sum += pt_tv_getf(src, pv5_off(&vs, n, c, id, ih, iw));
                }
            }
        }
        int64_t den = avg_den(&a, exclude, tab, od, oh, ow);
        pt_tv_setf(dst, pv5_off(&vd, n, c, od, oh, ow), den > 0 ? (float)(sum / (double)den) : 0.0f);
    }
    free(tbuf);
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

PT_REF_OP_KERNEL(pt_ref_avg_pool_bwd) {
    if (nin < 1 || nout < 1) return pt_err(dnnl_invalid_arguments, "AvgPoolBackward: needs 1-2 inputs, 1 output");
    pool_attrs a;
    PT_CHECK(pool_read(op, "AvgPoolBackward", &out[0], false, &a));
    PT_CHECK(pool_same_rank("AvgPoolBackward", &out[0], &in[0], NULL));
    pv5 vdd, vds;
    pv5_make(&in[0], a.nxc, &vdd);
    pv5_make(&out[0], a.nxc, &vds);
    PT_CHECK(pool_check_nc(&a, &out[0], &in[0], &vds, &vdd));
    bool exclude = avg_exclude_mode(op, false);
    int64_t *tab[3];
    int64_t *tbuf = avg_count_tables(&a, &vds, &vdd, tab);
    if (!tbuf) return pt_err(dnnl_out_of_memory, "AvgPoolBackward: scratch allocation failed");
    const pt_tview *dd = &in[0], *ds = &out[0];
    int64_t ID = vds.d[2], IH = vds.d[3], IW = vds.d[4], C = vds.d[1];
    int64_t total = pv5_count(&vds);
    int nt = pool_threads(ctx, total * a.K[0] * a.K[1] * a.K[2]);
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
    for (int64_t lin = 0; lin < total; ++lin) {
        int64_t iw = lin % IW, ih = (lin / IW) % IH, id = (lin / (IW * IH)) % ID;
        int64_t c = (lin / (IW * IH * ID)) % C, n = lin / (IW * IH * ID * C);
        int64_t lo[3], hi[3];
        out_range(&a, 0, id, vdd.d[2], &lo[0], &hi[0]);
        out_range(&a, 1, ih, vdd.d[3], &lo[1], &hi[1]);
        out_range(&a, 2, iw, vdd.d[4], &lo[2], &hi[2]);
        double sum = 0.0;
        for (int64_t od = lo[0]; od < hi[0]; ++od)
            for (int64_t oh = lo[1]; oh < hi[1]; ++oh)
                for (int64_t ow = lo[2]; ow < hi[2]; ++ow) {
                    int64_t den = avg_den(&a, exclude, tab, od, oh, ow);
                    if (den > 0) sum += pt_tv_getf(dd, pv5_off(&vdd, n, c, od, oh, ow)) / (double)den;
                }
        pt_tv_setf(ds, pv5_off(&vds, n, c, id, ih, iw), (float)sum);
    }
    free(tbuf);
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
                float v = pt_tv_getf(src, pv5_off(vs, n, c, id, ih, iw));
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

PT_REF_OP_KERNEL(pt_ref_max_pool) {
    if (nin < 1 || nout < 1) return pt_err(dnnl_invalid_arguments, "MaxPool: needs 1 input, 1 output");
    pool_attrs a;
    PT_CHECK(pool_read(op, "MaxPool", &in[0], true, &a));
    PT_CHECK(pool_same_rank("MaxPool", &in[0], &out[0], NULL));
    pv5 vs, vd;
    pv5_make(&in[0], a.nxc, &vs);
    pv5_make(&out[0], a.nxc, &vd);
    PT_CHECK(pool_check_nc(&a, &in[0], &out[0], &vs, &vd));
    const pt_tview *src = &in[0], *dst = &out[0];
    float lowest = lowest_of(dst->lt.data_type);
    int64_t OD = vd.d[2], OH = vd.d[3], OW = vd.d[4], C = vd.d[1];
    int64_t total = pv5_count(&vd);
    int nt = pool_threads(ctx, total * a.K[0] * a.K[1] * a.K[2]);
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
    for (int64_t lin = 0; lin < total; ++lin) {
        int64_t ow = lin % OW, oh = (lin / OW) % OH, od = (lin / (OW * OH)) % OD;
        int64_t c = (lin / (OW * OH * OD)) % C, n = lin / (OW * OH * OD * C);
        float best = lowest; /* kept when no tap is inside the input */
        int64_t pos[3];
        max_window(&a, src, &vs, n, c, od, oh, ow, &best, pos);
        pt_tv_setf(dst, pv5_off(&vd, n, c, od, oh, ow), best);
    }
    return dnnl_success;
}

PT_REF_OP_KERNEL(pt_ref_max_pool_bwd) {
    if (nin < 2 || nout < 1) return pt_err(dnnl_invalid_arguments, "MaxPoolBackward: needs 2 inputs, 1 output");
    pool_attrs a;
    PT_CHECK(pool_read(op, "MaxPoolBackward", &out[0], true, &a));
    PT_CHECK(pool_same_rank("MaxPoolBackward", &out[0], &in[0], &in[1]));
    pv5 vs, vdd, vds;
    pv5_make(&in[0], a.nxc, &vs);
    pv5_make(&in[1], a.nxc, &vdd);
    pv5_make(&out[0], a.nxc, &vds);
    PT_CHECK(pool_check_nc(&a, &in[0], &in[1], &vs, &vdd));
    for (int i = 0; i < 5; ++i)
        if (vs.d[i] != vds.d[i]) return pt_err(dnnl_invalid_arguments, "MaxPoolBackward: diff_src shape != src shape");
    const pt_tview *src = &in[0], *dd = &in[1], *ds = &out[0];
    int64_t plane = vs.d[2] * vs.d[3] * vs.d[4], nplanes = vs.d[0] * vs.d[1];
    int64_t total = plane * nplanes;
    if (total == 0) return dnnl_success;
    /* Scatter into a dense canonical accumulator; planes are independent. */
    float *acc = calloc((size_t)total, sizeof(float));
    if (!acc) return pt_err(dnnl_out_of_memory, "MaxPoolBackward: scratch allocation failed");
    int64_t C = vs.d[1];
    int nt = pool_threads(ctx, pv5_count(&vdd) * a.K[0] * a.K[1] * a.K[2]);
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
    for (int64_t p = 0; p < nplanes; ++p) {
        int64_t n = p / C, c = p % C;
        float *ap = acc + p * plane;
        for (int64_t od = 0; od < vdd.d[2]; ++od)
            for (int64_t oh = 0; oh < vdd.d[3]; ++oh)
                for (int64_t ow = 0; ow < vdd.d[4]; ++ow) {
                    float best = 0.0f;
                    int64_t pos[3];
                    if (!max_window(&a, src, &vs, n, c, od, oh, ow, &best, pos)) continue;
                    ap[(pos[0] * vs.d[3] + pos[1]) * vs.d[4] + pos[2]] +=
                            pt_tv_getf(dd, pv5_off(&vdd, n, c, od, oh, ow));
                }
    }
    int nt2 = pool_threads(ctx, total);
#pragma omp parallel for schedule(static) num_threads(nt2) if (nt2 > 1)
    for (int64_t lin = 0; lin < total; ++lin) {
        int64_t iw = lin % vs.d[4], ih = (lin / vs.d[4]) % vs.d[3], id = (lin / (vs.d[4] * vs.d[3])) % vs.d[2];
        int64_t p = lin / plane;
        pt_tv_setf(ds, pv5_off(&vds, p / C, p % C, id, ih, iw), acc[lin]);
    }
    free(acc);
    return dnnl_success;
}
