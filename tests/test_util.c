#include "test_util.h"

#include <stdarg.h>
#include <string.h>

int pt_test_passed = 0, pt_test_failed = 0;

int pt_test_summary(const char *name) {
    printf("%s: %d passed, %d failed\n", name, pt_test_passed, pt_test_failed);
    return pt_test_failed == 0 && pt_test_passed > 0 ? 0 : 1;
}

void pt_test_count(int ok, const char *file, int line, const char *fmt, ...) {
    if (ok) {
        ++pt_test_passed;
        return;
    }
    ++pt_test_failed;
    fprintf(stderr, "%s:%d: CHECK failed: ", file, line);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

#define OK(expr) CHECK_EQ_INT((expr), dnnl_success)

dnnl_graph_partition_t pt_test_one_op_partition(dnnl_graph_op_t op) {
    dnnl_graph_graph_t g = NULL;
    OK(dnnl_graph_graph_create(&g, dnnl_cpu));
    OK(dnnl_graph_add_op(g, op));
    OK(dnnl_graph_op_destroy(op));
    OK(dnnl_graph_graph_finalize(g));
    OK(dnnl_graph_graph_filter(g, dnnl_graph_partition_policy_fusion));
    size_t np = 0;
    OK(dnnl_graph_graph_get_partition_num(g, &np));
    CHECK_EQ_INT(np, 1);
    dnnl_graph_partition_t part = NULL;
    if (np == 1) OK(dnnl_graph_graph_get_partitions(g, 1, &part));
    OK(dnnl_graph_graph_destroy(g));
    return part;
}

void pt_test_execute(dnnl_graph_compiled_partition_t cp, dnnl_engine_t eng, dnnl_stream_t strm, size_t nin,
                     const dnnl_graph_logical_tensor_t *const *ins, size_t nout,
                     const dnnl_graph_logical_tensor_t *const *outs, void *const *data) {
    dnnl_graph_tensor_t t[16] = {0};
    size_t n = nin + nout;
    CHECK(n <= 16);
    if (n > 16) return;
    for (size_t i = 0; i < n; ++i) {
        const dnnl_graph_logical_tensor_t *lt = i < nin ? ins[i] : outs[i - nin];
        if (lt->property == dnnl_graph_tensor_property_host_scalar)
            OK(dnnl_graph_tensor_create_scalar(&t[i], lt, data[i]));
        else
            OK(dnnl_graph_tensor_create(&t[i], lt, eng, data[i]));
    }
    OK(dnnl_graph_compiled_partition_execute(cp, strm, nin, (const_dnnl_graph_tensor_t *)t, nout,
                                             (const_dnnl_graph_tensor_t *)t + nin));
    OK(dnnl_stream_wait(strm));
    for (size_t i = 0; i < n; ++i) OK(dnnl_graph_tensor_destroy(t[i]));
}

void pt_test_get_parts(dnnl_graph_graph_t g, dnnl_graph_partition_policy_t policy, pt_test_parts *parts) {
    const size_t cap = sizeof parts->p / sizeof parts->p[0];
    parts->n = 0;
    OK(dnnl_graph_graph_filter(g, policy));
    size_t n = 0;
    OK(dnnl_graph_graph_get_partition_num(g, &n));
    CHECK(n <= cap);
    if (n == 0 || n > cap) return;
    memset(parts->p, 0, sizeof parts->p);
    OK(dnnl_graph_graph_get_partitions(g, n, parts->p));
    parts->n = n;
}

void pt_test_free_parts(pt_test_parts *parts) {
    for (size_t i = 0; i < parts->n; ++i) OK(dnnl_graph_partition_destroy(parts->p[i]));
    parts->n = 0;
}
