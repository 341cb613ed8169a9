/* Input data generation (docs/graph-json.md).  Values are small integers or
 * simple binary fractions so most reference computations are exact; the
 * displacement rules listed there (divisors, scales, masks, dropout parameters,
 * quantized-domain data, gated-MLP sparsity) are applied on top. */
#include "fill.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "dtconv.h"

/* ---- views ---------------------------------------------------------------- */

bool pc_view_has_op(const pc_part_view *pv, size_t op_index) {
    for (size_t k = 0; k < pv->n; ++k)
        if (pv->ops[k] == op_index) return true;
    return false;
}

bool pc_view_produces(const pc_part_view *pv, size_t tid) {
    for (size_t k = 0; k < pv->n; ++k) {
        const pc_op *op = &pv->c->ops[pv->ops[k]];
        for (size_t o = 0; o < op->nout; ++o)
            if (op->out[o].id == tid) return true;
    }
    return false;
}

long pc_view_first_consumer(const pc_part_view *pv, size_t tid, size_t *input_index) {
    for (size_t k = 0; k < pv->n; ++k) {
        const pc_op *op = &pv->c->ops[pv->ops[k]];
        for (size_t i = 0; i < op->nin; ++i)
            if (op->in[i].id == tid) {
                if (input_index) *input_index = i;
                return (long)pv->ops[k];
            }
    }
    return -1;
}

bool pc_view_consumes(const pc_part_view *pv, size_t tid) { return pc_view_first_consumer(pv, tid, NULL) >= 0; }

static size_t count_kind(const pc_part_view *pv, int kind) {
    size_t n = 0;
    for (size_t k = 0; k < pv->n; ++k) n += pv->c->ops[pv->ops[k]].kind == kind;
    return n;
}

/* Is there a path (inside the view) from op `from` to op `to`? */
static bool reaches(const pc_part_view *pv, size_t from, size_t to, int depth) {
    if (from == to) return true;
    if (depth > 64) return false;
    const pc_op *op = &pv->c->ops[from];
    for (size_t o = 0; o < op->nout; ++o)
        for (size_t k = 0; k < pv->n; ++k) {
            const pc_op *m = &pv->c->ops[pv->ops[k]];
            for (size_t i = 0; i < m->nin; ++i)
                if (m->in[i].id == op->out[o].id && reaches(pv, pv->ops[k], to, depth + 1)) return true;
        }
    return false;
}

void pc_view_classify(pc_part_view *pv) {
    pv->sdpa_fwd = pv->sdpa_bwd = pv->gated_mlp = false;
    const pc_case *c = pv->c;
    for (size_t k = 0; k < pv->n && !pv->sdpa_fwd; ++k) {
        if (c->ops[pv->ops[k]].kind != dnnl_graph_op_softmax) continue;
        bool up = false, down = false;
        for (size_t m = 0; m < pv->n; ++m) {
            if (c->ops[pv->ops[m]].kind != dnnl_graph_op_matmul) continue;
            if (reaches(pv, pv->ops[m], pv->ops[k], 0)) up = true;
            if (reaches(pv, pv->ops[k], pv->ops[m], 0)) down = true;
        }
        pv->sdpa_fwd = up && down;
    }
    size_t n_mm = count_kind(pv, dnnl_graph_op_matmul);
    if (!pv->sdpa_fwd && n_mm >= 3 && count_kind(pv, dnnl_graph_op_exp) > 0) {
        for (size_t k = 0; k < pv->n; ++k) {
            const pc_op *op = &c->ops[pv->ops[k]];
            if (op->kind != dnnl_graph_op_exp || op->nin < 1) continue;
            long p = pc_case_producer(c, op->in[0].id);
            if (p >= 0 && c->ops[p].kind == dnnl_graph_op_subtract && pc_view_has_op(pv, (size_t)p)) pv->sdpa_bwd = true;
        }
    }
    if (!pv->sdpa_fwd && !pv->sdpa_bwd && n_mm >= 3 && count_kind(pv, dnnl_graph_op_softmax) == 0) {
        for (size_t a = 0; a < pv->n && !pv->gated_mlp; ++a)
            for (size_t b = a + 1; b < pv->n; ++b) {
                const pc_op *x = &c->ops[pv->ops[a]], *y = &c->ops[pv->ops[b]];
                if (x->kind == dnnl_graph_op_matmul && y->kind == dnnl_graph_op_matmul && x->nin && y->nin &&
                    x->in[0].id == y->in[0].id)
                    pv->gated_mlp = true;
            }
    }
}

