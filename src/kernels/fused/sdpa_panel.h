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
#include <stddef.h>
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
    /* Sᵀ = K·Qᵀ and max_rows in one pass, or NULL: keys in strips of
     * score_mr (K panel strips of score_mr keys, k = D) by w = score_w
     * queries (Qᵀ panel [D][w]), the microkernel's tile and sums:
     * x[j·w + q] = Sᵀ[j][q] (+ add[j] when add is not NULL), m[q] =
     * max(m[q], x[j·w + q]) (NaN scores leave m as it is).  nk >= 1. */
    void (*scores_max)(int64_t D, const float *kpan, int64_t nk, const float *qpan, const float *add, float *x,
                       float *m);
    int score_mr, score_w;
} pt_sdpa_panel_ops;

/* Portable bodies: the generic row, and the loops the ISA rows do not
 * write with intrinsics (compiled there with that level's flags, so the
 * compiler vectorizes them). */
static inline void sd_panel_max_rows(float *x, int64_t nk, int w, const float *add, float *m) {
    for (int64_t j = 0; j < nk; ++j) {
        float *r = x + j * w;
        if (add) {
            const float a = add[j];
            for (int q = 0; q < w; ++q) r[q] = r[q] + a;
        }
        for (int q = 0; q < w; ++q) m[q] = r[q] > m[q] ? r[q] : m[q];
    }
}

static inline void sd_panel_exp_rows(float *x, int64_t nk, int w, const float *sub, float *l) {
    for (int64_t j = 0; j < nk; ++j) {
        float *r = x + j * w;
        for (int q = 0; q < w; ++q) {
            r[q] = expf(r[q] - sub[q]);
            l[q] += r[q];
        }
    }
}

static inline void sd_panel_scale_rows(float *o, int64_t n, int w, const float *alpha) {
    for (int64_t d = 0; d < n; ++d)
        for (int q = 0; q < w; ++q) o[d * w + q] *= alpha[q];
}

static inline void sd_panel_add_cols(float *x, int64_t nk, int w, int nq, const float *const *src) {
    for (int q = 0; q < nq; ++q)
        for (int64_t j = 0; j < nk; ++j) x[j * w + q] += src[q][j];
}

static inline void sd_panel_transpose_out(const float *o, int64_t n, int w, int nq, const float *scale, float *dst,
                                          int64_t ld) {
    for (int q = 0; q < nq; ++q) {
        const float s = scale ? scale[q] : 1.f;
        for (int64_t d = 0; d < n; ++d) dst[q * ld + d] = scale ? o[d * w + q] * s : o[d * w + q];
    }
}

static inline void sd_panel_pack_t(const float *src, int64_t ld, int rows, int64_t k, int R, float scale,
                                   float *dst) {
    for (int64_t kk = 0; kk < k; ++kk)
        for (int r = 0; r < R; ++r) dst[kk * R + r] = r < rows ? src[r * ld + kk] * scale : 0.f;
}

static inline void sd_panel_pack_rows(const float *src, int64_t ld, int64_t nk, int64_t n, int R, float *dst,
                                      size_t strip) {
    for (int64_t s = 0; s * R < n; ++s)
        for (int64_t j = 0; j < nk; ++j)
            for (int c = 0; c < R; ++c) dst[s * strip + j * R + c] = s * R + c < n ? src[j * ld + s * R + c] : 0.f;
}

extern const pt_sdpa_panel_ops pt_sdpa_panel_generic; /* sdpa_panel.c */
extern const pt_sdpa_panel_ops pt_sdpa_panel_avx2;    /* kernels/x86/sdpa_panel_avx2.c */
extern const pt_sdpa_panel_ops pt_sdpa_panel_avx512;  /* kernels/x86/sdpa_panel_avx512.c */

/* The process's row (PARTITA_ISA cap applied). */
const pt_sdpa_panel_ops *pt_sdpa_panel(void);

#endif
