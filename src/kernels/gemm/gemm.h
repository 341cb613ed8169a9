/* The GEMM engine: one BLIS-style framework under every MatMul-like
 * partition.
 *
 *   C[b][m][n] = Σ_k A[b][m][k] · B[b][k][n]      (then an epilogue per tile)
 *
 * Three layers, each pure (no allocation, no IR):
 *   1. microkernels (pt_gemm_ukernel rows): an MR x NR register tile over a
 *      K chunk of packed panels; one row per compute kind and ISA level,
 *      chosen at start-up from runtime/cpu.h (gemm_registry.c);
 *   2. packing (gemm_pack*.c): strided operands of any supported type into
 *      panels of the compute type, dequantising integer weights (per-tensor,
 *      per-column or per-group scales and zero points) on the way;
 *   3. the driver (gemm_driver.c): cache blocking (MC / NC / KC from the
 *      CPU's cache sizes), 2-D thread split over (batch, M blocks, N
 *      blocks), tails, the s32 -> f32 step of the integer kind, and the
 *      epilogue callback on each finished tile while it is in cache.
 * Plans are made at compile time (pt_gemm_plan_init); pt_gemm_run only
 * computes, in caller-provided scratch.
 *
 * Compute kinds and their panels (kg = k group, the K elements a microkernel
 * consumes per lane per step):
 *   PT_GEMM_F32   A, B f32,            kg 1, C f32
 *   PT_GEMM_BF16  A, B bf16 (uint16),  kg 2, C f32   (vdpbf16ps pairs)
 *   PT_GEMM_U8S8  A u8, B s8,          kg 4, C s32   (vpdpbusd quads)
 * A panel (one strip of MR rows):    [kc/kg][MR][kg] elements
 * B panel (one strip of NR columns): [kc/kg][NR][kg] elements
 * kc is rounded up to a multiple of kg; padding rows, columns and k
 * positions are zero.  Packed data is 64-byte aligned. */
#ifndef PARTITA_KERNELS_GEMM_GEMM_H
#define PARTITA_KERNELS_GEMM_GEMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/logical_tensor.h"
#include "ir/status.h"
#include "runtime/cpu.h"

typedef enum { PT_GEMM_F32 = 0, PT_GEMM_BF16 = 1, PT_GEMM_U8S8 = 2, PT_GEMM_KINDS } pt_gemm_kind;

/* ---- 1. microkernels ------------------------------------------------------- */

/* C[i][j] = (accumulate ? C[i][j] : 0) + Σ_k A[k][i] · B[k][j] for i < mr,
 * j < nr (mr <= MR, nr <= NR: tails write only that corner).  `kc` is a
 * positive multiple of kg; `a` and `b` are one A and one B panel; `c` is f32
 * (s32 for U8S8) with row stride ldc elements. */
typedef void (*pt_gemm_ukr_fn)(int64_t kc, const void *a, const void *b, void *c, int64_t ldc, int mr, int nr,
                               int accumulate);

/* Memory a microkernel fetches into cache while it computes (the driver
 * points it at the source of the next B chunk, so that packing it reads
 * from cache instead of waiting on memory): `rows` rows `stride` bytes
 * apart, `lines` 64-byte lines each, from `base`.  The microkernel issues
 * one line every PT_GEMM_PREFETCH_STEPS steps of its k loop (a step is kg
 * k values; rows may set their own, pf_groups_per_line) and advances the
 * cursor (row, line); it stops at the end. */
typedef struct pt_gemm_prefetch {
    uintptr_t base; /* an address as an integer: the first line may start before the data */
    int64_t rows, stride, lines;
    int64_t row, line;
} pt_gemm_prefetch;
#define PT_GEMM_PREFETCH_STEPS 4

/* The same microkernel, fetching `pf`'s lines as it goes (pf not NULL). */
typedef void (*pt_gemm_ukr_pf_fn)(int64_t kc, const void *a, const void *b, void *c, int64_t ldc, int mr, int nr,
                                  int accumulate, pt_gemm_prefetch *pf);

/* F32 rows and the AMX BF16 and U8S8 rows: the same tile with B read from
 * its source instead of a panel, B[k][j] = b_src[k·b_ld + j] for j < b_cols
 * (f32, bf16 for the BF16 kind, s8 for U8S8; columns contiguous), 0 for
 * b_cols <= j < NR, and written as the panel it would have been packed into
 * (b_dst, kc x NR, kc padded to the k group) on the way: the first A strip
 * against a B strip packs it while computing (pf may be NULL).  kc is the k
 * count itself, not padded; a row with a_prep takes A as prepared.  A row
 * with packing_strips 2 takes b_cols up to 2·NR and packs the columns past
 * NR as the next strip's panel (b_dst + kcp·NR elements), which the driver
 * then runs without packing.  U8S8 also writes Σ_k B[k][j] of each of the
 * b_cols columns to b_sums[j] (when not NULL), as packing with column sums
 * would; the float rows take NULL. */
