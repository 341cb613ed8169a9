/* Bandwidth of the fast memory-bound single-op kernels (src/kernels/mem/):
 * each op on a 64 MiB source tensor ([rows, 4096], f32 and bf16), run
 * through the public API as a one-op graph, timed as the median of repeated
 * executions, with GB/s counted on the bytes read and written once each.
 * Two yardsticks: the stream figure of bench_peak (<exe dir>/peak.txt, read
 * bandwidth) and a 64 MiB copy (read + write, the traffic shape of the
 * kernels) timed in alternation with each case, so that both medians see the
 * same load: on a shared VM bandwidth moves from second to second, and that
 * ratio is the one to trust.  Each case also runs its
 * reference kernel (the fast kernel switched off on the same compiled
 * partition) for the speed-up.  Options: --seconds=S per measurement
 * (default 0.5), --mib=N source size (default 64), --filter=TEXT, --no-ref. */
#include <math.h>
#include <omp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "compile/compiled.h"
#include "oneapi/dnnl/dnnl_graph.h"

typedef dnnl_graph_logical_tensor_t lt_t;

static void die(const char *what, dnnl_status_t st) {
    fprintf(stderr, "bench_membound: %s failed (status %d)\n", what, (int)st);
    exit(1);
}

#define TRY(expr)                                 \
    do {                                          \
        dnnl_status_t st_ = (expr);               \
        if (st_ != dnnl_success) die(#expr, st_); \
    } while (0)

static dnnl_engine_t g_eng;
static dnnl_stream_t g_strm;
static double g_seconds = 0.5;

/* Median time (ms) of fn(ctx) repeated for about g_seconds (at least 3
 * runs, after one warm-up run). */
static double time_ms(void (*fn)(void *), void *ctx, double seconds) {
    double t[256];
    int n = 0;
    fn(ctx);
    const double start = bench_now_s();
    while (n < 256 && (n < 3 || bench_now_s() - start < seconds)) {
        const double t0 = bench_now_s();
        fn(ctx);
        t[n++] = (bench_now_s() - t0) * 1e3;
    }
    return bench_median(t, n);
}

/* Medians (ms) of fn(ctx) and of the copy, run in alternation for about
 * g_seconds (at least 3 pairs, after one warm-up of each). */
static void (*g_copy_fn)(void *);
static void *g_copy_ctx;
static double time_pair_ms(void (*fn)(void *), void *ctx, double *copy_ms) {
    double t[256], c[256];
    int n = 0;
    fn(ctx);
    g_copy_fn(g_copy_ctx);
    const double start = bench_now_s();
    while (n < 256 && (n < 3 || bench_now_s() - start < g_seconds)) {
        double t0 = bench_now_s();
        g_copy_fn(g_copy_ctx);
        c[n] = (bench_now_s() - t0) * 1e3;
        t0 = bench_now_s();
        fn(ctx);
        t[n++] = (bench_now_s() - t0) * 1e3;
    }
    *copy_ms = bench_median(c, n);
    return bench_median(t, n);
}

/* ---- the stream copy ---- */

typedef struct {
    const float *src;
    float *dst;
    size_t n;
} copy_ctx;

static void run_copy(void *p) {
    const copy_ctx *c = p;
#pragma omp parallel
    {
        const int t = omp_get_thread_num(), nt = omp_get_num_threads();
        const size_t b = c->n * (size_t)t / (size_t)nt, e = c->n * (size_t)(t + 1) / (size_t)nt;
        memcpy(c->dst + b, c->src + b, (e - b) * sizeof(float));
    }
}

/* ---- one-op graphs ---- */

typedef enum { K_SOFTMAX, K_LAYERNORM, K_RMSNORM, K_RELU, K_GELU, K_SIGMOID, K_ADD, K_ADD_ROW, K_MUL_SCALAR,
               K_TYPECAST } case_kind;

typedef struct {
    const char *name;
    case_kind kind;
    dnnl_data_type_t dt, out_dt;
} bench_case;

typedef struct {
    dnnl_graph_compiled_partition_t cp;
    dnnl_graph_tensor_t tin[4], tout[2];
    size_t nin, nout;
} exec_ctx;

static void run_exec(void *p) {
    exec_ctx *e = p;
    TRY(dnnl_graph_compiled_partition_execute(e->cp, g_strm, e->nin, (const_dnnl_graph_tensor_t *)e->tin, e->nout,
                                              (const_dnnl_graph_tensor_t *)e->tout));
    TRY(dnnl_stream_wait(g_strm));
}

static void fill(void *buf, dnnl_data_type_t dt, size_t n) {
    uint32_t s = 12345u;
    for (size_t i = 0; i < n; ++i) {
        s = s * 1664525u + 1013904223u;
        const float v = (float)(s >> 8) / 8388608.f - 1.f;
        if (dt == dnnl_f32) {
            ((float *)buf)[i] = v;
        } else { /* bf16: the upper half of the f32 bits */
            uint32_t u;
            memcpy(&u, &v, 4);
            ((uint16_t *)buf)[i] = (uint16_t)(u >> 16);
        }
    }
}

static size_t dt_bytes(dnnl_data_type_t dt) { return dt == dnnl_f32 ? 4 : 2; }

typedef struct {
    double fast_ms, copy_ms, ref_ms, bytes;
    const char *kernel;
} case_result;

static case_result run_case(const bench_case *bc, size_t src_bytes, bool with_ref) {
    const int64_t cols = 4096, rows = (int64_t)(src_bytes / dt_bytes(bc->dt) / (size_t)cols);
    dnnl_dims_t d2 = {rows, cols}, row1 = {cols}, one = {1};
    lt_t lt[5];
    int nin = 1, nlt = 2;
    TRY(dnnl_graph_logical_tensor_init_with_dims(&lt[0], 1, bc->dt, 2, d2, dnnl_graph_layout_type_strided,
                                                 dnnl_graph_tensor_property_undef));
    TRY(dnnl_graph_logical_tensor_init_with_dims(&lt[1], 2, bc->out_dt, 2, d2, dnnl_graph_layout_type_strided,
                                                 dnnl_graph_tensor_property_undef));
    dnnl_graph_op_kind_t kind = dnnl_graph_op_softmax;
    switch (bc->kind) {
        case K_SOFTMAX: kind = dnnl_graph_op_softmax; break;
        case K_LAYERNORM: kind = dnnl_graph_op_layer_norm, nin = 3; break;
        case K_RMSNORM: kind = dnnl_graph_op_rms_norm, nin = 2; break;
        case K_RELU: kind = dnnl_graph_op_relu; break;
        case K_GELU: kind = dnnl_graph_op_gelu; break;
        case K_SIGMOID: kind = dnnl_graph_op_sigmoid; break;
        case K_ADD: kind = dnnl_graph_op_add, nin = 2; break;
        case K_ADD_ROW: kind = dnnl_graph_op_add, nin = 2; break;
        case K_MUL_SCALAR: kind = dnnl_graph_op_multiply, nin = 2; break;
        case K_TYPECAST: kind = dnnl_graph_op_type_cast; break;
    }
    /* Extra inputs: ids 3.. (gamma / beta per row; second operand). */
    for (int i = 1; i < nin; ++i) {
        const bool full = bc->kind == K_ADD;
        const int nd = full ? 2 : 1;
        const int64_t *dims = full ? d2 : (bc->kind == K_MUL_SCALAR ? one : row1);
        const dnnl_data_type_t dt = (bc->kind == K_LAYERNORM || bc->kind == K_RMSNORM) ? dnnl_f32 : bc->dt;
        TRY(dnnl_graph_logical_tensor_init_with_dims(&lt[nlt], (size_t)nlt + 1, dt, nd, dims,
                                                     dnnl_graph_layout_type_strided, dnnl_graph_tensor_property_undef));
        ++nlt;
    }
    dnnl_graph_graph_t g;
    TRY(dnnl_graph_graph_create(&g, dnnl_cpu));
    dnnl_graph_op_t op;
    TRY(dnnl_graph_op_create(&op, 1, kind, bc->name));
    TRY(dnnl_graph_op_add_input(op, &lt[0]));
    for (int i = 1; i < nin; ++i) TRY(dnnl_graph_op_add_input(op, &lt[1 + i]));
    TRY(dnnl_graph_op_add_output(op, &lt[1]));
    if (bc->kind == K_SOFTMAX) {
        const int64_t axis = -1;
        TRY(dnnl_graph_op_set_attr_s64(op, dnnl_graph_op_attr_axis, &axis, 1));
    }
    if (bc->kind == K_LAYERNORM) {
        uint8_t no = 0;
        TRY(dnnl_graph_op_set_attr_bool(op, dnnl_graph_op_attr_keep_stats, &no, 1));
    }
    TRY(dnnl_graph_add_op(g, op));
    TRY(dnnl_graph_op_destroy(op));
    TRY(dnnl_graph_graph_finalize(g));
    TRY(dnnl_graph_graph_filter(g, dnnl_graph_partition_policy_fusion));
    size_t np = 0;
    TRY(dnnl_graph_graph_get_partition_num(g, &np));
    if (np != 1) die("one partition", dnnl_invalid_graph);
    dnnl_graph_partition_t part;
    TRY(dnnl_graph_graph_get_partitions(g, 1, &part));
    exec_ctx e = {.nin = (size_t)nin, .nout = 1};
    const lt_t *cin[4] = {&lt[0], &lt[2], &lt[3], NULL}, *cout[1] = {&lt[1]};
    lt_t ports[4];
    TRY(dnnl_graph_partition_get_input_ports(part, e.nin, ports));
    const lt_t *ordered[4];
    for (size_t i = 0; i < e.nin; ++i)
        for (int k = 0; k < nin; ++k)
            if (cin[k]->id == ports[i].id) ordered[i] = cin[k];
    TRY(dnnl_graph_compiled_partition_create(&e.cp, part));
    TRY(dnnl_graph_partition_compile(part, e.cp, e.nin, ordered, 1, cout, g_eng));
    void *bufs[4];
    case_result r = {.bytes = 0, .kernel = e.cp->c->has_fused && e.cp->c->fused.kernel_name ? e.cp->c->fused.kernel_name : "reference"};
    for (size_t i = 0; i < e.nin; ++i) {
        size_t bytes = 0;
        TRY(dnnl_graph_logical_tensor_get_mem_size(ordered[i], &bytes));
        bufs[i] = malloc(bytes);
        if (!bufs[i]) die("malloc", dnnl_out_of_memory);
        fill(bufs[i], ordered[i]->data_type, bytes / dt_bytes(ordered[i]->data_type));
        TRY(dnnl_graph_tensor_create(&e.tin[i], ordered[i], g_eng, bufs[i]));
        r.bytes += (double)bytes;
    }
    size_t obytes = 0;
    TRY(dnnl_graph_logical_tensor_get_mem_size(&lt[1], &obytes));
    void *obuf = malloc(obytes);
    if (!obuf) die("malloc", dnnl_out_of_memory);
    memset(obuf, 0, obytes);
    TRY(dnnl_graph_tensor_create(&e.tout[0], &lt[1], g_eng, obuf));
    r.bytes += (double)obytes;
    r.fast_ms = time_pair_ms(run_exec, &e, &r.copy_ms);
    r.ref_ms = NAN;
    if (with_ref) {
        const bool fused = e.cp->c->has_fused;
        e.cp->c->has_fused = false; /* the reference kernel on the same plan */
        r.ref_ms = time_ms(run_exec, &e, 0.0);
        e.cp->c->has_fused = fused;
    }
    for (size_t i = 0; i < e.nin; ++i) {
        dnnl_graph_tensor_destroy(e.tin[i]);
        free(bufs[i]);
    }
    dnnl_graph_tensor_destroy(e.tout[0]);
    free(obuf);
    dnnl_graph_compiled_partition_destroy(e.cp);
    dnnl_graph_partition_destroy(part);
    dnnl_graph_graph_destroy(g);
    return r;
}

int main(int argc, char **argv) {
    size_t mib = 64;
    const char *filter = NULL;
    bool with_ref = true;
    for (int i = 1; i < argc; ++i) {
        if (!strncmp(argv[i], "--seconds=", 10)) g_seconds = atof(argv[i] + 10);
        else if (!strncmp(argv[i], "--mib=", 6)) mib = (size_t)atol(argv[i] + 6);
        else if (!strncmp(argv[i], "--filter=", 9)) filter = argv[i] + 9;
        else if (!strcmp(argv[i], "--no-ref")) with_ref = false;
        else {
            fprintf(stderr, "usage: bench_membound [--seconds=S] [--mib=N] [--filter=TEXT] [--no-ref]\n");
            return 2;
        }
    }
    const size_t src_bytes = mib << 20;
    TRY(dnnl_engine_create(&g_eng, dnnl_cpu, 0));
    TRY(dnnl_stream_create(&g_strm, g_eng, dnnl_stream_default_flags));

    char peak_path[4096];
    bench_executable_dir(peak_path, sizeof peak_path - 16);
    strcat(peak_path, "/peak.txt");
    machine_peak peak = {0};
    const bool have_peak = bench_peak_read(peak_path, &peak) == 0 && peak.stream_gbs > 0;

    copy_ctx cc = {.n = src_bytes / 4};
    float *a = malloc(src_bytes), *b = malloc(src_bytes);
    if (!a || !b) die("malloc", dnnl_out_of_memory);
    fill(a, dnnl_f32, cc.n);
    memset(b, 0, src_bytes);
    cc.src = a, cc.dst = b;
    g_copy_fn = run_copy;
    g_copy_ctx = &cc;
    const double copy_gbs_start = 2.0 * (double)src_bytes / (time_ms(run_copy, &cc, g_seconds) * 1e6);

    printf("bench_membound: %zu MiB sources [rows, 4096], %d threads\n", mib, omp_get_max_threads());
    printf("stream copy at the start: %.1f GB/s (read + write)", copy_gbs_start);
    if (have_peak) printf("; peak.txt stream: %.1f GB/s", peak.stream_gbs);
    printf("\nGB/s: bytes read + written by the case; copy: the 64 MiB copy timed in alternation with it\n");
    printf("%-20s %-11s %8s %7s %7s %6s %6s %9s %8s\n", "case", "kernel", "ms", "GB/s", "copy", "%copy", "%peak",
           "ref ms", "speedup");
    static const bench_case cases[] = {
        {"softmax_f32", K_SOFTMAX, dnnl_f32, dnnl_f32},       {"softmax_bf16", K_SOFTMAX, dnnl_bf16, dnnl_bf16},
        {"layernorm_f32", K_LAYERNORM, dnnl_f32, dnnl_f32},   {"layernorm_bf16", K_LAYERNORM, dnnl_bf16, dnnl_bf16},
        {"rmsnorm_f32", K_RMSNORM, dnnl_f32, dnnl_f32},       {"rmsnorm_bf16", K_RMSNORM, dnnl_bf16, dnnl_bf16},
        {"relu_f32", K_RELU, dnnl_f32, dnnl_f32},             {"relu_bf16", K_RELU, dnnl_bf16, dnnl_bf16},
        {"gelu_erf_f32", K_GELU, dnnl_f32, dnnl_f32},         {"gelu_erf_bf16", K_GELU, dnnl_bf16, dnnl_bf16},
        {"sigmoid_f32", K_SIGMOID, dnnl_f32, dnnl_f32},       {"add_f32", K_ADD, dnnl_f32, dnnl_f32},
        {"add_bf16", K_ADD, dnnl_bf16, dnnl_bf16},            {"add_row_bcast_f32", K_ADD_ROW, dnnl_f32, dnnl_f32},
        {"mul_scalar_f32", K_MUL_SCALAR, dnnl_f32, dnnl_f32}, {"typecast_f32_bf16", K_TYPECAST, dnnl_f32, dnnl_bf16},
        {"typecast_bf16_f32", K_TYPECAST, dnnl_bf16, dnnl_f32},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        if (filter && !strstr(cases[i].name, filter)) continue;
        const case_result r = run_case(&cases[i], src_bytes, with_ref);
        const double gbs = r.bytes / (r.fast_ms * 1e6), copy_gbs = 2.0 * (double)src_bytes / (r.copy_ms * 1e6);
        printf("%-20s %-11s %8.2f %7.1f %7.1f %5.0f%% ", cases[i].name, r.kernel, r.fast_ms, gbs, copy_gbs,
               100.0 * gbs / copy_gbs);
        if (have_peak) printf("%5.0f%% ", 100.0 * gbs / peak.stream_gbs);
        else printf("%6s ", "-");
        if (with_ref) printf("%9.1f %7.1fx\n", r.ref_ms, r.ref_ms / r.fast_ms);
        else printf("%9s %8s\n", "-", "-");
        fflush(stdout);
    }
    free(a);
    free(b);
    dnnl_stream_destroy(g_strm);
    dnnl_engine_destroy(g_eng);
    return 0;
}
