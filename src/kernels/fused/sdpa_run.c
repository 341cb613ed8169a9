/* Fused SDPA forward, run time (docs/fusion.md, docs/numerics.md): flash
 * attention on the GEMM microkernels.
 *
 * A work item is (batch..., K/V head, block of query rows).  For GQA / MQA
 * (a batch dim over which K and V do not move) the item stacks the query
 * rows of every head of the group ("segments"), so each K / V block is
 * loaded and packed once per group.  Per item: Q is packed once as A panels;
 * for each key block K is packed as B panels, S = Q·Kᵀ runs on the
 * microkernel, the score chain (scale, masks, causal mask, soft-cap) is
 * applied row by row, the softmax is updated online (running max and sum,
 * accumulator rows rescaled when the max grows), P is packed as A panels, V
 * as B panels, and O += P·V runs on the microkernel.  Key blocks that an
 * implicit causal mask removes entirely are skipped.  Everything accumulates
 * in f32 (docs/numerics.md: not bit-identical to the op-by-op path).
 *
 * One-pass f32 items over float K / V as stored take the transposed path
 * instead (run_item_panels): Sᵀ = K·Qᵀ with K as A panels and 32 (AVX-512)
 * or 16 (AVX2) queries as one B panel, so the exponentiated [key][query]
 * tile is the B panel of Oᵀ += Vᵀ·Pᵀ as it stands (V as A panels): P is
 * never packed, and the softmax runs lane-wise down the rows
 * (sdpa_panel.h).  It needs a vector row of those column operations; on
 * the portable row the row path is faster.
 *
 * When P is quantized before the second MatMul (Quantize → Dequantize) the
 * item takes two passes: pass 1 finds each row's max and sum over all key
 * blocks, pass 2 recomputes the scores and forms P = exp(s - max) / sum as
 * SoftMax does before quantizing it.  Items of at most SD_DECODE_ROWS query
 * rows (decode) skip the panels: K and V blocks are dequantized into f32
 * rows once and S, O come from dot products and axpys of the row table
 * (sdpa_rows.h), operands as their declared types give them.  Scratch is
 * O(threads × block × head size), planned at compile time; nothing is
 * allocated at run time. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ir/dtype.h"
#include "ir/status.h"
#include "kernels/fused/sdpa_common.h"
#include "kernels/fused/sdpa_panel.h"
#include "kernels/fused/sdpa_plan.h"
#include "kernels/fused/sdpa_rows.h"
#include "kernels/gemm/gemm.h"
#include "kernels/ref/philox.h"
#include "kernels/vec/vec.h"

#define SD_ROWS 192      /* query rows per item (all segments together): K / V packing amortised */
#define SD_ROWS_WIDE 96  /* the same for head sizes above 128 (the item's panels stay in L2) */
#define SD_BK 128        /* keys per block */
/* Up to this many keys (head sizes up to 128, no causal mask whose blocks
 * could be skipped) all keys form one block, with SD_ROWS_WHOLE query rows
 * per item: BERT-large (384 keys, head size 64) about 7 % less time in f32,
 * 15 % in int8 than blocks of 128 keys and 192 rows. */
#define SD_BK_WHOLE 384
#define SD_ROWS_WHOLE 96
#define SD_MAX_SEG 16    /* heads stacked in one item */
/* Below this many multiply-adds (tens of microseconds on one core) the
 * kernel runs on the caller and the helpers of runtime/share.h, not on an
 * OpenMP team: a team's region waits up to a scheduler tick for a core
 * another process holds.  (The limit for a team was 16M while the machine
 * was heavily shared; with the cores free, two threads take 8-9M MAC
 * problems, GPT-2 inference and the compressed-K/V cases, from 0.33-0.38
 * ms to 0.18-0.25 ms.)  Below SD_SHARE_MACS the caller runs alone. */
#define SD_SERIAL_MACS 2000000
#define SD_SHARE_MACS 200000
#define SD_DECODE_ROWS 8 /* items with at most this many query rows skip the panels (decode) */
/* Keys per block of decode items whose K and V both stream through the row
 * table's block operations: long runs of each stream between switches keep
 * the hardware prefetchers on them (128-key blocks alternate K and V every
 * 8 KiB of int4 data). */
#define SD_DECODE_BK 4096
/* K / V heads of at most this many elements (S_kv × (D + D_v)) are packed
 * whole into the thread's scratch once and reused by every item and pass
 * of that head (bounded like the blocks: 512 KiB of f32 panels). */
#define SD_HEAD_ELEMS (1024 * 128)
/* Two passes (quantized P) over such heads keep the item's scores of pass
 * 1 for pass 2 when they take at most this many f32 (768 KiB). */
#define SD_KEPT_SCORES (192 * 1024)
/* Transposed f32 path (run_item_panels): keys per block at most (a multiple
 * of every f32 MR), and the most steps of a score chain it takes. */
#define SD_TBK 384
#define SD_TSTEPS 8
#define SD_TNR 32 /* widest f32 NR */

/* ---- run-time arguments ------------------------------------------------------ */

typedef struct {
    const pt_gemm_ukernel *uk;
    pt_gemm_kind kind;
    dnnl_fpmath_mode_t round; /* F32 kind: the math mode's rounding of f32 operands */
} sd_product;

typedef struct {
    const sd_plan *p;
    const void *base[SD_MAX_VIEWS];
    float add[SD_MAX_STEPS], sub[SD_MAX_STEPS]; /* causal offsets, read once */
    bool causal_int[SD_MAX_STEPS];              /* offsets are small integers: index arithmetic */
    int64_t causal_delta[SD_MAX_STEPS];
    int skip_step; /* causal step whose fully masked blocks may be skipped, -1 */
    int64_t seed, offset;                       /* dropout */
    pt_dropout_consts dc;
    sd_product qk, pv;
    bool k_direct, v_direct;  /* packed straight from the stored tensor */
    bool k_cache, v_cache;    /* whole heads packed into the thread's scratch (cached_head) */
    int fold_step;            /* a first step scaling by a power of two, applied to Q instead; -1 */
    float fold_factor;
    pt_gemm_operand kop, vop; /* their operand descriptions */
    bool px_pack_rounds;      /* P's only transform is the bf16 rounding the BF16 panels make */
    dnnl_data_type_t tp;      /* the type P has when it reaches the second product */
    bool tpanel;              /* transposed f32 path (run_item_panels) */
    bool tv_split;            /* its V panels end in two strips of at most 8 rows (tv_strip) */
    const pt_sdpa_panel_ops *pan;
    const pt_vec_ops *vec;
} sd_args;

static inline int64_t view_off(const sd_view *v, int64_t boff, int64_t i, int64_t j) {
    if (!v->grouped) return boff + i * v->rs + j * v->cs;
    return boff + (i / v->rg) * v->rs + (j / v->cg) * v->cs;
}

/* Element (i, j) of an operand: loaded, dequantized, rounded through its types. */
static inline float operand_at(const sd_args *A, const int64_t *boff, const sd_operand *o, int64_t i, int64_t j) {
    const sd_plan *p = A->p;
    const sd_view *sv = &p->views[o->src];
    float x = pt_elem_load(A->base[o->src], sv->dt, view_off(sv, boff[o->src], i, j));
    if (o->sc >= 0) {
        const sd_view *cv = &p->views[o->sc];
        float s = pt_elem_load(A->base[o->sc], cv->dt, view_off(cv, boff[o->sc], i, j));
        if (o->zp >= 0) {
            const sd_view *zv = &p->views[o->zp];
            x = (x - pt_elem_load(A->base[o->zp], zv->dt, view_off(zv, boff[o->zp], i, j))) * s;
        } else {
            x = x * s;
        }
    }
    for (int t = 0; t < o->ndts; ++t) x = pt_elem_round(o->dts[t], x);
    return x;
}

/* Rounds x[0..n) to a declared type. */
static void round_row(dnnl_data_type_t dt, float *x, int n) {
    if (dt == dnnl_f32) return;
    if (dt == dnnl_bf16) pt_sdpa_rows()->round_bf16(x, n);
    else if (dt == dnnl_f16) pt_sdpa_rows()->round_f16(x, n);
    else if (dt == dnnl_s8) pt_sdpa_rows()->round_int(x, n, -128.f, 127.f);
    else if (dt == dnnl_u8) pt_sdpa_rows()->round_int(x, n, 0.f, 255.f);
    else
        for (int c = 0; c < n; ++c) x[c] = pt_elem_round(dt, x[c]);
}

/* Columns over which a scale / zero-point view stays the same within a row
 * (the whole row when constant, 1 when it changes every column). */
static int64_t param_run(const sd_view *v, int64_t ncols) {
    if (v->cs == 0) return ncols;
    return v->grouped ? v->cg : 1;
}

/* 8 / 4-bit integers src[e0 .. e0+n) (elements, contiguous) as floats. */
static void decode_row(const void *base, dnnl_data_type_t dt, int64_t e0, int64_t n, float *out) {
    if (dt == dnnl_s8) {
        pt_sdpa_rows()->widen_s8((const int8_t *)base + e0, n, out);
        return;
    }
    if (dt == dnnl_u8) {
        pt_sdpa_rows()->widen_u8((const uint8_t *)base + e0, n, out);
        return;
    }
    /* 4-bit: low nibble first, s4 sign-extended as (v ^ 8) - 8. */
    const int flip = dt == dnnl_s4 ? 8 : 0;
    int64_t i = 0;
    const uint8_t *b = (const uint8_t *)base;
    if (e0 & 1) out[i++] = (float)(((b[e0 / 2] >> 4) ^ flip) - flip);
    const uint8_t *q = b + (e0 + i) / 2;
    const int64_t pairs = (n - i) / 2;
    pt_sdpa_rows()->widen_4bit(q, pairs, dt == dnnl_s4, out + i);
    i += 2 * pairs;
    if (i < n) out[i] = (float)(((q[pairs] & 15) ^ flip) - flip);
}

/* Dequantized 8 / 4-bit rows contiguous along the columns, with scales and
 * zero points constant over runs of at least 8 columns (per tensor, per
 * row, or grouped along the columns): decoded a row at a time and scaled
 * per run, in loops the compiler vectorizes.  False for other layouts. */
static bool load_dequant_rows(const sd_args *A, const int64_t *boff, const sd_operand *o, int64_t i0, int n,
                              int64_t ncols, float *dst, size_t ld) {
    const sd_plan *p = A->p;
    const sd_view *sv = &p->views[o->src], *cv = &p->views[o->sc], *zv = o->zp >= 0 ? &p->views[o->zp] : NULL;
    if (sv->grouped || sv->cs != 1 || pt_dt_bits(sv->dt) > 8 || pt_dt_is_float(sv->dt)) return false;
    /* Runs of the two parameters must nest so that one run never spans
     * two groups of either. */
    const int64_t rsc = param_run(cv, ncols), rzp = zv ? param_run(zv, ncols) : ncols;
    const int64_t run = rsc < rzp ? rsc : rzp, other = rsc < rzp ? rzp : rsc;
    if (run <= 0 || (run < 8 && run < ncols) || (other < ncols && other % run != 0)) return false; /* 0: no columns */
    enum { MAX_RUNS = 512 };
    const int64_t nruns = (ncols + run - 1) / run;
    if (nruns > MAX_RUNS) return false;
    float sc[MAX_RUNS], zp[MAX_RUNS];
    int64_t sc_col[MAX_RUNS], zp_col[MAX_RUNS]; /* column parts of the parameters' offsets, per run */
    for (int64_t g = 0; g < nruns; ++g) {
        sc_col[g] = view_off(cv, 0, 0, g * run);
        zp_col[g] = zv ? view_off(zv, 0, 0, g * run) : 0;
    }
    const pt_sdpa_row_ops *rows = pt_sdpa_rows();
    const float *sc_f32 = cv->dt == dnnl_f32 ? (const float *)A->base[o->sc] : NULL;
    for (int r = 0; r < n; ++r) {
        const int64_t i = i0 + r;
        float *out = dst + (size_t)r * ld;
        decode_row(A->base[o->src], sv->dt, boff[o->src] + i * sv->rs, ncols, out);
        /* The row part of the offsets once per row, the column part per run. */
        const int64_t sc_row = view_off(cv, boff[o->sc], i, 0), zp_row = zv ? view_off(zv, boff[o->zp], i, 0) : 0;
        for (int64_t g = 0; g < nruns; ++g) {
            sc[g] = sc_f32 ? sc_f32[sc_row + sc_col[g]] : pt_elem_load(A->base[o->sc], cv->dt, sc_row + sc_col[g]);
            zp[g] = zv ? pt_elem_load(A->base[o->zp], zv->dt, zp_row + zp_col[g]) : 0.f;
        }
        rows->sub_mul_runs(out, ncols, run, zp, sc);
        for (int t = 0; t < o->ndts; ++t) round_row(o->dts[t], out, (int)ncols);
    }
    return true;
}

/* Decode over 8-bit K / V (seed 002): rows [i0, i0+n) of an s8 / u8 operand
 * contiguous along its columns, with scales / zero points constant over
 * runs of columns (the layouts load_dequant_rows takes), are handed to the
 * row kernels as they are stored: *data, row stride *ld (bytes), and the
 * parameters of row r's run g at sc / zp[r·nruns + g] (at most cap).  The
 * values are dequantised in registers and not rounded through a narrower
 * declared type on the way (within the tolerance docs/numerics.md states).
 * False for anything else. */
