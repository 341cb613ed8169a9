/* Work sharing for small jobs (share.h).
 *
 * One job word holds the job's generation (high 32 bits), a closed flag
 * (bit 31) and the number of helpers inside the job (bits 0-30).  The
 * caller writes the job's fields, then publishes a new generation, open,
 * with no helper inside; a helper joins by incrementing the count with a
 * compare-and-swap that also checks the generation and the flag, so after
 * the caller has closed the job no helper can join it; the caller then waits
 * only for the count to drop to zero (helpers already running a piece).
 * Sequentially consistent atomics throughout: the helper that decides to
 * sleep and the caller that decides whether to wake anyone must not both
 * miss each other. */
#include "runtime/share.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define SHARE_PAUSE() _mm_pause()
#else
#define SHARE_PAUSE() ((void)0)
#endif

#define CLOSED (UINT64_C(1) << 31)
#define COUNT_MASK (CLOSED - 1)
static inline uint64_t gen_of(uint64_t w) { return w >> 32; }

/* A helper spins this long for the next job before it sleeps: jobs of one
 * execution, and executions of a serving loop, follow each other within
 * microseconds; a spinning helper also holds its core against other work,
 * an OpenMP team included, so not longer. */
#define SPIN_NS 200000
/* Pauses between clock reads and yields while spinning. */
#define SPIN_BATCH 64

static _Atomic uint64_t g_job = CLOSED; /* generation 0, closed */
static _Atomic int g_busy;              /* a caller owns the helpers */
static _Atomic int g_sleepers;          /* helpers in (or entering) the condition wait */
static _Atomic int g_stop;
static _Atomic int64_t g_calls;

/* The job's fields: written by the owner before it publishes the
 * generation, read by helpers only while they are counted in it. */
static pt_share_body g_body;
static void *g_ctx;
static int g_nt;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER; /* helper creation, sleeping */
static pthread_cond_t g_wake = PTHREAD_COND_INITIALIZER;
static pthread_t g_threads[PT_SHARE_MAX_THREADS];
static _Atomic int g_helpers; /* created and running */
static bool g_atfork;

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Waits for a generation other than `seen` (or the stop); returns the job
 * word that showed it. */
static uint64_t wait_job(uint64_t seen) {
    const int64_t until = now_ns() + SPIN_NS;
    for (;;) {
        for (int i = 0; i < SPIN_BATCH; ++i) {
            const uint64_t w = atomic_load(&g_job);
            if (gen_of(w) != seen || atomic_load(&g_stop)) return w;
            SHARE_PAUSE();
        }
        if (now_ns() > until) break;
        sched_yield(); /* another thread on this core goes first */
    }
    pthread_mutex_lock(&g_lock);
    atomic_fetch_add(&g_sleepers, 1);
    uint64_t w;
    while (gen_of(w = atomic_load(&g_job)) == seen && !atomic_load(&g_stop)) pthread_cond_wait(&g_wake, &g_lock);
    atomic_fetch_sub(&g_sleepers, 1);
    pthread_mutex_unlock(&g_lock);
    return w;
}

/* A helper starts from the generation current when it was made (before
 * the job that made it is published), so that it joins that job too. */
typedef struct {
    int tid;
    uint64_t seen;
} helper_start;
static helper_start g_start[PT_SHARE_MAX_THREADS];

static void *helper_main(void *arg) {
    const helper_start *st = arg;
    const int tid = st->tid;
    uint64_t seen = st->seen;
    for (;;) {
        uint64_t w = wait_job(seen);
        if (atomic_load(&g_stop)) return NULL;
        seen = gen_of(w);
        bool joined = false;
        while (gen_of(w) == seen && !(w & CLOSED))
            if (atomic_compare_exchange_weak(&g_job, &w, w + 1)) {
                joined = true;
                break;
            }
        if (!joined) continue;
        if (tid < g_nt) {
            g_body(g_ctx, tid);
            atomic_fetch_add_explicit(&g_calls, 1, memory_order_relaxed);
        }
        atomic_fetch_sub(&g_job, 1);
    }
}

