/* Reference kernels, part 2: MatMul, the convolution family, pooling,
 * Interpolate and the normalisation ops.  Expected values are literals
 * computed independently (by hand or with a separate script), or identities
 * that must hold exactly (adjoint inner products, layout equivalences), or
 * finite differences for the backward ops. */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ir/dtype.h"
#include "ir/op.h"
#include "kernels/ref/ref_common.h"
#include "compile/ref_bind.h"
#include "test_util.h"

/* ---- tensors --------------------------------------------------------------- */

static void *g_allocs[4096];
static int g_nallocs;

static void *talloc(size_t n) {
    void *p = calloc(1, n ? n : 1);
    if (p && g_nallocs < 4096) g_allocs[g_nallocs++] = p;
    return p;
}
static void free_all(void) {
    while (g_nallocs > 0) free(g_allocs[--g_nallocs]);
}

/* A tensor of logical shape `dims`.  `perm` (NULL = row-major) lists the
 * logical dims from physically outermost to innermost; `gap` extra elements
 * pad the innermost physical dim, making the layout non-dense. */
static pt_tview mk(dnnl_data_type_t dt, int nd, const int64_t *dims, const int *perm, int64_t gap) {
    pt_tview t;
    memset(&t, 0, sizeof t);
    t.lt.ndims = nd;
    t.lt.data_type = dt;
    t.lt.layout_type = dnnl_graph_layout_type_strided;
    t.lt.property = dnnl_graph_tensor_property_undef;
    int64_t acc = 1;
    for (int i = nd - 1; i >= 0; --i) {
        int d = perm ? perm[i] : i;
        t.lt.dims[d] = dims[d];
        t.lt.layout.strides[d] = acc;
        acc *= dims[d] + (i == nd - 1 ? gap : 0);
    }
    t.data = talloc(pt_dt_bytes(dt, acc > 0 ? acc : 1));
    return t;
}
#define DIMS(...) ((const int64_t[]){__VA_ARGS__})
#define PERM(...) ((const int[]){__VA_ARGS__})
#define NDIMS(...) ((int)(sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t)))
#define MK(dt, ...) mk(dt, NDIMS(__VA_ARGS__), DIMS(__VA_ARGS__), NULL, 0)
#define MKP(dt, perm, gap, ...) mk(dt, NDIMS(__VA_ARGS__), DIMS(__VA_ARGS__), perm, gap)

static int64_t nel(const pt_tview *t) { return pt_tv_nelems(t); }

/* Writes / reads values in logical row-major order. */
static void setv(const pt_tview *t, const float *v) {
    int64_t idx[DNNL_MAX_NDIMS];
    for (int64_t i = 0; i < nel(t); ++i) {
        pt_unravel(i, t->lt.ndims, t->lt.dims, idx);
        pt_tv_setf(t, pt_tv_off(t, idx), v[i]);
    }
}
static void getv(const pt_tview *t, float *v) {
    int64_t idx[DNNL_MAX_NDIMS];
    for (int64_t i = 0; i < nel(t); ++i) {
        pt_unravel(i, t->lt.ndims, t->lt.dims, idx);
        v[i] = pt_tv_getf(t, pt_tv_off(t, idx));
    }
}
static float *getva(const pt_tview *t) {
    float *v = talloc((size_t)nel(t) * sizeof(float));
    getv(t, v);
    return v;
}
/* Fills with deterministic pseudo-random values in [-1, 1) (multiples of 1/64). */
static void fill_rand(const pt_tview *t, unsigned seed) {
    float *v = talloc((size_t)nel(t) * sizeof(float));
    unsigned s = seed * 2654435761u + 12345u;
    for (int64_t i = 0; i < nel(t); ++i) {
        s = s * 1103515245u + 12345u;
        v[i] = (float)((int)((s >> 16) % 128u) - 64) / 64.0f;
    }
    setv(t, v);
}
/* Copies logical values from src to dst (same logical shape, any layouts). */
static void copyv(const pt_tview *dst, const pt_tview *src) {
    float *v = talloc((size_t)nel(src) * sizeof(float));
    getv(src, v);
    setv(dst, v);
}
/* Sum of products of logical elements (inner product) in double. */
static double dotv(const pt_tview *a, const pt_tview *b) {
    float *x = getva(a), *y = getva(b);
    double s = 0.0;
    for (int64_t i = 0; i < nel(a); ++i) s += (double)x[i] * (double)y[i];
    return s;
}
/* Copies logical values of `src` (dims in canonical NCX / OIX order) into
 * `dst` whose dims are permuted: dst dim i = src dim map[i]. */
static void relayout(const pt_tview *dst, const pt_tview *src, const int *map) {
    int64_t sidx[DNNL_MAX_NDIMS], didx[DNNL_MAX_NDIMS];
    for (int64_t i = 0; i < nel(src); ++i) {
        pt_unravel(i, src->lt.ndims, src->lt.dims, sidx);
        for (int d = 0; d < dst->lt.ndims; ++d) didx[d] = sidx[map[d]];
        pt_tv_setf(dst, pt_tv_off(dst, didx), pt_tv_getf(src, pt_tv_off(src, sidx)));
    }
}
/* NCX dims -> NXC position map, and OIX -> XIO map (dst dim -> src dim). */
static void nxc_map(int r, int *map) {
    map[0] = 0;
    for (int j = 1; j < r - 1; ++j) map[j] = j + 1;
    map[r - 1] = 1;
}
static void x_first_map(int r, int *map) {
    for (int j = 0; j < r - 2; ++j) map[j] = j + 2;
    map[r - 2] = 1;
    map[r - 1] = 0;
}
/* `src` re-laid out: dst dim i is src dim map[i] (map from `mapf`). */
static pt_tview to_layout(const pt_tview *src, void (*mapf)(int, int *), const int *perm, int64_t gap) {
    int r = src->lt.ndims, map[DNNL_MAX_NDIMS];
    int64_t d[DNNL_MAX_NDIMS];
    mapf(r, map);
    for (int i = 0; i < r; ++i) d[i] = src->lt.dims[map[i]];
    pt_tview t = mk(src->lt.data_type, r, d, perm, gap);
    relayout(&t, src, map);
    return t;
}
static pt_tview to_nxc(const pt_tview *ncx, const int *perm, int64_t gap) { return to_layout(ncx, nxc_map, perm, gap); }
static pt_tview to_x_first(const pt_tview *w, const int *perm, int64_t gap) {
    return to_layout(w, x_first_map, perm, gap);
}
/* Inverse of to_nxc: NXC tensor values gathered into a NCX-ordered array. */
static float *nxc_values_as_ncx(const pt_tview *nxc) {
    int r = nxc->lt.ndims, map[DNNL_MAX_NDIMS];
    nxc_map(r, map);
    int64_t cd[DNNL_MAX_NDIMS], cidx[DNNL_MAX_NDIMS], nidx[DNNL_MAX_NDIMS];
    for (int i = 0; i < r; ++i) cd[map[i]] = nxc->lt.dims[i];
    float *v = talloc((size_t)nel(nxc) * sizeof(float));
    for (int64_t i = 0; i < nel(nxc); ++i) {
        pt_unravel(i, r, cd, cidx);
        for (int d = 0; d < r; ++d) nidx[d] = cidx[map[d]];
        v[i] = pt_tv_getf(nxc, pt_tv_off(nxc, nidx));
    }
    return v;
}

static void check_close(const char *what, const float *got, const float *exp, int64_t n, double tol) {
    int64_t bad = 0;
    for (int64_t i = 0; i < n; ++i) {
        double d = fabs((double)got[i] - (double)exp[i]);
        if (!(d <= tol * (1.0 + fabs((double)exp[i])))) {
            if (bad < 6) fprintf(stderr, "  %s[%lld]: got %.9g expected %.9g\n", what, (long long)i, got[i], exp[i]);
            ++bad;
        }
    }
    if (bad) fprintf(stderr, "  %s: %lld mismatches\n", what, (long long)bad);
    CHECK_EQ_INT(bad, 0);
}
static void check_tv(const char *what, const pt_tview *t, const float *exp, double tol) {
    check_close(what, getva(t), exp, nel(t), tol);
}
static void check_rel(const char *what, double a, double b, double tol) {
    double d = fabs(a - b);
    if (!(d <= tol * (1.0 + fabs(a) + fabs(b)))) fprintf(stderr, "  %s: %.12g vs %.12g\n", what, a, b);
    CHECK(d <= tol * (1.0 + fabs(a) + fabs(b)));
}

/* ---- ops ----------------------------------------------------------------- */

static pt_op *g_ops[512];
static int g_nops;

static pt_op *mkop(dnnl_graph_op_kind_t kind) {
    pt_op *op = pt_op_new(1, kind, "test");
    if (op && g_nops < 512) g_ops[g_nops++] = op;
    return op;
}
static void free_ops(void) {
    while (g_nops > 0) pt_op_free(g_ops[--g_nops]);
}
#define SETL(op, name, ...) \
    pt_op_set_s64(op, name, (const int64_t[]){__VA_ARGS__}, NDIMS(__VA_ARGS__), true)
static void set_i(pt_op *op, int name, int64_t v) { pt_op_set_s64(op, name, &v, 1, false); }
static void set_f(pt_op *op, int name, float v) { pt_op_set_f32(op, name, &v, 1, false); }

static pt_exec_ctx g_ctx = {.fpmath = dnnl_fpmath_mode_strict, .apply_to_int = 0, .nthreads = 1};

/* Decodes `op` with decoder `dec`, runs its kernel once, releases. */
#define RUN(dec, op, ins, nin, outs, nout) pt_ref_run_with(dec, op, ins, nin, outs, nout, &g_ctx)

/* ======================================================================== */
/* MatMul                                                                     */
/* ======================================================================== */

static const float MM1[] = {1.875f, -1.0f, -0.125f, 0.125f, -0.875f, 1.875f, -1.0f, 0.125f, -1.0f, 1.625f, -0.75f,
                            0.0f, 0.125f, -1.0f, -0.75f, 1.625f, -1.0f, 0.125f, 0.0f, -0.75f, 1.625f};
static const float MM1_BIAS[] = {1.375f, -1.375f, -0.375f, 0.0f, -0.875f, 2.0f, -0.75f, -0.375f, -1.375f, 1.375f,
                                 -0.875f, 0.0f, 0.25f, -0.75f, -1.25f, 1.25f, -1.25f, 0.0f, 0.0f, -0.625f, 1.875f};

static float mm_a(int i, int k) { return (float)(((i * 5 + k * 3) % 7) - 3) * 0.5f; }
static float mm_b(int k, int n) { return (float)(((k * 7 + n * 2) % 5) - 2) * 0.25f; }

static void test_matmul_2d(void) {
    enum { M = 3, K = 5, N = 7 };
    float av[M * K], bv[K * N], atv[K * M], btv[N * K], biasv[N];
    for (int i = 0; i < M; ++i)
        for (int k = 0; k < K; ++k) av[i * K + k] = atv[k * M + i] = mm_a(i, k);
    for (int k = 0; k < K; ++k)
        for (int n = 0; n < N; ++n) bv[k * N + n] = btv[n * K + k] = mm_b(k, n);
    for (int n = 0; n < N; ++n) biasv[n] = n * 0.125f - 0.5f;

    pt_op *op = mkop(dnnl_graph_op_matmul);
    pt_tview in[3] = {MK(dnnl_f32, M, K), MK(dnnl_f32, K, N), MK(dnnl_f32, N)}, out = MK(dnnl_f32, M, N);
    setv(&in[0], av), setv(&in[1], bv), setv(&in[2], biasv);
    CHECK_EQ_INT(RUN(pt_decode_matmul, op, in, 2, &out, 1), dnnl_success);
    check_tv("mm 3x5x7", &out, MM1, 0);
    CHECK_EQ_INT(RUN(pt_decode_matmul, op, in, 3, &out, 1), dnnl_success);
    check_tv("mm 3x5x7 bias[N]", &out, MM1_BIAS, 0);

    /* Transposed operands give the same product. */
    pt_op *opt = mkop(dnnl_graph_op_matmul);
    pt_op_set_bool(opt, dnnl_graph_op_attr_transpose_a, true);
    pt_op_set_bool(opt, dnnl_graph_op_attr_transpose_b, true);
    pt_tview tin[2] = {MK(dnnl_f32, K, M), MK(dnnl_f32, N, K)}, tout = MK(dnnl_f32, M, N);
    setv(&tin[0], atv), setv(&tin[1], btv);
    CHECK_EQ_INT(RUN(pt_decode_matmul, opt, tin, 2, &tout, 1), dnnl_success);
    check_tv("mm transpose_a/b", &tout, MM1, 0);

    /* Non-dense: column-major src with a gap, permuted dst with a gap. */
    pt_tview pin[3] = {MKP(dnnl_f32, PERM(1, 0), 2, M, K), MKP(dnnl_f32, NULL, 3, K, N),
                       MKP(dnnl_f32, PERM(1, 0), 1, 1, N)};
    pt_tview pout = MKP(dnnl_f32, PERM(1, 0), 2, M, N);
    setv(&pin[0], av), setv(&pin[1], bv), setv(&pin[2], biasv);
    CHECK_EQ_INT(RUN(pt_decode_matmul, op, pin, 3, &pout, 1), dnnl_success);
    check_tv("mm strided + bias[1,N]", &pout, MM1_BIAS, 0);

    /* Bias [M, 1] broadcast along N. */
    pt_tview bcol = MK(dnnl_f32, M, 1);
    setv(&bcol, (const float[]){0.0f, 1.0f, 2.0f});
    pt_tview bin[3] = {in[0], in[1], bcol};
    CHECK_EQ_INT(RUN(pt_decode_matmul, op, bin, 3, &out, 1), dnnl_success);
    float exp[M * N];
    for (int i = 0; i < M * N; ++i) exp[i] = MM1[i] + (float)(i / N);
    check_tv("mm bias[M,1]", &out, exp, 0);

    /* Shape errors are reported, not crashed on. */
    pt_tview bad_b = MK(dnnl_f32, 4, N);
    pt_tview ein[2] = {in[0], bad_b};
    CHECK_EQ_INT(RUN(pt_decode_matmul, op, ein, 2, &out, 1), dnnl_invalid_arguments);
    pt_tview bad_out = MK(dnnl_f32, M, N + 1);
    CHECK_EQ_INT(RUN(pt_decode_matmul, op, in, 2, &bad_out, 1), dnnl_invalid_arguments);
    pt_tview bad_bias = MK(dnnl_f32, 2, N);
    pt_tview bbin[3] = {in[0], in[1], bad_bias};
    CHECK_EQ_INT(RUN(pt_decode_matmul, op, bbin, 3, &out, 1), dnnl_invalid_arguments);
}

static const float MM_BATCH[] = {0.875f, 0.5f, -0.875f, -0.75f, -0.5f, 0.875f, -0.125f, -0.875f,
                                 -0.125f, -0.5f, -0.25f, -0.125f, 0.5f, 0.5f, -0.625f, -0.75f,
                                 -0.375f, 0.5f, 1.25f, -0.625f, -0.375f, -0.375f, 1.375f, 1.25f};

