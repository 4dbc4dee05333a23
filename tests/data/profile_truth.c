/* Known truth for `cyclebench profile` (docs/method.md §10; bench/profile.py,
 * tests/commands/test_profile.py): chains of dependent register adds cost their length in core
 * cycles on any x86 core (one add's latency is 1 cycle), so each function's true cost per call is
 * known. main calls, each in a loop of its own:
 *   outer() ×1000: 10 empty leaf() calls, then chain300()  (self: its loop; total ≈ 300 + its loop)
 *   driver() ×10:  100 × chain300()                        (total ≈ 30,000; self ≤ 2% of it)
 *   chain50() ×1000, chain3000() ×100.
 * Built with -finstrument-functions (the in-process probe), -pg (uftrace) or plain (callgrind). */
#include <stdint.h>
#include <stdlib.h>

/* reg-reg adds: a chain the core cannot fold (an immediate add may be folded at rename on recent
 * Intel cores) */
#define CHAIN(n) __asm__ volatile(".rept " #n "\n\taddq %1, %0\n.endr" : "+r"(x) : "r"(y))

__attribute__((noinline)) void leaf(void) { __asm__ volatile(""); }

__attribute__((noinline)) uint64_t chain50(uint64_t x, uint64_t y) {
    CHAIN(50);
    return x;
}
__attribute__((noinline)) uint64_t chain300(uint64_t x, uint64_t y) {
    CHAIN(300);
    return x;
}
__attribute__((noinline)) uint64_t chain3000(uint64_t x, uint64_t y) {
    CHAIN(3000);
    return x;
}

__attribute__((noinline)) uint64_t outer(uint64_t x) {
    for (int i = 0; i < 10; i++) leaf();
    x = chain300(x, 1);
    __asm__ volatile("" : "+r"(x)); /* no tail call: chain300 returns here, as a call */
    return x;
}

__attribute__((noinline)) uint64_t driver(uint64_t x) {
    for (int i = 0; i < 100; i++) x = chain300(x, 1);
    __asm__ volatile("" : "+r"(x));
    return x;
}

int main(void) {
    uint64_t x = 0;
    for (int i = 0; i < 1000; i++) x = outer(x);
    for (int i = 0; i < 10; i++) x = driver(x);
    for (int i = 0; i < 1000; i++) x = chain50(x, 1);
    for (int i = 0; i < 100; i++) x = chain3000(x, 1);
    return x == 1000u * 300 + 10u * 100 * 300 + 1000u * 50 + 100u * 3000 ? 0 : 1;
}
