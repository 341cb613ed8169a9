/* Times MatMul partitions built through Partita's graph API (loaded with
 * dlopen, driven by case_runner like bench_vs_onednn) for f32, bf16, int8
 * (quantized pattern) and int4 weights (grouped DynamicDequantize) at a set
 * of shapes, and prints GFLOP/s, the percentage of the peaks bench_peak
 * measured (GB/s of the weights and % of stream bandwidth for M = 1), and for
 * f32 the ratio to OpenBLAS cblas_sgemm on the same data and threads. */
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench_fill.h"
#include "bench_util.h"
#include "case_runner.h"
#include "graph_api.h"
#include "matmul_case.h"

#ifdef BENCH_HAVE_OPENBLAS
#include <cblas.h>
#endif

#ifndef BENCH_PARTITA_LIBRARY
#define BENCH_PARTITA_LIBRARY "libpartita.so"
#endif

typedef struct shape {
    int64_t m, k, n;
} shape;

static const shape default_shapes[] = {
    {1024, 1024, 1024}, {2048, 2048, 2048}, {384, 1024, 4096},
    {128, 4096, 4096}, {1, 4096, 4096},
};

#define MAX_SHAPES 32

static void usage(void) {
    printf("usage: bench_matmul [options]\n"
           "  --kinds=f32,bf16,int8,int4   data-type cases to run (all)\n"
           "  --shapes=MxKxN,...           shapes (1024x1024x1024,2048x2048x2048,"
           "384x1024x4096,128x4096x4096,1x4096x4096)\n"
           "  --runs=N                     timed runs per case (5)\n"
           "  --budget=SEC                 fewer timed runs past SEC per case (6)\n"
           "  --threads=N                  threads of Partita and OpenBLAS (2)\n"
           "  --peak=FILE                  bench_peak's results (<exe dir>/peak.txt)\n"
           "  --partita-lib=PATH           libpartita.so to load\n"
           "  --write-cases=DIR            write the cases as JSON graph cases "
           "and exit\n"
           "  --mlp=MxKxIxO,...            gated-MLP shapes, fused vs its three "
           "MatMuls alone (128x4096x14336x4096)\n"
           "  --mlp-only                   only the gated-MLP lines\n");
}

static int parse_shapes(const char *text, shape *shapes) {
    int count = 0;
    const char *p = text;
    while (*p && count < MAX_SHAPES) {
        long long m, k, n;
        int used = 0;
        if (sscanf(p, "%lldx%lldx%lld%n", &m, &k, &n, &used) != 3) return -1;
        shapes[count].m = m;
        shapes[count].k = k;
        shapes[count].n = n;
        ++count;
        p += used;
        if (*p == ',') ++p;
    }
    return count;
}

#ifdef BENCH_HAVE_OPENBLAS
/* Median seconds of cblas_sgemm on the inputs the graph case gets (tensor
 * ids 0 and 1 of matmul_case.h), or -1 if the buffers cannot be allocated. */
static double time_openblas(const shape *s, const run_options *o, int threads) {
    size_t a_count = (size_t)(s->m * s->k), b_count = (size_t)(s->k * s->n);
    float *a = malloc(a_count * sizeof *a), *b = malloc(b_count * sizeof *b);
    float *c = malloc((size_t)(s->m * s->n) * sizeof *c);
    if (!a || !b || !c) {
        free(a);
        free(b);
        free(c);
        return -1;
    }
    fill_buffer(a, a_count, dnnl_f32, 0, FILL_DATA, 0);
    fill_buffer(b, b_count, dnnl_f32, 1, FILL_DATA, 0);
    openblas_set_num_threads(threads);
    double first = 0;
    for (int w = 0; w < o->warmup_runs; ++w) {
        double start = bench_now_s();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)s->m, (int)s->n,
                (int)s->k, 1.f, a, (int)s->k, b, (int)s->n, 0.f, c, (int)s->n);
        first = bench_now_s() - start;
    }
    int runs = o->timed_runs;
    if (first * runs > o->time_budget_s) runs = (int)(o->time_budget_s / first);
    if (runs < 1) runs = 1;
    double times[64];
    if (runs > 64) runs = 64;
    for (int r = 0; r < runs; ++r) {
        double start = bench_now_s();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)s->m, (int)s->n,
                (int)s->k, 1.f, a, (int)s->k, b, (int)s->n, 0.f, c, (int)s->n);
        times[r] = bench_now_s() - start;
    }
    free(a);
    free(b);
    free(c);
    return bench_median(times, runs);
}
#endif

