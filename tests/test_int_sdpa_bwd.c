/* SDPA / GQA training backward fusion (docs/fusion.md): graphs built
 * through the public API must form one partition (float_sdp_backward_fusion
 * or float_gqa_backward_fusion) that runs through the fused kernel, and its
 * outputs must match the same partition executed op by op through the
 * reference kernels (the compiled plan run with its fused kernel switched
 * off) within the tolerance of docs/numerics.md: the fused kernel
 * accumulates its products in f32 on the GEMM microkernels.  Negative
 * graphs (no dS scale, an intermediate with an outside consumer, dP or dQ
 * reading another dO / K) must not become one partition and must still
 * match the debug-policy run (every op alone). */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ir/dtype.h"
#include "test_graph_util.h"

typedef tg_graph gdesc;
typedef tg_op op_d;

/* ---- graph description ---------------------------------------------------- */

enum { F_RAND = TG_V_RAND, F_MASK = TG_V_MASK, F_BOOL = TG_V_BOOL, F_CONST = TG_V_CONST, F_STATS };

static size_t tensor(gdesc *g, dnnl_data_type_t dt, int nd, const int64_t *dims, const int64_t *strides) {
    return tg_tensor(g, dt, nd, dims, strides);
}

static size_t scalar(gdesc *g, dnnl_data_type_t dt, bool host, double v) {
    int64_t one[1] = {1};
    size_t id = tensor(g, dt, host ? 0 : 1, one, NULL);
    if (host) g->lt[id - 1].property = dnnl_graph_tensor_property_host_scalar;
    g->fill[id - 1] = F_CONST;
    g->fv[id - 1] = v;
    return id;
}

static op_d *add(gdesc *g, dnnl_graph_op_kind_t kind, int nin, const size_t *in, int nout, size_t out) {
    return tg_add(g, kind, nin, in, nout, &out);
}

static bool is_bool_attr(int name) {
    return name == dnnl_graph_op_attr_transpose_a || name == dnnl_graph_op_attr_transpose_b ||
           name == dnnl_graph_op_attr_keep_dims;
}

static void attr1(op_d *o, int name, int64_t v) {
    if (is_bool_attr(name)) tg_attr_bool(o, name, v != 0);
    else tg_attr_s64(o, name, &v, 1);
}

static uint32_t rng = 2024u;

static float next_value(void *ctx) {
    const tg_attn_fill *f = ctx;
    if (f->kind == F_STATS) return 1.f + tg_lcg_pm1(f->rng); /* keeps exp(S2 - stats) moderate */
    return tg_attn_value(ctx);
}

static void fill_input(const gdesc *g, int t, void *buf) {
    const tg_lt *lt = &g->lt[t];
    if (g->fill[t] == F_CONST && (lt->data_type == dnnl_s64 || lt->data_type == dnnl_s32)) {
        int64_t v = (int64_t)g->fv[t];
        if (lt->data_type == dnnl_s64) memcpy(buf, &v, sizeof v);
        else {
            int32_t w = (int32_t)v;
            memcpy(buf, &w, sizeof w);
        }
        return;
    }
    /* Masks: finite values, some -inf. */
    tg_attn_fill f = {&rng, g->fill[t], (float)g->fv[t], -0.7f, 0.4f};
    tg_fill(lt, buf, next_value, &f);
}

/* ---- running a graph ----------------------------------------------------- */

/* ---- tolerance ------------------------------------------------------------ */

/* |fused - reference| <= TOL_K * u * (|reference| + M) per element, where
 * M is the largest |reference| of the tensor and u the unit roundoff of the
 * coarsest rounding on the path: bf16 data or the bf16 / any math mode
 * 2^-8, f16 data or the f16 / tf32 modes 2^-11, f32 strict 2^-23.  Every
 * output is a sum over keys or query rows, so an element near zero is the
 * cancellation of terms of the tensor's size: its error scales with M, not
 * with itself.  TOL_K covers f32 sums in another order (S_kv or S_q terms),
 * exp within 2 ulp, and a narrow rounding of P or dS flipping when its f32
 * input moved by an ulp. */
#define TOL_K_NARROW 2.0
#define TOL_K_F32 32.0

static double tol_unit, tol_scale;
static double tol_worst[2]; /* worst |diff| / (u (|a| + M)) seen: f32 strict, narrow */

