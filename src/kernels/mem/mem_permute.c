/* Copies between dense layouts with different dim orders (kernels/mem/mem.h).
 * The plan's dims are put in dst's memory order and those adjacent on both
 * sides merged, so that rows and planes are as long as the layouts allow and
 * are visited in dst order (rows moved whole in source order where dst
 * allows, see order_rows_by_source).  With AVX-512
 * (kernels/x86/permute_x86.h) tiles are transposed in registers and large
 * outputs streamed past the caches; the portable path copies 32 x 32 tiles
 * element by element. */
#include <string.h>

#include "kernels/mem/mem_io.h"
#include "kernels/mem/mem_rows.h"
#include "kernels/x86/permute_x86.h"
#include "runtime/cpu.h"

#define PT_MEM_TILE 32
/* Rows longer than this are split between threads in pieces of about this size. */
#define PT_MEM_ROW_PIECE ((size_t)512 << 10)

/* The plan's dims in dst's memory order (dst stride descending: `a`, stride
 * 1 in dst, is the last), merged where adjacent in src too; `b` has stride 1
 * in src. */
typedef struct {
    int nd, b;
    int64_t dims[DNNL_MAX_NDIMS], ss[DNNL_MAX_NDIMS], ds[DNNL_MAX_NDIMS];
} permute_shape;

static void shape_of(const pt_mem_permute_plan *p, permute_shape *s) {
    s->nd = 0;
    for (int d = 0; d < p->nd; ++d) { /* insertion by dst stride */
        int at = s->nd++;
        for (; at > 0 && s->ds[at - 1] < p->ds[d]; --at) {
            s->dims[at] = s->dims[at - 1], s->ss[at] = s->ss[at - 1], s->ds[at] = s->ds[at - 1];
        }
        s->dims[at] = p->dims[d], s->ss[at] = p->ss[d], s->ds[at] = p->ds[d];
    }
    int n = 0;
    for (int d = 0; d < s->nd; ++d) {
        if (n > 0 && s->ss[n - 1] == s->ss[d] * s->dims[d] && s->ds[n - 1] == s->ds[d] * s->dims[d]) {
            s->dims[n - 1] *= s->dims[d], s->ss[n - 1] = s->ss[d], s->ds[n - 1] = s->ds[d];
            continue;
        }
        s->dims[n] = s->dims[d], s->ss[n] = s->ss[d], s->ds[n] = s->ds[d];
        ++n;
    }
    s->nd = n, s->b = n - 1;
    for (int d = 0; d < n; ++d)
        if (s->ss[d] == 1) s->b = d;
}

/* Rows case (the last dim moves whole): true when every dst row starts on a
 * 64-byte line boundary, and then the other dims are reordered by source
 * stride, so that the source is read in its own order and the rows land in
 * dst as whole streamed lines (one thread, bf16 [8,512,32,128] order
 * [0,2,1,3]: 2.0 -> 1.2 ms).  Rows that end inside lines keep dst's order and
 * memcpy: the streamed forms lost to it there (two threads: 43% of a copy
 * through a line writer, 53% with cached zmm stores, memcpy 63-66%). */
static bool order_rows_by_source(permute_shape *s, const char *dst, size_t elem) {
    const int last = s->nd - 1;
    bool lines = (uintptr_t)dst % 64 == 0 && (size_t)s->dims[last] * elem % 64 == 0;
    for (int d = 0; d < last; ++d) lines = lines && (size_t)s->ds[d] * elem % 64 == 0;
    if (!lines) return false;
    for (int d = 1; d < last; ++d) { /* insertion by source stride */
        const int64_t dim = s->dims[d], ss = s->ss[d], ds = s->ds[d];
        int at = d;
        for (; at > 0 && s->ss[at - 1] < ss; --at) {
            s->dims[at] = s->dims[at - 1], s->ss[at] = s->ss[at - 1], s->ds[at] = s->ds[at - 1];
        }
        s->dims[at] = dim, s->ss[at] = ss, s->ds[at] = ds;
    }
    return true;
}

/* Offsets in src and dst (elements) of outer item `k`: every dim but the last and b. */
static void outer_offsets(const permute_shape *s, int64_t k, int64_t *so, int64_t *dof) {
    *so = *dof = 0;
    for (int d = s->nd - 2; d >= 0; --d) {
        if (d == s->b) continue;
        const int64_t i = k % s->dims[d];
        k /= s->dims[d];
        *so += i * s->ss[d];
        *dof += i * s->ds[d];
    }
}

