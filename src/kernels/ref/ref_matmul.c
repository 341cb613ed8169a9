/* Reference MatMul (opset.md "MatMul"): transposes, 1-D promotion, batch
 * broadcast, optional bias broadcast unidirectionally to dst, fpmath
 * down-conversion emulation for f32 operands (§1.5). */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "ir/status.h"
#include "kernels/ref/ref_common.h"
#include "kernels/ref/ref_kernels.h"

#define MM_MAX_BATCH (DNNL_MAX_NDIMS)

/* Threads for a loop of about `work` scalar operations: the context's
 * budget, or 1 where a parallel region would cost more than it saves. */
static int mm_threads(const pt_exec_ctx *ctx, int64_t work) {
    if (work < 32768) return 1;
    return ctx && ctx->nthreads > 0 ? ctx->nthreads : omp_get_max_threads();
}

/* Rounds an f32 operand value to the precision the fpmath mode permits, so the
 * reference reproduces what a down-converting implementation computes. */
static float mm_fpmath_round(float v, dnnl_fpmath_mode_t mode) {
    switch (mode) {
        case dnnl_fpmath_mode_bf16:
        case dnnl_fpmath_mode_any: return pt_bf16_to_f32(pt_f32_to_bf16(v));
        case dnnl_fpmath_mode_f16: return pt_f16_to_f32(pt_f32_to_f16(v));
        case dnnl_fpmath_mode_tf32: {
            uint32_t u;
            memcpy(&u, &v, sizeof u);
            if ((u & 0x7f800000u) == 0x7f800000u) return v; /* inf / NaN unchanged */
            u += 0xfffu + ((u >> 13) & 1u);                 /* RNE to 10 mantissa bits */
            u &= ~0x1fffu;
            memcpy(&v, &u, sizeof v);
            return v;
        }
        default: return v;
    }
}

/* Packs an operand as [own batch dims (row-major)][rows][K] f32 with k
 * contiguous, rounded per fpmath when the operand is f32.  `srow` / `sk` are
 * the tensor strides of the row index and of k; the leading `nbd` dims are
 * batch dims.  Returns NULL when out of memory. */
static float *mm_pack(const pt_tview *t, int nbd, int64_t rows, int64_t K, int64_t srow, int64_t sk,
                      const pt_exec_ctx *ctx) {
    int64_t nb = 1;
    for (int i = 0; i < nbd; ++i) nb *= t->lt.dims[i];
    int64_t total = nb * rows * K;
    float *buf = malloc((size_t)(total > 0 ? total : 1) * sizeof(float));
    if (!buf) return NULL;
    dnnl_fpmath_mode_t mode = ctx ? ctx->fpmath : dnnl_fpmath_mode_strict;
    bool round = t->lt.data_type == dnnl_f32 && mode != dnnl_fpmath_mode_strict;
    int nt = mm_threads(ctx, total);
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
    for (int64_t lin = 0; lin < total; ++lin) {
        int64_t k = lin % K, r = (lin / K) % rows, bl = lin / (K * rows);
        int64_t off = r * srow + k * sk;
        for (int i = nbd - 1; i >= 0; --i) {
            off += (bl % t->lt.dims[i]) * t->lt.layout.strides[i];
            bl /= t->lt.dims[i];
        }
        float v = pt_tv_getf(t, off);
        buf[lin] = round ? mm_fpmath_round(v, mode) : v;
    }
    return buf;
}

PT_REF_OP_KERNEL(pt_ref_matmul) {
    if (nin < 2 || nout < 1) return pt_err(dnnl_invalid_arguments, "MatMul: needs 2-3 inputs, 1 output");
    const pt_tview *a = &in[0], *b = &in[1], *bias = nin > 2 ? &in[2] : NULL, *dst = &out[0];
    int ra = a->lt.ndims, rb = b->lt.ndims;
    if (ra < 1 || rb < 1 || ra > DNNL_MAX_NDIMS || rb > DNNL_MAX_NDIMS)
        return pt_err(dnnl_invalid_arguments, "MatMul: src rank %d / weights rank %d unsupported", ra, rb);
    bool ta = pt_op_bool(op, dnnl_graph_op_attr_transpose_a, false) && ra >= 2;
    bool tb = pt_op_bool(op, dnnl_graph_op_attr_transpose_b, false) && rb >= 2;

    const int64_t *as = a->lt.layout.strides, *bs = b->lt.layout.strides;

    /* A viewed as [batch.., M, K], B as [batch.., K, N] (tensor strides). */
    int64_t M, K, N, Kb, sam, sak, sbk, sbn;
    if (ra == 1) {
        M = 1, K = a->lt.dims[0], sam = 0, sak = as[0];
    } else {
        int64_t d0 = a->lt.dims[ra - 2], d1 = a->lt.dims[ra - 1];
        M = ta ? d1 : d0, K = ta ? d0 : d1;
        sam = ta ? as[ra - 1] : as[ra - 2];
        sak = ta ? as[ra - 2] : as[ra - 1];
    }
    if (rb == 1) {
        Kb = b->lt.dims[0], N = 1, sbk = bs[0], sbn = 0;
    } else {
        int64_t d0 = b->lt.dims[rb - 2], d1 = b->lt.dims[rb - 1];
        Kb = tb ? d1 : d0, N = tb ? d0 : d1;
        sbk = tb ? bs[rb - 1] : bs[rb - 2];
        sbn = tb ? bs[rb - 2] : bs[rb - 1];
    }
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

    float *A = mm_pack(a, nba, M, K, sam, sak, ctx);
    float *B = mm_pack(b, nbb, N, K, sbn, sbk, ctx);
    if (!A || !B) {
        free(A), free(B);
        return pt_err(dnnl_out_of_memory, "MatMul: scratch allocation failed");
    }

    int nt = mm_threads(ctx, total * (K + 1));
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
    free(A);
    free(B);
    return dnnl_success;
}
