/* The portable row of the SDPA row-operation table and the choice of the
 * process's row (sdpa_rows.h). */
#include "kernels/fused/sdpa_rows.h"

#include <pthread.h>

#include "ir/status.h"

PT_SDPA_ROWS_PORTABLE_Q(generic)
PT_SDPA_ROWS_DEFINE(generic, "generic", PT_ISA_GENERIC);

static const pt_sdpa_row_ops *g_rows;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void choose_rows(void) {
    const pt_sdpa_row_ops *const rows[] = {&pt_sdpa_rows_generic, &pt_sdpa_rows_avx2, &pt_sdpa_rows_avx512};
    g_rows = &pt_sdpa_rows_generic;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; ++i)
        if (pt_cpu_row_usable(rows[i]->level, 0, pt_isa()) && rows[i]->level > g_rows->level) g_rows = rows[i];
    pt_verbose(2, "info,kernel,sdpa rows %s,selected for %s", g_rows->name, pt_isa_name(pt_isa()));
}

const pt_sdpa_row_ops *pt_sdpa_rows(void) {
    pthread_once(&g_once, choose_rows);
    return g_rows;
}
