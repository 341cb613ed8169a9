/* The fused gated-MLP kernel (see gated_mlp.h): runs a plan made by
 * compile/lower_gated_mlp.c.
 *
 * Work goes by blocks of src rows.  For one row block the threads first
 * compute its hidden rows (gate and up products by hidden-column block,
 * activation and combine applied per block), then the down product by
 * output-column block; scratch is O(row block × (K + hidden)) shared plus
 * O(tile) per thread.  Weights are read tile by tile, int weights
 * dequantized into the tile on the fly.
 *
 * The arithmetic is the op-by-op one, bit for bit: MatMul products are
 * accumulated in double in k order (exact products, as the reference
 * MatMul), rounded to f32, with f32 operands first rounded as the math mode
 * permits; every intermediate is rounded to its declared type; the
 * element-wise ops run through the reference kernels.  A zero src or hidden
 * value is skipped only where its weight row is finite, which leaves the
 * sums unchanged. */
#include "kernels/fused/gated_mlp.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "ir/dtype.h"
#include "ir/dtype_round.h"
#include "kernels/fused/run_io.h"

#define GM_BM 64                       /* src rows per row block */
#define GM_MB 64                       /* rows per work item (one weight tile serves them all) */
#define GM_NB 64                       /* hidden columns per gate/up work item */
#define GM_KB 128                      /* k rows per gate/up weight tile */
#define GM_JB 64                       /* output columns per down work item */
#define GM_HB 128                      /* hidden rows per down weight tile */
#define GM_COLS 64                     /* max(GM_NB, GM_JB): tile columns */
#define GM_SHARED_CAP (32u << 20)      /* bytes of shared row-block scratch aimed at */
#define GM_ALIGN 64

typedef pt_gm_view gm_view;
typedef pt_gm_weight gm_weight;
typedef pt_gm_branch gm_branch;
typedef pt_gm_plan gm_plan;

/* ---- scratch ------------------------------------------------------------- */

typedef struct {
    size_t a, h, shared;                   /* shared: packed src rows, hidden rows */
    size_t acc, tile, fin, fbuf, gath, ref; /* per thread */
    size_t total;
} gm_layout;

static size_t gm_up(size_t x) { return (x + GM_ALIGN - 1) / GM_ALIGN * GM_ALIGN; }

static gm_layout gm_scratch_layout(const gm_plan *p) {
    gm_layout L;
    size_t bm = (size_t)p->bm;
    L.a = 0;
    L.h = gm_up(bm * (size_t)p->K * sizeof(float));
    L.shared = L.h + gm_up(bm * (size_t)p->N * sizeof(float));
    size_t accd = 2 * GM_MB * GM_NB > GM_MB * GM_JB ? 2 * GM_MB * GM_NB : GM_MB * GM_JB;
    size_t tiled = 2 * GM_KB * GM_NB > GM_HB * GM_JB ? 2 * GM_KB * GM_NB : GM_HB * GM_JB;
    size_t finb = 2 * GM_KB > GM_HB ? 2 * GM_KB : GM_HB;
    L.acc = 0;
    L.tile = L.acc + gm_up(accd * sizeof(double));
    L.fin = L.tile + gm_up(tiled * sizeof(float));
    L.fbuf = L.fin + gm_up(finb);
    L.gath = L.fbuf + gm_up(3 * GM_MB * GM_NB * sizeof(float));
    L.ref = L.gath + gm_up(2 * GM_COLS * sizeof(float));
    L.total = L.ref + gm_up(p->ref_scratch);
    return L;
}

/* ---- run ----------------------------------------------------------------- */

typedef struct {
    const gm_plan *p;
    const void *const *in; /* input port data */
    void *out;
    dnnl_fpmath_mode_t mode;
    pt_exec_ctx ectx;      /* single-threaded context for the element-wise reference kernels
                            * (each thread adds its own scratch) */
} gm_args;

/* Offsets of one output batch index for a weight's data / scales / zps. */
typedef struct {
    int64_t w, s, z;
} gm_woff;

static gm_woff weight_offsets(const gm_weight *W, int nb, const int64_t *bidx) {
    gm_woff o = {0, 0, 0};
    for (int j = 0; j < nb; ++j) {
        o.w += bidx[j] * W->w.bs[j];
        if (W->quant) {
            o.s += bidx[j] / W->bg[j] * W->sc.bs[j];
            o.z += bidx[j] / W->bg[j] * W->zp.bs[j];
        }
    }
    return o;
}

