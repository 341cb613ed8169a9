/* SDPA / GQA training backward fusion (docs/fusion.md): graphs built
 * through the public API must form one partition (float_sdp_backward_fusion
 * or float_gqa_backward_fusion) that runs through the fused kernel, and its
 * outputs must be bit-identical to the same partition executed op by op
 * through the reference kernels (the compiled plan run with its fused kernel
 * switched off).  Negative graphs (no dS scale, an intermediate with an
 * outside consumer, dP or dQ reading another dO / K) must not become one
 * partition and must still match the debug-policy run (every op alone). */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "oneapi/dnnl/dnnl_graph.h"
#include "compile/compiled.h"
#include "ir/dtype.h"
#include "test_util.h"

#define OK(expr) CHECK_EQ_INT((expr), dnnl_success)
#define MAXT 64
#define MAXO 40
#define MAXP 48

typedef dnnl_graph_logical_tensor_t lt_t;

static dnnl_engine_t eng;
static dnnl_stream_t strm;

/* ---- graph description ---------------------------------------------------- */

enum { F_RAND, F_MASK, F_BOOL, F_CONST, F_STATS };

typedef struct {
    dnnl_graph_op_kind_t kind;
    size_t in[4], out[1];
    int nin, nout;
    int attr[3]; /* attribute names; values below */
    int64_t val[3][4];
    int nval[3];
    int nattr;
} op_d;

typedef struct {
    lt_t lt[MAXT]; /* tensor id = index + 1 */
    int fill[MAXT];
    double fval[MAXT];
    int nt;
    op_d op[MAXO];
    int nop;
    size_t result[6];
    int nres;
} gdesc;

static size_t tensor(gdesc *g, dnnl_data_type_t dt, int nd, const int64_t *dims, const int64_t *strides) {
    lt_t *lt = &g->lt[g->nt];
    dnnl_dims_t d = {0}, s = {0};
    for (int i = 0; i < nd; ++i) d[i] = dims[i];
    size_t id = (size_t)g->nt + 1;
    if (strides) {
        for (int i = 0; i < nd; ++i) s[i] = strides[i];
        dnnl_graph_logical_tensor_init_with_strides(lt, id, dt, nd, d, s, dnnl_graph_tensor_property_undef);
    } else {
        dnnl_graph_logical_tensor_init_with_dims(lt, id, dt, nd, d, dnnl_graph_layout_type_strided,
                                                 dnnl_graph_tensor_property_undef);
    }
    g->fill[g->nt] = F_RAND;
    ++g->nt;
    return id;
}

static size_t scalar(gdesc *g, dnnl_data_type_t dt, bool host, double v) {
    int64_t one[1] = {1};
    size_t id = tensor(g, dt, host ? 0 : 1, one, NULL);
    if (host) g->lt[id - 1].property = dnnl_graph_tensor_property_host_scalar;
    g->fill[id - 1] = F_CONST;
    g->fval[id - 1] = v;
    return id;
}

static op_d *add(gdesc *g, dnnl_graph_op_kind_t kind, int nin, const size_t *in, int nout, size_t out) {
    op_d *o = &g->op[g->nop++];
    memset(o, 0, sizeof *o);
    o->kind = kind;
    o->nin = nin;
    o->nout = nout;
    for (int i = 0; i < nin; ++i) o->in[i] = in[i];
    o->out[0] = out;
    return o;
}

static void attr(op_d *o, int name, const int64_t *v, int n) {
    o->attr[o->nattr] = name;
    for (int i = 0; i < n; ++i) o->val[o->nattr][i] = v[i];
    o->nval[o->nattr++] = n;
}

static void attr1(op_d *o, int name, int64_t v) { attr(o, name, &v, 1); }

static bool is_bool_attr(int name) {
    return name == dnnl_graph_op_attr_transpose_a || name == dnnl_graph_op_attr_transpose_b ||
           name == dnnl_graph_op_attr_keep_dims;
}

static bool produced(const gdesc *g, size_t id) {
    for (int o = 0; o < g->nop; ++o)
        if (g->op[o].nout && g->op[o].out[0] == id) return true;
    return false;
}

static int64_t span(const lt_t *lt) {
    int64_t s = 1;
    for (int d = 0; d < lt->ndims; ++d) {
        if (lt->dims[d] == 0) return 0;
        s += (lt->dims[d] - 1) * lt->layout.strides[d];
    }
    return s;
}

