/* End-to-end through the public API: MatMul(src x W) -> Add(bias) -> ReLU
 * -> SoftMax(axis -1).  The graph records only the input shapes; every
 * partition is compiled with `any`-layout outputs of unknown shape, the
 * chosen logical tensors are queried back, intermediate tensors are
 * library-allocated and handed from partition to partition.  Results are
 * checked against plain double loops, and the fusion and debug policies
 * must agree. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "oneapi/dnnl/dnnl_graph.h"
#include "test_util.h"

#define OK(expr) CHECK_EQ_INT((expr), dnnl_success)
#define MAXT 16
#define MAXP 8

typedef dnnl_graph_logical_tensor_t lt_t;

enum { T_SRC = 1, T_W, T_MM, T_BIAS, T_ADD, T_RELU, T_OUT };

static dnnl_engine_t eng;
static dnnl_stream_t strm;

static lt_t lt2(size_t id, dnnl_dim_t a, dnnl_dim_t b) {
    lt_t lt;
    const dnnl_dims_t d = {a, b};
    dnnl_graph_logical_tensor_init_with_dims(&lt, id, dnnl_f32, 2, d, dnnl_graph_layout_type_strided,
                                             dnnl_graph_tensor_property_undef);
    return lt;
}

static lt_t lt_unknown(size_t id) {
    lt_t lt;
    dnnl_graph_logical_tensor_init(&lt, id, dnnl_f32, DNNL_GRAPH_UNKNOWN_NDIMS, dnnl_graph_layout_type_any,
                                   dnnl_graph_tensor_property_undef);
    return lt;
}

static void add_op(dnnl_graph_graph_t g, size_t id, dnnl_graph_op_kind_t kind, int nin, const lt_t *in,
                   const lt_t *out) {
    dnnl_graph_op_t op = NULL;
    OK(dnnl_graph_op_create(&op, id, kind, ""));
    for (int i = 0; i < nin; ++i) OK(dnnl_graph_op_add_input(op, &in[i]));
    OK(dnnl_graph_op_add_output(op, out));
    if (kind == dnnl_graph_op_softmax) {
        const int64_t axis = -1;
        OK(dnnl_graph_op_set_attr_s64(op, dnnl_graph_op_attr_axis, &axis, 1));
    }
    OK(dnnl_graph_add_op(g, op));
    OK(dnnl_graph_op_destroy(op));
}

/* Known tensors by id while running the partitions one after another. */
typedef struct {
    size_t n;
    size_t id[MAXT];
    lt_t lt[MAXT];
    dnnl_graph_tensor_t t[MAXT];
    bool owned[MAXT]; /* created here (destroyed at the end) */
} table_t;

static int find(const table_t *tab, size_t id) {
    for (size_t i = 0; i < tab->n; ++i)
        if (tab->id[i] == id) return (int)i;
    return -1;
}

static void put(table_t *tab, const lt_t *lt, dnnl_graph_tensor_t t) {
    if (tab->n >= MAXT) return;
    tab->id[tab->n] = lt->id;
    tab->lt[tab->n] = *lt;
    tab->t[tab->n] = t;
    tab->owned[tab->n] = true;
    ++tab->n;
}

/* Builds the graph, partitions it with `policy` and runs every partition
 * in order.  `out` receives the SoftMax result (m x n).  Returns the number
 * of partitions (0 on failure). */
