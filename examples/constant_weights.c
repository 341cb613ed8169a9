/* Constant weights and the constant tensor cache (seed 004).
 *
 * One MatMul partition with a constant weight is compiled once and executed
 * as two "layers" with two different weight buffers, as a framework that
 * integrates single ops does (same op and tensor ids, so both layers share
 * the compiled partition).  With the cache on, each weight is packed into
 * the GEMM engine's panels at its first execution and reused afterwards.
 * The example runs without the cache first (seed option 1: the library
 * packs on every execution, nothing is kept), then each way of naming the
 * cached weights:
 *   - neither: the weight buffer's address (the legacy rule);
 *   - option 3: a key per weight set, dnnl_graph_compiled_partition_execute_with_options;
 *   - option 4: a tensor id per weight, dnnl_graph_tensor_create_with_id;
 * checks every result against a plain loop and prints the time of the
 * first (packing) and of later executions.  Then seed option 2: the weight
 * is given as `any`, the compiled partition reports its packed layout
 * (query_logical_tensor), the user reorders each layer's weight into it
 * once with a Reorder partition and executes on the packed copies, with
 * the cache off (docs/api.md).
 *
 * Build: cc constant_weights.c $(pkg-config --cflags --libs partita) -lm */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "oneapi/dnnl/dnnl_graph.h"

#define M 64
#define K 1024
#define N 1024

#define CHECK(call)                                                                       \
    do {                                                                                  \
        dnnl_status_t st_ = (call);                                                       \
        if (st_ != dnnl_success) {                                                        \
            fprintf(stderr, "%s:%d: %s failed with status %d\n", __FILE__, __LINE__, #call, \
                    (int)st_);                                                            \
            exit(1);                                                                      \
        }                                                                                 \
    } while (0)

enum naming { NO_CACHE, BY_ADDRESS, BY_KEY, BY_TENSOR_ID };
static const char *naming_name[] = {"option 1 (cache off)", "neither (buffer address)", "option 3 (execute key)",
                                    "option 4 (tensor id)"};

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static float value(uint32_t *s) {
    *s = *s * 1664525u + 1013904223u;
    return (float)((*s >> 8) & 0xffff) / 32768.f - 1.f;
}

/* Largest |y - x·w| relative to Σ|x·w| over the output. */
static double error_of(const float *x, const float *w, const float *y) {
    double worst = 0;
    for (int m = 0; m < M; ++m)
        for (int n = 0; n < N; ++n) {
            double acc = 0, mag = 0;
            for (int k = 0; k < K; ++k) acc += (double)x[m * K + k] * w[k * N + n], mag += fabs(x[m * K + k] * w[k * N + n]);
            double e = fabs(acc - y[m * N + n]) / (mag + 1e-30);
            if (e > worst) worst = e;
        }
    return worst;
}

/* Seed option 2: `any` weight, queried packed layout, one Reorder per
 * layer, executions on the packed copies (cache off).  Returns failures. */
