/* The integer side of the GEMM engine, each piece called directly (no
 * driver): every U8S8 microkernel row this CPU can run against an integer
 * reference on random panels with row / column tails; the integer packer
 * (U8S8 A and B with the s8 -> u8 shift and row sums; s4 / u4 / s8 / u8
 * weights dequantised into F32 and BF16 panels with every scale and
 * zero-point form) bit for bit against a scalar re-statement of the panel
 * layout; and the small-M path for every B type, layout, dequantisation and
 * rounding mode against a double-precision loop.  Run also under
 * PARTITA_ISA=generic and =avx2 (tests/CMakeLists.txt). */
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

/* ---- helpers ------------------------------------------------------------------ */

static uint64_t g_rng = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void) {
    g_rng = g_rng * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(g_rng >> 33);
}
static int rnd_in(int lo, int hi) { return lo + (int)(rnd() % (uint32_t)(hi - lo + 1)); }
static float rnd_float(void) { return (float)((int)(rnd() % 2001) - 1000) / 997.0f; }

static void *aligned_zalloc(size_t bytes) {
    size_t n = (bytes + 63) / 64 * 64 + 64;
    void *p = aligned_alloc(64, n);
    memset(p, 0, n);
    return p;
}

/* Fills n bytes with random integers of type dt (4-bit: two per byte). */
static void fill_int(void *p, dnnl_data_type_t dt, int64_t elems) {
    uint8_t *b = p;
    int64_t bytes = pt_dt_bits(dt) == 4 ? (elems + 1) / 2 : elems * pt_dt_bits(dt) / 8;
    for (int64_t i = 0; i < bytes; ++i) b[i] = (uint8_t)rnd();
}

/* Independent restatements of the element formats. */
static int32_t ref_int(const void *p, dnnl_data_type_t dt, int64_t e) {
    const uint8_t *b = p;
    switch (dt) {
    case dnnl_s8: return (int8_t)b[e];
    case dnnl_u8: return b[e];
    case dnnl_s32: {
        int32_t v;
        memcpy(&v, b + 4 * e, 4);
        return v;
    }
    case dnnl_s4: {
        int v = (b[e / 2] >> (4 * (e % 2))) & 15;
        return v >= 8 ? v - 16 : v;
    }
    case dnnl_u4: return (b[e / 2] >> (4 * (e % 2))) & 15;
    default: return 0;
    }
}

static float ref_float(const void *p, dnnl_data_type_t dt, int64_t e) {
    switch (dt) {
    case dnnl_bf16: return pt_bf16_to_f32(((const uint16_t *)p)[e]);
    case dnnl_f16: return pt_f16_to_f32(((const uint16_t *)p)[e]);
    default: return ((const float *)p)[e];
    }
}

static void store_float(void *p, dnnl_data_type_t dt, int64_t e, float v) {
    switch (dt) {
    case dnnl_bf16: ((uint16_t *)p)[e] = pt_f32_to_bf16(v); break;
    case dnnl_f16: ((uint16_t *)p)[e] = pt_f32_to_f16(v); break;
    default: ((float *)p)[e] = v; break;
    }
}

static size_t dt_bytes(dnnl_data_type_t dt, int64_t elems) { return pt_dt_bytes(dt, elems) + 8; }

/* Dequantised weight (row n, k) of operand o. */
static float ref_dequant(const pt_gemm_operand *o, const void *data, const void *sc, const void *zp, int64_t n,
                         int64_t k) {
    int32_t q = ref_int(data, o->dt, n * o->s_row + k * o->s_k);
    if (!o->dq.on) return (float)q;
    const pt_gemm_dequant *d = &o->dq;
    int64_t g = d->group ? k / d->group : 0;
    int32_t z = d->zp_dt == dnnl_data_type_undef ? 0 : ref_int(zp, d->zp_dt, n * d->zp_sn + g * d->zp_sg);
    const float v = (float)(q - z) * ref_float(sc, d->scale_dt, n * d->sc_sn + g * d->sc_sg);
    return pt_round_to_dt(d->round_dt, v);
}

/* The declared type dequantised values are rounded to, in turn. */
static const dnnl_data_type_t k_round_dts[3] = {dnnl_data_type_undef, dnnl_f16, dnnl_bf16};

/* Scale / zero-point tensors for nrows x K weights in one of five forms:
 * 0 per tensor, 1 per column, 2 per group [g][n], 3 per group [n][g], 4 per
 * group [g] (every row the same: a V scaled per key). */
typedef struct {
    pt_gemm_dequant dq;
    void *scales, *zps;
} dq_case;

