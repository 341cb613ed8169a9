/* One input of the JSON-graph fuzz target: the bytes are a JSON graph case
 * (docs/graph-json.md) and go through the same code as `partita --case=`:
 * the loader (tools/case_json.c), the default rewrite (shape inference,
 * tools/rewrite.c) and the runner (tools/runner.c: build through the public C
 * API, finalize, partition, compile, fill, execute).  Cases whose tensors are
 * large are parsed and built but not run, so that every input stays fast. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "case_json.h"
#include "fuzz_one.h"
#include "oneapi/dnnl/dnnl_graph.h"
#include "rewrite.h"
#include "runner.h"

/* Elements a logical tensor spans (dims product, and for known strides the
 * furthest element + 1), or -1 when that overflows or exceeds `limit`.
 * Unknown shapes count as 0: the runner refuses them by itself. */
static int64_t lt_elems(const pc_lt *lt, int64_t limit) {
    if (lt->ndims <= 0 || lt->ndims > DNNL_MAX_NDIMS) return lt->ndims == 0 ? 1 : 0;
    int64_t n = 1, far = 0;
    bool strided = lt->layout_type == dnnl_graph_layout_type_strided;
    for (int d = 0; d < lt->ndims; ++d) {
        int64_t e = lt->dims[d];
        if (e < 0) return 0;
        if (e == 0) return 0;
        if (__builtin_mul_overflow(n, e, &n) || n > limit) return -1;
        int64_t s = lt->layout.strides[d];
        if (!strided || e == 1 || s == DNNL_GRAPH_UNKNOWN_DIM) continue;
        if (s == INT64_MIN) return -1;
        int64_t step;
        if (__builtin_mul_overflow(e - 1, s < 0 ? -s : s, &step) || __builtin_add_overflow(far, step, &far) ||
            far >= limit)
            return -1;
    }
    return n > far + 1 ? n : far + 1;
}

/* True when every tensor of the case is small enough to execute. */
static bool case_small(const pc_case *c) {
    /* 8 bytes per element covers every data type (s64 and f64 the widest). */
    const int64_t limit = PF_MAX_TENSOR_BYTES / 8;
    int64_t total = 0;
    for (size_t k = 0; k < c->nops; ++k) {
        const pc_op *op = &c->ops[k];
        for (size_t q = 0; q < op->nin + op->nout; ++q) {
            const pc_lt *lt = q < op->nin ? &op->in[q] : &op->out[q - op->nin];
            int64_t n = lt_elems(lt, limit);
            if (n < 0) return false;
            total += n;
            if (total > (int64_t)(PF_MAX_TOTAL_BYTES / 8)) return false;
        }
    }
    return true;
}

int pf_json_one(const uint8_t *data, size_t size) {
    if (size > PF_MAX_INPUT) return 0;
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    pc_case c;
    char err[1024] = "";
    int rc = pc_case_parse(text, "fuzz.json", &c, err, sizeof err);
    free(text);
    if (rc) return 0;
    /* The knobs' defaults, as `partita --case=` runs a case. */
    pc_knobs k = {.in_shapes = "", .op_attrs = "", .op_kind = "", .tensor_property = "", .dt = "", .dt_map = "",
                  .fpmath = "", .mb = 0, .expected_n = 0};
    if (pc_rewrite(&c, &k, err, sizeof err) == 0 && case_small(&c)) {
        dnnl_engine_t eng = NULL;
        dnnl_stream_t strm = NULL;
        if (dnnl_engine_create(&eng, dnnl_cpu, 0) == dnnl_success &&
            dnnl_stream_create(&strm, eng, dnnl_stream_default_flags) == dnnl_success) {
            /* Odd sizes run the correctness mode (with the op-by-op
             * reference), even sizes one timed execution. */
            pc_run_opts o = {.mode = (size & 1) ? 'C' : 'P', .perf_runs = 1, .perf_warmup = 0};
            pc_case_result res;
            pc_run_case(&c, 0, &o, eng, strm, &res);
        }
        if (strm) dnnl_stream_destroy(strm);
        if (eng) dnnl_engine_destroy(eng);
    }
    pc_case_free(&c);
    return 0;
}
