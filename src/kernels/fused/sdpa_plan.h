/* The fused SDPA forward kernel's plan: what the lowering
 * (compile/lower_sdpa.c) decodes from a matched partition at compile time and
 * the kernel (sdpa_run.c) executes on the GEMM microkernels.  Every
 * tensor the kernel touches is a strided view addressed in the iteration
 * space [batch dims of O..., row, column]; every op between the ports and the
 * arithmetic core (dequantization, casts, the quantization round trip of P,
 * dropout, the output quantization) is a per-element transform. */
#ifndef PARTITA_KERNELS_FUSED_SDPA_PLAN_H
#define PARTITA_KERNELS_FUSED_SDPA_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/gemm/gemm.h"
#include "kernels/kernel.h"

#define SD_MAX_BATCH DNNL_MAX_NDIMS
#define SD_MAX_STEPS 32
#define SD_MAX_VIEWS 80
#define SD_MAX_DTS 8    /* types an operand is rounded through */
#define SD_MAX_XFORMS 12 /* transforms of P or of O */
#define SD_MAX_KONST 8  /* attribute lists (static scales / zero points) */

/* A tensor read or written by the kernel: a port, or a list the plan owns
 * (static quantization scales / zero points).  The element of iteration
 * coordinates (b..., i, j) lives at Σ (b_k / bg_k)·bs_k + (i / rg)·rs +
 * (j / cg)·cs; the divisors are 1 except for grouped quantization
 * parameters, and strides are 0 where the view broadcasts. */
typedef struct {
    bool is_out; /* output port rather than input port */
    int port;    /* -1: `konst` */
    const void *konst;
    dnnl_data_type_t dt;
    int64_t bs[SD_MAX_BATCH];
    int64_t rs, cs;
    bool grouped;
    int64_t bg[SD_MAX_BATCH], rg, cg;
} sd_view;

typedef enum { SD_MUL, SD_DIV, SD_ADD, SD_SELECT, SD_CAUSAL, SD_TANH } sd_kind;

/* One op (or the causal-mask block) of the score chain. */
typedef struct {
    sd_kind kind;
    dnnl_data_type_t dt;   /* declared output type: the value is rounded to it */
    int a;                 /* MUL/DIV/ADD: operand; SELECT: condition; CAUSAL: fill */
    int b;                 /* SELECT: the other value */
    bool keep_true;        /* SELECT/CAUSAL: the running value is kept where the condition holds */
    bool lhs_col, rhs_col; /* CAUSAL: GreaterEqual sides index columns (else rows) */
    int add, sub;          /* CAUSAL bottom-right: scalar views of s_kv / s_q, -1 when absent */
} sd_step;

/* Q, K or V as the MatMul sees it: a stored tensor, optionally dequantized
 * (Dequantize / DynamicDequantize: (x - zp)·scale), then rounded through
 * the declared types on its way (dequantize output, TypeCasts). */
typedef struct {
    int src;      /* view of the stored tensor */
    int sc, zp;   /* views of scales / zero points; sc < 0: not dequantized, zp < 0: none */
    dnnl_data_type_t dts[SD_MAX_DTS];
    int ndts;
} sd_operand;

/* A per-element transform of the probabilities P on their way to the second
 * MatMul, or of the result O on its way to the output port. */
typedef enum { SD_X_ROUND, SD_X_QUANT, SD_X_DEQUANT, SD_X_DROPOUT } sd_xkind;

typedef struct {
    sd_xkind kind;
    dnnl_data_type_t dt; /* result type (ROUND / QUANT / DEQUANT) */
    float scale, inv;    /* per-tensor scale and 1/scale (f32, as the reference computes it) */
    float zp;
    bool has_zp;
} sd_xform;

/* K or V handed to the kernel already packed (sdpa_packed_layout.h): the
 * port's buffer holds one item of panels per K / V head.  The head of a
 * work item follows from the view's batch offset into the port's dense
 * tensor: index idx_d = (off / dstride[d]) % dims[d] of each dim, item =
 * Σ idx_d · istride[d] (istride 0 for the two dims the panels take). */
typedef struct {
    bool on;
    size_t layout;                /* opaque layout id */
    const pt_gemm_ukernel *uk;    /* the microkernel the panels are for */
    int ndims;
    int64_t dims[SD_MAX_BATCH], dstride[SD_MAX_BATCH], istride[SD_MAX_BATCH];
    size_t item_bytes;
} sd_packed;

typedef struct {
    int nb; /* batch dims of O */
    int64_t bdims[SD_MAX_BATCH];
    int64_t nbatch, sq, skv, dqk, dv;
    sd_view views[SD_MAX_VIEWS];
    int nviews;
    sd_operand q, k, v;
    int vo, vstats; /* output and stats views; vstats -1 when absent */
    dnnl_data_type_t s_dt; /* first MatMul output */
    sd_step steps[SD_MAX_STEPS];
    int nsteps;
    sd_xform px[SD_MAX_XFORMS]; /* SoftMax output ... second MatMul input */
    int npx;
    sd_xform ox[SD_MAX_XFORMS]; /* second MatMul output ... output port (stored to the port type) */
    int nox;
    /* Dropout of P: seed / offset / probability views, mask output (-1 when absent). */
    bool dropout;
    int vseed, voffset, vprob, vmask;
    bool inf_as_zero;
    bool one_pass;    /* P's transforms are roundings / Dropout only: online softmax in one pass
                         (else P is quantized: two passes, max and sum first) */
    void *konst[SD_MAX_KONST];
    int nkonst;
    int gdim;         /* batch dim of GQA / MQA heads sharing K / V (stacked in one item), -1 */
    int seg;          /* heads stacked in one work item */
    int bq, bk;       /* query rows per head / keys per block */
    sd_packed kpk, vpk; /* K / V given packed ahead */
    bool kv_cache;      /* scratch holds one whole K / V head per thread (small heads) */
    bool keep_scores;   /* two passes: scratch keeps the item's scores of every key */
    int nthr;
    size_t thr_bytes; /* scratch per thread */
} sd_plan;

/* sdpa_run.c: chooses block sizes and the per-thread scratch layout. */
void pt_sdpa_fwd_plan_blocks(sd_plan *p, int nthr);

/* sdpa_run.c: whether K (or V with is_v) may be read from panels packed
 * ahead under math mode `mode`: a plain float tensor the panels take as it
 * is (no dequantization, no rounding the panels do not make), read by no
 * other view, in items that take the panel path (not decode).  Then *uk,
 * *dt and *round say how it is packed, and *n_stride / *k_stride are the
 * view's strides along the panels' rows and K. */
bool pt_sdpa_fwd_packable(const sd_plan *p, bool is_v, dnnl_fpmath_mode_t mode, const pt_gemm_ukernel **uk,
                          dnnl_data_type_t *dt, dnnl_fpmath_mode_t *round, int64_t *n_stride, int64_t *k_stride);

/* sdpa_run.c: pt_fused.release (frees the plan and its attribute lists). */
void pt_sdpa_fwd_release(pt_fused *f);

/* sdpa_run.c: pt_fused.run of the SDPA forward kernel. */
pt_status pt_sdpa_fwd_run(const pt_fused *f, const pt_tview *in, size_t nin, const pt_tview *out, size_t nout,
                          void *scratch, const pt_exec_ctx *ctx);

#endif
