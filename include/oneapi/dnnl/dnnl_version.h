/*
 * Partita - a C11 implementation of the oneDNN v3 Graph C API.
 *
 * oneapi/dnnl/dnnl_version.h
 *
 * Version of the oneDNN interface this library implements.
 */

#ifndef ONEAPI_DNNL_DNNL_VERSION_H
#define ONEAPI_DNNL_DNNL_VERSION_H

/* Major version. */
#define DNNL_VERSION_MAJOR 3

/* Minor version. */
#define DNNL_VERSION_MINOR 14

/* Patch version. */
#define DNNL_VERSION_PATCH 0

#endif /* ONEAPI_DNNL_DNNL_VERSION_H */
