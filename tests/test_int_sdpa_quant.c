/* Quantized and compressed SDPA forward (docs/fusion.md, SDPA):
 * graphs built through the public API must form one partition of the
 * expected row that runs through the fused kernel, and give the results of
 * the debug-policy run (every op alone, reference kernels), bit for bit.
 *
 * Where an int8 pattern casts a narrow value back to f32 right before a
 * Quantize (SoftMax(bf16) → TypeCast(f32) → Quantize, MatMul(bf16) → ... →
 * TypeCast(f32) → Quantize) the fused kernel quantizes the unrounded f32
 * value, as the reference does (docs/numerics.md); the debug run then uses the
 * same graph with those narrow types widened to f32 (the casts become f32
 * Reorders), which is that arithmetic op by op.
 *
 * Shapes are odd on purpose (S_q != S_kv, tails of the 32-row / 64-key
 * blocks, S_kv beyond the kernel's score cache); compressed K / V cover
 * u8 / s8 / u4 / s4 data, per_tensor / per_channel / per_group scales with
 * and without (grouped) zero points, K stored both ways.  Negative graphs
 * (missing required op, mixed or unsupported types, a wrong attribute, an
 * intermediate with an outside consumer) must not form the fused partition
 * and still compute the same values. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ir/dtype.h"
#include "test_graph_util.h"
#include "test_sdpa_tol.h"

typedef tg_graph gdesc;
typedef tg_op op_d;
typedef tg_lt lt_t;

/* ---- graph description ------------------------------------------------------ */

enum { F_RAND, F_MASK, F_BOOL, F_CONST, F_INT, F_SCALE };

static size_t tensor(gdesc *g, dnnl_data_type_t dt, int nd, const int64_t *dims) {
    return tg_tensor(g, dt, nd, dims, NULL);
}

/* F_INT: integers in [lo, hi]; F_SCALE: floats in [lo, hi); F_CONST: lo. */
static size_t tensor_fill(gdesc *g, dnnl_data_type_t dt, int nd, const int64_t *dims, int fill, float lo, float hi) {
    size_t id = tensor(g, dt, nd, dims);
    g->fill[id - 1] = fill;
    g->fv[id - 1] = lo;
    g->fv2[id - 1] = hi;
    return id;
}

static uint32_t rng = 2024u;
static float frand(void) { return (float)(tg_lcg(&rng) & 0xffffff) / 16777216.f; } /* [0, 1) */

typedef struct {
    int fill;
    float lo, hi;
} fill_d;

static float next_value(void *ctx) {
    const fill_d *f = ctx;
    switch (f->fill) {
        case F_MASK: { /* additive mask: finite negatives, some -inf */
            float r = frand();
            return r < 0.1f ? -INFINITY : -4.f * r;
        }
        case F_BOOL: return frand() < 0.7f ? 1.f : 0.f;
        case F_CONST: return f->lo;
        case F_INT: return floorf(f->lo + frand() * (f->hi - f->lo + 1.f));
        case F_SCALE: return f->lo + frand() * (f->hi - f->lo);
        default: return 4.f * frand() - 2.f;
    }
}

/* Inputs are dense; elements in row-major order. */
static void fill_input(const gdesc *g, int t, void *buf) {
    fill_d f = {g->fill[t], (float)g->fv[t], (float)g->fv2[t]};
    tg_fill(&g->lt[t], buf, next_value, &f);
}

/* ---- running a graph -------------------------------------------------------- */

/* Graphs that run through other rows, whose kernels may quantize unrounded
 * values as the reference does and accumulate MatMuls in f32 (the GEMM
 * engine): at most one quantization step / four ulps of a narrow float. */
static double near_tol(double a, const tg_lt *lt) {
    const double ulp = lt->data_type == dnnl_bf16 ? 1.0 / 128 : lt->data_type == dnnl_f16 ? 1.0 / 1024 : 4e-6;
    return pt_dt_is_int(lt->data_type) ? 1.0 : 4 * ulp * (1.0 + fabs(a));
}

/* `fused_eps` > 0: the fused SDPA kernel's rule (test_sdpa_tol.h); else
 * identical values, or with `near` the near tolerance of other rows. */
static void compare(const char *name, const lt_t *lt, const void *ref, const void *got, double fused_eps, bool near) {
    tg_diff d = fused_eps > 0 ? sdpa_check(name, lt, ref, got, fused_eps, 0)
                              : tg_check_values(name, lt, ref, got, near ? near_tol : NULL);
    /* The data must exercise the kernel: not (almost) all zeros. */
    if (d.total >= 16 && d.nonzero * 10 < d.total)
        fprintf(stderr, "  %s: only %lld nonzero outputs\n", name, (long long)d.nonzero);
    CHECK(d.total < 16 || d.nonzero * 10 >= d.total);
}

/* Runs `ref` under the debug policy and `g` under the fusion policy (the
 * two share input ids and data), checks the partitioning and compares. */
