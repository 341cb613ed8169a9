/* Gated MLP (the feed-forward block of llama-style models), f32.
 *
 *   gate = src · W_gate           (MatMul)
 *   act  = gate · Sigmoid(gate)   (SiLU written as Sigmoid + Multiply)
 *   up   = src · W_up             (MatMul, same src)
 *   hid  = act · up               (Multiply)
 *   dst  = hid · W_down           (MatMul)
 * with src [M, K] = [16, 128], W_gate and W_up [K, N] = [128, 352] and
 * W_down [N, K].  The six ops form one partition (the gated_mlp_v1
 * pattern, run by the fused gated-MLP kernel, which never writes the
 * [M, N] intermediates to memory; ONEDNN_VERBOSE=2 prints the pattern row).
 * The example prints the partitions and the largest error against a plain
 * loop in double, relative to Σ|hid·W_down| (f32 tolerance 1e-5), and exits
 * with 1 on a wrong result or a partition count other than one.
 *
 * Build: cc gated_mlp.c $(pkg-config --cflags --libs partita) -lm */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "oneapi/dnnl/dnnl_graph.h"

#define M 16  /* tokens */
#define K 128 /* model width */
#define N 352 /* intermediate width */

#define CHECK(call)                                                                         \
    do {                                                                                    \
        dnnl_status_t st_ = (call);                                                         \
        if (st_ != dnnl_success) {                                                          \
            fprintf(stderr, "%s:%d: %s failed with status %d\n", __FILE__, __LINE__, #call, \
                    (int)st_);                                                              \
            exit(1);                                                                        \
        }                                                                                   \
    } while (0)

enum { OP_GATE, OP_SIGMOID, OP_SILU, OP_UP, OP_COMBINE, OP_DOWN, NOPS };
static const char *op_name[NOPS] = {"MatMul(gate)", "Sigmoid", "Multiply(SiLU)", "MatMul(up)", "Multiply",
                                    "MatMul(down)"};

/* Tensor ids: the graph's inputs, then the values inside the partition. */
enum { T_SRC, T_WGATE, T_WUP, T_WDOWN, NIN, T_GATE = NIN, T_SIG, T_ACT, T_UP, T_HID, T_DST, NT };

static float value(uint32_t *s) {
    *s = *s * 1664525u + 1013904223u;
    return (float)((*s >> 8) & 0xffff) / 32768.f - 1.f;
}

static dnnl_graph_logical_tensor_t lt(size_t id, int64_t rows, int64_t cols) {
    dnnl_graph_logical_tensor_t t;
    dnnl_dims_t dims = {rows, cols};
    CHECK(dnnl_graph_logical_tensor_init_with_dims(&t, id, dnnl_f32, 2, dims, dnnl_graph_layout_type_strided,
                                                   dnnl_graph_tensor_property_variable));
    return t;
}

static dnnl_graph_op_t make_op(size_t id, dnnl_graph_op_kind_t kind, int nin, const dnnl_graph_logical_tensor_t *t,
                               const int *in, int out) {
    dnnl_graph_op_t op;
    CHECK(dnnl_graph_op_create(&op, id, kind, op_name[id]));
    for (int i = 0; i < nin; ++i) CHECK(dnnl_graph_op_add_input(op, &t[in[i]]));
    CHECK(dnnl_graph_op_add_output(op, &t[out]));
    return op;
}