static double unit_roundoff(dnnl_data_type_t dt, dnnl_fpmath_mode_t mode) {
    if (dt == dnnl_bf16 || mode == dnnl_fpmath_mode_bf16 || mode == dnnl_fpmath_mode_any) return 0x1p-8;
    if (dt == dnnl_f16 || mode == dnnl_fpmath_mode_f16 || mode == dnnl_fpmath_mode_tf32) return 0x1p-11;
    return 0x1p-23;
}

static double bwd_tol(double a, const tg_lt *lt) {
    (void)lt;
    return (tol_unit > 0x1p-20 ? TOL_K_NARROW : TOL_K_F32) * tol_unit * (fabs(a) + tol_scale);
}

/* Checks one output against the reference with bwd_tol. */
static void check_tensor(const char *name, const tg_lt *lt, const void *ref, const void *got, double unit) {
    const int64_t n = tg_nelems(lt);
    double m = 0.0;
    for (int64_t e = 0; e < n; ++e) {
        double a = fabs((double)pt_load_f32(ref, lt->data_type, tg_offset(lt, e)));
        if (isfinite(a) && a > m) m = a;
    }
    tol_unit = unit;
    tol_scale = m;
    for (int64_t e = 0; e < n; ++e) {
        const int64_t off = tg_offset(lt, e);
        const double a = pt_load_f32(ref, lt->data_type, off), b = pt_load_f32(got, lt->data_type, off);
        const double d = fabs(a - b) / (unit * (fabs(a) + m));
        const int narrow = unit > 0x1p-20;
        if (isfinite(d) && d > tol_worst[narrow]) tol_worst[narrow] = d;
    }
    tg_check_values(name, lt, ref, got, bwd_tol);
}

/* Positive graph: one partition, fused, within the tolerance of the same
 * compiled plan run op by op through the reference kernels (`unit`: the
 * case's unit roundoff). */
static tg_run_info check_fused(const char *name, const gdesc *g, dnnl_fpmath_mode_t mode, double unit) {
    const tg_graph *sets[2] = {g, g};
    tg_bufs B;
    tg_bufs_alloc(&B, sets, 2, fill_input);
    tg_run_info fi;
    tg_run_opts o = {.policy = dnnl_graph_partition_policy_fusion, .part_mode = mode, .part_mode_single = true,
                     .skip_unsupported = true, .opbyop = B.set[1]};
    bool ok = tg_run(g, &o, B.set[0], &fi);
    CHECK(ok);
    if (ok) {
        int nfused = tg_count_fused(&fi, NULL);
        CHECK_EQ_INT(fi.nparts, 1);
        CHECK_EQ_INT(nfused, 1);
        if (fi.nparts != 1 || nfused != 1) fprintf(stderr, "  %s: %d partitions, %d fused\n", name, fi.nparts, nfused);
        for (int r = 0; r < g->nres; ++r) {
            size_t t = g->result[r] - 1;
            check_tensor(name, &g->lt[t], B.set[1][t], B.set[0][t], unit);
        }
    }
    tg_bufs_free(&B);
    return fi;
}

/* Negative graph: several partitions, none fused by the backward rows, and
 * the results of the debug policy. */
static void check_unfused(const char *name, const gdesc *g) {
    const tg_graph *sets[2] = {g, g};
    tg_bufs B;
    tg_bufs_alloc(&B, sets, 2, fill_input);
    tg_run_info ri, fi;
    tg_run_opts o = {.policy = dnnl_graph_partition_policy_debug, .skip_unsupported = true, .reference = true};
    bool ok = tg_run(g, &o, B.set[1], &ri);
    CHECK(ok);
    o.policy = dnnl_graph_partition_policy_fusion;
    ok = ok && tg_run(g, &o, B.set[0], &fi);
    CHECK(ok);
    if (ok) {
        CHECK(fi.nparts > 1);
        CHECK(fi.maxops < 10); /* no backward-sized partition */
        if (fi.nparts <= 1 || fi.maxops >= 10)
            fprintf(stderr, "  %s: %d partitions, largest %d ops\n", name, fi.nparts, fi.maxops);
        for (int r = 0; r < g->nres; ++r) {
            size_t t = g->result[r] - 1;
            tg_check_values(name, &g->lt[t], B.set[1][t], B.set[0][t], NULL);
        }
    }
    tg_bufs_free(&B);
}

/* ---- backward graph builder ---------------------------------------------- */

enum { MK_NONE, MK_ADD, MK_CAUSAL_TL, MK_CAUSAL_BR, MK_SELECT, MK_SELECT_ELSE };
enum { SC_NONE, SC_MUL, SC_MUL_LEFT, SC_DIV };
enum { EX_NONE, EX_DP, EX_P, EX_DS0, EX_DC };

