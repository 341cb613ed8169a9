/* The bad-input table (docs/reliability.md, "Bad inputs"): one row per
 * hostile input class (overflowing dims, bad strides, huge attribute lists,
 * deep and cyclic graphs, malformed JSON cases, NaN/Inf quantization
 * scales), each a call with the status it must return and, with
 * ONEDNN_VERBOSE=1, the one error line it must print on stderr (a row that
 * is accepted prints none).  JSON rows go through the CLI's loader
 * (tools/case_json.c, as the fuzz target does) and expect its one error line
 * naming the field; the cyclic JSON case is also run by the CLI's runner.
 * docs/reliability.md reproduces the table; keep both in step. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "case_json.h"
#include "ir/status.h"
#include "oneapi/dnnl/dnnl_graph.h"
#include "rewrite.h"
#include "runner.h"
#include "test_util.h"

static dnnl_engine_t g_eng;
static dnnl_stream_t g_strm;

/* ---- helpers ------------------------------------------------------------- */

static dnnl_graph_logical_tensor_t lt_dims(size_t id, dnnl_data_type_t dt, int nd, const int64_t *dims) {
    dnnl_graph_logical_tensor_t lt;
    dnnl_dims_t d = {0};
    for (int i = 0; i < nd && i < DNNL_MAX_NDIMS; ++i) d[i] = dims[i];
    dnnl_graph_logical_tensor_init_with_dims(&lt, id, dt, nd, d, dnnl_graph_layout_type_strided,
                                             dnnl_graph_tensor_property_variable);
    return lt;
}

static dnnl_graph_logical_tensor_t lt_strides(size_t id, int nd, const int64_t *dims, const int64_t *strides) {
    dnnl_graph_logical_tensor_t lt;
    dnnl_dims_t d = {0}, s = {0};
    for (int i = 0; i < nd; ++i) d[i] = dims[i], s[i] = strides[i];
    dnnl_graph_logical_tensor_init_with_strides(&lt, id, dnnl_f32, nd, d, s, dnnl_graph_tensor_property_variable);
    return lt;
}

static dnnl_graph_op_t new_op(size_t id, dnnl_graph_op_kind_t kind, const dnnl_graph_logical_tensor_t *in, int nin,
                              const dnnl_graph_logical_tensor_t *out, int nout) {
    dnnl_graph_op_t op = NULL;
    CHECK_EQ_INT(dnnl_graph_op_create(&op, id, kind, "bad_input_op"), dnnl_success);
    for (int k = 0; k < nin; ++k) CHECK_EQ_INT(dnnl_graph_op_add_input(op, &in[k]), dnnl_success);
    for (int k = 0; k < nout; ++k) CHECK_EQ_INT(dnnl_graph_op_add_output(op, &out[k]), dnnl_success);
    return op;
}

/* Adds op to a new graph (the op is destroyed); *st gets add_op's status. */
static dnnl_graph_graph_t graph_with(dnnl_graph_op_t op, dnnl_status_t *st) {
    dnnl_graph_graph_t g = NULL;
    CHECK_EQ_INT(dnnl_graph_graph_create(&g, dnnl_cpu), dnnl_success);
    *st = dnnl_graph_add_op(g, op);
    dnnl_graph_op_destroy(op);
    return g;
}

/* Compiles the single partition of the one-op graph of `op` (destroyed)
 * with the op's own ports. */
static dnnl_status_t compile_op(dnnl_graph_op_t op, const dnnl_graph_logical_tensor_t *in, int nin,
                                const dnnl_graph_logical_tensor_t *out, int nout) {
    dnnl_status_t st;
    dnnl_graph_graph_t g = graph_with(op, &st);
    if (st == dnnl_success) st = dnnl_graph_graph_finalize(g);
    if (st == dnnl_success) st = dnnl_graph_graph_filter(g, dnnl_graph_partition_policy_fusion);
    dnnl_graph_partition_t part = NULL;
    if (st == dnnl_success) st = dnnl_graph_graph_get_partitions(g, 1, &part);
    dnnl_graph_compiled_partition_t cp = NULL;
    if (st == dnnl_success) st = dnnl_graph_compiled_partition_create(&cp, part);
    if (st == dnnl_success) {
        const dnnl_graph_logical_tensor_t *ins[4], *outs[2];
        for (int k = 0; k < nin; ++k) ins[k] = &in[k];
        for (int k = 0; k < nout; ++k) outs[k] = &out[k];
        st = dnnl_graph_partition_compile(part, cp, (size_t)nin, ins, (size_t)nout, outs, g_eng);
    }
    if (cp) dnnl_graph_compiled_partition_destroy(cp);
    if (part) dnnl_graph_partition_destroy(part);
    dnnl_graph_graph_destroy(g);
    return st;
}

static dnnl_status_t compile_one_op(dnnl_graph_op_kind_t kind, const dnnl_graph_logical_tensor_t *in, int nin,
                                    const dnnl_graph_logical_tensor_t *out, int nout) {
    return compile_op(new_op(1, kind, in, nin, out, nout), in, nin, out, nout);
}

