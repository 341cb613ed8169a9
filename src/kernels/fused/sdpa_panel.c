/* The portable row of the SDPA column-operation table and the choice of the
 * process's row (sdpa_panel.h). */
#include "kernels/fused/sdpa_panel.h"

#include <pthread.h>

#include "ir/status.h"

void sd_panel_max_rows(float *x, int64_t nk, int w, const float *add, float *m) {
    for (int64_t j = 0; j < nk; ++j) {
        float *r = x + j * w;
        if (add) {
            const float a = add[j];
            for (int q = 0; q < w; ++q) r[q] = r[q] + a;
        }
        for (int q = 0; q < w; ++q) m[q] = r[q] > m[q] ? r[q] : m[q];
    }
}

void sd_panel_exp_rows(float *x, int64_t nk, int w, const float *sub, float *l) {
    for (int64_t j = 0; j < nk; ++j) {
        float *r = x + j * w;
        for (int q = 0; q < w; ++q) {
            r[q] = expf(r[q] - sub[q]);
            l[q] += r[q];
        }
    }
}

void sd_panel_scale_rows(float *o, int64_t n, int w, const float *alpha) {
    for (int64_t d = 0; d < n; ++d)
        for (int q = 0; q < w; ++q) o[d * w + q] *= alpha[q];
}

void sd_panel_add_cols(float *x, int64_t nk, int w, int nq, const float *const *src) {
    for (int q = 0; q < nq; ++q)
        for (int64_t j = 0; j < nk; ++j) x[j * w + q] += src[q][j];
}

void sd_panel_transpose_out(const float *o, int64_t n, int w, int nq, const float *scale, float *dst, int64_t ld) {
    for (int q = 0; q < nq; ++q) {
        const float s = scale ? scale[q] : 1.f;
        for (int64_t d = 0; d < n; ++d) dst[q * ld + d] = scale ? o[d * w + q] * s : o[d * w + q];
    }
}

void sd_panel_pack_t(const float *src, int64_t ld, int rows, int64_t k, int R, float scale, float *dst) {
    for (int64_t kk = 0; kk < k; ++kk)
        for (int r = 0; r < R; ++r) dst[kk * R + r] = r < rows ? src[r * ld + kk] * scale : 0.f;
}

void sd_panel_pack_rows(const float *src, int64_t ld, int64_t nk, int64_t n, int R, float *dst, size_t strip) {
    for (int64_t s = 0; s * R < n; ++s)
        for (int64_t j = 0; j < nk; ++j)
            for (int c = 0; c < R; ++c) dst[s * strip + j * R + c] = s * R + c < n ? src[j * ld + s * R + c] : 0.f;
}

const pt_sdpa_panel_ops pt_sdpa_panel_generic = {
    "generic",         PT_ISA_GENERIC,          sd_panel_max_rows, sd_panel_exp_rows, sd_panel_scale_rows,
    sd_panel_add_cols, sd_panel_transpose_out,  sd_panel_pack_t,   sd_panel_pack_rows};

static const pt_sdpa_panel_ops *g_panel;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void choose_panel(void) {
    g_panel = &pt_sdpa_panel_generic;
    if (pt_cpu_row_usable(pt_sdpa_panel_avx512.level, 0, pt_isa())) g_panel = &pt_sdpa_panel_avx512;
    pt_verbose(2, "info,kernel,sdpa panel ops %s,selected for %s", g_panel->name, pt_isa_name(pt_isa()));
}

const pt_sdpa_panel_ops *pt_sdpa_panel(void) {
    pthread_once(&g_once, choose_panel);
    return g_panel;
}
