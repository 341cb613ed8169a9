/* Lowering of an SDPA forward partition into the fused kernel's plan
 * (kernels/fused/sdpa_plan.h), once at compile time.  The Q·Kᵀ MatMul, the
 * SoftMax and the P·V MatMul are found by their roles (pattern_sdpa.h); the
 * ops around them are read along the data flow:
 *
 *  - Q / K / V may reach the MatMuls through StaticReshape / StaticTranspose
 *    views of the ports, then an optional Dequantize / DynamicDequantize
 *    (per_tensor, per_channel, per_group; 8-bit, 4-bit and f8 data) and
 *    TypeCasts; dequantization happens when a block is loaded.
 *  - The score chain (scale, masks, soft-cap) becomes sd_steps.
 *  - SoftMax → (TypeCast | Quantize | Dequantize | Dropout)* → [JAX
 *    StaticTranspose → Reorder] → second MatMul becomes P transforms.
 *  - The output may leave through StaticReshape / StaticTranspose / Reorder /
 *    TypeCast / Quantize: the views become strides, the rest O transforms.
 *
 * Anything else (layouts a view cannot express, per-channel quantization of
 * the output, ...) is dnnl_unimplemented, so the partition runs op by op. */
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "compile/lower_fused.h"
#include "compile/lower_sdpa.h"
#include "compile/ref_decode.h"
#include "ir/dtype.h"
#include "ir/status.h"
#include "kernels/fused/sdpa_packed_layout.h"
#include "kernels/fused/sdpa_plan.h"
#include "kernels/ref/ref_quant_groups.h"
#include "partition/pattern_sdpa.h"

typedef pt_sdpa_tensor sd_tensor;

typedef struct {
    pt_sdpa_part x;
    sd_plan *p;
} sd_ctx;

static bool is_float3(dnnl_data_type_t dt) {
    return dt == dnnl_f32 || dt == dnnl_bf16 || dt == dnnl_f16;
}

/* Strides that let `ndims`/`dims` view the row-major element order of `t`
 * (the reshape-as-view rule: each group of dims that merges or splits must be
 * contiguous in `t`).  False when that needs a copy. */
static bool view_reshape(const sd_tensor *t, int ndims, const int64_t *dims, int64_t *strides) {
    int64_t nold = 1, nnew = 1;
    for (int d = 0; d < t->ndims; ++d) nold *= t->dims[d];
    for (int d = 0; d < ndims; ++d) nnew *= dims[d];
    if (nold != nnew) return false;
    if (nnew == 0) {
        for (int d = 0; d < ndims; ++d) strides[d] = 0;
        return true;
    }
    int64_t od[DNNL_MAX_NDIMS], os[DNNL_MAX_NDIMS];
    int m = 0;
    for (int d = 0; d < t->ndims; ++d)
        if (t->dims[d] != 1) od[m] = t->dims[d], os[m++] = t->strides[d];
    int oi = 0, ni = 0;
    while (ni < ndims) {
        if (dims[ni] == 1) {
            strides[ni++] = 0;
            continue;
        }
        if (oi >= m) return false;
        int64_t np = dims[ni], op = od[oi];
        int nj = ni + 1, oj = oi + 1;
        while (np != op) {
            if (np < op) {
                if (nj >= ndims) return false;
                np *= dims[nj++];
            } else {
                if (oj >= m) return false;
                op *= od[oj++];
            }
        }
        for (int k = oi; k < oj - 1; ++k)
            if (os[k] != od[k + 1] * os[k + 1]) return false;
        /* Row-major strides inside the group, from its innermost dim outwards. */
        int64_t run = os[oj - 1];
        for (int k = nj - 1; k >= ni; --k) {
            strides[k] = dims[k] == 1 ? 0 : run;
            run *= dims[k];
        }
        ni = nj;
        oi = oj;
    }
    return oi == m;
}

/* Normalised StaticTranspose permutation of a rank-r tensor. */
static bool transpose_order(const pt_op *op, int r, int *perm) {
    size_t n = 0;
    const int64_t *ord = pt_op_s64s(op, dnnl_graph_op_attr_order, &n);
    if (n == 0) {
        for (int k = 0; k < r; ++k) perm[k] = r - 1 - k;
        return true;
    }
    if ((int)n != r) return false;
    for (int k = 0; k < r; ++k) {
        int64_t a = ord[k] < 0 ? ord[k] + r : ord[k];
        if (a < 0 || a >= r) return false;
        perm[k] = (int)a;
    }
    return true;
}

/* The tensor of `ndims` / `dims` on one side of a StaticReshape /
 * StaticTranspose `op` as a view of `base`, the tensor on its other side:
 * `base` is the op's input (outward false) or its output (outward true).
 * 1: *t is the view; 0: no strided view; -1: `op` is neither kind. */
static int view_through(const pt_op *op, const sd_tensor *base, int ndims, const int64_t *dims, bool outward,
                        sd_tensor *t) {
    *t = *base;
    t->ndims = ndims;
    memcpy(t->dims, dims, sizeof(int64_t) * (size_t)ndims);
    if (op->kind == dnnl_graph_op_static_reshape) return view_reshape(base, ndims, dims, t->strides);
    if (op->kind != dnnl_graph_op_static_transpose) return -1;
    int perm[DNNL_MAX_NDIMS];
    if (ndims != base->ndims || !transpose_order(op, ndims, perm)) return 0;
    for (int k = 0; k < ndims; ++k) {
        if (outward) {
            if (dims[perm[k]] != base->dims[k]) return 0;
            t->strides[perm[k]] = base->strides[k];
        } else {
            if (base->dims[perm[k]] != dims[k]) return 0;
            t->strides[k] = base->strides[perm[k]];
        }
    }
    return 1;
}

/* An intermediate read by exactly one op of the partition and not leaving it. */
static bool single_internal_use(const sd_ctx *c, size_t id) {
    int cons[2];
    return pt_lower_port_of(c->x.out, c->x.nout, id) < 0 && pt_sdpa_consumers(&c->x, id, cons, 2) == 1;
}

