/* Lowering of a gated-MLP match into the fused kernel's plan
 * (kernels/fused/gated_mlp.h).  The matcher named every op's role; this
 * reads the ops by role, checks the shapes and layouts the kernel computes,
 * and binds the element-wise ops to their reference kernels. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "compile/lower_fused.h"
#include "compile/ref_bind.h"
#include "compile/ref_decode.h"
#include "kernels/fused/gated_mlp.h"
#include "kernels/ref/ref_quant_groups.h"
#include "ops/op_schema.h"
#include "partition/pattern_mlp.h"

typedef struct {
    const pt_op *by_role[PT_MLP_DOWN_DEQUANT + 1]; /* the op of each role, NULL when absent */
    const pt_lt *in;
    size_t nin;
    const pt_lt *out;
    size_t nout;
    pt_gm_plan *p;
} gm_ctx;

static bool is_float3(dnnl_data_type_t dt) {
    return dt == dnnl_f32 || dt == dnnl_bf16 || dt == dnnl_f16;
}

/* The input port holding tensor `id`, checked to be strided with the dims
 * the op saw.  -1 when `id` is not a usable port. */
static int input_port(const gm_ctx *c, const pt_lt *seen) {
    int pi = pt_lower_port_of(c->in, c->nin, seen->id);
    if (pi < 0) return -1;
    const pt_lt *lt = &c->in[pi];
    if (lt->layout_type != dnnl_graph_layout_type_strided || !pt_lower_same_dims(lt, seen) ||
        lt->data_type != seen->data_type)
        return -1;
    for (int d = 0; d < lt->ndims; ++d)
        if (lt->dims[d] < 0 || (lt->dims[d] > 1 && lt->layout.strides[d] < 0)) return -1;
    return pi;
}

static int64_t stride_of(const pt_lt *lt, int d) { return lt->dims[d] == 1 ? 0 : lt->layout.strides[d]; }

/* Batch strides of a rank-`nd` tensor (leading nd - 2 dims are batch dims)
 * right-aligned to the plan's output batch dims; false when they do not
 * broadcast into them. */
static bool align_batch(const pt_gm_plan *p, const pt_lt *lt, int64_t *bs) {
    int nbt = lt->ndims - 2;
    if (nbt < 0 || nbt > p->nb) return false;
    for (int j = 0; j < p->nb; ++j) bs[j] = 0;
    for (int i = 0; i < nbt; ++i) {
        int j = i + p->nb - nbt;
        if (lt->dims[i] != 1 && lt->dims[i] != p->bdims[j]) return false;
        bs[j] = stride_of(lt, i);
    }
    return true;
}

/* A bias (MatMul input 2) broadcast to the MatMul output `dst` ([batch..,
 * rows, cols], batch dims a suffix of the plan's). */
static bool bias_view(const gm_ctx *c, const pt_op *mm, const pt_lt *dst, pt_gm_view *v) {
    const pt_lt *seen = &mm->in[2];
    int pi = input_port(c, seen);
    if (pi < 0 || seen->ndims > dst->ndims || !is_float3(seen->data_type)) return false;
    const pt_lt *lt = &c->in[pi];
    memset(v, 0, sizeof *v);
    v->port = pi;
    v->dt = lt->data_type;
    int rd = dst->ndims, nbd = rd - 2;
    for (int j = 0; j < lt->ndims; ++j) {
        int dd = j + rd - lt->ndims;
        if (lt->dims[j] != 1 && lt->dims[j] != dst->dims[dd]) return false;
        int64_t st = stride_of(lt, j);
        if (dd == rd - 1) v->cs = st;
        else if (dd == rd - 2) v->rs = st;
        else v->bs[dd + c->p->nb - nbd] = st;
    }
    return true;
}

/* Scale / zero-point strides per tensor dim and group sizes of a
 * DynamicDequantize on a rank-r weight (as the reference kernel reads them). */
