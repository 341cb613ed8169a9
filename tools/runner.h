/* Running one rewritten case through the library (docs/graph-json.md):
 * build, partition, check, compile, fill, execute, compare / time. */
#ifndef PARTITA_TOOLS_RUNNER_H
#define PARTITA_TOOLS_RUNNER_H

#include <stdbool.h>
#include <stdint.h>

#include "oneapi/dnnl/dnnl_graph.h"
#include "case_json.h"
#include "flops.h"

typedef enum {
    PC_ST_PASSED = 0,
    PC_ST_MISTRUSTED,       /* passed, with a warning (trust check, docs/numerics.md) */
    PC_ST_SKIPPED,
    PC_ST_FAILED,
    PC_ST_UNIMPLEMENTED,    /* unsupported partition: a failure */
    PC_ST_INVALID_ARGUMENTS, /* the case cannot be rewritten as asked: a failure */
    PC_ST_UNTESTED,         /* no reference could be computed: a failure */
} pc_status;

const char *pc_status_name(pc_status st);
bool pc_status_failed(pc_status st);

typedef struct {
    char mode;        /* 'C' correctness, 'P' performance */
    int perf_runs;    /* timed executions per partition; the median is reported */
    int perf_warmup;  /* untimed executions before timing */
    bool propagate;   /* inputs produced by earlier partitions take the library's results */
    int verbose;
    const pc_peak *peak; /* mode P: machine peaks for the fraction of peak; NULL or not loaded: none */
} pc_run_opts;

typedef struct {
    pc_status st;
    char reason[1024];
    char perf[1024];  /* mode P: the totals (time, GFLOP/s, fraction of peak) */
    size_t nparts;    /* partitions formed (0 when partitioning did not happen) */
    size_t nfused;    /* partitions holding more than one op */
    double total_ms;  /* mode P: sum of the partitions' median times */
    double flops;     /* mode P: counted FLOPs of the timed partitions (-1: some unknown) */
} pc_case_result;

/* Runs `c` (already rewritten).  expected_n: required partition count, 0 =
 * unchecked. */
void pc_run_case(const pc_case *c, int64_t expected_n, const pc_run_opts *o, dnnl_engine_t eng, dnnl_stream_t strm,
                 pc_case_result *r);

#endif