static void test_matmul_batch(void) {
    /* A [2,1,2,3] x B [3,3,2] -> [2,3,2,2]. */
    float av[12], bv[18];
    for (int b = 0; b < 2; ++b)
        for (int m = 0; m < 2; ++m)
            for (int k = 0; k < 3; ++k) av[b * 6 + m * 3 + k] = (float)(((b * 6 + m * 3 + k) % 5) - 2) * 0.5f;
    for (int c = 0; c < 3; ++c)
        for (int k = 0; k < 3; ++k)
            for (int n = 0; n < 2; ++n) bv[c * 6 + k * 2 + n] = (float)(((c * 6 + k * 2 + n) % 7) - 3) * 0.25f;
    pt_op *op = mkop(dnnl_graph_op_matmul);
    pt_tview in[2] = {MK(dnnl_f32, 2, 1, 2, 3), MK(dnnl_f32, 3, 3, 2)}, out = MK(dnnl_f32, 2, 3, 2, 2);
    setv(&in[0], av), setv(&in[1], bv);
    CHECK_EQ_INT(RUN(pt_decode_matmul, op, in, 2, &out, 1), dnnl_success);
    check_tv("mm batch broadcast", &out, MM_BATCH, 0);
    /* Same with permuted, padded layouts everywhere. */
    pt_tview pin[2] = {MKP(dnnl_f32, PERM(3, 1, 2, 0), 1, 2, 1, 2, 3), MKP(dnnl_f32, PERM(2, 0, 1), 2, 3, 3, 2)};
    pt_tview pout = MKP(dnnl_f32, PERM(2, 3, 0, 1), 1, 2, 3, 2, 2);
    setv(&pin[0], av), setv(&pin[1], bv);
    CHECK_EQ_INT(RUN(pt_decode_matmul, op, pin, 2, &pout, 1), dnnl_success);
    check_tv("mm batch broadcast strided", &pout, MM_BATCH, 0);
    /* Incompatible batch dims. */
    pt_tview bad = MK(dnnl_f32, 3, 3, 2), bad_a = MK(dnnl_f32, 2, 2, 3);
    pt_tview ein[2] = {bad_a, bad};
    pt_tview eout = MK(dnnl_f32, 3, 2, 2);
    CHECK_EQ_INT(RUN(pt_decode_matmul, op, ein, 2, &eout, 1), dnnl_invalid_arguments);
}

static void test_matmul_1d(void) {
    pt_op *op = mkop(dnnl_graph_op_matmul);
    /* [3] x [3,2] -> [2] */
    pt_tview a = MK(dnnl_f32, 3), b = MK(dnnl_f32, 3, 2), d = MK(dnnl_f32, 2);
    setv(&a, (const float[]){1, 2, 3});
    setv(&b, (const float[]){1, 0, 0, 1, 1, 1});
    pt_tview in1[2] = {a, b};
    CHECK_EQ_INT(RUN(pt_decode_matmul, op, in1, 2, &d, 1), dnnl_success);
    check_tv("mm [K]x[K,N]", &d, (const float[]){4, 5}, 0);
    /* [2,3] x [3] -> [2] */
    pt_tview a2 = MK(dnnl_f32, 2, 3), b2 = MK(dnnl_f32, 3);
    setv(&a2, (const float[]){1, 2, 3, 4, 5, 6});
    setv(&b2, (const float[]){1, 0, -1});
    pt_tview in2[2] = {a2, b2};
    CHECK_EQ_INT(RUN(pt_decode_matmul, op, in2, 2, &d, 1), dnnl_success);
    check_tv("mm [M,K]x[K]", &d, (const float[]){-2, -2}, 0);
    /* [3] x [3] -> scalar; transposes ignored on 1-D operands. */
    pt_op *opt = mkop(dnnl_graph_op_matmul);
    pt_op_set_bool(opt, dnnl_graph_op_attr_transpose_a, true);
    pt_op_set_bool(opt, dnnl_graph_op_attr_transpose_b, true);
    pt_tview b3 = MK(dnnl_f32, 3), s = mk(dnnl_f32, 0, NULL, NULL, 0);
    setv(&b3, (const float[]){4, 5, 6});
    pt_tview in3[2] = {a, b3};
    CHECK_EQ_INT(RUN(pt_decode_matmul, opt, in3, 2, &s, 1), dnnl_success);
    CHECK_NEAR(pt_tv_getf(&s, 0), 32.0, 0);
    /* [3] x [2,3,2] -> [2,2] (batched weights). */
    pt_tview b4 = MK(dnnl_f32, 2, 3, 2), d4 = MK(dnnl_f32, 2, 2);
    setv(&b4, (const float[]){1, 0, 0, 1, 1, 1, 2, 0, 0, 2, 0, 0});
    pt_tview in4[2] = {a, b4};
    CHECK_EQ_INT(RUN(pt_decode_matmul, op, in4, 2, &d4, 1), dnnl_success);
    check_tv("mm [K]x[B,K,N]", &d4, (const float[]){4, 5, 2, 4}, 0);
}

static void test_matmul_lowp(void) {
    static const dnnl_data_type_t lowp[2] = {dnnl_bf16, dnnl_f16};
    pt_op *op = mkop(dnnl_graph_op_matmul);
    for (int t = 0; t < 2; ++t) {
        dnnl_data_type_t dt = lowp[t];
        pt_tview in[3] = {MK(dt, 2, 2), MK(dt, 2, 2), MK(dt, 2)};
        setv(&in[0], (const float[]){1.5f, 2, 3, -1});
        setv(&in[1], (const float[]){0.25f, 1, 2, 0.5f});
        setv(&in[2], (const float[]){0.5f, -0.25f});
        pt_tview o_same = MK(dt, 2, 2), o_f32 = MKP(dnnl_f32, PERM(1, 0), 1, 2, 2);
        CHECK_EQ_INT(RUN(pt_decode_matmul, op, in, 3, &o_same, 1), dnnl_success);
        CHECK_EQ_INT(RUN(pt_decode_matmul, op, in, 3, &o_f32, 1), dnnl_success);
        const float exp[4] = {4.875f, 2.25f, -0.75f, 2.25f};
        check_tv("mm lowp -> same", &o_same, exp, 0);
        check_tv("mm lowp -> f32", &o_f32, exp, 0);
        /* 1 + 2^-8 (bf16) / 1 + 2^-11 (f16) is a tie: the narrow dst rounds
         * to even (1.0), an f32 dst keeps it. */
        float tiny = t == 0 ? 0.00390625f : 0.00048828125f;
        pt_tview a = MK(dt, 1, 2), b = MK(dt, 2, 1), d_same = MK(dt, 1, 1), d_f32 = MK(dnnl_f32, 1, 1);
        setv(&a, (const float[]){1, 1});
        setv(&b, (const float[]){1, tiny});
        pt_tview in2[2] = {a, b};
        CHECK_EQ_INT(RUN(pt_decode_matmul, op, in2, 2, &d_same, 1), dnnl_success);
        CHECK_EQ_INT(RUN(pt_decode_matmul, op, in2, 2, &d_f32, 1), dnnl_success);
        CHECK_NEAR(pt_tv_getf(&d_same, 0), 1.0, 0);
        CHECK_NEAR(pt_tv_getf(&d_f32, 0), 1.0 + tiny, 0);
    }
}

static float run_mm_scalar(float a, float b, dnnl_fpmath_mode_t mode, dnnl_data_type_t dt) {
    pt_op *op = mkop(dnnl_graph_op_matmul);
    pt_tview in[2] = {MK(dt, 1, 1), MK(dt, 1, 1)}, out = MK(dnnl_f32, 1, 1);
    setv(&in[0], &a), setv(&in[1], &b);
    pt_exec_ctx ctx = {.fpmath = mode, .apply_to_int = 0, .nthreads = 1};
    CHECK_EQ_INT(pt_ref_run_with(pt_decode_matmul, op, in, 2, &out, 1, &ctx), dnnl_success);
    return pt_tv_getf(&out, 0);
}

static void test_matmul_fpmath(void) {
    const float x10 = 1.0009765625f;            /* 1 + 2^-10 */
    const float x11 = 1.00048828125f;           /* 1 + 2^-11 */
    const float x11b = 1.00048828125f + 0.0001220703125f; /* 1 + 2^-11 + 2^-13 */
    CHECK_NEAR(run_mm_scalar(x10, 1, dnnl_fpmath_mode_strict, dnnl_f32), x10, 0);
    CHECK_NEAR(run_mm_scalar(x10, 1, dnnl_fpmath_mode_bf16, dnnl_f32), 1.0, 0);
    CHECK_NEAR(run_mm_scalar(1, x10, dnnl_fpmath_mode_any, dnnl_f32), 1.0, 0);
    CHECK_NEAR(run_mm_scalar(x10, 1, dnnl_fpmath_mode_f16, dnnl_f32), x10, 0);
    CHECK_NEAR(run_mm_scalar(x11, 1, dnnl_fpmath_mode_f16, dnnl_f32), 1.0, 0);
    CHECK_NEAR(run_mm_scalar(x10, 1, dnnl_fpmath_mode_tf32, dnnl_f32), x10, 0);
    CHECK_NEAR(run_mm_scalar(x11, 1, dnnl_fpmath_mode_tf32, dnnl_f32), 1.0, 0);
    CHECK_NEAR(run_mm_scalar(x11b, 1, dnnl_fpmath_mode_tf32, dnnl_f32), x10, 0);
    CHECK_NEAR(run_mm_scalar(x11, 1, dnnl_fpmath_mode_strict, dnnl_f32), x11, 0);
    /* Non-f32 operands are never down-converted further. */
    CHECK_NEAR(run_mm_scalar(x10, 1, dnnl_fpmath_mode_bf16, dnnl_f16), x10, 0);
}

/* ======================================================================== */
/* Convolution family                                                         */
/* ======================================================================== */

static const float CONV1[] = {3.25f, 2.5f, -1.75f, -0.75f, -0.5f, 0.5f, 3.25f, 2.5f, -2.75f, -0.75f, -2.25f, 1.5f,
                              2.0f, 0.5f, -2.75f, -0.75f, -1.25f, 2.25f, 2.25f, -1.25f, -3.0f, 0.5f, -1.25f, 2.25f};
static const float CONV3[] = {
        -1.875f, -2.0f,   -2.125f, -2.25f,  -0.875f, -3.375f, -3.75f,  -4.125f, -1.75f,  -0.875f, -2.625f, -2.875f,
        -0.375f, -0.625f, 1.25f,   0.625f,  0.125f,  -0.375f, -2.25f,  -1.25f,  -1.0f,   -1.25f,  -2.875f, -1.75f,
        -2.375f, -1.375f, -1.125f, 0.5f,    0.75f,   1.5f,    -2.75f,  -1.375f, -1.375f, 1.375f,  0.875f,  -1.5f,
        2.5f,    5.125f,  0.875f,  -0.625f, 3.875f,  3.75f,   -0.5f,   -0.625f, -1.125f, -2.25f,  -1.75f,  -1.25f,
        0.625f,  0.75f,   -4.5f,   -1.75f,  -0.375f, 3.75f,   2.375f,  0.0f,    -0.5f,   3.125f,  2.625f,  1.625f,
        -1.75f,  -1.875f, -2.0f,   -2.125f, -1.125f, -3.0f,   -3.375f, -3.75f,  -4.125f, -2.25f,  -2.375f, -2.625f,
        -2.875f, -0.375f, -2.625f, 1.125f,  0.625f,  0.125f,  -0.375f, -0.875f, -0.75f,  -1.0f,   -1.25f,  -2.875f,
        -2.0f,   -1.625f, -1.375f, -1.125f, 0.5f,    -1.25f,  -1.375f, -2.75f,  -1.375f, -1.375f, 1.0f,    -4.125f,
        -1.5f,   2.5f,    5.125f,  -0.75f,  -0.125f, 3.875f,  3.75f,   -0.5f,   -1.375f, 0.0f,    -2.25f,  -1.75f,
        -1.25f,  0.625f,  -4.5f,   -4.5f,   -1.75f,  -0.375f, 2.625f,  -2.25f,  0.0f,    -0.5f,   3.125f,  2.0f};

static pt_op *conv_op(dnnl_graph_op_kind_t kind, const char *df, const char *wf) {
    pt_op *op = mkop(kind);
    if (df) pt_op_set_str(op, dnnl_graph_op_attr_data_format, df);
    if (wf) pt_op_set_str(op, dnnl_graph_op_attr_weights_format, wf);
    return op;
}
static void conv_geom2(pt_op *op, int64_t s0, int64_t s1, int64_t d0, int64_t d1, int64_t pb0, int64_t pb1,
                       int64_t pe0, int64_t pe1) {
    SETL(op, dnnl_graph_op_attr_strides, s0, s1);
    SETL(op, dnnl_graph_op_attr_dilations, d0, d1);
    SETL(op, dnnl_graph_op_attr_pads_begin, pb0, pb1);
    SETL(op, dnnl_graph_op_attr_pads_end, pe0, pe1);
}
static void conv_geom1(pt_op *op, int64_t s, int64_t d, int64_t pb, int64_t pe) {
    SETL(op, dnnl_graph_op_attr_strides, s);
    SETL(op, dnnl_graph_op_attr_dilations, d);
    SETL(op, dnnl_graph_op_attr_pads_begin, pb);
    SETL(op, dnnl_graph_op_attr_pads_end, pe);
}

static void test_conv_fwd(void) {
    /* src NCX [1,2,4,5], weights OIX [3,2,3,2], stride 1, no padding. */
    pt_tview src = MK(dnnl_f32, 1, 2, 4, 5), w = MK(dnnl_f32, 3, 2, 3, 2), dst = MK(dnnl_f32, 1, 3, 2, 4);
    float sv[40], wv[36];
    for (int c = 0; c < 2; ++c)
        for (int h = 0; h < 4; ++h)
            for (int x = 0; x < 5; ++x) sv[c * 20 + h * 5 + x] = (float)(((c * 20 + h * 5 + x) % 7) - 3) * 0.5f;
    for (int i = 0; i < 36; ++i) wv[i] = (float)((i % 5) - 2) * 0.5f; /* o*12+i*6+kh*2+kw == linear index */
    setv(&src, sv), setv(&w, wv);
    pt_op *op = conv_op(dnnl_graph_op_convolution, "NCX", "OIX");
    conv_geom2(op, 1, 1, 1, 1, 0, 0, 0, 0);
    pt_tview in[2] = {src, w};
    CHECK_EQ_INT(RUN(pt_decode_conv, op, in, 2, &dst, 1), dnnl_success);
    check_tv("conv NCX/OIX", &dst, CONV1, 0);

    /* NXC / XIO (the defaults) give the same numbers. */
    pt_op *op2 = conv_op(dnnl_graph_op_convolution, NULL, NULL);
    conv_geom2(op2, 1, 1, 1, 1, 0, 0, 0, 0);
    pt_tview in2[2] = {to_nxc(&src, NULL, 0), to_x_first(&w, NULL, 0)};
    pt_tview dst2 = MK(dnnl_f32, 1, 2, 4, 3);
    CHECK_EQ_INT(RUN(pt_decode_conv, op2, in2, 2, &dst2, 1), dnnl_success);
    check_close("conv NXC/XIO", nxc_values_as_ncx(&dst2), CONV1, 24, 0);

    /* Non-dense: NCX logical tensors stored channels-last with gaps, OIX
     * weights stored spatial-first. */
    pt_tview ps = MKP(dnnl_f32, PERM(0, 2, 3, 1), 3, 1, 2, 4, 5), pw = MKP(dnnl_f32, PERM(2, 3, 1, 0), 1, 3, 2, 3, 2);
    pt_tview pd = MKP(dnnl_f32, PERM(1, 0, 3, 2), 2, 1, 3, 2, 4);
    copyv(&ps, &src), copyv(&pw, &w);
    pt_tview in3[2] = {ps, pw};
    CHECK_EQ_INT(RUN(pt_decode_conv, op, in3, 2, &pd, 1), dnnl_success);
    check_tv("conv strided", &pd, CONV1, 0);
}

