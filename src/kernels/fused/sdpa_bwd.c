/* Fused SDPA / GQA training backward, run time (docs/fusion.md,
 * docs/numerics.md).  Work is split over heads (the batch dims of S); a thread walks its
 * head in query blocks and, inside a block, in key blocks.  For each
 * bq × bk tile it recomputes S, P = exp(S2 − stats) and dP, forms dS, and
 * adds the tile's contributions to dQ (rows of the block), dK and dV (the
 * whole head).  The S_q × S_kv matrices never exist; per thread the kernel
 * keeps the head's K / Kᵀ / Vᵀ and the dK / dV accumulators (O(S_kv · D)).
 *
 * Exactness (the benchmark driver compares MatMul outputs exactly) forces
 * the evaluation order of the op-by-op path: every product is a dot product
 * accumulated in double in increasing contraction index and rounded to f32
 * once, like the reference MatMul; every element-wise step is evaluated in
 * f32 and rounded to its declared type; Dc sums O ⊙ dO in f32 along D.  dQ
 * rows add key blocks in key order; dK / dV add query rows in query order,
 * which is why one thread owns a whole head (its dK / dV sums run over all
 * query blocks in order) and parallelism is over heads only.  The GQA
 * ReduceSum runs afterwards in its own order (f32 sum over the reduced axes,
 * row-major) on the dK / dV products rounded to their declared type.
 *
 * Math modes other than strict round f32 MatMul operands to bf16 / f16 /
 * tf32 as the reference MatMul does; nothing else changes. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "ir/dtype.h"
#include "ir/dtype_round.h"
#include "ir/status.h"
#include "kernels/fused/sdpa_bwd_plan.h"
#include "kernels/fused/sdpa_common.h"
#include "kernels/ref/philox.h"

typedef struct {
    int64_t seed, offset;
    pt_dropout_consts k;
} sb_drop_args;

/* ---- run ----------------------------------------------------------------- */

typedef struct {
    const sb_plan *p;
    const void *base[SB_MAX_VIEWS];
    float add[SB_MAX_STEPS], sub[SB_MAX_STEPS]; /* causal offsets, read once */
    sb_drop_args dp_p, dp_dp;
    dnnl_fpmath_mode_t mode;
    float *gk, *gv; /* reduce: per-head dK / dV products */
} sb_args;

/* A declared intermediate type's rounding (identity for f32). */
static inline float sb_round(dnnl_data_type_t dt, float v) { return pt_round_to_dt(dt, v); }

/* What a MatMul does to an f32 operand under a non-strict math mode (as the
 * reference MatMul): bf16 / f16 / tf32 rounding; other types stay. */
static inline float sb_fpmath(dnnl_fpmath_mode_t mode, dnnl_data_type_t dt, float v) {
    return dt == dnnl_f32 ? pt_round_fpmath(mode, v) : v;
}

/* ScaleAndMasks for element (i, j). */
static inline float score_steps(const sb_args *A, const int64_t *boff, int64_t i, int64_t j, float x) {
    const sb_plan *p = A->p;
    for (int s = 0; s < p->nsteps; ++s) {
        const sb_step *st = &p->steps[s];
        const sb_view *va = &p->views[st->a];
        const int64_t oa = boff[st->a] + i * va->rs + j * va->cs;
        switch (st->kind) {
            case SB_MUL: x = x * pt_elem_load(A->base[st->a], va->dt, oa); break;
            case SB_DIV: x = x / pt_elem_load(A->base[st->a], va->dt, oa); break;
            case SB_ADD: x = x + pt_elem_load(A->base[st->a], va->dt, oa); break;
            case SB_SELECT: {
                const sb_view *vb = &p->views[st->b];
                bool cond = pt_elem_load(A->base[st->a], va->dt, oa) != 0.f;
                if (cond != st->keep_true) x = pt_elem_load(A->base[st->b], vb->dt, boff[st->b] + i * vb->rs + j * vb->cs);
                break;
            }
            case SB_CAUSAL: {
                float l = sd_causal_side(st->lhs_col, i, j, st->add >= 0, A->add[s], A->sub[s]);
                float r = sd_causal_side(st->rhs_col, i, j, false, 0.f, 0.f);
                if ((l >= r) != st->keep_true) x = pt_elem_load(A->base[st->a], va->dt, oa);
                break;
            }
        }
        x = sb_round(st->dt, x);
    }
    return x;
}

