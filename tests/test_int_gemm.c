/* The GEMM engine: every F32 / BF16 microkernel row this CPU can run against
 * a double-precision loop over the same panels, and the whole driver
 * (blocks, tails, batch broadcast, strides, source types, math-mode rounding,
 * prepacked B, threads, the U8S8 s32 -> f32 step) against naive references. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir/dtype.h"
#include "ir/dtype_round.h"
#include "kernels/gemm/gemm.h"
#include "kernels/gemm/gemm_internal.h"
#include "test_gemm_prefetch.h"
#include "test_util.h"

static uint64_t g_rng = 0x9e3779b97f4a7c15ull;
static uint32_t rnd_u32(void) {
    g_rng = g_rng * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(g_rng >> 33);
}
static float rnd_unit(void) { return (float)(rnd_u32() & 0xffffff) / (float)0x800000 - 1.0f; } /* [-1, 1) */
static int64_t rnd_range(int64_t lo, int64_t hi) { return lo + (int64_t)(rnd_u32() % (uint32_t)(hi - lo + 1)); }

static void *alloc64(size_t bytes) { return aligned_alloc(64, (bytes + 63) / 64 * 64 + 64); }

/* ---- microkernels ---------------------------------------------------------------- */

static bool row_runs(const pt_gemm_ukernel *uk) {
    if (pt_cpu_row_usable(uk->level, uk->features, pt_isa())) return true;
    printf("  %s: skipped (not usable on this CPU / under PARTITA_ISA)\n", uk->name);
    return false;
}

static float panel_value(const pt_gemm_ukernel *uk, const void *p, size_t i) {
    return uk->kind == PT_GEMM_BF16 ? pt_bf16_to_f32(((const uint16_t *)p)[i]) : ((const float *)p)[i];
}

/* The packing form (F32 rows, the AMX BF16 row): B read from source rows
 * (ld apart, NaN past the nr valid columns, which it must not read) gives
 * the tile run gives on the panel with those columns zeroed, bit for bit,
 * and writes that panel.  A row with a_prep takes A as prepared. */
static void check_packing_form(const pt_gemm_ukernel *uk, int64_t kc, const void *a, const void *b,
                               const float *c0, int64_t ldc, int mr, int nr, int accumulate) {
    const int MR = uk->mr, NR = uk->nr, kg = uk->kg;
    const bool h = uk->kind == PT_GEMM_BF16;
    const size_t eb = h ? 2 : 4;
    const int64_t ld = NR + 5;
    char *src = malloc(eb * (size_t)(kc * ld)), *want = alloc64(eb * (size_t)(kc * NR));
    char *got = alloc64(eb * (size_t)(kc * NR)), *ap = alloc64(eb * (size_t)(kc * MR));
    float *c_want = malloc(sizeof(float) * (size_t)(MR * ldc)), *c_got = malloc(sizeof(float) * (size_t)(MR * ldc));
    for (int64_t k = 0; k < kc; ++k)
        for (int64_t j = 0; j < ld; ++j) {
            const size_t at = (size_t)((k / kg) * NR * kg + (j < NR ? j : 0) * kg + k % kg); /* panel index */
            if (h) {
                const uint16_t v = ((const uint16_t *)b)[at];
                ((uint16_t *)src)[k * ld + j] = j < nr ? v : (uint16_t)0x7fc0;
                if (j < NR) ((uint16_t *)want)[at] = j < nr ? v : 0, ((uint16_t *)got)[at] = 0xbf80;
            } else {
                const float v = ((const float *)b)[at];
                ((float *)src)[k * ld + j] = j < nr ? v : NAN;
                if (j < NR) ((float *)want)[at] = j < nr ? v : 0.0f, ((float *)got)[at] = -1.0f;
            }
        }
    memcpy(ap, a, eb * (size_t)(kc * MR));
    if (uk->a_prep) uk->a_prep(ap, kc);
    memcpy(c_want, c0, sizeof(float) * (size_t)(MR * ldc));
    memcpy(c_got, c0, sizeof(float) * (size_t)(MR * ldc));
    uk->run(kc, a, want, c_want, ldc, mr, nr, accumulate);
    uk->run_packing(kc, ap, src, ld, nr, got, NULL, c_got, ldc, mr, nr, accumulate, NULL);
    pt_test_count(memcmp(c_got, c_want, sizeof(float) * (size_t)(MR * ldc)) == 0, __FILE__, __LINE__,
                  "%s run_packing kc=%lld mr=%d nr=%d: tile differs from run", uk->name, (long long)kc, mr, nr);
    pt_test_count(memcmp(got, want, eb * (size_t)(kc * NR)) == 0, __FILE__, __LINE__,
                  "%s run_packing kc=%lld nr=%d: panel differs from packing", uk->name, (long long)kc, nr);
    free(src), free(want), free(got), free(ap), free(c_want), free(c_got);
}

/* One microkernel call on random panels; the mr x nr corner must match the
 * double loop and everything outside it must stay untouched. */
static void check_ukernel_case(const pt_gemm_ukernel *uk, int64_t kc, int mr, int nr, int accumulate) {
    const int MR = uk->mr, NR = uk->nr, kg = uk->kg;
    const int64_t ldc = NR + 3;
    const size_t eb = uk->kind == PT_GEMM_BF16 ? 2 : 4;
    void *a = alloc64((size_t)(kc * MR) * eb), *b = alloc64((size_t)(kc * NR) * eb);
    float *c = malloc(sizeof(float) * (size_t)(MR * ldc)), *c0 = malloc(sizeof(float) * (size_t)(MR * ldc));
    for (int64_t i = 0; i < kc * MR; ++i) {
        float v = rnd_unit();
        if (eb == 2) ((uint16_t *)a)[i] = pt_f32_to_bf16(v);
        else ((float *)a)[i] = v;
    }
    for (int64_t i = 0; i < kc * NR; ++i) {
        float v = rnd_unit();
        if (eb == 2) ((uint16_t *)b)[i] = pt_f32_to_bf16(v);
        else ((float *)b)[i] = v;
    }
    for (int64_t i = 0; i < MR * ldc; ++i) c[i] = c0[i] = rnd_unit();
    uk->run(kc, a, b, c, ldc, mr, nr, accumulate);
    if (uk->a_prep) { /* A transformed once by the driver: the same bits */
        void *ap = alloc64((size_t)(kc * MR) * eb);
        float *cq = malloc(sizeof(float) * (size_t)(MR * ldc));
        memcpy(ap, a, (size_t)(kc * MR) * eb), memcpy(cq, c0, sizeof(float) * (size_t)(MR * ldc));
        uk->a_prep(ap, kc);
        uk->run_prepped(kc, ap, b, cq, ldc, mr, nr, accumulate);
        CHECK(memcmp(cq, c, sizeof(float) * (size_t)(MR * ldc)) == 0);
        free(ap), free(cq);
    }
    check_prefetch_form(uk, kc, a, b, c0, c, sizeof(float) * (size_t)(MR * ldc), ldc, mr, nr, accumulate, b);
    if (uk->run_packing) check_packing_form(uk, kc, a, b, c0, ldc, mr, nr, accumulate);
    int bad = 0;
    for (int i = 0; i < MR; ++i)
        for (int64_t j = 0; j < ldc; ++j) {
            if (i >= mr || j >= nr) {
                if (c[i * ldc + j] != c0[i * ldc + j]) ++bad;
                continue;
            }
            double ref = accumulate ? c0[i * ldc + j] : 0.0, mag = fabs(ref);
            for (int64_t k = 0; k < kc; k += kg)
                for (int q = 0; q < kg; ++q) {
                    double p = (double)panel_value(uk, a, (size_t)((k / kg) * MR * kg + i * kg + q)) *
                               panel_value(uk, b, (size_t)((k / kg) * NR * kg + j * kg + q));
                    ref += p, mag += fabs(p);
                }
            if (fabs(c[i * ldc + j] - ref) > (double)(kc + 2) * 0x1p-23 * mag + 1e-30) ++bad;
        }
    if (bad) printf("  %s kc=%lld mr=%d nr=%d acc=%d: %d wrong\n", uk->name, (long long)kc, mr, nr, accumulate, bad);
    CHECK(bad == 0);
    free(a), free(b), free(c), free(c0);
}