typedef struct {
    dnnl_data_type_t dt;   /* Q, K, V, O, dO, dQ, dK, dV */
    int64_t n, hkv, rep;   /* rep > 0: 5-D GQA [N, Hkv, rep, S, D] with K / V broadcast */
    bool reduce;           /* GQA: dK / dV summed over the rep axis (float_gqa_backward_fusion) */
    int64_t sq, skv, d, dv;
    int fscale;            /* forward scale */
    bool host;             /* factors as host scalars */
    dnnl_data_type_t scale_dt;
    int mask;
    bool dropout;
    bool drop_seed2;       /* the dP Dropout draws with another seed than P's */
    int64_t offset;        /* Dropout offset (0: legacy derivation) */
    bool dmask;            /* End(dS0) */
    int dscale;            /* dS scale: SC_MUL, SC_MUL_LEFT, SC_DIV or SC_NONE (negative) */
    bool k_dxs;            /* K stored [.., D, S_kv] */
    bool bshd;             /* 4-D Q/K/V/dO as [N, S, H, D] buffers */
    int extra;             /* negative: an intermediate with an outside consumer */
    bool other_do;         /* negative: dP reads another tensor than dV's dO */
    bool other_k;          /* negative: dQ reads another tensor than S's K */
} bwd_cfg;

static bwd_cfg base_cfg(void) {
    bwd_cfg c;
    memset(&c, 0, sizeof c);
    c.dt = dnnl_f32;
    c.n = 2, c.hkv = 3, c.sq = 37, c.skv = 70, c.d = 9, c.dv = 13;
    c.fscale = SC_MUL;
    c.scale_dt = dnnl_f32;
    c.dscale = SC_MUL;
    c.offset = 1;
    return c;
}

/* [batch.., rows, cols] for Q/dO (kv = false) or K/V (kv = true). */
static int dims_of(const bwd_cfg *c, bool kv, int64_t rows, int64_t cols, int64_t *dims) {
    int nb = 0;
    dims[nb++] = c->n;
    dims[nb++] = c->hkv;
    if (c->rep > 0) dims[nb++] = kv ? 1 : c->rep;
    dims[nb++] = rows;
    dims[nb++] = cols;
    return nb;
}

static size_t operand(gdesc *g, const bwd_cfg *c, bool kv, int64_t rows, int64_t cols, bool swap) {
    int64_t dims[5], st[5];
    int nd = dims_of(c, kv, swap ? cols : rows, swap ? rows : cols, dims);
    if (!c->bshd || nd != 4) return tensor(g, c->dt, nd, dims, NULL);
    /* [N, rows, H, cols] buffer viewed as [N, H, rows, cols] (or swapped). */
    int64_t h = dims[1];
    st[0] = rows * h * cols, st[1] = cols;
    st[2] = swap ? 1 : h * cols;
    st[3] = swap ? h * cols : 1;
    return tensor(g, c->dt, 4, dims, st);
}

/* GQA: a K/V gradient [.., rep, S_kv, cols] summed over the rep axis. */
static size_t reduce_rep(gdesc *g, const bwd_cfg *c, size_t x, int64_t cols) {
    int64_t rd[5];
    int nd = dims_of(c, true, c->skv, cols, rd);
    size_t r = tensor(g, c->dt, nd, rd, NULL);
    op_d *ro = add(g, dnnl_graph_op_reduce_sum, 1, &x, 1, r);
    attr1(ro, dnnl_graph_op_attr_axes, 2);
    attr1(ro, dnnl_graph_op_attr_keep_dims, 1);
    return r;
}

