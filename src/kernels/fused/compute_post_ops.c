/* Fused compute + post-op partitions (see compute_post_ops.h).
 *
 * Every anchor is run as a batched implicit GEMM: C[b][p][q] = Σ_k A[p][k] ·
 * B[k][q] with
 *   MatMul:        b = broadcast batch, p = m, q = n, k = k;
 *   Convolution:   b = group, p = output position (n, od, oh, ow), q = output
 *                  channel in the group, k = (input channel, kd, kh, kw);
 *   ConvTranspose: b = group, p = output position, q = output channel in the
 *                  group, k = (kd, kh, kw, input channel) (the adjoint
 *                  convolution's order, as the reference computes it);
 * where convolution taps that fall outside the input are masked out (the
 * reference skips them, so they must not add even a zero).  A work item is
 * (b, column block, row chunk): it packs its column block of B once (in
 * double, through the weights' prologue program), then for each row block
 * packs A (through the src prologue program; for convolutions from small
 * input windows), accumulates the tile in double with a register-blocked
 * micro-kernel in k order, and runs the epilogue program over the tile's
 * runs along the output's last dim before storing them. */
#include "kernels/fused/compute_post_ops.h"
#include "kernels/fused/const_weights.h"
#include "kernels/fused/conv_packed_layout.h"
#include "kernels/fused/matmul_engine.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "ir/dtype.h"
#include "ir/dtype_round.h"
#include "kernels/gemm/gemm.h"
#include "runtime/share.h"

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>
#define CP_X86 1
#endif

#define CP_MAXD PT_CP_MAXD
#define CP_MR 6     /* micro-tile rows */
#define CP_NR 8     /* micro-tile columns */
#define CP_RUN 256  /* elements per program run */
#define CP_MB 72    /* rows per block (multiple of CP_MR) */
#define CP_MB_INT8 72 /* the same for quantized runs, rounded up to a strip of their microkernel */
#define CP_MB_MAX 96  /* the most rows per block of any run (the exact path's arrays) */
#define CP_NB 64    /* columns per block (multiple of CP_NR) */
#define CP_NB_ENGINE 256 /* on the GEMM microkernels: src rows are packed once per column block */
#define CP_KC 256   /* reduction chunk of the tile loop */
#define CP_THREAD_CAP ((size_t)256 << 20) /* per-thread scratch limit */
#define CP_WPACK_CAP ((size_t)64 << 20) /* weights packed per execution at most */
#define CP_INT8_KC 1024 /* k per pass of the U8S8 tile: a 32-column B strip of it fits L1 */
#define CP_ROWS_MAX_MR 32 /* conv_pack_a_rows: microkernel rows it takes */
#define CP_PAD_ROW 4096   /* conv_pack_a_rows, int8: longest channel run of a tap */
#define CP_MAX_TAPS 49    /* conv_pack_a_rows: taps of a strip (up to 7x7) */

static size_t align64(size_t v) { return (v + 63) / 64 * 64; }

typedef pt_cp_kind cp_kind;
typedef pt_cp_operand cp_operand;
typedef pt_cp_state cp_state;
#define CP_MATMUL PT_CP_MATMUL
#define CP_CONV PT_CP_CONV
#define CP_DECONV PT_CP_DECONV

/* f32 operands are rounded as the math mode permits (as the reference
 * MatMul / Convolution do). */
static inline double cp_operand_value(float v, bool round, dnnl_fpmath_mode_t mode) {
    return (double)(round ? pt_round_fpmath(mode, v) : v);
}

/* ---- micro-kernels -------------------------------------------------------- */

/* c[i][j] += Σ_k a[k][i] · b[k][j] in k order, in double: the product of two
 * f32 values is exact in double, so a fused multiply-add rounds exactly like
 * the reference's separate add. */
static void ukernel_c(int64_t K, const double *a, const double *b, double *c, int64_t ldc) {
    double acc[CP_MR][CP_NR];
    for (int i = 0; i < CP_MR; ++i)
        for (int j = 0; j < CP_NR; ++j) acc[i][j] = c[i * ldc + j];
    for (int64_t k = 0; k < K; ++k) {
        const double *ak = a + k * CP_MR, *bk = b + k * CP_NR;
        for (int i = 0; i < CP_MR; ++i) {
            double ai = ak[i];
            for (int j = 0; j < CP_NR; ++j) acc[i][j] += ai * bk[j];
        }
    }
    for (int i = 0; i < CP_MR; ++i)
        for (int j = 0; j < CP_NR; ++j) c[i * ldc + j] = acc[i][j];
}

/* Same with a mask laid out like `a`: a term is added only where its mask
 * entry is negative (CP_PRESENT); others (padding taps) are skipped, not
 * added as zero, which would differ for -0 sums and non-finite weights. */
#define CP_PRESENT (-1.0)
static void ukernel_masked_c(int64_t K, const double *a, const double *m, const double *b, double *c, int64_t ldc) {
    double acc[CP_MR][CP_NR];
    for (int i = 0; i < CP_MR; ++i)
        for (int j = 0; j < CP_NR; ++j) acc[i][j] = c[i * ldc + j];
    for (int64_t k = 0; k < K; ++k) {
        const double *ak = a + k * CP_MR, *bk = b + k * CP_NR;
        const double *mk = m + k * CP_MR;
        for (int i = 0; i < CP_MR; ++i) {
            if (!(mk[i] < 0.0)) continue;
            double ai = ak[i];
            for (int j = 0; j < CP_NR; ++j) acc[i][j] += ai * bk[j];
        }
    }
    for (int i = 0; i < CP_MR; ++i)
        for (int j = 0; j < CP_NR; ++j) c[i * ldc + j] = acc[i][j];
}

#ifdef CP_X86
__attribute__((target("avx,fma"))) static void ukernel_avx(int64_t K, const double *a, const double *b, double *c,
                                                           int64_t ldc) {
    __m256d c00 = _mm256_loadu_pd(c + 0 * ldc), c01 = _mm256_loadu_pd(c + 0 * ldc + 4);
    __m256d c10 = _mm256_loadu_pd(c + 1 * ldc), c11 = _mm256_loadu_pd(c + 1 * ldc + 4);
    __m256d c20 = _mm256_loadu_pd(c + 2 * ldc), c21 = _mm256_loadu_pd(c + 2 * ldc + 4);
    __m256d c30 = _mm256_loadu_pd(c + 3 * ldc), c31 = _mm256_loadu_pd(c + 3 * ldc + 4);
    __m256d c40 = _mm256_loadu_pd(c + 4 * ldc), c41 = _mm256_loadu_pd(c + 4 * ldc + 4);
    __m256d c50 = _mm256_loadu_pd(c + 5 * ldc), c51 = _mm256_loadu_pd(c + 5 * ldc + 4);
    for (int64_t k = 0; k < K; ++k) {
        const double *ak = a + k * CP_MR;
        __m256d b0 = _mm256_loadu_pd(b + k * CP_NR), b1 = _mm256_loadu_pd(b + k * CP_NR + 4);
        __m256d x = _mm256_broadcast_sd(ak + 0);
        c00 = _mm256_fmadd_pd(x, b0, c00), c01 = _mm256_fmadd_pd(x, b1, c01);
        x = _mm256_broadcast_sd(ak + 1);
        c10 = _mm256_fmadd_pd(x, b0, c10), c11 = _mm256_fmadd_pd(x, b1, c11);
        x = _mm256_broadcast_sd(ak + 2);
        c20 = _mm256_fmadd_pd(x, b0, c20), c21 = _mm256_fmadd_pd(x, b1, c21);
        x = _mm256_broadcast_sd(ak + 3);
        c30 = _mm256_fmadd_pd(x, b0, c30), c31 = _mm256_fmadd_pd(x, b1, c31);
        x = _mm256_broadcast_sd(ak + 4);
        c40 = _mm256_fmadd_pd(x, b0, c40), c41 = _mm256_fmadd_pd(x, b1, c41);
        x = _mm256_broadcast_sd(ak + 5);
        c50 = _mm256_fmadd_pd(x, b0, c50), c51 = _mm256_fmadd_pd(x, b1, c51);
    }
    _mm256_storeu_pd(c + 0 * ldc, c00), _mm256_storeu_pd(c + 0 * ldc + 4, c01);
    _mm256_storeu_pd(c + 1 * ldc, c10), _mm256_storeu_pd(c + 1 * ldc + 4, c11);
    _mm256_storeu_pd(c + 2 * ldc, c20), _mm256_storeu_pd(c + 2 * ldc + 4, c21);
    _mm256_storeu_pd(c + 3 * ldc, c30), _mm256_storeu_pd(c + 3 * ldc + 4, c31);
    _mm256_storeu_pd(c + 4 * ldc, c40), _mm256_storeu_pd(c + 4 * ldc + 4, c41);
    _mm256_storeu_pd(c + 5 * ldc, c50), _mm256_storeu_pd(c + 5 * ldc + 4, c51);
}

/* Masked: the new sum replaces the old one only where the mask's sign bit is set. */
__attribute__((target("avx,fma"))) static void ukernel_masked_avx(int64_t K, const double *a, const double *m,
                                                                  const double *b, double *c, int64_t ldc) {
    __m256d acc[CP_MR][2];
    for (int i = 0; i < CP_MR; ++i) acc[i][0] = _mm256_loadu_pd(c + i * ldc), acc[i][1] = _mm256_loadu_pd(c + i * ldc + 4);
    for (int64_t k = 0; k < K; ++k) {
        const double *ak = a + k * CP_MR, *mk = m + k * CP_MR;
        __m256d b0 = _mm256_loadu_pd(b + k * CP_NR), b1 = _mm256_loadu_pd(b + k * CP_NR + 4);
        for (int i = 0; i < CP_MR; ++i) {
            __m256d x = _mm256_broadcast_sd(ak + i), sel = _mm256_broadcast_sd(mk + i);
            acc[i][0] = _mm256_blendv_pd(acc[i][0], _mm256_fmadd_pd(x, b0, acc[i][0]), sel);
            acc[i][1] = _mm256_blendv_pd(acc[i][1], _mm256_fmadd_pd(x, b1, acc[i][1]), sel);
        }
    }
    for (int i = 0; i < CP_MR; ++i) _mm256_storeu_pd(c + i * ldc, acc[i][0]), _mm256_storeu_pd(c + i * ldc + 4, acc[i][1]);
}

static bool cp_have_avx_fma(void) {
    static int cached = -1;
    int v = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (v < 0) {
        __builtin_cpu_init();
        v = __builtin_cpu_supports("avx") && __builtin_cpu_supports("fma");
        __atomic_store_n(&cached, v, __ATOMIC_RELAXED);
    }
    return v != 0;
}
#endif

typedef void (*cp_ukernel_fn)(int64_t, const double *, const double *, double *, int64_t);
typedef void (*cp_ukernel_masked_fn)(int64_t, const double *, const double *, const double *, double *, int64_t);

static cp_ukernel_fn cp_pick_ukernel(void) {
#ifdef CP_X86
    if (cp_have_avx_fma()) return ukernel_avx;
#endif
    return ukernel_c;
}

static cp_ukernel_masked_fn cp_pick_ukernel_masked(void) {
#ifdef CP_X86
    if (cp_have_avx_fma()) return ukernel_masked_avx;
#endif
    return ukernel_masked_c;
}

/* ---- operand loading ------------------------------------------------------ */

/* Loads the box [lo, lo + ext) of an anchor input (in its own dims) as f32:
 * element q goes to dst[Σ_d (q_d - lo_d) · ds_d].  Runs go along the last
 * dim through the operand's program. */
static void load_box(const cp_operand *op, const void *bound, const int64_t *lo, const int64_t *ext,
                     const int64_t *ds, float *dst, float *run, float *tmp) {
    const int r = op->ndims;
    if (r == 0) {
        int64_t none[1] = {0};
        pt_postops_apply(bound, dst, 1, none, tmp);
        return;
    }
    for (int d = 0; d < r; ++d)
        if (ext[d] <= 0) return;
    int64_t idx[CP_MAXD];
    memcpy(idx, lo, sizeof(int64_t) * (size_t)r);
    const int64_t last = ext[r - 1], dsl = ds[r - 1];
    for (;;) {
        int64_t off = 0;
        for (int d = 0; d < r - 1; ++d) off += (idx[d] - lo[d]) * ds[d];
        for (int64_t c0 = 0; c0 < last; c0 += CP_RUN) {
            int64_t n = last - c0 < CP_RUN ? last - c0 : CP_RUN;
            idx[r - 1] = lo[r - 1] + c0;
            float *x = dsl == 1 ? dst + off + c0 : run;
            pt_postops_apply(bound, x, n, idx, tmp);
            if (x == run)
                for (int64_t i = 0; i < n; ++i) dst[off + (c0 + i) * dsl] = run[i];
        }
        int d = r - 2;
        for (; d >= 0; --d) {
            if (++idx[d] < lo[d] + ext[d]) break;
            idx[d] = lo[d];
        }
        if (d < 0) break;
    }
}

/* Tensor box from a canonical 5-D box. */
static void canon_box(const int *map, int r, const int64_t *clo, const int64_t *cext, const int64_t *cds,
                      int64_t *lo, int64_t *ext, int64_t *ds) {
    for (int d = 0; d < r; ++d) lo[d] = 0, ext[d] = 1, ds[d] = 0;
    for (int c = 0; c < 5; ++c) {
        if (map[c] < 0) continue;
        lo[map[c]] = clo[c], ext[map[c]] = cext[c], ds[map[c]] = cds[c];
    }
}

/* ---- per-thread buffers ----------------------------------------------------- */

typedef struct {
    double *ap, *bp, *c;
    double *mask; /* like ap: CP_PRESENT where a term exists (convolutions) */
    uint8_t *oob;
    float *box, *run, *tmp;
    /* Convolutions on the GEMM microkernels: im2col rows [MB][K], A and B
     * panels of the engine's layout, f32 results [MB][NB]. */
    float *fa, *fc;
    void *fap, *fbp;
    int32_t *qsum; /* quantized path: row sums of the packed src */
} cp_bufs;

typedef struct {
    const cp_state *s;
    const void *ba, *bw, *be; /* bound programs */
    const pt_tview *in;
    const pt_tview *out;
    const double *conv_bias; /* per output channel, conv / deconv */
    bool bias_neg_zero;      /* some conv bias is -0.0 */
    dnnl_fpmath_mode_t mode;
    cp_ukernel_fn uk;
    cp_ukernel_masked_fn ukm;
    /* Convolutions: the engine microkernel of this run (NULL: the exact
     * double path) and how its panels round f32 values. */
    const pt_gemm_ukernel *fuk;
    dnnl_fpmath_mode_t fround;
    bool q8; /* fuk is the U8S8 kind: the quantized path (conv_int8) */
    /* Constant weights: every (group, column block) packed once, from the
     * constant tensor cache (NULL: packed per unit). */
    const char *wpanels;
    size_t wblock_bytes; /* one (group, column block) of panels */
    /* Weights not packed ahead: packed by this execution into shared
     * scratch by the first work item that needs a block (wstate per block:
     * 0 not yet, 1 being packed, 2 ready; wfinite: all finite). */
    char *wshared;
    uint8_t *wstate, *wfinite;
} cp_args;

