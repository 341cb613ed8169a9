/* Measures what this CPU can do at best, as yardsticks for bench_matmul:
 * f32 FMA throughput (AVX-512 and AVX2), bf16 dot products (vdpbf16ps, and
 * AMX tdpbf16ps where the CPU and OS grant it), int8 dot products (vpdpbusd,
 * AMX tdpbusd), each with 1 and 2 threads, and the streaming
 * read bandwidth of 2 threads. Every loop keeps many independent
 * accumulators so that FMA latency never limits it. The ISA of each loop is
 * chosen per function (target attributes) and checked at run time, so the
 * program runs on any x86-64 and reports 0 for what the CPU lacks. */
#define _GNU_SOURCE
#include <immintrin.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bench_util.h"

/* Repetitions of the unrolled block per timing step; the loops run until
 * they have taken at least the requested time. */
#define BLOCK_REPEATS 4096

/* Sink for the accumulators, so the compiler must compute them. */
static volatile float float_sink;
static volatile int32_t int_sink;

/* Each function runs `blocks` blocks and returns the operations done (FMA =
 * 2 flops, a bf16 pair product-and-add = 2 flops, a u8*s8 product-and-add =
 * 2 ops). */

__attribute__((target("avx512f"))) static double f32_avx512_blocks(long blocks) {
    __m512 a = _mm512_set1_ps(1.0f + 1e-7f), b = _mm512_set1_ps(1e-7f);
    /* Distinct starting values: equal accumulators would be merged into one
     * by common-subexpression elimination. */
    __m512 c0 = _mm512_set1_ps(0), c1 = _mm512_set1_ps(1), c2 = _mm512_set1_ps(2),
           c3 = _mm512_set1_ps(3), c4 = _mm512_set1_ps(4), c5 = _mm512_set1_ps(5),
           c6 = _mm512_set1_ps(6), c7 = _mm512_set1_ps(7), c8 = _mm512_set1_ps(8),
           c9 = _mm512_set1_ps(9), c10 = _mm512_set1_ps(10), c11 = _mm512_set1_ps(11),
           c12 = _mm512_set1_ps(12), c13 = _mm512_set1_ps(13),
           c14 = _mm512_set1_ps(14), c15 = _mm512_set1_ps(15);
    for (long i = 0; i < blocks * BLOCK_REPEATS; ++i) {
        c0 = _mm512_fmadd_ps(a, b, c0); c1 = _mm512_fmadd_ps(a, b, c1);
        c2 = _mm512_fmadd_ps(a, b, c2); c3 = _mm512_fmadd_ps(a, b, c3);
        c4 = _mm512_fmadd_ps(a, b, c4); c5 = _mm512_fmadd_ps(a, b, c5);
        c6 = _mm512_fmadd_ps(a, b, c6); c7 = _mm512_fmadd_ps(a, b, c7);
        c8 = _mm512_fmadd_ps(a, b, c8); c9 = _mm512_fmadd_ps(a, b, c9);
        c10 = _mm512_fmadd_ps(a, b, c10); c11 = _mm512_fmadd_ps(a, b, c11);
        c12 = _mm512_fmadd_ps(a, b, c12); c13 = _mm512_fmadd_ps(a, b, c13);
        c14 = _mm512_fmadd_ps(a, b, c14); c15 = _mm512_fmadd_ps(a, b, c15);
        /* An empty asm that "may change" b keeps the compiler from folding
         * the repeated products. */
        __asm__ volatile("" : "+v"(b));
    }
    __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(c0, c1), _mm512_add_ps(c2, c3)),
            _mm512_add_ps(_mm512_add_ps(c4, c5), _mm512_add_ps(c6, c7)));
    s = _mm512_add_ps(s, _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(c8, c9),
                                 _mm512_add_ps(c10, c11)),
                                 _mm512_add_ps(_mm512_add_ps(c12, c13),
                                         _mm512_add_ps(c14, c15))));
    float_sink = _mm512_reduce_add_ps(s);
    return (double)blocks * BLOCK_REPEATS * 16 * 16 * 2;
}

