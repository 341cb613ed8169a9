/* Fused SDPA forward, run time (docs/fusion.md, docs/numerics.md).  Work
 * is split over (batch..., query block); keys and values are streamed in
 * blocks (dequantized as each block is loaded), the score chain (scale,
 * masks, soft-cap) is applied per element, and the S_q × S_kv score matrix
 * never exists: per-thread scratch is O(block × head size) whatever the
 * sequence lengths.  Two evaluation orders:
 *
 *  - exact (math mode strict, and any mode where P is rounded to a narrow
 *    type or quantized before the second MatMul): the op-by-op arithmetic,
 *    bit for bit, in three passes over the key blocks of a query block.
 *    Pass 1 takes each row's maximum; pass 2 the sequential f32 sum of
 *    exp(x - max) in key order, as the reference SoftMax; pass 3 forms
 *    exp(x - max) / sum exactly as the reference does, sends it through P's
 *    transforms (casts, Quantize → Dequantize, Dropout) and accumulates P·V
 *    in double in key order, as the reference MatMul.  Scores are dot
 *    products accumulated in double and rounded to the first MatMul's type,
 *    then through the chain's declared types.  Each pass recomputes the
 *    scores of a block (a bounded per-thread cache of SD_CACHE_COLS columns
 *    saves the recomputation when S_kv fits in it), trading up to three
 *    Q·Kᵀ products for memory that does not grow with S_kv.
 *  - online (any other math mode, which permits approximate f32 math, when P
 *    reaches the second MatMul unrounded): flash-attention streaming in one
 *    pass with a running max and sum and a rescaled f32 accumulator. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ir/dtype.h"
#include "ir/status.h"
#include "kernels/fused/sdpa_common.h"
#include "kernels/fused/sdpa_plan.h"
#include "kernels/fused/sdpa_tiles.h"
#include "kernels/ref/philox.h"

#define SD_BQ 32           /* query rows per block */
#define SD_BK 64           /* keys per block */
#define SD_CACHE_COLS 512  /* exact order: scores kept per row when S_kv fits */

/* ---- run-time arguments ------------------------------------------------------ */

typedef struct {
    const sd_plan *p;
    const void *base[SD_MAX_VIEWS];
    float add[SD_MAX_STEPS], sub[SD_MAX_STEPS]; /* causal offsets, read once */
    int64_t seed, offset;                       /* dropout */
    pt_dropout_consts dc;
    bool exact;
} sd_args;

static inline int64_t view_off(const sd_view *v, int64_t boff, int64_t i, int64_t j) {
    if (!v->grouped) return boff + i * v->rs + j * v->cs;
    return boff + (i / v->rg) * v->rs + (j / v->cg) * v->cs;
}

/* Element (i, j) of an operand: loaded, dequantized, rounded through its types. */
static inline float operand_at(const sd_args *A, const int64_t *boff, const sd_operand *o, int64_t i, int64_t j) {
    const sd_plan *p = A->p;
    const sd_view *sv = &p->views[o->src];
    float x = pt_elem_load(A->base[o->src], sv->dt, view_off(sv, boff[o->src], i, j));
    if (o->sc >= 0) {
        const sd_view *cv = &p->views[o->sc];
        float s = pt_elem_load(A->base[o->sc], cv->dt, view_off(cv, boff[o->sc], i, j));
        if (o->zp >= 0) {
            const sd_view *zv = &p->views[o->zp];
            x = (x - pt_elem_load(A->base[o->zp], zv->dt, view_off(zv, boff[o->zp], i, j))) * s;
        } else {
            x = x * s;
        }
    }
    for (int t = 0; t < o->ndts; ++t) x = pt_elem_round(o->dts[t], x);
    return x;
}

/* Rows [i0, i0+n) × columns [0, ncols) of an operand into dst[r·ld + c]
 * (or dst[c·ld + r] when `transposed`). */
