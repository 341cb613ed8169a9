/* CPU features and the ISA level every kernel family dispatches on.
 *
 * CPUID (and XGETBV, for the register state the OS saves) is read once per
 * process.  The effective level is the best the CPU and OS support, capped by
 * PARTITA_ISA=generic|avx2|avx512 (read once too).  Kernel families keep one
 * table row per level and pick the best row at or below the effective level
 * whose extra features (BF16, VNNI, FP16) the CPU has (runtime/cpu.c,
 * pt_cpu_row_usable). */
#ifndef PARTITA_RUNTIME_CPU_H
#define PARTITA_RUNTIME_CPU_H

#include <stdbool.h>
#include <stddef.h>

typedef enum {
    PT_ISA_GENERIC = 0, /* portable C, any x86-64 (or any CPU) */
    PT_ISA_AVX2 = 1,    /* AVX2 + FMA + F16C */
    PT_ISA_AVX512 = 2,  /* AVX-512 F/BW/VL/DQ (+ sub-features below) */
    PT_ISA_LEVELS
} pt_isa_level;

/* Sub-features a table row may require on top of its level. */
enum {
    PT_CPU_AVX512_BF16 = 1u << 0, /* vdpbf16ps, vcvtne2ps2bf16 */
    PT_CPU_AVX512_VNNI = 1u << 1, /* vpdpbusd on zmm */
    PT_CPU_AVX_VNNI = 1u << 2,    /* vpdpbusd on ymm (VEX) */
    PT_CPU_AVX512_FP16 = 1u << 3, /* native f16 arithmetic */
    PT_CPU_AMX_BF16 = 1u << 4,    /* AMX tiles with tdpbf16ps, state granted by the OS */
    PT_CPU_AMX_INT8 = 1u << 5,    /* AMX tiles with tdpbusd, state granted by the OS */
    PT_CPU_AVX512_VBMI = 1u << 6, /* vpermt2b / vpermb on zmm */
};

typedef struct {
    pt_isa_level max_level; /* best level the CPU and OS support */
    unsigned features;      /* PT_CPU_* sub-features (with OS support) */
    size_t l1d_bytes, l2_bytes, l3_bytes; /* per core (L3: whole cache); 0 if unknown */
    char vendor[13];
} pt_cpu_info;

/* Detected once; never NULL. */
const pt_cpu_info *pt_cpu(void);

/* Effective level: min(detected, PARTITA_ISA cap). */
pt_isa_level pt_isa(void);

/* The PARTITA_ISA cap as read from the environment (PT_ISA_AVX512 when unset). */
pt_isa_level pt_isa_cap(void);

/* "generic", "avx2", "avx512". */
const char *pt_isa_name(pt_isa_level level);

/* Parses a level name; false when unknown. */
bool pt_isa_parse(const char *name, pt_isa_level *level);

/* True when a kernel row of `level` needing `features` can run under `cap`
 * on this CPU. */
bool pt_cpu_row_usable(pt_isa_level level, unsigned features, pt_isa_level cap);

#endif
