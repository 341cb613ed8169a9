/* In-memory form of a JSON graph case (docs/graph-json.md) and its loader.
 * Ops keep the file order; pc_case_topo_order gives the driver's order. */
#ifndef PARTITA_TOOLS_CASE_JSON_H
#define PARTITA_TOOLS_CASE_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "oneapi/dnnl/dnnl_graph_types.h"
#include "op_kinds.h"

typedef dnnl_graph_logical_tensor_t pc_lt;

typedef struct {
    int id;           /* dnnl_graph_op_attr_t */
    pc_attr_type type; /* as written in the file (or set by a knob) */
    size_t n;         /* elements of i / f */
    int64_t *i;       /* BOOL, S64, S64S */
    float *f;         /* F32, F32S */
    char *s;          /* STR */
} pc_attr;

typedef struct {
    size_t id;
    char *name;
    int kind; /* dnnl_graph_op_kind_t */
    pc_attr *attrs;
    size_t nattr;
    pc_lt *in;
    size_t nin;
    pc_lt *out;
    size_t nout;
} pc_op;

typedef struct {
    char *path;
    char *version;
    dnnl_fpmath_mode_t fpmath;
    int apply_to_int;
    pc_op *ops;
    size_t nops;
} pc_case;

/* Loads `path`.  On failure returns nonzero and writes one line naming the
 * file, op id and field into err. */
int pc_case_load(const char *path, pc_case *c, char *err, size_t errcap);
/* Parses JSON text (path used in messages only). */
int pc_case_parse(const char *text, const char *path, pc_case *c, char *err, size_t errcap);
void pc_case_free(pc_case *c);
/* Math-mode name ("strict", "bf16", "f16", "tf32", "any") to its value; -1 if unknown. */
int pc_fpmath_from_name(const char *name, dnnl_fpmath_mode_t *m);
/* Deep copy; returns nonzero on allocation failure. */
int pc_case_clone(const pc_case *src, pc_case *dst);

/* Lookups (NULL / -1 when absent). */
pc_op *pc_case_op(pc_case *c, size_t op_id);
const pc_attr *pc_op_attr(const pc_op *op, int attr_id);
pc_attr *pc_op_attr_mut(pc_op *op, int attr_id);
/* Index of the op producing tensor `tid`, -1 if it is a graph input. */
long pc_case_producer(const pc_case *c, size_t tid);
/* First occurrence of tensor `tid` in the case (NULL if absent). */
const pc_lt *pc_case_tensor(const pc_case *c, size_t tid);
/* Number of op inputs (over all ops) that read tensor `tid`. */
size_t pc_case_consumer_count(const pc_case *c, size_t tid);
/* Graph inputs: tensors no op produces. */
bool pc_case_is_input(const pc_case *c, size_t tid);
/* Graph outputs: produced tensors without consumers, or End inputs. */
bool pc_case_is_output(const pc_case *c, size_t tid);
/* Calls fn on every occurrence of tensor `tid`; returns the count. */
size_t pc_case_for_tensor(pc_case *c, size_t tid, void (*fn)(pc_lt *lt, void *ctx), void *ctx);

/* Typed attribute helpers (fallback when absent). */
int64_t pc_attr_s64(const pc_op *op, int attr_id, int64_t dflt);
float pc_attr_f32(const pc_op *op, int attr_id, float dflt);
bool pc_attr_bool(const pc_op *op, int attr_id, bool dflt);
const char *pc_attr_str(const pc_op *op, int attr_id, const char *dflt);
/* Replaces (or adds) an attribute; takes ownership of nothing (copies). */
int pc_op_set_attr(pc_op *op, int attr_id, pc_attr_type type, const int64_t *i, const float *f, size_t n,
                   const char *s);
void pc_attr_free(pc_attr *a);

/* Kahn topological order (docs/graph-json.md): writes op indices into order
 * (nops entries).  Returns nonzero on a cycle or on a tensor produced twice. */
int pc_case_topo_order(const pc_case *c, size_t *order, char *err, size_t errcap);

/* "f32:1x16x384x64" style text. */
void pc_lt_describe(const pc_lt *lt, char *buf, size_t cap);
int64_t pc_lt_nelems(const pc_lt *lt); /* -1 when the shape is unknown */
bool pc_lt_shape_known(const pc_lt *lt);
bool pc_lt_strides_known(const pc_lt *lt);
void pc_dense_strides(int ndims, const int64_t *dims, int64_t *strides);

#endif
