/* measure.h — measuring one or more benchmarks, interleaved, in one process. */
#ifndef CB_MEASURE_H
#define CB_MEASURE_H

#include <stdint.h>
#include <stdio.h>

#include "perf.h"

#define CB_MAX_JOBS 16

typedef struct cb_options {
    double min_time, max_time, warmup;
    uint64_t min_batch_ns;
    int repeat, ladder;
    uint64_t seed;
    cb_perf_groups *perf; /* counter groups read around every batch; NULL: none */
} cb_options;

typedef struct cb_request {
    const char *name;
    int64_t param;
    int has_param;
} cb_request;

extern int cb_have_rdtscp;
extern const char *cb_fault; /* the injected fault's name (CYCLEBENCH_FAULT), or NULL */
void cb_fault_init(void);
/* Ticks of one timed calibration chain (chain.h): imul, or `blocks` blocks of 256 adds. */
uint64_t cb_chain_ticks(int imul, int blocks);

/* Measures every request; with several, their batches are interleaved in alternating
 * order (ABBA…), so drift of the machine hits them alike. One JSON line per request on
 * `out`. Returns 0. */
int cb_measure(FILE *out, const cb_request *req, int nreq, const cb_options *o);

/* Starts a protocol line: {"type":TYPE,"bench":NAME,"param":P — the caller adds fields and "}\n". */
void cb_emit_head(FILE *out, const char *type, const cb_request *r);

/* Back-to-back start/stop pairs: the fixed cost every timed batch carries. */
void cb_timer_overhead(uint64_t *min, uint64_t *median);

#endif
