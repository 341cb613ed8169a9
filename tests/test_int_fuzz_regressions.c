/* Replays every saved fuzz input (tests/fuzz_regressions/<target>/) through
 * the same "one input" functions the libFuzzer targets run (fuzz/fuzz_*_one.c),
 * built here with the normal compiler (and under `make test-asan` with the
 * sanitizers), then checks the statuses the fixed inputs now get at the API:
 * the overflow-checked byte span (pt_lt_span_bytes) behind get_mem_size,
 * tensor creation and compile, and is_equal on out-of-range ranks.
 * docs/reliability.md lists what each saved input found. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_one.h"
#include "oneapi/dnnl/dnnl_graph.h"
#include "test_util.h"

static size_t replay_dir(const char *root, const char *target, int (*one)(const uint8_t *, size_t)) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/tests/fuzz_regressions/%s", root, target);
    DIR *d = opendir(dir);
    CHECK(d != NULL);
    if (!d) return 0;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "rb");
        CHECK(f != NULL);
        if (!f) continue;
        uint8_t *buf = malloc(PF_MAX_INPUT + 1);
        size_t len = buf ? fread(buf, 1, PF_MAX_INPUT + 1, f) : 0;
        fclose(f);
        CHECK(buf != NULL && len <= PF_MAX_INPUT);
        printf("replaying %s/%s (%zu bytes)\n", target, e->d_name, len);
        fflush(stdout);
        CHECK_EQ_INT(one(buf, len), 0);
        free(buf);
        ++n;
    }
    closedir(d);
    return n;
}

static void lt_with_strides(dnnl_graph_logical_tensor_t *lt, size_t id, dnnl_data_type_t dt, int nd,
                            const int64_t *dims, const int64_t *strides) {
    dnnl_dims_t d = {0}, s = {0};
    for (int k = 0; k < nd; ++k) {
        d[k] = dims[k];
        s[k] = strides[k];
    }
    CHECK_EQ_INT(dnnl_graph_logical_tensor_init_with_strides(lt, id, dt, nd, d, s,
                                                             dnnl_graph_tensor_property_variable),
                 dnnl_success);
}

/* get_mem_size: the span oneDNN defines, widened for overlapping strides,
 * and dnnl_invalid_arguments where it cannot be represented. */
static void check_span(void) {
    dnnl_graph_logical_tensor_t lt;
    size_t bytes = 0;
    /* Dense and padded layouts keep oneDNN's max(dims[d] * strides[d]). */
    lt_with_strides(&lt, 0, dnnl_f32, 2, (int64_t[]){2, 3}, (int64_t[]){4, 1});
    CHECK_EQ_INT(dnnl_graph_logical_tensor_get_mem_size(&lt, &bytes), dnnl_success);
    CHECK_EQ_INT(bytes, 8 * 4);
    /* s4: half a byte per element, rounded up. */
    lt_with_strides(&lt, 0, dnnl_s4, 1, (int64_t[]){7}, (int64_t[]){1});
    CHECK_EQ_INT(dnnl_graph_logical_tensor_get_mem_size(&lt, &bytes), dnnl_success);
    CHECK_EQ_INT(bytes, 4);
    /* A zero stride reads one element over and over: one element, not 0. */
    lt_with_strides(&lt, 0, dnnl_f32, 2, (int64_t[]){1, 5}, (int64_t[]){5, 0});
    CHECK_EQ_INT(dnnl_graph_logical_tensor_get_mem_size(&lt, &bytes), dnnl_success);
    CHECK_EQ_INT(bytes, 4);
    /* Overlapping strides: the furthest element is (1 + 1) + 1 = 3 elements. */
    lt_with_strides(&lt, 0, dnnl_f32, 2, (int64_t[]){2, 2}, (int64_t[]){1, 1});
    CHECK_EQ_INT(dnnl_graph_logical_tensor_get_mem_size(&lt, &bytes), dnnl_success);
    CHECK_EQ_INT(bytes, 3 * 4);
    /* Unknown dims: SIZE_MAX, as before. */
    CHECK_EQ_INT(dnnl_graph_logical_tensor_init(&lt, 0, dnnl_f32, 2, dnnl_graph_layout_type_strided,
                                                dnnl_graph_tensor_property_variable),
                 dnnl_success);
    CHECK_EQ_INT(dnnl_graph_logical_tensor_get_mem_size(&lt, &bytes), dnnl_success);
    CHECK(bytes == SIZE_MAX);
    /* Overflows of int64 (element count, stride span, bytes) and negative
     * strides are refused. */
    const int64_t big = (int64_t)1 << 40;
    lt_with_strides(&lt, 0, dnnl_f32, 2, (int64_t[]){big, big}, (int64_t[]){1, 1});
    CHECK_EQ_INT(dnnl_graph_logical_tensor_get_mem_size(&lt, &bytes), dnnl_invalid_arguments);
    lt_with_strides(&lt, 0, dnnl_f32, 1, (int64_t[]){4}, (int64_t[]){INT64_MAX});
    CHECK_EQ_INT(dnnl_graph_logical_tensor_get_mem_size(&lt, &bytes), dnnl_invalid_arguments);
    lt_with_strides(&lt, 0, dnnl_f32, 1, (int64_t[]){INT64_MAX / 2}, (int64_t[]){1});
    CHECK_EQ_INT(dnnl_graph_logical_tensor_get_mem_size(&lt, &bytes), dnnl_invalid_arguments);
    lt_with_strides(&lt, 0, dnnl_f32, 2, (int64_t[]){3, 3}, (int64_t[]){-3, 1});
    CHECK_EQ_INT(dnnl_graph_logical_tensor_get_mem_size(&lt, &bytes), dnnl_invalid_arguments);
    /* init_with_dims derives strides without overflowing; the size is refused. */
    dnnl_dims_t huge = {big, big, big};
    CHECK_EQ_INT(dnnl_graph_logical_tensor_init_with_dims(&lt, 0, dnnl_f32, 3, huge, dnnl_graph_layout_type_strided,
                                                          dnnl_graph_tensor_property_variable),
                 dnnl_success);
    CHECK_EQ_INT(dnnl_graph_logical_tensor_get_mem_size(&lt, &bytes), dnnl_invalid_arguments);
    /* Tensor creation uses the same span: a layout no buffer holds is refused. */
    dnnl_engine_t eng = NULL;
    CHECK_EQ_INT(dnnl_engine_create(&eng, dnnl_cpu, 0), dnnl_success);
    dnnl_graph_tensor_t t = NULL;
    float buf[4];
    CHECK_EQ_INT(dnnl_graph_tensor_create(&t, &lt, eng, buf), dnnl_invalid_arguments);
    CHECK_EQ_INT(dnnl_graph_tensor_create(&t, &lt, eng, DNNL_MEMORY_ALLOCATE), dnnl_invalid_arguments);
    dnnl_engine_destroy(eng);
    /* A struct with 13 dims (filled by hand) compares unequal, reading nothing past dims. */
    memset(&lt, 0, sizeof lt);
    lt.ndims = 13;
    lt.layout_type = dnnl_graph_layout_type_strided;
    uint8_t eq = 1;
    CHECK_EQ_INT(dnnl_graph_logical_tensor_is_equal(&lt, &lt, &eq), dnnl_success);
    CHECK_EQ_INT(eq, 0);
    CHECK_EQ_INT(dnnl_graph_logical_tensor_get_mem_size(&lt, &bytes), dnnl_invalid_arguments);
}

