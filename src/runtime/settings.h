/* Process-wide settings: default math mode, constant tensor cache
 * capacities, graph dump mode.  Read from the environment on first use. */
#ifndef PARTITA_RUNTIME_SETTINGS_H
#define PARTITA_RUNTIME_SETTINGS_H

#include <stddef.h>

#include "oneapi/dnnl/dnnl_graph.h"
#include "ir/status.h"

/* "strict", "bf16", "f16", "any", "tf32" (the environment's spelling). */
const char *pt_fpmath_name(dnnl_fpmath_mode_t mode);

dnnl_fpmath_mode_t pt_default_fpmath(void);
pt_status pt_set_default_fpmath(dnnl_fpmath_mode_t mode);

/* Constant tensor cache capacity in megabytes per engine kind. */
size_t pt_const_cache_capacity_mb(dnnl_engine_kind_t kind);
pt_status pt_set_const_cache_capacity_mb(dnnl_engine_kind_t kind, size_t mb);

unsigned pt_dump_mode(void);
pt_status pt_set_dump_mode(unsigned modes);

#endif
