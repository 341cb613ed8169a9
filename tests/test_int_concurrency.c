/* Concurrent use of one library instance from several threads
 * (docs/reliability.md, "Concurrency"), with pthreads:
 *  - one compiled partition executed by THREADS threads at once, each on its
 *    own activations (the constant weights shared; and, for the MatMul,
 *    each thread's own weight under the same id), bit-identical to a serial
 *    run of the same buffers;
 *  - THREADS threads compiling the same partition at once with the
 *    compiled-partition cache on, each result then bit-identical;
 *  - one thread changing both cache capacities while the others execute
 *    (and compile) the partitions.
 * Graphs: a gated MLP with constant weights, an
 * SDPA, and a lone MatMul with a constant weight.  `make test-tsan` runs this
 * test under ThreadSanitizer. */
#define _POSIX_C_SOURCE 200809L /* pthread barriers */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir/dtype.h"
#include "oneapi/dnnl/dnnl_graph.h"
#include "test_graph_util.h"
#include "test_util.h"

#define THREADS 4
#define ROUNDS 6

static dnnl_engine_t g_eng;
static dnnl_stream_t g_strm; /* the serial runs'; each thread makes its own */

/* ---- graphs -------------------------------------------------------------- */

static size_t tensor(tg_graph *g, int nd, const int64_t *dims, bool constant) {
    size_t id = tg_tensor(g, dnnl_f32, nd, dims, NULL);
    if (constant) tg_lt_of(g, id)->property = dnnl_graph_tensor_property_constant;
    return id;
}

/* A llama-style gated MLP: Swish(x Wg) * (x Wu), times Wd (one partition). */
static void build_mlp(tg_graph *g) {
    memset(g, 0, sizeof *g);
    const int64_t hd[2] = {24, 96};
    size_t x = tensor(g, 2, (int64_t[]){24, 64}, false);
    size_t wg = tensor(g, 2, (int64_t[]){64, 96}, true), wu = tensor(g, 2, (int64_t[]){64, 96}, true);
    size_t wd = tensor(g, 2, (int64_t[]){96, 64}, true);
    size_t gate = tensor(g, 2, hd, false), up = tensor(g, 2, hd, false), sg = tensor(g, 2, hd, false);
    size_t sw = tensor(g, 2, hd, false), h = tensor(g, 2, hd, false);
    size_t y = tensor(g, 2, (int64_t[]){24, 64}, false);
    tg_add(g, dnnl_graph_op_matmul, 2, (size_t[]){x, wg}, 1, &gate);
    tg_add(g, dnnl_graph_op_matmul, 2, (size_t[]){x, wu}, 1, &up);
    tg_add(g, dnnl_graph_op_sigmoid, 1, &gate, 1, &sg);
    tg_add(g, dnnl_graph_op_multiply, 2, (size_t[]){gate, sg}, 1, &sw);
    tg_add(g, dnnl_graph_op_multiply, 2, (size_t[]){sw, up}, 1, &h);
    tg_add(g, dnnl_graph_op_matmul, 2, (size_t[]){h, wd}, 1, &y);
}

static void build_sdpa(tg_graph *g) {
    memset(g, 0, sizeof *g);
    const int64_t qd[4] = {1, 2, 32, 64}, sd[4] = {1, 2, 32, 48};
    size_t q = tensor(g, 4, qd, false), k = tensor(g, 4, (int64_t[]){1, 2, 48, 64}, false);
    size_t v = tensor(g, 4, (int64_t[]){1, 2, 48, 64}, false), scale = tensor(g, 0, NULL, false);
    size_t s = tensor(g, 4, sd, false), s1 = tensor(g, 4, sd, false), p = tensor(g, 4, sd, false);
    size_t o = tensor(g, 4, qd, false);
    tg_attr_bool(tg_add(g, dnnl_graph_op_matmul, 2, (size_t[]){q, k}, 1, &s), dnnl_graph_op_attr_transpose_b, true);
    tg_add(g, dnnl_graph_op_multiply, 2, (size_t[]){s, scale}, 1, &s1);
    tg_attr_s64(tg_add(g, dnnl_graph_op_softmax, 1, &s1, 1, &p), dnnl_graph_op_attr_axis, (int64_t[]){-1}, 1);
    tg_add(g, dnnl_graph_op_matmul, 2, (size_t[]){p, v}, 1, &o);
}