/* The tensor `id` as an input of the partition's ops: a port, or a
 * StaticReshape / StaticTranspose view of one. */
static bool resolve_input(sd_ctx *c, size_t id, sd_tensor *t) {
    int pi = pt_lower_port_of(c->x.in, c->x.nin, id);
    if (pi >= 0) return pt_sdpa_port_tensor(&c->x.in[pi], false, pi, t);
    int p = pt_sdpa_producer(&c->x, id);
    if (p < 0) return false;
    const pt_op *op = c->x.ops[p];
    if (op->nin != 1 || op->nout != 1 || !single_internal_use(c, id)) return false;
    sd_tensor src;
    if (!resolve_input(c, op->in[0].id, &src)) return false;
    const pt_lt *o = &op->out[0];
    if (o->ndims < 0 || o->ndims > DNNL_MAX_NDIMS) return false;
    if (view_through(op, &src, o->ndims, o->dims, false, t) != 1) return false;
    c->x.used[p] = true;
    return true;
}

/* ---- views ---------------------------------------------------------------- */

static int new_view(sd_plan *p, bool is_out, int port, dnnl_data_type_t dt) {
    if (p->nviews >= SD_MAX_VIEWS) return -1;
    sd_view *v = &p->views[p->nviews];
    memset(v, 0, sizeof *v);
    v->is_out = is_out;
    v->port = port;
    v->dt = dt;
    v->rg = v->cg = 1;
    for (int i = 0; i < SD_MAX_BATCH; ++i) v->bg[i] = 1;
    return p->nviews++;
}

static int tensor_view(sd_plan *p, const sd_tensor *t) { return new_view(p, t->is_out, t->port, t->dt); }

/* Iteration coordinate of dim j of a [batch..., rows, cols] operand of rank r
 * whose row / column dims are row_dim / col_dim: a batch index (>= 0), or
 * -1 (row), -2 (column), -3 (does not fit O's batch dims). */
static int operand_coord(const sd_plan *p, int r, int j, int row_dim, int col_dim) {
    if (j == row_dim) return -1;
    if (j == col_dim) return -2;
    int i = j + p->nb - (r - 2);
    return i >= 0 && i < p->nb ? i : -3;
}

/* Stride `st` and group divisor `g` on dim j of an operand view. */
static bool set_operand_stride(sd_plan *p, int v, int r, int j, int row_dim, int col_dim, int64_t st, int64_t g) {
    sd_view *w = &p->views[v];
    int i = operand_coord(p, r, j, row_dim, col_dim);
    if (i == -3) return st == 0;
    if (g != 1) w->grouped = true;
    if (i == -1) w->rs = st, w->rg = g;
    else if (i == -2) w->cs = st, w->cg = g;
    else w->bs[i] = st, w->bg[i] = g;
    return true;
}

/* A matrix operand [batch..., rows, cols]: its batch dims right-aligned
 * against O's batch dims (broadcast where 1). */
static int matrix_view(sd_plan *p, const sd_tensor *t, int row_dim, int col_dim) {
    if (t->ndims < 2) return -1;
    int v = tensor_view(p, t);
    if (v < 0) return -1;
    for (int j = 0; j < t->ndims; ++j) {
        int i = operand_coord(p, t->ndims, j, row_dim, col_dim);
        if (t->dims[j] == 1) continue;
        if (i >= 0 && t->dims[j] != p->bdims[i]) return -1;
        if (!set_operand_stride(p, v, t->ndims, j, row_dim, col_dim, t->strides[j], 1)) return -1;
    }
    return v;
}

/* An operand of the score chain, broadcast (numpy, right-aligned) into
 * [batch..., S_q, S_kv]. */
static int score_view(sd_plan *p, const sd_tensor *t) {
    int v = tensor_view(p, t);
    if (v < 0) return -1;
    sd_view *w = &p->views[v];
    return pt_sdpa_bcast_strides(t, p->nb, p->bdims, p->sq, p->skv, w->bs, &w->rs, &w->cs) ? v : -1;
}

/* A one-element input (s_kv / s_q of the bottom-right causal mask, dropout
 * seed / offset / probability). */
static int scalar_view(sd_ctx *c, size_t id) {
    sd_tensor t;
    if (!resolve_input(c, id, &t) || !pt_sdpa_one_element(&t)) return -1;
    return tensor_view(c->p, &t);
}

static int ext_score_operand(sd_ctx *c, size_t id) {
    sd_tensor t;
    if (!resolve_input(c, id, &t)) return -1;
    return score_view(c->p, &t);
}

/* A list the plan owns (static scales / zero points) as a view. */
static int konst_view(sd_plan *p, const void *data, size_t bytes, dnnl_data_type_t dt) {
    if (p->nkonst >= SD_MAX_KONST) return -1;
    void *copy = malloc(bytes ? bytes : 1);
    if (!copy) return -1;
    memcpy(copy, data, bytes);
    p->konst[p->nkonst++] = copy;
    int v = new_view(p, false, -1, dt);
    if (v >= 0) p->views[v].konst = copy;
    return v;
}

/* ---- operands (Q, K, V) ----------------------------------------------------- */

/* A MatMul operand traced back to its stored tensor. */
typedef struct {
    sd_tensor t;
    const pt_op *deq; /* Dequantize / DynamicDequantize, or NULL */
    dnnl_data_type_t dts[SD_MAX_DTS];
    int ndts;
} sd_source;

