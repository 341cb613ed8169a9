/* A lone Reorder between a plain weight and the packed-weight layout a
 * MatMul, Convolution or fused SDPA (K / V) reported for a constant input
 * given as `any` (seed 004, option 2): the plain side's dims and strides
 * are matched to the layout's. */
#include "compile/lower_fused.h"
#include "kernels/fused/packed_reorder.h"
#include "kernels/gemm/gemm.h"

static bool registered(const size_t *layouts) { return layouts && layouts[0] != 0 && layouts[0] != SIZE_MAX; }

bool pt_packed_reorder_wanted(const pt_op *op, const pt_lower_ctx *lc) {
    return op->kind == dnnl_graph_op_reorder && lc && (registered(lc->in_layout) || registered(lc->out_layout));
}

pt_status pt_lower_packed_reorder(const pt_op *const *ops, size_t nops, const pt_lt *in, size_t nin, const pt_lt *out,
                                  size_t nout, pt_fused *fused, const pt_lower_ctx *lc) {
    if (nops != 1 || nin != 1 || nout != 1 || !pt_packed_reorder_wanted(ops[0], lc))
        return pt_err(dnnl_unimplemented, "Reorder: not a packed-weight reorder");
    const bool to_packed = registered(lc->out_layout);
    if (to_packed && registered(lc->in_layout))
        return pt_err(dnnl_unimplemented, "Reorder#%zu: both sides in opaque layouts", ops[0]->id);
    const size_t layout = to_packed ? lc->out_layout[0] : lc->in_layout[0];
    const pt_lt *plain = to_packed ? &in[0] : &out[0];
    pt_status st = pt_packed_reorder_make_conv(layout, plain, to_packed, fused);
    if (st != dnnl_unimplemented) return st; /* a Convolution layout */
    st = pt_packed_reorder_make_sdpa(layout, plain, to_packed, fused);
    if (st != dnnl_unimplemented) return st; /* an SDPA K / V layout */
    pt_gemm_packed_layout l;
    if (!pt_gemm_packed_b_layout(layout, &l))
        return pt_err(dnnl_invalid_arguments, "Reorder#%zu: opaque layout %zu is not a packed-weight layout",
                      ops[0]->id, layout);
    const int r = plain->ndims;
    for (int d = 0; d + 2 < r; ++d)
        if (plain->dims[d] != 1)
            return pt_err(dnnl_invalid_arguments, "Reorder#%zu: a packed weight has no batch dims", ops[0]->id);
    const int dk = r == 1 ? 0 : l.k_last ? r - 1 : r - 2, dn = r == 1 ? -1 : l.k_last ? r - 2 : r - 1;
    if (r < 1 || plain->dims[dk] != l.K || (dn >= 0 ? plain->dims[dn] : 1) != l.N)
        return pt_err(dnnl_invalid_arguments, "Reorder#%zu: plain weight shape does not match packed layout %zu",
                      ops[0]->id, layout);
    return pt_packed_reorder_make(layout, plain->data_type, dn >= 0 ? plain->layout.strides[dn] : 0,
                                  plain->layout.strides[dk], to_packed, fused);
}
