/* partita: command-line runner for JSON graph cases (docs/graph-json.md). */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flops.h"
#include "harness.h"
#include "strutil.h"
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
        "  --peak=FILE          mode P: machine peaks for the fraction of peak, as\n"
        "                       `make bench` (bench_peak) writes them; default\n"
        "                       build/bench/peak.txt under the working directory, else\n"
        "                       bench/peak.txt next to this program, when present;\n"
        "                       --peak=none: no fraction (command line only)\n"
        "  --progress[=BOOL]    \"[n/total] <knobs> --case=FILE\" on stderr before every\n"
        "                       run (default: when stderr is a terminal; command line only)\n"
        "  --propagate=BOOL     mode C: inputs produced by an earlier partition take that\n"
        "                       partition's library results instead of fresh test data\n"
        "                       (default false: each partition is validated on its own)\n"
        "  --engine=cpu         the only engine\n"
        "  --start=N            skip the first N runs (they are still counted as numbered)\n"
        "  -vN, --verbose=N     1: list partitions; 2: also every compared output;\n"
        "                       3: also a digest (FNV-1a) of every output's values\n"
        "  -h, --help           this text\n"
        "  (ONEDNN_VERBOSE=1 in the environment makes the library print a line per\n"
        "  compiled partition and execution, with its pattern row and kernel.)\n"
        "\n"
        "Output (mode C): one line per run,\n"
        "  <n>:<STATUS> [(<reason>)] __REPRO: <knobs> --case=<path>\n"
        "STATUS is PASSED, MISTRUSTED (passed, but most reference values are zero),\n"
        "SKIPPED (e.g. every partition unsupported, Pow in an offending partition, an\n"
        "accumulation_mode other than strict/relaxed), FAILED (library error, wrong\n"
        "partition count, mismatching values), UNIMPLEMENTED (some partition\n"
        "unsupported), INVALID_ARGUMENTS (the knobs cannot be applied to the graph) or\n"
        "UNTESTED (no reference could be computed).\n"
        "\n"
        "Output (mode P): first the peaks used (or why there are none), then per run\n"
        "one line per partition and the run's line:\n"
        "      partition #<k> (<ops>): <median> ms[, <W> GFLOP, <R> GFLOP/s[, <F>% of\n"
        "      <class> peak]]\n"
        "  <n>:PERF total <sum> ms[, <W> GFLOP in <c> of <p> partitions, <R> GFLOP/s[,\n"
        "  <F>% of peak]] (median of N runs after W warm-up) __REPRO: ...\n"
        "(small amounts <W> are printed in MFLOP or FLOP).\n"
        "FLOPs are counted for MatMul (2*M*N*K per output matrix, batch and broadcast\n"
        "included) and Convolution (2*N*OC*OH*OW*IC/G*KH*KW) only; other ops count 0\n"
        "(element-wise work, SoftMax, normalization, data movement are not counted),\n"
        "so a partition without them prints no rate. The peak class of a partition is\n"
        "int8 when its MatMul/Convolution reads u8/s8 data (directly or through a\n"
        "Dequantize), bf16 when it reads bf16 or the math mode is bf16, f32 otherwise\n"
        "(f16 and int4/int8 weights behind a DynamicDequantize included). Figures for\n"
        "the library's thread count (OMP_NUM_THREADS, else the processors online): 1:\n"
        "one-thread peaks, 2: two-thread peaks, more: one-thread peak * threads. The\n"
        "run's fraction is (time the counted FLOPs need at peak) / (sum of medians).\n"
        "\n"
        "After two or more runs a summary table lists every run: number, status,\n"
        "partitions, fused partitions (more than one op), time (mode C: wall time of\n"
        "the run, reference included; mode P: sum of the medians) and the case with\n"
        "its non-default knobs. The last line is\n"
        "  N passed, N failed[, N skipped]\n"
        "\n"
        "Exit status: 0 when no run failed (MISTRUSTED and SKIPPED are not failures),\n"
        "1 when some run failed (FAILED, UNIMPLEMENTED, INVALID_ARGUMENTS, UNTESTED, a\n"
        "missing case file) or an option was invalid, 2 for usage errors (nothing to\n"
        "run, a bad --progress value, an unreadable --peak file).\n",
        f);
}

/* Threads the library will use: OMP_NUM_THREADS (its first number) when
 * set, otherwise the processors online. */