static void test_ukernels(pt_gemm_kind kind) {
    for (size_t r = 0; r < pt_gemm_ukernel_count(kind); ++r) {
        const pt_gemm_ukernel *uk = pt_gemm_ukernel_at(kind, r);
        CHECK(uk && uk->kind == kind);
        if (!uk || !row_runs(uk)) continue;
        const int64_t kcs[] = {uk->kg, 2 * uk->kg, 7 * uk->kg, 64, 258};
        for (size_t t = 0; t < sizeof kcs / sizeof kcs[0]; ++t) {
            check_ukernel_case(uk, kcs[t], uk->mr, uk->nr, 0);
            check_ukernel_case(uk, kcs[t], uk->mr, uk->nr, 1);
            check_ukernel_case(uk, kcs[t], 1, 1, 1);
            check_ukernel_case(uk, kcs[t], uk->mr - 1, uk->nr - 1, (int)(t & 1));
            /* Row counts at the edges of the AVX-512 kernels' 8-row variant. */
            check_ukernel_case(uk, kcs[t], uk->mr < 8 ? uk->mr : 8, uk->nr, (int)(t & 1));
            check_ukernel_case(uk, kcs[t], uk->mr < 9 ? uk->mr : 9, uk->nr - 3, 1);
            check_ukernel_case(uk, kcs[t], (int)rnd_range(1, uk->mr), (int)rnd_range(1, uk->nr), (int)(t & 1));
        }
        printf("  %s: microkernel checked\n", uk->name);
    }
}

/* ---- packing of float sources ------------------------------------------------------ */