/* port / views → (Dequantize | DynamicDequantize)? → TypeCast* → the MatMul. */
static bool resolve_operand(sd_ctx *c, size_t id, sd_source *s) {
    memset(s, 0, sizeof *s);
    dnnl_data_type_t rev[SD_MAX_DTS];
    int n = 0;
    for (;;) {
        int p = pt_lower_port_of(c->x.in, c->x.nin, id) >= 0 ? -1 : pt_sdpa_producer(&c->x, id);
        const pt_op *op = p >= 0 ? c->x.ops[p] : NULL;
        bool cast = op && op->kind == dnnl_graph_op_type_cast;
        bool deq = op && (op->kind == dnnl_graph_op_dequantize || op->kind == dnnl_graph_op_dynamic_dequantize);
        if (!cast && !deq) break;
        if (op->nout != 1 || op->nin < 1 || n >= SD_MAX_DTS || !single_internal_use(c, id)) return false;
        rev[n++] = op->out[0].data_type;
        c->x.used[p] = true;
        id = op->in[0].id;
        if (deq) {
            s->deq = op;
            break;
        }
    }
    if (!resolve_input(c, id, &s->t)) return false;
    for (int k = 0; k < n; ++k) s->dts[k] = rev[n - 1 - k];
    s->ndts = n;
    if (!s->deq) return is_float3(s->t.dt);
    /* The dequantized tensor is the stored one, element for element. */
    const pt_lt *o = &s->deq->out[0];
    if (o->ndims != s->t.ndims || memcmp(o->dims, s->t.dims, sizeof(int64_t) * (size_t)o->ndims) != 0) return false;
    int bits = pt_dt_bits(s->t.dt);
    return bits == 4 || bits == 8;
}

/* Scales / zero points of a static Dequantize (attributes). */
static bool static_deq_views(sd_plan *p, const pt_op *op, const sd_tensor *t, int row_dim, int col_dim,
                             sd_operand *o) {
    size_t ns = 0, nz = 0;
    const float *sc = pt_op_f32s(op, dnnl_graph_op_attr_scales, &ns);
    const int64_t *zp = pt_op_s64s(op, dnnl_graph_op_attr_zps, &nz);
    if (!sc || ns == 0 || (nz != 0 && nz != ns)) return false;
    const char *qt = pt_op_str(op, dnnl_graph_op_attr_qtype, "per_tensor");
    int axis = -1;
    if (qt && strcmp(qt, "per_channel") == 0) {
        int64_t a = pt_op_s64(op, dnnl_graph_op_attr_axis, 1);
        if (a < 0) a += t->ndims;
        if (a < 0 || a >= t->ndims) return false;
        if ((int64_t)ns != t->dims[a]) return false;
        axis = (int)a;
    } else if (!qt || strcmp(qt, "per_tensor") != 0 || ns != 1) {
        return false;
    }
    o->sc = konst_view(p, sc, ns * sizeof(float), dnnl_f32);
    /* Zero points as s32 when they fit (the kernel's vector dequantization
     * takes s32), else s64. */
    bool fits = nz <= 4096;
    for (size_t i = 0; fits && i < nz; ++i) fits = zp[i] >= INT32_MIN && zp[i] <= INT32_MAX;
    int32_t zp32[4096];
    for (size_t i = 0; fits && i < nz; ++i) zp32[i] = (int32_t)zp[i];
    o->zp = !nz ? -1 : fits ? konst_view(p, zp32, nz * sizeof(int32_t), dnnl_s32)
                            : konst_view(p, zp, nz * sizeof(int64_t), dnnl_s64);
    if (o->sc < 0 || (nz && o->zp < 0)) return false;
    if (axis >= 0 && t->dims[axis] != 1) {
        if (!set_operand_stride(p, o->sc, t->ndims, axis, row_dim, col_dim, 1, 1)) return false;
        if (o->zp >= 0 && !set_operand_stride(p, o->zp, t->ndims, axis, row_dim, col_dim, 1, 1)) return false;
    }
    return true;
}

/* A DynamicDequantize parameter tensor (scales or zero points) as a view
 * over the stored tensor's coordinates. */
static int dynamic_param_view(sd_ctx *c, size_t id, const pt_op *op, const sd_tensor *t, int row_dim, int col_dim,
                              bool is_zp) {
    sd_plan *p = c->p;
    sd_tensor s;
    if (!resolve_input(c, id, &s)) return -1;
    if (!is_zp && !is_float3(s.dt)) return -1;
    int v = tensor_view(p, &s);
    if (v < 0) return -1;
    int64_t n = 1;
    for (int d = 0; d < s.ndims; ++d) n *= s.dims[d];
    const int r = t->ndims;
    const char *qt = pt_op_str(op, dnnl_graph_op_attr_qtype, "per_tensor");
    if (!qt || strcmp(qt, "per_tensor") == 0) return n == 1 ? v : -1;
    if (strcmp(qt, "per_channel") == 0) {
        size_t nax = 0;
        const int64_t *ax = pt_op_s64s(op, dnnl_graph_op_attr_axis, &nax);
        int64_t a = nax ? ax[0] : 1;
        if (nax > 1) return -1;
        if (a < 0) a += r;
        if (a < 0 || a >= r) return -1;
        if (n == 1 && (t->dims[a] == 1 || is_zp)) return v;
        if (s.ndims != 1 || n != t->dims[a]) return -1;
        if (t->dims[a] != 1 && !set_operand_stride(p, v, r, (int)a, row_dim, col_dim, s.strides[0], 1)) return -1;
        return v;
    }
    if (strcmp(qt, "per_group") != 0 || s.ndims != r) return -1;
    int64_t G[DNNL_MAX_NDIMS];
    if (pt_quant_group_sizes(op, r, t->dims, G) != dnnl_success) return -1;
    for (int j = 0; j < r; ++j) {
        if (G[j] < 1 || s.dims[j] * G[j] != t->dims[j]) return -1;
        if (t->dims[j] == 1 || s.dims[j] == 1) continue; /* one group along j */
        if (!set_operand_stride(p, v, r, j, row_dim, col_dim, s.strides[j], G[j])) return -1;
    }
    return v;
}

/* Builds the views of an operand whose rows / columns are dims row_dim /
 * col_dim of its stored tensor. */
