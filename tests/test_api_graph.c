/* Public-API tests of graphs, partitions and compiled partitions, with the
 * partition additions (docs/api.md), plus the programming-model
 * rules of seed 001: partitions cover every op once, come in topological
 * order and never form a dependence cycle. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "oneapi/dnnl/dnnl_graph.h"
#include "test_util.h"

#define OK(expr) CHECK_EQ_INT((expr), dnnl_success)
#define FAILS(expr, status) CHECK_EQ_INT((expr), (status))
#define UNK DNNL_GRAPH_UNKNOWN_DIM

typedef dnnl_graph_logical_tensor_t lt_t;

static dnnl_engine_t eng;
static dnnl_stream_t strm;

/* ---- helpers ----------------------------------------------------------- */

/* Dense strided logical tensor with known dims. */
static lt_t lt_of(size_t id, dnnl_data_type_t dt, int nd, const dnnl_dim_t *dims) {
    lt_t lt;
    dnnl_dims_t d = {0};
    for (int i = 0; i < nd; ++i) d[i] = dims[i];
    dnnl_graph_logical_tensor_init_with_dims(&lt, id, dt, nd, d, dnnl_graph_layout_type_strided,
                                             dnnl_graph_tensor_property_undef);
    return lt;
}

static lt_t lt2(size_t id, dnnl_dim_t a, dnnl_dim_t b) {
    const dnnl_dim_t d[2] = {a, b};
    return lt_of(id, dnnl_f32, 2, d);
}

/* Unknown rank, layout chosen by the library. */
static lt_t lt_any(size_t id, dnnl_data_type_t dt) {
    lt_t lt;
    dnnl_graph_logical_tensor_init(&lt, id, dt, DNNL_GRAPH_UNKNOWN_NDIMS, dnnl_graph_layout_type_any,
                                   dnnl_graph_tensor_property_undef);
    return lt;
}

static dnnl_graph_op_t make_op(size_t id, dnnl_graph_op_kind_t kind, int nin, const lt_t *in, int nout,
                               const lt_t *out) {
    dnnl_graph_op_t op = NULL;
    if (dnnl_graph_op_create(&op, id, kind, "") != dnnl_success) return NULL;
    for (int i = 0; i < nin; ++i) dnnl_graph_op_add_input(op, &in[i]);
    for (int i = 0; i < nout; ++i) dnnl_graph_op_add_output(op, &out[i]);
    return op;
}

/* Creates an op, adds it, destroys the caller's op; returns add_op's status. */
static dnnl_status_t add(dnnl_graph_graph_t g, size_t id, dnnl_graph_op_kind_t kind, int nin, const lt_t *in,
                         int nout, const lt_t *out) {
    dnnl_graph_op_t op = make_op(id, kind, nin, in, nout, out);
    if (!op) return dnnl_out_of_memory;
    if (kind == dnnl_graph_op_softmax) {
        const int64_t axis = -1;
        dnnl_graph_op_set_attr_s64(op, dnnl_graph_op_attr_axis, &axis, 1);
    }
    dnnl_status_t st = dnnl_graph_add_op(g, op);
    dnnl_graph_op_destroy(op);
    return st;
}

typedef pt_test_parts parts_t;

static size_t op_ids(dnnl_graph_partition_t p, size_t *ids, size_t cap) {
    size_t n = 0;
    if (dnnl_graph_partition_get_op_num(p, &n) != dnnl_success || n > cap) return 0;
    if (dnnl_graph_partition_get_ops(p, n, ids) != dnnl_success) return 0;
    return n;
}

/* Index of the partition holding op `op_id`, -1 if none. */
static int part_of_op(const parts_t *parts, size_t op_id) {
    for (size_t i = 0; i < parts->n; ++i) {
        size_t ids[64];
        size_t n = op_ids(parts->p[i], ids, 64);
        for (size_t k = 0; k < n; ++k)
            if (ids[k] == op_id) return (int)i;
    }
    return -1;
}

static size_t ports(dnnl_graph_partition_t p, bool inputs, lt_t *out, size_t cap) {
    size_t n = 0;
    if (inputs) {
        if (dnnl_graph_partition_get_input_ports_num(p, &n) != dnnl_success || n > cap) return 0;
        if (dnnl_graph_partition_get_input_ports(p, n, out) != dnnl_success) return 0;
    } else {
        if (dnnl_graph_partition_get_output_ports_num(p, &n) != dnnl_success || n > cap) return 0;
        if (dnnl_graph_partition_get_output_ports(p, n, out) != dnnl_success) return 0;
    }
    return n;
}

/* Every op in exactly one partition; partitions in topological order (no
 * partition consumes a tensor produced by a later one); partition ids
 * distinct. */
static void check_cover_and_order(const parts_t *parts, const size_t *all_ops, size_t nops) {
    for (size_t k = 0; k < nops; ++k) {
        int hits = 0;
        for (size_t i = 0; i < parts->n; ++i) {
            size_t ids[64];
            size_t n = op_ids(parts->p[i], ids, 64);
            for (size_t j = 0; j < n; ++j) hits += ids[j] == all_ops[k];
        }
        CHECK_EQ_INT(hits, 1);
    }
    size_t total = 0;
    for (size_t i = 0; i < parts->n; ++i) {
        size_t n = 0;
        OK(dnnl_graph_partition_get_op_num(parts->p[i], &n));
        CHECK(n >= 1);
        total += n;
    }
    CHECK_EQ_INT(total, nops);
    for (size_t i = 0; i < parts->n; ++i) {
        lt_t in[64];
        size_t nin = ports(parts->p[i], true, in, 64);
        for (size_t k = 0; k < nin; ++k)
            for (size_t j = 0; j < parts->n; ++j) {
                lt_t out[64];
                size_t nout = ports(parts->p[j], false, out, 64);
                for (size_t q = 0; q < nout; ++q)
                    if (out[q].id == in[k].id) CHECK(j < i);
            }
    }
    for (size_t i = 0; i < parts->n; ++i)
        for (size_t j = i + 1; j < parts->n; ++j) {
            size_t a = 0, b = 0;
            OK(dnnl_graph_partition_get_id(parts->p[i], &a));
            OK(dnnl_graph_partition_get_id(parts->p[j], &b));
            CHECK(a != b);
        }
}

/* The MLP graph used by several tests: MatMul(1) -> Add(2) -> ReLU(3) ->
 * SoftMax(4); tensors 1 src[4,8], 2 W[8,16], 3 mm, 4 bias[1,16], 5 add,
 * 6 relu, 7 softmax. */
static dnnl_graph_graph_t mlp_graph(dnnl_fpmath_mode_t mode, bool with_mode) {
    dnnl_graph_graph_t g = NULL;
    if (with_mode)
        OK(dnnl_graph_graph_create_with_fpmath_mode(&g, dnnl_cpu, mode));
    else
        OK(dnnl_graph_graph_create(&g, dnnl_cpu));
    OK(add(g, 1, dnnl_graph_op_matmul, 2, (lt_t[]){lt2(1, 4, 8), lt2(2, 8, 16)}, 1, (lt_t[]){lt2(3, 4, 16)}));
    OK(add(g, 2, dnnl_graph_op_add, 2, (lt_t[]){lt2(3, 4, 16), lt2(4, 1, 16)}, 1, (lt_t[]){lt2(5, 4, 16)}));
    OK(add(g, 3, dnnl_graph_op_relu, 1, (lt_t[]){lt2(5, 4, 16)}, 1, (lt_t[]){lt2(6, 4, 16)}));
    OK(add(g, 4, dnnl_graph_op_softmax, 1, (lt_t[]){lt2(6, 4, 16)}, 1, (lt_t[]){lt2(7, 4, 16)}));
    return g;
}

static void fill(float *p, size_t n, int seed) {
    for (size_t i = 0; i < n; ++i) p[i] = (float)((int)((i * 7 + (size_t)seed * 3) % 11) - 5) * 0.125f;
}

/* relu(src x W + bias) for the MLP graph's fused partition, in double. */
static void ref_mm_add_relu(const float *x, const float *w, const float *b, double *y, int m, int k, int n) {
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
            double acc = b[j];
            for (int q = 0; q < k; ++q) acc += (double)x[i * k + q] * (double)w[q * n + j];
            y[i * n + j] = acc > 0 ? acc : 0;
        }
}

/* The partitions, then the graph they came from. */
static void release(dnnl_graph_graph_t g, parts_t *parts) {
    pt_test_free_parts(parts);
    OK(dnnl_graph_graph_destroy(g));
}

/* The strict MLP graph, finalized and partitioned with the fusion policy.
 * False (everything released) unless that gave the two expected partitions. */
typedef struct {
    dnnl_graph_graph_t g;
    parts_t parts;
} mlp_t;

static bool mlp_parts(mlp_t *m) {
    m->g = mlp_graph(dnnl_fpmath_mode_strict, false);
    OK(dnnl_graph_graph_finalize(m->g));
    pt_test_get_parts(m->g, dnnl_graph_partition_policy_fusion, &m->parts);
    CHECK_EQ_INT(m->parts.n, 2);
    if (m->parts.n == 2) return true;
    pt_test_free_parts(&m->parts);
    dnnl_graph_graph_destroy(m->g);
    return false;
}

/* ---- graph ------------------------------------------------------------ */