/* Per-thread scratch (byte offsets). */
typedef struct {
    size_t kd, ktd, vtd;   /* K [S_kv][D], Kᵀ [D][S_kv], Vᵀ [D_v][S_kv] (double, MatMul-rounded) */
    size_t dk, dv;         /* dK [S_kv][D], dV [S_kv][D_v] accumulators (double) */
    size_t qd, dod, dq;    /* block: Q [bq][D], dO [bq][D_v], dQ accumulators [bq][D] (double) */
    size_t sa, pa;         /* tile: S and dP accumulators [bq][bk] (double) */
    size_t pt, dst;        /* tile: dV operand Pᵀ and dS operand [bq][bk] (double) */
    size_t dc, st;         /* block: Dc and stats [bq] (float) */
    size_t total;
} sb_layout;

static sb_layout sb_scratch_layout(const sb_plan *p) {
    sb_layout L;
    const size_t bq = (size_t)p->bq, bk = (size_t)p->bk, D = (size_t)p->dqk, DV = (size_t)p->dv;
    const size_t SKV = (size_t)p->skv, d = sizeof(double);
    size_t *const fields[] = {&L.kd, &L.ktd, &L.vtd, &L.dk, &L.dv, &L.qd, &L.dod,
                              &L.dq, &L.sa,  &L.pa,  &L.pt, &L.dst, &L.dc, &L.st};
    const size_t bytes[] = {SKV * D * d, SKV * D * d, SKV * DV * d, SKV * D * d, SKV * DV * d,
                            bq * D * d,  bq * DV * d, bq * D * d,   bq * bk * d, bq * bk * d,
                            bq * bk * d, bq * bk * d, bq * sizeof(float), bq * sizeof(float)};
    L.total = sd_carve(fields, bytes, (int)(sizeof bytes / sizeof bytes[0]));
    return L;
}

/* Dropout of element `lin` (row-major index in S) with value v. */
static inline float drop_value(const sb_drop_args *d, uint64_t lin, float v) {
    return pt_dropout_keep(&d->k, lin, d->seed, d->offset) ? v * d->k.inv_q : 0.f;
}

/* Element-wise part of one tile: rows [0, mq) of the block at i0, keys
 * [j0, j0 + nk). */