static void test_conv_groups(void) {
    /* N=2, IC=4, OC=4, G=2, strides [2,1], dilations [2,2], pads [1,0]/[1,1], bias. */
    pt_tview src = MK(dnnl_f32, 2, 4, 5, 6), w = MK(dnnl_f32, 4, 2, 2, 2), b = MK(dnnl_f32, 4);
    float sv[240], wv[32], bv[4];
    for (int i = 0; i < 240; ++i) sv[i] = (float)((i % 11) - 5) * 0.25f;
    for (int i = 0; i < 32; ++i) wv[i] = (float)((i % 7) - 3) * 0.5f;
    for (int i = 0; i < 4; ++i) bv[i] = i * 0.5f - 1.0f;
    setv(&src, sv), setv(&w, wv), setv(&b, bv);
    pt_op *op = conv_op(dnnl_graph_op_convolution, "NCX", "OIX");
    conv_geom2(op, 2, 1, 2, 2, 1, 0, 1, 1);
    set_i(op, dnnl_graph_op_attr_groups, 2);
    pt_tview in[3] = {src, w, b}, dst = MK(dnnl_f32, 2, 4, 3, 5);
    CHECK_EQ_INT(RUN(pt_decode_conv, op, in, 3, &dst, 1), dnnl_success);
    check_tv("conv groups/dilation/stride/pad/bias", &dst, CONV3, 0);

    pt_op *op2 = conv_op(dnnl_graph_op_convolution, "NXC", "XIO");
    conv_geom2(op2, 2, 1, 2, 2, 1, 0, 1, 1);
    set_i(op2, dnnl_graph_op_attr_groups, 2);
    pt_tview in2[3] = {to_nxc(&src, PERM(3, 0, 1, 2), 1), to_x_first(&w, PERM(3, 2, 1, 0), 2), b};
    pt_tview dst2 = MKP(dnnl_f32, PERM(0, 3, 2, 1), 1, 2, 3, 5, 4);
    CHECK_EQ_INT(RUN(pt_decode_conv, op2, in2, 3, &dst2, 1), dnnl_success);
    check_close("conv groups NXC/XIO strided", nxc_values_as_ncx(&dst2), CONV3, 120, 0);

    /* Inconsistent channel counts are rejected. */
    pt_tview wbad = MK(dnnl_f32, 4, 3, 2, 2);
    pt_tview in3[2] = {src, wbad};
    CHECK_EQ_INT(RUN(pt_decode_conv, op, in3, 2, &dst, 1), dnnl_invalid_arguments);
    pt_tview bbad = MK(dnnl_f32, 3);
    pt_tview in4[3] = {src, w, bbad};
    CHECK_EQ_INT(RUN(pt_decode_conv, op, in4, 3, &dst, 1), dnnl_invalid_arguments);
}

static void run_conv1d(const char *auto_pad, int64_t k, int64_t s, int64_t out_w, const float *exp) {
    pt_op *op = conv_op(dnnl_graph_op_convolution, "NCX", "OIX");
    conv_geom1(op, s, 1, 3, 3); /* explicit pads must be ignored under auto_pad */
    pt_op_set_str(op, dnnl_graph_op_attr_auto_pad, auto_pad);
    pt_tview src = MK(dnnl_f32, 1, 1, 5), w = mk(dnnl_f32, 3, DIMS(1, 1, k), NULL, 0);
    pt_tview dst = mk(dnnl_f32, 3, DIMS(1, 1, out_w), NULL, 0);
    setv(&src, (const float[]){1, 2, 3, 4, 5});
    setv(&w, (const float[]){1, 1, 1, 1});
    pt_tview in[2] = {src, w};
    CHECK_EQ_INT(RUN(pt_decode_conv, op, in, 2, &dst, 1), dnnl_success);
    check_tv(auto_pad, &dst, exp, 0);
}

static void test_conv_autopad(void) {
    run_conv1d("SAME_UPPER", 4, 1, 5, (const float[]){6, 10, 14, 12, 9});  /* pb 1, pe 2 */
    run_conv1d("SAME_LOWER", 4, 1, 5, (const float[]){3, 6, 10, 14, 12});  /* pb 2, pe 1 */
    run_conv1d("same_upper", 3, 2, 3, (const float[]){3, 9, 9});           /* T = 3 - 5%2 = 2 */
    run_conv1d("VALID", 4, 1, 2, (const float[]){10, 14});
}

static void test_conv_3d(void) {
    pt_tview src = MK(dnnl_f32, 1, 1, 3, 3, 3), w = MK(dnnl_f32, 1, 1, 2, 2, 2), dst = MK(dnnl_f32, 1, 1, 2, 2, 2);
    float sv[27], wv[8];
    for (int i = 0; i < 27; ++i) sv[i] = (float)i;
    for (int i = 0; i < 8; ++i) wv[i] = 1.0f;
    setv(&src, sv), setv(&w, wv);
    pt_op *op = conv_op(dnnl_graph_op_convolution, "NCX", "OIX");
    SETL(op, dnnl_graph_op_attr_strides, 1, 1, 1);
    SETL(op, dnnl_graph_op_attr_dilations, 1, 1, 1);
    SETL(op, dnnl_graph_op_attr_pads_begin, 0, 0, 0);
    SETL(op, dnnl_graph_op_attr_pads_end, 0, 0, 0);
    pt_tview in[2] = {src, w};
    CHECK_EQ_INT(RUN(pt_decode_conv, op, in, 2, &dst, 1), dnnl_success);
    /* each output = 8 * corner + (9 + 3 + 1) * 4 */
    check_tv("conv 3d", &dst, (const float[]){52, 60, 76, 84, 124, 132, 148, 156}, 0);
    /* Rank 6 is unsupported (reported, not crashed). */
    pt_tview s6 = MK(dnnl_f32, 1, 1, 2, 2, 2, 2);
    pt_tview in6[2] = {s6, s6};
    CHECK_EQ_INT(RUN(pt_decode_conv, op, in6, 2, &s6, 1), dnnl_unimplemented);
}

static void test_conv_fpmath(void) {
    pt_op *op = conv_op(dnnl_graph_op_convolution, "NCX", "OIX");
    conv_geom1(op, 1, 1, 0, 0);
    pt_tview in[2] = {MK(dnnl_f32, 1, 1, 1), MK(dnnl_f32, 1, 1, 1)}, dst = MK(dnnl_f32, 1, 1, 1);
    setv(&in[0], (const float[]){1.0009765625f});
    setv(&in[1], (const float[]){1.0f});
    pt_exec_ctx bf = {.fpmath = dnnl_fpmath_mode_bf16, .apply_to_int = 0, .nthreads = 1}, st = {.fpmath = dnnl_fpmath_mode_strict, .apply_to_int = 0, .nthreads = 1};
    CHECK_EQ_INT(pt_ref_run_with(pt_decode_conv, op, in, 2, &dst, 1, &bf), dnnl_success);
    CHECK_NEAR(pt_tv_getf(&dst, 0), 1.0, 0);
    CHECK_EQ_INT(pt_ref_run_with(pt_decode_conv, op, in, 2, &dst, 1, &st), dnnl_success);
    CHECK_NEAR(pt_tv_getf(&dst, 0), 1.0009765625, 0);
}

static void test_conv_bwd_hand(void) {
    /* 1-D: diff_dst [1,2,3], w [1,10] -> diff_src [1, 12, 23, 30]. */
    pt_op *op = conv_op(dnnl_graph_op_convolution_backward_data, "NCX", "OIX");
    conv_geom1(op, 1, 1, 0, 0);
    SETL(op, dnnl_graph_op_attr_dst_shape, 1, 1, 4);
    pt_tview in[2] = {MK(dnnl_f32, 1, 1, 3), MK(dnnl_f32, 1, 1, 2)}, ds = MK(dnnl_f32, 1, 1, 4);
    setv(&in[0], (const float[]){1, 2, 3});
    setv(&in[1], (const float[]){1, 10});
    CHECK_EQ_INT(RUN(pt_decode_conv_bwd_data, op, in, 2, &ds, 1), dnnl_success);
    check_tv("conv bwd data 1d", &ds, (const float[]){1, 12, 23, 30}, 0);
    /* 1-D: src [1,2,3,4], diff_dst [1,1,1] -> diff_weights [6, 9]. */
    pt_op *opw = conv_op(dnnl_graph_op_convolution_backward_weights, "NCX", "OIX");
    conv_geom1(opw, 1, 1, 0, 0);
    pt_tview inw[2] = {MK(dnnl_f32, 1, 1, 4), MK(dnnl_f32, 1, 1, 3)}, dw = MK(dnnl_f32, 1, 1, 2);
    setv(&inw[0], (const float[]){1, 2, 3, 4});
    setv(&inw[1], (const float[]){1, 1, 1});
    CHECK_EQ_INT(RUN(pt_decode_conv_bwd_weights, opw, inw, 2, &dw, 1), dnnl_success);
    check_tv("conv bwd weights 1d", &dw, (const float[]){6, 9}, 0);
}

/* <conv(x, w), y> == <x, bwd_data(y, w)> == <w, bwd_weights(x, y)>. */
static void conv_adjoint_case(bool nxc, const char *auto_pad) {
    const char *df = nxc ? "NXC" : "NCX", *wf = nxc ? "XIO" : "OIX";
    dnnl_graph_op_kind_t kinds[3] = {dnnl_graph_op_convolution, dnnl_graph_op_convolution_backward_data,
                                     dnnl_graph_op_convolution_backward_weights};
    pt_op *ops[3];
    for (int i = 0; i < 3; ++i) {
        ops[i] = conv_op(kinds[i], df, wf);
        conv_geom2(ops[i], 2, 1, 1, 2, 1, 0, 0, 1);
        set_i(ops[i], dnnl_graph_op_attr_groups, 2);
        if (auto_pad) pt_op_set_str(ops[i], dnnl_graph_op_attr_auto_pad, auto_pad);
    }
    /* NCX src [2,4,7,6], OIX w [6,2,3,2]: E = [3,3]; explicit pads -> O = [3,5];
     * SAME_UPPER: T = [3-1, 3-1] -> pads [1,1]/[1,1] -> O = [4,6]. */
    int64_t oh = auto_pad ? 4 : 3, ow = auto_pad ? 6 : 5;
    pt_tview x = MK(dnnl_f32, 2, 4, 7, 6), w = MK(dnnl_f32, 6, 2, 3, 2);
    pt_tview y = mk(dnnl_f32, 4, DIMS(2, 6, oh, ow), NULL, 0), dy = mk(dnnl_f32, 4, DIMS(2, 6, oh, ow), NULL, 0);
    pt_tview dx = MK(dnnl_f32, 2, 4, 7, 6), dw = MK(dnnl_f32, 6, 2, 3, 2);
    fill_rand(&x, 1), fill_rand(&w, 2), fill_rand(&dy, 3);
    if (nxc) {
        x = to_nxc(&x, PERM(0, 3, 1, 2), 1), dy = to_nxc(&dy, NULL, 2), w = to_x_first(&w, PERM(3, 2, 1, 0), 1);
        y = to_nxc(&y, NULL, 0), dx = to_nxc(&dx, PERM(1, 0, 2, 3), 1), dw = to_x_first(&dw, NULL, 3);
    }
    pt_tview fin[2] = {x, w}, din[2] = {dy, w}, win[2] = {x, dy};
    CHECK_EQ_INT(RUN(pt_decode_conv, ops[0], fin, 2, &y, 1), dnnl_success);
    CHECK_EQ_INT(RUN(pt_decode_conv_bwd_data, ops[1], din, 2, &dx, 1), dnnl_success);
    CHECK_EQ_INT(RUN(pt_decode_conv_bwd_weights, ops[2], win, 2, &dw, 1), dnnl_success);
    double a = dotv(&y, &dy), b = dotv(&x, &dx), c = dotv(&w, &dw);
    check_rel("conv adjoint data", a, b, 1e-6);
    check_rel("conv adjoint weights", a, c, 1e-6);
    CHECK(fabs(a) > 1e-3); /* non-trivial */
}

static void test_conv_bwd(void) {
    test_conv_bwd_hand();
    conv_adjoint_case(false, NULL);
    conv_adjoint_case(true, NULL);
    conv_adjoint_case(false, "SAME_UPPER");
    conv_adjoint_case(true, "SAME_UPPER");
}

