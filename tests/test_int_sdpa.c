/* SDPA forward fusion (docs/fusion.md, SDPA): graphs built through the public
 * API must form one partition that runs through the fused kernel, and give
 * the results of the debug-policy run (every op alone, reference kernels).
 * The fused kernel accumulates in f32 on the GEMM microkernels in every math
 * mode, so results must agree within the tolerance of test_sdpa_tol.h, in
 * strict and in the non-strict partition math modes.  Negative
 * graphs (an intermediate with an outside consumer, SoftMax on another axis)
 * must not become one partition and still compute the same values.  Dropout
 * runs inside the fused kernel (same Philox words as the reference). */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "test_graph_util.h"
#include "test_sdpa_tol.h"

typedef tg_graph gdesc;
typedef tg_op op_d;

/* ---- graph description ---------------------------------------------------- */

enum { F_RAND = TG_V_RAND, F_MASK = TG_V_MASK, F_BOOL = TG_V_BOOL, F_CONST = TG_V_CONST };

static size_t tensor(gdesc *g, dnnl_data_type_t dt, int nd, const int64_t *dims, const int64_t *strides) {
    return tg_tensor(g, dt, nd, dims, strides);
}

static size_t tensor_fill(gdesc *g, dnnl_data_type_t dt, int nd, const int64_t *dims, const int64_t *strides,
                          int fill, float v) {
    size_t id = tensor(g, dt, nd, dims, strides);
    g->fill[id - 1] = fill;
    g->fv[id - 1] = v;
    return id;
}

static uint32_t rng = 12345u;

/* Masks: mostly finite negatives, some -inf. */
static void fill_input(const gdesc *g, int t, void *buf) {
    tg_attn_fill f = {&rng, g->fill[t], (float)g->fv[t], -0.8f, 0.6f};
    tg_fill(&g->lt[t], buf, tg_attn_value, &f);
}

/* ---- running a graph ----------------------------------------------------- */

/* Non-strict partition math modes a check runs in besides strict (bits). */
enum { M_ANY = 1, M_BF16 = 2, M_F16 = 4, M_TF32 = 8, M_ALL = 15 };

/* Runs `g` under the debug policy (reference) and the fusion policy, checks
 * the partition count (want_parts > 0: exact; -1: more than one) and the
 * fused kernel use, and compares every result.  `modes` (M_* bits; true
 * means M_ANY) adds fusion runs under non-strict partition math modes. */
static void check_graph(const char *name, gdesc *g, int want_parts, bool want_fused, unsigned modes) {
    static const struct {
        unsigned bit;
        dnnl_fpmath_mode_t mode;
    } mode_runs[] = {{M_ANY, dnnl_fpmath_mode_any},
                     {M_BF16, dnnl_fpmath_mode_bf16},
                     {M_F16, dnnl_fpmath_mode_f16},
                     {M_TF32, dnnl_fpmath_mode_tf32}};
    const tg_graph *sets[3] = {g, g, g};
    tg_bufs B;
    tg_bufs_alloc(&B, sets, modes ? 3 : 2, fill_input);
    void **ref = B.set[0], **got = B.set[1], **got2 = B.set[2];
    tg_run_info ri, fi, oi;
    bool ok = tg_run(g, &(tg_run_opts){.policy = dnnl_graph_partition_policy_debug, .reference = true}, ref, &ri);
    CHECK(ok);
    ok = ok && tg_run(g, &(tg_run_opts){.policy = dnnl_graph_partition_policy_fusion}, got, &fi);
    CHECK(ok);
    if (ok) {
        int nfused = tg_count_fused(&fi, "sdp");
        CHECK_EQ_INT(ri.nparts, g->nop);
        if (want_parts > 0) CHECK_EQ_INT(fi.nparts, want_parts);
        else CHECK(fi.nparts > 1);
        CHECK_EQ_INT(nfused, want_fused ? 1 : 0);
        if (nfused != (want_fused ? 1 : 0) || (want_parts > 0 && fi.nparts != want_parts))
            fprintf(stderr, "  %s: %d partitions, %d fused\n", name, fi.nparts, nfused);
        for (int r = 0; r < g->nres; ++r) {
            size_t t = g->result[r] - 1;
            /* The fused kernel accumulates in f32 in another order
             * (test_sdpa_tol.h); so do MatMuls left to the GEMM engine. */
            if (want_fused && want_parts == 1)
                sdpa_check(name, &g->lt[t], ref[t], got[t], sdpa_eps(g, dnnl_fpmath_mode_strict), 0);
            else
                tg_check_values(name, &g->lt[t], ref[t], got[t], tg_engine_tol);
        }
    }
    for (size_t m = 0; ok && m < sizeof mode_runs / sizeof mode_runs[0]; ++m) {
        if (!(modes & mode_runs[m].bit)) continue;
        tg_run_opts o = {.policy = dnnl_graph_partition_policy_fusion, .part_mode = mode_runs[m].mode};
        ok = tg_run(g, &o, got2, &oi);
        CHECK(ok);
        CHECK_EQ_INT(tg_count_fused(&oi, "sdp"), 1);
        for (int r = 0; ok && r < g->nres; ++r) {
            size_t t = g->result[r] - 1;
            sdpa_check(name, &g->lt[t], ref[t], got2[t], sdpa_eps(g, mode_runs[m].mode), 0);
        }
    }
    tg_bufs_free(&B);
}

/* ---- SDPA graph builder -------------------------------------------------- */

enum { SC_NONE, SC_MUL, SC_MUL_LEFT, SC_DIV };
enum { MK_NONE, MK_ADD, MK_CAUSAL_TL, MK_CAUSAL_BR, MK_SELECT, MK_SELECT_ELSE };
enum { OUT_PLAIN, OUT_TRANSPOSE_REORDER, OUT_TRANSPOSE_RESHAPE };

typedef struct {
    dnnl_data_type_t dt;    /* Q, K, V, O */
    dnnl_data_type_t p_dt;  /* SoftMax output */
    bool cast;              /* SoftMax output f32, TypeCast to dt before the second MatMul */
    int64_t n, h, hkv;      /* hkv != h: 5-D GQA [N, hkv, h/hkv, S, D] with K/V broadcast */
    int64_t sq, skv, d, dv;
    int scale;
    bool scale_host;        /* 0-D host-scalar factor */
    dnnl_data_type_t scale_dt;
    int mask;
    int mask_nd;
    int64_t mask_dims[5];
    bool mask_strided;      /* padded rows in the mask buffer */
    dnnl_data_type_t mask_dt;
    bool bshd;              /* Q/K/V are [N,S,H,D] buffers viewed as [N,H,S,D] */
    bool k_dxs;             /* K given as [.., D, S_kv] (transpose_b = false) */
    int out;
    bool stats;
    const char *mode;
    int64_t axis;           /* SoftMax axis attribute (-1 or rank-1) */
} sdpa_cfg;