static void build_matmul(tg_graph *g) {
    memset(g, 0, sizeof *g);
    size_t x = tensor(g, 2, (int64_t[]){33, 128}, false), w = tensor(g, 2, (int64_t[]){128, 72}, true);
    size_t y = tensor(g, 2, (int64_t[]){33, 72}, false);
    tg_add(g, dnnl_graph_op_matmul, 2, (size_t[]){x, w}, 1, &y);
}

/* ---- one compiled partition and its buffers ------------------------------ */

typedef struct {
    const tg_graph *g;
    dnnl_graph_partition_t part;
    size_t nin, nout;
    const tg_lt *in[TG_MAXT], *out[TG_MAXT];
    void *weights[TG_MAXT];            /* constant inputs: one buffer for all */
    void *bufs[THREADS][TG_MAXT];      /* set k: thread k's buffers */
    void *want[THREADS][TG_MAXT];      /* serial outputs of set k */
} subject;

static size_t bytes_of(const tg_lt *lt) { return pt_dt_bytes(lt->data_type, tg_span(lt) > 0 ? tg_span(lt) : 1); }

static void fill(const tg_lt *lt, void *buf, uint32_t seed) {
    int64_t n = tg_span(lt) > 0 ? tg_span(lt) : 1;
    for (int64_t e = 0; e < n; ++e) pt_store_f32(buf, lt->data_type, e, tg_lcg_pm1(&seed));
}

/* The graph's one partition, its ports, and THREADS buffer sets (the
 * constant inputs shared by all sets, or each set's own). */