static bool quant_params(const pt_op *dq, const pt_lt *w, const pt_lt *sc, const pt_lt *zp, int64_t *G,
                         int64_t *ss, int64_t *zs) {
    int r = w->ndims;
    for (int d = 0; d < r; ++d) G[d] = 1, ss[d] = 0, zs[d] = 0;
    const char *qtype = pt_op_str(dq, dnnl_graph_op_attr_qtype, "per_tensor");
    size_t nax = 0;
    const int64_t *axis = pt_op_s64s(dq, dnnl_graph_op_attr_axis, &nax);
    int64_t nsc = pt_lt_nelems(sc), nzp = zp ? pt_lt_nelems(zp) : 1;
    if (!qtype || strcmp(qtype, "per_tensor") == 0) return nsc == 1 && nzp == 1;
    if (strcmp(qtype, "per_channel") == 0) {
        if (nax > 1) return false;
        int64_t a = nax ? axis[0] : 1;
        if (a < 0) a += r;
        if (a < 0 || a >= r) return false;
        int64_t want = w->dims[a];
        if (nsc == want && sc->ndims == 1) ss[a] = want == 1 ? 0 : sc->layout.strides[0];
        else if (!(nsc == 1 && want == 1)) return false;
        if (zp) {
            if (nzp == want && zp->ndims == 1) zs[a] = want == 1 ? 0 : zp->layout.strides[0];
            else if (nzp != 1) return false;
        }
        return true;
    }
    if (strcmp(qtype, "per_group") != 0) return false;
    if (pt_quant_group_sizes(dq, r, w->dims, G) != dnnl_success) return false;
    if (sc->ndims != r || (zp && zp->ndims != r)) return false;
    for (int d = 0; d < r; ++d) {
        if (sc->dims[d] * G[d] != w->dims[d]) return false;
        if (zp && zp->dims[d] != sc->dims[d]) return false;
        ss[d] = sc->dims[d] == 1 ? 0 : sc->layout.strides[d];
        zs[d] = (!zp || zp->dims[d] == 1) ? 0 : zp->layout.strides[d];
    }
    return true;
}

/* Input 1 of MatMul `mm` as a [k, n] weight with `K` rows: a port, or the
 * DynamicDequantize `dq` (its role in the match) of ports. */
static bool weight_view(const gm_ctx *c, const pt_op *mm, const pt_op *dq, int64_t K, int64_t *N,
                        pt_gm_weight *W) {
    memset(W, 0, sizeof *W);
    W->zp.port = -1;
    const pt_lt *seen = &mm->in[1];
    int r = seen->ndims;
    if (r < 2 || !is_float3(seen->data_type)) return false;
    bool tb = pt_op_bool(mm, dnnl_graph_op_attr_transpose_b, false);
    int dk = tb ? r - 1 : r - 2, dn = tb ? r - 2 : r - 1;
    if (seen->dims[dk] != K) return false;
    *N = seen->dims[dn];
    W->op_dt = seen->data_type;
    for (int j = 0; j < PT_GM_MAX_BATCH; ++j) W->bg[j] = 1;

    int pi = input_port(c, seen);
    const pt_lt *wl;
    if (pi >= 0) {
        wl = &c->in[pi];
    } else {
        if (!dq || dq->nout != 1 || dq->out[0].id != seen->id || dq->nin < 2 || dq->nin > 3) return false;
        if (!pt_lower_same_dims(&dq->out[0], seen)) return false;
        pi = input_port(c, &dq->in[0]);
        int si = input_port(c, &dq->in[1]);
        int zi = dq->nin == 3 ? input_port(c, &dq->in[2]) : -1;
        if (pi < 0 || si < 0 || (dq->nin == 3 && zi < 0)) return false;
        wl = &c->in[pi];
        const pt_lt *sl = &c->in[si], *zl = zi >= 0 ? &c->in[zi] : NULL;
        if (!is_float3(sl->data_type)) return false;
        int64_t G[DNNL_MAX_NDIMS], ss[DNNL_MAX_NDIMS], zs[DNNL_MAX_NDIMS];
        if (!quant_params(dq, wl, sl, zl, G, ss, zs)) return false;
        W->quant = true;
        W->sc.port = si;
        W->sc.dt = sl->data_type;
        W->sc.rs = ss[dk], W->sc.cs = ss[dn];
        W->gk = G[dk], W->gn = G[dn];
        if (zl) {
            W->zp.port = zi;
            W->zp.dt = zl->data_type;
            W->zp.rs = zs[dk], W->zp.cs = zs[dn];
        }
        int nbt = r - 2;
        if (nbt > c->p->nb) return false;
        for (int i = 0; i < nbt; ++i) {
            int j = i + c->p->nb - nbt;
            if (wl->dims[i] == 1) continue; /* broadcast: tensor index 0 */
            W->bg[j] = G[i];
            W->sc.bs[j] = ss[i];
            W->zp.bs[j] = zs[i];
        }
    }
    W->constant = wl->property == dnnl_graph_tensor_property_constant;
    if (W->quant) {
        W->constant = W->constant && c->in[W->sc.port].property == dnnl_graph_tensor_property_constant;
        if (W->zp.port >= 0)
            W->constant = W->constant && c->in[W->zp.port].property == dnnl_graph_tensor_property_constant;
    }
    W->w.port = pi;
    W->w.dt = wl->data_type;
    W->w.rs = stride_of(wl, dk);
    W->w.cs = stride_of(wl, dn);
    return align_batch(c->p, wl, W->w.bs);
}

