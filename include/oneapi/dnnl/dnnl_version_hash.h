/*
 * Partita - a C11 implementation of the oneDNN v3 Graph C API.
 *
 * oneapi/dnnl/dnnl_version_hash.h
 *
 * Source revision the library was built from. Not included by any other
 * public header; only the library source that fills dnnl_version_t::hash
 * uses it.
 */

#ifndef ONEAPI_DNNL_DNNL_VERSION_HASH_H
#define ONEAPI_DNNL_DNNL_VERSION_HASH_H

/* Revision string ("N/A" when built outside a git checkout). */
#define DNNL_VERSION_HASH "N/A"

#endif /* ONEAPI_DNNL_DNNL_VERSION_HASH_H */