static uint32_t bits_of(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}
static float float_of(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Panels of every layout path (k contiguous, rows contiguous, strided) hold
 * exactly the converted values, specials included, and zero padding. */
static void test_pack_special(void) {
    static const uint32_t specials[] = {0x7fc00001u, 0x7f800001u, 0xff800000u, 0x7f800000u, 0x3f808000u,
                                        0x3f818000u, 0x00000001u, 0x807fffffu, 0x7f7fffffu, 0x80000000u,
                                        0x3f800001u, 0xbf7fffffu};
    const pt_gemm_kind kinds[] = {PT_GEMM_F32, PT_GEMM_F32, PT_GEMM_BF16, PT_GEMM_BF16};
    const dnnl_data_type_t srcs[] = {dnnl_f32, dnnl_f32, dnnl_f32, dnnl_bf16};
    const dnnl_fpmath_mode_t rounds[] = {dnnl_fpmath_mode_strict, dnnl_fpmath_mode_bf16, dnnl_fpmath_mode_strict,
                                         dnnl_fpmath_mode_strict};
    for (int v = 0; v < 4; ++v) {
        const pt_gemm_ukernel *uk = pt_gemm_ukernel_default(kinds[v]);
        for (int is_b = 0; is_b < 2; ++is_b)
            for (int lay = 0; lay < 3; ++lay) {
                const int R = is_b ? uk->nr : uk->mr;
                const int64_t rows = 2 * R - 3, K = 45, r0 = 1, k0 = 2, kc = 37;
                const int64_t kcp = pt_gemm_kc_padded(uk, kc), strips = 2;
                pt_gemm_operand o;
                memset(&o, 0, sizeof o);
                o.dt = srcs[v], o.round = rounds[v];
                /* k contiguous, rows contiguous, neither (padded strides). */
                o.s_row = lay == 0 ? K : lay == 1 ? 1 : 3 * K + 1;
                o.s_k = lay == 0 ? 1 : lay == 1 ? rows + r0 : 3;
                const int64_t n = (rows + r0) * (K + 1) * 4 + 3 * K * 3;
                float *src = malloc(sizeof(float) * (size_t)n);
                uint16_t *src16 = malloc(sizeof(uint16_t) * (size_t)n);
                for (int64_t i = 0; i < n; ++i) {
                    src[i] = rnd_u32() % 3 ? rnd_unit() : float_of(specials[rnd_u32() % 12]);
                    src16[i] = pt_f32_to_bf16(src[i]);
                }
                const size_t eb = pt_gemm_panel_elem_bytes(uk->kind);
                unsigned char *dst = alloc64((size_t)(strips * R * kcp) * eb);
                memset(dst, 0xa5, (size_t)(strips * R * kcp) * eb);
                const void *data = o.dt == dnnl_bf16 ? (const void *)src16 : (const void *)src;
                pt_gemm_pack_panels(uk, is_b, &o, data, NULL, NULL, r0, rows, k0, kc, dst, NULL);
                int bad = 0;
                for (int64_t s = 0; s < strips; ++s)
                    for (int64_t k = 0; k < kcp; ++k)
                        for (int r = 0; r < R; ++r) {
                            const int64_t row = s * R + r;
                            const bool in = row < rows && k < kc;
                            const int64_t e = (r0 + row) * o.s_row + (k0 + k) * o.s_k;
                            if (uk->kind == PT_GEMM_BF16) {
                                uint16_t want = !in ? 0 : o.dt == dnnl_bf16 ? src16[e] : pt_f32_to_bf16(src[e]);
                                uint16_t got = ((uint16_t *)dst)[s * R * kcp + (k / 2) * 2 * R + 2 * r + (k & 1)];
                                if (got != want) ++bad;
                            } else {
                                float want = in ? pt_round_fpmath(o.round, src[e]) : 0.0f;
                                float got = ((float *)dst)[s * R * kcp + k * R + r];
                                if (bits_of(got) != bits_of(want) && !(isnan(got) && isnan(want))) ++bad;
                            }
                        }
                if (bad)
                    printf("  pack %s is_b=%d layout=%d src=%s round=%d: %d wrong\n", uk->name, is_b, lay,
                           pt_dt_name(o.dt), (int)o.round, bad);
                CHECK(bad == 0);
                free(src), free(src16), free(dst);
            }
    }
}

/* ---- the driver ------------------------------------------------------------------- */

/* Where the epilogue writes: dense C[b][m][n] and a coverage count. */
typedef struct {
    int64_t M, N;
    float *c;
    int *hits;
    int nthr;
    int bad_tid;
} sink;

static void sink_epilogue(void *ctx, int64_t b, int64_t m0, int64_t n0, int64_t mlen, int64_t nlen, float *c,
                          int64_t ldc, int tid) {
    sink *s = ctx;
    if (tid < 0 || tid >= s->nthr) s->bad_tid = 1;
    for (int64_t i = 0; i < mlen; ++i)
        for (int64_t j = 0; j < nlen; ++j) {
            int64_t at = (b * s->M + m0 + i) * s->N + n0 + j;
            s->c[at] = c[i * ldc + j];
#pragma omp atomic
            s->hits[at] += 1;
        }
}

/* A float-kind driver case. */
typedef struct {
    int64_t M, N, K;
    int nbd;
    int64_t bdims[2];
    bool a_bcast, b_bcast; /* batch stride 0 on every batch dim */
    bool a_trans, b_trans; /* A: k-major (s_row 1); B: n-major rows (s_k 1) */
    dnnl_data_type_t adt, bdt;
    dnnl_fpmath_mode_t round;
    bool prepack;
    int nthr;
    int run_nthr; /* threads of the run when not nthr (0: nthr) */
} float_case;

static void store_as(void *p, dnnl_data_type_t dt, int64_t i, float v) {
    if (dt == dnnl_f32) ((float *)p)[i] = v;
    else if (dt == dnnl_bf16) ((uint16_t *)p)[i] = pt_f32_to_bf16(v);
    else ((uint16_t *)p)[i] = pt_f32_to_f16(v);
}

/* The value the product sees for element i of a source of type dt. */
static double operand_value(const void *p, dnnl_data_type_t dt, int64_t i, pt_gemm_kind kind,
                            dnnl_fpmath_mode_t round) {
    float v = dt == dnnl_f32 ? ((const float *)p)[i]
              : dt == dnnl_bf16 ? pt_bf16_to_f32(((const uint16_t *)p)[i])
                                : pt_f16_to_f32(((const uint16_t *)p)[i]);
    if (kind == PT_GEMM_BF16) return pt_bf16_to_f32(pt_f32_to_bf16(v));
    return dt == dnnl_f32 ? pt_round_fpmath(round, v) : v;
}

static void run_float_case(const pt_gemm_ukernel *uk, const float_case *fc) {
    pt_gemm_desc d;
    memset(&d, 0, sizeof d);
    d.kind = uk->kind;
    d.M = fc->M, d.N = fc->N, d.K = fc->K;
    d.nbd = fc->nbd;
    int64_t nbatch = 1;
    for (int i = 0; i < fc->nbd; ++i) d.bdims[i] = fc->bdims[i], nbatch *= fc->bdims[i];
    /* Batch strides of dense [b][...] storage, innermost batch dim last. */
    int64_t a_items = fc->a_bcast ? 1 : nbatch, b_items = fc->b_bcast ? 1 : nbatch;
    for (int i = fc->nbd - 1, sa = 1, sb = 1; i >= 0; --i) {
        d.a_bs[i] = fc->a_bcast ? 0 : sa * fc->M * fc->K;
        d.b_bs[i] = fc->b_bcast ? 0 : sb * fc->K * fc->N;
        sa *= (int)fc->bdims[i], sb *= (int)fc->bdims[i];
    }
    d.a.dt = fc->adt, d.b.dt = fc->bdt;
    d.a.round = d.b.round = fc->round;
    d.a.s_row = fc->a_trans ? 1 : fc->K, d.a.s_k = fc->a_trans ? fc->M : 1;
    d.b.s_row = fc->b_trans ? fc->K : 1, d.b.s_k = fc->b_trans ? 1 : fc->N;
    d.b_constant = fc->prepack;

    const int64_t a_n = a_items * fc->M * fc->K, b_n = b_items * fc->K * fc->N, c_n = nbatch * fc->M * fc->N;
    void *a = malloc(4 * (size_t)a_n), *b = malloc(4 * (size_t)b_n);
    for (int64_t i = 0; i < a_n; ++i) store_as(a, fc->adt, i, rnd_unit());
    for (int64_t i = 0; i < b_n; ++i) store_as(b, fc->bdt, i, rnd_unit());
    sink s = {fc->M, fc->N, calloc((size_t)c_n, sizeof(float)), calloc((size_t)c_n, sizeof(int)), fc->nthr, 0};

    pt_gemm_plan p;
    pt_status st = pt_gemm_plan_init_with(&p, &d, fc->nthr, uk);
    CHECK_EQ_INT(st, dnnl_success);
    if (st != dnnl_success) goto done;
    void *scratch = malloc(pt_gemm_scratch_bytes(&p, fc->nthr)), *packed = NULL;
    pt_gemm_args args = {.a = a, .b = b, .epilogue = sink_epilogue, .epilogue_ctx = &s};
    if (fc->prepack) {
        packed = alloc64(p.packed_b_bytes);
        pt_gemm_pack_b_all(&p, b, NULL, NULL, packed);
        args.b = NULL, args.b_packed = packed;
    }
    CHECK_EQ_INT(pt_gemm_run(&p, &args, scratch, fc->run_nthr ? fc->run_nthr : fc->nthr), dnnl_success);

    int wrong = 0, holes = 0;
    for (int64_t bi = 0; bi < nbatch; ++bi) {
        const int64_t ab = fc->a_bcast ? 0 : bi, bb = fc->b_bcast ? 0 : bi;
        for (int64_t m = 0; m < fc->M; ++m)
            for (int64_t n = 0; n < fc->N; ++n) {
                double ref = 0, mag = 0;
                for (int64_t k = 0; k < fc->K; ++k) {
                    double x = operand_value(a, fc->adt, ab * fc->M * fc->K + m * d.a.s_row + k * d.a.s_k, uk->kind,
                                             fc->round);
                    double y = operand_value(b, fc->bdt, bb * fc->K * fc->N + n * d.b.s_row + k * d.b.s_k, uk->kind,
                                             fc->round);
                    ref += x * y, mag += fabs(x * y);
                }
                int64_t at = (bi * fc->M + m) * fc->N + n;
                if (s.hits[at] != 1) ++holes;
                else if (fabs(s.c[at] - ref) > (double)(fc->K + 2) * 0x1p-23 * mag + 1e-30) ++wrong;
            }
    }
    if (wrong || holes || s.bad_tid)
        printf("  %s M=%lld N=%lld K=%lld batch=%lld a_t=%d b_t=%d %s/%s round=%d prepack=%d nthr=%d: "
               "%d wrong, %d not written once\n",
               uk->name, (long long)fc->M, (long long)fc->N, (long long)fc->K, (long long)nbatch, fc->a_trans,
               fc->b_trans, pt_dt_name(fc->adt), pt_dt_name(fc->bdt), (int)fc->round, fc->prepack, fc->nthr, wrong,
               holes);
    CHECK(wrong == 0 && holes == 0 && !s.bad_tid);
    free(scratch), free(packed);
done:
    free(a), free(b), free(s.c), free(s.hits);
}

static float_case plain(int64_t M, int64_t N, int64_t K) {
    float_case fc = {.M = M, .N = N, .K = K, .adt = dnnl_f32, .bdt = dnnl_f32, .round = dnnl_fpmath_mode_strict,
                     .nthr = 1};
    return fc;
}

/* A plain f32 4096^3 product of a kind: the blocks a row gets for it. */
static pt_gemm_desc square_probe(pt_gemm_kind kind) {
    pt_gemm_desc d;
    memset(&d, 0, sizeof d);
    d.kind = kind, d.M = 4096, d.N = 4096, d.K = 4096;
    d.a.dt = d.b.dt = dnnl_f32;
    d.a.s_row = d.K, d.a.s_k = 1, d.b.s_row = 1, d.b.s_k = d.N;
    return d;
}

static void test_driver_float(pt_gemm_kind kind) {
    for (size_t r = 0; r < pt_gemm_ukernel_count(kind); ++r) {
        const pt_gemm_ukernel *uk = pt_gemm_ukernel_at(kind, r);
        if (!row_runs(uk)) continue;
        /* The blocks this row gets for a mid-size problem: shapes straddle them. */
        pt_gemm_desc probe = square_probe(kind);
        pt_gemm_plan pp;
        CHECK_EQ_INT(pt_gemm_plan_init_with(&pp, &probe, 1, uk), dnnl_success);
        const int64_t MR = uk->mr, NR = uk->nr, KC = pp.KC, MC = pp.MC;
        const int64_t shapes[][3] = {
            {1, 1, 1},          {1, 1, 2},           {2, 3, 5},           {MR, NR, 8},
            {MR - 1, NR - 1, 3}, {MR + 1, NR + 1, 17}, {2 * MR + 1, 3 * NR - 1, 31},
            {13, 37, KC - 1},    {9, 21, KC},         {11, 19, KC + 1},    {5, 7, 2 * KC + 3},
            {MC - 1, 17, 9},     {MC + 1, 23, 13},    {3, 2 * NR + 5, 3000}, {67, 45, 129},
        };
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; ++i) {
            float_case fc = plain(shapes[i][0], shapes[i][1], shapes[i][2]);
            run_float_case(uk, &fc);
        }
        /* NC: probed with this row's plan for a skinny problem. */
        probe.M = 4, probe.K = 40, probe.N = 1 << 16;
        CHECK_EQ_INT(pt_gemm_plan_init_with(&pp, &probe, 1, uk), dnnl_success);
        float_case wide = plain(4, pp.NC + 1, 40);
        run_float_case(uk, &wide);
        wide.N = pp.NC - 1;
        run_float_case(uk, &wide);

        /* Transposes, source types, rounding, batch, prepack, threads. */
        const dnnl_data_type_t dts[] = {dnnl_f32, dnnl_bf16, dnnl_f16};
        const dnnl_fpmath_mode_t rounds[] = {dnnl_fpmath_mode_strict, dnnl_fpmath_mode_bf16, dnnl_fpmath_mode_f16,
                                             dnnl_fpmath_mode_tf32};
        for (int t = 0; t < 24; ++t) {
            float_case fc = plain(rnd_range(1, 70), rnd_range(1, 90), rnd_range(1, 300));
            fc.a_trans = t & 1, fc.b_trans = (t >> 1) & 1;
            fc.adt = dts[rnd_range(0, 2)], fc.bdt = dts[rnd_range(0, 2)];
            fc.round = rounds[t % 4];
            fc.nthr = 1 + (t % 3 == 0);
            fc.nbd = (int)rnd_range(0, 2);
            for (int i = 0; i < fc.nbd; ++i) fc.bdims[i] = rnd_range(1, 3);
            fc.a_bcast = fc.nbd && t % 5 == 1;
            fc.b_bcast = fc.nbd && (t % 4 == 2 || t % 7 == 3);
            fc.prepack = (t % 4 == 3) && (fc.b_bcast || fc.nbd == 0);
            run_float_case(uk, &fc);
        }
        /* Large enough to split over two threads, with tails everywhere. */
        const int64_t big[][3] = {{131, 259, 301}, {MC + 7, 77, 2 * KC + 1}, {45, 1000, 70}};
        for (size_t i = 0; i < sizeof big / sizeof big[0]; ++i)
            for (int prepack = 0; prepack < 2; ++prepack) {
                float_case fc = plain(big[i][0], big[i][1], big[i][2]);
                fc.nthr = 2, fc.prepack = prepack, fc.b_trans = prepack, fc.a_trans = (int)i & 1;
                run_float_case(uk, &fc);
            }
        /* One M block with plain B: B packed per chunk, or (rows with a
         * packing form, B of the kind's type: f32, bf16) strip by strip by
         * the microkernel; several chunks, odd K, items per thread (the next
         * item's first strip fetched ahead), column tails. */
        const int64_t single[][4] = {{MC - 3, 2037, 2 * KC + 7, 2}, {37, 4 * NR + 9, 3 * KC + 1, 1},
                                     {MR + 1, 5000, KC - 3, 2}};
        for (size_t i = 0; i < sizeof single / sizeof single[0]; ++i) {
            float_case fc = plain(single[i][0], single[i][1], single[i][2]);
            fc.nthr = (int)single[i][3];
            run_float_case(uk, &fc);
        }
        /* The same with bf16 A and B on the BF16 kind (the AMX row's
         * packing form takes B from two A strips on): row and column tails,
         * odd K over several chunks, two threads; two A strips (64 rows
         * or fewer: the AMX row packs pairs of B strips), an odd number of
         * strips.  Small shapes: the row's own MC and KC make the cases
         * above large under ASan. */
        const int64_t own[][4] = {{2 * MR + 5, 3 * NR + 7, 2 * KC + 3, 1}, {2 * MR + 6, 1000, 3 * KC + 1, 2},
                                  {2 * MR, 3 * NR + 5, 2 * KC + 3, 1}, {2 * MR - 3, 4 * NR + 40, KC + 5, 2}};
        for (size_t i = 0; kind == PT_GEMM_BF16 && i < sizeof own / sizeof own[0]; ++i) {
            float_case fc = plain(own[i][0], own[i][1], own[i][2]);
            fc.nthr = (int)own[i][3], fc.adt = fc.bdt = dnnl_bf16;
            run_float_case(uk, &fc);
        }
        /* M large enough for the team path (B blocks packed together, M
         * blocks claimed by the threads): several KC chunks, NC blocks
         * (several also in test_int_gemm_small_blocks, built with small
         * blocks), tails; two and three threads, and a run on fewer threads
         * than planned. */
        const int64_t team[][4] = {{16 * MR + 5, 2 * NR + 3, 2 * KC + 5, 2}, {20 * MR, 2100, 37, 2},
                                   {2100, 70, 31, 2},                        {24 * MR + 1, 3 * NR + 7, KC + 3, 3},
                                   {16 * MR + 1, 1, 22000, 2},               {160, 600, 100, 2},
                                   {161, 601, 67, 3}};
        for (size_t i = 0; i < sizeof team / sizeof team[0]; ++i) {
            float_case fc = plain(team[i][0], team[i][1], team[i][2]);
            fc.nthr = (int)team[i][3], fc.a_trans = (int)i & 1, fc.b_trans = i == 1;
            fc.bdt = dts[i % 3];
            run_float_case(uk, &fc);
        }
        float_case fewer = plain(16 * MR + 7, 2 * NR + 1, KC + 9);
        fewer.nthr = 3, fewer.run_nthr = 2;
        run_float_case(uk, &fewer);
        /* Small M on two threads: long K split into partial sums (columns
         * contiguous), column units (k contiguous), batch items. */
        /* Wide rows: accumulator blocks of dense float B span up to 16384
         * columns, several blocks per unit past that. */
        const int64_t skinny[][3] = {{1, 333, 13001}, {3, 129, 12007}, {2, 4099, 600}, {4, 1000, 1100},
                                     {1, 20011, 700},  {3, 6007, 300},   {1, 5000, 2}};
        for (size_t i = 0; i < sizeof skinny / sizeof skinny[0]; ++i)
            for (int bt = 0; bt < 2; ++bt) {
                float_case fc = plain(skinny[i][0], skinny[i][1], skinny[i][2]);
                fc.nthr = 2, fc.b_trans = bt, fc.bdt = dts[i % 3];
                run_float_case(uk, &fc);
            }
        float_case skinny_batched = plain(1, 515, 4100);
        skinny_batched.nbd = 1, skinny_batched.bdims[0] = 3, skinny_batched.nthr = 2;
        run_float_case(uk, &skinny_batched);
        float_case batched = plain(40, 70, 90);
        batched.nbd = 2, batched.bdims[0] = 3, batched.bdims[1] = 2, batched.b_bcast = true, batched.nthr = 2;
        batched.prepack = true;
        run_float_case(uk, &batched);
        batched.prepack = false, batched.b_bcast = false, batched.a_bcast = true;
        run_float_case(uk, &batched);
        printf("  %s: driver checked\n", uk->name);
    }
}

