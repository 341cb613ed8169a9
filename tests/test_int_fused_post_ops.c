/* Fused compute + post-op kernels (kernels/fused/compute_post_ops.c and the
 * chain programs of postops.c).  Partitions are built by hand as op lists
 * (concrete logical tensors, execution order, oneDNN-style input ports) and
 * run twice: op by op through the reference kernels, and through
 * pt_prepare_compute_post_ops + the fused run.  Outputs must be
 * bit-identical.  Covers odd MatMul shapes (transposes, batch broadcast,
 * 1-D operands, strided operands), per-tensor / per-channel / full binary
 * operands, internal operands (swish), Select, BiasAdd, BatchNormInference,
 * int8 (u8/s8, zero points, per-channel and per-group weight scales, weight
 * Quantize -> Dequantize, post-sum), f8, bf16 TypeCast variants, SmoothQuant,
 * the Binary-MatMul-Binary pre-chain, convolutions (NCX/NXC, OIX/XIO,
 * padding, stride, dilation, groups, 1-D/2-D/3-D), ConvTranspose, fpmath
 * modes, the in-place pair, zero-size shapes and partitions the kernel must
 * refuse. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compile/ref_bind.h"
#include "ir/dtype.h"
#include "ir/op.h"
#include "compile/ref_bind.h"
#include "kernels/fused/compute_post_ops.h"
#include "compile/lower_fused.h"
#include "compile/lower_postops.h"
#include "kernels/kernel.h"
#include "ops/op_schema.h"
#include "test_graph_util.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#define MAXT 64
#define MAXO 48

enum { F_RAND, F_POS, F_BOOL, F_MUL, F_LOW, F_HIGH, F_ZERO, F_NEGZERO, F_TAPSIGN };

typedef struct {
    pt_lt lt[MAXT]; /* tensor id = index */
    bool produced[MAXT];
    int fill[MAXT];
    int nt;
    pt_op *ops[MAXO];
    int nop;
} graph;

static uint32_t rng = 2024u;
static uint32_t rnd_u32(void) {
    rng = rng * 1664525u + 1013904223u;
    return rng >> 8;
}
static float frand(void) { return (float)(rnd_u32() & 0xffff) / 32768.f - 1.f; } /* [-1, 1) */
static int64_t irand(int64_t lo, int64_t hi) { return lo + (int64_t)(rnd_u32() % (uint32_t)(hi - lo + 1)); }

static void g_init(graph *g) { memset(g, 0, sizeof *g); }

static void g_free(graph *g) {
    for (int i = 0; i < g->nop; ++i) pt_op_free(g->ops[i]);
    g->nop = 0;
}

/* A tensor with known dims (dense strides unless given). */
static size_t tens(graph *g, dnnl_data_type_t dt, int nd, const int64_t *dims, const int64_t *strides) {
    size_t id = (size_t)g->nt++;
    pt_lt *lt = &g->lt[id];
    memset(lt, 0, sizeof *lt);
    lt->id = id;
    lt->data_type = dt;
    lt->ndims = nd;
    for (int d = 0; d < nd; ++d) lt->dims[d] = dims[d];
    lt->layout_type = dnnl_graph_layout_type_strided;
    if (strides)
        for (int d = 0; d < nd; ++d) lt->layout.strides[d] = strides[d];
    else
        pt_dense_strides(nd, lt->dims, lt->layout.strides);
    lt->property = dnnl_graph_tensor_property_undef;
    return id;
}

static size_t tens_fill(graph *g, dnnl_data_type_t dt, int nd, const int64_t *dims, const int64_t *strides, int fill) {
    size_t id = tens(g, dt, nd, dims, strides);
    g->fill[id] = fill;
    return id;
}

/* Row-padded strides for a tensor: last dim padded by `pad` elements. */
static void padded_strides(int nd, const int64_t *dims, int64_t pad, int64_t *st) {
    int64_t acc = 1;
    for (int d = nd - 1; d >= 0; --d) {
        st[d] = acc;
        acc *= dims[d] + (d == nd - 1 ? pad : 0);
    }
}

static pt_op *mk(graph *g, dnnl_graph_op_kind_t kind) { return pt_op_new((size_t)g->nop + 100, kind, ""); }

static void a_f32(pt_op *op, int name, float v) { pt_op_set_f32(op, name, &v, 1, false); }
static void a_f32s(pt_op *op, int name, const float *v, size_t n) { pt_op_set_f32(op, name, v, n, true); }
static void a_s64(pt_op *op, int name, int64_t v) { pt_op_set_s64(op, name, &v, 1, false); }
static void a_s64s(pt_op *op, int name, const int64_t *v, size_t n) { pt_op_set_s64(op, name, v, n, true); }
static void a_str(pt_op *op, int name, const char *v) { pt_op_set_str(op, name, v); }
static void a_bool(pt_op *op, int name, bool v) { pt_op_set_bool(op, name, v); }

/* Adds inputs, verifies the op, infers its output of type `odt`. */
static size_t fin(graph *g, pt_op *op, const size_t *ins, int nin, dnnl_data_type_t odt) {
    pt_lt in[8];
    for (int i = 0; i < nin; ++i) {
        in[i] = g->lt[ins[i]];
        pt_op_add_input(op, &in[i]);
    }
    size_t oid = (size_t)g->nt++;
    pt_lt *o = &g->lt[oid];
    memset(o, 0, sizeof *o);
    o->id = oid;
    o->data_type = odt;
    o->ndims = -1;
    o->layout_type = dnnl_graph_layout_type_any;
    pt_op_add_output(op, o);
    pt_status st = pt_schema_verify(op);
    if (st != dnnl_success) fprintf(stderr, "  verify failed for %s\n", pt_op_kind_name(op->kind));
    CHECK_EQ_INT(st, dnnl_success);
    pt_lt out = op->out[0];
    st = pt_schema_infer(op, in, &out);
    CHECK_EQ_INT(st, dnnl_success);
    pt_lt_make_dense(&out);
    *o = out;
    op->out[0] = out;
    g->produced[oid] = true;
    g->ops[g->nop++] = op;
    return oid;
}

static size_t op1(graph *g, dnnl_graph_op_kind_t k, size_t a, dnnl_data_type_t odt) {
    return fin(g, mk(g, k), (size_t[]){a}, 1, odt);
}
static size_t op2(graph *g, dnnl_graph_op_kind_t k, size_t a, size_t b, dnnl_data_type_t odt) {
    return fin(g, mk(g, k), (size_t[]){a, b}, 2, odt);
}

/* Quantize / Dequantize with per-tensor (n == 1) or per-channel scales. */
static size_t quant_op(graph *g, dnnl_graph_op_kind_t k, size_t x, dnnl_data_type_t dt, const float *sc,
                       const int64_t *zp, size_t n, int64_t axis) {
    pt_op *op = mk(g, k);
    a_str(op, dnnl_graph_op_attr_qtype, n > 1 ? "per_channel" : "per_tensor");
    a_f32s(op, dnnl_graph_op_attr_scales, sc, n);
    if (zp) a_s64s(op, dnnl_graph_op_attr_zps, zp, n);
    a_s64(op, dnnl_graph_op_attr_axis, axis);
    return fin(g, op, &x, 1, dt);
}

static size_t dequant(graph *g, size_t x, const float *sc, const int64_t *zp, size_t n, int64_t axis) {
    return quant_op(g, dnnl_graph_op_dequantize, x, dnnl_f32, sc, zp, n, axis);
}

static size_t quant(graph *g, size_t x, dnnl_data_type_t dt, const float *sc, const int64_t *zp, size_t n,
                    int64_t axis) {
    return quant_op(g, dnnl_graph_op_quantize, x, dt, sc, zp, n, axis);
}

static size_t matmul(graph *g, size_t a, size_t b, int bias, bool ta, bool tb, dnnl_data_type_t odt) {
    pt_op *op = mk(g, dnnl_graph_op_matmul);
    a_bool(op, dnnl_graph_op_attr_transpose_a, ta);
    a_bool(op, dnnl_graph_op_attr_transpose_b, tb);
    if (bias >= 0) return fin(g, op, (size_t[]){a, b, (size_t)bias}, 3, odt);
    return fin(g, op, (size_t[]){a, b}, 2, odt);
}

/* ---- buffers ------------------------------------------------------------- */

typedef struct {
    const graph *g;
    size_t t;
    int64_t e; /* logical element being filled */
} fill_ctx;

