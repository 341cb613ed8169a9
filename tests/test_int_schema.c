/* Op-schema layer: registry, add_op validation (arity, data types, type
 * variables, attributes, defaults), broadcasting per seed 003, Select's
 * two-step broadcast per seed 000, and shape inference of the non-spatial
 * ops.  Expected shapes are worked out by hand from the op definitions
 * (docs/ops.md). */
#include <stdarg.h>
#include <string.h>

#include "compile/ref_decode.h"
#include "ir/op.h"
#include "kernels/kernel.h"
#include "ops/op_schema.h"
#include "ops/schema_tables.h"
#include "ops/shape_utils.h"
#include "test_util.h"

#define U PT_UNKNOWN_DIM
#define NDIMS_OF(...) ((int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)))

/* ---- builders ---- */

static pt_lt mk_lt(dnnl_data_type_t dt, int nd, const int64_t *dims) {
    static size_t next_tid = 1000;
    pt_lt lt;
    memset(&lt, 0, sizeof lt);
    lt.id = next_tid++;
    lt.data_type = dt;
    lt.ndims = nd;
    lt.layout_type = dnnl_graph_layout_type_strided;
    for (int d = 0; d < DNNL_MAX_NDIMS; ++d) {
        lt.dims[d] = d < nd ? dims[d] : U;
        lt.layout.strides[d] = U;
    }
    return lt;
}
#define LT(dt, ...) mk_lt((dt), NDIMS_OF(__VA_ARGS__), (int64_t[]){__VA_ARGS__})
static pt_lt lt_unranked(dnnl_data_type_t dt) { return mk_lt(dt, -1, NULL); }
static pt_lt lt_scalar(dnnl_data_type_t dt) { return mk_lt(dt, 0, NULL); }

static pt_op *mkop(int kind, int nin, const pt_lt *in, int nout, const pt_lt *out) {
    static size_t next_id = 1;
    pt_op *op = pt_op_new(next_id++, (dnnl_graph_op_kind_t)kind, "test");
    for (int i = 0; i < nin; ++i) pt_op_add_input(op, &in[i]);
    for (int i = 0; i < nout; ++i) pt_op_add_output(op, &out[i]);
    return op;
}
#define OP(kind, ins, outs) \
    mkop((kind), (int)(sizeof(ins) / sizeof(pt_lt)), (ins), (int)(sizeof(outs) / sizeof(pt_lt)), (outs))

static pt_status infer(pt_op *op) { return pt_schema_infer(op, op->in, op->out); }

static bool dims_are(const pt_lt *lt, int nd, const int64_t *dims) {
    if (lt->ndims != nd) return false;
    for (int d = 0; d < nd; ++d)
        if (lt->dims[d] != dims[d]) return false;
    return true;
}
#define SHAPE_IS(lt, ...) dims_are((lt), NDIMS_OF(__VA_ARGS__), (int64_t[]){__VA_ARGS__})

static void set_str(pt_op *op, int name, const char *v) { pt_op_set_str(op, name, v); }
static void set_s64(pt_op *op, int name, int64_t v) { pt_op_set_s64(op, name, &v, 1, false); }
static void set_s64s(pt_op *op, int name, int n, const int64_t *v, bool list) {
    pt_op_set_s64(op, name, v, (size_t)n, list);
}
#define SET_LIST(op, name, ...) \
    set_s64s((op), (name), NDIMS_OF(__VA_ARGS__), (int64_t[]){__VA_ARGS__}, true)
/* Scalar-range ids (axis, groups) set with several values, as the C setter
 * does for DynamicQuantize / DynamicDequantize. */
#define SET_SLIST(op, name, ...) \
    set_s64s((op), (name), NDIMS_OF(__VA_ARGS__), (int64_t[]){__VA_ARGS__}, false)
static void set_f32(pt_op *op, int name, float v) { pt_op_set_f32(op, name, &v, 1, false); }
static void set_f32s(pt_op *op, int name, int n, const float *v) {
    pt_op_set_f32(op, name, v, (size_t)n, true);
}

/* add_op validation, then (if it passed) shape inference; hands back the
 * output and frees the op. */
static pt_status verify_infer_free(pt_op *op, pt_lt *result) {
    pt_status st = pt_schema_verify(op);
    if (st == dnnl_success) st = infer(op);
    if (result) *result = op->out[0];
    pt_op_free(op);
    return st;
}

/* verify must fail with dnnl_invalid_graph_op */
#define REJECTS(op) CHECK_EQ_INT(pt_schema_verify(op), dnnl_invalid_graph_op)
#define ACCEPTS(op) CHECK_EQ_INT(pt_schema_verify(op), dnnl_success)
/* add_op must reject `op` once `lt` (one of its ports) has type dt */
#define REJECTS_AS(op, lt, dt) \
    do { \
        (lt)->data_type = (dt); \
        REJECTS(op); \
    } while (0)
/* a new op of these ports that add_op must reject */
#define REJECTS_NEW(kind, ins, outs) \
    do { \
        pt_op *op_ = OP((kind), (ins), (outs)); \
        REJECTS(op_); \
        pt_op_free(op_); \
    } while (0)
/* accepted, and output 0 inferred with the given dims */
#define INFERS_SHAPE(op, ...) \
    do { \
        ACCEPTS(op); \
        CHECK_EQ_INT(infer(op), dnnl_success); \
        CHECK(SHAPE_IS(&(op)->out[0], __VA_ARGS__)); \
    } while (0)

/* ---- registry ---- */

static void test_registry(void) {
    /* Every one of the 88 kinds has a schema row. */
    CHECK_EQ_INT(pt_schema_count(), 88);
    int seen[dnnl_graph_op_last_symbol] = {0};
    for (int k = 0; k < dnnl_graph_op_last_symbol; ++k) {
        const pt_op_schema *s = pt_schema_of(k);
        CHECK(s != NULL);
        if (!s) {
            fprintf(stderr, "  no schema row for kind %d (%s)\n", k, pt_op_kind_name(k));
            continue;
        }
        CHECK_EQ_INT(pt_op_kind_from_name(pt_op_kind_name(k)), k);
        /* The kernel, its decoder and "can run" come from one table column:
         * all three or none (End, Wildcard). */
        bool runs = pt_op_kind_has_ref(k);
        CHECK_EQ_INT(runs, k != dnnl_graph_op_end && k != dnnl_graph_op_wildcard);
        CHECK_EQ_INT(pt_ref_kernel(k) != NULL, runs);
        CHECK_EQ_INT(pt_ref_decoder_of(k) != NULL, runs);
        seen[k]++;
    }
    for (int k = 0; k < dnnl_graph_op_last_symbol; ++k) CHECK_EQ_INT(seen[k], 1);
    CHECK(pt_schema_of(-1) == NULL);
    CHECK(pt_schema_of(dnnl_graph_op_last_symbol) == NULL);
    CHECK(strcmp(pt_op_kind_name(dnnl_graph_op_matmul), "MatMul") == 0);
    CHECK(strcmp(pt_op_kind_name(dnnl_graph_op_softmax), "SoftMax") == 0);
    CHECK(strcmp(pt_op_kind_name(dnnl_graph_op_log_softmax), "LogSoftmax") == 0);
    CHECK(strcmp(pt_op_kind_name(dnnl_graph_op_softplus), "SoftPlus") == 0);
    CHECK(strcmp(pt_op_kind_name(dnnl_graph_op_batch_norm_backward),
                 "BatchNormTrainingBackward") == 0);
    CHECK(strcmp(pt_op_kind_name(9999), "Unknown") == 0);
    CHECK_EQ_INT(pt_op_kind_from_name("BiasAddBackward"), dnnl_graph_op_bias_add_backward);
    CHECK_EQ_INT(pt_op_kind_from_name("BiasAddBackprop"), dnnl_graph_op_bias_add_backward);
    CHECK_EQ_INT(pt_op_kind_from_name("Dropout"), dnnl_graph_op_dropout);
    CHECK_EQ_INT(pt_op_kind_from_name("softmax"), -1);
    CHECK_EQ_INT(pt_op_kind_from_name("NoSuchOp"), -1);
    CHECK_EQ_INT(pt_op_kind_from_name(NULL), -1);

    /* An op of an unknown kind is rejected. */
    pt_op *op = pt_op_new(1, (dnnl_graph_op_kind_t)200, "bad");
    REJECTS(op);
    pt_op_free(op);
}

/* ---- seed 003: Broadcastable ---- */

/* Broadcasts a and b and verifies against `declared` (seed 003 Verify). */
static pt_status seed_verify(pt_lt a, pt_lt b, pt_lt *declared) {
    int n;
    int64_t d[DNNL_MAX_NDIMS];
    pt_status st = pt_broadcast_shapes(a.ndims, a.dims, b.ndims, b.dims, &n, d);
    if (st != dnnl_success) return st;
    return pt_set_output_shape(declared, n, d);
}

/* The same case through Add's schema inference. */
static pt_status seed_add(pt_lt a, pt_lt b, pt_lt declared, pt_lt *result) {
    pt_lt ins[] = {a, b}, outs[] = {declared};
    pt_op *op = OP(dnnl_graph_op_add, ins, outs);
    return verify_infer_free(op, result);
}

static void test_seed003_dim_table(void) {
    int n;
    int64_t d[DNNL_MAX_NDIMS];
    /* (?, ?) -> ? */
    CHECK_EQ_INT(pt_broadcast_shapes(1, (int64_t[]){U}, 1, (int64_t[]){U}, &n, d), dnnl_success);
    CHECK(n == 1 && d[0] == U);
    /* (?, 1) -> ? and (1, ?) -> ? */
    CHECK_EQ_INT(pt_broadcast_shapes(1, (int64_t[]){U}, 1, (int64_t[]){1}, &n, d), dnnl_success);
    CHECK(n == 1 && d[0] == U);
    CHECK_EQ_INT(pt_broadcast_shapes(1, (int64_t[]){1}, 1, (int64_t[]){U}, &n, d), dnnl_success);
    CHECK(n == 1 && d[0] == U);
    /* (?, >1) -> dim1, both orders */
    CHECK_EQ_INT(pt_broadcast_shapes(1, (int64_t[]){U}, 1, (int64_t[]){7}, &n, d), dnnl_success);
    CHECK(n == 1 && d[0] == 7);
    CHECK_EQ_INT(pt_broadcast_shapes(1, (int64_t[]){7}, 1, (int64_t[]){U}, &n, d), dnnl_success);
    CHECK(n == 1 && d[0] == 7);
    /* (1, 1) -> 1; (1, >1) -> dim1 */
    CHECK_EQ_INT(pt_broadcast_shapes(1, (int64_t[]){1}, 1, (int64_t[]){1}, &n, d), dnnl_success);
    CHECK(n == 1 && d[0] == 1);
    CHECK_EQ_INT(pt_broadcast_shapes(1, (int64_t[]){1}, 1, (int64_t[]){6}, &n, d), dnnl_success);
    CHECK(n == 1 && d[0] == 6);
    CHECK_EQ_INT(pt_broadcast_shapes(1, (int64_t[]){6}, 1, (int64_t[]){1}, &n, d), dnnl_success);
    CHECK(n == 1 && d[0] == 6);
    /* (>1, >1): equal ok, different -> error */
    CHECK_EQ_INT(pt_broadcast_shapes(1, (int64_t[]){6}, 1, (int64_t[]){6}, &n, d), dnnl_success);
    CHECK(n == 1 && d[0] == 6);
    CHECK_EQ_INT(pt_broadcast_shapes(1, (int64_t[]){6}, 1, (int64_t[]){5}, &n, d),
                 dnnl_invalid_shape);
    /* Extent 0 behaves like ">1": 0 with 1 -> 0, 0 with 5 -> error, 0 with ? -> 0. */
    CHECK_EQ_INT(pt_broadcast_shapes(1, (int64_t[]){0}, 1, (int64_t[]){1}, &n, d), dnnl_success);
    CHECK(n == 1 && d[0] == 0);
    CHECK_EQ_INT(pt_broadcast_shapes(1, (int64_t[]){0}, 1, (int64_t[]){5}, &n, d),
                 dnnl_invalid_shape);
    CHECK_EQ_INT(pt_broadcast_shapes(1, (int64_t[]){U}, 1, (int64_t[]){0}, &n, d), dnnl_success);
    CHECK(n == 1 && d[0] == 0);
    /* Rank expansion on the left and mixed dims: [?,1,3] is [1,?,1,3] against
     * [4,1,5,1] -> [4,?,5,3]. */
    CHECK_EQ_INT(pt_broadcast_shapes(3, (int64_t[]){U, 1, 3}, 4, (int64_t[]){4, 1, 5, 1}, &n, d),
                 dnnl_success);
    CHECK(n == 4 && d[0] == 4 && d[1] == U && d[2] == 5 && d[3] == 3);
    /* Scalars broadcast to anything. */
    CHECK_EQ_INT(pt_broadcast_shapes(0, NULL, 2, (int64_t[]){2, 3}, &n, d), dnnl_success);
    CHECK(n == 2 && d[0] == 2 && d[1] == 3);
    CHECK_EQ_INT(pt_broadcast_shapes(0, NULL, 0, NULL, &n, d), dnnl_success);
    CHECK_EQ_INT(n, 0);
    /* Unranked operands are dropped. */
    CHECK_EQ_INT(pt_broadcast_shapes(-1, NULL, 2, (int64_t[]){U, 3}, &n, d), dnnl_success);
    CHECK(n == 2 && d[0] == U && d[1] == 3);
    CHECK_EQ_INT(pt_broadcast_shapes(-1, NULL, -1, NULL, &n, d), dnnl_success);
    CHECK_EQ_INT(n, -1);
}