static dq_case make_dq(int form, int64_t nrows, int64_t K, int64_t group, dnnl_data_type_t sdt,
                       dnnl_data_type_t zdt) {
    dq_case c;
    memset(&c, 0, sizeof c);
    c.dq.on = true;
    c.dq.scale_dt = sdt;
    c.dq.zp_dt = zdt;
    int64_t ng = 1;
    if (form >= 2) c.dq.group = group, ng = (K + group - 1) / group;
    if (form == 1) c.dq.sc_sn = c.dq.zp_sn = 1;
    if (form == 2) c.dq.sc_sn = c.dq.zp_sn = 1, c.dq.sc_sg = c.dq.zp_sg = nrows;
    if (form == 3) c.dq.sc_sn = c.dq.zp_sn = ng, c.dq.sc_sg = c.dq.zp_sg = 1;
    if (form == 4) c.dq.sc_sg = c.dq.zp_sg = 1; /* per group along k, the same for every row */
    int64_t n = nrows * ng;
    c.scales = aligned_zalloc(dt_bytes(dnnl_f32, n));
    for (int64_t i = 0; i < n; ++i) store_float(c.scales, sdt, i, (float)rnd_in(1, 64) / 128.0f * (rnd() % 2 ? 1 : -1));
    c.zps = aligned_zalloc(dt_bytes(dnnl_s32, n));
    if (zdt == dnnl_s32)
        for (int64_t i = 0; i < n; ++i) ((int32_t *)c.zps)[i] = rnd_in(-300, 300);
    else if (zdt != dnnl_data_type_undef)
        fill_int(c.zps, zdt, n);
    return c;
}

static void free_dq(dq_case *c) { free(c->scales), free(c->zps); }

static const dnnl_data_type_t k_scale_dts[] = {dnnl_f32, dnnl_bf16, dnnl_f16};
static const dnnl_data_type_t k_zp_dts[] = {dnnl_data_type_undef, dnnl_s8, dnnl_u8, dnnl_s4, dnnl_u4, dnnl_s32};
static const dnnl_data_type_t k_weight_dts[] = {dnnl_s8, dnnl_u8, dnnl_s4, dnnl_u4};

/* ---- 1. U8S8 microkernels ----------------------------------------------------- */

/* The packing form (pt_gemm_ukr_packing_fn): s8 B read from source rows
 * (ld apart, kc_real of them, a pattern past the ncols valid columns that
 * it must not read) gives the tile run gives on the panel with the columns
 * past nr and the k past kc_real zeroed, bit for bit, writes the panels of
 * all ncols columns (ncols past NR: the next strip's panel too, for rows
 * that pack two), and their column sums.  A as a_prep leaves it; B's
 * values from the panel b, a second strip's from b2. */
static void check_u8s8_packing_form(const pt_gemm_ukernel *uk, int64_t kc_real, const uint8_t *a, const int8_t *b,
                                    const int8_t *b2, const int32_t *c0, int64_t ldc, int mr, int ncols,
                                    int accumulate) {
    const int MR = uk->mr, NR = uk->nr, nr = ncols < NR ? ncols : NR;
    const int64_t kcp = (kc_real + 3) & ~(int64_t)3, ld = 2 * NR + 5, panel = kcp * NR;
    int8_t *src = malloc((size_t)(kc_real * ld)), *want = aligned_zalloc((size_t)(2 * panel));
    int8_t *got = aligned_zalloc((size_t)(2 * panel));
    uint8_t *ap = aligned_zalloc((size_t)(kcp * MR));
    const size_t cbytes = sizeof(int32_t) * (size_t)(MR * ldc);
    int32_t *c_want = malloc(cbytes), *c_got = malloc(cbytes), sums_want[128] = {0}, sums_got[128];
    for (int64_t k = 0; k < kc_real; ++k)
        for (int64_t j = 0; j < ld; ++j) {
            const int64_t jj = j % NR, at = (k / 4) * NR * 4 + jj * 4 + k % 4;
            const int8_t v = j < NR ? b[at] : b2[at];
            src[k * ld + j] = j < ncols ? v : (int8_t)(0x5b ^ (int)j);
            if (j < ncols) want[(j / NR) * panel + at] = v, sums_want[j] += v;
        }
    memset(got, 0x5a, (size_t)(2 * panel));
    for (int j = 0; j < 128; ++j) sums_got[j] = -7;
    memcpy(ap, a, (size_t)(kcp * MR));
    uk->a_prep(ap, kcp);
    memcpy(c_want, c0, cbytes), memcpy(c_got, c0, cbytes);
    uk->run(kcp, a, want, c_want, ldc, mr, nr, accumulate);
    uk->run_packing(kc_real, ap, src, ld, ncols, got, sums_got, c_got, ldc, mr, nr, accumulate, NULL);
    pt_test_count(memcmp(c_got, c_want, cbytes) == 0, __FILE__, __LINE__,
                  "%s run_packing kc=%lld mr=%d cols=%d acc=%d: tile differs from run", uk->name, (long long)kc_real,
                  mr, ncols, accumulate);
    pt_test_count(memcmp(got, want, (size_t)(ncols > NR ? 2 * panel : panel)) == 0, __FILE__, __LINE__,
                  "%s run_packing kc=%lld cols=%d: panels differ from packing", uk->name, (long long)kc_real, ncols);
    pt_test_count(memcmp(sums_got, sums_want, sizeof(int32_t) * (size_t)ncols) == 0, __FILE__, __LINE__,
                  "%s run_packing kc=%lld cols=%d: column sums differ", uk->name, (long long)kc_real, ncols);
    free(src), free(want), free(got), free(ap), free(c_want), free(c_got);
}