static int64_t view_offset(const gm_view *v, int nb, const int64_t *bidx) {
    int64_t o = 0;
    for (int j = 0; j < nb; ++j) o += bidx[j] * v->bs[j];
    return o;
}

/* Scales or zero points of columns [n0, n0 + nc) on one weight row: `off`
 * addresses the row, `cstride` steps one group along n, `gn` columns share a
 * group. */
static void load_params(const void *base, dnnl_data_type_t dt, int64_t off, int64_t cstride, int64_t gn,
                        int64_t n0, int nc, float *dst) {
    if (gn == 1) {
        pt_run_load(base, dt, off + n0 * cstride, cstride, dst, nc);
        return;
    }
    for (int j0 = 0; j0 < nc;) {
        int64_t grp = (n0 + j0) / gn;
        int64_t end = (grp + 1) * gn - n0;
        int j1 = end < nc ? (int)end : nc;
        float v = pt_load_f32(base, dt, off + grp * cstride);
        for (int j = j0; j < j1; ++j) dst[j] = v;
        j0 = j1;
    }
}

/* Rounds a row to a declared type (the switch outside the loop keeps it vectorizable). */
static void round_row(dnnl_data_type_t dt, float *x, int n) {
    switch ((int)dt) {
        case dnnl_bf16:
            for (int j = 0; j < n; ++j) x[j] = pt_round_bf16(x[j]);
            break;
        case dnnl_f16:
            for (int j = 0; j < n; ++j) x[j] = pt_round_f16(x[j]);
            break;
        default: break;
    }
}

/* Loads rows [k0, k0 + kc) × columns [n0, n0 + nc) of a weight as the
 * MatMul reads it: dequantized and rounded to the DynamicDequantize output
 * type, then rounded as the math mode permits for an f32 operand.  fin[kk]
 * tells whether row kk is all finite.  `gath` holds 2 × GM_COLS floats. */
static void load_tile(const gm_args *A, const gm_weight *W, gm_woff bo, int64_t k0, int kc, int64_t n0,
                      int nc, float *tile, unsigned char *fin, float *gath) {
    const void *wb = A->in[W->w.port];
    const void *sb = W->quant ? A->in[W->sc.port] : NULL;
    const void *zb = W->quant && W->zp.port >= 0 ? A->in[W->zp.port] : NULL;
    float *s = gath, *z = gath + GM_COLS;
    bool round_op = W->op_dt == dnnl_f32 && A->mode != dnnl_fpmath_mode_strict;
    for (int kk = 0; kk < kc; ++kk) {
        int64_t k = k0 + kk;
        float *x = tile + (size_t)kk * nc;
        pt_run_load(wb, W->w.dt, bo.w + k * W->w.rs + n0 * W->w.cs, W->w.cs, x, nc);
        if (W->quant) {
            int64_t g = k / W->gk;
            load_params(sb, W->sc.dt, bo.s + g * W->sc.rs, W->sc.cs, W->gn, n0, nc, s);
            if (zb) {
                load_params(zb, W->zp.dt, bo.z + g * W->zp.rs, W->zp.cs, W->gn, n0, nc, z);
                for (int j = 0; j < nc; ++j) x[j] = (x[j] - z[j]) * s[j];
            } else {
                for (int j = 0; j < nc; ++j) x[j] *= s[j];
            }
            round_row(W->op_dt, x, nc);
        }
        if (round_op)
            for (int j = 0; j < nc; ++j) x[j] = pt_round_fpmath(A->mode, x[j]);
        uint32_t nonfinite = 0; /* all exponent bits set: inf or NaN */
        for (int j = 0; j < nc; ++j) {
            uint32_t u;
            memcpy(&u, &x[j], sizeof u);
            nonfinite |= (u & 0x7f800000u) == 0x7f800000u;
        }
        fin[kk] = !nonfinite;
    }
}

/* acc[r][j] += Σ_k a[r][k]·tile[k][j] over one tile, in k order. */
static void tile_product(const float *a, int64_t lda, int rows, const float *tile, const unsigned char *fin,
                         int kc, int nc, double *acc) {
    for (int r = 0; r < rows; ++r) {
        const float *ar = a + (size_t)r * lda;
        double *accr = acc + (size_t)r * nc;
        for (int kk = 0; kk < kc; ++kk) {
            float av = ar[kk];
            if (av == 0.f && fin[kk]) continue; /* adds ±0 to a sum that is never -0 */
            double ad = (double)av;
            const float *t = tile + (size_t)kk * nc;
            for (int j = 0; j < nc; ++j) accr[j] += ad * (double)t[j];
        }
    }
}

