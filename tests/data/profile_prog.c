/* Known truth for `cyclebench profile` (tests/commands/test_profile.py): f() is called exactly
 * 1000 times and g() 3000 times; chain3000() runs 3000 dependent register adds (3000 core
 * cycles a call), chain30() 30. Built with -pg for uftrace, plain for callgrind. */
#include <stdint.h>
#include <stdlib.h>

__attribute__((noinline)) void f(void) { __asm__ volatile(""); }
__attribute__((noinline)) void g(void) { __asm__ volatile(""); }

/* reg-reg adds: a dependent chain the core cannot fold or shorten (an immediate add may be
 * folded at rename on recent Intel cores) */
__attribute__((noinline)) uint64_t chain3000(uint64_t x, uint64_t y) {
    __asm__ volatile(".rept 3000\n\taddq %1, %0\n.endr" : "+r"(x) : "r"(y));
    return x;
}
__attribute__((noinline)) uint64_t chain30(uint64_t x, uint64_t y) {
    __asm__ volatile(".rept 30\n\taddq %1, %0\n.endr" : "+r"(x) : "r"(y));
    return x;
}

int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 2000;
    uint64_t x = 0;
    for (int i = 0; i < 1000; i++) f();
    for (int i = 0; i < 3000; i++) g();
    for (int i = 0; i < reps; i++) x = chain3000(x, 1);
    for (int i = 0; i < reps; i++) x = chain30(x, 1);
    return x == (uint64_t)reps * 3030 ? 0 : 1;
}