/* ---- portable path ---- */

#define PT_TILE_COPY(T)                                                                                   \
    static void tile_##T(const T *s, T *d, int64_t na, int64_t nb, int64_t ssa, int64_t dsb) {            \
        for (int64_t ib = 0; ib < nb; ++ib)                                                             \
            for (int64_t ia = 0; ia < na; ++ia) d[ia + ib * dsb] = s[ia * ssa + ib];                     \
    }
PT_TILE_COPY(uint8_t)
PT_TILE_COPY(uint16_t)
PT_TILE_COPY(uint32_t)
#undef PT_TILE_COPY

/* Tiles [t0, t1) of a plane, as pt_permute_plane_avx512 with tiles of PT_MEM_TILE (strides in elements); the
 * source rows of the next tile are prefetched meanwhile. */
static void plane_portable(const char *src, char *dst, size_t elem, int64_t na, int64_t nb, int64_t ssa, int64_t dsb,
                           int64_t t0, int64_t t1) {
    const int64_t tiles_b = (nb + PT_MEM_TILE - 1) / PT_MEM_TILE, es = (int64_t)elem;
    for (int64_t t = t0; t < t1; ++t) {
        const int64_t a0 = t / tiles_b * PT_MEM_TILE, b0 = t % tiles_b * PT_MEM_TILE;
        const int64_t la = na - a0 < PT_MEM_TILE ? na - a0 : PT_MEM_TILE;
        const int64_t lb = nb - b0 < PT_MEM_TILE ? nb - b0 : PT_MEM_TILE;
        if (t + 1 < t1) {
            const int64_t a1 = (t + 1) / tiles_b * PT_MEM_TILE, b1 = (t + 1) % tiles_b * PT_MEM_TILE;
            const int64_t rows = na - a1 < PT_MEM_TILE ? na - a1 : PT_MEM_TILE;
            for (int64_t r = 0; r < rows; ++r) {
                const char *row = src + ((a1 + r) * ssa + b1) * es;
                __builtin_prefetch(row, 0, 3);
                if (es * PT_MEM_TILE > 64) __builtin_prefetch(row + 64, 0, 3);
            }
        }
        const int64_t so = a0 * ssa + b0, dof = a0 + b0 * dsb;
        switch (elem) {
            case 4: tile_uint32_t((const uint32_t *)src + so, (uint32_t *)dst + dof, la, lb, ssa, dsb); break;
            case 2: tile_uint16_t((const uint16_t *)src + so, (uint16_t *)dst + dof, la, lb, ssa, dsb); break;
            default: tile_uint8_t((const uint8_t *)src + so, (uint8_t *)dst + dof, la, lb, ssa, dsb); break;
        }
    }
}

/* ---- the two cases ---- */

typedef struct {
    const char *src;
    char *dst;
    size_t elem;
    bool avx512, stream;
    bool row_lines; /* rows case: dst rows on line boundaries (order_rows_by_source) */
} permute_io;

/* Items [k0, k1) of the rows case (the last dim moves whole): rows, or
 * pieces of rows when `pieces` > 1; runs of rows along dim nd - 2 in one call. */
static void copy_rows(const permute_shape *s, const permute_io *io, int64_t pieces, int64_t k0, int64_t k1) {
    const size_t bytes = (size_t)s->dims[s->nd - 1] * io->elem;
    const int run_dim = s->nd - 2;
    for (int64_t k = k0; k < k1;) {
        int64_t so, dof, rows = 1;
        size_t from = 0, to = bytes;
        if (pieces > 1) {
            outer_offsets(s, k / pieces, &so, &dof);
            const int64_t piece = k % pieces;
            from = bytes * (size_t)piece / (size_t)pieces / 64 * 64; /* whole lines of a piece, where aligned */
            to = piece + 1 == pieces ? bytes : bytes * (size_t)(piece + 1) / (size_t)pieces / 64 * 64;
        } else {
            outer_offsets(s, k, &so, &dof);
            if (run_dim >= 0) {
                const int64_t left = s->dims[run_dim] - k % s->dims[run_dim];
                rows = left < k1 - k ? left : k1 - k;
            }
        }
        const char *from_src = io->src + (size_t)so * io->elem + from;
        char *to_dst = io->dst + (size_t)dof * io->elem + from;
        const int64_t ss = run_dim >= 0 ? s->ss[run_dim] * (int64_t)io->elem : 0;
        const int64_t ds = run_dim >= 0 ? s->ds[run_dim] * (int64_t)io->elem : 0;
        if (io->avx512 && io->row_lines) {
            pt_permute_rows_avx512(from_src, to_dst, rows, to - from, ss, ds, io->stream);
        } else {
            for (int64_t r = 0; r < rows; ++r) memcpy(to_dst + r * ds, from_src + r * ss, to - from);
        }
        k += pieces > 1 ? 1 : rows;
    }
}

