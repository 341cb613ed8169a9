/* Reference unary element-wise ops and their backward ops (opset §1.9 and the
 * per-op sections).  Every element is loaded to f32, computed in f32 and
 * stored once in the destination type; any strided layouts. */
#include <math.h>
#include <string.h>

#include "ir/status.h"
#include "kernels/ref/eltwise_math.h"
#include "kernels/ref/ref_common.h"
#include "kernels/ref/ref_kernels.h"
#include "ops/op_schema.h"


#define PT_INV_SQRT_2PI 0.39894228040143267794f

typedef pt_eltwise_params eltwise_params;

static eltwise_params read_params(const pt_op *op) { return pt_eltwise_params_of(op); }
static float sigmoid(float s) { return pt_sigmoidf(s); }
static float soft_plus_log(float u) { return pt_soft_plus_logf(u); }

static bool fwd_supported(int kind) {
    switch (kind) {
        case dnnl_graph_op_abs:
        case dnnl_graph_op_clamp:
        case dnnl_graph_op_elu:
        case dnnl_graph_op_exp:
        case dnnl_graph_op_gelu:
        case dnnl_graph_op_hard_sigmoid:
        case dnnl_graph_op_hard_swish:
        case dnnl_graph_op_leaky_relu:
        case dnnl_graph_op_log:
        case dnnl_graph_op_mish:
        case dnnl_graph_op_pow:
        case dnnl_graph_op_reciprocal:
        case dnnl_graph_op_relu:
        case dnnl_graph_op_round:
        case dnnl_graph_op_sigmoid:
        case dnnl_graph_op_softplus:
        case dnnl_graph_op_sqrt:
        case dnnl_graph_op_square:
        case dnnl_graph_op_tanh: return true;
        default: return false;
    }
}

static bool bwd_supported(int kind) {
    switch (kind) {
        case dnnl_graph_op_abs_backward:
        case dnnl_graph_op_clamp_backward:
        case dnnl_graph_op_elu_backward:
        case dnnl_graph_op_gelu_backward:
        case dnnl_graph_op_hard_sigmoid_backward:
        case dnnl_graph_op_hard_swish_backward:
        case dnnl_graph_op_mish_backward:
        case dnnl_graph_op_relu_backward:
        case dnnl_graph_op_sigmoid_backward:
        case dnnl_graph_op_softplus_backward:
        case dnnl_graph_op_sqrt_backward:
        case dnnl_graph_op_tanh_backward: return true;
        default: return false;
    }
}

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

/* Valid rank and dims, data present when there are elements. */


PT_REF_OP_KERNEL(pt_ref_eltwise) {
    if (!fwd_supported(op->kind))
        return pt_err(dnnl_unimplemented, "eltwise: op kind %s is not a unary op",
                      pt_op_kind_name(op->kind));
    if (nin < 1 || nout < 1)
        return pt_err(dnnl_invalid_arguments, "%s: needs 1 input and 1 output",
                      pt_op_kind_name(op->kind));
    const pt_tview *src = &in[0], *dst = &out[0];
    PT_CHECK(pt_ref_check_view(op, src, "src"));
    PT_CHECK(pt_ref_check_view(op, dst, "dst"));
    if (!pt_ref_same_dims(src, dst))
        return pt_err(dnnl_invalid_arguments, "%s: src and dst shapes differ",
                      pt_op_kind_name(op->kind));
    const eltwise_params p = read_params(op);
    const int r = dst->lt.ndims;
    const int64_t n = pt_tv_nelems(dst);
    if (n == 0) return dnnl_success;
    const int64_t inner = r ? dst->lt.dims[r - 1] : 1, outer = n / inner;
    const int64_t ss = r ? src->lt.layout.strides[r - 1] : 0;
    const int64_t ds = r ? dst->lt.layout.strides[r - 1] : 0;
#pragma omp parallel for schedule(static) num_threads(pt_ref_threads(ctx)) if (n > 4096)
    for (int64_t o = 0; o < outer; ++o) {
        int64_t idx[DNNL_MAX_NDIMS] = {0};
        if (r > 1) pt_unravel(o, r - 1, dst->lt.dims, idx);
        int64_t so = pt_tv_off(src, idx), dof = pt_tv_off(dst, idx);
        for (int64_t i = 0; i < inner; ++i)
            pt_tv_setf(dst, dof + i * ds, pt_eltwise_fwd(&p, pt_tv_getf(src, so + i * ss)));
    }
    return dnnl_success;
}

PT_REF_OP_KERNEL(pt_ref_eltwise_bwd) {
    if (!bwd_supported(op->kind))
        return pt_err(dnnl_unimplemented, "eltwise_bwd: op kind %s is not a unary backward op",
                      pt_op_kind_name(op->kind));
    if (nin < 2 || nout < 1)
        return pt_err(dnnl_invalid_arguments, "%s: needs 2 inputs and 1 output",
                      pt_op_kind_name(op->kind));
    const pt_tview *x = &in[0], *dd = &in[1], *ds = &out[0];
    PT_CHECK(pt_ref_check_view(op, x, "src/dst"));
    PT_CHECK(pt_ref_check_view(op, dd, "diff_dst"));
    PT_CHECK(pt_ref_check_view(op, ds, "diff_src"));
    if (!pt_ref_same_dims(x, ds) || !pt_ref_same_dims(dd, ds))
        return pt_err(dnnl_invalid_arguments, "%s: input and diff_src shapes differ",
                      pt_op_kind_name(op->kind));
    const eltwise_params p = read_params(op);
    const int r = ds->lt.ndims;
    const int64_t n = pt_tv_nelems(ds);
    if (n == 0) return dnnl_success;
    const int64_t inner = r ? ds->lt.dims[r - 1] : 1, outer = n / inner;
    const int64_t xs = r ? x->lt.layout.strides[r - 1] : 0;
    const int64_t dds = r ? dd->lt.layout.strides[r - 1] : 0;
    const int64_t dss = r ? ds->lt.layout.strides[r - 1] : 0;
#pragma omp parallel for schedule(static) num_threads(pt_ref_threads(ctx)) if (n > 4096)
    for (int64_t o = 0; o < outer; ++o) {
        int64_t idx[DNNL_MAX_NDIMS] = {0};
        if (r > 1) pt_unravel(o, r - 1, ds->lt.dims, idx);
        int64_t xo = pt_tv_off(x, idx), ddo = pt_tv_off(dd, idx), dso = pt_tv_off(ds, idx);
        for (int64_t i = 0; i < inner; ++i) {
            float v = eltwise_bwd(&p, pt_tv_getf(x, xo + i * xs), pt_tv_getf(dd, ddo + i * dds));
            pt_tv_setf(ds, dso + i * dss, v);
        }
    }
    return dnnl_success;
}