static sdpa_cfg base_cfg(void) {
    sdpa_cfg c;
    memset(&c, 0, sizeof c);
    c.dt = c.p_dt = dnnl_f32;
    c.n = 2, c.h = c.hkv = 3, c.sq = 7, c.skv = 33, c.d = c.dv = 16;
    c.scale = SC_MUL;
    c.scale_dt = dnnl_f32;
    c.mask_dt = dnnl_f32;
    c.mode = "inf_as_zero";
    c.axis = -1;
    return c;
}

/* Batch dims of a [.., S, D] operand: 4-D [N, H] or 5-D GQA [N, Hkv, rep]. */
static int batch_dims(const sdpa_cfg *c, bool kv, int64_t *b) {
    if (c->hkv == c->h) {
        b[0] = c->n, b[1] = c->h;
        return 2;
    }
    b[0] = c->n, b[1] = c->hkv, b[2] = kv ? 1 : c->h / c->hkv;
    return 3;
}

/* A [batch.., rows, cols] operand; with bshd, a [N, rows, H, cols] buffer. */
static size_t operand(gdesc *g, const sdpa_cfg *c, bool kv, int64_t rows, int64_t cols, bool swap) {
    int64_t dims[5], st[5];
    int nb = batch_dims(c, kv, dims);
    dims[nb] = swap ? cols : rows;
    dims[nb + 1] = swap ? rows : cols;
    if (!c->bshd || nb != 2) return tensor(g, c->dt, nb + 2, dims, NULL);
    int64_t h = dims[1];
    st[0] = rows * h * cols, st[1] = cols;
    int64_t srow = h * cols, scol = 1;
    st[2] = swap ? scol : srow;
    st[3] = swap ? srow : scol;
    return tensor(g, c->dt, 4, dims, st);
}

/* StaticReshape `from` -> `to` with an explicit shape. */
static void reshape(gdesc *g, size_t from, size_t to, const int64_t *shape, int nd) {
    op_d *r = tg_add(g, dnnl_graph_op_static_reshape, 1, &from, 1, &to);
    tg_attr_s64(r, dnnl_graph_op_attr_shape, shape, nd);
    tg_attr_bool(r, dnnl_graph_op_attr_special_zero, false);
}

static void build_sdpa(gdesc *g, const sdpa_cfg *c) {
    memset(g, 0, sizeof *g);
    int64_t ob[5];
    int nb = batch_dims(c, false, ob);
    int64_t sdims[6];
    memcpy(sdims, ob, sizeof(int64_t) * (size_t)nb);
    sdims[nb] = c->sq, sdims[nb + 1] = c->skv;
    const int sr = nb + 2;

    size_t q = operand(g, c, false, c->sq, c->d, false);
    size_t k = operand(g, c, true, c->skv, c->d, c->k_dxs);
    size_t v = operand(g, c, true, c->skv, c->dv, false);
    size_t s = tensor(g, dnnl_f32, sr, sdims, NULL);
    op_d *mm1 = tg_add(g, dnnl_graph_op_matmul, 2, (size_t[]){q, k}, 1, &s);
    tg_attr_bool(mm1, dnnl_graph_op_attr_transpose_b, !c->k_dxs);

    if (c->scale != SC_NONE) {
        int64_t one[1] = {1};
        size_t f = c->scale_host ? tensor_fill(g, dnnl_f32, 0, one, NULL, F_CONST, 0.f)
                                 : tensor_fill(g, c->scale_dt, 1, one, NULL, F_CONST, 0.f);
        float d = (float)sqrt((double)(c->d > 0 ? c->d : 1));
        g->fv[f - 1] = c->scale == SC_DIV ? d : 1.f / d;
        if (c->scale_host) g->lt[f - 1].property = dnnl_graph_tensor_property_host_scalar;
        size_t s2 = tensor(g, dnnl_f32, sr, sdims, NULL);
        dnnl_graph_op_kind_t kind = c->scale == SC_DIV ? dnnl_graph_op_divide : dnnl_graph_op_multiply;
        tg_add(g, kind, 2, c->scale == SC_MUL_LEFT ? (size_t[]){f, s} : (size_t[]){s, f}, 1, &s2);
        s = s2;
    }
    if (c->mask == MK_ADD) {
        int64_t st[5];
        const int64_t *stp = NULL;
        if (c->mask_strided) { /* rows padded by 3 elements */
            int64_t acc = 1;
            for (int d = c->mask_nd - 1; d >= 0; --d) {
                st[d] = acc;
                acc *= c->mask_dims[d] + (d == c->mask_nd - 1 ? 3 : 0);
            }
            stp = st;
        }
        size_t m = tensor_fill(g, c->mask_dt, c->mask_nd, c->mask_dims, stp, F_MASK, 0.f);
        size_t s2 = tensor(g, dnnl_f32, sr, sdims, NULL);
        tg_add(g, dnnl_graph_op_add, 2, (size_t[]){s, m}, 1, &s2);
        s = s2;
    } else if (c->mask == MK_CAUSAL_TL || c->mask == MK_CAUSAL_BR) {
        size_t row = tensor(g, dnnl_s32, sr, sdims, NULL), col = tensor(g, dnnl_s32, sr, sdims, NULL);
        tg_attr_s64(tg_add(g, dnnl_graph_op_gen_index, 1, &s, 1, &row), dnnl_graph_op_attr_axis, (int64_t[]){-2}, 1);
        tg_attr_s64(tg_add(g, dnnl_graph_op_gen_index, 1, &s, 1, &col), dnnl_graph_op_attr_axis, (int64_t[]){sr - 1}, 1);
        if (c->mask == MK_CAUSAL_BR) {
            int64_t none[1] = {1};
            size_t skv = tensor_fill(g, dnnl_s32, 0, none, NULL, F_CONST, (float)c->skv);
            size_t sq = tensor_fill(g, dnnl_s32, 0, none, NULL, F_CONST, (float)c->sq);
            g->lt[skv - 1].property = g->lt[sq - 1].property = dnnl_graph_tensor_property_host_scalar;
            size_t r1 = tensor(g, dnnl_s32, sr, sdims, NULL), r2 = tensor(g, dnnl_s32, sr, sdims, NULL);
            tg_add(g, dnnl_graph_op_add, 2, (size_t[]){skv, row}, 1, &r1); /* commuted on purpose */
            tg_add(g, dnnl_graph_op_subtract, 2, (size_t[]){r1, sq}, 1, &r2);
            row = r2;
        }
        size_t ge = tensor(g, dnnl_boolean, sr, sdims, NULL);
        tg_add(g, dnnl_graph_op_greater_equal, 2, (size_t[]){row, col}, 1, &ge);
        int64_t one[1] = {1};
        size_t fill = tensor_fill(g, dnnl_f32, 1, one, NULL, F_CONST, -INFINITY);
        size_t s2 = tensor(g, dnnl_f32, sr, sdims, NULL);
        tg_add(g, dnnl_graph_op_select, 3, (size_t[]){ge, s, fill}, 1, &s2);
        s = s2;
    } else if (c->mask == MK_SELECT || c->mask == MK_SELECT_ELSE) {
        size_t cond = tensor_fill(g, dnnl_boolean, c->mask_nd, c->mask_dims, NULL, F_BOOL, 0.f);
        int64_t one[1] = {1};
        size_t fill = tensor_fill(g, dnnl_f32, 1, one, NULL, F_CONST, -1e9f);
        size_t s2 = tensor(g, dnnl_f32, sr, sdims, NULL);
        tg_add(g, dnnl_graph_op_select, 3,
            c->mask == MK_SELECT ? (size_t[]){cond, s, fill} : (size_t[]){cond, fill, s}, 1, &s2);
        s = s2;
    }

    size_t p = tensor(g, c->cast ? dnnl_f32 : c->p_dt, sr, sdims, NULL);
    size_t smo[2] = {p, 0};
    if (c->stats) {
        int64_t stdims[6];
        memcpy(stdims, sdims, sizeof stdims);
        stdims[sr - 1] = 1;
        smo[1] = tensor(g, dnnl_f32, sr, stdims, NULL);
    }
    op_d *sm = tg_add(g, dnnl_graph_op_softmax, 1, &s, c->stats ? 2 : 1, smo);
    tg_attr_s64(sm, dnnl_graph_op_attr_axis, &c->axis, 1);
    tg_attr_str(sm, dnnl_graph_op_attr_mode, c->mode);
    if (c->cast) {
        size_t p2 = tensor(g, c->dt, sr, sdims, NULL);
        tg_add(g, dnnl_graph_op_type_cast, 1, &p, 1, &p2);
        p = p2;
    }
    int64_t odims[6];
    memcpy(odims, ob, sizeof(int64_t) * (size_t)nb);
    odims[nb] = c->sq, odims[nb + 1] = c->dv;
    size_t o = tensor(g, c->dt, sr, odims, NULL);
    tg_add(g, dnnl_graph_op_matmul, 2, (size_t[]){p, v}, 1, &o);
    if (c->out != OUT_PLAIN) { /* [N, H, S, Dv] → [N, S, H, Dv] → Reorder / [N, S, H·Dv] */
        int64_t tdims[4] = {c->n, c->sq, c->h, c->dv};
        size_t t = tensor(g, c->dt, 4, tdims, NULL);
        tg_attr_s64(tg_add(g, dnnl_graph_op_static_transpose, 1, &o, 1, &t), dnnl_graph_op_attr_order,
                 (int64_t[]){0, 2, 1, 3}, 4);
        if (c->out == OUT_TRANSPOSE_REORDER) {
            int64_t st[4] = {c->sq * (c->h * c->dv + 2) + 5, c->h * c->dv + 2, c->dv, 1}; /* padded output */
            size_t r = tensor(g, c->dt, 4, tdims, st);
            tg_add(g, dnnl_graph_op_reorder, 1, &t, 1, &r);
            o = r;
        } else {
            int64_t rdims[3] = {c->n, c->sq, c->h * c->dv};
            size_t r = tensor(g, c->dt, 3, rdims, NULL);
            reshape(g, t, r, rdims, 3);
            o = r;
        }
    }
    g->result[g->nres++] = o;
    if (c->stats) g->result[g->nres++] = smo[1];
}