/* Marks every occurrence of tensor `id` constant (the weights). */
static void make_constant(bench_case *c, size_t id) {
    for (size_t o = 0; o < c->n_ops; ++o) {
        bench_op *op = &c->ops[o];
        for (size_t i = 0; i < op->n_inputs; ++i)
            if (op->inputs[i].id == id) op->inputs[i].property = dnnl_graph_tensor_property_constant;
    }
}

/* Constant weights (seed 004): the first execution packs the weight into
 * the constant tensor cache, later ones reuse it; a variable weight is
 * packed on every execution. */
static void constant_weight_case(const graph_api *api, dnnl_engine_t engine, dnnl_stream_t stream,
        const run_options *run, int64_t m, int64_t k, int64_t n) {
    bench_case var, cst;
    build_matmul_case(&var, MATMUL_F32, m, k, n);
    build_matmul_case(&cst, MATMUL_F32, m, k, n);
    make_constant(&cst, 1);
    api->set_constant_tensor_cache_capacity(dnnl_cpu, 1024);
    case_result rv, rc, rf;
    run_case(api, engine, stream, &var, run, &rv);
    /* The first execution of the constant case, alone. */
    double first = 0;
    case_session *s = case_prepare(api, engine, stream, &cst, &rf);
    int ok = s && case_execute(s, &first, &rf);
    if (s) case_finish(s, &cst, 0, &rf);
    api->set_constant_tensor_cache_capacity(dnnl_cpu, 1024); /* empties it */
    run_case(api, engine, stream, &cst, run, &rc);
    if (ok && rv.ok && rc.ok)
        printf("constant weights f32 %lldx%lldx%lld: first execution %.3f ms (packs into the cache), later "
               "%.3f ms, variable weights %.3f ms per execution: packing costs %.3f ms once, saves %.3f ms "
               "per call (%.2fx)\n",
                (long long)m, (long long)k, (long long)n, first * 1e3, rc.median_s * 1e3, rv.median_s * 1e3,
                (first - rc.median_s) * 1e3, (rv.median_s - rc.median_s) * 1e3, rv.median_s / rc.median_s);
    else
        printf("constant weights: a run failed\n");
    api->set_constant_tensor_cache_capacity(dnnl_cpu, 0);
    case_result_free(&rv), case_result_free(&rc), case_result_free(&rf);
    bench_case_free(&var), bench_case_free(&cst);
}

/* The same f32 MatMul under math mode strict and bf16: speed ratio and the
 * largest difference of the bf16 result, relative to the largest output. */
static void fpmath_case(const graph_api *api, dnnl_engine_t engine, dnnl_stream_t stream,
        const run_options *run, int64_t m, int64_t k, int64_t n) {
    bench_case strict, bf16;
    build_matmul_case(&strict, MATMUL_F32, m, k, n);
    build_matmul_case(&bf16, MATMUL_F32, m, k, n);
    bf16.fpmath_mode = dnnl_fpmath_mode_bf16;
    run_options keep = *run;
    keep.keep_outputs = 1;
    case_result rs, rb;
    run_case(api, engine, stream, &strict, &keep, &rs);
    run_case(api, engine, stream, &bf16, &keep, &rb);
    if (rs.ok && rb.ok) {
        size_t nan = 0;
        double diff = compare_outputs(&rb, &rs, &nan);
        printf("fpmath f32 %lldx%lldx%lld: strict %.3f ms, bf16 %.3f ms (%.2fx faster); bf16 result differs by "
               "%.2e of the largest output%s\n",
                (long long)m, (long long)k, (long long)n, rs.median_s * 1e3, rb.median_s * 1e3,
                rs.median_s / rb.median_s, diff, nan ? " (NaN mismatches!)" : "");
    } else {
        printf("fpmath: a run failed\n");
    }
    case_result_free(&rs), case_result_free(&rb);
    bench_case_free(&strict), bench_case_free(&bf16);
}

