/* Runs a bench_case through one library (a graph_api): builds the graph,
 * partitions it with the fusion policy, compiles every partition, fills the
 * graph inputs deterministically (bench_fill.h), times whole executions of
 * all partitions and keeps the graph outputs as floats for comparison. */
#ifndef BENCH_CASE_RUNNER_H
#define BENCH_CASE_RUNNER_H

#include "bench_case.h"
#include "graph_api.h"

typedef struct run_options {
    int warmup_runs;       /* untimed executions before timing (>= 1) */
    int timed_runs;        /* most timed executions */
    double time_budget_s;  /* fewer timed runs when one run is this slow */
    int keep_outputs;      /* copy the graph outputs into the result */
} run_options;

typedef struct case_output {
    size_t id;
    size_t count;
    float *values;
} case_output;

typedef struct case_result {
    int ok;                   /* 1: partitions formed, compiled and timed */
    char stage[32];           /* where it failed: "partition", "compile", ... */
    dnnl_status_t status;     /* the failing call's status */
    char message[256];
    size_t n_partitions;
    size_t n_fused;           /* partitions holding more than one op */
    size_t n_unsupported;
    int timed_runs;
    double median_s;
    size_t n_outputs;
    case_output *outputs;
} case_result;

/* A case made ready to execute: graph, compiled partitions, filled tensors. */
typedef struct case_session case_session;

/* Builds, partitions, compiles, allocates and fills. Returns NULL on failure
 * (result says where); on success result holds the partition counts. */
case_session *case_prepare(const graph_api *api, dnnl_engine_t engine,
        dnnl_stream_t stream, const bench_case *c, case_result *result);
/* One execution of every partition and a stream wait; returns 1 when it ran. */
int case_execute(case_session *session, double *seconds, case_result *result);
/* Copies the graph outputs into result when asked, then frees the session. */
void case_finish(case_session *session, const bench_case *c, int keep_outputs,
        case_result *result);
/* Warm-up executions of a prepared case: options->warmup_runs, and more
 * until BENCH_WARMUP_S seconds of them have run. */
#define BENCH_WARMUP_S 0.25
void bench_warm_up(case_session *session, const run_options *options, double *last, case_result *result);

/* Timed runs allowed when one run takes seconds_per_run (>= 1). */
int bench_runs_within_budget(const run_options *options, double seconds_per_run);

/* prepare, warm-up, timed runs within the budget, finish. Returns result->ok.
 * engine and stream belong to api's library. */
int run_case(const graph_api *api, dnnl_engine_t engine, dnnl_stream_t stream,
        const bench_case *c, const run_options *options, case_result *result);
void case_result_free(case_result *result);

/* Largest |a - b| over the elements of outputs with equal ids, relative to
 * the largest |b| of that output; infinities of equal sign count as equal.
 * nan_mismatches counts elements that are NaN on one side only. Returns -1
 * when no output could be compared. */
double compare_outputs(const case_result *a, const case_result *b,
        size_t *nan_mismatches);

#endif
