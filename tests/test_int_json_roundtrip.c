/* JSON graph dump -> loader round trip (docs/graph-json.md).
 * A MatMul -> Add -> ReLU -> End graph is built through the public API,
 * dumped with pt_json_dump_ops, loaded back with the partita loader
 * (tools/case_json.c), and compared op by op; both graphs are then
 * partitioned and executed on the same inputs and must agree bit for bit.
 * A second dump covers every attribute type, unknown shapes, rank-0 tensors,
 * 64-bit ids and the writer's layout (key order, indentation). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "oneapi/dnnl/dnnl_graph.h"
#include "compile/json_dump.h"
#include "test_util.h"

#include "case_json.h"
#include "dtconv.h"
#include "graph_build.h"

#define NOPS 4

static void lt_strided(dnnl_graph_logical_tensor_t *lt, size_t id, int nd, const int64_t *dims, const int64_t *strides,
                       dnnl_graph_tensor_property_t p) {
    dnnl_dims_t d, s;
    for (int k = 0; k < nd; ++k) {
        d[k] = dims[k];
        s[k] = strides[k];
    }
    CHECK_EQ_INT(dnnl_graph_logical_tensor_init_with_strides(lt, id, dnnl_f32, nd, d, s, p), dnnl_success);
}

/* ---- the MatMul -> Add -> ReLU -> End graph ------------------------------------ */

static void build_ops(dnnl_graph_op_t ops[NOPS]) {
    dnnl_graph_logical_tensor_t src, wei, mm, bias, add, relu;
    /* A permuted (non-dense-order) source layout must survive the trip. */
    lt_strided(&src, 10, 3, (int64_t[]){2, 3, 4}, (int64_t[]){12, 1, 3}, dnnl_graph_tensor_property_undef);
    lt_strided(&wei, 11, 2, (int64_t[]){4, 5}, (int64_t[]){5, 1}, dnnl_graph_tensor_property_constant);
    lt_strided(&mm, 12, 3, (int64_t[]){2, 3, 5}, (int64_t[]){15, 5, 1}, dnnl_graph_tensor_property_undef);
    lt_strided(&bias, 13, 1, (int64_t[]){5}, (int64_t[]){1}, dnnl_graph_tensor_property_undef);
    lt_strided(&add, 14, 3, (int64_t[]){2, 3, 5}, (int64_t[]){15, 5, 1}, dnnl_graph_tensor_property_undef);
    lt_strided(&relu, 15, 3, (int64_t[]){2, 3, 5}, (int64_t[]){15, 5, 1}, dnnl_graph_tensor_property_undef);

    CHECK_EQ_INT(dnnl_graph_op_create(&ops[0], 1, dnnl_graph_op_matmul, "mm0"), dnnl_success);
    dnnl_graph_op_add_input(ops[0], &src);
    dnnl_graph_op_add_input(ops[0], &wei);
    dnnl_graph_op_add_output(ops[0], &mm);
    uint8_t f = 0;
    CHECK_EQ_INT(dnnl_graph_op_set_attr_bool(ops[0], dnnl_graph_op_attr_transpose_b, &f, 1), dnnl_success);

    CHECK_EQ_INT(dnnl_graph_op_create(&ops[1], 2, dnnl_graph_op_add, "add0"), dnnl_success);
    dnnl_graph_op_add_input(ops[1], &mm);
    dnnl_graph_op_add_input(ops[1], &bias);
    dnnl_graph_op_add_output(ops[1], &add);
    CHECK_EQ_INT(dnnl_graph_op_set_attr_str(ops[1], dnnl_graph_op_attr_auto_broadcast, "numpy", 5), dnnl_success);

    CHECK_EQ_INT(dnnl_graph_op_create(&ops[2], 3, dnnl_graph_op_relu, "relu0"), dnnl_success);
    dnnl_graph_op_add_input(ops[2], &add);
    dnnl_graph_op_add_output(ops[2], &relu);

    CHECK_EQ_INT(dnnl_graph_op_create(&ops[3], 4, dnnl_graph_op_end, "end0"), dnnl_success);
    dnnl_graph_op_add_input(ops[3], &relu);
}