/* A gated MLP, out = (swish(src·Wg) ⊙ (src·Wu))·Wd, all tensors of one type. */
static void build_gated_mlp_case(bench_case *c, dnnl_data_type_t dt, int64_t m, int64_t k, int64_t i, int64_t o) {
    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "gated_mlp_%s", dt == dnnl_bf16 ? "bf16" : "f32");
    c->fpmath_mode = dnnl_fpmath_mode_strict;
    const dnnl_graph_tensor_property_t var = dnnl_graph_tensor_property_variable;
    int64_t sd[2] = {m, k}, wd[2] = {k, i}, hd[2] = {m, i}, dd[2] = {i, o}, od[2] = {m, o};
    bench_tensor src = bench_tensor_dense(0, dt, 2, sd, var), wg = bench_tensor_dense(1, dt, 2, wd, var);
    bench_tensor wu = bench_tensor_dense(2, dt, 2, wd, var), wdn = bench_tensor_dense(3, dt, 2, dd, var);
    bench_tensor gate = bench_tensor_dense(10, dt, 2, hd, var), sig = bench_tensor_dense(11, dt, 2, hd, var);
    bench_tensor sw = bench_tensor_dense(12, dt, 2, hd, var), up = bench_tensor_dense(13, dt, 2, hd, var);
    bench_tensor hid = bench_tensor_dense(14, dt, 2, hd, var), out = bench_tensor_dense(15, dt, 2, od, var);
    const struct {
        dnnl_graph_op_kind_t kind;
        const bench_tensor *a, *b, *y;
    } ops[] = {{dnnl_graph_op_matmul, &src, &wg, &gate}, {dnnl_graph_op_sigmoid, &gate, NULL, &sig},
               {dnnl_graph_op_multiply, &gate, &sig, &sw}, {dnnl_graph_op_matmul, &src, &wu, &up},
               {dnnl_graph_op_multiply, &sw, &up, &hid},   {dnnl_graph_op_matmul, &hid, &wdn, &out}};
    for (size_t j = 0; j < sizeof ops / sizeof ops[0]; ++j) {
        bench_op *op = bench_case_add_op(c, j, ops[j].kind, "op");
        bench_op_add_input(op, ops[j].a);
        if (ops[j].b) bench_op_add_input(op, ops[j].b);
        bench_op_add_output(op, ops[j].y);
    }
}

/* One element-wise op alone on [m, i] tensors of type dt (Sigmoid: b 0). */
static double time_eltwise(const graph_api *api, dnnl_engine_t engine, dnnl_stream_t stream, const run_options *run,
        dnnl_graph_op_kind_t kind, dnnl_data_type_t dt, int64_t m, int64_t i, int *ok) {
    bench_case c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "eltwise");
    c.fpmath_mode = dnnl_fpmath_mode_strict;
    int64_t d[2] = {m, i};
    bench_tensor a = bench_tensor_dense(0, dt, 2, d, dnnl_graph_tensor_property_variable);
    bench_tensor b = bench_tensor_dense(1, dt, 2, d, dnnl_graph_tensor_property_variable);
    bench_tensor y = bench_tensor_dense(2, dt, 2, d, dnnl_graph_tensor_property_variable);
    bench_op *op = bench_case_add_op(&c, 0, kind, "op");
    bench_op_add_input(op, &a);
    if (kind != dnnl_graph_op_sigmoid) bench_op_add_input(op, &b);
    bench_op_add_output(op, &y);
    case_result r;
    *ok = *ok && run_case(api, engine, stream, &c, run, &r);
    double t = r.median_s;
    case_result_free(&r);
    bench_case_free(&c);
    return t;
}

/* The fused gated MLP against its ops run one by one, each a partition of
 * its own (the three MatMuls on the engine, then with the Sigmoid and the
 * two Multiply ops added). */
