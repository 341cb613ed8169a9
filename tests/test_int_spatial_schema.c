/* Spatial op schemas: auto_pad / output-extent helpers, add_op checks and
 * shape inference of the pooling, convolution, ConvTranspose, Interpolate
 * and BatchNorm rows.  Expected extents are computed by hand in comments. */
#include <stdarg.h>
#include <string.h>

#include "ir/op.h"
#include "ops/op_schema.h"
#include "ops/spatial_utils.h"
#include "test_util.h"

#define U PT_UNKNOWN_DIM
#define A(x) dnnl_graph_op_attr_##x

/* ---- builders ---------------------------------------------------------- */

static size_t next_id = 1;

static pt_lt mk_lt(dnnl_data_type_t dt, int nd, const int64_t *dims) {
    pt_lt t;
    memset(&t, 0, sizeof t);
    t.id = next_id++;
    t.data_type = dt;
    t.ndims = nd;
    for (int i = 0; i < nd && i < DNNL_MAX_NDIMS; ++i) t.dims[i] = dims[i];
    t.layout_type = dnnl_graph_layout_type_strided;
    for (int i = 0; i < DNNL_MAX_NDIMS; ++i) t.layout.strides[i] = U;
    return t;
}

/* T(dt, d0, d1, ...) : a logical tensor; T0(dt) : rank unknown. */
#define T(dt, ...)                                                                                 \
    mk_lt(dt, (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (int64_t[]){__VA_ARGS__})
#define T0(dt) mk_lt(dt, -1, NULL)
#define F32 dnnl_f32

/* Sets an s64 list attribute. */
#define LIST(op, a, ...)                                                                           \
    pt_op_set_s64(op, A(a), (int64_t[]){__VA_ARGS__},                                              \
                  sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t), true)
#define EMPTY(op, a) pt_op_set_s64(op, A(a), NULL, 0, true)

static pt_op *mk_op(dnnl_graph_op_kind_t kind, int nin, int nout, ...) {
    pt_op *op = pt_op_new(next_id++, kind, "t");
    va_list ap;
    va_start(ap, nout);
    for (int i = 0; i < nin; ++i) {
        pt_lt t = va_arg(ap, pt_lt);
        pt_op_add_input(op, &t);
    }
    for (int i = 0; i < nout; ++i) {
        pt_lt t = va_arg(ap, pt_lt);
        pt_op_add_output(op, &t);
    }
    va_end(ap);
    return op;
}

static pt_status verify(pt_op *op) { return pt_schema_verify(op); }
static pt_status infer(pt_op *op) { return pt_schema_infer(op, op->in, op->out); }
/* add_op validation followed by shape inference. */
static pt_status run(pt_op *op) {
    pt_status st = verify(op);
    return st != dnnl_success ? st : infer(op);
}

