/* Chain fusion rows (partition/chain_patterns.c, matched by pattern_chain.c,
 * gathered by pattern_rows.c) through the public graph API.
 *
 * Every case builds a small graph with dnnl_graph_* calls, partitions it with
 * the fusion policy and checks the whole partitioning against the
 * expectation of docs/fusion.md: while building, each op is tagged with the
 * partition it must land in (a group with the row name that must claim it,
 * or "alone" for a single-op partition), and with whether that partition must
 * be supported.  Each row gets positive graphs and near misses (wrong
 * attribute or data type, escaping intermediate, missing tail, cycle through
 * an outside op) whose exact fallback partitioning is asserted.  The
 * matcher's mechanics (repetition limit, commutative entry, optional producer
 * branches, internal operands, backtracking, cycles) have cases of their own,
 * and rows that a higher-priority row always shadows are also matched
 * directly with pt_chain_match.
 *
 * A few fused partitions are then compiled and executed with small random
 * data and compared with the same graph partitioned by the debug policy (one
 * op per partition); the bf16 TypeCast chains are compared with the f32 graph
 * instead, since chain partitions keep bf16 intermediates in f32.
 *
 * Cases whose expectation is the spec's where the library differs are marked
 * SPEC: a failure there prints "SPEC MISMATCH" and the row name. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/compiled.h"
#include "ir/dtype.h"
#include "ir/graph.h"
#include "oneapi/dnnl/dnnl_graph.h"
#include "ops/op_schema.h"
#include "partition/chain_patterns.h"
#include "partition/partition.h"
#include "partition/pattern_rows.h"
#include "test_util.h"

#define MAXT 160
#define MAXO 72
#define MAXA 12
#define MAXL 16
#define NOZP INT64_MIN

typedef dnnl_graph_logical_tensor_t lt_t;

/* ---- graph description -------------------------------------------------- */

typedef struct {
    int name;
    char type; /* 'f' f32 list, 'F' single f32, 'i' s64 list, 'I' single s64, 's' string, 'b' bool */
    int n;
    float f[8];
    int64_t i[8];
    char s[32];
} attr_t;

typedef struct {
    dnnl_graph_op_kind_t kind;
    int in[8], nin;
    int out[5], nout;
    attr_t a[MAXA];
    int na;
    int label; /* 0: a single-op partition; k > 0: group k */
    int sup;   /* expected supported flag of its partition: 1, 0, or -1 (not checked) */
} gop_t;

typedef struct {
    dnnl_data_type_t dt;
    int nd;
    int64_t d[DNNL_MAX_NDIMS];
    dnnl_graph_tensor_property_t prop;
} gten_t;

typedef struct {
    const char *name;
    const char *spec; /* non-NULL: the expectation is the spec's; says which rule */
    gten_t t[MAXT];
    int nt;
    gop_t o[MAXO];
    int no;
    int label, nlabels;
    const char *row[MAXL]; /* row expected for each group */
} G;

static dnnl_engine_t eng;
static dnnl_stream_t strm;

/* Rows some case saw claim the group it expected. */
static const char *covered[128];
static int ncovered;

static void mark_covered(const char *row) {
    for (int i = 0; i < ncovered; ++i)
        if (strcmp(covered[i], row) == 0) return;
    if (ncovered < 128) covered[ncovered++] = row;
}

static G *gnew(const char *name) {
    G *g = calloc(1, sizeof *g);
    if (!g) abort();
    g->name = name;
    return g;
}

/* Ops created from now on form one partition claimed by `row`. */
static int grp(G *g, const char *row) {
    g->row[++g->nlabels] = row;
    g->label = g->nlabels;
    return g->label;
}
/* Ops created from now on are expected in single-op partitions. */
static void alone(G *g) { g->label = 0; }
static void into(G *g, int label) { g->label = label; }

static int tn(G *g, dnnl_data_type_t dt, int nd, const int64_t *d) {
    int t = g->nt++;
    gten_t *x = &g->t[t];
    x->dt = dt;
    x->nd = nd;
    for (int i = 0; i < nd; ++i) x->d[i] = d[i];
    x->prop = dnnl_graph_tensor_property_undef;
    return t;
}
#define NI64(...) ((int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)))
#define TN(g, dt, ...) tn((g), (dt), NI64(__VA_ARGS__), (int64_t[]){__VA_ARGS__})
static int scalar(G *g, dnnl_data_type_t dt) { return tn(g, dt, 0, NULL); }
static int like(G *g, int t, dnnl_data_type_t dt) { return tn(g, dt, g->t[t].nd, g->t[t].d); }
static void constant(G *g, int t) { g->t[t].prop = dnnl_graph_tensor_property_constant; }

static int mkop(G *g, dnnl_graph_op_kind_t k, int out, int nin, const int *in) {
    int o = g->no++;
    gop_t *p = &g->o[o];
    p->kind = k;
    for (int i = 0; i < nin; ++i) p->in[i] = in[i];
    p->nin = nin;
    p->out[0] = out;
    p->nout = 1;
    p->label = g->label;
    p->sup = 1;
    return o;
}
#define NINT(...) ((int)(sizeof((int[]){__VA_ARGS__}) / sizeof(int)))
#define OP(g, k, out, ...) mkop((g), (k), (out), NINT(__VA_ARGS__), (int[]){__VA_ARGS__})

static gop_t *last(G *g) { return &g->o[g->no - 1]; }
static void add_out(G *g, int t) { last(g)->out[last(g)->nout++] = t; }
/* The partition of the last op must be unsupported (0) or is not checked (-1). */
static void expect_sup(G *g, int sup) { last(g)->sup = sup; }

static attr_t *newattr(G *g, int name, char type) {
    gop_t *p = last(g);
    attr_t *a = &p->a[p->na++];
    memset(a, 0, sizeof *a);
    a->name = name;
    a->type = type;
    return a;
}
static void af(G *g, int name, float v) {
    attr_t *a = newattr(g, name, 'F');
    a->n = 1;
    a->f[0] = v;
}
static void afs(G *g, int name, int n, const float *v) {
    attr_t *a = newattr(g, name, 'f');
    a->n = n;
    for (int i = 0; i < n; ++i) a->f[i] = v[i];
}
static void ai(G *g, int name, int64_t v) {
    attr_t *a = newattr(g, name, 'I');
    a->n = 1;
    a->i[0] = v;
}
static void ais(G *g, int name, int n, const int64_t *v) {
    attr_t *a = newattr(g, name, 'i');
    a->n = n;
    for (int i = 0; i < n; ++i) a->i[i] = v[i];
}
#define AIS(g, name, ...) ais((g), (name), NI64(__VA_ARGS__), (int64_t[]){__VA_ARGS__})
static void as(G *g, int name, const char *s) {
    attr_t *a = newattr(g, name, 's');
    snprintf(a->s, sizeof a->s, "%s", s);
}
static void ab(G *g, int name, bool v) {
    attr_t *a = newattr(g, name, 'b');
    a->n = v ? 1 : 0;
}

/* ---- op builders (all NXC / XIO, stride 1, no padding) -------------------- */

static int un(G *g, dnnl_graph_op_kind_t k, int x) {
    int y = like(g, x, g->t[x].dt);
    OP(g, k, y, x);
    return y;
}

static int bin(G *g, dnnl_graph_op_kind_t k, int a, int b) {
    const gten_t *A = &g->t[a], *B = &g->t[b];
    int nd = A->nd > B->nd ? A->nd : B->nd;
    int64_t d[DNNL_MAX_NDIMS];
    for (int i = 0; i < nd; ++i) {
        int ia = i - (nd - A->nd), ib = i - (nd - B->nd);
        int64_t da = ia >= 0 ? A->d[ia] : 1, db = ib >= 0 ? B->d[ib] : 1;
        d[i] = da == 1 ? db : da;
    }
    dnnl_data_type_t dt = (A->dt == dnnl_f32 || B->dt == dnnl_f32) ? dnnl_f32 : A->dt;
    int y = tn(g, dt, nd, d);
    OP(g, k, y, a, b);
    return y;
}
static int bin_none(G *g, dnnl_graph_op_kind_t k, int a, int b) {
    int y = bin(g, k, a, b);
    as(g, dnnl_graph_op_attr_auto_broadcast, "none");
    return y;
}

static int dq(G *g, int x, float sc, int64_t zp) {
    int y = like(g, x, dnnl_f32);
    OP(g, dnnl_graph_op_dequantize, y, x);
    as(g, dnnl_graph_op_attr_qtype, "per_tensor");
    afs(g, dnnl_graph_op_attr_scales, 1, &sc);
    if (zp != NOZP) ais(g, dnnl_graph_op_attr_zps, 1, &zp);
    return y;
}
static int q(G *g, int x, dnnl_data_type_t dt, float sc, int64_t zp) {
    int y = like(g, x, dt);
    OP(g, dnnl_graph_op_quantize, y, x);
    as(g, dnnl_graph_op_attr_qtype, "per_tensor");
    afs(g, dnnl_graph_op_attr_scales, 1, &sc);
    if (zp != NOZP) ais(g, dnnl_graph_op_attr_zps, 1, &zp);
    return y;
}
static int tc(G *g, int x, dnnl_data_type_t dt) {
    int y = like(g, x, dt);
    OP(g, dnnl_graph_op_type_cast, y, x);
    return y;
}

/* a [..., M, K] x b [K, N] */
static int mm(G *g, int a, int b, dnnl_data_type_t odt) {
    int y = like(g, a, odt);
    g->t[y].d[g->t[y].nd - 1] = g->t[b].d[1];
    OP(g, dnnl_graph_op_matmul, y, a, b);
    return y;
}
static int mm_bias(G *g, int a, int b, int bias) {
    int y = like(g, a, g->t[a].dt);
    g->t[y].d[g->t[y].nd - 1] = g->t[b].d[1];
    OP(g, dnnl_graph_op_matmul, y, a, b, bias);
    return y;
}

static void spatial_attrs(G *g) {
    AIS(g, dnnl_graph_op_attr_strides, 1, 1);
    AIS(g, dnnl_graph_op_attr_pads_begin, 0, 0);
    AIS(g, dnnl_graph_op_attr_pads_end, 0, 0);
    AIS(g, dnnl_graph_op_attr_dilations, 1, 1);
}
/* src [N,H,W,C], weights XIO [KH,KW,C/G,OC] */
static int conv_g(G *g, int s, int w, dnnl_data_type_t odt, int64_t groups) {
    const gten_t *S = &g->t[s], *W = &g->t[w];
    int y = TN(g, odt, S->d[0], S->d[1] - W->d[0] + 1, S->d[2] - W->d[1] + 1, W->d[3]);
    OP(g, dnnl_graph_op_convolution, y, s, w);
    spatial_attrs(g);
    if (groups != 1) ai(g, dnnl_graph_op_attr_groups, groups);
    return y;
}
static int conv(G *g, int s, int w, dnnl_data_type_t odt) { return conv_g(g, s, w, odt, 1); }
/* src [N,H,W,IC], weights XOI [KH,KW,OC,IC] */
static int convt(G *g, int s, int w) {
    const gten_t *S = &g->t[s], *W = &g->t[w];
    int y = TN(g, S->dt, S->d[0], S->d[1] + W->d[0] - 1, S->d[2] + W->d[1] - 1, W->d[2]);
    OP(g, dnnl_graph_op_conv_transpose, y, s, w);
    spatial_attrs(g);
    return y;
}
/* 2x2 window, stride 1 */
static int pool(G *g, dnnl_graph_op_kind_t k, int s) {
    const gten_t *S = &g->t[s];
    int y = TN(g, S->dt, S->d[0], S->d[1] - 1, S->d[2] - 1, S->d[3]);
    OP(g, k, y, s);
    AIS(g, dnnl_graph_op_attr_kernel, 2, 2);
    AIS(g, dnnl_graph_op_attr_strides, 1, 1);
    AIS(g, dnnl_graph_op_attr_pads_begin, 0, 0);
    AIS(g, dnnl_graph_op_attr_pads_end, 0, 0);
    if (k == dnnl_graph_op_avg_pool) ab(g, dnnl_graph_op_attr_exclude_pad, false);
    return y;
}
static int reshape(G *g, int x, int nd, const int64_t *d) {
    int y = tn(g, g->t[x].dt, nd, d);
    OP(g, dnnl_graph_op_static_reshape, y, x);
    ais(g, dnnl_graph_op_attr_shape, nd, d);
    ab(g, dnnl_graph_op_attr_special_zero, false);
    return y;
}
#define RESHAPE(g, x, ...) reshape((g), (x), NI64(__VA_ARGS__), (int64_t[]){__VA_ARGS__})
static int transpose(G *g, int x, int nd, const int64_t *order) {
    int64_t d[DNNL_MAX_NDIMS];
    for (int i = 0; i < nd; ++i) d[i] = g->t[x].d[order[i]];
    int y = tn(g, g->t[x].dt, nd, d);
    OP(g, dnnl_graph_op_static_transpose, y, x);
    ais(g, dnnl_graph_op_attr_order, nd, order);
    return y;
}
#define TRANSPOSE(g, x, ...) transpose((g), (x), NI64(__VA_ARGS__), (int64_t[]){__VA_ARGS__})
static int bias_add(G *g, int x, int b) {
    int y = like(g, x, g->t[x].dt);
    OP(g, dnnl_graph_op_bias_add, y, x, b);
    return y;
}
static int select_op(G *g, int cond, int a, int b) {
    int y = like(g, g->t[a].nd >= g->t[b].nd ? a : b, g->t[a].dt);
    OP(g, dnnl_graph_op_select, y, cond, a, b);
    return y;
}
static int dropout(G *g, int x, bool mask) {
    int seed = scalar(g, dnnl_s64), off = scalar(g, dnnl_s64), p = scalar(g, dnnl_f32);
    int y = like(g, x, g->t[x].dt);
    OP(g, dnnl_graph_op_dropout, y, x, seed, off, p);
    if (mask) add_out(g, like(g, x, dnnl_u8));
    return y;
}
/* BatchNormInference, channels last */
static int bnorm(G *g, int x, dnnl_data_type_t pdt) {
    int64_t c = g->t[x].d[g->t[x].nd - 1];
    int ga = TN(g, pdt, c), be = TN(g, pdt, c), me = TN(g, pdt, c), va = TN(g, pdt, c);
    int y = like(g, x, g->t[x].dt);
    OP(g, dnnl_graph_op_batch_norm_inference, y, x, ga, be, me, va);
    af(g, dnnl_graph_op_attr_epsilon, 1e-5f);
    return y;
}
static int softmax(G *g, int x, dnnl_data_type_t odt) {
    int y = like(g, x, odt);
    OP(g, dnnl_graph_op_softmax, y, x);
    ai(g, dnnl_graph_op_attr_axis, -1);
    return y;
}

/* ---- graph construction through the public API ----------------------------- */

static lt_t lt_of(const G *g, int t) {
    lt_t lt;
    const gten_t *x = &g->t[t];
    dnnl_dims_t d = {0};
    for (int i = 0; i < x->nd; ++i) d[i] = x->d[i];
    dnnl_graph_logical_tensor_init_with_dims(&lt, (size_t)t + 1, x->dt, x->nd, d, dnnl_graph_layout_type_strided,
                                             x->prop);
    return lt;
}

static bool is_produced(const G *g, int t) {
    for (int o = 0; o < g->no; ++o)
        for (int k = 0; k < g->o[o].nout; ++k)
            if (g->o[o].out[k] == t) return true;
    return false;
}
static bool is_consumed(const G *g, int t) {
    for (int o = 0; o < g->no; ++o)
        for (int k = 0; k < g->o[o].nin; ++k)
            if (g->o[o].in[k] == t) return true;
    return false;
}

static dnnl_graph_graph_t build(const G *g) {
    dnnl_graph_graph_t gg = NULL;
    if (dnnl_graph_graph_create(&gg, dnnl_cpu) != dnnl_success) return NULL;
    bool ok = true;
    for (int o = 0; o < g->no && ok; ++o) {
        const gop_t *p = &g->o[o];
        dnnl_graph_op_t op = NULL;
        ok = dnnl_graph_op_create(&op, (size_t)o + 1, p->kind, "") == dnnl_success;
        for (int k = 0; ok && k < p->nin; ++k) {
            lt_t lt = lt_of(g, p->in[k]);
            ok = dnnl_graph_op_add_input(op, &lt) == dnnl_success;
        }
        for (int k = 0; ok && k < p->nout; ++k) {
            lt_t lt = lt_of(g, p->out[k]);
            ok = dnnl_graph_op_add_output(op, &lt) == dnnl_success;
        }
        for (int k = 0; ok && k < p->na; ++k) {
            const attr_t *a = &p->a[k];
            dnnl_graph_op_attr_t nm = (dnnl_graph_op_attr_t)a->name;
            uint8_t b = (uint8_t)a->n;
            switch (a->type) {
            case 'F':
            case 'f': ok = dnnl_graph_op_set_attr_f32(op, nm, a->f, (size_t)a->n) == dnnl_success; break;
            case 'I':
            case 'i': ok = dnnl_graph_op_set_attr_s64(op, nm, a->i, (size_t)a->n) == dnnl_success; break;
            case 's': ok = dnnl_graph_op_set_attr_str(op, nm, a->s, strlen(a->s)) == dnnl_success; break;
            default: ok = dnnl_graph_op_set_attr_bool(op, nm, &b, 1) == dnnl_success; break;
            }
        }
        if (ok) ok = dnnl_graph_add_op(gg, op) == dnnl_success;
        if (!ok) fprintf(stderr, "[%s] building op %d (%s) failed\n", g->name, o, pt_op_kind_name(p->kind));
        dnnl_graph_op_destroy(op);
    }
    if (ok) ok = dnnl_graph_graph_finalize(gg) == dnnl_success;
    CHECK(ok);
    if (!ok) {
        dnnl_graph_graph_destroy(gg);
        return NULL;
    }
    return gg;
}