static float next_value(void *ctx) {
    fill_ctx *f = ctx;
    const pt_lt *lt = &f->g->lt[f->t];
    int64_t e = f->e++;
    switch (lt->data_type) {
        case dnnl_s8: return (float)irand(-128, 127);
        case dnnl_u8: return (float)irand(0, 255);
        case dnnl_s4: return (float)irand(-8, 7);
        case dnnl_u4: return (float)irand(0, 15);
        case dnnl_s32: return (float)irand(-1000, 1000);
        case dnnl_boolean: return (float)irand(0, 1);
        case dnnl_f8_e4m3:
        case dnnl_f8_e5m2: return 8.f * frand();
        default: break;
    }
    switch (f->g->fill[f->t]) {
        case F_POS: return 0.5f + 1.5f * (frand() + 1.f) * 0.5f;
        case F_MUL: return (float)(1 << irand(0, 2)) * 0.25f;
        case F_BOOL: return (float)irand(0, 1);
        case F_LOW: return -2.5f + 0.5f * frand();
        case F_ZERO: return 0.f;
        case F_NEGZERO: return -0.f;
        case F_TAPSIGN: { /* OIX / IOX: + on the first kernel row (index 0 of dim 2) */
            int64_t inner = 1;
            for (int d = 3; d < lt->ndims; ++d) inner *= lt->dims[d];
            return e / inner % lt->dims[2] == 0 ? 1.f : -1.f;
        }
        case F_HIGH: return 2.5f + 0.5f * frand();
        default: return frand();
    }
}

static void fill_tensor(const graph *g, size_t t, void *buf) {
    fill_ctx f = {g, t, 0};
    tg_fill(&g->lt[t], buf, next_value, &f);
}

/* Partition ports, oneDNN style: each (op, input) pair fed from outside. */
static size_t in_ports(const graph *g, pt_lt *ports) {
    size_t n = 0;
    for (int o = 0; o < g->nop; ++o)
        for (size_t k = 0; k < g->ops[o]->nin; ++k) {
            size_t id = g->ops[o]->in[k].id;
            if (!g->produced[id]) ports[n++] = g->lt[id];
        }
    return n;
}

static bool same_bits(const pt_lt *lt, const void *a, const void *b, const char *name) {
    int64_t total = tg_nelems(lt), bad = 0;
    size_t es = pt_dt_bytes(lt->data_type, 1);
    for (int64_t e = 0; e < total; ++e) {
        int64_t off = tg_offset(lt, e);
        if (memcmp((const char *)a + off * (int64_t)es, (const char *)b + off * (int64_t)es, es) != 0) {
            if (bad < 3)
                fprintf(stderr, "  %s: element %lld: ref %.9g fused %.9g\n", name, (long long)e,
                        pt_load_f32(a, lt->data_type, off), pt_load_f32(b, lt->data_type, off));
            ++bad;
        }
    }
    if (bad) fprintf(stderr, "  %s: %lld of %lld elements differ\n", name, (long long)bad, (long long)total);
    return bad == 0;
}

static int n_fused_ok = 0, n_engine_ok = 0;

/* Runs the ops one by one through the reference kernels.  With `bench`,
 * bf16/f16 intermediates (everything produced but the result) are computed
 * in f32, as the benchmark reference does (docs/numerics.md). */
static bool run_reference(const graph *g, void **buf, bool bench, const pt_exec_ctx *ctx, const char *name) {
    size_t res = g->ops[g->nop - 1]->out[0].id;
    pt_lt lt[MAXT];
    for (int t = 0; t < g->nt; ++t) {
        lt[t] = g->lt[t];
        bool narrow = lt[t].data_type == dnnl_bf16 || lt[t].data_type == dnnl_f16;
        if (bench && g->produced[t] && (size_t)t != res && narrow) lt[t].data_type = dnnl_f32;
    }
    for (int o = 0; o < g->nop; ++o) {
        const pt_op *op = g->ops[o];
        pt_tview vin[8], vout[2];
        for (size_t k = 0; k < op->nin; ++k) vin[k] = (pt_tview){lt[op->in[k].id], buf[op->in[k].id]};
        for (size_t k = 0; k < op->nout; ++k) vout[k] = (pt_tview){lt[op->out[k].id], buf[op->out[k].id]};
        /* pt_ref_run decodes the op with the views' logical tensors, so the
         * widened intermediates reach the kernel's parameters. */
        pt_status st = pt_ref_run(op, vin, op->nin, vout, op->nout, ctx);
        if (st != dnnl_success) {
            fprintf(stderr, "  %s: reference %s failed\n", name, pt_op_kind_name(op->kind));
            return false;
        }
    }
    return true;
}

typedef pt_status (*prepare_fn)(const pt_op *const *, size_t, const pt_lt *, size_t, const pt_lt *, size_t,
                                pt_fused *);

/* Prepares and runs the fused kernel on the input buffers `buf`; compares
 * the result with `want`.  `inplace`: the output shares the reported
 * in-place input's buffer. */
static void run_fused(const char *name, const graph *g, prepare_fn prep, void **buf, const void *want,
                      pt_status expect, const pt_exec_ctx *ctx, bool inplace, bool exact) {
    const pt_lt *res = &g->lt[g->ops[g->nop - 1]->out[0].id];
    pt_lt ports[MAXT];
    size_t nin = in_ports(g, ports);
    pt_fused f;
    memset(&f, 0, sizeof f);
    pt_status st = prep((const pt_op *const *)g->ops, (size_t)g->nop, ports, nin, res, 1, &f);
    if (st != expect) fprintf(stderr, "  %s: prepare returned %d, expected %d\n", name, (int)st, (int)expect);
    CHECK_EQ_INT(st, expect);
    if (st != dnnl_success) return;
    void *got = calloc(1, pt_dt_bytes(res->data_type, tg_span(res)) + 64);
    pt_tview vin[MAXT], vout[1];
    size_t ip_in = 0, ip_out = 0;
    bool has_ip = pt_compute_post_ops_inplace(&f, &ip_in, &ip_out);
    if (inplace) {
        CHECK(has_ip);
        CHECK_EQ_INT(ip_out, res->id);
    }
    bool share = inplace && has_ip;
    if (share) /* the output buffer starts as a copy of the paired input */
        memcpy(got, buf[ip_in], pt_dt_bytes(g->lt[ip_in].data_type, tg_span(&g->lt[ip_in])));
    for (size_t i = 0; i < nin; ++i) {
        vin[i] = (pt_tview){ports[i], buf[ports[i].id]};
        if (share && ports[i].id == ip_in) vin[i].data = got;
    }
    vout[0] = (pt_tview){*res, got};
    void *scratch = f.scratch_bytes ? malloc(f.scratch_bytes) : NULL;
    st = f.run(&f, vin, nin, vout, 1, scratch, ctx);
    CHECK_EQ_INT(st, dnnl_success);
    if (st == dnnl_success) {
        if (exact) {
            bool same = same_bits(res, want, got, name);
            CHECK(same);
            if (same) ++n_fused_ok;
        } else if (tg_check_values(name, res, want, got, tg_engine_tol).bad == 0) {
            ++n_engine_ok;
        }
    }
    free(scratch);
    if (f.release) f.release(&f);
    free(got);
}

/* Checks a partition (the last op's output is its result) both ways:
 * the op-by-op-rounding kernel against the plain op-by-op run, and the
 * default kernel against the op-by-op run with f32 intermediates.  `expect`
 * is the prepare status wanted. */
static void check(const char *name, graph *g, pt_status expect, dnnl_fpmath_mode_t mode, bool inplace) {
    void *in[MAXT] = {0}, *ref[MAXT] = {0}, *bench[MAXT] = {0};
    for (int t = 0; t < g->nt; ++t) {
        size_t bytes = pt_dt_bytes(dnnl_f32, tg_span(&g->lt[t])) * 2 + 64;
        if (!g->produced[t]) {
            in[t] = calloc(1, bytes);
            fill_tensor(g, (size_t)t, in[t]);
            ref[t] = bench[t] = in[t];
        } else {
            ref[t] = calloc(1, bytes);
            bench[t] = calloc(1, bytes);
        }
    }
    pt_exec_ctx ctx = {.fpmath = mode, .apply_to_int = 0, .nthreads = 2};
#ifdef _OPENMP
    ctx.nthreads = omp_get_max_threads();
#endif
    size_t res = g->ops[g->nop - 1]->out[0].id;
    bool ok = run_reference(g, ref, false, &ctx, name) && run_reference(g, bench, true, &ctx, name);
    CHECK(ok);
    if (ok) {
        char nm[160];
        snprintf(nm, sizeof nm, "%s [op-by-op rounding]", name);
        run_fused(nm, g, pt_prepare_compute_post_ops_op_by_op, in, ref[res], expect, &ctx, false, true);
        run_fused(name, g, pt_prepare_compute_post_ops, in, bench[res], expect, &ctx, inplace, true);
        /* The compile path's kernel: MatMul on the engine planned for strict
         * (so only there), Convolution on the engine in every mode. */
        bool conv = false;
        for (int o = 0; o < g->nop; ++o)
            conv = conv || g->ops[o]->kind == dnnl_graph_op_convolution || g->ops[o]->kind == dnnl_graph_op_conv_transpose ||
                   g->ops[o]->kind == dnnl_graph_op_convolution_backward_data;
        if (mode == dnnl_fpmath_mode_strict || conv) {
            snprintf(nm, sizeof nm, "%s [engine]", name);
            run_fused(nm, g, pt_prepare_compute_post_ops_engine, in, bench[res], expect, &ctx, inplace, false);
        }
    }
    for (int t = 0; t < g->nt; ++t) {
        if (in[t]) {
            free(in[t]);
        } else {
            free(ref[t]);
            free(bench[t]);
        }
    }
}

/* ---- MatMul cases ------------------------------------------------------------ */

