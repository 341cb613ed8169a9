/* Reference Interpolate / InterpolateBackward (docs/ops.md).
 * Output extents come from the dst (diff_dst) tensor itself: the coordinate
 * ratio always uses the actual extents, so the sizes/scales attributes and
 * the optional sizes input need not be read here.  Tensors are addressed
 * through a canonical 5-D view [N, C, D, H, W]; missing leading spatial dims
 * have extent 1 and take a single tap. */
#include <math.h>
#include <string.h>

#include "ir/status.h"
#include "kernels/ref/ref_common.h"
#include "kernels/ref/ref_kernels.h"

typedef pt_v5 iv5;
typedef pt_ref_interp_params interp_attrs;

/* Per output position along one spatial slot: the two source taps and the
 * weight of the left tap.  Nearest mode uses only tap 0. */
typedef struct {
    int64_t i0, i1;
    float wl;
} interp_tap;

/* Source coordinate of output index o (f32, evaluation order per the spec). */
static float interp_coord(const interp_attrs *a, int64_t o, int64_t I, int64_t O) {
    if (a->align_corners) return O == 1 ? 0.0f : (float)o * (float)(I - 1) / (float)(O - 1);
    return ((float)o + 0.5f) * (float)I / (float)O - 0.5f;
}

static interp_tap interp_tap_of(const interp_attrs *a, int64_t o, int64_t I, int64_t O) {
    interp_tap t;
    float c = interp_coord(a, o, I, O);
    if (a->mode == PT_INTERP_NEAREST) {
        int64_t i = (int64_t)roundf(c);
        if (i < 0) i = 0;
        if (i > I - 1) i = I - 1;
        t.i0 = t.i1 = i;
        t.wl = 1.0f;
        return t;
    }
    float tc = truncf(c);
    int64_t left = (int64_t)tc;
    if (left < 0) left = 0;
    int64_t right = c < 0.0f ? 0 : (tc == c ? (int64_t)c : (int64_t)tc + 1);
    if (right > I - 1) right = I - 1;
    if (left > I - 1) left = I - 1;
    float wr = fabsf(c - (float)left);
    t.i0 = left, t.i1 = right, t.wl = 1.0f - wr;
    return t;
}

size_t pt_ref_interp_scratch(const pt_ref_interp_params *p, const pt_lt *dst, const pt_lt *acc) {
    iv5 v;
    pt_v5_data(dst, p->nxc, &v);
    size_t n = pt_scratch_round((size_t)(v.d[2] + v.d[3] + v.d[4]) * sizeof(interp_tap));
    return n + (acc ? pt_scratch_round(pt_lt_count(acc) * sizeof(float)) : 0);
}

/* Tap tables for the three slots of an output view `vo` over input view `vi`,
 * taken from scratch at *cur. */
static interp_tap *interp_tables(const interp_attrs *a, const iv5 *vi, const iv5 *vo, char **cur, interp_tap *tab[3]) {
    interp_tap *buf = pt_scratch_take(cur, (size_t)(vo->d[2] + vo->d[3] + vo->d[4]) * sizeof(interp_tap));
    interp_tap *p = buf;
    for (int slot = 0; slot < 3; ++slot) {
        tab[slot] = p;
        bool real = slot >= 3 - a->k;
        for (int64_t o = 0; o < vo->d[2 + slot]; ++o) {
            if (real) {
                p[o] = interp_tap_of(a, o, vi->d[2 + slot], vo->d[2 + slot]);
            } else {
                p[o].i0 = p[o].i1 = 0, p[o].wl = 1.0f;
            }
        }
        p += vo->d[2 + slot];
    }
    return buf;
}

static inline float lerp_l(float a, float b, float w) { return a * w + b * (1.0f - w); }

static pt_status interp_check(const interp_attrs *a, const pt_tview *x, const pt_tview *y, const iv5 *vx,
                              const iv5 *vy) {
    if (x->lt.ndims != y->lt.ndims || vx->d[0] != vy->d[0] || vx->d[1] != vy->d[1])
        return pt_err(dnnl_invalid_arguments, "%s: batch/channel mismatch between src and dst", a->name);
    for (int i = 2; i < 5; ++i)
        if ((vx->d[i] == 0) != (vy->d[i] == 0))
            return pt_err(dnnl_invalid_arguments, "%s: empty spatial extent on one side only", a->name);
    return dnnl_success;
}

/* Equal ranks of the data views x (input side) and y (output side), their
 * canonical views and consistent extents; `acc` is the scratch accumulator
 * tensor of the backward op (NULL forward).  Takes the tap tables. */
static pt_status interp_prepare(const interp_attrs *a, const pt_tview *x, const pt_tview *y, const pt_tview *acc,
                                const pt_exec_ctx *ctx, iv5 *vx, iv5 *vy, char **cur, interp_tap *tab[3]) {
    PT_CHECK(pt_ref_same_rank(a->name, x, y, NULL));
    pt_v5_data(&x->lt, a->nxc, vx);
    pt_v5_data(&y->lt, a->nxc, vy);
    PT_CHECK(interp_check(a, x, y, vx, vy));
    PT_CHECK(pt_ref_need_scratch(a->name, ctx, pt_ref_interp_scratch(a, &y->lt, acc ? &acc->lt : NULL)));
    *cur = ctx->scratch;
    interp_tables(a, vx, vy, cur, tab);
    return dnnl_success;
}

