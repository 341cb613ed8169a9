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
    /* x[j·w + q] = exp(x[j·w + q] - sub[q]) in place, l[q] += Σ_j of them
     * (an argument below the f32 range gives 0). */
    void (*exp_rows)(float *x, int64_t nk, int w, const float *sub, float *l);
    /* o[d·w + q] *= alpha[q] for d < n. */
    void (*scale_rows)(float *o, int64_t n, int w, const float *alpha);
} pt_sdpa_panel_ops;

/* Portable bodies (sdpa_panel.c), also the AVX-512 row's other widths. */
void sd_panel_max_rows(float *x, int64_t nk, int w, const float *add, float *m);
void sd_panel_exp_rows(float *x, int64_t nk, int w, const float *sub, float *l);
void sd_panel_scale_rows(float *o, int64_t n, int w, const float *alpha);

extern const pt_sdpa_panel_ops pt_sdpa_panel_generic; /* sdpa_panel.c */
extern const pt_sdpa_panel_ops pt_sdpa_panel_avx512;  /* kernels/x86/sdpa_panel_avx512.c */

/* The process's row (PARTITA_ISA cap applied). */
const pt_sdpa_panel_ops *pt_sdpa_panel(void);

#endif