static void check_pair(const char *name, const gdesc *g, const gdesc *ref, const char *want_row, bool want_fused,
                       dnnl_fpmath_mode_t mode) {
    bool ok = g->nt == ref->nt;
    CHECK(ok);
    if (!ok) return;
    const tg_graph *sets[2] = {ref, g};
    tg_bufs B;
    tg_bufs_alloc(&B, sets, 2, fill_input);
    void **rbuf = B.set[0], **gbuf = B.set[1];
    tg_run_info ri, fi;
    ok = tg_run(ref, &(tg_run_opts){.policy = dnnl_graph_partition_policy_debug, .reference = true}, rbuf, &ri);
    CHECK(ok);
    tg_run_opts o = {.policy = dnnl_graph_partition_policy_fusion, .part_mode = mode, .part_apply_to_int = 1};
    ok = ok && tg_run(g, &o, gbuf, &fi);
    CHECK(ok);
    if (ok) {
        int nfused = tg_count_fused(&fi, NULL);
        if (want_row) {
            CHECK_EQ_INT(fi.nparts, 1);
            CHECK_EQ_INT(nfused, want_fused ? 1 : 0);
            CHECK(fi.maxrow && strcmp(fi.maxrow, want_row) == 0);
        } else {
            CHECK(fi.nparts > 1);
        }
        if ((want_row && (fi.nparts != 1 || nfused != (want_fused ? 1 : 0) || strcmp(fi.maxrow, want_row) != 0)) ||
            (!want_row && fi.nparts == 1))
            fprintf(stderr, "  %s: %d partitions, %d fused, largest %s\n", name, fi.nparts, nfused,
                    fi.maxrow ? fi.maxrow : "?");
        for (int r = 0; r < g->nres; ++r) {
            size_t t = g->result[r] - 1;
            compare(name, &g->lt[t], rbuf[t], gbuf[t], want_row && want_fused ? sdpa_eps(g, mode) : 0,
                    want_row == NULL);
        }
    }
    tg_bufs_free(&B);
}

/* ---- quantization ops ----------------------------------------------------------- */

static op_d *quant_op(gdesc *g, dnnl_graph_op_kind_t kind, size_t in, size_t out, float scale, int64_t zp,
                      bool with_zp) {
    op_d *o = tg_add(g, kind, 1, &in, 1, &out);
    tg_attr_str(o, dnnl_graph_op_attr_qtype, "per_tensor");
    tg_attr_f32(o, dnnl_graph_op_attr_scales, &scale, 1);
    if (with_zp) tg_attr_s64(o, dnnl_graph_op_attr_zps, &zp, 1);
    return o;
}

static bool is_int8(dnnl_data_type_t dt) { return dt == dnnl_u8 || dt == dnnl_s8; }

/* Range of quantized test data of type dt. */
static void int_range(dnnl_data_type_t dt, float *lo, float *hi) {
    static const struct {
        dnnl_data_type_t dt;
        float lo, hi;
    } ranges[] = {{dnnl_u8, 100, 156}, {dnnl_s8, -30, 30}, {dnnl_u4, 0, 15}, {dnnl_s4, -8, 7}, {dnnl_s32, -5, 5}};
    *lo = -2, *hi = 2;
    for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; ++i)
        if (ranges[i].dt == dt) *lo = ranges[i].lo, *hi = ranges[i].hi;
}

/* A quantized input [dims] of type dt (f8: random floats). */
static size_t qinput(gdesc *g, dnnl_data_type_t dt, int nd, const int64_t *dims) {
    float lo, hi;
    int_range(dt, &lo, &hi);
    return pt_dt_is_float(dt) ? tensor_fill(g, dt, nd, dims, F_RAND, 0, 0)
                              : tensor_fill(g, dt, nd, dims, F_INT, lo, hi);
}

/* ---- int8 / f8 forms ------------------------------------------------------------ */

enum { FORM_X8, FORM_INT8_BF16, FORM_GPT_F32, FORM_GPT_BF16 };
enum { SC_NONE, SC_MUL, SC_DIV };
enum { MK_NONE, MK_ADD, MK_SELECT, MK_ADD_SELECT };
enum {
    NEG_NONE,
    NEG_NO_FINAL_QUANT,
    NEG_MIXED_TYPES,
    NEG_PER_CHANNEL_OUT,
    NEG_F16_CASTS,
    NEG_ESCAPE,
    NEG_SM_AXIS,
    NEG_GPT_SELECT_ELSE, /* GPT Select with the running value at input 2 */
};

typedef struct {
    int form;
    dnnl_data_type_t qdt; /* every quantized tensor */
    int64_t n, h, sq, skv, d, dv;
    int scale, mask;
    bool out_reorder; /* x8: OutReorder before the final Quantize */
    bool out_reshape; /* GPT: StaticReshape instead of Reorder after the transpose */
    bool gpt_quant;   /* GPT: the optional final (TypeCast →) Quantize */
    bool k_dxs;       /* K stored [.., D, S_kv] */
    int neg;
} qcfg;

static qcfg qbase(int form) {
    qcfg c;
    memset(&c, 0, sizeof c);
    c.form = form;
    c.qdt = dnnl_u8;
    c.n = 1, c.h = 2, c.sq = 37, c.skv = 133, c.d = 16, c.dv = 24;
    c.scale = SC_DIV;
    c.mask = MK_ADD;
    c.out_reorder = true;
    c.gpt_quant = true;
    return c;
}

/* Builds the form; `ref` makes the debug-run variant (narrow values cast to
 * f32 before a Quantize are f32 from the start). */