typedef void (*pt_gemm_ukr_packing_fn)(int64_t kc, const void *a, const void *b_src, int64_t b_ld, int b_cols,
                                       void *b_dst, int32_t *b_sums, void *c, int64_t ldc, int mr, int nr,
                                       int accumulate, pt_gemm_prefetch *pf);

typedef struct pt_gemm_ukernel {
    const char *name; /* "avx512_f32_12x32": shown by verbose */
    pt_gemm_kind kind;
    pt_isa_level level;
    unsigned features; /* PT_CPU_* sub-features required on top of level */
    int mr, nr, kg;
    pt_gemm_ukr_fn run;
    pt_gemm_ukr_pf_fn run_pf; /* NULL: the row has no prefetching form */
    pt_gemm_ukr_packing_fn run_packing; /* NULL: no packing form */
    /* NULL, or an in-place transform of one packed A panel of kcp k that
     * the driver applies once after packing an A block, then calling
     * run_prepped (same contract, A so transformed) instead of run: the AMX
     * rows lay A out as tiles once rather than on every call).  Such a row
     * has no prefetching form; its packing form takes A so prepared. */
    void (*a_prep)(void *panel, int64_t kcp);
    pt_gemm_ukr_fn run_prepped;
    /* k groups per line run_pf fetches (0: PT_GEMM_PREFETCH_STEPS). */
    int pf_groups_per_line;
    /* NULL, or (U8S8 rows with a_prep) one A strip of uk->mr rows from a
     * pointer per segment and row, as pt_gemm_pack_u8s8_rows takes them,
     * written straight in the layout a_prep leaves, with the same sums
     * (NULL: none); run_prepped takes it. */
    void (*pack_a_rows_prepped)(const uint8_t *const *rows, int rows_in, int nseg, int64_t seglen, uint8_t flip,
                                void *dst, int32_t *sums);
    /* NULL, or (F32 rows) the tile with A read in place instead of from a
     * panel: nseg segments of seglen k, segment s's row r at a[s·mr + r]
     * with mr the row's own (rows up to mr are read, up to 8 where the
     * call's mr <= 8: a caller points rows it does not want at zeros), B
     * the usual panel over all nseg·seglen k; each row's sums start from
     * the nr values at init (NULL: zero, as run), then add the products in
     * run's k order (strict rounding only). */
    void (*run_a_segs)(int nseg, int64_t seglen, const float *const *a, const void *b, const float *init, void *c,
                       int64_t ldc, int mr, int nr, int accumulate);
    /* B strips one run_packing call packs (0 or 1: one). */
    int packing_strips;
} pt_gemm_ukernel;

/* Best row for `kind` usable under `cap` (every kind has a generic row, so
 * never NULL for a valid kind). */
const pt_gemm_ukernel *pt_gemm_ukernel_select(pt_gemm_kind kind, pt_isa_level cap);
/* The row chosen once for the process (cap = pt_isa()). */
const pt_gemm_ukernel *pt_gemm_ukernel_default(pt_gemm_kind kind);
/* The default row for products of at most M rows and contraction length
 * K, except that where the default lays A out itself (a_prep: the AMX
 * rows) and K fills at most one of its 16-group tile steps or M at most
 * half its 32 rows, the best usable row without a_prep: a tile
 * configuration check, four C tiles to memory and back and A's transposes
 * outweigh so few products.  Panels packed for one row are read only by
 * that row, so a caller packs with what this returns. */
const pt_gemm_ukernel *pt_gemm_ukernel_for_shape(pt_gemm_kind kind, int64_t M, int64_t K);

/* The float kind a product runs on (docs/numerics.md; seed 002): bf16 x
 * bf16 operands, or f32 ones under the bf16 / any math modes, take the BF16
 * kind; integer weights (b_int, dequantised on packing) follow the mode only
 * with apply_to_int; f16 operands and everything else take the F32 kind. */
pt_gemm_kind pt_gemm_float_kind(dnnl_data_type_t a_dt, dnnl_data_type_t b_dt, bool b_int, dnnl_fpmath_mode_t mode,
                                bool apply_to_int);