/* ---- MatMul packing --------------------------------------------------------- */

static void mm_batch_index(const cp_state *s, int64_t b, int64_t *bi) {
    for (int i = s->nbd - 1; i >= 0; --i) {
        bi[i] = b % s->bdims[i];
        b /= s->bdims[i];
    }
}

/* Box over the batch dims of an operand of rank r with `own` batch dims. */
static void mm_batch_box(const cp_state *s, const cp_operand *op, int own, const int64_t *bi, int64_t *lo,
                         int64_t *ext, int64_t *ds) {
    for (int i = 0; i < own; ++i) {
        int oi = i + (s->nbd - own);
        lo[i] = op->dims[i] == 1 ? 0 : bi[oi];
        ext[i] = 1;
        ds[i] = 0;
    }
}

/* Loads the box of a MatMul operand of rank r for one batch index: `on`
 * rows / columns from o0 along dim `dother` (laid out with stride ostride)
 * by all K along dim `dk` (stride kstride); a 1-D operand is its K values. */
static void mm_load(const cp_args *A, const cp_operand *op, const void *bound, int r, int dother, int dk,
                    const int64_t *bi, int64_t o0, int64_t on, int64_t ostride, int64_t kstride, const cp_bufs *t) {
    const int64_t K = A->s->K;
    int64_t lo[CP_MAXD], ext[CP_MAXD], ds[CP_MAXD];
    mm_batch_box(A->s, op, r > 2 ? r - 2 : 0, bi, lo, ext, ds);
    if (r == 1) {
        lo[0] = 0, ext[0] = K, ds[0] = kstride;
    } else {
        lo[dother] = o0, ext[dother] = on, ds[dother] = ostride;
        lo[dk] = 0, ext[dk] = K, ds[dk] = kstride;
    }
    load_box(op, bound, lo, ext, ds, t->box, t->run, t->tmp);
}

static void mm_pack_a(const cp_args *A, const int64_t *bi, int64_t m0, int64_t mb, const cp_bufs *t) {
    const cp_state *s = A->s;
    const int64_t K = s->K;
    int r = s->ra;
    mm_load(A, &s->a, A->ba, r, s->ta ? r - 1 : r - 2, s->ta ? r - 2 : r - 1, bi, m0, mb, K, 1, t);
    const bool rnd = s->a.dt == dnnl_f32 && A->mode != dnnl_fpmath_mode_strict;
    const int64_t strips = (mb + CP_MR - 1) / CP_MR;
    for (int64_t st = 0; st < strips; ++st)
        for (int i = 0; i < CP_MR; ++i) {
            int64_t row = st * CP_MR + i;
            double *dst = t->ap + st * K * CP_MR + i;
            if (row < mb) {
                const float *src = t->box + row * K;
                for (int64_t k = 0; k < K; ++k) dst[k * CP_MR] = cp_operand_value(src[k], rnd, A->mode);
            } else {
                for (int64_t k = 0; k < K; ++k) dst[k * CP_MR] = 0.0;
            }
        }
}

/* Packs B columns [q0, q0 + nb) as [strip][k][CP_NR] from a box laid out as
 * box[k * kstride + j * jstride]. */
static void pack_b_from_box(const cp_args *A, const float *box, int64_t kstride, int64_t jstride, int64_t nb,
                            bool rnd, double *bp) {
    const int64_t K = A->s->K, strips = (nb + CP_NR - 1) / CP_NR;
    for (int64_t st = 0; st < strips; ++st)
        for (int64_t k = 0; k < K; ++k) {
            double *dst = bp + (st * K + k) * CP_NR;
            for (int j = 0; j < CP_NR; ++j) {
                int64_t col = st * CP_NR + j;
                dst[j] = col < nb ? cp_operand_value(box[k * kstride + col * jstride], rnd, A->mode) : 0.0;
            }
        }
}

static void mm_pack_b(const cp_args *A, const int64_t *bi, int64_t q0, int64_t nb, const cp_bufs *t) {
    const cp_state *s = A->s;
    int r = s->rb;
    mm_load(A, &s->w, A->bw, r, s->tb ? r - 2 : r - 1, s->tb ? r - 1 : r - 2, bi, q0, nb, 1, nb, t);
    pack_b_from_box(A, t->box, nb, 1, nb, s->w.dt == dnnl_f32 && A->mode != dnnl_fpmath_mode_strict, t->bp);
}

/* ---- convolution packing ---------------------------------------------------- */

/* Output position p -> (n, d, h, w) in the canonical output. */
static void conv_decode(const cp_state *s, int64_t p, int64_t *pos) {
    pos[3] = p % s->yd[4], p /= s->yd[4];
    pos[2] = p % s->yd[3], p /= s->yd[3];
    pos[1] = p % s->yd[2], p /= s->yd[2];
    pos[0] = p;
}

/* Input position reached from output index i by tap t in a ConvTranspose
 * (the reference's bwd_src_pos), or -1. */
static inline int64_t deconv_src_pos(const cp_state *s, int64_t i, int64_t t, int slot) {
    int64_t num = i + s->Pb[slot] - t * s->Dl[slot];
    if (num < 0 || num % s->S[slot] != 0) return -1;
    int64_t o = num / s->S[slot];
    return o < s->xd[2 + slot] ? o : -1;
}

/* Loads the input window [n, channels of group g, d, h, w in [lo, hi)] of
 * the src as win[c * (hi - lo) + (w - lo)]. */
static void conv_load_window(const cp_args *A, int64_t g, int64_t n, int64_t d, int64_t h, int64_t lo, int64_t hi,
                             const cp_bufs *t) {
    const cp_state *s = A->s;
    int64_t cg = s->kind == CP_CONV ? s->Cin_g : s->xd[1] / s->G;
    int64_t L = hi - lo;
    int64_t clo[5] = {n, g * cg, d, h, lo}, cext[5] = {1, cg, 1, 1, L}, cds[5] = {0, L, 0, 0, 1};
    int64_t tlo[CP_MAXD], text[CP_MAXD], tds[CP_MAXD];
    canon_box(s->xmap, s->a.ndims, clo, cext, cds, tlo, text, tds);
    load_box(&s->a, A->ba, tlo, text, tds, t->box, t->run, t->tmp);
}

/* Zeroes taps [tap0, tap0 + ntaps) of dense im2col rows [i0, i0 + len). */
static void dense_zero_taps(float *dense, int64_t K, int64_t cg, int64_t i0, int64_t len, int64_t tap0, int64_t ntaps) {
    for (int64_t ii = 0; ii < len; ++ii)
        memset(dense + (i0 + ii) * K + tap0 * cg, 0, (size_t)(ntaps * cg) * sizeof(float));
}

/* Packs output positions [p0, p0 + mb) of group g as the exact path's A
 * strips with their presence masks or, with `dense`, as plain im2col rows
 * dense[i * K + k], k = tap * cg + c (values as loaded; padding taps 0). */
static void conv_pack_a(const cp_args *A, int64_t g, int64_t p0, int64_t mb, const cp_bufs *t, float *dense) {
    const cp_state *s = A->s;
    const int64_t K = s->K, T = s->T, KD = s->wd[2], KH = s->wd[3], KW = s->wd[4];
    const int64_t strips = (mb + CP_MR - 1) / CP_MR;
    const bool deconv = s->kind == CP_DECONV;
    const int64_t cg = s->Cin_g;
    const int64_t XW = s->xd[4];
    const bool rnd = s->a.dt == dnnl_f32 && A->mode != dnnl_fpmath_mode_strict;
    const size_t n = (size_t)(strips * K * CP_MR);
    if (dense) {
        /* Absent taps are zeroed where they are found (no pass over the block). */
    } else {
        memset(t->ap, 0, n * sizeof(double));
        memset(t->mask, 0, n * sizeof(double));
    }
    /* Rows past mb are padding: mark them present so they never force the
     * masked kernel.  present[st] counts the terms present per strip. */
    int64_t present[CP_MB_MAX / CP_MR];
    for (int64_t st = 0; st < strips; ++st) present[st] = 0;
    for (int64_t i = mb; i < strips * CP_MR && !dense; ++i) {
        for (int64_t k = 0; k < K; ++k) t->mask[((i / CP_MR) * K + k) * CP_MR + i % CP_MR] = CP_PRESENT;
        present[i / CP_MR] += K;
    }
    int64_t sw_of[CP_MB_MAX]; /* input column of each position of a segment for one kw, -1: none */
    int64_t p = p0;
    while (p < p0 + mb) {
        int64_t pos[4];
        conv_decode(s, p, pos);
        int64_t w_a = pos[3], len = s->yd[4] - w_a;
        if (p + len > p0 + mb) len = p0 + mb - p;
        int64_t w_b = w_a + len, i0 = p - p0;
        for (int64_t kd = 0; kd < KD; ++kd)
            for (int64_t kh = 0; kh < KH; ++kh) {
                int64_t sd, sh, lo, hi;
                const int64_t tap0 = (kd * KH + kh) * KW;
                if (!deconv) {
                    sd = pos[1] * s->S[0] + kd * s->Dl[0] - s->Pb[0];
                    sh = pos[2] * s->S[1] + kh * s->Dl[1] - s->Pb[1];
                    if (sd < 0 || sd >= s->xd[2] || sh < 0 || sh >= s->xd[3]) {
                        if (dense) dense_zero_taps(dense, K, cg, i0, len, tap0, KW);
                        continue;
                    }
                    lo = w_a * s->S[2] - s->Pb[2];
                    hi = (w_b - 1) * s->S[2] + (KW - 1) * s->Dl[2] - s->Pb[2] + 1;
                } else {
                    sd = deconv_src_pos(s, pos[1], kd, 0);
                    sh = deconv_src_pos(s, pos[2], kh, 1);
                    if (sd < 0 || sh < 0) {
                        if (dense) dense_zero_taps(dense, K, cg, i0, len, tap0, KW);
                        continue;
                    }
                    int64_t lnum = w_a + s->Pb[2] - (KW - 1) * s->Dl[2];
                    lo = lnum <= 0 ? 0 : (lnum + s->S[2] - 1) / s->S[2];
                    int64_t hnum = w_b - 1 + s->Pb[2];
                    hi = hnum < 0 ? 0 : hnum / s->S[2] + 1;
                }
                if (lo < 0) lo = 0;
                if (hi > XW) hi = XW;
                if (lo >= hi) {
                    if (dense) dense_zero_taps(dense, K, cg, i0, len, tap0, KW);
                    continue;
                }
                const int64_t L = hi - lo;
                /* A plain f32 input is read as it is: a tap's channels are
                 * copied straight from the tensor (no window). */
                const float *xrow = NULL;
                if (dense && s->a_direct) {
                    const int64_t *es = s->a_es;
                    xrow = (const float *)A->in[s->a_port].data + pos[0] * es[0] + g * cg * es[1] + sd * es[2] +
                           sh * es[3] + lo * es[4];
                } else {
                    conv_load_window(A, g, pos[0], sd, sh, lo, hi, t);
                }
                for (int64_t kw = 0; kw < KW; ++kw) {
                    const int64_t tap = (kd * KH + kh) * KW + kw;
                    for (int64_t ii = 0; ii < len; ++ii) {
                        int64_t ow = w_a + ii, sw;
                        if (!deconv) {
                            sw = ow * s->S[2] + kw * s->Dl[2] - s->Pb[2];
                        } else {
                            int64_t num = ow + s->Pb[2] - kw * s->Dl[2];
                            sw = (num < 0 || num % s->S[2] != 0) ? -1 : num / s->S[2];
                        }
                        sw_of[ii] = (sw < lo || sw >= hi) ? -1 : sw - lo;
                        if (sw_of[ii] >= 0) present[(i0 + ii) / CP_MR] += cg;
                    }
                    if (dense) {
                        /* im2col rows, k = tap * cg + c (the engine path's order):
                         * a row's channels of one tap are adjacent. */
                        for (int64_t ii = 0; ii < len; ++ii) {
                            float *drow = dense + (i0 + ii) * K + tap * cg;
                            if (sw_of[ii] < 0) {
                                memset(drow, 0, (size_t)cg * sizeof(float));
                                continue;
                            }
                            if (xrow) {
                                const float *xp = xrow + sw_of[ii] * s->a_es[4];
                                const int64_t cs = s->a_es[1];
                                if (cs == 1) memcpy(drow, xp, (size_t)cg * sizeof(float));
                                else
                                    for (int64_t c = 0; c < cg; ++c) drow[c] = xp[c * cs];
                                continue;
                            }
                            const float *src = t->box + sw_of[ii];
                            for (int64_t c = 0; c < cg; ++c) drow[c] = src[c * L];
                        }
                        continue;
                    }
                    /* Positions innermost: consecutive rows of a strip are adjacent in `ap`. */
                    for (int64_t c = 0; c < cg; ++c) {
                        const int64_t k = deconv ? tap * cg + c : c * T + tap;
                        const float *wrow = t->box + c * L;
                        for (int64_t ii = 0; ii < len; ++ii) {
                            if (sw_of[ii] < 0) continue;
                            int64_t i = i0 + ii;
                            size_t at = (size_t)(((i / CP_MR) * K + k) * CP_MR + i % CP_MR);
                            t->ap[at] = cp_operand_value(wrow[sw_of[ii]], rnd, A->mode);
                            t->mask[at] = CP_PRESENT;
                        }
                    }
                }
            }
        p += len;
    }
    for (int64_t st = 0; st < strips && !dense; ++st) t->oob[st] = present[st] != K * CP_MR;
}

/* Whether conv_pack_a_rows can pack this run's A: a convolution over a plain
 * f32 input with contiguous channels, on an F32 microkernel. */
static bool conv_rows_packable(const cp_args *A) {
    const cp_state *s = A->s;
    return s->kind == CP_CONV && s->a_direct && s->a_es[1] == 1 && A->fuk && A->fuk->kind == PT_GEMM_F32 &&
           A->fuk->kg == 1 && A->fuk->mr <= CP_ROWS_MAX_MR;
}

/* The output positions of a strip, from pos on (advanced past them): each
 * one's image and its input origin (d, h, w of tap 0, padding taken off). */
typedef struct {
    int64_t n[CP_ROWS_MAX_MR], d[CP_ROWS_MAX_MR], h[CP_ROWS_MAX_MR], w[CP_ROWS_MAX_MR];
} conv_strip;

static void conv_strip_origins(const cp_state *s, int64_t *pos, int rows, conv_strip *o) {
    for (int r = 0; r < rows; ++r) {
        o->n[r] = pos[0];
        o->d[r] = pos[1] * s->S[0] - s->Pb[0], o->h[r] = pos[2] * s->S[1] - s->Pb[1], o->w[r] = pos[3] * s->S[2] - s->Pb[2];
        if (++pos[3] == s->yd[4]) {
            pos[3] = 0;
            if (++pos[2] == s->yd[3]) {
                pos[2] = 0;
                if (++pos[1] == s->yd[2]) pos[1] = 0, ++pos[0];
            }
        }
    }
}

/* Element offset (strides es over canonical [N, C, D, H, W]) of row r's
 * channels at tap (kd, kh, kw), or -1 where the tap falls in the padding. */