static void load_operand(const sd_args *A, const int64_t *boff, const sd_operand *o, int64_t i0, int n,
                         int64_t ncols, float *dst, size_t ld, bool transposed) {
    const sd_view *sv = &A->p->views[o->src];
    const size_t sr = transposed ? 1 : ld, sc = transposed ? ld : 1; /* dst strides of a row / column */
    if (o->sc >= 0 || o->ndts != 0 || (sv->dt != dnnl_f32 && sv->dt != dnnl_bf16 && sv->dt != dnnl_f16)) {
        for (int r = 0; r < n; ++r)
            for (int64_t d = 0; d < ncols; ++d)
                dst[(size_t)r * sr + (size_t)d * sc] = operand_at(A, boff, o, i0 + r, d);
        return;
    }
    for (int r = 0; r < n; ++r) {
        const int64_t off = boff[o->src] + (i0 + r) * sv->rs, cs = sv->cs;
        float *out = dst + (size_t)r * sr;
        if (sv->dt == dnnl_f32) {
            const float *src = (const float *)A->base[o->src] + off;
            if (cs == 1 && sc == 1) memcpy(out, src, sizeof(float) * (size_t)ncols);
            else
                for (int64_t d = 0; d < ncols; ++d) out[(size_t)d * sc] = src[d * cs];
        } else {
            const uint16_t *src = (const uint16_t *)A->base[o->src] + off;
            if (sv->dt == dnnl_bf16)
                for (int64_t d = 0; d < ncols; ++d) out[(size_t)d * sc] = pt_bf16_to_f32(src[d * cs]);
            else
                for (int64_t d = 0; d < ncols; ++d) out[(size_t)d * sc] = pt_f16_to_f32(src[d * cs]);
        }
    }
}

/* Rounds x[0..n) to a declared type. */
static void round_row(dnnl_data_type_t dt, float *x, int n) {
    if (dt == dnnl_f32) return;
    for (int c = 0; c < n; ++c) x[c] = pt_elem_round(dt, x[c]);
}

/* x[c] = x[c] op a[c], op one of the chain's binary steps, with the operand
 * read through view `va` at row i, columns j0 + c. */
static void binary_row(const sd_args *A, int view, int64_t boff, sd_kind kind, int64_t i, int64_t j0, float *x,
                       int n) {
    const sd_view *va = &A->p->views[view];
    const void *base = A->base[view];
    const int64_t off = boff + i * va->rs + j0 * va->cs, cs = va->cs;
    if (va->dt == dnnl_f32 && cs == 0) { /* a scale: one factor for the row */
        const float f = ((const float *)base)[off];
        if (kind == SD_MUL)
            for (int c = 0; c < n; ++c) x[c] = x[c] * f;
        else if (kind == SD_DIV)
            for (int c = 0; c < n; ++c) x[c] = x[c] / f;
        else
            for (int c = 0; c < n; ++c) x[c] = x[c] + f;
        return;
    }
    for (int c = 0; c < n; ++c) {
        const float a = pt_elem_load(base, va->dt, off + c * cs);
        x[c] = kind == SD_MUL ? x[c] * a : kind == SD_DIV ? x[c] / a : x[c] + a;
    }
}

/* The score chain on row i, columns [j0, j0+n) of the batch whose view
 * offsets are boff: one step at a time over the row. */
