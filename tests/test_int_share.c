/* runtime/share.h: every item of a job runs exactly once whoever comes
 * (the caller alone, helpers, concurrent callers, a forked child without
 * without helpers), helpers do take part, and the slices hand every item out once. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runtime/share.h"
#include "test_util.h"

#define ITEMS 4000

typedef struct {
    pt_share_slice slices[PT_SHARE_MAX_THREADS];
    int nt;
    _Atomic int runs[ITEMS];
    _Atomic int bad_tid;
    _Atomic int tids_seen; /* bit per tid */
    int64_t items;
    int wait_for_helper; /* tid 0 holds its first item until a helper took one */
    _Atomic int helper_took;
} job;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void body(void *v, int tid) {
    job *j = v;
    if (tid < 0 || tid >= j->nt) atomic_store(&j->bad_tid, 1);
    if (tid < 31) atomic_fetch_or(&j->tids_seen, 1 << tid);
    int64_t it;
    bool first = true;
    while (pt_share_next(j->slices, tid, j->nt, &it)) {
        if (tid > 0) atomic_store(&j->helper_took, 1);
        if (tid == 0 && first && j->wait_for_helper)
            for (const double t0 = now_s(); !atomic_load(&j->helper_took) && now_s() - t0 < 5.0;) {
            }
        first = false;
        atomic_fetch_add(&j->runs[it], 1);
    }
}

/* One job of `items` items on nt threads; true when each ran once. */
static bool run_job(int nt, int64_t items, int wait_for_helper, int *tids_seen) {
    job *j = calloc(1, sizeof *j);
    j->nt = nt, j->items = items, j->wait_for_helper = wait_for_helper;
    pt_share_slices_init(j->slices, items, nt);
    pt_share_run(nt, body, j);
    bool ok = !atomic_load(&j->bad_tid);
    for (int64_t i = 0; i < items; ++i) ok = ok && atomic_load(&j->runs[i]) == 1;
    for (int64_t i = items; i < ITEMS; ++i) ok = ok && atomic_load(&j->runs[i]) == 0;
    if (tids_seen) *tids_seen = atomic_load(&j->tids_seen);
    free(j);
    return ok;
}

static void *concurrent_caller(void *arg) {
    int *ok = arg;
    for (int r = 0; r < 200; ++r) *ok = *ok && run_job(2 + r % 3, 1 + (r * 37) % ITEMS, 0, NULL);
    return NULL;
}

int main(void) {
    /* Slices alone: every item handed out once, from any tid's point of view. */
    pt_share_slice s[5];
    pt_share_slices_init(s, 17, 5);
    int seen[17] = {0}, taken = 0;
    int64_t it;
    while (pt_share_next(s, 3, 5, &it)) CHECK(it >= 0 && it < 17 && seen[it]++ == 0), ++taken;
    CHECK_EQ_INT(taken, 17);
    pt_share_slices_init(s, 10, 2);
    CHECK(pt_share_take(&s[1], true, &it) && it == 5);
    CHECK(pt_share_take(&s[1], false, &it) && it == 9);

    /* Jobs of every size and thread count, back to back and after pauses
     * (helpers asleep). */
    bool ok = true;
    for (int r = 0; r < 600; ++r) ok = ok && run_job(1 + r % 4, (r * 131) % ITEMS, 0, NULL);
    CHECK(ok);
    struct timespec pause = {0, 2000000}; /* 2 ms: past the helpers' spin */
    for (int r = 0; r < 10; ++r) {
        nanosleep(&pause, NULL);
        CHECK(run_job(2, ITEMS, 0, NULL));
    }

    /* A helper takes part: the caller holds its first item until one
     * takes an item (or 5 s pass, which fails on any machine a test runs). */
    const int64_t before = pt_share_helper_calls();
    int tids = 0;
    CHECK(run_job(2, ITEMS, 1, &tids));
    CHECK(tids & 2);
    CHECK(pt_share_helper_calls() > before);

    /* Several callers at once: one has the helpers, the others run alone. */
    pthread_t th[3];
    int tok[3] = {1, 1, 1};
    for (int t = 0; t < 3; ++t) pthread_create(&th[t], NULL, concurrent_caller, &tok[t]);
    for (int t = 0; t < 3; ++t) pthread_join(th[t], NULL);
    CHECK(tok[0] && tok[1] && tok[2]);

    /* A forked child has no helpers (none may be started there): its jobs
     * still finish, on the caller alone. */
    fflush(NULL);
    const pid_t pid = fork();
    if (pid == 0) {
        int child_tids = 0;
        const bool child_ok = run_job(4, ITEMS, 0, NULL) && run_job(2, ITEMS, 0, &child_tids) && child_tids == 1;
        _exit(child_ok ? 0 : 1);
    }
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(run_job(3, ITEMS, 0, NULL)); /* and the parent's helpers still work */
    return pt_test_summary("test_int_share");
}
