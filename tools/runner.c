/* Case execution; see runner.h. */
#define _POSIX_C_SOURCE 200809L
#include "runner.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compare.h"
#include "dtconv.h"
#include "fill.h"
#include "graph_build.h"
#include "reference.h"

const char *pc_status_name(pc_status st) {
    switch (st) {
        case PC_ST_PASSED: return "PASSED";
        case PC_ST_MISTRUSTED: return "MISTRUSTED";
        case PC_ST_SKIPPED: return "SKIPPED";
        case PC_ST_FAILED: return "FAILED";
        case PC_ST_UNIMPLEMENTED: return "UNIMPLEMENTED";
        case PC_ST_INVALID_ARGUMENTS: return "INVALID_ARGUMENTS";
        case PC_ST_UNTESTED: return "UNTESTED";
    }
    return "UNKNOWN";
}

bool pc_status_failed(pc_status st) {
    return st == PC_ST_FAILED || st == PC_ST_UNIMPLEMENTED || st == PC_ST_INVALID_ARGUMENTS || st == PC_ST_UNTESTED;
}

static void set_result(pc_case_result *r, pc_status st, const char *fmt, ...) {
    r->st = st;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->reason, sizeof r->reason, fmt, ap);
    va_end(ap);
}

/* ---- partitions ---------------------------------------------------------------- */

typedef struct {
    dnnl_graph_partition_t p;
    size_t index; /* position in the partition list */
    size_t pid;   /* library partition id */
    bool supported;
    pc_part_view view; /* ops in topological order */
    pc_lt *ins;
    size_t nins;
    pc_lt *outs;
    size_t nouts;
    dnnl_graph_compiled_partition_t cp;
} part_t;

static void part_free(part_t *pt) {
    dnnl_graph_compiled_partition_destroy(pt->cp);
    dnnl_graph_partition_destroy(pt->p);
    free(pt->view.ops);
    free(pt->ins);
    free(pt->outs);
    memset(pt, 0, sizeof *pt);
}

static void describe_ops(const part_t *pt, char *buf, size_t cap) {
    size_t len = 0;
    buf[0] = '\0';
    for (size_t k = 0; k < pt->view.n && len < cap; ++k) {
        const pc_op *op = &pt->view.c->ops[pt->view.ops[k]];
        len += (size_t)snprintf(buf + len, cap - len, "%s%s#%zu", k ? "," : "", pc_kind_name(op->kind), op->id);
    }
}

static bool part_has_kind(const part_t *pt, int kind) {
    for (size_t k = 0; k < pt->view.n; ++k)
        if (pt->view.c->ops[pt->view.ops[k]].kind == kind) return true;
    return false;
}

