/* Quantization ops on dense tensors (kernels/mem/mem.h): chunks of the last
 * dim loaded to f32 through the vector rows (4-bit data nibble by nibble),
 * scaled with scalar or per-element scale and zero point, stored through the
 * vector rows with the saturating conversions of ir/dtype.c. */
#include <string.h>

#include "ir/dtype.h"
#include "kernels/mem/mem_io.h"
#include "kernels/mem/mem_rows.h"
#include "kernels/vec/vec_rows.h"

bool pt_mem_quant_dtype_ok(dnnl_data_type_t dt) {
    return pt_mem_dtype_ok(dt) || dt == dnnl_s8 || dt == dnnl_u8 || dt == dnnl_s4 || dt == dnnl_u4;
}

static bool is_4bit(dnnl_data_type_t dt) { return dt == dnnl_s4 || dt == dnnl_u4; }

/* Elements [e, e + n) of a 4-bit tensor (element i in byte i/2, low nibble
 * first) as f32: whole bytes two elements at a time, in a loop the compiler
 * vectorises. */
static void nibbles_to_f32(float *dst, const uint8_t *src, int64_t e, int64_t n, bool is_signed) {
    int64_t i = 0;
    if (n > 0 && e % 2 != 0) dst[i++] = (float)pt_int4_value(pt_nibble_at(src, e), is_signed);
    const uint8_t *b = src + (e + i) / 2;
    const int64_t pairs = (n - i) / 2;
    float *d = dst + i;
    /* The signedness a constant in each loop, so that both vectorise. */
    if (is_signed) {
        for (int64_t k = 0; k < pairs; ++k) {
            d[2 * k] = (float)pt_int4_value(b[k] & 15, true);
            d[2 * k + 1] = (float)pt_int4_value(b[k] >> 4, true);
        }
    } else {
        for (int64_t k = 0; k < pairs; ++k)
            d[2 * k] = (float)pt_int4_value(b[k] & 15, false), d[2 * k + 1] = (float)pt_int4_value(b[k] >> 4, false);
    }
    i += 2 * pairs;
    if (i < n) dst[i] = (float)pt_int4_value(pt_nibble_at(src, e + i), is_signed);
}

