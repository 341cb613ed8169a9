/* Fused MatMul / Convolution / ConvTranspose partitions with prologue and
 * epilogue element-wise chains (the compute rows of docs/fusion.md).
 *
 * One lowering (compile/lower_compute_post_ops.c) serves every compute row
 * (fp_matmul_post_ops, x8x8x_matmul_post_ops and the other quantized /
 * bf16-typecast MatMul rows, fp_conv_post_ops, x8x8x_conv_post_ops,
 * fp_convtranspose_post_ops, float_bmb, ...):
 *   - exactly one anchor (the MatMul, Convolution or ConvTranspose matched
 *     as PT_CHAIN_ANCHOR);
 *   - the ops that produce the anchor's src and weights inside the partition
 *     (Dequantize, DynamicDequantize, weight Quantize -> Dequantize,
 *     TypeCast, the bmb binary pre-chain, ...) become a prologue program per
 *     operand, applied while tiles of the operand are packed;
 *   - every other op forms the epilogue program (BiasAdd, BatchNormInference,
 *     POST*, post-sum Add(., Dequantize(ext)), Select, TypeCast, SmoothQuant
 *     Multiply/Divide, final Quantize), applied to each output tile while it
 *     is in cache;
 * any other shape makes the lowering return dnnl_unimplemented (op-by-op
 * fallback).  See kernels/fused/postops.h for what the programs accept.
 *
 * Arithmetic is the reference kernels' (ref_matmul.c, ref_conv.c) bit for
 * bit: operands are converted to f32 (and rounded per the fpmath mode when
 * their declared type is f32), products accumulate in double in the
 * reference order (MatMul: k ascending, then + bias; Convolution: bias, then
 * input channel outer / kernel taps inner; ConvTranspose: bias, then taps
 * outer / input channel inner; taps outside the input are skipped) and the
 * sum is rounded to f32.  Intermediates follow the benchmark reference
 * (docs/numerics.md): values of integer / f8 types (Quantize
 * outputs) are rounded to them, bf16/f16 intermediates - including a
 * TypeCast(bf16) MatMul operand and a bf16 MatMul output that a TypeCast
 * turns back into f32 - stay f32, and only the partition output is stored
 * in its type; this is what oneDNN's fused kernels compute too.  For f32
 * graphs that is exactly the op-by-op result.  Neither the anchor's output
 * nor any other intermediate exists at full size: the kernel packs one row
 * block of the src and one column block of the weights per work item and
 * keeps a tile of accumulators. */
#ifndef PARTITA_KERNELS_FUSED_COMPUTE_POST_OPS_H
#define PARTITA_KERNELS_FUSED_COMPUTE_POST_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/fused/postops.h"
#include "kernels/kernel.h"

#define PT_CP_MAXD DNNL_MAX_NDIMS

typedef enum { PT_CP_MATMUL, PT_CP_CONV, PT_CP_DECONV } pt_cp_kind;

/* An anchor input: its prologue program (or plain load) in its own dims. */
typedef struct {
    pt_postops *prog;
    dnnl_data_type_t dt; /* declared type at the anchor input */
    int ndims;
    int64_t dims[PT_CP_MAXD];
} pt_cp_operand;

