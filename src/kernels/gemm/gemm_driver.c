/* The GEMM driver (see gemm.h): cache blocks from the CPU's cache sizes, the
 * 2-D thread split, packing into thread-private scratch, the microkernel
 * sweep with tails, the s32 -> f32 step of U8S8 and the epilogue per
 * finished block.
 *
 * A work item is one MC x NC block of C in one batch item.  Its thread packs
 * B for the whole K of the block's NC columns (whole-K strips: any k range
 * of a strip is itself a panel, so the packed block serves every KC chunk),
 * keeps it while consecutive items share those columns (items run M block
 * fastest; batch items that broadcast B share it too), and per KC chunk
 * packs the MC x KC block of A and sweeps the microkernel over it, adding
 * into an MC x NC block of C.  With a single M block no item reuses a B
 * block, so B is packed per KC chunk instead, in column runs next to that
 * chunk's A block in L2; while a chunk computes, the microkernel fetches
 * the source of the next chunk (run_pf rows), and rows with a packing form
 * (F32, and the AMX BF16 and U8S8 rows) pack B themselves
 * (run_item_b_in_kernel).  When K is done the block
 * goes through the epilogue.  Prepacked B (pt_gemm_pack_b_all) is the same
 * whole-K strips for all N, then (U8S8) the Σ_k of each column, 64-byte
 * aligned after them.
 * Items go to threads in static slices, and a thread that finishes its
 * slice takes items from the others'.
 *
 * Several threads on one batch item with at least two M blocks per thread
 * and B not prepacked take the team path instead (run_team): the
 * threads pack each whole-K B block together into shared scratch and then
 * claim its M blocks, so B is packed once rather than once per thread.
 *
 * Small M (<= PT_GEMV_MAX_M, where gemm_gemv.c takes the desc and B is not
 * prepacked) skips packing: work units of (batch item, k block, column
 * block), claimed dynamically, each computed by pt_gemm_gemv_tile_k into the
 * thread's f32 rows (or, for a k split, into its k block's partial slot,
 * added in order at the end). */
#include <omp.h>
#include <sched.h>
#include <string.h>

#include "ir/dtype.h"
#include "kernels/gemm/gemm_gemv.h"
#include "kernels/gemm/gemm_internal.h"
#include "kernels/x86/gemm_pack_int_x86.h"
#include "runtime/share.h"

/* Blocking targets (fractions of the cache the block may fill), measured on
 * Zen (48 KiB L1d, 1 MiB L2) at 1024^3 to 2048^3 and skinny shapes: the B
 * micro-panel (KC x NR) may take most of L1, since the A micro-panels only
 * stream through it (on Zen all of L1 was 5-8 % faster than half); the A
 * block (MC x KC) takes a quarter of L2, leaving the rest to the C block and
 * B (a half was 2-4 % slower, an eighth no better).  Three quarters of L1
 * rather than all of it, measured on the Xeon of sessions 12-14 (48 KiB
 * L1d, 2 MiB L2; alternating builds, 2 threads): f32 128x4096x4096 17.5-18.2
 * -> 16.7 ms, 1024^3 7.3-7.4 -> 7.2, 2048^3 62-64 -> 62; bf16 (AMX) 2048^3
 * 14.0-14.2 -> 11.2-11.4 (KC 512 instead of 683); others within noise
 * (half of L1: 1024^3 8 % slower, 2048^3 3 % faster). */
#ifndef PT_GEMM_KC_L1_PERCENT
#define PT_GEMM_KC_L1_PERCENT 75
#endif
/* F32 on a core with an L1d under 48 KiB: KC 384 (a B micro-panel of 48
 * KiB, more than L1: it streams from L2 while the C tile's load and store
 * are spread over twice the k steps).  On Zen 4 (32 KiB L1d, where three
 * quarters gave KC 192), alternating CLI rounds, 2 threads: f32 1024^3
 * 10.65 -> 10.20 ms (86 -> 90 % of peak), 2048^3 85.5 -> 81.7, 384x1024x4096
 * 16.9 -> 16.25, 128x4096x4096 unchanged; the microkernel alone over seven
 * A panels and a B block in cache 93 % of peak at KC 192, 97 % at 384.
 * BF16 / U8S8 were 0-1.5 % slower with the longer KC and keep theirs. */
#ifndef PT_GEMM_KC_F32_SMALL_L1
#define PT_GEMM_KC_F32_SMALL_L1 384
#endif
#ifndef PT_GEMM_MC_L2_DIVISOR
#define PT_GEMM_MC_L2_DIVISOR 4
#endif
#ifndef PT_GEMM_MC_TEAM_L2_DIVISOR
#define PT_GEMM_MC_TEAM_L2_DIVISOR 16 /* A blocks of threads that share B blocks (team path): see choose_blocks */
#endif
#ifndef PT_GEMM_B_BLOCK_BYTES
#define PT_GEMM_B_BLOCK_BYTES (4 << 20) /* whole-K packed B of one NC block (2 and 8 MiB: no better) */
#endif
#ifndef PT_GEMM_NC_MAX
#define PT_GEMM_NC_MAX 2048
#endif
#define SINGLE_M_KC_L1_DIVISOR 6 /* see choose_blocks */
#define SINGLE_M_PANEL_MIN_BYTES (16 << 10) /* see choose_blocks */
#define IN_KERNEL_ROWS 160        /* see choose_blocks */
#define NC_MIN 256            /* A is repacked per NC block: keep NC from shrinking below this */
#define KC_MAX 1024
/* Multiply-adds per thread at least: for an OpenMP team (a region can
 * wait a scheduler tick for a thread that another process keeps off its
 * core, runtime/share.h), and for the helpers of runtime/share.h, which
 * never wait for a thread that has not started (below this, waking one
 * costs more than it saves). */
#define MIN_MACS_PER_THREAD (INT64_C(1) << 21)
#define SHARE_MIN_MACS_PER_THREAD (INT64_C(1) << 16)
#define GEMV_MIN_COLS 256 /* small-M path: columns per work unit at least */
#define GEMV_COL_ALIGN 64
#define GEMV_UNITS_PER_THREAD 2 /* small-M units claimed dynamically: a thread slowed by a neighbour
                                 * leaves its share to the others */
#define GEMV_MIN_K_ROWS 256     /* k rows per split-K unit at least */
#define GEMV_K_ALIGN 64
#define ALIGN_BYTES 64
#define STRIP_SUMS_MAX 64    /* column sums of one packing call: at least every row's NR */
#define MAX_STEAL_THREADS 256 /* item slices on the stack (16 KiB) */

static inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
static inline int64_t round_up(int64_t v, int64_t m) { return ceil_div(v, m) * m; }
static inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static inline size_t align_bytes(size_t n) { return (n + ALIGN_BYTES - 1) & ~(size_t)(ALIGN_BYTES - 1); }

/* ---- plan -------------------------------------------------------------------- */

/* Byte offsets of a thread's scratch pieces (each 64-byte aligned). */
typedef struct {
    size_t c, c2, a, b, rowsum, rowsum_chunk, colsum, total;
} thread_layout;

static int64_t k_padded(const pt_gemm_plan *p) { return pt_gemm_kc_padded(p->uk, p->d.K); }

/* Row stride (elements) of the thread's C block: NC rounded to a cache line
 * plus one line, so that the microkernel's MR rows never share an L1 set
 * (NC = 1024 put all twelve rows of a tile 4 KiB apart, in one set). */
static int64_t c_ld(const pt_gemm_plan *p) { return round_up(p->NC, 16) + 16; }

/* Columns of B a single-M-block item packs per KC chunk: half of L2, next
 * to the A block. */
static int64_t chunk_cols(const pt_gemm_plan *p) {
    const int64_t eb = (int64_t)pt_gemm_panel_elem_bytes(p->d.kind), nr = p->uk->nr;
    return max64(nr, (int64_t)pt_cpu()->l2_bytes / 2 / (p->KC * eb) / nr * nr);
}

/* Whether an item's B block is used by it alone (one M block, and no batch
 * items sharing it): then B is packed per chunk (run_item_b_runs) unless
 * prepacked. */
static bool b_per_chunk(const pt_gemm_plan *p) { return p->mblocks == 1 && (p->nblocks > 1 || p->nbatch == 1); }

/* Whether per-chunk items leave packing B to the microkernel (its packing
 * form: B of the kind's own type, f32, bf16 or s8, with contiguous columns,
 * strict math), strip by strip into one panel (run_item_b_in_kernel).  The
 * AMX row only from two A strips on and not for dual runs: bf16 N = K =
 * 4096 with M = 64, 80, 96, 128, 200: 8-28 % faster than packing chunks
 * ahead; M = 8, 16, 48: 15-35 % slower (32: 12 % faster), its strips then
 * waiting on the source; the gated MLP's pair of 4096 x 14336 weights from
 * memory, 128 rows: 60 ms in-kernel, 49.5 ms packed per chunk. */
