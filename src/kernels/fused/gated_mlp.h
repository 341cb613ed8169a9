/* Fused gated MLP:
 *   out = (act(src·W_gate) ⊙ (src·W_up)) · W_down
 * with any BINARY combine, an optional TypeCast before the down projection
 * and weights that may be DynamicDequantize'd from int4/int8.
 *
 * compile/lower_gated_mlp.c reads the matched ops (by role) into a
 * pt_gm_plan and hands it to pt_gated_mlp_finish, which plans the three
 * products on the GEMM engine (kernels/gemm/gemm.h); the kernel
 * (gated_mlp.c) only runs the plan.  The element-wise ops run through
 * reference kernels bound at lowering time, on whole rows of the engine's
 * finished tiles. */
#ifndef PARTITA_KERNELS_FUSED_GATED_MLP_H
#define PARTITA_KERNELS_FUSED_GATED_MLP_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/kernel.h"

#define PT_GM_MAX_BATCH DNNL_MAX_NDIMS

/* A tensor read or written by the kernel, addressed in the iteration space
 * [output batch dims..., row, column]. */
typedef struct {
    int port;
    dnnl_data_type_t dt;
    int64_t bs[PT_GM_MAX_BATCH]; /* 0 where broadcast */
    int64_t rs, cs;
} pt_gm_view;

/* A MatMul weight seen as [k, n]; for a DynamicDequantize'd weight also its
 * scales / zero points, addressed per group. */
typedef struct {
    pt_gm_view w;
    dnnl_data_type_t op_dt; /* type the MatMul reads (DynamicDequantize output or w.dt) */
    bool quant;
    pt_gm_view sc, zp;      /* zp.port -1: no zero points */
    int64_t gk, gn;         /* group sizes along k and n */
    int64_t bg[PT_GM_MAX_BATCH];
    bool constant;          /* data, scales and zero points all have property constant */
    /* How the weight port was given (lower_ctx.h): 0 plain, SIZE_MAX `any`
     * (constant: the engine's packed layout may be chosen), else a packed
     * layout id. */
    size_t given_layout;
} pt_gm_weight;

typedef enum { PT_GM_ACT_NONE, PT_GM_ACT_UNARY, PT_GM_ACT_SWISH } pt_gm_act;

/* One combine input: MatMul(src, W) → Act?. */
typedef struct {
    pt_gm_weight W;
    bool has_bias;
    pt_gm_view bias;
    dnnl_data_type_t mm_dt; /* MatMul output */
    pt_gm_act act;
    pt_bound_kernel act_k;  /* the UNARY op, or the swish Sigmoid */
    pt_bound_kernel mul_k;  /* swish Multiply */
    int g_pos;              /* swish: Multiply input that reads the MatMul output */
    dnnl_data_type_t act_dt, mul_dt;
} pt_gm_branch;

typedef struct {
    int nb;
    int64_t bdims[PT_GM_MAX_BATCH];
    int64_t nbatch, M, K, N, O;
    pt_gm_view src; /* rows m, columns k */
    pt_gm_branch br[2];
    pt_bound_kernel comb_k;
    int comb_kind;          /* the combine's op kind (Multiply runs inline) */
    dnnl_data_type_t comb_dt;
    bool has_tc;
    dnnl_data_type_t tc_dt;
    dnnl_data_type_t h_dt; /* type the down MatMul reads */
    pt_gm_weight Wd;
    bool has_dbias;
    pt_gm_view dbias;
    dnnl_data_type_t dmm_dt; /* down MatMul output */
    pt_gm_view out;          /* output port */
    dnnl_fpmath_mode_t mode; /* the partition's math mode */
    bool apply_to_int;
    /* Set by pt_gated_mlp_finish: the engine plans and scratch layout. */
    struct pt_gm_engine *eng;
} pt_gm_plan;

/* Plans the products of `p` on the GEMM engine and sizes the scratch; on
 * success takes `p` over (heap: released with the kernel, bound kernels
 * included) and fills `fused`.  dnnl_unimplemented (p left to the caller)
 * for what the engine does not take. */
pt_status pt_gated_mlp_finish(pt_gm_plan *p, pt_fused *fused);
/* Releases a plan (the lowering's own when pt_gated_mlp_finish declined it). */
void pt_gated_mlp_plan_free(pt_gm_plan *p);

#endif
