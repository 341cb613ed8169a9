/* SDPA forward matchers (docs/fusion.md, attention patterns).  One engine,
 * match_form, anchored at the Q·K MatMul, walks the score chain forward to
 * the SoftMax and the P·V MatMul; a form (sdpa_form) says how Q / K / V
 * reach the MatMuls (plain, Dequantize, Dequantize → TypeCast,
 * DynamicDequantize), which score chain is allowed, what lies between the
 * SoftMax and the second MatMul and what follows it.  Matching rules: every
 * intermediate has exactly one consumer inside the match (the causal-mask
 * score tensor: exactly its three pattern consumers); Add / Multiply and
 * Select inputs 1 / 2 are commutative, Divide and GreaterEqual are not;
 * outside operands must not be produced by the match itself. */
#include "partition/pattern_sdpa.h"

#include <stdbool.h>

#include "ops/op_schema.h"

#define SDPA_MAX_CHAIN 16 /* blocks between the first MatMul and the SoftMax */
#define SDPA_MAX_EXT 64
#define SDPA_MAX_CASTS 2 /* TypeCast{0..2} before the second MatMul */

/* One match in progress: the shared pt_match plus the outside tensors
 * (checked at the end: the match must not produce them itself). */
typedef struct {
    pt_match *pm;
    const pt_graph *g;
    size_t ext[SDPA_MAX_EXT];
    int next;
} matcher;

static bool dt_float3(dnnl_data_type_t dt) {
    return dt == dnnl_f32 || dt == dnnl_bf16 || dt == dnnl_f16;
}

static bool is_free(const matcher *m, int op) { return pt_match_is_free(m->pm, op); }

static bool take(matcher *m, int op, pt_sdpa_role role) { return pt_match_take(m->pm, op, (int)role); }

/* Appends an outside tensor to ext[*next] (capacity cap). */
static bool push_ext(size_t *ext, int *next, int cap, size_t id) {
    if (*next >= cap) return false;
    ext[(*next)++] = id;
    return true;
}

static bool note_ext(matcher *m, size_t id) { return push_ext(m->ext, &m->next, SDPA_MAX_EXT, id); }

/* An operand from outside the pattern, optionally through a StaticReshape
 * whose only consumer is `user` (the Q / K / V / mask reshapes of the GQA
 * form), taken with role `reshape`. */
static bool ext_operand(matcher *m, size_t id, int user, pt_sdpa_role reshape) {
    int p = pt_match_producer(m->g, id);
    if (p >= 0 && m->g->ops[p]->kind == dnnl_graph_op_static_reshape && is_free(m, p) &&
        m->g->ops[p]->nin == 1 && pt_match_sole_consumer(m->g, p, 0) == user) {
        if (!take(m, p, reshape)) return false;
        id = m->g->ops[p]->in[0].id;
    }
    return note_ext(m, id);
}