static void test_u8s8_ukernel(const pt_gemm_ukernel *uk) {
    const int MR = uk->mr, NR = uk->nr;
    static const int64_t kcs[] = {4, 8, 20, 132};
    for (size_t t = 0; t < sizeof kcs / sizeof kcs[0]; ++t) {
        int64_t kc = kcs[t];
        uint8_t *a = aligned_zalloc((size_t)(kc * MR));
        int8_t *b = aligned_zalloc((size_t)(kc * NR)), *b2 = aligned_zalloc((size_t)(kc * NR));
        for (int64_t i = 0; i < kc * MR; ++i) a[i] = (uint8_t)rnd();
        for (int64_t i = 0; i < kc * NR; ++i) b[i] = (int8_t)rnd(), b2[i] = (int8_t)rnd();
        /* The extremes at one position, where saturating shortcuts fail. */
        for (int q = 0; q < 4; ++q) a[q] = 255, b[q] = -128;
        const int64_t ldc = NR + 3;
        int32_t *c = aligned_zalloc(sizeof(int32_t) * (size_t)(MR * ldc + 8));
        /* 8 and 9: the edges of the AVX-512 kernel's 8-row variant. */
        int mrs[] = {MR, 1, MR - 1 > 0 ? MR - 1 : 1, MR < 8 ? MR : 8, MR < 9 ? MR : 9},
            nrs[] = {NR, 1, NR / 2 + 1, NR - 1 > 0 ? NR - 1 : 1};
        for (int im = 0; im < 5; ++im)
            for (int in = 0; in < 4; ++in)
                for (int accumulate = 0; accumulate < 2; ++accumulate) {
                    int mr = mrs[im], nr = nrs[in], bad = 0;
                    for (int64_t i = 0; i < MR * ldc; ++i) c[i] = (int32_t)(i * 7 - 1000);
                    uk->run(kc, a, b, c, ldc, mr, nr, accumulate);
                    {
                        const size_t cb = sizeof(int32_t) * (size_t)(MR * ldc);
                        int32_t *init = malloc(cb);
                        for (int64_t i = 0; i < MR * ldc; ++i) init[i] = (int32_t)(i * 7 - 1000);
                        check_prefetch_form(uk, kc, a, b, init, c, cb, ldc, mr, nr, accumulate, b);
                        if (uk->run_packing) { /* k counts that end in a partial quad too */
                            const int64_t kr = kc - (int64_t)(t % 4);
                            check_u8s8_packing_form(uk, kr, a, b, b2, init, ldc, mr, nr, accumulate);
                            if (uk->packing_strips == 2) /* the second strip full, then partial */
                                check_u8s8_packing_form(uk, kr, a, b, b2, init, ldc, mr, NR + (in ? nr : NR),
                                                        accumulate);
                        }
                        if (uk->a_prep) { /* A transformed once by the driver: the same sums */
                            uint8_t *ap = aligned_zalloc((size_t)(kc * MR));
                            memcpy(ap, a, (size_t)(kc * MR));
                            uk->a_prep(ap, kc);
                            uk->run_prepped(kc, ap, b, init, ldc, mr, nr, accumulate);
                            pt_test_count(memcmp(init, c, cb) == 0, __FILE__, __LINE__, "%s prepped kc=%lld",
                                          uk->name, (long long)kc);
                            free(ap);
                        }
                        free(init);
                    }
                    for (int i = 0; i < MR; ++i)
                        for (int j = 0; j < ldc; ++j) {
                            int32_t before = (int32_t)((i * ldc + j) * 7 - 1000), want = before;
                            if (i < mr && j < nr) {
                                int32_t s = 0;
                                for (int64_t k = 0; k < kc; ++k)
                                    s += (int32_t)a[(k / 4) * MR * 4 + i * 4 + k % 4] *
                                         (int32_t)b[(k / 4) * NR * 4 + j * 4 + k % 4];
                                want = accumulate ? before + s : s;
                            }
                            bad += c[i * ldc + j] != want;
                        }
                    pt_test_count(bad == 0, __FILE__, __LINE__, "%s kc=%lld mr=%d nr=%d acc=%d: %d wrong", uk->name,
                                  (long long)kc, mr, nr, accumulate, bad);
                }
        free(a), free(b), free(b2), free(c);
    }
}

