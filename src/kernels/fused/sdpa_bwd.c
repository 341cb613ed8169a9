/* Fused SDPA / GQA training backward, run time (docs/fusion.md,
 * docs/numerics.md).  A work item is one head (a batch index of S), or a
 * range of its keys when there are too few heads for the threads.  The item
 * walks its head in query blocks and, inside a block, in key tiles; for
 * each bq × bk tile it recomputes S = Q·Kᵀ and dP = dO·Vᵀ on the GEMM
 * microkernels, forms P = exp(ScaleAndMasks(S) − stats) and dS row by row,
 * and adds the tile's products dV += Pᵀ·dO, dK += dSᵀ·Q (rows of its keys)
 * and dQ += dS·K (rows of the block), again on the microkernels.  The
 * S_q × S_kv matrices never exist; per thread the kernel keeps one span of
 * its keys' K and V panels and dK / dV accumulators (sized for L2), one
 * block's panels and tiles, and dQ rows.  Key tiles that a trailing -inf
 * causal mask covers completely are skipped (P, dS and their products are
 * zero there).  One query row (decode_form): S and dP from dot products over
 * K / V rows as stored, dV and dK as outer products, dQ as a sum of K rows
 * where the math mode allows (decode_dq_form); no K / V panels.
 *
 * Numerics: products accumulate in f32 on the microkernels (bf16 kind when
 * both operands are bf16, or f32 under the bf16 / any math modes; f32 kind
 * otherwise, f16 / tf32 modes rounding f32 operands while packing), so the
 * results are not bit-identical to the op-by-op path (docs/numerics.md
 * gives the tolerance).  The element-wise steps keep the op-by-op formulas:
 * f32 arithmetic rounded to every declared intermediate type, P and dS
 * rounded where the graph casts them before their MatMuls, Dc summed along
 * D in order, dropout from the same Philox words as the reference.  With a
 * key split, dQ partial sums are added in split order, so a result never
 * depends on the thread schedule.  GQA: the dK / dV products are rounded to
 * their declared type per head and then summed over the group as the
 * ReduceSum does. */
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
#include "kernels/fused/run_io.h"
#include "kernels/fused/sdpa_bwd_plan.h"
#include "kernels/fused/sdpa_rows.h"
#include "kernels/fused/sdpa_common.h"
#include "kernels/gemm/gemm.h"
#include "kernels/ref/philox.h"
#include "kernels/vec/vec.h"

/* Below this many multiply-adds a run stays on one thread: a parallel region
 * can cost a scheduler tick when another process holds a core. */
#define SB_SERIAL_MACS 2000000.0

/* Bytes of keys' panels and dK / dV accumulators one pass keeps (about
 * half of a 1 MiB L2, the rest for a query block's panels and tiles). */
#define SB_L2_BYTES (512 * 1024)

typedef struct {
    int64_t seed, offset;
    pt_dropout_consts k;
} sb_drop_args;

/* One product's microkernel and the math-mode rounding of its f32 operands. */
typedef struct {
    const pt_gemm_ukernel *uk;
    dnnl_fpmath_mode_t ra, rb;
} sb_mm;

enum { MM_S, MM_DP, MM_DV, MM_DK, MM_DQ, MM_COUNT };

typedef struct {
    const sb_plan *p;
    const void *base[SB_MAX_VIEWS];
    float add[SB_MAX_STEPS], sub[SB_MAX_STEPS]; /* causal offsets, read once */
    sb_drop_args dp_p, dp_dp;
    sb_mm mm[MM_COUNT];
    const pt_vec_ops *vec;
    float *gk, *gv; /* reduce: per-head dK / dV products */
    float *dqp;     /* key split: dQ partial sums [head][split][S_q][D] */
    int skip_step;  /* a last causal step filling -inf: its fully masked tiles are skipped; else -1 */
    bool drop_same; /* both dropouts draw the same words with the same probability: one draw */
    /* The cast of P / dS to bf16 before their MatMuls is left to the bf16
     * packing of those products (the same rounding to nearest even). */
    bool pc_packed_bf16, dsc_packed_bf16;
    /* One query row (a decode step's backward): S and dP as dot products
     * over K / V rows where they are stored, dV and dK as outer products
     * (decode_form); no K / V panels. */
    bool decode;
    /* And dQ = dS·K as sums of K rows where they are stored
     * (decode_dq_form), with no K panels either. */
    bool decode_dq;
    /* And dV / dK rows straight from the outer products into the outputs
     * (decode_direct for both). */
    bool decode_out;
} sb_args;

/* ---- microkernel plumbing ------------------------------------------------- */

static int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

/* The kernel of a product with operands of declared types a and b, at
 * most M rows of A and contraction length at most K: bf16 when both reach
 * it as bf16 (bf16 data, or f32 the math mode rounds to bf16), f32
 * otherwise (bf16 / f16 data converted exactly, f32 data rounded by the
 * packer as the mode says); the row for that shape (a decode step has one
 * query row: S, dP and dQ have one row, dK and dV contract over it). */
static sb_mm mm_for(dnnl_fpmath_mode_t mode, dnnl_data_type_t a, dnnl_data_type_t b, int64_t M, int64_t K) {
    const bool to_bf16 = mode == dnnl_fpmath_mode_bf16 || mode == dnnl_fpmath_mode_any;
    const bool a16 = a == dnnl_bf16 || (a == dnnl_f32 && to_bf16);
    const bool b16 = b == dnnl_bf16 || (b == dnnl_f32 && to_bf16);
    sb_mm m = {pt_gemm_ukernel_for_shape(a16 && b16 ? PT_GEMM_BF16 : PT_GEMM_F32, M, K),
               a == dnnl_f32 ? mode : dnnl_fpmath_mode_strict, b == dnnl_f32 ? mode : dnnl_fpmath_mode_strict};
    return m;
}

/* Bytes of `rows` rows (padded to strips of R) by kc (padded to the k group)
 * of one product's panels. */
static size_t panel_bytes(const pt_gemm_ukernel *uk, int R, int64_t rows, int64_t kc) {
    return (size_t)round_up(rows, R) * (size_t)pt_gemm_kc_padded(uk, kc) * pt_gemm_panel_elem_bytes(uk->kind);
}