static bool operand_views(sd_ctx *c, const sd_source *s, int row_dim, int col_dim, sd_operand *o) {
    sd_plan *p = c->p;
    o->src = matrix_view(p, &s->t, row_dim, col_dim);
    o->sc = o->zp = -1;
    o->ndts = s->ndts;
    memcpy(o->dts, s->dts, sizeof(dnnl_data_type_t) * (size_t)s->ndts);
    if (o->src < 0) return false;
    if (!is_float3(s->ndts ? s->dts[s->ndts - 1] : s->t.dt)) return false;
    if (!s->deq) return true;
    if (s->deq->kind == dnnl_graph_op_dequantize) {
        if (s->deq->nin != 1) return false;
        return static_deq_views(p, s->deq, &s->t, row_dim, col_dim, o);
    }
    if (s->deq->nin < 2 || s->deq->nin > 3) return false;
    o->sc = dynamic_param_view(c, s->deq->in[1].id, s->deq, &s->t, row_dim, col_dim, false);
    if (o->sc < 0) return false;
    if (s->deq->nin == 3) {
        o->zp = dynamic_param_view(c, s->deq->in[2].id, s->deq, &s->t, row_dim, col_dim, true);
        if (o->zp < 0) return false;
    }
    return true;
}

/* ---- transforms ------------------------------------------------------------ */

static bool push_xform(sd_xform *xs, int *n, sd_xform x) {
    if (*n >= SD_MAX_XFORMS) return false;
    xs[(*n)++] = x;
    return true;
}

static sd_xform round_to(dnnl_data_type_t dt) {
    sd_xform x = {.kind = SD_X_ROUND, .dt = dt, .scale = 1.f, .inv = 1.f};
    return x;
}

/* A per-tensor static Quantize / Dequantize as a transform. */
static bool quant_xform(const pt_op *op, sd_xform *x) {
    size_t ns = 0, nz = 0;
    const float *sc = pt_op_f32s(op, dnnl_graph_op_attr_scales, &ns);
    const int64_t *zp = pt_op_s64s(op, dnnl_graph_op_attr_zps, &nz);
    const char *qt = pt_op_str(op, dnnl_graph_op_attr_qtype, "per_tensor");
    if (op->nin != 1 || op->nout != 1 || !sc || ns != 1 || nz > 1 || !qt || strcmp(qt, "per_tensor") != 0)
        return false;
    bool q = op->kind == dnnl_graph_op_quantize;
    if (q && sc[0] == 0.f) return false;
    memset(x, 0, sizeof *x);
    x->kind = q ? SD_X_QUANT : SD_X_DEQUANT;
    x->dt = op->out[0].data_type;
    x->scale = sc[0];
    x->inv = q ? 1.f / sc[0] : 1.f;
    x->has_zp = nz == 1;
    x->zp = nz == 1 ? (float)zp[0] : 0.f;
    return true;
}

/* Where the tensor `lt` (produced inside) ends up: an output port directly,
 * or through StaticReshape / StaticTranspose / Reorder / TypeCast /
 * Quantize.  Appends the transform of every op it passes through. */
static bool resolve_output(sd_ctx *c, const pt_lt *lt, sd_tensor *t) {
    sd_plan *p = c->p;
    if (lt->ndims < 0 || lt->ndims > DNNL_MAX_NDIMS) return false;
    int cons[2];
    int nc = pt_sdpa_consumers(&c->x, lt->id, cons, 2);
    int po = pt_lower_port_of(c->x.out, c->x.nout, lt->id);
    if (po >= 0) {
        if (nc != 0 || !pt_sdpa_port_tensor(&c->x.out[po], true, po, t) || t->ndims != lt->ndims) return false;
        return memcmp(t->dims, lt->dims, sizeof(int64_t) * (size_t)lt->ndims) == 0;
    }
    if (nc != 1) return false;
    const pt_op *op = c->x.ops[cons[0]];
    if (op->nin != 1 || op->nout != 1) return false;
    sd_xform x = round_to(op->out[0].data_type);
    if (op->kind == dnnl_graph_op_quantize && !quant_xform(op, &x)) return false;
    if (!push_xform(p->ox, &p->nox, x)) return false;
    sd_tensor dst;
    if (!resolve_output(c, &op->out[0], &dst)) return false;
    int view = view_through(op, &dst, lt->ndims, lt->dims, true, t);
    if (view == 0) return false;
    if (view < 0) { /* an element-wise op: same dims on both sides */
        if (op->kind != dnnl_graph_op_reorder && op->kind != dnnl_graph_op_type_cast &&
            op->kind != dnnl_graph_op_quantize)
            return false;
        if (dst.ndims != lt->ndims || memcmp(dst.dims, lt->dims, sizeof(int64_t) * (size_t)lt->ndims) != 0)
            return false;
    }
    c->x.used[cons[0]] = true;
    return true;
}

/* ---- score chain ------------------------------------------------------------- */

static bool gen_index_side(const pt_op *gi, bool *col) {
    int r = gi->in[0].ndims;
    int64_t a = pt_op_s64(gi, dnnl_graph_op_attr_axis, 0);
    if (r < 2) return false;
    if (a < 0) a += r;
    if (a == r - 1) *col = true;
    else if (a == r - 2) *col = false;
    else return false;
    return true;
}

