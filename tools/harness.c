/* Harness files, knobs and the case product; see harness.h. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "case_json.h"
#include "rewrite.h"
#include "strutil.h"

/* ---- tokenizer ------------------------------------------------------------ */

void pc_tokens_free(char **tok, long n) {
    for (long k = 0; k < n; ++k) free(tok[k]);
    free(tok);
}

static int push_token(char ***v, long *n, long *cap, const char *s, size_t len) {
    if (*n == *cap) {
        long nc = *cap ? *cap * 2 : 64;
        char **g = realloc(*v, (size_t)nc * sizeof *g);
        if (!g) return -1;
        *v = g;
        *cap = nc;
    }
    char *t = malloc(len + 1);
    if (!t) return -1;
    memcpy(t, s, len);
    t[len] = '\0';
    (*v)[(*n)++] = t;
    return 0;
}

static int append_to_last(char **v, long n, const char *s, size_t len) {
    size_t old = strlen(v[n - 1]);
    char *g = realloc(v[n - 1], old + len + 1);
    if (!g) return -1;
    memcpy(g + old, s, len);
    g[old + len] = '\0';
    v[n - 1] = g;
    return 0;
}

long pc_tokenize(const char *text, char ***out) {
    char **v = NULL;
    long n = 0, cap = 0;
    bool join = false; /* the next token continues the last one */
    const char *p = text;
    while (*p) {
        while (*p && isspace((unsigned char)*p)) ++p;
        if (!*p) break;
        if (*p == '#') {
            while (*p && *p != '\n') ++p;
            continue;
        }
        const char *s = p;
        while (*p && !isspace((unsigned char)*p)) ++p;
        size_t len = (size_t)(p - s);
        if (len == 1 && s[0] == '\\') {
            if (n > 0) join = true;
            continue;
        }
        bool cont = s[len - 1] == '\\';
        if (cont) --len;
        int rc = (join && n > 0) ? append_to_last(v, n, s, len) : push_token(&v, &n, &cap, s, len);
        if (rc) {
            pc_tokens_free(v, n);
            return -1;
        }
        join = cont;
    }
    *out = v;
    return n;
}

/* ---- knob lists ----------------------------------------------------------- */

typedef struct {
    char **v;
    size_t n;
} alts_t;

static void alts_free(alts_t *a) {
    for (size_t k = 0; k < a->n; ++k) free(a->v[k]);
    free(a->v);
    a->v = NULL;
    a->n = 0;
}

static int alts_set(alts_t *a, const char *value) {
    alts_free(a);
    pc_split sp;
    if (pc_split_do(&sp, value, ',')) return -1;
    a->v = calloc(sp.n, sizeof *a->v);
    if (!a->v) {
        pc_split_free(&sp);
        return -1;
    }
    for (size_t k = 0; k < sp.n; ++k) {
        a->v[k] = pc_strdup(sp.v[k]);
        if (!a->v[k]) {
            pc_split_free(&sp);
            return -1;
        }
        a->n = k + 1;
    }
    pc_split_free(&sp);
    return 0;
}

static int alts_push(alts_t *a, const char *value) {
    char **g = realloc(a->v, (a->n + 1) * sizeof *g);
    if (!g) return -1;
    a->v = g;
    a->v[a->n] = pc_strdup(value);
    if (!a->v[a->n]) return -1;
    ++a->n;
    return 0;
}

/* Knob order of the product, outermost first. */
enum { K_IN_SHAPES, K_OP_ATTRS, K_EXPECTED_N, K_FPMATH, K_OP_KIND, K_TENSOR_PROP, K_DT, K_DT_MAP, K_MB, K_COUNT };
static const char *const knob_names[K_COUNT] = {"--in-shapes", "--op-attrs", "--expected-n-partitions",
                                                "--attr-fpmath", "--op-kind", "--tensor-property",
                                                "--dt", "--dt", "--mb"};
static const char *const knob_defaults[K_COUNT] = {"", "", "1", "", "", "", "", "", "0"};

