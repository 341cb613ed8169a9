/* Checks the prefetching form of a microkernel row (run_pf): the same tile,
 * bit for bit, as run (A as a_prep leaves it for rows with one); and the
 * stream's cursor advanced by one line every pf_groups_per_line (else
 * PT_GEMM_PREFETCH_STEPS) k steps, stopping at its end. */
#ifndef PARTITA_TEST_GEMM_PREFETCH_H
#define PARTITA_TEST_GEMM_PREFETCH_H

#include <stdlib.h>
#include <string.h>

#include "kernels/gemm/gemm.h"
#include "test_util.h"

/* c_init: the tile before the call (cbytes bytes, rows ldc apart); c_run:
 * what run left there.  `lines_base` is any readable memory (prefetches
 * never fault, but the stream should still point somewhere real). */
static inline void check_prefetch_form(const pt_gemm_ukernel *uk, int64_t kc, const void *a, const void *b,
                                       const void *c_init, const void *c_run, size_t cbytes, int64_t ldc, int mr,
                                       int nr, int accumulate, const void *lines_base) {
    if (!uk->run_pf) return;
    void *c = malloc(cbytes), *ap = (void *)a;
    if (uk->a_prep) { /* the A panel: kc k by MR rows of the kind's elements */
        const size_t abytes = (size_t)(kc * uk->mr) * (uk->kind == PT_GEMM_F32 ? 4 : uk->kind == PT_GEMM_BF16 ? 2 : 1);
        ap = malloc(abytes);
        memcpy(ap, a, abytes);
        uk->a_prep(ap, kc);
    }
    const int64_t per = uk->pf_groups_per_line ? uk->pf_groups_per_line : PT_GEMM_PREFETCH_STEPS;
    const int64_t steps = kc / uk->kg, issued = (steps + per - 1) / per;
    /* A short stream (ends inside the call) and a long one (does not). */
    const int64_t lines[2] = {issued > 1 ? 2 : 1, issued + 7};
    for (int s = 0; s < 2; ++s) {
        memcpy(c, c_init, cbytes);
        pt_gemm_prefetch pf = {(uintptr_t)lines_base, lines[s] > 1 ? 2 : 1, 64, 0, 0, 0};
        pf.lines = (lines[s] + pf.rows - 1) / pf.rows;
        const int64_t total = pf.rows * pf.lines, want = issued < total ? issued : total;
        uk->run_pf(kc, ap, b, c, ldc, mr, nr, accumulate, &pf);
        pt_test_count(memcmp(c, c_run, cbytes) == 0, __FILE__, __LINE__,
                      "%s run_pf kc=%lld mr=%d nr=%d acc=%d: tile differs from run", uk->name, (long long)kc, mr, nr,
                      accumulate);
        pt_test_count(pf.row * pf.lines + pf.line == want, __FILE__, __LINE__,
                      "%s run_pf kc=%lld: %lld lines fetched, want %lld", uk->name, (long long)kc,
                      (long long)(pf.row * pf.lines + pf.line), (long long)want);
    }
    free(c);
    if (ap != a) free(ap);
}

#endif
