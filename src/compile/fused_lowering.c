/* The fused-kernel family -> lowering table (see fused_lowering.h). */
#include "compile/fused_lowering.h"

#include "compile/lower_fused.h"
#include "compile/lower_sdpa.h"

static const pt_lower_fn lowerings[PT_FUSED_COUNT] = {
    [PT_FUSED_NONE] = NULL,
    [PT_FUSED_SDPA_FWD] = pt_lower_sdpa_fwd,
    [PT_FUSED_SDPA_BWD] = pt_lower_sdpa_bwd,
    [PT_FUSED_GATED_MLP] = pt_lower_gated_mlp,
    [PT_FUSED_COMPUTE_POST_OPS] = pt_lower_compute_post_ops,
    [PT_FUSED_CHAIN_POST_OPS] = pt_lower_chain_post_ops,
};

pt_lower_fn pt_fused_lowering(pt_fused_family family) {
    if ((int)family < 0 || family >= PT_FUSED_COUNT) return NULL;
    return lowerings[family];
}
