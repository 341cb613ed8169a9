/* Reorder to / from the packed-weight layout (packed_reorder.h). */
#include <stdlib.h>

#include "kernels/fused/conv_packed_layout.h"
#include "kernels/fused/packed_reorder.h"
#include "kernels/fused/sdpa_packed_layout.h"
#include "kernels/gemm/gemm.h"

typedef struct {
    pt_gemm_plan plan;
    bool to_packed;
} packed_reorder;

static pt_status packed_reorder_run(const pt_fused *f, const pt_tview *in, size_t nin, const pt_tview *out,
                                    size_t nout, void *scratch, const pt_exec_ctx *ctx) {
    (void)scratch, (void)ctx;
    const packed_reorder *r = f->state;
    if (nin < 1 || nout < 1 || !in[0].data || !out[0].data)
        return pt_err(dnnl_invalid_arguments, "Reorder (packed weights): buffer missing");
    if (r->to_packed) pt_gemm_pack_b_all(&r->plan, in[0].data, NULL, NULL, out[0].data);
    else pt_gemm_unpack_b_all(&r->plan, in[0].data, out[0].data);
    return dnnl_success;
}

static void packed_reorder_release(pt_fused *f) {
    free(f->state);
    f->state = NULL;
}

/* The Reorder's fused kernel: `state` (freed on release) run by `run`,
 * reading or writing the packed layout on its one port. */
static void install(pt_fused *f, pt_status (*run)(const pt_fused *, const pt_tview *, size_t, const pt_tview *,
                                                  size_t, void *, const pt_exec_ctx *),
                    void *state, const char *name, bool to_packed, size_t layout) {
    f->run = run;
    f->release = packed_reorder_release;
    f->state = state;
    f->scratch_bytes = 0;
    f->kernel_name = name;
    pt_fused_add_packed(f, to_packed, 0, layout);
}

typedef struct {
    pt_conv_packed_layout l;
    pt_lt plain;
    bool to_packed;
} conv_reorder;

static pt_status conv_reorder_run(const pt_fused *f, const pt_tview *in, size_t nin, const pt_tview *out, size_t nout,
                                  void *scratch, const pt_exec_ctx *ctx) {
    (void)ctx;
    const conv_reorder *r = f->state;
    if (nin < 1 || nout < 1 || !in[0].data || !out[0].data || (r->to_packed && !scratch))
        return pt_err(dnnl_invalid_arguments, "Reorder (packed convolution weights): buffer missing");
    return r->to_packed ? pt_conv_packed_pack(&r->l, &r->plain, in[0].data, out[0].data, scratch)
                        : pt_conv_packed_unpack(&r->l, &r->plain, in[0].data, out[0].data);
}

pt_status pt_packed_reorder_make_conv(size_t layout, const pt_lt *plain, bool to_packed, pt_fused *f) {
    conv_reorder *r = calloc(1, sizeof *r);
    if (!r) return dnnl_out_of_memory;
    if (!pt_conv_packed_find(layout, &r->l)) {
        free(r);
        return dnnl_unimplemented;
    }
    r->plain = *plain;
    r->to_packed = to_packed;
    install(f, conv_reorder_run, r, "conv_weights", to_packed, layout);
    f->scratch_bytes = to_packed ? pt_conv_packed_scratch_bytes(&r->l) : 0;
    return dnnl_success;
}

typedef struct {
    pt_sdpa_packed_reorder r;
    bool to_packed;
} sdpa_reorder;

static pt_status sdpa_reorder_run(const pt_fused *f, const pt_tview *in, size_t nin, const pt_tview *out, size_t nout,
                                  void *scratch, const pt_exec_ctx *ctx) {
    (void)scratch, (void)ctx;
    const sdpa_reorder *r = f->state;
    if (nin < 1 || nout < 1 || !in[0].data || !out[0].data)
        return pt_err(dnnl_invalid_arguments, "Reorder (packed K / V): buffer missing");
    pt_sdpa_packed_reorder_run(&r->r, r->to_packed, in[0].data, out[0].data);
    return dnnl_success;
}

pt_status pt_packed_reorder_make_sdpa(size_t layout, const pt_lt *plain, bool to_packed, pt_fused *f) {
    if (!pt_sdpa_packed_find(layout, NULL)) return dnnl_unimplemented;
    sdpa_reorder *r = calloc(1, sizeof *r);
    if (!r) return dnnl_out_of_memory;
    pt_status st = pt_sdpa_packed_reorder_init(layout, plain, &r->r);
    if (st != dnnl_success) {
        free(r);
        return st;
    }
    r->to_packed = to_packed;
    install(f, sdpa_reorder_run, r, r->r.item.uk->name, to_packed, layout);
    return dnnl_success;
}

pt_status pt_packed_reorder_make(size_t layout, dnnl_data_type_t dt, int64_t s_row, int64_t s_k, bool to_packed,
                                 pt_fused *f) {
    packed_reorder *r = calloc(1, sizeof *r);
    if (!r) return dnnl_out_of_memory;
    pt_status st = pt_gemm_packed_b_plan(layout, dt, s_row, s_k, &r->plan);
    if (st != dnnl_success) {
        free(r);
        return st;
    }
    r->to_packed = to_packed;
    install(f, packed_reorder_run, r, r->plan.uk->name, to_packed, layout);
    return dnnl_success;
}