__attribute__((target("avx2,fma"))) static double f32_avx2_blocks(long blocks) {
    __m256 a = _mm256_set1_ps(1.0f + 1e-7f), b = _mm256_set1_ps(1e-7f);
    __m256 c0 = _mm256_set1_ps(0), c1 = _mm256_set1_ps(1), c2 = _mm256_set1_ps(2),
           c3 = _mm256_set1_ps(3), c4 = _mm256_set1_ps(4), c5 = _mm256_set1_ps(5),
           c6 = _mm256_set1_ps(6), c7 = _mm256_set1_ps(7), c8 = _mm256_set1_ps(8),
           c9 = _mm256_set1_ps(9), c10 = _mm256_set1_ps(10), c11 = _mm256_set1_ps(11);
    for (long i = 0; i < blocks * BLOCK_REPEATS; ++i) {
        c0 = _mm256_fmadd_ps(a, b, c0); c1 = _mm256_fmadd_ps(a, b, c1);
        c2 = _mm256_fmadd_ps(a, b, c2); c3 = _mm256_fmadd_ps(a, b, c3);
        c4 = _mm256_fmadd_ps(a, b, c4); c5 = _mm256_fmadd_ps(a, b, c5);
        c6 = _mm256_fmadd_ps(a, b, c6); c7 = _mm256_fmadd_ps(a, b, c7);
        c8 = _mm256_fmadd_ps(a, b, c8); c9 = _mm256_fmadd_ps(a, b, c9);
        c10 = _mm256_fmadd_ps(a, b, c10); c11 = _mm256_fmadd_ps(a, b, c11);
        __asm__ volatile("" : "+x"(b));
    }
    __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(c0, c1), _mm256_add_ps(c2, c3)),
            _mm256_add_ps(_mm256_add_ps(c4, c5), _mm256_add_ps(c6, c7)));
    s = _mm256_add_ps(s, _mm256_add_ps(_mm256_add_ps(c8, c9), _mm256_add_ps(c10, c11)));
    float lanes[8];
    _mm256_storeu_ps(lanes, s);
    float_sink = lanes[0] + lanes[7];
    return (double)blocks * BLOCK_REPEATS * 12 * 8 * 2;
}

__attribute__((target("avx512f,avx512bf16"))) static double bf16_blocks(long blocks) {
    __m512bh a = (__m512bh)_mm512_set1_epi16(0x3f80), b = a; /* 1.0 in bf16 */
    __m512 c0 = _mm512_set1_ps(0), c1 = _mm512_set1_ps(1), c2 = _mm512_set1_ps(2),
           c3 = _mm512_set1_ps(3), c4 = _mm512_set1_ps(4), c5 = _mm512_set1_ps(5),
           c6 = _mm512_set1_ps(6), c7 = _mm512_set1_ps(7), c8 = _mm512_set1_ps(8),
           c9 = _mm512_set1_ps(9), c10 = _mm512_set1_ps(10), c11 = _mm512_set1_ps(11);
    for (long i = 0; i < blocks * BLOCK_REPEATS; ++i) {
        c0 = _mm512_dpbf16_ps(c0, a, b); c1 = _mm512_dpbf16_ps(c1, a, b);
        c2 = _mm512_dpbf16_ps(c2, a, b); c3 = _mm512_dpbf16_ps(c3, a, b);
        c4 = _mm512_dpbf16_ps(c4, a, b); c5 = _mm512_dpbf16_ps(c5, a, b);
        c6 = _mm512_dpbf16_ps(c6, a, b); c7 = _mm512_dpbf16_ps(c7, a, b);
        c8 = _mm512_dpbf16_ps(c8, a, b); c9 = _mm512_dpbf16_ps(c9, a, b);
        c10 = _mm512_dpbf16_ps(c10, a, b); c11 = _mm512_dpbf16_ps(c11, a, b);
        __asm__ volatile("" : "+v"(b));
    }
    __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(c0, c1), _mm512_add_ps(c2, c3)),
            _mm512_add_ps(_mm512_add_ps(c4, c5), _mm512_add_ps(c6, c7)));
    s = _mm512_add_ps(s, _mm512_add_ps(_mm512_add_ps(c8, c9), _mm512_add_ps(c10, c11)));
    float_sink = _mm512_reduce_add_ps(s);
    return (double)blocks * BLOCK_REPEATS * 12 * 32 * 2;
}

/* AMX: four independent 16 x 16 accumulator tiles, each tile product 16 x
 * 16 outputs over 32 bf16 (16384 flops) or 64 int8 values (32768 ops).  The
 * configuration is per thread: loaded in each. */
typedef struct {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} __attribute__((aligned(64))) amx_config;

static const amx_config amx_cfg = {.palette = 1,
                                   .colsb = {64, 64, 64, 64, 64, 64, 64, 64},
                                   .rows = {16, 16, 16, 16, 16, 16, 16, 16}};

