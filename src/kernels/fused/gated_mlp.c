/* The fused gated-MLP kernel (see gated_mlp.h): runs a plan made by
 * compile/lower_gated_mlp.c on the GEMM engine (kernels/gemm/gemm.h).
 *
 * Work goes by blocks of src rows (one block for decode; a block's hidden
 * rows stay within GM_H_BYTES for long prompts).  Per row block, three
 * engine runs, each parallel inside the engine (it splits N and M; this
 * kernel opens no parallel region around them):
 *   1. combine input 0 (src · W): the epilogue adds the bias, rounds to the
 *      MatMul's type, applies the branch's activation and stores the value
 *      into G while the tile is hot;
 *   2. combine input 1: the same, then the combine op with the G row as its
 *      first input (requested ahead: G comes back from memory), rounded to
 *      the combine's (and the TypeCast's) type, into H;
 *   3. the down product reads H as its A operand (an f32 H rounded by the
 *      engine as the math mode rounds an f32 operand); its epilogue adds the
 *      bias and stores.
 * G and H hold values already rounded to their declared types, in those
 * types when bf16 / f16 (else f32), H in G's place when the types agree.
 * The element-wise ops run on runs of GM_RUN elements of a tile row:
 * swish (Sigmoid, as the single-op Sigmoid computes it, and Multiply), a
 * Multiply combine and the bf16 / f16 rounding on the vector row, the rest
 * through the bound reference kernels.  The engine reads the
 * weights in their own type: the small-M path streams f32 / bf16 / f16 and
 * dequantises int8 / int4 (groups along k) in registers; larger blocks pack
 * panels.  Weights whose scales also group along n are dequantised into a
 * dense f32 copy first.
 * Constant weights are packed once through the constant tensor cache where
 * packing pays.  Products accumulate in f32 (docs/numerics.md). */
#include "kernels/fused/const_weights.h"
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
#include "kernels/gemm/gemm.h"
#include "kernels/vec/vec.h"
#include "kernels/vec/vec_rows.h"
#include "runtime/const_cache.h"

#define GM_H_BYTES (32u << 20)           /* hidden rows of one row block at most */
#define GM_MIN_BLOCK 32                  /* rows per block at least (keeps the weights' re-reads few) */
#define GM_DENSE_PARALLEL_MIN (1 << 18)  /* dense dequantisation below this runs on one thread */
#define GM_ALIGN 64
#define GM_LINE_BYTES 64                 /* bytes per cache line */
#define GM_RUN 1024                      /* elements per element-wise step: hot in L1, and below the
                                          * reference kernels' threshold for a parallel region */

enum { GM_IN0, GM_IN1, GM_DOWN, GM_PRODUCTS }; /* combine input 0, input 1, down projection */

/* One product of the partition on the engine. */
typedef struct {
    const pt_gm_weight *W;
    int64_t K, N;           /* of this product */
    pt_gemm_plan plan[2];   /* [0]: a full row block; [1]: the last, shorter one ([0] when none) */
    bool dense;             /* weight dequantised into a dense f32 copy per batch item first */
    size_t dense_off;
    bool cache;             /* packed once through the constant tensor cache */
    size_t packed;          /* the weight port holds it in this packed layout (seed 004 option 2; 0: plain) */
    size_t w_bytes, sc_bytes, zp_bytes; /* spans fingerprinted for the cache */
} gm_product;

struct pt_gm_engine {
    gm_product prod[GM_PRODUCTS];
    int64_t bm, nblocks, tail; /* rows per block, blocks, rows of the last block */
    int nthr;
    dnnl_data_type_t g_store;  /* type G is stored in: combine input 0's own bf16 / f16, else f32 */
    dnnl_data_type_t h_store;  /* type H is stored in: the down MatMul's own bf16 / f16, else f32 */
    size_t ref_scratch;        /* per thread, for the bound reference kernels */
    size_t tmp_floats;         /* per thread: one run of a tile row */
    size_t off_g, off_h, off_threads, thread_bytes, off_gemm, total;
    /* Both combine inputs in one dual engine run (their weights alike and
     * packed per chunk): each src block packed once for both products, the
     * combine done on the two tiles in the epilogue, no G. */
    bool pair;
    pt_gemm_plan pair_plan[2]; /* [0]: a full row block; [1]: the last one */
};

static size_t gm_up(size_t x) { return (x + GM_ALIGN - 1) / GM_ALIGN * GM_ALIGN; }

static bool is_4bit(dnnl_data_type_t dt) { return dt == dnnl_s4 || dt == dnnl_u4; }
static bool is_int_dt(dnnl_data_type_t dt) {
    return dt == dnnl_s8 || dt == dnnl_u8 || dt == dnnl_s4 || dt == dnnl_u4;
}