typedef struct {
    size_t n;
    dnnl_graph_partition_t p[MAXO];
} parts_t;

static bool get_parts(dnnl_graph_graph_t gg, dnnl_graph_partition_policy_t pol, parts_t *ps) {
    ps->n = 0;
    if (dnnl_graph_graph_filter(gg, pol) != dnnl_success) return false;
    size_t n = 0;
    if (dnnl_graph_graph_get_partition_num(gg, &n) != dnnl_success || n == 0 || n > MAXO) return false;
    if (dnnl_graph_graph_get_partitions(gg, n, ps->p) != dnnl_success) return false;
    ps->n = n;
    return true;
}
static void free_parts(parts_t *ps) {
    for (size_t i = 0; i < ps->n; ++i) dnnl_graph_partition_destroy(ps->p[i]);
    ps->n = 0;
}

/* Internal: the row that claimed a partition (NULL for a leftover op). */
static const char *row_of(dnnl_graph_partition_t p) { return p->impl->row ? p->impl->row->name : NULL; }

static size_t part_ops(dnnl_graph_partition_t p, size_t *ids, size_t cap) {
    size_t n = 0;
    if (dnnl_graph_partition_get_op_num(p, &n) != dnnl_success || n > cap) return 0;
    if (dnnl_graph_partition_get_ops(p, n, ids) != dnnl_success) return 0;
    return n;
}

static void print_parts(const G *g, const parts_t *ps) {
    fprintf(stderr, "  actual partitioning (%zu):\n", ps->n);
    for (size_t i = 0; i < ps->n; ++i) {
        size_t ids[MAXO];
        size_t n = part_ops(ps->p[i], ids, MAXO);
        uint8_t sup = 0;
        dnnl_graph_partition_is_supported(ps->p[i], &sup);
        const char *r = row_of(ps->p[i]);
        fprintf(stderr, "    %-42s %s {", r ? r : "(single op)", sup ? "sup  " : "UNSUP");
        for (size_t k = 0; k < n; ++k) {
            int o = (int)ids[k] - 1;
            fprintf(stderr, "%s%s#%d", k ? ", " : "", o >= 0 && o < g->no ? pt_op_kind_name(g->o[o].kind) : "?", o);
        }
        fprintf(stderr, "}\n");
    }
    fprintf(stderr, "  expected:\n");
    for (int l = 1; l <= g->nlabels; ++l) {
        fprintf(stderr, "    %-42s {", g->row[l]);
        bool first = true;
        for (int o = 0; o < g->no; ++o)
            if (g->o[o].label == l) {
                fprintf(stderr, "%s%s#%d", first ? "" : ", ", pt_op_kind_name(g->o[o].kind), o);
                first = false;
            }
        fprintf(stderr, "}\n");
    }
    for (int o = 0; o < g->no; ++o)
        if (g->o[o].label == 0) fprintf(stderr, "    %-42s {%s#%d}\n", "(alone)", pt_op_kind_name(g->o[o].kind), o);
}

/* Partitions the graph with the fusion policy and checks every partition
 * against the groups tagged while building. */
static void expect(G *g) {
    dnnl_graph_graph_t gg = build(g);
    if (!gg) {
        free(g);
        return;
    }
    parts_t ps;
    bool ok = get_parts(gg, dnnl_graph_partition_policy_fusion, &ps);
    CHECK(ok);
    int used[MAXL] = {0}, count[MAXL] = {0}, nalone = 0;
    for (int o = 0; o < g->no; ++o) {
        if (g->o[o].label == 0)
            ++nalone;
        else
            ++count[g->o[o].label];
    }
    int ngroups = 0;
    for (int l = 1; l <= g->nlabels; ++l) ngroups += count[l] > 0;
    bool all_ok = ok && ps.n == (size_t)(ngroups + nalone);
    CHECK_EQ_INT(ps.n, ngroups + nalone);
    for (size_t i = 0; i < ps.n; ++i) {
        size_t ids[MAXO];
        size_t n = part_ops(ps.p[i], ids, MAXO);
        uint8_t sup = 0;
        dnnl_graph_partition_is_supported(ps.p[i], &sup);
        bool pok = n > 0;
        int first = n ? (int)ids[0] - 1 : -1;
        int l = first >= 0 && first < g->no ? g->o[first].label : -1;
        pok = pok && l >= 0;
        for (size_t k = 0; pok && k < n; ++k) {
            int o = (int)ids[k] - 1;
            pok = o >= 0 && o < g->no && g->o[o].label == l;
        }
        if (pok && l == 0) {
            pok = n == 1;
        } else if (pok) {
            const char *r = row_of(ps.p[i]);
            pok = (int)n == count[l] && !used[l] && r && strcmp(r, g->row[l]) == 0;
            used[l] = 1;
        }
        /* Supported flag: the expectation of the partition's ops. */
        for (size_t k = 0; pok && k < n; ++k) {
            int want = g->o[(int)ids[k] - 1].sup;
            if (want >= 0) pok = (int)sup == want;
        }
        if (pok && l > 0) mark_covered(g->row[l]);
        all_ok = all_ok && pok;
        CHECK(pok);
    }
    if (!all_ok) {
        fprintf(stderr, "[%s] partitioning differs%s%s\n", g->name, g->spec ? " -- SPEC MISMATCH: " : "",
                g->spec ? g->spec : "");
        print_parts(g, &ps);
    }
    free_parts(&ps);
    dnnl_graph_graph_destroy(gg);
    free(g);
}

/* Matches one chain pattern directly with its first step at op `first`
 * (nothing grouped yet); returns the matched op count. */
static int direct_match(G *g, const char *row, int first) {
    const pt_chain_pattern *pat = pt_chain_pattern_named(row);
    dnnl_graph_graph_t gg = pat ? build(g) : NULL;
    if (!gg) return -1;
    const pt_graph *pg = gg;
    int group[MAXO], ops[MAXO], roles[MAXO];
    for (int i = 0; i < MAXO; ++i) group[i] = -1;
    pt_match m = {.g = pg, .group = group, .ops = ops, .roles = roles, .n = 0, .cap = MAXO};
    int n = pt_chain_match(pat, &m, first);
    /* Every matched op has the role of its step or link. */
    for (int i = 0; i < n; ++i) CHECK(roles[i] != PT_ROLE_NONE);
    dnnl_graph_graph_destroy(gg);
    return n;
}

/* ---- execution ----------------------------------------------------------------- */

typedef struct {
    void *buf[MAXT];
    bool owned[MAXT];
    lt_t lt[MAXT];
    bool have[MAXT];
    dnnl_graph_tensor_t ten[MAXT];
} run_t;

static uint32_t rng_state;
static uint32_t rnd(void) {
    rng_state = rng_state * 1664525u + 1013904223u;
    return rng_state >> 9;
}

/* Graph inputs in creation order get the same values in every graph built by
 * the same builder: floats on a 1/8 grid in [-1, 1] (exact in bf16, so an f32
 * twin graph sees identical data and small dot products are exact). */
static void gen_inputs(const G *g, void **data, uint32_t seed) {
    int ord = 0;
    for (int t = 0; t < g->nt; ++t) {
        data[t] = NULL;
        if (is_produced(g, t) || !is_consumed(g, t)) continue;
        lt_t lt = lt_of(g, t);
        size_t bytes = 0;
        dnnl_graph_logical_tensor_get_mem_size(&lt, &bytes);
        data[t] = calloc(bytes ? bytes : 1, 1);
        int64_t n = 1;
        for (int i = 0; i < g->t[t].nd; ++i) n *= g->t[t].d[i];
        rng_state = seed * 7919u + (uint32_t)ord * 104729u + 1u;
        ++ord;
        for (int64_t k = 0; k < n; ++k) {
            uint32_t r = rnd();
            switch (g->t[t].dt) {
            case dnnl_u8: ((uint8_t *)data[t])[k] = (uint8_t)(r % 256u); break;
            case dnnl_s8: ((int8_t *)data[t])[k] = (int8_t)((int)(r % 256u) - 128); break;
            case dnnl_boolean: ((uint8_t *)data[t])[k] = (uint8_t)(r & 1u); break;
            case dnnl_s64: ((int64_t *)data[t])[k] = 7; break;
            case dnnl_s32: ((int32_t *)data[t])[k] = (int32_t)(r % 8u); break;
            default: pt_store_f32(data[t], g->t[t].dt, k, (float)((int)(r % 17u) - 8) / 8.0f); break;
            }
        }
    }
}
static void free_inputs(const G *g, void **data) {
    for (int t = 0; t < g->nt; ++t) free(data[t]);
}

static void run_free(const G *g, run_t *r) {
    for (int t = 0; t < g->nt; ++t) {
        if (r->ten[t]) dnnl_graph_tensor_destroy(r->ten[t]);
        if (r->owned[t]) free(r->buf[t]);
    }
    memset(r, 0, sizeof *r);
}

/* Partitions `g` with `pol`, compiles and executes every partition in order
 * (ports as returned by the library); returns the partition count (0 on
 * failure).  r receives every tensor's buffer. */
static size_t run_graph(const G *g, dnnl_graph_partition_policy_t pol, void *const *inputs, run_t *r,
                        const char **fused_row, size_t *fused_ops, bool *fused_kernel) {
    memset(r, 0, sizeof *r);
    dnnl_graph_graph_t gg = build(g);
    if (!gg) return 0;
    parts_t ps;
    bool ok = get_parts(gg, pol, &ps);
    CHECK(ok);
    for (int t = 0; t < g->nt && ok; ++t) {
        if (!inputs[t]) continue;
        r->lt[t] = lt_of(g, t);
        r->buf[t] = inputs[t];
        r->have[t] = dnnl_graph_tensor_create(&r->ten[t], &r->lt[t], eng, inputs[t]) == dnnl_success;
    }
    if (fused_row) *fused_row = NULL;
    if (fused_ops) *fused_ops = 0;
    if (fused_kernel) *fused_kernel = false;
    size_t done = 0;
    for (size_t pi = 0; pi < ps.n && ok; ++pi) {
        dnnl_graph_partition_t p = ps.p[pi];
        size_t nops = 0;
        dnnl_graph_partition_get_op_num(p, &nops);
        bool biggest = fused_ops && nops > *fused_ops;
        if (biggest) {
            *fused_ops = nops;
            if (fused_row) *fused_row = row_of(p);
        }
        uint8_t sup = 0;
        dnnl_graph_partition_is_supported(p, &sup);
        CHECK_EQ_INT(sup, 1);
        size_t nin = 0, nout = 0;
        dnnl_graph_partition_get_input_ports_num(p, &nin);
        dnnl_graph_partition_get_output_ports_num(p, &nout);
        lt_t inp[32], outp[16];
        ok = sup && nin <= 32 && nout <= 16 && nout >= 1;
        ok = ok && dnnl_graph_partition_get_input_ports(p, nin, inp) == dnnl_success;
        ok = ok && dnnl_graph_partition_get_output_ports(p, nout, outp) == dnnl_success;
        const lt_t *cin[32], *cout[16];
        const_dnnl_graph_tensor_t tin[32];
        const_dnnl_graph_tensor_t tout[16];
        for (size_t i = 0; ok && i < nin; ++i) {
            int t = (int)inp[i].id - 1;
            ok = t >= 0 && t < g->nt && r->have[t];
            if (ok) {
                cin[i] = &r->lt[t];
                tin[i] = r->ten[t];
            }
        }
        for (size_t i = 0; ok && i < nout; ++i) cout[i] = &outp[i];
        dnnl_graph_compiled_partition_t cp = NULL;
        ok = ok && dnnl_graph_compiled_partition_create(&cp, p) == dnnl_success;
        ok = ok && dnnl_graph_partition_compile(p, cp, nin, cin, nout, cout, eng) == dnnl_success;
        /* Internal: whether the row's fused kernel took the partition. */
        if (ok && biggest && fused_kernel) *fused_kernel = cp->c && cp->c->has_fused;
        for (size_t i = 0; ok && i < nout; ++i) {
            int t = (int)outp[i].id - 1;
            ok = t >= 0 && t < g->nt;
            if (!ok) break;
            ok = dnnl_graph_compiled_partition_query_logical_tensor(cp, outp[i].id, &r->lt[t]) == dnnl_success;
            size_t bytes = 0;
            ok = ok && dnnl_graph_logical_tensor_get_mem_size(&r->lt[t], &bytes) == dnnl_success;
            if (!ok) break;
            r->buf[t] = calloc(bytes ? bytes : 1, 1);
            r->owned[t] = true;
            ok = dnnl_graph_tensor_create(&r->ten[t], &r->lt[t], eng, r->buf[t]) == dnnl_success;
            r->have[t] = ok;
            tout[i] = r->ten[t];
        }
        ok = ok && dnnl_graph_compiled_partition_execute(cp, strm, nin, tin, nout, tout) == dnnl_success;
        ok = ok && dnnl_stream_wait(strm) == dnnl_success;
        if (cp) dnnl_graph_compiled_partition_destroy(cp);
        if (ok) ++done;
    }
    CHECK(ok);
    if (!ok) fprintf(stderr, "[%s] execution with policy %d failed\n", g->name, (int)pol);
    size_t np = ps.n;
    free_parts(&ps);
    dnnl_graph_graph_destroy(gg);
    return ok && done == np ? np : 0;
}

/* Compares the graph outputs (tensors nobody consumes, in creation order) of
 * two runs element by element: |a - b| <= atol + rtol * |b|. */
static void compare_outputs(const char *what, const G *ga, const run_t *ra, const G *gb, const run_t *rb,
                            double atol, double rtol) {
    int oa[16], ob[16], na = 0, nb = 0;
    for (int t = 0; t < ga->nt && na < 16; ++t)
        if (is_produced(ga, t) && !is_consumed(ga, t)) oa[na++] = t;
    for (int t = 0; t < gb->nt && nb < 16; ++t)
        if (is_produced(gb, t) && !is_consumed(gb, t)) ob[nb++] = t;
    CHECK_EQ_INT(na, nb);
    for (int k = 0; k < na && k < nb; ++k) {
        int ta = oa[k], tb = ob[k];
        CHECK(ra->have[ta] && rb->have[tb]);
        if (!ra->have[ta] || !rb->have[tb]) continue;
        int64_t n = 1, m = 1;
        for (int i = 0; i < ga->t[ta].nd; ++i) n *= ga->t[ta].d[i];
        for (int i = 0; i < gb->t[tb].nd; ++i) m *= gb->t[tb].d[i];
        CHECK_EQ_INT(n, m);
        if (n != m) continue;
        int64_t bad = 0, first = -1;
        double worst = 0;
        for (int64_t e = 0; e < n; ++e) {
            double a = pt_load_f32(ra->buf[ta], ga->t[ta].dt, e), b = pt_load_f32(rb->buf[tb], gb->t[tb].dt, e);
            double d = fabs(a - b);
            bool same = (isnan(a) && isnan(b)) || d <= atol + rtol * fabs(b);
            if (!same) {
                if (first < 0) first = e;
                ++bad;
                if (d > worst) worst = d;
            }
        }
        if (bad) {
            double a = pt_load_f32(ra->buf[ta], ga->t[ta].dt, first), b = pt_load_f32(rb->buf[tb], gb->t[tb].dt, first);
            fprintf(stderr, "[%s] output %d: %lld of %lld elements differ (first at %lld: %.9g vs %.9g, worst %.3g)\n",
                    what, k, (long long)bad, (long long)n, (long long)first, a, b, worst);
        }
        CHECK_EQ_INT(bad, 0);
    }
}

static bool row_has_kernel(const char *name) {
    for (int r = 0; r < pt_pattern_row_count(); ++r)
        if (strcmp(pt_pattern_row_at(r)->name, name) == 0) return pt_pattern_row_at(r)->fused != PT_FUSED_NONE;
    return false;
}

/* Runs `g` with the fusion and the debug policy and compares the outputs;
 * the fusion run must put `fused_ops` ops into one partition of `row`. */
static void exec_vs_debug(G *g, const char *row, size_t want_ops, size_t want_parts, double atol, double rtol) {
    void *in[MAXT];
    gen_inputs(g, in, 11u);
    run_t rf, rd;
    const char *frow = NULL;
    size_t fops = 0;
    bool fk = false;
    size_t npf = run_graph(g, dnnl_graph_partition_policy_fusion, in, &rf, &frow, &fops, &fk);
    size_t npd = run_graph(g, dnnl_graph_partition_policy_debug, in, &rd, NULL, NULL, NULL);
    CHECK_EQ_INT(npf, want_parts);
    /* A row with a fused kernel must run these shapes through it. */
    CHECK_EQ_INT(fk, row_has_kernel(row));
    CHECK_EQ_INT(npd, g->no);
    CHECK_EQ_INT(fops, want_ops);
    CHECK(frow && strcmp(frow, row) == 0);
    if (!frow || strcmp(frow, row) != 0 || fops != want_ops)
        fprintf(stderr, "[%s] fused partition: %s with %zu ops (want %s, %zu)\n", g->name, frow ? frow : "none", fops,
                row, want_ops);
    if (npf && npd) compare_outputs(g->name, g, &rf, g, &rd, atol, rtol);
    run_free(g, &rf);
    run_free(g, &rd);
    free_inputs(g, in);
    free(g);
}

/* ---- Binary - MatMul - Binary ---------------------------------------------- */

