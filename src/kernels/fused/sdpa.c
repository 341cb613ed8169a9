/* Fused SDPA forward (fusion-patterns.md §3, numerics §18).  Work is split
 * over (batch..., query block); keys and values are read in blocks, the
 * score chain (scale, masks, soft-cap) is applied per element, and the full
 * S_q × S_kv score matrix never exists.  Two evaluation orders:
 *
 *  - exact (math mode strict): the op-by-op arithmetic, bit for bit.  A
 *    query block keeps its score rows (bq × S_kv floats per thread, bq shrunk
 *    for long sequences); scores are dot products accumulated in double and
 *    rounded to f32 like the reference MatMul, each intermediate is rounded
 *    to its declared type, the softmax takes the max, the sequential f32 sum
 *    and exp(x - max) / sum, P is rounded to its declared type(s), and P·V
 *    accumulates in double in key order.
 *  - online (any other math mode, which permits approximate f32 math):
 *    flash-attention streaming with a running max and sum and a rescaled f32
 *    accumulator; per-thread scratch O(block × head size).
 *
 * prepare() re-reads the matched ops: Q/K/V/mask may reach the ops through
 * StaticReshape / StaticTranspose views of the ports, the output may leave
 * through StaticReshape / StaticTranspose / Reorder, and the JAX form's
 * transposed P·V product (Vᵀ·Pᵀ) is O with swapped strides; all of these
 * become strides.  Anything else (Dropout, layouts a view cannot express) is left to
 * the op-by-op path with dnnl_unimplemented. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "ir/dtype.h"
#include "ops/op_schema.h"
#include "partition/pattern_sdpa.h"

#define SD_MAX_BATCH DNNL_MAX_NDIMS
#define SD_MAX_STEPS 32
#define SD_MAX_VIEWS 72
#define SD_MAX_DTS 8
#define SD_BQ 32          /* query rows per block */
#define SD_BK 64          /* keys per block */
#define SD_ROW_CAP 262144 /* score floats per thread kept by the exact order */

/* A tensor read or written by the kernel, addressed in the iteration space
 * [batch dims of O..., row, column]. */
typedef struct {
    bool is_out; /* output port rather than input port */
    int port;
    dnnl_data_type_t dt;
    int64_t bs[SD_MAX_BATCH]; /* 0 where broadcast */
    int64_t rs, cs;           /* row / column strides (meaning depends on the tensor) */
} sd_view;

typedef enum { SD_MUL, SD_DIV, SD_ADD, SD_SELECT, SD_CAUSAL, SD_TANH } sd_kind;

/* One op (or the causal-mask block) of the score chain. */
typedef struct {
    sd_kind kind;
    dnnl_data_type_t dt; /* declared output type: the value is rounded to it */
    int a;               /* MUL/DIV/ADD: operand; SELECT: condition; CAUSAL: fill */
    int b;               /* SELECT: the other value */
    bool keep_true;      /* SELECT/CAUSAL: the running value is kept where the condition holds */
    bool lhs_col, rhs_col; /* CAUSAL: GreaterEqual sides index columns (else rows) */
    int add, sub;        /* CAUSAL bottom-right: scalar views of s_kv / s_q, -1 when absent */
} sd_step;

typedef struct {
    int nb; /* batch dims of O */
    int64_t bdims[SD_MAX_BATCH];
    int64_t nbatch, sq, skv, dqk, dv;
    sd_view views[SD_MAX_VIEWS];
    int nviews;
    int vq, vk, vv, vo, vstats; /* vstats -1 when absent */
    dnnl_data_type_t s_dt;      /* first MatMul output */
    sd_step steps[SD_MAX_STEPS];
    int nsteps;
    dnnl_data_type_t p_dts[SD_MAX_DTS]; /* SoftMax output, then each TypeCast */
    int np;
    dnnl_data_type_t o_dts[SD_MAX_DTS]; /* second MatMul output ... output port */
    int no;
    bool inf_as_zero;
    int bq, bk;
    int nthr;
    size_t thr_bytes;
} sd_plan;

/* ---- element access ------------------------------------------------------ */

static inline float sd_ld(const void *base, dnnl_data_type_t dt, int64_t off) {
    switch ((int)dt) {
        case dnnl_f32: return ((const float *)base)[off];
        case dnnl_bf16: return pt_bf16_to_f32(((const uint16_t *)base)[off]);
        case dnnl_f16: return pt_f16_to_f32(((const uint16_t *)base)[off]);
        default: return pt_load_f32(base, dt, off);
    }
}

static inline void sd_st(void *base, dnnl_data_type_t dt, int64_t off, float v) {
    switch ((int)dt) {
        case dnnl_f32: ((float *)base)[off] = v; break;
        case dnnl_bf16: ((uint16_t *)base)[off] = pt_f32_to_bf16(v); break;
        case dnnl_f16: ((uint16_t *)base)[off] = pt_f32_to_f16(v); break;
        default: pt_store_f32(base, dt, off, v); break;
    }
}

/* Rounds to a declared intermediate type (identity for f32). */
static inline float sd_round(dnnl_data_type_t dt, float v) {
    switch ((int)dt) {
        case dnnl_bf16: return pt_bf16_to_f32(pt_f32_to_bf16(v));
        case dnnl_f16: return pt_f16_to_f32(pt_f32_to_f16(v));
        default: return v;
    }
}

