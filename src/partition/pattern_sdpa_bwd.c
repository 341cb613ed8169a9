/* SDPA / GQA training backward matchers (docs/fusion.md, attention patterns).
 * The match is anchored at the Q·K MatMul, walks the recomputed-softmax chain
 * forward to P = Exp(·), then follows the two uses of P (the dV product and
 * the softmax gradient) and the dS products.  Matching rules: every intermediate
 * is read only by the pattern (P by exactly its two pattern consumers, the
 * causal-mask score by its three, dS0 by the scale op and at most one End);
 * Add / Multiply and Select inputs 1 / 2 are commutative, Subtract, Divide,
 * GreaterEqual and MatMul are not; outside operands are not produced by the
 * match itself. */
#include "partition/pattern_sdpa_bwd.h"

#include <stdbool.h>

#include "ops/op_schema.h"

#define BWD_MAX_EXT 32

/* One match in progress: the shared pt_match plus the outside tensors
 * (checked at the end: the match must not produce them itself). */
typedef struct {
    pt_match *pm;
    const pt_graph *g;
    size_t ext[BWD_MAX_EXT];
    int next;
    int od_mul; /* the O ⊙ dO Multiply */
} bwd_matcher;

static bool float3(dnnl_data_type_t dt) { return dt == dnnl_f32 || dt == dnnl_bf16 || dt == dnnl_f16; }

static int nconsumers(const pt_graph *g, size_t id) {
    const pt_tensor_info *t = pt_match_tensor(g, id);
    return t ? t->nconsumers : -1;
}

/* The single consumer of output 0 of `op`, or -1 (none, several, no op, or
 * an op with another output count). */
static int only_consumer(const pt_graph *g, int op) {
    if (op < 0 || g->ops[op]->nout != 1) return -1;
    return pt_match_sole_consumer(g, op, 0);
}

static bool free_op(const bwd_matcher *m, int op) { return pt_match_is_free(m->pm, op); }

static bool free_kind(const bwd_matcher *m, int op, int kind) {
    return free_op(m, op) && (int)m->g->ops[op]->kind == kind;
}

/* Roles are pt_sdpa_role (the recomputed forward) or pt_sdpa_bwd_role. */
static bool take(bwd_matcher *m, int op, int role) { return pt_match_take(m->pm, op, role); }

static bool outside(bwd_matcher *m, size_t id) {
    if (m->next >= BWD_MAX_EXT) return false;
    m->ext[m->next++] = id;
    return true;
}

/* Position (0 or 1) of `id` among the two inputs of `op`, -1 when absent or
 * when both inputs are `id`. */
static int input_pos(const pt_op *op, size_t id) {
    if (op->nin != 2 || op->in[0].id == op->in[1].id) return -1;
    return op->in[0].id == id ? 0 : op->in[1].id == id ? 1 : -1;
}

/* Output 0 of `op`. */
static size_t out_id(const bwd_matcher *m, int op) { return m->g->ops[op]->out[0].id; }

/* Scale: Multiply (value at either input) or Divide (value at input 0) by
 * an outside float factor, taken with `role`.  Returns the op or -1 (nothing
 * taken). */
static int scale_op(bwd_matcher *m, int op, size_t val, int role) {
    if (!free_op(m, op)) return -1;
    const pt_op *o = m->g->ops[op];
    if ((o->kind != dnnl_graph_op_multiply && o->kind != dnnl_graph_op_divide) || o->nout != 1) return -1;
    int pos = input_pos(o, val);
    if (pos < 0 || (pos == 1 && o->kind == dnnl_graph_op_divide)) return -1;
    if (!float3(o->in[1 - pos].data_type) || !float3(o->out[0].data_type)) return -1;
    if (!take(m, op, role) || !outside(m, o->in[1 - pos].id)) return -1;
    return op;
}

/* ScaleAndMasks: Scale? → CausalMask? → ExplicitMask? → PadSelect?
 * on the value produced by `cur`.  Returns the op that produces the
 * resulting value, or -1 on a malformed block. */
