/* Shared harness of the graph tests (test_int_*): a compact graph
 * description, built through the public API, partitioned, compiled and run
 * partition by partition on caller-provided buffers, with a record of which
 * pattern row took each partition and whether it ran fused.  The few reads of
 * library internals (row names, the fused-kernel switch) live in
 * test_graph_util.c only, so a change of those structs is fixed in one place. */
#ifndef PARTITA_TEST_GRAPH_UTIL_H
#define PARTITA_TEST_GRAPH_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "oneapi/dnnl/dnnl_graph.h"
#include "test_util.h"

#define TG_MAXT 64  /* tensors in a graph */
#define TG_MAXO 40  /* ops in a graph */
#define TG_MAXA 10  /* attributes of an op */
#define TG_MAXV 32  /* values of a list attribute */
#define TG_MAXP 48  /* partitions of a graph */
#define TG_MAXSETS 3 /* buffer sets of one case */

typedef dnnl_graph_logical_tensor_t tg_lt;

typedef enum { TG_S64, TG_BOOL, TG_STR, TG_F32 } tg_attr_type;

typedef struct {
    int name;
    tg_attr_type type;
    int n;
    int64_t i[TG_MAXV]; /* S64 list; BOOL in i[0] */
    float f[TG_MAXV];
    char s[32];
} tg_attr;

/* Tensors are named by id (index in tg_graph.lt + 1). */
typedef struct {
    dnnl_graph_op_kind_t kind;
    size_t in[8], out[5];
    int nin, nout;
    tg_attr at[TG_MAXA];
    int nat;
} tg_op;

typedef struct {
    tg_lt lt[TG_MAXT]; /* id = index + 1 */
    int nt;
    tg_op op[TG_MAXO];
    int nop;
    dnnl_fpmath_mode_t fpmath; /* graph math mode (zero: strict) */
    int apply_to_int;
    /* What the test fills each input with: its own kinds and parameters. */
    int fill[TG_MAXT];
    double fv[TG_MAXT], fv2[TG_MAXT];
    size_t result[8]; /* graph outputs the test compares */
    int nres;
} tg_graph;

/* ---- building ----------------------------------------------------------- */

/* A strided tensor (dense row-major when `strides` is NULL); returns its id. */
size_t tg_tensor(tg_graph *g, dnnl_data_type_t dt, int nd, const int64_t *dims, const int64_t *strides);
static inline tg_lt *tg_lt_of(tg_graph *g, size_t id) { return &g->lt[id - 1]; }
tg_op *tg_add(tg_graph *g, dnnl_graph_op_kind_t kind, int nin, const size_t *in, int nout, const size_t *out);
void tg_attr_s64(tg_op *o, int name, const int64_t *v, int n);
void tg_attr_bool(tg_op *o, int name, bool v);
void tg_attr_str(tg_op *o, int name, const char *s);
void tg_attr_f32(tg_op *o, int name, const float *v, int n);
bool tg_produced(const tg_graph *g, size_t id);
/* Numpy broadcasting of dims a (rank na) and b (rank nb) into out; returns
 * the rank. */
int tg_broadcast(int na, const int64_t *a, int nb, const int64_t *b, int64_t *out);
bool tg_consumed(const tg_graph *g, size_t id);

/* ---- tensor geometry and data ------------------------------------------- */

int64_t tg_nelems(const tg_lt *lt);
/* Elements a strided buffer spans (1 for a scalar, 0 when a dim is 0). */
int64_t tg_span(const tg_lt *lt);
/* Buffer offset (in elements) of logical element `e` (row-major order). */
int64_t tg_offset(const tg_lt *lt, int64_t e);
/* Writes next(ctx) to every logical element in row-major order; the rest of
 * the span holds NaN (float types) or 0 so a read outside the view shows up. */
void tg_fill(const tg_lt *lt, void *buf, float (*next)(void *ctx), void *ctx);
/* The same without touching the rest of the span. */
void tg_fill_elems(const tg_lt *lt, void *buf, float (*next)(void *ctx), void *ctx);

/* The tests' random data: a linear congruential generator; tg_lcg gives the
 * next 24-bit value, tg_lcg_pm1 a float uniform in [-1, 1). */
static inline uint32_t tg_lcg(uint32_t *state) {
    *state = *state * 1664525u + 1013904223u;
    return *state >> 8;
}
static inline float tg_lcg_pm1(uint32_t *state) { return (float)(tg_lcg(state) & 0xffffff) / 8388608.f - 1.f; }