/* ---- prepare: reading the matched ops ------------------------------------ */

/* A strided tensor as seen by an op, located in a port. */
typedef struct {
    int ndims;
    int64_t dims[DNNL_MAX_NDIMS];
    int64_t strides[DNNL_MAX_NDIMS];
    bool is_out;
    int port;
    dnnl_data_type_t dt;
} sd_tensor;

typedef struct {
    const pt_op *const *ops;
    size_t nops;
    const pt_lt *in;
    size_t nin;
    const pt_lt *out;
    size_t nout;
    bool *used;
    sd_plan *p;
} sd_ctx;

static int find_producer(const sd_ctx *c, size_t id) {
    for (size_t i = 0; i < c->nops; ++i)
        for (size_t k = 0; k < c->ops[i]->nout; ++k)
            if (c->ops[i]->out[k].id == id) return (int)i;
    return -1;
}

/* Consumers of `id` inside the partition, one entry per (op, input) pair. */
static int find_consumers(const sd_ctx *c, size_t id, int *list, int cap) {
    int n = 0;
    for (size_t i = 0; i < c->nops; ++i)
        for (size_t k = 0; k < c->ops[i]->nin; ++k)
            if (c->ops[i]->in[k].id == id) {
                if (n < cap) list[n] = (int)i;
                ++n;
            }
    return n;
}

static int find_port(const pt_lt *ports, size_t n, size_t id) {
    for (size_t i = 0; i < n; ++i)
        if (ports[i].id == id) return (int)i;
    return -1;
}

static bool is_float3(dnnl_data_type_t dt) {
    return dt == dnnl_f32 || dt == dnnl_bf16 || dt == dnnl_f16;
}