/* Element `off` of a buffer of type dt (4-bit offsets are even: checked at plan time). */
static const void *elem_at(const void *base, dnnl_data_type_t dt, int64_t off) {
    return base ? (const char *)base + off * (int64_t)pt_dt_bits(dt) / 8 : NULL;
}

/* ---- batch offsets ------------------------------------------------------- */

typedef struct {
    int64_t w, s, z;
} gm_woff;

static gm_woff weight_offsets(const pt_gm_weight *W, int nb, const int64_t *bidx) {
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

static int64_t view_offset(const pt_gm_view *v, int nb, const int64_t *bidx) {
    int64_t o = 0;
    for (int j = 0; j < nb; ++j) o += bidx[j] * v->bs[j];
    return o;
}

static bool batch_free(const pt_gm_weight *W, int nb) {
    for (int j = 0; j < nb; ++j)
        if (W->w.bs[j] || (W->quant && (W->sc.bs[j] || W->zp.bs[j]))) return false;
    return true;
}

/* ---- planning ------------------------------------------------------------ */

/* The engine's form of W's dequantisation: one scale (and zero point) per
 * column and group of k.  False when they group along n as well, or for
 * zero points of a type the engine does not read. */
static bool engine_dequant(const pt_gm_weight *W, int64_t K, int64_t N, pt_gemm_dequant *dq) {
    memset(dq, 0, sizeof *dq);
    dq->on = true;
    dq->scale_dt = W->sc.dt;
    dq->zp_dt = W->zp.port >= 0 ? W->zp.dt : dnnl_data_type_undef;
    if (dq->zp_dt != dnnl_data_type_undef && !is_int_dt(dq->zp_dt) && dq->zp_dt != dnnl_s32) return false;
    if (W->gn > 1 && W->gn < N) return false;
    const bool per_col = W->gn == 1, k_groups = W->gk < K;
    dq->sc_sn = per_col ? W->sc.cs : 0;
    dq->sc_sg = k_groups ? W->sc.rs : 0;
    if (W->zp.port >= 0) {
        dq->zp_sn = per_col ? W->zp.cs : 0;
        dq->zp_sg = k_groups ? W->zp.rs : 0;
    }
    dq->group = dq->sc_sg || dq->zp_sg ? W->gk : 0;
    return true;
}

/* The compute kind of a product from its operand types and the math mode
 * (docs/numerics.md): bf16 x bf16, or float operands under bf16 / any,
 * take the bf16 kind; integer weights follow the mode only with
 * apply_to_int; f16 operands and the remaining cases keep f32, with the
 * f32 operands rounded as the mode says. */
/* Elements a [rows x cols] view with non-negative strides spans. */
static int64_t span_elems(int64_t rows, int64_t rs, int64_t cols, int64_t cs) {
    return (rows - 1) * rs + (cols - 1) * cs + 1;
}

/* Plans product `x` (A: `a`, B: its weight) for blocks of `bm` rows and the
 * tail block.  `a_decl` is the type the MatMul declares for A. */
static pt_status plan_product(const pt_gm_plan *p, gm_product *x, const pt_gemm_operand *a, dnnl_data_type_t a_decl,
                              int64_t bm, int64_t tail, int nthr) {
    const pt_gm_weight *W = x->W;
    pt_gemm_desc d;
    memset(&d, 0, sizeof d);
    d.M = bm, d.N = x->N, d.K = x->K;
    d.a = *a;
    d.b.dt = W->w.dt;
    d.b.s_row = W->w.cs, d.b.s_k = W->w.rs;
    if (W->quant) {
        x->dense = !engine_dequant(W, x->K, x->N, &d.b.dq);
        /* 4-bit data is addressed per batch item by a byte pointer. */
        for (int j = 0; j < p->nb; ++j)
            if ((is_4bit(W->w.dt) && W->w.bs[j] % 2) || (W->zp.port >= 0 && is_4bit(W->zp.dt) && W->zp.bs[j] % 2))
                x->dense = true;
        if (x->dense) {
            memset(&d.b, 0, sizeof d.b);
            d.b.dt = dnnl_f32;
            d.b.s_row = 1, d.b.s_k = x->N;
        }
    }
    d.kind = pt_gemm_float_kind(a_decl, W->quant ? W->w.dt : W->op_dt, W->quant, p->mode, p->apply_to_int);
    if (d.kind == PT_GEMM_F32 && p->mode != dnnl_fpmath_mode_strict) {
        d.b.round = p->mode;
        if (a_decl == dnnl_f32) d.a.round = p->mode;
    }
    /* Seed 004 option 2: a weight given as `any` takes the packed layout
     * where packing ahead pays; one given packed must be exactly this one. */
    x->packed = 0;
    if (W->given_layout && !x->dense && !W->quant && batch_free(W, p->nb) &&
        (W->given_layout != SIZE_MAX || pt_gemm_prepacked_b_pays(&d))) {
        pt_gemm_desc pd = d;
        pd.b_constant = true;
        pt_gemm_plan probe;
        const bool k_last = W->w.rs < W->w.cs; /* the plain weight's last dim is K */
        if (pt_gemm_plan_init(&probe, &pd, nthr) == dnnl_success)
            x->packed = W->given_layout == SIZE_MAX                       ? pt_gemm_packed_b_register(&probe, k_last)
                        : pt_gemm_packed_b_matches(&probe, k_last, W->given_layout) ? W->given_layout
                                                                                   : 0;
        if (x->packed) d.b_constant = true;
    }
    x->cache = !x->packed && !x->dense && W->constant && batch_free(W, p->nb) && pt_gemm_prepacked_b_pays(&d);
    if (!x->packed) d.b_constant = x->cache;
    if (x->cache) {
        x->w_bytes = pt_dt_bytes(W->w.dt, span_elems(x->K, W->w.rs, x->N, W->w.cs));
        if (W->quant) {
            int64_t gk = (x->K + W->gk - 1) / W->gk, gn = (x->N + W->gn - 1) / W->gn;
            x->sc_bytes = pt_dt_bytes(W->sc.dt, span_elems(gk, W->sc.rs, gn, W->sc.cs));
            if (W->zp.port >= 0) x->zp_bytes = pt_dt_bytes(W->zp.dt, span_elems(gk, W->zp.rs, gn, W->zp.cs));
        }
    }
    PT_CHECK(pt_gemm_plan_init(&x->plan[0], &d, nthr));
    x->plan[1] = x->plan[0];
    if (tail != bm) {
        d.M = tail;
        PT_CHECK(pt_gemm_plan_init(&x->plan[1], &d, nthr));
        /* The prepacked layout depends on the microkernel only: both plans share it. */
        if (x->plan[1].uk != x->plan[0].uk) return dnnl_unimplemented;
    }
    return dnnl_success;
}

static void release_bound(pt_bound_kernel *k) {
    if (k->release && k->params) k->release(k->params);
    *k = (pt_bound_kernel){0};
}

void pt_gated_mlp_plan_free(pt_gm_plan *p) {
    if (!p) return;
    for (int s = 0; s < 2; ++s) {
        release_bound(&p->br[s].act_k);
        release_bound(&p->br[s].mul_k);
    }
    release_bound(&p->comb_k);
    if (p->eng) {
        pt_const_cache_forget_owner(p->eng);
        free(p->eng);
    }
    free(p);
}

static void gm_release(pt_fused *f) {
    pt_gated_mlp_plan_free(f->state);
    f->state = NULL;
}

static pt_status gm_run(const pt_fused *f, const pt_tview *in, size_t nin, const pt_tview *out, size_t nout,
                        void *scratch, const pt_exec_ctx *ctx);

pt_status pt_gated_mlp_finish(pt_gm_plan *p, pt_fused *fused) {
    struct pt_gm_engine *e = calloc(1, sizeof *e);
    if (!e) return dnnl_out_of_memory;
    p->eng = e;
    e->nthr = 1;
#ifdef _OPENMP
    e->nthr = omp_get_max_threads() > 0 ? omp_get_max_threads() : 1;
#endif
    pt_status st = dnnl_unimplemented;
    /* Row blocks: one for decode; as even as possible, with H (bm x N f32)
     * within its budget, for long prompts. */
    int64_t bm_max = (int64_t)(GM_H_BYTES / ((size_t)(p->N > 0 ? p->N : 1) * sizeof(float)));
    if (bm_max < GM_MIN_BLOCK) bm_max = GM_MIN_BLOCK;
    const int64_t M = p->M > 0 ? p->M : 1;
    e->nblocks = (M + bm_max - 1) / bm_max;
    e->bm = (M + e->nblocks - 1) / e->nblocks;
    e->tail = M - (e->nblocks - 1) * e->bm;
    if (p->K < 1 || p->N < 1 || p->O < 1) goto declined;

    e->prod[GM_IN0] = (gm_product){.W = &p->br[0].W, .K = p->K, .N = p->N};
    e->prod[GM_IN1] = (gm_product){.W = &p->br[1].W, .K = p->K, .N = p->N};
    e->prod[GM_DOWN] = (gm_product){.W = &p->Wd, .K = p->N, .N = p->O};
    pt_gemm_operand src = {.dt = p->src.dt, .s_row = p->src.rs, .s_k = p->src.cs};
    /* G holds combine input 0, H the hidden values, each already rounded to
     * its declared type and stored in it when that is bf16 / f16 (else as
     * f32): half the bytes to write and read back, and the down product
     * packs H as it packs a MatMul's own narrow A, without conversion.  H
     * takes G's place when both have one type. */
    const pt_gm_branch *b0 = &p->br[0];
    const dnnl_data_type_t g_dt = b0->act == PT_GM_ACT_SWISH   ? b0->mul_dt
                                  : b0->act == PT_GM_ACT_UNARY ? b0->act_dt
                                                               : b0->mm_dt;
    e->g_store = g_dt == dnnl_bf16 || g_dt == dnnl_f16 ? g_dt : dnnl_f32;
    e->h_store = p->h_dt == dnnl_bf16 || p->h_dt == dnnl_f16 ? p->h_dt : dnnl_f32;
    pt_gemm_operand hid = {.dt = e->h_store, .s_row = p->N, .s_k = 1};
    for (int i = 0; i < GM_PRODUCTS; ++i) {
        bool down = i == GM_DOWN;
        st = plan_product(p, &e->prod[i], down ? &hid : &src, down ? p->h_dt : p->src.dt, e->bm, e->tail, e->nthr);
        if (st != dnnl_success) goto declined;
    }

    /* The pair run: where both input products read their weights alike
     * (same description, nothing dequantised ahead or packed once) and the
     * engine takes a dual run for both row-block plans. */
    {
        const gm_product *x0 = &e->prod[GM_IN0], *x1 = &e->prod[GM_IN1];
        e->pair = !x0->dense && !x1->dense && !x0->cache && !x1->cache && !x0->packed && !x1->packed;
        for (int j = 0; j < 2 && e->pair; ++j) {
            pt_gemm_desc d = x0->plan[j].d;
            e->pair = memcmp(&d, &x1->plan[j].d, sizeof d) == 0;
            d.dual = true;
            if (e->pair) e->pair = pt_gemm_plan_init(&e->pair_plan[j], &d, e->nthr) == dnnl_success;
        }
    }

    const pt_bound_kernel *ks[] = {&p->br[0].act_k, &p->br[0].mul_k, &p->br[1].act_k, &p->br[1].mul_k, &p->comb_k};
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; ++i)
        if (ks[i]->scratch_bytes > e->ref_scratch) e->ref_scratch = ks[i]->scratch_bytes;
    e->tmp_floats = GM_RUN;

    size_t at = 0, gemm = 0;
    e->off_g = at;
    if (!e->pair) at = gm_up(at + pt_dt_bytes(e->g_store, e->bm * p->N)); /* the pair run keeps no G */
    e->off_h = e->off_g;
    if (e->pair || e->h_store != e->g_store) e->off_h = at, at = gm_up(at + pt_dt_bytes(e->h_store, e->bm * p->N));
    for (int j = 0; j < 2 && e->pair; ++j) {
        size_t b = pt_gemm_scratch_bytes(&e->pair_plan[j], e->nthr);
        if (b > gemm) gemm = b;
    }
    for (int i = 0; i < GM_PRODUCTS; ++i) {
        gm_product *x = &e->prod[i];
        if (x->dense) x->dense_off = at, at = gm_up(at + (size_t)x->K * (size_t)x->N * sizeof(float));
        for (int j = 0; j < 2; ++j) {
            size_t b = pt_gemm_scratch_bytes(&x->plan[j], e->nthr);
            if (b > gemm) gemm = b;
        }
    }
    e->thread_bytes = gm_up(sizeof(pt_status)) + gm_up(e->tmp_floats * sizeof(float)) + gm_up(e->ref_scratch);
    e->off_threads = at, at += (size_t)e->nthr * e->thread_bytes;
    e->off_gemm = at = gm_up(at);
    e->total = at + gemm;
    pt_verbose(2, "info,kernel,gated_mlp,%s,M %lld K %lld N %lld O %lld batch %lld rows/block %lld%s%s",
               e->prod[GM_IN0].plan[0].uk->name, (long long)p->M, (long long)p->K, (long long)p->N,
               (long long)p->O, (long long)p->nbatch, (long long)e->bm,
               e->prod[GM_IN0].cache ? ",constant weights packed once" : "",
               e->pair ? ",both inputs in one run" : "");

    fused->run = gm_run;
    fused->release = gm_release;
    fused->state = p;
    fused->scratch_bytes = e->total;
    fused->kernel_name = e->prod[GM_IN0].plan[0].uk->name;
    for (int i = 0; i < GM_PRODUCTS; ++i)
        if (e->prod[i].packed) pt_fused_add_packed(fused, false, (size_t)e->prod[i].W->w.port, e->prod[i].packed);
    return dnnl_success;

declined:
    free(e);
    p->eng = NULL;
    return st == dnnl_out_of_memory ? st : dnnl_unimplemented;
}

