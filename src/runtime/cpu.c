/* CPUID / XGETBV probing, read once (see cpu.h). */
#include "runtime/cpu.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ir/status.h"

#if defined(__GNUC__) && defined(__x86_64__)
#include <cpuid.h>
#define PT_CPU_X86 1
#endif
#if defined(PT_CPU_X86) && defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

#ifdef PT_CPU_X86
static void cpuid(unsigned leaf, unsigned sub, unsigned r[4]) { __cpuid_count(leaf, sub, r[0], r[1], r[2], r[3]); }

static unsigned long long xgetbv0(void) {
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((unsigned long long)hi << 32) | lo;
}

/* Linux hands a process the AMX tile data state only on request (the
 * tiles are 8 KiB of extra context per thread); without it the first tile
 * instruction raises SIGILL.  Asked once, at the probe. */
static bool amx_state_granted(void) {
#if defined(__linux__) && defined(SYS_arch_prctl)
    enum { ARCH_REQ_XCOMP_PERM = 0x1023, XFEATURE_XTILEDATA = 18 };
    return syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) == 0;
#else
    return false;
#endif
}

/* Cache sizes from the deterministic cache leaf (Intel 4, AMD 0x8000001D). */
static void probe_caches(pt_cpu_info *c, unsigned leaf) {
    for (unsigned i = 0; i < 16; ++i) {
        unsigned r[4];
        cpuid(leaf, i, r);
        unsigned type = r[0] & 31, lvl = (r[0] >> 5) & 7;
        if (type == 0) break;
        if (type == 2) continue; /* instruction cache */
        size_t ways = ((r[1] >> 22) & 0x3ff) + 1, parts = ((r[1] >> 12) & 0x3ff) + 1;
        size_t line = (r[1] & 0xfff) + 1, sets = (size_t)r[2] + 1;
        size_t bytes = ways * parts * line * sets;
        if (lvl == 1) c->l1d_bytes = bytes;
        else if (lvl == 2) c->l2_bytes = bytes;
        else if (lvl == 3) c->l3_bytes = bytes;
    }
}

static void probe(pt_cpu_info *c) {
    unsigned r[4];
    cpuid(0, 0, r);
    unsigned max_leaf = r[0];
    memcpy(c->vendor, &r[1], 4), memcpy(c->vendor + 4, &r[3], 4), memcpy(c->vendor + 8, &r[2], 4);
    c->vendor[12] = 0;
    if (max_leaf < 7) return;
    cpuid(1, 0, r);
    bool osxsave = (r[2] >> 27) & 1, fma = (r[2] >> 12) & 1, f16c = (r[2] >> 29) & 1, avx = (r[2] >> 28) & 1;
    unsigned long long xcr0 = osxsave ? xgetbv0() : 0;
    bool ymm_os = (xcr0 & 0x6) == 0x6, zmm_os = (xcr0 & 0xe6) == 0xe6;
    cpuid(7, 0, r);
    unsigned b7 = r[1], c7 = r[2], d7 = r[3];
    unsigned a71 = 0;
    if (r[0] >= 1) {
        unsigned s[4];
        cpuid(7, 1, s);
        a71 = s[0];
    }
    bool avx2 = (b7 >> 5) & 1;
    bool f512 = (b7 >> 16) & 1, dq = (b7 >> 17) & 1, bw = (b7 >> 30) & 1, vl = (b7 >> 31) & 1;
    if (avx && avx2 && fma && f16c && ymm_os) c->max_level = PT_ISA_AVX2;
    if (c->max_level == PT_ISA_AVX2 && f512 && dq && bw && vl && zmm_os) c->max_level = PT_ISA_AVX512;
    if (ymm_os && ((a71 >> 4) & 1)) c->features |= PT_CPU_AVX_VNNI;
    if (c->max_level == PT_ISA_AVX512) {
        if ((a71 >> 5) & 1) c->features |= PT_CPU_AVX512_BF16;
        if ((c7 >> 11) & 1) c->features |= PT_CPU_AVX512_VNNI;
        if ((c7 >> 1) & 1) c->features |= PT_CPU_AVX512_VBMI;
        if ((d7 >> 23) & 1) c->features |= PT_CPU_AVX512_FP16;
        /* AMX-TILE (d7 bit 24) with AMX-BF16 (22) / AMX-INT8 (25), the tile
         * state enabled in XCR0 (bits 17, 18) and granted to the process. */
        const bool tiles = ((d7 >> 24) & 1) && (xcr0 & 0x60000) == 0x60000;
        /* PARTITA_AMX=0 leaves the AMX rows out (tests run the fused kernels
         * once so, keeping the vdpbf16ps / VNNI rows covered on AMX
         * machines) and keeps the process from asking for the tile state,
         * whose larger signal frames a small sigaltstack may not hold. */
        const char *amx_env = getenv("PARTITA_AMX");
        const bool amx_off = amx_env && strcmp(amx_env, "0") == 0;
        if (tiles && !amx_off && (((d7 >> 22) & 1) || ((d7 >> 25) & 1)) && amx_state_granted()) {
            if ((d7 >> 22) & 1) c->features |= PT_CPU_AMX_BF16;
            if ((d7 >> 25) & 1) c->features |= PT_CPU_AMX_INT8;
        }
    }
    if (strcmp(c->vendor, "AuthenticAMD") == 0) {
        cpuid(0x80000000u, 0, r);
        if (r[0] >= 0x8000001Du) probe_caches(c, 0x8000001Du);
    } else if (max_leaf >= 4) {
        probe_caches(c, 4);
    }
}
#endif

