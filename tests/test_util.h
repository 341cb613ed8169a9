/* Minimal test harness: CHECK macros that count failures, and a summary line
 * "N passed, N failed" that CI parses. */
#ifndef PARTITA_TEST_UTIL_H
#define PARTITA_TEST_UTIL_H

#include <stdio.h>

extern int pt_test_passed, pt_test_failed;

/* Counts one check; on failure prints where and what (printf-style). */
void pt_test_count(int ok, const char *file, int line, const char *fmt, ...);

#define CHECK(cond) pt_test_count(!!(cond), __FILE__, __LINE__, "%s", #cond)
#define CHECK_EQ_INT(a, b) \
    do { \
        long long pt_a_ = (long long)(a), pt_b_ = (long long)(b); \
        pt_test_count(pt_a_ == pt_b_, __FILE__, __LINE__, "%s == %s (%lld vs %lld)", #a, #b, pt_a_, pt_b_); \
    } while (0)
#define CHECK_NEAR(a, b, tol) \
    do { \
        double pt_a_ = (double)(a), pt_b_ = (double)(b); \
        double pt_d_ = pt_a_ - pt_b_; \
        if (pt_d_ < 0) pt_d_ = -pt_d_; \
        pt_test_count(pt_d_ <= (tol), __FILE__, __LINE__, "%s ~ %s (%.9g vs %.9g)", #a, #b, pt_a_, pt_b_); \
    } while (0)

/* Prints "N passed, N failed" and returns the process exit code. */
int pt_test_summary(const char *name);

#endif
