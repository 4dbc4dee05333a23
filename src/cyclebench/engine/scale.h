/* scale.h — scaling mode: N copies of one benchmark at once, counted by a sampler
 * (README "Scaling"). */
#ifndef CB_SCALE_H
#define CB_SCALE_H

#include <stdio.h>

#include "measure.h"

#define CB_SCALE_MAX_TASKS 1024
#define CB_SCALE_MAX_CPUS 1024

typedef struct cb_scale_options {
    int tasks;              /* N copies of the benchmark */
    int processes;          /* 0: pthreads in this process; 1: fork()ed processes */
    double duration;        /* seconds sampled after the warm-up */
    double interval;        /* seconds between two reads of the counters */
    double warmup;          /* seconds of intervals reported but flagged "warmup" */
    double batch_ns;        /* target time of one batch, uncontended (sizes cb_iters) */
    const int *cpus;        /* task i runs on cpus[i % ncpus]; ncpus == 0: not pinned */
    int ncpus;
} cb_scale_options;

/* Runs the scaling measurement of `req` and writes its JSON lines to `out`:
 *   {"type":"scale_start",...}   batch size, CPUs of the tasks and of the sampler
 *   {"type":"interval",...}      one per interval: per-task operations in it
 *   {"type":"task_crash",...}    processes mode: a task died from a signal
 *   {"type":"scale_end",...}     sampler CPU time, per-task totals and verification
 * or one {"type":"skip"|"fail"|"error",...} when it cannot start.
 * Returns the runner's exit status: 0 (the lines tell the outcome, even skip/fail), 1 when
 * a task crashed, 2 on bad usage. */
int cb_scale(FILE *out, const cb_request *req, const cb_scale_options *o);

#endif