static void t_float_bmb(void) {
    G *g = gnew("float_bmb");
    grp(g, "float_bmb");
    int a = TN(g, dnnl_f32, 4, 8), b = TN(g, dnnl_f32, 4, 8), c = TN(g, dnnl_f32, 1, 8);
    int x = bin(g, dnnl_graph_op_multiply, a, b);
    x = bin(g, dnnl_graph_op_add, c, x); /* running value at input 1 */
    x = mm(g, x, TN(g, dnnl_f32, 8, 6), dnnl_f32);
    x = bin(g, dnnl_graph_op_add, x, TN(g, dnnl_f32, 1, 6));
    bin(g, dnnl_graph_op_multiply, TN(g, dnnl_f32, 4, 6), x);
    expect(g);

    /* The first binary op's output must be f32: a bf16 chain splits into the
     * element-wise head and the MatMul epilogue. */
    g = gnew("float_bmb: bf16 first binary");
    grp(g, "fp_binary_post_ops");
    a = TN(g, dnnl_bf16, 4, 8), b = TN(g, dnnl_bf16, 4, 8);
    x = bin(g, dnnl_graph_op_multiply, a, b);
    x = bin(g, dnnl_graph_op_add, x, TN(g, dnnl_bf16, 1, 8));
    grp(g, "fp_matmul_post_ops");
    x = mm(g, x, TN(g, dnnl_bf16, 8, 6), dnnl_bf16);
    x = bin(g, dnnl_graph_op_add, x, TN(g, dnnl_bf16, 1, 6));
    bin(g, dnnl_graph_op_multiply, x, TN(g, dnnl_bf16, 4, 6));
    expect(g);

    /* TypeCasts on both sides of the MatMul (f32 -> bf16 before, back after). */
    g = gnew("float_bmb: TypeCasts");
    grp(g, "float_bmb");
    x = bin(g, dnnl_graph_op_multiply, TN(g, dnnl_f32, 4, 8), TN(g, dnnl_f32, 1, 8));
    x = tc(g, x, dnnl_bf16);
    x = mm(g, x, TN(g, dnnl_bf16, 8, 6), dnnl_bf16);
    x = bin(g, dnnl_graph_op_add, x, TN(g, dnnl_bf16, 1, 6));
    tc(g, x, dnnl_f32);
    expect(g);

    /* The head's output also feeds an op outside: the match starts at the
     * next binary, for which that value is an external operand. */
    g = gnew("float_bmb: escaping head");
    alone(g);
    x = bin(g, dnnl_graph_op_multiply, TN(g, dnnl_f32, 4, 8), TN(g, dnnl_f32, 4, 8));
    un(g, dnnl_graph_op_abs, x);
    grp(g, "float_bmb");
    x = bin(g, dnnl_graph_op_add, x, TN(g, dnnl_f32, 4, 8));
    x = mm(g, x, TN(g, dnnl_f32, 8, 6), dnnl_f32);
    bin(g, dnnl_graph_op_add, x, TN(g, dnnl_f32, 1, 6));
    expect(g);

    /* Only binary ops before the MatMul. */
    g = gnew("float_bmb: unary in the pre-chain");
    grp(g, "fp_binary_post_ops");
    x = bin(g, dnnl_graph_op_multiply, TN(g, dnnl_f32, 4, 8), TN(g, dnnl_f32, 4, 8));
    x = un(g, dnnl_graph_op_relu, x);
    grp(g, "fp_matmul_post_ops");
    x = mm(g, x, TN(g, dnnl_f32, 8, 6), dnnl_f32);
    bin(g, dnnl_graph_op_add, x, TN(g, dnnl_f32, 1, 6));
    expect(g);
}

/* ---- compressed weights ------------------------------------------------ */

/* DynamicDequantize(int weights, scales[, zps]) per group along K. */
static int dyn_dq_wei(G *g, dnnl_data_type_t wdt, int64_t K, int64_t N, int64_t group, bool zps) {
    int w = TN(g, wdt, K, N), sc = TN(g, dnnl_f32, K / group, N);
    int y = like(g, w, dnnl_f32);
    if (zps) OP(g, dnnl_graph_op_dynamic_dequantize, y, w, sc, TN(g, wdt, K / group, N));
    else OP(g, dnnl_graph_op_dynamic_dequantize, y, w, sc);
    as(g, dnnl_graph_op_attr_qtype, "per_group");
    AIS(g, dnnl_graph_op_attr_group_shape, group, 1);
    return y;
}

static void t_compressed_wei_matmul(void) {
    G *g = gnew("compressed_wei_matmul_post_ops: int4 weights, group 4");
    grp(g, "compressed_wei_matmul_post_ops");
    int w = dyn_dq_wei(g, dnnl_u4, 8, 6, 4, true);
    int x = mm(g, TN(g, dnnl_f32, 3, 8), w, dnnl_f32);
    x = bin(g, dnnl_graph_op_add, x, TN(g, dnnl_f32, 1, 6));
    un(g, dnnl_graph_op_relu, x);
    expect(g);

    g = gnew("compressed_wei_matmul_post_ops: s8 weights, no zero points");
    grp(g, "compressed_wei_matmul_post_ops");
    w = dyn_dq_wei(g, dnnl_s8, 8, 5, 8, false);
    mm(g, TN(g, dnnl_f32, 1, 8), w, dnnl_f32);
    expect(g);
}

/* ---- quantized convolution -------------------------------------------- */

static void t_x8x8x8_conv_add(void) {
    G *g = gnew("x8x8x8_conv_add_post_ops_cpu");
    grp(g, "x8x8x8_conv_add_post_ops_cpu");
    int s = dq(g, TN(g, dnnl_u8, 1, 6, 6, 4), 0.5f, 2);
    int w = dq(g, TN(g, dnnl_s8, 3, 3, 4, 8), 0.25f, NOZP);
    int x = conv(g, s, w, dnnl_f32);
    int o = dq(g, TN(g, dnnl_u8, 1, 4, 4, 8), 0.5f, 1);
    x = bin(g, dnnl_graph_op_add, o, x);
    x = un(g, dnnl_graph_op_relu, x);
    q(g, x, dnnl_u8, 1.f, 3);
    expect(g);

    /* Without the final Quantize the add row fails; the plain row takes the
     * sum as a post-op and the sum operand's Dequantize stays alone. */
    g = gnew("x8x8x8_conv_add_post_ops_cpu: no final Quantize");
    grp(g, "x8x8x_conv_post_ops");
    s = dq(g, TN(g, dnnl_u8, 1, 6, 6, 4), 0.5f, 2);
    w = dq(g, TN(g, dnnl_s8, 3, 3, 4, 8), 0.25f, NOZP);
    x = conv(g, s, w, dnnl_f32);
    alone(g);
    o = dq(g, TN(g, dnnl_u8, 1, 4, 4, 8), 0.5f, 1);
    into(g, 1);
    x = bin(g, dnnl_graph_op_add, x, o);
    un(g, dnnl_graph_op_relu, x);
    expect(g);

    /* A weight Quantize that is not int8 is not part of the add row;
     * the rest still matches. */
    g = gnew("x8x8x8_conv_add_post_ops_cpu: f8 weight Quantize");
    alone(g);
    int wq = q(g, TN(g, dnnl_f32, 3, 3, 4, 8), dnnl_f8_e4m3, 1.f, NOZP);
    grp(g, "x8x8x8_conv_add_post_ops_cpu");
    s = dq(g, TN(g, dnnl_u8, 1, 6, 6, 4), 0.5f, 2);
    w = dq(g, wq, 1.f, NOZP);
    x = conv(g, s, w, dnnl_f32);
    o = dq(g, TN(g, dnnl_u8, 1, 4, 4, 8), 0.5f, 1);
    x = bin(g, dnnl_graph_op_add, x, o);
    q(g, x, dnnl_u8, 1.f, 3);
    expect(g);
}

static void t_x8s8x_conv_reshape(void) {
    G *g = gnew("x8s8x_conv_reshape_post_ops");
    grp(g, "x8s8x_conv_reshape_post_ops");
    int s = dq(g, TN(g, dnnl_u8, 1, 5, 5, 4), 0.5f, NOZP);
    int w = RESHAPE(g, TN(g, dnnl_f32, 9, 32), 3, 3, 4, 8);
    w = q(g, w, dnnl_s8, 0.5f, NOZP);
    w = dq(g, w, 0.5f, NOZP);
    w = RESHAPE(g, w, 3, 3, 4, 8);
    int x = conv(g, s, w, dnnl_f32);
    x = un(g, dnnl_graph_op_relu, x);
    q(g, x, dnnl_u8, 1.f, NOZP);
    expect(g);

    /* The weight Dequantize must be s8: with u8 weights only the float
     * convolution epilogue fuses. */
    g = gnew("x8s8x_conv_reshape_post_ops: u8 weights");
    alone(g);
    s = dq(g, TN(g, dnnl_u8, 1, 5, 5, 4), 0.5f, NOZP);
    w = RESHAPE(g, TN(g, dnnl_f32, 9, 32), 3, 3, 4, 8);
    w = q(g, w, dnnl_u8, 0.5f, 0);
    w = dq(g, w, 0.5f, 0);
    w = RESHAPE(g, w, 3, 3, 4, 8);
    grp(g, "fp_conv_post_ops");
    x = conv(g, s, w, dnnl_f32);
    x = un(g, dnnl_graph_op_relu, x);
    alone(g);
    q(g, x, dnnl_u8, 1.f, NOZP);
    expect(g);
}

/* Dequantize(u8) -> TypeCast(bf16) source and Dequantize(s8) -> TypeCast
 * weights of the bf16 convolution rows; returns the convolution output. */
static int tc_conv_head(G *g, int wsrc) {
    int s = tc(g, dq(g, TN(g, dnnl_u8, 1, 5, 5, 4), 0.5f, 2), dnnl_bf16);
    int w = tc(g, dq(g, wsrc, 0.25f, NOZP), dnnl_bf16);
    return conv(g, s, w, dnnl_bf16);
}

static void t_x8s8x_tc_conv_add(void) {
    G *g = gnew("x8s8x_tc_conv_add_post_ops_cpu");
    grp(g, "x8s8x_tc_conv_add_post_ops_cpu");
    int x = tc_conv_head(g, TN(g, dnnl_s8, 3, 3, 4, 8));
    int o = tc(g, dq(g, TN(g, dnnl_u8, 1, 3, 3, 8), 0.5f, 0), dnnl_bf16);
    x = bin(g, dnnl_graph_op_add, x, o);
    x = un(g, dnnl_graph_op_relu, x);
    x = tc(g, x, dnnl_f32);
    q(g, x, dnnl_u8, 1.f, NOZP);
    expect(g);

    /* No TypeCast -> Quantize tail: the plain bf16 row takes the sum as a
     * post-op; the sum operand's conversions stay alone. */
    g = gnew("x8s8x_tc_conv_add_post_ops_cpu: no output tail");
    grp(g, "x8s8x_tc_conv_post_ops");
    x = tc_conv_head(g, TN(g, dnnl_s8, 3, 3, 4, 8));
    alone(g);
    o = tc(g, dq(g, TN(g, dnnl_u8, 1, 3, 3, 8), 0.5f, 0), dnnl_bf16);
    into(g, 1);
    x = bin(g, dnnl_graph_op_add, x, o);
    un(g, dnnl_graph_op_relu, x);
    expect(g);
}

static void t_x8s8x_tc_conv(void) {
    /* Weight Quantize from a graph input is part of the pattern. */
    G *g = gnew("x8s8x_tc_conv_post_ops");
    grp(g, "x8s8x_tc_conv_post_ops");
    int w = q(g, TN(g, dnnl_f32, 3, 3, 4, 8), dnnl_s8, 0.25f, NOZP);
    int x = tc_conv_head(g, w);
    int b = tc(g, TN(g, dnnl_f32, 8), dnnl_bf16);
    x = bias_add(g, x, b);
    x = un(g, dnnl_graph_op_relu, x);
    x = tc(g, x, dnnl_f32);
    q(g, x, dnnl_u8, 1.f, NOZP);
    expect(g);

    /* A weight Quantize whose input is computed (not constant, not a graph
     * input, not from a Wildcard) stays outside the bf16 row. */
    g = gnew("x8s8x_tc_conv_post_ops: computed weight Quantize");
    alone(g);
    w = un(g, dnnl_graph_op_relu, TN(g, dnnl_f32, 3, 3, 4, 8));
    w = q(g, w, dnnl_s8, 0.25f, NOZP);
    grp(g, "x8s8x_tc_conv_post_ops");
    x = tc_conv_head(g, w);
    x = un(g, dnnl_graph_op_relu, x);
    x = tc(g, x, dnnl_f32);
    q(g, x, dnnl_u8, 1.f, NOZP);
    expect(g);

    /* u8 weights: no quantized row; the float convolution epilogue (with its
     * bf16 -> f32 TypeCast) fuses and every conversion stays alone. */
    g = gnew("x8s8x_tc_conv_post_ops: u8 weights");
    alone(g);
    int s = tc(g, dq(g, TN(g, dnnl_u8, 1, 5, 5, 4), 0.5f, 2), dnnl_bf16);
    w = tc(g, dq(g, TN(g, dnnl_u8, 3, 3, 4, 8), 0.25f, 0), dnnl_bf16);
    b = tc(g, TN(g, dnnl_f32, 8), dnnl_bf16);
    grp(g, "fp_conv_post_ops");
    x = conv(g, s, w, dnnl_bf16);
    x = bias_add(g, x, b);
    x = un(g, dnnl_graph_op_relu, x);
    x = tc(g, x, dnnl_f32);
    alone(g);
    q(g, x, dnnl_u8, 1.f, NOZP);
    expect(g);
}

static void t_x8x8x_conv(void) {
    /* Plain int8 convolution: the weight Quantize joins whatever feeds it
     * (no constness check here). */
    G *g = gnew("x8x8x_conv_post_ops");
    alone(g);
    int w = un(g, dnnl_graph_op_relu, TN(g, dnnl_f32, 3, 3, 4, 8));
    grp(g, "x8x8x_conv_post_ops");
    w = dq(g, q(g, w, dnnl_s8, 0.25f, NOZP), 0.25f, NOZP);
    int s = dq(g, TN(g, dnnl_u8, 1, 6, 6, 4), 0.5f, 2);
    int x = conv(g, s, w, dnnl_f32);
    x = bias_add(g, x, TN(g, dnnl_f32, 8));
    x = un(g, dnnl_graph_op_relu, x);
    q(g, x, dnnl_u8, 1.f, NOZP);
    expect(g);

    /* u8 weights (int8 weights must be s8). */
    g = gnew("x8x8x_conv_post_ops: u8 weights");
    alone(g);
    s = dq(g, TN(g, dnnl_u8, 1, 6, 6, 4), 0.5f, 2);
    w = dq(g, TN(g, dnnl_u8, 3, 3, 4, 8), 0.25f, 0);
    grp(g, "fp_conv_post_ops");
    x = conv(g, s, w, dnnl_f32);
    x = un(g, dnnl_graph_op_relu, x);
    alone(g);
    q(g, x, dnnl_u8, 1.f, NOZP);
    expect(g);

    /* f8 with unit scales. */
    g = gnew("x8x8x_conv_post_ops: f8");
    grp(g, "x8x8x_conv_post_ops");
    s = dq(g, TN(g, dnnl_f8_e4m3, 1, 5, 5, 4), 1.f, NOZP);
    w = dq(g, TN(g, dnnl_f8_e4m3, 3, 3, 4, 8), 1.f, NOZP);
    x = conv(g, s, w, dnnl_f32);
    un(g, dnnl_graph_op_relu, x);
    expect(g);

    /* f8 source Dequantize with a scale other than 1. */
    g = gnew("x8x8x_conv_post_ops: f8 scale 0.5");
    alone(g);
    s = dq(g, TN(g, dnnl_f8_e4m3, 1, 5, 5, 4), 0.5f, NOZP);
    w = dq(g, TN(g, dnnl_f8_e4m3, 3, 3, 4, 8), 1.f, NOZP);
    grp(g, "fp_conv_post_ops");
    x = conv(g, s, w, dnnl_f32);
    un(g, dnnl_graph_op_relu, x);
    expect(g);
}

/* ---- ConvTranspose ---------------------------------------------------------- */

static void t_x8s8x8_convtranspose(void) {
    G *g = gnew("x8s8x8_convtranspose_add_post_ops_cpu");
    grp(g, "x8s8x8_convtranspose_add_post_ops_cpu");
    int s = dq(g, TN(g, dnnl_u8, 1, 4, 4, 3), 0.5f, NOZP);
    int w = dq(g, TN(g, dnnl_s8, 2, 2, 5, 3), 0.5f, NOZP);
    int x = convt(g, s, w);
    x = bin(g, dnnl_graph_op_add, x, dq(g, TN(g, dnnl_u8, 1, 5, 5, 5), 0.5f, 4));
    x = un(g, dnnl_graph_op_relu, x);
    q(g, x, dnnl_s8, 1.f, NOZP);
    expect(g);

    g = gnew("x8s8x8_convtranspose_add_post_ops_cpu: no final Quantize");
    grp(g, "x8s8x8_convtranspose_post_ops_cpu");
    s = dq(g, TN(g, dnnl_u8, 1, 4, 4, 3), 0.5f, NOZP);
    w = dq(g, TN(g, dnnl_s8, 2, 2, 5, 3), 0.5f, NOZP);
    x = convt(g, s, w);
    alone(g);
    int o = dq(g, TN(g, dnnl_u8, 1, 5, 5, 5), 0.5f, 4);
    into(g, 1);
    x = bin(g, dnnl_graph_op_add, x, o);
    un(g, dnnl_graph_op_relu, x);
    expect(g);

    g = gnew("x8s8x8_convtranspose_post_ops_cpu");
    grp(g, "x8s8x8_convtranspose_post_ops_cpu");
    s = dq(g, TN(g, dnnl_s8, 1, 4, 4, 3), 0.5f, NOZP);
    w = dq(g, q(g, TN(g, dnnl_f32, 2, 2, 5, 3), dnnl_s8, 0.5f, NOZP), 0.5f, NOZP);
    x = convt(g, s, w);
    x = bias_add(g, x, TN(g, dnnl_f32, 5));
    x = un(g, dnnl_graph_op_relu, x);
    q(g, x, dnnl_s8, 1.f, NOZP);
    expect(g);

    /* u8 weights: the float ConvTranspose epilogue. */
    g = gnew("x8s8x8_convtranspose_post_ops_cpu: u8 weights");
    alone(g);
    s = dq(g, TN(g, dnnl_s8, 1, 4, 4, 3), 0.5f, NOZP);
    w = dq(g, q(g, TN(g, dnnl_f32, 2, 2, 5, 3), dnnl_u8, 0.5f, 0), 0.5f, 0);
    grp(g, "fp_convtranspose_post_ops");
    x = convt(g, s, w);
    x = bias_add(g, x, TN(g, dnnl_f32, 5));
    x = un(g, dnnl_graph_op_relu, x);
    alone(g);
    q(g, x, dnnl_s8, 1.f, NOZP);
    expect(g);
}

