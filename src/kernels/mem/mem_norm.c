/* LayerNorm and RMSNorm on dense tensors (kernels/mem/mem.h).  With an ISA
 * row (mem_rows.h) and f32 / bf16 tensors, each row crosses memory once:
 * one pass takes the statistics (sums of x - k and (x - k)², k the row's
 * first element, so the variance keeps the reference's accuracy), a second
 * pass over the row, now in L1/L2, normalises and stores (streamed for large
 * outputs) in pieces while the next row's statistics are taken.
 * Otherwise: per row, the vector table's f64 sums (mean, then squared
 * deviations, as the reference) and its normalisation. */
#include <math.h>
#include <string.h>

#include "ir/dtype.h"
#include "kernels/mem/mem_io.h"
#include "kernels/mem/mem_rows.h"

static size_t round64(size_t b) { return (b + 63) / 64 * 64; }

size_t pt_mem_norm_scratch(const pt_mem_norm_plan *p) {
    if (p->rows == 0) return 0; /* an empty tensor: nothing to stage, however long its rows */
    /* gamma and beta in f64 (the fused path's f32 output) and f32; per thread two f32 rows */
    const size_t row = round64((size_t)p->len * sizeof(float));
    return 2 * round64((size_t)p->len * sizeof(double)) + 2 * row + 2 * row * (size_t)p->threads;
}

/* An affine parameter as f32: the tensor itself, or converted into buf. */
static const float *param_f32(const pt_vec_ops *v, const pt_tview *t, int64_t len, float *buf) {
    return pt_mem_load(v, t->lt.data_type, t->data, 0, len, buf);
}

/* An affine parameter as f64 (the fused path's normalisation reads it per element). */
static const double *param_f64(const pt_tview *t, int64_t len, double *buf) {
    if (t->lt.data_type == dnnl_f32) { /* the common case as a plain loop: it vectorises */
        const float *g = t->data;
        for (int64_t i = 0; i < len; ++i) buf[i] = g[i];
        return buf;
    }
    for (int64_t i = 0; i < len; ++i) buf[i] = pt_load_f32(t->data, t->lt.data_type, i);
    return buf;
}

/* The fused path (an ISA row; f32 / bf16 source and destination). */
static void norm_fused(const pt_mem_norm_plan *p, const pt_mem_rows *m, const pt_tview *in, const pt_tview *out,
                       char *s, int nt, bool stream) {
    const int64_t len = p->len, rows = p->rows;
    const size_t prm = round64((size_t)len * sizeof(double)), row = round64((size_t)len * sizeof(float));
    const dnnl_data_type_t sdt = in[p->io.in[0]].lt.data_type, ddt = out[p->io.out[0]].lt.data_type;
    const bool to_bf16 = ddt == dnnl_bf16; /* normalised in f32 (mem_rows.h) */
    const pt_vec_ops *v = pt_vec();
    const double *g = p->has_gamma && !to_bf16 ? param_f64(&in[p->io.in[1]], len, (double *)s) : NULL;
    const double *bt = p->has_beta && !to_bf16 ? param_f64(&in[p->io.in[2]], len, (double *)(s + prm)) : NULL;
    const float *g32 = p->has_gamma && to_bf16 ? param_f32(v, &in[p->io.in[1]], len, (float *)(s + 2 * prm)) : NULL;
    const float *b32 = p->has_beta && to_bf16 ? param_f32(v, &in[p->io.in[2]], len, (float *)(s + 2 * prm + row)) : NULL;
    const size_t ses = pt_dt_bytes(sdt, 1), des = pt_dt_bytes(ddt, 1);
    const char *src = in[p->io.in[0]].data;
    char *dst = out[p->io.out[0]].data;
    const pt_tview *mean = p->has_stats ? &out[p->io.out[1]] : NULL, *var = p->has_stats ? &out[p->io.out[2]] : NULL;
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        const int t = nt > 1 ? pt_thread_id() : 0;
        float *xb = (float *)(s + 2 * prm + 2 * row + 2 * row * (size_t)t);
        int64_t b, e;
        pt_mem_share(rows, t, pt_mem_team(nt), &b, &e);
        /* The statistics outputs take the rows in batches (their f64 values
         * kept here until stored); otherwise one run. */
        enum { BATCH = 256 };
        double st[2 * BATCH];
        for (int64_t r = b; r < e;) {
            const int64_t k = mean && e - r > BATCH ? BATCH : e - r;
            m->norm(dst + (size_t)(r * len) * des, ddt, stream, src + (size_t)(r * len) * ses, sdt, len, k, p->rms,
                    p->eps, g, bt, g32, b32, xb, mean ? st : NULL);
            for (int64_t i = 0; mean && i < k; ++i) {
                pt_store_f32(mean->data, mean->lt.data_type, r + i, (float)st[2 * i]);
                pt_store_f32(var->data, var->lt.data_type, r + i, (float)st[2 * i + 1]);
            }
            r += k;
        }
        if (stream) m->fence();
    }
}

