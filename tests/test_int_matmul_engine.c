/* MatMul partitions on the GEMM engine, through the public API, against a
 * double-precision reference computed here: float types with transposes,
 * batch broadcast, bias and a post-op; math modes; int8 x int8
 * (Dequantize -> MatMul); compressed int4 / int8 weights
 * (DynamicDequantize -> MatMul) for small and large M; constant weights
 * packed once through the constant tensor cache.  CTest runs it at every
 * ISA level (PARTITA_ISA). */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "ir/dtype.h"
#include "runtime/const_cache.h"
#include "test_util.h"

#define OK(expr) CHECK_EQ_INT((expr), dnnl_success)
#define MAXT 8

static dnnl_engine_t eng;
static dnnl_stream_t strm;
static uint32_t rng = 12345u;

static float rnd(void) {
    rng = rng * 1664525u + 1013904223u;
    return (float)((rng >> 8) & 0xffffff) / 8388608.f - 1.f;
}

static int irnd(int lo, int hi) {
    rng = rng * 1664525u + 1013904223u;
    return lo + (int)((rng >> 8) % (uint32_t)(hi - lo + 1));
}

typedef struct {
    dnnl_graph_logical_tensor_t lt;
    void *buf;
    size_t bytes;
} tensor;

static void make_lt(tensor *t, size_t id, dnnl_data_type_t dt, int nd, const int64_t *dims, bool constant) {
    dnnl_dims_t d = {0};
    for (int i = 0; i < nd; ++i) d[i] = dims[i];
    dnnl_graph_logical_tensor_init_with_dims(&t->lt, id, dt, nd, d, dnnl_graph_layout_type_strided,
                                             constant ? dnnl_graph_tensor_property_constant
                                                      : dnnl_graph_tensor_property_undef);
    int64_t n = 1;
    for (int i = 0; i < nd; ++i) n *= dims[i];
    t->bytes = pt_dt_bytes(dt, n);
    t->buf = calloc(1, t->bytes + 64);
}

static float get(const tensor *t, int64_t e) { return pt_load_f32(t->buf, t->lt.data_type, e); }

static void set(tensor *t, int64_t e, float v) {
    switch (t->lt.data_type) {
    case dnnl_f32: ((float *)t->buf)[e] = v; break;
    case dnnl_bf16: ((uint16_t *)t->buf)[e] = pt_f32_to_bf16(v); break;
    case dnnl_f16: ((uint16_t *)t->buf)[e] = pt_f32_to_f16(v); break;
    case dnnl_s8: ((int8_t *)t->buf)[e] = (int8_t)v; break;
    case dnnl_u8: ((uint8_t *)t->buf)[e] = (uint8_t)v; break;
    case dnnl_s4:
    case dnnl_u4: {
        uint8_t *b = (uint8_t *)t->buf + e / 2, nib = (uint8_t)((int)v & 15);
        *b = (e & 1) ? (uint8_t)((*b & 0x0f) | (nib << 4)) : (uint8_t)((*b & 0xf0) | nib);
        break;
    }
    default: break;
    }
}

static void free_tensors(tensor *t, int n) {
    for (int i = 0; i < n; ++i) free(t[i].buf);
}

/* Whether run_graph executes from inside an OpenMP parallel region. */
static bool g_in_region;

/* Builds the graph of `ops`, expects one partition, compiles and runs it
 * `runs` times with tensors t[0..nin) as inputs and t[nin] as output. */
static void run_graph(dnnl_graph_op_t *ops, int nops, tensor *t, int nin, dnnl_fpmath_mode_t mode, int runs,
                      const char *name) {
    dnnl_graph_graph_t g;
    OK(dnnl_graph_graph_create_with_fpmath_mode(&g, dnnl_cpu, mode));
    for (int i = 0; i < nops; ++i) OK(dnnl_graph_add_op(g, ops[i]));
    OK(dnnl_graph_graph_finalize(g));
    OK(dnnl_graph_graph_filter(g, dnnl_graph_partition_policy_fusion));
    size_t np = 0;
    OK(dnnl_graph_graph_get_partition_num(g, &np));
    if (np != 1) printf("%s: %zu partitions\n", name, np);
    CHECK_EQ_INT(np, 1);
    dnnl_graph_partition_t p = NULL;
    if (np == 1) OK(dnnl_graph_graph_get_partitions(g, 1, &p));
    if (p) {
        const dnnl_graph_logical_tensor_t *ins[MAXT], *outs[1] = {&t[nin].lt};
        for (int i = 0; i < nin; ++i) ins[i] = &t[i].lt;
        dnnl_graph_compiled_partition_t cp;
        OK(dnnl_graph_compiled_partition_create(&cp, p));
        OK(dnnl_graph_partition_compile(p, cp, (size_t)nin, ins, 1, outs, eng));
        /* The partition's ports come back in its own order: map by id. */
        size_t pin = 0;
        OK(dnnl_graph_partition_get_input_ports_num(p, &pin));
        dnnl_graph_logical_tensor_t plts[MAXT];
        OK(dnnl_graph_partition_get_input_ports(p, pin, plts));
        const dnnl_graph_logical_tensor_t *pins[MAXT];
        void *pdata[MAXT + 1];
        for (size_t i = 0; i < pin; ++i)
            for (int j = 0; j < nin; ++j)
                if (t[j].lt.id == plts[i].id) pins[i] = &t[j].lt, pdata[i] = t[j].buf;
        pdata[pin] = t[nin].buf;
        if (g_in_region) {
            /* From inside the caller's own OpenMP region (as many threads
             * as OMP_NUM_THREADS gives), executed by its first thread
             * while the others wait. */
#pragma omp parallel
            if (omp_get_thread_num() == 0)
                for (int r = 0; r < runs; ++r) pt_test_execute(cp, eng, strm, pin, pins, 1, outs, pdata);
        } else {
            for (int r = 0; r < runs; ++r) pt_test_execute(cp, eng, strm, pin, pins, 1, outs, pdata);
        }
        dnnl_graph_compiled_partition_destroy(cp);
        dnnl_graph_partition_destroy(p);
    }
    dnnl_graph_graph_destroy(g);
    for (int i = 0; i < nops; ++i) dnnl_graph_op_destroy(ops[i]);
}

