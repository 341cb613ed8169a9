/* The table of fast single-op lowerings (lower_single_op.h).  Each lowering
 * reads the op through its reference decoder (so attributes are resolved in
 * one place), checks that every tensor is dense and of a type the kernel
 * loads, and fills the kernel's plan. */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "compile/lower_fused.h"
#include "compile/lower_single_op.h"
#include "compile/ref_bind.h"
#include "kernels/mem/mem.h"
#include "kernels/ref/ref_common.h"
#include "kernels/ref/ref_params.h"
#include "ir/dtype.h"
#include "kernels/vec/vec.h"

static void release_state(pt_fused *f) {
    free(f->state);
    f->state = NULL;
}

/* For verbose lines (static storage): the vector row the kernels run on. */
static const char *mem_kernel_name(pt_isa_level level) {
    switch (level) {
        case PT_ISA_AVX512: return "mem_avx512";
        case PT_ISA_AVX2: return "mem_avx2";
        default: return "mem_generic";
    }
}

/* The plan (heap copy of `plan`, `bytes` long) as the partition's kernel. */
static pt_status make_fused(pt_fused *f, const void *plan, size_t bytes, size_t scratch,
                            pt_status (*run)(const pt_fused *, const pt_tview *, size_t, const pt_tview *, size_t,
                                             void *, const pt_exec_ctx *)) {
    void *state = malloc(bytes);
    if (!state) return dnnl_out_of_memory;
    memcpy(state, plan, bytes);
    memset(f, 0, sizeof *f);
    f->run = run;
    f->release = release_state;
    f->state = state;
    f->scratch_bytes = scratch;
    f->kernel_name = mem_kernel_name(pt_vec()->level);
    return dnnl_success;
}

/* Maps each op port to its partition port; false when one is missing or the
 * op has more ports than pt_mem_ports holds. */
static bool map_ports(const pt_op *op, const pt_lt *in, size_t nin, const pt_lt *out, size_t nout,
                      pt_mem_ports *io) {
    if (op->nin > 3 || op->nout > 3) return false;
    for (size_t k = 0; k < op->nin; ++k)
        if ((io->in[k] = pt_lower_port_of(in, nin, op->in[k].id)) < 0) return false;
    for (size_t k = 0; k < op->nout; ++k)
        if ((io->out[k] = pt_lower_port_of(out, nout, op->out[k].id)) < 0) return false;
    return true;
}

/* Every port dense and f32 / bf16 / f16. */
static bool all_dense_float(const pt_op *op) {
    for (size_t k = 0; k < op->nin; ++k)
        if (!pt_mem_dense(&op->in[k]) || !pt_mem_dtype_ok(op->in[k].data_type)) return false;
    for (size_t k = 0; k < op->nout; ++k)
        if (!pt_mem_dense(&op->out[k]) || !pt_mem_dtype_ok(op->out[k].data_type)) return false;
    return true;
}

static bool same_dims(const pt_lt *a, const pt_lt *b) {
    if (a->ndims != b->ndims) return false;
    for (int d = 0; d < a->ndims; ++d)
        if (a->dims[d] != b->dims[d]) return false;
    return true;
}

static int64_t nelems(const pt_lt *lt) {
    int64_t n = 1;
    for (int d = 0; d < lt->ndims; ++d) n *= lt->dims[d];
    return n;
}

/* Decodes op with its reference decoder into *params (bytes long); false
 * when the decoder rejects it. */
static bool decode(pt_ref_decoder dec, const pt_op *op, void *params, size_t bytes) {
    pt_bound_kernel k = {0};
    if (!dec || dec(op, &k) != dnnl_success || !k.params) {
        pt_bound_kernel_release(&k);
        return false;
    }
    memcpy(params, k.params, bytes);
    pt_bound_kernel_release(&k);
    return true;
}

#define PT_SINGLE_OP_ARGS                                                                                          \
    const pt_op *const *ops, const int *roles, size_t nops, const pt_lt *in, size_t nin, const pt_lt *out, size_t nout, \
        pt_fused *fused, const pt_lower_ctx *lc

/* ---- SoftMax / LogSoftmax ---- */