int pt_sdpa_match_causal(pt_match *m, int cur, size_t *ext, int *next, int cap) {
    const pt_graph *g = m->g;
    size_t s = g->ops[cur]->out[0].id;
    const pt_tensor_info *t = pt_match_tensor(g, s);
    if (!t || t->nconsumers != 3) return -1;
    int gi[3], ngi = 0, sel = -1;
    for (int k = 0; k < 3; ++k) {
        int c = t->consumers[k];
        for (int q = 0; q < k; ++q)
            if (t->consumers[q] == c) return -1; /* read twice by one op */
        if (!pt_match_is_free(m, c)) return -1;
        const pt_op *op = g->ops[c];
        if (op->kind == dnnl_graph_op_gen_index && op->nin == 1 && op->nout == 1)
            gi[ngi++] = c;
        else if (op->kind == dnnl_graph_op_select && sel < 0)
            sel = c;
        else
            return -1;
    }
    if (ngi != 2 || sel < 0) return -1;
    const pt_op *so = g->ops[sel];
    if (so->nin != 3 || so->nout != 1 || so->in[0].id == s) return -1;
    int pos = so->in[1].id == s ? 1 : so->in[2].id == s ? 2 : -1;
    if (pos < 0 || so->in[3 - pos].id == s || !dt_float3(so->in[3 - pos].data_type)) return -1;

    int ge = pt_match_producer(g, so->in[0].id);
    if (!pt_match_is_free(m, ge) || g->ops[ge]->kind != dnnl_graph_op_greater_equal || g->ops[ge]->nin != 2 ||
        pt_match_sole_consumer(g, ge, 0) != sel)
        return -1;
    const pt_op *geo = g->ops[ge];
    int gb = pt_match_producer(g, geo->in[1].id); /* column index: GreaterEqual input 1 */
    if (gb != gi[0] && gb != gi[1]) return -1;
    int ga = gb == gi[0] ? gi[1] : gi[0];
    if (pt_match_sole_consumer(g, gb, 0) != ge) return -1;

    int add = -1, sub = -1, pa = pt_match_producer(g, geo->in[0].id);
    if (pa == ga) {
        if (pt_match_sole_consumer(g, ga, 0) != ge) return -1;
    } else {
        /* Bottom-right alignment: GenIndex_row → Add(ext s_kv) →[0] Subtract(ext s_q). */
        sub = pa;
        if (!pt_match_is_free(m, sub) || g->ops[sub]->kind != dnnl_graph_op_subtract || g->ops[sub]->nin != 2 ||
            g->ops[sub]->in[0].id == g->ops[sub]->in[1].id || pt_match_sole_consumer(g, sub, 0) != ge)
            return -1;
        add = pt_match_producer(g, g->ops[sub]->in[0].id);
        if (!pt_match_is_free(m, add) || g->ops[add]->kind != dnnl_graph_op_add || g->ops[add]->nin != 2 ||
            pt_match_sole_consumer(g, add, 0) != sub)
            return -1;
        const pt_op *ao = g->ops[add];
        int ipos = pt_match_producer(g, ao->in[0].id) == ga ? 0 : pt_match_producer(g, ao->in[1].id) == ga ? 1 : -1;
        if (ipos < 0 || ao->in[0].id == ao->in[1].id || pt_match_sole_consumer(g, ga, 0) != add)
            return -1;
        if (!push_ext(ext, next, cap, ao->in[1 - ipos].id) || !push_ext(ext, next, cap, g->ops[sub]->in[1].id))
            return -1;
    }
    if (!push_ext(ext, next, cap, so->in[3 - pos].id)) return -1;
    if (!pt_match_take(m, ga, PT_SDPA_CAUSAL_ROW) || !pt_match_take(m, gb, PT_SDPA_CAUSAL_COL)) return -1;
    if (add >= 0 && (!pt_match_take(m, add, PT_SDPA_CAUSAL_ADD) || !pt_match_take(m, sub, PT_SDPA_CAUSAL_SUB)))
        return -1;
    if (!pt_match_take(m, ge, PT_SDPA_CAUSAL_GE) || !pt_match_take(m, sel, PT_SDPA_CAUSAL_SELECT)) return -1;
    return sel;
}

/* Kinds of score-chain blocks. */
enum { BLK_SCALE, BLK_MASK, BLK_SELECT, BLK_CAUSAL, BLK_TANH };

typedef struct {
    int op;   /* the op that now produces the running value, -1 when no block matched */
    int kind; /* BLK_* */
    int pos;  /* input of the block's op that takes the running value */
} chain_hit;

