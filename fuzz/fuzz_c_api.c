/* libFuzzer target: the C API interpreter (fuzz/fuzz_api_one.c). */
#include "fuzz_one.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return pf_api_one(data, size); }
