/* The forward formulas of the unary element-wise ops (docs/ops.md), shared by the
 * reference kernel (ref_eltwise.c) and the fused chain programs
 * (kernels/fused/postops.c), so fused results stay bit-identical to the
 * op-by-op path. */
#ifndef PARTITA_KERNELS_REF_ELTWISE_MATH_H
#define PARTITA_KERNELS_REF_ELTWISE_MATH_H

#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "oneapi/dnnl/dnnl_graph_types.h"

/* exp(88.72283172607421875) is the largest argument before expf overflows. */
#define PT_EXP_OVF 88.72283172607421875f
#define PT_GELU_TANH_C 0.79788458347320556640625f /* sqrt(2/pi) */
#define PT_SQRT1_2 0.70710678118654752440f

typedef struct {
    int kind; /* dnnl_graph_op_kind_t */
    float alpha, beta, lo, hi;
    bool use_dst, gelu_tanh;
} pt_eltwise_params;

/* Filled from an op's attributes at compile time by pt_eltwise_params_of
 * (compile/ref_decode.h). */
static inline float pt_sigmoidf(float s) { return -s >= PT_EXP_OVF ? 0.f : 1.f / (1.f + expf(-s)); }
static inline float pt_soft_plus_logf(float u) { return u < PT_EXP_OVF ? log1pf(expf(u)) : u; }

/* dst = op(src) for the forward unary kinds; other kinds pass s through. */
static inline float pt_eltwise_fwd(const pt_eltwise_params *p, float s) {
    switch (p->kind) {
        case dnnl_graph_op_abs: return s > 0.f ? s : -s;
        case dnnl_graph_op_clamp: {
            float t = s > p->lo ? s : p->lo; /* this order: NaN -> min */
            return t < p->hi ? t : p->hi;
        }
        case dnnl_graph_op_elu: return s > 0.f ? s : p->alpha * expm1f(s);
        case dnnl_graph_op_exp: return expf(s);
        case dnnl_graph_op_gelu:
            if (p->gelu_tanh)
                return 0.5f * s * (1.f + tanhf(PT_GELU_TANH_C * s * (1.f + 0.044715f * s * s)));
            return 0.5f * s * (1.f + erff(s * PT_SQRT1_2));
        case dnnl_graph_op_hard_sigmoid: {
            float v = p->alpha * s + p->beta;
            return v <= 0.f ? 0.f : (v >= 1.f ? 1.f : v);
        }
        case dnnl_graph_op_hard_swish: {
            float v = (1.f / 6.f) * s + 0.5f;
            v = v <= 0.f ? 0.f : (v >= 1.f ? 1.f : v);
            return s * v;
        }
        case dnnl_graph_op_leaky_relu: return s > 0.f ? s : p->alpha * s;
        case dnnl_graph_op_log: return logf(s);
        case dnnl_graph_op_mish: return s * tanhf(pt_soft_plus_logf(s));
        case dnnl_graph_op_pow: return powf(s, p->beta);
        case dnnl_graph_op_reciprocal: return 1.f / s;
        case dnnl_graph_op_relu: return s > 0.f ? s : (isnan(s) ? s : 0.f);
        case dnnl_graph_op_round: return nearbyintf(s);
        case dnnl_graph_op_sigmoid: return pt_sigmoidf(s);
        case dnnl_graph_op_softplus: return pt_soft_plus_logf(p->beta * s) / p->beta;
        case dnnl_graph_op_sqrt: return sqrtf(s);
        case dnnl_graph_op_square: return s * s;
        case dnnl_graph_op_tanh: return tanhf(s);
        default: return s;
    }
}

#endif