/* ---- rows: overflowing dims ---------------------------------------------- */

static dnnl_status_t dims_product_overflow_mem_size(void) {
    dnnl_graph_logical_tensor_t lt = lt_dims(1, dnnl_f32, 3, (int64_t[]){1 << 30, 1 << 30, 1 << 30});
    size_t bytes = 0;
    return dnnl_graph_logical_tensor_get_mem_size(&lt, &bytes);
}

static dnnl_status_t dims_product_overflow_tensor_create(void) {
    dnnl_graph_logical_tensor_t lt = lt_dims(1, dnnl_f32, 2, (int64_t[]){INT64_MAX / 2, 4});
    dnnl_graph_tensor_t t = NULL;
    dnnl_status_t st = dnnl_graph_tensor_create(&t, &lt, g_eng, DNNL_MEMORY_ALLOCATE);
    if (t) dnnl_graph_tensor_destroy(t);
    return st;
}

static dnnl_status_t dims_overflow_compile_matmul(void) {
    const int64_t big = (int64_t)1 << 40;
    dnnl_graph_logical_tensor_t in[2] = {lt_dims(1, dnnl_f32, 2, (int64_t[]){big, big}),
                                         lt_dims(2, dnnl_f32, 2, (int64_t[]){big, 8})};
    dnnl_graph_logical_tensor_t out = lt_dims(3, dnnl_f32, 2, (int64_t[]){big, 8});
    return compile_one_op(dnnl_graph_op_matmul, in, 2, &out, 1);
}

static dnnl_status_t span_beyond_2_48_compile(void) {
    /* 2^47 f32 elements: within int64, beyond what x86-64 can map. */
    dnnl_graph_logical_tensor_t in = lt_dims(1, dnnl_f32, 2, (int64_t[]){(int64_t)1 << 24, (int64_t)1 << 23});
    dnnl_graph_logical_tensor_t out = lt_dims(2, dnnl_f32, 2, (int64_t[]){(int64_t)1 << 24, (int64_t)1 << 23});
    return compile_one_op(dnnl_graph_op_relu, &in, 1, &out, 1);
}

static dnnl_status_t ndims_13_add_input(void) {
    dnnl_graph_logical_tensor_t lt;
    memset(&lt, 0, sizeof lt);
    lt.id = 1;
    lt.ndims = 13;
    lt.data_type = dnnl_f32;
    lt.layout_type = dnnl_graph_layout_type_strided;
    dnnl_graph_op_t op = NULL;
    CHECK_EQ_INT(dnnl_graph_op_create(&op, 1, dnnl_graph_op_relu, "relu"), dnnl_success);
    dnnl_status_t st = dnnl_graph_op_add_input(op, &lt);
    dnnl_graph_op_destroy(op);
    return st;
}

/* A negative dim other than DNNL_GRAPH_UNKNOWN_DIM is an unknown one: compile needs it known. */
static dnnl_status_t negative_dim_compile(void) {
    dnnl_graph_logical_tensor_t in = lt_dims(1, dnnl_f32, 2, (int64_t[]){4, -7});
    dnnl_graph_logical_tensor_t out = lt_dims(2, dnnl_f32, 2, (int64_t[]){4, -7});
    return compile_one_op(dnnl_graph_op_relu, &in, 1, &out, 1);
}

/* ---- rows: strides --------------------------------------------------------- */

static dnnl_status_t negative_stride_mem_size(void) {
    dnnl_graph_logical_tensor_t lt = lt_strides(1, 2, (int64_t[]){3, 3}, (int64_t[]){-3, 1});
    size_t bytes = 0;
    return dnnl_graph_logical_tensor_get_mem_size(&lt, &bytes);
}

static dnnl_status_t negative_stride_compile(void) {
    dnnl_graph_logical_tensor_t in = lt_strides(1, 2, (int64_t[]){3, 3}, (int64_t[]){-3, 1});
    dnnl_graph_logical_tensor_t out = lt_dims(2, dnnl_f32, 2, (int64_t[]){3, 3});
    return compile_one_op(dnnl_graph_op_relu, &in, 1, &out, 1);
}

static dnnl_status_t overlapping_output_strides_compile(void) {
    dnnl_graph_logical_tensor_t in = lt_dims(1, dnnl_f32, 2, (int64_t[]){4, 4});
    dnnl_graph_logical_tensor_t out = lt_strides(2, 2, (int64_t[]){4, 4}, (int64_t[]){1, 1});
    return compile_one_op(dnnl_graph_op_relu, &in, 1, &out, 1);
}

static dnnl_status_t zero_stride_output_compile(void) {
    dnnl_graph_logical_tensor_t in = lt_dims(1, dnnl_f32, 2, (int64_t[]){4, 4});
    dnnl_graph_logical_tensor_t out = lt_strides(2, 2, (int64_t[]){4, 4}, (int64_t[]){4, 0});
    return compile_one_op(dnnl_graph_op_relu, &in, 1, &out, 1);
}

