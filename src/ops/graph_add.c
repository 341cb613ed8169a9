/* See graph_add.h. */
#include "ops/graph_add.h"

#include "ops/op_schema.h"

pt_status pt_graph_add_op(pt_graph *g, const pt_op *op) {
    PT_CHECK(pt_graph_check_new_op(g, op->id, pt_op_kind_name(op->kind)));
    if (!pt_schema_of(op->kind))
        return pt_err(dnnl_invalid_graph_op, "add_op: op #%zu has unknown kind %d", op->id, (int)op->kind);
    pt_op *copy = pt_op_clone(op);
    if (!copy) return dnnl_out_of_memory;
    pt_status st = pt_schema_verify(copy);
    if (st == dnnl_success) st = pt_graph_append_op(g, copy);
    if (st != dnnl_success) pt_op_free(copy);
    return st;
}