static int packing_strips(const pt_gemm_ukernel *uk) { return uk->packing_strips > 1 ? uk->packing_strips : 1; }

static bool b_packed_in_kernel(const pt_gemm_plan *p) {
    const pt_gemm_desc *d = &p->d;
    const bool same_type = (d->kind == PT_GEMM_F32 && d->b.dt == dnnl_f32) ||
                           (d->kind == PT_GEMM_BF16 && d->b.dt == dnnl_bf16) ||
                           (d->kind == PT_GEMM_U8S8 && d->b.dt == dnnl_s8);
    return p->uk->run_packing && same_type && p->uk->nr * packing_strips(p->uk) <= STRIP_SUMS_MAX &&
           (d->kind != PT_GEMM_U8S8 || !d->dual) && d->b.s_row == 1 && !d->b.dq.on &&
           d->b.round == dnnl_fpmath_mode_strict && (!p->uk->a_prep || (d->M >= 2 * p->uk->mr && !d->dual));
}

/* Columns of such an item's run: its C block (MC rows) in about half of L2
 * (9/16: 1024 columns of 132 rows in 1 MiB; at 128x4096x4096 four items of
 * 1024 columns ran 2 % faster than ten of 416, and eight of 480 3 % slower).
 * No B chunk needs to stay in L2, so runs are wider than chunk_cols and the
 * A block is packed fewer times. */
static int64_t kernel_run_cols(const pt_gemm_plan *p) {
    const int64_t nr = p->uk->nr;
    return max64(nr, (int64_t)pt_cpu()->l2_bytes * 9 / 16 / (p->MC * 4) / nr * nr);
}

static thread_layout layout_of(const pt_gemm_plan *p) {
    const size_t eb = pt_gemm_panel_elem_bytes(p->d.kind);
    thread_layout l;
    l.c = 0;
    l.c2 = l.c + align_bytes((size_t)(p->MC * c_ld(p)) * 4); /* a dual run's second C block */
    l.a = p->d.dual ? l.c2 + align_bytes((size_t)(p->MC * c_ld(p)) * 4) : l.c2;
    /* Items with B packed per chunk (run_item_b_runs) need one chunk's
     * column run. */
    const bool per_chunk = b_per_chunk(p);
    const int64_t b_elems = !per_chunk               ? k_padded(p) * p->NC
                            : b_packed_in_kernel(p) ? p->KC * p->uk->nr * packing_strips(p->uk)
                                                    : p->KC * min64(p->NC, chunk_cols(p));
    l.b = l.a + align_bytes((size_t)(p->MC * p->KC) * eb);
    l.rowsum = l.b + align_bytes((size_t)b_elems * eb);
    bool int_kind = p->d.kind == PT_GEMM_U8S8;
    l.rowsum_chunk = l.rowsum + (int_kind ? align_bytes((size_t)p->MC * 4) : 0);
    l.colsum = l.rowsum_chunk + (int_kind ? align_bytes((size_t)p->MC * 4) : 0);
    l.total = l.colsum + (int_kind ? align_bytes((size_t)p->NC * 4) : 0);
    return l;
}

static bool gemv_path_possible(const pt_gemm_desc *d) {
    return d->M <= PT_GEMV_MAX_M && pt_gemm_gemv_supported(d);
}

static int64_t total_macs(const pt_gemm_plan *p) { return p->nbatch * p->d.M * p->d.N * p->d.K; }

/* Threads worth using: every thread gets at least SHARE_MIN_MACS_PER_THREAD. */
static int useful_threads(const pt_gemm_plan *p, int nthr) {
    int64_t cap = max64(1, total_macs(p) / SHARE_MIN_MACS_PER_THREAD);
    return (int)min64(nthr, cap);
}

/* Whether nt threads run as an OpenMP team rather than as the caller and
 * runtime/share.h's helpers. */
static bool omp_team(const pt_gemm_plan *p, int nt) { return total_macs(p) >= MIN_MACS_PER_THREAD * nt; }

/* Small-M work units: (batch item, k block, column block), column block
 * fastest.  Columns-contiguous B streams best in runs as wide as the chunk
 * kernels' accumulator block, so long K is split instead of narrowing the
 * runs: with one column block (N <= 4096 at M = 1) every unit is one
 * contiguous stretch of B.  Each k block's partial sums go to a slot of
 * their own and are added in k-block order after all units, so the result
 * does not depend on which thread ran which unit.  Chosen from the plan's
 * thread count (results are reproducible per compile-time thread count). */
typedef struct {
    int64_t cols, ncol;    /* columns per unit (GEMV_COL_ALIGN multiple), column blocks */
    int64_t kblock, nk;    /* k rows per unit, k blocks (1: no split) */
    int64_t ldp;           /* row stride of the partial slots (floats) */
} gemv_units;

static gemv_units gemv_layout(const pt_gemm_plan *p) {
    const pt_gemm_desc *d = &p->d;
    const int T = useful_threads(p, p->nthr);
    int64_t ncol = 1, nk = 1;
    if (T > 1) {
        const int64_t target = (int64_t)GEMV_UNITS_PER_THREAD * T, max_ncol = max64(1, d->N / GEMV_MIN_COLS);
        /* The integer kind splits columns only: its s32 sums are dequantised
         * per tile, so partial sums over k would have to stay s32. */
        if (d->b.s_k != 1 && d->kind != PT_GEMM_U8S8) {
            ncol = min64(max_ncol, ceil_div(d->N, pt_gemv_nc_cols((int)d->M)));
            /* K is split only when the column blocks cannot feed the threads:
             * the split costs a barrier and a pass over the partial sums. */
            if (p->nbatch == 1 && ncol < T)
                nk = max64(1, min64(ceil_div(target, ncol), d->K / GEMV_MIN_K_ROWS));
            if (ncol * nk < target) ncol = min64(max_ncol, ceil_div(target, nk));
        } else {
            ncol = min64(max_ncol, target);
        }
    }
    gemv_units u;
    u.cols = round_up(ceil_div(d->N, ncol), GEMV_COL_ALIGN);
    u.ncol = ceil_div(d->N, u.cols);
    u.kblock = nk > 1 ? round_up(ceil_div(d->K, nk), GEMV_K_ALIGN) : d->K;
    u.nk = nk > 1 ? ceil_div(d->K, u.kblock) : 1;
    u.ldp = round_up(d->N, 16);
    return u;
}

/* Small-M scratch per thread: the unit counter (used in thread 0's), f32
 * rows of one unit, and the partial slots of a k split (used in thread 0's). */
static size_t gemv_counter_bytes(void) { return ALIGN_BYTES; }
static size_t gemv_rows_bytes(const pt_gemm_desc *d, const gemv_units *u) {
    return align_bytes((size_t)(d->M * u->cols) * sizeof(float));
}
static size_t gemv_thread_bytes(const pt_gemm_plan *p) {
    const gemv_units u = gemv_layout(p);
    size_t bytes = gemv_counter_bytes() + gemv_rows_bytes(&p->d, &u);
    if (p->d.kind == PT_GEMM_U8S8) bytes += align_bytes(pt_gemm_gemv_int_scratch(&p->d, u.cols));
    if (u.nk > 1) bytes += align_bytes((size_t)(u.nk * p->d.M * u.ldp) * sizeof(float));
    return bytes;
}

/* Block sizes even over the extent: n blocks of at most `max` each. */
static int64_t even_block(int64_t extent, int64_t max, int64_t unit) {
    int64_t n = ceil_div(extent, max);
    return round_up(ceil_div(extent, n), unit);
}

static void set_blocks(pt_gemm_plan *p, int64_t MC, int64_t NC) {
    p->MC = MC, p->NC = NC;
    p->mblocks = ceil_div(p->d.M, MC), p->nblocks = ceil_div(p->d.N, NC);
}

static bool team_possible(const pt_gemm_plan *p, int T);

