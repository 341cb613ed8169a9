/* Gated MLP fusion (docs/fusion.md): graphs built through the public
 * API must form one partition of the expected row (gated_mlp, gated_mlp_v1,
 * quantized_gated_mlp, quantized_gated_mlp_v1) that runs through the fused
 * kernel on the GEMM engine and agrees with the debug-policy run (every op
 * alone, reference kernels) within the engine's bound (f32 accumulation in
 * blocks, docs/numerics.md).  Shapes cover decode rows (M 1..5, the
 * engine's small-M path), prompts (17, 64, 200: packed panels, row blocks),
 * sizes of 1 and odd tails of the 32-column microkernel; variants cover
 * transposes, batch broadcasting, strided src, biases, f32 / bf16 / f16
 * with and without the TypeCast (narrow intermediates with every combine
 * path, a narrow gate next to an f32 hidden layer: the kernel's G and H in
 * their declared types), every math mode with and without
 * apply_to_int, int4 / int8 weights (per_group along k or n, per_channel,
 * per_tensor, with and without zero points), and constant weights packed
 * once through the constant tensor cache (run twice, then with other
 * weights in place and in other buffers).  Negative graphs (src not shared,
 * an activation outside UNARY, an intermediate with an outside consumer,
 * the gate on the wrong side of a non-commutative combine) must not form a
 * gated-MLP partition and still compute the same values; a form the kernel
 * declines runs op by op. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir/dtype.h"
#include "runtime/const_cache.h"
#include "test_graph_util.h"

typedef tg_graph gdesc;
typedef tg_op op_d;
typedef tg_lt lt_t;

/* ---- graph description ---------------------------------------------------- */

/* F_ZP4: u8 zero points of 4-bit weights, values 0..15; F_SCALE_POW2: scales
 * 2^-4..2^-7, so that dequantized weights of up to 8 significant bits are
 * exact in every math mode's type. */
enum { F_RAND, F_INT, F_SCALE, F_ZP4, F_SCALE_POW2 };

static size_t tensor(gdesc *g, dnnl_data_type_t dt, int nd, const int64_t *dims, const int64_t *strides) {
    size_t id = tg_tensor(g, dt, nd, dims, strides);
    g->fill[id - 1] = pt_dt_is_int(dt) ? F_INT : F_RAND;
    return id;
}

/* An intermediate: rank and dims filled in, dense row-major. */
static size_t tensor2(gdesc *g, dnnl_data_type_t dt, int nd, const int64_t *dims) {
    return tensor(g, dt, nd, dims, NULL);
}

static op_d *add(gdesc *g, dnnl_graph_op_kind_t kind, int nin, const size_t *in, size_t out) {
    return tg_add(g, kind, nin, in, 1, &out);
}

static void attr_f32(op_d *o, int name, float f) { tg_attr_f32(o, name, &f, 1); }

static int lt_index(size_t id) { return (int)id - 1; }

static uint32_t rng = 2024u;
static uint32_t next_rand(void) { return tg_lcg(&rng); }
static float frand(void) { return tg_lcg_pm1(&rng); }

static void int_range(dnnl_data_type_t dt, int *lo, int *hi) {
    switch ((int)dt) {
        case dnnl_u4: *lo = 0, *hi = 15; break;
        case dnnl_s4: *lo = -8, *hi = 7; break;
        case dnnl_u8: *lo = 0, *hi = 255; break;
        case dnnl_s8: *lo = -128, *hi = 127; break;
        default: *lo = -20, *hi = 20; break;
    }
}

typedef struct {
    int fill, lo, hi;
} fill_d;

static float next_value(void *ctx) {
    const fill_d *f = ctx;
    switch (f->fill) {
        case F_INT: return (float)(f->lo + (int)(next_rand() % (uint32_t)(f->hi - f->lo + 1)));
        case F_ZP4: return (float)(next_rand() % 16u);
        case F_SCALE: return 0.01f + 0.05f * (frand() + 1.f);
        case F_SCALE_POW2: return ldexpf(1.f, -4 - (int)(next_rand() % 4u));
        default: return frand();
    }
}

static void fill_input(const gdesc *g, int t, void *buf) {
    fill_d f = {.fill = g->fill[t]};
    int_range(g->lt[t].data_type, &f.lo, &f.hi);
    tg_fill(&g->lt[t], buf, next_value, &f);
}

/* ---- running a graph ----------------------------------------------------- */

static bool is_gated_row(const char *name) { return name && strstr(name, "gated_mlp") != NULL; }

static int cases_run, cases_fused;

/* The error allowed in a result, relative to the largest reference value
 * of the tensor (the down product sums hidden values of either sign, so a
 * small output carries the rounding of large terms): 2^-22 per term of the
 * contractions (f32 accumulation in blocks; a Divide combine amplifies it
 * where its divisor is small), and two units in the last place of a narrow
 * output.  Observed errors stay below a quarter of it at every ISA cap. */
static double tol_abs;
static double mlp_tol(double a, const lt_t *lt) {
    (void)a, (void)lt;
    return tol_abs;
}

static double result_scale(const lt_t *lt, const void *buf) {
    double m = 1.0;
    for (int64_t e = 0; e < tg_nelems(lt); ++e) {
        double v = fabs(pt_load_f32(buf, lt->data_type, tg_offset(lt, e)));
        if (v > m && isfinite(v)) m = v;
    }
    return m;
}

static void set_tolerance(const gdesc *g, const lt_t *out, const void *ref) {
    int64_t contraction = 0; /* per MatMul the larger of its weight's two dims (K or more), summed */
    for (int o = 0; o < g->nop; ++o)
        if (g->op[o].kind == dnnl_graph_op_matmul) {
            const lt_t *w = &g->lt[g->op[o].in[1] - 1];
            contraction += w->dims[w->ndims - 2] > w->dims[w->ndims - 1] ? w->dims[w->ndims - 2] : w->dims[w->ndims - 1];
        }
    double ulp = out->data_type == dnnl_bf16 ? 0x1p-7 : out->data_type == dnnl_f16 ? 0x1p-10 : 0;
    double acc = 0x1p-22 * (double)contraction;
    tol_abs = (2 * ulp + acc) * result_scale(out, ref);
}

