/* Register-tiled products of the fused SDPA kernel; see sdpa_tiles.h.
 *
 * Tiles of 4 rows × 2 vectors (4 f64 or 8 f32 columns) keep their 8
 * accumulators in the 16 vector registers of baseline x86-64 (SSE2) and of
 * most other targets; with GCC / Clang the vectors are the compilers' generic
 * 16-byte vector types (no instruction-set intrinsics), elsewhere plain
 * loops.  Each lane accumulates its own element, reduction index ascending,
 * with separate multiply and add, so the results do not depend on the
 * tiling. */
#include "kernels/fused/sdpa_tiles.h"

#include <string.h>

#define TR 4 /* rows per tile */

/* Remainders (and the whole product without vector types): rows below m4
 * from column nt on, every column of the rows from m4; one element at a
 * time, reduction index ascending. */
#define DEFINE_QK_SCALAR(name, T)                                                                  \
    static void name(const T *q, int m4, int m, int64_t K, const T *kt, int ldk, int nt, int n,    \
                     float *s, int lds) {                                                          \
        for (int r = 0; r < m; ++r)                                                                \
            for (int c = r < m4 ? nt : 0; c < n; ++c) {                                            \
                T a = 0;                                                                           \
                for (int64_t d = 0; d < K; ++d) a += q[r * K + d] * kt[d * ldk + c];               \
                s[r * lds + c] = (float)a;                                                         \
            }                                                                                      \
    }

#define DEFINE_PV_SCALAR(name, T)                                                                  \
    static void name(const T *p, int ldp, int m4, int m, int n, const T *v, int64_t nt, int64_t N, \
                     T *acc) {                                                                     \
        for (int r = 0; r < m; ++r)                                                                \
            for (int64_t d = r < m4 ? nt : 0; d < N; ++d) {                                        \
                T a = acc[r * N + d];                                                              \
                for (int c = 0; c < n; ++c) a += p[r * ldp + c] * v[c * N + d];                    \
                acc[r * N + d] = a;                                                                \
            }                                                                                      \
    }

DEFINE_QK_SCALAR(qk_rest_f64, double)
DEFINE_QK_SCALAR(qk_rest_f32, float)
DEFINE_PV_SCALAR(pv_rest_f64, double)
DEFINE_PV_SCALAR(pv_rest_f32, float)

#if defined(__GNUC__) || defined(__clang__)

typedef double sd_v2d __attribute__((vector_size(16)));
typedef float sd_v4f __attribute__((vector_size(16)));

/* One reduction step of a 4 × 2 tile: loads the vectors x (at px) and y (at
 * py, both of type V) and adds s_i times them to row i's accumulators
 * (a_i, b_i). */
#define TILE_STEP(V, px, py, s0, s1, s2, s3)  \
    do {                                      \
        V x, y;                               \
        memcpy(&x, (px), sizeof x);           \
        memcpy(&y, (py), sizeof y);           \
        a0 += (s0) * x, b0 += (s0) * y;       \
        a1 += (s1) * x, b1 += (s1) * y;       \
        a2 += (s2) * x, b2 += (s2) * y;       \
        a3 += (s3) * x, b3 += (s3) * y;       \
    } while (0)

/* Q·Kᵀ: rows [0, m4) × columns [0, n2w) in tiles (the callers below finish
 * the remainders). */
#define DEFINE_QK_TILES(name, T, V)                                                                \
    static void name(const T *q, int m4, int64_t K, const T *kt, int ldk, int n2w, float *s,      \
                     int lds) {                                                                    \
        enum { W = (int)(sizeof(V) / sizeof(T)) };                                                 \
        for (int r = 0; r < m4; r += TR) {                                                         \
            const T *q0 = q + (int64_t)r * K, *q1 = q0 + K, *q2 = q1 + K, *q3 = q2 + K;            \
            for (int c = 0; c < n2w; c += 2 * W) {                                                 \
                V a0 = {0}, b0 = {0}, a1 = {0}, b1 = {0}, a2 = {0}, b2 = {0}, a3 = {0}, b3 = {0};  \
                for (int64_t d = 0; d < K; ++d)                                                    \
                    TILE_STEP(V, kt + d * ldk + c, kt + d * ldk + c + W, q0[d], q1[d], q2[d], q3[d]); \
                const V *acc[TR][2] = {{&a0, &b0}, {&a1, &b1}, {&a2, &b2}, {&a3, &b3}};            \
                for (int i = 0; i < TR; ++i)                                                       \
                    for (int h = 0; h < 2; ++h)                                                    \
                        for (int j = 0; j < W; ++j)                                                \
                            s[(r + i) * lds + c + h * W + j] = (float)(*acc[i][h])[j];             \
            }                                                                                      \
        }                                                                                          \
    }

