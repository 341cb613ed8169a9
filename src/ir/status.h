/* Internal status helpers and the verbose error channel. */
#ifndef PARTITA_IR_STATUS_H
#define PARTITA_IR_STATUS_H

#include "oneapi/dnnl/dnnl_common_types.h"

typedef dnnl_status_t pt_status;

/* Error lines pt_err has printed on the calling thread so far. */
unsigned long pt_err_lines(void);

/* Prints one line "onednn_verbose,graph,error,<status>,<what>" to stderr when
 * ONEDNN_VERBOSE, DNNL_VERBOSE or PARTITA_VERBOSE is set (any level >= 1) or
 * dnnl_set_verbose(>=1) was called.  Returns `st` so it can be used as
 * `return pt_err(st, ...)`. */
pt_status pt_err(pt_status st, const char *fmt, ...)
#if defined(__GNUC__)
        __attribute__((format(printf, 2, 3)))
#endif
        ;

/* Informational verbose line (level >= `level`), stdout, "onednn_verbose,..." style. */
void pt_verbose(int level, const char *fmt, ...)
#if defined(__GNUC__)
        __attribute__((format(printf, 2, 3)))
#endif
        ;
int pt_verbose_level(void);
void pt_set_verbose_level(int level);

const char *pt_status_name(pt_status st);

#define PT_CHECK(expr) \
    do { \
        pt_status pt_check_st_ = (expr); \
        if (pt_check_st_ != dnnl_success) return pt_check_st_; \
    } while (0)

#endif
