/* Attention over an int4-compressed KV cache (seed 002), one decode step.
 *
 * The cached keys and values are stored as 4-bit integers, K as s4 and V as
 * u4, with one f32 scale and one 4-bit zero point per group of G elements
 * along the head dimension (per token, per head).  The graph decompresses
 * them with DynamicDequantize (qtype per_group, group_shape [1, 1, 1, G]):
 *   K = (Kq - Kz) · Ks,   V = (Vq - Vz) · Vs
 *   O = SoftMax(Q · Kᵀ · 1/√D) · V
 * for one query row against S_kv = 256 cached keys (Q [1, H, 1, D]).  The
 * six ops form one partition (the sdp_with_compressed_kv_fusion pattern,
 * which dequantizes K and V block by block while it streams over the keys;
 * ONEDNN_VERBOSE=2 prints the pattern row).  4-bit tensors hold two
 * elements per byte, the even element in the low nibble (docs/ops.md).
 * The example prints the partitions and the largest absolute error against
 * a plain loop (double; f32 tolerance 1e-5), and exits with 1 on a wrong
 * result or a partition count other than one.
 *
 * Build: cc compressed_sdpa_int4.c $(pkg-config --cflags --libs partita) -lm */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "oneapi/dnnl/dnnl_graph.h"

#define H 4      /* heads */
#define SKV 256  /* cached keys */
#define D 64     /* head size (K and V) */
#define G 16     /* group size along D: D / G scales per token and head */
#define NKV (H * SKV * D)
#define NGRP (H * SKV * (D / G))

#define CHECK(call)                                                                         \
    do {                                                                                    \
        dnnl_status_t st_ = (call);                                                         \
        if (st_ != dnnl_success) {                                                          \
            fprintf(stderr, "%s:%d: %s failed with status %d\n", __FILE__, __LINE__, #call, \
                    (int)st_);                                                              \
            exit(1);                                                                        \
        }                                                                                   \
    } while (0)

enum { OP_DQ_K, OP_DQ_V, OP_QK, OP_SCALE, OP_SOFTMAX, OP_PV, NOPS };
static const char *op_name[NOPS] = {"DynamicDequantize(K)", "DynamicDequantize(V)", "MatMul(Q,K)",
                                    "Multiply",             "SoftMax",              "MatMul(P,V)"};

/* Tensor ids: the graph's inputs, then the values inside the partition. */
enum { T_Q, T_KQ, T_KS, T_KZ, T_VQ, T_VS, T_VZ, T_SCALE, NIN, T_K = NIN, T_V, T_S0, T_S1, T_P, T_O, NT };

static uint32_t next(uint32_t *s) {
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}
static float value(uint32_t *s) { return (float)(next(s) & 0xffff) / 32768.f - 1.f; }
/* A 4-bit integer: s4 in [-8, 7], u4 in [0, 15]. */
static int int4(uint32_t *s, int is_signed) { return (int)(next(s) % 16u) - (is_signed ? 8 : 0); }

/* Packs n 4-bit values, two per byte, the even element in the low nibble. */
static void pack4(const int8_t *v, int n, uint8_t *bytes) {
    for (int i = 0; i < n; i += 2) bytes[i / 2] = (uint8_t)((v[i] & 0xf) | (i + 1 < n ? (v[i + 1] & 0xf) << 4 : 0));
}