/* A zero-stride (broadcast) input is a valid view: compiled and run. */
static dnnl_status_t zero_stride_input_runs(void) {
    dnnl_graph_logical_tensor_t in = lt_strides(1, 2, (int64_t[]){4, 4}, (int64_t[]){0, 1});
    dnnl_graph_logical_tensor_t out = lt_dims(2, dnnl_f32, 2, (int64_t[]){4, 4});
    dnnl_status_t st;
    dnnl_graph_graph_t g = graph_with(new_op(1, dnnl_graph_op_relu, &in, 1, &out, 1), &st);
    if (st == dnnl_success) st = dnnl_graph_graph_finalize(g);
    if (st == dnnl_success) st = dnnl_graph_graph_filter(g, dnnl_graph_partition_policy_fusion);
    dnnl_graph_partition_t part = NULL;
    dnnl_graph_compiled_partition_t cp = NULL;
    if (st == dnnl_success) st = dnnl_graph_graph_get_partitions(g, 1, &part);
    if (st == dnnl_success) st = dnnl_graph_compiled_partition_create(&cp, part);
    const dnnl_graph_logical_tensor_t *ins[1] = {&in}, *outs[1] = {&out};
    if (st == dnnl_success) st = dnnl_graph_partition_compile(part, cp, 1, ins, 1, outs, g_eng);
    float src[4] = {-1, 2, -3, 4}, dst[16];
    dnnl_graph_tensor_t ts = NULL, td = NULL;
    if (st == dnnl_success) st = dnnl_graph_tensor_create(&ts, &in, g_eng, src);
    if (st == dnnl_success) st = dnnl_graph_tensor_create(&td, &out, g_eng, dst);
    if (st == dnnl_success)
        st = dnnl_graph_compiled_partition_execute(cp, g_strm, 1, (const_dnnl_graph_tensor_t[]){ts}, 1,
                                                   (const_dnnl_graph_tensor_t[]){td});
    if (st == dnnl_success) st = dnnl_stream_wait(g_strm);
    for (int i = 0; st == dnnl_success && i < 16; ++i) CHECK(dst[i] == (src[i % 4] > 0 ? src[i % 4] : 0));
    if (ts) dnnl_graph_tensor_destroy(ts);
    if (td) dnnl_graph_tensor_destroy(td);
    if (cp) dnnl_graph_compiled_partition_destroy(cp);
    if (part) dnnl_graph_partition_destroy(part);
    dnnl_graph_graph_destroy(g);
    return st;
}

/* An execute-time tensor whose strides differ from the compiled ones. */
static dnnl_status_t execute_with_other_strides(void) {
    dnnl_graph_logical_tensor_t in = lt_dims(1, dnnl_f32, 2, (int64_t[]){4, 4});
    dnnl_graph_logical_tensor_t out = lt_dims(2, dnnl_f32, 2, (int64_t[]){4, 4});
    dnnl_status_t st;
    dnnl_graph_graph_t g = graph_with(new_op(1, dnnl_graph_op_relu, &in, 1, &out, 1), &st);
    CHECK_EQ_INT(dnnl_graph_graph_finalize(g), dnnl_success);
    CHECK_EQ_INT(dnnl_graph_graph_filter(g, dnnl_graph_partition_policy_fusion), dnnl_success);
    dnnl_graph_partition_t part = NULL;
    dnnl_graph_compiled_partition_t cp = NULL;
    CHECK_EQ_INT(dnnl_graph_graph_get_partitions(g, 1, &part), dnnl_success);
    CHECK_EQ_INT(dnnl_graph_compiled_partition_create(&cp, part), dnnl_success);
    const dnnl_graph_logical_tensor_t *ins[1] = {&in}, *outs[1] = {&out};
    CHECK_EQ_INT(dnnl_graph_partition_compile(part, cp, 1, ins, 1, outs, g_eng), dnnl_success);
    dnnl_graph_logical_tensor_t other = lt_strides(1, 2, (int64_t[]){4, 4}, (int64_t[]){1, 4});
    float src[16] = {0}, dst[16];
    dnnl_graph_tensor_t ts = NULL, td = NULL;
    CHECK_EQ_INT(dnnl_graph_tensor_create(&ts, &other, g_eng, src), dnnl_success);
    CHECK_EQ_INT(dnnl_graph_tensor_create(&td, &out, g_eng, dst), dnnl_success);
    st = dnnl_graph_compiled_partition_execute(cp, g_strm, 1, (const_dnnl_graph_tensor_t[]){ts}, 1,
                                               (const_dnnl_graph_tensor_t[]){td});
    dnnl_graph_tensor_destroy(ts);
    dnnl_graph_tensor_destroy(td);
    dnnl_graph_compiled_partition_destroy(cp);
    dnnl_graph_partition_destroy(part);
    dnnl_graph_graph_destroy(g);
    return st;
}

/* ---- rows: attribute lists --------------------------------------------------- */

