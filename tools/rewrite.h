/* Case rewriting by the harness knobs, in the order docs/graph-json.md lists. */
#ifndef PARTITA_TOOLS_REWRITE_H
#define PARTITA_TOOLS_REWRITE_H

#include <stddef.h>
#include <stdint.h>

#include "case_json.h"

/* One element of the knob product.  String knobs hold one
 * alternative; "" means "leave the graph unchanged". */
typedef struct {
    const char *in_shapes;       /* ID:SPEC[+ID:SPEC...] */
    const char *op_attrs;        /* ID:NAME:VAL[*NAME:VAL...][+...] */
    const char *op_kind;         /* ID:KIND[+...] */
    const char *tensor_property; /* ID:PROP[+...] */
    const char *dt;              /* DT ("" or "undef": unchanged) */
    const char *dt_map;          /* ID:DT[+...] */
    const char *fpmath;          /* MODE[:BOOL] ("" = keep the file's) */
    int64_t mb;                  /* 0 = unchanged */
    int64_t expected_n;          /* not a rewrite; carried along for the runner */
} pc_knobs;

/* Step 0 only (power-of-two Quantize/Dequantize scales). */
void pc_rewrite_load_adjust(pc_case *c);

/* Applies steps 0-10 to `c`.  Returns 0 or nonzero with a message (the case
 * is then reported as a rewrite error, INVALID_ARGUMENTS). */
int pc_rewrite(pc_case *c, const pc_knobs *k, char *err, size_t cap);

/* Fills unknown output shapes/strides of every op in topological order
 * (the shape-inference step of the rewrite order, for cases that need no
 * other rewriting). */
int pc_infer_shapes(pc_case *c, int force_all, int inputs_restrided, char *err, size_t cap);

#endif