static bool shape_is(const pt_lt *t, int nd, const int64_t *d) {
    if (t->ndims != nd) return false;
    for (int i = 0; i < nd; ++i)
        if (t->dims[i] != d[i]) return false;
    return true;
}
#define SHAPE_IS(t, ...)                                                                           \
    shape_is(t, (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (int64_t[]){__VA_ARGS__})
/* add_op validation and inference succeed with output 0 of these dims */
#define RUNS_TO(op, ...)                                                                           \
    do {                                                                                           \
        CHECK_EQ_INT(run(op), dnnl_success);                                                       \
        CHECK(SHAPE_IS(&(op)->out[0], __VA_ARGS__));                                               \
    } while (0)

/* Pool geometry shared by many cases. */
static void pool_attrs(pt_op *op, const char *fmt) {
    LIST(op, strides, 2, 2);
    LIST(op, kernel, 3, 3);
    LIST(op, pads_begin, 1, 1);
    LIST(op, pads_end, 1, 1);
    if (fmt) pt_op_set_str(op, A(data_format), fmt);
}

/* ---- helpers of spatial_utils.h ---------------------------------------- */

static void test_geometry(void) {
    /* floor: (5 + 2 - 3) / 2 + 1 = 3 */
    CHECK_EQ_INT(pt_conv_out_extent(5, 3, 2, 1, 1, 1, false), 3);
    /* (8 - 3) = 5: floor 5/2 = 2 -> 3; ceil -> 4 */
    CHECK_EQ_INT(pt_conv_out_extent(8, 3, 2, 1, 0, 0, false), 3);
    CHECK_EQ_INT(pt_conv_out_extent(8, 3, 2, 1, 0, 0, true), 4);
    /* exact division: ceil == floor: (7 - 3) / 2 + 1 = 3 */
    CHECK_EQ_INT(pt_conv_out_extent(7, 3, 2, 1, 0, 0, true), 3);
    /* dilation 2, K 3 -> E 5: 10 - 5 + 1 = 6 */
    CHECK_EQ_INT(pt_conv_out_extent(10, 3, 1, 2, 0, 0, false), 6);
    CHECK_EQ_INT(pt_conv_out_extent(3, 3, 1, 1, 0, 0, false), 1);
    /* I + P - E < 0 and invalid arguments */
    CHECK_EQ_INT(pt_conv_out_extent(2, 5, 1, 1, 0, 0, false), -1);
    CHECK_EQ_INT(pt_conv_out_extent(0, 1, 1, 1, 0, 0, false), -1);
    CHECK_EQ_INT(pt_conv_out_extent(0, 2, 1, 1, 1, 1, false), 1);
    CHECK_EQ_INT(pt_conv_out_extent(5, 0, 1, 1, 0, 0, false), -1);
    CHECK_EQ_INT(pt_conv_out_extent(5, 1, 0, 1, 0, 0, false), -1);
    CHECK_EQ_INT(pt_conv_out_extent(5, 1, 1, 0, 0, 0, false), -1);
    CHECK_EQ_INT(pt_conv_out_extent(5, 1, 1, 1, -1, 0, false), -1);
    CHECK_EQ_INT(pt_conv_out_extent(INT64_MAX, 1, 1, 1, 1, 0, false), -1);
    CHECK_EQ_INT(pt_conv_out_extent(5, INT64_MAX, 1, 2, 0, 0, false), -1);

    /* ConvTranspose: 2·(4-1) + 3 + 0 - 2 = 7; output_padding 1 -> 8 */
    CHECK_EQ_INT(pt_deconv_out_extent(4, 3, 2, 1, 1, 1, 0), 7);
    CHECK_EQ_INT(pt_deconv_out_extent(4, 3, 2, 1, 1, 1, 1), 8);
    /* dilation 2 -> E 5: 6 + 5 - 2 = 9 */
    CHECK_EQ_INT(pt_deconv_out_extent(4, 3, 2, 2, 1, 1, 0), 9);
    /* 3·2 + 2 = 8 */
    CHECK_EQ_INT(pt_deconv_out_extent(3, 2, 3, 1, 0, 0, 0), 8);
    /* 0 + 1 - 1 = 0 -> rejected */
    CHECK_EQ_INT(pt_deconv_out_extent(1, 1, 1, 1, 1, 0, 0), -1);
    CHECK_EQ_INT(pt_deconv_out_extent(1, 1, 1, 1, 0, 0, 0), 1);
    CHECK_EQ_INT(pt_deconv_out_extent(3, 2, 1, 1, INT64_MAX, INT64_MAX, 0), -1);
    CHECK_EQ_INT(pt_deconv_out_extent(0, 2, 1, 1, 0, 0, 0), -1);
    CHECK_EQ_INT(pt_deconv_out_extent(3, 2, 1, 1, 0, 0, -1), -1);

    CHECK(pt_auto_pad_none(NULL));
    CHECK(pt_auto_pad_none("None"));
    CHECK(pt_auto_pad_none("none"));
    CHECK(pt_auto_pad_none("NONE"));
    CHECK(!pt_auto_pad_none("VALID"));
    CHECK(!pt_auto_pad_none("same_upper"));

    int64_t pb = -7, pe = -7;
    pt_resolve_pad("None", false, 8, 3, 2, 1, 3, 4, &pb, &pe);
    CHECK(pb == 3 && pe == 4);
    pt_resolve_pad(NULL, false, 8, 3, 2, 1, 2, 0, &pb, &pe);
    CHECK(pb == 2 && pe == 0);
    pt_resolve_pad("VALID", false, 8, 3, 2, 1, 3, 4, &pb, &pe);
    CHECK(pb == 0 && pe == 0);
    pt_resolve_pad("valid", true, 8, 3, 2, 1, 3, 4, &pb, &pe);
    CHECK(pb == 0 && pe == 0);
    /* I 8 % S 2 == 0 -> T = E - S = 1: UPPER puts it at the end, LOWER at the start */
    pt_resolve_pad("SAME_UPPER", false, 8, 3, 2, 1, 9, 9, &pb, &pe);
    CHECK(pb == 0 && pe == 1);
    pt_resolve_pad("SAME_LOWER", false, 8, 3, 2, 1, 9, 9, &pb, &pe);
    CHECK(pb == 1 && pe == 0);
    /* I 7 % 2 = 1 -> T = 3 - 1 = 2 -> (1, 1) */
    pt_resolve_pad("same_upper", false, 7, 3, 2, 1, 0, 0, &pb, &pe);
    CHECK(pb == 1 && pe == 1);
    /* K 4, S 1 -> T 3: UPPER (1, 2), LOWER (2, 1) */
    pt_resolve_pad("Same_Upper", false, 5, 4, 1, 1, 0, 0, &pb, &pe);
    CHECK(pb == 1 && pe == 2);
    pt_resolve_pad("same_lower", false, 5, 4, 1, 1, 0, 0, &pb, &pe);
    CHECK(pb == 2 && pe == 1);
    /* dilation: E = (3-1)·2 + 1 = 5, S 1 -> T 4 -> (2, 2) */
    pt_resolve_pad("SAME_LOWER", false, 6, 3, 1, 2, 0, 0, &pb, &pe);
    CHECK(pb == 2 && pe == 2);
    /* T = E - I%S = 1 - 2 < 0 -> clamped to 0 */
    pt_resolve_pad("SAME_UPPER", false, 5, 1, 3, 1, 4, 4, &pb, &pe);
    CHECK(pb == 0 && pe == 0);
    /* ConvTranspose rule T = E - S regardless of I: K 3, S 2 -> 1 */
    pt_resolve_pad("SAME_UPPER", true, 5, 3, 2, 1, 0, 0, &pb, &pe);
    CHECK(pb == 0 && pe == 1);
    pt_resolve_pad("SAME_LOWER", true, 5, 3, 2, 1, 0, 0, &pb, &pe);
    CHECK(pb == 1 && pe == 0);
    /* ... where the forward rule gives T = 3 - 5%2 = 2 */
    pt_resolve_pad("SAME_LOWER", false, 5, 3, 2, 1, 0, 0, &pb, &pe);
    CHECK(pb == 1 && pe == 1);
    /* K 1, S 2 transpose: T = -1 -> 0 */
    pt_resolve_pad("SAME_LOWER", true, 5, 1, 2, 1, 0, 0, &pb, &pe);
    CHECK(pb == 0 && pe == 0);
}

/* ---- pooling ----------------------------------------------------------- */

/* Pooling shape cases: geometry attributes, expected status and dst. */
typedef struct {
    const char *what;
    dnnl_graph_op_kind_t kind;
    int nd;
    int64_t src[6];
    int ns; /* spatial dims of the list attributes */
    int64_t strides[4], kernel[4], pads_begin[4], pads_end[4], dilations[4]; /* dilations[0] 0: unset */
    const char *format, *rounding, *auto_pad; /* NULL: unset */
    int exclude_pad;                          /* -1: unset */
    int out_nd;                               /* a declared dst; 0: rank unknown */
    int64_t out[6];
    pt_status want;
    int64_t want_dst[6]; /* dims, when want is success */
    dnnl_data_type_t in2_dt; /* a second input (diff_dst, runtime src_shape); 0: none */
    int in2_nd;
    int64_t in2[4];
    int64_t src_shape[4]; /* the src_shape attribute; [0] 0: unset */
} pool_case;

static const pool_case pool_cases[] = {
    /* ceil rounding, no pads: H (7-3)/2 exact -> 3; W 5/2 -> ceil 3 + 1 = 4 */
    {"avg ceil", dnnl_graph_op_avg_pool, 4, {2, 3, 7, 8}, 2, {2, 2}, {3, 3}, {0, 0}, {0, 0}, {0}, "NCX", "ceil",
     NULL, 0, 0, {0}, dnnl_success, {2, 3, 3, 4}, 0, 0, {0}, {0}},
    /* VALID: (7-3)/2+1 = 3, (8-3)/2+1 = 3 */
    {"avg VALID", dnnl_graph_op_avg_pool, 4, {2, 3, 7, 8}, 2, {2, 2}, {3, 3}, {1, 1}, {1, 1}, {0}, "NCX", NULL,
     "VALID", 0, 0, {0}, dnnl_success, {2, 3, 3, 3}, 0, 0, {0}, {0}},
    /* rank 3: [1,4,10], K 4, S 3: (10-4)/3+1 = 3 */
    {"avg rank 3", dnnl_graph_op_avg_pool, 3, {1, 4, 10}, 1, {3}, {4}, {0}, {0}, {0}, "NCX", NULL, NULL, 0, 0,
     {0}, dnnl_success, {1, 4, 3}, 0, 0, {0}, {0}},
    /* unknown dims: N and H unknown stay unknown, W computed */
    {"avg unknown dims", dnnl_graph_op_avg_pool, 4, {U, 3, U, 8}, 2, {2, 2}, {3, 3}, {1, 1}, {1, 1}, {0}, "NCX",
     NULL, NULL, 0, 0, {0}, dnnl_success, {U, 3, U, 4}, 0, 0, {0}, {0}},
    /* declared dst contradicting the inferred one */
    {"avg declared dst", dnnl_graph_op_avg_pool, 4, {2, 3, 7, 8}, 2, {2, 2}, {3, 3}, {1, 1}, {1, 1}, {0}, "NCX",
     NULL, NULL, 0, 4, {2, 3, 5, 4}, dnnl_invalid_shape, {0}, 0, 0, {0}, {0}},
    /* non-positive output extent: 2 + 0 - 5 < 0 */
    {"avg extent", dnnl_graph_op_avg_pool, 4, {1, 1, 2, 2}, 2, {2, 2}, {5, 5}, {0, 0}, {0, 0}, {0}, "NCX", NULL,
     NULL, 0, 0, {0}, dnnl_invalid_shape, {0}, 0, 0, {0}, {0}},
    /* rank 6 is outside [3, 5] */
    {"avg rank 6", dnnl_graph_op_avg_pool, 6, {1, 1, 4, 4, 4, 4}, 4, {1, 1, 1, 1}, {1, 1, 1, 1}, {0, 0, 0, 0},
     {0, 0, 0, 0}, {0}, NULL, NULL, NULL, 0, 0, {0}, dnnl_invalid_shape, {0}, 0, 0, {0}, {0}},
    /* NXC [1,9,9,2], K 3, S 1, dilation 2 -> E 5: 9 - 5 + 1 = 5 */
    {"max dilated", dnnl_graph_op_max_pool, 4, {1, 9, 9, 2}, 2, {1, 1}, {3, 3}, {0, 0}, {0, 0}, {2, 2}, NULL, NULL,
     NULL, -1, 0, {0}, dnnl_success, {1, 5, 5, 2}, 0, 0, {0}, {0}},
    /* ceil: NCX [1,1,6,6], K 3, S 2: (6-3) = 3 -> floor 1 + 1 = 2, ceil 2 + 1 = 3 */
    {"max ceil", dnnl_graph_op_max_pool, 4, {1, 1, 6, 6}, 2, {2, 2}, {3, 3}, {0, 0}, {0, 0}, {0}, "NCX", "ceil",
     NULL, -1, 0, {0}, dnnl_success, {1, 1, 3, 3}, 0, 0, {0}, {0}},
    /* SAME_LOWER, NCX [1,1,5,6], K 2, S 2 -> ceil(I/S): 3, 3 */
    {"max SAME_LOWER", dnnl_graph_op_max_pool, 4, {1, 1, 5, 6}, 2, {2, 2}, {2, 2}, {0, 0}, {0, 0}, {0}, "NCX", NULL,
     "SAME_LOWER", -1, 0, {0}, dnnl_success, {1, 1, 3, 3}, 0, 0, {0}, {0}},
    /* AvgPoolBackward: inconsistent diff_dst (the forward output is [2,3,4,4]) */
    {"avg bwd diff_dst", dnnl_graph_op_avg_pool_backward, 4, {2, 3, 3, 4}, 2, {2, 2}, {3, 3}, {1, 1}, {1, 1}, {0},
     "NCX", NULL, NULL, 0, 0, {0}, dnnl_invalid_shape, {0}, 0, 0, {0}, {2, 3, 7, 8}},
    /* NXC, SAME_UPPER: 7 -> 4, 8 -> 4 */
    {"avg bwd SAME_UPPER", dnnl_graph_op_avg_pool_backward, 4, {2, 4, 4, 3}, 2, {2, 2}, {3, 3}, {1, 1}, {1, 1}, {0},
     NULL, NULL, "SAME_UPPER", 1, 0, {0}, dnnl_success, {2, 7, 8, 3}, 0, 0, {0}, {2, 7, 8, 3}},
    /* only the runtime src_shape input, but the output is declared */
    {"avg bwd declared", dnnl_graph_op_avg_pool_backward, 4, {2, 3, 4, 4}, 2, {2, 2}, {3, 3}, {1, 1}, {1, 1}, {0},
     "NCX", NULL, NULL, 0, 4, {2, 3, 7, 8}, dnnl_success, {2, 3, 7, 8}, dnnl_s32, 1, {4}, {0}},
    /* no shape source at all */
    {"avg bwd no shape", dnnl_graph_op_avg_pool_backward, 4, {2, 3, 4, 4}, 2, {2, 2}, {3, 3}, {1, 1}, {1, 1}, {0},
     "NCX", NULL, NULL, 0, 0, {0}, dnnl_invalid_shape, {0}, 0, 0, {0}, {0}},
    /* MaxPoolBackward: diff_src = src; diff_dst checked against the forward
     * output (NXC [1,9,9,2], K 3, S 1, dilation 2 -> 5) */
    {"max bwd", dnnl_graph_op_max_pool_backward, 4, {1, 9, 9, 2}, 2, {1, 1}, {3, 3}, {0, 0}, {0, 0}, {2, 2}, NULL,
     NULL, NULL, -1, 0, {0}, dnnl_success, {1, 9, 9, 2}, F32, 4, {1, 5, 5, 2}, {0}},
    {"max bwd diff_dst", dnnl_graph_op_max_pool_backward, 4, {1, 9, 9, 2}, 2, {1, 1}, {3, 3}, {0, 0}, {0, 0},
     {2, 2}, NULL, NULL, NULL, -1, 0, {0}, dnnl_invalid_shape, {0}, F32, 4, {1, 6, 5, 2}, {0}},
};

static void test_pool_cases(void) {
    for (size_t i = 0; i < sizeof pool_cases / sizeof pool_cases[0]; ++i) {
        const pool_case *c = &pool_cases[i];
        pt_lt out = c->out_nd ? mk_lt(F32, c->out_nd, c->out) : T0(F32);
        pt_op *op = c->in2_dt ? mk_op(c->kind, 2, 1, mk_lt(F32, c->nd, c->src), mk_lt(c->in2_dt, c->in2_nd, c->in2), out)
                              : mk_op(c->kind, 1, 1, mk_lt(F32, c->nd, c->src), out);
        pt_op_set_s64(op, A(strides), c->strides, (size_t)c->ns, true);
        pt_op_set_s64(op, A(kernel), c->kernel, (size_t)c->ns, true);
        pt_op_set_s64(op, A(pads_begin), c->pads_begin, (size_t)c->ns, true);
        pt_op_set_s64(op, A(pads_end), c->pads_end, (size_t)c->ns, true);
        if (c->dilations[0]) pt_op_set_s64(op, A(dilations), c->dilations, (size_t)c->ns, true);
        if (c->format) pt_op_set_str(op, A(data_format), c->format);
        if (c->rounding) pt_op_set_str(op, A(rounding_type), c->rounding);
        if (c->auto_pad) pt_op_set_str(op, A(auto_pad), c->auto_pad);
        if (c->exclude_pad >= 0) pt_op_set_bool(op, A(exclude_pad), c->exclude_pad != 0);
        if (c->src_shape[0]) pt_op_set_s64(op, A(src_shape), c->src_shape, 4, true);
        pt_status st = run(op);
        CHECK_EQ_INT(st, c->want);
        if (c->want == dnnl_success) CHECK(shape_is(&op->out[0], c->nd, c->want_dst));
        if (st != c->want) fprintf(stderr, "  pool case '%s'\n", c->what);
        pt_op_free(op);
    }
}

static void test_avg_pool(void) {
    /* NCX [2,3,7,8], K 3, S 2, pads 1/1: H (7+2-3)/2+1 = 4, W (8+2-3)/2+1 = 4 */
    pt_op *op = mk_op(dnnl_graph_op_avg_pool, 1, 1, T(F32, 2, 3, 7, 8), T0(F32));
    pool_attrs(op, "NCX");
    pt_op_set_bool(op, A(exclude_pad), false);
    RUNS_TO(op, 2, 3, 4, 4);
    /* dense strides filled for the strided output */
    CHECK(op->out[0].layout.strides[0] == 48 && op->out[0].layout.strides[1] == 16 &&
          op->out[0].layout.strides[2] == 4 && op->out[0].layout.strides[3] == 1);
    /* defaults filled at add_op */
    CHECK(strcmp(pt_op_str(op, A(rounding_type), ""), "floor") == 0);
    CHECK(strcmp(pt_op_str(op, A(auto_pad), ""), "None") == 0);
    CHECK_EQ_INT(pt_schema_supported(op), 1);
    pt_op_free(op);

    /* the same in NXC (the default data_format) */
    op = mk_op(dnnl_graph_op_avg_pool, 1, 1, T(F32, 2, 7, 8, 3), T0(F32));
    pool_attrs(op, NULL);
    pt_op_set_bool(op, A(exclude_pad), true);
    RUNS_TO(op, 2, 4, 4, 3);
    CHECK(strcmp(pt_op_str(op, A(data_format), ""), "NXC") == 0);
    pt_op_free(op);

    /* floor for comparison: W 5/2 -> 2 + 1 = 3 */
    op = mk_op(dnnl_graph_op_avg_pool, 1, 1, T(F32, 2, 3, 7, 8), T0(F32));
    pool_attrs(op, "NCX");
    EMPTY(op, pads_begin); /* empty list = zeros */
    EMPTY(op, pads_end);
    pt_op_set_bool(op, A(exclude_pad), false);
    RUNS_TO(op, 2, 3, 3, 3);
    pt_op_free(op);

    /* auto_pad in lowercase is accepted and stored canonically; SAME gives
     * ceil(I / S): 7 -> 4, 8 -> 4.  The explicit pads (even of the wrong
     * length) are ignored. */
    op = mk_op(dnnl_graph_op_avg_pool, 1, 1, T(F32, 2, 3, 7, 8), T0(F32));
    pool_attrs(op, "NCX");
    LIST(op, pads_begin, 5);
    pt_op_set_bool(op, A(exclude_pad), false);
    pt_op_set_str(op, A(auto_pad), "same_upper");
    CHECK_EQ_INT(run(op), dnnl_success);
    CHECK(strcmp(pt_op_str(op, A(auto_pad), ""), "SAME_UPPER") == 0);
    CHECK(SHAPE_IS(&op->out[0], 2, 3, 4, 4));
    pt_op_free(op);

    /* unknown rank: nothing to infer, success */
    op = mk_op(dnnl_graph_op_avg_pool, 1, 1, T0(F32), T0(F32));
    pool_attrs(op, "NCX");
    pt_op_set_bool(op, A(exclude_pad), false);
    CHECK_EQ_INT(run(op), dnnl_success);
    CHECK_EQ_INT(op->out[0].ndims, -1);
    pt_op_free(op);

    /* a declared output with explicit (non-dense, channels-last) strides
     * keeps them; only the unknown dims are filled */
    op = mk_op(dnnl_graph_op_avg_pool, 1, 1, T(F32, 2, 3, 7, 8), T(F32, 2, 3, U, U));
    for (int i = 0; i < 4; ++i) op->out[0].layout.strides[i] = (int64_t[]){48, 1, 12, 3}[i];
    pool_attrs(op, "NCX");
    pt_op_set_bool(op, A(exclude_pad), false);
    RUNS_TO(op, 2, 3, 4, 4);
    CHECK(op->out[0].layout.strides[0] == 48 && op->out[0].layout.strides[1] == 1 &&
          op->out[0].layout.strides[2] == 12 && op->out[0].layout.strides[3] == 3);
    pt_op_free(op);

    /* kernel length mismatch -> invalid_shape at inference */
    op = mk_op(dnnl_graph_op_avg_pool, 1, 1, T(F32, 2, 3, 7, 8), T0(F32));
    pool_attrs(op, "NCX");
    LIST(op, kernel, 3);
    pt_op_set_bool(op, A(exclude_pad), false);
    CHECK_EQ_INT(verify(op), dnnl_success);
    CHECK_EQ_INT(infer(op), dnnl_invalid_shape);
    pt_op_free(op);

    /* add_op errors: negative pad, bad data_format, bad rounding_type,
     * missing exclude_pad, s32 src, zero stride, zero kernel */
    op = mk_op(dnnl_graph_op_avg_pool, 1, 1, T(F32, 2, 3, 7, 8), T0(F32));
    pool_attrs(op, "NCX");
    pt_op_set_bool(op, A(exclude_pad), false);
    LIST(op, pads_end, 1, -1);
    CHECK_EQ_INT(verify(op), dnnl_invalid_graph_op);
    LIST(op, pads_end, 1, 1);
    CHECK_EQ_INT(verify(op), dnnl_success);
    pt_op_set_str(op, A(data_format), "NCHW");
    CHECK_EQ_INT(verify(op), dnnl_invalid_graph_op);
    pt_op_set_str(op, A(data_format), "ncx"); /* case-sensitive */
    CHECK_EQ_INT(verify(op), dnnl_invalid_graph_op);
    pt_op_set_str(op, A(data_format), "NCX");
    pt_op_set_str(op, A(rounding_type), "round");
    CHECK_EQ_INT(verify(op), dnnl_invalid_graph_op);
    pt_op_set_str(op, A(rounding_type), "floor");
    pt_op_set_str(op, A(auto_pad), "SAME");
    CHECK_EQ_INT(verify(op), dnnl_invalid_graph_op);
    pt_op_set_str(op, A(auto_pad), "None");
    LIST(op, strides, 0, 1);
    CHECK_EQ_INT(verify(op), dnnl_invalid_graph_op);
    LIST(op, strides, 1, 1);
    LIST(op, kernel, 3, 0);
    CHECK_EQ_INT(verify(op), dnnl_invalid_graph_op);
    LIST(op, kernel, 3, 3);
    pt_op_del_attr(op, A(exclude_pad));
    CHECK_EQ_INT(verify(op), dnnl_invalid_graph_op);
    pt_op_free(op);
    op = mk_op(dnnl_graph_op_avg_pool, 1, 1, T(dnnl_s32, 2, 3, 7, 8), T0(dnnl_s32));
    pool_attrs(op, "NCX");
    pt_op_set_bool(op, A(exclude_pad), false);
    CHECK_EQ_INT(verify(op), dnnl_invalid_graph_op);
    pt_op_free(op);
}

static void test_max_pool(void) {
    /* default dilations (all 1): 9 - 3 + 1 = 7 */
    pt_op *op = mk_op(dnnl_graph_op_max_pool, 1, 1, T(dnnl_bf16, 1, 9, 9, 2), T0(dnnl_bf16));
    LIST(op, strides, 1, 1);
    LIST(op, kernel, 3, 3);
    LIST(op, pads_begin, 0, 0);
    LIST(op, pads_end, 0, 0);
    RUNS_TO(op, 1, 7, 7, 2);
    CHECK_EQ_INT(pt_schema_supported(op), 1);
    pt_op_free(op);
    /* dilations with a length different from kernel: add_op error */
    op = mk_op(dnnl_graph_op_max_pool, 1, 1, T(F32, 1, 9, 9, 2), T0(F32));
    LIST(op, strides, 1, 1);
    LIST(op, kernel, 3, 3);
    LIST(op, pads_begin, 0, 0);
    LIST(op, pads_end, 0, 0);
    LIST(op, dilations, 1);
    CHECK_EQ_INT(verify(op), dnnl_invalid_graph_op);
    LIST(op, dilations, 1, 0);
    CHECK_EQ_INT(verify(op), dnnl_invalid_graph_op);
    /* exclude_pad is not a MaxPool attribute */
    LIST(op, dilations, 1, 1);
    pt_op_set_bool(op, A(exclude_pad), true);
    CHECK_EQ_INT(verify(op), dnnl_invalid_graph_op);
    pt_op_free(op);
}

static void test_pool_backward(void) {
    /* AvgPoolBackward: diff_src from the src_shape attribute; diff_dst is
     * the forward output [2,3,4,4] (see test_avg_pool) */
    pt_op *op = mk_op(dnnl_graph_op_avg_pool_backward, 1, 1, T(F32, 2, 3, 4, 4), T0(F32));
    pool_attrs(op, "NCX");
    pt_op_set_bool(op, A(exclude_pad), false);
    LIST(op, src_shape, 2, 3, 7, 8);
    RUNS_TO(op, 2, 3, 7, 8);
    pt_op_free(op);
    /* only the runtime src_shape input: cannot infer (unimplemented) */
    op = mk_op(dnnl_graph_op_avg_pool_backward, 2, 1, T(F32, 2, 3, 4, 4), T(dnnl_s32, 4), T0(F32));
    pool_attrs(op, "NCX");
    pt_op_set_bool(op, A(exclude_pad), false);
    CHECK_EQ_INT(run(op), dnnl_unimplemented);
    CHECK_EQ_INT(pt_schema_supported(op), 1);
    pt_op_free(op);
    /* oneDNN's "unset" src_shape (12 zeros) counts as absent */
    op = mk_op(dnnl_graph_op_avg_pool_backward, 1, 1, T(F32, 2, 3, 4, 4), T(F32, 2, 3, 7, 8));
    pool_attrs(op, "NCX");
    pt_op_set_bool(op, A(exclude_pad), false);
    LIST(op, src_shape, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    CHECK_EQ_INT(run(op), dnnl_success);
    pt_op_free(op);
    /* src_shape input must be s32 */
    op = mk_op(dnnl_graph_op_avg_pool_backward, 2, 1, T(F32, 2, 3, 4, 4), T(F32, 4), T0(F32));
    pool_attrs(op, "NCX");
    pt_op_set_bool(op, A(exclude_pad), false);
    CHECK_EQ_INT(verify(op), dnnl_invalid_graph_op);
    pt_op_free(op);

    /* MaxPoolBackward: diff_src = src; diff_dst checked against the forward
     * output (NXC [1,9,9,2], K 3, S 1, dilation 2 -> 5) */
    /* src batch unknown: taken from diff_dst */
    op = mk_op(dnnl_graph_op_max_pool_backward, 2, 1, T(F32, U, 9, 9, 2), T(F32, 4, 5, 5, 2),
               T0(F32));
    LIST(op, strides, 1, 1);
    LIST(op, kernel, 3, 3);
    LIST(op, pads_begin, 0, 0);
    LIST(op, pads_end, 0, 0);
    LIST(op, dilations, 2, 2);
    RUNS_TO(op, 4, 9, 9, 2);
    pt_op_free(op);
}

/* ---- convolution family ------------------------------------------------ */

static void conv_attrs(pt_op *op, int64_t s, int64_t p, int64_t d) {
    LIST(op, strides, s, s);
    LIST(op, pads_begin, p, p);
    LIST(op, pads_end, p, p);
    LIST(op, dilations, d, d);
}

/* Sets list attribute `name`, forgets the inferred dst and runs again. */
static pt_status rerun_with(pt_op *op, int name, int n, const int64_t *v) {
    pt_op_set_s64(op, name, v, (size_t)n, true);
    op->out[0] = T0(F32);
    return run(op);
}

/* A two-input convolution-family op, strides / pads / dilations set. */
static pt_op *conv_op(dnnl_graph_op_kind_t kind, pt_lt src, pt_lt wei, int64_t s, int64_t p, int64_t d) {
    pt_op *op = mk_op(kind, 2, 1, src, wei, T0(F32));
    conv_attrs(op, s, p, d);
    return op;
}

/* groups (0: unset), data_format and weights_format. */
static void conv_layout(pt_op *op, int64_t groups, const char *fmt, const char *wfmt) {
    if (groups) pt_op_set_s64(op, A(groups), &groups, 1, false);
    pt_op_set_str(op, A(data_format), fmt);
    pt_op_set_str(op, A(weights_format), wfmt);
}

/* A biased op in NCX with groups 2, strides 2, pads 1, no dilation. */
static pt_op *grouped_ncx(dnnl_graph_op_kind_t kind, pt_lt src, pt_lt wei, int64_t bias, const char *wformat) {
    pt_op *op = mk_op(kind, 3, 1, src, wei, mk_lt(F32, 1, &bias), T0(F32));
    conv_attrs(op, 2, 1, 1);
    conv_layout(op, 2, "NCX", wformat);
    return op;
}

/* Convolution-family shape cases: two inputs (F32), strides / pads /
 * dilations as conv_attrs, optional attributes, expected status and dst. */
typedef struct {
    const char *what;
    dnnl_graph_op_kind_t kind;
    int64_t src[4], wei[4];
    int64_t s, p, d;
    const char *format, *wformat, *auto_pad; /* NULL: unset */
    int64_t groups;                          /* 0: unset */
    int shape_attr;                          /* dst_shape / weights_shape; 0: none */
    int64_t shape[4];
    int out_nd; /* a declared dst; 0: rank unknown */
    int64_t out[4];
    pt_status want;
    int64_t want_dst[4];
} conv_case;

/* an unset attribute list / undeclared dst */
#define UNSET_ 0, {0}
static const conv_case conv_cases[] = {
    /* SAME_UPPER with S 2: ceil(9/2) = 5 */
    {"conv SAME_UPPER", dnnl_graph_op_convolution, {1, 9, 9, 4}, {3, 3, 4, 8}, 2, 0, 1, NULL, NULL, "SAME_UPPER", 0,
     UNSET_, UNSET_, dnnl_success, {1, 5, 5, 8}},
    /* VALID: (9-3)/2+1 = 4; pads ignored */
    {"conv VALID", dnnl_graph_op_convolution, {1, 9, 9, 4}, {3, 3, 4, 8}, 2, 7, 1, NULL, NULL, "valid", 0, UNSET_,
     UNSET_, dnnl_success, {1, 4, 4, 8}},
    /* non-positive extent: kernel 11 on 9 */
    {"conv extent", dnnl_graph_op_convolution, {2, 9, 9, 4}, {11, 3, 4, 8}, 1, 0, 1, NULL, NULL, NULL, 0, UNSET_,
     UNSET_, dnnl_invalid_shape, {0}},
    /* NXC/XIO, SAME_UPPER: diff_src extent 8 -> T = 3 - 2 = 1 -> (8+1-3)/2+1 = 4 */
    {"conv bwd data SAME_UPPER", dnnl_graph_op_convolution_backward_data, {1, 4, 4, 6}, {3, 3, 2, 6}, 2, 0, 1, NULL,
     NULL, "SAME_UPPER", 0, A(dst_shape), {1, 8, 8, 2}, UNSET_, dnnl_success, {1, 8, 8, 2}},
    /* no dst_shape, no runtime input, no declared output */
    {"conv bwd data no shape", dnnl_graph_op_convolution_backward_data, {1, 4, 4, 6}, {3, 3, 2, 6}, 2, 0, 1, NULL,
     NULL, NULL, 0, UNSET_, UNSET_, dnnl_invalid_shape, {0}},
    /* NXC/XIO groups 2 */
    {"conv bwd weights NXC", dnnl_graph_op_convolution_backward_weights, {2, 9, 9, 4}, {2, 5, 5, 8}, 2, 1, 1, NULL,
     NULL, NULL, 2, A(weights_shape), {3, 3, 2, 8}, UNSET_, dnnl_success, {3, 3, 2, 8}},
    /* NCX/IOX: src [1,4,3,3], weights [IC 4, OC/G 3, 3, 3], S 2, pads 1: 2·2 + 3 - 2 = 5 */
    {"deconv", dnnl_graph_op_conv_transpose, {1, 4, 3, 3}, {4, 3, 3, 3}, 2, 1, 1, "NCX", "IOX", NULL, 0, UNSET_,
     UNSET_, dnnl_success, {1, 3, 5, 5}},
    /* SAME_LOWER uses T = E - S = 1: 2·2 + 3 - 1 = 6 = S·I (the forward rule
     * would give T = 2 and 5) */
    {"deconv SAME_LOWER", dnnl_graph_op_conv_transpose, {1, 4, 3, 3}, {4, 3, 3, 3}, 2, 0, 1, "NCX", "IOX",
     "SAME_LOWER", 0, UNSET_, UNSET_, dnnl_success, {1, 3, 6, 6}},
    /* weights I extent must equal IC */
    {"deconv I extent", dnnl_graph_op_conv_transpose, {1, 4, 3, 3}, {2, 3, 3, 3}, 2, 1, 1, "NCX", "IOX", NULL, 0,
     UNSET_, UNSET_, dnnl_invalid_shape, {0}},
    /* non-positive extent: 0 + 1 - 2 */
    {"deconv extent", dnnl_graph_op_conv_transpose, {1, 4, 1, 1}, {4, 3, 1, 1}, 1, 1, 1, "NCX", "IOX", NULL, 0,
     UNSET_, UNSET_, dnnl_invalid_shape, {0}},
    /* declared dst channels inconsistent with O·G */
    {"deconv declared dst", dnnl_graph_op_conv_transpose, {1, 4, 3, 3}, {4, 3, 3, 3}, 2, 1, 1, "NCX", "IOX", NULL,
     0, UNSET_, 4, {1, 7, U, U}, dnnl_invalid_shape, {0}},
    /* ConvTransposeBackwardData NXC/XOI, dilation 2: (7 - 3) + 1 = 5 */
    {"deconv bwd data dilated", dnnl_graph_op_conv_transpose_backward_data, {2, 7, 7, 4}, {2, 2, 4, 6}, 1, 0, 2,
     NULL, NULL, NULL, 0, UNSET_, UNSET_, dnnl_success, {2, 5, 5, 6}},
    /* SAME_UPPER with the diff_dst extent 6, K 3, S 2: T 1 -> (6+1-3)/2+1 = 3 */
    {"deconv bwd data SAME_UPPER", dnnl_graph_op_conv_transpose_backward_data, {1, 6, 6, 3}, {3, 3, 3, 4}, 2, 0, 1,
     NULL, NULL, "SAME_UPPER", 0, UNSET_, UNSET_, dnnl_success, {1, 3, 3, 4}},
    /* ConvTransposeBackwardWeights NXC/XOI */
    {"deconv bwd weights NXC", dnnl_graph_op_conv_transpose_backward_weights, {2, 5, 5, 6}, {2, 7, 7, 4}, 1, 0, 2,
     NULL, NULL, NULL, 0, A(weights_shape), {2, 2, 4, 6}, UNSET_, dnnl_success, {2, 2, 4, 6}},
};
#undef UNSET_

static void test_conv_cases(void) {
    for (size_t i = 0; i < sizeof conv_cases / sizeof conv_cases[0]; ++i) {
        const conv_case *c = &conv_cases[i];
        pt_lt out = c->out_nd ? mk_lt(F32, c->out_nd, c->out) : T0(F32);
        pt_op *op = mk_op(c->kind, 2, 1, mk_lt(F32, 4, c->src), mk_lt(F32, 4, c->wei), out);
        conv_attrs(op, c->s, c->p, c->d);
        if (c->format) pt_op_set_str(op, A(data_format), c->format);
        if (c->wformat) pt_op_set_str(op, A(weights_format), c->wformat);
        if (c->auto_pad) pt_op_set_str(op, A(auto_pad), c->auto_pad);
        if (c->groups) pt_op_set_s64(op, A(groups), &c->groups, 1, false);
        if (c->shape_attr) pt_op_set_s64(op, c->shape_attr, c->shape, 4, true);
        pt_status st = run(op);
        CHECK_EQ_INT(st, c->want);
        if (c->want == dnnl_success) CHECK(shape_is(&op->out[0], 4, c->want_dst));
        if (st != c->want) fprintf(stderr, "  conv case '%s'\n", c->what);
        pt_op_free(op);
    }
}

static void test_convolution(void) {
    /* NCX/OIX, groups 2: src [2,4,9,9], weights [8, 4/2, 3, 3], S 2, pads 1:
     * (9 + 2 - 3)/2 + 1 = 5 */
    pt_op *op = grouped_ncx(dnnl_graph_op_convolution, T(F32, 2, 4, 9, 9), T(F32, 8, 2, 3, 3), 8, "OIX");
    RUNS_TO(op, 2, 8, 5, 5);
    CHECK_EQ_INT(pt_schema_supported(op), 1);
    /* bias of the wrong extent */
    op->in[2].dims[0] = 7;
    CHECK_EQ_INT(infer(op), dnnl_invalid_shape);
    op->in[2].dims[0] = 8;
    /* IC / G must equal the weights I extent */
    op->in[1].dims[1] = 4;
    CHECK_EQ_INT(infer(op), dnnl_invalid_shape);
    op->in[1].dims[1] = 2;
    /* IC % G != 0 */
    op->in[0].dims[1] = 5;
    CHECK_EQ_INT(infer(op), dnnl_invalid_shape);
    pt_op_free(op);

    /* NXC/XIO defaults, dilation 2 -> E 5: 9 - 5 + 1 = 5 */
    op = conv_op(dnnl_graph_op_convolution, T(F32, 2, 9, 9, 4), T(F32, 3, 3, 4, 8), 1, 0, 2);
    RUNS_TO(op, 2, 5, 5, 8);
    CHECK(strcmp(pt_op_str(op, A(weights_format), ""), "XIO") == 0);
    CHECK_EQ_INT(pt_op_s64(op, A(groups), 0), 1);
    pt_op_free(op);

    /* 3-D: NCX [1,2,5,6,7], OIX [4,2,3,3,3], strides (1,2,3):
     * D 5-3+1 = 3, H (6-3)/2+1 = 2, W (7-3)/3+1 = 2 */
    op = mk_op(dnnl_graph_op_convolution, 2, 1, T(F32, 1, 2, 5, 6, 7), T(F32, 4, 2, 3, 3, 3),
               T0(F32));
    LIST(op, strides, 1, 2, 3);
    LIST(op, pads_begin, 0, 0, 0);
    LIST(op, pads_end, 0, 0, 0);
    LIST(op, dilations, 1, 1, 1);
    conv_layout(op, 0, "NCX", "OIX");
    RUNS_TO(op, 1, 4, 3, 2, 2);
    pt_op_free(op);

    /* 1-D NXC/XIO with asymmetric pads: (10 + 1 + 2 - 4)/2 + 1 = 5 */
    op = mk_op(dnnl_graph_op_convolution, 2, 1, T(F32, 3, 10, 2), T(F32, 4, 2, 6), T0(F32));
    LIST(op, strides, 2);
    LIST(op, pads_begin, 1);
    LIST(op, pads_end, 2);
    LIST(op, dilations, 1);
    RUNS_TO(op, 3, 5, 6);
    pt_op_free(op);

    /* unknown src H and weights W-kernel: those extents stay unknown */
    op = conv_op(dnnl_graph_op_convolution, T(F32, 2, 4, U, 9), T(F32, 8, 4, 3, 3), 2, 1, 1);
    conv_layout(op, 0, "NCX", "OIX");
    RUNS_TO(op, 2, 8, U, 5);
    pt_op_free(op);
    /* ... and a declared extent for the unknown one is kept */
    op = mk_op(dnnl_graph_op_convolution, 2, 1, T(F32, 2, 4, U, 9), T(F32, 8, 4, 3, 3),
               T(F32, 2, 8, 6, U));
    conv_attrs(op, 2, 1, 1);
    conv_layout(op, 0, "NCX", "OIX");
    RUNS_TO(op, 2, 8, 6, 5);
    pt_op_free(op);

    /* weights rank differs from src rank */
    op = conv_op(dnnl_graph_op_convolution, T(F32, 2, 4, 9, 9), T(F32, 8, 4, 3), 1, 0, 1);
    CHECK_EQ_INT(run(op), dnnl_invalid_shape);
    pt_op_free(op);
    /* strides of the wrong length */
    op = conv_op(dnnl_graph_op_convolution, T(F32, 2, 9, 9, 4), T(F32, 3, 3, 4, 8), 1, 0, 1);
    LIST(op, strides, 1, 1, 1);
    CHECK_EQ_INT(run(op), dnnl_invalid_shape);
    pt_op_free(op);
    /* add_op errors */
    op = conv_op(dnnl_graph_op_convolution, T(F32, 2, 9, 9, 4), T(F32, 3, 3, 4, 8), 1, 0, 1);
    pt_op_set_str(op, A(weights_format), "IOX");
    CHECK_EQ_INT(verify(op), dnnl_invalid_graph_op);
    pt_op_set_str(op, A(weights_format), "XIO");
    pt_op_set_s64(op, A(groups), (int64_t[]){0}, 1, false);
    CHECK_EQ_INT(verify(op), dnnl_invalid_graph_op);
    pt_op_set_s64(op, A(groups), (int64_t[]){1}, 1, false);
    LIST(op, dilations, 0, 1);
    CHECK_EQ_INT(verify(op), dnnl_invalid_graph_op);
    LIST(op, dilations, 1, 1);
    LIST(op, pads_begin, -1, 0);
    CHECK_EQ_INT(verify(op), dnnl_invalid_graph_op);
    LIST(op, pads_begin, 0, 0);
    pt_op_del_attr(op, A(dilations));
    CHECK_EQ_INT(verify(op), dnnl_invalid_graph_op);
    pt_op_free(op);
    /* mixed data types */
    op = mk_op(dnnl_graph_op_convolution, 2, 1, T(F32, 2, 9, 9, 4), T(dnnl_bf16, 3, 3, 4, 8),
               T0(F32));
    conv_attrs(op, 1, 0, 1);
    CHECK_EQ_INT(verify(op), dnnl_invalid_graph_op);
    pt_op_free(op);
}

static void test_conv_backward(void) {
    /* ConvolutionBackwardData, NCX/OIX, groups 2 (inverse of the first
     * Convolution case): diff_dst [2,8,5,5] -> diff_src dst_shape [2,4,9,9] */
    pt_op *op = conv_op(dnnl_graph_op_convolution_backward_data, T(F32, 2, 8, 5, 5), T(F32, 8, 2, 3, 3), 2, 1, 1);
    conv_layout(op, 2, "NCX", "OIX");
    LIST(op, dst_shape, 2, 4, 9, 9);
    RUNS_TO(op, 2, 4, 9, 9);
    /* 10 also maps onto 5: (10 + 2 - 3)/2 + 1 = 5 (output_padding ambiguity) */
    LIST(op, dst_shape, 2, 4, 10, 10);
    CHECK_EQ_INT(rerun_with(op, A(output_padding), 2, (int64_t[]){1, 1}), dnnl_success);
    CHECK(SHAPE_IS(&op->out[0], 2, 4, 10, 10));
    /* 12 does not: (12 + 2 - 3)/2 + 1 = 6 */
    CHECK_EQ_INT(rerun_with(op, A(dst_shape), 4, (int64_t[]){2, 4, 12, 12}), dnnl_invalid_shape);
    /* diff_dst channels must equal the weights O extent */
    LIST(op, dst_shape, 2, 4, 9, 9);
    op->out[0] = T0(F32);
    op->in[0].dims[1] = 6;
    CHECK_EQ_INT(run(op), dnnl_invalid_shape);
    pt_op_free(op);

    /* no dst_shape attribute: runtime input only -> unimplemented; declared
     * output -> success; nothing -> invalid_shape */
    op = mk_op(dnnl_graph_op_convolution_backward_data, 3, 1, T(F32, 1, 4, 4, 6),
               T(F32, 3, 3, 2, 6), T(dnnl_s32, 4), T0(F32));
    conv_attrs(op, 2, 0, 1);
    pt_op_set_str(op, A(auto_pad), "SAME_UPPER");
    CHECK_EQ_INT(run(op), dnnl_unimplemented);
    /* what is known was still written: N from diff_dst, IC = I·G */
    CHECK(SHAPE_IS(&op->out[0], 1, U, U, 2));
    op->out[0] = T(F32, 1, 8, 8, 2);
    CHECK_EQ_INT(run(op), dnnl_success);
    CHECK_EQ_INT(pt_schema_supported(op), 1);
    pt_op_free(op);
}

static void test_conv_transpose(void) {
    /* output_padding (1, 0): 6 x 5; groups 2 -> OC = 3·2 = 6 */
    pt_op *op = grouped_ncx(dnnl_graph_op_conv_transpose, T(F32, 1, 4, 3, 3), T(F32, 4, 3, 3, 3), 6, "IOX");
    LIST(op, output_padding, 1, 0);
    RUNS_TO(op, 1, 6, 6, 5);
    CHECK_EQ_INT(pt_schema_supported(op), 1);
    pt_op_free(op);
    /* NXC/XOI defaults: src [2,5,5,6], weights [2,2,O 4,I 6], dilation 2 -> E 3:
     * 1·4 + 3 = 7 */
    op = conv_op(dnnl_graph_op_conv_transpose, T(F32, 2, 5, 5, 6), T(F32, 2, 2, 4, 6), 1, 0, 2);
    RUNS_TO(op, 2, 7, 7, 4);
    CHECK(strcmp(pt_op_str(op, A(weights_format), ""), "XOI") == 0);
    pt_op_free(op);
    /* the Convolution spelling of weights_format is rejected; negative
     * output_padding too */
    op = conv_op(dnnl_graph_op_conv_transpose, T(F32, 1, 4, 3, 3), T(F32, 4, 3, 3, 3), 2, 1, 1);
    pt_op_set_str(op, A(weights_format), "OIX");
    CHECK_EQ_INT(verify(op), dnnl_invalid_graph_op);
    pt_op_set_str(op, A(weights_format), "IOX");
    LIST(op, output_padding, 0, -1);
    CHECK_EQ_INT(verify(op), dnnl_invalid_graph_op);
    pt_op_free(op);

    /* ConvTransposeBackwardData: the forward Convolution formula on diff_dst.
     * NCX/IOX, groups 2: diff_dst [1,6,5,5] -> (5 + 2 - 3)/2 + 1 = 3, IC 4 */
    op = conv_op(dnnl_graph_op_conv_transpose_backward_data, T(F32, 1, 6, 5, 5), T(F32, 4, 3, 3, 3), 2, 1, 1);
    conv_layout(op, 2, "NCX", "IOX");
    LIST(op, output_padding, 1, 1); /* accepted, ignored */
    RUNS_TO(op, 1, 4, 3, 3);
    /* diff_dst channels / G must equal the weights O extent */
    op->in[0].dims[1] = 5;
    op->out[0] = T0(F32);
    CHECK_EQ_INT(infer(op), dnnl_invalid_shape);
    pt_op_free(op);
    /* only two inputs */
    op = mk_op(dnnl_graph_op_conv_transpose_backward_data, 3, 1, T(F32, 1, 6, 6, 3),
               T(F32, 3, 3, 3, 4), T(dnnl_s32, 4), T0(F32));
    conv_attrs(op, 2, 0, 1);
    CHECK_EQ_INT(verify(op), dnnl_invalid_graph_op);
    pt_op_free(op);
}

/* BackwardWeights of Convolution and ConvTranspose, groups 2: a
 * weights_shape attribute is checked against src / diff_dst (`good` is
 * inferred as given, both `bad` are invalid shapes); with only the runtime
 * weights_shape input, inference is unimplemented but writes what it knows. */
static void test_backward_weights(void) {
    static const struct {
        dnnl_graph_op_kind_t kind;
        int64_t src[4], diff_dst[4];
        int64_t s, p, d;
        const char *format, *wformat; /* NULL: the defaults (NXC) */
        int64_t good[4], bad[2][4];
        int64_t rt_src[4], rt_diff_dst[4]; /* the runtime-shape form */
        int64_t rt_s, rt_p, rt_d;
        int64_t known[4];
    } cases[] = {
        /* NCX/OIX: a 5x5 kernel would give (9 + 2 - 5)/2 + 1 = 4 != 5; I extent
         * must be IC / G.  Runtime: O and I are filled, kernel unknown. */
        {dnnl_graph_op_convolution_backward_weights, {2, 4, 9, 9}, {2, 8, 5, 5}, 2, 1, 1, "NCX", "OIX",
         {8, 2, 3, 3}, {{8, 2, 5, 5}, {8, 4, 3, 3}}, {2, 4, 9, 9}, {2, 8, 5, 5}, 2, 1, 1, {8, 2, U, U}},
        /* NCX/IOX: O·G = 4 != 6; kernel 5: (5 + 2 - 5)/2 + 1 = 2 != 3.
         * Runtime, NXC/XOI: O = 4 / 1, I = 6. */
        {dnnl_graph_op_conv_transpose_backward_weights, {1, 4, 3, 3}, {1, 6, 5, 5}, 2, 1, 1, "NCX", "IOX",
         {4, 3, 3, 3}, {{4, 2, 3, 3}, {4, 3, 5, 5}}, {2, 5, 5, 6}, {2, 7, 7, 4}, 1, 0, 2, {U, U, 4, 6}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        pt_op *op = mk_op(cases[i].kind, 2, 1, mk_lt(F32, 4, cases[i].src), mk_lt(F32, 4, cases[i].diff_dst),
                          T0(F32));
        conv_attrs(op, cases[i].s, cases[i].p, cases[i].d);
        conv_layout(op, 2, cases[i].format, cases[i].wformat);
        pt_op_set_s64(op, A(weights_shape), cases[i].good, 4, true);
        CHECK_EQ_INT(run(op), dnnl_success);
        CHECK(shape_is(&op->out[0], 4, cases[i].good));
        for (int b = 0; b < 2; ++b)
            CHECK_EQ_INT(rerun_with(op, A(weights_shape), 4, cases[i].bad[b]), dnnl_invalid_shape);
        pt_op_free(op);

        op = mk_op(cases[i].kind, 3, 1, mk_lt(F32, 4, cases[i].rt_src), mk_lt(F32, 4, cases[i].rt_diff_dst),
                   T(dnnl_s32, 4), T0(F32));
        conv_attrs(op, cases[i].rt_s, cases[i].rt_p, cases[i].rt_d);
        if (cases[i].kind == dnnl_graph_op_convolution_backward_weights) conv_layout(op, 2, "NCX", "OIX");
        CHECK_EQ_INT(run(op), dnnl_unimplemented);
        CHECK(shape_is(&op->out[0], 4, cases[i].known));
        pt_op_free(op);
    }
}

/* ---- interpolate ------------------------------------------------------- */

static void test_interpolate(void) {
    /* NCX sizes */
    pt_op *op = mk_op(dnnl_graph_op_interpolate, 1, 1, T(F32, 1, 2, 5, 7), T0(F32));
    pt_op_set_str(op, A(mode), "nearest");
    pt_op_set_str(op, A(data_format), "NCX");
    LIST(op, sizes, 10, 3);
    RUNS_TO(op, 1, 2, 10, 3);
    CHECK(strcmp(pt_op_str(op, A(coordinate_transformation_mode), ""), "half_pixel") == 0);
    pt_op_free(op);
    /* NXC scales: trunc(5·1.5) = 7, trunc(7·0.5) = 3 */
    op = mk_op(dnnl_graph_op_interpolate, 1, 1, T(F32, 1, 5, 7, 2), T0(F32));
    pt_op_set_str(op, A(mode), "bilinear");
    pt_op_set_f32(op, A(scales), (float[]){1.5f, 0.5f}, 2, true);
    RUNS_TO(op, 1, 7, 3, 2);
    pt_op_free(op);
    /* rank 5, sizes input (s32 [3]) accepted alongside the attribute */
    op = mk_op(dnnl_graph_op_interpolate, 2, 1, T(F32, 1, 2, 3, 4, 5), T(dnnl_s32, 3), T0(F32));
    pt_op_set_str(op, A(mode), "trilinear");
    pt_op_set_str(op, A(data_format), "NCX");
    LIST(op, sizes, 6, 8, 10);
    RUNS_TO(op, 1, 2, 6, 8, 10);
    CHECK_EQ_INT(pt_schema_supported(op), 1);
    pt_op_free(op);
    /* sizes of the wrong length -> invalid_arguments at inference */
    op = mk_op(dnnl_graph_op_interpolate, 1, 1, T(F32, 1, 2, 5, 7), T0(F32));
    pt_op_set_str(op, A(mode), "linear");
    LIST(op, sizes, 10);
    CHECK_EQ_INT(run(op), dnnl_invalid_arguments);
    /* both sizes and scales, or neither: add_op error */
    LIST(op, sizes, 10, 3);
    pt_op_set_f32(op, A(scales), (float[]){2.f, 2.f}, 2, true);
    CHECK_EQ_INT(verify(op), dnnl_invalid_graph_op);
    pt_op_del_attr(op, A(sizes));
    pt_op_del_attr(op, A(scales));
    CHECK_EQ_INT(verify(op), dnnl_invalid_graph_op);
    /* non-positive scale, bad mode, missing mode */
    pt_op_set_f32(op, A(scales), (float[]){2.f, 0.f}, 2, true);
    CHECK_EQ_INT(verify(op), dnnl_invalid_graph_op);
    pt_op_set_f32(op, A(scales), (float[]){2.f, 2.f}, 2, true);
    CHECK_EQ_INT(verify(op), dnnl_success);
    pt_op_set_str(op, A(mode), "cubic");
    CHECK_EQ_INT(verify(op), dnnl_invalid_graph_op);
    pt_op_del_attr(op, A(mode));
    CHECK_EQ_INT(verify(op), dnnl_invalid_graph_op);
    pt_op_free(op);

    /* InterpolateBackward: diff_src = src; diff_dst spatial extents are taken
     * as given (oneDNN does not compare them with sizes/scales) */
    op = mk_op(dnnl_graph_op_interpolate_backward, 2, 1, T(F32, 1, 2, 5, 7), T(F32, 1, 2, 10, 3),
               T0(F32));
    pt_op_set_str(op, A(mode), "nearest");
    pt_op_set_str(op, A(data_format), "NCX");
    LIST(op, sizes, 10, 3);
    RUNS_TO(op, 1, 2, 5, 7);
    op->in[1].dims[3] = 4;
    op->out[0] = T0(F32);
    RUNS_TO(op, 1, 2, 5, 7);
    op->in[1].dims[1] = 3; /* channels still must agree */
    op->out[0] = T0(F32);
    CHECK_EQ_INT(run(op), dnnl_invalid_shape);
    pt_op_free(op);
    /* NXC scales 2x: src [1,3,4,2] -> diff_dst [1,6,8,2]; src batch from diff_dst */
    op = mk_op(dnnl_graph_op_interpolate_backward, 2, 1, T(F32, U, 3, 4, 2), T(F32, 5, 6, 8, 2),
               T0(F32));
    pt_op_set_str(op, A(mode), "linear");
    pt_op_set_f32(op, A(scales), (float[]){2.f, 2.f}, 2, true);
    RUNS_TO(op, 5, 3, 4, 2);
    pt_op_free(op);
}

/* ---- batch norm -------------------------------------------------------- */

static void test_batch_norm(void) {
    /* Inference NXC: C = last dim */
    pt_op *op = mk_op(dnnl_graph_op_batch_norm_inference, 5, 1, T(F32, 2, 5, 5, 16), T(F32, 16),
                      T(F32, 16), T(F32, 16), T(F32, 16), T0(F32));
    pt_op_set_f32(op, A(epsilon), (float[]){1e-5f}, 1, false);
    RUNS_TO(op, 2, 5, 5, 16);
    CHECK_EQ_INT(pt_schema_supported(op), 1);
    /* NCX: C = dim 1 = 5, the aux [16] no longer fits */
    pt_op_set_str(op, A(data_format), "NCX");
    op->out[0] = T0(F32);
    CHECK_EQ_INT(run(op), dnnl_invalid_shape);
    pt_op_free(op);
    op =
        mk_op(dnnl_graph_op_batch_norm_inference, 5, 1, T(dnnl_bf16, 2, 16, 5, 5), T(dnnl_bf16, 16),
              T(dnnl_bf16, 16), T(dnnl_bf16, 16), T(dnnl_bf16, 16), T0(dnnl_bf16));
    pt_op_set_f32(op, A(epsilon), (float[]){1e-5f}, 1, false);
    pt_op_set_str(op, A(data_format), "NCX");
    RUNS_TO(op, 2, 16, 5, 5);
    CHECK_EQ_INT(pt_schema_supported(op), 1);
    pt_op_free(op);
    /* bf16 statistics with f32 src; missing epsilon; rank 1 src */
    op = mk_op(dnnl_graph_op_batch_norm_inference, 5, 1, T(F32, 2, 16), T(dnnl_bf16, 16),
               T(dnnl_bf16, 16), T(dnnl_bf16, 16), T(dnnl_bf16, 16), T0(F32));
    pt_op_set_f32(op, A(epsilon), (float[]){1e-5f}, 1, false);
    CHECK_EQ_INT(verify(op), dnnl_invalid_graph_op);
    pt_op_free(op);
    op = mk_op(dnnl_graph_op_batch_norm_inference, 5, 1, T(F32, 16), T(F32, 16), T(F32, 16),
               T(F32, 16), T(F32, 16), T0(F32));
    CHECK_EQ_INT(verify(op), dnnl_invalid_graph_op);
    pt_op_set_f32(op, A(epsilon), (float[]){1e-5f}, 1, false);
    CHECK_EQ_INT(run(op), dnnl_invalid_shape);
    pt_op_free(op);

    /* ForwardTraining NCX rank 3; channels unknown in src come from mean */
    op = mk_op(dnnl_graph_op_batch_norm_forward_training, 3, 5, T(F32, 4, U, 2), T(F32, 3),
               T(F32, 3), T0(F32), T0(F32), T0(F32), T0(F32), T0(F32));
    pt_op_set_f32(op, A(epsilon), (float[]){1e-5f}, 1, false);
    pt_op_set_str(op, A(data_format), "NCX");
    RUNS_TO(op, 4, 3, 2);
    for (int o = 1; o < 5; ++o) CHECK(SHAPE_IS(&op->out[o], 3));
    CHECK(!pt_op_has(op, A(momentum))); /* 0.5 is applied by the kernel */
    CHECK_EQ_INT(pt_schema_supported(op), 1);
    pt_op_free(op);
    /* 4 inputs rejected; stats of the wrong length rejected */
    op = mk_op(dnnl_graph_op_batch_norm_forward_training, 4, 5, T(F32, 4, 2, 3), T(F32, 3),
               T(F32, 3), T(F32, 3), T0(F32), T0(F32), T0(F32), T0(F32), T0(F32));
    pt_op_set_f32(op, A(epsilon), (float[]){1e-5f}, 1, false);
    CHECK_EQ_INT(verify(op), dnnl_invalid_graph_op);
    pt_op_free(op);
    op = mk_op(dnnl_graph_op_batch_norm_forward_training, 5, 5, T(F32, 4, 2, 3), T(F32, 3),
               T(F32, 3), T(F32, 3), T(F32, 4), T0(F32), T0(F32), T0(F32), T0(F32), T0(F32));
    pt_op_set_f32(op, A(epsilon), (float[]){1e-5f}, 1, false);
    pt_op_set_f32(op, A(momentum), (float[]){0.1f}, 1, false);
    CHECK_EQ_INT(run(op), dnnl_invalid_shape);
    pt_op_free(op);

    /* TrainingBackward NCX with diff_gamma / diff_beta */
    op = mk_op(dnnl_graph_op_batch_norm_backward, 5, 3, T(dnnl_bf16, 2, 3, 4, 4),
               T(dnnl_bf16, 2, 3, 4, 4), T(F32, 3), T(F32, 3), T(F32, 3), T0(dnnl_bf16), T0(F32),
               T0(F32));
    pt_op_set_f32(op, A(epsilon), (float[]){1e-5f}, 1, false);
    pt_op_set_str(op, A(data_format), "NCX");
    RUNS_TO(op, 2, 3, 4, 4);
    CHECK(SHAPE_IS(&op->out[1], 3));
    CHECK(SHAPE_IS(&op->out[2], 3));
    CHECK_EQ_INT(pt_schema_supported(op), 1);
    /* diff_dst must match src */
    op->in[1].dims[3] = 5;
    op->out[0] = T0(dnnl_bf16);
    CHECK_EQ_INT(infer(op), dnnl_invalid_shape);
    pt_op_free(op);
    /* rank < 4 is rejected (oneDNN rule) */
    op = mk_op(dnnl_graph_op_batch_norm_backward, 4, 1, T(F32, 2, 3, 4), T(F32, 2, 3, 4), T(F32, 4),
               T(F32, 4), T0(F32));
    pt_op_set_f32(op, A(epsilon), (float[]){1e-5f}, 1, false);
    CHECK_EQ_INT(run(op), dnnl_invalid_shape);
    pt_op_free(op);
    /* 2 outputs rejected */
    op = mk_op(dnnl_graph_op_batch_norm_backward, 4, 2, T(F32, 2, 3, 4, 4), T(F32, 2, 3, 4, 4),
               T(F32, 4), T(F32, 4), T0(F32), T0(F32));
    pt_op_set_f32(op, A(epsilon), (float[]){1e-5f}, 1, false);
    CHECK_EQ_INT(verify(op), dnnl_invalid_graph_op);
    pt_op_free(op);
}

/* The table rows themselves: 15 rows with check/infer/supported set. */
static void test_rows(void) {
    static const int kinds[] = {
        dnnl_graph_op_avg_pool, dnnl_graph_op_avg_pool_backward, dnnl_graph_op_max_pool,
        dnnl_graph_op_max_pool_backward, dnnl_graph_op_convolution, dnnl_graph_op_convolution_backward_data,
        dnnl_graph_op_convolution_backward_weights, dnnl_graph_op_conv_transpose,
        dnnl_graph_op_conv_transpose_backward_data, dnnl_graph_op_conv_transpose_backward_weights,
        dnnl_graph_op_interpolate, dnnl_graph_op_interpolate_backward, dnnl_graph_op_batch_norm_forward_training,
        dnnl_graph_op_batch_norm_inference, dnnl_graph_op_batch_norm_backward};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; ++i) {
        const pt_op_schema *s = pt_schema_of(kinds[i]);
        CHECK(s != NULL);
        if (!s) continue;
        CHECK(s->check && s->infer && s->supported);
    }
}

int main(void) {
    test_geometry();
    test_pool_cases();
    test_avg_pool();
    test_max_pool();
    test_pool_backward();
    test_conv_cases();
    test_convolution();
    test_conv_backward();
    test_conv_transpose();
    test_backward_weights();
    test_interpolate();
    test_batch_norm();
    test_rows();
    return pt_test_summary("test_int_spatial_schema");
}
