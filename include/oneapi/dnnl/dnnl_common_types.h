/*
 * Partita - a C11 implementation of the oneDNN v3 Graph C API.
 *
 * oneapi/dnnl/dnnl_common_types.h
 *
 * Types shared by the graph API and the common API: status codes, data
 * types, dimensions, math and accumulation modes, engine and stream handles
 * and the version structure.
 */

#ifndef ONEAPI_DNNL_DNNL_COMMON_TYPES_H
#define ONEAPI_DNNL_DNNL_COMMON_TYPES_H

#include <stddef.h>
#include <stdint.h>

#include "oneapi/dnnl/dnnl_config.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Status                                                                   */
/* ------------------------------------------------------------------------ */

/* Result of an API call. */
typedef enum {
    /* The call succeeded. */
    dnnl_success = 0,
    /* A memory allocation failed. */
    dnnl_out_of_memory = 1,
    /* An argument is invalid (NULL pointer, bad count, bad value). */
    dnnl_invalid_arguments = 2,
    /* The requested functionality is not available. */
    dnnl_unimplemented = 3,
    /* No further implementation to iterate to (primitive API). */
    dnnl_last_impl_reached = 4,
    /* Failure during execution or a device error. */
    dnnl_runtime_error = 5,
    /* The queried item is not needed (primitive API). */
    dnnl_not_required = 6,
    /* The graph state or structure is not valid. */
    dnnl_invalid_graph = 7,
    /* An op fails its schema check. */
    dnnl_invalid_graph_op = 8,
    /* Shapes cannot be inferred or are inconsistent. */
    dnnl_invalid_shape = 9,
    /* Data types cannot be inferred or are unsupported. */
    dnnl_invalid_data_type = 10,
} dnnl_status_t;

/* ------------------------------------------------------------------------ */
/* Data types                                                               */
/* ------------------------------------------------------------------------ */

/* Element data type. */
typedef enum {
    /* Undefined data type. */
    dnnl_data_type_undef = 0,
    /* IEEE 754 half precision (16 bits). */
    dnnl_f16 = 1,
    /* bfloat16 (16 bits). */
    dnnl_bf16 = 2,
    /* IEEE 754 single precision (32 bits). */
    dnnl_f32 = 3,
    /* Signed 32-bit integer. */
    dnnl_s32 = 4,
    /* Signed 8-bit integer. */
    dnnl_s8 = 5,
    /* Unsigned 8-bit integer. */
    dnnl_u8 = 6,
    /* IEEE 754 double precision (64 bits). */
    dnnl_f64 = 7,
    /* Boolean, one byte per element. */
    dnnl_boolean = 8,
    /* OFP8 float with 5 exponent and 2 mantissa bits. */
    dnnl_f8_e5m2 = 9,
    /* OFP8 float with 4 exponent and 3 mantissa bits. */
    dnnl_f8_e4m3 = 10,
    /* Signed 4-bit integer, two elements per byte. */
    dnnl_s4 = 11,
    /* Unsigned 4-bit integer, two elements per byte. */
    dnnl_u4 = 12,
    /* MX scale type: 8 exponent bits, no mantissa. */
    dnnl_e8m0 = 13,
    /* MX 4-bit float (2 exponent, 1 mantissa bit), two per byte. */
    dnnl_f4_e2m1 = 14,
    /* 4-bit float (3 exponent bits, no mantissa); deprecated. */
    dnnl_f4_e3m0 = 15,
    /* Signed 64-bit integer. */
    dnnl_s64 = 16,

    /* Range sentinel; never a real data type. */
    dnnl_data_type_max = 0x7fff,
} dnnl_data_type_t;

/* ------------------------------------------------------------------------ */
/* Dimensions                                                               */
/* ------------------------------------------------------------------------ */

/* Maximum number of dimensions of a tensor. */
#define DNNL_MAX_NDIMS 12

/* A single dimension (size or stride). */
typedef int64_t dnnl_dim_t;

/* A fixed-capacity array of dimensions. */
typedef dnnl_dim_t dnnl_dims_t[DNNL_MAX_NDIMS];

