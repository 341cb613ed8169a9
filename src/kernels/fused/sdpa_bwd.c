/* Fused SDPA / GQA training backward (fusion-patterns.md §3.9, numerics
 * §18).  Work is split over heads (the batch dims of S); a thread walks its
 * head in query blocks and, inside a block, in key blocks.  For each
 * bq × bk tile it recomputes S, P = exp(S2 − stats) and dP, forms dS, and
 * adds the tile's contributions to dQ (rows of the block), dK and dV (the
 * whole head).  The S_q × S_kv matrices never exist; per thread the kernel
 * keeps the head's K / Kᵀ / Vᵀ and the dK / dV accumulators (O(S_kv · D)).
 *
 * Exactness (graph-json.md §10.4 compares MatMul outputs exactly) forces
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
#include "kernels/ref/philox.h"
#include "ops/op_schema.h"
#include "partition/pattern_sdpa_bwd.h"

#define SB_MAX_BATCH (DNNL_MAX_NDIMS - 2)
#define SB_MAX_STEPS 8
#define SB_MAX_VIEWS 40
#define SB_BQ 32 /* query rows per block */
#define SB_BK 64 /* keys per tile */

/* A tensor read or written by the kernel: port, data type, batch strides
 * against the batch dims of S (0 where broadcast) and two index strides
 * whose meaning depends on the tensor (row / column of the tile, or
 * sequence index / head-size index of a matrix operand). */
typedef struct {
    bool is_out;
    int port;
    dnnl_data_type_t dt;
    int64_t bs[SB_MAX_BATCH];
    int64_t rs, cs;
} sb_view;

typedef enum { SB_MUL, SB_DIV, SB_ADD, SB_SELECT, SB_CAUSAL } sb_kind;

/* One op (or the causal-mask block) of ScaleAndMasks. */
typedef struct {
    sb_kind kind;
    dnnl_data_type_t dt; /* declared output type */
    int a;               /* MUL/DIV/ADD: factor or mask; SELECT: condition; CAUSAL: fill */
    int b;               /* SELECT: the other value */
    bool keep_true;      /* SELECT/CAUSAL: the running value is kept where the condition holds */
    bool lhs_col, rhs_col; /* CAUSAL: GreaterEqual inputs index columns (else rows) */
    int add, sub;        /* CAUSAL bottom-right: one-element views of s_kv / s_q, -1 when absent */
} sb_step;

typedef struct {
    bool on;
    int seed, offset, prob; /* one-element views */
    dnnl_data_type_t dt;    /* declared output type */
} sb_drop;

/* dK or dV: written straight to a port, or summed over batch axes first. */
typedef struct {
    int view;                /* direct: [S batch.., seq, head size]; reduced: kept batch dims only */
    dnnl_data_type_t mm_dt;  /* declared MatMul output type */
    bool reduce;
    int64_t nkept, nred;     /* kept / reduced batch combinations */
    int64_t *heads;          /* reduce: heads[kept * nred + red] = head index, red in row-major order */
} sb_grad;

typedef struct {
    int nb;
    int64_t bdims[SB_MAX_BATCH];
    int64_t nbatch, sq, skv, dqk, dv;
    sb_view views[SB_MAX_VIEWS];
    int nviews;
    /* Operands: Q (i, d), K (j, d), V (j, e), dO for the products (i, e),
     * O and dO for the O ⊙ dO Multiply (i, e), stats (i, ·). */
    int vq, vk, vv, vdo, vo_mul, vdo_mul, vstats;
    dnnl_data_type_t q_dt, k_dt, v_dt, do_dt; /* declared MatMul operand types */
    dnnl_data_type_t s_dt;                    /* first MatMul output */
    sb_step steps[SB_MAX_STEPS];
    int nsteps;
    dnnl_data_type_t sub_dt, p_dt; /* Subtract(S2, stats), Exp */
    sb_drop drop_p, drop_dp;
    dnnl_data_type_t pc_dt;                 /* dV MatMul input 0 (after the optional cast) */
    dnnl_data_type_t dp_dt, od_dt, dc_dt;   /* dP MatMul, O ⊙ dO, ReduceSum */
    dnnl_data_type_t sd_dt, ds0_dt, ds_dt;  /* dP − Dc, dS0, scaled dS */
    dnnl_data_type_t dsc_dt;                /* dQ / dK MatMul input 0 */
    int vscale;                             /* dS factor */
    bool scale_div;
    int vdm;                                /* dM = dS0 (End), -1 when absent */
    int vdq;
    sb_grad gk, gv;
    int bq, bk, nthr;
    size_t thr_bytes, gk_off, gv_off;
} sb_plan;

/* ---- element access ------------------------------------------------------ */

static inline float sb_ld(const void *base, dnnl_data_type_t dt, int64_t off) {
    switch ((int)dt) {
        case dnnl_f32: return ((const float *)base)[off];
        case dnnl_bf16: return pt_bf16_to_f32(((const uint16_t *)base)[off]);
        case dnnl_f16: return pt_f16_to_f32(((const uint16_t *)base)[off]);
        default: return pt_load_f32(base, dt, off);
    }
}

static inline void sb_st(void *base, dnnl_data_type_t dt, int64_t off, float v) {
    switch ((int)dt) {
        case dnnl_f32: ((float *)base)[off] = v; break;
        case dnnl_bf16: ((uint16_t *)base)[off] = pt_f32_to_bf16(v); break;
        case dnnl_f16: ((uint16_t *)base)[off] = pt_f32_to_f16(v); break;
        default: pt_store_f32(base, dt, off, v); break;
    }
}

/* Rounds to a declared intermediate type (identity for f32). */
static inline float sb_round(dnnl_data_type_t dt, float v) {
    switch ((int)dt) {
        case dnnl_bf16: return pt_bf16_to_f32(pt_f32_to_bf16(v));
        case dnnl_f16: return pt_f16_to_f32(pt_f32_to_f16(v));
        default: return v;
    }
}

/* What a MatMul does to an f32 operand under a non-strict math mode
 * (opset §1.5, as the reference MatMul): bf16 / f16 / tf32 rounding. */
