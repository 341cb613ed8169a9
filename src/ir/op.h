/* The op: id, kind, name, input/output logical tensors and attributes.
 * `struct dnnl_graph_op` is the public opaque handle; graphs keep deep copies. */
#ifndef PARTITA_IR_OP_H
#define PARTITA_IR_OP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "oneapi/dnnl/dnnl_graph_types.h"
#include "ir/logical_tensor.h"
#include "ir/status.h"

/* Longest attribute list and string an op accepts: larger than any real
 * per-channel scale list or enum string, small enough that a length no
 * buffer has is refused before anything is read or allocated. */
#define PT_MAX_ATTR_VALUES ((size_t)1 << 22)
#define PT_MAX_ATTR_STR ((size_t)4096)

typedef enum {
    PT_ATTR_F32 = 0, /* single float (alpha .. momentum) */
    PT_ATTR_F32S,    /* float list (scales) */
    PT_ATTR_S64,     /* single int64 (axis, begin_norm_axis, groups) */
    PT_ATTR_S64S,    /* int64 list */
    PT_ATTR_BOOL,
    PT_ATTR_STR,
} pt_attr_kind;

/* One attribute value.  Scalars are stored as one-element arrays so readers
 * can treat every numeric attribute as a list.  For `axis` and `groups` on
 * DynamicQuantize / DynamicDequantize the whole list is kept (docs/ops.md, quantization). */
typedef struct {
    int name; /* dnnl_graph_op_attr_t */
    pt_attr_kind kind;
    size_t n;     /* element count of f / i */
    float *f;     /* F32, F32S */
    int64_t *i;   /* S64, S64S, BOOL (0/1) */
    char *s;      /* STR */
} pt_attr;

struct dnnl_graph_op {
    size_t id;
    dnnl_graph_op_kind_t kind;
    char *name;
    pt_lt *in;
    size_t nin, cap_in;
    pt_lt *out;
    size_t nout, cap_out;
    pt_attr *attrs;
    size_t nattr, cap_attr;
};
typedef struct dnnl_graph_op pt_op;

pt_op *pt_op_new(size_t id, dnnl_graph_op_kind_t kind, const char *name);
pt_op *pt_op_clone(const pt_op *op);
void pt_op_free(pt_op *op);
pt_status pt_op_add_input(pt_op *op, const pt_lt *lt);
pt_status pt_op_add_output(pt_op *op, const pt_lt *lt);

/* Store an attribute (overwrites an existing one of the same name). */
pt_status pt_op_set_f32(pt_op *op, int name, const float *v, size_t n, bool list);
pt_status pt_op_set_s64(pt_op *op, int name, const int64_t *v, size_t n, bool list);
pt_status pt_op_set_bool(pt_op *op, int name, bool v);
pt_status pt_op_set_str(pt_op *op, int name, const char *v);
bool pt_op_del_attr(pt_op *op, int name);

const pt_attr *pt_op_attr(const pt_op *op, int name);
bool pt_op_has(const pt_op *op, int name);
/* Typed getters: return `dflt` when the attribute is absent. */
float pt_op_f32(const pt_op *op, int name, float dflt);
int64_t pt_op_s64(const pt_op *op, int name, int64_t dflt);
bool pt_op_bool(const pt_op *op, int name, bool dflt);
const char *pt_op_str(const pt_op *op, int name, const char *dflt);
/* List getters: return NULL and *n = 0 when absent. */
const int64_t *pt_op_s64s(const pt_op *op, int name, size_t *n);
const float *pt_op_f32s(const pt_op *op, int name, size_t *n);

/* Attribute names as used in JSON and verbose output ("alpha", "pads_begin"...). */
const char *pt_attr_name(int name);
int pt_attr_from_name(const char *s); /* dnnl_graph_op_attr_undef if unknown */
/* Value kind implied by the attribute id range (the ranges of dnnl_graph_op_attr_t). */
pt_attr_kind pt_attr_kind_of(int name);

#endif