static int option2(dnnl_engine_t eng, dnnl_stream_t strm, const dnnl_graph_logical_tensor_t *x,
                   const dnnl_graph_logical_tensor_t *y, const float *xb, float *const *wb, float *yb) {
    CHECK(dnnl_graph_set_constant_tensor_cache_capacity(dnnl_cpu, 0));
    dnnl_dims_t wd = {K, N};
    dnnl_graph_logical_tensor_t w_any, w_user, w_packed;
    CHECK(dnnl_graph_logical_tensor_init_with_dims(&w_any, 1, dnnl_f32, 2, wd, dnnl_graph_layout_type_any,
                                                   dnnl_graph_tensor_property_constant));
    CHECK(dnnl_graph_logical_tensor_init_with_dims(&w_user, 10, dnnl_f32, 2, wd, dnnl_graph_layout_type_strided,
                                                   dnnl_graph_tensor_property_constant));
    dnnl_graph_op_t mm, ro;
    CHECK(dnnl_graph_op_create(&mm, 0, dnnl_graph_op_matmul, "linear"));
    CHECK(dnnl_graph_op_add_input(mm, x));
    CHECK(dnnl_graph_op_add_input(mm, &w_any));
    CHECK(dnnl_graph_op_add_output(mm, y));
    dnnl_graph_partition_t part;
    dnnl_graph_compiled_partition_t cp, cp_reorder = NULL;
    CHECK(dnnl_graph_partition_create_with_op(&part, mm, dnnl_cpu));
    CHECK(dnnl_graph_compiled_partition_create(&cp, part));
    const dnnl_graph_logical_tensor_t *ins[] = {x, &w_any}, *outs[] = {y};
    CHECK(dnnl_graph_partition_compile(part, cp, 2, ins, 1, outs, eng));
    CHECK(dnnl_graph_compiled_partition_query_logical_tensor(cp, 1, &w_packed));
    uint8_t same = 0;
    CHECK(dnnl_graph_logical_tensor_is_equal(&w_user, &w_packed, &same));
    size_t bytes = 0;
    CHECK(dnnl_graph_logical_tensor_get_mem_size(&w_packed, &bytes));
    printf("%-26s weight layout: %s (layout id %zu, %zu bytes)\n", "option 2 (query + reorder)",
           w_packed.layout_type == dnnl_graph_layout_type_opaque ? "opaque, packed" : "plain",
           w_packed.layout_type == dnnl_graph_layout_type_opaque ? w_packed.layout.layout_id : 0, bytes);
    void *packed[2] = {wb[0], wb[1]}; /* plain weights need no reorder */
    dnnl_graph_tensor_t tp[2] = {NULL, NULL}; /* own the packed copies (library-allocated) */
    double reorder_ms = 0;
    if (!same) {
        CHECK(dnnl_graph_op_create(&ro, 1, dnnl_graph_op_reorder, "pack_weight"));
        CHECK(dnnl_graph_op_add_input(ro, &w_user));
        CHECK(dnnl_graph_op_add_output(ro, &w_packed));
        dnnl_graph_partition_t rp;
        CHECK(dnnl_graph_partition_create_with_op(&rp, ro, dnnl_cpu));
        CHECK(dnnl_graph_compiled_partition_create(&cp_reorder, rp));
        const dnnl_graph_logical_tensor_t *rin[] = {&w_user}, *rout[] = {&w_packed};
        CHECK(dnnl_graph_partition_compile(rp, cp_reorder, 1, rin, 1, rout, eng));
        dnnl_graph_partition_destroy(rp);
        dnnl_graph_op_destroy(ro);
        for (int l = 0; l < 2; ++l) {
            dnnl_graph_tensor_t tu;
            CHECK(dnnl_graph_tensor_create(&tu, &w_user, eng, wb[l]));
            CHECK(dnnl_graph_tensor_create(&tp[l], &w_packed, eng, DNNL_MEMORY_ALLOCATE));
            CHECK(dnnl_graph_tensor_get_data_handle(tp[l], &packed[l]));
            const_dnnl_graph_tensor_t a[] = {tu}, b[] = {tp[l]};
            double t0 = now_ms();
            CHECK(dnnl_graph_compiled_partition_execute(cp_reorder, strm, 1, a, 1, b));
            CHECK(dnnl_stream_wait(strm));
            reorder_ms += now_ms() - t0;
            dnnl_graph_tensor_destroy(tu);
        }
    }
    int failures = 0;
    double best[2] = {1e30, 1e30};
    for (int step = 0; step < 8; ++step) {
        int layer = step % 2;
        dnnl_graph_tensor_t tx, tw, ty;
        CHECK(dnnl_graph_tensor_create(&tx, x, eng, (void *)xb));
        CHECK(dnnl_graph_tensor_create(&tw, &w_packed, eng, packed[layer]));
        CHECK(dnnl_graph_tensor_create(&ty, y, eng, yb));
        const_dnnl_graph_tensor_t in_t[] = {tx, tw}, out_t[] = {ty};
        double t0 = now_ms();
        CHECK(dnnl_graph_compiled_partition_execute(cp, strm, 2, in_t, 1, out_t));
        CHECK(dnnl_stream_wait(strm));
        double ms = now_ms() - t0;
        if (ms < best[layer]) best[layer] = ms;
        double err = error_of(xb, wb[layer], yb);
        if (err > 1e-5) {
            printf("  option 2, layer %d, execution %d: relative error %.3g\n", layer, step, err);
            ++failures;
        }
        dnnl_graph_tensor_destroy(tx);
        dnnl_graph_tensor_destroy(tw);
        dnnl_graph_tensor_destroy(ty);
    }
    printf("%-26s reorders %.3f ms (both layers, once); executions: layer 0 %.3f ms, layer 1 %.3f ms\n",
           "option 2 (query + reorder)", reorder_ms, best[0], best[1]);
    for (int l = 0; l < 2; ++l)
        if (tp[l]) dnnl_graph_tensor_destroy(tp[l]);
    if (cp_reorder) dnnl_graph_compiled_partition_destroy(cp_reorder);
    dnnl_graph_compiled_partition_destroy(cp);
    dnnl_graph_partition_destroy(part);
    dnnl_graph_op_destroy(mm);
    return failures;
}

