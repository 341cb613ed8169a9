/* The op-kind registry: op_table.def expanded into per-kind arrays.  The
 * table is in enum order, so row i describes kind i and every lookup is an
 * index. */
#include "ops/op_kinds.h"

#include <string.h>

#include "oneapi/dnnl/dnnl_graph_types.h"

/* Compile-time shape of the table: one enumerator per row (a kind listed
 * twice is a redeclaration), as many rows as kinds, row i is kind i. */
enum {
#define PT_OP(kind, name, fam, schema, stem) pt_row_##kind,
#include "ops/op_table.def"
    pt_op_table_rows
};
_Static_assert((int)pt_op_table_rows == (int)dnnl_graph_op_last_symbol,
               "op_table.def needs exactly one row per dnnl_graph_op_kind_t");
#define PT_OP(kind, name, fam, schema, stem) \
    _Static_assert(pt_row_##kind == (int)kind, "op_table.def: row " #kind " is out of enum order");
#include "ops/op_table.def"

static const char *const kind_names[] = {
#define PT_OP(kind, name, fam, schema, stem) name,
#include "ops/op_table.def"
};

static const pt_op_family_t kind_family[] = {
#define PT_OP(kind, name, fam, schema, stem) PT_OP_FAM_##fam,
#include "ops/op_table.def"
};

/* The stem column as text: NONE marks the kinds without a reference kernel
 * (compile/ref_table.c maps the same column to the kernels). */
static const char *const kind_ref_stem[] = {
#define PT_OP(kind, name, fam, schema, stem) #stem,
#include "ops/op_table.def"
};

static bool known(int kind) { return kind >= 0 && kind < dnnl_graph_op_last_symbol; }

const char *pt_op_kind_name(int kind) { return known(kind) ? kind_names[kind] : "Unknown"; }

int pt_op_kind_from_name(const char *name) {
    if (!name) return -1;
    for (int k = 0; k < dnnl_graph_op_last_symbol; ++k)
        if (strcmp(kind_names[k], name) == 0) return k;
    /* Legacy serialised spelling of BiasAddBackward (docs/ops.md, op names). */
    if (strcmp(name, "BiasAddBackprop") == 0) return dnnl_graph_op_bias_add_backward;
    return -1;
}

pt_op_family_t pt_op_family(int kind) { return known(kind) ? kind_family[kind] : PT_OP_FAM_NONE; }

bool pt_op_is_unary_eltwise(int kind) { return pt_op_family(kind) == PT_OP_FAM_UNARY; }

bool pt_op_is_binary_eltwise(int kind) { return pt_op_family(kind) == PT_OP_FAM_BINARY; }

bool pt_op_kind_has_ref(int kind) {
    return known(kind) && strcmp(kind_ref_stem[kind], "NONE") != 0;
}