static bool same_lt(const pc_lt *a, const pc_lt *b) {
    if (a->id != b->id || a->data_type != b->data_type || a->ndims != b->ndims || a->property != b->property ||
        a->layout_type != b->layout_type)
        return false;
    for (int d = 0; d < a->ndims; ++d) {
        if (a->dims[d] != b->dims[d]) return false;
        if (a->layout_type == dnnl_graph_layout_type_strided && a->layout.strides[d] != b->layout.strides[d])
            return false;
    }
    return true;
}

/* Attribute values of the library op vs the loaded one. */
static void check_attrs(const pt_op *op, const pc_op *lo) {
    CHECK_EQ_INT(lo->nattr, op->nattr);
    for (size_t k = 0; k < op->nattr; ++k) {
        const pt_attr *a = &op->attrs[k];
        const pc_attr *b = pc_op_attr(lo, a->name);
        CHECK(b != NULL);
        if (!b) continue;
        switch (a->kind) {
            case PT_ATTR_BOOL:
                CHECK_EQ_INT(b->type, PC_AT_BOOL);
                CHECK_EQ_INT(b->i[0], a->i[0]);
                break;
            case PT_ATTR_S64:
                CHECK_EQ_INT(b->type, PC_AT_S64);
                CHECK_EQ_INT(b->i[0], a->i[0]);
                break;
            case PT_ATTR_S64S:
                CHECK_EQ_INT(b->type, PC_AT_S64S);
                CHECK_EQ_INT(b->n, a->n);
                for (size_t i = 0; i < a->n && i < b->n; ++i) CHECK_EQ_INT(b->i[i], a->i[i]);
                break;
            case PT_ATTR_F32:
                CHECK_EQ_INT(b->type, PC_AT_F32);
                CHECK(b->f[0] == a->f[0]);
                break;
            case PT_ATTR_F32S:
                CHECK_EQ_INT(b->type, PC_AT_F32S);
                CHECK_EQ_INT(b->n, a->n);
                for (size_t i = 0; i < a->n && i < b->n; ++i) CHECK(b->f[i] == a->f[i]);
                break;
            case PT_ATTR_STR:
                CHECK_EQ_INT(b->type, PC_AT_STR);
                CHECK(strcmp(b->s, a->s) == 0);
                break;
        }
    }
}

static void check_same_ops(dnnl_graph_op_t ops[], size_t n, const pc_case *c) {
    CHECK_EQ_INT(c->nops, n);
    for (size_t k = 0; k < n && k < c->nops; ++k) {
        const pt_op *op = ops[k];
        const pc_op *lo = &c->ops[k];
        CHECK_EQ_INT(lo->id, op->id);
        CHECK_EQ_INT(lo->kind, op->kind);
        CHECK(strcmp(lo->name, op->name) == 0);
        CHECK_EQ_INT(lo->nin, op->nin);
        CHECK_EQ_INT(lo->nout, op->nout);
        for (size_t i = 0; i < op->nin && i < lo->nin; ++i) CHECK(same_lt(&lo->in[i], &op->in[i]));
        for (size_t o = 0; o < op->nout && o < lo->nout; ++o) CHECK(same_lt(&lo->out[o], &op->out[o]));
        check_attrs(op, lo);
    }
}

/* ---- running a graph ---------------------------------------------------------------- */

#define MAXT 32
typedef struct {
    size_t id[MAXT];
    float *v[MAXT];
    size_t n[MAXT];
    int count;
} results_t;

static float *find_result(results_t *r, size_t id) {
    for (int k = 0; k < r->count; ++k)
        if (r->id[k] == id) return r->v[k];
    return NULL;
}

/* Partitions, compiles and executes every partition in order; inputs that
 * no partition produced get deterministic values (one value per element of
 * the strided buffer).  Records partition op ids and all outputs. */