static void t_fp_convtranspose(void) {
    G *g = gnew("fp_convtranspose_post_ops");
    grp(g, "fp_convtranspose_post_ops");
    int x = convt(g, TN(g, dnnl_f32, 1, 4, 4, 3), TN(g, dnnl_f32, 2, 2, 5, 3));
    x = bias_add(g, x, TN(g, dnnl_f32, 5));
    x = un(g, dnnl_graph_op_relu, x);
    bin(g, dnnl_graph_op_multiply, x, TN(g, dnnl_f32, 1, 1, 1, 5));
    expect(g);

    /* A lone ConvTranspose is claimed by the row too. */
    g = gnew("fp_convtranspose_post_ops: lone");
    grp(g, "fp_convtranspose_post_ops");
    convt(g, TN(g, dnnl_f32, 1, 4, 4, 3), TN(g, dnnl_f32, 2, 2, 5, 3));
    expect(g);

    /* Its output feeds the ReLU and an op outside: the ReLU is given back. */
    g = gnew("fp_convtranspose_post_ops: escaping output");
    grp(g, "fp_convtranspose_post_ops");
    x = convt(g, TN(g, dnnl_f32, 1, 4, 4, 3), TN(g, dnnl_f32, 2, 2, 5, 3));
    alone(g);
    un(g, dnnl_graph_op_relu, x);
    un(g, dnnl_graph_op_abs, x);
    expect(g);
}

/* ---- float convolution ------------------------------------------------------ */

static void t_fp_conv_depthwise(void) {
    G *g = gnew("fp_conv_postops_depthwise_postops_cpu");
    grp(g, "fp_conv_postops_depthwise_postops_cpu");
    int x = conv(g, TN(g, dnnl_f32, 1, 6, 6, 4), TN(g, dnnl_f32, 1, 1, 4, 8), dnnl_f32);
    x = bias_add(g, x, TN(g, dnnl_f32, 8));
    x = un(g, dnnl_graph_op_relu, x);
    x = conv_g(g, x, TN(g, dnnl_f32, 3, 3, 1, 8), dnnl_f32, 8);
    x = bias_add(g, x, TN(g, dnnl_f32, 8));
    un(g, dnnl_graph_op_relu, x);
    expect(g);

    /* The second convolution must be 3x3. */
    g = gnew("fp_conv_postops_depthwise_postops_cpu: 5x5 second conv");
    grp(g, "fp_conv_post_ops");
    x = conv(g, TN(g, dnnl_f32, 1, 6, 6, 4), TN(g, dnnl_f32, 1, 1, 4, 8), dnnl_f32);
    x = un(g, dnnl_graph_op_relu, x);
    grp(g, "fp_conv_post_ops");
    x = conv_g(g, x, TN(g, dnnl_f32, 5, 5, 1, 8), dnnl_f32, 8);
    un(g, dnnl_graph_op_relu, x);
    expect(g);
}

static void t_fp_conv(void) {
    /* BiasAdd, BatchNormInference, then a swish (Multiply with an internal
     * operand) and a binary post-op. */
    G *g = gnew("fp_conv_post_ops");
    grp(g, "fp_conv_post_ops");
    int x = conv(g, TN(g, dnnl_f32, 1, 6, 6, 4), TN(g, dnnl_f32, 3, 3, 4, 8), dnnl_f32);
    x = bias_add(g, x, TN(g, dnnl_f32, 8));
    x = bnorm(g, x, dnnl_f32);
    int sg = un(g, dnnl_graph_op_sigmoid, x);
    x = bin(g, dnnl_graph_op_multiply, x, sg);
    bin(g, dnnl_graph_op_add, x, TN(g, dnnl_f32, 1, 4, 4, 8));
    expect(g);

    g = gnew("fp_conv_post_ops: bf16 with TypeCast(bf16->f32)");
    grp(g, "fp_conv_post_ops");
    x = conv(g, TN(g, dnnl_bf16, 1, 6, 6, 4), TN(g, dnnl_bf16, 3, 3, 4, 8), dnnl_bf16);
    x = un(g, dnnl_graph_op_relu, x);
    tc(g, x, dnnl_f32);
    expect(g);

    /* The final TypeCast is accepted only from bf16 to f32. */
    g = gnew("fp_conv_post_ops: TypeCast(f32->bf16)");
    grp(g, "fp_conv_post_ops");
    x = conv(g, TN(g, dnnl_f32, 1, 6, 6, 4), TN(g, dnnl_f32, 3, 3, 4, 8), dnnl_f32);
    x = un(g, dnnl_graph_op_relu, x);
    alone(g);
    tc(g, x, dnnl_bf16);
    expect(g);

    /* BatchNormInference only before the post-op chain. */
    g = gnew("fp_conv_post_ops: BatchNorm after ReLU");
    grp(g, "fp_conv_post_ops");
    x = conv(g, TN(g, dnnl_f32, 1, 6, 6, 4), TN(g, dnnl_f32, 3, 3, 4, 8), dnnl_f32);
    x = un(g, dnnl_graph_op_relu, x);
    alone(g);
    bnorm(g, x, dnnl_f32);
    expect(g);
}

/* ---- quantized MatMul ------------------------------------------------------ */

/* Dequantize(u8) -> TypeCast(bf16) and Dequantize(s8) -> TypeCast(bf16) into a
 * bf16 MatMul; returns its output.  src is [.., K], weights [K, 8]. */
static int tc_mm_head(G *g, int src, int wsrc) {
    int s = tc(g, dq(g, src, 0.5f, 2), dnnl_bf16);
    int w = tc(g, dq(g, wsrc, 0.25f, NOZP), dnnl_bf16);
    return mm(g, s, w, dnnl_bf16);
}

/* Dequantize(u8) and Dequantize(s8) (optionally fed by `wq`) into an f32 MatMul. */
static int x8_mm_head(G *g, int src, int wq) {
    int s = dq(g, src, 0.5f, 128);
    int w = dq(g, wq, 0.25f, NOZP);
    return mm(g, s, w, dnnl_f32);
}

/* The int8 MatMul rows come in two families that differ only in the head and
 * in a TypeCast(bf16->f32) before the output Quantize; the scenarios both
 * share are written once against this description. */
typedef struct {
    int (*head)(G *g, int src, int wsrc);
    bool tc;      /* bf16 MatMul: casts on the sum operand and before the tail */
    int64_t szp;  /* zero point of the sum operand's Dequantize */
    const char *add, *rtr, *tr, *post; /* the rows of this family */
} mm_family_t;

static const mm_family_t MM_TC = {tc_mm_head, true, 1, "x8x8x8_tc_matmul_add_post_ops_cpu",
                                  "x8x8x8_tc_matmul_reshape_transpose_reshape",
                                  "x8x8x_tc_matmul_transpose_reorder", "x8x8x_tc_matmul_post_ops"};
static const mm_family_t MM_X8 = {x8_mm_head, false, 3, "x8x8x8_matmul_add_post_ops_cpu",
                                  "x8x8x8_matmul_reshape_transpose_reshape", "x8x8x_matmul_transpose_reorder",
                                  "x8x8x_matmul_post_ops"};

/* The bf16 family casts back to f32 where the chain leaves the MatMul's
 * dtype; `row` (if any) is the partition the cast is expected in. */
static int mm_cast_back(G *g, const mm_family_t *f, const char *row, int x) {
    if (!f->tc) return x;
    if (row) grp(g, row);
    return tc(g, x, dnnl_f32);
}

/* gnew with "<row>: <what>"; the name lives in `buf` until expect(). */
static G *mm_gnew(char *buf, size_t n, const char *row, const char *what) {
    snprintf(buf, n, "%s%s%s", row, what ? ": " : "", what ? what : "");
    return gnew(buf);
}

static void t_int8_matmul_family(const mm_family_t *f) {
    char name[160];

    /* No output Quantize: the add row needs one, so the post-ops row takes
     * the sum as a plain post-op; the operand's Dequantize (and cast) stay alone. */
    G *g = mm_gnew(name, sizeof name, f->add, "no output Quantize");
    grp(g, f->post);
    int x = f->head(g, TN(g, dnnl_u8, 4, 16), TN(g, dnnl_s8, 16, 8));
    alone(g);
    int o = dq(g, TN(g, dnnl_u8, 4, 8), 0.5f, f->szp);
    if (f->tc) o = tc(g, o, dnnl_bf16);
    into(g, 1);
    x = bin(g, dnnl_graph_op_add, o, x);
    x = un(g, dnnl_graph_op_relu, x);
    mm_cast_back(g, f, NULL, x);
    expect(g);

    g = mm_gnew(name, sizeof name, f->rtr, NULL);
    grp(g, f->rtr);
    x = f->head(g, TN(g, dnnl_u8, 4, 16), TN(g, dnnl_s8, 16, 8));
    x = RESHAPE(g, x, 4, 2, 4);
    x = TRANSPOSE(g, x, 1, 0, 2);
    x = RESHAPE(g, x, 2, 16);
    x = mm_cast_back(g, f, NULL, x);
    q(g, x, dnnl_s8, 1.f, NOZP);
    expect(g);

    g = mm_gnew(name, sizeof name, f->tr, NULL);
    grp(g, f->tr);
    x = f->head(g, TN(g, dnnl_u8, 2, 4, 16), TN(g, dnnl_s8, 16, 8));
    x = TRANSPOSE(g, x, 0, 2, 1);
    x = un(g, dnnl_graph_op_reorder, x);
    x = mm_cast_back(g, f, NULL, x);
    q(g, x, dnnl_u8, 1.f, NOZP);
    expect(g);

    /* The transposed value also feeds an op outside: only the MatMul fuses;
     * a trailing cast still pairs with the Quantize. */
    g = mm_gnew(name, sizeof name, f->tr, "escaping transpose");
    grp(g, f->post);
    x = f->head(g, TN(g, dnnl_u8, 2, 4, 16), TN(g, dnnl_s8, 16, 8));
    alone(g);
    x = TRANSPOSE(g, x, 0, 2, 1);
    un(g, dnnl_graph_op_abs, x);
    x = un(g, dnnl_graph_op_reorder, x);
    x = mm_cast_back(g, f, "typecast_quantize_fusion", x);
    q(g, x, dnnl_u8, 1.f, NOZP);
    expect(g);
}

/* ---- scenarios of the bf16 (TypeCast) family alone ---- */

static void t_x8x8x8_tc_matmul_add(void) {
    G *g = gnew("x8x8x8_tc_matmul_add_post_ops_cpu");
    grp(g, "x8x8x8_tc_matmul_add_post_ops_cpu");
    int x = tc_mm_head(g, TN(g, dnnl_u8, 4, 16), TN(g, dnnl_s8, 16, 8));
    int o = tc(g, dq(g, TN(g, dnnl_u8, 4, 8), 0.5f, 1), dnnl_bf16);
    x = bin(g, dnnl_graph_op_add, o, x);
    x = un(g, dnnl_graph_op_relu, x);
    x = tc(g, x, dnnl_f32);
    x = bin(g, dnnl_graph_op_multiply, x, TN(g, dnnl_f32, 1, 8));
    q(g, x, dnnl_u8, 1.f, NOZP);
    expect(g);
}

static void t_x8x8x8_tc_matmul_rtr(void) {
    /* Without the Quantize: MatMul alone in the bf16 row, the three layout
     * ops become a shuffle, the TypeCast stays alone. */
    G *g = gnew("x8x8x8_tc_matmul_reshape_transpose_reshape: no Quantize");
    grp(g, "x8x8x_tc_matmul_post_ops");
    int x = tc_mm_head(g, TN(g, dnnl_u8, 4, 16), TN(g, dnnl_s8, 16, 8));
    grp(g, "shuffle_fusion");
    x = RESHAPE(g, x, 4, 2, 4);
    x = TRANSPOSE(g, x, 1, 0, 2);
    x = RESHAPE(g, x, 2, 16);
    alone(g);
    tc(g, x, dnnl_f32);
    expect(g);
}

static void t_x8x8x_tc_matmul_transpose_reorder(void) {
    /* A StaticReshape instead of the Reorder is the reshape-transpose row. */
    G *g = gnew("x8x8x_tc_matmul_transpose_reorder: Reshape instead of Reorder");
    grp(g, "x8x8x8_tc_matmul_reshape_transpose_reshape");
    int x = tc_mm_head(g, TN(g, dnnl_u8, 2, 4, 16), TN(g, dnnl_s8, 16, 8));
    x = TRANSPOSE(g, x, 0, 2, 1);
    x = RESHAPE(g, x, 2, 32);
    x = tc(g, x, dnnl_f32);
    q(g, x, dnnl_u8, 1.f, NOZP);
    expect(g);
}

static void t_x8x8x_tc_matmul_post_ops(void) {
    G *g = gnew("x8x8x_tc_matmul_post_ops");
    grp(g, "x8x8x_tc_matmul_post_ops");
    int x = tc_mm_head(g, TN(g, dnnl_u8, 4, 16), TN(g, dnnl_s8, 16, 8));
    x = bias_add(g, x, tc(g, TN(g, dnnl_f32, 8), dnnl_bf16));
    x = un(g, dnnl_graph_op_relu, x);
    x = select_op(g, TN(g, dnnl_boolean, 4, 8), x, TN(g, dnnl_bf16, 1, 8));
    x = tc(g, x, dnnl_f32);
    x = bin(g, dnnl_graph_op_add, x, TN(g, dnnl_f32, 4, 8));
    x = bin(g, dnnl_graph_op_divide, x, TN(g, dnnl_f32, 1, 8));
    q(g, x, dnnl_u8, 1.f, NOZP);
    expect(g);

    /* f16 casts are not the bf16 head: the float MatMul epilogue fuses. */
    g = gnew("x8x8x_tc_matmul_post_ops: f16 casts");
    alone(g);
    int s = tc(g, dq(g, TN(g, dnnl_u8, 4, 16), 0.5f, 2), dnnl_f16);
    int w = tc(g, dq(g, TN(g, dnnl_s8, 16, 8), 0.25f, NOZP), dnnl_f16);
    grp(g, "fp_matmul_post_ops");
    x = mm(g, s, w, dnnl_f16);
    x = un(g, dnnl_graph_op_relu, x);
    x = tc(g, x, dnnl_f32);
    alone(g);
    q(g, x, dnnl_u8, 1.f, NOZP);
    expect(g);
}

/* ---- scenarios of the f32 family alone ---- */

static void t_x8x8x8_matmul_add(void) {
    G *g = gnew("x8x8x8_matmul_add_post_ops_cpu");
    grp(g, "x8x8x8_matmul_add_post_ops_cpu");
    int wf = TN(g, dnnl_f32, 16, 8);
    constant(g, wf);
    int x = x8_mm_head(g, TN(g, dnnl_u8, 4, 16), q(g, wf, dnnl_s8, 0.25f, NOZP));
    x = bias_add(g, x, TN(g, dnnl_f32, 8));
    x = bin(g, dnnl_graph_op_add, x, dq(g, TN(g, dnnl_u8, 4, 8), 0.5f, 3));
    x = un(g, dnnl_graph_op_relu, x);
    q(g, x, dnnl_u8, 2.f, 5);
    expect(g);

    /* The sum operand's Dequantize output also feeds an op outside (an
     * escaping intermediate): the Add is then a plain post-op with an external operand. */
    g = gnew("x8x8x8_matmul_add_post_ops_cpu: escaping sum Dequantize");
    grp(g, "x8x8x_matmul_post_ops");
    x = x8_mm_head(g, TN(g, dnnl_u8, 4, 16), TN(g, dnnl_s8, 16, 8));
    alone(g);
    int o = dq(g, TN(g, dnnl_u8, 4, 8), 0.5f, 3);
    un(g, dnnl_graph_op_abs, o);
    into(g, 1);
    x = bin(g, dnnl_graph_op_add, x, o);
    x = un(g, dnnl_graph_op_relu, x);
    q(g, x, dnnl_u8, 2.f, 5);
    expect(g);
}

static void t_x8x8x8_matmul_rtr(void) {
    /* The StaticTranspose is required. */
    G *g = gnew("x8x8x8_matmul_reshape_transpose_reshape: no transpose");
    grp(g, "x8x8x_matmul_post_ops");
    int x = x8_mm_head(g, TN(g, dnnl_u8, 4, 16), TN(g, dnnl_s8, 16, 8));
    alone(g);
    x = RESHAPE(g, x, 4, 2, 4);
    q(g, x, dnnl_s8, 1.f, NOZP);
    expect(g);
}