static bool from_port(const pt_lt *lt, bool is_out, int port, sd_tensor *t) {
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

/* The tensor `id` as an input of the partition's ops: a port, or a
 * StaticReshape / StaticTranspose view of one. */
static bool resolve_input(sd_ctx *c, size_t id, sd_tensor *t) {
    int pi = find_port(c->in, c->nin, id);
    if (pi >= 0) return from_port(&c->in[pi], false, pi, t);
    int p = find_producer(c, id);
    if (p < 0) return false;
    const pt_op *op = c->ops[p];
    if (op->nin != 1 || op->nout != 1 || find_port(c->out, c->nout, id) >= 0) return false;
    int cons[2];
    if (find_consumers(c, id, cons, 2) != 1) return false;
    sd_tensor src;
    if (!resolve_input(c, op->in[0].id, &src)) return false;
    const pt_lt *o = &op->out[0];
    if (o->ndims < 0 || o->ndims > DNNL_MAX_NDIMS) return false;
    *t = src;
    t->ndims = o->ndims;
    memcpy(t->dims, o->dims, sizeof(int64_t) * (size_t)o->ndims);
    if (op->kind == dnnl_graph_op_static_reshape) {
        if (!view_reshape(&src, o->ndims, o->dims, t->strides)) return false;
    } else if (op->kind == dnnl_graph_op_static_transpose) {
        int perm[DNNL_MAX_NDIMS];
        if (o->ndims != src.ndims || !transpose_order(op, src.ndims, perm)) return false;
        for (int k = 0; k < src.ndims; ++k) {
            if (src.dims[perm[k]] != o->dims[k]) return false;
            t->strides[k] = src.strides[perm[k]];
        }
    } else {
        return false;
    }
    c->used[p] = true;
    return true;
}

/* Where the tensor `lt` (produced inside) ends up: an output port directly,
 * or through StaticReshape / StaticTranspose / Reorder.  Appends every type
 * it passes through to dts. */
static bool resolve_output(sd_ctx *c, const pt_lt *lt, sd_tensor *t, dnnl_data_type_t *dts, int *ndts) {
    if (*ndts >= SD_MAX_DTS || lt->ndims < 0 || lt->ndims > DNNL_MAX_NDIMS) return false;
    dts[(*ndts)++] = lt->data_type;
    int cons[2];
    int nc = find_consumers(c, lt->id, cons, 2);
    int po = find_port(c->out, c->nout, lt->id);
    if (po >= 0) {
        if (nc != 0 || !from_port(&c->out[po], true, po, t) || t->ndims != lt->ndims) return false;
        return memcmp(t->dims, lt->dims, sizeof(int64_t) * (size_t)lt->ndims) == 0;
    }
    if (nc != 1) return false;
    const pt_op *op = c->ops[cons[0]];
    if (op->nin != 1 || op->nout != 1) return false;
    sd_tensor dst;
    if (!resolve_output(c, &op->out[0], &dst, dts, ndts)) return false;
    *t = dst;
    t->ndims = lt->ndims;
    memcpy(t->dims, lt->dims, sizeof(int64_t) * (size_t)lt->ndims);
    if (op->kind == dnnl_graph_op_static_reshape) {
        if (!view_reshape(&dst, lt->ndims, lt->dims, t->strides)) return false;
    } else if (op->kind == dnnl_graph_op_static_transpose) {
        int perm[DNNL_MAX_NDIMS];
        if (dst.ndims != lt->ndims || !transpose_order(op, lt->ndims, perm)) return false;
        for (int k = 0; k < lt->ndims; ++k) {
            if (lt->dims[perm[k]] != dst.dims[k]) return false;
            t->strides[perm[k]] = dst.strides[k];
        }
    } else if (op->kind == dnnl_graph_op_reorder) {
        if (dst.ndims != lt->ndims || memcmp(dst.dims, lt->dims, sizeof(int64_t) * (size_t)lt->ndims) != 0)
            return false;
    } else {
        return false;
    }
    c->used[cons[0]] = true;
    return true;
}

static int new_view(sd_plan *p, const sd_tensor *t) {
    if (p->nviews >= SD_MAX_VIEWS) return -1;
    sd_view *v = &p->views[p->nviews];
    memset(v, 0, sizeof *v);
    v->is_out = t->is_out;
    v->port = t->port;
    v->dt = t->dt;
    return p->nviews++;
}

/* A matrix operand [batch..., rows, cols]: its batch dims right-aligned
 * against O's batch dims (broadcast where 1). */
static int matrix_view(sd_plan *p, const sd_tensor *t, int row_dim, int col_dim) {
    if (t->ndims < 2) return -1;
    int v = new_view(p, t);
    if (v < 0) return -1;
    int tb = t->ndims - 2;
    for (int j = 0; j < tb; ++j) {
        int i = j + p->nb - tb;
        if (t->dims[j] == 1) continue;
        if (i < 0 || t->dims[j] != p->bdims[i]) return -1;
        p->views[v].bs[i] = t->strides[j];
    }
    p->views[v].rs = t->dims[row_dim] == 1 ? 0 : t->strides[row_dim];
    p->views[v].cs = t->dims[col_dim] == 1 ? 0 : t->strides[col_dim];
    return v;
}

/* An operand of the score chain, broadcast (numpy, right-aligned) into
 * [batch..., S_q, S_kv]. */
static int score_view(sd_plan *p, const sd_tensor *t) {
    int v = new_view(p, t);
    if (v < 0) return -1;
    int R = p->nb + 2;
    for (int j = 0; j < t->ndims; ++j) {
        int i = j + R - t->ndims;
        if (t->dims[j] == 1) continue;
        int64_t want = i < 0 ? -1 : i < p->nb ? p->bdims[i] : i == p->nb ? p->sq : p->skv;
        if (t->dims[j] != want) return -1;
        if (i < p->nb) p->views[v].bs[i] = t->strides[j];
        else if (i == p->nb) p->views[v].rs = t->strides[j];
        else p->views[v].cs = t->strides[j];
    }
    return v;
}

/* A one-element input (s_kv / s_q of the bottom-right causal mask). */
static int scalar_view(sd_ctx *c, size_t id) {
    sd_tensor t;
    if (!resolve_input(c, id, &t)) return -1;
    for (int d = 0; d < t.ndims; ++d)
        if (t.dims[d] != 1) return -1;
    return new_view(c->p, &t);
}

static int ext_score_operand(sd_ctx *c, size_t id) {
    sd_tensor t;
    if (!resolve_input(c, id, &t)) return -1;
    return score_view(c->p, &t);
}

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
        const pt_op *op = c->ops[cons[k]];
        if (op->kind == dnnl_graph_op_gen_index && op->nin == 1) gi[ngi++] = cons[k];
        else if (op->kind == dnnl_graph_op_select && sel < 0) sel = cons[k];
        else return false;
    }
    if (ngi != 2 || sel < 0 || gi[0] == gi[1]) return false;
    const pt_op *so = c->ops[sel];
    if (so->nin != 3 || so->nout != 1) return false;
    int pos = so->in[1].id == s ? 1 : so->in[2].id == s ? 2 : -1;
    if (pos < 0 || so->in[0].id == s) return false;
    int ge = find_producer(c, so->in[0].id);
    if (ge < 0 || c->ops[ge]->kind != dnnl_graph_op_greater_equal || c->ops[ge]->nin != 2) return false;
    const pt_op *geo = c->ops[ge];
    int gb = find_producer(c, geo->in[1].id);
    if (gb != gi[0] && gb != gi[1]) return false;
    int ga = gb == gi[0] ? gi[1] : gi[0];
    int pa = find_producer(c, geo->in[0].id);
    st->add = st->sub = -1;
    if (pa != ga) {
        const pt_op *sub = pa >= 0 ? c->ops[pa] : NULL;
        if (!sub || sub->kind != dnnl_graph_op_subtract || sub->nin != 2) return false;
        int ad = find_producer(c, sub->in[0].id);
        const pt_op *add = ad >= 0 ? c->ops[ad] : NULL;
        if (!add || add->kind != dnnl_graph_op_add || add->nin != 2) return false;
        int ipos = find_producer(c, add->in[0].id) == ga ? 0 : find_producer(c, add->in[1].id) == ga ? 1 : -1;
        if (ipos < 0) return false;
        st->add = scalar_view(c, add->in[1 - ipos].id);
        st->sub = scalar_view(c, sub->in[1].id);
        if (st->add < 0 || st->sub < 0) return false;
        c->used[pa] = c->used[ad] = true;
    }
    if (!gen_index_side(c->ops[ga], &st->lhs_col) || !gen_index_side(c->ops[gb], &st->rhs_col)) return false;
    st->kind = SD_CAUSAL;
    st->dt = so->out[0].data_type;
    st->keep_true = pos == 1;
    st->a = ext_score_operand(c, so->in[3 - pos].id);
    if (st->a < 0) return false;
    c->used[ga] = c->used[gb] = c->used[ge] = c->used[sel] = true;
    *next = so->out[0].id;
    return true;
}

