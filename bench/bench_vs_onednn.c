/* Runs every graph case of the shared complex_fusion set and the MatMul cases
 * of bench/cases through Partita and through oneDNN in one process, both
 * loaded with dlopen and driven by the same code (graph_api.h,
 * case_runner.h), and prints per case the partitions each library forms, the
 * median time of one execution of all partitions, the ratio oneDNN time /
 * Partita time (> 1: Partita is faster) and how far the outputs differ. */
#define _DEFAULT_SOURCE
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_case.h"
#include "case_runner.h"
#include "bench_util.h"
#include "graph_api.h"

#ifndef BENCH_SOURCE_DIR
#define BENCH_SOURCE_DIR "."
#endif
#ifndef BENCH_PARTITA_LIBRARY
#define BENCH_PARTITA_LIBRARY "libpartita.so"
#endif
#ifndef BENCH_ONEDNN_DIR
#define BENCH_ONEDNN_DIR "build/bench/venv/lib"
#endif

/* Outputs further apart than this (relative to the output's largest value)
 * are flagged: low-precision cases legitimately differ by ~1e-2. */
#define BIG_DIFFERENCE 0.05

typedef struct options {
    const char *shared_dir;
    const char *cases_dir;
    const char *partita_library;
    const char *onednn_dir;
    const char *filter;
    int timed_runs;
    double budget_s;
    double max_gib;
    int threads;
} options;

static void usage(void) {
    printf("usage: bench_vs_onednn [options]\n"
           "  --shared=DIR       shared cases root (default $PARTITA_SHARED_DIR or "
           "<project>/../shared)\n"
           "  --cases=DIR        extra cases (default <project>/bench/cases)\n"
           "  --onednn-dir=DIR   directory of libdnnl.so.3 and its runtime "
           "(default $ONEDNN_DIR or build/bench/venv/lib)\n"
           "  --partita-lib=PATH libpartita.so to load\n"
           "  --filter=TEXT      only cases whose file name contains TEXT\n"
           "  --runs=N           timed executions per case and library (5)\n"
           "  --budget=SEC       fewer timed runs when they would take longer, both\n"
           "                     libraries together (30)\n"
           "  --max-gib=G        skip cases whose tensors exceed G GiB (3.5)\n"
           "  --threads=N        OpenMP threads for Partita (2)\n");
}

/* LD_LIBRARY_PATH is read once when the process starts, so the oneDNN
 * runtime's directory (libtbb, libsycl, the OpenCL CPU device) is put there
 * and the benchmark starts itself again. OCL_ICD_FILENAMES points the
 * OpenCL loader at the CPU device library: oneDNN's CPU engine in these
 * wheels is a SYCL CPU device and finds none without it. */
static void ensure_onednn_environment(const char *onednn_dir, char **argv) {
    if (getenv("BENCH_ONEDNN_ENVIRONMENT")) return;
    char *library_path = getenv("LD_LIBRARY_PATH");
    size_t size = strlen(onednn_dir) + (library_path ? strlen(library_path) : 0) + 2;
    char *new_path = malloc(size);
    char icd[4096];
    if (!new_path) return;
    snprintf(new_path, size, "%s%s%s", onednn_dir, library_path ? ":" : "",
            library_path ? library_path : "");
    snprintf(icd, sizeof icd, "%s/libintelocl.so", onednn_dir);
    setenv("LD_LIBRARY_PATH", new_path, 1);
    if (!getenv("OCL_ICD_FILENAMES")) setenv("OCL_ICD_FILENAMES", icd, 1);
    setenv("BENCH_ONEDNN_ENVIRONMENT", "1", 1);
    free(new_path);
    fflush(stdout);
    execv("/proc/self/exe", argv);
    perror("bench_vs_onednn: re-exec");
}

static int compare_strings(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Appends the *.json files under dir (one level of subdirectories too). */
static void collect_cases(const char *dir, int depth, char ***paths, size_t *count) {
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *entry;
    while ((entry = readdir(d))) {
        if (entry->d_name[0] == '.') continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, entry->d_name);
        struct stat st;
        if (stat(path, &st)) continue;
        if (S_ISDIR(st.st_mode)) {
            if (depth > 0) collect_cases(path, depth - 1, paths, count);
            continue;
        }
        size_t len = strlen(entry->d_name);
        if (len < 5 || strcmp(entry->d_name + len - 5, ".json")) continue;
        char **grown = realloc(*paths, (*count + 1) * sizeof **paths);
        if (!grown) return;
        *paths = grown;
        (*paths)[(*count)++] = strdup(path);
    }
    closedir(d);
}