static void test_seed003_examples(void) {
    const dnnl_data_type_t I = dnnl_s32;
    pt_lt out, res;

    /* ---- correct uses ---- */
    /* (1x2, 1x2) -> 1x2 */
    out = LT(I, 1, 2);
    CHECK_EQ_INT(seed_verify(LT(I, 1, 2), LT(I, 1, 2), &out), dnnl_success);
    CHECK(SHAPE_IS(&out, 1, 2));
    CHECK_EQ_INT(seed_add(LT(I, 1, 2), LT(I, 1, 2), LT(I, 1, 2), &res), dnnl_success);
    CHECK(SHAPE_IS(&res, 1, 2));
    /* (?, ?) -> ? */
    out = LT(I, U);
    CHECK_EQ_INT(seed_verify(LT(I, U), LT(I, U), &out), dnnl_success);
    CHECK(SHAPE_IS(&out, U));
    CHECK_EQ_INT(seed_add(LT(I, U), LT(I, U), LT(I, U), &res), dnnl_success);
    CHECK(SHAPE_IS(&res, U));
    /* (1, 4) -> 4 */
    out = LT(I, 4);
    CHECK_EQ_INT(seed_verify(LT(I, 1), LT(I, 4), &out), dnnl_success);
    CHECK(SHAPE_IS(&out, 4));
    CHECK_EQ_INT(seed_add(LT(I, 1), LT(I, 4), LT(I, 4), &res), dnnl_success);
    /* single operand (4) -> ? : compatible, the declared ? is filled with 4 */
    out = LT(I, U);
    CHECK_EQ_INT(seed_verify(LT(I, 4), lt_unranked(I), &out), dnnl_success);
    CHECK(SHAPE_IS(&out, 4));
    {
        pt_lt ins[] = {LT(dnnl_f32, 4)}, outs[] = {LT(dnnl_f32, U)};
        pt_op *op = OP(dnnl_graph_op_relu, ins, outs);
        INFERS_SHAPE(op, 4);
        pt_op_free(op);
    }
    CHECK_EQ_INT(seed_add(LT(I, 4), lt_unranked(I), LT(I, U), &res), dnnl_success);
    CHECK(SHAPE_IS(&res, 4));
    /* (4, 2x3x4) -> 2x3x4 */
    out = LT(I, 2, 3, 4);
    CHECK_EQ_INT(seed_verify(LT(I, 4), LT(I, 2, 3, 4), &out), dnnl_success);
    CHECK_EQ_INT(seed_add(LT(I, 4), LT(I, 2, 3, 4), LT(I, 2, 3, 4), &res), dnnl_success);
    CHECK(SHAPE_IS(&res, 2, 3, 4));
    /* (2 x i1, 2 x i32) -> 2 x i64: element types do not matter for shapes;
     * through Add: f32 + bf16 -> f32 (a supported mixed combination). */
    out = LT(dnnl_s64, 2);
    CHECK_EQ_INT(seed_verify(LT(dnnl_boolean, 2), LT(I, 2), &out), dnnl_success);
    CHECK_EQ_INT(seed_add(LT(dnnl_f32, 2), LT(dnnl_bf16, 2), LT(dnnl_f32, 2), &res),
                 dnnl_success);
    /* (2) -> * : unranked result, no verification (the result takes [2]) */
    out = lt_unranked(I);
    CHECK_EQ_INT(seed_verify(LT(I, 2), lt_unranked(I), &out), dnnl_success);
    CHECK(SHAPE_IS(&out, 2));
    CHECK_EQ_INT(seed_add(LT(I, 2), lt_unranked(I), lt_unranked(I), &res), dnnl_success);
    CHECK(SHAPE_IS(&res, 2));
    /* (*, *) -> 2 : all operands unranked, no verification */
    out = LT(I, 2);
    CHECK_EQ_INT(seed_verify(lt_unranked(I), lt_unranked(I), &out), dnnl_success);
    CHECK(SHAPE_IS(&out, 2));
    CHECK_EQ_INT(seed_add(lt_unranked(I), lt_unranked(I), LT(I, 2), &res), dnnl_success);
    CHECK(SHAPE_IS(&res, 2));

    /* ---- incorrect uses ---- */
    /* (3, 2) -> ? : static dims differ */
    out = LT(I, U);
    CHECK_EQ_INT(seed_verify(LT(I, 3), LT(I, 2), &out), dnnl_invalid_shape);
    CHECK_EQ_INT(seed_add(LT(I, 3), LT(I, 2), LT(I, U), NULL), dnnl_invalid_shape);
    /* (3, 3) -> 1x3 : rank differs */
    out = LT(I, 1, 3);
    CHECK_EQ_INT(seed_verify(LT(I, 3), LT(I, 3), &out), dnnl_invalid_shape);
    CHECK_EQ_INT(seed_add(LT(I, 3), LT(I, 3), LT(I, 1, 3), NULL), dnnl_invalid_shape);
    /* (?, ?) -> 4 : inferred ? vs declared static */
    out = LT(I, 4);
    CHECK_EQ_INT(seed_verify(LT(I, U), LT(I, U), &out), dnnl_invalid_shape);
    CHECK_EQ_INT(seed_add(LT(I, U), LT(I, U), LT(I, 4), NULL), dnnl_invalid_shape);
    /* (2, 2) -> 4 */
    out = LT(I, 4);
    CHECK_EQ_INT(seed_verify(LT(I, 2), LT(I, 2), &out), dnnl_invalid_shape);
    CHECK_EQ_INT(seed_add(LT(I, 2), LT(I, 2), LT(I, 4), NULL), dnnl_invalid_shape);
    /* (1, 1) -> 4 : results are never broadcast */
    out = LT(I, 4);
    CHECK_EQ_INT(seed_verify(LT(I, 1), LT(I, 1), &out), dnnl_invalid_shape);
    CHECK_EQ_INT(seed_add(LT(I, 1), LT(I, 1), LT(I, 4), NULL), dnnl_invalid_shape);
}

static void test_set_output_shape(void) {
    /* static inferred fills a declared ?; dense strides are derived */
    pt_lt out = LT(dnnl_f32, U, 3, U);
    CHECK_EQ_INT(pt_set_output_shape(&out, 3, (int64_t[]){2, 3, 4}), dnnl_success);
    CHECK(SHAPE_IS(&out, 2, 3, 4));
    CHECK(out.layout.strides[0] == 12 && out.layout.strides[1] == 4 && out.layout.strides[2] == 1);
    /* dims of 1 and 0 in the dense stride rule: dims {4,1,3} -> {3,3,1} */
    out = LT(dnnl_f32, U, U, U);
    CHECK_EQ_INT(pt_set_output_shape(&out, 3, (int64_t[]){4, 1, 3}), dnnl_success);
    CHECK(out.layout.strides[0] == 3 && out.layout.strides[1] == 3 && out.layout.strides[2] == 1);
    /* user strides that are known are kept (non-dense layout) */
    out = LT(dnnl_f32, 2, U);
    out.layout.strides[0] = 1;
    out.layout.strides[1] = 2;
    CHECK_EQ_INT(pt_set_output_shape(&out, 2, (int64_t[]){2, 5}), dnnl_success);
    CHECK(SHAPE_IS(&out, 2, 5));
    CHECK(out.layout.strides[0] == 1 && out.layout.strides[1] == 2);
    /* partially inferred: strides stay unknown */
    out = LT(dnnl_f32, U, U);
    CHECK_EQ_INT(pt_set_output_shape(&out, 2, (int64_t[]){U, 5}), dnnl_success);
    CHECK(SHAPE_IS(&out, U, 5));
    CHECK(out.layout.strides[0] == U && out.layout.strides[1] == U);
    /* layout any: shape filled, layout untouched */
    out = LT(dnnl_f32, U);
    out.layout_type = dnnl_graph_layout_type_any;
    CHECK_EQ_INT(pt_set_output_shape(&out, 1, (int64_t[]){9}), dnnl_success);
    CHECK(SHAPE_IS(&out, 9));
    CHECK_EQ_INT(out.layout_type, dnnl_graph_layout_type_any);
    /* unranked declared output with unknown inferred dims */
    out = lt_unranked(dnnl_f32);
    CHECK_EQ_INT(pt_set_output_shape(&out, 2, (int64_t[]){U, 7}), dnnl_success);
    CHECK(SHAPE_IS(&out, U, 7));
    /* scalar */
    out = lt_unranked(dnnl_f32);
    CHECK_EQ_INT(pt_set_output_shape(&out, 0, NULL), dnnl_success);
    CHECK_EQ_INT(out.ndims, 0);
    /* unranked inferred: nothing changes */
    out = LT(dnnl_f32, 3, U);
    CHECK_EQ_INT(pt_set_output_shape(&out, -1, NULL), dnnl_success);
    CHECK(SHAPE_IS(&out, 3, U));
    /* static mismatch, rank mismatch */
    out = LT(dnnl_f32, 3, 4);
    CHECK_EQ_INT(pt_set_output_shape(&out, 2, (int64_t[]){3, 5}), dnnl_invalid_shape);
    CHECK_EQ_INT(pt_set_output_shape(&out, 3, (int64_t[]){1, 3, 4}), dnnl_invalid_shape);
}