static inline int64_t conv_tap_offset(const cp_state *s, const conv_strip *o, int r, const int64_t *es, int64_t kd,
                                      int64_t kh, int64_t kw) {
    const int64_t sd = o->d[r] + kd * s->Dl[0], sh = o->h[r] + kh * s->Dl[1], sw = o->w[r] + kw * s->Dl[2];
    if (sd < 0 || sd >= s->xd[2] || sh < 0 || sh >= s->xd[3] || sw < 0 || sw >= s->xd[4]) return -1;
    return o->n[r] * es[0] + sd * es[2] + sh * es[3] + sw * es[4];
}

/* Packs output positions [p0, p0 + mb) of group g into the engine's A
 * panels straight from the input (implicit GEMM, no im2col rows): per strip
 * of MR positions and tap, each position's channel run of that tap goes
 * into the strip's k rows tap·cg .. tap·cg + cg - 1.  rowsum NULL: the f32
 * input of an F32 run (conv_rows_packable), taps in the padding zero; else
 * the int8 src of a U8S8 run (conv_rows_packable_int8), taps in the padding
 * a row of the src zero point (as conv_im2col_int8 writes them), the
 * strip's row sums over all taps into rowsum.  The im2col copy and its
 * repacking took a quarter of a 3x3 f32 convolution. */
static void conv_pack_a_rows(const cp_args *A, int64_t g, int64_t p0, int64_t mb, const cp_bufs *t, int32_t *rowsum) {
    const cp_state *s = A->s;
    const bool q8 = rowsum != NULL;
    const int R = A->fuk->mr;
    const int64_t K = s->K, cg = s->Cin_g, KD = s->wd[2], KH = s->wd[3], KW = s->wd[4];
    const int64_t *es = q8 ? s->q_a_es : s->a_es;
    const float *xf = q8 ? NULL : (const float *)A->in[s->a_port].data + g * cg * es[1];
    const uint8_t *xq = q8 ? (const uint8_t *)A->in[s->q_a_port].data + g * cg * es[1] : NULL;
    uint8_t pad[CP_PAD_ROW];
    if (q8) memset(pad, (uint8_t)s->q_a_zp, (size_t)cg);
    const float *fp[CP_ROWS_MAX_MR];
    const uint8_t *qp[CP_ROWS_MAX_MR * CP_MAX_TAPS];
    int64_t pos[4];
    conv_decode(s, p0, pos);
    for (int64_t i0 = 0; i0 < mb; i0 += R) {
        const int rows = (int)(mb - i0 < R ? mb - i0 : R);
        conv_strip o;
        conv_strip_origins(s, pos, rows, &o);
        for (int64_t kd = 0; kd < KD; ++kd)
            for (int64_t kh = 0; kh < KH; ++kh)
                for (int64_t kw = 0; kw < KW; ++kw) {
                    const int64_t tap = (kd * KH + kh) * KW + kw;
                    for (int r = 0; r < rows; ++r) {
                        const int64_t at = conv_tap_offset(s, &o, r, es, kd, kh, kw);
                        if (q8) qp[tap * R + r] = at >= 0 ? xq + at : pad;
                        else fp[r] = at >= 0 ? xf + at : NULL;
                    }
                    if (!q8) pt_gemm_pack_f32_rows(fp, rows, R, cg, A->fround, (float *)t->fap + i0 * K + tap * cg * R);
                }
        /* s8 becomes u8 by a flip of bit 7, as pt_gemm_pack_panels does;
         * rows with a prepared A layout (AMX) get it straight away. */
        const uint8_t flip = s->q_a_dt == dnnl_s8 ? 0x80 : 0;
        if (q8 && A->fuk->pack_a_rows_prepped)
            A->fuk->pack_a_rows_prepped(qp, rows, (int)s->T, cg, flip, (uint8_t *)t->fap + i0 * K, rowsum + i0);
        else if (q8)
            pt_gemm_pack_u8s8_rows(R, qp, rows, (int)s->T, cg, flip, (uint8_t *)t->fap + i0 * K, rowsum + i0);
    }
}

/* Packs output channels [q0, q0 + nb) of group g as B: the exact path's
 * double strips, or (A->fuk) the engine's panels in t->fbp.  Returns false
 * when a weight is not finite, where only the exact path (which skips
 * padding taps instead of multiplying them by 0) gives the reference's
 * result. */
static void load_weight_box(const cp_args *A, int64_t g, int64_t q0, int64_t nb, const cp_bufs *t, bool tap_major) {
    const cp_state *s = A->s;
    const int64_t T = s->T, KH = s->wd[3], KW = s->wd[4];
    int64_t tlo[CP_MAXD], text[CP_MAXD], tds[CP_MAXD];
    if (s->kind == CP_CONV) {
        const int64_t Qg = s->yd[1] / s->G, cg = s->Cin_g;
        int64_t clo[5] = {g * Qg + q0, 0, 0, 0, 0}, cext[5] = {nb, cg, s->wd[2], KH, KW};
        int64_t cmaj[5] = {s->K, T, KH * KW, KW, 1}, tmaj[5] = {s->K, 1, KH * KW * cg, KW * cg, cg};
        canon_box(s->wmap, s->w.ndims, clo, cext, tap_major ? tmaj : cmaj, tlo, text, tds);
    } else {
        const int64_t cg = s->xd[1] / s->G;
        int64_t clo[5] = {g * cg, q0, 0, 0, 0}, cext[5] = {cg, nb, s->wd[2], KH, KW};
        int64_t cds[5] = {nb * T, T, KH * KW, KW, 1};
        canon_box(s->wmap, s->w.ndims, clo, cext, cds, tlo, text, tds);
    }
    load_box(&s->w, A->bw, tlo, text, tds, t->box, t->run, t->tmp);
}

/* Whether n floats are all finite: exponent bits tested branch-free, so the
 * loop vectorises (a short-circuit isfinite loop took 2.4 % of a 3x3 f32
 * convolution that packs its weights per execution). */
static bool all_finite_f32(const float *x, int64_t n) {
    uint32_t bad = 0;
    for (int64_t e = 0; e < n; ++e) {
        uint32_t u;
        memcpy(&u, x + e, sizeof u);
        bad |= (u & 0x7f800000u) == 0x7f800000u;
    }
    return bad == 0;
}

static bool conv_pack_b(const cp_args *A, int64_t g, int64_t q0, int64_t nb, const cp_bufs *t) {
    const cp_state *s = A->s;
    const int64_t T = s->T;
    const bool rnd = s->w.dt == dnnl_f32 && A->mode != dnnl_fpmath_mode_strict;
    if (A->fuk && s->w_ks) {
        /* Weights packed where they are (XIO: k = tap · cg + c at one stride). */
        const float *w = (const float *)A->in[s->w_direct_port].data + (g * s->Q + q0) * s->w_os;
        const pt_gemm_operand o = {.dt = dnnl_f32, .s_row = s->w_os, .s_k = s->w_ks, .round = A->fround};
        pt_gemm_pack_panels(A->fuk, true, &o, w, NULL, NULL, 0, nb, 0, s->K, t->fbp, NULL);
        const float *pan = (const float *)t->fbp;
        const int64_t n = (nb + A->fuk->nr - 1) / A->fuk->nr * A->fuk->nr * pt_gemm_kc_padded(A->fuk, s->K);
        return all_finite_f32(pan, n); /* panels hold the weights and zeros */
    }
    if (A->fuk) {
        /* Weights as dense rows w[j][k] (k = tap * cg + c, the im2col order), then panels. */
        const float *rows = t->box;
        load_weight_box(A, g, q0, nb, t, true);
        if (s->kind != CP_CONV) {
            const int64_t cg = s->xd[1] / s->G;
            for (int64_t j = 0; j < nb; ++j) /* k = tap * cg + ocg */
                for (int64_t k = 0; k < s->K; ++k) t->fa[j * s->K + k] = t->box[((k % cg) * nb + j) * T + k / cg];
            rows = t->fa;
        }
        if (!all_finite_f32(rows, nb * s->K)) return false;
        pt_gemm_operand o = {.dt = dnnl_f32, .s_row = s->K, .s_k = 1, .round = A->fround};
        pt_gemm_pack_panels(A->fuk, true, &o, rows, NULL, NULL, 0, nb, 0, s->K, t->fbp, NULL);
        return true;
    }
    load_weight_box(A, g, q0, nb, t, false);
    if (s->kind == CP_CONV) {
        /* box[j][c][tap] = box[j * K + k] with k = c * T + tap */
        pack_b_from_box(A, t->box, 1, s->K, nb, rnd, t->bp);
    } else {
        /* box[ocg][j][tap]; k = tap * cg + ocg */
        int64_t cg = s->xd[1] / s->G;
        const int64_t K = s->K, strips = (nb + CP_NR - 1) / CP_NR;
        for (int64_t st = 0; st < strips; ++st)
            for (int64_t k = 0; k < K; ++k) {
                int64_t tap = k / cg, ocg = k % cg;
                double *dst = t->bp + (st * K + k) * CP_NR;
                for (int j = 0; j < CP_NR; ++j) {
                    int64_t col = st * CP_NR + j;
                    dst[j] = col < nb ? cp_operand_value(t->box[(ocg * nb + col) * T + tap], rnd, A->mode) : 0.0;
                }
            }
    }
    return true;
}

/* ---- tile compute ------------------------------------------------------------ */

/* k is split into chunks that keep a B strip in L1 and the A block in L2;
 * the chunks run in k order, so every sum keeps the reference order. */
static void compute_tile(const cp_args *A, int64_t mb, int64_t nb, bool masked, const cp_bufs *t) {
    const int64_t K = A->s->K, ldc = A->s->NB;
    const int64_t rs = (mb + CP_MR - 1) / CP_MR, cs = (nb + CP_NR - 1) / CP_NR;
    for (int64_t k0 = 0; k0 < K; k0 += CP_KC) {
        const int64_t kc = K - k0 < CP_KC ? K - k0 : CP_KC;
        for (int64_t cj = 0; cj < cs; ++cj)
            for (int64_t ri = 0; ri < rs; ++ri) {
                double *c = t->c + ri * CP_MR * ldc + cj * CP_NR;
                const double *a = t->ap + (ri * K + k0) * CP_MR, *b = t->bp + (cj * K + k0) * CP_NR;
                if (masked && t->oob[ri]) A->ukm(kc, a, t->mask + (ri * K + k0) * CP_MR, b, c, ldc);
                else A->uk(kc, a, b, c, ldc);
            }
    }
}

/* The engine's microkernels over the packed panels: C (initialised with the
 * bias) accumulates K in chunks that keep a B strip in L1. */
#define CP_FAST_KC 256
static void compute_tile_fast(const cp_args *A, int64_t mb, int64_t nb, const void *bpanels, const cp_bufs *t) {
    const pt_gemm_ukernel *uk = A->fuk;
    const int64_t ldc = A->s->NB, Kp = pt_gemm_kc_padded(uk, A->s->K);
    const size_t eb = pt_gemm_panel_elem_bytes(uk->kind);
    for (int64_t k0 = 0; k0 < Kp; k0 += CP_FAST_KC) {
        const int64_t kc = Kp - k0 < CP_FAST_KC ? Kp - k0 : CP_FAST_KC;
        for (int64_t j0 = 0; j0 < nb; j0 += uk->nr)
            for (int64_t i0 = 0; i0 < mb; i0 += uk->mr) {
                const char *a = (const char *)t->fap + (size_t)(i0 * Kp + k0 * uk->mr) * eb;
                const char *b = (const char *)bpanels + (size_t)(j0 * Kp + k0 * uk->nr) * eb;
                const int mr = (int)(mb - i0 < uk->mr ? mb - i0 : uk->mr), nr = (int)(nb - j0 < uk->nr ? nb - j0 : uk->nr);
                uk->run(kc, a, b, t->fc + i0 * ldc + j0, ldc, mr, nr, 1);
            }
    }
}

/* Output positions [p0, p0 + mb) of group g on the row's in-place form
 * (run_a_segs, conv_segs_ok): per strip of MR positions a segment per tap,
 * each row read where the input holds it (a row of zeros in t->fap for
 * the padding and for rows past the strip); the accumulators stay in
 * registers over all taps.  No A panel: a 3x3 channels-last f32
 * convolution packed 7 MB of them per execution; and no staging: strips
 * whose rows were not one stride apart (crossing an output row, or with a
 * padding tap) were copied row by row, 5 % of a 3x3 f32 convolution. */
static void conv_tile_segs(const cp_args *A, int64_t g, int64_t p0, int64_t mb, int64_t nb, const void *bpanels,
                           const float *bias_row, const cp_bufs *t, float *c, int64_t ldc) {
    const cp_state *s = A->s;
    const pt_gemm_ukernel *uk = A->fuk;
    const int64_t K = s->K, cg = s->Cin_g, KD = s->wd[2], KH = s->wd[3], KW = s->wd[4];
    const int64_t *es = s->a_es;
    const int MR = uk->mr;
    const float *xf = (const float *)A->in[s->a_port].data + g * cg * es[1];
    const float *rows_at[CP_MAX_TAPS * CP_ROWS_MAX_MR];
    float *zeros = (float *)t->fap;
    memset(zeros, 0, sizeof(float) * (size_t)cg);
    int64_t pos[4];
    conv_decode(s, p0, pos);
    for (int64_t i0 = 0; i0 < mb; i0 += MR) {
        const int rows = (int)(mb - i0 < MR ? mb - i0 : MR);
        conv_strip o;
        conv_strip_origins(s, pos, rows, &o);
        for (int64_t kd = 0; kd < KD; ++kd)
            for (int64_t kh = 0; kh < KH; ++kh)
                for (int64_t kw = 0; kw < KW; ++kw) {
                    const int64_t tap = (kd * KH + kh) * KW + kw;
                    const float **row = rows_at + tap * MR;
                    for (int r = 0; r < MR; ++r) {
                        const int64_t at = r < rows ? conv_tap_offset(s, &o, r, es, kd, kh, kw) : -1;
                        row[r] = at >= 0 ? xf + at : zeros;
                    }
                }
        /* Strips ending with an output row measured 3 % slower: more short
         * strips.  Taps in runs whose B strip stays in L1 across the
         * block's strips: no faster. */
        for (int64_t j0 = 0; j0 < nb; j0 += uk->nr) {
            const int nr = (int)(nb - j0 < uk->nr ? nb - j0 : uk->nr);
            uk->run_a_segs((int)s->T, cg, rows_at, (const float *)bpanels + j0 * K, bias_row + j0, c + i0 * ldc + j0,
                           ldc, rows, nr, 0);
        }
    }
}

/* Whether conv_tile_segs takes this run (conv_rows_packable, strict f32). */
static bool conv_segs_ok(const cp_args *A) {
    return A->fuk->run_a_segs && A->fround == dnnl_fpmath_mode_strict && A->s->T <= CP_MAX_TAPS &&
           A->fuk->mr <= CP_ROWS_MAX_MR;
}

/* ---- epilogue ------------------------------------------------------------------ */

/* Rounds to the anchor's type (op-by-op mode), runs the epilogue, stores.
 * `aidx` indexes the anchor output. */