static void test_conv_transpose(void) {
    /* 1-D: src [1,2], w [1,1,1], stride 2, bias 0.5 -> [1.5,1.5,3.5,2.5,2.5]. */
    pt_op *op = conv_op(dnnl_graph_op_conv_transpose, "NCX", "IOX");
    conv_geom1(op, 2, 1, 0, 0);
    pt_tview in[3] = {MK(dnnl_f32, 1, 1, 2), MK(dnnl_f32, 1, 1, 3), MK(dnnl_f32, 1)};
    setv(&in[0], (const float[]){1, 2});
    setv(&in[1], (const float[]){1, 1, 1});
    setv(&in[2], (const float[]){0.5f});
    pt_tview d5 = MK(dnnl_f32, 1, 1, 5);
    CHECK_EQ_INT(RUN(pt_decode_conv_transpose, op, in, 3, &d5, 1), dnnl_success);
    check_tv("convT 1d", &d5, (const float[]){1.5f, 1.5f, 3.5f, 2.5f, 2.5f}, 0);
    /* output_padding 1: one more column that only gets the bias. */
    pt_op *opp = conv_op(dnnl_graph_op_conv_transpose, "NCX", "IOX");
    conv_geom1(opp, 2, 1, 0, 0);
    SETL(opp, dnnl_graph_op_attr_output_padding, 1);
    pt_tview d6 = MK(dnnl_f32, 1, 1, 6);
    CHECK_EQ_INT(RUN(pt_decode_conv_transpose, opp, in, 3, &d6, 1), dnnl_success);
    check_tv("convT output_padding", &d6, (const float[]){1.5f, 1.5f, 3.5f, 2.5f, 2.5f, 0.5f}, 0);
    /* auto_pad: T = E - S = 1; SAME_UPPER pads [0]/[1], SAME_LOWER [1]/[0]. */
    pt_tview d4 = MK(dnnl_f32, 1, 1, 4);
    const char *modes[2] = {"SAME_UPPER", "SAME_LOWER"};
    const float exps[2][4] = {{1, 1, 3, 2}, {1, 3, 2, 2}};
    for (int i = 0; i < 2; ++i) {
        pt_op *opa = conv_op(dnnl_graph_op_conv_transpose, "NCX", "IOX");
        conv_geom1(opa, 2, 1, 0, 0);
        pt_op_set_str(opa, dnnl_graph_op_attr_auto_pad, modes[i]);
        CHECK_EQ_INT(RUN(pt_decode_conv_transpose, opa, in, 2, &d4, 1), dnnl_success);
        check_tv(modes[i], &d4, exps[i], 0);
        /* I = 3 (I % S != 0): still T = E - S = 1 (forward ops would use 2).
         * Unpadded result would be [1,1,3,2,5,3,3]. */
        pt_tview s3 = MK(dnnl_f32, 1, 1, 3), d6b = MK(dnnl_f32, 1, 1, 6);
        setv(&s3, (const float[]){1, 2, 3});
        pt_tview in3[2] = {s3, in[1]};
        CHECK_EQ_INT(RUN(pt_decode_conv_transpose, opa, in3, 2, &d6b, 1), dnnl_success);
        check_tv(modes[i], &d6b, i == 0 ? (const float[]){1, 1, 3, 2, 5, 3} : (const float[]){1, 3, 2, 5, 3, 3}, 0);
    }

    /* Groups: ConvTranspose with IOX weights [IC=4, OC/G=3, 2, 3] equals
     * ConvolutionBackwardData with the same buffer read as OIX. */
    pt_tview x = MK(dnnl_f32, 2, 4, 3, 2), w = MK(dnnl_f32, 4, 3, 2, 3), b = MK(dnnl_f32, 6);
    fill_rand(&x, 11), fill_rand(&w, 12), fill_rand(&b, 13);
    pt_op *ct = conv_op(dnnl_graph_op_conv_transpose, "NCX", "IOX");
    pt_op *bd = conv_op(dnnl_graph_op_convolution_backward_data, "NCX", "OIX");
    pt_op *ctx = conv_op(dnnl_graph_op_conv_transpose, NULL, NULL); /* NXC / XOI */
    pt_op *all[3] = {ct, bd, ctx};
    for (int i = 0; i < 3; ++i) {
        conv_geom2(all[i], 2, 3, 1, 2, 1, 0, 0, 2);
        set_i(all[i], dnnl_graph_op_attr_groups, 2);
    }
    /* O = S(I-1) + E - P: [2*2 + 2 - 1, 3*1 + 5 - 2] = [5, 6] */
    pt_tview y1 = MK(dnnl_f32, 2, 6, 5, 6), y2 = MK(dnnl_f32, 2, 6, 5, 6);
    pt_tview cin[3] = {x, w, b}, bin[2] = {x, w};
    CHECK_EQ_INT(RUN(pt_decode_conv_transpose, ct, cin, 3, &y1, 1), dnnl_success);
    CHECK_EQ_INT(RUN(pt_decode_conv_bwd_data, bd, bin, 2, &y2, 1), dnnl_success);
    float *v1 = getva(&y1), *v2 = getva(&y2), *bb = getva(&b);
    for (int64_t i = 0; i < nel(&y2); ++i) v2[i] += bb[(i / 30) % 6];
    check_close("convT == conv bwd data (groups)", v1, v2, nel(&y1), 1e-6);
    pt_tview xin[3] = {to_nxc(&x, PERM(3, 2, 1, 0), 1), to_x_first(&w, PERM(1, 0, 3, 2), 2), b};
    pt_tview y3 = MKP(dnnl_f32, PERM(3, 0, 1, 2), 1, 2, 5, 6, 6);
    CHECK_EQ_INT(RUN(pt_decode_conv_transpose, ctx, xin, 3, &y3, 1), dnnl_success);
    check_close("convT NXC/XOI strided", nxc_values_as_ncx(&y3), v1, nel(&y1), 1e-6);
}

static void test_conv_transpose_bwd(void) {
    /* Hand: bwd data is a forward conv: diff_dst [1..5], w [1,1,1], S 2 -> [6, 12]. */
    pt_op *op = conv_op(dnnl_graph_op_conv_transpose_backward_data, "NCX", "IOX");
    conv_geom1(op, 2, 1, 0, 0);
    pt_tview in[2] = {MK(dnnl_f32, 1, 1, 5), MK(dnnl_f32, 1, 1, 3)}, ds = MK(dnnl_f32, 1, 1, 2);
    setv(&in[0], (const float[]){1, 2, 3, 4, 5});
    setv(&in[1], (const float[]){1, 1, 1});
    CHECK_EQ_INT(RUN(pt_decode_conv_transpose_bwd_data, op, in, 2, &ds, 1), dnnl_success);
    check_tv("convT bwd data 1d", &ds, (const float[]){6, 12}, 0);
    /* Hand: bwd weights: src [1,2], diff_dst [1..5], S 2: dw[t] = 1*dd[t] + 2*dd[2+t] = [7, 10, 13]. */
    pt_op *opw = conv_op(dnnl_graph_op_conv_transpose_backward_weights, "NCX", "IOX");
    conv_geom1(opw, 2, 1, 0, 0);
    pt_tview inw[2] = {MK(dnnl_f32, 1, 1, 2), in[0]}, dw = MK(dnnl_f32, 1, 1, 3);
    setv(&inw[0], (const float[]){1, 2});
    CHECK_EQ_INT(RUN(pt_decode_conv_transpose_bwd_weights, opw, inw, 2, &dw, 1), dnnl_success);
    check_tv("convT bwd weights 1d", &dw, (const float[]){7, 10, 13}, 0);

    /* Adjoint identities with groups, 3-D, both layouts. */
    for (int nxc = 0; nxc < 2; ++nxc) {
        const char *df = nxc ? "NXC" : "NCX", *wf = nxc ? "XOI" : "IOX";
        dnnl_graph_op_kind_t kinds[3] = {dnnl_graph_op_conv_transpose, dnnl_graph_op_conv_transpose_backward_data,
                                         dnnl_graph_op_conv_transpose_backward_weights};
        pt_op *ops[3];
        for (int i = 0; i < 3; ++i) {
            ops[i] = conv_op(kinds[i], df, wf);
            SETL(ops[i], dnnl_graph_op_attr_strides, 2, 1, 2);
            SETL(ops[i], dnnl_graph_op_attr_dilations, 1, 2, 1);
            SETL(ops[i], dnnl_graph_op_attr_pads_begin, 1, 0, 0);
            SETL(ops[i], dnnl_graph_op_attr_pads_end, 0, 1, 1);
            set_i(ops[i], dnnl_graph_op_attr_groups, 3);
        }
        /* src [1,3,2,3,2], IOX w [3,2,2,2,3] -> OC 6; E = [2,3,3];
         * O = [2*1+2-1, 1*2+3-1, 2*1+3-1] = [3, 4, 4]. */
        pt_tview x = MK(dnnl_f32, 1, 3, 2, 3, 2), w = MK(dnnl_f32, 3, 2, 2, 2, 3);
        pt_tview y = MK(dnnl_f32, 1, 6, 3, 4, 4), dy = MK(dnnl_f32, 1, 6, 3, 4, 4);
        pt_tview dx = MK(dnnl_f32, 1, 3, 2, 3, 2), dw = MK(dnnl_f32, 3, 2, 2, 2, 3);
        fill_rand(&x, 21), fill_rand(&w, 22), fill_rand(&dy, 23);
        if (nxc) {
            x = to_nxc(&x, NULL, 1), dy = to_nxc(&dy, PERM(4, 3, 2, 1, 0), 0), w = to_x_first(&w, NULL, 2);
            y = to_nxc(&y, NULL, 0), dx = to_nxc(&dx, NULL, 0), dw = to_x_first(&dw, PERM(0, 1, 2, 4, 3), 1);
        }
        pt_tview fin[2] = {x, w}, din[2] = {dy, w}, win[2] = {x, dy};
        CHECK_EQ_INT(RUN(pt_decode_conv_transpose, ops[0], fin, 2, &y, 1), dnnl_success);
        CHECK_EQ_INT(RUN(pt_decode_conv_transpose_bwd_data, ops[1], din, 2, &dx, 1), dnnl_success);
        CHECK_EQ_INT(RUN(pt_decode_conv_transpose_bwd_weights, ops[2], win, 2, &dw, 1), dnnl_success);
        double a = dotv(&y, &dy), b = dotv(&x, &dx), c = dotv(&w, &dw);
        check_rel("convT adjoint data", a, b, 1e-6);
        check_rel("convT adjoint weights", a, c, 1e-6);
        CHECK(fabs(a) > 1e-3);
    }
}

static void test_conv_lowp(void) {
    /* bf16 / f16 conv: exact small values. */
    static const dnnl_data_type_t lowp[2] = {dnnl_bf16, dnnl_f16};
    for (int t = 0; t < 2; ++t) {
        pt_op *op = conv_op(dnnl_graph_op_convolution, "NCX", "OIX");
        conv_geom1(op, 1, 1, 1, 1);
        pt_tview in[3] = {MK(lowp[t], 1, 1, 3), MK(lowp[t], 1, 1, 3), MK(lowp[t], 1)}, dst = MK(lowp[t], 1, 1, 3);
        setv(&in[0], (const float[]){1, 2, 3});
        setv(&in[1], (const float[]){0.5f, 1, -1});
        setv(&in[2], (const float[]){0.25f});
        CHECK_EQ_INT(RUN(pt_decode_conv, op, in, 3, &dst, 1), dnnl_success);
        /* o0: 0*.5 + 1*1 + 2*-1; o1: .5 + 2 - 3; o2: 1 + 3 + 0 */
        check_tv("conv lowp", &dst, (const float[]){-0.75f, -0.25f, 4.25f}, 0);
    }
}

/* ======================================================================== */
/* Pooling                                                                    */
/* ======================================================================== */

static const float AVG_INCL[] = {1.55555556f, 2.66666667f, 3.33333333f, 2.44444444f, 3.66666667f, 6.0f,
                                 7.0f,        5.0f,        6.33333333f, 10.0f,       11.0f,       7.66666667f,
                                 5.11111111f, 8.0f,        8.66666667f, 6.0f};
static const float AVG_EXCL[] = {3.5f, 4.0f, 5.0f, 5.5f, 5.5f, 6.0f, 7.0f, 7.5f,
                                 9.5f, 10.0f, 11.0f, 11.5f, 11.5f, 12.0f, 13.0f, 13.5f};

static pt_op *pool_op(dnnl_graph_op_kind_t kind, const char *df) {
    pt_op *op = mkop(kind);
    if (df) pt_op_set_str(op, dnnl_graph_op_attr_data_format, df);
    return op;
}

/* A 1-D (NCX) pooling op with kernel k, stride s, zero pads, exclude_pad
 * false and an optional auto_pad. */
static pt_op *pool_1d(dnnl_graph_op_kind_t kind, int64_t k, int64_t s, const char *auto_pad) {
    pt_op *op = pool_op(kind, "NCX");
    SETL(op, dnnl_graph_op_attr_kernel, k);
    SETL(op, dnnl_graph_op_attr_strides, s);
    SETL(op, dnnl_graph_op_attr_pads_begin, 0);
    SETL(op, dnnl_graph_op_attr_pads_end, 0);
    pt_op_set_bool(op, dnnl_graph_op_attr_exclude_pad, false);
    if (auto_pad) pt_op_set_str(op, dnnl_graph_op_attr_auto_pad, auto_pad);
    return op;
}

static void test_avg_pool(void) {
    /* 2 channels: channel 1 holds twice channel 0 (values 1..16). */
    pt_tview src = MK(dnnl_f32, 1, 2, 4, 4);
    float sv[32];
    for (int i = 0; i < 16; ++i) sv[i] = (float)(i + 1), sv[16 + i] = 2.0f * (float)(i + 1);
    setv(&src, sv);
    for (int excl = 0; excl < 2; ++excl) {
        const float *e = excl ? AVG_EXCL : AVG_INCL;
        float exp[32];
        for (int i = 0; i < 16; ++i) exp[i] = e[i], exp[16 + i] = 2.0f * e[i];
        pt_op *op = pool_op(dnnl_graph_op_avg_pool, "NCX");
        SETL(op, dnnl_graph_op_attr_kernel, 3, 3);
        SETL(op, dnnl_graph_op_attr_strides, 1, 1);
        SETL(op, dnnl_graph_op_attr_pads_begin, 1, 1);
        SETL(op, dnnl_graph_op_attr_pads_end, 1, 1);
        pt_op_set_bool(op, dnnl_graph_op_attr_exclude_pad, excl);
        pt_tview dst = MK(dnnl_f32, 1, 2, 4, 4);
        CHECK_EQ_INT(RUN(pt_decode_avg_pool, op, &src, 1, &dst, 1), dnnl_success);
        check_tv(excl ? "avgpool exclude" : "avgpool include", &dst, exp, 1e-6);
        /* NXC with non-dense strides. */
        pt_op *op2 = pool_op(dnnl_graph_op_avg_pool, NULL);
        SETL(op2, dnnl_graph_op_attr_kernel, 3, 3);
        SETL(op2, dnnl_graph_op_attr_strides, 1, 1);
        SETL(op2, dnnl_graph_op_attr_pads_begin, 1, 1);
        SETL(op2, dnnl_graph_op_attr_pads_end, 1, 1);
        pt_op_set_bool(op2, dnnl_graph_op_attr_exclude_pad, excl);
        pt_tview s2 = to_nxc(&src, PERM(3, 0, 2, 1), 2), d2 = MKP(dnnl_f32, PERM(0, 3, 1, 2), 1, 1, 4, 4, 2);
        CHECK_EQ_INT(RUN(pt_decode_avg_pool, op2, &s2, 1, &d2, 1), dnnl_success);
        check_close("avgpool NXC strided", nxc_values_as_ncx(&d2), exp, 32, 1e-6);
    }
}

static void run_avg1d(int64_t k, int64_t s, int64_t pb, int64_t pe, bool excl, const char *rounding, int64_t ow,
                      const float *exp, const char *what) {
    pt_op *op = pool_op(dnnl_graph_op_avg_pool, "NCX");
    SETL(op, dnnl_graph_op_attr_kernel, k);
    SETL(op, dnnl_graph_op_attr_strides, s);
    SETL(op, dnnl_graph_op_attr_pads_begin, pb);
    SETL(op, dnnl_graph_op_attr_pads_end, pe);
    pt_op_set_bool(op, dnnl_graph_op_attr_exclude_pad, excl);
    if (rounding) pt_op_set_str(op, dnnl_graph_op_attr_rounding_type, rounding);
    pt_tview src = MK(dnnl_f32, 1, 1, 5), dst = mk(dnnl_f32, 3, DIMS(1, 1, ow), NULL, 0);
    setv(&src, (const float[]){1, 2, 3, 4, 5});
    CHECK_EQ_INT(RUN(pt_decode_avg_pool, op, &src, 1, &dst, 1), dnnl_success);
    check_tv(what, &dst, exp, 1e-6);
}