/* ---- epilogues ------------------------------------------------------------ */

/* What the epilogues of one row block read. */
typedef struct {
    const pt_gm_plan *p;
    const struct pt_gm_engine *e;
    const void *const *in;
    void *out;
    int64_t m_base;           /* first row of the block */
    int64_t bias_off[2], dbias_off, out_off; /* batch offsets */
    void *G;                  /* block rows x N, in e->g_store: combine input 0 */
    void *H;                  /* block rows x N, in e->h_store: the down product's A */
    char *threads;
    pt_exec_ctx ectx;         /* single-threaded context for the reference kernels */
} gm_epi;

/* A [1, n] f32 view of a row. */
static pt_tview row_view(float *data, int64_t n) {
    pt_tview v;
    memset(&v, 0, sizeof v);
    v.lt.ndims = 2;
    v.lt.dims[0] = 1;
    v.lt.dims[1] = n;
    v.lt.data_type = dnnl_f32;
    v.lt.layout_type = dnnl_graph_layout_type_strided;
    v.lt.layout.strides[0] = n;
    v.lt.layout.strides[1] = 1;
    v.data = data;
    return v;
}

typedef struct {
    pt_status *status;
    float *tmp;
    pt_exec_ctx ectx;
} gm_thread;

static gm_thread thread_state(const gm_epi *E, int tid) {
    char *t = E->threads + (size_t)tid * E->e->thread_bytes;
    gm_thread s;
    s.status = (pt_status *)t;
    s.tmp = (float *)(t + gm_up(sizeof(pt_status)));
    s.ectx = E->ectx;
    s.ectx.scratch = E->e->ref_scratch ? t + gm_up(sizeof(pt_status)) + gm_up(E->e->tmp_floats * sizeof(float))
                                       : NULL;
    s.ectx.scratch_bytes = E->e->ref_scratch;
    return s;
}