/* |got - want| <= tol * scale + tiny, where scale = Σ_k |a_k b_k| (+|bias|). */
static int compare(const tensor *out, const double *want, const double *scale, int64_t n, double tol,
                   const char *name) {
    int bad = 0;
    for (int64_t e = 0; e < n; ++e) {
        double got = get(out, e), err = fabs(got - want[e]);
        double lim = tol * scale[e] + 1e-6;
        if (out->lt.data_type == dnnl_bf16) lim += fabs(want[e]) * 0x1p-8;
        if (out->lt.data_type == dnnl_f16) lim += fabs(want[e]) * 0x1p-11;
        if (!(err <= lim)) {
            if (bad < 3) printf("%s: element %lld got %.9g want %.9g\n", name, (long long)e, got, want[e]);
            ++bad;
        }
    }
    CHECK(bad == 0);
    return bad;
}

static double round_mode(double v, dnnl_fpmath_mode_t mode, dnnl_data_type_t dt) {
    if (dt != dnnl_f32) return v;
    if (mode == dnnl_fpmath_mode_bf16 || mode == dnnl_fpmath_mode_any) return pt_bf16_to_f32(pt_f32_to_bf16((float)v));
    if (mode == dnnl_fpmath_mode_f16) return pt_f16_to_f32(pt_f32_to_f16((float)v));
    return v;
}

/* ---- float MatMul: [B1, B2, M, K] x [B2, K, N] (+ bias [N]) -> ReLU? ---- */

typedef struct {
    int64_t b1, b2a, b2b, M, N, K;
    bool ta, tb, bias, relu;
    dnnl_data_type_t dt;
    dnnl_fpmath_mode_t mode;
} float_case;

static void float_matmul(const float_case *c) {
    char name[160];
    snprintf(name, sizeof name, "float %s b=%lldx%lld/%lld M=%lld N=%lld K=%lld ta=%d tb=%d bias=%d relu=%d mode=%d",
             pt_dt_name(c->dt), (long long)c->b1, (long long)c->b2a, (long long)c->b2b, (long long)c->M,
             (long long)c->N, (long long)c->K, c->ta, c->tb, c->bias, c->relu, (int)c->mode);
    tensor t[5];
    int64_t ad[4] = {c->b1, c->b2a, c->ta ? c->K : c->M, c->ta ? c->M : c->K};
    int64_t bd[3] = {c->b2b, c->tb ? c->N : c->K, c->tb ? c->K : c->N};
    int64_t cd[1] = {c->N};
    int64_t b2 = c->b2a > c->b2b ? c->b2a : c->b2b;
    int64_t od[4] = {c->b1, b2, c->M, c->N};
    int nin = c->bias ? 3 : 2;
    make_lt(&t[0], 1, c->dt, 4, ad, false);
    make_lt(&t[1], 2, c->dt, 3, bd, false);
    if (c->bias) make_lt(&t[2], 3, c->dt, 1, cd, false);
    make_lt(&t[nin], 4, c->dt, 4, od, false);
    for (int i = 0; i < nin; ++i) {
        int64_t n = 1;
        for (int d = 0; d < t[i].lt.ndims; ++d) n *= t[i].lt.dims[d];
        for (int64_t e = 0; e < n; ++e) set(&t[i], e, rnd());
    }
    dnnl_graph_logical_tensor_t mid = t[nin].lt;
    mid.id = 5;
    dnnl_graph_op_t ops[2];
    int nops = 1;
    OK(dnnl_graph_op_create(&ops[0], 1, dnnl_graph_op_matmul, "mm"));
    OK(dnnl_graph_op_add_input(ops[0], &t[0].lt));
    OK(dnnl_graph_op_add_input(ops[0], &t[1].lt));
    if (c->bias) OK(dnnl_graph_op_add_input(ops[0], &t[2].lt));
    OK(dnnl_graph_op_add_output(ops[0], c->relu ? &mid : &t[nin].lt));
    uint8_t ta = c->ta, tb = c->tb;
    OK(dnnl_graph_op_set_attr_bool(ops[0], dnnl_graph_op_attr_transpose_a, &ta, 1));
    OK(dnnl_graph_op_set_attr_bool(ops[0], dnnl_graph_op_attr_transpose_b, &tb, 1));
    if (c->relu) {
        OK(dnnl_graph_op_create(&ops[1], 2, dnnl_graph_op_relu, "relu"));
        OK(dnnl_graph_op_add_input(ops[1], &mid));
        OK(dnnl_graph_op_add_output(ops[1], &t[nin].lt));
        nops = 2;
    }
    run_graph(ops, nops, t, nin, c->mode, 2, name);

    int64_t n = c->b1 * b2 * c->M * c->N;
    double *want = malloc((size_t)n * sizeof(double)), *scale = malloc((size_t)n * sizeof(double));
    for (int64_t i1 = 0; i1 < c->b1; ++i1)
        for (int64_t i2 = 0; i2 < b2; ++i2)
            for (int64_t m = 0; m < c->M; ++m)
                for (int64_t j = 0; j < c->N; ++j) {
                    double acc = 0, sc = 0;
                    int64_t ab = (i1 * c->b2a + (c->b2a == 1 ? 0 : i2)) * c->M * c->K;
                    int64_t bb = (c->b2b == 1 ? 0 : i2) * c->K * c->N;
                    for (int64_t k = 0; k < c->K; ++k) {
                        double a = round_mode(get(&t[0], ab + (c->ta ? k * c->M + m : m * c->K + k)), c->mode, c->dt);
                        double b = round_mode(get(&t[1], bb + (c->tb ? j * c->K + k : k * c->N + j)), c->mode, c->dt);
                        acc += a * b, sc += fabs(a * b);
                    }
                    if (c->bias) acc += get(&t[2], j), sc += fabs(get(&t[2], j));
                    if (c->relu && acc < 0) acc = 0;
                    int64_t e = ((i1 * b2 + i2) * c->M + m) * c->N + j;
                    want[e] = acc, scale[e] = sc;
                }
    double tol = c->mode == dnnl_fpmath_mode_strict ? 4e-6 : 4e-6;
    compare(&t[nin], want, scale, n, tol * (1.0 + (double)c->K / 64), name);
    free(want), free(scale);
    free_tensors(t, nin + 1);
}