static pt_cpu_info g_cpu;
static pt_isa_level g_cap = PT_ISA_AVX512;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void init_once(void) {
    pt_cpu_info c;
    memset(&c, 0, sizeof c);
    c.max_level = PT_ISA_GENERIC;
    strcpy(c.vendor, "unknown");
#ifdef PT_CPU_X86
    probe(&c);
#endif
    if (!c.l1d_bytes) c.l1d_bytes = 32 << 10;
    if (!c.l2_bytes) c.l2_bytes = 512 << 10;
    pt_isa_level cap = PT_ISA_AVX512;
    const char *env = getenv("PARTITA_ISA");
    if (env && *env && !pt_isa_parse(env, &cap)) {
        pt_err(dnnl_invalid_arguments, "PARTITA_ISA=%s is not generic, avx2 or avx512; ignored", env);
        cap = PT_ISA_AVX512;
    }
    g_cpu = c;
    g_cap = cap;
}

static void ensure(void) { pthread_once(&g_once, init_once); }

const pt_cpu_info *pt_cpu(void) {
    ensure();
    return &g_cpu;
}

pt_isa_level pt_isa_cap(void) {
    ensure();
    return g_cap;
}

pt_isa_level pt_isa(void) {
    ensure();
    return g_cpu.max_level < g_cap ? g_cpu.max_level : g_cap;
}

const char *pt_isa_name(pt_isa_level level) {
    switch (level) {
    case PT_ISA_GENERIC: return "generic";
    case PT_ISA_AVX2: return "avx2";
    case PT_ISA_AVX512: return "avx512";
    default: return "?";
    }
}

bool pt_isa_parse(const char *name, pt_isa_level *level) {
    static const char *names[] = {"generic", "avx2", "avx512"};
    for (int i = 0; i < PT_ISA_LEVELS; ++i)
        if (strcmp(name, names[i]) == 0) return *level = (pt_isa_level)i, true;
    return false;
}

bool pt_cpu_row_usable(pt_isa_level level, unsigned features, pt_isa_level cap) {
    const pt_cpu_info *c = pt_cpu();
    pt_isa_level eff = c->max_level < cap ? c->max_level : cap;
    return level <= eff && (c->features & features) == features;
}
