/* Lowering of an SDPA / GQA training backward partition into the fused
 * kernel's plan (kernels/fused/sdpa_bwd_plan.h), once at compile time.  The
 * anchors (the Q·Kᵀ MatMul, the Exp giving P, the dS0 Multiply, the dQ and
 * dK MatMuls) are found by their roles (pattern_sdpa_bwd.h); the ops between
 * them are read along the data flow and checked against the shapes the
 * kernel computes (S-shaped intermediates, the transposes the backward
 * formulas need).  Anything else is dnnl_unimplemented, so the partition
 * runs op by op. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "compile/lower_fused.h"
#include "compile/lower_sdpa.h"
#include "ir/status.h"
#include "kernels/fused/sdpa_bwd_plan.h"
#include "partition/pattern_sdpa_bwd.h"

typedef pt_sdpa_tensor sb_tensor;

typedef struct {
    pt_sdpa_part x;
    sb_plan *p;
    int sdims_n;
    const int64_t *sdims; /* dims of S */
} sb_ctx;

static bool is_kind(const sb_ctx *c, int op, int kind) { return op >= 0 && (int)c->x.ops[op]->kind == kind; }

/* The single op reading output 0 of `op` (an intermediate that must not
 * leave the partition), or -1. */
static int next_op(const sb_ctx *c, int op) {
    if (op < 0 || c->x.ops[op]->nout != 1) return -1;
    size_t id = c->x.ops[op]->out[0].id;
    int list[2];
    if (pt_lower_port_of(c->x.out, c->x.nout, id) >= 0 || pt_sdpa_consumers(&c->x, id, list, 2) != 1) return -1;
    return list[0];
}

static bool input_tensor(const sb_ctx *c, size_t id, sb_tensor *t) {
    int pi = pt_lower_port_of(c->x.in, c->x.nin, id);
    return pi >= 0 && pt_sdpa_port_tensor(&c->x.in[pi], false, pi, t);
}

static bool output_tensor(const sb_ctx *c, size_t id, sb_tensor *t) {
    int po = pt_lower_port_of(c->x.out, c->x.nout, id);
    int list[1];
    return po >= 0 && pt_sdpa_consumers(&c->x, id, list, 1) == 0 && pt_sdpa_port_tensor(&c->x.out[po], true, po, t);
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
    sb_view *w = &p->views[v];
    return pt_sdpa_bcast_strides(t, p->nb, p->bdims, rows, cols, w->bs, &w->rs, &w->cs) ? v : -1;
}

static int score_operand(sb_ctx *c, size_t id) {
    sb_tensor t;
    if (!input_tensor(c, id, &t)) return -1;
    return bcast_view(c->p, &t, c->p->sq, c->p->skv);
}

