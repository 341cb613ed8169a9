/* Fused gated MLP (fusion-patterns.md §4, numerics §18):
 *   out = (act(src·W_gate) ⊙ (src·W_up)) · W_down
 * with any BINARY combine, an optional TypeCast before the down projection
 * and weights that may be DynamicDequantize'd from int4/int8.
 *
 * Work goes by blocks of src rows.  For one row block the threads first
 * compute its hidden rows (gate and up products by hidden-column block,
 * activation and combine applied per block), then the down product by
 * output-column block; scratch is O(row block × (K + hidden)) shared plus
 * O(tile) per thread.  Weights are read tile by tile, int weights
 * dequantized into the tile on the fly.
 *
 * The arithmetic is the op-by-op one, bit for bit: MatMul products are
 * accumulated in double in k order (exact products, as the reference
 * MatMul), rounded to f32, with f32 operands first rounded as the math mode
 * permits; every intermediate is rounded to its declared type; the
 * element-wise ops run through the reference kernels.  A zero src or hidden
 * value is skipped only where its weight row is finite, which leaves the
 * sums unchanged. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "ir/dtype.h"
#include "kernels/ref/ref_kernels.h"
#include "kernels/ref/ref_quant_groups.h"
#include "compile/ref_decode.h" /* op decoding helpers, until this preparation moves to compile/ */
#include "ops/op_schema.h"
#include "partition/pattern_mlp.h"

#define GM_MAX_BATCH DNNL_MAX_NDIMS
#define GM_BM 64                       /* src rows per row block */
#define GM_MB 64                       /* rows per work item (one weight tile serves them all) */
#define GM_NB 64                       /* hidden columns per gate/up work item */
#define GM_KB 128                      /* k rows per gate/up weight tile */
#define GM_JB 64                       /* output columns per down work item */
#define GM_HB 128                      /* hidden rows per down weight tile */
#define GM_COLS 64                     /* max(GM_NB, GM_JB): tile columns */
#define GM_SHARED_CAP (32u << 20)      /* bytes of shared row-block scratch aimed at */
#define GM_ALIGN 64

/* A tensor read or written by the kernel, addressed in the iteration space
 * [output batch dims..., row, column]. */
typedef struct {
    int port;
    dnnl_data_type_t dt;
    int64_t bs[GM_MAX_BATCH]; /* 0 where broadcast */
    int64_t rs, cs;
} gm_view;

/* A MatMul weight seen as [k, n]; for a DynamicDequantize'd weight also its
 * scales / zero points, addressed per group. */
typedef struct {
    gm_view w;
    dnnl_data_type_t op_dt; /* type the MatMul reads (DynamicDequantize output or w.dt) */
    bool quant;
    gm_view sc, zp;         /* zp.port -1: no zero points */
    int64_t gk, gn;         /* group sizes along k and n */
    int64_t bg[GM_MAX_BATCH];
} gm_weight;

typedef enum { GM_ACT_NONE, GM_ACT_UNARY, GM_ACT_SWISH } gm_act;

/* One combine input: MatMul(src, W) → Act?. */
typedef struct {
    gm_weight W;
    bool has_bias;
    gm_view bias;
    dnnl_data_type_t mm_dt; /* MatMul output */
    gm_act act;
    pt_op *act_op;          /* the UNARY op, or the swish Sigmoid */
    pt_op *mul_op;          /* swish Multiply */
    int g_pos;              /* swish: Multiply input that reads the MatMul output */
    dnnl_data_type_t act_dt, mul_dt;
} gm_branch;

typedef struct {
    int nb;
    int64_t bdims[GM_MAX_BATCH];
    int64_t nbatch, M, K, N, O;
    gm_view src; /* rows m, columns k */
    gm_branch br[2];
    pt_op *comb_op;
    dnnl_data_type_t comb_dt;
    bool has_tc;
    dnnl_data_type_t tc_dt;
    dnnl_data_type_t h_dt; /* type the down MatMul reads */
    gm_weight Wd;
    bool has_dbias;
    gm_view dbias;
    dnnl_data_type_t dmm_dt; /* down MatMul output */
    gm_view out;             /* output port */
    int64_t bm;
    int nthr;
} gm_plan;

/* ---- scalar helpers ------------------------------------------------------ */

/* x rounded to bf16 and back (nearest even; NaN stays NaN), inline: it
 * runs once per dequantized weight element. */
static inline float gm_round_bf16(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u) return x;
    u += 0x7fffu + ((u >> 16) & 1u);
    u &= 0xffff0000u;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* x rounded to f16 and back (nearest even, overflow to inf, f16 subnormals
 * on the 2^-24 grid; NaN stays NaN).  Every case is computed and selected
 * without branches: dequantized weights mix the ranges at random. */