/* A plain f32 MatMul into an output whose columns are not contiguous
 * (strides {1, M}: column-major): the engine must not sum its tiles into
 * that buffer as rows (pt_gemm_args.c_direct), so every value lands at its
 * strided place. */
static void strided_output_matmul(int64_t M, int64_t N, int64_t K) {
    tensor t[3];
    make_lt(&t[0], 1, dnnl_f32, 2, (int64_t[]){M, K}, false);
    make_lt(&t[1], 2, dnnl_f32, 2, (int64_t[]){K, N}, false);
    make_lt(&t[2], 3, dnnl_f32, 2, (int64_t[]){M, N}, false);
    dnnl_dims_t st = {1, M};
    dnnl_graph_logical_tensor_init_with_strides(&t[2].lt, 3, dnnl_f32, 2, t[2].lt.dims, st,
                                                dnnl_graph_tensor_property_undef);
    for (int i = 0; i < 2; ++i)
        for (int64_t e = 0; e < t[i].lt.dims[0] * t[i].lt.dims[1]; ++e) set(&t[i], e, rnd());
    dnnl_graph_op_t op;
    OK(dnnl_graph_op_create(&op, 1, dnnl_graph_op_matmul, "mm"));
    OK(dnnl_graph_op_add_input(op, &t[0].lt));
    OK(dnnl_graph_op_add_input(op, &t[1].lt));
    OK(dnnl_graph_op_add_output(op, &t[2].lt));
    char name[96];
    snprintf(name, sizeof name, "f32 MatMul %lldx%lldx%lld into a column-major output", (long long)M, (long long)K,
             (long long)N);
    run_graph(&op, 1, t, 2, dnnl_fpmath_mode_strict, 1, name);
    double *want = malloc((size_t)(M * N) * sizeof(double)), *scale = malloc((size_t)(M * N) * sizeof(double));
    for (int64_t m = 0; m < M; ++m)
        for (int64_t j = 0; j < N; ++j) {
            double acc = 0, sc = 0;
            for (int64_t k = 0; k < K; ++k) {
                const double ab = (double)get(&t[0], m * K + k) * get(&t[1], k * N + j);
                acc += ab, sc += fabs(ab);
            }
            want[j * M + m] = acc, scale[j * M + m] = sc; /* the output's own element order */
        }
    compare(&t[2], want, scale, M * N, 4e-6 * (1.0 + (double)K / 64), name);
    free(want), free(scale);
    free_tensors(t, 3);
}

/* ---- binary ops before the MatMul (float_bmb), evaluated over A's whole
 * space with its dims merged where the operands allow:
 * A = (X * P) + Q, Q broadcast as `qd` says, then · W [K, N] + R, R [1, N]
 * or (r_full) of the output's shape, whose rows the epilogue may finish
 * several at a time. ---------------------------------------------------- */