static int scalar_operand(sb_ctx *c, size_t id) {
    sb_tensor t;
    if (!input_tensor(c, id, &t) || !pt_sdpa_one_element(&t)) return -1;
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
    const pt_op *so = c->x.ops[sel];
    int r = c->sdims_n;
    int ge = pt_sdpa_producer(&c->x, so->in[0].id);
    if (!is_kind(c, ge, dnnl_graph_op_greater_equal) || c->x.ops[ge]->nin != 2) return false;
    const pt_op *geo = c->x.ops[ge];
    int gb = pt_sdpa_producer(&c->x, geo->in[1].id), lhs = pt_sdpa_producer(&c->x, geo->in[0].id);
    if (!is_kind(c, gb, dnnl_graph_op_gen_index)) return false;
    int ga = lhs;
    st->add = st->sub = -1;
    if (is_kind(c, lhs, dnnl_graph_op_subtract)) {
        const pt_op *sub = c->x.ops[lhs];
        int ad = sub->nin == 2 ? pt_sdpa_producer(&c->x, sub->in[0].id) : -1;
        if (!is_kind(c, ad, dnnl_graph_op_add) || c->x.ops[ad]->nin != 2) return false;
        const pt_op *add = c->x.ops[ad];
        int p0 = pt_sdpa_producer(&c->x, add->in[0].id), p1 = pt_sdpa_producer(&c->x, add->in[1].id);
        int ipos = is_kind(c, p0, dnnl_graph_op_gen_index) ? 0 : is_kind(c, p1, dnnl_graph_op_gen_index) ? 1 : -1;
        if (ipos < 0) return false;
        ga = ipos ? p1 : p0;
        st->add = scalar_operand(c, add->in[1 - ipos].id);
        st->sub = scalar_operand(c, sub->in[1].id);
        if (st->add < 0 || st->sub < 0) return false;
        c->x.used[lhs] = c->x.used[ad] = true;
    }
    if (!is_kind(c, ga, dnnl_graph_op_gen_index) || ga == gb) return false;
    const pt_op *gao = c->x.ops[ga], *gbo = c->x.ops[gb];
    if (gao->nin != 1 || gbo->nin != 1 || gao->in[0].id != gbo->in[0].id) return false;
    size_t s = gao->in[0].id;
    int pos = so->in[1].id == s ? 1 : so->in[2].id == s ? 2 : -1;
    if (pos < 0 || !gen_index_col(gao, r, &st->lhs_col) || !gen_index_col(gbo, r, &st->rhs_col)) return false;
    st->kind = SB_CAUSAL;
    st->keep_true = pos == 1;
    st->a = score_operand(c, so->in[3 - pos].id);
    if (st->a < 0) return false;
    c->x.used[ga] = c->x.used[gb] = c->x.used[ge] = true;
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
        int op = pt_sdpa_producer(&c->x, val);
        if (op < 0 || pt_lower_port_of(c->x.out, c->x.nout, val) >= 0) return -1;
        const pt_op *o = c->x.ops[op];
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
                int pos = pt_sdpa_producer(&c->x, o->in[0].id) >= 0 ? 0 : 1;
                if (pt_sdpa_producer(&c->x, o->in[1 - pos].id) >= 0) return -1;
                if (pos == 1 && o->kind == dnnl_graph_op_divide) return -1;
                st->kind = o->kind == dnnl_graph_op_multiply ? SB_MUL : o->kind == dnnl_graph_op_add ? SB_ADD : SB_DIV;
                st->a = score_operand(c, o->in[1 - pos].id);
                if (st->a < 0 || !float3(p->views[st->a].dt)) return -1;
                prev = o->in[pos].id;
                break;
            }
            case dnnl_graph_op_select: {
                if (o->nin != 3) return -1;
                if (pt_sdpa_producer(&c->x, o->in[0].id) >= 0) {
                    if (!read_causal(c, op, st, &prev)) return -1;
                    break;
                }
                int pos = pt_sdpa_producer(&c->x, o->in[1].id) >= 0 ? 1 : 2;
                if (pt_sdpa_producer(&c->x, o->in[3 - pos].id) >= 0) return -1;
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
        int nr = pt_sdpa_consumers(&c->x, prev, list, 4);
        if (nr != (st->kind == SB_CAUSAL ? 3 : 1)) return -1;
        c->x.used[op] = true;
        val = prev;
    }
}

static bool read_dropout(sb_ctx *c, int op, sb_drop *d) {
    const pt_op *o = c->x.ops[op];
    if (o->nin != 4 || o->nout != 1 || !s_shaped(c, &o->in[0]) || !s_shaped(c, &o->out[0])) return false;
    d->on = true;
    d->dt = o->out[0].data_type;
    d->seed = scalar_operand(c, o->in[1].id);
    d->offset = scalar_operand(c, o->in[2].id);
    d->prob = scalar_operand(c, o->in[3].id);
    c->x.used[op] = true;
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
    if (pt_lower_port_of(c->x.out, c->x.nout, lt->id) >= 0 || pt_sdpa_consumers(&c->x, lt->id, list, 2) != 1) return false;
    const pt_op *rs = c->x.ops[list[0]];
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
    c->x.used[list[0]] = true;
    return true;
}

