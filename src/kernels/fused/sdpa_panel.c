/* The portable row of the SDPA column-operation table and the choice of the
 * process's row (sdpa_panel.h). */
#include "kernels/fused/sdpa_panel.h"

#include <pthread.h>

#include "ir/status.h"

const pt_sdpa_panel_ops pt_sdpa_panel_generic = {
    "generic",         PT_ISA_GENERIC,          sd_panel_max_rows, sd_panel_exp_rows, sd_panel_scale_rows,
    sd_panel_add_cols, sd_panel_transpose_out,  sd_panel_pack_t,   sd_panel_pack_rows,
    NULL,              0,                       0};

static const pt_sdpa_panel_ops *g_panel;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void choose_panel(void) {
    const pt_sdpa_panel_ops *const rows[] = {&pt_sdpa_panel_generic, &pt_sdpa_panel_avx2, &pt_sdpa_panel_avx512};
    g_panel = &pt_sdpa_panel_generic;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; ++i)
        if (pt_cpu_row_usable(rows[i]->level, 0, pt_isa()) && rows[i]->level > g_panel->level) g_panel = rows[i];
    pt_verbose(2, "info,kernel,sdpa panel ops %s,selected for %s", g_panel->name, pt_isa_name(pt_isa()));
}

const pt_sdpa_panel_ops *pt_sdpa_panel(void) {
    pthread_once(&g_once, choose_panel);
    return g_panel;
}