static void test_avg_pool_ceil(void) {
    run_avg1d(2, 2, 0, 0, false, "floor", 2, (const float[]){1.5f, 3.5f}, "avg floor");
    /* Ceil: the last window holds only src[4]; divisor |V| = 1 even without exclude_pad. */
    run_avg1d(2, 2, 0, 0, false, "ceil", 3, (const float[]){1.5f, 3.5f, 5.0f}, "avg ceil");
    run_avg1d(2, 2, 0, 0, true, "ceil", 3, (const float[]){1.5f, 3.5f, 5.0f}, "avg ceil exclude");
    /* Explicit padding: floor + include -> divisor 3; ceil -> |V|. */
    run_avg1d(3, 2, 1, 1, false, "floor", 3, (const float[]){1.0f, 3.0f, 3.0f}, "avg pad include");
    run_avg1d(3, 2, 1, 1, true, "floor", 3, (const float[]){1.5f, 3.0f, 4.5f}, "avg pad exclude");
    run_avg1d(3, 2, 1, 1, false, "ceil", 3, (const float[]){1.5f, 3.0f, 4.5f}, "avg pad ceil");
    /* auto_pad SAME_UPPER with k 2, s 1: pads [0]/[1]. */
    pt_op *op = pool_1d(dnnl_graph_op_avg_pool, 2, 1, "SAME_UPPER");
    pt_tview src = MK(dnnl_f32, 1, 1, 5), dst = MK(dnnl_f32, 1, 1, 5);
    setv(&src, (const float[]){1, 2, 3, 4, 5});
    CHECK_EQ_INT(RUN(pt_decode_avg_pool, op, &src, 1, &dst, 1), dnnl_success);
    check_tv("avg SAME_UPPER", &dst, (const float[]){1.5f, 2.5f, 3.5f, 4.5f, 2.5f}, 1e-6);
    /* Stride 2, I 5, k 3: T = 3 - 5 % 2 = 2 -> pads [1]/[1]. */
    pt_op *op2 = pool_1d(dnnl_graph_op_avg_pool, 3, 2, "SAME_UPPER");
    pt_tview d3 = MK(dnnl_f32, 1, 1, 3);
    CHECK_EQ_INT(RUN(pt_decode_avg_pool, op2, &src, 1, &d3, 1), dnnl_success);
    check_tv("avg SAME_UPPER stride 2", &d3, (const float[]){1, 3, 3}, 1e-6);
}

static void test_avg_pool_bwd(void) {
    pt_op *op = pool_1d(dnnl_graph_op_avg_pool_backward, 2, 1, NULL);
    pt_tview dd = MK(dnnl_f32, 1, 1, 3), ds = MK(dnnl_f32, 1, 1, 4);
    setv(&dd, (const float[]){1, 1, 1});
    CHECK_EQ_INT(RUN(pt_decode_avg_pool_bwd, op, &dd, 1, &ds, 1), dnnl_success);
    check_tv("avg bwd 1d", &ds, (const float[]){0.5f, 1, 1, 0.5f}, 1e-6);
    /* auto_pad uses the diff_src extent: I 6, k 3, s 2 -> T = 1 -> pads [0]/[1]. */
    pt_op *opa = pool_1d(dnnl_graph_op_avg_pool_backward, 3, 2, "SAME_UPPER");
    pt_tview dd3 = MK(dnnl_f32, 1, 1, 3), ds6 = MK(dnnl_f32, 1, 1, 6);
    setv(&dd3, (const float[]){1, 2, 3});
    CHECK_EQ_INT(RUN(pt_decode_avg_pool_bwd, opa, &dd3, 1, &ds6, 1), dnnl_success);
    check_tv("avg bwd SAME_UPPER", &ds6, (const float[]){1 / 3.0f, 1 / 3.0f, 1, 2 / 3.0f, 5 / 3.0f, 1}, 1e-6);

    /* Adjoint: <avg(x), y> == <x, avg_bwd(y)>, 2-D, strides, pads, both divisors, NXC strided. */
    for (int excl = 0; excl < 2; ++excl)
        for (int nxc = 0; nxc < 2; ++nxc) {
            pt_op *ops[2] = {pool_op(dnnl_graph_op_avg_pool, nxc ? "NXC" : "NCX"),
                             pool_op(dnnl_graph_op_avg_pool_backward, nxc ? "NXC" : "NCX")};
            for (int i = 0; i < 2; ++i) {
                SETL(ops[i], dnnl_graph_op_attr_kernel, 3, 2);
                SETL(ops[i], dnnl_graph_op_attr_strides, 2, 1);
                SETL(ops[i], dnnl_graph_op_attr_pads_begin, 1, 0);
                SETL(ops[i], dnnl_graph_op_attr_pads_end, 1, 1);
                pt_op_set_bool(ops[i], dnnl_graph_op_attr_exclude_pad, excl);
            }
            /* I = [7, 5] -> O = [(7+2-3)/2+1, (5+1-2)+1] = [4, 5] */
            pt_tview x = MK(dnnl_f32, 2, 3, 7, 5), y = MK(dnnl_f32, 2, 3, 4, 5), dy = MK(dnnl_f32, 2, 3, 4, 5);
            pt_tview dx = MK(dnnl_f32, 2, 3, 7, 5);
            fill_rand(&x, 31 + excl), fill_rand(&dy, 33 + excl);
            if (nxc) {
                x = to_nxc(&x, PERM(3, 1, 2, 0), 1), dy = to_nxc(&dy, NULL, 1);
                y = to_nxc(&y, NULL, 0), dx = to_nxc(&dx, PERM(0, 2, 1, 3), 2);
            }
            CHECK_EQ_INT(RUN(pt_decode_avg_pool, ops[0], &x, 1, &y, 1), dnnl_success);
            CHECK_EQ_INT(RUN(pt_decode_avg_pool_bwd, ops[1], &dy, 1, &dx, 1), dnnl_success);
            check_rel("avgpool adjoint", dotv(&y, &dy), dotv(&x, &dx), 1e-6);
        }
}

static void test_max_pool(void) {
    /* 1-D, kernel 2, dilation 2, pads 1/1: taps o-1 and o+1. */
    pt_op *op = pool_op(dnnl_graph_op_max_pool, "NCX");
    SETL(op, dnnl_graph_op_attr_kernel, 2);
    SETL(op, dnnl_graph_op_attr_strides, 1);
    SETL(op, dnnl_graph_op_attr_pads_begin, 1);
    SETL(op, dnnl_graph_op_attr_pads_end, 1);
    SETL(op, dnnl_graph_op_attr_dilations, 2);
    pt_tview src = MK(dnnl_f32, 1, 1, 6), dst = MK(dnnl_f32, 1, 1, 6);
    setv(&src, (const float[]){1, 5, 2, 4, 3, 0});
    CHECK_EQ_INT(RUN(pt_decode_max_pool, op, &src, 1, &dst, 1), dnnl_success);
    check_tv("maxpool dilated", &dst, (const float[]){5, 2, 5, 3, 4, 3}, 0);
    pt_tview bad = MK(dnnl_f32, 6);
    CHECK_EQ_INT(RUN(pt_decode_max_pool, op, &src, 1, &bad, 1), dnnl_invalid_arguments);

    /* Ceil rounding: I 5, k 2, s 2 -> 3 outputs, the last sees only src[4]. */
    pt_op *opc = pool_op(dnnl_graph_op_max_pool, "NCX");
    SETL(opc, dnnl_graph_op_attr_kernel, 2);
    SETL(opc, dnnl_graph_op_attr_strides, 2);
    SETL(opc, dnnl_graph_op_attr_pads_begin, 0);
    SETL(opc, dnnl_graph_op_attr_pads_end, 0);
    pt_op_set_str(opc, dnnl_graph_op_attr_rounding_type, "ceil");
    pt_tview s5 = MK(dnnl_f32, 1, 1, 5), d3 = MK(dnnl_f32, 1, 1, 3);
    setv(&s5, (const float[]){1, -2, 3, 4, -5});
    CHECK_EQ_INT(RUN(pt_decode_max_pool, opc, &s5, 1, &d3, 1), dnnl_success);
    check_tv("maxpool ceil", &d3, (const float[]){1, 4, -5}, 0);

    /* Windows entirely in padding give the lowest finite value of the type. */
    static const dnnl_data_type_t dts[3] = {dnnl_f32, dnnl_bf16, dnnl_f16};
    const float lowest[3] = {-FLT_MAX, -3.38953139e38f, -65504.0f};
    for (int t = 0; t < 3; ++t) {
        pt_op *opl = pool_op(dnnl_graph_op_max_pool, "NCX");
        SETL(opl, dnnl_graph_op_attr_kernel, 1);
        SETL(opl, dnnl_graph_op_attr_strides, 1);
        SETL(opl, dnnl_graph_op_attr_pads_begin, 1);
        SETL(opl, dnnl_graph_op_attr_pads_end, 1);
        pt_tview s2 = MK(dts[t], 1, 1, 2), d4 = MK(dts[t], 1, 1, 4);
        setv(&s2, (const float[]){-1, 2});
        CHECK_EQ_INT(RUN(pt_decode_max_pool, opl, &s2, 1, &d4, 1), dnnl_success);
        check_tv("maxpool lowest", &d4, (const float[]){lowest[t], -1, 2, lowest[t]}, 0);
    }

    /* 2-D NCX vs NXC strided on pseudo-random data, with SAME_LOWER. */
    pt_op *o1 = pool_op(dnnl_graph_op_max_pool, "NCX"), *o2 = pool_op(dnnl_graph_op_max_pool, "NXC");
    pt_op *both[2] = {o1, o2};
    for (int i = 0; i < 2; ++i) {
        SETL(both[i], dnnl_graph_op_attr_kernel, 3, 2);
        SETL(both[i], dnnl_graph_op_attr_strides, 2, 2);
        SETL(both[i], dnnl_graph_op_attr_pads_begin, 0, 0);
        SETL(both[i], dnnl_graph_op_attr_pads_end, 0, 0);
        SETL(both[i], dnnl_graph_op_attr_dilations, 1, 2);
        pt_op_set_str(both[i], dnnl_graph_op_attr_auto_pad, "SAME_LOWER");
    }
    /* I [5, 6]: H: T = 3 - 1 = 2 -> O 3; W: E 3, T = 3 - 2 = 1 -> O 3 */
    pt_tview x = MK(dnnl_f32, 2, 3, 5, 6), y = MK(dnnl_f32, 2, 3, 3, 3);
    fill_rand(&x, 41);
    CHECK_EQ_INT(RUN(pt_decode_max_pool, o1, &x, 1, &y, 1), dnnl_success);
    pt_tview xn = to_nxc(&x, PERM(2, 1, 3, 0), 3), yn = MKP(dnnl_f32, PERM(3, 0, 2, 1), 1, 2, 3, 3, 3);
    CHECK_EQ_INT(RUN(pt_decode_max_pool, o2, &xn, 1, &yn, 1), dnnl_success);
    check_close("maxpool NCX == NXC", nxc_values_as_ncx(&yn), getva(&y), nel(&y), 0);
    /* Spot-check output (0,0,0,0): SAME_LOWER pads H [1], W [1] -> rows -1..1, cols -1 and 1. */
    float *xv = getva(&x);
    CHECK_NEAR(getva(&y)[0], xv[1] > xv[7] ? xv[1] : xv[7], 0); /* taps (0,1) and (1,1) */
}

static void test_max_pool_bwd(void) {
    pt_op *op = pool_op(dnnl_graph_op_max_pool_backward, "NCX");
    SETL(op, dnnl_graph_op_attr_kernel, 2);
    SETL(op, dnnl_graph_op_attr_strides, 1);
    SETL(op, dnnl_graph_op_attr_pads_begin, 0);
    SETL(op, dnnl_graph_op_attr_pads_end, 0);
    /* Ties resolve to the first tap. */
    pt_tview in[2] = {MK(dnnl_f32, 1, 1, 3), MK(dnnl_f32, 1, 1, 2)}, ds = MK(dnnl_f32, 1, 1, 3);
    setv(&in[0], (const float[]){3, 3, 1});
    setv(&in[1], (const float[]){1, 10});
    CHECK_EQ_INT(RUN(pt_decode_max_pool_bwd, op, in, 2, &ds, 1), dnnl_success);
    check_tv("maxpool bwd ties", &ds, (const float[]){1, 10, 0}, 0);
    /* Overlapping windows with the same arg-max accumulate. */
    setv(&in[0], (const float[]){1, 5, 2});
    setv(&in[1], (const float[]){1, 2});
    CHECK_EQ_INT(RUN(pt_decode_max_pool_bwd, op, in, 2, &ds, 1), dnnl_success);
    check_tv("maxpool bwd accumulate", &ds, (const float[]){0, 3, 0}, 0);

    /* 2-D dilated/padded NXC strided vs NCX: same gradient; total preserved. */
    pt_op *o1 = pool_op(dnnl_graph_op_max_pool_backward, "NCX"), *o2 = pool_op(dnnl_graph_op_max_pool_backward, NULL);
    pt_op *both[2] = {o1, o2};
    for (int i = 0; i < 2; ++i) {
        SETL(both[i], dnnl_graph_op_attr_kernel, 2, 3);
        SETL(both[i], dnnl_graph_op_attr_strides, 1, 2);
        SETL(both[i], dnnl_graph_op_attr_pads_begin, 1, 1);
        SETL(both[i], dnnl_graph_op_attr_pads_end, 0, 1);
        SETL(both[i], dnnl_graph_op_attr_dilations, 2, 1);
    }
    /* I [4, 5]: H E 3 -> O (4+1-3)+1 = 3; W -> (5+2-3)/2+1 = 3 */
    pt_tview x = MK(dnnl_f32, 1, 2, 4, 5), dy = MK(dnnl_f32, 1, 2, 3, 3), dx = MK(dnnl_f32, 1, 2, 4, 5);
    fill_rand(&x, 51), fill_rand(&dy, 52);
    pt_tview bin[2] = {x, dy};
    CHECK_EQ_INT(RUN(pt_decode_max_pool_bwd, o1, bin, 2, &dx, 1), dnnl_success);
    pt_tview bn[2] = {to_nxc(&x, PERM(3, 2, 1, 0), 1), to_nxc(&dy, NULL, 2)};
    pt_tview dxn = to_nxc(&dx, PERM(1, 3, 0, 2), 1);
    CHECK_EQ_INT(RUN(pt_decode_max_pool_bwd, o2, bn, 2, &dxn, 1), dnnl_success);
    check_close("maxpool bwd NCX == NXC", nxc_values_as_ncx(&dxn), getva(&dx), nel(&dx), 0);
    float *g = getva(&dx), *d = getva(&dy);
    double sg = 0, sd = 0;
    for (int64_t i = 0; i < nel(&dx); ++i) sg += g[i];
    for (int64_t i = 0; i < nel(&dy); ++i) sd += d[i];
    CHECK_NEAR(sg, sd, 1e-5);
}

