/* SDPA forward benchmark (not a test: run by hand; docs/bench.md).
 *
 *  1. Single-head attention with a long sequence (default S = 16384, D = 64,
 *     f32): one fused partition, timed in math mode strict (F32
 *     microkernels) and "any" (BF16 microkernels).  The kernel's scratchpad
 *     and the process peak RSS (getrusage) are printed: the S × S score
 *     matrix (1 GiB here) is never materialised.
 *  2. A smaller multi-head shape (default N = 1, H = 8, S = 1024, D = 64)
 *     timed fused and op by op (debug policy: every op its own partition on
 *     the kernel a lone op of its kind gets), with the ratio and the largest
 *     difference.
 *  3. Decode: one query row per head over K / V compressed to s8 / u4 with
 *     per-group scales, in GB/s on the K / V bytes and as a fraction of the
 *     stream bandwidth bench_peak measured.
 *
 * Options: --s=N --d=N (shape 1), --small-h=N --small-s=N (shape 2),
 * --iters=N (shape 2), --big-iters=N (shape 1), --skip-exact (shape 1 in
 * math mode any only), --decode-h=N --decode-iters=N --peak=FILE (shape 3; the
 * file defaults to peak.txt beside the executable), --decode-only,
 * --decode-filter=TEXT (only decode cases whose tag, e.g. u4-g32-s16384,
 * contains TEXT). */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "oneapi/dnnl/dnnl_graph.h"
#include "bench_util.h"
#include "compile/compiled.h"

#define NT 8 /* tensors of the graph, id = index + 1 */
#define MAXP 8

typedef dnnl_graph_logical_tensor_t lt_t;

enum { T_Q, T_K, T_S, T_SCALE, T_S2, T_P, T_V, T_O };

static dnnl_engine_t eng;
static dnnl_stream_t strm;

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* CPU time of all threads of the process: on a shared machine the wall
 * time also counts time other processes held the cores. */
static double cpu_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static long peak_rss_kib(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss; /* KiB on Linux */
}

static void die(const char *what, dnnl_status_t st) {
    fprintf(stderr, "bench_sdpa: %s failed (status %d)\n", what, (int)st);
    exit(1);
}