/* One block of the score chain on the value produced by `cur` (output 0). */
static chain_hit chain_block(matcher *m, int cur) {
    const pt_graph *g = m->g;
    chain_hit h = {-1, -1, -1};
    size_t val = g->ops[cur]->out[0].id;
    const pt_tensor_info *t = pt_match_tensor(g, val);
    if (!t) return h;
    if (t->nconsumers == 3) {
        h.op = pt_sdpa_match_causal(m->pm, cur, m->ext, &m->next, SDPA_MAX_EXT);
        h.kind = BLK_CAUSAL;
        return h;
    }
    int nx = pt_match_sole_consumer(g, cur, 0);
    if (!is_free(m, nx)) return h;
    const pt_op *op = g->ops[nx];
    if (op->nout != 1 || !dt_float3(op->out[0].data_type)) return h;
    switch ((int)op->kind) {
        case dnnl_graph_op_multiply:
        case dnnl_graph_op_add:
        case dnnl_graph_op_divide: {
            /* Scale (factor at input 1; Multiply also at input 0) or additive mask. */
            if (op->nin != 2) return h;
            int pos = op->in[0].id == val ? 0 : op->in[1].id == val ? 1 : -1;
            if (pos < 0 || (pos == 1 && op->kind == dnnl_graph_op_divide)) return h;
            if (op->in[1 - pos].id == val || !dt_float3(op->in[1 - pos].data_type)) return h;
            pt_sdpa_role role = op->kind == dnnl_graph_op_add ? PT_SDPA_MASK : PT_SDPA_SCALE;
            if (!take(m, nx, role) || !ext_operand(m, op->in[1 - pos].id, nx, PT_SDPA_SCORE_RESHAPE)) return h;
            h.kind = op->kind == dnnl_graph_op_add ? BLK_MASK : BLK_SCALE;
            h.pos = pos;
            break;
        }
        case dnnl_graph_op_select: {
            /* Masked fill: outside condition at 0, running value at 1 or 2. */
            if (op->nin != 3 || op->in[0].id == val || op->in[0].data_type != dnnl_boolean) return h;
            int pos = op->in[1].id == val ? 1 : op->in[2].id == val ? 2 : -1;
            if (pos < 0 || op->in[3 - pos].id == val || !dt_float3(op->in[3 - pos].data_type)) return h;
            if (!take(m, nx, PT_SDPA_SELECT) || !note_ext(m, op->in[0].id) || !note_ext(m, op->in[3 - pos].id))
                return h;
            h.kind = BLK_SELECT;
            h.pos = pos;
            break;
        }
        case dnnl_graph_op_tanh: /* soft-capping */
            if (op->nin != 1 || !take(m, nx, PT_SDPA_SOFTCAP)) return h;
            h.kind = BLK_TANH;
            break;
        default: return h;
    }
    h.op = nx;
    return h;
}

/* SoftMax along the last axis (axis -1 or the equivalent index). */
static bool softmax_last_axis(const pt_op *sm, const pt_op *mm1) {
    int r = sm->in[0].ndims;
    if (r < 0) r = mm1->out[0].ndims;
    if (r < 0 && mm1->in[0].ndims >= 2 && mm1->in[1].ndims >= 2)
        r = mm1->in[0].ndims > mm1->in[1].ndims ? mm1->in[0].ndims : mm1->in[1].ndims;
    int64_t ax = pt_op_s64(sm, dnnl_graph_op_attr_axis, 1);
    if (ax == -1) return true;
    return r > 0 && ax == r - 1;
}

/* ---- pattern forms ------------------------------------------------------------ */

/* How Q / K / V reach their MatMul. */
typedef enum {
    OPD_FLOAT,  /* ext, optionally through a StaticReshape (float forms) */
    OPD_DEQ,    /* ext → Dequantize */
    OPD_DEQ_TC, /* ext → Dequantize → TypeCast(f32 → bf16) */
    OPD_DYN,    /* ext int, ext scales[, ext zps] → DynamicDequantize */
} opd_kind;

/* The score chain. */
typedef enum {
    CH_ANY,  /* any sequence of blocks (float rows) */
    CH_SMS,  /* Scale? → ExplicitMask? → PadSelect? */
    CH_SCMS, /* Scale? → CausalMask? → ExplicitMask? → PadSelect? */
    CH_GPT,  /* Select(·, running value at 1, ·) → Divide → Add, all required */
} chain_kind;

/* SoftMax → second MatMul. */
typedef enum {
    P_FLOAT,     /* Dropout? → TypeCast{0..2}, or the JAX transpose (float rows) */
    P_QDQ,       /* Quantize → Dequantize */
    P_TC_QDQ_TC, /* TypeCast → Quantize → Dequantize → TypeCast */
    P_GPT_F32,   /* TypeCast{0..2} → Quantize → Dequantize */
    P_GPT_BF16,  /* TypeCast{0..2} → Quantize → Dequantize → TypeCast */
    P_DIRECT,    /* nothing */
} p_kind;