static void test_u8s8_ukernels(void) {
    size_t n = pt_gemm_ukernel_count(PT_GEMM_U8S8);
    CHECK(n >= 1);
    for (size_t i = 0; i < n; ++i) {
        const pt_gemm_ukernel *uk = pt_gemm_ukernel_at(PT_GEMM_U8S8, i);
        CHECK(uk->kind == PT_GEMM_U8S8 && uk->kg == 4);
        if (!pt_cpu_row_usable(uk->level, uk->features, pt_isa_cap())) {
            printf("skip %s: not usable on this CPU under PARTITA_ISA=%s\n", uk->name, pt_isa_name(pt_isa_cap()));
            continue;
        }
        test_u8s8_ukernel(uk);
    }
}

/* ---- 2. integer packer ----------------------------------------------------------- */

/* Source strides of a rows x K operand: 0 k contiguous, 1 rows contiguous,
 * 2 both strided. */
static void pick_strides(int layout, int64_t rows, int64_t K, int64_t *s_row, int64_t *s_k) {
    if (layout == 0) *s_k = 1, *s_row = K + rnd_in(0, 5);
    else if (layout == 1) *s_row = 1, *s_k = rows + rnd_in(0, 5);
    else *s_k = rnd_in(2, 3), *s_row = *s_k * K + rnd_in(1, 3);
}

static int64_t extent(int64_t rows, int64_t K, int64_t s_row, int64_t s_k) {
    return (rows - 1) * s_row + (K - 1) * s_k + 1;
}

/* Packs rows [r0, r0 + rows) x k [k0, k0 + kc) and compares every panel
 * element (padding included) and the sums with the reference. */
static void check_pack(const pt_gemm_ukernel *uk, bool is_b, const pt_gemm_operand *o, const void *data,
                       const dq_case *dqc, int64_t r0, int64_t rows, int64_t k0, int64_t kc, const char *what) {
    const int R = is_b ? uk->nr : uk->mr, kg = uk->kg;
    const int64_t kcp = (kc + kg - 1) / kg * kg, strips = (rows + R - 1) / R, elems = strips * R * kcp;
    const size_t eb = pt_gemm_panel_elem_bytes(uk->kind);
    uint8_t *dst = aligned_zalloc((size_t)elems * eb);
    memset(dst, 0xa5, (size_t)elems * eb);
    int32_t *sums = calloc((size_t)rows + 1, sizeof(int32_t)), *want_sums = calloc((size_t)rows + 1, sizeof(int32_t));
    sums[rows] = 12345;
    const void *sc = dqc ? dqc->scales : NULL, *zp = dqc ? dqc->zps : NULL;
    pt_gemm_pack_panels_int(uk, is_b, o, data, sc, zp, r0, rows, k0, kc, dst, uk->kind == PT_GEMM_U8S8 ? sums : NULL);
    int bad = 0;
    for (int64_t s = 0; s < strips; ++s)
        for (int64_t k = 0; k < kcp; ++k)
            for (int r = 0; r < R; ++r) {
                int64_t row = s * R + r, at = s * R * kcp + (k / kg) * R * kg + r * kg + k % kg;
                bool in = row < rows && k < kc;
                if (uk->kind == PT_GEMM_U8S8) {
                    int32_t v = in ? ref_int(data, o->dt, (r0 + row) * o->s_row + (k0 + k) * o->s_k) : 0;
                    if (in && !is_b && o->dt == dnnl_s8) v += 128;
                    if (in) want_sums[row] += v;
                    int32_t got = is_b ? ((int8_t *)dst)[at] : ((uint8_t *)dst)[at];
                    bad += got != v;
                } else {
                    float v = in ? ref_dequant(o, data, sc, zp, r0 + row, k0 + k) : 0.0f;
                    if (uk->kind == PT_GEMM_BF16) bad += ((uint16_t *)dst)[at] != pt_f32_to_bf16(v);
                    else bad += memcmp(&((float *)dst)[at], &v, 4) != 0;
                }
            }
    if (uk->kind == PT_GEMM_U8S8) {
        for (int64_t r = 0; r < rows; ++r) bad += sums[r] != want_sums[r];
        bad += sums[rows] != 12345;
    }
    pt_test_count(bad == 0, __FILE__, __LINE__,
                  "pack %s %s %s s_row=%lld s_k=%lld r0=%lld rows=%lld k0=%lld kc=%lld: %d wrong", uk->name,
                  is_b ? "B" : "A", what, (long long)o->s_row, (long long)o->s_k, (long long)r0, (long long)rows,
                  (long long)k0, (long long)kc, bad);
    free(dst), free(sums), free(want_sums);
}