static int run_graph(dnnl_graph_graph_t g, dnnl_engine_t eng, dnnl_stream_t s, size_t part_ops[8][8],
                     size_t part_nops[8], results_t *res) {
    CHECK_EQ_INT(dnnl_graph_graph_filter(g, dnnl_graph_partition_policy_fusion), dnnl_success);
    size_t np = 0;
    CHECK_EQ_INT(dnnl_graph_graph_get_partition_num(g, &np), dnnl_success);
    if (np == 0 || np > 8) return -1;
    dnnl_graph_partition_t parts[8];
    CHECK_EQ_INT(dnnl_graph_graph_get_partitions(g, np, parts), dnnl_success);
    for (size_t p = 0; p < np; ++p) {
        dnnl_graph_partition_get_op_num(parts[p], &part_nops[p]);
        if (part_nops[p] <= 8) dnnl_graph_partition_get_ops(parts[p], part_nops[p], part_ops[p]);
        uint8_t sup = 0;
        dnnl_graph_partition_is_supported(parts[p], &sup);
        if (!sup) continue; /* End alone may stay unsupported: it runs nothing */
        size_t ni = 0, no = 0;
        dnnl_graph_partition_get_input_ports_num(parts[p], &ni);
        dnnl_graph_partition_get_output_ports_num(parts[p], &no);
        dnnl_graph_logical_tensor_t in[8], out[8];
        if (ni > 8 || no > 8) return -1;
        dnnl_graph_partition_get_input_ports(parts[p], ni, in);
        dnnl_graph_partition_get_output_ports(parts[p], no, out);
        const dnnl_graph_logical_tensor_t *ip[8], *op[8];
        for (size_t k = 0; k < ni; ++k) ip[k] = &in[k];
        for (size_t k = 0; k < no; ++k) op[k] = &out[k];
        dnnl_graph_compiled_partition_t cp = NULL;
        CHECK_EQ_INT(dnnl_graph_compiled_partition_create(&cp, parts[p]), dnnl_success);
        CHECK_EQ_INT(dnnl_graph_partition_compile(parts[p], cp, ni, ip, no, op, eng), dnnl_success);
        dnnl_graph_tensor_t it[8], ot[8];
        void *ib[8], *ob[8];
        for (size_t k = 0; k < ni; ++k) {
            size_t bytes = 0;
            dnnl_graph_logical_tensor_get_mem_size(&in[k], &bytes);
            ib[k] = calloc(bytes / 4 + 1, 4);
            float *prev = find_result(res, in[k].id);
            int64_t ne = pc_lt_nelems(&in[k]);
            if (prev) {
                /* Dense previous results into this input's layout. */
                for (int64_t e = 0; e < ne; ++e) ((float *)ib[k])[e] = prev[e];
            } else {
                for (size_t e = 0; e < bytes / 4; ++e)
                    ((float *)ib[k])[e] = (float)((int)((in[k].id * 7 + e * 3) % 9) - 4) * 0.5f;
            }
            dnnl_graph_tensor_create(&it[k], &in[k], eng, ib[k]);
        }
        for (size_t k = 0; k < no; ++k) {
            dnnl_graph_logical_tensor_t q;
            dnnl_graph_compiled_partition_query_logical_tensor(cp, out[k].id, &q);
            size_t bytes = 0;
            dnnl_graph_logical_tensor_get_mem_size(&q, &bytes);
            ob[k] = calloc(bytes / 4 + 1, 4);
            dnnl_graph_tensor_create(&ot[k], &q, eng, ob[k]);
            out[k] = q;
        }
        CHECK_EQ_INT(dnnl_graph_compiled_partition_execute(cp, s, ni, (const_dnnl_graph_tensor_t *)it, no,
                                                           (const_dnnl_graph_tensor_t *)ot),
                     dnnl_success);
        dnnl_stream_wait(s);
        for (size_t k = 0; k < no && res->count < MAXT; ++k) {
            int64_t ne = pc_lt_nelems(&out[k]);
            float *dense = calloc((size_t)(ne > 0 ? ne : 1), sizeof *dense);
            /* Read through the strides into dense order. */
            int64_t idx[DNNL_MAX_NDIMS] = {0};
            for (int64_t e = 0; e < ne; ++e) {
                int64_t off = 0;
                for (int d = 0; d < out[k].ndims; ++d) off += idx[d] * out[k].layout.strides[d];
                dense[e] = ((float *)ob[k])[off];
                for (int d = out[k].ndims - 1; d >= 0; --d) {
                    if (++idx[d] < out[k].dims[d]) break;
                    idx[d] = 0;
                }
            }
            res->id[res->count] = out[k].id;
            res->v[res->count] = dense;
            res->n[res->count] = (size_t)ne;
            ++res->count;
        }
        for (size_t k = 0; k < ni; ++k) {
            dnnl_graph_tensor_destroy(it[k]);
            free(ib[k]);
        }
        for (size_t k = 0; k < no; ++k) {
            dnnl_graph_tensor_destroy(ot[k]);
            free(ob[k]);
        }
        dnnl_graph_compiled_partition_destroy(cp);
    }
    for (size_t p = 0; p < np; ++p) dnnl_graph_partition_destroy(parts[p]);
    return (int)np;
}

