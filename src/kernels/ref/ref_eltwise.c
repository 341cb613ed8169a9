/* Reference unary element-wise ops and their backward ops (docs/ops.md).
 * Every element is loaded to f32, computed in f32 and stored once in the
 * destination type; any strided layouts. */
#include <math.h>
#include <string.h>

#include "ir/status.h"
#include "kernels/ref/eltwise_math.h"
#include "kernels/ref/ref_common.h"
#include "kernels/ref/ref_kernels.h"

#define PT_INV_SQRT_2PI 0.39894228040143267794f

typedef pt_eltwise_params eltwise_params;

static float sigmoid(float s) { return pt_sigmoidf(s); }
static float soft_plus_log(float u) { return pt_soft_plus_logf(u); }

/* `x` is input 0: the forward dst when the op has use_dst = true, else src. */
static float eltwise_bwd(const eltwise_params *p, float x, float dd) {
    switch (p->kind) {
        case dnnl_graph_op_abs_backward: return x > 0.f ? dd : (x < 0.f ? -dd : 0.f);
        case dnnl_graph_op_clamp_backward: return (p->lo < x && x < p->hi) ? dd : 0.f;
        case dnnl_graph_op_elu_backward:
            if (x > 0.f) return dd;
            return p->use_dst ? dd * (x + p->alpha) : dd * p->alpha * expf(x);
        case dnnl_graph_op_gelu_backward:
            if (p->gelu_tanh) {
                float g = PT_GELU_TANH_C * x * (1.f + 0.044715f * x * x);
                float dg = PT_GELU_TANH_C * (1.f + 3.f * 0.044715f * x * x);
                float v = tanhf(g);
                return dd * 0.5f * (1.f + v) * (1.f + x * (1.f - v) * dg);
            }
            return dd * (0.5f + 0.5f * erff(x * PT_SQRT1_2) +
                         x * expf(-0.5f * x * x) * PT_INV_SQRT_2PI);
        case dnnl_graph_op_hard_sigmoid_backward: {
            float v = p->alpha * x + p->beta;
            return (0.f < v && v < 1.f) ? dd * p->alpha : 0.f;
        }
        case dnnl_graph_op_hard_swish_backward: {
            float v = x / 6.f + 0.5f, w = x / 3.f + 0.5f;
            if (v <= 0.f) return 0.f;
            if (v >= 1.f) return dd;
            return dd * w;
        }
        case dnnl_graph_op_mish_backward: {
            float t = tanhf(soft_plus_log(x));
            return dd * (t + x * sigmoid(x) * (1.f - t * t));
        }
        case dnnl_graph_op_relu_backward: return x > 0.f ? dd : 0.f;
        case dnnl_graph_op_sigmoid_backward: {
            float v = p->use_dst ? x : sigmoid(x);
            return dd * v * (1.f - v);
        }
        case dnnl_graph_op_softplus_backward: return dd * sigmoid(p->beta * x);
        case dnnl_graph_op_sqrt_backward:
            return p->use_dst ? dd / (2.f * x) : dd / (2.f * sqrtf(x));
        case dnnl_graph_op_tanh_backward: {
            float t = p->use_dst ? x : tanhf(x);
            return dd * (1.f - t) * (1.f + t);
        }
        default: return dd;
    }
}

/* The shared loop of the forward and backward kernels: dst = f(x[, dd]) over
 * rows of the innermost dim. */
static pt_status eltwise_run(const pt_ref_eltwise_params *ep, const pt_tview *x, const pt_tview *dd,
                             const pt_tview *dst, const pt_exec_ctx *ctx) {
    const char *name = ep->name;
    PT_CHECK(pt_ref_check_view(name, x, dd ? "src/dst" : "src"));
    if (dd) PT_CHECK(pt_ref_check_view(name, dd, "diff_dst"));
    PT_CHECK(pt_ref_check_view(name, dst, dd ? "diff_src" : "dst"));
    if (!pt_ref_same_dims(x, dst) || (dd && !pt_ref_same_dims(dd, dst)))
        return pt_err(dnnl_invalid_arguments, dd ? "%s: input and diff_src shapes differ" : "%s: src and dst shapes differ",
                      name);
    const eltwise_params *p = &ep->p;
    const int r = dst->lt.ndims;
    const int64_t n = pt_tv_nelems(dst);
    if (n == 0) return dnnl_success;
    const int64_t inner = r ? dst->lt.dims[r - 1] : 1, outer = n / inner;
    const int64_t xs = r ? x->lt.layout.strides[r - 1] : 0;
    const int64_t dds = (dd && r) ? dd->lt.layout.strides[r - 1] : 0;
    const int64_t ds = r ? dst->lt.layout.strides[r - 1] : 0;
#pragma omp parallel for schedule(static) num_threads(pt_ref_threads(ctx)) if (n > 4096)
    for (int64_t o = 0; o < outer; ++o) {
        int64_t idx[DNNL_MAX_NDIMS] = {0};
        if (r > 1) pt_unravel(o, r - 1, dst->lt.dims, idx);
        int64_t xo = pt_tv_off(x, idx), ddo = dd ? pt_tv_off(dd, idx) : 0, dof = pt_tv_off(dst, idx);
        for (int64_t i = 0; i < inner; ++i) {
            float xv = pt_tv_getf(x, xo + i * xs);
            float v = dd ? eltwise_bwd(p, xv, pt_tv_getf(dd, ddo + i * dds)) : pt_eltwise_fwd(p, xv);
            pt_tv_setf(dst, dof + i * ds, v);
        }
    }
    return dnnl_success;
}

PT_REF_DECL(pt_ref_eltwise) {
    const pt_ref_eltwise_params *ep = params;
    if (nin < 1 || nout < 1) return pt_err(dnnl_invalid_arguments, "%s: needs 1 input and 1 output", ep->name);
    return eltwise_run(ep, &in[0], NULL, &out[0], ctx);
}

PT_REF_DECL(pt_ref_eltwise_bwd) {
    const pt_ref_eltwise_params *ep = params;
    if (nin < 2 || nout < 1) return pt_err(dnnl_invalid_arguments, "%s: needs 2 inputs and 1 output", ep->name);
    return eltwise_run(ep, &in[0], &in[1], &out[0], ctx);
}