#define TRY(expr) \
    do { \
        dnnl_status_t st_ = (expr); \
        if (st_ != dnnl_success) die(#expr, st_); \
    } while (0)

/* Q·Kᵀ → Multiply(1/√D) → SoftMax → ·V on [N, H, S, D] f32. */
static void describe(lt_t *lt, int64_t n, int64_t h, int64_t s, int64_t d) {
    const int64_t qd[4] = {n, h, s, d}, sd[4] = {n, h, s, s}, one[1] = {1};
    const int64_t *dims[NT] = {qd, qd, sd, one, sd, sd, qd, qd};
    const int nd[NT] = {4, 4, 4, 1, 4, 4, 4, 4};
    for (int t = 0; t < NT; ++t)
        TRY(dnnl_graph_logical_tensor_init_with_dims(&lt[t], (size_t)t + 1, dnnl_f32, nd[t], dims[t],
                                                     dnnl_graph_layout_type_strided,
                                                     dnnl_graph_tensor_property_undef));
}

static void add_op(dnnl_graph_graph_t g, size_t id, dnnl_graph_op_kind_t kind, const lt_t *lt, const int *in,
                   int nin, int out, void (*attrs)(dnnl_graph_op_t)) {
    dnnl_graph_op_t op;
    TRY(dnnl_graph_op_create(&op, id, kind, ""));
    for (int i = 0; i < nin; ++i) TRY(dnnl_graph_op_add_input(op, &lt[in[i]]));
    TRY(dnnl_graph_op_add_output(op, &lt[out]));
    if (attrs) attrs(op);
    TRY(dnnl_graph_add_op(g, op));
    TRY(dnnl_graph_op_destroy(op));
}

static void attr_tb(dnnl_graph_op_t op) {
    uint8_t t = 1;
    TRY(dnnl_graph_op_set_attr_bool(op, dnnl_graph_op_attr_transpose_b, &t, 1));
}

static void attr_softmax(dnnl_graph_op_t op) {
    int64_t axis = -1;
    TRY(dnnl_graph_op_set_attr_s64(op, dnnl_graph_op_attr_axis, &axis, 1));
    TRY(dnnl_graph_op_set_attr_str(op, dnnl_graph_op_attr_mode, "inf_as_zero", strlen("inf_as_zero") + 1));
}

typedef struct {
    double best_ms, mean_ms; /* wall time */
    double cpu_ms;           /* CPU time (all threads) of the best run */
    size_t scratch; /* largest partition scratchpad */
    int nparts, nfused;
} result;

/* Builds, partitions (policy), compiles and runs the graph `iters` times
 * (after one warm-up run); bufs[t] are the tensors' buffers (intermediates
 * allocated here when a partition boundary exposes them). */
static result run(int64_t n, int64_t h, int64_t s, int64_t d, dnnl_graph_partition_policy_t policy,
                  dnnl_fpmath_mode_t mode, int iters, void **bufs) {
    result r;
    memset(&r, 0, sizeof r);
    lt_t lt[NT];
    describe(lt, n, h, s, d);
    dnnl_graph_graph_t g;
    TRY(dnnl_graph_graph_create_with_fpmath_mode(&g, dnnl_cpu, mode));
    add_op(g, 1, dnnl_graph_op_matmul, lt, (int[]){T_Q, T_K}, 2, T_S, attr_tb);
    add_op(g, 2, dnnl_graph_op_multiply, lt, (int[]){T_S, T_SCALE}, 2, T_S2, NULL);
    add_op(g, 3, dnnl_graph_op_softmax, lt, (int[]){T_S2}, 1, T_P, attr_softmax);
    add_op(g, 4, dnnl_graph_op_matmul, lt, (int[]){T_P, T_V}, 2, T_O, NULL);
    TRY(dnnl_graph_graph_finalize(g));
    TRY(dnnl_graph_graph_filter(g, policy));
    size_t np = 0;
    TRY(dnnl_graph_graph_get_partition_num(g, &np));
    if (np < 1 || np > MAXP) die("partition count", dnnl_runtime_error);
    dnnl_graph_partition_t parts[MAXP];
    TRY(dnnl_graph_graph_get_partitions(g, np, parts));
    r.nparts = (int)np;

    dnnl_graph_compiled_partition_t cps[MAXP];
    dnnl_graph_tensor_t tin[MAXP][NT], tout[MAXP][NT], tscr[MAXP];
    size_t nin[MAXP], nout[MAXP];
    void *scratch[MAXP];
    bool owned[NT] = {false};
    for (size_t p = 0; p < np; ++p) {
        lt_t ip[NT], op[NT];
        TRY(dnnl_graph_partition_get_input_ports_num(parts[p], &nin[p]));
        TRY(dnnl_graph_partition_get_output_ports_num(parts[p], &nout[p]));
        TRY(dnnl_graph_partition_get_input_ports(parts[p], nin[p], ip));
        TRY(dnnl_graph_partition_get_output_ports(parts[p], nout[p], op));
        const lt_t *cin[NT], *cout[NT];
        for (size_t i = 0; i < nin[p]; ++i) cin[i] = &lt[ip[i].id - 1];
        for (size_t i = 0; i < nout[p]; ++i) cout[i] = &lt[op[i].id - 1];
        TRY(dnnl_graph_compiled_partition_create(&cps[p], parts[p]));
        TRY(dnnl_graph_partition_compile(parts[p], cps[p], nin[p], cin, nout[p], cout, eng));
        if (cps[p]->c->has_fused) ++r.nfused;
        for (size_t i = 0; i < nout[p]; ++i) {
            int t = (int)op[i].id - 1;
            if (!bufs[t]) {
                size_t bytes = 0;
                TRY(dnnl_graph_logical_tensor_get_mem_size(&lt[t], &bytes));
                bufs[t] = malloc(bytes ? bytes : 1);
                if (!bufs[t]) die("malloc", dnnl_out_of_memory);
                owned[t] = true;
            }
            TRY(dnnl_graph_tensor_create(&tout[p][i], &lt[t], eng, bufs[t]));
        }
        for (size_t i = 0; i < nin[p]; ++i)
            TRY(dnnl_graph_tensor_create(&tin[p][i], &lt[ip[i].id - 1], eng, bufs[ip[i].id - 1]));
        lt_t slt;
        TRY(dnnl_graph_compiled_partition_get_scratchpad_logical_tensor(cps[p], &slt));
        size_t sbytes = slt.ndims == 1 && slt.dims[0] > 0 ? (size_t)slt.dims[0] : 0;
        if (sbytes > r.scratch) r.scratch = sbytes;
        scratch[p] = sbytes ? malloc(sbytes) : NULL;
        tscr[p] = NULL;
        if (sbytes) {
            if (!scratch[p]) die("malloc", dnnl_out_of_memory);
            TRY(dnnl_graph_tensor_create(&tscr[p], &slt, eng, scratch[p]));
        }
    }
    double total = 0;
    r.best_ms = INFINITY;
    for (int it = -1; it < iters; ++it) {
        double t0 = now_ms(), c0 = cpu_ms();
        for (size_t p = 0; p < np; ++p)
            TRY(dnnl_graph_compiled_partition_execute_v2(cps[p], strm, nin[p], (const_dnnl_graph_tensor_t *)tin[p],
                                                         nout[p], (const_dnnl_graph_tensor_t *)tout[p], tscr[p]));
        TRY(dnnl_stream_wait(strm));
        double ms = now_ms() - t0, cms = cpu_ms() - c0;
        if (it < 0) continue; /* warm-up */
        total += ms;
        if (ms < r.best_ms) r.best_ms = ms, r.cpu_ms = cms;
    }
    r.mean_ms = iters > 0 ? total / iters : 0;
    for (size_t p = 0; p < np; ++p) {
        for (size_t i = 0; i < nin[p]; ++i) dnnl_graph_tensor_destroy(tin[p][i]);
        for (size_t i = 0; i < nout[p]; ++i) dnnl_graph_tensor_destroy(tout[p][i]);
        if (tscr[p]) dnnl_graph_tensor_destroy(tscr[p]);
        free(scratch[p]);
        dnnl_graph_compiled_partition_destroy(cps[p]);
        dnnl_graph_partition_destroy(parts[p]);
    }
    dnnl_graph_graph_destroy(g);
    for (int t = 0; t < NT; ++t)
        if (owned[t] && t != T_O) {
            free(bufs[t]);
            bufs[t] = NULL;
        }
    return r;
}

/* Input buffers Q, K, V (random in [-1, 1)), the scale 1/√D and O. */
static void alloc_io(void **bufs, int64_t n, int64_t h, int64_t s, int64_t d) {
    memset(bufs, 0, sizeof(void *) * NT);
    size_t e = (size_t)(n * h * s * d);
    uint32_t x = 42u;
    const int ins[3] = {T_Q, T_K, T_V};
    for (int k = 0; k < 3; ++k) {
        float *b = malloc(e * sizeof(float));
        if (!b) die("malloc", dnnl_out_of_memory);
        for (size_t i = 0; i < e; ++i) {
            x = x * 1664525u + 1013904223u;
            b[i] = (float)((x >> 8) & 0xffffff) / 8388608.f - 1.f;
        }
        bufs[ins[k]] = b;
    }
    float *sc = malloc(sizeof(float));
    if (!sc) die("malloc", dnnl_out_of_memory);
    *sc = 1.f / sqrtf((float)d);
    bufs[T_SCALE] = sc;
    bufs[T_O] = calloc(e, sizeof(float));
    if (!bufs[T_O]) die("malloc", dnnl_out_of_memory);
}

static void free_io(void **bufs) {
    for (int t = 0; t < NT; ++t) {
        free(bufs[t]);
        bufs[t] = NULL;
    }
}

static int64_t arg(int argc, char **argv, const char *name, int64_t dflt) {
    size_t n = strlen(name);
    for (int i = 1; i < argc; ++i)
        if (strncmp(argv[i], name, n) == 0 && argv[i][n] == '=') return strtoll(argv[i] + n + 1, NULL, 10);
    return dflt;
}

static bool flag(int argc, char **argv, const char *name) {
    for (int i = 1; i < argc; ++i)
        if (strcmp(argv[i], name) == 0) return true;
    return false;
}

/* ---- 3. decode over compressed K / V ---------------------------------------------- */

typedef struct {
    int64_t h, s, d, group;
    dnnl_data_type_t qdt; /* s8 / u8 / s4 / u4 (zero points of the same type) */
    bool zps;
} decode_cfg;

enum { DQ_Q, DQ_K, DQ_KS, DQ_KZ, DQ_KF, DQ_S, DQ_SC, DQ_S2, DQ_P, DQ_V, DQ_VS, DQ_VZ, DQ_VF, DQ_O, DQ_N };

static void lt_init(lt_t *lt, size_t id, dnnl_data_type_t dt, int nd, const int64_t *dims) {
    dnnl_dims_t full = {0};
    memcpy(full, dims, sizeof(int64_t) * (size_t)nd);
    TRY(dnnl_graph_logical_tensor_init_with_dims(lt, id, dt, nd, full, dnnl_graph_layout_type_strided,
                                                 dnnl_graph_tensor_property_undef));
}

static void attr_group(dnnl_graph_op_t op, int64_t group) {
    int64_t axis = 3, gsh[4] = {1, 1, 1, group};
    TRY(dnnl_graph_op_set_attr_str(op, dnnl_graph_op_attr_qtype, "per_group", strlen("per_group") + 1));
    TRY(dnnl_graph_op_set_attr_s64(op, dnnl_graph_op_attr_axis, &axis, 1));
    TRY(dnnl_graph_op_set_attr_s64(op, dnnl_graph_op_attr_group_shape, gsh, 4));
}

/* One query row per head against S keys: K and V [1, H, S, D] compressed
 * (per-group scales, zero points) and dequantized by DynamicDequantize, Q
 * f32.  Returns the best time of `iters` runs in ms; *kv_bytes receives the
 * bytes of K, V, their scales and zero points, *scratch the scratchpad. */
static double run_decode(const decode_cfg *c, int iters, double *kv_bytes, size_t *scratch_bytes, int *nparts,
                         double *cpu_best) {
    const int64_t H = c->h, S = c->s, D = c->d, G = D / c->group;
    const int64_t qd[4] = {1, H, 1, D}, kd[4] = {1, H, S, D}, pd[4] = {1, H, 1, S}, gd[4] = {1, H, S, G}, one[1] = {1};
    lt_t lt[DQ_N];
    lt_init(&lt[DQ_Q], DQ_Q + 1, dnnl_f32, 4, qd);
    lt_init(&lt[DQ_K], DQ_K + 1, c->qdt, 4, kd);
    lt_init(&lt[DQ_KS], DQ_KS + 1, dnnl_f32, 4, gd);
    lt_init(&lt[DQ_KZ], DQ_KZ + 1, c->qdt, 4, gd);
    lt_init(&lt[DQ_KF], DQ_KF + 1, dnnl_f32, 4, kd);
    lt_init(&lt[DQ_S], DQ_S + 1, dnnl_f32, 4, pd);
    lt_init(&lt[DQ_SC], DQ_SC + 1, dnnl_f32, 1, one);
    lt_init(&lt[DQ_S2], DQ_S2 + 1, dnnl_f32, 4, pd);
    lt_init(&lt[DQ_P], DQ_P + 1, dnnl_f32, 4, pd);
    lt_init(&lt[DQ_V], DQ_V + 1, c->qdt, 4, kd);
    lt_init(&lt[DQ_VS], DQ_VS + 1, dnnl_f32, 4, gd);
    lt_init(&lt[DQ_VZ], DQ_VZ + 1, c->qdt, 4, gd);
    lt_init(&lt[DQ_VF], DQ_VF + 1, dnnl_f32, 4, kd);
    lt_init(&lt[DQ_O], DQ_O + 1, dnnl_f32, 4, qd);
    dnnl_graph_graph_t g;
    TRY(dnnl_graph_graph_create_with_fpmath_mode(&g, dnnl_cpu, dnnl_fpmath_mode_strict));
    dnnl_graph_op_t op;
    TRY(dnnl_graph_op_create(&op, 1, dnnl_graph_op_dynamic_dequantize, ""));
    TRY(dnnl_graph_op_add_input(op, &lt[DQ_K]));
    TRY(dnnl_graph_op_add_input(op, &lt[DQ_KS]));
    if (c->zps) TRY(dnnl_graph_op_add_input(op, &lt[DQ_KZ]));
    TRY(dnnl_graph_op_add_output(op, &lt[DQ_KF]));
    attr_group(op, c->group);
    TRY(dnnl_graph_add_op(g, op));
    TRY(dnnl_graph_op_destroy(op));
    TRY(dnnl_graph_op_create(&op, 2, dnnl_graph_op_dynamic_dequantize, ""));
    TRY(dnnl_graph_op_add_input(op, &lt[DQ_V]));
    TRY(dnnl_graph_op_add_input(op, &lt[DQ_VS]));
    if (c->zps) TRY(dnnl_graph_op_add_input(op, &lt[DQ_VZ]));
    TRY(dnnl_graph_op_add_output(op, &lt[DQ_VF]));
    attr_group(op, c->group);
    TRY(dnnl_graph_add_op(g, op));
    TRY(dnnl_graph_op_destroy(op));
    add_op(g, 3, dnnl_graph_op_matmul, lt, (int[]){DQ_Q, DQ_KF}, 2, DQ_S, attr_tb);
    add_op(g, 4, dnnl_graph_op_multiply, lt, (int[]){DQ_S, DQ_SC}, 2, DQ_S2, NULL);
    add_op(g, 5, dnnl_graph_op_softmax, lt, (int[]){DQ_S2}, 1, DQ_P, attr_softmax);
    add_op(g, 6, dnnl_graph_op_matmul, lt, (int[]){DQ_P, DQ_VF}, 2, DQ_O, NULL);
    TRY(dnnl_graph_graph_finalize(g));
    TRY(dnnl_graph_graph_filter(g, dnnl_graph_partition_policy_fusion));
    size_t np = 0;
    TRY(dnnl_graph_graph_get_partition_num(g, &np));
    *nparts = (int)np;
    if (np != 1) {
        dnnl_graph_graph_destroy(g);
        return -1;
    }
    dnnl_graph_partition_t part;
    TRY(dnnl_graph_graph_get_partitions(g, 1, &part));
    size_t nin = 0, nout = 0;
    TRY(dnnl_graph_partition_get_input_ports_num(part, &nin));
    TRY(dnnl_graph_partition_get_output_ports_num(part, &nout));
    lt_t ip[DQ_N], opt[1];
    TRY(dnnl_graph_partition_get_input_ports(part, nin, ip));
    TRY(dnnl_graph_partition_get_output_ports(part, 1, opt));
    const lt_t *cin[DQ_N], *cout[1] = {&lt[DQ_O]};
    for (size_t i = 0; i < nin; ++i) cin[i] = &lt[ip[i].id - 1];
    dnnl_graph_compiled_partition_t cp;
    TRY(dnnl_graph_compiled_partition_create(&cp, part));
    TRY(dnnl_graph_partition_compile(part, cp, nin, cin, 1, cout, eng));
    /* Inputs: random bytes for the integers (any pattern is a valid 8 / 4-bit
     * value), small positive scales, the 1/sqrt(D) factor. */
    void *bufs[DQ_N] = {0};
    dnnl_graph_tensor_t tin[DQ_N], tout;
    uint32_t x = 7u;
    *kv_bytes = 0;
    for (size_t i = 0; i < nin; ++i) {
        const int t = (int)ip[i].id - 1;
        size_t bytes = 0;
        TRY(dnnl_graph_logical_tensor_get_mem_size(&lt[t], &bytes));
        bufs[t] = malloc(bytes);
        if (!bufs[t]) die("malloc", dnnl_out_of_memory);
        if (lt[t].data_type == dnnl_f32) {
            float *f = bufs[t];
            for (size_t e = 0; e < bytes / 4; ++e) {
                x = x * 1664525u + 1013904223u;
                f[e] = t == DQ_SC ? 1.f / sqrtf((float)D)
                       : t == DQ_Q ? (float)((x >> 8) & 0xffff) / 32768.f - 1.f
                                   : 0.001f + (float)((x >> 8) & 0xff) / 65536.f;
            }
        } else {
            unsigned char *b = bufs[t];
            for (size_t e = 0; e < bytes; ++e) b[e] = (unsigned char)((x = x * 1664525u + 1013904223u) >> 24);
        }
        if (t != DQ_Q && t != DQ_SC) *kv_bytes += (double)bytes;
        TRY(dnnl_graph_tensor_create(&tin[i], &lt[t], eng, bufs[t]));
    }
    bufs[DQ_O] = malloc((size_t)(H * D) * sizeof(float));
    if (!bufs[DQ_O]) die("malloc", dnnl_out_of_memory);
    TRY(dnnl_graph_tensor_create(&tout, &lt[DQ_O], eng, bufs[DQ_O]));
    lt_t slt;
    TRY(dnnl_graph_compiled_partition_get_scratchpad_logical_tensor(cp, &slt));
    *scratch_bytes = slt.ndims == 1 && slt.dims[0] > 0 ? (size_t)slt.dims[0] : 0;
    void *scr = *scratch_bytes ? malloc(*scratch_bytes) : NULL;
    dnnl_graph_tensor_t tscr = NULL;
    if (scr) TRY(dnnl_graph_tensor_create(&tscr, &slt, eng, scr));
    double best = INFINITY;
    for (int it = -2; it < iters; ++it) {
        double t0 = now_ms(), c0 = cpu_ms();
        TRY(dnnl_graph_compiled_partition_execute_v2(cp, strm, nin, (const_dnnl_graph_tensor_t *)tin, 1,
                                                     (const_dnnl_graph_tensor_t *)&tout, tscr));
        TRY(dnnl_stream_wait(strm));
        double ms = now_ms() - t0;
        if (it >= 0 && ms < best) best = ms, *cpu_best = cpu_ms() - c0;
    }
    for (size_t i = 0; i < nin; ++i) dnnl_graph_tensor_destroy(tin[i]);
    dnnl_graph_tensor_destroy(tout);
    if (tscr) dnnl_graph_tensor_destroy(tscr);
    free(scr);
    for (int t = 0; t < DQ_N; ++t) free(bufs[t]);
    dnnl_graph_compiled_partition_destroy(cp);
    dnnl_graph_partition_destroy(part);
    dnnl_graph_graph_destroy(g);
    return best;
}

int main(int argc, char **argv) {
    const int64_t S = arg(argc, argv, "--s", 16384), D = arg(argc, argv, "--d", 64);
    const int64_t SH = arg(argc, argv, "--small-h", 8), SS = arg(argc, argv, "--small-s", 1024);
    const int iters = (int)arg(argc, argv, "--iters", 3);
    const bool skip_exact = flag(argc, argv, "--skip-exact");
    TRY(dnnl_engine_create(&eng, dnnl_cpu, 0));
    TRY(dnnl_stream_create(&strm, eng, 0));
    if (flag(argc, argv, "--decode-only")) goto decode;
    void *bufs[NT];

    /* 1. Long single-head sequence, fused only. */
    alloc_io(bufs, 1, 1, S, D);
    const double io_mib = 4.0 * (double)(S * D) * sizeof(float) / (1024.0 * 1024.0);
    printf("shape 1: N=1 H=1 S=%lld D=%lld f32 (Q, K, V, O: %.1f MiB; an S x S score matrix would be %.1f MiB)\n",
           (long long)S, (long long)D, io_mib, (double)S * (double)S * 4.0 / (1024.0 * 1024.0));
    printf("  peak RSS before: %.1f MiB\n", peak_rss_kib() / 1024.0);
    const int big_iters = (int)arg(argc, argv, "--big-iters", 1); /* each run takes seconds */
    if (!skip_exact) {
        result r = run(1, 1, S, D, dnnl_graph_partition_policy_fusion, dnnl_fpmath_mode_strict, big_iters, bufs);
        printf("  fused, math mode strict: %d partition(s), %d fused, %.1f ms wall, %.1f ms CPU, scratchpad %zu "
               "bytes (%.1f KiB)\n",
               r.nparts, r.nfused, r.best_ms, r.cpu_ms, r.scratch, r.scratch / 1024.0);
    }
    result r = run(1, 1, S, D, dnnl_graph_partition_policy_fusion, dnnl_fpmath_mode_any, big_iters, bufs);
    printf("  fused, math mode any:    %d partition(s), %d fused, %.1f ms wall, %.1f ms CPU, scratchpad %zu "
           "bytes (%.1f KiB)\n",
           r.nparts, r.nfused, r.best_ms, r.cpu_ms, r.scratch, r.scratch / 1024.0);
    printf("  peak RSS after: %.1f MiB\n", peak_rss_kib() / 1024.0);
    free_io(bufs);

    /* 2. Smaller multi-head shape: fused vs op by op. */
    printf("shape 2: N=1 H=%lld S=%lld D=%lld f32, math mode strict, %d timed runs\n", (long long)SH, (long long)SS,
           (long long)D, iters);
    alloc_io(bufs, 1, SH, SS, D);
    result f = run(1, SH, SS, D, dnnl_graph_partition_policy_fusion, dnnl_fpmath_mode_strict, iters, bufs);
    size_t oe = (size_t)(SH * SS * D);
    float *fused_o = malloc(oe * sizeof(float));
    if (!fused_o) die("malloc", dnnl_out_of_memory);
    memcpy(fused_o, bufs[T_O], oe * sizeof(float));
    result u = run(1, SH, SS, D, dnnl_graph_partition_policy_debug, dnnl_fpmath_mode_strict, iters, bufs);
    double worst = 0;
    for (size_t i = 0; i < oe; ++i) {
        double diff = fabs((double)fused_o[i] - (double)((float *)bufs[T_O])[i]);
        if (diff > worst) worst = diff;
    }
    printf("  fused:    %d partition(s), %d fused, best %.1f ms wall (%.1f ms CPU), mean %.1f ms, scratchpad %zu "
           "bytes\n",
           f.nparts, f.nfused, f.best_ms, f.cpu_ms, f.mean_ms, f.scratch);
    printf("  op by op: %d partition(s), %d fused, best %.1f ms wall (%.1f ms CPU), mean %.1f ms\n", u.nparts,
           u.nfused, u.best_ms, u.cpu_ms, u.mean_ms);
    printf("  speed-up (op by op / fused): %.2fx wall, %.2fx CPU; largest difference %g\n", u.best_ms / f.best_ms,
           u.cpu_ms / f.cpu_ms, worst);
    free(fused_o);
    free_io(bufs);

    /* 3. Decode: one query row per head over compressed K / V. */
decode:;
    char default_peak[4096];
    bench_executable_dir(default_peak, sizeof default_peak - 16);
    strcat(default_peak, "/peak.txt");
    const char *peak_path = default_peak;
    for (int i = 1; i < argc; ++i)
        if (strncmp(argv[i], "--peak=", 7) == 0) peak_path = argv[i] + 7;
    machine_peak peak;
    const double bw = bench_peak_read(peak_path, &peak) == 0 ? peak.stream_gbs : 0.0;
    const int dec_iters = (int)arg(argc, argv, "--decode-iters", 20);
    const int64_t dec_h = arg(argc, argv, "--decode-h", 32);
    const char *dec_filter = NULL;
    for (int i = 1; i < argc; ++i)
        if (strncmp(argv[i], "--decode-filter=", 16) == 0) dec_filter = argv[i] + 16;
    printf("shape 3: decode, 1 query row x %lld heads, D=128, K/V compressed (DynamicDequantize per group), "
           "math mode strict, best of %d runs; stream bandwidth %s%.1f GB/s\n",
           (long long)dec_h, dec_iters, bw > 0 ? "" : "unknown (no ", bw > 0 ? bw : 0.0);
    const int64_t seqs[] = {4096, 16384};
    const dnnl_data_type_t qdts[] = {dnnl_s8, dnnl_u4};
    const int64_t groups[] = {32, 128};
    for (int si = 0; si < 2; ++si)
        for (int qi = 0; qi < 2; ++qi)
            for (int gi = 0; gi < 2; ++gi) {
                decode_cfg c = {dec_h, seqs[si], 128, groups[gi], qdts[qi], gi == 0};
                char tag[32];
                snprintf(tag, sizeof tag, "%s-g%lld-s%lld", qi ? "u4" : "s8", (long long)c.group, (long long)c.s);
                if (dec_filter && !strstr(tag, dec_filter)) continue;
                double bytes = 0, cms = 0;
                size_t scr = 0;
                int np = 0;
                const double ms = run_decode(&c, dec_iters, &bytes, &scr, &np, &cms);
                if (ms < 0) {
                    printf("  S_kv=%lld %s group %lld: %d partitions, not fused\n", (long long)c.s,
                           qi ? "u4" : "s8", (long long)c.group, np);
                    continue;
                }
                const double gbs = bytes / (ms * 1e6);
                printf("  S_kv=%5lld %s group %3lld%s: %.3f ms wall (%.3f ms CPU), K/V %.1f MiB (with scales / zero "
                       "points), %.1f GB/s",
                       (long long)c.s, qi ? "u4" : "s8", (long long)c.group, c.zps ? " zp" : "   ", ms, cms,
                       bytes / 1048576.0, gbs);
                if (bw > 0) printf(" = %.0f %% of stream", 100.0 * gbs / bw);
                printf(", scratchpad %zu bytes\n", scr);
            }
    dnnl_stream_destroy(strm);
    dnnl_engine_destroy(eng);
    return 0;
}