#define SD_Q8_PARAMS 4096
static bool q8_rows(const sd_args *A, const int64_t *boff, const sd_operand *o, int64_t i0, int n, int64_t ncols,
                    const void **data, int64_t *ld, int *is_signed, int64_t *run_out, float *sc, float *zp) {
    const sd_plan *p = A->p;
    if (o->sc < 0) return false;
    const sd_view *sv = &p->views[o->src], *cv = &p->views[o->sc], *zv = o->zp >= 0 ? &p->views[o->zp] : NULL;
    if ((sv->dt != dnnl_s8 && sv->dt != dnnl_u8) || sv->grouped || sv->cs != 1) return false;
    for (int t = 0; t < o->ndts; ++t)
        if (!pt_dt_is_float(o->dts[t]) || pt_dt_bits(o->dts[t]) < 16) return false;
    const int64_t rsc = param_run(cv, ncols), rzp = zv ? param_run(zv, ncols) : ncols;
    const int64_t run = rsc < rzp ? rsc : rzp, other = rsc < rzp ? rzp : rsc;
    if (run <= 0 || (run < 8 && run < ncols) || (other < ncols && other % run != 0)) return false; /* 0: no columns */
    const int64_t nruns = (ncols + run - 1) / run;
    if ((int64_t)n * nruns > SD_Q8_PARAMS) return false;
    for (int r = 0; r < n; ++r) {
        const int64_t i = i0 + r;
        const int64_t sc_row = view_off(cv, boff[o->sc], i, 0), zp_row = zv ? view_off(zv, boff[o->zp], i, 0) : 0;
        for (int64_t g = 0; g < nruns; ++g) {
            sc[r * nruns + g] = pt_elem_load(A->base[o->sc], cv->dt, sc_row + view_off(cv, 0, 0, g * run));
            zp[r * nruns + g] = zv ? pt_elem_load(A->base[o->zp], zv->dt, zp_row + view_off(zv, 0, 0, g * run)) : 0.f;
        }
    }
    *data = (const int8_t *)A->base[o->src] + boff[o->src] + i0 * sv->rs;
    *ld = sv->rs;
    *is_signed = sv->dt == dnnl_s8;
    *run_out = run;
    return true;
}

/* Address of element `off` of a view's tensor; NULL where a 4-bit element
 * does not start a byte. */
static const void *view_ptr(const sd_args *A, int view, int64_t off) {
    const dnnl_data_type_t dt = A->p->views[view].dt;
    if (pt_dt_bits(dt) == 4) return off % 2 ? NULL : (const char *)A->base[view] + off / 2;
    return (const char *)A->base[view] + off * (int64_t)pt_dt_bytes(dt, 1);
}

/* Scales or zero points of rows [i0, i0+n) × runs [0, nruns) (of `run`
 * columns each) of a parameter view, as floats at [r·nruns + g]: the
 * tensor itself when it is f32 and stored in that order, else converted
 * into buf (vectorized when stored in that order or constant). */
static const float *q_params(const sd_args *A, const int64_t *boff, int view, int64_t i0, int n, int64_t run,
                             int64_t nruns, float *buf) {
    const sd_view *v = &A->p->views[view];
    const void *base = A->base[view];
    const int64_t first = view_off(v, boff[view], i0, 0), count = (int64_t)n * nruns;
    const int64_t cg = v->grouped ? v->cg : 1, rg = v->grouped ? v->rg : 1;
    const bool cols_flat = nruns == 1 || (v->grouped && cg == run && v->cs == 1);
    const bool rows_flat = n == 1 || (rg == 1 && v->rs == nruns);
    const bool constant = (v->cs == 0 || nruns == 1) && (v->rs == 0 || n == 1);
    if (cols_flat && rows_flat) {
        if (v->dt == dnnl_f32) return (const float *)base + first;
        if (pt_dt_bits(v->dt) <= 8 && !pt_dt_is_float(v->dt)) {
            decode_row(base, v->dt, first, count, buf);
            return buf;
        }
    }
    if (constant) {
        const float x = pt_elem_load(base, v->dt, first);
        for (int64_t e = 0; e < count; ++e) buf[e] = x;
        return buf;
    }
    for (int r = 0; r < n; ++r)
        for (int64_t g = 0; g < nruns; ++g)
            buf[r * nruns + g] = pt_elem_load(base, v->dt, view_off(v, boff[view], i0 + r, g * run));
    return buf;
}

/* The longest 4-bit row the decode block operations pair with a staged
 * f32 vector (pair-split copies live on the stack). */
#define SD_SPLIT_MAX 1024

/* Decode over 8 / 4-bit K / V (seed 002): whether the rows from i0 of an
 * s8 / u8 / s4 / u4 operand, contiguous along its columns, with scales /
 * zero points over runs the block operations take (sd_qrows_supported), can
 * go to the row table's dots_q / axpys_q as they are stored; *q gets their
 * address and shape (no parameters).  As for q8_rows, the values are not
 * rounded through a narrower declared type on the way. */
static bool qrows_layout(const sd_args *A, const int64_t *boff, const sd_operand *o, int64_t i0, int64_t ncols,
                         pt_sdpa_qrows *q) {
    const sd_plan *p = A->p;
    if (o->sc < 0) return false;
    const sd_view *sv = &p->views[o->src], *cv = &p->views[o->sc], *zv = o->zp >= 0 ? &p->views[o->zp] : NULL;
    const int bits = pt_dt_bits(sv->dt);
    if (pt_dt_is_float(sv->dt) || (bits != 8 && bits != 4) || sv->grouped || sv->cs != 1) return false;
    if (bits == 4 && (ncols > SD_SPLIT_MAX || (sv->rs & 1))) return false;
    for (int t = 0; t < o->ndts; ++t)
        if (!pt_dt_is_float(o->dts[t]) || pt_dt_bits(o->dts[t]) < 16) return false;
    const int64_t rsc = param_run(cv, ncols), rzp = zv ? param_run(zv, ncols) : ncols;
    const int64_t run = rsc < rzp ? rsc : rzp;
    if (!sd_qrows_supported(bits, ncols, run) || (rsc % run) || (rzp % run)) return false;
    q->data = view_ptr(A, o->src, boff[o->src] + i0 * sv->rs); /* NULL: a 4-bit row starts mid-byte */
    q->ld = bits == 4 ? sv->rs / 2 : sv->rs;
    q->bits = bits;
    q->is_signed = sv->dt == dnnl_s8 || sv->dt == dnnl_s4;
    q->run = run, q->nruns = ncols / run;
    q->sc = q->zp = NULL;
    return q->data != NULL;
}

/* qrows_layout for rows [i0, i0+n) with their parameters: read in place or
 * converted into scb / zpb (SD_Q8_PARAMS each); false where they do not fit. */
static bool qrows_block(const sd_args *A, const int64_t *boff, const sd_operand *o, int64_t i0, int n,
                        int64_t ncols, pt_sdpa_qrows *q, float *scb, float *zpb) {
    if (!qrows_layout(A, boff, o, i0, ncols, q) || (int64_t)n * q->nruns > SD_Q8_PARAMS) return false;
    q->sc = q_params(A, boff, o->sc, i0, n, q->run, q->nruns, scb);
    q->zp = o->zp >= 0 ? q_params(A, boff, o->zp, i0, n, q->run, q->nruns, zpb) : NULL;
    return true;
}

/* Decode over K / V stored as f32 / bf16 / f16 rows contiguous along the
 * columns and not dequantized, whose declared types round nothing on the
 * way (each is f32 or the stored type): rows from i0 straight from the
 * tensor, *ld elements apart, widened in registers.  False otherwise. */
static bool float_rows(const sd_args *A, const int64_t *boff, const sd_operand *o, int64_t i0, const void **rows,
                       dnnl_data_type_t *dt, int64_t *ld) {
    const sd_view *sv = &A->p->views[o->src];
    if (o->sc >= 0 || sv->grouped || sv->cs != 1) return false;
    if (sv->dt != dnnl_f32 && sv->dt != dnnl_bf16 && sv->dt != dnnl_f16) return false;
    for (int t = 0; t < o->ndts; ++t)
        if (o->dts[t] != dnnl_f32 && o->dts[t] != sv->dt) return false;
    *rows = view_ptr(A, o->src, boff[o->src] + i0 * sv->rs);
    *dt = sv->dt;
    *ld = sv->rs;
    return true;
}

/* x in pair-split order (sd_pair_split_pos) into dst, and back. */
static void split_pairs(const float *x, int64_t n, float *dst) {
    for (int64_t c = 0; c < n; ++c) dst[sd_pair_split_pos(c)] = x[c];
}

static void join_pairs(const float *x, int64_t n, float *dst) {
    for (int64_t c = 0; c < n; ++c) dst[c] = x[sd_pair_split_pos(c)];
}

/* Rows [i0, i0+n) × columns [0, ncols) of an operand into dst[r·ld + c], as
 * f32 (the general path: any dequantization and declared types). */
static void load_operand(const sd_args *A, const int64_t *boff, const sd_operand *o, int64_t i0, int n,
                         int64_t ncols, float *dst, size_t ld) {
    const sd_view *sv = &A->p->views[o->src];
    if (o->sc >= 0 && load_dequant_rows(A, boff, o, i0, n, ncols, dst, ld)) return;
    if (o->sc >= 0 || o->ndts != 0 || (sv->dt != dnnl_f32 && sv->dt != dnnl_bf16 && sv->dt != dnnl_f16)) {
        for (int r = 0; r < n; ++r)
            for (int64_t d = 0; d < ncols; ++d) dst[(size_t)r * ld + (size_t)d] = operand_at(A, boff, o, i0 + r, d);
        return;
    }
    for (int r = 0; r < n; ++r) {
        const int64_t off = boff[o->src] + (i0 + r) * sv->rs, cs = sv->cs;
        float *out = dst + (size_t)r * ld;
        if (sv->dt == dnnl_f32) {
            const float *src = (const float *)A->base[o->src] + off;
            if (cs == 1) memcpy(out, src, sizeof(float) * (size_t)ncols);
            else
                for (int64_t d = 0; d < ncols; ++d) out[d] = src[d * cs];
        } else {
            const uint16_t *src = (const uint16_t *)A->base[o->src] + off;
            /* Contiguous rows widen on the vector row (exact, as below). */
            if (cs == 1 && sv->dt == dnnl_bf16) A->vec->bf16_to_f32(out, src, ncols);
            else if (cs == 1) A->vec->f16_to_f32(out, src, ncols);
            else if (sv->dt == dnnl_bf16)
                for (int64_t d = 0; d < ncols; ++d) out[d] = pt_bf16_bits_to_f32(src[d * cs]);
            else
                for (int64_t d = 0; d < ncols; ++d) out[d] = sd_f16_bits_to_f32(src[d * cs]);
        }
    }
}

/* The type an operand's values have when they reach the MatMul. */
static dnnl_data_type_t operand_type(const sd_plan *p, const sd_operand *o) {
    dnnl_data_type_t t = o->sc >= 0 ? dnnl_f32 : p->views[o->src].dt;
    if (t != dnnl_bf16 && t != dnnl_f16) t = dnnl_f32;
    for (int i = 0; i < o->ndts; ++i)
        if (o->dts[i] == dnnl_bf16 || o->dts[i] == dnnl_f16) t = o->dts[i];
        else if (o->dts[i] != dnnl_f32) t = dnnl_f32; /* an integer / f8 rounding keeps f32 storage */
    return t;
}

/* The compute kind of one product from its operands' types and the math
 * mode, as the MatMul engine chooses it (docs/numerics.md). */
static sd_product choose_product(dnnl_data_type_t ta, dnnl_data_type_t tb, dnnl_fpmath_mode_t mode) {
    const bool narrow = mode == dnnl_fpmath_mode_bf16 || mode == dnnl_fpmath_mode_any;
    sd_product pr;
    if ((ta == dnnl_bf16 && tb == dnnl_bf16) || (narrow && ta != dnnl_f16 && tb != dnnl_f16)) {
        pr.kind = PT_GEMM_BF16;
        pr.round = dnnl_fpmath_mode_strict;
    } else {
        pr.kind = PT_GEMM_F32;
        pr.round = mode;
    }
    pr.uk = pt_gemm_ukernel_default(pr.kind);
    return pr;
}

/* Whether an operand's declared types change nothing the panels of `kind`
 * do not do themselves (f32 casts; bf16 casts into BF16 panels). */
static bool types_packable(const sd_plan *p, const sd_operand *o, pt_gemm_kind kind) {
    const dnnl_data_type_t src = p->views[o->src].dt;
    for (int i = 0; i < o->ndts; ++i) {
        if (o->dts[i] == dnnl_f32) continue;
        if (o->dts[i] == dnnl_bf16 && kind == PT_GEMM_BF16 && src != dnnl_f16) continue;
        if (o->dts[i] == src && o->sc < 0) continue; /* a cast to its own type */
        return false;
    }
    return true;
}

/* Strides of a scale / zero-point view over (n, g) of a B operand whose
 * rows n are the view's rows (`n_rows`) or columns, and its group along k
 * (0: constant along k).  False for layouts the panels cannot express
 * (grouped along n). */
static bool param_strides(const sd_view *v, bool n_rows, int64_t *sn, int64_t *sg, int64_t *group) {
    const int64_t ns = n_rows ? v->rs : v->cs, ks = n_rows ? v->cs : v->rs;
    const int64_t ndiv = v->grouped ? (n_rows ? v->rg : v->cg) : 1, kdiv = v->grouped ? (n_rows ? v->cg : v->rg) : 1;
    if (ndiv != 1 && ns != 0) return false;
    *sn = ns;
    *group = ks == 0 ? 0 : kdiv;
    *sg = ks == 0 ? 0 : ks;
    return true;
}

/* The B operand of K (rows = keys, k = D: `n_rows`) or V (rows = Dv, k =
 * keys) packed straight from its stored tensor: plain f32 / bf16 / f16 data,
 * or 8 / 4-bit integers dequantized into the panels. */
