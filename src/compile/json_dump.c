/* Graph dump writer (docs/graph-json.md, "Writing cases: the graph dump").  The document is built as a cJSON
 * tree; numbers are stored as raw text so that 64-bit ids and
 * DNNL_GRAPH_UNKNOWN_DIM print exactly and f32 attributes print with six
 * significant digits like the reference writer.  The tree is then emitted with
 * the reference layout: one member/element per line, two-space indentation,
 * ": " between key and value. */
#include "compile/json_dump.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "ir/dtype.h"
#include "oneapi/dnnl/dnnl_version.h"
#include "ops/op_schema.h"
#include "runtime/settings.h"

/* ---- tree construction ---------------------------------------------------- */

static cJSON *raw_s64(int64_t v) {
    char buf[32];
    snprintf(buf, sizeof buf, "%" PRId64, v);
    return cJSON_CreateRaw(buf);
}

static cJSON *raw_u64(uint64_t v) {
    char buf[32];
    snprintf(buf, sizeof buf, "%" PRIu64, v);
    return cJSON_CreateRaw(buf);
}

/* C++ stream default formatting of a float: 6 significant digits, shortest. */
static cJSON *raw_f32(float v) {
    char buf[48];
    snprintf(buf, sizeof buf, "%g", (double)v);
    return cJSON_CreateRaw(buf);
}

/* Adds `item` to `parent` (object when key != NULL, else array); frees it and
 * reports failure when it is NULL or cannot be attached. */
static int put(cJSON *parent, const char *key, cJSON *item) {
    if (!item) return 0;
    cJSON_bool ok = key ? cJSON_AddItemToObject(parent, key, item) : cJSON_AddItemToArray(parent, item);
    if (!ok) cJSON_Delete(item);
    return ok ? 1 : 0;
}

static const char *engine_kind_str(dnnl_engine_kind_t k) {
    switch (k) {
        case dnnl_cpu: return "cpu";
        case dnnl_gpu: return "gpu";
        default: return "any";
    }
}

static const char *layout_str(dnnl_graph_layout_type_t l) {
    switch (l) {
        case dnnl_graph_layout_type_any: return "any";
        case dnnl_graph_layout_type_strided: return "strided";
        case dnnl_graph_layout_type_opaque: return "opaque";
        default: return "undef";
    }
}

static const char *property_str(dnnl_graph_tensor_property_t p) {
    switch (p) {
        case dnnl_graph_tensor_property_variable: return "variable";
        case dnnl_graph_tensor_property_constant: return "constant";
        case dnnl_graph_tensor_property_host_scalar: return "host_scalar";
        default: return "undef";
    }
}

/* A shape (or stride list) that is not fully known is written as the single
 * element INT64_MIN, as the format does.  `vals` NULL means "unknown". */
static cJSON *dims_array(int ndims, const int64_t *vals) {
    cJSON *arr = cJSON_CreateArray();
    if (!arr) return NULL;
    bool known = ndims >= 0 && vals != NULL;
    for (int i = 0; known && i < ndims; ++i)
        if (vals[i] == PT_UNKNOWN_DIM) known = false;
    if (!known) {
        if (!put(arr, NULL, raw_s64(INT64_MIN))) goto fail;
        return arr;
    }
    for (int i = 0; i < ndims; ++i)
        if (!put(arr, NULL, raw_s64(vals[i]))) goto fail;
    return arr;
fail:
    cJSON_Delete(arr);
    return NULL;
}

static cJSON *tensor_json(const pt_lt *lt) {
    cJSON *t = cJSON_CreateObject();
    if (!t) return NULL;
    int ok = put(t, "id", raw_u64((uint64_t)lt->id));
    ok = ok && put(t, "dtype", cJSON_CreateString(pt_dt_name(lt->data_type)));
    ok = ok && put(t, "shape", dims_array(lt->ndims, lt->dims));
    /* Strides exist only for strided layouts; an opaque layout id travels
     * through the stride field like the reference writer does. */
    if (lt->layout_type == dnnl_graph_layout_type_strided) {
        ok = ok && put(t, "stride", dims_array(lt->ndims, lt->layout.strides));
    } else if (lt->layout_type == dnnl_graph_layout_type_opaque) {
        int64_t lid = (int64_t)lt->layout.layout_id;
        ok = ok && put(t, "stride", dims_array(1, &lid));
    } else {
        ok = ok && put(t, "stride", dims_array(lt->ndims, NULL));
    }
    ok = ok && put(t, "layout_type", cJSON_CreateString(layout_str(lt->layout_type)));
    ok = ok && put(t, "property_type", cJSON_CreateString(property_str(lt->property)));
    if (!ok) {
        cJSON_Delete(t);
        return NULL;
    }
    return t;
}

