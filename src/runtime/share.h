/* Work sharing for small jobs: the calling thread runs the job and helper
 * threads join it if they come in time, but the caller never waits for a
 * helper that has not started.
 *
 * Why not an OpenMP region: a region ends in a join that waits for every
 * thread of the team, and on a machine where another process holds a core
 * a thread can wait a scheduler tick (4 ms) to run at all, which is
 * hundreds of times a job of tens of microseconds.  So jobs under a few
 * million multiply-adds ran on one thread, giving up the second core when
 * it is free (binary-matmul-binary: 0.18 ms on one thread, 0.08 on two).
 * Here a late helper finds the job closed and skips it: on a busy machine
 * the job runs at one thread's speed, on a free one at the team's.
 * OpenMP stays the runtime of the large jobs (milliseconds and more).
 *
 * The job is a body that every participant calls with its own tid (0: the
 * caller; helpers 1 .. nt - 1, each at most once per job); the body claims
 * its pieces dynamically from state in ctx (an atomic counter, stealing),
 * never by tid, so that any set of participants that includes the caller
 * finishes the whole job.  Helpers are created on first use, one per tid,
 * spin briefly between jobs and then sleep; they are stopped and joined when
 * the library is unloaded.  One job runs at a time: a caller that finds the
 * helpers busy (another thread's job) runs its job alone.  A child of
 * fork() has no helpers (it may not start threads until it execs): its
 * jobs run on the caller alone. */
#ifndef PARTITA_RUNTIME_SHARE_H
#define PARTITA_RUNTIME_SHARE_H

#include <stdbool.h>
#include <stdint.h>

/* At most this many participants per job (the caller included). */
#define PT_SHARE_MAX_THREADS 64

typedef void (*pt_share_body)(void *ctx, int tid);

/* Runs body(ctx, 0) on the calling thread and body(ctx, t) on the helpers
 * t = 1 .. nt - 1 that start before the caller's call returns; returns
 * when every call that started has returned.  nt <= 1 (or above the
 * maximum, capped): fewer helpers; nt <= 1 runs the body once, inline. */
void pt_share_run(int nt, pt_share_body body, void *ctx);

/* The one way a kernel runs a job on nt threads: body(ctx, tid) on an
 * OpenMP team of nt when `team` (large jobs: every thread comes, and the
 * team may be smaller than asked, 1 inside a caller's own region), else
 * pt_share_run.  Either way the body claims its work (a counter, or the
 * slices below), so the same body serves both. */
void pt_share_team_run(int nt, bool team, pt_share_body body, void *ctx);

/* Helper calls that joined jobs since the process started (tests: whether
 * helpers take part at all). */
int64_t pt_share_helper_calls(void);

/* Items [0, n) in nt contiguous slices, one per tid: a thread takes from
 * the front of its own slice, and when that is empty from the back of the
 * others'.  So each thread gets the same items call after call while all
 * come (their data stays in its caches), and the items of a thread that
 * never comes are taken by the others.  A slice is one word, begin << 32 |
 * end, changed by compare and swap; n < 2^31. */
typedef struct {
    _Alignas(64) uint64_t range;
} pt_share_slice;

static inline void pt_share_slices_init(pt_share_slice *s, int64_t n, int nt) {
    for (int t = 0; t < nt; ++t) s[t].range = (uint64_t)(n * t / nt) << 32 | (uint64_t)(n * (t + 1) / nt);
}

/* One item from the front (else the back) of slice s. */
static inline bool pt_share_take(pt_share_slice *s, bool front, int64_t *item) {
    uint64_t cur = __atomic_load_n(&s->range, __ATOMIC_RELAXED);
    for (;;) {
        const uint64_t begin = cur >> 32, end = cur & 0xffffffffu;
        if (begin >= end) return false;
        const uint64_t next = front ? ((begin + 1) << 32 | end) : (begin << 32 | (end - 1));
        if (__atomic_compare_exchange_n(&s->range, &cur, next, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
            *item = (int64_t)(front ? begin : end - 1);
            return true;
        }
    }
}

/* The next item for tid: its own slice's front, then the others' backs. */
static inline bool pt_share_next(pt_share_slice *s, int tid, int nt, int64_t *item) {
    if (pt_share_take(&s[tid], true, item)) return true;
    for (int v = 1; v < nt; ++v)
        if (pt_share_take(&s[(tid + v) % nt], false, item)) return true;
    return false;
}

#endif
