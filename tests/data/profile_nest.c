/* Known truth for `cyclebench profile`'s compensation in a call tree (tests/commands/test_profile.py,
 * bench/profile.py): main calls outer() 1000 times; each outer() calls leaf() 10 times, then
 * chain300(): 300 dependent register adds, 300 core cycles a call on any x86 core (one add's
 * latency is 1 cycle). leaf() is empty: its self is ~0. So per outer() call: total ≥ 300 (its
 * children), self a loop of 10 calls. Built with -pg for uftrace, plain for callgrind. */
#include <stdint.h>
#include <stdlib.h>

__attribute__((noinline)) void leaf(void) { __asm__ volatile(""); }

/* reg-reg adds: a dependent chain the core cannot fold (an immediate add may be folded at
 * rename on recent Intel cores) */
__attribute__((noinline)) uint64_t chain300(uint64_t x, uint64_t y) {
    __asm__ volatile(".rept 300\n\taddq %1, %0\n.endr" : "+r"(x) : "r"(y));
    return x;
}

__attribute__((noinline)) uint64_t outer(uint64_t x) {
    for (int i = 0; i < 10; i++) leaf();
    x = chain300(x, 1);
    __asm__ volatile("" : "+r"(x)); /* no tail call: chain300 returns here, as a call */
    return x;
}

int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 1000;
    uint64_t x = 0;
    for (int i = 0; i < reps; i++) x = outer(x);
    return x == (uint64_t)reps * 300 ? 0 : 1;
}