static void choose_blocks(pt_gemm_plan *p) {
    const pt_cpu_info *cpu = pt_cpu();
    const pt_gemm_ukernel *uk = p->uk;
    const pt_gemm_desc *d = &p->d;
    const int64_t eb = (int64_t)pt_gemm_panel_elem_bytes(d->kind), kg = uk->kg;
    const int64_t Kp = pt_gemm_kc_padded(uk, d->K);

    int64_t kc_max = (int64_t)cpu->l1d_bytes * PT_GEMM_KC_L1_PERCENT / 100 / (uk->nr * eb);
    if (d->kind == PT_GEMM_F32 && cpu->l1d_bytes > 0 && cpu->l1d_bytes < 48 * 1024)
        kc_max = max64(kc_max, PT_GEMM_KC_F32_SMALL_L1);
    kc_max = max64(kg * 16, min64(KC_MAX, kc_max / kg * kg));
    p->KC = even_block(Kp, kc_max, kg);

    /* Up to IN_KERNEL_ROWS rows with B for the packing form: one M block,
     * KC lowered as needed for its A block to fit the L2 share (the AVX2
     * row's L1-filling KC of 683 made two blocks of 128 rows, which packed
     * whole-K B blocks with the portable packer instead). */
    if (b_packed_in_kernel(p) && !d->b_constant && p->nbatch == 1 && d->M <= IN_KERNEL_ROWS) {
        const int64_t kc_fit = (int64_t)cpu->l2_bytes / PT_GEMM_MC_L2_DIVISOR / (round_up(d->M, uk->mr) * eb);
        if (kc_fit < p->KC) p->KC = even_block(Kp, max64(kg * 16, kc_fit), kg);
    }
    int64_t mc_max = (int64_t)cpu->l2_bytes / PT_GEMM_MC_L2_DIVISOR / (p->KC * eb);
    mc_max = max64(uk->mr, mc_max / uk->mr * uk->mr);
    int64_t nc_max = PT_GEMM_B_BLOCK_BYTES / (Kp * eb) / uk->nr * uk->nr;
    nc_max = min64(PT_GEMM_NC_MAX, max64(NC_MIN, nc_max));
    set_blocks(p, even_block(d->M, mc_max, uk->mr), even_block(d->N, nc_max, uk->nr));
    /* Where the threads will share each packed B block (team path), A
     * blocks of a sixteenth of L2 rather than a quarter: more, smaller items
     * to claim, and a B micro-panel that meets an A block small enough to
     * stay in L2 beside it.  Measured alternating plans in one process, 1024³
     * (2 threads, 81 runs, three rounds): f32 1-2 %, bf16 1-4 %, int8 2-6 %
     * faster; 2048³ int8 8 %, f32 / bf16 within noise.  Shapes with fewer M
     * blocks keep theirs (384x1024x4096 and 256x4096x4096 were 5-15 % slower
     * with small blocks there: B is packed per item off the team path). */
    if (team_possible(p, useful_threads(p, p->nthr))) {
        const int64_t mc_team = (int64_t)cpu->l2_bytes / PT_GEMM_MC_TEAM_L2_DIVISOR / (p->KC * eb) / uk->mr * uk->mr;
        if (mc_team >= uk->mr && mc_team < p->MC) set_blocks(p, even_block(d->M, mc_team, uk->mr), p->NC);
    }
    /* One M block: B is packed per KC chunk (run_item_b_runs), and the
     * chunk's panels should share L2 with the A block.  (Items one per
     * thread, packing A once per chunk or once for the whole K, took 5-15 %
     * more CPU time at 128x4096x4096: the A block then came from L3.)  The
     * BF16 and U8S8 kinds then take shorter chunks, a B micro-panel of a
     * sixth of L1: at 128x4096x4096 with B cold, KC 128 / 256 ran 10-15 %
     * faster than the L1-filling 684 / 1024 (F32 measured alike from KC 48
     * to 373, and keeps its KC).  At least 16 KiB though: on Zen 4 (32 KiB
     * L1d) a sixth was KC 84 / 168, and 256 / 512 ran 4 % (bf16, 12.96 ->
     * 12.45 ms) and 10 % (int8, 6.37 -> 5.72) faster in six alternating
     * rounds with memory in its slow state. */
    if (p->mblocks == 1 && !d->b_constant && p->nbatch == 1) {
        if (d->kind != PT_GEMM_F32) {
            const int64_t panel = max64((int64_t)cpu->l1d_bytes / SINGLE_M_KC_L1_DIVISOR, SINGLE_M_PANEL_MIN_BYTES);
            const int64_t kc_one = max64(kg * 16, panel / (uk->nr * eb) / kg * kg);
            if (kc_one < kc_max) p->KC = even_block(Kp, kc_one, kg);
        }
        const int64_t nc_chunk = (int64_t)cpu->l2_bytes / 2 / (p->KC * eb) / uk->nr * uk->nr;
        if (b_packed_in_kernel(p)) set_blocks(p, p->MC, even_block(d->N, kernel_run_cols(p), uk->nr));
        else if (nc_chunk < p->NC) set_blocks(p, p->MC, even_block(d->N, max64(uk->nr, nc_chunk), uk->nr));
    }
    const int T = useful_threads(p, p->nthr);
    /* Enough items for every useful thread, and a multiple of the thread
     * count while items are few (3 items on 2 threads waste a third). */
    for (;;) {
        int64_t items = p->nbatch * p->mblocks * p->nblocks;
        if (items >= T && (items % T == 0 || items >= 4 * T)) break;
        bool m_can = p->MC > uk->mr, n_can = p->NC > uk->nr;
        if (!m_can && !n_can) break;
        /* Split the dimension whose blocks are larger relative to its unit;
         * dual runs split N first, since they need a single M block (with a
         * 2 MiB L2 the 2-thread split of one 348-row block took M and the
         * dual plan was declined). */
        if (m_can && (!n_can || (!d->dual && p->MC * uk->nr >= p->NC * uk->mr)))
            set_blocks(p, even_block(d->M, round_up(p->MC / 2, uk->mr), uk->mr), p->NC);
        else
            set_blocks(p, p->MC, even_block(d->N, round_up(p->NC / 2, uk->nr), uk->nr));
    }
}

/* ---- team path: B blocks packed together ------------------------------------------ */

/* With several threads on one batch item, M blocks enough for every thread
 * twice, and B not prepacked, the threads share each packed B block instead
 * of each packing all of B: per NC block they claim units of its whole-K
 * strips from a counter and pack them into a buffer of the team, wait until
 * every unit is packed, then claim M blocks (items, computed as on the item
 * path against the shared block) from a second counter.  Waits are for work
 * in progress only: a thread that arrives early packs and computes what is
 * left, so a thread that loses its core holds the others for at most the
 * unit or item it is in.  Two block buffers alternate; a thread packs block
 * i into a buffer only after every item of block i - 2 is done.  Per output
 * element the sum runs over the same KC chunks in the same order as on the
 * item path, so results do not depend on the path or on who ran what. */
#define TEAM_PACK_STRIPS 4        /* strips per claimed packing unit */
#define TEAM_SPINS_PER_YIELD 1024 /* a waiting thread yields its core now and then to the one it waits for */

typedef struct {
    size_t counters;     /* bytes of the per-block counters: pack claimed, packed, items claimed, items done */
    size_t block_bytes;  /* one whole-K B block in panels */
    size_t colsum_bytes; /* U8S8: its column sums */
    size_t shared_bytes;
} team_shape;

static bool team_possible(const pt_gemm_plan *p, int T) {
    return T >= 2 && p->nbatch == 1 && !gemv_path_possible(&p->d) && p->mblocks >= 2 * (int64_t)T;
}

static team_shape team_shape_of(const pt_gemm_plan *p) {
    const int64_t eb = (int64_t)pt_gemm_panel_elem_bytes(p->d.kind);
    team_shape s;
    s.counters = align_bytes((size_t)(4 * p->nblocks) * sizeof(int64_t));
    s.block_bytes = align_bytes((size_t)(k_padded(p) * round_up(p->NC, p->uk->nr) * eb));
    s.colsum_bytes = p->d.kind == PT_GEMM_U8S8 ? align_bytes((size_t)p->NC * 4) : 0;
    s.shared_bytes = s.counters + 2 * (s.block_bytes + s.colsum_bytes);
    return s;
}

static bool is_float_dt(dnnl_data_type_t dt) { return dt == dnnl_f32 || dt == dnnl_bf16 || dt == dnnl_f16; }
static bool is_4bit(dnnl_data_type_t dt) { return dt == dnnl_s4 || dt == dnnl_u4; }
static bool is_int_weight(dnnl_data_type_t dt) { return dt == dnnl_s8 || dt == dnnl_u8 || is_4bit(dt); }

