/* Pooling on dense NXC tensors (kernels/mem/mem.h). */
#include <string.h>

#include "ir/dtype.h"
#include "kernels/mem/mem_io.h"
#include "kernels/mem/mem_rows.h"
#include "kernels/x86/spatial_mem_x86.h"
#include "runtime/cpu.h"

static size_t round64(size_t b) { return (b + 63) / 64 * 64; }

/* No output elements (a 0 extent): nothing to compute, however many channels. */
static bool empty_dst(const pt_mem_pool_plan *p) {
    for (int i = 0; i < 5; ++i)
        if (p->dd[i] == 0) return true;
    return false;
}

/* Per thread: f64 sums, the f32 result and one converted tap, C each. */
size_t pt_mem_pool_scratch(const pt_mem_pool_plan *p) {
    if (empty_dst(p)) return 0;
    const size_t c = (size_t)p->sd[1];
    return (round64(c * sizeof(double)) + 2 * round64(c * sizeof(float))) * (size_t)p->threads;
}

/* Valid taps of output o along slot s: [*lo, *hi) tap indices. */
static int64_t first_in(int64_t b, int64_t dl) { return b >= 0 ? 0 : (-b + dl - 1) / dl; }

pt_status pt_mem_pool_run(const pt_fused *f, const pt_tview *in, size_t nin, const pt_tview *out, size_t nout,
                          void *scratch, const pt_exec_ctx *ctx) {
    (void)nin, (void)nout;
    const pt_mem_pool_plan *p = f->state;
    if (empty_dst(p)) return dnnl_success;
    const pt_vec_ops *v = pt_vec();
    const pt_tview *src = &in[p->io.in[0]], *dst = &out[p->io.out[0]];
    const dnnl_data_type_t sdt = src->lt.data_type, ddt = dst->lt.data_type;
    const int64_t C = p->sd[1], pixels = p->dd[0] * p->dd[2] * p->dd[3] * p->dd[4];
    const int64_t taps = p->K[0] * p->K[1] * p->K[2];
    const size_t bytes = pt_dt_bytes(sdt, p->sd[0] * C * p->sd[2] * p->sd[3] * p->sd[4]) + pt_dt_bytes(ddt, pixels * C);
    const int nt = pt_mem_threads(ctx, bytes > (size_t)(pixels * C * taps * 4) ? bytes : (size_t)(pixels * C * taps * 4),
                                  pixels, p->threads);
    const size_t per = round64((size_t)C * sizeof(double)) + 2 * round64((size_t)C * sizeof(float));
    /* At the AVX-512 level each thread runs its share in registers (no scratch). */
    const bool fast = pt_cpu_row_usable(PT_ISA_AVX512, 0, pt_isa());
    const bool stream = pt_dt_bytes(ddt, pixels * C) >= PT_MEM_STREAM_BYTES;
    if (fast) {
#pragma omp parallel num_threads(nt) if (nt > 1)
        {
            int64_t b, e;
            pt_mem_share(pixels, nt > 1 ? pt_thread_id() : 0, pt_mem_team(nt), &b, &e);
            pt_pool_nxc_avx512(p, src->data, sdt, dst->data, ddt, b, e, stream);
        }
        return dnnl_success;
    }
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        const int t = nt > 1 ? pt_thread_id() : 0;
        double *acc = (double *)((char *)scratch + per * (size_t)t);
        float *res = (float *)((char *)acc + round64((size_t)C * sizeof(double)));
        float *tap = (float *)((char *)res + round64((size_t)C * sizeof(float)));
        int64_t b, e;
        pt_mem_share(pixels, t, pt_mem_team(nt), &b, &e);
        for (int64_t k = b; k < e; ++k) {
            int64_t rest = k;
            const int64_t ow = rest % p->dd[4]; rest /= p->dd[4];
            const int64_t oh = rest % p->dd[3]; rest /= p->dd[3];
            const int64_t od = rest % p->dd[2]; rest /= p->dd[2];
            const int64_t n = rest;
            const int64_t dl0 = p->is_max ? p->Dl[0] : 1, dl1 = p->is_max ? p->Dl[1] : 1, dl2 = p->is_max ? p->Dl[2] : 1;
            const int64_t b0 = od * p->S[0] - p->P[0], b1 = oh * p->S[1] - p->P[1], b2 = ow * p->S[2] - p->P[2];
            int64_t valid = 0, vd = 0, vh = 0, vw = 0;
            if (!p->is_max) memset(acc, 0, (size_t)C * sizeof *acc);
            for (int64_t kd = first_in(b0, dl0); kd < p->K[0]; ++kd) {
                const int64_t id = b0 + kd * dl0;
                if (id >= p->sd[2]) break;
                ++vd;
                vh = 0;
                for (int64_t kh = first_in(b1, dl1); kh < p->K[1]; ++kh) {
                    const int64_t ih = b1 + kh * dl1;
                    if (ih >= p->sd[3]) break;
                    ++vh;
                    vw = 0;
                    for (int64_t kw = first_in(b2, dl2); kw < p->K[2]; ++kw) {
                        const int64_t iw = b2 + kw * dl2;
                        if (iw >= p->sd[4]) break;
                        ++vw;
                        const int64_t at = (((n * p->sd[2] + id) * p->sd[3] + ih) * p->sd[4] + iw) * C;
                        const float *x = pt_mem_load(v, sdt, src->data, at, C, tap);
                        if (!p->is_max) v->acc_f64(acc, x, C);
                        else if (valid == 0) memcpy(res, x, (size_t)C * sizeof *res);
                        else v->binary(dnnl_graph_op_maximum, res, x, 1, res, 1, C); /* x > best ? x : best */
                        ++valid;
                    }
                }
            }
            const int64_t o = k * C;
            float *y = pt_mem_out(ddt, dst->data, o, res);
            if (p->is_max) {
                if (valid == 0)
                    for (int64_t c = 0; c < C; ++c) res[c] = p->lowest;
                if (y != res) memcpy(y, res, (size_t)C * sizeof *y);
            } else {
                const int64_t den = p->exclude ? vd * vh * vw : taps;
                if (den > 0) v->div_f64(y, acc, C, (double)den);
                else memset(y, 0, (size_t)C * sizeof *y);
            }
            pt_mem_store(v, ddt, dst->data, o, C, y);
        }
    }
    return dnnl_success;
}