/* The score chain from the first MatMul's output to the SoftMax input. */
static bool parse_chain(sd_ctx *c, size_t val, int sm) {
    sd_plan *p = c->p;
    for (;;) {
        if (find_port(c->out, c->nout, val) >= 0) return false; /* intermediate also leaves */
        int cons[4];
        int nc = find_consumers(c, val, cons, 4);
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
        const pt_op *op = c->ops[cons[0]];
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
        c->used[cons[0]] = true;
        val = op->out[0].id;
    }
}

static pt_status parse(sd_ctx *c) {
    sd_plan *p = c->p;
    int sm = -1, nmm = 0, mms[2] = {-1, -1};
    for (size_t i = 0; i < c->nops; ++i) {
        int k = c->ops[i]->kind;
        if (k == dnnl_graph_op_softmax) {
            if (sm >= 0) return dnnl_unimplemented;
            sm = (int)i;
        } else if (k == dnnl_graph_op_matmul) {
            if (nmm == 2) return dnnl_unimplemented;
            mms[nmm++] = (int)i;
        }
    }
    if (sm < 0 || nmm != 2) return dnnl_unimplemented;
    const pt_op *smo = c->ops[sm];
    const char *mode = pt_op_str(smo, dnnl_graph_op_attr_mode, "none");
    p->inf_as_zero = mode && strcmp(mode, "inf_as_zero") == 0;
    c->used[sm] = true;

    /* SoftMax → TypeCast* → second MatMul, or the JAX form: SoftMax →
     * StaticTranspose (last two dims) → Reorder →[1] MatMul(Vᵀ, Pᵀ), whose
     * output is Oᵀ (§3.5). */
    size_t val = smo->out[0].id;
    p->p_dts[p->np++] = smo->out[0].data_type;
    int mm2 = -1;
    bool ptrans = false;
    for (;;) {
        if (find_port(c->out, c->nout, val) >= 0) return dnnl_unimplemented;
        int cons[2];
        if (find_consumers(c, val, cons, 2) != 1) return dnnl_unimplemented;
        const pt_op *op = c->ops[cons[0]];
        if (op->kind == dnnl_graph_op_matmul) {
            mm2 = cons[0];
            break;
        }
        if (op->nin != 1 || op->nout != 1 || p->np >= SD_MAX_DTS) return dnnl_unimplemented;
        if (op->kind == dnnl_graph_op_type_cast) {
            p->p_dts[p->np++] = op->out[0].data_type;
        } else if (op->kind == dnnl_graph_op_static_transpose && !ptrans) {
            int r = op->in[0].ndims, perm[DNNL_MAX_NDIMS];
            if (r < 2 || !transpose_order(op, r, perm)) return dnnl_unimplemented;
            for (int k = 0; k < r - 2; ++k)
                if (perm[k] != k) return dnnl_unimplemented;
            if (perm[r - 2] != r - 1 || perm[r - 1] != r - 2) return dnnl_unimplemented;
            ptrans = true;
        } else if (op->kind != dnnl_graph_op_reorder) {
            return dnnl_unimplemented; /* e.g. Dropout */
        }
        c->used[cons[0]] = true;
        val = op->out[0].id;
    }
    const pt_op *m2 = c->ops[mm2];
    const pt_op *m1 = c->ops[mms[0] == mm2 ? mms[1] : mms[0]];
    if (m2->nin != 2 || m1->nin != 2 || m2->in[ptrans ? 1 : 0].id != val || m2->in[ptrans ? 0 : 1].id == val)
        return dnnl_unimplemented;
    bool ta2 = pt_op_bool(m2, dnnl_graph_op_attr_transpose_a, false);
    bool tb2 = pt_op_bool(m2, dnnl_graph_op_attr_transpose_b, false);
    if (ptrans ? tb2 : ta2) return dnnl_unimplemented;
    c->used[mms[0]] = c->used[mms[1]] = true;

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

    /* Q [.., S_q, D] (or [.., D, S_q] with transpose_a), K [.., S_kv, D]
     * with transpose_b, else [.., D, S_kv]; V [.., S_kv, D_v], transposed
     * by the second MatMul's transpose_b, or in the JAX form given as
     * Vᵀ [.., D_v, S_kv] unless transpose_a. */
    sd_tensor tq, tk, tv, to;
    if (!resolve_input(c, m1->in[0].id, &tq) || !resolve_input(c, m1->in[1].id, &tk) ||
        !resolve_input(c, m2->in[ptrans ? 0 : 1].id, &tv))
        return dnnl_unimplemented;
    if (tq.ndims < 2 || tk.ndims < 2 || tv.ndims < 2) return dnnl_unimplemented;
    if (!is_float3(tq.dt) || !is_float3(tk.dt) || !is_float3(tv.dt)) return dnnl_unimplemented;
    bool ta1 = pt_op_bool(m1, dnnl_graph_op_attr_transpose_a, false);
    bool tb1 = pt_op_bool(m1, dnnl_graph_op_attr_transpose_b, false);
    bool vt = ptrans ? !ta2 : tb2; /* V stored as [.., D_v, S_kv] */
    int qr = tq.ndims - (ta1 ? 1 : 2), qd = tq.ndims - (ta1 ? 2 : 1);
    int kr = tk.ndims - (tb1 ? 2 : 1), kd = tk.ndims - (tb1 ? 1 : 2);
    int vr = tv.ndims - (vt ? 1 : 2), vd = tv.ndims - (vt ? 2 : 1);
    p->dqk = tq.dims[qd];
    if (tq.dims[qr] != p->sq || tk.dims[kr] != p->skv || tk.dims[kd] != p->dqk || tv.dims[vr] != p->skv ||
        tv.dims[vd] != p->dv)
        return dnnl_unimplemented;
    p->vq = matrix_view(p, &tq, qr, qd);
    p->vk = matrix_view(p, &tk, kr, kd);
    p->vv = matrix_view(p, &tv, vr, vd);
    if (!resolve_output(c, o, &to, p->o_dts, &p->no) || to.ndims != o->ndims) return dnnl_unimplemented;
    p->vo = matrix_view(p, &to, orow, ocol);
    if (p->vq < 0 || p->vk < 0 || p->vv < 0 || p->vo < 0) return dnnl_unimplemented;

    /* Optional stats output [batch..., S_q, 1]: one writer per element. */
    p->vstats = -1;
    if (smo->nout >= 2) {
        const pt_lt *sl = &smo->out[1];
        int cons[1];
        int po = find_port(c->out, c->nout, sl->id);
        sd_tensor ts;
        if (po < 0 || find_consumers(c, sl->id, cons, 1) != 0 || !from_port(&c->out[po], true, po, &ts))
            return dnnl_unimplemented;
        if (ts.ndims != p->nb + 2 || ts.dims[p->nb] != p->sq || ts.dims[p->nb + 1] != 1 || ts.dt != dnnl_f32)
            return dnnl_unimplemented;
        for (int i = 0; i < p->nb; ++i)
            if (ts.dims[i] != p->bdims[i]) return dnnl_unimplemented;
        p->vstats = matrix_view(p, &ts, p->nb, p->nb + 1);
        if (p->vstats < 0) return dnnl_unimplemented;
    }

    if (!parse_chain(c, s->id, sm)) return dnnl_unimplemented;
    for (size_t i = 0; i < c->nops; ++i)
        if (!c->used[i]) return dnnl_unimplemented; /* e.g. Dropout */
    return dnnl_success;
}