typedef struct {
    bool constant;     /* weights constant: run again, then with other weights */
    bool expect_cache; /* and packing pays (prompt rows): the cache gains entries */
} check_opts;

/* Compares every result of g between `ref` and `got`. */
static void compare_results(const char *name, const gdesc *g, void **ref, void **got) {
    for (int r = 0; r < g->nres; ++r) {
        size_t t = g->result[r] - 1;
        set_tolerance(g, &g->lt[t], ref[t]);
        tg_diff d = tg_check_values(name, &g->lt[t], ref[t], got[t], mlp_tol);
        CHECK(d.total == 0 || d.nonzero > 0); /* the comparison means something */
    }
}

/* Refills the constant inputs (weights, scales, zero points) in place; the
 * reference set's converted copies (u4 zero points) get the same values. */
static void refill_weights(const gdesc *g, const gdesc *gref, void **got, void **ref) {
    for (int t = 0; t < g->nt; ++t) {
        if (g->lt[t].property != dnnl_graph_tensor_property_constant) continue;
        fill_input(g, t, got[t]);
        if (ref[t] == got[t]) continue;
        for (int64_t e = 0; e < tg_span(&g->lt[t]); ++e)
            pt_store_f32(ref[t], gref->lt[t].data_type, e, pt_load_f32(got[t], g->lt[t].data_type, e));
    }
}

/* Runs `g` under the debug policy and the fusion policy and compares every
 * result.  want_row: the gated-MLP row that must form exactly one partition
 * (NULL: no gated partition at all); single: that partition is the whole
 * graph (otherwise, or for want_row NULL, several partitions); want_fused:
 * the gated partition runs through the fused kernel. */
static void check_graph_with(const char *name, const gdesc *g, const char *want_row, bool single, bool want_fused,
                             check_opts co) {
    /* The reference graph: u8 zero points of 4-bit weights become u4 (same
     * values), the form a lone DynamicDequantize supports. */
    static gdesc gref;
    gref = *g;
    for (int t = 0; t < g->nt; ++t)
        if (g->fill[t] == F_ZP4) {
            lt_t *lt = &gref.lt[t];
            dnnl_graph_logical_tensor_init_with_dims(lt, lt->id, dnnl_u4, lt->ndims, lt->dims,
                                                     dnnl_graph_layout_type_strided, lt->property);
        }
    const tg_graph *sets[2] = {g, &gref};
    tg_bufs B;
    tg_bufs_alloc(&B, sets, 2, fill_input);
    void **got = B.set[0], **ref = B.set[1];
    tg_run_info ri, fi;
    bool ok = tg_run(&gref, &(tg_run_opts){.policy = dnnl_graph_partition_policy_debug, .reference = true}, ref, &ri);
    CHECK(ok);
    size_t entries = pt_const_cache_entries();
    ok = ok && tg_run(g, &(tg_run_opts){.policy = dnnl_graph_partition_policy_fusion}, got, &fi);
    CHECK(ok);
    if (!ok) fprintf(stderr, "  %s: did not run\n", name);
    if (co.expect_cache) CHECK(pt_const_cache_entries() > entries);
    ++cases_run;
    if (ok) {
        int ngated = 0;
        const char *gated_row = NULL;
        bool gated_fused = false;
        for (int p = 0; p < fi.nparts; ++p)
            if (is_gated_row(fi.part[p].row)) {
                ++ngated;
                gated_row = fi.part[p].row;
                gated_fused = fi.part[p].fused;
            }
        CHECK_EQ_INT(ri.nparts, g->nop);
        bool parts_ok = want_row && single ? fi.nparts == 1 : fi.nparts > 1;
        bool row_ok = want_row ? ngated == 1 && strcmp(gated_row, want_row) == 0 : ngated == 0;
        bool fused_ok = !want_row || gated_fused == want_fused;
        CHECK(parts_ok);
        CHECK(row_ok);
        CHECK(fused_ok);
        if (!parts_ok || !row_ok || !fused_ok)
            fprintf(stderr, "  %s: %d partitions, %d gated (%s, fused %d), want %s\n", name, fi.nparts, ngated,
                    gated_row ? gated_row : "-", (int)gated_fused, want_row ? want_row : "none");
        if (gated_fused) ++cases_fused;
        compare_results(name, g, ref, got);
    }
    if (ok && co.constant) {
        /* Again on the same buffers (the packed weights come from the
         * cache), then with other weight values in the same buffers (the
         * fingerprint notices), then in other buffers. */
        char nm[96];
        for (int t = 0; t < g->nt; ++t)
            if (tg_produced(g, (size_t)t + 1)) memset(got[t], 0, 4);
        ok = tg_run(g, &(tg_run_opts){.policy = dnnl_graph_partition_policy_fusion}, got, &fi);
        CHECK(ok);
        snprintf(nm, sizeof nm, "%s, run again", name);
        if (ok) compare_results(nm, g, ref, got);
        refill_weights(g, &gref, got, ref);
        ok = ok && tg_run(&gref, &(tg_run_opts){.policy = dnnl_graph_partition_policy_debug, .reference = true}, ref,
                          &ri);
        ok = ok && tg_run(g, &(tg_run_opts){.policy = dnnl_graph_partition_policy_fusion}, got, &fi);
        CHECK(ok);
        snprintf(nm, sizeof nm, "%s, other weights in place", name);
        if (ok) compare_results(nm, g, ref, got);
        tg_bufs B2;
        tg_bufs_alloc(&B2, sets, 2, fill_input);
        ok = tg_run(&gref, &(tg_run_opts){.policy = dnnl_graph_partition_policy_debug, .reference = true},
                    B2.set[1], &ri);
        ok = ok && tg_run(g, &(tg_run_opts){.policy = dnnl_graph_partition_policy_fusion}, B2.set[0], &fi);
        CHECK(ok);
        snprintf(nm, sizeof nm, "%s, other weight buffers", name);
        if (ok) compare_results(nm, g, B2.set[1], B2.set[0]);
        tg_bufs_free(&B2);
    }
    tg_bufs_free(&B);
}

static void check_graph(const char *name, const gdesc *g, const char *want_row, bool single, bool want_fused) {
    check_graph_with(name, g, want_row, single, want_fused, (check_opts){0});
}

