/* AVX-512 pieces of the permuting copy (kernels/mem/mem_permute.c): square
 * tiles of a plane transposed in registers, and rows moved whole.  Pure
 * functions: no allocation, any sizes, no alignment required.  With
 * `stream`, whole 64-byte lines of dst that start on a line boundary go out
 * with non-temporal stores; the caller fences (pt_permute_fence_avx512) once
 * at the end of its share.  Strides are in bytes. */
#ifndef PARTITA_KERNELS_X86_PERMUTE_X86_H
#define PARTITA_KERNELS_X86_PERMUTE_X86_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Tiles a plane of na x nb elements of `elem` bytes (1, 2 or 4) is cut into. */
int64_t pt_permute_tiles_avx512(size_t elem, int64_t na, int64_t nb);

/* Tiles [t0, t1) of a plane of na x nb elements: element (ia, ib) goes from
 * src + ia·ssa + ib·elem to dst + ia·elem + ib·dsb.  Tiles are numbered
 * along b first (so a thread's share reads on along the same source rows).
 * next: the source of the plane whose first tile the caller copies after
 * tile t1 - 1 (NULL: none), prefetched meanwhile. */
void pt_permute_plane_avx512(const char *src, char *dst, size_t elem, int64_t na, int64_t nb, int64_t ssa,
                             int64_t dsb, int64_t t0, int64_t t1, bool stream, const char *next);

/* `rows` rows of `bytes` each: dst + r·ds = src + r·ss, the source
 * prefetched ahead.  Meant for rows that start on dst's lines (the caller
 * copies others with memcpy). */
void pt_permute_rows_avx512(const char *src, char *dst, int64_t rows, size_t bytes, int64_t ss, int64_t ds,
                            bool stream);

/* Orders this thread's non-temporal stores before its later stores. */
void pt_permute_fence_avx512(void);

#endif