/* ---- random numbers --------------------------------------------------------- */

static uint64_t mix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static uint64_t rnd(uint64_t seed, int64_t i) { return mix64(seed ^ mix64((uint64_t)i + 0x51ED27ull)); }

/* Integer in [lo, hi]. */
static float rint_range(uint64_t seed, int64_t i, int lo, int hi) {
    return (float)(lo + (int)(rnd(seed, i) % (uint64_t)(hi - lo + 1)));
}

/* Multiple of `step` in [lo, hi]. */
static float rstep(uint64_t seed, int64_t i, float lo, float hi, float step) {
    int n = (int)floorf((hi - lo) / step + 0.5f);
    return lo + step * (float)(rnd(seed, i) % (uint64_t)(n + 1));
}

static float rset(uint64_t seed, int64_t i, const float *set, int n) { return set[rnd(seed, i) % (uint64_t)n]; }

/* ---- helpers ---------------------------------------------------------------- */

/* Follows data-movement ops (transposes, reshapes, casts, reorders) inside
 * the view to the op that really uses the data. */
static long look_through(const pc_part_view *pv, long op, size_t *idx) {
    const pc_case *c = pv->c;
    for (int guard = 0; op >= 0 && guard < 16; ++guard) {
        int k = c->ops[op].kind;
        if (k != dnnl_graph_op_static_transpose && k != dnnl_graph_op_static_reshape &&
            k != dnnl_graph_op_type_cast && k != dnnl_graph_op_reorder)
            break;
        if (c->ops[op].nout < 1) break;
        size_t ni = 0;
        long next = pc_view_first_consumer(pv, c->ops[op].out[0].id, &ni);
        if (next < 0) break;
        op = next;
        *idx = ni;
    }
    return op;
}

static bool is_positive_domain(int kind) {
    return kind == dnnl_graph_op_log || kind == dnnl_graph_op_sqrt || kind == dnnl_graph_op_sqrt_backward ||
           kind == dnnl_graph_op_pow || kind == dnnl_graph_op_reciprocal;
}

/* Row/column of a dense element along the last two dims. */
static void row_col(const pc_lt *lt, int64_t idx, int64_t *row, int64_t *col) {
    int nd = lt->ndims;
    int64_t cols = nd >= 1 ? lt->dims[nd - 1] : 1;
    int64_t rows = nd >= 2 ? lt->dims[nd - 2] : 1;
    if (cols < 1) cols = 1;
    if (rows < 1) rows = 1;
    *col = idx % cols;
    *row = (idx / cols) % rows;
}

/* The score tensor of an implicit causal mask: input 0 of a GenIndex. */
static bool sdpa_seq_lens(const pc_part_view *pv, int64_t *s_q, int64_t *s_kv) {
    for (size_t k = 0; k < pv->n; ++k) {
        const pc_op *op = &pv->c->ops[pv->ops[k]];
        if (op->kind != dnnl_graph_op_gen_index || op->nin < 1 || op->in[0].ndims < 2) continue;
        *s_q = op->in[0].dims[op->in[0].ndims - 2];
        *s_kv = op->in[0].dims[op->in[0].ndims - 1];
        return true;
    }
    return false;
}

/* Operand K of a MatMul (for keeping sums exact). */
static int64_t matmul_k(const pc_op *op) {
    if (op->nin < 1 || op->in[0].ndims < 1) return 1;
    const pc_lt *s = &op->in[0];
    bool ta = pc_attr_bool(op, dnnl_graph_op_attr_transpose_a, false);
    if (s->ndims == 1) return s->dims[0];
    return ta ? s->dims[s->ndims - 2] : s->dims[s->ndims - 1];
}