PT_REF_DECL(pt_ref_interpolate) {
    const interp_attrs *pa = params, a = *pa;
    if (nin < 1 || nout < 1) return pt_err(dnnl_invalid_arguments, "Interpolate: needs 1-2 inputs, 1 output");
    iv5 vs, vd;
    interp_tap *tab[3];
    char *cur;
    PT_CHECK(interp_prepare(&a, &in[0], &out[0], NULL, ctx, &vs, &vd, &cur, tab));
    const pt_tview *src = &in[0], *dst = &out[0];
    int64_t total = pt_v5_count(&vd);
    bool real_d = a.k >= 3, real_h = a.k >= 2;
    int nt = pt_ref_threads_for(ctx, total * 8);
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
    for (int64_t lin = 0; lin < total; ++lin) {
        int64_t q[5];
        pt_pos5(vd.d, lin, q);
        const int64_t n = q[0], c = q[1], od = q[2], oh = q[3], ow = q[4];
        const interp_tap *td = &tab[0][od], *th = &tab[1][oh], *tw = &tab[2][ow];
        float res;
        if (a.mode == PT_INTERP_NEAREST) {
            res = pt_tv_getf(src, pt_v5_off(&vs, n, c, td->i0, th->i0, tw->i0));
        } else {
            int64_t zi[2] = {td->i0, td->i1}, yi[2] = {th->i0, th->i1}, xi[2] = {tw->i0, tw->i1};
            float v[2][2][2]; /* [depth tap][height tap][width tap] */
            for (int z = 0; z < 2; ++z)
                for (int y = 0; y < 2; ++y)
                    for (int x = 0; x < 2; ++x) v[z][y][x] = pt_tv_getf(src, pt_v5_off(&vs, n, c, zi[z], yi[y], xi[x]));
            /* Depth first, then height, then width; dims that do not exist
             * have one tap and are not combined. */
            float e[2][2], f[2];
            for (int y = 0; y < 2; ++y)
                for (int x = 0; x < 2; ++x) e[y][x] = real_d ? lerp_l(v[0][y][x], v[1][y][x], td->wl) : v[0][y][x];
            for (int x = 0; x < 2; ++x) f[x] = real_h ? lerp_l(e[0][x], e[1][x], th->wl) : e[0][x];
            res = lerp_l(f[0], f[1], tw->wl);
        }
        pt_tv_setf(dst, pt_v5_off(&vd, n, c, od, oh, ow), res);
    }
    return dnnl_success;
}

/* What the backward scatter reads for one diff_dst element. */
typedef struct {
    const interp_attrs *a;
    const pt_tview *dd;
    const iv5 *vdd;
    interp_tap *const *tab;
    int64_t IH, IW;
} interp_scatter;

/* Adds diff_dst (n, c, od, oh, ow) onto its taps with the forward weights;
 * dims that do not exist have one tap of weight 1. */
static void interp_scatter_one(const void *arg, float *ap, int64_t n, int64_t c, int64_t od, int64_t oh, int64_t ow) {
    const interp_scatter *s = arg;
    const int64_t IH = s->IH, IW = s->IW;
    const bool real_d = s->a->k >= 3, real_h = s->a->k >= 2;
    const interp_tap *td = &s->tab[0][od], *th = &s->tab[1][oh], *tw = &s->tab[2][ow];
    float g = pt_tv_getf(s->dd, pt_v5_off(s->vdd, n, c, od, oh, ow));
    if (s->a->mode == PT_INTERP_NEAREST) {
        ap[(td->i0 * IH + th->i0) * IW + tw->i0] += g;
        return;
    }
    int64_t zi[2] = {td->i0, td->i1}, yi[2] = {th->i0, th->i1}, xi[2] = {tw->i0, tw->i1};
    float wz[2] = {td->wl, 1.0f - td->wl}, wy[2] = {th->wl, 1.0f - th->wl};
    float wx[2] = {tw->wl, 1.0f - tw->wl};
    int nz = real_d ? 2 : 1, ny = real_h ? 2 : 1;
    if (!real_d) wz[0] = 1.0f;
    if (!real_h) wy[0] = 1.0f;
    for (int z = 0; z < nz; ++z)
        for (int y = 0; y < ny; ++y)
            for (int x = 0; x < 2; ++x) ap[(zi[z] * IH + yi[y]) * IW + xi[x]] += g * wz[z] * wy[y] * wx[x];
}

PT_REF_DECL(pt_ref_interpolate_bwd) {
    const interp_attrs *pa = params, a = *pa;
    if (nin < 2 || nout < 1)
        return pt_err(dnnl_invalid_arguments, "InterpolateBackward: needs 2-3 inputs, 1 output");
    iv5 vdd, vds;
    interp_tap *tab[3];
    char *cur;
    PT_CHECK(interp_prepare(&a, &out[0], &in[1], &out[0], ctx, &vds, &vdd, &cur, tab));
    if (pt_v5_count(&vds) == 0) return dnnl_success;
    float *acc = pt_scratch_take(&cur, (size_t)pt_v5_count(&vds) * sizeof(float));
    const interp_scatter s = {.a = &a, .dd = &in[1], .vdd = &vdd, .tab = tab, .IH = vds.d[3], .IW = vds.d[4]};
    int nt = pt_ref_threads_for(ctx, vdd.d[0] * vdd.d[1] * vdd.d[2] * vdd.d[3] * vdd.d[4] * 8);
    pt_v5_scatter(&out[0], &vds, &vdd, acc, nt, interp_scatter_one, &s, ctx);
    return dnnl_success;
}