/* An array of n values, element i made by raw(a, i). */
static cJSON *value_array(const pt_attr *a, cJSON *(*raw)(const pt_attr *, size_t)) {
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; arr && i < a->n; ++i)
        if (!put(arr, NULL, raw(a, i))) {
            cJSON_Delete(arr);
            return NULL;
        }
    return arr;
}

static cJSON *f32_at(const pt_attr *a, size_t i) { return raw_f32(a->f[i]); }
static cJSON *s64_at(const pt_attr *a, size_t i) { return raw_s64(a->i[i]); }

static cJSON *attr_value(const pt_attr *a, const char **type) {
    switch (a->kind) {
        case PT_ATTR_F32:
            *type = "f32";
            return a->n ? raw_f32(a->f[0]) : NULL;
        case PT_ATTR_F32S:
            *type = "f32[]";
            return value_array(a, f32_at);
        case PT_ATTR_S64:
            *type = "s64";
            return a->n ? raw_s64(a->i[0]) : NULL;
        case PT_ATTR_S64S:
            *type = "s64[]";
            return value_array(a, s64_at);
        case PT_ATTR_BOOL:
            *type = "bool";
            return a->n ? raw_s64(a->i[0] ? 1 : 0) : NULL;
        case PT_ATTR_STR:
            *type = "string";
            return cJSON_CreateString(a->s ? a->s : "");
    }
    return NULL;
}