int main(void) {
    dnnl_graph_logical_tensor_t t[NT];
    t[T_SRC] = lt(T_SRC, M, K);
    t[T_WGATE] = lt(T_WGATE, K, N);
    t[T_WUP] = lt(T_WUP, K, N);
    t[T_WDOWN] = lt(T_WDOWN, N, K);
    for (int i = T_GATE; i <= T_HID; ++i) t[i] = lt((size_t)i, M, N);
    t[T_DST] = lt(T_DST, M, K);

    dnnl_graph_op_t ops[NOPS];
    ops[OP_GATE] = make_op(OP_GATE, dnnl_graph_op_matmul, 2, t, (const int[]){T_SRC, T_WGATE}, T_GATE);
    ops[OP_SIGMOID] = make_op(OP_SIGMOID, dnnl_graph_op_sigmoid, 1, t, (const int[]){T_GATE}, T_SIG);
    ops[OP_SILU] = make_op(OP_SILU, dnnl_graph_op_multiply, 2, t, (const int[]){T_GATE, T_SIG}, T_ACT);
    ops[OP_UP] = make_op(OP_UP, dnnl_graph_op_matmul, 2, t, (const int[]){T_SRC, T_WUP}, T_UP);
    ops[OP_COMBINE] = make_op(OP_COMBINE, dnnl_graph_op_multiply, 2, t, (const int[]){T_ACT, T_UP}, T_HID);
    ops[OP_DOWN] = make_op(OP_DOWN, dnnl_graph_op_matmul, 2, t, (const int[]){T_HID, T_WDOWN}, T_DST);

    dnnl_graph_graph_t g;
    CHECK(dnnl_graph_graph_create(&g, dnnl_cpu));
    for (int i = 0; i < NOPS; ++i) CHECK(dnnl_graph_add_op(g, ops[i]));
    CHECK(dnnl_graph_graph_finalize(g));
    CHECK(dnnl_graph_graph_filter(g, dnnl_graph_partition_policy_fusion));
    size_t nparts = 0;
    CHECK(dnnl_graph_graph_get_partition_num(g, &nparts));
    printf("%zu partition(s)\n", nparts);
    if (nparts < 1 || nparts > NOPS) return 1;
    dnnl_graph_partition_t parts[NOPS];
    CHECK(dnnl_graph_graph_get_partitions(g, nparts, parts));
    for (size_t p = 0; p < nparts; ++p) {
        size_t nops = 0, ids[NOPS];
        CHECK(dnnl_graph_partition_get_op_num(parts[p], &nops));
        CHECK(dnnl_graph_partition_get_ops(parts[p], nops, ids));
        printf("  partition %zu: %zu ops:", p, nops);
        for (size_t i = 0; i < nops; ++i) printf(" %s", ids[i] < NOPS ? op_name[ids[i]] : "?");
        printf("\n");
    }
    if (nparts != 1) {
        printf("FAILED: the gated MLP should form one fused partition\n");
        return 1;
    }

    dnnl_engine_t eng;
    dnnl_stream_t strm;
    CHECK(dnnl_engine_create(&eng, dnnl_cpu, 0));
    CHECK(dnnl_stream_create(&strm, eng, dnnl_stream_default_flags));
    dnnl_graph_compiled_partition_t cp;
    CHECK(dnnl_graph_compiled_partition_create(&cp, parts[0]));
    const dnnl_graph_logical_tensor_t *ins[NIN], *outs[1] = {&t[T_DST]};
    for (int i = 0; i < NIN; ++i) ins[i] = &t[i];
    CHECK(dnnl_graph_partition_compile(parts[0], cp, NIN, ins, 1, outs, eng));

    static float src[M * K], wgate[K * N], wup[K * N], wdown[N * K], dst[M * K];
    uint32_t seed = 5;
    for (int i = 0; i < M * K; ++i) src[i] = value(&seed);
    for (int i = 0; i < K * N; ++i) wgate[i] = 0.2f * value(&seed), wup[i] = 0.2f * value(&seed);
    for (int i = 0; i < N * K; ++i) wdown[i] = 0.2f * value(&seed);

    void *bufs[NIN] = {src, wgate, wup, wdown};
    dnnl_graph_tensor_t tin[NIN], tout;
    const_dnnl_graph_tensor_t in_t[NIN];
    for (int i = 0; i < NIN; ++i) {
        CHECK(dnnl_graph_tensor_create(&tin[i], &t[i], eng, bufs[i]));
        in_t[i] = tin[i];
    }
    CHECK(dnnl_graph_tensor_create(&tout, &t[T_DST], eng, dst));
    CHECK(dnnl_graph_compiled_partition_execute(cp, strm, NIN, in_t, 1, (const_dnnl_graph_tensor_t[]){tout}));
    CHECK(dnnl_stream_wait(strm));

    /* Reference: one row of hid at a time, in double. */
    double worst = 0;
    for (int m = 0; m < M; ++m) {
        double hid[N];
        for (int n = 0; n < N; ++n) {
            double gate = 0, up = 0;
            for (int k = 0; k < K; ++k) {
                gate += (double)src[m * K + k] * wgate[k * N + n];
                up += (double)src[m * K + k] * wup[k * N + n];
            }
            hid[n] = gate / (1.0 + exp(-gate)) * up; /* SiLU(gate) · up */
        }
        for (int k = 0; k < K; ++k) {
            double acc = 0, mag = 0;
            for (int n = 0; n < N; ++n) {
                acc += hid[n] * wdown[n * K + k];
                mag += fabs(hid[n] * wdown[n * K + k]);
            }
            double err = fabs(acc - dst[m * K + k]) / (mag + 1e-30);
            if (isnan(err)) err = INFINITY;
            if (err > worst) worst = err;
        }
    }
    int ok = worst <= 1e-5;
    printf("max relative error %.3g (tolerance 1e-5): %s\n", worst, ok ? "all results right" : "FAILED");

    for (int i = 0; i < NIN; ++i) dnnl_graph_tensor_destroy(tin[i]);
    dnnl_graph_tensor_destroy(tout);
    dnnl_graph_compiled_partition_destroy(cp);
    dnnl_graph_partition_destroy(parts[0]);
    for (int i = 0; i < NOPS; ++i) dnnl_graph_op_destroy(ops[i]);
    dnnl_graph_graph_destroy(g);
    dnnl_stream_destroy(strm);
    dnnl_engine_destroy(eng);
    return ok ? 0 : 1;
}
