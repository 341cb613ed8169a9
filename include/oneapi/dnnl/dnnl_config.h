/*
 * Partita - a C11 implementation of the oneDNN v3 Graph C API.
 *
 * oneapi/dnnl/dnnl_config.h
 *
 * Build configuration: symbol export macros, runtime and vendor constants,
 * the runtimes selected for this build and the feature switches.
 * This header contains macros only.
 */

#ifndef ONEAPI_DNNL_DNNL_CONFIG_H
#define ONEAPI_DNNL_DNNL_CONFIG_H

/* ------------------------------------------------------------------------ */
/* Symbol export / import                                                   */
/* ------------------------------------------------------------------------ */

#if defined(_WIN32) || defined(__CYGWIN__)
#define DNNL_HELPER_DLL_IMPORT __declspec(dllimport)
#define DNNL_HELPER_DLL_EXPORT __declspec(dllexport)
#else
#if defined(__GNUC__) && __GNUC__ >= 4
#define DNNL_HELPER_DLL_IMPORT __attribute__((visibility("default")))
#define DNNL_HELPER_DLL_EXPORT __attribute__((visibility("default")))
#else
#define DNNL_HELPER_DLL_IMPORT
#define DNNL_HELPER_DLL_EXPORT
#endif
#endif

/* The shared library itself is built with -DDNNL_DLL -DDNNL_DLL_EXPORTS and
 * hidden default visibility, so only DNNL_API symbols are exported. Installed
 * headers leave DNNL_DLL undefined. */
#ifdef DNNL_DLL
#ifdef DNNL_DLL_EXPORTS
#define DNNL_API DNNL_HELPER_DLL_EXPORT
#else
#define DNNL_API DNNL_HELPER_DLL_IMPORT
#endif
#else
#define DNNL_API
#endif

#if defined(__GNUC__)
#define DNNL_DEPRECATED __attribute__((deprecated))
#elif defined(_MSC_VER)
#define DNNL_DEPRECATED __declspec(deprecated)
#else
#define DNNL_DEPRECATED
#endif

/* ------------------------------------------------------------------------ */
/* Runtime and vendor constants                                             */
/* ------------------------------------------------------------------------ */

/* No runtime (disabled). */
#define DNNL_RUNTIME_NONE 0u
/* Sequential CPU runtime. */
#define DNNL_RUNTIME_SEQ 1u
/* OpenMP CPU runtime. */
#define DNNL_RUNTIME_OMP 2u
/* TBB CPU runtime. */
#define DNNL_RUNTIME_TBB 4u
/* User-supplied threadpool CPU runtime. */
#define DNNL_RUNTIME_THREADPOOL 8u
/* OpenCL runtime. */
#define DNNL_RUNTIME_OCL 256u
/* SYCL runtime. */
#define DNNL_RUNTIME_SYCL 512u
/* DPC++ runtime (alias of SYCL). */
#define DNNL_RUNTIME_DPCPP DNNL_RUNTIME_SYCL
/* Level Zero runtime. */
#define DNNL_RUNTIME_ZE 1024u

/* No vendor. */
#define DNNL_VENDOR_NONE 0u
/* Intel. */
#define DNNL_VENDOR_INTEL 1u
/* NVIDIA. */
#define DNNL_VENDOR_NVIDIA 2u
/* AMD. */
#define DNNL_VENDOR_AMD 4u
/* Generic vendor. */
#define DNNL_VENDOR_GENERIC 8u

/* ------------------------------------------------------------------------ */
/* Runtimes selected for this build                                         */
/* ------------------------------------------------------------------------ */

/* CPU engine runtime (reported in dnnl_version_t::cpu_runtime). */
#define DNNL_CPU_RUNTIME DNNL_RUNTIME_OMP
/* CPU threading runtime. */
#define DNNL_CPU_THREADING_RUNTIME DNNL_RUNTIME_OMP
/* GPU engine runtime (reported in dnnl_version_t::gpu_runtime). */
#define DNNL_GPU_RUNTIME DNNL_RUNTIME_NONE
/* GPU vendor. */
#define DNNL_GPU_VENDOR DNNL_VENDOR_INTEL

#if !defined(DNNL_CPU_RUNTIME) || !defined(DNNL_GPU_RUNTIME)
#error "DNNL_CPU_RUNTIME and DNNL_GPU_RUNTIME must both be defined"
#endif

#if DNNL_CPU_RUNTIME == DNNL_RUNTIME_OCL
#error "OpenCL is not a valid CPU runtime"
#endif

#if DNNL_GPU_RUNTIME != DNNL_RUNTIME_NONE \
        && DNNL_GPU_RUNTIME != DNNL_RUNTIME_OCL \
        && DNNL_GPU_RUNTIME != DNNL_RUNTIME_SYCL \
        && DNNL_GPU_RUNTIME != DNNL_RUNTIME_ZE
#error "DNNL_GPU_RUNTIME must be one of NONE, OCL, SYCL or ZE"
#endif

#if DNNL_CPU_RUNTIME == DNNL_RUNTIME_NONE \
        && DNNL_GPU_RUNTIME == DNNL_RUNTIME_NONE
#error "DNNL_CPU_RUNTIME and DNNL_GPU_RUNTIME cannot both be NONE"
#endif

#if DNNL_CPU_RUNTIME == DNNL_RUNTIME_SYCL
#define DNNL_ENABLE_CONCURRENT_EXEC
#endif

/* ------------------------------------------------------------------------ */
/* Feature switches                                                         */
/* ------------------------------------------------------------------------ */

/* The graph component is part of this build. */
#define ONEDNN_BUILD_GRAPH

/* Experimental grouped memory support is disabled. */
#define DNNL_EXPERIMENTAL_GROUPED_MEMORY 0

/* Intentionally left undefined in this build:
 *   DNNL_WITH_SYCL, DNNL_SYCL_CUDA, DNNL_SYCL_HIP, DNNL_SYCL_GENERIC,
 *   DNNL_ENABLE_STACK_CHECKER, DNNL_EXPERIMENTAL, DNNL_EXPERIMENTAL_UKERNEL,
 *   DNNL_EXPERIMENTAL_PROFILING, DNNL_EXPERIMENTAL_LOGGING, DNNL_SAFE_RBP,
 *   DNNL_EXPERIMENTAL_SYCL_KERNEL_COMPILER, DNNL_DISABLE_GPU_REF_KERNELS. */

#endif /* ONEAPI_DNNL_DNNL_CONFIG_H */