/* ---- run ----------------------------------------------------------------- */

static inline float causal_side(bool col, int64_t i, int64_t j, bool offset, float add, float sub) {
    int64_t idx = col ? j : i;
    if (!offset) return (float)idx;
    /* Add / Subtract on s32 as the op-by-op path evaluates them: f32, stored s32. */
    int32_t t = pt_f32_to_s32((float)idx + add);
    t = pt_f32_to_s32((float)t - sub);
    return (float)t;
}

typedef struct {
    const sd_plan *p;
    const void *base[SD_MAX_VIEWS];
    float add[SD_MAX_STEPS], sub[SD_MAX_STEPS]; /* causal offsets, read once */
    bool exact;
} sd_args;

/* The score chain for element (i, j) of the batch whose view offsets are boff. */
static inline float apply_steps(const sd_args *A, const int64_t *boff, int64_t i, int64_t j, float x) {
    const sd_plan *p = A->p;
    for (int s = 0; s < p->nsteps; ++s) {
        const sd_step *st = &p->steps[s];
        const sd_view *va = st->a >= 0 ? &p->views[st->a] : NULL;
        int64_t oa = va ? boff[st->a] + i * va->rs + j * va->cs : 0;
        switch (st->kind) {
            case SD_MUL: x = x * sd_ld(A->base[st->a], va->dt, oa); break;
            case SD_DIV: x = x / sd_ld(A->base[st->a], va->dt, oa); break;
            case SD_ADD: x = x + sd_ld(A->base[st->a], va->dt, oa); break;
            case SD_SELECT: {
                const sd_view *vb = &p->views[st->b];
                bool cond = sd_ld(A->base[st->a], va->dt, oa) != 0.f;
                if (cond != st->keep_true)
                    x = sd_ld(A->base[st->b], vb->dt, boff[st->b] + i * vb->rs + j * vb->cs);
                break;
            }
            case SD_CAUSAL: {
                bool off = st->add >= 0;
                float l = causal_side(st->lhs_col, i, j, off, A->add[s], A->sub[s]);
                float r = causal_side(st->rhs_col, i, j, false, 0.f, 0.f);
                if ((l >= r) != st->keep_true) x = sd_ld(A->base[st->a], va->dt, oa);
                break;
            }
            case SD_TANH: x = tanhf(x); break;
        }
        x = sd_round(st->dt, x);
    }
    return x;
}

/* Per-thread scratch layout (byte offsets), shared by both orders. */
typedef struct {
    size_t qf, kt, vf;     /* Q block [bq][D], K block transposed [D][bk], V block [bk][Dv] (f32) */
    size_t orow;           /* one output row [Dv] (f32) */
    size_t dsc, dacc;      /* exact: score accumulators [bk], output accumulators [bq][Dv] (double) */
    size_t srows;          /* exact: score / probability rows [bq][S_kv] */
    size_t sb, acc, m, l;  /* online: scores [bq][bk], accumulators [bq][Dv], row max / sum [bq] */
    size_t total;
} sd_layout;