/* P·V: rows [0, m4) × output columns [0, n2w) in tiles over all n keys. */
#define DEFINE_PV_TILES(name, T, V)                                                                \
    static void name(const T *p, int ldp, int m4, int n, const T *v, int64_t n2w, int64_t N,       \
                     T *acc) {                                                                     \
        enum { W = (int)(sizeof(V) / sizeof(T)) };                                                 \
        for (int r = 0; r < m4; r += TR) {                                                         \
            const T *p0 = p + r * ldp, *p1 = p0 + ldp, *p2 = p1 + ldp, *p3 = p2 + ldp;             \
            for (int64_t d = 0; d < n2w; d += 2 * W) {                                             \
                T *o0 = acc + r * N + d, *o1 = o0 + N, *o2 = o1 + N, *o3 = o2 + N;                 \
                V a0, b0, a1, b1, a2, b2, a3, b3;                                                  \
                memcpy(&a0, o0, sizeof a0), memcpy(&b0, o0 + W, sizeof b0);                        \
                memcpy(&a1, o1, sizeof a1), memcpy(&b1, o1 + W, sizeof b1);                        \
                memcpy(&a2, o2, sizeof a2), memcpy(&b2, o2 + W, sizeof b2);                        \
                memcpy(&a3, o3, sizeof a3), memcpy(&b3, o3 + W, sizeof b3);                        \
                for (int c = 0; c < n; ++c)                                                        \
                    TILE_STEP(V, v + c * N + d, v + c * N + d + W, p0[c], p1[c], p2[c], p3[c]);    \
                memcpy(o0, &a0, sizeof a0), memcpy(o0 + W, &b0, sizeof b0);                        \
                memcpy(o1, &a1, sizeof a1), memcpy(o1 + W, &b1, sizeof b1);                        \
                memcpy(o2, &a2, sizeof a2), memcpy(o2 + W, &b2, sizeof b2);                        \
                memcpy(o3, &a3, sizeof a3), memcpy(o3 + W, &b3, sizeof b3);                        \
            }                                                                                      \
        }                                                                                          \
    }

DEFINE_QK_TILES(qk_tiles_f64, double, sd_v2d)
DEFINE_QK_TILES(qk_tiles_f32, float, sd_v4f)
DEFINE_PV_TILES(pv_tiles_f64, double, sd_v2d)
DEFINE_PV_TILES(pv_tiles_f32, float, sd_v4f)

#define TILE_COLS_F64 4
#define TILE_COLS_F32 8
#define QK_TILES(suffix, ...) qk_tiles_##suffix(__VA_ARGS__)
#define PV_TILES(suffix, ...) pv_tiles_##suffix(__VA_ARGS__)

#else

#define TILE_COLS_F64 1
#define TILE_COLS_F32 1
#define QK_TILES(suffix, ...) ((void)0)
#define PV_TILES(suffix, ...) ((void)0)

#endif

/* The tiled part covers rows [0, m4) × columns [0, nt); the remainder
 * functions the rest: rows [0, m4) from column nt, all columns of rows
 * [m4, m). */
void pt_sdpa_qk_f64(const double *q, int m, int64_t K, const double *kt, int ldk, int n, float *s, int lds) {
    const int m4 = m - m % TR, nt = TILE_COLS_F64 > 1 ? n - n % TILE_COLS_F64 : 0;
    if (nt > 0) QK_TILES(f64, q, m4, K, kt, ldk, nt, s, lds);
    qk_rest_f64(q, m4, m, K, kt, ldk, nt, n, s, lds);
}

void pt_sdpa_qk_f32(const float *q, int m, int64_t K, const float *kt, int ldk, int n, float *s, int lds) {
    const int m4 = m - m % TR, nt = TILE_COLS_F32 > 1 ? n - n % TILE_COLS_F32 : 0;
    if (nt > 0) QK_TILES(f32, q, m4, K, kt, ldk, nt, s, lds);
    qk_rest_f32(q, m4, m, K, kt, ldk, nt, n, s, lds);
}

void pt_sdpa_pv_f64(const double *p, int ldp, int m, int n, const double *v, int64_t N, double *acc) {
    const int m4 = m - m % TR;
    const int64_t nt = TILE_COLS_F64 > 1 ? N - N % TILE_COLS_F64 : 0;
    if (nt > 0) PV_TILES(f64, p, ldp, m4, n, v, nt, N, acc);
    pv_rest_f64(p, ldp, m4, m, n, v, nt, N, acc);
}

void pt_sdpa_pv_f32(const float *p, int ldp, int m, int n, const float *v, int64_t N, float *acc) {
    const int m4 = m - m % TR;
    const int64_t nt = TILE_COLS_F32 > 1 ? N - N % TILE_COLS_F32 : 0;
    if (nt > 0) PV_TILES(f32, p, ldp, m4, n, v, nt, N, acc);
    pv_rest_f32(p, ldp, m4, m, n, v, nt, N, acc);
}