static dnnl_status_t attr_list_length_beyond_memory(void) {
    dnnl_graph_op_t op = NULL;
    CHECK_EQ_INT(dnnl_graph_op_create(&op, 1, dnnl_graph_op_quantize, "q"), dnnl_success);
    float one = 1.f;
    /* A length no buffer has (the pointer holds one value): refused before reading. */
    dnnl_status_t st = dnnl_graph_op_set_attr_f32(op, dnnl_graph_op_attr_scales, &one, SIZE_MAX / 2);
    dnnl_graph_op_destroy(op);
    return st;
}

static dnnl_status_t attr_list_over_limit(void) {
    dnnl_graph_op_t op = NULL;
    CHECK_EQ_INT(dnnl_graph_op_create(&op, 1, dnnl_graph_op_reduce_sum, "r"), dnnl_success);
    int64_t v = 0;
    dnnl_status_t st = dnnl_graph_op_set_attr_s64(op, dnnl_graph_op_attr_axes, &v, ((size_t)1 << 40));
    dnnl_graph_op_destroy(op);
    return st;
}

/* A million axes (repeating 0, 1) for a rank-2 ReduceSum: stored, then
 * refused when compile infers the output shape. */
static dnnl_status_t attr_list_million_axes_compile(void) {
    dnnl_graph_logical_tensor_t in = lt_dims(1, dnnl_f32, 2, (int64_t[]){4, 4});
    dnnl_graph_logical_tensor_t out = lt_dims(2, dnnl_f32, 2, (int64_t[]){1, 1});
    dnnl_graph_op_t op = new_op(1, dnnl_graph_op_reduce_sum, &in, 1, &out, 1);
    size_t n = (size_t)1 << 20;
    int64_t *axes = calloc(n, sizeof *axes);
    for (size_t i = 0; axes && i < n; ++i) axes[i] = (int64_t)(i % 2);
    CHECK_EQ_INT(dnnl_graph_op_set_attr_s64(op, dnnl_graph_op_attr_axes, axes, n), dnnl_success);
    uint8_t keep = 1;
    CHECK_EQ_INT(dnnl_graph_op_set_attr_bool(op, dnnl_graph_op_attr_keep_dims, &keep, 1), dnnl_success);
    free(axes);
    return compile_op(op, &in, 1, &out, 1);
}

static dnnl_status_t attr_huge_string(void) {
    dnnl_graph_op_t op = NULL;
    CHECK_EQ_INT(dnnl_graph_op_create(&op, 1, dnnl_graph_op_softmax, "sm"), dnnl_success);
    size_t n = (size_t)1 << 20;
    char *s = malloc(n + 1);
    memset(s, 'x', n);
    s[n] = 0;
    dnnl_status_t st = dnnl_graph_op_set_attr_str(op, dnnl_graph_op_attr_mode, s, n + 1);
    free(s);
    dnnl_graph_op_destroy(op);
    return st;
}

/* ---- rows: deep and cyclic graphs ------------------------------------------------ */

static dnnl_status_t cyclic_graph_finalize(void) {
    dnnl_graph_logical_tensor_t a = lt_dims(1, dnnl_f32, 1, (int64_t[]){8});
    dnnl_graph_logical_tensor_t b = lt_dims(2, dnnl_f32, 1, (int64_t[]){8});
    dnnl_graph_graph_t g = NULL;
    CHECK_EQ_INT(dnnl_graph_graph_create(&g, dnnl_cpu), dnnl_success);
    dnnl_graph_op_t o1 = new_op(1, dnnl_graph_op_relu, &a, 1, &b, 1), o2 = new_op(2, dnnl_graph_op_abs, &b, 1, &a, 1);
    CHECK_EQ_INT(dnnl_graph_add_op(g, o1), dnnl_success);
    CHECK_EQ_INT(dnnl_graph_add_op(g, o2), dnnl_success);
    dnnl_graph_op_destroy(o1);
    dnnl_graph_op_destroy(o2);
    dnnl_status_t st = dnnl_graph_graph_finalize(g);
    dnnl_graph_graph_destroy(g);
    return st;
}

static dnnl_status_t self_loop_finalize(void) {
    dnnl_graph_logical_tensor_t a = lt_dims(1, dnnl_f32, 1, (int64_t[]){8});
    dnnl_status_t st;
    dnnl_graph_graph_t g = graph_with(new_op(1, dnnl_graph_op_relu, &a, 1, &a, 1), &st);
    if (st == dnnl_success) st = dnnl_graph_graph_finalize(g);
    dnnl_graph_graph_destroy(g);
    return st;
}

static dnnl_status_t two_producers_finalize(void) {
    dnnl_graph_logical_tensor_t a = lt_dims(1, dnnl_f32, 1, (int64_t[]){8}), b = lt_dims(2, dnnl_f32, 1, (int64_t[]){8});
    dnnl_graph_logical_tensor_t c = lt_dims(3, dnnl_f32, 1, (int64_t[]){8});
    dnnl_graph_graph_t g = NULL;
    CHECK_EQ_INT(dnnl_graph_graph_create(&g, dnnl_cpu), dnnl_success);
    dnnl_graph_op_t o1 = new_op(1, dnnl_graph_op_relu, &a, 1, &c, 1), o2 = new_op(2, dnnl_graph_op_abs, &b, 1, &c, 1);
    dnnl_status_t st = dnnl_graph_add_op(g, o1);
    if (st == dnnl_success) st = dnnl_graph_add_op(g, o2);
    if (st == dnnl_success) st = dnnl_graph_graph_finalize(g);
    dnnl_graph_op_destroy(o1);
    dnnl_graph_op_destroy(o2);
    dnnl_graph_graph_destroy(g);
    return st;
}