/* Items [k0, k1) of the tiles case: `tiles` tiles per plane (last dim, b). */
static void copy_tiles(const permute_shape *s, const permute_io *io, int64_t tiles, int64_t k0, int64_t k1) {
    const int a = s->nd - 1, b = s->b;
    const int64_t na = s->dims[a], nb = s->dims[b], es = (int64_t)io->elem;
    for (int64_t plane = k0 / tiles; plane * tiles < k1; ++plane) {
        const int64_t t0 = k0 > plane * tiles ? k0 - plane * tiles : 0;
        const int64_t t1 = k1 < (plane + 1) * tiles ? k1 - plane * tiles : tiles;
        int64_t so, dof;
        outer_offsets(s, plane, &so, &dof);
        const char *src = io->src + so * es;
        char *dst = io->dst + dof * es;
        if (!io->avx512) {
            plane_portable(src, dst, io->elem, na, nb, s->ss[a], s->ds[b], t0, t1);
            continue;
        }
        const char *next = NULL; /* the next plane's source, when its first tile is this thread's */
        if ((plane + 1) * tiles < k1) {
            int64_t nso, ndof;
            outer_offsets(s, plane + 1, &nso, &ndof);
            next = io->src + nso * es;
        }
        pt_permute_plane_avx512(src, dst, io->elem, na, nb, s->ss[a] * es, s->ds[b] * es, t0, t1, io->stream, next);
    }
}

pt_status pt_mem_permute_run(const pt_fused *f, const pt_tview *in, size_t nin, const pt_tview *out, size_t nout,
                             void *scratch, const pt_exec_ctx *ctx) {
    (void)nin, (void)nout, (void)scratch;
    const pt_mem_permute_plan *p = f->state;
    permute_shape s;
    shape_of(p, &s);
    int64_t outer = 1, total = 1;
    for (int d = 0; d < s.nd; ++d) {
        total *= s.dims[d];
        if (d != s.nd - 1 && d != s.b) outer *= s.dims[d];
    }
    if (total == 0) return dnnl_success;
    const bool avx512 = pt_cpu_row_usable(PT_ISA_AVX512, 0, pt_isa());
    permute_io io = {.src = in[p->io.in[0]].data,
                           .dst = out[p->io.out[0]].data,
                           .elem = p->elem,
                           .avx512 = avx512,
                           .stream = avx512 && (size_t)total * p->elem >= PT_MEM_STREAM_BYTES};
    const bool rows = s.b == s.nd - 1;
    int64_t items, per_item = 1; /* rows case: pieces per row; tiles case: tiles per plane */
    if (rows) {
        io.row_lines = order_rows_by_source(&s, io.dst, p->elem);
        const size_t bytes = (size_t)s.dims[s.nd - 1] * p->elem;
        per_item = (int64_t)((bytes + PT_MEM_ROW_PIECE - 1) / PT_MEM_ROW_PIECE);
        items = outer * per_item;
    } else {
        const int64_t na = s.dims[s.nd - 1], nb = s.dims[s.b];
        per_item = avx512 ? pt_permute_tiles_avx512(p->elem, na, nb)
                          : (na + PT_MEM_TILE - 1) / PT_MEM_TILE * ((nb + PT_MEM_TILE - 1) / PT_MEM_TILE);
        items = outer * per_item;
    }
    const int nt = pt_mem_threads(ctx, 2 * (size_t)total * p->elem, items, ctx->nthreads);
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        int64_t b, e;
        pt_mem_share(items, nt > 1 ? pt_thread_id() : 0, pt_mem_team(nt), &b, &e);
        if (rows) copy_rows(&s, &io, per_item, b, e);
        else copy_tiles(&s, &io, per_item, b, e);
        if (io.stream) pt_permute_fence_avx512();
    }
    return dnnl_success;
}