/* Packs rows [r0, r0 + rows) x k [k0, k0 + kc) of a strided float operand. */
static void pack(const sb_mm *m, bool is_b, dnnl_data_type_t dt, const void *data, int64_t s_row, int64_t s_k,
                 int64_t r0, int64_t rows, int64_t k0, int64_t kc, void *dst) {
    if (rows <= 0 || kc <= 0) return;
    const pt_gemm_operand o = {.dt = dt, .s_row = s_row, .s_k = s_k, .round = is_b ? m->rb : m->ra};
    pt_gemm_pack_panels(m->uk, is_b, &o, data, NULL, NULL, r0, rows, k0, kc, dst, NULL);
}

/* C[m][n] (+)= A·B over packed panels of contraction length kc: `a` holds
 * strips of MR rows, `b` strips of NR rows (kc padded to the k group). */
static void mm_run(const sb_mm *m, int64_t kc, const void *a, int64_t rows, const void *b, int64_t cols, float *c,
                   int64_t ldc, bool accumulate) {
    const pt_gemm_ukernel *uk = m->uk;
    if (kc <= 0) {
        if (!accumulate)
            for (int64_t i = 0; i < rows; ++i) memset(c + i * ldc, 0, (size_t)cols * sizeof(float));
        return;
    }
    const int64_t kcp = pt_gemm_kc_padded(uk, kc);
    const size_t eb = pt_gemm_panel_elem_bytes(uk->kind);
    const size_t astrip = (size_t)uk->mr * (size_t)kcp * eb, bstrip = (size_t)uk->nr * (size_t)kcp * eb;
    /* B strip outer: it stays in L1 while the A strips stream past. */
    for (int64_t j = 0; j < cols; j += uk->nr) {
        const char *bp = (const char *)b + (size_t)(j / uk->nr) * bstrip;
        const int nr = (int)(cols - j < uk->nr ? cols - j : uk->nr);
        for (int64_t i = 0; i < rows; i += uk->mr) {
            const int mr = (int)(rows - i < uk->mr ? rows - i : uk->mr);
            uk->run(kcp, (const char *)a + (size_t)(i / uk->mr) * astrip, bp, c + i * ldc + j, ldc, mr, nr,
                    accumulate);
        }
    }
}

/* ---- scratch ---------------------------------------------------------------- */

/* Per-thread scratch (byte offsets), sized for the larger strips and f32
 * panels so that either compute kind fits. */
typedef struct {
    size_t ks, vs, kq;      /* pass: K, V as B panels of S / dP (rows j); K as B of dQ per key tile (rows d) */
    size_t dk, dv;          /* pass: dK [kspan][D], dV [kspan][D_v] accumulators */
    size_t qa, doa;         /* block: Q, dO as A panels of S / dP (rows i) */
    size_t dob, qb;         /* block: dO, Q as B panels of dV / dK (rows e / d, k = i) */
    size_t dq;              /* dQ accumulator: [bq][D], or [S_q][D] for several passes */
    size_t st, dpt;         /* tile: S → P operand and dP → dS, [bq][bk] */
    size_t pa, dsat, dsa;   /* tile: Pᵀ, dSᵀ (rows j) and dS (rows i) as A panels */
    size_t dc, stats, row;  /* block: Dc and stats [bq]; three row buffers */
    size_t qrow, dorow;     /* decode: the query's Q and dO rows as the products take them (f32) */
    size_t total;
    size_t kq_tile;         /* bytes of one key tile of kq */
} sb_layout;

static int max_strip(bool is_b) {
    const pt_gemm_ukernel *f = pt_gemm_ukernel_default(PT_GEMM_F32), *h = pt_gemm_ukernel_default(PT_GEMM_BF16);
    const int a = is_b ? f->nr : f->mr, b = is_b ? h->nr : h->mr;
    return a > b ? a : b;
}

/* Length of the row buffers: a key tile, a Q row or a dO row. */
static int64_t row_len(const sb_plan *p) {
    int64_t n = p->bk > p->dqk ? p->bk : p->dqk;
    return n > p->dv ? n : p->dv;
}

static sb_layout sb_scratch_layout(const sb_plan *p) {
    sb_layout L;
    const int64_t MR = max_strip(false), NR = max_strip(true);
    const int64_t bq = p->bq, bk = p->bk, D = p->dqk, DV = p->dv, CH = p->kspan;
    /* dQ: whole rows when the item's keys take several passes (no key split). */
    const int64_t dq_rows = p->nsplit == 1 && p->chunk > p->kspan ? p->sq : bq;
    const int64_t tiles = (CH + bk - 1) / bk;
    /* f32 panels, k padded to 2: an upper bound for both kinds. */
#define PANEL(rows, R, kc) ((size_t)round_up(rows, R) * (size_t)round_up(kc, 2) * sizeof(float))
    L.kq_tile = PANEL(D, NR, bk);
    const int64_t rowlen = row_len(p);
    size_t *const fields[] = {&L.ks, &L.vs, &L.kq, &L.dk,  &L.dv,   &L.qa, &L.doa, &L.dob, &L.dq,
                              &L.st, &L.dpt, &L.pa, &L.dsat, &L.dsa, &L.dc, &L.stats, &L.row, &L.qb,
                              &L.qrow, &L.dorow};
    const size_t bytes[] = {PANEL(CH, NR, D),
                            PANEL(CH, NR, DV),
                            (size_t)tiles * L.kq_tile,
                            (size_t)(CH * D) * sizeof(float),
                            (size_t)(CH * DV) * sizeof(float),
                            PANEL(bq, MR, D),
                            PANEL(bq, MR, DV),
                            PANEL(DV, NR, bq),
                            (size_t)(dq_rows * D) * sizeof(float),
                            (size_t)(bq * bk) * sizeof(float),
                            (size_t)(bq * bk) * sizeof(float),
                            PANEL(bk, MR, bq),
                            PANEL(bk, MR, bq),
                            PANEL(bq, MR, bk),
                            (size_t)bq * sizeof(float),
                            (size_t)bq * sizeof(float),
                            3 * (size_t)rowlen * sizeof(float),
                            PANEL(D, NR, bq),
                            (size_t)D * sizeof(float),
                            (size_t)DV * sizeof(float)};
#undef PANEL
    L.total = sd_carve(fields, bytes, (int)(sizeof bytes / sizeof bytes[0]));
    return L;
}

/* ---- element-wise part of a tile -------------------------------------------- */