static bool subject_init(subject *s, const tg_graph *g, bool shared_weights) {
    memset(s, 0, sizeof *s);
    s->g = g;
    dnnl_graph_graph_t gr = NULL;
    CHECK_EQ_INT(dnnl_graph_graph_create(&gr, dnnl_cpu), dnnl_success);
    for (int o = 0; o < g->nop; ++o) {
        const tg_op *d = &g->op[o];
        dnnl_graph_op_t op = NULL;
        CHECK_EQ_INT(dnnl_graph_op_create(&op, (size_t)o + 1, d->kind, "op"), dnnl_success);
        for (int k = 0; k < d->nin; ++k) CHECK_EQ_INT(dnnl_graph_op_add_input(op, &g->lt[d->in[k] - 1]), dnnl_success);
        for (int k = 0; k < d->nout; ++k)
            CHECK_EQ_INT(dnnl_graph_op_add_output(op, &g->lt[d->out[k] - 1]), dnnl_success);
        for (int a = 0; a < d->nat; ++a) {
            const tg_attr *at = &d->at[a];
            uint8_t b = (uint8_t)at->i[0];
            if (at->type == TG_S64)
                CHECK_EQ_INT(dnnl_graph_op_set_attr_s64(op, at->name, at->i, (size_t)at->n), dnnl_success);
            else
                CHECK_EQ_INT(dnnl_graph_op_set_attr_bool(op, at->name, &b, 1), dnnl_success);
        }
        CHECK_EQ_INT(dnnl_graph_add_op(gr, op), dnnl_success);
        CHECK_EQ_INT(dnnl_graph_op_destroy(op), dnnl_success);
    }
    CHECK_EQ_INT(dnnl_graph_graph_finalize(gr), dnnl_success);
    CHECK_EQ_INT(dnnl_graph_graph_filter(gr, dnnl_graph_partition_policy_fusion), dnnl_success);
    size_t n = 0;
    CHECK_EQ_INT(dnnl_graph_graph_get_partition_num(gr, &n), dnnl_success);
    CHECK_EQ_INT(n, 1);
    bool ok = n == 1 && dnnl_graph_graph_get_partitions(gr, 1, &s->part) == dnnl_success;
    CHECK_EQ_INT(dnnl_graph_graph_destroy(gr), dnnl_success);
    if (!ok) return false;
    tg_lt ip[TG_MAXT], opp[TG_MAXT];
    CHECK_EQ_INT(dnnl_graph_partition_get_input_ports_num(s->part, &s->nin), dnnl_success);
    CHECK_EQ_INT(dnnl_graph_partition_get_output_ports_num(s->part, &s->nout), dnnl_success);
    if (s->nin > TG_MAXT || s->nout > TG_MAXT) return false;
    CHECK_EQ_INT(dnnl_graph_partition_get_input_ports(s->part, s->nin, ip), dnnl_success);
    CHECK_EQ_INT(dnnl_graph_partition_get_output_ports(s->part, s->nout, opp), dnnl_success);
    for (size_t i = 0; i < s->nin; ++i) s->in[i] = &g->lt[ip[i].id - 1];
    for (size_t i = 0; i < s->nout; ++i) s->out[i] = &g->lt[opp[i].id - 1];
    for (size_t i = 0; i < s->nin; ++i) {
        const tg_lt *lt = s->in[i];
        if (lt->property == dnnl_graph_tensor_property_constant && shared_weights) {
            s->weights[i] = malloc(bytes_of(lt));
            fill(lt, s->weights[i], 7u + (uint32_t)i);
        }
        for (int k = 0; k < THREADS; ++k) {
            if (s->weights[i]) {
                s->bufs[k][i] = s->weights[i];
                continue;
            }
            s->bufs[k][i] = malloc(bytes_of(lt));
            fill(lt, s->bufs[k][i], 1000u * (uint32_t)k + 31u * (uint32_t)i + 1u);
        }
    }
    for (size_t o = 0; o < s->nout; ++o)
        for (int k = 0; k < THREADS; ++k) {
            s->bufs[k][s->nin + o] = calloc(1, bytes_of(s->out[o]));
            s->want[k][o] = calloc(1, bytes_of(s->out[o]));
        }
    return true;
}

static void subject_free(subject *s) {
    for (size_t i = 0; i < s->nin; ++i) {
        for (int k = 0; k < THREADS && !s->weights[i]; ++k) free(s->bufs[k][i]);
        free(s->weights[i]);
    }
    for (size_t o = 0; o < s->nout; ++o)
        for (int k = 0; k < THREADS; ++k) {
            free(s->bufs[k][s->nin + o]);
            free(s->want[k][o]);
        }
    if (s->part) CHECK_EQ_INT(dnnl_graph_partition_destroy(s->part), dnnl_success);
}

static dnnl_status_t compile(const subject *s, dnnl_graph_compiled_partition_t *cp) {
    dnnl_status_t st = dnnl_graph_compiled_partition_create(cp, s->part);
    if (st != dnnl_success) return st;
    return dnnl_graph_partition_compile(s->part, *cp, s->nin, (const tg_lt **)s->in, s->nout, (const tg_lt **)s->out,
                                        g_eng);
}

/* Executes cp on buffer set k; true when the outputs equal the serial ones
 * (or, with `record`, stores them as the serial ones). */