static void build(gdesc *g, const bwd_cfg *c) {
    memset(g, 0, sizeof *g);
    const bool narrow = c->dt != dnnl_f32;
    const bool cast = narrow;
    int64_t sd[5];
    const int sr = dims_of(c, false, c->sq, c->skv, sd);
    size_t q = operand(g, c, false, c->sq, c->d, false);
    size_t k = operand(g, c, true, c->skv, c->d, c->k_dxs);
    size_t v = operand(g, c, true, c->skv, c->dv, false);
    size_t dout = operand(g, c, false, c->sq, c->dv, false);
    int64_t od[5];
    dims_of(c, false, c->sq, c->dv, od);
    size_t o = tensor(g, c->dt, sr, od, NULL);
    int64_t std_[5];
    memcpy(std_, sd, sizeof sd);
    std_[sr - 1] = 1;
    size_t stats = tensor(g, dnnl_f32, sr, std_, NULL);
    g->fill[stats - 1] = F_STATS;
    size_t f = scalar(g, c->scale_dt, c->host, 0.37);

    /* Recomputed softmax. */
    size_t s = tensor(g, dnnl_f32, sr, sd, NULL);
    attr1(add(g, dnnl_graph_op_matmul, 2, (size_t[]){q, k}, 1, s), dnnl_graph_op_attr_transpose_b, !c->k_dxs);
    if (c->fscale != SC_NONE) {
        size_t s2 = tensor(g, dnnl_f32, sr, sd, NULL);
        add(g, c->fscale == SC_DIV ? dnnl_graph_op_divide : dnnl_graph_op_multiply, 2,
            c->fscale == SC_MUL_LEFT ? (size_t[]){f, s} : (size_t[]){s, f}, 1, s2);
        s = s2;
    }
    if (c->mask == MK_CAUSAL_TL || c->mask == MK_CAUSAL_BR) {
        size_t row = tensor(g, dnnl_s32, sr, sd, NULL), col = tensor(g, dnnl_s32, sr, sd, NULL);
        attr1(add(g, dnnl_graph_op_gen_index, 1, &s, 1, row), dnnl_graph_op_attr_axis, -2);
        attr1(add(g, dnnl_graph_op_gen_index, 1, &s, 1, col), dnnl_graph_op_attr_axis, sr - 1);
        if (c->mask == MK_CAUSAL_BR) {
            size_t skv = scalar(g, dnnl_s32, true, (double)c->skv), sq = scalar(g, dnnl_s32, true, (double)c->sq);
            size_t r1 = tensor(g, dnnl_s32, sr, sd, NULL), r2 = tensor(g, dnnl_s32, sr, sd, NULL);
            add(g, dnnl_graph_op_add, 2, (size_t[]){skv, row}, 1, r1);
            add(g, dnnl_graph_op_subtract, 2, (size_t[]){r1, sq}, 1, r2);
            row = r2;
        }
        size_t ge = tensor(g, dnnl_boolean, sr, sd, NULL);
        add(g, dnnl_graph_op_greater_equal, 2, (size_t[]){row, col}, 1, ge);
        size_t fill = scalar(g, dnnl_f32, c->host, -INFINITY);
        size_t s2 = tensor(g, dnnl_f32, sr, sd, NULL);
        add(g, dnnl_graph_op_select, 3, (size_t[]){ge, s, fill}, 1, s2);
        s = s2;
    }
    if (c->mask == MK_ADD) {
        int64_t md[5];
        memcpy(md, sd, sizeof sd);
        md[1] = 1; /* broadcast over heads */
        size_t m = tensor(g, c->dt, sr, md, NULL);
        g->fill[m - 1] = F_MASK;
        size_t s2 = tensor(g, dnnl_f32, sr, sd, NULL);
        add(g, dnnl_graph_op_add, 2, (size_t[]){m, s}, 1, s2);
        s = s2;
    }
    if (c->mask == MK_SELECT || c->mask == MK_SELECT_ELSE) {
        int64_t cd[2] = {c->sq, c->skv};
        size_t cond = tensor(g, dnnl_boolean, 2, cd, NULL);
        g->fill[cond - 1] = F_BOOL;
        size_t fill = scalar(g, dnnl_f32, false, -1e9);
        size_t s2 = tensor(g, dnnl_f32, sr, sd, NULL);
        add(g, dnnl_graph_op_select, 3, c->mask == MK_SELECT ? (size_t[]){cond, s, fill} : (size_t[]){cond, fill, s},
            1, s2);
        s = s2;
    }
    size_t x = tensor(g, dnnl_f32, sr, sd, NULL), p = tensor(g, dnnl_f32, sr, sd, NULL);
    add(g, dnnl_graph_op_subtract, 2, (size_t[]){s, stats}, 1, x);
    add(g, dnnl_graph_op_exp, 1, &x, 1, p);

    size_t seed = 0, offset = 0, prob = 0;
    if (c->dropout) {
        seed = scalar(g, dnnl_s64, true, 123456.0);
        offset = scalar(g, dnnl_s64, true, (double)c->offset);
        prob = scalar(g, dnnl_f32, true, 0.5);
    }
    /* dV = (P → Dropout? → TypeCast?)ᵀ · dO. */
    size_t pv = p;
    if (c->dropout) {
        size_t pd = tensor(g, dnnl_f32, sr, sd, NULL);
        add(g, dnnl_graph_op_dropout, 4, (size_t[]){pv, seed, offset, prob}, 1, pd);
        pv = pd;
    }
    if (cast) {
        size_t pc = tensor(g, c->dt, sr, sd, NULL);
        add(g, dnnl_graph_op_type_cast, 1, &pv, 1, pc);
        pv = pc;
    }
    int64_t kvd[5], kvdv[5];
    dims_of(c, false, c->skv, c->d, kvd);
    dims_of(c, false, c->skv, c->dv, kvdv);
    size_t dv = tensor(g, c->dt, sr, kvdv, NULL);
    attr1(add(g, dnnl_graph_op_matmul, 2, (size_t[]){pv, dout}, 1, dv), dnnl_graph_op_attr_transpose_a, 1);
    if (c->reduce) dv = reduce_rep(g, c, dv, c->dv);

    /* dS0 = P ⊙ (dP → Dropout? − ReduceSum(O ⊙ dO)). */
    size_t dp = tensor(g, dnnl_f32, sr, sd, NULL);
    size_t dout2 = c->other_do ? operand(g, c, false, c->sq, c->dv, false) : dout;
    attr1(add(g, dnnl_graph_op_matmul, 2, (size_t[]){dout2, v}, 1, dp), dnnl_graph_op_attr_transpose_b, 1);
    if (c->dropout) {
        size_t d2 = tensor(g, dnnl_f32, sr, sd, NULL);
        size_t seed2 = c->drop_seed2 ? scalar(g, dnnl_s64, true, 654321.0) : seed;
        add(g, dnnl_graph_op_dropout, 4, (size_t[]){dp, seed2, offset, prob}, 1, d2);
        dp = d2;
    }
    size_t od_ = tensor(g, dnnl_f32, sr, od, NULL);
    add(g, dnnl_graph_op_multiply, 2, (size_t[]){o, dout}, 1, od_);
    int64_t dcd[5];
    memcpy(dcd, od, sizeof od);
    dcd[sr - 1] = 1;
    size_t dc = tensor(g, dnnl_f32, sr, dcd, NULL);
    op_d *rs = add(g, dnnl_graph_op_reduce_sum, 1, &od_, 1, dc);
    attr1(rs, dnnl_graph_op_attr_axes, -1);
    attr1(rs, dnnl_graph_op_attr_keep_dims, 1);
    size_t t = tensor(g, dnnl_f32, sr, sd, NULL), ds0 = tensor(g, dnnl_f32, sr, sd, NULL);
    add(g, dnnl_graph_op_subtract, 2, (size_t[]){dp, dc}, 1, t);
    add(g, dnnl_graph_op_multiply, 2, (size_t[]){p, t}, 1, ds0);
    if (c->dmask) {
        add(g, dnnl_graph_op_end, 1, &ds0, 0, 0);
        g->result[g->nres++] = ds0;
    }
    size_t ds = ds0;
    if (c->dscale != SC_NONE) {
        ds = tensor(g, dnnl_f32, sr, sd, NULL);
        add(g, c->dscale == SC_DIV ? dnnl_graph_op_divide : dnnl_graph_op_multiply, 2,
            c->dscale == SC_MUL_LEFT ? (size_t[]){f, ds0} : (size_t[]){ds0, f}, 1, ds);
    }
    if (cast) {
        size_t d2 = tensor(g, c->dt, sr, sd, NULL);
        add(g, dnnl_graph_op_type_cast, 1, &ds, 1, d2);
        ds = d2;
    }
    int64_t qd[5];
    dims_of(c, false, c->sq, c->d, qd);
    size_t dq = tensor(g, c->dt, sr, qd, NULL), dk = tensor(g, c->dt, sr, kvd, NULL);
    size_t k2 = c->other_k ? operand(g, c, true, c->skv, c->d, c->k_dxs) : k;
    attr1(add(g, dnnl_graph_op_matmul, 2, (size_t[]){ds, k2}, 1, dq), dnnl_graph_op_attr_transpose_b, c->k_dxs);
    attr1(add(g, dnnl_graph_op_matmul, 2, (size_t[]){ds, q}, 1, dk), dnnl_graph_op_attr_transpose_a, 1);
    if (c->reduce) dk = reduce_rep(g, c, dk, c->d);
    g->result[g->nres++] = dq;
    g->result[g->nres++] = dk;
    g->result[g->nres++] = dv;

    /* Negative forms: an intermediate also read outside the pattern. */
    size_t leak = c->extra == EX_DP ? dp : c->extra == EX_P ? p : c->extra == EX_DS0 ? ds0 : c->extra == EX_DC ? dc : 0;
    if (leak) {
        size_t e = tensor(g, dnnl_f32, g->lt[leak - 1].ndims, g->lt[leak - 1].dims, NULL);
        add(g, dnnl_graph_op_abs, 1, &leak, 1, e);
        g->result[g->nres++] = e;
    }
}