/* Every row of a kind (tests walk them; rows the CPU cannot run included). */
size_t pt_gemm_ukernel_count(pt_gemm_kind kind);
const pt_gemm_ukernel *pt_gemm_ukernel_at(pt_gemm_kind kind, size_t i);

/* ---- 2. operands ------------------------------------------------------------ */

/* How integer weights are dequantised into a float panel:
 * value(k, n) = (q(k, n) - zp(g, n)) * scale(g, n) with g = k / group (group
 * = 0: one value per column; per-tensor: strides 0). */
typedef struct pt_gemm_dequant {
    bool on;
    dnnl_data_type_t scale_dt; /* f32, bf16, f16 */
    dnnl_data_type_t zp_dt;    /* dnnl_data_type_undef: no zero points; else s8, u8, s4, u4, s32 */
    int64_t group;             /* K elements per group; 0: whole K */
    int64_t sc_sn, sc_sg;      /* scale strides over (n, g) in elements */
    int64_t zp_sn, zp_sg;      /* zero-point strides over (n, g) */
    /* f16 or bf16: each dequantised value rounded to that type before the
     * panel takes it (a DynamicDequantize whose output type is f16, as
     * seed 002's compressed SDPA declares it); undef / f32: none.  Honoured
     * by pt_gemm_pack_panels; the driver takes no operand that sets it. */
    dnnl_data_type_t round_dt;
} pt_gemm_dequant;

/* A strided operand as the engine sees it at compile time.  A: rows are m;
 * B: rows are n (so both are "rows x K").  Strides are in elements (also for
 * 4-bit types, where element e sits in byte e/2, low nibble first). */
typedef struct pt_gemm_operand {
    dnnl_data_type_t dt; /* f32, bf16, f16; u8 / s8 (A of U8S8, B of any kind); s4 / u4 (B) */
    int64_t s_row, s_k;
    /* f32 operands of the F32 kind rounded to this mode before the product
     * (docs/numerics.md); bf16 mode uses the BF16 kind instead. */
    dnnl_fpmath_mode_t round;
    pt_gemm_dequant dq; /* B only: integer weights into F32 / BF16 panels */
} pt_gemm_operand;

/* Integer kind: C_f32 = a_scale * b_scale(n) * Σ_k (a - a_zp)(b - b_zp). */
typedef struct pt_gemm_quant {
    int32_t a_zp;      /* per tensor */
    bool b_zp_on;      /* per tensor zero point of B (s8 weights) */
    int32_t b_zp;
    bool b_scale_per_n; /* else per tensor */
} pt_gemm_quant;

/* Bytes of one element of a kind's panels (A side == B side). */
static inline size_t pt_gemm_panel_elem_bytes(pt_gemm_kind k) { return k == PT_GEMM_F32 ? 4 : k == PT_GEMM_BF16 ? 2 : 1; }

/* kc rounded up to the kind's k group. */
static inline int64_t pt_gemm_kc_padded(const pt_gemm_ukernel *uk, int64_t kc) { return (kc + uk->kg - 1) / uk->kg * uk->kg; }

/* Packing for kernels that drive the microkernels themselves (the fused
 * attention kernels) as well as for the driver.
 *
 * Packs rows [r0, r0 + rows) by k [k0, k0 + kc) of operand `o` (data at
 * `data`: the operand's first element for this batch item) into strips of R
 * rows (R = uk->mr for A, uk->nr for B): strip s starts at
 * dst + s * R * kcp * elem_bytes (kcp = pt_gemm_kc_padded(kc)), laid out
 * [kcp/kg][R][kg]; rows past `rows` and k past kc are zero.  B with o->dq.on
 * is dequantised with `scales` / `zps` (tensors indexed by (row, k/group)
 * through the dq strides).  U8S8: s8 A is shifted to u8 (+128); `sums`
 * (when non-NULL) receives Σ_k of each packed row's integer values as
 * packed (rows entries).  Pure function. */
void pt_gemm_pack_panels(const pt_gemm_ukernel *uk, bool is_b, const pt_gemm_operand *o, const void *data,
                         const void *scales, const void *zps, int64_t r0, int64_t rows, int64_t k0, int64_t kc,
                         void *dst, int32_t *sums);

/* One F32 strip's k run [kc][R] (k group 1) from a pointer per row: row r's
 * k values at rows[r][0, kc) for r < rows_in, zeros for NULL rows and rows
 * past rows_in; f32 values rounded as `round` (the math mode).  For
 * implicit-GEMM convolutions, whose rows are a tap's channels wherever they
 * lie in the input: a strip's taps go into its k runs one after another.
 * Pure function. */