static size_t sd_take(size_t *at, size_t bytes) {
    size_t off = *at;
    *at += (bytes + 63) / 64 * 64;
    return off;
}

static sd_layout sd_scratch_layout(const sd_plan *p) {
    sd_layout L;
    size_t at = 0, bq = (size_t)p->bq, bk = (size_t)p->bk, D = (size_t)p->dqk, DV = (size_t)p->dv;
    L.qf = sd_take(&at, bq * D * sizeof(float));
    L.kt = sd_take(&at, D * bk * sizeof(float));
    L.vf = sd_take(&at, bk * DV * sizeof(float));
    L.orow = sd_take(&at, DV * sizeof(float));
    size_t common = at;
    L.dsc = sd_take(&at, bk * sizeof(double));
    L.dacc = sd_take(&at, bq * DV * sizeof(double));
    L.srows = sd_take(&at, bq * (size_t)p->skv * sizeof(float));
    size_t exact_end = at;
    at = common;
    L.sb = sd_take(&at, bq * bk * sizeof(float));
    L.acc = sd_take(&at, bq * DV * sizeof(float));
    L.m = sd_take(&at, bq * sizeof(float));
    L.l = sd_take(&at, bq * sizeof(float));
    L.total = at > exact_end ? at : exact_end;
    return L;
}

/* K block (transposed, [d][c]) and optionally V block ([c][d]) as f32. */
static void load_keys(const sd_args *A, const int64_t *boff, int64_t j0, int nk, float *kt, float *vf) {
    const sd_plan *p = A->p;
    if (kt) {
        const sd_view *k = &p->views[p->vk];
        for (int c = 0; c < nk; ++c) {
            int64_t ko = boff[p->vk] + (j0 + c) * k->rs;
            for (int64_t d = 0; d < p->dqk; ++d)
                kt[(size_t)d * p->bk + c] = sd_ld(A->base[p->vk], k->dt, ko + d * k->cs);
        }
    }
    if (vf) {
        const sd_view *v = &p->views[p->vv];
        for (int c = 0; c < nk; ++c) {
            int64_t vo = boff[p->vv] + (j0 + c) * v->rs;
            for (int64_t d = 0; d < p->dv; ++d)
                vf[(size_t)c * p->dv + d] = sd_ld(A->base[p->vv], v->dt, vo + d * v->cs);
        }
    }
}

/* Stores one output row (rounded through the declared types on the way to
 * the port) and its stats. */
static void store_row(const sd_args *A, const int64_t *boff, int64_t i, const float *orow, bool fill, float fillv,
                      float stat) {
    const sd_plan *p = A->p;
    const sd_view *o = &p->views[p->vo];
    const dnnl_data_type_t odt = p->o_dts[p->no - 1];
    int64_t ro = boff[p->vo] + i * o->rs;
    for (int64_t d = 0; d < p->dv; ++d) {
        float v = fill ? fillv : orow[d];
        for (int t = 0; t + 1 < p->no; ++t) v = sd_round(p->o_dts[t], v);
        sd_st((void *)A->base[p->vo], odt, ro + d * o->cs, v);
    }
    if (p->vstats >= 0) {
        const sd_view *sv = &p->views[p->vstats];
        sd_st((void *)A->base[p->vstats], sv->dt, boff[p->vstats] + i * sv->rs, stat);
    }
}

/* Exact order for rows [i0, i0+mq). */
static void block_exact(const sd_args *A, const int64_t *boff, int64_t i0, int mq, char *buf, const sd_layout *L) {
    const sd_plan *p = A->p;
    const int64_t D = p->dqk, DV = p->dv, SKV = p->skv;
    const int bk = p->bk;
    const float *qf = (const float *)(buf + L->qf);
    float *kt = (float *)(buf + L->kt), *vf = (float *)(buf + L->vf), *srows = (float *)(buf + L->srows);
    double *dsc = (double *)(buf + L->dsc), *dacc = (double *)(buf + L->dacc);

    /* Scores: MatMul (double accumulation in d order, f32 result), chain. */
    for (int64_t j0 = 0; j0 < SKV; j0 += bk) {
        int nk = (int)(SKV - j0 < bk ? SKV - j0 : bk);
        load_keys(A, boff, j0, nk, kt, NULL);
        for (int r = 0; r < mq; ++r) {
            for (int c = 0; c < nk; ++c) dsc[c] = 0.0;
            for (int64_t d = 0; d < D; ++d) {
                const double qv = (double)qf[(size_t)r * D + d];
                const float *kd = kt + (size_t)d * bk;
                for (int c = 0; c < nk; ++c) dsc[c] += qv * (double)kd[c];
            }
            float *srow = srows + (size_t)r * SKV + j0;
            for (int c = 0; c < nk; ++c) {
                float x = sd_round(p->s_dt, (float)dsc[c]);
                srow[c] = p->nsteps ? apply_steps(A, boff, i0 + r, j0 + c, x) : x;
            }
        }
    }
    /* SoftMax per row, as the reference kernel: max, f32 sum, exp / sum. */
    float stats[SD_BQ];
    bool masked[SD_BQ];
    for (int r = 0; r < mq; ++r) {
        float *srow = srows + (size_t)r * SKV;
        float m = -INFINITY;
        for (int64_t j = 0; j < SKV; ++j)
            if (srow[j] > m) m = srow[j];
        float sum = 0.f;
        for (int64_t j = 0; j < SKV; ++j) {
            srow[j] = expf(srow[j] - m);
            sum += srow[j];
        }
        masked[r] = p->inf_as_zero && m == -INFINITY;
        /* Fully masked row: stats 0 (§18 item 5). */
        stats[r] = masked[r] ? 0.f : m + logf(sum);
        for (int64_t j = 0; j < SKV; ++j) {
            float pv = masked[r] ? 0.f : srow[j] / sum;
            for (int t = 0; t < p->np; ++t) pv = sd_round(p->p_dts[t], pv);
            srow[j] = pv;
        }
    }
    /* P·V with double accumulation in key order. */
    for (size_t e = 0; e < (size_t)mq * DV; ++e) dacc[e] = 0.0;
    for (int64_t j0 = 0; j0 < SKV; j0 += bk) {
        int nk = (int)(SKV - j0 < bk ? SKV - j0 : bk);
        load_keys(A, boff, j0, nk, NULL, vf);
        for (int r = 0; r < mq; ++r) {
            const float *prow = srows + (size_t)r * SKV + j0;
            double *arow = dacc + (size_t)r * DV;
            for (int c = 0; c < nk; ++c) {
                const double pv = (double)prow[c];
                const float *vr = vf + (size_t)c * DV;
                for (int64_t d = 0; d < DV; ++d) arow[d] += pv * (double)vr[d];
            }
        }
    }
    float *orow = (float *)(buf + L->orow);
    for (int r = 0; r < mq; ++r) {
        for (int64_t d = 0; d < DV; ++d) orow[d] = (float)dacc[(size_t)r * DV + d];
        store_row(A, boff, i0 + r, orow, false, 0.f, stats[r]);
    }
}