/* What the engine takes; anything else is dnnl_unimplemented. */
static bool desc_supported(const pt_gemm_desc *d, const pt_gemm_ukernel *uk) {
    if ((unsigned)d->kind >= PT_GEMM_KINDS || uk->kind != d->kind) return false;
    if (d->M < 1 || d->N < 1 || d->K < 1 || d->nbd < 0 || d->nbd > PT_GEMM_MAX_BATCH) return false;
    if (d->a.dq.on) return false;
    if (d->b.dq.on && d->b.dq.round_dt != dnnl_data_type_undef && d->b.dq.round_dt != dnnl_f32) return false;
    if (d->kind == PT_GEMM_U8S8) {
        if ((d->a.dt != dnnl_u8 && d->a.dt != dnnl_s8) || d->b.dt != dnnl_s8 || d->b.dq.on) return false;
    } else {
        if (!is_float_dt(d->a.dt)) return false;
        if (!is_float_dt(d->b.dt) && !is_int_weight(d->b.dt)) return false;
        if (is_float_dt(d->b.dt) && d->b.dq.on) return false;
    }
    bool b_batched = false;
    for (int i = 0; i < d->nbd; ++i) {
        if (d->bdims[i] < 1) return false;
        if (d->bdims[i] > 1 && d->b_bs[i] != 0) b_batched = true;
        /* 4-bit B is addressed per batch item by a byte pointer. */
        if (is_4bit(d->b.dt) && d->bdims[i] > 1 && d->b_bs[i] % 2 != 0) return false;
    }
    /* Constant B is packed once for all batch items. */
    if (d->b_constant && b_batched) return false;
    return pt_cpu_row_usable(uk->level, uk->features, pt_isa());
}

pt_status pt_gemm_plan_init_with(pt_gemm_plan *p, const pt_gemm_desc *d, int nthr, const pt_gemm_ukernel *uk) {
    if (!p || !d || !uk) return dnnl_invalid_arguments;
    if (!desc_supported(d, uk)) return dnnl_unimplemented;
    memset(p, 0, sizeof *p);
    p->d = *d;
    p->uk = uk;
    p->nthr = nthr < 1 ? 1 : nthr;
    p->nbatch = 1;
    for (int i = 0; i < d->nbd; ++i) p->nbatch *= d->bdims[i];
    choose_blocks(p);
    /* Dual runs: only where B is packed per chunk (run_item_b_runs,
     * run_item_b_in_kernel), which sweep both B against each A block. */
    if (d->dual && (d->kind == PT_GEMM_U8S8 || d->b_constant || p->nbatch != 1 || gemv_path_possible(d) ||
                    !b_per_chunk(p)))
        return dnnl_unimplemented;
    size_t bytes = layout_of(p).total;
    if (gemv_path_possible(d) && gemv_thread_bytes(p) > bytes) bytes = gemv_thread_bytes(p);
    if (team_possible(p, useful_threads(p, p->nthr))) p->shared_bytes = team_shape_of(p).shared_bytes;
    p->thread_bytes = align_bytes(bytes);
    const size_t eb = pt_gemm_panel_elem_bytes(d->kind);
    const int64_t Npad = round_up(d->N, uk->nr);
    p->packed_b_bytes = align_bytes((size_t)(k_padded(p) * Npad) * eb);
    if (d->kind == PT_GEMM_U8S8) p->packed_b_bytes += align_bytes((size_t)Npad * 4);
    return dnnl_success;
}

pt_status pt_gemm_plan_init(pt_gemm_plan *p, const pt_gemm_desc *d, int nthr) {
    if (!d) return dnnl_invalid_arguments;
    const pt_gemm_ukernel *uk = pt_gemm_ukernel_default(d->kind);
    if (!uk) return dnnl_unimplemented;
    return pt_gemm_plan_init_with(p, d, nthr, uk);
}

static int run_threads(const pt_gemm_plan *p, int nthr) { return nthr < 1 ? 1 : nthr > p->nthr ? p->nthr : nthr; }

size_t pt_gemm_scratch_bytes(const pt_gemm_plan *p, int nthr) {
    /* Slack to align the caller's pointer to 64 bytes. */
    return p->thread_bytes * (size_t)run_threads(p, nthr) + p->shared_bytes + ALIGN_BYTES;
}

/* ---- run ----------------------------------------------------------------------- */

/* Element offsets of A and B for batch item b (last batch dim fastest). */
static void batch_offsets(const pt_gemm_desc *d, int64_t b, int64_t *a_off, int64_t *b_off) {
    *a_off = 0, *b_off = 0;
    for (int i = d->nbd - 1; i >= 0; --i) {
        int64_t idx = b % d->bdims[i];
        b /= d->bdims[i];
        *a_off += idx * d->a_bs[i], *b_off += idx * d->b_bs[i];
    }
}

static const void *elem_ptr(const void *base, dnnl_data_type_t dt, int64_t off) {
    return (const char *)base + off * pt_dt_bits(dt) / 8;
}

/* Packed B of one NC block: strip j holds columns n0 + j*NR.. for the whole
 * K, at base + (strip0 + j) * strip_bytes. */
typedef struct {
    const char *base;
    int64_t strip0;
    const int32_t *colsum; /* U8S8: Σ_k per column of the block */
} packed_b_view;

/* Per-thread state of the packed path. */
typedef struct {
    const pt_gemm_plan *p;
    const pt_gemm_args *args;
    char *scratch; /* this thread's */
    thread_layout lay;
    int tid;
    bool b_cached;
    int64_t cached_b_off, cached_n0; /* what the B scratch holds */
    int64_t next_item;               /* the item this thread likely runs next, or -1 */
} worker;

static packed_b_view b_block(worker *w, int64_t b_off, int64_t n0, int64_t nlen) {
    const pt_gemm_plan *p = w->p;
    const pt_gemm_desc *d = &p->d;
    packed_b_view v;
    if (w->args->b_packed) {
        const int64_t Npad = round_up(d->N, p->uk->nr);
        size_t panels = align_bytes((size_t)(k_padded(p) * Npad) * pt_gemm_panel_elem_bytes(d->kind));
        v.base = w->args->b_packed;
        v.strip0 = n0 / p->uk->nr;
        v.colsum = d->kind == PT_GEMM_U8S8 ? (const int32_t *)(v.base + panels) + n0 : NULL;
        return v;
    }
    char *panels = w->scratch + w->lay.b;
    int32_t *colsum = d->kind == PT_GEMM_U8S8 ? (int32_t *)(w->scratch + w->lay.colsum) : NULL;
    if (!w->b_cached || w->cached_b_off != b_off || w->cached_n0 != n0) {
        pt_gemm_pack_panels(p->uk, true, &d->b, elem_ptr(w->args->b, d->b.dt, b_off), w->args->b_scales,
                            w->args->b_zps, n0, nlen, 0, d->K, panels, colsum);
        w->b_cached = true, w->cached_b_off = b_off, w->cached_n0 = n0;
    }
    v.base = panels, v.strip0 = 0, v.colsum = colsum;
    return v;
}

/* U8S8: the s32 block becomes a_scale * b_scale(n) * Σ (a - za)(b - zb).
 * |c| and |za·colsum| are at most K·255·128 and |K·za·zb - zb·rowsum| at
 * most 2·K·255·255, so for K <= 10000 every partial sum fits int32 and the
 * correction runs in int32 over whole rows (vectorised); larger K keeps the
 * int64 form.  Both give the same exact integer, then the same rounding.
 * Columns go in pieces of PT_GEMM_NC_MAX so that each column's scale is
 * looked up once. */
void pt_gemm_u8s8_dequantize(const pt_gemm_desc *d, float a_scale, const float *b_scales, void *cblk, int64_t ld,
                             const int32_t *rowsum, const int32_t *colsum, int64_t n0, int64_t mlen, int64_t nlen) {
    const int64_t za = d->q.a_zp + (d->a.dt == dnnl_s8 ? 128 : 0), zb = d->q.b_zp_on ? d->q.b_zp : 0;
    const bool fast = pt_isa() >= PT_ISA_AVX512;
    const bool narrow = d->K <= 10000 && za >= 0 && za <= 255 && zb >= -255 && zb <= 255;
    float scale[PT_GEMM_NC_MAX];
    int32_t colterm[PT_GEMM_NC_MAX];
    for (int64_t j0 = 0; j0 < nlen; j0 += PT_GEMM_NC_MAX) {
        const int64_t jl = min64(PT_GEMM_NC_MAX, nlen - j0);
        const int32_t *cs = colsum ? colsum + j0 : NULL;
        for (int64_t j = 0; j < jl; ++j) {
            scale[j] = a_scale * (b_scales ? b_scales[d->q.b_scale_per_n ? n0 + j0 + j : 0] : 1.0f);
            if (narrow) colterm[j] = cs ? (int32_t)(za * cs[j]) : 0;
        }
        for (int64_t i = 0; i < mlen; ++i) {
            int32_t *ci = (int32_t *)cblk + i * ld + j0;
            float *fi = (float *)cblk + i * ld + j0;
            const int64_t row_term = d->K * za * zb - zb * (int64_t)rowsum[i];
            if (narrow && fast) {
                pt_gemm_u8s8_row_to_f32_avx512(ci, jl, colterm, (int32_t)row_term, scale);
            } else if (narrow) {
                /* In place: lane j is read before it is written. */
                const int32_t rt = (int32_t)row_term;
                for (int64_t j = 0; j < jl; ++j) {
                    float v = (float)(ci[j] - colterm[j] + rt) * scale[j];
                    memcpy(&ci[j], &v, sizeof v);
                }
            } else {
                for (int64_t j = 0; j < jl; ++j) {
                    int64_t exact = (int64_t)ci[j] - (cs ? za * cs[j] : 0) + row_term;
                    fi[j] = (float)exact * scale[j];
                }
            }
        }
    }
}