/* pt_run_store: dense bf16 and f16 runs go through the vector row of the
 * CPU's level (an inline loop here was compiled for the baseline ISA). */
static void store_row(void *base, dnnl_data_type_t dt, int64_t off, int64_t stride, const float *x, int64_t n) {
    pt_run_store(base, dt, off, stride, x, n);
}


/* Element pointer of view v at element offset off. */
static const void *view_at(const sb_args *A, int v, int64_t off) {
    return (const char *)A->base[v] + off * (int64_t)(pt_dt_bits(A->p->views[v].dt) / 8);
}

/* Row i, columns [j0, j0 + n) of a score-shaped view as f32: a pointer to
 * them (the source itself when it is contiguous f32, else `tmp` filled with
 * them), or NULL with *scalar set when the view is one value along the row. */
static const float *load_row(const sb_args *A, int v, const int64_t *boff, int64_t i, int64_t j0, int n, float *tmp,
                             float *scalar) {
    const sb_view *vw = &A->p->views[v];
    const int64_t off = boff[v] + i * vw->rs + j0 * vw->cs;
    if (vw->cs == 0) {
        *scalar = pt_elem_load(A->base[v], vw->dt, off);
        return NULL;
    }
    if (vw->cs == 1 && vw->dt == dnnl_f32) return (const float *)A->base[v] + off;
    if (vw->cs == 1 && vw->dt == dnnl_bf16) {
        const uint16_t *src = (const uint16_t *)A->base[v] + off;
        for (int k = 0; k < n; ++k) tmp[k] = pt_bf16_bits_to_f32(src[k]);
        return tmp;
    }
    pt_run_load(A->base[v], vw->dt, off, vw->cs, tmp, n);
    return tmp;
}

/* A row rounded to a declared type; bf16 and f16 inline (they vectorise). */
static void round_row(dnnl_data_type_t dt, float *x, int n) {
    switch ((int)dt) {
        case dnnl_f32: break;
        case dnnl_bf16:
            for (int k = 0; k < n; ++k) x[k] = pt_round_bf16(x[k]);
            break;
        case dnnl_f16:
            for (int k = 0; k < n; ++k) x[k] = pt_round_f16(x[k]);
            break;
        default: pt_run_round(dt, x, n); break;
    }
}

/* ScaleAndMasks on row i, keys [j0, j0 + n), in place. */
static void score_steps_row(const sb_args *A, const int64_t *boff, int64_t i, int64_t j0, int n, float *x, float *tmp,
                            float *tmp2) {
    const sb_plan *p = A->p;
    for (int s = 0; s < p->nsteps; ++s) {
        const sb_step *st = &p->steps[s];
        float c = 0.f;
        const float *m = st->kind == SB_CAUSAL ? NULL : load_row(A, st->a, boff, i, j0, n, tmp, &c);
        switch (st->kind) {
            case SB_MUL:
                if (m) for (int k = 0; k < n; ++k) x[k] *= m[k];
                else for (int k = 0; k < n; ++k) x[k] *= c;
                break;
            case SB_DIV:
                if (m) for (int k = 0; k < n; ++k) x[k] /= m[k];
                else for (int k = 0; k < n; ++k) x[k] /= c;
                break;
            case SB_ADD:
                if (m) for (int k = 0; k < n; ++k) x[k] += m[k];
                else for (int k = 0; k < n; ++k) x[k] += c;
                break;
            case SB_SELECT: {
                float o = 0.f;
                const float *ov = load_row(A, st->b, boff, i, j0, n, tmp2, &o);
                for (int k = 0; k < n; ++k) {
                    const bool cond = (m ? m[k] : c) != 0.f;
                    if (cond != st->keep_true) x[k] = ov ? ov[k] : o;
                }
                break;
            }
            case SB_CAUSAL: {
                const sb_view *va = &p->views[st->a];
                for (int k = 0; k < n; ++k) {
                    const int64_t j = j0 + k;
                    const float l = sd_causal_side(st->lhs_col, i, j, st->add >= 0, A->add[s], A->sub[s]);
                    const float r = sd_causal_side(st->rhs_col, i, j, false, 0.f, 0.f);
                    if ((l >= r) != st->keep_true) x[k] = pt_elem_load(A->base[st->a], va->dt, boff[st->a] + i * va->rs + j * va->cs);
                }
                break;
            }
        }
        round_row(st->dt, x, n);
    }
}

static inline float drop_value(const sb_drop_args *d, uint64_t lin, float v) {
    return pt_dropout_keep(&d->k, lin, d->seed, d->offset) ? v * d->k.inv_q : 0.f;
}

/* Turns the tile's S rows (st) into the dV operand and its dP rows (dpt)
 * into dS, rows [0, mq) of the block at i0, keys [j0, j0 + nk). */