/* ---- gated MLP builder ------------------------------------------------------- */

enum { ACT_NONE, ACT_UNARY, ACT_SWISH };
enum { NEG_NONE, NEG_SRC_NOT_SHARED, NEG_ACT_SOFTMAX, NEG_HIDDEN_OUT, NEG_GATE_OUT, NEG_GATE_RIGHT, NEG_DQ_OUT };

/* Compression of one weight. */
typedef struct {
    bool on;
    dnnl_data_type_t wdt, sdt, zdt; /* zdt undef: no zero points */
    const char *qtype;              /* per_group / per_channel / per_tensor */
    bool pow2;                      /* F_SCALE_POW2 scales */
    int64_t group[2];               /* per_group: group_shape of the [rows, cols] weight tensor */
    int64_t axis;                   /* per_channel */
} quant_cfg;

typedef struct {
    dnnl_data_type_t dt;     /* src, weights, output */
    dnnl_data_type_t mid_dt; /* gate/up outputs, activation, combine */
    bool cast;               /* TypeCast(mid_dt → dt) before the down MatMul */
    dnnl_data_type_t down_dt; /* undef: dt; else the TypeCast's output, the down weight and the output */
    int act;
    dnnl_graph_op_kind_t act_kind;
    bool sig_first;          /* swish: Sigmoid output at Multiply input 0 */
    dnnl_graph_op_kind_t comb;
    bool up_first;           /* up branch at combine input 0 (commutative kinds) */
    int64_t M, K, N, O;
    int nbs;                 /* src batch dims */
    int64_t bs[2];
    int nbw;                 /* gate/up weight batch dims (right-aligned against src) */
    int64_t bw[2];
    int nbd;                 /* down weight batch dims */
    int64_t bd[3];
    bool ta, tb_gate, tb_up, tb_down, ta_down;
    bool bias_gate, bias_down;
    bool src_padded;         /* src rows padded (non-dense) */
    quant_cfg q[3];          /* gate, up, down */
    dnnl_fpmath_mode_t fpmath;
    int apply_to_int;
    bool constant;           /* weights (and their scales / zero points) have property constant */
    int neg;
} mlp_cfg;

static mlp_cfg base_cfg(void) {
    mlp_cfg c;
    memset(&c, 0, sizeof c);
    c.dt = c.mid_dt = dnnl_f32;
    c.act = ACT_SWISH;
    c.act_kind = dnnl_graph_op_sigmoid;
    c.comb = dnnl_graph_op_multiply;
    c.M = 5, c.K = 37, c.N = 70, c.O = 23;
    c.fpmath = dnnl_fpmath_mode_strict;
    return c;
}

/* A weight [batch.., K, N] (or [.., N, K] transposed); compressed weights
 * go through a DynamicDequantize whose output the MatMul reads. */
static size_t weight(gdesc *g, const mlp_cfg *c, const quant_cfg *q, int nb, const int64_t *b, int64_t rows,
                     int64_t cols, bool trans, size_t *dq_out_extra) {
    int64_t dims[5];
    for (int i = 0; i < nb; ++i) dims[i] = b[i];
    dims[nb] = trans ? cols : rows;
    dims[nb + 1] = trans ? rows : cols;
    int nd = nb + 2;
    const dnnl_graph_tensor_property_t prop = c->constant ? dnnl_graph_tensor_property_constant
                                                          : dnnl_graph_tensor_property_undef;
    if (!q->on) {
        size_t w = tensor(g, c->dt, nd, dims, NULL);
        tg_lt_of(g, w)->property = prop;
        return w;
    }
    size_t w = tensor(g, q->wdt, nd, dims, NULL);
    tg_lt_of(g, w)->property = prop;
    int64_t sd[5];
    int snd;
    if (strcmp(q->qtype, "per_group") == 0) {
        for (int i = 0; i < nb; ++i) sd[i] = dims[i];
        sd[nb] = dims[nb] / q->group[0];
        sd[nb + 1] = dims[nb + 1] / q->group[1];
        snd = nd;
    } else if (strcmp(q->qtype, "per_channel") == 0) {
        sd[0] = dims[q->axis];
        snd = 1;
    } else {
        sd[0] = 1;
        snd = 1;
    }
    size_t s = tensor(g, q->sdt, snd, sd, NULL);
    g->fill[lt_index(s)] = q->pow2 ? F_SCALE_POW2 : F_SCALE;
    tg_lt_of(g, s)->property = prop;
    size_t in[3] = {w, s, 0};
    int nin = 2;
    if (q->zdt != dnnl_data_type_undef) {
        int64_t zd[5];
        memcpy(zd, sd, sizeof zd);
        int znd = snd;
        in[2] = tensor(g, q->zdt, znd, zd, NULL);
        tg_lt_of(g, in[2])->property = prop;
        if (q->zdt == dnnl_u8 && (q->wdt == dnnl_u4 || q->wdt == dnnl_s4)) g->fill[lt_index(in[2])] = F_ZP4;
        nin = 3;
    }
    size_t out = tensor2(g, q->sdt, nd, dims);
    op_d *o = add(g, dnnl_graph_op_dynamic_dequantize, nin, in, out);
    tg_attr_str(o, dnnl_graph_op_attr_qtype, q->qtype);
    if (strcmp(q->qtype, "per_group") == 0) {
        int64_t gs[5];
        for (int i = 0; i < nb; ++i) gs[i] = 1;
        gs[nb] = q->group[0], gs[nb + 1] = q->group[1];
        tg_attr_s64(o, dnnl_graph_op_attr_group_shape, gs, nd);
    } else if (strcmp(q->qtype, "per_channel") == 0) {
        tg_attr_s64(o, dnnl_graph_op_attr_axis, &q->axis, 1);
    }
    if (dq_out_extra) *dq_out_extra = out;
    return out;
}

static op_d *matmul(gdesc *g, size_t a, size_t b, size_t bias, size_t out, bool ta, bool tb) {
    size_t in[3] = {a, b, bias};
    op_d *o = add(g, dnnl_graph_op_matmul, bias ? 3 : 2, in, out);
    tg_attr_bool(o, dnnl_graph_op_attr_transpose_a, ta);
    tg_attr_bool(o, dnnl_graph_op_attr_transpose_b, tb);
    return o;
}