typedef struct {
    int64_t M, K, N;
    int64_t ba[3], bb[3]; /* batch dims of src / weights (0 terminates) */
    bool ta, tb;
    bool bias_in;         /* MatMul bias input */
    bool strided;         /* padded rows in src / weights */
    dnnl_data_type_t dt;  /* src / weights / MatMul out */
} mm_cfg;

static int nbatch_dims(const int64_t *b) {
    int n = 0;
    while (n < 3 && b[n]) ++n;
    return n;
}

/* src and weights tensors for a MatMul config. */
static void mm_operands(graph *g, const mm_cfg *c, dnnl_data_type_t adt, dnnl_data_type_t bdt, size_t *a, size_t *b) {
    int64_t da[5], db[5], st[5];
    int na = nbatch_dims(c->ba), nb = nbatch_dims(c->bb);
    for (int i = 0; i < na; ++i) da[i] = c->ba[i];
    for (int i = 0; i < nb; ++i) db[i] = c->bb[i];
    da[na] = c->ta ? c->K : c->M, da[na + 1] = c->ta ? c->M : c->K;
    db[nb] = c->tb ? c->N : c->K, db[nb + 1] = c->tb ? c->K : c->N;
    padded_strides(na + 2, da, 3, st);
    *a = tens(g, adt, na + 2, da, c->strided ? st : NULL);
    padded_strides(nb + 2, db, 5, st);
    *b = tens(g, bdt, nb + 2, db, c->strided ? st : NULL);
}


/* Operand shapes for a value of dims `dims` (rank r). */
static void per_last(int r, const int64_t *dims, int64_t *o) {
    for (int d = 0; d < r; ++d) o[d] = d == r - 1 ? dims[d] : 1;
}
static void per_row(int r, const int64_t *dims, int64_t *o) {
    for (int d = 0; d < r; ++d) o[d] = d == r - 1 ? 1 : dims[d];
}

enum { CH_NONE, CH_MIXED, CH_UNARY };

/* A post-op chain on value y (type dt): see the CH_* kinds. */
static size_t chain(graph *g, size_t y, dnnl_data_type_t dt, int kind) {
    int r = g->lt[y].ndims;
    int64_t dims[DNNL_MAX_NDIMS], sh[DNNL_MAX_NDIMS], st[DNNL_MAX_NDIMS];
    memcpy(dims, g->lt[y].dims, sizeof(int64_t) * (size_t)r);
    if (kind == CH_MIXED) {
        y = op1(g, dnnl_graph_op_relu, y, dt);
        per_last(r, dims, sh);
        y = op2(g, dnnl_graph_op_add, y, tens(g, dnnl_f32, r, sh, NULL), dt);            /* per channel */
        y = op2(g, dnnl_graph_op_multiply, tens_fill(g, dnnl_f32, 1, (int64_t[]){1}, NULL, F_MUL), y, dt); /* per tensor, commuted */
        padded_strides(r, dims, 7, st);
        y = op2(g, dnnl_graph_op_subtract, y, tens(g, dnnl_bf16, r, dims, st), dt);     /* full, strided, bf16 */
        size_t x = y;
        y = op2(g, dnnl_graph_op_multiply, x, op1(g, dnnl_graph_op_sigmoid, x, dt), dt); /* swish */
        pt_op *cl = mk(g, dnnl_graph_op_clamp);
        a_f32(cl, dnnl_graph_op_attr_min, -0.75f);
        a_f32(cl, dnnl_graph_op_attr_max, 0.9f);
        y = fin(g, cl, &y, 1, dt);
        per_row(r, dims, sh);
        y = op2(g, dnnl_graph_op_divide, y, tens_fill(g, dnnl_f16, r, sh, NULL, F_POS), dt); /* per row */
        pt_op *ge = mk(g, dnnl_graph_op_gelu);
        a_str(ge, dnnl_graph_op_attr_mode, "gelu_tanh");
        y = fin(g, ge, &y, 1, dt);
        size_t cond = tens(g, dnnl_boolean, r, dims, NULL);
        size_t other = tens(g, dt, 1, (int64_t[]){1}, NULL);
        y = fin(g, mk(g, dnnl_graph_op_select), (size_t[]){cond, other, y}, 3, dt);
        y = op2(g, dnnl_graph_op_add, y, tens(g, dnnl_f32, r, dims, NULL), dt); /* keeps values apart */
        y = op2(g, dnnl_graph_op_maximum, tens_fill(g, dt, 1, (int64_t[]){dims[r - 1]}, NULL, F_LOW), y, dt);
        y = op2(g, dnnl_graph_op_minimum, y, tens_fill(g, dt, 0, NULL, NULL, F_HIGH), dt); /* 0-D operand */
    } else if (kind == CH_UNARY) {
        y = op1(g, dnnl_graph_op_round, op2(g, dnnl_graph_op_multiply, y, tens_fill(g, dnnl_f32, 0, NULL, NULL, F_HIGH), dt), dt);
        per_last(r, dims, sh);
        y = op2(g, dnnl_graph_op_multiply, y, tens_fill(g, dnnl_f32, r, sh, NULL, F_POS), dt);
        /* Every element-wise kind the chain kernel evaluates, with its attributes. */
        static const struct {
            dnnl_graph_op_kind_t k;
            int n;
            int name[2];
            float v[2];
        } chain[] = {
            {.k = dnnl_graph_op_elu, .n = 1, .name = {dnnl_graph_op_attr_alpha}, .v = {0.7f}},
            {.k = dnnl_graph_op_abs},
            {.k = dnnl_graph_op_sqrt},
            {.k = dnnl_graph_op_log},
            {.k = dnnl_graph_op_exp},
            {.k = dnnl_graph_op_hard_sigmoid,
             .n = 2,
             .name = {dnnl_graph_op_attr_alpha, dnnl_graph_op_attr_beta},
             .v = {0.3f, 0.4f}},
            {.k = dnnl_graph_op_hard_swish},
            {.k = dnnl_graph_op_leaky_relu, .n = 1, .name = {dnnl_graph_op_attr_alpha}, .v = {0.1f}},
            {.k = dnnl_graph_op_mish},
            {.k = dnnl_graph_op_softplus, .n = 1, .name = {dnnl_graph_op_attr_beta}, .v = {2.f}},
            {.k = dnnl_graph_op_square},
            {.k = dnnl_graph_op_tanh},
            {.k = dnnl_graph_op_gelu},
            {.k = dnnl_graph_op_sigmoid},
        };
        for (size_t i = 0; i < sizeof chain / sizeof chain[0]; ++i) {
            pt_op *op = mk(g, chain[i].k);
            for (int a = 0; a < chain[i].n; ++a) a_f32(op, chain[i].name[a], chain[i].v[a]);
            y = fin(g, op, &y, 1, dt);
        }
    }
    return y;
}

/* ---- MatMul cases ------------------------------------------------------------ */

static void mm_fp(const char *name, const mm_cfg *c, int ch, bool bias_add, dnnl_data_type_t out_cast,
                  dnnl_fpmath_mode_t mode) {
    graph g;
    g_init(&g);
    size_t a, b;
    mm_operands(&g, c, c->dt, c->dt, &a, &b);
    int bias = c->bias_in ? (int)tens(&g, c->dt, 1, (int64_t[]){c->N}, NULL) : -1;
    dnnl_data_type_t ydt = out_cast != dnnl_data_type_undef && out_cast != dnnl_f32 ? dnnl_f32 : c->dt;
    if (out_cast == dnnl_f32) ydt = c->dt;
    size_t y = matmul(&g, a, b, bias, c->ta, c->tb, ydt);
    if (bias_add) {
        int r = g.lt[y].ndims;
        size_t bb = tens(&g, ydt, 1, (int64_t[]){g.lt[y].dims[r - 1]}, NULL);
        y = op2(&g, dnnl_graph_op_bias_add, y, bb, ydt);
    }
    y = chain(&g, y, ydt, ch);
    if (out_cast != dnnl_data_type_undef) y = op1(&g, dnnl_graph_op_type_cast, y, out_cast);
    check(name, &g, dnnl_success, mode, false);
    g_free(&g);
}