static void t_x8x8x_matmul_transpose_reorder(void) {
    G *g = gnew("x8x8x_matmul_transpose_reorder: no Quantize");
    grp(g, "x8x8x_matmul_transpose_reorder");
    int x = x8_mm_head(g, TN(g, dnnl_u8, 2, 4, 16), TN(g, dnnl_s8, 16, 8));
    x = TRANSPOSE(g, x, 0, 2, 1);
    un(g, dnnl_graph_op_reorder, x);
    expect(g);
}

static void t_x8x8x_matmul_post_ops(void) {
    /* Weight Quantize from a graph input; Select with the running value at
     * input 2. */
    G *g = gnew("x8x8x_matmul_post_ops");
    grp(g, "x8x8x_matmul_post_ops");
    int x = x8_mm_head(g, TN(g, dnnl_u8, 4, 16), q(g, TN(g, dnnl_f32, 16, 8), dnnl_s8, 0.25f, NOZP));
    x = bias_add(g, x, TN(g, dnnl_f32, 8));
    x = un(g, dnnl_graph_op_relu, x);
    x = select_op(g, TN(g, dnnl_boolean, 4, 8), TN(g, dnnl_f32, 1, 8), x);
    q(g, x, dnnl_u8, 1.f, NOZP);
    expect(g);

    /* f8 (the MatMul rows do not restrict the Dequantize to int8). */
    g = gnew("x8x8x_matmul_post_ops: f8");
    grp(g, "x8x8x_matmul_post_ops");
    int s = dq(g, TN(g, dnnl_f8_e4m3, 4, 16), 0.5f, NOZP);
    int w = dq(g, TN(g, dnnl_f8_e5m2, 16, 8), 2.f, NOZP);
    x = mm(g, s, w, dnnl_f32);
    x = un(g, dnnl_graph_op_relu, x);
    q(g, x, dnnl_f8_e4m3, 1.f, NOZP);
    expect(g);

    /* A computed weight Quantize stays outside. */
    g = gnew("x8x8x_matmul_post_ops: computed weight Quantize");
    alone(g);
    int wq = q(g, un(g, dnnl_graph_op_relu, TN(g, dnnl_f32, 16, 8)), dnnl_s8, 0.25f, NOZP);
    grp(g, "x8x8x_matmul_post_ops");
    x = x8_mm_head(g, TN(g, dnnl_u8, 4, 16), wq);
    x = un(g, dnnl_graph_op_relu, x);
    q(g, x, dnnl_u8, 1.f, NOZP);
    expect(g);

    /* ... unless a Wildcard computes it. */
    g = gnew("x8x8x_matmul_post_ops: Wildcard-made weight Quantize");
    alone(g);
    int wc = TN(g, dnnl_f32, 16, 8);
    OP(g, dnnl_graph_op_wildcard, wc, TN(g, dnnl_f32, 16, 8));
    expect_sup(g, 0);
    grp(g, "x8x8x_matmul_post_ops");
    x = x8_mm_head(g, TN(g, dnnl_u8, 4, 16), q(g, wc, dnnl_s8, 0.25f, NOZP));
    un(g, dnnl_graph_op_relu, x);
    expect(g);

    /* A Dequantize that feeds two MatMuls is an escaping intermediate for
     * both: each MatMul fuses only its epilogue. */
    g = gnew("x8x8x_matmul_post_ops: shared weight Dequantize");
    alone(g);
    s = dq(g, TN(g, dnnl_u8, 4, 16), 0.5f, 128);
    w = dq(g, TN(g, dnnl_s8, 16, 8), 0.25f, NOZP);
    grp(g, "fp_matmul_post_ops");
    x = mm(g, s, w, dnnl_f32);
    un(g, dnnl_graph_op_relu, x);
    alone(g);
    s = dq(g, TN(g, dnnl_u8, 4, 16), 0.5f, 128);
    grp(g, "fp_matmul_post_ops");
    x = mm(g, s, w, dnnl_f32);
    un(g, dnnl_graph_op_relu, x);
    expect(g);
}

/* ---- pooling ------------------------------------------------------------------- */

static void t_pool(void) {
    G *g = gnew("x8_pool_add_post_ops_cpu");
    grp(g, "x8_pool_add_post_ops_cpu");
    int x = pool(g, dnnl_graph_op_max_pool, dq(g, TN(g, dnnl_u8, 1, 5, 5, 4), 0.5f, 0));
    x = bin(g, dnnl_graph_op_add, dq(g, TN(g, dnnl_u8, 1, 4, 4, 4), 0.5f, 0), x);
    x = un(g, dnnl_graph_op_relu, x);
    q(g, x, dnnl_u8, 0.5f, 0);
    expect(g);

    /* A per-channel output Quantize fails every int8 pooling row. */
    g = gnew("x8_pool_add_post_ops_cpu: per_channel Quantize");
    alone(g);
    int s = dq(g, TN(g, dnnl_u8, 1, 5, 5, 4), 0.5f, 0);
    int o = dq(g, TN(g, dnnl_u8, 1, 4, 4, 4), 0.5f, 0);
    grp(g, "fp_pool_post_ops");
    x = pool(g, dnnl_graph_op_max_pool, s);
    x = bin(g, dnnl_graph_op_add, x, o);
    x = un(g, dnnl_graph_op_relu, x);
    alone(g);
    {
        int y = like(g, x, dnnl_u8);
        OP(g, dnnl_graph_op_quantize, y, x);
        as(g, dnnl_graph_op_attr_qtype, "per_channel");
        ai(g, dnnl_graph_op_attr_axis, 3);
        afs(g, dnnl_graph_op_attr_scales, 4, (const float[]){0.5f, 0.5f, 1.f, 1.f});
    }
    expect(g);

    g = gnew("x8_pool_reshape_transpose");
    grp(g, "x8_pool_reshape_transpose");
    x = pool(g, dnnl_graph_op_avg_pool, dq(g, TN(g, dnnl_s8, 1, 5, 5, 4), 0.5f, NOZP));
    x = TRANSPOSE(g, x, 0, 3, 1, 2);
    q(g, x, dnnl_s8, 0.5f, NOZP);
    expect(g);

    g = gnew("x8_pool_reshape_transpose: reshape");
    grp(g, "x8_pool_reshape_transpose");
    x = pool(g, dnnl_graph_op_max_pool, dq(g, TN(g, dnnl_s8, 1, 5, 5, 4), 0.5f, NOZP));
    x = RESHAPE(g, x, 1, 16, 4);
    q(g, x, dnnl_s8, 0.5f, NOZP);
    expect(g);

    /* per_channel source Dequantize. */
    g = gnew("x8_pool_reshape_transpose: per_channel Dequantize");
    alone(g);
    {
        int src = TN(g, dnnl_s8, 1, 5, 5, 4);
        s = like(g, src, dnnl_f32);
        OP(g, dnnl_graph_op_dequantize, s, src);
        as(g, dnnl_graph_op_attr_qtype, "per_channel");
        ai(g, dnnl_graph_op_attr_axis, 3);
        afs(g, dnnl_graph_op_attr_scales, 4, (const float[]){0.5f, 0.5f, 1.f, 1.f});
    }
    x = pool(g, dnnl_graph_op_avg_pool, s);
    x = TRANSPOSE(g, x, 0, 3, 1, 2);
    q(g, x, dnnl_s8, 0.5f, NOZP);
    expect(g);

    g = gnew("x8_pool_post_ops");
    grp(g, "x8_pool_post_ops");
    x = pool(g, dnnl_graph_op_max_pool, dq(g, TN(g, dnnl_u8, 1, 5, 5, 4), 0.5f, 0));
    x = un(g, dnnl_graph_op_relu, x);
    x = bin(g, dnnl_graph_op_multiply, x, TN(g, dnnl_f32, 1, 1, 1, 4));
    q(g, x, dnnl_s8, 0.5f, NOZP);
    expect(g);

    /* The output Quantize must be int8 (f8 is not available for pooling). */
    g = gnew("x8_pool_post_ops: f8 Quantize");
    alone(g);
    s = dq(g, TN(g, dnnl_u8, 1, 5, 5, 4), 0.5f, 0);
    grp(g, "fp_pool_post_ops");
    x = pool(g, dnnl_graph_op_max_pool, s);
    x = un(g, dnnl_graph_op_relu, x);
    alone(g);
    q(g, x, dnnl_f8_e4m3, 0.5f, NOZP);
    expect(g);

    g = gnew("fp_pool_post_ops");
    grp(g, "fp_pool_post_ops");
    x = pool(g, dnnl_graph_op_avg_pool, TN(g, dnnl_f32, 1, 5, 5, 4));
    x = un(g, dnnl_graph_op_relu, x);
    bin(g, dnnl_graph_op_add, x, TN(g, dnnl_f32, 1, 4, 4, 4));
    expect(g);

    /* POST+ needs one post-op that takes the pooled value alone. */
    g = gnew("fp_pool_post_ops: escaping pool output");
    alone(g);
    x = pool(g, dnnl_graph_op_max_pool, TN(g, dnnl_f32, 1, 5, 5, 4));
    un(g, dnnl_graph_op_relu, x);
    un(g, dnnl_graph_op_abs, x);
    expect(g);

    /* AvgPool with rounding_type = ceil and exclude_pad = false is never
     * fused.  Alone it is supported: Partita computes it as docs/ops.md defines
     * (a documented deviation from the spec's support table). */
    g = gnew("fp_pool_post_ops: AvgPool ceil without exclude_pad");
    alone(g);
    {
        int src = TN(g, dnnl_f32, 1, 5, 5, 4);
        x = TN(g, dnnl_f32, 1, 3, 3, 4);
        OP(g, dnnl_graph_op_avg_pool, x, src);
        AIS(g, dnnl_graph_op_attr_kernel, 2, 2);
        AIS(g, dnnl_graph_op_attr_strides, 2, 2);
        AIS(g, dnnl_graph_op_attr_pads_begin, 0, 0);
        AIS(g, dnnl_graph_op_attr_pads_end, 0, 0);
        ab(g, dnnl_graph_op_attr_exclude_pad, false);
        as(g, dnnl_graph_op_attr_rounding_type, "ceil");
    }
    un(g, dnnl_graph_op_relu, x);
    expect(g);
}

/* ---- reorder -------------------------------------------------------------------- */

static void t_reorder(void) {
    G *g = gnew("x8_reorder_sum_cpu");
    grp(g, "x8_reorder_sum_cpu");
    int x = un(g, dnnl_graph_op_reorder, dq(g, TN(g, dnnl_s8, 4, 6), 0.5f, NOZP));
    x = bin_none(g, dnnl_graph_op_add, dq(g, TN(g, dnnl_s8, 4, 6), 0.5f, NOZP), x);
    q(g, x, dnnl_s8, 0.5f, NOZP);
    expect(g);

    /* auto_broadcast = numpy: no reorder row at all. */
    g = gnew("x8_reorder_sum_cpu: numpy Add");
    alone(g);
    x = un(g, dnnl_graph_op_reorder, dq(g, TN(g, dnnl_s8, 4, 6), 0.5f, NOZP));
    x = bin(g, dnnl_graph_op_add, x, dq(g, TN(g, dnnl_s8, 4, 6), 0.5f, NOZP));
    as(g, dnnl_graph_op_attr_auto_broadcast, "numpy");
    q(g, x, dnnl_s8, 0.5f, NOZP);
    expect(g);

    g = gnew("fp_reorder_sum");
    grp(g, "fp_reorder_sum");
    x = un(g, dnnl_graph_op_reorder, TN(g, dnnl_f32, 4, 6));
    bin_none(g, dnnl_graph_op_add, x, TN(g, dnnl_f32, 4, 6));
    expect(g);

    g = gnew("fp_reorder_sum: numpy Add");
    alone(g);
    x = un(g, dnnl_graph_op_reorder, TN(g, dnnl_f32, 4, 6));
    bin(g, dnnl_graph_op_add, x, TN(g, dnnl_f32, 4, 6));
    as(g, dnnl_graph_op_attr_auto_broadcast, "numpy");
    expect(g);

    g = gnew("x8_reorder");
    grp(g, "x8_reorder");
    x = un(g, dnnl_graph_op_reorder, dq(g, TN(g, dnnl_u8, 4, 6), 0.5f, 3));
    q(g, x, dnnl_u8, 0.5f, 3);
    expect(g);

    /* Reorder rows need int8 (no f8). */
    g = gnew("x8_reorder: f8 Dequantize");
    alone(g);
    x = un(g, dnnl_graph_op_reorder, dq(g, TN(g, dnnl_f8_e4m3, 4, 6), 0.5f, NOZP));
    q(g, x, dnnl_u8, 0.5f, 3);
    expect(g);
}

/* ---- float MatMul ------------------------------------------------------- */

static void t_fp_matmul(void) {
    G *g = gnew("fp_matmul_transpose_reorder");
    grp(g, "fp_matmul_transpose_reorder");
    int x = mm(g, TN(g, dnnl_f32, 2, 4, 16), TN(g, dnnl_f32, 16, 8), dnnl_f32);
    x = bias_add(g, x, TN(g, dnnl_f32, 8));
    x = TRANSPOSE(g, x, 0, 2, 1);
    un(g, dnnl_graph_op_reorder, x);
    expect(g);

    /* Reshape instead of Reorder: the reshape-transpose row. */
    g = gnew("fp_matmul_transpose_reorder: Reshape instead of Reorder");
    grp(g, "fp_matmul_reshape_transpose_reshape");
    x = mm(g, TN(g, dnnl_f32, 2, 4, 16), TN(g, dnnl_f32, 16, 8), dnnl_f32);
    x = bias_add(g, x, TN(g, dnnl_f32, 8));
    x = TRANSPOSE(g, x, 0, 2, 1);
    RESHAPE(g, x, 2, 32);
    expect(g);

    g = gnew("fp_matmul_reshape_transpose_reshape");
    grp(g, "fp_matmul_reshape_transpose_reshape");
    x = mm(g, TN(g, dnnl_bf16, 4, 16), TN(g, dnnl_bf16, 16, 8), dnnl_bf16);
    x = tc(g, x, dnnl_f32);
    x = RESHAPE(g, x, 4, 2, 4);
    x = TRANSPOSE(g, x, 1, 0, 2);
    RESHAPE(g, x, 2, 16);
    expect(g);

    /* The MatMul output feeds an op outside as well: the MatMul keeps no
     * epilogue (the Abs is given back too). */
    g = gnew("fp_matmul_reshape_transpose_reshape: escaping MatMul output");
    grp(g, "fp_matmul_post_ops");
    x = mm(g, TN(g, dnnl_f32, 4, 16), TN(g, dnnl_f32, 16, 8), dnnl_f32);
    alone(g);
    un(g, dnnl_graph_op_abs, x);
    x = TRANSPOSE(g, x, 1, 0);
    RESHAPE(g, x, 32);
    expect(g);

    g = gnew("fp_matmul_dropout");
    grp(g, "fp_matmul_dropout");
    x = mm(g, TN(g, dnnl_f32, 4, 16), TN(g, dnnl_f32, 16, 8), dnnl_f32);
    dropout(g, x, true);
    expect(g);

    /* A ReLU in between: the MatMul epilogue takes it, Dropout is alone. */
    g = gnew("fp_matmul_dropout: ReLU in between");
    grp(g, "fp_matmul_post_ops");
    x = mm(g, TN(g, dnnl_f32, 4, 16), TN(g, dnnl_f32, 16, 8), dnnl_f32);
    x = un(g, dnnl_graph_op_relu, x);
    alone(g);
    dropout(g, x, false);
    expect_sup(g, -1); /* unsupported alone; single-op support is not a chain row */
    expect(g);

    g = gnew("fp_matmul_post_ops");
    grp(g, "fp_matmul_post_ops");
    x = mm(g, TN(g, dnnl_f32, 4, 16), TN(g, dnnl_f32, 16, 8), dnnl_f32);
    x = bias_add(g, x, TN(g, dnnl_f32, 8));
    x = un(g, dnnl_graph_op_relu, x);
    x = bin(g, dnnl_graph_op_add, x, TN(g, dnnl_f32, 4, 8));
    x = select_op(g, TN(g, dnnl_boolean, 1, 8), x, TN(g, dnnl_f32, 1));
    tc(g, x, dnnl_bf16);
    expect(g);

    /* A lone MatMul is claimed by the row. */
    g = gnew("fp_matmul_post_ops: lone");
    grp(g, "fp_matmul_post_ops");
    mm(g, TN(g, dnnl_f32, 4, 16), TN(g, dnnl_f32, 16, 8), dnnl_f32);
    expect(g);

    /* Only one Select, and nothing but a TypeCast after it. */
    g = gnew("fp_matmul_post_ops: ReLU after Select");
    grp(g, "fp_matmul_post_ops");
    x = mm(g, TN(g, dnnl_f32, 4, 16), TN(g, dnnl_f32, 16, 8), dnnl_f32);
    x = select_op(g, TN(g, dnnl_boolean, 4, 8), x, TN(g, dnnl_f32, 1));
    alone(g);
    un(g, dnnl_graph_op_relu, x);
    expect(g);
}

/* ---- normalization --------------------------------------------------------------- */

