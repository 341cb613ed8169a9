/* Output comparison; see compare.h. */
#include "compare.h"

#include <float.h>
#include <math.h>
#include <stdio.h>

#include "dtconv.h"

static bool transcendental(int kind) {
    switch (kind) {
        case dnnl_graph_op_gelu: case dnnl_graph_op_gelu_backward:
        case dnnl_graph_op_elu: case dnnl_graph_op_elu_backward:
        case dnnl_graph_op_tanh: case dnnl_graph_op_tanh_backward:
        case dnnl_graph_op_mish: case dnnl_graph_op_mish_backward:
        case dnnl_graph_op_log: case dnnl_graph_op_exp:
        case dnnl_graph_op_sigmoid: case dnnl_graph_op_sigmoid_backward:
        case dnnl_graph_op_softplus: case dnnl_graph_op_softplus_backward:
        case dnnl_graph_op_pow: return true;
        default: return false;
    }
}

float pc_cmp_threshold(const pc_op *producer, size_t out_index, dnnl_data_type_t dt) {
    float eps = pc_dt_eps(dt);
    bool f32 = dt == dnnl_f32;
    int kind = producer->kind;
    if (pc_kind_is(kind, PC_K_WEIGHTED)) return 0.f; /* integer-valued test data: exact sums */
    switch (kind) {
        case dnnl_graph_op_max_pool:
        case dnnl_graph_op_max_pool_backward:
        case dnnl_graph_op_static_reshape:
        case dnnl_graph_op_static_transpose:
        case dnnl_graph_op_concat:
        case dnnl_graph_op_gen_index: return 0.f;
        case dnnl_graph_op_softmax:
        case dnnl_graph_op_log_softmax:
            if (out_index == 1) return 4e-5f;
            return f32 ? 10.f * eps : 0.f;
        case dnnl_graph_op_softmax_backward:
        case dnnl_graph_op_log_softmax_backward: return f32 ? 10.f * eps : eps;
        case dnnl_graph_op_avg_pool:
        case dnnl_graph_op_avg_pool_backward: return 10.f * eps;
        case dnnl_graph_op_reduce_l1:
        case dnnl_graph_op_reduce_l2: return 5.f * eps;
        case dnnl_graph_op_interpolate:
        case dnnl_graph_op_interpolate_backward: return f32 ? 10.f * eps : eps;
        case dnnl_graph_op_prelu: return eps;
        case dnnl_graph_op_prelu_backward: return f32 ? 10.f * eps : eps;
        default: break;
    }
    if (pc_kind_is(kind, PC_K_REORDER_DRV)) return 0.f;
    if (pc_kind_is(kind, PC_K_REDUCTION)) return eps;
    if (pc_kind_is(kind, PC_K_NORM)) return f32 ? 5e-6f : eps;
    if (pc_kind_is(kind, PC_K_BINARY_DRV)) return eps;
    if (pc_kind_is(kind, PC_K_ELTWISE_DRV)) {
        if (!f32) return eps;
        return transcendental(kind) ? 4e-5f : 4e-6f;
    }
    return 10.f * eps;
}

/* Fraction of zeros above which a result is not trusted. */
static double trust_limit(const pc_op *producer) {
    if (producer->kind == dnnl_graph_op_matmul) return 0.9;
    if (producer->kind == dnnl_graph_op_softmax || producer->kind == dnnl_graph_op_log_softmax) return 0.99;
    if (pc_kind_is(producer->kind, PC_K_REORDER_DRV) || producer->kind == dnnl_graph_op_static_reshape ||
        producer->kind == dnnl_graph_op_static_transpose || producer->kind == dnnl_graph_op_gen_index ||
        producer->kind == dnnl_graph_op_greater_equal || producer->kind == dnnl_graph_op_dropout)
        return 1.0;
    switch (producer->kind) {
        /* Clipping activations zero about half of symmetric test data;
         * GELU does too once its input is a MatMul sum (large integers). */
        case dnnl_graph_op_gelu:
        case dnnl_graph_op_relu: case dnnl_graph_op_relu_backward:
        case dnnl_graph_op_clamp: case dnnl_graph_op_clamp_backward:
        case dnnl_graph_op_hard_sigmoid: case dnnl_graph_op_hard_sigmoid_backward:
        case dnnl_graph_op_hard_swish: case dnnl_graph_op_hard_swish_backward: return 0.6;
        default: return 0.3;
    }
}

static bool eltwise_at_or_before(const pc_part_view *pv, const pc_op *producer) {
    for (size_t k = 0; k < pv->n; ++k) {
        const pc_op *op = &pv->c->ops[pv->ops[k]];
        if (pc_kind_is(op->kind, PC_K_ELTWISE_DRV)) return true;
        if (op == producer) break;
    }
    return false;
}

/* A partition with a SoftMax and a MatMul: fused attention, whose forward
 * kernel accumulates in f32 in another order than the ops one by one
 * (docs/numerics.md, "SDPA forward"). */
