/* Small helpers shared by the benchmarks: a monotonic clock, medians and the
 * file of measured machine peaks bench_peak writes for bench_matmul. */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <stddef.h>

double bench_now_s(void);
/* Median of n values (sorts a copy). */
double bench_median(const double *values, int n);

typedef struct machine_peak {
    double f32_gflops_1t, f32_gflops_2t;  /* best f32 FMA loop (AVX-512 or AVX2) */
    double bf16_gflops_1t, bf16_gflops_2t;
    double int8_gops_1t, int8_gops_2t;
    double stream_gbs;
} machine_peak;

/* The directory holding the running executable (for the default peak file). */
void bench_executable_dir(char *dir, size_t size);
int bench_peak_write(const char *path, const machine_peak *peak);
/* Returns 0 when the file was read; missing keys stay 0. */
int bench_peak_read(const char *path, machine_peak *peak);

#endif
