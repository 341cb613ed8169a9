/* Column operations of the fused SDPA forward kernel's transposed f32 path
 * (sdpa_run.c, run_item_panels): the scores of w queries (the microkernel's
 * NR) are kept key by key, x[j·w + q] for key j and query q, which is a B
 * panel of the second product as it stands.  The softmax over keys is then
 * lane-wise work down the rows: each query's running max and sum sit in
 * one lane.  One table row per ISA level, chosen once under the PARTITA_ISA
 * cap (pt_sdpa_panel()); the AVX-512 row takes w = 32 in registers and
 * hands other widths to the portable bodies.  Pure functions, nk >= 0. */
#ifndef PARTITA_KERNELS_FUSED_SDPA_PANEL_H
#define PARTITA_KERNELS_FUSED_SDPA_PANEL_H

#include <math.h>
#include <stdint.h>

#include "runtime/cpu.h"

typedef struct {
    const char *name;
    pt_isa_level level;
    /* For each key row j < nk: x[j·w + q] += add[j] when add is not NULL,
     * then m[q] = max(m[q], x[j·w + q]) (NaN scores leave m as it is). */
    void (*max_rows)(float *x, int64_t nk, int w, const float *add, float *m);
    /* x[j·w + q] = exp(x[j·w + q] - sub[q]) in place, l[q] += Σ_j of them;
     * sub[q] is at least every x of column q (arguments <= 0; -inf gives 0). */
    void (*exp_rows)(float *x, int64_t nk, int w, const float *sub, float *l);
    /* o[d·w + q] *= alpha[q] for d < n. */
    void (*scale_rows)(float *o, int64_t n, int w, const float *alpha);
    /* x[j·w + q] += src[q][j] for j < nk, q < nq (a mask row per query). */
    void (*add_cols)(float *x, int64_t nk, int w, int nq, const float *const *src);
    /* dst[q·ld + d] = o[d·w + q]·scale[q] for d < n, q < nq (Oᵀ back to
     * rows; scale NULL: copied). */
    void (*transpose_out)(const float *o, int64_t n, int w, int nq, const float *scale, float *dst, int64_t ld);
    /* One panel strip of R rows (R <= 32) from rows of k contiguous floats:
     * dst[kk·R + r] = src[r·ld + kk]·scale for r < rows, 0 for rows <= r < R. */
    void (*pack_t)(const float *src, int64_t ld, int rows, int64_t k, int R, float scale, float *dst);
    /* Strips of R (<= 16) columns of nk rows of n contiguous floats:
     * dst[s·strip + j·R + c] = src[j·ld + s·R + c], 0 past column n. */
    void (*pack_rows)(const float *src, int64_t ld, int64_t nk, int64_t n, int R, float *dst, size_t strip);
} pt_sdpa_panel_ops;

/* Portable bodies (sdpa_panel.c), also the AVX-512 row's other widths. */
void sd_panel_max_rows(float *x, int64_t nk, int w, const float *add, float *m);
void sd_panel_exp_rows(float *x, int64_t nk, int w, const float *sub, float *l);
void sd_panel_scale_rows(float *o, int64_t n, int w, const float *alpha);
void sd_panel_pack_t(const float *src, int64_t ld, int rows, int64_t k, int R, float scale, float *dst);
void sd_panel_pack_rows(const float *src, int64_t ld, int64_t nk, int64_t n, int R, float *dst, size_t strip);
void sd_panel_add_cols(float *x, int64_t nk, int w, int nq, const float *const *src);
void sd_panel_transpose_out(const float *o, int64_t n, int w, int nq, const float *scale, float *dst, int64_t ld);

extern const pt_sdpa_panel_ops pt_sdpa_panel_generic; /* sdpa_panel.c */
extern const pt_sdpa_panel_ops pt_sdpa_panel_avx512;  /* kernels/x86/sdpa_panel_avx512.c */

/* The process's row (PARTITA_ISA cap applied). */
const pt_sdpa_panel_ops *pt_sdpa_panel(void);

#endif