static void build_q(gdesc *g, const qcfg *c, bool ref) {
    memset(g, 0, sizeof *g);
    const bool bf = c->form == FORM_INT8_BF16 || c->form == FORM_GPT_BF16;
    const bool gpt = c->form == FORM_GPT_F32 || c->form == FORM_GPT_BF16;
    const dnnl_data_type_t cdt = c->neg == NEG_F16_CASTS ? dnnl_f16 : dnnl_bf16; /* compute type of bf forms */
    const dnnl_data_type_t fdt = bf ? cdt : dnnl_f32;
    const bool zp = is_int8(c->qdt);
    const int64_t sd[4] = {c->n, c->h, c->sq, c->skv};
    const int64_t qd[4] = {c->n, c->h, c->sq, c->d};
    const int64_t kd[4] = {c->n, c->h, c->k_dxs ? c->d : c->skv, c->k_dxs ? c->skv : c->d};
    const int64_t vd[4] = {c->n, c->h, c->skv, c->dv};
    const int64_t od[4] = {c->n, c->h, c->sq, c->dv};
    const int64_t td[4] = {c->n, c->sq, c->h, c->dv};

    /* Q / K / V: quantized → Dequantize (→ TypeCast). */
    size_t mmin[3];
    const int64_t *dims[3] = {qd, kd, vd};
    const float sc[3] = {0.125f, 0.0625f, 0.25f};
    for (int i = 0; i < 3; ++i) {
        dnnl_data_type_t dt = c->neg == NEG_MIXED_TYPES && i == 1 ? dnnl_s8 : c->qdt;
        size_t x = qinput(g, dt, 4, dims[i]);
        size_t f = tensor(g, dnnl_f32, 4, dims[i]);
        quant_op(g, dnnl_graph_op_dequantize, x, f, sc[i], dt == dnnl_u8 ? 128 : 0, is_int8(dt));
        if (bf) {
            size_t b = tensor(g, cdt, 4, dims[i]);
            tg_add(g, dnnl_graph_op_type_cast, 1, &f, 1, &b);
            f = b;
        }
        mmin[i] = f;
    }
    size_t s = tensor(g, fdt, 4, sd);
    tg_attr_bool(tg_add(g, dnnl_graph_op_matmul, 2, mmin, 1, &s), dnnl_graph_op_attr_transpose_b, !c->k_dxs);

    int64_t one[1] = {1};
    size_t cond = 0, fill = 0;
    if (gpt || c->mask == MK_SELECT || c->mask == MK_ADD_SELECT) {
        cond = tensor_fill(g, dnnl_boolean, 4, (int64_t[]){1, 1, c->sq, c->skv}, F_BOOL, 0, 0);
        fill = tensor_fill(g, fdt, 1, one, F_CONST, -1e4f, 0);
    }
    if (gpt) { /* Select(cond, S, fill) → Divide → Add */
        size_t s1 = tensor(g, fdt, 4, sd);
        tg_add(g, dnnl_graph_op_select, 3,
            c->neg == NEG_GPT_SELECT_ELSE ? (size_t[]){cond, fill, s} : (size_t[]){cond, s, fill}, 1, &s1);
        s = s1;
    }
    if (c->scale != SC_NONE || gpt) {
        /* In the fdt of the scores: a bf16 score divided by an f32 factor is no
         * supported single op, so the debug run could not compute it. */
        size_t f = tensor_fill(g, fdt, 1, one, F_CONST, c->scale == SC_MUL && !gpt ? 0.25f : 4.f, 0);
        size_t s1 = tensor(g, fdt, 4, sd);
        tg_add(g, c->scale == SC_MUL && !gpt ? dnnl_graph_op_multiply : dnnl_graph_op_divide, 2, (size_t[]){s, f}, 1,
            &s1);
        s = s1;
    }
    if (c->mask == MK_ADD || c->mask == MK_ADD_SELECT || gpt) {
        size_t m = tensor_fill(g, fdt, 4, (int64_t[]){c->n, 1, 1, c->skv}, F_MASK, 0, 0);
        size_t s1 = tensor(g, fdt, 4, sd);
        tg_add(g, dnnl_graph_op_add, 2, (size_t[]){m, s}, 1, &s1); /* commuted on purpose */
        s = s1;
    }
    if (!gpt && (c->mask == MK_SELECT || c->mask == MK_ADD_SELECT)) { /* running value at input 2 */
        size_t s1 = tensor(g, fdt, 4, sd);
        tg_add(g, dnnl_graph_op_select, 3, (size_t[]){cond, fill, s}, 1, &s1);
        s = s1;
    }
    if (c->neg == NEG_ESCAPE) { /* the masked scores also feed an outside op */
        size_t e = tensor(g, fdt, 4, sd);
        tg_add(g, dnnl_graph_op_abs, 1, &s, 1, &e);
        g->result[g->nres++] = e;
    }

    /* SoftMax → (TypeCast) → Quantize → Dequantize (→ TypeCast). */
    size_t p = tensor(g, bf && !ref ? cdt : dnnl_f32, 4, sd);
    op_d *sm = tg_add(g, dnnl_graph_op_softmax, 1, &s, 1, &p);
    tg_attr_s64(sm, dnnl_graph_op_attr_axis, (int64_t[]){c->neg == NEG_SM_AXIS ? 2 : 3}, 1);
    tg_attr_str(sm, dnnl_graph_op_attr_mode, "inf_as_zero");
    if (bf) {
        size_t p1 = tensor(g, dnnl_f32, 4, sd);
        tg_add(g, ref ? dnnl_graph_op_reorder : dnnl_graph_op_type_cast, 1, &p, 1, &p1);
        p = p1;
    }
    const dnnl_data_type_t pq = c->qdt == dnnl_s8 ? dnnl_s8 : c->qdt;
    size_t pqt = tensor(g, pq, 4, sd), pdq = tensor(g, dnnl_f32, 4, sd);
    quant_op(g, dnnl_graph_op_quantize, p, pqt, pq == dnnl_s8 ? 1.f / 128 : 1.f / 256, 0, zp);
    quant_op(g, dnnl_graph_op_dequantize, pqt, pdq, pq == dnnl_s8 ? 1.f / 128 : 1.f / 256, 0, zp);
    p = pdq;
    if (bf) {
        size_t p1 = tensor(g, cdt, 4, sd);
        tg_add(g, dnnl_graph_op_type_cast, 1, &p, 1, &p1);
        p = p1;
    }
    const bool final_quant = gpt ? c->gpt_quant : c->neg != NEG_NO_FINAL_QUANT;
    const dnnl_data_type_t odt = bf && !(ref && final_quant) ? cdt : dnnl_f32;
    size_t o = tensor(g, odt, 4, od);
    tg_add(g, dnnl_graph_op_matmul, 2, (size_t[]){p, mmin[2]}, 1, &o);

    /* Output: OutReorder → (TypeCast) → Quantize. */
    bool reorder = c->form == FORM_X8 ? c->out_reorder : true;
    if (reorder) {
        size_t t = tensor(g, odt, 4, td);
        tg_attr_s64(tg_add(g, dnnl_graph_op_static_transpose, 1, &o, 1, &t), dnnl_graph_op_attr_order,
                 (int64_t[]){0, 2, 1, 3}, 4);
        if (c->out_reshape) {
            int64_t rd[3] = {c->n, c->sq, c->h * c->dv};
            size_t r = tensor(g, odt, 3, rd);
            op_d *rs = tg_add(g, dnnl_graph_op_static_reshape, 1, &t, 1, &r);
            tg_attr_s64(rs, dnnl_graph_op_attr_shape, rd, 3);
            tg_attr_bool(rs, dnnl_graph_op_attr_special_zero, false);
            o = r;
        } else {
            size_t r = tensor(g, odt, 4, td);
            tg_add(g, dnnl_graph_op_reorder, 1, &t, 1, &r);
            o = r;
        }
    }
    if (final_quant) {
        const lt_t *olt = &g->lt[o - 1];
        int64_t dq[4];
        memcpy(dq, olt->dims, sizeof dq);
        if (bf) {
            size_t o1 = tensor(g, dnnl_f32, olt->ndims, dq);
            tg_add(g, ref ? dnnl_graph_op_reorder : dnnl_graph_op_type_cast, 1, &o, 1, &o1);
            o = o1;
        }
        size_t oq = tensor(g, c->qdt, g->lt[o - 1].ndims, dq);
        if (c->neg == NEG_PER_CHANNEL_OUT) { /* per-channel over the heads: matched, not fused */
            op_d *q = tg_add(g, dnnl_graph_op_quantize, 1, &o, 1, &oq);
            tg_attr_str(q, dnnl_graph_op_attr_qtype, "per_channel");
            tg_attr_s64(q, dnnl_graph_op_attr_axis, (int64_t[]){2}, 1);
            float scs[8];
            int64_t zps[8];
            for (int i = 0; i < c->h; ++i) scs[i] = 0.25f * (float)(i + 1), zps[i] = 10 * i;
            tg_attr_f32(q, dnnl_graph_op_attr_scales, scs, (int)c->h);
            if (zp) tg_attr_s64(q, dnnl_graph_op_attr_zps, zps, (int)c->h);
        } else {
            quant_op(g, dnnl_graph_op_quantize, o, oq, 0.125f, c->qdt == dnnl_u8 ? 120 : 0, zp);
        }
        o = oq;
    }
    g->result[g->nres++] = o;
}