/* A block's panels just packed, transformed for rows that prefer their own
 * A layout (a_prep); sweep then calls run_prepped. */
static void prep_a(const pt_gemm_ukernel *uk, char *abuf, int64_t a_strip, int64_t mlen, int64_t kcp) {
    if (!uk->a_prep) return;
    for (int64_t i = 0; i * uk->mr < mlen; ++i) uk->a_prep(abuf + i * a_strip, kcp);
}

/* The microkernel over an mlen x nlen block for one chunk (A packed, then
 * prep_a): B strips (b_strip bytes apart) outer, so each stays in L1 for
 * all A strips.  With `pf`, the prefetching form fetches its lines on the
 * way. */
static void sweep(const pt_gemm_ukernel *uk, int64_t kcp, const char *abuf, int64_t a_strip, const char *bp,
                  int64_t b_strip, char *cblk, int64_t ldc, int64_t mlen, int64_t nlen, int accumulate,
                  pt_gemm_prefetch *pf) {
    const pt_gemm_ukr_fn run = uk->a_prep ? uk->run_prepped : uk->run;
    for (int64_t j = 0; j * uk->nr < nlen; ++j) {
        const int nr = (int)min64(uk->nr, nlen - j * uk->nr);
        for (int64_t i = 0; i * uk->mr < mlen; ++i) {
            const int mr = (int)min64(uk->mr, mlen - i * uk->mr);
            char *cp = cblk + (size_t)((i * uk->mr * ldc + j * uk->nr) * 4);
            if (pf) uk->run_pf(kcp, abuf + i * a_strip, bp + j * b_strip, cp, ldc, mr, nr, accumulate, pf);
            else run(kcp, abuf + i * a_strip, bp + j * b_strip, cp, ldc, mr, nr, accumulate);
        }
    }
}

/* The source lines of B rows [r0, r0 + rows) by k [k0, k0 + kc) when they
 * form rows of contiguous bytes (B with rows or k contiguous); false for
 * other strides. */
static bool b_source_lines(const pt_gemm_operand *o, const void *data, int64_t r0, int64_t rows, int64_t k0,
                           int64_t kc, pt_gemm_prefetch *pf) {
    const int64_t bits = (int64_t)pt_dt_bits(o->dt);
    int64_t outer, stride, width;
    if (o->s_row == 1) outer = kc, stride = o->s_k, width = rows;
    else if (o->s_k == 1) outer = rows, stride = o->s_row, width = kc;
    else return false;
    if (stride * bits % 8 != 0 || (r0 * o->s_row + k0 * o->s_k) * bits % 8 != 0) return false;
    const uintptr_t first = (uintptr_t)data + (uintptr_t)((r0 * o->s_row + k0 * o->s_k) * bits / 8);
    /* From the line holding the first byte to the one holding the last. */
    const int64_t lead = (int64_t)(first & 63);
    *pf = (pt_gemm_prefetch){first - (uintptr_t)lead, outer, stride * bits / 8,
                             ceil_div(lead + ceil_div(width * bits, 8), 64), 0, 0};
    return true;
}

/* The source lines of the first chunk of the item this thread likely runs
 * next (its first `cols` columns, first KC rows). */
static bool next_item_lines(const worker *w, int64_t cols, pt_gemm_prefetch *pf) {
    const pt_gemm_plan *p = w->p;
    const pt_gemm_desc *d = &p->d;
    const int64_t it = w->next_item, nb = (it / p->mblocks) % p->nblocks, b = it / p->mblocks / p->nblocks;
    const int64_t n0 = nb * p->NC;
    int64_t a_off, b_off;
    batch_offsets(d, b, &a_off, &b_off);
    return b_source_lines(&d->b, elem_ptr(w->args->b, d->b.dt, b_off), n0, min64(cols, min64(p->NC, d->N - n0)), 0,
                          min64(p->KC, d->K), pf);
}

/* B operand o of a run (o = 1: a dual run's second), batch item 0 (dual
 * runs have no batch). */
static const void *b_data(const pt_gemm_args *args, int o) { return o ? args->b2 : args->b; }
static const void *b_scales_of(const pt_gemm_args *args, int o) { return o ? args->b2_scales : args->b_scales; }
static const void *b_zps_of(const pt_gemm_args *args, int o) { return o ? args->b2_zps : args->b_zps; }

/* The tile's hand-off: one C block, or a dual run's two. */
static void finish_tile(const worker *w, int64_t b, int64_t m0, int64_t n0, int64_t mlen, int64_t nlen, char *cblk,
                        int64_t ldc) {
    if (w->p->d.dual)
        w->args->epilogue2(w->args->epilogue_ctx, b, m0, n0, mlen, nlen, (float *)cblk,
                           (float *)(w->scratch + w->lay.c2), ldc, w->tid);
    else
        w->args->epilogue(w->args->epilogue_ctx, b, m0, n0, mlen, nlen, (float *)cblk, ldc, w->tid);
}

/* An item whose B block no other item reuses (one M block, and no batch
 * items sharing it): B is packed per KC chunk in column runs that stay in
 * L2 next to the chunk's A block (whole-K panels of a skinny product,
 * 4 MiB, went out to memory and came back); each run's C is finished and
 * handed to the epilogue while in L2. */
static void run_item_b_runs(worker *w, int64_t b, int64_t m0, int64_t n0, int64_t mlen, int64_t nlen) {
    const pt_gemm_plan *p = w->p;
    const pt_gemm_desc *d = &p->d;
    const pt_gemm_ukernel *uk = p->uk;
    const int64_t eb = (int64_t)pt_gemm_panel_elem_bytes(d->kind);
    const int64_t run = min64(chunk_cols(p), p->NC), ldc = round_up(run, 16) + 16;
    int64_t a_off, b_off;
    batch_offsets(d, b, &a_off, &b_off);
    const void *a = elem_ptr(w->args->a, d->a.dt, a_off), *bsrc = elem_ptr(w->args->b, d->b.dt, b_off);
    char *abuf = w->scratch + w->lay.a, *bbuf = w->scratch + w->lay.b, *cblk = w->scratch + w->lay.c;
    int32_t *rowsum = NULL, *rowsum_chunk = NULL, *colsum = NULL;
    int32_t colsum_chunk[PT_GEMM_NC_MAX];
    if (d->kind == PT_GEMM_U8S8) {
        rowsum = (int32_t *)(w->scratch + w->lay.rowsum), rowsum_chunk = (int32_t *)(w->scratch + w->lay.rowsum_chunk);
        colsum = (int32_t *)(w->scratch + w->lay.colsum);
    }
    w->b_cached = false;
    const int nb_ops = d->dual ? 2 : 1;
    for (int64_t j0 = 0; j0 < nlen; j0 += run) {
        const int64_t jl = min64(run, nlen - j0);
        if (colsum) memset(colsum, 0, sizeof(int32_t) * (size_t)jl), memset(rowsum, 0, sizeof(int32_t) * (size_t)mlen);
        for (int64_t k0 = 0; k0 < d->K; k0 += p->KC) {
            const int64_t kc = min64(p->KC, d->K - k0), kcp = pt_gemm_kc_padded(uk, kc);
            pt_gemm_pack_panels(uk, false, &d->a, a, NULL, NULL, m0, mlen, k0, kc, abuf, rowsum_chunk);
            prep_a(uk, abuf, uk->mr * kcp * eb, mlen, kcp);
            if (rowsum)
                for (int64_t i = 0; i < mlen; ++i) rowsum[i] += rowsum_chunk[i];
            for (int o = 0; o < nb_ops; ++o) {
                const void *src = o ? b_data(w->args, 1) : bsrc;
                pt_gemm_pack_panels(uk, true, &d->b, src, b_scales_of(w->args, o), b_zps_of(w->args, o), n0 + j0, jl,
                                    k0, kc, bbuf, colsum ? colsum_chunk : NULL);
                if (colsum)
                    for (int64_t j = 0; j < jl; ++j) colsum[j] += colsum_chunk[j];
                /* While this chunk computes, the microkernel fetches the
                 * source of the next one (a dual run's second B, this
                 * run's next k rows, or the next run's first), so that
                 * packing it reads from cache: packing from memory is
                 * latency-bound (one core packed cold B at 18 GB/s against
                 * 31 GB/s of plain streaming), and it does not overlap the
                 * microkernel otherwise. */
                int64_t nk0 = k0 + p->KC, nj0 = j0;
                if (nk0 >= d->K) nk0 = 0, nj0 = j0 + run;
                pt_gemm_prefetch pf;
                bool fetch = false;
                /* Not for the AMX row: with the stream, bf16 128x4096x4096
                 * packed per chunk ran 3.6 -> 3.7 ms (B in cache). */
                if (uk->run_pf && !uk->a_prep) {
                    if (o + 1 < nb_ops)
                        fetch = b_source_lines(&d->b, b_data(w->args, o + 1), n0 + j0, jl, k0, kc, &pf);
                    else if (nj0 < nlen)
                        fetch = b_source_lines(&d->b, bsrc, n0 + nj0, min64(run, nlen - nj0), nk0,
                                               min64(p->KC, d->K - nk0), &pf);
                    else if (w->next_item >= 0)
                        fetch = next_item_lines(w, run, &pf);
                }
                sweep(uk, kcp, abuf, uk->mr * kcp * eb, bbuf, uk->nr * kcp * eb, o ? w->scratch + w->lay.c2 : cblk,
                      ldc, mlen, jl, k0 > 0, fetch ? &pf : NULL);
            }
        }
        if (colsum)
            pt_gemm_u8s8_dequantize(d, w->args->a_scale, w->args->b_scales, cblk, ldc, rowsum, colsum, n0 + j0,
                                    mlen, jl);
        finish_tile(w, b, m0, n0 + j0, mlen, jl, cblk, ldc);
    }
}