static void prechain_matmul(int64_t b1, int64_t b2, int64_t M, int64_t K, int64_t N, const int64_t *qd, bool r_full) {
    char name[160];
    snprintf(name, sizeof name, "pre-chain b=%lldx%lld M=%lld K=%lld N=%lld Q=[%lld,%lld,%lld,%lld] R full %d",
             (long long)b1, (long long)b2, (long long)M, (long long)K, (long long)N, (long long)qd[0],
             (long long)qd[1], (long long)qd[2], (long long)qd[3], r_full);
    tensor t[6];
    const int64_t ad[4] = {b1, b2, M, K}, wd[2] = {K, N}, rd[2] = {1, N}, od[4] = {b1, b2, M, N};
    make_lt(&t[0], 1, dnnl_f32, 4, ad, false); /* X */
    make_lt(&t[1], 2, dnnl_f32, 4, ad, false); /* P */
    make_lt(&t[2], 3, dnnl_f32, 4, qd, false); /* Q */
    make_lt(&t[3], 4, dnnl_f32, 2, wd, false); /* W */
    if (r_full) make_lt(&t[4], 5, dnnl_f32, 4, od, false); /* R */
    else make_lt(&t[4], 5, dnnl_f32, 2, rd, false);
    make_lt(&t[5], 6, dnnl_f32, 4, od, false);
    for (int i = 0; i < 5; ++i) {
        int64_t n = 1;
        for (int d = 0; d < t[i].lt.ndims; ++d) n *= t[i].lt.dims[d];
        for (int64_t e = 0; e < n; ++e) set(&t[i], e, rnd());
    }
    dnnl_graph_logical_tensor_t xp = t[0].lt, a = t[0].lt, mmo = t[5].lt;
    xp.id = 7, a.id = 8, mmo.id = 9;
    dnnl_graph_op_t ops[4];
    OK(dnnl_graph_op_create(&ops[0], 1, dnnl_graph_op_multiply, "mul"));
    OK(dnnl_graph_op_add_input(ops[0], &t[0].lt));
    OK(dnnl_graph_op_add_input(ops[0], &t[1].lt));
    OK(dnnl_graph_op_add_output(ops[0], &xp));
    OK(dnnl_graph_op_create(&ops[1], 2, dnnl_graph_op_add, "add_q"));
    OK(dnnl_graph_op_add_input(ops[1], &xp));
    OK(dnnl_graph_op_add_input(ops[1], &t[2].lt));
    OK(dnnl_graph_op_add_output(ops[1], &a));
    OK(dnnl_graph_op_create(&ops[2], 3, dnnl_graph_op_matmul, "mm"));
    OK(dnnl_graph_op_add_input(ops[2], &a));
    OK(dnnl_graph_op_add_input(ops[2], &t[3].lt));
    OK(dnnl_graph_op_add_output(ops[2], &mmo));
    OK(dnnl_graph_op_create(&ops[3], 4, dnnl_graph_op_add, "add_r"));
    OK(dnnl_graph_op_add_input(ops[3], &mmo));
    OK(dnnl_graph_op_add_input(ops[3], &t[4].lt));
    OK(dnnl_graph_op_add_output(ops[3], &t[5].lt));
    run_graph(ops, 4, t, 5, dnnl_fpmath_mode_strict, 2, name);

    const int64_t n = b1 * b2 * M * N;
    double *want = malloc((size_t)n * sizeof(double)), *scale = malloc((size_t)n * sizeof(double));
    for (int64_t i1 = 0; i1 < b1; ++i1)
        for (int64_t i2 = 0; i2 < b2; ++i2)
            for (int64_t m = 0; m < M; ++m)
                for (int64_t j = 0; j < N; ++j) {
                    double acc = 0, sc = 0;
                    for (int64_t k = 0; k < K; ++k) {
                        const int64_t e = ((i1 * b2 + i2) * M + m) * K + k;
                        const int64_t q = (((qd[0] > 1 ? i1 : 0) * qd[1] + (qd[1] > 1 ? i2 : 0)) * qd[2] +
                                           (qd[2] > 1 ? m : 0)) * qd[3] + (qd[3] > 1 ? k : 0);
                        const double av = (double)(float)(get(&t[0], e) * get(&t[1], e)) + get(&t[2], q);
                        const double w = get(&t[3], k * N + j);
                        acc += (double)(float)av * w, sc += fabs(av * w);
                    }
                    const int64_t e = ((i1 * b2 + i2) * M + m) * N + j;
                    const double rv = get(&t[4], r_full ? e : j);
                    want[e] = acc + rv, scale[e] = sc + fabs(rv);
                }
    compare(&t[5], want, scale, n, 4e-6 * (1.0 + (double)K / 64), name);
    free(want), free(scale);
    free_tensors(t, 6);
}

/* ---- int8 x int8: Dequantize(u8/s8 src) x Dequantize(s8 w, per channel) -- */