/* After the second MatMul. */
typedef enum {
    OUT_FLOAT,    /* StaticReshape? → [StaticTranspose → (Reorder | StaticReshape)?]? */
    OUT_Q,        /* [StaticTranspose → (Reorder | StaticReshape)]? → Quantize */
    OUT_TC_Q,     /* StaticTranspose → (Reorder | StaticReshape) → TypeCast → Quantize */
    OUT_GPT_F32,  /* StaticTranspose → (Reorder | StaticReshape) → Quantize? */
    OUT_GPT_BF16, /* StaticTranspose → (Reorder | StaticReshape) → [TypeCast → Quantize]? */
    OUT_NONE,     /* nothing */
} out_kind;

typedef struct {
    opd_kind q, k, v;
    chain_kind chain;
    p_kind p;
    out_kind out;
    bool x8; /* every quantized tensor has the same u8 / s8 / f8 type; else int8 only */
} sdpa_form;

static bool dt_int8(dnnl_data_type_t dt) { return dt == dnnl_u8 || dt == dnnl_s8; }

static bool dt_x8(dnnl_data_type_t dt) {
    return dt_int8(dt) || dt == dnnl_f8_e4m3 || dt == dnnl_f8_e5m2;
}

/* Quantized types seen so far in a match: all equal (x8 forms) or all int8. */
typedef struct {
    const sdpa_form *f;
    dnnl_data_type_t first;
} qtypes;

static bool qtype_ok(qtypes *q, dnnl_data_type_t dt) {
    if (!q->f->x8) return dt_int8(dt);
    if (!dt_x8(dt)) return false;
    if (q->first == dnnl_data_type_undef) q->first = dt;
    return dt == q->first;
}

/* The free op producing `id` when it is of `kind` with `nin` inputs (0: any
 * count) and its only consumer is `user`; -1 otherwise. */
static int producer_kind(const matcher *m, size_t id, int kind, int user) {
    int p = pt_match_producer(m->g, id);
    if (!is_free(m, p) || (int)m->g->ops[p]->kind != kind || m->g->ops[p]->nout != 1 ||
        pt_match_sole_consumer(m->g, p, 0) != user)
        return -1;
    return p;
}

/* Role `q_role` of Q shifted to operand `which` (0 Q, 1 K, 2 V). */
static pt_sdpa_role operand_role(pt_sdpa_role q_role, int which) {
    return (pt_sdpa_role)(q_role + which * (PT_SDPA_K_RESHAPE - PT_SDPA_Q_RESHAPE));
}

/* Dequantize (int8 / f8 → f32) producing `id` for `user`, with its input ext. */
static bool deq_operand(matcher *m, size_t id, int user, qtypes *qt, int which) {
    int d = producer_kind(m, id, dnnl_graph_op_dequantize, user);
    if (d < 0) return false;
    const pt_op *op = m->g->ops[d];
    if (op->nin != 1 || !qtype_ok(qt, op->in[0].data_type) || op->out[0].data_type != dnnl_f32) return false;
    return take(m, d, operand_role(PT_SDPA_Q_DEQ, which)) && note_ext(m, op->in[0].id);
}

/* How the MatMul `user` reads operand `id` (`which`: 0 Q, 1 K, 2 V). */
static bool operand(matcher *m, size_t id, int user, opd_kind kind, qtypes *qt, int which) {
    const pt_graph *g = m->g;
    switch (kind) {
        case OPD_FLOAT: return ext_operand(m, id, user, operand_role(PT_SDPA_Q_RESHAPE, which));
        case OPD_DEQ: return deq_operand(m, id, user, qt, which);
        case OPD_DEQ_TC: {
            int tc = producer_kind(m, id, dnnl_graph_op_type_cast, user);
            if (tc < 0 || g->ops[tc]->nin != 1 || g->ops[tc]->out[0].data_type != dnnl_bf16) return false;
            return take(m, tc, operand_role(PT_SDPA_Q_CAST, which)) &&
                   deq_operand(m, g->ops[tc]->in[0].id, tc, qt, which);
        }
        case OPD_DYN: {
            int d = producer_kind(m, id, dnnl_graph_op_dynamic_dequantize, user);
            if (d < 0) return false;
            const pt_op *op = g->ops[d];
            dnnl_data_type_t src = op->in[0].data_type;
            if (op->nin < 2 || op->nin > 3 || !dt_float3(op->out[0].data_type) ||
                op->in[1].data_type != op->out[0].data_type)
                return false;
            if (src != dnnl_u8 && src != dnnl_s8 && src != dnnl_u4 && src != dnnl_s4) return false;
            if (op->nin == 3) {
                dnnl_data_type_t z = op->in[2].data_type;
                if (z != dnnl_u8 && z != dnnl_s8 && z != dnnl_u4 && z != dnnl_s4 && z != dnnl_s32) return false;
            }
            if (!take(m, d, operand_role(PT_SDPA_Q_DEQ, which))) return false;
            for (size_t k = 0; k < op->nin; ++k)
                if (!note_ext(m, op->in[k].id)) return false;
            return true;
        }
    }
    return false;
}