int main(void) {
    dnnl_engine_t eng;
    dnnl_stream_t strm;
    CHECK(dnnl_engine_create(&eng, dnnl_cpu, 0));
    CHECK(dnnl_stream_create(&strm, eng, dnnl_stream_default_flags));

    dnnl_dims_t xd = {M, K}, wd = {K, N}, yd = {M, N};
    dnnl_graph_logical_tensor_t x, w, y;
    CHECK(dnnl_graph_logical_tensor_init_with_dims(&x, 0, dnnl_f32, 2, xd, dnnl_graph_layout_type_strided,
                                                   dnnl_graph_tensor_property_variable));
    CHECK(dnnl_graph_logical_tensor_init_with_dims(&w, 1, dnnl_f32, 2, wd, dnnl_graph_layout_type_strided,
                                                   dnnl_graph_tensor_property_constant));
    CHECK(dnnl_graph_logical_tensor_init_with_dims(&y, 2, dnnl_f32, 2, yd, dnnl_graph_layout_type_strided,
                                                   dnnl_graph_tensor_property_variable));
    dnnl_graph_graph_t g;
    dnnl_graph_op_t mm;
    CHECK(dnnl_graph_graph_create(&g, dnnl_cpu));
    CHECK(dnnl_graph_op_create(&mm, 0, dnnl_graph_op_matmul, "linear"));
    CHECK(dnnl_graph_op_add_input(mm, &x));
    CHECK(dnnl_graph_op_add_input(mm, &w));
    CHECK(dnnl_graph_op_add_output(mm, &y));
    CHECK(dnnl_graph_add_op(g, mm));
    CHECK(dnnl_graph_graph_finalize(g));
    CHECK(dnnl_graph_graph_filter(g, dnnl_graph_partition_policy_fusion));
    dnnl_graph_partition_t part;
    CHECK(dnnl_graph_graph_get_partitions(g, 1, &part));
    dnnl_graph_compiled_partition_t cp;
    CHECK(dnnl_graph_compiled_partition_create(&cp, part));
    const dnnl_graph_logical_tensor_t *ins[] = {&x, &w}, *outs[] = {&y};
    CHECK(dnnl_graph_partition_compile(part, cp, 2, ins, 1, outs, eng));

    float *xb = malloc(sizeof(float) * M * K), *yb = malloc(sizeof(float) * M * N);
    float *wb[2] = {malloc(sizeof(float) * K * N), malloc(sizeof(float) * K * N)};
    if (!xb || !yb || !wb[0] || !wb[1]) return 1;
    uint32_t seed = 7;
    for (int i = 0; i < M * K; ++i) xb[i] = value(&seed);
    for (int l = 0; l < 2; ++l)
        for (int i = 0; i < K * N; ++i) wb[l][i] = value(&seed);

    int failures = 0;
    for (int how = NO_CACHE; how <= BY_TENSOR_ID; ++how) {
        /* The cache is off by default, as in oneDNN: then 256 MiB. */
        CHECK(dnnl_graph_set_constant_tensor_cache_capacity(dnnl_cpu, how == NO_CACHE ? 0 : 256));
        double first[2] = {0, 0}, later[2] = {1e30, 1e30};
        for (int step = 0; step < 8; ++step) {
            int layer = step % 2; /* the two layers alternate */
            dnnl_graph_tensor_t tx, tw, ty;
            CHECK(dnnl_graph_tensor_create(&tx, &x, eng, xb));
            if (how == BY_TENSOR_ID) CHECK(dnnl_graph_tensor_create_with_id(&tw, &w, eng, wb[layer], 1000 + (size_t)layer));
            else CHECK(dnnl_graph_tensor_create(&tw, &w, eng, wb[layer]));
            CHECK(dnnl_graph_tensor_create(&ty, &y, eng, yb));
            const_dnnl_graph_tensor_t in_t[] = {tx, tw}, out_t[] = {ty};
            double t0 = now_ms();
            if (how == BY_KEY) {
                dnnl_graph_execute_options_t opt = {.key = 42 + (size_t)layer};
                CHECK(dnnl_graph_compiled_partition_execute_with_options(cp, strm, 2, in_t, 1, out_t, &opt));
            } else {
                CHECK(dnnl_graph_compiled_partition_execute(cp, strm, 2, in_t, 1, out_t));
            }
            CHECK(dnnl_stream_wait(strm));
            double ms = now_ms() - t0;
            if (step < 2) first[layer] = ms;
            else if (ms < later[layer]) later[layer] = ms;
            double err = error_of(xb, wb[layer], yb);
            if (err > 1e-5) {
                printf("  layer %d, execution %d: relative error %.3g\n", layer, step, err);
                ++failures;
            }
            dnnl_graph_tensor_destroy(tx);
            dnnl_graph_tensor_destroy(tw);
            dnnl_graph_tensor_destroy(ty);
        }
        printf("%-26s layer 0: first %.3f ms, later %.3f ms; layer 1: first %.3f ms, later %.3f ms\n",
               naming_name[how], first[0], later[0], first[1], later[1]);
    }
    failures += option2(eng, strm, &x, &y, xb, wb, yb);
    printf("%s\n", failures ? "FAILED: some results were wrong" : "all results right");

    free(xb), free(yb), free(wb[0]), free(wb[1]);
    dnnl_graph_compiled_partition_destroy(cp);
    dnnl_graph_partition_destroy(part);
    dnnl_graph_op_destroy(mm);
    dnnl_graph_graph_destroy(g);
    dnnl_stream_destroy(strm);
    dnnl_engine_destroy(eng);
    return failures ? 1 : 0;
}