void pt_cp_finish_run(const cp_state *s, const void *bound_epi, void *out_data, float *x, int64_t n,
                      const int64_t *aidx, float *tmp) {
    int64_t idx[CP_MAXD], off = 0;
    for (int d = 0; d < s->out_ndims; ++d) {
        idx[d] = d < s->out_lead ? 0 : aidx[d - s->out_lead];
        off += idx[d] * s->out_strides[d];
    }
    if (s->round_floats) pt_run_round(s->anchor_dt, x, n);
    pt_postops_apply(bound_epi, x, n, idx, tmp);
    int64_t stride = s->out_ndims ? s->out_strides[s->out_ndims - 1] : 0;
    pt_run_store(out_data, s->out_dt, off, stride, x, n);
}

bool pt_cp_rows_mergeable(const cp_state *s, const pt_postops *rows_prog) {
    const int r = s->out_ndims;
    return rows_prog && r >= 2 && rows_prog->ndims == r - 1 && s->epi->ndims == r &&
           s->out_strides[r - 2] == s->out_strides[r - 1] * s->out_dims[r - 1];
}

void pt_cp_finish_rows(const cp_state *s, const void *bound_rows, void *out_data, float *x, int64_t rows,
                       const int64_t *aidx, float *tmp) {
    const int r = s->out_ndims;
    const int64_t n = rows * s->out_dims[r - 1];
    int64_t idx[CP_MAXD], off = 0;
    for (int d = 0; d < r - 1; ++d) {
        idx[d] = d < s->out_lead ? 0 : aidx[d - s->out_lead];
        off += idx[d] * s->out_strides[d];
    }
    idx[r - 2] *= s->out_dims[r - 1]; /* the merged dim's index */
    if (s->round_floats) pt_run_round(s->anchor_dt, x, n);
    pt_postops_apply(bound_rows, x, n, idx, tmp);
    pt_run_store(out_data, s->out_dt, off, s->out_strides[r - 1], x, n);
}

static void finish_run(const cp_args *A, float *x, int64_t n, const int64_t *aidx, const cp_bufs *t) {
    pt_cp_finish_run(A->s, A->be, A->out[0].data, x, n, aidx, t->tmp);
}

static void mm_epilogue(const cp_args *A, const int64_t *bi, int64_t m0, int64_t mb, int64_t q0, int64_t nb,
                        const cp_bufs *t) {
    const cp_state *s = A->s;
    const int64_t ldc = s->NB;
    const pt_tview *bias = s->bias_port >= 0 ? &A->in[s->bias_port] : NULL;
    int64_t idx[CP_MAXD], bbase = 0;
    for (int i = 0; i < s->nbd; ++i) idx[i] = bi[i], bbase += bi[i] * s->bias_bs[i];
    float *x = t->run;
    if (s->rb >= 2) {
        for (int64_t i = 0; i < mb; ++i) {
            int64_t m = m0 + i;
            if (s->ra >= 2) idx[s->nbd] = m;
            for (int64_t c0 = 0; c0 < nb; c0 += CP_RUN) {
                int64_t n = nb - c0 < CP_RUN ? nb - c0 : CP_RUN;
                const double *crow = t->c + i * ldc + c0;
                if (bias) {
                    int64_t bo = bbase + m * s->bias_sm + (q0 + c0) * s->bias_sn;
                    for (int64_t j = 0; j < n; ++j)
                        x[j] = (float)(crow[j] + (double)pt_load_f32(bias->data, s->bias_dt, bo + j * s->bias_sn));
                } else {
                    for (int64_t j = 0; j < n; ++j) x[j] = (float)crow[j];
                }
                idx[s->out_ndims - s->out_lead - 1] = q0 + c0;
                finish_run(A, x, n, idx, t);
            }
        }
    } else {
        /* N == 1: the output's last dim is M (or the output is a scalar). */
        for (int64_t r0 = 0; r0 < mb; r0 += CP_RUN) {
            int64_t n = mb - r0 < CP_RUN ? mb - r0 : CP_RUN;
            for (int64_t j = 0; j < n; ++j) {
                double acc = t->c[(r0 + j) * ldc];
                if (bias) acc += (double)pt_load_f32(bias->data, s->bias_dt, bbase + (m0 + r0 + j) * s->bias_sm);
                x[j] = (float)acc;
            }
            if (s->ra >= 2) idx[s->nbd] = m0 + r0;
            finish_run(A, x, n, idx, t);
        }
    }
}

static void conv_out_index(const cp_state *s, const int64_t *pos, int64_t oc, int64_t *idx) {
    int64_t cv[5] = {pos[0], oc, pos[1], pos[2], pos[3]};
    for (int c = 0; c < 5; ++c)
        if (s->ymap[c] >= 0) idx[s->ymap[c]] = cv[c];
}

/* Result (i, j) of a tile: the exact path's double or the engine's f32. */
static inline float tile_at(const cp_args *A, const cp_bufs *t, int64_t at) {
    return A->fuk ? t->fc[at] : (float)t->c[at];
}

/* Where the f32 tile of positions [p0, p0 + mb), channels from g·Q + q0
 * can be the output itself (row i at the result + i·ld): a dense
 * channels-last f32 output, no op-by-op rounding, and an epilogue that
 * reads no partition port (one could be the output's own buffer, a sum in
 * place, which the raw products would overwrite first).  NULL otherwise.
 * The copy of each finished row into the output took 3.4 % of a 3x3 f32
 * convolution. */
static float *conv_out_rows(const cp_args *A, int64_t g, int64_t p0, int64_t q0, int64_t *ld) {
    const cp_state *s = A->s;
    const int r = s->out_ndims, lead = s->out_lead;
    if (s->out_dt != dnnl_f32 || s->round_floats || r < 3 || s->ymap[1] != r - lead - 1 || s->out_strides[r - 1] != 1)
        return NULL;
    const pt_postops *e = s->epi;
    for (int i = 0; e && i < e->nins; ++i) {
        if (e->ins[i].ik == I_BN) return NULL;
        for (int j = 0; j < e->ins[i].na; ++j)
            if (e->ins[i].a[j].kind == OPD_PORT) return NULL;
    }
    /* Positions nest densely: each spatial dim's stride the next one's
     * stride times its extent, the innermost the row. */
    int64_t step = s->out_strides[r - 1] * s->out_dims[r - 1];
    for (int c = 4; c >= 2; --c) {
        const int d = s->ymap[c];
        if (d < 0) continue;
        if (s->out_strides[d + lead] != step) return NULL;
        step *= s->out_dims[d + lead];
    }
    if (s->ymap[0] >= 0 && s->yd[0] > 1 && s->out_strides[s->ymap[0] + lead] != step) return NULL;
    int64_t pos[4], idx[CP_MAXD], off = 0;
    conv_decode(s, p0, pos);
    conv_out_index(s, pos, g * s->Q + q0, idx);
    for (int d = lead; d < r; ++d) off += idx[d - lead] * s->out_strides[d];
    *ld = s->out_strides[r - 1] * s->out_dims[r - 1];
    return (float *)A->out[0].data + off;
}

static void conv_epilogue(const cp_args *A, int64_t g, int64_t p0, int64_t mb, int64_t q0, int64_t nb,
                          const cp_bufs *t, float *direct, int64_t ld_direct) {
    const cp_state *s = A->s;
    const int64_t ldc = s->NB, Qg = s->Q;
    int64_t idx[CP_MAXD], pos[4];
    float *x = t->run;
    if (s->ymap[1] == s->out_ndims - s->out_lead - 1) { /* channels last: runs along channels */
        for (int64_t i = 0; i < mb; ++i) {
            conv_decode(s, p0 + i, pos);
            for (int64_t c0 = 0; c0 < nb; c0 += CP_RUN) {
                int64_t n = nb - c0 < CP_RUN ? nb - c0 : CP_RUN;
                float *run = x;
                if (direct) run = direct + i * ld_direct + c0; /* the output itself: finished there */
                else if (A->fuk) run = t->fc + i * ldc + c0; /* f32 tile rows: finished in place */
                else
                    for (int64_t j = 0; j < n; ++j) x[j] = (float)t->c[i * ldc + c0 + j];
                conv_out_index(s, pos, g * Qg + q0 + c0, idx);
                finish_run(A, run, n, idx, t);
            }
        }
        return;
    }
    /* Channels first: runs along the innermost spatial dim. */
    for (int64_t j = 0; j < nb; ++j) {
        int64_t p = p0;
        while (p < p0 + mb) {
            conv_decode(s, p, pos);
            int64_t len = s->yd[4] - pos[3];
            if (p + len > p0 + mb) len = p0 + mb - p;
            if (len > CP_RUN) len = CP_RUN;
            for (int64_t e = 0; e < len; ++e) x[e] = tile_at(A, t, (p - p0 + e) * ldc + j);
            conv_out_index(s, pos, g * Qg + q0 + j, idx);
            finish_run(A, x, len, idx, t);
            p += len;
        }
    }
}

/* ---- quantized convolutions (U8S8) --------------------------------------------- */

/* Bytes of one (group, column block) of int8 weight panels: the panels, then
 * the Σ_k of each column (s32), both 64-byte aligned. */
static size_t int8_panel_bytes(const cp_state *s, const pt_gemm_ukernel *uk) {
    const int64_t nbp = (s->NB + uk->nr - 1) / uk->nr * uk->nr;
    return align64((size_t)(nbp * pt_gemm_kc_padded(uk, s->K)));
}
static size_t int8_block_bytes(const cp_state *s, const pt_gemm_ukernel *uk) {
    const int64_t nbp = (s->NB + uk->nr - 1) / uk->nr * uk->nr;
    return int8_panel_bytes(s, uk) + align64((size_t)nbp * sizeof(int32_t));
}

/* Packs output channels [q0, q0 + nb) of group g from the raw s8 weights:
 * dense rows w[j][k] (k = tap * cg + c, the im2col order) in t->fa, then
 * U8S8 B panels at dst with the column sums after them. */
static void conv_pack_b_int8(const cp_args *A, int64_t g, int64_t q0, int64_t nb, const cp_bufs *t, char *dst) {
    const cp_state *s = A->s;
    const int64_t K = s->K, cg = s->Cin_g, Qg = s->Q, KD = s->wd[2], KH = s->wd[3], KW = s->wd[4];
    const int8_t *w = A->in[s->q_w_port].data;
    const int64_t *es = s->q_w_es;
    int8_t *rows = (int8_t *)t->fa;
    for (int64_t j = 0; j < nb; ++j) {
        const int8_t *wo = w + (g * Qg + q0 + j) * es[0];
        int8_t *row = rows + j * K;
        for (int64_t kd = 0; kd < KD; ++kd)
            for (int64_t kh = 0; kh < KH; ++kh)
                for (int64_t kw = 0; kw < KW; ++kw) {
                    const int8_t *wt = wo + kd * es[2] + kh * es[3] + kw * es[4];
                    int8_t *rt = row + ((kd * KH + kh) * KW + kw) * cg;
                    if (es[1] == 1) memcpy(rt, wt, (size_t)cg);
                    else
                        for (int64_t c = 0; c < cg; ++c) rt[c] = wt[c * es[1]];
                }
    }
    pt_gemm_operand o = {.dt = dnnl_s8, .s_row = K, .s_k = 1};
    pt_gemm_pack_panels(A->fuk, true, &o, rows, NULL, NULL, 0, nb, 0, K, dst,
                        (int32_t *)(dst + int8_panel_bytes(s, A->fuk)));
}

/* im2col rows of output positions [p0, p0 + mb) of group g from the raw
 * int8 src: dense[i * K + tap * cg + c].  Taps outside the input hold the
 * src zero point, whose dequantised value is 0: such a tap adds nothing to
 * Σ (a - za)(b - zb), as the reference skips it. */
static void conv_im2col_int8(const cp_args *A, int64_t g, int64_t p0, int64_t mb, uint8_t *dense) {
    const cp_state *s = A->s;
    const int64_t K = s->K, cg = s->Cin_g, KD = s->wd[2], KH = s->wd[3], KW = s->wd[4];
    const uint8_t *x = A->in[s->q_a_port].data;
    const int64_t *es = s->q_a_es;
    const uint8_t pad = (uint8_t)s->q_a_zp; /* s8: the zero point's bit pattern */
    int64_t pos[4];
    conv_decode(s, p0, pos);
    for (int64_t i = 0; i < mb; ++i) {
        uint8_t *row = dense + i * K;
        const uint8_t *xn = x + pos[0] * es[0] + g * cg * es[1];
        for (int64_t kd = 0; kd < KD; ++kd) {
            const int64_t sd = pos[1] * s->S[0] + kd * s->Dl[0] - s->Pb[0];
            for (int64_t kh = 0; kh < KH; ++kh) {
                const int64_t sh = pos[2] * s->S[1] + kh * s->Dl[1] - s->Pb[1];
                const bool in_dh = sd >= 0 && sd < s->xd[2] && sh >= 0 && sh < s->xd[3];
                for (int64_t kw = 0; kw < KW; ++kw) {
                    const int64_t sw = pos[3] * s->S[2] + kw * s->Dl[2] - s->Pb[2];
                    uint8_t *rt = row + ((kd * KH + kh) * KW + kw) * cg;
                    if (!in_dh || sw < 0 || sw >= s->xd[4]) {
                        memset(rt, pad, (size_t)cg);
                        continue;
                    }
                    const uint8_t *xt = xn + sd * es[2] + sh * es[3] + sw * es[4];
                    if (es[1] == 1) memcpy(rt, xt, (size_t)cg);
                    else
                        for (int64_t c = 0; c < cg; ++c) rt[c] = xt[c * es[1]];
                }
            }
        }
        /* next output position */
        if (++pos[3] == s->yd[4]) {
            pos[3] = 0;
            if (++pos[2] == s->yd[3]) {
                pos[2] = 0;
                if (++pos[1] == s->yd[2]) pos[1] = 0, ++pos[0];
            }
        }
    }
}

/* Whether conv_pack_a_rows can pack this U8S8 run's A: channels contiguous
 * in the int8 src, whole k groups per tap. */
static bool conv_rows_packable_int8(const cp_args *A) {
    const cp_state *s = A->s;
    return s->kind == CP_CONV && s->q_a_es[1] == 1 && s->Cin_g % A->fuk->kg == 0 && s->Cin_g <= CP_PAD_ROW &&
           A->fuk->mr <= CP_ROWS_MAX_MR && A->fuk->kg == 4 && s->T <= CP_MAX_TAPS;
}

/* A 1x1 convolution with stride 1 and no padding whose input positions of
 * one image lie at one stride (es: src strides over the canonical dims): its
 * im2col rows are the input's own rows, packed where they are.  Gives that
 * stride and whether it also steps from one image to the next. */
static bool rows_in_place(const cp_state *s, const int64_t *es, int64_t *row_stride, bool *images_too) {
    if (s->kind != CP_CONV || s->T != 1 || s->S[0] != 1 || s->S[1] != 1 || s->S[2] != 1 || s->Pb[0] != 0 ||
        s->Pb[1] != 0 || s->Pb[2] != 0 || s->yd[2] != s->xd[2] || s->yd[3] != s->xd[3] || s->yd[4] != s->xd[4])
        return false;
    /* Spatial dims of extent 1 have no stride to match. */
    int64_t rs = 0, span = 1;
    for (int d = 4; d >= 2; --d) {
        if (s->xd[d] == 1) continue;
        if (span == 1) rs = es[d];
        else if (es[d] != rs * span) return false;
        span *= s->xd[d];
    }
    *row_stride = span == 1 ? 1 : rs;
    *images_too = s->xd[0] == 1 || es[0] == *row_stride * span;
    return true;
}

