/* The SDPA decode block operations of the row table (kernels/fused/
 * sdpa_rows.h: dots_q, axpys_q) at every row this CPU can run, against
 * double-precision sums of the definition: 8 / 4-bit rows, signed and
 * unsigned, with and without zero points, head sizes of one to ten chunks,
 * every run that divides them, 0 to 13 rows (tails of the four-row groups)
 * and some blocks of about 300,
 * weights of 0 skipped, and nothing outside the outputs written; and the
 * 16-bit float block operations (dots_h, axpys_h) over every length 1-70,
 * widen_4bit against the nibbles it reads, and outer_bf16 bit for bit
 * against the scalar f32 -> bf16 conversion (ties, NaN, infinities,
 * subnormals; f rounded to bf16 first or not). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir/dtype.h"
#include "kernels/fused/sdpa_rows.h"
#include "test_util.h"

static uint64_t g_rng = 0x9e3779b97f4a7c15ull;
static uint32_t rnd_u32(void) {
    g_rng = g_rng * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(g_rng >> 32);
}
static float rnd_in(float lo, float hi) { return lo + (hi - lo) * (float)(rnd_u32() & 0xffffff) / 16777216.f; }

enum { MAXN = 320, MAXR = 13, MAXR_LONG = 300 };

/* Stored value of column c of a row (natural order). */
static double q_value(const uint8_t *row, int bits, int sgn, int64_t c) {
    if (bits == 8) return sgn ? (double)(int8_t)row[c] : (double)row[c];
    const int nib = c & 1 ? row[c / 2] >> 4 : row[c / 2] & 15;
    return sgn ? (double)((nib ^ 8) - 8) : (double)nib;
}

static void check_case(const pt_sdpa_row_ops *ops, int bits, int sgn, bool zps, int64_t n, int64_t run, int nrows) {
    static uint8_t data[MAXR_LONG * (MAXN + 8)];
    static float sc[MAXR_LONG * MAXN], zp[MAXR_LONG * MAXN];
    const int64_t ld = bits == 4 ? n / 2 + 3 : n + 5; /* rows not back to back */
    const int64_t nruns = n / run;
    for (int64_t i = 0; i < (int64_t)nrows * ld; ++i) data[i] = (uint8_t)rnd_u32();
    for (int64_t i = 0; i < (int64_t)nrows * nruns; ++i) {
        sc[i] = rnd_in(0.001f, 0.1f);
        zp[i] = bits == 4 ? (float)(rnd_u32() % 16) - (sgn ? 8.f : 0.f) : (float)(rnd_u32() % 256) - (sgn ? 128.f : 0.f);
    }
    const pt_sdpa_qrows q = {data, ld, bits, sgn, run, nruns, sc, zps ? zp : NULL};
    float x[MAXN], xs[MAXN], out[MAXR_LONG + 2], p[MAXR_LONG], y[MAXN + 8], ys[MAXN];
    double want_y[MAXN], mag_y[MAXN];
    for (int64_t c = 0; c < n; ++c)
        x[c] = rnd_in(-2.f, 2.f), y[c] = rnd_in(-1.f, 1.f), want_y[c] = y[c], mag_y[c] = fabs(y[c]);
    for (int j = 0; j < nrows; ++j) p[j] = j % 3 == 1 ? 0.f : rnd_in(0.f, 1.f);
    for (int i = 0; i < 8; ++i) y[n + i] = 7.f;
    out[nrows] = out[nrows + 1] = -3.f;
    /* 4-bit: x and y in pair-split order. */
    for (int64_t c = 0; c < n; ++c) {
        const int64_t pos = bits == 4 ? sd_pair_split_pos(c) : c;
        xs[pos] = x[c], ys[pos] = y[c];
    }
    ops->dots_q(xs, n, &q, nrows, out);
    ops->axpys_q(ys, n, &q, nrows, p);
    int bad = 0;
    for (int j = 0; j < nrows; ++j) {
        const uint8_t *row = data + j * ld;
        double s = 0, mag = 0;
        for (int64_t c = 0; c < n; ++c) {
            const int64_t g = c / run;
            const double v = (q_value(row, bits, sgn, c) - (zps ? zp[j * nruns + g] : 0.0)) * sc[j * nruns + g];
            s += (double)x[c] * v, mag += fabs((double)x[c] * v);
            if (p[j] != 0.f) want_y[c] += (double)p[j] * v, mag_y[c] += fabs((double)p[j] * v);
        }
        bad += fabs(out[j] - s) > 2e-6 * mag + 1e-30;
    }
    bad += out[nrows] != -3.f || out[nrows + 1] != -3.f;
    for (int64_t c = 0; c < n; ++c) {
        const double got = ys[bits == 4 ? sd_pair_split_pos(c) : c];
        /* f32 sums of up to a few hundred terms: the bound grows with them. */
        bad += fabs(got - want_y[c]) > (2e-6 + 2e-8 * nrows) * (mag_y[c] + 1.0);
    }
    for (int i = 0; i < 8; ++i) bad += y[n + i] != 7.f;
    if (bad)
        printf("  %s: %d-bit %s%s n=%lld run=%lld rows=%d: %d wrong\n", ops->name, bits, sgn ? "s" : "u",
               zps ? " zp" : "", (long long)n, (long long)run, nrows, bad);
    CHECK(bad == 0);
}