static dnnl_status_t duplicate_op_id(void) {
    dnnl_graph_logical_tensor_t a = lt_dims(1, dnnl_f32, 1, (int64_t[]){8}), b = lt_dims(2, dnnl_f32, 1, (int64_t[]){8});
    dnnl_graph_logical_tensor_t c = lt_dims(3, dnnl_f32, 1, (int64_t[]){8});
    dnnl_graph_graph_t g = NULL;
    CHECK_EQ_INT(dnnl_graph_graph_create(&g, dnnl_cpu), dnnl_success);
    dnnl_graph_op_t o1 = new_op(7, dnnl_graph_op_relu, &a, 1, &b, 1), o2 = new_op(7, dnnl_graph_op_abs, &b, 1, &c, 1);
    CHECK_EQ_INT(dnnl_graph_add_op(g, o1), dnnl_success);
    dnnl_status_t st = dnnl_graph_add_op(g, o2);
    dnnl_graph_op_destroy(o1);
    dnnl_graph_op_destroy(o2);
    dnnl_graph_graph_destroy(g);
    return st;
}

/* A chain of DEEP_OPS element-wise ops: finalized, partitioned and every
 * partition compiled (no recursion as deep as the graph). */
#define DEEP_OPS 3000
static dnnl_status_t deep_chain_partition_compile(void) {
    pt_set_verbose_level(0); /* 3000 compile lines on stdout otherwise; the row expects no error line anyway */
    dnnl_graph_graph_t g = NULL;
    CHECK_EQ_INT(dnnl_graph_graph_create(&g, dnnl_cpu), dnnl_success);
    dnnl_status_t st = dnnl_success;
    static const dnnl_graph_op_kind_t kinds[3] = {dnnl_graph_op_relu, dnnl_graph_op_abs, dnnl_graph_op_tanh};
    for (size_t i = 0; i < DEEP_OPS && st == dnnl_success; ++i) {
        dnnl_graph_logical_tensor_t a = lt_dims(i + 1, dnnl_f32, 2, (int64_t[]){2, 8});
        dnnl_graph_logical_tensor_t b = lt_dims(i + 2, dnnl_f32, 2, (int64_t[]){2, 8});
        dnnl_graph_op_t op = new_op(i, kinds[i % 3], &a, 1, &b, 1);
        st = dnnl_graph_add_op(g, op);
        dnnl_graph_op_destroy(op);
    }
    if (st == dnnl_success) st = dnnl_graph_graph_finalize(g);
    if (st == dnnl_success) st = dnnl_graph_graph_filter(g, dnnl_graph_partition_policy_fusion);
    size_t n = 0;
    if (st == dnnl_success) st = dnnl_graph_graph_get_partition_num(g, &n);
    dnnl_graph_partition_t *parts = calloc(n ? n : 1, sizeof *parts);
    if (st == dnnl_success) st = dnnl_graph_graph_get_partitions(g, n, parts);
    for (size_t p = 0; p < n && st == dnnl_success; ++p) {
        size_t nin = 0, nout = 0;
        dnnl_graph_logical_tensor_t ip[8], op[8];
        st = dnnl_graph_partition_get_input_ports_num(parts[p], &nin);
        if (st == dnnl_success) st = dnnl_graph_partition_get_output_ports_num(parts[p], &nout);
        if (st == dnnl_success && (nin > 8 || nout > 8)) st = dnnl_invalid_arguments;
        if (st == dnnl_success) st = dnnl_graph_partition_get_input_ports(parts[p], nin, ip);
        if (st == dnnl_success) st = dnnl_graph_partition_get_output_ports(parts[p], nout, op);
        const dnnl_graph_logical_tensor_t *ins[8], *outs[8];
        for (size_t k = 0; k < nin && k < 8; ++k) ins[k] = &ip[k];
        for (size_t k = 0; k < nout && k < 8; ++k) outs[k] = &op[k];
        dnnl_graph_compiled_partition_t cp = NULL;
        if (st == dnnl_success) st = dnnl_graph_compiled_partition_create(&cp, parts[p]);
        if (st == dnnl_success) st = dnnl_graph_partition_compile(parts[p], cp, nin, ins, nout, outs, g_eng);
        if (cp) dnnl_graph_compiled_partition_destroy(cp);
    }
    for (size_t p = 0; p < n; ++p)
        if (parts[p]) dnnl_graph_partition_destroy(parts[p]);
    free(parts);
    dnnl_graph_graph_destroy(g);
    pt_set_verbose_level(1);
    return st;
}

/* ---- rows: quantization scales ---------------------------------------------------- */