pt_status pt_mem_norm_run(const pt_fused *f, const pt_tview *in, size_t nin, const pt_tview *out, size_t nout,
                          void *scratch, const pt_exec_ctx *ctx) {
    const pt_mem_norm_plan *p = f->state;
    (void)nin, (void)nout; /* the lowering mapped every port (p->io) */
    const pt_vec_ops *v = pt_vec();
    const int64_t len = p->len, rows = p->rows;
    if (rows == 0) return dnnl_success;
    const size_t row = round64((size_t)len * sizeof(float)), prm = round64((size_t)len * sizeof(double));
    char *s = scratch;
    const dnnl_data_type_t sdt = in[p->io.in[0]].lt.data_type, ddt = out[p->io.out[0]].lt.data_type;
    const size_t bytes = (size_t)(rows * len) * (pt_dt_bytes(sdt, 1) + pt_dt_bytes(ddt, 1));
    const int nt = pt_mem_threads(ctx, bytes, rows, p->threads);
    const pt_mem_rows *m = pt_mem_rows_get();
    if (m && (sdt == dnnl_f32 || sdt == dnnl_bf16) && (ddt == dnnl_f32 || ddt == dnnl_bf16)) {
        norm_fused(p, m, in, out, s, nt, (size_t)(rows * len) * pt_dt_bytes(ddt, 1) >= PT_MEM_STREAM_BYTES);
        return dnnl_success;
    }
    const float *g = p->has_gamma ? param_f32(v, &in[p->io.in[1]], len, (float *)s) : NULL;
    const float *bt = p->has_beta ? param_f32(v, &in[p->io.in[2]], len, (float *)(s + prm)) : NULL;
    const void *src = in[p->io.in[0]].data;
    void *dst = out[p->io.out[0]].data;
    const pt_tview *mean = p->has_stats ? &out[p->io.out[1]] : NULL, *var = p->has_stats ? &out[p->io.out[2]] : NULL;
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        const int t = nt > 1 ? pt_thread_id() : 0;
        float *xb = (float *)(s + 2 * prm + 2 * row + 2 * row * (size_t)t), *yb = (float *)((char *)xb + row);
        int64_t b, e;
        pt_mem_share(rows, t, pt_mem_team(nt), &b, &e);
        for (int64_t r = b; r < e; ++r) {
            const float *x = pt_mem_load(v, sdt, src, r * len, len, xb);
            float *y = pt_mem_out(ddt, dst, r * len, yb);
            double mu = 0.0, var_r;
            if (p->rms) {
                var_r = len > 0 ? v->sum_sq_dev_f64(x, len, 0.0) / (double)len : 0.0;
            } else {
                mu = len > 0 ? v->sum_f64(x, len) / (double)len : 0.0;
                var_r = len > 0 ? v->sum_sq_dev_f64(x, len, mu) / (double)len : 0.0;
            }
            v->normalize(y, x, len, mu, 1.0 / sqrt(var_r + p->eps), g, bt);
            pt_mem_store(v, ddt, dst, r * len, len, y);
            if (p->has_stats) {
                pt_store_f32(mean->data, mean->lt.data_type, r, (float)mu);
                pt_store_f32(var->data, var->lt.data_type, r, (float)var_r);
            }
        }
    }
    return dnnl_success;
}

/* ---- GroupNorm ---- */

/* An empty tensor: nothing to stage or compute. */
static bool gnorm_empty(const pt_mem_gnorm_plan *p) { return p->groups == 0 || p->cg == 0 || p->sp == 0; }

size_t pt_mem_gnorm_scratch(const pt_mem_gnorm_plan *p) {
    if (gnorm_empty(p)) return 0;
    if (p->nxc) { /* a sample's shift / mean, scale, shift; per thread its two sums and two rows (gnorm_nxc_sample) */
        const size_t C = (size_t)(p->g * p->cg);
        return (5 * round64(C * sizeof(double)) + 2 * round64(C * sizeof(float))) * (size_t)p->threads;
    }
    const size_t block = round64((size_t)(p->cg * p->sp) * sizeof(float)), chan = round64((size_t)p->sp * sizeof(float));
    return (block + chan) * (size_t)p->threads;
}