static void check_h(const pt_sdpa_row_ops *ops, int is_f16, int64_t n, int nrows) {
    enum { LD = 80 };
    static uint16_t rows[MAXR * LD];
    float x[LD], y[LD + 8], p[MAXR], out[MAXR + 1];
    double want_y[LD];
    for (int i = 0; i < nrows * LD; ++i) {
        const float v = rnd_in(-3.f, 3.f);
        rows[i] = is_f16 ? pt_f32_to_f16(v) : pt_f32_to_bf16(v);
    }
    for (int64_t c = 0; c < n; ++c) x[c] = rnd_in(-2.f, 2.f), y[c] = rnd_in(-1.f, 1.f), want_y[c] = y[c];
    for (int i = 0; i < 8; ++i) y[n + i] = 7.f;
    for (int j = 0; j < nrows; ++j) p[j] = j % 3 == 2 ? 0.f : rnd_in(0.f, 1.f);
    out[nrows] = -3.f;
    ops->dots_h(x, n, rows, is_f16, nrows, LD, out);
    ops->axpys_h(y, n, rows, is_f16, nrows, LD, p);
    int bad = out[nrows] != -3.f;
    for (int j = 0; j < nrows; ++j) {
        double s = 0, mag = 0;
        for (int64_t c = 0; c < n; ++c) {
            const uint16_t h = rows[j * LD + c];
            const double v = is_f16 ? pt_f16_to_f32(h) : pt_bf16_to_f32(h);
            s += (double)x[c] * v, mag += fabs((double)x[c] * v);
            want_y[c] += (double)p[j] * v;
        }
        bad += fabs(out[j] - s) > 2e-6 * mag + 1e-30;
    }
    for (int64_t c = 0; c < n; ++c) bad += fabs(y[c] - want_y[c]) > 2e-6 * (fabs(want_y[c]) + 1.0);
    for (int i = 0; i < 8; ++i) bad += y[n + i] != 7.f;
    if (bad) printf("  %s: %s n=%lld rows=%d: %d wrong\n", ops->name, is_f16 ? "f16" : "bf16", (long long)n, nrows, bad);
    CHECK(bad == 0);
}

/* outer_bf16 over n columns and nk rows: each output the scalar
 * conversion of the f32 product, the gaps between rows untouched. */
