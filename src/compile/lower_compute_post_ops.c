/* Lowering of a compute partition (MatMul / Convolution / ConvTranspose
 * with prologue and epilogue element-wise chains) into the fused kernel's
 * state (kernels/fused/compute_post_ops.h says how it runs).
 *
 * The op matched as PT_CHAIN_ANCHOR is the compute op; the ops that produce
 * its src and weights inside the partition become a prologue program per
 * operand, every other op the epilogue program (compile/lower_postops.c).
 * The anchor's attributes are decoded here as the reference kernels read
 * them (ref_matmul.c, ref_conv.c). */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compile/lower_fused.h"
#include "compile/lower_postops.h"
#include "ir/dtype.h"
#include "kernels/fused/compute_post_ops.h"
#include "kernels/fused/matmul_engine.h"
#include "ops/op_schema.h"
#include "ops/spatial_utils.h"
#include "partition/pattern_chain.h"

#define CP_MAXD PT_CP_MAXD
#define CP_MATMUL PT_CP_MATMUL
#define CP_CONV PT_CP_CONV
#define CP_DECONV PT_CP_DECONV

typedef pt_cp_operand cp_operand;
typedef pt_cp_state cp_state;

/* Prologue program of anchor input `k`: the marked ops in order. */
static pt_status make_operand(const pt_op *const *ops, size_t nops, const unsigned *mark, unsigned bit,
                              const pt_op *anchor, size_t k, const pt_lt *in, size_t nin, bool round_floats,
                              cp_operand *op) {
    const pt_lt *lt = &anchor->in[k];
    if (!pt_lower_lt_known(lt)) return pt_err(dnnl_unimplemented, "compute_post_ops: anchor input of unknown shape");
    const pt_op **list = malloc((nops ? nops : 1) * sizeof *list);
    if (!list) return dnnl_out_of_memory;
    size_t n = 0;
    for (size_t i = 0; i < nops; ++i)
        if (mark[i] & bit) list[n++] = ops[i];
    op->dt = lt->data_type;
    op->ndims = lt->ndims;
    memcpy(op->dims, lt->dims, sizeof(int64_t) * (size_t)lt->ndims);
    pt_postops_desc d = {.ops = list, .nops = n, .has_src = false, .ndims = lt->ndims, .dims = lt->dims,
                         .result_id = lt->id, .round_result = true, .round_floats = round_floats,
                         .in = in, .nin = nin};
    pt_status st = pt_postops_create(&d, &op->prog);
    free(list);
    return st;
}

/* Conv attributes as the reference reads them (ref_conv.c). */
static bool read_list(const pt_op *op, int attr, int k, int64_t dflt, int64_t minv, int64_t *v) {
    size_t n = 0;
    const int64_t *a = pt_op_s64s(op, attr, &n);
    if (!a || n == 0) {
        for (int j = 0; j < k; ++j) v[j] = dflt;
        return true;
    }
    if ((int)n != k) return false;
    for (int j = 0; j < k; ++j) {
        if (a[j] < minv) return false;
        v[j] = a[j];
    }
    return true;
}

static void map_data(int r, bool nxc, int *map) {
    int k = r - 2;
    map[0] = 0;
    map[1] = nxc ? r - 1 : 1;
    for (int slot = 0; slot < 3; ++slot) {
        int j = slot - (3 - k);
        map[2 + slot] = j >= 0 ? (nxc ? 1 + j : 2 + j) : -1;
    }
}

static void map_weights(int r, bool x_first, int *map) {
    int k = r - 2;
    map[0] = x_first ? r - 1 : 0;
    map[1] = x_first ? r - 2 : 1;
    for (int slot = 0; slot < 3; ++slot) {
        int j = slot - (3 - k);
        map[2 + slot] = j >= 0 ? (x_first ? j : 2 + j) : -1;
    }
}

static void canon_dims(const pt_lt *lt, const int *map, int64_t *cd) {
    for (int c = 0; c < 5; ++c) cd[c] = map[c] >= 0 ? lt->dims[map[c]] : 1;
}