/* The score chain from `first` up to the SoftMax; returns the op producing
 * the SoftMax input, or -1. */
static int score_chain(matcher *m, int first, chain_kind kind) {
    static const int sms[] = {BLK_SCALE, BLK_MASK, BLK_SELECT};
    static const int scms[] = {BLK_SCALE, BLK_CAUSAL, BLK_MASK, BLK_SELECT};
    static const int gpt[] = {BLK_SELECT, BLK_SCALE, BLK_MASK};
    const int *order = kind == CH_SMS ? sms : kind == CH_SCMS ? scms : gpt;
    const int norder = kind == CH_SMS ? 3 : kind == CH_SCMS ? 4 : 3;
    const pt_graph *g = m->g;
    int cur = first, blocks = 0, at = 0;
    for (;;) {
        int nx = pt_match_sole_consumer(g, cur, 0);
        if (nx >= 0 && g->ops[nx]->kind == dnnl_graph_op_softmax) break;
        if (blocks++ == SDPA_MAX_CHAIN) return -1;
        chain_hit h = chain_block(m, cur);
        if (h.op < 0) return -1;
        if (kind != CH_ANY) {
            while (at < norder && order[at] != h.kind) {
                if (kind == CH_GPT) return -1; /* every GPT block is required */
                ++at;
            }
            if (at == norder) return -1;
            ++at;
            if (kind == CH_GPT && h.kind == BLK_SELECT && h.pos != 1) return -1;
            if (kind == CH_GPT && h.kind == BLK_SCALE && g->ops[h.op]->kind != dnnl_graph_op_divide) return -1;
        }
        cur = h.op;
    }
    if (kind == CH_GPT && at != 3) return -1;
    return cur;
}

/* Takes the free op after `cur` with `role` when it is of `kind` with one
 * input; returns it, or -1 (nothing taken). */
static int take_next(matcher *m, int cur, int kind, pt_sdpa_role role) {
    int nx = pt_match_sole_consumer(m->g, cur, 0);
    if (!is_free(m, nx) || (int)m->g->ops[nx]->kind != kind || m->g->ops[nx]->nin != 1 || m->g->ops[nx]->nout != 1)
        return -1;
    return take(m, nx, role) ? nx : -1;
}

/* TypeCast to `dt` (undef: any type) after `cur`. */
static int take_cast(matcher *m, int cur, dnnl_data_type_t dt, pt_sdpa_role role) {
    int nx = pt_match_sole_consumer(m->g, cur, 0);
    if (!is_free(m, nx) || m->g->ops[nx]->kind != dnnl_graph_op_type_cast) return -1;
    if (dt != dnnl_data_type_undef && m->g->ops[nx]->out[0].data_type != dt) return -1;
    return take_next(m, cur, dnnl_graph_op_type_cast, role);
}

/* Quantize (f32 → quantized) after `cur`. */
static int take_quantize(matcher *m, int cur, qtypes *qt, pt_sdpa_role role) {
    int nx = pt_match_sole_consumer(m->g, cur, 0);
    if (!is_free(m, nx) || m->g->ops[nx]->kind != dnnl_graph_op_quantize) return -1;
    const pt_op *op = m->g->ops[nx];
    if (op->nin != 1 || op->in[0].data_type != dnnl_f32 || !qtype_ok(qt, op->out[0].data_type)) return -1;
    return take_next(m, cur, dnnl_graph_op_quantize, role);
}

