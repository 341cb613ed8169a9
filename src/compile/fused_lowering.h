/* From a matched partition to its fused kernel: one lowering function per
 * fused-kernel family (pattern_rows.h names the family of each row).  A
 * lowering reads the partition's ops (with concrete logical tensors, in
 * execution order) and the roles the matcher gave them, and decodes them into
 * the kernel's own parameter struct, held by `fused` (kernels/kernel.h). */
#ifndef PARTITA_COMPILE_FUSED_LOWERING_H
#define PARTITA_COMPILE_FUSED_LOWERING_H

#include <stddef.h>

#include "ir/op.h"
#include "compile/lower_ctx.h"
#include "kernels/kernel.h"
#include "partition/pattern_rows.h"

/* Lowers `ops` (roles[i] is the role of ops[i]) with compiled ports in/out.
 * dnnl_success fills *fused; any other status leaves the partition to run op
 * by op through the reference kernels. */
typedef pt_status (*pt_lower_fn)(const pt_op *const *ops, const int *roles, size_t nops, const pt_lt *in,
                                 size_t nin, const pt_lt *out, size_t nout, pt_fused *fused,
                   const pt_lower_ctx *lc);

/* The lowering of a family (NULL for PT_FUSED_NONE). */
pt_lower_fn pt_fused_lowering(pt_fused_family family);

#endif