static void free_results(results_t *r) {
    for (int k = 0; k < r->count; ++k) free(r->v[k]);
    r->count = 0;
}

static char *read_all(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *t = malloc((size_t)n + 1);
    if (t && fread(t, 1, (size_t)n, f) != (size_t)n) {
        free(t);
        t = NULL;
    }
    if (t) t[n] = '\0';
    fclose(f);
    return t;
}

/* Loads a dumped case, reporting the loader's error. */
static bool load_case(const char *path, pc_case *c) {
    char err[512] = "";
    int rc = pc_case_load(path, c, err, sizeof err);
    if (rc) fprintf(stderr, "load: %s\n", err);
    CHECK_EQ_INT(rc, 0);
    return rc == 0;
}

static void test_mlp_roundtrip(const char *dir) {
    dnnl_graph_op_t ops[NOPS];
    build_ops(ops);
    char path[512];
    snprintf(path, sizeof path, "%s/mlp.json", dir);
    CHECK_EQ_INT(pt_json_dump_ops(path, (const pt_op *const *)ops, NOPS, dnnl_cpu, dnnl_fpmath_mode_strict, 0, NULL),
                 dnnl_success);

    /* Writer layout: key order, two-space indentation, ": ". */
    char *text = read_all(path);
    CHECK(text != NULL);
    if (text) {
        const char *head = "{\n  \"version\": \"3.14.0\",\n  \"engine_kind\": \"cpu\",\n  \"fpmath_mode\": \"strict\",\n"
                           "  \"fpmath_mode_apply_to_int\": \"false\",\n  \"input_ports\": [\n    10,\n    11,\n    13\n  ],\n"
                           "  \"output_ports\": [\n    15\n  ],\n  \"graph\": [\n    {\n      \"id\": 1,\n"
                           "      \"name\": \"mm0\",\n      \"kind\": \"MatMul\",\n      \"attrs\": {\n"
                           "        \"transpose_b\": {\n          \"type\": \"bool\",\n          \"value\": 0\n";
        CHECK(strncmp(text, head, strlen(head)) == 0);
        CHECK(strstr(text, "\"stride\": [\n            12,\n            1,\n            3\n          ],") != NULL);
        CHECK(strstr(text, "\"outputs\": []") != NULL); /* End */
        size_t len = strlen(text);
        CHECK(len > 2 && text[len - 1] == '\n' && text[len - 2] == '}');
        free(text);
    }

    pc_case c;
    if (!load_case(path, &c)) return;
    char err[512] = "";
    CHECK_EQ_INT(c.fpmath, dnnl_fpmath_mode_strict);
    CHECK_EQ_INT(c.apply_to_int, 0);
    check_same_ops(ops, NOPS, &c);

    /* Same partitions and results from the original and the reloaded graph. */
    dnnl_engine_t eng = NULL;
    dnnl_stream_t s = NULL;
    CHECK_EQ_INT(dnnl_engine_create(&eng, dnnl_cpu, 0), dnnl_success);
    CHECK_EQ_INT(dnnl_stream_create(&s, eng, dnnl_stream_default_flags), dnnl_success);
    dnnl_graph_graph_t ga = NULL, gb = NULL;
    CHECK_EQ_INT(dnnl_graph_graph_create(&ga, dnnl_cpu), dnnl_success);
    for (int k = 0; k < NOPS; ++k) CHECK_EQ_INT(dnnl_graph_add_op(ga, ops[k]), dnnl_success);
    CHECK_EQ_INT(dnnl_graph_graph_finalize(ga), dnnl_success);
    size_t order[NOPS];
    CHECK_EQ_INT(pc_case_topo_order(&c, order, err, sizeof err), 0);
    CHECK_EQ_INT(pc_build_graph(&c, order, dnnl_cpu, &gb, err, sizeof err), dnnl_success);

    size_t pa[8][8], pb[8][8], na[8] = {0}, nb[8] = {0};
    results_t ra = {0}, rb = {0};
    int npa = run_graph(ga, eng, s, pa, na, &ra);
    int npb = run_graph(gb, eng, s, pb, nb, &rb);
    CHECK(npa > 0);
    CHECK_EQ_INT(npa, npb);
    for (int p = 0; p < npa && p < npb; ++p) {
        CHECK_EQ_INT(na[p], nb[p]);
        for (size_t k = 0; k < na[p] && k < nb[p] && k < 8; ++k) CHECK_EQ_INT(pa[p][k], pb[p][k]);
    }
    CHECK_EQ_INT(ra.count, rb.count);
    float *final_a = find_result(&ra, 15), *final_b = find_result(&rb, 15);
    CHECK(final_a != NULL && final_b != NULL);
    for (int k = 0; k < ra.count && k < rb.count; ++k) {
        CHECK_EQ_INT(ra.id[k], rb.id[k]);
        CHECK_EQ_INT(ra.n[k], rb.n[k]);
        if (ra.n[k] == rb.n[k]) CHECK(memcmp(ra.v[k], rb.v[k], ra.n[k] * sizeof(float)) == 0);
    }
    /* Spot-check the math: relu(src x wei + bias) for element [1,2,3]. */
    if (final_a) {
        float srcv[24], weiv[20], biasv[5];
        for (int e = 0; e < 24; ++e) srcv[e] = (float)((int)((10 * 7 + e * 3) % 9) - 4) * 0.5f;
        for (int e = 0; e < 20; ++e) weiv[e] = (float)((int)((11 * 7 + e * 3) % 9) - 4) * 0.5f;
        for (int e = 0; e < 5; ++e) biasv[e] = (float)((int)((13 * 7 + e * 3) % 9) - 4) * 0.5f;
        float acc = biasv[3];
        for (int kk = 0; kk < 4; ++kk) acc += srcv[1 * 12 + 2 * 1 + kk * 3] * weiv[kk * 5 + 3];
        CHECK_NEAR(final_a[1 * 15 + 2 * 5 + 3], acc > 0 ? acc : 0, 0.0);
    }
    free_results(&ra);
    free_results(&rb);
    dnnl_graph_graph_destroy(ga);
    dnnl_graph_graph_destroy(gb);
    dnnl_stream_destroy(s);
    dnnl_engine_destroy(eng);
    pc_case_free(&c);
    for (int k = 0; k < NOPS; ++k) dnnl_graph_op_destroy(ops[k]);
    unlink(path);
}