/* ---- cases ---------------------------------------------------------------- */

static tg_run_info check_cfg(const char *name, const bwd_cfg *c, dnnl_fpmath_mode_t mode) {
    static gdesc g;
    build(&g, c);
    return check_fused(name, &g, mode, unit_roundoff(c->dt, mode));
}

static void test_shapes(void) {
    const int64_t seqs[] = {1, 7, 37, 70}, heads[] = {1, 5, 16, 33};
    char name[128];
    for (int a = 0; a < 4; ++a)
        for (int b = 0; b < 4; ++b) {
            bwd_cfg c = base_cfg();
            c.dt = (a + b) % 3 == 0 ? dnnl_f32 : (a + b) % 3 == 1 ? dnnl_bf16 : dnnl_f16;
            char prefix[32];
            snprintf(prefix, sizeof prefix, "shapes dt=%d", (int)c.dt);
            tg_attn_sizes z = tg_attn_grid(seqs, heads, a, b, 1, prefix, name, sizeof name);
            c.sq = z.sq, c.skv = z.skv, c.d = z.d, c.dv = z.dv;
            c.n = 1 + (a & 1);
            c.hkv = 1 + (b & 1);
            c.fscale = (a + b) % 3 == 0 ? SC_NONE : (a + b) % 3 == 1 ? SC_DIV : SC_MUL;
            c.dscale = b == 3 ? SC_DIV : SC_MUL;
            check_cfg(name, &c, dnnl_fpmath_mode_strict);
        }
}