/* NAME: four tile products DP per step, OPS operations each. */
#define AMX_LOOP(NAME, TARGET, DP, OPS)                                                                       \
    __attribute__((target(TARGET))) static double NAME(long blocks) {                                         \
        _tile_loadconfig(&amx_cfg);                                                                           \
        _tile_zero(0);                                                                                        \
        _tile_zero(1);                                                                                        \
        _tile_zero(2);                                                                                        \
        _tile_zero(3);                                                                                        \
        _tile_zero(4);                                                                                        \
        _tile_zero(5);                                                                                        \
        _tile_zero(6);                                                                                        \
        _tile_zero(7);                                                                                        \
        for (long i = 0; i < blocks * BLOCK_REPEATS; ++i) {                                                   \
            DP(0, 4, 6);                                                                                      \
            DP(1, 4, 7);                                                                                      \
            DP(2, 5, 6);                                                                                      \
            DP(3, 5, 7);                                                                                      \
        }                                                                                                     \
        _tile_release();                                                                                      \
        return (double)blocks * BLOCK_REPEATS * 4 * (OPS);                                                    \
    }

#define DP_BF16(C, A, B) _tile_dpbf16ps(C, A, B)
#define DP_INT8(C, A, B) _tile_dpbusd(C, A, B)
AMX_LOOP(amx_bf16_blocks, "amx-tile,amx-bf16", DP_BF16, 16 * 16 * 32 * 2)
AMX_LOOP(amx_int8_blocks, "amx-tile,amx-int8", DP_INT8, 16 * 16 * 64 * 2)

/* AMX-TILE with AMX-BF16 / AMX-INT8 (CPUID 7.0 EDX bits 24, 22, 25), the
 * tile state on in XCR0 and granted to the process by Linux. */
static int amx_usable(int feature_bit) {
    unsigned a, b, c, d;
    __asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(7), "c"(0));
    if (!((d >> 24) & 1) || !((d >> feature_bit) & 1)) return 0;
    __asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(1), "c"(0));
    if (!((c >> 27) & 1)) return 0; /* OSXSAVE */
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    if ((lo & 0x60000) != 0x60000) return 0;
    return syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */, 18 /* XTILEDATA */) == 0;
}

__attribute__((target("avx512f,avx512vnni"))) static double int8_blocks(long blocks) {
    __m512i a = _mm512_set1_epi8(1), b = _mm512_set1_epi8(1);
    __m512i c0 = _mm512_set1_epi32(0), c1 = _mm512_set1_epi32(1),
            c2 = _mm512_set1_epi32(2), c3 = _mm512_set1_epi32(3),
            c4 = _mm512_set1_epi32(4), c5 = _mm512_set1_epi32(5),
            c6 = _mm512_set1_epi32(6), c7 = _mm512_set1_epi32(7),
            c8 = _mm512_set1_epi32(8), c9 = _mm512_set1_epi32(9),
            c10 = _mm512_set1_epi32(10), c11 = _mm512_set1_epi32(11);
    for (long i = 0; i < blocks * BLOCK_REPEATS; ++i) {
        c0 = _mm512_dpbusd_epi32(c0, a, b); c1 = _mm512_dpbusd_epi32(c1, a, b);
        c2 = _mm512_dpbusd_epi32(c2, a, b); c3 = _mm512_dpbusd_epi32(c3, a, b);
        c4 = _mm512_dpbusd_epi32(c4, a, b); c5 = _mm512_dpbusd_epi32(c5, a, b);
        c6 = _mm512_dpbusd_epi32(c6, a, b); c7 = _mm512_dpbusd_epi32(c7, a, b);
        c8 = _mm512_dpbusd_epi32(c8, a, b); c9 = _mm512_dpbusd_epi32(c9, a, b);
        c10 = _mm512_dpbusd_epi32(c10, a, b); c11 = _mm512_dpbusd_epi32(c11, a, b);
        __asm__ volatile("" : "+v"(b));
    }
    __m512i s = _mm512_add_epi32(_mm512_add_epi32(_mm512_add_epi32(c0, c1),
                                         _mm512_add_epi32(c2, c3)),
            _mm512_add_epi32(_mm512_add_epi32(c4, c5), _mm512_add_epi32(c6, c7)));
    s = _mm512_add_epi32(s, _mm512_add_epi32(_mm512_add_epi32(c8, c9),
                                    _mm512_add_epi32(c10, c11)));
    int_sink = _mm512_reduce_add_epi32(s);
    return (double)blocks * BLOCK_REPEATS * 12 * 64 * 2;
}

typedef double (*kernel_fn)(long blocks);

