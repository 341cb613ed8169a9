/* Private to src/ops: the schema rows that the registry (op_schema.c)
 * indexes by op kind, plus small helpers shared by the rows. */
#ifndef PARTITA_OPS_SCHEMA_TABLES_H
#define PARTITA_OPS_SCHEMA_TABLES_H

#include <stdbool.h>
#include <stdint.h>

#include "ops/op_schema.h"

/* The schema rows that op_table.def names (pt_schema_<schema>), defined in
 * schemas_*.c; a row shared by several kinds is declared once per kind,
 * which C allows. */
#define PT_OP(kind, name, fam, schema, stem) extern const pt_op_schema pt_schema_##schema;
#include "ops/op_table.def"

/* Attribute-spec initialisers (the list of a row ends with PT_ATTR_LIST_END). */
#define PT_ATTR_LIST_END {.name = 0}
#define PT_REQ_F32(n) {.name = (n), .kind = PT_ATTR_F32, .required = true}
#define PT_OPT_F32(n, d) {.name = (n), .kind = PT_ATTR_F32, .has_default = true, .dflt_f = (d)}
#define PT_REQ_F32S(n) {.name = (n), .kind = PT_ATTR_F32S, .required = true}
#define PT_REQ_S64(n) {.name = (n), .kind = PT_ATTR_S64, .required = true}
#define PT_OPT_S64(n, d) {.name = (n), .kind = PT_ATTR_S64, .has_default = true, .dflt_i = (d)}
#define PT_REQ_S64S(n) {.name = (n), .kind = PT_ATTR_S64S, .required = true}
#define PT_OPT_S64S(n) {.name = (n), .kind = PT_ATTR_S64S}
/* List attribute with a default list `arr` (a static const int64_t array). */
#define PT_OPT_S64S_DEF(n, arr) \
    {.name = (n), .kind = PT_ATTR_S64S, .has_default = true, .dflt_v = (arr), \
     .dflt_n = sizeof(arr) / sizeof((arr)[0])}
#define PT_REQ_BOOL(n) {.name = (n), .kind = PT_ATTR_BOOL, .required = true}
#define PT_OPT_BOOL(n, d) {.name = (n), .kind = PT_ATTR_BOOL, .has_default = true, .dflt_i = (d)}
#define PT_REQ_STR(n, set) {.name = (n), .kind = PT_ATTR_STR, .required = true, .allowed = (set)}
#define PT_OPT_STR(n, d, set) \
    {.name = (n), .kind = PT_ATTR_STR, .has_default = true, .dflt_s = (d), .allowed = (set)}

/* Port-spec initialisers. */
#define PT_PORT(nm, mask, tv) {.name = (nm), .dtypes = (mask), .tvar = (tv), .optional = false}
#define PT_PORT_OPT(nm, mask, tv) {.name = (nm), .dtypes = (mask), .tvar = (tv), .optional = true}

#define PT_COUNT(arr) ((int)(sizeof(arr) / sizeof((arr)[0])))

/* A schema row whose port specs are arrays (their lengths are the spec
 * counts), then designated initialisers (.attrs, .check, ...). */
#define PT_SCHEMA(ins, outs, ...) \
    {.inputs = (ins), .n_in_specs = PT_COUNT(ins), .outputs = (outs), \
     .n_out_specs = PT_COUNT(outs), __VA_ARGS__}

/* Defines the schema row pt_schema_<row> (the name op_table.def gives it)
 * in one table line; NULL where a row has no attributes, check, shape
 * inference (outputs copy input 0) or data-type restriction. */
#define PT_ROW(row, ins, outs, attrs_, check_, infer_, supported_)                            \
    const pt_op_schema pt_schema_##row = PT_SCHEMA(ins, outs, .attrs = (attrs_),             \
                                                   .check = (check_), .infer = (infer_),     \
                                                   .supported = (supported_))

/* Reports `fmt` prefixed with "op <Kind>#<id>: " through pt_err; returns `st`. */
pt_status pt_op_fail(const pt_op *op, pt_status st, const char *fmt, ...)
#if defined(__GNUC__)
        __attribute__((format(printf, 3, 4)))
#endif
        ;

/* Sets output `out` to the shape of `src` (pt_set_output_shape semantics). */
pt_status pt_infer_like(pt_lt *out, const pt_lt *src);

/* Merges two shapes that must be identical (auto_broadcast = none, gradient
 * inputs): ranks must agree when both known and static dims must be equal;
 * the result takes every dim known on either side.  *n = -1 when both are
 * unranked.  dnnl_invalid_shape on a mismatch. */
pt_status pt_merge_same_shape(int an, const int64_t *a, int bn, const int64_t *b, int *n,
                              int64_t *dims);

/* Output `out` takes the shape of `a` and `b`, which must be the same
 * (pt_merge_same_shape); dnnl_invalid_shape with `why` otherwise. */
pt_status pt_infer_same_shape(const pt_op *op, const pt_lt *a, const pt_lt *b, pt_lt *out,
                              const char *why);

/* Channel axis of a rank-`r` tensor for `data_format` ("NCX" -> 1, else r-1). */
int pt_channel_axis(const char *data_format, int r);

/* True when a dimension value is a known (static) extent. */
static inline bool pt_dim_known(int64_t d) { return d >= 0; }

#endif
