/* Minimal test harness: CHECK macros that count failures, and a summary line
 * "N passed, N failed" that CI parses. */
#ifndef PARTITA_TEST_UTIL_H
#define PARTITA_TEST_UTIL_H

#include <stdio.h>

#include "oneapi/dnnl/dnnl_graph.h"

extern int pt_test_passed, pt_test_failed;

/* Counts one check; on failure prints where and what (printf-style). */
#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
void pt_test_count(int ok, const char *file, int line, const char *fmt, ...);

#define CHECK(cond) pt_test_count(!!(cond), __FILE__, __LINE__, "%s", #cond)
#define CHECK_EQ_INT(a, b) \
    do { \
        long long pt_a_ = (long long)(a), pt_b_ = (long long)(b); \
        pt_test_count(pt_a_ == pt_b_, __FILE__, __LINE__, "%s == %s (%lld vs %lld)", #a, #b, pt_a_, pt_b_); \
    } while (0)
#define CHECK_NEAR(a, b, tol) \
    do { \
        double pt_a_ = (double)(a), pt_b_ = (double)(b); \
        double pt_d_ = pt_a_ - pt_b_; \
        if (pt_d_ < 0) pt_d_ = -pt_d_; \
        pt_test_count(pt_d_ <= (tol), __FILE__, __LINE__, "%s ~ %s (%.9g vs %.9g)", #a, #b, pt_a_, pt_b_); \
    } while (0)

/* ---- small public-API helpers -------------------------------------------- */

/* The graph of `op` alone, finalized and filtered with the fusion policy:
 * its one partition, or NULL (a failed check) when it gives another count.
 * The op is destroyed as soon as it is added (the graph holds a copy). */
dnnl_graph_partition_t pt_test_one_op_partition(dnnl_graph_op_t op);

/* A graph's partitions: filter with `policy` and fetch them (a failed check
 * when there are more than fit); then destroy them. */
typedef struct {
    size_t n;
    dnnl_graph_partition_t p[32];
} pt_test_parts;
void pt_test_get_parts(dnnl_graph_graph_t g, dnnl_graph_partition_policy_t policy, pt_test_parts *parts);
void pt_test_free_parts(pt_test_parts *parts);

/* Executes `cp` on `data` (one buffer per port, inputs first; host-scalar
 * ports get scalar tensors) and waits. */
void pt_test_execute(dnnl_graph_compiled_partition_t cp, dnnl_engine_t eng, dnnl_stream_t strm, size_t nin,
                     const dnnl_graph_logical_tensor_t *const *ins, size_t nout,
                     const dnnl_graph_logical_tensor_t *const *outs, void *const *data);

/* Prints "N passed, N failed" and returns the process exit code. */
int pt_test_summary(const char *name);

#endif