static void tile_elements(const sb_args *A, const int64_t *boff, int64_t b, int64_t i0, int mq, int64_t j0, int nk,
                          char *buf, const sb_layout *L) {
    const sb_plan *p = A->p;
    const int bk = p->bk;
    const double *sa = (const double *)(buf + L->sa), *pa = (const double *)(buf + L->pa);
    double *ptile = (double *)(buf + L->pt), *dtile = (double *)(buf + L->dst);
    const float *dc = (const float *)(buf + L->dc), *stats = (const float *)(buf + L->st);
    const sb_view *vsc = &p->views[p->vscale];
    const sb_view *vdm = p->vdm >= 0 ? &p->views[p->vdm] : NULL;
    for (int r = 0; r < mq; ++r) {
        const int64_t i = i0 + r;
        const uint64_t lin0 = ((uint64_t)b * (uint64_t)p->sq + (uint64_t)i) * (uint64_t)p->skv;
        for (int cc = 0; cc < nk; ++cc) {
            const int64_t j = j0 + cc;
            const uint64_t lin = lin0 + (uint64_t)j;
            /* P = exp(ScaleAndMasks(S) − stats). */
            float x = sb_round(p->s_dt, (float)sa[(size_t)r * bk + cc]);
            x = score_steps(A, boff, i, j, x);
            x = sb_round(p->sub_dt, x - stats[r]);
            const float pv = sb_round(p->p_dt, expf(x));
            /* dV operand: P → Dropout? → TypeCast?. */
            float pd = pv;
            if (p->drop_p.on) pd = sb_round(p->drop_p.dt, drop_value(&A->dp_p, lin, pd));
            pd = sb_fpmath(A->mode, p->pc_dt, sb_round(p->pc_dt, pd));
            ptile[(size_t)r * bk + cc] = (double)pd;
            /* dS0 = P ⊙ (dP [dropped] − Dc). */
            float dpv = sb_round(p->dp_dt, (float)pa[(size_t)r * bk + cc]);
            if (p->drop_dp.on) dpv = sb_round(p->drop_dp.dt, drop_value(&A->dp_dp, lin, dpv));
            const float t = sb_round(p->sd_dt, dpv - dc[r]);
            const float s0 = sb_round(p->ds0_dt, pv * t);
            if (vdm) pt_elem_store((void *)A->base[p->vdm], vdm->dt, boff[p->vdm] + i * vdm->rs + j * vdm->cs, s0);
            const float f = pt_elem_load(A->base[p->vscale], vsc->dt, boff[p->vscale] + i * vsc->rs + j * vsc->cs);
            float ds = sb_round(p->ds_dt, p->scale_div ? s0 / f : s0 * f);
            ds = sb_fpmath(A->mode, p->dsc_dt, sb_round(p->dsc_dt, ds));
            dtile[(size_t)r * bk + cc] = (double)ds;
        }
    }
}

/* Stores the head's dK or dV products: to the port, or (reduce) rounded to
 * the MatMul's declared type into the per-head buffer. */
static void store_grad(const sb_args *A, const sb_grad *g, const int64_t *boff, int64_t b, const double *acc,
                       int64_t n, float *gbuf) {
    const sb_plan *p = A->p;
    if (g->reduce) {
        float *dst = gbuf + (size_t)b * (size_t)p->skv * (size_t)n;
        for (int64_t e = 0; e < p->skv * n; ++e) dst[e] = sb_round(g->mm_dt, (float)acc[e]);
        return;
    }
    const sb_view *v = &p->views[g->view];
    for (int64_t j = 0; j < p->skv; ++j)
        for (int64_t d = 0; d < n; ++d)
            pt_elem_store((void *)A->base[g->view], v->dt, boff[g->view] + j * v->rs + d * v->cs, (float)acc[j * n + d]);
}