/* ======================================================================== */
/* Interpolate                                                                */
/* ======================================================================== */

static pt_op *interp_op(dnnl_graph_op_kind_t kind, const char *mode, const char *ctm, const char *df) {
    pt_op *op = mkop(kind);
    pt_op_set_str(op, dnnl_graph_op_attr_mode, mode);
    if (ctm) pt_op_set_str(op, dnnl_graph_op_attr_coordinate_transformation_mode, ctm);
    if (df) pt_op_set_str(op, dnnl_graph_op_attr_data_format, df);
    return op;
}

static void test_interp_fwd(void) {
    pt_tview s2 = MK(dnnl_f32, 1, 1, 2), d4 = MK(dnnl_f32, 1, 1, 4);
    setv(&s2, (const float[]){10, 20});
    pt_op *nn = interp_op(dnnl_graph_op_interpolate, "nearest", NULL, "NCX");
    SETL(nn, dnnl_graph_op_attr_sizes, 4);
    CHECK_EQ_INT(RUN(pt_decode_interpolate, nn, &s2, 1, &d4, 1), dnnl_success);
    check_tv("nearest 1d", &d4, (const float[]){10, 10, 20, 20}, 0);
    pt_op *li = interp_op(dnnl_graph_op_interpolate, "linear", "half_pixel", "NCX");
    CHECK_EQ_INT(RUN(pt_decode_interpolate, li, &s2, 1, &d4, 1), dnnl_success);
    check_tv("linear 1d", &d4, (const float[]){10, 12.5f, 17.5f, 20}, 0);
    pt_tview bad = MK(dnnl_f32, 4);
    CHECK_EQ_INT(RUN(pt_decode_interpolate, li, &s2, 1, &bad, 1), dnnl_invalid_arguments);
    pt_tview s3 = MK(dnnl_f32, 1, 1, 3), d5 = MK(dnnl_f32, 1, 1, 5);
    setv(&s3, (const float[]){0, 4, 8});
    pt_op *ac = interp_op(dnnl_graph_op_interpolate, "linear", "align_corners", "NCX");
    CHECK_EQ_INT(RUN(pt_decode_interpolate, ac, &s3, 1, &d5, 1), dnnl_success);
    check_tv("linear align_corners", &d5, (const float[]){0, 2, 4, 6, 8}, 0);
    /* nearest downsample 5 -> 2: c = 2.5o + 0.75 -> round -> [1, 3] */
    pt_tview s5 = MK(dnnl_f32, 1, 1, 5), d2 = MK(dnnl_f32, 1, 1, 2);
    setv(&s5, (const float[]){0, 1, 2, 3, 4});
    CHECK_EQ_INT(RUN(pt_decode_interpolate, nn, &s5, 1, &d2, 1), dnnl_success);
    check_tv("nearest down", &d2, (const float[]){1, 3}, 0);
    /* Ties round away from zero: 4 -> 2 half_pixel gives c = 0.5, 2.5. */
    pt_tview s4 = MK(dnnl_f32, 1, 1, 4);
    setv(&s4, (const float[]){0, 1, 2, 3});
    CHECK_EQ_INT(RUN(pt_decode_interpolate, nn, &s4, 1, &d2, 1), dnnl_success);
    check_tv("nearest ties", &d2, (const float[]){1, 3}, 0);
    pt_op *nac = interp_op(dnnl_graph_op_interpolate, "nearest", "align_corners", "NCX");
    pt_tview d3 = MK(dnnl_f32, 1, 1, 3);
    CHECK_EQ_INT(RUN(pt_decode_interpolate, nac, &s2, 1, &d3, 1), dnnl_success);
    check_tv("nearest align_corners", &d3, (const float[]){10, 20, 20}, 0);

    /* Bilinear 2x2 -> 4x4 (half_pixel), channel 1 = 2 x channel 0; NCX and NXC strided. */
    static const float BIL[16] = {1.0f, 1.25f, 1.75f, 2.0f, 1.5f, 1.75f, 2.25f, 2.5f,
                                  2.5f, 2.75f, 3.25f, 3.5f, 3.0f, 3.25f, 3.75f, 4.0f};
    float exp[32];
    for (int i = 0; i < 16; ++i) exp[i] = BIL[i], exp[16 + i] = 2 * BIL[i];
    pt_tview sb = MK(dnnl_f32, 1, 2, 2, 2), db = MK(dnnl_f32, 1, 2, 4, 4);
    setv(&sb, (const float[]){1, 2, 3, 4, 2, 4, 6, 8});
    pt_op *bl = interp_op(dnnl_graph_op_interpolate, "bilinear", NULL, "NCX");
    float scales[2] = {2.0f, 2.0f};
    pt_op_set_f32(bl, dnnl_graph_op_attr_scales, scales, 2, true);
    CHECK_EQ_INT(RUN(pt_decode_interpolate, bl, &sb, 1, &db, 1), dnnl_success);
    check_tv("bilinear", &db, exp, 0);
    pt_op *bl2 = interp_op(dnnl_graph_op_interpolate, "linear", NULL, NULL);
    pt_tview sbn = to_nxc(&sb, PERM(3, 1, 0, 2), 1), dbn = MKP(dnnl_f32, PERM(3, 2, 1, 0), 2, 1, 4, 4, 2);
    CHECK_EQ_INT(RUN(pt_decode_interpolate, bl2, &sbn, 1, &dbn, 1), dnnl_success);
    check_close("bilinear NXC strided", nxc_values_as_ncx(&dbn), exp, 32, 0);

    /* Bilinear align_corners 2x3 -> 3x5. */
    static const float BAC[15] = {1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 2.0f, 2.75f, 3.5f,
                                  5.0f, 6.5f, 3.0f, 4.0f, 5.0f, 7.0f, 9.0f};
    pt_tview sa = MK(dnnl_f32, 1, 1, 2, 3), da = MK(dnnl_f32, 1, 1, 3, 5);
    setv(&sa, (const float[]){1, 2, 4, 3, 5, 9});
    pt_op *bac = interp_op(dnnl_graph_op_interpolate, "bilinear", "align_corners", "NCX");
    CHECK_EQ_INT(RUN(pt_decode_interpolate, bac, &sa, 1, &da, 1), dnnl_success);
    check_tv("bilinear align_corners", &da, BAC, 1e-6);

    /* Trilinear reproduces a linear function: src = 4d + 2h + w on 2x2x2. */
    pt_tview st = MK(dnnl_f32, 1, 1, 2, 2, 2);
    float stv[8];
    for (int i = 0; i < 8; ++i) stv[i] = (float)i;
    setv(&st, stv);
    pt_op *tac = interp_op(dnnl_graph_op_interpolate, "trilinear", "align_corners", "NCX");
    pt_tview dt3 = MK(dnnl_f32, 1, 1, 3, 3, 3);
    CHECK_EQ_INT(RUN(pt_decode_interpolate, tac, &st, 1, &dt3, 1), dnnl_success);
    float e3[27];
    for (int d = 0; d < 3; ++d)
        for (int h = 0; h < 3; ++h)
            for (int w = 0; w < 3; ++w) e3[d * 9 + h * 3 + w] = 4 * 0.5f * d + 2 * 0.5f * h + 0.5f * w;
    check_tv("trilinear align_corners", &dt3, e3, 1e-6);
    /* half_pixel 2 -> 4 per dim: coordinates clamp to [0, 0.25, 0.75, 1]. */
    pt_op *thp = interp_op(dnnl_graph_op_interpolate, "trilinear", "half_pixel", "NCX");
    pt_tview dt4 = MKP(dnnl_f32, PERM(4, 3, 2, 1, 0), 1, 1, 1, 4, 4, 4);
    CHECK_EQ_INT(RUN(pt_decode_interpolate, thp, &st, 1, &dt4, 1), dnnl_success);
    const float cc[4] = {0, 0.25f, 0.75f, 1};
    float e4[64];
    for (int d = 0; d < 4; ++d)
        for (int h = 0; h < 4; ++h)
            for (int w = 0; w < 4; ++w) e4[d * 16 + h * 4 + w] = 4 * cc[d] + 2 * cc[h] + cc[w];
    check_tv("trilinear half_pixel strided", &dt4, e4, 1e-6);
}

static void test_interp_bwd(void) {
    pt_tview src = MK(dnnl_f32, 1, 1, 2), dd = MK(dnnl_f32, 1, 1, 4), ds = MK(dnnl_f32, 1, 1, 2);
    setv(&dd, (const float[]){1, 2, 3, 4});
    pt_tview in[2] = {src, dd};
    pt_op *nn = interp_op(dnnl_graph_op_interpolate_backward, "nearest", NULL, "NCX");
    CHECK_EQ_INT(RUN(pt_decode_interpolate_bwd, nn, in, 2, &ds, 1), dnnl_success);
    check_tv("nearest bwd", &ds, (const float[]){3, 7}, 0);
    pt_op *li = interp_op(dnnl_graph_op_interpolate_backward, "linear", NULL, "NCX");
    CHECK_EQ_INT(RUN(pt_decode_interpolate_bwd, li, in, 2, &ds, 1), dnnl_success);
    check_tv("linear bwd", &ds, (const float[]){3.25f, 6.75f}, 1e-6);

    /* Adjoint identities, 2-D, up- and down-sampling, both modes and
     * coordinate transforms, NCX and NXC strided. */
    const char *modes[2] = {"nearest", "bilinear"}, *ctms[2] = {"half_pixel", "align_corners"};
    for (int m = 0; m < 2; ++m)
        for (int c = 0; c < 2; ++c)
            for (int nxc = 0; nxc < 2; ++nxc) {
                pt_op *f = interp_op(dnnl_graph_op_interpolate, modes[m], ctms[c], nxc ? "NXC" : "NCX");
                pt_op *b = interp_op(dnnl_graph_op_interpolate_backward, modes[m], ctms[c], nxc ? "NXC" : "NCX");
                pt_tview x = MK(dnnl_f32, 2, 3, 5, 4), y = MK(dnnl_f32, 2, 3, 3, 7), dy = MK(dnnl_f32, 2, 3, 3, 7);
                pt_tview dx = MK(dnnl_f32, 2, 3, 5, 4);
                fill_rand(&x, 61 + m), fill_rand(&dy, 63 + c);
                if (nxc) {
                    x = to_nxc(&x, PERM(3, 2, 0, 1), 1), dy = to_nxc(&dy, NULL, 1);
                    y = to_nxc(&y, NULL, 0), dx = to_nxc(&dx, PERM(1, 2, 3, 0), 2);
                }
                pt_tview bin[2] = {x, dy};
                CHECK_EQ_INT(RUN(pt_decode_interpolate, f, &x, 1, &y, 1), dnnl_success);
                CHECK_EQ_INT(RUN(pt_decode_interpolate_bwd, b, bin, 2, &dx, 1), dnnl_success);
                check_rel("interp adjoint", dotv(&y, &dy), dotv(&x, &dx), 1e-6);
            }
}

/* ======================================================================== */
/* Normalisation                                                              */
/* ======================================================================== */

static void test_layer_norm(void) {
    static const float LN[6] = {-1.22473569f, 1.0f, -0.387632157f, -1.22474258f, 1.0f, -0.387628712f};
    pt_op *op = mkop(dnnl_graph_op_layer_norm);
    pt_tview in[3] = {MKP(dnnl_f32, PERM(1, 0), 1, 2, 3), MK(dnnl_f32, 3), MK(dnnl_f32, 3)};
    pt_tview out[3] = {MKP(dnnl_f32, NULL, 2, 2, 3), MK(dnnl_f32, 2), MK(dnnl_f32, 2)};
    setv(&in[0], (const float[]){1, 2, 3, 4, 6, 8});
    setv(&in[1], (const float[]){1, 2, 0.5f});
    setv(&in[2], (const float[]){0, 1, -1});
    CHECK_EQ_INT(RUN(pt_decode_layer_norm, op, in, 3, out, 3), dnnl_success);
    check_tv("layernorm", &out[0], LN, 1e-6);
    check_tv("layernorm mean", &out[1], (const float[]){2, 6}, 1e-6);
    check_tv("layernorm var", &out[2], (const float[]){0.666666667f, 2.66666667f}, 1e-6);
    /* Missing gamma/beta with use_affine is an error. */
    CHECK_EQ_INT(RUN(pt_decode_layer_norm, op, in, 1, out, 1), dnnl_invalid_arguments);

    /* begin_norm_axis 1 on [2,2,3], no affine, f32 mean/var. */
    static const float LN1[12] = {-1.35224507f, -0.845153168f, -0.338061267f, 0.169030634f,
                                  0.676122534f, 1.69030634f,   -0.883882234f, -1.41421157f,
                                  0.176776447f, 0.176776447f,  0.176776447f,  1.76776447f};
    pt_op *op1 = mkop(dnnl_graph_op_layer_norm);
    set_i(op1, dnnl_graph_op_attr_begin_norm_axis, 1);
    pt_op_set_bool(op1, dnnl_graph_op_attr_use_affine, false);
    pt_tview x = MKP(dnnl_f32, PERM(2, 0, 1), 1, 2, 2, 3);
    pt_tview o1[3] = {MK(dnnl_f32, 2, 2, 3), MK(dnnl_f32, 2), MK(dnnl_f32, 2)};
    setv(&x, (const float[]){1, 2, 3, 4, 5, 7, 0, -1, 2, 2, 2, 5});
    CHECK_EQ_INT(RUN(pt_decode_layer_norm, op1, &x, 1, o1, 3), dnnl_success);
    check_tv("layernorm axis 1", &o1[0], LN1, 1e-6);
    check_tv("layernorm axis 1 mean", &o1[1], (const float[]){3.66666667f, 1.66666667f}, 1e-6);
    check_tv("layernorm axis 1 var", &o1[2], (const float[]){3.88888889f, 3.55555556f}, 1e-6);

    /* bf16 src/dst with f32 and with bf16 gamma/beta. */
    for (int t = 0; t < 2; ++t) {
        dnnl_data_type_t aux = t ? dnnl_bf16 : dnnl_f32;
        pt_tview bi[3] = {MK(dnnl_bf16, 2, 3), MK(aux, 3), MK(aux, 3)};
        pt_tview bo[3] = {MK(dnnl_bf16, 2, 3), MK(aux, 2), MK(aux, 2)};
        setv(&bi[0], (const float[]){1, 2, 3, 4, 6, 8});
        setv(&bi[1], (const float[]){1, 2, 0.5f});
        setv(&bi[2], (const float[]){0, 1, -1});
        CHECK_EQ_INT(RUN(pt_decode_layer_norm, op, bi, 3, bo, 3), dnnl_success);
        check_tv("layernorm bf16", &bo[0], LN, 8e-3);
        check_tv("layernorm bf16 mean", &bo[1], (const float[]){2, 6}, 0);
    }
}

