/* Op kind -> reference kernel: the stem column of the op-kind table
 * (ops/op_table.def) names pt_ref_<stem>; NONE (End, Wildcard) has none. */
#include "kernels/kernel.h"
#include "kernels/ref/ref_kernels.h"

/* The kinds that never run (a decoder table built from the same column
 * wants pt_decode_NONE likewise). */
#define pt_ref_NONE NULL

static const pt_kernel_fn ref_table[] = {
#define PT_OP(kind, name, fam, schema, stem) pt_ref_##stem,
#include "ops/op_table.def"
};

pt_kernel_fn pt_ref_kernel(int kind) {
    if (kind < 0 || kind >= (int)(sizeof ref_table / sizeof ref_table[0])) return NULL;
    return ref_table[kind];
}