static pt_status parse(sb_ctx *c) {
    sb_plan *p = c->p;
    const int ex = pt_sdpa_role_op(&c->x, PT_SDPA_BWD_EXP), mm1 = pt_sdpa_role_op(&c->x, PT_SDPA_QK);
    const int sub = pt_sdpa_role_op(&c->x, PT_SDPA_BWD_SUB_STATS);
    if (ex < 0 || mm1 < 0 || c->x.ops[ex]->nin != 1 || c->x.ops[ex]->nout != 1) return dnnl_unimplemented;
    if (!is_kind(c, sub, dnnl_graph_op_subtract) || c->x.ops[sub]->nin != 2 || next_op(c, sub) != ex)
        return dnnl_unimplemented;

    /* The first MatMul's output fixes the iteration space. */
    const pt_op *so = c->x.ops[sub];
    const pt_op *m1 = c->x.ops[mm1];
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
    if (!s_shaped(c, &so->out[0]) || !s_shaped(c, &c->x.ops[ex]->out[0])) return dnnl_unimplemented;
    sb_tensor t;
    if (!input_tensor(c, so->in[1].id, &t) || (p->vstats = bcast_view(p, &t, p->sq, 1)) < 0)
        return dnnl_unimplemented;
    p->sub_dt = so->out[0].data_type;
    p->p_dt = c->x.ops[ex]->out[0].data_type;
    c->x.used[sub] = c->x.used[ex] = c->x.used[mm1] = true;

    /* Uses of P: the dS0 Multiply and the dV path. */
    const size_t pid = c->x.ops[ex]->out[0].id;
    int pc[3];
    if (pt_lower_port_of(c->x.out, c->x.nout, pid) >= 0 || pt_sdpa_consumers(&c->x, pid, pc, 3) != 2 || pc[0] == pc[1])
        return dnnl_unimplemented;
    const int ds0 = pt_sdpa_role_op(&c->x, PT_SDPA_BWD_DS0);
    if ((pc[0] != ds0 && pc[1] != ds0) || !is_kind(c, ds0, dnnl_graph_op_multiply)) return dnnl_unimplemented;
    int path = ds0 == pc[0] ? pc[1] : pc[0];
    size_t v = pid;
    if (is_kind(c, path, dnnl_graph_op_dropout)) {
        if (!read_dropout(c, path, &p->drop_p)) return dnnl_unimplemented;
        v = c->x.ops[path]->out[0].id;
        path = next_op(c, path);
    }
    if (is_kind(c, path, dnnl_graph_op_type_cast)) {
        if (c->x.ops[path]->nin != 1 || !s_shaped(c, &c->x.ops[path]->out[0])) return dnnl_unimplemented;
        c->x.used[path] = true;
        v = c->x.ops[path]->out[0].id;
        path = next_op(c, path);
    }
    if (!is_kind(c, path, dnnl_graph_op_matmul)) return dnnl_unimplemented;
    const pt_op *mdv = c->x.ops[path];
    if (mdv->nin != 2 || mdv->in[0].id != v || !s_shaped(c, &mdv->in[0])) return dnnl_unimplemented;
    p->pc_dt = mdv->in[0].data_type;
    c->x.used[path] = true;

    /* dS0 = P ⊙ (dP − Dc). */
    const pt_op *mo = c->x.ops[ds0];
    if (mo->nin != 2 || mo->nout != 1 || !s_shaped(c, &mo->out[0])) return dnnl_unimplemented;
    const int sd = pt_sdpa_role_op(&c->x, PT_SDPA_BWD_SUB_DC);
    const size_t dsub = mo->in[mo->in[0].id == pid ? 1 : 0].id; /* dP − Dc */
    if (pt_sdpa_producer(&c->x, dsub) != sd || !is_kind(c, sd, dnnl_graph_op_subtract) || c->x.ops[sd]->nin != 2 ||
        next_op(c, sd) != ds0)
        return dnnl_unimplemented;
    const pt_op *sdo = c->x.ops[sd];
    if (!s_shaped(c, &sdo->out[0])) return dnnl_unimplemented;
    int dp = pt_sdpa_producer(&c->x, sdo->in[0].id);
    if (is_kind(c, dp, dnnl_graph_op_dropout)) {
        if (next_op(c, dp) != sd || !read_dropout(c, dp, &p->drop_dp)) return dnnl_unimplemented;
        int d = dp;
        dp = pt_sdpa_producer(&c->x, c->x.ops[d]->in[0].id);
        if (next_op(c, dp) != d) return dnnl_unimplemented;
    } else if (next_op(c, dp) != sd) {
        return dnnl_unimplemented;
    }
    if (!is_kind(c, dp, dnnl_graph_op_matmul)) return dnnl_unimplemented;
    const pt_op *mdp = c->x.ops[dp];
    if (mdp->nin != 2 || !s_shaped(c, &mdp->out[0])) return dnnl_unimplemented;
    p->dp_dt = mdp->out[0].data_type;
    c->x.used[dp] = c->x.used[sd] = c->x.used[ds0] = true;
    p->sd_dt = sdo->out[0].data_type;
    p->ds0_dt = mo->out[0].data_type;

    /* Dc = ReduceSum(O ⊙ dO), the Subtract's input 1. */
    const int rs = pt_sdpa_role_op(&c->x, PT_SDPA_BWD_DC_REDUCE), mul = pt_sdpa_role_op(&c->x, PT_SDPA_BWD_OD_MUL);
    if (pt_sdpa_producer(&c->x, sdo->in[1].id) != rs || !is_kind(c, rs, dnnl_graph_op_reduce_sum) ||
        next_op(c, rs) != sd || c->x.ops[rs]->nin != 1)
        return dnnl_unimplemented;
    const pt_op *rso = c->x.ops[rs];
    if (pt_sdpa_producer(&c->x, rso->in[0].id) != mul || !is_kind(c, mul, dnnl_graph_op_multiply) ||
        next_op(c, mul) != rs || c->x.ops[mul]->nin != 2)
        return dnnl_unimplemented;
    const pt_op *mulo = c->x.ops[mul];
    const size_t d_o = mdv->in[1].id;
    int dpos = mulo->in[1].id == d_o ? 1 : mulo->in[0].id == d_o ? 0 : -1;
    if (dpos < 0 || mdp->in[0].id != d_o) return dnnl_unimplemented;

    /* dS = dS0 (× | ÷) factor, optionally exported as dM before the scale. */
    const size_t s0 = mo->out[0].id;
    int sl[2];
    if (pt_sdpa_consumers(&c->x, s0, sl, 2) != 1 || c->x.roles[sl[0]] != PT_SDPA_BWD_DS_SCALE)
        return dnnl_unimplemented;
    p->vdm = -1;
    const int dm_port = pt_lower_port_of(c->x.out, c->x.nout, s0);
    if (dm_port >= 0) {
        if (!pt_sdpa_port_tensor(&c->x.out[dm_port], true, dm_port, &t) || t.ndims != c->sdims_n ||
            memcmp(t.dims, c->sdims, sizeof(int64_t) * (size_t)t.ndims) != 0 ||
            (p->vdm = bcast_view(p, &t, p->sq, p->skv)) < 0)
            return dnnl_unimplemented;
    }
    const pt_op *sco = c->x.ops[sl[0]];
    if ((sco->kind != dnnl_graph_op_multiply && sco->kind != dnnl_graph_op_divide) || sco->nin != 2 ||
        sco->nout != 1 || !s_shaped(c, &sco->out[0]))
        return dnnl_unimplemented;
    int fpos = sco->in[0].id == s0 ? 1 : 0;
    if (sco->in[1 - fpos].id != s0 || (sco->kind == dnnl_graph_op_divide && fpos == 0)) return dnnl_unimplemented;
    p->scale_div = sco->kind == dnnl_graph_op_divide;
    p->vscale = score_operand(c, sco->in[fpos].id);
    if (p->vscale < 0 || !float3(p->views[p->vscale].dt)) return dnnl_unimplemented;
    p->ds_dt = sco->out[0].data_type;
    c->x.used[sl[0]] = true;
    int after = sl[0];
    size_t dsv = sco->out[0].id;
    int nx = next_op(c, after);
    if (is_kind(c, nx, dnnl_graph_op_type_cast)) {
        if (c->x.ops[nx]->nin != 1 || !s_shaped(c, &c->x.ops[nx]->out[0])) return dnnl_unimplemented;
        c->x.used[nx] = true;
        dsv = c->x.ops[nx]->out[0].id;
        after = nx;
    }
    int mm[3];
    if (pt_lower_port_of(c->x.out, c->x.nout, dsv) >= 0 || pt_sdpa_consumers(&c->x, dsv, mm, 3) != 2)
        return dnnl_unimplemented;
    /* dS feeds exactly the dQ MatMul (with K) and the dK MatMul (with Q). */
    const size_t qid = m1->in[0].id, kid = m1->in[1].id;
    const int mdq = pt_sdpa_role_op(&c->x, PT_SDPA_BWD_DQ), mdk = pt_sdpa_role_op(&c->x, PT_SDPA_BWD_DK);
    if (mdq < 0 || mdk < 0 || qid == kid || !((mm[0] == mdq && mm[1] == mdk) || (mm[0] == mdk && mm[1] == mdq)))
        return dnnl_unimplemented;
    for (int k = 0; k < 2; ++k) {
        const pt_op *o = c->x.ops[mm[k]];
        if (o->kind != dnnl_graph_op_matmul || o->nin != 2 || o->in[0].id != dsv ||
            o->in[1].id != (mm[k] == mdq ? kid : qid))
            return dnnl_unimplemented;
    }
    const pt_op *mq = c->x.ops[mdq], *mk = c->x.ops[mdk];
    p->dsc_dt = mq->in[0].data_type;
    if (!s_shaped(c, &mq->in[0])) return dnnl_unimplemented;
    c->x.used[mdq] = c->x.used[mdk] = true;

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
    c->x.used[rs] = c->x.used[mul] = true;

    /* Outputs: dQ [S batch.., S_q, D], dK / dV (maybe reduced). */
    const pt_lt *ql = &mq->out[0];
    if (ql->ndims != p->nb + 2 || !output_tensor(c, ql->id, &t) || t.ndims != ql->ndims) return dnnl_unimplemented;
    for (int i = 0; i < p->nb; ++i)
        if (t.dims[i] != p->bdims[i]) return dnnl_unimplemented;
    p->vdq = matrix_view(p, &t, -2, -1, p->sq, p->dqk);
    if (p->vdq < 0) return dnnl_unimplemented;
    if (!read_grad(c, &mk->out[0], p->dqk, &p->gk) || !read_grad(c, &mdv->out[0], p->dv, &p->gv))
        return dnnl_unimplemented;

    for (size_t i = 0; i < c->x.nops; ++i)
        if (!c->x.used[i]) return dnnl_unimplemented;
    return dnnl_success;
}

