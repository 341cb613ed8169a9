/* Quantization ops on dense tensors (kernels/mem/mem.h): chunks of the last
 * dim loaded to f32 through the vector rows (4-bit data nibble by nibble),
 * scaled with scalar or per-element scale and zero point, stored through the
 * vector rows with the saturating conversions of ir/dtype.c. */
#include <string.h>

#include "ir/dtype.h"
#include "kernels/mem/mem_io.h"
#include "kernels/vec/vec_rows.h"

bool pt_mem_quant_dtype_ok(dnnl_data_type_t dt) {
    return pt_mem_dtype_ok(dt) || dt == dnnl_s8 || dt == dnnl_u8 || dt == dnnl_s4 || dt == dnnl_u4;
}

static bool is_4bit(dnnl_data_type_t dt) { return dt == dnnl_s4 || dt == dnnl_u4; }

/* Elements [e, e + n) as f32 (the tensor itself when it is f32). */
static const float *load_any(const pt_vec_ops *v, dnnl_data_type_t dt, const void *base, int64_t e, int64_t n,
                             float *buf) {
    switch ((int)dt) {
        case dnnl_s8: v->s8_to_f32(buf, (const int8_t *)base + e, n); return buf;
        case dnnl_u8: v->u8_to_f32(buf, (const uint8_t *)base + e, n); return buf;
        case dnnl_s4:
        case dnnl_u4:
            for (int64_t i = 0; i < n; ++i) buf[i] = pt_load_f32(base, dt, e + i);
            return buf;
        default: return pt_mem_load(v, dt, base, e, n, buf);
    }
}

static void store_any(const pt_vec_ops *v, dnnl_data_type_t dt, void *base, int64_t e, int64_t n, const float *y) {
    switch ((int)dt) {
        case dnnl_s8: v->f32_to_s8((int8_t *)base + e, y, n); break;
        case dnnl_u8: v->f32_to_u8((uint8_t *)base + e, y, n); break;
        case dnnl_s4:
        case dnnl_u4:
            for (int64_t i = 0; i < n; ++i) pt_store_f32(base, dt, e + i, y[i]);
            break;
        case dnnl_f32:
            if ((float *)base + e != y) memcpy((float *)base + e, y, (size_t)n * sizeof *y);
            break;
        default: pt_mem_store(v, dt, base, e, n, y);
    }
}

typedef struct {
    const pt_mem_quant_plan *p;
    const void *sc, *zp; /* dynamic: the scale and zero-point tensors */
    dnnl_data_type_t sc_dt, zp_dt;
} quant_params;

static float scale_at(const quant_params *q, int64_t off) {
    return q->p->dynamic ? pt_load_f32(q->sc, q->sc_dt, off) : q->p->scales[off];
}

static float zp_at(const quant_params *q, int64_t off) {
    return q->p->dynamic ? pt_load_f32(q->zp, q->zp_dt, off) : q->p->zps[off];
}

/* Elements [at, at + len) of row `row` (all dims but the last). */
static void quant_piece(const quant_params *q, const pt_vec_ops *v, const pt_tview *src, const pt_tview *dst,
                        int64_t row, int64_t at, int64_t len, float *xb, float *sb, float *zb) {
    const pt_mem_quant_plan *p = q->p;
    const int last = p->nd - 1;
    int64_t so = 0, zo = 0, rest = row;
    for (int d = last - 1; d >= 0; --d) {
        const int64_t i = rest % p->dims[d];
        rest /= p->dims[d];
        so += i / p->G[d] * p->ss[d];
        zo += i / p->G[d] * p->zs[d];
    }
    const int64_t gi = p->G[last], e = row * p->dims[last] + at;
    const bool one_group = at / gi == (at + len - 1) / gi;
    const int64_t step = one_group ? 0 : 1;
    if (one_group) {
        sb[0] = scale_at(q, so + at / gi * p->ss[last]);
        if (p->has_zp) zb[0] = zp_at(q, zo + at / gi * p->zs[last]);
    } else {
        for (int64_t j = 0; j < len; ++j) {
            const int64_t g = (at + j) / gi;
            sb[j] = scale_at(q, so + g * p->ss[last]);
            if (p->has_zp) zb[j] = zp_at(q, zo + g * p->zs[last]);
        }
    }
    const float *x = load_any(v, src->lt.data_type, src->data, e, len, xb);
    float *y = dst->lt.data_type == dnnl_f32 ? (float *)dst->data + e : xb;
    if (p->quantize) {
        for (int64_t j = 0; j < (one_group ? 1 : len); ++j) sb[j] = 1.f / sb[j]; /* reciprocal, then multiply */
        v->binary(dnnl_graph_op_multiply, y, x, 1, sb, step, len);
        if (p->has_zp) v->binary(dnnl_graph_op_add, y, y, 1, zb, step, len);
    } else if (p->has_zp) {
        v->binary(dnnl_graph_op_subtract, y, x, 1, zb, step, len);
        v->binary(dnnl_graph_op_multiply, y, y, 1, sb, step, len);
    } else {
        v->binary(dnnl_graph_op_multiply, y, x, 1, sb, step, len);
    }
    store_any(v, dst->lt.data_type, dst->data, e, len, y);
}

pt_status pt_mem_quant_run(const pt_fused *f, const pt_tview *in, size_t nin, const pt_tview *out, size_t nout,
                           void *scratch, const pt_exec_ctx *ctx) {
    (void)nin, (void)nout, (void)scratch;
    const pt_mem_quant_plan *p = f->state;
    const pt_vec_ops *v = pt_vec();
    const pt_tview *src = &in[p->io.in[0]], *dst = &out[p->io.out[0]];
    quant_params q = {.p = p};
    if (p->dynamic) {
        q.sc = in[p->io.in[1]].data;
        q.sc_dt = in[p->io.in[1]].lt.data_type;
        if (p->has_zp) q.zp = in[p->io.in[2]].data, q.zp_dt = in[p->io.in[2]].lt.data_type;
    }
    if (p->n == 0) return dnnl_success; /* an empty tensor: nothing to write (and no row length to divide by) */
    const int64_t inner = p->dims[p->nd - 1], rows = p->n / inner;
    const int64_t per_row = (inner + PT_MEM_CHUNK - 1) / PT_MEM_CHUNK, pieces = rows * per_row;
    const size_t bytes = pt_dt_bytes(src->lt.data_type, p->n) + pt_dt_bytes(dst->lt.data_type, p->n);
    /* Two threads must not write the two nibbles of one byte. */
    const int nt = is_4bit(dst->lt.data_type) ? 1 : pt_mem_threads(ctx, bytes, pieces, ctx->nthreads);
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        float xb[PT_MEM_CHUNK], sb[PT_MEM_CHUNK], zb[PT_MEM_CHUNK];
        int64_t b, e;
        pt_mem_share(pieces, nt > 1 ? pt_thread_id() : 0, pt_mem_team(nt), &b, &e);
        for (int64_t k = b; k < e; ++k) {
            const int64_t row = k / per_row, at = (k % per_row) * PT_MEM_CHUNK;
            quant_piece(&q, v, src, dst, row, at, inner - at < PT_MEM_CHUNK ? inner - at : PT_MEM_CHUNK, xb, sb, zb);
        }
    }
    return dnnl_success;
}