static void test_graph_create_fpmath(void) {
    dnnl_graph_graph_t g = NULL;
    FAILS(dnnl_graph_graph_create(NULL, dnnl_cpu), dnnl_invalid_arguments);
    FAILS(dnnl_graph_graph_create_with_fpmath_mode(NULL, dnnl_cpu, dnnl_fpmath_mode_bf16), dnnl_invalid_arguments);

    /* A new graph copies the process default, apply_to_int = 0. */
    OK(dnnl_set_default_fpmath_mode(dnnl_fpmath_mode_bf16));
    OK(dnnl_graph_graph_create(&g, dnnl_cpu));
    OK(dnnl_set_default_fpmath_mode(dnnl_fpmath_mode_strict));
    dnnl_fpmath_mode_t m = dnnl_fpmath_mode_strict;
    int ati = 7;
    OK(dnnl_graph_graph_get_fpmath_mode(g, &m, &ati));
    CHECK_EQ_INT(m, dnnl_fpmath_mode_bf16);
    CHECK_EQ_INT(ati, 0);
    OK(dnnl_graph_graph_destroy(g));

    g = NULL;
    OK(dnnl_graph_graph_create(&g, dnnl_cpu));
    OK(dnnl_graph_graph_get_fpmath_mode(g, &m, &ati));
    CHECK_EQ_INT(m, dnnl_fpmath_mode_strict);
    OK(dnnl_graph_graph_destroy(g));

    g = NULL;
    OK(dnnl_graph_graph_create_with_fpmath_mode(&g, dnnl_cpu, dnnl_fpmath_mode_f16));
    ati = 7;
    OK(dnnl_graph_graph_get_fpmath_mode(g, &m, &ati));
    CHECK_EQ_INT(m, dnnl_fpmath_mode_f16);
    CHECK_EQ_INT(ati, 0);
    /* Either output may be NULL. */
    OK(dnnl_graph_graph_get_fpmath_mode(g, NULL, &ati));
    OK(dnnl_graph_graph_get_fpmath_mode(g, &m, NULL));
    OK(dnnl_graph_graph_get_fpmath_mode(g, NULL, NULL));
    FAILS(dnnl_graph_graph_get_fpmath_mode(NULL, &m, &ati), dnnl_invalid_arguments);

    OK(dnnl_graph_graph_set_fpmath_mode(g, dnnl_fpmath_mode_tf32, 1));
    OK(dnnl_graph_graph_get_fpmath_mode(g, &m, &ati));
    CHECK_EQ_INT(m, dnnl_fpmath_mode_tf32);
    CHECK_EQ_INT(ati, 1);
    OK(dnnl_graph_graph_set_fpmath_mode(g, dnnl_fpmath_mode_any, 0));
    OK(dnnl_graph_graph_get_fpmath_mode(g, &m, &ati));
    CHECK_EQ_INT(m, dnnl_fpmath_mode_any);
    CHECK_EQ_INT(ati, 0);
    FAILS(dnnl_graph_graph_set_fpmath_mode(NULL, dnnl_fpmath_mode_any, 0), dnnl_invalid_arguments);

    /* After finalize both setter and getter report invalid_graph. */
    OK(add(g, 1, dnnl_graph_op_relu, 1, (lt_t[]){lt2(1, 2, 2)}, 1, (lt_t[]){lt2(2, 2, 2)}));
    OK(dnnl_graph_graph_finalize(g));
    FAILS(dnnl_graph_graph_set_fpmath_mode(g, dnnl_fpmath_mode_bf16, 0), dnnl_invalid_graph);
    FAILS(dnnl_graph_graph_get_fpmath_mode(g, &m, &ati), dnnl_invalid_graph);
    OK(dnnl_graph_graph_destroy(g));
    OK(dnnl_graph_graph_destroy(NULL));
}

static void test_add_op(void) {
    dnnl_graph_graph_t g = NULL;
    OK(dnnl_graph_graph_create(&g, dnnl_cpu));
    const lt_t x = lt2(1, 4, 8), w = lt2(2, 8, 16), y = lt2(3, 4, 16);

    dnnl_graph_op_t op = make_op(10, dnnl_graph_op_matmul, 2, (lt_t[]){x, w}, 1, &y);
    FAILS(dnnl_graph_add_op(NULL, op), dnnl_invalid_arguments);
    FAILS(dnnl_graph_add_op(g, NULL), dnnl_invalid_arguments);
    dnnl_graph_op_destroy(op);

    /* Schema violations. */
    FAILS(add(g, 11, dnnl_graph_op_matmul, 1, &x, 1, &y), dnnl_invalid_graph_op);
    FAILS(add(g, 12, dnnl_graph_op_matmul, 2, (lt_t[]){x, w}, 0, NULL), dnnl_invalid_graph_op);
    FAILS(add(g, 13, dnnl_graph_op_relu, 2, (lt_t[]){x, w}, 1, &y), dnnl_invalid_graph_op);
    op = make_op(14, dnnl_graph_op_matmul, 2, (lt_t[]){x, w}, 1, &y);
    OK(dnnl_graph_op_set_attr_str(op, dnnl_graph_op_attr_accumulation_mode, "bogus", 5));
    FAILS(dnnl_graph_add_op(g, op), dnnl_invalid_graph_op);
    dnnl_graph_op_destroy(op);
    op = make_op(15, dnnl_graph_op_matmul, 2, (lt_t[]){x, w}, 1, &y);
    const int64_t axis = 1;
    OK(dnnl_graph_op_set_attr_s64(op, dnnl_graph_op_attr_axis, &axis, 1)); /* not a MatMul attribute */
    FAILS(dnnl_graph_add_op(g, op), dnnl_invalid_graph_op);
    dnnl_graph_op_destroy(op);
    op = make_op(16, dnnl_graph_op_matmul, 2, (lt_t[]){x, w}, 1, &y);
    const int64_t one = 1;
    OK(dnnl_graph_op_set_attr_s64(op, dnnl_graph_op_attr_transpose_a, &one, 1)); /* wrong value kind */
    FAILS(dnnl_graph_add_op(g, op), dnnl_invalid_graph_op);
    dnnl_graph_op_destroy(op);
    const dnnl_dim_t wd[2] = {8, 16};
    const lt_t w_bf16 = lt_of(2, dnnl_bf16, 2, wd);
    FAILS(add(g, 17, dnnl_graph_op_matmul, 2, (lt_t[]){x, w_bf16}, 1, &y), dnnl_invalid_graph_op);
    const lt_t x_s32 = lt_of(1, dnnl_s32, 2, (dnnl_dim_t[]){4, 8});
    FAILS(add(g, 18, dnnl_graph_op_relu, 1, &x_s32, 1, (lt_t[]){lt_of(3, dnnl_s32, 2, (dnnl_dim_t[]){4, 8})}),
          dnnl_invalid_graph_op);
    /* Unknown op kinds. */
    FAILS(add(g, 19, (dnnl_graph_op_kind_t)5000, 1, &x, 1, &y), dnnl_invalid_graph_op);
    FAILS(add(g, 20, dnnl_graph_op_last_symbol, 1, &x, 1, &y), dnnl_invalid_graph_op);

    /* Success; then the same id again.  oneDNN silently keeps the first op;
     * Partita returns the documented error instead (README "Deviations"). */
    OK(add(g, 1, dnnl_graph_op_matmul, 2, (lt_t[]){x, w}, 1, &y));
    FAILS(add(g, 1, dnnl_graph_op_abs, 1, (lt_t[]){lt2(30, 2, 2)}, 1, (lt_t[]){lt2(31, 2, 2)}),
          dnnl_invalid_graph);
    OK(dnnl_graph_graph_finalize(g));
    FAILS(add(g, 2, dnnl_graph_op_relu, 1, &y, 1, (lt_t[]){lt2(4, 4, 16)}), dnnl_invalid_graph);
    /* Only the first op 1 is in the graph; the failed adds left nothing. */
    parts_t parts;
    pt_test_get_parts(g, dnnl_graph_partition_policy_debug, &parts);
    CHECK_EQ_INT(parts.n, 1);
    if (parts.n == 1) {
        lt_t in[4];
        size_t nin = ports(parts.p[0], true, in, 4);
        CHECK_EQ_INT(nin, 2);
        CHECK_EQ_INT(in[0].id + in[1].id, 3); /* tensors 1 and 2, not 30 */
    }
    release(g, &parts);
}