/* ConvolutionBackwardData is the ConvTranspose of diff_dst with the same
 * weights, strides, pads and dilations: its [OC, IC/G] (OIX) or [.., IC/G,
 * OC] (XIO) weights are a transposed convolution's IOX / XOI weights, and
 * diff_src is that convolution's output (its shape given). */
/* ConvTransposeBackwardData is, the other way round, the forward
 * convolution of diff_dst with the ConvTranspose weights read as [O, I/G]
 * (IOX as OIX, XOI as XIO). */
static pt_status prep_conv(const pt_op *anchor, cp_state *s) {
    const bool bwd_data = anchor->kind == dnnl_graph_op_convolution_backward_data;
    const bool t_bwd_data = anchor->kind == dnnl_graph_op_conv_transpose_backward_data;
    bool deconv = anchor->kind == dnnl_graph_op_conv_transpose || bwd_data;
    const pt_lt *x = &anchor->in[0], *w = &anchor->in[1], *y = &anchor->out[0];
    int r = x->ndims;
    if (r < 3 || r > 5 || w->ndims != r || y->ndims != r)
        return pt_err(dnnl_unimplemented, "compute_post_ops: convolution rank %d", r);
    const char *df = pt_op_str(anchor, dnnl_graph_op_attr_data_format, "NXC");
    const bool t_format = (deconv && !bwd_data) || t_bwd_data; /* IOX / XOI */
    const char *wf = pt_op_str(anchor, dnnl_graph_op_attr_weights_format, t_format ? "XOI" : "XIO");
    bool nxc, xf;
    if (strcmp(df, "NXC") == 0) nxc = true;
    else if (strcmp(df, "NCX") == 0) nxc = false;
    else return pt_err(dnnl_unimplemented, "compute_post_ops: data_format %s", df);
    if (strcmp(wf, t_format ? "XOI" : "XIO") == 0) xf = true;
    else if (strcmp(wf, t_format ? "IOX" : "OIX") == 0) xf = false;
    else return pt_err(dnnl_unimplemented, "compute_post_ops: weights_format %s", wf);
    if ((bwd_data || t_bwd_data) && strcmp(pt_op_str(anchor, dnnl_graph_op_attr_auto_pad, "None"), "None") != 0)
        return pt_err(dnnl_unimplemented, "compute_post_ops: backward data with auto_pad");
    int k = r - 2;
    int64_t strides[3], dils[3], pb[3], pe[3];
    if (!read_list(anchor, dnnl_graph_op_attr_strides, k, 1, 1, strides) ||
        !read_list(anchor, dnnl_graph_op_attr_dilations, k, 1, 1, dils) ||
        !read_list(anchor, dnnl_graph_op_attr_pads_begin, k, 0, 0, pb) ||
        !read_list(anchor, dnnl_graph_op_attr_pads_end, k, 0, 0, pe))
        return pt_err(dnnl_unimplemented, "compute_post_ops: convolution attribute lists");
    const char *auto_pad = pt_op_str(anchor, dnnl_graph_op_attr_auto_pad, "None");
    s->G = pt_op_s64(anchor, dnnl_graph_op_attr_groups, 1);
    if (s->G < 1) return pt_err(dnnl_unimplemented, "compute_post_ops: groups < 1");
    map_data(r, nxc, s->xmap);
    map_data(r, nxc, s->ymap);
    map_weights(r, xf, s->wmap);
    canon_dims(x, s->xmap, s->xd);
    canon_dims(y, s->ymap, s->yd);
    canon_dims(w, s->wmap, s->wd);
    for (int slot = 0; slot < 3; ++slot) {
        int j = slot - (3 - k);
        if (j < 0) {
            s->S[slot] = 1, s->Dl[slot] = 1, s->Pb[slot] = 0;
            continue;
        }
        int64_t b = pb[j], e = pe[j];
        pt_resolve_pad(auto_pad, deconv, s->xd[2 + slot], s->wd[2 + slot], strides[j], dils[j], pb[j], pe[j], &b,
                       &e);
        s->S[slot] = strides[j], s->Dl[slot] = dils[j], s->Pb[slot] = b;
    }
    s->T = s->wd[2] * s->wd[3] * s->wd[4];
    s->nbatch = s->G;
    s->P = s->yd[0] * s->yd[2] * s->yd[3] * s->yd[4];
    if (!deconv) {
        /* x [N, IC], w [OC, IC/G], y [N, OC] */
        if (x->dims[0] != y->dims[0] || s->wd[1] * s->G != s->xd[1] || s->wd[0] != s->yd[1] || s->yd[1] % s->G)
            return pt_err(dnnl_unimplemented, "compute_post_ops: convolution shapes");
        s->Cin_g = s->wd[1];
        s->Q = s->yd[1] / s->G;
        s->K = s->Cin_g * s->T;
    } else {
        /* x [N, A], w [A, B], y [N, B * G] */
        if (s->xd[0] != s->yd[0] || s->wd[1] * s->G != s->yd[1] || s->wd[0] != s->xd[1] || s->xd[1] % s->G)
            return pt_err(dnnl_unimplemented, "compute_post_ops: convtranspose shapes");
        s->Cin_g = s->xd[1] / s->G;
        s->Q = s->wd[1];
        s->K = s->T * s->Cin_g;
    }
    s->kind = deconv ? CP_DECONV : CP_CONV;
    return dnnl_success;
}