/* The gate branch (`gate`: its MatMul, with the act / swish roles) or the up
 * branch (MatMul only).  Binds the branch's element-wise ops. */
static bool lower_branch(gm_ctx *c, bool gate, pt_gm_branch *b) {
    memset(b, 0, sizeof *b);
    const pt_op *act = gate ? c->by_role[PT_MLP_ACT] : NULL;
    const pt_op *sg = gate ? c->by_role[PT_MLP_SWISH_SIGMOID] : NULL;
    const pt_op *mul = gate ? c->by_role[PT_MLP_SWISH_MUL] : NULL;
    const pt_op *mm = c->by_role[gate ? PT_MLP_GATE : PT_MLP_UP];
    if (act) {
        if (!pt_lower_same_dims(&act->in[0], &act->out[0])) return false;
        b->act = PT_GM_ACT_UNARY;
        b->act_dt = act->out[0].data_type;
        return pt_ref_bind(act, &b->act_k) == dnnl_success;
    }
    if (mul && sg) {
        if (!pt_lower_same_dims(&mul->in[0], &mul->in[1]) || !pt_lower_same_dims(&mul->in[0], &mul->out[0]))
            return false;
        b->act = PT_GM_ACT_SWISH;
        b->g_pos = mul->in[0].id == mm->out[0].id ? 0 : 1;
        b->act_dt = sg->out[0].data_type;
        b->mul_dt = mul->out[0].data_type;
        return pt_ref_bind(sg, &b->act_k) == dnnl_success && pt_ref_bind(mul, &b->mul_k) == dnnl_success;
    }
    return true;
}

/* The output of a branch: what the combine op reads. */
static size_t branch_value(const gm_ctx *c, bool gate) {
    const pt_op *last = !gate ? c->by_role[PT_MLP_UP]
                        : c->by_role[PT_MLP_ACT] ? c->by_role[PT_MLP_ACT]
                        : c->by_role[PT_MLP_SWISH_MUL] ? c->by_role[PT_MLP_SWISH_MUL]
                                                        : c->by_role[PT_MLP_GATE];
    return last->out[0].id;
}