static bool is_attention(const pc_part_view *pv) {
    bool softmax = false, matmul = false;
    for (size_t k = 0; k < pv->n; ++k) {
        dnnl_graph_op_kind_t kind = pv->c->ops[pv->ops[k]].kind;
        softmax = softmax || kind == dnnl_graph_op_softmax;
        matmul = matmul || kind == dnnl_graph_op_matmul;
    }
    return softmax && matmul;
}

static bool is_int_type(dnnl_data_type_t dt) {
    return dt == dnnl_s8 || dt == dnnl_u8 || dt == dnnl_s32 || dt == dnnl_s4 || dt == dnnl_u4 || dt == dnnl_s64;
}

pc_cmp_result pc_compare(const pc_part_view *pv, const pc_op *producer, size_t out_index, const pc_lt *lt,
                         const float *ref, const float *got, int64_t n, char *msg, size_t cap) {
    if (n <= 0) return PC_CMP_OK;
    dnnl_data_type_t dt = lt->data_type;
    float trh = pc_cmp_threshold(producer, out_index, dt);
    float eps = pc_dt_eps(dt);
    bool elt = eltwise_at_or_before(pv, producer);
    bool divide = producer->kind == dnnl_graph_op_divide;
    bool small_float = dt == dnnl_f8_e4m3 || dt == dnnl_f8_e5m2;
    /* Attention: |diff| <= e·(1 + |exp|), e = 1e-5 for f32, 2 ulps of a
     * narrow float; one step for integers. */
    const float attn = !is_attention(pv) ? -1.f : is_int_type(dt) ? 1.f : dt == dnnl_f32 ? 1e-5f : 2.f * eps;
    int64_t failed = 0, zeros = 0, first_bad = -1;
    double worst = 0.0;
    for (int64_t i = 0; i < n; ++i) {
        float exp = pc_round_to(dt, ref[i]);
        float g = got[i];
        if (exp == 0.f) ++zeros;
        if (g == exp) continue;
        if (isnan(exp) && isnan(g)) continue;
        if (isinf(exp) && isinf(g) && signbit(exp) == signbit(g)) continue;
        float diff = fabsf(exp - g);
        float aexp = fabsf(exp);
        float rel = aexp > FLT_MIN ? diff / aexp : diff;
        bool ok = false;
        if (aexp <= 1e-5f && diff < FLT_EPSILON) ok = true;
        else if ((aexp > 1e-5f ? rel : diff) <= trh) ok = true;
        else if (divide && diff < eps) ok = true;
        else if (attn >= 0.f && diff <= (is_int_type(dt) ? attn : attn * (1.f + aexp))) ok = true;
        else if (elt && (diff <= fmaxf(eps, 2e-5f) || rel <= fmaxf(eps, 8e-6f))) ok = true;
        else if (is_int_type(dt) && diff <= 1.f && fabsf(fabsf(ref[i] - truncf(ref[i])) - 0.5f) < 1e-6f) ok = true;
        else if (small_float && (g == pc_round_to(dt, ref[i] * (1.f + 1e-6f)) || g == pc_round_to(dt, ref[i] * (1.f - 1e-6f))))
            ok = true;
        if (!ok) {
            if (first_bad < 0) first_bad = i;
            ++failed;
            double e = isfinite(diff) ? (aexp > 1e-5f ? rel : diff) : INFINITY;
            if (e > worst || isnan(e)) worst = e;
        }
    }
    if (failed) {
        if (failed <= n / 1024) {
            /* Norm fallback: relative L2 error over finite points. */
            double num = 0.0, den = 0.0;
            for (int64_t i = 0; i < n; ++i) {
                float exp = pc_round_to(dt, ref[i]);
                if (!isfinite(exp) || !isfinite(got[i])) continue;
                double d = (double)exp - (double)got[i];
                num += d * d;
                den += (double)exp * exp;
            }
            double l2 = den > 0 ? sqrt(num / den) : sqrt(num);
            if (l2 <= 3e-3) return PC_CMP_OK;
            snprintf(msg, cap, "tensor %zu: %lld of %lld points differ and the L2 error %.3g exceeds 3e-3",
                     lt->id, (long long)failed, (long long)n, l2);
            return PC_CMP_FAILED;
        }
        snprintf(msg, cap,
                 "tensor %zu (%s output %zu): %lld of %lld points differ (first at %lld: expected %g, got %g; "
                 "worst error %.3g, threshold %.3g)",
                 lt->id, pc_kind_name(producer->kind), out_index, (long long)failed, (long long)n,
                 (long long)first_bad, (double)pc_round_to(dt, ref[first_bad]), (double)got[first_bad], worst,
                 (double)trh);
        return PC_CMP_FAILED;
    }
    if ((double)zeros > trust_limit(producer) * (double)n) {
        snprintf(msg, cap, "tensor %zu: %lld of %lld reference values are zero", lt->id, (long long)zeros,
                 (long long)n);
        return PC_CMP_MISTRUSTED;
    }
    return PC_CMP_OK;
}