/* A dense [rows, cols] f32 view of a scratch block (leading dim ld). */
static pt_tview block_view(float *data, int rows, int cols, int ld) {
    pt_tview v;
    memset(&v, 0, sizeof v);
    v.lt.ndims = 2;
    v.lt.dims[0] = rows;
    v.lt.dims[1] = cols;
    v.lt.data_type = dnnl_f32;
    v.lt.layout_type = dnnl_graph_layout_type_strided;
    v.lt.layout.strides[0] = ld;
    v.lt.layout.strides[1] = 1;
    v.data = data;
    return v;
}

static void round_block(float *x, int n, dnnl_data_type_t dt) { round_row(dt, x, n); }

/* Hidden rows [r0, r0 + rows) × columns [n0, n0 + nc) of the current row
 * block into H (row stride N). */
static pt_status hidden_block(const gm_args *A, const int64_t *bidx, int64_t m_base, const float *Ablk,
                              int r0, int rows, int64_t n0, int nc, float *H, char *buf, const gm_layout *L) {
    const gm_plan *p = A->p;
    double *acc = (double *)(buf + L->acc);
    float *tiles = (float *)(buf + L->tile);
    unsigned char *fin = (unsigned char *)(buf + L->fin);
    float *fb = (float *)(buf + L->fbuf);
    float *gath = (float *)(buf + L->gath);
    pt_exec_ctx ectx = A->ectx;
    ectx.scratch = p->ref_scratch ? buf + L->ref : NULL;
    ectx.scratch_bytes = p->ref_scratch;
    const int blk = GM_MB * GM_NB;
    memset(acc, 0, sizeof(double) * 2 * (size_t)blk);
    gm_woff wo[2] = {weight_offsets(&p->br[0].W, p->nb, bidx), weight_offsets(&p->br[1].W, p->nb, bidx)};
    for (int64_t k0 = 0; k0 < p->K; k0 += GM_KB) {
        int kc = (int)(p->K - k0 < GM_KB ? p->K - k0 : GM_KB);
        for (int s = 0; s < 2; ++s) {
            float *t = tiles + (size_t)s * GM_KB * GM_NB;
            unsigned char *f = fin + (size_t)s * GM_KB;
            load_tile(A, &p->br[s].W, wo[s], k0, kc, n0, nc, t, f, gath);
            tile_product(Ablk + (size_t)r0 * p->K + k0, p->K, rows, t, f, kc, nc, acc + (size_t)s * blk);
        }
    }
    /* MatMul outputs (bias added in double, as the reference) → branch values. */
    for (int s = 0; s < 2; ++s) {
        const gm_branch *b = &p->br[s];
        float *v = fb + (size_t)s * blk;
        const double *as = acc + (size_t)s * blk;
        int64_t boff = b->has_bias ? view_offset(&b->bias, p->nb, bidx) : 0;
        for (int r = 0; r < rows; ++r)
            for (int j = 0; j < nc; ++j) {
                double x = as[(size_t)r * nc + j];
                if (b->has_bias)
                    x += (double)pt_load_f32(A->in[b->bias.port], b->bias.dt,
                                             boff + (m_base + r0 + r) * b->bias.rs + (n0 + j) * b->bias.cs);
                v[(size_t)r * nc + j] = pt_round_to_dt(b->mm_dt, (float)x);
            }
        pt_tview vv = block_view(v, rows, nc, nc);
        if (b->act == PT_GM_ACT_UNARY) {
            PT_CHECK(b->act_k.run(b->act_k.params, &vv, 1, &vv, 1, &ectx));
            round_block(v, rows * nc, b->act_dt);
        } else if (b->act == PT_GM_ACT_SWISH) {
            float *t = fb + 2 * (size_t)blk;
            pt_tview tv = block_view(t, rows, nc, nc);
            PT_CHECK(b->act_k.run(b->act_k.params, &vv, 1, &tv, 1, &ectx));
            round_block(t, rows * nc, b->act_dt);
            pt_tview ins[2];
            ins[b->g_pos] = vv;
            ins[1 - b->g_pos] = tv;
            PT_CHECK(b->mul_k.run(b->mul_k.params, ins, 2, &vv, 1, &ectx));
            round_block(v, rows * nc, b->mul_dt);
        }
    }
    pt_tview ins[2] = {block_view(fb, rows, nc, nc), block_view(fb + blk, rows, nc, nc)};
    PT_CHECK(p->comb_k.run(p->comb_k.params, ins, 2, &ins[0], 1, &ectx));
    bool round_h = p->h_dt == dnnl_f32 && A->mode != dnnl_fpmath_mode_strict;
    for (int r = 0; r < rows; ++r) {
        float *hr = H + (size_t)(r0 + r) * p->N + n0;
        const float *cr = fb + (size_t)r * nc;
        for (int j = 0; j < nc; ++j) {
            float x = pt_round_to_dt(p->comb_dt, cr[j]);
            if (p->has_tc) x = pt_round_to_dt(p->tc_dt, x);
            hr[j] = round_h ? pt_round_fpmath(A->mode, x) : x;
        }
    }
    return dnnl_success;
}