/* Whether every term of the zero-point correction fits int32. */
static bool narrow_sums(const cp_state *s) {
    const int64_t za = s->q_a_zp + (s->q_a_dt == dnnl_s8 ? 128 : 0), zb = s->q_w_zp;
    return s->K <= 10000 && za >= 0 && za <= 255 && zb >= -255 && zb <= 255;
}

/* The same rounding to an integer type as the chain's store (run_io.c):
 * NaN to 0, clamp, round half to even. */
static inline float int8_round(float v, float lo, float hi) {
    v = v != v ? 0.f : v;
    v = v < lo ? lo : (v > hi ? hi : v);
    return (v + 12582912.f) - 12582912.f;
}

#ifdef CP_X86
/* int8_row_out in AVX-512: the same values, 16 lanes at a time.  The
 * program's steps are read once per row, not per vector (the stores through
 * dst could alias them for all the compiler knows). */
typedef struct {
    __m512i rt;
    __m512 sum_sc, sum_zp, qlo, qhi, inv_scale, out_zp;
    __m512 lo[4], hi[4];
    bool relu[4];
    int nclamp;
    bool quant, quant_zp, int_out, is_u8, sum_u8;
} int8_out_consts;

/* Elements [j, j + 16) of the row (lanes in m) up to the integer type's
 * range: the same operations as int8_row_out.  A ReLU is max(0, x), which
 * keeps NaN; plus 0 makes its -0 the reference's +0 where the result stays
 * float.  A Clamp is max then min with x first (NaN gives lo, as the
 * reference's compare does). */
__attribute__((target("avx512f,avx512bw,avx512vl"))) static inline __m512
int8_out16(const int8_out_consts *k, const int32_t *acc, const int32_t *colterm, const float *scale, const float *bias,
           const float *badd, const void *sum, int64_t j, __mmask16 m) {
    __m512i t = _mm512_sub_epi32(_mm512_maskz_loadu_epi32(m, acc + j), _mm512_maskz_loadu_epi32(m, colterm + j));
    __m512 x = _mm512_cvtepi32_ps(_mm512_add_epi32(t, k->rt));
    x = _mm512_add_ps(_mm512_mul_ps(x, _mm512_maskz_loadu_ps(m, scale + j)), _mm512_maskz_loadu_ps(m, bias + j));
    if (badd) x = _mm512_add_ps(x, _mm512_maskz_loadu_ps(m, badd + j));
    if (sum) {
        const __m128i q = _mm_maskz_loadu_epi8(m, (const char *)sum + j);
        const __m512i qi = k->sum_u8 ? _mm512_cvtepu8_epi32(q) : _mm512_cvtepi8_epi32(q);
        x = _mm512_add_ps(x, _mm512_mul_ps(_mm512_sub_ps(_mm512_cvtepi32_ps(qi), k->sum_zp), k->sum_sc));
    }
    for (int c = 0; c < k->nclamp; ++c) {
        if (k->relu[c]) {
            x = _mm512_max_ps(_mm512_setzero_ps(), x);
            if (!k->int_out) x = _mm512_add_ps(x, _mm512_setzero_ps());
        } else {
            x = _mm512_min_ps(_mm512_max_ps(x, k->lo[c]), k->hi[c]);
        }
    }
    if (k->quant) {
        x = _mm512_mul_ps(x, k->inv_scale);
        if (k->quant_zp) x = _mm512_add_ps(x, k->out_zp);
    }
    if (!k->int_out) return x;
    /* NaN -> 0: for u8 the max with 0 below does it. */
    if (!k->is_u8) x = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x, x, _CMP_ORD_Q), x);
    return _mm512_min_ps(_mm512_max_ps(x, k->qlo), k->qhi);
}

__attribute__((target("avx512f,avx512bw,avx512vl"))) static inline __m512i int8_round16(__m512 x) {
    return _mm512_cvt_roundps_epi32(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); /* half to even */
}

__attribute__((target("avx512f,avx512bw,avx512vl"))) static void int8_row_out_avx512(
    const cp_state *s, const int32_t *acc, int64_t nb, const int32_t *colterm, int32_t rowterm, const float *scale,
    const float *bias, const float *badd, const void *sum, void *dst, int64_t off) {
    int8_out_consts k;
    k.rt = _mm512_set1_epi32(rowterm);
    k.sum_sc = _mm512_set1_ps(s->q_sum_scale), k.sum_zp = _mm512_set1_ps(s->q_sum_zp);
    k.is_u8 = s->out_dt == dnnl_u8, k.int_out = k.is_u8 || s->out_dt == dnnl_s8;
    k.sum_u8 = s->q_sum_dt == dnnl_u8;
    k.qlo = _mm512_set1_ps(k.is_u8 ? 0.f : -128.f), k.qhi = _mm512_set1_ps(k.is_u8 ? 255.f : 127.f);
    k.nclamp = s->q_nclamp;
    for (int c = 0; c < k.nclamp; ++c)
        k.relu[c] = s->q_relu[c], k.lo[c] = _mm512_set1_ps(s->q_lo[c]), k.hi[c] = _mm512_set1_ps(s->q_hi[c]);
    k.quant = s->q_quant, k.quant_zp = s->q_quant_zp;
    k.inv_scale = _mm512_set1_ps(s->q_inv_scale), k.out_zp = _mm512_set1_ps(s->q_out_zp);
    int64_t j = 0;
    if (!k.int_out) {
        for (; j < nb; j += 16) {
            const __mmask16 m = nb - j >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (nb - j)) - 1);
            _mm512_mask_storeu_ps((float *)dst + off + j, m, int8_out16(&k, acc, colterm, scale, bias, badd, sum, j, m));
        }
        return;
    }
    /* 64 values: saturating packs (exact: the values are in range) put
     * four of each vector per 128-bit lane; one dword permute restores the
     * order, and one 64-byte store writes them (four narrowing vpmovdb,
     * two µops each, and four stores before). */
    const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    char *out = (char *)dst + off;
    for (; j + 64 <= nb; j += 64) {
        const __m512i a = int8_round16(int8_out16(&k, acc, colterm, scale, bias, badd, sum, j, 0xffff));
        const __m512i b = int8_round16(int8_out16(&k, acc, colterm, scale, bias, badd, sum, j + 16, 0xffff));
        const __m512i c = int8_round16(int8_out16(&k, acc, colterm, scale, bias, badd, sum, j + 32, 0xffff));
        const __m512i d = int8_round16(int8_out16(&k, acc, colterm, scale, bias, badd, sum, j + 48, 0xffff));
        const __m512i ab = _mm512_packs_epi32(a, b), cd = _mm512_packs_epi32(c, d);
        const __m512i bytes = k.is_u8 ? _mm512_packus_epi16(ab, cd) : _mm512_packs_epi16(ab, cd);
        _mm512_storeu_si512((void *)(out + j), _mm512_permutexvar_epi32(order, bytes));
    }
    for (; j < nb; j += 16) {
        const __mmask16 m = nb - j >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (nb - j)) - 1);
        /* Narrowed in registers, then a plain 16-byte store (the masked
         * narrowing store is microcoded on Zen 4); the tail masked. */
        const __m128i q = _mm512_cvtepi32_epi8(int8_round16(int8_out16(&k, acc, colterm, scale, bias, badd, sum, j, m)));
        if (m == 0xffff) _mm_storeu_si128((__m128i *)(out + j), q);
        else _mm_mask_storeu_epi8(out + j, m, q);
    }
}
#endif

/* One output row of the direct epilogue: scaling and bias, the BiasAdd
 * (badd, NULL: none), the post-sum (sum: the row of its int8 operand, NULL:
 * none), ReLU / Clamp steps and Quantize of the program, stored at dst + off.
 * `x`: nb floats of scratch. */
static void int8_row_out(const cp_state *s, const int32_t *acc, int64_t nb, const int32_t *colterm, int32_t rowterm,
                         const float *scale, const float *bias, const float *badd, const void *sum, float *x,
                         void *dst, int64_t off) {
#ifdef CP_X86
    if (pt_isa() >= PT_ISA_AVX512) {
        int8_row_out_avx512(s, acc, nb, colterm, rowterm, scale, bias, badd, sum, dst, off);
        return;
    }
#endif
    for (int64_t j = 0; j < nb; ++j) x[j] = (float)(acc[j] - colterm[j] + rowterm) * scale[j] + bias[j];
    if (badd)
        for (int64_t j = 0; j < nb; ++j) x[j] += badd[j];
    if (sum) {
        const float sc = s->q_sum_scale, zp = s->q_sum_zp;
        if (s->q_sum_dt == dnnl_u8)
            for (int64_t j = 0; j < nb; ++j) x[j] += ((float)((const uint8_t *)sum)[j] - zp) * sc;
        else
            for (int64_t j = 0; j < nb; ++j) x[j] += ((float)((const int8_t *)sum)[j] - zp) * sc;
    }
    for (int c = 0; c < s->q_nclamp; ++c) {
        const float lo = s->q_lo[c], hi = s->q_hi[c];
        if (s->q_relu[c]) {
            for (int64_t j = 0; j < nb; ++j) x[j] = x[j] > 0.f ? x[j] : (x[j] != x[j] ? x[j] : 0.f);
        } else {
            for (int64_t j = 0; j < nb; ++j) {
                const float v = x[j] > lo ? x[j] : lo;
                x[j] = v < hi ? v : hi;
            }
        }
    }
    if (s->q_quant) {
        const float inv = s->q_inv_scale, zp = s->q_out_zp;
        if (s->q_quant_zp)
            for (int64_t j = 0; j < nb; ++j) x[j] = x[j] * inv + zp;
        else
            for (int64_t j = 0; j < nb; ++j) x[j] = x[j] * inv;
    }
    switch ((int)s->out_dt) {
        case dnnl_u8: {
            uint8_t *d = (uint8_t *)dst + off;
            for (int64_t j = 0; j < nb; ++j) d[j] = (uint8_t)int8_round(x[j], 0.f, 255.f);
            break;
        }
        case dnnl_s8: {
            int8_t *d = (int8_t *)dst + off;
            for (int64_t j = 0; j < nb; ++j) d[j] = (int8_t)int8_round(x[j], -128.f, 127.f);
            break;
        }
        default: memcpy((float *)dst + off, x, (size_t)nb * sizeof(float)); break;
    }
}

/* The s32 tile (t->fc) becomes f32 in place:
 *   a_scale · w_scale(oc) · Σ (a - za)(b - zb) + bias(oc)
 * with Σ (a - za)(b - zb) = Σ ab - za·colsum - zb·rowsum + K·za·zb, exact in
 * integers (int32 where every term provably fits, else int64). */
static void int8_tile_to_f32(const cp_args *A, int64_t g, int64_t p0, int64_t q0, int64_t mb, int64_t nb,
                             const int32_t *rowsum, const int32_t *colsum, const cp_bufs *t) {
    const cp_state *s = A->s;
    const int64_t ldc = s->NB, K = s->K;
    const int64_t za = s->q_a_zp + (s->q_a_dt == dnnl_s8 ? 128 : 0), zb = s->q_w_zp;
    float scale[CP_NB_ENGINE], bias[CP_NB_ENGINE], badd[CP_NB_ENGINE];
    int32_t colterm[CP_NB_ENGINE];
    const pt_tview *bv = s->q_direct_out && s->q_badd_port >= 0 ? &A->in[s->q_badd_port] : NULL;
    for (int64_t j = 0; j < nb; ++j) {
        const int64_t oc = g * s->Q + q0 + j;
        scale[j] = s->q_a_scale * s->q_w_scales[oc * s->q_w_scale_step];
        bias[j] = A->conv_bias ? (float)A->conv_bias[oc] : 0.f;
        colterm[j] = (int32_t)(za * colsum[j]);
        if (bv) badd[j] = pt_load_f32(bv->data, s->q_badd_dt, oc * s->q_badd_stride);
    }
    /* |Σ ab|, |za·colsum| <= K·255·128; |zb·rowsum|, |K·za·zb| <= K·255·255. */
    const bool narrow = narrow_sums(s);
    int64_t pos[4] = {0, 0, 0, 0}, idx[CP_MAXD];
    if (s->q_direct_out) conv_decode(s, p0, pos);
    for (int64_t i = 0; i < mb; ++i) {
        int32_t *ci = (int32_t *)t->fc + i * ldc;
        float *fi = t->fc + i * ldc;
        const int64_t row_term = K * za * zb - zb * (int64_t)rowsum[i];
        if (narrow && s->q_direct_out) {
            int64_t off = 0, soff = 0;
            conv_out_index(s, pos, g * s->Q + q0, idx + s->out_lead);
            for (int d = 0; d < s->out_lead; ++d) idx[d] = 0;
            for (int d = 0; d < s->out_ndims; ++d) off += idx[d] * s->out_strides[d], soff += idx[d] * s->q_sum_es[d];
            const void *sum = s->q_sum_port >= 0 ? (const char *)A->in[s->q_sum_port].data + soff : NULL;
            int8_row_out(s, ci, nb, colterm, (int32_t)row_term, scale, bias, bv ? badd : NULL, sum, fi,
                         A->out[0].data, off);
            if (++pos[3] == s->yd[4]) {
                pos[3] = 0;
                if (++pos[2] == s->yd[3]) {
                    pos[2] = 0;
                    if (++pos[1] == s->yd[2]) pos[1] = 0, ++pos[0];
                }
            }
            continue;
        }
        if (narrow) {
            const int32_t rt = (int32_t)row_term;
            for (int64_t j = 0; j < nb; ++j) {
                const int32_t v = ci[j] - colterm[j] + rt;
                fi[j] = (float)v * scale[j] + bias[j];
            }
        } else {
            for (int64_t j = 0; j < nb; ++j) {
                const int64_t v = (int64_t)ci[j] - za * (int64_t)colsum[j] + row_term;
                fi[j] = (float)v * scale[j] + bias[j];
            }
        }
    }
}

static const char *weight_panels(const cp_args *A, int64_t blk, const cp_bufs *t, bool *finite);

/* A work item of a quantized convolution: weights panels (cached or packed
 * here), then per row block im2col, src panels with their row sums, the
 * s32 tile, its scaling and the epilogue. */