pt_status pt_lower_sdpa_bwd(const pt_op *const *ops, const int *roles, size_t nops, const pt_lt *in, size_t nin,
                            const pt_lt *out, size_t nout, pt_fused *fused,
                            const pt_lower_ctx *lc) {
    sb_plan *p = calloc(1, sizeof *p);
    bool *used = calloc(nops ? nops : 1, sizeof(bool));
    if (!p || !used) {
        free(p);
        free(used);
        return dnnl_out_of_memory;
    }
    sb_ctx c = {.x = {ops, roles, nops, in, nin, out, nout, used}, .p = p};
    pt_status st = parse(&c);
    free(used);
    if (st != dnnl_success) {
        pt_sdpa_bwd_free_plan(p);
        return pt_err(st, "sdpa backward: partition form not handled by the fused kernel; running op by op");
    }
    /* No heads but a non-empty reduced output (a zero extent on a reduced
     * axis): the op-by-op path writes those zeros. */
    if (p->nbatch == 0 && (p->gk.reduce || p->gv.reduce)) {
        pt_sdpa_bwd_free_plan(p);
        return pt_err(dnnl_unimplemented, "sdpa backward: empty reduced batch; running op by op");
    }
    int nthr = 1;
#ifdef _OPENMP
    nthr = omp_get_max_threads();
#endif
    fused->scratch_bytes = pt_sdpa_bwd_plan_blocks(p, nthr);
    fused->run = pt_sdpa_bwd_run;
    fused->release = pt_sdpa_bwd_release;
    fused->state = p;
    return dnnl_success;
}