static pt_status prep_matmul(const pt_op *anchor, const pt_lt *bias, cp_state *s) {
    const pt_lt *a = &anchor->in[0], *b = &anchor->in[1], *y = &anchor->out[0];
    int ra = a->ndims, rb = b->ndims;
    if (ra < 1 || rb < 1) return pt_err(dnnl_unimplemented, "compute_post_ops: MatMul of rank 0");
    bool ta = pt_op_bool(anchor, dnnl_graph_op_attr_transpose_a, false) && ra >= 2;
    bool tb = pt_op_bool(anchor, dnnl_graph_op_attr_transpose_b, false) && rb >= 2;
    int64_t M, K, N, Kb;
    if (ra == 1) M = 1, K = a->dims[0];
    else M = ta ? a->dims[ra - 1] : a->dims[ra - 2], K = ta ? a->dims[ra - 2] : a->dims[ra - 1];
    if (rb == 1) Kb = b->dims[0], N = 1;
    else Kb = tb ? b->dims[rb - 1] : b->dims[rb - 2], N = tb ? b->dims[rb - 2] : b->dims[rb - 1];
    if (K != Kb) return pt_err(dnnl_unimplemented, "compute_post_ops: MatMul K mismatch");
    int nba = ra > 2 ? ra - 2 : 0, nbb = rb > 2 ? rb - 2 : 0, nb = nba > nbb ? nba : nbb;
    int64_t nbatch = 1;
    for (int i = 0; i < nb; ++i) {
        int ia = i - (nb - nba), ib = i - (nb - nbb);
        int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
        if (da != db && da != 1 && db != 1) return pt_err(dnnl_unimplemented, "compute_post_ops: MatMul batch");
        s->bdims[i] = da == 1 ? db : da;
        nbatch *= s->bdims[i];
    }
    int rd = nb + (ra >= 2) + (rb >= 2);
    if (y->ndims != rd) return pt_err(dnnl_unimplemented, "compute_post_ops: MatMul dst rank");
    for (int i = 0; i < nb; ++i)
        if (y->dims[i] != s->bdims[i]) return pt_err(dnnl_unimplemented, "compute_post_ops: MatMul dst dims");
    if ((ra >= 2 && y->dims[nb] != M) || (rb >= 2 && y->dims[rd - 1] != N))
        return pt_err(dnnl_unimplemented, "compute_post_ops: MatMul dst dims");
    s->ra = ra, s->rb = rb, s->nbd = nb, s->ta = ta, s->tb = tb;
    s->nbatch = nbatch, s->P = M, s->Q = N, s->K = K;
    for (int i = 0; i < CP_MAXD; ++i) s->bias_bs[i] = 0;
    s->bias_sm = s->bias_sn = 0;
    if (bias) {
        int rc = bias->ndims;
        if (rc > rd) return pt_err(dnnl_unimplemented, "compute_post_ops: MatMul bias rank");
        for (int j = 0; j < rc; ++j) {
            int dd = j + rd - rc;
            int64_t e = bias->dims[j];
            if (e != 1 && e != y->dims[dd]) return pt_err(dnnl_unimplemented, "compute_post_ops: MatMul bias dims");
            int64_t st = e == 1 ? 0 : bias->layout.strides[j];
            if (dd < nb) s->bias_bs[dd] = st;
            else if (ra >= 2 && dd == nb) s->bias_sm = st;
            else s->bias_sn = st;
        }
        s->bias_dt = bias->data_type;
    }
    s->kind = CP_MATMUL;
    return dnnl_success;
}