/* The head sizes, sequence lengths and layouts the brief of the GEMM-based
 * kernel names: head sizes 1, 17, 48, 64, 128 (microkernel tails and full
 * strips), S_q 1, 7, 33, 128, S_kv 1, 31, 65, 577 (one row, several query
 * blocks, several key tiles with a tail), one or two heads (one or two
 * heads per thread, so the key split runs) and four heads. */
static void test_sizes(void) {
    const int64_t hs[] = {1, 17, 48, 64, 128}, sqs[] = {1, 7, 33, 128}, skvs[] = {1, 31, 65, 577};
    const int masks[] = {MK_NONE, MK_ADD, MK_CAUSAL_TL, MK_CAUSAL_BR};
    char name[128];
    for (int a = 0; a < 4; ++a)
        for (int k = 0; k < 4; ++k) {
            bwd_cfg c = base_cfg();
            c.sq = sqs[a], c.skv = skvs[k];
            c.d = hs[(a + k) % 5];
            c.dv = hs[(a + 2 * k + 1) % 5];
            c.dt = (a + k) % 2 ? dnnl_bf16 : dnnl_f32;
            c.n = 1;
            c.hkv = 1 + (a + k) % 3;
            c.mask = masks[(a + 3 * k) % 4];
            c.dmask = (a * k) % 3 == 1;
            snprintf(name, sizeof name, "sizes sq=%lld skv=%lld d=%lld dv=%lld heads=%lld dt=%d mask=%d", (long long)c.sq,
                     (long long)c.skv, (long long)c.d, (long long)c.dv, (long long)c.hkv, (int)c.dt, c.mask);
            check_cfg(name, &c, dnnl_fpmath_mode_strict);
        }
}

/* Few heads, many keys: the key split (dQ partial sums), with and without
 * the GQA reductions, masks, dropout and a dM output; top-left causal masks
 * over more keys than rows, so whole key tiles are masked (and skipped),
 * with a head size that makes each item pass over its keys twice. */
