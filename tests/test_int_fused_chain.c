/* Fused kernel of the chain rows without a compute anchor
 * (kernels/fused/chain_post_ops.c): pooling, normalization, Interpolate,
 * reduction, SoftMax, Reorder, Concat and Dropout partitions and the pure
 * element-wise chains.
 *
 * Every case builds a graph through the public API with random odd shapes
 * (strided, permuted and broadcast operands; f32, bf16, f16 and int8 where
 * the row allows them), partitions it with the fusion policy, checks that
 * the expected row claimed it and that it compiled to the fused kernel, and
 * then executes every partition twice: through the fused kernel and through
 * the same compiled plan with the fused kernel switched off (op by op
 * through the reference kernels, chain intermediates kept in f32).  Every
 * graph output must be bit-identical.  Negative graphs check that partitions
 * the kernel declines (or that the row does not take) still run op by op
 * and match. */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/ref_bind.h"
#include "ir/op.h"
#include "compile/lower_fused.h"
#include "ir/dtype.h"
#include "oneapi/dnnl/dnnl_graph.h"
#include "ops/op_schema.h"
#include "test_graph_util.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#define MAXT 48
#define MAXO 24
#define MAXA 10

typedef dnnl_graph_logical_tensor_t lt_t;


/* ---- graph description ------------------------------------------------------ */

enum { F_RAND, F_POS, F_INT, F_CONST };

typedef struct {
    dnnl_data_type_t dt;
    int nd;
    int64_t d[DNNL_MAX_NDIMS];
    int64_t st[DNNL_MAX_NDIMS];
    bool host;
    int fill;
    double fv;
} ten_t;

/* Tensors by index into G.t; the kind and attributes live in `t` (the
 * harness's op, whose tensor lists are filled in when the graph runs). */
typedef struct {
    int in[8], nin;
    int out[5], nout;
    tg_op t;
} op_t;

typedef struct {
    char name[96];
    ten_t t[MAXT];
    int nt;
    op_t o[MAXO];
    int no;
} G;

static uint32_t rng = 12345u;
static uint32_t rnd(void) {
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return rng;
}
static int64_t pick(const int64_t *v, int n) { return v[rnd() % (uint32_t)n]; }
static float frand(float lo, float hi) { return lo + (hi - lo) * (float)(rnd() & 0xffffff) / 16777216.f; }

static void gname(G *g, const char *fmt, ...) {
    memset(g, 0, sizeof *g);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g->name, sizeof g->name, fmt, ap);
    va_end(ap);
}

/* Tensor with dense strides. */
static int ten(G *g, dnnl_data_type_t dt, int nd, const int64_t *d) {
    ten_t *t = &g->t[g->nt];
    memset(t, 0, sizeof *t);
    t->dt = dt;
    t->nd = nd;
    for (int i = 0; i < nd; ++i) t->d[i] = d[i];
    int64_t s = 1;
    for (int i = nd - 1; i >= 0; --i) {
        t->st[i] = s;
        s *= d[i] > 1 ? d[i] : 1;
    }
    t->fill = dt == dnnl_s8 || dt == dnnl_u8 ? F_INT : F_RAND;
    return g->nt++;
}

static int like(G *g, int t, dnnl_data_type_t dt) { return ten(g, dt, g->t[t].nd, g->t[t].d); }

static int host_scalar(G *g, dnnl_data_type_t dt, double v) {
    int t = ten(g, dt, 0, NULL);
    g->t[t].host = true;
    g->t[t].fill = F_CONST;
    g->t[t].fv = v;
    return t;
}

/* Layouts: 0 dense, 1 channels last (dim 1 innermost), 2 inner dim padded,
 * 3 every dim reversed (dim 0 innermost). */
static void layout(G *g, int t, int kind) {
    ten_t *x = &g->t[t];
    int r = x->nd, order[DNNL_MAX_NDIMS];
    for (int i = 0; i < r; ++i) order[i] = i;
    if (kind == 1 && r >= 3) {
        for (int i = 1; i < r - 1; ++i) order[i] = i + 1;
        order[r - 1] = 1;
    }
    if (kind == 3)
        for (int i = 0; i < r; ++i) order[i] = r - 1 - i;
    int64_t s = 1;
    for (int i = r - 1; i >= 0; --i) {
        int d = order[i];
        x->st[d] = s;
        int64_t e = x->d[d] > 1 ? x->d[d] : 1;
        s *= e + (kind == 2 && i == r - 1 ? 3 : 0);
    }
}

/* A dense tensor given one of the layouts above. */
static int ten_laid_out(G *g, dnnl_data_type_t dt, int nd, const int64_t *d, int kind) {
    int t = ten(g, dt, nd, d);
    layout(g, t, kind);
    return t;
}

static op_t *op(G *g, dnnl_graph_op_kind_t k, int nin, const int *in, int out) {
    op_t *o = &g->o[g->no++];
    memset(o, 0, sizeof *o);
    o->t.kind = k;
    o->nin = nin;
    for (int i = 0; i < nin; ++i) o->in[i] = in[i];
    o->out[0] = out;
    o->nout = 1;
    return o;
}

static void af(op_t *o, int name, float v) { tg_attr_f32(&o->t, name, &v, 1); }
static void afs(op_t *o, int name, int n, const float *v) { tg_attr_f32(&o->t, name, v, n); }
static void ai(op_t *o, int name, int64_t v) { tg_attr_s64(&o->t, name, &v, 1); }
static void ais(op_t *o, int name, int n, const int64_t *v) { tg_attr_s64(&o->t, name, v, n); }
static void as(op_t *o, int name, const char *s) { tg_attr_str(&o->t, name, s); }
static void ab(op_t *o, int name, bool v) { tg_attr_bool(&o->t, name, v); }

/* ---- op shorthands ------------------------------------------------------------- */

static int unary(G *g, dnnl_graph_op_kind_t k, int x) {
    int y = like(g, x, g->t[x].dt);
    op_t *o = op(g, k, 1, &x, y);
    if (k == dnnl_graph_op_elu) af(o, dnnl_graph_op_attr_alpha, 0.7f);
    if (k == dnnl_graph_op_clamp) af(o, dnnl_graph_op_attr_min, -0.5f), af(o, dnnl_graph_op_attr_max, 1.25f);
    if (k == dnnl_graph_op_gelu && rnd() % 2) as(o, dnnl_graph_op_attr_mode, "gelu_tanh");
    return y;
}

/* Binary op with numpy broadcasting (the output has a's type). */
static int binary(G *g, dnnl_graph_op_kind_t k, int a, int b, bool none) {
    const ten_t *ta = &g->t[a], *tb = &g->t[b];
    int64_t d[DNNL_MAX_NDIMS];
    int r = tg_broadcast(ta->nd, ta->d, tb->nd, tb->d, d);
    int y = ten(g, ta->dt, r, d);
    int in[2] = {a, b};
    op_t *o = op(g, k, 2, in, y);
    if (none) as(o, dnnl_graph_op_attr_auto_broadcast, "none");
    return y;
}

static int dequant(G *g, int x, float scale, int64_t zp) {
    int y = like(g, x, dnnl_f32);
    op_t *o = op(g, dnnl_graph_op_dequantize, 1, &x, y);
    afs(o, dnnl_graph_op_attr_scales, 1, &scale);
    ais(o, dnnl_graph_op_attr_zps, 1, &zp);
    as(o, dnnl_graph_op_attr_qtype, "per_tensor");
    return y;
}

static int quant(G *g, int x, dnnl_data_type_t dt, float scale, int64_t zp) {
    int y = like(g, x, dt);
    op_t *o = op(g, dnnl_graph_op_quantize, 1, &x, y);
    afs(o, dnnl_graph_op_attr_scales, 1, &scale);
    ais(o, dnnl_graph_op_attr_zps, 1, &zp);
    as(o, dnnl_graph_op_attr_qtype, "per_tensor");
    return y;
}

