/* Getting started: one fused MatMul + bias + ReLU through the C API.
 *
 * dst = ReLU(src · wei + bias), with the bias as MatMul's third input.  The
 * example walks the whole Graph API flow once:
 *   1. describe tensors (logical tensors) and ops, add the ops to a graph;
 *   2. finalize the graph and split it into partitions (fusion policy): the
 *      two ops form one partition;
 *   3. compile the partition; the output was declared with an unknown shape
 *      and "any" layout, so its shape is queried from the compiled partition;
 *   4. bind buffers to tensors, execute on a stream, wait;
 *   5. compare with a plain loop (f32 accumulated in double; tolerance 1e-5
 *      relative to Σ|src·wei|).
 * It prints the partitions (ops of each), the queried output shape and the
 * largest error; it exits with 1 if a result is wrong.
 *
 * Build: cc getting_started.c $(pkg-config --cflags --libs partita) -lm */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "oneapi/dnnl/dnnl_graph.h"

#define M 32
#define K 64
#define N 48

#define CHECK(call)                                                                         \
    do {                                                                                    \
        dnnl_status_t st_ = (call);                                                         \
        if (st_ != dnnl_success) {                                                          \
            fprintf(stderr, "%s:%d: %s failed with status %d\n", __FILE__, __LINE__, #call, \
                    (int)st_);                                                              \
            exit(1);                                                                        \
        }                                                                                   \
    } while (0)

/* Op ids used below, and their names for printing. */
enum { OP_MATMUL, OP_RELU };
static const char *op_name[] = {"MatMul", "ReLU"};

/* Logical tensor ids. */
enum { T_SRC, T_WEI, T_BIAS, T_MM, T_DST };

static float value(uint32_t *s) {
    *s = *s * 1664525u + 1013904223u;
    return (float)((*s >> 8) & 0xffff) / 32768.f - 1.f;
}

static void lt_2d(dnnl_graph_logical_tensor_t *lt, size_t id, int64_t d0, int64_t d1) {
    dnnl_dims_t dims = {d0, d1};
    CHECK(dnnl_graph_logical_tensor_init_with_dims(lt, id, dnnl_f32, 2, dims, dnnl_graph_layout_type_strided,
                                                   dnnl_graph_tensor_property_variable));
}