static dnnl_graph_logical_tensor_t lt(size_t id, dnnl_data_type_t dt, int nd, int64_t d2, int64_t d3) {
    dnnl_graph_logical_tensor_t t;
    dnnl_dims_t dims = {1, H, d2, d3}; /* rank 4 [1, H, d2, d3]; rank 1 [1] for the scale factor */
    if (nd == 1) dims[0] = 1;
    CHECK(dnnl_graph_logical_tensor_init_with_dims(&t, id, dt, nd, dims, dnnl_graph_layout_type_strided,
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

static dnnl_graph_op_t dequantize(size_t id, const dnnl_graph_logical_tensor_t *t, int q, int s, int z, int out) {
    dnnl_graph_op_t op = make_op(id, dnnl_graph_op_dynamic_dequantize, 3, t, (const int[]){q, s, z}, out);
    const int64_t group_shape[4] = {1, 1, 1, G};
    CHECK(dnnl_graph_op_set_attr_str(op, dnnl_graph_op_attr_qtype, "per_group", 9));
    CHECK(dnnl_graph_op_set_attr_s64(op, dnnl_graph_op_attr_group_shape, group_shape, 4));
    return op;
}

int main(void) {
    dnnl_graph_logical_tensor_t t[NT];
    t[T_Q] = lt(T_Q, dnnl_f32, 4, 1, D);
    t[T_KQ] = lt(T_KQ, dnnl_s4, 4, SKV, D);
    t[T_KS] = lt(T_KS, dnnl_f32, 4, SKV, D / G);
    t[T_KZ] = lt(T_KZ, dnnl_s4, 4, SKV, D / G);
    t[T_VQ] = lt(T_VQ, dnnl_u4, 4, SKV, D);
    t[T_VS] = lt(T_VS, dnnl_f32, 4, SKV, D / G);
    t[T_VZ] = lt(T_VZ, dnnl_u4, 4, SKV, D / G);
    t[T_SCALE] = lt(T_SCALE, dnnl_f32, 1, 0, 0);
    t[T_K] = lt(T_K, dnnl_f32, 4, SKV, D);
    t[T_V] = lt(T_V, dnnl_f32, 4, SKV, D);
    for (int i = T_S0; i <= T_P; ++i) t[i] = lt((size_t)i, dnnl_f32, 4, 1, SKV);
    t[T_O] = lt(T_O, dnnl_f32, 4, 1, D);

    dnnl_graph_op_t ops[NOPS];
    ops[OP_DQ_K] = dequantize(OP_DQ_K, t, T_KQ, T_KS, T_KZ, T_K);
    ops[OP_DQ_V] = dequantize(OP_DQ_V, t, T_VQ, T_VS, T_VZ, T_V);
    ops[OP_QK] = make_op(OP_QK, dnnl_graph_op_matmul, 2, t, (const int[]){T_Q, T_K}, T_S0);
    const uint8_t yes = 1;
    CHECK(dnnl_graph_op_set_attr_bool(ops[OP_QK], dnnl_graph_op_attr_transpose_b, &yes, 1));
    ops[OP_SCALE] = make_op(OP_SCALE, dnnl_graph_op_multiply, 2, t, (const int[]){T_S0, T_SCALE}, T_S1);
    ops[OP_SOFTMAX] = make_op(OP_SOFTMAX, dnnl_graph_op_softmax, 1, t, (const int[]){T_S1}, T_P);
    const int64_t last_axis = -1;
    CHECK(dnnl_graph_op_set_attr_s64(ops[OP_SOFTMAX], dnnl_graph_op_attr_axis, &last_axis, 1));
    ops[OP_PV] = make_op(OP_PV, dnnl_graph_op_matmul, 2, t, (const int[]){T_P, T_V}, T_O);

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
        printf("FAILED: the compressed attention graph should form one fused SDPA partition\n");
        return 1;
    }

    dnnl_engine_t eng;
    dnnl_stream_t strm;
    CHECK(dnnl_engine_create(&eng, dnnl_cpu, 0));
    CHECK(dnnl_stream_create(&strm, eng, dnnl_stream_default_flags));
    dnnl_graph_compiled_partition_t cp;
    CHECK(dnnl_graph_compiled_partition_create(&cp, parts[0]));
    const dnnl_graph_logical_tensor_t *ins[NIN], *outs[1] = {&t[T_O]};
    for (int i = 0; i < NIN; ++i) ins[i] = &t[i];
    CHECK(dnnl_graph_partition_compile(parts[0], cp, NIN, ins, 1, outs, eng));

    /* Data: the 4-bit values unpacked (for the reference) and packed. */
    static float q[H * D], o[H * D], ks[NGRP], vs[NGRP];
    static int8_t kq[NKV], vq[NKV], kz[NGRP], vz[NGRP];
    static uint8_t kq4[NKV / 2], vq4[NKV / 2], kz4[NGRP / 2], vz4[NGRP / 2];
    float scale = 1.f / sqrtf((float)D);
    uint32_t seed = 11;
    for (int i = 0; i < H * D; ++i) q[i] = 2.f * value(&seed);
    for (int i = 0; i < NKV; ++i) kq[i] = (int8_t)int4(&seed, 1), vq[i] = (int8_t)int4(&seed, 0);
    for (int i = 0; i < NGRP; ++i) {
        ks[i] = 0.05f + 0.04f * value(&seed), vs[i] = 0.05f + 0.04f * value(&seed);
        kz[i] = (int8_t)int4(&seed, 1), vz[i] = (int8_t)int4(&seed, 0);
    }
    pack4(kq, NKV, kq4), pack4(vq, NKV, vq4), pack4(kz, NGRP, kz4), pack4(vz, NGRP, vz4);

    void *bufs[NIN] = {q, kq4, ks, kz4, vq4, vs, vz4, &scale};
    dnnl_graph_tensor_t tin[NIN], tout;
    const_dnnl_graph_tensor_t in_t[NIN];
    for (int i = 0; i < NIN; ++i) {
        CHECK(dnnl_graph_tensor_create(&tin[i], &t[i], eng, bufs[i]));
        in_t[i] = tin[i];
    }
    CHECK(dnnl_graph_tensor_create(&tout, &t[T_O], eng, o));
    CHECK(dnnl_graph_compiled_partition_execute(cp, strm, NIN, in_t, 1, (const_dnnl_graph_tensor_t[]){tout}));
    CHECK(dnnl_stream_wait(strm));

    /* Reference: dequantize (in f32, as the op defines), then attention in double. */
    static float kf[NKV], vf[NKV];
    for (int i = 0; i < NKV; ++i) { /* element i is in group i / G of its row */
        kf[i] = (float)(kq[i] - kz[i / G]) * ks[i / G];
        vf[i] = (float)(vq[i] - vz[i / G]) * vs[i / G];
    }
    double worst = 0;
    for (int h = 0; h < H; ++h) {
        const float *qh = q + h * D, *kh = kf + (size_t)h * SKV * D, *vh = vf + (size_t)h * SKV * D;
        double s[SKV], mx = -INFINITY, sum = 0;
        for (int j = 0; j < SKV; ++j) {
            double acc = 0;
            for (int d = 0; d < D; ++d) acc += (double)qh[d] * kh[j * D + d];
            s[j] = acc * scale;
            if (s[j] > mx) mx = s[j];
        }
        for (int j = 0; j < SKV; ++j) {
            s[j] = exp(s[j] - mx);
            sum += s[j];
        }
        for (int d = 0; d < D; ++d) {
            double acc = 0;
            for (int j = 0; j < SKV; ++j) acc += s[j] / sum * vh[j * D + d];
            double err = fabs(acc - o[h * D + d]);
            if (isnan(err)) err = INFINITY;
            if (err > worst) worst = err;
        }
    }
    int ok = worst <= 1e-5;
    printf("max absolute error %.3g (tolerance 1e-5): %s\n", worst, ok ? "all results right" : "FAILED");

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