static int typecast(G *g, int x, dnnl_data_type_t dt) {
    int y = like(g, x, dt);
    op(g, dnnl_graph_op_type_cast, 1, &x, y);
    return y;
}

/* A tensor broadcastable into x: kind 0 one element, 1 along dim 1, 2 the
 * full shape, 3 along the last dim. */
static int operand(G *g, int x, dnnl_data_type_t dt, int kind) {
    const ten_t *t = &g->t[x];
    int64_t d[DNNL_MAX_NDIMS] = {0};
    for (int i = 0; i < t->nd; ++i) d[i] = kind == 2 ? t->d[i] : 1;
    if (kind == 1 && t->nd >= 2) d[1] = t->d[1];
    if (kind == 3 && t->nd >= 1) d[t->nd - 1] = t->d[t->nd - 1]; /* along the last dim */
    return ten(g, dt, t->nd, d);
}

static dnnl_data_type_t float_dt(int rep) {
    static const dnnl_data_type_t dts[3] = {dnnl_f32, dnnl_bf16, dnnl_f16};
    return dts[rep % 3];
}

/* Names a float case "<what> rep N (<type>, rank r)"; returns its type. */
static dnnl_data_type_t float_case(G *g, const char *what, int rep, int r) {
    dnnl_data_type_t dt = float_dt(rep);
    gname(g, "%s rep %d (%s, rank %d)", what, rep, pt_dt_name(dt), r);
    return dt;
}

/* The common opening of a float case: names it (float_case) and makes its
 * input of rank r with dims d in layout rep % 4.  It draws no random
 * numbers, so d picked before the call keeps every case's draws in order. */
static int float_input(G *g, const char *what, int rep, int r, const int64_t *d, dnnl_data_type_t *dt) {
    *dt = float_case(g, what, rep, r);
    return ten_laid_out(g, *dt, r, d, rep % 4);
}

/* ---- running ------------------------------------------------------------------- */

static lt_t lt_of(const G *g, int t) {
    const ten_t *x = &g->t[t];
    lt_t lt;
    dnnl_dims_t d = {0}, s = {0};
    for (int i = 0; i < x->nd; ++i) d[i] = x->d[i], s[i] = x->st[i];
    dnnl_graph_logical_tensor_init_with_strides(&lt, (size_t)t + 1, x->dt, x->nd, d, s,
                                                x->host ? dnnl_graph_tensor_property_host_scalar
                                                        : dnnl_graph_tensor_property_undef);
    return lt;
}

static size_t buf_bytes(const G *g, int t) {
    lt_t lt = lt_of(g, t);
    return pt_dt_bytes(lt.data_type, tg_span(&lt)) + 64;
}

static float next_value(void *ctx) {
    const ten_t *x = ctx;
    if (x->fill == F_INT) return (float)(x->dt == dnnl_u8 ? (int)(rnd() % 256) : (int)(rnd() % 256) - 128);
    if (x->fill == F_POS) return frand(0.25f, 2.5f);
    return frand(-2.f, 2.f);
}

static void fill(const G *g, int t, void *buf) {
    const ten_t *x = &g->t[t];
    if (x->fill == F_CONST) {
        if (x->dt == dnnl_s64) {
            int64_t v = (int64_t)x->fv;
            memcpy(buf, &v, sizeof v);
        } else {
            pt_store_f32(buf, x->dt, 0, (float)x->fv);
        }
        return;
    }
    lt_t lt = lt_of(g, t);
    tg_fill_elems(&lt, buf, next_value, (void *)x);
}

/* Rows that run through pt_prepare_chain_post_ops. */
static const char *chain_rows[] = {
    "fp_pool_post_ops", "x8_pool_post_ops", "x8_pool_add_post_ops_cpu", "fp_bnorm_relu", "s8f32s8_bnorm",
    "groupnorm_post_ops_fusion", "layernorm_post_ops_fusion_cpu", "fp_interpolate_post_ops",
    "fp_reduction_post_ops", "fp_softmax_post_ops", "fp_binary_post_ops", "fp_eltwise_binary",
    "fp_reciprocal_multiply", "fp_eltwise_dropout", "sum_fusion", "typecast_quantize_fusion", "x8_reorder",
    "fp_reorder_sum", "x8_reorder_sum_cpu", "int8_concat_fusion", "fp_matmul_dropout"};
#define NROWS ((int)(sizeof chain_rows / sizeof chain_rows[0]))
static int fused_per_row[NROWS], cases_per_row[NROWS];

static int row_index(const char *name) {
    for (int i = 0; name && i < NROWS; ++i)
        if (strcmp(chain_rows[i], name) == 0) return i;
    return -1;
}

/* The graph in the harness's form (tensor ids = index + 1). */
static void to_tg(const G *g, tg_graph *out) {
    memset(out, 0, sizeof *out);
    for (int t = 0; t < g->nt; ++t) out->lt[out->nt++] = lt_of(g, t);
    for (const op_t *p = g->o; p < g->o + g->no; ++p) {
        size_t in[8], outs[5];
        for (int k = 0; k < p->nin; ++k) in[k] = (size_t)p->in[k] + 1;
        for (int k = 0; k < p->nout; ++k) outs[k] = (size_t)p->out[k] + 1;
        tg_op *o = tg_add(out, p->t.kind, p->nin, in, p->nout, outs);
        memcpy(o->at, p->t.at, sizeof o->at);
        o->nat = p->t.nat;
    }
}

/* Bitwise comparison of one output's logical elements. */
static int64_t compare(const G *g, int t, const void *ref, const void *got) {
    const ten_t *x = &g->t[t];
    lt_t lt = lt_of(g, t);
    int64_t total = tg_nelems(&lt), bad = 0;
    size_t eb = (size_t)pt_dt_bits(x->dt) / 8;
    for (int64_t e = 0; e < total; ++e) {
        int64_t off = tg_offset(&lt, e);
        if (memcmp((const char *)ref + (size_t)off * eb, (const char *)got + (size_t)off * eb, eb) == 0) continue;
        if (bad < 3)
            fprintf(stderr, "  [%s] tensor %d element %lld: op-by-op %g, fused %g\n", g->name, t, (long long)e,
                    pt_load_f32(ref, x->dt, off), pt_load_f32(got, x->dt, off));
        ++bad;
    }
    return bad;
}

/* Runs the graph both ways and compares its outputs.  `row`: the row that
 * must claim a partition; `want_fused`: 1 it must run fused, 0 it must
 * not, -1 unchecked.  With row NULL, `banned` names a row that must not
 * claim any partition. */