static void test_finalize(void) {
    FAILS(dnnl_graph_graph_finalize(NULL), dnnl_invalid_arguments);
    uint8_t fin = 9;
    dnnl_graph_graph_t g = NULL;

    /* Same id, different description. */
    OK(dnnl_graph_graph_create(&g, dnnl_cpu));
    OK(add(g, 1, dnnl_graph_op_relu, 1, (lt_t[]){lt2(1, 2, 3)}, 1, (lt_t[]){lt2(2, 2, 3)}));
    OK(add(g, 2, dnnl_graph_op_relu, 1, (lt_t[]){lt2(2, 2, 4)}, 1, (lt_t[]){lt2(3, 2, 4)}));
    FAILS(dnnl_graph_graph_finalize(g), dnnl_invalid_graph);
    OK(dnnl_graph_graph_is_finalized(g, &fin));
    CHECK_EQ_INT(fin, 0);
    OK(dnnl_graph_graph_destroy(g));

    /* Same id, different data type. */
    OK(dnnl_graph_graph_create(&g, dnnl_cpu));
    OK(add(g, 1, dnnl_graph_op_relu, 1, (lt_t[]){lt2(1, 2, 3)}, 1, (lt_t[]){lt2(2, 2, 3)}));
    const dnnl_dim_t d23[2] = {2, 3};
    OK(add(g, 2, dnnl_graph_op_relu, 1, (lt_t[]){lt_of(2, dnnl_bf16, 2, d23)}, 1,
           (lt_t[]){lt_of(3, dnnl_bf16, 2, d23)}));
    FAILS(dnnl_graph_graph_finalize(g), dnnl_invalid_graph);
    OK(dnnl_graph_graph_destroy(g));

    /* Two producers of one tensor. */
    OK(dnnl_graph_graph_create(&g, dnnl_cpu));
    OK(add(g, 1, dnnl_graph_op_relu, 1, (lt_t[]){lt2(1, 2, 3)}, 1, (lt_t[]){lt2(3, 2, 3)}));
    OK(add(g, 2, dnnl_graph_op_abs, 1, (lt_t[]){lt2(2, 2, 3)}, 1, (lt_t[]){lt2(3, 2, 3)}));
    FAILS(dnnl_graph_graph_finalize(g), dnnl_invalid_graph);
    OK(dnnl_graph_graph_destroy(g));

    /* A cycle. */
    OK(dnnl_graph_graph_create(&g, dnnl_cpu));
    OK(add(g, 1, dnnl_graph_op_relu, 1, (lt_t[]){lt2(1, 2, 3)}, 1, (lt_t[]){lt2(2, 2, 3)}));
    OK(add(g, 2, dnnl_graph_op_abs, 1, (lt_t[]){lt2(2, 2, 3)}, 1, (lt_t[]){lt2(1, 2, 3)}));
    FAILS(dnnl_graph_graph_finalize(g), dnnl_invalid_graph);
    OK(dnnl_graph_graph_destroy(g));

    /* A longer cycle through a binary op. */
    OK(dnnl_graph_graph_create(&g, dnnl_cpu));
    OK(add(g, 1, dnnl_graph_op_add, 2, (lt_t[]){lt2(1, 2, 3), lt2(4, 2, 3)}, 1, (lt_t[]){lt2(2, 2, 3)}));
    OK(add(g, 2, dnnl_graph_op_relu, 1, (lt_t[]){lt2(2, 2, 3)}, 1, (lt_t[]){lt2(3, 2, 3)}));
    OK(add(g, 3, dnnl_graph_op_abs, 1, (lt_t[]){lt2(3, 2, 3)}, 1, (lt_t[]){lt2(4, 2, 3)}));
    FAILS(dnnl_graph_graph_finalize(g), dnnl_invalid_graph);
    OK(dnnl_graph_graph_destroy(g));

    /* Success, twice; is_finalized. */
    g = mlp_graph(dnnl_fpmath_mode_strict, false);
    OK(dnnl_graph_graph_is_finalized(g, &fin));
    CHECK_EQ_INT(fin, 0);
    OK(dnnl_graph_graph_finalize(g));
    OK(dnnl_graph_graph_is_finalized(g, &fin));
    CHECK_EQ_INT(fin, 1);
    OK(dnnl_graph_graph_finalize(g));
    OK(dnnl_graph_graph_is_finalized(g, &fin));
    CHECK_EQ_INT(fin, 1);
    FAILS(dnnl_graph_graph_is_finalized(NULL, &fin), dnnl_invalid_arguments);
    FAILS(dnnl_graph_graph_is_finalized(g, NULL), dnnl_invalid_arguments);
    OK(dnnl_graph_graph_destroy(g));

    /* An empty graph finalizes and yields no partition. */
    OK(dnnl_graph_graph_create(&g, dnnl_cpu));
    OK(dnnl_graph_graph_finalize(g));
    OK(dnnl_graph_graph_filter(g, dnnl_graph_partition_policy_fusion));
    size_t n = 9;
    OK(dnnl_graph_graph_get_partition_num(g, &n));
    CHECK_EQ_INT(n, 0);
    OK(dnnl_graph_graph_destroy(g));
}

static void test_filter(void) {
    dnnl_graph_graph_t g = mlp_graph(dnnl_fpmath_mode_strict, false);
    size_t n = 9;
    FAILS(dnnl_graph_graph_filter(NULL, dnnl_graph_partition_policy_fusion), dnnl_invalid_graph);
    FAILS(dnnl_graph_graph_filter(g, dnnl_graph_partition_policy_fusion), dnnl_invalid_graph); /* not finalized */
    FAILS(dnnl_graph_graph_get_partition_num(NULL, &n), dnnl_invalid_graph);
    OK(dnnl_graph_graph_get_partition_num(g, &n));
    CHECK_EQ_INT(n, 0); /* before any filter */
    OK(dnnl_graph_graph_finalize(g));
    OK(dnnl_graph_graph_get_partition_num(g, &n));
    CHECK_EQ_INT(n, 0);

    /* Fusion: MatMul + Add + ReLU, then SoftMax. */
    parts_t parts;
    pt_test_get_parts(g, dnnl_graph_partition_policy_fusion, &parts);
    CHECK_EQ_INT(parts.n, 2);
    const size_t all[] = {1, 2, 3, 4};
    check_cover_and_order(&parts, all, 4);
    CHECK_EQ_INT(part_of_op(&parts, 1), 0);
    CHECK_EQ_INT(part_of_op(&parts, 2), 0);
    CHECK_EQ_INT(part_of_op(&parts, 3), 0);
    CHECK_EQ_INT(part_of_op(&parts, 4), 1);

    dnnl_graph_partition_t arr[4] = {NULL};
    FAILS(dnnl_graph_graph_get_partitions(NULL, 2, arr), dnnl_invalid_graph);
    FAILS(dnnl_graph_graph_get_partitions(g, 2, NULL), dnnl_invalid_graph);
    FAILS(dnnl_graph_graph_get_partitions(g, 0, arr), dnnl_invalid_graph);
    pt_test_free_parts(&parts);

    /* Debug: one partition per op, all supported here. */
    pt_test_get_parts(g, dnnl_graph_partition_policy_debug, &parts);
    CHECK_EQ_INT(parts.n, 4);
    check_cover_and_order(&parts, all, 4);
    for (size_t i = 0; i < parts.n; ++i) {
        size_t k = 0;
        OK(dnnl_graph_partition_get_op_num(parts.p[i], &k));
        CHECK_EQ_INT(k, 1);
        CHECK_EQ_INT(part_of_op(&parts, all[i]), (int)i); /* graph order kept */
    }
    pt_test_free_parts(&parts);

    /* Filtering again replaces the previous result. */
    pt_test_get_parts(g, dnnl_graph_partition_policy_fusion, &parts);
    CHECK_EQ_INT(parts.n, 2);
    release(g, &parts);
}

/* End and Wildcard are accepted; each becomes an unsupported single-op
 * partition, and compiling such a partition is refused. */
static void test_end_wildcard(void) {
    dnnl_graph_graph_t g = NULL;
    OK(dnnl_graph_graph_create(&g, dnnl_cpu));
    OK(add(g, 1, dnnl_graph_op_relu, 1, (lt_t[]){lt2(1, 2, 3)}, 1, (lt_t[]){lt2(2, 2, 3)}));
    OK(add(g, 2, dnnl_graph_op_wildcard, 1, (lt_t[]){lt2(2, 2, 3)}, 1, (lt_t[]){lt2(3, 2, 3)}));
    OK(add(g, 3, dnnl_graph_op_end, 1, (lt_t[]){lt2(3, 2, 3)}, 0, NULL));
    OK(add(g, 4, dnnl_graph_op_end, 1, (lt_t[]){lt2(2, 2, 3)}, 0, NULL));
    /* Wildcard with no inputs and two outputs is legal too. */
    OK(add(g, 5, dnnl_graph_op_wildcard, 0, NULL, 2, (lt_t[]){lt2(5, 2, 3), lt2(6, 1, 1)}));
    OK(dnnl_graph_graph_finalize(g));
    parts_t parts;
    pt_test_get_parts(g, dnnl_graph_partition_policy_fusion, &parts);
    CHECK_EQ_INT(parts.n, 5);
    const size_t all[] = {1, 2, 3, 4, 5};
    check_cover_and_order(&parts, all, 5);
    for (size_t i = 0; i < parts.n; ++i) {
        size_t ids[8];
        size_t n = op_ids(parts.p[i], ids, 8);
        CHECK_EQ_INT(n, 1);
        uint8_t sup = 9;
        OK(dnnl_graph_partition_is_supported(parts.p[i], &sup));
        CHECK_EQ_INT(sup, ids[0] == 1 ? 1 : 0);
        if (ids[0] == 1) {
            /* ReLU's output feeds an End inside no partition of its own: it is an output port. */
            lt_t out[4];
            CHECK_EQ_INT(ports(parts.p[i], false, out, 4), 1);
            CHECK_EQ_INT(out[0].id, 2);
        }
        if (sup) continue;
        dnnl_graph_compiled_partition_t cp = NULL;
        OK(dnnl_graph_compiled_partition_create(&cp, parts.p[i]));
        lt_t in[4], out[4];
        size_t nin = ports(parts.p[i], true, in, 4), nout = ports(parts.p[i], false, out, 4);
        const lt_t *pin[4], *pout[4];
        for (size_t k = 0; k < nin; ++k) pin[k] = &in[k];
        for (size_t k = 0; k < nout; ++k) pout[k] = &out[k];
        FAILS(dnnl_graph_partition_compile(parts.p[i], cp, nin, pin, nout, pout, eng), dnnl_invalid_arguments);
        OK(dnnl_graph_compiled_partition_destroy(cp));
    }
    release(g, &parts);
}