struct pc_harness {
    alts_t knobs[K_COUNT];
    pc_run_opts opts;
    long start;
    dnnl_engine_t eng;
    dnnl_stream_t strm;
    char **dirs; /* directories of opened batch files, innermost last */
    size_t ndirs;
    char **roots;
    size_t nroots;
    size_t index, passed, failed, skipped, mistrusted;
    int depth;
    bool counting;     /* dry run: count the runs, print nothing */
    bool progress;     /* "[n/total] case" on stderr before every run */
    bool progress_tty; /* stderr is a terminal: the progress line is rewritten in place */
    size_t total;      /* runs counted by the dry run (0: unknown) */
    pc_run_row *rows;  /* one per run, for the summary table */
    size_t nrows, caprows;
};

static int reset_knobs(pc_harness *h) {
    for (int k = 0; k < K_COUNT; ++k)
        if (alts_set(&h->knobs[k], knob_defaults[k])) return -1;
    return 0;
}

pc_harness *pc_harness_new(const pc_run_opts *opts, dnnl_engine_t eng, dnnl_stream_t strm) {
    pc_harness *h = calloc(1, sizeof *h);
    if (!h) return NULL;
    h->opts = *opts;
    h->eng = eng;
    h->strm = strm;
    if (reset_knobs(h)) {
        pc_harness_free(h);
        return NULL;
    }
    return h;
}

void pc_harness_free(pc_harness *h) {
    if (!h) return;
    for (size_t k = 0; k < h->nrows; ++k) free(h->rows[k].name);
    free(h->rows);
    for (int k = 0; k < K_COUNT; ++k) alts_free(&h->knobs[k]);
    for (size_t k = 0; k < h->ndirs; ++k) free(h->dirs[k]);
    for (size_t k = 0; k < h->nroots; ++k) free(h->roots[k]);
    free(h->dirs);
    free(h->roots);
    free(h);
}

void pc_harness_add_root(pc_harness *h, const char *dir) {
    char **g = realloc(h->roots, (h->nroots + 1) * sizeof *g);
    if (!g) return;
    h->roots = g;
    h->roots[h->nroots] = pc_strdup(dir);
    if (h->roots[h->nroots]) ++h->nroots;
}

size_t pc_harness_failed(const pc_harness *h) { return h->failed; }
size_t pc_harness_cases(const pc_harness *h) { return h->index; }
size_t pc_harness_rows(const pc_harness *h, const pc_run_row **rows) {
    *rows = h->rows;
    return h->nrows;
}

void pc_harness_set_counting(pc_harness *h, bool on) { h->counting = on; }
void pc_harness_set_progress(pc_harness *h, bool on, bool tty, size_t total) {
    h->progress = on;
    h->progress_tty = tty;
    h->total = total;
}

/* The progress line is rewritten in place on a terminal, unless the run
 * prints lines of its own before its result line (mode P, verbose). */
static bool progress_inplace(const pc_harness *h) {
    return h->progress_tty && h->opts.mode == 'C' && h->opts.verbose == 0;
}

static void progress_clear(const pc_harness *h) {
    if (h->progress && progress_inplace(h)) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
}

static void progress_show(const pc_harness *h, const char *what) {
    if (!h->progress) return;
    bool inplace = progress_inplace(h);
    fputs(inplace ? "\r\033[K" : "", stderr);
    if (h->total) fprintf(stderr, "[%zu/%zu] %s", h->index + 1, h->total, what);
    else fprintf(stderr, "[%zu] %s", h->index + 1, what);
    fputs(inplace ? "" : "\n", stderr);
    fflush(stderr);
}

static void fmt_time(double ms, char *buf, size_t cap) {
    if (ms < 0) snprintf(buf, cap, "-");
    else if (ms < 1000.0) snprintf(buf, cap, "%.3f ms", ms);
    else snprintf(buf, cap, "%.2f s", ms * 1e-3);
}