static void check_graph(const G *g, const char *row, int want_fused, const char *banned) {
    static tg_graph tg;
    to_tg(g, &tg);
    void *a[MAXT] = {0}, *b[MAXT] = {0};
    for (int t = 0; t < g->nt; ++t) {
        size_t n = buf_bytes(g, t);
        a[t] = malloc(n);
        b[t] = malloc(n);
        if (!a[t] || !b[t]) continue;
        memset(a[t], 0xa5, n);
        if (!tg_produced(&tg, (size_t)t + 1)) fill(g, t, a[t]);
        memcpy(b[t], a[t], n);
    }
    /* Every partition runs into `a` (fused kernels on) and `b` (off). */
    tg_run_info fi;
    bool ok = tg_run(&tg, &(tg_run_opts){.policy = dnnl_graph_partition_policy_fusion, .opbyop = b}, a, &fi);
    CHECK(ok);
    /* The (last) partition claimed by `row`, or by `banned`. */
    const char *want = row ? row : banned;
    struct {
        bool saw_row, row_fused;
    } info = {false, false};
    for (int p = 0; want && p < fi.nparts; ++p)
        if (fi.part[p].row && strcmp(fi.part[p].row, want) == 0) info.saw_row = true, info.row_fused = fi.part[p].fused;
    if (row) {
        CHECK(info.saw_row);
        if (!info.saw_row) fprintf(stderr, "  [%s] no partition claimed by %s\n", g->name, row);
        if (want_fused >= 0) {
            CHECK_EQ_INT(info.row_fused, want_fused);
            if (info.row_fused != want_fused)
                fprintf(stderr, "  [%s] %s ran %s\n", g->name, row, info.row_fused ? "fused" : "op by op");
        }
        int ri = row_index(row);
        if (ri >= 0) {
            ++cases_per_row[ri];
            fused_per_row[ri] += info.row_fused;
        }
    } else if (banned) {
        CHECK(!info.saw_row);
        if (info.saw_row) fprintf(stderr, "  [%s] %s claimed a partition\n", g->name, banned);
    }
    if (ok)
        for (int t = 0; t < g->nt; ++t) {
            if (!tg_produced(&tg, (size_t)t + 1) || tg_consumed(&tg, (size_t)t + 1)) continue;
            int64_t bad = compare(g, t, b[t], a[t]);
            if (bad) fprintf(stderr, "  [%s] output %d: %lld elements differ\n", g->name, t, (long long)bad);
            CHECK_EQ_INT(bad, 0);
        }
    for (int t = 0; t < g->nt; ++t) free(a[t]), free(b[t]);
}

/* A positive case: the result `y` gets layout `kind`, then `row` must
 * claim a partition and run it fused. */
static void check_positive(G *g, int y, int kind, const char *row) {
    layout(g, y, kind);
    check_graph(g, row, 1, NULL);
}

/* ---- random shapes ------------------------------------------------------------ */

static const int64_t ODD[] = {1, 2, 3, 5, 7, 9, 13, 17};
static const int64_t MID[] = {3, 5, 7, 11, 19, 33, 67};

/* ---- pooling ------------------------------------------------------------------ */

static int pool(G *g, dnnl_graph_op_kind_t k, int x, bool nxc, int64_t *kern, int64_t *str, int64_t *pb,
                int64_t *pe, bool exclude) {
    const ten_t *t = &g->t[x];
    int r = t->nd, ns = r - 2;
    int64_t od[DNNL_MAX_NDIMS];
    od[0] = t->d[0];
    int cdim = nxc ? r - 1 : 1;
    od[cdim] = t->d[cdim];
    for (int j = 0; j < ns; ++j) {
        int dd = nxc ? 1 + j : 2 + j;
        od[dd] = (t->d[dd] + pb[j] + pe[j] - kern[j]) / str[j] + 1;
    }
    int y = ten(g, t->dt, r, od);
    op_t *o = op(g, k, 1, &x, y);
    ais(o, dnnl_graph_op_attr_kernel, ns, kern);
    ais(o, dnnl_graph_op_attr_strides, ns, str);
    ais(o, dnnl_graph_op_attr_pads_begin, ns, pb);
    ais(o, dnnl_graph_op_attr_pads_end, ns, pe);
    as(o, dnnl_graph_op_attr_data_format, nxc ? "NXC" : "NCX");
    if (k == dnnl_graph_op_avg_pool) ab(o, dnnl_graph_op_attr_exclude_pad, exclude);
    return y;
}

/* A random pooling op on x (kernel up to 3, stride up to 2, small pads). */
static int random_pool(G *g, int x, bool nxc, dnnl_graph_op_kind_t *kind) {
    int ns = g->t[x].nd - 2;
    int64_t kern[3], str[3], pb[3], pe[3];
    for (int j = 0; j < ns; ++j) {
        int dd = nxc ? 1 + j : 2 + j;
        int64_t in = g->t[x].d[dd];
        kern[j] = 1 + (int64_t)(rnd() % 3);
        str[j] = 1 + (int64_t)(rnd() % 2);
        pb[j] = (int64_t)(rnd() % (uint32_t)kern[j]);
        pe[j] = (int64_t)(rnd() % (uint32_t)kern[j]);
        if (in + pb[j] + pe[j] < kern[j]) pe[j] = kern[j] - in - pb[j];
    }
    *kind = rnd() % 2 ? dnnl_graph_op_max_pool : dnnl_graph_op_avg_pool;
    return pool(g, *kind, x, nxc, kern, str, pb, pe, rnd() % 2);
}

static void case_fp_pool(int rep) {
    G g;
    dnnl_data_type_t dt = float_dt(rep);
    bool nxc = rep % 2;
    int r = 3 + rep % 3;
    int64_t d[5] = {pick(ODD, 4), pick(MID, 5), pick(MID, 7), pick(ODD, 8), pick(ODD, 8)};
    gname(&g, "fp_pool rep %d (%s, rank %d, %s)", rep, pt_dt_name(dt), r, nxc ? "NXC" : "NCX");
    int x = ten_laid_out(&g, dt, r, d, rep % 4);
    dnnl_graph_op_kind_t pk;
    int y = random_pool(&g, x, nxc, &pk);
    int c = operand(&g, y, dt, nxc ? 3 : 1);
    y = binary(&g, dnnl_graph_op_add, y, c, false);
    y = unary(&g, rep % 2 ? dnnl_graph_op_relu : dnnl_graph_op_tanh, y);
    int full = operand(&g, y, dt, 2);
    layout(&g, full, 2);
    y = binary(&g, dnnl_graph_op_multiply, full, y, false); /* the running value enters input 1 */
    check_positive(&g, y, rep % 3 == 2 ? 2 : 0, "fp_pool_post_ops");
}

static void case_x8_pool(int rep) {
    G g;
    bool add = rep % 2;
    int64_t d[4] = {pick(ODD, 4), pick(MID, 7), pick(ODD, 8), pick(MID, 5)};
    gname(&g, "x8_pool%s rep %d", add ? "_add" : "", rep);
    int x = ten(&g, rep % 3 ? dnnl_u8 : dnnl_s8, 4, d);
    layout(&g, x, rep % 4);
    int y = dequant(&g, x, 0.0625f, rep % 3 ? 128 : 0);
    dnnl_graph_op_kind_t pk;
    y = random_pool(&g, y, true, &pk);
    if (add) {
        int e = like(&g, y, dnnl_s8);
        layout(&g, e, 1);
        y = binary(&g, dnnl_graph_op_add, y, dequant(&g, e, 0.03125f, -3), false);
    } else {
        y = binary(&g, dnnl_graph_op_multiply, y, operand(&g, y, dnnl_f32, 3), false);
    }
    y = unary(&g, dnnl_graph_op_relu, y);
    y = quant(&g, y, rep % 2 ? dnnl_u8 : dnnl_s8, 0.05f, rep % 2 ? 7 : -4);
    layout(&g, y, rep % 3);
    check_graph(&g, add ? "x8_pool_add_post_ops_cpu" : "x8_pool_post_ops", 1, NULL);
}

/* ---- normalization -------------------------------------------------------------- */