/* Queries one partition's ops and ports; ops are ordered like `order`. */
static int load_part(const pc_case *c, const size_t *order, part_t *pt, char *err, size_t cap) {
    size_t n = 0;
    dnnl_status_t st = dnnl_graph_partition_get_op_num(pt->p, &n);
    size_t *ids = calloc(n ? n : 1, sizeof *ids);
    if (st != dnnl_success || !ids) {
        free(ids);
        snprintf(err, cap, "partition op count query failed");
        return -1;
    }
    if (n && dnnl_graph_partition_get_ops(pt->p, n, ids) != dnnl_success) {
        free(ids);
        snprintf(err, cap, "partition op id query failed");
        return -1;
    }
    pt->view.c = c;
    pt->view.ops = calloc(n ? n : 1, sizeof *pt->view.ops);
    if (!pt->view.ops) {
        free(ids);
        return -1;
    }
    for (size_t k = 0; k < c->nops; ++k) {
        size_t idx = order[k];
        for (size_t q = 0; q < n; ++q)
            if (c->ops[idx].id == ids[q]) {
                pt->view.ops[pt->view.n++] = idx;
                break;
            }
    }
    if (pt->view.n != n) {
        snprintf(err, cap, "partition lists %zu op ids but only %zu are ops of the graph", n, pt->view.n);
        free(ids);
        return -1;
    }
    free(ids);
    pc_view_classify(&pt->view);
    uint8_t sup = 0;
    dnnl_graph_partition_is_supported(pt->p, &sup);
    pt->supported = sup != 0;
    dnnl_graph_partition_get_id(pt->p, &pt->pid);
    if (dnnl_graph_partition_get_input_ports_num(pt->p, &pt->nins) != dnnl_success ||
        dnnl_graph_partition_get_output_ports_num(pt->p, &pt->nouts) != dnnl_success) {
        snprintf(err, cap, "partition port count query failed");
        return -1;
    }
    pt->ins = calloc(pt->nins + 1, sizeof *pt->ins);
    pt->outs = calloc(pt->nouts + 1, sizeof *pt->outs);
    if (!pt->ins || !pt->outs) return -1;
    if ((pt->nins && dnnl_graph_partition_get_input_ports(pt->p, pt->nins, pt->ins) != dnnl_success) ||
        (pt->nouts && dnnl_graph_partition_get_output_ports(pt->p, pt->nouts, pt->outs) != dnnl_success)) {
        snprintf(err, cap, "partition port query failed");
        return -1;
    }
    return 0;
}

/* ---- buffers -------------------------------------------------------------------- */

typedef struct {
    size_t id;
    pc_lt lt; /* as compiled (queried) */
    void *buf;
    dnnl_graph_tensor_t t;
    bool scalar;
} lib_tensor;

typedef struct {
    lib_tensor *v;
    size_t n;
} lib_tensors;

static void lib_tensors_free(lib_tensors *l) {
    for (size_t k = 0; k < l->n; ++k) {
        if (l->v[k].t) dnnl_graph_tensor_destroy(l->v[k].t);
        free(l->v[k].buf);
    }
    free(l->v);
    l->v = NULL;
    l->n = 0;
}

static lib_tensor *lib_find(lib_tensors *l, size_t id) {
    for (size_t k = 0; k < l->n; ++k)
        if (l->v[k].id == id) return &l->v[k];
    return NULL;
}

/* Creates library tensors for the ports (one per distinct id), taking
 * shapes/layouts from the compiled partition and, for inputs, data from vals. */
static int make_tensors(dnnl_graph_compiled_partition_t cp, const pc_lt *ports, size_t nports, bool inputs,
                        pc_values *vals, dnnl_engine_t eng, lib_tensors *l, char *err, size_t cap) {
    l->v = calloc(nports + 1, sizeof *l->v);
    l->n = 0;
    if (!l->v) return -1;
    for (size_t k = 0; k < nports; ++k) {
        if (lib_find(l, ports[k].id)) continue;
        lib_tensor *t = &l->v[l->n++];
        t->id = ports[k].id;
        dnnl_status_t st = dnnl_graph_compiled_partition_query_logical_tensor(cp, ports[k].id, &t->lt);
        if (st != dnnl_success || t->lt.ndims < 0) {
            snprintf(err, cap, "query_logical_tensor(%zu) failed: %s", ports[k].id, pc_status_str(st));
            return -1;
        }
        if (t->lt.layout_type != dnnl_graph_layout_type_strided) {
            snprintf(err, cap, "tensor %zu: compiled layout is not strided (type %d); cannot read it", t->id,
                     (int)t->lt.layout_type);
            return -1;
        }
        size_t bytes = 0;
        if (dnnl_graph_logical_tensor_get_mem_size(&t->lt, &bytes) != dnnl_success) bytes = 0;
        size_t mine = pc_buffer_bytes(t->lt.data_type, t->lt.ndims, t->lt.dims, t->lt.layout.strides);
        if (mine > bytes) bytes = mine;
        t->buf = calloc(bytes ? bytes : 1, 1);
        if (!t->buf) {
            snprintf(err, cap, "out of memory for tensor %zu (%zu bytes)", t->id, bytes);
            return -1;
        }
        if (inputs) {
            pc_tval *v = pc_values_find(vals, t->id);
            if (!v) {
                snprintf(err, cap, "no data for input %zu", t->id);
                return -1;
            }
            pc_values_to_buffer(&t->lt, v->v, t->buf);
        }
        t->scalar = inputs && ports[k].property == dnnl_graph_tensor_property_host_scalar;
        st = t->scalar ? dnnl_graph_tensor_create_scalar(&t->t, &t->lt, t->buf)
                       : dnnl_graph_tensor_create(&t->t, &t->lt, eng, t->buf);
        if (st != dnnl_success) {
            t->t = NULL;
            snprintf(err, cap, "tensor creation for %zu failed: %s", t->id, pc_status_str(st));
            return -1;
        }
    }
    return 0;
}