static void apply_steps_row(const sd_args *A, const int64_t *boff, int64_t i, int64_t j0, float *x, int n) {
    const sd_plan *p = A->p;
    for (int s = 0; s < p->nsteps; ++s) {
        const sd_step *st = &p->steps[s];
        const sd_view *va = st->a >= 0 ? &p->views[st->a] : NULL;
        const int64_t oa = va ? boff[st->a] + i * va->rs + j0 * va->cs : 0;
        switch (st->kind) {
            case SD_MUL:
            case SD_DIV:
            case SD_ADD: binary_row(A, st->a, boff[st->a], st->kind, i, j0, x, n); break;
            case SD_SELECT: {
                const sd_view *vb = &p->views[st->b];
                const int64_t ob = boff[st->b] + i * vb->rs + j0 * vb->cs;
                for (int c = 0; c < n; ++c) {
                    bool cond = pt_elem_load(A->base[st->a], va->dt, oa + c * va->cs) != 0.f;
                    if (cond != st->keep_true) x[c] = pt_elem_load(A->base[st->b], vb->dt, ob + c * vb->cs);
                }
                break;
            }
            case SD_CAUSAL: {
                const bool off = st->add >= 0;
                for (int c = 0; c < n; ++c) {
                    const int64_t j = j0 + c;
                    float l = sd_causal_side(st->lhs_col, i, j, off, A->add[s], A->sub[s]);
                    float r = sd_causal_side(st->rhs_col, i, j, false, 0.f, 0.f);
                    if ((l >= r) != st->keep_true) x[c] = pt_elem_load(A->base[st->a], va->dt, oa + c * va->cs);
                }
                break;
            }
            case SD_TANH:
                for (int c = 0; c < n; ++c) x[c] = tanhf(x[c]);
                break;
        }
        round_row(st->dt, x, n);
    }
}

/* P's transforms for element (i, j) of batch b (row-major index for Dropout). */
static inline float apply_px(const sd_args *A, const int64_t *boff, int64_t b, int64_t i, int64_t j, float v) {
    const sd_plan *p = A->p;
    for (int t = 0; t < p->npx; ++t) {
        const sd_xform *x = &p->px[t];
        switch (x->kind) {
            case SD_X_ROUND: v = pt_elem_round(x->dt, v); break;
            case SD_X_QUANT: v = pt_elem_round(x->dt, x->has_zp ? v * x->inv + x->zp : v * x->inv); break;
            case SD_X_DEQUANT: v = pt_elem_round(x->dt, x->has_zp ? (v - x->zp) * x->scale : v * x->scale); break;
            case SD_X_DROPOUT: {
                uint64_t lin = (uint64_t)((b * p->sq + i) * p->skv + j);
                bool keep = pt_dropout_keep(&A->dc, lin, A->seed, A->offset);
                v = pt_elem_round(x->dt, keep ? v * A->dc.inv_q : 0.f);
                if (p->vmask >= 0) {
                    const sd_view *mv = &p->views[p->vmask];
                    pt_elem_store((void *)A->base[p->vmask], mv->dt, boff[p->vmask] + i * mv->rs + j * mv->cs,
                          keep ? 1.f : 0.f);
                }
                break;
            }
        }
    }
    return v;
}

/* ---- per-thread scratch ------------------------------------------------------- */

/* Byte offsets inside one thread's scratch; all sizes are O(block × head
 * size), none depends on S_q or S_kv beyond the bounded score cache. */
typedef struct {
    size_t qf, kt, vf; /* Q block [bq][D], K block transposed [D][bk], V block [bk][Dv] (f32) */
    size_t qd, kd, vd; /* exact: the same blocks widened to f64 */
    size_t sb;         /* scores of the block [bq][bk] (f32) */
    size_t pd;         /* exact: probabilities of the block [bq][bk] (f64) */
    size_t pf;         /* online: weights of the block [bq][bk] (f32) */
    size_t dacc;       /* exact: output accumulators [bq][Dv] (f64) */
    size_t acc;        /* online: output accumulators [bq][Dv] (f32) */
    size_t m, l;       /* row max / sum [bq] */
    size_t cache;      /* exact: scores [bq][cache_cols] when S_kv fits */
    size_t orow;       /* one output row [Dv] (f32) */
    size_t total;
} sd_layout;

static sd_layout sd_scratch_layout(const sd_plan *p) {
    sd_layout L;
    const size_t bq = (size_t)p->bq, bk = (size_t)p->bk, D = (size_t)p->dqk, DV = (size_t)p->dv;
    const size_t f = sizeof(float), d = sizeof(double);
    size_t *const fields[] = {&L.qf, &L.kt, &L.vf,   &L.qd, &L.kd, &L.vd,    &L.sb,   &L.pd,
                              &L.pf, &L.dacc, &L.acc, &L.m,  &L.l,  &L.cache, &L.orow};
    const size_t bytes[] = {bq * D * f,  D * bk * f,  bk * DV * f, bq * D * d, D * bk * d,
                            bk * DV * d, bq * bk * f, bq * bk * d, bq * bk * f, bq * DV * d,
                            bq * DV * f, bq * f,      bq * f,      bq * (size_t)p->cache_cols * f, DV * f};
    L.total = sd_carve(fields, bytes, (int)(sizeof bytes / sizeof bytes[0]));
    return L;
}