static uint32_t rng = 2024u;
static float frand(void) { /* [-1, 1) */
    rng = rng * 1664525u + 1013904223u;
    return (float)((rng >> 8) & 0xffffff) / 8388608.f - 1.f;
}

/* Fills the logical elements of an input; the rest of the buffer holds NaN
 * so that a read outside the strided view shows up. */
static void fill_input(const gdesc *g, int t, void *buf) {
    const lt_t *lt = &g->lt[t];
    if (g->fill[t] == F_CONST && (lt->data_type == dnnl_s64 || lt->data_type == dnnl_s32)) {
        int64_t v = (int64_t)g->fval[t];
        if (lt->data_type == dnnl_s64) memcpy(buf, &v, sizeof v);
        else {
            int32_t w = (int32_t)v;
            memcpy(buf, &w, sizeof w);
        }
        return;
    }
    int64_t n = span(lt);
    bool flt = pt_dt_is_float(lt->data_type);
    for (int64_t k = 0; k < n; ++k) pt_store_f32(buf, lt->data_type, k, flt ? NAN : 0.f);
    int64_t total = 1;
    for (int d = 0; d < lt->ndims; ++d) total *= lt->dims[d];
    for (int64_t e = 0; e < total; ++e) {
        int64_t rem = e, off = 0;
        for (int d = lt->ndims - 1; d >= 0; --d) {
            off += (rem % lt->dims[d]) * lt->layout.strides[d];
            rem /= lt->dims[d];
        }
        float v;
        switch (g->fill[t]) {
            case F_MASK: { /* additive mask: finite values, some -inf */
                float r = frand();
                v = r < -0.7f ? -INFINITY : 2.f * r;
                break;
            }
            case F_BOOL: v = frand() < 0.4f ? 1.f : 0.f; break;
            case F_CONST: v = (float)g->fval[t]; break;
            case F_STATS: v = 1.f + frand(); break; /* keeps exp(S2 - stats) moderate */
            default: v = frand(); break;
        }
        pt_store_f32(buf, lt->data_type, off, v);
    }
}

/* ---- running a graph ----------------------------------------------------- */

typedef struct {
    int nparts;
    int nfused;
    int maxops;
    double fused_ms, opbyop_ms; /* execution time of the largest partition */
} run_info;

static double now_ms(void) {
#ifdef _OPENMP
    return omp_get_wtime() * 1e3;
#else
    return 0.0;
#endif
}

static int lt_index(size_t id) { return (int)id - 1; }

/* Builds the graph, partitions it with `policy` and executes every
 * supported partition in order (the lone End ops of the debug policy are
 * not executed).  With `ref` non-NULL, a partition that runs fused is also
 * executed op by op (fused kernel switched off) into ref's output buffers. */