static void t_norm(void) {
    G *g = gnew("s8f32s8_bnorm");
    grp(g, "s8f32s8_bnorm");
    int x = bnorm(g, dq(g, TN(g, dnnl_s8, 2, 4, 4, 3), 0.5f, 0), dnnl_f32);
    x = un(g, dnnl_graph_op_relu, x);
    q(g, x, dnnl_s8, 0.25f, NOZP);
    expect(g);

    /* A non-zero zero point fails the int8 row; BatchNorm + ReLU remains. */
    g = gnew("s8f32s8_bnorm: zero point 3");
    alone(g);
    int s = dq(g, TN(g, dnnl_s8, 2, 4, 4, 3), 0.5f, 3);
    grp(g, "fp_bnorm_relu");
    x = bnorm(g, s, dnnl_f32);
    x = un(g, dnnl_graph_op_relu, x);
    alone(g);
    q(g, x, dnnl_s8, 0.25f, NOZP);
    expect(g);

    g = gnew("fp_bnorm_relu");
    grp(g, "fp_bnorm_relu");
    un(g, dnnl_graph_op_relu, bnorm(g, TN(g, dnnl_f32, 2, 4, 4, 3), dnnl_f32));
    expect(g);

    g = gnew("fp_bnorm_relu: BatchNormForwardTraining");
    grp(g, "fp_bnorm_relu");
    {
        int src = TN(g, dnnl_f32, 2, 4, 4, 3);
        int me = TN(g, dnnl_f32, 3), va = TN(g, dnnl_f32, 3), ga = TN(g, dnnl_f32, 3), be = TN(g, dnnl_f32, 3);
        x = like(g, src, dnnl_f32);
        OP(g, dnnl_graph_op_batch_norm_forward_training, x, src, me, va, ga, be);
        for (int k = 0; k < 4; ++k) add_out(g, TN(g, dnnl_f32, 3));
        af(g, dnnl_graph_op_attr_epsilon, 1e-5f);
        un(g, dnnl_graph_op_relu, x);
    }
    expect(g);

    g = gnew("fp_bnorm_relu: Sigmoid");
    alone(g);
    un(g, dnnl_graph_op_sigmoid, bnorm(g, TN(g, dnnl_f32, 2, 4, 4, 3), dnnl_f32));
    expect(g);

    /* ReLUBackward feeds diff_dst (input 1) of BatchNormTrainingBackward. */
    g = gnew("fp_bnorm_bwd_relu_bwd");
    grp(g, "fp_bnorm_bwd_relu_bwd");
    {
        int src = TN(g, dnnl_f32, 2, 3, 3, 4);
        int dd = un(g, dnnl_graph_op_relu_backward, src);
        g->o[g->no - 1].in[1] = TN(g, dnnl_f32, 2, 3, 3, 4);
        g->o[g->no - 1].nin = 2;
        int y = like(g, src, dnnl_f32);
        OP(g, dnnl_graph_op_batch_norm_backward, y, src, dd, TN(g, dnnl_f32, 4), TN(g, dnnl_f32, 4),
           TN(g, dnnl_f32, 4));
        add_out(g, TN(g, dnnl_f32, 4));
        add_out(g, TN(g, dnnl_f32, 4));
        af(g, dnnl_graph_op_attr_epsilon, 1e-5f);
    }
    expect(g);

    /* ... not src (input 0). */
    g = gnew("fp_bnorm_bwd_relu_bwd: into src");
    alone(g);
    {
        int src = TN(g, dnnl_f32, 2, 3, 3, 4);
        int r = un(g, dnnl_graph_op_relu_backward, src);
        g->o[g->no - 1].in[1] = TN(g, dnnl_f32, 2, 3, 3, 4);
        g->o[g->no - 1].nin = 2;
        int y = like(g, src, dnnl_f32);
        OP(g, dnnl_graph_op_batch_norm_backward, y, r, TN(g, dnnl_f32, 2, 3, 3, 4), TN(g, dnnl_f32, 4),
           TN(g, dnnl_f32, 4));
        af(g, dnnl_graph_op_attr_epsilon, 1e-5f);
    }
    expect(g);
}

static int group_norm(G *g, int src, dnnl_data_type_t pdt) {
    int64_t c = g->t[src].d[g->t[src].nd - 1];
    int y = like(g, src, g->t[src].dt);
    OP(g, dnnl_graph_op_group_norm, y, src, TN(g, pdt, c), TN(g, pdt, c));
    ai(g, dnnl_graph_op_attr_groups, 2);
    ab(g, dnnl_graph_op_attr_keep_stats, false);
    return y;
}
static int layer_norm(G *g, int src, dnnl_data_type_t pdt) {
    int64_t c = g->t[src].d[g->t[src].nd - 1];
    int y = like(g, src, g->t[src].dt);
    OP(g, dnnl_graph_op_layer_norm, y, src, TN(g, pdt, c), TN(g, pdt, c));
    ab(g, dnnl_graph_op_attr_keep_stats, false);
    return y;
}

static void t_group_layer_norm(void) {
    G *g = gnew("groupnorm_post_ops_fusion");
    grp(g, "groupnorm_post_ops_fusion");
    int x = group_norm(g, TN(g, dnnl_f32, 2, 4, 4, 6), dnnl_f32);
    x = un(g, dnnl_graph_op_relu, x);
    x = bin(g, dnnl_graph_op_multiply, x, TN(g, dnnl_f32, 1, 1, 1, 6));
    q(g, x, dnnl_s8, 0.5f, NOZP);
    expect(g);

    g = gnew("groupnorm_post_ops_fusion: TypeCast between post-ops");
    grp(g, "groupnorm_post_ops_fusion");
    x = group_norm(g, TN(g, dnnl_f32, 2, 4, 4, 6), dnnl_f32);
    x = un(g, dnnl_graph_op_relu, x);
    x = tc(g, x, dnnl_bf16);
    bin(g, dnnl_graph_op_add, x, TN(g, dnnl_bf16, 2, 4, 4, 6));
    expect(g);

    /* bf16 gamma/beta: no fusion. */
    g = gnew("groupnorm_post_ops_fusion: bf16 params");
    alone(g);
    x = group_norm(g, TN(g, dnnl_bf16, 2, 4, 4, 6), dnnl_bf16);
    expect_sup(g, -1); /* unsupported alone; single-op support is not a chain row */
    un(g, dnnl_graph_op_relu, x);
    expect(g);

    g = gnew("layernorm_post_ops_fusion_cpu");
    grp(g, "layernorm_post_ops_fusion_cpu");
    x = layer_norm(g, TN(g, dnnl_f32, 4, 16), dnnl_f32);
    x = bin(g, dnnl_graph_op_add, x, TN(g, dnnl_f32, 1, 16));
    q(g, x, dnnl_s8, 0.5f, NOZP);
    expect(g);

    g = gnew("layernorm_post_ops_fusion_cpu: unary chain");
    grp(g, "layernorm_post_ops_fusion_cpu");
    x = layer_norm(g, TN(g, dnnl_f32, 4, 16), dnnl_f32);
    x = un(g, dnnl_graph_op_relu, x);
    x = un(g, dnnl_graph_op_tanh, x);
    q(g, x, dnnl_s8, 0.5f, NOZP);
    expect(g);

    /* A binary followed by another post-op: fp_binary_post_ops (8.3) claims
     * the pair before the LayerNorm row (8.2) runs. */
    g = gnew("layernorm_post_ops_fusion_cpu: binary -> post-op tail");
    grp(g, "layernorm_post_ops_fusion_cpu");
    x = layer_norm(g, TN(g, dnnl_f32, 4, 16), dnnl_f32);
    grp(g, "fp_binary_post_ops");
    x = bin(g, dnnl_graph_op_multiply, x, TN(g, dnnl_f32, 1, 16));
    x = un(g, dnnl_graph_op_relu, x);
    alone(g);
    q(g, x, dnnl_s8, 0.5f, NOZP);
    expect(g);

    /* Within priority 8.2 fp_eltwise_binary runs before the LayerNorm row
     * (table order): a ReLU -> Multiply tail is taken first. */
    g = gnew("layernorm_post_ops_fusion_cpu: unary -> binary tail");
    grp(g, "layernorm_post_ops_fusion_cpu");
    x = layer_norm(g, TN(g, dnnl_f32, 4, 16), dnnl_f32);
    grp(g, "fp_eltwise_binary");
    x = un(g, dnnl_graph_op_relu, x);
    x = bin(g, dnnl_graph_op_multiply, x, TN(g, dnnl_f32, 1, 16));
    alone(g);
    q(g, x, dnnl_s8, 0.5f, NOZP);
    expect(g);

    g = gnew("layernorm_post_ops_fusion_cpu: bf16 + TypeCast");
    grp(g, "layernorm_post_ops_fusion_cpu");
    x = layer_norm(g, TN(g, dnnl_bf16, 4, 16), dnnl_f32);
    x = tc(g, x, dnnl_f32);
    un(g, dnnl_graph_op_gelu, x);
    expect(g);

    /* The ReLU result also feeds an op outside: the optional Quantize is
     * given back and the ReLU ends the partition. */
    g = gnew("layernorm_post_ops_fusion_cpu: escaping ReLU");
    grp(g, "layernorm_post_ops_fusion_cpu");
    x = layer_norm(g, TN(g, dnnl_f32, 4, 16), dnnl_f32);
    x = un(g, dnnl_graph_op_relu, x);
    alone(g);
    un(g, dnnl_graph_op_abs, x);
    q(g, x, dnnl_s8, 0.5f, NOZP);
    expect(g);

    /* bf16 gamma/beta (f32 params). */
    g = gnew("layernorm_post_ops_fusion_cpu: bf16 params");
    alone(g);
    x = layer_norm(g, TN(g, dnnl_bf16, 4, 16), dnnl_bf16);
    expect_sup(g, -1); /* unsupported alone; single-op support is not a chain row */
    un(g, dnnl_graph_op_relu, x);
    expect(g);
}

/* ---- interpolate and reduction ------------------------------------------------------- */

static int interpolate(G *g, int src, const char *ctm) {
    const gten_t *S = &g->t[src];
    int y = TN(g, S->dt, S->d[0], 8, 8, S->d[3]);
    OP(g, dnnl_graph_op_interpolate, y, src);
    as(g, dnnl_graph_op_attr_mode, "nearest");
    AIS(g, dnnl_graph_op_attr_sizes, 8, 8);
    if (ctm) as(g, dnnl_graph_op_attr_coordinate_transformation_mode, ctm);
    return y;
}

static void t_interp_reduce(void) {
    G *g = gnew("fp_interpolate_post_ops");
    grp(g, "fp_interpolate_post_ops");
    int x = interpolate(g, TN(g, dnnl_f32, 1, 4, 4, 2), "half_pixel");
    x = un(g, dnnl_graph_op_relu, x);
    bin(g, dnnl_graph_op_add, x, TN(g, dnnl_f32, 1, 8, 8, 2));
    expect(g);

    g = gnew("fp_interpolate_post_ops: default mode");
    grp(g, "fp_interpolate_post_ops");
    un(g, dnnl_graph_op_sigmoid, interpolate(g, TN(g, dnnl_f32, 1, 4, 4, 2), NULL));
    expect(g);

    /* align_corners: no fusion (whether it runs alone is a project decision,
     * see the Interpolate op in docs/ops.md; not checked). */
    g = gnew("fp_interpolate_post_ops: align_corners");
    alone(g);
    x = interpolate(g, TN(g, dnnl_f32, 1, 4, 4, 2), "align_corners");
    expect_sup(g, -1);
    un(g, dnnl_graph_op_relu, x);
    expect(g);

    /* POST+: a lone Interpolate is a plain single op. */
    g = gnew("fp_interpolate_post_ops: lone");
    alone(g);
    interpolate(g, TN(g, dnnl_f32, 1, 4, 4, 2), "half_pixel");
    expect(g);

    g = gnew("fp_reduction_post_ops");
    grp(g, "fp_reduction_post_ops");
    {
        int src = TN(g, dnnl_f32, 4, 6);
        x = TN(g, dnnl_f32, 4, 1);
        OP(g, dnnl_graph_op_reduce_sum, x, src);
        AIS(g, dnnl_graph_op_attr_axes, 1);
        ab(g, dnnl_graph_op_attr_keep_dims, true);
    }
    x = un(g, dnnl_graph_op_relu, x);
    bin(g, dnnl_graph_op_multiply, x, TN(g, dnnl_f32, 4, 1));
    expect(g);

    g = gnew("fp_reduction_post_ops: lone ReduceMean");
    grp(g, "fp_reduction_post_ops");
    {
        int src = TN(g, dnnl_f32, 4, 6);
        x = TN(g, dnnl_f32, 6);
        OP(g, dnnl_graph_op_reduce_mean, x, src);
        AIS(g, dnnl_graph_op_attr_axes, 0);
    }
    expect(g);

    /* No axes: not fused. */
    g = gnew("fp_reduction_post_ops: no axes");
    alone(g);
    {
        int src = TN(g, dnnl_f32, 4, 6);
        x = TN(g, dnnl_f32, 4, 6);
        OP(g, dnnl_graph_op_reduce_sum, x, src);
        expect_sup(g, -1); /* unsupported alone; single-op support is not a chain row */
    }
    un(g, dnnl_graph_op_relu, x);
    expect(g);
}

/* ---- element-wise chains, SoftMax, shuffle / typecast / concat ------------ */

static void t_eltwise(void) {
    G *g = gnew("fp_binary_post_ops");
    grp(g, "fp_binary_post_ops");
    int x = bin(g, dnnl_graph_op_add, TN(g, dnnl_f32, 4, 8), TN(g, dnnl_f32, 1, 8));
    x = un(g, dnnl_graph_op_relu, x);
    x = bin(g, dnnl_graph_op_multiply, TN(g, dnnl_f32, 4, 1), x);
    un(g, dnnl_graph_op_sigmoid, x);
    expect(g);

    g = gnew("fp_binary_post_ops: lone binary");
    alone(g);
    bin(g, dnnl_graph_op_add, TN(g, dnnl_f32, 4, 8), TN(g, dnnl_f32, 1, 8));
    expect(g);

    g = gnew("fp_eltwise_dropout");
    grp(g, "fp_eltwise_dropout");
    dropout(g, un(g, dnnl_graph_op_gelu, TN(g, dnnl_f32, 4, 8)), false);
    expect(g);

    g = gnew("fp_eltwise_dropout: escaping GELU");
    alone(g);
    x = un(g, dnnl_graph_op_gelu, TN(g, dnnl_f32, 4, 8));
    un(g, dnnl_graph_op_abs, x);
    dropout(g, x, false);
    expect_sup(g, -1); /* unsupported alone; single-op support is not a chain row */
    expect(g);

    g = gnew("fp_reciprocal_multiply");
    grp(g, "fp_reciprocal_multiply");
    x = un(g, dnnl_graph_op_reciprocal, TN(g, dnnl_f32, 4, 8));
    bin(g, dnnl_graph_op_multiply, TN(g, dnnl_f32, 4, 8), x);
    expect(g);

    /* Divide is not Multiply. */
    g = gnew("fp_reciprocal_multiply: Divide");
    alone(g);
    x = un(g, dnnl_graph_op_reciprocal, TN(g, dnnl_f32, 4, 8));
    expect_sup(g, -1); /* unsupported alone; single-op support is not a chain row */
    bin(g, dnnl_graph_op_divide, x, TN(g, dnnl_f32, 4, 8));
    expect(g);

    g = gnew("fp_eltwise_binary");
    grp(g, "fp_eltwise_binary");
    x = un(g, dnnl_graph_op_tanh, TN(g, dnnl_f32, 4, 8));
    bin(g, dnnl_graph_op_maximum, TN(g, dnnl_f32, 1, 8), x);
    expect(g);

    /* Two binaries after the unary: fp_binary_post_ops (8.3) claims them
     * before fp_eltwise_binary (8.2) runs. */
    g = gnew("fp_eltwise_binary: shadowed by fp_binary_post_ops");
    alone(g);
    x = un(g, dnnl_graph_op_relu, TN(g, dnnl_f32, 4, 8));
    grp(g, "fp_binary_post_ops");
    x = bin(g, dnnl_graph_op_add, x, TN(g, dnnl_f32, 4, 8));
    bin(g, dnnl_graph_op_multiply, x, TN(g, dnnl_f32, 1, 8));
    expect(g);

    /* A unary head is followed only by binary ops. */
    g = gnew("fp_eltwise_binary: ReLU -> Tanh");
    alone(g);
    un(g, dnnl_graph_op_tanh, un(g, dnnl_graph_op_relu, TN(g, dnnl_f32, 4, 8)));
    expect(g);

    g = gnew("sum_fusion (claimed by fp_binary_post_ops)");
    grp(g, "fp_binary_post_ops");
    x = bin_none(g, dnnl_graph_op_add, TN(g, dnnl_f32, 4, 8), TN(g, dnnl_f32, 4, 8));
    x = bin_none(g, dnnl_graph_op_add, x, TN(g, dnnl_f32, 4, 8));
    bin_none(g, dnnl_graph_op_add, TN(g, dnnl_f32, 4, 8), x);
    expect(g);
}