static inline float gm_round_f16(float x) {
    uint32_t u, sub;
    memcpy(&u, &x, sizeof u);
    uint32_t a = u & 0x7fffffffu, sign = u & 0x80000000u;
    uint32_t nrm = (u + 0xfffu + ((u >> 13) & 1u)) & ~0x1fffu; /* 10 mantissa bits */
    float m = (fabsf(x) + 0.75f) - 0.75f;                      /* below 2^-14: the 2^-24 grid */
    memcpy(&sub, &m, sizeof sub);
    sub |= sign;
    /* All-ones masks rather than ?: so the compiler keeps it branch-free. */
    uint32_t is_sub = 0u - (uint32_t)(a < 0x38800000u), is_inf = 0u - (uint32_t)(a >= 0x477ff000u);
    uint32_t is_nan = 0u - (uint32_t)(a > 0x7f800000u);
    uint32_t r = (sub & is_sub) | (nrm & ~is_sub);
    r = ((sign | 0x7f800000u) & is_inf) | (r & ~is_inf); /* |x| >= 65520 */
    r = (u & is_nan) | (r & ~is_nan);
    memcpy(&x, &r, sizeof x);
    return x;
}

/* Rounds to a declared intermediate type (identity for f32). */
static inline float gm_round(dnnl_data_type_t dt, float v) {
    switch ((int)dt) {
        case dnnl_bf16: return gm_round_bf16(v);
        case dnnl_f16: return gm_round_f16(v);
        default: return v;
    }
}

/* The down-conversion a non-strict math mode permits on an f32 MatMul
 * operand (as the reference MatMul emulates it). */
static float gm_fpmath_round(dnnl_fpmath_mode_t mode, float v) {
    switch (mode) {
        case dnnl_fpmath_mode_bf16:
        case dnnl_fpmath_mode_any: return gm_round_bf16(v);
        case dnnl_fpmath_mode_f16: return gm_round_f16(v);
        case dnnl_fpmath_mode_tf32: {
            uint32_t u;
            memcpy(&u, &v, sizeof u);
            if ((u & 0x7f800000u) == 0x7f800000u) return v;
            u += 0xfffu + ((u >> 13) & 1u); /* nearest even at 10 mantissa bits */
            u &= ~0x1fffu;
            memcpy(&v, &u, sizeof v);
            return v;
        }
        default: return v;
    }
}

static inline int gm_nibble(const uint8_t *b, int64_t e) {
    uint8_t byte = b[e >> 1];
    return (e & 1) ? byte >> 4 : byte & 0xf;
}

