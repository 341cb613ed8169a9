/* Harness (batch) files and knob handling (docs/graph-json.md): tokenizing,
 * knob settings with --reset, the case product, path lookup, counting. */
#ifndef PARTITA_TOOLS_HARNESS_H
#define PARTITA_TOOLS_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "oneapi/dnnl/dnnl_graph.h"
#include "runner.h"

/* Splits batch-file text into tokens: whitespace separated, '#'
 * comments to the end of the line, trailing '\' joins with the next token,
 * a lone '\' continues the previous one.  Returns the token count (tokens
 * owned by *out, free with pc_tokens_free) or -1 on allocation failure. */
long pc_tokenize(const char *text, char ***out);
void pc_tokens_free(char **tok, long n);

typedef struct pc_harness pc_harness;

/* One run, as the summary table lists it. */
typedef struct {
    size_t index;    /* the run number printed on its line */
    char mode;       /* 'C' or 'P' */
    pc_status st;
    char *name;      /* case path plus the knobs that differ from their defaults */
    size_t nparts;   /* partitions formed, 0 when not partitioned */
    size_t nfused;   /* partitions with more than one op */
    double ms;       /* mode C: wall time of the run; mode P: sum of the medians; -1: none */
    double flops;    /* mode P: counted FLOPs (-1: unknown) */
} pc_run_row;

pc_harness *pc_harness_new(const pc_run_opts *opts, dnnl_engine_t eng, dnnl_stream_t strm);
void pc_harness_free(pc_harness *h);
/* Extra directory where --case/--batch paths are looked up. */
void pc_harness_add_root(pc_harness *h, const char *dir);

/* Processes one token (a knob, --case=, --batch=, or a common option).
 * Returns 0, or -1 for an unknown or malformed option (reported on stderr
 * and counted as a failure). */
int pc_harness_token(pc_harness *h, const char *tok);
/* Runs a batch file (same as the token --batch=PATH). */
int pc_harness_batch(pc_harness *h, const char *path);

/* Dry run (counting on): tokens are processed, --case only counts the runs
 * it would make (pc_harness_cases gives the total); nothing is printed. */
void pc_harness_set_counting(pc_harness *h, bool on);
/* Progress lines "[n/total] knobs --case=path" on stderr before every run;
 * total 0 leaves it out; tty rewrites one line in place (in mode C without
 * verbose output, where nothing else prints before the result line). */
void pc_harness_set_progress(pc_harness *h, bool on, bool tty, size_t total);

/* The summary table (one row per run; printed when there were at least two
 * runs), then the closing line "N passed, N failed[, N skipped]". */
void pc_harness_summary(const pc_harness *h);
void pc_harness_table(const pc_harness *h, FILE *f);
size_t pc_harness_rows(const pc_harness *h, const pc_run_row **rows);
size_t pc_harness_failed(const pc_harness *h);
size_t pc_harness_cases(const pc_harness *h);

#endif
