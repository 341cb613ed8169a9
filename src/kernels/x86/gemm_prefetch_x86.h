/* The prefetch stream of the x86 microkernels (pt_gemm_prefetch in
 * kernels/gemm/gemm.h): the cursor lives in registers during the k loop and
 * goes back to the struct at the end. */
#ifndef PARTITA_KERNELS_X86_GEMM_PREFETCH_X86_H
#define PARTITA_KERNELS_X86_GEMM_PREFETCH_X86_H

#include <immintrin.h>
#include <stdint.h>

#include "kernels/gemm/gemm.h"

typedef struct {
    uintptr_t base;
    int64_t rows, stride, lines, row, line;
} pt_pf_cursor;

static inline pt_pf_cursor pt_pf_open(const pt_gemm_prefetch *pf) {
    pt_pf_cursor c = {0};
    if (pf) c = (pt_pf_cursor){pf->base, pf->rows, pf->stride, pf->lines, pf->row, pf->line};
    return c;
}

/* One line (into L1: measured faster than T1 for packing B right after). */
static inline void pt_pf_step(pt_pf_cursor *c) {
    if (c->row < c->rows) {
        _mm_prefetch((const char *)(c->base + (uintptr_t)(c->row * c->stride + c->line * 64)), _MM_HINT_T0);
        if (++c->line == c->lines) c->line = 0, ++c->row;
    }
}

static inline void pt_pf_close(const pt_pf_cursor *c, pt_gemm_prefetch *pf) {
    if (pf) pf->row = c->row, pf->line = c->line;
}

#endif