#define GM_ROUND_STEP 256 /* elements per conversion round trip (stack buffer) */

/* Rounds a run to a declared type: bf16 / f16 by a round trip through the
 * vector row's conversions (rounding as ir/dtype_round.h), other types
 * through the shared converter. */
static void round_run(dnnl_data_type_t dt, float *x, int64_t n) {
    if (dt != dnnl_bf16 && dt != dnnl_f16) {
        if (dt != dnnl_f32) pt_run_round(dt, x, n);
        return;
    }
    const pt_vec_ops *v = pt_vec();
    uint16_t bits[GM_ROUND_STEP];
    for (int64_t j = 0; j < n; j += GM_ROUND_STEP) {
        const int64_t c = n - j < GM_ROUND_STEP ? n - j : GM_ROUND_STEP;
        if (dt == dnnl_bf16) {
            v->f32_to_bf16(bits, x + j, c);
            v->bf16_to_f32(x + j, bits, c);
        } else {
            v->f32_to_f16(bits, x + j, c);
            v->f16_to_f32(x + j, bits, c);
        }
    }
}

/* Branch `s`'s combine input over one run (row m of the block, columns
 * [n0, n0 + n), n <= GM_RUN): the MatMul output x plus bias, rounded to the
 * MatMul's type, then the activation, into dst (which may be x). */
