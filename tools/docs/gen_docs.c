/* partita-docs: prints the generated tables of docs/ops.md and docs/fusion.md
 * from the library's registries, and keeps the committed pages in step.
 *
 *   partita-docs ops | fusion     print one table
 *   partita-docs --write DOCS     rewrite the tables inside DOCS/ops.md and DOCS/fusion.md
 *   partita-docs --check DOCS     exit 1 when a committed table differs from the generated one
 *
 * A table sits between the lines "<!-- generated:NAME begin -->" and
 * "<!-- generated:NAME end -->"; the text around them is left alone. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/dtype.h"
#include "ops/op_schema.h"
#include "partition/pattern_rows.h"

/* ---- the op table ------------------------------------------------------------ */

static void put_dtypes(FILE *f, uint32_t mask) {
    if (mask == PT_DT_ANY) {
        fputs("any", f);
        return;
    }
    const char *sep = "";
    for (int dt = 0; dt < 32; ++dt)
        if (mask & PT_DT(dt)) {
            fprintf(f, "%s%s", sep, pt_dt_name((dnnl_data_type_t)dt));
            sep = "/";
        }
}

/* "src: f32/bf16/f16 (T)" entries joined by "<br>"; arity in front. */
static void put_ports(FILE *f, const pt_port_spec *p, int n, int lo, int hi) {
    if (hi < 0) fprintf(f, "%d or more: ", lo);
    else if (lo != hi) fprintf(f, "%d to %d: ", lo, hi);
    for (int k = 0; k < n; ++k) {
        fprintf(f, "%s%s%s: ", k ? "<br>" : "", p[k].name, p[k].optional ? " (optional)" : "");
        put_dtypes(f, p[k].dtypes);
        if (p[k].tvar) fprintf(f, " [%c]", p[k].tvar);
    }
    if (hi < 0 && n > 0) fputs(" (repeats)", f);
}

static void put_attr(FILE *f, const pt_attr_spec *a) {
    static const char *const kinds[] = {"f32", "f32[]", "s64", "s64[]", "bool", "string"};
    fprintf(f, "%s (%s)", pt_attr_name(a->name), kinds[a->kind]);
    if (a->required) fputs(", required", f);
    if (a->has_default) {
        fputs(" = ", f);
        switch (a->kind) {
        case PT_ATTR_F32: fprintf(f, "%g", a->dflt_f); break;
        case PT_ATTR_S64: fprintf(f, "%lld", (long long)a->dflt_i); break;
        case PT_ATTR_BOOL: fputs(a->dflt_i ? "true" : "false", f); break;
        case PT_ATTR_STR: fputs(a->dflt_s ? a->dflt_s : "", f); break;
        default:
            fputc('{', f);
            for (size_t k = 0; k < a->dflt_n; ++k) fprintf(f, "%s%lld", k ? "," : "", (long long)a->dflt_v[k]);
            fputc('}', f);
        }
    }
    if (a->allowed) {
        fputs(", one of ", f);
        for (const char *c = a->allowed; *c; ++c) {
            if (*c == '|') fputs(" \\| ", f); /* a bar would split the table cell */
            else fputc(*c, f);
        }
    }
}

/* The family and reference-kernel columns, read from the op-kind table. */
static const char *const family_of[dnnl_graph_op_last_symbol] = {
#define PT_OP(kind, name, family, schema, stem) [kind] = #family,
#include "ops/op_table.def"
};
static const char *const kernel_of[dnnl_graph_op_last_symbol] = {
#define PT_OP(kind, name, family, schema, stem) [kind] = #stem,
#include "ops/op_table.def"
};

static int by_name(const void *a, const void *b) {
    return strcmp(pt_op_kind_name(*(const int *)a), pt_op_kind_name(*(const int *)b));
}