static void test_matmul_fp(void) {
    mm_cfg c;
    memset(&c, 0, sizeof c);
    c.dt = dnnl_f32;
    c.M = 37, c.K = 53, c.N = 29;
    mm_fp("mm f32 plain", &c, CH_NONE, false, dnnl_data_type_undef, dnnl_fpmath_mode_strict);
    mm_fp("mm f32 biasadd+mixed", &c, CH_MIXED, true, dnnl_data_type_undef, dnnl_fpmath_mode_strict);
    c.bias_in = true, c.ta = true;
    c.ba[0] = 2, c.ba[1] = 1, c.bb[0] = 3;
    mm_fp("mm f32 bias batch-bcast ta mixed", &c, CH_MIXED, false, dnnl_data_type_undef, dnnl_fpmath_mode_strict);
    c.tb = true, c.ta = false, c.strided = true;
    c.ba[0] = 3, c.ba[1] = 0, c.bb[0] = 0;
    mm_fp("mm f32 strided tb unary", &c, CH_UNARY, true, dnnl_data_type_undef, dnnl_fpmath_mode_strict);
    memset(&c, 0, sizeof c);
    c.dt = dnnl_f32;
    c.M = 150, c.K = 301, c.N = 203; /* several row and column blocks */
    mm_fp("mm f32 large mixed", &c, CH_MIXED, true, dnnl_data_type_undef, dnnl_fpmath_mode_strict);
    mm_fp("mm f32 fpmath bf16", &c, CH_NONE, true, dnnl_data_type_undef, dnnl_fpmath_mode_bf16);
    mm_fp("mm f32 fpmath tf32", &c, CH_MIXED, false, dnnl_data_type_undef, dnnl_fpmath_mode_tf32);
    mm_fp("mm f32 fpmath f16", &c, CH_NONE, false, dnnl_data_type_undef, dnnl_fpmath_mode_f16);
    /* bf16 / f16: the chain runs in the narrow type (each op rounds), then casts. */
    memset(&c, 0, sizeof c);
    c.M = 19, c.K = 70, c.N = 45, c.bias_in = true;
    c.dt = dnnl_bf16;
    mm_fp("mm bf16 mixed -> f32", &c, CH_MIXED, false, dnnl_f32, dnnl_fpmath_mode_strict);
    mm_fp("mm bf16 in, f32 out, chain, -> bf16", &c, CH_MIXED, false, dnnl_bf16, dnnl_fpmath_mode_strict);
    c.dt = dnnl_f16;
    mm_fp("mm f16 unary", &c, CH_UNARY, true, dnnl_data_type_undef, dnnl_fpmath_mode_strict);
    /* 1-D operands */
    graph g;
    g_init(&g);
    size_t a = tens(&g, dnnl_f32, 1, (int64_t[]){41}, NULL);
    size_t b = tens(&g, dnnl_f32, 3, (int64_t[]){2, 41, 13}, NULL);
    size_t y = matmul(&g, a, b, -1, false, false, dnnl_f32);
    y = chain(&g, y, dnnl_f32, CH_MIXED);
    check("mm 1-D src", &g, dnnl_success, dnnl_fpmath_mode_strict, false);
    g_free(&g);
    g_init(&g);
    a = tens(&g, dnnl_f32, 3, (int64_t[]){2, 17, 41}, NULL);
    b = tens(&g, dnnl_f32, 1, (int64_t[]){41}, NULL);
    int bias = (int)tens(&g, dnnl_f32, 1, (int64_t[]){1}, NULL);
    y = matmul(&g, a, b, bias, false, false, dnnl_f32);
    y = op1(&g, dnnl_graph_op_tanh, y, dnnl_f32);
    check("mm 1-D weights", &g, dnnl_success, dnnl_fpmath_mode_strict, false);
    g_free(&g);
    g_init(&g);
    a = tens(&g, dnnl_f32, 1, (int64_t[]){33}, NULL);
    b = tens(&g, dnnl_f32, 1, (int64_t[]){33}, NULL);
    y = matmul(&g, a, b, -1, false, false, dnnl_f32);
    y = op1(&g, dnnl_graph_op_relu, y, dnnl_f32);
    y = op2(&g, dnnl_graph_op_multiply, y, tens(&g, dnnl_f32, 2, (int64_t[]){1, 1}, NULL), dnnl_f32); /* 0-D -> [1, 1] */
    check("mm 1-D x 1-D, result widened to [1, 1]", &g, dnnl_success, dnnl_fpmath_mode_strict, false);
    g_free(&g);
    /* full bias [M, N] broadcast over batch */
    g_init(&g);
    a = tens(&g, dnnl_f32, 3, (int64_t[]){3, 11, 20}, NULL);
    b = tens(&g, dnnl_f32, 2, (int64_t[]){20, 9}, NULL);
    bias = (int)tens(&g, dnnl_f32, 2, (int64_t[]){11, 9}, NULL);
    y = matmul(&g, a, b, bias, false, false, dnnl_f32);
    check("mm full bias", &g, dnnl_success, dnnl_fpmath_mode_strict, false);
    g_free(&g);
}

/* int8 / f8 MatMul: Dequantize(src) and Dequantize(weights) (optionally
 * Quantize first, optionally TypeCast to bf16), bias, chain, post-sum,
 * SmoothQuant, final Quantize. */
typedef struct {
    dnnl_data_type_t sdt, wdt, odt; /* src, weights (f32: quantized inside), final output */
    bool zp, wq_per_channel, bias_in, bias_add, post_sum, bf16, smooth, wquant;
    int ch;
    int64_t M, K, N;
} q_cfg;

static void mm_quant(const char *name, const q_cfg *c) {
    graph g;
    g_init(&g);
    bool f8 = c->sdt == dnnl_f8_e4m3 || c->sdt == dnnl_f8_e5m2;
    size_t a = tens(&g, c->sdt, 2, (int64_t[]){c->M, c->K}, NULL);
    size_t w = tens(&g, c->wdt, 2, (int64_t[]){c->K, c->N}, NULL);
    float ss = f8 ? 0.5f : 0.0625f;
    int64_t zs = c->zp ? (c->sdt == dnnl_u8 ? 120 : -3) : 0;
    size_t x = dequant(&g, a, &ss, c->zp ? &zs : NULL, 1, 1);
    float wsc[256];
    int64_t wzp[256];
    size_t nw = c->wq_per_channel ? (size_t)c->N : 1;
    for (size_t i = 0; i < nw; ++i) wsc[i] = (float)(1 + (i % 5)) / 64.f, wzp[i] = 0;
    size_t wv = w;
    if (c->wquant) wv = quant(&g, w, dnnl_s8, wsc, wzp, nw, 1);
    wv = dequant(&g, wv, wsc, c->zp ? wzp : NULL, nw, 1);
    dnnl_data_type_t cdt = dnnl_f32;
    if (c->bf16) {
        x = op1(&g, dnnl_graph_op_type_cast, x, dnnl_bf16);
        wv = op1(&g, dnnl_graph_op_type_cast, wv, dnnl_bf16);
        cdt = dnnl_bf16;
    }
    int bias = c->bias_in ? (int)tens(&g, cdt, 1, (int64_t[]){c->N}, NULL) : -1;
    size_t y = matmul(&g, x, wv, bias, false, false, cdt);
    if (c->bias_add) {
        size_t bb = tens(&g, dnnl_f32, 1, (int64_t[]){c->N}, NULL);
        if (c->bf16) bb = op1(&g, dnnl_graph_op_type_cast, bb, dnnl_bf16);
        y = op2(&g, dnnl_graph_op_bias_add, y, bb, cdt);
    }
    if (c->post_sum) {
        size_t e = tens(&g, dnnl_u8, 2, (int64_t[]){c->M, c->N}, NULL);
        float es = 0.25f;
        int64_t ez = 7;
        size_t ed = dequant(&g, e, &es, c->zp ? &ez : NULL, 1, 1);
        if (c->bf16) ed = op1(&g, dnnl_graph_op_type_cast, ed, dnnl_bf16);
        y = op2(&g, dnnl_graph_op_add, ed, y, cdt);
    }
    y = chain(&g, y, cdt, c->ch);
    if (c->bf16 && c->odt != dnnl_bf16) y = op1(&g, dnnl_graph_op_type_cast, y, dnnl_f32);
    if (c->smooth) y = op2(&g, dnnl_graph_op_divide, y, tens_fill(&g, dnnl_f32, 2, (int64_t[]){1, c->N}, NULL, F_POS), dnnl_f32);
    if (c->odt != dnnl_f32 && c->odt != dnnl_bf16) {
        float os = 0.125f;
        int64_t oz = c->odt == dnnl_u8 ? 100 : 0;
        y = quant(&g, y, c->odt, &os, (c->zp && !f8) ? &oz : NULL, 1, 1);
    }
    check(name, &g, dnnl_success, dnnl_fpmath_mode_strict, false);
    g_free(&g);
}