static void int8_matmul(int64_t M, int64_t N, int64_t K, dnnl_data_type_t sdt, bool const_w) {
    char name[120];
    snprintf(name, sizeof name, "int8 %s M=%lld N=%lld K=%lld const=%d", pt_dt_name(sdt), (long long)M, (long long)N,
             (long long)K, const_w);
    tensor t[3];
    int64_t ad[2] = {M, K}, bd[2] = {K, N}, od[2] = {M, N};
    make_lt(&t[0], 1, sdt, 2, ad, false);
    make_lt(&t[1], 2, dnnl_s8, 2, bd, const_w);
    make_lt(&t[2], 3, dnnl_f32, 2, od, false);
    for (int64_t e = 0; e < M * K; ++e) set(&t[0], e, (float)(sdt == dnnl_u8 ? irnd(0, 255) : irnd(-128, 127)));
    for (int64_t e = 0; e < K * N; ++e) set(&t[1], e, (float)irnd(-128, 127));
    float sa = 0.02f, *sw = malloc((size_t)N * sizeof(float));
    int64_t za = sdt == dnnl_u8 ? 7 : -3, *zw = calloc((size_t)N, sizeof(int64_t));
    for (int64_t j = 0; j < N; ++j) sw[j] = 0.001f * (float)(1 + j % 7);
    dnnl_graph_logical_tensor_t fa, fb;
    dnnl_dims_t d2a = {M, K}, d2b = {K, N};
    dnnl_graph_logical_tensor_init_with_dims(&fa, 4, dnnl_f32, 2, d2a, dnnl_graph_layout_type_strided, 0);
    dnnl_graph_logical_tensor_init_with_dims(&fb, 5, dnnl_f32, 2, d2b, dnnl_graph_layout_type_strided, 0);
    dnnl_graph_op_t ops[3];
    OK(dnnl_graph_op_create(&ops[0], 1, dnnl_graph_op_dequantize, "dqa"));
    OK(dnnl_graph_op_add_input(ops[0], &t[0].lt));
    OK(dnnl_graph_op_add_output(ops[0], &fa));
    OK(dnnl_graph_op_set_attr_f32(ops[0], dnnl_graph_op_attr_scales, &sa, 1));
    OK(dnnl_graph_op_set_attr_s64(ops[0], dnnl_graph_op_attr_zps, &za, 1));
    OK(dnnl_graph_op_set_attr_str(ops[0], dnnl_graph_op_attr_qtype, "per_tensor", 10));
    OK(dnnl_graph_op_create(&ops[1], 2, dnnl_graph_op_dequantize, "dqb"));
    OK(dnnl_graph_op_add_input(ops[1], &t[1].lt));
    OK(dnnl_graph_op_add_output(ops[1], &fb));
    OK(dnnl_graph_op_set_attr_f32(ops[1], dnnl_graph_op_attr_scales, sw, N));
    OK(dnnl_graph_op_set_attr_s64(ops[1], dnnl_graph_op_attr_zps, zw, N));
    OK(dnnl_graph_op_set_attr_str(ops[1], dnnl_graph_op_attr_qtype, "per_channel", 11));
    int64_t axis = 1;
    OK(dnnl_graph_op_set_attr_s64(ops[1], dnnl_graph_op_attr_axis, &axis, 1));
    OK(dnnl_graph_op_create(&ops[2], 3, dnnl_graph_op_matmul, "mm"));
    OK(dnnl_graph_op_add_input(ops[2], &fa));
    OK(dnnl_graph_op_add_input(ops[2], &fb));
    OK(dnnl_graph_op_add_output(ops[2], &t[2].lt));
    run_graph(ops, 3, t, 2, dnnl_fpmath_mode_strict, const_w ? 3 : 1, name);
    double *want = malloc((size_t)(M * N) * sizeof(double)), *scale = malloc((size_t)(M * N) * sizeof(double));
    for (int64_t m = 0; m < M; ++m)
        for (int64_t j = 0; j < N; ++j) {
            double acc = 0, sc = 0;
            for (int64_t k = 0; k < K; ++k) {
                double a = (double)(float)((get(&t[0], m * K + k) - (float)za) * sa);
                double b = (double)(float)(get(&t[1], k * N + j) * sw[j]);
                acc += a * b, sc += fabs(a * b);
            }
            want[m * N + j] = acc, scale[m * N + j] = sc;
        }
    compare(&t[2], want, scale, M * N, 1e-5 * (1.0 + (double)K / 64), name);
    free(want), free(scale), free(sw), free(zw);
    free_tensors(t, 3);
}

/* ---- compressed weights: DynamicDequantize(s4/u4/s8 [K, N], per group) --- */

static void compressed_matmul(int64_t M, int64_t N, int64_t K, int64_t G, dnnl_data_type_t wdt, bool zps,
                              dnnl_data_type_t adt, bool const_w) {
    char name[140];
    snprintf(name, sizeof name, "compressed %s x %s M=%lld N=%lld K=%lld G=%lld zp=%d const=%d", pt_dt_name(adt),
             pt_dt_name(wdt), (long long)M, (long long)N, (long long)K, (long long)G, zps, const_w);
    tensor t[5];
    int64_t ad[2] = {M, K}, bd[2] = {K, N}, sd[2] = {K / G, N}, od[2] = {M, N};
    int nin = zps ? 4 : 3;
    make_lt(&t[0], 1, adt, 2, ad, false);
    make_lt(&t[1], 2, wdt, 2, bd, const_w);
    make_lt(&t[2], 3, adt, 2, sd, const_w); /* scales share the dequantised type */
    if (zps) make_lt(&t[3], 4, wdt == dnnl_s8 ? dnnl_s8 : dnnl_u4, 2, sd, const_w);
    make_lt(&t[nin], 5, adt, 2, od, false);
    int lo = wdt == dnnl_s4 ? -8 : wdt == dnnl_u4 ? 0 : -128, hi = wdt == dnnl_s4 ? 7 : wdt == dnnl_u4 ? 15 : 127;
    for (int64_t e = 0; e < M * K; ++e) set(&t[0], e, rnd());
    for (int64_t e = 0; e < K * N; ++e) set(&t[1], e, (float)irnd(lo, hi));
    for (int64_t e = 0; e < K / G * N; ++e) set(&t[2], e, 0.01f * (float)(1 + irnd(0, 9)));
    if (zps)
        for (int64_t e = 0; e < K / G * N; ++e) set(&t[3], e, (float)(wdt == dnnl_s8 ? irnd(-4, 4) : irnd(0, 15)));
    dnnl_graph_logical_tensor_t fb;
    dnnl_dims_t d2b = {K, N};
    dnnl_graph_logical_tensor_init_with_dims(&fb, 6, adt, 2, d2b, dnnl_graph_layout_type_strided, 0);
    dnnl_graph_op_t ops[2];
    OK(dnnl_graph_op_create(&ops[0], 1, dnnl_graph_op_dynamic_dequantize, "dq"));
    for (int i = 1; i < nin; ++i) OK(dnnl_graph_op_add_input(ops[0], &t[i].lt));
    OK(dnnl_graph_op_add_output(ops[0], &fb));
    OK(dnnl_graph_op_set_attr_str(ops[0], dnnl_graph_op_attr_qtype, "per_group", 9));
    int64_t gs[2] = {G, 1};
    OK(dnnl_graph_op_set_attr_s64(ops[0], dnnl_graph_op_attr_group_shape, gs, 2));
    OK(dnnl_graph_op_create(&ops[1], 2, dnnl_graph_op_matmul, "mm"));
    OK(dnnl_graph_op_add_input(ops[1], &t[0].lt));
    OK(dnnl_graph_op_add_input(ops[1], &fb));
    OK(dnnl_graph_op_add_output(ops[1], &t[nin].lt));
    run_graph(ops, 2, t, nin, dnnl_fpmath_mode_strict, const_w ? 3 : 1, name);
    double *want = malloc((size_t)(M * N) * sizeof(double)), *scale = malloc((size_t)(M * N) * sizeof(double));
    for (int64_t m = 0; m < M; ++m)
        for (int64_t j = 0; j < N; ++j) {
            double acc = 0, sc = 0;
            for (int64_t k = 0; k < K; ++k) {
                int64_t g = (k / G) * N + j;
                double zp = zps ? get(&t[3], g) : 0.0;
                double w = (float)((get(&t[1], k * N + j) - zp) * get(&t[2], g));
                /* The dequantised weights stay f32 inside the partition
                 * (docs/numerics.md), whatever their declared type. */
                double a = get(&t[0], m * K + k);
                acc += a * w, sc += fabs(a * w);
            }
            want[m * N + j] = acc, scale[m * N + j] = sc;
        }
    compare(&t[nin], want, scale, M * N, 1e-5 * (1.0 + (double)K / 64), name);
    free(want), free(scale);
    free_tensors(t, nin + 1);
}

