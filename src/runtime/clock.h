/* Monotonic wall clock in milliseconds (verbose timings). */
#ifndef PARTITA_RUNTIME_CLOCK_H
#define PARTITA_RUNTIME_CLOCK_H

#include <time.h>

static inline double pt_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

#endif