/* ------------------------------------------------------------------------ */
/* Floating-point math and accumulation modes                               */
/* ------------------------------------------------------------------------ */

/* Implicit down-conversions allowed for f32 computations. */
typedef enum {
    /* No down-conversion (default). */
    dnnl_fpmath_mode_strict,
    /* Down-conversion to bf16 allowed. */
    dnnl_fpmath_mode_bf16,
    /* Down-conversion to f16 allowed. */
    dnnl_fpmath_mode_f16,
    /* Down-conversion to f16, bf16 or tf32 allowed. */
    dnnl_fpmath_mode_any,
    /* Down-conversion to tf32 allowed. */
    dnnl_fpmath_mode_tf32,
} dnnl_fpmath_mode_t;

/* Accumulator data type selection. */
typedef enum {
    /* f32/f64 for float math, s32 for integer math (default). */
    dnnl_accumulation_mode_strict,
    /* Like strict, but partial sums may be rounded to the src/dst type. */
    dnnl_accumulation_mode_relaxed,
    /* Whatever is fastest. */
    dnnl_accumulation_mode_any,
    /* Accumulate in s32. */
    dnnl_accumulation_mode_s32,
    /* Accumulate in f32. */
    dnnl_accumulation_mode_f32,
    /* Accumulate in f16. */
    dnnl_accumulation_mode_f16,
} dnnl_accumulation_mode_t;

/* ------------------------------------------------------------------------ */
/* Engine                                                                   */
/* ------------------------------------------------------------------------ */

/* Kind of device an engine drives. */
typedef enum {
    /* Any kind of device. */
    dnnl_any_engine,
    /* Host CPU. */
    dnnl_cpu,
    /* GPU. */
    dnnl_gpu,
} dnnl_engine_kind_t;

/* Opaque engine object. */
struct dnnl_engine;

/* Engine handle. (There is intentionally no const engine handle type.) */
typedef struct dnnl_engine *dnnl_engine_t;

/* ------------------------------------------------------------------------ */
/* Stream                                                                   */
/* ------------------------------------------------------------------------ */

/* Stream creation flags (passed to dnnl_stream_create as unsigned). */
typedef enum {
    /* Work is executed in submission order. */
    dnnl_stream_in_order = 0x1U,
    /* Work may be executed out of submission order. */
    dnnl_stream_out_of_order = 0x2U,
    /* Default flags. */
    dnnl_stream_default_flags = dnnl_stream_in_order,
#ifdef DNNL_EXPERIMENTAL_PROFILING
    /* Enable profiling of the stream's work. */
    dnnl_stream_profiling = 0x4U,
#endif
    /* Range sentinel. */
    dnnl_stream_flags_max = 0x7fffU,
} dnnl_stream_flags_t;

/* Opaque stream object. */
struct dnnl_stream;

/* Stream handle. */
typedef struct dnnl_stream *dnnl_stream_t;

/* Constant stream handle. */
typedef const struct dnnl_stream *const_dnnl_stream_t;

/* ------------------------------------------------------------------------ */
/* Version                                                                  */
/* ------------------------------------------------------------------------ */

/* Library version and build information, as returned by dnnl_version(). */
typedef struct {
    /* DNNL_VERSION_MAJOR. */
    int major;
    /* DNNL_VERSION_MINOR. */
    int minor;
    /* DNNL_VERSION_PATCH. */
    int patch;
    /* DNNL_VERSION_HASH. */
    const char *hash;
    /* DNNL_CPU_RUNTIME. */
    unsigned cpu_runtime;
    /* DNNL_GPU_RUNTIME. */
    unsigned gpu_runtime;
} dnnl_version_t;

/* ------------------------------------------------------------------------ */
/* Memory handle special values                                             */
/* ------------------------------------------------------------------------ */

/* Tensor data handle meaning "no buffer". */
#define DNNL_MEMORY_NONE (NULL)

/* Tensor data handle asking the library to allocate and own the buffer. */
#define DNNL_MEMORY_ALLOCATE ((void *)(size_t) - 1)

#ifdef __cplusplus
}
#endif

#endif /* ONEAPI_DNNL_DNNL_COMMON_TYPES_H */