static void test_pack_u8s8(void) {
    for (size_t i = 0; i < pt_gemm_ukernel_count(PT_GEMM_U8S8); ++i) {
        const pt_gemm_ukernel *uk = pt_gemm_ukernel_at(PT_GEMM_U8S8, i);
        /* Several draws, K past 2 x 64 and rows past 256: the AVX-512
         * packers have 64-k and 16-k steps, 16-row blocks and groups of
         * strips with their own tails. */
        for (int rep = 0; rep < 6; ++rep) {
            for (int layout = 0; layout < 3; ++layout)
                for (int side = 0; side < 5; ++side) {
                    /* side 0: A u8, 1: A s8, 2: B s8, 3: B s4, 4: B u4 */
                    bool is_b = side >= 2;
                    const int R = is_b ? uk->nr : uk->mr;
                    int64_t rows = rep < 3 ? rnd_in(1, 3 * R + 5) : rnd_in(257, 556), K = rnd_in(1, rep < 3 ? 150 : 300);
                    int64_t r0 = rnd_in(0, 7), k0 = rnd_in(0, 9), RT = r0 + rows, KT = k0 + K;
                    pt_gemm_operand o;
                    memset(&o, 0, sizeof o);
                    o.dt = (dnnl_data_type_t[]){dnnl_u8, dnnl_s8, dnnl_s8, dnnl_s4, dnnl_u4}[side];
                    pick_strides(layout, RT, KT, &o.s_row, &o.s_k);
                    int64_t n = extent(RT, KT, o.s_row, o.s_k);
                    void *data = aligned_zalloc(dt_bytes(o.dt, n));
                    fill_int(data, o.dt, n);
                    check_pack(uk, is_b, &o, data, NULL, r0, rows, k0, K, pt_dt_name(o.dt));
                    free(data);
                }
        }
    }
}

static void test_pack_dequant(void) {
    int combo = 0;
    for (int kind = PT_GEMM_F32; kind <= PT_GEMM_BF16; ++kind)
        for (size_t i = 0; i < pt_gemm_ukernel_count((pt_gemm_kind)kind); ++i) {
            const pt_gemm_ukernel *uk = pt_gemm_ukernel_at((pt_gemm_kind)kind, i);
            for (int wi = 0; wi < 4; ++wi)
                for (int layout = 0; layout < 3; ++layout)
                    for (int form = -1; form < 5; ++form) {
                        /* form -1: no dequantisation (raw integers). */
                        int64_t rows = rnd_in(1, 2 * uk->nr + 7), K = rnd_in(1, 140);
                        int64_t r0 = rnd_in(0, 6), k0 = rnd_in(0, 11), RT = r0 + rows, KT = k0 + K;
                        int64_t group = (int64_t[]){3, 8, 32, 5}[combo % 4];
                        pt_gemm_operand o;
                        memset(&o, 0, sizeof o);
                        o.dt = k_weight_dts[wi];
                        pick_strides(layout, RT, KT, &o.s_row, &o.s_k);
                        int64_t n = extent(RT, KT, o.s_row, o.s_k);
                        void *data = aligned_zalloc(dt_bytes(o.dt, n));
                        fill_int(data, o.dt, n);
                        dq_case dqc;
                        memset(&dqc, 0, sizeof dqc);
                        if (form >= 0) {
                            dqc = make_dq(form, RT, KT, group, k_scale_dts[combo % 3], k_zp_dts[combo % 6]);
                            dqc.dq.round_dt = k_round_dts[(combo / 3) % 3];
                            o.dq = dqc.dq;
                        }
                        char what[128];
                        snprintf(what, sizeof what, "%s form=%d group=%lld scale=%s zp=%s round=%s", pt_dt_name(o.dt),
                                 form, (long long)group, pt_dt_name(o.dq.scale_dt), pt_dt_name(o.dq.zp_dt),
                                 pt_dt_name(o.dq.round_dt));
                        check_pack(uk, true, &o, data, form >= 0 ? &dqc : NULL, r0, rows, k0, K, what);
                        if (form >= 0) free_dq(&dqc);
                        free(data);
                        ++combo;
                    }
        }
}