static void tile_elements(const sb_args *A, const int64_t *boff, int64_t b, int64_t i0, int mq, int64_t j0, int nk,
                          float *st, float *dpt, int ld, const float *dc, const float *stats, float *rows) {
    const sb_plan *p = A->p;
    float *tmp = rows, *tmp2 = rows + row_len(p);
    for (int r = 0; r < mq; ++r) {
        const int64_t i = i0 + r;
        const uint64_t lin0 = ((uint64_t)b * (uint64_t)p->sq + (uint64_t)i) * (uint64_t)p->skv + (uint64_t)j0;
        float *x = st + (size_t)r * ld, *g = dpt + (size_t)r * ld;
        /* P = exp(ScaleAndMasks(S) − stats). */
        round_row(p->s_dt, x, nk);
        score_steps_row(A, boff, i, j0, nk, x, tmp, tmp2);
        if (p->sub_dt == dnnl_f32) {
            A->vec->exp_sum(x, nk, stats[r]);
        } else {
            for (int k = 0; k < nk; ++k) x[k] -= stats[r];
            round_row(p->sub_dt, x, nk);
            A->vec->exp_sum(x, nk, 0.f);
        }
        round_row(p->p_dt, x, nk);
        /* dS0 = P ⊙ (dP [dropped] − Dc), exported as dM, then scaled. */
        round_row(p->dp_dt, g, nk);
        float *keep = rows + 2 * row_len(p); /* 1 where both dropouts keep the element */
        if (A->drop_same)
            for (int k = 0; k < nk; ++k)
                keep[k] = pt_dropout_keep(&A->dp_dp.k, lin0 + (uint64_t)k, A->dp_dp.seed, A->dp_dp.offset) ? 1.f : 0.f;
        if (p->drop_dp.on) {
            if (A->drop_same)
                for (int k = 0; k < nk; ++k) g[k] = keep[k] != 0.f ? g[k] * A->dp_dp.k.inv_q : 0.f;
            else
                for (int k = 0; k < nk; ++k) g[k] = drop_value(&A->dp_dp, lin0 + (uint64_t)k, g[k]);
            round_row(p->drop_dp.dt, g, nk);
        }
        for (int k = 0; k < nk; ++k) g[k] -= dc[r];
        round_row(p->sd_dt, g, nk);
        for (int k = 0; k < nk; ++k) g[k] *= x[k];
        round_row(p->ds0_dt, g, nk);
        if (p->vdm >= 0) {
            const sb_view *vdm = &p->views[p->vdm];
            store_row((void *)A->base[p->vdm], vdm->dt, boff[p->vdm] + i * vdm->rs + j0 * vdm->cs, vdm->cs, g, nk);
        }
        float f = 0.f;
        const float *fv = load_row(A, p->vscale, boff, i, j0, nk, tmp, &f);
        if (p->scale_div) {
            if (fv) for (int k = 0; k < nk; ++k) g[k] /= fv[k];
            else for (int k = 0; k < nk; ++k) g[k] /= f;
        } else {
            if (fv) for (int k = 0; k < nk; ++k) g[k] *= fv[k];
            else for (int k = 0; k < nk; ++k) g[k] *= f;
        }
        round_row(p->ds_dt, g, nk);
        if (!A->dsc_packed_bf16) round_row(p->dsc_dt, g, nk);
        /* dV operand: P → Dropout? → TypeCast?. */
        if (p->drop_p.on) {
            if (A->drop_same)
                for (int k = 0; k < nk; ++k) x[k] = keep[k] != 0.f ? x[k] * A->dp_p.k.inv_q : 0.f;
            else
                for (int k = 0; k < nk; ++k) x[k] = drop_value(&A->dp_p, lin0 + (uint64_t)k, x[k]);
            round_row(p->drop_p.dt, x, nk);
        }
        if (!A->pc_packed_bf16) round_row(p->pc_dt, x, nk);
    }
}

/* Whether the causal step `s` replaces every score of rows [i0, i0 + mq) x
 * keys [j0, j0 + nk) (then P is 0 there, and so are dS and the tile's
 * products).  Stops at the first kept element: tiles on or below the
 * diagonal cost one comparison. */
static bool tile_masked(const sb_args *A, int s, int64_t i0, int mq, int64_t j0, int nk) {
    const sb_step *st = &A->p->steps[s];
    for (int r = 0; r < mq; ++r)
        for (int k = 0; k < nk; ++k) {
            const float l = sd_causal_side(st->lhs_col, i0 + r, j0 + k, st->add >= 0, A->add[s], A->sub[s]);
            const float rr = sd_causal_side(st->rhs_col, i0 + r, j0 + k, false, 0.f, 0.f);
            if ((l >= rr) == st->keep_true) return false;
        }
    return true;
}

/* ---- one work item ------------------------------------------------------------ */

/* Writes rows [j0, j0 + n) of a head's dK or dV products: to the port, or
 * (reduce) rounded to the MatMul's declared type into the per-head buffer. */
static void store_grad(const sb_args *A, const sb_grad *g, const int64_t *boff, int64_t b, const float *acc,
                       int64_t j0, int64_t n, int64_t width, float *gbuf) {
    const sb_plan *p = A->p;
    if (g->reduce) {
        float *dst = gbuf + ((size_t)b * (size_t)p->skv + (size_t)j0) * (size_t)width;
        memcpy(dst, acc, (size_t)(n * width) * sizeof(float));
        round_row(g->mm_dt, dst, (int)(n * width));
        return;
    }
    const sb_view *v = &p->views[g->view];
    if (v->cs == 1 && v->rs == width) { /* rows back to back: one run */
        store_row((void *)A->base[g->view], v->dt, boff[g->view] + j0 * v->rs, 1, acc, n * width);
        return;
    }
    for (int64_t j = 0; j < n; ++j)
        store_row((void *)A->base[g->view], v->dt, boff[g->view] + (j0 + j) * v->rs, v->cs, acc + j * width, width);
}

/* Dc = Σ_e O ⊙ dO (in order, rounded as declared) and the stats of rows
 * [i0, i0 + mq). */
static void block_rows(const sb_args *A, const int64_t *boff, int64_t i0, int mq, float *dc, float *stats, float *o,
                       float *g) {
    const sb_plan *p = A->p;
    const sb_view *vom = &p->views[p->vo_mul], *vdm = &p->views[p->vdo_mul], *vst = &p->views[p->vstats];
    for (int r = 0; r < mq; ++r) {
        const int64_t i = i0 + r;
        pt_run_load(A->base[p->vo_mul], vom->dt, boff[p->vo_mul] + i * vom->rs, vom->cs, o, p->dv);
        pt_run_load(A->base[p->vdo_mul], vdm->dt, boff[p->vdo_mul] + i * vdm->rs, vdm->cs, g, p->dv);
        float acc = 0.f;
        if (p->od_dt == dnnl_f32)
            for (int64_t e = 0; e < p->dv; ++e) acc = acc + o[e] * g[e];
        else
            for (int64_t e = 0; e < p->dv; ++e) acc = acc + pt_round_to_dt(p->od_dt, o[e] * g[e]);
        dc[r] = pt_round_to_dt(p->dc_dt, acc);
        stats[r] = pt_elem_load(A->base[p->vstats], vst->dt, boff[p->vstats] + i * vst->rs);
    }
}

/* ---- one query row (decode) ---------------------------------------------------- */

/* Whether a product's A (or B) operand stored as view type dt reaches it
 * unchanged by a dot product over its f32 / bf16 / f16 elements: a BF16
 * product of bf16 data, or an F32 product the math mode rounds nothing in.
 * (`row`: the operand is one row loaded as f32 and rounded to bf16 for a
 * BF16 product, so any float type does.) */