/* Fused forms compare against the widened variant; graphs that must not
 * fuse run op by op (or through other rows) and compare against themselves. */
static void check_q(const char *name, const qcfg *c, const char *want_row) {
    static gdesc g, r;
    build_q(&g, c, false);
    build_q(&r, c, want_row != NULL);
    check_pair(name, &g, &r, want_row, true, dnnl_fpmath_mode_strict);
}

static void test_x8(void) {
    qcfg c = qbase(FORM_X8);
    check_q("x8 u8", &c, "x8_sdpa_fusion");
    c.qdt = dnnl_s8, c.scale = SC_MUL, c.mask = MK_ADD_SELECT, c.k_dxs = true, c.sq = 70, c.skv = 65;
    check_q("x8 s8, select, K [D, S]", &c, "x8_sdpa_fusion");
    c = qbase(FORM_X8);
    c.qdt = dnnl_f8_e4m3, c.out_reorder = false, c.mask = MK_NONE, c.sq = 5, c.skv = 600;
    check_q("x8 f8_e4m3, no mask, long S_kv", &c, "x8_sdpa_fusion");
    c = qbase(FORM_X8);
    c.qdt = dnnl_f8_e5m2, c.scale = SC_NONE, c.sq = 1, c.skv = 1, c.d = 7, c.dv = 3;
    check_q("x8 f8_e5m2, one key", &c, "x8_sdpa_fusion");
}

static void test_int8_bf16(void) {
    qcfg c = qbase(FORM_INT8_BF16);
    check_q("int8 bf16", &c, "int8_bf16_sdp_fusion");
    c.qdt = dnnl_s8, c.mask = MK_SELECT, c.scale = SC_NONE, c.sq = 33, c.skv = 64, c.k_dxs = true;
    check_q("int8 bf16 s8, select, no scale", &c, "int8_bf16_sdp_fusion");
    c = qbase(FORM_GPT_BF16);
    check_q("int8 bf16 GPT", &c, "int8_bf16_gpt_sdp");
    c.gpt_quant = false, c.out_reshape = true, c.k_dxs = true, c.sq = 9, c.skv = 77;
    check_q("int8 bf16 GPT, bf16 output, reshape", &c, "int8_bf16_gpt_sdp");
    c = qbase(FORM_GPT_F32);
    c.qdt = dnnl_s8, c.sq = 32, c.skv = 65;
    check_q("int8 f32 GPT", &c, "int8_fp32_gpt_sdp");
}