/* One head: batch index b of S. */
static void sb_head(const sb_args *A, int64_t b, char *buf, const sb_layout *L) {
    const sb_plan *p = A->p;
    const int64_t D = p->dqk, DV = p->dv, SKV = p->skv, SQ = p->sq;
    const int bq = p->bq, bk = p->bk;
    int64_t bidx[SB_MAX_BATCH];
    sd_batch_index(b, p->nb, p->bdims, bidx);
    int64_t boff[SB_MAX_VIEWS];
    for (int v = 0; v < p->nviews; ++v) {
        int64_t off = 0;
        for (int i = 0; i < p->nb; ++i) off += bidx[i] * p->views[v].bs[i];
        boff[v] = off;
    }
    double *kd = (double *)(buf + L->kd), *ktd = (double *)(buf + L->ktd), *vtd = (double *)(buf + L->vtd);
    double *dk = (double *)(buf + L->dk), *dv = (double *)(buf + L->dv);
    double *qd = (double *)(buf + L->qd), *dod = (double *)(buf + L->dod), *dq = (double *)(buf + L->dq);
    double *sa = (double *)(buf + L->sa), *pa = (double *)(buf + L->pa);
    const double *ptile = (const double *)(buf + L->pt), *dtile = (const double *)(buf + L->dst);
    float *dc = (float *)(buf + L->dc), *stats = (float *)(buf + L->st);

    const sb_view *vk = &p->views[p->vk], *vv = &p->views[p->vv];
    for (int64_t j = 0; j < SKV; ++j) {
        for (int64_t d = 0; d < D; ++d) {
            float x = sb_fpmath(A->mode, p->k_dt,
                                pt_elem_load(A->base[p->vk], vk->dt, boff[p->vk] + j * vk->rs + d * vk->cs));
            kd[j * D + d] = ktd[d * SKV + j] = (double)x;
        }
        for (int64_t e = 0; e < DV; ++e)
            vtd[e * SKV + j] = (double)sb_fpmath(A->mode, p->v_dt,
                                                 pt_elem_load(A->base[p->vv], vv->dt, boff[p->vv] + j * vv->rs + e * vv->cs));
    }
    memset(dk, 0, (size_t)(SKV * D) * sizeof(double));
    memset(dv, 0, (size_t)(SKV * DV) * sizeof(double));

    const sb_view *vq = &p->views[p->vq], *vdo = &p->views[p->vdo], *vst = &p->views[p->vstats];
    const sb_view *vom = &p->views[p->vo_mul], *vdm = &p->views[p->vdo_mul], *vdq = &p->views[p->vdq];
    for (int64_t i0 = 0; i0 < SQ; i0 += bq) {
        const int mq = (int)(SQ - i0 < bq ? SQ - i0 : bq);
        for (int r = 0; r < mq; ++r) {
            const int64_t i = i0 + r;
            for (int64_t d = 0; d < D; ++d)
                qd[r * D + d] = (double)sb_fpmath(A->mode, p->q_dt,
                                                  pt_elem_load(A->base[p->vq], vq->dt, boff[p->vq] + i * vq->rs + d * vq->cs));
            /* dO for the products (MatMul-rounded) and Dc from the raw O ⊙ dO. */
            float acc = 0.f;
            for (int64_t e = 0; e < DV; ++e) {
                float g = pt_elem_load(A->base[p->vdo], vdo->dt, boff[p->vdo] + i * vdo->rs + e * vdo->cs);
                dod[r * DV + e] = (double)sb_fpmath(A->mode, p->do_dt, g);
                float o = pt_elem_load(A->base[p->vo_mul], vom->dt, boff[p->vo_mul] + i * vom->rs + e * vom->cs);
                float g2 = pt_elem_load(A->base[p->vdo_mul], vdm->dt, boff[p->vdo_mul] + i * vdm->rs + e * vdm->cs);
                acc = acc + sb_round(p->od_dt, o * g2);
            }
            dc[r] = sb_round(p->dc_dt, acc);
            stats[r] = pt_elem_load(A->base[p->vstats], vst->dt, boff[p->vstats] + i * vst->rs);
        }
        memset(dq, 0, (size_t)mq * (size_t)D * sizeof(double));
        for (int64_t j0 = 0; j0 < SKV; j0 += bk) {
            const int nk = (int)(SKV - j0 < bk ? SKV - j0 : bk);
            /* S = Q·Kᵀ and dP = dO·Vᵀ for the tile, contraction index ascending. */
            for (int r = 0; r < mq; ++r) {
                double *srow = sa + (size_t)r * bk, *prow = pa + (size_t)r * bk;
                for (int cc = 0; cc < nk; ++cc) srow[cc] = prow[cc] = 0.0;
                for (int64_t d = 0; d < D; ++d) {
                    const double qv = qd[r * D + d];
                    const double *kr = ktd + d * SKV + j0;
                    for (int cc = 0; cc < nk; ++cc) srow[cc] += qv * kr[cc];
                }
                for (int64_t e = 0; e < DV; ++e) {
                    const double gv = dod[r * DV + e];
                    const double *vr = vtd + e * SKV + j0;
                    for (int cc = 0; cc < nk; ++cc) prow[cc] += gv * vr[cc];
                }
            }
            tile_elements(A, boff, b, i0, mq, j0, nk, buf, L);
            /* dQ rows: keys in order.  dK / dV: query rows in order. */
            for (int r = 0; r < mq; ++r) {
                double *qa = dq + (size_t)r * D;
                for (int cc = 0; cc < nk; ++cc) {
                    const double w = dtile[(size_t)r * bk + cc];
                    const double *kr = kd + (j0 + cc) * D;
                    for (int64_t d = 0; d < D; ++d) qa[d] += w * kr[d];
                }
            }
            for (int cc = 0; cc < nk; ++cc) {
                double *ka = dk + (j0 + cc) * D, *va = dv + (j0 + cc) * DV;
                for (int r = 0; r < mq; ++r) {
                    const double w = dtile[(size_t)r * bk + cc], u = ptile[(size_t)r * bk + cc];
                    const double *qr = qd + r * D, *gr = dod + r * DV;
                    for (int64_t d = 0; d < D; ++d) ka[d] += w * qr[d];
                    for (int64_t e = 0; e < DV; ++e) va[e] += u * gr[e];
                }
            }
        }
        for (int r = 0; r < mq; ++r)
            for (int64_t d = 0; d < D; ++d)
                pt_elem_store((void *)A->base[p->vdq], vdq->dt, boff[p->vdq] + (i0 + r) * vdq->rs + d * vdq->cs,
                      (float)dq[(size_t)r * D + d]);
    }
    store_grad(A, &p->gk, boff, b, dk, D, A->gk);
    store_grad(A, &p->gv, boff, b, dv, DV, A->gv);
}

