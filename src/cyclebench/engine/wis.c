/* wis.c — will-it-scale test cases run unmodified by the scaling engine
 * (docs/will-it-scale.md).
 *
 * will-it-scale's API, as it is documented (this is written from that description; none of
 * will-it-scale's GPL code is used):
 *   char *testcase_description = "...";
 *   void testcase(unsigned long long *iterations, unsigned long nr);  (some declare void *)
 *        never returns; does (*iterations)++ once per operation; nr: the task's index 0..N-1;
 *        will-it-scale's own tlb_flush1..3 count in an unsigned long, lseek2 takes no nr
 *        (build/wis.py lists the signatures recognised);
 *   void testcase_prepare(unsigned long nr_tasks), void testcase_cleanup(void): both optional;
 *   void new_task(void *(*func)(void *), void *arg): called by a test case to start a helper
 *        (the other end of a pipe...): a thread in threads mode, a forked process in processes
 *        mode; it inherits its task's CPU and is not a task (its work is not counted).
 * The same source is built twice, with -DTHREADS for threads mode and without for processes.
 *
 * The build (build/wis.py) links the test case as the runner's only benchmark source and
 * compiles the engine with -DCB_WIS_NAME="<file stem>" (and CB_WIS_FILE): this file then
 * registers the benchmark "wis/<stem>", and scale.c, seeing cb_wis_bench(), runs testcase() in
 * every task with `iterations` pointing at that task's own counter in its 256-byte slot, the
 * very counter the sampler reads for any other scaling benchmark. Without CB_WIS_NAME (every
 * other runner) nothing is registered and nothing of a test case is referenced.
 *
 * Test cases work in their current directory and in $TMPDIR: they get a private directory
 * for both, removed with whatever was left in it once the tasks are gone.
 */
#define _GNU_SOURCE
#include "wis.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "registry.h"

static int helpers_are_processes; /* how new_task() starts a helper */
static char workdir[PATH_MAX];    /* the private directory; "" when none */
static int oldcwd = -1;           /* the working directory to go back to */
static int prepared;              /* testcase_prepare() ran: testcase_cleanup() is due */

#ifdef CB_WIS_NAME

#ifndef CB_WIS_FILE
#define CB_WIS_FILE "will-it-scale test case"
#endif

/* A test case counting in an unsigned long (tlb_flush1..3) bumps the task's 64-bit slot only
 * where long has 64 bits (LP64); elsewhere it would fill half the slot, so it is not built. */
#if defined(CB_WIS_LONG_COUNTER) && ULONG_MAX != UINT64_MAX
#error "the test case counts in an unsigned long, which is not 64 bits here (the counter slot is)"
#endif

/* The test case's symbols. testcase and its description are required (build/wis.py checks the
 * source defines both); prepare and cleanup may be absent: weak, NULL then. testcase is called
 * through this prototype whether the file declares it void or void *: the return value, never
 * reached, would be in a register nobody reads; a test case without `nr` ignores the second
 * argument register, as under will-it-scale's harness, which calls every test case this way. */
extern void testcase(unsigned long long *iterations, unsigned long nr);
extern char *testcase_description;
extern void testcase_prepare(unsigned long nr_tasks) __attribute__((weak));
extern void testcase_cleanup(void) __attribute__((weak));

/* The registered body is never run: a test case cannot be driven in batches of cb_iters(s).
 * `runner --run` reaches the setup hook below first and fails with the reason. */
static void wis_body(cb_state *s) { (void)s; }

static void wis_setup(cb_state *s) {
    cb_fail(s, "a will-it-scale test case runs only in scaling mode (cyclebench scale; run measures it by intervals)");
}

static const cb_bench wis_bench = {"wis", CB_WIS_NAME, wis_body, NULL, 0, CB_WIS_FILE, 0};

__attribute__((constructor)) static void wis_register(void) {
    cb_register_(&wis_bench);
    cb_register_hook_("wis", CB_WIS_NAME, CB_HOOK_SETUP, (void (*)(void))wis_setup, NULL);
}