static size_t unary(gdesc *g, dnnl_graph_op_kind_t kind, size_t x, dnnl_data_type_t dt, int nd, const int64_t *dims) {
    size_t y = tensor2(g, dt, nd, dims);
    size_t in[1] = {x};
    op_d *o = add(g, kind, 1, in, y);
    switch ((int)kind) {
        case dnnl_graph_op_gelu: tg_attr_str(o, dnnl_graph_op_attr_mode, "gelu_tanh"); break;
        case dnnl_graph_op_elu:
        case dnnl_graph_op_leaky_relu: attr_f32(o, dnnl_graph_op_attr_alpha, 0.3f); break;
        case dnnl_graph_op_clamp:
            attr_f32(o, dnnl_graph_op_attr_min, -0.4f);
            attr_f32(o, dnnl_graph_op_attr_max, 0.7f);
            break;
        case dnnl_graph_op_softmax: {
            int64_t ax = -1;
            tg_attr_s64(o, dnnl_graph_op_attr_axis, &ax, 1);
            break;
        }
        default: break;
    }
    return y;
}

static size_t binary(gdesc *g, dnnl_graph_op_kind_t kind, size_t a, size_t b, dnnl_data_type_t dt, int nd,
                     const int64_t *dims) {
    size_t y = tensor2(g, dt, nd, dims);
    size_t in[2] = {a, b};
    add(g, kind, 2, in, y);
    return y;
}

static int broadcast_batch(int na, const int64_t *a, int nb, const int64_t *b, int64_t *out) {
    int n = na > nb ? na : nb;
    for (int i = 0; i < n; ++i) {
        int ia = i - (n - na), ib = i - (n - nb);
        int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
        out[i] = da == 1 ? db : da;
    }
    return n;
}

static void build_mlp(gdesc *g, const mlp_cfg *c) {
    memset(g, 0, sizeof *g);
    g->fpmath = c->fpmath;
    g->apply_to_int = c->apply_to_int;

    /* src [bs.., M, K] (or [.., K, M] with transpose_a), rows optionally padded. */
    int64_t sdims[4], sst[4];
    int snd = c->nbs + 2;
    for (int i = 0; i < c->nbs; ++i) sdims[i] = c->bs[i];
    sdims[c->nbs] = c->ta ? c->K : c->M;
    sdims[c->nbs + 1] = c->ta ? c->M : c->K;
    size_t src;
    if (c->src_padded) {
        int64_t run = 1;
        for (int i = snd - 1; i >= 0; --i) {
            sst[i] = run;
            run *= sdims[i] + (i == snd - 1 ? 3 : 0);
        }
        src = tensor(g, c->dt, snd, sdims, sst);
    } else {
        src = tensor(g, c->dt, snd, sdims, NULL);
    }
    size_t src2 = src;
    if (c->neg == NEG_SRC_NOT_SHARED) src2 = tensor(g, c->dt, snd, sdims, NULL);

    /* Hidden [hb.., M, N]. */
    int64_t hdims[6];
    int hnb = broadcast_batch(c->nbs, c->bs, c->nbw, c->bw, hdims);
    int hnd = hnb + 2;
    hdims[hnb] = c->M, hdims[hnb + 1] = c->N;

    size_t dq_extra = 0;
    size_t wg = weight(g, c, &c->q[0], c->nbw, c->bw, c->K, c->N, c->tb_gate, &dq_extra);
    size_t wu = weight(g, c, &c->q[1], c->nbw, c->bw, c->K, c->N, c->tb_up, NULL);
    size_t bg = 0;
    if (c->bias_gate) {
        int64_t bd[1] = {c->N};
        bg = tensor(g, c->dt, 1, bd, NULL);
    }
    size_t gout = tensor2(g, c->mid_dt, hnd, hdims), uout = tensor2(g, c->mid_dt, hnd, hdims);
    matmul(g, src, wg, bg, gout, c->ta, c->tb_gate);
    matmul(g, src2, wu, 0, uout, c->ta, c->tb_up);

    size_t gate = gout;
    if (c->act == ACT_UNARY || c->neg == NEG_ACT_SOFTMAX) {
        gate = unary(g, c->neg == NEG_ACT_SOFTMAX ? dnnl_graph_op_softmax : c->act_kind, gout, c->mid_dt, hnd, hdims);
    } else if (c->act == ACT_SWISH) {
        size_t sg = unary(g, dnnl_graph_op_sigmoid, gout, c->mid_dt, hnd, hdims);
        gate = c->sig_first ? binary(g, dnnl_graph_op_multiply, sg, gout, c->mid_dt, hnd, hdims)
                            : binary(g, dnnl_graph_op_multiply, gout, sg, c->mid_dt, hnd, hdims);
    }
    bool up_first = c->up_first || c->neg == NEG_GATE_RIGHT;
    size_t hid = up_first ? binary(g, c->comb, uout, gate, c->mid_dt, hnd, hdims)
                          : binary(g, c->comb, gate, uout, c->mid_dt, hnd, hdims);
    mlp_cfg down = *c;
    if (c->down_dt != dnnl_data_type_undef) down.dt = c->down_dt;
    size_t hin = hid;
    if (c->cast) {
        hin = tensor2(g, down.dt, hnd, hdims);
        size_t in[1] = {hid};
        add(g, dnnl_graph_op_type_cast, 1, in, hin);
    }

    /* Down: [bd.., N, O]; output [broadcast(hidden batch, bd).., M, O]. */
    size_t wd = weight(g, &down, &c->q[2], c->nbd, c->bd, c->N, c->O, c->tb_down, NULL);
    size_t bdn = 0;
    if (c->bias_down) {
        int64_t bd[2] = {1, c->O};
        bdn = tensor(g, down.dt, 2, bd, NULL);
    }
    int64_t odims[6];
    int onb = broadcast_batch(hnb, hdims, c->nbd, c->bd, odims);
    odims[onb] = c->M, odims[onb + 1] = c->O;
    size_t out;
    if (c->ta_down) {
        /* Hidden read transposed: only valid with M == N; a form the kernel declines. */
        out = tensor2(g, down.dt, onb + 2, odims);
        matmul(g, hin, wd, bdn, out, true, c->tb_down);
    } else {
        out = tensor2(g, down.dt, onb + 2, odims);
        matmul(g, hin, wd, bdn, out, false, c->tb_down);
    }
    g->result[g->nres++] = out;

    /* Outside consumers of intermediates make them graph outputs too. */
    size_t extra = 0;
    if (c->neg == NEG_HIDDEN_OUT) extra = hid;
    if (c->neg == NEG_GATE_OUT) extra = gout;
    if (c->neg == NEG_DQ_OUT) extra = dq_extra;
    if (extra) {
        const lt_t *lt = &g->lt[lt_index(extra)];
        size_t y = tensor2(g, lt->data_type, lt->ndims, lt->dims);
        size_t in[1] = {extra};
        add(g, dnnl_graph_op_abs, 1, in, y);
        g->result[g->nres++] = y;
    }
}

