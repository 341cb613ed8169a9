/* ConvolutionBackwardWeights on the GEMM microkernels (conv_bwd_weights.h). */
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "ir/dtype.h"
#include "kernels/fused/conv_bwd_weights.h"
#include "kernels/gemm/gemm.h"
#include "runtime/share.h"

#define BWW_KC 256 /* positions per chunk: A and B panels of a chunk stay in L2 */

static size_t align64(size_t v) { return (v + 63) / 64 * 64; }
static int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

static bool is_float(dnnl_data_type_t dt) { return dt == dnnl_f32 || dt == dnnl_bf16 || dt == dnnl_f16; }

/* Columns [j0, j0 + nb) of the im2col rows of image n, group g, positions
 * [p0, p0 + kc): col[j][p] (row length kc), 0 where a tap falls in padding. */
static void im2col_chunk(const pt_conv_bww_plan *p, const void *src, int64_t n, int64_t g, int64_t j0, int64_t nb,
                         int64_t p0, int64_t kc, float *col) {
    const pt_v5 *x = &p->src, *y = &p->ddst;
    const int64_t KH = p->dw.d[3], KW = p->dw.d[4], OH = y->d[3], OW = y->d[4];
    for (int64_t j = 0; j < nb; ++j) {
        const int64_t kcol = j0 + j, c = kcol / p->T, tap = kcol % p->T;
        const int64_t kw = tap % KW, kh = tap / KW % KH, kd = tap / (KW * KH);
        const int64_t base = n * x->s[0] + (g * p->ICg + c) * x->s[1];
        float *row = col + j * kc;
        for (int64_t q = 0; q < kc; ++q) {
            const int64_t pos = p0 + q, ow = pos % OW, oh = pos / OW % OH, od = pos / (OW * OH);
            const int64_t iz = od * p->geom.S[0] + kd * p->geom.Dl[0] - p->geom.P[0];
            const int64_t iy = oh * p->geom.S[1] + kh * p->geom.Dl[1] - p->geom.P[1];
            const int64_t ix = ow * p->geom.S[2] + kw * p->geom.Dl[2] - p->geom.P[2];
            if (iz < 0 || iz >= x->d[2] || iy < 0 || iy >= x->d[3] || ix < 0 || ix >= x->d[4]) {
                row[q] = 0.f;
                continue;
            }
            const int64_t off = base + iz * x->s[2] + iy * x->s[3] + ix * x->s[4];
            row[q] = p->src_dt == dnnl_f32 ? ((const float *)src)[off] : pt_load_f32(src, p->src_dt, off);
        }
    }
}