static void case_bnorm(int rep) {
    G g;
    bool training = rep % 2;
    dnnl_data_type_t dt = training ? dnnl_f32 : float_dt(rep);
    bool nxc = rep % 3 == 1;
    int r = 2 + rep % 3;
    int64_t d[4] = {pick(ODD, 6), pick(MID, 6), pick(ODD, 8), pick(MID, 7)};
    gname(&g, "bnorm rep %d (%s, %s)", rep, training ? "training" : "inference", pt_dt_name(dt));
    int x = ten_laid_out(&g, dt, r, d, rep % 4);
    int64_t C = d[nxc ? r - 1 : 1];
    int64_t cd[1] = {C};
    int y = like(&g, x, dt);
    if (training) {
        int in[5];
        in[0] = x;
        for (int i = 1; i < 5; ++i) in[i] = ten(&g, dnnl_f32, 1, cd);
        g.t[in[2]].fill = F_POS;
        op_t *o = op(&g, dnnl_graph_op_batch_norm_forward_training, 5, in, y);
        for (int i = 0; i < 4; ++i) o->out[o->nout++] = ten(&g, dnnl_f32, 1, cd);
        af(o, dnnl_graph_op_attr_epsilon, 0.001f);
        af(o, dnnl_graph_op_attr_momentum, 0.25f);
        as(o, dnnl_graph_op_attr_data_format, nxc ? "NXC" : "NCX");
    } else {
        int in[5];
        in[0] = x;
        for (int i = 1; i < 5; ++i) in[i] = ten(&g, dnnl_f32, 1, cd);
        g.t[in[4]].fill = F_POS;
        layout(&g, in[1], 2);
        op_t *o = op(&g, dnnl_graph_op_batch_norm_inference, 5, in, y);
        af(o, dnnl_graph_op_attr_epsilon, 0.0625f);
        as(o, dnnl_graph_op_attr_data_format, nxc ? "NXC" : "NCX");
    }
    y = unary(&g, dnnl_graph_op_relu, y);
    check_positive(&g, y, rep % 3, "fp_bnorm_relu");
}

static void case_s8_bnorm(int rep) {
    G g;
    int64_t d[4] = {pick(ODD, 5), pick(MID, 6), pick(ODD, 8), pick(ODD, 8)};
    gname(&g, "s8f32s8_bnorm rep %d", rep);
    int x = ten(&g, dnnl_s8, 4, d);
    layout(&g, x, rep % 4);
    int y = dequant(&g, x, 0.04f, 0);
    int64_t cd[1] = {d[1]};
    int in[5] = {y};
    for (int i = 1; i < 5; ++i) in[i] = ten(&g, dnnl_f32, 1, cd);
    g.t[in[4]].fill = F_POS;
    int z = like(&g, y, dnnl_f32);
    op_t *o = op(&g, dnnl_graph_op_batch_norm_inference, 5, in, z);
    af(o, dnnl_graph_op_attr_epsilon, 0.001f);
    as(o, dnnl_graph_op_attr_data_format, "NCX");
    if (rep % 2) z = unary(&g, dnnl_graph_op_relu, z);
    z = quant(&g, z, dnnl_s8, 0.03f, 0);
    check_positive(&g, z, rep % 3, "s8f32s8_bnorm");
}

static void case_groupnorm(int rep) {
    G g;
    dnnl_data_type_t dt = rep % 3 == 1 ? dnnl_bf16 : dnnl_f32;
    bool stats = rep % 2;
    int64_t G_ = 1 + (int64_t)(rnd() % 3);
    int64_t d[4] = {pick(ODD, 5), G_ * pick(ODD, 5), pick(MID, 5), pick(ODD, 8)};
    gname(&g, "groupnorm rep %d (%s, groups %lld)", rep, pt_dt_name(dt), (long long)G_);
    int x = ten(&g, dt, 4, d);
    layout(&g, x, rep % 4);
    int64_t cd[1] = {d[1]}, sd[2] = {d[0], G_};
    int in[3] = {x, ten(&g, dnnl_f32, 1, cd), ten(&g, dnnl_f32, 1, cd)};
    int y = like(&g, x, dt);
    op_t *o = op(&g, dnnl_graph_op_group_norm, 3, in, y);
    ai(o, dnnl_graph_op_attr_groups, G_);
    af(o, dnnl_graph_op_attr_epsilon, 0.01f);
    as(o, dnnl_graph_op_attr_data_format, "NCX");
    ab(o, dnnl_graph_op_attr_keep_stats, stats);
    if (stats) {
        o->out[o->nout++] = ten(&g, dnnl_f32, 2, sd);
        o->out[o->nout++] = ten(&g, dnnl_f32, 2, sd);
    }
    y = binary(&g, dnnl_graph_op_multiply, y, operand(&g, y, dt, 1), false);
    if (dt == dnnl_bf16) {
        y = typecast(&g, y, dnnl_f32);
        y = binary(&g, dnnl_graph_op_add, y, operand(&g, y, dnnl_f32, 0), false);
    } else {
        y = unary(&g, dnnl_graph_op_sigmoid, y);
    }
    if (rep % 3 != 2) y = quant(&g, y, dnnl_u8, 0.02f, 10);
    check_positive(&g, y, rep % 2 ? 2 : 0, "groupnorm_post_ops_fusion");
}

static void case_layernorm(int rep) {
    G g;
    int r = 2 + rep % 3;
    bool stats = rep % 2 == 0;
    int64_t d[4] = {pick(ODD, 5), pick(MID, 6), pick(MID, 7), pick(MID, 7)};
    dnnl_data_type_t dt;
    int x = float_input(&g, "layernorm", rep, r, d, &dt);
    int64_t cd[1] = {d[r - 1]};
    int in[3] = {x, ten(&g, dnnl_f32, 1, cd), ten(&g, dnnl_f32, 1, cd)};
    int y = like(&g, x, dt);
    op_t *o = op(&g, dnnl_graph_op_layer_norm, 3, in, y);
    ai(o, dnnl_graph_op_attr_begin_norm_axis, -1);
    af(o, dnnl_graph_op_attr_epsilon, 0.001f);
    ab(o, dnnl_graph_op_attr_keep_stats, stats);
    if (stats) {
        o->out[o->nout++] = ten(&g, dnnl_f32, r - 1, d);
        o->out[o->nout++] = ten(&g, dnnl_f32, r - 1, d);
    }
    if (dt == dnnl_bf16) {
        y = typecast(&g, y, dnnl_f32);
        y = binary(&g, dnnl_graph_op_multiply, y, operand(&g, y, dnnl_f32, 3), false);
        y = quant(&g, y, dnnl_s8, 0.03f, 0);
    } else {
        y = unary(&g, dnnl_graph_op_gelu, y);
        y = binary(&g, dnnl_graph_op_add, y, operand(&g, y, dt, 3), false);
        if (dt == dnnl_f32 && rep % 2) y = quant(&g, y, dnnl_u8, 0.02f, 100);
    }
    check_positive(&g, y, rep % 3 == 1 ? 2 : 0, "layernorm_post_ops_fusion_cpu");
}

/* ---- interpolate and reduction ---------------------------------------------------- */

static void case_interpolate(int rep) {
    G g;
    int r = 3 + rep % 2;
    bool nxc = rep % 2;
    int64_t d[4] = {pick(ODD, 4), pick(MID, 5), pick(MID, 6), pick(ODD, 8)};
    dnnl_data_type_t dt;
    int x = float_input(&g, "interpolate", rep, r, d, &dt);
    int ns = r - 2;
    int64_t sizes[2], od[4];
    memcpy(od, d, sizeof od);
    for (int j = 0; j < ns; ++j) {
        int dd = nxc ? 1 + j : 2 + j;
        sizes[j] = pick(MID, 7);
        od[dd] = sizes[j];
    }
    int y = ten(&g, dt, r, od);
    op_t *o = op(&g, dnnl_graph_op_interpolate, 1, &x, y);
    as(o, dnnl_graph_op_attr_mode, rep % 3 ? "linear" : "nearest");
    ais(o, dnnl_graph_op_attr_sizes, ns, sizes);
    as(o, dnnl_graph_op_attr_data_format, nxc ? "NXC" : "NCX");
    as(o, dnnl_graph_op_attr_coordinate_transformation_mode, "half_pixel");
    y = binary(&g, dnnl_graph_op_add, y, operand(&g, y, dt, nxc ? 3 : 1), false);
    y = unary(&g, dnnl_graph_op_sigmoid, y);
    check_positive(&g, y, rep % 3 == 2 ? 3 : 0, "fp_interpolate_post_ops");
}

