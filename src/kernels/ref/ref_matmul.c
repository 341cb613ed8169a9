/* Reference MatMul (docs/ops.md): transposes, 1-D promotion, batch
 * broadcast, optional bias broadcast unidirectionally to dst, fpmath
 * down-conversion emulation for f32 operands (docs/numerics.md). */
#include <string.h>

#include "ir/dtype_round.h"
#include "ir/status.h"
#include "kernels/ref/ref_common.h"
#include "kernels/ref/ref_kernels.h"

#define MM_MAX_BATCH (DNNL_MAX_NDIMS)

/* Packs an operand as [own batch dims (row-major)][rows][K] f32 with k
 * contiguous, rounded per fpmath when the operand is f32.  `srow` / `sk` are
 * the tensor strides of the row index and of k; the leading `nbd` dims are
 * batch dims.  `buf` receives the packed operand (scratch). */
static void mm_pack(const pt_tview *t, int nbd, int64_t rows, int64_t K, int64_t srow, int64_t sk,
                      float *buf, const pt_exec_ctx *ctx) {
    int64_t nb = 1;
    for (int i = 0; i < nbd; ++i) nb *= t->lt.dims[i];
    int64_t total = nb * rows * K;
    dnnl_fpmath_mode_t mode = ctx ? ctx->fpmath : dnnl_fpmath_mode_strict;
    bool round = t->lt.data_type == dnnl_f32 && mode != dnnl_fpmath_mode_strict;
    int nt = pt_ref_threads_for(ctx, total);
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
    for (int64_t lin = 0; lin < total; ++lin) {
        int64_t k = lin % K, r = (lin / K) % rows, bl = lin / (K * rows);
        int64_t off = r * srow + k * sk;
        for (int i = nbd - 1; i >= 0; --i) {
            off += (bl % t->lt.dims[i]) * t->lt.layout.strides[i];
            bl /= t->lt.dims[i];
        }
        float v = pt_tv_getf(t, off);
        buf[lin] = round ? pt_round_fpmath(mode, v) : v;
    }
}

/* One operand viewed as [batch.., rows, K] with k contiguous after packing:
 * `rows` is M of the src (N of the weights), `srow` / `sk` the tensor strides
 * of the row index and of k, `nb` the product of its own batch dims. */
typedef struct {
    int64_t rows, K, srow, sk, nb;
} mm_operand;

static mm_operand mm_view(const pt_lt *t, bool trans, bool is_weights) {
    mm_operand o;
    const int r = t->ndims;
    const int64_t *st = t->layout.strides;
    if (r == 1) {
        /* src: one row of K; weights: K rows of one column. */
        o.rows = 1, o.K = t->dims[0], o.srow = 0, o.sk = st[0];
    } else {
        /* src [.., M, K] (transposed [.., K, M]); weights [.., K, N] ([.., N, K]). */
        bool k_last = is_weights ? trans : !trans;
        int64_t d0 = t->dims[r - 2], d1 = t->dims[r - 1];
        o.rows = k_last ? d0 : d1, o.K = k_last ? d1 : d0;
        o.srow = k_last ? st[r - 2] : st[r - 1];
        o.sk = k_last ? st[r - 1] : st[r - 2];
    }
    o.nb = 1;
    for (int i = 0; i + 2 < r; ++i) o.nb *= t->dims[i];
    return o;
}

size_t pt_ref_matmul_scratch(const pt_ref_matmul_params *p, const pt_lt *a, const pt_lt *b) {
    if (a->ndims < 1 || b->ndims < 1 || a->ndims > DNNL_MAX_NDIMS || b->ndims > DNNL_MAX_NDIMS) return 0;
    mm_operand va = mm_view(a, p->ta, false), vb = mm_view(b, p->tb, true);
    int64_t na = va.nb * va.rows * va.K, nb = vb.nb * vb.rows * vb.K;
    return pt_scratch_round((size_t)(na > 0 ? na : 0) * sizeof(float)) +
           pt_scratch_round((size_t)(nb > 0 ? nb : 0) * sizeof(float));
}