static bool run_set(const subject *s, dnnl_graph_compiled_partition_t cp, dnnl_stream_t strm, int k, bool record) {
    dnnl_graph_tensor_t tin[TG_MAXT], tout[TG_MAXT];
    bool ok = true;
    for (size_t i = 0; i < s->nin; ++i)
        ok = dnnl_graph_tensor_create(&tin[i], s->in[i], g_eng, s->bufs[k][i]) == dnnl_success && ok;
    for (size_t o = 0; o < s->nout; ++o) {
        memset(s->bufs[k][s->nin + o], 0xff, bytes_of(s->out[o])); /* NaN: an unwritten output shows */
        ok = dnnl_graph_tensor_create(&tout[o], s->out[o], g_eng, s->bufs[k][s->nin + o]) == dnnl_success && ok;
    }
    ok = ok && dnnl_graph_compiled_partition_execute(cp, strm, s->nin, (const_dnnl_graph_tensor_t *)tin, s->nout,
                                                     (const_dnnl_graph_tensor_t *)tout) == dnnl_success;
    ok = ok && dnnl_stream_wait(strm) == dnnl_success;
    for (size_t i = 0; i < s->nin; ++i) dnnl_graph_tensor_destroy(tin[i]);
    for (size_t o = 0; o < s->nout; ++o) dnnl_graph_tensor_destroy(tout[o]);
    for (size_t o = 0; ok && o < s->nout; ++o) {
        if (record) memcpy(s->want[k][o], s->bufs[k][s->nin + o], bytes_of(s->out[o]));
        else ok = memcmp(s->want[k][o], s->bufs[k][s->nin + o], bytes_of(s->out[o])) == 0;
    }
    return ok;
}

/* ---- the threads --------------------------------------------------------- */

typedef enum { JOB_EXECUTE, JOB_COMPILE_EXECUTE } job_kind;

typedef struct {
    const subject *s;
    dnnl_graph_compiled_partition_t shared_cp; /* JOB_EXECUTE */
    job_kind kind;
    int set;
    pthread_barrier_t *start;
    int failures;
} job;

static void *worker(void *arg) {
    job *j = arg;
    dnnl_stream_t strm = NULL;
    if (dnnl_stream_create(&strm, g_eng, dnnl_stream_default_flags) != dnnl_success) {
        j->failures++;
        return NULL;
    }
    pthread_barrier_wait(j->start);
    for (int r = 0; r < ROUNDS; ++r) {
        dnnl_graph_compiled_partition_t cp = j->shared_cp;
        if (j->kind == JOB_COMPILE_EXECUTE && compile(j->s, &cp) != dnnl_success) {
            j->failures++;
            continue;
        }
        if (!run_set(j->s, cp, strm, j->set, false)) j->failures++;
        if (j->kind == JOB_COMPILE_EXECUTE) dnnl_graph_compiled_partition_destroy(cp);
    }
    dnnl_stream_destroy(strm);
    return NULL;
}

/* Changes both cache capacities (each change empties the caches) until told to stop. */
typedef struct {
    atomic_bool stop;
    pthread_barrier_t *start;
    int changes, failures;
} capacity_job;

static void *capacity_changer(void *arg) {
    capacity_job *c = arg;
    pthread_barrier_wait(c->start);
    static const size_t const_mb[] = {0, 1, 1024, 0, 64};
    static const int cp_entries[] = {0, 1, 1024, 2, 0};
    for (int i = 0; i < 10 || !atomic_load(&c->stop); ++i) { /* at least 10 changes, then until told */
        if (dnnl_graph_set_constant_tensor_cache_capacity(dnnl_cpu, const_mb[i % 5]) != dnnl_success) c->failures++;
        if (dnnl_graph_set_compiled_partition_cache_capacity(cp_entries[i % 5]) != dnnl_success) c->failures++;
        int cap = -1;
        if (dnnl_graph_get_compiled_partition_cache_capacity(&cap) != dnnl_success || cap < 0) c->failures++;
        c->changes++;
    }
    return NULL;
}

/* Runs THREADS jobs of `kind` on s (with a capacity changer when asked);
 * returns the failures. */
static int run_threads(const subject *s, dnnl_graph_compiled_partition_t cp, job_kind kind, bool change_caches) {
    pthread_t th[THREADS + 1];
    job jobs[THREADS];
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, THREADS + (change_caches ? 1 : 0));
    capacity_job cj = {.start = &start};
    atomic_init(&cj.stop, false);
    for (int k = 0; k < THREADS; ++k) {
        jobs[k] = (job){.s = s, .shared_cp = cp, .kind = kind, .set = k, .start = &start};
        pthread_create(&th[k], NULL, worker, &jobs[k]);
    }
    if (change_caches) pthread_create(&th[THREADS], NULL, capacity_changer, &cj);
    int failures = 0;
    for (int k = 0; k < THREADS; ++k) {
        pthread_join(th[k], NULL);
        failures += jobs[k].failures;
    }
    if (change_caches) {
        atomic_store(&cj.stop, true);
        pthread_join(th[THREADS], NULL);
        failures += cj.failures;
        CHECK(cj.changes > 0);
    }
    pthread_barrier_destroy(&start);
    return failures;
}