static inline float sb_fpmath(dnnl_fpmath_mode_t mode, dnnl_data_type_t dt, float v) {
    if (dt != dnnl_f32) return v;
    switch (mode) {
        case dnnl_fpmath_mode_bf16:
        case dnnl_fpmath_mode_any: return pt_bf16_to_f32(pt_f32_to_bf16(v));
        case dnnl_fpmath_mode_f16: return pt_f16_to_f32(pt_f32_to_f16(v));
        case dnnl_fpmath_mode_tf32: {
            uint32_t u;
            memcpy(&u, &v, sizeof u);
            if ((u & 0x7f800000u) != 0x7f800000u) { /* inf / NaN stay */
                u = (u + 0xfffu + ((u >> 13) & 1u)) & ~0x1fffu; /* nearest even, 10 mantissa bits */
                memcpy(&v, &u, sizeof v);
            }
            return v;
        }
        default: return v;
    }
}

typedef struct {
    int64_t seed, offset;
    pt_dropout_consts k;
} sb_drop_args;

/* ---- prepare: reading the partition's ops -------------------------------- */

typedef struct {
    int ndims;
    int64_t dims[DNNL_MAX_NDIMS];
    int64_t strides[DNNL_MAX_NDIMS];
    bool is_out;
    int port;
    dnnl_data_type_t dt;
} sb_tensor;

typedef struct {
    const pt_op *const *ops;
    size_t nops;
    const pt_lt *in;
    size_t nin;
    const pt_lt *out;
    size_t nout;
    bool *used;
    sb_plan *p;
    int sdims_n;
    const int64_t *sdims; /* dims of S */
} sb_ctx;

static int op_producing(const sb_ctx *c, size_t id) {
    for (size_t i = 0; i < c->nops; ++i)
        for (size_t k = 0; k < c->ops[i]->nout; ++k)
            if (c->ops[i]->out[k].id == id) return (int)i;
    return -1;
}

/* Consumers of `id` inside the partition, one entry per (op, input) pair. */
static int ops_reading(const sb_ctx *c, size_t id, int *list, int cap) {
    int n = 0;
    for (size_t i = 0; i < c->nops; ++i)
        for (size_t k = 0; k < c->ops[i]->nin; ++k)
            if (c->ops[i]->in[k].id == id) {
                if (n < cap) list[n] = (int)i;
                ++n;
            }
    return n;
}

static int port_of(const pt_lt *ports, size_t n, size_t id) {
    for (size_t i = 0; i < n; ++i)
        if (ports[i].id == id) return (int)i;
    return -1;
}

static bool is_kind(const sb_ctx *c, int op, int kind) { return op >= 0 && (int)c->ops[op]->kind == kind; }

/* The single op reading output 0 of `op` (an intermediate that must not
 * leave the partition), or -1. */
static int next_op(const sb_ctx *c, int op) {
    if (op < 0 || c->ops[op]->nout != 1) return -1;
    size_t id = c->ops[op]->out[0].id;
    int list[2];
    if (port_of(c->out, c->nout, id) >= 0 || ops_reading(c, id, list, 2) != 1) return -1;
    return list[0];
}

static bool port_tensor(const pt_lt *lt, bool is_out, int port, sb_tensor *t) {
    if (lt->ndims < 0 || lt->ndims > DNNL_MAX_NDIMS || lt->layout_type != dnnl_graph_layout_type_strided)
        return false;
    t->ndims = lt->ndims;
    for (int d = 0; d < lt->ndims; ++d) {
        if (lt->dims[d] < 0) return false;
        t->dims[d] = lt->dims[d];
        t->strides[d] = lt->dims[d] == 1 ? 0 : lt->layout.strides[d];
    }
    t->is_out = is_out;
    t->port = port;
    t->dt = lt->data_type;
    return true;
}

static bool input_tensor(const sb_ctx *c, size_t id, sb_tensor *t) {
    int pi = port_of(c->in, c->nin, id);
    return pi >= 0 && port_tensor(&c->in[pi], false, pi, t);
}

static bool output_tensor(const sb_ctx *c, size_t id, sb_tensor *t) {
    int po = port_of(c->out, c->nout, id);
    int list[1];
    return po >= 0 && ops_reading(c, id, list, 1) == 0 && port_tensor(&c->out[po], true, po, t);
}

static int add_view(sb_plan *p, const sb_tensor *t) {
    if (p->nviews >= SB_MAX_VIEWS) return -1;
    sb_view *v = &p->views[p->nviews];
    memset(v, 0, sizeof *v);
    v->is_out = t->is_out;
    v->port = t->port;
    v->dt = t->dt;
    return p->nviews++;
}

/* A matrix operand: batch dims right-aligned against those of S (broadcast
 * where 1); `d1` / `d2` (negative: from the end) carry the two indices. */
static int matrix_view(sb_plan *p, const sb_tensor *t, int d1, int d2, int64_t e1, int64_t e2) {
    int r = t->ndims;
    if (r < 2 || r - 2 > p->nb) return -1;
    if (t->dims[r + d1] != e1 || t->dims[r + d2] != e2) return -1;
    int v = add_view(p, t);
    if (v < 0) return -1;
    for (int j = 0; j < r - 2; ++j) {
        int i = j + p->nb - (r - 2);
        if (t->dims[j] == 1) continue;
        if (t->dims[j] != p->bdims[i]) return -1;
        p->views[v].bs[i] = t->strides[j];
    }
    p->views[v].rs = t->strides[r + d1];
    p->views[v].cs = t->strides[r + d2];
    return v;
}

/* An operand broadcast (numpy, right-aligned) into [S batch.., rows, cols]. */
static int bcast_view(sb_plan *p, const sb_tensor *t, int64_t rows, int64_t cols) {
    int R = p->nb + 2;
    if (t->ndims > R) return -1;
    int v = add_view(p, t);
    if (v < 0) return -1;
    for (int j = 0; j < t->ndims; ++j) {
        int i = j + R - t->ndims;
        if (t->dims[j] == 1) continue;
        int64_t want = i < p->nb ? p->bdims[i] : i == p->nb ? rows : cols;
        if (t->dims[j] != want) return -1;
        if (i < p->nb) p->views[v].bs[i] = t->strides[j];
        else if (i == p->nb) p->views[v].rs = t->strides[j];
        else p->views[v].cs = t->strides[j];
    }
    return v;
}

static int score_operand(sb_ctx *c, size_t id) {
    sb_tensor t;
    if (!input_tensor(c, id, &t)) return -1;
    return bcast_view(c->p, &t, c->p->sq, c->p->skv);
}

static int scalar_operand(sb_ctx *c, size_t id) {
    sb_tensor t;
    if (!input_tensor(c, id, &t)) return -1;
    for (int d = 0; d < t.ndims; ++d)
        if (t.dims[d] != 1) return -1;
    return add_view(c->p, &t);
}