/* Operations per second of `threads` threads each running kernel: the
 * number of blocks grows until one step takes >= min_seconds; the best of
 * three steps counts (a shared machine only ever makes a step slower). */
static double measure(kernel_fn kernel, int threads, double min_seconds) {
    long blocks = 16;
    for (;;) {
        double start = bench_now_s();
#pragma omp parallel num_threads(threads)
        kernel(blocks);
        double elapsed = bench_now_s() - start;
        if (elapsed >= min_seconds / 4 || blocks > (1L << 40)) break;
        blocks *= 4;
    }
    /* Scale to reach min_seconds per step. */
    double start = bench_now_s();
#pragma omp parallel num_threads(threads)
    kernel(blocks);
    double per_block = (bench_now_s() - start) / (double)blocks;
    if (per_block > 0 && per_block * (double)blocks < min_seconds)
        blocks = (long)(min_seconds / per_block) + 1;
    double best = 0;
    for (int step = 0; step < 3; ++step) {
        double ops = 0;
        start = bench_now_s();
#pragma omp parallel num_threads(threads) reduction(+ : ops)
        ops += kernel(blocks);
        double rate = ops / (bench_now_s() - start);
        if (rate > best) best = rate;
    }
    return best;
}

/* Sums a float array with several independent vector accumulators: the
 * loads, not the adds, set the speed. */