/* Touches the `bytes` that lie 4 KiB past p (prefetches never fault, so the
 * end of a tensor needs no care). */
static inline void fetch_ahead(const void *p, size_t bytes) {
    const char *q = (const char *)p + 4096;
    for (size_t o = 0; o < bytes; o += 64) __builtin_prefetch(q + o);
}

/* NXC: one sample's [SP, C] slab at element `base`, in two passes over it:
 * the statistics (per channel, f64 sums of x - k and (x - k)², k the first
 * element of the channel's group in the sample, as LayerNorm's one pass),
 * then the normalisation; each row's source touched 4 KiB ahead.  On the
 * Xeon of sessions 12-14 (bench_membound, [32, 64, 64, 128] f32, 2 threads):
 * three passes (sums, squared deviations, normalisation) 12.0-12.6 ms; two
 * 10.1-11.3; with the fetches 8.2-9.4 (the loads had waited on memory).
 * Non-temporal stores of single rows made it slower (12.1-14.8 ms); since
 * session 16, f32 rows go in blocks of GNORM_NXC_ROWS with the parameters
 * in registers, and a large f32 output streamed that way took 6.5-6.9 ms
 * against 9.1-10.2 cached (a cached store first reads its line). */
#define GNORM_NXC_ROWS 16
static void gnorm_nxc_sample(const pt_mem_gnorm_plan *p, const pt_vec_ops *v, const pt_tview *src, const pt_tview *dst,
                             const pt_tview *gamma, const pt_tview *beta, const pt_tview *mean, const pt_tview *var,
                             int64_t n, char *scratch, int nt) {
    const int64_t C = p->g * p->cg, base = n * p->sp * C, cnt = p->cg * p->sp;
    const size_t cd = round64((size_t)C * sizeof(double)), cf = round64((size_t)C * sizeof(float));
    double *mean_c = (double *)scratch, *scale_c = (double *)(scratch + cd), *shift_c = (double *)(scratch + 2 * cd);
    char *per = scratch + 3 * cd;
    const size_t per_bytes = 2 * cd + 2 * cf;
    const dnnl_data_type_t sdt = src->lt.data_type, ddt = dst->lt.data_type;
    const size_t sb = pt_dt_bytes(sdt, 1);
    /* f32 rows are read (and f32 output rows written) where they lie, a
     * block at a time, so the per-channel sums or parameters stay in
     * registers over the block; other types go through the row buffers. */
    const int64_t rb = sdt == dnnl_f32 && ddt == dnnl_f32 ? GNORM_NXC_ROWS : 1;
    /* A large f32 output of f32 rows streamed past the caches, blocks at a
     * time (see the comment above; single rows streamed were slower). */
    const bool stream = rb > 1 && pt_dt_bytes(ddt, p->groups * cnt) >= PT_MEM_STREAM_BYTES;
    /* The shifts, in mean_c until the statistics replace them (0 for a first
     * element that is not finite: see mem_rows_avx512.h's norm shift). */
    for (int64_t g = 0; g < p->g; ++g) {
        double k = pt_load_f32(src->data, sdt, base + g * p->cg);
        if (!isfinite(k)) k = 0.0;
        for (int64_t c = g * p->cg; c < (g + 1) * p->cg; ++c) mean_c[c] = k;
    }
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        const int t = nt > 1 ? pt_thread_id() : 0, team = pt_mem_team(nt);
        double *s1 = (double *)(per + per_bytes * (size_t)t), *s2 = (double *)((char *)s1 + cd);
        float *xb = (float *)((char *)s2 + cd), *yb = (float *)((char *)xb + cf);
        int64_t b, e;
        pt_mem_share(p->sp, t, team, &b, &e);
        memset(s1, 0, (size_t)C * sizeof *s1);
        memset(s2, 0, (size_t)C * sizeof *s2);
        for (int64_t s = b; s < e; s += rb) {
            const int64_t rows = e - s < rb ? e - s : rb;
            fetch_ahead((const char *)src->data + (size_t)(base + s * C) * sb, (size_t)(rows * C) * sb);
            v->acc_shift_f64(s1, s2, pt_mem_load(v, sdt, src->data, base + s * C, C, xb), C, rows, mean_c, C);
        }
#pragma omp barrier
#pragma omp single
        for (int64_t g = 0; g < p->g; ++g) {
            double t1 = 0.0, t2 = 0.0;
            for (int u = 0; u < team; ++u) {
                const double *a1 = (const double *)(per + per_bytes * (size_t)u);
                const double *a2 = (const double *)((const char *)a1 + cd);
                for (int64_t c = g * p->cg; c < (g + 1) * p->cg; ++c) t1 += a1[c], t2 += a2[c];
            }
            const double k = mean_c[g * p->cg];
            const double mu = cnt > 0 ? k + t1 / (double)cnt : 0.0;
            double s2g = cnt > 0 ? (t2 - t1 * (t1 / (double)cnt)) / (double)cnt : 0.0;
            if (s2g < 0.0) s2g = 0.0;
            const double inv = 1.0 / sqrt(s2g + p->eps);
            for (int64_t c = g * p->cg; c < (g + 1) * p->cg; ++c) {
                mean_c[c] = mu;
                scale_c[c] = inv * (gamma ? pt_load_f32(gamma->data, gamma->lt.data_type, c) : 1.0);
                shift_c[c] = beta ? pt_load_f32(beta->data, beta->lt.data_type, c) : 0.0;
            }
            if (mean) {
                pt_store_f32(mean->data, mean->lt.data_type, n * p->g + g, (float)mu);
                pt_store_f32(var->data, var->lt.data_type, n * p->g + g, (float)s2g);
            }
        }
        for (int64_t s = b; s < e; s += rb) {
            const int64_t rows = e - s < rb ? e - s : rb;
            fetch_ahead((const char *)src->data + (size_t)(base + s * C) * sb, (size_t)(rows * C) * sb);
            const float *x = pt_mem_load(v, sdt, src->data, base + s * C, C, xb);
            float *y = pt_mem_out(ddt, dst->data, base + s * C, yb);
            v->normalize_each(y, C, x, C, rows, C, mean_c, scale_c, shift_c, stream);
            pt_mem_store(v, ddt, dst->data, base + s * C, C, y);
        }
    }
}