/* Quantize → Dequantize (the quantization round trip of P) after `cur`. */
static int take_qdq(matcher *m, int cur, qtypes *qt) {
    int q = take_quantize(m, cur, qt, PT_SDPA_P_QUANT);
    if (q < 0) return -1;
    int d = take_next(m, q, dnnl_graph_op_dequantize, PT_SDPA_P_DEQUANT);
    if (d < 0 || m->g->ops[d]->out[0].data_type != dnnl_f32) return -1;
    return d;
}

/* SoftMax → second MatMul (input 0), float forms: Dropout? → TypeCast{0..2}
 * or JAX: StaticTranspose → Reorder? →[1] MatMul(Vᵀ, ·).  Returns the op
 * producing P, *pin the MatMul input it enters. */
static int p_float(matcher *m, int sm, int *pin) {
    const pt_graph *g = m->g;
    int cur = sm;
    int nx = pt_match_sole_consumer(g, cur, 0);
    if (is_free(m, nx) && g->ops[nx]->kind == dnnl_graph_op_dropout && g->ops[nx]->nin >= 1) {
        const pt_op *d = g->ops[nx];
        if (!take(m, nx, PT_SDPA_P_DROPOUT)) return -1;
        for (size_t k = 1; k < d->nin; ++k)
            if (!note_ext(m, d->in[k].id)) return -1;
        cur = nx;
    }
    for (int c = 0; c < SDPA_MAX_CASTS; ++c) {
        int tc = take_cast(m, cur, dnnl_data_type_undef, PT_SDPA_P_CAST);
        if (tc < 0) break;
        cur = tc;
    }
    *pin = 0;
    int tr = take_next(m, cur, dnnl_graph_op_static_transpose, PT_SDPA_P_TRANSPOSE);
    if (tr >= 0) {
        cur = tr;
        int ro = take_next(m, cur, dnnl_graph_op_reorder, PT_SDPA_P_REORDER);
        if (ro >= 0) cur = ro;
        *pin = 1;
    }
    return cur;
}

static int p_path(matcher *m, int sm, p_kind kind, qtypes *qt, int *pin) {
    *pin = 0;
    int cur = sm;
    switch (kind) {
        case P_FLOAT: return p_float(m, sm, pin);
        case P_DIRECT: return sm;
        case P_QDQ: return take_qdq(m, sm, qt);
        case P_TC_QDQ_TC:
            cur = take_cast(m, sm, dnnl_f32, PT_SDPA_P_CAST);
            cur = cur < 0 ? -1 : take_qdq(m, cur, qt);
            return cur < 0 ? -1 : take_cast(m, cur, dnnl_bf16, PT_SDPA_P_CAST);
        case P_GPT_F32:
        case P_GPT_BF16:
            for (int c = 0; c < SDPA_MAX_CASTS; ++c) {
                int tc = take_cast(m, cur, dnnl_data_type_undef, PT_SDPA_P_CAST);
                if (tc < 0) break;
                cur = tc;
            }
            cur = take_qdq(m, cur, qt);
            return cur < 0 || kind == P_GPT_F32 ? cur : take_cast(m, cur, dnnl_bf16, PT_SDPA_P_CAST);
    }
    return -1;
}

/* OutReorder: StaticTranspose → (Reorder | StaticReshape). */
static int out_reorder(matcher *m, int cur) {
    int tr = take_next(m, cur, dnnl_graph_op_static_transpose, PT_SDPA_OUT_TRANSPOSE);
    if (tr < 0) return -1;
    int nx = take_next(m, tr, dnnl_graph_op_reorder, PT_SDPA_OUT_REORDER);
    if (nx < 0) nx = take_next(m, tr, dnnl_graph_op_static_reshape, PT_SDPA_OUT_RESHAPE);
    return nx;
}

/* After the second MatMul, float forms: StaticReshape? (GQA output) then
 * StaticTranspose → (Reorder | StaticReshape)? */