static void test_matmul_quant(void) {
    q_cfg c;
    memset(&c, 0, sizeof c);
    c.M = 23, c.K = 77, c.N = 37;
    c.sdt = dnnl_u8, c.wdt = dnnl_s8, c.odt = dnnl_s8;
    c.zp = true, c.bias_add = true, c.ch = CH_MIXED;
    mm_quant("int8 u8 zp biasadd mixed -> s8", &c);
    c.sdt = dnnl_s8, c.wq_per_channel = true, c.bias_add = false, c.bias_in = true, c.odt = dnnl_u8, c.ch = CH_NONE;
    mm_quant("int8 s8 per-channel bias -> u8", &c);
    c.post_sum = true, c.ch = CH_UNARY, c.odt = dnnl_s8;
    mm_quant("int8 post-sum unary -> s8", &c);
    c.wdt = dnnl_f32, c.wquant = true, c.post_sum = false, c.odt = dnnl_f32, c.ch = CH_MIXED;
    mm_quant("int8 weight quantize -> f32", &c);
    memset(&c, 0, sizeof c);
    c.M = 16, c.K = 96, c.N = 72;
    c.sdt = dnnl_u8, c.wdt = dnnl_s8, c.odt = dnnl_u8, c.zp = true, c.bf16 = true, c.bias_add = true;
    c.wq_per_channel = true, c.smooth = true, c.ch = CH_MIXED;
    mm_quant("int8 bf16 tc smooth-quant -> u8", &c);
    c.smooth = false, c.post_sum = true, c.bias_add = false, c.ch = CH_NONE, c.odt = dnnl_bf16;
    mm_quant("int8 bf16 tc post-sum -> bf16", &c);
    c.wdt = dnnl_f32, c.wquant = true, c.odt = dnnl_s8, c.post_sum = false;
    mm_quant("int8 bf16 tc weight quantize -> s8", &c);
    memset(&c, 0, sizeof c);
    c.M = 10, c.K = 10, c.N = 10;
    c.sdt = dnnl_f8_e4m3, c.wdt = dnnl_f8_e4m3, c.odt = dnnl_f32;
    mm_quant("f8 e4m3 plain", &c);
    c.sdt = dnnl_f8_e5m2, c.wdt = dnnl_f8_e5m2, c.odt = dnnl_f8_e4m3, c.bias_in = true, c.ch = CH_MIXED;
    c.M = 31, c.K = 45, c.N = 27;
    mm_quant("f8 e5m2 mixed -> e4m3", &c);
    c.sdt = dnnl_f8_e4m3, c.wdt = dnnl_f8_e4m3, c.odt = dnnl_f8_e5m2, c.post_sum = true, c.bf16 = true, c.ch = CH_NONE;
    mm_quant("f8 bf16 post-sum -> e5m2", &c);
}

/* DynamicDequantize of per-group int4 / int8 weights (scales and zero
 * points as tensors) and of a per-tensor src. */
static void test_matmul_dynamic(void) {
    for (int v = 0; v < 2; ++v) {
        graph g;
        g_init(&g);
        int64_t M = 9, K = 64, N = 24, G = 16;
        dnnl_data_type_t wdt = v ? dnnl_s8 : dnnl_u4;
        size_t a = tens(&g, dnnl_f32, 2, (int64_t[]){M, K}, NULL);
        size_t w = tens(&g, wdt, 2, (int64_t[]){K, N}, NULL);
        size_t sc = tens_fill(&g, dnnl_f32, 2, (int64_t[]){K / G, N}, NULL, F_POS);
        size_t zp = tens(&g, v ? dnnl_s8 : dnnl_u4, 2, (int64_t[]){K / G, N}, NULL);
        pt_op *op = mk(&g, dnnl_graph_op_dynamic_dequantize);
        a_str(op, dnnl_graph_op_attr_qtype, "per_group");
        a_s64s(op, dnnl_graph_op_attr_group_shape, (int64_t[]){G, 1}, 2);
        size_t wd = fin(&g, op, (size_t[]){w, sc, zp}, 3, dnnl_f32);
        size_t y = matmul(&g, a, wd, -1, false, false, dnnl_f32);
        y = chain(&g, y, dnnl_f32, CH_MIXED);
        check(v ? "dynamic dequant s8 per-group" : "dynamic dequant u4 per-group", &g, dnnl_success,
              dnnl_fpmath_mode_strict, false);
        g_free(&g);
    }
    graph g;
    g_init(&g);
    size_t a = tens(&g, dnnl_s8, 2, (int64_t[]){13, 40}, NULL);
    size_t sa = tens_fill(&g, dnnl_f32, 1, (int64_t[]){1}, NULL, F_POS);
    size_t ad = fin(&g, mk(&g, dnnl_graph_op_dynamic_dequantize), (size_t[]){a, sa}, 2, dnnl_f32);
    size_t w = tens(&g, dnnl_s8, 2, (int64_t[]){40, 21}, NULL);
    size_t sw = tens_fill(&g, dnnl_f32, 1, (int64_t[]){21}, NULL, F_POS);
    pt_op *op = mk(&g, dnnl_graph_op_dynamic_dequantize);
    a_str(op, dnnl_graph_op_attr_qtype, "per_channel");
    a_s64(op, dnnl_graph_op_attr_axis, 1);
    size_t wd = fin(&g, op, (size_t[]){w, sw}, 2, dnnl_f32);
    size_t y = matmul(&g, ad, wd, -1, false, false, dnnl_f32);
    y = op1(&g, dnnl_graph_op_relu, y, dnnl_f32);
    check("dynamic dequant per-tensor src, per-channel weights", &g, dnnl_success, dnnl_fpmath_mode_strict, false);
    g_free(&g);
}

/* Binary - MatMul - Binary: binary pre-chain on the src. */
static void test_bmb(void) {
    for (int v = 0; v < 3; ++v) {
        graph g;
        g_init(&g);
        if (v == 2) { /* the CI replay graph's form: 4-D with a leading 1, full operands everywhere */
            int64_t d[4] = {1, 3, 17, 17};
            size_t x = op2(&g, dnnl_graph_op_multiply, tens(&g, dnnl_f32, 4, d, NULL), tens(&g, dnnl_f32, 4, d, NULL), dnnl_f32);
            for (int i = 0; i < 4; ++i) x = op2(&g, dnnl_graph_op_multiply, x, tens_fill(&g, dnnl_f32, 4, d, NULL, F_MUL), dnnl_f32);
            size_t y = matmul(&g, x, tens(&g, dnnl_f32, 4, d, NULL), -1, false, false, dnnl_f32);
            for (int i = 0; i < 4; ++i) y = op2(&g, dnnl_graph_op_multiply, y, tens_fill(&g, dnnl_f32, 4, d, NULL, F_MUL), dnnl_f32);
            check("bmb 4-D leading 1", &g, dnnl_success, dnnl_fpmath_mode_strict, false);
            g_free(&g);
            continue;
        }
        int64_t B = 2, M = 21, K = 35, N = 19;
        dnnl_data_type_t dt = v ? dnnl_bf16 : dnnl_f32;
        size_t x = op2(&g, dnnl_graph_op_multiply, tens(&g, dt, 3, (int64_t[]){B, M, K}, NULL),
                       tens(&g, dt, 3, (int64_t[]){1, 1, K}, NULL), dt);
        x = op2(&g, dnnl_graph_op_add, tens(&g, dt, 1, (int64_t[]){1}, NULL), x, dt);
        x = op2(&g, dnnl_graph_op_subtract, x, tens(&g, dt, 3, (int64_t[]){B, M, 1}, NULL), dt);
        x = op2(&g, dnnl_graph_op_maximum, x, op2(&g, dnnl_graph_op_multiply, x, x, dt), dt); /* internal operand */
        if (v) x = op1(&g, dnnl_graph_op_type_cast, x, dnnl_f32);
        size_t w = tens(&g, v ? dnnl_f32 : dt, 2, (int64_t[]){K, N}, NULL);
        size_t y = matmul(&g, x, w, -1, false, false, dnnl_f32);
        y = op2(&g, dnnl_graph_op_multiply, y, tens_fill(&g, dnnl_f32, 1, (int64_t[]){N}, NULL, F_MUL), dnnl_f32);
        y = op2(&g, dnnl_graph_op_add, y, tens(&g, dnnl_f32, 3, (int64_t[]){B, M, N}, NULL), dnnl_f32);
        y = op2(&g, dnnl_graph_op_divide, y, tens_fill(&g, dnnl_f32, 1, (int64_t[]){1}, NULL, F_POS), dnnl_f32);
        y = op1(&g, dnnl_graph_op_type_cast, y, dnnl_bf16);
        check(v ? "bmb bf16 pre-chain" : "bmb f32", &g, dnnl_success, dnnl_fpmath_mode_strict, false);
        g_free(&g);
    }
}

/* ---- convolution cases --------------------------------------------------------- */

typedef struct {
    int k;                        /* spatial dims */
    int64_t N, IC, OC, G;
    int64_t in[3], ker[3], S[3], Dl[3], pb[3], pe[3];
    bool nxc, xfirst, bias_in, deconv;
    int64_t opad[3];
    const char *auto_pad;
} cv_cfg;

static size_t conv_op(graph *g, const cv_cfg *c, size_t x, size_t w, int bias, dnnl_data_type_t odt) {
    pt_op *op = mk(g, c->deconv ? dnnl_graph_op_conv_transpose : dnnl_graph_op_convolution);
    a_s64s(op, dnnl_graph_op_attr_strides, c->S, (size_t)c->k);
    a_s64s(op, dnnl_graph_op_attr_dilations, c->Dl, (size_t)c->k);
    a_s64s(op, dnnl_graph_op_attr_pads_begin, c->pb, (size_t)c->k);
    a_s64s(op, dnnl_graph_op_attr_pads_end, c->pe, (size_t)c->k);
    a_s64(op, dnnl_graph_op_attr_groups, c->G);
    a_str(op, dnnl_graph_op_attr_data_format, c->nxc ? "NXC" : "NCX");
    if (c->deconv) {
        a_str(op, dnnl_graph_op_attr_weights_format, c->xfirst ? "XOI" : "IOX");
        a_s64s(op, dnnl_graph_op_attr_output_padding, c->opad, (size_t)c->k);
    } else {
        a_str(op, dnnl_graph_op_attr_weights_format, c->xfirst ? "XIO" : "OIX");
    }
    if (c->auto_pad) a_str(op, dnnl_graph_op_attr_auto_pad, c->auto_pad);
    if (bias >= 0) return fin(g, op, (size_t[]){x, w, (size_t)bias}, 3, odt);
    return fin(g, op, (size_t[]){x, w}, 2, odt);
}