static void test_q_negative(void) {
    static const struct {
        int form, neg;
        const char *name;
    } negs[] = {
        {FORM_X8, NEG_NO_FINAL_QUANT, "x8 without the final Quantize"},
        {FORM_X8, NEG_MIXED_TYPES, "x8 with u8 Q and s8 K"},
        {FORM_X8, NEG_ESCAPE, "x8 scores with an outside consumer"},
        {FORM_INT8_BF16, NEG_F16_CASTS, "int8 with f16 casts"},
        {FORM_INT8_BF16, NEG_SM_AXIS, "int8 bf16 SoftMax on axis 2"},
        {FORM_GPT_BF16, NEG_GPT_SELECT_ELSE, "int8 bf16 GPT, Select keeps the scores on false"},
        {FORM_GPT_F32, NEG_ESCAPE, "int8 f32 GPT, scores with an outside consumer"},
    };
    qcfg c;
    for (size_t i = 0; i < sizeof negs / sizeof negs[0]; ++i) {
        c = qbase(negs[i].form);
        c.neg = negs[i].neg;
        check_q(negs[i].name, &c, NULL);
    }

    /* Matched (one partition) but the output Quantize is per channel: the
     * kernel declines, the partition runs op by op. */
    static gdesc g, r;
    c = qbase(FORM_X8);
    c.neg = NEG_PER_CHANNEL_OUT;
    build_q(&g, &c, false);
    build_q(&r, &c, true);
    check_pair("x8 per-channel output Quantize", &g, &r, "x8_sdpa_fusion", false, dnnl_fpmath_mode_strict);
}

/* ---- compressed K / V ---------------------------------------------------------------- */

enum { CMP_NONE, CMP_TENSOR, CMP_CHANNEL, CMP_GROUP };
enum { CM_NONE, CM_CAUSAL, CM_ADD, CM_CAUSAL_ADD };

typedef struct {
    dnnl_data_type_t fdt; /* Q, scales, dequantized K / V, P, O */
    dnnl_data_type_t sdt; /* scores */
    int64_t n, h, sq, skv, d, dv;
    int ck, cv;                /* compression of K / V */
    dnnl_data_type_t kdt, vdt; /* their integer types */
    dnnl_data_type_t kzp, vzp; /* zero-point types, undef: none */
    int64_t gk, gv;            /* group sizes along D / D_v */
    bool k_dxs;
    int mask;
    bool sm_axis_bad;   /* negative: SoftMax on axis 2 */
    bool k_escapes;     /* negative: dequantized K also leaves */
    bool v_escapes;     /* negative: dequantized V also leaves */
} ccfg;

static ccfg cbase(void) {
    ccfg c;
    memset(&c, 0, sizeof c);
    c.fdt = c.sdt = dnnl_f16;
    c.n = 1, c.h = 2, c.sq = 37, c.skv = 133, c.d = 64, c.dv = 32;
    c.ck = c.cv = CMP_GROUP;
    c.kdt = dnnl_s8, c.vdt = dnnl_u8;
    c.kzp = dnnl_s8, c.vzp = dnnl_u8;
    c.gk = 32, c.gv = 16;
    c.k_dxs = true;
    c.mask = CM_CAUSAL;
    return c;
}

/* DynamicDequantize of a stored [N, H, rows, cols] integer tensor; the
 * quantization axis / groups run along dim `qaxis`. */
static size_t compressed(gdesc *g, const ccfg *c, const int64_t *dims, int mode, dnnl_data_type_t dt,
                         dnnl_data_type_t zdt, int qaxis, int64_t gs) {
    size_t x = qinput(g, dt, 4, dims);
    int64_t sdims[4] = {1, 1, 1, 1};
    int snd = 1;
    if (mode == CMP_CHANNEL) {
        sdims[0] = dims[qaxis];
    } else if (mode == CMP_GROUP) {
        snd = 4;
        memcpy(sdims, dims, sizeof sdims);
        sdims[qaxis] /= gs;
    }
    size_t sc = tensor_fill(g, c->fdt, snd, sdims, F_SCALE, 0.02f, 0.2f);
    size_t in[3] = {x, sc, 0};
    int nin = 2;
    if (zdt != dnnl_data_type_undef) {
        float lo, hi;
        int_range(zdt, &lo, &hi);
        if (zdt == dnnl_u8) lo = 0, hi = 12;
        /* Zero points shaped as the scales; s32 per_channel: one shared value. */
        const int64_t shared[1] = {1};
        const bool one = mode == CMP_CHANNEL && zdt == dnnl_s32;
        in[2] = tensor_fill(g, zdt, snd, one ? shared : sdims, F_INT, lo, hi);
        nin = 3;
    }
    size_t out = tensor(g, c->fdt, 4, dims);
    op_d *o = tg_add(g, dnnl_graph_op_dynamic_dequantize, nin, in, 1, &out);
    tg_attr_str(o, dnnl_graph_op_attr_qtype,
             mode == CMP_TENSOR ? "per_tensor" : mode == CMP_CHANNEL ? "per_channel" : "per_group");
    tg_attr_s64(o, dnnl_graph_op_attr_axis, (int64_t[]){qaxis}, 1);
    if (mode == CMP_GROUP) {
        int64_t gsh[4] = {1, 1, 1, 1};
        gsh[qaxis] = gs;
        tg_attr_s64(o, dnnl_graph_op_attr_group_shape, gsh, 4);
    }
    return out;
}