static void gated_mlp_case(const graph_api *api, dnnl_engine_t engine, dnnl_stream_t stream,
        const run_options *run, const int64_t *mkio, matmul_kind kind, const machine_peak *peak, int have_peak) {
    const int64_t m = mkio[0], k = mkio[1], i = mkio[2], o = mkio[3];
    bench_case fused;
    build_gated_mlp_case(&fused, kind == MATMUL_BF16 ? dnnl_bf16 : dnnl_f32, m, k, i, o);
    case_result rf;
    run_case(api, engine, stream, &fused, run, &rf);
    const int64_t shapes[3][3] = {{m, k, i}, {m, k, i}, {m, i, o}};
    double alone = 0;
    int ok = rf.ok;
    for (int j = 0; j < 3 && ok; ++j) {
        bench_case c;
        build_matmul_case(&c, kind, shapes[j][0], shapes[j][1], shapes[j][2]);
        case_result r;
        ok = run_case(api, engine, stream, &c, run, &r);
        alone += r.median_s;
        case_result_free(&r);
        bench_case_free(&c);
    }
    const dnnl_data_type_t dt = kind == MATMUL_BF16 ? dnnl_bf16 : dnnl_f32;
    double eltwise = time_eltwise(api, engine, stream, run, dnnl_graph_op_sigmoid, dt, m, i, &ok)
            + 2 * time_eltwise(api, engine, stream, run, dnnl_graph_op_multiply, dt, m, i, &ok);
    if (ok) {
        double bytes = 2 * matmul_weight_bytes(kind, k, i) + matmul_weight_bytes(kind, i, o);
        double flops = 2.0 * (double)m * (2.0 * (double)k * (double)i + (double)i * (double)o);
        double gbs = bytes / rf.median_s / 1e9;
        char of_stream[32] = "";
        if (have_peak && peak->stream_gbs > 0) snprintf(of_stream, sizeof of_stream, ", %.0f%% of stream", 100 * gbs / peak->stream_gbs);
        printf("gated MLP %s %lldx%lldx%lldx%lld (MxKxIxO): fused %zu(%zu) parts %.3f ms (%.1f GFLOP/s, %.1f GB/s of "
               "weights%s); its three MatMuls alone %.3f ms (%.2fx), op by op with the element-wise ops %.3f ms "
               "(%.2fx)\n",
                matmul_kind_name(kind), (long long)m, (long long)k, (long long)i, (long long)o, rf.n_partitions,
                rf.n_fused, rf.median_s * 1e3, flops / rf.median_s / 1e9, gbs, of_stream, alone * 1e3,
                alone / rf.median_s, (alone + eltwise) * 1e3, (alone + eltwise) / rf.median_s);
    } else {
        printf("gated MLP %s: a run failed (%s)\n", matmul_kind_name(kind), rf.ok ? "a MatMul" : rf.stage);
    }
    case_result_free(&rf);
    bench_case_free(&fused);
}