static int thread_count(void) {
    const char *e = getenv("OMP_NUM_THREADS");
    if (e && *e) {
        long n = strtol(e, NULL, 10);
        if (n > 0) return (int)n;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* The default peak file: build/bench/peak.txt under the working directory,
 * else bench/peak.txt next to the executable (the build directory). */
static bool default_peak(const char *argv0, char *buf, size_t cap) {
    if (access("build/bench/peak.txt", R_OK) == 0) {
        snprintf(buf, cap, "build/bench/peak.txt");
        return true;
    }
    const char *slash = strrchr(argv0, '/');
    if (!slash) return false;
    snprintf(buf, cap, "%.*s/bench/peak.txt", (int)(slash - argv0), argv0);
    return access(buf, R_OK) == 0;
}

int main(int argc, char **argv) {
    bool has_work = false, perf = false;
    const char *peak_arg = NULL;
    int progress = -1; /* -1: when stderr is a terminal */
    for (int k = 1; k < argc; ++k) {
        if (!strcmp(argv[k], "--help") || !strcmp(argv[k], "-h")) {
            usage(stdout);
            return 0;
        }
        if (!strncmp(argv[k], "--case=", 7) || !strncmp(argv[k], "--batch=", 8)) has_work = true;
        if (!strcmp(argv[k], "--mode=P") || !strcmp(argv[k], "--mode=p")) perf = true;
        if (!strncmp(argv[k], "--peak=", 7)) peak_arg = argv[k] + 7;
        if (!strcmp(argv[k], "--progress")) progress = 1;
        if (!strncmp(argv[k], "--progress=", 11)) {
            bool b;
            if (!pc_parse_bool(argv[k] + 11, &b)) {
                fprintf(stderr, "partita: %s: expected true or false (see --help)\n", argv[k]);
                return 2;
            }
            progress = b;
        }
    }
    if (!has_work) {
        fputs("partita: nothing to run: give --case=FILE or --batch=FILE (see --help)\n", stderr);
        return 2;
    }

    pc_peak peak;
    memset(&peak, 0, sizeof peak);
    char peak_path[1024] = "";
    bool want_peak = peak_arg ? (*peak_arg && strcmp(peak_arg, "none") != 0) : default_peak(argv[0], peak_path, sizeof peak_path);
    if (peak_arg && want_peak) snprintf(peak_path, sizeof peak_path, "%s", peak_arg);
    if (want_peak) {
        char err[1200] = "";
        if (pc_peak_load(peak_path, thread_count(), &peak, err, sizeof err)) {
            fprintf(stderr, "partita: --peak: %s\n", err);
            if (peak_arg) return 2;
        }
    }
    if (perf && peak.loaded)
        printf("peak (%s, %d thread%s): f32 %.1f GFLOP/s, bf16 %.1f GFLOP/s, int8 %.1f GOP/s\n", peak.path,
               peak.threads, peak.threads == 1 ? "" : "s", peak.gflops[PC_PEAK_F32], peak.gflops[PC_PEAK_BF16],
               peak.gflops[PC_PEAK_INT8]);
    else if (perf && peak_arg && !want_peak)
        printf("peak: not used (--peak=%s): no fraction of peak\n", peak_arg);
    else if (perf && want_peak)
        printf("peak: %s unreadable (see above): no fraction of peak\n", peak_path);
    else if (perf)
        printf("peak: no peak file (run `make bench` or give --peak=FILE): no fraction of peak\n");
    fflush(stdout);

    dnnl_engine_t eng = NULL;
    dnnl_stream_t strm = NULL;
    if (dnnl_engine_create(&eng, dnnl_cpu, 0) != dnnl_success ||
        dnnl_stream_create(&strm, eng, dnnl_stream_default_flags) != dnnl_success) {
        fputs("partita: cannot create the CPU engine and stream\n", stderr);
        if (eng) dnnl_engine_destroy(eng);
        return 1;
    }
    pc_run_opts opts = {.mode = 'C', .perf_runs = 10, .perf_warmup = 3, .propagate = false, .verbose = 0,
                        .peak = &peak};
    bool tty = isatty(STDERR_FILENO) != 0;
    size_t total = 0;
    if (progress == 1 || (progress == -1 && tty)) {
        /* A dry run over the same tokens counts the runs. */
        pc_harness *dry = pc_harness_new(&opts, eng, strm);
        if (dry) {
            pc_harness_set_counting(dry, true);
            for (int k = 1; k < argc; ++k) pc_harness_token(dry, argv[k]);
            total = pc_harness_cases(dry);
            pc_harness_free(dry);
        }
    }
    pc_harness *h = pc_harness_new(&opts, eng, strm);
    if (!h) {
        fputs("partita: out of memory\n", stderr);
        dnnl_stream_destroy(strm);
        dnnl_engine_destroy(eng);
        return 1;
    }
    pc_harness_set_progress(h, progress == 1 || (progress == -1 && tty), tty, total);
    for (int k = 1; k < argc; ++k) pc_harness_token(h, argv[k]);
    pc_harness_summary(h);
    int rc = pc_harness_failed(h) ? 1 : 0;
    pc_harness_free(h);
    dnnl_stream_destroy(strm);
    dnnl_engine_destroy(eng);
    return rc;
}