static inline float gm_bf16(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* binary16 → binary32 (exact) without branches, so row loops stay cheap
 * on random data: the magnitude bits moved into f32 position and scaled by
 * 2^112 give normal and subnormal values; inf / NaN get the f32 exponent. */
static inline float gm_f16(uint16_t h) {
    uint32_t u = (uint32_t)(h & 0x7fffu) << 13;
    float f;
    memcpy(&f, &u, sizeof f);
    f *= 0x1p112f;
    memcpy(&u, &f, sizeof u);
    u |= (h & 0x7c00u) == 0x7c00u ? 0x7f800000u : 0u;
    u |= (uint32_t)(h & 0x8000u) << 16;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* dst[i] = element off0 + i·cs of a buffer of type dt, as f32; offs[i] =
 * i·cs must be given when cs != 1. */
static void gm_load_row(const void *base, dnnl_data_type_t dt, int64_t off0, int64_t cs, const int64_t *offs,
                        int n, float *dst) {
    if (cs == 1) {
        switch ((int)dt) {
            case dnnl_f32: memcpy(dst, (const float *)base + off0, sizeof(float) * (size_t)n); return;
            case dnnl_bf16: {
                const uint16_t *q = (const uint16_t *)base + off0;
                for (int i = 0; i < n; ++i) dst[i] = gm_bf16(q[i]);
                return;
            }
            case dnnl_f16: {
                const uint16_t *q = (const uint16_t *)base + off0;
                for (int i = 0; i < n; ++i) dst[i] = gm_f16(q[i]);
                return;
            }
            case dnnl_u8: {
                const uint8_t *q = (const uint8_t *)base + off0;
                for (int i = 0; i < n; ++i) dst[i] = (float)q[i];
                return;
            }
            case dnnl_s8: {
                const int8_t *q = (const int8_t *)base + off0;
                for (int i = 0; i < n; ++i) dst[i] = (float)q[i];
                return;
            }
            case dnnl_u4:
            case dnnl_s4: {
                /* Byte by byte: element e in byte e/2, the low nibble when e is even. */
                const uint8_t *q = base;
                int i = 0;
                if (n > 0 && (off0 & 1)) dst[i++] = (float)(q[off0 >> 1] >> 4);
                for (; i + 1 < n; i += 2) {
                    uint8_t byte = q[(off0 + i) >> 1];
                    dst[i] = (float)(byte & 0xf);
                    dst[i + 1] = (float)(byte >> 4);
                }
                if (i < n) dst[i] = (float)(q[(off0 + i) >> 1] & 0xf);
                if (dt == dnnl_s4)
                    for (int j = 0; j < n; ++j) dst[j] = dst[j] >= 8.f ? dst[j] - 16.f : dst[j];
                return;
            }
            default: break;
        }
    }
    switch ((int)dt) {
        case dnnl_f32:
            for (int i = 0; i < n; ++i) dst[i] = ((const float *)base)[off0 + offs[i]];
            break;
        case dnnl_bf16:
            for (int i = 0; i < n; ++i) dst[i] = gm_bf16(((const uint16_t *)base)[off0 + offs[i]]);
            break;
        case dnnl_f16:
            for (int i = 0; i < n; ++i) dst[i] = gm_f16(((const uint16_t *)base)[off0 + offs[i]]);
            break;
        case dnnl_u8:
            for (int i = 0; i < n; ++i) dst[i] = (float)((const uint8_t *)base)[off0 + offs[i]];
            break;
        case dnnl_s8:
            for (int i = 0; i < n; ++i) dst[i] = (float)((const int8_t *)base)[off0 + offs[i]];
            break;
        case dnnl_u4:
            for (int i = 0; i < n; ++i) dst[i] = (float)gm_nibble(base, off0 + offs[i]);
            break;
        case dnnl_s4:
            for (int i = 0; i < n; ++i) {
                int v = gm_nibble(base, off0 + offs[i]);
                dst[i] = (float)(v >= 8 ? v - 16 : v);
            }
            break;
        default:
            for (int i = 0; i < n; ++i) dst[i] = pt_load_f32(base, dt, off0 + offs[i]);
            break;
    }
}

/* ---- prepare: reading the matched ops ------------------------------------ */

typedef struct {
    const pt_op *const *ops;
    size_t nops;
    const pt_lt *in;
    size_t nin;
    const pt_lt *out;
    size_t nout;
    bool *used;
    gm_plan *p;
} gm_ctx;

static int find_producer(const gm_ctx *c, size_t id) {
    for (size_t i = 0; i < c->nops; ++i)
        for (size_t k = 0; k < c->ops[i]->nout; ++k)
            if (c->ops[i]->out[k].id == id) return (int)i;
    return -1;
}

static int find_port(const pt_lt *ports, size_t n, size_t id) {
    for (size_t i = 0; i < n; ++i)
        if (ports[i].id == id) return (int)i;
    return -1;
}

static bool is_float3(dnnl_data_type_t dt) {
    return dt == dnnl_f32 || dt == dnnl_bf16 || dt == dnnl_f16;
}

static bool same_dims(const pt_lt *a, const pt_lt *b) {
    if (a->ndims != b->ndims || a->ndims < 0) return false;
    for (int d = 0; d < a->ndims; ++d)
        if (a->dims[d] != b->dims[d]) return false;
    return true;
}

/* The input port holding tensor `id`, checked to be strided with the dims
 * the op saw.  -1 when `id` is not a usable port. */
static int input_port(const gm_ctx *c, const pt_lt *seen) {
    int pi = find_port(c->in, c->nin, seen->id);
    if (pi < 0) return -1;
    const pt_lt *lt = &c->in[pi];
    if (lt->layout_type != dnnl_graph_layout_type_strided || !same_dims(lt, seen) ||
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
static bool align_batch(const gm_plan *p, const pt_lt *lt, int64_t *bs) {
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
static bool bias_view(const gm_ctx *c, const pt_op *mm, const pt_lt *dst, gm_view *v) {
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
 * DynamicDequantize on a rank-r weight (opset §1.4.2, as the reference). */
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

/* Input 1 of MatMul `mm` as a [k, n] weight with `K` rows: a port, or a
 * DynamicDequantize of ports inside the partition. */
static bool weight_view(gm_ctx *c, const pt_op *mm, int64_t K, int64_t *N, gm_weight *W) {
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
    for (int j = 0; j < GM_MAX_BATCH; ++j) W->bg[j] = 1;

    int pi = input_port(c, seen);
    const pt_lt *wl;
    if (pi >= 0) {
        wl = &c->in[pi];
    } else {
        int q = find_producer(c, seen->id);
        if (q < 0 || c->used[q]) return false;
        const pt_op *dq = c->ops[q];
        if (dq->kind != dnnl_graph_op_dynamic_dequantize || dq->nin < 2 || dq->nin > 3) return false;
        if (!same_dims(&dq->out[0], seen)) return false;
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
        c->used[q] = true;
    }
    W->w.port = pi;
    W->w.dt = wl->data_type;
    W->w.rs = stride_of(wl, dk);
    W->w.cs = stride_of(wl, dn);
    return align_batch(c->p, wl, W->w.bs);
}

/* The branch feeding combine input `id`: MatMul → (UNARY | swish)?.
 * Returns the MatMul's op index, or -1. */
static int parse_branch(gm_ctx *c, size_t id, gm_branch *b) {
    memset(b, 0, sizeof *b);
    int q = find_producer(c, id);
    if (q < 0 || c->used[q]) return -1;
    const pt_op *op = c->ops[q];
    if (op->kind == dnnl_graph_op_matmul) {
        c->used[q] = true;
        return q;
    }
    if (op->kind == dnnl_graph_op_multiply && op->nin == 2) {
        for (int side = 0; side < 2; ++side) {
            int sg = find_producer(c, op->in[side].id), mm = find_producer(c, op->in[1 - side].id);
            if (sg < 0 || mm < 0 || c->used[sg] || c->used[mm] || sg == mm) continue;
            const pt_op *so = c->ops[sg];
            if (so->kind != dnnl_graph_op_sigmoid || so->nin != 1 || so->in[0].id != op->in[1 - side].id ||
                c->ops[mm]->kind != dnnl_graph_op_matmul)
                continue;
            if (!same_dims(&op->in[0], &op->in[1]) || !same_dims(&op->in[0], &op->out[0])) return -1;
            b->act = GM_ACT_SWISH;
            b->act_op = pt_op_clone(so);
            b->mul_op = pt_op_clone(op);
            b->g_pos = 1 - side;
            b->act_dt = so->out[0].data_type;
            b->mul_dt = op->out[0].data_type;
            c->used[q] = c->used[sg] = c->used[mm] = true;
            return b->act_op && b->mul_op ? mm : -1;
        }
        return -1;
    }
    if (pt_op_is_unary_eltwise(op->kind) && op->nin == 1 && op->kind != dnnl_graph_op_pow &&
        op->kind != dnnl_graph_op_reciprocal) {
        int mm = find_producer(c, op->in[0].id);
        if (mm < 0 || c->used[mm] || c->ops[mm]->kind != dnnl_graph_op_matmul) return -1;
        if (!same_dims(&op->in[0], &op->out[0])) return -1;
        b->act = GM_ACT_UNARY;
        b->act_op = pt_op_clone(op);
        b->act_dt = op->out[0].data_type;
        c->used[q] = c->used[mm] = true;
        return b->act_op ? mm : -1;
    }
    return -1;
}

static bool parse(gm_ctx *c) {
    gm_plan *p = c->p;
    if (c->nout != 1) return false;
    const pt_lt *ol = &c->out[0];
    int d = find_producer(c, ol->id);
    if (d < 0 || c->ops[d]->kind != dnnl_graph_op_matmul || c->ops[d]->nout != 1) return false;
    const pt_op *down = c->ops[d];
    c->used[d] = true;
    if (pt_op_bool(down, dnnl_graph_op_attr_transpose_a, false)) return false;
    if (ol->layout_type != dnnl_graph_layout_type_strided || !same_dims(ol, &down->out[0]) ||
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
    int q = find_producer(c, hl->id);
    if (q < 0) return false;
    if (c->ops[q]->kind == dnnl_graph_op_type_cast) {
        p->has_tc = true;
        p->tc_dt = c->ops[q]->out[0].data_type;
        if (!same_dims(&c->ops[q]->in[0], hl)) return false;
        c->used[q] = true;
        q = find_producer(c, c->ops[q]->in[0].id);
        if (q < 0) return false;
    }
    const pt_op *co = c->ops[q];
    switch ((int)co->kind) {
        case dnnl_graph_op_add:
        case dnnl_graph_op_subtract:
        case dnnl_graph_op_multiply:
        case dnnl_graph_op_divide:
        case dnnl_graph_op_maximum:
        case dnnl_graph_op_minimum: break;
        default: return false;
    }
    if (co->nin != 2 || c->used[q] || !same_dims(&co->out[0], hl) || !same_dims(&co->in[0], hl) ||
        !same_dims(&co->in[1], hl))
        return false;
    c->used[q] = true;
    p->comb_op = pt_op_clone(co);
    p->comb_dt = co->out[0].data_type;
    if (!p->comb_op) return false;

    /* Hidden [hb.., M, N]: its batch dims broadcast into the output's. */
    int rh = hl->ndims;
    if (rh < 2 || rh - 2 > p->nb || hl->dims[rh - 2] != p->M) return false;
    for (int i = 0; i < rh - 2; ++i)
        if (hl->dims[i] != 1 && hl->dims[i] != p->bdims[i + p->nb - (rh - 2)]) return false;
    p->N = hl->dims[rh - 1];

    /* The two branches: same src at input 0, same transpose_a. */
    const pt_op *mm[2];
    for (int s = 0; s < 2; ++s) {
        int m = parse_branch(c, co->in[s].id, &p->br[s]);
        if (m < 0) return false;
        mm[s] = c->ops[m];
        if (mm[s]->nout != 1 || !same_dims(&mm[s]->out[0], hl)) return false;
        p->br[s].mm_dt = mm[s]->out[0].data_type;
    }
    if (mm[0] == mm[1] || mm[0]->in[0].id != mm[1]->in[0].id) return false;
    bool ta = pt_op_bool(mm[0], dnnl_graph_op_attr_transpose_a, false);
    if (pt_op_bool(mm[1], dnnl_graph_op_attr_transpose_a, false) != ta) return false;
    const pt_lt *sl = &mm[0]->in[0];
    int si = input_port(c, sl);
    if (si < 0 || sl->ndims < 2 || !is_float3(sl->data_type) || !same_dims(&mm[1]->in[0], sl)) return false;
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
        int64_t n = -1;
        if (!weight_view(c, mm[s], p->K, &n, &p->br[s].W) || n != p->N) return false;
        if (mm[s]->nin == 3) {
            p->br[s].has_bias = true;
            if (!bias_view(c, mm[s], hl, &p->br[s].bias)) return false;
        }
    }

    /* Down projection: W_down [N, O], optional bias. */
    int64_t o = -1;
    if (!weight_view(c, down, p->N, &o, &p->Wd) || o != p->O) return false;
    if (down->nin == 3) {
        p->has_dbias = true;
        if (!bias_view(c, down, ol, &p->dbias)) return false;
    }
    for (size_t i = 0; i < c->nops; ++i)
        if (!c->used[i]) return false; /* an op this kernel would not compute */
    return true;
}

/* ---- scratch ------------------------------------------------------------- */

typedef struct {
    size_t a, h, shared;                   /* shared: packed src rows, hidden rows */
    size_t acc, tile, fin, fbuf, gath, offs; /* per thread */
    size_t total;
} gm_layout;

static size_t gm_up(size_t x) { return (x + GM_ALIGN - 1) / GM_ALIGN * GM_ALIGN; }

static gm_layout gm_scratch_layout(const gm_plan *p) {
    gm_layout L;
    size_t bm = (size_t)p->bm;
    L.a = 0;
    L.h = gm_up(bm * (size_t)p->K * sizeof(float));
    L.shared = L.h + gm_up(bm * (size_t)p->N * sizeof(float));
    size_t accd = 2 * GM_MB * GM_NB > GM_MB * GM_JB ? 2 * GM_MB * GM_NB : GM_MB * GM_JB;
    size_t tiled = 2 * GM_KB * GM_NB > GM_HB * GM_JB ? 2 * GM_KB * GM_NB : GM_HB * GM_JB;
    size_t finb = 2 * GM_KB > GM_HB ? 2 * GM_KB : GM_HB;
    L.acc = 0;
    L.tile = L.acc + gm_up(accd * sizeof(double));
    L.fin = L.tile + gm_up(tiled * sizeof(float));
    L.fbuf = L.fin + gm_up(finb);
    L.gath = L.fbuf + gm_up(3 * GM_MB * GM_NB * sizeof(float));
    L.offs = L.gath + gm_up(2 * GM_COLS * sizeof(float));
    L.total = L.offs + gm_up(3 * GM_COLS * sizeof(int64_t));
    return L;
}

/* ---- run ----------------------------------------------------------------- */

typedef struct {
    const gm_plan *p;
    const void *const *in; /* input port data */
    void *out;
    dnnl_fpmath_mode_t mode;
    pt_exec_ctx ectx;      /* single-threaded context for the element-wise reference kernels */
} gm_args;

/* Offsets of one output batch index for a weight's data / scales / zps. */
typedef struct {
    int64_t w, s, z;
} gm_woff;

static gm_woff weight_offsets(const gm_weight *W, int nb, const int64_t *bidx) {
    gm_woff o = {0, 0, 0};
    for (int j = 0; j < nb; ++j) {
        o.w += bidx[j] * W->w.bs[j];
        if (W->quant) {
            o.s += bidx[j] / W->bg[j] * W->sc.bs[j];
            o.z += bidx[j] / W->bg[j] * W->zp.bs[j];
        }
    }
    return o;
}

static int64_t view_offset(const gm_view *v, int nb, const int64_t *bidx) {
    int64_t o = 0;
    for (int j = 0; j < nb; ++j) o += bidx[j] * v->bs[j];
    return o;
}

/* Scales or zero points of columns [n0, n0 + nc) on one weight row: `off`
 * addresses the row, `cstride` steps one group along n, `gn` columns share a
 * group.  offs[j] = j·cstride. */
static void load_params(const void *base, dnnl_data_type_t dt, int64_t off, int64_t cstride, int64_t gn,
                        int64_t n0, int nc, const int64_t *offs, float *dst) {
    if (gn == 1) {
        gm_load_row(base, dt, off + n0 * cstride, cstride, offs, nc, dst);
        return;
    }
    for (int j0 = 0; j0 < nc;) {
        int64_t grp = (n0 + j0) / gn;
        int64_t end = (grp + 1) * gn - n0;
        int j1 = end < nc ? (int)end : nc;
        float v = pt_load_f32(base, dt, off + grp * cstride);
        for (int j = j0; j < j1; ++j) dst[j] = v;
        j0 = j1;
    }
}

/* Rounds a row to a declared type (the switch outside the loop keeps it vectorizable). */
static void round_row(dnnl_data_type_t dt, float *x, int n) {
    switch ((int)dt) {
        case dnnl_bf16:
            for (int j = 0; j < n; ++j) x[j] = gm_round_bf16(x[j]);
            break;
        case dnnl_f16:
            for (int j = 0; j < n; ++j) x[j] = gm_round_f16(x[j]);
            break;
        default: break;
    }
}

/* Loads rows [k0, k0 + kc) × columns [n0, n0 + nc) of a weight as the
 * MatMul reads it: dequantized and rounded to the DynamicDequantize output
 * type, then rounded as the math mode permits for an f32 operand.  fin[kk]
 * tells whether row kk is all finite.  `gath` holds 2 × GM_COLS floats,
 * `offs` 3 × GM_COLS offsets. */
static void load_tile(const gm_args *A, const gm_weight *W, gm_woff bo, int64_t k0, int kc, int64_t n0,
                      int nc, float *tile, unsigned char *fin, float *gath, int64_t *offs) {
    const void *wb = A->in[W->w.port];
    const void *sb = W->quant ? A->in[W->sc.port] : NULL;
    const void *zb = W->quant && W->zp.port >= 0 ? A->in[W->zp.port] : NULL;
    int64_t *cw = offs, *cs = offs + GM_COLS, *cz = offs + 2 * GM_COLS;
    float *s = gath, *z = gath + GM_COLS;
    for (int j = 0; j < nc; ++j) {
        cw[j] = j * W->w.cs;
        cs[j] = j * W->sc.cs;
        cz[j] = j * W->zp.cs;
    }
    bool round_op = W->op_dt == dnnl_f32 && A->mode != dnnl_fpmath_mode_strict;
    for (int kk = 0; kk < kc; ++kk) {
        int64_t k = k0 + kk;
        float *x = tile + (size_t)kk * nc;
        gm_load_row(wb, W->w.dt, bo.w + k * W->w.rs + n0 * W->w.cs, W->w.cs, cw, nc, x);
        if (W->quant) {
            int64_t g = k / W->gk;
            load_params(sb, W->sc.dt, bo.s + g * W->sc.rs, W->sc.cs, W->gn, n0, nc, cs, s);
            if (zb) {
                load_params(zb, W->zp.dt, bo.z + g * W->zp.rs, W->zp.cs, W->gn, n0, nc, cz, z);
                for (int j = 0; j < nc; ++j) x[j] = (x[j] - z[j]) * s[j];
            } else {
                for (int j = 0; j < nc; ++j) x[j] *= s[j];
            }
            round_row(W->op_dt, x, nc);
        }
        if (round_op)
            for (int j = 0; j < nc; ++j) x[j] = gm_fpmath_round(A->mode, x[j]);
        uint32_t nonfinite = 0; /* all exponent bits set: inf or NaN */
        for (int j = 0; j < nc; ++j) {
            uint32_t u;
            memcpy(&u, &x[j], sizeof u);
            nonfinite |= (u & 0x7f800000u) == 0x7f800000u;
        }
        fin[kk] = !nonfinite;
    }
}

/* acc[r][j] += Σ_k a[r][k]·tile[k][j] over one tile, in k order. */
static void tile_product(const float *a, int64_t lda, int rows, const float *tile, const unsigned char *fin,
                         int kc, int nc, double *acc) {
    for (int r = 0; r < rows; ++r) {
        const float *ar = a + (size_t)r * lda;
        double *accr = acc + (size_t)r * nc;
        for (int kk = 0; kk < kc; ++kk) {
            float av = ar[kk];
            if (av == 0.f && fin[kk]) continue; /* adds ±0 to a sum that is never -0 */
            double ad = (double)av;
            const float *t = tile + (size_t)kk * nc;
            for (int j = 0; j < nc; ++j) accr[j] += ad * (double)t[j];
        }
    }
}

/* A dense [rows, cols] f32 view of a scratch block (leading dim ld). */
static pt_tview block_view(float *data, int rows, int cols, int ld) {
    pt_tview v;
    memset(&v, 0, sizeof v);
    v.lt.ndims = 2;
    v.lt.dims[0] = rows;
    v.lt.dims[1] = cols;
    v.lt.data_type = dnnl_f32;
    v.lt.layout_type = dnnl_graph_layout_type_strided;
    v.lt.layout.strides[0] = ld;
    v.lt.layout.strides[1] = 1;
    v.data = data;
    return v;
}

static void round_block(float *x, int n, dnnl_data_type_t dt) {
    if (dt == dnnl_f32) return;
    for (int i = 0; i < n; ++i) x[i] = gm_round(dt, x[i]);
}

/* Hidden rows [r0, r0 + rows) × columns [n0, n0 + nc) of the current row
 * block into H (row stride N). */
static pt_status hidden_block(const gm_args *A, const int64_t *bidx, int64_t m_base, const float *Ablk,
                              int r0, int rows, int64_t n0, int nc, float *H, char *buf, const gm_layout *L) {
    const gm_plan *p = A->p;
    double *acc = (double *)(buf + L->acc);
    float *tiles = (float *)(buf + L->tile);
    unsigned char *fin = (unsigned char *)(buf + L->fin);
    float *fb = (float *)(buf + L->fbuf);
    float *gath = (float *)(buf + L->gath);
    int64_t *offs = (int64_t *)(buf + L->offs);
    const int blk = GM_MB * GM_NB;
    memset(acc, 0, sizeof(double) * 2 * (size_t)blk);
    gm_woff wo[2] = {weight_offsets(&p->br[0].W, p->nb, bidx), weight_offsets(&p->br[1].W, p->nb, bidx)};
    for (int64_t k0 = 0; k0 < p->K; k0 += GM_KB) {
        int kc = (int)(p->K - k0 < GM_KB ? p->K - k0 : GM_KB);
        for (int s = 0; s < 2; ++s) {
            float *t = tiles + (size_t)s * GM_KB * GM_NB;
            unsigned char *f = fin + (size_t)s * GM_KB;
            load_tile(A, &p->br[s].W, wo[s], k0, kc, n0, nc, t, f, gath, offs);
            tile_product(Ablk + (size_t)r0 * p->K + k0, p->K, rows, t, f, kc, nc, acc + (size_t)s * blk);
        }
    }
    /* MatMul outputs (bias added in double, as the reference) → branch values. */
    for (int s = 0; s < 2; ++s) {
        const gm_branch *b = &p->br[s];
        float *v = fb + (size_t)s * blk;
        const double *as = acc + (size_t)s * blk;
        int64_t boff = b->has_bias ? view_offset(&b->bias, p->nb, bidx) : 0;
        for (int r = 0; r < rows; ++r)
            for (int j = 0; j < nc; ++j) {
                double x = as[(size_t)r * nc + j];
                if (b->has_bias)
                    x += (double)pt_load_f32(A->in[b->bias.port], b->bias.dt,
                                             boff + (m_base + r0 + r) * b->bias.rs + (n0 + j) * b->bias.cs);
                v[(size_t)r * nc + j] = gm_round(b->mm_dt, (float)x);
            }
        pt_tview vv = block_view(v, rows, nc, nc);
        if (b->act == GM_ACT_UNARY) {
            PT_CHECK(pt_ref_eltwise(b->act_op, &vv, 1, &vv, 1, &A->ectx));
            round_block(v, rows * nc, b->act_dt);
        } else if (b->act == GM_ACT_SWISH) {
            float *t = fb + 2 * (size_t)blk;
            pt_tview tv = block_view(t, rows, nc, nc);
            PT_CHECK(pt_ref_eltwise(b->act_op, &vv, 1, &tv, 1, &A->ectx));
            round_block(t, rows * nc, b->act_dt);
            pt_tview ins[2];
            ins[b->g_pos] = vv;
            ins[1 - b->g_pos] = tv;
            PT_CHECK(pt_ref_binary(b->mul_op, ins, 2, &vv, 1, &A->ectx));
            round_block(v, rows * nc, b->mul_dt);
        }
    }
    pt_tview ins[2] = {block_view(fb, rows, nc, nc), block_view(fb + blk, rows, nc, nc)};
    PT_CHECK(pt_ref_binary(p->comb_op, ins, 2, &ins[0], 1, &A->ectx));
    bool round_h = p->h_dt == dnnl_f32 && A->mode != dnnl_fpmath_mode_strict;
    for (int r = 0; r < rows; ++r) {
        float *hr = H + (size_t)(r0 + r) * p->N + n0;
        const float *cr = fb + (size_t)r * nc;
        for (int j = 0; j < nc; ++j) {
            float x = gm_round(p->comb_dt, cr[j]);
            if (p->has_tc) x = gm_round(p->tc_dt, x);
            hr[j] = round_h ? gm_fpmath_round(A->mode, x) : x;
        }
    }
    return dnnl_success;
}

/* Output rows [r0, r0 + rows) × columns [j0, j0 + jc) of the current row
 * block from its hidden rows H. */
static void down_block(const gm_args *A, const int64_t *bidx, int64_t m_base, const float *H, int r0,
                       int rows, int64_t j0, int jc, char *buf, const gm_layout *L) {
    const gm_plan *p = A->p;
    double *acc = (double *)(buf + L->acc);
    float *tile = (float *)(buf + L->tile);
    unsigned char *fin = (unsigned char *)(buf + L->fin);
    float *gath = (float *)(buf + L->gath);
    int64_t *offs = (int64_t *)(buf + L->offs);
    memset(acc, 0, sizeof(double) * (size_t)rows * jc);
    gm_woff wo = weight_offsets(&p->Wd, p->nb, bidx);
    for (int64_t h0 = 0; h0 < p->N; h0 += GM_HB) {
        int hc = (int)(p->N - h0 < GM_HB ? p->N - h0 : GM_HB);
        load_tile(A, &p->Wd, wo, h0, hc, j0, jc, tile, fin, gath, offs);
        tile_product(H + (size_t)r0 * p->N + h0, p->N, rows, tile, fin, hc, jc, acc);
    }
    int64_t ooff = view_offset(&p->out, p->nb, bidx);
    int64_t boff = p->has_dbias ? view_offset(&p->dbias, p->nb, bidx) : 0;
    for (int r = 0; r < rows; ++r) {
        int64_t m = m_base + r0 + r;
        for (int j = 0; j < jc; ++j) {
            double x = acc[(size_t)r * jc + j];
            if (p->has_dbias)
                x += (double)pt_load_f32(A->in[p->dbias.port], p->dbias.dt,
                                         boff + m * p->dbias.rs + (j0 + j) * p->dbias.cs);
            float v = gm_round(p->dmm_dt, (float)x);
            pt_store_f32(A->out, p->out.dt, ooff + m * p->out.rs + (j0 + j) * p->out.cs, v);
        }
    }
}

static pt_status gm_run(const pt_fused *f, const pt_tview *in, size_t nin, const pt_tview *out, size_t nout,
                        void *scratch, const pt_exec_ctx *ctx) {
    const gm_plan *p = f->state;
    const void *bases[64];
    if (nin > 64 || nout < 1) return pt_err(dnnl_invalid_arguments, "gated_mlp: unexpected port count");
    for (size_t i = 0; i < nin; ++i) bases[i] = in[i].data;
    gm_args A;
    A.p = p;
    A.in = bases;
    A.out = out[0].data;
    A.mode = ctx ? ctx->fpmath : dnnl_fpmath_mode_strict;
    A.ectx.fpmath = A.mode;
    A.ectx.apply_to_int = ctx ? ctx->apply_to_int : 0;
    A.ectx.nthreads = 1;
    if (p->nbatch == 0 || p->M == 0 || p->O == 0) return dnnl_success;
    if (!scratch) return pt_err(dnnl_invalid_arguments, "gated_mlp: no scratchpad");
    const gm_layout L = gm_scratch_layout(p);
    float *Ablk = (float *)((char *)scratch + L.a);
    float *H = (float *)((char *)scratch + L.h);
    char *thr_base = (char *)scratch + L.shared;
    int nthr = p->nthr;
    if (ctx && ctx->nthreads > 0 && ctx->nthreads < nthr) nthr = ctx->nthreads;
    if (nthr < 1) nthr = 1;
    const bool round_a = p->src.dt == dnnl_f32 && A.mode != dnnl_fpmath_mode_strict;
    const int64_t nnb = (p->N + GM_NB - 1) / GM_NB, njb = (p->O + GM_JB - 1) / GM_JB;
    pt_status status = dnnl_success;
#pragma omp parallel num_threads(nthr)
    {
#ifdef _OPENMP
        int tid = omp_get_thread_num();
#else
        int tid = 0;
#endif
        char *buf = thr_base + (size_t)tid * L.total;
        pt_status my = dnnl_success;
        for (int64_t b = 0; b < p->nbatch; ++b) {
            int64_t bidx[GM_MAX_BATCH];
            int64_t rem = b;
            for (int j = p->nb - 1; j >= 0; --j) {
                bidx[j] = rem % p->bdims[j];
                rem /= p->bdims[j];
            }
            int64_t soff = view_offset(&p->src, p->nb, bidx);
            for (int64_t m0 = 0; m0 < p->M; m0 += p->bm) {
                int rows = (int)(p->M - m0 < p->bm ? p->M - m0 : p->bm);
                const int64_t nmb = (rows + GM_MB - 1) / GM_MB;
                /* Packed src rows, as the gate / up MatMuls read them. */
#pragma omp for schedule(static)
                for (int r = 0; r < rows; ++r) {
                    float *ar = Ablk + (size_t)r * p->K;
                    const void *sb = bases[p->src.port];
                    int64_t ro = soff + (m0 + r) * p->src.rs;
                    for (int64_t k = 0; k < p->K; ++k) {
                        float v = pt_load_f32(sb, p->src.dt, ro + k * p->src.cs);
                        ar[k] = round_a ? gm_fpmath_round(A.mode, v) : v;
                    }
                }
#pragma omp for schedule(dynamic, 1)
                for (int64_t w = 0; w < nmb * nnb; ++w) {
                    int r0 = (int)(w / nnb) * GM_MB;
                    int64_t n0 = (w % nnb) * GM_NB;
                    int mr = rows - r0 < GM_MB ? rows - r0 : GM_MB;
                    int nc = (int)(p->N - n0 < GM_NB ? p->N - n0 : GM_NB);
                    pt_status st = hidden_block(&A, bidx, m0, Ablk, r0, mr, n0, nc, H, buf, &L);
                    if (st != dnnl_success) my = st;
                }
#pragma omp for schedule(dynamic, 1)
                for (int64_t w = 0; w < nmb * njb; ++w) {
                    int r0 = (int)(w / njb) * GM_MB;
                    int64_t j0 = (w % njb) * GM_JB;
                    int mr = rows - r0 < GM_MB ? rows - r0 : GM_MB;
                    int jc = (int)(p->O - j0 < GM_JB ? p->O - j0 : GM_JB);
                    down_block(&A, bidx, m0, H, r0, mr, j0, jc, buf, &L);
                }
            }
        }
        if (my != dnnl_success) {
#pragma omp critical(pt_gated_mlp_status)
            status = my;
        }
    }
    return status;
}

static void gm_release(pt_fused *f) {
    gm_plan *p = f->state;
    if (!p) return;
    for (int s = 0; s < 2; ++s) {
        pt_op_free(p->br[s].act_op);
        pt_op_free(p->br[s].mul_op);
    }
    pt_op_free(p->comb_op);
    free(p);
    f->state = NULL;
}

pt_status pt_prepare_gated_mlp(const pt_op *const *ops, size_t nops, const pt_lt *in, size_t nin,
                               const pt_lt *out, size_t nout, pt_fused *fused) {
    gm_plan *p = calloc(1, sizeof *p);
    bool *used = calloc(nops ? nops : 1, sizeof(bool));
    if (!p || !used) {
        free(p);
        free(used);
        return dnnl_out_of_memory;
    }
    gm_ctx c = {.ops = ops, .nops = nops, .in = in, .nin = nin, .out = out, .nout = nout, .used = used, .p = p};
    bool ok = nin <= 64 && parse(&c);
    free(used);
    pt_fused tmp = {.state = p};
    if (!ok) {
        gm_release(&tmp);
        return pt_err(dnnl_unimplemented, "gated_mlp: partition form not handled by the fused kernel; running op by op");
    }
    /* Row block: the shared packed-src and hidden rows stay within a budget. */
    size_t per_row = ((size_t)p->K + (size_t)p->N) * sizeof(float);
    int64_t bm = per_row ? (int64_t)(GM_SHARED_CAP / per_row) : GM_BM;
    if (bm > GM_BM) bm = GM_BM;
    if (bm > p->M) bm = p->M;
    p->bm = bm < 1 ? 1 : bm;
#ifdef _OPENMP
    p->nthr = omp_get_max_threads();
#else
    p->nthr = 1;
#endif
    if (p->nthr < 1) p->nthr = 1;
    gm_layout L = gm_scratch_layout(p);
    fused->run = gm_run;
    fused->release = gm_release;
    fused->state = p;
    fused->scratch_bytes = L.shared + L.total * (size_t)p->nthr;
    return dnnl_success;
}
