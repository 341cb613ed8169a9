/* The "one input" functions of the fuzz targets (docs/reliability.md).
 * Each is compiled into its libFuzzer target (fuzz/fuzz_*.c) and into the
 * regression test tests/test_int_fuzz_regressions.c, so a saved crash input
 * is replayed through exactly the code the fuzzer ran. */
#ifndef PARTITA_FUZZ_ONE_H
#define PARTITA_FUZZ_ONE_H

#include <stddef.h>
#include <stdint.h>

/* Largest input either target looks at (longer ones are ignored). */
#define PF_MAX_INPUT (64u * 1024u)
/* Tensors (ports, intermediates) larger than this are not executed. */
#define PF_MAX_TENSOR_BYTES (256u * 1024u)
/* Bound on the sum over all tensors of one executed graph. */
#define PF_MAX_TOTAL_BYTES (1024u * 1024u)

/* JSON graph case text (docs/graph-json.md) through the CLI's loader and
 * runner: parse, rewrite (shape inference), build with the public C API,
 * finalize, partition, compile and execute.  Returns 0 (libFuzzer's
 * convention); problems show up as sanitizer reports. */
int pf_json_one(const uint8_t *data, size_t size);

/* Bytes as a program for the C API interpreter (fuzz/fuzz_api_one.c). */
int pf_api_one(const uint8_t *data, size_t size);

#endif