static bool direct_operand(const sd_plan *p, const sd_operand *o, bool n_rows, const sd_product *pr,
                           pt_gemm_operand *op) {
    const sd_view *v = &p->views[o->src];
    memset(op, 0, sizeof *op);
    /* Dequantized values may be rounded to one 16-bit float type on the
     * way (the DynamicDequantize's f16 output): the packer does that. */
    dnnl_data_type_t round_dt = dnnl_data_type_undef;
    if (o->sc >= 0) {
        for (int i = 0; i < o->ndts; ++i) {
            if (o->dts[i] == dnnl_f32) continue;
            if ((o->dts[i] != dnnl_f16 && o->dts[i] != dnnl_bf16) ||
                (round_dt != dnnl_data_type_undef && round_dt != o->dts[i]))
                return false;
            round_dt = o->dts[i];
        }
    }
    if (v->grouped || (o->sc < 0 && !types_packable(p, o, pr->kind))) return false;
    op->dt = v->dt;
    op->s_row = n_rows ? v->rs : v->cs;
    op->s_k = n_rows ? v->cs : v->rs;
    op->round = dnnl_fpmath_mode_strict;
    if (o->sc < 0) {
        if (v->dt != dnnl_f32 && v->dt != dnnl_bf16 && v->dt != dnnl_f16) return false;
        if (pr->kind == PT_GEMM_F32 && v->dt == dnnl_f32 && operand_type(p, o) == dnnl_f32) op->round = pr->round;
        return true;
    }
    if (v->dt != dnnl_s8 && v->dt != dnnl_u8 && v->dt != dnnl_s4 && v->dt != dnnl_u4) return false;
    const sd_view *cv = &p->views[o->sc], *zv = o->zp >= 0 ? &p->views[o->zp] : NULL;
    if (cv->dt != dnnl_f32 && cv->dt != dnnl_bf16 && cv->dt != dnnl_f16) return false;
    if (zv && zv->dt != dnnl_s8 && zv->dt != dnnl_u8 && zv->dt != dnnl_s4 && zv->dt != dnnl_u4 && zv->dt != dnnl_s32)
        return false;
    pt_gemm_dequant *dq = &op->dq;
    int64_t gs = 0, gz = 0;
    if (!param_strides(cv, n_rows, &dq->sc_sn, &dq->sc_sg, &gs)) return false;
    if (zv && !param_strides(zv, n_rows, &dq->zp_sn, &dq->zp_sg, &gz)) return false;
    if (gs && gz && gs != gz) return false;
    dq->on = true;
    dq->round_dt = round_dt;
    dq->scale_dt = cv->dt;
    dq->zp_dt = zv ? zv->dt : dnnl_data_type_undef;
    dq->group = gs ? gs : gz;
    return true;
}

/* The type P has when it reaches the second product; *px_only_bf16: P's
 * only transforms are roundings to bf16 / f32. */
static dnnl_data_type_t p_type(const sd_plan *p, bool *px_only_bf16) {
    dnnl_data_type_t tp = dnnl_f32;
    *px_only_bf16 = p->npx > 0;
    for (int t = 0; t < p->npx; ++t) {
        if (p->px[t].kind != SD_X_DROPOUT && p->px[t].kind != SD_X_QUANT) tp = p->px[t].dt;
        if (!(p->px[t].kind == SD_X_ROUND && (p->px[t].dt == dnnl_bf16 || p->px[t].dt == dnnl_f32)))
            *px_only_bf16 = false;
    }
    return tp == dnnl_bf16 || tp == dnnl_f16 ? tp : dnnl_f32;
}

/* Whether the transposed f32 path takes the plan's products (K / V as
 * stored and not dequantized, checked by the caller): it needs vector
 * column operations (on the portable row, expf per score makes it slower
 * than the row path), f32 products whose operands pack without
 * dequantization, and P as SoftMax gives it (one pass, no transform that
 * changes it). */
static bool transposed_form(const sd_plan *p, const sd_product *qk, const sd_product *pv, dnnl_data_type_t tp,
                            bool px_pack_rounds) {
    return pt_sdpa_panel()->level >= PT_ISA_AVX2 && p->one_pass && !p->dropout && p->vmask < 0 &&
           tp == dnnl_f32 && (p->npx == 0 || px_pack_rounds) && qk->kind == PT_GEMM_F32 &&
           pv->kind == PT_GEMM_F32 && qk->uk == pv->uk && pv->round == dnnl_fpmath_mode_strict &&
           qk->uk->nr <= SD_TNR && qk->uk->kg == 1;
}

bool pt_sdpa_fwd_packable(const sd_plan *p, bool is_v, dnnl_fpmath_mode_t mode, const pt_gemm_ukernel **uk,
                          dnnl_data_type_t *dt, dnnl_fpmath_mode_t *round, int64_t *n_stride, int64_t *k_stride) {
    const sd_operand *o = is_v ? &p->v : &p->k;
    const sd_view *v = &p->views[o->src];
    if (v->port < 0 || v->is_out || v->grouped || p->skv < 1) return false;
    for (int i = 0; i < p->nviews; ++i)
        if (i != o->src && !p->views[i].is_out && p->views[i].port == v->port) return false;
    /* Items of few query rows take the decode path, which reads K and V
     * as stored. */
    const int64_t rows = (p->sq < p->bq ? p->sq : p->bq) * p->seg;
    if (rows <= SD_DECODE_ROWS) return false;
    bool px_only_bf16;
    const sd_product pr = is_v ? choose_product(p_type(p, &px_only_bf16), operand_type(p, &p->v), mode)
                               : choose_product(operand_type(p, &p->q), operand_type(p, &p->k), mode);
    pt_gemm_operand op;
    if (!direct_operand(p, o, !is_v, &pr, &op) || op.dq.on) return false;
    /* The transposed f32 path reads K and V as A panels, which the packed
     * layout (B panels) is not, and it outruns the row path over panels
     * packed ahead (each thread packs a head once and keeps it): `any`
     * then resolves to plain strides. */
    {
        bool only_bf16;
        const dnnl_data_type_t tp = p_type(p, &only_bf16);
        const sd_product qk = choose_product(operand_type(p, &p->q), operand_type(p, &p->k), mode);
        const sd_product pv = choose_product(tp, operand_type(p, &p->v), mode);
        if (transposed_form(p, &qk, &pv, tp, only_bf16 && (pv.kind == PT_GEMM_BF16 || tp == dnnl_f32)))
            return false;
    }
    /* Key blocks start at whole strips of K's panels and at whole k groups of V's. */
    if (p->bk < p->skv && p->bk % pr.uk->nr != 0) return false;
    *uk = pr.uk;
    *dt = op.dt;
    *round = op.round;
    *n_stride = op.s_row;
    *k_stride = op.s_k;
    return true;
}

/* x[c] = x[c] op a[c], op one of the chain's binary steps, with the operand
 * read through view `va` at row i, columns j0 + c. */
static void binary_row(const sd_args *A, int view, int64_t boff, sd_kind kind, int64_t i, int64_t j0, float *x,
                       int n) {
    const sd_view *va = &A->p->views[view];
    const void *base = A->base[view];
    const int64_t off = view_off(va, boff, i, j0), cs = va->cs;
    if (cs == 0 && !va->grouped) { /* a scale: one factor for the row */
        const float f = pt_elem_load(base, va->dt, off);
        if (kind == SD_MUL)
            A->vec->scale(x, n, f);
        else if (kind == SD_DIV) {
            /* f32 accumulation order already differs from the reference:
             * the reciprocal's extra half ulp does not matter, the divides
             * would. */
            A->vec->scale(x, n, 1.f / f);
        } else
            for (int c = 0; c < n; ++c) x[c] = x[c] + f;
        return;
    }
    if (kind == SD_ADD && cs == 1 && !va->grouped &&
        (va->dt == dnnl_f32 || va->dt == dnnl_bf16 || va->dt == dnnl_f16)) { /* a mask row */
        if (va->dt == dnnl_f32) pt_sdpa_rows()->add_f32(x, (const float *)base + off, n);
        else if (va->dt == dnnl_bf16) pt_sdpa_rows()->add_bf16(x, (const uint16_t *)base + off, n);
        else pt_sdpa_rows()->add_f16(x, (const uint16_t *)base + off, n);
        return;
    }
    for (int c = 0; c < n; ++c) {
        const float a = pt_elem_load(base, va->dt, view_off(va, boff, i, j0 + c));
        x[c] = kind == SD_MUL ? x[c] * a : kind == SD_DIV ? x[c] / a : x[c] + a;
    }
}

/* Columns [*lo, *hi) of keys [j0, j0+n) of row i where the causal step's
 * GreaterEqual holds, for integer offsets (causal_int).  The condition is
 * linear in (i, j), so the set is one interval. */
static void causal_cond_range(const sd_args *A, int s, int64_t i, int64_t j0, int n, int *lo, int *hi) {
    const sd_step *st = &A->p->steps[s];
    const int64_t delta = st->add >= 0 ? A->causal_delta[s] : 0;
    int64_t a = 0, b = n;
    if (st->lhs_col && !st->rhs_col) a = i - delta - j0; /* j + delta >= i */
    else if (!st->lhs_col && st->rhs_col) b = i + delta - j0 + 1; /* i + delta >= j */
    else if (delta < 0) b = 0; /* both sides the same index: holds iff delta >= 0 */
    *lo = (int)(a < 0 ? 0 : a > n ? n : a);
    *hi = (int)(b < 0 ? 0 : b > n ? n : b);
    if (*hi < *lo) *hi = *lo;
}

/* Whether row i has every key of [j0, j0+n) removed by causal step s. */
static bool causal_all_masked(const sd_args *A, int s, int64_t i, int64_t j0, int n) {
    int lo, hi;
    causal_cond_range(A, s, i, j0, n, &lo, &hi);
    return A->p->steps[s].keep_true ? lo >= hi : (lo == 0 && hi == n);
}

static void fill_range(const sd_args *A, const sd_view *fv, int view, int64_t boff, int64_t i, int64_t j0,
                       float *x, int from, int to) {
    if (fv->cs == 0 && !fv->grouped) {
        const float f = pt_elem_load(A->base[view], fv->dt, boff + i * fv->rs);
        for (int c = from; c < to; ++c) x[c] = f;
        return;
    }
    for (int c = from; c < to; ++c) x[c] = pt_elem_load(A->base[view], fv->dt, view_off(fv, boff, i, j0 + c));
}

/* The score chain on row i, columns [j0, j0+n) of the batch whose view
 * offsets are boff: one step at a time over the row; step `folded` (-1:
 * none) was applied to Q and only rounds. */
static void apply_steps_row(const sd_args *A, const int64_t *boff, int64_t i, int64_t j0, float *x, int n,
                            int folded) {
    const sd_plan *p = A->p;
    for (int s = 0; s < p->nsteps; ++s) {
        const sd_step *st = &p->steps[s];
        if (s == folded) { /* applied to Q (fold_factor) */
            if (st->dt != dnnl_f32) round_row(st->dt, x, n);
            continue;
        }
        const sd_view *va = st->a >= 0 ? &p->views[st->a] : NULL;
        switch (st->kind) {
            case SD_MUL:
            case SD_DIV:
            case SD_ADD: binary_row(A, st->a, boff[st->a], st->kind, i, j0, x, n); break;
            case SD_SELECT: {
                const sd_view *vb = &p->views[st->b];
                const bool byte_cond = (va->dt == dnnl_boolean || va->dt == dnnl_u8 || va->dt == dnnl_s8) &&
                                       va->cs == 1 && !va->grouped;
                if (byte_cond && vb->cs == 0 && !vb->grouped) {
                    /* A byte mask row and one fill value (the common padding / causal form). */
                    const float other = pt_elem_load(A->base[st->b], vb->dt, view_off(vb, boff[st->b], i, j0));
                    pt_sdpa_rows()->select_u8(x, (const uint8_t *)A->base[st->a] + view_off(va, boff[st->a], i, j0), n,
                                              other, st->keep_true);
                    break;
                }
                for (int c = 0; c < n; ++c) {
                    bool cond = pt_elem_load(A->base[st->a], va->dt, view_off(va, boff[st->a], i, j0 + c)) != 0.f;
                    if (cond != st->keep_true)
                        x[c] = pt_elem_load(A->base[st->b], vb->dt, view_off(vb, boff[st->b], i, j0 + c));
                }
                break;
            }
            case SD_CAUSAL: {
                if (A->causal_int[s]) {
                    int lo, hi;
                    causal_cond_range(A, s, i, j0, n, &lo, &hi);
                    if (st->keep_true) {
                        fill_range(A, va, st->a, boff[st->a], i, j0, x, 0, lo);
                        fill_range(A, va, st->a, boff[st->a], i, j0, x, hi, n);
                    } else {
                        fill_range(A, va, st->a, boff[st->a], i, j0, x, lo, hi);
                    }
                    break;
                }
                const bool off = st->add >= 0;
                for (int c = 0; c < n; ++c) {
                    const int64_t j = j0 + c;
                    float l = sd_causal_side(st->lhs_col, i, j, off, A->add[s], A->sub[s]);
                    float r = sd_causal_side(st->rhs_col, i, j, false, 0.f, 0.f);
                    if ((l >= r) != st->keep_true)
                        x[c] = pt_elem_load(A->base[st->a], va->dt, view_off(va, boff[st->a], i, j));
                }
                break;
            }
            case SD_TANH:
                for (int c = 0; c < n; ++c) x[c] = tanhf(x[c]);
                break;
        }
        if (st->dt != dnnl_f32) round_row(st->dt, x, n);
    }
}

/* P's transforms for element (i, j) of batch b (row-major index for Dropout). */
static inline float apply_px(const sd_args *A, const int64_t *boff, int64_t b, int64_t i, int64_t j, float v) {
    const sd_plan *p = A->p;
    for (int t = 0; t < p->npx; ++t) {
        const sd_xform *x = &p->px[t];
        switch (x->kind) {
            case SD_X_ROUND: v = pt_elem_round(x->dt, v); break;
            case SD_X_QUANT: v = pt_elem_round(x->dt, x->has_zp ? v * x->inv + x->zp : v * x->inv); break;
            case SD_X_DEQUANT: v = pt_elem_round(x->dt, x->has_zp ? (v - x->zp) * x->scale : v * x->scale); break;
            case SD_X_DROPOUT: {
                uint64_t lin = (uint64_t)((b * p->sq + i) * p->skv + j);
                bool keep = pt_dropout_keep(&A->dc, lin, A->seed, A->offset);
                v = pt_elem_round(x->dt, keep ? v * A->dc.inv_q : 0.f);
                if (p->vmask >= 0) {
                    const sd_view *mv = &p->views[p->vmask];
                    pt_elem_store((void *)A->base[p->vmask], mv->dt, boff[p->vmask] + i * mv->rs + j * mv->cs,
                                  keep ? 1.f : 0.f);
                }
                break;
            }
        }
    }
    return v;
}

/* ---- per-thread scratch ------------------------------------------------------- */

/* Byte offsets inside one thread's scratch; all sizes are O(block × head
 * size), none depends on S_q or S_kv. */