/* Work item b of a run: one head. */
typedef struct {
    const sb_args *A;
    sb_layout L;
} sb_work;

static void sb_work_item(const void *arg, int64_t b, char *buf) {
    const sb_work *W = arg;
    sb_head(W->A, b, buf, &W->L);
}

/* The GQA ReduceSum of one (kept batch, sequence) row: f32 sum of the heads
 * in the reference's order, stored in the port type. */
static void reduce_row(const sb_args *A, const sb_grad *g, const float *gbuf, int64_t n, int64_t kept, int64_t j) {
    const sb_plan *p = A->p;
    const sb_view *v = &p->views[g->view];
    const int64_t *heads = g->heads + kept * g->nred;
    int64_t bidx[SB_MAX_BATCH], off = 0;
    sd_batch_index(heads[0], p->nb, p->bdims, bidx);
    for (int i = 0; i < p->nb; ++i) off += bidx[i] * v->bs[i];
    for (int64_t d = 0; d < n; ++d) {
        float acc = 0.f;
        for (int64_t r = 0; r < g->nred; ++r) acc = acc + gbuf[((size_t)heads[r] * (size_t)p->skv + (size_t)j) * (size_t)n + (size_t)d];
        pt_elem_store((void *)A->base[g->view], v->dt, off + j * v->rs + d * v->cs, acc);
    }
}

static bool read_i64(const void *data, dnnl_data_type_t dt, int64_t *v) {
    if (!data) return false;
    switch ((int)dt) {
        case dnnl_s64: memcpy(v, data, sizeof *v); return true;
        case dnnl_s32: {
            int32_t x;
            memcpy(&x, data, sizeof x);
            *v = x;
            return true;
        }
        default:
            if (pt_dt_bits(dt) == 0) return false;
            *v = pt_f64_to_s64(pt_load_f64(data, dt, 0));
            return true;
    }
}

static pt_status drop_args(const sb_args *A, const sb_drop *d, sb_drop_args *out) {
    if (!d->on) return dnnl_success;
    const sb_plan *p = A->p;
    if (!read_i64(A->base[d->seed], p->views[d->seed].dt, &out->seed) ||
        !read_i64(A->base[d->offset], p->views[d->offset].dt, &out->offset) || !A->base[d->prob] ||
        pt_dt_bits(p->views[d->prob].dt) == 0)
        return pt_err(dnnl_invalid_arguments, "sdpa backward: dropout seed / offset / probability unreadable");
    out->k = pt_dropout_prepare(pt_load_f32(A->base[d->prob], p->views[d->prob].dt, 0));
    return dnnl_success;
}

