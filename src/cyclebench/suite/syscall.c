/* syscall/ — the cheapest system calls (seed 000: getpid() at ~328 cycles/call, where a
 * 1-cycle change was argued over; will-it-scale's getppid loop). Called through
 * syscall(2): glibc cached getpid() in the past and may serve it without entering the
 * kernel, which would measure a function call instead. */
#include <sys/syscall.h>
#include <unistd.h>

#include <cyclebench.h>

static long last_pid, last_ppid;

CB_BENCH(syscall, getpid) {
    long r = 0;
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        r = syscall(SYS_getpid);
        cb_do_not_optimize(r);
    }
    last_pid = r;
}
CB_VERIFY(syscall, getpid) { return last_pid == (long)getpid(); }

CB_BENCH(syscall, getppid) {
    long r = 0;
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        r = syscall(SYS_getppid);
        cb_do_not_optimize(r);
    }
    last_ppid = r;
}
CB_VERIFY(syscall, getppid) { return last_ppid == (long)getppid(); }
