#include "test_util.h"

#include <stdarg.h>

int pt_test_passed = 0, pt_test_failed = 0;

int pt_test_summary(const char *name) {
    printf("%s: %d passed, %d failed\n", name, pt_test_passed, pt_test_failed);
    return pt_test_failed == 0 && pt_test_passed > 0 ? 0 : 1;
}

void pt_test_count(int ok, const char *file, int line, const char *fmt, ...) {
    if (ok) {
        ++pt_test_passed;
        return;
    }
    ++pt_test_failed;
    fprintf(stderr, "%s:%d: CHECK failed: ", file, line);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}