typedef struct {
    pt_cp_kind kind;
    bool round_floats; /* op-by-op rounding of bf16/f16 intermediates */
    pt_cp_operand a, w;
    pt_postops *epi;
    dnnl_data_type_t anchor_dt;
    int bias_port; /* -1: none */
    /* output port 0: the anchor output's dims, possibly behind leading 1s */
    int out_lead;
    int out_ndims;
    int64_t out_dims[PT_CP_MAXD], out_strides[PT_CP_MAXD];
    dnnl_data_type_t out_dt;
    /* GEMM view */
    int64_t nbatch, P, Q, K;
    int64_t MB, NB; /* multiples of CP_MR / CP_NR */
    int64_t qblocks, mblocks, mchunks, mblocks_per_chunk;
    /* MatMul */
    int ra, rb, nbd;
    bool ta, tb;
    int64_t bdims[PT_CP_MAXD];
    int64_t bias_bs[PT_CP_MAXD], bias_sm, bias_sn; /* bias strides over [batch.., m, n] */
    dnnl_data_type_t bias_dt;
    /* Convolution / ConvTranspose, canonical 5-D [N, C, D, H, W] views */
    int64_t xd[5], yd[5], wd[5];
    int xmap[5], ymap[5], wmap[5]; /* canonical dim -> tensor dim, -1 inserted */
    int64_t S[3], Dl[3], Pb[3];
    int64_t G, Cin_g, T;            /* input channels per group (K / T), taps */
    int64_t win_floats;
    /* scratch layout */
    int nthr;
    size_t off_bound_a, off_bound_w, off_bound_e, off_bias, shared_bytes;
    size_t t_ap, t_mask, t_oob, t_bp, t_box, t_c, t_run, t_tmp, thread_bytes;
    /* Convolutions on the GEMM microkernels (f32 or bf16 kind, chosen per
     * run from the math mode): im2col rows, f32 tile, A and B panels. */
    bool conv_engine_allowed; /* set by the lowering: compile path */
    bool w_constant;          /* every port the weights' program reads is constant */
    int w_port;               /* the first of them (names the cache entry) */
    bool conv_engine;
    int conv_mr, conv_nr;
    size_t w_layout;    /* the weight port holds packed panels in this opaque layout (0: plain) */
    int w_layout_kind;  /* its pt_gemm_kind */
    size_t w_block_bytes; /* one (group, block of output channels) of its panels */
    bool a_direct;      /* input a plain f32 port: im2col reads it directly */
    int a_port;
    int64_t a_es[5];    /* its strides over canonical [N, C, D, H, W] */
    /* Convolution weights a plain f32 port whose k order (tap·cg + c) is
     * one stride w_ks (XIO): B panels packed straight from it (w_ks 0: not so). */
    int w_direct_port;
    int64_t w_os, w_ks; /* element strides over output channels and k */
    size_t t_fa, t_fc, t_fap, t_fbp;
    /* Shared scratch for weights packed once per execution (uncached
     * weights shared by several work items; wpack_bytes 0: none) and two
     * bytes per block (packing state, all finite). */
    size_t off_wpack, wpack_bytes, off_wfinite;
    /* Quantized convolutions on the U8S8 kind: src and weights each one
     * Dequantize of int8 data (u8 / s8 src with a per-tensor scale and zero
     * point; s8 weights with per-tensor or per-output-channel scales and one
     * zero point), all constants of the programs.  The product runs in s32
     * on the raw integers; zero points, scales and bias are applied to the
     * s32 tile, then the epilogue program (requantization included). */
    bool conv_int8;
    int q_a_port, q_w_port;
    dnnl_data_type_t q_a_dt;     /* u8 or s8 */
    int32_t q_a_zp, q_w_zp;
    float q_a_scale;
    const float *q_w_scales;     /* the weights' program constants */
    int64_t q_w_scale_step;      /* scale index step per output channel (0: per tensor) */
    int64_t q_a_es[5], q_w_es[5]; /* strides over the canonical dims */
    size_t t_qsum;               /* per thread: row sums of the packed src */
    /* Its epilogue, when the program is a BiasAdd?, a post-sum?, up to four
     * ReLU / Clamp then at most one per-tensor Quantize, into a channels-last
     * output:
     * applied in the same pass as the scaling, with the program's f32
     * operations (so the same bits). */
    bool q_direct_out;
    int q_badd_port;             /* a leading BiasAdd's bias port, -1: none */
    dnnl_data_type_t q_badd_dt;
    int64_t q_badd_stride;
    int q_sum_port;              /* a post-sum Add(., Dequantize(int8 port)) before the clamps, -1: none */
    dnnl_data_type_t q_sum_dt;
    float q_sum_scale, q_sum_zp;
    int64_t q_sum_es[PT_CP_MAXD]; /* its strides over the output's dims */
    int q_nclamp;
    float q_lo[4], q_hi[4];      /* ReLU: [0, inf) keeping NaN; Clamp: its bounds */
    bool q_relu[4];
    bool q_quant, q_quant_zp;
    float q_inv_scale, q_out_zp;
    bool has_inplace;
    size_t inplace_in, inplace_out;
    /* MatMul on the GEMM engine (matmul_engine.h); NULL: the exact path. */
    struct pt_mme *mme;
} pt_cp_state;

/* Plans blocks, work split and scratch of state `s` (heap, filled by the
 * lowering; taken over and released with the kernel) and fills `fused`.  On
 * failure `s` is released. */
pt_status pt_compute_post_ops_finish(pt_cp_state *s, pt_fused *fused);
void pt_cp_state_free(pt_cp_state *s);

/* Rounds a run of anchor results as the state says, runs the epilogue
 * program on it (bound at `bound_epi`) and stores it into the output at
 * anchor index `aidx` (the run goes along the output's last dim). */
void pt_cp_finish_run(const pt_cp_state *s, const void *bound_epi, void *out_data, float *x, int64_t n,
                      const int64_t *aidx, float *tmp);

/* pt_cp_finish_run over `rows` whole consecutive output rows held in x
 * back to back (rows * the last dim's size elements): `bound_rows` binds
 * the epilogue program with its last two dims merged
 * (pt_postops_flatten_from), `aidx` is the first row's anchor index (0
 * along the last dim).  Only where pt_cp_rows_mergeable holds. */
void pt_cp_finish_rows(const pt_cp_state *s, const void *bound_rows, void *out_data, float *x, int64_t rows,
                       const int64_t *aidx, float *tmp);
/* Whether the output's last two dims are laid out as one (rows back to
 * back) and `rows_prog` is the epilogue with exactly those dims merged. */
bool pt_cp_rows_mergeable(const pt_cp_state *s, const pt_postops *rows_prog);

/* In-place pair (docs/api.md, get_inplace_ports): true when `f` was made by
 * the compute lowering and the partition output may share its buffer with
 * one input: an epilogue operand (typically the post-sum / final Add
 * operand) that has the output's dims, data type and strides, is read only
 * at each element's own position and by no other op of the partition, and
 * does not appear twice among the ports.  The kernel reads that operand for
 * a run of output elements before writing those elements and never touches
 * them again, so the caller may pass the same buffer for both.  The lowering
 * also records the pair in pt_fused (has_inplace, port indices), which
 * compile.c reports. */
bool pt_compute_post_ops_inplace(const pt_fused *f, size_t *input_id, size_t *output_id);

/* Seed 004 option 2 for a Convolution / ConvTranspose planned on the engine
 * (after pt_compute_post_ops_finish): when its weights are one plain float
 * port, given as `any` (given == SIZE_MAX: the packed layout is chosen and
 * registered) or in a packed layout (given: accepted when it is exactly
 * this kernel's), the kernel reads that port as packed panels.  Returns the
 * layout id (0: the port stays plain) and the port in *port. */
size_t pt_cp_conv_weight_layout(pt_cp_state *s, dnnl_fpmath_mode_t mode, size_t given, size_t *port);

#endif