pt_status pt_mem_gnorm_run(const pt_fused *f, const pt_tview *in, size_t nin, const pt_tview *out, size_t nout,
                           void *scratch, const pt_exec_ctx *ctx) {
    (void)nin, (void)nout;
    const pt_mem_gnorm_plan *p = f->state;
    if (gnorm_empty(p)) return dnnl_success;
    const pt_vec_ops *v = pt_vec();
    const pt_tview *src = &in[p->io.in[0]], *dst = &out[p->io.out[0]];
    const pt_tview *gamma = p->has_affine ? &in[p->io.in[1]] : NULL, *beta = p->has_affine ? &in[p->io.in[2]] : NULL;
    const pt_tview *mean = p->has_stats ? &out[p->io.out[1]] : NULL, *var = p->has_stats ? &out[p->io.out[2]] : NULL;
    const dnnl_data_type_t sdt = src->lt.data_type, ddt = dst->lt.data_type;
    const int64_t cnt = p->cg * p->sp;
    if (p->nxc) {
        const int64_t samples = p->groups / p->g;
        const size_t sample = (size_t)(cnt * p->g) * (pt_dt_bytes(sdt, 1) + pt_dt_bytes(ddt, 1));
        const int nt_all = pt_mem_threads(ctx, sample * (size_t)samples, samples, p->threads);
        if (nt_all > 1 && samples % nt_all == 0) {
            /* Whole samples per thread, each on its own scratch: no barrier
             * between the passes (with a core taken by another process, the
             * barriers of a split sample made each wait a time slice). */
            const size_t C = (size_t)(p->g * p->cg);
            const size_t per = 5 * round64(C * sizeof(double)) + 2 * round64(C * sizeof(float));
#pragma omp parallel num_threads(nt_all)
            {
                int64_t b, e;
                const int t = pt_thread_id();
                pt_mem_share(samples, t, pt_mem_team(nt_all), &b, &e);
                for (int64_t n = b; n < e; ++n)
                    gnorm_nxc_sample(p, v, src, dst, gamma, beta, mean, var, n, (char *)scratch + per * (size_t)t, 1);
            }
            return dnnl_success;
        }
        const int nt = pt_mem_threads(ctx, sample, p->sp, p->threads);
        for (int64_t n = 0; n < samples; ++n)
            gnorm_nxc_sample(p, v, src, dst, gamma, beta, mean, var, n, scratch, nt);
        return dnnl_success;
    }
    const size_t block = round64((size_t)cnt * sizeof(float)), chan = round64((size_t)p->sp * sizeof(float));
    const size_t bytes = (size_t)(p->groups * cnt) * (pt_dt_bytes(sdt, 1) + pt_dt_bytes(ddt, 1));
    const int nt = pt_mem_threads(ctx, bytes, p->groups, p->threads);
    const pt_mem_rows *m = pt_mem_rows_get();
    if (m && pt_mem_dtype_ok(sdt) && pt_mem_dtype_ok(ddt)) {
        /* Per block: the statistics read the source in its type, then each
         * channel is normalised straight into dst (streamed when large) while
         * the next block's source is fetched. */
        const bool stream = pt_dt_bytes(ddt, p->groups * cnt) >= PT_MEM_STREAM_BYTES;
        const size_t sb = pt_dt_bytes(sdt, 1), db = pt_dt_bytes(ddt, 1);
        /* A bf16 output without statistics outputs: LayerNorm's f32 lane sums. */
        const bool lanes32 = ddt == dnnl_bf16 && !mean;
#pragma omp parallel num_threads(nt) if (nt > 1)
        {
            int64_t b, e;
            pt_mem_share(p->groups, nt > 1 ? pt_thread_id() : 0, pt_mem_team(nt), &b, &e);
            for (int64_t ng = b; ng < e; ++ng) {
                const char *x = (const char *)src->data + (size_t)(ng * cnt) * sb;
                double mu, s2;
                m->gnorm_stats(x, sdt, cnt, lanes32, &mu, &s2);
                const double inv = 1.0 / sqrt(s2 + p->eps);
                const size_t chan_bytes = (size_t)p->sp * sb;
                for (int64_t c = 0; c < p->cg; ++c) {
                    const int64_t ch = ng % p->g * p->cg + c; /* channel of the sample */
                    const double gm = gamma ? pt_load_f32(gamma->data, gamma->lt.data_type, ch) : 1.0;
                    const double bt = beta ? pt_load_f32(beta->data, beta->lt.data_type, ch) : 0.0;
                    /* The next block's share for this channel's write. */
                    const char *pf = ng + 1 < e ? x + (size_t)cnt * sb + (size_t)c * chan_bytes : NULL;
                    m->affine((char *)dst->data + (size_t)(ng * cnt + c * p->sp) * db, ddt, stream,
                              x + (size_t)c * chan_bytes, sdt, p->sp, mu, inv * gm, bt, pf, pf ? chan_bytes : 0);
                }
                if (mean) {
                    pt_store_f32(mean->data, mean->lt.data_type, ng, (float)mu);
                    pt_store_f32(var->data, var->lt.data_type, ng, (float)s2);
                }
            }
            if (stream) m->fence();
        }
        return dnnl_success;
    }
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        const int t = nt > 1 ? pt_thread_id() : 0;
        float *xb = (float *)((char *)scratch + (block + chan) * (size_t)t), *yb = (float *)((char *)xb + block);
        int64_t b, e;
        pt_mem_share(p->groups, t, pt_mem_team(nt), &b, &e);
        for (int64_t ng = b; ng < e; ++ng) {
            const float *x = pt_mem_load(v, sdt, src->data, ng * cnt, cnt, xb);
            const double mu = cnt > 0 ? v->sum_f64(x, cnt) / (double)cnt : 0.0;
            const double s2 = cnt > 0 ? v->sum_sq_dev_f64(x, cnt, mu) / (double)cnt : 0.0;
            const double inv = 1.0 / sqrt(s2 + p->eps);
            for (int64_t c = 0; c < p->cg; ++c) {
                const int64_t ch = ng % p->g * p->cg + c; /* channel of the sample */
                const double gm = gamma ? pt_load_f32(gamma->data, gamma->lt.data_type, ch) : 1.0;
                const double bt = beta ? pt_load_f32(beta->data, beta->lt.data_type, ch) : 0.0;
                const int64_t at = ng * cnt + c * p->sp;
                float *y = pt_mem_out(ddt, dst->data, at, yb);
                v->normalize1(y, x + c * p->sp, p->sp, mu, inv * gm, bt); /* gamma folded into the scale */
                pt_mem_store(v, ddt, dst->data, at, p->sp, y);
            }
            if (mean) {
                pt_store_f32(mean->data, mean->lt.data_type, ng, (float)mu);
                pt_store_f32(var->data, var->lt.data_type, ng, (float)s2);
            }
        }
    }
    return dnnl_success;
}