static bool run_graph(const gdesc *g, dnnl_graph_partition_policy_t policy, dnnl_fpmath_mode_t mode, void **data,
                      void **ref, run_info *info) {
    memset(info, 0, sizeof *info);
    dnnl_graph_graph_t gr = NULL;
    OK(dnnl_graph_graph_create(&gr, dnnl_cpu));
    for (int o = 0; o < g->nop; ++o) {
        const op_d *d = &g->op[o];
        dnnl_graph_op_t op = NULL;
        OK(dnnl_graph_op_create(&op, (size_t)o + 1, d->kind, ""));
        for (int k = 0; k < d->nin; ++k) OK(dnnl_graph_op_add_input(op, &g->lt[lt_index(d->in[k])]));
        for (int k = 0; k < d->nout; ++k) OK(dnnl_graph_op_add_output(op, &g->lt[lt_index(d->out[k])]));
        for (int a = 0; a < d->nattr; ++a) {
            if (is_bool_attr(d->attr[a])) {
                uint8_t b = (uint8_t)d->val[a][0];
                OK(dnnl_graph_op_set_attr_bool(op, d->attr[a], &b, 1));
            } else {
                OK(dnnl_graph_op_set_attr_s64(op, d->attr[a], d->val[a], (size_t)d->nval[a]));
            }
        }
        OK(dnnl_graph_add_op(gr, op));
        OK(dnnl_graph_op_destroy(op));
    }
    OK(dnnl_graph_graph_finalize(gr));
    OK(dnnl_graph_graph_filter(gr, policy));
    size_t np = 0;
    OK(dnnl_graph_graph_get_partition_num(gr, &np));
    dnnl_graph_partition_t parts[MAXP];
    bool ok = np >= 1 && np <= MAXP;
    CHECK(ok);
    if (ok) OK(dnnl_graph_graph_get_partitions(gr, np, parts));
    OK(dnnl_graph_graph_destroy(gr));
    if (!ok) return false;
    info->nparts = (int)np;

    for (size_t pi = 0; pi < np && ok; ++pi) {
        size_t nin = 0, nout = 0, nops = 0;
        uint8_t sup = 0;
        OK(dnnl_graph_partition_is_supported(parts[pi], &sup));
        OK(dnnl_graph_partition_get_op_num(parts[pi], &nops));
        if (!sup) {
            CHECK_EQ_INT(nops, 1); /* only a lone End */
            continue;
        }
        OK(dnnl_graph_partition_get_input_ports_num(parts[pi], &nin));
        OK(dnnl_graph_partition_get_output_ports_num(parts[pi], &nout));
        if ((int)nops > info->maxops) info->maxops = (int)nops;
        lt_t ip[MAXT], opp[8];
        if (nin > MAXT || nout > 8) {
            ok = false;
            break;
        }
        OK(dnnl_graph_partition_get_input_ports(parts[pi], nin, ip));
        OK(dnnl_graph_partition_get_output_ports(parts[pi], nout, opp));
        if (mode != dnnl_fpmath_mode_strict) OK(dnnl_graph_partition_set_fpmath_mode(parts[pi], mode, 0));
        const lt_t *cin[MAXT], *cout[8];
        dnnl_graph_tensor_t tin[MAXT], tout[8], tref[8];
        for (size_t i = 0; i < nin; ++i) {
            const lt_t *lt = &g->lt[lt_index(ip[i].id)];
            cin[i] = lt;
            if (lt->property == dnnl_graph_tensor_property_host_scalar)
                OK(dnnl_graph_tensor_create_scalar(&tin[i], lt, data[lt_index(lt->id)]));
            else
                OK(dnnl_graph_tensor_create(&tin[i], lt, eng, data[lt_index(lt->id)]));
        }
        for (size_t i = 0; i < nout; ++i) {
            const lt_t *lt = &g->lt[lt_index(opp[i].id)];
            cout[i] = lt;
            OK(dnnl_graph_tensor_create(&tout[i], lt, eng, data[lt_index(lt->id)]));
            tref[i] = NULL;
            if (ref) OK(dnnl_graph_tensor_create(&tref[i], lt, eng, ref[lt_index(lt->id)]));
        }
        dnnl_graph_compiled_partition_t cp = NULL;
        OK(dnnl_graph_compiled_partition_create(&cp, parts[pi]));
        dnnl_status_t st = dnnl_graph_partition_compile(parts[pi], cp, nin, cin, nout, cout, eng);
        OK(st);
        if (st == dnnl_success) {
            bool fused = cp->c->has_fused;
            info->nfused += fused;
            double t0 = now_ms();
            st = dnnl_graph_compiled_partition_execute(cp, strm, nin, (const_dnnl_graph_tensor_t *)tin, nout,
                                                       (const_dnnl_graph_tensor_t *)tout);
            OK(st);
            OK(dnnl_stream_wait(strm));
            double t1 = now_ms();
            if (fused) info->fused_ms = t1 - t0;
            if (fused && ref && st == dnnl_success) {
                /* The same compiled plan, op by op through the reference kernels. */
                cp->c->has_fused = false;
                st = dnnl_graph_compiled_partition_execute(cp, strm, nin, (const_dnnl_graph_tensor_t *)tin, nout,
                                                           (const_dnnl_graph_tensor_t *)tref);
                OK(st);
                OK(dnnl_stream_wait(strm));
                info->opbyop_ms = now_ms() - t1;
                cp->c->has_fused = true;
            }
        }
        if (st != dnnl_success) ok = false;
        for (size_t i = 0; i < nin; ++i) OK(dnnl_graph_tensor_destroy(tin[i]));
        for (size_t i = 0; i < nout; ++i) {
            OK(dnnl_graph_tensor_destroy(tout[i]));
            if (tref[i]) OK(dnnl_graph_tensor_destroy(tref[i]));
        }
        OK(dnnl_graph_compiled_partition_destroy(cp));
    }
    OK(dnnl_stream_wait(strm));
    for (size_t pi = 0; pi < np; ++pi) OK(dnnl_graph_partition_destroy(parts[pi]));
    return ok;
}

