/* syscall/ — the cheapest system calls (Evans 2018,
 * docs/references.md#getpid-copy-freebsd-2018: getpid() at ~328 cycles/call, where a 1-cycle
 * change was argued over; will-it-scale's getppid loop). Called through syscall(2): glibc
 * cached getpid() in the past and may serve it without entering the kernel, which would measure
 * a function call instead. */
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cyclebench.h>

/* The last result of each body, for verify: proof that the kernel was really entered and
 * answered. Written once per batch, outside the loop, so it costs nothing per call. */
static long last_pid = -1, last_ppid = -1;

static int check(cb_state *s, const char *what, long got, long want) {
    if (got == want) return 1;
    char msg[128];
    snprintf(msg, sizeof msg, "syscall(SYS_%s) returned %ld, %s() returns %ld", what, got, what, want);
    cb_fail(s, msg);
    return 0;
}

/* The getpid() loop of Evans/Guzik, one kernel entry and exit per operation. */
CB_BENCH(syscall, getpid) {
    long r = 0;
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        r = syscall(SYS_getpid);
        cb_do_not_optimize(r);
    }
    if (cb_iters(s)) last_pid = r;
}
CB_VERIFY(syscall, getpid) { return check(s, "getpid", last_pid, (long)getpid()); }

/* will-it-scale's getppid loop — like getpid, never cached by libc, and it reads
 * the parent through an RCU-protected pointer. */
CB_BENCH(syscall, getppid) {
    long r = 0;
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        r = syscall(SYS_getppid);
        cb_do_not_optimize(r);
    }
    if (cb_iters(s)) last_ppid = r;
}
CB_VERIFY(syscall, getppid) { return check(s, "getppid", last_ppid, (long)getppid()); }