static void run_unit_int8(const cp_args *A, int64_t g, int64_t qb, int64_t mb_first, int64_t mb_last,
                          const cp_bufs *t) {
    const cp_state *s = A->s;
    const pt_gemm_ukernel *uk = A->fuk;
    const int64_t q0 = qb * s->NB, nb = s->Q - q0 < s->NB ? s->Q - q0 : s->NB;
    bool finite; /* integers always are */
    const char *bp = weight_panels(A, g * s->qblocks + qb, t, &finite);
    (void)finite;
    const int32_t *colsum = (const int32_t *)(bp + int8_panel_bytes(s, uk));
    int32_t *rowsum = (int32_t *)t->qsum;
    const int64_t ldc = s->NB, Kp = pt_gemm_kc_padded(uk, s->K);
    const pt_gemm_operand ao = {.dt = s->q_a_dt, .s_row = s->K, .s_k = 1};
    const int64_t *es = s->q_a_es;
    int64_t rs = 0;
    bool across = false;
    const bool in_place = rows_in_place(s, es, &rs, &across);
    const pt_gemm_operand direct = {.dt = s->q_a_dt, .s_row = rs, .s_k = es[1]};
    const int64_t img = s->P / s->yd[0]; /* positions per image */
    const bool rows_direct = conv_rows_packable_int8(A);
    for (int64_t mbk = mb_first; mbk < mb_last; ++mbk) {
        const int64_t m0 = mbk * s->MB, mb = s->P - m0 < s->MB ? s->P - m0 : s->MB;
        pt_gemm_ukr_fn run = uk->run; /* run_prepped for A packed in the prepared layout */
        bool computed = false;        /* the tile's products already ran strip by strip */
        if (in_place && (across || m0 / img == (m0 + mb - 1) / img)) {
            const uint8_t *x = (const uint8_t *)A->in[s->q_a_port].data + (m0 / img) * es[0] + g * s->Cin_g * es[1];
            pt_gemm_pack_panels(uk, false, &direct, x, NULL, NULL, m0 % img, mb, 0, s->K, t->fap, rowsum);
        } else if (rows_direct && uk->pack_a_rows_prepped && Kp <= CP_INT8_KC) {
            /* Prepared A (AMX) a strip at a time, each strip's products
             * right after its packing: its tiles load from L1. */
            for (int64_t i0 = 0; i0 < mb; i0 += uk->mr) {
                const int mr = (int)(mb - i0 < uk->mr ? mb - i0 : uk->mr);
                conv_pack_a_rows(A, g, m0 + i0, mr, t, rowsum + i0);
                for (int64_t j0 = 0; j0 < nb; j0 += uk->nr) {
                    const int nr = (int)(nb - j0 < uk->nr ? nb - j0 : uk->nr);
                    uk->run_prepped(Kp, t->fap, (const uint8_t *)bp + j0 * Kp, (int32_t *)t->fc + i0 * ldc + j0, ldc,
                                    mr, nr, 0);
                }
            }
            computed = true;
        } else if (rows_direct) {
            conv_pack_a_rows(A, g, m0, mb, t, rowsum);
            if (uk->pack_a_rows_prepped) run = uk->run_prepped;
        } else {
            conv_im2col_int8(A, g, m0, mb, (uint8_t *)t->fa);
            pt_gemm_pack_panels(uk, false, &ao, t->fa, NULL, NULL, 0, mb, 0, s->K, t->fap, rowsum);
        }
        /* A B strip of CP_INT8_KC k stays in L1 while the row strips pass. */
        for (int64_t k0 = 0; k0 < Kp && !computed; k0 += CP_INT8_KC) {
            const int64_t kc = Kp - k0 < CP_INT8_KC ? Kp - k0 : CP_INT8_KC;
            for (int64_t j0 = 0; j0 < nb; j0 += uk->nr)
                for (int64_t i0 = 0; i0 < mb; i0 += uk->mr) {
                    const uint8_t *a = (const uint8_t *)t->fap + i0 * Kp + k0 * uk->mr;
                    const uint8_t *b = (const uint8_t *)bp + j0 * Kp + k0 * uk->nr;
                    const int mr = (int)(mb - i0 < uk->mr ? mb - i0 : uk->mr);
                    const int nr = (int)(nb - j0 < uk->nr ? nb - j0 : uk->nr);
                    run(kc, a, b, (int32_t *)t->fc + i0 * ldc + j0, ldc, mr, nr, k0 > 0);
                }
        }
        int8_tile_to_f32(A, g, m0, q0, mb, nb, rowsum, colsum, t);
        if (!s->q_direct_out || !narrow_sums(s)) conv_epilogue(A, g, m0, mb, q0, nb, t, NULL, 0);
    }
}

/* ---- work items -------------------------------------------------------------- */

static void run_unit(const cp_args *A, int64_t u, const cp_bufs *t) {
    const cp_state *s = A->s;
    cp_args exact;
    int64_t mc = u % s->mchunks, rest = u / s->mchunks;
    int64_t qb = rest % s->qblocks, b = rest / s->qblocks;
    int64_t q0 = qb * s->NB, nb = s->Q - q0 < s->NB ? s->Q - q0 : s->NB;
    int64_t mb_first = mc * s->mblocks_per_chunk, mb_last = mb_first + s->mblocks_per_chunk;
    if (mb_last > s->mblocks) mb_last = s->mblocks;
    if (mb_first >= mb_last) return;
    int64_t bi[CP_MAXD];
    /* Padding taps hold zeros in A.  Adding 0 * w leaves a sum unchanged
     * unless w is not finite or the sum is -0, which a sum starting from a
     * bias that is not -0 never is (round to nearest); otherwise the masked
     * kernel skips them exactly as the reference does. */
    bool need_mask = false, finite = true;
    const char *bpanels = NULL;
    if (A->q8) {
        run_unit_int8(A, b, qb, mb_first, mb_last, t);
        return;
    }
    if (s->kind == CP_MATMUL) {
        mm_batch_index(s, b, bi);
        mm_pack_b(A, bi, q0, nb, t);
    } else if (A->fuk && (s->w_layout || !A->bias_neg_zero) &&
               (bpanels = weight_panels(A, b * s->qblocks + qb, t, &finite), finite || s->w_layout)) {
        /* On the GEMM microkernels: im2col rows, panels, f32 accumulation.
         * Weights the user packed (option 2) have no plain copy to fall back
         * on: they always run here. */
        int64_t rs = 0;
        bool across = false;
        const bool in_place = s->a_direct && rows_in_place(s, s->a_es, &rs, &across);
        const bool rows_direct = conv_rows_packable(A);
        /* The sums start from the bias: one f32 row of it, copied per tile row
         * (converting the f64 bias per element took 8 % of a 3x3 f32 conv),
         * or where the in-place tile starts its accumulators (the copies
         * took 3 % there). */
        float brow[CP_NB_ENGINE];
        for (int64_t j = 0; j < nb; ++j) brow[j] = A->conv_bias ? (float)A->conv_bias[b * s->Q + q0 + j] : 0.f;
        const pt_gemm_operand direct = {.dt = dnnl_f32, .s_row = rs, .s_k = s->a_es[1], .round = A->fround};
        for (int64_t mbk = mb_first; mbk < mb_last; ++mbk) {
            int64_t m0 = mbk * s->MB, mb = s->P - m0 < s->MB ? s->P - m0 : s->MB;
            const int64_t img = s->P / s->yd[0]; /* positions per image */
            if (in_place && (across || m0 / img == (m0 + mb - 1) / img)) {
                /* src rows read where they are: positions of one stride */
                const float *x = (const float *)A->in[s->a_port].data + (m0 / img) * s->a_es[0] +
                                 b * s->Cin_g * s->a_es[1];
                pt_gemm_pack_panels(A->fuk, false, &direct, x, NULL, NULL, m0 % img, mb, 0, s->K, t->fap, NULL);
            } else if (rows_direct && conv_segs_ok(A)) {
                int64_t ld = 0;
                float *out = conv_out_rows(A, b, m0, q0, &ld);
                conv_tile_segs(A, b, m0, mb, nb, bpanels, brow, t, out ? out : t->fc, out ? ld : s->NB);
                conv_epilogue(A, b, m0, mb, q0, nb, t, out, ld);
                continue;
            } else if (rows_direct) {
                conv_pack_a_rows(A, b, m0, mb, t, NULL);
            } else {
                conv_pack_a(A, b, m0, mb, t, t->fa);
                pt_gemm_operand o = {.dt = dnnl_f32, .s_row = s->K, .s_k = 1, .round = A->fround};
                pt_gemm_pack_panels(A->fuk, false, &o, t->fa, NULL, NULL, 0, mb, 0, s->K, t->fap, NULL);
            }
            for (int64_t i = 0; i < mb; ++i) memcpy(t->fc + i * s->NB, brow, (size_t)nb * sizeof(float));
            compute_tile_fast(A, mb, nb, bpanels, t);
            conv_epilogue(A, b, m0, mb, q0, nb, t, NULL, 0);
        }
        return;
    } else {
        exact = *A; /* a unit the engine path cannot take runs exactly */
        exact.fuk = NULL;
        A = &exact;
        conv_pack_b(A, b, q0, nb, t);
        need_mask = A->bias_neg_zero;
        const int64_t nbp = (nb + CP_NR - 1) / CP_NR * CP_NR * s->K;
        for (int64_t e = 0; e < nbp && !need_mask; ++e) need_mask = !isfinite(t->bp[e]);
    }
    const int64_t ldc = s->NB;
    for (int64_t mbk = mb_first; mbk < mb_last; ++mbk) {
        int64_t m0 = mbk * s->MB, mb = s->P - m0 < s->MB ? s->P - m0 : s->MB;
        int64_t rows = (mb + CP_MR - 1) / CP_MR * CP_MR;
        bool masked = false;
        if (s->kind == CP_MATMUL) {
            mm_pack_a(A, bi, m0, mb, t);
            memset(t->c, 0, (size_t)(rows * ldc) * sizeof(double));
        } else {
            conv_pack_a(A, b, m0, mb, t, NULL);
            masked = need_mask;
            for (int64_t i = 0; i < rows; ++i)
                for (int64_t j = 0; j < ldc; ++j) {
                    int64_t oc = b * s->Q + q0 + j;
                    t->c[i * ldc + j] = (A->conv_bias && j < nb) ? A->conv_bias[oc] : 0.0;
                }
        }
        compute_tile(A, mb, nb, masked, t);
        if (s->kind == CP_MATMUL) mm_epilogue(A, bi, m0, mb, q0, nb, t);
        else conv_epilogue(A, b, m0, mb, q0, nb, t, NULL, 0);
    }
}

/* The kind a run under `mode` uses (as cp_run chooses it). */
static pt_gemm_kind conv_kind(const cp_state *s, dnnl_fpmath_mode_t mode) {
    return pt_gemm_float_kind(s->a.dt, s->w.dt, false, mode, false);
}


/* Thread 0's buffers (free before the parallel region). */
static cp_bufs thread_bufs(const cp_state *s, char *mine) {
    return (cp_bufs){
        .ap = (double *)(mine + s->t_ap),
        .bp = (double *)(mine + s->t_bp),
        .c = (double *)(mine + s->t_c),
        .mask = (double *)(mine + s->t_mask),
        .oob = (uint8_t *)(mine + s->t_oob),
        .box = (float *)(mine + s->t_box),
        .run = (float *)(mine + s->t_run),
        .tmp = (float *)(mine + s->t_tmp),
        .fa = (float *)(mine + s->t_fa),
        .fc = (float *)(mine + s->t_fc),
        .fap = mine + s->t_fap,
        .fbp = mine + s->t_fbp,
        .qsum = (int32_t *)(mine + s->t_qsum),
    };
}

typedef struct {
    const cp_args *A;
    cp_bufs t;
} conv_fill_ctx;

/* Bytes of one (group, column block) of weight panels for microkernel uk. */
static size_t weight_block_bytes(const cp_state *s, const pt_gemm_ukernel *uk) {
    if (uk->kind == PT_GEMM_U8S8) return int8_block_bytes(s, uk);
    const int64_t nbp = (s->NB + uk->nr - 1) / uk->nr * uk->nr;
    return align64((size_t)(nbp * pt_gemm_kc_padded(uk, s->K)) * pt_gemm_panel_elem_bytes(uk->kind));
}

/* Packs block blk = g * qblocks + qb of the weights at dst (with thread
 * buffers t); false when a weight is not finite (float kinds). */
static bool pack_weight_block(const cp_args *A, int64_t blk, const cp_bufs *t, char *dst) {
    const cp_state *s = A->s;
    const int64_t g = blk / s->qblocks, qb = blk % s->qblocks;
    const int64_t q0 = qb * s->NB, nb = s->Q - q0 < s->NB ? s->Q - q0 : s->NB;
    if (A->q8) {
        conv_pack_b_int8(A, g, q0, nb, t, dst);
        return true;
    }
    cp_bufs tb = *t;
    tb.fbp = dst;
    return conv_pack_b(A, g, q0, nb, &tb);
}

/* Weight panels of block blk: packed ahead (constant cache, the user's
 * packed layout), else packed into shared scratch by the first work item
 * that needs them; an item that finds the block being packed by another
 * packs its own copy rather than wait (a thread that lost its core may be
 * the one packing).  *finite: the block's weights are all finite. */
static const char *weight_panels(const cp_args *A, int64_t blk, const cp_bufs *t, bool *finite) {
    if (A->wpanels) {
        *finite = A->q8 || A->s->w_layout || A->wpanels[-1] != 0;
        return A->wpanels + (size_t)blk * A->wblock_bytes;
    }
    if (A->wstate) {
        char *dst = A->wshared + (size_t)blk * A->wblock_bytes;
        uint8_t st = __atomic_load_n(&A->wstate[blk], __ATOMIC_ACQUIRE), expect = 0;
        if (st == 2) {
            *finite = A->wfinite[blk] != 0;
            return dst;
        }
        if (st == 0 && __atomic_compare_exchange_n(&A->wstate[blk], &expect, 1, false, __ATOMIC_ACQ_REL,
                                                   __ATOMIC_ACQUIRE)) {
            A->wfinite[blk] = pack_weight_block(A, blk, t, dst);
            __atomic_store_n(&A->wstate[blk], 2, __ATOMIC_RELEASE);
            *finite = A->wfinite[blk] != 0;
            return dst;
        }
    }
    *finite = pack_weight_block(A, blk, t, t->fbp);
    return t->fbp;
}

/* Packs every (group, column block) of the constant weights: 64 bytes of
 * header (byte 63: all weights finite) then one block after another. */
static void fill_conv_weights(void *vctx, void *dst) {
    const conv_fill_ctx *f = vctx;
    const cp_args *A = f->A;
    const cp_state *s = A->s;
    char *out = (char *)dst + 64;
    bool finite = true;
    for (int64_t blk = 0; blk < s->G * s->qblocks; ++blk)
        finite = pack_weight_block(A, blk, &f->t, out + (size_t)blk * A->wblock_bytes) && finite;
    memset(dst, 0, 64);
    ((char *)dst)[63] = finite;
}

/* Constant weights: their panels from the constant tensor cache (packed on
 * the first execution), named as MatMul weights are (const_weights.h). */
static pt_status cache_conv_weights(cp_args *A, const pt_exec_ctx *ctx, char *thread0, pt_const_entry **entry) {
    const cp_state *s = A->s;
    const pt_gemm_ukernel *uk = A->fuk;
    A->wblock_bytes = weight_block_bytes(s, uk);
    const size_t bytes = 64 + (size_t)(s->G * s->qblocks) * A->wblock_bytes;
    const pt_tview *w = &A->in[s->w_port];
    const pt_const_key key = pt_const_key_for(s, 2 + (uint64_t)uk->kind * 8 + (uint64_t)A->fround, ctx, s->w_port, w->data);
    conv_fill_ctx fc = {A, thread_bufs(s, thread0)};
    const void *data = NULL;
    PT_CHECK(pt_const_cache_acquire(&key, pt_const_fingerprint(w->data, pt_lt_mem_size(&w->lt)), bytes,
                                    fill_conv_weights, &fc, entry, &data));
    if (data) A->wpanels = (const char *)data + 64;
    return dnnl_success;
}