/* Elements [e, e + n) as f32 (the tensor itself when it is f32). */
static const float *load_any(const pt_vec_ops *v, dnnl_data_type_t dt, const void *base, int64_t e, int64_t n,
                             float *buf) {
    switch ((int)dt) {
        case dnnl_s8: v->s8_to_f32(buf, (const int8_t *)base + e, n); return buf;
        case dnnl_u8: v->u8_to_f32(buf, (const uint8_t *)base + e, n); return buf;
        case dnnl_s4:
        case dnnl_u4: nibbles_to_f32(buf, base, e, n, dt == dnnl_s4); return buf;
        case dnnl_s32:
            for (int64_t i = 0; i < n; ++i) buf[i] = (float)((const int32_t *)base)[e + i];
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

/* y = x·(1/s) + z (quantize: s holds the reciprocals) or (x - z)·s
 * (dequantize) over n elements, scale and zero point one value each (step
 * 0) or one per element (step 1), each step rounded to f32 as the
 * reference does: the vector table's steps. */
static void apply_quant(const pt_mem_quant_plan *p, const pt_vec_ops *v, float *y, const float *x, const float *s,
                        const float *z, int64_t step, int64_t n) {
    if (p->quantize) {
        v->binary(dnnl_graph_op_multiply, y, x, 1, s, step, n);
        if (p->has_zp) v->binary(dnnl_graph_op_add, y, y, 1, z, step, n);
    } else if (p->has_zp) {
        v->binary(dnnl_graph_op_subtract, y, x, 1, z, step, n);
        v->binary(dnnl_graph_op_multiply, y, y, 1, s, step, n);
    } else {
        v->binary(dnnl_graph_op_multiply, y, x, 1, s, step, n);
    }
}

/* Groups along the last dim at least this long are run as segments of one
 * scale each; shorter ones (per-channel along the last dim is 1) take one
 * scale per element. */
#define QUANT_MIN_SEGMENT 16

typedef struct {
    const pt_vec_ops *v;
    const pt_mem_rows *m; /* the ISA row (NULL: the vector table's steps) */
    bool stream;          /* float outputs past the caches (m only) */
    const pt_tview *src, *dst;
    int64_t e;            /* the piece's first element */
    float *xb, *yb;
} quant_io;

/* Elements [j, j + n) of the piece with one scale / zero point (step 0) or
 * one per element (step 1); s holds reciprocals when quantizing. */
static void quant_segment(const pt_mem_quant_plan *p, const quant_io *io, int64_t j, int64_t n, const float *s,
                          const float *z, int64_t step) {
    const dnnl_data_type_t ddt = io->dst->lt.data_type, xdt = io->src->lt.data_type;
    const int64_t at = io->e + j;
    /* 4-bit data reaches the ISA row from a whole byte; else (and without a
     * row) it is widened to f32 here. */
    const bool nibbles = xdt == dnnl_s4 || xdt == dnnl_u4, widen = nibbles && (!io->m || at % 2 != 0);
    if (widen) nibbles_to_f32(io->xb + j, io->src->data, at, n, xdt == dnnl_s4);
    const void *x = widen ? (const void *)(io->xb + j) : (const char *)io->src->data + pt_dt_bytes(xdt, at);
    const dnnl_data_type_t xt = widen ? dnnl_f32 : xdt;
    /* Per-element scales come with per-element zero points (zeros without). */
    const float *zr = p->has_zp || step ? z : NULL;
    if (io->m && ddt != dnnl_s4 && ddt != dnnl_u4 &&
        io->m->quant((char *)io->dst->data + pt_dt_bytes(ddt, at), ddt, x, xt, n, s, zr, step, p->quantize, io->stream))
        return;
    const float *xf = load_any(io->v, xt, x, 0, n, io->xb + j);
    float *y = ddt == dnnl_f32 ? (float *)io->dst->data + at : io->yb;
    apply_quant(p, io->v, y, xf, s, z, step, n);
    store_any(io->v, ddt, io->dst->data, at, n, y);
}

/* Dequantizing a piece that starts a group of 2^k >= 16 elements: one call
 * of the ISA row with one scale and zero point per group.  False where the
 * row does not take it (then nothing is written). */
static bool grouped_row(const quant_params *q, const quant_io *io, int64_t at, int64_t len, int64_t gi, int64_t so,
                        int64_t sl, int64_t zo, int64_t zl, float *sb, float *zb) {
    const pt_mem_quant_plan *p = q->p;
    const dnnl_data_type_t ddt = io->dst->lt.data_type, xdt = io->src->lt.data_type;
    const int64_t e = io->e;
    if (p->quantize || at % gi != 0 || (gi & (gi - 1)) != 0 || ((xdt == dnnl_s4 || xdt == dnnl_u4) && e % 2 != 0))
        return false;
    const int64_t groups = (len + gi - 1) / gi;
    for (int64_t g = 0; g < groups; ++g) {
        sb[g] = scale_at(q, so + (at / gi + g) * sl);
        zb[g] = p->has_zp ? zp_at(q, zo + (at / gi + g) * zl) : 0.f;
    }
    return io->m->quant((char *)io->dst->data + pt_dt_bytes(ddt, e), ddt,
                        (const char *)io->src->data + pt_dt_bytes(xdt, e), xdt, len, sb, zb, gi, false, io->stream);
}

/* Elements [at, at + len) of row `row` (all dims but the last). */
static void quant_piece(const quant_params *q, quant_io *io, int64_t row, int64_t at, int64_t len, float *sb,
                        float *zb) {
    const pt_mem_quant_plan *p = q->p;
    const int last = p->nd - 1;
    int64_t so = 0, zo = 0, rest = row;
    for (int d = last - 1; d >= 0; --d) {
        const int64_t i = rest % p->dims[d];
        rest /= p->dims[d];
        so += i / p->G[d] * p->ss[d];
        zo += i / p->G[d] * p->zs[d];
    }
    const int64_t gi = p->G[last], sl = p->ss[last], zl = p->has_zp ? p->zs[last] : 0;
    io->e = row * p->dims[last] + at;
    /* Quantizing multiplies by reciprocals: the plan holds them for static
     * scales; dynamic ones are inverted here. */
    const bool invert = p->quantize && p->dynamic;
    if ((sl == 0 && zl == 0) || at / gi == (at + len - 1) / gi) {
        /* One scale for the piece (per tensor, or the piece inside one group). */
        const int64_t g = sl == 0 && zl == 0 ? 0 : at / gi;
        sb[0] = scale_at(q, so + g * sl);
        if (invert) sb[0] = 1.f / sb[0];
        if (p->has_zp) zb[0] = zp_at(q, zo + g * zl);
        quant_segment(p, io, 0, len, sb, zb, 0);
    } else if (gi >= QUANT_MIN_SEGMENT && io->m && grouped_row(q, io, at, len, gi, so, sl, zo, zl, sb, zb)) {
        /* Done in one call of the ISA row with a value per group. */
    } else if (gi >= QUANT_MIN_SEGMENT && io->m) {
        /* The ISA row takes the piece in one call, its scales spread per
         * element: a call per group would split a line of dst between two
         * calls every group (cached stores, a read of the line, for both
         * ends of each), where one call per piece streams whole lines. */
        for (int64_t j = 0; j < len;) {
            const int64_t g = (at + j) / gi, end = (g + 1) * gi - at < len ? (g + 1) * gi - at : len;
            float sv = scale_at(q, so + g * sl), zv = p->has_zp ? zp_at(q, zo + g * zl) : 0.f;
            if (invert) sv = 1.f / sv;
            for (int64_t i = j; i < end; ++i) sb[i] = sv, zb[i] = zv;
            j = end;
        }
        quant_segment(p, io, 0, len, sb, zb, 1);
    } else if (gi >= QUANT_MIN_SEGMENT) {
        for (int64_t j = 0; j < len;) {
            const int64_t g = (at + j) / gi, end = (g + 1) * gi - at < len ? (g + 1) * gi - at : len;
            sb[0] = scale_at(q, so + g * sl);
            if (invert) sb[0] = 1.f / sb[0];
            if (p->has_zp) zb[0] = zp_at(q, zo + g * zl);
            quant_segment(p, io, j, end - j, sb, zb, 0);
            j = end;
        }
    } else {
        /* One scale per element: read as a run where they lie one after
         * another (per channel along the last dim). */
        const float *sv = sb, *zv = zb;
        if (gi == 1 && sl == 1 && !p->dynamic) sv = p->scales + so + at;
        else if (gi == 1 && sl == 1) sv = load_any(io->v, q->sc_dt, q->sc, so + at, len, sb);
        else
            for (int64_t j = 0; j < len; ++j) sb[j] = scale_at(q, so + (at + j) / gi * sl);
        if (invert) {
            for (int64_t j = 0; j < len; ++j) sb[j] = 1.f / sv[j];
            sv = sb;
        }
        if (p->has_zp && gi == 1 && zl == 1) zv = p->dynamic ? load_any(io->v, q->zp_dt, q->zp, zo + at, len, zb) : p->zps + zo + at;
        else if (p->has_zp)
            for (int64_t j = 0; j < len; ++j) zb[j] = zp_at(q, zo + (at + j) / gi * zl);
        else
            memset(zb, 0, (size_t)len * sizeof *zb); /* the ISA row takes per-element zero points with per-element scales */
        quant_segment(p, io, 0, len, sv, zv, 1);
    }
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
    /* Large float outputs go out with non-temporal stores (mem_rows.h), the
     * next piece's source fetched meanwhile. */
    const pt_mem_rows *m = pt_mem_rows_get();
    const dnnl_data_type_t ddt = dst->lt.data_type, sdt = src->lt.data_type;
    const bool streamed = m && (ddt == dnnl_f32 || ddt == dnnl_bf16 || ddt == dnnl_f16) &&
                          pt_dt_bytes(ddt, p->n) >= PT_MEM_STREAM_BYTES;
    const pt_mem_rows *sm = streamed ? m : NULL;
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        float xb[PT_MEM_CHUNK], yb[PT_MEM_CHUNK], sb[PT_MEM_CHUNK], zb[PT_MEM_CHUNK];
        quant_io io = {.v = v, .m = m, .stream = sm != NULL, .src = src, .dst = dst, .xb = xb, .yb = yb};
        int64_t b, e;
        pt_mem_share(pieces, nt > 1 ? pt_thread_id() : 0, pt_mem_team(nt), &b, &e);
        const size_t line_elems = (size_t)(64 * 8 / pt_dt_bits(sdt));
        for (int64_t k = b; k < e; ++k) {
            const int64_t row = k / per_row, at = (k % per_row) * PT_MEM_CHUNK;
            const int64_t len = inner - at < PT_MEM_CHUNK ? inner - at : PT_MEM_CHUNK;
            /* The next piece's source (rows are contiguous), fetched into L2
             * while this one computes: the hardware prefetchers here do
             * little, and a burst of 64 fetches into L1 stalled on the fill
             * buffers (perf: nearly all samples on the prefetch loop;
             * quantize_f32_u8 3.5-3.9 -> 2.8-3.4 ms alternating builds). */
            if (k + 1 < e) {
                const char *next = (const char *)src->data + pt_dt_bytes(sdt, row * inner + at + len);
                for (size_t l = 0; l < (size_t)PT_MEM_CHUNK / line_elems; ++l) __builtin_prefetch(next + 64 * l, 0, 2);
            }
            quant_piece(&q, &io, row, at, len, sb, zb);
        }
        if (sm) sm->fence();
    }
    return dnnl_success;
}