static pt_status lower_softmax(PT_SINGLE_OP_ARGS) {
    (void)roles, (void)lc;
    const pt_op *op = ops[0];
    pt_ref_softmax_params sp;
    pt_mem_softmax_plan p = {0};
    if (nops != 1 || op->nin != 1 || op->nout != 1 || !all_dense_float(op) || !same_dims(&op->in[0], &op->out[0]) ||
        !map_ports(op, in, nin, out, nout, &p.io) || !decode(pt_ref_decoder_of(op->kind), op, &sp, sizeof sp))
        return dnnl_unimplemented;
    const pt_lt *s = &op->in[0];
    p.outer = p.inner = 1;
    for (int d = 0; d < s->ndims; ++d) {
        if (d < sp.axis) p.outer *= s->dims[d];
        if (d > sp.axis) p.inner *= s->dims[d];
    }
    p.len = s->dims[sp.axis];
    p.is_log = sp.is_log;
    p.inf_as_zero = sp.inf_as_zero;
    p.src_dt = s->data_type;
    p.dst_dt = op->out[0].data_type;
    p.threads = pt_mem_max_threads();
    return make_fused(fused, &p, sizeof p, pt_mem_softmax_scratch(&p), pt_mem_softmax_run);
}

/* ---- LayerNorm / RMSNorm ---- */

static pt_status lower_norm(PT_SINGLE_OP_ARGS) {
    (void)roles, (void)lc;
    const pt_op *op = ops[0];
    pt_ref_norm_params np;
    pt_mem_norm_plan p = {.rms = op->kind == dnnl_graph_op_rms_norm};
    if (nops != 1 || op->nin < 1 || !all_dense_float(op) || !same_dims(&op->in[0], &op->out[0]) ||
        !map_ports(op, in, nin, out, nout, &p.io) || !decode(pt_ref_decoder_of(op->kind), op, &np, sizeof np))
        return dnnl_unimplemented;
    const pt_lt *s = &op->in[0];
    p.rows = 1, p.len = 1;
    for (int d = 0; d < s->ndims; ++d) *(d < np.axis ? &p.rows : &p.len) *= s->dims[d];
    p.eps = np.eps;
    if (p.rms) {
        if (op->nout != 1 || op->nin > 2) return dnnl_unimplemented;
        p.has_gamma = op->nin == 2;
    } else {
        if ((op->nout != 1 && op->nout != 3) || (np.affine ? op->nin != 3 : op->nin != 1)) return dnnl_unimplemented;
        p.has_gamma = p.has_beta = np.affine;
        p.has_stats = op->nout == 3;
        for (size_t k = 1; k < op->nout; ++k)
            if (nelems(&op->out[k]) != p.rows) return dnnl_unimplemented;
    }
    /* Affine parameters hold exactly one value per normalised element. */
    for (size_t k = 1; k < op->nin; ++k)
        if (nelems(&op->in[k]) != p.len) return dnnl_unimplemented;
    p.threads = pt_mem_max_threads();
    return make_fused(fused, &p, sizeof p, pt_mem_norm_scratch(&p), pt_mem_norm_run);
}

/* ---- GroupNorm (contiguous groups) ---- */

static pt_status lower_group_norm(PT_SINGLE_OP_ARGS) {
    (void)roles, (void)lc;
    const pt_op *op = ops[0];
    pt_ref_norm_params np;
    pt_mem_gnorm_plan p = {0};
    if (nops != 1 || op->nin < 1 || !all_dense_float(op) || !same_dims(&op->in[0], &op->out[0]) ||
        !map_ports(op, in, nin, out, nout, &p.io) || !decode(pt_ref_decoder_of(op->kind), op, &np, sizeof np))
        return dnnl_unimplemented;
    const pt_lt *s = &op->in[0];
    const int r = s->ndims, cdim = np.nxc ? r - 1 : 1;
    if (r < 2) return dnnl_unimplemented;
    const int64_t N = s->dims[0], C = s->dims[cdim];
    int64_t sp = 1;
    for (int d = 1; d < r; ++d)
        if (d != cdim) sp *= s->dims[d];
    /* Channels last with spatial dims: the per-sample slab kernel. */
    p.nxc = np.nxc && sp != 1;
    if (np.groups < 1 || C % np.groups != 0) return dnnl_unimplemented;
    if (np.affine ? op->nin != 3 : op->nin != 1) return dnnl_unimplemented;
    if (op->nout != 1 && op->nout != 3) return dnnl_unimplemented;
    for (size_t k = 1; k < op->nin; ++k)
        if (nelems(&op->in[k]) != C) return dnnl_unimplemented;
    for (size_t k = 1; k < op->nout; ++k)
        if (nelems(&op->out[k]) != N * np.groups) return dnnl_unimplemented;
    p.groups = N * np.groups;
    p.g = np.groups;
    p.cg = C / np.groups;
    p.sp = sp;
    p.has_affine = np.affine;
    p.has_stats = op->nout == 3;
    p.eps = np.eps;
    p.threads = pt_mem_max_threads();
    return make_fused(fused, &p, sizeof p, pt_mem_gnorm_scratch(&p), pt_mem_gnorm_run);
}