/* The output of `op` has exactly the dims of S. */
static bool s_shaped(const sb_ctx *c, const pt_lt *lt) {
    if (lt->ndims != c->sdims_n) return false;
    return memcmp(lt->dims, c->sdims, sizeof(int64_t) * (size_t)lt->ndims) == 0;
}

static bool float3(dnnl_data_type_t dt) { return dt == dnnl_f32 || dt == dnnl_bf16 || dt == dnnl_f16; }

static bool gen_index_col(const pt_op *gi, int r, bool *col) {
    int64_t a = pt_op_s64(gi, dnnl_graph_op_attr_axis, 0);
    if (a < 0) a += r;
    if (a == r - 1) *col = true;
    else if (a == r - 2) *col = false;
    else return false;
    return true;
}

/* The causal-mask block ending in Select `sel` whose condition comes from
 * a GreaterEqual.  Sets *val to the masked score tensor. */
static bool read_causal(sb_ctx *c, int sel, sb_step *st, size_t *val) {
    const pt_op *so = c->ops[sel];
    int r = c->sdims_n;
    int ge = op_producing(c, so->in[0].id);
    if (!is_kind(c, ge, dnnl_graph_op_greater_equal) || c->ops[ge]->nin != 2) return false;
    const pt_op *geo = c->ops[ge];
    int gb = op_producing(c, geo->in[1].id), lhs = op_producing(c, geo->in[0].id);
    if (!is_kind(c, gb, dnnl_graph_op_gen_index)) return false;
    int ga = lhs;
    st->add = st->sub = -1;
    if (is_kind(c, lhs, dnnl_graph_op_subtract)) {
        const pt_op *sub = c->ops[lhs];
        int ad = sub->nin == 2 ? op_producing(c, sub->in[0].id) : -1;
        if (!is_kind(c, ad, dnnl_graph_op_add) || c->ops[ad]->nin != 2) return false;
        const pt_op *add = c->ops[ad];
        int p0 = op_producing(c, add->in[0].id), p1 = op_producing(c, add->in[1].id);
        int ipos = is_kind(c, p0, dnnl_graph_op_gen_index) ? 0 : is_kind(c, p1, dnnl_graph_op_gen_index) ? 1 : -1;
        if (ipos < 0) return false;
        ga = ipos ? p1 : p0;
        st->add = scalar_operand(c, add->in[1 - ipos].id);
        st->sub = scalar_operand(c, sub->in[1].id);
        if (st->add < 0 || st->sub < 0) return false;
        c->used[lhs] = c->used[ad] = true;
    }
    if (!is_kind(c, ga, dnnl_graph_op_gen_index) || ga == gb) return false;
    const pt_op *gao = c->ops[ga], *gbo = c->ops[gb];
    if (gao->nin != 1 || gbo->nin != 1 || gao->in[0].id != gbo->in[0].id) return false;
    size_t s = gao->in[0].id;
    int pos = so->in[1].id == s ? 1 : so->in[2].id == s ? 2 : -1;
    if (pos < 0 || !gen_index_col(gao, r, &st->lhs_col) || !gen_index_col(gbo, r, &st->rhs_col)) return false;
    st->kind = SB_CAUSAL;
    st->keep_true = pos == 1;
    st->a = score_operand(c, so->in[3 - pos].id);
    if (st->a < 0) return false;
    c->used[ga] = c->used[gb] = c->used[ge] = true;
    *val = s;
    return true;
}

/* ScaleAndMasks, read backwards from the Subtract(·, stats) input `val` to
 * the first MatMul.  Returns that MatMul or -1. */
static int read_score_chain(sb_ctx *c, size_t val) {
    sb_plan *p = c->p;
    sb_step rev[SB_MAX_STEPS];
    int n = 0;
    for (;;) {
        int op = op_producing(c, val);
        if (op < 0 || port_of(c->out, c->nout, val) >= 0) return -1;
        const pt_op *o = c->ops[op];
        if (o->kind == dnnl_graph_op_matmul) {
            for (int k = 0; k < n; ++k) p->steps[k] = rev[n - 1 - k];
            p->nsteps = n;
            return op;
        }
        if (n == SB_MAX_STEPS || o->nout != 1 || !s_shaped(c, &o->out[0])) return -1;
        sb_step *st = &rev[n++];
        memset(st, 0, sizeof *st);
        st->add = st->sub = st->b = -1;
        st->dt = o->out[0].data_type;
        size_t prev;
        switch ((int)o->kind) {
            case dnnl_graph_op_multiply:
            case dnnl_graph_op_add:
            case dnnl_graph_op_divide: {
                if (o->nin != 2) return -1;
                int pos = op_producing(c, o->in[0].id) >= 0 ? 0 : 1;
                if (op_producing(c, o->in[1 - pos].id) >= 0) return -1;
                if (pos == 1 && o->kind == dnnl_graph_op_divide) return -1;
                st->kind = o->kind == dnnl_graph_op_multiply ? SB_MUL : o->kind == dnnl_graph_op_add ? SB_ADD : SB_DIV;
                st->a = score_operand(c, o->in[1 - pos].id);
                if (st->a < 0 || !float3(p->views[st->a].dt)) return -1;
                prev = o->in[pos].id;
                break;
            }
            case dnnl_graph_op_select: {
                if (o->nin != 3) return -1;
                if (op_producing(c, o->in[0].id) >= 0) {
                    if (!read_causal(c, op, st, &prev)) return -1;
                    break;
                }
                int pos = op_producing(c, o->in[1].id) >= 0 ? 1 : 2;
                if (op_producing(c, o->in[3 - pos].id) >= 0) return -1;
                st->kind = SB_SELECT;
                st->keep_true = pos == 1;
                st->a = score_operand(c, o->in[0].id);
                st->b = score_operand(c, o->in[3 - pos].id);
                if (st->a < 0 || st->b < 0) return -1;
                prev = o->in[pos].id;
                break;
            }
            default: return -1;
        }
        /* The running value feeds only this step (the causal block's score
         * tensor also feeds its two GenIndex ops). */
        int list[4];
        int nr = ops_reading(c, prev, list, 4);
        if (nr != (st->kind == SB_CAUSAL ? 3 : 1)) return -1;
        c->used[op] = true;
        val = prev;
    }
}