/* An item whose B the microkernel packs (b_packed_in_kernel): per column
 * run (its C block in L2) and KC chunk the A block is packed, then each B
 * strip is packed into one panel, which stays in L1, by the call of the
 * first A strip (run_packing) and read by the others (a row with
 * packing_strips 2 packs a pair of strips in the first strip's call).  While a strip
 * computes, a row with a prefetching form fetches the source of the next
 * one (of this chunk, else the next chunk's, run's or item's first): a
 * strip is 2 lines of KC rows a page or more apart, so without it the
 * packing call waits on memory.  Rows with a_prep get A so prepared.  Sums
 * run over the same chunks in the same order as with B packed ahead, so
 * results do not change; U8S8 gathers A's row sums as it packs A and B's
 * column sums from the packing calls, and turns its s32 block to f32 per
 * run as run_item_b_runs does. */
static void run_item_b_in_kernel(worker *w, int64_t b, int64_t m0, int64_t n0, int64_t mlen, int64_t nlen) {
    const pt_gemm_plan *p = w->p;
    const pt_gemm_desc *d = &p->d;
    const pt_gemm_ukernel *uk = p->uk;
    const int64_t nr_max = uk->nr, run = min64(kernel_run_cols(p), p->NC), ldc = round_up(run, 16) + 16;
    const int64_t eb = (int64_t)pt_gemm_panel_elem_bytes(d->kind); /* B's own type too: f32, bf16 or s8 */
    const pt_gemm_ukr_fn run_a = uk->a_prep ? uk->run_prepped : uk->run;
    const int64_t na = (mlen + uk->mr - 1) / uk->mr; /* A strips */
    /* Pairs of strips a packing call, except in dual runs (both B share the
     * panel) and for BF16 items of more than two A strips: a bf16 strip's k
     * row is a whole line, and pairs paid only where two A strips share
     * the packing call (64 rows, 64x4096x4096 bench_matmul: 2.4-2.6 ->
     * 1.73-1.80 ms; 96, 128 and 160 rows 3-10 % slower).  F32 strips are two
     * lines, and pairs of them measured 2-3 % faster at 128x4096x4096 in
     * bench_vs_onednn (17.0-17.7 -> 16.5-17.0 ms), 384x1024x4096 2-8 %. */
    const int ps = d->dual || (d->kind == PT_GEMM_BF16 && na > 2) ? 1 : packing_strips(uk);
    int64_t a_off, b_off;
    batch_offsets(d, b, &a_off, &b_off);
    const void *a = elem_ptr(w->args->a, d->a.dt, a_off);
    const char *bsrc = elem_ptr(w->args->b, d->b.dt, b_off);
    char *abuf = w->scratch + w->lay.a, *panel = w->scratch + w->lay.b, *cblk = w->scratch + w->lay.c;
    int32_t *rowsum = NULL, *rowsum_chunk = NULL, *colsum = NULL, strip_sums[STRIP_SUMS_MAX];
    if (d->kind == PT_GEMM_U8S8) {
        rowsum = (int32_t *)(w->scratch + w->lay.rowsum), rowsum_chunk = (int32_t *)(w->scratch + w->lay.rowsum_chunk);
        colsum = (int32_t *)(w->scratch + w->lay.colsum);
    }
    const int nb_ops = d->dual ? 2 : 1;
    w->b_cached = false;
    for (int64_t j0 = 0; j0 < nlen; j0 += run) {
        const int64_t jl = min64(run, nlen - j0);
        if (colsum) memset(colsum, 0, sizeof(int32_t) * (size_t)jl), memset(rowsum, 0, sizeof(int32_t) * (size_t)mlen);
        for (int64_t k0 = 0; k0 < d->K; k0 += p->KC) {
            const int64_t kc = min64(p->KC, d->K - k0), kcp = pt_gemm_kc_padded(uk, kc), a_strip = uk->mr * kcp * eb;
            pt_gemm_pack_panels(uk, false, &d->a, a, NULL, NULL, m0, mlen, k0, kc, abuf, rowsum_chunk);
            prep_a(uk, abuf, a_strip, mlen, kcp);
            if (rowsum)
                for (int64_t i = 0; i < mlen; ++i) rowsum[i] += rowsum_chunk[i];
            pt_gemm_prefetch pf;
            bool fetch = false;
            for (int64_t c0 = 0; c0 < jl; c0 += nr_max)
                for (int o = 0; o < nb_ops; ++o) {
                    const int nr = (int)min64(nr_max, jl - c0);
                    const char *src = o ? (const char *)b_data(w->args, 1) : bsrc;
                    /* The strip's place in its packing call's group, and
                     * its panel. */
                    const int64_t slot = (c0 / nr_max) % ps, width = min64(ps * nr_max, jl - c0);
                    char *pp = panel + slot * kcp * nr_max * eb;
                    if (slot == 0) {
                        /* The next packing call's source: a dual run's
                         * second B's, this chunk's next group, or the next
                         * chunk's, run's or item's first; the stream goes
                         * on across the group's strips. */
                        int64_t nc0 = c0 + ps * nr_max, nk0 = k0, nj0 = j0;
                        if (nc0 >= jl) nc0 = 0, nk0 = k0 + p->KC;
                        if (nk0 >= d->K) nk0 = 0, nj0 = j0 + run;
                        fetch = false;
                        if (uk->run_pf) {
                            if (o + 1 < nb_ops)
                                fetch = b_source_lines(&d->b, b_data(w->args, o + 1), n0 + j0 + c0, nr, k0, kc, &pf);
                            else if (nj0 < nlen)
                                fetch = b_source_lines(&d->b, bsrc, n0 + nj0 + nc0,
                                                       min64(ps * nr_max, nlen - nj0 - nc0), nk0,
                                                       min64(p->KC, d->K - nk0), &pf);
                            else
                                fetch = w->next_item >= 0 && next_item_lines(w, ps * nr_max, &pf);
                        }
                    }
                    char *c_o = o ? w->scratch + w->lay.c2 : cblk;
                    for (int64_t i = 0; i * uk->mr < mlen; ++i) {
                        const int mr = (int)min64(uk->mr, mlen - i * uk->mr);
                        char *cp = c_o + (size_t)((i * uk->mr * ldc + c0) * 4);
                        if (i == 0 && slot == 0)
                            uk->run_packing(kc, abuf, src + (n0 + j0 + c0 + k0 * d->b.s_k) * eb, d->b.s_k, (int)width,
                                            pp, colsum ? strip_sums : NULL, cp, ldc, mr, nr, k0 > 0,
                                            fetch ? &pf : NULL);
                        else if (fetch)
                            uk->run_pf(kcp, abuf + i * a_strip, pp, cp, ldc, mr, nr, k0 > 0, &pf);
                        else
                            run_a(kcp, abuf + i * a_strip, pp, cp, ldc, mr, nr, k0 > 0);
                    }
                    if (colsum && slot == 0)
                        for (int64_t j = 0; j < width; ++j) colsum[c0 + j] += strip_sums[j];
                }
        }
        if (colsum)
            pt_gemm_u8s8_dequantize(d, w->args->a_scale, w->args->b_scales, cblk, ldc, rowsum, colsum, n0 + j0,
                                    mlen, jl);
        finish_tile(w, b, m0, n0 + j0, mlen, jl, cblk, ldc);
    }
}

