/* What a lowering knows about the compilation beyond the partition's ops
 * and ports: the settings that choose kernels. */
#ifndef PARTITA_COMPILE_LOWER_CTX_H
#define PARTITA_COMPILE_LOWER_CTX_H

#include "oneapi/dnnl/dnnl_graph_types.h"

#include <stddef.h>

typedef struct pt_lower_ctx {
    dnnl_fpmath_mode_t fpmath; /* the partition's math mode */
    int apply_to_int;
    /* How each input port was given (NULL: all plain): 0 plain; SIZE_MAX a
     * constant weight given with layout `any`, whose layout a lowering may
     * choose; else a registered opaque layout id (ir/logical_tensor.h) that
     * only a lowering that reads it may accept (seed 004, option 2).  A
     * lowering that chooses or accepts one reports it with
     * pt_fused_add_packed. */
    const size_t *in_layout;
    const size_t *out_layout; /* outputs: 0 plain, else a registered opaque layout id */
} pt_lower_ctx;

#endif