/* Loss = sum dd * LayerNorm(x; gamma, beta) evaluated through the kernel. */
static double ln_loss(pt_op *op, const pt_tview *in, size_t nin, const pt_tview *dst, const float *dd) {
    CHECK_EQ_INT(RUN(pt_decode_layer_norm, op, in, nin, dst, 1), dnnl_success);
    float *y = getva(dst);
    double l = 0;
    for (int64_t i = 0; i < nel(dst); ++i) l += (double)y[i] * dd[i];
    return l;
}

/* Central difference of the loss with respect to element i of tensor t. */
typedef double (*loss_fn)(void *ctx);
static double fdiff(const pt_tview *t, int64_t i, double h, loss_fn f, void *ctx) {
    int64_t idx[DNNL_MAX_NDIMS];
    pt_unravel(i, t->lt.ndims, t->lt.dims, idx);
    int64_t off = pt_tv_off(t, idx);
    float x0 = pt_tv_getf(t, off);
    pt_tv_setf(t, off, (float)(x0 + h));
    double lp = f(ctx);
    pt_tv_setf(t, off, (float)(x0 - h));
    double lm = f(ctx);
    pt_tv_setf(t, off, x0);
    return (lp - lm) / (2 * h);
}

typedef struct {
    pt_op *op;
    const pt_tview *in;
    size_t nin;
    const pt_tview *dst;
    const float *dd;
} ln_ctx;
static double ln_loss_cb(void *c) {
    ln_ctx *l = c;
    return ln_loss(l->op, l->in, l->nin, l->dst, l->dd);
}

static void test_layer_norm_bwd(void) {
    for (int affine = 1; affine >= 0; --affine) {
        pt_op *fop = mkop(dnnl_graph_op_layer_norm), *bop = mkop(dnnl_graph_op_layer_norm_backward);
        pt_op_set_bool(fop, dnnl_graph_op_attr_use_affine, affine);
        pt_op_set_bool(bop, dnnl_graph_op_attr_use_affine, affine);
        set_f(fop, dnnl_graph_op_attr_epsilon, 1e-3f);
        set_f(bop, dnnl_graph_op_attr_epsilon, 1e-3f);
        /* src [3,5] stored transposed; normalised over the last dim. */
        pt_tview fin[3] = {MKP(dnnl_f32, PERM(1, 0), 1, 3, 5), MK(dnnl_f32, 5), MK(dnnl_f32, 5)};
        fill_rand(&fin[0], 71), fill_rand(&fin[1], 72), fill_rand(&fin[2], 73);
        pt_tview fout[3] = {MK(dnnl_f32, 3, 5), MK(dnnl_f32, 3), MK(dnnl_f32, 3)};
        size_t nfin = affine ? 3 : 1;
        CHECK_EQ_INT(RUN(pt_decode_layer_norm, fop, fin, nfin, fout, 3), dnnl_success);
        pt_tview dd = MKP(dnnl_f32, NULL, 1, 3, 5);
        fill_rand(&dd, 74);
        float *ddv = getva(&dd);
        pt_tview bin[6] = {fin[0], dd, fout[1], fout[2], fin[1], fin[2]};
        pt_tview bout[3] = {MKP(dnnl_f32, PERM(1, 0), 2, 3, 5), MK(dnnl_f32, 5), MK(dnnl_f32, 5)};
        size_t nbin = affine ? 6 : 4, nbout = affine ? 3 : 1;
        CHECK_EQ_INT(RUN(pt_decode_layer_norm_bwd, bop, bin, nbin, bout, nbout), dnnl_success);
        pt_tview dst = MK(dnnl_f32, 3, 5);
        ln_ctx c = {fop, fin, nfin, &dst, ddv};
        float *ds = getva(&bout[0]);
        float fd[15];
        for (int i = 0; i < 15; ++i) fd[i] = (float)fdiff(&fin[0], i, 1e-2, ln_loss_cb, &c);
        check_close("layernorm bwd diff_src vs FD", ds, fd, 15, 3e-3);
        if (affine) {
            float fg[5], fb[5];
            for (int i = 0; i < 5; ++i) {
                fg[i] = (float)fdiff(&fin[1], i, 1e-2, ln_loss_cb, &c);
                fb[i] = (float)fdiff(&fin[2], i, 1e-2, ln_loss_cb, &c);
            }
            check_close("layernorm bwd diff_gamma vs FD", getva(&bout[1]), fg, 5, 3e-3);
            check_close("layernorm bwd diff_beta vs FD", getva(&bout[2]), fb, 5, 3e-3);
        }
    }
}

static void test_group_norm(void) {
    static const float GN[24] = {-1.43149499f, 0.973416594f, -0.0572597996f, 0.456031903f, 1.6584877f,
                                 1.1431495f,   -1.11514486f, 3.40726075f,    1.46908692f,  -0.015456541f,
                                 0.953630377f, -1.30757243f, -0.286298998f,  -1.31697539f, 1.08793619f,
                                 1.0286299f,   0.513291703f, 1.7157475f,     2.4999984f,   0.10000032f,
                                 -2.29999776f, -1.89999888f, -0.69999984f,   0.4999992f};
    pt_tview x = MK(dnnl_f32, 2, 4, 3);
    float xv[24];
    for (int i = 0; i < 24; ++i) xv[i] = (float)((i * 7) % 10) - 4.5f;
    setv(&x, xv);
    pt_tview g = MK(dnnl_f32, 4), b = MK(dnnl_f32, 4);
    setv(&g, (const float[]){1, 0.5f, 2, -1});
    setv(&b, (const float[]){0, 1, 0.5f, -0.5f});
    pt_op *op = mkop(dnnl_graph_op_group_norm);
    set_i(op, dnnl_graph_op_attr_groups, 2);
    pt_op_set_str(op, dnnl_graph_op_attr_data_format, "NCX");
    pt_tview in[3] = {x, g, b};
    pt_tview out[3] = {MK(dnnl_f32, 2, 4, 3), MK(dnnl_f32, 2, 2), MK(dnnl_f32, 2, 2)};
    CHECK_EQ_INT(RUN(pt_decode_group_norm, op, in, 3, out, 3), dnnl_success);
    check_tv("groupnorm NCX", &out[0], GN, 1e-5);
    check_tv("groupnorm mean", &out[1], (const float[]){-0.333333333f, 0, 0.333333333f, -1}, 1e-6);
    check_tv("groupnorm var", &out[2], (const float[]){8.47222222f, 9.58333333f, 8.47222222f, 6.25f}, 1e-6);
    /* NXC (default) strided: same numbers. */
    pt_op *op2 = mkop(dnnl_graph_op_group_norm);
    set_i(op2, dnnl_graph_op_attr_groups, 2);
    pt_tview in2[3] = {to_nxc(&x, PERM(2, 0, 1), 1), g, b};
    pt_tview out2 = MKP(dnnl_f32, PERM(1, 2, 0), 2, 2, 3, 4);
    CHECK_EQ_INT(RUN(pt_decode_group_norm, op2, in2, 3, &out2, 1), dnnl_success);
    check_close("groupnorm NXC strided", nxc_values_as_ncx(&out2), GN, 24, 1e-5);
    /* Channels not divisible by groups. */
    pt_op *op3 = mkop(dnnl_graph_op_group_norm);
    set_i(op3, dnnl_graph_op_attr_groups, 3);
    pt_op_set_str(op3, dnnl_graph_op_attr_data_format, "NCX");
    CHECK_EQ_INT(RUN(pt_decode_group_norm, op3, in, 3, out, 1), dnnl_invalid_arguments);
}

static void test_rms_norm(void) {
    pt_tview x = MKP(dnnl_f32, PERM(1, 0), 0, 2, 3), dst = MKP(dnnl_f32, NULL, 1, 2, 3);
    setv(&x, (const float[]){1, 2, 3, -2, 0, 4});
    pt_tview g = MK(dnnl_f32, 3);
    setv(&g, (const float[]){1, 0.5f, 2});
    pt_op *op = mkop(dnnl_graph_op_rms_norm);
    pt_tview in[2] = {x, g};
    CHECK_EQ_INT(RUN(pt_decode_rms_norm, op, in, 2, &dst, 1), dnnl_success);
    check_tv("rmsnorm", &dst,
             (const float[]){0.462909554f, 0.462909554f, 2.77745732f, -0.774596088f, 0.0f, 3.09838435f}, 1e-6);
    /* gamma [2,1] broadcast over the rows. */
    pt_tview gb = MK(dnnl_f32, 2, 1);
    setv(&gb, (const float[]){3, -1});
    pt_tview in2[2] = {x, gb};
    CHECK_EQ_INT(RUN(pt_decode_rms_norm, op, in2, 2, &dst, 1), dnnl_success);
    check_tv("rmsnorm gamma bcast", &dst,
             (const float[]){1.38872866f, 2.77745732f, 4.16618599f, 0.774596088f, 0.0f, -1.54919218f}, 1e-6);
    /* No gamma, begin_norm_axis -2 (whole tensor). */
    pt_op *op2 = mkop(dnnl_graph_op_rms_norm);
    set_i(op2, dnnl_graph_op_attr_begin_norm_axis, -2);
    CHECK_EQ_INT(RUN(pt_decode_rms_norm, op2, &x, 1, &dst, 1), dnnl_success);
    check_tv("rmsnorm axis 0", &dst,
             (const float[]){0.420083655f, 0.840167309f, 1.26025096f, -0.840167309f, 0.0f, 1.68033462f}, 1e-6);
    /* f16 src with f16 gamma. */
    pt_tview xh = MK(dnnl_f16, 2, 3), dh = MK(dnnl_f16, 2, 3), gh = MK(dnnl_f16, 3);
    copyv(&xh, &x), copyv(&gh, &g);
    pt_tview in3[2] = {xh, gh};
    CHECK_EQ_INT(RUN(pt_decode_rms_norm, op, in3, 2, &dh, 1), dnnl_success);
    check_tv("rmsnorm f16", &dh,
             (const float[]){0.462909554f, 0.462909554f, 2.77745732f, -0.774596088f, 0.0f, 3.09838435f}, 1e-3);
    /* Gamma that cannot broadcast. */
    pt_tview gbad = MK(dnnl_f32, 2);
    pt_tview in4[2] = {x, gbad};
    CHECK_EQ_INT(RUN(pt_decode_rms_norm, op, in4, 2, &dst, 1), dnnl_invalid_arguments);
}

static const float BN_X[8] = {1, 3, 2, -2, 5, 7, 0, 4}; /* NCX [2,2,2] */

static void test_batch_norm_inference(void) {
    static const float BN_INF[8] = {0.500000625f, 2.49999813f, -0.25000375f, -2.24999375f,
                                    4.49999563f,  6.49999313f, -1.24999875f, 0.74999125f};
    pt_tview x = MK(dnnl_f32, 2, 2, 2);
    setv(&x, BN_X);
    pt_tview aux[4] = {MK(dnnl_f32, 2), MK(dnnl_f32, 2), MK(dnnl_f32, 2), MK(dnnl_f32, 2)};
    setv(&aux[0], (const float[]){2, 0.5f});
    setv(&aux[1], (const float[]){1, -1});
    setv(&aux[2], (const float[]){1.5f, 0.5f});
    setv(&aux[3], (const float[]){4, 1});
    pt_op *op = mkop(dnnl_graph_op_batch_norm_inference);
    set_f(op, dnnl_graph_op_attr_epsilon, 1e-5f);
    pt_op_set_str(op, dnnl_graph_op_attr_data_format, "NCX");
    pt_tview in[5] = {x, aux[0], aux[1], aux[2], aux[3]}, dst = MKP(dnnl_f32, PERM(2, 1, 0), 1, 2, 2, 2);
    CHECK_EQ_INT(RUN(pt_decode_batch_norm_inference, op, in, 5, &dst, 1), dnnl_success);
    check_tv("bn inference NCX", &dst, BN_INF, 1e-6);
    pt_op *op2 = mkop(dnnl_graph_op_batch_norm_inference);
    set_f(op2, dnnl_graph_op_attr_epsilon, 1e-5f);
    pt_tview in2[5] = {to_nxc(&x, PERM(1, 2, 0), 1), aux[0], aux[1], aux[2], aux[3]};
    pt_tview dst2 = MK(dnnl_f32, 2, 2, 2);
    CHECK_EQ_INT(RUN(pt_decode_batch_norm_inference, op2, in2, 5, &dst2, 1), dnnl_success);
    check_close("bn inference NXC", nxc_values_as_ncx(&dst2), BN_INF, 8, 1e-6);
    /* bf16 src with bf16 statistics. */
    pt_tview xb = MK(dnnl_bf16, 2, 2, 2), db = MK(dnnl_bf16, 2, 2, 2);
    copyv(&xb, &x);
    pt_tview ab[4];
    for (int i = 0; i < 4; ++i) ab[i] = MK(dnnl_bf16, 2), copyv(&ab[i], &aux[i]);
    pt_tview in3[5] = {xb, ab[0], ab[1], ab[2], ab[3]};
    CHECK_EQ_INT(RUN(pt_decode_batch_norm_inference, op, in3, 5, &db, 1), dnnl_success);
    check_tv("bn inference bf16", &db, BN_INF, 8e-3);
    /* Aux of the wrong length. */
    pt_tview bad = MK(dnnl_f32, 3);
    pt_tview in4[5] = {x, aux[0], bad, aux[2], aux[3]};
    CHECK_EQ_INT(RUN(pt_decode_batch_norm_inference, op, in4, 5, &dst, 1), dnnl_invalid_arguments);
}