/* Item w: group g, columns [j0, j0 + nb): every image and chunk of positions. */
static void run_item(const pt_conv_bww_plan *p, const pt_gemm_ukernel *uk, const void *src, const void *ddst,
                     float *dw, int64_t w, char *buf) {
    const int64_t blocks = p->items / p->geom.G, g = w / blocks, j0 = w % blocks * p->nbw;
    const int64_t nb = p->K - j0 < p->nbw ? p->K - j0 : p->nbw, ldc = p->K;
    float *col = (float *)(buf + p->col_off);
    void *ap = buf + p->a_off, *bp = buf + p->b_off;
    float *c = dw + g * p->OCg * p->K + j0; /* rows oc of group g in the dense canonical diff_w */
    const pt_gemm_operand ao = {.dt = p->ddst_dt, .s_row = p->ddst.s[1], .s_k = p->dd_pos_stride, .round = p->round};
    pt_gemm_operand bo = {.dt = dnnl_f32, .s_row = p->kc, .s_k = 1, .round = p->round};
    bool first = true;
    for (int64_t n = 0; n < p->ddst.d[0]; ++n)
        for (int64_t p0 = 0; p0 < p->P; p0 += p->kc) {
            const int64_t kc = p->P - p0 < p->kc ? p->P - p0 : p->kc;
            const char *abase = (const char *)ddst + (size_t)pt_dt_bytes(p->ddst_dt, n * p->ddst.s[0] + g * p->OCg * p->ddst.s[1]);
            pt_gemm_pack_panels(uk, false, &ao, abase, NULL, NULL, 0, p->OCg, p0, kc, ap, NULL);
            im2col_chunk(p, src, n, g, j0, nb, p0, kc, col);
            bo.s_row = kc; /* the chunk's rows are kc long */
            pt_gemm_pack_panels(uk, true, &bo, col, NULL, NULL, 0, nb, 0, kc, bp, NULL);
            for (int64_t jj = 0; jj < nb; jj += uk->nr)
                for (int64_t ii = 0; ii < p->OCg; ii += uk->mr) {
                    const int mr = (int)(p->OCg - ii < uk->mr ? p->OCg - ii : uk->mr);
                    const int nr = (int)(nb - jj < uk->nr ? nb - jj : uk->nr);
                    uk->run(kc, (const float *)ap + ii * kc, (const float *)bp + jj * kc, c + ii * ldc + jj, ldc, mr,
                            nr, first ? 0 : 1);
                }
            first = false;
        }
    if (first) /* no positions at all: zero gradients */
        for (int64_t i = 0; i < p->OCg; ++i) memset(c + i * ldc, 0, sizeof(float) * (size_t)nb);
}

/* The items of a run, claimed one at a time by an OpenMP team's threads
 * or by the caller and the helpers that come (runtime/share.h). */
typedef struct {
    const pt_conv_bww_plan *p;
    const pt_gemm_ukernel *uk;
    const void *src, *ddst;
    float *dw;
    char *threads;
    int64_t next;
} bww_job;

static void bww_body(void *v, int tid) {
    bww_job *j = v;
    char *buf = j->threads + (size_t)tid * j->p->thr_bytes;
    for (int64_t w; (w = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED)) < j->p->items;)
        run_item(j->p, j->uk, j->src, j->ddst, j->dw, w, buf);
}

static pt_status bww_run(const pt_fused *f, const pt_tview *in, size_t nin, const pt_tview *out, size_t nout,
                         void *scratch, const pt_exec_ctx *ctx) {
    const pt_conv_bww_plan *p = f->state;
    if (nin < 2 || nout < 1 || !in[0].data || !in[1].data || !out[0].data)
        return pt_err(dnnl_invalid_arguments, "ConvolutionBackwardWeights: buffer missing");
    const void *src = in[p->src_port].data, *ddst = in[p->ddst_port].data;
    if (pt_v5_count(&p->dw) == 0) return dnnl_success;
    if (!scratch) return pt_err(dnnl_invalid_arguments, "ConvolutionBackwardWeights: no scratchpad");
    const pt_gemm_ukernel *uk = pt_gemm_ukernel_default(PT_GEMM_F32);
    float *dw = (float *)((char *)scratch + p->dw_off);
    char *threads = (char *)scratch + p->thr_off;
    int nt = ctx && ctx->nthreads > 0 ? ctx->nthreads : 1;
    if (nt > p->nthr) nt = p->nthr;
    if ((int64_t)nt > p->items) nt = (int)p->items;
    /* Large products on an OpenMP team, small ones on the caller and the
     * helpers of runtime/share.h (a parallel region can cost a scheduler
     * tick), the smallest alone. */
    const double macs = (double)p->ddst.d[0] * (double)p->P * (double)p->OCg * (double)p->K * (double)p->geom.G;
    if (macs < (double)(1 << 16) * nt) nt = 1;
    bww_job job = {p, uk, src, ddst, dw, threads, 0};
    pt_share_team_run(nt, macs >= (double)(1 << 21) * nt, bww_body, &job);
    pt_v5_store(&out[0], &p->dw, dw, ctx);
    return dnnl_success;
}

static void bww_release(pt_fused *f) {
    free(f->state);
    f->state = NULL;
}

