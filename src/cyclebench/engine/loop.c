/* loop/empty — the benchmark loop's own cost per iteration: counter increment, compare,
 * branch, and an empty asm statement that keeps the compiler from deleting or unrolling
 * the loop away. Part of the engine, so every binary (suite or user file) has it: each run
 * measures it first and reports every result also net of it (--net). */
#include <cyclebench.h>

CB_BENCH(loop, empty) {
    for (uint64_t i = 0; i < cb_iters(s); i++) __asm__ volatile("");
}
