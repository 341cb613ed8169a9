/* An in-memory graph case: ops with attributes and tensor descriptions, in
 * the shape of the JSON graph cases (docs/graph-json.md). The JSON loader
 * fills it from a file; bench_matmul builds it in code. Nothing here calls a
 * library: case_runner.c turns a case into a graph through a graph_api. */
#ifndef BENCH_CASE_H
#define BENCH_CASE_H

#include <stddef.h>
#include <stdint.h>

#include "oneapi/dnnl/dnnl_graph_types.h"

#define BENCH_MAX_DIMS 12

typedef struct bench_tensor {
    size_t id;
    int ndims;                      /* -1: unknown rank */
    int64_t dims[BENCH_MAX_DIMS];
    int64_t strides[BENCH_MAX_DIMS];
    int has_strides;
    dnnl_data_type_t data_type;
    dnnl_graph_layout_type_t layout_type;
    dnnl_graph_tensor_property_t property;
} bench_tensor;

typedef enum {
    BENCH_ATTR_F32,
    BENCH_ATTR_F32_LIST,
    BENCH_ATTR_S64,
    BENCH_ATTR_S64_LIST,
    BENCH_ATTR_BOOL,
    BENCH_ATTR_STRING,
} bench_attr_type;

typedef struct bench_attr {
    dnnl_graph_op_attr_t name;
    bench_attr_type type;
    size_t count;        /* number of values (1 for scalars) */
    float *f32_values;
    int64_t *s64_values;
    char *string_value;
} bench_attr;

typedef struct bench_op {
    size_t id;
    dnnl_graph_op_kind_t kind;
    char name[64];
    bench_attr *attrs;
    size_t n_attrs;
    bench_tensor *inputs;
    size_t n_inputs;
    bench_tensor *outputs;
    size_t n_outputs;
} bench_op;

typedef struct bench_case {
    char name[256];
    dnnl_fpmath_mode_t fpmath_mode;
    int fpmath_apply_to_int;
    bench_op *ops;
    size_t n_ops;
} bench_case;

/* Reads a JSON graph case. Returns 0, or -1 with a message in error. */
int bench_case_load_json(bench_case *c, const char *path, char *error,
        size_t error_size);
void bench_case_free(bench_case *c);
/* Writes a case in the same JSON layout the loader reads. Returns 0 or -1. */
int bench_case_write_json(const bench_case *c, const char *path);

/* Builders for cases made in code. */
bench_op *bench_case_add_op(bench_case *c, size_t id, dnnl_graph_op_kind_t kind,
        const char *name);
bench_tensor *bench_op_add_input(bench_op *op, const bench_tensor *t);
bench_tensor *bench_op_add_output(bench_op *op, const bench_tensor *t);
void bench_op_set_s64(bench_op *op, dnnl_graph_op_attr_t name,
        const int64_t *values, size_t count, int is_list);
void bench_op_set_f32(bench_op *op, dnnl_graph_op_attr_t name,
        const float *values, size_t count, int is_list);
void bench_op_set_bool(bench_op *op, dnnl_graph_op_attr_t name, int value);
void bench_op_set_string(bench_op *op, dnnl_graph_op_attr_t name,
        const char *value);
/* A dense row-major tensor. */
bench_tensor bench_tensor_dense(size_t id, dnnl_data_type_t data_type,
        int ndims, const int64_t *dims, dnnl_graph_tensor_property_t property);

/* Bytes one element occupies, as a fraction for the 4-bit types. */
double bench_dtype_bytes(dnnl_data_type_t data_type);
const char *bench_dtype_name(dnnl_data_type_t data_type);
int64_t bench_tensor_elements(const bench_tensor *t);
/* Bytes of all distinct tensors of the case (inputs, intermediates, outputs). */
double bench_case_total_bytes(const bench_case *c);
/* The tensor with this id as seen by its first occurrence, or NULL. */
const bench_tensor *bench_case_find_tensor(const bench_case *c, size_t id);
/* Whether some op other than End reads tensor `id` (a graph output is made
 * by an op and read by none). */
int bench_case_is_consumed(const bench_case *c, size_t id);

#endif
