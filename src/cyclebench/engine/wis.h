/* wis.h — will-it-scale test cases run unmodified by the scaling engine (wis.c, docs/will-it-scale.md). */
#ifndef CB_WIS_H
#define CB_WIS_H

#include <stddef.h>
#include <stdint.h>

#include "cyclebench.h"

/* The linked will-it-scale test case, registered as "wis/<file stem>"; NULL in every runner
 * built without one (the build defines CB_WIS_NAME only for a test case). */
const cb_bench *cb_wis_bench(void);
/* Its testcase_description (NULL when it has none). */
const char *cb_wis_description(void);

/* Before the tasks start, in the runner: a private working directory (also $TMPDIR) under
 * $TMPDIR (or /tmp), then testcase_prepare(ntasks) when the test case has one. `processes`
 * says how new_task() starts a helper: a forked process (1) or a thread (0). Returns 0, or -1
 * with the reason in `why` when the directory cannot be made. */
int cb_wis_enter(unsigned long ntasks, int processes, char *why, size_t cap);
/* In task `task` (0..N-1), on its CPU: testcase(counter, task). Returns only if testcase() does,
 * which a will-it-scale test case never should. */
void cb_wis_run(uint64_t *counter, unsigned long task);
/* After the tasks were killed, in the runner: testcase_cleanup() when the test case has one,
 * then back to the old working directory, and the private one removed with what was left in it. */
void cb_wis_leave(void);

#endif