static bool read_dropout(sb_ctx *c, int op, sb_drop *d) {
    const pt_op *o = c->ops[op];
    if (o->nin != 4 || o->nout != 1 || !s_shaped(c, &o->in[0]) || !s_shaped(c, &o->out[0])) return false;
    d->on = true;
    d->dt = o->out[0].data_type;
    d->seed = scalar_operand(c, o->in[1].id);
    d->offset = scalar_operand(c, o->in[2].id);
    d->prob = scalar_operand(c, o->in[3].id);
    c->used[op] = true;
    return d->seed >= 0 && d->offset >= 0 && d->prob >= 0;
}

/* dK / dV: the MatMul output `lt` [S batch.., S_kv, n] goes to a port, or
 * through a ReduceSum over batch axes to one. */
static bool read_grad(sb_ctx *c, const pt_lt *lt, int64_t n, sb_grad *g) {
    sb_plan *p = c->p;
    const int R = p->nb + 2;
    if (lt->ndims != R || lt->dims[R - 2] != p->skv || lt->dims[R - 1] != n) return false;
    for (int i = 0; i < p->nb; ++i)
        if (lt->dims[i] != p->bdims[i]) return false;
    g->mm_dt = lt->data_type;
    sb_tensor t;
    if (output_tensor(c, lt->id, &t)) {
        g->view = matrix_view(p, &t, -2, -1, p->skv, n);
        return g->view >= 0 && t.ndims == R;
    }
    int list[2];
    if (port_of(c->out, c->nout, lt->id) >= 0 || ops_reading(c, lt->id, list, 2) != 1) return false;
    const pt_op *rs = c->ops[list[0]];
    if (rs->kind != dnnl_graph_op_reduce_sum || rs->nin != 1 || rs->nout != 1) return false;
    if (!output_tensor(c, rs->out[0].id, &t)) return false;
    size_t na = 0;
    const int64_t *axes = pt_op_s64s(rs, dnnl_graph_op_attr_axes, &na);
    bool red[DNNL_MAX_NDIMS] = {false};
    if (!axes || na == 0) return false;
    for (size_t k = 0; k < na; ++k) {
        int64_t a = axes[k] < 0 ? axes[k] + R : axes[k];
        if (a < 0 || a >= p->nb || red[a]) return false;
        red[a] = true;
    }
    /* Port dims: the kept dims in order, reduced ones as 1 (keep_dims) or
     * dropped. */
    int nred_dims = 0;
    for (int i = 0; i < p->nb; ++i) nred_dims += red[i];
    bool keep = t.ndims == R;
    if (!keep && t.ndims != R - nred_dims) return false;
    int v = add_view(p, &t);
    if (v < 0) return false;
    g->nkept = g->nred = 1;
    for (int i = 0, k = 0; i < R; ++i) {
        if (i < p->nb && red[i]) {
            if (keep && t.dims[i] != 1) return false;
            g->nred *= p->bdims[i];
            if (keep) ++k;
            continue;
        }
        if (t.dims[k] != lt->dims[i]) return false;
        if (i < p->nb) {
            p->views[v].bs[i] = t.strides[k];
            g->nkept *= p->bdims[i];
        } else if (i == R - 2) {
            p->views[v].rs = t.strides[k];
        } else {
            p->views[v].cs = t.strides[k];
        }
        ++k;
    }
    /* Head index of every (kept, reduced) pair, reduced axes row-major
     * innermost: the order in which the reference ReduceSum adds them. */
    g->heads = malloc((size_t)(p->nbatch > 0 ? p->nbatch : 1) * sizeof(int64_t));
    if (!g->heads) return false;
    for (int64_t h = 0; h < p->nbatch; ++h) {
        int64_t rem = h, kept = 0, rd = 0, kmul = 1, rmul = 1;
        for (int i = p->nb - 1; i >= 0; --i) {
            int64_t idx = rem % p->bdims[i];
            rem /= p->bdims[i];
            if (red[i]) rd += idx * rmul, rmul *= p->bdims[i];
            else kept += idx * kmul, kmul *= p->bdims[i];
        }
        g->heads[kept * g->nred + rd] = h;
    }
    g->view = v;
    g->reduce = true;
    c->used[list[0]] = true;
    return true;
}

