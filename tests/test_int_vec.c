/* The vector-kernel table (kernels/vec/vec.h): every row this CPU can run
 * against double-precision loops, over lengths 0..70 (every tail), the whole
 * f32 exp range and its edges (underflow to 0, overflow to inf, -inf, NaN). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir/dtype.h"
#include "kernels/vec/vec.h"
#include "kernels/vec/vec_rows.h"
#include "test_util.h"

static uint64_t g_rng = 0x2545f4914f6cdd1dull;
static float rnd_in(float lo, float hi) {
    g_rng = g_rng * 6364136223846793005ull + 1442695040888963407ull;
    return lo + (hi - lo) * (float)((g_rng >> 40) & 0xffffff) / (float)0x1000000;
}

/* Distance in units in the last place between two finite floats of one sign. */
static int64_t ulps(float a, float b) {
    int32_t ia, ib;
    memcpy(&ia, &a, 4);
    memcpy(&ib, &b, 4);
    int64_t d = (int64_t)ia - (int64_t)ib;
    return d < 0 ? -d : d;
}

static uint32_t f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static void check_row(const pt_vec_ops *v) {
    enum { N = 4096 };
    static float x[N], y[N];
    /* The Exp op over its whole range, gradual underflow included: 3 ulp
     * against the double-precision value, subnormals within one step. */
    static float t[N];
    int64_t worst = 0;
    for (int i = 0; i < N; ++i) x[i] = t[i] = rnd_in(-103.f, 88.7f);
    const pt_eltwise_params exp_op = {.kind = dnnl_graph_op_exp};
    CHECK(v->eltwise(&exp_op, y, x, N));
    for (int i = 0; i < N; ++i) {
        const float want = (float)exp((double)x[i]);
        const int64_t u = want < 1.17549435e-38f ? (fabsf(y[i] - want) <= 1.5e-45f ? 0 : 99) : ulps(y[i], want);
        if (u > worst) worst = u;
    }
    printf("  %s: exp worst %lld ulp over [-103, 88.7]\n", v->name, (long long)worst);
    CHECK(worst <= 3);
    /* exp_sum's softmax terms: the same values, except that the SIMD rows
     * return 0 below e^-87 (PT_EXP_NORMAL_MIN in vec_exp_x86.h). */
    v->exp_sum(t, N, 0.f);
    int bad_terms = 0;
    for (int i = 0; i < N; ++i) {
        if (x[i] >= -87.f) bad_terms += f32_bits(t[i]) != f32_bits(y[i]);
        else bad_terms += t[i] != 0.f && (v != &pt_vec_row_generic || t[i] != y[i]);
    }
    CHECK(bad_terms == 0);
    /* Edges. */
    const float edge_in[] = {-INFINITY, -1000.f, -104.f, 0.f, -0.f, 88.7f, 89.f, 1000.f, INFINITY, NAN};
    float e[10];
    memcpy(e, edge_in, sizeof e);
    v->exp_sum(e, 10, 0.f);
    CHECK(e[0] == 0.f && e[1] == 0.f && e[2] == 0.f);
    CHECK(e[3] == 1.f && e[4] == 1.f);
    CHECK(isfinite(e[5]) && e[5] > 3e38f);
    CHECK(isinf(e[6]) && isinf(e[7]) && isinf(e[8]));
    CHECK(isnan(e[9]));
    /* Every length: max, exp_sum with a shift, scale. */
    for (int n = 0; n <= 70; ++n) {
        float a[72], b[72];
        for (int i = 0; i < 72; ++i) a[i] = b[i] = rnd_in(-30.f, 30.f);
        double mx = -INFINITY;
        for (int i = 0; i < n; ++i) mx = a[i] > mx ? a[i] : mx;
        CHECK(v->max(a, n) == (float)mx);
        const float sub = n ? (float)mx : 0.f;
        double sum = 0, ex[72];
        for (int i = 0; i < n; ++i) sum += ex[i] = exp((double)(a[i] - sub)); /* the f32 difference, as the row forms it */
        const float got = v->exp_sum(b, n, sub);
        CHECK_NEAR(got, sum, 1e-6 * (sum + 1));
        int bad = 0;
        for (int i = 0; i < n; ++i) bad += fabs(b[i] - ex[i]) > 2.5e-7 * ex[i] + 1e-38;
        for (int i = n; i < 72; ++i) bad += b[i] != a[i]; /* past the end: untouched */
        CHECK(bad == 0);
        v->scale(b, n, 0.5f);
        bad = 0;
        for (int i = 0; i < n; ++i) bad += fabs(b[i] - ex[i] * 0.5) > 2.5e-7 * ex[i];
        for (int i = n; i < 72; ++i) bad += b[i] != a[i];
        CHECK(bad == 0);
    }
    /* NaN elements are skipped by max. */
    float m[5] = {1.f, NAN, 3.f, NAN, 2.f};
    CHECK(v->max(m, 5) == 3.f);
}