static void run_cfg(const char *name, const mlp_cfg *c, const char *want_row, bool single, bool want_fused) {
    gdesc *g = malloc(sizeof *g);
    if (!g) {
        CHECK(g != NULL);
        return;
    }
    build_mlp(g, c);
    size_t cap = 0;
    CHECK(dnnl_graph_get_constant_tensor_cache_capacity(dnnl_cpu, &cap) == dnnl_success);
    check_opts co = {.constant = c->constant, .expect_cache = c->constant && want_fused && c->M > 4 && cap > 0};
    check_graph_with(name, g, want_row, single, want_fused, co);
    free(g);
}

static quant_cfg qgroup(dnnl_data_type_t wdt, dnnl_data_type_t sdt, dnnl_data_type_t zdt, int64_t g0, int64_t g1) {
    quant_cfg q = {.on = true, .wdt = wdt, .sdt = sdt, .zdt = zdt, .qtype = "per_group"};
    q.group[0] = g0, q.group[1] = g1;
    return q;
}

/* ---- cases --------------------------------------------------------------- */

static void float_cases(void) {
    mlp_cfg c = base_cfg();
    run_cfg("swish f32", &c, "gated_mlp_v1", true, true);

    /* Shapes around the kernel blocks: rows > 64, K > 128, N > 128, O > 64. */
    c.M = 70, c.K = 131, c.N = 133, c.O = 67;
    run_cfg("swish f32 large", &c, "gated_mlp_v1", true, true);
    c = base_cfg();
    c.M = 1, c.K = 1, c.N = 1, c.O = 1;
    run_cfg("swish 1x1", &c, "gated_mlp_v1", true, true);

    c = base_cfg();
    c.sig_first = true;
    c.up_first = true;
    run_cfg("swish swapped inputs", &c, "gated_mlp_v1", true, true);

    static const dnnl_graph_op_kind_t acts[] = {dnnl_graph_op_gelu, dnnl_graph_op_relu, dnnl_graph_op_tanh,
                                                dnnl_graph_op_sigmoid, dnnl_graph_op_clamp, dnnl_graph_op_elu,
                                                dnnl_graph_op_square, dnnl_graph_op_abs};
    for (size_t i = 0; i < sizeof acts / sizeof acts[0]; ++i) {
        c = base_cfg();
        c.act = ACT_UNARY;
        c.act_kind = acts[i];
        c.M = 3 + (int64_t)i, c.K = 9 + 7 * (int64_t)i, c.N = 65 + (int64_t)i, c.O = 5 + 3 * (int64_t)i;
        char nm[64];
        snprintf(nm, sizeof nm, "unary act %d", (int)acts[i]);
        run_cfg(nm, &c, "gated_mlp", true, true);
    }
    c = base_cfg();
    c.act = ACT_NONE;
    run_cfg("no act", &c, "gated_mlp", true, true);

    static const dnnl_graph_op_kind_t combs[] = {dnnl_graph_op_add, dnnl_graph_op_subtract, dnnl_graph_op_maximum,
                                                 dnnl_graph_op_minimum, dnnl_graph_op_divide};
    for (size_t i = 0; i < sizeof combs / sizeof combs[0]; ++i) {
        c = base_cfg();
        c.comb = combs[i];
        c.up_first = combs[i] == dnnl_graph_op_add || combs[i] == dnnl_graph_op_maximum;
        char nm[64];
        snprintf(nm, sizeof nm, "combine %d", (int)combs[i]);
        run_cfg(nm, &c, "gated_mlp_v1", true, true);
    }

    /* Transposes, batch broadcasting, padded src, biases. */
    c = base_cfg();
    c.ta = true, c.tb_gate = true, c.tb_down = true;
    run_cfg("transposes", &c, "gated_mlp_v1", true, true);
    c = base_cfg();
    c.nbs = 2, c.bs[0] = 2, c.bs[1] = 3;
    c.M = 4, c.K = 19, c.N = 66, c.O = 9;
    run_cfg("batched src", &c, "gated_mlp_v1", true, true);
    c.nbs = 2, c.bs[0] = 2, c.bs[1] = 1;
    c.nbw = 1, c.bw[0] = 3;
    c.tb_up = true;
    run_cfg("batched weights broadcast", &c, "gated_mlp_v1", true, true);
    c = base_cfg();
    c.nbd = 2, c.bd[0] = 2, c.bd[1] = 3;
    c.M = 3;
    run_cfg("batched down weight", &c, "gated_mlp_v1", true, true);
    c = base_cfg();
    c.src_padded = true;
    c.bias_gate = c.bias_down = true;
    c.nbs = 1, c.bs[0] = 2;
    run_cfg("padded src + biases", &c, "gated_mlp_v1", true, true);

    /* bf16 / f16: with f32 intermediates and a TypeCast, and all narrow. */
    static const dnnl_data_type_t narrow[] = {dnnl_bf16, dnnl_f16};
    for (int i = 0; i < 2; ++i) {
        c = base_cfg();
        c.dt = narrow[i];
        c.cast = true;
        c.M = 9, c.K = 140, c.N = 131, c.O = 66;
        run_cfg(i ? "f16 f32 cast" : "bf16 f32 cast", &c, "gated_mlp_v1", true, true);
        c.cast = false;
        c.mid_dt = narrow[i];
        c.act = ACT_UNARY;
        c.act_kind = dnnl_graph_op_gelu;
        run_cfg(i ? "f16 all narrow" : "bf16 all narrow", &c, "gated_mlp", true, true);
    }

    /* The kernel keeps combine input 0 (G) and the hidden values (H) in
     * their declared bf16 / f16, sharing one buffer when the types agree:
     * combines other than Multiply through their bound kernels, at decode
     * and prompt rows; a bf16 G next to an f32 H. */
    static const dnnl_graph_op_kind_t narrow_combs[] = {dnnl_graph_op_add, dnnl_graph_op_maximum,
                                                        dnnl_graph_op_divide};
    static const int64_t narrow_rows[] = {1, 17};
    for (int i = 0; i < 2; ++i)
        for (size_t k = 0; k < sizeof narrow_combs / sizeof narrow_combs[0]; ++k)
            for (size_t r = 0; r < 2; ++r) {
                c = base_cfg();
                c.dt = c.mid_dt = narrow[i];
                c.comb = narrow_combs[k];
                c.M = narrow_rows[r], c.K = 33, c.N = 97, c.O = 19;
                char nm[64];
                snprintf(nm, sizeof nm, "%s all narrow, combine %d, M=%lld", i ? "f16" : "bf16", (int)c.comb,
                         (long long)c.M);
                run_cfg(nm, &c, "gated_mlp_v1", true, true);
            }
    for (size_t r = 0; r < 2; ++r) {
        c = base_cfg();
        c.dt = c.mid_dt = dnnl_bf16;
        c.cast = true;
        c.down_dt = dnnl_f32;
        c.M = narrow_rows[r], c.K = 40, c.N = 131, c.O = 21;
        char nm[64];
        snprintf(nm, sizeof nm, "bf16 intermediates, f32 hidden, M=%lld", (long long)c.M);
        run_cfg(nm, &c, "gated_mlp_v1", true, true);
    }

    /* Non-strict math modes round the f32 operands of every MatMul. */
    static const dnnl_fpmath_mode_t modes[] = {dnnl_fpmath_mode_bf16, dnnl_fpmath_mode_f16, dnnl_fpmath_mode_tf32};
    for (int i = 0; i < 3; ++i) {
        c = base_cfg();
        c.fpmath = modes[i];
        c.M = 7, c.K = 45, c.N = 77, c.O = 13;
        run_cfg("fpmath", &c, "gated_mlp_v1", true, true);
    }

    /* Zero-size batch: compiles and runs as a no-op. */
    c = base_cfg();
    c.nbs = 1, c.bs[0] = 0;
    gdesc *g = malloc(sizeof *g);
    if (g) {
        build_mlp(g, &c);
        g->nres = 0; /* nothing to compare */
        check_graph("zero batch", g, "gated_mlp_v1", true, true);
        free(g);
    }

    /* A form the kernel declines (hidden read transposed): one partition, op by op. */
    c = base_cfg();
    c.M = c.N = 6;
    c.ta_down = true;
    run_cfg("declined: down transpose_a", &c, "gated_mlp_v1", true, false);
}