/* ---- unary element-wise ops and conversions ---- */

static pt_status lower_unary(PT_SINGLE_OP_ARGS) {
    (void)roles, (void)lc;
    const pt_op *op = ops[0];
    pt_mem_unary_plan p = {.convert = op->kind == dnnl_graph_op_type_cast || op->kind == dnnl_graph_op_reorder};
    if (nops != 1 || op->nin != 1 || op->nout != 1 || !all_dense_float(op) || !same_dims(&op->in[0], &op->out[0]) ||
        !map_ports(op, in, nin, out, nout, &p.io))
        return dnnl_unimplemented;
    if (!p.convert) {
        pt_ref_eltwise_params ep;
        if (!decode(pt_ref_decoder_of(op->kind), op, &ep, sizeof ep)) return dnnl_unimplemented;
        p.op = ep.p;
    }
    p.n = nelems(&op->in[0]);
    return make_fused(fused, &p, sizeof p, 0, pt_mem_unary_run);
}

/* ---- binary ops with NumPy broadcast ---- */

/* Strides of `t` (dense, right-aligned) over the rank-r output dims: 0 where
 * it is broadcast.  False when it does not broadcast into `dims`. */
static bool bcast_strides(const pt_lt *t, int r, const int64_t *dims, int64_t *st) {
    const int shift = r - t->ndims;
    if (shift < 0) return false;
    int64_t step = 1;
    for (int d = r - 1; d >= 0; --d) {
        const int64_t e = d >= shift ? t->dims[d - shift] : 1;
        if (e != 1 && e != dims[d]) return false;
        st[d] = e == 1 ? 0 : step;
        step *= e;
    }
    return true;
}

static pt_status lower_binary(PT_SINGLE_OP_ARGS) {
    (void)roles, (void)lc;
    const pt_op *op = ops[0];
    pt_mem_binary_plan p = {.kind = op->kind};
    pt_ref_binary_params bp;
    if (nops != 1 || op->nin != 2 || op->nout != 1 || !all_dense_float(op) ||
        !map_ports(op, in, nin, out, nout, &p.io) || !decode(pt_ref_decoder_of(op->kind), op, &bp, sizeof bp))
        return dnnl_unimplemented;
    const pt_lt *o = &op->out[0];
    if (bp.bcast_none && (!same_dims(&op->in[0], o) || !same_dims(&op->in[1], o))) return dnnl_unimplemented;
    const int r = o->ndims;
    int64_t sa[DNNL_MAX_NDIMS], sb[DNNL_MAX_NDIMS];
    if (!bcast_strides(&op->in[0], r, o->dims, sa) || !bcast_strides(&op->in[1], r, o->dims, sb))
        return dnnl_unimplemented;
    /* The output must be exactly the broadcast: every dim comes from an input. */
    for (int d = 0; d < r; ++d) {
        const int ia = d - (r - op->in[0].ndims), ib = d - (r - op->in[1].ndims);
        const int64_t ea = ia >= 0 ? op->in[0].dims[ia] : 1, eb = ib >= 0 ? op->in[1].dims[ib] : 1;
        if ((ea != 1 ? ea : eb) != o->dims[d]) return dnnl_unimplemented;
    }
    /* Drop dims of extent 1, merge neighbours that continue each other. */
    p.nd = 0;
    for (int d = 0; d < r; ++d) {
        if (o->dims[d] == 1) continue;
        if (p.nd > 0) {
            const int q = p.nd - 1;
            const bool a_cont = sa[d] == 0 ? p.sa[q] == 0 : p.sa[q] == sa[d] * o->dims[d];
            const bool b_cont = sb[d] == 0 ? p.sb[q] == 0 : p.sb[q] == sb[d] * o->dims[d];
            if (a_cont && b_cont) {
                p.dims[q] *= o->dims[d];
                p.sa[q] = sa[d];
                p.sb[q] = sb[d];
                continue;
            }
        }
        if (p.nd == PT_MEM_BIN_DIMS) return dnnl_unimplemented;
        p.dims[p.nd] = o->dims[d];
        p.sa[p.nd] = sa[d];
        p.sb[p.nd] = sb[d];
        ++p.nd;
    }
    if (p.nd == 0) p.dims[p.nd++] = 1, p.sa[0] = p.sb[0] = 1; /* a single element */
    p.n = nelems(o);
    return make_fused(fused, &p, sizeof p, 0, pt_mem_binary_run);
}