/* src / weights dims per the formats. */
static void conv_shapes(const cv_cfg *c, int64_t *xd, int64_t *wd) {
    int r = c->k + 2;
    xd[0] = c->N;
    xd[c->nxc ? r - 1 : 1] = c->IC;
    for (int j = 0; j < c->k; ++j) xd[c->nxc ? 1 + j : 2 + j] = c->in[j];
    /* conv: O = OC, I = IC / G; deconv: O = OC / G, I = IC */
    int64_t O = c->deconv ? c->OC / c->G : c->OC, I = c->deconv ? c->IC : c->IC / c->G;
    if (!c->deconv) {
        if (c->xfirst) wd[r - 2] = I, wd[r - 1] = O;
        else wd[0] = O, wd[1] = I;
    } else {
        if (c->xfirst) wd[r - 2] = O, wd[r - 1] = I;
        else wd[0] = I, wd[1] = O;
    }
    for (int j = 0; j < c->k; ++j) wd[c->xfirst ? j : 2 + j] = c->ker[j];
}

enum { CV_PLAIN, CV_BIASADD_BN_CHAIN, CV_SWISH, CV_INT8, CV_INT8_SUM, CV_BF16 };

static void conv_case(const char *name, const cv_cfg *c, int kind, dnnl_fpmath_mode_t mode, bool strided_src) {
    graph g;
    g_init(&g);
    int r = c->k + 2;
    int64_t xd[5], wd[5], st[5];
    conv_shapes(c, xd, wd);
    bool q = kind == CV_INT8 || kind == CV_INT8_SUM;
    padded_strides(r, xd, 2, st);
    size_t x = tens(&g, q ? dnnl_u8 : (kind == CV_BF16 ? dnnl_bf16 : dnnl_f32), r, xd, strided_src ? st : NULL);
    size_t w = tens(&g, q ? dnnl_s8 : (kind == CV_BF16 ? dnnl_bf16 : dnnl_f32), r, wd, NULL);
    dnnl_data_type_t cdt = kind == CV_BF16 ? dnnl_bf16 : dnnl_f32;
    if (q) {
        float s = 0.5f;
        int64_t z = 3;
        x = dequant(&g, x, &s, &z, 1, 0);
        /* per output channel weight scales: axis O */
        int64_t O = c->deconv ? c->OC / c->G : c->OC;
        float ws[256];
        for (int64_t i = 0; i < O; ++i) ws[i] = (float)(1 + i % 3) * 0.125f;
        int axis = c->deconv ? (c->xfirst ? r - 2 : 1) : (c->xfirst ? r - 1 : 0);
        w = dequant(&g, w, ws, NULL, (size_t)O, axis);
    }
    int bias = c->bias_in ? (int)tens(&g, cdt, 1, (int64_t[]){c->OC}, NULL) : -1;
    size_t y = conv_op(&g, c, x, w, bias, cdt);
    int64_t yd[5];
    memcpy(yd, g.lt[y].dims, sizeof(int64_t) * (size_t)r);
    int cdim = c->nxc ? r - 1 : 1;
    if (kind == CV_BIASADD_BN_CHAIN || kind == CV_BF16) {
        pt_op *ba = mk(&g, dnnl_graph_op_bias_add);
        a_str(ba, dnnl_graph_op_attr_data_format, c->nxc ? "NXC" : "NCX");
        y = fin(&g, ba, (size_t[]){y, tens(&g, cdt, 1, (int64_t[]){c->OC}, NULL)}, 2, cdt);
        if (kind == CV_BIASADD_BN_CHAIN) {
            pt_op *bn = mk(&g, dnnl_graph_op_batch_norm_inference);
            a_str(bn, dnnl_graph_op_attr_data_format, c->nxc ? "NXC" : "NCX");
            a_f32(bn, dnnl_graph_op_attr_epsilon, 1e-3f);
            size_t p[4];
            for (int i = 0; i < 4; ++i) p[i] = tens_fill(&g, dnnl_f32, 1, (int64_t[]){c->OC}, NULL, i == 3 ? F_POS : F_RAND);
            y = fin(&g, bn, (size_t[]){y, p[0], p[1], p[2], p[3]}, 5, cdt);
        }
        y = chain(&g, y, cdt, CH_MIXED);
    } else if (kind == CV_SWISH) {
        int64_t sh[5];
        for (int d = 0; d < r; ++d) sh[d] = d == cdim ? yd[d] : 1;
        y = op2(&g, dnnl_graph_op_add, y, tens(&g, dnnl_f32, r, sh, NULL), dnnl_f32); /* per channel, NCX-style */
        size_t sg = op1(&g, dnnl_graph_op_sigmoid, y, dnnl_f32);
        y = op2(&g, dnnl_graph_op_multiply, sg, y, dnnl_f32);
        y = op1(&g, dnnl_graph_op_relu, y, dnnl_f32);
    } else if (q) {
        if (kind == CV_INT8_SUM) {
            float es = 0.5f;
            int64_t ez = 0;
            size_t e = dequant(&g, tens(&g, dnnl_s8, r, yd, NULL), &es, &ez, 1, 0);
            y = op2(&g, dnnl_graph_op_add, y, e, dnnl_f32);
        } else {
            pt_op *ba = mk(&g, dnnl_graph_op_bias_add);
            a_str(ba, dnnl_graph_op_attr_data_format, c->nxc ? "NXC" : "NCX");
            y = fin(&g, ba, (size_t[]){y, tens(&g, dnnl_f32, 1, (int64_t[]){c->OC}, NULL)}, 2, dnnl_f32);
        }
        y = op1(&g, dnnl_graph_op_relu, y, dnnl_f32);
        float os = 0.25f;
        y = quant(&g, y, dnnl_s8, &os, NULL, 1, 0);
    }
    if (kind == CV_BF16) y = op1(&g, dnnl_graph_op_type_cast, y, dnnl_f32);
    check(name, &g, dnnl_success, mode, false);
    g_free(&g);
}

static cv_cfg cv_base(int k) {
    cv_cfg c;
    memset(&c, 0, sizeof c);
    c.k = k;
    c.N = 2, c.IC = 6, c.OC = 10, c.G = 1;
    for (int j = 0; j < 3; ++j) c.in[j] = 9 + j * 2, c.ker[j] = 3, c.S[j] = 1, c.Dl[j] = 1, c.pb[j] = 1, c.pe[j] = 1;
    return c;
}

static void test_conv(void) {
    cv_cfg c = cv_base(2);
    conv_case("conv 2d NCX OIX pad1 plain", &c, CV_PLAIN, dnnl_fpmath_mode_strict, false);
    c.bias_in = true;
    conv_case("conv 2d NCX OIX bias swish", &c, CV_SWISH, dnnl_fpmath_mode_strict, true);
    c.nxc = true, c.xfirst = true, c.bias_in = false;
    c.S[0] = 2, c.S[1] = 3, c.Dl[1] = 2, c.pb[0] = 2, c.pe[1] = 0;
    conv_case("conv 2d NXC XIO stride dilation biasadd bn chain", &c, CV_BIASADD_BN_CHAIN, dnnl_fpmath_mode_strict, true);
    c.G = 2, c.IC = 8, c.OC = 6;
    conv_case("conv 2d NXC XIO groups swish", &c, CV_SWISH, dnnl_fpmath_mode_strict, false);
    c.nxc = false, c.xfirst = false, c.G = 3, c.IC = 9, c.OC = 12;
    conv_case("conv 2d NCX OIX groups bn", &c, CV_BIASADD_BN_CHAIN, dnnl_fpmath_mode_strict, false);
    c = cv_base(1);
    c.in[0] = 50, c.ker[0] = 5, c.S[0] = 2, c.pb[0] = 3, c.pe[0] = 2, c.OC = 20;
    conv_case("conv 1d NCX", &c, CV_SWISH, dnnl_fpmath_mode_strict, false);
    c.nxc = true;
    conv_case("conv 1d NXC tf32", &c, CV_PLAIN, dnnl_fpmath_mode_tf32, false);
    c = cv_base(3);
    c.in[0] = 4, c.in[1] = 5, c.in[2] = 6, c.ker[0] = 2, c.ker[2] = 2, c.G = 2, c.IC = 4, c.OC = 6, c.bias_in = true;
    conv_case("conv 3d NCX groups", &c, CV_PLAIN, dnnl_fpmath_mode_strict, false);
    c.nxc = true, c.xfirst = true;
    conv_case("conv 3d NXC XIO swish", &c, CV_SWISH, dnnl_fpmath_mode_strict, false);
    c = cv_base(2);
    c.in[0] = 15, c.in[1] = 14, c.ker[0] = 1, c.ker[1] = 1, c.pb[0] = c.pb[1] = c.pe[0] = c.pe[1] = 0;
    c.IC = 32, c.OC = 64, c.N = 3;
    conv_case("conv 1x1 int8 NCX OIX", &c, CV_INT8, dnnl_fpmath_mode_strict, false);
    c.nxc = true, c.xfirst = true;
    conv_case("conv 1x1 int8 NXC XIO post-sum", &c, CV_INT8_SUM, dnnl_fpmath_mode_strict, false);
    c = cv_base(2);
    c.G = 2, c.IC = 16, c.OC = 16, c.in[0] = 12, c.in[1] = 7;
    conv_case("conv 3x3 int8 groups", &c, CV_INT8, dnnl_fpmath_mode_strict, false);
    c.nxc = true;
    conv_case("conv 3x3 bf16 biasadd chain", &c, CV_BF16, dnnl_fpmath_mode_strict, false);
    c = cv_base(2);
    c.auto_pad = "SAME_UPPER", c.S[0] = 2, c.S[1] = 2, c.in[0] = 10, c.in[1] = 11;
    conv_case("conv auto_pad SAME_UPPER", &c, CV_PLAIN, dnnl_fpmath_mode_bf16, false);
    /* many output positions: several row blocks per work item */
    c = cv_base(2);
    c.in[0] = 40, c.in[1] = 37, c.IC = 8, c.OC = 70, c.nxc = true;
    conv_case("conv larger NXC", &c, CV_SWISH, dnnl_fpmath_mode_strict, false);
}