/* Output rows [r0, r0 + rows) × columns [j0, j0 + jc) of the current row
 * block from its hidden rows H. */
static void down_block(const gm_args *A, const int64_t *bidx, int64_t m_base, const float *H, int r0,
                       int rows, int64_t j0, int jc, char *buf, const gm_layout *L) {
    const gm_plan *p = A->p;
    double *acc = (double *)(buf + L->acc);
    float *tile = (float *)(buf + L->tile);
    unsigned char *fin = (unsigned char *)(buf + L->fin);
    float *gath = (float *)(buf + L->gath);
    memset(acc, 0, sizeof(double) * (size_t)rows * jc);
    gm_woff wo = weight_offsets(&p->Wd, p->nb, bidx);
    for (int64_t h0 = 0; h0 < p->N; h0 += GM_HB) {
        int hc = (int)(p->N - h0 < GM_HB ? p->N - h0 : GM_HB);
        load_tile(A, &p->Wd, wo, h0, hc, j0, jc, tile, fin, gath);
        tile_product(H + (size_t)r0 * p->N + h0, p->N, rows, tile, fin, hc, jc, acc);
    }
    int64_t ooff = view_offset(&p->out, p->nb, bidx);
    int64_t boff = p->has_dbias ? view_offset(&p->dbias, p->nb, bidx) : 0;
    for (int r = 0; r < rows; ++r) {
        int64_t m = m_base + r0 + r;
        for (int j = 0; j < jc; ++j) {
            double x = acc[(size_t)r * jc + j];
            if (p->has_dbias)
                x += (double)pt_load_f32(A->in[p->dbias.port], p->dbias.dt,
                                         boff + m * p->dbias.rs + (j0 + j) * p->dbias.cs);
            float v = pt_round_to_dt(p->dmm_dt, (float)x);
            pt_store_f32(A->out, p->out.dt, ooff + m * p->out.rs + (j0 + j) * p->out.cs, v);
        }
    }
}

/* Work item w of a row block of `rows` rows: GM_MB rows by `colb` of
 * `ncols` columns (nblocks column blocks per row group). */
typedef struct {
    int r0, rows, cols;
    int64_t c0;
} gm_item;

static gm_item work_item(int64_t w, int64_t nblocks, int colb, int rows, int64_t ncols) {
    gm_item it;
    it.r0 = (int)(w / nblocks) * GM_MB;
    it.c0 = (w % nblocks) * colb;
    it.rows = rows - it.r0 < GM_MB ? rows - it.r0 : GM_MB;
    it.cols = (int)(ncols - it.c0 < colb ? ncols - it.c0 : colb);
    return it;
}

