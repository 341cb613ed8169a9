/* Microkernel selection: the highest-level usable row of a kind, chosen once
 * per process for the default (runtime/cpu.h). */
#include <pthread.h>

#include "kernels/gemm/gemm.h"
#include "kernels/gemm/gemm_internal.h"
#include "kernels/gemm/gemm_rows.h"

static const pt_gemm_ukernel *rows_of(pt_gemm_kind kind, size_t *n) {
    switch (kind) {
    case PT_GEMM_F32: return *n = pt_gemm_rows_f32_count, pt_gemm_rows_f32;
    case PT_GEMM_BF16: return *n = pt_gemm_rows_bf16_count, pt_gemm_rows_bf16;
    case PT_GEMM_U8S8: return *n = pt_gemm_rows_u8s8_count, pt_gemm_rows_u8s8;
    default: return *n = 0, NULL;
    }
}

size_t pt_gemm_ukernel_count(pt_gemm_kind kind) {
    size_t n;
    rows_of(kind, &n);
    return n;
}

const pt_gemm_ukernel *pt_gemm_ukernel_at(pt_gemm_kind kind, size_t i) {
    size_t n;
    const pt_gemm_ukernel *r = rows_of(kind, &n);
    return i < n ? &r[i] : NULL;
}

const pt_gemm_ukernel *pt_gemm_ukernel_select(pt_gemm_kind kind, pt_isa_level cap) {
    size_t n;
    const pt_gemm_ukernel *r = rows_of(kind, &n), *best = NULL;
    for (size_t i = 0; i < n; ++i)
        if (pt_cpu_row_usable(r[i].level, r[i].features, cap) && (!best || r[i].level > best->level)) best = &r[i];
    return best;
}

static const pt_gemm_ukernel *g_default[PT_GEMM_KINDS];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void choose_defaults(void) {
    for (int k = 0; k < PT_GEMM_KINDS; ++k) {
        g_default[k] = pt_gemm_ukernel_select((pt_gemm_kind)k, pt_isa());
        pt_verbose(2, "info,kernel,gemm %s,selected for %s", g_default[k] ? g_default[k]->name : "none", pt_isa_name(pt_isa()));
    }
}

const pt_gemm_ukernel *pt_gemm_ukernel_default(pt_gemm_kind kind) {
    if ((unsigned)kind >= PT_GEMM_KINDS) return NULL;
    pthread_once(&g_once, choose_defaults);
    return g_default[kind];
}

const pt_gemm_ukernel *pt_gemm_ukernel_for_shape(pt_gemm_kind kind, int64_t M, int64_t K) {
    const pt_gemm_ukernel *d = pt_gemm_ukernel_default(kind);
    if (!d || !d->a_prep || (K > 16 * (int64_t)d->kg && M > d->mr / 2)) return d;
    size_t n;
    const pt_gemm_ukernel *r = rows_of(kind, &n), *best = NULL;
    for (size_t i = 0; i < n; ++i)
        if (!r[i].a_prep && pt_cpu_row_usable(r[i].level, r[i].features, pt_isa()) &&
            (!best || r[i].level > best->level))
            best = &r[i];
    return best ? best : d;
}

pt_gemm_kind pt_gemm_float_kind(dnnl_data_type_t a_dt, dnnl_data_type_t b_dt, bool b_int, dnnl_fpmath_mode_t mode,
                                bool apply_to_int) {
    const bool narrow = mode == dnnl_fpmath_mode_bf16 || mode == dnnl_fpmath_mode_any;
    if (!b_int && a_dt == dnnl_bf16 && b_dt == dnnl_bf16) return PT_GEMM_BF16;
    if (narrow && (!b_int || apply_to_int) && a_dt != dnnl_f16 && b_dt != dnnl_f16) return PT_GEMM_BF16;
    return PT_GEMM_F32;
}

bool pt_gemm_prepacked_b_pays(const pt_gemm_desc *d) {
    return !(d->M <= PT_GEMV_MAX_M && pt_gemm_gemv_supported(d));
}
