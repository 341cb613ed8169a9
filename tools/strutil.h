/* String helpers for knob parsing. */
#ifndef PARTITA_TOOLS_STRUTIL_H
#define PARTITA_TOOLS_STRUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Splits a copy of `s` at every `sep`; empty parts are kept ("" gives one
 * empty part). */
typedef struct {
    char *buf;
    char **v;
    size_t n;
} pc_split;

int pc_split_do(pc_split *sp, const char *s, char sep);
void pc_split_free(pc_split *sp);

/* Whole-string decimal parsers (no trailing garbage). */
bool pc_parse_i64(const char *s, int64_t *v);
bool pc_parse_u64(const char *s, size_t *v);
bool pc_parse_f32(const char *s, float *v);
/* true/false/1/0, case-insensitive. */
bool pc_parse_bool(const char *s, bool *v);
/* `INTxINTx...` into v (at most cap entries); returns the count or -1. */
int pc_parse_i64_list(const char *s, char sep, int64_t *v, int cap);
int pc_parse_f32_list(const char *s, char sep, float *v, int cap);

char *pc_strdup(const char *s);

/* Reads the rest of `f` into a NUL-terminated heap string (NULL when out of
 * memory); *read_error (when non-NULL) tells whether the stream reported an
 * error.  Does not close `f`. */
char *pc_read_stream(FILE *f, bool *read_error);

/* Formats into err[0..cap) when err is non-NULL (error-message helper). */
void pc_set_err(char *err, size_t cap, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#endif
