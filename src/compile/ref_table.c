/* Op kind -> reference kernel and its decoder: the stem column of the
 * op-kind table (ops/op_table.def) names pt_ref_<stem> and pt_decode_<stem>;
 * NONE (End, Wildcard) has neither. */
#include "compile/ref_decode.h"
#include "kernels/kernel.h"
#include "kernels/ref/ref_kernels.h"

#define pt_ref_NONE NULL
#define pt_decode_NONE NULL

static const pt_kernel_fn ref_table[] = {
#define PT_OP(kind, name, fam, schema, stem) pt_ref_##stem,
#include "ops/op_table.def"
};

static const pt_ref_decoder decoder_table[] = {
#define PT_OP(kind, name, fam, schema, stem) pt_decode_##stem,
#include "ops/op_table.def"
};

pt_kernel_fn pt_ref_kernel(int kind) {
    if (kind < 0 || kind >= (int)(sizeof ref_table / sizeof ref_table[0])) return NULL;
    return ref_table[kind];
}

pt_ref_decoder pt_ref_decoder_of(int kind) {
    if (kind < 0 || kind >= (int)(sizeof decoder_table / sizeof decoder_table[0])) return NULL;
    return decoder_table[kind];
}