static void build_c(gdesc *g, const ccfg *c) {
    memset(g, 0, sizeof *g);
    const int64_t sd[4] = {c->n, c->h, c->sq, c->skv};
    const int64_t qd[4] = {c->n, c->h, c->sq, c->d};
    const int64_t kd[4] = {c->n, c->h, c->k_dxs ? c->d : c->skv, c->k_dxs ? c->skv : c->d};
    const int64_t vd[4] = {c->n, c->h, c->skv, c->dv};
    const int64_t od[4] = {c->n, c->h, c->sq, c->dv};
    size_t q = tensor(g, c->fdt, 4, qd);
    size_t k = c->ck == CMP_NONE ? tensor(g, c->fdt, 4, kd)
                                 : compressed(g, c, kd, c->ck, c->kdt, c->kzp, c->k_dxs ? 2 : 3, c->gk);
    if (c->k_escapes) {
        size_t e = tensor(g, c->fdt, 4, kd);
        tg_add(g, dnnl_graph_op_abs, 1, &k, 1, &e);
        g->result[g->nres++] = e;
    }
    size_t s = tensor(g, c->sdt, 4, sd);
    tg_attr_bool(tg_add(g, dnnl_graph_op_matmul, 2, (size_t[]){q, k}, 1, &s), dnnl_graph_op_attr_transpose_b, !c->k_dxs);
    int64_t one[1] = {1};
    size_t f = tensor_fill(g, c->fdt, 0, one, F_CONST, 8.f, 0);
    size_t s1 = tensor(g, c->sdt, 4, sd);
    tg_add(g, dnnl_graph_op_divide, 2, (size_t[]){s, f}, 1, &s1);
    s = s1;
    if (c->mask == CM_CAUSAL || c->mask == CM_CAUSAL_ADD) {
        size_t row = tensor(g, dnnl_s32, 4, sd), col = tensor(g, dnnl_s32, 4, sd);
        tg_attr_s64(tg_add(g, dnnl_graph_op_gen_index, 1, &s, 1, &row), dnnl_graph_op_attr_axis, (int64_t[]){2}, 1);
        tg_attr_s64(tg_add(g, dnnl_graph_op_gen_index, 1, &s, 1, &col), dnnl_graph_op_attr_axis, (int64_t[]){3}, 1);
        size_t ge = tensor(g, dnnl_boolean, 4, sd);
        tg_add(g, dnnl_graph_op_greater_equal, 2, (size_t[]){row, col}, 1, &ge);
        size_t fill = tensor_fill(g, c->sdt, 1, one, F_CONST, -INFINITY, 0);
        size_t s2 = tensor(g, c->sdt, 4, sd);
        tg_add(g, dnnl_graph_op_select, 3, (size_t[]){ge, s, fill}, 1, &s2);
        s = s2;
    }
    if (c->mask == CM_ADD || c->mask == CM_CAUSAL_ADD) {
        size_t m = tensor_fill(g, c->fdt, 4, (int64_t[]){1, 1, c->sq, c->skv}, F_MASK, 0, 0);
        size_t s2 = tensor(g, c->sdt, 4, sd);
        tg_add(g, dnnl_graph_op_add, 2, (size_t[]){s, m}, 1, &s2);
        s = s2;
    }
    size_t p = tensor(g, c->fdt, 4, sd);
    op_d *sm = tg_add(g, dnnl_graph_op_softmax, 1, &s, 1, &p);
    tg_attr_s64(sm, dnnl_graph_op_attr_axis, (int64_t[]){c->sm_axis_bad ? 2 : 3}, 1);
    tg_attr_str(sm, dnnl_graph_op_attr_mode, "inf_as_zero");
    size_t v = c->cv == CMP_NONE ? tensor(g, c->fdt, 4, vd) : compressed(g, c, vd, c->cv, c->vdt, c->vzp, 3, c->gv);
    if (c->v_escapes) {
        size_t e = tensor(g, c->fdt, 4, vd);
        tg_add(g, dnnl_graph_op_abs, 1, &v, 1, &e);
        g->result[g->nres++] = e;
    }
    size_t o = tensor(g, c->fdt, 4, od);
    tg_add(g, dnnl_graph_op_matmul, 2, (size_t[]){p, v}, 1, &o);
    g->result[g->nres++] = o;
}

static void check_c(const char *name, const ccfg *c, const char *want_row, dnnl_fpmath_mode_t mode) {
    static gdesc g;
    build_c(&g, c);
    check_pair(name, &g, &g, want_row, true, mode);
}

