/* Bandwidth of the fast memory-bound single-op kernels (src/kernels/mem/):
 * each op on a 64 MiB tensor (the source, or the output of the ops that
 * widen: Dequantize, Interpolate), shaped [rows, 4096] or as the op needs
 * (GroupNorm, Reorder, StaticTranspose, pooling, Interpolate: see the make_*
 * rows), run through the public API as a one-op graph, timed as the median
 * of repeated executions, with GB/s counted on the bytes read and written
 * once each.
 * Two yardsticks: the stream figure of bench_peak (<exe dir>/peak.txt, read
 * bandwidth) and a 64 MiB copy (read + write, the traffic shape of the
 * kernels) timed in alternation with each case, so that both medians see the
 * same load: on a shared VM bandwidth moves from second to second, and that
 * ratio is the one to trust.  Each case also runs its
 * reference kernel (the fast kernel switched off on the same compiled
 * partition) for the speed-up.  Options: --seconds=S per measurement
 * (default 0.5), --mib=N source size (default 64), --filter=TEXT, --no-ref. */
#include <math.h>
#include <omp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "bench_util.h"
#include "compile/compiled.h"
#include "oneapi/dnnl/dnnl_graph.h"

typedef dnnl_graph_logical_tensor_t lt_t;

static void die(const char *what, dnnl_status_t st) {
    fprintf(stderr, "bench_membound: %s failed (status %d)\n", what, (int)st);
    exit(1);
}

/* A tensor's buffer, 64-byte aligned as frameworks allocate tensors (a plain
 * malloc of this size returns 16 bytes past a page, which puts every row of
 * a 64-byte multiple across cache lines: the transposes then take their
 * memcpy path instead of whole streamed lines). */
static void *tensor_alloc(size_t bytes) {
    void *p = aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!p) die("aligned_alloc", dnnl_out_of_memory);
    return p;
}

