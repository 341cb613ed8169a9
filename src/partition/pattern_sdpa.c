/* SDPA forward matcher (fusion-patterns.md §2.5, §3.1-§3.4).  The match is
 * anchored at the Q·K MatMul and walks the score chain forward to the SoftMax
 * and the P·V MatMul.  §1.2 rules: every intermediate has exactly one consumer
 * inside the match (the causal-mask score tensor: exactly its three pattern
 * consumers); Add / Multiply and Select inputs 1 / 2 are commutative, Divide
 * and GreaterEqual are not; outside operands must not be produced by the
 * match itself. */
#include "partition/pattern_sdpa.h"

#include <stdbool.h>

#include "ops/op_schema.h"
#include "partition/pattern_rows.h"

#define SDPA_MAX_CHAIN 16 /* blocks between the first MatMul and the SoftMax */
#define SDPA_MAX_EXT 64
#define SDPA_MAX_CASTS 2 /* TypeCast{0..2} before the second MatMul (§3.3) */

typedef struct {
    const pt_graph *g;
    const int *group;
    int *ops;
    int n, cap;
    size_t ext[SDPA_MAX_EXT]; /* tensors that must come from outside the match */
    int next;
} matcher;

static bool dt_float3(dnnl_data_type_t dt) {
    return dt == dnnl_f32 || dt == dnnl_bf16 || dt == dnnl_f16;
}

static const pt_tensor_info *tensor_of(const pt_graph *g, size_t id) {
    int ti = pt_graph_tensor_index(g, id);
    return ti < 0 ? NULL : &g->tensors[ti];
}

static int producer_of(const pt_graph *g, size_t id) {
    const pt_tensor_info *t = tensor_of(g, id);
    return t ? t->producer : -1;
}

static bool in_match(const matcher *m, int op) {
    for (int i = 0; i < m->n; ++i)
        if (m->ops[i] == op) return true;
    return false;
}

/* Not grouped by an earlier match and not already part of this one. */
static bool is_free(const matcher *m, int op) {
    return op >= 0 && m->group[op] < 0 && !in_match(m, op);
}

static bool take(matcher *m, int op) {
    if (m->n >= m->cap) return false;
    m->ops[m->n++] = op;
    return true;
}

static bool note_ext(matcher *m, size_t id) {
    if (m->next >= SDPA_MAX_EXT) return false;
    m->ext[m->next++] = id;
    return true;
}

/* An operand from outside the pattern, optionally through a StaticReshape
 * whose only consumer is `user` (the Q / K / V / mask reshapes of §3.4). */
static bool ext_operand(matcher *m, size_t id, int user) {
    int p = producer_of(m->g, id);
    if (p >= 0 && m->g->ops[p]->kind == dnnl_graph_op_static_reshape && is_free(m, p) &&
        m->g->ops[p]->nin == 1 && pt_pattern_sole_consumer(m->g, p, 0) == user) {
        if (!take(m, p)) return false;
        id = m->g->ops[p]->in[0].id;
    }
    return note_ext(m, id);
}

/* Implicit causal mask (§2.5) on the value produced by `cur`: two GenIndex
 * and a Select read it; GenIndex_row [→ Add(ext) → Subtract(ext)] →[0]
 * GreaterEqual, GenIndex_col →[1] GreaterEqual → [0] Select; the fill is the
 * Select's other value input.  Returns the Select, or -1. */
