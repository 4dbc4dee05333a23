/* Benchmarks that leave processes behind out of reach of a kill of the runner's session or
 * process group: the daemon(7) recipe (fork, setsid, fork again, std fds to /dev/null, every
 * other fd closed), a child in its own process group, and each of the first followed by a crash
 * or a hang. Their children keep the runner's command line (--run daemon/...): the tests look for
 * it in /proc after the run. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cyclebench.h>

static void daemonize(void) {
    pid_t pid = fork();
    if (pid == 0) {
        setsid();
        if (fork() != 0) _exit(0); /* the session leader goes: the daemon is nobody's child now */
        if (chdir("/") != 0) {}
        int null = open("/dev/null", O_RDWR);
        for (int fd = 0; fd < 3; fd++) dup2(null, fd);
        for (int fd = 3; fd < 1024; fd++) close(fd);
        for (;;) pause();
    }
    if (pid > 0) waitpid(pid, NULL, 0);
}

CB_BENCH(daemon, double_fork) {
    static int done;
    if (!done) {
        done = 1;
        daemonize();
    }
    for (uint64_t i = 0; i < cb_iters(s); i++) cb_clobber();
}

CB_BENCH(daemon, own_group) { /* a child that leaves the runner's process group, not its session */
    static int done;
    if (!done) {
        done = 1;
        if (fork() == 0) {
            setpgid(0, 0);
            for (;;) pause();
        }
    }
    for (uint64_t i = 0; i < cb_iters(s); i++) cb_clobber();
}

CB_BENCH(daemon, then_crash) {
    daemonize();
    raise(SIGSEGV);
}

CB_BENCH(daemon, then_hang) { /* killed at the timeout */
    static int done;
    if (!done) {
        done = 1;
        daemonize();
    }
    for (;;) cb_clobber();
}