static void test_key_split(void) {
    for (int v = 0; v < 6; ++v) {
        bwd_cfg c = base_cfg();
        c.n = 1, c.hkv = 1;
        c.sq = 128, c.skv = 577, c.d = c.dv = 64;
        c.dt = v & 1 ? dnnl_bf16 : dnnl_f32;
        c.mask = v < 2 ? MK_CAUSAL_BR : v < 4 ? MK_ADD : MK_CAUSAL_TL;
        c.dropout = v == 1 || v == 5;
        c.dmask = v == 2 || v == 4;
        if (v == 3) c.rep = 3, c.reduce = true;
        if (v >= 4) c.d = c.dv = 128; /* an item's keys take two passes (L2 budget) */
        check_cfg(v == 3 ? "key split, gqa" : "key split, one head", &c, dnnl_fpmath_mode_strict);
    }
    /* One query row against 577 keys (timm's ViT class token). */
    bwd_cfg c = base_cfg();
    c.n = 4, c.hkv = 16, c.sq = 1, c.skv = 577, c.d = c.dv = 48;
    c.dt = dnnl_bf16;
    check_cfg("one query row, 64 heads", &c, dnnl_fpmath_mode_strict);
    /* One query block whose top-left causal mask skips key tiles: their dK /
     * dV rows are zeros stored tile by tile (with and without the GQA
     * reduction and a key split). */
    for (int v = 0; v < 3; ++v) {
        bwd_cfg t = base_cfg();
        t.n = 1, t.hkv = v == 2 ? 4 : 1, t.sq = 7, t.skv = 300, t.d = 33, t.dv = 17;
        t.dt = v == 1 ? dnnl_bf16 : dnnl_f32;
        t.mask = MK_CAUSAL_TL;
        if (v == 1) t.rep = 2, t.reduce = true;
        check_cfg("one block, skipped key tiles", &t, dnnl_fpmath_mode_strict);
    }
}

/* GQA groups of 1, 2 and 8 query heads per K / V head, bf16 and f32. */
static void test_gqa_groups(void) {
    const int64_t groups[] = {1, 2, 8};
    char name[96];
    for (int gi = 0; gi < 3; ++gi)
        for (int narrow = 0; narrow < 2; ++narrow) {
            bwd_cfg c = base_cfg();
            c.rep = groups[gi], c.reduce = true;
            c.hkv = 2, c.sq = 33, c.skv = 65, c.d = c.dv = 64;
            c.dt = narrow ? dnnl_bf16 : dnnl_f32;
            c.mask = gi == 1 ? MK_CAUSAL_TL : MK_ADD;
            snprintf(name, sizeof name, "gqa group of %lld, dt=%d", (long long)groups[gi], (int)c.dt);
            check_cfg(name, &c, dnnl_fpmath_mode_strict);
        }
}

static void test_masks_and_layouts(void) {
    const int masks[] = {MK_ADD, MK_CAUSAL_TL, MK_CAUSAL_BR, MK_SELECT, MK_SELECT_ELSE};
    const char *names[] = {"explicit mask", "causal top-left", "causal bottom-right", "pad select", "pad select else"};
    for (int i = 0; i < 5; ++i)
        for (int narrow = 0; narrow < 2; ++narrow) {
            bwd_cfg c = base_cfg();
            c.mask = masks[i];
            c.dt = narrow ? dnnl_bf16 : dnnl_f32;
            c.host = i & 1;
            if (i == 2) c.sq = 70, c.skv = 37; /* S_q > S_kv: leading rows fully masked */
            check_cfg(names[i], &c, dnnl_fpmath_mode_strict);
        }
    bwd_cfg c = base_cfg();
    c.fscale = SC_MUL_LEFT;
    c.dscale = SC_MUL_LEFT;
    c.scale_dt = dnnl_bf16;
    c.dt = dnnl_bf16;
    check_cfg("factors at Multiply input 0, bf16 factor", &c, dnnl_fpmath_mode_strict);
    c = base_cfg();
    c.k_dxs = true;
    c.mask = MK_ADD;
    check_cfg("K given as [D, S_kv]", &c, dnnl_fpmath_mode_strict);
    c = base_cfg();
    c.bshd = true;
    c.dt = dnnl_f16;
    check_cfg("Q/K/V/dO strided [N, S, H, D] buffers", &c, dnnl_fpmath_mode_strict);
    c = base_cfg();
    c.bshd = c.k_dxs = true;
    check_cfg("strided K as [D, S_kv]", &c, dnnl_fpmath_mode_strict);
}