static cJSON *attr_json(const pt_attr *a) {
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    const char *type = NULL;
    cJSON *v = attr_value(a, &type);
    /* A value of none of the six types is written as an empty object. */
    if (!v) return o;
    if (!put(o, "type", cJSON_CreateString(type)) || !put(o, "value", v)) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static cJSON *string_attr(const char *value) {
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    if (!put(o, "type", cJSON_CreateString("string")) || !put(o, "value", cJSON_CreateString(value))) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static cJSON *op_json(const pt_op *op, const size_t *partition_id) {
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    int ok = put(o, "id", raw_u64((uint64_t)op->id));
    ok = ok && put(o, "name", cJSON_CreateString(op->name ? op->name : ""));
    ok = ok && put(o, "kind", cJSON_CreateString(pt_op_kind_name(op->kind)));
    cJSON *attrs = cJSON_CreateObject();
    ok = ok && put(o, "attrs", attrs);
    for (size_t i = 0; ok && i < op->nattr; ++i) {
        const char *name = pt_attr_name(op->attrs[i].name);
        ok = put(attrs, name, attr_json(&op->attrs[i]));
    }
    if (ok && partition_id) {
        /* Post-partitioning dumps carry the partition id and the backend
         * name as string attributes (docs/graph-json.md). */
        char pid[32];
        snprintf(pid, sizeof pid, "%zu", *partition_id);
        ok = put(attrs, "partition_id", string_attr(pid)) && put(attrs, "backend", string_attr("dnnl_backend"));
    }
    cJSON *ins = cJSON_CreateArray();
    ok = ok && put(o, "inputs", ins);
    for (size_t i = 0; ok && i < op->nin; ++i) ok = put(ins, NULL, tensor_json(&op->in[i]));
    cJSON *outs = cJSON_CreateArray();
    ok = ok && put(o, "outputs", outs);
    for (size_t i = 0; ok && i < op->nout; ++i) ok = put(outs, NULL, tensor_json(&op->out[i]));
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static bool produced_inside(const pt_op *const *ops, size_t n, size_t tid) {
    for (size_t i = 0; i < n; ++i)
        for (size_t k = 0; k < ops[i]->nout; ++k)
            if (ops[i]->out[k].id == tid) return true;
    return false;
}

static bool consumed_inside(const pt_op *const *ops, size_t n, size_t tid) {
    for (size_t i = 0; i < n; ++i)
        for (size_t k = 0; k < ops[i]->nin; ++k)
            if (ops[i]->in[k].id == tid) return true;
    return false;
}

static cJSON *build_document(const pt_op *const *ops, size_t n, dnnl_engine_kind_t ekind,
                             dnnl_fpmath_mode_t fpmath, int apply_to_int, const size_t *partition_ids) {
    cJSON *doc = cJSON_CreateObject();
    if (!doc) return NULL;
    char version[32];
    snprintf(version, sizeof version, "%d.%d.%d", DNNL_VERSION_MAJOR, DNNL_VERSION_MINOR, DNNL_VERSION_PATCH);
    int ok = put(doc, "version", cJSON_CreateString(version));
    ok = ok && put(doc, "engine_kind", cJSON_CreateString(engine_kind_str(ekind)));
    ok = ok && put(doc, "fpmath_mode", cJSON_CreateString(pt_fpmath_name(fpmath)));
    ok = ok && put(doc, "fpmath_mode_apply_to_int", cJSON_CreateString(apply_to_int ? "true" : "false"));

    /* One entry per (op, input) pair fed from outside the dumped ops. */
    cJSON *in_ports = cJSON_CreateArray();
    ok = ok && put(doc, "input_ports", in_ports);
    for (size_t i = 0; ok && i < n; ++i)
        for (size_t k = 0; ok && k < ops[i]->nin; ++k)
            if (!produced_inside(ops, n, ops[i]->in[k].id)) ok = put(in_ports, NULL, raw_u64(ops[i]->in[k].id));

    /* Outputs nobody inside consumes, and every input of an End op. */
    cJSON *out_ports = cJSON_CreateArray();
    ok = ok && put(doc, "output_ports", out_ports);
    for (size_t i = 0; ok && i < n; ++i) {
        if (ops[i]->kind == dnnl_graph_op_end) {
            for (size_t k = 0; ok && k < ops[i]->nin; ++k) ok = put(out_ports, NULL, raw_u64(ops[i]->in[k].id));
            continue;
        }
        for (size_t k = 0; ok && k < ops[i]->nout; ++k)
            if (!consumed_inside(ops, n, ops[i]->out[k].id))
                ok = put(out_ports, NULL, raw_u64(ops[i]->out[k].id));
    }

    cJSON *graph = cJSON_CreateArray();
    ok = ok && put(doc, "graph", graph);
    for (size_t i = 0; ok && i < n; ++i) ok = put(graph, NULL, op_json(ops[i], partition_ids ? &partition_ids[i] : NULL));
    if (!ok) {
        cJSON_Delete(doc);
        return NULL;
    }
    return doc;
}

/* ---- emission ------------------------------------------------------------- */

static int emit_indent(FILE *f, int level) {
    for (int i = 0; i < level; ++i)
        if (fputs("  ", f) == EOF) return 0;
    return 1;
}

/* Scalars (strings, raw numbers) are printed by cJSON itself, which takes
 * care of string escaping. */
static int emit_scalar(FILE *f, const cJSON *item) {
    char *text = cJSON_PrintUnformatted(item);
    if (!text) return 0;
    int ok = fputs(text, f) != EOF;
    cJSON_free(text);
    return ok;
}

static int emit_key(FILE *f, const char *key) {
    cJSON *k = cJSON_CreateString(key);
    if (!k) return 0;
    int ok = emit_scalar(f, k);
    cJSON_Delete(k);
    return ok && fputs(": ", f) != EOF;
}

static int emit(FILE *f, const cJSON *item, int level) {
    bool is_obj = cJSON_IsObject(item), is_arr = cJSON_IsArray(item);
    if (!is_obj && !is_arr) return emit_scalar(f, item);
    const cJSON *child = item->child;
    if (!child) return fputs(is_obj ? "{}" : "[]", f) != EOF;
    if (fputs(is_obj ? "{\n" : "[\n", f) == EOF) return 0;
    for (; child; child = child->next) {
        if (!emit_indent(f, level + 1)) return 0;
        if (is_obj && !emit_key(f, child->string ? child->string : "")) return 0;
        if (!emit(f, child, level + 1)) return 0;
        if (fputs(child->next ? ",\n" : "\n", f) == EOF) return 0;
    }
    return emit_indent(f, level) && fputs(is_obj ? "}" : "]", f) != EOF;
}

pt_status pt_json_dump_ops(const char *path, const pt_op *const *ops, size_t n,
                           dnnl_engine_kind_t ekind, dnnl_fpmath_mode_t fpmath, int apply_to_int,
                           const size_t *partition_ids) {
    if (!path || (n && !ops)) return pt_err(dnnl_invalid_arguments, "json dump: no path or no ops");
    for (size_t i = 0; i < n; ++i)
        if (!ops[i]) return pt_err(dnnl_invalid_arguments, "json dump: op %zu is NULL", i);
    cJSON *doc = build_document(ops, n, ekind, fpmath, apply_to_int, partition_ids);
    if (!doc) return pt_err(dnnl_out_of_memory, "json dump: cannot build the document for %s", path);
    FILE *f = fopen(path, "w");
    if (!f) {
        cJSON_Delete(doc);
        return pt_err(dnnl_runtime_error, "json dump: cannot open %s for writing", path);
    }
    int ok = emit(f, doc, 0) && fputs("\n", f) != EOF;
    cJSON_Delete(doc);
    if (fclose(f) != 0) ok = 0;
    if (!ok) return pt_err(dnnl_runtime_error, "json dump: write to %s failed", path);
    printf("onednn_graph_verbose,info,serialize graph to a json file %s\n", path);
    fflush(stdout);
    return dnnl_success;
}