static dnnl_status_t quantize_scale(dnnl_graph_op_kind_t kind, float scale) {
    dnnl_data_type_t fdt = dnnl_f32, qdt = dnnl_s8;
    dnnl_graph_logical_tensor_t in = lt_dims(1, kind == dnnl_graph_op_quantize ? fdt : qdt, 2, (int64_t[]){4, 4});
    dnnl_graph_logical_tensor_t out = lt_dims(2, kind == dnnl_graph_op_quantize ? qdt : fdt, 2, (int64_t[]){4, 4});
    dnnl_graph_op_t op = new_op(1, kind, &in, 1, &out, 1);
    CHECK_EQ_INT(dnnl_graph_op_set_attr_f32(op, dnnl_graph_op_attr_scales, &scale, 1), dnnl_success);
    int64_t zp = 0;
    CHECK_EQ_INT(dnnl_graph_op_set_attr_s64(op, dnnl_graph_op_attr_zps, &zp, 1), dnnl_success);
    dnnl_status_t st;
    dnnl_graph_graph_t g = graph_with(op, &st);
    dnnl_graph_graph_destroy(g);
    return st;
}

static dnnl_status_t quantize_nan_scale(void) { return quantize_scale(dnnl_graph_op_quantize, NAN); }
static dnnl_status_t quantize_inf_scale(void) { return quantize_scale(dnnl_graph_op_quantize, INFINITY); }
static dnnl_status_t dequantize_nan_scale(void) { return quantize_scale(dnnl_graph_op_dequantize, NAN); }
static dnnl_status_t dequantize_neg_inf_scale(void) { return quantize_scale(dnnl_graph_op_dequantize, -INFINITY); }

static dnnl_status_t quantize_zero_scale(void) {
    dnnl_graph_logical_tensor_t in = lt_dims(1, dnnl_f32, 2, (int64_t[]){4, 4});
    dnnl_graph_logical_tensor_t out = lt_dims(2, dnnl_u8, 2, (int64_t[]){4, 4});
    dnnl_graph_op_t op = new_op(1, dnnl_graph_op_quantize, &in, 1, &out, 1);
    float zero = 0.f;
    CHECK_EQ_INT(dnnl_graph_op_set_attr_f32(op, dnnl_graph_op_attr_scales, &zero, 1), dnnl_success);
    dnnl_status_t st;
    dnnl_graph_graph_t g = graph_with(op, &st);
    dnnl_graph_graph_destroy(g);
    return st;
}

/* ---- rows: JSON cases through the CLI's loader ---------------------------------- */

static const char *g_json;          /* the case text of the running JSON row */
static char g_json_err[1024];

static dnnl_status_t json_load(void) {
    pc_case c;
    g_json_err[0] = 0;
    int rc = pc_case_parse(g_json, "bad.json", &c, g_json_err, sizeof g_json_err);
    if (rc == 0) pc_case_free(&c);
    if (rc != 0) fprintf(stderr, "loader: %s\n", g_json_err);
    return rc == 0 ? dnnl_success : dnnl_invalid_arguments;
}

/* Loads, rewrites and runs the case as `partita --case=` does; the library's
 * status comes back through its error line. */
static dnnl_status_t json_run(void) {
    pc_case c;
    g_json_err[0] = 0;
    if (pc_case_parse(g_json, "bad.json", &c, g_json_err, sizeof g_json_err) != 0) return dnnl_runtime_error;
    pc_knobs k = {.in_shapes = "", .op_attrs = "", .op_kind = "", .tensor_property = "", .dt = "", .dt_map = "",
                  .fpmath = "", .mb = 0, .expected_n = 0};
    dnnl_status_t st = dnnl_success;
    if (pc_rewrite(&c, &k, g_json_err, sizeof g_json_err) != 0) {
        fprintf(stderr, "rewrite: %s\n", g_json_err);
        st = dnnl_invalid_arguments;
    } else {
        pc_run_opts o = {.mode = 'C', .perf_runs = 1};
        pc_case_result r;
        pc_run_case(&c, 0, &o, g_eng, g_strm, &r);
        st = pc_status_failed(r.st) ? dnnl_invalid_graph : dnnl_success;
    }
    pc_case_free(&c);
    return st;
}

#define OP_RELU(in, out) \
    "{\"id\": 0, \"name\": \"r\", \"kind\": \"ReLU\", \"attrs\": {}, \"inputs\": [" in "], \"outputs\": [" out "]}"
#define LT(id, shape) \
    "{\"id\": " #id ", \"dtype\": \"f32\", \"shape\": " shape ", \"stride\": [8, 1], \"layout_type\": \"strided\", " \
    "\"property_type\": \"undef\"}"

/* ---- the table ------------------------------------------------------------------- */

typedef struct {
    const char *cls, *what;
    dnnl_status_t (*run)(void);
    const char *json; /* JSON rows: the case text */
    dnnl_status_t want;
    const char *line; /* the error line must contain this (NULL: accepted, no line) */
} row;