/* Integer weights dequantised into float panels: the driver hands the
 * scales and zero points to the packer (also for prepacked B). */
static void run_dequant_shape(const pt_gemm_ukernel *uk, dnnl_data_type_t bdt, int64_t group, bool prepack, int nthr,
                              int64_t M, int64_t N, int64_t K) {
    const int64_t G = group ? K / group : 1;
    pt_gemm_desc d;
    memset(&d, 0, sizeof d);
    d.kind = uk->kind, d.M = M, d.N = N, d.K = K;
    d.a.dt = dnnl_f32, d.b.dt = bdt;
    d.a.s_row = K, d.a.s_k = 1, d.b.s_row = 1, d.b.s_k = N;
    d.b.dq = (pt_gemm_dequant){true, dnnl_f32, dnnl_u8, group, G, 1, G, 1, dnnl_data_type_undef};
    d.b_constant = prepack;
    float *a = malloc(sizeof(float) * (size_t)(M * K)), *scales = malloc(sizeof(float) * (size_t)(N * G));
    uint8_t *b = malloc((size_t)(K * N)), *zps = malloc((size_t)(N * G));
    for (int64_t i = 0; i < M * K; ++i) a[i] = rnd_unit();
    for (int64_t i = 0; i < K * N; ++i) b[i] = (uint8_t)rnd_u32();
    for (int64_t i = 0; i < N * G; ++i) scales[i] = rnd_unit() / 16, zps[i] = (uint8_t)(rnd_u32() % 16);
    sink s = {M, N, calloc((size_t)(M * N), sizeof(float)), calloc((size_t)(M * N), sizeof(int)), nthr, 0};
    pt_gemm_plan p;
    pt_status st = pt_gemm_plan_init_with(&p, &d, nthr, uk);
    CHECK_EQ_INT(st, dnnl_success);
    if (st == dnnl_success) {
        void *scratch = malloc(pt_gemm_scratch_bytes(&p, nthr)), *packed = NULL;
        pt_gemm_args args = {.a = a, .b = b, .b_scales = scales, .b_zps = zps, .epilogue = sink_epilogue,
                             .epilogue_ctx = &s};
        if (prepack) {
            packed = alloc64(p.packed_b_bytes);
            pt_gemm_pack_b_all(&p, b, scales, zps, packed);
            args.b = NULL, args.b_scales = NULL, args.b_zps = NULL, args.b_packed = packed;
        }
        CHECK_EQ_INT(pt_gemm_run(&p, &args, scratch, nthr), dnnl_success);
        int wrong = 0;
        for (int64_t m = 0; m < M; ++m)
            for (int64_t n = 0; n < N; ++n) {
                double ref = 0, mag = 0;
                for (int64_t k = 0; k < K; ++k) {
                    const int64_t e = k * N + n, g = group ? k / group : 0;
                    int32_t q = bdt == dnnl_s8 ? (int8_t)b[e] : bdt == dnnl_u8 ? b[e]
                              : (b[e / 2] >> (4 * (e & 1))) & 15;
                    if (bdt == dnnl_s4) q = (q ^ 8) - 8;
                    float w = (float)(q - zps[n * G + g]) * scales[n * G + g];
                    if (uk->kind == PT_GEMM_BF16) w = pt_bf16_to_f32(pt_f32_to_bf16(w));
                    double x = uk->kind == PT_GEMM_BF16 ? pt_bf16_to_f32(pt_f32_to_bf16(a[m * K + k])) : a[m * K + k];
                    ref += x * w, mag += fabs(x * w);
                }
                if (s.hits[m * N + n] != 1 || fabs(s.c[m * N + n] - ref) > (double)(K + 2) * 0x1p-23 * mag + 1e-30)
                    ++wrong;
            }
        if (wrong)
            printf("  %s dequant %s group=%lld prepack=%d nthr=%d: %d wrong\n", uk->name, pt_dt_name(bdt),
                   (long long)group, prepack, nthr, wrong);
        CHECK(wrong == 0 && !s.bad_tid);
        free(scratch), free(packed);
    }
    free(a), free(scales), free(b), free(zps), free(s.c), free(s.hits);
}

