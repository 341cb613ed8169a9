/* Case -> library objects; see graph_build.h. */
#include "graph_build.h"
#include "strutil.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/status.h"


const char *pc_status_str(dnnl_status_t st) { return pt_status_name(st); }

/* Sets one attribute with the setter its id range implies, converting the
 * stored numbers when the file used a neighbouring numeric type. */
static dnnl_status_t set_attr(dnnl_graph_op_t dop, const pc_op *op, const pc_attr *a, char *err, size_t cap) {
    pc_attr_type want = pc_attr_type_of(a->id);
    dnnl_graph_op_attr_t name = (dnnl_graph_op_attr_t)a->id;
    dnnl_status_t st = dnnl_success;
    const char *aname = pc_attr_name(a->id);
    bool numeric = a->type != PC_AT_STR && a->type != PC_AT_NONE;
    switch (want) {
        case PC_AT_F32:
        case PC_AT_F32S: {
            if (!numeric || a->n == 0) goto mismatch;
            float *v = malloc(a->n * sizeof *v);
            if (!v) return dnnl_out_of_memory;
            for (size_t k = 0; k < a->n; ++k) v[k] = a->f ? a->f[k] : (float)a->i[k];
            st = dnnl_graph_op_set_attr_f32(dop, name, v, want == PC_AT_F32 ? 1 : a->n);
            free(v);
            break;
        }
        case PC_AT_S64:
        case PC_AT_S64S: {
            if (!numeric) goto mismatch;
            if (want == PC_AT_S64 && a->n == 0) goto mismatch;
            int64_t *v = malloc((a->n ? a->n : 1) * sizeof *v);
            if (!v) return dnnl_out_of_memory;
            for (size_t k = 0; k < a->n; ++k) v[k] = a->i ? a->i[k] : (int64_t)a->f[k];
            st = dnnl_graph_op_set_attr_s64(dop, name, v, a->n);
            free(v);
            break;
        }
        case PC_AT_BOOL: {
            if (!numeric || a->n == 0) goto mismatch;
            uint8_t b = (a->i ? a->i[0] : (int64_t)a->f[0]) != 0;
            st = dnnl_graph_op_set_attr_bool(dop, name, &b, 1);
            break;
        }
        case PC_AT_STR:
            if (a->type != PC_AT_STR || !a->s) goto mismatch;
            st = dnnl_graph_op_set_attr_str(dop, name, a->s, strlen(a->s));
            break;
        default: goto mismatch;
    }
    if (st != dnnl_success)
        pc_set_err(err, cap, "op %zu (%s): setting attribute '%s' failed: %s", op->id, pc_kind_name(op->kind), aname,
                pc_status_str(st));
    return st;
mismatch:
    pc_set_err(err, cap, "op %zu (%s): attribute '%s' has type %s, expected %s", op->id, pc_kind_name(op->kind), aname,
            pc_attr_type_str(a->type), pc_attr_type_str(want));
    return dnnl_invalid_arguments;
}

dnnl_status_t pc_build_op(const pc_op *op, const pc_lt *in, const pc_lt *out, dnnl_graph_op_t *res, char *err,
                          size_t cap) {
    if (!in) in = op->in;
    if (!out) out = op->out;
    dnnl_graph_op_t dop = NULL;
    dnnl_status_t st = dnnl_graph_op_create(&dop, op->id, (dnnl_graph_op_kind_t)op->kind, op->name);
    if (st != dnnl_success) {
        pc_set_err(err, cap, "op %zu (%s): dnnl_graph_op_create failed: %s", op->id, pc_kind_name(op->kind),
                pc_status_str(st));
        return st;
    }
    for (size_t k = 0; k < op->nin && st == dnnl_success; ++k) {
        st = dnnl_graph_op_add_input(dop, &in[k]);
        if (st != dnnl_success)
            pc_set_err(err, cap, "op %zu (%s): adding input %zu failed: %s", op->id, pc_kind_name(op->kind), k,
                    pc_status_str(st));
    }
    for (size_t k = 0; k < op->nout && st == dnnl_success; ++k) {
        st = dnnl_graph_op_add_output(dop, &out[k]);
        if (st != dnnl_success)
            pc_set_err(err, cap, "op %zu (%s): adding output %zu failed: %s", op->id, pc_kind_name(op->kind), k,
                    pc_status_str(st));
    }
    for (size_t k = 0; k < op->nattr && st == dnnl_success; ++k) st = set_attr(dop, op, &op->attrs[k], err, cap);
    if (st != dnnl_success) {
        dnnl_graph_op_destroy(dop);
        return st;
    }
    *res = dop;
    return dnnl_success;
}

dnnl_status_t pc_build_graph(const pc_case *c, const size_t *order, dnnl_engine_kind_t ek, dnnl_graph_graph_t *g,
                             char *err, size_t cap) {
    dnnl_graph_graph_t graph = NULL;
    dnnl_status_t st = dnnl_graph_graph_create_with_fpmath_mode(&graph, ek, c->fpmath);
    if (st != dnnl_success) {
        pc_set_err(err, cap, "graph creation failed: %s", pc_status_str(st));
        return st;
    }
    st = dnnl_graph_graph_set_fpmath_mode(graph, c->fpmath, c->apply_to_int);
    if (st != dnnl_success) {
        pc_set_err(err, cap, "setting the graph math mode failed: %s", pc_status_str(st));
        dnnl_graph_graph_destroy(graph);
        return st;
    }
    for (size_t k = 0; k < c->nops; ++k) {
        const pc_op *op = &c->ops[order ? order[k] : k];
        dnnl_graph_op_t dop = NULL;
        st = pc_build_op(op, NULL, NULL, &dop, err, cap);
        if (st != dnnl_success) break;
        st = dnnl_graph_add_op(graph, dop);
        dnnl_graph_op_destroy(dop);
        if (st != dnnl_success) {
            pc_set_err(err, cap, "adding op %zu (%s) to the graph failed: %s", op->id, pc_kind_name(op->kind),
                    pc_status_str(st));
            break;
        }
    }
    if (st == dnnl_success) {
        st = dnnl_graph_graph_finalize(graph);
        if (st != dnnl_success) pc_set_err(err, cap, "graph finalization failed: %s", pc_status_str(st));
    }
    if (st != dnnl_success) {
        dnnl_graph_graph_destroy(graph);
        return st;
    }
    *g = graph;
    return dnnl_success;
}