/* ---- Quantize / Dequantize / DynamicQuantize / DynamicDequantize ---- */

static void release_quant(pt_fused *f) {
    pt_mem_quant_plan *p = f->state;
    if (p) {
        free(p->scales);
        free(p->zps);
    }
    release_state(f);
}

static pt_status lower_quant(PT_SINGLE_OP_ARGS) {
    (void)roles, (void)lc;
    const pt_op *op = ops[0];
    const bool dynamic = op->kind == dnnl_graph_op_dynamic_quantize || op->kind == dnnl_graph_op_dynamic_dequantize;
    pt_mem_quant_plan p = {.dynamic = dynamic};
    if (nops != 1 || op->nout != 1 || op->nin < 1 || !map_ports(op, in, nin, out, nout, &p.io))
        return dnnl_unimplemented;
    const pt_lt *s = &op->in[0], *d = &op->out[0];
    if (!pt_mem_dense(s) || !pt_mem_dense(d) || !same_dims(s, d) || s->ndims < 1 ||
        !pt_mem_quant_dtype_ok(s->data_type) || !pt_mem_quant_dtype_ok(d->data_type))
        return dnnl_unimplemented;
    pt_bound_kernel k = {0};
    pt_ref_decoder dec = pt_ref_decoder_of(op->kind);
    if (!dec || dec(op, &k) != dnnl_success || !k.params) {
        pt_bound_kernel_release(&k);
        return dnnl_unimplemented;
    }
    const pt_ref_quant_params *qp = k.params;
    p.quantize = qp->quantize;
    p.nd = s->ndims;
    p.n = nelems(s);
    for (int i = 0; i < p.nd; ++i) {
        p.dims[i] = s->dims[i];
        p.G[i] = qp->G[i];
        p.ss[i] = qp->ss[i];
        p.zs[i] = qp->zs[i];
    }
    pt_status st = dnnl_success;
    if (dynamic) {
        p.has_zp = qp->has_zp && op->nin > 2;
    } else {
        p.has_zp = qp->nz > 0;
        p.scales = malloc(qp->ns * sizeof *p.scales);
        p.zps = malloc((qp->nz ? qp->nz : 1) * sizeof *p.zps);
        if (!p.scales || !p.zps) st = dnnl_out_of_memory;
        /* Quantizing multiplies by the reciprocal (as the reference): kept ready. */
        for (size_t i = 0; st == dnnl_success && i < qp->ns; ++i)
            p.scales[i] = p.quantize ? 1.f / qp->scales[i] : qp->scales[i];
        for (size_t i = 0; st == dnnl_success && i < qp->nz; ++i) p.zps[i] = (float)qp->zps[i]; /* as the reference loads them */
    }
    pt_bound_kernel_release(&k);
    if (st == dnnl_success) st = make_fused(fused, &p, sizeof p, 0, pt_mem_quant_run);
    if (st != dnnl_success) {
        free(p.scales);
        free(p.zps);
        return st;
    }
    fused->release = release_quant;
    return dnnl_success;
}

/* ---- Reorder between dim orders, StaticTranspose ---- */

/* Dense in some order of its dims: sorted by stride, each stride is the
 * product of the extents below it (dims of extent 1 ignored). */
static bool dense_permuted(const pt_lt *lt) {
    if (lt->ndims < 0 || lt->layout_type != dnnl_graph_layout_type_strided) return false;
    bool used[DNNL_MAX_NDIMS] = {false};
    int64_t want = 1;
    for (;;) {
        int best = -1;
        for (int d = 0; d < lt->ndims; ++d)
            if (!used[d] && lt->dims[d] != 1 && (best < 0 || lt->layout.strides[d] < lt->layout.strides[best])) best = d;
        if (best < 0) return true;
        if (lt->layout.strides[best] != want) return false;
        used[best] = true;
        want *= lt->dims[best];
    }
}

