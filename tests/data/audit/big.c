/* 50 GB requests. tests/audit runs these only where the kernel's heuristic
 * overcommit refuses them (overcommit_memory 0, RAM + swap < 50 GB): nothing is touched. */
#include <stdlib.h>
#include <cyclebench.h>

#define HUGE_BYTES ((size_t)50 << 30)

CB_BENCH(mem, buf) { /* cb_buffer from the body */
    static void *p;
    static int tried;
    if (!tried) {
        tried = 1;
        p = cb_buffer(s, HUGE_BYTES, 64, 0);
    }
    if (!p) return;
    for (uint64_t i = 0; i < cb_iters(s); i++) cb_clobber();
}

CB_SETUP(mem, huge) {
    void *p = malloc(HUGE_BYTES);
    if (!p) {
        cb_fail(s, "malloc 50GB failed");
        return;
    }
    cb_set_user(s, p);
}
CB_TEARDOWN(mem, huge) { free(cb_user(s)); }
CB_BENCH(mem, huge) {
    for (uint64_t i = 0; i < cb_iters(s); i++) cb_clobber();
}