static pt_status branch_run(const gm_epi *E, int s, int64_t m, int64_t n0, float *x, int64_t n, float *dst,
                            gm_thread *t) {
    const pt_gm_branch *b = &E->p->br[s];
    if (b->has_bias) {
        pt_run_load(E->in[b->bias.port], b->bias.dt, E->bias_off[s] + (E->m_base + m) * b->bias.rs + n0 * b->bias.cs,
                    b->bias.cs, t->tmp, n);
        for (int64_t j = 0; j < n; ++j) x[j] += t->tmp[j];
    }
    round_run(b->mm_dt, x, n);
    switch (b->act) {
        case PT_GM_ACT_UNARY: {
            pt_tview xv = row_view(x, n), dv = row_view(dst, n);
            PT_CHECK(b->act_k.run(b->act_k.params, &xv, 1, &dv, 1, &t->ectx));
            round_run(b->act_dt, dst, n);
            break;
        }
        case PT_GM_ACT_SWISH: {
            /* Sigmoid in one pass on the vector row (as the single-op
             * Sigmoid computes it), then the Multiply. */
            static const pt_eltwise_params sigmoid = {.kind = dnnl_graph_op_sigmoid};
            float *sg = t->tmp;
            if (!pt_vec()->eltwise(&sigmoid, sg, x, n)) pt_vec_row_generic.eltwise(&sigmoid, sg, x, n);
            round_run(b->act_dt, sg, n);
            pt_vec()->binary(dnnl_graph_op_multiply, dst, x, 1, sg, 1, n);
            round_run(b->mul_dt, dst, n);
            break;
        }
        default:
            if (dst != x) memcpy(dst, x, (size_t)n * sizeof(float));
            break;
    }
    return dnnl_success;
}

/* The combine of a run of n values (combine inputs g and x, x overwritten)
 * and the TypeCast, stored into H at element `at`; st: the branches'
 * status so far (the combine is skipped after a failure). */