static bool out_float(matcher *m, int cur) {
    int rs = take_next(m, cur, dnnl_graph_op_static_reshape, PT_SDPA_OUT_RESHAPE);
    if (rs >= 0) cur = rs;
    int tr = take_next(m, cur, dnnl_graph_op_static_transpose, PT_SDPA_OUT_TRANSPOSE);
    if (tr >= 0) {
        int nx = take_next(m, tr, dnnl_graph_op_reorder, PT_SDPA_OUT_REORDER);
        if (nx < 0) take_next(m, tr, dnnl_graph_op_static_reshape, PT_SDPA_OUT_RESHAPE);
    }
    return true;
}

static bool out_path(matcher *m, int mm2, out_kind kind, qtypes *qt) {
    int cur = mm2;
    switch (kind) {
        case OUT_FLOAT: return out_float(m, mm2);
        case OUT_NONE: return true;
        case OUT_Q: {
            int ro = out_reorder(m, cur);
            if (ro >= 0) cur = ro;
            return take_quantize(m, cur, qt, PT_SDPA_OUT_QUANT) >= 0;
        }
        case OUT_TC_Q:
            cur = out_reorder(m, cur);
            cur = cur < 0 ? -1 : take_cast(m, cur, dnnl_f32, PT_SDPA_OUT_CAST);
            return cur >= 0 && take_quantize(m, cur, qt, PT_SDPA_OUT_QUANT) >= 0;
        case OUT_GPT_F32:
            cur = out_reorder(m, cur);
            if (cur >= 0) take_quantize(m, cur, qt, PT_SDPA_OUT_QUANT);
            return cur >= 0;
        case OUT_GPT_BF16: {
            cur = out_reorder(m, cur);
            if (cur < 0) return false;
            /* TypeCast → Quantize, both or neither. */
            int nx = pt_match_sole_consumer(m->g, cur, 0);
            if (!is_free(m, nx) || m->g->ops[nx]->kind != dnnl_graph_op_type_cast) return true;
            int nq = pt_match_sole_consumer(m->g, nx, 0);
            if (!is_free(m, nq) || m->g->ops[nq]->kind != dnnl_graph_op_quantize) return true;
            int tc = take_cast(m, cur, dnnl_f32, PT_SDPA_OUT_CAST);
            return tc >= 0 && take_quantize(m, tc, qt, PT_SDPA_OUT_QUANT) >= 0;
        }
    }
    return false;
}

/* A scale or mask op of the score chain whose operand types differ (e.g. bf16
 * scores divided by an f32 factor): not a supported single op, but the
 * fused partition computes it (and so does the op-by-op fallback). */
static bool mixed_type_binary(const pt_op *op) {
    int k = op->kind;
    if (k != dnnl_graph_op_add && k != dnnl_graph_op_multiply && k != dnnl_graph_op_divide) return false;
    return op->nin == 2 && op->nout == 1 && dt_float3(op->in[0].data_type) && dt_float3(op->in[1].data_type) &&
           dt_float3(op->out[0].data_type);
}