static void run_dequant_case(const pt_gemm_ukernel *uk, dnnl_data_type_t bdt, int64_t group, bool prepack, int nthr) {
    run_dequant_shape(uk, bdt, group, prepack, nthr, 37, 75, 160);
}

static void test_driver_dequant(void) {
    const pt_gemm_kind kinds[] = {PT_GEMM_F32, PT_GEMM_BF16};
    for (int i = 0; i < 2; ++i) {
        const pt_gemm_ukernel *uk = pt_gemm_ukernel_default(kinds[i]);
        run_dequant_case(uk, dnnl_s8, 0, false, 1);
        run_dequant_case(uk, dnnl_u8, 32, true, 2);
        run_dequant_case(uk, dnnl_s4, 32, false, 2);
        run_dequant_case(uk, dnnl_u4, 0, true, 1);
        /* Small M with K split on two threads: groups straddle the k blocks. */
        run_dequant_shape(uk, dnnl_s4, 224, false, 2, 1, 300, 15008);
        run_dequant_shape(uk, dnnl_u8, 224, false, 2, 2, 150, 15008);
        printf("  %s: integer weights checked\n", uk->name);
    }
}

/* ---- U8S8 ------------------------------------------------------------------------- */

typedef struct {
    int64_t M, N, K;
    dnnl_data_type_t adt;
    int32_t a_zp;
    bool b_zp_on;
    int32_t b_zp;
    bool per_n;
    bool prepack;
    int nthr;
    bool b_k_contiguous; /* B stored [N][K] (k contiguous) instead of [K][N] */
} int_case;