/* ---- every attribute type, unknown shapes, scalars, big ids, partition ids ---------------- */

static void test_attr_types(const char *dir) {
    dnnl_graph_op_t q = NULL, cl = NULL;
    dnnl_graph_logical_tensor_t x, y, u, z;
    lt_strided(&x, 140243871612928ull, 4, (int64_t[]){1, 3, 2, 2}, (int64_t[]){12, 4, 2, 1},
               dnnl_graph_tensor_property_undef);
    dnnl_graph_logical_tensor_init(&y, 21, dnnl_s8, -1, dnnl_graph_layout_type_strided, dnnl_graph_tensor_property_undef);
    dnnl_graph_logical_tensor_init(&u, 22, dnnl_f32, -1, dnnl_graph_layout_type_any, dnnl_graph_tensor_property_variable);
    dnnl_dims_t none = {0};
    dnnl_graph_logical_tensor_init_with_dims(&z, 23, dnnl_f32, 0, none, dnnl_graph_layout_type_strided,
                                             dnnl_graph_tensor_property_host_scalar);
    CHECK_EQ_INT(dnnl_graph_op_create(&q, 7, dnnl_graph_op_quantize, "quant \"q\"\n1"), dnnl_success);
    dnnl_graph_op_add_input(q, &x);
    dnnl_graph_op_add_output(q, &y);
    float scales[3] = {0.5f, 0.25f, 0.1f};
    int64_t zps[3] = {0, -1, 2}, axis = 1;
    dnnl_graph_op_set_attr_f32(q, dnnl_graph_op_attr_scales, scales, 3);
    dnnl_graph_op_set_attr_s64(q, dnnl_graph_op_attr_zps, zps, 3);
    dnnl_graph_op_set_attr_s64(q, dnnl_graph_op_attr_axis, &axis, 1);
    dnnl_graph_op_set_attr_str(q, dnnl_graph_op_attr_qtype, "per_channel", 11);

    CHECK_EQ_INT(dnnl_graph_op_create(&cl, 9, dnnl_graph_op_clamp, "clamp"), dnnl_success);
    dnnl_graph_op_add_input(cl, &u);
    dnnl_graph_op_add_input(cl, &z);
    dnnl_graph_op_add_output(cl, &u);
    float mn = 1e-05f, mx = 1.f;
    dnnl_graph_op_set_attr_f32(cl, dnnl_graph_op_attr_min, &mn, 1);
    dnnl_graph_op_set_attr_f32(cl, dnnl_graph_op_attr_max, &mx, 1);
    uint8_t t = 1;
    dnnl_graph_op_set_attr_bool(cl, dnnl_graph_op_attr_keep_dims, &t, 1);

    dnnl_graph_op_t ops[2] = {q, cl};
    size_t pids[2] = {3, 4};
    char path[512];
    snprintf(path, sizeof path, "%s/attrs.json", dir);
    CHECK_EQ_INT(pt_json_dump_ops(path, (const pt_op *const *)ops, 2, dnnl_cpu, dnnl_fpmath_mode_bf16, 1, pids),
                 dnnl_success);
    char *text = read_all(path);
    CHECK(text != NULL);
    if (text) {
        /* f32 printed like a C++ stream (6 significant digits), 64-bit ids exact. */
        CHECK(strstr(text, "\"value\": 1e-05") != NULL);
        CHECK(strstr(text, "          \"value\": [\n            0.5,\n            0.25,\n            0.1\n") != NULL);
        CHECK(strstr(text, "\"id\": 140243871612928") != NULL);
        CHECK(strstr(text, "\"shape\": [\n            -9223372036854775808\n          ]") != NULL);
        CHECK(strstr(text, "\"shape\": [],") != NULL);
        CHECK(strstr(text, "\"fpmath_mode\": \"bf16\"") != NULL);
        CHECK(strstr(text, "\"fpmath_mode_apply_to_int\": \"true\"") != NULL);
        CHECK(strstr(text, "\"partition_id\": {\n          \"type\": \"string\",\n          \"value\": \"3\"") != NULL);
        CHECK(strstr(text, "\"backend\": {") != NULL);
        CHECK(strstr(text, "\"name\": \"quant \\\"q\\\"\\n1\"") != NULL);
        free(text);
    }
    pc_case c;
    if (load_case(path, &c)) {
        CHECK_EQ_INT(c.fpmath, dnnl_fpmath_mode_bf16);
        CHECK_EQ_INT(c.apply_to_int, 1);
        /* partition_id / backend are internal and not loaded as attributes. */
        check_same_ops(ops, 2, &c);
        CHECK_EQ_INT(c.ops[1].in[0].ndims, -1);
        CHECK_EQ_INT(c.ops[1].in[0].layout_type, dnnl_graph_layout_type_any);
        CHECK_EQ_INT(c.ops[1].in[1].ndims, 0);
        CHECK_EQ_INT(c.ops[1].in[1].property, dnnl_graph_tensor_property_host_scalar);
        CHECK(strcmp(c.ops[0].name, "quant \"q\"\n1") == 0);
        pc_case_free(&c);
    }
    dnnl_graph_op_destroy(q);
    dnnl_graph_op_destroy(cl);
    unlink(path);
}