/* Plan of a copy into dst (dims `dims`, strides `ds`) from src strides `ss`
 * given per dst dim. */
static pt_status permute_plan(const pt_op *op, const int64_t *dims, const int64_t *ss, const int64_t *ds, int r,
                              const pt_lt *in, size_t nin, const pt_lt *out, size_t nout, pt_fused *fused) {
    pt_mem_permute_plan p = {.elem = pt_dt_bytes(op->in[0].data_type, 1), .a = -1, .b = -1};
    if (!map_ports(op, in, nin, out, nout, &p.io)) return dnnl_unimplemented;
    for (int d = 0; d < r; ++d) {
        if (dims[d] == 1) continue;
        p.dims[p.nd] = dims[d];
        p.ss[p.nd] = ss[d];
        p.ds[p.nd] = ds[d];
        if (ds[d] == 1) p.a = p.nd;
        if (ss[d] == 1) p.b = p.nd;
        ++p.nd;
    }
    if (p.nd == 0) p.nd = 1, p.dims[0] = p.ss[0] = p.ds[0] = 1, p.a = p.b = 0;
    if (p.a < 0 || p.b < 0) return dnnl_unimplemented;
    return make_fused(fused, &p, sizeof p, 0, pt_mem_permute_run);
}

/* Types and layouts a permuting copy takes: one float type, both dense in some order. */
static bool permute_ok(const pt_op *op) {
    return op->nin == 1 && op->nout == 1 && op->in[0].data_type == op->out[0].data_type &&
           pt_mem_dtype_ok(op->in[0].data_type) && dense_permuted(&op->in[0]) && dense_permuted(&op->out[0]);
}

static pt_status lower_reorder(PT_SINGLE_OP_ARGS) {
    if (lower_unary(ops, roles, nops, in, nin, out, nout, fused, lc) == dnnl_success) return dnnl_success;
    const pt_op *op = ops[0];
    if (nops != 1 || !permute_ok(op) || !same_dims(&op->in[0], &op->out[0])) return dnnl_unimplemented;
    return permute_plan(op, op->out[0].dims, op->in[0].layout.strides, op->out[0].layout.strides, op->out[0].ndims, in,
                        nin, out, nout, fused);
}

static pt_status lower_transpose(PT_SINGLE_OP_ARGS) {
    (void)roles, (void)lc;
    const pt_op *op = ops[0];
    pt_ref_transpose_params tp;
    if (nops != 1 || !permute_ok(op) || !decode(pt_ref_decoder_of(op->kind), op, &tp, sizeof tp) ||
        tp.r != op->out[0].ndims || tp.r != op->in[0].ndims)
        return dnnl_unimplemented;
    int64_t ss[DNNL_MAX_NDIMS];
    for (int d = 0; d < tp.r; ++d) {
        if (op->out[0].dims[d] != op->in[0].dims[tp.perm[d]]) return dnnl_unimplemented;
        ss[d] = op->in[0].layout.strides[tp.perm[d]];
    }
    return permute_plan(op, op->out[0].dims, ss, op->out[0].layout.strides, tp.r, in, nin, out, nout, fused);
}

/* ---- MaxPool / AvgPool on NXC ---- */