/* Padding taps must be skipped, not added as 0 * w: with a -0.0 bias and a
 * zero src, a sum over present taps stays -0 where adding +0 would not. */
static void test_conv_skip_padding(void) {
    for (int deconv = 0; deconv < 2; ++deconv) {
        cv_cfg c = cv_base(2);
        c.deconv = deconv;
        if (deconv) c.S[0] = c.S[1] = 2;
        graph g;
        g_init(&g);
        int64_t xd[5], wd[5];
        conv_shapes(&c, xd, wd);
        size_t x = tens_fill(&g, dnnl_f32, 4, xd, NULL, F_ZERO);
        size_t w = tens_fill(&g, dnnl_f32, 4, wd, NULL, F_TAPSIGN);
        size_t bias = tens_fill(&g, dnnl_f32, 1, (int64_t[]){c.OC}, NULL, F_NEGZERO);
        size_t y = conv_op(&g, &c, x, w, (int)bias, dnnl_f32);
        y = op1(&g, dnnl_graph_op_reciprocal, y, dnnl_f32); /* -0 -> -inf, +0 -> +inf */
        check(deconv ? "deconv -0 bias, padding skipped" : "conv -0 bias, padding skipped", &g, dnnl_success,
              dnnl_fpmath_mode_strict, false);
        g_free(&g);
    }
}

static void test_deconv(void) {
    cv_cfg c = cv_base(2);
    c.deconv = true;
    c.S[0] = c.S[1] = 2, c.IC = 6, c.OC = 8;
    conv_case("deconv 2d stride 2 NCX IOX", &c, CV_PLAIN, dnnl_fpmath_mode_strict, false);
    c.bias_in = true, c.opad[0] = 1, c.Dl[1] = 2, c.G = 2, c.nxc = true, c.xfirst = true;
    conv_case("deconv 2d groups dilation output_padding NXC XOI", &c, CV_SWISH, dnnl_fpmath_mode_strict, true);
    c.G = 1, c.IC = 8, c.OC = 16, c.S[0] = 3, c.pb[0] = 0, c.pe[0] = 2;
    conv_case("deconv 2d int8", &c, CV_INT8, dnnl_fpmath_mode_strict, false);
    c = cv_base(1);
    c.deconv = true, c.in[0] = 20, c.ker[0] = 4, c.S[0] = 3, c.OC = 12;
    conv_case("deconv 1d bn chain", &c, CV_BIASADD_BN_CHAIN, dnnl_fpmath_mode_strict, false);
    c = cv_base(3);
    c.deconv = true, c.in[0] = 3, c.in[1] = 4, c.in[2] = 5, c.ker[0] = 2, c.S[2] = 2, c.OC = 4, c.IC = 4;
    conv_case("deconv 3d", &c, CV_PLAIN, dnnl_fpmath_mode_strict, false);
}

/* ConvolutionBackwardData runs as the transposed convolution of diff_dst:
 * the same cases through the reference op and the fused kernels. */
static void bwd_data_case(const char *name, const cv_cfg *c, dnnl_fpmath_mode_t mode) {
    graph g;
    g_init(&g);
    const int r = c->k + 2;
    int64_t dd[5], wd[5], sd[5];
    dd[0] = sd[0] = c->N;
    dd[c->nxc ? r - 1 : 1] = c->OC;
    sd[c->nxc ? r - 1 : 1] = c->IC;
    for (int j = 0; j < c->k; ++j) {
        const int64_t o = (c->in[j] + c->pb[j] + c->pe[j] - c->Dl[j] * (c->ker[j] - 1) - 1) / c->S[j] + 1;
        dd[c->nxc ? 1 + j : 2 + j] = o;
        sd[c->nxc ? 1 + j : 2 + j] = c->in[j];
        wd[c->xfirst ? j : 2 + j] = c->ker[j];
    }
    if (c->xfirst) wd[r - 2] = c->IC / c->G, wd[r - 1] = c->OC;
    else wd[0] = c->OC, wd[1] = c->IC / c->G;
    size_t x = tens(&g, dnnl_f32, r, dd, NULL), w = tens(&g, dnnl_f32, r, wd, NULL);
    pt_op *op = mk(&g, dnnl_graph_op_convolution_backward_data);
    a_s64s(op, dnnl_graph_op_attr_strides, c->S, (size_t)c->k);
    a_s64s(op, dnnl_graph_op_attr_dilations, c->Dl, (size_t)c->k);
    a_s64s(op, dnnl_graph_op_attr_pads_begin, c->pb, (size_t)c->k);
    a_s64s(op, dnnl_graph_op_attr_pads_end, c->pe, (size_t)c->k);
    a_s64s(op, dnnl_graph_op_attr_dst_shape, sd, (size_t)r);
    a_s64(op, dnnl_graph_op_attr_groups, c->G);
    a_str(op, dnnl_graph_op_attr_data_format, c->nxc ? "NXC" : "NCX");
    a_str(op, dnnl_graph_op_attr_weights_format, c->xfirst ? "XIO" : "OIX");
    size_t y = fin(&g, op, (size_t[]){x, w}, 2, dnnl_f32);
    if (c->bias_in) { /* a ReLU after it: the epilogue runs too */
        pt_op *relu = mk(&g, dnnl_graph_op_relu);
        fin(&g, relu, (size_t[]){y}, 1, dnnl_f32);
    }
    check(name, &g, dnnl_success, mode, false);
    g_free(&g);
}

static void test_conv_bwd_data(void) {
    cv_cfg c = cv_base(2);
    bwd_data_case("conv bwd data 2d NCX OIX pad1", &c, dnnl_fpmath_mode_strict);
    c.S[0] = c.S[1] = 2, c.G = 2, c.nxc = true, c.xfirst = true, c.bias_in = true, c.Dl[0] = 2;
    bwd_data_case("conv bwd data 2d stride 2 groups dilation NXC XIO + ReLU", &c, dnnl_fpmath_mode_strict);
    bwd_data_case("conv bwd data 2d NXC XIO, fpmath bf16", &c, dnnl_fpmath_mode_bf16);
    c = cv_base(1);
    c.in[0] = 17, c.ker[0] = 4, c.S[0] = 3, c.pb[0] = 0, c.pe[0] = 2, c.OC = 12;
    bwd_data_case("conv bwd data 1d stride 3", &c, dnnl_fpmath_mode_strict);
    c = cv_base(3);
    c.in[0] = 4, c.in[1] = 5, c.in[2] = 6, c.S[2] = 2, c.OC = 4, c.IC = 4;
    bwd_data_case("conv bwd data 3d", &c, dnnl_fpmath_mode_strict);
}

/* ---- in-place, zero-size, refusals ---------------------------------------------- */

