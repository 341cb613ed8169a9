#include <stdio.h>
#include <stdarg.h>
/* String helpers; see strutil.h. */
#include "strutil.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

char *pc_strdup(const char *s) {
    if (!s) s = "";
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

int pc_split_do(pc_split *sp, const char *s, char sep) {
    sp->buf = pc_strdup(s);
    sp->v = NULL;
    sp->n = 0;
    if (!sp->buf) return -1;
    size_t parts = 1;
    for (const char *p = sp->buf; *p; ++p) parts += *p == sep;
    sp->v = malloc(parts * sizeof *sp->v);
    if (!sp->v) {
        free(sp->buf);
        sp->buf = NULL;
        return -1;
    }
    char *start = sp->buf;
    for (char *p = sp->buf;; ++p) {
        if (*p == sep || *p == '\0') {
            bool end = *p == '\0';
            *p = '\0';
            sp->v[sp->n++] = start;
            if (end) break;
            start = p + 1;
        }
    }
    return 0;
}

void pc_split_free(pc_split *sp) {
    free(sp->buf);
    free(sp->v);
    sp->buf = NULL;
    sp->v = NULL;
    sp->n = 0;
}

bool pc_parse_i64(const char *s, int64_t *v) {
    if (!s || !*s) return false;
    const char *p = s;
    if (*p == '-' || *p == '+') ++p;
    if (!isdigit((unsigned char)*p)) return false;
    for (const char *q = p; *q; ++q)
        if (!isdigit((unsigned char)*q)) return false;
    errno = 0;
    long long r = strtoll(s, NULL, 10);
    if (errno) return false;
    *v = (int64_t)r;
    return true;
}

bool pc_parse_u64(const char *s, size_t *v) {
    if (!s || !*s) return false;
    for (const char *q = s; *q; ++q)
        if (!isdigit((unsigned char)*q)) return false;
    errno = 0;
    unsigned long long r = strtoull(s, NULL, 10);
    if (errno) return false;
    *v = (size_t)r;
    return true;
}

bool pc_parse_f32(const char *s, float *v) {
    if (!s || !*s) return false;
    char *end = NULL;
    errno = 0;
    double d = strtod(s, &end);
    if (errno || !end || *end) return false;
    *v = (float)d;
    return true;
}

bool pc_parse_bool(const char *s, bool *v) {
    if (!s) return false;
    char low[8];
    size_t n = strlen(s);
    if (n == 0 || n >= sizeof low) return false;
    for (size_t k = 0; k < n; ++k) low[k] = (char)tolower((unsigned char)s[k]);
    low[n] = '\0';
    if (!strcmp(low, "true") || !strcmp(low, "1")) *v = true;
    else if (!strcmp(low, "false") || !strcmp(low, "0")) *v = false;
    else return false;
    return true;
}

/* Shared body of the list parsers: exactly one of iv / fv is non-NULL. */
static int parse_list(const char *s, char sep, int64_t *iv, float *fv, int cap) {
    pc_split sp;
    if (pc_split_do(&sp, s, sep)) return -1;
    int n = (int)sp.n <= cap ? (int)sp.n : -1;
    for (int k = 0; k < n; ++k) {
        bool ok = iv ? pc_parse_i64(sp.v[k], &iv[k]) : pc_parse_f32(sp.v[k], &fv[k]);
        if (!ok) n = -1;
    }
    pc_split_free(&sp);
    return n;
}

int pc_parse_i64_list(const char *s, char sep, int64_t *v, int cap) { return parse_list(s, sep, v, NULL, cap); }

int pc_parse_f32_list(const char *s, char sep, float *v, int cap) { return parse_list(s, sep, NULL, v, cap); }

void pc_set_err(char *err, size_t cap, const char *fmt, ...) {
    if (!err || !cap) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, cap, fmt, ap);
    va_end(ap);
}

char *pc_read_stream(FILE *f, bool *read_error) {
    size_t cap = 1 << 14, len = 0;
    char *text = malloc(cap);
    while (text) {
        len += fread(text + len, 1, cap - len - 1, f);
        if (len < cap - 1) break;
        char *bigger = realloc(text, cap * 2);
        if (!bigger) free(text);
        text = bigger;
        cap *= 2;
    }
    if (read_error) *read_error = ferror(f) != 0;
    if (text) text[len] = '\0';
    return text;
}