static void test_batch_norm_training(void) {
    static const float BN_TR[8] = {-1.68327889f, 0.105573703f, -0.776393426f, -1.67081972f,
                                   1.8944263f,   3.68327889f,  -1.22360657f,  -0.329180278f};
    for (int with_m = 0; with_m < 2; ++with_m) {
        pt_op *op = mkop(dnnl_graph_op_batch_norm_forward_training);
        set_f(op, dnnl_graph_op_attr_epsilon, 1e-5f);
        if (with_m) set_f(op, dnnl_graph_op_attr_momentum, 0.1f);
        pt_op_set_str(op, dnnl_graph_op_attr_data_format, "NCX");
        pt_tview in[5] = {MKP(dnnl_f32, PERM(1, 0, 2), 1, 2, 2, 2), MK(dnnl_f32, 2), MK(dnnl_f32, 2), MK(dnnl_f32, 2),
                          MK(dnnl_f32, 2)};
        setv(&in[0], BN_X);
        setv(&in[1], (const float[]){1.5f, 0.5f});
        setv(&in[2], (const float[]){4, 1});
        setv(&in[3], (const float[]){2, 0.5f});
        setv(&in[4], (const float[]){1, -1});
        pt_tview out[5] = {MK(dnnl_f32, 2, 2, 2), MK(dnnl_f32, 2), MK(dnnl_f32, 2), MK(dnnl_f32, 2), MK(dnnl_f32, 2)};
        CHECK_EQ_INT(RUN(pt_decode_batch_norm_fwd_training, op, in, 5, out, 5), dnnl_success);
        check_tv("bn training dst", &out[0], BN_TR, 1e-6);
        if (with_m) {
            check_tv("bn running mean", &out[1], (const float[]){3.75f, 0.95f}, 1e-6);
            check_tv("bn running var", &out[2], (const float[]){4.9f, 4.6f}, 1e-6);
        } else { /* momentum absent: 0.5 */
            check_tv("bn running mean m=0.5", &out[1], (const float[]){2.75f, 0.75f}, 1e-6);
            check_tv("bn running var m=0.5", &out[2], (const float[]){4.5f, 3.0f}, 1e-6);
        }
        check_tv("bn batch mean", &out[3], (const float[]){4, 1}, 1e-6);
        check_tv("bn batch var", &out[4], (const float[]){5, 5}, 1e-6);
    }
    /* Without gamma/beta: plain standardisation; running stats written in place. */
    pt_op *op = mkop(dnnl_graph_op_batch_norm_forward_training);
    set_f(op, dnnl_graph_op_attr_epsilon, 1e-5f);
    set_f(op, dnnl_graph_op_attr_momentum, 0.1f);
    pt_tview xn = MK(dnnl_f32, 2, 2, 2); /* NXC [N, W, C] */
    setv(&xn, (const float[]){1, 2, 3, -2, 5, 0, 7, 4});
    pt_tview rm = MK(dnnl_f32, 2), rv = MK(dnnl_f32, 2);
    setv(&rm, (const float[]){1.5f, 0.5f});
    setv(&rv, (const float[]){4, 1});
    pt_tview in[3] = {xn, rm, rv};
    pt_tview out[5] = {MK(dnnl_f32, 2, 2, 2), rm, rv, MK(dnnl_f32, 2), MK(dnnl_f32, 2)};
    CHECK_EQ_INT(RUN(pt_decode_batch_norm_fwd_training, op, in, 3, out, 5), dnnl_success);
    const float inv = 1.0f / sqrtf(5.0f + 1e-5f);
    check_tv("bn training no affine NXC", &out[0],
             (const float[]){-3 * inv, inv, -1 * inv, -3 * inv, inv, -inv, 3 * inv, 3 * inv}, 1e-6);
    check_tv("bn running mean in place", &rm, (const float[]){3.75f, 0.95f}, 1e-6);
    check_tv("bn running var in place", &rv, (const float[]){4.9f, 4.6f}, 1e-6);
}

typedef struct {
    pt_op *op;
    const pt_tview *in;
    const pt_tview *out;
    const float *dd;
} bn_ctx;
static double bn_loss_cb(void *c) {
    bn_ctx *b = c;
    CHECK_EQ_INT(RUN(pt_decode_batch_norm_fwd_training, b->op, b->in, 5, b->out, 5), dnnl_success);
    float *y = getva(&b->out[0]);
    double l = 0;
    for (int64_t i = 0; i < nel(&b->out[0]); ++i) l += (double)y[i] * b->dd[i];
    return l;
}

static void test_batch_norm_bwd(void) {
    for (int nxc = 0; nxc < 2; ++nxc) {
        const char *df = nxc ? "NXC" : "NCX";
        pt_op *fop = mkop(dnnl_graph_op_batch_norm_forward_training), *bop = mkop(dnnl_graph_op_batch_norm_backward);
        pt_op *bop1 = mkop(dnnl_graph_op_batch_norm_backward);
        pt_op *ops[3] = {fop, bop, bop1};
        for (int i = 0; i < 3; ++i) {
            set_f(ops[i], dnnl_graph_op_attr_epsilon, 1e-3f);
            pt_op_set_str(ops[i], dnnl_graph_op_attr_data_format, df);
        }
        /* src rank 4; C = 3 */
        pt_tview x = nxc ? MKP(dnnl_f32, PERM(3, 0, 1, 2), 1, 2, 2, 2, 3) : MKP(dnnl_f32, PERM(1, 0, 2, 3), 1, 2, 3, 2, 2);
        pt_tview in[5] = {x, MK(dnnl_f32, 3), MK(dnnl_f32, 3), MK(dnnl_f32, 3), MK(dnnl_f32, 3)};
        fill_rand(&in[0], 81 + nxc), fill_rand(&in[3], 82), fill_rand(&in[4], 83);
        setv(&in[1], (const float[]){0, 0, 0});
        setv(&in[2], (const float[]){1, 1, 1});
        pt_tview out[5] = {mk(dnnl_f32, 4, x.lt.dims, NULL, 0), MK(dnnl_f32, 3), MK(dnnl_f32, 3), MK(dnnl_f32, 3),
                           MK(dnnl_f32, 3)};
        CHECK_EQ_INT(RUN(pt_decode_batch_norm_fwd_training, fop, in, 5, out, 5), dnnl_success);
        pt_tview dd = mk(dnnl_f32, 4, x.lt.dims, PERM(2, 3, 1, 0), 1);
        fill_rand(&dd, 84);
        float *ddv = getva(&dd);
        pt_tview bin[5] = {x, dd, out[3], out[4], in[3]};
        pt_tview bout[3] = {mk(dnnl_f32, 4, x.lt.dims, PERM(3, 2, 1, 0), 2), MK(dnnl_f32, 3), MK(dnnl_f32, 3)};
        CHECK_EQ_INT(RUN(pt_decode_batch_norm_bwd, bop, bin, 5, bout, 3), dnnl_success);
        pt_tview fo[5] = {mk(dnnl_f32, 4, x.lt.dims, NULL, 0), MK(dnnl_f32, 3), MK(dnnl_f32, 3), MK(dnnl_f32, 3),
                          MK(dnnl_f32, 3)};
        bn_ctx c = {fop, in, fo, ddv};
        float fd[24], fg[3], fb[3];
        for (int i = 0; i < 24; ++i) fd[i] = (float)fdiff(&in[0], i, 1e-2, bn_loss_cb, &c);
        for (int i = 0; i < 3; ++i) {
            fg[i] = (float)fdiff(&in[3], i, 1e-2, bn_loss_cb, &c);
            fb[i] = (float)fdiff(&in[4], i, 1e-2, bn_loss_cb, &c);
        }
        check_close("bn bwd diff_src vs FD", getva(&bout[0]), fd, 24, 3e-3);
        check_close("bn bwd diff_gamma vs FD", getva(&bout[1]), fg, 3, 3e-3);
        check_close("bn bwd diff_beta vs FD", getva(&bout[2]), fb, 3, 3e-3);

        /* One output: statistics treated as constants, gamma ignored: ds = dd * inv. */
        pt_tview ds1 = mk(dnnl_f32, 4, x.lt.dims, NULL, 0);
        CHECK_EQ_INT(RUN(pt_decode_batch_norm_bwd, bop1, bin, 5, &ds1, 1), dnnl_success);
        float *var = getva(&out[4]), exp[24];
        int cdim = nxc ? 3 : 1;
        int64_t idx[4];
        for (int i = 0; i < 24; ++i) {
            pt_unravel(i, 4, x.lt.dims, idx);
            exp[i] = ddv[i] / sqrtf(var[idx[cdim]] + 1e-3f);
        }
        check_tv("bn bwd 1 output", &ds1, exp, 1e-6);
    }
}

/* ======================================================================== */
/* Threading: results with several threads equal the single-thread ones.      */
/* ======================================================================== */

static void same_with_threads(const char *what, pt_ref_decoder fn, pt_op *op, const pt_tview *in, size_t nin,
                              const pt_tview *o1, const pt_tview *o4, size_t nout) {
    pt_exec_ctx c1 = {.fpmath = dnnl_fpmath_mode_strict, .apply_to_int = 0, .nthreads = 1}, c4 = {.fpmath = dnnl_fpmath_mode_strict, .apply_to_int = 0, .nthreads = 4};
    CHECK_EQ_INT(pt_ref_run_with(fn, op, in, nin, o1, nout, &c1), dnnl_success);
    CHECK_EQ_INT(pt_ref_run_with(fn, op, in, nin, o4, nout, &c4), dnnl_success);
    for (size_t i = 0; i < nout; ++i) check_close(what, getva(&o4[i]), getva(&o1[i]), nel(&o1[i]), 0);
}

static void test_threads(void) {
    {
        pt_op *op = mkop(dnnl_graph_op_matmul);
        pt_tview in[2] = {MK(dnnl_f32, 4, 40, 50), MK(dnnl_f32, 50, 60)};
        fill_rand(&in[0], 91), fill_rand(&in[1], 92);
        pt_tview o1 = MK(dnnl_f32, 4, 40, 60), o4 = MK(dnnl_f32, 4, 40, 60);
        same_with_threads("threads matmul", pt_decode_matmul, op, in, 2, &o1, &o4, 1);
    }
    {
        dnnl_graph_op_kind_t kinds[3] = {dnnl_graph_op_convolution, dnnl_graph_op_convolution_backward_data,
                                         dnnl_graph_op_convolution_backward_weights};
        pt_ref_decoder fns[3] = {pt_decode_conv, pt_decode_conv_bwd_data, pt_decode_conv_bwd_weights};
        pt_tview x = MK(dnnl_f32, 2, 20, 20, 8), w = MK(dnnl_f32, 3, 3, 4, 8), y = MK(dnnl_f32, 2, 20, 20, 8);
        fill_rand(&x, 93), fill_rand(&w, 94), fill_rand(&y, 95);
        pt_tview ins[3][2] = {{x, w}, {y, w}, {x, y}};
        const pt_tview *shapes[3] = {&y, &x, &w};
        for (int i = 0; i < 3; ++i) {
            pt_op *op = conv_op(kinds[i], NULL, NULL);
            conv_geom2(op, 1, 1, 1, 1, 1, 1, 1, 1);
            set_i(op, dnnl_graph_op_attr_groups, 2);
            pt_tview o1 = mk(dnnl_f32, 4, shapes[i]->lt.dims, NULL, 0), o4 = mk(dnnl_f32, 4, shapes[i]->lt.dims, NULL, 0);
            same_with_threads("threads conv", fns[i], op, ins[i], 2, &o1, &o4, 1);
        }
    }
    {
        pt_tview x = MK(dnnl_f32, 2, 8, 32, 32), dy = MK(dnnl_f32, 2, 8, 16, 16);
        fill_rand(&x, 96), fill_rand(&dy, 97);
        pt_op *ap = pool_op(dnnl_graph_op_avg_pool_backward, "NCX"), *mp = pool_op(dnnl_graph_op_max_pool_backward, "NCX");
        pt_op *ops[2] = {ap, mp};
        for (int i = 0; i < 2; ++i) {
            SETL(ops[i], dnnl_graph_op_attr_kernel, 3, 3);
            SETL(ops[i], dnnl_graph_op_attr_strides, 2, 2);
            SETL(ops[i], dnnl_graph_op_attr_pads_begin, 1, 1);
            SETL(ops[i], dnnl_graph_op_attr_pads_end, 0, 0);
            pt_op_set_bool(ops[i], dnnl_graph_op_attr_exclude_pad, true);
        }
        pt_tview o1 = MK(dnnl_f32, 2, 8, 32, 32), o4 = MK(dnnl_f32, 2, 8, 32, 32);
        same_with_threads("threads avgpool bwd", pt_decode_avg_pool_bwd, ap, &dy, 1, &o1, &o4, 1);
        pt_tview in[2] = {x, dy};
        same_with_threads("threads maxpool bwd", pt_decode_max_pool_bwd, mp, in, 2, &o1, &o4, 1);
        pt_op *ib = interp_op(dnnl_graph_op_interpolate_backward, "bilinear", NULL, "NCX");
        pt_tview dz = MK(dnnl_f32, 2, 8, 40, 40);
        fill_rand(&dz, 98);
        pt_tview iin[2] = {dy, dz};
        pt_tview i1 = MK(dnnl_f32, 2, 8, 16, 16), i4 = MK(dnnl_f32, 2, 8, 16, 16);
        same_with_threads("threads interp bwd", pt_decode_interpolate_bwd, ib, iin, 2, &i1, &i4, 1);
    }
    {
        pt_op *ln = mkop(dnnl_graph_op_layer_norm);
        pt_op_set_bool(ln, dnnl_graph_op_attr_use_affine, false);
        pt_tview x = MK(dnnl_f32, 256, 200);
        fill_rand(&x, 99);
        pt_tview o1[3] = {MK(dnnl_f32, 256, 200), MK(dnnl_f32, 256), MK(dnnl_f32, 256)};
        pt_tview o4[3] = {MK(dnnl_f32, 256, 200), MK(dnnl_f32, 256), MK(dnnl_f32, 256)};
        same_with_threads("threads layernorm", pt_decode_layer_norm, ln, &x, 1, o1, o4, 3);
        pt_op *bn = mkop(dnnl_graph_op_batch_norm_backward);
        set_f(bn, dnnl_graph_op_attr_epsilon, 1e-5f);
        pt_tview bx = MK(dnnl_f32, 4, 16, 16, 16), bd = MK(dnnl_f32, 4, 16, 16, 16);
        pt_tview aux[3] = {MK(dnnl_f32, 16), MK(dnnl_f32, 16), MK(dnnl_f32, 16)};
        fill_rand(&bx, 100), fill_rand(&bd, 101), fill_rand(&aux[0], 102), fill_rand(&aux[2], 103);
        float ones[16];
        for (int i = 0; i < 16; ++i) ones[i] = 1.0f + i / 16.0f;
        setv(&aux[1], ones);
        pt_tview bin[5] = {bx, bd, aux[0], aux[1], aux[2]};
        pt_tview b1[3] = {MK(dnnl_f32, 4, 16, 16, 16), MK(dnnl_f32, 16), MK(dnnl_f32, 16)};
        pt_tview b4[3] = {MK(dnnl_f32, 4, 16, 16, 16), MK(dnnl_f32, 16), MK(dnnl_f32, 16)};
        same_with_threads("threads bn bwd", pt_decode_batch_norm_bwd, bn, bin, 5, b1, b4, 3);
    }
}

int main(void) {
    test_matmul_2d();
    test_matmul_batch();
    test_matmul_1d();
    test_matmul_lowp();
    test_matmul_fpmath();
    test_conv_fwd();
    test_conv_groups();
    test_conv_autopad();
    test_conv_3d();
    test_conv_fpmath();
    test_conv_bwd();
    test_conv_transpose();
    test_conv_transpose_bwd();
    test_conv_lowp();
    test_avg_pool();
    test_avg_pool_ceil();
    test_avg_pool_bwd();
    test_max_pool();
    test_max_pool_bwd();
    test_interp_fwd();
    test_interp_bwd();
    test_layer_norm();
    test_layer_norm_bwd();
    test_group_norm();
    test_rms_norm();
    test_batch_norm_inference();
    test_batch_norm_training();
    test_batch_norm_bwd();
    test_threads();
    free_ops();
    free_all();
    return pt_test_summary("int_ref_kernels2");
}