/* Strip widths of other microkernels (the packer only reads kind, mr, nr
 * and kg), k offsets on and off the 16 / 32 grid: the vector packer's
 * cases and the ones it leaves to the portable code. */
static void test_pack_dequant_widths(void) {
    static const int widths[] = {16, 32, 48, 24, 8};
    int combo = 0;
    for (int kind = PT_GEMM_F32; kind <= PT_GEMM_BF16; ++kind)
        for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; ++wi)
            for (int di = 0; di < 4; ++di)
                for (int form = -1; form < 5; ++form, ++combo) {
                    pt_gemm_ukernel uk = {"test", (pt_gemm_kind)kind, PT_ISA_GENERIC, 0, 4, widths[wi],
                                          kind == PT_GEMM_BF16 ? 2 : 1, NULL, NULL, NULL, NULL, NULL, 0, NULL, NULL, 1};
                    int64_t rows = rnd_in(1, 3 * widths[wi] + 5), K = rnd_in(1, 150);
                    int64_t k0 = (int64_t[]){0, 32, 64, 7}[combo % 4], r0 = rnd_in(0, 5);
                    int64_t RT = r0 + rows, KT = k0 + K, group = (int64_t[]){32, 64, 128, 48}[combo % 4];
                    pt_gemm_operand o;
                    memset(&o, 0, sizeof o);
                    o.dt = k_weight_dts[di];
                    pick_strides(combo % 5 == 4 ? 2 : 0, RT, KT, &o.s_row, &o.s_k);
                    if (combo % 3 == 0) o.s_row += o.s_row % 2; /* even rows for 4-bit */
                    int64_t n = extent(RT, KT, o.s_row, o.s_k);
                    void *data = aligned_zalloc(dt_bytes(o.dt, n));
                    fill_int(data, o.dt, n);
                    dq_case dqc;
                    memset(&dqc, 0, sizeof dqc);
                    if (form >= 0) {
                        dqc = make_dq(form, RT, KT, group, k_scale_dts[combo % 3], k_zp_dts[combo % 6]);
                        dqc.dq.round_dt = k_round_dts[(combo / 3) % 3];
                        o.dq = dqc.dq;
                    }
                    char what[128];
                    snprintf(what, sizeof what, "nr=%d %s form=%d group=%lld round=%s", widths[wi], pt_dt_name(o.dt),
                             form, (long long)group, pt_dt_name(o.dq.round_dt));
                    check_pack(&uk, true, &o, data, form >= 0 ? &dqc : NULL, r0, rows, k0, K, what);
                    if (form >= 0) free_dq(&dqc);
                    free(data);
                }
}

/* ---- 3. small-M path ------------------------------------------------------------- */

static float round_a(pt_gemm_kind kind, const pt_gemm_operand *o, float v) {
    if (kind == PT_GEMM_BF16) return pt_round_bf16(v);
    return o->dt == dnnl_f32 ? pt_round_fpmath(o->round, v) : v;
}