void pt_sdpa_fwd_plan_blocks(sd_plan *p, int nthr) {
    p->bq = (int)(p->sq < SD_BQ ? (p->sq > 0 ? p->sq : 1) : SD_BQ);
    p->bk = (int)(p->skv < SD_BK ? (p->skv > 0 ? p->skv : 1) : SD_BK);
    p->cache_cols = p->skv > p->bk && p->skv <= SD_CACHE_COLS ? (int)p->skv : 0;
    p->nthr = nthr;
    p->thr_bytes = sd_scratch_layout(p).total;
}

void pt_sdpa_fwd_release(pt_fused *f) {
    sd_plan *p = f->state;
    if (p)
        for (int k = 0; k < p->nkonst; ++k) free(p->konst[k]);
    free(p);
    f->state = NULL;
}

/* ---- the two orders ------------------------------------------------------------ */

/* Everything one query block needs. */
typedef struct {
    const sd_args *A;
    const int64_t *boff;
    int64_t b, i0;
    int mq;
    char *buf;
    const sd_layout *L;
} sd_block_ctx;

#define SCR(B, T, field) ((T *)((B)->buf + (B)->L->field))

static void widen(const float *src, size_t n, double *dst) {
    for (size_t e = 0; e < n; ++e) dst[e] = (double)src[e];
}

/* Scores of rows [i0, i0+mq) × keys [j0, j0+nk) into sb[r][c]: the K block
 * is loaded (and dequantized), multiplied (f64 accumulation in d order and
 * one f32 rounding, as the reference MatMul, in the exact order), rounded to
 * the MatMul's type, then sent through the chain. */
static void block_scores(const sd_block_ctx *B, int64_t j0, int nk) {
    const sd_args *A = B->A;
    const sd_plan *p = A->p;
    const int64_t D = p->dqk;
    const int bk = p->bk;
    float *kt = SCR(B, float, kt), *sb = SCR(B, float, sb);
    load_operand(A, B->boff, &p->k, j0, nk, D, kt, (size_t)bk, true);
    if (A->exact) {
        double *kd = SCR(B, double, kd);
        for (int64_t d = 0; d < D; ++d) widen(kt + d * bk, (size_t)nk, kd + d * bk);
        pt_sdpa_qk_f64(SCR(B, double, qd), B->mq, D, kd, bk, nk, sb, bk);
    } else {
        pt_sdpa_qk_f32(SCR(B, float, qf), B->mq, D, kt, bk, nk, sb, bk);
    }
    for (int r = 0; r < B->mq; ++r) {
        float *srow = sb + (size_t)r * bk;
        round_row(p->s_dt, srow, nk);
        apply_steps_row(A, B->boff, B->i0 + r, j0, srow, nk);
    }
}

/* Scores of key block [j0, j0+nk) for the exact order's pass `pass`: from
 * the cache after pass 1 when S_kv fits (or from sb when there is a single
 * key block), else recomputed.  Returns the row-major [mq][*stride] scores. */
static const float *exact_scores(const sd_block_ctx *B, int pass, int64_t j0, int nk, size_t *stride) {
    const sd_plan *p = B->A->p;
    float *cache = SCR(B, float, cache), *sb = SCR(B, float, sb);
    if (pass > 1 && p->cache_cols > 0) {
        *stride = (size_t)p->cache_cols;
        return cache + j0;
    }
    *stride = (size_t)p->bk;
    if (pass > 1 && p->skv <= p->bk) return sb;
    block_scores(B, j0, nk);
    if (p->cache_cols > 0)
        for (int r = 0; r < B->mq; ++r)
            memcpy(cache + (size_t)r * p->cache_cols + j0, sb + (size_t)r * p->bk, sizeof(float) * (size_t)nk);
    return sb;
}

