/* perf.h — counter groups around each timed batch (perf_event_open(2)).
 *
 * Groups come from the command line as encodings "type:config:config1:config2", events
 * separated by ',' and groups by ';' (Python resolves names, counters.py). Each group is
 * read with PERF_FORMAT_GROUP | TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING and its raw words
 * are printed: the parsing (scaling, multiplexing, "not counted") lives in Python, where it
 * is tested on recorded buffers. exclude_kernel is never set: software events such as
 * context switches only happen in the kernel, and a syscall's cycles are its cost. */
#ifndef CB_PERF_H
#define CB_PERF_H

#include <stddef.h>
#include <stdint.h>

#define CB_PERF_MAX_GROUPS 8
#define CB_PERF_MAX_EVENTS 8 /* per group */

typedef struct cb_perf_groups {
    int ngroups;
    int nevents[CB_PERF_MAX_GROUPS];
    int fd[CB_PERF_MAX_GROUPS];        /* leader; -1 when the group could not be opened */
    int error[CB_PERF_MAX_GROUPS];     /* errno of the failed open, 0 when open */
    uint64_t type[CB_PERF_MAX_GROUPS][CB_PERF_MAX_EVENTS], config[CB_PERF_MAX_GROUPS][CB_PERF_MAX_EVENTS][3];
} cb_perf_groups;

/* Parses the spec; returns 0, or -1 with a message in err. Does not open anything. */
int cb_perf_parse(cb_perf_groups *g, const char *spec, char *err, size_t errcap);
/* Opens every group on the calling thread, disabled. Failures are per group (error[]). */
void cb_perf_open(cb_perf_groups *g);
void cb_perf_start(const cb_perf_groups *g); /* reset + enable every open group */
void cb_perf_stop(const cb_perf_groups *g);  /* disable every open group */
/* Reads group i into words (3 + nevents words); returns the count read, 0 when not open. */
int cb_perf_read(const cb_perf_groups *g, int i, uint64_t *words);

#endif