/* Online softmax update of one row with a block of scores. */
static inline void online_row(const float *srow, int nk, const float *vf, int64_t dv, float *m, float *l,
                              float *acc) {
    float mx = -INFINITY;
    for (int c = 0; c < nk; ++c)
        if (srow[c] > mx) mx = srow[c];
    float mnew = mx > *m ? mx : *m;
    if (mnew == -INFINITY) return; /* nothing but -inf (or NaN) so far */
    float alpha = expf(*m - mnew);
    float sum = *l * alpha;
    if (alpha != 1.f)
        for (int64_t d = 0; d < dv; ++d) acc[d] *= alpha;
    for (int c = 0; c < nk; ++c) {
        float e = expf(srow[c] - mnew);
        sum += e;
        const float *vr = vf + (size_t)c * dv;
        for (int64_t d = 0; d < dv; ++d) acc[d] += e * vr[d];
    }
    *m = mnew;
    *l = sum;
}

/* Online (flash) order for rows [i0, i0+mq). */
static void block_online(const sd_args *A, const int64_t *boff, int64_t i0, int mq, char *buf,
                         const sd_layout *L) {
    const sd_plan *p = A->p;
    const int64_t D = p->dqk, DV = p->dv, SKV = p->skv;
    const int bk = p->bk;
    const float *qf = (const float *)(buf + L->qf);
    float *kt = (float *)(buf + L->kt), *vf = (float *)(buf + L->vf), *sb = (float *)(buf + L->sb);
    float *acc = (float *)(buf + L->acc), *mrow = (float *)(buf + L->m), *lrow = (float *)(buf + L->l);
    for (int r = 0; r < mq; ++r) mrow[r] = -INFINITY, lrow[r] = 0.f;
    for (size_t e = 0; e < (size_t)mq * DV; ++e) acc[e] = 0.f;
    for (int64_t j0 = 0; j0 < SKV; j0 += bk) {
        int nk = (int)(SKV - j0 < bk ? SKV - j0 : bk);
        load_keys(A, boff, j0, nk, kt, vf);
        for (int r = 0; r < mq; ++r) {
            float *srow = sb + (size_t)r * bk;
            for (int c = 0; c < nk; ++c) srow[c] = 0.f;
            for (int64_t d = 0; d < D; ++d) {
                const float qv = qf[(size_t)r * D + d];
                const float *kd = kt + (size_t)d * bk;
                for (int c = 0; c < nk; ++c) srow[c] += qv * kd[c];
            }
            for (int c = 0; c < nk; ++c) {
                float x = sd_round(p->s_dt, srow[c]);
                srow[c] = p->nsteps ? apply_steps(A, boff, i0 + r, j0 + c, x) : x;
            }
            online_row(srow, nk, vf, DV, &mrow[r], &lrow[r], acc + (size_t)r * DV);
        }
    }
    /* A row without any finite score is fully masked: zeros and stats 0
     * with inf_as_zero or without keys, NaN otherwise (§18 item 5). */
    const float masked = (p->inf_as_zero || SKV == 0) ? 0.f : NAN;
    for (int r = 0; r < mq; ++r) {
        const bool empty = mrow[r] == -INFINITY;
        float *arow = acc + (size_t)r * DV;
        const float inv = 1.f / lrow[r];
        for (int64_t d = 0; d < DV && !empty; ++d) arow[d] *= inv;
        store_row(A, boff, i0 + r, arow, empty, masked, empty ? masked : mrow[r] + logf(lrow[r]));
    }
}

