/* Seed 004 option 2 through the public API: a constant MatMul weight given
 * with layout `any` gets the engine's packed layout (an opaque layout id)
 * from query_logical_tensor; a Reorder partition made with
 * partition_create_with_op packs a plain weight into it and back; a MatMul
 * given that opaque layout reads it; mismatching and unknown layout ids are
 * refused; where packing ahead does not pay (one row) the weight stays
 * plain; a variable weight may not be `any`.  The same for Convolution
 * weights, the gated MLP's three weights and the K / V inputs of the fused
 * SDPA. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "oneapi/dnnl/dnnl_graph.h"
#include "test_util.h"

typedef dnnl_graph_logical_tensor_t lt_t;

static dnnl_engine_t eng;
static dnnl_stream_t strm;

static lt_t lt2(size_t id, dnnl_data_type_t dt, int64_t a, int64_t b, dnnl_graph_layout_type_t lay,
                dnnl_graph_tensor_property_t prop) {
    lt_t t;
    dnnl_dims_t d = {a, b};
    CHECK(dnnl_graph_logical_tensor_init_with_dims(&t, id, dt, 2, d, lay, prop) == dnnl_success);
    return t;
}

static float rnd(uint32_t *s) {
    *s = *s * 1664525u + 1013904223u;
    return (float)((*s >> 8) & 0xffff) / 32768.f - 1.f;
}

static uint16_t to_bf16(float f) { /* truncation is enough for test data that is bf16 already */
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)(u >> 16);
}