static void check_cfg(const char *name, const sdpa_cfg *c, unsigned online) {
    static gdesc g;
    build_sdpa(&g, c);
    check_graph(name, &g, 1, true, online);
}

/* ---- cases ---------------------------------------------------------------- */

static void test_sizes(void) {
    const int64_t seqs[] = {1, 7, 33, 100}, heads[] = {1, 16, 17, 64};
    char name[96];
    for (int i = 0; i < 16; ++i) {
        const int a = i / 4, b = i % 4;
        sdpa_cfg c = base_cfg();
        tg_attn_sizes z = tg_attn_grid(seqs, heads, a, b, 0, "sizes", name, sizeof name);
        c.sq = z.sq, c.skv = z.skv, c.d = z.d, c.dv = z.dv;
        c.n = 1 + (a & 1);
        c.h = c.hkv = 2 + (b & 1);
        c.scale = (a + b) % 2 ? SC_DIV : SC_MUL;
        check_cfg(name, &c, b == 0 || a == 3);
    }
    /* Key counts past the exact order's score cache (every pass recomputes
     * the scores), with tails of the query and key blocks. */
    const int64_t longs[][4] = {{45, 700, 32, 24}, {1, 1031, 16, 16}, {70, 513, 8, 40}, {3, 2500, 64, 48}};
    for (int a = 0; a < 4; ++a) {
        sdpa_cfg c = base_cfg();
        c.n = 1, c.h = c.hkv = 2;
        c.sq = longs[a][0], c.skv = longs[a][1], c.d = longs[a][2], c.dv = longs[a][3];
        c.mask = a == 1 ? MK_NONE : MK_ADD;
        c.mask_nd = 4;
        c.mask_dims[0] = 1, c.mask_dims[1] = 1, c.mask_dims[2] = c.sq, c.mask_dims[3] = c.skv;
        c.stats = a != 1;
        snprintf(name, sizeof name, "long sq=%lld skv=%lld d=%lld dv=%lld", (long long)c.sq, (long long)c.skv,
                 (long long)c.d, (long long)c.dv);
        check_cfg(name, &c, true);
    }
}