static pt_status lower_pool(PT_SINGLE_OP_ARGS) {
    (void)roles, (void)lc;
    const pt_op *op = ops[0];
    pt_ref_pool_params pp;
    pt_mem_pool_plan p = {.is_max = op->kind == dnnl_graph_op_max_pool};
    if (nops != 1 || op->nin != 1 || op->nout != 1 || !all_dense_float(op) || op->in[0].ndims < 3 ||
        op->in[0].ndims > 5 || op->out[0].ndims != op->in[0].ndims || !map_ports(op, in, nin, out, nout, &p.io) ||
        !decode(pt_ref_decoder_of(op->kind), op, &pp, sizeof pp) || !pp.nxc)
        return dnnl_unimplemented;
    pt_v5 vs, vd;
    pt_v5_data(&op->in[0], true, &vs);
    pt_v5_data(&op->out[0], true, &vd);
    if (vs.d[0] != vd.d[0] || vs.d[1] != vd.d[1]) return dnnl_unimplemented;
    for (int i = 0; i < 5; ++i) p.sd[i] = vs.d[i], p.dd[i] = vd.d[i];
    for (int i = 0; i < 3; ++i) {
        p.S[i] = pp.S[i], p.K[i] = pp.K[i], p.Dl[i] = pp.Dl[i], p.P[i] = pp.P[i];
        if (p.S[i] < 1 || p.K[i] < 1 || (p.is_max && p.Dl[i] < 1)) return dnnl_unimplemented;
    }
    p.exclude = pp.exclude;
    switch ((int)op->out[0].data_type) { /* lowest finite value, as the reference */
        case dnnl_bf16: p.lowest = pt_bf16_to_f32(0xff7fu); break;
        case dnnl_f16: p.lowest = -65504.0f; break;
        default: p.lowest = -FLT_MAX; break;
    }
    p.threads = pt_mem_max_threads();
    return make_fused(fused, &p, sizeof p, pt_mem_pool_scratch(&p), pt_mem_pool_run);
}

/* ---- Interpolate on NXC ---- */

static void release_interp(pt_fused *f) {
    pt_mem_interp_plan *p = f->state;
    if (p) free(p->tab[0]);
    release_state(f);
}

static pt_status lower_interp(PT_SINGLE_OP_ARGS) {
    (void)roles, (void)lc;
    const pt_op *op = ops[0];
    pt_ref_interp_params ip;
    pt_mem_interp_plan p = {0};
    if (nops != 1 || op->nin < 1 || op->nout != 1 || op->in[0].ndims < 3 || op->in[0].ndims > 5 ||
        op->out[0].ndims != op->in[0].ndims || !pt_mem_dense(&op->in[0]) || !pt_mem_dense(&op->out[0]) ||
        !pt_mem_dtype_ok(op->in[0].data_type) || !pt_mem_dtype_ok(op->out[0].data_type) ||
        !map_ports(op, in, nin, out, nout, &p.io) || !decode(pt_ref_decoder_of(op->kind), op, &ip, sizeof ip) ||
        !ip.nxc || ip.k != op->in[0].ndims - 2)
        return dnnl_unimplemented;
    pt_v5 vs, vd;
    pt_v5_data(&op->in[0], true, &vs);
    pt_v5_data(&op->out[0], true, &vd);
    if (vs.d[0] != vd.d[0] || vs.d[1] != vd.d[1]) return dnnl_unimplemented;
    for (int i = 0; i < 5; ++i) {
        p.sd[i] = vs.d[i], p.dd[i] = vd.d[i];
        if (i >= 2 && (vs.d[i] == 0) != (vd.d[i] == 0)) return dnnl_unimplemented;
    }
    p.nearest = ip.mode == PT_INTERP_NEAREST;
    p.align_corners = ip.align_corners;
    p.k = ip.k;
    p.threads = pt_mem_max_threads();
    if (!pt_mem_interp_taps(&p)) return dnnl_out_of_memory;
    const pt_status st = make_fused(fused, &p, sizeof p, pt_mem_interp_scratch(&p), pt_mem_interp_run);
    if (st != dnnl_success) {
        free(p.tab[0]);
        return st;
    }
    fused->release = release_interp;
    return dnnl_success;
}

/* ---- reductions over one contiguous block of dims ---- */

static pt_status lower_reduce(PT_SINGLE_OP_ARGS) {
    (void)roles, (void)lc;
    const pt_op *op = ops[0];
    pt_ref_reduce_params rp;
    pt_mem_reduce_plan p = {.kind = op->kind};
    if (nops != 1 || op->nin != 1 || op->nout != 1 || !all_dense_float(op) ||
        !map_ports(op, in, nin, out, nout, &p.io) || !decode(pt_ref_decoder_of(op->kind), op, &rp, sizeof rp) ||
        rp.nattr_axes <= 0)
        return dnnl_unimplemented;
    /* Dims of extent 1 do not change the order; the reduced ones must form
     * one block: [outer, len, inner]. */
    const pt_lt *s = &op->in[0];
    int phase = 0; /* 0: before the block, 1: in it, 2: after it */
    p.outer = p.len = p.inner = 1;
    for (int d = 0; d < s->ndims; ++d) {
        if (s->dims[d] == 1) continue;
        if (rp.red[d]) {
            if (phase == 2) return dnnl_unimplemented;
            phase = 1;
            p.len *= s->dims[d];
        } else {
            if (phase == 1) phase = 2;
            *(phase == 0 ? &p.outer : &p.inner) *= s->dims[d];
        }
    }
    if (nelems(&op->out[0]) != p.outer * p.inner) return dnnl_unimplemented;
    return make_fused(fused, &p, sizeof p, 0, pt_mem_reduce_run);
}