int main(int argc, char **argv) {
    shape shapes[MAX_SHAPES];
    int n_shapes = (int)(sizeof default_shapes / sizeof default_shapes[0]);
    memcpy(shapes, default_shapes, sizeof default_shapes);
    int kind_enabled[MATMUL_KIND_COUNT] = {1, 1, 1, 1};
    run_options run = {1, 5, 6.0, 0};
    int threads = 2;
    char peak_path[4096];
    bench_executable_dir(peak_path, sizeof peak_path - 16);
    strcat(peak_path, "/peak.txt");
    const char *partita_library = BENCH_PARTITA_LIBRARY;
    const char *write_dir = NULL;
    int64_t mlp_shapes[MAX_SHAPES][4] = {{128, 4096, 14336, 4096}};
    int n_mlp = 1, mlp_only = 0;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if (!strncmp(a, "--mlp=", 6)) {
            n_mlp = 0;
            for (const char *p = a + 6; *p && n_mlp < MAX_SHAPES;) {
                long long v[4];
                int used = 0;
                if (sscanf(p, "%lldx%lldx%lldx%lld%n", &v[0], &v[1], &v[2], &v[3], &used) != 4) {
                    usage();
                    return 2;
                }
                for (int j = 0; j < 4; ++j) mlp_shapes[n_mlp][j] = v[j];
                ++n_mlp;
                p += used;
                if (*p == ',') ++p;
            }
            continue;
        }
        if (!strcmp(a, "--mlp-only")) {
            mlp_only = 1;
            continue;
        }
        if (!strncmp(a, "--kinds=", 8)) {
            for (int k = 0; k < MATMUL_KIND_COUNT; ++k)
                kind_enabled[k] = strstr(a + 8, matmul_kind_name((matmul_kind)k)) != NULL;
        } else if (!strncmp(a, "--shapes=", 9)) {
            n_shapes = parse_shapes(a + 9, shapes);
            if (n_shapes <= 0) {
                usage();
                return 2;
            }
        } else if (!strncmp(a, "--runs=", 7)) run.timed_runs = atoi(a + 7);
        else if (!strncmp(a, "--budget=", 9)) run.time_budget_s = atof(a + 9);
        else if (!strncmp(a, "--threads=", 10)) threads = atoi(a + 10);
        else if (!strncmp(a, "--peak=", 7)) snprintf(peak_path, sizeof peak_path, "%s", a + 7);
        else if (!strncmp(a, "--partita-lib=", 14)) partita_library = a + 14;
        else if (!strncmp(a, "--write-cases=", 14)) write_dir = a + 14;
        else {
            usage();
            return strcmp(a, "--help") ? 2 : 0;
        }
    }

    if (write_dir) {
        mkdir(write_dir, 0777);
        for (int s = 0; s < n_shapes; ++s)
            for (int k = 0; k < MATMUL_KIND_COUNT; ++k) {
                if (!kind_enabled[k]) continue;
                bench_case c;
                build_matmul_case(&c, (matmul_kind)k, shapes[s].m, shapes[s].k,
                        shapes[s].n);
                char path[8192];
                snprintf(path, sizeof path, "%s/%s.json", write_dir, c.name);
                if (bench_case_write_json(&c, path)) {
                    fprintf(stderr, "bench_matmul: cannot write %s\n", path);
                    return 1;
                }
                printf("wrote %s\n", path);
                bench_case_free(&c);
            }
        return 0;
    }

    char threads_text[16];
    snprintf(threads_text, sizeof threads_text, "%d", threads);
    setenv("OMP_NUM_THREADS", threads_text, 1);
    graph_api api;
    char error[512];
    if (graph_api_load(&api, "partita", partita_library, error, sizeof error)) {
        fprintf(stderr, "bench_matmul: cannot load %s: %s\n", partita_library, error);
        return 1;
    }
    dnnl_engine_t engine;
    dnnl_stream_t stream;
    if (api.engine_create(&engine, dnnl_cpu, 0)
            || api.stream_create(&stream, engine, dnnl_stream_default_flags)) {
        fprintf(stderr, "bench_matmul: no CPU engine\n");
        return 1;
    }
    machine_peak peak;
    int have_peak = bench_peak_read(peak_path, &peak) == 0;
    printf("bench_matmul: %d threads; warm-up 1, median of up to %d runs (fewer "
           "past %.0f s per case)\n",
            threads, run.timed_runs, run.time_budget_s);
    if (have_peak)
        printf("peaks from %s (%d threads): f32 %.1f GFLOP/s, bf16 %.1f GFLOP/s, "
               "int8 %.1f GOP/s, stream %.1f GB/s\n",
                peak_path, threads, threads > 1 ? peak.f32_gflops_2t : peak.f32_gflops_1t,
                threads > 1 ? peak.bf16_gflops_2t : peak.bf16_gflops_1t,
                threads > 1 ? peak.int8_gops_2t : peak.int8_gops_1t, peak.stream_gbs);
    else
        printf("no peak file %s (run bench_peak first): %% columns left out\n",
                peak_path);
