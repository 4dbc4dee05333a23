/* Benchmarks that block by design: every operation sleeps in the kernel (a voluntary context
 * switch) and is woken again. None of them is disturbed on a quiet CPU: the runner's
 * disturbed flag counts involuntary switches and migrations only (engine/disturb.h).
 *   block/pipe_thread  one round trip of a byte over two pipes to a helper thread
 *   block/pipe_process the same with a forked helper process
 *   block/futex        one futex wake + wait round trip with a helper thread
 *   block/nanosleep    nanosleep(1 µs): a timer wakes the benchmark
 * Helpers inherit the runner's CPU pinning, so both ends share one CPU. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cyclebench.h>

struct pingpong {
    int to[2], from[2]; /* to: benchmark → helper; from: helper → benchmark */
    pthread_t thread;
    pid_t child;
};

static void echo(int in, int out) { /* until the benchmark closes its end */
    char c;
    while (read(in, &c, 1) == 1)
        if (write(out, &c, 1) != 1) break;
}

static void *echo_thread(void *arg) {
    struct pingpong *p = arg;
    echo(p->to[0], p->from[1]);
    return NULL;
}

static struct pingpong *pipes(cb_state *s) {
    struct pingpong *p = calloc(1, sizeof *p);
    if (!p || pipe2(p->to, O_CLOEXEC) || pipe2(p->from, O_CLOEXEC)) {
        cb_fail(s, "pipes");
        free(p);
        return NULL;
    }
    cb_set_user(s, p);
    return p;
}

static void round_trips(cb_state *s) {
    struct pingpong *p = cb_user(s);
    char c = 'x';
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        if (write(p->to[1], &c, 1) != 1 || read(p->from[0], &c, 1) != 1) abort();
    }
}

CB_SETUP(block, pipe_thread) {
    struct pingpong *p = pipes(s);
    if (p && pthread_create(&p->thread, NULL, echo_thread, p)) cb_fail(s, "pthread_create");
}
CB_BENCH(block, pipe_thread) { round_trips(s); }
CB_TEARDOWN(block, pipe_thread) {
    struct pingpong *p = cb_user(s);
    close(p->to[1]);
    pthread_join(p->thread, NULL);
    free(p);
}

CB_SETUP(block, pipe_process) {
    struct pingpong *p = pipes(s);
    if (!p) return;
    p->child = fork();
    if (p->child == 0) {
        close(p->to[1]);
        echo(p->to[0], p->from[1]);
        _exit(0);
    }
    if (p->child < 0) cb_fail(s, "fork");
}
CB_BENCH(block, pipe_process) { round_trips(s); }
CB_TEARDOWN(block, pipe_process) {
    struct pingpong *p = cb_user(s);
    close(p->to[1]);
    waitpid(p->child, NULL, 0);
    free(p);
}

/* futex: the benchmark sets word=1 and wakes the helper, which sets it back to 0 and wakes
 * the benchmark; each waits while the word holds the value it left. */
static _Atomic int word, stop;

static long futex(_Atomic int *w, int op, int val) { return syscall(SYS_futex, w, op, val, NULL, NULL, 0); }

static void *futex_helper(void *arg) {
    (void)arg;
    for (;;) {
        while (atomic_load(&word) == 0) {
            if (atomic_load(&stop)) return NULL;
            futex(&word, FUTEX_WAIT_PRIVATE, 0);
        }
        atomic_store(&word, 0);
        futex(&word, FUTEX_WAKE_PRIVATE, 1);
    }
}

static pthread_t futex_thread;

CB_SETUP(block, futex) {
    atomic_store(&word, 0);
    atomic_store(&stop, 0);
    if (pthread_create(&futex_thread, NULL, futex_helper, NULL)) cb_fail(s, "pthread_create");
}
CB_BENCH(block, futex) {
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        atomic_store(&word, 1);
        futex(&word, FUTEX_WAKE_PRIVATE, 1);
        while (atomic_load(&word) == 1) futex(&word, FUTEX_WAIT_PRIVATE, 1);
    }
}
CB_TEARDOWN(block, futex) {
    atomic_store(&stop, 1);
    atomic_store(&word, 1); /* a helper asleep at 0 wakes, sees stop */
    futex(&word, FUTEX_WAKE_PRIVATE, 1);
    pthread_join(futex_thread, NULL);
}

CB_BENCH(block, nanosleep) {
    struct timespec ts = {0, 1000};
    for (uint64_t i = 0; i < cb_iters(s); i++) nanosleep(&ts, NULL);
}