/* A larger graph added in reverse order: cover, topological order, debug. */
static void test_cover_and_order(void) {
    dnnl_graph_graph_t g = NULL;
    OK(dnnl_graph_graph_create(&g, dnnl_cpu));
    /* 1 MatMul(t1,t2)->t3; 2 Add(t3,t4)->t5; 3 ReLU t5->t6; 4 SoftMax t6->t7;
     * 5 End t7; 6 Wildcard t6->t8; 7 Abs t8->t9; 8 Multiply(t9,t7)->t10; 9 End t10 */
    OK(add(g, 9, dnnl_graph_op_end, 1, (lt_t[]){lt2(10, 4, 16)}, 0, NULL));
    OK(add(g, 8, dnnl_graph_op_multiply, 2, (lt_t[]){lt2(9, 4, 16), lt2(7, 4, 16)}, 1, (lt_t[]){lt2(10, 4, 16)}));
    OK(add(g, 7, dnnl_graph_op_abs, 1, (lt_t[]){lt2(8, 4, 16)}, 1, (lt_t[]){lt2(9, 4, 16)}));
    OK(add(g, 6, dnnl_graph_op_wildcard, 1, (lt_t[]){lt2(6, 4, 16)}, 1, (lt_t[]){lt2(8, 4, 16)}));
    OK(add(g, 5, dnnl_graph_op_end, 1, (lt_t[]){lt2(7, 4, 16)}, 0, NULL));
    OK(add(g, 4, dnnl_graph_op_softmax, 1, (lt_t[]){lt2(6, 4, 16)}, 1, (lt_t[]){lt2(7, 4, 16)}));
    OK(add(g, 3, dnnl_graph_op_relu, 1, (lt_t[]){lt2(5, 4, 16)}, 1, (lt_t[]){lt2(6, 4, 16)}));
    OK(add(g, 2, dnnl_graph_op_add, 2, (lt_t[]){lt2(3, 4, 16), lt2(4, 1, 16)}, 1, (lt_t[]){lt2(5, 4, 16)}));
    OK(add(g, 1, dnnl_graph_op_matmul, 2, (lt_t[]){lt2(1, 4, 8), lt2(2, 8, 16)}, 1, (lt_t[]){lt2(3, 4, 16)}));
    OK(dnnl_graph_graph_finalize(g));
    const size_t all[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    parts_t parts;
    pt_test_get_parts(g, dnnl_graph_partition_policy_fusion, &parts);
    CHECK(parts.n >= 2 && parts.n <= 9);
    check_cover_and_order(&parts, all, 9);
    /* Op-level order inside the partition list too. */
    CHECK(part_of_op(&parts, 1) < part_of_op(&parts, 4));
    CHECK(part_of_op(&parts, 3) < part_of_op(&parts, 6));
    CHECK(part_of_op(&parts, 6) < part_of_op(&parts, 7));
    CHECK(part_of_op(&parts, 7) <= part_of_op(&parts, 8));
    CHECK(part_of_op(&parts, 4) <= part_of_op(&parts, 8));
    CHECK(part_of_op(&parts, 8) < part_of_op(&parts, 9));
    pt_test_free_parts(&parts);

    pt_test_get_parts(g, dnnl_graph_partition_policy_debug, &parts);
    CHECK_EQ_INT(parts.n, 9);
    check_cover_and_order(&parts, all, 9);
    release(g, &parts);
}

/* A = MatMul(t1,t2)->t3; C = c_kind(t3)->t10 (c_kind < 0: no C, t10 an
 * input); B = Add(t3,t10)->t5; finalized and partitioned (fusion policy). */
static dnnl_graph_graph_t abc_graph(int c_kind, parts_t *parts) {
    dnnl_graph_graph_t g = NULL;
    OK(dnnl_graph_graph_create(&g, dnnl_cpu));
    OK(add(g, 1, dnnl_graph_op_matmul, 2, (lt_t[]){lt2(1, 4, 8), lt2(2, 8, 16)}, 1, (lt_t[]){lt2(3, 4, 16)}));
    if (c_kind >= 0)
        OK(add(g, 2, (dnnl_graph_op_kind_t)c_kind, 1, (lt_t[]){lt2(3, 4, 16)}, 1, (lt_t[]){lt2(10, 4, 16)}));
    OK(add(g, 3, dnnl_graph_op_add, 2, (lt_t[]){lt2(3, 4, 16), lt2(10, 4, 16)}, 1, (lt_t[]){lt2(5, 4, 16)}));
    OK(dnnl_graph_graph_finalize(g));
    pt_test_get_parts(g, dnnl_graph_partition_policy_fusion, parts);
    return g;
}

/* Seed 001: C consumes A's output and produces B's input, so A and B must
 * not share a partition; without C they may (and here do) fuse. */
static void test_seed_no_cycle(void) {
    parts_t parts;
    dnnl_graph_graph_t g = abc_graph(dnnl_graph_op_wildcard, &parts);
    const size_t all3[] = {1, 2, 3};
    check_cover_and_order(&parts, all3, 3);
    int pa = part_of_op(&parts, 1), pc = part_of_op(&parts, 2), pb = part_of_op(&parts, 3);
    CHECK(pa >= 0 && pb >= 0 && pc >= 0);
    CHECK(pa != pb);
    CHECK(pa < pc);
    CHECK(pc < pb);
    release(g, &parts);

    /* Same shape of graph with C a supported op (ReLU). */
    g = abc_graph(dnnl_graph_op_relu, &parts);
    check_cover_and_order(&parts, all3, 3);
    pa = part_of_op(&parts, 1);
    pc = part_of_op(&parts, 2);
    pb = part_of_op(&parts, 3);
    CHECK(pa >= 0 && pb >= 0 && pc >= 0);
    if (pa == pb) CHECK(pc == pa); /* together only with C inside */
    CHECK(pa <= pc && pc <= pb);
    release(g, &parts);

    /* Without C: A and B fuse into one partition. */
    g = abc_graph(-1, &parts);
    CHECK_EQ_INT(parts.n, 1);
    CHECK_EQ_INT(part_of_op(&parts, 1), part_of_op(&parts, 3));
    release(g, &parts);
}

/* ---- partition -------------------------------------------------------- */

static void test_partition_queries(void) {
    mlp_t m;
    if (!mlp_parts(&m)) return;
    dnnl_graph_partition_t p = m.parts.p[0];
    size_t n = 0, ids[8] = {0};
    OK(dnnl_graph_partition_get_op_num(p, &n));
    CHECK_EQ_INT(n, 3);
    OK(dnnl_graph_partition_get_ops(p, 3, ids));
    CHECK_EQ_INT(ids[0] + ids[1] + ids[2], 6);
    CHECK(ids[0] != ids[1] && ids[1] != ids[2] && ids[0] != ids[2]);
    for (size_t k = 2; k <= 4; k += 2) /* one short, one over */
        FAILS(dnnl_graph_partition_get_ops(p, k, ids), dnnl_invalid_arguments);
    FAILS(dnnl_graph_partition_get_ops(NULL, 3, ids), dnnl_invalid_arguments);
    FAILS(dnnl_graph_partition_get_ops(p, 3, NULL), dnnl_invalid_arguments);
    FAILS(dnnl_graph_partition_get_op_num(NULL, &n), dnnl_invalid_arguments);
    FAILS(dnnl_graph_partition_get_op_num(p, NULL), dnnl_invalid_arguments);

    size_t id0 = 0, id1 = 0;
    OK(dnnl_graph_partition_get_id(m.parts.p[0], &id0));
    OK(dnnl_graph_partition_get_id(m.parts.p[1], &id1));
    CHECK(id0 != id1);
    FAILS(dnnl_graph_partition_get_id(NULL, &id0), dnnl_invalid_arguments);
    FAILS(dnnl_graph_partition_get_id(p, NULL), dnnl_invalid_arguments);

    dnnl_engine_kind_t k = dnnl_any_engine;
    OK(dnnl_graph_partition_get_engine_kind(p, &k));
    CHECK_EQ_INT(k, dnnl_cpu);
    FAILS(dnnl_graph_partition_get_engine_kind(NULL, &k), dnnl_invalid_arguments);
    FAILS(dnnl_graph_partition_get_engine_kind(p, NULL), dnnl_invalid_arguments);

    uint8_t sup = 0;
    OK(dnnl_graph_partition_is_supported(p, &sup));
    CHECK_EQ_INT(sup, 1);
    OK(dnnl_graph_partition_is_supported(m.parts.p[1], &sup));
    CHECK_EQ_INT(sup, 1);
    FAILS(dnnl_graph_partition_is_supported(NULL, &sup), dnnl_invalid_arguments);
    FAILS(dnnl_graph_partition_is_supported(p, NULL), dnnl_invalid_arguments);

    /* Ports: inputs src, W, bias; output ReLU's dst; as recorded in the graph. */
    lt_t in[8], out[8];
    OK(dnnl_graph_partition_get_input_ports_num(p, &n));
    CHECK_EQ_INT(n, 3);
    OK(dnnl_graph_partition_get_input_ports(p, 3, in));
    bool seen[8] = {false};
    for (int i = 0; i < 3; ++i) {
        CHECK(in[i].id == 1 || in[i].id == 2 || in[i].id == 4);
        if (in[i].id < 8) seen[in[i].id] = true;
        CHECK_EQ_INT(in[i].data_type, dnnl_f32);
        CHECK_EQ_INT(in[i].ndims, 2);
        if (in[i].id == 4) {
            CHECK_EQ_INT(in[i].dims[0], 1);
            CHECK_EQ_INT(in[i].dims[1], 16);
        }
    }
    CHECK(seen[1] && seen[2] && seen[4]);
    OK(dnnl_graph_partition_get_output_ports_num(p, &n));
    CHECK_EQ_INT(n, 1);
    OK(dnnl_graph_partition_get_output_ports(p, 1, out));
    CHECK_EQ_INT(out[0].id, 6);
    CHECK_EQ_INT(out[0].data_type, dnnl_f32);
    CHECK_EQ_INT(out[0].dims[1], 16);
    for (size_t k = 0; k <= 2; k += 2) { /* counts other than 3 inputs / 1 output */
        FAILS(dnnl_graph_partition_get_input_ports(p, k + 2, in), dnnl_invalid_arguments);
        FAILS(dnnl_graph_partition_get_output_ports(p, k, out), dnnl_invalid_arguments);
    }
    FAILS(dnnl_graph_partition_get_input_ports_num(NULL, &n), dnnl_invalid_arguments);
    FAILS(dnnl_graph_partition_get_input_ports_num(p, NULL), dnnl_invalid_arguments);
    FAILS(dnnl_graph_partition_get_output_ports_num(NULL, &n), dnnl_invalid_arguments);
    FAILS(dnnl_graph_partition_get_output_ports_num(p, NULL), dnnl_invalid_arguments);
    FAILS(dnnl_graph_partition_get_input_ports(NULL, 3, in), dnnl_invalid_arguments);
    FAILS(dnnl_graph_partition_get_input_ports(p, 3, NULL), dnnl_invalid_arguments);
    FAILS(dnnl_graph_partition_get_output_ports(NULL, 1, out), dnnl_invalid_arguments);
    FAILS(dnnl_graph_partition_get_output_ports(p, 1, NULL), dnnl_invalid_arguments);

    /* The SoftMax partition consumes what the first one produces. */
    OK(dnnl_graph_partition_get_input_ports(m.parts.p[1], 1, in));
    CHECK_EQ_INT(in[0].id, 6);

    /* Ids stay unique across graphs. */
    dnnl_graph_graph_t g2 = mlp_graph(dnnl_fpmath_mode_strict, false);
    OK(dnnl_graph_graph_finalize(g2));
    parts_t parts2;
    pt_test_get_parts(g2, dnnl_graph_partition_policy_fusion, &parts2);
    for (size_t i = 0; i < parts2.n; ++i) {
        size_t other = 0;
        OK(dnnl_graph_partition_get_id(parts2.p[i], &other));
        CHECK(other != id0 && other != id1);
    }
    pt_test_free_parts(&parts2);
    OK(dnnl_graph_graph_destroy(g2));

    OK(dnnl_graph_partition_destroy(NULL));
    release(m.g, &m.parts);
}

/* Repeated ids: an op consuming one tensor twice.  Compile and execute
 * accept the port list as returned (matching by id). */
static void test_repeated_ports(void) {
    dnnl_graph_graph_t g = NULL;
    OK(dnnl_graph_graph_create(&g, dnnl_cpu));
    OK(add(g, 1, dnnl_graph_op_multiply, 2, (lt_t[]){lt2(1, 2, 3), lt2(1, 2, 3)}, 1, (lt_t[]){lt2(2, 2, 3)}));
    OK(dnnl_graph_graph_finalize(g));
    parts_t parts;
    pt_test_get_parts(g, dnnl_graph_partition_policy_fusion, &parts);
    CHECK_EQ_INT(parts.n, 1);
    if (parts.n == 1) {
        lt_t in[4], out[4];
        size_t nin = ports(parts.p[0], true, in, 4), nout = ports(parts.p[0], false, out, 4);
        CHECK(nin == 1 || nin == 2);
        for (size_t i = 0; i < nin; ++i) CHECK_EQ_INT(in[i].id, 1);
        CHECK_EQ_INT(nout, 1);
        const lt_t *pin[4], *pout[4];
        for (size_t i = 0; i < nin; ++i) pin[i] = &in[i];
        pout[0] = &out[0];
        dnnl_graph_compiled_partition_t cp = NULL;
        OK(dnnl_graph_compiled_partition_create(&cp, parts.p[0]));
        OK(dnnl_graph_partition_compile(parts.p[0], cp, nin, pin, nout, pout, eng));
        /* Graph and partition may go: the compiled partition stays usable. */
        OK(dnnl_graph_graph_destroy(g));
        g = NULL;
        pt_test_free_parts(&parts);
        float x[6] = {1, -2, 3, 0.5f, -1.5f, 4}, y[6] = {0};
        dnnl_graph_tensor_t tx = NULL, ty = NULL;
        OK(dnnl_graph_tensor_create(&tx, &in[0], eng, x));
        OK(dnnl_graph_tensor_create(&ty, &out[0], eng, y));
        const_dnnl_graph_tensor_t tin[2] = {tx, tx}, tout[1] = {ty};
        OK(dnnl_graph_compiled_partition_execute(cp, strm, nin, tin, 1, tout));
        for (int i = 0; i < 6; ++i) CHECK_NEAR(y[i], (double)x[i] * x[i], 1e-6);
        memset(y, 0, sizeof y);
        OK(dnnl_graph_compiled_partition_execute(cp, strm, 1, tin, 1, tout));
        for (int i = 0; i < 6; ++i) CHECK_NEAR(y[i], (double)x[i] * x[i], 1e-6);
        OK(dnnl_graph_tensor_destroy(tx));
        OK(dnnl_graph_tensor_destroy(ty));
        OK(dnnl_graph_compiled_partition_destroy(cp));
    }
    release(g, &parts);
}

static void test_create_with_op(void) {
    dnnl_graph_op_t op = make_op(1, dnnl_graph_op_relu, 1, (lt_t[]){lt2(1, 2, 3)}, 1, (lt_t[]){lt2(2, 2, 3)});
    dnnl_graph_partition_t p = NULL;
    FAILS(dnnl_graph_partition_create_with_op(NULL, op, dnnl_cpu), dnnl_invalid_arguments);
    FAILS(dnnl_graph_partition_create_with_op(&p, NULL, dnnl_cpu), dnnl_invalid_arguments);
    OK(dnnl_graph_partition_create_with_op(&p, op, dnnl_cpu));
    OK(dnnl_graph_op_destroy(op));
    size_t n = 0, id = 0;
    OK(dnnl_graph_partition_get_op_num(p, &n));
    CHECK_EQ_INT(n, 1);
    OK(dnnl_graph_partition_get_ops(p, 1, &id));
    CHECK_EQ_INT(id, 1);
    uint8_t sup = 0;
    OK(dnnl_graph_partition_is_supported(p, &sup));
    CHECK_EQ_INT(sup, 1);
    dnnl_engine_kind_t k = dnnl_any_engine;
    OK(dnnl_graph_partition_get_engine_kind(p, &k));
    CHECK_EQ_INT(k, dnnl_cpu);
    lt_t in[2], out[2];
    CHECK_EQ_INT(ports(p, true, in, 2), 1);
    CHECK_EQ_INT(ports(p, false, out, 2), 1);
    CHECK_EQ_INT(in[0].id, 1);
    CHECK_EQ_INT(out[0].id, 2);
    /* It compiles and runs like any partition. */
    dnnl_graph_compiled_partition_t cp = NULL;
    OK(dnnl_graph_compiled_partition_create(&cp, p));
    const lt_t *pin[1] = {&in[0]}, *pout[1] = {&out[0]};
    OK(dnnl_graph_partition_compile(p, cp, 1, pin, 1, pout, eng));
    float x[6] = {-1, 2, -3, 4, -5, 6}, y[6] = {0};
    dnnl_graph_tensor_t tx = NULL, ty = NULL;
    OK(dnnl_graph_tensor_create(&tx, &in[0], eng, x));
    OK(dnnl_graph_tensor_create(&ty, &out[0], eng, y));
    const_dnnl_graph_tensor_t tin[1] = {tx}, tout[1] = {ty};
    OK(dnnl_graph_compiled_partition_execute(cp, strm, 1, tin, 1, tout));
    for (int i = 0; i < 6; ++i) CHECK_NEAR(y[i], x[i] > 0 ? x[i] : 0, 0);
    OK(dnnl_graph_tensor_destroy(tx));
    OK(dnnl_graph_tensor_destroy(ty));
    OK(dnnl_graph_compiled_partition_destroy(cp));
    OK(dnnl_graph_partition_destroy(p));

    /* An op failing its schema check. */
    op = make_op(2, dnnl_graph_op_matmul, 1, (lt_t[]){lt2(1, 2, 3)}, 1, (lt_t[]){lt2(2, 2, 3)});
    p = NULL;
    FAILS(dnnl_graph_partition_create_with_op(&p, op, dnnl_cpu), dnnl_invalid_graph_op);
    OK(dnnl_graph_op_destroy(op));

    /* An op the library cannot run: success, unsupported partition. */
    op = make_op(3, dnnl_graph_op_wildcard, 1, (lt_t[]){lt2(1, 2, 3)}, 1, (lt_t[]){lt2(2, 2, 3)});
    p = NULL;
    OK(dnnl_graph_partition_create_with_op(&p, op, dnnl_cpu));
    sup = 1;
    OK(dnnl_graph_partition_is_supported(p, &sup));
    CHECK_EQ_INT(sup, 0);
    OK(dnnl_graph_partition_destroy(p));
    OK(dnnl_graph_op_destroy(op));
}

/* Ops over empty tensors whose other extents are huge compile with a small
 * scratchpad and run (fuzz_c_api found a SoftMax over [0, 2^31] planning 16
 * GiB: the memory-bound kernels sized their staging rows by the axis alone). */
static void check_empty_op(dnnl_graph_op_kind_t kind, int nd, const dnnl_dim_t *dims, const char *attr, int64_t val) {
    lt_t x = lt_of(1, dnnl_f32, nd, dims), y = lt_of(2, dnnl_f32, nd, dims);
    dnnl_graph_op_t op = make_op(1, kind, 1, &x, 1, &y);
    if (attr && !strcmp(attr, "axis")) OK(dnnl_graph_op_set_attr_s64(op, dnnl_graph_op_attr_axis, &val, 1));
    if (attr && !strcmp(attr, "plain")) { /* LayerNorm without statistics or gamma / beta */
        const uint8_t no = 0;
        OK(dnnl_graph_op_set_attr_bool(op, dnnl_graph_op_attr_keep_stats, &no, 1));
        OK(dnnl_graph_op_set_attr_bool(op, dnnl_graph_op_attr_use_affine, &no, 1));
    }
    dnnl_graph_partition_t p = NULL;
    OK(dnnl_graph_partition_create_with_op(&p, op, dnnl_cpu));
    OK(dnnl_graph_op_destroy(op));
    dnnl_graph_compiled_partition_t cp = NULL;
    OK(dnnl_graph_compiled_partition_create(&cp, p));
    const lt_t *pin[1] = {&x}, *pout[1] = {&y};
    OK(dnnl_graph_partition_compile(p, cp, 1, pin, 1, pout, eng));
    lt_t slt;
    size_t bytes = SIZE_MAX;
    OK(dnnl_graph_compiled_partition_get_scratchpad_logical_tensor(cp, &slt));
    OK(dnnl_graph_logical_tensor_get_mem_size(&slt, &bytes));
    CHECK(bytes < ((size_t)1 << 20));
    float dummy[1] = {0};
    dnnl_graph_tensor_t tx = NULL, ty = NULL;
    OK(dnnl_graph_tensor_create(&tx, &x, eng, dummy));
    OK(dnnl_graph_tensor_create(&ty, &y, eng, dummy));
    const_dnnl_graph_tensor_t tin[1] = {tx}, tout[1] = {ty};
    OK(dnnl_graph_compiled_partition_execute(cp, strm, 1, tin, 1, tout));
    OK(dnnl_graph_tensor_destroy(tx));
    OK(dnnl_graph_tensor_destroy(ty));
    OK(dnnl_graph_compiled_partition_destroy(cp));
    OK(dnnl_graph_partition_destroy(p));
}

static void test_empty_tensors(void) {
    const dnnl_dim_t wide[2] = {0, (dnnl_dim_t)1 << 31};
    check_empty_op(dnnl_graph_op_softmax, 2, wide, "axis", 1);
    check_empty_op(dnnl_graph_op_log_softmax, 2, wide, "axis", -1);
    check_empty_op(dnnl_graph_op_layer_norm, 2, wide, "plain", 0);
    check_empty_op(dnnl_graph_op_rms_norm, 2, wide, NULL, 0);
    const dnnl_dim_t deep[3] = {1 << 20, 0, 1 << 20};
    check_empty_op(dnnl_graph_op_softmax, 3, deep, "axis", 2);
}

/* The math mode a partition reports. */
static void check_part_mode(dnnl_graph_partition_t p, dnnl_fpmath_mode_t want, int want_ati) {
    dnnl_fpmath_mode_t m = dnnl_fpmath_mode_strict;
    int ati = 0;
    OK(dnnl_graph_partition_get_fpmath_mode(p, &m, &ati));
    CHECK_EQ_INT(m, want);
    CHECK_EQ_INT(ati, want_ati);
}

static void test_partition_fpmath(void) {
    dnnl_graph_graph_t g = mlp_graph(dnnl_fpmath_mode_bf16, true);
    OK(dnnl_graph_graph_set_fpmath_mode(g, dnnl_fpmath_mode_f16, 1));
    OK(dnnl_graph_graph_finalize(g));
    parts_t parts;
    pt_test_get_parts(g, dnnl_graph_partition_policy_fusion, &parts);
    CHECK_EQ_INT(parts.n, 2);
    if (parts.n == 2) {
        /* Inherited from the graph. */
        check_part_mode(parts.p[0], dnnl_fpmath_mode_f16, 1);
        /* Partition-level wins, for that partition only. */
        OK(dnnl_graph_partition_set_fpmath_mode(parts.p[0], dnnl_fpmath_mode_tf32, 0));
        check_part_mode(parts.p[0], dnnl_fpmath_mode_tf32, 0);
        check_part_mode(parts.p[1], dnnl_fpmath_mode_f16, 1);
        OK(dnnl_graph_partition_set_fpmath_mode(parts.p[0], dnnl_fpmath_mode_strict, 1));
        check_part_mode(parts.p[0], dnnl_fpmath_mode_strict, 1);
        dnnl_fpmath_mode_t m = dnnl_fpmath_mode_strict;
        int ati = 0;
        FAILS(dnnl_graph_partition_set_fpmath_mode(NULL, dnnl_fpmath_mode_bf16, 0), dnnl_invalid_arguments);
        FAILS(dnnl_graph_partition_get_fpmath_mode(NULL, &m, &ati), dnnl_invalid_arguments);

        /* A partition with its own mode still compiles and computes (strict is exact enough). */
        dnnl_graph_compiled_partition_t cp = NULL;
        OK(dnnl_graph_compiled_partition_create(&cp, parts.p[0]));
        const lt_t x = lt2(1, 4, 8), w = lt2(2, 8, 16), b = lt2(4, 1, 16), y = lt2(6, 4, 16);
        const lt_t *pin[3] = {&x, &w, &b}, *pout[1] = {&y};
        OK(dnnl_graph_partition_compile(parts.p[0], cp, 3, pin, 1, pout, eng));
        OK(dnnl_graph_compiled_partition_destroy(cp));
    }
    release(g, &parts);
}

static void test_infer_shape(void) {
    dnnl_graph_graph_t g = NULL;
    OK(dnnl_graph_graph_create(&g, dnnl_cpu));
    /* Graph recorded with unknown intermediate and output shapes. */
    OK(add(g, 1, dnnl_graph_op_matmul, 2, (lt_t[]){lt2(1, 4, 8), lt2(2, 8, 16)}, 1,
           (lt_t[]){lt_any(3, dnnl_f32)}));
    OK(add(g, 2, dnnl_graph_op_add, 2, (lt_t[]){lt_any(3, dnnl_f32), lt2(4, 1, 16)}, 1,
           (lt_t[]){lt_any(5, dnnl_f32)}));
    OK(add(g, 3, dnnl_graph_op_relu, 1, (lt_t[]){lt_any(5, dnnl_f32)}, 1, (lt_t[]){lt_any(6, dnnl_f32)}));
    OK(dnnl_graph_graph_finalize(g));
    parts_t parts;
    pt_test_get_parts(g, dnnl_graph_partition_policy_fusion, &parts);
    CHECK_EQ_INT(parts.n, 1);
    if (parts.n == 1) {
        dnnl_graph_partition_t p = parts.p[0];
        const lt_t x = lt2(1, 4, 8), w = lt2(2, 8, 16), b = lt2(4, 1, 16);
        const lt_t *pin[3] = {&x, &w, &b};
        lt_t y = lt_any(6, dnnl_f32);
        lt_t *pout[1] = {&y};
        OK(dnnl_graph_partition_infer_shape(p, 3, pin, 1, pout));
        CHECK_EQ_INT(y.ndims, 2);
        CHECK_EQ_INT(y.dims[0], 4);
        CHECK_EQ_INT(y.dims[1], 16);
        CHECK_EQ_INT(y.id, 6);

        /* Odd sizes through the same partition. */
        const lt_t x2 = lt2(1, 3, 5), w2 = lt2(2, 5, 7), b2 = lt2(4, 1, 7);
        const lt_t *pin2[3] = {&x2, &w2, &b2};
        y = lt_any(6, dnnl_f32);
        OK(dnnl_graph_partition_infer_shape(p, 3, pin2, 1, pout));
        CHECK_EQ_INT(y.ndims, 2);
        CHECK_EQ_INT(y.dims[0], 3);
        CHECK_EQ_INT(y.dims[1], 7);

        /* A fully known output is left as it is. */
        y = lt2(6, 4, 16);
        lt_t before = y;
        OK(dnnl_graph_partition_infer_shape(p, 3, pin, 1, pout));
        CHECK(memcmp(&y, &before, sizeof y) == 0);

        /* Unknown input shape: nothing to derive from. */
        const lt_t xu = lt_any(1, dnnl_f32);
        const lt_t *pinu[3] = {&xu, &w, &b};
        y = lt_any(6, dnnl_f32);
        FAILS(dnnl_graph_partition_infer_shape(p, 3, pinu, 1, pout), dnnl_invalid_shape);
        const lt_t xu2 = lt2(1, UNK, 8);
        const lt_t *pinu2[3] = {&xu2, &w, &b};
        y = lt_any(6, dnnl_f32);
        FAILS(dnnl_graph_partition_infer_shape(p, 3, pinu2, 1, pout), dnnl_invalid_shape);
        /* Inconsistent shapes. */
        const lt_t xk = lt2(1, 4, 9);
        const lt_t *pink[3] = {&xk, &w, &b};
        y = lt_any(6, dnnl_f32);
        FAILS(dnnl_graph_partition_infer_shape(p, 3, pink, 1, pout), dnnl_invalid_shape);
        FAILS(dnnl_graph_partition_infer_shape(NULL, 3, pin, 1, pout), dnnl_invalid_arguments);
    }
    release(g, &parts);
}

/* ---- compiled partition ---------------------------------------------- */

static void test_compile_errors(void) {
    mlp_t m;
    if (!mlp_parts(&m)) return;
    dnnl_graph_partition_t p = m.parts.p[0];
    dnnl_graph_compiled_partition_t cp = NULL;
    FAILS(dnnl_graph_compiled_partition_create(NULL, p), dnnl_invalid_arguments);
    FAILS(dnnl_graph_compiled_partition_create(&cp, NULL), dnnl_invalid_arguments);
    OK(dnnl_graph_compiled_partition_create(&cp, p));

    const lt_t x = lt2(1, 4, 8), w = lt2(2, 8, 16), b = lt2(4, 1, 16), y = lt2(6, 4, 16);
    const lt_t *pin[3] = {&x, &w, &b}, *pout[1] = {&y};
    FAILS(dnnl_graph_partition_compile(NULL, cp, 3, pin, 1, pout, eng), dnnl_invalid_arguments);
    FAILS(dnnl_graph_partition_compile(p, NULL, 3, pin, 1, pout, eng), dnnl_invalid_arguments);
    FAILS(dnnl_graph_partition_compile(p, cp, 3, pin, 1, pout, NULL), dnnl_invalid_arguments);

    /* A missing input. */
    const lt_t *pin_missing[2] = {&x, &w};
    FAILS(dnnl_graph_partition_compile(p, cp, 2, pin_missing, 1, pout, eng), dnnl_invalid_arguments);
    /* A data type that differs from the port's. */
    const lt_t x_bf16 = lt_of(1, dnnl_bf16, 2, (dnnl_dim_t[]){4, 8});
    const lt_t *pin_dt[3] = {&x_bf16, &w, &b};
    dnnl_status_t st = dnnl_graph_partition_compile(p, cp, 3, pin_dt, 1, pout, eng);
    CHECK(st == dnnl_invalid_arguments || st == dnnl_invalid_data_type);
    /* Unknown input shapes. */
    const lt_t x_unk = lt_any(1, dnnl_f32);
    const lt_t *pin_unk[3] = {&x_unk, &w, &b};
    FAILS(dnnl_graph_partition_compile(p, cp, 3, pin_unk, 1, pout, eng), dnnl_invalid_shape);
    const lt_t x_unk2 = lt2(1, 4, UNK);
    const lt_t *pin_unk2[3] = {&x_unk2, &w, &b};
    FAILS(dnnl_graph_partition_compile(p, cp, 3, pin_unk2, 1, pout, eng), dnnl_invalid_shape);
    /* Inconsistent shapes: K mismatch; bias not broadcastable; wrong known output. */
    const lt_t x_k = lt2(1, 4, 7);
    const lt_t *pin_k[3] = {&x_k, &w, &b};
    FAILS(dnnl_graph_partition_compile(p, cp, 3, pin_k, 1, pout, eng), dnnl_invalid_shape);
    const lt_t b_bad = lt2(4, 1, 15);
    const lt_t *pin_b[3] = {&x, &w, &b_bad};
    FAILS(dnnl_graph_partition_compile(p, cp, 3, pin_b, 1, pout, eng), dnnl_invalid_shape);
    const lt_t y_bad = lt2(6, 4, 15);
    const lt_t *pout_bad[1] = {&y_bad};
    FAILS(dnnl_graph_partition_compile(p, cp, 3, pin, 1, pout_bad, eng), dnnl_invalid_shape);
    /* (engine kind mismatch needs a second engine kind: not testable on a CPU-only build) */

    /* After all the failures, a good compile still works; inputs in any order. */
    const lt_t *pin_perm[3] = {&b, &x, &w};
    OK(dnnl_graph_partition_compile(p, cp, 3, pin_perm, 1, pout, eng));
    OK(dnnl_graph_compiled_partition_destroy(cp));
    OK(dnnl_graph_compiled_partition_destroy(NULL));
    release(m.g, &m.parts);
}

static void test_query_and_hints(void) {
    mlp_t m;
    if (!mlp_parts(&m)) return;
    dnnl_graph_partition_t p = m.parts.p[0];
    dnnl_graph_compiled_partition_t cp = NULL;
    OK(dnnl_graph_compiled_partition_create(&cp, p));
    lt_t q;

    /* Never compiled: the documented dnnl_invalid_arguments (oneDNN returns
     * an "empty" logical tensor; README "Deviations"), output untouched. */
    memset(&q, 0x5a, sizeof q);
    FAILS(dnnl_graph_compiled_partition_query_logical_tensor(cp, 6, &q), dnnl_invalid_arguments);
    CHECK_EQ_INT(q.ndims, 0x5a5a5a5a);

    const lt_t x = lt2(1, 4, 8), w = lt2(2, 8, 16), b = lt2(4, 1, 16), y = lt_any(6, dnnl_f32);
    const lt_t *pin[3] = {&x, &w, &b}, *pout[1] = {&y};
    OK(dnnl_graph_partition_compile(p, cp, 3, pin, 1, pout, eng));
    CHECK_EQ_INT(y.ndims, -1); /* the caller's logical tensors are not modified */

    /* An `any` output with unknown dims resolves to dense strided with inferred dims. */
    memset(&q, 0, sizeof q);
    OK(dnnl_graph_compiled_partition_query_logical_tensor(cp, 6, &q));
    CHECK_EQ_INT(q.id, 6);
    CHECK_EQ_INT(q.data_type, dnnl_f32);
    CHECK_EQ_INT(q.ndims, 2);
    CHECK_EQ_INT(q.dims[0], 4);
    CHECK_EQ_INT(q.dims[1], 16);
    CHECK_EQ_INT(q.layout_type, dnnl_graph_layout_type_strided);
    CHECK_EQ_INT(q.layout.strides[0], 16);
    CHECK_EQ_INT(q.layout.strides[1], 1);
    size_t sz = 0;
    OK(dnnl_graph_logical_tensor_get_mem_size(&q, &sz));
    CHECK_EQ_INT(sz, 4 * 16 * 4);
    /* Inputs are reported too. */
    OK(dnnl_graph_compiled_partition_query_logical_tensor(cp, 4, &q));
    CHECK_EQ_INT(q.id, 4);
    CHECK_EQ_INT(q.dims[1], 16);
    uint8_t eq = 0;
    OK(dnnl_graph_logical_tensor_is_equal(&q, &b, &eq));
    CHECK_EQ_INT(eq, 1);
    /* Unknown id: the documented dnnl_invalid_arguments. */
    FAILS(dnnl_graph_compiled_partition_query_logical_tensor(cp, 999, &q), dnnl_invalid_arguments);
    FAILS(dnnl_graph_compiled_partition_query_logical_tensor(NULL, 6, &q), dnnl_invalid_arguments);
    FAILS(dnnl_graph_compiled_partition_query_logical_tensor(cp, 6, NULL), dnnl_invalid_arguments);

    /* In-place hints name an input port and an output port. */
    size_t npairs = 99;
    const dnnl_graph_inplace_pair_t *pairs = NULL;
    OK(dnnl_graph_compiled_partition_get_inplace_ports(cp, &npairs, &pairs));
    CHECK(npairs <= 3);
    for (size_t i = 0; i < npairs && pairs; ++i) {
        CHECK(pairs[i].input_id == 1 || pairs[i].input_id == 2 || pairs[i].input_id == 4);
        CHECK_EQ_INT(pairs[i].output_id, 6);
    }
    FAILS(dnnl_graph_compiled_partition_get_inplace_ports(NULL, &npairs, &pairs), dnnl_invalid_arguments);
    FAILS(dnnl_graph_compiled_partition_get_inplace_ports(cp, NULL, &pairs), dnnl_invalid_arguments);
    FAILS(dnnl_graph_compiled_partition_get_inplace_ports(cp, &npairs, NULL), dnnl_invalid_arguments);

    /* Scratchpad description format. */
    memset(&q, 0x5a, sizeof q);
    OK(dnnl_graph_compiled_partition_get_scratchpad_logical_tensor(cp, &q));
    CHECK(q.id == SIZE_MAX);
    CHECK_EQ_INT(q.ndims, 1);
    CHECK(q.dims[0] >= 0);
    CHECK_EQ_INT(q.dims[1], 0);
    CHECK_EQ_INT(q.data_type, dnnl_u8);
    CHECK_EQ_INT(q.property, dnnl_graph_tensor_property_variable);
    CHECK_EQ_INT(q.layout_type, dnnl_graph_layout_type_strided);
    CHECK_EQ_INT(q.layout.strides[0], 1);
    CHECK_EQ_INT(q.layout.strides[1], 0);
    FAILS(dnnl_graph_compiled_partition_get_scratchpad_logical_tensor(NULL, &q), dnnl_invalid_arguments);
    FAILS(dnnl_graph_compiled_partition_get_scratchpad_logical_tensor(cp, NULL), dnnl_invalid_arguments);
    OK(dnnl_graph_compiled_partition_destroy(cp));

    /* A single eltwise op partition: any in-place pair maps its input to its output. */
    dnnl_graph_compiled_partition_t cp2 = NULL;
    OK(dnnl_graph_compiled_partition_create(&cp2, m.parts.p[1]));
    const lt_t s_in = lt2(6, 4, 16), s_out = lt_any(7, dnnl_f32);
    const lt_t *sin[1] = {&s_in}, *sout[1] = {&s_out};
    OK(dnnl_graph_partition_compile(m.parts.p[1], cp2, 1, sin, 1, sout, eng));
    OK(dnnl_graph_compiled_partition_get_inplace_ports(cp2, &npairs, &pairs));
    for (size_t i = 0; i < npairs && pairs; ++i) {
        CHECK_EQ_INT(pairs[i].input_id, 6);
        CHECK_EQ_INT(pairs[i].output_id, 7);
    }
    OK(dnnl_graph_compiled_partition_destroy(cp2));
    release(m.g, &m.parts);
}

static int n_alloc, n_free;
static void *count_alloc(size_t size, size_t alignment) {
    ++n_alloc;
    size_t a = alignment >= sizeof(void *) ? alignment : 64;
    size_t rounded = (size + a - 1) / a * a;
    return aligned_alloc(a, rounded ? rounded : a);
}
static void count_free(void *p) {
    ++n_free;
    free(p);
}

static void test_execute(void) {
    mlp_t m;
    if (!mlp_parts(&m)) return;
    /* The graph is no longer needed: partitions stay valid. */
    OK(dnnl_graph_graph_destroy(m.g));
    dnnl_graph_partition_t p = m.parts.p[0];
    dnnl_graph_compiled_partition_t cp = NULL, never = NULL;
    OK(dnnl_graph_compiled_partition_create(&cp, p));
    OK(dnnl_graph_compiled_partition_create(&never, p));
    const lt_t x = lt2(1, 4, 8), w = lt2(2, 8, 16), b = lt2(4, 1, 16), y = lt_any(6, dnnl_f32);
    const lt_t *pin[3] = {&x, &w, &b}, *pout[1] = {&y};
    OK(dnnl_graph_partition_compile(p, cp, 3, pin, 1, pout, eng));
    /* The partition handle may go once compiled. */
    OK(dnnl_graph_partition_destroy(m.parts.p[0]));
    m.parts.p[0] = NULL;
    lt_t yq;
    OK(dnnl_graph_compiled_partition_query_logical_tensor(cp, 6, &yq));

    float xd[32], wd[128], bd[16], yd[64];
    double ref[64];
    fill(xd, 32, 1);
    fill(wd, 128, 2);
    fill(bd, 16, 3);
    ref_mm_add_relu(xd, wd, bd, ref, 4, 8, 16);
    dnnl_graph_tensor_t tx = NULL, tw = NULL, tb = NULL, ty = NULL;
    OK(dnnl_graph_tensor_create(&tx, &x, eng, xd));
    OK(dnnl_graph_tensor_create(&tw, &w, eng, wd));
    OK(dnnl_graph_tensor_create(&tb, &b, eng, bd));
    OK(dnnl_graph_tensor_create(&ty, &yq, eng, yd));
    const_dnnl_graph_tensor_t tin[3] = {tx, tw, tb}, tout[1] = {ty};

    memset(yd, 0, sizeof yd);
    OK(dnnl_graph_compiled_partition_execute(cp, strm, 3, tin, 1, tout));
    OK(dnnl_stream_wait(strm));
    int bad = 0;
    for (int i = 0; i < 64; ++i) bad += !(yd[i] - ref[i] < 1e-5 && ref[i] - yd[i] < 1e-5);
    CHECK_EQ_INT(bad, 0);
    /* Tensors in another order: matched by id. */
    const_dnnl_graph_tensor_t tin_perm[3] = {tb, tx, tw};
    memset(yd, 0, sizeof yd);
    OK(dnnl_graph_compiled_partition_execute(cp, strm, 3, tin_perm, 1, tout));
    CHECK_NEAR(yd[5], ref[5], 1e-5);
    CHECK_NEAR(yd[63], ref[63], 1e-5);

    /* Errors. */
    FAILS(dnnl_graph_compiled_partition_execute(NULL, strm, 3, tin, 1, tout), dnnl_invalid_arguments);
    FAILS(dnnl_graph_compiled_partition_execute(cp, NULL, 3, tin, 1, tout), dnnl_invalid_arguments);
    FAILS(dnnl_graph_compiled_partition_execute(cp, strm, 3, NULL, 1, tout), dnnl_invalid_arguments);
    FAILS(dnnl_graph_compiled_partition_execute(cp, strm, 3, tin, 1, NULL), dnnl_invalid_arguments);
    FAILS(dnnl_graph_compiled_partition_execute(cp, strm, 0, NULL, 1, tout), dnnl_invalid_arguments);
    FAILS(dnnl_graph_compiled_partition_execute(never, strm, 3, tin, 1, tout), dnnl_invalid_arguments);
    FAILS(dnnl_graph_compiled_partition_execute(cp, strm, 2, tin, 1, tout), dnnl_invalid_arguments); /* bias missing */
    FAILS(dnnl_graph_compiled_partition_execute(cp, strm, 3, tin, 0, tout), dnnl_invalid_arguments); /* dst missing */
    const lt_t x_dims = lt2(1, 4, 9);
    const lt_t x_dt = lt_of(1, dnnl_bf16, 2, (dnnl_dim_t[]){4, 8});
    dnnl_graph_tensor_t tbad = NULL;
    OK(dnnl_graph_tensor_create(&tbad, &x_dims, eng, xd));
    const_dnnl_graph_tensor_t tin_bad[3] = {tbad, tw, tb};
    FAILS(dnnl_graph_compiled_partition_execute(cp, strm, 3, tin_bad, 1, tout), dnnl_invalid_arguments);
    OK(dnnl_graph_tensor_destroy(tbad));
    OK(dnnl_graph_tensor_create(&tbad, &x_dt, eng, xd));
    tin_bad[0] = tbad;
    FAILS(dnnl_graph_compiled_partition_execute(cp, strm, 3, tin_bad, 1, tout), dnnl_invalid_arguments);
    OK(dnnl_graph_tensor_destroy(tbad));
    const lt_t y_dims = lt2(6, 4, 17);
    OK(dnnl_graph_tensor_create(&tbad, &y_dims, eng, yd));
    const_dnnl_graph_tensor_t tout_bad[1] = {tbad};
    FAILS(dnnl_graph_compiled_partition_execute(cp, strm, 3, tin, 1, tout_bad), dnnl_invalid_arguments);
    OK(dnnl_graph_tensor_destroy(tbad));

    /* execute_v2: library scratchpad (NULL) and a user scratchpad. */
    memset(yd, 0, sizeof yd);
    OK(dnnl_graph_compiled_partition_execute_v2(cp, strm, 3, tin, 1, tout, NULL));
    CHECK_NEAR(yd[17], ref[17], 1e-5);
    lt_t slt;
    OK(dnnl_graph_compiled_partition_get_scratchpad_logical_tensor(cp, &slt));
    size_t ssize = 0;
    OK(dnnl_graph_logical_tensor_get_mem_size(&slt, &ssize));
    CHECK_EQ_INT(ssize, slt.dims[0]);
    unsigned char *sbuf = malloc(ssize + 64);
    dnnl_graph_tensor_t ts = NULL;
    OK(dnnl_graph_tensor_create(&ts, &slt, eng, sbuf));
    memset(yd, 0, sizeof yd);
    OK(dnnl_graph_compiled_partition_execute_v2(cp, strm, 3, tin, 1, tout, ts));
    bad = 0;
    for (int i = 0; i < 64; ++i) bad += !(yd[i] - ref[i] < 1e-5 && ref[i] - yd[i] < 1e-5);
    CHECK_EQ_INT(bad, 0);
    OK(dnnl_graph_tensor_destroy(ts));
    if (slt.dims[0] > 0) {
        lt_t small = slt;
        small.dims[0] = slt.dims[0] - 1;
        OK(dnnl_graph_tensor_create(&ts, &small, eng, sbuf));
        FAILS(dnnl_graph_compiled_partition_execute_v2(cp, strm, 3, tin, 1, tout, ts), dnnl_invalid_arguments);
        OK(dnnl_graph_tensor_destroy(ts));
    }
    free(sbuf);
    FAILS(dnnl_graph_compiled_partition_execute_v2(NULL, strm, 3, tin, 1, tout, NULL), dnnl_invalid_arguments);
    FAILS(dnnl_graph_compiled_partition_execute_v2(cp, NULL, 3, tin, 1, tout, NULL), dnnl_invalid_arguments);
    FAILS(dnnl_graph_compiled_partition_execute_v2(cp, strm, 3, NULL, 1, tout, NULL), dnnl_invalid_arguments);
    FAILS(dnnl_graph_compiled_partition_execute_v2(cp, strm, 3, tin, 1, NULL, NULL), dnnl_invalid_arguments);

    /* execute_with_options (an addition, docs/api.md). */
    dnnl_graph_execute_options_t opt = {.key = 7};
    memset(yd, 0, sizeof yd);
    OK(dnnl_graph_compiled_partition_execute_with_options(cp, strm, 3, tin, 1, tout, &opt));
    CHECK_NEAR(yd[33], ref[33], 1e-5);
    opt.key = 8;
    OK(dnnl_graph_compiled_partition_execute_with_options(cp, strm, 3, tin, 1, tout, &opt));
    CHECK_NEAR(yd[34], ref[34], 1e-5);
    FAILS(dnnl_graph_compiled_partition_execute_with_options(cp, strm, 3, tin, 1, tout, NULL),
          dnnl_invalid_arguments);
    FAILS(dnnl_graph_compiled_partition_execute_with_options(NULL, strm, 3, tin, 1, tout, &opt),
          dnnl_invalid_arguments);
    FAILS(dnnl_graph_compiled_partition_execute_with_options(cp, NULL, 3, tin, 1, tout, &opt),
          dnnl_invalid_arguments);
    FAILS(dnnl_graph_compiled_partition_execute_with_options(never, strm, 3, tin, 1, tout, &opt),
          dnnl_invalid_arguments);

    /* Library scratchpads come from the stream engine's allocator; the
     * stream keeps one for its next execution and frees it when destroyed. */
    dnnl_graph_allocator_t a = NULL;
    dnnl_engine_t aeng = NULL;
    dnnl_stream_t astrm = NULL;
    OK(dnnl_graph_allocator_create(&a, count_alloc, count_free));
    OK(dnnl_graph_make_engine_with_allocator(&aeng, dnnl_cpu, 0, a));
    OK(dnnl_graph_allocator_destroy(a));
    OK(dnnl_stream_create(&astrm, aeng, dnnl_stream_default_flags));
    n_alloc = n_free = 0;
    memset(yd, 0, sizeof yd);
    OK(dnnl_graph_compiled_partition_execute(cp, astrm, 3, tin, 1, tout));
    CHECK_NEAR(yd[40], ref[40], 1e-5);
    if (slt.dims[0] > 0) CHECK(n_alloc >= 1);
    const int allocated = n_alloc;
    OK(dnnl_graph_compiled_partition_execute(cp, astrm, 3, tin, 1, tout));
    CHECK_EQ_INT(n_alloc, allocated); /* the kept scratch again */
    OK(dnnl_stream_destroy(astrm));
    CHECK_EQ_INT(n_alloc, n_free);
    OK(dnnl_engine_destroy(aeng));

    OK(dnnl_graph_tensor_destroy(tx));
    OK(dnnl_graph_tensor_destroy(tw));
    OK(dnnl_graph_tensor_destroy(tb));
    OK(dnnl_graph_tensor_destroy(ty));
    OK(dnnl_graph_compiled_partition_destroy(cp));
    OK(dnnl_graph_compiled_partition_destroy(never));
    pt_test_free_parts(&m.parts);
}

int main(void) {
    OK(dnnl_engine_create(&eng, dnnl_cpu, 0));
    OK(dnnl_stream_create(&strm, eng, dnnl_stream_default_flags));
    test_graph_create_fpmath();
    test_add_op();
    test_finalize();
    test_filter();
    test_end_wildcard();
    test_cover_and_order();
    test_seed_no_cycle();
    test_partition_queries();
    test_repeated_ports();
    test_create_with_op();
    test_empty_tensors();
    test_partition_fpmath();
    test_infer_shape();
    test_compile_errors();
    test_query_and_hints();
    test_execute();
    OK(dnnl_stream_destroy(strm));
    OK(dnnl_engine_destroy(eng));
    return pt_test_summary("test_api_graph");
}