static void t_sum_fusion_direct(void) {
    /* Any Add -> Add chain is BINARY -> POST+ and fp_binary_post_ops (8.3)
     * runs first, so sum_fusion (8.1) is checked on its own. */
    G *g = gnew("sum_fusion direct");
    int x = bin_none(g, dnnl_graph_op_add, TN(g, dnnl_f32, 4, 8), TN(g, dnnl_f32, 4, 8));
    x = bin_none(g, dnnl_graph_op_add, TN(g, dnnl_f32, 4, 8), x);
    x = bin_none(g, dnnl_graph_op_add, x, TN(g, dnnl_f32, 4, 8));
    bin(g, dnnl_graph_op_add, x, TN(g, dnnl_f32, 4, 8)); /* numpy: not part of the sum */
    int n = direct_match(g, "sum_fusion", 0);
    CHECK_EQ_INT(n, 3);
    if (n == 3) mark_covered("sum_fusion");
    CHECK_EQ_INT(direct_match(g, "sum_fusion", 3), 0); /* numpy head */
    CHECK_EQ_INT(direct_match(g, "sum_fusion", 2), 0); /* Add+ needs a numpy-free follower */
    /* The same graph through fp_binary_post_ops: all four (no broadcast check). */
    CHECK_EQ_INT(direct_match(g, "fp_binary_post_ops", 0), 4);
    free(g);

    g = gnew("sum_fusion direct: lone");
    bin_none(g, dnnl_graph_op_add, TN(g, dnnl_f32, 4, 8), TN(g, dnnl_f32, 4, 8));
    CHECK_EQ_INT(direct_match(g, "sum_fusion", 0), 0);
    free(g);

    /* fp_eltwise_binary takes every binary after the unary when nothing
     * higher claimed them. */
    g = gnew("fp_eltwise_binary direct");
    x = un(g, dnnl_graph_op_relu, TN(g, dnnl_f32, 4, 8));
    x = bin(g, dnnl_graph_op_add, x, TN(g, dnnl_f32, 4, 8));
    x = bin(g, dnnl_graph_op_multiply, x, TN(g, dnnl_f32, 1, 8));
    un(g, dnnl_graph_op_exp, x);
    CHECK_EQ_INT(direct_match(g, "fp_eltwise_binary", 0), 3);
    free(g);
}

static void t_softmax(void) {
    G *g = gnew("fp_softmax_post_ops");
    grp(g, "fp_softmax_post_ops");
    int x = softmax(g, TN(g, dnnl_f32, 4, 8), dnnl_f32);
    x = bin(g, dnnl_graph_op_add, x, TN(g, dnnl_f32, 1, 8));
    tc(g, x, dnnl_bf16);
    expect(g);

    g = gnew("fp_softmax_post_ops: Quantize");
    grp(g, "fp_softmax_post_ops");
    x = softmax(g, TN(g, dnnl_f32, 4, 8), dnnl_f32);
    x = bin(g, dnnl_graph_op_multiply, x, TN(g, dnnl_f32, 1));
    q(g, x, dnnl_u8, 1.f / 256.f, 0);
    expect(g);

    /* The TypeCast must convert from f32. */
    g = gnew("fp_softmax_post_ops: TypeCast(bf16->f32)");
    grp(g, "fp_softmax_post_ops");
    x = softmax(g, TN(g, dnnl_bf16, 4, 8), dnnl_bf16);
    alone(g);
    tc(g, x, dnnl_f32);
    expect(g);
}

static void t_shuffle_typecast_concat(void) {
    G *g = gnew("shuffle_fusion");
    grp(g, "shuffle_fusion");
    int x = RESHAPE(g, TN(g, dnnl_f32, 1, 4, 4, 6), 1, 4, 4, 2, 3);
    x = TRANSPOSE(g, x, 0, 1, 2, 4, 3);
    RESHAPE(g, x, 1, 4, 4, 6);
    expect(g);

    g = gnew("shuffle_fusion: Reorder in the middle");
    alone(g);
    x = RESHAPE(g, TN(g, dnnl_f32, 1, 4, 4, 6), 1, 4, 4, 2, 3);
    x = un(g, dnnl_graph_op_reorder, x);
    RESHAPE(g, x, 1, 4, 4, 6);
    expect(g);

    g = gnew("shuffle_fusion: no final reshape");
    alone(g);
    x = RESHAPE(g, TN(g, dnnl_f32, 1, 4, 4, 6), 1, 4, 4, 2, 3);
    TRANSPOSE(g, x, 0, 1, 2, 4, 3);
    expect(g);

    g = gnew("typecast_quantize_fusion");
    grp(g, "typecast_quantize_fusion");
    q(g, tc(g, TN(g, dnnl_bf16, 4, 8), dnnl_f32), dnnl_s8, 0.5f, NOZP);
    expect(g);

    g = gnew("typecast_quantize_fusion: f16 source");
    alone(g);
    q(g, tc(g, TN(g, dnnl_f16, 4, 8), dnnl_f32), dnnl_s8, 0.5f, NOZP);
    expect(g);

    g = gnew("int8_concat_fusion");
    grp(g, "int8_concat_fusion");
    {
        int a = dq(g, TN(g, dnnl_u8, 2, 3, 4), 0.5f, 2);
        int b = dq(g, TN(g, dnnl_u8, 2, 5, 4), 0.5f, 2);
        int c = dq(g, TN(g, dnnl_u8, 2, 1, 4), 0.5f, 2);
        x = TN(g, dnnl_f32, 2, 9, 4);
        OP(g, dnnl_graph_op_concat, x, a, b, c);
        ai(g, dnnl_graph_op_attr_axis, 1);
        q(g, x, dnnl_u8, 0.5f, 2);
    }
    expect(g);

    /* One input with another scale: every op alone. */
    g = gnew("int8_concat_fusion: scale mismatch");
    alone(g);
    {
        int a = dq(g, TN(g, dnnl_u8, 2, 3, 4), 0.5f, 2);
        int b = dq(g, TN(g, dnnl_u8, 2, 5, 4), 0.25f, 2);
        x = TN(g, dnnl_f32, 2, 8, 4);
        OP(g, dnnl_graph_op_concat, x, a, b);
        ai(g, dnnl_graph_op_attr_axis, 1);
        q(g, x, dnnl_u8, 0.5f, 2);
    }
    expect(g);

    /* The concatenated value also feeds an op outside. */
    g = gnew("int8_concat_fusion: escaping Concat output");
    alone(g);
    {
        int a = dq(g, TN(g, dnnl_s8, 2, 3, 4), 0.5f, NOZP);
        int b = dq(g, TN(g, dnnl_s8, 2, 5, 4), 0.5f, NOZP);
        x = TN(g, dnnl_f32, 2, 8, 4);
        OP(g, dnnl_graph_op_concat, x, a, b);
        ai(g, dnnl_graph_op_attr_axis, 1);
        q(g, x, dnnl_s8, 0.5f, NOZP);
        un(g, dnnl_graph_op_abs, x);
    }
    expect(g);

    /* f8 inputs: int8 only. */
    g = gnew("int8_concat_fusion: f8");
    alone(g);
    {
        int a = dq(g, TN(g, dnnl_f8_e4m3, 2, 3, 4), 0.5f, NOZP);
        int b = dq(g, TN(g, dnnl_f8_e4m3, 2, 5, 4), 0.5f, NOZP);
        x = TN(g, dnnl_f32, 2, 8, 4);
        OP(g, dnnl_graph_op_concat, x, a, b);
        ai(g, dnnl_graph_op_attr_axis, 1);
        q(g, x, dnnl_f8_e4m3, 0.5f, NOZP);
    }
    expect(g);
}

/* ---- matcher mechanics ------------------------------------------------------------------ */

static void t_repetition_limit(void) {
    /* POST* takes at most 19 ops; the rest goes elsewhere. */
    G *g = gnew("repetition: MatMul + 25 ReLU");
    grp(g, "fp_matmul_post_ops");
    int x = mm(g, TN(g, dnnl_f32, 4, 16), TN(g, dnnl_f32, 16, 8), dnnl_f32);
    for (int i = 0; i < 25; ++i) {
        if (i == 19) alone(g);
        x = un(g, dnnl_graph_op_relu, x);
    }
    expect(g);

    g = gnew("repetition: MatMul + 19 ReLU");
    grp(g, "fp_matmul_post_ops");
    x = mm(g, TN(g, dnnl_f32, 4, 16), TN(g, dnnl_f32, 16, 8), dnnl_f32);
    for (int i = 0; i < 19; ++i) x = un(g, dnnl_graph_op_relu, x);
    expect(g);

    g = gnew("repetition: MatMul + 20 ReLU");
    grp(g, "fp_matmul_post_ops");
    x = mm(g, TN(g, dnnl_f32, 4, 16), TN(g, dnnl_f32, 16, 8), dnnl_f32);
    for (int i = 0; i < 20; ++i) {
        if (i == 19) alone(g);
        x = un(g, dnnl_graph_op_relu, x);
    }
    expect(g);

    /* A binary chain of 26: the remainder forms a second chain partition. */
    g = gnew("repetition: Add + 25 Multiply");
    grp(g, "fp_binary_post_ops");
    x = bin(g, dnnl_graph_op_add, TN(g, dnnl_f32, 4, 8), TN(g, dnnl_f32, 4, 8));
    for (int i = 0; i < 25; ++i) {
        if (i == 19) grp(g, "fp_binary_post_ops");
        x = bin(g, dnnl_graph_op_multiply, x, TN(g, dnnl_f32, 1, 8));
    }
    expect(g);

    /* float_bmb's BINARY* before the MatMul is limited too: 1 + 19 binaries
     * fit, a 21st binary in front breaks the chain at its start. */
    g = gnew("repetition: float_bmb with 20 binaries after the head");
    alone(g);
    x = bin(g, dnnl_graph_op_add, TN(g, dnnl_f32, 4, 8), TN(g, dnnl_f32, 4, 8));
    grp(g, "float_bmb");
    x = bin(g, dnnl_graph_op_multiply, x, TN(g, dnnl_f32, 1, 8));
    for (int i = 0; i < 19; ++i) x = bin(g, dnnl_graph_op_multiply, x, TN(g, dnnl_f32, 1, 8));
    x = mm(g, x, TN(g, dnnl_f32, 8, 4), dnnl_f32);
    bin(g, dnnl_graph_op_add, x, TN(g, dnnl_f32, 1, 4));
    expect(g);
}

static void t_commutative(void) {
    /* Add/Multiply/Maximum/Minimum may take the running value
     * at input 1, Select at input 1 or 2; Subtract/Divide may not. */
    static const dnnl_graph_op_kind_t swappable[] = {dnnl_graph_op_add, dnnl_graph_op_multiply,
                                                     dnnl_graph_op_maximum, dnnl_graph_op_minimum};
    for (int k = 0; k < 4; ++k) {
        G *g = gnew("commutative: running value at input 1");
        grp(g, "fp_matmul_post_ops");
        int x = mm(g, TN(g, dnnl_f32, 4, 16), TN(g, dnnl_f32, 16, 8), dnnl_f32);
        x = bin(g, swappable[k], TN(g, dnnl_f32, 1, 8), x);
        un(g, dnnl_graph_op_relu, x);
        expect(g);
    }
    static const dnnl_graph_op_kind_t ordered[] = {dnnl_graph_op_subtract, dnnl_graph_op_divide};
    for (int k = 0; k < 2; ++k) {
        G *g = gnew("commutative: Subtract/Divide do not swap");
        grp(g, "fp_matmul_post_ops");
        int x = mm(g, TN(g, dnnl_f32, 4, 16), TN(g, dnnl_f32, 16, 8), dnnl_f32);
        alone(g);
        bin(g, ordered[k], TN(g, dnnl_f32, 4, 8), x);
        expect(g);

        g = gnew("commutative: Subtract/Divide at input 0");
        grp(g, "fp_matmul_post_ops");
        x = mm(g, TN(g, dnnl_f32, 4, 16), TN(g, dnnl_f32, 16, 8), dnnl_f32);
        bin(g, ordered[k], x, TN(g, dnnl_f32, 4, 8));
        expect(g);
    }
    /* In float_bmb's pre-chain as well: the Subtract cannot continue from
     * the Multiply, so it heads its own match (the Multiply's output is an
     * external operand to it). */
    G *g = gnew("commutative: Subtract in float_bmb pre-chain");
    alone(g);
    int x = bin(g, dnnl_graph_op_multiply, TN(g, dnnl_f32, 4, 8), TN(g, dnnl_f32, 4, 8));
    grp(g, "float_bmb");
    x = bin(g, dnnl_graph_op_subtract, TN(g, dnnl_f32, 4, 8), x);
    mm(g, x, TN(g, dnnl_f32, 8, 6), dnnl_f32);
    expect(g);

    g = gnew("commutative: Add in float_bmb pre-chain");
    grp(g, "float_bmb");
    x = bin(g, dnnl_graph_op_multiply, TN(g, dnnl_f32, 4, 8), TN(g, dnnl_f32, 4, 8));
    x = bin(g, dnnl_graph_op_add, TN(g, dnnl_f32, 4, 8), x);
    mm(g, x, TN(g, dnnl_f32, 8, 6), dnnl_f32);
    expect(g);

    g = gnew("commutative: Select with the running value at input 1");
    grp(g, "fp_matmul_post_ops");
    x = mm(g, TN(g, dnnl_f32, 4, 16), TN(g, dnnl_f32, 16, 8), dnnl_f32);
    select_op(g, TN(g, dnnl_boolean, 4, 8), x, TN(g, dnnl_f32, 4, 8));
    expect(g);
}

static void t_internal_operand(void) {
    /* swish Multiply(x, Sigmoid(x)), x an earlier chain value,
     * with the Sigmoid at either Multiply input. */
    for (int side = 0; side < 2; ++side) {
        G *g = gnew("internal operand: swish after MatMul");
        grp(g, "fp_matmul_post_ops");
        int x = mm(g, TN(g, dnnl_f32, 4, 16), TN(g, dnnl_f32, 16, 8), dnnl_f32);
        int s = un(g, dnnl_graph_op_sigmoid, x);
        x = side ? bin(g, dnnl_graph_op_multiply, s, x) : bin(g, dnnl_graph_op_multiply, x, s);
        bin(g, dnnl_graph_op_add, x, TN(g, dnnl_f32, 1, 8));
        expect(g);
    }
    /* A diamond: r feeds Tanh and the Add that joins Tanh(r) and r. */
    G *g = gnew("internal operand: diamond");
    grp(g, "fp_matmul_post_ops");
    int x = mm(g, TN(g, dnnl_f32, 4, 16), TN(g, dnnl_f32, 16, 8), dnnl_f32);
    int r = un(g, dnnl_graph_op_relu, x);
    int t = un(g, dnnl_graph_op_tanh, r);
    bin(g, dnnl_graph_op_add, r, t);
    expect(g);

    /* Swish on a pooled value (fp_pool_post_ops) and after a convolution
     * with a post-op in front (the fp_conv_post_ops_swish_post_ops form). */
    g = gnew("internal operand: swish after pooling");
    grp(g, "fp_pool_post_ops");
    x = pool(g, dnnl_graph_op_max_pool, TN(g, dnnl_f32, 1, 5, 5, 4));
    int s = un(g, dnnl_graph_op_sigmoid, x);
    bin(g, dnnl_graph_op_multiply, x, s);
    expect(g);

    g = gnew("internal operand: conv post-op then swish");
    grp(g, "fp_conv_post_ops");
    x = conv(g, TN(g, dnnl_f32, 1, 6, 6, 4), TN(g, dnnl_f32, 3, 3, 4, 8), dnnl_f32);
    x = bin(g, dnnl_graph_op_add, x, TN(g, dnnl_f32, 1, 1, 1, 8));
    s = un(g, dnnl_graph_op_sigmoid, x);
    x = bin(g, dnnl_graph_op_multiply, s, x);
    un(g, dnnl_graph_op_relu, x);
    expect(g);
}

static void t_backtracking(void) {
    /* The greedy POST* takes ReLU, Tanh and Add; Tanh's output also leaves
     * the chain, so Add is given back and Tanh ends the partition. */
    G *g = gnew("backtracking: escaping Tanh");
    grp(g, "fp_matmul_post_ops");
    int x = mm(g, TN(g, dnnl_f32, 4, 16), TN(g, dnnl_f32, 16, 8), dnnl_f32);
    x = un(g, dnnl_graph_op_relu, x);
    x = un(g, dnnl_graph_op_tanh, x);
    alone(g);
    bin(g, dnnl_graph_op_add, x, TN(g, dnnl_f32, 4, 8));
    un(g, dnnl_graph_op_abs, x);
    expect(g);

    /* An intermediate escaping in the middle of a long chain: the
     * remainder fuses by itself (fp_binary_post_ops from the Add). */
    g = gnew("backtracking: escape in the middle");
    grp(g, "fp_matmul_post_ops");
    x = mm(g, TN(g, dnnl_f32, 4, 16), TN(g, dnnl_f32, 16, 8), dnnl_f32);
    x = un(g, dnnl_graph_op_relu, x);
    x = un(g, dnnl_graph_op_sigmoid, x);
    alone(g);
    un(g, dnnl_graph_op_exp, x);
    grp(g, "fp_binary_post_ops");
    x = bin(g, dnnl_graph_op_add, x, TN(g, dnnl_f32, 4, 8));
    x = un(g, dnnl_graph_op_relu, x);
    bin(g, dnnl_graph_op_multiply, x, TN(g, dnnl_f32, 1, 8));
    expect(g);

    /* The Quantize of x8x8x_matmul_post_ops is required by nothing: when
     * the Select's output escapes, the partition ends at the Select. */
    g = gnew("backtracking: optional tail given back");
    grp(g, "x8x8x_matmul_post_ops");
    x = x8_mm_head(g, TN(g, dnnl_u8, 4, 16), TN(g, dnnl_s8, 16, 8));
    x = select_op(g, TN(g, dnnl_boolean, 4, 8), x, TN(g, dnnl_f32, 1));
    alone(g);
    un(g, dnnl_graph_op_abs, x);
    q(g, x, dnnl_u8, 1.f, NOZP);
    expect(g);
}