/* The implicit causal mask on score tensor `s` read by three ops. */
static bool parse_causal(sd_ctx *c, size_t s, const int *cons, sd_step *st, size_t *next) {
    int gi[3], ngi = 0, sel = -1;
    for (int k = 0; k < 3; ++k) {
        const pt_op *op = c->x.ops[cons[k]];
        if (op->kind == dnnl_graph_op_gen_index && op->nin == 1) gi[ngi++] = cons[k];
        else if (op->kind == dnnl_graph_op_select && sel < 0) sel = cons[k];
        else return false;
    }
    if (ngi != 2 || sel < 0 || gi[0] == gi[1]) return false;
    const pt_op *so = c->x.ops[sel];
    if (so->nin != 3 || so->nout != 1) return false;
    int pos = so->in[1].id == s ? 1 : so->in[2].id == s ? 2 : -1;
    if (pos < 0 || so->in[0].id == s) return false;
    int ge = pt_sdpa_producer(&c->x, so->in[0].id);
    if (ge < 0 || c->x.ops[ge]->kind != dnnl_graph_op_greater_equal || c->x.ops[ge]->nin != 2) return false;
    const pt_op *geo = c->x.ops[ge];
    int gb = pt_sdpa_producer(&c->x, geo->in[1].id);
    if (gb != gi[0] && gb != gi[1]) return false;
    int ga = gb == gi[0] ? gi[1] : gi[0];
    int pa = pt_sdpa_producer(&c->x, geo->in[0].id);
    st->add = st->sub = -1;
    if (pa != ga) {
        const pt_op *sub = pa >= 0 ? c->x.ops[pa] : NULL;
        if (!sub || sub->kind != dnnl_graph_op_subtract || sub->nin != 2) return false;
        int ad = pt_sdpa_producer(&c->x, sub->in[0].id);
        const pt_op *add = ad >= 0 ? c->x.ops[ad] : NULL;
        if (!add || add->kind != dnnl_graph_op_add || add->nin != 2) return false;
        int ipos = pt_sdpa_producer(&c->x, add->in[0].id) == ga   ? 0
                   : pt_sdpa_producer(&c->x, add->in[1].id) == ga ? 1
                                                                  : -1;
        if (ipos < 0) return false;
        st->add = scalar_view(c, add->in[1 - ipos].id);
        st->sub = scalar_view(c, sub->in[1].id);
        if (st->add < 0 || st->sub < 0) return false;
        c->x.used[pa] = c->x.used[ad] = true;
    }
    if (!gen_index_side(c->x.ops[ga], &st->lhs_col) || !gen_index_side(c->x.ops[gb], &st->rhs_col)) return false;
    st->kind = SD_CAUSAL;
    st->dt = so->out[0].data_type;
    st->keep_true = pos == 1;
    st->a = ext_score_operand(c, so->in[3 - pos].id);
    if (st->a < 0) return false;
    c->x.used[ga] = c->x.used[gb] = c->x.used[ge] = c->x.used[sel] = true;
    *next = so->out[0].id;
    return true;
}

/* The score chain from the first MatMul's output to the SoftMax input. */
static bool parse_chain(sd_ctx *c, size_t val, int sm) {
    sd_plan *p = c->p;
    for (;;) {
        if (pt_lower_port_of(c->x.out, c->x.nout, val) >= 0) return false; /* intermediate also leaves */
        int cons[4];
        int nc = pt_sdpa_consumers(&c->x, val, cons, 4);
        if (nc == 1 && cons[0] == sm) return true;
        if (p->nsteps >= SD_MAX_STEPS) return false;
        sd_step *st = &p->steps[p->nsteps++];
        memset(st, 0, sizeof *st);
        st->add = st->sub = st->b = -1;
        if (nc == 3) {
            if (!parse_causal(c, val, cons, st, &val)) return false;
            continue;
        }
        if (nc != 1) return false;
        const pt_op *op = c->x.ops[cons[0]];
        if (op->nout != 1) return false;
        st->dt = op->out[0].data_type;
        switch ((int)op->kind) {
            case dnnl_graph_op_multiply:
            case dnnl_graph_op_add:
            case dnnl_graph_op_divide: {
                if (op->nin != 2) return false;
                int pos = op->in[0].id == val ? 0 : 1;
                if (op->in[pos].id != val || (pos == 1 && op->kind == dnnl_graph_op_divide)) return false;
                st->kind = op->kind == dnnl_graph_op_multiply ? SD_MUL
                           : op->kind == dnnl_graph_op_add    ? SD_ADD
                                                              : SD_DIV;
                st->a = ext_score_operand(c, op->in[1 - pos].id);
                if (st->a < 0 || !is_float3(p->views[st->a].dt)) return false;
                break;
            }
            case dnnl_graph_op_select: {
                if (op->nin != 3 || op->in[0].id == val) return false;
                int pos = op->in[1].id == val ? 1 : op->in[2].id == val ? 2 : -1;
                if (pos < 0) return false;
                st->kind = SD_SELECT;
                st->keep_true = pos == 1;
                st->a = ext_score_operand(c, op->in[0].id);
                st->b = ext_score_operand(c, op->in[3 - pos].id);
                if (st->a < 0 || st->b < 0) return false;
                break;
            }
            case dnnl_graph_op_tanh:
                if (op->nin != 1) return false;
                st->kind = SD_TANH;
                break;
            default: return false;
        }
        c->x.used[cons[0]] = true;
        val = op->out[0].id;
    }
}

/* ---- P path ------------------------------------------------------------------ */

/* Dropout of P: one-element seed / offset / probability inputs, an optional
 * mask output that must leave the partition. */
static bool parse_dropout(sd_ctx *c, const pt_op *op, size_t *mask_id) {
    sd_plan *p = c->p;
    if (p->dropout || op->nin != 4 || op->nout < 1 || op->nout > 2) return false;
    p->dropout = true;
    p->vseed = scalar_view(c, op->in[1].id);
    p->voffset = scalar_view(c, op->in[2].id);
    p->vprob = scalar_view(c, op->in[3].id);
    if (p->vseed < 0 || p->voffset < 0 || p->vprob < 0) return false;
    if (pt_dt_bits(p->views[p->vseed].dt) == 0 || pt_dt_bits(p->views[p->voffset].dt) == 0 ||
        pt_dt_bits(p->views[p->vprob].dt) == 0)
        return false;
    *mask_id = 0;
    if (op->nout == 2) {
        int cons[1];
        if (pt_lower_port_of(c->x.out, c->x.nout, op->out[1].id) < 0 ||
            pt_sdpa_consumers(&c->x, op->out[1].id, cons, 1) != 0)
            return false;
        *mask_id = op->out[1].id;
    }
    return push_xform(p->px, &p->npx, (sd_xform){.kind = SD_X_DROPOUT, .dt = op->out[0].data_type});
}

/* SoftMax → (TypeCast | Quantize | Dequantize | Dropout)* → second MatMul,
 * or the JAX form ... → StaticTranspose (last two dims) → Reorder →[1]
 * MatMul(Vᵀ, Pᵀ), whose output is Oᵀ.  Returns the second MatMul. */