static void case_reduction(int rep) {
    static const dnnl_graph_op_kind_t kinds[] = {dnnl_graph_op_reduce_sum, dnnl_graph_op_reduce_mean,
                                                 dnnl_graph_op_reduce_max, dnnl_graph_op_reduce_l2,
                                                 dnnl_graph_op_reduce_min, dnnl_graph_op_reduce_l1};
    G g;
    dnnl_data_type_t dt = float_dt(rep);
    dnnl_graph_op_kind_t k = kinds[rep % 6];
    bool keep = rep % 2 == 0;
    int64_t d[4] = {pick(ODD, 5), pick(MID, 7), pick(ODD, 8), pick(MID, 6)};
    gname(&g, "reduction rep %d (%s, %s, keep_dims %d)", rep, pt_op_kind_name(k), pt_dt_name(dt), keep);
    int x = ten(&g, dt, 4, d);
    layout(&g, x, rep % 4);
    int64_t axes[2];
    int na = 1 + (int)(rnd() % 2);
    axes[0] = 1 + (int64_t)(rnd() % 2);
    axes[1] = 3;
    int64_t od[4];
    int nd = 0;
    for (int i = 0; i < 4; ++i) {
        bool red = false;
        for (int j = 0; j < na; ++j) red = red || axes[j] == i;
        if (!red) od[nd++] = d[i];
        else if (keep) od[nd++] = 1;
    }
    int y = ten(&g, dt, nd, od);
    op_t *o = op(&g, k, 1, &x, y);
    ais(o, dnnl_graph_op_attr_axes, na, axes);
    ab(o, dnnl_graph_op_attr_keep_dims, keep);
    y = binary(&g, dnnl_graph_op_add, y, operand(&g, y, dt, 3), false);
    y = unary(&g, dnnl_graph_op_relu, y);
    check_positive(&g, y, rep % 3 == 1 ? 3 : 0, "fp_reduction_post_ops");
}

/* ---- SoftMax ------------------------------------------------------------------------- */

static void case_softmax(int rep) {
    G g;
    bool stats = rep % 2, to_q = rep % 3 == 0;
    int r = 2 + rep % 3;
    int64_t d[4] = {pick(ODD, 5), pick(MID, 7), pick(MID, 6), pick(MID, 7)};
    int64_t axis = rep % 4 == 1 ? 1 : -1;
    gname(&g, "softmax rep %d (rank %d, axis %lld, stats %d)", rep, r, (long long)axis, stats);
    int x = ten_laid_out(&g, dnnl_f32, r, d, rep % 4);
    int y = like(&g, x, dnnl_f32);
    op_t *o = op(&g, dnnl_graph_op_softmax, 1, &x, y);
    ai(o, dnnl_graph_op_attr_axis, axis);
    if (stats) {
        int64_t sd[4];
        memcpy(sd, d, sizeof sd);
        sd[axis < 0 ? r - 1 : axis] = 1;
        o->out[o->nout++] = ten(&g, dnnl_f32, r, sd);
    }
    y = binary(&g, dnnl_graph_op_multiply, y, operand(&g, y, dnnl_f32, 3), false);
    y = unary(&g, dnnl_graph_op_sqrt, y);
    if (to_q) y = quant(&g, y, dnnl_u8, 1.f / 255.f, 0);
    else if (rep % 3 == 1) y = typecast(&g, y, rep % 2 ? dnnl_bf16 : dnnl_f16);
    check_positive(&g, y, rep % 3 == 2 ? 2 : 0, "fp_softmax_post_ops");
}

/* ---- element-wise chains -------------------------------------------------------------- */

static void case_binary_chain(int rep) {
    G g;
    dnnl_data_type_t dt;
    int a = float_input(&g, "binary_post_ops", rep, 1 + rep % 4,
                        (const int64_t[4]){pick(ODD, 6), pick(MID, 7), pick(ODD, 8), pick(MID, 7)}, &dt);
    int b = operand(&g, a, dt, rep % 3);
    layout(&g, b, 3);
    int y = binary(&g, rep % 2 ? dnnl_graph_op_subtract : dnnl_graph_op_maximum, a, b, false);
    y = binary(&g, dnnl_graph_op_multiply, y, operand(&g, y, dt, 0), false);
    y = unary(&g, rep % 2 ? dnnl_graph_op_tanh : dnnl_graph_op_clamp, y);
    y = binary(&g, dnnl_graph_op_add, y, operand(&g, y, dt, 2), false);
    y = unary(&g, dnnl_graph_op_elu, y);
    check_positive(&g, y, rep % 3 == 1 ? 2 : 0, "fp_binary_post_ops");
}

static void case_eltwise_binary(int rep) {
    static const dnnl_graph_op_kind_t heads[] = {dnnl_graph_op_relu, dnnl_graph_op_gelu, dnnl_graph_op_exp,
                                                 dnnl_graph_op_hard_swish, dnnl_graph_op_abs, dnnl_graph_op_round};
    G g;
    dnnl_data_type_t dt = float_dt(rep);
    int64_t d[3] = {pick(MID, 7), pick(ODD, 8), pick(MID, 7)};
    gname(&g, "eltwise_binary rep %d (%s)", rep, pt_dt_name(dt));
    int x = ten(&g, dt, 3, d);
    layout(&g, x, rep % 4);
    int y = unary(&g, heads[rep % 6], x);
    /* One binary: a longer binary tail is fp_binary_post_ops' (priority 8.3). */
    int e = operand(&g, y, dt, rep % 4);
    if (rep % 3 == 0) {
        g.t[e].fill = F_POS;
        y = binary(&g, dnnl_graph_op_divide, y, e, false);
    } else {
        y = rep % 3 == 1 ? binary(&g, dnnl_graph_op_minimum, e, y, false) : binary(&g, dnnl_graph_op_add, y, e, false);
    }
    check_positive(&g, y, rep % 2 ? 3 : 0, "fp_eltwise_binary");
}

static void case_reciprocal(int rep) {
    G g;
    dnnl_data_type_t dt = float_dt(rep);
    int64_t d[2] = {pick(MID, 7), pick(MID, 7)};
    gname(&g, "reciprocal_multiply rep %d (%s)", rep, pt_dt_name(dt));
    int x = ten(&g, dt, 2, d);
    g.t[x].fill = F_POS;
    layout(&g, x, rep % 4);
    int y = unary(&g, dnnl_graph_op_reciprocal, x);
    y = binary(&g, dnnl_graph_op_multiply, operand(&g, y, dt, rep % 3), y, false);
    check_positive(&g, y, rep % 3 == 2 ? 3 : 0, "fp_reciprocal_multiply");
}

static void add_dropout_inputs(G *g, int *in, int rep) {
    in[1] = host_scalar(g, dnnl_s64, 123456 + rep);
    in[2] = host_scalar(g, dnnl_s64, rep % 3 == 0 ? 0 : 1 + rep);
    in[3] = host_scalar(g, dnnl_f32, rep % 2 ? 0.5 : 0.25);
}

static void case_eltwise_dropout(int rep) {
    G g;
    dnnl_data_type_t dt = float_dt(rep);
    bool mask = rep % 2 == 0;
    int64_t d[3] = {pick(ODD, 5), pick(MID, 7), pick(MID, 7)};
    gname(&g, "eltwise_dropout rep %d (%s, mask %d)", rep, pt_dt_name(dt), mask);
    int x = ten(&g, dt, 3, d);
    layout(&g, x, rep % 4);
    int in[4];
    in[0] = unary(&g, rep % 2 ? dnnl_graph_op_gelu : dnnl_graph_op_sigmoid, x);
    add_dropout_inputs(&g, in, rep);
    int y = like(&g, in[0], dt);
    op_t *o = op(&g, dnnl_graph_op_dropout, 4, in, y);
    if (mask) o->out[o->nout++] = like(&g, y, dnnl_u8);
    check_positive(&g, y, rep % 3 == 1 ? 2 : 0, "fp_eltwise_dropout");
}