static void run_int_case(const pt_gemm_ukernel *uk, const int_case *ic) {
    pt_gemm_desc d;
    memset(&d, 0, sizeof d);
    d.kind = PT_GEMM_U8S8;
    d.M = ic->M, d.N = ic->N, d.K = ic->K;
    d.a.dt = ic->adt, d.b.dt = dnnl_s8;
    d.a.s_row = ic->K, d.a.s_k = 1, d.b.s_row = 1, d.b.s_k = ic->N;
    if (ic->b_k_contiguous) d.b.s_row = ic->K, d.b.s_k = 1;
    d.q.a_zp = ic->a_zp, d.q.b_zp_on = ic->b_zp_on, d.q.b_zp = ic->b_zp, d.q.b_scale_per_n = ic->per_n;
    d.b_constant = ic->prepack;
    uint8_t *a = malloc((size_t)(ic->M * ic->K));
    int8_t *b = malloc((size_t)(ic->K * ic->N));
    float *scales = malloc(sizeof(float) * (size_t)ic->N);
    for (int64_t i = 0; i < ic->M * ic->K; ++i) a[i] = (uint8_t)rnd_u32();
    for (int64_t i = 0; i < ic->K * ic->N; ++i) b[i] = (int8_t)rnd_u32();
    for (int64_t i = 0; i < ic->N; ++i) scales[i] = 0.25f + (float)(rnd_u32() % 100) / 64.0f;
    const float a_scale = 0.375f;
    sink s = {ic->M, ic->N, calloc((size_t)(ic->M * ic->N), sizeof(float)),
              calloc((size_t)(ic->M * ic->N), sizeof(int)), ic->nthr, 0};
    pt_gemm_plan p;
    pt_status st = pt_gemm_plan_init_with(&p, &d, ic->nthr, uk);
    CHECK_EQ_INT(st, dnnl_success);
    if (st == dnnl_success) {
        void *scratch = malloc(pt_gemm_scratch_bytes(&p, ic->nthr)), *packed = NULL;
        pt_gemm_args args = {.a = a, .b = b, .b_scales = scales, .a_scale = a_scale, .epilogue = sink_epilogue,
                             .epilogue_ctx = &s};
        if (ic->prepack) {
            packed = alloc64(p.packed_b_bytes);
            pt_gemm_pack_b_all(&p, b, scales, NULL, packed);
            args.b = NULL, args.b_packed = packed;
        }
        CHECK_EQ_INT(pt_gemm_run(&p, &args, scratch, ic->nthr), dnnl_success);
        int wrong = 0;
        for (int64_t m = 0; m < ic->M; ++m)
            for (int64_t n = 0; n < ic->N; ++n) {
                int64_t exact = 0;
                for (int64_t k = 0; k < ic->K; ++k) {
                    int64_t av = ic->adt == dnnl_s8 ? (int8_t)a[m * ic->K + k] : a[m * ic->K + k];
                    int64_t bv = b[ic->b_k_contiguous ? n * ic->K + k : k * ic->N + n];
                    exact += (av - ic->a_zp) * (bv - (ic->b_zp_on ? ic->b_zp : 0));
                }
                float want = (float)exact * (a_scale * scales[ic->per_n ? n : 0]);
                if (s.hits[m * ic->N + n] != 1 || s.c[m * ic->N + n] != want) ++wrong;
            }
        if (wrong)
            printf("  %s M=%lld N=%lld K=%lld %s a_zp=%d b_zp=%d/%d per_n=%d prepack=%d nthr=%d bkc=%d: %d wrong\n",
                   uk->name, (long long)ic->M, (long long)ic->N, (long long)ic->K, pt_dt_name(ic->adt), ic->a_zp,
                   ic->b_zp_on, ic->b_zp, ic->per_n, ic->prepack, ic->nthr, ic->b_k_contiguous, wrong);
        CHECK(wrong == 0 && !s.bad_tid);
        free(scratch), free(packed);
    }
    free(a), free(b), free(scales), free(s.c), free(s.hits);
}

static void test_driver_u8s8(void) {
    const pt_gemm_ukernel *uk = NULL;
    for (size_t r = 0; r < pt_gemm_ukernel_count(PT_GEMM_U8S8); ++r)
        if (pt_gemm_ukernel_at(PT_GEMM_U8S8, r)->level == PT_ISA_GENERIC) uk = pt_gemm_ukernel_at(PT_GEMM_U8S8, r);
    CHECK(uk != NULL);
    if (!uk) return;
    const int64_t shapes[][3] = {{1, 1, 1}, {3, 17, 5}, {5, 33, 64}, {17, 15, 130}, {70, 90, 600}, {129, 300, 77}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; ++i)
        for (int v = 0; v < 4; ++v) {
            int_case ic = {shapes[i][0], shapes[i][1], shapes[i][2], v & 1 ? dnnl_s8 : dnnl_u8,
                           (int32_t)rnd_range(-20, 140), v & 2, (int32_t)rnd_range(-9, 9), (v + (int)i) & 1,
                           (v + (int)i) % 3 == 0, 1 + (int)(i >= 4), false};
            if (ic.adt == dnnl_s8) ic.a_zp = (int32_t)rnd_range(-100, 100);
            run_int_case(uk, &ic);
        }
    printf("  %s: U8S8 driver checked\n", uk->name);
    /* Every row this CPU runs on two or three threads, M large enough for
     * the team path (B blocks and column sums shared), zero points on both
     * sides, several KC chunks and tails. */
    for (size_t r = 0; r < pt_gemm_ukernel_count(PT_GEMM_U8S8); ++r) {
        const pt_gemm_ukernel *row = pt_gemm_ukernel_at(PT_GEMM_U8S8, r);
        if (!row_runs(row)) continue;
        const int64_t team[][4] = {{16 * row->mr + 3, 2 * row->nr + 5, 1500, 2}, {24 * row->mr, 3 * row->nr + 1, 400, 3},
                                   {2100, 33, 64, 2}, {160, 600, 100, 2}};
        for (size_t i = 0; i < sizeof team / sizeof team[0]; ++i) {
            int_case ic = {team[i][0], team[i][1], team[i][2], i & 1 ? dnnl_s8 : dnnl_u8, (int32_t)rnd_range(1, 140),
                           true, (int32_t)rnd_range(-9, 9), i != 1, false, (int)team[i][3], false};
            if (ic.adt == dnnl_s8) ic.a_zp = (int32_t)rnd_range(-100, 100);
            run_int_case(row, &ic);
        }
        /* One M block (B packed per chunk, by the packing form where the row
         * has one): several KC chunks, a last chunk ending in a partial quad,
         * column tails, zero points on both sides (column and row sums). */
        const int64_t single[][4] = {{3 * row->mr + 5, 2 * row->nr + 7, 2103, 1}, {row->mr + 1, 5 * row->nr + 3, 1203, 2},
                                     {7, 9, 13, 1}};
        for (size_t i = 0; i < sizeof single / sizeof single[0]; ++i) {
            int_case ic = {single[i][0], single[i][1], single[i][2], i & 1 ? dnnl_s8 : dnnl_u8,
                           (int32_t)rnd_range(1, 140), true, (int32_t)rnd_range(-9, 9), i != 1, false, (int)single[i][3], false};
            if (ic.adt == dnnl_s8) ic.a_zp = (int32_t)rnd_range(-100, 100);
            run_int_case(row, &ic);
        }
    }
}