typedef struct {
    size_t qf;       /* Q rows of the item [rows][D] (f32 staging) */
    size_t qpan;     /* Q as A panels */
    size_t kf, kpan; /* K block [bk][D] (f32 staging, general path), as B panels */
    size_t s;        /* scores, then P, of the block [rows][bk] (f32); decode plans: at least [rows][SD_DECODE_BK] */
    size_t s_floats; /* its capacity */
    size_t ppan;     /* P as A panels */
    size_t vf, vpan; /* V block [bk][Dv] (f32 staging, general path), as B panels */
    size_t acc;      /* output accumulators [rows][Dv] (f32) */
    size_t m, l;     /* row max / sum [rows] */
    size_t orow;     /* one output row [Dv] (f32) */
    size_t tags;     /* which K / V head the head panels hold (3 offsets each) */
    size_t khead, vhead; /* whole-head K / V panels (plan's kv_cache), else empty */
    size_t kept;         /* scores of every key [rows][S_kv] (plan's keep_scores), else empty */
    /* Transposed path: Qᵀ as B panels, Oᵀ [Dv][NR] per query block, running
     * max / sum per query, scores [keys][NR] of one key block, per-key
     * additive values of one block. */
    size_t tq, tacc, tm, tl, tst, tadd;
    size_t total;
} sd_layout;

/* The largest microkernel tile of the kinds the kernel may use. */
static void tile_bounds(int *mr, int *nr) {
    const pt_gemm_ukernel *a = pt_gemm_ukernel_default(PT_GEMM_F32), *b = pt_gemm_ukernel_default(PT_GEMM_BF16);
    *mr = a->mr > b->mr ? a->mr : b->mr;
    *nr = a->nr > b->nr ? a->nr : b->nr;
}

static sd_layout sd_scratch_layout(const sd_plan *p) {
    sd_layout L;
    int mr, nr;
    tile_bounds(&mr, &nr);
    /* Panels hold at most 4-byte elements; rows / columns round up to a
     * tile, k to the k group (2). */
    const size_t rows = (size_t)p->bq * (size_t)p->seg, bk = (size_t)p->bk;
    const size_t D = (size_t)p->dqk, DV = (size_t)p->dv, f = sizeof(float);
    const size_t rows_p = rows + (size_t)mr, Dp = D + 2, bkp = bk + 2;
    const size_t skv = p->kv_cache ? (size_t)p->skv : 0;
    const size_t s_floats = rows * (rows <= SD_DECODE_ROWS && bk < SD_DECODE_BK ? SD_DECODE_BK : bk);
    /* The transposed path: items of one pass that take the panels. */
    const bool tp = p->one_pass && rows > SD_DECODE_ROWS;
    const size_t tcols = tp ? (rows + SD_TNR - 1) / SD_TNR * SD_TNR : 0;
    const size_t tbk = tp ? SD_TBK + (size_t)mr : 0;
    size_t *const fields[] = {&L.qf,  &L.qpan, &L.kf, &L.kpan, &L.s,    &L.ppan, &L.vf, &L.vpan, &L.acc,
                              &L.m,   &L.l,    &L.orow, &L.tags, &L.khead, &L.vhead, &L.kept, &L.tq, &L.tacc,
                              &L.tm,  &L.tl,   &L.tst,  &L.tadd};
    const size_t bytes[] = {rows * D * f,
                            rows_p * Dp * f,
                            bk * D * f,
                            (bk + (size_t)nr) * Dp * f,
                            s_floats * f,
                            rows_p * bkp * f,
                            bk * DV * f,
                            (DV + (size_t)nr) * bkp * f,
                            rows * DV * f,
                            rows * f,
                            rows * f,
                            DV * f,
                            6 * sizeof(int64_t),
                            skv ? (skv + (size_t)nr) * Dp * f : 0,
                            skv ? (DV + (size_t)nr) * (skv + 2) * f : 0,
                            p->keep_scores ? rows * (size_t)p->skv * f : 0,
                            tcols * D * f,
                            tcols * DV * f,
                            tcols * f,
                            tcols * f,
                            tbk * SD_TNR * f,
                            tbk * f};
    L.total = sd_carve(fields, bytes, (int)(sizeof bytes / sizeof bytes[0]));
    L.s_floats = s_floats;
    return L;
}

/* The batch dim over which K and V (data, scales, zero points) do not move
 * while Q does: GQA / MQA heads sharing one K / V head.  -1 when none. */
static int group_dim(const sd_plan *p) {
    int best = -1;
    const int kv[] = {p->k.src, p->k.sc, p->k.zp, p->v.src, p->v.sc, p->v.zp};
    for (int d = 0; d < p->nb; ++d) {
        if (p->bdims[d] < 2 || p->views[p->q.src].bs[d] == 0) continue;
        bool still = true;
        for (int t = 0; t < 6; ++t)
            if (kv[t] >= 0 && p->views[kv[t]].bs[d] != 0) still = false;
        if (still && (best < 0 || p->bdims[d] > p->bdims[best])) best = d;
    }
    return best;
}

void pt_sdpa_fwd_plan_blocks(sd_plan *p, int nthr) {
    p->gdim = group_dim(p);
    const int64_t G = p->gdim >= 0 ? p->bdims[p->gdim] : 1;
    p->seg = (int)(G < SD_MAX_SEG ? G : SD_MAX_SEG);
    int64_t bq = (p->dqk > 128 || p->dv > 128 ? SD_ROWS_WIDE : SD_ROWS) / p->seg;
    if (bq < 1) bq = 1;
    p->bq = (int)(p->sq < bq ? (p->sq > 0 ? p->sq : 1) : bq);
    p->bk = (int)(p->skv < SD_BK ? (p->skv > 0 ? p->skv : 1) : SD_BK);
    bool causal = false;
    for (int s = 0; s < p->nsteps; ++s) causal = causal || p->steps[s].kind == SD_CAUSAL;
    if (p->skv > SD_BK && p->skv <= SD_BK_WHOLE && !causal && p->dqk <= 128 && p->dv <= 128) {
        /* All keys in one block: no online rescaling, one pass of the row
         * operations per row; fewer rows keep the block in L2. */
        p->bk = (int)p->skv;
        bq = SD_ROWS_WHOLE / p->seg;
        if (bq < 1) bq = 1;
        p->bq = (int)(p->sq < bq ? (p->sq > 0 ? p->sq : 1) : bq);
    }
    /* Whole-head K / V panels pay where items take the panel path. */
    const int64_t rows = (p->sq < p->bq ? p->sq : p->bq) * p->seg;
    p->kv_cache = rows > SD_DECODE_ROWS && p->skv > 0 && p->skv * (p->dqk + p->dv) <= SD_HEAD_ELEMS;
    p->keep_scores = p->kv_cache && !p->one_pass && rows * p->skv <= SD_KEPT_SCORES;
    p->nthr = nthr;
    p->thr_bytes = sd_scratch_layout(p).total;
}

void pt_sdpa_fwd_release(pt_fused *f) {
    sd_plan *p = f->state;
    if (p)
        for (int k = 0; k < p->nkonst; ++k) free(p->konst[k]);
    free(p);
    f->state = NULL;
}

/* ---- one work item -------------------------------------------------------------- */

/* Everything one item needs: nseg segments of mq query rows each (rows
 * [s·mq, (s+1)·mq) of the item belong to batch bseg[s]), from query row i0. */
typedef struct {
    const sd_args *A;
    const sd_layout *L;
    char *buf;
    int nseg, mq, rows;
    bool decode; /* few rows: dot products and axpys on f32 rows instead of packed panels */
    int bk;      /* keys per block and row stride of S: the plan's, or SD_DECODE_BK for streaming decode */
    const char *khead, *vhead; /* whole-head K / V panels (packed ahead or cached), NULL: per block */
    int64_t i0;
    int64_t bseg[SD_MAX_SEG];
    int64_t boff[SD_MAX_SEG][SD_MAX_VIEWS];
} sd_item;

#define SCR(B, T, field) ((T *)((B)->buf + (B)->L->field))

/* C[rows][cols] (row stride ldc) = / += A panels · B panels over kcp, the
 * B strips bstrip bytes apart (a block of K inside whole-K strips packed
 * ahead). */
static void run_tiles_strided(const pt_gemm_ukernel *uk, int64_t kcp, const void *apan, int rows, const void *bpan,
                              size_t bstrip, int cols, float *c, int64_t ldc, int accumulate) {
    const size_t eb = pt_gemm_panel_elem_bytes(uk->kind);
    const size_t astrip = (size_t)uk->mr * (size_t)kcp * eb;
    for (int j = 0, js = 0; j < cols; j += uk->nr, ++js) {
        const int nr = cols - j < uk->nr ? cols - j : uk->nr;
        const char *b = (const char *)bpan + (size_t)js * bstrip;
        for (int i = 0, is = 0; i < rows; i += uk->mr, ++is) {
            const int mr = rows - i < uk->mr ? rows - i : uk->mr;
            uk->run(kcp, (const char *)apan + (size_t)is * astrip, b, c + (int64_t)i * ldc + j, ldc, mr, nr,
                    accumulate);
        }
    }
}

/* The same over B panels packed for this block of K. */
static void run_tiles(const pt_gemm_ukernel *uk, int64_t kcp, const void *apan, int rows, const void *bpan, int cols,
                      float *c, int64_t ldc, int accumulate) {
    const size_t bstrip = (size_t)uk->nr * (size_t)kcp * pt_gemm_panel_elem_bytes(uk->kind);
    run_tiles_strided(uk, kcp, apan, rows, bpan, bstrip, cols, c, ldc, accumulate);
}

/* Packs rows [r0, r0+rows) × k [k0, k0+kc) of a directly packed operand
 * (data, scales, zero points at the batch offsets boff); false when a 4-bit
 * tensor's batch offset splits a byte (the caller takes the general path). */
static bool pack_direct(const sd_args *A, const sd_product *pr, bool is_b, const sd_operand *o,
                        const pt_gemm_operand *op, const int64_t *boff, int64_t r0, int64_t rows, int64_t k0,
                        int64_t kc, void *dst) {
    const void *data = view_ptr(A, o->src, boff[o->src]);
    const void *sc = o->sc >= 0 ? view_ptr(A, o->sc, boff[o->sc]) : NULL;
    const void *zp = o->zp >= 0 ? view_ptr(A, o->zp, boff[o->zp]) : NULL;
    if (!data || (o->sc >= 0 && !sc) || (o->zp >= 0 && !zp)) return false;
    pt_gemm_pack_panels(pr->uk, is_b, op, data, sc, zp, r0, rows, k0, kc, dst, NULL);
    return true;
}

/* Packs f32 staging rows (row stride ld) as panels of a product. */
static void pack_staged(const sd_product *pr, bool is_b, const float *src, int64_t s_row, int64_t s_k, int64_t rows,
                        int64_t kc, dnnl_data_type_t final_dt, void *dst) {
    pt_gemm_operand o;
    memset(&o, 0, sizeof o);
    o.dt = dnnl_f32, o.s_row = s_row, o.s_k = s_k;
    o.round = pr->kind == PT_GEMM_F32 && final_dt == dnnl_f32 ? pr->round : dnnl_fpmath_mode_strict;
    pt_gemm_pack_panels(pr->uk, is_b, &o, src, NULL, NULL, 0, rows, 0, kc, dst, NULL);
}

/* The score chain on the item's block of raw scores s (row stride ld). */
static void score_chain(const sd_item *B, int64_t j0, int nk, float *s, int64_t ld) {
    const sd_args *A = B->A;
    const sd_plan *p = A->p;
    for (int r = 0; r < B->rows; ++r) {
        float *srow = s + (size_t)r * (size_t)ld;
        const int seg = r / B->mq;
        if (p->s_dt != dnnl_f32) round_row(p->s_dt, srow, nk);
        apply_steps_row(A, B->boff[seg], B->i0 + r % B->mq, j0, srow, nk, B->decode ? -1 : A->fold_step);
    }
}

/* S (row stride bk) = the chain applied to Q·Kᵀ for keys [j0, j0+nk). */
static void block_scores(const sd_item *B, int64_t j0, int nk, dnnl_data_type_t tk) {
    const sd_args *A = B->A;
    const sd_plan *p = A->p;
    const int64_t D = p->dqk;
    const int64_t *kb = B->boff[0];
    void *kpan = SCR(B, void, kpan);
    float *s = SCR(B, float, s), *kf = SCR(B, float, kf);
    if (B->decode) {
        /* K streams once: one dot product per (row, key), 8-bit keys
         * dequantised in registers, others from dequantized f32 rows. */
        const float *qf = SCR(B, float, qf);
        const pt_sdpa_row_ops *ops = pt_sdpa_rows();
        const void *kq;
        int64_t ld, run;
        int sgn;
        float sc[SD_Q8_PARAMS], zp[SD_Q8_PARAMS];
        pt_sdpa_qrows kr;
        dnnl_data_type_t kdt;
        if (qrows_layout(A, kb, &p->k, j0, D, &kr)) {
            /* Keys in chunks whose parameters fit sc / zp; the layout that
             * holds for the first key holds for every chunk (same strides,
             * even starts). */
            const int step = (int)(SD_Q8_PARAMS / kr.nruns);
            float xs[SD_SPLIT_MAX];
            for (int c0 = 0; c0 < nk; c0 += step) {
                const int n = nk - c0 < step ? nk - c0 : step;
                qrows_block(A, kb, &p->k, j0 + c0, n, D, &kr, sc, zp);
                for (int r = 0; r < B->rows; ++r) {
                    const float *x = qf + (size_t)r * D;
                    if (kr.bits == 4) split_pairs(x, D, xs), x = xs;
                    ops->dots_q(x, D, &kr, n, s + (size_t)r * B->bk + c0);
                }
            }
        } else if (float_rows(A, kb, &p->k, j0, &kq, &kdt, &ld)) {
            for (int r = 0; r < B->rows; ++r) {
                const float *x = qf + (size_t)r * D;
                float *out = s + (size_t)r * B->bk;
                if (kdt == dnnl_f32) ops->dots(x, D, (const float *)kq, nk, ld, out);
                else ops->dots_h(x, D, (const uint16_t *)kq, kdt == dnnl_f16, nk, ld, out);
            }
        } else if (q8_rows(A, kb, &p->k, j0, nk, D, &kq, &ld, &sgn, &run, sc, zp)) {
            for (int r = 0; r < B->rows; ++r)
                ops->dots_q8(qf + (size_t)r * D, D, kq, sgn, nk, ld, run, sc, zp, s + (size_t)r * B->bk);
        } else {
            load_operand(A, kb, &p->k, j0, nk, D, kf, (size_t)D);
            for (int r = 0; r < B->rows; ++r) ops->dots(qf + (size_t)r * D, D, kf, nk, D, s + (size_t)r * B->bk);
        }
    } else {
        if (!A->k_direct || !pack_direct(A, &A->qk, true, &p->k, &A->kop, kb, j0, nk, 0, D, kpan)) {
            load_operand(A, kb, &p->k, j0, nk, D, kf, (size_t)D);
            pack_staged(&A->qk, true, kf, D, 1, nk, D, tk, kpan);
        }
        run_tiles(A->qk.uk, pt_gemm_kc_padded(A->qk.uk, D), SCR(B, void, qpan), B->rows, kpan, nk, s, B->bk, 0);
    }
    score_chain(B, j0, nk, s, B->bk);
}