static void test_scales_and_masks(void) {
    static const struct {
        int scale;
        bool host, online;
        const char *name;
    } scales[] = {{SC_NONE, false, true, "no scale, no mask"},
                  {SC_MUL_LEFT, false, false, "scale factor at Multiply input 0"},
                  {SC_DIV, true, true, "Divide by a host scalar"}};
    sdpa_cfg c;
    for (size_t i = 0; i < sizeof scales / sizeof scales[0]; ++i) {
        c = base_cfg();
        c.scale = scales[i].scale;
        c.scale_host = scales[i].host;
        check_cfg(scales[i].name, &c, scales[i].online);
    }

    /* Explicit masks broadcast from several shapes, dense and padded. */
    const int64_t shapes[][5] = {{2, 1, 1, 33}, {1, 1, 7, 33}, {2, 3, 7, 33}, {33}, {7, 33}};
    const int nds[] = {4, 4, 4, 1, 2};
    for (int i = 0; i < 5; ++i) {
        c = base_cfg();
        c.mask = MK_ADD;
        c.mask_nd = nds[i];
        memcpy(c.mask_dims, shapes[i], sizeof shapes[i]);
        c.mask_strided = i == 1 || i == 2;
        check_cfg("explicit mask", &c, i == 2);
    }
    c = base_cfg();
    c.mask = MK_ADD, c.mask_nd = 4;
    memcpy(c.mask_dims, (int64_t[]){1, 1, 7, 33}, sizeof(int64_t) * 4);
    c.mode = "none";
    check_cfg("explicit mask, softmax mode none", &c, false);

    /* Causal masks: top-left and bottom-right, S_q < S_kv and S_q > S_kv
     * (the first rows of the latter are fully masked). */
    const int64_t sq[] = {7, 33, 1, 100}, skv[] = {33, 7, 100, 100};
    for (int i = 0; i < 4; ++i) {
        for (int br = 0; br < 2; ++br) {
            c = base_cfg();
            c.sq = sq[i], c.skv = skv[i];
            c.mask = br ? MK_CAUSAL_BR : MK_CAUSAL_TL;
            c.stats = i == 1;
            check_cfg(br ? "causal bottom-right" : "causal top-left", &c, i == 1);
        }
    }
    /* Masked fill (DistilBERT) with the scores chosen where cond is true / false. */
    c = base_cfg();
    c.mask = MK_SELECT, c.mask_nd = 4;
    memcpy(c.mask_dims, (int64_t[]){2, 1, 1, 33}, sizeof(int64_t) * 4);
    check_cfg("masked fill", &c, true);
    c.mask = MK_SELECT_ELSE;
    check_cfg("masked fill, scores in the else branch", &c, false);
}

static void test_layouts(void) {
    sdpa_cfg c = base_cfg();
    c.bshd = true;
    c.mask = MK_ADD, c.mask_nd = 4;
    memcpy(c.mask_dims, (int64_t[]){2, 1, 1, 33}, sizeof(int64_t) * 4);
    check_cfg("Q/K/V strided [N,S,H,D]", &c, true);
    c.k_dxs = true;
    check_cfg("K given as [D, S_kv]", &c, false);
    c = base_cfg();
    c.out = OUT_TRANSPOSE_REORDER;
    check_cfg("output transpose + reorder (padded)", &c, true);
    c.out = OUT_TRANSPOSE_RESHAPE;
    c.bshd = true;
    check_cfg("output transpose + reshape", &c, false);
    c = base_cfg();
    c.h = 8, c.hkv = 2;
    c.mask = MK_CAUSAL_BR;
    check_cfg("5-D GQA, K/V broadcast", &c, true);
    c.hkv = 1;
    c.mask = MK_ADD, c.mask_nd = 5;
    memcpy(c.mask_dims, (int64_t[]){2, 1, 1, 1, 33}, sizeof(int64_t) * 5);
    check_cfg("5-D MQA", &c, false);
    c = base_cfg();
    c.axis = 3; /* positive last axis */
    c.stats = true;
    check_cfg("softmax axis 3 with stats", &c, true);
    c = base_cfg();
    c.n = 0;
    check_cfg("zero batch", &c, false);
}

static void test_xf16(void) {
    for (int f = 0; f < 2; ++f) {
        dnnl_data_type_t dt = f ? dnnl_f16 : dnnl_bf16;
        sdpa_cfg c = base_cfg();
        c.dt = c.p_dt = dt;
        c.scale_dt = dt;
        c.mask = MK_ADD, c.mask_nd = 4, c.mask_dt = dt;
        memcpy(c.mask_dims, (int64_t[]){2, 1, 7, 33}, sizeof(int64_t) * 4);
        check_cfg(f ? "f16, softmax to f16" : "bf16, softmax to bf16", &c, true);
        c = base_cfg();
        c.dt = dt, c.cast = true;
        c.sq = 100, c.skv = 100, c.d = 17, c.dv = 64;
        c.mask = MK_CAUSAL_TL;
        c.stats = true;
        check_cfg(f ? "f16 with TypeCast" : "bf16 with TypeCast", &c, true);
        c = base_cfg();
        c.dt = c.p_dt = dt;
        c.h = 4, c.hkv = 2, c.bshd = false;
        c.out = OUT_PLAIN;
        c.mask = MK_CAUSAL_BR;
        check_cfg(f ? "f16 GQA" : "bf16 GQA", &c, false);
    }
}

/* GQA with explicit reshapes: 4-D Q/K/V/mask reshaped to 5-D inside
 * the partition, output reshaped back; Q strided as [N,S,H,D]. */