/* The units of a run, on an OpenMP team or the caller and the helpers
 * (runtime/share.h). */
typedef struct {
    cp_args *A;
    char *tbase;
    pt_share_slice *slices; /* NULL: one thread takes them all */
    int64_t units;
    int nt;
} cp_units_job;

static void cp_units_body(void *v, int tid) {
    const cp_units_job *j = v;
    cp_bufs t = thread_bufs(j->A->s, j->tbase + (size_t)tid * j->A->s->thread_bytes);
    if (!j->slices) {
        for (int64_t u = 0; u < j->units; ++u) run_unit(j->A, u, &t);
        return;
    }
    for (int64_t u; pt_share_next(j->slices, tid, j->nt, &u);) run_unit(j->A, u, &t);
}

static pt_status cp_run(const pt_fused *f, const pt_tview *in, size_t nin, const pt_tview *out, size_t nout,
                        void *scratch, const pt_exec_ctx *ctx) {
    const cp_state *s = f->state;
    if (nout < 1) return pt_err(dnnl_invalid_arguments, "compute_post_ops: no output");
    if (s->nbatch == 0 || s->P == 0 || s->Q == 0) return dnnl_success;
    if (!scratch) return pt_err(dnnl_invalid_arguments, "compute_post_ops: no scratchpad");
    if (s->mme) return pt_mme_run(s, in, nin, out, scratch, ctx);
    char *base = scratch;
    cp_args A;
    memset(&A, 0, sizeof A);
    A.s = s;
    A.in = in;
    A.out = out;
    A.mode = ctx ? ctx->fpmath : dnnl_fpmath_mode_strict;
    A.uk = cp_pick_ukernel();
    A.ukm = cp_pick_ukernel_masked();
    const bool narrow_ints = ctx && ctx->apply_to_int &&
                             (A.mode == dnnl_fpmath_mode_bf16 || A.mode == dnnl_fpmath_mode_any);
    if (s->conv_int8 && !narrow_ints) {
        /* int8 data keeps the integer kind unless the math mode applies to
         * integers too (as MatMul decides, seed 002). */
        A.q8 = true;
        A.fuk = pt_gemm_ukernel_default(PT_GEMM_U8S8);
        A.fround = dnnl_fpmath_mode_strict;
    } else if (s->conv_engine) {
        /* bf16 operands, or f32 ones under the bf16 / any modes, on the bf16
         * kind; f32 otherwise, its panels rounded as f16 / tf32 modes say. */
        const bool bf16 = conv_kind(s, A.mode) == PT_GEMM_BF16;
        A.fuk = pt_gemm_ukernel_default(bf16 ? PT_GEMM_BF16 : PT_GEMM_F32);
        A.fround = bf16 ? dnnl_fpmath_mode_strict : A.mode;
    }
    A.ba = base + s->off_bound_a;
    A.bw = base + s->off_bound_w;
    A.be = base + s->off_bound_e;
    PT_CHECK(pt_postops_bind(s->a.prog, in, nin, base + s->off_bound_a));
    PT_CHECK(pt_postops_bind(s->w.prog, in, nin, base + s->off_bound_w));
    PT_CHECK(pt_postops_bind(s->epi, in, nin, base + s->off_bound_e));
    if (s->kind != CP_MATMUL && s->bias_port >= 0) {
        double *bias = (double *)(base + s->off_bias);
        const pt_tview *bv = &in[s->bias_port];
        int64_t C = s->yd[1], idx[CP_MAXD];
        for (int64_t c = 0; c < C; ++c) {
            int64_t rem = c, off = 0;
            for (int d = bv->lt.ndims - 1; d >= 0; --d) {
                idx[d] = rem % bv->lt.dims[d];
                rem /= bv->lt.dims[d];
                off += idx[d] * bv->lt.layout.strides[d];
            }
            bias[c] = (double)pt_load_f32(bv->data, bv->lt.data_type, off);
        }
        A.conv_bias = bias;
        for (int64_t c = 0; c < C; ++c) A.bias_neg_zero = A.bias_neg_zero || (bias[c] == 0.0 && signbit(bias[c]));
    }
    char *tbase0 = base + s->shared_bytes;
    pt_const_entry *wentry = NULL;
    if (s->w_layout) { /* the user's buffer holds the packed panels (option 2) */
        if (!A.fuk || s->w_layout_kind != (int)A.fuk->kind)
            return pt_err(dnnl_invalid_arguments, "Convolution: packed weights of another kind than this run's");
        A.wblock_bytes = s->w_block_bytes;
        A.wpanels = (const char *)in[s->w_port].data + 64;
    } else if (A.fuk && s->w_constant) {
        PT_CHECK(cache_conv_weights(&A, ctx, tbase0, &wentry));
    }
    const int64_t units = s->nbatch * s->qblocks * s->mchunks;
    int nt = ctx && ctx->nthreads > 0 ? ctx->nthreads : 1;
    if (nt > s->nthr) nt = s->nthr;
    if ((int64_t)nt > units) nt = (int)units;
    /* Small products run on the caller and the helpers of runtime/share.h
     * (an OpenMP region costs up to a scheduler tick, 4 ms, when another
     * process holds a core), the smallest on the caller alone. */
    const double macs = (double)s->nbatch * (double)s->P * (double)s->Q * (double)s->K;
    const bool omp = macs >= (double)(1 << 21) * nt;
    if (macs < (double)(1 << 16) * nt) nt = 1;
    char *tbase = base + s->shared_bytes;
    /* Weights not cached but shared by several work items: packed once by
     * this execution, each block by the first item that needs it. */
    const int64_t wblocks = s->G * s->qblocks;
    const bool pack_shared = A.fuk && !A.wpanels && s->mchunks > 1 && s->wpack_bytes &&
                             wblocks * (int64_t)weight_block_bytes(s, A.fuk) <= (int64_t)s->wpack_bytes;
    if (pack_shared) {
        A.wblock_bytes = weight_block_bytes(s, A.fuk);
        A.wshared = base + s->off_wpack;
        A.wstate = (uint8_t *)(base + s->off_wfinite);
        A.wfinite = A.wstate + wblocks;
        memset(A.wstate, 0, (size_t)wblocks);
    }
    /* Slices with stealing: each thread finds its units' data in its
     * caches at the next execution (an OpenMP team as the helpers). */
    if (nt > PT_SHARE_MAX_THREADS) nt = PT_SHARE_MAX_THREADS;
    if (units >= (INT64_C(1) << 31)) nt = 1;
    pt_share_slice slices[PT_SHARE_MAX_THREADS];
    if (nt > 1) pt_share_slices_init(slices, units, nt);
    cp_units_job job = {&A, tbase, nt > 1 ? slices : NULL, units, nt};
    pt_share_team_run(nt, omp, cp_units_body, &job);
    pt_const_cache_release(wentry);
    return dnnl_success;
}

void pt_cp_state_free(cp_state *s) {
    if (!s) return;
    pt_postops_destroy(s->a.prog);
    pt_postops_destroy(s->w.prog);
    pt_postops_destroy(s->epi);
    pt_mme_free(s);
    pt_const_cache_forget_owner(s);
    free(s);
}

static void cp_release(pt_fused *f) {
    pt_cp_state_free(f->state);
    f->state = NULL;
}

/* ---- plan -------------------------------------------------------------------- */

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Block sizes, work split and scratch layout. */
static pt_status plan(cp_state *s) {
    const int64_t K = s->K;
    /* Quantized runs: whole strips of the U8S8 row (AMX takes 32 rows, so
     * 72 would end every block on a strip of 8 computed as 32), and of the
     * exact path's CP_MR, which a block may fall back to; at most CP_MB_MAX. */
    int64_t unit = CP_MR;
    if (s->conv_int8) {
        const int64_t mr = pt_gemm_ukernel_default(PT_GEMM_U8S8)->mr;
        unit = mr;
        while (unit % CP_MR) unit += mr; /* the least common multiple */
        if (cdiv(CP_MB_INT8, unit) * unit > CP_MB_MAX) unit = CP_MR;
    }
    const int64_t mb_max = cdiv(CP_MB_INT8, unit) * unit;
    int64_t MB = s->conv_int8 ? (s->P < mb_max ? cdiv(s->P > 0 ? s->P : 1, unit) * unit : mb_max)
                              : (s->P < CP_MB ? cdiv(s->P > 0 ? s->P : 1, CP_MR) * CP_MR : CP_MB);
    const int64_t nb_max = s->conv_engine ? CP_NB_ENGINE : CP_NB;
    int64_t NB = s->Q < nb_max ? cdiv(s->Q > 0 ? s->Q : 1, CP_NR) * CP_NR : nb_max;
    size_t tmp_floats = pt_postops_tmp_floats(s->a.prog, CP_RUN);
    size_t tw = pt_postops_tmp_floats(s->w.prog, CP_RUN), te = pt_postops_tmp_floats(s->epi, CP_RUN);
    if (tw > tmp_floats) tmp_floats = tw;
    if (te > tmp_floats) tmp_floats = te;
    bool conv = s->kind != CP_MATMUL;
    for (;;) {
        size_t box = (size_t)(MB > NB ? MB : NB) * (size_t)(K > 0 ? K : 1);
        if (conv) {
            /* Input windows: channels of a group x the widest input span of one row segment. */
            int64_t seg = MB < s->yd[4] ? MB : s->yd[4];
            int64_t span = s->kind == CP_CONV ? (seg - 1) * s->S[2] + (s->wd[4] - 1) * s->Dl[2] + 1
                                              : (seg - 1 + (s->wd[4] - 1) * s->Dl[2]) / s->S[2] + 2;
            if (span > s->xd[4]) span = s->xd[4];
            int64_t cg = s->kind == CP_CONV ? s->Cin_g : s->xd[1] / s->G;
            size_t win = (size_t)(cg > 0 ? cg : 1) * (size_t)(span > 0 ? span : 1);
            if (win > box) box = win;
        }
        size_t kk = (size_t)(K > 0 ? K : 1);
        s->t_ap = 0;
        s->t_bp = align64(s->t_ap + (size_t)MB * kk * sizeof(double));
        s->t_c = align64(s->t_bp + (size_t)NB * kk * sizeof(double));
        s->t_mask = align64(s->t_c + (size_t)MB * (size_t)NB * sizeof(double));
        s->t_oob = align64(s->t_mask + (conv ? (size_t)MB * kk * sizeof(double) : 0));
        s->t_box = align64(s->t_oob + (size_t)MB);
        s->t_run = align64(s->t_box + box * sizeof(float));
        s->t_tmp = align64(s->t_run + CP_RUN * sizeof(float));
        size_t end = align64(s->t_tmp + tmp_floats * sizeof(float));
        if (s->conv_engine) {
            /* f32 panels are the larger kind; strips rounded up to the widest row. */
            const size_t kp = kk + 1, mr = (size_t)s->conv_mr, nr = (size_t)s->conv_nr;
            const size_t rows = (size_t)(MB > NB ? MB : NB);
            s->t_fa = end;
            s->t_fc = align64(s->t_fa + rows * kk * sizeof(float));
            s->t_fap = align64(s->t_fc + (size_t)MB * (size_t)NB * sizeof(float));
            s->t_fbp = align64(s->t_fap + ((size_t)MB + mr) * kp * sizeof(float));
            size_t bbytes = ((size_t)NB + nr) * kp * sizeof(float);
            if (s->conv_int8) {
                /* U8S8: weight panels and their column sums in the f32 B
                 * panels' place, row sums of their own. */
                const size_t ib = align64(((size_t)NB + nr) * (kk + 3)) + align64(((size_t)NB + nr) * sizeof(int32_t));
                if (ib > bbytes) bbytes = ib;
            }
            end = align64(s->t_fbp + bbytes);
            if (s->conv_int8) {
                s->t_qsum = end;
                end = align64(s->t_qsum + (size_t)MB * sizeof(int32_t));
            }
        }
        s->thread_bytes = end;
        if (s->thread_bytes <= CP_THREAD_CAP) break;
        if (MB > CP_MR) MB = MB / 2 / CP_MR * CP_MR > CP_MR ? MB / 2 / CP_MR * CP_MR : CP_MR;
        else if (NB > CP_NR) NB = NB / 2 / CP_NR * CP_NR > CP_NR ? NB / 2 / CP_NR * CP_NR : CP_NR;
        else return pt_err(dnnl_unimplemented, "compute_post_ops: reduction of %lld too long", (long long)K);
    }
    s->MB = MB, s->NB = NB;
    s->qblocks = s->Q > 0 ? cdiv(s->Q, NB) : 1;
    s->mblocks = s->P > 0 ? cdiv(s->P, MB) : 1;
    int nthr = 1;
#ifdef _OPENMP
    nthr = omp_get_max_threads();
#endif
    s->nthr = nthr > 0 ? nthr : 1;
    /* Enough work items for every thread (a few each), rows split last.  On
     * the microkernels the weights are packed once per execution (or
     * cached), so smaller items cost nothing more and even out the threads'
     * shares. */
    int64_t base = s->nbatch * s->qblocks;
    int64_t want = (int64_t)s->nthr * (s->conv_engine ? 16 : 4);
    int64_t mchunks = base >= want ? 1 : cdiv(want, base > 0 ? base : 1);
    if (mchunks > s->mblocks) mchunks = s->mblocks;
    if (mchunks < 1) mchunks = 1;
    s->mblocks_per_chunk = cdiv(s->mblocks, mchunks);
    s->mchunks = cdiv(s->mblocks, s->mblocks_per_chunk);
    size_t shared = 0;
    s->off_bound_a = shared;
    shared = align64(shared + pt_postops_bound_bytes(s->a.prog));
    s->off_bound_w = shared;
    shared = align64(shared + pt_postops_bound_bytes(s->w.prog));
    s->off_bound_e = shared;
    shared = align64(shared + pt_postops_bound_bytes(s->epi));
    s->off_bias = shared;
    if (conv) shared = align64(shared + (size_t)(s->yd[1] > 0 ? s->yd[1] : 1) * sizeof(double));
    s->off_wpack = s->off_wfinite = 0;
    s->wpack_bytes = 0;
    if (s->conv_engine && s->mchunks > 1) {
        /* Weights packed once per execution (when not cached): room for the
         * largest kind a run may choose, within CP_WPACK_CAP. */
        const pt_gemm_kind kinds[3] = {PT_GEMM_F32, PT_GEMM_BF16, PT_GEMM_U8S8};
        size_t blk = 0;
        for (int k = 0; k < (s->conv_int8 ? 3 : 2); ++k) {
            const size_t b = weight_block_bytes(s, pt_gemm_ukernel_default(kinds[k]));
            if (b > blk) blk = b;
        }
        const size_t nblk = (size_t)(s->G * s->qblocks);
        if (blk * nblk <= CP_WPACK_CAP) {
            s->off_wpack = shared;
            s->wpack_bytes = blk * nblk;
            shared = align64(shared + s->wpack_bytes);
            s->off_wfinite = shared; /* per block: state, then the finite flag */
            shared = align64(shared + 2 * nblk);
        }
    }
    s->shared_bytes = shared;
    return dnnl_success;
}