static void test_compressed(void) {
    ccfg c = cbase();
    check_c("compressed kv s8/u8 gs32/16, causal", &c, "sdp_with_compressed_kv_fusion", dnnl_fpmath_mode_strict);
    check_c("compressed kv, f16 math mode", &c, "sdp_with_compressed_kv_fusion", dnnl_fpmath_mode_f16);

    /* int4 data, grouped zero points, several group sizes, both K layouts. */
    const int64_t groups[3][2] = {{8, 8}, {16, 32}, {64, 4}};
    for (int i = 0; i < 3; ++i) {
        c = cbase();
        c.kdt = i == 1 ? dnnl_u4 : dnnl_s4, c.vdt = i == 2 ? dnnl_s4 : dnnl_u4;
        c.kzp = i == 0 ? dnnl_s4 : dnnl_u4, c.vzp = i == 2 ? dnnl_data_type_undef : dnnl_u4;
        c.gk = groups[i][0], c.gv = groups[i][1];
        c.k_dxs = i != 1;
        c.sq = 5 + 29 * i, c.skv = 65 + 270 * i; /* up to 605 keys: past the score cache */
        c.mask = i == 2 ? CM_CAUSAL_ADD : CM_ADD;
        char name[96];
        snprintf(name, sizeof name, "compressed kv int4, groups %lld/%lld", (long long)c.gk, (long long)c.gv);
        check_c(name, &c, "sdp_with_compressed_kv_fusion", i == 1 ? dnnl_fpmath_mode_f16 : dnnl_fpmath_mode_strict);
    }

    c = cbase();
    c.cv = CMP_NONE, c.ck = CMP_CHANNEL, c.kzp = dnnl_s32, c.sq = 3, c.skv = 40;
    check_c("compressed k per_channel, one s32 zero point", &c, "sdp_with_compressed_k_fusion",
            dnnl_fpmath_mode_strict);
    c = cbase();
    c.cv = CMP_NONE, c.ck = CMP_TENSOR, c.kzp = dnnl_data_type_undef, c.k_dxs = false;
    c.fdt = dnnl_bf16, c.sdt = dnnl_f32;
    check_c("compressed k per_tensor, bf16, K [S, D]", &c, "sdp_with_compressed_k_fusion", dnnl_fpmath_mode_strict);
    c = cbase();
    c.ck = CMP_NONE, c.cv = CMP_GROUP, c.vdt = dnnl_s8, c.vzp = dnnl_data_type_undef, c.gv = 8;
    c.fdt = dnnl_f32, c.sdt = dnnl_f32, c.mask = CM_ADD, c.sq = 70, c.skv = 1;
    check_c("compressed v f32, one key", &c, "sdp_with_compressed_v_fusion", dnnl_fpmath_mode_strict);
    c.cv = CMP_CHANNEL, c.vzp = dnnl_u8, c.skv = 96;
    check_c("compressed v per_channel zero points", &c, "sdp_with_compressed_v_fusion", dnnl_fpmath_mode_strict);

    /* Negative: SoftMax on another axis; dequantized K read outside too. */
    c = cbase();
    c.sm_axis_bad = true;
    check_c("compressed kv, SoftMax on axis 2", &c, NULL, dnnl_fpmath_mode_strict);
    c = cbase();
    c.k_escapes = true;
    check_c("compressed kv, dequantized K leaves", &c, NULL, dnnl_fpmath_mode_strict);
    c = cbase();
    c.ck = CMP_NONE, c.v_escapes = true;
    check_c("compressed v, dequantized V leaves", &c, NULL, dnnl_fpmath_mode_strict);
    c = cbase();
    c.cv = CMP_NONE, c.sm_axis_bad = true;
    check_c("compressed k, SoftMax on axis 2", &c, NULL, dnnl_fpmath_mode_strict);
}

/* int4 nibble order (docs/graph-json.md, data), checked by hand rather than
 * against the reference: K = [[3, 5], [1, 7]] as u4 is the bytes 0x53 0x71
 * (even elements in the low nibble); Q = [1, 0] picks scores 3 and 1, V is
 * the identity, so O = softmax([3, 1]). */
static void test_int4_order(void) {
    static gdesc g;
    memset(&g, 0, sizeof g);
    size_t q = tensor(&g, dnnl_f32, 4, (int64_t[]){1, 1, 1, 2});
    size_t kq = tensor(&g, dnnl_u4, 4, (int64_t[]){1, 1, 2, 2});
    size_t sc = tensor(&g, dnnl_f32, 1, (int64_t[]){1});
    size_t kf = tensor(&g, dnnl_f32, 4, (int64_t[]){1, 1, 2, 2});
    size_t s = tensor(&g, dnnl_f32, 4, (int64_t[]){1, 1, 1, 2}), p = tensor(&g, dnnl_f32, 4, (int64_t[]){1, 1, 1, 2});
    size_t v = tensor(&g, dnnl_f32, 4, (int64_t[]){1, 1, 2, 2}), o = tensor(&g, dnnl_f32, 4, (int64_t[]){1, 1, 1, 2});
    tg_attr_str(tg_add(&g, dnnl_graph_op_dynamic_dequantize, 2, (size_t[]){kq, sc}, 1, &kf), dnnl_graph_op_attr_qtype,
             "per_tensor");
    tg_attr_bool(tg_add(&g, dnnl_graph_op_matmul, 2, (size_t[]){q, kf}, 1, &s), dnnl_graph_op_attr_transpose_b, true);
    tg_attr_s64(tg_add(&g, dnnl_graph_op_softmax, 1, &s, 1, &p), dnnl_graph_op_attr_axis, (int64_t[]){-1}, 1);
    tg_add(&g, dnnl_graph_op_matmul, 2, (size_t[]){p, v}, 1, &o);
    float qd[2] = {1.f, 0.f}, scd[1] = {1.f}, vd[4] = {1.f, 0.f, 0.f, 1.f}, od[2] = {0.f, 0.f};
    uint8_t kd[2] = {0x53, 0x71};
    void *data[TG_MAXT] = {0};
    data[q - 1] = qd, data[kq - 1] = kd, data[sc - 1] = scd, data[v - 1] = vd, data[o - 1] = od;
    float scratch[3][8];
    data[kf - 1] = scratch[0], data[s - 1] = scratch[1], data[p - 1] = scratch[2];
    tg_run_info fi;
    CHECK(tg_run(&g, &(tg_run_opts){.policy = dnnl_graph_partition_policy_fusion}, data, &fi));
    CHECK_EQ_INT(fi.nparts, 1);
    CHECK_EQ_INT(tg_count_fused(&fi, NULL), 1);
    CHECK(fi.maxrow && strcmp(fi.maxrow, "sdp_with_compressed_k_fusion") == 0);
    const double hi = 1.0 / (1.0 + exp(-2.0));
    CHECK_NEAR(od[0], hi, 1e-6);
    CHECK_NEAR(od[1], 1.0 - hi, 1e-6);
}