static void test_gqa_reshape(void) {
    static gdesc g;
    memset(&g, 0, sizeof g);
    const int64_t N = 2, HQ = 4, HKV = 2, R = HQ / HKV, S = 9, D = 16;
    size_t q = tensor(&g, dnnl_f32, 4, (int64_t[]){N, HQ, S, D}, (int64_t[]){S * HQ * D, D, HQ * D, 1});
    size_t k = tensor(&g, dnnl_f32, 4, (int64_t[]){N, HKV, S, D}, NULL);
    size_t v = tensor(&g, dnnl_f32, 4, (int64_t[]){N, HKV, S, D}, NULL);
    size_t m = tensor_fill(&g, dnnl_f32, 4, (int64_t[]){N, 1, 1, S}, NULL, F_MASK, 0.f);
    size_t q5 = tensor(&g, dnnl_f32, 5, (int64_t[]){N, HKV, R, S, D}, NULL);
    size_t k5 = tensor(&g, dnnl_f32, 5, (int64_t[]){N, HKV, 1, S, D}, NULL);
    size_t v5 = tensor(&g, dnnl_f32, 5, (int64_t[]){N, HKV, 1, S, D}, NULL);
    size_t m5 = tensor(&g, dnnl_f32, 5, (int64_t[]){N, 1, 1, 1, S}, NULL);
    const int64_t sd[5] = {N, HKV, R, S, S};
    size_t s = tensor(&g, dnnl_f32, 5, sd, NULL), s2 = tensor(&g, dnnl_f32, 5, sd, NULL);
    size_t s3 = tensor(&g, dnnl_f32, 5, sd, NULL), p = tensor(&g, dnnl_f32, 5, sd, NULL);
    size_t sc = tensor_fill(&g, dnnl_f32, 1, (int64_t[]){1}, NULL, F_CONST, 4.f);
    size_t o5 = tensor(&g, dnnl_f32, 5, (int64_t[]){N, HKV, R, S, D}, NULL);
    size_t o = tensor(&g, dnnl_f32, 4, (int64_t[]){N, HQ, S, D}, NULL);
    struct {
        size_t from, to;
        int64_t shape[5];
        int nd;
    } rs[] = {{q, q5, {N, HKV, R, S, D}, 5}, {k, k5, {N, HKV, 1, S, D}, 5}, {m, m5, {N, 1, 1, 1, S}, 5}};
    for (int i = 0; i < 3; ++i) reshape(&g, rs[i].from, rs[i].to, rs[i].shape, rs[i].nd);
    tg_attr_bool(tg_add(&g, dnnl_graph_op_matmul, 2, (size_t[]){q5, k5}, 1, &s), dnnl_graph_op_attr_transpose_b, true);
    tg_add(&g, dnnl_graph_op_divide, 2, (size_t[]){s, sc}, 1, &s2);
    tg_add(&g, dnnl_graph_op_add, 2, (size_t[]){s2, m5}, 1, &s3);
    tg_attr_s64(tg_add(&g, dnnl_graph_op_softmax, 1, &s3, 1, &p), dnnl_graph_op_attr_axis, (int64_t[]){-1}, 1);
    reshape(&g, v, v5, (int64_t[]){N, HKV, 1, S, D}, 5);
    tg_add(&g, dnnl_graph_op_matmul, 2, (size_t[]){p, v5}, 1, &o5);
    reshape(&g, o5, o, (int64_t[]){N, HQ, S, D}, 4);
    g.result[g.nres++] = o;
    check_graph("GQA with reshapes", &g, 1, true, true);
}

/* GPT form: Select before Divide and Add, output transposed + reordered;
 * Gemma form: soft-capping Tanh between two Multiplies. */
static void test_gpt_gemma(void) {
    static gdesc g;
    memset(&g, 0, sizeof g);
    const int64_t N = 1, H = 4, SQ = 5, SKV = 9, D = 8;
    const int64_t sd[4] = {N, H, SQ, SKV};
    size_t q = tensor(&g, dnnl_f32, 4, (int64_t[]){N, H, SQ, D}, (int64_t[]){SQ * H * D, D, H * D, 1});
    size_t k = tensor(&g, dnnl_f32, 4, (int64_t[]){N, H, D, SKV}, NULL);
    size_t v = tensor(&g, dnnl_f32, 4, (int64_t[]){N, H, SKV, D}, NULL);
    size_t cond = tensor_fill(&g, dnnl_boolean, 4, (int64_t[]){1, 1, SQ, SKV}, NULL, F_BOOL, 0.f);
    size_t fill = tensor_fill(&g, dnnl_f32, 0, (int64_t[]){1}, NULL, F_CONST, -3.4e38f);
    size_t dv = tensor_fill(&g, dnnl_f32, 0, (int64_t[]){1}, NULL, F_CONST, 2.f);
    size_t m = tensor_fill(&g, dnnl_f32, 4, (int64_t[]){1, 1, 1, SKV}, NULL, F_MASK, 0.f);
    size_t s = tensor(&g, dnnl_f32, 4, sd, NULL), s1 = tensor(&g, dnnl_f32, 4, sd, NULL);
    size_t s2 = tensor(&g, dnnl_f32, 4, sd, NULL), s3 = tensor(&g, dnnl_f32, 4, sd, NULL);
    size_t p = tensor(&g, dnnl_f32, 4, sd, NULL), o = tensor(&g, dnnl_f32, 4, (int64_t[]){N, H, SQ, D}, NULL);
    size_t t = tensor(&g, dnnl_f32, 4, (int64_t[]){N, SQ, H, D}, NULL);
    size_t out = tensor(&g, dnnl_f32, 4, (int64_t[]){N, SQ, H, D}, NULL);
    tg_add(&g, dnnl_graph_op_matmul, 2, (size_t[]){q, k}, 1, &s);
    tg_add(&g, dnnl_graph_op_select, 3, (size_t[]){cond, s, fill}, 1, &s1);
    tg_add(&g, dnnl_graph_op_divide, 2, (size_t[]){s1, dv}, 1, &s2);
    tg_add(&g, dnnl_graph_op_add, 2, (size_t[]){s2, m}, 1, &s3);
    tg_attr_s64(tg_add(&g, dnnl_graph_op_softmax, 1, &s3, 1, &p), dnnl_graph_op_attr_axis, (int64_t[]){3}, 1);
    tg_add(&g, dnnl_graph_op_matmul, 2, (size_t[]){p, v}, 1, &o);
    tg_attr_s64(tg_add(&g, dnnl_graph_op_static_transpose, 1, &o, 1, &t), dnnl_graph_op_attr_order,
             (int64_t[]){0, 2, 1, 3}, 4);
    tg_add(&g, dnnl_graph_op_reorder, 1, &t, 1, &out);
    g.result[g.nres++] = out;
    check_graph("GPT form", &g, 1, true, true);

    memset(&g, 0, sizeof g);
    q = tensor(&g, dnnl_bf16, 4, (int64_t[]){N, H, SQ, D}, NULL);
    k = tensor(&g, dnnl_bf16, 4, (int64_t[]){N, H, D, SKV}, NULL);
    v = tensor(&g, dnnl_bf16, 4, (int64_t[]){N, H, SKV, D}, NULL);
    size_t inv = tensor_fill(&g, dnnl_f32, 1, (int64_t[]){1}, NULL, F_CONST, 0.5f);
    size_t cap = tensor_fill(&g, dnnl_f32, 1, (int64_t[]){1}, NULL, F_CONST, 3.f);
    cond = tensor_fill(&g, dnnl_boolean, 4, (int64_t[]){N, H, SQ, SKV}, NULL, F_BOOL, 0.f);
    fill = tensor_fill(&g, dnnl_f32, 1, (int64_t[]){1}, NULL, F_CONST, -INFINITY);
    s = tensor(&g, dnnl_f32, 4, sd, NULL), s1 = tensor(&g, dnnl_f32, 4, sd, NULL);
    s2 = tensor(&g, dnnl_f32, 4, sd, NULL), s3 = tensor(&g, dnnl_f32, 4, sd, NULL);
    size_t s4 = tensor(&g, dnnl_f32, 4, sd, NULL);
    p = tensor(&g, dnnl_bf16, 4, sd, NULL), o = tensor(&g, dnnl_bf16, 4, (int64_t[]){N, H, SQ, D}, NULL);
    tg_add(&g, dnnl_graph_op_matmul, 2, (size_t[]){q, k}, 1, &s);
    tg_add(&g, dnnl_graph_op_multiply, 2, (size_t[]){s, inv}, 1, &s1);
    tg_add(&g, dnnl_graph_op_tanh, 1, &s1, 1, &s2);
    tg_add(&g, dnnl_graph_op_multiply, 2, (size_t[]){cap, s2}, 1, &s3);
    tg_add(&g, dnnl_graph_op_select, 3, (size_t[]){cond, s3, fill}, 1, &s4);
    op_d *sm = tg_add(&g, dnnl_graph_op_softmax, 1, &s4, 1, &p);
    tg_attr_s64(sm, dnnl_graph_op_attr_axis, (int64_t[]){-1}, 1);
    tg_attr_str(sm, dnnl_graph_op_attr_mode, "inf_as_zero");
    tg_add(&g, dnnl_graph_op_matmul, 2, (size_t[]){p, v}, 1, &o);
    g.result[g.nres++] = o;
    check_graph("Gemma soft-capping", &g, 1, true, true);
}