static pt_status parse(sb_ctx *c) {
    sb_plan *p = c->p;
    int ex = -1;
    for (size_t i = 0; i < c->nops; ++i)
        if (c->ops[i]->kind == dnnl_graph_op_exp) {
            if (ex >= 0) return dnnl_unimplemented;
            ex = (int)i;
        }
    if (ex < 0 || c->ops[ex]->nin != 1 || c->ops[ex]->nout != 1) return dnnl_unimplemented;
    int sub = op_producing(c, c->ops[ex]->in[0].id);
    if (!is_kind(c, sub, dnnl_graph_op_subtract) || c->ops[sub]->nin != 2 || next_op(c, sub) != ex)
        return dnnl_unimplemented;

    /* Find the first MatMul by walking back from the Subtract; its output
     * fixes the iteration space. */
    const pt_op *so = c->ops[sub];
    int mm1 = -1;
    {
        size_t v = so->in[0].id;
        for (int guard = 0; guard < 64; ++guard) {
            int op = op_producing(c, v);
            if (op < 0) return dnnl_unimplemented;
            if (c->ops[op]->kind == dnnl_graph_op_matmul) {
                mm1 = op;
                break;
            }
            const pt_op *o = c->ops[op];
            size_t nv = 0;
            for (size_t k = 0; k < o->nin; ++k)
                if (op_producing(c, o->in[k].id) >= 0 &&
                    !(o->kind == dnnl_graph_op_select && k == 0))
                    nv = o->in[k].id;
            if (nv == 0) return dnnl_unimplemented;
            v = nv;
        }
    }
    if (mm1 < 0) return dnnl_unimplemented;
    const pt_op *m1 = c->ops[mm1];
    const pt_lt *s = &m1->out[0];
    if (m1->nin != 2 || s->ndims < 2 || s->ndims > DNNL_MAX_NDIMS) return dnnl_unimplemented;
    c->sdims_n = s->ndims;
    c->sdims = s->dims;
    p->nb = s->ndims - 2;
    p->nbatch = 1;
    for (int i = 0; i < p->nb; ++i) p->nbatch *= (p->bdims[i] = s->dims[i]);
    p->sq = s->dims[p->nb];
    p->skv = s->dims[p->nb + 1];
    p->s_dt = s->data_type;
    if (!float3(p->s_dt)) return dnnl_unimplemented;

    /* Recomputed softmax. */
    if (read_score_chain(c, so->in[0].id) != mm1) return dnnl_unimplemented;
    if (!s_shaped(c, &so->out[0]) || !s_shaped(c, &c->ops[ex]->out[0])) return dnnl_unimplemented;
    sb_tensor t;
    if (!input_tensor(c, so->in[1].id, &t) || (p->vstats = bcast_view(p, &t, p->sq, 1)) < 0)
        return dnnl_unimplemented;
    p->sub_dt = so->out[0].data_type;
    p->p_dt = c->ops[ex]->out[0].data_type;
    c->used[sub] = c->used[ex] = c->used[mm1] = true;

    /* Uses of P: the dS0 Multiply and the dV path. */
    const size_t pid = c->ops[ex]->out[0].id;
    int pc[3];
    if (port_of(c->out, c->nout, pid) >= 0 || ops_reading(c, pid, pc, 3) != 2 || pc[0] == pc[1])
        return dnnl_unimplemented;
    int ds0 = is_kind(c, pc[0], dnnl_graph_op_multiply) ? pc[0] : pc[1];
    int path = ds0 == pc[0] ? pc[1] : pc[0];
    if (!is_kind(c, ds0, dnnl_graph_op_multiply)) return dnnl_unimplemented;
    size_t v = pid;
    if (is_kind(c, path, dnnl_graph_op_dropout)) {
        if (!read_dropout(c, path, &p->drop_p)) return dnnl_unimplemented;
        v = c->ops[path]->out[0].id;
        path = next_op(c, path);
    }
    if (is_kind(c, path, dnnl_graph_op_type_cast)) {
        if (c->ops[path]->nin != 1 || !s_shaped(c, &c->ops[path]->out[0])) return dnnl_unimplemented;
        c->used[path] = true;
        v = c->ops[path]->out[0].id;
        path = next_op(c, path);
    }
    if (!is_kind(c, path, dnnl_graph_op_matmul)) return dnnl_unimplemented;
    const pt_op *mdv = c->ops[path];
    if (mdv->nin != 2 || mdv->in[0].id != v || !s_shaped(c, &mdv->in[0])) return dnnl_unimplemented;
    p->pc_dt = mdv->in[0].data_type;
    c->used[path] = true;

    /* dS0 = P ⊙ (dP − Dc). */
    const pt_op *mo = c->ops[ds0];
    if (mo->nin != 2 || mo->nout != 1 || !s_shaped(c, &mo->out[0])) return dnnl_unimplemented;
    int sd = op_producing(c, mo->in[mo->in[0].id == pid ? 1 : 0].id);
    if (!is_kind(c, sd, dnnl_graph_op_subtract) || c->ops[sd]->nin != 2 || next_op(c, sd) != ds0)
        return dnnl_unimplemented;
    const pt_op *sdo = c->ops[sd];
    if (!s_shaped(c, &sdo->out[0])) return dnnl_unimplemented;
    int dp = op_producing(c, sdo->in[0].id);
    if (is_kind(c, dp, dnnl_graph_op_dropout)) {
        if (next_op(c, dp) != sd || !read_dropout(c, dp, &p->drop_dp)) return dnnl_unimplemented;
        int d = dp;
        dp = op_producing(c, c->ops[d]->in[0].id);
        if (next_op(c, dp) != d) return dnnl_unimplemented;
    } else if (next_op(c, dp) != sd) {
        return dnnl_unimplemented;
    }
    if (!is_kind(c, dp, dnnl_graph_op_matmul)) return dnnl_unimplemented;
    const pt_op *mdp = c->ops[dp];
    if (mdp->nin != 2 || !s_shaped(c, &mdp->out[0])) return dnnl_unimplemented;
    p->dp_dt = mdp->out[0].data_type;
    c->used[dp] = c->used[sd] = c->used[ds0] = true;
    p->sd_dt = sdo->out[0].data_type;
    p->ds0_dt = mo->out[0].data_type;

    int rs = op_producing(c, sdo->in[1].id);
    if (!is_kind(c, rs, dnnl_graph_op_reduce_sum) || next_op(c, rs) != sd || c->ops[rs]->nin != 1)
        return dnnl_unimplemented;
    const pt_op *rso = c->ops[rs];
    int mul = op_producing(c, rso->in[0].id);
    if (!is_kind(c, mul, dnnl_graph_op_multiply) || next_op(c, mul) != rs || c->ops[mul]->nin != 2)
        return dnnl_unimplemented;
    const pt_op *mulo = c->ops[mul];
    const size_t d_o = mdv->in[1].id;
    int dpos = mulo->in[1].id == d_o ? 1 : mulo->in[0].id == d_o ? 0 : -1;
    if (dpos < 0 || mdp->in[0].id != d_o) return dnnl_unimplemented;

    /* dS = dS0 (× | ÷) factor, optionally exported as dM before the scale. */
    const size_t s0 = mo->out[0].id;
    int sl[2];
    if (ops_reading(c, s0, sl, 2) != 1) return dnnl_unimplemented;
    p->vdm = -1;
    const int dm_port = port_of(c->out, c->nout, s0);
    if (dm_port >= 0) {
        if (!port_tensor(&c->out[dm_port], true, dm_port, &t) || t.ndims != c->sdims_n ||
            memcmp(t.dims, c->sdims, sizeof(int64_t) * (size_t)t.ndims) != 0 ||
            (p->vdm = bcast_view(p, &t, p->sq, p->skv)) < 0)
            return dnnl_unimplemented;
    }
    const pt_op *sco = c->ops[sl[0]];
    if ((sco->kind != dnnl_graph_op_multiply && sco->kind != dnnl_graph_op_divide) || sco->nin != 2 ||
        sco->nout != 1 || !s_shaped(c, &sco->out[0]))
        return dnnl_unimplemented;
    int fpos = sco->in[0].id == s0 ? 1 : 0;
    if (sco->in[1 - fpos].id != s0 || (sco->kind == dnnl_graph_op_divide && fpos == 0)) return dnnl_unimplemented;
    p->scale_div = sco->kind == dnnl_graph_op_divide;
    p->vscale = score_operand(c, sco->in[fpos].id);
    if (p->vscale < 0 || !float3(p->views[p->vscale].dt)) return dnnl_unimplemented;
    p->ds_dt = sco->out[0].data_type;
    c->used[sl[0]] = true;
    int after = sl[0];
    size_t dsv = sco->out[0].id;
    int nx = next_op(c, after);
    if (is_kind(c, nx, dnnl_graph_op_type_cast)) {
        if (c->ops[nx]->nin != 1 || !s_shaped(c, &c->ops[nx]->out[0])) return dnnl_unimplemented;
        c->used[nx] = true;
        dsv = c->ops[nx]->out[0].id;
        after = nx;
    }
    int mm[3];
    if (port_of(c->out, c->nout, dsv) >= 0 || ops_reading(c, dsv, mm, 3) != 2) return dnnl_unimplemented;
    const size_t qid = m1->in[0].id, kid = m1->in[1].id;
    int mdq = -1, mdk = -1;
    for (int k = 0; k < 2; ++k) {
        if (!is_kind(c, mm[k], dnnl_graph_op_matmul) || c->ops[mm[k]]->nin != 2 || c->ops[mm[k]]->in[0].id != dsv)
            return dnnl_unimplemented;
        if (c->ops[mm[k]]->in[1].id == kid && mdq < 0) mdq = mm[k];
        else if (c->ops[mm[k]]->in[1].id == qid && mdk < 0) mdk = mm[k];
        else return dnnl_unimplemented;
    }
    if (mdq < 0 || mdk < 0 || qid == kid) return dnnl_unimplemented;
    const pt_op *mq = c->ops[mdq], *mk = c->ops[mdk];
    p->dsc_dt = mq->in[0].data_type;
    if (!s_shaped(c, &mq->in[0])) return dnnl_unimplemented;
    c->used[mdq] = c->used[mdk] = true;

    /* Transposes: every product must read its operands as the backward
     * formulas do (S = Q·Kᵀ, dV = Pᵀ·dO, dP = dO·Vᵀ, dQ = dS·K, dK = dSᵀ·Q)
     * and the shared tensors the same way everywhere. */
    bool ta1 = pt_op_bool(m1, dnnl_graph_op_attr_transpose_a, false);
    bool tb1 = pt_op_bool(m1, dnnl_graph_op_attr_transpose_b, false);
    bool ta_dv = pt_op_bool(mdv, dnnl_graph_op_attr_transpose_a, false);
    bool tb_dv = pt_op_bool(mdv, dnnl_graph_op_attr_transpose_b, false);
    bool ta_dp = pt_op_bool(mdp, dnnl_graph_op_attr_transpose_a, false);
    bool tb_dp = pt_op_bool(mdp, dnnl_graph_op_attr_transpose_b, false);
    bool ta_dq = pt_op_bool(mq, dnnl_graph_op_attr_transpose_a, false);
    bool tb_dq = pt_op_bool(mq, dnnl_graph_op_attr_transpose_b, false);
    bool ta_dk = pt_op_bool(mk, dnnl_graph_op_attr_transpose_a, false);
    bool tb_dk = pt_op_bool(mk, dnnl_graph_op_attr_transpose_b, false);
    if (!ta_dv || tb_dv || ta_dp || ta_dq || !ta_dk || tb_dk != ta1 || tb_dq == tb1) return dnnl_unimplemented;

    sb_tensor tq, tk, tv, tdo, to;
    if (!input_tensor(c, qid, &tq) || !input_tensor(c, kid, &tk) || !input_tensor(c, mdp->in[1].id, &tv) ||
        !input_tensor(c, d_o, &tdo) || !input_tensor(c, mulo->in[1 - dpos].id, &to))
        return dnnl_unimplemented;
    if (!float3(tq.dt) || !float3(tk.dt) || !float3(tv.dt) || !float3(tdo.dt) || !float3(to.dt))
        return dnnl_unimplemented;
    if (tq.ndims < 2 || tk.ndims < 2 || tv.ndims < 2 || tdo.ndims < 2) return dnnl_unimplemented;
    p->dqk = tq.dims[tq.ndims + (ta1 ? -2 : -1)];
    p->dv = tdo.dims[tdo.ndims - 1];
    p->vq = matrix_view(p, &tq, ta1 ? -1 : -2, ta1 ? -2 : -1, p->sq, p->dqk);
    p->vk = matrix_view(p, &tk, tb1 ? -2 : -1, tb1 ? -1 : -2, p->skv, p->dqk);
    p->vv = matrix_view(p, &tv, tb_dp ? -2 : -1, tb_dp ? -1 : -2, p->skv, p->dv);
    p->vdo = matrix_view(p, &tdo, -2, -1, p->sq, p->dv);
    if (p->vq < 0 || p->vk < 0 || p->vv < 0 || p->vdo < 0) return dnnl_unimplemented;
    p->q_dt = m1->in[0].data_type;
    p->k_dt = m1->in[1].data_type;
    p->v_dt = mdp->in[1].data_type;
    p->do_dt = mdv->in[1].data_type;

    /* Dc = ReduceSum(O ⊙ dO) along the head size: [S batch.., S_q, D_v] → [.., 1]. */
    const pt_lt *ml = &mulo->out[0], *rl = &rso->out[0];
    if (ml->ndims != p->nb + 2 || rl->ndims != p->nb + 2) return dnnl_unimplemented;
    for (int i = 0; i < p->nb; ++i)
        if (ml->dims[i] != p->bdims[i] || rl->dims[i] != p->bdims[i]) return dnnl_unimplemented;
    if (ml->dims[p->nb] != p->sq || ml->dims[p->nb + 1] != p->dv || rl->dims[p->nb] != p->sq ||
        rl->dims[p->nb + 1] != 1 || !pt_op_bool(rso, dnnl_graph_op_attr_keep_dims, false))
        return dnnl_unimplemented;
    size_t na = 0;
    const int64_t *axes = pt_op_s64s(rso, dnnl_graph_op_attr_axes, &na);
    if (!axes || na != 1 || !(axes[0] == -1 || axes[0] == p->nb + 1)) return dnnl_unimplemented;
    p->vo_mul = bcast_view(p, &to, p->sq, p->dv);
    p->vdo_mul = bcast_view(p, &tdo, p->sq, p->dv);
    if (p->vo_mul < 0 || p->vdo_mul < 0) return dnnl_unimplemented;
    p->od_dt = ml->data_type;
    p->dc_dt = rl->data_type;
    c->used[rs] = c->used[mul] = true;

    /* Outputs: dQ [S batch.., S_q, D], dK / dV (maybe reduced). */
    const pt_lt *ql = &mq->out[0];
    if (ql->ndims != p->nb + 2 || !output_tensor(c, ql->id, &t) || t.ndims != ql->ndims) return dnnl_unimplemented;
    for (int i = 0; i < p->nb; ++i)
        if (t.dims[i] != p->bdims[i]) return dnnl_unimplemented;
    p->vdq = matrix_view(p, &t, -2, -1, p->sq, p->dqk);
    if (p->vdq < 0) return dnnl_unimplemented;
    if (!read_grad(c, &mk->out[0], p->dqk, &p->gk) || !read_grad(c, &mdv->out[0], p->dv, &p->gv))
        return dnnl_unimplemented;

    for (size_t i = 0; i < c->nops; ++i)
        if (!c->used[i]) return dnnl_unimplemented;
    return dnnl_success;
}

