/* Scaled dot-product attention with a boolean mask through Select (seed 000).
 *
 * The attention of a batch whose last keys are padding, as DistilBERT's
 * masked_fill writes it:
 *   S = Q · Kᵀ                (MatMul, transpose_b)
 *   S = S · scale             (Multiply by 1/√D, a 1-element tensor)
 *   S = Select(mask, S, -inf) (mask: boolean [N, 1, 1, S_kv], true = real key)
 *   P = SoftMax(S)            (last axis)
 *   O = P · V                 (MatMul)
 * with Q, K, V of shape [N, H, S, D] = [1, 4, 32, 64].  The mask broadcasts
 * over heads and queries; the -inf else-value broadcasts everywhere.  The
 * five ops form one partition (the float_sdp_fusion pattern, run by the
 * streaming SDPA kernel: ONEDNN_VERBOSE=2 prints the pattern row).  The
 * example prints the partitions and the largest absolute error against a
 * plain loop (double; f32 tolerance 1e-5), and exits with 1 on a wrong
 * result or a partition count other than one.
 *
 * Build: cc sdpa_select_mask.c $(pkg-config --cflags --libs partita) -lm */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "oneapi/dnnl/dnnl_graph.h"

#define NB 1     /* batch */
#define H 4      /* heads */
#define S 32     /* sequence length (queries = keys) */
#define D 64     /* head size */
#define VALID 27 /* keys 0..VALID-1 are real tokens, the rest padding */

#define CHECK(call)                                                                         \
    do {                                                                                    \
        dnnl_status_t st_ = (call);                                                         \
        if (st_ != dnnl_success) {                                                          \
            fprintf(stderr, "%s:%d: %s failed with status %d\n", __FILE__, __LINE__, #call, \
                    (int)st_);                                                              \
            exit(1);                                                                        \
        }                                                                                   \
    } while (0)

enum { OP_QK, OP_SCALE, OP_SELECT, OP_SOFTMAX, OP_PV, NOPS };
static const char *op_name[NOPS] = {"MatMul(Q,K)", "Multiply", "Select", "SoftMax", "MatMul(P,V)"};

/* Tensor ids: the graph's inputs first, then the intermediate values. */
enum { T_Q, T_K, T_V, T_SCALE, T_MASK, T_NEG_INF, NIN, T_S0 = NIN, T_S1, T_S2, T_P, T_O };

static float value(uint32_t *s) {
    *s = *s * 1664525u + 1013904223u;
    return (float)((*s >> 8) & 0xffff) / 32768.f - 1.f;
}

static dnnl_graph_logical_tensor_t lt(size_t id, dnnl_data_type_t dt, int nd, int64_t d0, int64_t d1, int64_t d2,
                                      int64_t d3) {
    dnnl_graph_logical_tensor_t t;
    dnnl_dims_t dims = {d0, d1, d2, d3};
    CHECK(dnnl_graph_logical_tensor_init_with_dims(&t, id, dt, nd, dims, dnnl_graph_layout_type_strided,
                                                   dnnl_graph_tensor_property_variable));
    return t;
}

/* Creates op `id` reading the tensors t[in[0..nin)] and writing t[out]. */
static dnnl_graph_op_t make_op(size_t id, dnnl_graph_op_kind_t kind, int nin, const dnnl_graph_logical_tensor_t *t,
                               const int *in, int out) {
    dnnl_graph_op_t op;
    CHECK(dnnl_graph_op_create(&op, id, kind, op_name[id]));
    for (int i = 0; i < nin; ++i) CHECK(dnnl_graph_op_add_input(op, &t[in[i]]));
    CHECK(dnnl_graph_op_add_output(op, &t[out]));
    return op;
}