/* Prepares the case in both libraries (both sets of tensors stay alive),
 * warms each up once, then alternates timed executions between them (each
 * right after untimed ones of the same library: rewarm), also swapping which goes
 * first, so that both meet the same load on a shared machine. Fewer timed
 * runs when a pair of executions exceeds the budget. */
/* Untimed executions after the quiet gap: at least one, and more until
 * REWARM_S have passed.  After 30 ms idle this VM needs about 10 ms of work
 * before it runs at full speed again (bf16 128x4096x4096 MatMul alone: the
 * execution after 1 untimed one 4.5 ms, after 2 3.9, after 4 2.9, as with
 * no gap), for either library. */
#define REWARM_S 0.015
static int rewarm(case_session *s, case_result *result) {
    double spent = 0, t = 0;
    for (int i = 0; i < 100 && (i == 0 || spent < REWARM_S); ++i) {
        if (!case_execute(s, &t, result)) return 0;
        spent += t;
    }
    return 1;
}

static void time_both(const graph_api *partita, dnnl_engine_t partita_engine,
        dnnl_stream_t partita_stream, case_result *p, const graph_api *onednn,
        dnnl_engine_t onednn_engine, dnnl_stream_t onednn_stream, case_result *d,
        const bench_case *c, const run_options *run) {
    case_session *ps = case_prepare(partita, partita_engine, partita_stream, c, p);
    case_session *ds = onednn
            ? case_prepare(onednn, onednn_engine, onednn_stream, c, d)
            : NULL;
    double p_first = 0, d_first = 0;
    if (ps) bench_warm_up(ps, run, &p_first, p);
    if (ds) bench_warm_up(ds, run, &d_first, d);
    int runs = bench_runs_within_budget(
            run, (p->ok ? p_first : 0) + (d->ok ? d_first : 0));
    double *p_times = calloc((size_t)runs, sizeof *p_times);
    double *d_times = calloc((size_t)runs, sizeof *d_times);
    if (!p_times || !d_times) {
        fprintf(stderr, "bench_vs_onednn: out of memory\n");
        exit(2);
    }
    for (int r = 0; r < runs; ++r)
        for (int turn = 0; turn < 2; ++turn) {
            int partita_turn = (turn + r) % 2 == 0;
            /* A quiet gap first: the other library's worker threads (TBB,
             * OpenMP) spin for a while after a run and would steal the
             * cores from this one.  Then untimed executions (rewarm):
             * after the gap the worker threads sleep, and on this VM waking
             * a sleeping thread takes up to a scheduler tick (an empty
             * two-thread OpenMP region measured 5.8 ms after 30 ms idle),
             * which a fork-join runtime pays at its barrier and TBB's work
             * stealing does not, and the core itself runs slower for about
             * 10 ms; the timed execution measures both in steady state, as
             * a serving loop runs them. */
            usleep(30000);
            if (partita_turn && ps && p->ok)
                p->ok = rewarm(ps, p) && case_execute(ps, &p_times[r], p);
            if (!partita_turn && ds && d->ok)
                d->ok = rewarm(ds, d) && case_execute(ds, &d_times[r], d);
        }
    if (p->ok) {
        p->timed_runs = runs;
        p->median_s = bench_median(p_times, runs);
    }
    if (d->ok) {
        d->timed_runs = runs;
        d->median_s = bench_median(d_times, runs);
    }
    free(p_times);
    free(d_times);
    if (ps) case_finish(ps, c, 1, p);
    if (ds) case_finish(ds, c, 1, d);
}

static void describe_failure(const case_result *r, char *text, size_t size) {
    snprintf(text, size, "%s: %s (%s)", r->stage,
            graph_api_status_name(r->status), r->message);
}