static float bits_f32(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Equal bits, or both NaN (a signalling NaN may come back quiet). */
static bool same_bits_or_nan(float a, float b) { return f32_bits(a) == f32_bits(b) || (isnan(a) && isnan(b)); }

/* Conversions: every bf16 / f16 pattern to f32, and f32 patterns (random,
 * subnormal, near the rounding ties and the overflow edges, NaN) back, bit
 * for bit against the scalar conversions of ir/dtype.h, at every length. */
static void check_conversions(const pt_vec_ops *v) {
    enum { N = 65536 };
    static uint16_t h[N], h2[N];
    static float f[N], g[N];
    for (int i = 0; i < N; ++i) h[i] = (uint16_t)i;
    int bad = 0;
    v->bf16_to_f32(f, h, N);
    for (int i = 0; i < N; ++i) bad += !same_bits_or_nan(f[i], pt_bf16_to_f32(h[i]));
    v->f16_to_f32(f, h, N);
    for (int i = 0; i < N; ++i) bad += !same_bits_or_nan(f[i], pt_f16_to_f32(h[i]));
    CHECK(bad == 0);
    for (int i = 0; i < N; ++i) {
        uint32_t u;
        switch (i % 6) {
            case 0: u = f32_bits(rnd_in(-1.f, 1.f)) * 2654435761u; break;
            case 1: u = (uint32_t)i * 2654435761u & 0x807fffffu; break;           /* subnormals */
            case 2: u = 0x33000000u + (uint32_t)i * 977u; break;                    /* f16 subnormal range */
            case 3: u = (f32_bits(rnd_in(-70000.f, 70000.f)) & ~0xffffu) | 0x8000u; /* bf16 ties */ break;
            case 4: u = 0x477fe000u + (uint32_t)(i & 0x3fff) + ((uint32_t)(i & 1) << 31); break; /* f16 overflow edge */
            default: u = 0x7f800000u | (uint32_t)i * 40503u | ((uint32_t)(i & 2) << 30); break;  /* inf and NaN */
        }
        f[i] = bits_f32(u);
    }
    v->f32_to_bf16(h, f, N);
    v->f32_to_f16(h2, f, N);
    int bad_bf = 0, bad_h = 0;
    for (int i = 0; i < N; ++i) {
        bad_bf += h[i] != pt_f32_to_bf16(f[i]); /* NaN: the same quiet pattern */
        bad_h += !same_bits_or_nan(pt_f16_to_f32(h2[i]), pt_f16_to_f32(pt_f32_to_f16(f[i])));
    }
    if (bad_bf || bad_h) printf("  %s: %d bf16 and %d f16 conversions differ\n", v->name, bad_bf, bad_h);
    CHECK(bad_bf == 0 && bad_h == 0);
    /* Tails: nothing past n is written. */
    for (int n = 0; n <= 40; ++n) {
        uint16_t d[48];
        float e[48];
        memset(d, 0xab, sizeof d);
        for (int i = 0; i < 48; ++i) e[i] = -7.f;
        v->f32_to_bf16(d, g + 0 * n + 100, n);
        v->bf16_to_f32(e, h + 200, n);
        bad = 0;
        for (int i = n; i < 48; ++i) bad += d[i] != 0xabab || e[i] != -7.f;
        CHECK(bad == 0);
    }
}

/* 8-bit integers: every byte to f32; f32 (ties, out of range, NaN, inf) to
 * s8 / u8 as ir/dtype.c, every length. */
static void check_int8(const pt_vec_ops *v) {
    int8_t sb[256];
    uint8_t ub[256];
    float f[256];
    for (int i = 0; i < 256; ++i) sb[i] = (int8_t)(i - 128), ub[i] = (uint8_t)i;
    int bad = 0;
    v->s8_to_f32(f, sb, 256);
    for (int i = 0; i < 256; ++i) bad += f[i] != (float)(i - 128);
    v->u8_to_f32(f, ub, 256);
    for (int i = 0; i < 256; ++i) bad += f[i] != (float)i;
    const float special[] = {NAN, INFINITY, -INFINITY, 0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 127.5f, 128.f, -128.5f, -129.f, 255.5f, 256.f, -0.f};
    for (int i = 0; i < 256; ++i) f[i] = i < 15 ? special[i] : (i % 2 ? rnd_in(-300.f, 300.f) : (float)(i - 200) + 0.5f);
    for (int n = 0; n <= 256; n += n < 40 ? 1 : 37) {
        int8_t so[260];
        uint8_t uo[260];
        memset(so, 0x55, sizeof so);
        memset(uo, 0x55, sizeof uo);
        v->f32_to_s8(so, f, n);
        v->f32_to_u8(uo, f, n);
        for (int i = 0; i < n; ++i) bad += so[i] != pt_f32_to_s8(f[i]) || uo[i] != pt_f32_to_u8(f[i]);
        for (int i = n; i < 260; ++i) bad += so[i] != 0x55 || uo[i] != 0x55;
    }
    CHECK(bad == 0);
}

/* Row statistics and normalisation against f64 loops; LogSoftmax's shift. */
static void check_norm(const pt_vec_ops *v) {
    for (int n = 0; n <= 70; ++n) {
        float x[72], gm[72], bt[72], y[72], yg[72];
        double s = 0, q = 0;
        for (int i = 0; i < 72; ++i) x[i] = rnd_in(-3.f, 5.f), gm[i] = rnd_in(0.5f, 2.f), bt[i] = rnd_in(-1.f, 1.f);
        for (int i = 0; i < n; ++i) s += x[i];
        const double mean = n ? s / n : 0;
        for (int i = 0; i < n; ++i) q += (x[i] - mean) * (x[i] - mean);
        CHECK_NEAR(v->sum_f64(x, n), s, 1e-12 * (fabs(s) + 1));
        CHECK_NEAR(v->sum_sq_dev_f64(x, n, mean), q, 1e-12 * (q + 1));
        /* The same f64 expression as the generic row: bit-identical. */
        for (int pass = 0; pass < 3; ++pass) {
            const float *g = pass ? gm : NULL, *b = pass == 2 ? bt : NULL;
            for (int i = 0; i < 72; ++i) y[i] = yg[i] = 9.f;
            v->normalize(y, x, n, mean, 0.7, g, b);
            pt_vec_row_generic.normalize(yg, x, n, mean, 0.7, g, b);
            CHECK(memcmp(y, yg, sizeof y) == 0);
        }
        for (int i = 0; i < 72; ++i) y[i] = yg[i] = 9.f;
        v->normalize1(y, x, n, mean, 0.7 * 1.3, -0.25);
        pt_vec_row_generic.normalize1(yg, x, n, mean, 0.7 * 1.3, -0.25);
        CHECK(memcmp(y, yg, sizeof y) == 0);
        double acc[72], accg[72];
        for (int i = 0; i < 72; ++i) acc[i] = accg[i] = 0.125 * i;
        v->acc_f64(acc, x, n);
        pt_vec_row_generic.acc_f64(accg, x, n);
        CHECK(memcmp(acc, accg, sizeof acc) == 0);
        for (int i = 0; i < 72; ++i) y[i] = yg[i] = 9.f;
        v->div_f64(y, acc, n, 7.0);
        pt_vec_row_generic.div_f64(yg, accg, n, 7.0);
        CHECK(memcmp(y, yg, sizeof y) == 0);
        double mu[72], sc[72], sh[72];
        for (int i = 0; i < 72; ++i) acc[i] = accg[i] = 0.5 * i, mu[i] = 0.1 * i, sc[i] = 1.0 + 0.01 * i, sh[i] = -0.02 * i;
        double acc1[72];
        for (int i = 0; i < 72; ++i) acc1[i] = -0.25 * i;
        v->acc_shift_f64(acc1, acc, x, 0, 1, mu, n);
        int bad_sq = 0; /* f64 lanes may fuse the multiply-add: within 1e-15 relative */
        for (int i = 0; i < 72; ++i) {
            const double d = i < n ? x[i] - mu[i] : 0.0, want = 0.5 * i + d * d;
            bad_sq += fabs(acc[i] - want) > 1e-15 * (want + 1);
            bad_sq += acc1[i] != -0.25 * i + d; /* one addition: exact as the generic row */
        }
        CHECK(bad_sq == 0);
        for (int i = 0; i < 72; ++i) y[i] = yg[i] = 9.f;
        v->normalize_each(y, 0, x, 0, 1, n, mu, sc, sh, false);
        pt_vec_row_generic.normalize_each(yg, 0, x, 0, 1, n, mu, sc, sh, false);
        CHECK(memcmp(y, yg, sizeof y) == 0);
        v->sub2(y, x, n, 1.25f, 0.3f);
        int bad = 0;
        for (int i = 0; i < n; ++i) bad += y[i] != x[i] - 1.25f - 0.3f;
        CHECK(bad == 0);
    }
}

/* Binary ops: bit-identical to the generic row (the reference's f32
 * arithmetic), every length, scalar on either side, with NaN and infinities. */
static void check_binary(const pt_vec_ops *v) {
    const int kinds[] = {dnnl_graph_op_add, dnnl_graph_op_subtract, dnnl_graph_op_multiply,
                         dnnl_graph_op_divide, dnnl_graph_op_maximum, dnnl_graph_op_minimum};
    const float special[] = {NAN, INFINITY, -INFINITY, 0.f, -0.f};
    int bad = 0;
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; ++k)
        for (int n = 0; n <= 40; ++n)
            for (int steps = 0; steps < 3; ++steps) {
                float a[40], b[40], y[48], yg[48];
                for (int i = 0; i < 40; ++i) {
                    a[i] = i % 7 == 3 ? special[i % 5] : rnd_in(-4.f, 4.f);
                    b[i] = i % 9 == 4 ? special[(i + 2) % 5] : rnd_in(-4.f, 4.f);
                }
                const int64_t as = steps == 1 ? 0 : 1, bs = steps == 2 ? 0 : 1;
                for (int i = 0; i < 48; ++i) y[i] = yg[i] = 5.f;
                CHECK(v->binary(kinds[k], y, a, as, b, bs, n));
                pt_vec_row_generic.binary(kinds[k], yg, a, as, b, bs, n);
                for (int i = 0; i < 48; ++i) bad += f32_bits(y[i]) != f32_bits(yg[i]) && !(isnan(y[i]) && isnan(yg[i]));
            }
    CHECK(bad == 0);
    float y[4];
    CHECK(!v->binary(dnnl_graph_op_pow, y, y, 1, y, 1, 0));
}