/* The head of K or V a work item reads from a buffer packed ahead: its
 * items of panels in row-major order of the tensor's other dims. */
static const char *packed_head(const sd_args *A, const sd_packed *pk, int view, int64_t boff) {
    int64_t item = 0;
    for (int d = 0; d < pk->ndims; ++d)
        if (pk->istride[d]) item += (boff / pk->dstride[d]) % pk->dims[d] * pk->istride[d];
    return (const char *)A->base[view] + (size_t)item * pk->item_bytes;
}

/* Whether K (or V) reaches the transposed path's panels through the column
 * operations: contiguous f32 rows the math mode does not round. */
static bool tcopied(const sd_args *A, bool is_v) {
    const sd_view *v = &A->p->views[is_v ? A->p->v.src : A->p->k.src];
    return v->dt == dnnl_f32 && v->cs == 1 && (is_v ? &A->vop : &A->kop)->round == dnnl_fpmath_mode_strict;
}

/* Whether the copied V panels split their tail: a last full strip of MR
 * rows and r <= MR - 8 more (Dv = 64 on 12-row tiles: 48 + 12 + 4) become
 * two strips of at most 8 rows (48 + 8 + 8), because the microkernel
 * computes tiles of up to 8 rows as 8 (its 8-row variant) and the others
 * as MR: 8 + 8 rows of work instead of MR + 8. */
static bool tv_splits(const sd_args *A) {
    const int mr = A->qk.uk->mr, rem = (int)(A->p->dv % mr);
    return tcopied(A, true) && A->p->dv > mr && rem > 0 && rem <= mr - 8;
}

/* Strip s of the transposed path's V panels: Vᵀ rows [*d0, *d0 + *rows). */
static void tv_strip(const sd_args *A, int64_t s, int64_t *d0, int *rows) {
    const int mr = A->qk.uk->mr;
    const int64_t last = A->p->dv / mr - 1; /* the last full strip */
    if (!A->tv_split || s < last) {
        *d0 = s * mr;
        *rows = A->p->dv - *d0 < mr ? (int)(A->p->dv - *d0) : mr;
        return;
    }
    const int tail = mr + (int)(A->p->dv % mr), first = (tail + 1) / 2;
    *d0 = last * mr + (s == last ? 0 : first);
    *rows = s == last ? first : tail - first;
}

/* Rows [0, nk) of K from src (row stride ld) copied as the transposed
 * path's A panels: strips of MR keys (k = D). */
static void tcopy_k(const sd_args *A, const float *src, int64_t ld, int64_t nk, float *dst) {
    const int mr = A->qk.uk->mr;
    for (int64_t s = 0; s * mr < nk; ++s)
        A->pan->pack_t(src + s * mr * ld, ld, (int)(nk - s * mr < mr ? nk - s * mr : mr), A->p->dqk, mr, 1.f,
                       dst + s * mr * A->p->dqk);
}

/* Rows [0, nk) of V from src (row stride ld) copied into the transposed
 * path's A panels at their key offset dst: strips of Vᵀ rows (tv_strip;
 * k = keys), `strip` floats apart. */
static void tcopy_v(const sd_args *A, const float *src, int64_t ld, int64_t nk, float *dst, size_t strip) {
    const int mr = A->qk.uk->mr;
    const int64_t last = A->p->dv / mr - 1;
    if (!A->tv_split) {
        A->pan->pack_rows(src, ld, nk, A->p->dv, mr, dst, strip);
        return;
    }
    A->pan->pack_rows(src, ld, nk, last * mr, mr, dst, strip);
    for (int64_t s = last; s <= last + 1; ++s) {
        int64_t d0;
        int rows;
        tv_strip(A, s, &d0, &rows);
        A->pan->pack_rows(src + d0, ld, nk, rows, mr, dst + s * strip, strip);
    }
}

/* Keys [j0, j0+nk) of K (or V) as the transposed path's A panels: K in
 * strips of MR keys (k = D), V in strips of Vᵀ rows (tv_strip; k = the nk
 * keys).  Rows tcopied accepts are copied by the column operations,
 * anything else packed by the GEMM packing. */
static bool tpack(const sd_args *A, bool is_v, const int64_t *bo, int64_t j0, int64_t nk, void *dst) {
    const sd_plan *p = A->p;
    const sd_operand *o = is_v ? &p->v : &p->k;
    const pt_gemm_operand *op = is_v ? &A->vop : &A->kop;
    const sd_view *v = &p->views[o->src];
    if (tcopied(A, is_v)) {
        const float *src = (const float *)A->base[o->src] + bo[o->src] + j0 * v->rs;
        if (is_v) tcopy_v(A, src, v->rs, nk, dst, (size_t)A->qk.uk->mr * (size_t)nk);
        else tcopy_k(A, src, v->rs, nk, dst);
        return true;
    }
    return is_v ? pack_direct(A, &A->pv, false, o, op, bo, 0, p->dv, j0, nk, dst)
                : pack_direct(A, &A->qk, false, o, op, bo, j0, nk, 0, p->dqk, dst);
}

/* What identifies the item's K (or V) head in the thread's cache tags:
 * the batch offsets of its data, scales and zero points. */
static void head_key(const sd_item *B, bool is_v, int64_t key[3]) {
    const sd_operand *o = is_v ? &B->A->p->v : &B->A->p->k;
    const int64_t *bo = B->boff[0];
    key[0] = bo[o->src], key[1] = o->sc >= 0 ? bo[o->sc] : -1, key[2] = o->zp >= 0 ? bo[o->zp] : -1;
}

/* The item's K (or V) head as whole-head panels in the thread's scratch,
 * packed unless the thread's previous item left that head there (items of
 * a head are consecutive); NULL where the head is packed block by block.
 * The same panel values per block either way. */
static const char *cached_head(const sd_item *B, bool is_v) {
    const sd_args *A = B->A;
    const sd_plan *p = A->p;
    if (!(is_v ? A->v_cache : A->k_cache)) return NULL;
    const sd_operand *o = is_v ? &p->v : &p->k;
    const int64_t *bo = B->boff[0];
    int64_t *tag = SCR(B, int64_t, tags) + (is_v ? 3 : 0);
    int64_t key[3];
    head_key(B, is_v, key);
    char *dst = is_v ? SCR(B, char, vhead) : SCR(B, char, khead);
    if (memcmp(tag, key, sizeof key) == 0) return dst;
    /* The transposed path reads both as A panels (keys / Dv rows in strips of MR). */
    const bool ok = A->tpanel ? tpack(A, is_v, bo, 0, p->skv, dst)
                    : is_v    ? pack_direct(A, &A->pv, true, o, &A->vop, bo, 0, p->dv, 0, p->skv, dst)
                              : pack_direct(A, &A->qk, true, o, &A->kop, bo, 0, p->skv, 0, p->dqk, dst);
    if (!ok) {
        tag[0] = INT64_MIN;
        return NULL;
    }
    memcpy(tag, key, sizeof key);
    return dst;
}

/* The transposed path's K and V heads (cached_head).  Where both are to be
 * copied anew they are copied together, strip of keys by strip: the rows of
 * each lie on pages of their own (4 KiB apart in BERT's layout), and two
 * streams of them keep more fetches in flight than one after the other
 * (BERT-large f32: median time to pack a head's K and V about 17 % lower). */
static void cached_heads(sd_item *B) {
    const sd_args *A = B->A;
    const sd_plan *p = A->p;
    int64_t *tags = SCR(B, int64_t, tags), kkey[3], vkey[3];
    head_key(B, false, kkey);
    head_key(B, true, vkey);
    if (A->k_cache && A->v_cache && tcopied(A, false) && tcopied(A, true) &&
        memcmp(tags, kkey, sizeof kkey) != 0 && memcmp(tags + 3, vkey, sizeof vkey) != 0) {
        const int mr = A->qk.uk->mr;
        const sd_view *kv = &p->views[p->k.src], *vv = &p->views[p->v.src];
        const float *ks = (const float *)A->base[p->k.src] + B->boff[0][p->k.src];
        const float *vs = (const float *)A->base[p->v.src] + B->boff[0][p->v.src];
        float *kd = SCR(B, float, khead), *vd = SCR(B, float, vhead);
        for (int64_t j0 = 0; j0 < p->skv; j0 += mr) {
            const int64_t n = p->skv - j0 < mr ? p->skv - j0 : mr;
            tcopy_k(A, ks + j0 * kv->rs, kv->rs, n, kd + j0 * p->dqk);
            tcopy_v(A, vs + j0 * vv->rs, vv->rs, n, vd + j0 * mr, (size_t)mr * (size_t)p->skv);
        }
        memcpy(tags, kkey, sizeof kkey);
        memcpy(tags + 3, vkey, sizeof vkey);
    }
    B->khead = cached_head(B, false);
    B->vhead = cached_head(B, true);
}

/* S = the chain applied to Q·Kᵀ for keys [j0, j0+nk), K read from its
 * whole-head panels (key strips of nr; j0 is a multiple of nr). */
static void packed_scores(const sd_item *B, int64_t j0, int nk, float *s, int64_t ld) {
    const sd_args *A = B->A;
    const sd_plan *p = A->p;
    const pt_gemm_ukernel *uk = A->qk.uk;
    const int64_t kcp = pt_gemm_kc_padded(uk, p->dqk);
    const char *kpan = B->khead + (size_t)j0 * (size_t)kcp * pt_gemm_panel_elem_bytes(uk->kind);
    run_tiles(uk, kcp, SCR(B, void, qpan), B->rows, kpan, nk, s, ld, 0);
    score_chain(B, j0, nk, s, ld);
}

/* Whether the causal mask removes keys [j0, j0+nk) from every row of the item. */
static bool block_skipped(const sd_item *B, int64_t j0, int nk) {
    const sd_args *A = B->A;
    if (A->skip_step < 0) return false;
    for (int r = 0; r < B->mq; ++r)
        if (!causal_all_masked(A, A->skip_step, B->i0 + r, j0, nk)) return false;
    return true;
}

/* P (in S) into A panels, V block into B panels, O += P·V. */
static void block_pv(const sd_item *B, int64_t j0, int nk, dnnl_data_type_t tp, dnnl_data_type_t tv) {
    const sd_args *A = B->A;
    const sd_plan *p = A->p;
    const int64_t DV = p->dv;
    void *ppan = SCR(B, void, ppan), *vpan = SCR(B, void, vpan);
    const int64_t *vb = B->boff[0];
    if (B->decode) {
        /* V streams once: O row += p · V row, skipping weights of 0 (masked keys). */
        float *vf = SCR(B, float, vf), *s = SCR(B, float, s), *acc = SCR(B, float, acc);
        const pt_sdpa_row_ops *ops = pt_sdpa_rows();
        const void *vq;
        int64_t ld, run;
        int sgn;
        float sc[SD_Q8_PARAMS], zp[SD_Q8_PARAMS];
        pt_sdpa_qrows vr;
        if (qrows_layout(A, vb, &p->v, j0, DV, &vr)) {
            /* Keys in chunks whose parameters fit sc / zp (as for K). */
            const int step = (int)(SD_Q8_PARAMS / vr.nruns);
            float ys[SD_SPLIT_MAX];
            if (A->px_pack_rounds && tp == dnnl_bf16)
                for (int r = 0; r < B->rows; ++r) round_row(dnnl_bf16, s + (size_t)r * B->bk, nk);
            for (int c0 = 0; c0 < nk; c0 += step) {
                const int n = nk - c0 < step ? nk - c0 : step;
                qrows_block(A, vb, &p->v, j0 + c0, n, DV, &vr, sc, zp);
                for (int r = 0; r < B->rows; ++r) {
                    const float *prow = s + (size_t)r * B->bk + c0;
                    float *arow = acc + (size_t)r * DV;
                    if (vr.bits == 4) {
                        split_pairs(arow, DV, ys);
                        ops->axpys_q(ys, DV, &vr, n, prow);
                        join_pairs(ys, DV, arow);
                    } else {
                        ops->axpys_q(arow, DV, &vr, n, prow);
                    }
                }
            }
            return;
        }
        dnnl_data_type_t vdt;
        if (float_rows(A, vb, &p->v, j0, &vq, &vdt, &ld)) {
            for (int r = 0; r < B->rows; ++r) {
                float *prow = s + (size_t)r * B->bk, *arow = acc + (size_t)r * DV;
                if (A->px_pack_rounds && tp == dnnl_bf16) round_row(dnnl_bf16, prow, nk);
                if (vdt != dnnl_f32) {
                    ops->axpys_h(arow, DV, (const uint16_t *)vq, vdt == dnnl_f16, nk, ld, prow);
                    continue;
                }
                for (int c = 0; c < nk; ++c)
                    if (prow[c] != 0.f) ops->axpy(arow, (const float *)vq + c * ld, DV, prow[c]);
            }
            return;
        }
        const bool q8 = q8_rows(A, vb, &p->v, j0, nk, DV, &vq, &ld, &sgn, &run, sc, zp);
        const int64_t nruns = q8 ? (DV + run - 1) / run : 0;
        if (!q8) load_operand(A, vb, &p->v, j0, nk, DV, vf, (size_t)DV);
        for (int r = 0; r < B->rows; ++r) {
            float *prow = s + (size_t)r * B->bk, *arow = acc + (size_t)r * DV;
            if (A->px_pack_rounds && tp == dnnl_bf16) round_row(dnnl_bf16, prow, nk);
            for (int c = 0; c < nk; ++c) {
                if (prow[c] == 0.f) continue;
                if (q8)
                    ops->axpy_q8(arow, (const int8_t *)vq + c * ld, sgn, DV, run, prow[c], sc + c * nruns,
                                 zp + c * nruns);
                else
                    ops->axpy(arow, vf + (size_t)c * DV, DV, prow[c]);
            }
        }
        return;
    }
    pack_staged(&A->pv, false, SCR(B, float, s), B->bk, 1, B->rows, nk, tp, ppan);
    if (!A->v_direct || !pack_direct(A, &A->pv, true, &p->v, &A->vop, vb, 0, DV, j0, nk, vpan)) {
        float *vf = SCR(B, float, vf);
        load_operand(A, vb, &p->v, j0, nk, DV, vf, (size_t)DV);
        pack_staged(&A->pv, true, vf, 1, DV, DV, nk, tv, vpan);
    }
    run_tiles(A->pv.uk, pt_gemm_kc_padded(A->pv.uk, nk), ppan, B->rows, vpan, (int)DV, SCR(B, float, acc), DV, 1);
}