static void ops_table(FILE *f) {
    int kinds[dnnl_graph_op_last_symbol];
    int n = 0;
    for (int k = 0; k < dnnl_graph_op_last_symbol; ++k)
        if (pt_schema_of(k)) kinds[n++] = k;
    qsort(kinds, (size_t)n, sizeof kinds[0], by_name);
    fprintf(f, "%d op kinds (sharing %d schema rows).  Family and reference kernel come from the op-kind\n"
               "table (`src/ops/op_table.def`); the kernel `eltwise` is `pt_ref_eltwise` with its decoder\n"
               "`pt_decode_eltwise`.  Letters in brackets are type variables: ports with the same\n"
               "letter carry the same data type.  Checks: `shape` = own shape inference (else outputs copy\n"
               "input 0), `dt` = supported data-type combinations are listed, `extra` = op-specific checks at\n"
               "add_op.\n\n",
            n, pt_schema_count());
    fputs("| Op | Family | Reference kernel | Inputs | Outputs | Attributes | Checks |\n"
          "|---|---|---|---|---|---|---|\n", f);
    for (int r = 0; r < n; ++r) {
        const pt_op_schema *s = pt_schema_of(kinds[r]);
        int lo, hi;
        fprintf(f, "| %s | %s | %s | ", pt_op_kind_name(kinds[r]), family_of[kinds[r]], kernel_of[kinds[r]]);
        pt_schema_arity(s, false, &lo, &hi);
        put_ports(f, s->inputs, s->n_in_specs, lo, hi);
        fputs(" | ", f);
        pt_schema_arity(s, true, &lo, &hi);
        put_ports(f, s->outputs, s->n_out_specs, lo, hi);
        fputs(" | ", f);
        for (const pt_attr_spec *a = s->attrs; a && a->name; ++a) {
            if (a != s->attrs) fputs("<br>", f);
            put_attr(f, a);
        }
        const char *checks[] = {s->infer ? "shape" : NULL, s->supported ? "dt" : NULL, s->check ? "extra" : NULL};
        const char *sep = " | ";
        for (int k = 0; k < 3; ++k)
            if (checks[k]) {
                fprintf(f, "%s%s", sep, checks[k]);
                sep = " ";
            }
        fputs(strcmp(sep, " ") == 0 ? " |\n" : " |  |\n", f);
    }
}

/* ---- the fusion table -------------------------------------------------------- */

static const char *family_name(pt_fused_family fam) {
    switch (fam) {
    case PT_FUSED_SDPA_FWD: return "SDPA forward (streaming)";
    case PT_FUSED_SDPA_BWD: return "SDPA backward";
    case PT_FUSED_GATED_MLP: return "gated MLP";
    case PT_FUSED_COMPUTE_POST_OPS: return "compute + post-ops";
    case PT_FUSED_CHAIN_POST_OPS: return "anchor + element-wise chain";
    default: return "op by op";
    }
}

static void fusion_table(FILE *f) {
    fprintf(f, "%d pattern rows in the order the driver runs them: highest priority first; among rows\n"
               "of equal priority, matcher rows before chain rows, each in its table order.\n\n",
            pt_pattern_row_count());
    fputs("| # | Pattern | Priority | Runs as |\n|---|---|---|---|\n", f);
    for (int r = 0; r < pt_pattern_row_count(); ++r) {
        const pt_pattern_row *row = pt_pattern_row_at(r);
        fprintf(f, "| %d | `%s` | %.2f | %s |\n", r + 1, row->name, row->priority, family_name(row->fused));
    }
}

/* ---- splicing into the pages ------------------------------------------------- */

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    int ch;
    while (m && (ch = fgetc(f)) != EOF) fputc(ch, m);
    if (m) fclose(m);
    fclose(f);
    return buf;
}

/* Checks or rewrites one page; returns 0 when it is (now) current. */
static int splice(const char *dir, const char *table, void (*gen)(FILE *), int write) {
    char path[4096], begin[128], end[128];
    snprintf(path, sizeof path, "%s/%s.md", dir, table);
    snprintf(begin, sizeof begin, "<!-- generated:%s begin -->\n", table);
    snprintf(end, sizeof end, "<!-- generated:%s end -->", table);
    char *page = slurp(path);
    char *b = page ? strstr(page, begin) : NULL;
    char *e = b ? strstr(b, end) : NULL;
    if (!e) {
        fprintf(stderr, "partita-docs: %s: missing or malformed '%s' markers\n", path, table);
        free(page);
        return 1;
    }
    b += strlen(begin);
    char *fresh = NULL;
    size_t flen = 0;
    FILE *m = open_memstream(&fresh, &flen);
    gen(m);
    fclose(m);
    int same = (size_t)(e - b) == flen && memcmp(b, fresh, flen) == 0;
    int rc = 0;
    if (!same && !write) {
        fprintf(stderr, "partita-docs: the %s table in %s is stale: run `make docs`\n", table, path);
        rc = 1;
    } else if (!same) {
        FILE *out = fopen(path, "wb");
        rc = !out || fwrite(page, 1, (size_t)(b - page), out) != (size_t)(b - page) ||
             fwrite(fresh, 1, flen, out) != flen || fputs(e, out) == EOF;
        if (out && fclose(out)) rc = 1;
        if (rc) fprintf(stderr, "partita-docs: cannot write %s\n", path);
    }
    free(fresh);
    free(page);
    return rc;
}

int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "ops") == 0) ops_table(stdout);
    else if (argc == 2 && strcmp(argv[1], "fusion") == 0) fusion_table(stdout);
    else if (argc == 3 && (strcmp(argv[1], "--write") == 0 || strcmp(argv[1], "--check") == 0)) {
        int write = argv[1][2] == 'w';
        int rc = splice(argv[2], "ops", ops_table, write);
        rc |= splice(argv[2], "fusion", fusion_table, write);
        return rc;
    } else {
        fputs("usage: partita-docs ops | fusion | --write DOCS_DIR | --check DOCS_DIR\n", stderr);
        return 2;
    }
    return 0;
}