static pt_status combine_into_h(const gm_epi *E, gm_thread *t, pt_status st, float *g, float *x, int64_t n,
                                int64_t at) {
    const pt_gm_plan *p = E->p;
    float *r = g;
    if (st == dnnl_success && p->comb_kind == dnnl_graph_op_multiply) {
        pt_vec()->binary(dnnl_graph_op_multiply, x, g, 1, x, 1, n);
        r = x;
    } else if (st == dnnl_success) {
        pt_tview ins[2] = {row_view(g, n), row_view(x, n)};
        st = p->comb_k.run(p->comb_k.params, ins, 2, &ins[0], 1, &t->ectx);
    }
    round_run(p->comb_dt, r, n);
    if (p->has_tc) round_run(p->tc_dt, r, n);
    if (E->e->h_store != dnnl_f32 || r != (float *)E->H + at) pt_run_store(E->H, E->e->h_store, at, 1, r, n);
    return st;
}

/* Combine input 0 into G (f32 straight from the branch, else stored). */
static void epi_in0(void *vctx, int64_t b, int64_t m0, int64_t n0, int64_t mlen, int64_t nlen, float *c,
                    int64_t ldc, int tid) {
    (void)b;
    const gm_epi *E = vctx;
    const dnnl_data_type_t gdt = E->e->g_store;
    gm_thread t = thread_state(E, tid);
    for (int64_t i = 0; i < mlen && *t.status == dnnl_success; ++i)
        for (int64_t j = 0; j < nlen && *t.status == dnnl_success; j += GM_RUN) {
            const int64_t n = nlen - j < GM_RUN ? nlen - j : GM_RUN, at = (m0 + i) * E->p->N + n0 + j;
            float *x = c + i * ldc + j, *dst = gdt == dnnl_f32 ? (float *)E->G + at : x;
            *t.status = branch_run(E, 0, m0 + i, n0 + j, x, n, dst, &t);
            if (gdt != dnnl_f32) pt_run_store(E->G, gdt, at, 1, x, n);
        }
}

/* Asks for G's rows [m0, m0 + mlen) x columns [n0, n0 + nlen) ahead of use:
 * input 0 wrote them a whole product earlier, so they come from memory. */
static void prefetch_g(const gm_epi *E, int64_t m0, int64_t n0, int64_t mlen, int64_t nlen) {
    const int64_t eb = (int64_t)pt_dt_bytes(E->e->g_store, 1); /* f32 / bf16 / f16 */
    const int64_t N = E->p->N, end = n0 + nlen < N ? n0 + nlen : N;
    for (int64_t i = 0; i < mlen; ++i)
        for (int64_t j = n0; j < end; j += GM_LINE_BYTES / eb)
            __builtin_prefetch((const char *)E->G + ((m0 + i) * N + j) * eb, 0, 3);
}

/* Combine input 1, then the combine (and TypeCast) with G into H.  G of
 * this tile is requested first (all its rows at once, not one row's
 * latency after another), and that of the next tile of the thread's
 * columns, which its product sweep then hides. */
static void epi_in1(void *vctx, int64_t b, int64_t m0, int64_t n0, int64_t mlen, int64_t nlen, float *c,
                    int64_t ldc, int tid) {
    (void)b;
    const gm_epi *E = vctx;
    const pt_gm_plan *p = E->p;
    gm_thread t = thread_state(E, tid);
    prefetch_g(E, m0, n0, mlen, nlen);
    for (int64_t i = 0; i < mlen && *t.status == dnnl_success; ++i)
        for (int64_t j = 0; j < nlen && *t.status == dnnl_success; j += GM_RUN) {
            const int64_t n = nlen - j < GM_RUN ? nlen - j : GM_RUN;
            const int64_t at = (m0 + i) * p->N + n0 + j;
            float *x = c + i * ldc + j, *g = t.tmp;
            pt_status st = branch_run(E, 1, m0 + i, n0 + j, x, n, x, &t);
            if (E->e->g_store == dnnl_f32)
                g = (float *)E->G + at;
            else /* the branch is done with t.tmp */
                pt_run_load(E->G, E->e->g_store, at, 1, g, n);
            *t.status = combine_into_h(E, &t, st, g, x, n, at);
        }
    prefetch_g(E, m0, n0 + nlen, mlen, nlen);
}

/* Both combine inputs of a tile (the pair run): each branch on its own
 * tile, then the combine (and TypeCast) into H, as epi_in0 and epi_in1
 * compute them, with combine input 0 taken from the first tile instead of
 * G (the same values: G held them rounded to their declared type). */
static void epi_pair(void *vctx, int64_t b, int64_t m0, int64_t n0, int64_t mlen, int64_t nlen, float *c, float *c2,
                     int64_t ldc, int tid) {
    (void)b;
    const gm_epi *E = vctx;
    const pt_gm_plan *p = E->p;
    gm_thread t = thread_state(E, tid);
    for (int64_t i = 0; i < mlen && *t.status == dnnl_success; ++i)
        for (int64_t j = 0; j < nlen && *t.status == dnnl_success; j += GM_RUN) {
            const int64_t n = nlen - j < GM_RUN ? nlen - j : GM_RUN;
            const int64_t at = (m0 + i) * p->N + n0 + j;
            float *g = c + i * ldc + j, *x = c2 + i * ldc + j;
            pt_status st = branch_run(E, 0, m0 + i, n0 + j, g, n, g, &t);
            if (st == dnnl_success) st = branch_run(E, 1, m0 + i, n0 + j, x, n, x, &t);
            *t.status = combine_into_h(E, &t, st, g, x, n, at);
        }
}