/* ---- run ----------------------------------------------------------------- */

typedef struct {
    const sb_plan *p;
    const void *base[SB_MAX_VIEWS];
    float add[SB_MAX_STEPS], sub[SB_MAX_STEPS]; /* causal offsets, read once */
    sb_drop_args dp_p, dp_dp;
    dnnl_fpmath_mode_t mode;
    float *gk, *gv; /* reduce: per-head dK / dV products */
} sb_args;

static inline float causal_side(bool col, int64_t i, int64_t j, bool offset, float add, float sub) {
    int64_t idx = col ? j : i;
    if (!offset) return (float)idx;
    /* Add / Subtract on s32 as the op-by-op path evaluates them: f32, stored s32. */
    int32_t t = pt_f32_to_s32((float)idx + add);
    t = pt_f32_to_s32((float)t - sub);
    return (float)t;
}

/* ScaleAndMasks for element (i, j). */
static inline float score_steps(const sb_args *A, const int64_t *boff, int64_t i, int64_t j, float x) {
    const sb_plan *p = A->p;
    for (int s = 0; s < p->nsteps; ++s) {
        const sb_step *st = &p->steps[s];
        const sb_view *va = &p->views[st->a];
        const int64_t oa = boff[st->a] + i * va->rs + j * va->cs;
        switch (st->kind) {
            case SB_MUL: x = x * sb_ld(A->base[st->a], va->dt, oa); break;
            case SB_DIV: x = x / sb_ld(A->base[st->a], va->dt, oa); break;
            case SB_ADD: x = x + sb_ld(A->base[st->a], va->dt, oa); break;
            case SB_SELECT: {
                const sb_view *vb = &p->views[st->b];
                bool cond = sb_ld(A->base[st->a], va->dt, oa) != 0.f;
                if (cond != st->keep_true) x = sb_ld(A->base[st->b], vb->dt, boff[st->b] + i * vb->rs + j * vb->cs);
                break;
            }
            case SB_CAUSAL: {
                float l = causal_side(st->lhs_col, i, j, st->add >= 0, A->add[s], A->sub[s]);
                float r = causal_side(st->rhs_col, i, j, false, 0.f, 0.f);
                if ((l >= r) != st->keep_true) x = sb_ld(A->base[st->a], va->dt, oa);
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

static size_t sb_take(size_t *at, size_t bytes) {
    size_t off = *at;
    *at += (bytes + 63) / 64 * 64;
    return off;
}

static sb_layout sb_scratch_layout(const sb_plan *p) {
    sb_layout L;
    size_t at = 0, bq = (size_t)p->bq, bk = (size_t)p->bk, D = (size_t)p->dqk, DV = (size_t)p->dv;
    size_t SKV = (size_t)p->skv, d = sizeof(double);
    L.kd = sb_take(&at, SKV * D * d);
    L.ktd = sb_take(&at, SKV * D * d);
    L.vtd = sb_take(&at, SKV * DV * d);
    L.dk = sb_take(&at, SKV * D * d);
    L.dv = sb_take(&at, SKV * DV * d);
    L.qd = sb_take(&at, bq * D * d);
    L.dod = sb_take(&at, bq * DV * d);
    L.dq = sb_take(&at, bq * D * d);
    L.sa = sb_take(&at, bq * bk * d);
    L.pa = sb_take(&at, bq * bk * d);
    L.pt = sb_take(&at, bq * bk * d);
    L.dst = sb_take(&at, bq * bk * d);
    L.dc = sb_take(&at, bq * sizeof(float));
    L.st = sb_take(&at, bq * sizeof(float));
    L.total = at;
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
            if (vdm) sb_st((void *)A->base[p->vdm], vdm->dt, boff[p->vdm] + i * vdm->rs + j * vdm->cs, s0);
            const float f = sb_ld(A->base[p->vscale], vsc->dt, boff[p->vscale] + i * vsc->rs + j * vsc->cs);
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
            sb_st((void *)A->base[g->view], v->dt, boff[g->view] + j * v->rs + d * v->cs, (float)acc[j * n + d]);
}

/* One head: batch index b of S. */
static void sb_head(const sb_args *A, int64_t b, char *buf, const sb_layout *L) {
    const sb_plan *p = A->p;
    const int64_t D = p->dqk, DV = p->dv, SKV = p->skv, SQ = p->sq;
    const int bq = p->bq, bk = p->bk;
    int64_t bidx[SB_MAX_BATCH] = {0}, rem = b;
    for (int i = p->nb - 1; i >= 0; --i) {
        bidx[i] = rem % p->bdims[i];
        rem /= p->bdims[i];
    }
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
                                sb_ld(A->base[p->vk], vk->dt, boff[p->vk] + j * vk->rs + d * vk->cs));
            kd[j * D + d] = ktd[d * SKV + j] = (double)x;
        }
        for (int64_t e = 0; e < DV; ++e)
            vtd[e * SKV + j] = (double)sb_fpmath(A->mode, p->v_dt,
                                                 sb_ld(A->base[p->vv], vv->dt, boff[p->vv] + j * vv->rs + e * vv->cs));
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
                                                  sb_ld(A->base[p->vq], vq->dt, boff[p->vq] + i * vq->rs + d * vq->cs));
            /* dO for the products (MatMul-rounded) and Dc from the raw O ⊙ dO. */
            float acc = 0.f;
            for (int64_t e = 0; e < DV; ++e) {
                float g = sb_ld(A->base[p->vdo], vdo->dt, boff[p->vdo] + i * vdo->rs + e * vdo->cs);
                dod[r * DV + e] = (double)sb_fpmath(A->mode, p->do_dt, g);
                float o = sb_ld(A->base[p->vo_mul], vom->dt, boff[p->vo_mul] + i * vom->rs + e * vom->cs);
                float g2 = sb_ld(A->base[p->vdo_mul], vdm->dt, boff[p->vdo_mul] + i * vdm->rs + e * vdm->cs);
                acc = acc + sb_round(p->od_dt, o * g2);
            }
            dc[r] = sb_round(p->dc_dt, acc);
            stats[r] = sb_ld(A->base[p->vstats], vst->dt, boff[p->vstats] + i * vst->rs);
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
                sb_st((void *)A->base[p->vdq], vdq->dt, boff[p->vdq] + (i0 + r) * vdq->rs + d * vdq->cs,
                      (float)dq[(size_t)r * D + d]);
    }
    store_grad(A, &p->gk, boff, b, dk, D, A->gk);
    store_grad(A, &p->gv, boff, b, dv, DV, A->gv);
}