/* JAX layout: Pᵀ through StaticTranspose + Reorder enters the second
 * MatMul at input 1: Vᵀ·Pᵀ, transposed back and reshaped. */
static void test_jax(void) {
    static gdesc g;
    memset(&g, 0, sizeof g);
    const int64_t N = 2, H = 3, S = 11, D = 8;
    const int64_t sd[4] = {N, H, S, S};
    size_t q = tensor(&g, dnnl_f32, 4, (int64_t[]){N, H, S, D}, (int64_t[]){S * H * D, D, H * D, 1});
    size_t k = tensor(&g, dnnl_f32, 4, (int64_t[]){N, H, D, S}, (int64_t[]){S * H * D, D, 1, H * D});
    size_t vt = tensor(&g, dnnl_f32, 4, (int64_t[]){N, H, D, S}, NULL);
    size_t sc = tensor_fill(&g, dnnl_f32, 1, (int64_t[]){1}, NULL, F_CONST, 8.f);
    size_t m = tensor_fill(&g, dnnl_f32, 4, (int64_t[]){N, 1, 1, S}, NULL, F_MASK, 0.f);
    size_t s = tensor(&g, dnnl_f32, 4, sd, NULL), s1 = tensor(&g, dnnl_f32, 4, sd, NULL);
    size_t s2 = tensor(&g, dnnl_f32, 4, sd, NULL), p = tensor(&g, dnnl_f32, 4, sd, NULL);
    size_t pt = tensor(&g, dnnl_f32, 4, sd, (int64_t[]){H * S * S, S * S, 1, S});
    size_t pr = tensor(&g, dnnl_f32, 4, sd, NULL);
    size_t ot = tensor(&g, dnnl_f32, 4, (int64_t[]){N, H, D, S}, NULL);
    size_t o4 = tensor(&g, dnnl_f32, 4, (int64_t[]){N, S, H, D}, NULL);
    size_t o = tensor(&g, dnnl_f32, 4, (int64_t[]){N, S, H, D}, NULL);
    tg_add(&g, dnnl_graph_op_matmul, 2, (size_t[]){q, k}, 1, &s);
    tg_add(&g, dnnl_graph_op_divide, 2, (size_t[]){s, sc}, 1, &s1);
    tg_add(&g, dnnl_graph_op_add, 2, (size_t[]){s1, m}, 1, &s2);
    tg_attr_s64(tg_add(&g, dnnl_graph_op_softmax, 1, &s2, 1, &p), dnnl_graph_op_attr_axis, (int64_t[]){3}, 1);
    tg_attr_s64(tg_add(&g, dnnl_graph_op_static_transpose, 1, &p, 1, &pt), dnnl_graph_op_attr_order,
             (int64_t[]){0, 1, 3, 2}, 4);
    tg_add(&g, dnnl_graph_op_reorder, 1, &pt, 1, &pr);
    tg_add(&g, dnnl_graph_op_matmul, 2, (size_t[]){vt, pr}, 1, &ot);
    tg_attr_s64(tg_add(&g, dnnl_graph_op_static_transpose, 1, &ot, 1, &o4), dnnl_graph_op_attr_order,
             (int64_t[]){0, 3, 1, 2}, 4);
    reshape(&g, o4, o, (int64_t[]){N, S, H, D}, 4);
    g.result[g.nres++] = o;
    check_graph("JAX layout", &g, 1, true, true);
}

/* Graphs that must not become one SDPA partition. */
static void test_negative(void) {
    static gdesc g;
    /* The scaled scores also feed a ReLU outside the pattern. */
    sdpa_cfg c = base_cfg();
    build_sdpa(&g, &c);
    size_t scaled = g.op[1].out[0];
    size_t relu = tensor(&g, dnnl_f32, 4, (int64_t[]){c.n, c.h, c.sq, c.skv}, NULL);
    tg_add(&g, dnnl_graph_op_relu, 1, &scaled, 1, &relu);
    g.result[g.nres++] = relu;
    check_graph("intermediate with an outside consumer", &g, -1, false, false);

    /* SoftMax over the query axis. */
    c = base_cfg();
    c.axis = -2;
    build_sdpa(&g, &c);
    check_graph("softmax on a non-last axis", &g, -1, false, false);
    c.axis = 2;
    build_sdpa(&g, &c);
    check_graph("softmax on axis 2 of 4", &g, -1, false, false);
}

/* Dropout between SoftMax and the second MatMul (docs/numerics.md, Dropout): the
 * fused kernel draws the same Philox words as the reference Dropout. */