static size_t run_mlp(dnnl_graph_partition_policy_t policy, int m, int k, int n, float *src, float *w, float *bias,
                      float *out) {
    dnnl_graph_graph_t g = NULL;
    OK(dnnl_graph_graph_create(&g, dnnl_cpu));
    const lt_t l_src = lt2(T_SRC, m, k), l_w = lt2(T_W, k, n), l_bias = lt2(T_BIAS, 1, n);
    /* Intermediates and the result: shapes left to the library. */
    add_op(g, 1, dnnl_graph_op_matmul, 2, (lt_t[]){l_src, l_w}, (lt_t[]){lt_unknown(T_MM)});
    add_op(g, 2, dnnl_graph_op_add, 2, (lt_t[]){lt_unknown(T_MM), l_bias}, (lt_t[]){lt_unknown(T_ADD)});
    add_op(g, 3, dnnl_graph_op_relu, 1, (lt_t[]){lt_unknown(T_ADD)}, (lt_t[]){lt_unknown(T_RELU)});
    add_op(g, 4, dnnl_graph_op_softmax, 1, (lt_t[]){lt_unknown(T_RELU)}, (lt_t[]){lt_unknown(T_OUT)});
    OK(dnnl_graph_graph_finalize(g));
    OK(dnnl_graph_graph_filter(g, policy));
    size_t np = 0;
    OK(dnnl_graph_graph_get_partition_num(g, &np));
    CHECK(np >= 1 && np <= MAXP);
    if (np < 1 || np > MAXP) {
        dnnl_graph_graph_destroy(g);
        return 0;
    }
    dnnl_graph_partition_t parts[MAXP];
    OK(dnnl_graph_graph_get_partitions(g, np, parts));
    OK(dnnl_graph_graph_destroy(g));

    /* User tensors: the inputs and the final output buffer. */
    table_t tab = {0};
    dnnl_graph_tensor_t t = NULL;
    OK(dnnl_graph_tensor_create(&t, &l_src, eng, src));
    put(&tab, &l_src, t);
    OK(dnnl_graph_tensor_create(&t, &l_w, eng, w));
    put(&tab, &l_w, t);
    OK(dnnl_graph_tensor_create(&t, &l_bias, eng, bias));
    put(&tab, &l_bias, t);

    dnnl_graph_compiled_partition_t cps[MAXP] = {NULL};
    size_t done = 0;
    for (size_t pi = 0; pi < np; ++pi) {
        uint8_t sup = 0;
        OK(dnnl_graph_partition_is_supported(parts[pi], &sup));
        CHECK_EQ_INT(sup, 1);
        size_t nin = 0, nout = 0;
        OK(dnnl_graph_partition_get_input_ports_num(parts[pi], &nin));
        OK(dnnl_graph_partition_get_output_ports_num(parts[pi], &nout));
        CHECK(nin >= 1 && nin <= 4 && nout == 1);
        if (!sup || nin < 1 || nin > 4 || nout != 1) break;
        lt_t in_ports[4], out_ports[1];
        OK(dnnl_graph_partition_get_input_ports(parts[pi], nin, in_ports));
        OK(dnnl_graph_partition_get_output_ports(parts[pi], 1, out_ports));

        /* Inputs: what the user or an earlier partition provides. */
        const lt_t *cin[4];
        const_dnnl_graph_tensor_t tin[4];
        bool ok = true;
        for (size_t i = 0; i < nin; ++i) {
            int e = find(&tab, in_ports[i].id);
            CHECK(e >= 0);
            if (e < 0) {
                ok = false;
                break;
            }
            cin[i] = &tab.lt[e];
            tin[i] = tab.t[e];
        }
        if (!ok) break;
        /* Output: unknown shape, layout chosen by the library. */
        lt_t want = lt_unknown(out_ports[0].id);
        const lt_t *cout[1] = {&want};
        OK(dnnl_graph_compiled_partition_create(&cps[pi], parts[pi]));
        dnnl_status_t st = dnnl_graph_partition_compile(parts[pi], cps[pi], nin, cin, 1, cout, eng);
        OK(st);
        if (st != dnnl_success) break;

        lt_t got;
        OK(dnnl_graph_compiled_partition_query_logical_tensor(cps[pi], want.id, &got));
        CHECK_EQ_INT(got.ndims, 2);
        CHECK_EQ_INT(got.dims[0], m);
        CHECK_EQ_INT(got.dims[1], n);
        CHECK(got.layout_type == dnnl_graph_layout_type_strided || got.layout_type == dnnl_graph_layout_type_opaque);
        size_t bytes = 0;
        OK(dnnl_graph_logical_tensor_get_mem_size(&got, &bytes));
        CHECK(bytes >= (size_t)m * (size_t)n * sizeof(float) && bytes != SIZE_MAX);

        /* The final result goes into the caller's buffer (dense strided
         * layout required); intermediates are library-allocated. */
        bool last = got.id == T_OUT;
        if (last) {
            CHECK_EQ_INT(got.layout_type, dnnl_graph_layout_type_strided);
            CHECK_EQ_INT(got.layout.strides[0], n);
            CHECK_EQ_INT(got.layout.strides[1], 1);
        }
        OK(dnnl_graph_tensor_create(&t, &got, eng, last ? (void *)out : DNNL_MEMORY_ALLOCATE));
        put(&tab, &got, t);
        const_dnnl_graph_tensor_t tout[1] = {t};
        OK(dnnl_graph_compiled_partition_execute(cps[pi], strm, nin, tin, 1, tout));
        ++done;
    }
    OK(dnnl_stream_wait(strm));
    CHECK_EQ_INT(done, np);
    CHECK(find(&tab, T_OUT) >= 0);

    for (size_t i = 0; i < tab.n; ++i)
        if (tab.owned[i]) OK(dnnl_graph_tensor_destroy(tab.t[i]));
    for (size_t pi = 0; pi < np; ++pi) {
        OK(dnnl_graph_compiled_partition_destroy(cps[pi]));
        OK(dnnl_graph_partition_destroy(parts[pi]));
    }
    return done == np ? np : 0;
}

