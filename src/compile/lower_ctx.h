/* What a lowering knows about the compilation beyond the partition's ops
 * and ports: the settings that choose kernels. */
#ifndef PARTITA_COMPILE_LOWER_CTX_H
#define PARTITA_COMPILE_LOWER_CTX_H

#include "oneapi/dnnl/dnnl_graph_types.h"

typedef struct pt_lower_ctx {
    dnnl_fpmath_mode_t fpmath; /* the partition's math mode */
    int apply_to_int;
} pt_lower_ctx;

#endif