/* Compressed K / V as decode and prefill see them: head size 128, one or a
 * few query rows, key counts past one block with tails, int8 and int4 data,
 * groups of 32 / 128 along the head size, with and without zero points,
 * both K layouts, strict and bf16 math. */
static void test_compressed_grid(void) {
    char name[128];
    for (int i = 0; i < 8; ++i) {
        ccfg c = cbase();
        c.fdt = c.sdt = i % 2 ? dnnl_bf16 : dnnl_f32;
        c.d = c.dv = 128;
        c.sq = i < 4 ? 1 : 7, c.skv = i % 3 ? 200 : 65;
        const bool int4 = i & 2;
        c.kdt = int4 ? dnnl_s4 : dnnl_s8, c.vdt = int4 ? dnnl_u4 : dnnl_u8;
        const bool zps = i != 2 && i != 5;
        c.kzp = zps ? (int4 ? dnnl_s4 : dnnl_s8) : dnnl_data_type_undef;
        c.vzp = zps ? (int4 ? dnnl_u4 : dnnl_u8) : dnnl_data_type_undef;
        c.gk = i % 4 == 3 ? 128 : 32, c.gv = 32;
        c.k_dxs = i % 3 != 1;
        c.mask = i % 2 ? CM_CAUSAL : CM_ADD;
        snprintf(name, sizeof name, "compressed %s sq=%lld skv=%lld gk=%lld%s%s", int4 ? "int4" : "int8",
                 (long long)c.sq, (long long)c.skv, (long long)c.gk, zps ? " zp" : "", c.k_dxs ? " K [D,S]" : "");
        check_c(name, &c, "sdp_with_compressed_kv_fusion", i % 4 == 1 ? dnnl_fpmath_mode_bf16 : dnnl_fpmath_mode_strict);
    }
    /* The decode block operations (K [S, D], groups of 32 / 16 multiples):
     * head sizes of 1, 2, 3, 8 chunks of 32, groups spanning one or several
     * chunks or the whole row, fewer keys than a group of four rows, and
     * key counts with tails of every residue. */
    static const struct {
        dnnl_data_type_t kdt, vdt, kzp, vzp, fdt;
        int64_t d, dv, gk, gv, sq, h, skv;
    } dec[] = {
        {dnnl_u4, dnnl_s4, dnnl_u4, dnnl_s4, dnnl_f32, 256, 64, 64, 32, 1, 2, 301},
        {dnnl_s4, dnnl_u4, dnnl_data_type_undef, dnnl_u4, dnnl_bf16, 64, 96, 64, 96, 1, 3, 3},
        {dnnl_s8, dnnl_u8, dnnl_s8, dnnl_u8, dnnl_f32, 96, 48, 32, 16, 2, 2, 130},
        {dnnl_u8, dnnl_s8, dnnl_data_type_undef, dnnl_data_type_undef, dnnl_f32, 32, 32, 16, 32, 1, 1, 7},
        {dnnl_u4, dnnl_u4, dnnl_u4, dnnl_u4, dnnl_f32, 32, 320, 32, 64, 1, 2, 129},
        /* Parameters in several chunks of a decode block, and past one block. */
        {dnnl_u4, dnnl_s8, dnnl_u4, dnnl_s8, dnnl_f32, 128, 64, 32, 64, 1, 2, 2100},
        {dnnl_s8, dnnl_u4, dnnl_data_type_undef, dnnl_u4, dnnl_bf16, 64, 128, 64, 32, 3, 2, 1030},
        {dnnl_u4, dnnl_u4, dnnl_u4, dnnl_u4, dnnl_f32, 64, 64, 32, 32, 1, 1, 4500}, /* two 4096-key blocks */
    };
    for (size_t i = 0; i < sizeof dec / sizeof dec[0]; ++i) {
        ccfg c = cbase();
        c.fdt = c.sdt = dec[i].fdt;
        c.kdt = dec[i].kdt, c.vdt = dec[i].vdt, c.kzp = dec[i].kzp, c.vzp = dec[i].vzp;
        c.d = dec[i].d, c.dv = dec[i].dv, c.gk = dec[i].gk, c.gv = dec[i].gv;
        c.sq = dec[i].sq, c.h = dec[i].h, c.skv = dec[i].skv;
        c.k_dxs = false;
        c.mask = i % 2 ? CM_CAUSAL : CM_ADD;
        snprintf(name, sizeof name, "decode block ops %zu: D=%lld Dv=%lld gk=%lld gv=%lld skv=%lld", i,
                 (long long)c.d, (long long)c.dv, (long long)c.gk, (long long)c.gv, (long long)c.skv);
        check_c(name, &c, "sdp_with_compressed_kv_fusion", dnnl_fpmath_mode_strict);
    }
}

int main(void) {
    tg_setup();
    test_x8();
    test_int8_bf16();
    test_q_negative();
    test_compressed();
    test_int4_order();
    test_compressed_grid();
    tg_teardown();
    return pt_test_summary("test_int_sdpa_quant");
}