static int parse_p_path(sd_ctx *c, const pt_op *smo, size_t *val_out, bool *ptrans, size_t *mask_id) {
    sd_plan *p = c->p;
    size_t val = smo->out[0].id;
    *ptrans = false;
    *mask_id = 0;
    if (!push_xform(p->px, &p->npx, round_to(smo->out[0].data_type))) return -1;
    for (;;) {
        if (pt_lower_port_of(c->x.out, c->x.nout, val) >= 0) return -1;
        int cons[2];
        if (pt_sdpa_consumers(&c->x, val, cons, 2) != 1) return -1;
        const pt_op *op = c->x.ops[cons[0]];
        if (op->kind == dnnl_graph_op_matmul) {
            *val_out = val;
            return cons[0];
        }
        if (op->nin < 1 || op->nout < 1) return -1;
        if (op->kind == dnnl_graph_op_dropout) {
            if (*ptrans || !parse_dropout(c, op, mask_id)) return -1;
        } else if (op->nin != 1 || op->nout != 1) {
            return -1;
        } else if (op->kind == dnnl_graph_op_type_cast || op->kind == dnnl_graph_op_reorder) {
            if (!push_xform(p->px, &p->npx, round_to(op->out[0].data_type))) return -1;
        } else if (op->kind == dnnl_graph_op_quantize || op->kind == dnnl_graph_op_dequantize) {
            sd_xform x;
            if (!quant_xform(op, &x) || !push_xform(p->px, &p->npx, x)) return -1;
        } else if (op->kind == dnnl_graph_op_static_transpose && !*ptrans) {
            int r = op->in[0].ndims, perm[DNNL_MAX_NDIMS];
            if (r < 2 || !transpose_order(op, r, perm)) return -1;
            for (int k = 0; k < r - 2; ++k)
                if (perm[k] != k) return -1;
            if (perm[r - 2] != r - 1 || perm[r - 1] != r - 2) return -1;
            *ptrans = true;
        } else {
            return -1;
        }
        c->x.used[cons[0]] = true;
        val = op->out[0].id;
    }
}

/* A value that only passes through casts on its way to a Quantize is
 * quantized from f32, unrounded: the int8 patterns' SoftMax (bf16) →
 * TypeCast(f32) → Quantize and MatMul (bf16) → ... → TypeCast(f32) →
 * Quantize are computed so, as the reference computes them (a cast followed
 * by Quantize is not cropped, docs/numerics.md). */
static void drop_rounding_before_quantize(sd_xform *xs, int *n) {
    int w = 0;
    for (int r = 0; r < *n; ++r) {
        if (xs[r].kind == SD_X_ROUND) {
            int q = r;
            while (q < *n && xs[q].kind == SD_X_ROUND) ++q;
            if (q < *n && xs[q].kind == SD_X_QUANT) {
                r = q - 1; /* skip the run of roundings */
                continue;
            }
        }
        xs[w++] = xs[r];
    }
    *n = w;
}

/* ---- the partition ------------------------------------------------------------- */