static void quant_cases(void) {
    /* The documented form: u4 weights, group_shape [1, G], f16 scales, u8 zps, f16
     * activations, math mode f16 with apply_to_int. */
    mlp_cfg c = base_cfg();
    c.dt = dnnl_f16;
    c.cast = true;
    c.M = 5, c.K = 96, c.N = 160, c.O = 64;
    c.fpmath = dnnl_fpmath_mode_f16;
    c.apply_to_int = 1;
    c.q[0] = qgroup(dnnl_u4, dnnl_f16, dnnl_u8, 1, 32);
    c.q[1] = c.q[0];
    c.q[2] = qgroup(dnnl_u4, dnnl_f16, dnnl_u8, 1, 16);
    run_cfg("u4 group [1,G] f16 scales u8 zps", &c, "quantized_gated_mlp_v1", true, true);
    c.act = ACT_UNARY;
    c.act_kind = dnnl_graph_op_gelu;
    c.M = 67;
    run_cfg("u4 gelu", &c, "quantized_gated_mlp", true, true);

    /* Groups along K, transposed weights, s4 with s4 zps, odd K. */
    c = base_cfg();
    c.dt = dnnl_f16;
    c.cast = true;
    c.M = 3, c.K = 27, c.N = 66, c.O = 10;
    c.fpmath = dnnl_fpmath_mode_f16;
    c.apply_to_int = 1;
    c.tb_gate = c.tb_down = true;
    c.q[0] = qgroup(dnnl_s4, dnnl_f16, dnnl_s4, 1, 9);                 /* gate stored [N, K] */
    c.q[1] = qgroup(dnnl_u4, dnnl_f16, dnnl_data_type_undef, 3, 1);    /* up stored [K, N] */
    c.q[2] = qgroup(dnnl_s4, dnnl_f16, dnnl_s32, 2, 11);               /* down stored [O, N] */
    run_cfg("s4/u4 groups along K, transposed", &c, "quantized_gated_mlp_v1", true, true);

    /* int8 per_channel / per_tensor with f32 scales under math mode bf16. */
    c = base_cfg();
    c.M = 6, c.K = 33, c.N = 71, c.O = 17;
    c.fpmath = dnnl_fpmath_mode_bf16;
    c.apply_to_int = 1;
    c.q[0] = (quant_cfg){.on = true, .wdt = dnnl_s8, .sdt = dnnl_f32, .zdt = dnnl_s8, .qtype = "per_channel", .axis = 1};
    c.q[1] = (quant_cfg){.on = true, .wdt = dnnl_u8, .sdt = dnnl_f32, .zdt = dnnl_u8, .qtype = "per_tensor"};
    c.q[2] = (quant_cfg){.on = true, .wdt = dnnl_s8, .sdt = dnnl_f32, .zdt = dnnl_data_type_undef, .qtype = "per_channel", .axis = 0};
    run_cfg("int8 per_channel / per_tensor, fpmath bf16", &c, "quantized_gated_mlp_v1", true, true);

    /* bf16 scales, only gate and up compressed, batched src. */
    c = base_cfg();
    c.dt = dnnl_bf16;
    c.cast = true;
    c.nbs = 1, c.bs[0] = 2;
    c.M = 4, c.K = 64, c.N = 48, c.O = 7;
    c.q[0] = qgroup(dnnl_u4, dnnl_bf16, dnnl_u4, 1, 16);
    c.q[1] = qgroup(dnnl_u4, dnnl_bf16, dnnl_u4, 1, 16);
    run_cfg("u4 gate/up only, bf16", &c, "quantized_gated_mlp_v1", true, true);
}