__attribute__((target("avx2"))) static float sum_avx2(const float *data, size_t count) {
    __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    size_t i = 0;
    for (; i + 32 <= count; i += 32) {
        s0 = _mm256_add_ps(s0, _mm256_load_ps(data + i));
        s1 = _mm256_add_ps(s1, _mm256_load_ps(data + i + 8));
        s2 = _mm256_add_ps(s2, _mm256_load_ps(data + i + 16));
        s3 = _mm256_add_ps(s3, _mm256_load_ps(data + i + 24));
    }
    float lanes[8];
    _mm256_storeu_ps(lanes, _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
    float total = lanes[0] + lanes[1] + lanes[2] + lanes[3] + lanes[4] + lanes[5]
            + lanes[6] + lanes[7];
    for (; i < count; ++i) total += data[i];
    return total;
}

static float sum_portable(const float *data, size_t count) {
    float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    size_t i = 0;
    for (; i + 4 <= count; i += 4) {
        s0 += data[i];
        s1 += data[i + 1];
        s2 += data[i + 2];
        s3 += data[i + 3];
    }
    for (; i < count; ++i) s0 += data[i];
    return s0 + s1 + s2 + s3;
}

/* GB/s (1e9 bytes) reading a buffer of `bytes` with `threads` threads, each
 * summing its own contiguous half; the best of `repeats` passes. */
static double measure_stream(size_t bytes, int threads, int repeats) {
    size_t count = bytes / sizeof(float);
    float *data = aligned_alloc(64, count * sizeof(float));
    if (!data) return 0;
    int avx2 = __builtin_cpu_supports("avx2");
    /* First touch by the threads that read it later. */
#pragma omp parallel for num_threads(threads) schedule(static)
    for (size_t i = 0; i < count; ++i) data[i] = 1e-6f * (float)(i & 1023);
    double best = 0;
    for (int r = 0; r < repeats; ++r) {
        float total = 0;
        double start = bench_now_s();
#pragma omp parallel num_threads(threads) reduction(+ : total)
        {
            int t = omp_get_thread_num(), n = omp_get_num_threads();
            size_t chunk = (count / (size_t)n) & ~(size_t)31;
            size_t begin = (size_t)t * chunk;
            size_t length = t == n - 1 ? count - begin : chunk;
            total += avx2 ? sum_avx2(data + begin, length)
                          : sum_portable(data + begin, length);
        }
        double elapsed = bench_now_s() - start;
        float_sink = total;
        double rate = (double)bytes / elapsed / 1e9;
        if (rate > best) best = rate;
    }
    free(data);
    return best;
}

int main(int argc, char **argv) {
    char out_path[4096];
    bench_executable_dir(out_path, sizeof out_path - 16);
    strcat(out_path, "/peak.txt");
    double seconds = 0.3;
    size_t stream_mib = 512;
    for (int i = 1; i < argc; ++i) {
        if (!strncmp(argv[i], "--out=", 6)) snprintf(out_path, sizeof out_path, "%s", argv[i] + 6);
        else if (!strncmp(argv[i], "--seconds=", 10)) seconds = atof(argv[i] + 10);
        else if (!strncmp(argv[i], "--stream-mib=", 13)) stream_mib = (size_t)atol(argv[i] + 13);
        else {
            printf("usage: bench_peak [--out=FILE] [--seconds=S per step] "
                   "[--stream-mib=N (>= 256)]\n");
            return strcmp(argv[i], "--help") ? 2 : 0;
        }
    }
    if (stream_mib < 256) stream_mib = 256;
    __builtin_cpu_init();
    int has_avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    int has_avx512 = __builtin_cpu_supports("avx512f");
    int has_bf16 = has_avx512 && __builtin_cpu_supports("avx512bf16");
    int has_vnni = has_avx512 && __builtin_cpu_supports("avx512vnni");
    int has_amx_bf16 = amx_usable(22), has_amx_int8 = amx_usable(25);

    printf("bench_peak: best of 3 steps of >= %.2f s each; GFLOP/s = 1e9 "
           "flops/s (FMA = 2), GOP/s the same for int8\n", seconds);
    printf("%-28s %12s %12s\n", "loop", "1 thread", "2 threads");
    double f512[2] = {0, 0}, f256[2] = {0, 0}, bf16[2] = {0, 0}, i8[2] = {0, 0}, abf16[2] = {0, 0},
           ai8[2] = {0, 0};
    for (int t = 0; t < 2; ++t) {
        if (has_avx512) f512[t] = measure(f32_avx512_blocks, t + 1, seconds) / 1e9;
        if (has_avx2) f256[t] = measure(f32_avx2_blocks, t + 1, seconds) / 1e9;
        if (has_bf16) bf16[t] = measure(bf16_blocks, t + 1, seconds) / 1e9;
        if (has_vnni) i8[t] = measure(int8_blocks, t + 1, seconds) / 1e9;
        if (has_amx_bf16) abf16[t] = measure(amx_bf16_blocks, t + 1, seconds) / 1e9;
        if (has_amx_int8) ai8[t] = measure(amx_int8_blocks, t + 1, seconds) / 1e9;
    }
    const char *missing = "(not supported)";
#define ROW(name, ok, v) \
    if (ok) printf("%-28s %12.1f %12.1f\n", name, v[0], v[1]); \
    else printf("%-28s %25s\n", name, missing);
    ROW("f32 FMA AVX-512 (GFLOP/s)", has_avx512, f512)
    ROW("f32 FMA AVX2 (GFLOP/s)", has_avx2, f256)
    ROW("bf16 vdpbf16ps (GFLOP/s)", has_bf16, bf16)
    ROW("int8 vpdpbusd (GOP/s)", has_vnni, i8)
    ROW("bf16 AMX tdpbf16ps (GFLOP/s)", has_amx_bf16, abf16)
    ROW("int8 AMX tdpbusd (GOP/s)", has_amx_int8, ai8)
#undef ROW
    double stream = measure_stream(stream_mib << 20, 2, 5);
    printf("%-28s %25.1f  (%zu MiB, 2 threads)\n", "stream read (GB/s)", stream,
            stream_mib);

    machine_peak peak;
    memset(&peak, 0, sizeof peak);
    peak.f32_gflops_1t = f512[0] > f256[0] ? f512[0] : f256[0];
    peak.f32_gflops_2t = f512[1] > f256[1] ? f512[1] : f256[1];
    /* The kinds' peaks: the best instruction the CPU has for each (the
     * engine takes AMX where it can). */
    peak.bf16_gflops_1t = abf16[0] > bf16[0] ? abf16[0] : bf16[0];
    peak.bf16_gflops_2t = abf16[1] > bf16[1] ? abf16[1] : bf16[1];
    peak.int8_gops_1t = ai8[0] > i8[0] ? ai8[0] : i8[0];
    peak.int8_gops_2t = ai8[1] > i8[1] ? ai8[1] : i8[1];
    peak.stream_gbs = stream;
    printf("peak f32_gflops_per_core=%.1f f32_gflops_2t=%.1f bf16_gflops_per_core=%.1f "
           "bf16_gflops_2t=%.1f int8_gops_per_core=%.1f int8_gops_2t=%.1f "
           "stream_gbs=%.1f\n",
            peak.f32_gflops_1t, peak.f32_gflops_2t, peak.bf16_gflops_1t,
            peak.bf16_gflops_2t, peak.int8_gops_1t, peak.int8_gops_2t,
            peak.stream_gbs);
    if (bench_peak_write(out_path, &peak))
        fprintf(stderr, "bench_peak: cannot write %s\n", out_path);
    else printf("written to %s\n", out_path);
    return 0;
}