static bool decode_operand(const sb_mm *m, bool is_b, dnnl_data_type_t dt, bool row) {
    const bool float_dt = dt == dnnl_f32 || dt == dnnl_bf16 || dt == dnnl_f16;
    if (m->uk->kind == PT_GEMM_BF16) return row ? float_dt : dt == dnnl_bf16;
    return m->uk->kind == PT_GEMM_F32 && (is_b ? m->rb : m->ra) == dnnl_fpmath_mode_strict && float_dt;
}

/* The decode form (A->decode): one query row, K and V rows contiguous,
 * every operand as decode_operand takes it, and the P / dS operands of dV
 * and dK f32 or bf16 as their products round them. */
static bool decode_form(const sb_args *A) {
    const sb_plan *p = A->p;
    const sb_view *vk = &p->views[p->vk], *vv = &p->views[p->vv];
    const sb_mm *m = A->mm;
    if (p->sq != 1 || vk->cs != 1 || vv->cs != 1) return false;
    return decode_operand(&m[MM_S], false, p->views[p->vq].dt, true) &&
           decode_operand(&m[MM_S], true, vk->dt, false) &&
           decode_operand(&m[MM_DP], false, p->views[p->vdo].dt, true) &&
           decode_operand(&m[MM_DP], true, vv->dt, false) && decode_operand(&m[MM_DV], false, dnnl_f32, true) &&
           decode_operand(&m[MM_DV], true, p->views[p->vdo].dt, true) &&
           decode_operand(&m[MM_DK], false, dnnl_f32, true) && decode_operand(&m[MM_DK], true, p->views[p->vq].dt, true);
}

/* Whether the decode form also takes dQ = dS·K as sums of the K rows as
 * stored (decode_dq): a BF16 product over bf16 K (dS rounded to bf16, as
 * its packing would), or an F32 product whose math mode rounds neither
 * operand (K widened exactly). */
static bool decode_dq_form(const sb_args *A) {
    const sb_mm *m = &A->mm[MM_DQ];
    const dnnl_data_type_t kdt = A->p->views[A->p->vk].dt;
    if (!A->decode) return false;
    if (m->uk->kind == PT_GEMM_BF16) return kdt == dnnl_bf16;
    return m->uk->kind == PT_GEMM_F32 && m->ra == dnnl_fpmath_mode_strict && m->rb == dnnl_fpmath_mode_strict &&
           (kdt == dnnl_f32 || kdt == dnnl_bf16 || kdt == dnnl_f16);
}

/* dq[e] += Σ_k ds[k]·K[j0 + k][e] over the K rows as stored (decode_dq);
 * ds is rounded to bf16 in place for a BF16 product. */
static void decode_dq(const sb_args *A, const int64_t *boff, float *ds, int nk, int64_t j0, float *dq) {
    const sb_plan *p = A->p;
    const sb_view *vk = &p->views[p->vk];
    const int64_t off = boff[p->vk] + j0 * vk->rs;
    if (A->mm[MM_DQ].uk->kind == PT_GEMM_BF16)
        for (int k = 0; k < nk; ++k) ds[k] = pt_round_bf16(ds[k]);
    if (vk->dt == dnnl_f32) {
        const float *rows = (const float *)A->base[p->vk] + off;
        for (int k = 0; k < nk; ++k)
            if (ds[k] != 0.f) pt_sdpa_rows()->axpy(dq, rows + (size_t)k * (size_t)vk->rs, p->dqk, ds[k]);
    } else {
        pt_sdpa_rows()->axpys_h(dq, p->dqk, (const uint16_t *)A->base[p->vk] + off, vk->dt == dnnl_f16, nk, vk->rs,
                                ds);
    }
}

/* Row i of view v as a product of kind m takes it: widened, rounded to
 * bf16 for a BF16 product. */
static void decode_row(const sb_args *A, const sb_mm *m, int v, const int64_t *boff, int64_t i, int64_t n, float *dst) {
    const sb_view *vw = &A->p->views[v];
    pt_run_load(A->base[v], vw->dt, boff[v] + i * vw->rs, vw->cs, dst, n);
    if (m->uk->kind == PT_GEMM_BF16) round_row(dnnl_bf16, dst, (int)n);
}

/* out[k] = x · row (j0 + k) of view v (contiguous rows), k < nk. */
static void decode_dots(const sb_args *A, int v, const int64_t *boff, const float *x, int64_t n, int64_t j0, int nk,
                        float *out) {
    const sb_view *vw = &A->p->views[v];
    const int64_t off = boff[v] + j0 * vw->rs;
    if (vw->dt == dnnl_f32) pt_sdpa_rows()->dots(x, n, (const float *)A->base[v] + off, nk, vw->rs, out);
    else pt_sdpa_rows()->dots_h(x, n, (const uint16_t *)A->base[v] + off, vw->dt == dnnl_f16, nk, vw->rs, out);
}

/* dst[k][e] = a[k] · x[e] (the product of one k: an outer product), with a
 * rounded to bf16 for a BF16 product. */
static void decode_outer(const sb_mm *m, const float *a, int nk, const float *x, int64_t n, float *dst) {
    const bool bf16 = m->uk->kind == PT_GEMM_BF16;
    for (int k = 0; k < nk; ++k) {
        const float f = bf16 ? pt_round_bf16(a[k]) : a[k];
        float *d = dst + (size_t)k * (size_t)n;
        for (int64_t e = 0; e < n; ++e) d[e] = f * x[e];
    }
}

/* Whether a gradient's rows go straight from the outer products of the
 * decode form into the output (bf16 rows of contiguous elements, no GQA
 * reduction): the values the f32 rows and their conversion would give. */
static bool decode_direct(const sb_args *A, const sb_grad *g) {
    const sb_view *v = &A->p->views[g->view];
    return !g->reduce && v->dt == dnnl_bf16 && v->cs == 1;
}