static bool same_layout(const pt_lt *a, const pt_lt *b) {
    if (a->data_type != b->data_type || a->ndims != b->ndims) return false;
    for (int d = 0; d < a->ndims; ++d)
        if (a->dims[d] != b->dims[d] || (a->dims[d] != 1 && a->layout.strides[d] != b->layout.strides[d]))
            return false;
    return true;
}

static void find_inplace(const pt_op *const *ops, size_t nops, const pt_lt *in, size_t nin, const pt_lt *out,
                         cp_state *s) {
    for (size_t i = 0; i < nin; ++i) {
        if (!pt_postops_inplace_port(s->epi, i) || !same_layout(&in[i], out)) continue;
        int uses = 0;
        for (size_t o = 0; o < nops; ++o)
            for (size_t k = 0; k < ops[o]->nin; ++k) uses += ops[o]->in[k].id == in[i].id;
        bool repeated = false;
        for (size_t j = 0; j < nin; ++j) repeated = repeated || (j != i && in[j].id == in[i].id);
        if (uses != 1 || repeated) continue;
        s->has_inplace = true;
        s->inplace_in = in[i].id;
        s->inplace_out = out->id;
        return;
    }
}

static bool is_compute(int k) {
    return k == dnnl_graph_op_matmul || k == dnnl_graph_op_convolution || k == dnnl_graph_op_conv_transpose ||
           k == dnnl_graph_op_convolution_backward_data || k == dnnl_graph_op_conv_transpose_backward_data;
}