/* Channel index of dense element `idx` along `axis`. */
static int64_t channel_of(const pc_lt *lt, int64_t idx, int axis) {
    int64_t inner = 1;
    for (int d = lt->ndims - 1; d > axis; --d) inner *= lt->dims[d] > 0 ? lt->dims[d] : 1;
    int64_t dim = lt->dims[axis] > 0 ? lt->dims[axis] : 1;
    return (idx / inner) % dim;
}

static void quant_range(dnnl_data_type_t dt, int *lo, int *hi) {
    switch (dt) {
        case dnnl_u8: *lo = 0; *hi = 8; break;
        case dnnl_u4: *lo = 0; *hi = 4; break;
        case dnnl_s4: *lo = -2; *hi = 2; break;
        default: *lo = -4; *hi = 4; break;
    }
}

/* ---- the generator -------------------------------------------------------------- */

static void fill_values(const pc_part_view *pv, const pc_lt *lt, float *v, int64_t n) {
    const pc_case *c = pv->c;
    uint64_t seed = mix64((uint64_t)lt->id * 2654435761ull + 12345u);
    dnnl_data_type_t dt = lt->data_type;
    bool sdpa = pv->sdpa_fwd || pv->sdpa_bwd;

    size_t idx0 = 0;
    long op0 = pc_view_first_consumer(pv, lt->id, &idx0);
    size_t idx = idx0;
    long opi = op0 >= 0 ? look_through(pv, op0, &idx) : -1;

    if (dt == dnnl_boolean) {
        /* A padding Select's external condition picks the score operand. */
        if (opi >= 0 && sdpa && c->ops[opi].kind == dnnl_graph_op_select && idx == 0 && c->ops[opi].nin == 3) {
            float pick = pc_view_produces(pv, c->ops[opi].in[1].id) ? 1.f : 0.f;
            for (int64_t i = 0; i < n; ++i) v[i] = pick;
            return;
        }
        for (int64_t i = 0; i < n; ++i) v[i] = (float)(rnd(seed, i) & 1);
        return;
    }
    if (opi < 0) {
        for (int64_t i = 0; i < n; ++i) v[i] = rstep(seed, i, -8.f, 8.f, 0.25f);
        return;
    }
    const pc_op *op = &c->ops[opi];
    int kind = op->kind;

    /* Dropout parameters: seed 123456, offset 1, probability 0.5. */
    if (kind == dnnl_graph_op_dropout && idx >= 1) {
        float val = idx == 1 ? 123456.f : idx == 2 ? 1.f : 0.5f;
        for (int64_t i = 0; i < n; ++i) v[i] = val;
        return;
    }

    /* Gated MLP: the activation shared by the up and gate MatMuls. */
    if (pv->gated_mlp && kind == dnnl_graph_op_matmul && idx == 0) {
        int shared = 0;
        for (size_t k = 0; k < pv->n; ++k) {
            const pc_op *m = &c->ops[pv->ops[k]];
            if (m->kind == dnnl_graph_op_matmul && m->nin && m->in[0].id == lt->id) ++shared;
        }
        if (shared >= 2) {
            static const float tiny[3] = {1.f / 4096.f, 1.f / 8192.f, 1.f / 16384.f};
            int64_t kdim = lt->ndims >= 1 && lt->dims[lt->ndims - 1] > 0 ? lt->dims[lt->ndims - 1] : 1;
            for (int64_t i = 0; i < n; ++i)
                v[i] = (rnd(seed, i) % (uint64_t)kdim) < 3 ? rset(seed ^ 0x77u, i, tiny, 3) : 0.f;
            return;
        }
    }

    /* SDPA scalars and masks. */
    if (sdpa && kind == dnnl_graph_op_select && idx == 2 && op->nin == 3) {
        long cp = pc_case_producer(c, op->in[0].id);
        if (cp >= 0 && pc_view_has_op(pv, (size_t)cp) && c->ops[cp].kind == dnnl_graph_op_greater_equal) {
            for (int64_t i = 0; i < n; ++i) v[i] = -INFINITY; /* implicit causal mask fill */
            return;
        }
    }
    if (sdpa && (kind == dnnl_graph_op_add || kind == dnnl_graph_op_subtract) && dt == dnnl_s32 && n == 1) {
        int64_t s_q = 1, s_kv = 1;
        if (sdpa_seq_lens(pv, &s_q, &s_kv)) {
            v[0] = (float)(kind == dnnl_graph_op_add ? s_kv : s_q); /* bottom-right causal mask */
            return;
        }
    }
    if (sdpa && kind == dnnl_graph_op_add && op->nout == 1) {
        size_t ci = 0;
        long cons = pc_view_first_consumer(pv, op->out[0].id, &ci);
        if (cons >= 0 &&
            (c->ops[cons].kind == dnnl_graph_op_softmax || c->ops[cons].kind == dnnl_graph_op_subtract)) {
            int64_t rows = lt->ndims >= 2 ? lt->dims[lt->ndims - 2] : 1;
            for (int64_t i = 0; i < n; ++i) {
                if (rows <= 1) {
                    v[i] = 0.f; /* padding mask */
                    continue;
                }
                int64_t r, col;
                row_col(lt, i, &r, &col);
                v[i] = (r == rows - 1 || col > r) ? -INFINITY : 0.f; /* causal, last row fully masked */
            }
            return;
        }
    }

    /* Divisors and multipliers reached from outside. */
    if (kind == dnnl_graph_op_divide && idx == 1) {
        static const float div[3] = {2.f, 4.f, 8.f};
        for (int64_t i = 0; i < n; ++i) v[i] = rset(seed, i, div, 3);
        return;
    }
    if (kind == dnnl_graph_op_multiply && op->nin == 2) {
        size_t other = idx == 0 ? 1 : 0;
        if (idx == 1 || pc_view_produces(pv, op->in[other].id)) {
            static const float mul[3] = {0.25f, 0.5f, 1.f};
            for (int64_t i = 0; i < n; ++i) v[i] = rset(seed, i, mul, 3);
            return;
        }
    }

    /* Data entering a Quantize: generated in the quantized domain and pushed
     * back through the scale / zero point so that quantization is exact. */
    if (kind == dnnl_graph_op_quantize && op->nout == 1) {
        dnnl_data_type_t qdt = op->out[0].data_type;
        int lo, hi;
        quant_range(qdt, &lo, &hi);
        const pc_attr *sc = pc_op_attr(op, dnnl_graph_op_attr_scales);
        const pc_attr *zp = pc_op_attr(op, dnnl_graph_op_attr_zps);
        bool per_ch = strcmp(pc_attr_str(op, dnnl_graph_op_attr_qtype, "per_tensor"), "per_channel") == 0;
        int axis = (int)pc_attr_s64(op, dnnl_graph_op_attr_axis, 1);
        if (axis < 0) axis += lt->ndims;
        for (int64_t i = 0; i < n; ++i) {
            int64_t ch = (per_ch && axis >= 0 && axis < lt->ndims) ? channel_of(lt, i, axis) : 0;
            float s = (sc && sc->f && sc->n) ? sc->f[(size_t)ch % sc->n] : 1.f;
            float z = (zp && zp->i && zp->n) ? (float)zp->i[(size_t)ch % zp->n] : 0.f;
            float q = rint_range(seed, i, lo, hi);
            v[i] = (q - z) * s;
        }
        return;
    }
    if (kind == dnnl_graph_op_dequantize && idx == 0) {
        int lo, hi;
        quant_range(dt, &lo, &hi);
        for (int64_t i = 0; i < n; ++i) v[i] = rint_range(seed, i, lo, hi);
        return;
    }
    if (kind == dnnl_graph_op_dynamic_dequantize) {
        if (idx == 0) {
            /* Compressed weights: the MatMul weight range of the type, halved. */
            int lo = -2, hi = 2;
            if (dt == dnnl_u8) lo = 0, hi = 4;
            else if (dt == dnnl_s4) lo = -1, hi = 1;
            else if (dt == dnnl_u4) lo = 0, hi = 2;
            for (int64_t i = 0; i < n; ++i) v[i] = rint_range(seed, i, lo, hi);
        } else if (idx == 1) {
            static const float sc[3] = {0.25f, 0.5f, 1.f};
            for (int64_t i = 0; i < n; ++i) v[i] = rset(seed, i, sc, 3);
        } else {
            int lo = (dt == dnnl_u8 || dt == dnnl_u4) ? 0 : -1, hi = (dt == dnnl_u8 || dt == dnnl_u4) ? 2 : 1;
            for (int64_t i = 0; i < n; ++i) v[i] = rint_range(seed, i, lo, hi);
        }
        return;
    }
    if (kind == dnnl_graph_op_dynamic_quantize) {
        if (idx == 0) {
            for (int64_t i = 0; i < n; ++i) v[i] = rstep(seed, i, -8.f, 8.f, 0.25f);
        } else if (idx == 1) {
            static const float sc[3] = {0.25f, 0.5f, 1.f};
            for (int64_t i = 0; i < n; ++i) v[i] = rset(seed, i, sc, 3);
        } else {
            int lo = dt == dnnl_u8 ? 0 : -2, hi = 2;
            for (int64_t i = 0; i < n; ++i) v[i] = rint_range(seed, i, lo, hi);
        }
        return;
    }

    switch (kind) {
        case dnnl_graph_op_matmul:
        case dnnl_graph_op_convolution:
        case dnnl_graph_op_conv_transpose:
        case dnnl_graph_op_convolution_backward_data:
        case dnnl_graph_op_convolution_backward_weights:
        case dnnl_graph_op_conv_transpose_backward_data:
        case dnnl_graph_op_conv_transpose_backward_weights: {
            if (idx >= 2) {
                for (int64_t i = 0; i < n; ++i) v[i] = rint_range(seed, i, -8, 8);
                return;
            }
            int lo, hi;
            if (dt == dnnl_f32) lo = -16, hi = 16;
            else if (dt == dnnl_u8) lo = 0, hi = 8;
            else if (dt == dnnl_u4) lo = 0, hi = 4;
            else if (dt == dnnl_s4) lo = -2, hi = 2;
            else if (idx == 0 || dt == dnnl_s8) lo = -4, hi = 4;
            else lo = -2, hi = 2;
            /* Sparse source so that f32 sums stay exact (< 2^24). */
            uint64_t keep = 1;
            if (kind == dnnl_graph_op_matmul && idx == 0) {
                double k = (double)matmul_k(op), bound = k * hi * 16.0;
                if (bound > 16777216.0) keep = (uint64_t)ceil(bound / 16777216.0);
            }
            for (int64_t i = 0; i < n; ++i)
                v[i] = (keep > 1 && rnd(seed ^ 0x5a5au, i) % keep) ? 0.f : rint_range(seed, i, lo, hi);
            return;
        }
        case dnnl_graph_op_softmax_backward:
            for (int64_t i = 0; i < n; ++i)
                v[i] = idx == 1 ? rstep(seed, i, 0.f, 1.f, 1.f / 64.f) : rstep(seed, i, -4.f, 4.f, 0.25f);
            return;
        case dnnl_graph_op_log_softmax_backward:
            for (int64_t i = 0; i < n; ++i)
                v[i] = idx == 1 ? rstep(seed, i, -8.f, 0.f, 0.25f) : rstep(seed, i, -4.f, 4.f, 0.25f);
            return;
        case dnnl_graph_op_batch_norm_inference:
        case dnnl_graph_op_batch_norm_forward_training:
        case dnnl_graph_op_batch_norm_backward:
        case dnnl_graph_op_layer_norm:
        case dnnl_graph_op_layer_norm_backward:
        case dnnl_graph_op_group_norm:
        case dnnl_graph_op_rms_norm: {
            /* Role of the input: 's' data, 'g' scale, 'b' shift, 'm' mean, 'v' variance. */
            char role = 's';
            if (kind == dnnl_graph_op_batch_norm_inference) role = "sgbmv"[idx < 5 ? idx : 0];
            else if (kind == dnnl_graph_op_batch_norm_forward_training) role = "smvgb"[idx < 5 ? idx : 0];
            else if (kind == dnnl_graph_op_batch_norm_backward) role = "ssmvg"[idx < 5 ? idx : 0];
            else if (kind == dnnl_graph_op_layer_norm_backward) role = "ssmvgb"[idx < 6 ? idx : 0];
            else role = "sgb"[idx < 3 ? idx : 0];
            for (int64_t i = 0; i < n; ++i) {
                switch (role) {
                    case 'g': v[i] = rstep(seed, i, 0.5f, 2.f, 0.25f); break;
                    case 'b': v[i] = rstep(seed, i, -2.f, 2.f, 0.25f); break;
                    case 'm': v[i] = rstep(seed, i, -2.f, 2.f, 0.25f); break;
                    case 'v': v[i] = rstep(seed, i, 0.25f, 4.f, 0.25f); break;
                    default: v[i] = rstep(seed, i, -8.f, 8.f, 0.125f); break;
                }
            }
            return;
        }
        case dnnl_graph_op_reduce_prod: {
            static const float set[6] = {-1.f, 1.f, 1.f, 1.f, 2.f, 0.5f};
            for (int64_t i = 0; i < n; ++i) v[i] = rset(seed, i, set, 6);
            return;
        }
        case dnnl_graph_op_reduce_l1:
        case dnnl_graph_op_reduce_l2:
        case dnnl_graph_op_reduce_max:
        case dnnl_graph_op_reduce_mean:
        case dnnl_graph_op_reduce_min:
        case dnnl_graph_op_reduce_sum:
        case dnnl_graph_op_max_pool:
        case dnnl_graph_op_max_pool_backward:
        case dnnl_graph_op_avg_pool:
        case dnnl_graph_op_avg_pool_backward:
        case dnnl_graph_op_concat:
        case dnnl_graph_op_gen_index:
            for (int64_t i = 0; i < n; ++i) v[i] = rint_range(seed, i, -8, 8);
            return;
        case dnnl_graph_op_prelu:
        case dnnl_graph_op_prelu_backward:
            for (int64_t i = 0; i < n; ++i)
                v[i] = idx == 1 ? rstep(seed, i, -2.f, 2.f, 0.25f) : rstep(seed, i, -8.f, 8.f, 0.25f);
            return;
        default: break;
    }

    if (pc_kind_is(kind, PC_K_BINARY_DRV) || kind == dnnl_graph_op_squared_difference) {
        /* Binary inputs: integers in [-8, 8], input 0 halved. */
        for (int64_t i = 0; i < n; ++i) {
            float x = rint_range(seed, i, -8, 8);
            v[i] = (idx == 0 && dt != dnnl_s32) ? x * 0.5f : x;
        }
        return;
    }
    if (pc_kind_is(kind, PC_K_ELTWISE_DRV)) {
        bool diff = pc_kind_is(kind, PC_K_BWD) && idx == 1;
        for (int64_t i = 0; i < n; ++i) {
            if (is_positive_domain(kind) && !diff) v[i] = rstep(seed, i, 0.25f, 8.f, 0.25f);
            else if (diff) v[i] = rstep(seed, i, -4.f, 4.f, 0.25f);
            else v[i] = rstep(seed, i, -8.f, 8.f, 0.25f);
        }
        return;
    }
    for (int64_t i = 0; i < n; ++i) v[i] = rstep(seed, i, -8.f, 8.f, 0.25f);
}

void pc_fill_input(const pc_part_view *pv, const pc_lt *lt, float *vals) {
    int64_t n = pc_lt_nelems(lt);
    if (n <= 0) return;
    fill_values(pv, lt, vals, n);
    for (int64_t i = 0; i < n; ++i) vals[i] = pc_round_to(lt->data_type, vals[i]);
}