/* The engine's paths: decode rows (M <= 4: weights streamed in their own
 * type), prompt rows (packed panels), row blocks of a wide hidden layer,
 * odd sizes and tails of the 32-column microkernel. */
static void engine_cases(void) {
    static const int64_t rows[] = {1, 2, 3, 4, 5, 17, 64, 200};
    char nm[96];
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; ++i) {
        mlp_cfg c = base_cfg();
        c.M = rows[i], c.K = 96, c.N = 161, c.O = 33;
        c.bias_gate = c.bias_down = i % 2 == 1;
        snprintf(nm, sizeof nm, "engine swish M=%lld", (long long)c.M);
        run_cfg(nm, &c, "gated_mlp_v1", true, true);
        c.act = ACT_UNARY;
        c.act_kind = i % 3 == 0 ? dnnl_graph_op_gelu : i % 3 == 1 ? dnnl_graph_op_relu : dnnl_graph_op_elu;
        c.K = 33 + 32 * (int64_t)(i % 3), c.N = 31 + (int64_t)i, c.O = 65;
        snprintf(nm, sizeof nm, "engine unary %d M=%lld", (int)c.act_kind, (long long)c.M);
        run_cfg(nm, &c, "gated_mlp", true, true);
    }
    static const int64_t odd[][4] = {{1, 1, 1, 1}, {1, 1, 33, 1}, {2, 7, 1, 5}, {17, 1, 1, 31}, {4, 63, 95, 97}};
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; ++i) {
        mlp_cfg c = base_cfg();
        c.M = odd[i][0], c.K = odd[i][1], c.N = odd[i][2], c.O = odd[i][3];
        snprintf(nm, sizeof nm, "engine odd %lldx%lldx%lldx%lld", (long long)c.M, (long long)c.K, (long long)c.N,
                 (long long)c.O);
        run_cfg(nm, &c, "gated_mlp_v1", true, true);
    }
    /* A hidden layer wide enough for two row blocks (and a shorter last one). */
    mlp_cfg w = base_cfg();
    w.M = 301, w.K = 8, w.N = 40000, w.O = 3;
    w.bias_gate = true;
    run_cfg("engine two row blocks", &w, "gated_mlp_v1", true, true);

    /* Narrow types at decode and prompt rows. */
    static const dnnl_data_type_t narrow[] = {dnnl_bf16, dnnl_f16};
    static const int64_t nrows[] = {1, 4, 17};
    for (int t = 0; t < 2; ++t)
        for (size_t i = 0; i < 3; ++i) {
            mlp_cfg c = base_cfg();
            c.dt = narrow[t];
            c.cast = true;
            c.M = nrows[i], c.K = 128, c.N = 97, c.O = 40;
            c.bias_down = i == 1;
            snprintf(nm, sizeof nm, "engine %s cast M=%lld", t ? "f16" : "bf16", (long long)c.M);
            run_cfg(nm, &c, "gated_mlp_v1", true, true);
            c.cast = false;
            c.mid_dt = narrow[t];
            snprintf(nm, sizeof nm, "engine %s all narrow M=%lld", t ? "f16" : "bf16", (long long)c.M);
            run_cfg(nm, &c, "gated_mlp_v1", true, true);
        }

    /* Every math mode at decode and prompt rows. */
    static const dnnl_fpmath_mode_t modes[] = {dnnl_fpmath_mode_strict, dnnl_fpmath_mode_bf16, dnnl_fpmath_mode_f16,
                                               dnnl_fpmath_mode_tf32, dnnl_fpmath_mode_any};
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; ++i)
        for (int m = 0; m < 2; ++m) {
            mlp_cfg c = base_cfg();
            c.fpmath = modes[i];
            c.M = m ? 19 : 1, c.K = 64, c.N = 95, c.O = 37;
            snprintf(nm, sizeof nm, "engine mode %d M=%lld", (int)modes[i], (long long)c.M);
            run_cfg(nm, &c, "gated_mlp_v1", true, true);
        }
}

/* Compressed weights on the engine's dequantising operand, under every
 * math mode with and without apply_to_int; groups along n take the dense
 * copy. */