static void check_gemv(pt_gemm_kind kind, int M, int64_t N, int64_t K, dnnl_data_type_t adt, dnnl_data_type_t bdt,
                       int layout, int dq_form, int64_t group, dnnl_data_type_t sdt, dnnl_data_type_t zdt,
                       dnnl_fpmath_mode_t mode) {
    pt_gemm_desc d;
    memset(&d, 0, sizeof d);
    d.kind = kind, d.M = M, d.N = N, d.K = K;
    d.a.dt = adt, d.a.round = mode;
    d.a.s_k = rnd_in(1, 2), d.a.s_row = d.a.s_k * K + rnd_in(0, 3);
    d.b.dt = bdt, d.b.round = mode;
    if (layout == 0) d.b.s_k = 1, d.b.s_row = K + rnd_in(0, 3);
    else d.b.s_row = 1, d.b.s_k = N + rnd_in(0, 3);
    int64_t an = extent(M, K, d.a.s_row, d.a.s_k), bn = extent(N, K, d.b.s_row, d.b.s_k);
    void *a = aligned_zalloc(dt_bytes(adt, an)), *b = aligned_zalloc(dt_bytes(bdt, bn));
    for (int64_t i = 0; i < an; ++i) store_float(a, adt, i, rnd_float());
    bool is_int = pt_dt_is_int(bdt);
    if (is_int) fill_int(b, bdt, bn);
    else
        for (int64_t i = 0; i < bn; ++i) store_float(b, bdt, i, rnd_float());
    dq_case dqc;
    memset(&dqc, 0, sizeof dqc);
    if (dq_form >= 0) {
        dqc = make_dq(dq_form, N, K, group, sdt, zdt);
        d.b.dq = dqc.dq;
    }
    /* Offered exactly where the AVX-512 kernels run (else the driver packs). */
    bool nibble = bdt == dnnl_s4 || bdt == dnnl_u4;
    bool rare_round = kind == PT_GEMM_F32 && bdt == dnnl_f32 &&
                      (mode == dnnl_fpmath_mode_f16 || mode == dnnl_fpmath_mode_tf32);
    int64_t g = dq_form >= 2 ? group : 0;
    bool fast = layout == 0 ? !(g > 0 && g < 32) && (!nibble || (d.b.s_row % 2 == 0 && g % 32 == 0))
                            : !nibble || d.b.s_k % 2 == 0;
    bool want = pt_isa() >= PT_ISA_AVX512 && !rare_round && fast;
    pt_test_count(pt_gemm_gemv_supported(&d) == want, __FILE__, __LINE__,
                  "gemv_supported b=%s layout=%d group=%lld: %d", pt_dt_name(bdt), layout, (long long)g, (int)want);
    /* A tile of columns [n0, n0 + nlen) written with row stride ldc. */
    int64_t n0 = rnd_in(0, (int)(N / 3)), nlen = N - n0 - rnd_in(0, (int)(N / 4)), ldc = nlen + rnd_in(0, 5);
    float *c = aligned_zalloc(sizeof(float) * (size_t)(M * ldc));
    pt_gemm_gemv_tile(&d, a, b, dqc.scales, dqc.zps, n0, nlen, c, ldc);
    int bad = 0;
    double worst = 0;
    for (int m = 0; m < M; ++m)
        for (int64_t j = 0; j < nlen; ++j) {
            double s = 0, mag = 0;
            for (int64_t k = 0; k < K; ++k) {
                float av = round_a(kind, &d.a, ref_float(a, adt, m * d.a.s_row + k * d.a.s_k));
                float bv = is_int ? ref_dequant(&d.b, b, dqc.scales, dqc.zps, n0 + j, k)
                                  : ref_float(b, bdt, (n0 + j) * d.b.s_row + k * d.b.s_k);
                if (kind == PT_GEMM_BF16) bv = pt_round_bf16(bv);
                else if (bdt == dnnl_f32) bv = pt_round_fpmath(mode, bv);
                s += (double)av * bv, mag += fabs((double)av * bv);
            }
            double err = fabs(c[m * ldc + j] - s), tol = (double)K * 0x1p-23 * mag + 1e-30;
            if (!(err <= tol)) ++bad;
            if (err / (mag + 1e-30) > worst) worst = err / (mag + 1e-30);
        }
    pt_test_count(bad == 0, __FILE__, __LINE__,
                  "gemv kind=%d M=%d N=%lld K=%lld a=%s b=%s layout=%d dq=%d group=%lld scale=%s zp=%s mode=%d: %d "
                  "wrong (worst rel %.3g)",
                  (int)kind, M, (long long)N, (long long)K, pt_dt_name(adt), pt_dt_name(bdt), layout, dq_form,
                  (long long)group, pt_dt_name(sdt), pt_dt_name(zdt), (int)mode, bad, worst);
    free(a), free(b), free(c);
    if (dq_form >= 0) free_dq(&dqc);
}