void pt_gemm_pack_f32_rows(const float *const *rows, int rows_in, int R, int64_t kc, dnnl_fpmath_mode_t round,
                           float *dst);

/* One U8S8 A strip [kc/4][R][4] of kc = nseg·seglen (seglen a multiple of
 * 4) from a pointer per segment and row: rows[seg·R + r] holds row r's k
 * values seg·seglen .. seg·seglen + seglen - 1 (u8 / s8 bytes, each xor
 * `flip`: 0x80 makes s8 u8); rows past rows_in zero; sums[r] = Σ_k of row
 * r's stored bytes for r < rows_in.  The same bytes and sums as
 * pt_gemm_pack_panels on the rows laid end to end (an implicit-GEMM
 * convolution: a segment per tap).  Pure function. */
void pt_gemm_pack_u8s8_rows(int R, const uint8_t *const *rows, int rows_in, int nseg, int64_t seglen, uint8_t flip,
                            uint8_t *dst, int32_t *sums);

/* ---- 3. the driver ------------------------------------------------------------ */

#define PT_GEMM_MAX_BATCH 10

typedef struct pt_gemm_desc {
    pt_gemm_kind kind;
    int64_t M, N, K;
    /* Batch: nbd dims; batch index b ranges over Π bdims; element strides of
     * A and B per batch dim (0 where broadcast). */
    int nbd;
    int64_t bdims[PT_GEMM_MAX_BATCH], a_bs[PT_GEMM_MAX_BATCH], b_bs[PT_GEMM_MAX_BATCH];
    pt_gemm_operand a, b;
    pt_gemm_quant q; /* U8S8 only */
    /* B is constant across executions and batch-invariant: may be packed
     * once into pt_gemm_packed_b_bytes and handed to every run. */
    bool b_constant;
    /* Two B operands of this one description share A (a gated MLP's gate
     * and up weights): each A block is packed once and swept against both,
     * and the epilogue gets both tiles (args.b2, args.epilogue2).  Planned
     * only where B is packed per chunk (one M block, B neither constant nor
     * batched, not the small-M path, F32 / BF16 kinds); otherwise plan_init
     * returns dnnl_unimplemented and the caller runs two products. */
    bool dual;
} pt_gemm_desc;

/* Called on each finished tile: c[i * ldc + j] holds the f32 product for
 * rows m0 + i (i < mlen) and columns n0 + j (j < nlen) of batch b.  The
 * callback may overwrite c (it is the thread's own scratch); `tid` indexes
 * per-thread state of the caller (0 <= tid < the run's thread count). */
typedef void (*pt_gemm_epilogue_fn)(void *ctx, int64_t b, int64_t m0, int64_t n0, int64_t mlen, int64_t nlen,
                                    float *c, int64_t ldc, int tid);

/* The epilogue of a dual run: c and c2 hold A·B and A·B2 for the same tile
 * (same rows, columns and stride). */
typedef void (*pt_gemm_epilogue2_fn)(void *ctx, int64_t b, int64_t m0, int64_t n0, int64_t mlen, int64_t nlen,
                                     float *c, float *c2, int64_t ldc, int tid);

/* Made at compile time from a desc; copied by value, owns nothing. */
typedef struct pt_gemm_plan {
    pt_gemm_desc d;
    const pt_gemm_ukernel *uk;
    int64_t MC, NC, KC;      /* blocks (multiples of MR, NR, kg) */
    int64_t nbatch;
    int64_t mblocks, nblocks; /* per batch */
    int nthr;                /* threads the scratch is planned for */
    size_t thread_bytes;     /* scratch per thread */
    size_t shared_bytes;     /* scratch the team shares (B panels packed together) */
    size_t packed_b_bytes;   /* whole B in panels (one batch item) */
} pt_gemm_plan;

/* Chooses the microkernel (default row for d->kind), blocks and scratch for
 * up to `nthr` threads.  dnnl_unimplemented for what the engine does not
 * take (the caller keeps its other path). */
pt_status pt_gemm_plan_init(pt_gemm_plan *p, const pt_gemm_desc *d, int nthr);
/* Same with an explicit microkernel row (tests: every ISA level). */
pt_status pt_gemm_plan_init_with(pt_gemm_plan *p, const pt_gemm_desc *d, int nthr, const pt_gemm_ukernel *uk);