/* Applies O's transforms to one output row and stores it with its stats. */
static void store_row(const sd_block_ctx *B, int64_t i, const float *orow, float stat) {
    const sd_args *A = B->A;
    const sd_plan *p = A->p;
    const sd_view *o = &p->views[p->vo];
    int64_t ro = B->boff[p->vo] + i * o->rs;
    for (int64_t d = 0; d < p->dv; ++d) {
        float v = orow[d];
        for (int t = 0; t < p->nox; ++t) {
            const sd_xform *x = &p->ox[t];
            if (x->kind == SD_X_QUANT) v = x->has_zp ? v * x->inv + x->zp : v * x->inv;
            v = pt_elem_round(x->dt, v);
        }
        pt_elem_store((void *)A->base[p->vo], o->dt, ro + d * o->cs, v);
    }
    if (p->vstats >= 0) {
        const sd_view *sv = &p->views[p->vstats];
        pt_elem_store((void *)A->base[p->vstats], sv->dt, B->boff[p->vstats] + i * sv->rs, stat);
    }
}

static void block_exact(const sd_block_ctx *B) {
    const sd_args *A = B->A;
    const sd_plan *p = A->p;
    const int64_t DV = p->dv, SKV = p->skv;
    const int bk = p->bk, mq = B->mq;
    float *mrow = SCR(B, float, m), *lrow = SCR(B, float, l), *vf = SCR(B, float, vf);
    double *pd = SCR(B, double, pd), *vd = SCR(B, double, vd), *dacc = SCR(B, double, dacc);
    widen(SCR(B, float, qf), (size_t)mq * (size_t)p->dqk, SCR(B, double, qd));
    size_t ld;

    /* Pass 1: row maxima. */
    for (int r = 0; r < mq; ++r) mrow[r] = -INFINITY, lrow[r] = 0.f;
    for (int64_t j0 = 0; j0 < SKV; j0 += bk) {
        int nk = (int)(SKV - j0 < bk ? SKV - j0 : bk);
        const float *s = exact_scores(B, 1, j0, nk, &ld);
        for (int r = 0; r < mq; ++r)
            for (int c = 0; c < nk; ++c)
                if (s[(size_t)r * ld + c] > mrow[r]) mrow[r] = s[(size_t)r * ld + c];
    }
    /* Pass 2: sequential f32 sums of exp(x - max), key order. */
    for (int64_t j0 = 0; j0 < SKV; j0 += bk) {
        int nk = (int)(SKV - j0 < bk ? SKV - j0 : bk);
        const float *s = exact_scores(B, 2, j0, nk, &ld);
        for (int r = 0; r < mq; ++r) {
            float sum = lrow[r];
            const float m = mrow[r];
            for (int c = 0; c < nk; ++c) sum += expf(s[(size_t)r * ld + c] - m);
            lrow[r] = sum;
        }
    }
    /* Pass 3: P as the reference SoftMax writes it, its transforms, P·V in
     * f64, keys in order. */
    for (size_t e = 0; e < (size_t)mq * DV; ++e) dacc[e] = 0.0;
    for (int64_t j0 = 0; j0 < SKV; j0 += bk) {
        int nk = (int)(SKV - j0 < bk ? SKV - j0 : bk);
        const float *s = exact_scores(B, 3, j0, nk, &ld);
        for (int r = 0; r < mq; ++r) {
            const float m = mrow[r], sum = lrow[r];
            const bool masked = p->inf_as_zero && m == -INFINITY; /* fully masked row: P = 0 */
            for (int c = 0; c < nk; ++c) {
                float pv = masked ? 0.f : expf(s[(size_t)r * ld + c] - m) / sum;
                if (!p->px_identity) pv = apply_px(A, B->boff, B->b, B->i0 + r, j0 + c, pv);
                pd[(size_t)r * bk + c] = (double)pv;
            }
        }
        load_operand(A, B->boff, &p->v, j0, nk, DV, vf, (size_t)DV, false);
        widen(vf, (size_t)nk * (size_t)DV, vd);
        pt_sdpa_pv_f64(pd, bk, mq, nk, vd, DV, dacc);
    }
    float *orow = SCR(B, float, orow);
    for (int r = 0; r < mq; ++r) {
        const bool masked = p->inf_as_zero && mrow[r] == -INFINITY;
        for (int64_t d = 0; d < DV; ++d) orow[d] = (float)dacc[(size_t)r * DV + d];
        store_row(B, B->i0 + r, orow, masked ? 0.f : mrow[r] + logf(lrow[r]));
    }
}

