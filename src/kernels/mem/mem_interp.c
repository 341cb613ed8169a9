/* Interpolate on dense NXC tensors (kernels/mem/mem.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/dtype.h"
#include "kernels/mem/mem_io.h"
#include "kernels/mem/mem_rows.h"
#include "kernels/x86/spatial_mem_x86.h"
#include "runtime/cpu.h"

static size_t round64(size_t b) { return (b + 63) / 64 * 64; }

/* Source coordinate of output o (f32, the spec's order of operations). */
static float coord(const pt_mem_interp_plan *p, int64_t o, int64_t I, int64_t O) {
    if (p->align_corners) return O == 1 ? 0.0f : (float)o * (float)(I - 1) / (float)(O - 1);
    return ((float)o + 0.5f) * (float)I / (float)O - 0.5f;
}

/* Taps of output o: nearest rounds half away from zero, clamped; linear
 * takes the truncated coordinate and its right neighbour, both clamped, with
 * the left weight 1 - |c - left|. */
static pt_mem_interp_tap tap_of(const pt_mem_interp_plan *p, int64_t o, int64_t I, int64_t O) {
    pt_mem_interp_tap t;
    const float c = coord(p, o, I, O);
    if (p->nearest) {
        int64_t i = (int64_t)roundf(c);
        i = i < 0 ? 0 : (i > I - 1 ? I - 1 : i);
        t.i0 = t.i1 = i;
        t.wl = 1.0f;
        return t;
    }
    const float tc = truncf(c);
    int64_t left = (int64_t)tc, right = c < 0.0f ? 0 : (tc == c ? (int64_t)c : (int64_t)tc + 1);
    if (left < 0) left = 0;
    if (left > I - 1) left = I - 1;
    if (right > I - 1) right = I - 1;
    t.i0 = left, t.i1 = right, t.wl = 1.0f - fabsf(c - (float)left);
    return t;
}

bool pt_mem_interp_taps(pt_mem_interp_plan *p) {
    const int64_t n = p->dd[2] + p->dd[3] + p->dd[4];
    pt_mem_interp_tap *buf = malloc((size_t)(n ? n : 1) * sizeof *buf);
    if (!buf) return false;
    for (int slot = 0, at = 0; slot < 3; ++slot) {
        p->tab[slot] = buf + at;
        const bool real = slot >= 3 - p->k;
        for (int64_t o = 0; o < p->dd[2 + slot]; ++o)
            p->tab[slot][o] = real ? tap_of(p, o, p->sd[2 + slot], p->dd[2 + slot]) : (pt_mem_interp_tap){0, 0, 1.0f};
        at += (int)p->dd[2 + slot];
    }
    return true;
}

/* No output elements (a 0 extent): nothing to compute, however many channels. */
static bool empty_dst(const pt_mem_interp_plan *p) {
    for (int i = 0; i < 5; ++i)
        if (p->dd[i] == 0) return true;
    return false;
}

/* Bytes of the AVX-512 kernel's row of depth and height blends (linear over 2
 * or 3 dims: sd[4]·C floats), 0 where it goes without: nearest, 1 dim, or a
 * row too large to stay in L2 next to the source rows. */
static size_t blend_row_bytes(const pt_mem_interp_plan *p) {
    const size_t bytes = round64((size_t)(p->sd[4] * p->sd[1]) * sizeof(float));
    return !p->nearest && p->k >= 2 && bytes <= ((size_t)512 << 10) ? bytes : 0;
}

/* Per thread: eight source rows, four and two blends, one result (C each),
 * or the AVX-512 kernel's blend row where that is larger. */
static size_t thread_scratch(const pt_mem_interp_plan *p) {
    const size_t rows = 16 * round64((size_t)p->sd[1] * sizeof(float)), blend = blend_row_bytes(p);
    return rows > blend ? rows : blend;
}

size_t pt_mem_interp_scratch(const pt_mem_interp_plan *p) {
    if (empty_dst(p)) return 0;
    return thread_scratch(p) * (size_t)p->threads;
}

/* y = a·w + b·(1 - w), the reference's lerp, each step rounded to f32. */
static void lerp(const pt_vec_ops *v, float *y, const float *a, const float *b, float w, float *tmp, int64_t n) {
    const float w1 = 1.0f - w;
    v->binary(dnnl_graph_op_multiply, tmp, a, 1, &w, 0, n);
    v->binary(dnnl_graph_op_multiply, y, b, 1, &w1, 0, n);
    v->binary(dnnl_graph_op_add, y, tmp, 1, y, 1, n);
}