static void case_matmul_dropout(int rep) {
    G g;
    int64_t B = pick(ODD, 4), M = pick(MID, 6), K = pick(MID, 6), N = pick(MID, 7);
    gname(&g, "matmul_dropout rep %d", rep);
    int64_t ad[3] = {B, M, K}, bd[2] = {K, N}, yd[3] = {B, M, N};
    int a = ten(&g, dnnl_f32, 3, ad), b = ten(&g, dnnl_f32, 2, bd);
    layout(&g, a, rep % 4);
    int in[4];
    in[0] = ten(&g, dnnl_f32, 3, yd);
    int mm[2] = {a, b};
    op(&g, dnnl_graph_op_matmul, 2, mm, in[0]);
    add_dropout_inputs(&g, in, rep);
    int y = like(&g, in[0], dnnl_f32);
    op_t *o = op(&g, dnnl_graph_op_dropout, 4, in, y);
    if (rep % 2) o->out[o->nout++] = like(&g, y, dnnl_u8);
    check_positive(&g, y, rep % 3 == 1 ? 2 : 0, "fp_matmul_dropout");
}

static void case_sum(int rep) {
    G g;
    int n = 2 + rep % 3;
    dnnl_data_type_t dt;
    int y = float_input(&g, "sum", rep, 1 + rep % 4,
                        (const int64_t[4]){pick(MID, 7), pick(ODD, 8), pick(MID, 7), pick(ODD, 8)}, &dt);
    for (int i = 0; i < n; ++i) {
        int e = like(&g, y, dt);
        layout(&g, e, (rep + i) % 4);
        y = i % 2 ? binary(&g, dnnl_graph_op_add, e, y, true) : binary(&g, dnnl_graph_op_add, y, e, true);
    }
    layout(&g, y, rep % 3 == 2 ? 3 : 0);
    /* fp_binary_post_ops (8.3) takes Add -> Add before sum_fusion (8.1) can;
     * sum_fusion itself is run through the same prepare in case_sum_row. */
    check_graph(&g, "fp_binary_post_ops", 1, NULL);
}

/* ---- reorder, typecast ---- + quantize, concat -------------------------------------------- */

static void case_typecast_quantize(int rep) {
    G g;
    int64_t d[4] = {pick(ODD, 5), pick(ODD, 8), pick(ODD, 8), pick(MID, 6)};
    gname(&g, "typecast_quantize rep %d", rep);
    int x = ten(&g, dnnl_bf16, 4, d);
    layout(&g, x, rep % 4);
    int y = typecast(&g, x, dnnl_f32);
    if (rep % 2) {
        y = quant(&g, y, rep % 3 ? dnnl_u8 : dnnl_s8, 0.015f, rep % 3 ? 120 : -5);
    } else {
        /* per_channel along dim 1 */
        int z = like(&g, y, dnnl_u8);
        op_t *o = op(&g, dnnl_graph_op_quantize, 1, &y, z);
        float sc[32];
        int64_t zp[32];
        int64_t C = d[1] <= 32 ? d[1] : 1;
        for (int c = 0; c < C; ++c) sc[c] = 0.01f * (float)(c + 1), zp[c] = 100 + c;
        afs(o, dnnl_graph_op_attr_scales, (int)C, sc);
        ais(o, dnnl_graph_op_attr_zps, (int)C, zp);
        as(o, dnnl_graph_op_attr_qtype, C > 1 ? "per_channel" : "per_tensor");
        ai(o, dnnl_graph_op_attr_axis, 1);
        y = z;
    }
    check_positive(&g, y, rep % 3 == 1 ? 1 : 0, "typecast_quantize_fusion");
}

static int reorder(G *g, int x, int lay) {
    int y = like(g, x, g->t[x].dt);
    layout(g, y, lay);
    op(g, dnnl_graph_op_reorder, 1, &x, y);
    return y;
}

static void case_x8_reorder(int rep) {
    G g;
    bool sum = rep % 2;
    int64_t d[4] = {pick(ODD, 5), pick(MID, 7), pick(ODD, 8), pick(MID, 6)};
    gname(&g, "x8_reorder%s rep %d", sum ? "_sum" : "", rep);
    int x = ten(&g, rep % 3 ? dnnl_s8 : dnnl_u8, 4, d);
    layout(&g, x, rep % 4);
    int y = dequant(&g, x, 0.05f, rep % 3 ? 0 : 128);
    y = reorder(&g, y, 1);
    if (sum) {
        int e = like(&g, y, dnnl_u8);
        layout(&g, e, 3);
        y = binary(&g, dnnl_graph_op_add, y, dequant(&g, e, 0.02f, 5), true);
    }
    y = quant(&g, y, dnnl_s8, 0.07f, rep % 2 ? 0 : 3);
    layout(&g, y, 1 + rep % 3);
    check_graph(&g, sum ? "x8_reorder_sum_cpu" : "x8_reorder", 1, NULL);
}

static void case_fp_reorder_sum(int rep) {
    G g;
    dnnl_data_type_t dt = float_dt(rep);
    int64_t d[4] = {pick(ODD, 5), pick(MID, 7), pick(ODD, 8), pick(MID, 6)};
    gname(&g, "fp_reorder_sum rep %d (%s)", rep, pt_dt_name(dt));
    int x = ten(&g, dt, 4, d);
    layout(&g, x, rep % 4);
    int y = reorder(&g, x, 1);
    int e = like(&g, y, dt);
    layout(&g, e, 3);
    y = rep % 2 ? binary(&g, dnnl_graph_op_add, e, y, true) : binary(&g, dnnl_graph_op_add, y, e, true);
    check_positive(&g, y, rep % 3, "fp_reorder_sum");
}

static void case_concat(int rep) {
    G g;
    int r = 2 + rep % 3;
    int64_t axis = (int64_t)(rnd() % (uint32_t)r);
    int n = 2 + rep % 3;
    int64_t d[4] = {pick(ODD, 5), pick(MID, 6), pick(ODD, 8), pick(MID, 7)};
    gname(&g, "int8_concat rep %d (rank %d, axis %lld, %d inputs)", rep, r, (long long)axis, n);
    dnnl_data_type_t dt = rep % 2 ? dnnl_u8 : dnnl_s8;
    float sc = 0.125f;
    int64_t zp = rep % 2 ? 3 : 0;
    int in[4];
    int64_t total = 0;
    for (int i = 0; i < n; ++i) {
        int64_t di[4];
        memcpy(di, d, sizeof di);
        di[axis] = i == 1 && rep % 4 == 3 ? 0 : pick(ODD, 8); /* an empty input now and then */
        total += di[axis];
        int x = ten(&g, dt, r, di);
        layout(&g, x, (rep + i) % 4);
        in[i] = dequant(&g, x, sc, zp);
    }
    int64_t od[4];
    memcpy(od, d, sizeof od);
    od[axis] = total;
    int y = ten(&g, dnnl_f32, r, od);
    op_t *o = op(&g, dnnl_graph_op_concat, n, in, y);
    ai(o, dnnl_graph_op_attr_axis, rep % 2 ? axis - r : axis);
    y = quant(&g, y, dt, sc, zp);
    check_positive(&g, y, rep % 3, "int8_concat_fusion");
}

/* ---- larger shapes: several runs per row, several threads ---------------------------- */

