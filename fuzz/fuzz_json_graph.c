/* libFuzzer target: JSON graph cases through the CLI's loader and runner
 * (fuzz/fuzz_json_one.c). */
#include "fuzz_one.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return pf_json_one(data, size); }