/* softmax(relu(src x W + bias)) along the last axis, in double. */
static void reference(int m, int k, int n, const float *src, const float *w, const float *bias, double *out) {
    for (int i = 0; i < m; ++i) {
        double row[64];
        double mx = -1e300;
        for (int j = 0; j < n; ++j) {
            double acc = bias[j];
            for (int q = 0; q < k; ++q) acc += (double)src[i * k + q] * (double)w[q * n + j];
            row[j] = acc > 0 ? acc : 0;
            if (row[j] > mx) mx = row[j];
        }
        double sum = 0;
        for (int j = 0; j < n; ++j) {
            row[j] = exp(row[j] - mx);
            sum += row[j];
        }
        for (int j = 0; j < n; ++j) out[i * n + j] = row[j] / sum;
    }
}

static void run_case(int m, int k, int n) {
    float *src = malloc(sizeof(float) * (size_t)(m * k));
    float *w = malloc(sizeof(float) * (size_t)(k * n));
    float *bias = malloc(sizeof(float) * (size_t)n);
    float *fused = malloc(sizeof(float) * (size_t)(m * n));
    float *debug = malloc(sizeof(float) * (size_t)(m * n));
    double *ref = malloc(sizeof(double) * (size_t)(m * n));
    /* Mixed signs so ReLU clips some values and SoftMax sees zeros. */
    for (int i = 0; i < m * k; ++i) src[i] = (float)((i * 7) % 13 - 6) * 0.25f;
    for (int i = 0; i < k * n; ++i) w[i] = (float)((i * 5) % 11 - 5) * 0.125f;
    for (int j = 0; j < n; ++j) bias[j] = (float)(j % 5 - 2) * 0.5f;
    for (int i = 0; i < m * n; ++i) fused[i] = debug[i] = -1.0f;
    reference(m, k, n, src, w, bias, ref);

    size_t np_fused = run_mlp(dnnl_graph_partition_policy_fusion, m, k, n, src, w, bias, fused);
    size_t np_debug = run_mlp(dnnl_graph_partition_policy_debug, m, k, n, src, w, bias, debug);
    /* MatMul + Add + ReLU fuse (docs/fusion.md); SoftMax stands alone. */
    CHECK_EQ_INT(np_fused, 2);
    CHECK_EQ_INT(np_debug, 4);

    int bad_fused = 0, bad_debug = 0, differ = 0;
    for (int i = 0; i < m * n; ++i) {
        if (fabs(fused[i] - ref[i]) > 1e-5) ++bad_fused;
        if (fabs(debug[i] - ref[i]) > 1e-5) ++bad_debug;
        if (fabs((double)fused[i] - (double)debug[i]) > 1e-6) ++differ;
    }
    CHECK_EQ_INT(bad_fused, 0);
    CHECK_EQ_INT(bad_debug, 0);
    CHECK_EQ_INT(differ, 0);
    /* Each SoftMax row sums to 1. */
    for (int i = 0; i < m; ++i) {
        double s = 0;
        for (int j = 0; j < n; ++j) s += fused[i * n + j];
        CHECK_NEAR(s, 1.0, 1e-5);
    }
    /* Sanity of the data set itself: ReLU clipped something. */
    int zeros = 0;
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
            double acc = bias[j];
            for (int q = 0; q < k; ++q) acc += (double)src[i * k + q] * w[q * n + j];
            zeros += acc <= 0;
        }
    if (m * n > 1) CHECK(zeros > 0 && zeros < m * n);

    free(src);
    free(w);
    free(bias);
    free(fused);
    free(debug);
    free(ref);
}

int main(void) {
    OK(dnnl_engine_create(&eng, dnnl_cpu, 0));
    OK(dnnl_stream_create(&strm, eng, dnnl_stream_default_flags));
    run_case(4, 8, 16);
    run_case(3, 5, 7);
    run_case(1, 1, 1);
    OK(dnnl_stream_destroy(strm));
    OK(dnnl_engine_destroy(eng));
    return pt_test_summary("test_e2e_mlp");
}