/* A constant operand of a Dequantize: false unless it is a program constant. */
static bool const_param(const pt_postops *p, const po_opd *o, const float **v) {
    if (o->kind != OPD_CONST) return false;
    *v = p->consts[o->cidx];
    return true;
}

/* The direct epilogue of the quantized path (q_direct_out): the program is
 * a chain BiasAdd? -> Add(., Dequantize(int8 port))? -> ReLU / Clamp* ->
 * Quantize? over the anchor's own result, the
 * output channels-last and dense along the channels. */
static void plan_int8_direct_out(cp_state *s) {
    s->q_direct_out = false;
    const pt_postops *p = s->epi;
    if (!p || s->round_floats || s->out_ndims < 1) return;
    if (s->ymap[1] != s->out_ndims - s->out_lead - 1 || s->out_strides[s->out_ndims - 1] != 1) return;
    if (s->out_dt != dnnl_u8 && s->out_dt != dnnl_s8 && s->out_dt != dnnl_f32) return;
    int reg = 0, n = 0, sum_reg = -1, sum_port = -1;
    s->q_quant = false;
    s->q_badd_port = s->q_sum_port = -1;
    const int last = p->ndims - 1;
    for (int i = 0; i < p->nins; ++i) {
        const po_instr *in = &p->ins[i];
        const po_opd *a0 = &in->a[0], *b = &in->a[1];
        if (in->ik == I_DEQUANT && sum_reg < 0 && s->q_sum_port < 0 && n == 0 && !in->round && in->na >= 2 &&
            a0->kind == OPD_PORT && (a0->dt == dnnl_u8 || a0->dt == dnnl_s8) && a0->es[last] == 1) {
            /* Dequantize of the post-sum operand: read at each output's own
             * index, one scale and zero point */
            const float *sc, *zp = NULL;
            if (!const_param(p, b, &sc) || (in->na > 2 && !const_param(p, &in->a[2], &zp))) return;
            for (int d = 0; d < p->ndims; ++d) {
                if (a0->div[d] != 1 || b->es[d] || (zp && in->a[2].es[d])) return;
                s->q_sum_es[d] = a0->es[d];
            }
            s->q_sum_dt = a0->dt;
            s->q_sum_scale = sc[0];
            s->q_sum_zp = zp ? zp[0] : 0.f;
            sum_reg = in->dst;
            sum_port = a0->port;
            continue;
        }
        if (sum_reg >= 0 && in->ik == I_BINARY && in->kind == dnnl_graph_op_add && !in->round && in->na == 2 &&
            a0->kind == OPD_REG && b->kind == OPD_REG &&
            ((a0->reg == reg && b->reg == sum_reg) || (a0->reg == sum_reg && b->reg == reg))) {
            s->q_sum_port = sum_port;
            sum_reg = -1;
            reg = in->dst;
            continue;
        }
        if (sum_reg >= 0 || in->na < 1 || a0->kind != OPD_REG || a0->reg != reg || s->q_quant) return;
        if (i == 0 && in->ik == I_BINARY && in->kind == dnnl_graph_op_add && !in->round && in->na == 2 &&
            b->kind == OPD_PORT && b->div[p->ndims - 1] == 1) {
            /* BiasAdd: one value per output channel (the last dim) */
            for (int d = 0; d < p->ndims - 1; ++d)
                if (b->es[d]) return;
            s->q_badd_port = b->port;
            s->q_badd_dt = b->dt;
            s->q_badd_stride = b->es[p->ndims - 1];
        } else if (in->ik == I_UNARY && !in->round && n < 4 &&
            (in->un.kind == dnnl_graph_op_relu || in->un.kind == dnnl_graph_op_clamp)) {
            s->q_relu[n] = in->un.kind == dnnl_graph_op_relu;
            s->q_lo[n] = in->un.lo, s->q_hi[n] = in->un.hi;
            ++n;
        } else if (in->ik == I_QUANT && in->inv_given && i == p->nins - 1 && in->dt == s->out_dt) {
            const float *inv, *zp = NULL;
            if (!const_param(p, &in->a[1], &inv) || (in->na > 2 && !const_param(p, &in->a[2], &zp))) return;
            for (int d = 0; d < p->ndims; ++d)
                if (in->a[1].es[d] || (zp && in->a[2].es[d])) return;
            s->q_quant = true;
            s->q_inv_scale = inv[0];
            s->q_quant_zp = zp != NULL;
            s->q_out_zp = zp ? zp[0] : 0.f;
        } else {
            return;
        }
        reg = in->dst;
    }
    /* A float result needs no Quantize; an integer one needs it. */
    if (sum_reg >= 0 || (s->out_dt == dnnl_f32) == s->q_quant) return;
    s->q_nclamp = n;
    s->q_direct_out = true;
}

/* Whether the convolution can run on the U8S8 kind (see conv_int8 in
 * compute_post_ops.h); fills the q_* fields when it can. */
static void plan_conv_int8(cp_state *s) {
    s->conv_int8 = false;
    if (s->kind != CP_CONV || s->a.dt != dnnl_f32 || s->w.dt != dnnl_f32) return;
    const pt_postops *pa = s->a.prog, *pw = s->w.prog;
    if (!pa || !pw || pa->nins != 1 || pw->nins != 1) return;
    const po_instr *ia = &pa->ins[0], *iw = &pw->ins[0];
    if (ia->ik != I_DEQUANT || iw->ik != I_DEQUANT || ia->a[0].kind != OPD_PORT || iw->a[0].kind != OPD_PORT) return;
    if (!(ia->a[0].dt == dnnl_u8 || ia->a[0].dt == dnnl_s8) || iw->a[0].dt != dnnl_s8) return;
    for (int d = 0; d < pa->ndims; ++d)
        if (ia->a[0].div[d] != 1) return;
    for (int d = 0; d < pw->ndims; ++d)
        if (iw->a[0].div[d] != 1) return;
    /* src: one scale and one zero point, representable in the src type (a
     * padding tap holds it). */
    const float *asc, *azp = NULL, *wsc, *wzp = NULL;
    if (!const_param(pa, &ia->a[1], &asc) || (ia->na > 2 && !const_param(pa, &ia->a[2], &azp))) return;
    for (int d = 0; d < pa->ndims; ++d)
        if (ia->a[1].es[d] || (azp && ia->a[2].es[d])) return;
    const float za = azp ? azp[0] : 0.f;
    if (ia->a[0].dt == dnnl_u8 ? (za < 0.f || za > 255.f) : (za < -128.f || za > 127.f)) return;
    /* weights: scales along the output channels at most, one zero point */
    const int od = s->wmap[0];
    if (!const_param(pw, &iw->a[1], &wsc) || (iw->na > 2 && !const_param(pw, &iw->a[2], &wzp))) return;
    for (int d = 0; d < pw->ndims; ++d)
        if ((d != od && iw->a[1].es[d]) || (d == od && iw->a[1].es[d] && iw->a[1].div[d] != 1)) return;
    const int64_t step = iw->a[1].es[od], OC = s->yd[1];
    int32_t zb = 0;
    if (wzp) {
        const int64_t nz = iw->a[2].es[od] ? OC : 1;
        for (int64_t c = 0; c < nz; ++c)
            if (wzp[c] != wzp[0]) return;
        if (wzp[0] < -255.f || wzp[0] > 255.f) return;
        zb = (int32_t)wzp[0];
    }
    /* Scales applied to the whole sum must stay finite (a product of
     * scales that overflows, or a non-finite one, stays on the float path). */
    for (int64_t c = 0; c < OC; ++c)
        if (!isfinite(asc[0] * wsc[c * step])) return;
    if (s->K >= (1 << 23)) return;
    s->q_a_port = ia->a[0].port, s->q_w_port = iw->a[0].port;
    s->q_a_dt = ia->a[0].dt;
    s->q_a_zp = (int32_t)za, s->q_w_zp = zb;
    s->q_a_scale = asc[0];
    s->q_w_scales = wsc;
    s->q_w_scale_step = step;
    for (int c = 0; c < 5; ++c) {
        s->q_a_es[c] = s->xmap[c] >= 0 ? ia->a[0].es[s->xmap[c]] : 0;
        s->q_w_es[c] = s->wmap[c] >= 0 ? iw->a[0].es[s->wmap[c]] : 0;
    }
    s->conv_int8 = true;
    plan_int8_direct_out(s);
}

pt_status pt_compute_post_ops_finish(cp_state *s, pt_fused *fused) {
    /* A MatMul planned on the GEMM engine runs only there (its math mode is
     * the compiled partition's, which every execution uses). */
    if (s->mme) {
        *fused = (pt_fused){.run = cp_run, .release = cp_release, .state = s,
                            .scratch_bytes = pt_mme_scratch_bytes(s), .kernel_name = pt_mme_kernel_name(s)};
        return dnnl_success;
    }
    /* Convolutions run on the engine's microkernels (f32 accumulation, not
     * bit-identical: docs/numerics.md) unless the partition asks for the
     * op-by-op rounding of every intermediate. */
    if (s->kind != CP_MATMUL && !s->round_floats && s->conv_engine_allowed) {
        const pt_gemm_ukernel *f = pt_gemm_ukernel_default(PT_GEMM_F32), *h = pt_gemm_ukernel_default(PT_GEMM_BF16);
        s->conv_engine = f && h;
        /* A plain f32 input is gathered straight from memory. */
        const po_instr *in = s->a.prog && s->a.prog->nins == 1 ? &s->a.prog->ins[0] : NULL;
        if (s->kind == CP_CONV && in && in->ik == I_COPY && in->a[0].kind == OPD_PORT && in->a[0].dt == dnnl_f32) {
            bool unit = true;
            for (int d = 0; d < s->a.prog->ndims; ++d) unit = unit && in->a[0].div[d] == 1;
            for (int c = 0; c < 5; ++c) s->a_es[c] = s->xmap[c] >= 0 ? in->a[0].es[s->xmap[c]] : 0;
            s->a_direct = unit;
            s->a_port = in->a[0].port;
        }
        /* Plain f32 weights whose k runs at one stride are packed where they are. */
        const po_instr *wi = s->w.prog && s->w.prog->nins == 1 ? &s->w.prog->ins[0] : NULL;
        if (s->kind == CP_CONV && wi && wi->ik == I_COPY && wi->a[0].kind == OPD_PORT && wi->a[0].dt == dnnl_f32) {
            bool ok = true;
            for (int d = 0; d < s->w.prog->ndims; ++d) ok = ok && wi->a[0].div[d] == 1;
            int64_t es[5];
            for (int c = 0; c < 5; ++c) es[c] = s->wmap[c] >= 0 ? wi->a[0].es[s->wmap[c]] : 0;
            /* Tap t = (kd·KH + kh)·KW + kw must start at t·cg·es[1]. */
            for (int64_t kd = 0; ok && kd < s->wd[2]; ++kd)
                for (int64_t kh = 0; ok && kh < s->wd[3]; ++kh)
                    for (int64_t kw = 0; ok && kw < s->wd[4]; ++kw) {
                        const int64_t t = (kd * s->wd[3] + kh) * s->wd[4] + kw;
                        ok = kd * es[2] + kh * es[3] + kw * es[4] == t * s->Cin_g * es[1];
                    }
            if (ok && es[1] != 0) s->w_direct_port = wi->a[0].port, s->w_os = es[0], s->w_ks = es[1];
        }
        if (s->conv_engine) {
            s->conv_mr = f->mr > h->mr ? f->mr : h->mr;
            s->conv_nr = f->nr > h->nr ? f->nr : h->nr;
            plan_conv_int8(s);
            if (s->conv_int8) {
                const pt_gemm_ukernel *q = pt_gemm_ukernel_default(PT_GEMM_U8S8);
                s->conv_mr = q->mr > s->conv_mr ? q->mr : s->conv_mr;
                s->conv_nr = q->nr > s->conv_nr ? q->nr : s->conv_nr;
            }
        }
    }
    pt_status st = plan(s);
    if (st != dnnl_success) return pt_cp_state_free(s), st;
    *fused = (pt_fused){.run = cp_run, .release = cp_release, .state = s,
                        .kernel_name = s->conv_int8     ? pt_gemm_ukernel_default(PT_GEMM_U8S8)->name
                                       : s->conv_engine ? pt_gemm_ukernel_default(PT_GEMM_F32)->name
                                                        : "exact_double"};
    fused->scratch_bytes = s->shared_bytes + (size_t)s->nthr * s->thread_bytes;
    return dnnl_success;
}

size_t pt_cp_conv_weight_layout(cp_state *s, dnnl_fpmath_mode_t mode, size_t given, size_t *port) {
    const po_instr *in = s->w.prog && s->w.prog->nins == 1 ? &s->w.prog->ins[0] : NULL;
    if (!s->conv_engine || given == 0 || !in || in->ik != I_COPY || in->a[0].kind != OPD_PORT) return 0;
    const dnnl_data_type_t dt = in->a[0].dt;
    if (dt != dnnl_f32 && dt != dnnl_bf16 && dt != dnnl_f16) return 0;
    for (int d = 0; d < s->w.prog->ndims; ++d)
        if (in->a[0].div[d] != 1) return 0;
    const pt_gemm_kind kind = conv_kind(s, mode);
    const pt_gemm_ukernel *uk = pt_gemm_ukernel_default(kind);
    pt_conv_packed_layout l;
    memset(&l, 0, sizeof l); /* padding too: the registry compares bytes */
    memcpy(l.tag, "ptconvW", 8);
    if (strlen(uk->name) >= sizeof l.ukernel) return 0;
    strcpy(l.ukernel, uk->name);
    l.kind = kind;
    l.deconv = s->kind == CP_DECONV;
    l.G = s->G, l.Q = s->Q, l.NB = s->NB, l.qblocks = s->qblocks;
    l.cg = s->kind == CP_CONV ? s->Cin_g : s->xd[1] / s->G;
    l.KD = s->wd[2], l.KH = s->wd[3], l.KW = s->wd[4];
    l.wndims = s->w.ndims;
    memcpy(l.wmap, s->wmap, sizeof l.wmap);
    memcpy(l.wdims, s->w.dims, sizeof(int64_t) * (size_t)s->w.ndims);
    l.src_dt = dt;
    l.round = kind == PT_GEMM_F32 ? mode : dnnl_fpmath_mode_strict;
    size_t id = 0;
    if (given == SIZE_MAX) {
        id = pt_conv_packed_register(&l);
    } else {
        pt_conv_packed_layout have;
        if (pt_conv_packed_find(given, &have) && memcmp(&have, &l, sizeof l) == 0) id = given;
    }
    if (!id) return 0;
    s->w_layout = id;
    s->w_layout_kind = kind;
    s->w_block_bytes = pt_conv_packed_block_bytes(&l, uk);
    s->w_port = in->a[0].port;
    *port = (size_t)s->w_port;
    return id;
}

bool pt_compute_post_ops_inplace(const pt_fused *f, size_t *input_id, size_t *output_id) {
    if (!f || f->run != cp_run || !f->state) return false;
    const cp_state *s = f->state;
    if (!s->has_inplace) return false;
    *input_id = s->inplace_in;
    *output_id = s->inplace_out;
    return true;
}