/* ---- constant weights under each naming option of seed 004 ------------- */

enum { NAME_NEITHER, NAME_KEY, NAME_TENSOR_ID };

/* y = x · w for x [M, K], w [K, N] (constant), f32; returns max error. */
static double check_product(const float *x, const float *w, const float *y, int64_t M, int64_t N, int64_t K) {
    double worst = 0;
    for (int64_t m = 0; m < M; ++m)
        for (int64_t n = 0; n < N; ++n) {
            double acc = 0, sc = 0;
            for (int64_t k = 0; k < K; ++k) acc += (double)x[m * K + k] * w[k * N + n], sc += fabs(x[m * K + k] * w[k * N + n]);
            double err = fabs(acc - y[m * N + n]) / (sc + 1e-6);
            if (err > worst) worst = err;
        }
    return worst;
}

/* Two ops with the same ids and shapes (single-op integration) share one
 * compiled partition through the compiled-partition cache; they run
 * alternately with two different constant weights, then one weight buffer
 * is overwritten with other values in place.  Every output must be right. */
/* With `conv`, the op is a 1x1 channels-last Convolution laid out exactly
 * like the MatMul (x [1, 1, M, K] NXC, w [1, 1, K, N] XIO). */
static void constant_weight_names(int how, bool conv) {
    const int64_t M = 8, K = 96, N = 40;
    dnnl_dims_t xd = {M, K}, wd = {K, N}, yd = {M, N};
    dnnl_dims_t xc = {1, 1, M, K}, wc = {1, 1, K, N}, yc = {1, 1, M, N};
    const int nd = conv ? 4 : 2;
    dnnl_graph_logical_tensor_t x, w, y;
    dnnl_graph_logical_tensor_init_with_dims(&x, 1, dnnl_f32, nd, conv ? xc : xd, dnnl_graph_layout_type_strided, 0);
    dnnl_graph_logical_tensor_init_with_dims(&w, 2, dnnl_f32, nd, conv ? wc : wd, dnnl_graph_layout_type_strided,
                                             dnnl_graph_tensor_property_constant);
    dnnl_graph_logical_tensor_init_with_dims(&y, 3, dnnl_f32, nd, conv ? yc : yd, dnnl_graph_layout_type_strided, 0);
    float *xb = malloc(sizeof(float) * (size_t)(M * K)), *yb = malloc(sizeof(float) * (size_t)(M * N));
    float *wb[2] = {malloc(sizeof(float) * (size_t)(K * N)), malloc(sizeof(float) * (size_t)(K * N))};
    for (int64_t i = 0; i < M * K; ++i) xb[i] = rnd();
    for (int j = 0; j < 2; ++j)
        for (int64_t i = 0; i < K * N; ++i) wb[j][i] = rnd();
    dnnl_graph_compiled_partition_t cp[2] = {NULL, NULL};
    for (int j = 0; j < 2; ++j) { /* the "two ops": separate graphs, same ids */
        dnnl_graph_op_t op;
        OK(dnnl_graph_op_create(&op, 7, conv ? dnnl_graph_op_convolution : dnnl_graph_op_matmul, "op"));
        if (conv) {
            const int64_t ones[2] = {1, 1}, zeros[2] = {0, 0};
            OK(dnnl_graph_op_set_attr_s64(op, dnnl_graph_op_attr_strides, ones, 2));
            OK(dnnl_graph_op_set_attr_s64(op, dnnl_graph_op_attr_dilations, ones, 2));
            OK(dnnl_graph_op_set_attr_s64(op, dnnl_graph_op_attr_pads_begin, zeros, 2));
            OK(dnnl_graph_op_set_attr_s64(op, dnnl_graph_op_attr_pads_end, zeros, 2));
            OK(dnnl_graph_op_set_attr_str(op, dnnl_graph_op_attr_data_format, "NXC", 3));
            OK(dnnl_graph_op_set_attr_str(op, dnnl_graph_op_attr_weights_format, "XIO", 3));
        }
        OK(dnnl_graph_op_add_input(op, &x));
        OK(dnnl_graph_op_add_input(op, &w));
        OK(dnnl_graph_op_add_output(op, &y));
        dnnl_graph_partition_t p = pt_test_one_op_partition(op);
        if (!p) return;
        const dnnl_graph_logical_tensor_t *ins[2] = {&x, &w}, *outs[1] = {&y};
        OK(dnnl_graph_compiled_partition_create(&cp[j], p));
        OK(dnnl_graph_partition_compile(p, cp[j], 2, ins, 1, outs, eng));
        dnnl_graph_partition_destroy(p);
    }
    int bad = 0;
    for (int round = 0; round < 6; ++round) {
        int j = round % 2;
        if (round == 4) /* weight 0's buffer now holds other values */
            for (int64_t i = 0; i < K * N; ++i) wb[0][i] = rnd();
        dnnl_graph_tensor_t tx, tw, ty;
        OK(dnnl_graph_tensor_create(&tx, &x, eng, xb));
        if (how == NAME_TENSOR_ID) OK(dnnl_graph_tensor_create_with_id(&tw, &w, eng, wb[j], 100 + (size_t)j + (round >= 4 ? 10 : 0)));
        else OK(dnnl_graph_tensor_create(&tw, &w, eng, wb[j]));
        OK(dnnl_graph_tensor_create(&ty, &y, eng, yb));
        const_dnnl_graph_tensor_t ti[2] = {tx, tw}, to[1] = {ty};
        if (how == NAME_KEY) {
            dnnl_graph_execute_options_t o = {.key = 500 + (size_t)j + (round >= 4 ? 10 : 0)};
            OK(dnnl_graph_compiled_partition_execute_with_options(cp[j], strm, 2, ti, 1, to, &o));
        } else {
            OK(dnnl_graph_compiled_partition_execute(cp[j], strm, 2, ti, 1, to));
        }
        OK(dnnl_stream_wait(strm));
        double err = check_product(xb, wb[j], yb, M, N, K);
        if (err > 1e-5) {
            printf("constant weights (%s, naming %d) round %d: relative error %g\n", conv ? "conv" : "matmul", how,
                   round, err);
            ++bad;
        }
        dnnl_graph_tensor_destroy(tx), dnnl_graph_tensor_destroy(tw), dnnl_graph_tensor_destroy(ty);
    }
    CHECK(bad == 0);
    /* The same name with other bytes (a reused key / id / buffer) is caught
     * by the fingerprint: rerun round 4's weights under round 0's name. */
    for (int64_t i = 0; i < K * N; ++i) wb[0][i] = rnd();
    dnnl_graph_tensor_t tx, tw, ty;
    OK(dnnl_graph_tensor_create(&tx, &x, eng, xb));
    if (how == NAME_TENSOR_ID) OK(dnnl_graph_tensor_create_with_id(&tw, &w, eng, wb[0], 100));
    else OK(dnnl_graph_tensor_create(&tw, &w, eng, wb[0]));
    OK(dnnl_graph_tensor_create(&ty, &y, eng, yb));
    const_dnnl_graph_tensor_t ti[2] = {tx, tw}, to[1] = {ty};
    dnnl_graph_execute_options_t o = {.key = 500};
    if (how == NAME_KEY) OK(dnnl_graph_compiled_partition_execute_with_options(cp[0], strm, 2, ti, 1, to, &o));
    else OK(dnnl_graph_compiled_partition_execute(cp[0], strm, 2, ti, 1, to));
    OK(dnnl_stream_wait(strm));
    CHECK(check_product(xb, wb[0], yb, M, N, K) <= 1e-5);
    dnnl_graph_tensor_destroy(tx), dnnl_graph_tensor_destroy(tw), dnnl_graph_tensor_destroy(ty);
    for (int j = 0; j < 2; ++j) dnnl_graph_compiled_partition_destroy(cp[j]);
    free(xb), free(yb), free(wb[0]), free(wb[1]);
}