static void sd_block(const sd_args *A, int64_t b, int64_t i0, char *buf, const sd_layout *L) {
    const sd_plan *p = A->p;
    int64_t bidx[SD_MAX_BATCH] = {0}, rem = b;
    for (int i = p->nb - 1; i >= 0; --i) {
        bidx[i] = rem % p->bdims[i];
        rem /= p->bdims[i];
    }
    int64_t boff[SD_MAX_VIEWS];
    for (int v = 0; v < p->nviews; ++v) {
        int64_t off = 0;
        for (int i = 0; i < p->nb; ++i) off += bidx[i] * p->views[v].bs[i];
        boff[v] = off;
    }
    const int mq = (int)(p->sq - i0 < p->bq ? p->sq - i0 : p->bq);
    const sd_view *q = &p->views[p->vq];
    float *qf = (float *)(buf + L->qf);
    for (int r = 0; r < mq; ++r)
        for (int64_t d = 0; d < p->dqk; ++d)
            qf[(size_t)r * p->dqk + d] = sd_ld(A->base[p->vq], q->dt, boff[p->vq] + (i0 + r) * q->rs + d * q->cs);
    if (A->exact) block_exact(A, boff, i0, mq, buf, L);
    else block_online(A, boff, i0, mq, buf, L);
}

static pt_status sd_run(const pt_fused *f, const pt_tview *in, size_t nin, const pt_tview *out, size_t nout,
                        void *scratch, const pt_exec_ctx *ctx) {
    const sd_plan *p = f->state;
    sd_args A;
    A.p = p;
    A.exact = !ctx || ctx->fpmath == dnnl_fpmath_mode_strict;
    for (int v = 0; v < p->nviews; ++v) {
        const sd_view *vw = &p->views[v];
        if ((size_t)vw->port >= (vw->is_out ? nout : nin))
            return pt_err(dnnl_invalid_arguments, "sdpa: port %d not bound", vw->port);
        A.base[v] = vw->is_out ? out[vw->port].data : in[vw->port].data;
    }
    for (int s = 0; s < p->nsteps; ++s) {
        const sd_step *st = &p->steps[s];
        A.add[s] = A.sub[s] = 0.f;
        if (st->kind == SD_CAUSAL && st->add >= 0) {
            A.add[s] = sd_ld(A.base[st->add], p->views[st->add].dt, 0);
            A.sub[s] = sd_ld(A.base[st->sub], p->views[st->sub].dt, 0);
        }
    }
    const int64_t nqb = (p->sq + p->bq - 1) / p->bq;
    const int64_t nwork = p->nbatch * nqb;
    if (nwork == 0 || (p->dv == 0 && p->vstats < 0)) return dnnl_success;
    if (!scratch) return pt_err(dnnl_invalid_arguments, "sdpa: no scratchpad");
    const sd_layout L = sd_scratch_layout(p);
    int nthr = p->nthr;
    if (ctx && ctx->nthreads > 0 && ctx->nthreads < nthr) nthr = ctx->nthreads;
    if ((int64_t)nthr > nwork) nthr = (int)nwork;
    if (nthr < 1) nthr = 1;
#pragma omp parallel num_threads(nthr)
    {
#ifdef _OPENMP
        int tid = omp_get_thread_num();
#else
        int tid = 0;
#endif
        char *buf = (char *)scratch + (size_t)tid * L.total;
#pragma omp for schedule(dynamic, 1)
        for (int64_t w = 0; w < nwork; ++w) sd_block(&A, w / nqb, (w % nqb) * p->bq, buf, &L);
    }
    return dnnl_success;
}

static void sd_release(pt_fused *f) {
    free(f->state);
    f->state = NULL;
}

pt_status pt_prepare_sdpa_fwd(const pt_op *const *ops, size_t nops, const pt_lt *in, size_t nin,
                              const pt_lt *out, size_t nout, pt_fused *fused) {
    sd_plan *p = calloc(1, sizeof *p);
    bool *used = calloc(nops ? nops : 1, sizeof(bool));
    if (!p || !used) {
        free(p);
        free(used);
        return dnnl_out_of_memory;
    }
    sd_ctx c = {.ops = ops, .nops = nops, .in = in, .nin = nin, .out = out, .nout = nout, .used = used, .p = p};
    pt_status st = parse(&c);
    free(used);
    if (st != dnnl_success) {
        free(p);
        return pt_err(st, "sdpa: partition form not handled by the fused kernel; running op by op");
    }
    int64_t bq = p->sq < SD_BQ ? p->sq : SD_BQ;
    if (p->skv > 0 && bq * p->skv > SD_ROW_CAP) bq = SD_ROW_CAP / p->skv;
    p->bq = (int)(bq > 0 ? bq : 1);
    p->bk = (int)(p->skv < SD_BK ? (p->skv > 0 ? p->skv : 1) : SD_BK);
#ifdef _OPENMP
    p->nthr = omp_get_max_threads();
#else
    p->nthr = 1;
#endif
    if (p->nthr < 1) p->nthr = 1;
    p->thr_bytes = sd_scratch_layout(p).total;
    fused->run = sd_run;
    fused->release = sd_release;
    fused->state = p;
    fused->scratch_bytes = p->thr_bytes * (size_t)p->nthr;
    return dnnl_success;
}