void pc_harness_table(const pc_harness *h, FILE *f) {
    if (h->nrows < 2) return;
    bool any_c = false, any_p = false;
    for (size_t k = 0; k < h->nrows; ++k) {
        any_c = any_c || h->rows[k].mode != 'P';
        any_p = any_p || h->rows[k].mode == 'P';
    }
    const char *tcol = !any_p ? "time (wall)" : !any_c ? "time (sum of medians)" : "time (C wall, P medians)";
    fprintf(f, "\nSummary (%zu runs)\n", h->nrows);
    fprintf(f, "%6s  %-17s %10s %6s  %-24s %s\n", "run", "result", "partitions", "fused", tcol, "case");
    for (size_t k = 0; k < h->nrows; ++k) {
        const pc_run_row *r = &h->rows[k];
        char parts[32], fused[32], t[48];
        if (r->nparts) {
            snprintf(parts, sizeof parts, "%zu", r->nparts);
            snprintf(fused, sizeof fused, "%zu", r->nfused);
        } else {
            snprintf(parts, sizeof parts, "-");
            snprintf(fused, sizeof fused, "-");
        }
        fmt_time(r->ms, t, sizeof t);
        fprintf(f, "%6zu  %-17s %10s %6s  %-24s %s\n", r->index, pc_status_name(r->st), parts, fused, t, r->name);
    }
}

void pc_harness_summary(const pc_harness *h) {
    pc_harness_table(h, stdout);
    if (h->mistrusted)
        printf("(%zu of the passed cases MISTRUSTED: mostly-zero outputs)\n", h->mistrusted);
    if (h->skipped)
        printf("%zu passed, %zu failed, %zu skipped\n", h->passed, h->failed, h->skipped);
    else
        printf("%zu passed, %zu failed\n", h->passed, h->failed);
    fflush(stdout);
}

/* ---- paths ---------------------------------------------------------------- */