/* Work item (head b, key split s). */
static void sb_item(const sb_args *A, int64_t b, int64_t s, char *buf, const sb_layout *L) {
    const sb_plan *p = A->p;
    const int64_t D = p->dqk, DV = p->dv, SQ = p->sq;
    const int bq = p->bq, bk = p->bk;
    const int64_t jc0 = s * p->chunk, nkc = (p->skv - jc0 < p->chunk ? p->skv - jc0 : p->chunk);
    int64_t bidx[SB_MAX_BATCH];
    sd_batch_index(b, p->nb, p->bdims, bidx);
    int64_t boff[SB_MAX_VIEWS];
    for (int v = 0; v < p->nviews; ++v) {
        int64_t off = 0;
        for (int i = 0; i < p->nb; ++i) off += bidx[i] * p->views[v].bs[i];
        boff[v] = off;
    }
    const sb_mm *mS = &A->mm[MM_S], *mDP = &A->mm[MM_DP], *mDV = &A->mm[MM_DV], *mDK = &A->mm[MM_DK],
                *mDQ = &A->mm[MM_DQ];
    const sb_view *vq = &p->views[p->vq], *vk = &p->views[p->vk], *vv = &p->views[p->vv];
    const sb_view *vdo = &p->views[p->vdo], *vdq = &p->views[p->vdq];
    const void *qp = view_at(A, p->vq, boff[p->vq]), *kp = view_at(A, p->vk, boff[p->vk]);
    const void *vp = view_at(A, p->vv, boff[p->vv]), *dop = view_at(A, p->vdo, boff[p->vdo]);

    char *ks = buf + L->ks, *vs = buf + L->vs, *kq = buf + L->kq;
    float *dk = (float *)(buf + L->dk), *dv = (float *)(buf + L->dv);
    char *qa = buf + L->qa, *doa = buf + L->doa, *dob = buf + L->dob, *qb = buf + L->qb;
    float *st = (float *)(buf + L->st), *dpt = (float *)(buf + L->dpt);
    char *pa = buf + L->pa, *dsat = buf + L->dsat, *dsa = buf + L->dsa;
    float *dc = (float *)(buf + L->dc), *stats = (float *)(buf + L->stats), *rows = (float *)(buf + L->row);

    /* dQ: per block in the thread's buffer when one pass over the keys does;
     * else whole rows [S_q][D] that the passes add to (this item's partial
     * sums with a key split, the thread's buffer otherwise). */
    const int64_t npass = nkc > 0 ? (nkc + p->kspan - 1) / p->kspan : 1;
    const bool all_rows = p->nsplit > 1 || npass > 1;
    float *dq_rows = p->nsplit > 1 ? A->dqp + ((size_t)b * (size_t)p->nsplit + (size_t)s) * (size_t)SQ * (size_t)D
                                   : (float *)(buf + L->dq);
    const size_t ks_strip = panel_bytes(mS->uk, mS->uk->nr, mS->uk->nr, D);
    const size_t vs_strip = panel_bytes(mDP->uk, mDP->uk->nr, mDP->uk->nr, DV);

    for (int64_t pass = 0; pass < npass; ++pass) {
        /* Keys [c0, c0 + nc) of the item, sized to stay in L2 while every
         * query block streams past: K and V as the B of S and dP (rows j),
         * K as the B of dQ per key tile (rows d, k = j). */
        const int64_t c0 = jc0 + pass * p->kspan, left = jc0 + nkc - c0;
        const int64_t nc = left < p->kspan ? left : p->kspan;
        if (!A->decode) {
            pack(mS, true, vk->dt, kp, vk->rs, vk->cs, c0, nc, 0, D, ks);
            pack(mDP, true, vv->dt, vp, vv->rs, vv->cs, c0, nc, 0, DV, vs);
        }
        for (int64_t j0 = 0; j0 < nc && !A->decode_dq; j0 += bk) {
            const int64_t nk = nc - j0 < bk ? nc - j0 : bk;
            pack(mDQ, true, vk->dt, kp, vk->cs, vk->rs, 0, D, c0 + j0, nk, kq + (size_t)(j0 / bk) * L->kq_tile);
        }
        /* The first query block writes the dK / dV accumulators (a skipped
         * tile zeroes its rows).  With one block they are final after each
         * tile: stored there, between the products, rather than in one
         * burst at the end of the pass (timm's decode-shaped backward, with
         * the hand-out of pt_sdpa_bwd_run: 2.31-2.36 -> 2.18-2.23 ms). */
        const bool one_block = SQ > 0 && SQ <= bq;
        if (SQ <= 0) {
            memset(dk, 0, (size_t)(nc * D) * sizeof(float));
            memset(dv, 0, (size_t)(nc * DV) * sizeof(float));
        }
        for (int64_t i0 = 0; i0 < SQ; i0 += bq) {
            const int mq = (int)(SQ - i0 < bq ? SQ - i0 : bq);
            block_rows(A, boff, i0, mq, dc, stats, rows, rows + DV);
            float *qrow = (float *)(buf + L->qrow), *dorow = (float *)(buf + L->dorow);
            if (A->decode) {
                decode_row(A, mS, p->vq, boff, i0, D, qrow);
                decode_row(A, mDP, p->vdo, boff, i0, DV, dorow);
            } else {
                pack(mS, false, vq->dt, qp, vq->rs, vq->cs, i0, mq, 0, D, qa);
                pack(mDP, false, vdo->dt, dop, vdo->rs, vdo->cs, i0, mq, 0, DV, doa);
                pack(mDV, true, vdo->dt, dop, vdo->cs, vdo->rs, 0, DV, i0, mq, dob);
                pack(mDK, true, vq->dt, qp, vq->cs, vq->rs, 0, D, i0, mq, qb);
            }
            float *dq = all_rows ? dq_rows + (size_t)i0 * (size_t)D : dq_rows;
            /* Skipping needs finite stats: exp(-inf - stats) is 0 only then. */
            bool may_skip = A->skip_step >= 0;
            for (int r = 0; r < mq && may_skip; ++r) may_skip = isfinite(stats[r]);
            bool dq_started = pass > 0;
            for (int64_t j0 = 0; j0 < nc; j0 += bk) {
                const int nk = (int)(nc - j0 < bk ? nc - j0 : bk);
                if (may_skip && tile_masked(A, A->skip_step, i0, mq, c0 + j0, nk)) {
                    if (i0 == 0) {
                        memset(dk + j0 * D, 0, (size_t)(nk * D) * sizeof(float));
                        memset(dv + j0 * DV, 0, (size_t)(nk * DV) * sizeof(float));
                    }
                    if (one_block) {
                        store_grad(A, &p->gk, boff, b, dk + j0 * D, c0 + j0, nk, D, A->gk);
                        store_grad(A, &p->gv, boff, b, dv + j0 * DV, c0 + j0, nk, DV, A->gv);
                    }
                    if (p->vdm >= 0) { /* dM = P ⊙ (…) = 0 */
                        const sb_view *vdm = &p->views[p->vdm];
                        memset(st, 0, (size_t)nk * sizeof(float));
                        for (int r = 0; r < mq; ++r)
                            store_row((void *)A->base[p->vdm], vdm->dt,
                                      boff[p->vdm] + (i0 + r) * vdm->rs + (c0 + j0) * vdm->cs, vdm->cs, st, nk);
                    }
                    continue;
                }
                if (A->decode) { /* one query row: S and dP over K / V rows as stored */
                    decode_dots(A, p->vk, boff, qrow, D, c0 + j0, nk, st);
                    decode_dots(A, p->vv, boff, dorow, DV, c0 + j0, nk, dpt);
                } else {
                    mm_run(mS, D, qa, mq, ks + (size_t)(j0 / mS->uk->nr) * ks_strip, nk, st, bk, false);
                    mm_run(mDP, DV, doa, mq, vs + (size_t)(j0 / mDP->uk->nr) * vs_strip, nk, dpt, bk, false);
                }
                tile_elements(A, boff, b, i0, mq, c0 + j0, nk, st, dpt, bk, dc, stats, rows);
                /* dV += Pᵀ·dO and dK += dSᵀ·Q (rows j, k = i); dQ += dS·K (rows i, k = j). */
                if (A->decode_out) {
                    /* k = the one query row: outer products, into the outputs. */
                    const sb_view *gv = &p->views[p->gv.view], *gk = &p->views[p->gk.view];
                    pt_sdpa_rows()->outer_bf16((uint16_t *)A->base[p->gv.view] + boff[p->gv.view] + (c0 + j0) * gv->rs,
                                               gv->rs, st, mDV->uk->kind == PT_GEMM_BF16, nk, dorow, DV);
                    pt_sdpa_rows()->outer_bf16((uint16_t *)A->base[p->gk.view] + boff[p->gk.view] + (c0 + j0) * gk->rs,
                                               gk->rs, dpt, mDK->uk->kind == PT_GEMM_BF16, nk, qrow, D);
                } else if (A->decode) { /* k = the one query row: outer products */
                    decode_outer(mDV, st, nk, dorow, DV, dv + j0 * DV);
                    decode_outer(mDK, dpt, nk, qrow, D, dk + j0 * D);
                } else {
                    pack(mDV, false, dnnl_f32, st, 1, bk, 0, nk, 0, mq, pa);
                    mm_run(mDV, mq, pa, nk, dob, DV, dv + j0 * DV, DV, i0 > 0);
                    pack(mDK, false, dnnl_f32, dpt, 1, bk, 0, nk, 0, mq, dsat);
                    mm_run(mDK, mq, dsat, nk, qb, D, dk + j0 * D, D, i0 > 0);
                }
                if (one_block && !A->decode_out) {
                    store_grad(A, &p->gk, boff, b, dk + j0 * D, c0 + j0, nk, D, A->gk);
                    store_grad(A, &p->gv, boff, b, dv + j0 * DV, c0 + j0, nk, DV, A->gv);
                }
                if (A->decode_dq) {
                    if (!dq_started) memset(dq, 0, (size_t)D * sizeof(float));
                    decode_dq(A, boff, dpt, nk, c0 + j0, dq);
                } else {
                    pack(mDQ, false, dnnl_f32, dpt, bk, 1, 0, mq, 0, nk, dsa);
                    mm_run(mDQ, nk, dsa, mq, kq + (size_t)(j0 / bk) * L->kq_tile, D, dq, D, dq_started);
                }
                dq_started = true;
            }
            if (!dq_started) memset(dq, 0, (size_t)mq * (size_t)D * sizeof(float));
            if (!all_rows)
                for (int r = 0; r < mq; ++r)
                    store_row((void *)A->base[p->vdq], vdq->dt, boff[p->vdq] + (i0 + r) * vdq->rs, vdq->cs,
                              dq + (size_t)r * (size_t)D, D);
        }
        if (!one_block) {
            store_grad(A, &p->gk, boff, b, dk, c0, nc, D, A->gk);
            store_grad(A, &p->gv, boff, b, dv, c0, nc, DV, A->gv);
        }
    }
    if (all_rows && p->nsplit == 1)
        for (int64_t i = 0; i < SQ; ++i)
            store_row((void *)A->base[p->vdq], vdq->dt, boff[p->vdq] + i * vdq->rs, vdq->cs,
                      dq_rows + (size_t)i * (size_t)D, D);
}