static void test_unidirectional_and_axis(void) {
    int64_t t[] = {2, 3, 4, 5};
    CHECK(pt_unidirectional_ok(2, (int64_t[]){4, 5}, 4, t));
    CHECK(pt_unidirectional_ok(3, (int64_t[]){3, 1, 5}, 4, t));
    CHECK(!pt_unidirectional_ok(2, (int64_t[]){3, 5}, 4, t));
    CHECK(!pt_unidirectional_ok(5, (int64_t[]){1, 2, 3, 4, 5}, 4, t));
    CHECK(pt_unidirectional_ok(0, NULL, 4, t));
    CHECK(pt_unidirectional_ok(2, (int64_t[]){U, 5}, 4, t));
    CHECK(pt_unidirectional_ok(2, (int64_t[]){7, 5}, 4, (int64_t[]){2, 3, U, 5}));
    CHECK(pt_unidirectional_ok(-1, NULL, 4, t));
    int64_t a = 99;
    CHECK(pt_norm_axis(-1, 3, &a) && a == 2);
    CHECK(pt_norm_axis(-3, 3, &a) && a == 0);
    CHECK(pt_norm_axis(2, 3, &a) && a == 2);
    CHECK(!pt_norm_axis(3, 3, &a));
    CHECK(!pt_norm_axis(-4, 3, &a));
    CHECK(!pt_norm_axis(0, 0, &a));
    CHECK(!pt_norm_axis(0, -1, &a));
}

/* ---- seed 000: Select ---- */

static pt_status select_case(pt_lt cond, pt_lt a, pt_lt b, pt_lt dst, const char *ab,
                             pt_lt *result) {
    pt_lt ins[] = {cond, a, b}, outs[] = {dst};
    pt_op *op = OP(dnnl_graph_op_select, ins, outs);
    if (ab) set_str(op, dnnl_graph_op_attr_auto_broadcast, ab);
    return verify_infer_free(op, result);
}

static void test_select(void) {
    const dnnl_data_type_t B = dnnl_boolean, F = dnnl_f32;
    pt_lt r;
    /* cond {4,5}, S {2,3,4,5} -> {2,3,4,5} */
    CHECK_EQ_INT(select_case(LT(B, 4, 5), LT(F, 2, 3, 4, 5), LT(F, 2, 3, 4, 5), LT(F, U, U, U, U),
                             NULL, &r),
                 dnnl_success);
    CHECK(SHAPE_IS(&r, 2, 3, 4, 5));
    /* cond {3,1,5}; S = broadcast([2,1,4,5], [3,1,5]) = {2,3,4,5} */
    CHECK_EQ_INT(select_case(LT(B, 3, 1, 5), LT(F, 2, 1, 4, 5), LT(F, 3, 1, 5), lt_unranked(F),
                             NULL, &r),
                 dnnl_success);
    CHECK(SHAPE_IS(&r, 2, 3, 4, 5));
    /* cond {3,5} into {2,3,4,5} -> invalid */
    CHECK_EQ_INT(select_case(LT(B, 3, 5), LT(F, 2, 3, 4, 5), LT(F, 2, 3, 4, 5), lt_unranked(F),
                             NULL, NULL),
                 dnnl_invalid_shape);
    /* cond [2,3,4,5] with src_0 = src_1 = [5]: cond would enlarge the result */
    CHECK_EQ_INT(select_case(LT(B, 2, 3, 4, 5), LT(F, 5), LT(F, 5), lt_unranked(F), NULL, NULL),
                 dnnl_invalid_shape);
    /* step 1 failure */
    CHECK_EQ_INT(select_case(LT(B, 1), LT(F, 3), LT(F, 4), lt_unranked(F), NULL, NULL),
                 dnnl_invalid_shape);
    /* declared dst incompatible */
    CHECK_EQ_INT(select_case(LT(B, 5), LT(F, 2, 5), LT(F, 5), LT(F, 3, 5), NULL, NULL),
                 dnnl_invalid_shape);
    /* dynamic dims: cond ? is accepted, S [?, 5] from ([?,5], [5]) */
    CHECK_EQ_INT(select_case(LT(B, U, 1), LT(F, U, 5), LT(F, 5), lt_unranked(F), NULL, &r),
                 dnnl_success);
    CHECK(SHAPE_IS(&r, U, 5));
    /* auto_broadcast none: identical shapes only */
    CHECK_EQ_INT(select_case(LT(B, 2, 3), LT(F, 2, 3), LT(F, 2, 3), lt_unranked(F), "none", &r),
                 dnnl_success);
    CHECK(SHAPE_IS(&r, 2, 3));
    CHECK_EQ_INT(select_case(LT(B, 3), LT(F, 2, 3), LT(F, 2, 3), lt_unranked(F), "none", NULL),
                 dnnl_invalid_shape);
    /* add_op: cond must be boolean; src_0/src_1/dst share one type */
    CHECK_EQ_INT(select_case(LT(F, 3), LT(F, 3), LT(F, 3), LT(F, 3), NULL, NULL),
                 dnnl_invalid_graph_op);
    CHECK_EQ_INT(select_case(LT(B, 3), LT(F, 3), LT(dnnl_bf16, 3), LT(F, 3), NULL, NULL),
                 dnnl_invalid_graph_op);
    CHECK_EQ_INT(select_case(LT(B, 3), LT(F, 3), LT(F, 3), LT(F, 3), "bidirectional", NULL),
                 dnnl_invalid_graph_op);
}

/* ---- element-wise families ---- */

/* An op reading x (nin times) and writing an x-shaped output. */
static pt_op *on_x(int kind, int nin, pt_lt x) {
    pt_lt ins[2] = {x, x};
    return mkop(kind, nin, ins, 1, &x);
}

static void test_eltwise_verify(void) {
    const dnnl_data_type_t F = dnnl_f32;
    pt_lt x = LT(F, 2, 3);
    /* Rejected at add_op: arity, data type, type variables. */
    const struct {
        int kind, nin, nout;
        pt_lt in[2], out[2];
    } bad[] = {
        {dnnl_graph_op_relu, 2, 1, {x, x}, {x}},                                 /* 2 inputs */
        {dnnl_graph_op_exp, 1, 2, {x}, {x, x}},                                  /* 2 outputs */
        {dnnl_graph_op_relu, 1, 1, {LT(dnnl_s8, 2)}, {LT(dnnl_s8, 2)}},           /* dtype */
        {dnnl_graph_op_tanh, 1, 1, {x}, {LT(dnnl_bf16, 2, 3)}},                  /* src/dst type variable */
        {dnnl_graph_op_abs_backward, 2, 1, {x, LT(dnnl_f16, 2, 3)}, {x}},        /* type variable */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        pt_op *op = mkop(bad[i].kind, bad[i].nin, bad[i].in, bad[i].nout, bad[i].out);
        REJECTS(op);
        pt_op_free(op);
    }
    {
        pt_op *op = on_x(dnnl_graph_op_relu, 1, x);
        set_f32(op, dnnl_graph_op_attr_alpha, 0.1f); /* unknown attr */
        REJECTS(op);
        pt_op_free(op);
    }
    {
        pt_op *op = on_x(dnnl_graph_op_elu, 1, x); /* missing alpha */
        REJECTS(op);
        set_f32(op, dnnl_graph_op_attr_alpha, 1.0f);
        ACCEPTS(op);
        pt_op_free(op);
    }
    {
        pt_op *op = on_x(dnnl_graph_op_clamp, 1, x);
        set_f32(op, dnnl_graph_op_attr_min, -1.0f);
        set_s64(op, dnnl_graph_op_attr_max, 3); /* wrong value kind */
        REJECTS(op);
        pt_op_del_attr(op, dnnl_graph_op_attr_max); /* missing max */
        REJECTS(op);
        set_f32(op, dnnl_graph_op_attr_max, 1.0f);
        ACCEPTS(op);
        pt_op_free(op);
    }
    {
        pt_op *op = on_x(dnnl_graph_op_gelu, 1, x);
        set_str(op, dnnl_graph_op_attr_mode, "gelu_fast"); /* bad string */
        REJECTS(op);
        set_str(op, dnnl_graph_op_attr_mode, "GELU_TANH"); /* case-sensitive */
        REJECTS(op);
        pt_op_del_attr(op, dnnl_graph_op_attr_mode);
        ACCEPTS(op); /* default filled */
        CHECK(strcmp(pt_op_str(op, dnnl_graph_op_attr_mode, ""), "gelu_erf") == 0);
        pt_op_free(op);
    }
    {
        pt_op *op = on_x(dnnl_graph_op_softplus, 1, x);
        ACCEPTS(op);
        CHECK(pt_op_has(op, dnnl_graph_op_attr_beta));
        CHECK_NEAR(pt_op_f32(op, dnnl_graph_op_attr_beta, 0.0f), 1.0f, 0);
        pt_op_free(op);
    }
    {
        pt_op *op = on_x(dnnl_graph_op_relu_backward, 2, x);
        ACCEPTS(op);
        CHECK(pt_op_has(op, dnnl_graph_op_attr_use_dst));
        CHECK(pt_op_bool(op, dnnl_graph_op_attr_use_dst, false));
        pt_op_free(op);
    }
    {
        pt_op *op = on_x(dnnl_graph_op_hard_sigmoid_backward, 2, x);
        set_f32(op, dnnl_graph_op_attr_alpha, 0.2f); /* beta missing */
        REJECTS(op);
        set_f32(op, dnnl_graph_op_attr_beta, 0.2f);
        ACCEPTS(op);
        pt_op_set_str(op, dnnl_graph_op_attr_use_dst, "x"); /* not defined for this op */
        REJECTS(op);
        pt_op_free(op);
    }
    /* shapes: forward copies src, backward needs diff_dst == src shape */
    const struct {
        int kind, nin;
        pt_lt in[2], out;
        pt_status want;
        int nd;
        int64_t dims[2];
    } shapes[] = {
        {dnnl_graph_op_sigmoid, 1, {LT(dnnl_bf16, U, 4)}, LT(dnnl_bf16, U, U), dnnl_success, 2, {U, 4}},
        {dnnl_graph_op_tanh_backward, 2, {LT(F, U, 4), LT(F, 3, 4)}, lt_unranked(F), dnnl_success, 2, {3, 4}},
        {dnnl_graph_op_sqrt_backward, 2, {LT(F, 3, 4), LT(F, 3, 5)}, lt_unranked(F), dnnl_invalid_shape, 0, {0}},
        {dnnl_graph_op_exp, 1, {LT(F, 3, 4)}, LT(F, 4, 3), dnnl_invalid_shape, 0, {0}},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; ++i) {
        pt_op *op = mkop(shapes[i].kind, shapes[i].nin, shapes[i].in, 1, &shapes[i].out);
        ACCEPTS(op);
        CHECK_EQ_INT(infer(op), shapes[i].want);
        if (shapes[i].want == dnnl_success) CHECK(dims_are(&op->out[0], shapes[i].nd, shapes[i].dims));
        pt_op_free(op);
    }
}

static pt_op *binary_op(int kind, dnnl_data_type_t a, dnnl_data_type_t b, dnnl_data_type_t c) {
    pt_lt ins[] = {LT(a, 2, 3), LT(b, 2, 3)}, outs[] = {LT(c, 2, 3)};
    return OP(kind, ins, outs);
}

