/* selftest_chains.c — known effects for `cyclebench selftest`: dependent chains of n
 * register-register adds cost exactly n core cycles (1-cycle latency on every x86-64 and
 * arm64 core; reg-reg because Golden Cove folds add $imm at rename, DESIGN.md §4). */
#include <cyclebench.h>

#if defined(__x86_64__)
#define CHAIN(n) __asm__ volatile(".rept " #n "\n\tadd %0, %0\n\t.endr" : "+r"(x))
#elif defined(__aarch64__)
#define CHAIN(n) __asm__ volatile(".rept " #n "\n\tadd %0, %0, %0\n\t.endr" : "+r"(x))
#endif

#define CHAIN_BENCH(n)                                                 \
    CB_BENCH(selftest, add##n) {                                       \
        uint64_t x = 1;                                                \
        for (uint64_t i = 0; i < cb_iters(s); i++) CHAIN(n);           \
        cb_do_not_optimize(x);                                         \
    }

CHAIN_BENCH(100)
CHAIN_BENCH(200)
CHAIN_BENCH(300)
CHAIN_BENCH(301)
CHAIN_BENCH(302)
CHAIN_BENCH(303)
CHAIN_BENCH(305)
CHAIN_BENCH(400)