int main(void) {
    OK(dnnl_engine_create(&eng, dnnl_cpu, 0));
    OK(dnnl_stream_create(&strm, eng, 0));
    const dnnl_data_type_t fdts[3] = {dnnl_f32, dnnl_bf16, dnnl_f16};
    /* Shapes: 1, tails around the microkernel and block sizes, odd sizes. */
    const int64_t shapes[][3] = {{1, 1, 1},    {1, 17, 33},   {5, 1, 7},    {7, 33, 19},  {13, 64, 128},
                                 {33, 65, 300}, {97, 47, 513}, {1, 300, 64}, {3, 129, 1000}, {130, 96, 40}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s)
        for (int di = 0; di < 3; ++di) {
            float_case c = {.b1 = 1, .b2a = 1, .b2b = 1, .M = shapes[s][0], .N = shapes[s][1], .K = shapes[s][2],
                            .dt = fdts[di], .ta = (s % 3) == 1, .tb = (s % 2) == 1, .bias = s % 4 == 2,
                            .relu = s % 5 == 3};
            float_matmul(&c);
        }
    /* Batch broadcast either way, and a 2-level batch. */
    float_case bc[] = {
        {.b1 = 2, .b2a = 3, .b2b = 1, .M = 9, .N = 20, .K = 31, .dt = dnnl_f32},
        {.b1 = 1, .b2a = 1, .b2b = 4, .M = 17, .N = 5, .K = 64, .dt = dnnl_f32, .tb = true},
        {.b1 = 3, .b2a = 2, .b2b = 2, .M = 6, .N = 70, .K = 12, .dt = dnnl_bf16, .bias = true},
    };
    for (size_t i = 0; i < sizeof bc / sizeof bc[0]; ++i) float_matmul(&bc[i]);
    /* Plain f32 products large enough for several M and N blocks (summed in
     * the output itself), batched, and into a column-major output. */
    float_case big[] = {
        {.b1 = 2, .b2a = 1, .b2b = 1, .M = 150, .N = 2500, .K = 70, .dt = dnnl_f32},
        {.b1 = 1, .b2a = 2, .b2b = 2, .M = 300, .N = 260, .K = 600, .dt = dnnl_f32},
        {.b1 = 1, .b2a = 1, .b2b = 1, .M = 300, .N = 2200, .K = 520, .dt = dnnl_f32},
    };
    for (size_t i = 0; i < sizeof big / sizeof big[0]; ++i) float_matmul(&big[i]);
    strided_output_matmul(400, 700, 90);
    /* Executed from inside the caller's own parallel region: a product
     * too small for a second thread, and one for the helpers. */
    g_in_region = true;
    float_case inner[] = {
        {.b1 = 4, .b2a = 1, .b2b = 1, .M = 8, .N = 8, .K = 8, .dt = dnnl_f32},
        {.b1 = 4, .b2a = 1, .b2b = 1, .M = 64, .N = 64, .K = 64, .dt = dnnl_f32},
    };
    for (size_t i = 0; i < sizeof inner / sizeof inner[0]; ++i) float_matmul(&inner[i]);
    g_in_region = false;
    /* Math modes on f32 operands. */
    const dnnl_fpmath_mode_t modes[] = {dnnl_fpmath_mode_bf16, dnnl_fpmath_mode_f16, dnnl_fpmath_mode_any};
    for (int i = 0; i < 3; ++i) {
        float_case c = {.b1 = 1, .b2a = 1, .b2b = 1, .M = 23, .N = 41, .K = 77, .dt = dnnl_f32, .mode = modes[i]};
        float_matmul(&c);
    }
    /* Pre-chains: Q of A's shape (every dim merges), broadcast over the
     * batch (the rows and k merge), per row (nothing merges with k), a
     * scalar; rows of one element, odd sizes. */
    const int64_t pre[][5] = {{2, 3, 32, 32, 32}, {3, 5, 7, 33, 9}, {1, 4, 1, 17, 5}, {2, 2, 300, 3, 20}, {1, 1, 50, 8, 128}};
    for (size_t i = 0; i < sizeof pre / sizeof pre[0]; ++i) {
        const int64_t b1 = pre[i][0], b2 = pre[i][1], M = pre[i][2], K = pre[i][3], N = pre[i][4];
        const int64_t qs[][4] = {{b1, b2, M, K}, {1, 1, M, K}, {b1, b2, M, 1}, {1, b2, 1, K}, {1, 1, 1, 1}};
        for (size_t q = 0; q < sizeof qs / sizeof qs[0]; ++q) prechain_matmul(b1, b2, M, K, N, qs[q], q % 2 == 0);
    }
    int8_matmul(1, 1, 1, dnnl_u8, false);
    int8_matmul(7, 33, 61, dnnl_u8, false);
    int8_matmul(40, 70, 256, dnnl_s8, false);
    int8_matmul(3, 100, 129, dnnl_s8, true);
    compressed_matmul(1, 64, 256, 128, dnnl_s4, false, dnnl_f32, false);
    compressed_matmul(1, 70, 256, 64, dnnl_u4, true, dnnl_f32, false);
    compressed_matmul(3, 33, 96, 32, dnnl_s8, true, dnnl_f32, false);
    compressed_matmul(37, 50, 256, 128, dnnl_u4, true, dnnl_f32, false);
    compressed_matmul(2, 48, 128, 32, dnnl_s4, false, dnnl_bf16, false);
    compressed_matmul(20, 48, 128, 32, dnnl_u4, true, dnnl_bf16, false);

    /* Constant weights: with the cache on, packed once and kept. */
    OK(dnnl_graph_set_constant_tensor_cache_capacity(dnnl_cpu, 64));
    size_t before = pt_const_cache_entries();
    int8_matmul(9, 40, 64, dnnl_u8, true);
    compressed_matmul(19, 64, 256, 128, dnnl_u4, true, dnnl_f32, true);
    float_case cc = {.b1 = 1, .b2a = 1, .b2b = 1, .M = 30, .N = 40, .K = 50, .dt = dnnl_f32};
    float_matmul(&cc);
    /* The compiled partitions (and their cache entries) may outlive the run
     * in the compiled-partition cache, so only growth is checked. */
    CHECK(pt_const_cache_entries() >= before + 2);
    for (int how = NAME_NEITHER; how <= NAME_TENSOR_ID; ++how) {
        size_t n0 = pt_const_cache_entries();
        constant_weight_names(how, false);
        CHECK(pt_const_cache_entries() > n0); /* the weights were cached */
        n0 = pt_const_cache_entries();
        constant_weight_names(how, true); /* Convolution weights through the same cache */
        CHECK(pt_const_cache_entries() > n0);
    }
    OK(dnnl_graph_set_constant_tensor_cache_capacity(dnnl_cpu, 0));
    CHECK_EQ_INT(pt_const_cache_entries(), 0);

    dnnl_stream_destroy(strm);
    dnnl_engine_destroy(eng);
    return pt_test_summary("test_int_matmul_engine");
}