/* Online (flash) order: one pass, running max and sum per row, the f32
 * accumulators rescaled when the max grows. */
static void block_online(const sd_block_ctx *B) {
    const sd_args *A = B->A;
    const sd_plan *p = A->p;
    const int64_t DV = p->dv, SKV = p->skv;
    const int bk = p->bk, mq = B->mq;
    float *vf = SCR(B, float, vf), *sb = SCR(B, float, sb), *pf = SCR(B, float, pf);
    float *acc = SCR(B, float, acc), *mrow = SCR(B, float, m), *lrow = SCR(B, float, l);
    for (int r = 0; r < mq; ++r) mrow[r] = -INFINITY, lrow[r] = 0.f;
    for (size_t e = 0; e < (size_t)mq * DV; ++e) acc[e] = 0.f;
    for (int64_t j0 = 0; j0 < SKV; j0 += bk) {
        int nk = (int)(SKV - j0 < bk ? SKV - j0 : bk);
        block_scores(B, j0, nk);
        for (int r = 0; r < mq; ++r) {
            const float *srow = sb + (size_t)r * bk;
            float *prow = pf + (size_t)r * bk, *arow = acc + (size_t)r * DV;
            float mx = -INFINITY;
            for (int c = 0; c < nk; ++c)
                if (srow[c] > mx) mx = srow[c];
            const float mnew = mx > mrow[r] ? mx : mrow[r];
            if (mnew == -INFINITY) { /* nothing but -inf (or NaN) so far; Dropout still writes its mask */
                for (int c = 0; c < nk; ++c)
                    prow[c] = p->dropout ? apply_px(A, B->boff, B->b, B->i0 + r, j0 + c, 0.f) : 0.f;
                continue;
            }
            const float alpha = expf(mrow[r] - mnew);
            if (alpha != 1.f)
                for (int64_t d = 0; d < DV; ++d) arow[d] *= alpha;
            float sum = lrow[r] * alpha;
            for (int c = 0; c < nk; ++c) {
                const float e = expf(srow[c] - mnew);
                sum += e;
                /* Dropout scales the numerator only: the normaliser is the softmax sum. */
                prow[c] = p->dropout ? apply_px(A, B->boff, B->b, B->i0 + r, j0 + c, e) : e;
            }
            mrow[r] = mnew;
            lrow[r] = sum;
        }
        load_operand(A, B->boff, &p->v, j0, nk, DV, vf, (size_t)DV, false);
        pt_sdpa_pv_f32(pf, bk, mq, nk, vf, DV, acc);
    }
    /* A row without any finite score is fully masked: zeros and stats 0
     * with inf_as_zero or without keys, NaN otherwise (docs/numerics.md). */
    const float masked = (p->inf_as_zero || SKV == 0) ? 0.f : NAN;
    float *orow = SCR(B, float, orow);
    for (int r = 0; r < mq; ++r) {
        const bool empty = mrow[r] == -INFINITY;
        const float *arow = acc + (size_t)r * DV;
        const float inv = 1.f / lrow[r];
        for (int64_t d = 0; d < DV; ++d) orow[d] = empty ? masked : arow[d] * inv;
        store_row(B, B->i0 + r, orow, empty ? masked : mrow[r] + logf(lrow[r]));
    }
}