static pt_status prepare_impl(const pt_op *const *ops, const int *roles, size_t nops, const pt_lt *in, size_t nin,
                              const pt_lt *out, size_t nout, cp_state *s, unsigned *mark) {
    /* The anchor is the compute op matched as such; no other may appear. */
    int ai = -1;
    for (size_t i = 0; i < nops; ++i) {
        if (!is_compute(ops[i]->kind)) continue;
        if (roles[i] != PT_CHAIN_ANCHOR || ai >= 0)
            return pt_err(dnnl_unimplemented, "compute_post_ops: more than one compute op");
        ai = (int)i;
    }
    if (ai < 0) return pt_err(dnnl_unimplemented, "compute_post_ops: no MatMul / Convolution / ConvTranspose");
    const pt_op *anchor = ops[ai];
    if (anchor->nin < 2 || anchor->nin > 3 || anchor->nout != 1 || nout != 1)
        return pt_err(dnnl_unimplemented, "compute_post_ops: unexpected ports");
    if (!pt_lower_lt_known(&anchor->out[0]) || !pt_lower_lt_known(&out[0]) || out[0].layout_type != dnnl_graph_layout_type_strided)
        return pt_err(dnnl_unimplemented, "compute_post_ops: output of unknown shape or layout");
    const pt_lt *bias = NULL;
    if (anchor->nin == 3 && (anchor->kind == dnnl_graph_op_convolution_backward_data ||
                             anchor->kind == dnnl_graph_op_conv_transpose_backward_data))
        return pt_err(dnnl_unimplemented, "compute_post_ops: backward data with a third input");
    if (anchor->nin == 3) {
        s->bias_port = pt_lower_port_of(in, nin, anchor->in[2].id);
        if (s->bias_port < 0 || pt_lower_producer(ops, nops, anchor->in[2].id) >= 0)
            return pt_err(dnnl_unimplemented, "compute_post_ops: bias computed inside the partition");
        bias = &in[s->bias_port];
        if (!pt_lower_lt_known(bias) || bias->layout_type != dnnl_graph_layout_type_strided)
            return pt_err(dnnl_unimplemented, "compute_post_ops: bias layout");
    } else {
        s->bias_port = -1;
    }
    pt_lower_mark_ancestors(ops, nops, anchor->in[0].id, ai, 1u, mark);
    pt_lower_mark_ancestors(ops, nops, anchor->in[1].id, ai, 2u, mark);
    mark[ai] = 4u;
    if (anchor->kind == dnnl_graph_op_matmul) PT_CHECK(prep_matmul(anchor, bias, s));
    else PT_CHECK(prep_conv(anchor, s));
    if (s->kind != CP_MATMUL && bias) {
        int64_t n = 1;
        for (int d = 0; d < bias->ndims; ++d) n *= bias->dims[d];
        if (bias->ndims < 1 || n != s->yd[1]) return pt_err(dnnl_unimplemented, "compute_post_ops: conv bias shape");
    }
    PT_CHECK(make_operand(ops, nops, mark, 1u, anchor, 0, in, nin, s->round_floats, &s->a));
    PT_CHECK(make_operand(ops, nops, mark, 2u, anchor, 1, in, nin, s->round_floats, &s->w));
    /* Epilogue: every other op, in order. */
    const pt_op **list = malloc((nops ? nops : 1) * sizeof *list);
    if (!list) return dnnl_out_of_memory;
    size_t n = 0;
    for (size_t i = 0; i < nops; ++i)
        if (!mark[i]) list[n++] = ops[i];
    const pt_lt *y = &anchor->out[0];
    s->anchor_dt = y->data_type;
    pt_postops_desc d = {.ops = list, .nops = n, .has_src = true, .src_id = y->id, .src_dt = y->data_type,
                         .src_ndims = y->ndims, .src_dims = y->dims, .ndims = out[0].ndims,
                         .dims = out[0].dims, .result_id = out[0].id, .round_result = false,
                         .round_floats = s->round_floats, .in = in, .nin = nin};
    pt_status st = pt_postops_create(&d, &s->epi);
    free(list);
    PT_CHECK(st);
    /* The chain may only prepend dims of extent 1 (a 0-D MatMul result times a [1] operand). */
    s->out_ndims = out[0].ndims;
    s->out_lead = out[0].ndims - y->ndims;
    if (s->out_lead < 0) return pt_err(dnnl_unimplemented, "compute_post_ops: output rank");
    for (int dd = 0; dd < out[0].ndims; ++dd) {
        int64_t want = dd < s->out_lead ? 1 : y->dims[dd - s->out_lead];
        if (out[0].dims[dd] != want)
            return pt_err(dnnl_unimplemented, "compute_post_ops: output shape differs from the anchor's");
        s->out_dims[dd] = out[0].dims[dd];
        s->out_strides[dd] = out[0].layout.strides[dd];
    }
    s->out_dt = out[0].data_type;
    if (pt_postops_result_dt(s->epi) != s->out_dt)
        return pt_err(dnnl_unimplemented, "compute_post_ops: output data type differs from the chain's");
    find_inplace(ops, nops, in, nin, &out[0], s);
    return dnnl_success;
}

