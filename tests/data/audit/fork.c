/* benchmarks that fork. */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cyclebench.h>

CB_BENCH(proc, fork_each) { /* one fork + exit + wait per op */
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        pid_t p = fork();
        if (p == 0) _exit(0);
        if (p > 0) waitpid(p, NULL, 0);
    }
}

CB_BENCH(proc, fork_exit) { /* the child calls exit(): stdio buffers flushed twice? */
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        pid_t p = fork();
        if (p == 0) exit(0);
        if (p > 0) waitpid(p, NULL, 0);
    }
}