PT_REF_DECL(pt_ref_matmul) {
    const pt_ref_matmul_params *p = params;
    if (nin < 2 || nout < 1) return pt_err(dnnl_invalid_arguments, "MatMul: needs 2-3 inputs, 1 output");
    const pt_tview *a = &in[0], *b = &in[1], *bias = nin > 2 ? &in[2] : NULL, *dst = &out[0];
    int ra = a->lt.ndims, rb = b->lt.ndims;
    if (ra < 1 || rb < 1 || ra > DNNL_MAX_NDIMS || rb > DNNL_MAX_NDIMS)
        return pt_err(dnnl_invalid_arguments, "MatMul: src rank %d / weights rank %d unsupported", ra, rb);

    /* A viewed as [batch.., M, K], B as [batch.., K, N] (tensor strides). */
    const mm_operand va = mm_view(&a->lt, p->ta, false), vb = mm_view(&b->lt, p->tb, true);
    const int64_t M = va.rows, K = va.K, N = vb.rows, Kb = vb.K;
    const int64_t sam = va.srow, sak = va.sk, sbn = vb.srow, sbk = vb.sk;
    if (K != Kb) return pt_err(dnnl_invalid_arguments, "MatMul: K mismatch (%lld vs %lld)", (long long)K, (long long)Kb);

    /* Broadcast batch dims; bsa / bsb are batch strides in the packed
     * operands ([batch][M][K] and [batch][N][K]), 0 where stretched. */
    int nba = ra > 2 ? ra - 2 : 0, nbb = rb > 2 ? rb - 2 : 0;
    int nb = nba > nbb ? nba : nbb;
    int64_t pas[MM_MAX_BATCH], pbs[MM_MAX_BATCH];
    for (int i = nba - 1; i >= 0; --i) pas[i] = i == nba - 1 ? M * K : pas[i + 1] * a->lt.dims[i + 1];
    for (int i = nbb - 1; i >= 0; --i) pbs[i] = i == nbb - 1 ? N * K : pbs[i + 1] * b->lt.dims[i + 1];
    int64_t bdims[MM_MAX_BATCH], bsa[MM_MAX_BATCH], bsb[MM_MAX_BATCH];
    for (int i = 0; i < nb; ++i) {
        int ia = i - (nb - nba), ib = i - (nb - nbb);
        int64_t da = ia >= 0 ? a->lt.dims[ia] : 1, db = ib >= 0 ? b->lt.dims[ib] : 1;
        if (da != db && da != 1 && db != 1)
            return pt_err(dnnl_invalid_arguments, "MatMul: batch dim %d not broadcastable (%lld vs %lld)", i,
                          (long long)da, (long long)db);
        bdims[i] = da == 1 ? db : da;
        bsa[i] = (ia >= 0 && da != 1) ? pas[ia] : 0;
        bsb[i] = (ib >= 0 && db != 1) ? pbs[ib] : 0;
    }

    /* Expected dst shape: batch ++ [M if src rank >= 2] ++ [N if weights rank >= 2]. */
    int rd = nb + (ra >= 2) + (rb >= 2);
    int64_t edims[DNNL_MAX_NDIMS];
    for (int i = 0; i < nb; ++i) edims[i] = bdims[i];
    if (ra >= 2) edims[nb] = M;
    if (rb >= 2) edims[rd - 1] = N;
    if (dst->lt.ndims != rd)
        return pt_err(dnnl_invalid_arguments, "MatMul: dst rank %d, expected %d", dst->lt.ndims, rd);
    for (int i = 0; i < rd; ++i)
        if (dst->lt.dims[i] != edims[i])
            return pt_err(dnnl_invalid_arguments, "MatMul: dst dim %d is %lld, expected %lld", i,
                          (long long)dst->lt.dims[i], (long long)edims[i]);

    /* Effective strides in the full index space [batch.., M, N] for dst and bias. */
    int64_t dsb[MM_MAX_BATCH], dsm = 0, dsn = 0;
    for (int i = 0; i < nb; ++i) dsb[i] = dst->lt.layout.strides[i];
    if (ra >= 2) dsm = dst->lt.layout.strides[nb];
    if (rb >= 2) dsn = dst->lt.layout.strides[rd - 1];
    int64_t csb[MM_MAX_BATCH] = {0}, csm = 0, csn = 0;
    if (bias) {
        int rc = bias->lt.ndims;
        if (rc > rd) return pt_err(dnnl_invalid_arguments, "MatMul: bias rank %d exceeds dst rank %d", rc, rd);
        for (int j = 0; j < rc; ++j) {
            int dd = j + rd - rc; /* dst dim this bias dim aligns with */
            int64_t e = bias->lt.dims[j];
            if (e != 1 && e != dst->lt.dims[dd])
                return pt_err(dnnl_invalid_arguments, "MatMul: bias dim %d (%lld) not broadcastable to dst", j,
                              (long long)e);
            int64_t st = e == 1 ? 0 : bias->lt.layout.strides[j];
            if (dd < nb) csb[dd] = st;
            else if (ra >= 2 && dd == nb) csm = st;
            else csn = st;
        }
    }

    int64_t nbatch = 1;
    for (int i = 0; i < nb; ++i) nbatch *= bdims[i];
    int64_t total = nbatch * M * N;
    if (total == 0) return dnnl_success;

    PT_CHECK(pt_ref_need_scratch("MatMul", ctx, pt_ref_matmul_scratch(p, &a->lt, &b->lt)));
    char *cur = ctx->scratch;
    float *A = pt_scratch_take(&cur, (size_t)(va.nb * M * K) * sizeof(float));
    float *B = pt_scratch_take(&cur, (size_t)(vb.nb * N * K) * sizeof(float));
    mm_pack(a, nba, M, K, sam, sak, A, ctx);
    mm_pack(b, nbb, N, K, sbn, sbk, B, ctx);

    int nt = pt_ref_threads_for(ctx, total * (K + 1));
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
    for (int64_t lin = 0; lin < total; ++lin) {
        int64_t n = lin % N, m = (lin / N) % M, bl = lin / (N * M);
        int64_t offa = m * K, offb = n * K, offd = m * dsm + n * dsn, offc = m * csm + n * csn;
        for (int i = nb - 1; i >= 0; --i) {
            int64_t bi = bl % bdims[i];
            bl /= bdims[i];
            offa += bi * bsa[i], offb += bi * bsb[i], offd += bi * dsb[i], offc += bi * csb[i];
        }
        const float *ap = A + offa, *bp = B + offb;
        double acc = 0.0;
        for (int64_t k = 0; k < K; ++k) acc += (double)ap[k] * (double)bp[k];
        if (bias) acc += (double)pt_tv_getf(bias, offc);
        pt_tv_setf(dst, offd, (float)acc);
    }
    return dnnl_success;
}