typedef struct {
    const sb_args *A;
    sb_layout L;
} sb_work;

static void sb_work_item(const void *arg, int64_t w, char *buf) {
    const sb_work *W = arg;
    sb_item(W->A, w / W->A->p->nsplit, w % W->A->p->nsplit, buf, &W->L);
}

/* dQ row (b, i) of a key split: the item partial sums added in split order. */
static void reduce_dq_row(const sb_args *A, int64_t b, int64_t i, float *acc) {
    const sb_plan *p = A->p;
    const size_t D = (size_t)p->dqk, S = (size_t)p->nsplit;
    const float *part = A->dqp + ((size_t)b * S * (size_t)p->sq + (size_t)i) * D;
    memcpy(acc, part, D * sizeof(float));
    for (size_t s = 1; s < S; ++s)
        for (size_t d = 0; d < D; ++d) acc[d] += part[s * (size_t)p->sq * D + d];
    int64_t bidx[SB_MAX_BATCH], off = 0;
    sd_batch_index(b, p->nb, p->bdims, bidx);
    const sb_view *v = &p->views[p->vdq];
    for (int k = 0; k < p->nb; ++k) off += bidx[k] * v->bs[k];
    store_row((void *)A->base[p->vdq], v->dt, off + i * v->rs, v->cs, acc, p->dqk);
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
    const dnnl_fpmath_mode_t mode = ctx ? ctx->fpmath : dnnl_fpmath_mode_strict;
    sb_args A = {.p = p, .vec = pt_vec()};
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
    A.drop_same = p->drop_p.on && p->drop_dp.on && A.dp_p.seed == A.dp_dp.seed && A.dp_p.offset == A.dp_dp.offset &&
                  A.dp_p.k.threshold == A.dp_dp.k.threshold && A.dp_p.k.inv_q == A.dp_dp.k.inv_q;
    if (p->nbatch == 0) return dnnl_success;
    if (!scratch) return pt_err(dnnl_invalid_arguments, "sdpa backward: no scratchpad");
    A.mm[MM_S] = mm_for(mode, p->q_dt, p->k_dt, p->bq, p->dqk);
    A.mm[MM_DP] = mm_for(mode, p->do_dt, p->v_dt, p->bq, p->dv);
    A.mm[MM_DV] = mm_for(mode, p->pc_dt, p->do_dt, p->bk, p->bq);
    A.mm[MM_DK] = mm_for(mode, p->dsc_dt, p->q_dt, p->bk, p->bq);
    A.mm[MM_DQ] = mm_for(mode, p->dsc_dt, p->k_dt, p->bq, p->bk);
    A.pc_packed_bf16 = p->pc_dt == dnnl_bf16 && A.mm[MM_DV].uk->kind == PT_GEMM_BF16;
    A.dsc_packed_bf16 =
        p->dsc_dt == dnnl_bf16 && A.mm[MM_DK].uk->kind == PT_GEMM_BF16 && A.mm[MM_DQ].uk->kind == PT_GEMM_BF16;
    A.decode = decode_form(&A);
    A.decode_dq = decode_dq_form(&A);
    A.decode_out = A.decode && decode_direct(&A, &p->gv) && decode_direct(&A, &p->gk);
    A.gk = p->gk.reduce ? (float *)((char *)scratch + p->gk_off) : NULL;
    A.gv = p->gv.reduce ? (float *)((char *)scratch + p->gv_off) : NULL;
    A.dqp = p->nsplit > 1 ? (float *)((char *)scratch + p->dq_off) : NULL;
    A.skip_step = -1;
    if (p->nsteps > 0 && p->steps[p->nsteps - 1].kind == SB_CAUSAL) {
        const sb_step *st = &p->steps[p->nsteps - 1];
        const sb_view *fv = &p->views[st->a];
        bool single = fv->rs == 0 && fv->cs == 0;
        for (int i = 0; i < p->nb; ++i) single = single && fv->bs[i] == 0;
        if (single && pt_elem_load(A.base[st->a], fv->dt, 0) == -INFINITY) A.skip_step = p->nsteps - 1;
    }
    const sb_work W = {.A = &A, .L = sb_scratch_layout(p)};
    const int64_t nwork = p->nbatch * p->nsplit;
    /* Neighbouring heads to one thread, a run of them at a time: with
     * [batch, keys, heads, D] layouts two heads share the cache lines of
     * each dK / dV row (48 bf16 = 96 bytes), and handing heads out one by
     * one had the two threads write the same lines at once (timm's decode
     * backward, 2 threads: 2.48-2.52 -> 2.27-2.39 ms). */
    const int wthr = sd_threads(p->nthr, ctx, nwork);
    const int64_t chunk = nwork / (4 * (int64_t)wthr) > 1 ? nwork / (4 * (int64_t)wthr) : 1;
    sd_parallel_chunks(wthr, true, nwork, chunk, scratch, W.L.total, sb_work_item, &W);
    const int nthr = sd_threads(p->nthr, ctx, INT64_MAX);
    if (p->nsplit > 1) {
        /* Row buffers of the threads' slices are free again. */
        const int64_t rows = p->nbatch * p->sq;
#pragma omp parallel num_threads(nthr) if (rows * p->nsplit * p->dqk > 32768)
        {
            float *acc = (float *)((char *)scratch + (size_t)pt_thread_id() * W.L.total + W.L.dq);
#pragma omp for schedule(static)
            for (int64_t w = 0; w < rows; ++w) reduce_dq_row(&A, w / p->sq, w % p->sq, acc);
        }
    }
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

/* Key splits per head: 1 when the heads alone balance the threads (a
 * multiple of them, or enough that the last round hardly matters), else the
 * fewest splits that do, at most one per key tile. */
static int64_t key_splits(int64_t nbatch, int nthr, int64_t tiles) {
    if (nthr <= 1 || nbatch <= 0) return 1;
    int64_t s = 1;
    while (s < tiles && (nbatch * s) % nthr != 0 && nbatch * s < 8 * (int64_t)nthr) ++s;
    return s;
}

size_t pt_sdpa_bwd_plan_blocks(sb_plan *p, int nthr) {
    p->bq = (int)(p->sq < SB_BQ ? (p->sq > 0 ? p->sq : 1) : SB_BQ);
    p->bk = SB_BK;
    const int64_t tiles = p->skv > 0 ? (p->skv + p->bk - 1) / p->bk : 1;
    const double macs = (double)p->nbatch * (double)p->sq * (double)p->skv * (double)(3 * p->dqk + 2 * p->dv);
    p->nthr = nthr < 1 || macs < SB_SERIAL_MACS ? 1 : nthr;
    p->nsplit = key_splits(p->nbatch, p->nthr, tiles);
    const int64_t per = (tiles + p->nsplit - 1) / p->nsplit; /* tiles per split */
    p->nsplit = (tiles + per - 1) / per;                     /* no empty split */
    p->chunk = per * p->bk;
    if (p->chunk > p->skv) p->chunk = p->skv;
    /* Keys per pass: their panels and accumulators (f32 bound) within the L2 budget. */
    const int64_t key_bytes = (2 * p->dqk + p->dv) * 4 + (p->dqk + p->dv) * 4;
    int64_t span = SB_L2_BYTES / (key_bytes > 0 ? key_bytes : 1) / p->bk * p->bk;
    if (span < p->bk) span = p->bk;
    p->kspan = span < p->chunk ? span : p->chunk;
    if ((int64_t)p->nthr > p->nbatch * p->nsplit) p->nthr = p->nbatch * p->nsplit > 0 ? (int)(p->nbatch * p->nsplit) : 1;
    p->thr_bytes = sb_scratch_layout(p).total;
    size_t at = p->thr_bytes * (size_t)p->nthr;
    const size_t heads = (size_t)p->nbatch * (size_t)p->skv;
    if (p->nsplit > 1)
        p->dq_off = sd_take(&at, (size_t)p->nbatch * (size_t)p->nsplit * (size_t)p->sq * (size_t)p->dqk * sizeof(float));
    if (p->gk.reduce) p->gk_off = sd_take(&at, heads * (size_t)p->dqk * sizeof(float));
    if (p->gv.reduce) p->gv_off = sd_take(&at, heads * (size_t)p->dv * sizeof(float));
    return at;
}
