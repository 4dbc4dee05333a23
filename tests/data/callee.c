/* A body whose time is spent in a function it calls (tests/commands/test_annotate.py):
 * fib is recursive and noinline, so nearly every sample lands in fib, not in the body,
 * and annotate must follow the body into it. */
#include <cyclebench.h>

__attribute__((noinline)) uint64_t fib(uint64_t n) {
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

CB_BENCH(callee, fib) {
    uint64_t x = 0;
    for (uint64_t i = 0; i < cb_iters(s); i++) x += fib(15 + (x & 1));
    cb_do_not_optimize(x);
}