static const row rows[] = {
    {"overflowing dims", "get_mem_size, dims 2^30 x 2^30 x 2^30", dims_product_overflow_mem_size, NULL,
     dnnl_invalid_arguments, "more than 2^48 elements"},
    {"overflowing dims", "tensor_create (allocate), dims (2^62, 4)", dims_product_overflow_tensor_create, NULL,
     dnnl_invalid_arguments, "logical tensor 1"},
    {"overflowing dims", "compile MatMul, src 2^40 x 2^40", dims_overflow_compile_matmul, NULL,
     dnnl_invalid_arguments, "more than 2^48 elements"},
    {"overflowing dims", "compile ReLU over 2^47 elements (beyond 2^48 bytes)", span_beyond_2_48_compile, NULL,
     dnnl_invalid_arguments, "byte size over 2^48"},
    {"overflowing dims", "op_add_input, ndims 13", ndims_13_add_input, NULL, dnnl_invalid_arguments, "ndims"},
    {"overflowing dims", "compile ReLU with dim -7", negative_dim_compile, NULL, dnnl_invalid_shape, "shape not known"},
    {"strides", "get_mem_size, stride -3", negative_stride_mem_size, NULL, dnnl_invalid_arguments, "negative stride"},
    {"strides", "compile ReLU, input stride -3", negative_stride_compile, NULL, dnnl_invalid_arguments,
     "negative or unknown stride"},
    {"strides", "compile ReLU, output strides (1, 1) overlap", overlapping_output_strides_compile, NULL,
     dnnl_invalid_arguments, "overlap"},
    {"strides", "compile ReLU, output stride 0", zero_stride_output_compile, NULL, dnnl_invalid_arguments, "overlap"},
    {"strides", "ReLU over a zero-stride (broadcast) input: compiled and run", zero_stride_input_runs, NULL,
     dnnl_success, NULL},
    {"strides", "execute with strides other than compiled", execute_with_other_strides, NULL, dnnl_invalid_arguments,
     "stride"},
    {"attribute lists", "set_attr_f32 scales, length SIZE_MAX / 2", attr_list_length_beyond_memory, NULL,
     dnnl_invalid_arguments, "scales"},
    {"attribute lists", "set_attr_s64 axes, length 2^40", attr_list_over_limit, NULL, dnnl_invalid_arguments, "axes"},
    {"attribute lists", "compile ReduceSum with 2^20 axes on rank 2", attr_list_million_axes_compile, NULL,
     dnnl_invalid_shape, "repeated"},
    {"attribute lists", "set_attr_str mode, 1 MiB string", attr_huge_string, NULL, dnnl_invalid_arguments, "mode"},
    {"graphs", "finalize, two ops feeding each other (cycle)", cyclic_graph_finalize, NULL, dnnl_invalid_graph,
     "cycle"},
    {"graphs", "op whose output is its own input", self_loop_finalize, NULL, dnnl_invalid_graph, "cycle"},
    {"graphs", "finalize, two producers of one tensor", two_producers_finalize, NULL, dnnl_invalid_graph, "3"},
    {"graphs", "add_op, an op id already in the graph", duplicate_op_id, NULL, dnnl_invalid_graph, "already"},
    {"graphs", "3000 chained element-wise ops: partitioned and compiled", deep_chain_partition_compile, NULL,
     dnnl_success, NULL},
    {"quantization scales", "Quantize, scales [NaN]", quantize_nan_scale, NULL, dnnl_invalid_graph_op, "finite"},
    {"quantization scales", "Quantize, scales [Inf]", quantize_inf_scale, NULL, dnnl_invalid_graph_op, "finite"},
    {"quantization scales", "Dequantize, scales [NaN]", dequantize_nan_scale, NULL, dnnl_invalid_graph_op, "finite"},
    {"quantization scales", "Dequantize, scales [-Inf]", dequantize_neg_inf_scale, NULL, dnnl_invalid_graph_op,
     "finite"},
    {"quantization scales", "Quantize, scales [0]", quantize_zero_scale, NULL, dnnl_invalid_graph_op,
     "zero"},
    {"JSON", "not JSON (truncated)", json_load, "{\"graph\": [", dnnl_invalid_arguments, "bad.json"},
    {"JSON", "\"graph\" missing", json_load, "{\"version\": \"3.5\"}", dnnl_invalid_arguments, "graph"},
    {"JSON", "\"graph\" an object", json_load, "{\"graph\": {}}", dnnl_invalid_arguments, "graph"},
    {"JSON", "op without \"kind\"", json_load,
     "{\"graph\": [{\"id\": 0, \"inputs\": [" LT(0, "[2, 8]") "], \"outputs\": [" LT(1, "[2, 8]") "]}]}",
     dnnl_invalid_arguments, "kind"},
    {"JSON", "unknown op kind", json_load,
     "{\"graph\": [{\"id\": 0, \"kind\": \"NoSuchOp\", \"inputs\": [" LT(0, "[2, 8]") "], \"outputs\": [" LT(
         1, "[2, 8]") "]}]}",
     dnnl_invalid_arguments, "NoSuchOp"},
    {"JSON", "\"shape\" a string", json_load,
     "{\"graph\": [" OP_RELU(LT(0, "\"2x8\""), LT(1, "[2, 8]")) "]}", dnnl_invalid_arguments, "shape"},
    {"JSON", "dim 1e30 (not an int64)", json_load, "{\"graph\": [" OP_RELU(LT(0, "[2, 1e30]"), LT(1, "[2, 8]")) "]}",
     dnnl_invalid_arguments, "shape"},
    {"JSON", "tensor id -1", json_load, "{\"graph\": [" OP_RELU(LT(-1, "[2, 8]"), LT(1, "[2, 8]")) "]}",
     dnnl_invalid_arguments, "id"},
    {"JSON", "\"inputs\" missing", json_load,
     "{\"graph\": [{\"id\": 0, \"kind\": \"ReLU\", \"outputs\": [" LT(1, "[2, 8]") "]}]}", dnnl_invalid_arguments,
     "inputs"},
    {"JSON", "attribute of the wrong type (axis a string)", json_load,
     "{\"graph\": [{\"id\": 0, \"kind\": \"SoftMax\", \"attrs\": {\"axis\": {\"type\": \"s64\", \"value\": \"x\"}}, "
     "\"inputs\": [" LT(0, "[2, 8]") "], \"outputs\": [" LT(1, "[2, 8]") "]}]}",
     dnnl_invalid_arguments, "axis"},
    {"JSON", "dtype unknown", json_load,
     "{\"graph\": [" OP_RELU("{\"id\": 0, \"dtype\": \"f128\", \"shape\": [2, 8], \"stride\": [8, 1], "
                             "\"layout_type\": \"strided\", \"property_type\": \"undef\"}",
                             LT(1, "[2, 8]")) "]}",
     dnnl_invalid_arguments, "f128"},
    {"JSON", "two ops feeding each other, run by the CLI", json_run,
     "{\"graph\": [" OP_RELU(LT(0, "[2, 8]"), LT(1, "[2, 8]")) ", "
     "{\"id\": 1, \"name\": \"a\", \"kind\": \"Abs\", \"attrs\": {}, \"inputs\": [" LT(1, "[2, 8]") "], "
     "\"outputs\": [" LT(0, "[2, 8]") "]}]}",
     dnnl_invalid_arguments, "cycle"},
};

