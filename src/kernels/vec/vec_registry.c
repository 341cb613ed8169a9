/* Selection of the vector-kernel row: the highest usable level, once. */
#include <pthread.h>

#include "kernels/vec/vec.h"
#include "kernels/vec/vec_rows.h"
#include "ir/status.h"

static const pt_vec_ops *const g_rows[] = {&pt_vec_row_generic, &pt_vec_row_avx2, &pt_vec_row_avx512};

size_t pt_vec_count(void) { return sizeof g_rows / sizeof g_rows[0]; }

const pt_vec_ops *pt_vec_at(size_t i) { return i < pt_vec_count() ? g_rows[i] : NULL; }

const pt_vec_ops *pt_vec_select(pt_isa_level cap) {
    const pt_vec_ops *best = &pt_vec_row_generic;
    for (size_t i = 0; i < pt_vec_count(); ++i)
        if (pt_cpu_row_usable(g_rows[i]->level, g_rows[i]->features, cap) && g_rows[i]->level > best->level)
            best = g_rows[i];
    return best;
}

static const pt_vec_ops *g_default;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void choose_default(void) {
    g_default = pt_vec_select(pt_isa());
    pt_verbose(2, "info,kernel,vec %s,selected for %s", g_default->name, pt_isa_name(pt_isa()));
}

const pt_vec_ops *pt_vec(void) {
    pthread_once(&g_once, choose_default);
    return g_default;
}