/* Compile refuses an output whose strides overlap (two elements, one address). */
static void check_overlapping_output(void) {
    dnnl_graph_logical_tensor_t x, y, yo;
    lt_with_strides(&x, 0, dnnl_f32, 2, (int64_t[]){2, 3}, (int64_t[]){3, 1});
    lt_with_strides(&y, 1, dnnl_f32, 2, (int64_t[]){2, 3}, (int64_t[]){3, 1});
    lt_with_strides(&yo, 1, dnnl_f32, 2, (int64_t[]){2, 3}, (int64_t[]){1, 1});
    dnnl_graph_op_t op = NULL;
    CHECK_EQ_INT(dnnl_graph_op_create(&op, 0, dnnl_graph_op_relu, "relu"), dnnl_success);
    CHECK_EQ_INT(dnnl_graph_op_add_input(op, &x), dnnl_success);
    CHECK_EQ_INT(dnnl_graph_op_add_output(op, &y), dnnl_success);
    dnnl_graph_partition_t p = pt_test_one_op_partition(op);
    CHECK(p != NULL);
    if (!p) return;
    dnnl_engine_t eng = NULL;
    CHECK_EQ_INT(dnnl_engine_create(&eng, dnnl_cpu, 0), dnnl_success);
    const dnnl_graph_logical_tensor_t *ins[] = {&x}, *outs[] = {&yo}, *dense[] = {&y};
    dnnl_graph_compiled_partition_t cp = NULL;
    CHECK_EQ_INT(dnnl_graph_compiled_partition_create(&cp, p), dnnl_success);
    CHECK_EQ_INT(dnnl_graph_partition_compile(p, cp, 1, ins, 1, outs, eng), dnnl_invalid_arguments);
    CHECK_EQ_INT(dnnl_graph_partition_compile(p, cp, 1, ins, 1, dense, eng), dnnl_success);
    dnnl_graph_compiled_partition_destroy(cp);
    dnnl_graph_partition_destroy(p);
    dnnl_engine_destroy(eng);
}

int main(void) {
    const char *root = getenv("PARTITA_SOURCE_DIR");
    if (!root) root = ".";
    size_t nj = replay_dir(root, "fuzz_json_graph", pf_json_one);
    size_t na = replay_dir(root, "fuzz_c_api", pf_api_one);
    printf("replayed %zu JSON inputs and %zu C-API inputs\n", nj, na);
    CHECK(nj > 0 && na > 0);
    check_span();
    check_overlapping_output();
    return pt_test_summary("test_int_fuzz_regressions");
}