static pt_status gm_run(const pt_fused *f, const pt_tview *in, size_t nin, const pt_tview *out, size_t nout,
                        void *scratch, const pt_exec_ctx *ctx) {
    const gm_plan *p = f->state;
    const void *bases[64];
    if (nin > 64 || nout < 1) return pt_err(dnnl_invalid_arguments, "gated_mlp: unexpected port count");
    for (size_t i = 0; i < nin; ++i) bases[i] = in[i].data;
    gm_args A;
    A.p = p;
    A.in = bases;
    A.out = out[0].data;
    A.mode = ctx ? ctx->fpmath : dnnl_fpmath_mode_strict;
    A.ectx.fpmath = A.mode;
    A.ectx.apply_to_int = ctx ? ctx->apply_to_int : 0;
    A.ectx.nthreads = 1;
    if (p->nbatch == 0 || p->M == 0 || p->O == 0) return dnnl_success;
    if (!scratch) return pt_err(dnnl_invalid_arguments, "gated_mlp: no scratchpad");
    const gm_layout L = gm_scratch_layout(p);
    float *Ablk = (float *)((char *)scratch + L.a);
    float *H = (float *)((char *)scratch + L.h);
    char *thr_base = (char *)scratch + L.shared;
    int nthr = p->nthr;
    if (ctx && ctx->nthreads > 0 && ctx->nthreads < nthr) nthr = ctx->nthreads;
    if (nthr < 1) nthr = 1;
    const bool round_a = p->src.dt == dnnl_f32 && A.mode != dnnl_fpmath_mode_strict;
    const int64_t nnb = (p->N + GM_NB - 1) / GM_NB, njb = (p->O + GM_JB - 1) / GM_JB;
    pt_status status = dnnl_success;
#pragma omp parallel num_threads(nthr)
    {
        int tid = pt_thread_id();
        char *buf = thr_base + (size_t)tid * L.total;
        pt_status my = dnnl_success;
        for (int64_t b = 0; b < p->nbatch; ++b) {
            int64_t bidx[PT_GM_MAX_BATCH];
            int64_t rem = b;
            for (int j = p->nb - 1; j >= 0; --j) {
                bidx[j] = rem % p->bdims[j];
                rem /= p->bdims[j];
            }
            int64_t soff = view_offset(&p->src, p->nb, bidx);
            for (int64_t m0 = 0; m0 < p->M; m0 += p->bm) {
                int rows = (int)(p->M - m0 < p->bm ? p->M - m0 : p->bm);
                const int64_t nmb = (rows + GM_MB - 1) / GM_MB;
                /* Packed src rows, as the gate / up MatMuls read them. */
#pragma omp for schedule(static)
                for (int r = 0; r < rows; ++r) {
                    float *ar = Ablk + (size_t)r * p->K;
                    const void *sb = bases[p->src.port];
                    int64_t ro = soff + (m0 + r) * p->src.rs;
                    for (int64_t k = 0; k < p->K; ++k) {
                        float v = pt_load_f32(sb, p->src.dt, ro + k * p->src.cs);
                        ar[k] = round_a ? pt_round_fpmath(A.mode, v) : v;
                    }
                }
#pragma omp for schedule(dynamic, 1)
                for (int64_t w = 0; w < nmb * nnb; ++w) {
                    gm_item it = work_item(w, nnb, GM_NB, rows, p->N);
                    pt_status st = hidden_block(&A, bidx, m0, Ablk, it.r0, it.rows, it.c0, it.cols, H, buf, &L);
                    if (st != dnnl_success) my = st;
                }
#pragma omp for schedule(dynamic, 1)
                for (int64_t w = 0; w < nmb * njb; ++w) {
                    gm_item it = work_item(w, njb, GM_JB, rows, p->O);
                    down_block(&A, bidx, m0, H, it.r0, it.rows, it.c0, it.cols, buf, &L);
                }
            }
        }
        if (my != dnnl_success) {
#pragma omp critical(pt_gated_mlp_status)
            status = my;
        }
    }
    return status;
}

static void release_bound(pt_bound_kernel *k) {
    if (k->release && k->params) k->release(k->params);
    *k = (pt_bound_kernel){0};
}

void pt_gated_mlp_plan_free(gm_plan *p) {
    if (!p) return;
    for (int s = 0; s < 2; ++s) {
        release_bound(&p->br[s].act_k);
        release_bound(&p->br[s].mul_k);
    }
    release_bound(&p->comb_k);
    free(p);
}

static void gm_release(pt_fused *f) {
    pt_gated_mlp_plan_free(f->state);
    f->state = NULL;
}

void pt_gated_mlp_finish(gm_plan *p, pt_fused *fused) {
    /* Row block: the shared packed-src and hidden rows stay within a budget. */
    size_t per_row = ((size_t)p->K + (size_t)p->N) * sizeof(float);
    int64_t bm = per_row ? (int64_t)(GM_SHARED_CAP / per_row) : GM_BM;
    if (bm > GM_BM) bm = GM_BM;
    if (bm > p->M) bm = p->M;
    p->bm = bm < 1 ? 1 : bm;
#ifdef _OPENMP
    p->nthr = omp_get_max_threads();
#else
    p->nthr = 1;
#endif
    if (p->nthr < 1) p->nthr = 1;
    const pt_bound_kernel *ks[] = {&p->br[0].act_k, &p->br[0].mul_k, &p->br[1].act_k, &p->br[1].mul_k, &p->comb_k};
    p->ref_scratch = 0;
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; ++i)
        if (ks[i]->scratch_bytes > p->ref_scratch) p->ref_scratch = ks[i]->scratch_bytes;
    gm_layout L = gm_scratch_layout(p);
    fused->run = gm_run;
    fused->release = gm_release;
    fused->state = p;
    fused->scratch_bytes = L.shared + L.total * (size_t)p->nthr;
}