int main(void) {
    dnnl_graph_logical_tensor_t t[T_O + 1];
    t[T_Q] = lt(T_Q, dnnl_f32, 4, NB, H, S, D);
    t[T_K] = lt(T_K, dnnl_f32, 4, NB, H, S, D);
    t[T_V] = lt(T_V, dnnl_f32, 4, NB, H, S, D);
    t[T_SCALE] = lt(T_SCALE, dnnl_f32, 1, 1, 0, 0, 0);
    t[T_MASK] = lt(T_MASK, dnnl_boolean, 4, NB, 1, 1, S);
    t[T_NEG_INF] = lt(T_NEG_INF, dnnl_f32, 1, 1, 0, 0, 0);
    for (int i = T_S0; i <= T_P; ++i) t[i] = lt((size_t)i, dnnl_f32, 4, NB, H, S, S);
    t[T_O] = lt(T_O, dnnl_f32, 4, NB, H, S, D);

    dnnl_graph_op_t ops[NOPS];
    ops[OP_QK] = make_op(OP_QK, dnnl_graph_op_matmul, 2, t, (const int[]){T_Q, T_K}, T_S0);
    const uint8_t yes = 1;
    CHECK(dnnl_graph_op_set_attr_bool(ops[OP_QK], dnnl_graph_op_attr_transpose_b, &yes, 1));
    ops[OP_SCALE] = make_op(OP_SCALE, dnnl_graph_op_multiply, 2, t, (const int[]){T_S0, T_SCALE}, T_S1);
    /* Masked fill: where the mask is false the score becomes -inf. */
    ops[OP_SELECT] = make_op(OP_SELECT, dnnl_graph_op_select, 3, t, (const int[]){T_MASK, T_S1, T_NEG_INF}, T_S2);
    ops[OP_SOFTMAX] = make_op(OP_SOFTMAX, dnnl_graph_op_softmax, 1, t, (const int[]){T_S2}, T_P);
    const int64_t last_axis = -1; /* SoftMax's default axis is 1 */
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
    dnnl_graph_partition_t parts[NOPS];
    if (nparts < 1 || nparts > NOPS) return 1;
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
        printf("FAILED: the attention graph should form one fused SDPA partition\n");
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

    /* Buffers: boolean is one byte per element (C++ bool). */
    const size_t nqkv = (size_t)NB * H * S * D;
    float *q = malloc(sizeof(float) * nqkv), *k = malloc(sizeof(float) * nqkv), *v = malloc(sizeof(float) * nqkv);
    float *o = malloc(sizeof(float) * nqkv);
    uint8_t mask[NB * S];
    float scale = 1.f / sqrtf((float)D), neg_inf = -INFINITY;
    if (!q || !k || !v || !o) return 1;
    uint32_t seed = 3;
    for (size_t i = 0; i < nqkv; ++i) q[i] = value(&seed), k[i] = value(&seed), v[i] = value(&seed);
    for (int n = 0; n < NB; ++n)
        for (int j = 0; j < S; ++j) mask[n * S + j] = j < VALID;

    void *bufs[NIN] = {q, k, v, &scale, mask, &neg_inf};
    dnnl_graph_tensor_t tin[NIN], tout;
    for (int i = 0; i < NIN; ++i) CHECK(dnnl_graph_tensor_create(&tin[i], &t[i], eng, bufs[i]));
    CHECK(dnnl_graph_tensor_create(&tout, &t[T_O], eng, o));
    const_dnnl_graph_tensor_t in_t[NIN], out_t[1] = {tout};
    for (int i = 0; i < NIN; ++i) in_t[i] = tin[i];
    CHECK(dnnl_graph_compiled_partition_execute(cp, strm, NIN, in_t, 1, out_t));
    CHECK(dnnl_stream_wait(strm));

    /* Reference: the five ops as loops, in double. */
    double worst = 0;
    for (int n = 0; n < NB; ++n)
        for (int h = 0; h < H; ++h) {
            const size_t base = ((size_t)n * H + h) * S * D;
            for (int i = 0; i < S; ++i) {
                double s[S], mx = -INFINITY, sum = 0;
                for (int j = 0; j < S; ++j) {
                    double acc = 0;
                    for (int d = 0; d < D; ++d) acc += (double)q[base + i * D + d] * k[base + j * D + d];
                    s[j] = mask[n * S + j] ? acc * scale : -INFINITY;
                    if (s[j] > mx) mx = s[j];
                }
                for (int j = 0; j < S; ++j) {
                    s[j] = exp(s[j] - mx);
                    sum += s[j];
                }
                for (int d = 0; d < D; ++d) {
                    double acc = 0;
                    for (int j = 0; j < S; ++j) acc += s[j] / sum * v[base + j * D + d];
                    double err = fabs(acc - o[base + i * D + d]);
                    if (isnan(err)) err = INFINITY; /* a NaN is as wrong as can be */
                    if (err > worst) worst = err;
                }
            }
        }
    int ok = worst <= 1e-5;
    printf("max absolute error %.3g (tolerance 1e-5): %s\n", worst, ok ? "all results right" : "FAILED");

    for (int i = 0; i < NIN; ++i) dnnl_graph_tensor_destroy(tin[i]);
    dnnl_graph_tensor_destroy(tout);
    free(q), free(k), free(v), free(o);
    dnnl_graph_compiled_partition_destroy(cp);
    for (size_t p = 0; p < nparts; ++p) dnnl_graph_partition_destroy(parts[p]);
    for (int i = 0; i < NOPS; ++i) dnnl_graph_op_destroy(ops[i]);
    dnnl_graph_graph_destroy(g);
    dnnl_stream_destroy(strm);
    dnnl_engine_destroy(eng);
    return ok ? 0 : 1;
}