int main(int argc, char **argv) {
    options o = {0};
    o.shared_dir = getenv("PARTITA_SHARED_DIR");
    o.cases_dir = BENCH_SOURCE_DIR "/bench/cases";
    o.partita_library = BENCH_PARTITA_LIBRARY;
    o.onednn_dir = getenv("ONEDNN_DIR") ? getenv("ONEDNN_DIR") : BENCH_ONEDNN_DIR;
    o.timed_runs = 5;
    o.budget_s = 30;
    o.max_gib = 3.5;
    o.threads = 2;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if (!strncmp(a, "--shared=", 9)) o.shared_dir = a + 9;
        else if (!strncmp(a, "--cases=", 8)) o.cases_dir = a + 8;
        else if (!strncmp(a, "--onednn-dir=", 13)) o.onednn_dir = a + 13;
        else if (!strncmp(a, "--partita-lib=", 14)) o.partita_library = a + 14;
        else if (!strncmp(a, "--filter=", 9)) o.filter = a + 9;
        else if (!strncmp(a, "--runs=", 7)) o.timed_runs = atoi(a + 7);
        else if (!strncmp(a, "--budget=", 9)) o.budget_s = atof(a + 9);
        else if (!strncmp(a, "--max-gib=", 10)) o.max_gib = atof(a + 10);
        else if (!strncmp(a, "--threads=", 10)) o.threads = atoi(a + 10);
        else {
            usage();
            return strcmp(a, "--help") ? 2 : 0;
        }
    }
    char shared_default[4096];
    if (!o.shared_dir) {
        snprintf(shared_default, sizeof shared_default, "%s/../shared",
                BENCH_SOURCE_DIR);
        o.shared_dir = shared_default;
    }
    ensure_onednn_environment(o.onednn_dir, argv);
    if (!getenv("OMP_NUM_THREADS") || o.threads != 2) {
        char threads[16];
        snprintf(threads, sizeof threads, "%d", o.threads);
        setenv("OMP_NUM_THREADS", threads, 1);
    }

    graph_api partita, onednn;
    char error[512];
    if (graph_api_load(&partita, "partita", o.partita_library, error, sizeof error)) {
        fprintf(stderr, "bench_vs_onednn: cannot load Partita (%s): %s\n",
                o.partita_library, error);
        return 1;
    }
    char onednn_library[4096];
    snprintf(onednn_library, sizeof onednn_library, "%s/libdnnl.so.3", o.onednn_dir);
    int have_onednn = graph_api_load(&onednn, "onednn", onednn_library, error,
                              sizeof error) == 0;
    if (!have_onednn)
        printf("oneDNN not loaded (%s): %s\nOnly Partita runs; no ratios.\n",
                onednn_library, error);

    dnnl_engine_t partita_engine = NULL, onednn_engine = NULL;
    dnnl_stream_t partita_stream = NULL, onednn_stream = NULL;
    if (partita.engine_create(&partita_engine, dnnl_cpu, 0)
            || partita.stream_create(&partita_stream, partita_engine, dnnl_stream_default_flags)) {
        fprintf(stderr, "bench_vs_onednn: Partita CPU engine failed\n");
        return 1;
    }
    if (have_onednn
            && (onednn.engine_create(&onednn_engine, dnnl_cpu, 0)
                    || onednn.stream_create(&onednn_stream, onednn_engine, dnnl_stream_default_flags))) {
        printf("oneDNN CPU engine failed (OCL_ICD_FILENAMES=%s); no ratios.\n",
                getenv("OCL_ICD_FILENAMES") ? getenv("OCL_ICD_FILENAMES") : "");
        have_onednn = 0;
    }

    char **paths = NULL;
    size_t n_paths = 0, n_shared;
    char complex_dir[8192];
    snprintf(complex_dir, sizeof complex_dir, "%s/graphs/complex_fusion", o.shared_dir);
    collect_cases(complex_dir, 1, &paths, &n_paths);
    qsort(paths, n_paths, sizeof *paths, compare_strings);
    n_shared = n_paths;
    collect_cases(o.cases_dir, 0, &paths, &n_paths);
    qsort(paths + n_shared, n_paths - n_shared, sizeof *paths, compare_strings);
    if (n_shared == 0)
        printf("no cases under %s (set PARTITA_SHARED_DIR or --shared)\n", complex_dir);

    printf("bench_vs_onednn: %zu cases (%zu from %s, %zu from %s); Partita: "
           "OMP_NUM_THREADS=%s; oneDNN: TBB over all %ld cores; warm-up 1, "
           "then up to %d timed runs alternating between the libraries (fewer "
           "past %.0f s per case), medians\n",
            n_paths, n_shared, complex_dir, n_paths - n_shared, o.cases_dir,
            getenv("OMP_NUM_THREADS"), sysconf(_SC_NPROCESSORS_ONLN),
            o.timed_runs, o.budget_s);
    printf("parts = partitions (fused = with more than one op); ratio = oneDNN "
           "time / Partita time (> 1: Partita faster); diff = max |Partita - "
           "oneDNN| / max |oneDNN| over the graph outputs\n\n");
    printf("%-58s %9s %9s %11s %11s %8s %9s\n", "case", "P parts", "O parts",
            "Partita ms", "oneDNN ms", "ratio", "diff");

    run_options run = {1, o.timed_runs, o.budget_s, 1};
    double log_ratio_sum = 0;
    int n_ratios = 0, n_partita_failed = 0, n_onednn_failed = 0, n_skipped = 0;
    int n_flagged = 0;
    for (size_t i = 0; i < n_paths; ++i) {
        const char *path = paths[i];
        const char *shown = path;
        if (!strncmp(path, complex_dir, strlen(complex_dir)))
            shown = path + strlen(complex_dir) + 1;
        else if (!strncmp(path, o.cases_dir, strlen(o.cases_dir)))
            shown = path + strlen(o.cases_dir) - strlen("cases");
        if (o.filter && !strstr(shown, o.filter)) continue;
        bench_case c;
        if (bench_case_load_json(&c, path, error, sizeof error)) {
            printf("%-58s not loaded: %s\n", shown, error);
            continue;
        }
        double gib = bench_case_total_bytes(&c) / (1024.0 * 1024 * 1024);
        if (gib > o.max_gib) {
            printf("%-58s skipped: tensors take %.1f GiB (> %.1f, --max-gib)\n",
                    shown, gib, o.max_gib);
            ++n_skipped;
            bench_case_free(&c);
            continue;
        }
        case_result p, d;
        memset(&d, 0, sizeof d);
        time_both(&partita, partita_engine, partita_stream, &p,
                have_onednn ? &onednn : NULL, onednn_engine, onednn_stream, &d,
                &c, &run);

        char p_parts[32] = "-", d_parts[32] = "-";
        if (p.n_partitions)
            snprintf(p_parts, sizeof p_parts, "%zu(%zu)", p.n_partitions, p.n_fused);
        if (d.n_partitions)
            snprintf(d_parts, sizeof d_parts, "%zu(%zu)", d.n_partitions, d.n_fused);
        printf("%-58s %9s %9s ", shown, p_parts, d_parts);
        if (p.ok) printf("%11.3f ", p.median_s * 1e3);
        else printf("%11s ", "failed");
        if (d.ok) printf("%11.3f ", d.median_s * 1e3);
        else printf("%11s ", have_onednn ? "failed" : "-");
        if (p.ok && d.ok) {
            double ratio = d.median_s / p.median_s;
            size_t nan_mismatches = 0;
            double diff = compare_outputs(&p, &d, &nan_mismatches);
            log_ratio_sum += log(ratio);
            ++n_ratios;
            printf("%8.3f ", ratio);
            if (diff < 0) printf("%9s", "n/a");
            else printf("%9.2e", diff);
            if (diff > BIG_DIFFERENCE || nan_mismatches) {
                printf("  DISAGREE");
                if (nan_mismatches) printf(" (%zu NaN/inf mismatches)", nan_mismatches);
                ++n_flagged;
            }
        }
        printf("\n");
        char why[512];
        if (!p.ok) {
            describe_failure(&p, why, sizeof why);
            printf("    Partita %s\n", why);
            ++n_partita_failed;
        }
        if (have_onednn && !d.ok) {
            describe_failure(&d, why, sizeof why);
            printf("    oneDNN %s\n", why);
            ++n_onednn_failed;
        }
        fflush(stdout);
        case_result_free(&p);
        case_result_free(&d);
        bench_case_free(&c);
    }
    printf("\n");
    if (n_ratios)
        printf("geomean ratio (oneDNN time / Partita time) over %d cases both ran: "
               "%.3f\n",
                n_ratios, exp(log_ratio_sum / n_ratios));
    printf("vs_onednn geomean=%.4f cases_compared=%d partita_failed=%d "
           "onednn_failed=%d skipped=%d disagree=%d\n",
            n_ratios ? exp(log_ratio_sum / n_ratios) : 0.0, n_ratios,
            n_partita_failed, n_onednn_failed, n_skipped, n_flagged);
    for (size_t i = 0; i < n_paths; ++i) free(paths[i]);
    free(paths);
    partita.stream_destroy(partita_stream);
    partita.engine_destroy(partita_engine);
    if (have_onednn) {
        onednn.stream_destroy(onednn_stream);
        onednn.engine_destroy(onednn_engine);
    }
    return 0;
}