#ifdef BENCH_HAVE_OPENBLAS
    printf("OpenBLAS: cblas_sgemm, %d threads; blas ratio = OpenBLAS time / "
           "Partita time (> 1: Partita faster)\n", threads);
#else
    printf("OpenBLAS not available at build time: no f32 ratio (make bench "
           "installs libopenblas-dev)\n");
#endif
    printf("%% peak: of the f32 FMA peak for f32 and int4 (f32 compute), of "
           "the best bf16 / int8 instruction bench_peak found for bf16 / int8 (AMX "
           "tiles where granted, else vdpbf16ps / vpdpbusd); M = 1 rows: GB/s of the "
           "weights' bytes and %% of stream bandwidth\n\n");
    printf("%-5s %-16s %6s %11s %9s %9s %11s %9s %8s\n", "type", "MxKxN", "parts",
            "Partita ms", "GFLOP/s", "% peak", "OpenBLAS ms", "GFLOP/s", "ratio");

    for (int s = 0; s < n_shapes && !mlp_only; ++s) {
        const shape *sh = &shapes[s];
        double flops = 2.0 * (double)sh->m * (double)sh->k * (double)sh->n;
        for (int k = 0; k < MATMUL_KIND_COUNT; ++k) {
            if (!kind_enabled[k]) continue;
            matmul_kind kind = (matmul_kind)k;
            char shape_text[64];
            snprintf(shape_text, sizeof shape_text, "%lldx%lldx%lld",
                    (long long)sh->m, (long long)sh->k, (long long)sh->n);
            bench_case c;
            build_matmul_case(&c, kind, sh->m, sh->k, sh->n);
            case_result r;
            run_case(&api, engine, stream, &c, &run, &r);
            bench_case_free(&c);
            printf("%-5s %-16s ", matmul_kind_name(kind), shape_text);
            if (!r.ok) {
                printf("%6s failed at %s: %s (%s)\n", "-", r.stage,
                        graph_api_status_name(r.status), r.message);
                continue;
            }
            char parts[16];
            snprintf(parts, sizeof parts, "%zu(%zu)", r.n_partitions, r.n_fused);
            double gflops = flops / r.median_s / 1e9;
            printf("%6s %11.3f %9.1f ", parts, r.median_s * 1e3, gflops);
            char percent[32] = "";
            if (have_peak) {
                if (sh->m == 1) {
                    double gbs = matmul_weight_bytes(kind, sh->k, sh->n) / r.median_s / 1e9;
                    snprintf(percent, sizeof percent, "%.0f%%bw", 100 * gbs / peak.stream_gbs);
                } else {
                    double p = kind == MATMUL_BF16
                            ? (threads > 1 ? peak.bf16_gflops_2t : peak.bf16_gflops_1t)
                            : kind == MATMUL_INT8
                            ? (threads > 1 ? peak.int8_gops_2t : peak.int8_gops_1t)
                            : (threads > 1 ? peak.f32_gflops_2t : peak.f32_gflops_1t);
                    if (p > 0) snprintf(percent, sizeof percent, "%.1f%%", 100 * gflops / p);
                }
            }
            printf("%9s ", percent);
#ifdef BENCH_HAVE_OPENBLAS
            if (kind == MATMUL_F32) {
                double blas = time_openblas(sh, &run, threads);
                if (blas > 0)
                    printf("%11.3f %9.1f %8.3f", blas * 1e3, flops / blas / 1e9,
                            blas / r.median_s);
            }
#endif
            printf("\n");
            fflush(stdout);
            case_result_free(&r);
        }
    }
    printf("\n");
    if (!mlp_only) {
        constant_weight_case(&api, engine, stream, &run, 128, 1024, 1024);
        fpmath_case(&api, engine, stream, &run, 1024, 1024, 1024);
    }
    for (int s = 0; s < n_mlp; ++s)
        for (int k = 0; k < 2; ++k) /* f32 and bf16 */
            if (kind_enabled[k]) gated_mlp_case(&api, engine, stream, &run, mlp_shapes[s], (matmul_kind)k, &peak, have_peak);
    api.stream_destroy(stream);
    api.engine_destroy(engine);
    return 0;
}
