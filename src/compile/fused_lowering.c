/* The fused-kernel family -> lowering table (see fused_lowering.h). */
#include "compile/fused_lowering.h"

#include "compile/lower_sdpa.h"
#include "kernels/fused/chain_post_ops.h"
#include "kernels/fused/compute_post_ops.h"
#include "partition/pattern_mlp.h"

/* Adapters for the lowerings that do not read roles yet. */
#define OPS_ONLY(fn)                                                                                   \
    static pt_status fn##_lower(const pt_op *const *ops, const int *roles, size_t nops, const pt_lt *in, \
                                size_t nin, const pt_lt *out, size_t nout, pt_fused *fused) {          \
        (void)roles;                                                                                   \
        return fn(ops, nops, in, nin, out, nout, fused);                                               \
    }
OPS_ONLY(pt_prepare_gated_mlp)
OPS_ONLY(pt_prepare_compute_post_ops)
OPS_ONLY(pt_prepare_chain_post_ops)

static const pt_lower_fn lowerings[PT_FUSED_COUNT] = {
    [PT_FUSED_NONE] = NULL,
    [PT_FUSED_SDPA_FWD] = pt_lower_sdpa_fwd,
    [PT_FUSED_SDPA_BWD] = pt_lower_sdpa_bwd,
    [PT_FUSED_GATED_MLP] = pt_prepare_gated_mlp_lower,
    [PT_FUSED_COMPUTE_POST_OPS] = pt_prepare_compute_post_ops_lower,
    [PT_FUSED_CHAIN_POST_OPS] = pt_prepare_chain_post_ops_lower,
};

pt_lower_fn pt_fused_lowering(pt_fused_family family) {
    if ((int)family < 0 || family >= PT_FUSED_COUNT) return NULL;
    return lowerings[family];
}