/* Values of the attention tests, one per call (a tg_fill `next`): kind
 * TG_V_MASK an additive mask (-inf where r < mask_cut, else 2r), TG_V_BOOL 1
 * where r < bool_cut, TG_V_CONST `c`, otherwise r itself, with r = tg_lcg_pm1. */
enum { TG_V_RAND, TG_V_MASK, TG_V_BOOL, TG_V_CONST };
typedef struct {
    uint32_t *rng;
    int kind;
    float c, mask_cut, bool_cut;
} tg_attn_fill;
float tg_attn_value(void *ctx);

/* The size grid of the attention tests: case (a, b) of 4 x 4 takes S_q, S_kv,
 * D and D_v from `seqs` and `heads` (S_kv shifted by `shift`), and names the
 * case "<prefix> sq=.. skv=.. d=.. dv=..". */
typedef struct {
    int64_t sq, skv, d, dv;
} tg_attn_sizes;
tg_attn_sizes tg_attn_grid(const int64_t seqs[4], const int64_t heads[4], int a, int b, int shift, const char *prefix,
                           char *name, size_t name_len);

/* One buffer per tensor for each of `nsets` runs of graphs[k] (graphs with
 * the same tensors, possibly other types).  Inputs (tensors no op produces)
 * are filled once by `fill` for graphs[0] and shared; a set whose graph has
 * another type for an input gets a converted copy.  Produced tensors get
 * zeroed buffers of their own in each set. */
typedef void (*tg_fill_fn)(const tg_graph *g, int t, void *buf);
typedef struct {
    int nsets, nt;
    void *set[TG_MAXSETS][TG_MAXT];
    bool own[TG_MAXSETS][TG_MAXT];
} tg_bufs;
void tg_bufs_alloc(tg_bufs *b, const tg_graph *const *graphs, int nsets, tg_fill_fn fill);
void tg_bufs_free(tg_bufs *b);

/* ---- running ------------------------------------------------------------ */

extern dnnl_engine_t tg_eng;
extern dnnl_stream_t tg_strm;
void tg_setup(void);    /* creates tg_eng and tg_strm */
void tg_teardown(void);

typedef struct {
    dnnl_graph_partition_policy_t policy;
    dnnl_fpmath_mode_t part_mode; /* != strict: set on the partitions before compiling */
    int part_apply_to_int;
    bool part_mode_single;        /* also on single-op partitions (otherwise multi-op only) */
    bool skip_unsupported;        /* leave unsupported partitions (lone End ops) unrun */
    /* Every partition runs through the reference kernels (its fused kernel,
     * e.g. a lone MatMul's GEMM engine, switched off): the exact oracle. */
    bool reference;
    /* Non-NULL: every partition runs a second time with its fused kernel
     * switched off (op by op through the reference kernels) on these
     * buffers, inputs included. */
    void **opbyop;
} tg_run_opts;

typedef struct {
    int nops;
    const char *row; /* pattern row, NULL for a single-op partition */
    bool fused;      /* compiled with a fused kernel */
} tg_part;

typedef struct {
    int nparts;
    tg_part part[TG_MAXP];
    int maxops;
    const char *maxrow; /* row of the (first) largest partition, "single_op" for none */
    double fused_ms, opbyop_ms; /* execution time of the last fused partition, both ways */
} tg_run_info;

/* Builds `g` through the public API, partitions it and compiles and executes
 * every partition in order on data[id - 1]. */
bool tg_run(const tg_graph *g, const tg_run_opts *opts, void **data, tg_run_info *info);
/* Partitions that ran fused; with `row_part` (substring) only those whose row
 * name contains it. */
int tg_count_fused(const tg_run_info *info, const char *row_part);

/* ---- comparing ---------------------------------------------------------- */

typedef struct {
    int64_t total, bad, first, nonzero;
    double worst;
} tg_diff;

/* Compares the logical elements of one tensor as floats; `tol(a, lt)` gives the
 * |a - b| allowed for the reference value a (NULL: identical values, NaN
 * matching NaN). */
tg_diff tg_diff_values(const tg_lt *lt, const void *ref, const void *got, double (*tol)(double a, const tg_lt *lt));
/* tg_diff_values, then CHECKs that nothing differs (printing how much did). */
/* Tolerance for graphs some of whose MatMuls run on the GEMM engine (f32
 * accumulation in blocks, docs/numerics.md) rather than in an exact fused
 * kernel: a few ulps of the type, relative to max(1, |a|). */
double tg_engine_tol(double a, const tg_lt *lt);

tg_diff tg_check_values(const char *name, const tg_lt *lt, const void *ref, const void *got,
                        double (*tol)(double a, const tg_lt *lt));

#endif