/* Element-wise kinds: the exact ones bit-identical to the reference formula
 * (generic row); the transcendental ones of the SIMD rows within the bounds
 * of docs/numerics.md against f64: exp 3 ulp, sigmoid and tanh 4 ulp, both
 * GELUs 8 ulp + x²·2^-23 relative (the rounding of their exp argument),
 * plus 1e-37 absolute. */
static double truth(int kind, bool gelu_tanh, double x) {
    switch (kind) {
        case dnnl_graph_op_exp: return exp(x);
        case dnnl_graph_op_sigmoid: return 1.0 / (1.0 + exp(-x));
        case dnnl_graph_op_tanh: return tanh(x);
        default:
            if (gelu_tanh) return x / (1.0 + exp(-2.0 * 0.7978845608028654 * x * (1.0 + 0.044715 * x * x)));
            return 0.5 * x * erfc(-x / sqrt(2.0));
    }
}

static void check_eltwise(const pt_vec_ops *v) {
    enum { N = 20000 };
    static float x[N], y[N], yg[N];
    const float special[] = {NAN, INFINITY, -INFINITY, 0.f, -0.f, 1e-40f, -1e-40f, 88.f, -88.f, 100.f, -110.f};
    for (int i = 0; i < N; ++i) x[i] = i < 11 ? special[i] : (i % 3 ? rnd_in(-12.f, 12.f) : rnd_in(-0.7f, 0.7f));
    const struct {
        int kind;
        bool gelu_tanh, exact;
        double ulps;
    } rows[] = {{dnnl_graph_op_relu, 0, 1, 0},        {dnnl_graph_op_leaky_relu, 0, 1, 0},
                {dnnl_graph_op_clamp, 0, 1, 0},       {dnnl_graph_op_abs, 0, 1, 0},
                {dnnl_graph_op_square, 0, 1, 0},      {dnnl_graph_op_sqrt, 0, 1, 0},
                {dnnl_graph_op_reciprocal, 0, 1, 0},  {dnnl_graph_op_round, 0, 1, 0},
                {dnnl_graph_op_hard_sigmoid, 0, 1, 0}, {dnnl_graph_op_hard_swish, 0, 1, 0},
                {dnnl_graph_op_exp, 0, 0, 3},         {dnnl_graph_op_sigmoid, 0, 0, 4},
                {dnnl_graph_op_tanh, 0, 0, 4},        {dnnl_graph_op_gelu, 1, 0, 8},
                {dnnl_graph_op_gelu, 0, 0, 8}};
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; ++r) {
        const pt_eltwise_params p = {.kind = rows[r].kind, .alpha = 0.2f, .beta = 0.4f, .lo = -1.5f, .hi = 2.5f,
                                     .gelu_tanh = rows[r].gelu_tanh};
        for (int n = 0; n <= 37; ++n) { /* tails: nothing past n written */
            float t[40];
            for (int i = 0; i < 40; ++i) t[i] = 3.f;
            CHECK(v->eltwise(&p, t, x + 11, n));
            int past = 0;
            for (int i = n; i < 40; ++i) past += t[i] != 3.f;
            CHECK(past == 0);
        }
        CHECK(v->eltwise(&p, y, x, N));
        pt_vec_row_generic.eltwise(&p, yg, x, N);
        int bad = 0;
        double worst = 0;
        for (int i = 0; i < N; ++i) {
            if (isnan(y[i]) || isnan(yg[i])) {
                bad += isnan(y[i]) != isnan(yg[i]);
                continue;
            }
            if (rows[r].exact || v == &pt_vec_row_generic) { /* generic: the reference formulas themselves */
                bad += f32_bits(y[i]) != f32_bits(yg[i]);
                continue;
            }
            const double want = truth(p.kind, p.gelu_tanh, x[i]), err = fabs(y[i] - want);
            if (isinf(want) || isinf(y[i])) {
                bad += y[i] != (float)want;
                continue;
            }
            const double ulp = fmax(ldexp(1.0, -149), ldexp(1.0, ilogb(fmax(fabs(want), 1e-38)) - 23));
            double allowed = rows[r].ulps * ulp;
            if (p.kind == dnnl_graph_op_gelu) allowed += (double)x[i] * x[i] * ldexp(1.0, -23) * fabs(want);
            if (err > allowed + 1e-37) ++bad;
            if (fabs(want) > 1e-30 && err / ulp > worst) worst = err / ulp;
        }
        if (!rows[r].exact && v != &pt_vec_row_generic) printf("  %s: kind %d%s worst %.2f ulp\n", v->name, p.kind, p.gelu_tanh ? " (tanh)" : "", worst);
        if (bad) printf("  %s: kind %d: %d elements out of bounds\n", v->name, p.kind, bad);
        CHECK(bad == 0);
    }
    /* Kinds without a vector form fall back to the caller. */
    const pt_eltwise_params mish = {.kind = dnnl_graph_op_mish};
    if (v != &pt_vec_row_generic) CHECK(!v->eltwise(&mish, y, x, 4));
}

int main(void) {
    printf("vector rows (%zu), effective ISA %s, default %s\n", pt_vec_count(), pt_isa_name(pt_isa()), pt_vec()->name);
    for (size_t i = 0; i < pt_vec_count(); ++i) {
        const pt_vec_ops *v = pt_vec_at(i);
        if (!pt_cpu_row_usable(v->level, v->features, pt_isa())) {
            printf("  %s: skipped (not usable here)\n", v->name);
            continue;
        }
        check_row(v);
        check_conversions(v);
        check_int8(v);
        check_norm(v);
        check_binary(v);
        check_eltwise(v);
    }
    CHECK(pt_vec_select(PT_ISA_GENERIC) == pt_vec_at(0));
    return pt_test_summary("test_int_vec");
}