static void sd_block(const sd_args *A, int64_t b, int64_t i0, char *buf, const sd_layout *L) {
    const sd_plan *p = A->p;
    int64_t bidx[SD_MAX_BATCH];
    sd_batch_index(b, p->nb, p->bdims, bidx);
    int64_t boff[SD_MAX_VIEWS];
    for (int v = 0; v < p->nviews; ++v) {
        const sd_view *w = &p->views[v];
        int64_t off = 0;
        for (int i = 0; i < p->nb; ++i) off += (w->grouped ? bidx[i] / w->bg[i] : bidx[i]) * w->bs[i];
        boff[v] = off;
    }
    sd_block_ctx B = {.A = A, .boff = boff, .b = b, .i0 = i0, .buf = buf, .L = L};
    B.mq = (int)(p->sq - i0 < p->bq ? p->sq - i0 : p->bq);
    load_operand(A, boff, &p->q, i0, B.mq, p->dqk, (float *)(buf + L->qf), (size_t)p->dqk, false);
    if (A->exact) block_exact(&B);
    else block_online(&B);
}

/* Work item w of a run: query block w % nqb of batch w / nqb. */
typedef struct {
    const sd_args *A;
    sd_layout L;
    int64_t nqb;
} sd_work;

static void sd_work_item(const void *arg, int64_t w, char *buf) {
    const sd_work *W = arg;
    sd_block(W->A, w / W->nqb, (w % W->nqb) * W->A->p->bq, buf, &W->L);
}

/* A one-element integer input (dropout seed / offset). */
static int64_t scalar_i64(const void *base, dnnl_data_type_t dt) {
    switch ((int)dt) {
        case dnnl_s64: {
            int64_t v;
            memcpy(&v, base, sizeof v);
            return v;
        }
        case dnnl_s32: {
            int32_t v;
            memcpy(&v, base, sizeof v);
            return v;
        }
        default: return pt_f64_to_s64(pt_load_f64(base, dt, 0));
    }
}

pt_status pt_sdpa_fwd_run(const pt_fused *f, const pt_tview *in, size_t nin, const pt_tview *out, size_t nout,
                          void *scratch, const pt_exec_ctx *ctx) {
    const sd_plan *p = f->state;
    sd_args A = {.p = p, .exact = !ctx || ctx->fpmath == dnnl_fpmath_mode_strict || !p->online_ok};
    for (int v = 0; v < p->nviews; ++v) {
        const sd_view *vw = &p->views[v];
        if (vw->port < 0) {
            A.base[v] = vw->konst;
            continue;
        }
        if ((size_t)vw->port >= (vw->is_out ? nout : nin))
            return pt_err(dnnl_invalid_arguments, "sdpa: port %d not bound", vw->port);
        A.base[v] = vw->is_out ? out[vw->port].data : in[vw->port].data;
        if (!A.base[v]) return pt_err(dnnl_invalid_arguments, "sdpa: port %d has no data", vw->port);
    }
    for (int s = 0; s < p->nsteps; ++s) {
        const sd_step *st = &p->steps[s];
        if (st->kind == SD_CAUSAL && st->add >= 0) {
            A.add[s] = pt_elem_load(A.base[st->add], p->views[st->add].dt, 0);
            A.sub[s] = pt_elem_load(A.base[st->sub], p->views[st->sub].dt, 0);
        }
    }
    if (p->dropout) {
        A.seed = scalar_i64(A.base[p->vseed], p->views[p->vseed].dt);
        A.offset = scalar_i64(A.base[p->voffset], p->views[p->voffset].dt);
        A.dc = pt_dropout_prepare(pt_elem_load(A.base[p->vprob], p->views[p->vprob].dt, 0));
    }
    const int64_t nqb = (p->sq + p->bq - 1) / p->bq;
    const int64_t nwork = p->nbatch * nqb;
    if (nwork == 0) return dnnl_success;
    if (!scratch) return pt_err(dnnl_invalid_arguments, "sdpa: no scratchpad");
    const sd_work W = {.A = &A, .L = sd_scratch_layout(p), .nqb = nqb};
    sd_parallel(sd_threads(p->nthr, ctx, nwork), nwork, scratch, W.L.total, sd_work_item, &W);
    return dnnl_success;
}