#define TRY(expr)                                 \
    do {                                          \
        dnnl_status_t st_ = (expr);               \
        if (st_ != dnnl_success) die(#expr, st_); \
    } while (0)

static dnnl_engine_t g_eng;
static dnnl_stream_t g_strm;
static double g_seconds = 0.5;

/* Median time (ms) of fn(ctx) repeated for about g_seconds (at least 3
 * runs, after one warm-up run). */
static double time_ms(void (*fn)(void *), void *ctx, double seconds) {
    double t[256];
    int n = 0;
    fn(ctx);
    const double start = bench_now_s();
    while (n < 256 && (n < 3 || bench_now_s() - start < seconds)) {
        const double t0 = bench_now_s();
        fn(ctx);
        t[n++] = (bench_now_s() - t0) * 1e3;
    }
    return bench_median(t, n);
}

/* Medians (ms) of fn(ctx), of the copy and of the write, run in
 * alternation for about g_seconds (at least 3 rounds, after one warm-up of
 * each). */
static void (*g_copy_fn)(void *), (*g_write_fn)(void *);
static void *g_copy_ctx;
static double time_pair_ms(void (*fn)(void *), void *ctx, double *copy_ms, double *write_ms) {
    double t[256], c[256], w[256];
    int n = 0;
    fn(ctx);
    g_copy_fn(g_copy_ctx);
    g_write_fn(g_copy_ctx);
    const double start = bench_now_s();
    while (n < 256 && (n < 3 || bench_now_s() - start < g_seconds)) {
        double t0 = bench_now_s();
        g_copy_fn(g_copy_ctx);
        c[n] = (bench_now_s() - t0) * 1e3;
        t0 = bench_now_s();
        g_write_fn(g_copy_ctx);
        w[n] = (bench_now_s() - t0) * 1e3;
        t0 = bench_now_s();
        fn(ctx);
        t[n++] = (bench_now_s() - t0) * 1e3;
    }
    *copy_ms = bench_median(c, n);
    *write_ms = bench_median(w, n);
    return bench_median(t, n);
}

/* ---- the stream copy ---- */

typedef struct {
    const float *src;
    float *dst;
    size_t n;
} copy_ctx;

static void run_copy(void *p) {
    const copy_ctx *c = p;
#pragma omp parallel
    {
        const int t = omp_get_thread_num(), nt = omp_get_num_threads();
        const size_t b = c->n * (size_t)t / (size_t)nt, e = c->n * (size_t)(t + 1) / (size_t)nt;
        memcpy(c->dst + b, c->src + b, (e - b) * sizeof(float));
    }
}

/* The copy's destination filled with non-temporal stores (SSE2: every
 * x86-64 CPU), the way the kernels write large outputs: the write
 * bandwidth, which bounds the cases that write more than they read. */
static void run_write(void *p) {
    const copy_ctx *c = p;
#pragma omp parallel
    {
        const int t = omp_get_thread_num(), nt = omp_get_num_threads();
        /* Shares in whole 16-byte stores (the copy's buffers are malloc'ed: 16-byte aligned). */
        const size_t b = c->n * (size_t)t / (size_t)nt / 4 * 4;
        const size_t e = t + 1 == nt ? c->n : c->n * (size_t)(t + 1) / (size_t)nt / 4 * 4;
#if defined(__SSE2__)
        const __m128 v = _mm_set1_ps(1.f);
        for (size_t i = b; i < e; i += 4) _mm_stream_ps(c->dst + i, v);
        _mm_sfence();
#else
        memset(c->dst + b, 0, (e - b) * sizeof(float));
#endif
    }
}

/* ---- one-op graphs ---- */

/* A tensor of a case: dense row-major unless `strides` is given. */
typedef struct {
    int nd;
    dnnl_dims_t dims;
    dnnl_data_type_t dt;
    bool strided;
    dnnl_dims_t strides;
} tensor_desc;

/* One op, its inputs (the first is the big source) and its output. */
typedef struct case_desc {
    dnnl_graph_op_kind_t kind;
    int nin;
    tensor_desc in[4], out;
    void (*attrs)(dnnl_graph_op_t op, const struct case_desc *d);
    bool variant; /* for attrs: GroupNorm NXC, Interpolate bilinear */
    float span;   /* float inputs uniform in [-span, span); 0: 1 */
    bool normal;  /* float inputs drawn from N(0, 1) instead */
} case_desc;

typedef struct bench_case {
    const char *name;
    dnnl_data_type_t dt; /* the source's type (the output's for the cases that widen or narrow) */
    void (*make)(case_desc *d, size_t src_bytes, const struct bench_case *bc);
} bench_case;

static size_t dt_bytes(dnnl_data_type_t dt) {
    switch ((int)dt) {
        case dnnl_f32: case dnnl_s32: return 4;
        case dnnl_bf16: case dnnl_f16: return 2;
        default: return 1;
    }
}

static tensor_desc dense(dnnl_data_type_t dt, int nd, const int64_t *dims) {
    tensor_desc t = {.nd = nd, .dt = dt};
    memcpy(t.dims, dims, sizeof(int64_t) * (size_t)nd);
    return t;
}
static tensor_desc dense2(dnnl_data_type_t dt, int64_t a, int64_t b) { return dense(dt, 2, (int64_t[]){a, b}); }
static tensor_desc dense1(dnnl_data_type_t dt, int64_t a) { return dense(dt, 1, (int64_t[]){a}); }
static tensor_desc dense4(dnnl_data_type_t dt, int64_t a, int64_t b, int64_t c, int64_t e) {
    return dense(dt, 4, (int64_t[]){a, b, c, e});
}

static void set_s64(dnnl_graph_op_t op, dnnl_graph_op_attr_t a, const int64_t *v, size_t n) {
    TRY(dnnl_graph_op_set_attr_s64(op, a, v, n));
}
static void set_str(dnnl_graph_op_t op, dnnl_graph_op_attr_t a, const char *v) {
    TRY(dnnl_graph_op_set_attr_str(op, a, v, strlen(v)));
}
static void set_bool(dnnl_graph_op_t op, dnnl_graph_op_attr_t a, bool v) {
    const uint8_t b = v;
    TRY(dnnl_graph_op_set_attr_bool(op, a, &b, 1));
}

/* Rows of 4096 holding src_bytes of type dt. */
#define COLS 4096
static int64_t rows_of(size_t src_bytes, dnnl_data_type_t dt) { return (int64_t)(src_bytes / dt_bytes(dt) / COLS); }

/* [rows, 4096] -> same, one input. */
static void make_rows(case_desc *d, size_t src_bytes, dnnl_data_type_t in_dt, dnnl_data_type_t out_dt) {
    const int64_t r = rows_of(src_bytes, in_dt);
    d->nin = 1, d->in[0] = dense2(in_dt, r, COLS), d->out = dense2(out_dt, r, COLS);
}

static void attrs_softmax(dnnl_graph_op_t op, const case_desc *d) {
    (void)d;
    set_s64(op, dnnl_graph_op_attr_axis, (int64_t[]){-1}, 1);
}
static void make_softmax(case_desc *d, size_t sb, const bench_case *bc) {
    make_rows(d, sb, bc->dt, bc->dt), d->kind = dnnl_graph_op_softmax, d->attrs = attrs_softmax;
}
static void attrs_layernorm(dnnl_graph_op_t op, const case_desc *d) {
    (void)d;
    set_bool(op, dnnl_graph_op_attr_keep_stats, false);
}
static void make_layernorm(case_desc *d, size_t sb, const bench_case *bc) {
    make_rows(d, sb, bc->dt, bc->dt), d->kind = dnnl_graph_op_layer_norm, d->attrs = attrs_layernorm;
    d->nin = 3, d->in[1] = d->in[2] = dense1(dnnl_f32, COLS);
}
static void make_rmsnorm(case_desc *d, size_t sb, const bench_case *bc) {
    make_rows(d, sb, bc->dt, bc->dt), d->kind = dnnl_graph_op_rms_norm;
    d->nin = 2, d->in[1] = dense1(dnnl_f32, COLS);
}
static void make_relu(case_desc *d, size_t sb, const bench_case *bc) {
    make_rows(d, sb, bc->dt, bc->dt), d->kind = dnnl_graph_op_relu;
}
static void make_gelu(case_desc *d, size_t sb, const bench_case *bc) {
    make_rows(d, sb, bc->dt, bc->dt), d->kind = dnnl_graph_op_gelu;
}
/* Inputs in [-4, 4): most vectors hold an |x| beyond the polynomial's √2. */
static void make_gelu_x4(case_desc *d, size_t sb, const bench_case *bc) {
    make_gelu(d, sb, bc), d->span = 4.f;
}
/* Inputs from N(0, 1), as activations often are. */
static void make_gelu_normal(case_desc *d, size_t sb, const bench_case *bc) {
    make_gelu(d, sb, bc), d->normal = true;
}
static void make_sigmoid(case_desc *d, size_t sb, const bench_case *bc) {
    make_rows(d, sb, bc->dt, bc->dt), d->kind = dnnl_graph_op_sigmoid;
}
static void make_add(case_desc *d, size_t sb, const bench_case *bc) {
    make_rows(d, sb, bc->dt, bc->dt), d->kind = dnnl_graph_op_add, d->nin = 2, d->in[1] = d->in[0];
}
static void make_add_row(case_desc *d, size_t sb, const bench_case *bc) {
    make_rows(d, sb, bc->dt, bc->dt), d->kind = dnnl_graph_op_add, d->nin = 2, d->in[1] = dense1(bc->dt, COLS);
}
static void make_mul_scalar(case_desc *d, size_t sb, const bench_case *bc) {
    make_rows(d, sb, bc->dt, bc->dt), d->kind = dnnl_graph_op_multiply, d->nin = 2, d->in[1] = dense1(bc->dt, 1);
}
static void make_typecast(case_desc *d, size_t sb, const bench_case *bc) {
    make_rows(d, sb, bc->dt, bc->dt == dnnl_f32 ? dnnl_bf16 : dnnl_f32), d->kind = dnnl_graph_op_type_cast;
}

/* GroupNorm: 128 channels in 32 groups, 64 x 64 pixels per channel. */
static void attrs_groupnorm(dnnl_graph_op_t op, const case_desc *d) {
    set_s64(op, dnnl_graph_op_attr_groups, (int64_t[]){32}, 1);
    set_bool(op, dnnl_graph_op_attr_keep_stats, false);
    set_str(op, dnnl_graph_op_attr_data_format, d->variant ? "NXC" : "NCX");
}
static void make_groupnorm(case_desc *d, size_t sb, const bench_case *bc, bool nxc) {
    const int64_t n = (int64_t)(sb / dt_bytes(bc->dt) / (128 * 64 * 64));
    d->kind = dnnl_graph_op_group_norm, d->attrs = attrs_groupnorm, d->nin = 3, d->variant = nxc;
    d->in[0] = nxc ? dense4(bc->dt, n, 64, 64, 128) : dense4(bc->dt, n, 128, 64, 64);
    d->in[1] = d->in[2] = dense1(dnnl_f32, 128);
    d->out = d->in[0];
}
static void make_groupnorm_ncx(case_desc *d, size_t sb, const bench_case *bc) { make_groupnorm(d, sb, bc, false); }
static void make_groupnorm_nxc(case_desc *d, size_t sb, const bench_case *bc) { make_groupnorm(d, sb, bc, true); }

/* Reorder NCHW -> NHWC: [N, 64, 128, 128] with the output's strides
 * channels-last. */
static void make_reorder_nhwc(case_desc *d, size_t sb, const bench_case *bc) {
    const int64_t c = 64, h = 128, w = 128, n = (int64_t)(sb / dt_bytes(bc->dt) / (size_t)(c * h * w));
    d->kind = dnnl_graph_op_reorder, d->nin = 1;
    d->in[0] = dense4(bc->dt, n, c, h, w);
    d->out = d->in[0];
    d->out.strided = true;
    const int64_t st[4] = {h * w * c, 1, w * c, c};
    memcpy(d->out.strides, st, sizeof st);
}
/* StaticTranspose [B, S, H, D] -> [B, H, S, D] (attention heads): rows of
 * D = 128 move whole. */
static void attrs_transpose_heads(dnnl_graph_op_t op, const case_desc *d) {
    (void)d;
    set_s64(op, dnnl_graph_op_attr_order, (int64_t[]){0, 2, 1, 3}, 4);
}
static void make_transpose_heads(case_desc *d, size_t sb, const bench_case *bc) {
    const int64_t s = 512, h = 32, e = 128, b = (int64_t)(sb / dt_bytes(bc->dt) / (size_t)(s * h * e));
    d->kind = dnnl_graph_op_static_transpose, d->attrs = attrs_transpose_heads, d->nin = 1;
    d->in[0] = dense4(bc->dt, b, s, h, e), d->out = dense4(bc->dt, b, h, s, e);
}
/* StaticTranspose of a square matrix (every element moves). */
static void attrs_transpose_2d(dnnl_graph_op_t op, const case_desc *d) {
    (void)d;
    set_s64(op, dnnl_graph_op_attr_order, (int64_t[]){1, 0}, 2);
}
static void make_transpose_2d(case_desc *d, size_t sb, const bench_case *bc) {
    const int64_t r = rows_of(sb, bc->dt);
    d->kind = dnnl_graph_op_static_transpose, d->attrs = attrs_transpose_2d, d->nin = 1;
    d->in[0] = dense2(bc->dt, r, COLS), d->out = dense2(bc->dt, COLS, r);
}

/* Quantize f32 -> u8, per tensor. */
static void attrs_quantize(dnnl_graph_op_t op, const case_desc *d) {
    (void)d;
    const float sc = 0.05f;
    TRY(dnnl_graph_op_set_attr_f32(op, dnnl_graph_op_attr_scales, &sc, 1));
    set_s64(op, dnnl_graph_op_attr_zps, (int64_t[]){128}, 1);
    set_str(op, dnnl_graph_op_attr_qtype, "per_tensor");
    set_s64(op, dnnl_graph_op_attr_axis, (int64_t[]){1}, 1);
}
static void make_quantize(case_desc *d, size_t sb, const bench_case *bc) {
    (void)bc;
    make_rows(d, sb, dnnl_f32, dnnl_u8), d->kind = dnnl_graph_op_quantize, d->attrs = attrs_quantize;
}
/* Dequantize s8 -> f32 per channel of the 4096 columns (an f32 output of
 * the source size). */
static void attrs_dequantize(dnnl_graph_op_t op, const case_desc *d) {
    (void)d;
    static float sc[COLS];
    static int64_t zp[COLS];
    for (int i = 0; i < COLS; ++i) sc[i] = 0.01f + 0.001f * (float)(i % 17), zp[i] = i % 7 - 3;
    TRY(dnnl_graph_op_set_attr_f32(op, dnnl_graph_op_attr_scales, sc, COLS));
    set_s64(op, dnnl_graph_op_attr_zps, zp, COLS);
    set_str(op, dnnl_graph_op_attr_qtype, "per_channel");
    set_s64(op, dnnl_graph_op_attr_axis, (int64_t[]){1}, 1);
}
static void make_dequantize(case_desc *d, size_t sb, const bench_case *bc) {
    (void)bc;
    const int64_t r = rows_of(sb, dnnl_f32);
    d->kind = dnnl_graph_op_dequantize, d->attrs = attrs_dequantize, d->nin = 1;
    d->in[0] = dense2(dnnl_s8, r, COLS), d->out = dense2(dnnl_f32, r, COLS);
}
/* DynamicDequantize u4 -> f32 in groups of 128 along the rows (seed 002's
 * weights), f32 scales and u4 zero points per group. */
static void attrs_dyn_dequantize(dnnl_graph_op_t op, const case_desc *d) {
    (void)d;
    set_str(op, dnnl_graph_op_attr_qtype, "per_group");
    set_s64(op, dnnl_graph_op_attr_group_shape, (int64_t[]){1, 128}, 2);
}
static void make_dyn_dequantize(case_desc *d, size_t sb, const bench_case *bc) {
    (void)bc;
    const int64_t r = rows_of(sb, dnnl_f32);
    d->kind = dnnl_graph_op_dynamic_dequantize, d->attrs = attrs_dyn_dequantize, d->nin = 3;
    d->in[0] = dense2(dnnl_u4, r, COLS), d->in[1] = dense2(dnnl_f32, r, COLS / 128);
    d->in[2] = dense2(dnnl_u4, r, COLS / 128), d->out = dense2(dnnl_f32, r, COLS);
}

/* Reductions of [rows, 4096]: over the last axis (rows of 4096 into one
 * value each) or the first (columns). */
static void attrs_reduce_last(dnnl_graph_op_t op, const case_desc *d) {
    (void)d;
    set_s64(op, dnnl_graph_op_attr_axes, (int64_t[]){-1}, 1);
    set_bool(op, dnnl_graph_op_attr_keep_dims, true);
}
static void attrs_reduce_first(dnnl_graph_op_t op, const case_desc *d) {
    (void)d;
    set_s64(op, dnnl_graph_op_attr_axes, (int64_t[]){0}, 1);
    set_bool(op, dnnl_graph_op_attr_keep_dims, true);
}
static void make_reduce_sum_last(case_desc *d, size_t sb, const bench_case *bc) {
    make_rows(d, sb, bc->dt, bc->dt), d->kind = dnnl_graph_op_reduce_sum, d->attrs = attrs_reduce_last;
    d->out.dims[1] = 1;
}
static void make_reduce_max_last(case_desc *d, size_t sb, const bench_case *bc) {
    make_reduce_sum_last(d, sb, bc), d->kind = dnnl_graph_op_reduce_max;
}
static void make_reduce_mean_first(case_desc *d, size_t sb, const bench_case *bc) {
    make_rows(d, sb, bc->dt, bc->dt), d->kind = dnnl_graph_op_reduce_mean, d->attrs = attrs_reduce_first;
    d->out.dims[0] = 1;
}

/* Pooling NXC [N, 128, 128, 128]: MaxPool 3x3 stride 2 pad 1, AvgPool 2x2
 * stride 2. */
static void attrs_pool(dnnl_graph_op_t op, const case_desc *d) {
    const bool max = d->kind == dnnl_graph_op_max_pool;
    const int64_t k = max ? 3 : 2, p = max ? 1 : 0;
    set_s64(op, dnnl_graph_op_attr_kernel, (int64_t[]){k, k}, 2);
    set_s64(op, dnnl_graph_op_attr_strides, (int64_t[]){2, 2}, 2);
    set_s64(op, dnnl_graph_op_attr_pads_begin, (int64_t[]){p, p}, 2);
    set_s64(op, dnnl_graph_op_attr_pads_end, (int64_t[]){p, p}, 2);
    set_str(op, dnnl_graph_op_attr_data_format, "NXC");
    if (!max) set_bool(op, dnnl_graph_op_attr_exclude_pad, false);
}
static void make_pool(case_desc *d, size_t sb, const bench_case *bc, dnnl_graph_op_kind_t kind) {
    const int64_t n = (int64_t)(sb / dt_bytes(bc->dt) / (128 * 128 * 128));
    d->kind = kind, d->attrs = attrs_pool, d->nin = 1;
    d->in[0] = dense4(bc->dt, n, 128, 128, 128), d->out = dense4(bc->dt, n, 64, 64, 128);
}
static void make_maxpool(case_desc *d, size_t sb, const bench_case *bc) { make_pool(d, sb, bc, dnnl_graph_op_max_pool); }
static void make_avgpool(case_desc *d, size_t sb, const bench_case *bc) { make_pool(d, sb, bc, dnnl_graph_op_avg_pool); }

/* Interpolate NXC, 2x up: [N, 64, 64, 128] -> [N, 128, 128, 128] (the
 * output of the source size). */
static void attrs_interp(dnnl_graph_op_t op, const case_desc *d) {
    set_str(op, dnnl_graph_op_attr_mode, d->variant ? "bilinear" : "nearest");
    set_str(op, dnnl_graph_op_attr_data_format, "NXC");
    set_s64(op, dnnl_graph_op_attr_sizes, (int64_t[]){128, 128}, 2);
}
static void make_interp(case_desc *d, size_t sb, const bench_case *bc, bool linear) {
    const int64_t n = (int64_t)(sb / dt_bytes(bc->dt) / (128 * 128 * 128));
    d->kind = dnnl_graph_op_interpolate, d->attrs = attrs_interp, d->nin = 1;
    d->in[0] = dense4(bc->dt, n, 64, 64, 128), d->out = dense4(bc->dt, n, 128, 128, 128);
    d->variant = linear;
}
static void make_interp_nearest(case_desc *d, size_t sb, const bench_case *bc) { make_interp(d, sb, bc, false); }
static void make_interp_linear(case_desc *d, size_t sb, const bench_case *bc) { make_interp(d, sb, bc, true); }

typedef struct {
    dnnl_graph_compiled_partition_t cp;
    dnnl_graph_tensor_t tin[4], tout[2];
    size_t nin, nout;
} exec_ctx;

static void run_exec(void *p) {
    exec_ctx *e = p;
    TRY(dnnl_graph_compiled_partition_execute(e->cp, g_strm, e->nin, (const_dnnl_graph_tensor_t *)e->tin, e->nout,
                                              (const_dnnl_graph_tensor_t *)e->tout));
    TRY(dnnl_stream_wait(g_strm));
}

/* Deterministic contents: floats uniform in [-span, span) or, when
 * `normal`, from N(0, 1) (Box-Muller), integers any byte. */
static void fill(void *buf, dnnl_data_type_t dt, size_t bytes, float span, bool normal) {
    uint32_t s = 12345u;
    const size_t n = bytes / dt_bytes(dt);
    for (size_t i = 0; i < n; ++i) {
        s = s * 1664525u + 1013904223u;
        float v;
        if (normal) {
            const double u1 = ((double)(s >> 8) + 0.5) / 16777216.0;
            s = s * 1664525u + 1013904223u;
            const double u2 = (double)(s >> 8) / 16777216.0;
            v = (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
        } else {
            v = ((float)(s >> 8) / 8388608.f - 1.f) * span;
        }
        uint32_t u;
        memcpy(&u, &v, 4);
        if (dt == dnnl_f32) ((float *)buf)[i] = v;
        else if (dt == dnnl_bf16) ((uint16_t *)buf)[i] = (uint16_t)(u >> 16); /* the upper half of the f32 bits */
        else ((uint8_t *)buf)[i] = (uint8_t)(s >> 24);
    }
}

typedef struct {
    double fast_ms, copy_ms, write_ms, ref_ms, bytes, out_bytes;
    const char *kernel;
} case_result;

static void lt_of(lt_t *lt, size_t id, const tensor_desc *t) {
    if (t->strided)
        TRY(dnnl_graph_logical_tensor_init_with_strides(lt, id, t->dt, t->nd, t->dims, t->strides,
                                                        dnnl_graph_tensor_property_undef));
    else
        TRY(dnnl_graph_logical_tensor_init_with_dims(lt, id, t->dt, t->nd, t->dims, dnnl_graph_layout_type_strided,
                                                     dnnl_graph_tensor_property_undef));
}

static case_result run_case(const bench_case *bc, size_t src_bytes, bool with_ref) {
    case_desc cd = {0};
    bc->make(&cd, src_bytes, bc);
    /* Ids: 1 the source, 2 the output, 3.. the other inputs. */
    lt_t lt[5];
    const int nin = cd.nin;
    lt_of(&lt[0], 1, &cd.in[0]);
    lt_of(&lt[1], 2, &cd.out);
    for (int i = 1; i < nin; ++i) lt_of(&lt[1 + i], (size_t)i + 2, &cd.in[i]);
    dnnl_graph_graph_t g;
    TRY(dnnl_graph_graph_create(&g, dnnl_cpu));
    dnnl_graph_op_t op;
    TRY(dnnl_graph_op_create(&op, 1, cd.kind, bc->name));
    TRY(dnnl_graph_op_add_input(op, &lt[0]));
    for (int i = 1; i < nin; ++i) TRY(dnnl_graph_op_add_input(op, &lt[1 + i]));
    TRY(dnnl_graph_op_add_output(op, &lt[1]));
    if (cd.attrs) cd.attrs(op, &cd);
    TRY(dnnl_graph_add_op(g, op));
    TRY(dnnl_graph_op_destroy(op));
    TRY(dnnl_graph_graph_finalize(g));
    TRY(dnnl_graph_graph_filter(g, dnnl_graph_partition_policy_fusion));
    size_t np = 0;
    TRY(dnnl_graph_graph_get_partition_num(g, &np));
    if (np != 1) die("one partition", dnnl_invalid_graph);
    dnnl_graph_partition_t part;
    TRY(dnnl_graph_graph_get_partitions(g, 1, &part));
    exec_ctx e = {.nin = (size_t)nin, .nout = 1};
    const lt_t *cin[4] = {&lt[0], &lt[2], &lt[3], &lt[4]}, *cout[1] = {&lt[1]};
    lt_t ports[4];
    TRY(dnnl_graph_partition_get_input_ports(part, e.nin, ports));
    const lt_t *ordered[4];
    for (size_t i = 0; i < e.nin; ++i)
        for (int k = 0; k < nin; ++k)
            if (cin[k]->id == ports[i].id) ordered[i] = cin[k];
    TRY(dnnl_graph_compiled_partition_create(&e.cp, part));
    TRY(dnnl_graph_partition_compile(part, e.cp, e.nin, ordered, 1, cout, g_eng));
    void *bufs[4];
    case_result r = {.bytes = 0, .kernel = e.cp->c->has_fused && e.cp->c->fused.kernel_name ? e.cp->c->fused.kernel_name : "reference"};
    for (size_t i = 0; i < e.nin; ++i) {
        size_t bytes = 0;
        TRY(dnnl_graph_logical_tensor_get_mem_size(ordered[i], &bytes));
        bufs[i] = tensor_alloc(bytes);
        fill(bufs[i], ordered[i]->data_type, bytes, cd.span > 0.f ? cd.span : 1.f, cd.normal);
        TRY(dnnl_graph_tensor_create(&e.tin[i], ordered[i], g_eng, bufs[i]));
        r.bytes += (double)bytes;
    }
    size_t obytes = 0;
    TRY(dnnl_graph_logical_tensor_get_mem_size(&lt[1], &obytes));
    void *obuf = tensor_alloc(obytes);
    memset(obuf, 0, obytes);
    TRY(dnnl_graph_tensor_create(&e.tout[0], &lt[1], g_eng, obuf));
    r.bytes += (double)obytes, r.out_bytes = (double)obytes;
    r.fast_ms = time_pair_ms(run_exec, &e, &r.copy_ms, &r.write_ms);
    r.ref_ms = NAN;
    if (with_ref) {
        const bool fused = e.cp->c->has_fused;
        e.cp->c->has_fused = false; /* the reference kernel on the same plan */
        r.ref_ms = time_ms(run_exec, &e, 0.0);
        e.cp->c->has_fused = fused;
    }
    for (size_t i = 0; i < e.nin; ++i) {
        dnnl_graph_tensor_destroy(e.tin[i]);
        free(bufs[i]);
    }
    dnnl_graph_tensor_destroy(e.tout[0]);
    free(obuf);
    dnnl_graph_compiled_partition_destroy(e.cp);
    dnnl_graph_partition_destroy(part);
    dnnl_graph_graph_destroy(g);
    return r;
}

int main(int argc, char **argv) {
    size_t mib = 64;
    const char *filter = NULL;
    bool with_ref = true;
    for (int i = 1; i < argc; ++i) {
        if (!strncmp(argv[i], "--seconds=", 10)) g_seconds = atof(argv[i] + 10);
        else if (!strncmp(argv[i], "--mib=", 6)) mib = (size_t)atol(argv[i] + 6);
        else if (!strncmp(argv[i], "--filter=", 9)) filter = argv[i] + 9;
        else if (!strcmp(argv[i], "--no-ref")) with_ref = false;
        else {
            fprintf(stderr, "usage: bench_membound [--seconds=S] [--mib=N] [--filter=TEXT] [--no-ref]\n");
            return 2;
        }
    }
    const size_t src_bytes = mib << 20;
    TRY(dnnl_engine_create(&g_eng, dnnl_cpu, 0));
    TRY(dnnl_stream_create(&g_strm, g_eng, dnnl_stream_default_flags));

    char peak_path[4096];
    bench_executable_dir(peak_path, sizeof peak_path - 16);
    strcat(peak_path, "/peak.txt");
    machine_peak peak = {0};
    const bool have_peak = bench_peak_read(peak_path, &peak) == 0 && peak.stream_gbs > 0;

    copy_ctx cc = {.n = src_bytes / 4};
    float *a = malloc(src_bytes), *b = malloc(src_bytes);
    if (!a || !b) die("malloc", dnnl_out_of_memory);
    fill(a, dnnl_f32, cc.n, 1.f, false);
    memset(b, 0, src_bytes);
    cc.src = a, cc.dst = b;
    g_copy_fn = run_copy, g_write_fn = run_write;
    g_copy_ctx = &cc;
    const double copy_gbs_start = 2.0 * (double)src_bytes / (time_ms(run_copy, &cc, g_seconds) * 1e6);

    printf("bench_membound: %zu MiB sources [rows, 4096], %d threads\n", mib, omp_get_max_threads());
    printf("stream copy at the start: %.1f GB/s (read + write)", copy_gbs_start);
    if (have_peak) printf("; peak.txt stream: %.1f GB/s", peak.stream_gbs);
    printf("\nGB/s: bytes read + written by the case; copy: the 64 MiB copy timed in alternation with it;\n"
           "%%write: the case's output bytes per second against a 64 MiB non-temporal fill timed beside it\n");
    printf("%-20s %-11s %8s %7s %7s %6s %6s %6s %9s %8s\n", "case", "kernel", "ms", "GB/s", "copy", "%copy", "%write",
           "%peak", "ref ms", "speedup");
    static const bench_case cases[] = {
        {"softmax_f32", dnnl_f32, make_softmax},
        {"softmax_bf16", dnnl_bf16, make_softmax},
        {"layernorm_f32", dnnl_f32, make_layernorm},
        {"layernorm_bf16", dnnl_bf16, make_layernorm},
        {"rmsnorm_f32", dnnl_f32, make_rmsnorm},
        {"rmsnorm_bf16", dnnl_bf16, make_rmsnorm},
        {"relu_f32", dnnl_f32, make_relu},
        {"relu_bf16", dnnl_bf16, make_relu},
        {"gelu_erf_f32", dnnl_f32, make_gelu},
        {"gelu_erf_bf16", dnnl_bf16, make_gelu},
        {"gelu_erf_bf16_x4", dnnl_bf16, make_gelu_x4},
        {"gelu_erf_bf16_normal", dnnl_bf16, make_gelu_normal},
        {"sigmoid_f32", dnnl_f32, make_sigmoid},
        {"add_f32", dnnl_f32, make_add},
        {"add_bf16", dnnl_bf16, make_add},
        {"add_row_bcast_f32", dnnl_f32, make_add_row},
        {"mul_scalar_f32", dnnl_f32, make_mul_scalar},
        {"typecast_f32_bf16", dnnl_f32, make_typecast},
        {"typecast_bf16_f32", dnnl_bf16, make_typecast},
        {"groupnorm_ncx_f32", dnnl_f32, make_groupnorm_ncx},
        {"groupnorm_ncx_bf16", dnnl_bf16, make_groupnorm_ncx},
        {"groupnorm_nxc_f32", dnnl_f32, make_groupnorm_nxc},
        {"reorder_nhwc_f32", dnnl_f32, make_reorder_nhwc},
        {"transpose_heads_bf16", dnnl_bf16, make_transpose_heads},
        {"transpose_2d_f32", dnnl_f32, make_transpose_2d},
        {"quantize_f32_u8", dnnl_f32, make_quantize},
        {"dequantize_s8_f32", dnnl_f32, make_dequantize},
        {"dyn_dequant_u4_g128", dnnl_f32, make_dyn_dequantize},
        {"reduce_sum_last_f32", dnnl_f32, make_reduce_sum_last},
        {"reduce_max_last_f32", dnnl_f32, make_reduce_max_last},
        {"reduce_mean_first_f32", dnnl_f32, make_reduce_mean_first},
        {"maxpool_3x3s2_nxc_f32", dnnl_f32, make_maxpool},
        {"avgpool_2x2s2_nxc_f32", dnnl_f32, make_avgpool},
        {"interp_nearest_nxc_f32", dnnl_f32, make_interp_nearest},
        {"interp_bilinear_nxc_f32", dnnl_f32, make_interp_linear},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        if (filter && !strstr(cases[i].name, filter)) continue;
        const case_result r = run_case(&cases[i], src_bytes, with_ref);
        const double gbs = r.bytes / (r.fast_ms * 1e6), copy_gbs = 2.0 * (double)src_bytes / (r.copy_ms * 1e6);
        const double write_share = (r.out_bytes / r.fast_ms) / ((double)src_bytes / r.write_ms);
        printf("%-20s %-11s %8.2f %7.1f %7.1f %5.0f%% %5.0f%% ", cases[i].name, r.kernel, r.fast_ms, gbs, copy_gbs,
               100.0 * gbs / copy_gbs, 100.0 * write_share);
        if (have_peak) printf("%5.0f%% ", 100.0 * gbs / peak.stream_gbs);
        else printf("%6s ", "-");
        if (with_ref) printf("%9.1f %7.1fx\n", r.ref_ms, r.ref_ms / r.fast_ms);
        else printf("%9s %8s\n", "-", "-");
        fflush(stdout);
    }
    free(a);
    free(b);
    dnnl_stream_destroy(g_strm);
    dnnl_engine_destroy(g_eng);
    return 0;
}
