/* The vector-kernel table (kernels/vec/vec.h): every row this CPU can run
 * against double-precision loops, over lengths 0..70 (every tail), the whole
 * f32 exp range and its edges (underflow to 0, overflow to inf, -inf, NaN). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/vec/vec.h"
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

static void check_row(const pt_vec_ops *v) {
    enum { N = 4096 };
    static float x[N], y[N];
    /* exp over the whole range, 2 ulp against the double-precision value. */
    int64_t worst = 0;
    for (int i = 0; i < N; ++i) x[i] = y[i] = rnd_in(-103.f, 88.7f);
    v->exp_sum(y, N, 0.f);
    for (int i = 0; i < N; ++i) {
        const float want = (float)exp((double)x[i]);
        const int64_t u = want < 1.17549435e-38f ? (fabsf(y[i] - want) <= 1.5e-45f ? 0 : 99) : ulps(y[i], want);
        if (u > worst) worst = u;
    }
    printf("  %s: exp worst %lld ulp over [-103, 88.7]\n", v->name, (long long)worst);
    CHECK(worst <= 2);
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

int main(void) {
    printf("vector rows (%zu), effective ISA %s, default %s\n", pt_vec_count(), pt_isa_name(pt_isa()), pt_vec()->name);
    for (size_t i = 0; i < pt_vec_count(); ++i) {
        const pt_vec_ops *v = pt_vec_at(i);
        if (!pt_cpu_row_usable(v->level, v->features, pt_isa())) {
            printf("  %s: skipped (not usable here)\n", v->name);
            continue;
        }
        check_row(v);
    }
    CHECK(pt_vec_select(PT_ISA_GENERIC) == pt_vec_at(0));
    return pt_test_summary("test_int_vec");
}
