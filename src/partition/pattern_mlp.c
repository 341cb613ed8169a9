/* Gated MLP matchers (docs/fusion.md, gated MLP).  The match is anchored at the
 * down MatMul and walks back: TypeCast?, the combining BINARY op, then the
 * two branches to the gate and up MatMuls, which must read the same src at
 * input 0.  Every intermediate has exactly its pattern consumers
 * (the swish gate value: its Sigmoid and its Multiply); Add, Multiply,
 * Maximum and Minimum are commutative, Subtract and Divide are not; outside
 * operands (src, weights, biases, quantization parameters) must not be
 * produced by the match itself. */
#include "partition/pattern_mlp.h"

#include <stdbool.h>

#include "ops/op_schema.h"

#define MLP_MAX_EXT 16

typedef struct {
    pt_match *pm;
    size_t ext[MLP_MAX_EXT]; /* tensors that must come from outside the match */
    int next;
} matcher;

static bool is_float3(dnnl_data_type_t dt) {
    return dt == dnnl_f32 || dt == dnnl_bf16 || dt == dnnl_f16;
}

static bool is_int_weight(dnnl_data_type_t dt) {
    return dt == dnnl_u4 || dt == dnnl_s4 || dt == dnnl_u8 || dt == dnnl_s8;
}

/* Among BINARY, the kinds whose inputs may swap. */
static bool is_commutative(int kind) {
    return kind == dnnl_graph_op_add || kind == dnnl_graph_op_multiply || kind == dnnl_graph_op_maximum ||
           kind == dnnl_graph_op_minimum;
}

static bool is_free(const matcher *m, int op) { return pt_match_is_free(m->pm, op); }
static bool take(matcher *m, int op, pt_mlp_role role) { return pt_match_take(m->pm, op, role); }

static bool note_ext(matcher *m, size_t id) {
    if (m->next >= MLP_MAX_EXT) return false;
    m->ext[m->next++] = id;
    return true;
}

/* `op` (one output) feeds exactly `user` and nothing else. */
static bool feeds_only(const pt_graph *g, int op, int user) {
    return g->ops[op]->nout == 1 && pt_match_sole_consumer(g, op, 0) == user;
}

/* A MatMul the pattern can use as the gate, up or down projection. */
static bool matmul_shape_ok(const pt_op *op) {
    return op->kind == dnnl_graph_op_matmul && (op->nin == 2 || op->nin == 3) && op->nout == 1 &&
           is_float3(op->in[0].data_type) && is_float3(op->in[1].data_type) &&
           is_float3(op->out[0].data_type);
}

/* Takes the weight of MatMul `mm` (input 1) and its bias (input 2) as outside
 * operands; with `quantized`, a weight produced by a DynamicDequantize that
 * feeds only this MatMul is taken with it (as `dq_role`).  Counts the
 * compressed weights. */
static bool take_weights(matcher *m, int mm, bool quantized, pt_mlp_role dq_role, int *ncompressed) {
    const pt_graph *g = m->pm->g;
    const pt_op *op = g->ops[mm];
    size_t w = op->in[1].id;
    if (w == op->in[0].id) return false;
    int dq = pt_match_producer(g, w);
    if (quantized && is_free(m, dq) && g->ops[dq]->kind == dnnl_graph_op_dynamic_dequantize) {
        const pt_op *d = g->ops[dq];
        if ((d->nin != 2 && d->nin != 3) || !feeds_only(g, dq, mm) || !is_int_weight(d->in[0].data_type))
            return false;
        if (!take(m, dq, dq_role)) return false;
        for (size_t k = 0; k < d->nin; ++k)
            if (!note_ext(m, d->in[k].id)) return false;
        ++*ncompressed;
    } else if (!note_ext(m, w)) {
        return false;
    }
    return op->nin < 3 || note_ext(m, op->in[2].id);
}

/* Gate branch ending at `val` (a combine input) under gated_mlp: the gate
 * MatMul directly, or one UNARY op after it.  Returns the gate MatMul. */
static int gate_plain(matcher *m, size_t val, int comb) {
    const pt_graph *g = m->pm->g;
    int p = pt_match_producer(g, val);
    if (!is_free(m, p) || !feeds_only(g, p, comb)) return -1;
    if (g->ops[p]->kind == dnnl_graph_op_matmul) return take(m, p, PT_MLP_GATE) ? p : -1;
    const pt_op *act = g->ops[p];
    if (!pt_match_is_unary(act->kind) || act->nin != 1 || !is_float3(act->out[0].data_type)) return -1;
    int mm = pt_match_producer(g, act->in[0].id);
    if (!is_free(m, mm) || g->ops[mm]->kind != dnnl_graph_op_matmul || !feeds_only(g, mm, p)) return -1;
    if (!take(m, p, PT_MLP_ACT) || !take(m, mm, PT_MLP_GATE)) return -1;
    return mm;
}

/* Gate branch under gated_mlp_v1: Multiply(g, Sigmoid(g)) with g the gate
 * MatMul output, read by exactly those two ops.  Returns the gate MatMul. */