/* P (row stride ld) into A panels, O += P·V with V read from its
 * whole-head panels: keys [j0, j0+nk) sit at k offset j0 (a multiple of the k group)
 * of every strip, the same values a block's own panels would hold. */
static void packed_pv(const sd_item *B, int64_t j0, int nk, dnnl_data_type_t tp, const float *P, int64_t ld) {
    const sd_args *A = B->A;
    const sd_plan *p = A->p;
    const pt_gemm_ukernel *uk = A->pv.uk;
    const size_t eb = pt_gemm_panel_elem_bytes(uk->kind);
    void *ppan = SCR(B, void, ppan);
    pack_staged(&A->pv, false, P, ld, 1, B->rows, nk, tp, ppan);
    const char *head = B->vhead;
    const size_t bstrip = (size_t)uk->nr * (size_t)pt_gemm_kc_padded(uk, p->skv) * eb;
    run_tiles_strided(uk, pt_gemm_kc_padded(uk, nk), ppan, B->rows, head + (size_t)j0 * (size_t)uk->nr * eb, bstrip,
                      (int)p->dv, SCR(B, float, acc), p->dv, 1);
}

/* P's transforms on row r (keys [j0, j0+nk)) of the item, in place. */
static void px_row(const sd_item *B, int r, int64_t j0, float *x, int nk) {
    const sd_args *A = B->A;
    const sd_plan *p = A->p;
    if (p->npx == 0 || A->px_pack_rounds) return;
    const int seg = r / B->mq;
    const int64_t i = B->i0 + r % B->mq;
    if (p->dropout) {
        for (int c = 0; c < nk; ++c) x[c] = apply_px(A, B->boff[seg], B->bseg[seg], i, j0 + c, x[c]);
        return;
    }
    /* Without Dropout every transform is the same for the whole row: one
     * pass per transform. */
    for (int t = 0; t < p->npx; ++t) {
        const sd_xform *xf = &p->px[t];
        if (xf->kind == SD_X_QUANT) pt_sdpa_rows()->mul_add(x, nk, xf->inv, xf->has_zp ? xf->zp : 0.f);
        else if (xf->kind == SD_X_DEQUANT) pt_sdpa_rows()->sub_mul(x, nk, xf->has_zp ? xf->zp : 0.f, xf->scale);
        round_row(xf->dt, x, nk);
    }
}

/* A row with no finite score so far: P is 0 (Dropout still writes its mask). */
static void zero_row(const sd_item *B, int r, int64_t j0, float *x, int nk) {
    memset(x, 0, sizeof(float) * (size_t)nk);
    if (B->A->p->vmask >= 0) px_row(B, r, j0, x, nk);
}

static void finish_item(const sd_item *B, bool written);

/* O's transforms that are only roundings to its own float type: stored by
 * one conversion loop. */
static bool out_plain(const sd_plan *p) {
    const sd_view *o = &p->views[p->vo];
    bool plain = o->dt == dnnl_f32 || o->dt == dnnl_bf16 || o->dt == dnnl_f16;
    for (int t = 0; t < p->nox; ++t)
        if (p->ox[t].kind != SD_X_ROUND || (p->ox[t].dt != dnnl_f32 && p->ox[t].dt != o->dt)) plain = false;
    return plain;
}

static void run_item(const sd_item *B) {
    const sd_args *A = B->A;
    const sd_plan *p = A->p;
    const pt_vec_ops *vec = A->vec;
    const int64_t D = p->dqk, DV = p->dv, SKV = p->skv;
    const int bk = B->bk, rows = B->rows;
    const dnnl_data_type_t tk = operand_type(p, &p->k), tv = operand_type(p, &p->v), tp = A->tp;

    float *qf = SCR(B, float, qf), *s = SCR(B, float, s), *acc = SCR(B, float, acc);
    float *mrow = SCR(B, float, m), *lrow = SCR(B, float, l);
    for (int g = 0; g < B->nseg; ++g)
        load_operand(A, B->boff[g], &p->q, B->i0, B->mq, D, qf + (size_t)g * B->mq * D, (size_t)D);
    /* Decode items read Q as stored and take the step as it is. */
    if (A->fold_step >= 0 && !B->decode) vec->scale(qf, (int64_t)rows * D, A->fold_factor);
    if (!B->decode) pack_staged(&A->qk, false, qf, D, 1, rows, D, operand_type(p, &p->q), SCR(B, void, qpan));
    for (int r = 0; r < rows; ++r) mrow[r] = -INFINITY, lrow[r] = 0.f;
    memset(acc, 0, sizeof(float) * (size_t)rows * (size_t)DV);

    /* Two passes over heads with panels in scratch: pass 1 keeps the
     * scores of every key for pass 2 instead of recomputing them. */
    float *kept = !p->one_pass && B->khead && B->vhead && p->keep_scores ? SCR(B, float, kept) : NULL;
    const int64_t ld = kept ? SKV : bk;
    /* Kept scores of one block of all keys: pass 1's max is final, so its
     * exponentials are pass 2's numerators; they stay in place of the
     * scores, and pass 2 only divides them. */
    const bool kept_exps = kept && SKV <= bk;
    if (!p->one_pass) {
        /* Pass 1: each row's max and sum of exp(s - max), online. */
        for (int64_t j0 = 0; j0 < SKV; j0 += bk) {
            const int nk = (int)(SKV - j0 < bk ? SKV - j0 : bk);
            if (block_skipped(B, j0, nk)) continue;
            float *sb = kept ? kept + j0 : s;
            if (B->khead) packed_scores(B, j0, nk, sb, ld);
            else block_scores(B, j0, nk, tk);
            for (int r = 0; r < rows; ++r) {
                float *srow = sb + (size_t)r * (size_t)ld;
                const float mx = vec->max(srow, nk), mnew = mx > mrow[r] ? mx : mrow[r];
                if (mnew == -INFINITY) continue;
                const float alpha = mrow[r] == -INFINITY ? 0.f : expf(mrow[r] - mnew);
                float *e = srow;
                if (kept && !kept_exps) { /* the exponentials go to a copy: pass 2 needs the scores */
                    e = s + (size_t)r * bk;
                    memcpy(e, srow, sizeof(float) * (size_t)nk);
                }
                lrow[r] = lrow[r] * alpha + vec->exp_sum(e, nk, mnew);
                mrow[r] = mnew;
            }
        }
    }
    /* One pass (online max / sum, accumulator rescaled), or pass 2 (P as
     * SoftMax writes it, through its transforms). */
    for (int64_t j0 = 0; j0 < SKV; j0 += bk) {
        const int nk = (int)(SKV - j0 < bk ? SKV - j0 : bk);
        if (block_skipped(B, j0, nk)) continue;
        float *sb = kept ? kept + j0 : s;
        if (kept) {
            /* scores of pass 1 */
        } else if (B->khead) {
            packed_scores(B, j0, nk, s, bk);
        } else {
            block_scores(B, j0, nk, tk);
        }
        for (int r = 0; r < rows; ++r) {
            float *srow = sb + (size_t)r * (size_t)ld;
            if (!p->one_pass) {
                if (mrow[r] == -INFINITY) {
                    zero_row(B, r, j0, srow, nk);
                    continue;
                }
                if (!kept_exps) vec->exp_sum(srow, nk, mrow[r]);
                const float sum = lrow[r];
                /* Divided as SoftMax divides (the vector rows give the
                 * same quotients as scalar f32 division). */
                if (!vec->binary(dnnl_graph_op_divide, srow, srow, 1, &sum, 0, nk))
                    for (int c = 0; c < nk; ++c) srow[c] = srow[c] / sum;
                px_row(B, r, j0, srow, nk);
                continue;
            }
            const float mx = vec->max(srow, nk), mnew = mx > mrow[r] ? mx : mrow[r];
            if (mnew == -INFINITY) {
                zero_row(B, r, j0, srow, nk);
                continue;
            }
            if (mrow[r] != mnew && mrow[r] != -INFINITY) {
                const float alpha = expf(mrow[r] - mnew);
                vec->scale(acc + (size_t)r * DV, DV, alpha);
                lrow[r] *= alpha;
            }
            /* Dropout scales the numerator only: the normaliser is the softmax sum. */
            lrow[r] += vec->exp_sum(srow, nk, mnew);
            mrow[r] = mnew;
            px_row(B, r, j0, srow, nk);
        }
        if (B->vhead) packed_pv(B, j0, nk, tp, sb, ld);
        else block_pv(B, j0, nk, tp, tv);
    }
    finish_item(B, false);
}

/* The item's output rows (and stats) from its accumulators, row max and
 * sum; `written`: the rows with a finite score are in the output already. */
static void finish_item(const sd_item *B, bool written) {
    const sd_args *A = B->A;
    const sd_plan *p = A->p;
    const pt_vec_ops *vec = A->vec;
    const int64_t DV = p->dv, SKV = p->skv;
    const int rows = B->rows;
    const float *acc = SCR(B, float, acc), *mrow = SCR(B, float, m), *lrow = SCR(B, float, l);

    /* A row without any finite score is fully masked: zeros and stats 0
     * with inf_as_zero or without keys, NaN otherwise (docs/numerics.md). */
    const float masked = (p->inf_as_zero || SKV == 0) ? 0.f : NAN;
    float *orow = SCR(B, float, orow);
    const sd_view *o = &p->views[p->vo];
    const bool plain = out_plain(p);
    for (int r = 0; r < rows; ++r) {
        const int seg = r / B->mq;
        const int64_t i = B->i0 + r % B->mq;
        const bool empty = mrow[r] == -INFINITY;
        if (written && !empty) goto stats;
        const float *arow = acc + (size_t)r * DV;
        const float inv = p->one_pass ? 1.f / lrow[r] : 1.f;
        const int64_t ro = B->boff[seg][p->vo] + i * o->rs, cs = o->cs;
        const bool direct = plain && o->dt == dnnl_f32 && cs == 1;
        float *dst = direct ? (float *)A->base[p->vo] + ro : orow;
        /* The vector row's multiply (the same products): the passes that
         * follow load what it stores at their width, which scalar stores
         * would not forward. */
        if (empty || !vec->binary(dnnl_graph_op_multiply, dst, arow, 1, &inv, 0, DV))
            for (int64_t d = 0; d < DV; ++d) dst[d] = empty ? masked : arow[d] * inv;
        if (direct) {
            /* written in place */
        } else if (plain && o->dt == dnnl_f32) {
            float *out = (float *)A->base[p->vo] + ro;
            for (int64_t d = 0; d < DV; ++d) out[d * cs] = orow[d];
        } else if (plain) {
            uint16_t *out = (uint16_t *)A->base[p->vo] + ro;
            if (o->dt == dnnl_bf16 && cs == 1)
                vec->f32_to_bf16(out, orow, DV);
            else if (o->dt == dnnl_bf16)
                for (int64_t d = 0; d < DV; ++d) out[d * cs] = pt_bf16_bits_rne(orow[d]);
            else if (cs == 1)
                vec->f32_to_f16(out, orow, DV); /* the same rounding on the vector row */
            else
                for (int64_t d = 0; d < DV; ++d) out[d * cs] = pt_f32_to_f16(orow[d]);
        } else {
            /* O's transforms, one pass each over the row, then the store. */
            for (int t = 0; t < p->nox; ++t) {
                const sd_xform *x = &p->ox[t];
                if (x->kind == SD_X_QUANT) pt_sdpa_rows()->mul_add(orow, DV, x->inv, x->has_zp ? x->zp : 0.f);
                round_row(x->dt, orow, (int)DV);
            }
            /* The values are integers of the type's range by now, which the
             * vector conversions keep (one store per 16 rather than a byte
             * store each). */
            if (o->dt == dnnl_u8 && cs == 1) {
                vec->f32_to_u8((uint8_t *)A->base[p->vo] + ro, orow, DV);
            } else if (o->dt == dnnl_s8 && cs == 1) {
                vec->f32_to_s8((int8_t *)A->base[p->vo] + ro, orow, DV);
            } else if (o->dt == dnnl_u8) {
                uint8_t *out = (uint8_t *)A->base[p->vo] + ro;
                for (int64_t d = 0; d < DV; ++d) out[d * cs] = (uint8_t)(int)orow[d];
            } else if (o->dt == dnnl_s8) {
                int8_t *out = (int8_t *)A->base[p->vo] + ro;
                for (int64_t d = 0; d < DV; ++d) out[d * cs] = (int8_t)(int)orow[d];
            } else {
                for (int64_t d = 0; d < DV; ++d) pt_elem_store((void *)A->base[p->vo], o->dt, ro + d * cs, orow[d]);
            }
        }
    stats:
        if (p->vstats >= 0) {
            const sd_view *sv = &p->views[p->vstats];
            pt_elem_store((void *)A->base[p->vstats], sv->dt, B->boff[seg][p->vstats] + i * sv->rs,
                          empty ? masked : mrow[r] + logf(lrow[r]));
        }
    }
}

/* ---- the transposed f32 path ------------------------------------------------------ */

/* Sᵀ = K·Qᵀ on the microkernel with K as A panels (MR keys a strip, k = D)
 * and a block of NR queries as one B panel: the tile is [key][query], and
 * the block's scores stored NR apart per key are the B panel of the second
 * product as they stand, so Oᵀ += Vᵀ·Pᵀ takes V as A panels (MR values of
 * Dv a strip, k = keys) and P without packing.  The softmax over keys runs
 * lane-wise down the rows (pt_sdpa_panel_ops); Oᵀ is transposed once at the
 * end of the item.  K / V A panels are whole heads in the thread's scratch
 * (cached_head) or packed per key block and shared by every query block of
 * the item. */

