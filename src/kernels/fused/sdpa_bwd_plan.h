/* The fused SDPA / GQA backward kernel's plan: what the lowering
 * (compile/lower_sdpa_bwd.c) decodes from a matched partition at compile
 * time and the kernel (sdpa_bwd.c) executes. */
#ifndef PARTITA_KERNELS_FUSED_SDPA_BWD_PLAN_H
#define PARTITA_KERNELS_FUSED_SDPA_BWD_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/kernel.h"

#define SB_MAX_BATCH (DNNL_MAX_NDIMS - 2)
#define SB_MAX_STEPS 8
#define SB_MAX_VIEWS 40
/* Query rows per block and keys per tile: multiples of every microkernel's
 * MR (12, 6, 4) and NR (32, 16), so tiles start on panel strips. */
#define SB_BQ 96
#define SB_BK 96

/* A tensor read or written by the kernel: port, data type, batch strides
 * against the batch dims of S (0 where broadcast) and two index strides
 * whose meaning depends on the tensor (row / column of the tile, or
 * sequence index / head-size index of a matrix operand). */
typedef struct {
    bool is_out;
    int port;
    dnnl_data_type_t dt;
    int64_t bs[SB_MAX_BATCH];
    int64_t rs, cs;
} sb_view;

typedef enum { SB_MUL, SB_DIV, SB_ADD, SB_SELECT, SB_CAUSAL } sb_kind;

/* One op (or the causal-mask block) of ScaleAndMasks. */
typedef struct {
    sb_kind kind;
    dnnl_data_type_t dt; /* declared output type */
    int a;               /* MUL/DIV/ADD: factor or mask; SELECT: condition; CAUSAL: fill */
    int b;               /* SELECT: the other value */
    bool keep_true;      /* SELECT/CAUSAL: the running value is kept where the condition holds */
    bool lhs_col, rhs_col; /* CAUSAL: GreaterEqual inputs index columns (else rows) */
    int add, sub;        /* CAUSAL bottom-right: one-element views of s_kv / s_q, -1 when absent */
} sb_step;

typedef struct {
    bool on;
    int seed, offset, prob; /* one-element views */
    dnnl_data_type_t dt;    /* declared output type */
} sb_drop;

/* dK or dV: written straight to a port, or summed over batch axes first. */
typedef struct {
    int view;                /* direct: [S batch.., seq, head size]; reduced: kept batch dims only */
    dnnl_data_type_t mm_dt;  /* declared MatMul output type */
    bool reduce;
    int64_t nkept, nred;     /* kept / reduced batch combinations */
    int64_t *heads;          /* reduce: heads[kept * nred + red] = head index, red in row-major order */
} sb_grad;

typedef struct {
    int nb;
    int64_t bdims[SB_MAX_BATCH];
    int64_t nbatch, sq, skv, dqk, dv;
    sb_view views[SB_MAX_VIEWS];
    int nviews;
    /* Operands: Q (i, d), K (j, d), V (j, e), dO for the products (i, e),
     * O and dO for the O ⊙ dO Multiply (i, e), stats (i, ·). */
    int vq, vk, vv, vdo, vo_mul, vdo_mul, vstats;
    dnnl_data_type_t q_dt, k_dt, v_dt, do_dt; /* declared MatMul operand types */
    dnnl_data_type_t s_dt;                    /* first MatMul output */
    sb_step steps[SB_MAX_STEPS];
    int nsteps;
    dnnl_data_type_t sub_dt, p_dt; /* Subtract(S2, stats), Exp */
    sb_drop drop_p, drop_dp;
    dnnl_data_type_t pc_dt;                 /* dV MatMul input 0 (after the optional cast) */
    dnnl_data_type_t dp_dt, od_dt, dc_dt;   /* dP MatMul, O ⊙ dO, ReduceSum */
    dnnl_data_type_t sd_dt, ds0_dt, ds_dt;  /* dP − Dc, dS0, scaled dS */
    dnnl_data_type_t dsc_dt;                /* dQ / dK MatMul input 0 */
    int vscale;                             /* dS factor */
    bool scale_div;
    int vdm;                                /* dM = dS0 (End), -1 when absent */
    int vdq;
    sb_grad gk, gv;
    int bq, bk, nthr;
    /* Work items: nbatch x nsplit, item (b, s) owns keys [s * chunk, (s + 1)
     * * chunk) of head b; nsplit > 1 when there are too few heads to keep
     * every thread busy, and then dQ goes through per-item partial sums. */
    int64_t nsplit, chunk;
    /* Keys per pass over the query blocks (a multiple of bk, at most chunk):
     * their K / V panels and dK / dV accumulators stay in L2. */
    int64_t kspan;
    size_t thr_bytes, gk_off, gv_off, dq_off;
} sb_plan;

/* sdpa_bwd.c: block sizes, threads, the key split and the scratch layout
 * (per-thread buffers, then the dQ partial sums, then the GQA per-head
 * products); returns the scratch bytes. */
size_t pt_sdpa_bwd_plan_blocks(sb_plan *p, int nthr);

/* sdpa_bwd.c: frees a plan (NULL allowed). */
void pt_sdpa_bwd_free_plan(sb_plan *p);

/* sdpa_bwd.c: pt_fused.run and pt_fused.release of the backward kernel. */
pt_status pt_sdpa_bwd_run(const pt_fused *f, const pt_tview *in, size_t nin, const pt_tview *out, size_t nout,
                          void *scratch, const pt_exec_ctx *ctx);
void pt_sdpa_bwd_release(pt_fused *f);

#endif