static int gate_swish(matcher *m, size_t val, int comb) {
    const pt_graph *g = m->pm->g;
    int mul = pt_match_producer(g, val);
    if (!is_free(m, mul) || !feeds_only(g, mul, comb)) return -1;
    const pt_op *mo = g->ops[mul];
    if (mo->kind != dnnl_graph_op_multiply || mo->nin != 2 || !is_float3(mo->out[0].data_type)) return -1;
    for (int side = 0; side < 2; ++side) {
        int sg = pt_match_producer(g, mo->in[side].id);
        int mm = pt_match_producer(g, mo->in[1 - side].id);
        if (!is_free(m, sg) || !is_free(m, mm) || g->ops[sg]->kind != dnnl_graph_op_sigmoid ||
            g->ops[mm]->kind != dnnl_graph_op_matmul || g->ops[sg]->nin != 1 ||
            !feeds_only(g, sg, mul) || g->ops[sg]->in[0].id != mo->in[1 - side].id)
            continue;
        const pt_tensor_info *t = pt_match_tensor(g, mo->in[1 - side].id);
        if (!t || t->nconsumers != 2 || g->ops[mm]->nout != 1) continue;
        bool ok = (t->consumers[0] == sg && t->consumers[1] == mul) ||
                  (t->consumers[0] == mul && t->consumers[1] == sg);
        if (!ok) continue;
        if (!take(m, mul, PT_MLP_SWISH_MUL) || !take(m, sg, PT_MLP_SWISH_SIGMOID) || !take(m, mm, PT_MLP_GATE))
            return -1;
        return mm;
    }
    return -1;
}

/* One assignment of the combine inputs: gate branch at input `gi`, up
 * MatMul at input 1 - gi.  Stores both MatMuls in mms[0..1]; leaves the match
 * as it was on failure. */
static bool branches(matcher *m, int comb, int gi, bool swish, int *mms) {
    const pt_graph *g = m->pm->g;
    const pt_op *co = g->ops[comb];
    int n0 = m->pm->n, e0 = m->next;
    int up = pt_match_producer(g, co->in[1 - gi].id);
    bool ok = is_free(m, up) && g->ops[up]->kind == dnnl_graph_op_matmul && feeds_only(g, up, comb) &&
              take(m, up, PT_MLP_UP);
    int gate = -1;
    if (ok) gate = swish ? gate_swish(m, co->in[gi].id, comb) : gate_plain(m, co->in[gi].id, comb);
    ok = ok && gate >= 0 && gate != up;
    if (ok) {
        const pt_op *go = g->ops[gate], *uo = g->ops[up];
        ok = matmul_shape_ok(go) && matmul_shape_ok(uo) && go->in[0].id == uo->in[0].id &&
             note_ext(m, go->in[0].id);
    }
    if (!ok) {
        m->pm->n = n0;
        m->next = e0;
    }
    mms[0] = gate;
    mms[1] = up;
    return ok;
}

static bool match_mlp(pt_match *pm, int first, bool swish, bool quantized) {
    const pt_graph *g = pm->g;
    const pt_op *down = g->ops[first];
    if (!matmul_shape_ok(down)) return false;
    matcher m = {.pm = pm};
    if (!is_free(&m, first) || !take(&m, first, PT_MLP_DOWN)) return false;
    size_t hid = down->in[0].id;
    if (down->in[1].id == hid || (down->nin == 3 && down->in[2].id == hid)) return false;

    /* TypeCast? → [0] down MatMul. */
    int p = pt_match_producer(g, hid);
    if (!is_free(&m, p) || !feeds_only(g, p, first)) return false;
    if (g->ops[p]->kind == dnnl_graph_op_type_cast) {
        if (g->ops[p]->nin != 1 || !take(&m, p, PT_MLP_HIDDEN_CAST)) return false;
        int tc = p;
        p = pt_match_producer(g, g->ops[tc]->in[0].id);
        if (!is_free(&m, p) || !feeds_only(g, p, tc)) return false;
    }
    const pt_op *co = g->ops[p];
    if (!pt_match_is_binary(co->kind) || co->nin != 2 || !is_float3(co->out[0].data_type) ||
        co->in[0].id == co->in[1].id)
        return false;
    int comb = p;
    if (!take(&m, comb, PT_MLP_COMBINE)) return false;
    int mms[3] = {-1, -1, first}; /* gate, up, down */
    if (!branches(&m, comb, 0, swish, mms) &&
        !(is_commutative(co->kind) && branches(&m, comb, 1, swish, mms)))
        return false;

    static const pt_mlp_role dq_roles[3] = {PT_MLP_GATE_DEQUANT, PT_MLP_UP_DEQUANT, PT_MLP_DOWN_DEQUANT};
    int ncompressed = 0;
    for (int i = 0; i < 3; ++i)
        if (!take_weights(&m, mms[i], quantized, dq_roles[i], &ncompressed)) return false;
    if (quantized && ncompressed == 0) return false;

    /* Outside operands really come from outside; every op is runnable. */
    for (int e = 0; e < m.next; ++e) {
        int pr = pt_match_producer(g, m.ext[e]);
        if (pr >= 0 && pt_match_has(pm, pr)) return false;
    }
    /* A DynamicDequantize is exempt: the pattern takes the u4 weight + u8
     * zero-point form, which the op alone does not list as supported; the
     * fused kernel and the reference kernel both compute it. */
    for (int i = 0; i < pm->n; ++i)
        if (g->ops[pm->ops[i]]->kind != dnnl_graph_op_dynamic_dequantize && !pt_schema_supported(g->ops[pm->ops[i]]))
            return false;
    return true;
}

static int run_mlp(pt_match *m, int first, bool swish, bool quantized) {
    if (!match_mlp(m, first, swish, quantized)) m->n = 0;
    return m->n;
}

int pt_match_gated_mlp(pt_match *m, int first) { return run_mlp(m, first, false, false); }
int pt_match_gated_mlp_v1(pt_match *m, int first) { return run_mlp(m, first, true, false); }
int pt_match_quantized_gated_mlp(pt_match *m, int first) { return run_mlp(m, first, false, true); }
int pt_match_quantized_gated_mlp_v1(pt_match *m, int first) { return run_mlp(m, first, true, true); }
