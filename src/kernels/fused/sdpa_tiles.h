/* Register-tiled products of the fused SDPA kernel (sdpa_run.c).  Every
 * output element is accumulated in the order of a plain loop (the reduction
 * index ascending, one element at a time), so the tiling never changes a
 * result: the f64 versions reproduce the reference MatMul bit for bit. */
#ifndef PARTITA_KERNELS_FUSED_SDPA_TILES_H
#define PARTITA_KERNELS_FUSED_SDPA_TILES_H

#include <stdint.h>

/* s[r·lds + c] = Σ_d q[r·K + d] · kt[d·ldk + c] for r < m, c < n (d ascending),
 * rounded once to f32. */
void pt_sdpa_qk_f64(const double *q, int m, int64_t K, const double *kt, int ldk, int n, float *s, int lds);
void pt_sdpa_qk_f32(const float *q, int m, int64_t K, const float *kt, int ldk, int n, float *s, int lds);

/* acc[r·N + d] += Σ_c p[r·ldp + c] · v[c·N + d] for r < m, d < N, the keys c
 * < n ascending. */
void pt_sdpa_pv_f64(const double *p, int ldp, int m, int n, const double *v, int64_t N, double *acc);
void pt_sdpa_pv_f32(const float *p, int ldp, int m, int n, const float *v, int64_t N, float *acc);

#endif
