/* Benchmarks that attack the process around them (hang, flood stderr, fork a child
 * holding the pipes, write into fd 3, check their scheduling policy): the CLI must
 * stay bounded, kill what they leave behind, and not take their words for its protocol. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cyclebench.h>

CB_BENCH(hostile, hang) { /* never returns: killed at the timeout, or with the CLI */
    for (;;) cb_clobber();
}

CB_BENCH(hostile, stderr_flood) { /* a leftover debug print in a hung loop */
    static const char line[] = "debug: still here, still printing, still here, still printing\n";
    for (;;) {
        if (write(2, line, sizeof line - 1) < 0) break;
    }
}

CB_BENCH(hostile, fork_holds_pipes) { /* a child that outlives the body, holding stdout/stderr */
    static int forked;
    if (!forked) {
        forked = 1;
        if (fork() == 0) {
            sleep(60);
            _exit(0);
        }
    }
    for (uint64_t i = 0; i < cb_iters(s); i++) cb_clobber();
}

CB_BENCH(hostile, fake_result_on_fd3) { /* a stray write to a low fd must not become a result */
    static const char fake[] = "{\"type\":\"result\",\"bench\":\"hostile/fake_result_on_fd3\",\"param\":null}\n";
    if (write(3, fake, sizeof fake - 1) < 0) {}
    for (uint64_t i = 0; i < cb_iters(s); i++) cb_clobber();
}

CB_BENCH(hostile, stdin_is_null) {
    for (uint64_t i = 0; i < cb_iters(s); i++) cb_clobber();
}
CB_VERIFY(hostile, stdin_is_null) { /* read(0) is EOF at once: /dev/null, never a terminal */
    char c;
    return read(0, &c, 1) == 0;
}

CB_BENCH(hostile, fifo) {
    for (uint64_t i = 0; i < cb_iters(s); i++) cb_clobber();
}
CB_VERIFY(hostile, fifo) { return sched_getscheduler(0) == SCHED_FIFO; }

CB_BENCH(hostile, touch_300mb) { /* RSS grows past any --max-rss a test sets */
    static char *p;
    if (!p) {
        p = mmap(NULL, 300u << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p != MAP_FAILED) memset(p, 1, 300u << 20);
    }
    for (uint64_t i = 0; i < cb_iters(s); i++) cb_clobber();
}

CB_BENCH(hostile, tmp_debris) { /* leaves a directory in $TMPDIR and hangs: killed at the timeout */
    static int made;
    if (!made) {
        made = 1;
        const char *t = getenv("TMPDIR");
        char path[512];
        snprintf(path, sizeof path, "%s/debris-XXXXXX", t && *t ? t : "/tmp");
        if (!mkdtemp(path)) cb_fail(s, "mkdtemp");
    }
    for (;;) cb_clobber();
}