/* Bit-identical comparison of one output (NaN matches NaN). */
static void compare(const char *name, const lt_t *lt, const void *ref, const void *got) {
    int64_t total = 1;
    for (int d = 0; d < lt->ndims; ++d) total *= lt->dims[d];
    int64_t bad = 0, first = -1;
    for (int64_t e = 0; e < total; ++e) {
        int64_t rem = e, off = 0;
        for (int d = lt->ndims - 1; d >= 0; --d) {
            off += (rem % lt->dims[d]) * lt->layout.strides[d];
            rem /= lt->dims[d];
        }
        float a = pt_load_f32(ref, lt->data_type, off), b = pt_load_f32(got, lt->data_type, off);
        if (a == b || (isnan(a) && isnan(b))) continue;
        if (first < 0) first = e;
        ++bad;
    }
    if (bad)
        fprintf(stderr, "  %s: tensor %zu: %lld of %lld differ (first at %lld)\n", name, lt->id, (long long)bad,
                (long long)total, (long long)first);
    CHECK_EQ_INT(bad, 0);
}

typedef struct {
    void *in[MAXT], *a[MAXT], *b[MAXT];
} buffers;

static void alloc_buffers(const gdesc *g, buffers *B) {
    memset(B, 0, sizeof *B);
    for (int t = 0; t < g->nt; ++t) {
        size_t bytes = pt_dt_bytes(g->lt[t].data_type, span(&g->lt[t])) + 64;
        if (!produced(g, (size_t)t + 1)) {
            B->in[t] = malloc(bytes);
            fill_input(g, t, B->in[t]);
            B->a[t] = B->b[t] = B->in[t];
        } else {
            B->a[t] = calloc(1, bytes);
            B->b[t] = calloc(1, bytes);
        }
    }
}

static void free_buffers(const gdesc *g, buffers *B) {
    for (int t = 0; t < g->nt; ++t) {
        if (B->in[t]) {
            free(B->in[t]);
        } else {
            free(B->a[t]);
            free(B->b[t]);
        }
    }
}

/* Positive graph: one partition, fused, identical to its op-by-op run. */
static run_info check_fused(const char *name, const gdesc *g, dnnl_fpmath_mode_t mode) {
    buffers B;
    alloc_buffers(g, &B);
    run_info fi;
    bool ok = run_graph(g, dnnl_graph_partition_policy_fusion, mode, B.a, B.b, &fi);
    CHECK(ok);
    if (ok) {
        CHECK_EQ_INT(fi.nparts, 1);
        CHECK_EQ_INT(fi.nfused, 1);
        if (fi.nparts != 1 || fi.nfused != 1)
            fprintf(stderr, "  %s: %d partitions, %d fused\n", name, fi.nparts, fi.nfused);
        for (int r = 0; r < g->nres; ++r) {
            const lt_t *lt = &g->lt[lt_index(g->result[r])];
            compare(name, lt, B.b[lt_index(lt->id)], B.a[lt_index(lt->id)]);
        }
    }
    free_buffers(g, &B);
    return fi;
}

/* Negative graph: several partitions, none fused by the backward rows, and
 * the results of the debug policy. */