/* The down product's tile: bias, then the output's type. */
static void epi_down(void *vctx, int64_t b, int64_t m0, int64_t n0, int64_t mlen, int64_t nlen, float *c,
                     int64_t ldc, int tid) {
    (void)b;
    const gm_epi *E = vctx;
    const pt_gm_plan *p = E->p;
    gm_thread t = thread_state(E, tid);
    for (int64_t i = 0; i < mlen; ++i) {
        const int64_t m = E->m_base + m0 + i;
        for (int64_t j = 0; j < nlen; j += GM_RUN) {
            const int64_t n = nlen - j < GM_RUN ? nlen - j : GM_RUN;
            float *x = c + i * ldc + j;
            if (p->has_dbias) {
                pt_run_load(E->in[p->dbias.port], p->dbias.dt,
                            E->dbias_off + m * p->dbias.rs + (n0 + j) * p->dbias.cs, p->dbias.cs, t.tmp, n);
                for (int64_t k = 0; k < n; ++k) x[k] += t.tmp[k];
            }
            pt_run_store(E->out, p->out.dt, E->out_off + m * p->out.rs + (n0 + j) * p->out.cs, p->out.cs, x, n);
        }
    }
}

/* ---- run ------------------------------------------------------------------ */

/* A weight dequantised into a dense [K][N] f32 copy: the DynamicDequantize
 * output rounded to its type (the forms the engine's operand does not take). */
static void dequant_dense(const gm_product *x, const void *const *in, gm_woff bo, float *dst, int nt) {
    const pt_gm_weight *W = x->W;
    const void *wb = in[W->w.port], *sb = in[W->sc.port], *zb = W->zp.port >= 0 ? in[W->zp.port] : NULL;
    if (x->K * x->N < GM_DENSE_PARALLEL_MIN) nt = 1;
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
    for (int64_t k = 0; k < x->K; ++k) {
        float *row = dst + k * x->N;
        pt_run_load(wb, W->w.dt, bo.w + k * W->w.rs, W->w.cs, row, x->N);
        const int64_t g = k / W->gk;
        for (int64_t n = 0; n < x->N; ++n) {
            const int64_t gn = n / W->gn;
            float v = row[n];
            if (zb) v -= pt_load_f32(zb, W->zp.dt, bo.z + g * W->zp.rs + gn * W->zp.cs);
            row[n] = v * pt_load_f32(sb, W->sc.dt, bo.s + g * W->sc.rs + gn * W->sc.cs);
        }
        pt_run_round(W->op_dt, row, x->N);
    }
}

typedef struct {
    const pt_gemm_plan *plan;
    const void *b, *scales, *zps;
} gm_pack_ctx;

static void fill_packed(void *vctx, void *dst) {
    const gm_pack_ctx *c = vctx;
    pt_gemm_pack_b_all(c->plan, c->b, c->scales, c->zps, dst);
}

/* The weight of product `i` packed once: from the constant cache, or NULL
 * (the engine packs per block) when the cache is off or full. */
static pt_status acquire_packed(const struct pt_gm_engine *e, int i, const void *const *in, const pt_exec_ctx *ctx,
                                pt_const_entry **entry, const void **packed) {
    const gm_product *x = &e->prod[i];
    const pt_gm_weight *W = x->W;
    const void *w = in[W->w.port];
    const void *sc = W->quant ? in[W->sc.port] : NULL, *zp = W->quant && W->zp.port >= 0 ? in[W->zp.port] : NULL;
    const pt_const_key key = pt_const_key_for(e, (uint64_t)i + 1, ctx, W->w.port, w);
    uint64_t fp = pt_const_fingerprint(w, x->w_bytes);
    if (sc) fp ^= pt_const_fingerprint(sc, x->sc_bytes) * 31;
    if (zp) fp ^= pt_const_fingerprint(zp, x->zp_bytes) * 131;
    gm_pack_ctx pc = {&x->plan[0], w, sc, zp};
    return pt_const_cache_acquire(&key, fp, x->plan[0].packed_b_bytes, fill_packed, &pc, entry, packed);
}

