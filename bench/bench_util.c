#define _POSIX_C_SOURCE 200809L
#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

double bench_now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(const double *values, int n) {
    if (n <= 0) return 0;
    double *copy = malloc((size_t)n * sizeof *copy);
    if (!copy) return values[0];
    memcpy(copy, values, (size_t)n * sizeof *copy);
    qsort(copy, (size_t)n, sizeof *copy, compare_doubles);
    double m = n % 2 ? copy[n / 2] : 0.5 * (copy[n / 2 - 1] + copy[n / 2]);
    free(copy);
    return m;
}

void bench_executable_dir(char *dir, size_t size) {
    ssize_t n = readlink("/proc/self/exe", dir, size - 1);
    if (n <= 0) {
        snprintf(dir, size, ".");
        return;
    }
    dir[n] = 0;
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
}

/* One `key=value` per line, so the file is also easy to read in a shell. */
int bench_peak_write(const char *path, const machine_peak *p) {
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fprintf(f, "f32_gflops_1t=%.2f\nf32_gflops_2t=%.2f\n", p->f32_gflops_1t,
            p->f32_gflops_2t);
    fprintf(f, "bf16_gflops_1t=%.2f\nbf16_gflops_2t=%.2f\n", p->bf16_gflops_1t,
            p->bf16_gflops_2t);
    fprintf(f, "int8_gops_1t=%.2f\nint8_gops_2t=%.2f\n", p->int8_gops_1t,
            p->int8_gops_2t);
    fprintf(f, "stream_gbs=%.2f\n", p->stream_gbs);
    return fclose(f);
}

int bench_peak_read(const char *path, machine_peak *p) {
    memset(p, 0, sizeof *p);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char line[128];
    while (fgets(line, sizeof line, f)) {
        char key[64];
        double value;
        if (sscanf(line, "%63[^=]=%lf", key, &value) != 2) continue;
        if (!strcmp(key, "f32_gflops_1t")) p->f32_gflops_1t = value;
        else if (!strcmp(key, "f32_gflops_2t")) p->f32_gflops_2t = value;
        else if (!strcmp(key, "bf16_gflops_1t")) p->bf16_gflops_1t = value;
        else if (!strcmp(key, "bf16_gflops_2t")) p->bf16_gflops_2t = value;
        else if (!strcmp(key, "int8_gops_1t")) p->int8_gops_1t = value;
        else if (!strcmp(key, "int8_gops_2t")) p->int8_gops_2t = value;
        else if (!strcmp(key, "stream_gbs")) p->stream_gbs = value;
    }
    fclose(f);
    return 0;
}
