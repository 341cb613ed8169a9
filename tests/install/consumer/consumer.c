/* Partita install check, C consumer: built against an installed Partita
 * (pkg-config or CMake's find_package), it runs a one-op graph through the
 * public C API - ReLU on a 2x6 f32 tensor - and checks the numbers.
 * Prints one line and exits 0 on success. */
#include <stdio.h>

#include "oneapi/dnnl/dnnl_graph.h"

#define TRY(call) \
    do { \
        dnnl_status_t st_ = (call); \
        if (st_ != dnnl_success) { \
            fprintf(stderr, "consumer.c:%d: %s failed with status %d\n", \
                    __LINE__, #call, (int)st_); \
            return 1; \
        } \
    } while (0)

int main(void) {
    enum { N = 12 };
    const dnnl_dims_t shape = {2, 6};
    dnnl_graph_logical_tensor_t src, dst;
    dnnl_engine_t engine = NULL;
    dnnl_stream_t stream = NULL;
    dnnl_graph_graph_t graph = NULL;
    dnnl_graph_op_t relu = NULL;
    dnnl_graph_partition_t partition = NULL;
    dnnl_graph_compiled_partition_t compiled = NULL;
    dnnl_graph_tensor_t src_t = NULL, dst_t = NULL;
    size_t num_partitions = 0;
    uint8_t supported = 0;
    float in[N], out[N];
    int i, bad = 0;

    for (i = 0; i < N; ++i) {
        in[i] = (float)(i - 5) * 0.5f;
        out[i] = -100.0f;
    }

    TRY(dnnl_engine_create(&engine, dnnl_cpu, 0));
    TRY(dnnl_stream_create(&stream, engine, dnnl_stream_default_flags));
    TRY(dnnl_graph_logical_tensor_init_with_dims(&src, 0, dnnl_f32, 2, shape,
            dnnl_graph_layout_type_strided, dnnl_graph_tensor_property_undef));
    TRY(dnnl_graph_logical_tensor_init_with_dims(&dst, 1, dnnl_f32, 2, shape,
            dnnl_graph_layout_type_strided, dnnl_graph_tensor_property_undef));

    TRY(dnnl_graph_graph_create(&graph, dnnl_cpu));
    TRY(dnnl_graph_op_create(&relu, 0, dnnl_graph_op_relu, "relu"));
    TRY(dnnl_graph_op_add_input(relu, &src));
    TRY(dnnl_graph_op_add_output(relu, &dst));
    TRY(dnnl_graph_add_op(graph, relu));
    TRY(dnnl_graph_graph_finalize(graph));
    TRY(dnnl_graph_graph_filter(graph, dnnl_graph_partition_policy_fusion));
    TRY(dnnl_graph_graph_get_partition_num(graph, &num_partitions));
    if (num_partitions != 1) {
        fprintf(stderr, "expected 1 partition, got %zu\n", num_partitions);
        return 1;
    }
    TRY(dnnl_graph_graph_get_partitions(graph, 1, &partition));
    TRY(dnnl_graph_partition_is_supported(partition, &supported));
    if (!supported) {
        fprintf(stderr, "the ReLU partition is not supported\n");
        return 1;
    }

    {
        const dnnl_graph_logical_tensor_t *ins[] = {&src};
        const dnnl_graph_logical_tensor_t *outs[] = {&dst};
        TRY(dnnl_graph_compiled_partition_create(&compiled, partition));
        TRY(dnnl_graph_partition_compile(
                partition, compiled, 1, ins, 1, outs, engine));
    }
    TRY(dnnl_graph_tensor_create(&src_t, &src, engine, in));
    TRY(dnnl_graph_tensor_create(&dst_t, &dst, engine, out));
    {
        const_dnnl_graph_tensor_t ins[] = {src_t};
        const_dnnl_graph_tensor_t outs[] = {dst_t};
        TRY(dnnl_graph_compiled_partition_execute(
                compiled, stream, 1, ins, 1, outs));
    }
    TRY(dnnl_stream_wait(stream));

    for (i = 0; i < N; ++i) {
        const float want = in[i] > 0.0f ? in[i] : 0.0f;
        if (out[i] != want) {
            fprintf(stderr, "out[%d] = %g, expected %g\n", i, out[i], want);
            bad = 1;
        }
    }

    TRY(dnnl_graph_tensor_destroy(src_t));
    TRY(dnnl_graph_tensor_destroy(dst_t));
    TRY(dnnl_graph_compiled_partition_destroy(compiled));
    TRY(dnnl_graph_partition_destroy(partition));
    TRY(dnnl_graph_op_destroy(relu));
    TRY(dnnl_graph_graph_destroy(graph));
    TRY(dnnl_stream_destroy(stream));
    TRY(dnnl_engine_destroy(engine));
    if (bad) return 1;

    printf("partita C consumer: ReLU on 2x6 ok (library %d.%d.%d)\n",
            dnnl_version()->major, dnnl_version()->minor,
            dnnl_version()->patch);
    return 0;
}
