/* partita: command-line runner for JSON graph cases (docs/graph-json.md). */
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "oneapi/dnnl/dnnl_graph.h"

static void usage(FILE *f) {
    fputs(
        "Usage: partita [OPTIONS] --case=FILE.json [OPTIONS] [--case=...]\n"
        "       partita [OPTIONS] --batch=HARNESS_FILE\n"
        "\n"
        "Runs JSON graph cases (the oneDNN graph-dump format) through the Partita\n"
        "library: builds each graph with the public C API, finalizes it, partitions\n"
        "it with the fusion policy and, for every partition, compiles, fills inputs,\n"
        "executes and (mode C) compares each output with a reference computed by\n"
        "running the partition's ops one by one, unfused, as single-op partitions\n"
        "with f32 data (Quantize/Dequantize/DynamicQuantize/DynamicDequantize keep\n"
        "their real types; TypeCast, Reciprocal and Dropout are computed by partita).\n"
        "Tolerances follow the primitive driver of the op producing each output.\n"
        "\n"
        "Arguments are processed left to right exactly like the tokens of a batch\n"
        "file: knobs update the current settings, --case=FILE runs the case with the\n"
        "settings so far, settings persist until --reset.\n"
        "\n"
        "Cases and batches:\n"
        "  --case=FILE          run a JSON graph (one run per element of the knob product)\n"
        "  --batch=FILE         read a harness file: whitespace-separated tokens, '#'\n"
        "                       comments, a trailing '\\' joins a token with the next one;\n"
        "                       nesting allowed; does not reset settings\n"
        "  --graphs-root=DIR    extra directory to look up --case/--batch paths in\n"
        "  Paths are tried as given, then relative to the directory of every batch\n"
        "  file opened so far and each of its parent directories (harness paths are\n"
        "  relative to the graphs/ root), then under --graphs-root directories.\n"
        "\n"
        "Knobs (comma-separated alternatives; the Cartesian product is run in the\n"
        "order in-shapes, op-attrs, expected-n-partitions, attr-fpmath, op-kind,\n"
        "tensor-property, dt, dt-map, mb; an empty alternative leaves the graph as is):\n"
        "  --reset                      restore all knobs below to their defaults\n"
        "  --in-shapes=ID:SPEC[+ID:SPEC]  new shape/layout of graph input (or output)\n"
        "                               tensor ID; SPEC = SHAPE | SHAPE*TAG |\n"
        "                               SHAPE*STRIDES | *TAG | *STRIDES | - (rank 0) |\n"
        "                               0 (1-D, empty); SHAPE = 2x3x4, TAG = acdb...\n"
        "                               (like the benchmark driver: an ID is read up\n"
        "                               to its first non-digit, and IDs the graph\n"
        "                               does not have are skipped)\n"
        "  --op-attrs=ID:NAME:VAL[*NAME:VAL][+ID:...]  set attributes of op ID\n"
        "                               (lists are 'x'-separated: 0:strides:2x2;\n"
        "                               a fractional entry of an integer list is\n"
        "                               rounded to the nearest integer)\n"
        "  --op-kind=ID:KIND[+ID:KIND]  change op kinds (binary<->binary or\n"
        "                               eltwise<->eltwise); KIND=undef removes a unary\n"
        "                               or binary op\n"
        "  --tensor-property=ID:PROP[+...]  PROP = undef|variable|constant|host_scalar\n"
        "  --dt=DT                      f32|bf16|f16: retype a purely floating-point graph\n"
        "  --dt=ID:DT[+ID:DT]           set the data type of tensor ID everywhere\n"
        "  --mb=N                       set dim 0 of every batch-carrying graph input (0: keep)\n"
        "  --attr-fpmath=MODE[:BOOL]    strict|bf16|f16|tf32|any, BOOL = apply_to_int\n"
        "  --expected-n-partitions=N    required partition count (default 1; 0: unchecked)\n"
        "  Rewrites are applied in the order docs/graph-json.md lists (load-time\n"
        "  power-of-two Quantize/Dequantize scales, shapes and --mb, op attributes,\n"
        "  shape inference, output shapes, per-channel parameters, op kinds, math\n"
        "  mode, group quantization, data types, tensor properties).\n"
        "\n"
        "Common options (not reset by --reset):\n"
        "  --mode=C|P           C: correctness (default); P: performance\n"
        "  --perf-runs=N        mode P: timed executions per partition (default 10);\n"
        "                       the median is reported per partition, plus their sum\n"
        "  --perf-warmup=N      mode P: untimed executions before timing (default 3)\n"
        "  --propagate=BOOL     mode C: inputs produced by an earlier partition take that\n"
        "                       partition's library results instead of fresh test data\n"
        "                       (default false: each partition is validated on its own)\n"
        "  --engine=cpu         the only engine\n"
        "  --start=N            skip the first N runs (they are still counted as numbered)\n"
        "  -vN, --verbose=N     1: list partitions; 2: also every compared output;\n"
        "                       3: also a digest (FNV-1a) of every output's values\n"
        "  -h, --help           this text\n"
        "\n"
        "Output (mode C): one line per run,\n"
        "  <n>:<STATUS> [(<reason>)] __REPRO: <knobs> --case=<path>\n"
        "STATUS is PASSED, MISTRUSTED (passed, but most reference values are zero),\n"
        "SKIPPED (e.g. every partition unsupported, Pow in an offending partition, an\n"
        "accumulation_mode other than strict/relaxed), FAILED (library error, wrong\n"
        "partition count, mismatching values), UNIMPLEMENTED (some partition\n"
        "unsupported), INVALID_ARGUMENTS (the knobs cannot be applied to the graph) or\n"
        "UNTESTED (no reference could be computed). The last line is\n"
        "  N passed, N failed[, N skipped]\n"
        "Mode P prints <n>:PERF with each partition's median time and the total.\n"
        "\n"
        "Exit status: 0 when no run failed, 1 when some run failed (or an option was\n"
        "invalid), 2 for usage errors.\n",
        f);
}