static void test_binary_verify(void) {
    const dnnl_data_type_t F = dnnl_f32, BF = dnnl_bf16, H = dnnl_f16, S = dnnl_s32;
    struct {
        int kind;
        dnnl_data_type_t a, b, c;
        pt_status verify;
        bool supported;
    } cases[] = {
        {dnnl_graph_op_add, F, F, F, dnnl_success, true},
        {dnnl_graph_op_add, S, S, S, dnnl_success, true},
        {dnnl_graph_op_add, F, BF, F, dnnl_success, true},
        {dnnl_graph_op_add, H, F, F, dnnl_success, true},
        {dnnl_graph_op_add, BF, BF, F, dnnl_success, false},
        {dnnl_graph_op_add, S, F, F, dnnl_success, false},
        {dnnl_graph_op_add, BF, H, F, dnnl_success, false},
        {dnnl_graph_op_add, dnnl_s8, F, F, dnnl_invalid_graph_op, false},
        {dnnl_graph_op_subtract, S, S, S, dnnl_success, true},
        {dnnl_graph_op_multiply, S, S, S, dnnl_invalid_graph_op, false},
        {dnnl_graph_op_multiply, BF, F, F, dnnl_success, true},
        {dnnl_graph_op_divide, F, F, BF, dnnl_success, false},
        {dnnl_graph_op_maximum, F, BF, F, dnnl_invalid_graph_op, false},
        {dnnl_graph_op_minimum, H, H, H, dnnl_success, true},
        {dnnl_graph_op_squared_difference, F, F, H, dnnl_invalid_graph_op, false},
        {dnnl_graph_op_greater_equal, S, S, dnnl_boolean, dnnl_success, true},
        {dnnl_graph_op_greater_equal, F, F, F, dnnl_invalid_graph_op, false},
        {dnnl_graph_op_greater_equal, F, BF, dnnl_boolean, dnnl_invalid_graph_op, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        pt_op *op = binary_op(cases[i].kind, cases[i].a, cases[i].b, cases[i].c);
        pt_status st = pt_schema_verify(op);
        CHECK_EQ_INT(st, cases[i].verify);
        if (st == dnnl_success) {
            CHECK_EQ_INT(pt_schema_supported(op), cases[i].supported);
            CHECK(strcmp(pt_op_str(op, dnnl_graph_op_attr_auto_broadcast, ""), "numpy") == 0);
            CHECK_EQ_INT(infer(op), dnnl_success);
        }
        if (st != cases[i].verify) fprintf(stderr, "  binary case %zu\n", i);
        pt_op_free(op);
    }
    /* arity */
    {
        pt_lt ins[] = {LT(F, 2)}, outs[] = {LT(F, 2)};
        REJECTS_NEW(dnnl_graph_op_add, ins, outs);
    }
    /* auto_broadcast values */
    {
        pt_op *op = binary_op(dnnl_graph_op_add, F, F, F);
        set_str(op, dnnl_graph_op_attr_auto_broadcast, "NUMPY");
        REJECTS(op);
        set_str(op, dnnl_graph_op_attr_auto_broadcast, "");
        REJECTS(op);
        set_str(op, dnnl_graph_op_attr_auto_broadcast, "none");
        ACCEPTS(op);
        pt_op_free(op);
    }
    /* auto_broadcast none: shapes must match */
    {
        pt_lt ins[] = {LT(F, 2, 3), LT(F, 3)}, outs[] = {lt_unranked(F)};
        pt_op *op = OP(dnnl_graph_op_multiply, ins, outs);
        set_str(op, dnnl_graph_op_attr_auto_broadcast, "none");
        ACCEPTS(op);
        CHECK_EQ_INT(infer(op), dnnl_invalid_shape);
        pt_op_free(op);
    }
    {
        pt_lt ins[] = {LT(F, 2, U), LT(F, U, 3)}, outs[] = {lt_unranked(F)};
        pt_op *op = OP(dnnl_graph_op_multiply, ins, outs);
        set_str(op, dnnl_graph_op_attr_auto_broadcast, "none");
        INFERS_SHAPE(op, 2, 3);
        pt_op_free(op);
    }
    /* GreaterEqual broadcasts like Add */
    {
        pt_lt ins[] = {LT(F, 4, 1), LT(F, 3)}, outs[] = {lt_unranked(dnnl_boolean)};
        pt_op *op = OP(dnnl_graph_op_greater_equal, ins, outs);
        INFERS_SHAPE(op, 4, 3);
        pt_op_free(op);
    }
}

static void test_bias_prelu(void) {
    const dnnl_data_type_t F = dnnl_f32;
    /* BiasAdd: NXC default uses the last dim, NCX dim 1 */
    {
        pt_lt ins[] = {LT(F, 2, 3, 5), LT(F, 5)}, outs[] = {lt_unranked(F)};
        pt_op *op = OP(dnnl_graph_op_bias_add, ins, outs);
        ACCEPTS(op);
        CHECK(strcmp(pt_op_str(op, dnnl_graph_op_attr_data_format, ""), "NXC") == 0);
        CHECK_EQ_INT(infer(op), dnnl_success);
        CHECK(SHAPE_IS(&op->out[0], 2, 3, 5));
        set_str(op, dnnl_graph_op_attr_data_format, "NCX");
        CHECK_EQ_INT(infer(op), dnnl_invalid_shape); /* C = 3 != 5 */
        set_str(op, dnnl_graph_op_attr_data_format, "NHWC");
        REJECTS(op);
        pt_op_free(op);
    }
    {
        pt_lt ins[] = {LT(F, 5), LT(F, 5)}, outs[] = {lt_unranked(F)};
        pt_op *op = OP(dnnl_graph_op_bias_add, ins, outs);
        ACCEPTS(op);
        CHECK_EQ_INT(infer(op), dnnl_invalid_shape); /* src rank < 2 */
        pt_op_free(op);
    }
    {
        pt_lt ins[] = {LT(F, 2, 5), LT(dnnl_bf16, 5)}, outs[] = {lt_unranked(F)};
        REJECTS_NEW(dnnl_graph_op_bias_add, ins, outs);
    }
    /* BiasAddBackward: [C] from diff_dst, rank >= 4 */
    {
        pt_lt ins[] = {LT(F, 2, 3, 4, 6)}, outs[] = {lt_unranked(F)};
        pt_op *op = OP(dnnl_graph_op_bias_add_backward, ins, outs);
        set_str(op, dnnl_graph_op_attr_data_format, "NCX");
        INFERS_SHAPE(op, 3);
        pt_op_free(op);
    }
    {
        pt_lt ins[] = {LT(F, 2, 3, 6)}, outs[] = {lt_unranked(F)};
        pt_op *op = OP(dnnl_graph_op_bias_add_backward, ins, outs);
        ACCEPTS(op);
        CHECK_EQ_INT(infer(op), dnnl_invalid_shape);
        pt_op_free(op);
    }
    /* PReLU slope rules */
    struct {
        pt_lt slope;
        const char *fmt;
        bool pcb;
        pt_status st;
    } pc[] = {
        {LT(F, 3), "NCX", true, dnnl_success},       /* per channel dim 1 */
        {LT(F, 5), "NXC", true, dnnl_success},       /* per channel last dim */
        {LT(F, 3), "NXC", true, dnnl_invalid_shape}, /* NXC channel is 5 */
        {LT(F, 5), "NCX", false, dnnl_success},      /* last dim */
        {LT(F, 1), "NCX", false, dnnl_success},      /* shared */
        {LT(F, 3), "NCX", false, dnnl_invalid_shape},
        {LT(F, 3, 1, 5), "NXC", true, dnnl_success}, /* unidirectional */
        {LT(F, 4, 1, 5), "NXC", true, dnnl_invalid_shape},
    };
    for (size_t i = 0; i < sizeof pc / sizeof pc[0]; ++i) {
        pt_lt ins[] = {LT(F, 2, 3, 4, 5), pc[i].slope}, outs[] = {lt_unranked(F)};
        pt_op *op = OP(dnnl_graph_op_prelu, ins, outs);
        set_str(op, dnnl_graph_op_attr_data_format, pc[i].fmt);
        pt_op_set_bool(op, dnnl_graph_op_attr_per_channel_broadcast, pc[i].pcb);
        ACCEPTS(op);
        pt_status st = infer(op);
        CHECK_EQ_INT(st, pc[i].st);
        if (st == dnnl_success) CHECK(SHAPE_IS(&op->out[0], 2, 3, 4, 5));
        pt_op_free(op);
    }
    /* PReLUBackward: diff_src = src shape, diff_slope = slope shape */
    {
        pt_lt ins[] = {LT(F, 2, 3, 4), LT(F, 4), LT(F, 2, 3, 4)},
              outs[] = {lt_unranked(F), lt_unranked(F)};
        pt_op *op = OP(dnnl_graph_op_prelu_backward, ins, outs);
        INFERS_SHAPE(op, 2, 3, 4);
        CHECK(SHAPE_IS(&op->out[1], 4));
        set_str(op, dnnl_graph_op_attr_data_format, "NCX"); /* channel 3 != 4 */
        CHECK_EQ_INT(infer(op), dnnl_invalid_shape);
        pt_op_free(op);
    }
    {
        pt_lt ins[] = {LT(F, 2, 3), LT(F, 3)}, outs[] = {lt_unranked(F), lt_unranked(F)};
        REJECTS_NEW(dnnl_graph_op_prelu_backward, ins, outs); /* 2 inputs */
    }
}

/* ---- norms ---- */

static void test_norms(void) {
    const dnnl_data_type_t F = dnnl_f32, BF = dnnl_bf16, H = dnnl_f16;
    /* LayerNorm default: axis -1, keep_stats, affine */
    {
        pt_lt ins[] = {LT(F, 2, 3, 4), LT(F, 4), LT(F, 4)},
              outs[] = {lt_unranked(F), lt_unranked(F), lt_unranked(F)};
        pt_op *op = OP(dnnl_graph_op_layer_norm, ins, outs);
        ACCEPTS(op);
        CHECK_EQ_INT(pt_op_s64(op, dnnl_graph_op_attr_begin_norm_axis, 0), -1);
        CHECK(pt_op_bool(op, dnnl_graph_op_attr_keep_stats, false));
        CHECK(pt_op_bool(op, dnnl_graph_op_attr_use_affine, false));
        CHECK_NEAR(pt_op_f32(op, dnnl_graph_op_attr_epsilon, 0), 1e-5, 1e-12);
        CHECK_EQ_INT(infer(op), dnnl_success);
        CHECK(SHAPE_IS(&op->out[0], 2, 3, 4));
        CHECK(SHAPE_IS(&op->out[1], 2, 3));
        CHECK(SHAPE_IS(&op->out[2], 2, 3));
        CHECK(pt_schema_supported(op));
        /* begin_norm_axis 1: stats [2], params [3,4] -> gamma [4] is wrong */
        set_s64(op, dnnl_graph_op_attr_begin_norm_axis, 1);
        op->out[1] = lt_unranked(F);
        op->out[2] = lt_unranked(F);
        CHECK_EQ_INT(infer(op), dnnl_invalid_shape);
        op->in[1] = LT(F, 3, 4);
        op->in[2] = LT(F, 3, 4);
        CHECK_EQ_INT(infer(op), dnnl_success);
        CHECK(SHAPE_IS(&op->out[1], 2));
        set_s64(op, dnnl_graph_op_attr_begin_norm_axis, 3);
        CHECK_EQ_INT(infer(op), dnnl_invalid_shape);
        pt_op_free(op);
    }
    {
        pt_lt ins[] = {LT(F, 2, 4)}, outs[] = {lt_unranked(F)};
        pt_op *op = OP(dnnl_graph_op_layer_norm, ins, outs);
        REJECTS(op); /* keep_stats defaults to true: needs 3 outputs */
        pt_op_set_bool(op, dnnl_graph_op_attr_keep_stats, false);
        ACCEPTS(op);
        CHECK_EQ_INT(infer(op), dnnl_invalid_shape); /* use_affine without gamma/beta */
        pt_op_set_bool(op, dnnl_graph_op_attr_use_affine, false);
        CHECK_EQ_INT(infer(op), dnnl_success);
        pt_op_free(op);
    }
    {
        pt_lt ins[] = {LT(F, 2, 4), LT(F, 4)}, outs[] = {lt_unranked(F)};
        pt_op *op = OP(dnnl_graph_op_layer_norm, ins, outs); /* 2 inputs */
        pt_op_set_bool(op, dnnl_graph_op_attr_keep_stats, false);
        REJECTS(op);
        pt_op_free(op);
    }
    {
        /* bf16 gamma with f32 src; and T2 type variable (gamma f32, beta bf16) */
        pt_lt ins[] = {LT(F, 2, 4), LT(BF, 4), LT(BF, 4)}, outs[] = {lt_unranked(F)};
        pt_op *op = OP(dnnl_graph_op_layer_norm, ins, outs);
        pt_op_set_bool(op, dnnl_graph_op_attr_keep_stats, false);
        REJECTS(op);
        op->in[0].data_type = BF;
        op->out[0].data_type = BF;
        ACCEPTS(op);
        CHECK(pt_schema_supported(op));
        REJECTS_AS(op, &op->in[1], F);
        op->in[0].data_type = H; /* f16 src, f32 params */
        op->out[0].data_type = H;
        op->in[2].data_type = F;
        ACCEPTS(op);
        CHECK(pt_schema_supported(op));
        pt_op_free(op);
    }
    /* LayerNormBackward */
    {
        pt_lt ins[] = {LT(F, 2, 3, 4), LT(F, 2, 3, 4), LT(F, 2, 3), LT(F, 2, 3), LT(F, 4)},
              outs[] = {lt_unranked(F), lt_unranked(F), lt_unranked(F)};
        pt_op *op = OP(dnnl_graph_op_layer_norm_backward, ins, outs);
        INFERS_SHAPE(op, 2, 3, 4);
        CHECK(SHAPE_IS(&op->out[1], 4));
        CHECK(SHAPE_IS(&op->out[2], 4));
        op->in[2] = LT(F, 2, 4); /* mean shape wrong */
        CHECK_EQ_INT(infer(op), dnnl_invalid_shape);
        pt_op_free(op);
    }
    {
        pt_lt ins[] = {LT(F, 2, 4), LT(F, 2, 4), LT(F, 2), LT(F, 2)}, outs[] = {lt_unranked(F)};
        pt_op *op = OP(dnnl_graph_op_layer_norm_backward, ins, outs);
        REJECTS(op); /* use_affine true needs 3 outputs */
        pt_op_set_bool(op, dnnl_graph_op_attr_use_affine, false);
        ACCEPTS(op);
        CHECK_EQ_INT(infer(op), dnnl_success);
        pt_op_free(op);
    }
    {
        pt_lt ins[] = {LT(F, 2, 4), LT(F, 2, 4), LT(F, 2)}, outs[] = {lt_unranked(F)};
        pt_op *op = OP(dnnl_graph_op_layer_norm_backward, ins, outs); /* 3 inputs */
        pt_op_set_bool(op, dnnl_graph_op_attr_use_affine, false);
        REJECTS(op);
        pt_op_free(op);
    }
    /* GroupNorm: NCX [2,6,5], groups 3 -> stats [2,3] */
    {
        pt_lt ins[] = {LT(F, 2, 6, 5), LT(F, 6), LT(F, 6)},
              outs[] = {lt_unranked(F), lt_unranked(F), lt_unranked(F)};
        pt_op *op = OP(dnnl_graph_op_group_norm, ins, outs);
        set_str(op, dnnl_graph_op_attr_data_format, "NCX");
        REJECTS(op); /* groups required */
        set_s64(op, dnnl_graph_op_attr_groups, 3);
        INFERS_SHAPE(op, 2, 6, 5);
        CHECK(SHAPE_IS(&op->out[1], 2, 3));
        CHECK(SHAPE_IS(&op->out[2], 2, 3));
        set_s64(op, dnnl_graph_op_attr_groups, 4); /* 6 % 4 != 0 */
        op->out[1] = lt_unranked(F);
        op->out[2] = lt_unranked(F);
        CHECK_EQ_INT(infer(op), dnnl_invalid_shape);
        set_s64(op, dnnl_graph_op_attr_groups, 0);
        CHECK_EQ_INT(infer(op), dnnl_invalid_shape);
        set_s64(op, dnnl_graph_op_attr_groups, 5); /* NXC: C = 5 */
        set_str(op, dnnl_graph_op_attr_data_format, "NXC");
        op->in[1] = LT(F, 5);
        op->in[2] = LT(F, 5);
        CHECK_EQ_INT(infer(op), dnnl_success);
        CHECK(SHAPE_IS(&op->out[1], 2, 5));
        pt_op_free(op);
    }
    /* RMSNorm */
    {
        pt_lt ins[] = {LT(H, 2, 5), LT(H, 5)}, outs[] = {lt_unranked(H)};
        pt_op *op = OP(dnnl_graph_op_rms_norm, ins, outs);
        ACCEPTS(op);
        CHECK(pt_schema_supported(op)); /* (f16, f16) */
        CHECK_EQ_INT(infer(op), dnnl_success);
        CHECK(SHAPE_IS(&op->out[0], 2, 5));
        op->in[1] = LT(H, 3);
        CHECK_EQ_INT(infer(op), dnnl_invalid_shape);
        op->in[1] = LT(BF, 5); /* bf16 gamma with f16 src */
        REJECTS(op);
        op->in[1] = LT(H, 5);
        op->in[0].data_type = F;
        op->out[0].data_type = F;
        ACCEPTS(op);
        CHECK(!pt_schema_supported(op)); /* (f32, f16) not listed */
        pt_op_free(op);
    }
}

/* ---- quantization ---- */

static void test_quant_static(void) {
    const dnnl_data_type_t F = dnnl_f32;
    {
        pt_lt ins[] = {LT(F, 2, 3)}, outs[] = {LT(dnnl_u8, 2, 3)};
        pt_op *op = OP(dnnl_graph_op_quantize, ins, outs);
        REJECTS(op); /* scales required */
        set_f32s(op, dnnl_graph_op_attr_scales, 2, (float[]){0.5f, 0.25f});
        REJECTS(op); /* per_tensor needs one scale */
        set_f32s(op, dnnl_graph_op_attr_scales, 1, (float[]){0.5f});
        ACCEPTS(op);
        CHECK(strcmp(pt_op_str(op, dnnl_graph_op_attr_qtype, ""), "per_tensor") == 0);
        CHECK_EQ_INT(pt_op_s64(op, dnnl_graph_op_attr_axis, 0), 1);
        SET_LIST(op, dnnl_graph_op_attr_zps, 1, 2);
        REJECTS(op); /* zps length != scales length */
        SET_LIST(op, dnnl_graph_op_attr_zps, 3);
        ACCEPTS(op);
        CHECK_EQ_INT(infer(op), dnnl_success);
        set_str(op, dnnl_graph_op_attr_qtype, "per_group");
        REJECTS(op);
        /* per_channel over axis 1 (3 channels) */
        set_str(op, dnnl_graph_op_attr_qtype, "per_channel");
        set_f32s(op, dnnl_graph_op_attr_scales, 2, (float[]){1.f, 2.f});
        SET_LIST(op, dnnl_graph_op_attr_zps, 0, 0);
        ACCEPTS(op);
        CHECK_EQ_INT(infer(op), dnnl_invalid_shape);
        set_f32s(op, dnnl_graph_op_attr_scales, 3, (float[]){1.f, 2.f, 4.f});
        SET_LIST(op, dnnl_graph_op_attr_zps, 0, 0, 0);
        ACCEPTS(op);
        CHECK_EQ_INT(infer(op), dnnl_success);
        set_s64(op, dnnl_graph_op_attr_axis, -1);
        CHECK_EQ_INT(infer(op), dnnl_success);
        set_s64(op, dnnl_graph_op_attr_axis, 2);
        CHECK_EQ_INT(infer(op), dnnl_invalid_shape);
        set_s64(op, dnnl_graph_op_attr_axis, 1);
        set_f32s(op, dnnl_graph_op_attr_scales, 3, (float[]){1.f, 0.f, 4.f});
        CHECK_EQ_INT(infer(op), dnnl_invalid_arguments); /* zero scale */
        pt_op_free(op);
    }
    /* fp8 sides take no zero points; Quantize reads f32, Dequantize writes f32. */
    static const struct {
        dnnl_graph_op_kind_t kind;
        dnnl_data_type_t src, dst;
        bool valid;
    } typed[] = {{dnnl_graph_op_quantize, dnnl_f32, dnnl_f8_e4m3, true},
                 {dnnl_graph_op_quantize, dnnl_s32, dnnl_u8, false},
                 {dnnl_graph_op_dequantize, dnnl_f8_e5m2, dnnl_f32, true},
                 {dnnl_graph_op_dequantize, dnnl_s8, dnnl_bf16, false}};
    for (size_t i = 0; i < sizeof typed / sizeof typed[0]; ++i) {
        pt_lt ins[] = {LT(typed[i].src, 4)}, outs[] = {LT(typed[i].dst, 4)};
        pt_op *op = OP(typed[i].kind, ins, outs);
        set_f32s(op, dnnl_graph_op_attr_scales, 1, (float[]){2.f});
        if (typed[i].valid) {
            ACCEPTS(op);
            SET_LIST(op, dnnl_graph_op_attr_zps, 0);
            REJECTS(op); /* zps with an fp8 side */
        } else {
            REJECTS(op);
        }
        if (typed[i].kind == dnnl_graph_op_dequantize && !typed[i].valid) {
            op->out[0].data_type = F;
            INFERS_SHAPE(op, 4);
        }
        pt_op_free(op);
    }
}

static pt_op *dyn_dq(pt_lt src, pt_lt scales, const pt_lt *zps, dnnl_data_type_t dst) {
    pt_lt ins[3] = {src, scales, zps ? *zps : src};
    pt_lt outs[1] = {lt_unranked(dst)};
    return mkop(dnnl_graph_op_dynamic_dequantize, zps ? 3 : 2, ins, 1, outs);
}

static void test_quant_dynamic(void) {
    const dnnl_data_type_t F = dnnl_f32, H = dnnl_f16;
    /* dtype rules */
    {
        pt_op *op = dyn_dq(LT(dnnl_u4, 4, 8), LT(H, 1), NULL, F);
        REJECTS(op); /* dst must have the scales type */
        op->out[0].data_type = H;
        ACCEPTS(op);
        CHECK(pt_schema_supported(op));
        CHECK_EQ_INT(infer(op), dnnl_success);
        CHECK(SHAPE_IS(&op->out[0], 4, 8));
        pt_op_free(op);
    }
    {
        pt_lt z = LT(dnnl_s8, 1);
        pt_op *op = dyn_dq(LT(dnnl_s4, 4, 8), LT(F, 1), &z, F);
        ACCEPTS(op);
        CHECK(!pt_schema_supported(op)); /* 4-bit src with 8-bit zps */
        op->in[2].data_type = dnnl_u4;
        CHECK(pt_schema_supported(op));
        op->in[2].data_type = dnnl_s32;
        CHECK(pt_schema_supported(op));
        REJECTS_AS(op, &op->in[2], F);
        pt_op_free(op);
    }
    {
        pt_op *op = dyn_dq(LT(F, 4), LT(F, 1), NULL, F); /* src must be integer */
        REJECTS(op);
        pt_op_free(op);
    }
    /* per_tensor with several scales: add_op error */
    {
        pt_op *op = dyn_dq(LT(dnnl_u8, 4, 8), LT(F, 2), NULL, F);
        REJECTS(op);
        pt_op_free(op);
    }
    /* per_channel: zps count 1 or = scales; scales count = src.dims[axis] */
    {
        pt_lt z = LT(dnnl_u8, 3);
        pt_op *op = dyn_dq(LT(dnnl_u8, 4, 8), LT(F, 8), &z, F);
        set_str(op, dnnl_graph_op_attr_qtype, "per_channel");
        REJECTS(op);
        op->in[2] = LT(dnnl_u8, 1);
        ACCEPTS(op);
        CHECK_EQ_INT(infer(op), dnnl_success);
        set_s64(op, dnnl_graph_op_attr_axis, 0);
        CHECK_EQ_INT(infer(op), dnnl_invalid_shape); /* 8 scales for 4 channels */
        SET_SLIST(op, dnnl_graph_op_attr_axis, 0, 1);
        ACCEPTS(op); /* several axes are a compile-time error */
        CHECK_EQ_INT(infer(op), dnnl_invalid_shape);
        pt_op_free(op);
    }
    /* per_group, oneDNN form: src [1,32,128,32], group_shape [1,1,8,1] -> scales [1,32,16,32] */
    {
        pt_op *op = dyn_dq(LT(dnnl_s4, 1, 32, 128, 32), LT(F, 1, 32, 16, 32), NULL, F);
        set_str(op, dnnl_graph_op_attr_qtype, "per_group");
        SET_LIST(op, dnnl_graph_op_attr_group_shape, 1, 1, 8, 1);
        INFERS_SHAPE(op, 1, 32, 128, 32);
        op->in[1] = LT(F, 1, 32, 8, 32);
        CHECK_EQ_INT(infer(op), dnnl_invalid_shape);
        op->in[1] = LT(F, 32, 16, 32); /* rank differs from src: add_op error */
        REJECTS(op);
        op->in[1] = LT(F, 1, 32, 16, 32);
        SET_LIST(op, dnnl_graph_op_attr_group_shape, 1, 8, 1);
        ACCEPTS(op);
        CHECK_EQ_INT(infer(op), dnnl_invalid_shape); /* length != rank */
        SET_LIST(op, dnnl_graph_op_attr_group_shape, 1, 1, 8, 0);
        CHECK_EQ_INT(infer(op), dnnl_invalid_shape); /* entry < 1 */
        pt_op_free(op);
    }
    /* per_group, seed form: src [10,20], axis {0,1}, groups {2,1} -> G [5,20], scales [2,1] */
    {
        pt_op *op = dyn_dq(LT(dnnl_u8, 10, 20), LT(F, 2, 1), NULL, F);
        set_str(op, dnnl_graph_op_attr_qtype, "per_group");
        SET_SLIST(op, dnnl_graph_op_attr_axis, 0, 1);
        SET_SLIST(op, dnnl_graph_op_attr_groups, 2, 1);
        INFERS_SHAPE(op, 10, 20);
        op->in[1] = LT(F, 2, 20);
        CHECK_EQ_INT(infer(op), dnnl_invalid_shape);
        op->in[1] = LT(F, 2, 1);
        /* both forms, agreeing */
        SET_LIST(op, dnnl_graph_op_attr_group_shape, 5, 20);
        ACCEPTS(op);
        CHECK_EQ_INT(infer(op), dnnl_success);
        /* both forms, disagreeing: rejected at add_op once shapes are known */
        SET_LIST(op, dnnl_graph_op_attr_group_shape, 5, 10);
        REJECTS(op);
        pt_op_del_attr(op, dnnl_graph_op_attr_group_shape);
        /* groups not dividing the extent; too many groups; repeated axis */
        SET_SLIST(op, dnnl_graph_op_attr_groups, 3, 1);
        CHECK_EQ_INT(infer(op), dnnl_invalid_shape);
        SET_SLIST(op, dnnl_graph_op_attr_groups, 20, 1);
        CHECK_EQ_INT(infer(op), dnnl_invalid_shape);
        SET_SLIST(op, dnnl_graph_op_attr_groups, 0, 1);
        CHECK_EQ_INT(infer(op), dnnl_invalid_shape);
        SET_SLIST(op, dnnl_graph_op_attr_groups, 2, 1, 1);
        CHECK_EQ_INT(infer(op), dnnl_invalid_shape); /* more groups than axes */
        SET_SLIST(op, dnnl_graph_op_attr_groups, 2, 1);
        SET_SLIST(op, dnnl_graph_op_attr_axis, 0, -2);
        CHECK_EQ_INT(infer(op), dnnl_invalid_shape); /* axis 0 twice */
        SET_SLIST(op, dnnl_graph_op_attr_axis, 0, 2);
        CHECK_EQ_INT(infer(op), dnnl_invalid_shape); /* out of range */
        /* negative axes; a listed axis without a groups entry keeps G = 1 */
        SET_SLIST(op, dnnl_graph_op_attr_axis, -2, -1);
        SET_SLIST(op, dnnl_graph_op_attr_groups, 2);
        op->in[1] = LT(F, 2, 20);
        CHECK_EQ_INT(infer(op), dnnl_success);
        /* neither form: per_group needs groups */
        pt_op_del_attr(op, dnnl_graph_op_attr_groups);
        ACCEPTS(op);
        CHECK_EQ_INT(infer(op), dnnl_invalid_shape);
        pt_op_free(op);
    }
    /* per_group with int4 and default axis {1}: src [8,64] groups {4} -> scales [8,4] */
    {
        pt_lt z = LT(dnnl_u4, 8, 4);
        pt_op *op = dyn_dq(LT(dnnl_u4, 8, 64), LT(H, 8, 4), &z, H);
        set_str(op, dnnl_graph_op_attr_qtype, "per_group");
        SET_SLIST(op, dnnl_graph_op_attr_groups, 4);
        ACCEPTS(op);
        size_t na = 0;
        const int64_t *ax = pt_op_s64s(op, dnnl_graph_op_attr_axis, &na);
        CHECK(na == 1 && ax && ax[0] == 1); /* default axis {1} */
        CHECK(pt_schema_supported(op));
        CHECK_EQ_INT(infer(op), dnnl_success);
        op->in[2] = LT(dnnl_u4, 8, 2); /* zps must have the scales' shape */
        REJECTS(op);
        op->in[2] = LT(dnnl_u4, 8, 4);
        op->in[0] = LT(dnnl_u4, 64); /* rank < 2 */
        REJECTS(op);
        pt_op_free(op);
    }
    /* DynamicQuantize: f32 -> s4 per_group; dst types; zps types */
    {
        pt_lt ins[] = {LT(F, 4, 32), LT(F, 4, 2), LT(dnnl_s4, 4, 2)},
              outs[] = {LT(dnnl_s4, 4, 32)};
        pt_op *op = OP(dnnl_graph_op_dynamic_quantize, ins, outs);
        set_str(op, dnnl_graph_op_attr_qtype, "per_group");
        SET_SLIST(op, dnnl_graph_op_attr_groups, 2);
        ACCEPTS(op);
        CHECK(pt_schema_supported(op));
        CHECK_EQ_INT(infer(op), dnnl_success);
        op->in[2].data_type = dnnl_u8;
        CHECK(!pt_schema_supported(op));
        op->out[0].data_type = dnnl_u8;
        CHECK(pt_schema_supported(op));
        REJECTS_AS(op, &op->out[0], F);
        op->out[0].data_type = dnnl_u8;
        op->in[1].data_type = dnnl_bf16; /* scales must be f32 */
        REJECTS(op);
        pt_op_free(op);
    }
    {
        pt_lt ins[] = {LT(F, 4, 32)}, outs[] = {LT(dnnl_s8, 4, 32)};
        REJECTS_NEW(dnnl_graph_op_dynamic_quantize, ins, outs); /* 1 input */
    }
}

/* ---- MatMul ---- */

static pt_status matmul_case(pt_lt a, pt_lt b, const pt_lt *bias, bool ta, bool tb, pt_lt *res) {
    pt_lt ins[3] = {a, b, bias ? *bias : a};
    pt_lt outs[1] = {lt_unranked(a.data_type)};
    pt_op *op = mkop(dnnl_graph_op_matmul, bias ? 3 : 2, ins, 1, outs);
    if (ta) pt_op_set_bool(op, dnnl_graph_op_attr_transpose_a, true);
    if (tb) pt_op_set_bool(op, dnnl_graph_op_attr_transpose_b, true);
    return verify_infer_free(op, res);
}

static void test_matmul(void) {
    const dnnl_data_type_t F = dnnl_f32, BF = dnnl_bf16;
    pt_lt r;
    CHECK_EQ_INT(matmul_case(LT(F, 2, 3), LT(F, 3, 4), NULL, false, false, &r), dnnl_success);
    CHECK(SHAPE_IS(&r, 2, 4));
    CHECK_EQ_INT(matmul_case(LT(F, 3, 2), LT(F, 3, 4), NULL, true, false, &r), dnnl_success);
    CHECK(SHAPE_IS(&r, 2, 4));
    CHECK_EQ_INT(matmul_case(LT(F, 2, 3), LT(F, 4, 3), NULL, false, true, &r), dnnl_success);
    CHECK(SHAPE_IS(&r, 2, 4));
    CHECK_EQ_INT(matmul_case(LT(F, 2, 3), LT(F, 4, 3), NULL, false, false, NULL),
                 dnnl_invalid_shape);
    /* 1-D rules (transposes ignored for 1-D operands) */
    CHECK_EQ_INT(matmul_case(LT(F, 3), LT(F, 3), NULL, true, true, &r), dnnl_success);
    CHECK_EQ_INT(r.ndims, 0);
    CHECK_EQ_INT(matmul_case(LT(F, 3), LT(F, 4), NULL, false, false, NULL), dnnl_invalid_shape);
    CHECK_EQ_INT(matmul_case(LT(F, 3), LT(F, 2, 3, 4), NULL, true, false, &r), dnnl_success);
    CHECK(SHAPE_IS(&r, 2, 4));
    CHECK_EQ_INT(matmul_case(LT(F, 3), LT(F, 3, 4), NULL, false, false, &r), dnnl_success);
    CHECK(SHAPE_IS(&r, 4));
    CHECK_EQ_INT(matmul_case(LT(F, 2, 5, 3), LT(F, 3), NULL, false, false, &r), dnnl_success);
    CHECK(SHAPE_IS(&r, 2, 5));
    CHECK_EQ_INT(matmul_case(LT(F, 2, 3, 5), LT(F, 3), NULL, true, false, &r), dnnl_success);
    CHECK(SHAPE_IS(&r, 2, 5));
    /* batch broadcast: [2,1,4,3] x [5,3,6] -> [2,5,4,6] */
    CHECK_EQ_INT(matmul_case(LT(F, 2, 1, 4, 3), LT(F, 5, 3, 6), NULL, false, false, &r),
                 dnnl_success);
    CHECK(SHAPE_IS(&r, 2, 5, 4, 6));
    CHECK_EQ_INT(matmul_case(LT(F, 2, 4, 3), LT(F, 3, 3, 6), NULL, false, false, NULL),
                 dnnl_invalid_shape);
    /* dynamic dims */
    CHECK_EQ_INT(matmul_case(LT(F, U, 3), LT(F, 3, 4), NULL, false, false, &r), dnnl_success);
    CHECK(SHAPE_IS(&r, U, 4));
    CHECK_EQ_INT(matmul_case(LT(F, 2, U), LT(F, 7, 4), NULL, false, false, &r), dnnl_success);
    CHECK(SHAPE_IS(&r, 2, 4));
    CHECK_EQ_INT(matmul_case(lt_unranked(F), LT(F, 7, 4), NULL, false, false, &r), dnnl_success);
    CHECK_EQ_INT(r.ndims, -1);
    /* rank 0 operand */
    CHECK_EQ_INT(matmul_case(lt_scalar(F), LT(F, 7, 4), NULL, false, false, NULL),
                 dnnl_invalid_shape);
    /* bias */
    pt_lt bias = LT(F, 4);
    CHECK_EQ_INT(matmul_case(LT(F, 2, 3), LT(F, 3, 4), &bias, false, false, &r), dnnl_success);
    bias = LT(F, 2, 1);
    CHECK_EQ_INT(matmul_case(LT(F, 2, 3), LT(F, 3, 4), &bias, false, false, &r), dnnl_success);
    bias = LT(F, 3);
    CHECK_EQ_INT(matmul_case(LT(F, 2, 3), LT(F, 3, 4), &bias, false, false, NULL),
                 dnnl_invalid_shape);
    bias = LT(F, 1, 2, 4);
    CHECK_EQ_INT(matmul_case(LT(F, 2, 3), LT(F, 3, 4), &bias, false, false, NULL),
                 dnnl_invalid_shape);
    bias = LT(BF, 4);
    CHECK_EQ_INT(matmul_case(LT(F, 2, 3), LT(F, 3, 4), &bias, false, false, NULL),
                 dnnl_invalid_graph_op);
    /* dtypes and attributes */
    {
        pt_lt ins[] = {LT(BF, 2, 3), LT(BF, 3, 4)}, outs[] = {LT(F, 2, 4)};
        pt_op *op = OP(dnnl_graph_op_matmul, ins, outs);
        ACCEPTS(op);
        CHECK(pt_schema_supported(op));
        CHECK(pt_op_has(op, dnnl_graph_op_attr_transpose_a));
        CHECK(!pt_op_bool(op, dnnl_graph_op_attr_transpose_a, true));
        CHECK(!pt_op_bool(op, dnnl_graph_op_attr_transpose_b, true));
        CHECK(strcmp(pt_op_str(op, dnnl_graph_op_attr_accumulation_mode, ""), "strict") == 0);
        set_str(op, dnnl_graph_op_attr_accumulation_mode, "fast");
        REJECTS(op);
        set_str(op, dnnl_graph_op_attr_accumulation_mode, "relaxed");
        ACCEPTS(op);
        REJECTS_AS(op, &op->out[0], dnnl_f16); /* dst neither T nor f32 */
        op->out[0].data_type = BF;
        REJECTS_AS(op, &op->in[1], F); /* src/weights differ */
        pt_op_free(op);
    }
    {
        pt_lt ins[] = {LT(dnnl_s8, 2, 3), LT(dnnl_s8, 3, 4)}, outs[] = {LT(F, 2, 4)};
        REJECTS_NEW(dnnl_graph_op_matmul, ins, outs);
    }
}

/* ---- softmax, reductions, shape ops ---- */

static void test_softmax(void) {
    const dnnl_data_type_t F = dnnl_f32, BF = dnnl_bf16, H = dnnl_f16;
    {
        pt_lt ins[] = {LT(F, 2, 3, 4)}, outs[] = {lt_unranked(F), lt_unranked(F)};
        pt_op *op = OP(dnnl_graph_op_softmax, ins, outs);
        ACCEPTS(op);
        CHECK_EQ_INT(pt_op_s64(op, dnnl_graph_op_attr_axis, 0), 1);
        CHECK(strcmp(pt_op_str(op, dnnl_graph_op_attr_mode, ""), "none") == 0);
        CHECK_EQ_INT(infer(op), dnnl_success);
        CHECK(SHAPE_IS(&op->out[0], 2, 3, 4));
        CHECK(SHAPE_IS(&op->out[1], 2, 1, 4));
        set_s64(op, dnnl_graph_op_attr_axis, -1);
        op->out[1] = lt_unranked(F);
        CHECK_EQ_INT(infer(op), dnnl_success);
        CHECK(SHAPE_IS(&op->out[1], 2, 3, 1));
        set_s64(op, dnnl_graph_op_attr_axis, 3);
        CHECK_EQ_INT(infer(op), dnnl_invalid_shape);
        set_str(op, dnnl_graph_op_attr_mode, "inf_as_zero");
        set_s64(op, dnnl_graph_op_attr_axis, 0);
        ACCEPTS(op);
        op->out[1].data_type = BF; /* stats must be f32 */
        REJECTS(op);
        pt_op_free(op);
    }
    {
        pt_lt ins[] = {LT(BF, 4, 5)}, outs[] = {LT(H, 4, 5)};
        pt_op *op = OP(dnnl_graph_op_softmax, ins, outs);
        REJECTS(op); /* bf16 -> f16 */
        op->out[0].data_type = F;
        ACCEPTS(op);
        CHECK(pt_schema_supported(op));
        pt_op_free(op);
    }
    {
        pt_lt ins[] = {LT(F, 4, 5)}, outs[] = {LT(F, 4, 5)};
        pt_op *op = OP(dnnl_graph_op_log_softmax, ins, outs);
        ACCEPTS(op);
        CHECK_EQ_INT(pt_op_s64(op, dnnl_graph_op_attr_axis, 0), -1);
        CHECK_EQ_INT(infer(op), dnnl_success);
        pt_op_free(op);
    }
    {
        pt_lt ins[] = {LT(BF, 4, 5), LT(BF, 4, 5)}, outs[] = {lt_unranked(F)};
        pt_op *op = OP(dnnl_graph_op_softmax_backward, ins, outs);
        INFERS_SHAPE(op, 4, 5);
        REJECTS_AS(op, &op->out[0], H);
        op->out[0].data_type = BF;
        op->in[1] = LT(BF, 4, 6);
        ACCEPTS(op);
        CHECK_EQ_INT(infer(op), dnnl_invalid_shape);
        pt_op_free(op);
    }
    {
        pt_lt ins[] = {LT(F, 4, 5), LT(F, 4, 5)}, outs[] = {LT(BF, 4, 5)};
        REJECTS_NEW(dnnl_graph_op_log_softmax_backward, ins, outs);
    }
}

static pt_status reduce_case(pt_lt src, int na, const int64_t *axes, bool keep, pt_lt *res) {
    pt_lt ins[] = {src}, outs[] = {lt_unranked(src.data_type)};
    pt_op *op = OP(dnnl_graph_op_reduce_sum, ins, outs);
    if (na >= 0) set_s64s(op, dnnl_graph_op_attr_axes, na, axes, true);
    if (keep) pt_op_set_bool(op, dnnl_graph_op_attr_keep_dims, true);
    return verify_infer_free(op, res);
}

static void test_reductions(void) {
    const dnnl_data_type_t F = dnnl_f32;
    pt_lt r;
    CHECK_EQ_INT(reduce_case(LT(F, 2, 3, 4), 1, (int64_t[]){1}, true, &r), dnnl_success);
    CHECK(SHAPE_IS(&r, 2, 1, 4));
    CHECK_EQ_INT(reduce_case(LT(F, 2, 3, 4), 1, (int64_t[]){1}, false, &r), dnnl_success);
    CHECK(SHAPE_IS(&r, 2, 4));
    CHECK_EQ_INT(reduce_case(LT(F, 2, 3, 4), 2, (int64_t[]){-1, 0}, false, &r), dnnl_success);
    CHECK(SHAPE_IS(&r, 3));
    CHECK_EQ_INT(reduce_case(LT(F, 2, 3, 4), 3, (int64_t[]){0, 1, 2}, false, &r), dnnl_success);
    CHECK_EQ_INT(r.ndims, 0);
    CHECK_EQ_INT(reduce_case(LT(F, 2, 3, 4), 3, (int64_t[]){0, 1, 2}, true, &r), dnnl_success);
    CHECK(SHAPE_IS(&r, 1, 1, 1));
    CHECK_EQ_INT(reduce_case(LT(F, 2, U, 4), 1, (int64_t[]){0}, false, &r), dnnl_success);
    CHECK(SHAPE_IS(&r, U, 4));
    CHECK_EQ_INT(reduce_case(LT(F, 2, 3, 4), 2, (int64_t[]){1, -2}, false, NULL),
                 dnnl_invalid_shape);
    CHECK_EQ_INT(reduce_case(LT(F, 2, 3, 4), 1, (int64_t[]){3}, false, NULL), dnnl_invalid_shape);
    /* no axes at all: identity */
    CHECK_EQ_INT(reduce_case(LT(F, 2, 3, 4), -1, NULL, false, &r), dnnl_success);
    CHECK(SHAPE_IS(&r, 2, 3, 4));
    CHECK_EQ_INT(reduce_case(LT(F, 2, 3, 4), 0, NULL, false, &r), dnnl_success);
    CHECK(SHAPE_IS(&r, 2, 3, 4));
    /* axes input */
    {
        pt_lt ins[] = {LT(F, 2, 3), LT(dnnl_s32, 1)}, outs[] = {LT(F, 2, 1)};
        pt_op *op = OP(dnnl_graph_op_reduce_max, ins, outs);
        pt_op_set_bool(op, dnnl_graph_op_attr_keep_dims, true);
        ACCEPTS(op);
        CHECK(!pt_op_has(op, dnnl_graph_op_attr_axes) ||
              pt_op_attr(op, dnnl_graph_op_attr_axes)->n == 0);
        CHECK_EQ_INT(infer(op), dnnl_success);
        CHECK(SHAPE_IS(&op->out[0], 2, 1));
        SET_LIST(op, dnnl_graph_op_attr_axes, 1);
        REJECTS(op); /* both axis sources */
        op->in[1].data_type = dnnl_s64;
        pt_op_del_attr(op, dnnl_graph_op_attr_axes);
        REJECTS(op); /* axes input must be s32 */
        pt_op_free(op);
    }
    {
        pt_lt ins[] = {LT(F, 2, 3)}, outs[] = {LT(dnnl_bf16, 2)};
        REJECTS_NEW(dnnl_graph_op_reduce_mean, ins, outs);
    }
}

static pt_status reshape_case(pt_lt src, int n, const int64_t *shape, bool sz, pt_lt *res) {
    pt_lt ins[] = {src}, outs[] = {lt_unranked(src.data_type)};
    pt_op *op = OP(dnnl_graph_op_static_reshape, ins, outs);
    set_s64s(op, dnnl_graph_op_attr_shape, n, shape, true);
    pt_op_set_bool(op, dnnl_graph_op_attr_special_zero, sz);
    return verify_infer_free(op, res);
}

static void test_shape_ops(void) {
    const dnnl_data_type_t F = dnnl_f32;
    pt_lt r;
    /* StaticReshape */
    CHECK_EQ_INT(reshape_case(LT(F, 2, 3, 4), 2, (int64_t[]){4, -1}, false, &r), dnnl_success);
    CHECK(SHAPE_IS(&r, 4, 6));
    CHECK_EQ_INT(reshape_case(LT(F, 2, 3, 4), 2, (int64_t[]){0, -1}, true, &r), dnnl_success);
    CHECK(SHAPE_IS(&r, 2, 12));
    CHECK_EQ_INT(reshape_case(LT(F, 2, 3, 4), 3, (int64_t[]){0, 0, 4}, true, &r), dnnl_success);
    CHECK(SHAPE_IS(&r, 2, 3, 4));
    CHECK_EQ_INT(reshape_case(LT(F, 2, 3, 4), 2, (int64_t[]){0, 24}, false, NULL),
                 dnnl_invalid_shape); /* literal 0: 0 elements != 24 */
    CHECK_EQ_INT(reshape_case(LT(F, 0, 5), 2, (int64_t[]){5, 0}, false, &r), dnnl_success);
    CHECK(SHAPE_IS(&r, 5, 0));
    CHECK_EQ_INT(reshape_case(LT(F, 0, 3), 2, (int64_t[]){0, -1}, false, NULL),
                 dnnl_invalid_shape); /* -1 with zero-size product */
    CHECK_EQ_INT(reshape_case(LT(F, 2, 3, 4), 2, (int64_t[]){-1, -1}, false, NULL),
                 dnnl_invalid_shape);
    CHECK_EQ_INT(reshape_case(LT(F, 2, 3, 4), 2, (int64_t[]){-2, 12}, false, NULL),
                 dnnl_invalid_shape);
    CHECK_EQ_INT(reshape_case(LT(F, 2, 3, 4), 2, (int64_t[]){5, 5}, false, NULL),
                 dnnl_invalid_shape);
    CHECK_EQ_INT(reshape_case(LT(F, 2, 3, 4), 2, (int64_t[]){5, -1}, false, NULL),
                 dnnl_invalid_shape); /* 24 not divisible by 5 */
    CHECK_EQ_INT(reshape_case(LT(F, 6), 2, (int64_t[]){2, 0}, true, NULL),
                 dnnl_invalid_shape); /* special zero beyond src rank */
    CHECK_EQ_INT(reshape_case(LT(F, 2, 3, 4), 0, NULL, false, NULL), dnnl_invalid_shape);
    CHECK_EQ_INT(reshape_case(LT(F, 1, 1), 0, NULL, false, &r), dnnl_success);
    CHECK_EQ_INT(r.ndims, 0);
    CHECK_EQ_INT(reshape_case(LT(F, U, 3), 2, (int64_t[]){-1, 3}, false, &r), dnnl_success);
    CHECK(SHAPE_IS(&r, U, 3));
    CHECK_EQ_INT(reshape_case(LT(F, U, 3), 3, (int64_t[]){0, 3, 1}, true, &r), dnnl_success);
    CHECK(SHAPE_IS(&r, U, 3, 1));
    CHECK_EQ_INT(reshape_case(lt_unranked(F), 2, (int64_t[]){4, 6}, false, &r), dnnl_success);
    CHECK(SHAPE_IS(&r, 4, 6));
    {
        pt_lt ins[] = {LT(F, 2, 3)}, outs[] = {LT(F, 6)};
        pt_op *op = OP(dnnl_graph_op_static_reshape, ins, outs);
        SET_LIST(op, dnnl_graph_op_attr_shape, 6);
        REJECTS(op); /* special_zero required */
        pt_op_set_bool(op, dnnl_graph_op_attr_special_zero, false);
        ACCEPTS(op);
        CHECK_EQ_INT(infer(op), dnnl_success);
        REJECTS_AS(op, &op->out[0], dnnl_bf16);
        pt_op_free(op);
    }
    /* StaticTranspose */
    {
        pt_lt ins[] = {LT(F, 2, 3, 4)}, outs[] = {lt_unranked(F)};
        pt_op *op = OP(dnnl_graph_op_static_transpose, ins, outs);
        REJECTS(op); /* order required */
        SET_LIST(op, dnnl_graph_op_attr_order, 2, 0, 1);
        INFERS_SHAPE(op, 4, 2, 3);
        op->out[0] = lt_unranked(F);
        SET_LIST(op, dnnl_graph_op_attr_order, -1, 0, -2);
        CHECK_EQ_INT(infer(op), dnnl_success);
        CHECK(SHAPE_IS(&op->out[0], 4, 2, 3));
        op->out[0] = lt_unranked(F);
        set_s64s(op, dnnl_graph_op_attr_order, 0, NULL, true); /* empty: reverse */
        CHECK_EQ_INT(infer(op), dnnl_success);
        CHECK(SHAPE_IS(&op->out[0], 4, 3, 2));
        SET_LIST(op, dnnl_graph_op_attr_order, 1, 0);
        CHECK_EQ_INT(infer(op), dnnl_invalid_shape);
        SET_LIST(op, dnnl_graph_op_attr_order, 0, 0, 1);
        CHECK_EQ_INT(infer(op), dnnl_invalid_shape);
        SET_LIST(op, dnnl_graph_op_attr_order, 0, 1, 3);
        CHECK_EQ_INT(infer(op), dnnl_invalid_shape);
        pt_op_free(op);
    }
    /* Concat */
    {
        pt_lt ins[] = {LT(F, 2, 3), LT(F, 2, 5), LT(F, 2, 1)}, outs[] = {lt_unranked(F)};
        pt_op *op = OP(dnnl_graph_op_concat, ins, outs);
        REJECTS(op); /* axis required */
        set_s64(op, dnnl_graph_op_attr_axis, 1);
        INFERS_SHAPE(op, 2, 9);
        op->out[0] = lt_unranked(F);
        set_s64(op, dnnl_graph_op_attr_axis, -1);
        CHECK_EQ_INT(infer(op), dnnl_success);
        CHECK(SHAPE_IS(&op->out[0], 2, 9));
        set_s64(op, dnnl_graph_op_attr_axis, 0);
        CHECK_EQ_INT(infer(op), dnnl_invalid_shape); /* non-axis dim differs */
        set_s64(op, dnnl_graph_op_attr_axis, 2);
        CHECK_EQ_INT(infer(op), dnnl_invalid_arguments);
        op->in[1] = LT(F, 2, 5, 1);
        set_s64(op, dnnl_graph_op_attr_axis, 1);
        CHECK_EQ_INT(infer(op), dnnl_invalid_shape); /* ranks differ */
        op->in[1] = LT(dnnl_bf16, 2, 5);
        REJECTS(op);
        pt_op_free(op);
    }
    {
        pt_lt ins[] = {LT(F, U, 3), LT(F, 2, U)}, outs[] = {lt_unranked(F)};
        pt_op *op = OP(dnnl_graph_op_concat, ins, outs);
        set_s64(op, dnnl_graph_op_attr_axis, 1);
        INFERS_SHAPE(op, 2, U);
        pt_op_free(op);
    }
    {
        pt_lt ins[65], outs[] = {lt_unranked(F)};
        for (int i = 0; i < 65; ++i) ins[i] = LT(F, 1, 2);
        pt_op *op = mkop(dnnl_graph_op_concat, 65, ins, 1, outs);
        set_s64(op, dnnl_graph_op_attr_axis, 0);
        REJECTS(op);
        pt_op_free(op);
        op = mkop(dnnl_graph_op_concat, 64, ins, 1, outs);
        set_s64(op, dnnl_graph_op_attr_axis, 0);
        INFERS_SHAPE(op, 64, 2);
        pt_op_free(op);
        op = mkop(dnnl_graph_op_concat, 0, ins, 1, outs);
        set_s64(op, dnnl_graph_op_attr_axis, 0);
        REJECTS(op);
        pt_op_free(op);
    }
}

static void test_misc_ops(void) {
    const dnnl_data_type_t F = dnnl_f32, BF = dnnl_bf16, H = dnnl_f16;
    /* TypeCast */
    {
        pt_lt ins[] = {LT(F, 2, 3)}, outs[] = {LT(BF, U, U)};
        pt_op *op = OP(dnnl_graph_op_type_cast, ins, outs);
        INFERS_SHAPE(op, 2, 3);
        REJECTS_AS(op, &op->out[0], F);
        op->in[0].data_type = H;
        REJECTS_AS(op, &op->out[0], BF);
        op->out[0].data_type = F;
        ACCEPTS(op);
        pt_op_free(op);
    }
    /* Reorder */
    {
        pt_lt ins[] = {LT(F, 2, 3)}, outs[] = {LT(F, 2, 3)};
        pt_op *op = OP(dnnl_graph_op_reorder, ins, outs);
        ACCEPTS(op);
        REJECTS_AS(op, &op->out[0], BF);
        pt_op_free(op);
    }
    /* GenIndex */
    {
        pt_lt ins[] = {LT(F, 2, 3)}, outs[] = {LT(dnnl_s32, U, U)};
        pt_op *op = OP(dnnl_graph_op_gen_index, ins, outs);
        REJECTS(op); /* axis required */
        set_s64(op, dnnl_graph_op_attr_axis, -1);
        INFERS_SHAPE(op, 2, 3);
        set_s64(op, dnnl_graph_op_attr_axis, 2);
        CHECK_EQ_INT(infer(op), dnnl_invalid_arguments);
        REJECTS_AS(op, &op->out[0], F);
        pt_op_free(op);
    }
    /* Dropout */
    {
        pt_lt ins[] = {LT(BF, 4, 5), lt_scalar(dnnl_s64), lt_scalar(dnnl_s64), lt_scalar(F)},
              outs[] = {lt_unranked(BF), lt_unranked(dnnl_u8)};
        pt_op *op = OP(dnnl_graph_op_dropout, ins, outs);
        INFERS_SHAPE(op, 4, 5);
        CHECK(SHAPE_IS(&op->out[1], 4, 5));
        REJECTS_AS(op, &op->in[1], dnnl_s32);
        op->in[1].data_type = dnnl_s64;
        REJECTS_AS(op, &op->out[1], dnnl_boolean);
        op->out[1].data_type = dnnl_u8;
        float p = 0.5f;
        pt_op_set_f32(op, dnnl_graph_op_attr_alpha, &p, 1, false);
        REJECTS(op); /* no attributes */
        pt_op_free(op);
    }
    {
        pt_lt ins[] = {LT(F, 4), lt_scalar(dnnl_s64), lt_scalar(dnnl_s64)}, outs[] = {LT(F, 4)};
        REJECTS_NEW(dnnl_graph_op_dropout, ins, outs);
    }
    /* End: one input of any type (undef included), no outputs */
    {
        pt_lt ins[] = {lt_unranked(dnnl_data_type_undef)};
        pt_op *op = mkop(dnnl_graph_op_end, 1, ins, 0, NULL);
        ACCEPTS(op);
        CHECK_EQ_INT(infer(op), dnnl_success);
        op->in[0].data_type = dnnl_s4;
        ACCEPTS(op);
        pt_op_free(op);
        pt_lt outs[] = {LT(F, 2)};
        op = mkop(dnnl_graph_op_end, 1, ins, 1, outs);
        REJECTS(op);
        pt_op_free(op);
        op = mkop(dnnl_graph_op_end, 0, ins, 0, NULL);
        REJECTS(op);
        pt_op_free(op);
    }
    /* Wildcard: anything goes except attributes; never supported */
    {
        pt_lt ins[] = {LT(dnnl_u4, 2), lt_unranked(dnnl_data_type_undef), LT(dnnl_boolean, 1)},
              outs[] = {LT(dnnl_s64, 3), LT(F, 2, 2)};
        pt_op *op = OP(dnnl_graph_op_wildcard, ins, outs);
        ACCEPTS(op);
        CHECK(!pt_schema_supported(op));
        CHECK_EQ_INT(infer(op), dnnl_success);
        op->out[1] = lt_unranked(F);
        CHECK_EQ_INT(infer(op), dnnl_unimplemented);
        set_s64(op, dnnl_graph_op_attr_axis, 0);
        REJECTS(op);
        pt_op_free(op);
        op = mkop(dnnl_graph_op_wildcard, 0, NULL, 0, NULL);
        ACCEPTS(op);
        pt_op_free(op);
    }
}

/* auto_pad is compared case-insensitively and stored canonically (only when
 * the spatial rows are linked). */
static void test_auto_pad_canonical(void) {
    const pt_op_schema *s = pt_schema_of(dnnl_graph_op_max_pool);
    if (!s) return;
    pt_lt ins[] = {LT(dnnl_f32, 1, 1, 4, 4)}, outs[] = {lt_unranked(dnnl_f32)};
    pt_op *op = OP(dnnl_graph_op_max_pool, ins, outs);
    SET_LIST(op, dnnl_graph_op_attr_strides, 1, 1);
    SET_LIST(op, dnnl_graph_op_attr_kernel, 2, 2);
    SET_LIST(op, dnnl_graph_op_attr_pads_begin, 0, 0);
    SET_LIST(op, dnnl_graph_op_attr_pads_end, 0, 0);
    set_str(op, dnnl_graph_op_attr_auto_pad, "same_upper");
    ACCEPTS(op);
    CHECK(strcmp(pt_op_str(op, dnnl_graph_op_attr_auto_pad, ""), "SAME_UPPER") == 0);
    set_str(op, dnnl_graph_op_attr_auto_pad, "Same_Sideways");
    REJECTS(op);
    pt_op_free(op);
}

int main(void) {
    test_registry();
    test_seed003_dim_table();
    test_seed003_examples();
    test_set_output_shape();
    test_unidirectional_and_axis();
    test_select();
    test_eltwise_verify();
    test_binary_verify();
    test_bias_prelu();
    test_norms();
    test_quant_static();
    test_quant_dynamic();
    test_matmul();
    test_softmax();
    test_reductions();
    test_shape_ops();
    test_misc_ops();
    test_auto_pad_canonical();
    return pt_test_summary("test_int_schema");
}