static void test_gemv(void) {
    static const dnnl_data_type_t bdts[] = {dnnl_f32, dnnl_bf16, dnnl_f16, dnnl_s8, dnnl_u8, dnnl_s4, dnnl_u4};
    static const dnnl_data_type_t adts[] = {dnnl_f32, dnnl_bf16, dnnl_f16};
    static const int64_t groups[] = {32, 64, 128, 24};
    int combo = 0;
    for (int kind = PT_GEMM_F32; kind <= PT_GEMM_BF16; ++kind)
        for (size_t bi = 0; bi < sizeof bdts / sizeof bdts[0]; ++bi)
            for (int layout = 0; layout < 2; ++layout)
                for (int M = 1; M <= PT_GEMV_MAX_M; ++M) {
                    bool is_int = pt_dt_is_int(bdts[bi]);
                    int forms = is_int ? 5 : 1;
                    for (int f = 0; f < forms; ++f, ++combo) {
                        int dq_form = is_int ? f - 1 : -1; /* -1: no dequantisation */
                        int64_t K = (int64_t[]){37, 130, 256, 96, 255}[combo % 5];
                        int64_t N = rnd_in(1, 45);
                        dnnl_fpmath_mode_t mode = kind == PT_GEMM_F32 ? (dnnl_fpmath_mode_t)(
                                                      (int[]){dnnl_fpmath_mode_strict, dnnl_fpmath_mode_tf32,
                                                              dnnl_fpmath_mode_f16, dnnl_fpmath_mode_bf16}[combo % 4])
                                                                      : dnnl_fpmath_mode_bf16;
                        check_gemv((pt_gemm_kind)kind, M, N, K, adts[combo % 3], bdts[bi], layout, dq_form,
                                   groups[combo % 4], k_scale_dts[combo % 3], k_zp_dts[combo % 6], mode);
                    }
                }
    /* K across several chunks of the on-stack A, and a long tile. */
    for (int layout = 0; layout < 2; ++layout)
        for (size_t bi = 0; bi < sizeof bdts / sizeof bdts[0]; ++bi) {
            bool is_int = pt_dt_is_int(bdts[bi]);
            check_gemv(PT_GEMM_F32, 1 + (int)bi % 4, 37, 4160 + 37 * layout, dnnl_f32, bdts[bi], layout,
                       is_int ? 2 : -1, 64, dnnl_bf16, dnnl_u4, dnnl_fpmath_mode_strict);
            check_gemv(PT_GEMM_BF16, 4 - (int)bi % 4, 19, 4096 + 67, dnnl_bf16, bdts[bi], layout, is_int ? 3 : -1,
                       128, dnnl_f16, dnnl_s8, dnnl_fpmath_mode_bf16);
        }
    check_gemv(PT_GEMM_F32, 2, 1200, 64, dnnl_f32, dnnl_u4, 1, 2, 32, dnnl_f32, dnnl_u4, dnnl_fpmath_mode_strict);
    /* Columns-contiguous 4-bit B in 128-column blocks: full blocks, a short
     * last one, and (M >= 3) more than one accumulator block of columns. */
    for (int M = 1; M <= PT_GEMV_MAX_M; ++M)
        for (int s4 = 0; s4 < 2; ++s4)
            for (int f = 0; f < 4; ++f) {
                int64_t N = (int64_t[]){128, 389, 1424, 2600}[(M + f) % 4], K = (int64_t[]){64, 131, 258, 96}[f];
                check_gemv(PT_GEMM_F32, M, N, K, dnnl_f32, s4 ? dnnl_s4 : dnnl_u4, 1, (int[]){-1, 0, 2, 3}[f], 32,
                           k_scale_dts[f % 3], k_zp_dts[(M + f) % 6],
                           f == 3 ? dnnl_fpmath_mode_bf16 : dnnl_fpmath_mode_strict);
            }

    /* What the path declines. */
    pt_gemm_desc d;
    memset(&d, 0, sizeof d);
    d.kind = PT_GEMM_F32, d.M = 1, d.N = 8, d.K = 8;
    d.a.dt = dnnl_f32, d.a.s_k = 1, d.a.s_row = 8;
    d.b.dt = dnnl_f32, d.b.s_k = 1, d.b.s_row = 8;
    CHECK(pt_gemm_gemv_supported(&d) == (pt_isa() >= PT_ISA_AVX512));
    d.M = PT_GEMV_MAX_M + 1;
    CHECK(!pt_gemm_gemv_supported(&d));
    d.M = 1, d.kind = PT_GEMM_U8S8;
    CHECK(!pt_gemm_gemv_supported(&d));
    d.kind = PT_GEMM_F32, d.b.s_k = 2, d.b.s_row = 16;
    CHECK(!pt_gemm_gemv_supported(&d));
    d.b.s_k = 1, d.b.dq.on = true, d.b.dq.scale_dt = dnnl_f32;
    CHECK(!pt_gemm_gemv_supported(&d)); /* dequantising float weights */
}

int main(void) {
    printf("ISA %s (cap %s)\n", pt_isa_name(pt_isa()), pt_isa_name(pt_isa_cap()));
    test_u8s8_ukernels();
    test_pack_u8s8();
    test_pack_dequant();
    test_pack_dequant_widths();
    test_gemv();
    return pt_test_summary("test_int_gemm_quant");
}
