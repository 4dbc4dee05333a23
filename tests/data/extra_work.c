/* A benchmark whose -DEXTRA build does more work per operation: variants must flag it as
 * different work (callgrind's Ir per op differs), not merely slower. */
#include <cyclebench.h>

#ifndef EXTRA
#define EXTRA 0
#endif

CB_BENCH(work, chain) {
    uint64_t x = 1;
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        __asm__ volatile(".rept 50\n\tadd %0, %0\n\t.endr" : "+r"(x));
#if EXTRA
        __asm__ volatile(".rept 10\n\tadd %0, %0\n\t.endr" : "+r"(x));
#endif
    }
    cb_do_not_optimize(x);
}