/* The small-M integer path (AVX-512 VNNI; elsewhere these shapes take the
 * packed path and the same checks hold): M 1..4, K around multiples of 4
 * and 64 and past the A chunk, column blocks of 64 with tails, both B
 * layouts, u8 / s8 A, zero points on either side, one scale or one per
 * column, one and two threads; bit for bit as the packed path rounds. */
static void test_gemv_u8s8(void) {
    const pt_gemm_ukernel *uk = pt_gemm_ukernel_default(PT_GEMM_U8S8);
    const bool vnni = pt_cpu_row_usable(PT_ISA_AVX512, PT_CPU_AVX512_VNNI, pt_isa_cap());
    static const int64_t ns[] = {1, 3, 63, 64, 65, 130, 1000}, ks[] = {1, 3, 4, 5, 63, 64, 65, 700, 4100};
    int c = 0;
    for (int64_t M = 1; M <= PT_GEMV_MAX_M; ++M)
        for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ++ni)
            for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ++ki, ++c) {
                if (ns[ni] * ks[ki] > 300000 && M > 1 && c % 3) continue; /* keep the naive check short */
                int_case ic = {M, ns[ni], ks[ki], c % 2 ? dnnl_s8 : dnnl_u8, (int32_t)rnd_range(0, 140), c % 3 != 0,
                               (int32_t)rnd_range(-9, 9), c % 4 < 2, false, 1 + c % 2, c % 5 < 2};
                if (ic.adt == dnnl_s8) ic.a_zp = (int32_t)rnd_range(-100, 100);
                if (c % 7 == 0) ic.a_zp = 0;
                pt_gemm_desc d;
                memset(&d, 0, sizeof d);
                d.kind = PT_GEMM_U8S8, d.M = ic.M, d.N = ic.N, d.K = ic.K, d.a.dt = ic.adt, d.b.dt = dnnl_s8;
                d.b.s_row = ic.b_k_contiguous ? ic.K : 1, d.b.s_k = ic.b_k_contiguous ? 1 : ic.N;
                CHECK(pt_gemm_gemv_supported(&d) == vnni);
                run_int_case(uk, &ic);
            }
    printf("  U8S8 small-M path (%s): %d cases checked\n", vnni ? "VNNI" : "packed, no VNNI here", c);
}

/* ---- dual runs: two B sharing A ---------------------------------------------------- */

typedef struct {
    sink one, two;
} dual_sink;

static void dual_epilogue(void *ctx, int64_t b, int64_t m0, int64_t n0, int64_t mlen, int64_t nlen, float *c,
                          float *c2, int64_t ldc, int tid) {
    dual_sink *s = ctx;
    sink_epilogue(&s->one, b, m0, n0, mlen, nlen, c, ldc, tid);
    sink_epilogue(&s->two, b, m0, n0, mlen, nlen, c2, ldc, tid);
}

/* A dual run gives, bit for bit, the two products run one at a time (the
 * same sums in the same order), every element once. */
static void run_dual_case(const pt_gemm_ukernel *uk, int64_t M, int64_t N, int64_t K, dnnl_data_type_t bdt,
                          bool b_trans, int nthr) {
    pt_gemm_desc d;
    memset(&d, 0, sizeof d);
    d.kind = uk->kind, d.M = M, d.N = N, d.K = K;
    d.a.dt = dnnl_f32, d.b.dt = bdt;
    d.a.s_row = K, d.a.s_k = 1;
    d.b.s_row = b_trans ? K : 1, d.b.s_k = b_trans ? 1 : N;
    void *a = malloc(4 * (size_t)(M * K)), *b1 = malloc(4 * (size_t)(K * N)), *b2 = malloc(4 * (size_t)(K * N));
    for (int64_t i = 0; i < M * K; ++i) store_as(a, dnnl_f32, i, rnd_unit());
    for (int64_t i = 0; i < K * N; ++i) store_as(b1, bdt, i, rnd_unit()), store_as(b2, bdt, i, rnd_unit());
    const size_t cn = (size_t)(M * N);
    dual_sink ds = {{M, N, calloc(cn, sizeof(float)), calloc(cn, sizeof(int)), nthr, 0},
                    {M, N, calloc(cn, sizeof(float)), calloc(cn, sizeof(int)), nthr, 0}};
    sink s1 = {M, N, calloc(cn, sizeof(float)), calloc(cn, sizeof(int)), nthr, 0};
    sink s2 = {M, N, calloc(cn, sizeof(float)), calloc(cn, sizeof(int)), nthr, 0};
    pt_gemm_plan single, dual;
    CHECK_EQ_INT(pt_gemm_plan_init_with(&single, &d, nthr, uk), dnnl_success);
    d.dual = true;
    const pt_status st = pt_gemm_plan_init_with(&dual, &d, nthr, uk);
    /* Declined only where B is not packed per chunk: several M blocks, or
     * the small-M path (blocks of test_int_gemm_small_blocks). */
    CHECK(st == dnnl_success || (st == dnnl_unimplemented && (single.mblocks > 1 || M <= PT_GEMV_MAX_M)));
    if (st != dnnl_success) {
        free(a), free(b1), free(b2);
        free(ds.one.c), free(ds.one.hits), free(ds.two.c), free(ds.two.hits), free(s1.c), free(s1.hits), free(s2.c),
                free(s2.hits);
        return;
    }
    void *scratch = malloc(pt_gemm_scratch_bytes(&dual, nthr) + pt_gemm_scratch_bytes(&single, nthr));
    pt_gemm_args args = {.a = a, .b = b1, .b2 = b2, .epilogue2 = dual_epilogue, .epilogue_ctx = &ds};
    CHECK_EQ_INT(pt_gemm_run(&dual, &args, scratch, nthr), dnnl_success);
    pt_gemm_args one = {.a = a, .b = b1, .epilogue = sink_epilogue, .epilogue_ctx = &s1};
    CHECK_EQ_INT(pt_gemm_run(&single, &one, scratch, nthr), dnnl_success);
    one.b = b2, one.epilogue_ctx = &s2;
    CHECK_EQ_INT(pt_gemm_run(&single, &one, scratch, nthr), dnnl_success);
    int bad = 0;
    for (size_t i = 0; i < cn; ++i)
        bad += ds.one.hits[i] != 1 || ds.two.hits[i] != 1 || memcmp(&ds.one.c[i], &s1.c[i], 4) != 0 ||
               memcmp(&ds.two.c[i], &s2.c[i], 4) != 0;
    if (bad)
        printf("  %s dual M=%lld N=%lld K=%lld %s b_trans=%d nthr=%d: %d wrong\n", uk->name, (long long)M,
               (long long)N, (long long)K, pt_dt_name(bdt), b_trans, nthr, bad);
    CHECK(bad == 0 && !ds.one.bad_tid && !ds.two.bad_tid);
    /* A missing second B or epilogue is refused. */
    args.b2 = NULL;
    CHECK_EQ_INT(pt_gemm_run(&dual, &args, scratch, nthr), dnnl_invalid_arguments);
    free(scratch), free(a), free(b1), free(b2);
    free(ds.one.c), free(ds.one.hits), free(ds.two.c), free(ds.two.hits), free(s1.c), free(s1.hits), free(s2.c),
            free(s2.hits);
}

