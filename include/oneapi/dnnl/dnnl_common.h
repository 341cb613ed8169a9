/*
 * Partita - a C11 implementation of the oneDNN v3 Graph C API.
 *
 * oneapi/dnnl/dnnl_common.h
 *
 * The subset of the oneDNN common C API used together with the graph API:
 * engines, streams, default math mode, verbose control and version query.
 */

#ifndef ONEAPI_DNNL_DNNL_COMMON_H
#define ONEAPI_DNNL_DNNL_COMMON_H

#include "oneapi/dnnl/dnnl_common_types.h"
#include "oneapi/dnnl/dnnl_config.h"
#include "oneapi/dnnl/dnnl_version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Engine                                                                   */
/* ------------------------------------------------------------------------ */

/* Returns the number of devices of the given kind (0 for an unknown kind). */
size_t DNNL_API dnnl_engine_get_count(dnnl_engine_kind_t kind);

/* Creates an engine for device number index of the given kind. The caller
 * owns the engine and releases it with dnnl_engine_destroy. */
dnnl_status_t DNNL_API dnnl_engine_create(
        dnnl_engine_t *engine, dnnl_engine_kind_t kind, size_t index);

/* Reports the kind of an engine. */
dnnl_status_t DNNL_API dnnl_engine_get_kind(
        dnnl_engine_t engine, dnnl_engine_kind_t *kind);

/* Releases the caller's reference to an engine. NULL is accepted. */
dnnl_status_t DNNL_API dnnl_engine_destroy(dnnl_engine_t engine);

/* ------------------------------------------------------------------------ */
/* Stream                                                                   */
/* ------------------------------------------------------------------------ */

/* Creates an execution stream on an engine. flags is a mask of
 * dnnl_stream_flags_t values. */
dnnl_status_t DNNL_API dnnl_stream_create(
        dnnl_stream_t *stream, dnnl_engine_t engine, unsigned flags);

/* Reports the engine a stream runs on (no new reference is taken). */
dnnl_status_t DNNL_API dnnl_stream_get_engine(
        const_dnnl_stream_t stream, dnnl_engine_t *engine);

/* Blocks until all work submitted to the stream has finished. */
dnnl_status_t DNNL_API dnnl_stream_wait(dnnl_stream_t stream);

/* Destroys a stream. NULL is accepted. */
dnnl_status_t DNNL_API dnnl_stream_destroy(dnnl_stream_t stream);

/* ------------------------------------------------------------------------ */
/* Service functions                                                        */
/* ------------------------------------------------------------------------ */

/* Reports the process-wide default floating-point math mode. */
dnnl_status_t DNNL_API dnnl_get_default_fpmath_mode(dnnl_fpmath_mode_t *mode);

/* Sets the process-wide default floating-point math mode used by objects
 * created afterwards. */
dnnl_status_t DNNL_API dnnl_set_default_fpmath_mode(dnnl_fpmath_mode_t mode);

/* Sets the verbose level: 0 off, 1 execution, 2 creation and execution. */
dnnl_status_t DNNL_API dnnl_set_verbose(int level);

/* Returns a pointer to static, never-freed version information. */
const dnnl_version_t DNNL_API *dnnl_version(void);

#ifdef __cplusplus
}
#endif

#endif /* ONEAPI_DNNL_DNNL_COMMON_H */