/* True when every port the weights' prologue program reads has property
 * constant (the weights, their scales and zero points): the derived panels
 * may then be cached across executions.  *first: the first such port. */
static bool weights_constant(const pt_postops *p, const pt_lt *in, size_t nin, int *first) {
    *first = -1;
    if (!p) return false;
    for (int i = 0; i < p->nins; ++i) {
        const po_instr *ins = &p->ins[i];
        int ports[PO_MAX_OPERANDS + 4], n = 0;
        for (int j = 0; j < ins->na; ++j)
            if (ins->a[j].kind == OPD_PORT) ports[n++] = ins->a[j].port;
        for (int j = 0; ins->ik == I_BN && j < 4; ++j) ports[n++] = ins->bn_port[j];
        for (int j = 0; j < n; ++j) {
            if (ports[j] < 0 || (size_t)ports[j] >= nin || in[ports[j]].property != dnnl_graph_tensor_property_constant)
                return false;
            if (*first < 0) *first = ports[j];
        }
    }
    return *first >= 0;
}

/* MatMul anchors run on the GEMM engine when it takes them (a plain
 * compiled partition, not the op-by-op replica, which must stay exact). */
static pt_status try_engine(cp_state *s, const pt_lt *in, size_t nin, const pt_lower_ctx *lc) {
    if (s->kind != CP_MATMUL || s->round_floats || !lc) return dnnl_unimplemented;
    bool *cst = malloc((nin ? nin : 1) * sizeof *cst);
    if (!cst) return dnnl_out_of_memory;
    for (size_t i = 0; i < nin; ++i) cst[i] = in[i].property == dnnl_graph_tensor_property_constant;
    pt_status st = pt_mme_prepare(s, cst, lc->in_layout, nin, lc->fpmath, lc->apply_to_int != 0);
    free(cst);
    return st;
}

static pt_status lower(const pt_op *const *ops, const int *roles, size_t nops, const pt_lt *in, size_t nin,
                       const pt_lt *out, size_t nout, pt_fused *fused, bool round_floats, const pt_lower_ctx *lc) {
    if (!ops || !nops || !fused) return pt_err(dnnl_unimplemented, "compute_post_ops: empty partition");
    cp_state *s = calloc(1, sizeof *s);
    unsigned *mark = calloc(nops, sizeof *mark);
    if (!s || !mark) {
        free(s), free(mark);
        return dnnl_out_of_memory;
    }
    s->round_floats = round_floats;
    pt_status st = prepare_impl(ops, roles, nops, in, nin, out, nout, s, mark);
    free(mark);
    if (st != dnnl_success) {
        pt_cp_state_free(s);
        return st;
    }
    st = try_engine(s, in, nin, lc);
    /* Convolutions take the engine's microkernels on the compile path (lc
     * given); the ops-only entries below keep the exact double path. */
    s->conv_engine_allowed = lc != NULL;
    s->w_constant = weights_constant(s->w.prog, in, nin, &s->w_port);
    if (st == dnnl_out_of_memory) {
        pt_cp_state_free(s);
        return st;
    }
    size_t layout = 0;
    int packed = st == dnnl_success ? pt_mme_packed_port(s, &layout) : -1;
    PT_CHECK(pt_compute_post_ops_finish(s, fused));
    if (packed >= 0) pt_fused_add_packed(fused, false, (size_t)packed, layout);
    /* Convolution weights given as `any` or packed (seed 004 option 2). */
    size_t wport = 0, wgiven = 0;
    const pt_postops *wp = s->w.prog;
    if (lc && lc->in_layout && s->kind != CP_MATMUL && wp && wp->nins == 1 && wp->ins[0].a[0].kind == OPD_PORT &&
        (size_t)wp->ins[0].a[0].port < nin)
        wgiven = lc->in_layout[wp->ins[0].a[0].port];
    size_t wl = wgiven ? pt_cp_conv_weight_layout(s, lc->fpmath, wgiven, &wport) : 0;
    if (wl) pt_fused_add_packed(fused, false, wport, wl);
    /* The in-place pair as port indices (the compiled partition reports ids). */
    for (size_t i = 0; s->has_inplace && i < nin; ++i)
        if (in[i].id == s->inplace_in) {
            fused->has_inplace = true;
            fused->inplace_in = i;
            fused->inplace_out = 0;
            break;
        }
    return dnnl_success;
}

