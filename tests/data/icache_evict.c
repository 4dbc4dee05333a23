/* icache_evict.c — a body that flushes the runner's whole code (clflush, every 64-byte line
 * from __executable_start to etext) from every cache level each iteration, so the code that
 * runs next, the calibration chain among it, comes from memory: tests/engine/test_engine.py
 * holds the chain timed after such a batch to the chain timed after one that flushes nothing. */
#include <cyclebench.h>

#if defined(__x86_64__)
extern char __executable_start[], etext[]; /* GNU ld's bounds of the text (ld(1), "PROVIDE") */

CB_BENCH(icache, evict) {
    for (uint64_t i = 0; i < cb_iters(s); i++)
        for (char *p = __executable_start; p < etext; p += 64) __asm__ volatile("clflush (%0)" : : "r"(p) : "memory");
}

/* the same loop over the same lines, reading them as data: the code stays in the caches */
CB_BENCH(icache, stay) {
    uint64_t sum = 0;
    for (uint64_t i = 0; i < cb_iters(s); i++)
        for (char *p = __executable_start; p < etext; p += 64) sum += (unsigned char)*p;
    cb_do_not_optimize(sum);
}
#endif