static pt_status parse(sd_ctx *c) {
    sd_plan *p = c->p;
    const int sm = pt_sdpa_role_op(&c->x, PT_SDPA_SOFTMAX), mm1 = pt_sdpa_role_op(&c->x, PT_SDPA_QK);
    if (sm < 0 || mm1 < 0) return dnnl_unimplemented;
    const pt_op *smo = c->x.ops[sm];
    if (smo->nin != 1 || smo->nout < 1) return dnnl_unimplemented;
    const char *mode = pt_op_str(smo, dnnl_graph_op_attr_mode, "none");
    p->inf_as_zero = mode && strcmp(mode, "inf_as_zero") == 0;
    c->x.used[sm] = true;
    p->vseed = p->voffset = p->vprob = p->vmask = -1;

    size_t val = 0, mask_id = 0;
    bool ptrans = false;
    int mm2 = parse_p_path(c, smo, &val, &ptrans, &mask_id);
    if (mm2 < 0 || c->x.roles[mm2] != PT_SDPA_PV) return dnnl_unimplemented;
    const pt_op *m2 = c->x.ops[mm2];
    const pt_op *m1 = c->x.ops[mm1];
    if (m2->nin != 2 || m1->nin != 2 || m2->in[ptrans ? 1 : 0].id != val || m2->in[ptrans ? 0 : 1].id == val)
        return dnnl_unimplemented;
    bool ta2 = pt_op_bool(m2, dnnl_graph_op_attr_transpose_a, false);
    bool tb2 = pt_op_bool(m2, dnnl_graph_op_attr_transpose_b, false);
    if (ptrans ? tb2 : ta2) return dnnl_unimplemented;
    c->x.used[mm1] = c->x.used[mm2] = true;

    /* Iteration space from O = [batch..., S_q, D_v] (Oᵀ in the JAX form). */
    const pt_lt *o = &m2->out[0], *x = &smo->in[0], *s = &m1->out[0], *pl = &m2->in[ptrans ? 1 : 0];
    if (o->ndims < 2 || x->ndims < 2 || s->ndims < 2 || pl->ndims < 2) return dnnl_unimplemented;
    p->nb = o->ndims - 2;
    p->nbatch = 1;
    for (int i = 0; i < p->nb; ++i) p->nbatch *= (p->bdims[i] = o->dims[i]);
    const int orow = ptrans ? p->nb + 1 : p->nb, ocol = ptrans ? p->nb : p->nb + 1;
    p->sq = o->dims[orow];
    p->dv = o->dims[ocol];
    p->skv = x->dims[x->ndims - 1];
    if (x->dims[x->ndims - 2] != p->sq || s->dims[s->ndims - 2] != p->sq || s->dims[s->ndims - 1] != p->skv ||
        pl->dims[pl->ndims - (ptrans ? 1 : 2)] != p->sq || pl->dims[pl->ndims - (ptrans ? 2 : 1)] != p->skv)
        return dnnl_unimplemented;
    p->s_dt = s->data_type;
    if (p->dropout) {
        /* Dropout numbers P's elements row-major: P must span O's batch dims. */
        if (x->ndims != p->nb + 2) return dnnl_unimplemented;
        for (int i = 0; i < p->nb; ++i)
            if (x->dims[i] != p->bdims[i]) return dnnl_unimplemented;
        if (mask_id) {
            int po = pt_lower_port_of(c->x.out, c->x.nout, mask_id);
            sd_tensor tm;
            if (po < 0 || !pt_sdpa_port_tensor(&c->x.out[po], true, po, &tm) || tm.ndims != x->ndims)
                return dnnl_unimplemented;
            p->vmask = score_view(p, &tm);
            if (p->vmask < 0) return dnnl_unimplemented;
        }
    }

    /* Q [.., S_q, D] (or [.., D, S_q] with transpose_a), K [.., S_kv, D]
     * with transpose_b, else [.., D, S_kv]; V [.., S_kv, D_v], transposed
     * by the second MatMul's transpose_b, or in the JAX form given as
     * Vᵀ [.., D_v, S_kv] unless transpose_a. */
    sd_source sq_, sk_, sv_;
    if (!resolve_operand(c, m1->in[0].id, &sq_) || !resolve_operand(c, m1->in[1].id, &sk_) ||
        !resolve_operand(c, m2->in[ptrans ? 0 : 1].id, &sv_))
        return dnnl_unimplemented;
    const sd_tensor *tq = &sq_.t, *tk = &sk_.t, *tv = &sv_.t;
    if (tq->ndims < 2 || tk->ndims < 2 || tv->ndims < 2) return dnnl_unimplemented;
    bool ta1 = pt_op_bool(m1, dnnl_graph_op_attr_transpose_a, false);
    bool tb1 = pt_op_bool(m1, dnnl_graph_op_attr_transpose_b, false);
    bool vt = ptrans ? !ta2 : tb2; /* V stored as [.., D_v, S_kv] */
    int qr = tq->ndims - (ta1 ? 1 : 2), qd = tq->ndims - (ta1 ? 2 : 1);
    int kr = tk->ndims - (tb1 ? 2 : 1), kd = tk->ndims - (tb1 ? 1 : 2);
    int vr = tv->ndims - (vt ? 1 : 2), vd = tv->ndims - (vt ? 2 : 1);
    p->dqk = tq->dims[qd];
    if (tq->dims[qr] != p->sq || tk->dims[kr] != p->skv || tk->dims[kd] != p->dqk || tv->dims[vr] != p->skv ||
        tv->dims[vd] != p->dv)
        return dnnl_unimplemented;
    if (!operand_views(c, &sq_, qr, qd, &p->q) || !operand_views(c, &sk_, kr, kd, &p->k) ||
        !operand_views(c, &sv_, vr, vd, &p->v))
        return dnnl_unimplemented;

    sd_tensor to;
    if (!push_xform(p->ox, &p->nox, round_to(o->data_type)) || !resolve_output(c, o, &to) ||
        to.ndims != o->ndims)
        return dnnl_unimplemented;
    p->vo = matrix_view(p, &to, orow, ocol);
    if (p->vo < 0) return dnnl_unimplemented;

    /* Optional stats output [batch..., S_q, 1]: one writer per element. */
    p->vstats = -1;
    if (smo->nout >= 2) {
        const pt_lt *sl = &smo->out[1];
        int cons[1];
        int po = pt_lower_port_of(c->x.out, c->x.nout, sl->id);
        sd_tensor ts;
        if (po < 0 || pt_sdpa_consumers(&c->x, sl->id, cons, 1) != 0 ||
            !pt_sdpa_port_tensor(&c->x.out[po], true, po, &ts))
            return dnnl_unimplemented;
        if (ts.ndims != p->nb + 2 || ts.dims[p->nb] != p->sq || ts.dims[p->nb + 1] != 1 || ts.dt != dnnl_f32)
            return dnnl_unimplemented;
        for (int i = 0; i < p->nb; ++i)
            if (ts.dims[i] != p->bdims[i]) return dnnl_unimplemented;
        p->vstats = matrix_view(p, &ts, p->nb, p->nb + 1);
        if (p->vstats < 0) return dnnl_unimplemented;
    }

    if (!parse_chain(c, s->id, sm)) return dnnl_unimplemented;
    for (size_t i = 0; i < c->x.nops; ++i)
        if (!c->x.used[i]) return dnnl_unimplemented;
    drop_rounding_before_quantize(p->px, &p->npx);
    drop_rounding_before_quantize(p->ox, &p->nox);

    /* The online softmax normalises at the end, so roundings (and Dropout,
     * which scales the numerator) go to the unnormalised weights; a
     * quantized P needs the final max and sum first: two passes. */
    p->one_pass = true;
    for (int t = 0; t < p->npx; ++t)
        if (p->px[t].kind != SD_X_DROPOUT && p->px[t].kind != SD_X_ROUND) p->one_pass = false;
    return dnnl_success;
}

/* The port dim of extent `extent` and dense stride `stride` (the one a
 * view's rows or columns run along); -1 for an extent of 1, -2 when no dim
 * is (the view merges or splits dims). */
static int port_dim(const pt_lt *lt, int64_t extent, int64_t stride) {
    if (extent == 1) return -1;
    for (int d = 0; d < lt->ndims; ++d)
        if (lt->dims[d] == extent && lt->layout.strides[d] == stride) return d;
    return -2;
}

/* K (or V with is_v) read from panels packed ahead (seed 004 option 2): a
 * constant input given as `any` takes them where the kernel can read them,
 * an input given in an SDPA opaque layout must be the one the kernel would
 * choose.  Reports the port's layout on `fused`. */