static void test_driver_dual(pt_gemm_kind kind) {
    for (size_t r = 0; r < pt_gemm_ukernel_count(kind); ++r) {
        const pt_gemm_ukernel *uk = pt_gemm_ukernel_at(kind, r);
        if (!row_runs(uk)) continue;
        pt_gemm_desc probe = square_probe(kind);
        pt_gemm_plan pp;
        /* One thread: MC as an M block off the team path (whose blocks are smaller). */
        CHECK_EQ_INT(pt_gemm_plan_init_with(&pp, &probe, 1, uk), dnnl_success);
        const int64_t KC = pp.KC, MC = pp.MC; /* one M block: M up to MC */
        probe.dual = true;
        /* Packed per chunk or by the microkernel (plain f32 B), several
         * chunks, runs and items, column tails, other B types and k-major B. */
        run_dual_case(uk, MC < 37 ? MC : 37, 2 * uk->nr + 5, 2 * KC + 3, dnnl_f32, false, 2);
        run_dual_case(uk, 5, 3000, KC - 1, dnnl_f32, false, 1);
        run_dual_case(uk, MC < uk->mr + 1 ? MC : uk->mr + 1, 1100, 70, dnnl_bf16, false, 2);
        run_dual_case(uk, MC < 17 ? MC : 17, 3 * uk->nr + 1, KC + 9, dnnl_f32, true, 2);
        /* One M block past the small-M path: the plan takes it. */
        probe.M = MC;
        if (MC > 4) CHECK_EQ_INT(pt_gemm_plan_init_with(&pp, &probe, 2, uk), dnnl_success);
        /* Where B is not packed per chunk, the plan declines. */
        probe.M = 4096; /* several M blocks */
        CHECK_EQ_INT(pt_gemm_plan_init_with(&pp, &probe, 2, uk), dnnl_unimplemented);
        probe.M = 64, probe.b_constant = true;
        CHECK_EQ_INT(pt_gemm_plan_init_with(&pp, &probe, 2, uk), dnnl_unimplemented);
        printf("  %s: dual runs checked\n", uk->name);
    }
}

/* ---- what the engine declines ------------------------------------------------------- */

static void test_declined(void) {
    pt_gemm_desc d;
    memset(&d, 0, sizeof d);
    d.kind = PT_GEMM_U8S8, d.M = d.N = d.K = 8;
    d.a.dt = dnnl_f32, d.b.dt = dnnl_s8;
    d.a.s_row = 8, d.a.s_k = 1, d.b.s_row = 1, d.b.s_k = 8;
    pt_gemm_plan p;
    CHECK_EQ_INT(pt_gemm_plan_init(&p, &d, 1), dnnl_unimplemented);
    d.kind = PT_GEMM_F32;
    CHECK_EQ_INT(pt_gemm_plan_init(&p, &d, 1), dnnl_success);
    d.nbd = 1, d.bdims[0] = 2, d.b_bs[0] = 64, d.b_constant = true;
    CHECK_EQ_INT(pt_gemm_plan_init(&p, &d, 1), dnnl_unimplemented);
    d.b_constant = false;
    CHECK_EQ_INT(pt_gemm_plan_init(&p, &d, 1), dnnl_success);
    d.K = 0;
    CHECK_EQ_INT(pt_gemm_plan_init(&p, &d, 1), dnnl_unimplemented);
}

/* pt_gemm_ukernel_for_shape: the default row, except that an AMX default
 * gives way to the best row without a_prep for one tile step of K or at
 * most 16 rows (and never to a row the CPU cannot run). */
static void test_for_shape(void) {
    const pt_gemm_kind kinds[3] = {PT_GEMM_F32, PT_GEMM_BF16, PT_GEMM_U8S8};
    for (int v = 0; v < 3; ++v) {
        const pt_gemm_ukernel *d = pt_gemm_ukernel_default(kinds[v]);
        const int64_t step = 16 * (int64_t)d->kg;
        CHECK(pt_gemm_ukernel_for_shape(kinds[v], 1024, 1024) == d);
        const pt_gemm_ukernel *shapes[3] = {pt_gemm_ukernel_for_shape(kinds[v], 1024, step),
                                            pt_gemm_ukernel_for_shape(kinds[v], d->mr / 2, 1024),
                                            pt_gemm_ukernel_for_shape(kinds[v], 1, 1)};
        for (int s = 0; s < 3; ++s) {
            CHECK(shapes[s] != NULL && shapes[s]->kind == kinds[v]);
            if (!d->a_prep) {
                CHECK(shapes[s] == d);
                continue;
            }
            CHECK(shapes[s]->a_prep == NULL);
            CHECK(pt_cpu_row_usable(shapes[s]->level, shapes[s]->features, pt_isa()));
        }
        if (d->a_prep) CHECK(pt_gemm_ukernel_for_shape(kinds[v], d->mr / 2 + 1, step + 1) == d);
    }
}

int main(void) {
    printf("ISA %s\n", pt_isa_name(pt_isa()));
    test_for_shape();
    test_ukernels(PT_GEMM_F32);
    test_ukernels(PT_GEMM_BF16);
    test_pack_special();
    test_driver_float(PT_GEMM_F32);
    test_driver_float(PT_GEMM_BF16);
    test_driver_dual(PT_GEMM_F32);
    test_driver_dual(PT_GEMM_BF16);
    test_driver_dequant();
    test_driver_u8s8();
    test_gemv_u8s8();
    test_declined();
    return pt_test_summary("test_int_gemm");
}