pt_status pt_mem_interp_run(const pt_fused *f, const pt_tview *in, size_t nin, const pt_tview *out, size_t nout,
                            void *scratch, const pt_exec_ctx *ctx) {
    (void)nin, (void)nout;
    const pt_mem_interp_plan *p = f->state;
    if (empty_dst(p)) return dnnl_success;
    const pt_vec_ops *v = pt_vec();
    const pt_tview *src = &in[p->io.in[0]], *dst = &out[p->io.out[0]];
    const dnnl_data_type_t sdt = src->lt.data_type, ddt = dst->lt.data_type;
    const int64_t C = p->sd[1], pixels = p->dd[0] * p->dd[2] * p->dd[3] * p->dd[4];
    const size_t row = round64((size_t)C * sizeof(float));
    const size_t bytes = pt_dt_bytes(ddt, pixels * C) * (p->nearest ? 2 : 9);
    const int nt = pt_mem_threads(ctx, bytes, pixels, p->threads);
    const bool real_d = p->k >= 3, real_h = p->k >= 2;
    /* At the AVX-512 level each thread runs its share in registers. */
    const bool fast = pt_cpu_row_usable(PT_ISA_AVX512, 0, pt_isa());
    const bool stream = pt_dt_bytes(ddt, pixels * C) >= PT_MEM_STREAM_BYTES;
    if (fast) {
#pragma omp parallel num_threads(nt) if (nt > 1)
        {
            int64_t b, e;
            const int t = nt > 1 ? pt_thread_id() : 0;
            float *blend = blend_row_bytes(p) ? (float *)((char *)scratch + thread_scratch(p) * (size_t)t) : NULL;
            pt_mem_share(pixels, t, pt_mem_team(nt), &b, &e);
            pt_interp_nxc_avx512(p, src->data, sdt, dst->data, ddt, b, e, stream, blend);
        }
        return dnnl_success;
    }
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        const int t = nt > 1 ? pt_thread_id() : 0;
        float *base = (float *)((char *)scratch + thread_scratch(p) * (size_t)t);
        float *buf[16];
        for (int i = 0; i < 16; ++i) buf[i] = (float *)((char *)base + row * (size_t)i);
        int64_t b, e;
        pt_mem_share(pixels, t, pt_mem_team(nt), &b, &e);
        for (int64_t k = b; k < e; ++k) {
            int64_t rest = k;
            const int64_t ow = rest % p->dd[4]; rest /= p->dd[4];
            const int64_t oh = rest % p->dd[3]; rest /= p->dd[3];
            const int64_t od = rest % p->dd[2]; rest /= p->dd[2];
            const int64_t n = rest;
            const pt_mem_interp_tap *td = &p->tab[0][od], *th = &p->tab[1][oh], *tw = &p->tab[2][ow];
#define PT_SRC_ROW(z, y, x) ((((n * p->sd[2] + (z)) * p->sd[3] + (y)) * p->sd[4] + (x)) * C)
            const int64_t o = k * C;
            float *res = buf[15];
            if (p->nearest) {
                const float *x = pt_mem_load(v, sdt, src->data, PT_SRC_ROW(td->i0, th->i0, tw->i0), C, res);
                if (x != res) memcpy(res, x, (size_t)C * sizeof *res);
            } else {
                const int64_t zi[2] = {td->i0, td->i1}, yi[2] = {th->i0, th->i1}, xi[2] = {tw->i0, tw->i1};
                const float *vv[2][2][2];
                for (int z = 0; z < (real_d ? 2 : 1); ++z)
                    for (int y = 0; y < (real_h ? 2 : 1); ++y)
                        for (int x = 0; x < 2; ++x)
                            vv[z][y][x] = pt_mem_load(v, sdt, src->data, PT_SRC_ROW(zi[z], yi[y], xi[x]), C, buf[z * 4 + y * 2 + x]);
                const float *ev[2][2], *fv[2];
                for (int y = 0; y < (real_h ? 2 : 1); ++y)
                    for (int x = 0; x < 2; ++x) {
                        if (!real_d) {
                            ev[y][x] = vv[0][y][x];
                            continue;
                        }
                        lerp(v, buf[8 + y * 2 + x], vv[0][y][x], vv[1][y][x], td->wl, buf[14], C);
                        ev[y][x] = buf[8 + y * 2 + x];
                    }
                for (int x = 0; x < 2; ++x) {
                    if (!real_h) {
                        fv[x] = ev[0][x];
                        continue;
                    }
                    lerp(v, buf[12 + x], ev[0][x], ev[1][x], th->wl, buf[14], C);
                    fv[x] = buf[12 + x];
                }
                lerp(v, res, fv[0], fv[1], tw->wl, buf[14], C);
            }
#undef PT_SRC_ROW
            float *y = pt_mem_out(ddt, dst->data, o, res);
            if (y != res) memcpy(y, res, (size_t)C * sizeof *y);
            pt_mem_store(v, ddt, dst->data, o, C, res);
        }
    }
    return dnnl_success;
}
