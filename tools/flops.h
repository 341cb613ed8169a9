/* Work counts and machine peaks for the CLI's performance mode
 * (docs/graph-json.md, "Performance mode"): FLOPs of MatMul and
 * Convolution ops, the data-type class of a partition, and the peak file
 * that `make bench` writes (build/bench/peak.txt). */
#ifndef PARTITA_TOOLS_FLOPS_H
#define PARTITA_TOOLS_FLOPS_H

#include <stdbool.h>
#include <stddef.h>

#include "case_json.h"

/* FLOPs of one op: MatMul 2*M*N*K per output matrix, batch and broadcast
 * included (2 * elements of dst * K); Convolution 2*N*OC*OH*OW*IC/G*KH*KW
 * (2 * elements of dst * IC/G * kernel spatial size).  Every other kind
 * counts 0.  Returns -1 when a counted op's shapes are not known. */
double pc_op_flops(const pc_op *op);

/* Sum over ops[idx[0..n-1]] of c; -1 when any counted op is unknown. */
double pc_ops_flops(const pc_case *c, const size_t *idx, size_t n);

/* Which peak a partition is measured against. */
typedef enum { PC_PEAK_F32 = 0, PC_PEAK_BF16, PC_PEAK_INT8, PC_PEAK_NCLASSES } pc_peak_class;

const char *pc_peak_class_name(pc_peak_class k);

/* int8 when a MatMul / Convolution reads u8/s8 data directly or through a
 * (static) Dequantize of the partition; bf16 when it reads bf16 data or the
 * case's math mode is bf16; f32 otherwise (f32, f16, int4/int8 weights
 * decompressed by DynamicDequantize). */
pc_peak_class pc_ops_peak_class(const pc_case *c, const size_t *idx, size_t n);

typedef struct {
    bool loaded;
    char path[512];
    double gflops[PC_PEAK_NCLASSES]; /* the figure used, 0 when the file lacks it */
    int threads;                     /* the thread count the figures are for */
} pc_peak;

/* Reads the key=value figures of a peak file (one per line as bench_peak
 * writes them, f32_gflops_1t=... f32_gflops_2t=...; the "_per_core"
 * spelling of its printed summary line is read as "_1t") for `threads`
 * threads: 1 takes the one-thread figures, 2 the two-thread ones (2 * the
 * one-thread figure when missing), more than 2 the one-thread figure *
 * threads (bench_peak measures 1 and 2 threads only).  Returns 0, or -1
 * (message in err) when no figure is there. */
int pc_peak_parse(const char *text, int threads, pc_peak *p, char *err, size_t cap);
int pc_peak_load(const char *path, int threads, pc_peak *p, char *err, size_t cap);

#endif