static void t_cycle(void) {
    /* SoftMax -> Multiply where the Multiply's other operand is
     * computed outside from SoftMax's stats output. */
    G *g = gnew("cycle: SoftMax stats");
    alone(g);
    int src = TN(g, dnnl_f32, 4, 8);
    int y = like(g, src, dnnl_f32);
    OP(g, dnnl_graph_op_softmax, y, src);
    ai(g, dnnl_graph_op_attr_axis, -1);
    int st = TN(g, dnnl_f32, 4, 1);
    add_out(g, st);
    int r = RESHAPE(g, st, 4, 1);
    bin(g, dnnl_graph_op_multiply, y, r);
    expect(g);

    /* Without the loop back (stats leave the graph) the chain fuses. */
    g = gnew("cycle: SoftMax stats leave the graph");
    grp(g, "fp_softmax_post_ops");
    src = TN(g, dnnl_f32, 4, 8);
    y = like(g, src, dnnl_f32);
    OP(g, dnnl_graph_op_softmax, y, src);
    ai(g, dnnl_graph_op_attr_axis, -1);
    add_out(g, TN(g, dnnl_f32, 4, 1));
    bin(g, dnnl_graph_op_multiply, y, TN(g, dnnl_f32, 4, 1));
    expect(g);

    /* LayerNorm's mean output loops back into its post-op chain. */
    g = gnew("cycle: LayerNorm mean");
    alone(g);
    src = TN(g, dnnl_f32, 4, 16);
    y = like(g, src, dnnl_f32);
    OP(g, dnnl_graph_op_layer_norm, y, src, TN(g, dnnl_f32, 16), TN(g, dnnl_f32, 16));
    int mean = TN(g, dnnl_f32, 4);
    add_out(g, mean);
    add_out(g, TN(g, dnnl_f32, 4));
    r = RESHAPE(g, mean, 4, 1);
    bin(g, dnnl_graph_op_add, y, r);
    expect(g);
}

/* ---- spec expectations the rows may not meet (reported as SPEC MISMATCH) --------------- */

static void t_spec(void) {
    /* BiasAdd directly after the compute op only when it has no bias
     * input. */
    G *g = gnew("fp_matmul_post_ops: BiasAdd after a MatMul with bias");
    g->spec = "fp_matmul_post_ops: BiasAdd? only when the MatMul has exactly two inputs";
    grp(g, "fp_matmul_post_ops");
    int x = mm_bias(g, TN(g, dnnl_f32, 4, 16), TN(g, dnnl_f32, 16, 8), TN(g, dnnl_f32, 8));
    alone(g);
    x = bias_add(g, x, TN(g, dnnl_f32, 8));
    un(g, dnnl_graph_op_relu, x);
    expect(g);

    /* The spec also accepts an Add without auto_broadcast; Partita fills attribute
     * defaults at add_op (numpy), so an absent attribute reads as numpy and
     * the Add stays alone (documented deviation). */
    g = gnew("fp_reorder_sum: Add without auto_broadcast");
    alone(g);
    x = un(g, dnnl_graph_op_reorder, TN(g, dnnl_f32, 4, 6));
    bin(g, dnnl_graph_op_add, x, TN(g, dnnl_f32, 4, 6));
    expect(g);

    /* outside POST* the other operand must be a partition input. */
    g = gnew("fp_reorder_sum: Add(r, r)");
    g->spec = "fp_reorder_sum: Reorder -> Add(., ext); internal inputs only in POST*";
    alone(g);
    x = un(g, dnnl_graph_op_reorder, TN(g, dnnl_f32, 4, 6));
    bin_none(g, dnnl_graph_op_add, x, x);
    expect(g);

    /* ((Multiply|Divide)? -> Quantize)? -- no Multiply without Quantize. */
    g = gnew("x8x8x_tc_matmul_post_ops: Multiply without Quantize");
    g->spec = "x8x8x_tc_matmul_post_ops: ((Multiply|Divide)? -> Quantize)?";
    grp(g, "x8x8x_tc_matmul_post_ops");
    x = tc_mm_head(g, TN(g, dnnl_u8, 4, 16), TN(g, dnnl_s8, 16, 8));
    x = un(g, dnnl_graph_op_relu, x);
    x = tc(g, x, dnnl_f32);
    alone(g);
    bin(g, dnnl_graph_op_multiply, x, TN(g, dnnl_f32, 1, 8));
    expect(g);

    /* (TypeCast(bf16->f32) -> Quantize)? -- no TypeCast alone. */
    g = gnew("x8s8x_tc_conv_post_ops: TypeCast without Quantize");
    g->spec = "x8s8x_tc_conv_post_ops: (TypeCast(bf16->f32) -> Quantize)?";
    grp(g, "x8s8x_tc_conv_post_ops");
    x = tc_conv_head(g, TN(g, dnnl_s8, 3, 3, 4, 8));
    x = un(g, dnnl_graph_op_relu, x);
    alone(g);
    tc(g, x, dnnl_f32);
    expect(g);

    /* (TypeCast(bf16->) -> Quantize)? after the Reorder. */
    g = gnew("x8x8x_tc_matmul_transpose_reorder: TypeCast without Quantize");
    g->spec = "x8x8x_tc_matmul_transpose_reorder: (TypeCast(bf16->) -> Quantize)?";
    grp(g, "x8x8x_tc_matmul_transpose_reorder");
    x = tc_mm_head(g, TN(g, dnnl_u8, 2, 4, 16), TN(g, dnnl_s8, 16, 8));
    x = TRANSPOSE(g, x, 0, 2, 1);
    x = un(g, dnnl_graph_op_reorder, x);
    alone(g);
    tc(g, x, dnnl_f32);
    expect(g);

    /* every post-op input must be f32. */
    g = gnew("fp_softmax_post_ops: bf16 post-op");
    g->spec = "fp_softmax_post_ops: every post-op input must be f32";
    grp(g, "fp_softmax_post_ops");
    x = softmax(g, TN(g, dnnl_bf16, 4, 8), dnnl_bf16);
    alone(g);
    bin(g, dnnl_graph_op_add, x, TN(g, dnnl_bf16, 1, 8));
    expect(g);
}

/* ---- execution: fused partitions against the debug policy -------------------------------- */

static void t_exec(void) {
    G *g = gnew("exec fp_matmul_post_ops");
    int x = mm(g, TN(g, dnnl_f32, 5, 17), TN(g, dnnl_f32, 17, 7), dnnl_f32);
    x = bias_add(g, x, TN(g, dnnl_f32, 7));
    x = un(g, dnnl_graph_op_relu, x);
    x = bin(g, dnnl_graph_op_multiply, x, TN(g, dnnl_f32, 1, 7));
    bin(g, dnnl_graph_op_add, TN(g, dnnl_f32, 5, 7), x);
    exec_vs_debug(g, "fp_matmul_post_ops", 5, 1, 0, 0);

    g = gnew("exec float_bmb");
    x = bin(g, dnnl_graph_op_multiply, TN(g, dnnl_f32, 3, 9), TN(g, dnnl_f32, 3, 9));
    x = bin(g, dnnl_graph_op_add, TN(g, dnnl_f32, 1, 9), x);
    x = mm(g, x, TN(g, dnnl_f32, 9, 5), dnnl_f32);
    x = bin(g, dnnl_graph_op_add, x, TN(g, dnnl_f32, 1, 5));
    bin(g, dnnl_graph_op_multiply, x, TN(g, dnnl_f32, 3, 5));
    exec_vs_debug(g, "float_bmb", 5, 1, 0, 0);

    g = gnew("exec fp_conv_post_ops swish");
    x = conv(g, TN(g, dnnl_f32, 2, 6, 5, 3), TN(g, dnnl_f32, 3, 3, 3, 4), dnnl_f32);
    x = bias_add(g, x, TN(g, dnnl_f32, 4));
    int s = un(g, dnnl_graph_op_sigmoid, x);
    x = bin(g, dnnl_graph_op_multiply, x, s);
    bin(g, dnnl_graph_op_add, x, TN(g, dnnl_f32, 1, 1, 1, 4));
    exec_vs_debug(g, "fp_conv_post_ops", 5, 1, 1e-5, 1e-5);

    g = gnew("exec x8x8x8_matmul_add_post_ops_cpu");
    x = x8_mm_head(g, TN(g, dnnl_u8, 5, 16), TN(g, dnnl_s8, 16, 7));
    x = bias_add(g, x, TN(g, dnnl_f32, 7));
    x = bin(g, dnnl_graph_op_add, dq(g, TN(g, dnnl_u8, 5, 7), 0.5f, 3), x);
    x = un(g, dnnl_graph_op_relu, x);
    q(g, x, dnnl_u8, 2.f, 5);
    exec_vs_debug(g, "x8x8x8_matmul_add_post_ops_cpu", 8, 1, 0, 0);

    g = gnew("exec x8x8x_conv_post_ops");
    {
        int sq = dq(g, TN(g, dnnl_u8, 1, 6, 5, 4), 0.5f, 2);
        int w = dq(g, TN(g, dnnl_s8, 3, 3, 4, 5), 0.25f, NOZP);
        x = conv(g, sq, w, dnnl_f32);
        x = bias_add(g, x, TN(g, dnnl_f32, 5));
        x = un(g, dnnl_graph_op_relu, x);
        q(g, x, dnnl_s8, 4.f, NOZP);
    }
    exec_vs_debug(g, "x8x8x_conv_post_ops", 6, 1, 0, 0);

    g = gnew("exec int8_concat_fusion");
    {
        int a = dq(g, TN(g, dnnl_u8, 2, 3, 5), 0.5f, 7);
        int b = dq(g, TN(g, dnnl_u8, 2, 4, 5), 0.5f, 7);
        x = TN(g, dnnl_f32, 2, 7, 5);
        OP(g, dnnl_graph_op_concat, x, a, b);
        ai(g, dnnl_graph_op_attr_axis, 1);
        q(g, x, dnnl_u8, 0.5f, 7);
    }
    exec_vs_debug(g, "int8_concat_fusion", 4, 1, 0, 0);

    g = gnew("exec shuffle_fusion");
    x = RESHAPE(g, TN(g, dnnl_f32, 2, 3, 3, 6), 2, 3, 3, 2, 3);
    x = TRANSPOSE(g, x, 0, 1, 2, 4, 3);
    RESHAPE(g, x, 2, 3, 3, 6);
    exec_vs_debug(g, "shuffle_fusion", 3, 1, 0, 0);

    g = gnew("exec fp_binary_post_ops");
    x = bin(g, dnnl_graph_op_add, TN(g, dnnl_f32, 4, 1, 6), TN(g, dnnl_f32, 3, 6));
    x = un(g, dnnl_graph_op_relu, x);
    bin(g, dnnl_graph_op_multiply, x, TN(g, dnnl_f32, 4, 3, 1));
    exec_vs_debug(g, "fp_binary_post_ops", 3, 1, 0, 0);
}

/* bf16 MatMul -> Add -> ReLU -> TypeCast(f32), or the same chain in f32. */
static G *bf16_matmul_chain(bool bf16) {
    G *g = gnew(bf16 ? "exec bf16 fp_matmul_post_ops" : "f32 twin of fp_matmul_post_ops");
    dnnl_data_type_t dt = bf16 ? dnnl_bf16 : dnnl_f32;
    int x = mm(g, TN(g, dt, 6, 24), TN(g, dt, 24, 10), dt);
    x = bin(g, dnnl_graph_op_add, x, TN(g, dt, 1, 10));
    x = un(g, dnnl_graph_op_relu, x);
    if (bf16) tc(g, x, dnnl_f32);
    return g;
}

/* u8/s8 -> bf16 convolution -> BiasAdd -> ReLU -> u8, or the same in f32. */
static G *bf16_conv_chain(bool bf16) {
    G *g = gnew(bf16 ? "exec x8s8x_tc_conv_post_ops" : "f32 twin of x8s8x_tc_conv_post_ops");
    int s = dq(g, TN(g, dnnl_u8, 1, 6, 7, 4), 0.5f, 2);
    int w = dq(g, TN(g, dnnl_s8, 3, 3, 4, 6), 0.25f, NOZP);
    int b = TN(g, dnnl_f32, 6);
    if (bf16) {
        s = tc(g, s, dnnl_bf16);
        w = tc(g, w, dnnl_bf16);
        b = tc(g, b, dnnl_bf16);
    }
    int x = conv(g, s, w, bf16 ? dnnl_bf16 : dnnl_f32);
    x = bias_add(g, x, b);
    x = un(g, dnnl_graph_op_relu, x);
    if (bf16) x = tc(g, x, dnnl_f32);
    q(g, x, dnnl_u8, 8.f, 0);
    return g;
}

/* The bf16 chain fused must equal the f32 twin (intermediates kept in f32);
 * op by op it rounds every bf16 intermediate and differs somewhere. */
static void exec_vs_twin(G *g, G *twin, const char *row, size_t want_ops) {
    void *in[MAXT], *tin[MAXT];
    gen_inputs(g, in, 5u);
    gen_inputs(twin, tin, 5u);
    run_t rf, rd, rt;
    const char *frow = NULL;
    size_t fops = 0;
    bool fk = false;
    size_t npf = run_graph(g, dnnl_graph_partition_policy_fusion, in, &rf, &frow, &fops, &fk);
    size_t npd = run_graph(g, dnnl_graph_partition_policy_debug, in, &rd, NULL, NULL, NULL);
    size_t npt = run_graph(twin, dnnl_graph_partition_policy_debug, tin, &rt, NULL, NULL, NULL);
    CHECK_EQ_INT(npf, 1);
    CHECK_EQ_INT(fk, row_has_kernel(row));
    CHECK_EQ_INT(fops, want_ops);
    CHECK(frow && strcmp(frow, row) == 0);
    CHECK(npd > 1 && npt > 1);
    if (npf && npt) compare_outputs(g->name, g, &rf, twin, &rt, 1e-6, 1e-6);
    if (npd && npt) {
        /* Op by op, bf16 rounding shows up (so the comparison above means
         * something), within bf16 accuracy (or one quantization step). */
        int t = g->nt - 1, u = twin->nt - 1;
        int64_t n = 1, differ = 0;
        for (int i = 0; i < g->t[t].nd; ++i) n *= g->t[t].d[i];
        for (int64_t e = 0; e < n; ++e) {
            double a = pt_load_f32(rd.buf[t], g->t[t].dt, e), b = pt_load_f32(rt.buf[u], twin->t[u].dt, e);
            differ += a != b;
            CHECK(fabs(a - b) <= 1.0 + fabs(b) / 64.0);
        }
        CHECK(differ > 0);
    }
    run_free(g, &rf);
    run_free(g, &rd);
    run_free(twin, &rt);
    free_inputs(g, in);
    free_inputs(twin, tin);
    free(g);
    free(twin);
}

static void t_exec_bf16(void) {
    exec_vs_twin(bf16_matmul_chain(true), bf16_matmul_chain(false), "fp_matmul_post_ops", 4);
    exec_vs_twin(bf16_conv_chain(true), bf16_conv_chain(false), "x8s8x_tc_conv_post_ops", 10);
}

/* ---- coverage ------------------------------------------------------------------------------ */

static void t_coverage(void) {
    int rows = 0;
    for (int r = 0; r < pt_pattern_row_count(); ++r) {
        const pt_pattern_row *row = pt_pattern_row_at(r);
        if (!row->chain && strcmp(row->name, "int8_concat_fusion") != 0) continue;
        ++rows;
        bool seen = false;
        for (int i = 0; i < ncovered; ++i) seen = seen || strcmp(covered[i], row->name) == 0;
        if (!seen) fprintf(stderr, "chain row %s: no case saw it claim its partition\n", row->name);
        CHECK(seen);
    }
    CHECK(rows >= 46);
}

/* The registry lists rows in driver order: priorities never rise, and every
 * chain row is found by name. */
static void t_registry(void) {
    int n = pt_pattern_row_count();
    CHECK(n >= 59);
    CHECK(pt_pattern_row_at(n) == NULL);
    for (int r = 1; r < n; ++r) CHECK(pt_pattern_row_at(r)->priority <= pt_pattern_row_at(r - 1)->priority);
    for (int r = 0; r < pt_chain_row_count; ++r)
        if (pt_chain_rows[r].chain) CHECK(pt_chain_pattern_named(pt_chain_rows[r].name) == pt_chain_rows[r].chain);
    CHECK(pt_chain_pattern_named("no_such_row") == NULL);
}

int main(void) {
    CHECK_EQ_INT(dnnl_engine_create(&eng, dnnl_cpu, 0), dnnl_success);
    CHECK_EQ_INT(dnnl_stream_create(&strm, eng, dnnl_stream_default_flags), dnnl_success);
    t_registry();
    t_float_bmb();
    t_compressed_wei_matmul();
    t_x8x8x8_conv_add();
    t_x8s8x_conv_reshape();
    t_x8s8x_tc_conv_add();
    t_x8s8x_tc_conv();
    t_x8x8x_conv();
    t_x8s8x8_convtranspose();
    t_fp_convtranspose();
    t_fp_conv_depthwise();
    t_fp_conv();
    t_int8_matmul_family(&MM_TC);
    t_int8_matmul_family(&MM_X8);
    t_x8x8x8_tc_matmul_add();
    t_x8x8x8_tc_matmul_rtr();
    t_x8x8x_tc_matmul_transpose_reorder();
    t_x8x8x_tc_matmul_post_ops();
    t_x8x8x8_matmul_add();
    t_x8x8x8_matmul_rtr();
    t_x8x8x_matmul_transpose_reorder();
    t_x8x8x_matmul_post_ops();
    t_pool();
    t_reorder();
    t_fp_matmul();
    t_norm();
    t_group_layer_norm();
    t_interp_reduce();
    t_eltwise();
    t_sum_fusion_direct();
    t_softmax();
    t_shuffle_typecast_concat();
    t_repetition_limit();
    t_commutative();
    t_internal_operand();
    t_backtracking();
    t_cycle();
    t_spec();
    t_exec();
    t_exec_bf16();
    t_coverage();
    dnnl_stream_destroy(strm);
    dnnl_engine_destroy(eng);
    return pt_test_summary("test_int_chain_patterns");
}