/* One M x NC block against whole-K B strips `bv`: per KC chunk the A block
 * is packed and swept against the chunk's rows of every strip. */
static void run_block(worker *w, const packed_b_view *bv, int64_t b, int64_t m0, int64_t n0, int64_t mlen,
                      int64_t nlen) {
    const pt_gemm_plan *p = w->p;
    const pt_gemm_desc *d = &p->d;
    const pt_gemm_ukernel *uk = p->uk;
    const int64_t eb = (int64_t)pt_gemm_panel_elem_bytes(d->kind);
    const int64_t Kp = k_padded(p), b_strip_bytes = uk->nr * Kp * eb;
    int64_t a_off, b_off;
    batch_offsets(d, b, &a_off, &b_off);
    const void *a = elem_ptr(w->args->a, d->a.dt, a_off);
    char *abuf = w->scratch + w->lay.a, *cblk = w->scratch + w->lay.c;
    int64_t ldc = c_ld(p);
    /* Straight into the caller's output where it takes the products as
     * they are: no copy of the block through the epilogue. */
    float *direct = w->args->c_direct && d->kind != PT_GEMM_U8S8 && !d->dual
                        ? w->args->c_direct(w->args->epilogue_ctx, b, m0, n0, &ldc)
                        : NULL;
    if (direct) cblk = (char *)direct;
    else ldc = c_ld(p);
    int32_t *rowsum = NULL, *rowsum_chunk = NULL;
    if (d->kind == PT_GEMM_U8S8) {
        rowsum = (int32_t *)(w->scratch + w->lay.rowsum), rowsum_chunk = (int32_t *)(w->scratch + w->lay.rowsum_chunk);
        memset(rowsum, 0, sizeof(int32_t) * (size_t)mlen);
    }
    for (int64_t k0 = 0; k0 < d->K; k0 += p->KC) {
        const int64_t kc = min64(p->KC, d->K - k0), kcp = pt_gemm_kc_padded(uk, kc);
        pt_gemm_pack_panels(uk, false, &d->a, a, NULL, NULL, m0, mlen, k0, kc, abuf, rowsum_chunk);
        prep_a(uk, abuf, uk->mr * kcp * eb, mlen, kcp);
        if (rowsum)
            for (int64_t i = 0; i < mlen; ++i) rowsum[i] += rowsum_chunk[i];
        sweep(uk, kcp, abuf, uk->mr * kcp * eb, bv->base + bv->strip0 * b_strip_bytes + k0 * uk->nr * eb,
              b_strip_bytes, cblk, ldc, mlen, nlen, k0 > 0, NULL);
    }
    if (d->kind == PT_GEMM_U8S8)
        pt_gemm_u8s8_dequantize(d, w->args->a_scale, w->args->b_scales, cblk, ldc, rowsum, bv->colsum, n0, mlen,
                                nlen);
    if (!direct) w->args->epilogue(w->args->epilogue_ctx, b, m0, n0, mlen, nlen, (float *)cblk, ldc, w->tid);
}

/* Items with B packed for the whole K of the block (b_block: kept while
 * consecutive items share it, or prepacked) go through run_block. */
static void run_item(worker *w, int64_t item) {
    const pt_gemm_plan *p = w->p;
    const pt_gemm_desc *d = &p->d;
    const int64_t mb = item % p->mblocks, nb = (item / p->mblocks) % p->nblocks, b = item / p->mblocks / p->nblocks;
    const int64_t m0 = mb * p->MC, n0 = nb * p->NC;
    const int64_t mlen = min64(p->MC, d->M - m0), nlen = min64(p->NC, d->N - n0);
    if (!w->args->b_packed && b_per_chunk(p)) {
        if (b_packed_in_kernel(p)) run_item_b_in_kernel(w, b, m0, n0, mlen, nlen);
        else run_item_b_runs(w, b, m0, n0, mlen, nlen);
        return;
    }
    int64_t a_off, b_off;
    batch_offsets(d, b, &a_off, &b_off);
    const packed_b_view bv = b_block(w, b_off, n0, nlen);
    run_block(w, &bv, b, m0, n0, mlen, nlen);
}

/* Items: in slices with stealing (runtime/share.h), so that a B block is
 * packed by one thread and consecutive items reuse it, and a thread that
 * loses its core for a while holds nobody at the barrier.  Every item is
 * still computed whole by one thread, so results do not depend on who ran
 * it. */
static void run_packed_slice(const pt_gemm_plan *p, const pt_gemm_args *args, char *scratch, int tid, int nt,
                             pt_share_slice *slices) {
    const int64_t items = p->nbatch * p->mblocks * p->nblocks;
    worker w = {.p = p, .args = args, .scratch = scratch + (size_t)tid * p->thread_bytes, .lay = layout_of(p),
                .tid = tid, .next_item = -1};
    if (!slices) {
        const int64_t end = items * (tid + 1) / nt;
        for (int64_t it = items * tid / nt; it < end; ++it) {
            w.next_item = it + 1 < end ? it + 1 : -1;
            run_item(&w, it);
        }
        return;
    }
    int64_t it;
    while (pt_share_take(&slices[tid], true, &it)) {
        /* The next item of this slice, unless another thread takes it. */
        const uint64_t range = __atomic_load_n(&slices[tid].range, __ATOMIC_RELAXED);
        w.next_item = range >> 32 < (range & 0xffffffffu) ? (int64_t)(range >> 32) : -1;
        run_item(&w, it);
    }
    w.next_item = -1;
    for (int v = 1; v < nt; ++v) {
        pt_share_slice *victim = &slices[(tid + v) % nt];
        while (pt_share_take(victim, false, &it)) run_item(&w, it);
    }
}

static void spin_until(const int64_t *ctr, int64_t target) {
    for (int spins = 0; __atomic_load_n(ctr, __ATOMIC_ACQUIRE) < target;)
        if (++spins % TEAM_SPINS_PER_YIELD == 0) sched_yield();
}

/* One thread's part of the team path; `shared` holds the counters (zeroed
 * before the team starts) and the two block buffers. */
static void run_team(worker *w, const team_shape *s, char *shared) {
    const pt_gemm_plan *p = w->p;
    const pt_gemm_desc *d = &p->d;
    const pt_gemm_args *args = w->args;
    const pt_gemm_ukernel *uk = p->uk;
    const int64_t nr = uk->nr, strip_bytes = nr * k_padded(p) * (int64_t)pt_gemm_panel_elem_bytes(d->kind);
    int64_t *ctr = (int64_t *)shared;
    for (int64_t nb = 0; nb < p->nblocks; ++nb) {
        int64_t *c = ctr + 4 * nb;
        char *blk = shared + s->counters + (size_t)(nb & 1) * (s->block_bytes + s->colsum_bytes);
        int32_t *colsum = s->colsum_bytes ? (int32_t *)(blk + s->block_bytes) : NULL;
        const int64_t n0 = nb * p->NC, nlen = min64(p->NC, d->N - n0);
        const int64_t units = ceil_div(ceil_div(nlen, nr), TEAM_PACK_STRIPS);
        if (nb >= 2) spin_until(&ctr[4 * (nb - 2) + 3], p->mblocks);
        for (int64_t u; (u = __atomic_fetch_add(&c[0], 1, __ATOMIC_RELAXED)) < units;) {
            const int64_t s0 = u * TEAM_PACK_STRIPS, c0 = s0 * nr, clen = min64(nlen - c0, TEAM_PACK_STRIPS * nr);
            pt_gemm_pack_panels(uk, true, &d->b, args->b, args->b_scales, args->b_zps, n0 + c0, clen, 0, d->K,
                                blk + s0 * strip_bytes, colsum ? colsum + c0 : NULL);
            __atomic_fetch_add(&c[1], 1, __ATOMIC_RELEASE);
        }
        spin_until(&c[1], units);
        const packed_b_view bv = {blk, 0, colsum};
        for (int64_t mb; (mb = __atomic_fetch_add(&c[2], 1, __ATOMIC_RELAXED)) < p->mblocks;) {
            const int64_t m0 = mb * p->MC;
            run_block(w, &bv, 0, m0, n0, min64(p->MC, d->M - m0), nlen);
            __atomic_fetch_add(&c[3], 1, __ATOMIC_RELEASE);
        }
    }
}