/* Execution argument list: one tensor per port, repeated ids included. */
static const_dnnl_graph_tensor_t *arg_list(const pc_lt *ports, size_t n, lib_tensors *l) {
    const_dnnl_graph_tensor_t *a = calloc(n + 1, sizeof *a);
    if (!a) return NULL;
    for (size_t k = 0; k < n; ++k) {
        lib_tensor *t = lib_find(l, ports[k].id);
        a[k] = t ? t->t : NULL;
    }
    return a;
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* ---- compile / execute one partition ----------------------------------------------------- */

static dnnl_status_t compile_part(part_t *pt, dnnl_engine_t eng, char *err, size_t cap) {
    dnnl_status_t st = dnnl_graph_compiled_partition_create(&pt->cp, pt->p);
    if (st != dnnl_success) {
        pt->cp = NULL;
        snprintf(err, cap, "compiled partition creation failed: %s", pc_status_str(st));
        return st;
    }
    const dnnl_graph_logical_tensor_t **ip = calloc(pt->nins + 1, sizeof *ip);
    const dnnl_graph_logical_tensor_t **op = calloc(pt->nouts + 1, sizeof *op);
    if (!ip || !op) {
        free(ip);
        free(op);
        return dnnl_out_of_memory;
    }
    for (size_t k = 0; k < pt->nins; ++k) ip[k] = &pt->ins[k];
    for (size_t k = 0; k < pt->nouts; ++k) op[k] = &pt->outs[k];
    st = dnnl_graph_partition_compile(pt->p, pt->cp, pt->nins, ip, pt->nouts, op, eng);
    free(ip);
    free(op);
    if (st != dnnl_success) {
        char ops[256];
        describe_ops(pt, ops, sizeof ops);
        snprintf(err, cap, "compile of partition #%zu (%s) failed: %s", pt->index, ops, pc_status_str(st));
    }
    return st;
}

typedef struct {
    lib_tensors in, out;
    const_dnnl_graph_tensor_t *ia, *oa;
    void *scratch;
    dnnl_graph_tensor_t st;
} exec_args;

static void exec_args_free(exec_args *a) {
    lib_tensors_free(&a->in);
    lib_tensors_free(&a->out);
    free(a->ia);
    free(a->oa);
    if (a->st) dnnl_graph_tensor_destroy(a->st);
    free(a->scratch);
    memset(a, 0, sizeof *a);
}

static int prepare_exec(part_t *pt, pc_values *vals, dnnl_engine_t eng, exec_args *a, char *err, size_t cap) {
    memset(a, 0, sizeof *a);
    if (make_tensors(pt->cp, pt->ins, pt->nins, true, vals, eng, &a->in, err, cap)) return -1;
    if (make_tensors(pt->cp, pt->outs, pt->nouts, false, vals, eng, &a->out, err, cap)) return -1;
    a->ia = arg_list(pt->ins, pt->nins, &a->in);
    a->oa = arg_list(pt->outs, pt->nouts, &a->out);
    if (!a->ia || !a->oa) return -1;
    dnnl_graph_logical_tensor_t slt;
    if (dnnl_graph_compiled_partition_get_scratchpad_logical_tensor(pt->cp, &slt) == dnnl_success &&
        slt.ndims == 1 && slt.dims[0] > 0) {
        a->scratch = malloc((size_t)slt.dims[0]);
        if (!a->scratch || dnnl_graph_tensor_create(&a->st, &slt, eng, a->scratch) != dnnl_success) {
            a->st = NULL;
            snprintf(err, cap, "scratchpad of %" PRId64 " bytes could not be set up", slt.dims[0]);
            return -1;
        }
    }
    return 0;
}

static dnnl_status_t execute(part_t *pt, exec_args *a, dnnl_stream_t strm) {
    dnnl_status_t st = dnnl_graph_compiled_partition_execute_v2(pt->cp, strm, pt->nins, a->ia, pt->nouts, a->oa, a->st);
    if (st == dnnl_success) st = dnnl_stream_wait(strm);
    return st;
}

/* Compiles the partition and binds its tensors: PC_ST_PASSED, or the
 * failure status with its message in msg. */
static pc_status compile_and_bind(part_t *pt, pc_values *vals, dnnl_engine_t eng, exec_args *a, char *msg,
                                  size_t cap) {
    char err[768] = "";
    dnnl_status_t st = compile_part(pt, eng, err, sizeof err);
    if (st != dnnl_success) {
        snprintf(msg, cap, "%s", err);
        return st == dnnl_unimplemented ? PC_ST_UNIMPLEMENTED : PC_ST_FAILED;
    }
    if (prepare_exec(pt, vals, eng, a, err, sizeof err)) {
        snprintf(msg, cap, "partition #%zu: %s", pt->index, err[0] ? err : "out of memory");
        return PC_ST_FAILED;
    }
    return PC_ST_PASSED;
}

/* ---- correctness ------------------------------------------------------------------------------- */

static void fill_part_inputs(part_t *pt, pc_values *vals, pc_values *lib_results, bool propagate) {
    for (size_t k = 0; k < pt->nins; ++k) {
        const pc_lt *port = &pt->ins[k];
        if (pc_values_find(vals, port->id)) continue;
        const pc_lt *decl = pc_case_tensor(pt->view.c, port->id);
        pc_tval *t = pc_values_put(vals, decl ? decl : port);
        if (!t) continue;
        pc_tval *prev = propagate ? pc_values_find(lib_results, port->id) : NULL;
        if (prev && prev->n == t->n) memcpy(t->v, prev->v, (size_t)t->n * sizeof *t->v);
        else pc_fill_input(&pt->view, &t->lt, t->v);
    }
}

static pc_status check_part(part_t *pt, pc_values *lib_results, bool propagate, dnnl_engine_t eng,
                            dnnl_stream_t strm, int verbose, char *msg, size_t cap) {
    pc_values vals = {0};
    exec_args a;
    memset(&a, 0, sizeof a);
    pc_status res = PC_ST_PASSED;
    char err[768] = "";
    float *got = NULL;
    fill_part_inputs(pt, &vals, lib_results, propagate);
    for (size_t k = 0; k < pt->nins; ++k)
        if (!pc_values_find(&vals, pt->ins[k].id)) {
            snprintf(msg, cap, "partition #%zu: input %zu has no known shape", pt->index, pt->ins[k].id);
            res = PC_ST_FAILED;
            goto done;
        }
    if (pc_reference_run(&pt->view, &vals, eng, strm, err, sizeof err)) {
        snprintf(msg, cap, "partition #%zu: %s", pt->index, err);
        res = PC_ST_UNTESTED;
        goto done;
    }
    res = compile_and_bind(pt, &vals, eng, &a, msg, cap);
    if (res != PC_ST_PASSED) goto done;
    dnnl_status_t st = execute(pt, &a, strm);
    if (st != dnnl_success) {
        snprintf(msg, cap, "partition #%zu: execution failed: %s", pt->index, pc_status_str(st));
        res = PC_ST_FAILED;
        goto done;
    }
    for (size_t k = 0; k < a.out.n; ++k) {
        lib_tensor *t = &a.out.v[k];
        pc_tval *ref = pc_values_find(&vals, t->id);
        long prod = pc_case_producer(pt->view.c, t->id);
        if (!ref || prod < 0) {
            snprintf(msg, cap, "partition #%zu: no reference for output %zu", pt->index, t->id);
            res = PC_ST_UNTESTED;
            goto done;
        }
        int64_t n = pc_lt_nelems(&t->lt);
        if (n != ref->n) {
            char d1[96], d2[96];
            pc_lt_describe(&t->lt, d1, sizeof d1);
            pc_lt_describe(&ref->lt, d2, sizeof d2);
            snprintf(msg, cap, "partition #%zu: output %zu has shape %s, expected %s", pt->index, t->id, d1, d2);
            res = PC_ST_FAILED;
            goto done;
        }
        free(got);
        got = malloc((size_t)(n ? n : 1) * sizeof *got);
        if (!got) {
            res = PC_ST_FAILED;
            snprintf(msg, cap, "out of memory");
            goto done;
        }
        pc_values_from_buffer(&t->lt, t->buf, got);
        const pc_op *producer = &pt->view.c->ops[prod];
        size_t out_index = 0;
        while (out_index < producer->nout && producer->out[out_index].id != t->id) ++out_index;
        char cmsg[512] = "";
        pc_cmp_result cr = pc_compare(&pt->view, producer, out_index, &t->lt, ref->v, got, n, cmsg, sizeof cmsg);
        if (cr == PC_CMP_FAILED) {
            snprintf(msg, cap, "partition #%zu: %s", pt->index, cmsg);
            res = PC_ST_FAILED;
            goto done;
        }
        if (cr == PC_CMP_MISTRUSTED && res == PC_ST_PASSED) {
            res = PC_ST_MISTRUSTED;
            snprintf(msg, cap, "partition #%zu: %s", pt->index, cmsg);
        }
        if (verbose >= 2) printf("    partition #%zu output %zu: %lld values compared\n", pt->index, t->id, (long long)n);
        if (verbose >= 3) {
            /* FNV-1a over the output's values read as f32: lets two builds be
             * compared bit for bit on the same cases. */
            uint64_t h = 1469598103934665603ull;
            const unsigned char *b = (const unsigned char *)got;
            for (size_t i = 0; i < (size_t)n * sizeof *got; ++i) h = (h ^ b[i]) * 1099511628211ull;
            printf("    partition #%zu output %zu: digest %016" PRIx64 "\n", pt->index, t->id, h);
        }
        pc_tval *keep = pc_values_put(lib_results, &ref->lt);
        if (keep) memcpy(keep->v, got, (size_t)n * sizeof *got);
    }
done:
    free(got);
    exec_args_free(&a);
    pc_values_free(&vals);
    return res;
}

/* ---- performance --------------------------------------------------------------------------------- */

static pc_status time_part(part_t *pt, const pc_run_opts *o, dnnl_engine_t eng, dnnl_stream_t strm, double *median,
                           char *msg, size_t cap) {
    pc_values vals = {0};
    exec_args a;
    memset(&a, 0, sizeof a);
    pc_status res = PC_ST_PASSED;
    int runs = o->perf_runs > 0 ? o->perf_runs : 1;
    double *t = calloc((size_t)runs, sizeof *t);
    if (!t) return PC_ST_FAILED;
    fill_part_inputs(pt, &vals, &vals, false);
    res = compile_and_bind(pt, &vals, eng, &a, msg, cap);
    if (res != PC_ST_PASSED) goto done;
    dnnl_status_t st = dnnl_success;
    for (int w = 0; w < o->perf_warmup; ++w)
        if ((st = execute(pt, &a, strm)) != dnnl_success) break;
    for (int r = 0; r < runs && st == dnnl_success; ++r) {
        double t0 = now_ms();
        st = execute(pt, &a, strm);
        t[r] = now_ms() - t0;
    }
    if (st != dnnl_success) {
        snprintf(msg, cap, "partition #%zu: execution failed: %s", pt->index, pc_status_str(st));
        res = PC_ST_FAILED;
        goto done;
    }
    qsort(t, (size_t)runs, sizeof *t, cmp_double);
    *median = (runs % 2) ? t[runs / 2] : 0.5 * (t[runs / 2 - 1] + t[runs / 2]);
done:
    free(t);
    exec_args_free(&a);
    pc_values_free(&vals);
    return res;
}

/* "1.862 GFLOP" / "3.50 MFLOP" / "1024 FLOP". */
static void amount_text(double flops, char *buf, size_t cap) {
    if (flops >= 1e9) snprintf(buf, cap, "%.3f GFLOP", flops * 1e-9);
    else if (flops >= 1e6) snprintf(buf, cap, "%.3f MFLOP", flops * 1e-6);
    else snprintf(buf, cap, "%.0f FLOP", flops);
}

/* ", 0.151 GFLOP, 12.3 GFLOP/s[, 4.5% of f32 peak]"; "" when flops are not
 * known or zero. */
static void rate_text(double flops, double ms, pc_peak_class cls, const pc_peak *peak, char *buf, size_t cap) {
    buf[0] = '\0';
    if (flops <= 0 || ms <= 0) return;
    double gf = flops / (ms * 1e6);
    char amount[64];
    amount_text(flops, amount, sizeof amount);
    size_t len = (size_t)snprintf(buf, cap, ", %s, %.1f GFLOP/s", amount, gf);
    if (peak && peak->loaded && peak->gflops[cls] > 0 && len < cap)
        snprintf(buf + len, cap - len, ", %.1f%% of %s peak", 100.0 * gf / peak->gflops[cls],
                 pc_peak_class_name(cls));
}

/* Mode P: times every partition and prints one line per partition; the
 * totals go to r->perf.  Returns nonzero (with r set) on a failure. */
static int time_all(part_t *pts, size_t np, const pc_case *c, const pc_run_opts *o, dnnl_engine_t eng,
                    dnnl_stream_t strm, pc_case_result *r) {
    const pc_peak *peak = o->peak && o->peak->loaded ? o->peak : NULL;
    double total = 0.0, flops = 0.0, ideal_ms = 0.0;
    bool flops_known = true, ideal_known = peak != NULL;
    size_t counted = 0;
    for (size_t k = 0; k < np; ++k) {
        double med = 0.0;
        char msg[768] = "";
        pc_status ps = time_part(&pts[k], o, eng, strm, &med, msg, sizeof msg);
        if (ps != PC_ST_PASSED) {
            set_result(r, ps, "%s", msg);
            return -1;
        }
        total += med;
        double f = pc_ops_flops(c, pts[k].view.ops, pts[k].view.n);
        pc_peak_class cls = pc_ops_peak_class(c, pts[k].view.ops, pts[k].view.n);
        char ops[512], rate[160];
        describe_ops(&pts[k], ops, sizeof ops);
        rate_text(f, med, cls, peak, rate, sizeof rate);
        if (f < 0) {
            flops_known = false;
            snprintf(rate, sizeof rate, " (FLOPs unknown: shapes not known)");
        } else if (f == 0) {
            snprintf(rate, sizeof rate, " (no counted FLOPs)");
        } else {
            flops += f;
            ++counted;
            if (peak && peak->gflops[cls] > 0) ideal_ms += f / (peak->gflops[cls] * 1e6);
            else ideal_known = false;
        }
        printf("    partition #%zu (%s): %.4f ms%s\n", k, ops, med, rate);
    }
    fflush(stdout);
    r->total_ms = total;
    r->flops = flops_known ? flops : -1.0;
    size_t len = (size_t)snprintf(r->perf, sizeof r->perf, "total %.4f ms", total);
    if (flops_known && flops > 0 && total > 0 && len < sizeof r->perf) {
        char amount[64];
        amount_text(flops, amount, sizeof amount);
        len += (size_t)snprintf(r->perf + len, sizeof r->perf - len, ", %s in %zu of %zu partition%s, %.1f GFLOP/s",
                                amount, counted, np, np == 1 ? "" : "s", flops / (total * 1e6));
        if (ideal_known && ideal_ms > 0 && len < sizeof r->perf)
            len += (size_t)snprintf(r->perf + len, sizeof r->perf - len, ", %.1f%% of peak", 100.0 * ideal_ms / total);
    }
    if (len < sizeof r->perf)
        snprintf(r->perf + len, sizeof r->perf - len, " (median of %d runs after %d warm-up)",
                 o->perf_runs > 0 ? o->perf_runs : 1, o->perf_warmup);
    return 0;
}

/* ---- the case ---------------------------------------------------------------------------------------- */

void pc_run_case(const pc_case *c, int64_t expected_n, const pc_run_opts *o, dnnl_engine_t eng, dnnl_stream_t strm,
                 pc_case_result *r) {
    memset(r, 0, sizeof *r);
    char err[768] = "";
    size_t *order = malloc((c->nops ? c->nops : 1) * sizeof *order);
    dnnl_graph_graph_t g = NULL;
    dnnl_graph_partition_t *parts = NULL;
    part_t *pts = NULL;
    size_t np = 0;
    if (!order) {
        set_result(r, PC_ST_FAILED, "out of memory");
        return;
    }
    if (pc_case_topo_order(c, order, err, sizeof err)) {
        set_result(r, PC_ST_INVALID_ARGUMENTS, "%s", err);
        goto done;
    }
    dnnl_status_t st = pc_build_graph(c, order, dnnl_cpu, &g, err, sizeof err);
    if (st != dnnl_success) {
        g = NULL;
        set_result(r, PC_ST_FAILED, "%s", err);
        goto done;
    }
    st = dnnl_graph_graph_filter(g, dnnl_graph_partition_policy_fusion);
    if (st == dnnl_success) st = dnnl_graph_graph_get_partition_num(g, &np);
    if (st != dnnl_success) {
        set_result(r, PC_ST_FAILED, "partitioning failed: %s", pc_status_str(st));
        goto done;
    }
    if (np == 0) {
        set_result(r, PC_ST_FAILED, "the library returned no partitions");
        goto done;
    }
    parts = calloc(np, sizeof *parts);
    pts = calloc(np, sizeof *pts);
    if (!parts || !pts) {
        set_result(r, PC_ST_FAILED, "out of memory");
        goto done;
    }
    st = dnnl_graph_graph_get_partitions(g, np, parts);
    if (st != dnnl_success) {
        set_result(r, PC_ST_FAILED, "get_partitions failed: %s", pc_status_str(st));
        np = 0;
        goto done;
    }
    size_t nsup = 0, covered = 0;
    for (size_t k = 0; k < np; ++k) {
        pts[k].p = parts[k];
        pts[k].index = k;
        if (load_part(c, order, &pts[k], err, sizeof err)) {
            set_result(r, PC_ST_FAILED, "partition %zu: %s", k, err);
            goto done;
        }
        nsup += pts[k].supported;
        covered += pts[k].view.n;
        if (o->verbose >= 1) {
            char ops[512];
            describe_ops(&pts[k], ops, sizeof ops);
            printf("    partition #%zu (id %zu): %s%s%s%s%s\n", k, pts[k].pid, pts[k].supported ? "supported" : "unsupported",
                   pts[k].view.sdpa_fwd ? ", sdpa" : "", pts[k].view.sdpa_bwd ? ", sdpa-bwd" : "",
                   pts[k].view.gated_mlp ? ", gated-mlp" : "", "");
            printf("      ops: %s\n", ops);
        }
    }
    r->nparts = np;
    for (size_t k = 0; k < np; ++k) r->nfused += pts[k].view.n > 1;
    if (covered != c->nops) {
        set_result(r, PC_ST_FAILED, "partitions cover %zu ops, the graph has %zu", covered, c->nops);
        goto done;
    }

    /* Partition checks (docs/graph-json.md, "Running a case"). */
    for (size_t k = 0; k < np; ++k)
        for (size_t q = 0; q < pts[k].view.n; ++q) {
            const pc_op *op = &c->ops[pts[k].view.ops[q]];
            const char *acc = pc_attr_str(op, dnnl_graph_op_attr_accumulation_mode, "strict");
            if (strcmp(acc, "strict") != 0 && strcmp(acc, "relaxed") != 0) {
                set_result(r, PC_ST_SKIPPED, "op %zu uses accumulation_mode=%s (not run on CPU)", op->id, acc);
                goto done;
            }
        }
    bool has_pow = false;
    for (size_t k = 0; k < np; ++k) has_pow = has_pow || part_has_kind(&pts[k], dnnl_graph_op_pow);
    if (nsup == 0) {
        set_result(r, PC_ST_SKIPPED, "all %zu partition%s unsupported by the library", np, np == 1 ? " is" : "s are");
        goto done;
    }
    if (expected_n > 0 && (int64_t)np != expected_n) {
        if (has_pow) {
            set_result(r, PC_ST_SKIPPED, "partition count %zu != %" PRId64 " with Pow in the graph", np, expected_n);
        } else {
            char ops[512] = "";
            size_t len = 0;
            for (size_t k = 0; k < np && len < sizeof ops; ++k) {
                char one[256];
                describe_ops(&pts[k], one, sizeof one);
                len += (size_t)snprintf(ops + len, sizeof ops - len, "%s[%s]", k ? " " : "", one);
            }
            set_result(r, PC_ST_FAILED, "expected %" PRId64 " partition%s, got %zu: %s", expected_n,
                       expected_n == 1 ? "" : "s", np, ops);
        }
        goto done;
    }
    for (size_t k = 0; k < np; ++k) {
        if (pts[k].supported) continue;
        char ops[512];
        describe_ops(&pts[k], ops, sizeof ops);
        if (part_has_kind(&pts[k], dnnl_graph_op_pow))
            set_result(r, PC_ST_SKIPPED, "unsupported partition with Pow: %s", ops);
        else
            set_result(r, PC_ST_UNIMPLEMENTED, "partition #%zu (%s) is not supported", k, ops);
        goto done;
    }

    if (o->mode == 'P') {
        if (time_all(pts, np, c, o, eng, strm, r)) goto done;
        r->st = PC_ST_PASSED;
        goto done;
    }

    pc_values lib_results = {0};
    pc_status worst = PC_ST_PASSED;
    for (size_t k = 0; k < np; ++k) {
        char msg[768] = "";
        pc_status ps = check_part(&pts[k], &lib_results, o->propagate, eng, strm, o->verbose, msg, sizeof msg);
        if (ps == PC_ST_MISTRUSTED && worst == PC_ST_PASSED) {
            worst = ps;
            set_result(r, ps, "%s", msg);
        } else if (ps != PC_ST_PASSED && ps != PC_ST_MISTRUSTED) {
            set_result(r, ps, "%s", msg);
            worst = ps;
            break;
        }
    }
    pc_values_free(&lib_results);
    r->st = worst;
done:
    for (size_t k = 0; k < np; ++k) {
        if (pts && pts[k].p) part_free(&pts[k]);
        else if (parts && parts[k]) dnnl_graph_partition_destroy(parts[k]);
    }
    free(pts);
    free(parts);
    dnnl_graph_graph_destroy(g);
    free(order);
}
