/* Harness (batch) files and knob handling (docs/graph-json.md): tokenizing,
 * knob settings with --reset, the case product, path lookup, counting. */
#ifndef PARTITA_TOOLS_HARNESS_H
#define PARTITA_TOOLS_HARNESS_H

#include <stdbool.h>
#include <stddef.h>

#include "oneapi/dnnl/dnnl_graph.h"
#include "runner.h"

/* Splits batch-file text into tokens: whitespace separated, '#'
 * comments to the end of the line, trailing '\' joins with the next token,
 * a lone '\' continues the previous one.  Returns the token count (tokens
 * owned by *out, free with pc_tokens_free) or -1 on allocation failure. */
long pc_tokenize(const char *text, char ***out);
void pc_tokens_free(char **tok, long n);

typedef struct pc_harness pc_harness;

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

/* Prints the closing line "N passed, N failed[, N skipped]". */
void pc_harness_summary(const pc_harness *h);
size_t pc_harness_failed(const pc_harness *h);
size_t pc_harness_cases(const pc_harness *h);

#endif