static bool lower(gm_ctx *c) {
    pt_gm_plan *p = c->p;
    const pt_op *down = c->by_role[PT_MLP_DOWN], *co = c->by_role[PT_MLP_COMBINE];
    if (c->nout != 1 || !down || !co || !c->by_role[PT_MLP_GATE] || !c->by_role[PT_MLP_UP]) return false;
    const pt_lt *ol = &c->out[0];
    if (down->nout != 1 || down->out[0].id != ol->id) return false;
    if (pt_op_bool(down, dnnl_graph_op_attr_transpose_a, false)) return false;
    if (ol->layout_type != dnnl_graph_layout_type_strided || !pt_lower_same_dims(ol, &down->out[0]) ||
        ol->ndims < 2 || !is_float3(ol->data_type))
        return false;
    p->nb = ol->ndims - 2;
    p->nbatch = 1;
    for (int j = 0; j < p->nb; ++j) p->bdims[j] = ol->dims[j], p->nbatch *= ol->dims[j];
    p->M = ol->dims[ol->ndims - 2];
    p->O = ol->dims[ol->ndims - 1];
    p->dmm_dt = down->out[0].data_type;
    p->out.port = 0;
    p->out.dt = ol->data_type;
    for (int j = 0; j < p->nb; ++j) p->out.bs[j] = stride_of(ol, j);
    p->out.rs = stride_of(ol, ol->ndims - 2);
    p->out.cs = stride_of(ol, ol->ndims - 1);

    /* TypeCast? and the combine. */
    const pt_lt *hl = &down->in[0];
    p->h_dt = hl->data_type;
    const pt_op *tc = c->by_role[PT_MLP_HIDDEN_CAST];
    if (tc) {
        p->has_tc = true;
        p->tc_dt = tc->out[0].data_type;
        if (!pt_lower_same_dims(&tc->in[0], hl)) return false;
    }
    if (co->nin != 2 || !pt_lower_same_dims(&co->out[0], hl) || !pt_lower_same_dims(&co->in[0], hl) ||
        !pt_lower_same_dims(&co->in[1], hl))
        return false;
    p->comb_dt = co->out[0].data_type;
    p->comb_kind = co->kind;
    if (pt_ref_bind(co, &p->comb_k) != dnnl_success) return false;

    /* Hidden [hb.., M, N]: its batch dims broadcast into the output's. */
    int rh = hl->ndims;
    if (rh < 2 || rh - 2 > p->nb || hl->dims[rh - 2] != p->M) return false;
    for (int i = 0; i < rh - 2; ++i)
        if (hl->dims[i] != 1 && hl->dims[i] != p->bdims[i + p->nb - (rh - 2)]) return false;
    p->N = hl->dims[rh - 1];

    /* The two branches by the combine input they feed: same src at input 0,
     * same transpose_a. */
    int gate_side = co->in[0].id == branch_value(c, true) ? 0 : 1;
    const pt_op *mm[2];
    for (int s = 0; s < 2; ++s) {
        bool gate = s == gate_side;
        if (!lower_branch(c, gate, &p->br[s])) return false;
        mm[s] = c->by_role[gate ? PT_MLP_GATE : PT_MLP_UP];
        if (mm[s]->nout != 1 || !pt_lower_same_dims(&mm[s]->out[0], hl)) return false;
        p->br[s].mm_dt = mm[s]->out[0].data_type;
    }
    if (mm[0]->in[0].id != mm[1]->in[0].id) return false;
    bool ta = pt_op_bool(mm[0], dnnl_graph_op_attr_transpose_a, false);
    if (pt_op_bool(mm[1], dnnl_graph_op_attr_transpose_a, false) != ta) return false;
    const pt_lt *sl = &mm[0]->in[0];
    int si = input_port(c, sl);
    if (si < 0 || sl->ndims < 2 || !is_float3(sl->data_type) || !pt_lower_same_dims(&mm[1]->in[0], sl)) return false;
    const pt_lt *sp = &c->in[si];
    int ra = sp->ndims;
    if ((ta ? sp->dims[ra - 1] : sp->dims[ra - 2]) != p->M) return false;
    p->K = ta ? sp->dims[ra - 2] : sp->dims[ra - 1];
    p->src.port = si;
    p->src.dt = sp->data_type;
    p->src.rs = stride_of(sp, ta ? ra - 1 : ra - 2);
    p->src.cs = stride_of(sp, ta ? ra - 2 : ra - 1);
    if (!align_batch(p, sp, p->src.bs)) return false;

    for (int s = 0; s < 2; ++s) {
        const pt_op *dq = c->by_role[s == gate_side ? PT_MLP_GATE_DEQUANT : PT_MLP_UP_DEQUANT];
        int64_t n = -1;
        if (!weight_view(c, mm[s], dq, p->K, &n, &p->br[s].W) || n != p->N) return false;
        if (mm[s]->nin == 3) {
            p->br[s].has_bias = true;
            if (!bias_view(c, mm[s], hl, &p->br[s].bias)) return false;
        }
    }

    /* Down projection: W_down [N, O], optional bias. */
    int64_t o = -1;
    if (!weight_view(c, down, c->by_role[PT_MLP_DOWN_DEQUANT], p->N, &o, &p->Wd) || o != p->O) return false;
    if (down->nin == 3) {
        p->has_dbias = true;
        if (!bias_view(c, down, ol, &p->dbias)) return false;
    }
    return true;
}

pt_status pt_lower_gated_mlp(const pt_op *const *ops, const int *roles, size_t nops, const pt_lt *in, size_t nin,
                             const pt_lt *out, size_t nout, pt_fused *fused,
                             const pt_lower_ctx *lc) {
    pt_gm_plan *p = calloc(1, sizeof *p);
    if (!p) return dnnl_out_of_memory;
    gm_ctx c = {.in = in, .nin = nin, .out = out, .nout = nout, .p = p};
    bool ok = nin <= 64;
    /* Every op has one role of its own: anything else is a form the kernel
     * does not compute. */
    for (size_t i = 0; ok && i < nops; ++i) {
        int r = roles[i];
        ok = r >= PT_MLP_DOWN && r <= PT_MLP_DOWN_DEQUANT && !c.by_role[r];
        if (ok) c.by_role[r] = ops[i];
    }
    p->mode = lc ? lc->fpmath : dnnl_fpmath_mode_strict;
    p->apply_to_int = lc && lc->apply_to_int;
    ok = ok && lower(&c);
    /* Weights given as `any` or in a packed layout (seed 004 option 2). */
    pt_gm_weight *const ws[3] = {&p->br[0].W, &p->br[1].W, &p->Wd};
    for (int i = 0; ok && i < 3; ++i)
        ws[i]->given_layout =
            lc && lc->in_layout && ws[i]->w.port >= 0 && (size_t)ws[i]->w.port < nin ? lc->in_layout[ws[i]->w.port] : 0;
    pt_status st = ok ? pt_gated_mlp_finish(p, fused) : dnnl_unimplemented;
    if (st != dnnl_success) {
        pt_gated_mlp_plan_free(p);
        if (st == dnnl_out_of_memory) return st;
        return pt_err(dnnl_unimplemented,
                      "gated_mlp: partition form not handled by the fused kernel; running op by op");
    }
    return dnnl_success;
}
