/* How close the fused SDPA forward kernel must come to the op-by-op
 * reference (docs/numerics.md, "SDPA forward").  The kernel accumulates both
 * products in f32 on the GEMM microkernels, in key blocks, and normalises the
 * softmax at the end, so it differs from the reference's order by rounding
 * only.  The rule, per element with reference value a:
 *
 *  - float outputs: |a - b| <= eps · (1 + |a|).  O is a convex combination of
 *    V's rows, so 1 + |a| bounds the scale of the terms summed.  eps is the
 *    largest of
 *      1e-5 for f32 accumulation in another order (a few hundred f32 ulps:
 *           sums of up to a few hundred terms, exp within 2 ulp),
 *      2 ulps of the narrowest float type a value passes through (bf16 /
 *           f16 inputs, casts, outputs): a value next to a rounding boundary
 *           may land on the reference's neighbour, and P rounded before
 *           normalisation rounds another number than the reference does,
 *      the math mode's operand rounding (tf32 / f16: 2^-10 relative on
 *           every score and weight, bf16 / any: 2^-7), which the reference
 *           does not apply;
 *  - integer outputs (quantized O): at most one quantization step;
 *  - besides, where a quantized value (P or O) sits on a rounding boundary,
 *    the kernel's slightly different sum may move it one step: such
 *    elements (outside the float tolerance, within `step_abs` of the
 *    reference, or one integer step away) may be at most 2 % of a tensor
 *    (plus 2). */
#ifndef PARTITA_TESTS_TEST_SDPA_TOL_H
#define PARTITA_TESTS_TEST_SDPA_TOL_H

#include <math.h>

#include "ir/dtype.h"
#include "test_graph_util.h"

/* eps for a run: the narrowest float type among the graph's tensors and the
 * partition's math mode. */
static inline double sdpa_eps(const tg_graph *g, dnnl_fpmath_mode_t mode) {
    double eps = 1e-5;
    for (int t = 0; t < g->nt; ++t) {
        if (g->lt[t].data_type == dnnl_bf16 && eps < 2.0 / 128) eps = 2.0 / 128;
        if (g->lt[t].data_type == dnnl_f16 && eps < 2.0 / 1024) eps = 2.0 / 1024;
    }
    const double m = mode == dnnl_fpmath_mode_bf16 || mode == dnnl_fpmath_mode_any   ? 4.0 / 128
                     : mode == dnnl_fpmath_mode_f16 || mode == dnnl_fpmath_mode_tf32 ? 4.0 / 1024
                                                                                     : 0;
    return eps > m ? eps : m;
}

static double sdpa_tol_eps = 1e-5, sdpa_tol_step = 0;

static double sdpa_tol_fn(double a, const tg_lt *lt) {
    if (pt_dt_is_int(lt->data_type)) return 0;
    return sdpa_tol_eps * (1.0 + fabs(a));
}

static double sdpa_step_fn(double a, const tg_lt *lt) {
    if (pt_dt_is_int(lt->data_type)) return 1.0;
    return sdpa_tol_eps * (1.0 + fabs(a)) + sdpa_tol_step;
}

/* Compares one result tensor under the rule above; `step_abs` is the size
 * of one quantization step of P (or of O) in output units, 0 when nothing is
 * quantized on the way. */
static inline tg_diff sdpa_check(const char *name, const tg_lt *lt, const void *ref, const void *got, double eps,
                                 double step_abs) {
    sdpa_tol_eps = eps, sdpa_tol_step = step_abs;
    tg_diff d = tg_diff_values(lt, ref, got, sdpa_tol_fn);
    tg_diff far = tg_diff_values(lt, ref, got, sdpa_step_fn);
    const bool quantized = pt_dt_is_int(lt->data_type) || step_abs > 0;
    const int64_t allowed = quantized ? d.total / 50 + 2 : 0;
    if (far.bad || d.bad > allowed)
        fprintf(stderr, "  %s: tensor %zu: %lld of %lld outside eps %g (allowed %lld), %lld beyond one step, worst %g\n",
                name, lt->id, (long long)d.bad, (long long)d.total, eps, (long long)allowed, (long long)far.bad,
                d.worst);
    CHECK_EQ_INT(far.bad, 0);
    CHECK(d.bad <= allowed);
    return d;
}

#endif