static int scale_and_masks(bwd_matcher *m, int cur) {
    const pt_graph *g = m->g;
    int nx = only_consumer(g, cur);
    if (nx >= 0 && free_op(m, nx) &&
        (g->ops[nx]->kind == dnnl_graph_op_multiply || g->ops[nx]->kind == dnnl_graph_op_divide)) {
        if (scale_op(m, nx, out_id(m, cur), PT_SDPA_SCALE) < 0) return -1;
        cur = nx;
    }
    if (nconsumers(g, out_id(m, cur)) == 3) {
        cur = pt_sdpa_match_causal(m->pm, cur, m->ext, &m->next, BWD_MAX_EXT);
        if (cur < 0) return -1;
    }
    nx = only_consumer(g, cur);
    if (free_kind(m, nx, dnnl_graph_op_add)) {
        const pt_op *o = g->ops[nx];
        int pos = input_pos(o, out_id(m, cur));
        if (pos < 0 || o->nout != 1 || !float3(o->in[1 - pos].data_type) || !float3(o->out[0].data_type)) return -1;
        if (!take(m, nx, PT_SDPA_MASK) || !outside(m, o->in[1 - pos].id)) return -1;
        cur = nx;
        nx = only_consumer(g, cur);
    }
    if (free_kind(m, nx, dnnl_graph_op_select)) {
        const pt_op *o = g->ops[nx];
        size_t v = out_id(m, cur);
        if (o->nin != 3 || o->nout != 1 || o->in[0].id == v || o->in[0].data_type != dnnl_boolean) return -1;
        int pos = o->in[1].id == v ? 1 : o->in[2].id == v ? 2 : -1;
        if (pos < 0 || o->in[3 - pos].id == v || !float3(o->in[3 - pos].data_type)) return -1;
        if (!take(m, nx, PT_SDPA_SELECT) || !outside(m, o->in[0].id) || !outside(m, o->in[3 - pos].id))
            return -1;
        cur = nx;
    }
    return cur;
}

/* Dropout whose running input is `val` (seed, offset, probability from
 * outside; no mask output). */
static bool dropout_op(bwd_matcher *m, int op, size_t val, int role) {
    if (!free_kind(m, op, dnnl_graph_op_dropout)) return false;
    const pt_op *o = m->g->ops[op];
    if (o->nin != 4 || o->nout != 1 || o->in[0].id != val) return false;
    for (int k = 1; k < 4; ++k)
        if (o->in[k].id == val || !outside(m, o->in[k].id)) return false;
    return take(m, op, role);
}

static bool cast_op(bwd_matcher *m, int op, size_t val, int role) {
    if (!free_kind(m, op, dnnl_graph_op_type_cast)) return false;
    const pt_op *o = m->g->ops[op];
    return o->nin == 1 && o->nout == 1 && o->in[0].id == val && take(m, op, role);
}

/* ReduceSum over batch axes only (the N_rep axis of GQA), reading `val`. */
static bool batch_reduce_op(bwd_matcher *m, int op, size_t val, int role) {
    if (!free_kind(m, op, dnnl_graph_op_reduce_sum)) return false;
    const pt_op *o = m->g->ops[op];
    if (o->nin != 1 || o->nout != 1 || o->in[0].id != val) return false;
    size_t na = 0;
    const int64_t *axes = pt_op_s64s(o, dnnl_graph_op_attr_axes, &na);
    if (!axes || na == 0) return false;
    int r = o->in[0].ndims;
    for (size_t k = 0; k < na; ++k) {
        int64_t a = axes[k];
        if (r >= 0 && a < 0) a += r;
        if (r >= 0 ? (a < 0 || a >= r - 2) : (a >= 0 || a > -3)) return false;
    }
    return take(m, op, role);
}

/* Dc = ReduceSum(Multiply(O, dO), axes = [-1], keep_dims) feeding `user`;
 * O has the data type `odt`. */
static bool correction_term(bwd_matcher *m, int rs, int user, size_t d_o, dnnl_data_type_t odt) {
    const pt_graph *g = m->g;
    if (!free_kind(m, rs, dnnl_graph_op_reduce_sum) || only_consumer(g, rs) != user) return false;
    const pt_op *ro = g->ops[rs];
    if (ro->nin != 1 || !pt_op_bool(ro, dnnl_graph_op_attr_keep_dims, false)) return false;
    size_t na = 0;
    const int64_t *axes = pt_op_s64s(ro, dnnl_graph_op_attr_axes, &na);
    int r = ro->in[0].ndims;
    if (!axes || na != 1 || !(axes[0] == -1 || (r > 0 && axes[0] == r - 1))) return false;
    int mul = pt_match_producer(g, ro->in[0].id);
    if (!free_kind(m, mul, dnnl_graph_op_multiply) || only_consumer(g, mul) != rs) return false;
    const pt_op *mo = g->ops[mul];
    int pos = input_pos(mo, d_o); /* dO at input 1 (commutative) */
    if (pos < 0 || mo->in[1 - pos].data_type != odt || !float3(mo->out[0].data_type)) return false;
    m->od_mul = mul;
    return take(m, rs, PT_SDPA_BWD_DC_REDUCE) && take(m, mul, PT_SDPA_BWD_OD_MUL) &&
           outside(m, mo->in[1 - pos].id);
}