/* The GQA ReduceSum of one (kept batch, sequence) row: f32 sum of the heads
 * in the reference's order, stored in the port type. */
static void reduce_row(const sb_args *A, const sb_grad *g, const float *gbuf, int64_t n, int64_t kept, int64_t j) {
    const sb_plan *p = A->p;
    const sb_view *v = &p->views[g->view];
    const int64_t *heads = g->heads + kept * g->nred;
    int64_t bidx[SB_MAX_BATCH] = {0}, rem = heads[0], off = 0;
    for (int i = p->nb - 1; i >= 0; --i) {
        bidx[i] = rem % p->bdims[i];
        rem /= p->bdims[i];
    }
    for (int i = 0; i < p->nb; ++i) off += bidx[i] * v->bs[i];
    for (int64_t d = 0; d < n; ++d) {
        float acc = 0.f;
        for (int64_t r = 0; r < g->nred; ++r) acc = acc + gbuf[((size_t)heads[r] * (size_t)p->skv + (size_t)j) * (size_t)n + (size_t)d];
        sb_st((void *)A->base[g->view], v->dt, off + j * v->rs + d * v->cs, acc);
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

static pt_status sb_run(const pt_fused *f, const pt_tview *in, size_t nin, const pt_tview *out, size_t nout,
                        void *scratch, const pt_exec_ctx *ctx) {
    const sb_plan *p = f->state;
    sb_args A;
    memset(&A, 0, sizeof A);
    A.p = p;
    A.mode = ctx ? ctx->fpmath : dnnl_fpmath_mode_strict;
    for (int v = 0; v < p->nviews; ++v) {
        const sb_view *vw = &p->views[v];
        if ((size_t)vw->port >= (vw->is_out ? nout : nin))
            return pt_err(dnnl_invalid_arguments, "sdpa backward: port %d not bound", vw->port);
        A.base[v] = vw->is_out ? out[vw->port].data : in[vw->port].data;
    }
    for (int s = 0; s < p->nsteps; ++s) {
        const sb_step *st = &p->steps[s];
        if (st->kind == SB_CAUSAL && st->add >= 0) {
            A.add[s] = sb_ld(A.base[st->add], p->views[st->add].dt, 0);
            A.sub[s] = sb_ld(A.base[st->sub], p->views[st->sub].dt, 0);
        }
    }
    PT_CHECK(drop_args(&A, &p->drop_p, &A.dp_p));
    PT_CHECK(drop_args(&A, &p->drop_dp, &A.dp_dp));
    if (p->nbatch == 0) return dnnl_success;
    if (!scratch) return pt_err(dnnl_invalid_arguments, "sdpa backward: no scratchpad");
    A.gk = p->gk.reduce ? (float *)((char *)scratch + p->gk_off) : NULL;
    A.gv = p->gv.reduce ? (float *)((char *)scratch + p->gv_off) : NULL;
    const sb_layout L = sb_scratch_layout(p);
    int nthr = p->nthr;
    if (ctx && ctx->nthreads > 0 && ctx->nthreads < nthr) nthr = ctx->nthreads;
    if (nthr < 1) nthr = 1;
    const int head_thr = (int64_t)nthr > p->nbatch ? (int)p->nbatch : nthr;
#pragma omp parallel num_threads(head_thr)
    {
#ifdef _OPENMP
        int tid = omp_get_thread_num();
#else
        int tid = 0;
#endif
        char *buf = (char *)scratch + (size_t)tid * L.total;
#pragma omp for schedule(dynamic, 1)
        for (int64_t b = 0; b < p->nbatch; ++b) sb_head(&A, b, buf, &L);
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

static void sb_free_plan(sb_plan *p) {
    if (!p) return;
    free(p->gk.heads);
    free(p->gv.heads);
    free(p);
}

static void sb_release(pt_fused *f) {
    sb_free_plan(f->state);
    f->state = NULL;
}

pt_status pt_prepare_sdpa_bwd(const pt_op *const *ops, size_t nops, const pt_lt *in, size_t nin,
                              const pt_lt *out, size_t nout, pt_fused *fused) {
    sb_plan *p = calloc(1, sizeof *p);
    bool *used = calloc(nops ? nops : 1, sizeof(bool));
    if (!p || !used) {
        free(p);
        free(used);
        return dnnl_out_of_memory;
    }
    sb_ctx c = {.ops = ops, .nops = nops, .in = in, .nin = nin, .out = out, .nout = nout, .used = used, .p = p};
    pt_status st = parse(&c);
    free(used);
    if (st != dnnl_success) {
        sb_free_plan(p);
        return pt_err(st, "sdpa backward: partition form not handled by the fused kernel; running op by op");
    }
    /* No heads but a non-empty reduced output (a zero extent on a reduced
     * axis): the op-by-op path writes those zeros. */
    if (p->nbatch == 0 && (p->gk.reduce || p->gv.reduce)) {
        sb_free_plan(p);
        return pt_err(dnnl_unimplemented, "sdpa backward: empty reduced batch; running op by op");
    }
    p->bq = (int)(p->sq < SB_BQ ? (p->sq > 0 ? p->sq : 1) : SB_BQ);
    p->bk = (int)(p->skv < SB_BK ? (p->skv > 0 ? p->skv : 1) : SB_BK);
#ifdef _OPENMP
    p->nthr = omp_get_max_threads();
#else
    p->nthr = 1;
#endif
    if (p->nthr < 1) p->nthr = 1;
    if ((int64_t)p->nthr > p->nbatch) p->nthr = p->nbatch > 0 ? (int)p->nbatch : 1;
    p->thr_bytes = sb_scratch_layout(p).total;
    size_t at = p->thr_bytes * (size_t)p->nthr;
    const size_t heads = (size_t)p->nbatch * (size_t)p->skv;
    if (p->gk.reduce) p->gk_off = sb_take(&at, heads * (size_t)p->dqk * sizeof(float));
    if (p->gv.reduce) p->gv_off = sb_take(&at, heads * (size_t)p->dv * sizeof(float));
    fused->run = sb_run;
    fused->release = sb_release;
    fused->state = p;
    fused->scratch_bytes = at;
    return dnnl_success;
}