static void check_unfused(const char *name, const gdesc *g) {
    buffers B;
    alloc_buffers(g, &B);
    run_info ri, fi;
    bool ok = run_graph(g, dnnl_graph_partition_policy_debug, dnnl_fpmath_mode_strict, B.b, NULL, &ri);
    CHECK(ok);
    ok = ok && run_graph(g, dnnl_graph_partition_policy_fusion, dnnl_fpmath_mode_strict, B.a, NULL, &fi);
    CHECK(ok);
    if (ok) {
        CHECK(fi.nparts > 1);
        CHECK(fi.maxops < 10); /* no backward-sized partition */
        if (fi.nparts <= 1 || fi.maxops >= 10)
            fprintf(stderr, "  %s: %d partitions, largest %d ops\n", name, fi.nparts, fi.maxops);
        for (int r = 0; r < g->nres; ++r) {
            const lt_t *lt = &g->lt[lt_index(g->result[r])];
            compare(name, lt, B.b[lt_index(lt->id)], B.a[lt_index(lt->id)]);
        }
    }
    free_buffers(g, &B);
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
    if (c->reduce) {
        int64_t rd[5];
        dims_of(c, true, c->skv, c->dv, rd);
        size_t r = tensor(g, c->dt, sr, rd, NULL);
        op_d *ro = add(g, dnnl_graph_op_reduce_sum, 1, &dv, 1, r);
        attr1(ro, dnnl_graph_op_attr_axes, 2);
        attr1(ro, dnnl_graph_op_attr_keep_dims, 1);
        dv = r;
    }

    /* dS0 = P ⊙ (dP → Dropout? − ReduceSum(O ⊙ dO)). */
    size_t dp = tensor(g, dnnl_f32, sr, sd, NULL);
    size_t dout2 = c->other_do ? operand(g, c, false, c->sq, c->dv, false) : dout;
    attr1(add(g, dnnl_graph_op_matmul, 2, (size_t[]){dout2, v}, 1, dp), dnnl_graph_op_attr_transpose_b, 1);
    if (c->dropout) {
        size_t d2 = tensor(g, dnnl_f32, sr, sd, NULL);
        add(g, dnnl_graph_op_dropout, 4, (size_t[]){dp, seed, offset, prob}, 1, d2);
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
    if (c->reduce) {
        int64_t rd[5];
        dims_of(c, true, c->skv, c->d, rd);
        size_t r = tensor(g, c->dt, sr, rd, NULL);
        op_d *ro = add(g, dnnl_graph_op_reduce_sum, 1, &dk, 1, r);
        attr1(ro, dnnl_graph_op_attr_axes, 2);
        attr1(ro, dnnl_graph_op_attr_keep_dims, 1);
        dk = r;
    }
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

static run_info check_cfg(const char *name, const bwd_cfg *c, dnnl_fpmath_mode_t mode) {
    static gdesc g;
    build(&g, c);
    return check_fused(name, &g, mode);
}

static void test_shapes(void) {
    const int64_t seqs[] = {1, 7, 37, 70}, heads[] = {1, 5, 16, 33};
    char name[128];
    for (int a = 0; a < 4; ++a)
        for (int b = 0; b < 4; ++b) {
            bwd_cfg c = base_cfg();
            c.sq = seqs[a];
            c.skv = seqs[(a + b + 1) % 4];
            c.d = heads[b];
            c.dv = heads[(b + 1) % 4];
            c.n = 1 + (a & 1);
            c.hkv = 1 + (b & 1);
            c.fscale = (a + b) % 3 == 0 ? SC_NONE : (a + b) % 3 == 1 ? SC_DIV : SC_MUL;
            c.dscale = b == 3 ? SC_DIV : SC_MUL;
            c.dt = (a + b) % 3 == 0 ? dnnl_f32 : (a + b) % 3 == 1 ? dnnl_bf16 : dnnl_f16;
            snprintf(name, sizeof name, "shapes sq=%lld skv=%lld d=%lld dv=%lld dt=%d", (long long)c.sq,
                     (long long)c.skv, (long long)c.d, (long long)c.dv, (int)c.dt);
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
    const dnnl_fpmath_mode_t modes[] = {dnnl_fpmath_mode_bf16, dnnl_fpmath_mode_f16, dnnl_fpmath_mode_tf32};
    for (int m = 0; m < 3; ++m) {
        bwd_cfg c = base_cfg();
        c.mask = MK_CAUSAL_TL;
        c.rep = 2, c.reduce = m == 0;
        check_cfg("f32 graph, non-strict math mode", &c, modes[m]);
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
    run_info ri = check_cfg("timing", &c, dnnl_fpmath_mode_strict);
    printf("sdpa backward bf16 [1,8,256,256] D=64: fused %.1f ms, op by op %.1f ms\n", ri.fused_ms, ri.opbyop_ms);
}

int main(void) {
    OK(dnnl_engine_create(&eng, dnnl_cpu, 0));
    OK(dnnl_stream_create(&strm, eng, dnnl_stream_default_flags));
    test_shapes();
    test_masks_and_layouts();
    test_variants();
    test_negative();
    test_timing();
    OK(dnnl_stream_destroy(strm));
    OK(dnnl_engine_destroy(eng));
    return pt_test_summary("test_int_sdpa_bwd");
}