/* ---- the table ---- */

static const struct {
    int kind;
    pt_lower_fn lower;
} g_rows[] = {
    {dnnl_graph_op_softmax, lower_softmax},      {dnnl_graph_op_log_softmax, lower_softmax},
    {dnnl_graph_op_layer_norm, lower_norm},      {dnnl_graph_op_rms_norm, lower_norm},
    {dnnl_graph_op_group_norm, lower_group_norm},
    {dnnl_graph_op_abs, lower_unary},            {dnnl_graph_op_clamp, lower_unary},
    {dnnl_graph_op_elu, lower_unary},            {dnnl_graph_op_exp, lower_unary},
    {dnnl_graph_op_gelu, lower_unary},           {dnnl_graph_op_hard_sigmoid, lower_unary},
    {dnnl_graph_op_hard_swish, lower_unary},     {dnnl_graph_op_leaky_relu, lower_unary},
    {dnnl_graph_op_log, lower_unary},            {dnnl_graph_op_mish, lower_unary},
    {dnnl_graph_op_pow, lower_unary},            {dnnl_graph_op_reciprocal, lower_unary},
    {dnnl_graph_op_relu, lower_unary},           {dnnl_graph_op_round, lower_unary},
    {dnnl_graph_op_sigmoid, lower_unary},        {dnnl_graph_op_softplus, lower_unary},
    {dnnl_graph_op_sqrt, lower_unary},           {dnnl_graph_op_square, lower_unary},
    {dnnl_graph_op_tanh, lower_unary},           {dnnl_graph_op_type_cast, lower_unary},
    {dnnl_graph_op_reorder, lower_reorder},        {dnnl_graph_op_add, lower_binary},
    {dnnl_graph_op_subtract, lower_binary},      {dnnl_graph_op_multiply, lower_binary},
    {dnnl_graph_op_divide, lower_binary},        {dnnl_graph_op_maximum, lower_binary},
    {dnnl_graph_op_minimum, lower_binary},       {dnnl_graph_op_quantize, lower_quant},
    {dnnl_graph_op_dequantize, lower_quant},     {dnnl_graph_op_dynamic_quantize, lower_quant},
    {dnnl_graph_op_dynamic_dequantize, lower_quant}, {dnnl_graph_op_reduce_sum, lower_reduce},
    {dnnl_graph_op_reduce_mean, lower_reduce},   {dnnl_graph_op_reduce_max, lower_reduce},
    {dnnl_graph_op_reduce_min, lower_reduce},    {dnnl_graph_op_reduce_prod, lower_reduce},
    {dnnl_graph_op_static_transpose, lower_transpose}, {dnnl_graph_op_max_pool, lower_pool},
    {dnnl_graph_op_avg_pool, lower_pool},        {dnnl_graph_op_interpolate, lower_interp},
    /* Convolution backward ops on the GEMM engine: backward data as a
     * transposed convolution (the compute lowering), backward weights on
     * their own kernel (kernels/fused/conv_bwd_weights.c). */
    {dnnl_graph_op_matmul, pt_lower_compute_post_ops},
    {dnnl_graph_op_convolution_backward_data, pt_lower_compute_post_ops},
    {dnnl_graph_op_conv_transpose_backward_data, pt_lower_compute_post_ops},
    {dnnl_graph_op_convolution_backward_weights, pt_lower_conv_bwd_weights},
    {dnnl_graph_op_conv_transpose_backward_weights, pt_lower_conv_bwd_weights},
};

pt_lower_fn pt_single_op_lowering(int kind) {
    for (size_t i = 0; i < sizeof g_rows / sizeof g_rows[0]; ++i)
        if (g_rows[i].kind == kind) return g_rows[i].lower;
    return NULL;
}