static void test_variants(void) {
    for (int narrow = 0; narrow < 2; ++narrow) {
        bwd_cfg c = base_cfg();
        c.dt = narrow ? dnnl_bf16 : dnnl_f32;
        c.dmask = true;
        c.mask = MK_ADD;
        check_cfg("w/ dmask (End)", &c, dnnl_fpmath_mode_strict);
        c = base_cfg();
        c.dt = narrow ? dnnl_bf16 : dnnl_f32;
        c.dropout = true;
        check_cfg("dropout on P and dP", &c, dnnl_fpmath_mode_strict);
        c.offset = 0;
        c.mask = MK_CAUSAL_TL;
        check_cfg("dropout, legacy offset 0", &c, dnnl_fpmath_mode_strict);
        c.offset = 1;
        c.drop_seed2 = true;
        check_cfg("dropout, another seed for dP", &c, dnnl_fpmath_mode_strict);
    }
    /* GQA: 5-D with K / V broadcast; with the reductions (gqa row) and
     * without (sdp row, full-size dK / dV). */
    for (int red = 0; red < 2; ++red)
        for (int narrow = 0; narrow < 2; ++narrow) {
            bwd_cfg c = base_cfg();
            c.rep = 3;
            c.hkv = 2;
            c.reduce = red;
            c.dt = narrow ? dnnl_f16 : dnnl_f32;
            c.mask = narrow ? MK_CAUSAL_BR : MK_ADD;
            c.dropout = red && narrow;
            c.dmask = red && !narrow;
            check_cfg(red ? "gqa with reductions" : "5-D broadcast K/V without reductions", &c,
                      dnnl_fpmath_mode_strict);
        }
    /* Non-strict math modes: f32 MatMul operands rounded as the reference does. */
    const dnnl_fpmath_mode_t modes[] = {dnnl_fpmath_mode_bf16, dnnl_fpmath_mode_f16, dnnl_fpmath_mode_tf32,
                                        dnnl_fpmath_mode_any, dnnl_fpmath_mode_strict};
    for (int m = 0; m < 5; ++m)
        for (int narrow = 0; narrow < 2; ++narrow) {
            bwd_cfg c = base_cfg();
            c.mask = MK_CAUSAL_TL;
            c.rep = 2, c.reduce = m % 2 == 0;
            c.dt = narrow ? dnnl_bf16 : dnnl_f32;
            check_cfg(narrow ? "bf16 graph, every math mode" : "f32 graph, every math mode", &c, modes[m]);
            c.sq = 1, c.skv = 45, c.mask = MK_ADD; /* one query row: the decode form where the mode allows */
            check_cfg(narrow ? "bf16 graph, one query row, every math mode" : "f32 graph, one query row, every math mode",
                      &c, modes[m]);
        }
    /* Zero-size: empty batch, no query rows (dK / dV are zeros), no keys. */
    bwd_cfg c = base_cfg();
    c.n = 0;
    check_cfg("empty batch", &c, dnnl_fpmath_mode_strict);
    c = base_cfg();
    c.sq = 0;
    check_cfg("no query rows", &c, dnnl_fpmath_mode_strict);
    c = base_cfg();
    c.skv = 0;
    c.dt = dnnl_bf16;
    check_cfg("no keys", &c, dnnl_fpmath_mode_strict);
}

static void test_negative(void) {
    bwd_cfg c = base_cfg();
    c.dscale = SC_NONE;
    static gdesc g;
    build(&g, &c);
    check_unfused("no dS scale", &g);
    c = base_cfg();
    c.other_do = true;
    build(&g, &c);
    check_unfused("dP reads another dO", &g);
    c = base_cfg();
    c.other_k = true;
    build(&g, &c);
    check_unfused("dQ reads another K", &g);
    const int extras[] = {EX_DP, EX_P, EX_DS0, EX_DC};
    const char *names[] = {"dP read outside", "P read outside", "dS0 read outside (not End)", "Dc read outside"};
    for (int i = 0; i < 4; ++i) {
        c = base_cfg();
        c.extra = extras[i];
        c.mask = i == 1 ? MK_CAUSAL_TL : MK_NONE;
        build(&g, &c);
        check_unfused(names[i], &g);
    }
}

/* A larger head for the record: fused vs op-by-op execution time. */
static void test_timing(void) {
    bwd_cfg c = base_cfg();
    c.dt = dnnl_bf16;
    c.n = 1, c.hkv = 8, c.sq = c.skv = 256, c.d = c.dv = 64;
    c.mask = MK_ADD;
    tg_run_info ri = check_cfg("timing", &c, dnnl_fpmath_mode_strict);
    printf("sdpa backward bf16 [1,8,256,256] D=64: fused %.1f ms, op by op %.1f ms\n", ri.fused_ms, ri.opbyop_ms);
}

int main(void) {
    tg_setup();
    test_shapes();
    test_sizes();
    test_key_split();
    test_gqa_groups();
    test_masks_and_layouts();
    test_variants();
    test_negative();
    test_timing();
    printf("worst |fused - reference| / (u (|reference| + max |reference|)): f32 %.3g (allowed %g), narrow %.3g "
           "(allowed %g)\n", tol_worst[0], TOL_K_F32, tol_worst[1], TOL_K_NARROW);
    tg_teardown();
    return pt_test_summary("test_int_sdpa_bwd");
}