static float from_bf16(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Compiles the single-op partition of `op` for the given ports. */
static dnnl_graph_compiled_partition_t compile_op(dnnl_graph_op_t op, size_t nin, const lt_t **ins, size_t nout,
                                                  const lt_t **outs, dnnl_status_t *status) {
    dnnl_graph_partition_t part = NULL;
    dnnl_graph_compiled_partition_t cp = NULL;
    dnnl_status_t st = dnnl_graph_partition_create_with_op(&part, op, dnnl_cpu);
    if (st == dnnl_success) st = dnnl_graph_compiled_partition_create(&cp, part);
    if (st == dnnl_success) st = dnnl_graph_partition_compile(part, cp, nin, ins, nout, outs, eng);
    if (part) dnnl_graph_partition_destroy(part);
    if (st != dnnl_success && cp) dnnl_graph_compiled_partition_destroy(cp), cp = NULL;
    *status = st;
    return cp;
}

static dnnl_graph_op_t matmul_op(size_t id, const lt_t *x, const lt_t *w, const lt_t *y, bool tb) {
    dnnl_graph_op_t op;
    CHECK(dnnl_graph_op_create(&op, id, dnnl_graph_op_matmul, "mm") == dnnl_success);
    CHECK(dnnl_graph_op_add_input(op, x) == dnnl_success);
    CHECK(dnnl_graph_op_add_input(op, w) == dnnl_success);
    CHECK(dnnl_graph_op_add_output(op, y) == dnnl_success);
    if (tb) {
        uint8_t one = 1;
        CHECK(dnnl_graph_op_set_attr_bool(op, dnnl_graph_op_attr_transpose_b, &one, 1) == dnnl_success);
    }
    return op;
}

static dnnl_graph_op_t reorder_op(size_t id, const lt_t *in, const lt_t *out) {
    dnnl_graph_op_t op;
    CHECK(dnnl_graph_op_create(&op, id, dnnl_graph_op_reorder, "reorder") == dnnl_success);
    CHECK(dnnl_graph_op_add_input(op, in) == dnnl_success);
    CHECK(dnnl_graph_op_add_output(op, out) == dnnl_success);
    return op;
}

static void run(dnnl_graph_compiled_partition_t cp, size_t nin, const lt_t *const *ins, void *const *in_data,
                size_t nout, const lt_t *const *outs, void *const *out_data) {
    dnnl_graph_tensor_t ti[8], to[2]; /* inputs: up to the SDPA's five */
    CHECK(nin <= 8 && nout <= 2);
    if (nin > 8 || nout > 2) return;
    for (size_t i = 0; i < nin; ++i) CHECK(dnnl_graph_tensor_create(&ti[i], ins[i], eng, in_data[i]) == dnnl_success);
    for (size_t i = 0; i < nout; ++i) CHECK(dnnl_graph_tensor_create(&to[i], outs[i], eng, out_data[i]) == dnnl_success);
    CHECK(dnnl_graph_compiled_partition_execute(cp, strm, nin, (const_dnnl_graph_tensor_t *)ti, nout,
                                                (const_dnnl_graph_tensor_t *)to) == dnnl_success);
    CHECK(dnnl_stream_wait(strm) == dnnl_success);
    for (size_t i = 0; i < nin; ++i) dnnl_graph_tensor_destroy(ti[i]);
    for (size_t i = 0; i < nout; ++i) dnnl_graph_tensor_destroy(to[i]);
}

/* One scenario: x [M, K] f32 · w (dt wdt; [K, N], or [N, K] with tb). */
static void scenario(int64_t M, int64_t K, int64_t N, bool tb, dnnl_data_type_t wdt, dnnl_fpmath_mode_t mode) {
    printf("  M %lld K %lld N %lld%s w %s mode %d\n", (long long)M, (long long)K, (long long)N, tb ? " transposed" : "",
           wdt == dnnl_bf16 ? "bf16" : "f32", (int)mode);
    const dnnl_data_type_t xdt = wdt;
    const int64_t wr = tb ? N : K, wc = tb ? K : N;
    lt_t x = lt2(1, xdt, M, K, dnnl_graph_layout_type_strided, dnnl_graph_tensor_property_variable);
    lt_t w_any = lt2(2, wdt, wr, wc, dnnl_graph_layout_type_any, dnnl_graph_tensor_property_constant);
    lt_t y = lt2(3, dnnl_f32, M, N, dnnl_graph_layout_type_strided, dnnl_graph_tensor_property_variable);
    lt_t w_user = lt2(10, wdt, wr, wc, dnnl_graph_layout_type_strided, dnnl_graph_tensor_property_constant);

    /* The MatMul, compiled with the weight as `any`. */
    dnnl_graph_op_t mm = matmul_op(1, &x, &w_any, &y, tb);
    dnnl_graph_partition_t part;
    CHECK(dnnl_graph_partition_create_with_op(&part, mm, dnnl_cpu) == dnnl_success);
    CHECK(dnnl_graph_partition_set_fpmath_mode(part, mode, 0) == dnnl_success);
    dnnl_graph_compiled_partition_t cp;
    CHECK(dnnl_graph_compiled_partition_create(&cp, part) == dnnl_success);
    const lt_t *ins[] = {&x, &w_any}, *outs[] = {&y};
    CHECK(dnnl_graph_partition_compile(part, cp, 2, ins, 1, outs, eng) == dnnl_success);
    dnnl_graph_partition_destroy(part);
    lt_t wq;
    CHECK(dnnl_graph_compiled_partition_query_logical_tensor(cp, 2, &wq) == dnnl_success);
    CHECK_EQ_INT(wq.layout_type, dnnl_graph_layout_type_opaque);
    CHECK(wq.layout.layout_id != 0);
    CHECK_EQ_INT(wq.dims[0], wr);
    uint8_t equal = 1;
    CHECK(dnnl_graph_logical_tensor_is_equal(&w_user, &wq, &equal) == dnnl_success);
    CHECK(!equal);
    size_t packed_bytes = 0;
    CHECK(dnnl_graph_logical_tensor_get_mem_size(&wq, &packed_bytes) == dnnl_success);
    const size_t panel_bytes = wdt == dnnl_bf16 || mode == dnnl_fpmath_mode_bf16 ? 2 : 4;
    CHECK(packed_bytes >= (size_t)(K * N) * panel_bytes && packed_bytes < SIZE_MAX);

    /* Data. */
    uint32_t seed = 7;
    const size_t eb = wdt == dnnl_bf16 ? 2 : 4;
    float *xf = malloc(sizeof(float) * (size_t)(M * K)), *wf = malloc(sizeof(float) * (size_t)(K * N));
    void *xb = malloc(eb * (size_t)(M * K)), *wb = malloc(eb * (size_t)(K * N)), *back = malloc(eb * (size_t)(K * N));
    void *packed = aligned_alloc(64, (packed_bytes + 63) / 64 * 64);
    float *yv = malloc(sizeof(float) * (size_t)(M * N)), *y2 = malloc(sizeof(float) * (size_t)(M * N));
    for (int64_t i = 0; i < M * K; ++i) {
        float v = rnd(&seed);
        if (eb == 2) ((uint16_t *)xb)[i] = to_bf16(v), xf[i] = from_bf16(((uint16_t *)xb)[i]);
        else ((float *)xb)[i] = xf[i] = v;
    }
    for (int64_t i = 0; i < K * N; ++i) { /* wf in the user's layout */
        float v = rnd(&seed);
        if (eb == 2) ((uint16_t *)wb)[i] = to_bf16(v), wf[i] = from_bf16(((uint16_t *)wb)[i]);
        else ((float *)wb)[i] = wf[i] = v;
    }

    /* Reorder plain -> packed (the output is the queried logical tensor). */
    dnnl_status_t st;
    dnnl_graph_op_t ro = reorder_op(2, &w_user, &wq);
    const lt_t *rin[] = {&w_user}, *rout[] = {&wq};
    dnnl_graph_compiled_partition_t cpr = compile_op(ro, 1, rin, 1, rout, &st);
    CHECK_EQ_INT(st, dnnl_success);
    if (cpr) {
        lt_t rq;
        CHECK(dnnl_graph_compiled_partition_query_logical_tensor(cpr, 2, &rq) == dnnl_success);
        CHECK(rq.layout_type == dnnl_graph_layout_type_opaque && rq.layout.layout_id == wq.layout.layout_id);
        run(cpr, 1, rin, (void *const[]){wb}, 1, rout, (void *const[]){packed});
    }

    /* The MatMul on the packed weight, against a double loop. */
    const lt_t *ein[] = {&x, &wq}, *eout[] = {&y};
    run(cp, 2, ein, (void *const[]){xb, packed}, 1, eout, (void *const[]){yv});
    const double rel = mode == dnnl_fpmath_mode_bf16 || wdt == dnnl_bf16 ? 1e-2 : 2e-5;
    int bad = 0;
    for (int64_t m = 0; m < M; ++m)
        for (int64_t n = 0; n < N; ++n) {
            double acc = 0, mag = 0;
            for (int64_t k = 0; k < K; ++k) {
                double wv = tb ? wf[n * K + k] : wf[k * N + n];
                acc += xf[m * K + k] * wv, mag += fabs(xf[m * K + k] * wv);
            }
            bad += fabs(acc - yv[m * N + n]) > rel * (mag + 1e-6);
        }
    CHECK_EQ_INT(bad, 0);

    /* A later partition given the opaque layout directly reads it too. */
    dnnl_graph_op_t mm2 = matmul_op(5, &x, &wq, &y, tb);
    dnnl_graph_compiled_partition_t cp2 = NULL;
    {
        dnnl_graph_partition_t p2;
        CHECK(dnnl_graph_partition_create_with_op(&p2, mm2, dnnl_cpu) == dnnl_success);
        CHECK(dnnl_graph_partition_set_fpmath_mode(p2, mode, 0) == dnnl_success);
        CHECK(dnnl_graph_compiled_partition_create(&cp2, p2) == dnnl_success);
        CHECK(dnnl_graph_partition_compile(p2, cp2, 2, ein, 1, eout, eng) == dnnl_success);
        dnnl_graph_partition_destroy(p2);
        run(cp2, 2, ein, (void *const[]){xb, packed}, 1, eout, (void *const[]){y2});
        CHECK(memcmp(yv, y2, sizeof(float) * (size_t)(M * N)) == 0);
        dnnl_graph_compiled_partition_destroy(cp2);
    }

    /* And back: packed -> plain gives the weight (bf16-rounded under the bf16 mode). */
    lt_t w_back = lt2(11, wdt, wr, wc, dnnl_graph_layout_type_strided, dnnl_graph_tensor_property_variable);
    dnnl_graph_op_t ub = reorder_op(3, &wq, &w_back);
    const lt_t *uin[] = {&wq}, *uout[] = {&w_back};
    dnnl_graph_compiled_partition_t cpu = compile_op(ub, 1, uin, 1, uout, &st);
    CHECK_EQ_INT(st, dnnl_success);
    if (cpu) {
        run(cpu, 1, uin, (void *const[]){packed}, 1, uout, (void *const[]){back});
        int diff = 0;
        for (int64_t i = 0; i < K * N; ++i) {
            float got = eb == 2 ? from_bf16(((uint16_t *)back)[i]) : ((float *)back)[i];
            float want = wf[i];
            /* Under the bf16 mode the panels hold f32 weights rounded to bf16. */
            diff += mode == dnnl_fpmath_mode_bf16 && eb == 4 ? fabsf(got - want) > 4e-3f * fabsf(want) : got != want;
        }
        CHECK_EQ_INT(diff, 0);
        dnnl_graph_compiled_partition_destroy(cpu);
    }

    /* A MatMul of another N given this layout is refused. */
    {
        lt_t y3 = lt2(3, dnnl_f32, M + 1, N + 1, dnnl_graph_layout_type_strided, dnnl_graph_tensor_property_variable);
        lt_t x3 = lt2(1, xdt, M + 1, K, dnnl_graph_layout_type_strided, dnnl_graph_tensor_property_variable);
        lt_t wbad = wq;
        /* Same layout id, other shape: the product does not match it. */
        wbad.dims[tb ? 0 : 1] = N + 1;
        dnnl_graph_op_t mm3 = matmul_op(6, &x3, &wbad, &y3, tb);
        const lt_t *bin[] = {&x3, &wbad}, *bout[] = {&y3};
        dnnl_graph_compiled_partition_t bad_cp = compile_op(mm3, 2, bin, 1, bout, &st);
        CHECK_EQ_INT(st, dnnl_invalid_arguments);
        CHECK(bad_cp == NULL);
        dnnl_graph_op_destroy(mm3);
    }
    dnnl_graph_op_destroy(ro);
    dnnl_graph_op_destroy(ub);
    dnnl_graph_op_destroy(mm);
    dnnl_graph_op_destroy(mm2);
    if (cpr) dnnl_graph_compiled_partition_destroy(cpr);
    dnnl_graph_compiled_partition_destroy(cp);
    free(xf), free(wf), free(xb), free(wb), free(back), free(packed), free(yv), free(y2);
}

/* Convolution weights: NCX/OIX with groups, or NXC/XIO. */
static dnnl_graph_op_t conv_op(size_t id, const lt_t *x, const lt_t *w, const lt_t *y, bool nxc, int64_t groups) {
    dnnl_graph_op_t op;
    CHECK(dnnl_graph_op_create(&op, id, dnnl_graph_op_convolution, "conv") == dnnl_success);
    const int64_t ones[2] = {1, 1}, pads[2] = {1, 1};
    CHECK(dnnl_graph_op_set_attr_s64(op, dnnl_graph_op_attr_strides, ones, 2) == dnnl_success);
    CHECK(dnnl_graph_op_set_attr_s64(op, dnnl_graph_op_attr_dilations, ones, 2) == dnnl_success);
    CHECK(dnnl_graph_op_set_attr_s64(op, dnnl_graph_op_attr_pads_begin, pads, 2) == dnnl_success);
    CHECK(dnnl_graph_op_set_attr_s64(op, dnnl_graph_op_attr_pads_end, pads, 2) == dnnl_success);
    CHECK(dnnl_graph_op_set_attr_s64(op, dnnl_graph_op_attr_groups, &groups, 1) == dnnl_success);
    CHECK(dnnl_graph_op_set_attr_str(op, dnnl_graph_op_attr_data_format, nxc ? "NXC" : "NCX", 3) == dnnl_success);
    CHECK(dnnl_graph_op_set_attr_str(op, dnnl_graph_op_attr_weights_format, nxc ? "XIO" : "OIX", 3) == dnnl_success);
    CHECK(dnnl_graph_op_add_input(op, x) == dnnl_success);
    CHECK(dnnl_graph_op_add_input(op, w) == dnnl_success);
    CHECK(dnnl_graph_op_add_output(op, y) == dnnl_success);
    return op;
}

static lt_t lt4(size_t id, const int64_t *d, dnnl_graph_layout_type_t lay, dnnl_graph_tensor_property_t prop) {
    lt_t t;
    CHECK(dnnl_graph_logical_tensor_init_with_dims(&t, id, dnnl_f32, 4, d, lay, prop) == dnnl_success);
    return t;
}

/* A Convolution whose constant weights are given as `any`: the packed
 * layout is reported, a Reorder packs the plain weights into it, the
 * result equals the same Convolution on plain weights bit for bit (same
 * kernel, same panels), and the weights unpack back exactly. */
static void conv_scenario(bool nxc, int64_t groups, int64_t IC, int64_t OC, int64_t H, int64_t W) {
    printf("  conv %s groups %lld IC %lld OC %lld %lldx%lld\n", nxc ? "NXC/XIO" : "NCX/OIX", (long long)groups,
           (long long)IC, (long long)OC, (long long)H, (long long)W);
    const int64_t xd_c[4] = {1, IC, H, W}, xd_l[4] = {1, H, W, IC};
    const int64_t wd_c[4] = {OC, IC / groups, 3, 3}, wd_l[4] = {3, 3, IC / groups, OC};
    const int64_t yd_c[4] = {1, OC, H, W}, yd_l[4] = {1, H, W, OC};
    lt_t x = lt4(1, nxc ? xd_l : xd_c, dnnl_graph_layout_type_strided, dnnl_graph_tensor_property_variable);
    lt_t w_any = lt4(2, nxc ? wd_l : wd_c, dnnl_graph_layout_type_any, dnnl_graph_tensor_property_constant);
    lt_t w_plain = lt4(2, nxc ? wd_l : wd_c, dnnl_graph_layout_type_strided, dnnl_graph_tensor_property_constant);
    lt_t w_user = lt4(10, nxc ? wd_l : wd_c, dnnl_graph_layout_type_strided, dnnl_graph_tensor_property_constant);
    lt_t w_back = lt4(11, nxc ? wd_l : wd_c, dnnl_graph_layout_type_strided, dnnl_graph_tensor_property_variable);
    lt_t y = lt4(3, nxc ? yd_l : yd_c, dnnl_graph_layout_type_strided, dnnl_graph_tensor_property_variable);
    const int64_t nx = IC * H * W, nw = OC * (IC / groups) * 9, ny = OC * H * W;
    float *xb = malloc(sizeof(float) * (size_t)nx), *wb = malloc(sizeof(float) * (size_t)nw);
    float *back = malloc(sizeof(float) * (size_t)nw), *y1 = malloc(sizeof(float) * (size_t)ny),
          *y2 = malloc(sizeof(float) * (size_t)ny);
    uint32_t seed = 11;
    for (int64_t i = 0; i < nx; ++i) xb[i] = rnd(&seed);
    for (int64_t i = 0; i < nw; ++i) wb[i] = rnd(&seed);
    dnnl_status_t st;
    dnnl_graph_op_t c1 = conv_op(1, &x, &w_any, &y, nxc, groups);
    const lt_t *ins[] = {&x, &w_any}, *outs[] = {&y};
    dnnl_graph_compiled_partition_t cp = compile_op(c1, 2, ins, 1, outs, &st);
    CHECK_EQ_INT(st, dnnl_success);
    lt_t wq;
    CHECK(cp && dnnl_graph_compiled_partition_query_logical_tensor(cp, 2, &wq) == dnnl_success);
    CHECK_EQ_INT(wq.layout_type, dnnl_graph_layout_type_opaque);
    size_t bytes = 0;
    CHECK(dnnl_graph_logical_tensor_get_mem_size(&wq, &bytes) == dnnl_success);
    void *packed = aligned_alloc(64, (bytes + 63) / 64 * 64);
    dnnl_graph_op_t ro = reorder_op(2, &w_user, &wq);
    const lt_t *rin[] = {&w_user}, *rout[] = {&wq};
    dnnl_graph_compiled_partition_t cpr = compile_op(ro, 1, rin, 1, rout, &st);
    CHECK_EQ_INT(st, dnnl_success);
    if (cp && cpr) {
        run(cpr, 1, rin, (void *const[]){wb}, 1, rout, (void *const[]){packed});
        const lt_t *ein[] = {&x, &wq};
        run(cp, 2, ein, (void *const[]){xb, packed}, 1, outs, (void *const[]){y1});
    }
    /* The same Convolution on plain weights. */
    dnnl_graph_op_t c2 = conv_op(5, &x, &w_plain, &y, nxc, groups);
    const lt_t *pin[] = {&x, &w_plain};
    dnnl_graph_compiled_partition_t cp2 = compile_op(c2, 2, pin, 1, outs, &st);
    CHECK_EQ_INT(st, dnnl_success);
    if (cp2) run(cp2, 2, pin, (void *const[]){xb, wb}, 1, outs, (void *const[]){y2});
    CHECK(memcmp(y1, y2, sizeof(float) * (size_t)ny) == 0);
    /* And back. */
    dnnl_graph_op_t ub = reorder_op(3, &wq, &w_back);
    const lt_t *uin[] = {&wq}, *uout[] = {&w_back};
    dnnl_graph_compiled_partition_t cpu = compile_op(ub, 1, uin, 1, uout, &st);
    CHECK_EQ_INT(st, dnnl_success);
    if (cpu) {
        run(cpu, 1, uin, (void *const[]){packed}, 1, uout, (void *const[]){back});
        CHECK(memcmp(back, wb, sizeof(float) * (size_t)nw) == 0);
        dnnl_graph_compiled_partition_destroy(cpu);
    }
    if (cp) dnnl_graph_compiled_partition_destroy(cp);
    if (cp2) dnnl_graph_compiled_partition_destroy(cp2);
    if (cpr) dnnl_graph_compiled_partition_destroy(cpr);
    dnnl_graph_op_destroy(c1), dnnl_graph_op_destroy(c2), dnnl_graph_op_destroy(ro), dnnl_graph_op_destroy(ub);
    free(xb), free(wb), free(back), free(y1), free(y2), free(packed);
}

/* A gated MLP (swish gate) whose three constant weights are given as `any`:
 * every weight reports a packed layout, Reorders pack them, and the result
 * equals the same graph on plain weights bit for bit. */
static dnnl_graph_op_t op2(size_t id, dnnl_graph_op_kind_t kind, const lt_t *a, const lt_t *b, const lt_t *y) {
    dnnl_graph_op_t op;
    CHECK(dnnl_graph_op_create(&op, id, kind, "op") == dnnl_success);
    CHECK(dnnl_graph_op_add_input(op, a) == dnnl_success);
    if (b) CHECK(dnnl_graph_op_add_input(op, b) == dnnl_success);
    CHECK(dnnl_graph_op_add_output(op, y) == dnnl_success);
    return op;
}

/* Builds the MLP with weights of layout `lay`, compiles its one partition;
 * *n_parts its partition count. */
static dnnl_graph_compiled_partition_t mlp_compile(int64_t M, int64_t K, int64_t N, int64_t O,
                                                   dnnl_graph_layout_type_t lay, lt_t *w, size_t *n_parts) {
    lt_t x = lt2(1, dnnl_f32, M, K, dnnl_graph_layout_type_strided, dnnl_graph_tensor_property_variable);
    w[0] = lt2(2, dnnl_f32, K, N, lay, dnnl_graph_tensor_property_constant);
    w[1] = lt2(3, dnnl_f32, K, N, lay, dnnl_graph_tensor_property_constant);
    w[2] = lt2(4, dnnl_f32, N, O, lay, dnnl_graph_tensor_property_constant);
    lt_t g = lt2(5, dnnl_f32, M, N, dnnl_graph_layout_type_strided, 0), sg = lt2(6, dnnl_f32, M, N, dnnl_graph_layout_type_strided, 0);
    lt_t sw = lt2(7, dnnl_f32, M, N, dnnl_graph_layout_type_strided, 0), u = lt2(8, dnnl_f32, M, N, dnnl_graph_layout_type_strided, 0);
    lt_t h = lt2(9, dnnl_f32, M, N, dnnl_graph_layout_type_strided, 0), y = lt2(10, dnnl_f32, M, O, dnnl_graph_layout_type_strided, 0);
    dnnl_graph_op_t ops[6] = {op2(1, dnnl_graph_op_matmul, &x, &w[0], &g), op2(2, dnnl_graph_op_sigmoid, &g, NULL, &sg),
                              op2(3, dnnl_graph_op_multiply, &g, &sg, &sw), op2(4, dnnl_graph_op_matmul, &x, &w[1], &u),
                              op2(5, dnnl_graph_op_multiply, &sw, &u, &h), op2(6, dnnl_graph_op_matmul, &h, &w[2], &y)};
    dnnl_graph_graph_t gr;
    CHECK(dnnl_graph_graph_create(&gr, dnnl_cpu) == dnnl_success);
    for (int i = 0; i < 6; ++i) CHECK(dnnl_graph_add_op(gr, ops[i]) == dnnl_success), dnnl_graph_op_destroy(ops[i]);
    CHECK(dnnl_graph_graph_finalize(gr) == dnnl_success);
    CHECK(dnnl_graph_graph_filter(gr, dnnl_graph_partition_policy_fusion) == dnnl_success);
    CHECK(dnnl_graph_graph_get_partition_num(gr, n_parts) == dnnl_success);
    dnnl_graph_compiled_partition_t cp = NULL;
    if (*n_parts == 1) {
        dnnl_graph_partition_t part;
        CHECK(dnnl_graph_graph_get_partitions(gr, 1, &part) == dnnl_success);
        CHECK(dnnl_graph_compiled_partition_create(&cp, part) == dnnl_success);
        const lt_t *ins[] = {&x, &w[0], &w[1], &w[2]}, *outs[] = {&y};
        CHECK(dnnl_graph_partition_compile(part, cp, 4, ins, 1, outs, eng) == dnnl_success);
        dnnl_graph_partition_destroy(part);
    }
    dnnl_graph_graph_destroy(gr);
    return cp;
}

static void mlp_scenario(int64_t M, int64_t K, int64_t N, int64_t O) {
    printf("  gated MLP M %lld K %lld N %lld O %lld\n", (long long)M, (long long)K, (long long)N, (long long)O);
    lt_t wa[3], wp[3];
    size_t np = 0, np2 = 0;
    dnnl_graph_compiled_partition_t cpa = mlp_compile(M, K, N, O, dnnl_graph_layout_type_any, wa, &np);
    dnnl_graph_compiled_partition_t cpp = mlp_compile(M, K, N, O, dnnl_graph_layout_type_strided, wp, &np2);
    CHECK_EQ_INT(np, 1);
    CHECK_EQ_INT(np2, 1);
    if (!cpa || !cpp) return;
    uint32_t seed = 5;
    float *x = malloc(sizeof(float) * (size_t)(M * K)), *w[3], *y1 = malloc(sizeof(float) * (size_t)(M * O)),
          *y2 = malloc(sizeof(float) * (size_t)(M * O));
    void *packed[3];
    const int64_t wn[3] = {K * N, K * N, N * O};
    for (int64_t i = 0; i < M * K; ++i) x[i] = rnd(&seed);
    lt_t xq = lt2(1, dnnl_f32, M, K, dnnl_graph_layout_type_strided, 0), yq = lt2(10, dnnl_f32, M, O, dnnl_graph_layout_type_strided, 0);
    lt_t q[3];
    for (int i = 0; i < 3; ++i) {
        w[i] = malloc(sizeof(float) * (size_t)wn[i]);
        for (int64_t e = 0; e < wn[i]; ++e) w[i][e] = rnd(&seed) * 0.25f;
        CHECK(dnnl_graph_compiled_partition_query_logical_tensor(cpa, (size_t)(2 + i), &q[i]) == dnnl_success);
        CHECK_EQ_INT(q[i].layout_type, dnnl_graph_layout_type_opaque);
        size_t bytes = 0;
        CHECK(dnnl_graph_logical_tensor_get_mem_size(&q[i], &bytes) == dnnl_success);
        packed[i] = aligned_alloc(64, (bytes + 63) / 64 * 64);
        lt_t user = wp[i];
        user.id = 20 + (size_t)i;
        dnnl_status_t st;
        dnnl_graph_op_t ro = reorder_op(10 + (size_t)i, &user, &q[i]);
        const lt_t *rin[] = {&user}, *rout[] = {&q[i]};
        dnnl_graph_compiled_partition_t cpr = compile_op(ro, 1, rin, 1, rout, &st);
        CHECK_EQ_INT(st, dnnl_success);
        if (cpr) run(cpr, 1, rin, (void *const[]){w[i]}, 1, rout, (void *const[]){packed[i]});
        if (cpr) dnnl_graph_compiled_partition_destroy(cpr);
        dnnl_graph_op_destroy(ro);
    }
    const lt_t *ina[] = {&xq, &q[0], &q[1], &q[2]}, *inp[] = {&xq, &wp[0], &wp[1], &wp[2]}, *outs[] = {&yq};
    run(cpa, 4, ina, (void *const[]){x, packed[0], packed[1], packed[2]}, 1, outs, (void *const[]){y1});
    run(cpp, 4, inp, (void *const[]){x, w[0], w[1], w[2]}, 1, outs, (void *const[]){y2});
    CHECK(memcmp(y1, y2, sizeof(float) * (size_t)(M * O)) == 0);
    for (int i = 0; i < 3; ++i) free(w[i]), free(packed[i]);
    free(x), free(y1), free(y2);
    dnnl_graph_compiled_partition_destroy(cpa);
    dnnl_graph_compiled_partition_destroy(cpp);
}

/* ---- SDPA: K and V packed ahead ---------------------------------------------- */

typedef struct {
    dnnl_data_type_t dt; /* Q, K, V, P, O */
    int64_t n, hkv, rep; /* rep > 1: 5-D GQA [n, hkv, rep, S, D] with K / V [n, hkv, 1, S, D] */
    int64_t sq, skv, d, dv;
    bool k_dxs;          /* K given as [.., D, S_kv] */
} sdpa_case;

static int sdpa_dims(const sdpa_case *c, bool kv, int64_t rows, int64_t cols, int64_t *dims) {
    int nd = 0;
    dims[nd++] = c->n, dims[nd++] = c->hkv;
    if (c->rep > 1) dims[nd++] = kv ? 1 : c->rep;
    dims[nd++] = rows, dims[nd++] = cols;
    return nd;
}

static lt_t sdpa_lt(size_t id, dnnl_data_type_t dt, int nd, const int64_t *dims, dnnl_graph_layout_type_t lay,
                    dnnl_graph_tensor_property_t prop) {
    lt_t t;
    CHECK(dnnl_graph_logical_tensor_init_with_dims(&t, id, dt, nd, dims, lay, prop) == dnnl_success);
    return t;
}

static int64_t lt_elems(const lt_t *t) {
    int64_t n = 1;
    for (int d = 0; d < t->ndims; ++d) n *= t->dims[d];
    return n;
}

typedef struct {
    lt_t q, k, v, scale, mask, o;
} sdpa_ports;

/* The ports of a case; K and V with layout `lay` and property `prop`. */
static sdpa_ports sdpa_ports_of(const sdpa_case *c, dnnl_graph_layout_type_t klay, dnnl_graph_layout_type_t vlay,
                                dnnl_graph_tensor_property_t kprop, dnnl_graph_tensor_property_t vprop) {
    sdpa_ports P;
    int64_t d[6];
    int nd = sdpa_dims(c, false, c->sq, c->d, d);
    P.q = sdpa_lt(1, c->dt, nd, d, dnnl_graph_layout_type_strided, dnnl_graph_tensor_property_variable);
    nd = c->k_dxs ? sdpa_dims(c, true, c->d, c->skv, d) : sdpa_dims(c, true, c->skv, c->d, d);
    P.k = sdpa_lt(2, c->dt, nd, d, klay, kprop);
    nd = sdpa_dims(c, true, c->skv, c->dv, d);
    P.v = sdpa_lt(3, c->dt, nd, d, vlay, vprop);
    int64_t one[1] = {1};
    P.scale = sdpa_lt(4, dnnl_f32, 1, one, dnnl_graph_layout_type_strided, dnnl_graph_tensor_property_variable);
    int64_t md[2] = {c->sq, c->skv};
    P.mask = sdpa_lt(5, dnnl_f32, 2, md, dnnl_graph_layout_type_strided, dnnl_graph_tensor_property_variable);
    nd = sdpa_dims(c, false, c->sq, c->dv, d);
    P.o = sdpa_lt(6, c->dt, nd, d, dnnl_graph_layout_type_strided, dnnl_graph_tensor_property_variable);
    return P;
}

/* Q·Kᵀ · scale + mask → SoftMax → ·V as one partition, compiled for the
 * given ports; NULL (and *st) when it does not compile. */
static dnnl_graph_compiled_partition_t sdpa_compile(const sdpa_case *c, const sdpa_ports *P, dnnl_status_t *st) {
    int64_t sd[6];
    const int nd = sdpa_dims(c, false, c->sq, c->skv, sd);
    lt_t s1 = sdpa_lt(7, dnnl_f32, nd, sd, dnnl_graph_layout_type_strided, 0);
    lt_t s2 = sdpa_lt(8, dnnl_f32, nd, sd, dnnl_graph_layout_type_strided, 0);
    lt_t s3 = sdpa_lt(9, dnnl_f32, nd, sd, dnnl_graph_layout_type_strided, 0);
    lt_t pr = sdpa_lt(10, c->dt, nd, sd, dnnl_graph_layout_type_strided, 0);
    dnnl_graph_op_t ops[5];
    ops[0] = matmul_op(1, &P->q, &P->k, &s1, !c->k_dxs);
    ops[1] = op2(2, dnnl_graph_op_multiply, &s1, &P->scale, &s2);
    ops[2] = op2(3, dnnl_graph_op_add, &s2, &P->mask, &s3);
    ops[3] = op2(4, dnnl_graph_op_softmax, &s3, NULL, &pr);
    int64_t axis = -1;
    CHECK(dnnl_graph_op_set_attr_s64(ops[3], dnnl_graph_op_attr_axis, &axis, 1) == dnnl_success);
    ops[4] = op2(5, dnnl_graph_op_matmul, &pr, &P->v, &P->o);
    dnnl_graph_graph_t gr;
    CHECK(dnnl_graph_graph_create(&gr, dnnl_cpu) == dnnl_success);
    for (int i = 0; i < 5; ++i) CHECK(dnnl_graph_add_op(gr, ops[i]) == dnnl_success), dnnl_graph_op_destroy(ops[i]);
    CHECK(dnnl_graph_graph_finalize(gr) == dnnl_success);
    CHECK(dnnl_graph_graph_filter(gr, dnnl_graph_partition_policy_fusion) == dnnl_success);
    size_t np = 0;
    CHECK(dnnl_graph_graph_get_partition_num(gr, &np) == dnnl_success);
    CHECK_EQ_INT(np, 1);
    dnnl_graph_compiled_partition_t cp = NULL;
    *st = dnnl_runtime_error;
    if (np == 1) {
        dnnl_graph_partition_t part;
        CHECK(dnnl_graph_graph_get_partitions(gr, 1, &part) == dnnl_success);
        CHECK(dnnl_graph_compiled_partition_create(&cp, part) == dnnl_success);
        const lt_t *ins[] = {&P->q, &P->k, &P->v, &P->scale, &P->mask}, *outs[] = {&P->o};
        *st = dnnl_graph_partition_compile(part, cp, 5, ins, 1, outs, eng);
        dnnl_graph_partition_destroy(part);
        if (*st != dnnl_success) dnnl_graph_compiled_partition_destroy(cp), cp = NULL;
    }
    dnnl_graph_graph_destroy(gr);
    return cp;
}

static void *fill_operand(const lt_t *t, uint32_t *seed) {
    const int64_t n = lt_elems(t);
    const bool half = t->data_type == dnnl_bf16;
    void *b = malloc((half ? 2 : 4) * (size_t)n);
    for (int64_t i = 0; i < n; ++i) {
        const float v = rnd(seed);
        if (half) ((uint16_t *)b)[i] = to_bf16(v);
        else ((float *)b)[i] = v;
    }
    return b;
}

/* Packs a plain K / V into the layout `q` reports (Reorder), and checks
 * that unpacking gives it back bit for bit. */
static void *sdpa_pack(const lt_t *plain_any, const lt_t *q, const void *plain) {
    size_t bytes = 0;
    CHECK(dnnl_graph_logical_tensor_get_mem_size(q, &bytes) == dnnl_success);
    void *packed = aligned_alloc(64, (bytes + 63) / 64 * 64);
    lt_t user = *plain_any;
    user.id = 20;
    user.layout_type = dnnl_graph_layout_type_strided;
    CHECK(dnnl_graph_logical_tensor_init_with_dims(&user, 20, q->data_type, q->ndims, q->dims,
                                                   dnnl_graph_layout_type_strided,
                                                   dnnl_graph_tensor_property_constant) == dnnl_success);
    dnnl_status_t st;
    dnnl_graph_op_t ro = reorder_op(30, &user, q);
    const lt_t *rin[] = {&user}, *rout[] = {q};
    dnnl_graph_compiled_partition_t cpr = compile_op(ro, 1, rin, 1, rout, &st);
    CHECK_EQ_INT(st, dnnl_success);
    if (cpr) run(cpr, 1, rin, (void *const[]){(void *)plain}, 1, rout, (void *const[]){packed});
    const size_t eb = q->data_type == dnnl_bf16 ? 2 : 4, pbytes = eb * (size_t)lt_elems(q);
    lt_t back = user;
    back.id = 21;
    back.property = dnnl_graph_tensor_property_variable;
    dnnl_graph_op_t ub = reorder_op(31, q, &back);
    const lt_t *uin[] = {q}, *uout[] = {&back};
    dnnl_graph_compiled_partition_t cpu = compile_op(ub, 1, uin, 1, uout, &st);
    CHECK_EQ_INT(st, dnnl_success);
    void *round_trip = calloc(1, pbytes);
    if (cpu) run(cpu, 1, uin, (void *const[]){packed}, 1, uout, (void *const[]){round_trip});
    CHECK(memcmp(round_trip, plain, pbytes) == 0);
    free(round_trip);
    if (cpr) dnnl_graph_compiled_partition_destroy(cpr);
    if (cpu) dnnl_graph_compiled_partition_destroy(cpu);
    dnnl_graph_op_destroy(ro), dnnl_graph_op_destroy(ub);
    return packed;
}

/* Outputs of the packed-K / V run against the plain run: bf16 bit for bit;
 * f32 within the SDPA tolerance (test_sdpa_tol.h), since plain f32 K / V
 * take the transposed path (K·Qᵀ tiles, P as a B panel) and panels packed
 * ahead the row path: the same sums in another order. */
static bool sdpa_outputs_match(const sdpa_case *c, const void *plain, const void *other, size_t bytes) {
    if (c->dt != dnnl_f32) return memcmp(plain, other, bytes) == 0;
    const float *a = plain, *b = other;
    for (size_t e = 0; e < bytes / sizeof(float); ++e) {
        if (isnan(a[e]) || isnan(b[e])) {
            if (isnan(a[e]) != isnan(b[e])) return false;
            continue;
        }
        if (fabs((double)a[e] - (double)b[e]) > 1e-5 * (1.0 + fabs((double)a[e]))) return false;
    }
    return true;
}

/* Whether the library runs its AVX2 (or better) rows: the CPU has them and
 * PARTITA_ISA does not cap them away. */
static bool avx2_rows(void) {
    const char *cap = getenv("PARTITA_ISA");
    if (cap && strcmp(cap, "generic") == 0) return false;
#if defined(__x86_64__) || defined(__i386__)
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
    return false;
#endif
}

/* K and V given as constant `any`: both report an SDPA packed layout,
 * Reorders pack them (and unpack them back exactly), and the output equals
 * the plain-K/V partition's (sdpa_outputs_match), also for a later compile given the
 * packed layouts themselves.  `kv_packed` false: the case is one the
 * kernel reads K and V as stored (few query rows, or f32 on the transposed
 * path), and `any` resolves to the plain dense layout. */
static void sdpa_scenario(const sdpa_case *c, bool kv_packed) {
    printf("  sdpa %s n %lld hkv %lld rep %lld S_q %lld S_kv %lld D %lld D_v %lld%s\n",
           c->dt == dnnl_bf16 ? "bf16" : "f32", (long long)c->n, (long long)c->hkv, (long long)c->rep,
           (long long)c->sq, (long long)c->skv, (long long)c->d, (long long)c->dv, c->k_dxs ? " K as DxS" : "");
    const dnnl_graph_tensor_property_t cst = dnnl_graph_tensor_property_constant;
    sdpa_ports A = sdpa_ports_of(c, dnnl_graph_layout_type_any, dnnl_graph_layout_type_any, cst, cst);
    sdpa_ports S = sdpa_ports_of(c, dnnl_graph_layout_type_strided, dnnl_graph_layout_type_strided, cst, cst);
    dnnl_status_t st;
    dnnl_graph_compiled_partition_t cpa = sdpa_compile(c, &A, &st), cps = sdpa_compile(c, &S, &st);
    CHECK(cpa && cps);
    if (!cpa || !cps) return;
    uint32_t seed = 3;
    void *q = fill_operand(&S.q, &seed), *k = fill_operand(&S.k, &seed), *v = fill_operand(&S.v, &seed);
    float scale = 0.3f, *mask = malloc(sizeof(float) * (size_t)(c->sq * c->skv));
    for (int64_t i = 0; i < c->sq * c->skv; ++i) mask[i] = rnd(&seed) < -0.8f ? -INFINITY : rnd(&seed);
    for (int64_t j = 0; j < c->skv; ++j) mask[(c->sq / 2) * c->skv + j] = -INFINITY; /* a fully masked row */
    const size_t obytes = (c->dt == dnnl_bf16 ? 2 : 4) * (size_t)lt_elems(&S.o);
    void *o_plain = malloc(obytes), *o_packed = malloc(obytes), *o_later = malloc(obytes);
    const lt_t *sin[] = {&S.q, &S.k, &S.v, &S.scale, &S.mask}, *outs[] = {&S.o};
    run(cps, 5, sin, (void *const[]){q, k, v, &scale, mask}, 1, outs, (void *const[]){o_plain});
    lt_t kq, vq;
    CHECK(dnnl_graph_compiled_partition_query_logical_tensor(cpa, 2, &kq) == dnnl_success);
    CHECK(dnnl_graph_compiled_partition_query_logical_tensor(cpa, 3, &vq) == dnnl_success);
    /* From AVX2 on, f32 products run the transposed path, which reads K / V
     * as stored (its own A panels), so `any` resolves to plain strides. */
    kv_packed = kv_packed && !(c->dt == dnnl_f32 && avx2_rows());
    const dnnl_graph_layout_type_t want = kv_packed ? dnnl_graph_layout_type_opaque : dnnl_graph_layout_type_strided;
    CHECK_EQ_INT(kq.layout_type, want);
    CHECK_EQ_INT(vq.layout_type, want);
    if (kv_packed && kq.layout_type == want && vq.layout_type == want) {
        CHECK(kq.layout.layout_id != 0 && vq.layout.layout_id != 0 && kq.layout.layout_id != vq.layout.layout_id);
        void *kp = sdpa_pack(&A.k, &kq, k), *vp = sdpa_pack(&A.v, &vq, v);
        const lt_t *ain[] = {&S.q, &kq, &vq, &S.scale, &S.mask};
        run(cpa, 5, ain, (void *const[]){q, kp, vp, &scale, mask}, 1, outs, (void *const[]){o_packed});
        CHECK(sdpa_outputs_match(c, o_plain, o_packed, obytes));
        /* A later compile given the packed layouts reads them as well. */
        sdpa_ports L = S;
        L.k = kq, L.v = vq;
        dnnl_graph_compiled_partition_t cpl = sdpa_compile(c, &L, &st);
        CHECK_EQ_INT(st, dnnl_success);
        if (cpl) {
            lt_t kl;
            CHECK(dnnl_graph_compiled_partition_query_logical_tensor(cpl, 2, &kl) == dnnl_success);
            CHECK(kl.layout_type == dnnl_graph_layout_type_opaque && kl.layout.layout_id == kq.layout.layout_id);
            run(cpl, 5, ain, (void *const[]){q, kp, vp, &scale, mask}, 1, outs, (void *const[]){o_later});
            CHECK(sdpa_outputs_match(c, o_plain, o_later, obytes));
            dnnl_graph_compiled_partition_destroy(cpl);
        }
        /* V's layout given for K (another shape or product) is refused. */
        L.k = vq, L.k.id = 2;
        L.v = vq;
        dnnl_graph_compiled_partition_t bad = sdpa_compile(c, &L, &st);
        CHECK(bad == NULL && st != dnnl_success);
        /* A variable K stays plain beside a packed constant V. */
        sdpa_ports M = sdpa_ports_of(c, dnnl_graph_layout_type_strided, dnnl_graph_layout_type_any,
                                     dnnl_graph_tensor_property_variable, cst);
        dnnl_graph_compiled_partition_t cpm = sdpa_compile(c, &M, &st);
        CHECK_EQ_INT(st, dnnl_success);
        if (cpm) {
            lt_t km, vm;
            CHECK(dnnl_graph_compiled_partition_query_logical_tensor(cpm, 2, &km) == dnnl_success);
            CHECK(dnnl_graph_compiled_partition_query_logical_tensor(cpm, 3, &vm) == dnnl_success);
            uint8_t eq = 0;
            CHECK(dnnl_graph_logical_tensor_is_equal(&km, &M.k, &eq) == dnnl_success && eq);
            CHECK(vm.layout_type == dnnl_graph_layout_type_opaque && vm.layout.layout_id == vq.layout.layout_id);
            const lt_t *min[] = {&S.q, &S.k, &vm, &S.scale, &S.mask};
            memset(o_later, 0, obytes);
            run(cpm, 5, min, (void *const[]){q, k, vp, &scale, mask}, 1, outs, (void *const[]){o_later});
            CHECK(sdpa_outputs_match(c, o_plain, o_later, obytes));
            dnnl_graph_compiled_partition_destroy(cpm);
        }
        free(kp), free(vp);
    } else if (!kv_packed) {
        uint8_t eq = 0;
        CHECK(dnnl_graph_logical_tensor_is_equal(&kq, &S.k, &eq) == dnnl_success && eq);
        const lt_t *ain[] = {&S.q, &kq, &vq, &S.scale, &S.mask};
        run(cpa, 5, ain, (void *const[]){q, k, v, &scale, mask}, 1, outs, (void *const[]){o_packed});
        CHECK(memcmp(o_plain, o_packed, obytes) == 0);
    }
    /* A variable K may not be `any`. */
    sdpa_ports V = sdpa_ports_of(c, dnnl_graph_layout_type_any, dnnl_graph_layout_type_strided,
                                 dnnl_graph_tensor_property_variable, cst);
    dnnl_graph_compiled_partition_t cpv = sdpa_compile(c, &V, &st);
    CHECK(cpv == NULL);
    CHECK_EQ_INT(st, dnnl_invalid_arguments);
    dnnl_graph_compiled_partition_destroy(cpa);
    dnnl_graph_compiled_partition_destroy(cps);
    free(q), free(k), free(v), free(mask), free(o_plain), free(o_packed), free(o_later);
}

int main(void) {
    CHECK(dnnl_engine_create(&eng, dnnl_cpu, 0) == dnnl_success);
    CHECK(dnnl_stream_create(&strm, eng, dnnl_stream_default_flags) == dnnl_success);
    scenario(64, 96, 80, false, dnnl_f32, dnnl_fpmath_mode_strict);
    scenario(37, 65, 33, true, dnnl_f32, dnnl_fpmath_mode_strict);
    scenario(48, 130, 70, false, dnnl_bf16, dnnl_fpmath_mode_strict);
    scenario(40, 64, 64, true, dnnl_f32, dnnl_fpmath_mode_bf16);
    conv_scenario(false, 2, 6, 10, 9, 11);
    conv_scenario(true, 1, 16, 70, 7, 5);
    mlp_scenario(48, 64, 96, 40);
    mlp_scenario(33, 70, 130, 17);
    /* Several key blocks with a tail; several query blocks of a head; an
     * odd tail (k group of the bf16 panels); GQA; K given transposed. */
    sdpa_scenario(&(sdpa_case){dnnl_f32, 2, 3, 1, 37, 200, 24, 40, false}, true);
    sdpa_scenario(&(sdpa_case){dnnl_f32, 1, 2, 1, 250, 131, 64, 64, false}, true);
    sdpa_scenario(&(sdpa_case){dnnl_bf16, 1, 2, 1, 45, 131, 32, 48, false}, true);
    sdpa_scenario(&(sdpa_case){dnnl_f32, 1, 2, 3, 20, 150, 32, 16, false}, true);
    sdpa_scenario(&(sdpa_case){dnnl_bf16, 2, 1, 4, 9, 77, 16, 16, false}, true);
    sdpa_scenario(&(sdpa_case){dnnl_f32, 1, 2, 1, 33, 129, 16, 16, true}, true);
    sdpa_scenario(&(sdpa_case){dnnl_f32, 1, 1, 1, 1, 1, 1, 1, false}, false);
    /* Decode (few query rows): K and V are read as stored. */
    sdpa_scenario(&(sdpa_case){dnnl_f32, 1, 4, 1, 2, 300, 64, 64, false}, false);

    /* One row: the small-M path streams the plain weight faster, so `any`
     * resolves to plain strides and the user needs no reorder. */
    {
        lt_t x = lt2(1, dnnl_f32, 1, 256, dnnl_graph_layout_type_strided, dnnl_graph_tensor_property_variable);
        lt_t w = lt2(2, dnnl_f32, 256, 128, dnnl_graph_layout_type_any, dnnl_graph_tensor_property_constant);
        lt_t y = lt2(3, dnnl_f32, 1, 128, dnnl_graph_layout_type_strided, dnnl_graph_tensor_property_variable);
        lt_t wu = lt2(2, dnnl_f32, 256, 128, dnnl_graph_layout_type_strided, dnnl_graph_tensor_property_constant);
        dnnl_graph_op_t mm = matmul_op(1, &x, &w, &y, false);
        const lt_t *ins[] = {&x, &w}, *outs[] = {&y};
        dnnl_status_t st;
        dnnl_graph_compiled_partition_t cp = compile_op(mm, 2, ins, 1, outs, &st);
        CHECK_EQ_INT(st, dnnl_success);
        lt_t q;
        if (cp) {
            CHECK(dnnl_graph_compiled_partition_query_logical_tensor(cp, 2, &q) == dnnl_success);
            /* The small-M path exists on AVX-512 only; below it, packing pays
             * even for one row and the opaque layout is offered. */
            printf("  one row: weight layout %s\n", q.layout_type == dnnl_graph_layout_type_strided ? "plain" : "packed");
            uint8_t eq = 0;
            CHECK(dnnl_graph_logical_tensor_is_equal(&wu, &q, &eq) == dnnl_success);
            CHECK(q.layout_type == dnnl_graph_layout_type_strided ? eq : !eq && q.layout.layout_id != 0);
            dnnl_graph_compiled_partition_destroy(cp);
        }
        /* A variable weight may not be `any`. */
        lt_t wv = lt2(2, dnnl_f32, 256, 128, dnnl_graph_layout_type_any, dnnl_graph_tensor_property_variable);
        dnnl_graph_op_t mmv = matmul_op(1, &x, &wv, &y, false);
        const lt_t *vin[] = {&x, &wv};
        cp = compile_op(mmv, 2, vin, 1, outs, &st);
        CHECK_EQ_INT(st, dnnl_invalid_arguments);
        /* An opaque id nobody registered is refused by get_mem_size and compile. */
        lt_t wo = wu;
        wo.layout_type = dnnl_graph_layout_type_opaque;
        wo.layout.layout_id = 987654;
        size_t sz = 0;
        CHECK_EQ_INT(dnnl_graph_logical_tensor_get_mem_size(&wo, &sz), dnnl_invalid_arguments);
        dnnl_graph_op_t mmo = matmul_op(1, &x, &wo, &y, false);
        const lt_t *oin[] = {&x, &wo};
        cp = compile_op(mmo, 2, oin, 1, outs, &st);
        CHECK_EQ_INT(st, dnnl_invalid_arguments);
        dnnl_graph_op_destroy(mm), dnnl_graph_op_destroy(mmv), dnnl_graph_op_destroy(mmo);
    }
    dnnl_stream_destroy(strm);
    dnnl_engine_destroy(eng);
    return pt_test_summary("test_packed_weights");
}
