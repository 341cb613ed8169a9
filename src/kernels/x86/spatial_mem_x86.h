/* AVX-512 kernels of the NXC pooling and Interpolate plans (kernels/mem/mem.h):
 * per output pixel, all C channels in registers (16 per vector, a masked
 * tail), the taps read straight from the source in the reference's order,
 * bf16 / f16 converted in registers, the source of the pixels ahead
 * prefetched.  Results bit-identical to the reference kernels.  The caller
 * (kernels/mem/mem_pool.c, mem_interp.c) checks that the CPU runs the
 * AVX-512 level and splits the output pixels over the threads; each call
 * makes the dense output pixels [b, e) (pixel = n, d, h, w in row-major
 * order) and, with `stream`, writes them with non-temporal stores (fenced
 * before it returns).  Pure functions: no allocation. */
#ifndef PARTITA_KERNELS_X86_SPATIAL_MEM_X86_H
#define PARTITA_KERNELS_X86_SPATIAL_MEM_X86_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/mem/mem.h"

/* MaxPool / AvgPool of plan p: src, dst of types sdt, ddt (f32, bf16, f16). */
void pt_pool_nxc_avx512(const pt_mem_pool_plan *p, const void *src, dnnl_data_type_t sdt, void *dst,
                        dnnl_data_type_t ddt, int64_t b, int64_t e, bool stream);

/* Interpolate (nearest, linear) of plan p (its tap tables filled).  row:
 * NULL, or (linear over 2 or 3 dims) sd[4]·C floats of the thread's scratch
 * for one output row's depth and height blends (then done once per row). */
void pt_interp_nxc_avx512(const pt_mem_interp_plan *p, const void *src, dnnl_data_type_t sdt, void *dst,
                          dnnl_data_type_t ddt, int64_t b, int64_t e, bool stream, float *row);

#endif