static pt_status gm_run(const pt_fused *f, const pt_tview *in, size_t nin, const pt_tview *out, size_t nout,
                        void *scratch, const pt_exec_ctx *ctx) {
    const pt_gm_plan *p = f->state;
    const struct pt_gm_engine *e = p->eng;
    const void *bases[64];
    if (nin > 64 || nout < 1) return pt_err(dnnl_invalid_arguments, "gated_mlp: unexpected port count");
    for (size_t i = 0; i < nin; ++i) bases[i] = in[i].data;
    if (p->nbatch == 0 || p->M == 0) return dnnl_success;
    if (!scratch) return pt_err(dnnl_invalid_arguments, "gated_mlp: no scratchpad");
    int nt = ctx && ctx->nthreads > 0 ? ctx->nthreads : 1;
    if (nt > e->nthr) nt = e->nthr;
    char *base = scratch;

    gm_epi E;
    memset(&E, 0, sizeof E);
    E.p = p, E.e = e, E.in = bases, E.out = out[0].data;
    E.G = base + e->off_g;
    E.H = base + e->off_h;
    E.threads = base + e->off_threads;
    E.ectx.fpmath = p->mode;
    E.ectx.apply_to_int = p->apply_to_int;
    E.ectx.nthreads = 1;
    for (int t = 0; t < e->nthr; ++t) *(pt_status *)(E.threads + (size_t)t * e->thread_bytes) = dnnl_success;

    pt_const_entry *entry[GM_PRODUCTS] = {NULL, NULL, NULL};
    const void *packed[GM_PRODUCTS] = {NULL, NULL, NULL};
    pt_status st = dnnl_success;
    for (int i = 0; i < GM_PRODUCTS && st == dnnl_success; ++i)
        if (e->prod[i].cache) st = acquire_packed(e, i, bases, ctx, &entry[i], &packed[i]);

    static const pt_gemm_epilogue_fn epilogues[GM_PRODUCTS] = {epi_in0, epi_in1, epi_down};
    for (int64_t b = 0; b < p->nbatch && st == dnnl_success; ++b) {
        int64_t bidx[PT_GM_MAX_BATCH];
        for (int64_t j = p->nb - 1, rem = b; j >= 0; --j) bidx[j] = rem % p->bdims[j], rem /= p->bdims[j];
        for (int s = 0; s < 2; ++s) E.bias_off[s] = p->br[s].has_bias ? view_offset(&p->br[s].bias, p->nb, bidx) : 0;
        E.dbias_off = p->has_dbias ? view_offset(&p->dbias, p->nb, bidx) : 0;
        E.out_off = view_offset(&p->out, p->nb, bidx);
        const int64_t soff = view_offset(&p->src, p->nb, bidx);

        pt_gemm_args args[GM_PRODUCTS];
        for (int i = 0; i < GM_PRODUCTS; ++i) {
            const gm_product *x = &e->prod[i];
            const pt_gm_weight *W = x->W;
            gm_woff bo = weight_offsets(W, p->nb, bidx);
            memset(&args[i], 0, sizeof args[i]);
            args[i].epilogue = epilogues[i];
            args[i].epilogue_ctx = &E;
            if (x->dense) {
                dequant_dense(x, bases, bo, (float *)(base + x->dense_off), nt);
                args[i].b = base + x->dense_off;
            } else {
                args[i].b = elem_at(bases[W->w.port], W->w.dt, bo.w);
                args[i].b_packed = x->packed ? bases[W->w.port] : packed[i];
                if (W->quant) {
                    args[i].b_scales = elem_at(bases[W->sc.port], W->sc.dt, bo.s);
                    if (W->zp.port >= 0) args[i].b_zps = elem_at(bases[W->zp.port], W->zp.dt, bo.z);
                }
            }
        }
        args[GM_DOWN].a = E.H;
        for (int64_t blk = 0; blk < e->nblocks && st == dnnl_success; ++blk) {
            const int which = blk == e->nblocks - 1 && e->tail != e->bm;
            E.m_base = blk * e->bm;
            const void *a = elem_at(bases[p->src.port], p->src.dt, soff + E.m_base * p->src.rs);
            args[GM_IN0].a = args[GM_IN1].a = a;
            if (e->pair) {
                pt_gemm_args both = args[GM_IN0];
                both.b2 = args[GM_IN1].b, both.b2_scales = args[GM_IN1].b_scales, both.b2_zps = args[GM_IN1].b_zps;
                both.epilogue = NULL, both.epilogue2 = epi_pair;
                st = pt_gemm_run(&e->pair_plan[which], &both, base + e->off_gemm, nt);
                for (int t = 0; t < e->nthr && st == dnnl_success; ++t)
                    st = *(pt_status *)(E.threads + (size_t)t * e->thread_bytes);
            }
            for (int i = e->pair ? GM_DOWN : 0; i < GM_PRODUCTS && st == dnnl_success; ++i) {
                st = pt_gemm_run(&e->prod[i].plan[which], &args[i], base + e->off_gemm, nt);
                for (int t = 0; t < e->nthr && st == dnnl_success; ++t)
                    st = *(pt_status *)(E.threads + (size_t)t * e->thread_bytes);
            }
        }
    }
    for (int i = 0; i < GM_PRODUCTS; ++i) pt_const_cache_release(entry[i]);
    return st;
}
