/* The fused-kernel family -> lowering table (see fused_lowering.h). */
#include "compile/fused_lowering.h"

#include "compile/lower_fused.h"
#include "partition/pattern_sdpa.h"
#include "partition/pattern_sdpa_bwd.h"

/* Adapters for the SDPA lowerings, which do not read roles yet. */
#define OPS_ONLY(fn)                                                                                   \
    static pt_status fn##_lower(const pt_op *const *ops, const int *roles, size_t nops, const pt_lt *in, \
                                size_t nin, const pt_lt *out, size_t nout, pt_fused *fused) {          \
        (void)roles;                                                                                   \
        return fn(ops, nops, in, nin, out, nout, fused);                                               \
    }
OPS_ONLY(pt_prepare_sdpa_fwd)
OPS_ONLY(pt_prepare_sdpa_bwd)

static const pt_lower_fn lowerings[PT_FUSED_COUNT] = {
    [PT_FUSED_NONE] = NULL,
    [PT_FUSED_SDPA_FWD] = pt_prepare_sdpa_fwd_lower,
    [PT_FUSED_SDPA_BWD] = pt_prepare_sdpa_bwd_lower,
    [PT_FUSED_GATED_MLP] = pt_lower_gated_mlp,
    [PT_FUSED_COMPUTE_POST_OPS] = pt_lower_compute_post_ops,
    [PT_FUSED_CHAIN_POST_OPS] = pt_lower_chain_post_ops,
};

pt_lower_fn pt_fused_lowering(pt_fused_family family) {
    if ((int)family < 0 || family >= PT_FUSED_COUNT) return NULL;
    return lowerings[family];
}