const cb_bench *cb_wis_bench(void) { return &wis_bench; }
const char *cb_wis_description(void) { return testcase_description; }

void cb_wis_run(uint64_t *counter, unsigned long task) { testcase((unsigned long long *)counter, task); }

static void prepare(unsigned long ntasks) {
    if (testcase_prepare) testcase_prepare(ntasks);
}

static void cleanup(void) {
    if (testcase_cleanup) testcase_cleanup();
}

/* Test cases check their system calls with assert() (read3: `assert(fd >= 0)` after an
 * O_DIRECT open, which a tmpfs /tmp refuses with EINVAL): glibc's message names the
 * expression, not the error. Defined here, in the executable, this __assert_fail is the one
 * assert() calls, and adds errno as the failed call left it — the row's reason is the last line
 * of stderr, so the reason a test case cannot run here reaches the table. Then abort(), as
 * glibc does. */
void __assert_fail(const char *assertion, const char *file, unsigned int line, const char *function) {
    int e = errno;
    const char *base = strrchr(file, '/');
    fprintf(stderr, "%s:%u: %s: Assertion `%s' failed; errno: %s\n", base ? base + 1 : file, line, function,
            assertion, e ? strerror(e) : "0 (none set)");
    fflush(stderr);
    abort();
}

/* will-it-scale's helper tasks. A helper that cannot be started ends its task (abort): the
 * task's row then says it crashed, with this line from stderr. */
void new_task(void *(*func)(void *), void *arg) {
    if (!helpers_are_processes) {
        pthread_t t;
        pthread_attr_t a;
        pthread_attr_init(&a);
        pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
        int e = pthread_create(&t, &a, func, arg);
        pthread_attr_destroy(&a);
        if (e) {
            fprintf(stderr, "new_task: cannot start a helper thread: %s\n", strerror(e));
            abort();
        }
        return;
    }
    fflush(NULL);
    pid_t parent = getpid(), pid = fork();
    if (pid < 0) {
        fprintf(stderr, "new_task: cannot fork a helper process: %s\n", strerror(errno));
        abort();
    }
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* dies with its task (killed at the end of the run) */
        if (getppid() != parent) _exit(0);
        func(arg);
        _exit(0);
    }
}

#else /* a runner without a test case */

const cb_bench *cb_wis_bench(void) { return NULL; }
const char *cb_wis_description(void) { return NULL; }
void cb_wis_run(uint64_t *counter, unsigned long task) {
    (void)counter;
    (void)task;
}
static void prepare(unsigned long ntasks) { (void)ntasks; }
static void cleanup(void) {}

#endif

int cb_wis_enter(unsigned long ntasks, int processes, char *why, size_t cap) {
    helpers_are_processes = processes;
    const char *base = getenv("TMPDIR");
    if (!base || !*base) base = "/tmp";
    snprintf(workdir, sizeof workdir, "%s/cyclebench-wis.XXXXXX", base);
    if (!mkdtemp(workdir)) {
        snprintf(why, cap, "cannot make a working directory under %s: %s", base, strerror(errno));
        workdir[0] = 0;
        return -1;
    }
    oldcwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (chdir(workdir) != 0 || setenv("TMPDIR", workdir, 1) != 0) {
        snprintf(why, cap, "cannot enter the working directory %s: %s", workdir, strerror(errno));
        cb_wis_leave();
        return -1;
    }
    prepare(ntasks);
    prepared = 1;
    return 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0; /* go on: remove what can be removed */
}

void cb_wis_leave(void) {
    if (!workdir[0]) return;
    if (prepared) cleanup();
    prepared = 0;
    if (oldcwd < 0 || fchdir(oldcwd) != 0) {
        if (chdir("/") != 0) { /* nothing else to do: the directory is removed anyway */
        }
    }
    if (oldcwd >= 0) close(oldcwd);
    oldcwd = -1;
    nftw(workdir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    workdir[0] = 0;
}