pt_status pt_conv_bww_make(const pt_ref_conv_params *geom, const pt_lt *in, bool swap, const pt_lt *dw,
                           dnnl_fpmath_mode_t mode, pt_fused *f) {
    const pt_lt *src = &in[swap ? 1 : 0], *ddst = &in[swap ? 0 : 1];
    if (!is_float(src->data_type) || !is_float(ddst->data_type) || !is_float(dw->data_type))
        return pt_err(dnnl_unimplemented, "ConvolutionBackwardWeights: types");
    if (src->layout_type != dnnl_graph_layout_type_strided || ddst->layout_type != dnnl_graph_layout_type_strided ||
        dw->layout_type != dnnl_graph_layout_type_strided)
        return pt_err(dnnl_unimplemented, "ConvolutionBackwardWeights: layouts");
    const pt_gemm_ukernel *uk = pt_gemm_ukernel_default(PT_GEMM_F32);
    pt_conv_bww_plan *p = calloc(1, sizeof *p);
    if (!p) return dnnl_out_of_memory;
    p->geom = *geom;
    pt_v5_data(src, geom->nxc, &p->src);
    pt_v5_data(ddst, geom->nxc, &p->ddst);
    pt_v5_weights(dw, geom->x_first, &p->dw);
    const pt_v5 *y = &p->ddst;
    const int64_t G = geom->G;
    p->OCg = p->dw.d[0] / G, p->ICg = p->dw.d[1];
    p->T = p->dw.d[2] * p->dw.d[3] * p->dw.d[4];
    p->K = p->ICg * p->T;
    p->P = y->d[2] * y->d[3] * y->d[4];
    /* Positions must be one stride apart in diff_dst (dense spatial dims). */
    p->dd_pos_stride = y->s[4];
    const bool uniform = (y->d[3] == 1 || y->s[3] == y->d[4] * y->s[4]) &&
                         (y->d[2] == 1 || y->s[2] == y->d[3] * y->d[4] * y->s[4]);
    if (!uniform || p->dw.d[0] % G != 0 || p->src.d[1] != p->ICg * G || y->d[1] != p->dw.d[0] ||
        y->d[0] != p->src.d[0]) {
        free(p);
        return pt_err(dnnl_unimplemented, "ConvolutionBackwardWeights: layout or shapes");
    }
    p->src_dt = src->data_type, p->ddst_dt = ddst->data_type;
    p->src_port = swap ? 1 : 0, p->ddst_port = swap ? 0 : 1;
    p->round = mode;
    p->kc = p->P < BWW_KC ? (p->P > 0 ? p->P : 1) : BWW_KC;
    p->nthr = 1;
#ifdef _OPENMP
    p->nthr = omp_get_max_threads() > 0 ? omp_get_max_threads() : 1;
#endif
    /* Columns per item: at least two items per thread where the columns allow. */
    int64_t want = round_up((p->K + 2 * p->nthr - 1) / (2 * p->nthr), uk->nr);
    p->nbw = want < uk->nr ? uk->nr : want > 512 ? 512 : want;
    p->items = G * ((p->K + p->nbw - 1) / p->nbw);
    const size_t f4 = sizeof(float);
    p->dw_off = 0;
    p->thr_off = align64((size_t)pt_v5_count(&p->dw) * f4);
    p->a_off = 0;
    p->col_off = align64((size_t)(round_up(p->OCg, uk->mr) * p->kc) * f4);
    p->b_off = align64(p->col_off + (size_t)(p->nbw * p->kc) * f4);
    p->thr_bytes = align64(p->b_off + (size_t)(round_up(p->nbw, uk->nr) * p->kc) * f4);
    f->run = bww_run;
    f->release = bww_release;
    f->state = p;
    f->scratch_bytes = p->thr_off + (size_t)p->nthr * p->thr_bytes;
    f->kernel_name = uk->name;
    return dnnl_success;
}