/* One query block: its columns q < nq are item rows r0 + q, of segment
 * seg[q] and query row i[q]. */
typedef struct {
    int r0, nq;
    int seg[SD_TNR];
    int64_t i[SD_TNR];
} sd_tcols;

static inline float tcol_load(const sd_item *B, const sd_tcols *T, int view, int q, int64_t j) {
    const sd_args *A = B->A;
    const sd_view *v = &A->p->views[view];
    return pt_elem_load(A->base[view], v->dt, view_off(v, B->boff[T->seg[q]][view], T->i[q], j));
}

/* Whether a view holds one value per key for every column of the block
 * (broadcast over query rows, the same batch offset for each segment). */
static bool tcol_uniform(const sd_item *B, const sd_tcols *T, int view) {
    const sd_view *v = &B->A->p->views[view];
    if (v->grouped || v->rs != 0) return false;
    for (int q = 1; q < T->nq; ++q)
        if (B->boff[T->seg[q]][view] != B->boff[T->seg[0]][view]) return false;
    return true;
}

static void round_rows(dnnl_data_type_t dt, float *x, int nk, int w) {
    if (dt == dnnl_f32) return;
    for (int jj = 0; jj < nk; ++jj) round_row(dt, x + (size_t)jj * w, w);
}

/* A last Add of one value per key (a padding mask) of the score chain is
 * left to the max pass: *add gets those values for keys [j0, j0+nk) (NULL
 * when the chain has none).  Returns how many steps tchain then applies. */
static int tchain_peel(const sd_item *B, const sd_tcols *T, int64_t j0, int nk, const float **add) {
    const sd_args *A = B->A;
    const sd_plan *p = A->p;
    int last = p->nsteps;
    *add = NULL;
    if (last > 0) {
        const sd_step *st = &p->steps[last - 1];
        if (st->kind == SD_ADD && st->dt == dnnl_f32 && last - 1 != A->fold_step && tcol_uniform(B, T, st->a)) {
            const sd_view *v = &p->views[st->a];
            const int64_t off = B->boff[T->seg[0]][st->a] + j0 * v->cs;
            if (v->dt == dnnl_f32 && v->cs == 1) {
                *add = (const float *)A->base[st->a] + off;
            } else {
                float *t = SCR(B, float, tadd);
                for (int jj = 0; jj < nk; ++jj) t[jj] = pt_elem_load(A->base[st->a], v->dt, off + jj * v->cs);
                *add = t;
            }
            --last;
        }
    }
    return last;
}

/* Whether the chain's first `last` steps leave f32 scores as they are (no
 * steps, or only the scale folded into Q). */
static bool tchain_none(const sd_args *A, int last) {
    const sd_plan *p = A->p;
    if (p->s_dt != dnnl_f32) return false;
    for (int s = 0; s < last; ++s)
        if (s != A->fold_step || p->steps[s].dt != dnnl_f32) return false;
    return true;
}

/* The score chain's first `last` steps (tchain_peel) on a block's scores
 * x[jj·w + q] (key j0 + jj, column q). */
static void tchain(const sd_item *B, const sd_tcols *T, int64_t j0, int nk, int w, float *x, int last) {
    const sd_args *A = B->A;
    const sd_plan *p = A->p;
    round_rows(p->s_dt, x, nk, w);
    for (int s = 0; s < last; ++s) {
        const sd_step *st = &p->steps[s];
        if (s == A->fold_step) { /* applied to Q */
            round_rows(st->dt, x, nk, w);
            continue;
        }
        const sd_view *va = st->a >= 0 ? &p->views[st->a] : NULL;
        switch (st->kind) {
            case SD_MUL:
            case SD_DIV:
            case SD_ADD:
                if (tcol_uniform(B, T, st->a)) {
                    const int64_t off = B->boff[T->seg[0]][st->a] + j0 * va->cs;
                    for (int jj = 0; jj < nk; ++jj) {
                        const float f = pt_elem_load(A->base[st->a], va->dt, off + jj * va->cs);
                        float *r = x + (size_t)jj * w;
                        /* A scale multiplies by its reciprocal as binary_row does. */
                        if (st->kind == SD_ADD)
                            for (int q = 0; q < w; ++q) r[q] = r[q] + f;
                        else if (st->kind == SD_MUL || va->cs == 0)
                            A->vec->scale(r, w, st->kind == SD_MUL ? f : 1.f / f);
                        else
                            for (int q = 0; q < w; ++q) r[q] = r[q] / f;
                    }
                    break;
                }
                if (st->kind == SD_ADD && va->dt == dnnl_f32 && va->cs == 1 && !va->grouped) {
                    /* A mask row per query (a mask over (query, key)). */
                    const float *src[SD_TNR];
                    for (int q = 0; q < T->nq; ++q)
                        src[q] = (const float *)A->base[st->a] + view_off(va, B->boff[T->seg[q]][st->a], T->i[q], j0);
                    A->pan->add_cols(x, nk, w, T->nq, src);
                    break;
                }
                for (int jj = 0; jj < nk; ++jj)
                    for (int q = 0; q < T->nq; ++q) {
                        const float a = tcol_load(B, T, st->a, q, j0 + jj);
                        float *e = x + (size_t)jj * w + q;
                        *e = st->kind == SD_MUL ? *e * a : st->kind == SD_DIV ? *e / a : *e + a;
                    }
                break;
            case SD_SELECT: {
                const sd_view *vb = &p->views[st->b];
                const bool byte_cond = (va->dt == dnnl_boolean || va->dt == dnnl_u8 || va->dt == dnnl_s8) &&
                                       va->cs == 1 && !va->grouped;
                if (byte_cond && vb->cs == 0 && vb->rs == 0 && !vb->grouped) {
                    /* A byte condition row per query and one fill value per segment. */
                    for (int q = 0; q < T->nq; ++q) {
                        const uint8_t *c = (const uint8_t *)A->base[st->a] +
                                           view_off(va, B->boff[T->seg[q]][st->a], T->i[q], j0);
                        const float other = tcol_load(B, T, st->b, q, j0);
                        for (int jj = 0; jj < nk; ++jj)
                            if ((c[jj] != 0) != st->keep_true) x[(size_t)jj * w + q] = other;
                    }
                    break;
                }
                for (int jj = 0; jj < nk; ++jj)
                    for (int q = 0; q < T->nq; ++q)
                        if ((tcol_load(B, T, st->a, q, j0 + jj) != 0.f) != st->keep_true)
                            x[(size_t)jj * w + q] = tcol_load(B, T, st->b, q, j0 + jj);
                break;
            }
            case SD_CAUSAL: {
                const bool off = st->add >= 0;
                const int64_t delta = off ? A->causal_delta[s] : 0;
                for (int jj = 0; jj < nk; ++jj)
                    for (int q = 0; q < T->nq; ++q) {
                        const int64_t i = T->i[q], j = j0 + jj;
                        bool holds;
                        if (A->causal_int[s]) { /* causal_cond_range's three forms */
                            if (st->lhs_col && !st->rhs_col) holds = j + delta >= i;
                            else if (!st->lhs_col && st->rhs_col) holds = i + delta >= j;
                            else holds = delta >= 0;
                        } else {
                            holds = sd_causal_side(st->lhs_col, i, j, off, A->add[s], A->sub[s]) >=
                                    sd_causal_side(st->rhs_col, i, j, false, 0.f, 0.f);
                        }
                        if (holds != st->keep_true) x[(size_t)jj * w + q] = tcol_load(B, T, st->a, q, j);
                    }
                break;
            }
            case SD_TANH:
                for (int e = 0; e < nk * w; ++e) x[e] = tanhf(x[e]);
                break;
        }
        round_rows(st->dt, x, nk, w);
    }
}

/* Whether the causal mask removes keys [j0, j0+nk) from every query of the block. */
static bool tblock_skipped(const sd_item *B, const sd_tcols *T, int64_t j0, int nk) {
    const sd_args *A = B->A;
    if (A->skip_step < 0) return false;
    for (int q = 0; q < T->nq; ++q)
        if (!causal_all_masked(A, A->skip_step, T->i[q], j0, nk)) return false;
    return true;
}

/* Oᵀ += Vᵀ·Pᵀ for a block of nk keys: V strips (tv_strip) vstrip floats
 * apart, P the block's probabilities [key][w]. */
static void tpv(const sd_args *A, int nk, const float *vp, size_t vstrip, const float *P, float *o) {
    const pt_gemm_ukernel *uk = A->qk.uk;
    const int mr = uk->mr, w = uk->nr;
    for (int64_t s = 0; s * mr < A->p->dv; ++s) {
        int64_t d0;
        int dr;
        tv_strip(A, s, &d0, &dr);
        uk->run(nk, vp + (size_t)s * vstrip, P, o + d0 * w, w, dr, w, 1);
    }
}

static void run_item_panels(const sd_item *B) {
    const sd_args *A = B->A;
    const sd_plan *p = A->p;
    const pt_gemm_ukernel *uk = A->qk.uk;
    const pt_sdpa_panel_ops *pan = A->pan;
    const int mr = uk->mr, w = uk->nr;
    const int64_t D = p->dqk, DV = p->dv, SKV = p->skv;
    const int rows = B->rows, nqb = (rows + w - 1) / w;
    float *qf = SCR(B, float, qf), *qt = SCR(B, float, tq), *ot = SCR(B, float, tacc);
    float *tm = SCR(B, float, tm), *tl = SCR(B, float, tl), *st = SCR(B, float, tst);

    /* Qᵀ panels: straight from a dense f32 Q of one segment, else from f32
     * staging rows; the column operations copy (and scale by a folded
     * power of two, exact) unless the math mode rounds the operand. */
    const sd_view *qv = &p->views[p->q.src];
    const float fold = A->fold_step >= 0 ? A->fold_factor : 1.f;
    const dnnl_data_type_t tq = operand_type(p, &p->q);
    const bool copy = A->qk.round == dnnl_fpmath_mode_strict;
    const float *qsrc = qf;
    int64_t qld = D;
    if (copy && B->nseg == 1 && qv->dt == dnnl_f32 && qv->cs == 1 && p->q.sc < 0 && tq == dnnl_f32 &&
        p->q.ndts == 0) {
        qsrc = (const float *)A->base[p->q.src] + B->boff[0][p->q.src] + B->i0 * qv->rs;
        qld = qv->rs;
    } else {
        for (int g = 0; g < B->nseg; ++g)
            load_operand(A, B->boff[g], &p->q, B->i0, B->mq, D, qf + (size_t)g * B->mq * D, (size_t)D);
        if (!copy && A->fold_step >= 0) A->vec->scale(qf, (int64_t)rows * D, fold);
    }
    for (int qb = 0; qb < nqb; ++qb) {
        const int nq = rows - qb * w < w ? rows - qb * w : w;
        if (copy)
            pan->pack_t(qsrc + (size_t)qb * w * qld, qld, nq, D, w, fold, qt + (size_t)qb * w * D);
        else
            pack_staged(&A->qk, true, qf + (size_t)qb * w * D, D, 1, nq, D, tq, qt + (size_t)qb * w * D);
    }
    for (int e = 0; e < nqb * w; ++e) tm[e] = -INFINITY, tl[e] = 0.f;
    memset(ot, 0, sizeof(float) * (size_t)nqb * (size_t)w * (size_t)DV);

    /* Keys per block: SD_TBK over whole-head panels, else what the block
     * buffers kpan / vpan hold (whole strips of K). */
    /* Scores and their max in one pass where the column operations have it
     * for the microkernel's tile and the chain leaves the scores as they are
     * but for the per-key Add. */
    const bool fused = pan->scores_max && pan->score_mr == mr && pan->score_w == w;
    const bool heads = B->khead && B->vhead;
    const int64_t tb = heads ? SD_TBK : p->bk >= mr ? p->bk / mr * mr : p->bk;
    float *kpan = SCR(B, float, kpan), *vpan = SCR(B, float, vpan);
    for (int64_t j0 = 0; j0 < SKV; j0 += tb) {
        const int nk = (int)(SKV - j0 < tb ? SKV - j0 : tb);
        const float *kp, *vp;
        size_t vstrip;
        if (heads) {
            kp = (const float *)B->khead + j0 * D; /* strip j0 / MR */
            vp = (const float *)B->vhead + j0 * mr;
            vstrip = (size_t)mr * (size_t)SKV;
        } else {
            /* Float K / V (the path's condition): always packed. */
            (void)tpack(A, false, B->boff[0], j0, nk, kpan);
            (void)tpack(A, true, B->boff[0], j0, nk, vpan);
            kp = kpan, vp = vpan;
            vstrip = (size_t)mr * (size_t)nk;
        }
        for (int qb = 0; qb < nqb; ++qb) {
            sd_tcols T;
            T.r0 = qb * w;
            T.nq = rows - T.r0 < w ? rows - T.r0 : w;
            for (int q = 0; q < T.nq; ++q) {
                const int r = T.r0 + q;
                T.seg[q] = r / B->mq;
                T.i[q] = B->i0 + r % B->mq;
            }
            if (tblock_skipped(B, &T, j0, nk)) continue;
            const float *qpan = qt + (size_t)qb * w * D;
            const float *add;
            const int steps = tchain_peel(B, &T, j0, nk, &add);
            float *m = tm + (size_t)qb * w, *l = tl + (size_t)qb * w, *o = ot + (size_t)qb * w * DV;
            float mold[SD_TNR], alpha[SD_TNR], sub[SD_TNR];
            memcpy(mold, m, sizeof(float) * (size_t)w);
            if (fused && tchain_none(A, steps)) {
                pan->scores_max(D, kp, nk, qpan, add, st, m);
            } else {
                for (int k = 0; k < nk; k += mr)
                    uk->run(D, kp + (size_t)k * D, qpan, st + (size_t)k * w, w, nk - k < mr ? nk - k : mr, w, 0);
                tchain(B, &T, j0, nk, w, st, steps);
                pan->max_rows(st, nk, w, add, m);
            }
            bool rescale = false;
            for (int q = 0; q < w; ++q) {
                alpha[q] = 1.f;
                if (m[q] != mold[q]) {
                    alpha[q] = mold[q] == -INFINITY ? 0.f : expf(mold[q] - m[q]);
                    /* A column whose max was -inf holds +0 (or NaN from NaN
                     * scores), which scaling by 0 leaves as it is. */
                    rescale = rescale || mold[q] != -INFINITY;
                }
                sub[q] = m[q] == -INFINITY ? 0.f : m[q]; /* all scores -inf: exp gives 0 */
            }
            if (rescale) {
                pan->scale_rows(o, DV, w, alpha);
                for (int q = 0; q < w; ++q) l[q] *= alpha[q];
            }
            pan->exp_rows(st, nk, w, sub, l);
            tpv(A, nk, vp, vstrip, st, o);
        }
    }

    float *acc = SCR(B, float, acc), *mrow = SCR(B, float, m), *lrow = SCR(B, float, l);
    /* One segment into a dense f32 output: the rows go there straight from
     * Oᵀ, normalised on the way (finish_item then writes the fully masked
     * rows and the stats); else into the accumulator rows. */
    const sd_view *ov = &p->views[p->vo];
    const bool direct = B->nseg == 1 && out_plain(p) && ov->dt == dnnl_f32 && ov->cs == 1;
    for (int qb = 0; qb < nqb; ++qb) {
        const int nq = rows - qb * w < w ? rows - qb * w : w;
        const float *o = ot + (size_t)qb * w * DV;
        if (direct) {
            float inv[SD_TNR];
            for (int q = 0; q < nq; ++q) inv[q] = 1.f / tl[qb * w + q];
            pan->transpose_out(o, DV, w, nq, inv,
                               (float *)A->base[p->vo] + B->boff[0][p->vo] + (B->i0 + qb * w) * ov->rs, ov->rs);
        } else {
            pan->transpose_out(o, DV, w, nq, NULL, acc + (size_t)qb * w * DV, DV);
        }
    }
    memcpy(mrow, tm, sizeof(float) * (size_t)rows);
    memcpy(lrow, tl, sizeof(float) * (size_t)rows);
    finish_item(B, direct);
}

