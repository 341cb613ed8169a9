/* Fast lowerings of single-op partitions (kernels/mem/mem.h): one row per
 * op kind, kind -> lowering function, in lower_single_op.c.  A lowering
 * returns dnnl_unimplemented for layouts and types its kernel does not take;
 * the partition then runs its reference kernel, as does a partition whose
 * fast kernel is switched off (the tests' oracle, compiled_set_fused). */
#ifndef PARTITA_COMPILE_LOWER_SINGLE_OP_H
#define PARTITA_COMPILE_LOWER_SINGLE_OP_H

#include <stddef.h>

#include "compile/fused_lowering.h"

/* The lowering of a single-op partition of `kind` (NULL when none). */
pt_lower_fn pt_single_op_lowering(int kind);

#endif