/* Execute-time data of one run. */
typedef struct pt_gemm_args {
    const void *a, *b;
    const void *b_packed; /* non-NULL: B already packed by pt_gemm_pack_b_all (b ignored) */
    const void *b_scales, *b_zps; /* dequant of B (F32/BF16 kinds) or per-n / per-tensor scale (U8S8) */
    float a_scale;                /* U8S8 */
    pt_gemm_epilogue_fn epilogue;
    void *epilogue_ctx;
    /* Dual runs (desc.dual): the second B and its dequant data, and the
     * epilogue taking both tiles (epilogue above unused). */
    const void *b2, *b2_scales, *b2_zps;
    pt_gemm_epilogue2_fn epilogue2;
    /* NULL, or (F32 / BF16 kinds, not dual) where a tile's products may be
     * summed in place: the address of C[b][m0][n0] in the caller's f32
     * output, its row stride in *ld, or NULL for the tile to go through
     * scratch and the epilogue.  A tile summed in place skips the
     * epilogue, so the caller answers only where the epilogue would store
     * the f32 products unchanged (no post-ops, an f32 output with unit
     * column stride). */
    float *(*c_direct)(void *ctx, int64_t b, int64_t m0, int64_t n0, int64_t *ld);
} pt_gemm_args;

/* Whether packing B ahead (constant weights) pays for this problem: false
 * where the small-M path streams B in its own layout and type faster than
 * the packed path computes. */
bool pt_gemm_prepacked_b_pays(const pt_gemm_desc *d);

/* Scratch for a run with `nthr` threads (<= plan's nthr). */
size_t pt_gemm_scratch_bytes(const pt_gemm_plan *p, int nthr);

/* Runs the whole batched product; every tile goes through the epilogue. */
pt_status pt_gemm_run(const pt_gemm_plan *p, const pt_gemm_args *args, void *scratch, int nthr);

/* Packs all of B (batch item 0) into the layout b_packed expects
 * (p->packed_b_bytes, 64-byte aligned destination); b_scales / b_zps as in
 * args.  Single-threaded; meant for constant weights at first execution. */
void pt_gemm_pack_b_all(const pt_gemm_plan *p, const void *b, const void *b_scales, const void *b_zps, void *dst);

/* ---- packed weights as a layout of their own (seed 004, option 2) ------ */

/* A constant f32 / bf16 / f16 weight of an F32 or BF16 product can be handed
 * to the user already packed (pt_gemm_pack_b_all's whole-K strips): the
 * layout is registered as an opaque layout id (ir/logical_tensor.h) whose
 * description is this struct, so a Reorder can pack a plain weight into it
 * and back, and a MatMul reads it without packing.  It depends on the
 * microkernel (strip width, k group), K, N, the plain weight's type and the
 * math-mode rounding applied on packing; not on M or the cache blocks. */
typedef struct pt_gemm_packed_layout {
    char tag[8];               /* "ptgemmB" */
    pt_gemm_kind kind;
    char ukernel[40];          /* microkernel row name */
    int64_t K, N;
    dnnl_data_type_t src_dt;   /* the plain weight's type */
    dnnl_fpmath_mode_t round;  /* rounding of f32 values on packing */
    bool k_last;               /* the plain weight is [.., N, K] (else [.., K, N]) */
} pt_gemm_packed_layout;

/* The layout of plan `p`'s prepacked B: registered (or found) and its id
 * returned; 0 when the plan's B cannot be a user-visible layout (integer
 * kind, dequantised or integer weights, batched B) or the registry is full. */
size_t pt_gemm_packed_b_register(const pt_gemm_plan *p, bool k_last);

/* True when a buffer in layout `id` is exactly what plan `p` would pack. */
bool pt_gemm_packed_b_matches(const pt_gemm_plan *p, bool k_last, size_t id);

/* The description behind layout `id`; false when `id` is not a packed-weight
 * layout. */
bool pt_gemm_packed_b_layout(size_t id, pt_gemm_packed_layout *out);

/* A plan to pack a plain weight into layout `id` or to unpack it; s_row and
 * s_k are the plain weight's strides over N and over K.
 * dnnl_invalid_arguments for an id that is not a packed-weight layout or a
 * type other than the layout's. */
pt_status pt_gemm_packed_b_plan(size_t id, dnnl_data_type_t dt, int64_t s_row, int64_t s_k, pt_gemm_plan *out);

/* Inverse of pt_gemm_pack_b_all for F32 / BF16 plans: writes the values of
 * the panels back to the plain weight (plan's b operand type and strides).
 * Exact unless packing rounded (a bf16 kind over f32 data, f16 / tf32
 * modes): the rounded values come back.  Single-threaded. */
void pt_gemm_unpack_b_all(const pt_gemm_plan *p, const void *packed, void *dst);

#endif