static void check_graph(const char *name, const tg_graph *g, bool shared_weights) {
    static subject s;
    if (!subject_init(&s, g, shared_weights)) {
        CHECK(!"partition");
        subject_free(&s);
        return;
    }
    CHECK_EQ_INT(dnnl_graph_set_constant_tensor_cache(1), dnnl_success);
    CHECK_EQ_INT(dnnl_graph_set_compiled_partition_cache_capacity(1024), dnnl_success);
    dnnl_graph_compiled_partition_t cp = NULL;
    CHECK_EQ_INT(compile(&s, &cp), dnnl_success);
    /* Serial: each set once, recorded, then once more to see the serial runs agree. */
    for (int k = 0; k < THREADS; ++k) CHECK(run_set(&s, cp, g_strm, k, true));
    for (int k = 0; k < THREADS; ++k) CHECK(run_set(&s, cp, g_strm, k, false));

    int f = run_threads(&s, cp, JOB_EXECUTE, false);
    printf("%s: %d threads x %d executions of one compiled partition: %d mismatches\n", name, THREADS, ROUNDS, f);
    CHECK_EQ_INT(f, 0);

    CHECK_EQ_INT(dnnl_graph_set_compiled_partition_cache_capacity(0), dnnl_success); /* empty it */
    CHECK_EQ_INT(dnnl_graph_set_compiled_partition_cache_capacity(1024), dnnl_success);
    f = run_threads(&s, NULL, JOB_COMPILE_EXECUTE, false);
    printf("%s: %d threads x %d compiles (cache on) + executions: %d failures\n", name, THREADS, ROUNDS, f);
    CHECK_EQ_INT(f, 0);

    f = run_threads(&s, cp, JOB_EXECUTE, true);
    printf("%s: %d threads x %d executions while cache capacities change: %d failures\n", name, THREADS, ROUNDS, f);
    CHECK_EQ_INT(f, 0);
    f = run_threads(&s, NULL, JOB_COMPILE_EXECUTE, true);
    printf("%s: %d threads x %d compiles + executions while cache capacities change: %d failures\n", name, THREADS,
           ROUNDS, f);
    CHECK_EQ_INT(f, 0);

    CHECK_EQ_INT(dnnl_graph_compiled_partition_destroy(cp), dnnl_success);
    subject_free(&s);
}

int main(void) {
    CHECK_EQ_INT(dnnl_engine_create(&g_eng, dnnl_cpu, 0), dnnl_success);
    CHECK_EQ_INT(dnnl_stream_create(&g_strm, g_eng, dnnl_stream_default_flags), dnnl_success);
    static tg_graph g;
    build_mlp(&g);
    check_graph("gated MLP, constant weights", &g, true);
    build_sdpa(&g);
    check_graph("SDPA", &g, true);
    build_matmul(&g);
    check_graph("MatMul, constant weight", &g, true);
    /* Each thread its own weight under the same tensor id: the cache must
     * not repack an entry another execution is reading. */
    check_graph("MatMul, a different constant weight per thread", &g, false);
    CHECK_EQ_INT(dnnl_graph_set_constant_tensor_cache(0), dnnl_success);
    CHECK_EQ_INT(dnnl_graph_set_compiled_partition_cache_capacity(1024), dnnl_success);
    CHECK_EQ_INT(dnnl_stream_destroy(g_strm), dnnl_success);
    CHECK_EQ_INT(dnnl_engine_destroy(g_eng), dnnl_success);
    return pt_test_summary("test_int_concurrency");
}