static void build_dropout(gdesc *g, dnnl_data_type_t dt, int64_t sq, int64_t skv, float offset, bool mask_out,
                          bool host) {
    memset(g, 0, sizeof *g);
    const int64_t N = 2, H = 3, D = 16;
    const int64_t sd[4] = {N, H, sq, skv}, qd[4] = {N, H, sq, D}, kd[4] = {N, H, skv, D};
    size_t q = tensor(g, dt, 4, qd, NULL), k = tensor(g, dt, 4, kd, NULL), v = tensor(g, dt, 4, kd, NULL);
    size_t sc = tensor_fill(g, dnnl_f32, 1, (int64_t[]){1}, NULL, F_CONST, 4.f);
    size_t m = tensor_fill(g, dnnl_f32, 4, (int64_t[]){N, 1, sq, skv}, NULL, F_MASK, 0.f);
    size_t s = tensor(g, dnnl_f32, 4, sd, NULL), s1 = tensor(g, dnnl_f32, 4, sd, NULL);
    size_t s2 = tensor(g, dnnl_f32, 4, sd, NULL), p = tensor(g, dnnl_f32, 4, sd, NULL);
    size_t st = tensor(g, dnnl_f32, 4, (int64_t[]){N, H, sq, 1}, NULL);
    size_t pd = tensor(g, dnnl_f32, 4, sd, NULL), o = tensor(g, dt, 4, qd, NULL);
    size_t seed = tensor_fill(g, dnnl_s64, 0, (int64_t[]){1}, NULL, F_CONST, 123456.f);
    size_t off = tensor_fill(g, dnnl_s64, 0, (int64_t[]){1}, NULL, F_CONST, offset);
    size_t prob = tensor_fill(g, dnnl_f32, 0, (int64_t[]){1}, NULL, F_CONST, 0.5f);
    if (host)
        g->lt[seed - 1].property = g->lt[off - 1].property = g->lt[prob - 1].property =
                dnnl_graph_tensor_property_host_scalar;
    tg_attr_bool(tg_add(g, dnnl_graph_op_matmul, 2, (size_t[]){q, k}, 1, &s), dnnl_graph_op_attr_transpose_b, true);
    tg_add(g, dnnl_graph_op_divide, 2, (size_t[]){s, sc}, 1, &s1);
    tg_add(g, dnnl_graph_op_add, 2, (size_t[]){s1, m}, 1, &s2);
    op_d *sm = tg_add(g, dnnl_graph_op_softmax, 1, &s2, 2, (size_t[]){p, st});
    tg_attr_s64(sm, dnnl_graph_op_attr_axis, (int64_t[]){-1}, 1);
    tg_attr_str(sm, dnnl_graph_op_attr_mode, "inf_as_zero");
    size_t mk = mask_out ? tensor(g, dnnl_u8, 4, sd, NULL) : 0;
    tg_add(g, dnnl_graph_op_dropout, 4, (size_t[]){p, seed, off, prob}, mask_out ? 2 : 1, (size_t[]){pd, mk});
    if (dt != dnnl_f32) {
        size_t pc = tensor(g, dt, 4, sd, NULL);
        tg_add(g, dnnl_graph_op_type_cast, 1, &pd, 1, &pc);
        pd = pc;
    }
    tg_add(g, dnnl_graph_op_matmul, 2, (size_t[]){pd, v}, 1, &o);
    g->result[g->nres++] = o;
    g->result[g->nres++] = st;
    if (mask_out) g->result[g->nres++] = mk;
}

static void test_dropout(void) {
    static gdesc g;
    build_dropout(&g, dnnl_f32, 37, 70, 1.f, false, true);
    check_graph("dropout f32 (host scalars)", &g, 1, true, true);
    build_dropout(&g, dnnl_f32, 5, 600, 7.f, true, false);
    check_graph("dropout f32, mask output, long S_kv", &g, 1, true, true);
    build_dropout(&g, dnnl_bf16, 33, 65, 0.f, true, true);
    check_graph("dropout bf16, legacy offset 0, mask output", &g, 1, true, true);
}

/* The flash kernel's blocks: head sizes across the microkernel tiles and k
 * groups, query / key counts at and around the block edges (tails of every
 * block), GQA groups, causal masks with S_q != S_kv (fully masked rows,
 * skipped key blocks), Select masks, the three float types, stats, every
 * math mode. */
static void test_flash_grid(void) {
    const int64_t ds[] = {1, 3, 17, 64, 80, 128, 256};
    const int64_t ss[] = {1, 7, 31, 33, 64, 65, 200};
    const dnnl_data_type_t dts[] = {dnnl_f32, dnnl_bf16, dnnl_f16};
    char name[128];
    for (int i = 0; i < 7; ++i) {
        sdpa_cfg c = base_cfg();
        c.n = 1, c.h = c.hkv = 2;
        c.d = ds[i], c.dv = ds[(i + 2) % 7];
        c.sq = ss[i], c.skv = ss[(i + 4) % 7];
        c.dt = c.p_dt = c.scale_dt = dts[i % 3];
        c.stats = c.dt == dnnl_f32;
        c.mask = i % 2 ? MK_CAUSAL_BR : MK_ADD;
        c.mask_nd = 4, c.mask_dt = c.dt;
        memcpy(c.mask_dims, (int64_t[]){1, 1, c.sq, c.skv}, sizeof(int64_t) * 4);
        snprintf(name, sizeof name, "grid d=%lld dv=%lld sq=%lld skv=%lld %s", (long long)c.d, (long long)c.dv,
                 (long long)c.sq, (long long)c.skv, c.dt == dnnl_f32 ? "f32" : c.dt == dnnl_bf16 ? "bf16" : "f16");
        check_cfg(name, &c, i == 3 ? M_ALL : 0);
    }
    for (int a = 0; a < 7; ++a)
        for (int b = 0; b < 7; ++b) {
            sdpa_cfg c = base_cfg();
            c.n = 1, c.h = c.hkv = 1;
            c.d = c.dv = 16;
            c.sq = ss[a], c.skv = ss[b];
            c.mask = (a + b) % 3 == 0 ? MK_CAUSAL_TL : (a + b) % 3 == 1 ? MK_CAUSAL_BR : MK_NONE;
            c.stats = true;
            snprintf(name, sizeof name, "grid sq=%lld skv=%lld mask %d", (long long)c.sq, (long long)c.skv, c.mask);
            check_cfg(name, &c, a == b ? M_ANY : 0);
        }
    /* GQA groups 1, 2, 8 with causal masks, S_q != S_kv. */
    const int64_t groups[] = {1, 2, 8};
    for (int g = 0; g < 3; ++g)
        for (int br = 0; br < 2; ++br) {
            sdpa_cfg c = base_cfg();
            c.n = 2, c.hkv = 2, c.h = 2 * groups[g];
            c.sq = br ? 65 : 31, c.skv = br ? 200 : 64;
            c.d = c.dv = 64;
            c.mask = br ? MK_CAUSAL_BR : MK_CAUSAL_TL;
            c.stats = true;
            snprintf(name, sizeof name, "GQA group %lld, causal %s", (long long)groups[g], br ? "bottom-right" : "top-left");
            check_cfg(name, &c, g == 2 ? M_ALL : 0);
        }
    /* Fully masked rows in both SoftMax modes (zeros / NaN), and a Select
     * mask past one key block. */
    for (int none = 0; none < 2; ++none) {
        sdpa_cfg c = base_cfg();
        c.sq = 200, c.skv = 65;
        c.mask = MK_CAUSAL_BR;
        c.mode = none ? "none" : "inf_as_zero";
        c.stats = !none;
        check_cfg(none ? "fully masked rows, mode none" : "fully masked rows, inf_as_zero", &c, M_ANY);
    }
    sdpa_cfg c = base_cfg();
    c.sq = 33, c.skv = 200;
    c.mask = MK_SELECT, c.mask_nd = 4;
    memcpy(c.mask_dims, (int64_t[]){2, 1, 1, 200}, sizeof(int64_t) * 4);
    check_cfg("masked fill, 200 keys", &c, M_ALL);
}