pt_status pt_lower_compute_post_ops(const pt_op *const *ops, const int *roles, size_t nops, const pt_lt *in,
                                    size_t nin, const pt_lt *out, size_t nout, pt_fused *fused,
                                    const pt_lower_ctx *lc) {
    return lower(ops, roles, nops, in, nin, out, nout, fused, false, lc);
}

/* The ops-only entries: the compute op is the anchor. */
static pt_status lower_ops(const pt_op *const *ops, size_t nops, const pt_lt *in, size_t nin, const pt_lt *out,
                           size_t nout, pt_fused *fused, bool round_floats, const pt_lower_ctx *lc) {
    int *roles = malloc((nops ? nops : 1) * sizeof *roles);
    if (!roles) return dnnl_out_of_memory;
    for (size_t i = 0; i < nops; ++i) roles[i] = is_compute(ops[i]->kind) ? PT_CHAIN_ANCHOR : PT_CHAIN_POST;
    pt_status st = lower(ops, roles, nops, in, nin, out, nout, fused, round_floats, lc);
    free(roles);
    return st;
}

pt_status pt_prepare_compute_post_ops(const pt_op *const *ops, size_t nops, const pt_lt *in, size_t nin,
                                      const pt_lt *out, size_t nout, pt_fused *fused) {
    return lower_ops(ops, nops, in, nin, out, nout, fused, false, NULL);
}

pt_status pt_prepare_compute_post_ops_engine(const pt_op *const *ops, size_t nops, const pt_lt *in, size_t nin,
                                             const pt_lt *out, size_t nout, pt_fused *fused) {
    const pt_lower_ctx lc = {.fpmath = dnnl_fpmath_mode_strict};
    return lower_ops(ops, nops, in, nin, out, nout, fused, false, &lc);
}

pt_status pt_prepare_compute_post_ops_op_by_op(const pt_op *const *ops, size_t nops, const pt_lt *in, size_t nin,
                                               const pt_lt *out, size_t nout, pt_fused *fused) {
    return lower_ops(ops, nops, in, nin, out, nout, fused, true, NULL);
}

/* ---- MatMul steps of op-by-op partitions ------------------------------------ */

static pt_status run_wrapped(const void *params, const pt_tview *in, size_t nin, const pt_tview *out, size_t nout,
                             const pt_exec_ctx *ctx) {
    const pt_fused *f = params;
    return f->run(f, in, nin, out, nout, ctx ? ctx->scratch : NULL, ctx);
}

static void release_wrapped(void *params) {
    pt_fused *f = params;
    if (f->release) f->release(f);
    free(f);
}

pt_status pt_bind_matmul_engine(const pt_op *op, const pt_lower_ctx *lc, pt_bound_kernel *out) {
    if (!op || op->kind != dnnl_graph_op_matmul || op->nout != 1) return dnnl_unimplemented;
    pt_fused *f = calloc(1, sizeof *f);
    if (!f) return dnnl_out_of_memory;
    const pt_op *ops[1] = {op};
    const int roles[1] = {PT_CHAIN_ANCHOR};
    pt_status st = lower(ops, roles, 1, op->in, op->nin, op->out, 1, f, false, lc);
    if (st == dnnl_success && !((const cp_state *)f->state)->mme) st = dnnl_unimplemented;
    if (st != dnnl_success) {
        if (f->release) f->release(f);
        free(f);
        return st;
    }
    *out = (pt_bound_kernel){.run = run_wrapped, .params = f, .release = release_wrapped,
                             .scratch_bytes = f->scratch_bytes};
    return dnnl_success;
}