static void test_misc(void) {
    graph g;
    /* final Add with a full operand of the output's layout: in-place pair */
    g_init(&g);
    size_t a = tens(&g, dnnl_f32, 2, (int64_t[]){33, 47}, NULL), b = tens(&g, dnnl_f32, 2, (int64_t[]){47, 29}, NULL);
    size_t y = matmul(&g, a, b, -1, false, false, dnnl_f32);
    y = op1(&g, dnnl_graph_op_relu, y, dnnl_f32);
    y = op2(&g, dnnl_graph_op_add, y, tens(&g, dnnl_f32, 2, (int64_t[]){33, 29}, NULL), dnnl_f32);
    check("in-place final add", &g, dnnl_success, dnnl_fpmath_mode_strict, true);
    g_free(&g);
    /* The same after a convolution into a channels-last f32 output, where
     * the engine may write the tile into the output itself: the in-place
     * operand must be read before the products overwrite it. */
    g_init(&g);
    cv_cfg c = cv_base(2);
    c.nxc = true, c.xfirst = true, c.IC = 16, c.OC = 40;
    a = tens(&g, dnnl_f32, 4, (int64_t[]){c.N, c.in[0], c.in[1], c.IC}, NULL);
    b = tens(&g, dnnl_f32, 4, (int64_t[]){3, 3, c.IC, c.OC}, NULL);
    y = conv_op(&g, &c, a, b, (int)tens(&g, dnnl_f32, 1, (int64_t[]){c.OC}, NULL), dnnl_f32);
    y = op1(&g, dnnl_graph_op_relu, y, dnnl_f32);
    y = op2(&g, dnnl_graph_op_add, y, tens(&g, dnnl_f32, 4, g.lt[y].dims, NULL), dnnl_f32);
    check("in-place final add after a convolution", &g, dnnl_success, dnnl_fpmath_mode_strict, true);
    g_free(&g);
    /* A channels-last f32 output with padded rows: no linear row layout,
     * so the tile is not written into it. */
    g_init(&g);
    a = tens(&g, dnnl_f32, 4, (int64_t[]){c.N, c.in[0], c.in[1], c.IC}, NULL);
    b = tens(&g, dnnl_f32, 4, (int64_t[]){3, 3, c.IC, c.OC}, NULL);
    y = conv_op(&g, &c, a, b, -1, dnnl_f32);
    y = op1(&g, dnnl_graph_op_relu, y, dnnl_f32);
    padded_strides(4, g.lt[y].dims, 5, g.lt[y].layout.strides);
    check("convolution into a padded channels-last output", &g, dnnl_success, dnnl_fpmath_mode_strict, false);
    g_free(&g);
    /* zero-size batch */
    g_init(&g);
    a = tens(&g, dnnl_f32, 3, (int64_t[]){0, 5, 7}, NULL), b = tens(&g, dnnl_f32, 2, (int64_t[]){7, 3}, NULL);
    y = matmul(&g, a, b, -1, false, false, dnnl_f32);
    y = op1(&g, dnnl_graph_op_relu, y, dnnl_f32);
    check("zero-size", &g, dnnl_success, dnnl_fpmath_mode_strict, false);
    g_free(&g);
    /* K = 0: bias and chain only */
    g_init(&g);
    a = tens(&g, dnnl_f32, 2, (int64_t[]){4, 0}, NULL), b = tens(&g, dnnl_f32, 2, (int64_t[]){0, 3}, NULL);
    y = matmul(&g, a, b, (int)tens(&g, dnnl_f32, 1, (int64_t[]){3}, NULL), false, false, dnnl_f32);
    y = op1(&g, dnnl_graph_op_exp, y, dnnl_f32);
    check("K = 0", &g, dnnl_success, dnnl_fpmath_mode_strict, false);
    g_free(&g);
    /* two MatMuls: refused */
    g_init(&g);
    a = tens(&g, dnnl_f32, 2, (int64_t[]){4, 5}, NULL), b = tens(&g, dnnl_f32, 2, (int64_t[]){5, 6}, NULL);
    y = matmul(&g, a, b, -1, false, false, dnnl_f32);
    y = matmul(&g, y, tens(&g, dnnl_f32, 2, (int64_t[]){6, 3}, NULL), -1, false, false, dnnl_f32);
    check("two matmuls", &g, dnnl_unimplemented, dnnl_fpmath_mode_strict, false);
    g_free(&g);
    /* a transpose in the epilogue: refused */
    g_init(&g);
    a = tens(&g, dnnl_f32, 2, (int64_t[]){4, 5}, NULL), b = tens(&g, dnnl_f32, 2, (int64_t[]){5, 6}, NULL);
    y = matmul(&g, a, b, -1, false, false, dnnl_f32);
    pt_op *tr = mk(&g, dnnl_graph_op_static_transpose);
    a_s64s(tr, dnnl_graph_op_attr_order, (int64_t[]){1, 0}, 2);
    y = fin(&g, tr, &y, 1, dnnl_f32);
    check("transpose epilogue", &g, dnnl_unimplemented, dnnl_fpmath_mode_strict, false);
    g_free(&g);
    /* an operand that broadcasts the output up: refused */
    g_init(&g);
    a = tens(&g, dnnl_f32, 2, (int64_t[]){4, 5}, NULL), b = tens(&g, dnnl_f32, 2, (int64_t[]){5, 6}, NULL);
    y = matmul(&g, a, b, -1, false, false, dnnl_f32);
    y = op2(&g, dnnl_graph_op_add, y, tens(&g, dnnl_f32, 3, (int64_t[]){2, 4, 6}, NULL), dnnl_f32);
    check("broadcasting epilogue", &g, dnnl_unimplemented, dnnl_fpmath_mode_strict, false);
    g_free(&g);
    /* no compute op */
    g_init(&g);
    y = op1(&g, dnnl_graph_op_relu, tens(&g, dnnl_f32, 2, (int64_t[]){4, 5}, NULL), dnnl_f32);
    check("no anchor", &g, dnnl_unimplemented, dnnl_fpmath_mode_strict, false);
    g_free(&g);
}

/* The chain program on its own, as a binary-chain partition would use it:
 * no src, the head reads two ports. */
static void test_postops_standalone(void) {
    graph g;
    g_init(&g);
    int64_t dims[3] = {4, 6, 37};
    size_t x = op2(&g, dnnl_graph_op_add, tens(&g, dnnl_f32, 3, (int64_t[]){4, 1, 37}, NULL),
                   tens(&g, dnnl_bf16, 2, (int64_t[]){6, 37}, NULL), dnnl_f32);
    x = op1(&g, dnnl_graph_op_relu, x, dnnl_f32);
    x = op2(&g, dnnl_graph_op_multiply, x, tens_fill(&g, dnnl_f32, 3, (int64_t[]){4, 6, 1}, NULL, F_MUL), dnnl_f32);
    x = op1(&g, dnnl_graph_op_type_cast, x, dnnl_f16);
    size_t res = x;
    void *buf[MAXT] = {0};
    for (int t = 0; t < g.nt; ++t) {
        buf[t] = calloc(1, pt_dt_bytes(g.lt[t].data_type, tg_span(&g.lt[t])) + 64);
        if (!g.produced[t]) fill_tensor(&g, (size_t)t, buf[t]);
    }
    pt_exec_ctx ctx = {.fpmath = dnnl_fpmath_mode_strict, .nthreads = 1};
    for (int o = 0; o < g.nop; ++o) {
        const pt_op *op = g.ops[o];
        pt_tview vin[4], vout[1];
        for (size_t k = 0; k < op->nin; ++k) vin[k] = (pt_tview){g.lt[op->in[k].id], buf[op->in[k].id]};
        vout[0] = (pt_tview){g.lt[op->out[0].id], buf[op->out[0].id]};
        CHECK_EQ_INT(pt_ref_run(op, vin, op->nin, vout, 1, &ctx), dnnl_success);
    }
    pt_lt ports[MAXT];
    size_t nin = in_ports(&g, ports);
    pt_postops_desc d = {.ops = (const pt_op *const *)g.ops, .nops = (size_t)g.nop, .ndims = 3, .dims = dims,
                         .result_id = res, .round_result = false, .in = ports, .nin = nin};
    pt_postops *p = NULL;
    CHECK_EQ_INT(pt_postops_create(&d, &p), dnnl_success);
    if (p) {
        CHECK_EQ_INT(pt_postops_result_dt(p), dnnl_f16);
        void *bound = malloc(pt_postops_bound_bytes(p));
        float *tmp = malloc(pt_postops_tmp_floats(p, 16) * sizeof(float)), x16[16];
        pt_tview vin[MAXT];
        for (size_t i = 0; i < nin; ++i) vin[i] = (pt_tview){ports[i], buf[ports[i].id]};
        CHECK_EQ_INT(pt_postops_bind(p, vin, nin, bound), dnnl_success);
        void *got = calloc(1, pt_dt_bytes(dnnl_f16, 4 * 6 * 37));
        for (int64_t i0 = 0; i0 < 4; ++i0)
            for (int64_t i1 = 0; i1 < 6; ++i1)
                for (int64_t c0 = 0; c0 < 37; c0 += 16) { /* runs of 16 with a tail */
                    int64_t n = 37 - c0 < 16 ? 37 - c0 : 16, idx[3] = {i0, i1, c0};
                    pt_postops_apply(bound, x16, n, idx, tmp);
                    pt_run_store(got, dnnl_f16, (i0 * 6 + i1) * 37 + c0, 1, x16, n);
                }
        CHECK(same_bits(&g.lt[res], buf[res], got, "postops standalone"));
        free(got), free(tmp), free(bound);
        pt_postops_destroy(p);
    }
    for (int t = 0; t < g.nt; ++t) free(buf[t]);
    g_free(&g);
}

int main(void) {
    test_postops_standalone();
    test_matmul_fp();
    test_matmul_quant();
    test_matmul_dynamic();
    test_bmb();
    test_conv();
    test_deconv();
    test_conv_bwd_data();
    test_conv_skip_padding();
    test_misc();
    printf("fused runs bit-identical to op-by-op: %d; engine runs within its bound: %d\n", n_fused_ok, n_engine_ok);
    return pt_test_summary("test_int_fused_post_ops");
}