/* The child of a fork has only the forking thread: no helpers, the state
 * as if none had been made, and none made later (a child of a process
 * with threads may only call async-signal-safe functions, which
 * pthread_create is not, until it execs). */
static _Atomic int g_forked;
static void child_after_fork(void) {
    atomic_store(&g_forked, 1);
    atomic_store(&g_helpers, 0);
    atomic_store(&g_busy, 0);
    atomic_store(&g_sleepers, 0);
    atomic_store(&g_job, CLOSED);
    pthread_mutex_init(&g_lock, NULL);
    pthread_cond_init(&g_wake, NULL);
}

/* Helpers for tids 1 .. want - 1 (as many as can be made). */
static void ensure_helpers(int want) {
    pthread_mutex_lock(&g_lock);
    if (!g_atfork) g_atfork = pthread_atfork(NULL, NULL, child_after_fork) == 0;
    int have = atomic_load(&g_helpers);
    while (have + 1 < want && !atomic_load(&g_stop) && !atomic_load(&g_forked)) {
        g_start[have] = (helper_start){have + 1, gen_of(atomic_load(&g_job))};
        if (pthread_create(&g_threads[have], NULL, helper_main, &g_start[have]) != 0) break;
        atomic_store(&g_helpers, ++have);
    }
    pthread_mutex_unlock(&g_lock);
}

void pt_share_run(int nt, pt_share_body body, void *ctx) {
    if (nt > PT_SHARE_MAX_THREADS) nt = PT_SHARE_MAX_THREADS;
    if (nt <= 1 || atomic_exchange(&g_busy, 1)) { /* alone, or the helpers are taken */
        body(ctx, 0);
        return;
    }
    if (atomic_load(&g_helpers) + 1 < nt) ensure_helpers(nt);
    const int helpers = atomic_load(&g_helpers);
    if (helpers == 0) {
        body(ctx, 0);
        atomic_store(&g_busy, 0);
        return;
    }
    g_body = body, g_ctx = ctx, g_nt = nt;
    const uint64_t gen = gen_of(atomic_load(&g_job)) + 1;
    atomic_store(&g_job, (gen & 0xffffffffu) << 32);
    if (atomic_load(&g_sleepers) > 0) {
        pthread_mutex_lock(&g_lock);
        pthread_cond_broadcast(&g_wake);
        pthread_mutex_unlock(&g_lock);
    }
    body(ctx, 0);
    /* Close the job, then wait for the helpers inside it. */
    uint64_t w = atomic_load(&g_job);
    while (!atomic_compare_exchange_weak(&g_job, &w, w | CLOSED)) {
    }
    for (int spins = 0; atomic_load(&g_job) & COUNT_MASK;)
        if (++spins % SPIN_BATCH == 0) sched_yield(); /* a helper lost its core mid-piece */
        else SHARE_PAUSE();
    atomic_store(&g_busy, 0);
}

void pt_share_team_run(int nt, bool team, pt_share_body body, void *ctx) {
    if (nt <= 1 || !team) {
        pt_share_run(nt, body, ctx);
        return;
    }
#ifdef _OPENMP
#pragma omp parallel num_threads(nt)
    body(ctx, omp_get_thread_num());
#else
    pt_share_run(nt, body, ctx);
#endif
}

int64_t pt_share_helper_calls(void) { return atomic_load_explicit(&g_calls, memory_order_relaxed); }

/* Unloading the library (or leaving the process) stops and joins the
 * helpers: none may run code of an unmapped library. */
__attribute__((destructor)) static void stop_helpers(void) {
    pthread_mutex_lock(&g_lock);
    atomic_store(&g_stop, 1);
    pthread_cond_broadcast(&g_wake);
    const int n = atomic_load(&g_helpers);
    pthread_mutex_unlock(&g_lock);
    for (int i = 0; i < n; ++i) pthread_join(g_threads[i], NULL);
    atomic_store(&g_helpers, 0);
}