/* ---- loader errors name the file, op and field ------------------------------------------ */

static void expect_error(const char *json, const char *needle) {
    pc_case c;
    char err[512] = "";
    int rc = pc_case_parse(json, "bad.json", &c, err, sizeof err);
    CHECK(rc != 0);
    if (!strstr(err, needle) || !strstr(err, "bad.json")) {
        fprintf(stderr, "error text '%s' lacks '%s'\n", err, needle);
        CHECK(0);
    }
}

static void test_loader_errors(void) {
    expect_error("{\"graph\": []}", "'graph' is empty");
    expect_error("{\"graph\": [ {\"id\": 1, \"kind\": \"BiasAddBackpropagation\", \"inputs\": [], \"outputs\": []} ]}",
                 "op 1: unknown op kind \"BiasAddBackpropagation\"");
    expect_error("{\"graph\": [ {\"id\": 2, \"kind\": \"ReLU\", \"inputs\": [ {\"id\": 5, \"dtype\": \"f33\", "
                 "\"shape\": [1]} ], \"outputs\": []} ]}",
                 "op 2: tensor 5: missing or unknown 'dtype'");
    expect_error("{\"graph\": [ {\"id\": 3, \"kind\": \"SoftMax\", \"attrs\": {\"axis\": {\"type\": \"s64\", "
                 "\"value\": \"x\"}}, \"inputs\": [], \"outputs\": []} ]}",
                 "op 3: attribute 'axis'");
    expect_error("{\"graph\": [ {\"id\": 4, \"kind\": \"ReLU\", \"inputs\": [ {\"id\": 5, \"dtype\": \"f32\", "
                 "\"shape\": [2, 3], \"stride\": [1]} ], \"outputs\": []} ]}",
                 "op 4: tensor 5: 'stride' has 1 entries but 'shape' has 2");
    expect_error("{\"graph\": [ {\"id\": 1, \"kind\": \"ReLU\", \"inputs\": [}", "JSON syntax error");
    /* Unknown attribute names are skipped (with a warning), not errors. */
    pc_case c;
    char err[256];
    int rc = pc_case_parse("{\"graph\": [ {\"id\": 1, \"kind\": \"ReLU\", \"attrs\": {\"frobnicate\": {\"type\": "
                           "\"s64\", \"value\": 1}}, \"inputs\": [], \"outputs\": []} ]}",
                           "ok.json", &c, err, sizeof err);
    CHECK_EQ_INT(rc, 0);
    if (!rc) {
        CHECK_EQ_INT(c.ops[0].nattr, 0);
        pc_case_free(&c);
    }
}

int main(void) {
    char dir[] = "/tmp/partita_json_XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_mlp_roundtrip(dir);
    test_attr_types(dir);
    test_loader_errors();
    rmdir(dir);
    return pt_test_summary("test_int_json_roundtrip");
}