/* Whether K and V of a decode item both stream through the row table's
 * block operations (what block_scores and block_pv check for the first key
 * of each block holds for every key when it holds for the first: the
 * layouts do not change and every start is even), so that blocks of
 * SD_DECODE_BK keys need no f32 staging. */
static bool decode_streams(const sd_item *B) {
    const sd_args *A = B->A;
    const sd_plan *p = A->p;
    pt_sdpa_qrows q;
    const void *rows;
    dnnl_data_type_t dt;
    int64_t ld;
    const bool k = qrows_layout(A, B->boff[0], &p->k, 0, p->dqk, &q) ||
                   float_rows(A, B->boff[0], &p->k, 0, &rows, &dt, &ld);
    return k && (qrows_layout(A, B->boff[0], &p->v, 0, p->dv, &q) ||
                 float_rows(A, B->boff[0], &p->v, 0, &rows, &dt, &ld));
}

/* Work item w: query block w % nqb of group chunk (w / nqb) % nchunk of
 * outer batch w / (nqb · nchunk); without a group dim every batch index is
 * its own outer batch. */
typedef struct {
    const sd_args *A;
    sd_layout L;
    int64_t nqb, nchunk, inner, G;
} sd_work;

static void sd_work_item(const void *arg, int64_t w, char *buf) {
    const sd_work *W = arg;
    const sd_plan *p = W->A->p;
    sd_item B;
    B.A = W->A, B.L = &W->L, B.buf = buf;
    const int64_t qb = w % W->nqb, chunk = (w / W->nqb) % W->nchunk, ob = w / W->nqb / W->nchunk;
    B.i0 = qb * p->bq;
    B.mq = (int)(p->sq - B.i0 < p->bq ? p->sq - B.i0 : p->bq);
    const int64_t g0 = chunk * p->seg;
    B.nseg = (int)(W->G - g0 < p->seg ? W->G - g0 : p->seg);
    B.rows = B.nseg * B.mq;
    /* K / V packed ahead are read from their panels only. */
    B.decode = B.rows <= SD_DECODE_ROWS && !p->kpk.on && !p->vpk.on;
    const int64_t lo = ob % W->inner, hi = ob / W->inner;
    for (int g = 0; g < B.nseg; ++g) {
        const int64_t b = (hi * W->G + g0 + g) * W->inner + lo;
        int64_t bidx[SD_MAX_BATCH];
        sd_batch_index(b, p->nb, p->bdims, bidx);
        B.bseg[g] = b;
        for (int v = 0; v < p->nviews; ++v) {
            const sd_view *vw = &p->views[v];
            int64_t off = 0;
            for (int d = 0; d < p->nb; ++d) off += (vw->grouped ? bidx[d] / vw->bg[d] : bidx[d]) * vw->bs[d];
            B.boff[g][v] = off;
        }
    }
    B.bk = p->bk;
    if (B.decode && p->skv > p->bk && (size_t)B.rows * SD_DECODE_BK <= W->L.s_floats && decode_streams(&B))
        B.bk = SD_DECODE_BK;
    B.khead = B.vhead = NULL;
    if (!B.decode && W->A->tpanel) {
        cached_heads(&B);
        run_item_panels(&B);
        return;
    }
    if (!B.decode) {
        B.khead = p->kpk.on ? packed_head(W->A, &p->kpk, p->k.src, B.boff[0][p->k.src]) : cached_head(&B, false);
        B.vhead = p->vpk.on ? packed_head(W->A, &p->vpk, p->v.src, B.boff[0][p->v.src]) : cached_head(&B, true);
    }
    run_item(&B);
}

/* A one-element integer input (dropout seed / offset). */
static int64_t scalar_i64(const void *base, dnnl_data_type_t dt) {
    switch ((int)dt) {
        case dnnl_s64: {
            int64_t v;
            memcpy(&v, base, sizeof v);
            return v;
        }
        case dnnl_s32: {
            int32_t v;
            memcpy(&v, base, sizeof v);
            return v;
        }
        default: return pt_f64_to_s64(pt_load_f64(base, dt, 0));
    }
}

/* The causal step whose fully masked key blocks may be skipped: filled with
 * -inf, last in the chain (nothing after it could bring a value back), with
 * integer offsets, and no dropout mask to write for the skipped keys. */
static int skippable_causal(const sd_args *A) {
    const sd_plan *p = A->p;
    if (p->nsteps == 0 || p->vmask >= 0) return -1;
    const int s = p->nsteps - 1;
    const sd_step *st = &p->steps[s];
    if (st->kind != SD_CAUSAL || !A->causal_int[s]) return -1;
    const sd_view *fv = &p->views[st->a];
    if (fv->rs != 0 || fv->cs != 0 || fv->grouped) return -1;
    for (int d = 0; d < p->nb; ++d)
        if (fv->bs[d] != 0) return -1;
    return pt_elem_load(A->base[st->a], fv->dt, 0) == -INFINITY ? s : -1;
}

/* A first step that multiplies (or divides) every score by one power of
 * two: Q scaled by it gives the same scores exactly (every product and
 * partial sum scales by 2^e, and so does rounding S to its type), as long
 * as no value leaves the normal range (|Q|·2^e above 2^-126; never for
 * attention scales of head sizes below 2^100).  Not under the f16 math
 * mode, whose operand rounding has f16's narrow range.  Returns the step,
 * -1 when none. */
static int foldable_scale(const sd_args *A, float *factor) {
    const sd_plan *p = A->p;
    if (p->nsteps == 0 || (A->qk.kind == PT_GEMM_F32 && A->qk.round == dnnl_fpmath_mode_f16)) return -1;
    const sd_step *st = &p->steps[0];
    if (st->kind != SD_MUL && st->kind != SD_DIV) return -1;
    const sd_view *va = &p->views[st->a];
    if (va->rs != 0 || va->cs != 0 || va->grouped) return -1;
    for (int d = 0; d < p->nb; ++d)
        if (va->bs[d] != 0) return -1;
    const float f = pt_elem_load(A->base[st->a], va->dt, 0);
    const float g = st->kind == SD_MUL ? f : 1.f / f;
    int e;
    const float m = frexpf(g, &e);
    if (!isfinite(g) || fabsf(m) != 0.5f || e < -100 || e > 100) return -1;
    *factor = g;
    return 0;
}

pt_status pt_sdpa_fwd_run(const pt_fused *f, const pt_tview *in, size_t nin, const pt_tview *out, size_t nout,
                          void *scratch, const pt_exec_ctx *ctx) {
    const sd_plan *p = f->state;
    sd_args A;
    memset(&A, 0, sizeof A);
    A.p = p;
    A.vec = pt_vec();
    for (int v = 0; v < p->nviews; ++v) {
        const sd_view *vw = &p->views[v];
        if (vw->port < 0) {
            A.base[v] = vw->konst;
            continue;
        }
        if ((size_t)vw->port >= (vw->is_out ? nout : nin))
            return pt_err(dnnl_invalid_arguments, "sdpa: port %d not bound", vw->port);
        A.base[v] = vw->is_out ? out[vw->port].data : in[vw->port].data;
        if (!A.base[v]) return pt_err(dnnl_invalid_arguments, "sdpa: port %d has no data", vw->port);
    }
    for (int s = 0; s < p->nsteps; ++s) {
        const sd_step *st = &p->steps[s];
        if (st->kind != SD_CAUSAL) continue;
        A.causal_int[s] = true;
        if (st->add >= 0) {
            A.add[s] = pt_elem_load(A.base[st->add], p->views[st->add].dt, 0);
            A.sub[s] = pt_elem_load(A.base[st->sub], p->views[st->sub].dt, 0);
            /* The op-by-op path adds in f32 and stores s32: integer
             * arithmetic is the same while every value is an integer below
             * 2^24. */
            const float lim = 16777216.f;
            A.causal_int[s] = A.add[s] == truncf(A.add[s]) && A.sub[s] == truncf(A.sub[s]) &&
                              fabsf(A.add[s]) < lim && fabsf(A.sub[s]) < lim && p->sq < (1 << 23) &&
                              p->skv < (1 << 23);
            A.causal_delta[s] = (int64_t)A.add[s] - (int64_t)A.sub[s];
        }
    }
    A.skip_step = skippable_causal(&A);
    A.fold_step = -1;
    if (p->dropout) {
        A.seed = scalar_i64(A.base[p->vseed], p->views[p->vseed].dt);
        A.offset = scalar_i64(A.base[p->voffset], p->views[p->voffset].dt);
        A.dc = pt_dropout_prepare(pt_elem_load(A.base[p->vprob], p->views[p->vprob].dt, 0));
    }

    /* Compute kinds: from the operand types and the math mode. */
    const dnnl_fpmath_mode_t mode = ctx ? ctx->fpmath : dnnl_fpmath_mode_strict;
    bool px_only_bf16;
    const dnnl_data_type_t tp = p_type(p, &px_only_bf16);
    A.tp = tp;
    A.qk = choose_product(operand_type(p, &p->q), operand_type(p, &p->k), mode);
    A.pv = choose_product(tp, operand_type(p, &p->v), mode);
    A.px_pack_rounds = px_only_bf16 && (A.pv.kind == PT_GEMM_BF16 || tp == dnnl_f32);
    A.k_direct = direct_operand(p, &p->k, true, &A.qk, &A.kop);
    A.v_direct = direct_operand(p, &p->v, false, &A.pv, &A.vop);
    A.fold_step = foldable_scale(&A, &A.fold_factor);
    /* Panels packed ahead are for the product the compile-time mode chose. */
    if ((p->kpk.on && p->kpk.uk != A.qk.uk) || (p->vpk.on && p->vpk.uk != A.pv.uk))
        return pt_err(dnnl_invalid_arguments, "sdpa: K / V packed for another math mode");

    const int64_t nqb = (p->sq + p->bq - 1) / p->bq;
    const int64_t G = p->gdim >= 0 ? p->bdims[p->gdim] : 1;
    int64_t inner = 1;
    for (int d = p->gdim + 1; p->gdim >= 0 && d < p->nb; ++d) inner *= p->bdims[d];
    const int64_t nchunk = (G + p->seg - 1) / p->seg;
    const int64_t nwork = p->nbatch / G * nchunk * nqb;
    if (nwork == 0) return dnnl_success;
    if (!scratch) return pt_err(dnnl_invalid_arguments, "sdpa: no scratchpad");
    const sd_work W = {.A = &A, .L = sd_scratch_layout(p), .nqb = nqb, .nchunk = nchunk, .inner = inner, .G = G};
    const double macs = (double)p->nbatch * (double)p->sq * (double)p->skv * (double)(p->dqk + p->dv);
    const int nthr = macs < SD_SHARE_MACS ? 1 : sd_threads(p->nthr, ctx, nwork);
    /* Whole-head panels: key blocks start at whole strips (as for panels
     * packed ahead); every thread's cache starts empty. */
    const bool strips = p->bk >= p->skv || (p->bk % A.qk.uk->nr == 0 && p->bk % A.pv.uk->nr == 0);
    /* The transposed path (transposed_form), for K / V as stored: its
     * panels are A panels. */
    A.pan = pt_sdpa_panel();
    A.tpanel = transposed_form(p, &A.qk, &A.pv, tp, A.px_pack_rounds) && A.k_direct && A.v_direct &&
               !A.kop.dq.on && !A.vop.dq.on && !p->kpk.on && !p->vpk.on;
    A.tv_split = A.tpanel && tv_splits(&A);
    A.k_cache = p->kv_cache && (strips || A.tpanel) && A.k_direct && !p->kpk.on;
    A.v_cache = p->kv_cache && (strips || A.tpanel) && A.v_direct && !p->vpk.on;
    for (int t = 0; t < nthr; ++t) {
        int64_t *tag = (int64_t *)((char *)scratch + (size_t)t * W.L.total + W.L.tags);
        for (int k = 0; k < 6; ++k) tag[k] = INT64_MIN;
    }
    /* Whole heads per thread where there are enough of them to balance:
     * each head's K / V packed once. */
    const int64_t heads = nwork / nqb;
    const int64_t chunk = A.k_cache || A.v_cache ? (heads >= 2 * nthr ? nqb : 1) : 1;
    if (nthr == 1)
        for (int64_t w = 0; w < nwork; ++w) sd_work_item(&W, w, scratch);
    else
        sd_parallel_chunks(nthr, macs >= SD_SERIAL_MACS, nwork, chunk, scratch, W.L.total, sd_work_item, &W);
    return dnnl_success;
}
