#include "test_util.h"

int pt_test_passed = 0, pt_test_failed = 0;

int pt_test_summary(const char *name) {
    printf("%s: %d passed, %d failed\n", name, pt_test_passed, pt_test_failed);
    return pt_test_failed == 0 && pt_test_passed > 0 ? 0 : 1;
}