/* One small-M unit: straight through the epilogue, or (k split) its
 * partial sums into the slot of its k block. */
static void run_gemv_unit(const pt_gemm_plan *p, const pt_gemm_args *args, const gemv_units *L, char *base,
                          int64_t u, int tid) {
    const pt_gemm_desc *d = &p->d;
    const int64_t per_batch = L->nk * L->ncol, b = u / per_batch, kb = u % per_batch / L->ncol;
    const int64_t n0 = u % L->ncol * L->cols, nlen = min64(L->cols, d->N - n0);
    int64_t a_off, b_off;
    batch_offsets(d, b, &a_off, &b_off);
    const void *a = elem_ptr(args->a, d->a.dt, a_off), *bp = elem_ptr(args->b, d->b.dt, b_off);
    if (L->nk == 1) {
        float *rows = (float *)(base + (size_t)tid * p->thread_bytes + gemv_counter_bytes());
        if (d->kind == PT_GEMM_U8S8)
            pt_gemm_gemv_int_tile(d, a, bp, args->a_scale, args->b_scales, n0, nlen, rows, L->cols,
                                  (char *)rows + gemv_rows_bytes(d, L));
        else
            pt_gemm_gemv_tile(d, a, bp, args->b_scales, args->b_zps, n0, nlen, rows, L->cols);
        args->epilogue(args->epilogue_ctx, b, 0, n0, d->M, nlen, rows, L->cols, tid);
        return;
    }
    float *slot = (float *)(base + gemv_counter_bytes() + gemv_rows_bytes(d, L)) + kb * d->M * L->ldp;
    const int64_t k0 = kb * L->kblock;
    pt_gemm_gemv_tile_k(d, a, bp, args->b_scales, args->b_zps, k0, min64(d->K, k0 + L->kblock), n0, nlen,
                        slot + n0, L->ldp);
}

/* After a k split: piece `piece` of n adds the slots of its columns in
 * k-block order into the first and runs the epilogue on them (thread tid). */
static void reduce_gemv_slots(const pt_gemm_plan *p, const pt_gemm_args *args, const gemv_units *L, char *base,
                              int piece, int n, int tid) {
    const pt_gemm_desc *d = &p->d;
    const int64_t per = round_up(ceil_div(d->N, n), 16), j0 = min64(d->N, per * piece), j1 = min64(d->N, j0 + per);
    if (j1 <= j0) return;
    float *slot0 = (float *)(base + gemv_counter_bytes() + gemv_rows_bytes(d, L));
    for (int64_t m = 0; m < d->M; ++m) {
        float *dst = slot0 + m * L->ldp;
        for (int64_t kb = 1; kb < L->nk; ++kb) {
            const float *src = slot0 + (kb * d->M + m) * L->ldp;
            for (int64_t j = j0; j < j1; ++j) dst[j] += src[j];
        }
    }
    args->epilogue(args->epilogue_ctx, 0, 0, j0, d->M, j1 - j0, slot0 + j0, L->ldp, tid);
}

/* A small-M run: units go to whichever thread asks next, then (k split)
 * the reduction's pieces likewise; both counters sit in thread 0's scratch
 * (the first line) and start at 0. */
typedef struct {
    const pt_gemm_plan *p;
    const pt_gemm_args *args;
    const gemv_units *L;
    char *base;
    int64_t units;
    int pieces; /* of the reduction */
} gemv_job;

static void gemv_units_body(void *v, int tid) {
    const gemv_job *j = v;
    for (int64_t u; (u = __atomic_fetch_add((int64_t *)j->base, 1, __ATOMIC_RELAXED)) < j->units;)
        run_gemv_unit(j->p, j->args, j->L, j->base, u, tid);
}

static void gemv_reduce_body(void *v, int tid) {
    const gemv_job *j = v;
    for (int64_t r; (r = __atomic_fetch_add((int64_t *)j->base + 1, 1, __ATOMIC_RELAXED)) < j->pieces;)
        reduce_gemv_slots(j->p, j->args, j->L, j->base, (int)r, j->pieces, tid);
}

/* The item or team path, one thread's part (tid of nt planned).  Team
 * path: any team size claims all the work.  Item path: with slices, every
 * planned slice is drained by whoever comes (the helpers of share.h may not
 * all come); without, the team of nt splits the items. */
typedef struct {
    const pt_gemm_plan *p;
    const pt_gemm_args *args;
    char *base, *shared;
    int nt;
    pt_share_slice *slices;
    const team_shape *ts; /* NULL: the item path */
} items_job;

static void items_body(void *v, int tid) {
    const items_job *j = v;
    if (j->ts) {
        worker w = {.p = j->p, .args = j->args, .scratch = j->base + (size_t)tid * j->p->thread_bytes,
                    .lay = layout_of(j->p), .tid = tid, .next_item = -1};
        run_team(&w, j->ts, j->shared);
    } else {
        /* Static slices run only alone or in an OpenMP team, whose size
         * may be smaller than asked (1 inside a caller's own region). */
        const int team = j->slices ? j->nt : j->nt > 1 ? omp_get_num_threads() : 1;
        run_packed_slice(j->p, j->args, j->base, tid, team, j->slices);
    }
}

pt_status pt_gemm_run(const pt_gemm_plan *p, const pt_gemm_args *args, void *scratch, int nthr) {
    if (!p || !args || !args->a || (!args->b && !args->b_packed) || !scratch) return dnnl_invalid_arguments;
    const pt_gemm_desc *d = &p->d;
    if (d->dual ? !args->epilogue2 || !args->b || !args->b2 || args->b_packed : !args->epilogue)
        return dnnl_invalid_arguments;
    if (args->b_packed)
        for (int i = 0; i < d->nbd; ++i)
            if (d->bdims[i] > 1 && d->b_bs[i] != 0) return dnnl_invalid_arguments;
    char *base = (char *)(((uintptr_t)scratch + ALIGN_BYTES - 1) & ~(uintptr_t)(ALIGN_BYTES - 1));
    const int T = useful_threads(p, run_threads(p, nthr));
    if (!args->b_packed && gemv_path_possible(d)) {
        const gemv_units L = gemv_layout(p);
        const int64_t units = p->nbatch * L.nk * L.ncol;
        const int nt = (int)min64(T, units);
        const bool omp = omp_team(p, nt);
        gemv_job job = {p, args, &L, base, units, nt};
        ((int64_t *)base)[0] = ((int64_t *)base)[1] = 0;
        pt_share_team_run(nt, omp, gemv_units_body, &job);
        if (L.nk > 1) pt_share_team_run(nt, omp, gemv_reduce_body, &job);
        return dnnl_success;
    }
    const int64_t items = p->nbatch * p->mblocks * p->nblocks;
    int nt = (int)min64(T, items);
    /* Stealing needs the item indices in 32 bits; beyond, static slices,
     * which only an OpenMP team (all threads come) may run. */
    pt_share_slice slice_store[MAX_STEAL_THREADS], *slices = NULL;
    if (nt > 1 && items < (INT64_C(1) << 31) && nt <= MAX_STEAL_THREADS) {
        slices = slice_store;
        pt_share_slices_init(slices, items, nt);
    }
    const bool team = nt > 1 && !args->b_packed && p->shared_bytes > 0 && team_possible(p, nt);
    const bool omp = omp_team(p, nt) || (!team && !slices);
    const team_shape ts = team ? team_shape_of(p) : (team_shape){0};
    char *shared = base + p->thread_bytes * (size_t)run_threads(p, nthr);
    if (team) memset(shared, 0, ts.counters);
    items_job job = {p, args, base, shared, nt, slices, team ? &ts : NULL};
    pt_share_team_run(nt, omp, items_body, &job);
    return dnnl_success;
}

void pt_gemm_pack_b_all(const pt_gemm_plan *p, const void *b, const void *b_scales, const void *b_zps, void *dst) {
    const pt_gemm_desc *d = &p->d;
    const int64_t Npad = round_up(d->N, p->uk->nr);
    const size_t panels = align_bytes((size_t)(k_padded(p) * Npad) * pt_gemm_panel_elem_bytes(d->kind));
    int32_t *colsum = d->kind == PT_GEMM_U8S8 ? (int32_t *)((char *)dst + panels) : NULL;
    if (colsum) memset(colsum, 0, sizeof(int32_t) * (size_t)Npad);
    pt_gemm_pack_panels(p->uk, true, &d->b, b, b_scales, b_zps, 0, d->N, 0, d->K, dst, colsum);
}