static void big_cases(void) {
    G g;
    { /* element-wise chain, rows of 1031 (three runs each) */
        int64_t d[2] = {37, 1031};
        gname(&g, "big binary chain");
        int a = ten(&g, dnnl_bf16, 2, d);
        layout(&g, a, 2);
        int y = binary(&g, dnnl_graph_op_multiply, a, operand(&g, a, dnnl_bf16, 3), false);
        y = unary(&g, dnnl_graph_op_gelu, y);
        y = binary(&g, dnnl_graph_op_add, y, operand(&g, y, dnnl_bf16, 2), false);
        layout(&g, y, 3);
        check_graph(&g, "fp_binary_post_ops", 1, NULL);
    }
    { /* LayerNorm over 1037 with stats, quantized epilogue */
        int64_t d[2] = {29, 1037}, cd[1] = {1037};
        gname(&g, "big layernorm");
        int x = ten(&g, dnnl_f32, 2, d);
        int in[3] = {x, ten(&g, dnnl_f32, 1, cd), ten(&g, dnnl_f32, 1, cd)};
        int y = like(&g, x, dnnl_f32);
        op_t *o = op(&g, dnnl_graph_op_layer_norm, 3, in, y);
        o->out[o->nout++] = ten(&g, dnnl_f32, 1, d);
        o->out[o->nout++] = ten(&g, dnnl_f32, 1, d);
        y = binary(&g, dnnl_graph_op_multiply, y, operand(&g, y, dnnl_f32, 3), false);
        y = quant(&g, y, dnnl_s8, 0.02f, 1);
        check_graph(&g, "layernorm_post_ops_fusion_cpu", 1, NULL);
    }
    { /* Concat along the last dim: slabs start inside a run */
        int64_t d1[2] = {19, 700}, d2[2] = {19, 611};
        gname(&g, "big int8 concat");
        int x1 = ten(&g, dnnl_u8, 2, d1), x2 = ten(&g, dnnl_u8, 2, d2);
        layout(&g, x2, 3);
        int in[2] = {dequant(&g, x1, 0.5f, 2), dequant(&g, x2, 0.5f, 2)};
        int64_t od[2] = {19, 1311};
        int y = ten(&g, dnnl_f32, 2, od);
        ai(op(&g, dnnl_graph_op_concat, 2, in, y), dnnl_graph_op_attr_axis, 1);
        y = quant(&g, y, dnnl_u8, 0.5f, 2);
        check_graph(&g, "int8_concat_fusion", 1, NULL);
    }
    { /* Dropout over rows of 3001: Philox indices across run boundaries */
        int64_t d[2] = {7, 3001};
        gname(&g, "big eltwise dropout");
        int x = ten(&g, dnnl_f32, 2, d);
        int in[4];
        in[0] = unary(&g, dnnl_graph_op_exp, x);
        add_dropout_inputs(&g, in, 1);
        int y = like(&g, in[0], dnnl_f32);
        op_t *o = op(&g, dnnl_graph_op_dropout, 4, in, y);
        o->out[o->nout++] = like(&g, y, dnnl_u8);
        check_graph(&g, "fp_eltwise_dropout", 1, NULL);
    }
    { /* pooling with many rows */
        int64_t d[4] = {2, 17, 40, 41};
        gname(&g, "big avg pool");
        int x = ten(&g, dnnl_f32, 4, d);
        layout(&g, x, 1);
        int64_t kern[2] = {3, 2}, str[2] = {1, 1}, pb[2] = {1, 0}, pe[2] = {1, 1};
        int y = pool(&g, dnnl_graph_op_avg_pool, x, false, kern, str, pb, pe, true);
        y = binary(&g, dnnl_graph_op_add, y, operand(&g, y, dnnl_f32, 1), false);
        y = unary(&g, dnnl_graph_op_relu, y);
        check_graph(&g, "fp_pool_post_ops", 1, NULL);
    }
    { /* SoftMax over rows of 1500 with stats */
        int64_t d[2] = {23, 1500}, sd[2] = {23, 1};
        gname(&g, "big softmax");
        int x = ten(&g, dnnl_f32, 2, d);
        int y = like(&g, x, dnnl_f32);
        op_t *o = op(&g, dnnl_graph_op_softmax, 1, &x, y);
        ai(o, dnnl_graph_op_attr_axis, -1);
        o->out[o->nout++] = ten(&g, dnnl_f32, 2, sd);
        y = binary(&g, dnnl_graph_op_multiply, y, operand(&g, y, dnnl_f32, 0), false);
        y = typecast(&g, y, dnnl_bf16);
        check_graph(&g, "fp_softmax_post_ops", 1, NULL);
    }
}

/* ---- direct prepare calls ------------------------------------------------------------ */

/* sum_fusion never claims a graph on CPU (fp_binary_post_ops takes Add ->
 * Add first), so its partition shape goes to the prepare directly: Add(none)
 * x3 with f32 intermediates (as compile.c hands them over), compared with
 * the reference kernels run op by op. */
static void case_sum_row(int rep) {
    G g;
    dnnl_data_type_t dt = float_dt(rep);
    int r = 1 + rep % 4;
    int64_t d[4] = {pick(MID, 7), pick(ODD, 8), pick(MID, 7), pick(ODD, 8)};
    gname(&g, "sum_fusion (direct) rep %d (%s, rank %d)", rep, pt_dt_name(dt), r);
    int ports[4];
    for (int i = 0; i < 4; ++i) {
        ports[i] = ten(&g, dt, r, d);
        layout(&g, ports[i], (rep + i) % 4);
    }
    int t1 = ten(&g, dnnl_f32, r, d), t2 = ten(&g, dnnl_f32, r, d), y = ten(&g, dt, r, d);
    layout(&g, y, rep % 3 == 2 ? 3 : 0);
    const int ins[3][2] = {{ports[0], ports[1]}, {ports[2], t1}, {t2, ports[3]}}, outs[3] = {t1, t2, y};
    pt_op *ops[3] = {NULL, NULL, NULL};
    bool ok = true;
    for (int o = 0; o < 3; ++o) {
        ops[o] = pt_op_new((size_t)o + 1, dnnl_graph_op_add, "");
        ok = ok && ops[o];
        for (int k = 0; ok && k < 2; ++k) {
            lt_t lt = lt_of(&g, ins[o][k]);
            ok = pt_op_add_input(ops[o], &lt) == dnnl_success;
        }
        lt_t lo = lt_of(&g, outs[o]);
        ok = ok && pt_op_add_output(ops[o], &lo) == dnnl_success &&
             pt_op_set_str(ops[o], dnnl_graph_op_attr_auto_broadcast, "none") == dnnl_success;
    }
    CHECK(ok);
    lt_t in_lt[4], out_lt = lt_of(&g, y);
    pt_tview vin[4], vout;
    void *buf[MAXT] = {0};
    for (int t = 0; t < g.nt; ++t) {
        size_t n = buf_bytes(&g, t);
        buf[t] = malloc(n);
        if (buf[t]) memset(buf[t], 0xa5, n);
    }
    void *ref = malloc(buf_bytes(&g, y));
    for (int i = 0; i < 4; ++i) {
        in_lt[i] = lt_of(&g, ports[i]);
        fill(&g, ports[i], buf[ports[i]]);
        vin[i].lt = in_lt[i];
        vin[i].data = buf[ports[i]];
    }
    if (ref) memcpy(ref, buf[y], buf_bytes(&g, y));
    vout.lt = out_lt, vout.data = buf[y];
    pt_fused f = {0};
    pt_status st = ok ? pt_prepare_chain_post_ops((const pt_op *const *)ops, 3, in_lt, 4, &out_lt, 1, &f)
                      : dnnl_unimplemented;
    CHECK_EQ_INT(st, dnnl_success);
    int nt = 1;
#ifdef _OPENMP
    nt = omp_get_max_threads();
#endif
    pt_exec_ctx ctx = {.fpmath = dnnl_fpmath_mode_strict, .apply_to_int = 0, .nthreads = nt};
    if (st == dnnl_success && ref) {
        void *scratch = malloc(f.scratch_bytes);
        CHECK_EQ_INT(f.run(&f, vin, 4, &vout, 1, scratch, &ctx), dnnl_success);
        free(scratch);
        ++fused_per_row[row_index("sum_fusion")];
        /* Reference: op by op, intermediates in f32. */
        for (int o = 0; o < 3; ++o) {
            pt_tview a[2], z;
            for (int k = 0; k < 2; ++k) a[k].lt = ops[o]->in[k], a[k].data = buf[ins[o][k]];
            z.lt = ops[o]->out[0];
            z.data = o == 2 ? ref : buf[outs[o]];
            CHECK_EQ_INT(pt_ref_run(ops[o], a, 2, &z, 1, &ctx), dnnl_success);
        }
        int64_t bad = compare(&g, y, ref, buf[y]);
        if (bad) fprintf(stderr, "  [%s] %lld elements differ\n", g.name, (long long)bad);
        CHECK_EQ_INT(bad, 0);
    }
    ++cases_per_row[row_index("sum_fusion")];
    if (st == dnnl_success && f.release) f.release(&f);
    for (int o = 0; o < 3; ++o) pt_op_free(ops[o]);
    for (int t = 0; t < g.nt; ++t) free(buf[t]);
    free(ref);
}

