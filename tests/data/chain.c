/* Dependent chains of register-register adds: each add waits for the previous one, so
 * a chain of n costs n core cycles (1-cycle latency). reg-reg, never add $imm, which
 * recent Intel cores fold at rename (docs/method.md §3). */
#include <cyclebench.h>

#if defined(__x86_64__)
#define CHAIN(n) __asm__ volatile(".rept " #n "\n\tadd %0, %0\n\t.endr" : "+r"(x))
#elif defined(__aarch64__)
#define CHAIN(n) __asm__ volatile(".rept " #n "\n\tadd %0, %0, %0\n\t.endr" : "+r"(x))
#endif

CB_BENCH(chain, add200) {
    uint64_t x = 1;
    for (uint64_t i = 0; i < cb_iters(s); i++) CHAIN(200);
    cb_do_not_optimize(x);
}

CB_BENCH(chain, add400) {
    uint64_t x = 1;
    for (uint64_t i = 0; i < cb_iters(s); i++) CHAIN(400);
    cb_do_not_optimize(x);
}