int main(void) {
    /* ---- 1. the graph ---------------------------------------------------- */
    dnnl_graph_logical_tensor_t src, wei, bias, mm, dst;
    lt_2d(&src, T_SRC, M, K);
    lt_2d(&wei, T_WEI, K, N);
    dnnl_dims_t bias_dims = {N};
    CHECK(dnnl_graph_logical_tensor_init_with_dims(&bias, T_BIAS, dnnl_f32, 1, bias_dims,
                                                   dnnl_graph_layout_type_strided,
                                                   dnnl_graph_tensor_property_variable));
    lt_2d(&mm, T_MM, M, N);
    /* The partition's output: rank and shape left for the library to infer. */
    CHECK(dnnl_graph_logical_tensor_init(&dst, T_DST, dnnl_f32, DNNL_GRAPH_UNKNOWN_NDIMS,
                                         dnnl_graph_layout_type_any, dnnl_graph_tensor_property_variable));

    dnnl_graph_op_t matmul, relu;
    CHECK(dnnl_graph_op_create(&matmul, OP_MATMUL, dnnl_graph_op_matmul, "fc"));
    CHECK(dnnl_graph_op_add_input(matmul, &src));
    CHECK(dnnl_graph_op_add_input(matmul, &wei));
    CHECK(dnnl_graph_op_add_input(matmul, &bias)); /* optional third input: the bias */
    CHECK(dnnl_graph_op_add_output(matmul, &mm));
    CHECK(dnnl_graph_op_create(&relu, OP_RELU, dnnl_graph_op_relu, "relu"));
    CHECK(dnnl_graph_op_add_input(relu, &mm));
    CHECK(dnnl_graph_op_add_output(relu, &dst));

    dnnl_graph_graph_t graph;
    CHECK(dnnl_graph_graph_create(&graph, dnnl_cpu));
    CHECK(dnnl_graph_add_op(graph, matmul));
    CHECK(dnnl_graph_add_op(graph, relu));
    CHECK(dnnl_graph_graph_finalize(graph));

    /* ---- 2. partitions ----------------------------------------------------- */
    CHECK(dnnl_graph_graph_filter(graph, dnnl_graph_partition_policy_fusion));
    size_t nparts = 0;
    CHECK(dnnl_graph_graph_get_partition_num(graph, &nparts));
    printf("%zu partition(s)\n", nparts);
    if (nparts != 1) {
        printf("FAILED: MatMul + bias + ReLU should form one partition\n");
        return 1;
    }
    dnnl_graph_partition_t part;
    CHECK(dnnl_graph_graph_get_partitions(graph, 1, &part));
    uint8_t supported = 0;
    size_t nops = 0, ids[2];
    CHECK(dnnl_graph_partition_is_supported(part, &supported));
    CHECK(dnnl_graph_partition_get_op_num(part, &nops));
    if (!supported || nops != 2) {
        printf("FAILED: partition supported %d with %zu ops, expected a supported partition of 2\n",
               (int)supported, nops);
        return 1;
    }
    CHECK(dnnl_graph_partition_get_ops(part, nops, ids));
    printf("  partition 0: %zu ops:", nops);
    for (size_t i = 0; i < nops; ++i) printf(" %s (id %zu)", ids[i] < 2 ? op_name[ids[i]] : "?", ids[i]);
    printf("\n");

    /* ---- 3. compile --------------------------------------------------------- */
    dnnl_engine_t eng;
    dnnl_stream_t strm;
    CHECK(dnnl_engine_create(&eng, dnnl_cpu, 0));
    CHECK(dnnl_stream_create(&strm, eng, dnnl_stream_default_flags));
    dnnl_graph_compiled_partition_t cp;
    CHECK(dnnl_graph_compiled_partition_create(&cp, part));
    const dnnl_graph_logical_tensor_t *ins[] = {&src, &wei, &bias}, *outs[] = {&dst};
    CHECK(dnnl_graph_partition_compile(part, cp, 3, ins, 1, outs, eng));
    /* The compiled partition knows the output's shape, layout and size. */
    dnnl_graph_logical_tensor_t dst_q;
    size_t dst_bytes = 0;
    CHECK(dnnl_graph_compiled_partition_query_logical_tensor(cp, T_DST, &dst_q));
    CHECK(dnnl_graph_logical_tensor_get_mem_size(&dst_q, &dst_bytes));
    printf("  output: %d-D [%lld, %lld], %zu bytes\n", dst_q.ndims, (long long)dst_q.dims[0],
           (long long)dst_q.dims[1], dst_bytes);
    if (dst_q.ndims != 2 || dst_q.dims[0] != M || dst_q.dims[1] != N || dst_bytes != sizeof(float) * M * N) {
        printf("FAILED: the queried output should be [%d, %d] f32\n", M, N);
        return 1;
    }

    /* ---- 4. execute ----------------------------------------------------------- */
    float *src_b = malloc(sizeof(float) * M * K), *wei_b = malloc(sizeof(float) * K * N);
    float *bias_b = malloc(sizeof(float) * N), *dst_b = malloc(dst_bytes);
    if (!src_b || !wei_b || !bias_b || !dst_b) return 1;
    uint32_t seed = 1;
    for (int i = 0; i < M * K; ++i) src_b[i] = value(&seed);
    for (int i = 0; i < K * N; ++i) wei_b[i] = value(&seed);
    for (int i = 0; i < N; ++i) bias_b[i] = value(&seed);

    dnnl_graph_tensor_t t_src, t_wei, t_bias, t_dst;
    CHECK(dnnl_graph_tensor_create(&t_src, &src, eng, src_b));
    CHECK(dnnl_graph_tensor_create(&t_wei, &wei, eng, wei_b));
    CHECK(dnnl_graph_tensor_create(&t_bias, &bias, eng, bias_b));
    CHECK(dnnl_graph_tensor_create(&t_dst, &dst_q, eng, dst_b)); /* the queried, concrete tensor */
    const_dnnl_graph_tensor_t in_t[] = {t_src, t_wei, t_bias}, out_t[] = {t_dst};
    CHECK(dnnl_graph_compiled_partition_execute(cp, strm, 3, in_t, 1, out_t));
    CHECK(dnnl_stream_wait(strm));

    /* ---- 5. check against a plain loop ---------------------------------------- */
    double worst = 0;
    for (int m = 0; m < M; ++m)
        for (int n = 0; n < N; ++n) {
            double acc = bias_b[n], mag = fabs(bias_b[n]);
            for (int k = 0; k < K; ++k) {
                acc += (double)src_b[m * K + k] * wei_b[k * N + n];
                mag += fabs((double)src_b[m * K + k] * wei_b[k * N + n]);
            }
            double want = acc > 0 ? acc : 0;
            double err = fabs(want - dst_b[m * N + n]) / (mag + 1e-30);
            if (err > worst) worst = err;
        }
    int ok = worst <= 1e-5;
    printf("max relative error %.3g (tolerance 1e-5): %s\n", worst, ok ? "all results right" : "FAILED");

    dnnl_graph_tensor_destroy(t_src);
    dnnl_graph_tensor_destroy(t_wei);
    dnnl_graph_tensor_destroy(t_bias);
    dnnl_graph_tensor_destroy(t_dst);
    free(src_b), free(wei_b), free(bias_b), free(dst_b);
    dnnl_graph_compiled_partition_destroy(cp);
    dnnl_graph_partition_destroy(part);
    dnnl_graph_op_destroy(matmul);
    dnnl_graph_op_destroy(relu);
    dnnl_graph_graph_destroy(graph);
    dnnl_stream_destroy(strm);
    dnnl_engine_destroy(eng);
    return ok ? 0 : 1;
}