static int causal_mask(matcher *m, int cur) {
    const pt_graph *g = m->g;
    size_t s = g->ops[cur]->out[0].id;
    const pt_tensor_info *t = tensor_of(g, s);
    if (!t || t->nconsumers != 3) return -1;
    int gi[3], ngi = 0, sel = -1;
    for (int k = 0; k < 3; ++k) {
        int c = t->consumers[k];
        for (int q = 0; q < k; ++q)
            if (t->consumers[q] == c) return -1; /* read twice by one op */
        if (!is_free(m, c)) return -1;
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
    if (pos < 0 || !dt_float3(so->in[3 - pos].data_type)) return -1;

    int ge = producer_of(g, so->in[0].id);
    if (!is_free(m, ge) || g->ops[ge]->kind != dnnl_graph_op_greater_equal || g->ops[ge]->nin != 2 ||
        pt_pattern_sole_consumer(g, ge, 0) != sel)
        return -1;
    const pt_op *geo = g->ops[ge];
    int gb = producer_of(g, geo->in[1].id); /* column index: GreaterEqual input 1 */
    if (gb != gi[0] && gb != gi[1]) return -1;
    int ga = gb == gi[0] ? gi[1] : gi[0];
    if (pt_pattern_sole_consumer(g, gb, 0) != ge) return -1;

    int add = -1, sub = -1, pa = producer_of(g, geo->in[0].id);
    if (pa == ga) {
        if (pt_pattern_sole_consumer(g, ga, 0) != ge) return -1;
    } else {
        /* Bottom-right alignment: GenIndex_row → Add(ext s_kv) →[0] Subtract(ext s_q). */
        sub = pa;
        if (!is_free(m, sub) || g->ops[sub]->kind != dnnl_graph_op_subtract || g->ops[sub]->nin != 2 ||
            pt_pattern_sole_consumer(g, sub, 0) != ge)
            return -1;
        add = producer_of(g, g->ops[sub]->in[0].id);
        if (!is_free(m, add) || g->ops[add]->kind != dnnl_graph_op_add || g->ops[add]->nin != 2 ||
            pt_pattern_sole_consumer(g, add, 0) != sub)
            return -1;
        const pt_op *ao = g->ops[add];
        int ipos = producer_of(g, ao->in[0].id) == ga ? 0 : producer_of(g, ao->in[1].id) == ga ? 1 : -1;
        if (ipos < 0 || ao->in[0].id == ao->in[1].id || pt_pattern_sole_consumer(g, ga, 0) != add)
            return -1;
        if (!note_ext(m, ao->in[1 - ipos].id) || !note_ext(m, g->ops[sub]->in[1].id)) return -1;
    }
    if (!note_ext(m, so->in[3 - pos].id)) return -1;
    if (!take(m, ga) || !take(m, gb)) return -1;
    if (add >= 0 && (!take(m, add) || !take(m, sub))) return -1;
    if (!take(m, ge) || !take(m, sel)) return -1;
    return sel;
}

/* One block of the score chain on the value produced by `cur` (output 0).
 * Returns the op that now produces the running value, or -1. */
static int chain_block(matcher *m, int cur) {
    const pt_graph *g = m->g;
    size_t val = g->ops[cur]->out[0].id;
    const pt_tensor_info *t = tensor_of(g, val);
    if (!t) return -1;
    if (t->nconsumers == 3) return causal_mask(m, cur);
    int nx = pt_pattern_sole_consumer(g, cur, 0);
    if (!is_free(m, nx)) return -1;
    const pt_op *op = g->ops[nx];
    if (op->nout != 1 || !dt_float3(op->out[0].data_type)) return -1;
    switch ((int)op->kind) {
        case dnnl_graph_op_multiply:
        case dnnl_graph_op_add:
        case dnnl_graph_op_divide: {
            /* Scale (factor at input 1; Multiply also at input 0) or additive mask. */
            if (op->nin != 2) return -1;
            int pos = op->in[0].id == val ? 0 : op->in[1].id == val ? 1 : -1;
            if (pos < 0 || (pos == 1 && op->kind == dnnl_graph_op_divide)) return -1;
            if (op->in[1 - pos].id == val || !dt_float3(op->in[1 - pos].data_type)) return -1;
            if (!take(m, nx) || !ext_operand(m, op->in[1 - pos].id, nx)) return -1;
            return nx;
        }
        case dnnl_graph_op_select: {
            /* Masked fill: outside condition at 0, running value at 1 or 2. */
            if (op->nin != 3 || op->in[0].id == val || op->in[0].data_type != dnnl_boolean) return -1;
            int pos = op->in[1].id == val ? 1 : op->in[2].id == val ? 2 : -1;
            if (pos < 0 || op->in[3 - pos].id == val || !dt_float3(op->in[3 - pos].data_type)) return -1;
            if (!take(m, nx) || !note_ext(m, op->in[0].id) || !note_ext(m, op->in[3 - pos].id)) return -1;
            return nx;
        }
        case dnnl_graph_op_tanh: /* soft-capping (§3.2) */
            if (op->nin != 1 || !take(m, nx)) return -1;
            return nx;
        default: return -1;
    }
}

/* SoftMax along the last axis (§3: axis -1 or the equivalent index). */
static bool softmax_last_axis(const pt_op *sm, const pt_op *mm1) {
    int r = sm->in[0].ndims;
    if (r < 0) r = mm1->out[0].ndims;
    if (r < 0 && mm1->in[0].ndims >= 2 && mm1->in[1].ndims >= 2)
        r = mm1->in[0].ndims > mm1->in[1].ndims ? mm1->in[0].ndims : mm1->in[1].ndims;
    int64_t ax = pt_op_s64(sm, dnnl_graph_op_attr_axis, 1);
    if (ax == -1) return true;
    return r > 0 && ax == r - 1;
}

/* Optional output re-layout after the second MatMul: StaticReshape? (GQA
 * output) then StaticTranspose → (Reorder | StaticReshape)? (OutReorder). */
static bool out_chain(matcher *m, int cur) {
    const pt_graph *g = m->g;
    int nx = pt_pattern_sole_consumer(g, cur, 0);
    if (is_free(m, nx) && g->ops[nx]->kind == dnnl_graph_op_static_reshape && g->ops[nx]->nin == 1) {
        if (!take(m, nx)) return false;
        cur = nx;
        nx = pt_pattern_sole_consumer(g, cur, 0);
    }
    if (is_free(m, nx) && g->ops[nx]->kind == dnnl_graph_op_static_transpose && g->ops[nx]->nin == 1) {
        if (!take(m, nx)) return false;
        cur = nx;
        nx = pt_pattern_sole_consumer(g, cur, 0);
        if (is_free(m, nx) && g->ops[nx]->nin == 1 &&
            (g->ops[nx]->kind == dnnl_graph_op_reorder || g->ops[nx]->kind == dnnl_graph_op_static_reshape))
            if (!take(m, nx)) return false;
    }
    return true;
}

int pt_match_sdpa_fwd(const pt_graph *g, const int *group, int first, int *ops_out, int cap) {
    const pt_op *mm1 = g->ops[first];
    if (mm1->kind != dnnl_graph_op_matmul || mm1->nin != 2 || mm1->nout != 1) return 0;
    dnnl_data_type_t qdt = mm1->in[0].data_type;
    if (!dt_float3(qdt) || mm1->in[1].data_type != qdt || !dt_float3(mm1->out[0].data_type)) return 0;
    matcher m = {.g = g, .group = group, .ops = ops_out, .cap = cap};
    if (!is_free(&m, first) || !take(&m, first)) return 0;
    if (!ext_operand(&m, mm1->in[0].id, first) || !ext_operand(&m, mm1->in[1].id, first)) return 0;

    /* Score chain up to the SoftMax. */
    int cur = first, blocks = 0;
    for (;;) {
        int nx = pt_pattern_sole_consumer(g, cur, 0);
        if (nx >= 0 && g->ops[nx]->kind == dnnl_graph_op_softmax) break;
        if (blocks++ == SDPA_MAX_CHAIN) return 0;
        cur = chain_block(&m, cur);
        if (cur < 0) return 0;
    }
    int sm = pt_pattern_sole_consumer(g, cur, 0);
    const pt_op *smo = g->ops[sm];
    if (!is_free(&m, sm) || smo->nin != 1 || smo->nout < 1 || !softmax_last_axis(smo, mm1)) return 0;
    if (!take(&m, sm)) return 0;

    /* SoftMax → Dropout? → TypeCast{0..2} →[0] MatMul. */
    cur = sm;
    int nx = pt_pattern_sole_consumer(g, cur, 0);
    if (is_free(&m, nx) && g->ops[nx]->kind == dnnl_graph_op_dropout && g->ops[nx]->nin >= 1) {
        const pt_op *d = g->ops[nx];
        if (!take(&m, nx)) return 0;
        for (size_t k = 1; k < d->nin; ++k)
            if (!note_ext(&m, d->in[k].id)) return 0;
        cur = nx;
        nx = pt_pattern_sole_consumer(g, cur, 0);
    }
    for (int c = 0; c < SDPA_MAX_CASTS && is_free(&m, nx) && g->ops[nx]->kind == dnnl_graph_op_type_cast; ++c) {
        if (g->ops[nx]->nin != 1 || !take(&m, nx)) return 0;
        cur = nx;
        nx = pt_pattern_sole_consumer(g, cur, 0);
    }
    /* JAX layout (§3.5): StaticTranspose → Reorder? →[1] MatMul(Vᵀ, Pᵀ). */
    int pin = 0;
    if (is_free(&m, nx) && g->ops[nx]->kind == dnnl_graph_op_static_transpose && g->ops[nx]->nin == 1) {
        if (!take(&m, nx)) return 0;
        cur = nx;
        nx = pt_pattern_sole_consumer(g, cur, 0);
        if (is_free(&m, nx) && g->ops[nx]->kind == dnnl_graph_op_reorder && g->ops[nx]->nin == 1) {
            if (!take(&m, nx)) return 0;
            cur = nx;
            nx = pt_pattern_sole_consumer(g, cur, 0);
        }
        pin = 1;
    }
    if (!is_free(&m, nx)) return 0;
    const pt_op *mm2 = g->ops[nx];
    size_t p = g->ops[cur]->out[0].id;
    if (mm2->kind != dnnl_graph_op_matmul || mm2->nin != 2 || mm2->nout != 1 || mm2->in[pin].id != p ||
        mm2->in[1 - pin].id == p || mm2->in[1 - pin].data_type != qdt)
        return 0;
    if (!take(&m, nx) || !ext_operand(&m, mm2->in[1 - pin].id, nx)) return 0;
    if (!out_chain(&m, nx)) return 0;

    /* Outside operands really come from outside; every op is runnable. */
    for (int e = 0; e < m.next; ++e) {
        int pr = producer_of(g, m.ext[e]);
        if (pr >= 0 && in_match(&m, pr)) return 0;
    }
    for (int i = 0; i < m.n; ++i)
        if (!pt_schema_supported(g->ops[m.ops[i]])) return 0;
    return m.n;
}