static bool file_exists(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static char *dir_of(const char *path) {
    const char *slash = strrchr(path, '/');
    if (!slash) return pc_strdup(".");
    if (slash == path) return pc_strdup("/");
    char *d = malloc((size_t)(slash - path) + 1);
    if (!d) return NULL;
    memcpy(d, path, (size_t)(slash - path));
    d[slash - path] = '\0';
    return d;
}

/* Tries dir/rel, then the same in every parent of dir. */
static char *walk_up(const char *dir, const char *rel) {
    char cur[4096];
    snprintf(cur, sizeof cur, "%s", dir);
    for (int guard = 0; guard < 64; ++guard) {
        char cand[8192];
        snprintf(cand, sizeof cand, "%s/%s", cur, rel);
        if (file_exists(cand)) return pc_strdup(cand);
        char *slash = strrchr(cur, '/');
        if (!slash) {
            if (strcmp(cur, ".") == 0) break;
            snprintf(cur, sizeof cur, ".");
            continue;
        }
        if (slash == cur) {
            if (cur[1] == '\0') break;
            cur[1] = '\0';
            continue;
        }
        *slash = '\0';
    }
    return NULL;
}

/* Harness paths are relative to the graphs/ root: try the path as
 * given, then next to every opened batch file and upwards from there, then
 * under the extra roots. */
static char *resolve(const pc_harness *h, const char *path) {
    if (file_exists(path)) return pc_strdup(path);
    if (path[0] == '/') return NULL;
    for (size_t k = h->ndirs; k-- > 0;) {
        char *r = walk_up(h->dirs[k], path);
        if (r) return r;
    }
    for (size_t k = 0; k < h->nroots; ++k) {
        char cand[8192];
        snprintf(cand, sizeof cand, "%s/%s", h->roots[k], path);
        if (file_exists(cand)) return pc_strdup(cand);
    }
    return NULL;
}

/* ---- running cases ----------------------------------------------------------- */

/* The summary row's case text: the path, then the knobs that differ from
 * their defaults (the repro line without --mode and --case). */
static void add_row(pc_harness *h, pc_status st, const char *path, const char *rep, const pc_case_result *res,
                    double wall_ms) {
    if (h->nrows == h->caprows) {
        size_t nc = h->caprows ? h->caprows * 2 : 64;
        pc_run_row *g = realloc(h->rows, nc * sizeof *g);
        if (!g) return;
        h->rows = g;
        h->caprows = nc;
    }
    const char *knobs = strchr(rep, ' '); /* after "--mode=X" */
    const char *casepos = strstr(rep, " --case=");
    size_t klen = knobs && casepos && casepos > knobs ? (size_t)(casepos - knobs) : 0;
    size_t plen = strlen(path);
    char *name = malloc(plen + klen + 1);
    if (!name) return;
    memcpy(name, path, plen);
    if (klen) memcpy(name + plen, knobs, klen);
    name[plen + klen] = '\0';
    pc_run_row *r = &h->rows[h->nrows++];
    r->index = h->index;
    r->mode = h->opts.mode;
    r->st = st;
    r->name = name;
    r->nparts = res ? res->nparts : 0;
    r->nfused = res ? res->nfused : 0;
    r->ms = h->opts.mode == 'P' ? (res && st == PC_ST_PASSED ? res->total_ms : -1.0) : wall_ms;
    r->flops = res ? res->flops : -1.0;
}

static void count(pc_harness *h, pc_status st) {
    if (st == PC_ST_SKIPPED) ++h->skipped;
    else if (pc_status_failed(st)) ++h->failed;
    else {
        ++h->passed;
        if (st == PC_ST_MISTRUSTED) ++h->mistrusted;
    }
}

static void repro(const pc_harness *h, const size_t *sel, const char *path, char *buf, size_t cap) {
    size_t len = (size_t)snprintf(buf, cap, "--mode=%c", h->opts.mode);
    for (int k = 0; k < K_COUNT && len < cap; ++k) {
        const char *v = h->knobs[k].v[sel[k]];
        if (strcmp(v, knob_defaults[k]) == 0) continue;
        len += (size_t)snprintf(buf + len, cap - len, " %s=%s", knob_names[k], v);
    }
    if (len < cap) snprintf(buf + len, cap - len, " --case=%s", path);
}

static void print_line(const pc_harness *h, pc_status st, const char *reason, const char *perf, const char *rep) {
    progress_clear(h);
    printf("%zu:%s", h->index, h->opts.mode == 'P' && st == PC_ST_PASSED ? "PERF" : pc_status_name(st));
    if (perf && *perf && st == PC_ST_PASSED) printf(" %s", perf);
    if (reason && *reason) printf(" (%s)", reason);
    printf(" __REPRO: %s\n", rep);
    fflush(stdout);
}

static double wall_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static void run_one(pc_harness *h, const pc_case *loaded, const char *shown_path, const size_t *sel) {
    char rep[4096];
    repro(h, sel, shown_path, rep, sizeof rep);
    if ((long)h->index < h->start) {
        ++h->index;
        return;
    }
    progress_show(h, rep + strlen("--mode=X "));
    double t0 = wall_ms();
    pc_knobs k = {0};
    k.in_shapes = h->knobs[K_IN_SHAPES].v[sel[K_IN_SHAPES]];
    k.op_attrs = h->knobs[K_OP_ATTRS].v[sel[K_OP_ATTRS]];
    k.fpmath = h->knobs[K_FPMATH].v[sel[K_FPMATH]];
    k.op_kind = h->knobs[K_OP_KIND].v[sel[K_OP_KIND]];
    k.tensor_property = h->knobs[K_TENSOR_PROP].v[sel[K_TENSOR_PROP]];
    k.dt = h->knobs[K_DT].v[sel[K_DT]];
    k.dt_map = h->knobs[K_DT_MAP].v[sel[K_DT_MAP]];
    pc_case_result res;
    memset(&res, 0, sizeof res);
    if (!pc_parse_i64(h->knobs[K_MB].v[sel[K_MB]], &k.mb) || k.mb < 0) {
        res.st = PC_ST_INVALID_ARGUMENTS;
        snprintf(res.reason, sizeof res.reason, "--mb: '%s' is not a non-negative integer", h->knobs[K_MB].v[sel[K_MB]]);
    } else if (!pc_parse_i64(h->knobs[K_EXPECTED_N].v[sel[K_EXPECTED_N]], &k.expected_n) || k.expected_n < 0) {
        res.st = PC_ST_INVALID_ARGUMENTS;
        snprintf(res.reason, sizeof res.reason, "--expected-n-partitions: '%s' is not a non-negative integer",
                 h->knobs[K_EXPECTED_N].v[sel[K_EXPECTED_N]]);
    } else {
        pc_case c;
        if (pc_case_clone(loaded, &c)) {
            res.st = PC_ST_FAILED;
            snprintf(res.reason, sizeof res.reason, "out of memory");
        } else {
            char err[900] = "";
            if (pc_rewrite(&c, &k, err, sizeof err)) {
                res.st = PC_ST_INVALID_ARGUMENTS;
                snprintf(res.reason, sizeof res.reason, "rewrite: %s", err);
            } else {
                pc_run_case(&c, k.expected_n, &h->opts, h->eng, h->strm, &res);
            }
            pc_case_free(&c);
        }
    }
    double t1 = wall_ms();
    print_line(h, res.st, res.reason, res.perf, rep);
    add_row(h, res.st, shown_path, rep, &res, t1 - t0);
    count(h, res.st);
    ++h->index;
}

/* Dry run: the number of runs --case=path would make with the knobs so far. */
static size_t product(const pc_harness *h) {
    size_t n = 1;
    for (int k = 0; k < K_COUNT; ++k) n *= h->knobs[k].n ? h->knobs[k].n : 1;
    return n;
}

static void run_case(pc_harness *h, const char *path) {
    char *full = resolve(h, path);
    if (h->counting) {
        /* A missing file makes one FAILED run; a present one the product. */
        h->index += full ? product(h) : 1;
        free(full);
        return;
    }
    pc_case c;
    char err[1024] = "";
    if (!full || pc_case_load(full, &c, err, sizeof err)) {
        char rep[4096];
        size_t sel[K_COUNT] = {0};
        repro(h, sel, path, rep, sizeof rep);
        if (!full) snprintf(err, sizeof err, "%s: file not found (tried as given and relative to the batch files)", path);
        print_line(h, PC_ST_FAILED, err, NULL, rep);
        add_row(h, PC_ST_FAILED, path, rep, NULL, -1.0);
        count(h, PC_ST_FAILED);
        ++h->index;
        free(full);
        return;
    }
    /* The Cartesian product of all knob lists, outermost first. */
    size_t sel[K_COUNT] = {0};
    for (;;) {
        run_one(h, &c, path, sel);
        int k = K_COUNT - 1;
        while (k >= 0) {
            if (++sel[k] < h->knobs[k].n) break;
            sel[k] = 0;
            --k;
        }
        if (k < 0) break;
    }
    pc_case_free(&c);
    free(full);
}

/* ---- tokens -------------------------------------------------------------------- */

static int option_error(pc_harness *h, const char *fmt, const char *arg) {
    if (h->counting) return -1;
    progress_clear(h);
    fprintf(stderr, "partita: error: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
    ++h->failed;
    return -1;
}

static const char *value_of(const char *tok, const char *name) {
    size_t n = strlen(name);
    if (strncmp(tok, name, n) == 0 && tok[n] == '=') return tok + n + 1;
    return NULL;
}

static bool parse_count(const char *s, long *v, long lo) {
    int64_t x;
    if (!pc_parse_i64(s, &x) || x < lo) return false;
    *v = (long)x;
    return true;
}

int pc_harness_token(pc_harness *h, const char *tok) {
    const char *v;
    if (strcmp(tok, "--reset") == 0) return reset_knobs(h);
    if ((v = value_of(tok, "--case"))) {
        run_case(h, v);
        return 0;
    }
    if ((v = value_of(tok, "--batch"))) return pc_harness_batch(h, v);
    if ((v = value_of(tok, "--in-shapes"))) return alts_set(&h->knobs[K_IN_SHAPES], v);
    if ((v = value_of(tok, "--op-attrs"))) return alts_set(&h->knobs[K_OP_ATTRS], v);
    if ((v = value_of(tok, "--op-kind"))) return alts_set(&h->knobs[K_OP_KIND], v);
    if ((v = value_of(tok, "--tensor-property"))) return alts_set(&h->knobs[K_TENSOR_PROP], v);
    if ((v = value_of(tok, "--attr-fpmath"))) return alts_set(&h->knobs[K_FPMATH], v);
    if ((v = value_of(tok, "--expected-n-partitions"))) return alts_set(&h->knobs[K_EXPECTED_N], v);
    if ((v = value_of(tok, "--mb"))) return alts_set(&h->knobs[K_MB], v);
    if ((v = value_of(tok, "--dt"))) {
        /* Plain alternatives and ID:DT alternatives go to separate lists;
         * mixing them in one run is reported by the rewrite. */
        alts_t all = {0};
        if (alts_set(&all, v)) return -1;
        alts_free(&h->knobs[K_DT]);
        alts_free(&h->knobs[K_DT_MAP]);
        int rc = 0;
        for (size_t k = 0; k < all.n && rc == 0; ++k)
            rc = alts_push(strchr(all.v[k], ':') ? &h->knobs[K_DT_MAP] : &h->knobs[K_DT], all.v[k]);
        if (rc == 0 && h->knobs[K_DT].n == 0) rc = alts_push(&h->knobs[K_DT], "");
        if (rc == 0 && h->knobs[K_DT_MAP].n == 0) rc = alts_push(&h->knobs[K_DT_MAP], "");
        alts_free(&all);
        return rc;
    }
    if ((v = value_of(tok, "--mode"))) {
        if (strcmp(v, "C") && strcmp(v, "c") && strcmp(v, "P") && strcmp(v, "p"))
            return option_error(h, "--mode=%s: only C (correctness) and P (performance) are supported", v);
        h->opts.mode = (char)toupper((unsigned char)v[0]);
        return 0;
    }
    if ((v = value_of(tok, "--engine"))) {
        if (strcmp(v, "cpu") && strcmp(v, "cpu:0"))
            return option_error(h, "--engine=%s: only the CPU engine (cpu or cpu:0) exists", v);
        return 0;
    }
    if ((v = value_of(tok, "--verbose")) || (strncmp(tok, "-v", 2) == 0 && (v = tok + 2, true))) {
        long lv = 1;
        if (*v && !parse_count(v, &lv, 0)) return option_error(h, "bad verbosity '%s'", tok);
        h->opts.verbose = (int)lv;
        return 0;
    }
    if ((v = value_of(tok, "--start"))) {
        if (!parse_count(v, &h->start, 0)) return option_error(h, "--start=%s: expected a count", v);
        return 0;
    }
    if ((v = value_of(tok, "--perf-runs"))) {
        long n;
        if (!parse_count(v, &n, 1)) return option_error(h, "--perf-runs=%s: expected a positive count", v);
        h->opts.perf_runs = (int)n;
        return 0;
    }
    if ((v = value_of(tok, "--perf-warmup"))) {
        long n;
        if (!parse_count(v, &n, 0)) return option_error(h, "--perf-warmup=%s: expected a count", v);
        h->opts.perf_warmup = (int)n;
        return 0;
    }
    if ((v = value_of(tok, "--propagate"))) {
        bool b;
        if (!pc_parse_bool(v, &b)) return option_error(h, "--propagate=%s: expected true or false", v);
        h->opts.propagate = b;
        return 0;
    }
    if ((v = value_of(tok, "--peak")) || strcmp(tok, "--progress") == 0 || value_of(tok, "--progress")) {
        /* Read by main before the runs start (the peak file, progress). */
        return 0;
    }
    if ((v = value_of(tok, "--graphs-root"))) {
        pc_harness_add_root(h, v);
        return 0;
    }
    return option_error(h, "unknown option '%s' (see partita --help)", tok);
}

int pc_harness_batch(pc_harness *h, const char *path) {
    char *full = resolve(h, path);
    if (!full) return option_error(h, "--batch=%s: file not found", path);
    if (h->depth > 32) {
        free(full);
        return option_error(h, "--batch=%s: batch files nested too deeply", path);
    }
    FILE *f = fopen(full, "rb");
    if (!f) {
        option_error(h, "--batch: cannot open %s", full);
        free(full);
        return -1;
    }
    char *text = pc_read_stream(f, NULL);
    fclose(f);
    if (!text) {
        free(full);
        return -1;
    }
    char **tok = NULL;
    long n = pc_tokenize(text, &tok);
    free(text);
    if (n < 0) {
        free(full);
        return -1;
    }
    char **g = realloc(h->dirs, (h->ndirs + 1) * sizeof *g);
    if (!g) {
        pc_tokens_free(tok, n);
        free(full);
        return -1;
    }
    h->dirs = g;
    h->dirs[h->ndirs] = dir_of(full);
    if (h->dirs[h->ndirs]) ++h->ndirs;
    ++h->depth;
    for (long k = 0; k < n; ++k) pc_harness_token(h, tok[k]);
    --h->depth;
    pc_tokens_free(tok, n);
    free(full);
    return 0;
}
