/* Op schemas: what an op of a kind must look like (arity, port data types,
 * attributes with defaults and allowed values, op-specific checks, shape
 * inference and the supported data-type combinations).  The op-kind table
 * (op_table.def) names each kind's schema row; kinds that differ only in
 * what they compute share one row.  The ops themselves: docs/ops.md. */
#ifndef PARTITA_OPS_OP_SCHEMA_H
#define PARTITA_OPS_OP_SCHEMA_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/op.h"
#include "ops/op_kinds.h"

/* Bit mask of data types: PT_DT(dnnl_f32) | PT_DT(dnnl_bf16) ... */
#define PT_DT(dt) (1u << (unsigned)(dt))
#define PT_DT_FLOAT3 (PT_DT(dnnl_f32) | PT_DT(dnnl_bf16) | PT_DT(dnnl_f16))
#define PT_DT_ANY 0xffffffffu

typedef struct {
    const char *name;  /* "src", "weights", ... (for messages) */
    uint32_t dtypes;   /* allowed data types (PT_DT mask) */
    char tvar;         /* type variable: ports with the same letter must share a type; 0 = none */
    bool optional;     /* for inputs/outputs: may be absent (trailing) */
} pt_port_spec;

typedef struct {
    int name;              /* dnnl_graph_op_attr_t; 0 terminates a list */
    pt_attr_kind kind;
    bool required;
    bool has_default;
    float dflt_f;          /* PT_ATTR_F32 */
    int64_t dflt_i;        /* PT_ATTR_S64 / PT_ATTR_BOOL */
    const char *dflt_s;    /* PT_ATTR_STR */
    const int64_t *dflt_v; /* PT_ATTR_S64S (may be NULL with dflt_n == 0: empty list) */
    size_t dflt_n;
    const char *allowed;   /* strings: '|'-separated allowed values; NULL = any */
} pt_attr_spec;

typedef struct pt_op_schema {
    /* Port specs, required ports first, then the optional trailing ones: an
     * op has from the required count to n_*_specs ports on each side... */
    const pt_port_spec *inputs;
    int n_in_specs;
    const pt_port_spec *outputs;
    int n_out_specs;
    /* ...unless the row repeats its last spec: then up to max_in / max_out
     * ports (-1: unbounded).  0 = no repetition. */
    int max_in, max_out;
    const pt_attr_spec *attrs;  /* terminated by an entry with name == 0; may be NULL */
    /* Extra add_op checks beyond arity/dtypes/attrs; return dnnl_invalid_graph_op
     * (after pt_err) on failure.  May be NULL. */
    pt_status (*check)(const pt_op *op);
    /* Shape inference: `in` has op->nin entries, `out` op->nout entries that
     * start as the declared outputs.  Fills unknown output dims (and dense
     * strides where the layout is strided and strides are unknown), verifies
     * known ones.  Inputs may have unknown dims/rank: infer what can be
     * inferred and leave the rest unknown.  Errors: dnnl_invalid_shape.
     * NULL means "outputs copy the shape of input 0". */
    pt_status (*infer)(const pt_op *op, const pt_lt *in, pt_lt *out);
    /* True when the op's data-type combination is one the library supports
     * (else its partition is unsupported).  NULL = always supported. */
    bool (*supported)(const pt_op *op);
} pt_op_schema;

/* Registry lookups (names and families: op_kinds.h). */
const pt_op_schema *pt_schema_of(int kind); /* NULL for unknown kinds */
int pt_schema_count(void);                  /* kinds with a schema row: all of them */
/* The port counts one side (inputs, or outputs with `outputs`) of a row
 * allows: *lo to *hi, *hi < 0 for unbounded. */
void pt_schema_arity(const pt_op_schema *s, bool outputs, int *lo, int *hi);

/* add_op validation: arity, port data types and type variables, attribute
 * names/kinds/allowed values, required attributes, op-specific checks; fills
 * defaults of absent attributes into `op`.  dnnl_invalid_graph_op on failure
 * (with a verbose line naming the op and the problem). */
pt_status pt_schema_verify(pt_op *op);
/* Shape inference through the schema row (see pt_op_schema.infer). */
pt_status pt_schema_infer(const pt_op *op, const pt_lt *in, pt_lt *out);
/* Supported data-type combination (see pt_op_schema.supported). */
bool pt_schema_supported(const pt_op *op);

#endif