pt_status pt_sdpa_bwd_run(const pt_fused *f, const pt_tview *in, size_t nin, const pt_tview *out, size_t nout,
                          void *scratch, const pt_exec_ctx *ctx) {
    const sb_plan *p = f->state;
    sb_args A = {.p = p, .mode = ctx ? ctx->fpmath : dnnl_fpmath_mode_strict};
    for (int v = 0; v < p->nviews; ++v) {
        const sb_view *vw = &p->views[v];
        if ((size_t)vw->port >= (vw->is_out ? nout : nin))
            return pt_err(dnnl_invalid_arguments, "sdpa backward: port %d not bound", vw->port);
        A.base[v] = vw->is_out ? out[vw->port].data : in[vw->port].data;
    }
    for (int s = 0; s < p->nsteps; ++s) {
        const sb_step *st = &p->steps[s];
        if (st->kind == SB_CAUSAL && st->add >= 0) {
            A.add[s] = pt_elem_load(A.base[st->add], p->views[st->add].dt, 0);
            A.sub[s] = pt_elem_load(A.base[st->sub], p->views[st->sub].dt, 0);
        }
    }
    PT_CHECK(drop_args(&A, &p->drop_p, &A.dp_p));
    PT_CHECK(drop_args(&A, &p->drop_dp, &A.dp_dp));
    if (p->nbatch == 0) return dnnl_success;
    if (!scratch) return pt_err(dnnl_invalid_arguments, "sdpa backward: no scratchpad");
    A.gk = p->gk.reduce ? (float *)((char *)scratch + p->gk_off) : NULL;
    A.gv = p->gv.reduce ? (float *)((char *)scratch + p->gv_off) : NULL;
    const sb_work W = {.A = &A, .L = sb_scratch_layout(p)};
    const int nthr = sd_threads(p->nthr, ctx, INT64_MAX);
    sd_parallel(sd_threads(p->nthr, ctx, p->nbatch), p->nbatch, scratch, W.L.total, sb_work_item, &W);
    const sb_grad *gs[2] = {&p->gk, &p->gv};
    const float *bufs[2] = {A.gk, A.gv};
    const int64_t widths[2] = {p->dqk, p->dv};
    for (int k = 0; k < 2; ++k) {
        if (!gs[k]->reduce) continue;
        const int64_t rows = gs[k]->nkept * p->skv;
#pragma omp parallel for schedule(static) num_threads(nthr) if (rows * gs[k]->nred * widths[k] > 32768)
        for (int64_t w = 0; w < rows; ++w) reduce_row(&A, gs[k], bufs[k], widths[k], w / p->skv, w % p->skv);
    }
    return dnnl_success;
}

void pt_sdpa_bwd_free_plan(sb_plan *p) {
    if (!p) return;
    free(p->gk.heads);
    free(p->gv.heads);
    free(p);
}

void pt_sdpa_bwd_release(pt_fused *f) {
    pt_sdpa_bwd_free_plan(f->state);
    f->state = NULL;
}

size_t pt_sdpa_bwd_plan_blocks(sb_plan *p, int nthr) {
    p->bq = (int)(p->sq < SB_BQ ? (p->sq > 0 ? p->sq : 1) : SB_BQ);
    p->bk = (int)(p->skv < SB_BK ? (p->skv > 0 ? p->skv : 1) : SB_BK);
    p->nthr = nthr < 1 ? 1 : nthr;
    if ((int64_t)p->nthr > p->nbatch) p->nthr = p->nbatch > 0 ? (int)p->nbatch : 1;
    p->thr_bytes = sb_scratch_layout(p).total;
    size_t at = p->thr_bytes * (size_t)p->nthr;
    const size_t heads = (size_t)p->nbatch * (size_t)p->skv;
    if (p->gk.reduce) p->gk_off = sd_take(&at, heads * (size_t)p->dqk * sizeof(float));
    if (p->gv.reduce) p->gv_off = sd_take(&at, heads * (size_t)p->dv * sizeof(float));
    return at;
}