static void check_outer_bf16(const pt_sdpa_row_ops *ops, int64_t n, int nk, int round_a) {
    enum { LD = 75 };
    static uint16_t dst[MAXR * LD];
    float a[MAXR] = {0}, x[LD] = {0};
    /* Values whose products land on ties (low 16 bits 0x8000, both parities),
     * NaN, infinities and subnormals, among random ones. */
    for (int64_t c = 0; c < n; ++c) {
        const uint32_t kind = rnd_u32() % 8;
        uint32_t u = rnd_u32();
        if (kind == 0) u = (u & 0xffff0000u) | 0x8000u;
        else if (kind == 1) u = 0x7fc00000u | (u & 0x3fffffu) | 1u; /* NaN */
        else if (kind == 2) u = (u & 0x80000000u) | 0x7f800000u;   /* inf */
        else if (kind == 3) u = (u & 0x807fffffu) | 1u;             /* subnormal */
        else {
            const float v = rnd_in(-3.f, 3.f);
            memcpy(&u, &v, sizeof u);
        }
        memcpy(&x[c], &u, sizeof u);
    }
    for (int k = 0; k < nk; ++k) a[k] = k % 4 == 0 ? 1.f : k % 4 == 1 ? 0.5f : rnd_in(-2.f, 2.f);
    for (int i = 0; i < nk * LD; ++i) dst[i] = 0xabcd;
    ops->outer_bf16(dst, LD, a, round_a, nk, x, n);
    int bad = 0;
    for (int k = 0; k < nk; ++k) {
        const float f = round_a ? pt_bf16_to_f32(pt_f32_to_bf16(a[k])) : a[k];
        for (int64_t c = 0; c < LD; ++c)
            bad += dst[k * LD + c] != (c < n ? pt_f32_to_bf16(f * x[c]) : 0xabcd);
    }
    if (bad) printf("  %s: outer_bf16 n=%lld rows=%d round=%d: %d wrong\n", ops->name, (long long)n, nk, round_a, bad);
    CHECK(bad == 0);
}

/* widen_4bit over 0-40 pairs (the vector steps of 16 and their tails). */
static void check_widen_4bit(const pt_sdpa_row_ops *ops, int is_signed) {
    uint8_t b[40];
    float out[82];
    for (int np = 0; np <= 40; ++np) {
        for (int i = 0; i < np; ++i) b[i] = (uint8_t)rnd_u32();
        out[2 * np] = out[2 * np + 1] = -99.f;
        ops->widen_4bit(b, np, is_signed, out);
        int bad = out[2 * np] != -99.f || out[2 * np + 1] != -99.f;
        for (int i = 0; i < 2 * np; ++i) bad += out[i] != (float)q_value(b, 4, is_signed, i);
        if (bad) printf("  %s: widen_4bit %s pairs=%d: %d wrong\n", ops->name, is_signed ? "s4" : "u4", np, bad);
        CHECK(bad == 0);
    }
}

int main(void) {
    const pt_sdpa_row_ops *rows[] = {&pt_sdpa_rows_generic, &pt_sdpa_rows_avx2, &pt_sdpa_rows_avx512};
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; ++r) {
        if (!pt_cpu_row_usable(rows[r]->level, 0, pt_isa())) continue;
        printf("row %s\n", rows[r]->name);
        for (int bits = 4; bits <= 8; bits += 4)
            for (int64_t n = 16; n <= MAXN; n += 16) {
                if (!sd_qrows_supported(bits, n, n)) continue;
                for (int64_t run = 16; run <= n; run += 16) {
                    if (!sd_qrows_supported(bits, n, run)) continue;
                    for (int nrows = 0; nrows <= MAXR; nrows += nrows < 9 ? 1 : 4) {
                        const int sgn = (int)((n / 16 + run / 16 + nrows) & 1);
                        check_case(rows[r], bits, sgn, (nrows & 2) != 0, n, run, nrows);
                    }
                    /* Long blocks: the 4-bit rows' table factors are
                     * computed a bounded number of rows at a time. */
                    if (n % 128 == 0 || n == 320) check_case(rows[r], bits, (int)(run / 16) & 1, true, n, run, MAXR_LONG - (int)(n / 32));
                }
            }
        for (int is_f16 = 0; is_f16 <= 1; ++is_f16)
            for (int64_t n = 1; n <= 70; ++n) check_h(rows[r], is_f16, n, (int)(n % 10));
        check_widen_4bit(rows[r], 0);
        check_widen_4bit(rows[r], 1);
        for (int64_t n = 1; n <= 70; ++n) check_outer_bf16(rows[r], n, (int)(n % 7), (int)(n & 1));
    }
    return pt_test_summary("test_int_sdpa_rows");
}