static void engine_quant_cases(void) {
    char nm[96];
    static const int64_t rows[] = {1, 3, 64};
    for (size_t i = 0; i < 3; ++i) {
        mlp_cfg c = base_cfg();
        c.M = rows[i], c.K = 128, c.N = 112, c.O = 65;
        c.q[0] = qgroup(dnnl_u4, dnnl_f32, dnnl_u8, 32, 1);
        c.q[1] = qgroup(dnnl_s4, dnnl_f32, dnnl_s4, 64, 1);
        c.q[2] = qgroup(dnnl_u4, dnnl_f32, dnnl_data_type_undef, 16, 1);
        snprintf(nm, sizeof nm, "engine int4 groups along k M=%lld", (long long)c.M);
        run_cfg(nm, &c, "quantized_gated_mlp_v1", true, true);
        c.q[0] = (quant_cfg){.on = true, .wdt = dnnl_s8, .sdt = dnnl_f32, .zdt = dnnl_s8, .qtype = "per_channel",
                             .axis = 1};
        c.q[1] = qgroup(dnnl_u8, dnnl_f32, dnnl_u8, 32, 1);
        c.q[2] = (quant_cfg){.on = true, .wdt = dnnl_s8, .sdt = dnnl_f32, .zdt = dnnl_data_type_undef,
                             .qtype = "per_tensor"};
        snprintf(nm, sizeof nm, "engine int8 M=%lld", (long long)c.M);
        run_cfg(nm, &c, "quantized_gated_mlp_v1", true, true);
        c.q[0] = qgroup(dnnl_u4, dnnl_f32, dnnl_u8, 4, 8); /* groups along n too: dense copy */
        snprintf(nm, sizeof nm, "engine int4 groups along k and n M=%lld", (long long)c.M);
        run_cfg(nm, &c, "quantized_gated_mlp_v1", true, true);
    }
    static const dnnl_fpmath_mode_t modes[] = {dnnl_fpmath_mode_strict, dnnl_fpmath_mode_bf16, dnnl_fpmath_mode_f16,
                                               dnnl_fpmath_mode_tf32, dnnl_fpmath_mode_any};
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; ++i)
        for (int ati = 0; ati < 2; ++ati)
            for (int m = 0; m < 2; ++m) {
                mlp_cfg c = base_cfg();
                c.fpmath = modes[i];
                c.apply_to_int = ati;
                c.M = m ? 9 : 1, c.K = 96, c.N = 70, c.O = 33;
                /* The engine keeps integer weights exact unless apply_to_int
                 * (docs/numerics.md) where the reference rounds them to the
                 * mode: scales of 2^-k make both the same value. */
                c.q[0] = qgroup(dnnl_u4, dnnl_f32, dnnl_u8, 32, 1);
                c.q[0].pow2 = true;
                c.q[1] = c.q[0];
                c.q[2] = qgroup(dnnl_s8, dnnl_f32, dnnl_data_type_undef, 35, 1);
                c.q[2].pow2 = true;
                snprintf(nm, sizeof nm, "engine int mode %d apply_to_int %d M=%lld", (int)modes[i], ati,
                         (long long)c.M);
                run_cfg(nm, &c, "quantized_gated_mlp_v1", true, true);
            }
    /* bf16 activations with int4 weights. */
    mlp_cfg c = base_cfg();
    c.dt = dnnl_bf16;
    c.cast = true;
    c.M = 2, c.K = 256, c.N = 64, c.O = 32;
    c.q[0] = qgroup(dnnl_u4, dnnl_bf16, dnnl_u4, 128, 1);
    c.q[1] = c.q[0];
    c.q[2] = qgroup(dnnl_u4, dnnl_bf16, dnnl_u4, 32, 1);
    run_cfg("engine int4 bf16 decode", &c, "quantized_gated_mlp_v1", true, true);
}

/* Constant weights: packed once where packing pays, run again, then with
 * other weights in the same and in other buffers. */
static void constant_cases(void) {
    CHECK(dnnl_graph_set_constant_tensor_cache_capacity(dnnl_cpu, 64) == dnnl_success);
    static const int64_t rows[] = {1, 37};
    for (int i = 0; i < 2; ++i) {
        mlp_cfg c = base_cfg();
        c.constant = true;
        c.M = rows[i], c.K = 96, c.N = 130, c.O = 35;
        c.bias_gate = true;
        run_cfg(i ? "constant f32 M=37" : "constant f32 M=1", &c, "gated_mlp_v1", true, true);
        c.q[0] = qgroup(dnnl_u4, dnnl_f32, dnnl_u8, 32, 1);
        c.q[1] = c.q[0];
        c.q[2] = qgroup(dnnl_s8, dnnl_f32, dnnl_data_type_undef, 65, 1);
        run_cfg(i ? "constant int M=37" : "constant int M=1", &c, "quantized_gated_mlp_v1", true, true);
        c = base_cfg();
        c.constant = true;
        c.dt = dnnl_bf16;
        c.cast = true;
        c.fpmath = dnnl_fpmath_mode_bf16;
        c.M = rows[i] + 3, c.K = 64, c.N = 33, c.O = 50;
        run_cfg(i ? "constant bf16 M=40" : "constant bf16 M=4", &c, "gated_mlp_v1", true, true);
    }
    CHECK(dnnl_graph_set_constant_tensor_cache_capacity(dnnl_cpu, 0) == dnnl_success);
    CHECK_EQ_INT(pt_const_cache_entries(), 0);
    /* Cache off: the engine packs per block on every run. */
    mlp_cfg c = base_cfg();
    c.constant = true;
    c.M = 20;
    run_cfg("constant, cache off", &c, "gated_mlp_v1", true, true);
}

static void negative_cases(void) {
    static const struct {
        int neg;
        const char *name;
    } negs[] = {{NEG_SRC_NOT_SHARED, "neg: src not shared"},
                {NEG_ACT_SOFTMAX, "neg: act SoftMax (not UNARY)"},
                {NEG_HIDDEN_OUT, "neg: hidden has an outside consumer"},
                {NEG_GATE_OUT, "neg: gate output has an outside consumer"}};
    for (size_t i = 0; i < sizeof negs / sizeof negs[0]; ++i) {
        mlp_cfg c = base_cfg();
        c.neg = negs[i].neg;
        if (c.neg == NEG_ACT_SOFTMAX) c.act = ACT_NONE;
        run_cfg(negs[i].name, &c, NULL, false, false);
    }
    /* Gate branch at input 1 of a Subtract: not the pattern (only the
     * commutative kinds may swap). */
    mlp_cfg c = base_cfg();
    c.comb = dnnl_graph_op_subtract;
    c.neg = NEG_GATE_RIGHT;
    run_cfg("neg: gate at Subtract input 1", &c, NULL, false, false);
    c.act = ACT_UNARY;
    c.act_kind = dnnl_graph_op_relu;
    run_cfg("neg: gate (ReLU) at Subtract input 1", &c, NULL, false, false);

    /* A compressed weight whose dequantized value is also read outside: the
     * quantized rows cannot take it, gated_mlp_v1 takes the float part. */
    c = base_cfg();
    c.q[0] = qgroup(dnnl_u8, dnnl_f32, dnnl_u8, 1, 10);
    c.N = 70;
    c.neg = NEG_DQ_OUT;
    run_cfg("neg: dequantized weight read outside", &c, "gated_mlp_v1", false, true);
}

int main(void) {
    tg_setup();
    float_cases();
    quant_cases();
    engine_cases();
    engine_quant_cases();
    constant_cases();
    negative_cases();
    printf("gated MLP: %d graphs run, %d through the fused kernel\n", cases_run, cases_fused);
    tg_teardown();
    return pt_test_summary("test_int_gated_mlp");
}