/* The match without the GQA reductions; `gqa` additionally requires them. */
static int match_backward(pt_match *pm, int first, bool gqa) {
    const pt_graph *g = pm->g;
    const pt_op *mm1 = g->ops[first];
    if (mm1->kind != dnnl_graph_op_matmul || mm1->nin != 2 || mm1->nout != 1) return 0;
    const dnnl_data_type_t qdt = mm1->in[0].data_type;
    const size_t q = mm1->in[0].id, k = mm1->in[1].id;
    if (!float3(qdt) || mm1->in[1].data_type != qdt || q == k || !float3(mm1->out[0].data_type)) return 0;
    const bool narrow = qdt != dnnl_f32;
    bwd_matcher m = {.pm = pm, .g = g, .od_mul = -1};
    if (!free_op(&m, first) || !take(&m, first, PT_SDPA_QK) || !outside(&m, q) || !outside(&m, k)) return 0;

    /* Recomputed softmax: ScaleAndMasks → Subtract(·, Stats) → Exp. */
    int cur = scale_and_masks(&m, first);
    if (cur < 0) return 0;
    int sub = only_consumer(g, cur);
    if (!free_kind(&m, sub, dnnl_graph_op_subtract) || g->ops[sub]->nin != 2) return 0;
    const pt_op *so = g->ops[sub];
    if (so->in[0].id != out_id(&m, cur) || so->in[1].id == so->in[0].id || !float3(so->in[1].data_type))
        return 0;
    if (!take(&m, sub, PT_SDPA_BWD_SUB_STATS) || !outside(&m, so->in[1].id)) return 0;
    int ex = only_consumer(g, sub);
    if (!free_kind(&m, ex, dnnl_graph_op_exp) || g->ops[ex]->nin != 1 || !take(&m, ex, PT_SDPA_BWD_EXP)) return 0;

    /* P is read by the dS0 Multiply and by the dV path. */
    const size_t p = out_id(&m, ex);
    const pt_tensor_info *pt = pt_match_tensor(g, p);
    if (!pt || pt->nconsumers != 2 || pt->consumers[0] == pt->consumers[1]) return 0;
    int ds0 = -1, dvp = -1;
    for (int c = 0; c < 2; ++c) {
        int op = pt->consumers[c];
        if (ds0 < 0 && g->ops[op]->kind == dnnl_graph_op_multiply) ds0 = op;
        else dvp = op;
    }
    if (ds0 < 0 || dvp < 0) return 0;

    /* dV path: P → Dropout? → TypeCast? →[0] MatMul(·, dO) [→ ReduceSum]. */
    size_t v = p;
    bool cast_p = false;
    if (g->ops[dvp]->kind == dnnl_graph_op_dropout) {
        if (!dropout_op(&m, dvp, v, PT_SDPA_BWD_P_DROPOUT)) return 0;
        v = out_id(&m, dvp);
        dvp = only_consumer(g, dvp);
    }
    if (dvp >= 0 && g->ops[dvp]->kind == dnnl_graph_op_type_cast) {
        if (!cast_op(&m, dvp, v, PT_SDPA_BWD_P_CAST)) return 0;
        v = out_id(&m, dvp);
        dvp = only_consumer(g, dvp);
        cast_p = true;
    }
    if (!free_kind(&m, dvp, dnnl_graph_op_matmul)) return 0;
    const pt_op *mdv = g->ops[dvp];
    if (mdv->nin != 2 || mdv->nout != 1 || mdv->in[0].id != v || mdv->in[1].id == v) return 0;
    const size_t d_o = mdv->in[1].id;
    if (mdv->in[1].data_type != qdt || d_o == q || d_o == k) return 0;
    if (!take(&m, dvp, PT_SDPA_BWD_DV) || !outside(&m, d_o)) return 0;
    if (gqa && !batch_reduce_op(&m, only_consumer(g, dvp), out_id(&m, dvp), PT_SDPA_BWD_DV_REDUCE)) return 0;

    /* dS0 = Multiply(P, Subtract(dP [→ Dropout], Dc)). */
    if (!free_op(&m, ds0) || g->ops[ds0]->nout != 1) return 0;
    int ppos = input_pos(g->ops[ds0], p);
    if (ppos < 0) return 0;
    int sd = pt_match_producer(g, g->ops[ds0]->in[1 - ppos].id);
    if (!free_kind(&m, sd, dnnl_graph_op_subtract) || g->ops[sd]->nin != 2 || only_consumer(g, sd) != ds0) return 0;
    if (!take(&m, ds0, PT_SDPA_BWD_DS0) || !take(&m, sd, PT_SDPA_BWD_SUB_DC)) return 0;
    const pt_op *sdo = g->ops[sd];
    if (sdo->in[0].id == sdo->in[1].id) return 0;
    int dp = pt_match_producer(g, sdo->in[0].id);
    if (dp >= 0 && g->ops[dp]->kind == dnnl_graph_op_dropout) {
        int drop = dp;
        if (only_consumer(g, drop) != sd) return 0;
        dp = pt_match_producer(g, g->ops[drop]->in[0].id);
        if (dp < 0 || !dropout_op(&m, drop, out_id(&m, dp), PT_SDPA_BWD_DP_DROPOUT)) return 0;
    }
    if (!free_kind(&m, dp, dnnl_graph_op_matmul)) return 0;
    const pt_op *mdp = g->ops[dp];
    if (mdp->nin != 2 || mdp->nout != 1 || mdp->in[0].id != d_o || mdp->in[1].data_type != qdt) return 0;
    if (mdp->in[1].id == d_o || !float3(mdp->out[0].data_type) || nconsumers(g, out_id(&m, dp)) != 1) return 0;
    if (!take(&m, dp, PT_SDPA_BWD_DP) || !outside(&m, mdp->in[1].id)) return 0;
    if (!correction_term(&m, pt_match_producer(g, sdo->in[1].id), sd, d_o, qdt)) return 0;

    /* dS0 → scale (required), with at most one End reading dS0 (the dM output). */
    const size_t s0 = out_id(&m, ds0);
    const pt_tensor_info *s0i = pt_match_tensor(g, s0);
    if (!s0i || s0i->nconsumers < 1 || s0i->nconsumers > 2) return 0;
    int sc = -1, end = -1;
    for (int c = 0; c < s0i->nconsumers; ++c) {
        int op = s0i->consumers[c];
        if (g->ops[op]->kind == dnnl_graph_op_end && end < 0) end = op;
        else if (sc < 0) sc = op;
        else return 0;
    }
    if (sc < 0 || scale_op(&m, sc, s0, PT_SDPA_BWD_DS_SCALE) < 0) return 0;
    if (end >= 0 && (!free_op(&m, end) || !take(&m, end, PT_SDPA_BWD_END))) return 0;

    /* dS → TypeCast? → MatMul(·, K) = dQ and MatMul(·, Q) = dK [→ ReduceSum]. */
    size_t ds = out_id(&m, sc);
    int nx = only_consumer(g, sc);
    bool cast_ds = false;
    if (nx >= 0 && g->ops[nx]->kind == dnnl_graph_op_type_cast) {
        if (!cast_op(&m, nx, ds, PT_SDPA_BWD_DS_CAST)) return 0;
        ds = out_id(&m, nx);
        cast_ds = true;
    }
    const pt_tensor_info *dsi = pt_match_tensor(g, ds);
    if (!dsi || dsi->nconsumers != 2) return 0;
    int mdq = -1, mdk = -1;
    for (int c = 0; c < 2; ++c) {
        int op = dsi->consumers[c];
        const pt_op *o = g->ops[op];
        if (!free_kind(&m, op, dnnl_graph_op_matmul) || o->nin != 2 || o->nout != 1 || o->in[0].id != ds) return 0;
        if (o->in[1].id == k && mdq < 0) mdq = op;
        else if (o->in[1].id == q && mdk < 0) mdk = op;
        else return 0;
    }
    if (mdq < 0 || mdk < 0 || !take(&m, mdq, PT_SDPA_BWD_DQ) || !take(&m, mdk, PT_SDPA_BWD_DK)) return 0;
    if (gqa && !batch_reduce_op(&m, only_consumer(g, mdk), out_id(&m, mdk), PT_SDPA_BWD_DK_REDUCE)) return 0;

    /* f32: no TypeCast; xf16: both; one data type for Q/K/V/O/dO. */
    if (narrow ? !(cast_p && cast_ds) : (cast_p || cast_ds)) return 0;
    for (int e = 0; e < m.next; ++e) {
        int pr = pt_match_producer(g, m.ext[e]);
        if (pr >= 0 && pt_match_has(pm, pr)) return 0;
    }
    /* Every op is runnable.  The O ⊙ dO Multiply of xf16 variants reads two
     * xf16 tensors and writes f32, a combination the op alone does not
     * support but this pattern does (its data types); its reference kernel
     * computes in f32 like any other, so the op-by-op fallback stays exact. */
    for (int i = 0; i < pm->n; ++i) {
        const pt_op *o = g->ops[pm->ops[i]];
        if (o->kind == dnnl_graph_op_end || (pm->ops[i] == m.od_mul && float3(o->out[0].data_type))) continue;
        if (!pt_schema_supported(o)) return 0;
    }
    return pm->n;
}

int pt_match_sdpa_bwd(pt_match *m, int first) { return match_backward(m, first, false); }

int pt_match_gqa_bwd(pt_match *m, int first) { return match_backward(m, first, true); }