static int match_form(pt_match *pm, int first, const sdpa_form *f) {
    const pt_graph *g = pm->g;
    const pt_op *mm1 = g->ops[first];
    if (mm1->kind != dnnl_graph_op_matmul || mm1->nin != 2 || mm1->nout != 1) return 0;
    dnnl_data_type_t qdt = mm1->in[0].data_type;
    if (!dt_float3(qdt) || mm1->in[1].data_type != qdt || !dt_float3(mm1->out[0].data_type)) return 0;
    matcher m = {.pm = pm, .g = g};
    qtypes qt = {.f = f, .first = dnnl_data_type_undef};
    if (!is_free(&m, first) || !take(&m, first, PT_SDPA_QK)) return 0;
    if (!operand(&m, mm1->in[0].id, first, f->q, &qt, 0) || !operand(&m, mm1->in[1].id, first, f->k, &qt, 1))
        return 0;

    int cur = f->chain == CH_ANY ? -2 : score_chain(&m, first, f->chain);
    if (cur == -2) {
        cur = first;
        for (int blocks = 0;; ++blocks) {
            int nx = pt_match_sole_consumer(g, cur, 0);
            if (nx >= 0 && g->ops[nx]->kind == dnnl_graph_op_softmax) break;
            if (blocks == SDPA_MAX_CHAIN) return 0;
            cur = chain_block(&m, cur).op;
            if (cur < 0) return 0;
        }
    }
    if (cur < 0) return 0;
    int sm = pt_match_sole_consumer(g, cur, 0);
    const pt_op *smo = g->ops[sm];
    if (!is_free(&m, sm) || smo->nin != 1 || smo->nout < 1 || !softmax_last_axis(smo, mm1)) return 0;
    if (!take(&m, sm, PT_SDPA_SOFTMAX)) return 0;

    int pin = 0;
    cur = p_path(&m, sm, f->p, &qt, &pin);
    if (cur < 0) return 0;
    int nx = pt_match_sole_consumer(g, cur, 0);
    if (!is_free(&m, nx)) return 0;
    const pt_op *mm2 = g->ops[nx];
    size_t p = g->ops[cur]->out[0].id;
    if (mm2->kind != dnnl_graph_op_matmul || mm2->nin != 2 || mm2->nout != 1 || mm2->in[pin].id != p ||
        mm2->in[1 - pin].id == p)
        return 0;
    if (f->v == OPD_FLOAT && f->q == OPD_FLOAT && mm2->in[1 - pin].data_type != qdt) return 0;
    if (!dt_float3(mm2->in[1 - pin].data_type)) return 0;
    if (!take(&m, nx, PT_SDPA_PV) || !operand(&m, mm2->in[1 - pin].id, nx, f->v, &qt, 2)) return 0;
    if (!out_path(&m, nx, f->out, &qt)) return 0;

    /* Outside operands really come from outside; every op is runnable. */
    for (int e = 0; e < m.next; ++e) {
        int pr = pt_match_producer(g, m.ext[e]);
        if (pr >= 0 && pt_match_has(pm, pr)) return 0;
    }
    for (int i = 0; i < pm->n; ++i)
        if (!mixed_type_binary(g->ops[pm->ops[i]]) && !pt_schema_supported(g->ops[pm->ops[i]])) return 0;
    return pm->n;
}

/* One row: a matcher with its form (how Q / K / V arrive, score chain, P
 * path, output path, x8 typing). */
#define SDPA_ROW(fn, ...)                                   \
    int fn(pt_match *m, int first) {                        \
        static const sdpa_form f = {__VA_ARGS__};           \
        return match_form(m, first, &f);                    \
    }

SDPA_ROW(pt_match_sdpa_fwd, OPD_FLOAT, OPD_FLOAT, OPD_FLOAT, CH_ANY, P_FLOAT, OUT_FLOAT, false)
SDPA_ROW(pt_match_x8_sdpa, OPD_DEQ, OPD_DEQ, OPD_DEQ, CH_SMS, P_QDQ, OUT_Q, true)
SDPA_ROW(pt_match_int8_bf16_sdpa, OPD_DEQ_TC, OPD_DEQ_TC, OPD_DEQ_TC, CH_SMS, P_TC_QDQ_TC, OUT_TC_Q, false)
SDPA_ROW(pt_match_int8_fp32_gpt_sdpa, OPD_DEQ, OPD_DEQ, OPD_DEQ, CH_GPT, P_GPT_F32, OUT_GPT_F32, false)
SDPA_ROW(pt_match_int8_bf16_gpt_sdpa, OPD_DEQ_TC, OPD_DEQ_TC, OPD_DEQ_TC, CH_GPT, P_GPT_BF16, OUT_GPT_BF16, false)
SDPA_ROW(pt_match_sdpa_compressed_kv, OPD_FLOAT, OPD_DYN, OPD_DYN, CH_SCMS, P_DIRECT, OUT_NONE, false)
SDPA_ROW(pt_match_sdpa_compressed_v, OPD_FLOAT, OPD_FLOAT, OPD_DYN, CH_SCMS, P_DIRECT, OUT_NONE, false)
SDPA_ROW(pt_match_sdpa_compressed_k, OPD_FLOAT, OPD_DYN, OPD_FLOAT, CH_SCMS, P_DIRECT, OUT_NONE, false)