/* Shapes the kernel does not take return dnnl_unimplemented: two anchors
 * (SoftMax -> SoftMax), and a chain with two outputs. */
static void neg_prepare_declines(void) {
    G g;
    gname(&g, "negative: prepare declines");
    int64_t d[2] = {5, 7};
    int x = ten(&g, dnnl_f32, 2, d), m = ten(&g, dnnl_f32, 2, d), y = ten(&g, dnnl_f32, 2, d);
    pt_op *ops[2] = {pt_op_new(1, dnnl_graph_op_softmax, ""), pt_op_new(2, dnnl_graph_op_softmax, "")};
    CHECK(ops[0] && ops[1]);
    if (!ops[0] || !ops[1]) return;
    lt_t lx = lt_of(&g, x), lm = lt_of(&g, m), ly = lt_of(&g, y);
    pt_op_add_input(ops[0], &lx);
    pt_op_add_output(ops[0], &lm);
    pt_op_add_input(ops[1], &lm);
    pt_op_add_output(ops[1], &ly);
    pt_fused f = {0};
    CHECK_EQ_INT(pt_prepare_chain_post_ops((const pt_op *const *)ops, 2, &lx, 1, &ly, 1, &f), dnnl_unimplemented);
    /* ReLU -> Tanh with both values leaving the partition */
    pt_op *e[2] = {pt_op_new(3, dnnl_graph_op_relu, ""), pt_op_new(4, dnnl_graph_op_tanh, "")};
    CHECK(e[0] && e[1]);
    if (e[0] && e[1]) {
        pt_op_add_input(e[0], &lx);
        pt_op_add_output(e[0], &lm);
        pt_op_add_input(e[1], &lm);
        pt_op_add_output(e[1], &ly);
        lt_t outs[2] = {lm, ly};
        CHECK_EQ_INT(pt_prepare_chain_post_ops((const pt_op *const *)e, 2, &lx, 1, outs, 2, &f), dnnl_unimplemented);
    }
    for (int i = 0; i < 2; ++i) pt_op_free(ops[i]), pt_op_free(e[i]);
}

/* ---- negative graphs ---------------------------------------------------------------------- */

/* A pooled value broadcast up by its post-op operand: the row matches, the
 * kernel declines (the epilogue would read its src broadcast), op by op. */
static void neg_pool_broadcast_up(void) {
    G g;
    gname(&g, "negative: pool output broadcast by the post-op");
    int64_t d[4] = {2, 5, 6, 7};
    int x = ten(&g, dnnl_f32, 4, d);
    int64_t kern[2] = {6, 7}, str[2] = {1, 1}, pad[2] = {0, 0};
    int y = pool(&g, dnnl_graph_op_max_pool, x, false, kern, str, pad, pad, false); /* [2,5,1,1] */
    int e = ten(&g, dnnl_f32, 4, d);
    y = binary(&g, dnnl_graph_op_add, e, y, false);
    check_graph(&g, "fp_pool_post_ops", 0, NULL);
}

/* Reorder -> Add with numpy broadcasting: not fp_reorder_sum. */
static void neg_reorder_broadcast(void) {
    G g;
    gname(&g, "negative: reorder + broadcasting add");
    int64_t d[3] = {3, 5, 7};
    int x = ten(&g, dnnl_f32, 3, d);
    int y = reorder(&g, x, 3);
    y = binary(&g, dnnl_graph_op_add, y, operand(&g, y, dnnl_f32, 1), false);
    check_graph(&g, NULL, -1, "fp_reorder_sum");
}

/* An intermediate of an element-wise chain with an outside consumer: the
 * chain splits; every piece must still match. */
static void neg_escaping_intermediate(void) {
    G g;
    gname(&g, "negative: escaping intermediate");
    int64_t d[2] = {9, 13};
    int a = ten(&g, dnnl_f32, 2, d), b = ten(&g, dnnl_f32, 2, d);
    int s = binary(&g, dnnl_graph_op_add, a, b, true);
    int t = binary(&g, dnnl_graph_op_add, s, ten(&g, dnnl_f32, 2, d), true);
    unary(&g, dnnl_graph_op_relu, s); /* second consumer of s */
    t = unary(&g, dnnl_graph_op_tanh, t);
    (void)t;
    check_graph(&g, NULL, -1, "sum_fusion");
}

/* A Dequantize with zero point into BatchNormInference: s8f32s8_bnorm needs
 * zp 0, so fp_bnorm_relu-like pieces only. */
static void neg_s8_bnorm_zp(void) {
    G g;
    gname(&g, "negative: s8 bnorm with a zero point");
    int64_t d[4] = {2, 3, 5, 5}, cd[1] = {3};
    int x = ten(&g, dnnl_s8, 4, d);
    int y = dequant(&g, x, 0.04f, 5);
    int in[5] = {y};
    for (int i = 1; i < 5; ++i) in[i] = ten(&g, dnnl_f32, 1, cd);
    g.t[in[4]].fill = F_POS;
    int z = like(&g, y, dnnl_f32);
    op_t *o = op(&g, dnnl_graph_op_batch_norm_inference, 5, in, z);
    af(o, dnnl_graph_op_attr_epsilon, 0.001f);
    as(o, dnnl_graph_op_attr_data_format, "NCX");
    z = unary(&g, dnnl_graph_op_relu, z);
    quant(&g, z, dnnl_s8, 0.03f, 0);
    check_graph(&g, NULL, -1, "s8f32s8_bnorm");
}

/* ---- main ------------------------------------------------------------------------------- */

int main(void) {
    tg_setup();
    void (*cases[])(int) = {case_fp_pool,        case_x8_pool,       case_bnorm,         case_s8_bnorm,
                            case_groupnorm,      case_layernorm,     case_interpolate,   case_reduction,
                            case_softmax,        case_binary_chain,  case_eltwise_binary, case_reciprocal,
                            case_eltwise_dropout, case_matmul_dropout, case_sum,          case_typecast_quantize,
                            case_x8_reorder,     case_fp_reorder_sum, case_concat};
    const int reps = 6;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c)
        for (int rep = 0; rep < reps; ++rep) cases[c](rep);
    big_cases();
    neg_pool_broadcast_up();
    neg_reorder_broadcast();
    neg_escaping_intermediate();
    neg_s8_bnorm_zp();
    neg_prepare_declines();
    for (int rep = 0; rep < reps; ++rep) case_sum_row(rep);
    for (int i = 0; i < NROWS; ++i) {
        printf("  %-32s %2d graphs, %2d fused\n", chain_rows[i], cases_per_row[i], fused_per_row[i]);
        CHECK(cases_per_row[i] > 0);
    }
    tg_teardown();
    return pt_test_summary("test_int_fused_chain");
}
