/* Op functions (docs/api.md).  Attribute kinds are checked against the op
 * kind later, by dnnl_graph_add_op. */
#include <stdio.h>
#include <string.h>

#include "oneapi/dnnl/dnnl_graph.h"
#include "ir/op.h"
#include "ops/op_schema.h"

dnnl_status_t DNNL_API dnnl_graph_op_create(dnnl_graph_op_t *op, size_t id, dnnl_graph_op_kind_t kind,
                                            const char *verbose_name) {
    if (!op || !verbose_name) return pt_err(dnnl_invalid_arguments, "op_create: NULL argument");
    char name[128];
    if (!*verbose_name) {
        snprintf(name, sizeof name, "%s_%zu", pt_op_kind_name(kind), id);
        verbose_name = name;
    }
    pt_op *o = pt_op_new(id, kind, verbose_name);
    if (!o) return dnnl_out_of_memory;
    *op = o;
    return dnnl_success;
}

dnnl_status_t DNNL_API dnnl_graph_op_destroy(dnnl_graph_op_t op) {
    pt_op_free(op);
    return dnnl_success;
}

dnnl_status_t DNNL_API dnnl_graph_op_add_input(dnnl_graph_op_t op, const dnnl_graph_logical_tensor_t *input) {
    if (!op || !input) return pt_err(dnnl_invalid_arguments, "op_add_input: NULL argument");
    PT_CHECK(pt_lt_check(input, "op_add_input"));
    return pt_op_add_input(op, input);
}

dnnl_status_t DNNL_API dnnl_graph_op_add_output(dnnl_graph_op_t op, const dnnl_graph_logical_tensor_t *output) {
    if (!op || !output) return pt_err(dnnl_invalid_arguments, "op_add_output: NULL argument");
    PT_CHECK(pt_lt_check(output, "op_add_output"));
    return pt_op_add_output(op, output);
}

/* DynamicQuantize / DynamicDequantize keep `axis` and `groups` as lists (docs/ops.md, quantization). */
static bool keeps_list(const pt_op *op, int name) {
    return (op->kind == dnnl_graph_op_dynamic_quantize || op->kind == dnnl_graph_op_dynamic_dequantize) &&
           (name == dnnl_graph_op_attr_axis || name == dnnl_graph_op_attr_groups);
}

/* A list longer than PT_MAX_ATTR_VALUES: refused with one line naming the op and attribute. */
static pt_status list_too_long(const pt_op *op, dnnl_graph_op_attr_t name, size_t n, const char *fn) {
    return pt_err(dnnl_invalid_arguments, "%s: op %s#%zu: %s has %zu values (at most %zu)", fn,
                  pt_op_kind_name(op->kind), op->id, pt_attr_name(name), n, PT_MAX_ATTR_VALUES);
}

dnnl_status_t DNNL_API dnnl_graph_op_set_attr_f32(dnnl_graph_op_t op, dnnl_graph_op_attr_t name,
                                                  const float *value, size_t value_len) {
    if (!op || !value) return pt_err(dnnl_invalid_arguments, "op_set_attr_f32: NULL argument");
    if (value_len > PT_MAX_ATTR_VALUES) return list_too_long(op, name, value_len, "op_set_attr_f32");
    if (pt_attr_kind_of(name) == PT_ATTR_F32) return pt_op_set_f32(op, name, value, 1, false);
    return pt_op_set_f32(op, name, value, value_len, true);
}

dnnl_status_t DNNL_API dnnl_graph_op_set_attr_bool(dnnl_graph_op_t op, dnnl_graph_op_attr_t name,
                                                   const uint8_t *value, size_t value_len) {
    if (!op || !value) return pt_err(dnnl_invalid_arguments, "op_set_attr_bool: NULL argument");
    if (value_len != 1)
        return pt_err(dnnl_invalid_arguments, "op_set_attr_bool: %s takes exactly one value", pt_attr_name(name));
    return pt_op_set_bool(op, name, value[0] != 0);
}

dnnl_status_t DNNL_API dnnl_graph_op_set_attr_s64(dnnl_graph_op_t op, dnnl_graph_op_attr_t name,
                                                  const int64_t *value, size_t value_len) {
    if (!op || !value) return pt_err(dnnl_invalid_arguments, "op_set_attr_s64: NULL argument");
    if (value_len > PT_MAX_ATTR_VALUES) return list_too_long(op, name, value_len, "op_set_attr_s64");
    if (pt_attr_kind_of(name) == PT_ATTR_S64) {
        if (keeps_list(op, name) && value_len > 1) return pt_op_set_s64(op, name, value, value_len, false);
        return pt_op_set_s64(op, name, value, 1, false);
    }
    return pt_op_set_s64(op, name, value, value_len, true);
}

dnnl_status_t DNNL_API dnnl_graph_op_set_attr_str(dnnl_graph_op_t op, dnnl_graph_op_attr_t name,
                                                  const char *value, size_t value_len) {
    if (!op || !value) return pt_err(dnnl_invalid_arguments, "op_set_attr_str: NULL argument");
    if (value_len == 0)
        return pt_err(dnnl_invalid_arguments, "op_set_attr_str: %s: empty value", pt_attr_name(name));
    /* Read no further than the limit looking for the end of the string. */
    size_t len = 0;
    while (len <= PT_MAX_ATTR_STR && value[len]) ++len;
    if (len > PT_MAX_ATTR_STR)
        return pt_err(dnnl_invalid_arguments, "op_set_attr_str: op %s#%zu: %s is longer than %zu bytes",
                      pt_op_kind_name(op->kind), op->id, pt_attr_name(name), PT_MAX_ATTR_STR);
    return pt_op_set_str(op, name, value);
}

dnnl_status_t DNNL_API dnnl_graph_op_get_id(const_dnnl_graph_op_t op, size_t *id) {
    if (!op || !id) return pt_err(dnnl_invalid_arguments, "op_get_id: NULL argument");
    *id = op->id;
    return dnnl_success;
}

dnnl_status_t DNNL_API dnnl_graph_op_get_kind(const_dnnl_graph_op_t op, dnnl_graph_op_kind_t *kind) {
    if (!op || !kind) return pt_err(dnnl_invalid_arguments, "op_get_kind: NULL argument");
    *kind = op->kind;
    return dnnl_success;
}