static pt_status packed_operand(sd_plan *p, bool is_v, const pt_lt *in, size_t nin, const pt_lower_ctx *lc,
                                pt_fused *fused) {
    const sd_view *v = &p->views[is_v ? p->v.src : p->k.src];
    if (!lc || !lc->in_layout || v->port < 0 || v->is_out || (size_t)v->port >= nin) return dnnl_success;
    const size_t given = lc->in_layout[v->port];
    if (given == 0) return dnnl_success;
    const pt_lt *lt = &in[v->port];
    const pt_gemm_ukernel *uk;
    dnnl_data_type_t dt;
    dnnl_fpmath_mode_t round;
    int64_t sn, sk;
    size_t want = 0;
    pt_sdpa_packed_layout l;
    int n_dim = -2, k_dim = -2;
    if (lt->ndims <= SD_MAX_BATCH && pt_sdpa_fwd_packable(p, is_v, lc->fpmath, &uk, &dt, &round, &sn, &sk)) {
        n_dim = port_dim(lt, is_v ? p->dv : p->skv, sn);
        k_dim = port_dim(lt, is_v ? p->skv : p->dqk, sk);
        if (n_dim > -2 && k_dim > -2)
            want = pt_sdpa_packed_register(uk, dt, round, lt->ndims, lt->dims, n_dim, k_dim, &l);
    }
    if (given != SIZE_MAX && given != want)
        return pt_err(dnnl_unimplemented, "sdpa: %s given in opaque layout %zu, which the kernel does not read",
                      is_v ? "V" : "K", given);
    if (!want) return dnnl_success; /* `any` resolves to the plain dense layout */
    sd_packed *pk = is_v ? &p->vpk : &p->kpk;
    memset(pk, 0, sizeof *pk);
    pk->on = true;
    pk->layout = want;
    pk->uk = uk;
    pk->ndims = lt->ndims;
    pk->item_bytes = l.item_bytes;
    int64_t acc = 1;
    for (int d = lt->ndims - 1; d >= 0; --d) {
        pk->dims[d] = lt->dims[d];
        pk->dstride[d] = lt->layout.strides[d] > 0 ? lt->layout.strides[d] : 1;
        const bool panel_dim = d == n_dim || d == k_dim;
        pk->istride[d] = panel_dim || lt->dims[d] == 1 ? 0 : acc;
        if (!panel_dim) acc *= lt->dims[d];
    }
    pt_fused_add_packed(fused, false, (size_t)v->port, want);
    return dnnl_success;
}

pt_status pt_lower_sdpa_fwd(const pt_op *const *ops, const int *roles, size_t nops, const pt_lt *in, size_t nin,
                            const pt_lt *out, size_t nout, pt_fused *fused,
                            const pt_lower_ctx *lc) {
    sd_plan *p = calloc(1, sizeof *p);
    bool *used = calloc(nops ? nops : 1, sizeof(bool));
    pt_status st = dnnl_out_of_memory;
    if (p && used) {
        sd_ctx c = {.x = {ops, roles, nops, in, nin, out, nout, used}, .p = p};
        st = parse(&c);
    }
    free(used);
    if (st != dnnl_success) {
        pt_fused tmp = {.state = p};
        pt_sdpa_fwd_release(&tmp);
        return pt_err(st == dnnl_out_of_memory ? st : dnnl_unimplemented,
                      "sdpa: partition form not handled by the fused kernel; running op by op");
    }
    int nthr = 1;
#ifdef _OPENMP
    nthr = omp_get_max_threads();
#endif
    pt_sdpa_fwd_plan_blocks(p, nthr < 1 ? 1 : nthr);
    st = packed_operand(p, false, in, nin, lc, fused);
    if (st == dnnl_success) st = packed_operand(p, true, in, nin, lc, fused);
    if (st != dnnl_success) {
        fused->npacked = 0;
        pt_fused tmp = {.state = p};
        pt_sdpa_fwd_release(&tmp);
        return st;
    }
    pt_verbose(2,
               "info,fused,sdpa_fwd,batch %lld,S_q %lld,S_kv %lld,D %lld,D_v %lld,%s,%d heads per item,scratchpad %zu bytes per thread",
               (long long)p->nbatch, (long long)p->sq, (long long)p->skv, (long long)p->dqk, (long long)p->dv,
               p->one_pass ? "one pass" : "two passes", p->seg, p->thr_bytes);
    fused->run = pt_sdpa_fwd_run;
    fused->release = pt_sdpa_fwd_release;
    fused->state = p;
    fused->scratch_bytes = p->thr_bytes * (size_t)p->nthr;
    return dnnl_success;
}

/* ---- partition-reading helpers (lower_sdpa.h) ---------------------------------- */

bool pt_sdpa_bcast_strides(const pt_sdpa_tensor *t, int nb, const int64_t *bdims, int64_t rows, int64_t cols,
                           int64_t *bs, int64_t *rs, int64_t *cs) {
    const int R = nb + 2;
    for (int j = 0; j < t->ndims; ++j) {
        int i = j + R - t->ndims;
        if (t->dims[j] == 1) continue;
        int64_t want = i < 0 ? -1 : i < nb ? bdims[i] : i == nb ? rows : cols;
        if (t->dims[j] != want) return false;
        if (i < nb) bs[i] = t->strides[j];
        else if (i == nb) *rs = t->strides[j];
        else *cs = t->strides[j];
    }
    return true;
}

int pt_sdpa_role_op(const pt_sdpa_part *x, int role) {
    for (size_t i = 0; i < x->nops; ++i)
        if (x->roles[i] == role) return (int)i;
    return -1;
}

int pt_sdpa_producer(const pt_sdpa_part *x, size_t id) { return pt_lower_producer(x->ops, x->nops, id); }

int pt_sdpa_consumers(const pt_sdpa_part *x, size_t id, int *list, int cap) {
    int n = 0;
    for (size_t i = 0; i < x->nops; ++i)
        for (size_t k = 0; k < x->ops[i]->nin; ++k)
            if (x->ops[i]->in[k].id == id) {
                if (n < cap) list[n] = (int)i;
                ++n;
            }
    return n;
}

bool pt_sdpa_port_tensor(const pt_lt *lt, bool is_out, int port, pt_sdpa_tensor *t) {
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