/* ---- running a row with stderr captured --------------------------------------- */

static FILE *g_capture;
static int g_saved_stderr = -1;

static void capture_begin(void) {
    fflush(stderr);
    g_capture = tmpfile();
    g_saved_stderr = dup(2);
    dup2(fileno(g_capture), 2);
}

/* Restores stderr; returns what was written to it (static buffer). */
static const char *capture_end(void) {
    static char text[16384];
    fflush(stderr);
    dup2(g_saved_stderr, 2);
    close(g_saved_stderr);
    rewind(g_capture);
    size_t n = fread(text, 1, sizeof text - 1, g_capture);
    text[n] = 0;
    fclose(g_capture);
    return text;
}

/* Lines of `text`; *matching gets those containing `needle`. */
static int count_lines(const char *text, const char *needle, int *matching) {
    int n = 0;
    *matching = 0;
    for (const char *p = text; *p;) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        char line[4096];
        size_t k = len < sizeof line - 1 ? len : sizeof line - 1;
        memcpy(line, p, k);
        line[k] = 0;
        ++n;
        if (needle && strstr(line, needle)) ++*matching;
        p += len + (e ? 1 : 0);
    }
    return n;
}

int main(void) {
    setenv("ONEDNN_VERBOSE", "1", 1); /* read once, at the first verbose call */
    CHECK_EQ_INT(dnnl_engine_create(&g_eng, dnnl_cpu, 0), dnnl_success);
    CHECK_EQ_INT(dnnl_stream_create(&g_strm, g_eng, dnnl_stream_default_flags), dnnl_success);
    const size_t nrows = sizeof rows / sizeof rows[0];
    int bad_rows = 0;
    for (size_t r = 0; r < nrows; ++r) {
        const row *w = &rows[r];
        g_json = w->json;
        capture_begin();
        dnnl_status_t st = w->run();
        const char *err = capture_end();
        int matching = 0, lines = count_lines(err, w->line, &matching);
        bool ok = st == w->want && (w->line ? lines == 1 && matching == 1 : lines == 0);
        printf("%-20s | %-62s | %-22s | %s\n", w->cls, w->what, ok ? "ok" : "WRONG", err[0] ? err : "(no line)\n");
        if (!ok)
            pt_test_count(0, __FILE__, __LINE__, "row %zu (%s: %s): status %d (want %d), %d stderr lines (%d with \"%s\")",
                          r, w->cls, w->what, (int)st, (int)w->want, lines, matching, w->line ? w->line : "");
        else
            pt_test_count(1, __FILE__, __LINE__, "row");
        bad_rows += !ok;
    }
    printf("%zu bad-input rows, %d wrong\n", nrows, bad_rows);
    CHECK_EQ_INT(dnnl_stream_destroy(g_strm), dnnl_success);
    CHECK_EQ_INT(dnnl_engine_destroy(g_eng), dnnl_success);
    return pt_test_summary("test_int_bad_inputs");
}