/* Heads packed whole into scratch and reused by the head's items (several
 * query blocks, a decode tail of one row), all keys in one block (up to 384
 * keys) or in blocks of 128 past it, a power-of-two scale applied to Q (head
 * size 64: 1/8) or not (48), GQA, and fully masked rows (bottom-right causal
 * mask with more query rows than keys). */
static void test_head_panels(void) {
    const int64_t skvs[] = {129, 255, 384, 385};
    char name[160];
    for (int i = 0; i < 4; ++i)
        for (int v = 0; v < 3; ++v) {
            sdpa_cfg c = base_cfg();
            c.n = 1, c.h = c.hkv = 6;
            if (v == 2) c.h = 8, c.hkv = 2;
            c.d = c.dv = v == 1 ? 48 : 64;
            c.sq = i % 2 ? 97 : 250, c.skv = skvs[i];
            c.dt = c.p_dt = c.scale_dt = v == 1 ? dnnl_bf16 : dnnl_f32;
            c.scale = i % 2 ? SC_DIV : SC_MUL;
            c.mask = MK_ADD, c.mask_nd = 4, c.mask_dt = c.dt;
            memcpy(c.mask_dims, (int64_t[]){1, 1, 1, c.skv}, sizeof(int64_t) * 4);
            c.stats = c.dt == dnnl_f32;
            snprintf(name, sizeof name, "head panels h=%lld hkv=%lld d=%lld sq=%lld skv=%lld %s", (long long)c.h,
                     (long long)c.hkv, (long long)c.d, (long long)c.sq, (long long)c.skv,
                     c.dt == dnnl_f32 ? "f32" : "bf16");
            check_cfg(name, &c, i == 2 ? M_ANY : 0);
        }
    sdpa_cfg c = base_cfg();
    c.n = 1, c.h = c.hkv = 5;
    c.sq = 300, c.skv = 150, c.d = c.dv = 64;
    c.scale = SC_DIV;
    c.mask = MK_CAUSAL_BR;
    c.stats = true;
    check_cfg("head panels, fully masked rows", &c, M_ANY);
}

/* The transposed f32 path (K·Qᵀ tiles of keys by 32 queries, the
 * exponentiated tile the B panel of Vᵀ·Pᵀ): query / key counts around the
 * query blocks and the key strips, head sizes with Dv tails of a strip
 * (tails of 1 to 4 rows after a full strip split with it into two),
 * masks per key (the max pass adds them) and per (query, key), causal masks
 * with fully masked rows, Select, both scale ops, GQA segments sharing a
 * query block, and long keys packed block by block. */
static void test_transposed(void) {
    enum { KEY, FULL, NOMASK };
    static const struct {
        int64_t sq, skv, d, dv, h, hkv;
        int mask, kind;
    } cases[] = {{1, 384, 64, 64, 3, 3, MK_ADD, KEY},      {31, 33, 16, 16, 2, 2, MK_ADD, FULL},
                 {33, 31, 80, 80, 2, 2, MK_CAUSAL_BR, 0}, {100, 100, 128, 128, 2, 2, MK_CAUSAL_TL, 0},
                 {384, 384, 64, 64, 2, 2, MK_ADD, KEY},   {100, 384, 80, 64, 3, 3, MK_ADD, FULL},
                 {384, 33, 16, 80, 2, 2, MK_SELECT, 0},  {33, 100, 128, 16, 2, 2, MK_CAUSAL_BR, 0},
                 {31, 1, 64, 64, 3, 3, MK_ADD, KEY},      {100, 31, 16, 16, 2, 2, MK_NONE, NOMASK},
                 {1, 100, 64, 64, 16, 2, MK_ADD, KEY},    {33, 384, 64, 64, 8, 2, MK_CAUSAL_TL, 0},
                 {5, 77, 80, 80, 12, 4, MK_ADD, FULL},    {40, 1500, 64, 64, 2, 2, MK_ADD, FULL},
                 {50, 70, 32, 13, 2, 2, MK_ADD, KEY},     {37, 130, 16, 26, 2, 2, MK_NONE, NOMASK},
                 {20, 45, 8, 4, 2, 2, MK_ADD, FULL},      {64, 200, 24, 9, 2, 2, MK_CAUSAL_TL, 0},
                 {40, 1500, 64, 28, 2, 2, MK_ADD, KEY},   {70, 96, 64, 40, 2, 2, MK_ADD, FULL}};
    char name[128];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        sdpa_cfg c = base_cfg();
        c.n = 1, c.h = cases[i].h, c.hkv = cases[i].hkv;
        c.sq = cases[i].sq, c.skv = cases[i].skv, c.d = cases[i].d, c.dv = cases[i].dv;
        c.scale = i % 2 ? SC_DIV : SC_MUL;
        c.mask = cases[i].mask;
        if (c.mask == MK_ADD && cases[i].kind == KEY) {
            c.mask_nd = 1;
            c.mask_dims[0] = c.skv;
        } else if (c.mask == MK_ADD) {
            c.mask_nd = 2;
            c.mask_dims[0] = c.sq, c.mask_dims[1] = c.skv;
        } else if (c.mask == MK_SELECT) {
            c.mask_nd = 4;
            memcpy(c.mask_dims, (int64_t[]){1, 1, 1, c.skv}, sizeof(int64_t) * 4);
        }
        c.stats = i % 3 == 0;
        snprintf(name, sizeof name, "transposed sq=%lld skv=%lld d=%lld dv=%lld h=%lld/%lld mask %d",
                 (long long)c.sq, (long long)c.skv, (long long)c.d, (long long)c.dv, (long long)c.h,
                 (long long)c.hkv, c.mask);
        check_cfg(name, &c, i == 4 ? M_ANY : 0);
    }
}

int main(void) {
    tg_setup();
    test_sizes();
    test_scales_and_masks();
    test_layouts();
    test_xf16();
    test_gqa_reshape();
    test_gpt_gemma();
    test_jax();
    test_negative();
    test_dropout();
    test_flash_grid();
    test_head_panels();
    test_transposed();
    tg_teardown();
    return pt_test_summary("test_int_sdpa");
}