int main(int argc, char **argv) {
    bool has_work = false;
    for (int k = 1; k < argc; ++k) {
        if (!strcmp(argv[k], "--help") || !strcmp(argv[k], "-h")) {
            usage(stdout);
            return 0;
        }
        if (!strncmp(argv[k], "--case=", 7) || !strncmp(argv[k], "--batch=", 8)) has_work = true;
    }
    if (!has_work) {
        fputs("partita: nothing to run: give --case=FILE or --batch=FILE (see --help)\n", stderr);
        return 2;
    }
    dnnl_engine_t eng = NULL;
    dnnl_stream_t strm = NULL;
    if (dnnl_engine_create(&eng, dnnl_cpu, 0) != dnnl_success ||
        dnnl_stream_create(&strm, eng, dnnl_stream_default_flags) != dnnl_success) {
        fputs("partita: cannot create the CPU engine and stream\n", stderr);
        if (eng) dnnl_engine_destroy(eng);
        return 1;
    }
    pc_run_opts opts = {.mode = 'C', .perf_runs = 10, .perf_warmup = 3, .propagate = false, .verbose = 0};
    pc_harness *h = pc_harness_new(&opts, eng, strm);
    if (!h) {
        fputs("partita: out of memory\n", stderr);
        dnnl_stream_destroy(strm);
        dnnl_engine_destroy(eng);
        return 1;
    }
    for (int k = 1; k < argc; ++k) pc_harness_token(h, argv[k]);
    pc_harness_summary(h);
    int rc = pc_harness_failed(h) ? 1 : 0;
    pc_harness_free(h);
    dnnl_stream_destroy(strm);
    dnnl_engine_destroy(eng);
    return rc;
}
